//! # cairn-rpc
//!
//! HBase 2.x's native RPC as bytes: what a Java client (`hbase-client` 2.x with its
//! `NettyRpcConnection`) writes to a region server or master port, and what it expects back.
//!
//! **Owns:** the protobuf messages of HBase 2.6's `RPC.proto`, `HBase.proto`, `Client.proto`,
//! `Master.proto`, `Admin.proto`, `Registry.proto`, `ClusterStatus.proto`, `Filter.proto` and
//! `Comparator.proto` that cairn uses ([`pb`], field numbers and types exactly as HBase's), the
//! connection preambles, the call and response frames, and cell blocks in HBase's
//! `KeyValueCodec` layout.
//!
//! **Does not own:** what a call means (cairn-server translates calls into region-store
//! operations), sockets, threads, or the cell model itself (cairn-cell).

#![warn(missing_docs)]

pub mod pb;
