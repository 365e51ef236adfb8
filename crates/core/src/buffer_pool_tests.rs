//! Scenario tests and a property test of the buffer pool against a simple
//! reference model of its three lists.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use crate::buffer_pool::{
    BufferPool, BufferPoolConfig, CheckpointReason, FixIntent, FixOutcome, FreeCheck, LruMode, WriteKind,
};
use crate::free_page_path::FreePageRule;
use crate::redo_space::RedoConfig;
use crate::types::{FrameId, Lsn, PageId};

fn pool(frames: u32) -> BufferPool {
    BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap()
}

fn page(n: u32) -> PageId {
    PageId::new(1, n)
}

/// Reads `n` into the pool and unfixes it; returns its frame.
fn load(p: &mut BufferPool, n: u32, now: u64) -> FrameId {
    match p.fix(page(n), FixIntent::Read, 0, now) {
        FixOutcome::Miss(f) => {
            p.complete_read(f);
            p.unfix(f);
            f
        }
        FixOutcome::Hit(f) => {
            p.unfix(f);
            f
        }
        other => panic!("load of {n}: {other:?}"),
    }
}

/// Modifies resident page `n` with redo `lsn..lsn+100`.
fn dirty(p: &mut BufferPool, n: u32, lsn: u64) -> FrameId {
    let FixOutcome::Hit(f) = p.fix(page(n), FixIntent::Read, 0, 0) else {
        panic!("page {n} not resident")
    };
    p.note_modification(f, Lsn(lsn), Lsn(lsn + 100));
    p.unfix(f);
    f
}

#[test]
fn miss_takes_free_frame_then_hit() {
    let mut p = pool(16);
    let FixOutcome::Miss(f) = p.fix(page(7), FixIntent::Read, 0, 0) else {
        panic!()
    };
    assert_eq!(p.fix(page(7), FixIntent::Read, 0, 0), FixOutcome::WaitRead(f));
    p.complete_read(f);
    assert_eq!(p.fix(page(7), FixIntent::Read, 0, 0), FixOutcome::Hit(f));
    p.unfix(f);
    p.unfix(f);
    assert_eq!(p.free_len(), 15);
    assert_eq!(p.counters().reads, 1);
    assert_eq!(p.counters().requests, 2, "the WaitRead is not a served request");
    p.check_invariants();
}

#[test]
fn no_free_frame_evicts_clean_tail_page_counting_np_clean() {
    let mut p = pool(16);
    for n in 0..16 {
        load(&mut p, n, 0);
    }
    assert_eq!(p.free_len(), 0);
    // The two tail pages are dirty; the third from the tail is clean.
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().collect();
    let lsn = 10;
    for (i, pg) in tail.iter().take(2).enumerate() {
        dirty(&mut p, pg.page_no, lsn + 200 * i as u64);
    }
    let FixOutcome::Miss(_) = p.fix(page(100), FixIntent::Read, 0, 0) else {
        panic!()
    };
    assert!(p.lookup(tail[2]).is_none(), "third-from-tail clean page evicted");
    assert_eq!(p.counters().clean_victim_scanned, 3);
    assert_eq!(p.counters().sync_replacement_writes, 0);
    p.check_invariants();
}

#[test]
fn all_dirty_tail_forces_sync_replacement_write_counting_np_dirty() {
    let mut p = pool(16);
    for n in 0..16 {
        load(&mut p, n, 0);
    }
    for n in 0..16 {
        dirty(&mut p, n, 10 + 200 * u64::from(n));
    }
    let outcome = p.fix(page(100), FixIntent::Read, 0, 0);
    let FixOutcome::SyncReplacementWrite(order) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(order.kind, WriteKind::SyncReplacement);
    assert_eq!(p.counters().sync_replacement_writes, 1);
    assert_eq!(p.counters().wait_free, 1);
    assert_eq!(
        p.counters().dirty_victim_scanned,
        1,
        "the tail page itself was flushable"
    );
    // The clean scan of the first attempt looked at the threshold's worth.
    assert_eq!(
        p.counters().clean_victim_scanned,
        u64::from(p.config().lru_search_scan_threshold)
    );
    p.check_invariants();
    assert!(
        p.complete_write(order.frame),
        "replacement victim is evicted once written"
    );
    assert!(p.lookup(order.page).is_none());
    let FixOutcome::Miss(f) = p.fix(page(100), FixIntent::Read, 1, 0) else {
        panic!()
    };
    assert_eq!(f, order.frame);
    p.check_invariants();
}

/// 5.6.15 `buf_LRU_get_free_block`: a first scan that finds nothing turns
/// `try_LRU_scan` off, and until a batch turns it on again every user that
/// finds the free list empty goes straight to a single-page flush, even
/// past a clean page at the tail. Both are counted.
#[test]
fn a_failed_scan_makes_later_users_skip_the_scan_until_a_batch() {
    let mut p = pool(16);
    for n in 0..16 {
        load(&mut p, n, 0);
    }
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().collect();
    // The tail page is clean but fixed (not replaceable); the rest dirty.
    let FixOutcome::Hit(held) = p.fix(tail[0], FixIntent::Read, 0, 0) else {
        panic!("tail page not resident")
    };
    for (i, pg) in tail.iter().enumerate().skip(1) {
        dirty(&mut p, pg.page_no, 10 + 200 * i as u64);
    }
    let FixOutcome::SyncReplacementWrite(first) = p.fix(page(100), FixIntent::Read, 0, 0) else {
        panic!("first user should write a victim")
    };
    assert_eq!(p.counters().lru_scans_failed, 1);
    assert_eq!(p.counters().lru_scans_skipped, 0);
    // The tail page becomes replaceable; the next user still skips the scan.
    p.unfix(held);
    let scanned_before = p.counters().clean_victim_scanned;
    let FixOutcome::SyncReplacementWrite(second) = p.fix(page(101), FixIntent::Read, 0, 0) else {
        panic!("with try_LRU_scan off the second user writes too")
    };
    assert_ne!(second.frame, first.frame);
    assert!(p.lookup(tail[0]).is_some(), "the clean tail page was passed over");
    assert_eq!(p.counters().clean_victim_scanned, scanned_before, "no scan");
    assert_eq!((p.counters().lru_scans_failed, p.counters().lru_scans_skipped), (1, 1));
    // A batch turns the scan back on: the next user evicts the clean tail page.
    let _ = p.lru_batch_chunk(0, 0, 0, LruMode::EvictToFree);
    let FixOutcome::Miss(_) = p.fix(page(102), FixIntent::Read, 0, 0) else {
        panic!("after a batch the user's scan finds the clean tail page")
    };
    assert!(p.lookup(tail[0]).is_none());
    assert_eq!((p.counters().lru_scans_failed, p.counters().lru_scans_skipped), (1, 1));
    p.check_invariants();
}

#[test]
fn every_frame_fixed_gives_no_frame() {
    let mut p = pool(8);
    for n in 0..8 {
        let FixOutcome::Miss(f) = p.fix(page(n), FixIntent::Read, 0, 0) else {
            panic!()
        };
        p.complete_read(f);
    }
    assert_eq!(p.fix(page(9), FixIntent::Read, 0, 0), FixOutcome::NoFrame);
    p.check_invariants();
}

#[test]
fn new_pages_enter_at_midpoint_and_become_young_after_old_blocks_time() {
    let mut config = BufferPoolConfig::small(64);
    config.lru_old_min_len = 8;
    let mut p = BufferPool::new(config, Lsn(1)).unwrap();
    for n in 0..64 {
        load(&mut p, n, 0);
    }
    // Evict one page so the freed-page clock runs.
    load(&mut p, 1000, 0);
    p.check_invariants();
    let newest = page(1000);
    let lru = p.lru_pages();
    let position = lru.iter().position(|&x| x == newest).unwrap();
    assert_eq!(
        position as u32,
        p.lru_len() - p.old_len(),
        "new page at the head of the old sublist"
    );
    // Re-access within old_blocks_time: stays old.
    let FixOutcome::Hit(f) = p.fix(newest, FixIntent::Read, 0, 500_000) else {
        panic!()
    };
    p.unfix(f);
    assert_ne!(p.lru_pages()[0], newest);
    // After old_blocks_time: made young.
    let FixOutcome::Hit(f) = p.fix(newest, FixIntent::Read, 0, 1_000_000) else {
        panic!()
    };
    p.unfix(f);
    assert_eq!(p.lru_pages()[0], newest);
    assert_eq!(p.counters().pages_made_young, 1);
    p.check_invariants();
}

#[test]
fn checkpoint_age_over_sync_margin_blocks_writers() {
    let mut config = BufferPoolConfig::small(32);
    config.redo = RedoConfig {
        capacity_bytes: 4 << 20,
        thread_concurrency: 0,
    };
    let mut p = BufferPool::new(config, Lsn(1)).unwrap();
    let sync = p.redo().margins.max_modified_age_sync_bytes;
    for n in 0..4 {
        load(&mut p, n, 0);
    }
    dirty(&mut p, 0, 10);
    dirty(&mut p, 1, 400);
    assert_eq!(p.redo_free_check(), FreeCheck::Proceed);
    // Push the head past the sync margin with a third page.
    dirty(&mut p, 2, 10 + sync);
    let FreeCheck::SyncFlush(writes) = p.redo_free_check() else {
        panic!()
    };
    assert_eq!(writes.len(), 1, "only the pages older than the needed LSN");
    assert_eq!(writes[0].page, page(0));
    assert_eq!(writes[0].kind, WriteKind::SyncRecoverability);
    // While that write is in flight, the next writer must wait.
    assert_eq!(p.redo_free_check(), FreeCheck::WaitForFlush);
    assert!(!p.complete_write(writes[0].frame), "recoverability writes do not evict");
    assert!(!p.is_dirty(writes[0].frame));
    assert_eq!(p.counters().sync_recoverability_writes, 1);
    p.check_invariants();
}

#[test]
fn page_modified_during_write_stays_dirty_with_new_oldest_lsn() {
    let mut p = pool(16);
    load(&mut p, 1, 0);
    load(&mut p, 2, 0);
    dirty(&mut p, 1, 10);
    dirty(&mut p, 2, 300);
    let (writes, _) = p.flush_list_batch(1, Lsn::MAX, WriteKind::FlushList);
    assert_eq!(writes[0].page, page(1));
    dirty(&mut p, 1, 500);
    p.check_invariants();
    assert!(!p.complete_write(writes[0].frame));
    assert!(p.is_dirty(writes[0].frame));
    assert_eq!(p.oldest_modification_of(writes[0].frame), Lsn(500));
    assert_eq!(
        p.flush_list_pages(),
        vec![page(1), page(2)],
        "re-sorted by oldest modification"
    );
    p.check_invariants();
}

#[test]
fn lru_batch_evicts_clean_and_writes_dirty_until_free_target() {
    let mut p = pool(64);
    for n in 0..64 {
        load(&mut p, n, 0);
    }
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().collect();
    for (i, pg) in tail.iter().enumerate().take(10).filter(|(i, _)| i % 2 == 0) {
        dirty(&mut p, pg.page_no, 10 + 200 * i as u64);
    }
    let chunk = p.lru_batch_chunk(100, 6, u32::MAX, LruMode::EvictToFree);
    assert_eq!(chunk.evicted, 6, "stops once the free list reaches the target");
    assert_eq!(chunk.writes.len(), 5, "dirty pages passed on the way are written");
    assert_eq!(chunk.scanned, 11);
    assert_eq!(p.free_len(), 6);
    for w in &chunk.writes {
        assert!(p.complete_write(w.frame));
    }
    assert_eq!(p.free_len(), 11);
    assert_eq!(p.counters().lru_batch_flush_pages, 5);
    assert_eq!(p.counters().lru_batch_evict_pages, 6);
    p.check_invariants();
}

#[test]
fn clean_only_lru_batch_leaves_pages_resident() {
    let mut p = pool(32);
    for n in 0..32 {
        load(&mut p, n, 0);
    }
    for n in 0..32 {
        dirty(&mut p, n, 10 + 200 * u64::from(n));
    }
    let chunk = p.lru_batch_chunk(4, u32::MAX, u32::MAX, LruMode::CleanOnly);
    assert_eq!((chunk.writes.len(), chunk.evicted), (4, 0));
    for w in &chunk.writes {
        assert!(!p.complete_write(w.frame));
        assert!(p.lookup(w.page).is_some());
    }
    assert_eq!(p.counters().cleaner_clean_pages, 4);
    p.check_invariants();
}

#[test]
fn flush_list_batch_respects_lsn_limit_and_order() {
    let mut p = pool(16);
    for n in 0..6 {
        load(&mut p, n, 0);
        dirty(&mut p, n, 100 * u64::from(n + 1));
    }
    let (writes, _) = p.flush_list_batch(10, Lsn(350), WriteKind::FlushList);
    let pages: Vec<u32> = writes.iter().map(|w| w.page.page_no).collect();
    assert_eq!(pages, vec![0, 1, 2], "oldest first, only below the limit");
    let (more, scanned) = p.flush_list_batch(2, Lsn::MAX, WriteKind::FlushList);
    assert_eq!(more.iter().map(|w| w.page.page_no).collect::<Vec<_>>(), vec![3, 4]);
    assert_eq!(scanned, 5, "in-flight pages are scanned and skipped");
    p.check_invariants();
}

#[test]
fn failed_read_returns_frame_to_free_list() {
    let mut p = pool(8);
    let FixOutcome::Miss(f) = p.fix(page(3), FixIntent::Read, 0, 0) else {
        panic!()
    };
    p.fail_read(f);
    assert!(p.lookup(page(3)).is_none());
    assert_eq!(p.free_len(), 8);
    p.check_invariants();
}

#[test]
fn checkpoint_candidate_is_oldest_dirty_page() {
    let mut p = pool(8);
    load(&mut p, 1, 0);
    load(&mut p, 2, 0);
    dirty(&mut p, 1, 50);
    dirty(&mut p, 2, 80);
    assert_eq!(p.checkpoint_candidate(), Lsn(50));
    p.note_checkpoint(Lsn(50), 0);
    assert_eq!(p.redo().checkpoint_lsn, Lsn(50));
    assert_eq!(p.redo_age_bytes(), 180 - 50);
}

// ----- property test against a reference model -----------------------------

#[derive(Clone, Debug)]
enum Op {
    Fix { page: u32, modify: bool },
    CompleteOneWrite,
    LruBatch { depth: u32 },
    FlushBatch { pages: u32 },
    FreeCheck,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u32..48, any::<bool>()).prop_map(|(page, modify)| Op::Fix { page, modify }),
        3 => Just(Op::CompleteOneWrite),
        1 => (1u32..20).prop_map(|depth| Op::LruBatch { depth }),
        1 => (1u32..10).prop_map(|pages| Op::FlushBatch { pages }),
        1 => Just(Op::FreeCheck),
    ]
}

/// The reference: which pages are resident, which are dirty (with their
/// oldest modification and insertion sequence) and which writes are pending.
#[derive(Default)]
struct Model {
    resident: BTreeSet<PageId>,
    dirty: BTreeMap<PageId, (u64, u64)>,
    /// In-flight writes; the last field is the first LSN modified meanwhile.
    pending: Vec<(FrameId, PageId, WriteKind, Option<u64>)>,
    seq: u64,
}

impl Model {
    fn mark_dirty(&mut self, pg: PageId, lsn: u64) {
        if !self.dirty.contains_key(&pg) {
            self.seq += 1;
            self.dirty.insert(pg, (lsn, self.seq));
        }
    }

    fn expected_flush_list(&self) -> Vec<PageId> {
        let mut v: Vec<(u64, u64, PageId)> = self.dirty.iter().map(|(&p, &(l, s))| (l, s, p)).collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        v.into_iter().map(|x| x.2).collect()
    }
}

/// Runs `ops` on a 16-frame pool whose users follow `rule` (the pool's
/// default when `None`).
fn run_ops(ops: Vec<Op>, rule: Option<FreePageRule>) {
    let mut config = BufferPoolConfig::small(16);
    config.redo = RedoConfig {
        capacity_bytes: 2 << 20,
        thread_concurrency: 0,
    };
    let mut p = BufferPool::new(config, Lsn(1)).unwrap();
    if let Some(rule) = rule {
        p.set_free_page_rule(rule);
    }
    let mut m = Model::default();
    let mut lsn = 10u64;
    let mut now = 0u64;
    for op in ops {
        now += 1000;
        match op {
            Op::Fix { page: n, modify } => {
                let pg = page(n);
                {
                    match p.fix(pg, FixIntent::Read, 0, now) {
                        FixOutcome::Hit(f) => {
                            assert!(m.resident.contains(&pg), "hit on a page the model lacks");
                            if modify {
                                p.note_modification(f, Lsn(lsn), Lsn(lsn + 50));
                                // Modified while a write is in flight: the write's
                                // completion leaves it dirty from this LSN.
                                match m.pending.iter_mut().find(|w| w.1 == pg) {
                                    Some(w) => {
                                        w.3.get_or_insert(lsn);
                                    }
                                    None => m.mark_dirty(pg, lsn),
                                }
                                lsn += 100;
                            }
                            p.unfix(f);
                        }
                        FixOutcome::Miss(f) => {
                            assert!(!m.resident.contains(&pg), "miss on a resident page");
                            // The frame came from the free list or from one clean victim.
                            let gone: Vec<PageId> =
                                m.resident.iter().copied().filter(|x| p.lookup(*x).is_none()).collect();
                            assert!(gone.len() <= 1, "a miss evicts at most one page");
                            for g in gone {
                                assert!(!m.dirty.contains_key(&g), "a miss evicted dirty page {g}");
                                m.resident.remove(&g);
                            }
                            m.resident.insert(pg);
                            p.complete_read(f);
                            p.unfix(f);
                        }
                        FixOutcome::WaitRead(_) => unreachable!("reads complete at once here"),
                        FixOutcome::SyncReplacementWrite(order) => {
                            assert!(m.dirty.contains_key(&order.page), "replacement victim must be dirty");
                            m.pending.push((order.frame, order.page, order.kind, None));
                        }
                        FixOutcome::UserLruBatch => {
                            for order in p.take_user_lru_batch() {
                                assert!(m.dirty.contains_key(&order.page), "a user batch writes dirty pages");
                                assert_eq!(order.kind, WriteKind::UserLruBatch);
                                m.pending.push((order.frame, order.page, order.kind, None));
                            }
                        }
                        FixOutcome::NoFrame => {}
                    }
                }
            }
            Op::CompleteOneWrite => {
                if !m.pending.is_empty() {
                    let (frame, pg, _kind, redirtied) = m.pending.remove(0);
                    let evicted = p.complete_write(frame);
                    m.dirty.remove(&pg);
                    if let Some(re) = redirtied {
                        m.mark_dirty(pg, re);
                        assert!(!evicted);
                    }
                    if evicted {
                        m.resident.remove(&pg);
                    }
                }
            }
            Op::LruBatch { depth } => {
                let before: BTreeSet<PageId> = m.resident.clone();
                let chunk = p.lru_batch_chunk(depth, depth, u32::MAX, LruMode::EvictToFree);
                for w in &chunk.writes {
                    assert!(m.dirty.contains_key(&w.page));
                    m.pending.push((w.frame, w.page, w.kind, None));
                }
                let now_resident: BTreeSet<PageId> =
                    before.iter().copied().filter(|pg| p.lookup(*pg).is_some()).collect();
                for gone in before.difference(&now_resident) {
                    assert!(!m.dirty.contains_key(gone), "evicted a dirty page");
                }
                m.resident = now_resident;
            }
            Op::FlushBatch { pages } => {
                let (writes, _) = p.flush_list_batch(pages, Lsn::MAX, WriteKind::FlushList);
                let expected: Vec<PageId> = m
                    .expected_flush_list()
                    .into_iter()
                    .rev()
                    .filter(|pg| !m.pending.iter().any(|w| w.1 == *pg))
                    .take(pages as usize)
                    .collect();
                assert_eq!(
                    writes.iter().map(|w| w.page).collect::<Vec<_>>(),
                    expected,
                    "flush batch takes the oldest"
                );
                for w in writes {
                    m.pending.push((w.frame, w.page, w.kind, None));
                }
            }
            Op::FreeCheck => {
                if let FreeCheck::SyncFlush(writes) = p.redo_free_check() {
                    for w in writes {
                        m.pending.push((w.frame, w.page, w.kind, None));
                    }
                }
            }
        }
        p.check_invariants();
        let resident: BTreeSet<PageId> = p.lru_pages().into_iter().collect();
        assert_eq!(resident, m.resident, "LRU membership");
        assert_eq!(p.free_len() as usize, 16 - m.resident.len(), "free list length");
        assert_eq!(p.flush_list_pages(), m.expected_flush_list(), "flush list order");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_operations_keep_invariants_and_agree_with_reference_model(ops in proptest::collection::vec(op(), 1..200)) {
        run_ops(ops, None);
    }

    /// The same under InnoDB 5.1's free margin, where users run LRU batches.
    #[test]
    fn random_operations_under_the_5_1_free_margin_agree_with_reference_model(ops in proptest::collection::vec(op(), 1..200)) {
        run_ops(ops, Some(crate::free_page_path::FreePagePath::MYSQL_5_1.resolve(1)));
    }
}

#[test]
fn abandoned_write_leaves_page_dirty_and_uncounted() {
    let mut p = pool(16);
    load(&mut p, 1, 0);
    dirty(&mut p, 1, 10);
    let (writes, _) = p.flush_list_batch(1, Lsn::MAX, WriteKind::FlushList);
    assert_eq!(p.counters().flush_list_pages, 1);
    p.abandon_write(writes[0].frame);
    assert_eq!(p.counters().flush_list_pages, 0);
    assert!(p.is_dirty(writes[0].frame));
    assert_eq!(p.pending_writes(WriteKind::FlushList), 0);
    p.check_invariants();
    let (again, _) = p.flush_list_batch(1, Lsn::MAX, WriteKind::FlushList);
    assert_eq!(again.len(), 1, "the page can be ordered again");
}

#[test]
fn checkpoint_is_due_each_interval_and_only_when_it_can_advance() {
    let mut p = pool(8);
    let interval = p.config().checkpoint_interval_us;
    load(&mut p, 1, 0);
    dirty(&mut p, 1, 50);
    assert_eq!(p.checkpoint_due(interval - 1), None, "the period has not passed");
    assert_eq!(p.checkpoint_due(interval), Some(CheckpointReason::Periodic));
    assert_eq!(p.periodic_checkpoint_at_us(), interval);
    p.note_checkpoint(p.checkpoint_candidate(), interval);
    assert_eq!(p.periodic_checkpoint_at_us(), 2 * interval);
    // Nothing to advance: never due, however long it waits.
    assert_eq!(p.checkpoint_due(10 * interval), None);
}

#[test]
fn checkpoint_is_due_at_once_past_the_async_checkpoint_age() {
    let mut p = pool(8);
    let async_bytes = p.redo().margins.max_checkpoint_age_async_bytes;
    load(&mut p, 1, 0);
    load(&mut p, 2, 0);
    dirty(&mut p, 1, 50);
    // A later change moves the head past the async margin while the
    // oldest modification can still advance (page 1 is written back).
    dirty(&mut p, 2, 50 + async_bytes);
    assert_eq!(p.checkpoint_due(0), Some(CheckpointReason::AgeMargin));
    p.note_checkpoint(p.checkpoint_candidate(), 0);
    assert_eq!(p.checkpoint_due(0), None, "the oldest change pins the checkpoint");
    let frame = p.lookup(page(1)).unwrap();
    let (writes, _) = p.flush_list_batch(1, Lsn(u64::MAX), WriteKind::FlushList);
    assert_eq!(writes.len(), 1);
    p.complete_write(frame);
    assert_eq!(p.checkpoint_due(0), Some(CheckpointReason::AgeMargin));
    p.note_checkpoint(p.checkpoint_candidate(), 0);
    assert_eq!(p.checkpoint_due(0), None);
}

// ----- MySQL 5.6.15's free-page path (crate::free_page_path) ---------------

/// A full pool of `frames` clean pages whose `dirty_tail` LRU-tail pages are
/// dirty, oldest first.
fn pool_with_dirty_tail(frames: u32, dirty_tail: usize) -> BufferPool {
    let mut p = BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap();
    for n in 0..frames {
        load(&mut p, n, 0);
    }
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().take(dirty_tail).collect();
    for (i, pg) in tail.iter().enumerate() {
        dirty(&mut p, pg.page_no, 10 + 200 * i as u64);
    }
    p
}

/// 5.6.15 `buf_LRU_free_from_common_LRU_list`: a user's first scan goes
/// `srv_LRU_scan_depth` deep (Pscan), not 5.7's 100; the driver hands the
/// pool its policy's current Pscan.
#[test]
fn user_scan_depth_follows_lru_scan_depth_in_56() {
    use crate::cleaner::PageCleaner;
    use crate::decision_log::DecisionLog;
    // 2048 frames, the 500 tail pages dirty: a clean victim is 501 deep.
    let miss = |policy: Option<&str>| {
        let mut p = pool_with_dirty_tail(2048, 500);
        let _cleaner =
            policy.map(|spec| PageCleaner::new(crate::policy::build(spec).unwrap(), &mut p, DecisionLog::disabled()));
        let outcome = p.fix(page(9_999), FixIntent::Read, 0, 0);
        (outcome, p.free_page_rule().user_scan_depth)
    };
    // No policy configured the pool: 5.7's 100 pages, all dirty: a write.
    let (outcome, depth) = miss(None);
    assert_eq!(depth, 100);
    assert!(matches!(outcome, FixOutcome::SyncReplacementWrite(_)), "{outcome:?}");
    // mysql56 (Pscan 1024): the scan reaches the clean page at 501.
    let (outcome, depth) = miss(Some("mysql56"));
    assert_eq!(depth, 1023, "scanned < srv_LRU_scan_depth, from 1");
    assert!(matches!(outcome, FixOutcome::Miss(_)), "{outcome:?}");
    // self-tuning follows its own Pscan; percona56 too.
    let (outcome, _) = miss(Some("self-tuning:lru_scan_depth=300"));
    assert!(matches!(outcome, FixOutcome::SyncReplacementWrite(_)), "{outcome:?}");
    let (outcome, depth) = miss(Some("self-tuning:lru_scan_depth=600"));
    assert_eq!(depth, 599);
    assert!(matches!(outcome, FixOutcome::Miss(_)), "{outcome:?}");
    let (outcome, _) = miss(Some("percona56"));
    assert!(matches!(outcome, FixOutcome::Miss(_)), "{outcome:?}");
    // The 5.7 rule stays available as a named parameter.
    let (outcome, depth) = miss(Some("mysql56:user_scan_depth=100"));
    assert_eq!(depth, 99);
    assert!(matches!(outcome, FixOutcome::SyncReplacementWrite(_)), "{outcome:?}");
}

/// 5.6.15 `buf_flush_LRU_list_batch`: `count < max` counts written pages;
/// clean pages on the way are evicted up to `free_len < srv_LRU_scan_depth`
/// without counting.
#[test]
fn lru_batch_budget_counts_written_pages_only() {
    // 1024 frames; the 50 tail pages clean, the next 200 dirty.
    let mut p = BufferPool::new(BufferPoolConfig::small(1024), Lsn(1)).unwrap();
    for n in 0..1024 {
        load(&mut p, n, 0);
    }
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().collect();
    for (i, pg) in tail[50..250].iter().enumerate() {
        dirty(&mut p, pg.page_no, 10 + 200 * i as u64);
    }
    let chunk = p.lru_batch_chunk(10, 1_000, u32::MAX, LruMode::EvictToFree);
    assert_eq!(chunk.evicted, 50, "evictions do not count against max_pages");
    assert_eq!(chunk.writes.len(), 10, "max_pages bounds the writes");
    assert_eq!(p.free_len(), 50);
    for w in &chunk.writes {
        p.complete_write(w.frame);
    }
    p.check_invariants();
    // The free target bounds the evictions: an all-clean pool with a
    // target of 20 evicts exactly 20 and writes nothing.
    let mut p = pool_with_dirty_tail(1024, 0);
    let chunk = p.lru_batch_chunk(100, 20, u32::MAX, LruMode::EvictToFree);
    assert_eq!((chunk.evicted, chunk.writes.len(), p.free_len()), (20, 0, 20));
    p.check_invariants();
}

/// 5.6.15 `buf_page_io_complete` does not free an LRU-batch page: it stays
/// on the LRU, clean, and the next chunk (or a user) evicts it; 5.7 frees it
/// at completion.
#[test]
fn lru_written_pages_stay_on_lru_in_56() {
    use crate::free_page_path::FreePagePath;
    for (path, freed_at_completion) in [(FreePagePath::MYSQL_5_6_15, false), (FreePagePath::MYSQL_5_7, true)] {
        let mut p = pool_with_dirty_tail(1024, 300);
        p.set_free_page_rule(path.resolve(1024));
        let chunk = p.lru_batch_chunk(100, 1024, u32::MAX, LruMode::EvictToFree);
        assert_eq!(chunk.writes.len(), 100);
        let evicted: usize = chunk.writes.iter().filter(|w| p.complete_write(w.frame)).count();
        assert_eq!(evicted == 100, freed_at_completion, "{path:?}");
        assert_eq!(p.free_len(), if freed_at_completion { 100 } else { 0 });
        // Either way the next chunk starts from the tail: under 5.6.15 it
        // evicts the 100 written (now clean) pages before writing more.
        let next = p.lru_batch_chunk(100, 1024, u32::MAX, LruMode::EvictToFree);
        assert_eq!(next.evicted, if freed_at_completion { 0 } else { 100 });
        for w in &next.writes {
            p.complete_write(w.frame);
        }
        p.check_invariants();
    }
}

/// 5.6.15 `log_checkpoint_margin`: the writer flushes to
/// `oldest + 2 x (age - sync margin)`; while a flush-list batch is in
/// flight it waits for it (`buf_flush_list` skips a busy instance, then
/// `buf_flush_wait_batch_end`) and checks again. 5.7: one times the excess.
/// Writers that wait for the cleaner never flush.
#[test]
fn sync_preflush_targets_twice_the_excess_and_waits_for_a_running_batch_in_56() {
    use crate::free_page_path::{FreePagePath, PreflushAdvance};
    let setup = |path: FreePagePath| {
        let mut config = BufferPoolConfig::small(64);
        config.redo = RedoConfig {
            capacity_bytes: 4 << 20,
            thread_concurrency: 0,
        };
        let mut p = BufferPool::new(config, Lsn(1)).unwrap();
        p.set_free_page_rule(path.resolve(1024));
        let sync = p.redo().margins.max_modified_age_sync_bytes;
        for n in 0..40 {
            load(&mut p, n, 0);
        }
        // Pages 0..30 dirtied 1000 bytes apart from LSN 10, then the head
        // pushed 5000 bytes past the sync margin.
        for n in 0..30u32 {
            dirty(&mut p, n, 10 + 1_000 * u64::from(n));
        }
        dirty(&mut p, 39, 10 + sync + 5_000);
        p
    };
    let FreeCheck::SyncFlush(once) = setup(FreePagePath::MYSQL_5_7).redo_free_check() else {
        panic!("5.7: a sync flush")
    };
    let mut p = setup(FreePagePath::MYSQL_5_6_15);
    let FreeCheck::SyncFlush(twice) = p.redo_free_check() else {
        panic!("5.6.15: a sync flush")
    };
    // Excess 5,100 bytes past oldest 10: 5.7 flushes the pages below LSN
    // 5,110 (6 pages); 5.6.15 those below 10,210 (11 pages).
    assert_eq!(once.len(), 6);
    assert_eq!(twice.len(), 11);
    // A flush-list batch in flight: the next writer waits for it.
    assert_eq!(p.redo_free_check(), FreeCheck::WaitForFlush);
    for w in &twice {
        p.complete_write(w.frame);
    }
    p.check_invariants();
    let mut p = setup(FreePagePath::MYSQL_5_6_15);
    let (cleaner_batch, _) = p.flush_list_batch(1, Lsn::MAX, WriteKind::FlushList);
    assert_eq!(
        p.redo_free_check(),
        FreeCheck::WaitForFlush,
        "the cleaner's batch is running"
    );
    p.complete_write(cleaner_batch[0].frame);
    assert!(matches!(p.redo_free_check(), FreeCheck::SyncFlush(_)));
    // Writers that wait for the cleaner (8.0, MariaDB 10.5+, flushwise)
    // write nothing, whatever is running, until the age is back in.
    let waiting = FreePagePath {
        preflush_advance: PreflushAdvance::WaitForCleaner,
        ..FreePagePath::MYSQL_5_7
    };
    let mut p = setup(waiting);
    let waits = p.counters().sync_flush_waits;
    assert_eq!(p.redo_free_check(), FreeCheck::WaitForFlush);
    assert_eq!(p.counters().sync_flush_waits, waits + 1, "counted as a wait");
    assert_eq!(p.counters().sync_recoverability_writes, 0);
    let (cleaner_batch, _) = p.flush_list_batch(u32::MAX, Lsn(10 + 5_100), WriteKind::FlushList);
    assert_eq!(cleaner_batch.len(), 6);
    for w in &cleaner_batch {
        p.complete_write(w.frame);
    }
    assert_eq!(
        p.redo_free_check(),
        FreeCheck::Proceed,
        "the cleaner brought the age back"
    );
    p.check_invariants();
}

/// `flushwise` rule 9: within `depth` of the tail, a dirty page first
/// accessed after the cutoff is passed over and the clean pages above it
/// are evicted instead; dirty pages past their grace are written as
/// InnoDB would; past `depth` the walk takes every page in LRU order.
#[test]
fn graced_lru_chunk_passes_over_recent_dirty_pages_within_its_depth() {
    // 1024 frames read at t = 0 .. 1023 us (page n at n us): the tail holds
    // the earliest reads.
    let mut p = pool(1024);
    for n in 0..1024 {
        load(&mut p, n, u64::from(n));
    }
    let tail: Vec<PageId> = p.lru_pages().into_iter().rev().collect();
    // The 20 tail pages dirty and read early (past the grace at a cutoff of
    // 500 us), then 30 dirty pages read late (in their grace), then clean.
    let early: Vec<u32> = tail.iter().map(|pg| pg.page_no).filter(|&n| n < 500).take(20).collect();
    let late: Vec<u32> = tail.iter().map(|pg| pg.page_no).filter(|&n| n > 500).take(30).collect();
    for (i, &n) in early.iter().chain(late.iter()).enumerate() {
        dirty(&mut p, n, 10 + 200 * i as u64);
    }
    let passed_before = p.counters().lru_grace_passed_pages;
    let chunk = p.lru_batch_chunk_graced(100, 300, 500, 512);
    let written: Vec<u32> = chunk.writes.iter().map(|w| w.page.page_no).collect();
    assert!(
        !written.is_empty() && written.iter().all(|n| early.contains(n)),
        "only pages past their grace are written: {written:?}"
    );
    assert_eq!(
        chunk.evicted, 300,
        "clean pages above the graced ones refill the free list"
    );
    assert!(p.counters().lru_grace_passed_pages > passed_before);
    for &n in &late {
        assert!(p.lookup(page(n)).is_some(), "page {n} in its grace stays");
    }
    for w in &chunk.writes {
        p.complete_write(w.frame);
    }
    p.check_invariants();

    // A depth of 10: every page in the grace lies deeper, so it is written
    // in LRU order as InnoDB would.
    let mut p = pool(1024);
    for n in 0..1024 {
        load(&mut p, n, u64::from(n) + 1);
    }
    let tail: Vec<u32> = p.lru_pages().into_iter().rev().map(|pg| pg.page_no).collect();
    for (i, &n) in tail[..50].iter().enumerate() {
        dirty(&mut p, n, 10 + 200 * i as u64);
    }
    let chunk = p.lru_batch_chunk_graced(100, 1_000, 0, 10);
    assert_eq!(
        chunk.writes.len(),
        50 - 10,
        "the ten within the depth are passed over, the rest written"
    );
    for w in &chunk.writes {
        p.complete_write(w.frame);
    }
    p.check_invariants();
}
