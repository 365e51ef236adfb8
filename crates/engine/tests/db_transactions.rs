//! Scenarios of the database layer: durability of commits, rollback with
//! steal (uncommitted pages on disk), deadlocks and lock timeouts.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use flushwise_engine::db::{Database, DbError, DbOptions, IndexId};
use flushwise_engine::page::PageSize;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 8 << 20,
        lock_wait_timeout: Duration::from_secs(2),
        ..DbOptions::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, tag: &str) -> Vec<u8> {
    format!("{tag}-{i:06}-{}", "v".repeat(100)).into_bytes()
}

fn all(db: &Database, idx: IndexId) -> Vec<(Vec<u8>, Vec<u8>)> {
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
    rows
}

fn base_rows(n: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n).map(|i| (key(i), value(i, "base"))).collect()
}

fn load_base(db: &Database, idx: IndexId, n: u32) {
    let mut txn = db.begin();
    for (k, v) in base_rows(n) {
        txn.insert(idx, &k, &v).unwrap();
    }
    txn.commit().unwrap();
}

/// Writes of a transaction that must leave no trace: updates, deletes and
/// inserts over many pages, with a recognisable marker in the new values.
fn scribble(txn: &mut flushwise_engine::db::Txn<'_>, idx: IndexId, n: u32) {
    for i in 0..n {
        match i % 3 {
            0 => assert!(txn.update(idx, &key(i), &value(i, "UNCOMMITTED")).unwrap()),
            1 => assert!(txn.delete(idx, &key(i)).unwrap()),
            _ => {}
        }
    }
    for i in n..n + 300 {
        txn.insert(idx, &key(i), &value(i, "UNCOMMITTED")).unwrap();
    }
}

fn data_file_contains(db_dir: &std::path::Path, needle: &[u8]) -> bool {
    let bytes = std::fs::read(db_dir.join("flushwise.data")).unwrap();
    bytes.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn committed_rows_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    let sec = db.create_index("t_by_tag", false).unwrap();
    load_base(&db, idx, 500);
    let mut txn = db.begin();
    txn.insert_secondary(sec, b"even", b"k2", b"").unwrap();
    txn.insert_secondary(sec, b"even", b"k4", b"").unwrap();
    txn.insert_secondary(sec, b"odd", b"k1", b"").unwrap();
    assert!(matches!(
        txn.insert(idx, &key(3), b"dup"),
        Err(DbError::DuplicateKey { .. })
    ));
    txn.commit().unwrap();
    db.close().unwrap();

    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(db.recovery_report().losers_rolled_back, 0);
    let idx = db.index("t").unwrap();
    assert_eq!(all(&db, idx), base_rows(500));
    let sec = db.index("t_by_tag").unwrap();
    let mut txn = db.begin();
    let even: Vec<_> = txn
        .lookup_secondary(sec, b"even")
        .unwrap()
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(even, vec![b"k2".to_vec(), b"k4".to_vec()]);
    txn.commit().unwrap();
    // Crash (no close): committed rows come back from the redo log.
    let mut txn = db.begin();
    txn.insert(idx, b"after-reopen", b"1").unwrap();
    txn.commit().unwrap();
    drop(db);
    let db = Database::open(dir.path(), options()).unwrap();
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    assert_eq!(txn.get(idx, b"after-reopen").unwrap(), Some(b"1".to_vec()));
    txn.commit().unwrap();
    db.check().unwrap();
    db.close().unwrap();
}

#[test]
fn rolled_back_transaction_leaves_no_trace_even_if_its_pages_were_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    load_base(&db, idx, 600);

    // 1. Explicit rollback after the uncommitted pages reached the disk.
    let mut txn = db.begin();
    scribble(&mut txn, idx, 600);
    db.flush_all().unwrap();
    assert!(
        data_file_contains(dir.path(), b"UNCOMMITTED-"),
        "steal: uncommitted rows are on disk"
    );
    txn.rollback().unwrap();
    assert_eq!(all(&db, idx), base_rows(600));
    db.check().unwrap();

    // 2. Dropped without commit: rolled back the same way.
    {
        let mut txn = db.begin();
        scribble(&mut txn, idx, 600);
    }
    assert_eq!(all(&db, idx), base_rows(600));
    assert_eq!(db.locks_held(), 0);

    // 3. Crash before rollback: pages flushed, transaction never ended.
    let mut txn = db.begin();
    scribble(&mut txn, idx, 600);
    db.flush_all().unwrap();
    std::mem::forget(txn); // no rollback, no commit
    drop(db); // crash
    let db = Database::open(dir.path(), options()).unwrap();
    let report = db.recovery_report().clone();
    assert_eq!(report.losers_rolled_back, 1, "{report}");
    assert!(report.undo_entries_applied >= 700, "{report}");
    let idx = db.index("t").unwrap();
    assert_eq!(all(&db, idx), base_rows(600));
    db.check().unwrap();
    db.close().unwrap();
    // The rollback itself was durable: a clean reopen has nothing to undo.
    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(db.recovery_report().losers_rolled_back, 0);
    let idx = db.index("t").unwrap();
    assert_eq!(all(&db, idx), base_rows(600));
    db.close().unwrap();
}

#[test]
fn deadlock_is_detected_or_times_out_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        lock_wait_timeout: Duration::from_millis(300),
        ..options()
    };
    let db = Database::create(dir.path(), opts).unwrap();
    let idx = db.create_index("t", true).unwrap();
    load_base(&db, idx, 2);

    // A cycle: each holds one key and wants the other's.
    let barrier = Barrier::new(2);
    let results: Vec<Result<(), DbError>> = std::thread::scope(|s| {
        let handles: Vec<_> = [(0u32, 1u32), (1, 0)]
            .into_iter()
            .map(|(first, second)| {
                let (db, barrier) = (&db, &barrier);
                s.spawn(move || {
                    let mut txn = db.begin();
                    txn.update(idx, &key(first), b"mine").unwrap();
                    barrier.wait();
                    match txn.update(idx, &key(second), b"mine") {
                        Ok(_) => {
                            txn.commit().unwrap();
                            Ok(())
                        }
                        Err(e) => {
                            txn.rollback().unwrap();
                            Err(e)
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let victims: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(victims.len(), 1, "exactly one victim: {results:?}");
    assert!(matches!(victims[0], DbError::Deadlock { .. }), "{}", victims[0]);
    assert!(victims[0].is_retryable());
    assert!(victims[0].to_string().contains("deadlock on index t"), "{}", victims[0]);
    let rows = all(&db, idx);
    assert!(
        rows.iter().all(|(_, v)| v == b"mine"),
        "the survivor committed both rows"
    );
    assert_eq!(db.locks_held(), 0);

    // A plain wait beyond the timeout.
    let mut holder = db.begin();
    holder.update(idx, &key(0), b"held").unwrap();
    let waited = std::thread::scope(|s| {
        s.spawn(|| {
            let mut txn = db.begin();
            let t0 = Instant::now();
            let err = txn.get(idx, &key(0)).unwrap_err();
            let waited = t0.elapsed();
            assert!(matches!(err, DbError::LockTimeout { .. }), "{err}");
            txn.rollback().unwrap();
            waited
        })
        .join()
        .unwrap()
    });
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    holder.commit().unwrap();
    let mut txn = db.begin();
    assert_eq!(txn.get(idx, &key(0)).unwrap(), Some(b"held".to_vec()));
    txn.commit().unwrap();
    db.close().unwrap();
}

#[test]
fn concurrent_transfers_keep_total_balance() {
    const ACCOUNTS: u32 = 40;
    const THREADS: u64 = 8;
    const TRANSFERS: u64 = 150;
    const START: i64 = 1_000;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::create(dir.path(), options()).unwrap());
    let idx = db.create_index("accounts", true).unwrap();
    let mut txn = db.begin();
    for a in 0..ACCOUNTS {
        txn.insert(idx, &key(a), &START.to_le_bytes()).unwrap();
    }
    txn.commit().unwrap();
    let balance = |v: Option<Vec<u8>>| i64::from_le_bytes(v.expect("account exists").try_into().unwrap());

    let retries: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut rng = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                    let mut next = move || {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng
                    };
                    let mut attempts = 0u64;
                    for _ in 0..TRANSFERS {
                        let from = (next() % u64::from(ACCOUNTS)) as u32;
                        let to = (next() % u64::from(ACCOUNTS)) as u32;
                        let amount = (next() % 50) as i64;
                        db.run(|txn| {
                            attempts += 1;
                            // Locks in random order: deadlocks happen.
                            let a = balance(txn.get(idx, &key(from))?);
                            let b = balance(txn.get_for_update(idx, &key(to))?);
                            if from == to {
                                return Ok(());
                            }
                            txn.update(idx, &key(from), &(a - amount).to_le_bytes())?;
                            txn.update(idx, &key(to), &(b + amount).to_le_bytes())?;
                            Ok(())
                        })
                        .unwrap();
                    }
                    attempts - TRANSFERS
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let total = |db: &Database| -> i64 {
        let idx = db.index("accounts").unwrap();
        all(db, idx).into_iter().map(|(_, v)| balance(Some(v))).sum()
    };
    eprintln!(
        "transfers: {} committed, {retries} retries after deadlocks or timeouts",
        THREADS * TRANSFERS
    );
    assert_eq!(total(&db), START * i64::from(ACCOUNTS), "after {retries} retries");
    assert_eq!(db.active_transactions(), 0);
    assert_eq!(db.locks_held(), 0);
    let db = Arc::try_unwrap(db).unwrap();
    drop(db); // crash
    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(total(&db), START * i64::from(ACCOUNTS));
    db.close().unwrap();
}

#[test]
fn commits_not_yet_flushed_are_lost_whole_with_flush_every_second() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        flush_log_at_trx_commit: flushwise_engine::redo::FlushMode::EverySecond,
        checkpoint_interval: Duration::from_millis(20),
        ..options()
    };
    let db = Database::create(dir.path(), opts.clone()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    for t in 0..200u32 {
        let mut txn = db.begin();
        for part in 0..3 {
            txn.insert(idx, &key(t * 10 + part), &value(t, "every-second")).unwrap();
        }
        txn.commit().unwrap();
        if t == 100 {
            db.flush_all().unwrap();
        }
    }
    drop(db); // crash: up to a second of commits may be lost, never half of one
    let db = Database::open(dir.path(), opts).unwrap();
    let idx = db.index("t").unwrap();
    let rows = all(&db, idx);
    let mut per_txn = std::collections::BTreeMap::<u32, u32>::new();
    for (k, _) in &rows {
        let n: u32 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
        *per_txn.entry(n / 10).or_default() += 1;
    }
    assert!(per_txn.values().all(|c| *c == 3), "a transaction survived in part");
    let survivors: Vec<u32> = per_txn.keys().copied().collect();
    assert_eq!(
        survivors,
        (0..survivors.len() as u32).collect::<Vec<_>>(),
        "a prefix of the commits survives"
    );
    assert!(
        survivors.len() >= 100,
        "the page flush at commit 100 made the log durable past commit 99"
    );
    db.close().unwrap();
}
