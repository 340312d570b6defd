//! Errors of the region store: each names the table, region, family, file or request field.

use cairn_cell::{CellError, Escaped};
use cairn_hfile::HFileError;

/// The region store's result; the error is a [`RegionError`] unless said otherwise.
pub type Result<T, E = RegionError> = std::result::Result<T, E>;

/// Everything a region-store operation fails with. Each variant carries the names (table, region,
/// family, path) its message needs, so callers can report it without adding context.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    /// A request or schema HBase would refuse (`IllegalArgumentException`,
    /// `DoNotRetryIOException`): a row outside the region, a bad table name, a negative
    /// timestamp. Retrying cannot succeed.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A name or row HBase refuses with `IllegalArgumentException` ([`crate::names`]): a
    /// table, namespace or family name outside HBase's rules, a row past 32,767 bytes. The
    /// message is HBase's own. The native RPC sends it inside a `DoNotRetryIOException`,
    /// Thrift as `IllegalArgument`.
    #[error("{0}")]
    IllegalArgument(String),
    /// A setting or feature cairn does not implement (e.g. KEEP_DELETED_CELLS other than FALSE, a
    /// data block encoding it cannot write): refused rather than silently ignored.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// HBase's `TableNotFoundException`; holds the table name as printed (`ns:t`, or `t` in the
    /// `default` namespace).
    #[error("table {0} does not exist")]
    TableNotFound(String),
    /// HBase's `TableExistsException`: the table is loaded, or its directory is already on disk.
    #[error("table {0} already exists")]
    TableExists(String),
    /// HBase's `TableNotEnabledException`: a disabled table refuses reads and writes until enabled.
    #[error("table {0} is disabled")]
    TableDisabled(String),
    /// HBase's `NoSuchColumnFamilyException`: a mutation or read named a family the table lacks.
    #[error("table {table}: column family {family:?} does not exist")]
    NoSuchFamily {
        /// The table, as printed.
        table: String,
        /// The family asked for (lossy UTF-8).
        family: String,
    },
    /// HBase's `RegionTooBusyException`: the region's memstores are over flush size ×
    /// `hbase.hregion.memstore.block.multiplier`, or (`global`) every memstore of the server
    /// together stayed at `hbase.regionserver.global.memstore.size` for the whole blocking
    /// wait; clients back off and retry once a flush catches up.
    #[error("region {region} is too busy: {}", busy_reason(*size, *limit, *global))]
    RegionTooBusy {
        /// The region name (`<table>,<start>,<id>.<encoded>.`).
        region: String,
        /// Bytes in the region's memstores (or, `global`, the server's), flush snapshots
        /// included, when the write was refused.
        size: u64,
        /// The blocking limit in bytes.
        limit: u64,
        /// The server-wide limit refused it, not the region's own.
        global: bool,
    },
    /// A cell that cannot be built or parsed (row, family or qualifier too long; malformed key).
    #[error("bad cell: {0}")]
    Cell(#[from] CellError),
    /// Reading or writing a store file failed (I/O, checksum, format); the error names the file.
    #[error(transparent)]
    HFile(#[from] HFileError),
    /// The WAL failed (append, sync, roll or replay); a write that gets this was not acknowledged.
    #[error(transparent)]
    Wal(#[from] cairn_wal::WalError),
    /// A filter that cannot be built or applied; servers report it to the client as a bad request.
    #[error("filter: {0}")]
    Filter(String),
    /// A filesystem operation on `path` failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory, as displayed.
        path: String,
        /// What the filesystem said.
        #[source]
        source: std::io::Error,
    },
    /// A metadata file (`.regioninfo`, `.tableinfo.*`) that is there but does not parse: a reason
    /// not to open the region or table rather than to guess.
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file, as displayed.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server cannot start: a directory it writes to is on a filesystem with less free
    /// space than [`crate::MIN_FREE_SPACE`].
    #[error(
        "{path} has {} free; cairn needs at least {} there to start (its first WAL segment and \
         room to flush what the WAL replays): free some space, or point hbase.rootdir or \
         hbase.wal.dir at a larger filesystem",
        mib(*free),
        mib(*needed)
    )]
    NoSpaceToStart {
        /// The directory, as displayed.
        path: String,
        /// Bytes free there.
        free: u64,
        /// Bytes needed.
        needed: u64,
    },
    /// The region was closed (table disabled or deleted, server shutting down); HBase answers with
    /// `NotServingRegionException`.
    #[error("region is closed")]
    Closed,
    /// HBase's `NotServingRegionException`: no open region of an enabled table has the name a
    /// request addressed (full region name or encoded name, as printed). Clients relocate the
    /// region and retry.
    #[error("region {0} is not online on this server")]
    NotServingRegion(String),
    /// HBase's `WrongRegionException`: a row outside the key range of the region a request was
    /// sent to. Clients relocate the row's region and retry.
    #[error("Requested row out of range for region {region}: row '{}'", Escaped(.row))]
    WrongRegion {
        /// The region name (`<table>,<start>,<id>.<encoded>.`).
        region: String,
        /// The row asked for.
        row: Vec<u8>,
    },
}

fn busy_reason(size: u64, limit: u64, global: bool) -> String {
    if global {
        format!(
            "the server's memstores hold {size} bytes, at or over the global limit {limit} \
             (hbase.regionserver.global.memstore.size), and flushes freed no room in time"
        )
    } else {
        format!("memstore {size} bytes over the blocking limit {limit}")
    }
}

/// Bytes as MiB with one decimal, the unit free-space messages use.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

impl RegionError {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> RegionError {
        RegionError::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let e = RegionError::io(
            "/data/t/r/f/abc",
            std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(e.to_string(), "/data/t/r/f/abc: gone");
        assert!(
            std::error::Error::source(&e).is_some(),
            "the I/O error stays the source"
        );
        let e = RegionError::NoSuchFamily {
            table: "ns:t".into(),
            family: "cf".into(),
        };
        assert_eq!(
            e.to_string(),
            "table ns:t: column family \"cf\" does not exist"
        );
        for global in [false, true] {
            let e = RegionError::RegionTooBusy {
                region: "t,,1.abc.".into(),
                size: 600,
                limit: 512,
                global,
            };
            let m = e.to_string();
            assert!(
                m.contains("t,,1.abc.") && m.contains("600") && m.contains("512"),
                "{m}"
            );
            assert_eq!(
                m.contains("hbase.regionserver.global.memstore.size"),
                global,
                "{m}"
            );
        }
        // Rows are arbitrary bytes: printed as HBase's `Bytes.toStringBinary` does.
        let e = RegionError::WrongRegion {
            region: "t,b,1.abc.".into(),
            row: b"z\x00".to_vec(),
        };
        assert_eq!(
            e.to_string(),
            "Requested row out of range for region t,b,1.abc.: row 'z\\x00'"
        );
    }
}
