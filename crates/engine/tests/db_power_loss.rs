//! Scenario: a database on the in-memory power-loss disk
//! (`DbOptions::storage`). Committed rows survive a power cut whatever the
//! cut does to unsynced writes; an opener refuses what it cannot do (an
//! emulated device, a redo resize) by name; and nothing touches the real
//! filesystem at the database's path.

use std::path::Path;
use std::sync::Arc;

use flushwise_core::device::DeviceSpec;
use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::storage::{PowerLossDisk, StorageOpener};

const DIR: &str = "/nonexistent-power-loss-db";

fn options(disk: &PowerLossDisk) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 256 << 10,
        redo_bytes: 1 << 20,
        storage: Some(Arc::new(disk.clone()) as Arc<dyn StorageOpener>),
        ..DbOptions::default()
    }
}

#[test]
fn committed_rows_survive_every_kind_of_power_cut() {
    for seed in 0..30u64 {
        let disk = PowerLossDisk::new();
        let db = Database::create(DIR, options(&disk)).unwrap();
        let idx = db.create_index("t", true).unwrap();
        for i in 0u32..200 {
            let mut txn = db.begin();
            txn.insert(idx, &i.to_be_bytes(), &[7u8; 300]).unwrap();
            txn.commit().unwrap();
        }
        // An uncommitted change under way at the cut.
        let mut txn = db.begin();
        txn.insert(idx, &u32::MAX.to_be_bytes(), b"never committed").unwrap();
        let (image, _report) = disk.image_after_cut(seed);
        drop(txn);
        drop(db);
        let after = PowerLossDisk::from_image(&image);
        let db = Database::open(DIR, options(&after)).unwrap();
        let idx = db.index("t").unwrap();
        let mut txn = db.begin();
        for i in 0u32..200 {
            assert!(
                txn.get(idx, &i.to_be_bytes()).unwrap().is_some(),
                "seed {seed}: row {i} lost"
            );
        }
        assert!(txn.get(idx, &u32::MAX.to_be_bytes()).unwrap().is_none(), "seed {seed}");
        drop(txn);
        db.check().unwrap();
        db.close().unwrap();
    }
    assert!(
        !Path::new(DIR).exists(),
        "the power-loss database touched the real filesystem"
    );
}

#[test]
fn an_opener_refuses_an_emulated_device_and_a_redo_resize_by_name() {
    let disk = PowerLossDisk::new();
    let db = Database::create(DIR, options(&disk)).unwrap();
    db.close().unwrap();
    let e = Database::open(
        DIR,
        DbOptions {
            data_device: Some("samsung-850-pro".parse::<DeviceSpec>().unwrap()),
            ..options(&disk)
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("emulated data device") && e.contains("power-loss disk"),
        "{e}"
    );
    let e = Database::open(
        DIR,
        DbOptions {
            resize_redo_at_open: true,
            redo_bytes: 2 << 20,
            ..options(&disk)
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("cannot be resized"), "{e}");
    let e = Database::open("/elsewhere", options(&disk)).err().unwrap().to_string();
    assert!(e.contains("no such database file"), "{e}");
}
