//! Scenarios of the doublewrite buffer: a power loss in the middle of a
//! batch of in-place writes must never leave a page unrecoverable.

mod common;

use std::sync::Arc;

use common::{faulty_file, page_image, tablespace_over, PAGE};
use flushwise_core::{Lsn, PageId};
use flushwise_engine::storage::{open_file, BufferedFile, Doublewrite, FaultPlan, IoMode, StorageBackend, Tablespace};

const SLOTS: u32 = 8;

struct Db {
    dir: tempfile::TempDir,
}

impl Db {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Opens the files as after a restart (buffered: the tests tear pages
    /// with unaligned raw writes).
    fn open(&self) -> (Tablespace, Doublewrite) {
        let ts_path = self.dir.path().join("t1.ibd");
        let dw_path = self.dir.path().join("doublewrite.dblwr");
        let ts = tablespace_over(1, &ts_path, open_file(&ts_path, IoMode::Buffered, true).unwrap());
        let dw_backend = open_file(&dw_path, IoMode::Buffered, true).unwrap();
        let dw = Doublewrite::open(&dw_path, dw_backend, PAGE, SLOTS).unwrap();
        (ts, dw)
    }

    fn write_version(&self, ts: &Tablespace, dw: &Doublewrite, pages: u32, lsn: u64) {
        let images: Vec<_> = (0..pages).map(|no| page_image(ts.page_id(no), lsn)).collect();
        let batch: Vec<_> = images
            .iter()
            .enumerate()
            .map(|(no, img)| (ts, no as u32, img))
            .collect();
        dw.write_batch(&batch).unwrap();
    }
}

#[test]
fn doublewrite_repairs_torn_page_at_recovery() {
    let db = Db::new();
    let ts_path = db.dir.path().join("t1.ibd");
    {
        let (ts, dw) = db.open();
        ts.extend(4).unwrap();
        db.write_version(&ts, &dw, 4, 10);
    }

    // Batch 2 (pages 1 and 2 at LSN 20): the copies are durable and page 1
    // is written in place; power fails while page 2 is being written, so
    // only its first 4 KiB sector lands.
    {
        let dw_path = db.dir.path().join("doublewrite.dblwr");
        let faulty = faulty_file(&ts_path);
        let ts = tablespace_over(1, &ts_path, faulty.clone());
        let dw = Doublewrite::open(
            &dw_path,
            open_file(&dw_path, IoMode::Buffered, false).unwrap(),
            PAGE,
            SLOTS,
        )
        .unwrap();
        faulty.inner().arm(FaultPlan::fail_nth_write(2));
        let p1 = page_image(ts.page_id(1), 20);
        let p2 = page_image(ts.page_id(2), 20);
        assert!(dw.write_batch(&[(&ts, 1, &p1), (&ts, 2, &p2)]).is_err());
        let raw = BufferedFile::open(&ts_path, false).unwrap();
        raw.write(PAGE.offset_of(2), &p2[..4096]).unwrap();
        raw.sync_data().unwrap();
    }

    // Restart.
    let (ts, dw) = db.open();
    let mut buf = ts.new_page_buf();
    let err = ts.read_page(2, &mut buf).unwrap_err();
    assert!(err.is_corrupt_page(), "{err}");

    let report = dw.recover(&[&ts], Lsn::ZERO).unwrap();
    assert_eq!(report.repaired, vec![PageId::new(1, 2)]);
    assert_eq!(report.pages_checked, 3, "pages 1, 2 and 3 have copies");
    assert_eq!(report.valid_copies, 4, "slots 0,1 hold batch 2; slots 2,3 batch 1");
    assert_eq!(report.empty_slots, SLOTS - 4);

    let expect = [10, 20, 20, 10];
    for (no, lsn) in expect.into_iter().enumerate() {
        let h = ts.read_page(no as u32, &mut buf).unwrap();
        assert_eq!(h.lsn.0, lsn, "page {no}");
        assert_eq!(buf, page_image(ts.page_id(no as u32), lsn));
    }
    // Recovery is idempotent.
    assert!(dw.recover(&[&ts], Lsn::ZERO).unwrap().repaired.is_empty());
}

#[test]
fn torn_doublewrite_copy_is_ignored_and_in_place_page_kept() {
    let db = Db::new();
    let (ts, dw) = db.open();
    ts.extend(2).unwrap();
    db.write_version(&ts, &dw, 2, 10);
    // Power fails while the next batch's copy is written: slot 0 is torn,
    // so no in-place write of that batch had started.
    let next = page_image(ts.page_id(0), 30);
    let raw = BufferedFile::open(dw.path(), false).unwrap();
    raw.write(0, &next[..8192]).unwrap();
    drop((ts, dw));

    let (ts, dw) = db.open();
    let report = dw.recover(&[&ts], Lsn::ZERO).unwrap();
    assert_eq!(report.torn_copies, 1);
    assert!(report.repaired.is_empty());
    let mut buf = ts.new_page_buf();
    assert_eq!(ts.read_page(0, &mut buf).unwrap().lsn.0, 10);
}

#[test]
fn newest_copy_wins_when_stale_copies_linger_in_other_slots() {
    let db = Db::new();
    let (ts, dw) = db.open();
    ts.extend(4).unwrap();
    db.write_version(&ts, &dw, 4, 10); // page 3 copy (LSN 10) stays in slot 3
    let p3 = page_image(ts.page_id(3), 50);
    dw.write_batch(&[(&ts, 3, &p3)]).unwrap(); // slot 0 now holds page 3 at LSN 50
                                               // Tear page 3 in place as if LSN 50's write had been interrupted.
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    raw.write(PAGE.offset_of(3) + 8192, &page_image(ts.page_id(3), 10)[8192..])
        .unwrap();

    let report = dw.recover(&[&ts], Lsn::ZERO).unwrap();
    assert_eq!(report.repaired, vec![PageId::new(1, 3)]);
    let mut buf = ts.new_page_buf();
    assert_eq!(ts.read_page(3, &mut buf).unwrap().lsn.0, 50);
}

#[test]
fn batches_larger_than_the_doublewrite_area_go_in_chunks() {
    let db = Db::new();
    let (ts, dw) = db.open();
    ts.extend(SLOTS * 2 + 3).unwrap();
    db.write_version(&ts, &dw, SLOTS * 2 + 3, 77);
    let mut buf = ts.new_page_buf();
    for no in 0..ts.page_count() {
        assert_eq!(ts.read_page(no, &mut buf).unwrap().lsn.0, 77);
    }
}

/// SQLite `do_ioerr_test` style: fail the N-th write or fsync of either file
/// during a batch, for N = 1, 2, ...; the batch must fail cleanly and, after
/// a restart and recovery, every page must verify at its old or new version.
#[test]
fn failed_write_or_fsync_at_any_point_of_a_batch_leaves_every_page_old_or_new() {
    for target_dw in [false, true] {
        for sync in [false, true] {
            for n in 1..=8u64 {
                let db = Db::new();
                {
                    let (ts, dw) = db.open();
                    ts.extend(4).unwrap();
                    db.write_version(&ts, &dw, 4, 10);
                }
                let ts_path = db.dir.path().join("t1.ibd");
                let dw_path = db.dir.path().join("doublewrite.dblwr");
                let ts_file = faulty_file(&ts_path);
                let dw_file = faulty_file(&dw_path);
                let plan = if sync {
                    FaultPlan::fail_nth_sync(n)
                } else {
                    FaultPlan::fail_nth_write(n)
                };
                if target_dw {
                    dw_file.inner().arm(plan);
                } else {
                    ts_file.inner().arm(plan);
                }
                let ts = tablespace_over(1, &ts_path, ts_file.clone());
                let dw = Doublewrite::open(&dw_path, dw_file.clone() as Arc<dyn StorageBackend>, PAGE, SLOTS).unwrap();
                let images: Vec<_> = (0..4).map(|no| page_image(ts.page_id(no), 20)).collect();
                let batch: Vec<_> = images
                    .iter()
                    .enumerate()
                    .map(|(no, img)| (&ts, no as u32, img))
                    .collect();
                let failed = dw.write_batch(&batch).is_err();
                let injected = ts_file.inner().counters().injected + dw_file.inner().counters().injected;
                assert_eq!(failed, injected > 0, "dw={target_dw} sync={sync} n={n}");
                drop((ts, dw));

                let (ts, dw) = db.open();
                dw.recover(&[&ts], Lsn::ZERO).unwrap();
                let mut buf = ts.new_page_buf();
                for no in 0..4 {
                    let lsn = ts.read_page(no, &mut buf).unwrap().lsn.0;
                    assert!(lsn == 10 || lsn == 20, "page {no} at lsn {lsn}");
                    if !failed {
                        assert_eq!(lsn, 20);
                    }
                }
            }
        }
    }
}

/// A backend that records how many writes are in progress at once; each
/// write holds its slot for 2 ms so that concurrent writes overlap.
struct OverlapCounter {
    inner: Arc<dyn StorageBackend>,
    in_flight: std::sync::atomic::AtomicUsize,
    most_in_flight: std::sync::atomic::AtomicUsize,
}

impl StorageBackend for OverlapCounter {
    fn len(&self) -> flushwise_engine::storage::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, buf: &mut [u8]) -> flushwise_engine::storage::Result<()> {
        self.inner.read(offset, buf)
    }
    fn write(&self, offset: u64, data: &[u8]) -> flushwise_engine::storage::Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.in_flight.fetch_add(1, SeqCst) + 1;
        self.most_in_flight.fetch_max(now, SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let r = self.inner.write(offset, data);
        self.in_flight.fetch_sub(1, SeqCst);
        r
    }
    fn set_len(&self, len: u64) -> flushwise_engine::storage::Result<()> {
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> flushwise_engine::storage::Result<()> {
        self.inner.sync_data()
    }
    fn close(&self) -> flushwise_engine::storage::Result<()> {
        self.inner.close()
    }
}

/// MySQL 5.6.15 posts a batch's in-place writes asynchronously, all at once
/// (`buf_dblwr_flush_buffered_writes`), and syncs when the last completes:
/// the device must see more than one of them in flight, never more than
/// `IN_PLACE_WRITE_DEPTH`, and every page must read back.
#[test]
fn batch_in_place_writes_are_in_flight_together() {
    use flushwise_engine::storage::batch_io::IN_PLACE_WRITE_DEPTH;
    let dir = tempfile::tempdir().unwrap();
    let ts_path = dir.path().join("t1.ibd");
    let counter = Arc::new(OverlapCounter {
        inner: open_file(&ts_path, IoMode::Buffered, true).unwrap(),
        in_flight: 0.into(),
        most_in_flight: 0.into(),
    });
    let ts = tablespace_over(1, &ts_path, counter.clone());
    let dw_path = dir.path().join("doublewrite.dblwr");
    let dw = Doublewrite::open(&dw_path, open_file(&dw_path, IoMode::Buffered, true).unwrap(), PAGE, 64).unwrap();
    ts.extend(64).unwrap();
    counter.most_in_flight.store(0, std::sync::atomic::Ordering::SeqCst);
    let images: Vec<_> = (0..64).map(|no| page_image(ts.page_id(no), 7)).collect();
    let batch: Vec<_> = images
        .iter()
        .enumerate()
        .map(|(no, img)| (&ts, no as u32, img))
        .collect();
    dw.write_batch(&batch).unwrap();
    let most = counter.most_in_flight.load(std::sync::atomic::Ordering::SeqCst);
    assert!(most > 1, "the 64 in-place writes went one at a time");
    assert!(
        most <= IN_PLACE_WRITE_DEPTH,
        "{most} writes in flight, limit {IN_PLACE_WRITE_DEPTH}"
    );
    let mut buf = flushwise_engine::storage::AlignedBuf::zeroed(PAGE.bytes());
    for (no, img) in images.iter().enumerate() {
        ts.read_page(no as u32, &mut buf).unwrap();
        assert_eq!(&buf[..], &img[..], "page {no}");
    }
}

/// Finding 2 of issue #14: a copy of page 1 from an early batch lingers in
/// a slot after later batches wrote page 1 again (LSN 30) and moved the
/// checkpoint past it. Page 1 is then damaged in place. Restoring the
/// lingering copy (LSN 10) would silently undo the committed update at
/// LSN 30: recovery must refuse it and name the page instead.
#[test]
fn stale_doublewrite_copy_is_never_restored_over_a_committed_update() {
    let db = Db::new();
    let (ts, dw) = db.open();
    ts.extend(4).unwrap();
    db.write_version(&ts, &dw, 4, 10); // slots 0..4: pages 0..4 at LSN 10
    let p1 = page_image(ts.page_id(1), 30);
    dw.write_batch(&[(&ts, 1, &p1)]).unwrap(); // slot 0: page 1 at LSN 30
    let p0 = page_image(ts.page_id(0), 40);
    dw.write_batch(&[(&ts, 0, &p0)]).unwrap(); // slot 0: page 0 at LSN 40
                                               // Slot 1 still holds page 1 at LSN 10; in place it is at LSN 30, and the
                                               // checkpoint (LSN 45) says every change before it is in the data file.
    let checkpoint = Lsn(45);
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    raw.write(PAGE.offset_of(1) + 4096, &[0xA5; 512]).unwrap();
    raw.sync_data().unwrap();
    drop((ts, dw));

    let (ts, dw) = db.open();
    let err = dw
        .recover(&[&ts], checkpoint)
        .expect_err("a copy older than the checkpoint must not be restored");
    let msg = err.to_string();
    assert!(msg.contains("page 1") && msg.contains("t1.ibd"), "{msg}");
    assert!(msg.contains("older than the checkpoint"), "{msg}");
    // Nothing was written over the damaged page: it still reads as corrupt
    // (not as the stale LSN 10 version).
    let mut buf = ts.new_page_buf();
    assert!(ts.read_page(1, &mut buf).unwrap_err().is_corrupt_page());

    // A copy that does not match the page it would replace is refused too:
    // page 2's slot is rewritten to claim page 3 while page 3 in place
    // names itself page 2 (a misdirected write).
    let p2_as_3 = page_image(ts.page_id(3), 50);
    let p3_in_place_is_2 = page_image(ts.page_id(2), 50);
    raw.write(PAGE.offset_of(3), &p3_in_place_is_2).unwrap();
    raw.sync_data().unwrap();
    let dw_raw = BufferedFile::open(dw.path(), false).unwrap();
    dw_raw.write(PAGE.offset_of(2), &p2_as_3).unwrap();
    // Repair page 1 by hand so only page 3 is in question.
    raw.write(PAGE.offset_of(1), &p1).unwrap();
    raw.sync_data().unwrap();
    let err = dw
        .recover(&[&ts], Lsn(10))
        .expect_err("a copy of another page than the one in place must not be restored");
    let msg = err.to_string();
    assert!(msg.contains("page 3") && msg.contains("names page 2"), "{msg}");
}

/// Found by `flushwise torture` (10 TPC-C trials of 10,000): a page never
/// written before (zeros since the file grew) is torn on its first write:
/// the header sector was dropped, a later sector landed. The damaged page
/// names no page at all (its header is zeros), so it cannot contradict the
/// copy, which is newer than the checkpoint: recovery must restore it.
#[test]
fn torn_first_write_of_a_new_page_with_its_header_sector_lost_is_repaired() {
    let db = Db::new();
    let (ts, dw) = db.open();
    ts.extend(4).unwrap();
    db.write_version(&ts, &dw, 3, 10); // pages 0..3 written; page 3 never
    let p3 = page_image(ts.page_id(3), 20);
    let raw = BufferedFile::open(ts.path(), false).unwrap();
    // The copy is durable; in place only the page's second 4 KiB landed.
    dw.write_batch(&[(&ts, 3, &p3)]).unwrap();
    raw.write(PAGE.offset_of(3), &vec![0u8; PAGE.bytes()]).unwrap();
    raw.write(PAGE.offset_of(3) + 4096, &p3[4096..8192]).unwrap();
    raw.sync_data().unwrap();
    drop((ts, dw));

    let (ts, dw) = db.open();
    let report = dw.recover(&[&ts], Lsn(15)).expect("a torn new page is repaired");
    assert!(report.repaired.contains(&ts.page_id(3)), "{report:?}");
    let mut buf = ts.new_page_buf();
    ts.read_page(3, &mut buf).unwrap();
    assert_eq!(&buf[..], &p3[..]);
}

/// MySQL 5.6's layout: the last 8 of 128 slots belong to single-page
/// flushes. Many writers at once, beside batches, each page ends durable in
/// place, and a single page torn in place is repaired from its own slot.
#[test]
fn single_page_slots_write_concurrently_and_repair_a_torn_page() {
    const FULL: u32 = 128;
    let dir = tempfile::tempdir().unwrap();
    let ts_path = dir.path().join("t1.ibd");
    let dw_path = dir.path().join("doublewrite.dblwr");
    let open = || {
        let ts = tablespace_over(1, &ts_path, open_file(&ts_path, IoMode::Buffered, true).unwrap());
        let dw = Doublewrite::open(
            &dw_path,
            open_file(&dw_path, IoMode::Buffered, true).unwrap(),
            PAGE,
            FULL,
        )
        .unwrap();
        (ts, dw)
    };
    let (ts, dw) = open();
    assert_eq!(dw.single_page_slots(), 8);
    ts.extend(64).unwrap();
    // 32 single pages from 16 threads (twice the slots) beside two batches.
    std::thread::scope(|s| {
        for t in 0..16u32 {
            let (ts, dw) = (&ts, &dw);
            s.spawn(move || {
                for no in [t, t + 16] {
                    let img = page_image(ts.page_id(no), 100 + u64::from(no));
                    dw.write_single_page((ts, no, &img)).unwrap();
                }
            });
        }
        let (ts, dw) = (&ts, &dw);
        s.spawn(move || {
            for lsn in [50, 60] {
                let images: Vec<_> = (32..64).map(|no| page_image(ts.page_id(no), lsn)).collect();
                let batch: Vec<_> = images.iter().zip(32..64).map(|(img, no)| (ts, no, img)).collect();
                dw.write_batch(&batch).unwrap();
            }
        });
    });
    let mut buf = ts.new_page_buf();
    for no in 0..64u32 {
        let want = if no < 32 { 100 + u64::from(no) } else { 60 };
        assert_eq!(ts.read_page(no, &mut buf).unwrap().lsn.0, want, "page {no}");
    }
    // One more single page, and a power loss that tore its in-place write
    // (its first sector new, the rest old): the copy in a single-page slot
    // (past the 120 batch slots) restores it.
    let img = page_image(ts.page_id(5), 500);
    dw.write_single_page((&ts, 5, &img)).unwrap();
    drop((ts, dw));
    let mut torn = page_image(PageId::new(1, 5), 100 + 5);
    torn[..4096].copy_from_slice(&img[..4096]);
    let raw = BufferedFile::open(&ts_path, false).unwrap();
    raw.write(PAGE.offset_of(5), &torn).unwrap();
    raw.sync_data().unwrap();
    let (ts, dw) = open();
    assert!(ts.read_page(5, &mut buf).unwrap_err().is_corrupt_page());
    let report = dw.recover(&[&ts], Lsn::ZERO).unwrap();
    assert_eq!(report.repaired, vec![PageId::new(1, 5)]);
    assert_eq!(ts.read_page(5, &mut buf).unwrap().lsn.0, 500);
}

/// A buffer too small for single-page slots writes single pages as batches.
#[test]
fn a_small_buffer_has_no_single_page_slots() {
    let db = Db::new();
    let (ts, dw) = db.open();
    assert_eq!(dw.single_page_slots(), 0);
    ts.extend(1).unwrap();
    let img = page_image(ts.page_id(0), 42);
    dw.write_single_page((&ts, 0, &img)).unwrap();
    let mut buf = ts.new_page_buf();
    assert_eq!(ts.read_page(0, &mut buf).unwrap().lsn.0, 42);
}
