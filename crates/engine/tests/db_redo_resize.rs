//! Resizing the redo log at open (`DbOptions::resize_redo_at_open`): a
//! cleanly closed database gets a log of the new capacity that continues
//! its LSNs; a crashed one is refused with a message saying what to do.

use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::storage::{open_file, IoMode};

fn options(redo_bytes: u64) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes,
        ..DbOptions::default()
    }
}

fn fill(db: &Database, from: u32, to: u32) {
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for i in from..to {
        txn.insert(idx, format!("k{i:05}").as_bytes(), &[i as u8; 100]).unwrap();
    }
    txn.commit().unwrap();
}

fn check(db: &Database, to: u32) {
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for i in 0..to {
        assert_eq!(
            txn.get(idx, format!("k{i:05}").as_bytes()).unwrap(),
            Some(vec![i as u8; 100])
        );
    }
    txn.commit().unwrap();
    db.check().unwrap();
}

#[test]
fn a_cleanly_closed_database_gets_the_new_capacity_and_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(4 << 20)).unwrap();
    db.create_index("t", true).unwrap();
    fill(&db, 0, 500);
    let lsn_before = db.redo().current_lsn();
    db.close().unwrap();

    // Without the flag the file's capacity wins.
    let db = Database::open(dir.path(), options(8 << 20)).unwrap();
    assert_eq!(db.redo().capacity_bytes(), 4 << 20);
    db.close().unwrap();
    let profile_path = flushwise_engine::db::recovery_profile::RecoveryProfile::path_in(dir.path());
    let opens_recorded = || {
        flushwise_engine::db::recovery_profile::RecoveryProfile::load(&profile_path)
            .unwrap()
            .opens_us()
            .len()
    };
    assert_eq!(opens_recorded(), 1, "a clean open is measured");

    for new_capacity in [8u64 << 20, 2 << 20] {
        let opts = DbOptions {
            resize_redo_at_open: true,
            ..options(new_capacity)
        };
        let db = Database::open(dir.path(), opts).unwrap();
        assert_eq!(db.redo().capacity_bytes(), new_capacity);
        assert!(db.recovery_report().redo_resized_from_bytes.is_some());
        assert!(db.redo().current_lsn() >= lsn_before, "LSNs never go backwards");
        check(&db, 500);
        db.close().unwrap();
        // Writing a new log file is not what an open costs.
        assert_eq!(opens_recorded(), 1, "a resizing open is not measured");
    }

    // The resized log works across a crash too.
    let db = Database::open(dir.path(), options(2 << 20)).unwrap();
    fill(&db, 500, 800);
    drop(db); // crash
    let db = Database::open(dir.path(), options(2 << 20)).unwrap();
    check(&db, 800);
    assert!(!dir.path().join("flushwise.redo.resize").exists());
    db.close().unwrap();
}

#[test]
fn a_crashed_database_is_not_resized_and_the_error_says_how_to_proceed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(4 << 20)).unwrap();
    db.create_index("t", true).unwrap();
    fill(&db, 0, 300);
    drop(db); // crash: the log holds redo to apply
    let opts = DbOptions {
        resize_redo_at_open: true,
        ..options(8 << 20)
    };
    let Err(err) = Database::open(dir.path(), opts) else {
        panic!("a crashed database was resized");
    };
    let msg = err.to_string();
    assert!(
        msg.contains("flushwise.redo") && msg.contains("not closed cleanly"),
        "{msg}"
    );
    // Nothing was lost: the usual open recovers every row.
    let db = Database::open(dir.path(), options(4 << 20)).unwrap();
    check(&db, 300);
    db.close().unwrap();
}

#[test]
fn a_bulk_loaded_database_closed_after_a_small_transaction_resizes() {
    // The TPC-C loader's shape: bulk loads, then one small marker
    // transaction, then close. The close must checkpoint past the marker's
    // commit record so the log counts as clean.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options(4 << 20)).unwrap();
    let rows = db.create_index("rows", true).unwrap();
    let meta = db.create_index("meta", true).unwrap();
    db.load_sorted(rows, (0..2000u32).map(|i| (i.to_be_bytes().to_vec(), vec![7u8; 60])))
        .unwrap();
    let mut txn = db.begin();
    txn.insert(meta, b"load_complete", b"1").unwrap();
    txn.commit().unwrap();
    db.close().unwrap();
    let path = dir.path().join("flushwise.redo");
    let backend = open_file(&path, IoMode::Buffered, false).unwrap();
    let scan = flushwise_engine::redo::reader::scan(&path, &*backend).unwrap();
    assert!(
        scan.records.is_empty(),
        "a clean close leaves nothing to redo: {:?}",
        scan.report
    );
    drop(backend);
    let opts = DbOptions {
        resize_redo_at_open: true,
        ..options(8 << 20)
    };
    let db = Database::open(dir.path(), opts).unwrap();
    assert_eq!(db.redo().capacity_bytes(), 8 << 20);
    let mut txn = db.begin();
    assert_eq!(txn.get(meta, b"load_complete").unwrap(), Some(b"1".to_vec()));
    assert_eq!(txn.get(rows, &1999u32.to_be_bytes()).unwrap(), Some(vec![7u8; 60]));
    txn.commit().unwrap();
    db.check().unwrap();
    db.close().unwrap();
}
