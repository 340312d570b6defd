//! Bulk load into a store (HBase's `HStore.preBulkLoadHFile` / `bulkLoadHFile`): the
//! region's bulk load (`region/bulk_load.rs`) drives these.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{sort_files, Store};
use crate::error::Result;
use crate::layout::unique_file_name;
use crate::storefile::StoreFile;

impl Store {
    /// Where a file bulk-loaded into this store goes: `<region>/<family>/<32 hex>` plus
    /// `_SeqId_<n>_` when the load assigned sequence id `n` (HBase's
    /// `HRegionFileSystem.bulkLoadStoreFile`).
    pub fn bulk_load_destination(&self, seq: Option<u64>) -> PathBuf {
        let suffix = seq.map(crate::storefile::format_bulkload_seq_id);
        self.dir.join(format!(
            "{}{}",
            unique_file_name(),
            suffix.as_deref().unwrap_or("")
        ))
    }

    /// The store's scratch directory, `<region>/.tmp/<family>`: where a copied file is
    /// written before it is renamed into the family directory.
    pub fn tmp_dir(&self) -> &Path {
        &self.tmp_dir
    }

    /// Opens a file already renamed into the family directory by a bulk load; readers
    /// whose read point is below `visible_from` will skip it.
    pub fn open_bulk_loaded(&self, path: &Path, visible_from: u64) -> Result<StoreFile> {
        let mut f = self.open_file(path)?;
        f.visible_from = visible_from;
        Ok(f)
    }

    /// Adds bulk-loaded files to the store's file set in one swap.
    pub fn add_bulk_loaded(&self, files: Vec<StoreFile>) {
        let mut s = self.state.write();
        let mut all = (*s.files).clone();
        all.extend(files.into_iter().map(Arc::new));
        sort_files(&mut all);
        s.files = Arc::new(all);
    }
}
