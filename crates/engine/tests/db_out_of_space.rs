//! Scenario: the data file cannot grow (its `data_file_max_bytes`, the same
//! path a full disk takes). Writers that need a new page get an error that
//! says so, roll back and stop; nothing hangs, the database is not
//! poisoned, everything committed stays (also across reopen), and freed
//! pages are reused. The 64-frame pool also guards a fixed self-deadlock:
//! a writer holding latches on its own dirty pages must not pick one of
//! them for its single-page flush.

use std::collections::BTreeSet;
use std::time::Duration;

use flushwise_engine::db::{Database, DbOptions, IndexId};
use flushwise_engine::page::PageSize;

const MAX_BYTES: u64 = 1 << 20;
const THREADS: u32 = 4;
const ROWS_PER_TXN: u32 = 10;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 256 << 10,
        redo_bytes: 8 << 20,
        data_file_max_bytes: Some(MAX_BYTES),
        lock_wait_timeout: Duration::from_millis(500),
        ..DbOptions::default()
    }
}

fn key(thread: u32, i: u32) -> Vec<u8> {
    format!("t{thread}-{i:07}").into_bytes()
}

fn value(thread: u32, i: u32) -> Vec<u8> {
    format!("{thread}:{i}:{}", "x".repeat(180)).into_bytes()
}

/// Inserts transactions of `ROWS_PER_TXN` rows until one fails; returns the
/// committed keys and the error's message.
fn fill(db: &Database, idx: IndexId, thread: u32) -> (Vec<Vec<u8>>, String) {
    let mut committed = Vec::new();
    for batch in 0u32.. {
        let mut txn = db.begin();
        let mut failed = None;
        for j in 0..ROWS_PER_TXN {
            let i = batch * ROWS_PER_TXN + j;
            if let Err(e) = txn.insert(idx, &key(thread, i), &value(thread, i)) {
                failed = Some(e);
                break;
            }
        }
        match failed {
            None => {
                txn.commit().expect("commit");
                committed.extend((0..ROWS_PER_TXN).map(|j| key(thread, batch * ROWS_PER_TXN + j)));
            }
            Some(e) => {
                assert!(
                    e.is_out_of_space(),
                    "thread {thread}: unexpected error after {} rows: {e}",
                    committed.len()
                );
                txn.rollback()
                    .expect("the rollback of a transaction that ran out of space");
                return (committed, e.to_string());
            }
        }
    }
    unreachable!("the loop returns when the space is full")
}

fn present(db: &Database, idx: IndexId) -> BTreeSet<Vec<u8>> {
    let mut txn = db.begin();
    let rows = txn
        .range(
            idx,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            flushwise_engine::btree::Direction::Forward,
            None,
        )
        .unwrap();
    txn.commit().unwrap();
    rows.into_iter().map(|(k, _)| k).collect()
}

#[test]
fn writers_stop_cleanly_when_the_data_file_is_full_and_committed_rows_survive() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("rows", true).unwrap();

    let outcomes: Vec<(Vec<Vec<u8>>, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn({
                    let db = &db;
                    move || fill(db, idx, t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut committed: BTreeSet<Vec<u8>> = BTreeSet::new();
    for (keys, message) in &outcomes {
        assert!(message.contains("tablespace is full"), "{message}");
        assert!(message.contains("flushwise.data"), "{message}");
        committed.extend(keys.iter().cloned());
    }
    assert!(committed.len() > 1000, "only {} rows fit in 1 MiB", committed.len());
    let data_len = std::fs::metadata(&db.paths().data).unwrap().len();
    assert!(data_len <= MAX_BYTES, "data file {data_len} bytes");

    // Not poisoned: reads see exactly the committed rows (no rolled-back
    // row), and deletes work.
    assert_eq!(present(&db, idx), committed);
    assert_eq!(db.locks_held(), 0);
    // A contiguous half, so whole leaves empty and go back to the free set.
    let doomed: Vec<Vec<u8>> = committed.iter().take(committed.len() / 2).cloned().collect();
    for chunk in doomed.chunks(50) {
        let mut txn = db.begin();
        for k in chunk {
            assert!(txn.delete(idx, k).unwrap());
        }
        txn.commit().unwrap();
    }
    for k in &doomed {
        committed.remove(k);
    }

    // The freed pages are used again: new rows fit without growing the file.
    let mut txn = db.begin();
    for i in 0..100 {
        txn.insert(idx, &key(99, i), &value(99, i)).unwrap();
        committed.insert(key(99, i));
    }
    txn.commit().unwrap();
    db.check().unwrap();
    db.close().unwrap();

    let db = Database::open(dir.path(), options()).unwrap();
    let idx = db.index("rows").unwrap();
    assert_eq!(present(&db, idx), committed);
    db.check().unwrap();
    db.close().unwrap();

    // Without the maximum the same database grows again.
    let db = Database::open(
        dir.path(),
        DbOptions {
            data_file_max_bytes: None,
            ..options()
        },
    )
    .unwrap();
    let idx = db.index("rows").unwrap();
    let (more, _) = std::thread::scope(|s| {
        s.spawn(|| {
            let mut txn = db.begin();
            for i in 0..5000 {
                txn.insert(idx, &key(7, 1_000_000 + i), &value(7, i)).unwrap();
            }
            txn.commit().unwrap();
            (5000, ())
        })
        .join()
        .unwrap()
    });
    assert_eq!(present(&db, idx).len(), committed.len() + more);
    assert!(std::fs::metadata(&db.paths().data).unwrap().len() > MAX_BYTES);
    db.close().unwrap();
}
