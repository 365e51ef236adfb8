//! Scenarios of I/O failures: a failed fsync or a full disk must be
//! reported clearly and must never be papered over.

mod common;

use common::{faulty_file, page_image, tablespace_over, PAGE};
use flushwise_engine::storage::{EngineStorageError, FaultPlan, StorageBackend, StorageError};

#[test]
fn failed_fsync_poisons_storage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t1.ibd");
    let file = faulty_file(&path);
    let ts = tablespace_over(1, &path, file.clone());
    ts.extend(2).unwrap();
    ts.write_page(0, &mut page_image(ts.page_id(0), 5)).unwrap();
    file.inner().arm(FaultPlan::fail_nth_sync(1));

    let first = ts.sync().unwrap_err();
    assert!(
        first.to_string().contains("injected i/o error (eio) on fdatasync #1"),
        "{first}"
    );
    assert!(file.is_poisoned());

    // The same fsync "succeeding" on retry would be a lie: it is refused,
    // as are writes and reads, each naming the first error.
    let second = ts.sync().unwrap_err();
    let msg = second.to_string();
    assert!(
        matches!(second, EngineStorageError::Storage(StorageError::Poisoned { .. })),
        "{msg}"
    );
    assert!(
        msg.contains("t1.ibd") && msg.contains("fdatasync #1") && msg.contains("re-open"),
        "{msg}"
    );
    assert!(ts.write_page(1, &mut page_image(ts.page_id(1), 6)).is_err());
    let mut buf = ts.new_page_buf();
    assert!(matches!(
        ts.read_page(0, &mut buf),
        Err(EngineStorageError::Storage(StorageError::Poisoned { .. }))
    ));
    assert!(file.len().is_err());
    // Only the fsync itself reached the injector; nothing later did.
    assert_eq!(file.inner().counters().syncs, 1);
    assert_eq!(file.inner().counters().writes, 0);
}

#[test]
fn failed_write_poisons_storage_but_failed_read_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t1.ibd");
    let file = faulty_file(&path);
    let ts = tablespace_over(1, &path, file.clone());
    ts.extend(2).unwrap();
    ts.write_page(0, &mut page_image(ts.page_id(0), 5)).unwrap();

    file.inner().arm(FaultPlan::fail_nth_read(1));
    let mut buf = ts.new_page_buf();
    assert!(ts.read_page(0, &mut buf).is_err());
    assert!(!file.is_poisoned());
    ts.read_page(0, &mut buf).unwrap();

    file.inner().arm(FaultPlan::fail_nth_write(1));
    assert!(ts.write_page(1, &mut page_image(ts.page_id(1), 6)).is_err());
    assert!(file.is_poisoned());
    assert!(ts.read_page(0, &mut buf).is_err());
}

#[test]
fn disk_full_is_reported_clearly_and_earlier_pages_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orders.ibd");
    let file = faulty_file(&path);
    file.inner().arm(FaultPlan::disk_full_after(PAGE.offset_of(4)));
    let ts = tablespace_over(7, &path, file.clone());
    ts.extend(4).unwrap();
    for no in 0..4 {
        ts.write_page(no, &mut page_image(ts.page_id(no), 100 + u64::from(no)))
            .unwrap();
    }
    ts.sync().unwrap();

    let err = ts.extend(1).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("no space left on device"), "{msg}");
    assert!(msg.contains("orders.ibd"), "{msg}");
    assert!(matches!(&err, EngineStorageError::Storage(e) if e.is_disk_full()));
    assert_eq!(ts.page_count(), 4, "a failed extension does not count");

    // A refused extension changed nothing: the file is not poisoned, the
    // pages it has stay readable and writable, and once space is found the
    // file grows again.
    assert!(!file.is_poisoned());
    let mut buf = ts.new_page_buf();
    assert_eq!(ts.read_page(0, &mut buf).unwrap().lsn.0, 100);
    ts.write_page(3, &mut page_image(ts.page_id(3), 200)).unwrap();
    ts.sync().unwrap();
    file.inner().disarm();
    assert_eq!(ts.extend(1).unwrap(), 4);

    // After close and re-open, every page written is intact.
    drop(ts);
    let reopened = tablespace_over(7, &path, faulty_file(&path));
    assert_eq!(reopened.page_count(), 5);
    for (no, lsn) in [(0, 100), (1, 101), (2, 102), (3, 200)] {
        let h = reopened.read_page(no, &mut buf).unwrap();
        assert_eq!(h.lsn.0, lsn);
    }
}

#[test]
fn growth_reserves_disk_blocks_and_a_refused_growth_leaves_the_file_as_it_was() {
    use flushwise_engine::storage::{BufferedFile, StorageBackend};
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grow");
    let f = BufferedFile::open(&path, true).unwrap();
    f.set_len(1 << 20).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), 1 << 20);
    // Allocated, not a hole (a filesystem without fallocate would give a
    // sparse file; this test's tempdir is on one that has it).
    assert!(meta.blocks() * 512 >= 1 << 20, "{} blocks of 512 bytes", meta.blocks());
    // More than any filesystem here can hold: refused, length unchanged.
    let err = f.set_len(1 << 62).unwrap_err();
    assert!(err.is_disk_full() || err.to_string().contains("too large"), "{err}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
    f.set_len(4096).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 4096);
}

#[test]
fn rewrites_inside_a_full_file_still_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t1.ibd");
    let file = faulty_file(&path);
    file.inner().arm(FaultPlan::disk_full_after(PAGE.offset_of(2)));
    let ts = tablespace_over(1, &path, file.clone());
    ts.extend(2).unwrap();
    for lsn in [1, 2, 3] {
        ts.write_page(1, &mut page_image(ts.page_id(1), lsn)).unwrap();
    }
    let err = file
        .write(PAGE.offset_of(2), &page_image(ts.page_id(2), 1))
        .unwrap_err();
    assert!(err.is_disk_full(), "{err}");
}

#[test]
fn transient_fault_fails_once_and_persistent_fault_keeps_failing() {
    use flushwise_engine::storage::{BufferedFile, FaultInjector};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raw");
    let f = FaultInjector::new(BufferedFile::open(&path, true).unwrap(), &path);
    f.arm(FaultPlan::fail_nth_write(2));
    let results: Vec<bool> = (0..4).map(|i| f.write(i * 10, b"x").is_ok()).collect();
    assert_eq!(results, [true, false, true, true]);
    f.arm(FaultPlan::fail_nth_write(2).persistent());
    let results: Vec<bool> = (0..4).map(|i| f.write(i * 10, b"x").is_ok()).collect();
    assert_eq!(results, [true, false, false, false]);
}
