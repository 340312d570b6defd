//! What offline tools (`cairn importtsv`, `cairn completebulkload`, the region tools) need of
//! the store without opening a region server: HBase's directory layout and its descriptor
//! files, the writer options a family's store files are written with, and which file names
//! are store files. The one surface the CLI reaches below `RegionServer` through; each item
//! is the store's own, so a tool writes exactly what a region would.

/// HBase's on-disk layout: directories, the `.tableinfo` and `.regioninfo` files.
pub mod layout {
    pub use crate::layout::{
        archive_table_dir, decode_region_info_bytes, decode_table_descriptor,
        encode_table_descriptor, read_region_info, read_table_descriptor, table_dir,
        unique_file_name, write_region_info, write_table_descriptor, LOCAL, REGION_INFO_FILE,
    };
}

/// The HFile writer options of a family's store files (block size, checksums, compression,
/// encoding, Bloom filter), as a flush or compaction writes them.
pub use crate::storefile::writer_options;

/// Whether a file name is a store file's (HBase's `StoreFileInfo.HFILE_NAME_REGEX`).
pub use crate::reference::is_hfile_name;

/// HBase's split policies by class name (what a table's `SPLIT_POLICY` may name).
pub use crate::server::SplitPolicyKind;
