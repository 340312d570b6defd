//! # cairn-server
//!
//! `cairn serve`: HBase's native RPC and HBase's Thrift1 gateway in front of cairn's embedded
//! region server, so HBase's Java client (and what is built on it) and HBase Thrift clients
//! (happybase and others) use cairn by changing a host name.
//!
//! **Owns:** what each `Hbase` call means over a [`cairn_region::RegionServer`] ([`handler`]:
//! HBase's `ThriftHBaseServiceHandler` semantics, open scanners and their leases), the running
//! server ([`server`]: listener, a thread per connection up to a limit, HTTP `/metrics`,
//! `/jmx`, `/health`, orderly shutdown that flushes memstores), what each native RPC call
//! means ([`rpc`]: `ClientService`, `MasterService`, `AdminService`, `ClientMetaService`,
//! a virtual `hbase:meta`), configuration with HBase's
//! property names ([`config`]), metrics sources per subsystem with Prometheus and JMX
//! renderings ([`metrics`]), and registration in ZooKeeper as HBase's master and region
//! server ([`zookeeper`]: the znodes and their byte formats, the session), so clients with
//! HBase's default ZooKeeper registry find the server.
//!
//! **Does not own:** Thrift's bytes (cairn-thrift: IDL, generated code, protocol detection and
//! input bounds), the native RPC's bytes (cairn-rpc: frames, protobufs, cell blocks), storage (cairn-region and below), command-line parsing and signals
//! (cairn-cli's `serve`).

#![warn(missing_docs)]

pub mod cluster;
pub mod config;
pub mod connections;
pub mod handler;
pub mod leases;
pub mod metrics;
pub mod rpc;
pub mod security;
pub mod server;
pub mod slow_log;
pub mod zookeeper;

pub use config::{Config, ConfigError};
pub use handler::{Handler, HandlerConfig};
pub use server::{ServeError, Server};
