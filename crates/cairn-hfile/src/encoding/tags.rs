//! Compressed tags (HBase's `COMPRESS_TAGS` with a data block encoding): each block has its
//! own dictionary of the tags written so far; a tag already in it is written as its 2-byte
//! index, any other whole, after which it joins the dictionary.

use super::input::{put_compressed_int, Input};

/// HBase's `LRUDictionary` as a block's compressed tags use it: up to 127 entries (one block's
/// `TagCompressionContext`), each new tag taking the next index until it is full, then the
/// index of the least recently used one; reading an entry makes it the most recently used.
#[derive(Default)]
pub(super) struct TagDictionary {
    entries: Vec<Vec<u8>>,
    /// Indexes, most recently used first.
    recent: std::collections::VecDeque<usize>,
}

impl TagDictionary {
    const CAPACITY: usize = 127;

    /// Adds `tag` as the most recent entry (an empty tag is never added, as in HBase).
    pub(super) fn add(&mut self, tag: &[u8]) {
        if tag.is_empty() {
            return;
        }
        let index = if self.entries.len() < Self::CAPACITY {
            self.entries.push(tag.to_vec());
            self.entries.len() - 1
        } else {
            let index = self.recent.pop_back().expect("a full dictionary");
            self.entries[index] = tag.to_vec();
            index
        };
        self.recent.push_front(index);
    }

    /// HBase's `Dictionary.write` with this dictionary: a tag it holds is written as its 2-byte
    /// index and becomes the most recent; any other as 0xff, its length (7-bit varint) and its
    /// bytes, and joins the dictionary.
    fn write_tag(&mut self, tag: &[u8], out: &mut Vec<u8>) {
        let hit = if tag.is_empty() {
            None
        } else {
            self.entries.iter().position(|e| e == tag)
        };
        match hit {
            Some(i) => {
                self.get(i);
                out.extend_from_slice(&(i as u16).to_be_bytes());
            }
            None => {
                out.push(0xff);
                put_compressed_int(out, tag.len());
                out.extend_from_slice(tag);
                self.add(tag);
            }
        }
    }

    /// The tags the dictionary holds, by index (for the tests' reference encoder).
    #[cfg(test)]
    pub(super) fn entries(&self) -> &[Vec<u8>] {
        &self.entries
    }

    /// The entry at `index`, which becomes the most recent; `None` if there is none.
    pub(super) fn get(&mut self, index: usize) -> Option<&[u8]> {
        let at = self.recent.iter().position(|&i| i == index)?;
        self.recent.remove(at);
        self.recent.push_front(index);
        Some(&self.entries[index])
    }
}

/// One cell's dictionary-compressed tags (HBase's `TagCompressionContext.uncompressTags`),
/// `tags_len` bytes once written out as `length u16 | tag` each. A tag is a status byte: -1
/// (0xff) then its length (7-bit varint) and bytes, which join the dictionary; otherwise that
/// byte and the next are the 2-byte index of a tag in the dictionary.
pub(super) fn uncompress_tags(
    input: &mut Input<'_>,
    dictionary: &mut TagDictionary,
    tags_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let end = out.len() + tags_len;
    while out.len() < end {
        let status = input.byte("tag status")?;
        if status == 0xff {
            let len = input.compressed_int("tag length")?;
            let len16 = u16::try_from(len)
                .map_err(|_| input.fail(format_args!("tag length {len} exceeds 65535")))?;
            let tag = input.take(len, "tag")?;
            out.extend_from_slice(&len16.to_be_bytes());
            out.extend_from_slice(tag);
            dictionary.add(tag);
        } else {
            let index = usize::from(u16::from_be_bytes([status, input.byte("tag index")?]));
            let tag = dictionary
                .get(index)
                .ok_or_else(|| input.fail(format_args!("tag dictionary has no entry {index}")))?;
            out.extend_from_slice(&(tag.len() as u16).to_be_bytes());
            out.extend_from_slice(tag);
        }
    }
    if out.len() != end {
        return Err(input.fail(format_args!("tags decode past their length {tags_len}")));
    }
    Ok(())
}

/// One cell's tags (`length u16 | tag` each) written with the block's dictionary
/// ([`TagDictionary::write_tag`] each); an error says how the tags are malformed.
pub(super) fn compress_tags(
    tags: &[u8],
    dictionary: &mut TagDictionary,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut pos = 0;
    while pos < tags.len() {
        let len = tags
            .get(pos..pos + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .ok_or("a tag's length is cut off")?;
        let tag = tags
            .get(pos + 2..pos + 2 + len)
            .ok_or("a tag runs past the cell's tags")?;
        dictionary.write_tag(tag, out);
        pos += 2 + len;
    }
    Ok(())
}
