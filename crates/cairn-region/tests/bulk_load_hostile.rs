//! Bulk load requests a hostile client could send: families shaped as paths, sources inside
//! the server's own files or outside any directory it may read, links walking out of a listed
//! directory, names already taken in staging. Each is refused before anything moves, and the
//! files it aimed at are left exactly as they were. Also: a loaded file that nobody synced is
//! made durable before the load commits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_fs::{FaultFileSystem, FileSystem, LocalFileSystem};
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RegionServer, ServerConfig, TableDescriptor, TableName,
};

fn server(root: &Path, sources: &[&Path]) -> Arc<RegionServer> {
    let mut c = ServerConfig::new(root);
    c.background = false;
    c.bulk_load_source_dirs = sources.iter().map(|p| p.to_path_buf()).collect();
    RegionServer::open(c).unwrap()
}

fn table(s: &RegionServer, name: &str) -> TableName {
    let t = TableName::parse(name).unwrap();
    s.create_table(
        TableDescriptor::new(t.clone()).with_family(ColumnFamilyDescriptor::new("f")),
        &[],
    )
    .unwrap();
    t
}

/// An HFile of family `f` holding `rows`.
fn hfile(path: &Path, rows: &[&str]) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let out = LocalFileSystem.create(path).unwrap();
    let mut w =
        HFileWriter::new(out, path.display().to_string(), WriterOptions::default()).unwrap();
    for r in rows {
        let kv = KeyValue::put(r.as_bytes(), b"f", b"q", 1, b"v").unwrap();
        w.append(&kv.as_cell()).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

fn fp(family: &str, path: &Path) -> (Vec<u8>, PathBuf) {
    (family.as_bytes().to_vec(), path.to_path_buf())
}

fn region_of(s: &RegionServer, t: &TableName) -> Vec<u8> {
    s.table(t).unwrap().regions[0].info.region_name_bytes()
}

/// Every regular file under `dir`, with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The store files of table `t`'s only region.
fn store_files(root: &Path, t: &str) -> Vec<PathBuf> {
    let tdir = root.join("data/default").join(t);
    let mut out = Vec::new();
    for r in std::fs::read_dir(&tdir).unwrap() {
        let fdir = r.unwrap().path().join("f");
        if fdir.is_dir() {
            for f in std::fs::read_dir(fdir).unwrap() {
                out.push(f.unwrap().path());
            }
        }
    }
    out
}

#[test]
fn a_family_shaped_as_a_path_touches_nothing() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path(), &[input.path()]);
    let t = table(&s, "t");
    let r = region_of(&s, &t);
    let token = s.prepare_bulk_load(&t, "mallory").unwrap();
    // A file outside the root that an absolute family would have copied over.
    let victim = outside.path().join("victim");
    std::fs::write(&victim, vec![7u8; 15_892]).unwrap();
    let src = hfile(&input.path().join("victim"), &["a"]);
    let before = snapshot(outside.path());
    for family in [
        outside.path().display().to_string(),
        "../../x".to_string(),
        "a/b".to_string(),
        "..".to_string(),
    ] {
        for copy in [true, false] {
            let e = s
                .bulk_load_staged(&token, &r, &[fp(&family, &src)], copy)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("Column Family names cannot") || e.contains("No such column family"),
                "{family}: {e}"
            );
            let e = s
                .bulk_load_hfiles(&r, &[fp(&family, &src)], false, copy)
                .unwrap_err()
                .to_string();
            assert!(!e.is_empty());
        }
    }
    assert_eq!(snapshot(outside.path()), before, "nothing outside changed");
    assert!(src.exists(), "the caller's file stays");
    assert_eq!(
        std::fs::read_dir(&token).unwrap().count(),
        0,
        "no family directory made in staging"
    );
}

#[test]
fn no_load_takes_another_tables_store_file() {
    let root = tempfile::tempdir().unwrap();
    let s = server(root.path(), &[]);
    let victim_t = table(&s, "victim");
    for i in 0..3 {
        s.put(&victim_t, &Put::new(format!("r{i}")).add("f", "q", "v"))
            .unwrap();
    }
    s.flush_table(&victim_t).unwrap();
    let files = store_files(root.path(), "victim");
    assert_eq!(files.len(), 1);
    let victim = files[0].clone();
    let bytes = std::fs::read(&victim).unwrap();
    let t = table(&s, "thief");
    let r = region_of(&s, &t);
    let token = s.prepare_bulk_load(&t, "mallory").unwrap();
    // The store file, by its own path, through `..`, and through a link in the staging dir.
    let dotted = root
        .path()
        .join("staging")
        .join("..")
        .join(victim.strip_prefix(root.path()).unwrap());
    let link = token.join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let wal_dir = root
        .path()
        .join("WALs")
        .join(cairn_region::server::DEFAULT_SERVER_NAME);
    let wal_file = std::fs::read_dir(wal_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for copy in [false, true] {
        for src in [&victim, &dotted, &wal_file] {
            assert!(s
                .bulk_load_hfiles(&r, &[fp("f", src)], false, copy)
                .is_err());
            assert!(s
                .bulk_load_staged(&token, &r, &[fp("f", src)], copy)
                .is_err());
        }
        let e = s
            .bulk_load_staged(&token, &r, &[fp("f", &link)], copy)
            .unwrap_err()
            .to_string();
        assert!(e.contains("inside the server's own files"), "{e}");
    }
    assert_eq!(std::fs::read(&victim).unwrap(), bytes, "victim unchanged");
    assert_eq!(store_files(root.path(), "victim"), files);
    assert!(store_files(root.path(), "thief").is_empty());
    for i in 0..3 {
        assert_eq!(
            s.get(&victim_t, Get::new(format!("r{i}"))).unwrap().len(),
            1,
            "the other table is intact"
        );
    }
}

#[test]
fn sources_come_from_staging_or_listed_directories_only() {
    let root = tempfile::tempdir().unwrap();
    let listed = tempfile::tempdir().unwrap();
    let unlisted = tempfile::tempdir().unwrap();
    let s = server(root.path(), &[listed.path()]);
    let t = table(&s, "t");
    let r = region_of(&s, &t);
    let token = s.prepare_bulk_load(&t, "u").unwrap();
    let far = hfile(&unlisted.path().join("a"), &["a"]);
    for copy in [false, true] {
        let e = s
            .bulk_load_hfiles(&r, &[fp("f", &far)], false, copy)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cairn.bulkload.source.dirs"), "{e}");
        assert!(s
            .bulk_load_staged(&token, &r, &[fp("f", &far)], copy)
            .is_err());
    }
    assert!(far.exists());
    // A link inside the listed directory pointing out of it is judged by its target.
    let link = listed.path().join("link");
    std::os::unix::fs::symlink(&far, &link).unwrap();
    assert!(s
        .bulk_load_hfiles(&r, &[fp("f", &link)], false, false)
        .is_err());
    assert!(far.exists());
    // Relative paths are refused.
    let e = s
        .bulk_load_hfiles(&r, &[fp("f", Path::new("rel/a"))], false, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("absolute"), "{e}");
    // From a listed directory, and from the token itself, a load works.
    let near = hfile(&listed.path().join("b"), &["b"]);
    assert!(s
        .bulk_load_hfiles(&r, &[fp("f", &near)], false, false)
        .unwrap());
    let staged = hfile(&token.join("f").join("c"), &["c"]);
    assert!(s
        .bulk_load_staged(&token, &r, &[fp("f", &staged)], false)
        .unwrap());
    assert_eq!(s.get(&t, Get::new("b")).unwrap().len(), 1);
    assert_eq!(s.get(&t, Get::new("c")).unwrap().len(), 1);
}

#[test]
fn staging_never_replaces_a_file_and_a_failed_load_gives_files_back() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let s = server(root.path(), &[input.path()]);
    let t = table(&s, "t");
    let r = region_of(&s, &t);
    let token = s.prepare_bulk_load(&t, "u").unwrap();
    // Someone's file already sits at the name the load would stage to.
    let theirs = hfile(&token.join("f").join("x"), &["z"]);
    let theirs_bytes = std::fs::read(&theirs).unwrap();
    let mine = hfile(&input.path().join("x"), &["a"]);
    let mine_bytes = std::fs::read(&mine).unwrap();
    for copy in [false, true] {
        assert!(s
            .bulk_load_staged(&token, &r, &[fp("f", &mine)], copy)
            .is_err());
        assert_eq!(std::fs::read(&theirs).unwrap(), theirs_bytes);
        assert_eq!(std::fs::read(&mine).unwrap(), mine_bytes);
    }
    // A load that fails after staging (the second file is not an HFile) puts the first back.
    let a = hfile(&input.path().join("a"), &["a"]);
    let junk = input.path().join("junk");
    std::fs::write(&junk, b"not an hfile").unwrap();
    assert!(s
        .bulk_load_staged(&token, &r, &[fp("f", &a), fp("f", &junk)], false)
        .is_err());
    assert!(a.exists() && junk.exists());
    assert!(!token.join("f").join("a").exists());
    assert!(s.get(&t, Get::new("a")).unwrap().is_empty());
}

#[test]
fn a_loaded_file_nobody_synced_survives_a_crash() {
    let root = tempfile::tempdir().unwrap();
    let input = tempfile::tempdir().unwrap();
    let fs = FaultFileSystem::new(Arc::new(LocalFileSystem), 7);
    let config = || {
        let mut c = ServerConfig::new(root.path());
        c.background = false;
        c.region.fs = fs.clone();
        c.wal_fs = Some(fs.clone());
        c.bulk_load_source_dirs = vec![input.path().to_path_buf()];
        c
    };
    let s = RegionServer::open(config()).unwrap();
    let t = table(&s, "t");
    let r = region_of(&s, &t);
    // Written and closed through the fault layer, never synced: a crash would empty it.
    let made = hfile(&input.path().join("made").join("h"), &["a", "b"]);
    let src = input.path().join("h");
    let mut out = fs.create(&src).unwrap();
    std::io::Write::write_all(&mut out, &std::fs::read(&made).unwrap()).unwrap();
    out.close().unwrap();
    assert!(fs.unsynced_bytes(&src).unwrap_or(0) > 0);
    assert!(s
        .bulk_load_hfiles(&r, &[fp("f", &src)], false, false)
        .unwrap());
    drop(s);
    fs.crash().unwrap();
    let s = RegionServer::open(config()).unwrap();
    assert_eq!(s.get(&t, Get::new("a")).unwrap().len(), 1);
    assert_eq!(s.get(&t, Get::new("b")).unwrap().len(), 1);
}
