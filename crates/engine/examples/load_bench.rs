//! Bulk load benchmark: rows per second of `Database::load_sorted` on one
//! thread and on two threads (each loading its own index), beside
//! `Txn::insert` in batches, on the same machine and the same rows: 16-byte
//! keys in ascending order (as a TPC-C loader produces them), values of
//! 100..=300 bytes. Row generation is inside the timing, as in a real
//! loader. Each measurement uses a fresh database (16 KiB pages, buffered
//! I/O, commits synced) and ends durable (`close`).
//!
//! Run: `cargo run --release -p flushwise-engine --example load_bench -- [rows] [batch]`
//! (defaults: 400000 rows per index, 1000 inserts per transaction).

use std::path::{Path, PathBuf};
use std::time::Instant;

use flushwise_engine::db::{Database, DbOptions, IndexId};

fn key(table: u64, i: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    k.extend_from_slice(&table.to_be_bytes());
    k.extend_from_slice(&i.to_be_bytes());
    k
}

fn value(i: u64) -> Vec<u8> {
    let len = 100 + (i.wrapping_mul(7919) % 201) as usize;
    vec![b'a' + (i % 26) as u8; len]
}

fn rows(table: u64, n: u64) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> {
    (0..n).map(move |i| (key(table, i), value(i)))
}

fn options() -> DbOptions {
    DbOptions {
        buffer_pool_bytes: 256 << 20,
        redo_bytes: 512 << 20,
        ..DbOptions::default()
    }
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("flushwise-load-bench-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Rows per second of `Txn::insert`, `batch` rows per transaction.
fn txn_inserts(n: u64, batch: u64) -> Res<f64> {
    let scratch = Scratch::new("txn");
    let db = Database::create(scratch.path(), options())?;
    let index = db.create_index("t", true)?;
    let start = Instant::now();
    let mut it = rows(1, n).peekable();
    while it.peek().is_some() {
        let mut txn = db.begin();
        for (k, v) in it.by_ref().take(batch as usize) {
            txn.insert(index, &k, &v)?;
        }
        txn.commit()?;
    }
    db.close()?;
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

/// Rows per second of `threads` concurrent loads of `n` rows, one index each.
fn loads(n: u64, threads: u64) -> Res<f64> {
    let scratch = Scratch::new(&format!("load{threads}"));
    let db = Database::create(scratch.path(), options())?;
    let indexes: Vec<IndexId> = (0..threads)
        .map(|t| db.create_index(&format!("t{t}"), true))
        .collect::<Result<_, _>>()?;
    let start = Instant::now();
    let reports = std::thread::scope(|s| {
        let handles: Vec<_> = indexes
            .iter()
            .enumerate()
            .map(|(t, &index)| {
                let db = &db;
                s.spawn(move || db.load_sorted(index, rows(t as u64, n)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a load thread panicked"))
            .collect::<Vec<_>>()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut total = 0;
    for report in reports {
        let report = report??;
        total += report.rows;
        println!(
            "  load of {} rows: {} pages ({} leaves, height {}), {:.1} MB, {:.0} rows/s on its thread; {:.0} ms writing, {:.0} ms in fsync",
            report.rows,
            report.pages,
            report.leaf_pages,
            report.height,
            report.bytes as f64 / 1e6,
            report.rows_per_sec(),
            report.write_elapsed.as_secs_f64() * 1e3,
            report.sync_elapsed.as_secs_f64() * 1e3
        );
    }
    db.check()?;
    db.close()?;
    Ok(total as f64 / elapsed)
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(400_000);
    let batch: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    println!("{n} rows per index, 16-byte ascending keys, 100..=300-byte values, 16 KiB pages");
    let txn = txn_inserts(n, batch)?;
    println!("Txn::insert, {batch} rows per transaction: {txn:>10.0} rows/s");
    let one = loads(n, 1)?;
    println!(
        "load_sorted, 1 thread:                   {one:>10.0} rows/s  ({:.1}x Txn::insert)",
        one / txn
    );
    let two = loads(n, 2)?;
    println!(
        "load_sorted, 2 threads (2 indexes):      {two:>10.0} rows/s  ({:.1}x Txn::insert, {:.2}x 1 thread)",
        two / txn,
        two / one
    );
    Ok(())
}
