//! What can be wrong with bytes on the RPC port.

/// Bytes a peer sent that are not HBase RPC, each naming what was being read and where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    /// The first six bytes are none of HBase's preambles.
    #[error("connection preamble {0:02x?} is not HBase RPC (\"HBas\", version 0, auth byte)")]
    BadPreamble([u8; 6]),
    /// An RPC version other than 0.
    #[error("RPC version {0} is not supported (this server speaks version 0)")]
    BadVersion(u8),
    /// A frame's length prefix is negative or past the limit.
    #[error("{what} of {len} bytes is over the limit of {limit} bytes")]
    TooBig {
        /// `connection header` or `request`.
        what: &'static str,
        /// The length the peer announced.
        len: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A length-delimited part runs past the end of its frame.
    #[error("{what}: length {len} at offset {offset} runs past the end of the {frame}-byte frame")]
    Truncated {
        /// Which part (`request header`, `request parameter`, `cell block`, ...).
        what: &'static str,
        /// Where in the frame the part starts.
        offset: usize,
        /// The length it announced.
        len: u64,
        /// The frame's length.
        frame: usize,
    },
    /// A protobuf message that does not decode.
    #[error("{what} at offset {offset}: {reason}")]
    Protobuf {
        /// Which message.
        what: &'static str,
        /// Where in the frame it starts.
        offset: usize,
        /// prost's reason.
        reason: String,
    },
    /// A cell in a cell block that is malformed.
    #[error("cell block: cell {index} at offset {offset}: {reason}")]
    Cell {
        /// The cell's position in the block, from 0.
        index: usize,
        /// Its offset in the block.
        offset: usize,
        /// What is wrong with it.
        reason: String,
    },
}
