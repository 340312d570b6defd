//! # cairn-thrift
//!
//! The wire side of HBase's Thrift1 gateway.
//!
//! **Owns:** the IDL of the `Hbase` service subset cairn serves (`thrift/Hbase.thrift`, HBase's
//! method names, argument order and field ids), the Rust code generated from it ([`hbase`],
//! committed; `scripts/generate.sh` regenerates it), and [`conn`]: serving one connection —
//! telling binary from compact protocol and buffered from framed transport by the first bytes,
//! and reading requests through [`guard::Guarded`], which bounds every length the peer sends
//! (frame size, request size, strings, lists, maps) before anything is allocated, so hostile
//! bytes get an error or a closed connection, never a panic or an unbounded allocation.
//!
//! **Does not own:** the encodings themselves (Apache Thrift's `thrift` crate: binary and
//! compact protocols, buffered and framed write transports), what the calls mean (the handler in
//! cairn-server), sockets, threads and limits policy (the caller passes [`conn::Limits`]).

#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    non_camel_case_types,
    unused_imports,
    unused_mut,
    unused_variables
)]
#[rustfmt::skip]
pub mod hbase;

pub mod conn;
pub mod guard;

pub use conn::{serve_connection, BetweenRequests, ConnectionStats, Encoding, Limits, Outcome};
pub use thrift;
