//! Criterion benchmarks of the buffer pool's hot paths.
//!
//! - `hit_fix_unfix/one_page`: a fix+unfix pair on one resident page;
//! - `hit_fix_unfix/random_64k`: pairs over 64Ki resident pages picked from a
//!   precomputed random array, so page-table hashing and cache misses show;
//! - `miss_evict_cycle`: a full pool of clean pages; every fix misses,
//!   evicts the LRU tail and completes its read;
//! - `miss_with_dirty_victims`: a full pool of dirty pages; every fix forces
//!   a synchronous replacement write of the tail, then reads into the frame
//!   and dirties it again.
//!
//! Every pool has evicted at least one page before measuring, so the
//! freed-page clock runs and `on_access` does its real work.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use flushwise_core::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, Lsn, PageId};

const RANDOM_PAGES: u32 = 1 << 16;

fn page(n: u32) -> PageId {
    PageId::new(1, n)
}

/// A pool of `frames` frames holding pages `0..frames + 1` (one eviction).
fn full_pool(frames: u32) -> BufferPool {
    let mut pool = BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap();
    for n in 0..=frames {
        match pool.fix(page(n), FixIntent::Read, 0, 0) {
            FixOutcome::Miss(f) => {
                pool.complete_read(f);
                pool.unfix(f);
            }
            other => panic!("loading page {n}: {other:?}"),
        }
    }
    pool
}

/// xorshift64*: a fixed page sequence with no dependency.
fn random_pages(count: usize, resident: &[PageId]) -> Vec<PageId> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..count)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            resident[(x.wrapping_mul(0x2545_F491_4F6C_DD1D) % resident.len() as u64) as usize]
        })
        .collect()
}

fn hit_fix_unfix(c: &mut Criterion) {
    let mut group = c.benchmark_group("hit_fix_unfix");
    group.throughput(Throughput::Elements(1));
    let mut pool = full_pool(1024);
    let hot = pool.lru_pages()[0];
    group.bench_function("one_page", |b| {
        b.iter(|| {
            let FixOutcome::Hit(f) = pool.fix(black_box(hot), FixIntent::Read, 0, 0) else {
                unreachable!()
            };
            pool.unfix(f);
        })
    });
    let mut pool = full_pool(RANDOM_PAGES);
    let resident = pool.lru_pages();
    let sequence = random_pages(1 << 20, &resident);
    let mut i = 0;
    group.bench_function("random_64k", |b| {
        b.iter(|| {
            let p = sequence[i & (sequence.len() - 1)];
            i += 1;
            let FixOutcome::Hit(f) = pool.fix(p, FixIntent::Read, 0, 0) else {
                unreachable!()
            };
            pool.unfix(f);
        })
    });
    group.finish();
}

fn miss_evict_cycle(c: &mut Criterion) {
    let frames = 8192;
    let mut pool = full_pool(frames);
    let mut next = frames + 1;
    let mut group = c.benchmark_group("miss_evict_cycle");
    group.throughput(Throughput::Elements(1));
    group.bench_function("clean_tail", |b| {
        b.iter(|| {
            let FixOutcome::Miss(f) = pool.fix(page(next), FixIntent::Read, 0, 0) else {
                unreachable!()
            };
            next += 1;
            pool.complete_read(f);
            pool.unfix(f);
        })
    });
    group.finish();
}

/// One miss in a pool whose every page is dirty: sync replacement write,
/// eviction on completion, read into the freed frame, modification.
fn dirty_miss(pool: &mut BufferPool, n: u32) {
    let mut attempt = 0;
    let frame = loop {
        match pool.fix(page(n), FixIntent::Read, attempt, 0) {
            FixOutcome::Miss(f) => break f,
            FixOutcome::SyncReplacementWrite(order) => {
                pool.complete_write(order.frame);
                attempt += 1;
            }
            other => panic!("{other:?}"),
        }
    };
    pool.complete_read(frame);
    let start = pool.current_lsn().advance(1);
    pool.note_modification(frame, start, start.advance(100));
    pool.unfix(frame);
}

fn miss_with_dirty_victims(c: &mut Criterion) {
    let frames = 8192;
    let mut pool = full_pool(frames);
    for p in pool.lru_pages() {
        let FixOutcome::Hit(f) = pool.fix(p, FixIntent::Read, 0, 0) else {
            unreachable!()
        };
        let start = pool.current_lsn().advance(1);
        pool.note_modification(f, start, start.advance(100));
        pool.unfix(f);
    }
    let mut next = frames + 1;
    let mut group = c.benchmark_group("miss_with_dirty_victims");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sync_replacement", |b| {
        b.iter(|| {
            dirty_miss(&mut pool, next);
            next += 1;
        })
    });
    group.finish();
}

criterion_group!(benches, hit_fix_unfix, miss_evict_cycle, miss_with_dirty_victims);
criterion_main!(benches);
