//! What crashes leave at the end of a WAL, at the region server: a region server takes puts
//! into two WAL files (the first rolled and closed with its trailer, the second active,
//! preallocated, ending in cairn's end marker) and its root is copied while it runs, as a
//! crash would leave it. Each copy is then damaged as a crash can: the last entry torn, the
//! end marker gone to zeros, the active file cut back to its header, the closed file's trailer
//! missing. Opening the copy replays every whole entry and nothing past the last one; a torn
//! entry is reported and logged with its file and offset; the others are no damage at all.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_region::{
    ColumnFamilyDescriptor, Get, Put, RecoveryReport, RegionServer, ServerConfig, TableDescriptor,
    TableName,
};

const ROWS: u32 = 20;

/// Log lines written while the server opened.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Log {
    type Writer = Log;
    fn make_writer(&'a self) -> Log {
        self.clone()
    }
}

fn config(root: &Path) -> ServerConfig {
    let mut c = ServerConfig::new(root);
    c.background = false;
    c
}

fn table() -> TableName {
    TableName::parse("torn").unwrap()
}

fn row(n: u32) -> String {
    format!("row-{n:03}")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The WAL files of the server in `root`, oldest first.
fn wal_files(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("WALs/localhost,16020,0");
    let mut v: Vec<(u64, PathBuf)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = cairn_wal::names::parse_wal_file_name(p.file_name()?.to_str()?)?;
            Some((n.number, p))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// Where each entry of `file` starts, and where the last one ends.
fn entry_offsets(file: &Path) -> (Vec<u64>, u64) {
    let mut offsets = Vec::new();
    let scan = cairn_wal::file::scan_file(file, |off, _| {
        offsets.push(off);
        Ok(())
    })
    .unwrap();
    (offsets, scan.end)
}

/// Opens the damaged copy `root`: which rows it serves, what replay reported, what it logged.
fn open_copy(root: &Path) -> (Vec<u32>, RecoveryReport, String) {
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_ansi(false)
        .finish();
    let s =
        tracing::subscriber::with_default(subscriber, || RegionServer::open(config(root)).unwrap());
    let present = (0..ROWS)
        .filter(|&n| {
            let cells = s.get(&table(), Get::new(row(n))).unwrap();
            !cells.is_empty()
        })
        .collect();
    let report = s.recovery.clone();
    s.close().unwrap();
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    (present, report, text)
}

#[test]
fn crash_damage_at_a_wals_end_replays_up_to_the_last_whole_entry() {
    let work = tempfile::tempdir().unwrap();
    let live = work.path().join("live");
    let s = RegionServer::open(config(&live)).unwrap();
    s.create_table(
        TableDescriptor::new(table()).with_family(ColumnFamilyDescriptor::new("f")),
        &[],
    )
    .unwrap();
    for n in 0..ROWS {
        s.put(&table(), &Put::new(row(n)).add("f", "q", row(n)))
            .unwrap();
        if n == ROWS / 2 - 1 {
            s.wal().roll().unwrap();
        }
    }
    // The root as a crash now would leave it (nothing flushed, the active file open).
    let snapshot = work.path().join("snapshot");
    copy_dir(&live, &snapshot);
    drop(s);
    let files = wal_files(&snapshot);
    assert_eq!(files.len(), 2, "{files:?}");
    let (first, first_end) = entry_offsets(&files[0]);
    let (second, second_end) = entry_offsets(&files[1]);
    assert_eq!((first.len(), second.len()), (10, 10));
    assert!(fs::read(&files[0]).unwrap().ends_with(b"LAWP"));
    let all: Vec<u32> = (0..ROWS).collect();

    // Each case: the copy, how to damage it, the rows expected, the drop expected.
    let case = |name: &str, damage: &dyn Fn(&[PathBuf])| {
        let root = work.path().join(name);
        copy_dir(&snapshot, &root);
        let files = wal_files(&root);
        damage(&files);
        let (rows, report, log) = open_copy(&root);
        (rows, report, log, files)
    };

    // The last entry torn in its middle: everything before it, and its file and offset named.
    let last = second[9];
    let cut = last + (second_end - last) / 2;
    let (rows, report, log, files) = case("torn", &|f| {
        let file = fs::OpenOptions::new().write(true).open(&f[1]).unwrap();
        file.set_len(cut).unwrap();
    });
    assert_eq!(rows, all[..19], "torn last entry");
    let dropped = &report.wal.as_ref().unwrap().dropped;
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(
        (&dropped[0].segment, dropped[0].offset, dropped[0].bytes),
        (&files[1], last, cut - last)
    );
    let named = format!(
        "{}: dropped {} bytes from offset {last}",
        files[1].display(),
        cut - last
    );
    assert!(
        log.lines()
            .any(|l| l.contains("WARN") && l.contains(&named)),
        "the log names the file and offset ({named}):\n{log}"
    );

    // The end marker (and everything after the last entry) zeros: all of it, no damage.
    let (rows, report, log, _) = case("zeros", &|f| {
        let mut bytes = fs::read(&f[1]).unwrap();
        bytes[second_end as usize..].fill(0);
        fs::write(&f[1], bytes).unwrap();
    });
    assert_eq!(rows, all, "zero tail");
    assert!(report.wal.unwrap().dropped.is_empty());
    assert!(!log.contains("WARN"), "{log}");

    // The active file cut back to its header: the closed file's rows, nothing invented.
    let (rows, report, _, _) = case("header", &|f| {
        let file = fs::OpenOptions::new().write(true).open(&f[1]).unwrap();
        file.set_len(second[0]).unwrap();
    });
    assert_eq!(rows, all[..10], "header only");
    assert!(report.wal.unwrap().dropped.is_empty());

    // The rolled file without its trailer (a close cut short): all of it, no damage.
    let (rows, report, log, _) = case("trailer", &|f| {
        let file = fs::OpenOptions::new().write(true).open(&f[0]).unwrap();
        file.set_len(first_end).unwrap();
    });
    assert_eq!(rows, all, "missing trailer");
    assert!(report.wal.unwrap().dropped.is_empty());
    assert!(!log.contains("WARN"), "{log}");
}
