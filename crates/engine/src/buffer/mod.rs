//! The engine's buffer pool: a threaded, real-I/O shell over the sans-IO
//! core (`flushwise_core::BufferPool` + `PageCleaner`).
//!
//! Every list decision (which frame a page gets, what is evicted, what the
//! page cleaner writes, when a writer must flush synchronously) is the
//! core's; this module moves bytes, holds latches, keeps time and runs the
//! threads. It mirrors the protocol of the simulator (`crates/sim`), with
//! real threads where the simulator has events:
//!
//! | core says | the shell does |
//! |-----------|----------------|
//! | (fast path) hit in the shell's page table, no LRU move due | pin the frame with atomics, latch it; the hit is folded into the core's counters later |
//! | `FixOutcome::Hit` | latch the frame (fast path: the core's fix becomes a shell pin) |
//! | `FixOutcome::Miss` | read + verify the page into the frame under its exclusive latch, `complete_read` (or `fail_read` and return the error) |
//! | `FixOutcome::WaitRead` | wait on the I/O condvar until the read completed, ask again (same attempt) |
//! | `FixOutcome::SyncReplacementWrite` | write the victim now (doublewrite if on), ask again with `attempt + 1` |
//! | `FixOutcome::NoFrame` | deliver a cleaner wake, wait 1 ms, ask again with `attempt + 1`; give up after a bound of waits with no cleaner write in flight |
//! | `FreeCheck::SyncFlush` | write those pages now, check again |
//! | `FreeCheck::WaitForFlush` | wait for a write completion, check again |
//! | `CleanerAction::Write` | copy each page under a shared latch, WAL, write the batch, `complete_write` |
//! | `CleanerAction::Sleep` | condvar wait with timeout, woken by `take_wake` events / write completions |
//!
//! Files:
//! - [`shell`]: [`BufferPoolShell`]: frames, the core behind a mutex, fix,
//!   page writes, free checks, checkpoints, shutdown, sticky errors;
//! - `hit_path`: hits without the core's mutex: a lock-free page table
//!   (`hit_table`, one writer under the core mutex), per-frame atomic pins
//!   validated against evictions, lazy hit counts;
//! - [`space_store`]: [`SpaceStore`], the [`crate::page_store::PageStore`] of
//!   one space (guards, before-images, allocation, commit = one redo group);
//! - [`page_diff`]: changed byte ranges between a before- and after-image;
//! - [`background`]: the page-cleaner threads and the master thread
//!   (checkpoint and metrics every second);
//! - [`metrics`]: [`MetricsSnapshot`] with InnoDB's metric names;
//! - [`redo_apply`]: applying `PageInit`/`PageWrite` records to a page image
//!   (what recovery needs).
//!
//! # Frame states and latching invariants
//! 1. A frame's bytes are read or written only under its latch
//!    (`parking_lot::RwLock`); the core's mutex is never held across I/O and
//!    never taken while waiting for a latch the caller does not hold yet
//!    except as the leaf of the order *latch → core mutex*.
//! 2. A frame that the core calls replaceable (resident, unfixed, clean, no
//!    I/O) or free has no latch holder: guards release their latch before
//!    they unfix, and writers release theirs before `complete_write`.
//! 3. A page is written from a copy taken under a shared latch, after the
//!    redo is durable up to the copy's page LSN (WAL).
//! 4. Redo append and the matching `note_modification`s happen under one
//!    flush-order mutex, and the checkpoint candidate is read under it, so a
//!    checkpoint never passes a change that is logged but not yet dirty in
//!    the core (InnoDB's `log_flush_order_mutex`).
//! 5. After the first failed page write or fsync the shell is poisoned: it
//!    refuses every later write, commit and checkpoint with the first error.

mod background;
pub(crate) mod hit_path;
mod hit_table;
mod inner;
pub mod latch_wait;
pub mod metrics;
pub mod page_diff;
pub mod redo_apply;
pub mod shell;
pub mod space_store;

use std::path::PathBuf;

pub use inner::{CheckpointFloor, ShellConfig};
pub use latch_wait::{thread_core_mutex_wait_ns, thread_page_latch_wait_ns};
pub use metrics::{MetricsSnapshot, PageIoCounts, ReadSplitTimes};
pub use redo_apply::{apply_redo_record, ApplyOutcome, RedoApplyError};
pub use shell::{BufferPoolShell, ReadAheadWindow};
pub use space_store::{ShellGuard, SpaceStore};

use crate::redo::RedoError;
use crate::storage::EngineStorageError;

/// Errors of the buffer pool shell. Messages are lowercase and name the
/// file and page where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError {
    #[error(transparent)]
    Storage(#[from] EngineStorageError),
    #[error(transparent)]
    Redo(#[from] RedoError),
    #[error(
        "buffer pool too small: no frame came free in {waits} waits of 1 ms with no page write in flight or completed ({frames} frames, all fixed or none the page cleaner can free)"
    )]
    PoolTooSmall { frames: u32, waits: u32 },
    #[error("the buffer pool refuses further writes: an earlier page write or fsync failed ({first_error}); close and re-open the database")]
    Poisoned { first_error: String },
    #[error("space {space_id} is not open in this buffer pool")]
    NoSuchSpace { space_id: u32 },
    #[error("invalid buffer pool configuration: {reason}")]
    Config { reason: String },
    #[error("{what}: no progress after {waited_ms} ms")]
    Stalled { what: &'static str, waited_ms: u64 },
    #[error("cannot start the {name} thread: {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: recovery: {source}")]
    Apply {
        path: PathBuf,
        #[source]
        source: RedoApplyError,
    },
}

impl BufferError {
    /// True if a space could not grow (its maximum, or a full disk); the
    /// pool is not poisoned by it.
    pub fn is_out_of_space(&self) -> bool {
        matches!(self, BufferError::Storage(e) if e.is_out_of_space())
    }
}

impl BufferError {
    /// True if the page on disk was never written (a freshly extended page).
    pub fn is_never_written(&self) -> bool {
        matches!(
            self,
            BufferError::Storage(EngineStorageError::Page(crate::page::PageError::NeverWritten { .. }))
        )
    }
}

pub type Result<T> = std::result::Result<T, BufferError>;
