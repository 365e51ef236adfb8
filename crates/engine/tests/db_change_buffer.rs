//! The change buffer (issue #16) on a small pool: inserts into non-unique
//! secondary indexes whose leaves are not resident are buffered, merged
//! when the leaves are read, visible to every reader before and after,
//! undone by rollback, kept across a clean close (and merged even when the
//! database is reopened with the change buffer off), and bounded in size;
//! deletes of entries the caller knows exist are buffered the same way,
//! applied in order with the inserts, and never empty a leaf.

use std::collections::BTreeSet;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions, Database, DbOptions, IndexId};
use flushwise_engine::page::PageSize;

const SECONDARIES: [&str; 2] = ["k1", "k2"];

fn options(mode: ChangeBufferMode, max_pct: u8) -> DbOptions {
    options_in(mode, max_pct, None)
}

fn options_in(mode: ChangeBufferMode, max_pct: u8, dir: Option<&std::path::Path>) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 512 << 10,
        redo_bytes: 8 << 20,
        change_buffer: ChangeBufferOptions {
            mode,
            max_pct,
            dir: dir.map(Into::into),
        },
        ..DbOptions::default()
    }
}

/// The secondary keys of row `id` (a fixed hash: spread over the leaves).
fn secondary_keys(id: u64) -> [[u8; 4]; 2] {
    let h = |salt: u64| {
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        ((x >> 32) as u32).to_be_bytes()
    };
    [h(1), h(2)]
}

struct Table {
    primary: IndexId,
    secondaries: Vec<IndexId>,
}

fn create_table(db: &Database) -> Table {
    Table {
        primary: db.create_index("rows", true).unwrap(),
        secondaries: SECONDARIES.iter().map(|n| db.create_index(n, false).unwrap()).collect(),
    }
}

fn open_table(db: &Database) -> Table {
    Table {
        primary: db.index("rows").unwrap(),
        secondaries: SECONDARIES.iter().map(|n| db.index(n).unwrap()).collect(),
    }
}

/// Inserts rows `ids` one transaction each; rolls back those `rollback` says.
fn insert_rows(db: &Database, t: &Table, ids: impl Iterator<Item = u64>, rollback: impl Fn(u64) -> bool) {
    for id in ids {
        let mut txn = db.begin();
        let pk = id.to_be_bytes();
        txn.insert(t.primary, &pk, &[7u8; 100]).unwrap();
        for (index, key) in t.secondaries.iter().zip(secondary_keys(id)) {
            txn.insert_secondary(*index, &key, &pk, b"").unwrap();
        }
        if rollback(id) {
            txn.rollback().unwrap();
        } else {
            txn.commit().unwrap();
        }
    }
}

/// Deletes rows `ids` (primary entry, then each secondary entry through
/// `delete_secondary_entry`), one transaction each; rolls back those
/// `rollback` says.
fn delete_rows(db: &Database, t: &Table, ids: impl Iterator<Item = u64>, rollback: impl Fn(u64) -> bool) {
    for id in ids {
        let mut txn = db.begin();
        delete_row(&mut txn, t, id);
        if rollback(id) {
            txn.rollback().unwrap();
        } else {
            txn.commit().unwrap();
        }
    }
}

fn delete_row(txn: &mut flushwise_engine::db::Txn<'_>, t: &Table, id: u64) {
    let pk = id.to_be_bytes();
    assert!(txn.delete(t.primary, &pk).unwrap(), "row {id} exists");
    for (index, key) in t.secondaries.iter().zip(secondary_keys(id)) {
        txn.delete_secondary_entry(*index, &key, &pk, b"").unwrap();
    }
}

/// Every secondary index holds exactly one entry per primary row, with the
/// row's key, and nothing else; returns the rows.
fn assert_consistent(db: &Database, t: &Table) -> BTreeSet<u64> {
    let mut txn = db.begin();
    let rows: BTreeSet<u64> = txn
        .scan_prefix(t.primary, b"", Direction::Forward, None)
        .unwrap()
        .into_iter()
        .map(|(k, _)| u64::from_be_bytes(k.try_into().unwrap()))
        .collect();
    for (n, index) in t.secondaries.iter().enumerate() {
        let entries = txn.scan_prefix(*index, b"", Direction::Forward, None).unwrap();
        let mut seen = BTreeSet::new();
        for (k, _) in &entries {
            let (sec, pk) = flushwise_engine::btree::secondary::split_composite_key(k).unwrap();
            let id = u64::from_be_bytes(pk.try_into().unwrap());
            assert!(
                rows.contains(&id),
                "index {n}: entry for row {id}, which does not exist"
            );
            assert_eq!(sec, secondary_keys(id)[n], "index {n}: row {id} under the wrong key");
            assert!(seen.insert(id), "index {n}: row {id} twice");
        }
        assert_eq!(seen.len(), rows.len(), "index {n}: rows without an entry");
        // Point lookups agree with the scan.
        for id in rows.iter().step_by(97) {
            let found = txn.lookup_secondary(*index, &secondary_keys(*id)[n]).unwrap();
            assert!(
                found.iter().any(|(pk, _)| pk == &id.to_be_bytes()),
                "index {n}: lookup misses row {id}"
            );
        }
    }
    txn.commit().unwrap();
    db.check().unwrap();
    rows
}

#[test]
fn inserts_into_leaves_not_in_the_pool_are_buffered_and_every_reader_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::On, 25)).unwrap();
    let t = create_table(&db);
    insert_rows(&db, &t, 0..12_000, |id| id % 13 == 0);
    let stats = db.change_buffer_stats();
    assert!(
        stats.buffered_inserts > 1_000,
        "a 512 KiB pool under two random secondary indexes buffers: {stats:?}"
    );
    assert!(stats.merged_entries > 0, "{stats:?}");
    eprintln!("after 12,000 rows: {stats:?}");
    let rows = assert_consistent(&db, &t);
    assert_eq!(rows.len(), 12_000 - 12_000 / 13 - 1);
    let after = db.change_buffer_stats();
    assert_eq!(after.merge_duplicates, 0, "{after:?}");
    // A full scan read every leaf: nothing is left buffered.
    assert_eq!((after.pending_pages, after.pending_bytes), (0, 0), "{after:?}");
    db.close().unwrap();
}

#[test]
fn buffered_entries_survive_a_clean_close_and_are_merged_with_the_buffer_off() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::On, 25)).unwrap();
    let t = create_table(&db);
    insert_rows(&db, &t, 0..8_000, |_| false);
    let pending = db.change_buffer_stats().pending_pages;
    assert!(pending > 0, "entries are still buffered at close");
    db.close().unwrap();

    let db = Database::open(dir.path(), options(ChangeBufferMode::Off, 25)).unwrap();
    let reopened = db.change_buffer_stats();
    assert_eq!(reopened.pending_pages, pending, "the claims are rebuilt from the tree");
    let t = open_table(&db);
    // Off: new inserts go to their leaves...
    insert_rows(&db, &t, 8_000..8_500, |_| false);
    assert_eq!(db.change_buffer_stats().buffered_inserts, 0);
    // ...and what was buffered before is merged on access.
    assert_eq!(assert_consistent(&db, &t).len(), 8_500);
    db.close().unwrap();
}

#[test]
fn the_buffer_stays_within_its_share_of_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::On, 1)).unwrap();
    let t = create_table(&db);
    let limit = (512u64 << 10) / 100;
    for chunk in 0..8u64 {
        insert_rows(&db, &t, chunk * 1_000..(chunk + 1) * 1_000, |_| false);
        let s = db.change_buffer_stats();
        assert!(s.pending_bytes <= limit, "{} > {limit}: {s:?}", s.pending_bytes);
    }
    assert!(db.change_buffer_stats().buffer_refused > 0);
    assert_consistent(&db, &t);
    db.close().unwrap();
}

#[test]
fn a_bad_change_buffer_size_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = Database::create(dir.path(), options(ChangeBufferMode::On, 60)).unwrap_err();
    assert!(err.to_string().contains("change-buffer maximum 60 %"), "{err}");
}

#[test]
fn the_change_buffer_on_its_own_device_has_its_own_file_and_io_counts() {
    let dir = tempfile::tempdir().unwrap();
    let cb_dir = tempfile::tempdir().unwrap();
    let separate = options_in(ChangeBufferMode::SeparateDevice, 25, Some(cb_dir.path()));
    let db = Database::create(dir.path(), separate.clone()).unwrap();
    let t = create_table(&db);
    insert_rows(&db, &t, 0..8_000, |_| false);
    assert!(db.change_buffer_stats().buffered_inserts > 500);
    db.flush_all().unwrap();
    let io = db.shell().metrics().page_io;
    assert!(io.change_buffer_writes > 0 && io.index_writes > 0, "{io:?}");
    assert!(db.change_buffer_stats().pending_pages > 0);
    db.close().unwrap();
    let files: Vec<_> = std::fs::read_dir(cb_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_string_lossy().ends_with(".ibuf"), "{files:?}");

    // Its file is where the options say: without them it is not found...
    let err = Database::open(dir.path(), options(ChangeBufferMode::On, 25)).unwrap_err();
    assert!(err.to_string().contains("which was not found"), "{err}");
    // ...and with entries in it, `on` (the data file) is refused until merged.
    let on_here = options_in(ChangeBufferMode::On, 25, Some(cb_dir.path()));
    let err = Database::open(dir.path(), on_here).unwrap_err();
    assert!(
        err.to_string().contains("open with --change-buffer separate-device"),
        "{err}"
    );
    // Off, given where the file is, merges them; then the buffer can move.
    let off = options_in(ChangeBufferMode::Off, 25, Some(cb_dir.path()));
    let db = Database::open(dir.path(), off).unwrap();
    assert_eq!(assert_consistent(&db, &open_table(&db)).len(), 8_000);
    db.close().unwrap();
    let moved = options_in(ChangeBufferMode::On, 25, Some(cb_dir.path()));
    let db = Database::open(dir.path(), moved.clone()).unwrap();
    let t = open_table(&db);
    insert_rows(&db, &t, 8_000..10_000, |_| false);
    assert!(db.change_buffer_stats().buffered_inserts > 0);
    db.close().unwrap();
    let db = Database::open(dir.path(), moved).unwrap();
    assert_eq!(assert_consistent(&db, &open_table(&db)).len(), 10_000);
    db.close().unwrap();
}

/// What the change buffer knows of the leaves' free space comes from the
/// bulk loader and survives a clean close, so a reopened database buffers
/// from its first insert; the file is consumed by the open.
#[test]
fn leaf_free_space_from_a_bulk_load_survives_a_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::Off, 25)).unwrap();
    let t = create_table(&db);
    let rows = 0..20_000u64;
    db.load_sorted(
        t.primary,
        rows.clone().map(|id| (id.to_be_bytes().to_vec(), vec![7u8; 100])),
    )
    .unwrap();
    for (n, index) in t.secondaries.iter().enumerate() {
        let mut entries: Vec<Vec<u8>> = rows
            .clone()
            .map(|id| flushwise_engine::btree::secondary::composite_key(&secondary_keys(id)[n], &id.to_be_bytes()))
            .collect();
        entries.sort();
        db.load_sorted(*index, entries.into_iter().map(|k| (k, Vec::new())))
            .unwrap();
    }
    db.close().unwrap();
    let saved = dir.path().join(flushwise_engine::db::leaf_space::FILE_NAME);
    assert!(saved.exists());

    let db = Database::open(dir.path(), options(ChangeBufferMode::On, 25)).unwrap();
    assert!(!saved.exists(), "an open consumes the file");
    let loaded = db.recovery_report().leaf_space_pages_loaded;
    assert!(loaded > 100, "the loaded secondary leaves are known: {loaded}");
    let t = open_table(&db);
    insert_rows(&db, &t, 20_000..20_200, |_| false);
    let s = db.change_buffer_stats();
    assert!(s.buffered_inserts > 100, "buffered from the first inserts: {s:?}");
    assert_eq!(assert_consistent(&db, &t).len(), 20_200);
    db.close().unwrap();
}

#[test]
fn deletes_from_leaves_not_in_the_pool_are_buffered_and_applied_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::On, 25)).unwrap();
    let t = create_table(&db);
    insert_rows(&db, &t, 0..12_000, |_| false);
    // Every leaf read once (its entry count is then known), most evicted.
    assert_consistent(&db, &t);
    let before = db.change_buffer_stats();
    delete_rows(&db, &t, (0..12_000).filter(|id| id % 3 == 0), |id| id % 7 == 0);
    // An insert and a delete of one entry, both buffered for one leaf,
    // cancel in arrival order.
    for id in 20_000..20_200 {
        let mut txn = db.begin();
        insert_rows_in(&mut txn, &t, id);
        txn.commit().unwrap();
        let mut txn = db.begin();
        delete_row(&mut txn, &t, id);
        txn.commit().unwrap();
    }
    let stats = db.change_buffer_stats();
    let deletes = stats.buffered_deletes - before.buffered_deletes;
    eprintln!("after the deletes: {stats:?}");
    assert!(
        deletes > 500,
        "deletes into a 512 KiB pool's absent leaves are buffered: {stats:?}"
    );
    let rows = assert_consistent(&db, &t);
    let expected = (0..12_000u64).filter(|id| id % 3 != 0 || id % 7 == 0).count();
    assert_eq!(rows.len(), expected);
    let after = db.change_buffer_stats();
    assert_eq!((after.merge_missing, after.merge_duplicates), (0, 0), "{after:?}");
    assert_eq!((after.pending_pages, after.pending_bytes), (0, 0), "{after:?}");
    db.close().unwrap();
}

fn insert_rows_in(txn: &mut flushwise_engine::db::Txn<'_>, t: &Table, id: u64) {
    let pk = id.to_be_bytes();
    txn.insert(t.primary, &pk, &[7u8; 100]).unwrap();
    for (index, key) in t.secondaries.iter().zip(secondary_keys(id)) {
        txn.insert_secondary(*index, &key, &pk, b"").unwrap();
    }
}

/// Deleting every row: buffered deletes may not take a leaf's last entry
/// (a merge cannot remove a leaf), so the last ones go to their leaves,
/// which the tree then unlinks.
#[test]
fn buffered_deletes_never_empty_a_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(ChangeBufferMode::On, 25)).unwrap();
    let t = create_table(&db);
    insert_rows(&db, &t, 0..6_000, |_| false);
    assert_consistent(&db, &t);
    delete_rows(&db, &t, 0..6_000, |_| false);
    let stats = db.change_buffer_stats();
    assert!(stats.buffered_deletes > 100, "{stats:?}");
    let rows = assert_consistent(&db, &t);
    assert!(rows.is_empty());
    let mut txn = db.begin();
    for index in &t.secondaries {
        assert!(txn
            .scan_prefix(*index, b"", Direction::Forward, None)
            .unwrap()
            .is_empty());
    }
    txn.commit().unwrap();
    db.close().unwrap();
}

/// Without the change buffer (or with the leaf in the pool) the entry is
/// read first: a delete of an entry that is not there, or holds another
/// value, changes nothing and says so.
#[test]
fn deleting_an_entry_that_is_not_there_is_refused_when_the_leaf_is_read() {
    for mode in [ChangeBufferMode::Off, ChangeBufferMode::On] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path(), options(mode, 25)).unwrap();
        let t = create_table(&db);
        insert_rows(&db, &t, 0..10, |_| false);
        let mut txn = db.begin();
        let pk = 3u64.to_be_bytes();
        let key = secondary_keys(3)[0];
        let err = txn
            .delete_secondary_entry(t.secondaries[0], &key, &pk, b"other")
            .unwrap_err();
        assert!(err.to_string().contains("no entry"), "{mode}: {err}");
        let err = txn
            .delete_secondary_entry(t.secondaries[0], &key, &99u64.to_be_bytes(), b"")
            .unwrap_err();
        assert!(err.to_string().contains("no entry"), "{mode}: {err}");
        assert_eq!(txn.changes(), 0, "{mode}: nothing was logged");
        txn.delete_secondary_entry(t.secondaries[0], &key, &pk, b"").unwrap();
        txn.rollback().unwrap();
        assert_consistent(&db, &t);
        db.close().unwrap();
    }
}
