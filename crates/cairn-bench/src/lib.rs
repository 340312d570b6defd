//! # cairn-bench
//!
//! HBase's PerformanceEvaluation ([`pe`], `hbase pe`) and YCSB's core workloads ([`ycsb`]) run
//! against cairn's embedded region store: the workloads, their key and value generators, the
//! client threads, latency measurement and the reports (PE's and YCSB's own text, PE's JSON).
//! It also owns what both share: the embedded [`store::Store`] they open, the process's CPU
//! time ([`cpu`]), sizes in binary units ([`units`]) and progress bars ([`progress`]).
//!
//! It does not own argument parsing or the `cairn` binary: `cairn-cli` parses `cairn pe` and
//! `cairn ycsb` command lines into [`pe::PeOptions`] and [`ycsb::YcsbOptions`], calls in here
//! and prints what comes back. Nor does it own the store itself (`cairn-region`).

#![warn(missing_docs)]

pub mod cpu;
pub mod pe;
pub mod progress;
pub mod store;
pub mod units;
pub mod ycsb;

mod usage;

pub use usage::UsageError;
