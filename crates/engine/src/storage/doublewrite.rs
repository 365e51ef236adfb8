//! The doublewrite buffer: torn-write protection for in-place page writes.
//!
//! After InnoDB's doublewrite buffer. A page write in place can tear (part
//! old, part new) on power loss, and a torn page cannot be rebuilt from
//! physiological redo. So every batch of pages is first written, as
//! complete sealed images (each names its own space and page number in its
//! header), to slots of a separate file, which is fsynced; only then are the
//! pages written in place, and the tablespaces fsynced. At recovery, any
//! page that fails verification in place is restored from its valid copy.
//!
//! File layout: `slots` pages of the tablespaces' page size, slot `i` at
//! byte `i * page_size`. Slots carry no header of their own: the page
//! header is the slot header.
//!
//! Invariant (the one this module exists for): **a page is never being
//! written in place unless a valid copy of exactly that version is durable
//! in the doublewrite file.** It holds because, under the batch lock,
//! (1) every image is verified before any I/O, (2) the slots are written
//! and fsynced before the first in-place write, and (3) the in-place writes
//! are fsynced before the lock is released, i.e. before any slot can be
//! overwritten by the next batch. Consequences used by [`Doublewrite::recover`]:
//! - a torn slot means its batch never reached the in-place writes, so the
//!   in-place page is intact and the slot is ignored;
//! - a page that fails verification in place was in the last batch, and a
//!   valid copy of the version being written is in some slot; older copies
//!   of the same page may linger in other slots, so the copy with the
//!   highest LSN wins;
//! - a page that verifies in place is left alone, even if a slot holds a
//!   newer copy (its write was lost whole, not torn; redo replays it);
//! - the torn write's copy is never older than the checkpoint recovery
//!   starts from, and it names the same page as the torn page's header: a
//!   damaged page whose newest copy fails either test was not torn by the
//!   crash, and restoring that copy could undo committed changes, so it is
//!   reported instead.
//!
//! Single-page flushes (a user writing its own victim) do not queue behind
//! batches or each other: as in MySQL 5.6 (`buf0dblwr.cc`
//! `buf_dblwr_write_single_page`, slots `srv_doublewrite_batch_size` (120)
//! to 128, `s_reserved` / `in_use`), the last [`SINGLE_PAGE_SLOTS`] slots
//! are reserved one by one by single-page writers, while batches use the
//! slots before them under the batch lock. A single-page writer holds its
//! slot from the copy's write until its in-place write is fsynced (5.6
//! frees it when the in-place write completes, before `fil_flush`; holding
//! it to the fsync keeps the invariant above for every slot), and waits
//! for a slot when all are in use. The invariant holds per slot: a slot is
//! overwritten only after the in-place write of the copy it held is
//! durable.
//!
//! Any I/O error during a batch is returned; the backends are `Checked`, so
//! the failed file refuses further work and recovery at the next open
//! restores a consistent state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use flushwise_core::{Lsn, PageId};
use parking_lot::{Condvar, Mutex};

use super::tablespace::{write_sealed_pages, EngineStorageError, Result, Tablespace};
use super::write_timing::{WritePathClock, WritePathTimes, WritePhase};
use super::{AlignedBuf, StorageBackend};
use crate::page::{self, PageError, PageSize};

/// InnoDB's classic doublewrite buffer holds 128 pages (two 64-page extents).
pub const DEFAULT_SLOTS: u32 = 128;
/// Slots reserved for single-page flushes, at the end of the buffer: MySQL
/// 5.6's `2 * TRX_SYS_DOUBLEWRITE_BLOCK_SIZE - srv_doublewrite_batch_size`
/// = 128 - 120 (`buf0dblwr.cc` `buf_dblwr_write_single_page`). A buffer of
/// fewer than `2 * SINGLE_PAGE_SLOTS` slots has none: single pages then go
/// through the batch lock.
pub const SINGLE_PAGE_SLOTS: u32 = flushwise_core::free_page_path::DOUBLEWRITE_SINGLE_PAGE_SLOTS;

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DoublewriteReport {
    /// Slots read from the doublewrite file.
    pub slots_read: u32,
    /// Slots never written (all zeros).
    pub empty_slots: u32,
    /// Slots whose copy does not verify (the batch was torn before any
    /// in-place write; ignored).
    pub torn_copies: u32,
    /// Slots holding a valid page copy.
    pub valid_copies: u32,
    /// Distinct pages whose in-place version was checked.
    pub pages_checked: u32,
    /// Pages whose space is not among the given tablespaces (skipped).
    pub unknown_space_copies: u32,
    /// Pages restored from their copy, in page-id order.
    pub repaired: Vec<PageId>,
}

impl DoublewriteReport {
    pub fn pages_repaired(&self) -> usize {
        self.repaired.len()
    }
}

pub use super::tablespace::BatchPage;

/// A doublewrite file shared by any number of tablespaces of one page size.
pub struct Doublewrite {
    path: PathBuf,
    backend: Arc<dyn StorageBackend>,
    page_size: PageSize,
    slots: u32,
    /// Slots a batch may use: the first `slots - single_slots`.
    batch_slots: u32,
    /// Slots reserved for single-page flushes, after the batch slots.
    single_slots: u32,
    /// Staging area for one batch; its lock serialises batches (invariant).
    staging: Mutex<AlignedBuf>,
    /// Which single-page slots are taken (`buf_dblwr->in_use`), and where
    /// writers wait for one (`s_event`).
    single_in_use: Mutex<Vec<bool>>,
    single_freed: Condvar,
    /// Time of the batch phases this buffer runs (lock wait, copies'
    /// write and fsync, in-place writes, tablespace fsyncs).
    clock: WritePathClock,
}

impl Doublewrite {
    /// Opens the doublewrite file in `backend` (opened from `path`) with
    /// `slots` page slots, growing and syncing it if it is shorter.
    pub fn open(
        path: impl Into<PathBuf>,
        backend: Arc<dyn StorageBackend>,
        page_size: PageSize,
        slots: u32,
    ) -> Result<Self> {
        assert!(slots > 0, "a doublewrite buffer needs at least one slot");
        let path = path.into();
        let want_len = page_size.offset_of(slots);
        if backend.len()? < want_len {
            backend.set_len(want_len)?;
            backend.sync_data()?;
        }
        let single_slots = if slots >= 2 * SINGLE_PAGE_SLOTS {
            SINGLE_PAGE_SLOTS
        } else {
            0
        };
        let batch_slots = slots - single_slots;
        let staging = AlignedBuf::zeroed(page_size.bytes() * batch_slots as usize);
        Ok(Self {
            path,
            backend,
            page_size,
            slots,
            batch_slots,
            single_slots,
            staging: Mutex::new(staging),
            single_in_use: Mutex::new(vec![false; single_slots as usize]),
            single_freed: Condvar::new(),
            clock: WritePathClock::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Cumulative time of the batch phases run here (see
    /// [`super::write_timing`]).
    pub fn write_times(&self) -> WritePathTimes {
        self.clock.times()
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Slots reserved for single-page flushes ([`SINGLE_PAGE_SLOTS`], or 0
    /// for a small buffer).
    pub fn single_page_slots(&self) -> u32 {
        self.single_slots
    }

    fn check_page_size(&self, ts: &Tablespace) -> Result<()> {
        if ts.page_size() == self.page_size {
            Ok(())
        } else {
            Err(EngineStorageError::PageSizeMismatch {
                path: ts.path().to_path_buf(),
                expected: self.page_size,
                found: ts.page_size(),
            })
        }
    }

    /// Writes sealed pages durably through the doublewrite file, then in
    /// place, then syncs their tablespaces. Batches larger than the slot
    /// count go in slot-sized chunks, each completing before the next.
    pub fn write_batch(&self, pages: &[BatchPage<'_>]) -> Result<()> {
        for chunk in pages.chunks(self.batch_slots as usize) {
            self.write_chunk(chunk)?;
        }
        Ok(())
    }

    /// Writes one sealed page durably through a single-page slot, then in
    /// place, then syncs its tablespace (`buf_dblwr_write_single_page`
    /// followed by `fil_flush(space)`). Waits while every single-page slot
    /// is taken; concurrent with batches and with other single pages. A
    /// buffer without single-page slots writes it as a batch of one.
    pub fn write_single_page(&self, page: BatchPage<'_>) -> Result<()> {
        if self.single_slots == 0 {
            return self.write_chunk(&[page]);
        }
        self.verify(&[page])?;
        let slot = {
            let mut in_use = self.single_in_use.lock();
            loop {
                if let Some(i) = in_use.iter().position(|taken| !taken) {
                    in_use[i] = true;
                    break i;
                }
                self.single_freed.wait(&mut in_use);
            }
        };
        let written = self.write_single_in_slot(page, slot);
        self.single_in_use.lock()[slot] = false;
        self.single_freed.notify_one();
        written
    }

    fn write_single_in_slot(&self, page: BatchPage<'_>, slot: usize) -> Result<()> {
        let (ts, _, buf) = page;
        let at = self.page_size.offset_of(self.batch_slots + slot as u32);
        self.backend.write(at, &buf[..self.page_size.bytes()])?;
        self.backend.sync_data()?;
        write_sealed_pages(&[page])?;
        ts.sync()
    }

    /// Every image and range checked before any I/O.
    fn verify(&self, pages: &[BatchPage<'_>]) -> Result<()> {
        for (ts, page_no, buf) in pages {
            self.check_page_size(ts)?;
            ts.check_sealed(*page_no, buf)?;
            if *page_no >= ts.page_count() {
                return Err(EngineStorageError::PageOutOfRange {
                    path: ts.path().to_path_buf(),
                    page_no: *page_no,
                    page_count: ts.page_count(),
                });
            }
        }
        Ok(())
    }

    fn write_chunk(&self, chunk: &[BatchPage<'_>]) -> Result<()> {
        let size = self.page_size.bytes();
        let t = Instant::now();
        let mut staging = self.staging.lock();
        let t = self.clock.lap(WritePhase::DoublewriteLockWait, t);
        // (1) Verify every image and range before any I/O.
        self.verify(chunk)?;
        // (2) All copies in one sequential write, then fsync.
        for (slot, (_, _, buf)) in chunk.iter().enumerate() {
            staging[slot * size..(slot + 1) * size].copy_from_slice(buf);
        }
        self.backend.write(0, &staging[..chunk.len() * size])?;
        let t = self.clock.lap(WritePhase::DoublewriteWrite, t);
        self.backend.sync_data()?;
        let t = self.clock.lap(WritePhase::DoublewriteSync, t);
        // (3) In place, all in flight at once as 5.6.15 posts them (see
        // `IN_PLACE_WRITE_DEPTH`), then fsync each tablespace once, before
        // the lock (and with it the slots) is released.
        write_sealed_pages(chunk)?;
        let t = self.clock.lap(WritePhase::InPlaceWrite, t);
        let mut synced: Vec<&Tablespace> = Vec::new();
        for (ts, _, _) in chunk {
            if !synced.iter().any(|s| std::ptr::eq(*s, *ts)) {
                ts.sync()?;
                synced.push(ts);
            }
        }
        self.clock.lap(WritePhase::TablespaceSync, t);
        Ok(())
    }

    /// Restores every torn in-place page that has a valid copy in the
    /// doublewrite file. Run before redo recovery, with the LSN of the
    /// checkpoint the redo scan starts from.
    ///
    /// A copy is restored only if it can be the version whose in-place
    /// write was torn (module invariant); otherwise the damaged page is
    /// [`EngineStorageError::UnrepairablePage`], never silently rolled back:
    /// - its LSN is at or past `checkpoint_lsn`: a batch's copies are
    ///   durable before its in-place writes, which complete before the
    ///   checkpoint can pass the pages' changes; so a copy older than the
    ///   checkpoint is from an earlier batch whose page has been written
    ///   (and synced) since, and restoring it would undo committed changes;
    /// - the damaged page in place (unless its header is all zeros: the old
    ///   version was never written) names the copy's own
    ///   space and page number and an LSN not above the copy's: a torn write
    ///   leaves the header of the old or the new version of that page;
    /// - a copy of a page past the end of the file is restored (the file
    ///   grown to hold it) only if it is at or past the checkpoint (the
    ///   extension may not have been durable); an older one means the file
    ///   lost pages it had: [`EngineStorageError::ShorterThanExpected`].
    pub fn recover(&self, tablespaces: &[&Tablespace], checkpoint_lsn: Lsn) -> Result<DoublewriteReport> {
        let _batch = self.staging.lock();
        let mut report = DoublewriteReport::default();
        let mut newest: BTreeMap<PageId, (Lsn, AlignedBuf)> = BTreeMap::new();
        // Every slot the file holds, even beyond `self.slots`: a restart with
        // fewer slots must still see copies written before the crash.
        let slots_in_file = u32::try_from(self.backend.len()? / self.page_size.bytes_u64()).unwrap_or(u32::MAX);
        let mut buf = AlignedBuf::zeroed(self.page_size.bytes());
        for slot in 0..slots_in_file {
            self.backend.read(self.page_size.offset_of(slot), &mut buf)?;
            report.slots_read += 1;
            let id = page::peek_page_id(&buf);
            match page::verify(&buf, id, &self.path) {
                Ok(header) => {
                    report.valid_copies += 1;
                    let keep = match newest.get(&id) {
                        Some((lsn, _)) => header.lsn > *lsn,
                        None => true,
                    };
                    if keep {
                        newest.insert(id, (header.lsn, buf.clone()));
                    }
                }
                Err(PageError::NeverWritten { .. }) => report.empty_slots += 1,
                Err(_) => report.torn_copies += 1,
            }
        }

        let mut touched: Vec<&Tablespace> = Vec::new();
        let mut in_place = AlignedBuf::zeroed(self.page_size.bytes());
        for (id, (copy_lsn, copy)) in &newest {
            let Some(ts) = tablespaces.iter().find(|t| t.space_id() == id.space) else {
                report.unknown_space_copies += 1;
                continue;
            };
            self.check_page_size(ts)?;
            report.pages_checked += 1;
            let unrepairable = |reason: String| EngineStorageError::UnrepairablePage {
                path: ts.path().to_path_buf(),
                page_no: id.page_no,
                reason,
            };
            if id.page_no >= ts.page_count() {
                if *copy_lsn < checkpoint_lsn {
                    return Err(ts.shorter_than_expected(
                        id.page_no,
                        format!(
                            "the doublewrite file (a copy of page {} at lsn {copy_lsn}, written before the checkpoint at lsn {checkpoint_lsn})",
                            id.page_no
                        ),
                    ));
                }
                // The extension that made room for the page was not durable.
                ts.extend(id.page_no + 1 - ts.page_count())?;
            }
            match ts.read_page(id.page_no, &mut in_place) {
                Ok(_) => continue,
                Err(e) if e.is_corrupt_page() => {}
                Err(e) => return Err(e),
            }
            if *copy_lsn < checkpoint_lsn {
                return Err(unrepairable(format!(
                    "its doublewrite copy (lsn {copy_lsn}) is older than the checkpoint at lsn {checkpoint_lsn}, so the page was written since; restoring the copy would undo committed changes"
                )));
            }
            // A header still all zeros is the old version of a page never
            // written before (the rest of the page may hold sectors of the
            // torn new version): it names no page, so it cannot contradict
            // the copy. Found by `flushwise torture` (TPC-C, 10 of 2,500
            // trials before this rule: pages that were zero-filled when the
            // file grew, torn with their header sector dropped).
            if in_place[..page::HEADER_LEN].iter().any(|b| *b != 0) {
                let named = page::peek_page_id(&in_place);
                if named != *id {
                    return Err(unrepairable(format!(
                        "the damaged page in place names page {} of space {}, not a torn write of page {} of space {}; its doublewrite copy (lsn {copy_lsn}) is not restored over it",
                        named.page_no, named.space, id.page_no, id.space
                    )));
                }
                let in_place_lsn = page::peek_lsn(&in_place);
                if in_place_lsn > *copy_lsn {
                    return Err(unrepairable(format!(
                        "its doublewrite copy (lsn {copy_lsn}) is older than the damaged page in place (lsn {in_place_lsn})"
                    )));
                }
            }
            ts.write_sealed(id.page_no, copy)?;
            report.repaired.push(*id);
            if !touched.iter().any(|s| std::ptr::eq(*s, *ts)) {
                touched.push(ts);
            }
        }
        for ts in touched {
            ts.sync()?;
        }
        Ok(report)
    }
}
