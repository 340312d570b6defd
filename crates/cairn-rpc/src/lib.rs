//! # cairn-rpc
//!
//! HBase 2.x's native RPC as bytes: what a Java client (`hbase-client` 2.x with its
//! `NettyRpcConnection`) writes to a region server or master port, and what it expects back.
//!
//! **Owns:** the protobuf messages of HBase 2.6 that cairn uses ([`pb`], generated from the
//! trimmed `.proto` files under `proto/` — RPC, Tracing, HBase, Cell, Client, Filter,
//! Comparator, Master, Admin, Registry, ClusterStatus, ClusterId, FS, Procedure, ErrorHandling,
//! MapReduce, ZooKeeper — whose field numbers, names, types and labels a test checks against
//! HBase 2.6.1's own descriptors), the
//! connection preambles and the call and response frames ([`wire`]), cell blocks in HBase's
//! `KeyValueCodec` layout ([`cellblock`]), and the data HBase keeps in its ZooKeeper znodes
//! ([`znode`]: the metadata prefix, `PBUF`, the location and cluster id messages), and a small
//! blocking client for cairn's own tools ([`client`]). Every length
//! read off the wire is checked against what is there before anything is allocated for it.
//!
//! **Does not own:** what a call means (cairn-server translates calls into region-store
//! operations), a server's sockets and threads, ZooKeeper sessions (cairn-server), or the cell model itself
//! (cairn-cell).

#![warn(missing_docs)]

pub mod cellblock;
pub mod client;
mod error;
pub mod pb;
pub mod wire;
pub mod znode;

pub use error::WireError;
