//! The journal that makes splits and merges crash-safe (what HBase keeps as procedure
//! state in the master): one small file per running transition under
//! `<table>/.transitions/`, rewritten atomically at its point of no return.
//!
//! A transition writes its journal (PREPARED) before it creates any child region directory,
//! and rewrites it COMMITTED only once every child directory is complete and synced. At
//! server open, a PREPARED journal is rolled back (the children's directories deleted, the
//! parents open as before) and a COMMITTED one rolled forward (the parents marked offline,
//! the children opened): after a crash at any step, either the parents or the children
//! serve, never both and never neither.

use prost::Message;

use super::*;

/// The journal directory under a table's directory.
pub const TRANSITIONS_DIR: &str = ".transitions";

/// One split or merge in flight.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct Transition {
    /// Parents' `RegionInfo`s (HBase's `toByteArray` form).
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub parents: Vec<Vec<u8>>,
    /// Children's `RegionInfo`s.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub children: Vec<Vec<u8>>,
    /// True once every child directory is complete: the point of no return.
    #[prost(bool, tag = "3")]
    pub committed: bool,
    /// A split (true) or a merge (false): how the parents are marked offline.
    #[prost(bool, tag = "4")]
    pub split: bool,
}

impl Transition {
    pub(super) fn new(parents: &[&RegionInfo], children: &[&RegionInfo], split: bool) -> Self {
        Transition {
            parents: parents.iter().map(|r| r.to_byte_array()).collect(),
            children: children.iter().map(|r| r.to_byte_array()).collect(),
            committed: false,
            split,
        }
    }

    fn infos(list: &[Vec<u8>], path: &Path) -> Result<Vec<RegionInfo>> {
        list.iter()
            .map(|b| layout::decode_region_info_bytes(b, path))
            .collect()
    }

    /// The journal file of the transition whose first parent is `parent`.
    pub(super) fn path(table_dir: &Path, parent: &RegionInfo) -> PathBuf {
        table_dir.join(TRANSITIONS_DIR).join(&parent.encoded_name)
    }

    /// Writes the journal atomically and durably.
    pub(super) fn write(&self, fs: &dyn FileSystem, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            fs.mkdirs_durable(dir)
                .map_err(|e| RegionError::io(dir, e))?;
        }
        layout::write_atomically(fs, path, &self.encode_to_vec())?;
        if let Some(dir) = path.parent() {
            fs.sync_dir(dir).map_err(|e| RegionError::io(dir, e))?;
        }
        Ok(())
    }

    /// Marks the parents offline in their `.regioninfo` (the children replace them). Run
    /// once committed, and again by recovery: it is idempotent.
    pub(super) fn retire_parents(&self, fs: &dyn FileSystem, table_dir: &Path) -> Result<()> {
        for mut p in Self::infos(&self.parents, table_dir)? {
            let dir = table_dir.join(&p.encoded_name);
            p.offline = true;
            p.split = self.split;
            layout::write_atomically(fs, &dir.join(REGION_INFO_FILE), &p.encode())?;
        }
        Ok(())
    }

    /// Deletes the children's directories (a roll back).
    pub(super) fn remove_children(&self, fs: &dyn FileSystem, table_dir: &Path) -> Result<()> {
        for c in Self::infos(&self.children, table_dir)? {
            let dir = table_dir.join(&c.encoded_name);
            fs.delete(&dir).map_err(|e| RegionError::io(&dir, e))?;
        }
        fs.sync_dir(table_dir)
            .map_err(|e| RegionError::io(table_dir, e))
    }
}

/// Finishes or undoes the transitions a crash interrupted in `table_dir`, before its regions
/// are listed. Returns how many were rolled forward and back.
pub(super) fn recover(fs: &dyn FileSystem, table_dir: &Path) -> Result<(usize, usize)> {
    let dir = table_dir.join(TRANSITIONS_DIR);
    let entries = match fs.list(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
        Err(e) => return Err(RegionError::io(&dir, e)),
    };
    let (mut forward, mut back) = (0, 0);
    for e in entries.into_iter().filter(|e| !e.is_dir) {
        let name = e.path.file_name().map(|n| n.to_string_lossy().into_owned());
        // A journal's temporary (an interrupted atomic write) never took effect.
        if name
            .as_deref()
            .is_some_and(|n| n.starts_with('.') || n.contains(".tmp"))
        {
            fs.delete(&e.path)
                .map_err(|err| RegionError::io(&e.path, err))?;
            continue;
        }
        let bytes = fs
            .read(&e.path)
            .map_err(|err| RegionError::io(&e.path, err))?;
        let t = Transition::decode(bytes.as_slice()).map_err(|err| RegionError::Corrupt {
            path: e.path.display().to_string(),
            reason: format!("split/merge journal does not parse: {err}"),
        })?;
        if t.committed {
            t.retire_parents(fs, table_dir)?;
            tracing::info!(
                "{}: finishing a split or merge a crash interrupted",
                e.path.display()
            );
            forward += 1;
        } else {
            t.remove_children(fs, table_dir)?;
            tracing::info!(
                "{}: undoing a split or merge a crash interrupted",
                e.path.display()
            );
            back += 1;
        }
        fs.delete(&e.path)
            .map_err(|err| RegionError::io(&e.path, err))?;
    }
    fs.sync_dir(&dir).map_err(|e| RegionError::io(&dir, e))?;
    Ok((forward, back))
}
