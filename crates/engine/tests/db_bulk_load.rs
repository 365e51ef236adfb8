//! Scenarios of `Database::load_sorted`: loaded trees read, write, split
//! and reopen like any other; edge sizes; rejected inputs leave the index
//! empty and loadable; concurrent loads of different indexes beside
//! transactions; a crash after the load returned keeps it; a property test
//! against a `BTreeMap`. (The crash *before* the switch needs a hook inside
//! the crate: see the tests of `db::bulk`.)

use std::collections::BTreeMap;
use std::ops::Bound;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbError, DbOptions, IndexId, LoadOptions};
use flushwise_engine::page::PageSize;
use proptest::prelude::*;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 8 << 20,
        ..DbOptions::default()
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

/// 100..=300 bytes, varying with `i`.
fn value(i: u64) -> Vec<u8> {
    let len = 100 + (i * 7919 % 201) as usize;
    let mut v = format!("v{i}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

fn rows(n: u64) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> {
    (0..n).map(|i| (key(2 * i), value(2 * i)))
}

fn scan(db: &Database, idx: IndexId, direction: Direction) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut txn = db.begin();
    let out = txn
        .range(idx, Bound::Unbounded, Bound::Unbounded, direction, None)
        .unwrap();
    txn.commit().unwrap();
    out
}

fn assert_holds(db: &Database, idx: IndexId, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let forward = scan(db, idx, Direction::Forward);
    assert_eq!(forward.len(), want.len());
    assert!(forward.iter().eq(want
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect::<Vec<_>>()
        .iter()));
    let mut backward = scan(db, idx, Direction::Backward);
    backward.reverse();
    assert_eq!(backward, forward);
    let mut txn = db.begin();
    for (k, v) in want.iter().step_by(97) {
        assert_eq!(txn.get(idx, k).unwrap().as_ref(), Some(v));
    }
    txn.commit().unwrap();
    db.check().unwrap();
}

#[test]
fn loaded_tree_reads_both_ways_takes_writes_and_splits_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let mut want: BTreeMap<_, _> = rows(n).collect();
    {
        let db = Database::create(dir.path(), options()).unwrap();
        let idx = db.create_index("orders", true).unwrap();
        let report = db.load_sorted(idx, rows(n)).unwrap();
        assert_eq!(report.rows, n);
        assert_eq!(
            report.bytes,
            want.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum::<u64>()
        );
        assert!(report.height >= 3, "{report:?}");
        assert_eq!(report.pages, report.leaf_pages + report.internal_pages);
        assert_holds(&db, idx, &want);

        // Odd keys fall between loaded ones: every leaf splits sooner or later.
        db.run(|txn| {
            for i in (1..2 * n).step_by(6) {
                txn.insert(idx, &key(i), &value(i))?;
            }
            Ok(())
        })
        .unwrap();
        for i in (1..2 * n).step_by(6) {
            want.insert(key(i), value(i));
        }
        db.run(|txn| {
            for i in (0..2 * n).step_by(10) {
                assert!(txn.update(idx, &key(i), b"updated")?);
            }
            for i in (4..2 * n).step_by(20) {
                assert!(txn.delete(idx, &key(i))?);
            }
            Ok(())
        })
        .unwrap();
        for i in (0..2 * n).step_by(10) {
            want.insert(key(i), b"updated".to_vec());
        }
        for i in (4..2 * n).step_by(20) {
            want.remove(&key(i));
        }
        assert_holds(&db, idx, &want);
        db.close().unwrap();
    }
    let db = Database::open(dir.path(), options()).unwrap();
    assert_holds(&db, db.index("orders").unwrap(), &want);
}

#[test]
fn zero_rows_one_row_and_max_size_entries_load() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let empty = db.create_index("empty", true).unwrap();
    let report = db.load_sorted(empty, std::iter::empty()).unwrap();
    assert_eq!((report.rows, report.pages, report.height), (0, 1, 1));
    assert!(scan(&db, empty, Direction::Forward).is_empty());

    let one = db.create_index("one", true).unwrap();
    let report = db
        .load_sorted(one, std::iter::once((b"a".to_vec(), b"1".to_vec())))
        .unwrap();
    assert_eq!((report.rows, report.pages, report.height), (1, 1, 1));

    // key + value = a quarter of the 4 KiB page's payload: the largest entry.
    let max_entry = PageSize::new(4096).unwrap().payload_len() / 4;
    let big = db.create_index("big", true).unwrap();
    let big_rows = (0..500u64).map(|i| {
        let k = key(i);
        let v = vec![(i % 251) as u8; max_entry - k.len()];
        (k, v)
    });
    let want: BTreeMap<_, _> = big_rows.clone().collect();
    let report = db.load_sorted(big, big_rows).unwrap();
    assert_eq!(report.rows, 500);
    assert_holds(&db, big, &want);

    let too_big = db.create_index("too_big", true).unwrap();
    let err = db
        .load_sorted(too_big, std::iter::once((b"k".to_vec(), vec![0; max_entry])))
        .unwrap_err();
    assert!(matches!(err, DbError::LoadRow { position: 0, .. }), "{err}");
    assert!(err.to_string().contains("too_big"), "{err}");
    db.check().unwrap();
}

#[test]
fn rows_that_exactly_fill_leaves_make_that_many_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    // 4096-byte page: 4060-byte payload, 16-byte node header, 1/16 of the
    // payload (253 bytes) reserved: 3791 bytes of slots and cells. An entry
    // of a 9-byte key and a 208-byte value takes 2 + 4 + 217 = 223 bytes,
    // and 17 of them take exactly 3791.
    let per_leaf = 17u64;
    let leaves = 7;
    let idx = db.create_index("exact", true).unwrap();
    let load = (0..per_leaf * leaves).map(|i| (key(i), vec![b'x'; 208]));
    let want: BTreeMap<_, _> = load.clone().collect();
    let report = db.load_sorted(idx, load).unwrap();
    assert_eq!(report.leaf_pages, leaves);
    assert_eq!(report.height, 2);
    assert_holds(&db, idx, &want);
    // One more row opens one more leaf.
    let idx2 = db.create_index("exact_plus_one", true).unwrap();
    let report = db
        .load_sorted(idx2, (0..per_leaf * leaves + 1).map(|i| (key(i), vec![b'x'; 208])))
        .unwrap();
    assert_eq!(report.leaf_pages, leaves + 1);
}

#[test]
fn out_of_order_and_duplicate_keys_are_rejected_and_leave_the_index_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("stock", true).unwrap();
    // The bad row comes after several extents' worth of pages were written.
    let bad_at = 30_000u64;
    let unsorted = rows(bad_at).chain(std::iter::once((key(3), value(3))));
    let err = db.load_sorted(idx, unsorted).unwrap_err();
    match &err {
        DbError::LoadOutOfOrder { index, position, .. } => {
            assert_eq!((index.as_str(), *position), ("stock", bad_at));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("row 30000"), "{err}");
    assert!(scan(&db, idx, Direction::Forward).is_empty());

    let dup = rows(10).chain(std::iter::once((key(18), b"again".to_vec())));
    let err = db.load_sorted(idx, dup).unwrap_err();
    assert!(matches!(&err, DbError::LoadDuplicateKey { position: 10, .. }), "{err}");
    db.check().unwrap();

    // The reclaimed pages are reused; the index still loads.
    let report = db.load_sorted(idx, rows(1000)).unwrap();
    assert_eq!(report.rows, 1000);
    assert_holds(&db, idx, &rows(1000).collect());
    db.close().unwrap();
    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(db.recovery_report().loads_reclaimed, 0);
    assert_holds(&db, idx, &rows(1000).collect());
}

#[test]
fn a_non_empty_index_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("district", true).unwrap();
    db.run(|txn| txn.insert(idx, b"d1", b"x")).unwrap();
    let err = db.load_sorted(idx, rows(10)).unwrap_err();
    assert!(
        matches!(&err, DbError::IndexNotEmpty { index } if index == "district"),
        "{err}"
    );
    // A loaded index is not empty either.
    let other = db.create_index("item", true).unwrap();
    db.load_sorted(other, rows(10)).unwrap();
    assert!(matches!(
        db.load_sorted(other, rows(10)).unwrap_err(),
        DbError::IndexNotEmpty { .. }
    ));
}

#[test]
fn a_load_is_durable_when_it_returns_even_without_close() {
    let dir = tempfile::tempdir().unwrap();
    let want: BTreeMap<_, _> = rows(5000).collect();
    {
        let db = Database::create(dir.path(), options()).unwrap();
        let idx = db.create_index("customer", true).unwrap();
        db.load_sorted(idx, rows(5000)).unwrap();
        // Some logged changes on top, then a crash (drop without close).
        db.run(|txn| txn.insert(idx, &key(1), b"after")).unwrap();
        drop(db);
    }
    let mut want = want;
    want.insert(key(1), b"after".to_vec());
    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(db.recovery_report().loads_reclaimed, 0);
    assert_holds(&db, db.index("customer").unwrap(), &want);
}

#[test]
fn concurrent_loads_of_different_indexes_beside_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let a = db.create_index("a", true).unwrap();
    let b = db.create_index("b", true).unwrap();
    let busy = db.create_index("busy", true).unwrap();
    std::thread::scope(|s| {
        let la = s.spawn(|| db.load_sorted(a, rows(15_000)).unwrap());
        let lb = s.spawn(|| db.load_sorted(b, (0..15_000).map(|i| (key(i), value(i)))).unwrap());
        // Splits of another index allocate pages meanwhile.
        for chunk in 0..20u64 {
            db.run(|txn| {
                for i in chunk * 200..(chunk + 1) * 200 {
                    txn.insert(busy, &key(i * 7919 % 4000), &value(i))?;
                }
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(la.join().unwrap().rows, 15_000);
        assert_eq!(lb.join().unwrap().rows, 15_000);
    });
    assert_holds(&db, a, &rows(15_000).collect());
    assert_holds(&db, b, &(0..15_000).map(|i| (key(i), value(i))).collect());
    assert_eq!(scan(&db, busy, Direction::Forward).len(), 4000);
    db.close().unwrap();
    let db = Database::open(dir.path(), options()).unwrap();
    db.check().unwrap();
}

#[test]
fn fill_factor_outside_50_to_100_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    let idx = db.create_index("x", true).unwrap();
    let err = db
        .load_sorted_with(idx, rows(10), LoadOptions { fill_factor_pct: 20 })
        .unwrap_err();
    assert!(matches!(err, DbError::Options { .. }), "{err}");
    let half = db
        .load_sorted_with(idx, rows(2000), LoadOptions { fill_factor_pct: 50 })
        .unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = Database::create(dir2.path(), options()).unwrap();
    let idx2 = db2.create_index("x", true).unwrap();
    let full = db2.load_sorted(idx2, rows(2000)).unwrap();
    assert!(half.leaf_pages > full.leaf_pages * 17 / 10, "{half:?} vs {full:?}");
    assert_holds(&db, idx, &rows(2000).collect());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn load_then_writes_match_a_btreemap(
        keys in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 1..40), 0..1500),
        value_len in 1usize..300,
        writes in proptest::collection::vec((proptest::collection::vec(any::<u8>(), 1..40), any::<bool>()), 0..200),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path(), options()).unwrap();
        let idx = db.create_index("p", true).unwrap();
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> =
            keys.iter().map(|k| (k.clone(), vec![k[0]; value_len])).collect();
        db.load_sorted(idx, model.clone().into_iter()).unwrap();
        db.run(|txn| {
            for (k, delete) in &writes {
                if *delete {
                    txn.delete(idx, k)?;
                } else {
                    txn.upsert(idx, k, k)?;
                }
            }
            Ok(())
        }).unwrap();
        for (k, delete) in &writes {
            if *delete {
                model.remove(k);
            } else {
                model.insert(k.clone(), k.clone());
            }
        }
        assert_holds(&db, idx, &model);
    }
}
