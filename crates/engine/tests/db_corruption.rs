//! Damaged files at open: a torn data page is repaired from the
//! doublewrite buffer, or (without one) reported naming file and page; a
//! truncated redo log is the redo layer's error.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use flushwise_engine::db::{Database, DbError, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::RedoError;

const PAGE: usize = 4096;

fn options(doublewrite: bool) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(PAGE).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 4 << 20,
        doublewrite,
        ..DbOptions::default()
    }
}

fn populate(dir: &Path, doublewrite: bool) {
    let db = Database::create(dir, options(doublewrite)).unwrap();
    let idx = db.create_index("t", true).unwrap();
    let mut txn = db.begin();
    for i in 0..400u32 {
        txn.insert(idx, format!("k{i:05}").as_bytes(), &[i as u8; 60]).unwrap();
    }
    txn.commit().unwrap();
    db.close().unwrap();
}

fn check_rows(db: &Database) {
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for i in 0..400u32 {
        assert_eq!(
            txn.get(idx, format!("k{i:05}").as_bytes()).unwrap(),
            Some(vec![i as u8; 60])
        );
    }
    txn.commit().unwrap();
    db.check().unwrap();
}

/// Overwrites 512 bytes in the middle of page `page_no` (a torn write).
fn tear(path: &Path, page_no: usize) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start((page_no * PAGE + 1024) as u64)).unwrap();
    f.write_all(&[0xA5; 512]).unwrap();
    f.sync_all().unwrap();
}

#[test]
fn corrupted_page_is_repaired_from_doublewrite_or_reported() {
    // With doublewrite: a crash right after a batch of page writes (no
    // checkpoint since), then tear a page whose current image sits in a
    // slot, as a power loss in the middle of its in-place write would.
    let dir = tempfile::tempdir().unwrap();
    let quiet = || DbOptions {
        checkpoint_interval: std::time::Duration::from_secs(3600),
        ..options(true)
    };
    let db = Database::create(dir.path(), quiet()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    let mut txn = db.begin();
    for i in 0..400u32 {
        txn.insert(idx, format!("k{i:05}").as_bytes(), &[i as u8; 60]).unwrap();
    }
    txn.commit().unwrap();
    db.flush_all().unwrap();
    drop(db); // crash
    let data_path = dir.path().join("flushwise.data");
    let data = std::fs::read(&data_path).unwrap();
    let dw = std::fs::read(dir.path().join("flushwise.dblwr")).unwrap();
    let slots: Vec<&[u8]> = dw.chunks(PAGE).collect();
    let victim = data
        .chunks(PAGE)
        .enumerate()
        .filter(|(_, p)| p.iter().any(|b| *b != 0))
        .find(|(_, p)| slots.contains(p))
        .map(|(i, _)| i)
        .expect("some page has its current image in the doublewrite file");
    tear(&data_path, victim);
    let db = Database::open(dir.path(), quiet()).unwrap();
    let report = db.recovery_report().clone();
    assert_eq!(report.pages_repaired_from_doublewrite, 1, "{report}");
    check_rows(&db);
    db.close().unwrap();

    // The same damage after a clean close is not a torn write (the
    // checkpoint passed every copy): the open refuses, naming the page,
    // rather than trust a copy that may be older than the page.
    tear(&data_path, victim);
    let msg = Database::open(dir.path(), quiet()).unwrap_err().to_string();
    assert!(
        msg.contains("flushwise.data") && msg.contains(&format!("page {victim}")),
        "{msg}"
    );
    assert!(msg.contains("older than the checkpoint"), "{msg}");

    // Without doublewrite: the open fails, naming the file and the page.
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), false);
    let data_path = dir.path().join("flushwise.data");
    tear(&data_path, 1);
    let err = Database::open(dir.path(), options(false)).unwrap_err();
    assert!(matches!(err, DbError::CorruptPage { page_no: 1, .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("flushwise.data") && msg.contains("page 1"), "{msg}");
}

#[test]
fn truncated_redo_log_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), true);
    let redo_path = dir.path().join("flushwise.redo");
    let len = std::fs::metadata(&redo_path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&redo_path)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let err = Database::open(dir.path(), options(true)).unwrap_err();
    assert!(matches!(err, DbError::Redo(RedoError::Truncated { .. })), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("flushwise.redo") && msg.contains("truncated"), "{msg}");
}

#[test]
fn data_and_redo_can_live_in_separate_directories() {
    let root = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        data_dir: Some(root.path().join("data")),
        redo_dir: Some(root.path().join("redo")),
        ..options(true)
    };
    let db = Database::create(root.path(), opts.clone()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    let mut txn = db.begin();
    txn.insert(idx, b"k", b"v").unwrap();
    txn.commit().unwrap();
    drop(db); // crash
    assert!(root.path().join("redo/flushwise.redo").exists());
    assert!(root.path().join("data/flushwise.data").exists());
    let db = Database::open(root.path(), opts).unwrap();
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    assert_eq!(txn.get(idx, b"k").unwrap(), Some(b"v".to_vec()));
    txn.commit().unwrap();
    // Other directories, other files: a second database beside it.
    let other = Database::create(root.path(), options(true)).unwrap();
    other.close().unwrap();
    db.close().unwrap();
}

/// Finding 6 of issue #14: a data file cut short after a crash. The redo
/// log changes pages that it does not create (they were written before the
/// checkpoint), so the file must hold them; the open says the file is
/// shorter than the redo expects, with both sizes, instead of blaming the
/// redo log or calling the pages "never written".
#[test]
fn truncated_data_file_is_reported_as_shorter_than_the_redo_expects() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = || DbOptions {
        checkpoint_interval: std::time::Duration::from_secs(3600),
        ..options(false)
    };
    populate(dir.path(), false);
    let db = Database::open(dir.path(), quiet()).unwrap();
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for i in 0..400u32 {
        txn.update(idx, format!("k{i:05}").as_bytes(), &[0x5A; 60]).unwrap();
    }
    txn.commit().unwrap();
    drop(db); // crash: the updates are only in the redo log

    let data_path = dir.path().join("flushwise.data");
    let full_bytes = std::fs::metadata(&data_path).unwrap().len();
    let cut_bytes = PAGE as u64;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&data_path)
        .unwrap()
        .set_len(cut_bytes)
        .unwrap();
    let msg = Database::open(dir.path(), quiet()).unwrap_err().to_string();
    assert!(msg.contains("flushwise.data") && msg.contains("shorter"), "{msg}");
    assert!(msg.contains(&format!("{cut_bytes} bytes")), "the file's size: {msg}");
    assert!(!msg.contains("never written"), "{msg}");
    assert!(full_bytes > cut_bytes);
    // The file was not grown back over the missing pages.
    assert_eq!(std::fs::metadata(&data_path).unwrap().len(), cut_bytes);
}
