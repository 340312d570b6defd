//! HBase 2.x's native RPC in `cairn serve`: what the calls of HBase's Java client mean here.
pub mod filter;
