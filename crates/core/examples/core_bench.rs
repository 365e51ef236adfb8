//! A quick throughput check of the buffer pool's hot paths, for the README:
//! `cargo run --release -p flushwise-core --example core_bench`.
//!
//! Times N = 20M fix+unfix pairs on resident pages (one hot page, and 64Ki
//! pages in a random order) and 2M miss/evict cycles (clean victims; dirty
//! victims through a synchronous replacement write), single-threaded, with
//! `std::time::Instant`. The Criterion suite (`benches/buffer_pool.rs`)
//! measures the same paths with statistics.

use std::hint::black_box;
use std::time::Instant;

use flushwise_core::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, Lsn, PageId};

const HIT_PAIRS: u64 = 20_000_000;
const MISS_CYCLES: u64 = 2_000_000;

fn page(n: u32) -> PageId {
    PageId::new(1, n)
}

/// A pool of `frames` frames holding pages `0..frames + 1` (one eviction, so
/// the freed-page clock runs and `on_access` does its real work).
fn full_pool(frames: u32) -> BufferPool {
    let mut pool = BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap();
    for n in 0..=frames {
        let FixOutcome::Miss(f) = pool.fix(page(n), FixIntent::Read, 0, 0) else {
            panic!("loading page {n}")
        };
        pool.complete_read(f);
        pool.unfix(f);
    }
    pool
}

fn report(what: &str, count: u64, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{what:<40} {:>8.2} M/s  ({count} in {secs:.3} s, {:.1} ns each)",
        count as f64 / secs / 1e6,
        secs * 1e9 / count as f64
    );
}

fn hit_pairs(pool: &mut BufferPool, pages: &[PageId]) -> u64 {
    let mask = pages.len() - 1;
    let mut sum = 0u64;
    for i in 0..HIT_PAIRS as usize {
        let FixOutcome::Hit(f) = pool.fix(black_box(pages[i & mask]), FixIntent::Read, 0, 0) else {
            panic!("expected a hit")
        };
        sum += u64::from(f.0);
        pool.unfix(f);
    }
    sum
}

fn main() {
    // Hits on one page.
    let mut pool = full_pool(1024);
    let hot = [pool.lru_pages()[0]];
    let started = Instant::now();
    black_box(hit_pairs(&mut pool, &hot));
    report("hit fix+unfix pairs/s (1 page)", HIT_PAIRS, started);

    // Hits over 64Ki pages in a precomputed random order.
    let mut pool = full_pool(1 << 16);
    let resident = pool.lru_pages();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let order: Vec<PageId> = (0..1 << 20)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            resident[(x.wrapping_mul(0x2545_F491_4F6C_DD1D) % resident.len() as u64) as usize]
        })
        .collect();
    let started = Instant::now();
    black_box(hit_pairs(&mut pool, &order));
    report("hit fix+unfix pairs/s (64Ki random)", HIT_PAIRS, started);

    // Misses evicting clean tail pages.
    let frames = 8192;
    let mut pool = full_pool(frames);
    let started = Instant::now();
    for n in 0..MISS_CYCLES as u32 {
        let FixOutcome::Miss(f) = pool.fix(page(frames + 1 + n), FixIntent::Read, 0, 0) else {
            panic!("expected a miss")
        };
        pool.complete_read(f);
        pool.unfix(f);
    }
    report("miss/evict cycles/s (clean victims)", MISS_CYCLES, started);

    // Misses whose victims are dirty: synchronous replacement writes.
    let mut pool = full_pool(frames);
    for p in pool.lru_pages() {
        let FixOutcome::Hit(f) = pool.fix(p, FixIntent::Read, 0, 0) else {
            panic!()
        };
        let start = pool.current_lsn().advance(1);
        pool.note_modification(f, start, start.advance(100));
        pool.unfix(f);
    }
    let started = Instant::now();
    for n in 0..MISS_CYCLES as u32 {
        let mut attempt = 0;
        let f = loop {
            match pool.fix(page(frames + 1 + n), FixIntent::Read, attempt, 0) {
                FixOutcome::Miss(f) => break f,
                FixOutcome::SyncReplacementWrite(order) => {
                    pool.complete_write(order.frame);
                    attempt += 1;
                }
                other => panic!("{other:?}"),
            }
        };
        pool.complete_read(f);
        let start = pool.current_lsn().advance(1);
        pool.note_modification(f, start, start.advance(100));
        pool.unfix(f);
    }
    report("miss/evict cycles/s (dirty victims)", MISS_CYCLES, started);
    pool.check_invariants();
}
