//! Store directory checks shared by the crash tests: after recovery, no files under a
//! region's `.tmp`, the family directories hold exactly the files the stores loaded, and no
//! cell is in two store files of one store.

use std::collections::HashMap;
use std::path::Path;

use cairn_region::{RegionServer, TableName};

const TMP_DIR: &str = ".tmp";

/// Counts the files under `d`.
pub fn count_files(d: &Path, n: &mut usize) {
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            count_files(&e.path(), n);
        } else {
            *n += 1;
        }
    }
}

/// Checks the store directories against what the reopened stores hold.
pub fn check_store_files(s: &RegionServer, table: &TableName, when: &str) {
    let t = s.table(table).unwrap();
    for r in &t.regions {
        // Directories may stay (a flush recreates them); files may not.
        let mut left = 0;
        count_files(&r.dir().join(TMP_DIR), &mut left);
        assert_eq!(
            left,
            0,
            "{when}: {} still holds files after recovery",
            r.dir().join(TMP_DIR).display()
        );
        for store in r.stores() {
            let files = store.state().files;
            let mut on_disk: Vec<String> = std::fs::read_dir(store.dir())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect();
            on_disk.sort();
            let mut loaded: Vec<String> = files.iter().map(|f| f.name()).collect();
            loaded.sort();
            assert_eq!(
                on_disk,
                loaded,
                "{when}: {} holds files its store did not load (orphans) or lacks some",
                store.dir().display()
            );
            // Every cell key in one file only.
            let mut seen: HashMap<Vec<u8>, String> = HashMap::new();
            for f in files.iter() {
                let mut sc = f.reader.scanner();
                let mut more = sc.seek_to_first().unwrap();
                while more {
                    let c = sc.cell().unwrap();
                    if let Some(other) = seen.insert(c.key.as_bytes().to_vec(), f.name()) {
                        panic!(
                            "{when}: {} has a cell of row {:?} in both {other} and {} (duplicate store files)",
                            store.dir().display(),
                            String::from_utf8_lossy(c.key.row()),
                            f.name()
                        );
                    }
                    more = sc.next().unwrap();
                }
            }
        }
    }
}
