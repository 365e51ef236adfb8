//! [`SharedStore`]: one [`SpaceStore`] shared by every B+tree of a space.
//!
//! A [`SpaceStore`] keeps the space's free-page set in memory, so two stores
//! over one space would hand out the same page twice. Every index of the
//! database therefore lives in the one data space through clones of one
//! `Arc<SpaceStore>`; this wrapper only delegates.

use std::sync::Arc;

use crate::buffer::{ShellGuard, SpaceStore};
use crate::page_store::{Latch, PageStore, StoreError};
use flushwise_core::Lsn;

/// A cloneable handle on the data space's store.
#[derive(Clone)]
pub struct SharedStore(pub Arc<SpaceStore>);

impl PageStore for SharedStore {
    type Guard<'a> = ShellGuard<'a>;

    fn payload_len(&self) -> usize {
        self.0.payload_len()
    }

    fn latch(&self, page_no: u32, latch: Latch) -> Result<ShellGuard<'_>, StoreError> {
        self.0.latch(page_no, latch)
    }

    fn allocate(&self) -> Result<ShellGuard<'_>, StoreError> {
        self.0.allocate()
    }

    fn free(&self, guard: &mut ShellGuard<'_>) -> Result<(), StoreError> {
        self.0.free(guard)
    }

    fn commit(&self, guards: Vec<ShellGuard<'_>>) -> Result<Lsn, StoreError> {
        self.0.commit(guards)
    }
}
