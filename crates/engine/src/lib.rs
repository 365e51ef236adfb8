//! flushwise-engine: the real storage engine, a shell over `flushwise-core`.
//!
//! All file I/O goes through the narrow [`storage::StorageBackend`] trait.

pub mod btree;
pub mod buffer;
pub mod calibrate;
pub mod db;
pub mod memory;
pub mod page;
pub mod page_store;
pub mod redo;
mod rng;
pub mod sched;
pub mod storage;
pub mod trace_recorder;
