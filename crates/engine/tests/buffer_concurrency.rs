//! Scenarios where user threads must write pages themselves: a pool too
//! small for the cleaner to keep up, and writers past the redo sync margin.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::buffer::{allocate_filled, open_db, read_payload, shell_config};
use flushwise_engine::page_store::{Latch, PageGuard, PageStore};

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// xorshift64: a seeded page picker.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn tiny_pool_forces_sync_replacement_writes_and_stays_correct() {
    const THREADS: usize = 8;
    const PAGES: u32 = 96;
    const OPS_PER_THREAD: u64 = 400;
    let dir = tempfile::tempdir().unwrap();
    // mysql56 cleans once per second: between iterations users find only
    // dirty victims and write them themselves.
    let db = open_db(dir.path(), true, shell_config(16, "mysql56"), 16 << 20, true, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, PAGES);
    // Counters at payload offset 0 (page total) and 8 * (1 + thread).
    for &p in &pages {
        let mut g = store.latch(p, Latch::Exclusive).unwrap();
        g.bytes_mut()[..8 * (THREADS + 1)].fill(0);
        store.commit(vec![g]).unwrap();
    }
    let expected: Vec<AtomicU64> = (0..PAGES).map(|_| AtomicU64::new(0)).collect();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                db.shell.with_core(|pool| pool.check_invariants());
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (store, pages, expected) = (&store, &pages, &expected);
                s.spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ ((t as u64 + 1) * 0x1234_5678);
                    for _ in 0..OPS_PER_THREAD {
                        let i = (next(&mut rng) % u64::from(PAGES)) as usize;
                        let mut g = store.latch(pages[i], Latch::Exclusive).unwrap();
                        let b = g.bytes_mut();
                        put_u64(b, 0, get_u64(b, 0) + 1);
                        let at = 8 * (t + 1);
                        put_u64(b, at, get_u64(b, at) + 1);
                        store.commit(vec![g]).unwrap();
                        expected[i].fetch_add(1, Ordering::Relaxed);
                        if next(&mut rng) & 3 == 0 {
                            // A reader too, so shared and exclusive latches mix.
                            let j = (next(&mut rng) % u64::from(PAGES)) as usize;
                            let _r = store.latch(pages[j], Latch::Shared).unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    let m = db.shell.metrics();
    assert!(
        m.buffer_LRU_single_flush_total_pages > 0,
        "no synchronous replacement write: {m:?}"
    );
    assert!(m.Innodb_buffer_pool_wait_free > 0);
    let check = |store: &flushwise_engine::buffer::SpaceStore| {
        let mut total = 0;
        for (i, &p) in pages.iter().enumerate() {
            let b = read_payload(store, p);
            let per_thread: u64 = (0..THREADS).map(|t| get_u64(&b, 8 * (t + 1))).sum();
            assert_eq!(get_u64(&b, 0), per_thread, "page {p}");
            assert_eq!(get_u64(&b, 0), expected[i].load(Ordering::Relaxed), "page {p}");
            total += per_thread;
        }
        assert_eq!(total, THREADS as u64 * OPS_PER_THREAD);
    };
    check(&store);
    db.shell.with_core(|pool| pool.check_invariants());
    drop(store);
    db.close();
    let db = open_db(dir.path(), false, shell_config(16, "mysql56"), 16 << 20, true, None);
    let store = db.shell.store(1).unwrap();
    check(&store);
    drop(store);
    db.close();
}

#[test]
fn writers_past_sync_margin_flush_synchronously() {
    // A 2 MiB log: the sync margin is under 1 MiB of redo, i.e. about 60
    // commits that rewrite a whole 16 KiB page.
    const REDO_BYTES: u64 = 2 << 20;
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path(), true, shell_config(256, "mysql56"), REDO_BYTES, false, None);
    let sync_margin = db
        .shell
        .with_core(|pool| pool.redo().margins.max_modified_age_sync_bytes);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 64);
    for &p in &pages {
        let mut g = store.latch(p, Latch::Exclusive).unwrap();
        put_u64(g.bytes_mut(), 0, 0);
        store.commit(vec![g]).unwrap();
    }
    let started = Instant::now();
    let mut version = 0u64;
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (store, pages) = (&store, &pages);
            s.spawn(move || {
                for k in 0..400u64 {
                    let p = pages[((k * 2 + t) % pages.len() as u64) as usize];
                    let mut g = store.latch(p, Latch::Exclusive).unwrap();
                    let b = g.bytes_mut();
                    let v = get_u64(b, 0) + 1;
                    // Rewrite every byte: a full-page redo record.
                    for (i, x) in b.iter_mut().enumerate() {
                        *x = (i as u64 ^ v) as u8;
                    }
                    put_u64(b, 0, v);
                    store.commit(vec![g]).unwrap();
                }
            });
        }
    });
    version += 1;
    let m = db.shell.metrics();
    assert!(
        m.buffer_flush_sync_total_pages > 0,
        "no synchronous recoverability write in {:?}: {m:?}",
        started.elapsed()
    );
    assert!(m.buffer_flush_sync_waits > 0);
    let age = db.shell.with_core(|pool| pool.redo_age_bytes());
    assert!(
        age <= sync_margin + (64 << 10),
        "age {age} vs sync margin {sync_margin}"
    );
    let total: u64 = pages.iter().map(|&p| get_u64(&read_payload(&store, p), 0)).sum();
    assert_eq!(total, 800 * version);
    db.shell.with_core(|pool| pool.check_invariants());
    drop(store);
    db.close();
}
