//! Errors of the region store: each names the table, region, family, file or request field.

use cairn_hfile::cell::CellError;
use cairn_hfile::HFileError;

pub type Result<T, E = RegionError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("not supported: {0}")]
    Unsupported(String),
    #[error("table {0} does not exist")]
    TableNotFound(String),
    #[error("table {0} already exists")]
    TableExists(String),
    #[error("table {0} is disabled")]
    TableDisabled(String),
    #[error("table {table}: column family {family:?} does not exist")]
    NoSuchFamily { table: String, family: String },
    #[error("region {region} is too busy: memstore {size} bytes over the blocking limit {limit}")]
    RegionTooBusy {
        region: String,
        size: u64,
        limit: u64,
    },
    #[error("bad cell: {0}")]
    Cell(#[from] CellError),
    #[error(transparent)]
    HFile(#[from] HFileError),
    #[error(transparent)]
    Wal(#[from] cairn_wal::WalError),
    #[error("filter: {0}")]
    Filter(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("region is closed")]
    Closed,
}

impl RegionError {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> RegionError {
        RegionError::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}
