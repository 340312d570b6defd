//! The kinds of HFile blocks and the 8-byte magic that starts each one.

use std::fmt;

/// An HFile block type (`BlockType` in HBase), identified on disk by its magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockType {
    /// Cells, not encoded (`DATABLK*`).
    Data,
    /// Cells in a data block encoding (`DATABLKE`).
    EncodedData,
    /// Inline leaf level of the data index (`IDXLEAF2`).
    LeafIndex,
    /// Inline Bloom filter chunk (`BLMFBLK2`).
    BloomChunk,
    /// A named meta block (`METABLKc`).
    Meta,
    /// Intermediate level of the data index (`IDXINTE2`).
    IntermediateIndex,
    /// Root level of the data index, or the meta index (`IDXROOT2`).
    RootIndex,
    /// File info (`FILEINF2`).
    FileInfo,
    /// General Bloom filter metadata (`BLMFMET2`).
    GeneralBloomMeta,
    /// Delete-family Bloom filter metadata (`DFBLMET2`).
    DeleteFamilyBloomMeta,
    /// The fixed file trailer's magic (`TRABLK"$`); not a real block.
    Trailer,
    /// Version-1 index block (`IDXBLK)+`); never in v3 files.
    IndexV1,
}

/// Bytes of a block magic.
pub const MAGIC_LEN: usize = 8;

impl BlockType {
    const ALL: [BlockType; 12] = [
        BlockType::Data,
        BlockType::EncodedData,
        BlockType::LeafIndex,
        BlockType::BloomChunk,
        BlockType::Meta,
        BlockType::IntermediateIndex,
        BlockType::RootIndex,
        BlockType::FileInfo,
        BlockType::GeneralBloomMeta,
        BlockType::DeleteFamilyBloomMeta,
        BlockType::Trailer,
        BlockType::IndexV1,
    ];

    /// The 8-byte magic.
    pub fn magic(self) -> &'static [u8; MAGIC_LEN] {
        match self {
            BlockType::Data => b"DATABLK*",
            BlockType::EncodedData => b"DATABLKE",
            BlockType::LeafIndex => b"IDXLEAF2",
            BlockType::BloomChunk => b"BLMFBLK2",
            BlockType::Meta => b"METABLKc",
            BlockType::IntermediateIndex => b"IDXINTE2",
            BlockType::RootIndex => b"IDXROOT2",
            BlockType::FileInfo => b"FILEINF2",
            BlockType::GeneralBloomMeta => b"BLMFMET2",
            BlockType::DeleteFamilyBloomMeta => b"DFBLMET2",
            BlockType::Trailer => b"TRABLK\"$",
            BlockType::IndexV1 => b"IDXBLK)+",
        }
    }

    /// The type with this magic, if any.
    #[inline]
    pub fn from_magic(magic: &[u8]) -> Option<BlockType> {
        // One 8-byte compare instead of a walk over the magics: this runs on every cache hit.
        let m: [u8; MAGIC_LEN] = magic.get(..MAGIC_LEN)?.try_into().ok()?;
        Some(match &m {
            b"DATABLK*" => BlockType::Data,
            b"DATABLKE" => BlockType::EncodedData,
            b"IDXLEAF2" => BlockType::LeafIndex,
            b"BLMFBLK2" => BlockType::BloomChunk,
            b"METABLKc" => BlockType::Meta,
            b"IDXINTE2" => BlockType::IntermediateIndex,
            b"IDXROOT2" => BlockType::RootIndex,
            b"FILEINF2" => BlockType::FileInfo,
            b"BLMFMET2" => BlockType::GeneralBloomMeta,
            b"DFBLMET2" => BlockType::DeleteFamilyBloomMeta,
            b"TRABLK\"$" => BlockType::Trailer,
            b"IDXBLK)+" => BlockType::IndexV1,
            _ => return None,
        })
    }

    /// HBase's enum name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            BlockType::Data => "DATA",
            BlockType::EncodedData => "ENCODED_DATA",
            BlockType::LeafIndex => "LEAF_INDEX",
            BlockType::BloomChunk => "BLOOM_CHUNK",
            BlockType::Meta => "META",
            BlockType::IntermediateIndex => "INTERMEDIATE_INDEX",
            BlockType::RootIndex => "ROOT_INDEX",
            BlockType::FileInfo => "FILE_INFO",
            BlockType::GeneralBloomMeta => "GENERAL_BLOOM_META",
            BlockType::DeleteFamilyBloomMeta => "DELETE_FAMILY_BLOOM_META",
            BlockType::Trailer => "TRAILER",
            BlockType::IndexV1 => "INDEX_V1",
        }
    }

    /// Which chain of `prevBlockOffset` links the type belongs to: data and encoded data share
    /// one (HBase's `BlockType.getId()`).
    pub(crate) fn chain(self) -> usize {
        match self {
            BlockType::EncodedData => 0,
            t => Self::ALL.iter().position(|x| *x == t).expect("listed"),
        }
    }

    /// Number of chains.
    pub(crate) const CHAINS: usize = 12;
}

impl fmt::Display for BlockType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics_round_trip() {
        for t in BlockType::ALL {
            assert_eq!(BlockType::from_magic(t.magic()), Some(t));
            assert_eq!(t.magic().len(), MAGIC_LEN);
        }
        assert_eq!(BlockType::from_magic(b"NOTABLK!"), None);
        assert_eq!(BlockType::Data.chain(), BlockType::EncodedData.chain());
    }
}
