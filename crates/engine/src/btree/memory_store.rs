//! An in-memory [`PageStore`]: pages in RAM behind per-page reader/writer
//! latches, with the contract's undo and free-list semantics but no log.
//!
//! Used by the B+tree tests and by anyone wanting an in-memory tree.
//!
//! Design: the store has a fixed page capacity chosen at construction, and
//! every slot owns its latch from the start (`Box<[RwLock<Vec<u8>>]>`, the
//! bytes allocated on first use). Because the slot array never moves, a guard
//! can simply borrow the latch for the store's lifetime, which satisfies the
//! `Guard<'a>` GAT without `unsafe`, `Arc` guards or a growable table.
//!
//! Invariants:
//! - pages `0..page_count` exist; a page is either reachable by its owner or on
//!   the free list, never both once a group has committed;
//! - an exclusive guard dropped without [`PageStore::commit`] puts back the
//!   bytes it found (only if `bytes_mut` was called: the before-image is taken
//!   lazily) and, if it came from [`PageStore::allocate`], returns the page to
//!   the free list (the allocation is part of the group);
//! - [`PageStore::free`] takes effect only when the guard's group commits;
//! - `commit` returns `Lsn(n)` where `n` counts committed groups (there is no
//!   log; the number only orders groups).
//!
//! Snapshots ([`MemoryStore::snapshot`], [`MemoryStore::restore`]) model a
//! clean close and reopen: page images and the free list survive, latches and
//! in-flight groups do not. Take them only while no group is in flight.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use flushwise_core::Lsn;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::page_store::{Latch, PageGuard, PageStore, StoreError};

/// Default page capacity of [`MemoryStore::new`].
pub const DEFAULT_CAPACITY_PAGES: u32 = 1 << 16;

/// `fail_after` value meaning "never inject a failure".
const NEVER: u64 = u64::MAX;

/// Pages of one space held in memory.
pub struct MemoryStore {
    payload_len: usize,
    pages: Box<[RwLock<Vec<u8>>]>,
    alloc: Mutex<AllocState>,
    groups_committed: AtomicU64,
    /// Allocations still allowed before `allocate` fails (fault injection).
    allocations_left: AtomicU64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct AllocState {
    page_count: u32,
    free: Vec<u32>,
}

/// Page images and free list of a [`MemoryStore`], as if written at a clean
/// close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySnapshot {
    payload_len: usize,
    capacity_pages: u32,
    pages: Vec<Vec<u8>>,
    free: Vec<u32>,
    groups_committed: u64,
}

impl MemorySnapshot {
    /// Pages in the snapshot (free ones included).
    pub fn page_count(&self) -> u32 {
        self.pages.len() as u32
    }

    /// The image of page `page_no`.
    pub fn page(&self, page_no: u32) -> Option<&[u8]> {
        self.pages.get(page_no as usize).map(Vec::as_slice)
    }
}

impl MemoryStore {
    /// A store of [`DEFAULT_CAPACITY_PAGES`] pages of `payload_len` bytes.
    pub fn new(payload_len: usize) -> Self {
        Self::with_capacity(payload_len, DEFAULT_CAPACITY_PAGES)
    }

    /// A store that can hold at most `capacity_pages` pages.
    pub fn with_capacity(payload_len: usize, capacity_pages: u32) -> Self {
        let pages = (0..capacity_pages).map(|_| RwLock::new(Vec::new())).collect();
        Self {
            payload_len,
            pages,
            alloc: Mutex::new(AllocState::default()),
            groups_committed: AtomicU64::new(0),
            allocations_left: AtomicU64::new(NEVER),
        }
    }

    /// Pages ever allocated (including free ones).
    pub fn page_count(&self) -> u32 {
        self.alloc.lock().page_count
    }

    /// Pages allocated and not free: what the tree on this store should reach.
    pub fn pages_in_use(&self) -> u32 {
        let alloc = self.alloc.lock();
        alloc.page_count - alloc.free.len() as u32
    }

    /// Fault injection: the next `n` allocations succeed, the following ones
    /// fail with [`StoreError::Full`]; `None` removes the limit.
    pub fn fail_allocations_after(&self, n: Option<u64>) {
        self.allocations_left.store(n.unwrap_or(NEVER), Ordering::SeqCst);
    }

    /// Copies every page image and the free list. Call while quiescent: pages
    /// are latched shared one at a time, so a concurrent group could be seen
    /// half applied.
    pub fn snapshot(&self) -> MemorySnapshot {
        let alloc = self.alloc.lock().clone();
        let pages = (0..alloc.page_count as usize)
            .map(|p| self.pages[p].read().clone())
            .collect();
        MemorySnapshot {
            payload_len: self.payload_len,
            capacity_pages: self.pages.len() as u32,
            pages,
            free: alloc.free,
            groups_committed: self.groups_committed.load(Ordering::SeqCst),
        }
    }

    /// A fresh store holding the pages of `snapshot` (the "reopen").
    pub fn restore(snapshot: &MemorySnapshot) -> Self {
        let store = Self::with_capacity(snapshot.payload_len, snapshot.capacity_pages);
        for (slot, image) in store.pages.iter().zip(&snapshot.pages) {
            *slot.write() = image.clone();
        }
        *store.alloc.lock() = AllocState {
            page_count: snapshot.pages.len() as u32,
            free: snapshot.free.clone(),
        };
        store
            .groups_committed
            .store(snapshot.groups_committed, Ordering::SeqCst);
        store
    }

    fn check_page_no(&self, page_no: u32) -> Result<(), StoreError> {
        let page_count = self.page_count();
        if page_no >= page_count {
            return Err(StoreError::NoSuchPage { page_no, page_count });
        }
        Ok(())
    }

    fn take_allocation_budget(&self) -> Result<(), StoreError> {
        let taken = self
            .allocations_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| match left {
                NEVER => Some(NEVER),
                0 => None,
                n => Some(n - 1),
            });
        match taken {
            Ok(_) => Ok(()),
            Err(_) => Err(StoreError::Full {
                reason: "injected allocation failure".to_string(),
            }),
        }
    }

    fn release_page(&self, page_no: u32) {
        self.alloc.lock().free.push(page_no);
    }
}

/// A latched page of a [`MemoryStore`].
pub struct MemoryGuard<'a> {
    store: &'a MemoryStore,
    page_no: u32,
    state: GuardState<'a>,
}

enum GuardState<'a> {
    Shared(RwLockReadGuard<'a, Vec<u8>>),
    Exclusive(Exclusive<'a>),
}

struct Exclusive<'a> {
    bytes: RwLockWriteGuard<'a, Vec<u8>>,
    /// Bytes found at latch time, taken on the first `bytes_mut`.
    before: Option<Vec<u8>>,
    allocated: bool,
    freed: bool,
    committed: bool,
}

impl Deref for MemoryGuard<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.state {
            GuardState::Shared(bytes) => bytes,
            GuardState::Exclusive(x) => &x.bytes,
        }
    }
}

impl PageGuard for MemoryGuard<'_> {
    fn page_no(&self) -> u32 {
        self.page_no
    }

    fn latch(&self) -> Latch {
        match self.state {
            GuardState::Shared(_) => Latch::Shared,
            GuardState::Exclusive(_) => Latch::Exclusive,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.state {
            GuardState::Shared(_) => panic!("bytes_mut on a shared guard of page {}", self.page_no),
            GuardState::Exclusive(x) => {
                if x.before.is_none() && !x.allocated {
                    x.before = Some(x.bytes.clone());
                }
                &mut x.bytes
            }
        }
    }
}

impl Drop for MemoryGuard<'_> {
    fn drop(&mut self) {
        let GuardState::Exclusive(x) = &mut self.state else {
            return;
        };
        if x.committed {
            return;
        }
        if x.allocated {
            x.bytes.fill(0);
            self.store.release_page(self.page_no);
        } else if let Some(before) = x.before.take() {
            x.bytes.copy_from_slice(&before);
        }
    }
}

impl PageStore for MemoryStore {
    type Guard<'a> = MemoryGuard<'a>;

    fn payload_len(&self) -> usize {
        self.payload_len
    }

    fn latch(&self, page_no: u32, latch: Latch) -> Result<MemoryGuard<'_>, StoreError> {
        self.check_page_no(page_no)?;
        let slot = &self.pages[page_no as usize];
        let state = match latch {
            Latch::Shared => GuardState::Shared(slot.read()),
            Latch::Exclusive => GuardState::Exclusive(Exclusive {
                bytes: slot.write(),
                before: None,
                allocated: false,
                freed: false,
                committed: false,
            }),
        };
        Ok(MemoryGuard {
            store: self,
            page_no,
            state,
        })
    }

    fn allocate(&self) -> Result<MemoryGuard<'_>, StoreError> {
        self.take_allocation_budget()?;
        let page_no = {
            let mut alloc = self.alloc.lock();
            match alloc.free.pop() {
                Some(page_no) => page_no,
                None if (alloc.page_count as usize) < self.pages.len() => {
                    alloc.page_count += 1;
                    alloc.page_count - 1
                }
                None => {
                    return Err(StoreError::Full {
                        reason: format!("all {} in-memory pages are in use", self.pages.len()),
                    })
                }
            }
        };
        // A stale reader may still hold a shared latch on a page freed under
        // it; waiting for it here is fine (it holds no other latch).
        let mut bytes = self.pages[page_no as usize].write();
        bytes.clear();
        bytes.resize(self.payload_len, 0);
        let state = GuardState::Exclusive(Exclusive {
            bytes,
            before: None,
            allocated: true,
            freed: false,
            committed: false,
        });
        Ok(MemoryGuard {
            store: self,
            page_no,
            state,
        })
    }

    fn free(&self, guard: &mut MemoryGuard<'_>) -> Result<(), StoreError> {
        match &mut guard.state {
            GuardState::Exclusive(x) => {
                x.freed = true;
                Ok(())
            }
            GuardState::Shared(_) => Err(StoreError::Engine(format!(
                "free of page {} needs an exclusive latch",
                guard.page_no
            ))),
        }
    }

    fn commit(&self, mut guards: Vec<MemoryGuard<'_>>) -> Result<Lsn, StoreError> {
        for guard in &mut guards {
            if let GuardState::Exclusive(x) = &mut guard.state {
                x.committed = true;
                if x.freed {
                    x.bytes.fill(0);
                    self.release_page(guard.page_no);
                }
            }
        }
        let lsn = self.groups_committed.fetch_add(1, Ordering::SeqCst) + 1;
        drop(guards);
        Ok(Lsn(lsn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_guard_dropped_without_commit_restores_before_image() {
        let store = MemoryStore::with_capacity(64, 8);
        let mut page = store.allocate().unwrap();
        page.bytes_mut()[0] = 7;
        store.commit(vec![page]).unwrap();
        {
            let mut page = store.latch(0, Latch::Exclusive).unwrap();
            page.bytes_mut()[0] = 9;
        }
        assert_eq!(store.latch(0, Latch::Shared).unwrap()[0], 7);
    }

    #[test]
    fn uncommitted_allocation_returns_to_free_list_and_free_waits_for_commit() {
        let store = MemoryStore::with_capacity(64, 8);
        drop(store.allocate().unwrap());
        assert_eq!(store.pages_in_use(), 0);
        let page = store.allocate().unwrap();
        assert_eq!(page.page_no(), 0);
        store.commit(vec![page]).unwrap();
        let mut page = store.latch(0, Latch::Exclusive).unwrap();
        store.free(&mut page).unwrap();
        drop(page);
        assert_eq!(store.pages_in_use(), 1);
        let mut page = store.latch(0, Latch::Exclusive).unwrap();
        store.free(&mut page).unwrap();
        store.commit(vec![page]).unwrap();
        assert_eq!(store.pages_in_use(), 0);
    }

    #[test]
    fn injected_allocation_failure_and_capacity_limit() {
        let store = MemoryStore::with_capacity(64, 2);
        store.fail_allocations_after(Some(1));
        let a = store.allocate().unwrap();
        assert!(matches!(store.allocate(), Err(StoreError::Full { .. })));
        store.fail_allocations_after(None);
        let b = store.allocate().unwrap();
        assert!(matches!(store.allocate(), Err(StoreError::Full { .. })));
        store.commit(vec![a, b]).unwrap();
        assert_eq!(store.snapshot(), MemoryStore::restore(&store.snapshot()).snapshot());
    }
}
