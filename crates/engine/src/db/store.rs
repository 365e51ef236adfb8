//! [`SharedStore`]: one [`SpaceStore`] shared by every B+tree of a space.
//!
//! A [`SpaceStore`] keeps the space's free-page set in memory, so two stores
//! over one space would hand out the same page twice. Every index of the
//! database therefore lives in the one data space through clones of one
//! `Arc<SpaceStore>`. A clone has a role:
//! - `Plain` (catalog, unique indexes): delegates;
//! - `ChangeBufferTree`: delegates, but allocates pages typed
//!   [`PageType::ChangeBuffer`] (so I/O is counted by page type);
//! - `Secondary` (non-unique indexes): every latch first merges the
//!   change buffer's entries for the page, if it has any, and tells the
//!   change buffer the free space and entry count of every leaf it latches or commits
//!   ([`super::change_buffer`]). Until the change buffer is attached (at
//!   open, after the catalog) it delegates.

use std::sync::{Arc, OnceLock};

use crate::buffer::{ShellGuard, SpaceStore};
use crate::page::PageType;
use crate::page_store::{Latch, PageGuard, PageStore, StoreError};
use flushwise_core::Lsn;

use super::change_buffer::ChangeBuffer;
use super::leaf_space::LeafSpace;

/// What the secondary indexes' stores share: the leaves' free space
/// (always kept) and the change buffer once it is open.
#[derive(Default)]
pub(crate) struct SecondaryHook {
    pub leaves: Arc<LeafSpace>,
    pub change_buffer: OnceLock<Arc<ChangeBuffer>>,
}

#[derive(Clone)]
pub(crate) enum Role {
    Plain,
    ChangeBufferTree,
    Secondary(Arc<SecondaryHook>),
}

/// A cloneable handle on the data space's store.
#[derive(Clone)]
pub struct SharedStore(pub Arc<SpaceStore>, pub(crate) Role);

impl SharedStore {
    pub fn new(space: Arc<SpaceStore>) -> Self {
        Self(space, Role::Plain)
    }

    pub(crate) fn with_role(&self, role: Role) -> Self {
        Self(Arc::clone(&self.0), role)
    }

    fn hook(&self) -> Option<&SecondaryHook> {
        match &self.1 {
            Role::Secondary(hook) => Some(hook),
            _ => None,
        }
    }
}

impl PageStore for SharedStore {
    type Guard<'a> = ShellGuard<'a>;

    fn payload_len(&self) -> usize {
        self.0.payload_len()
    }

    fn latch(&self, page_no: u32, latch: Latch) -> Result<ShellGuard<'_>, StoreError> {
        let Some(hook) = self.hook() else {
            return self.0.latch(page_no, latch);
        };
        // A merge takes the page's change-buffer shard, then the page: never
        // while this thread holds the page (the shard may be held by a
        // thread waiting for it).
        for _ in 0..super::change_buffer::MERGE_ROUNDS_MAX {
            let guard = self.0.latch(page_no, latch)?;
            let cb = match hook.change_buffer.get() {
                Some(cb) if hook.leaves.is_pending(page_no) => cb,
                _ => {
                    hook.leaves.note(page_no, ChangeBuffer::leaf_fill(&guard));
                    return Ok(guard);
                }
            };
            drop(guard);
            cb.merge(&self.0, page_no, false)?;
        }
        Err(StoreError::Engine(format!(
            "page {page_no}: the change buffer kept finding entries to merge"
        )))
    }

    fn allocate(&self) -> Result<ShellGuard<'_>, StoreError> {
        match self.1 {
            Role::ChangeBufferTree => Ok(self.0.allocate_typed(PageType::ChangeBuffer)?),
            _ => self.0.allocate(),
        }
    }

    fn free(&self, guard: &mut ShellGuard<'_>) -> Result<(), StoreError> {
        self.0.free(guard)
    }

    fn commit(&self, guards: Vec<ShellGuard<'_>>) -> Result<Lsn, StoreError> {
        let Some(hook) = self.hook() else {
            return self.0.commit(guards);
        };
        // Free space after the change; told only once it is committed (a
        // failed commit restores the pages).
        let leaves: Vec<_> = guards
            .iter()
            .filter(|g| g.latch() == Latch::Exclusive)
            .map(|g| (g.page_no(), ChangeBuffer::leaf_fill(g)))
            .collect();
        let lsn = self.0.commit(guards)?;
        for (page_no, fill) in leaves {
            hook.leaves.note(page_no, fill);
        }
        Ok(lsn)
    }
}
