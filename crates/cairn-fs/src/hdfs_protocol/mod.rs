//! The parts of HDFS's wire protocols cairn speaks itself, over blocking sockets: a Hadoop IPC
//! client for two NameNode calls ([`namenode`]) and DataTransferProtocol's `OP_READ_BLOCK`
//! ([`datanode`]), with the protocol buffers they need ([`proto`]).
//!
//! Kept apart from the `hdfs` feature's `hdfs-native` client (feature `hdfs-wire`) so the
//! parsers of DataNode and NameNode answers can be fuzzed without building it.

pub mod datanode;
pub mod namenode;
pub mod proto;
