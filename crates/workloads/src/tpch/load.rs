//! `prepare`: the eight tables created and bulk-loaded, and the load and
//! refresh markers in `tpch.meta`.
//!
//! Each table is one load job whose rows come out of [`Generator`] in key
//! order and go to the engine's bottom-up loader
//! ([`Database::load_sorted`]); jobs run on `threads` worker threads,
//! largest first (LINEITEM, then ORDERS, ...). ORDERS and LINEITEM each
//! generate every order with its lines (an order's status and total price
//! come from its lines), so the two jobs can run at once.
//!
//! Markers in `tpch.meta`: `load_started` (scale factor, seed) before any
//! row, `load_complete` after the last; a database without `load_complete`
//! is refused by every other command ([`require_loaded`]); `refresh_pairs`
//! counts the refresh pairs (RF1 + RF2) that have run against the database,
//! so the next run's RF1 uses fresh order keys and its RF2 deletes orders
//! that still exist ([`super::refresh`]).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use flushwise_engine::db::{Database, DbError, IndexId};

use crate::tpcc::codec::{RowReader, RowWriter};

use super::gen::{Generator, Scale};
use super::schema::{Row, Table};
use super::TpchError;

/// What to load.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub sf: f64,
    pub seed: u64,
    /// Worker threads (at least 1).
    pub threads: usize,
}

/// Progress of a load, reported every few thousand rows.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct LoadProgress {
    pub rows_loaded: u64,
    /// LINEITEM's is its expected count.
    pub rows_expected: u64,
    pub tables_done: usize,
}

/// Rows loaded into one table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableRows {
    pub table: &'static str,
    pub rows: u64,
}

/// What a load did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub sf: f64,
    pub seed: u64,
    pub threads: usize,
    pub rows_loaded: u64,
    pub per_table: Vec<TableRows>,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
}

/// The `tpch.meta` record of a load.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LoadMarker {
    pub sf: f64,
    pub seed: u64,
}

const META_LOAD_STARTED: &[u8] = b"load_started";
const META_LOAD_COMPLETE: &[u8] = b"load_complete";
pub(crate) const META_REFRESH_PAIRS: &[u8] = b"refresh_pairs";

impl LoadMarker {
    fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(16)
            .u64(self.sf.to_bits())
            .u64(self.seed)
            .finish()
    }
    fn decode(b: &[u8]) -> Result<Self, TpchError> {
        let mut r = RowReader::new("tpch.meta", b);
        let m = Self {
            sf: f64::from_bits(r.u64()?),
            seed: r.u64()?,
        };
        r.finish()?;
        Ok(m)
    }
    /// The table sizes of this load.
    pub fn scale(&self) -> Result<Scale, TpchError> {
        Scale::new(self.sf).map_err(|reason| TpchError::Config { reason })
    }
}

/// The load state of a database.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadState {
    Empty,
    Partial(LoadMarker),
    Complete(LoadMarker),
}

fn meta_id(db: &Database) -> Result<Option<IndexId>, TpchError> {
    match db.index(Table::Meta.store_name()) {
        Ok(id) => Ok(Some(id)),
        Err(DbError::NoSuchIndex { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Reads the load marker.
pub fn load_state(db: &Database) -> Result<LoadState, TpchError> {
    let Some(meta) = meta_id(db)? else {
        return Ok(LoadState::Empty);
    };
    let (complete, started) = db.run(|t| Ok((t.get(meta, META_LOAD_COMPLETE)?, t.get(meta, META_LOAD_STARTED)?)))?;
    Ok(match (complete, started) {
        (Some(c), _) => LoadState::Complete(LoadMarker::decode(&c)?),
        (None, Some(s)) => LoadState::Partial(LoadMarker::decode(&s)?),
        (None, None) => LoadState::Empty,
    })
}

/// The marker of a complete load, or an error that says what is wrong.
pub fn require_loaded(db: &Database) -> Result<LoadMarker, TpchError> {
    match load_state(db)? {
        LoadState::Complete(m) => Ok(m),
        LoadState::Partial(m) => Err(TpchError::NotLoaded {
            reason: format!(
                "the TPC-H load of scale factor {} did not complete (no completion marker): \
                 delete the database and run `flushwise tpch prepare` again",
                m.sf
            ),
        }),
        LoadState::Empty => Err(TpchError::NotLoaded {
            reason: "no TPC-H database here: run `flushwise tpch prepare` first".into(),
        }),
    }
}

/// Refresh pairs run against the database so far.
pub fn refresh_pairs_done(db: &Database) -> Result<u64, TpchError> {
    let Some(meta) = meta_id(db)? else { return Ok(0) };
    let value = db.run(|t| t.get(meta, META_REFRESH_PAIRS))?;
    match value {
        None => Ok(0),
        Some(v) => {
            let mut r = RowReader::new("tpch.meta", &v);
            let n = r.u64()?;
            r.finish()?;
            Ok(n)
        }
    }
}

pub(crate) fn encode_refresh_pairs(n: u64) -> Vec<u8> {
    RowWriter::with_capacity(8).u64(n).finish()
}

type Rows<'g> = Box<dyn Iterator<Item = (Vec<u8>, Vec<u8>)> + Send + 'g>;

fn encoded<R: Row>(r: R) -> (Vec<u8>, Vec<u8>) {
    (r.key(), r.value())
}

/// The rows of `table`, in key order.
fn rows(g: &Generator, table: Table) -> Rows<'_> {
    let s = g.scale;
    match table {
        Table::Region => Box::new((0..5).map(|k| encoded(g.region(k)))),
        Table::Nation => Box::new((0..25).map(|k| encoded(g.nation(k)))),
        Table::Supplier => Box::new((1..=s.suppliers).map(|k| encoded(g.supplier(k)))),
        Table::Customer => Box::new((1..=s.customers).map(|k| encoded(g.customer(k)))),
        Table::Part => Box::new((1..=s.parts).map(|k| encoded(g.part(k)))),
        Table::PartSupp => Box::new((1..=s.parts).flat_map(|k| g.partsupps(k).into_iter().map(encoded))),
        Table::Orders => Box::new((0..s.orders).map(|i| encoded(g.order(i).0))),
        Table::Lineitem => Box::new((0..s.orders).flat_map(|i| g.order(i).1.into_iter().map(encoded))),
        Table::Meta => Box::new(std::iter::empty()),
    }
}

/// Creates the tables and loads them. Refuses a database that has TPC-H
/// tables already.
pub fn prepare(
    db: &Database,
    config: &LoadConfig,
    progress: &(dyn Fn(LoadProgress) + Sync),
) -> Result<LoadReport, TpchError> {
    let scale = Scale::new(config.sf).map_err(|reason| TpchError::Config { reason })?;
    if meta_id(db)?.is_some() {
        return Err(TpchError::AlreadyLoaded {
            reason: "this database already has TPC-H tables".into(),
        });
    }
    let started = Instant::now();
    let meta = db.create_index(Table::Meta.store_name(), true)?;
    let marker = LoadMarker {
        sf: config.sf,
        seed: config.seed,
    };
    db.run(|t| t.insert(meta, META_LOAD_STARTED, &marker.encode()))?;
    let mut ids = Vec::new();
    for table in Table::DATA {
        ids.push((table, db.create_index(table.store_name(), true)?));
    }
    let generator = Generator::new(scale, config.seed);
    let expected: u64 = Table::DATA.iter().map(|t| scale.rows(*t)).sum();
    // Largest first, so the longest job starts at once.
    ids.sort_by_key(|(t, _)| std::cmp::Reverse(scale.rows(*t)));
    let next = AtomicUsize::new(0);
    let loaded = AtomicU64::new(0);
    let done = AtomicUsize::new(0);
    let per_table = Mutex::new(Vec::new());
    let first_error: Mutex<Option<TpchError>> = Mutex::new(None);
    let threads = config.threads.max(1).min(ids.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(table, id)) = ids.get(i) else { return };
                let counted = rows(&generator, table).inspect(|_| {
                    let n = loaded.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % 20_000 == 0 {
                        progress(LoadProgress {
                            rows_loaded: n,
                            rows_expected: expected,
                            tables_done: done.load(Ordering::Relaxed),
                        });
                    }
                });
                match db.load_sorted(id, counted) {
                    Ok(report) => {
                        done.fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut v) = per_table.lock() {
                            v.push(TableRows {
                                table: table.name(),
                                rows: report.rows,
                            });
                        }
                    }
                    Err(e) => {
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(TpchError::Db(e));
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    db.run(|t| t.insert(meta, META_LOAD_COMPLETE, &marker.encode()))?;
    db.checkpoint()?;
    let mut per_table = per_table.into_inner().unwrap_or_default();
    per_table.sort_by_key(|r| Table::DATA.iter().position(|t| t.name() == r.table));
    let rows_loaded = per_table.iter().map(|r| r.rows).sum();
    let elapsed_s = started.elapsed().as_secs_f64();
    progress(LoadProgress {
        rows_loaded,
        rows_expected: expected,
        tables_done: Table::DATA.len(),
    });
    Ok(LoadReport {
        sf: config.sf,
        seed: config.seed,
        threads,
        rows_loaded,
        per_table,
        elapsed_s,
        rows_per_s: rows_loaded as f64 / elapsed_s.max(1e-9),
    })
}
