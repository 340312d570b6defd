//! Synchronization primitives of the slot protocol: loom's under `cfg(loom)` so the model
//! checker explores every interleaving, std's otherwise.

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, RwLock};

#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// The slot table's shard lock. Every cache hit takes one for reading; a plain reader-writer
/// lock writes its one lock word on each read, so hits on two cores pass that cache line back
/// and forth. `ShardedLock` gives each thread its own padded reader lock and makes the (rare)
/// writer take them all.
#[cfg(not(loom))]
pub(crate) use crossbeam_utils::sync::ShardedLock as RwLock;
