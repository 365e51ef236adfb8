//! Scenarios of a pool sharing hits with a shell ([`crate::fast_hits`]):
//! pinned victims are skipped, the shell always holds the core's access
//! rules, and hits served outside the core count exactly once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::buffer_pool::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, LruMode};
use crate::fast_hits::{AccessRule, FastHits};
use crate::types::{FrameId, Lsn, PageId};

/// A shell model: pins by frame, and what it was told.
#[derive(Default)]
struct ShellModel {
    pins: HashMap<u32, u32>,
    rules: HashMap<u32, AccessRule>,
    freed_page_clock: Option<u64>,
    evict_asks: u32,
}

#[derive(Clone, Default)]
struct Shell(Arc<Mutex<ShellModel>>);

impl Shell {
    fn pin(&self, f: FrameId) {
        *self.0.lock().unwrap().pins.entry(f.0).or_default() += 1;
    }
    fn unpin(&self, f: FrameId) {
        *self.0.lock().unwrap().pins.entry(f.0).or_default() -= 1;
    }
    fn rule(&self, f: FrameId) -> Option<AccessRule> {
        self.0.lock().unwrap().rules.get(&f.0).copied()
    }
    fn evict_asks(&self) -> u32 {
        self.0.lock().unwrap().evict_asks
    }
}

impl FastHits for Shell {
    fn try_evict(&self, frame: FrameId, _page: PageId) -> bool {
        let mut m = self.0.lock().unwrap();
        m.evict_asks += 1;
        m.pins.get(&frame.0).copied().unwrap_or(0) == 0
    }
    fn is_pinned(&self, frame: FrameId) -> bool {
        self.0.lock().unwrap().pins.get(&frame.0).copied().unwrap_or(0) > 0
    }
    fn publish_access_rule(&self, frame: FrameId, rule: AccessRule) {
        self.0.lock().unwrap().rules.insert(frame.0, rule);
    }
    fn publish_freed_page_clock(&self, clock: u64) {
        self.0.lock().unwrap().freed_page_clock = Some(clock);
    }
    fn published_access_rule(&self, frame: FrameId) -> Option<AccessRule> {
        self.rule(frame)
    }
    fn published_freed_page_clock(&self) -> Option<u64> {
        self.0.lock().unwrap().freed_page_clock
    }
}

fn pool_with(config: BufferPoolConfig) -> (BufferPool, Shell) {
    let shell = Shell::default();
    let pool = BufferPool::with_fast_hits(config, Lsn(1), Box::new(shell.clone())).unwrap();
    (pool, shell)
}

fn page(n: u32) -> PageId {
    PageId::new(1, n)
}

/// Reads `n` in and hands its fix over to the shell, as the engine does.
fn load_pinned(p: &mut BufferPool, shell: &Shell, n: u32, now: u64) -> FrameId {
    let f = match p.fix(page(n), FixIntent::Read, 0, now) {
        FixOutcome::Miss(f) => {
            p.complete_read(f);
            f
        }
        FixOutcome::Hit(f) => f,
        other => panic!("load of {n}: {other:?}"),
    };
    shell.pin(f);
    p.unfix(f);
    f
}

fn fill(p: &mut BufferPool, shell: &Shell, pages: u32) -> Vec<FrameId> {
    (0..pages)
        .map(|n| {
            let f = load_pinned(p, shell, n, 0);
            shell.unpin(f);
            f
        })
        .collect()
}

#[test]
fn clean_victim_pinned_by_the_shell_is_skipped_and_counted() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(16));
    fill(&mut p, &shell, 16);
    let tail = *p.lru_pages().last().unwrap();
    let tail_frame = p.lookup(tail).unwrap();
    shell.pin(tail_frame);
    let FixOutcome::Miss(f) = p.fix(page(100), FixIntent::Read, 0, 0) else {
        panic!()
    };
    assert_ne!(f, tail_frame);
    assert_eq!(p.lookup(tail), Some(tail_frame), "the pinned page stays");
    assert_eq!(p.counters().pin_vetoes, 1);
    assert_eq!(p.counters().clean_victim_scanned, 2, "the scan went on past it");
    p.complete_read(f);
    p.unfix(f);
    p.check_invariants();
}

#[test]
fn every_clean_page_pinned_by_the_shell_gives_no_frame() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(8));
    for f in fill(&mut p, &shell, 8) {
        shell.pin(f);
    }
    assert_eq!(p.fix(page(9), FixIntent::Read, 0, 0), FixOutcome::NoFrame);
    assert_eq!(p.fix(page(9), FixIntent::Read, 1, 0), FixOutcome::NoFrame);
    assert_eq!(p.lru_len(), 8, "nothing was evicted");
    p.check_invariants();
}

#[test]
fn lru_batch_and_replacement_write_keep_pages_the_shell_pinned() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(16));
    let frames = fill(&mut p, &shell, 16);
    // Every page dirty, so a miss must write the tail page synchronously.
    for (i, &f) in frames.iter().enumerate() {
        shell.pin(f);
        p.note_modification(f, Lsn(10 + 200 * i as u64), Lsn(110 + 200 * i as u64));
        shell.unpin(f);
    }
    let FixOutcome::SyncReplacementWrite(order) = p.fix(page(100), FixIntent::Read, 0, 0) else {
        panic!()
    };
    shell.pin(order.frame);
    assert!(!p.complete_write(order.frame), "pinned: written but not evicted");
    assert_eq!(p.lookup(order.page), Some(order.frame));
    assert!(!p.is_dirty(order.frame));
    // The LRU batch reaches it at the tail and must leave it too.
    let chunk = p.lru_batch_chunk(16, 16, 16, LruMode::EvictToFree);
    assert_eq!(
        p.lookup(order.page),
        Some(order.frame),
        "the batch skipped the pinned page"
    );
    assert!(p.counters().pin_vetoes >= 2);
    for w in &chunk.writes {
        p.complete_write(w.frame);
    }
    assert!(!chunk.writes.is_empty(), "the other dirty pages were written");
    assert_eq!(p.lookup(order.page), Some(order.frame));
    shell.unpin(order.frame);
    p.check_invariants();
}

#[test]
fn shell_holds_every_access_rule_the_core_would_apply() {
    // A pool large enough for an old sublist, pages cycling through it with
    // time advancing: check_invariants compares the shell's rules and clock
    // with the core's after every step.
    let mut config = BufferPoolConfig::small(64);
    config.old_blocks_time_us = 50_000;
    let (mut p, shell) = pool_with(config);
    let mut x = 12345u32;
    for step in 0..3_000u64 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let n = if step % 3 == 0 { x % 200 } else { x % 40 };
        let now = step * 1_000;
        let f = load_pinned(&mut p, &shell, n, now);
        shell.unpin(f);
        p.check_invariants();
    }
    assert!(p.counters().pages_made_young > 0 && p.old_len() > 0);
    assert!(p.freed_page_clock() > 0);
}

#[test]
fn access_rule_follows_innodb_peek_if_too_old() {
    let mut config = BufferPoolConfig::small(64);
    config.lru_old_min_len = 8;
    let (mut p, shell) = pool_with(config);
    let frames = fill(&mut p, &shell, 64);
    // Nothing evicted yet: no hit moves anything.
    let old = frames.iter().copied().find(|&f| p.access_rule(f).needs_time()).unwrap();
    let rule = p.access_rule(old);
    assert!(!rule.moves(u64::MAX - 1, 0), "no move before the first eviction");
    assert_eq!(
        rule.young_at_us, config.old_blocks_time_us,
        "first access at 0 + old_blocks_time"
    );
    assert!(rule.moves(config.old_blocks_time_us, 1));
    assert!(!rule.moves(config.old_blocks_time_us - 1, 1));
    let young = frames
        .iter()
        .copied()
        .find(|&f| !p.access_rule(f).needs_time())
        .unwrap();
    let rule = p.access_rule(young);
    assert_eq!(rule.young_at_us, AccessRule::NEVER);
    assert!(rule.moves(0, rule.young_at_freed_clock));
    assert!(!rule.moves(0, rule.young_at_freed_clock - 1));
    assert_eq!(shell.rule(young), Some(rule));
}

#[test]
fn hits_served_by_the_shell_count_once_in_requests() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(16));
    fill(&mut p, &shell, 10);
    let before = *p.counters();
    p.note_fast_hits(1_000);
    let c = p.counters().since(&before);
    assert_eq!(c.requests, 1_000);
    assert_eq!(c.fast_hits, 1_000);
    assert_eq!(c.hits(), 1_000);
    assert_eq!(p.counters().requests, 1_010, "10 misses + 1000 hits");
    assert_eq!(shell.evict_asks(), 0, "no eviction was needed");
}

#[test]
fn a_page_pinned_only_by_the_shell_may_be_modified() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(16));
    let f = load_pinned(&mut p, &shell, 3, 0);
    assert_eq!(p.fix_count(f), 0, "the fix was handed over");
    p.note_modification(f, Lsn(10), Lsn(50));
    shell.unpin(f);
    assert!(p.is_dirty(f));
    p.check_invariants();
}

#[test]
#[should_panic(expected = "modification of unfixed")]
fn a_page_pinned_by_no_one_may_not_be_modified() {
    let (mut p, shell) = pool_with(BufferPoolConfig::small(16));
    let f = load_pinned(&mut p, &shell, 3, 0);
    shell.unpin(f);
    p.note_modification(f, Lsn(10), Lsn(50));
}
