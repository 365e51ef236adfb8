//! Scenarios of the hit fast path: many threads fixing pages of a pool much
//! smaller than the data, with modifications, while the cleaner evicts;
//! page contents, page ids, exact request counts and the invariants of the
//! core and the hit path are checked, with the fast path on and off.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use common::buffer::{allocate_filled, open_db, shell_config};
use flushwise_engine::buffer::ShellConfig;
use flushwise_engine::page_store::{Latch, PageGuard, PageStore};

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Bytes 16..16+STAMP_BYTES of a page hold a stamp of (page, version).
const STAMP_BYTES: usize = 256;

fn stamp(page_no: u32, version: u64) -> Vec<u8> {
    (0..STAMP_BYTES)
        .map(|i| (i as u64 ^ u64::from(page_no).wrapping_mul(131) ^ version.wrapping_mul(7)) as u8)
        .collect()
}

/// Checks a page's tag, version and stamp; returns its version.
fn verify(g: &impl PageGuard, page_no: u32) -> u64 {
    assert_eq!(
        get_u64(g, 0),
        u64::from(page_no),
        "page {page_no} holds another page's bytes"
    );
    let version = get_u64(g, 8);
    assert_eq!(
        &g[16..16 + STAMP_BYTES],
        &stamp(page_no, version)[..],
        "page {page_no} torn"
    );
    version
}

fn stress(config: ShellConfig) {
    const THREADS: usize = 6;
    const PAGES: u32 = 80;
    const OPS_PER_THREAD: u64 = 3_000;
    let fast = config.hit_fast_path;
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path(), true, config, 32 << 20, false, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, PAGES);
    for &p in &pages {
        let mut g = store.latch(p, Latch::Exclusive).unwrap();
        let b = g.bytes_mut();
        put_u64(b, 0, u64::from(p));
        put_u64(b, 8, 0);
        b[16..16 + STAMP_BYTES].copy_from_slice(&stamp(p, 0));
        store.commit(vec![g]).unwrap();
    }
    let versions: Vec<AtomicU64> = (0..PAGES).map(|_| AtomicU64::new(0)).collect();
    let fixes = AtomicU64::new(0);
    let requests_before = db.shell.metrics().Innodb_buffer_pool_read_requests;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                db.shell.check_invariants();
                std::thread::sleep(Duration::from_millis(3));
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (store, pages, versions, fixes) = (&store, &pages, &versions, &fixes);
                s.spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ ((t as u64 + 1) * 0x1234_5678);
                    let mut mine = 0u64;
                    for _ in 0..OPS_PER_THREAD {
                        // A hot quarter of the pages gets most requests, so
                        // hits and misses interleave on a 16-frame pool.
                        let r = next(&mut rng);
                        let span = if r & 3 == 0 { PAGES } else { PAGES / 4 };
                        let i = ((r >> 8) % u64::from(span)) as usize;
                        match (r >> 4) % 8 {
                            0 | 1 => {
                                let mut g = store.latch(pages[i], Latch::Exclusive).unwrap();
                                mine += 1;
                                let v = verify(&g, pages[i]) + 1;
                                let b = g.bytes_mut();
                                put_u64(b, 8, v);
                                b[16..16 + STAMP_BYTES].copy_from_slice(&stamp(pages[i], v));
                                store.commit(vec![g]).unwrap();
                                versions[i].fetch_add(1, Ordering::Relaxed);
                            }
                            2 => {
                                // Two pages at once, in page order (latch order).
                                let j = ((r >> 24) % u64::from(PAGES)) as usize;
                                let (a, b) = (i.min(j), i.max(j));
                                let ga = store.latch(pages[a], Latch::Shared).unwrap();
                                mine += 1;
                                verify(&ga, pages[a]);
                                if a != b {
                                    let gb = store.latch(pages[b], Latch::Shared).unwrap();
                                    mine += 1;
                                    verify(&gb, pages[b]);
                                }
                            }
                            _ => {
                                let g = store.latch(pages[i], Latch::Shared).unwrap();
                                mine += 1;
                                verify(&g, pages[i]);
                            }
                        }
                    }
                    fixes.fetch_add(mine, Ordering::Relaxed);
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    let m = db.shell.metrics();
    assert_eq!(
        m.Innodb_buffer_pool_read_requests - requests_before,
        fixes.load(Ordering::Relaxed),
        "every fix counted exactly once"
    );
    assert!(
        m.Innodb_buffer_pool_reads > 0 && m.counters.evictions > 0,
        "misses and evictions happened: {m:?}"
    );
    if fast {
        assert!(m.counters.fast_hits > 0, "hits went the fast path");
    } else {
        assert_eq!(m.counters.fast_hits, 0);
    }
    assert_eq!(db.shell.fast_pins_held(), 0, "every pin released");
    db.shell.check_invariants();
    for (i, &p) in pages.iter().enumerate() {
        let g = store.latch(p, Latch::Shared).unwrap();
        assert_eq!(
            verify(&g, p),
            versions[i].load(Ordering::Relaxed),
            "page {p}: lost update"
        );
    }
    drop(store);
    db.close();
}

#[test]
fn concurrent_fixes_on_a_tiny_pool_keep_contents_counts_and_invariants_fast_path() {
    stress(shell_config(16, "self-tuning"));
}

#[test]
fn concurrent_fixes_on_a_tiny_pool_keep_contents_counts_and_invariants_core_path() {
    stress(ShellConfig {
        hit_fast_path: false,
        ..shell_config(16, "self-tuning")
    });
}

#[test]
fn concurrent_fixes_with_the_lru_batch_evicting_keep_contents_fast_path() {
    stress(shell_config(24, "mysql56"));
}

#[test]
fn cached_hits_are_counted_exactly_and_need_no_core_lock() {
    const THREADS: usize = 4;
    const HITS_PER_THREAD: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    // No cleaner: its LRU batch would evict clean pages to refill the free list.
    let config = ShellConfig {
        background_threads: false,
        ..shell_config(128, "self-tuning")
    };
    let db = open_db(dir.path(), true, config, 16 << 20, false, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 32);
    let before = db.shell.metrics().counters;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (store, pages) = (&store, &pages);
            s.spawn(move || {
                let mut rng = 77 + t as u64;
                for _ in 0..HITS_PER_THREAD {
                    let p = pages[(next(&mut rng) % pages.len() as u64) as usize];
                    drop(store.latch(p, Latch::Shared).unwrap());
                }
            });
        }
    });
    let c = db.shell.metrics().counters.since(&before);
    assert_eq!(c.requests, THREADS as u64 * HITS_PER_THREAD);
    assert_eq!(c.reads, 0, "the working set is cached");
    assert_eq!(
        c.fast_hits, c.requests,
        "nothing evicted, so no hit moves a page: all are fast"
    );
    assert_eq!(db.shell.fast_pins_held(), 0);
    db.shell.check_invariants();
    drop(store);
    db.close();
}
