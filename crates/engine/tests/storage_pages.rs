//! Scenarios of the page format and the tablespace: what a reader sees when
//! a page on disk is torn, corrupt, misplaced or never written.

mod common;

use common::{io_mode_for, page_image, PAGE};
use flushwise_core::PageId;
use flushwise_engine::page::{CorruptReason, PageError, PageSize};
use flushwise_engine::storage::{open_file, BufferedFile, EngineStorageError, StorageBackend, Tablespace};

fn open_ts(dir: &tempfile::TempDir, name: &str) -> Tablespace {
    let path = dir.path().join(name);
    let backend = open_file(&path, io_mode_for(dir.path()), true).unwrap();
    Tablespace::open(1, &path, backend, PAGE).unwrap()
}

#[test]
fn pages_written_are_read_back_verified() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "t1.ibd");
    assert_eq!(ts.extend(4).unwrap(), 0);
    for no in 0..4 {
        let mut img = page_image(ts.page_id(no), 100 + u64::from(no));
        ts.write_page(no, &mut img).unwrap();
    }
    ts.sync().unwrap();
    let mut buf = ts.new_page_buf();
    for no in 0..4 {
        let h = ts.read_page(no, &mut buf).unwrap();
        assert_eq!(h.page_id, PageId::new(1, no));
        assert_eq!(h.lsn.0, 100 + u64::from(no));
        assert_eq!(buf, page_image(ts.page_id(no), 100 + u64::from(no)));
    }
}

#[test]
fn torn_page_write_is_detected_by_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "t1.ibd");
    ts.extend(2).unwrap();
    let mut old = page_image(ts.page_id(1), 100);
    ts.write_page(1, &mut old).unwrap();
    ts.sync().unwrap();

    // Power fails mid-write of the new version: only its first 8 KiB (two
    // 4 KiB sectors) reach the disk.
    let new = page_image(ts.page_id(1), 200);
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    raw.write(PAGE.offset_of(1), &new[..8192]).unwrap();
    raw.sync_data().unwrap();

    let mut buf = ts.new_page_buf();
    let err = ts.read_page(1, &mut buf).unwrap_err();
    match &err {
        EngineStorageError::Page(PageError::Corrupt { reason, .. }) => {
            assert!(matches!(reason, CorruptReason::TornWrite { .. }), "{reason}");
        }
        other => panic!("expected a corrupt page, got {other}"),
    }
    assert!(err.to_string().contains("torn write"), "{err}");
    // The untouched neighbour page 0 is only never-written, not corrupt.
    let err = ts.read_page(0, &mut buf).unwrap_err();
    assert!(matches!(
        err,
        EngineStorageError::Page(PageError::NeverWritten { page_no: 0, .. })
    ));
}

#[test]
fn corrupt_page_error_names_file_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "orders.ibd");
    ts.extend(8).unwrap();
    let mut img = page_image(ts.page_id(5), 42);
    ts.write_page(5, &mut img).unwrap();
    ts.sync().unwrap();

    // One bit of bit rot in the payload.
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    let mut byte = [0u8; 1];
    raw.read(PAGE.offset_of(5) + 5000, &mut byte).unwrap();
    byte[0] ^= 0x10;
    raw.write(PAGE.offset_of(5) + 5000, &byte).unwrap();

    let mut buf = ts.new_page_buf();
    let err = ts.read_page(5, &mut buf).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("orders.ibd"), "{msg}");
    assert!(msg.contains("page 5"), "{msg}");
    assert!(msg.contains("checksum mismatch"), "{msg}");
    assert!(matches!(
        err,
        EngineStorageError::Page(PageError::Corrupt { page_no: 5, .. })
    ));
}

#[test]
fn page_written_to_the_wrong_place_is_reported_as_misdirected() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "t1.ibd");
    ts.extend(3).unwrap();
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    raw.write(PAGE.offset_of(2), &page_image(ts.page_id(1), 7)).unwrap();
    let mut buf = ts.new_page_buf();
    let msg = ts.read_page(2, &mut buf).unwrap_err().to_string();
    assert!(msg.contains("page id mismatch") && msg.contains("page 2"), "{msg}");
}

#[test]
fn writing_a_page_whose_header_names_another_page_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "t1.ibd");
    ts.extend(3).unwrap();
    let mut img = page_image(ts.page_id(1), 7);
    let err = ts.write_page(2, &mut img).unwrap_err();
    assert!(
        matches!(err, EngineStorageError::RefusedWrite { page_no: 2, .. }),
        "{err}"
    );
    let err = ts.write_page(9, &mut page_image(ts.page_id(9), 7)).unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
}

#[test]
fn page_size_outside_4k_to_64k_powers_of_two_is_rejected_clearly() {
    for bytes in [4096, 8192, 16384, 32768, 65536] {
        assert!(PageSize::new(bytes).is_ok());
    }
    for bytes in [0, 1000, 2048, 24576, 131072] {
        let msg = PageSize::new(bytes).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("invalid page size {bytes} bytes")) && msg.contains("4 KiB to 64 KiB"),
            "{msg}"
        );
    }
}

#[test]
fn file_length_not_a_multiple_of_the_page_size_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.ibd");
    let backend = open_file(&path, flushwise_engine::storage::IoMode::Buffered, true).unwrap();
    backend.set_len(PAGE.bytes_u64() + 512).unwrap();
    let err = Tablespace::open(1, &path, backend, PAGE).err().unwrap();
    assert!(err.to_string().contains("not a multiple of the page size"), "{err}");
}

#[test]
fn tablespace_reads_and_writes_run_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let ts = open_ts(&dir, "t1.ibd");
    ts.extend(32).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let ts = &ts;
            s.spawn(move || {
                for round in 0..5u64 {
                    for no in (t..32).step_by(4) {
                        let mut img = page_image(ts.page_id(no), round * 100 + u64::from(no));
                        ts.write_page(no, &mut img).unwrap();
                        let mut buf = ts.new_page_buf();
                        let h = ts.read_page(no, &mut buf).unwrap();
                        assert_eq!(h.lsn.0, round * 100 + u64::from(no));
                    }
                }
            });
        }
    });
}
