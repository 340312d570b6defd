//! Why bytes or arguments do not make a valid key or cell.

/// Why bytes are not a valid key or cell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// The key is shorter than its own length fields say.
    #[error("key of {len} bytes is too short: row length {row_len} and family length {family_len} need at least {needed}")]
    KeyTooShort {
        /// Key length.
        len: usize,
        /// Declared row length.
        row_len: usize,
        /// Declared family length.
        family_len: usize,
        /// Bytes those lengths need.
        needed: usize,
    },
    /// A row over HBase's limit.
    #[error("Row length {0} is > 32767")]
    RowTooLong(usize),
    /// A family over HBase's limit.
    #[error("family of {0} bytes is longer than HBase's limit of 127")]
    FamilyTooLong(usize),
    /// Tags over HBase's limit.
    #[error("tags of {0} bytes are longer than HBase's limit of 65535")]
    TagsTooLong(usize),
    /// A cell that does not fit in its block.
    #[error("cell at block offset {offset} is truncated: {what}")]
    Truncated {
        /// Offset within the block's data.
        offset: usize,
        /// What did not fit.
        what: &'static str,
    },
}
