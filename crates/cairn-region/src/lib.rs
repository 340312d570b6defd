//! # cairn-region
//!
//! The storage half of an HBase region server: tables split into regions by row key, one
//! store per column family, each store a memstore plus HFiles.
//!
//! **Owns:** table and family descriptors ([`descriptor`]), client operations ([`mutation`]),
//! MVCC ([`mvcc`]), memstores ([`memstore`]), store files and stores with flush and
//! compaction ([`storefile`], [`store`], [`compaction`]), HBase's read semantics — versions,
//! delete markers, TTL, time ranges, filters ([`matcher`], [`heap`], [`scanner`]), regions
//! ([`region`]), HBase's directory layout ([`layout`]), and the embedded [`RegionServer`]
//! that routes rows to regions and runs flushes and compactions in the background.
//!
//! **Does not own:** the HFile format (cairn-hfile), block caching (cairn-blockcache), the
//! WAL's bytes (cairn-wal), filter semantics and the filter language (cairn-filter), or any
//! network protocol.

#![warn(missing_docs)]

pub mod accounting;
pub mod bounds;
pub mod cell_scanner;
pub mod compaction;
pub mod descriptor;
mod error;
pub mod half_scanner;
pub mod heap;
pub mod layout;
pub mod matcher;
pub mod memstore;
pub mod meta;
pub mod metrics;
pub mod mutation;
pub mod mvcc;
pub mod names;
pub mod offline;
pub mod read;
pub mod read_options;
pub mod read_points;
pub mod reference;
pub mod region;
pub mod scanner;
pub mod server;
pub mod store;
pub mod store_file_scanner;
pub mod storefile;
pub mod tools;

pub use cairn_wal::{Durability, ServerName};
pub use descriptor::{ColumnFamilyDescriptor, TableDescriptor, TableName};
pub use error::{RegionError, Result};
pub use layout::RegionInfo;
pub use matcher::TimeRange;
pub use meta::MetaRegion;
pub use mutation::{
    Append, CheckAndMutate, CheckAndMutateResult, Delete, Get, Increment, Put, RowMutations, Scan,
};
pub use read::RegionRead;
pub use read_options::ReadOptions;
pub use region::{FlushOutcome, Region, RegionConfig};
pub use scanner::RegionScanner;
pub use server::{
    encoded_part, Hosting, Opened, RecoveryReport, RegionServer, Retry, ServerConfig, TableScanner,
    MIN_FREE_SPACE,
};
pub use store::{CompactionOutcome, Store, Throttle};
