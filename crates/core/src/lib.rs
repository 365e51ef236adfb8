//! flushwise-core: the sans-IO buffer-pool core.
//!
//! Everything flushwise decides lives here: which frame a page gets, what is
//! evicted, when a user thread must write synchronously, how many pages the
//! page cleaner flushes and how that rate adapts. The crate does no I/O,
//! reads no clock and spawns no thread: time comes in as a parameter and
//! decisions go out as values. The simulator (`crates/sim`) and the real
//! engine (`crates/engine`) are two shells over this one crate.

pub mod adaptive_flushing;
pub mod buffer_pool;
#[cfg(test)]
mod buffer_pool_tests;
pub mod cleaner;
pub mod decision_log;
pub mod device;
pub mod fast_hits;
#[cfg(test)]
mod fast_hits_tests;
pub mod free_page_path;
pub mod histogram;
pub mod iteration_log;
pub mod limits;
pub mod list;
pub mod page_table;
pub mod params;
pub mod policy;
pub mod redo_space;
pub mod stats;
pub mod types;
#[cfg(test)]
mod victim_search_tests;

pub use buffer_pool::{
    BufferPool, BufferPoolConfig, CheckpointReason, FixIntent, FixOutcome, FreeCheck, LruChunk, LruMode, StallKind,
    WakeThresholds, WriteKind, WriteOrder,
};
pub use cleaner::{CleanerAction, PageCleaner};
pub use decision_log::{Decision, DecisionLog};
pub use fast_hits::{AccessRule, FastHits};
pub use free_page_path::{FreePagePath, FreePageRule, SinglePageFlush, UserScanDepth};
pub use iteration_log::IterationRecord;
pub use policy::{FlushPolicy, IterationReport, Sleep, WaitFor};
pub use redo_space::{RedoConfig, RedoMargins, RedoSpace};
pub use stats::PoolCounters;
pub use types::{FrameId, Lsn, PageId, TimeUs, SECOND_US};
