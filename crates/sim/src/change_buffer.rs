//! The change buffer's effect on page references (issue #16, paper 004),
//! for workloads that declare which spaces are non-unique secondary
//! indexes (the insert model, `flushwise_tpcc_model::insert`).
//!
//! What it models, after the engine's `db::change_buffer`:
//! - **Buffering.** An exclusive fix of a secondary leaf that is not in the
//!   pool, when the leaf's buffered entries still fit in its free space and
//!   in one change-buffer record (a quarter page) and the buffer is below
//!   `max_pct` % of the pool, becomes an exclusive fix of a change-buffer
//!   page instead (modified, its redo): no read of the leaf.
//! - **Merging.** A later fix of a leaf with buffered entries reads it as
//!   usual; its unfix is then modified (the entries applied, their redo),
//!   followed by an exclusive fix of the change-buffer page (the record's
//!   deletion).
//! - **Change-buffer pages.** The tree's pages are a space of their own
//!   ([`CHANGE_BUFFER_SPACE`]); a leaf's record lives on the page its rank
//!   among all secondary leaves gives within the pages the buffered bytes
//!   fill at 69 % (the tree is keyed by leaf page number). They age, are
//!   written and read back like any page.
//!
//! Not modelled: the engine's background merger (10 to 200 leaves a second
//! read for merging; here leaves are merged only when a user fixes them, so
//! once the buffer is full every insert to a new leaf goes to its leaf),
//! and which leaves' free space is known (all of them are, as after a bulk
//! load or a clean restart on the engine). Deterministic: the decisions
//! depend only on the pool's state and the records.

use std::collections::HashMap;

use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceEvent, TraceRecord};
use serde::Serialize;

/// The change buffer's own space in the simulation.
pub const CHANGE_BUFFER_SPACE: u32 = 100;
/// A buffered entry in its record (lengths, key of ~14 bytes).
const RECORD_ENTRY_BYTES: u64 = 18;
/// An entry's footprint in its leaf, slot included.
const LEAF_ENTRY_BYTES: u64 = 20;
/// Redo of buffering one entry (the record's change).
const BUFFER_REDO_BYTES: u32 = 40;
/// Redo of deleting a merged record.
const DELETE_REDO_BYTES: u32 = 20;

/// What the buffer did, over the run (counters) and at the end (gauges).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ChangeBufferSimStats {
    pub buffered_inserts: u64,
    pub buffer_refused: u64,
    pub merged_entries: u64,
    pub merges: u64,
    pub pending_pages: u64,
    pub pending_bytes: u64,
}

/// The model's state.
pub struct SimChangeBuffer {
    page_size_bytes: u64,
    max_bytes: u64,
    /// Secondary spaces and the leaf slots each may use (for the record's
    /// page: its rank among all leaves).
    spaces: Vec<u32>,
    slots_per_space: u64,
    /// Buffered entries per leaf.
    pending: HashMap<PageId, u32>,
    pending_entries: u64,
    stats: ChangeBufferSimStats,
}

impl SimChangeBuffer {
    pub fn new(page_size_bytes: u32, pool_bytes: u64, max_pct: u8, spaces: Vec<u32>, slots_per_space: u64) -> Self {
        Self {
            page_size_bytes: u64::from(page_size_bytes),
            max_bytes: pool_bytes / 100 * u64::from(max_pct),
            spaces,
            slots_per_space: slots_per_space.max(1),
            pending: HashMap::new(),
            pending_entries: 0,
            stats: ChangeBufferSimStats::default(),
        }
    }

    pub fn stats(&self) -> ChangeBufferSimStats {
        ChangeBufferSimStats {
            pending_pages: self.pending.len() as u64,
            pending_bytes: self.pending_entries * LEAF_ENTRY_BYTES,
            ..self.stats
        }
    }

    /// Entries a leaf's record may hold (a quarter page, as the engine's
    /// B+tree entry limit).
    fn record_cap(&self) -> u64 {
        (self.page_size_bytes / 4 - 4) / RECORD_ENTRY_BYTES
    }

    /// Pages the buffered records fill now (at 69 %, at least one).
    fn pages_now(&self) -> u64 {
        (self.pending_entries * RECORD_ENTRY_BYTES * 100)
            .div_ceil(self.page_size_bytes * 69)
            .max(1)
    }

    fn page_of(&self, leaf: PageId) -> PageId {
        let index = self.spaces.iter().position(|&s| s == leaf.space).unwrap_or(0) as u64;
        let rank = index * self.slots_per_space + u64::from(leaf.page_no) % self.slots_per_space;
        let all = self.spaces.len() as u64 * self.slots_per_space;
        PageId::new(CHANGE_BUFFER_SPACE, (rank * self.pages_now() / all) as u32)
    }

    /// The matching unfix of the fix at `pos`.
    fn unfix_of(records: &[TraceRecord], pos: usize, page: PageId) -> Option<usize> {
        records[pos + 1..]
            .iter()
            .position(|r| matches!(r.event, TraceEvent::Unfix { page: p, .. } if p == page))
            .map(|i| pos + 1 + i)
    }

    /// Rewrites the agent's records at `pos` (a fix of `page`) as the
    /// change buffer would: buffer the insert, or merge the leaf's entries.
    /// `resident`: the page is in the pool or being read; `leaf_free_bytes`:
    /// a leaf's free space now (from the workload). Returns true if the
    /// records changed.
    pub fn on_fix(
        &mut self,
        records: &mut Vec<TraceRecord>,
        pos: usize,
        page: PageId,
        latch: LatchMode,
        resident: bool,
        leaf_free_bytes: u64,
    ) -> bool {
        if !self.spaces.contains(&page.space) {
            return false;
        }
        let Some(unfix) = Self::unfix_of(records, pos, page) else {
            return false;
        };
        let agent = records[pos].agent;
        // As the engine decides: an insert into a leaf not in the pool is
        // buffered if it fits; anything else latches the leaf, which merges
        // what was buffered for it.
        let inserting =
            latch == LatchMode::Exclusive && matches!(records[unfix].event, TraceEvent::Unfix { modified: true, .. });
        if inserting && !resident {
            let n = u64::from(self.pending.get(&page).copied().unwrap_or(0));
            let fits = (n + 1) * LEAF_ENTRY_BYTES <= leaf_free_bytes
                && n < self.record_cap()
                && (self.pending_entries + 1) * LEAF_ENTRY_BYTES <= self.max_bytes;
            if fits {
                self.pending.insert(page, n as u32 + 1);
                self.pending_entries += 1;
                self.stats.buffered_inserts += 1;
                let cb_page = self.page_of(page);
                records[pos] = TraceRecord::fix(agent, cb_page, LatchMode::Exclusive);
                records[unfix] = TraceRecord::unfix(agent, cb_page, LatchMode::Exclusive, true, BUFFER_REDO_BYTES);
                return true;
            }
            self.stats.buffer_refused += 1;
        }
        let Some(n) = self.pending.remove(&page) else {
            return false;
        };
        // Merge: the leaf is read as usual, changed by its entries, and the
        // record deleted.
        self.pending_entries -= u64::from(n);
        self.stats.merges += 1;
        self.stats.merged_entries += u64::from(n);
        let cb_page = self.page_of(page);
        if let TraceEvent::Unfix {
            latch: l, redo_bytes, ..
        } = records[unfix].event
        {
            let redo = redo_bytes.saturating_add(n * LEAF_ENTRY_BYTES as u32);
            records[unfix] = TraceRecord::unfix(agent, page, l, true, redo);
        }
        records.insert(unfix + 1, TraceRecord::fix(agent, cb_page, LatchMode::Exclusive));
        records.insert(
            unfix + 2,
            TraceRecord::unfix(agent, cb_page, LatchMode::Exclusive, true, DELETE_REDO_BYTES),
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(agent: u32, page: PageId) -> Vec<TraceRecord> {
        vec![
            TraceRecord::fix(agent, page, LatchMode::Exclusive),
            TraceRecord::unfix(agent, page, LatchMode::Exclusive, true, 60),
        ]
    }

    #[test]
    fn an_insert_into_a_leaf_not_in_the_pool_is_buffered_then_merged_on_the_next_fix() {
        let mut cb = SimChangeBuffer::new(16_384, 32 << 20, 25, vec![2, 3], 10_000);
        let leaf = PageId::new(2, 77);
        let mut r = insert(0, leaf);
        assert!(cb.on_fix(&mut r, 0, leaf, LatchMode::Exclusive, false, 1_000));
        assert!(matches!(r[0].event, TraceEvent::Fix { page, .. } if page.space == CHANGE_BUFFER_SPACE));
        assert_eq!(cb.stats().pending_pages, 1);
        // Resident: no buffering.
        let mut r = insert(0, leaf);
        let other = PageId::new(3, 5);
        let mut s = insert(0, other);
        assert!(!cb.on_fix(&mut s, 0, other, LatchMode::Exclusive, true, 1_000));
        // The next fix of the leaf merges: its unfix modified, then the record's page.
        assert!(cb.on_fix(&mut r, 0, leaf, LatchMode::Exclusive, true, 1_000));
        assert_eq!(r.len(), 4);
        assert!(
            matches!(r[1].event, TraceEvent::Unfix { page, modified: true, redo_bytes, .. } if page == leaf && redo_bytes == 80)
        );
        assert!(matches!(r[2].event, TraceEvent::Fix { page, .. } if page.space == CHANGE_BUFFER_SPACE));
        let s = cb.stats();
        assert_eq!(
            (s.buffered_inserts, s.merges, s.merged_entries, s.pending_pages),
            (1, 1, 1, 0)
        );
    }

    #[test]
    fn a_leaf_takes_no_more_than_its_free_space_and_the_buffer_no_more_than_its_share() {
        let mut cb = SimChangeBuffer::new(16_384, 32 << 20, 25, vec![2], 10_000);
        let leaf = PageId::new(2, 1);
        for _ in 0..5 {
            let mut r = insert(0, leaf);
            cb.on_fix(&mut r, 0, leaf, LatchMode::Exclusive, false, 100);
        }
        assert_eq!(cb.stats().buffered_inserts, 5);
        // The sixth does not fit: it goes to the leaf, which merges the five.
        let mut r = insert(0, leaf);
        assert!(cb.on_fix(&mut r, 0, leaf, LatchMode::Exclusive, false, 100));
        assert!(
            matches!(r[0].event, TraceEvent::Fix { page, .. } if page == leaf),
            "the leaf is read"
        );
        let s = cb.stats();
        assert_eq!(
            (s.buffered_inserts, s.buffer_refused, s.merged_entries),
            (5, 1, 5),
            "100 free bytes hold five 20-byte entries"
        );
        let mut tiny = SimChangeBuffer::new(16_384, 1_000, 1, vec![2], 10_000);
        let mut r = insert(0, leaf);
        assert!(
            !tiny.on_fix(&mut r, 0, leaf, LatchMode::Exclusive, false, 10_000),
            "1 % of 1,000 bytes holds none"
        );
    }
}
