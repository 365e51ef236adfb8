//! The page-access contract between access methods (the B+tree) and the
//! buffer pool shell.
//!
//! An access method sees pages only through latched guards, and makes
//! changes durable only through [`PageStore::commit`], which turns the
//! changes of a set of exclusive guards into one redo group (a
//! mini-transaction, InnoDB's `mtr_t`): after a crash either all of a
//! group's page changes are recovered or none. Two implementations exist:
//! an in-memory store for tests (no durability) and the engine's buffer
//! pool shell (redo + the core's buffer pool).
//!
//! Invariants every implementation keeps:
//! - a page is latched shared by any number of guards or exclusive by one;
//! - an exclusive guard dropped without `commit` restores the page bytes it
//!   found (no change without redo reaches another reader);
//! - `commit` makes the group's changes visible and logged atomically and
//!   releases the latches; it returns the end LSN of the group (0 for
//!   stores without a log).

use std::ops::Deref;

use flushwise_core::Lsn;

/// Latch mode of a guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latch {
    Shared,
    Exclusive,
}

/// Errors an access method can get from a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("page {page_no} does not exist (the space has {page_count} pages)")]
    NoSuchPage { page_no: u32, page_count: u32 },
    #[error("the store is full: {reason}")]
    Full { reason: String },
    #[error("{0}")]
    Engine(String),
}

/// A latched page; its bytes are the page payload (headers are the store's).
pub trait PageGuard: Deref<Target = [u8]> {
    fn page_no(&self) -> u32;
    fn latch(&self) -> Latch;
    /// Mutable payload; panics on a shared guard (a programming error).
    fn bytes_mut(&mut self) -> &mut [u8];
}

/// Pages of one space (one B+tree index lives in one space).
pub trait PageStore: Send + Sync {
    type Guard<'a>: PageGuard
    where
        Self: 'a;

    /// Usable payload bytes per page.
    fn payload_len(&self) -> usize;

    /// Latches an existing page.
    fn latch(&self, page_no: u32, latch: Latch) -> Result<Self::Guard<'_>, StoreError>;

    /// Allocates a zeroed page, latched exclusive. The allocation itself is
    /// part of the group the guard is committed with.
    fn allocate(&self) -> Result<Self::Guard<'_>, StoreError>;

    /// Marks an exclusively latched page to return to the free pool when
    /// the group it is committed with commits.
    fn free(&self, guard: &mut Self::Guard<'_>) -> Result<(), StoreError>;

    /// Logs and publishes the changes of `guards` as one atomic group and
    /// releases them (shared guards in the list are simply released).
    fn commit(&self, guards: Vec<Self::Guard<'_>>) -> Result<Lsn, StoreError>;
}
