//! A database whose data and doublewrite files sit on an emulated device:
//! the I/O is real (the rows survive a crash and a reopen) and only its
//! completion follows the device model.

use flushwise_core::device::DeviceSpec;
use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;

#[test]
fn rows_written_through_an_emulated_ssd_survive_a_crash_and_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        // Small pool: the rows below do not fit, so pages are written and
        // read back through the emulated device.
        buffer_pool_bytes: 256 << 10,
        redo_bytes: 4 << 20,
        data_device: Some(DeviceSpec::parse("samsung-850-pro").unwrap()),
        ..DbOptions::default()
    };
    let db = Database::create(dir.path(), opts.clone()).unwrap();
    let idx = db.create_index("t", true).unwrap();
    for chunk in 0..10u32 {
        let mut txn = db.begin();
        for i in chunk * 100..(chunk + 1) * 100 {
            txn.insert(idx, format!("k{i:05}").as_bytes(), &[i as u8; 200]).unwrap();
        }
        txn.commit().unwrap();
    }
    let reads = db.shell().metrics().Innodb_buffer_pool_reads;
    drop(db); // crash
    let db = Database::open(dir.path(), opts).unwrap();
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for i in 0..1000u32 {
        assert_eq!(
            txn.get(idx, format!("k{i:05}").as_bytes()).unwrap(),
            Some(vec![i as u8; 200])
        );
    }
    txn.commit().unwrap();
    db.check().unwrap();
    assert!(
        db.shell().metrics().Innodb_buffer_pool_reads > 0 || reads > 0,
        "the pool was meant to be too small for the rows"
    );
    db.close().unwrap();
}
