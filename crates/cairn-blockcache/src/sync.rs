//! Synchronization primitives of the slot protocol: loom's under `cfg(loom)` so the model
//! checker explores every interleaving, std's otherwise.

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, RwLock};

#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, RwLock};
