//! [`SpaceStore`]: the [`PageStore`] of one space over the buffer pool shell.
//!
//! A guard is a fix (the core's pin) plus the frame's latch; dropping it
//! releases the latch, then the fix. An exclusive guard keeps a
//! before-image of the page taken when it was latched; [`PageStore::commit`]
//! logs the difference as one redo group (a mini-transaction), stamps each
//! changed page with the group's end LSN, tells the core
//! (`note_modification(frame, start, end)`) and releases the guards. An
//! exclusive guard dropped without commit copies its before-image back.
//!
//! # Allocation policy
//! No meta page: every page of the file is a data page. A page is *free*
//! when its type is `Free` or it was never written. The free set lives in
//! memory and is built lazily, on the first `allocate`, by scanning every
//! page of the space through the pool (after recovery has applied the redo,
//! so it sees current images; a page that fails verification counts as in
//! use). `allocate` takes the lowest free page, or grows the file by
//! [`EXTEND_CHUNK_PAGES`] pages. `free` re-initialises the page as `Free` at
//! commit. Both are logged (`PageInit` records, see [`super::redo_apply`]),
//! so recovery rebuilds them; the scan at the next open then finds the same
//! free set. Cost: the first allocation after open reads the whole space.
//!
//! # Redo records of a group
//! Per exclusive guard, in guard order: an allocated page gets
//! `PageInit(BTreeLeaf)`, a freed page `PageInit(Free)` (and nothing else);
//! then one `PageWrite` per changed payload range (coalesced, see
//! [`super::page_diff`]), offsets relative to the page start. Transaction
//! id 0: a mini-transaction is not a transaction.
//!
//! # Bulk-load extents
//! The bulk loader (`crate::db::bulk`) writes pages outside the pool. It
//! gets them from [`SpaceStore::reserve_extent`]: pages appended to the file
//! under the free-set mutex, so they are in no free set, were never fixed
//! and no concurrent allocation can hand them out. What it does not use it
//! gives back with [`SpaceStore::release_unused`]; what a failed load wrote
//! is freed through the pool with [`SpaceStore::latch_to_free`] (a logged
//! `PageInit(Free)` that never reads the old image, which may be torn). The
//! scan that builds the free set also lists the `LoadJournal` pages it sees
//! ([`SpaceStore::load_journals`]): loads that never committed.
//!
//! Invariants: a guard holds exactly one fix and one latch until dropped; a
//! page's in-memory LSN only grows; a page changes in memory only under an
//! exclusive latch and only with its redo appended before the latch is
//! released.

use std::collections::BTreeSet;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use flushwise_core::{FixIntent, FrameId, Lsn, PageId};
use parking_lot::{Mutex, RwLockReadGuard, RwLockWriteGuard};

use super::inner::{guard_acquired, guard_released, guards_held, Inner};
use super::page_diff::changed_ranges;
use super::redo_apply::page_init_payload;
use super::shell::BufferPoolShell;
use super::{BufferError, Result};
use crate::page::{self, PageType, HEADER_LEN};
use crate::page_store::{Latch, PageGuard, PageStore, StoreError};
use crate::redo::log_file::{lsn_to_sn, sn_to_lsn};
use crate::redo::{Record, RedoError};
use crate::storage::{AlignedBuf, Tablespace};
use crate::trace_recorder::{self, TraceRecorder};

/// Pages per read of the free-set scan at open (1 MiB at 16 KiB pages).
const SCAN_RUN_PAGES: u32 = 64;

/// Pages added to the file when no free page is left.
pub const EXTEND_CHUNK_PAGES: u32 = 64;
/// Commits retried after the redo log was full (a checkpoint between tries).
const LOG_FULL_RETRIES: u32 = 200;
const LOG_FULL_WAIT: Duration = Duration::from_millis(5);

impl From<BufferError> for StoreError {
    fn from(e: BufferError) -> Self {
        if e.is_out_of_space() {
            StoreError::Full { reason: e.to_string() }
        } else {
            StoreError::Engine(e.to_string())
        }
    }
}

/// The pages of one space, through the shell.
pub struct SpaceStore {
    shell: Arc<BufferPoolShell>,
    ts: Arc<Tablespace>,
    /// `None` until the first allocation scanned the space.
    free: Mutex<Option<BTreeSet<u32>>>,
    /// `LoadJournal` pages the free-set scan found.
    journals: Mutex<Vec<u32>>,
}

enum Hold<'a> {
    Shared(RwLockReadGuard<'a, AlignedBuf>),
    Exclusive(RwLockWriteGuard<'a, AlignedBuf>),
    Released,
}

/// A latched page of a [`SpaceStore`].
pub struct ShellGuard<'a> {
    store: &'a SpaceStore,
    page_no: u32,
    frame: FrameId,
    hold: Hold<'a>,
    /// Exclusive guards: the image the diff is taken against.
    before: Option<AlignedBuf>,
    /// Allocated guards: what to put back if not committed (`None`: the
    /// frame held no valid image, re-initialise it as a free page).
    restore: Option<AlignedBuf>,
    allocated: bool,
    /// Allocated guards: the type logged in their `PageInit`.
    page_type: PageType,
    freed: bool,
    /// Freed guards of [`SpaceStore::latch_to_free`]: the page does not
    /// join the free set at commit (the caller releases it later).
    withheld: bool,
    committed: bool,
    /// The recorder that saw this guard's fix and the agent it was
    /// recorded for (the unfix goes to the same pair).
    trace: Option<(Arc<TraceRecorder>, u32)>,
    /// Redo bytes of this page in the group it was committed with
    /// (`None`: not modified by a commit).
    redo_bytes: Option<u32>,
}

impl BufferPoolShell {
    /// The [`crate::page_store::PageStore`] of space `space_id`.
    pub fn store(self: &Arc<Self>, space_id: u32) -> Result<SpaceStore> {
        let ts = self.inner.space(space_id)?;
        Ok(SpaceStore::new(Arc::clone(self), Arc::clone(ts)))
    }
}

impl SpaceStore {
    pub(crate) fn new(shell: Arc<BufferPoolShell>, ts: Arc<Tablespace>) -> Self {
        Self {
            shell,
            ts,
            free: Mutex::new(None),
            journals: Mutex::new(Vec::new()),
        }
    }

    pub fn shell(&self) -> &Arc<BufferPoolShell> {
        &self.shell
    }

    pub fn tablespace(&self) -> &Arc<Tablespace> {
        &self.ts
    }

    pub fn space_id(&self) -> u32 {
        self.ts.space_id()
    }

    fn inner(&self) -> &Inner {
        &self.shell.inner
    }

    /// True if the page is in the buffer pool or being read into it (the
    /// change buffer's test, InnoDB's `buf_page_peek`). Takes the core's
    /// mutex briefly.
    pub fn is_resident(&self, page_no: u32) -> bool {
        let page = self.ts.page_id(page_no);
        self.inner().core.lock().pool.lookup(page).is_some()
    }

    /// Free pages known now (scans the space if not yet done).
    pub fn free_pages(&self) -> Result<Vec<u32>> {
        let mut free = self.free.lock();
        self.ensure_scanned(&mut free)?;
        Ok(free.iter().flat_map(|s| s.iter().copied()).collect())
    }

    fn ensure_scanned(&self, free: &mut Option<BTreeSet<u32>>) -> Result<()> {
        if free.is_some() {
            return Ok(());
        }
        // Sequential runs straight from the file (no pool traffic, one I/O
        // per run), except for pages the pool holds: their image there is
        // the newer one (recovery's redo may have changed a page's type).
        // Types change only through the free set, whose mutex the caller
        // holds, so the scan sees a stable picture.
        let page_len = self.ts.page_size().bytes();
        let page_count = self.ts.page_count();
        let mut run = AlignedBuf::zeroed(page_len * SCAN_RUN_PAGES as usize);
        let mut set = BTreeSet::new();
        let mut journals = Vec::new();
        let mut first = 0u32;
        while first < page_count {
            let pages = (page_count - first).min(SCAN_RUN_PAGES);
            self.ts.read_run_unverified(first, &mut run, pages as usize)?;
            for i in 0..pages {
                let page_no = first + i;
                let resident = self.inner().core.lock().pool.lookup(self.ts.page_id(page_no)).is_some();
                let raw = if resident {
                    match self.latch_inner(page_no, Latch::Shared) {
                        Ok(g) => {
                            let Hold::Shared(buf) = &g.hold else {
                                unreachable!("shared latch")
                            };
                            Some(page::peek_page_type_raw(buf))
                        }
                        Err(e) if e.is_never_written() => None,
                        Err(BufferError::Storage(e)) if e.is_corrupt_page() => continue,
                        Err(e) => return Err(e),
                    }
                } else {
                    let image = &run[i as usize * page_len..(i as usize + 1) * page_len];
                    match page::verify(image, self.ts.page_id(page_no), self.ts.path()) {
                        Ok(_) => Some(page::peek_page_type_raw(image)),
                        Err(page::PageError::NeverWritten { .. }) => None,
                        // A corrupt page is neither free nor a journal; the
                        // open's verification or its first reader reports it.
                        Err(_) => continue,
                    }
                };
                match raw {
                    None => {
                        set.insert(page_no);
                    }
                    Some(t) if t == PageType::Free as u16 => {
                        set.insert(page_no);
                    }
                    Some(t) if t == PageType::LoadJournal as u16 => journals.push(page_no),
                    Some(_) => {}
                }
            }
            first += pages;
        }
        *free = Some(set);
        *self.journals.lock() = journals;
        Ok(())
    }

    /// The `LoadJournal` pages the free-set scan found (scans the space if
    /// not yet done): bulk loads that never committed. Call at open, after
    /// redo, before any load starts.
    pub fn load_journals(&self) -> Result<Vec<u32>> {
        let mut free = self.free.lock();
        self.ensure_scanned(&mut free)?;
        Ok(self.journals.lock().clone())
    }

    /// Appends `pages` pages to the file for the bulk loader's exclusive use
    /// and returns the first. They are in no free set and no frame.
    pub fn reserve_extent(&self, pages: u32) -> Result<u32> {
        self.inner().check_poison()?;
        let mut free = self.free.lock();
        // The scan must precede the extension: it would count the new,
        // never-written pages as free.
        self.ensure_scanned(&mut free)?;
        Ok(self.ts.extend(pages)?)
    }

    /// Gives reserved pages the loader never wrote (or pages
    /// [`Self::latch_to_free`] freed) to the free set.
    pub fn release_unused(&self, pages: std::ops::Range<u32>) {
        if let Some(set) = self.free.lock().as_mut() {
            set.extend(pages);
        }
    }

    /// Takes `pages` out of the free set (extents of a crashed load found
    /// at open, until their reclaim is durable: a page allocated before
    /// that would be freed again by a repeated reclaim).
    pub fn withhold(&self, pages: std::ops::Range<u32>) {
        if let Some(set) = self.free.lock().as_mut() {
            for p in pages {
                set.remove(&p);
            }
        }
    }

    /// True if none of `pages` is in a frame (loader pages must not be: a
    /// frame would hold a stale image of what the loader writes).
    pub fn none_resident(&self, pages: std::ops::Range<u32>) -> bool {
        let core = self.inner().core.lock();
        pages
            .into_iter()
            .all(|p| core.pool.lookup(self.ts.page_id(p)).is_none())
    }

    /// An exclusive guard on `page_no` marked to be freed at commit, taken
    /// without reading the page: its image on disk may be torn (an extent
    /// of a bulk load that crashed). Committing logs `PageInit(Free)` but
    /// leaves the page out of the free set ([`Self::release_unused`]).
    pub fn latch_to_free(&self, page_no: u32) -> Result<ShellGuard<'_>> {
        self.before_write()?;
        let inner = self.inner();
        let fixed = inner.fix(&self.ts, page_no, FixIntent::Create)?;
        let mut w = inner.frames[fixed.frame.index()].write();
        if fixed.created {
            page::init(&mut w, self.ts.page_id(page_no), PageType::Free, Lsn::ZERO);
        }
        let before = AlignedBuf::copy_from(&w);
        guard_acquired();
        Ok(ShellGuard {
            store: self,
            page_no,
            frame: fixed.frame,
            hold: Hold::Exclusive(w),
            before: Some(before),
            restore: None,
            allocated: false,
            page_type: PageType::Free,
            freed: true,
            withheld: true,
            committed: false,
            // Recovery's reclaim of a crashed load: not a user page fix.
            trace: None,
            redo_bytes: None,
        })
    }

    /// Allocates a page like [`PageStore::allocate`] but of type
    /// `page_type` (the bulk loader's journal).
    pub fn allocate_typed(&self, page_type: PageType) -> Result<ShellGuard<'_>> {
        self.allocate_inner(page_type)
    }

    fn latch_inner(&self, page_no: u32, latch: Latch) -> Result<ShellGuard<'_>> {
        let inner = self.inner();
        let fixed = inner.fix(&self.ts, page_no, FixIntent::Read)?;
        let frame = &inner.frames[fixed.frame.index()];
        let (hold, before) = match latch {
            Latch::Shared => (Hold::Shared(frame.read()), None),
            Latch::Exclusive => {
                let w = frame.write();
                let before = AlignedBuf::copy_from(&w);
                (Hold::Exclusive(w), Some(before))
            }
        };
        guard_acquired();
        let trace = inner.trace_recorder().map(|t| {
            let agent = trace_recorder::agent();
            t.fix(agent, self.ts.page_id(page_no), latch);
            (t, agent)
        });
        Ok(ShellGuard {
            store: self,
            page_no,
            frame: fixed.frame,
            hold,
            before,
            restore: None,
            allocated: false,
            page_type: PageType::BTreeLeaf,
            freed: false,
            withheld: false,
            committed: false,
            trace,
            redo_bytes: None,
        })
    }

    /// The redo free check a first exclusive latch does (nothing if this
    /// thread holds a latch): for callers that must do it before taking a
    /// mutex of their own, then latch with [`Self::latch_unchecked`].
    pub fn check_redo_space(&self) -> std::result::Result<(), StoreError> {
        Ok(self.before_write()?)
    }

    /// Latches without the redo free check (see [`Self::check_redo_space`]).
    pub fn latch_unchecked(&self, page_no: u32, latch: Latch) -> std::result::Result<ShellGuard<'_>, StoreError> {
        let page_count = self.ts.page_count();
        if page_no >= page_count {
            return Err(StoreError::NoSuchPage { page_no, page_count });
        }
        Ok(self.latch_inner(page_no, latch)?)
    }

    fn before_write(&self) -> Result<()> {
        let inner = self.inner();
        inner.check_poison()?;
        if guards_held() == 0 {
            inner.free_check()?;
        }
        Ok(())
    }

    fn allocate_inner(&self, page_type: PageType) -> Result<ShellGuard<'_>> {
        self.before_write()?;
        let page_no = {
            let mut free = self.free.lock();
            self.ensure_scanned(&mut free)?;
            let set = free.get_or_insert_with(BTreeSet::new);
            if set.is_empty() {
                // Near the space's maximum, grow by the pages left below it
                // instead of a whole chunk (at least one, so the refusal
                // comes from `extend`, which names the maximum).
                let n = EXTEND_CHUNK_PAGES.min(self.ts.pages_below_max()).max(1);
                let first = self.ts.extend(n)?;
                set.extend(first..first + n);
            }
            match set.pop_first() {
                Some(p) => p,
                None => unreachable!("the set was just refilled"),
            }
        };
        let inner = self.inner();
        let fixed = match inner.fix(&self.ts, page_no, FixIntent::Create) {
            Ok(f) => f,
            Err(e) => {
                self.return_free(page_no);
                return Err(e);
            }
        };
        let mut w = inner.frames[fixed.frame.index()].write();
        let restore = (!fixed.created).then(|| AlignedBuf::copy_from(&w));
        let old_lsn = if fixed.created { Lsn::ZERO } else { page::peek_lsn(&w) };
        page::init(&mut w, self.ts.page_id(page_no), page_type, old_lsn);
        let before = AlignedBuf::copy_from(&w);
        guard_acquired();
        let trace = inner.trace_recorder().map(|t| {
            let agent = trace_recorder::agent();
            t.fix(agent, self.ts.page_id(page_no), Latch::Exclusive);
            (t, agent)
        });
        Ok(ShellGuard {
            store: self,
            page_no,
            frame: fixed.frame,
            hold: Hold::Exclusive(w),
            before: Some(before),
            restore,
            allocated: true,
            page_type,
            freed: false,
            withheld: false,
            committed: false,
            trace,
            redo_bytes: None,
        })
    }

    fn return_free(&self, page_no: u32) {
        if let Some(set) = self.free.lock().as_mut() {
            set.insert(page_no);
        }
    }

    fn commit_inner(&self, mut guards: Vec<ShellGuard<'_>>) -> Result<Lsn> {
        let inner = self.inner();
        inner.check_poison()?;
        let mut records: Vec<Record> = Vec::new();
        let mut touched: Vec<usize> = Vec::new();
        // Per guard: the first of its records (for the trace's redo bytes).
        let mut first_record: Vec<usize> = Vec::with_capacity(guards.len());
        for (i, g) in guards.iter_mut().enumerate() {
            // Guards of several spaces may share a group (the change
            // buffer's merge: a data-file leaf and its record in the change
            // buffer's own file), never of another pool: one redo log.
            assert!(
                Arc::ptr_eq(&g.store.shell, &self.shell),
                "commit of a guard of another buffer pool (page {})",
                g.page_no
            );
            let id = g.store.ts.page_id(g.page_no);
            let n_before = records.len();
            first_record.push(n_before);
            let Hold::Exclusive(buf) = &mut g.hold else { continue };
            if g.freed {
                let lsn = page::peek_lsn(buf);
                page::init(buf, id, PageType::Free, lsn);
                records.push(Record::page_init(0, id, page_init_payload(PageType::Free)));
            } else {
                if g.allocated {
                    records.push(Record::page_init(0, id, page_init_payload(g.page_type)));
                }
                let before = g.before.as_ref().map(|b| page::payload(b));
                if let Some(before) = before {
                    let after = page::payload(buf);
                    for r in changed_ranges(before, after) {
                        let offset = (HEADER_LEN + r.start) as u32;
                        records.push(Record::page_write(0, id, offset, &after[r]));
                    }
                }
            }
            if records.len() > n_before {
                touched.push(i);
            }
        }
        if records.is_empty() {
            for g in &mut guards {
                g.committed = true;
            }
            return Ok(inner.redo.current_lsn());
        }
        let group_bytes: u64 = records.iter().map(|r| r.encoded_len() as u64).sum();
        let mut tries = 0;
        let (end, order) = loop {
            let order = inner.flush_order.lock();
            match inner.redo.append(&records) {
                Ok(end) => break (end, order),
                Err(RedoError::LogFull { .. }) if tries < LOG_FULL_RETRIES => {
                    drop(order);
                    tries += 1;
                    inner.checkpoint()?;
                    std::thread::sleep(LOG_FULL_WAIT);
                }
                Err(e) => {
                    if matches!(e, RedoError::Storage(_) | RedoError::Poisoned { .. }) {
                        inner.poison(&e);
                    }
                    return Err(e.into());
                }
            }
        };
        let start = match lsn_to_sn(end) {
            Some(end_sn) => sn_to_lsn(end_sn - group_bytes),
            None => unreachable!("append returns a record position"),
        };
        for &i in &touched {
            if let Hold::Exclusive(buf) = &mut guards[i].hold {
                page::set_lsn(buf, end);
            }
        }
        {
            let mut core = inner.core.lock();
            for &i in &touched {
                core.pool.note_modification(guards[i].frame, start, end);
            }
            inner.after_user_operation(&mut core);
        }
        drop(order);
        for &i in &touched {
            let end_record = first_record.get(i + 1).copied().unwrap_or(records.len());
            let bytes: usize = records[first_record[i]..end_record]
                .iter()
                .map(Record::encoded_len)
                .sum();
            guards[i].redo_bytes = Some(u32::try_from(bytes).unwrap_or(u32::MAX));
        }
        for g in &mut guards {
            g.committed = true;
            if g.freed && !g.withheld {
                g.store.return_free(g.page_no);
            }
        }
        Ok(end)
    }
}

impl PageStore for SpaceStore {
    type Guard<'a> = ShellGuard<'a>;

    fn payload_len(&self) -> usize {
        self.ts.page_size().payload_len()
    }

    fn latch(&self, page_no: u32, latch: Latch) -> std::result::Result<ShellGuard<'_>, StoreError> {
        let page_count = self.ts.page_count();
        if page_no >= page_count {
            return Err(StoreError::NoSuchPage { page_no, page_count });
        }
        if latch == Latch::Exclusive {
            self.before_write()?;
        }
        Ok(self.latch_inner(page_no, latch)?)
    }

    fn allocate(&self) -> std::result::Result<ShellGuard<'_>, StoreError> {
        Ok(self.allocate_inner(PageType::BTreeLeaf)?)
    }

    fn free(&self, guard: &mut ShellGuard<'_>) -> std::result::Result<(), StoreError> {
        assert!(
            matches!(guard.hold, Hold::Exclusive(_)),
            "free of page {} needs an exclusive latch",
            guard.page_no
        );
        guard.freed = true;
        Ok(())
    }

    fn commit(&self, guards: Vec<ShellGuard<'_>>) -> std::result::Result<Lsn, StoreError> {
        Ok(self.commit_inner(guards)?)
    }
}

impl ShellGuard<'_> {
    pub fn page_id(&self) -> PageId {
        self.store.ts.page_id(self.page_no)
    }

    /// The whole page image (header included).
    pub fn page_bytes(&self) -> &[u8] {
        match &self.hold {
            Hold::Shared(b) => b,
            Hold::Exclusive(b) => b,
            Hold::Released => unreachable!("a live guard holds its latch"),
        }
    }

    /// The in-memory page LSN.
    pub fn page_lsn(&self) -> Lsn {
        page::peek_lsn(self.page_bytes())
    }
}

impl Deref for ShellGuard<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        page::payload(self.page_bytes())
    }
}

impl PageGuard for ShellGuard<'_> {
    fn page_no(&self) -> u32 {
        self.page_no
    }

    fn latch(&self) -> Latch {
        match self.hold {
            Hold::Exclusive(_) => Latch::Exclusive,
            _ => Latch::Shared,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.hold {
            Hold::Exclusive(b) => page::payload_mut(b),
            _ => panic!("bytes_mut on a shared guard of page {}", self.page_no),
        }
    }
}

impl Drop for ShellGuard<'_> {
    fn drop(&mut self) {
        if !self.committed {
            if let Hold::Exclusive(buf) = &mut self.hold {
                if self.allocated {
                    match &self.restore {
                        Some(image) => buf.copy_from_slice(image),
                        None => page::init(buf, self.store.ts.page_id(self.page_no), PageType::Free, Lsn::ZERO),
                    }
                } else if let Some(before) = &self.before {
                    buf.copy_from_slice(before);
                }
            }
        }
        if let Some((t, agent)) = self.trace.take() {
            // Before the latch goes: the trace shows holds in latch order.
            let redo_bytes = if self.committed { self.redo_bytes } else { None };
            t.unfix(agent, self.page_id(), PageGuard::latch(self), redo_bytes);
        }
        // Latch first, then the fix (invariant 2 of the module doc).
        self.hold = Hold::Released;
        guard_released();
        self.store.inner().unfix(self.frame);
        if self.allocated && !self.committed {
            self.store.return_free(self.page_no);
        }
    }
}
