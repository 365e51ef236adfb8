//! The LRU index's victim searches against InnoDB's walks from the LRU tail.
//!
//! Two pools take the same random operations: one answers a user's
//! clean-victim scan and single-page flush, and `flushwise`'s graced LRU
//! chunk, from its LRU index, the other by walking the LRU (the reference
//! kept for tests). Every decision (fix
//! outcome, batch, write order) and every counter (NP_clean, NP_dirty,
//! pin vetoes, ...) must be identical after every step, with and without a
//! fast-hit shell that vetoes evictions, under changing scan depths and
//! free-page rules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use crate::buffer_pool::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, FreeCheck, LruMode, WriteKind};
use crate::fast_hits::{AccessRule, FastHits};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::redo_space::RedoConfig;
use crate::types::{FrameId, Lsn, PageId};

/// A fast-hit shell that holds pins by frame and vetoes their eviction.
#[derive(Clone, Default)]
struct PinShell(Arc<Mutex<HashMap<u32, u32>>>);

impl PinShell {
    fn pins(&self) -> std::sync::MutexGuard<'_, HashMap<u32, u32>> {
        self.0.lock().expect("pin shell lock")
    }
}

impl FastHits for PinShell {
    fn try_evict(&self, frame: FrameId, _page: PageId) -> bool {
        self.pins().get(&frame.0).copied().unwrap_or(0) == 0
    }
    fn is_pinned(&self, frame: FrameId) -> bool {
        self.pins().get(&frame.0).copied().unwrap_or(0) > 0
    }
    fn publish_access_rule(&self, _frame: FrameId, _rule: AccessRule) {}
    fn publish_freed_page_clock(&self, _clock: u64) {}
}

#[derive(Clone, Debug)]
enum Op {
    /// Ask for a page; `hold` keeps the fix (released by `Unfix`), else the
    /// page is unfixed at once (after its read, if `complete_read`).
    Fix {
        page: u32,
        attempt: u32,
        modify: bool,
        hold: bool,
        complete_read: bool,
    },
    Unfix {
        nth: usize,
    },
    ModifyHeld {
        nth: usize,
    },
    CompleteRead {
        nth: usize,
    },
    CompleteWrite {
        nth: usize,
    },
    FailWrite {
        nth: usize,
    },
    AbandonWrite {
        nth: usize,
    },
    LruBatch {
        max_pages: u32,
        free_target: u32,
        scan_limit: u32,
        clean_only: bool,
    },
    /// `flushwise`'s graced LRU chunk (rule 9): pages first accessed after
    /// `now - grace_us` within `depth` of the tail are passed over.
    GracedBatch {
        max_pages: u32,
        free_target: u32,
        grace_us: u64,
        depth: u32,
    },
    FlushBatch {
        pages: u32,
    },
    /// `flushwise`'s reserve (rule 2): free frames and the pages within
    /// `depth` of the tail an LRU batch would not write.
    Takeable {
        depth: u32,
    },
    FreeCheck,
    /// Hand the pools a new free-page rule (as the cleaner does).
    SetRule {
        user_scan_depth: u32,
        /// 0: MySQL 5.6.15's path, 1: 5.7's, 2: 5.1's free margin.
        version: u8,
    },
    /// The fast-hit shell pins or unpins a resident frame.
    Pin {
        frame: u32,
    },
    Unpin {
        nth: usize,
    },
}

fn op(pages: u32, frames: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0..pages, 0u32..3, any::<bool>(), prop::bool::weighted(0.2), prop::bool::weighted(0.8)).prop_map(
            |(page, attempt, modify, hold, complete_read)| Op::Fix { page, attempt, modify, hold, complete_read }
        ),
        3 => any::<usize>().prop_map(|nth| Op::Unfix { nth }),
        2 => any::<usize>().prop_map(|nth| Op::ModifyHeld { nth }),
        2 => any::<usize>().prop_map(|nth| Op::CompleteRead { nth }),
        5 => any::<usize>().prop_map(|nth| Op::CompleteWrite { nth }),
        1 => any::<usize>().prop_map(|nth| Op::FailWrite { nth }),
        1 => any::<usize>().prop_map(|nth| Op::AbandonWrite { nth }),
        2 => (1u32..12, 0..frames + 2, 1..frames + 4, prop::bool::weighted(0.2)).prop_map(
            |(max_pages, free_target, scan_limit, clean_only)| Op::LruBatch { max_pages, free_target, scan_limit, clean_only }
        ),
        2 => (1u32..12, 0..frames + 2, 0u64..200_000, 0..frames + 4).prop_map(
            |(max_pages, free_target, grace_us, depth)| Op::GracedBatch { max_pages, free_target, grace_us, depth }
        ),
        2 => (1u32..10).prop_map(|pages| Op::FlushBatch { pages }),
        2 => (0..frames + 4).prop_map(|depth| Op::Takeable { depth }),
        1 => Just(Op::FreeCheck),
        1 => (1..frames + 4, 0u8..3).prop_map(|(user_scan_depth, version)| Op::SetRule { user_scan_depth, version }),
        2 => (0..frames).prop_map(|frame| Op::Pin { frame }),
        2 => any::<usize>().prop_map(|nth| Op::Unpin { nth }),
    ]
}

/// One pool with its shell, if any.
struct Side {
    pool: BufferPool,
    shell: Option<PinShell>,
}

impl Side {
    fn new(config: BufferPoolConfig, with_shell: bool, linear: bool) -> Self {
        let shell = with_shell.then(PinShell::default);
        let mut pool = match &shell {
            Some(s) => BufferPool::with_fast_hits(config, Lsn(1), Box::new(s.clone())),
            None => BufferPool::new(config, Lsn(1)),
        }
        .expect("test pool configuration");
        if linear {
            pool.use_linear_victim_search();
        }
        Self { pool, shell }
    }
}

/// What is in flight, the same for both pools (their decisions agree).
#[derive(Default)]
struct Flight {
    held: Vec<FrameId>,
    reading: Vec<FrameId>,
    writing: Vec<FrameId>,
    pinned: Vec<u32>,
    lsn: u64,
}

/// Runs `f` on both pools; asserts they answer alike and returns the answer.
fn each<T: PartialEq + std::fmt::Debug>(
    sides: &mut [Side; 2],
    what: &str,
    mut f: impl FnMut(&mut BufferPool) -> T,
) -> T {
    let [indexed, linear] = sides;
    let a = f(&mut indexed.pool);
    let b = f(&mut linear.pool);
    assert_eq!(a, b, "{what}: the indexed pool vs the walking one");
    a
}

/// Applies `op` to both pools (`sides[0]` indexed, `sides[1]` walking).
fn step(sides: &mut [Side; 2], flight: &mut Flight, op: &Op, now_us: u64) {
    match *op {
        Op::Fix {
            page,
            attempt,
            modify,
            hold,
            complete_read,
        } => {
            let pg = PageId::new(1, page);
            let outcome = each(sides, "fix", |p| p.fix(pg, FixIntent::Read, attempt, now_us));
            match outcome {
                FixOutcome::Hit(f) | FixOutcome::Miss(f) => {
                    let missed = matches!(outcome, FixOutcome::Miss(_));
                    if missed && !complete_read {
                        flight.reading.push(f);
                        flight.held.push(f);
                        return;
                    }
                    if missed {
                        each(sides, "complete_read", |p| p.complete_read(f));
                    }
                    if modify {
                        let lsn = flight.lsn;
                        each(sides, "modify", |p| p.note_modification(f, Lsn(lsn), Lsn(lsn + 50)));
                        flight.lsn += 100;
                    }
                    if hold {
                        flight.held.push(f);
                    } else {
                        each(sides, "unfix", |p| p.unfix(f));
                    }
                }
                FixOutcome::SyncReplacementWrite(order) => flight.writing.push(order.frame),
                FixOutcome::UserLruBatch => {
                    let writes = each(sides, "user LRU batch", |p| p.take_user_lru_batch());
                    flight.writing.extend(writes.iter().map(|w| w.frame));
                }
                FixOutcome::WaitRead(_) | FixOutcome::NoFrame => {}
            }
        }
        Op::Unfix { nth } => {
            // A frame still being read keeps its fix until the read is done.
            let ready: Vec<usize> = (0..flight.held.len())
                .filter(|&i| !flight.reading.contains(&flight.held[i]))
                .collect();
            if let Some(&i) = ready.get(nth % ready.len().max(1)) {
                let f = flight.held.swap_remove(i);
                each(sides, "unfix", |p| p.unfix(f));
            }
        }
        Op::ModifyHeld { nth } => {
            let ready: Vec<FrameId> = flight
                .held
                .iter()
                .copied()
                .filter(|f| !flight.reading.contains(f))
                .collect();
            if let Some(&f) = ready.get(nth % ready.len().max(1)) {
                let lsn = flight.lsn;
                each(sides, "modify", |p| p.note_modification(f, Lsn(lsn), Lsn(lsn + 50)));
                flight.lsn += 100;
            }
        }
        Op::CompleteRead { nth } => {
            if !flight.reading.is_empty() {
                let f = flight.reading.swap_remove(nth % flight.reading.len());
                each(sides, "complete_read", |p| p.complete_read(f));
            }
        }
        Op::CompleteWrite { nth } => {
            if !flight.writing.is_empty() {
                let f = flight.writing.swap_remove(nth % flight.writing.len());
                each(sides, "complete_write", |p| p.complete_write(f));
            }
        }
        Op::FailWrite { nth } => {
            if !flight.writing.is_empty() {
                let f = flight.writing.swap_remove(nth % flight.writing.len());
                each(sides, "fail_write", |p| p.fail_write(f));
            }
        }
        Op::AbandonWrite { nth } => {
            if !flight.writing.is_empty() {
                let f = flight.writing.swap_remove(nth % flight.writing.len());
                each(sides, "abandon_write", |p| p.abandon_write(f));
            }
        }
        Op::LruBatch {
            max_pages,
            free_target,
            scan_limit,
            clean_only,
        } => {
            let mode = if clean_only {
                LruMode::CleanOnly
            } else {
                LruMode::EvictToFree
            };
            let chunk = each(sides, "LRU batch chunk", |p| {
                p.lru_batch_chunk(max_pages, free_target, scan_limit, mode)
            });
            flight.writing.extend(chunk.writes.iter().map(|w| w.frame));
        }
        Op::GracedBatch {
            max_pages,
            free_target,
            grace_us,
            depth,
        } => {
            let cutoff_us = now_us.saturating_sub(grace_us);
            let chunk = each(sides, "graced LRU chunk", |p| {
                p.lru_batch_chunk_graced(max_pages, free_target, cutoff_us, depth)
            });
            flight.writing.extend(chunk.writes.iter().map(|w| w.frame));
        }
        Op::FlushBatch { pages } => {
            let (writes, _) = each(sides, "flush-list batch", |p| {
                p.flush_list_batch(pages, Lsn::MAX, WriteKind::FlushList)
            });
            flight.writing.extend(writes.iter().map(|w| w.frame));
        }
        Op::Takeable { depth } => {
            each(sides, "takeable without a write", |p| p.takeable_without_write(depth));
        }
        Op::FreeCheck => {
            if let FreeCheck::SyncFlush(writes) = each(sides, "redo free check", |p| p.redo_free_check()) {
                flight.writing.extend(writes.iter().map(|w| w.frame));
            }
        }
        Op::SetRule {
            user_scan_depth,
            version,
        } => {
            let path = match version {
                0 => FreePagePath::MYSQL_5_6_15,
                1 => FreePagePath::MYSQL_5_7,
                _ => FreePagePath::MYSQL_5_1,
            };
            let rule = FreePageRule {
                user_scan_depth,
                ..path.resolve(user_scan_depth)
            };
            each(sides, "set_free_page_rule", |p| p.set_free_page_rule(rule));
        }
        Op::Pin { frame } => {
            if sides[0].shell.is_some() && sides[0].pool.page_of(FrameId(frame)).is_some() {
                for shell in sides.iter().filter_map(|s| s.shell.as_ref()) {
                    *shell.pins().entry(frame).or_default() += 1;
                }
                flight.pinned.push(frame);
            }
        }
        Op::Unpin { nth } => {
            if !flight.pinned.is_empty() {
                let frame = flight.pinned.swap_remove(nth % flight.pinned.len());
                for shell in sides.iter().filter_map(|s| s.shell.as_ref()) {
                    *shell.pins().entry(frame).or_default() -= 1;
                }
            }
        }
    }
}

fn run(frames: u32, old_blocks_time_us: u64, with_shell: bool, ops: &[Op]) {
    let mut config = BufferPoolConfig::small(frames);
    config.lru_old_min_len = (frames / 2).max(4);
    config.old_blocks_time_us = old_blocks_time_us;
    config.redo = RedoConfig {
        capacity_bytes: 2 << 20,
        thread_concurrency: 0,
    };
    let mut sides = [false, true].map(|linear| Side::new(config, with_shell, linear));
    let mut flight = Flight {
        lsn: 10,
        ..Flight::default()
    };
    for (i, op) in ops.iter().enumerate() {
        let now_us = 1_000 * i as u64;
        step(&mut sides, &mut flight, op, now_us);
        let [indexed, linear] = &sides;
        assert_eq!(
            indexed.pool.counters(),
            linear.pool.counters(),
            "counters after step {i}: {op:?}"
        );
        assert_eq!(indexed.pool.lru_pages(), linear.pool.lru_pages(), "LRU after step {i}");
        assert_eq!(
            indexed.pool.flush_list_pages(),
            linear.pool.flush_list_pages(),
            "flush list after step {i}"
        );
        assert_eq!(
            indexed.pool.free_len(),
            linear.pool.free_len(),
            "free list after step {i}"
        );
        indexed.pool.check_invariants();
    }
}

fn case() -> impl Strategy<Value = (u32, u64, Vec<Op>)> {
    (prop::sample::select(vec![8u32, 16, 40, 64]), 0u64..4_000).prop_flat_map(|(frames, old_blocks_time_us)| {
        (
            Just(frames),
            Just(old_blocks_time_us),
            proptest::collection::vec(op(frames * 2, frames), 1..400),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Without a fast-hit shell (the simulator): the indexed searches take
    /// the same victims and count the same pages as the walks.
    #[test]
    fn indexed_victim_search_decides_and_counts_like_the_lru_walk((frames, old_time, ops) in case()) {
        run(frames, old_time, false, &ops);
    }

    /// With a fast-hit shell pinning frames (the engine): vetoed candidates
    /// are skipped and counted exactly as the walk skips and counts them.
    #[test]
    fn indexed_victim_search_with_shell_pins_decides_and_counts_like_the_lru_walk((frames, old_time, ops) in case()) {
        run(frames, old_time, true, &ops);
    }
}

/// A deep scan in a large pool, where only the index is fast: a pool of
/// 4096 frames, its 3000 tail pages dirty, one user scan depth below the
/// first clean page and one above.
#[test]
fn deep_tail_of_dirty_pages_gives_the_walks_counts() {
    for (depth, expect_clean) in [(2_000u32, false), (3_500, true)] {
        let mut sides = [false, true].map(|linear| {
            let mut side = Side::new(BufferPoolConfig::small(4096), false, linear);
            let p = &mut side.pool;
            for n in 0..4096 {
                let FixOutcome::Miss(f) = p.fix(PageId::new(1, n), FixIntent::Read, 0, 0) else {
                    panic!("fill")
                };
                p.complete_read(f);
                p.unfix(f);
            }
            let tail: Vec<PageId> = p.lru_pages().into_iter().rev().take(3_000).collect();
            for (i, pg) in tail.iter().enumerate() {
                let FixOutcome::Hit(f) = p.fix(*pg, FixIntent::Read, 0, 0) else {
                    panic!("resident")
                };
                p.note_modification(f, Lsn(10 + 100 * i as u64), Lsn(60 + 100 * i as u64));
                p.unfix(f);
            }
            p.set_free_page_rule(FreePageRule {
                user_scan_depth: depth,
                ..FreePagePath::MYSQL_5_6_15.resolve(depth)
            });
            let outcome = p.fix(PageId::new(1, 9_999), FixIntent::Read, 0, 0);
            (side, outcome)
        });
        let [(indexed, a), (linear, b)] = &mut sides;
        assert_eq!(a, b);
        assert_eq!(matches!(a, FixOutcome::Miss(_)), expect_clean, "depth {depth}: {a:?}");
        assert_eq!(indexed.pool.counters(), linear.pool.counters());
        let counters = indexed.pool.counters();
        if expect_clean {
            assert_eq!(counters.clean_victim_scanned, 3_001);
        } else {
            assert_eq!(counters.clean_victim_scanned, 2_000);
            assert_eq!(counters.dirty_victim_scanned, 1);
        }
        indexed.pool.check_invariants();
    }
}
