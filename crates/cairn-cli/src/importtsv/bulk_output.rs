//! Sorted cells into HFiles under `<bulk.output>/<family>/<32 hex>`, as HFileOutputFormat2
//! writes them: one open file per family per region, closed when the next cell belongs to
//! another region (so no file straddles a region boundary), rolled at a row boundary once it
//! passes `hbase.hregion.max.filesize`; each file with the family's compression, encoding,
//! Bloom type and block size, and HFileOutputFormat2's file info.
//!
//! Files are written under `<bulk.output>/_temporary/` and renamed into their family
//! directory when complete, so a failed run leaves no partial HFile where a bulk load looks.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cairn_cell::{CellRef, KeyRef};
use cairn_hfile::{HFileWriter, WriterOptions};
use cairn_region::tools::layout::unique_file_name;
use cairn_region::tools::writer_options;
use cairn_region::ColumnFamilyDescriptor;

use super::regions::TableLayout;

/// The temporary directory inside the output (Hadoop's FileOutputCommitter name, which
/// bulk loads skip).
const TEMP_DIR: &str = "_temporary";

/// One written file.
#[derive(Clone, Debug)]
pub struct WrittenFile {
    /// Its length.
    pub bytes: u64,
    /// The region (0-based) its rows belong to.
    pub region: usize,
}

struct OpenFile {
    writer: HFileWriter<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    /// Bytes of cells appended (HFileOutputFormat2's `written`, for rolling).
    written: u64,
    last_row: Vec<u8>,
}

/// Writes the output of one run.
pub struct BulkOutput {
    dir: PathBuf,
    layout: TableLayout,
    options: BTreeMap<Vec<u8>, WriterOptions>,
    max_file_size: u64,
    bulkload_task: String,
    open: BTreeMap<Vec<u8>, OpenFile>,
    region: Option<usize>,
    /// Files finished so far.
    pub files: Vec<WrittenFile>,
}

impl BulkOutput {
    /// Output into `dir`, which must not exist yet (as Hadoop refuses an existing output
    /// directory). `overrides` are HFileOutputFormat2's job-wide compression and encoding.
    pub fn create(
        dir: &Path,
        layout: TableLayout,
        overrides: impl Fn(&mut ColumnFamilyDescriptor),
        max_file_size: u64,
    ) -> Result<BulkOutput> {
        if dir.exists() {
            anyhow::bail!("Output directory {} already exists", dir.display());
        }
        std::fs::create_dir_all(dir.join(TEMP_DIR))
            .with_context(|| format!("creating {}", dir.display()))?;
        let options = layout
            .families
            .iter()
            .map(|(name, f)| {
                let mut f = f.clone();
                overrides(&mut f);
                let mut o = writer_options(&f, true);
                // HFileOutputFormat2's HFileContext leaves tag compression off.
                o.compress_tags = false;
                (name.clone(), o)
            })
            .collect();
        Ok(BulkOutput {
            dir: dir.to_path_buf(),
            layout,
            options,
            max_file_size,
            bulkload_task: format!("cairn_importtsv_{}", std::process::id()),
            open: BTreeMap::new(),
            region: None,
            files: Vec::new(),
        })
    }

    /// Appends one cell; cells come in HBase's key order.
    pub fn append(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let k = KeyRef::from_valid(key);
        let row = k.row();
        let region = self.layout.region_of(row);
        if self.region != Some(region) {
            self.close_all()?;
            self.region = Some(region);
        }
        let family = k.family();
        let roll = self
            .open
            .get(family)
            .is_some_and(|f| f.written >= self.max_file_size && f.last_row != row);
        if roll {
            let f = self.open.remove(family).expect("checked");
            self.close(f, region)?;
        }
        if !self.open.contains_key(family) {
            let f = self.new_file(family)?;
            self.open.insert(family.to_vec(), f);
        }
        let f = self.open.get_mut(family).expect("just opened");
        let cell = CellRef {
            key: k,
            value,
            tags: &[],
            sequence_id: 0,
        };
        f.writer
            .append(&cell)
            .with_context(|| format!("writing {}", f.tmp.display()))?;
        f.written += cell.serialized_len() as u64;
        if f.last_row != row {
            f.last_row.clear();
            f.last_row.extend_from_slice(row);
        }
        Ok(())
    }

    fn new_file(&self, family: &[u8]) -> Result<OpenFile> {
        let name = String::from_utf8_lossy(family);
        let options = self
            .options
            .get(family)
            .cloned()
            .with_context(|| format!("family {name} is not a family of the table"))?;
        let file_name = unique_file_name();
        let tmp_dir = self.dir.join(TEMP_DIR).join(&*name);
        let fam_dir = self.dir.join(&*name);
        for d in [&tmp_dir, &fam_dir] {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        let tmp = tmp_dir.join(&file_name);
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let writer = HFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            tmp.display().to_string(),
            options,
        )?;
        Ok(OpenFile {
            writer,
            tmp,
            path: fam_dir.join(file_name),
            written: 0,
            last_row: Vec::new(),
        })
    }

    fn close(&mut self, f: OpenFile, region: usize) -> Result<()> {
        let OpenFile {
            mut writer,
            tmp,
            path,
            ..
        } = f;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        // HFileOutputFormat2's close(), and StoreFileWriter's HISTORICAL flag; booleans as
        // HBase's Bytes.toBytes(boolean) writes them.
        writer.append_file_info(b"BULKLOAD_TIMESTAMP", &now_ms.to_be_bytes())?;
        writer.append_file_info(b"BULKLOAD_SOURCE_TASK", self.bulkload_task.as_bytes())?;
        writer.append_file_info(b"MAJOR_COMPACTION_KEY", &[0xff])?;
        writer.append_file_info(b"EXCLUDE_FROM_MINOR_COMPACTION", &[0])?;
        writer.append_file_info(b"HISTORICAL", &[0])?;
        let (out, summary) = writer
            .finish()
            .with_context(|| format!("finishing {}", tmp.display()))?;
        let file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", tmp.display()))?;
        file.sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        self.files.push(WrittenFile {
            bytes: summary.file_len,
            region,
        });
        Ok(())
    }

    fn close_all(&mut self) -> Result<()> {
        let region = self.region.unwrap_or(0);
        for (_, f) in std::mem::take(&mut self.open) {
            self.close(f, region)?;
        }
        Ok(())
    }

    /// Closes the open files, removes the temporary directory and writes `_SUCCESS` (as
    /// Hadoop's committer does; bulk loads skip it).
    pub fn finish(mut self) -> Result<Vec<WrittenFile>> {
        self.close_all()?;
        let tmp = self.dir.join(TEMP_DIR);
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
        let success = self.dir.join("_SUCCESS");
        File::create(&success).with_context(|| format!("creating {}", success.display()))?;
        Ok(self.files)
    }
}
