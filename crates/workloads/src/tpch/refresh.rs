//! The refresh functions (TPC-H clause 2.5): RF1 inserts new sales, RF2
//! deletes old ones, `SF × 1500` orders each with their lines.
//!
//! Refresh pair `p` (1-based, counted over the database's life in
//! `tpch.meta`, [`super::load::refresh_pairs_done`]): RF1 inserts the
//! orders [`Generator::refresh_order`]`(p, 0..n)` (keys in the second 8 of
//! every 32, never used by the load) with their lines; RF2 deletes the load
//! orders with indexes `(p − 1)·n .. p·n` and their lines. Each order with
//! its lines is one transaction (the specification lets a refresh function
//! be split into transactions of whole orders); both functions are
//! idempotent (an order already inserted is skipped, one already deleted
//! is absent), so a pair cut short by a crash can simply run again.
//!
//! Invariant: after a pair, ORDERS and LINEITEM hold the same number of
//! orders as after the load, and no order is left without its lines or
//! lines without their order (each change is one transaction).

use std::ops::Bound;
use std::time::Instant;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, IndexId};

use super::gen::{load_orderkey, Generator};
use super::load::{encode_refresh_pairs, refresh_pairs_done, META_REFRESH_PAIRS};
use super::schema::{lineitem_prefix, order_key, Row, Table};
use super::TpchError;

/// What one refresh function did.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct RefreshReport {
    pub pair: u64,
    pub orders: u64,
    pub lineitems: u64,
    pub seconds: f64,
}

fn id(db: &Database, table: Table) -> Result<IndexId, TpchError> {
    Ok(db.index(table.store_name())?)
}

/// RF1 of pair `pair`: the new orders and their lines.
pub fn rf1(db: &Database, generator: &Generator, pair: u64) -> Result<RefreshReport, TpchError> {
    check_pair(generator, pair)?;
    let started = Instant::now();
    let (orders, lines) = (id(db, Table::Orders)?, id(db, Table::Lineitem)?);
    let mut report = RefreshReport {
        pair,
        ..RefreshReport::default()
    };
    for j in 0..generator.scale.refresh_orders {
        let (order, items) = generator.refresh_order(pair, j);
        let inserted = db.run(|t| {
            if t.get_for_update(orders, &order.key())?.is_some() {
                return Ok(None);
            }
            t.insert(orders, &order.key(), &order.value())?;
            for l in &items {
                t.insert(lines, &l.key(), &l.value())?;
            }
            Ok(Some(items.len() as u64))
        })?;
        if let Some(n) = inserted {
            report.orders += 1;
            report.lineitems += n;
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// RF2 of pair `pair`: old orders and their lines deleted.
pub fn rf2(db: &Database, generator: &Generator, pair: u64) -> Result<RefreshReport, TpchError> {
    check_pair(generator, pair)?;
    let started = Instant::now();
    let (orders, lines) = (id(db, Table::Orders)?, id(db, Table::Lineitem)?);
    let n = generator.scale.refresh_orders;
    let mut report = RefreshReport {
        pair,
        ..RefreshReport::default()
    };
    for index in (pair as i64 - 1) * n..pair as i64 * n {
        let orderkey = load_orderkey(index);
        let prefix = lineitem_prefix(orderkey);
        let end = flushwise_engine::btree::secondary::prefix_successor(&prefix);
        let deleted = db.run(|t| {
            let end = match &end {
                Some(e) => Bound::Excluded(e.as_slice()),
                None => Bound::Unbounded,
            };
            let items = t.range_for_update(lines, Bound::Included(&prefix), end, Direction::Forward, None)?;
            for (k, _) in &items {
                t.delete(lines, k)?;
            }
            let order = t.delete(orders, &order_key(orderkey))?;
            Ok((order, items.len() as u64))
        })?;
        if deleted.0 {
            report.orders += 1;
        }
        report.lineitems += deleted.1;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Records that pair `pair` has run (RF1 and RF2 both).
pub fn record_pair(db: &Database, pair: u64) -> Result<(), TpchError> {
    let meta = id(db, Table::Meta)?;
    db.run(|t| t.upsert(meta, META_REFRESH_PAIRS, &encode_refresh_pairs(pair)))?;
    Ok(())
}

/// The next pair number of this database.
pub fn next_pair(db: &Database) -> Result<u64, TpchError> {
    Ok(refresh_pairs_done(db)? + 1)
}

fn check_pair(generator: &Generator, pair: u64) -> Result<(), TpchError> {
    let max = generator.scale.refresh_pairs_max();
    if pair == 0 || pair > max {
        return Err(TpchError::Config {
            reason: format!(
                "refresh pair {pair}: this database allows pairs 1..={max} (RF1's keys and RF2's old orders run out); prepare it again"
            ),
        });
    }
    Ok(())
}
