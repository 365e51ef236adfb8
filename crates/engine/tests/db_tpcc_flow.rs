//! The New-Order / Delivery flow of TPC-C on NEW_ORDER, run concurrently:
//! both lock the DISTRICT row exclusively first (as TPC-C's SQL does with
//! `SELECT ... FOR UPDATE`), so key locks without gap locks keep
//! consistency conditions 2, 3 and 5 (clause 3.3.2) per district, also
//! across a crash.

use std::ops::Bound;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbOptions, IndexId};
use flushwise_engine::page::PageSize;

const DISTRICTS: u32 = 4;
const THREADS: u64 = 6;
const OPS: u64 = 120;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 8 << 20,
        ..DbOptions::default()
    }
}

fn district_key(d: u32) -> Vec<u8> {
    format!("d{d:02}").into_bytes()
}

fn order_key(d: u32, o: u32) -> Vec<u8> {
    format!("d{d:02}/o{o:08}").into_bytes()
}

fn order_id(key: &[u8]) -> u32 {
    std::str::from_utf8(&key[5..]).unwrap().parse().unwrap()
}

fn u32_of(v: Option<Vec<u8>>) -> u32 {
    u32::from_le_bytes(v.expect("row exists").try_into().unwrap())
}

struct Tables {
    district: IndexId,
    orders: IndexId,
    new_order: IndexId,
}

fn tables(db: &Database) -> Tables {
    Tables {
        district: db.index("district").unwrap(),
        orders: db.index("oorder").unwrap(),
        new_order: db.index("new_order").unwrap(),
    }
}

/// Conditions 2 (D_NEXT_O_ID - 1 = max O_ID = max NO_O_ID), 3 (NEW_ORDER
/// ids contiguous) and 5 (O_CARRIER_ID null iff in NEW_ORDER) per district.
fn check_consistency(db: &Database) {
    let t = tables(db);
    let mut txn = db.begin();
    for d in 0..DISTRICTS {
        let next = u32_of(txn.get(t.district, &district_key(d)).unwrap());
        let prefix = format!("d{d:02}/");
        let orders = txn
            .scan_prefix(t.orders, prefix.as_bytes(), Direction::Forward, None)
            .unwrap();
        let new_orders = txn
            .scan_prefix(t.new_order, prefix.as_bytes(), Direction::Forward, None)
            .unwrap();
        let max_o = orders.last().map_or(0, |(k, _)| order_id(k));
        assert_eq!(next - 1, max_o, "district {d}: condition 2 (orders)");
        assert_eq!(
            orders.len() as u32,
            max_o,
            "district {d}: order ids 1..={max_o} without gaps"
        );
        if let (Some((first, _)), Some((last, _))) = (new_orders.first(), new_orders.last()) {
            assert_eq!(order_id(last), max_o, "district {d}: condition 2 (new orders)");
            assert_eq!(
                order_id(last) - order_id(first) + 1,
                new_orders.len() as u32,
                "district {d}: condition 3"
            );
        }
        for (k, carrier) in &orders {
            let undelivered = u32_of(Some(carrier.clone())) == 0;
            let queued = new_orders.iter().any(|(n, _)| n == k);
            assert_eq!(
                undelivered,
                queued,
                "district {d}: condition 5 for {}",
                String::from_utf8_lossy(k)
            );
        }
    }
    txn.commit().unwrap();
}

#[test]
fn new_order_and_delivery_keep_district_consistency_across_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    db.create_index("district", true).unwrap();
    db.create_index("oorder", true).unwrap();
    db.create_index("new_order", true).unwrap();
    let t = tables(&db);
    db.run(|txn| {
        for d in 0..DISTRICTS {
            txn.insert(t.district, &district_key(d), &1u32.to_le_bytes())?;
        }
        Ok(())
    })
    .unwrap();

    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (db, t) = (&db, &t);
            s.spawn(move || {
                let mut rng = (thread + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                for _ in 0..OPS {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let d = (rng % u64::from(DISTRICTS)) as u32;
                    if rng % 10 < 7 {
                        // New-Order; 1 in 20 aborts after all its writes.
                        let abort = rng % 20 == 0;
                        let mut txn = db.begin();
                        let body = (|| {
                            let next = u32_of(txn.get_for_update(t.district, &district_key(d))?);
                            txn.update(t.district, &district_key(d), &(next + 1).to_le_bytes())?;
                            txn.insert(t.orders, &order_key(d, next), &0u32.to_le_bytes())?;
                            txn.insert(t.new_order, &order_key(d, next), b"")?;
                            Ok::<_, flushwise_engine::db::DbError>(())
                        })();
                        match body {
                            Ok(()) if !abort => txn.commit().unwrap(),
                            Ok(()) => txn.rollback().unwrap(),
                            Err(e) if e.is_retryable() => txn.rollback().unwrap(),
                            Err(e) => panic!("{e}"),
                        }
                    } else {
                        // Delivery of the district's oldest new order.
                        db.run(|txn| {
                            txn.get_for_update(t.district, &district_key(d))?;
                            let prefix = format!("d{d:02}/");
                            let oldest = txn.range_for_update(
                                t.new_order,
                                Bound::Included(prefix.as_bytes()),
                                Bound::Excluded(format!("d{d:02}0").as_bytes()),
                                Direction::Forward,
                                Some(1),
                            )?;
                            if let Some((k, _)) = oldest.first() {
                                assert!(txn.delete(t.new_order, k)?);
                                assert!(txn.update(t.orders, k, &7u32.to_le_bytes())?);
                            }
                            Ok(())
                        })
                        .unwrap();
                    }
                }
            });
        }
    });
    check_consistency(&db);
    drop(db); // crash
    let db = Database::open(dir.path(), options()).unwrap();
    check_consistency(&db);
    db.check().unwrap();
    db.close().unwrap();
}
