//! Engine benchmark: in-memory point lookups and inserts per second on one
//! thread, through the public `Database` API (transactions, locks, B+tree,
//! redo). The pool holds the whole index, so no page is read from disk.
//! Run: `cargo run --release -p flushwise-engine --example engine_bench -- [rows]`

use std::time::Instant;

use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::redo::FlushMode;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let dir = std::env::temp_dir().join(format!("flushwise-bench-{}", std::process::id()));
    let options = DbOptions {
        buffer_pool_bytes: 256 << 20,
        redo_bytes: 512 << 20,
        // Durability per commit is the log's cost, not the tree's: fsync once a second here.
        flush_log_at_trx_commit: FlushMode::EverySecond,
        ..DbOptions::default()
    };
    let db = Database::create(&dir, options)?;
    let index = db.create_index("bench", true)?;
    let value = [7u8; 100];
    let key = |i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes();

    let start = Instant::now();
    let batch = 100;
    let mut i = 0;
    while i < rows {
        let mut txn = db.begin();
        for j in i..(i + batch).min(rows) {
            txn.insert(index, &key(j), &value)?;
        }
        txn.commit()?;
        i += batch;
    }
    let insert_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let mut found = 0u64;
    let mut txn = db.begin();
    for n in 0..rows {
        // Read-only: one long transaction, shared locks released at commit.
        if txn.get(index, &key((n * 7919) % rows))?.is_some() {
            found += 1;
        }
        if n % 1000 == 999 {
            txn.commit()?;
            txn = db.begin();
        }
    }
    txn.commit()?;
    let lookup_s = start.elapsed().as_secs_f64();
    assert_eq!(found, rows);

    println!("rows {rows}, 8-byte keys, 100-byte values, batches of {batch} inserts per transaction");
    println!("inserts/s        {:>12.0}", rows as f64 / insert_s);
    println!("point lookups/s  {:>12.0}", rows as f64 / lookup_s);
    db.close()?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
