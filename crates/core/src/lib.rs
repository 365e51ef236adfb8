//! flushwise-core: the sans-IO buffer-pool core.
//!
//! Everything flushwise decides lives here: which frame a page gets, what is
//! evicted, when a user thread must write synchronously, how many pages the
//! page cleaner flushes and how that rate adapts. The crate does no I/O,
//! reads no clock and spawns no thread: time comes in as a parameter and
//! decisions go out as values. The simulator (`crates/sim`) and the real
//! engine (`crates/engine`) are two shells over this one crate.

pub mod device;
pub mod types;

pub use types::{FrameId, Lsn, PageId, TimeUs, SECOND_US};
