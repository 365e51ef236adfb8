//! `prepare`: the table's primary index and its secondary indexes created
//! and bulk-loaded in key order, and the load markers in `insert.meta`.
//!
//! One load job per index on `threads` worker threads, the primary first
//! (the largest). The primary's rows come out of [`Row::generate`] in id
//! order; a secondary index's job draws every row's key for that index
//! ([`keys_of`], without the filler), sorts the `(key, id)` pairs (16
//! bytes a row in memory while the job runs) and loads their composite
//! keys, which sort as the pairs do. Both go to the engine's bottom-up
//! loader ([`Database::load_sorted`]).
//!
//! Markers in `insert.meta`: `load_started` (the [`LoadMarker`]) before
//! any row, `load_complete` after the last; a database without
//! `load_complete` is refused by the driver and the check
//! ([`require_loaded`]).

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use flushwise_engine::btree::secondary::composite_key;
use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbError, IndexId};

use crate::tpcc::codec::{RowReader, RowWriter};

use super::schema::{keys_of, secondary_name, InsertSchema, Row, RowShape, ID_FIRST, PRIMARY};
use super::InsertError;

/// The meta index's name.
pub const META: &str = "insert.meta";
const META_LOAD_STARTED: &[u8] = b"load_started";
const META_LOAD_COMPLETE: &[u8] = b"load_complete";
/// Largest table loaded by `prepare` (a secondary index's job sorts 16
/// bytes a row: 1.6 GB at this size).
pub const ROWS_MAX: u64 = 100_000_000;

/// What a load put in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoadMarker {
    /// Rows, ids `ID_FIRST ..= rows`.
    pub rows: u64,
    pub shape: RowShape,
    pub seed: u64,
}

impl LoadMarker {
    fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(24)
            .u64(self.rows)
            .u32(self.shape.secondary_indexes)
            .u32(self.shape.row_bytes)
            .u64(self.seed)
            .finish()
    }

    fn decode(b: &[u8]) -> Result<Self, InsertError> {
        let mut r = RowReader::new(META, b);
        let rows = r.u64()?;
        let secondary_indexes = r.u32()?;
        let row_bytes = r.u32()?;
        let seed = r.u64()?;
        r.finish()?;
        let shape = RowShape::new(secondary_indexes, row_bytes).map_err(|reason| InsertError::NotLoaded {
            reason: format!("{META}: the load marker's shape is not one prepare makes: {reason}"),
        })?;
        Ok(Self { rows, shape, seed })
    }
}

/// What to load and how.
#[derive(Clone, Copy, Debug)]
pub struct LoadConfig {
    pub marker: LoadMarker,
    /// Worker threads (at least 1).
    pub threads: usize,
}

/// Entries loaded into one index.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IndexEntries {
    pub index: String,
    pub entries: u64,
}

/// What a load did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub marker: LoadMarker,
    pub threads: usize,
    /// Entries of every index together.
    pub entries_loaded: u64,
    pub per_index: Vec<IndexEntries>,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
}

fn meta_id(db: &Database) -> Result<Option<IndexId>, InsertError> {
    match db.index(META) {
        Ok(id) => Ok(Some(id)),
        Err(DbError::NoSuchIndex { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn not_here() -> InsertError {
    InsertError::NotLoaded {
        reason: "no insert table here: run `flushwise insert prepare` first".into(),
    }
}

/// The marker of a complete load and the table's indexes, or an error that
/// says what is wrong.
pub fn require_loaded(db: &Database) -> Result<(LoadMarker, InsertSchema), InsertError> {
    let meta = meta_id(db)?.ok_or_else(not_here)?;
    let (complete, started) = db.run(|t| Ok((t.get(meta, META_LOAD_COMPLETE)?, t.get(meta, META_LOAD_STARTED)?)))?;
    let marker = match (complete, started) {
        (Some(c), _) => LoadMarker::decode(&c)?,
        (None, Some(s)) => {
            return Err(InsertError::NotLoaded {
                reason: format!(
                    "the load of {} rows did not complete (no completion marker): delete the database and run `flushwise insert prepare` again",
                    LoadMarker::decode(&s)?.rows
                ),
            })
        }
        (None, None) => return Err(not_here()),
    };
    let primary = db.index(PRIMARY)?;
    let secondaries = (1..=marker.shape.secondary_indexes)
        .map(|j| db.index(&secondary_name(j)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((
        marker,
        InsertSchema {
            primary,
            secondaries,
            shape: marker.shape,
        },
    ))
}

/// The largest id in the table, `None` if it is empty (a read of the
/// right-most leaf, without locks: call it while nothing inserts).
pub fn max_id(db: &Database, schema: &InsertSchema) -> Result<Option<u64>, InsertError> {
    let mut last = None;
    db.scan_unlocked(
        schema.primary,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Backward,
        |key, _| {
            last = Some(key);
            false
        },
    )?;
    last.map(|k| Row::id_of(&k).map_err(InsertError::from)).transpose()
}

/// One index's load.
#[derive(Clone, Copy)]
enum Job {
    Primary(IndexId),
    /// 0-based position among the secondaries, and the index.
    Secondary(u32, IndexId),
}

/// The rows of `job`'s index in key order.
fn entries(marker: LoadMarker, job: Job) -> Box<dyn Iterator<Item = (Vec<u8>, Vec<u8>)> + Send> {
    let ids = ID_FIRST..ID_FIRST + marker.rows;
    match job {
        Job::Primary(_) => Box::new(ids.map(move |id| {
            let row = Row::generate(marker.seed, id, marker.shape);
            (row.key().to_vec(), row.value())
        })),
        Job::Secondary(j, _) => {
            let n = marker.shape.secondary_indexes;
            let mut pairs: Vec<(u32, u64)> = ids
                .map(|id| {
                    let k = keys_of(marker.seed, id, n).nth(j as usize).unwrap_or_default();
                    (k, id)
                })
                .collect();
            pairs.sort_unstable();
            Box::new(
                pairs
                    .into_iter()
                    .map(|(k, id)| (composite_key(&Row::secondary_key(k), &Row::key_of(id)), Vec::new())),
            )
        }
    }
}

/// Creates the table's indexes and loads `config.marker.rows` rows.
/// Refuses a database that has the table already. `progress` sees the
/// entries loaded so far (all indexes) and the total expected.
pub fn prepare(
    db: &Database,
    config: &LoadConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<LoadReport, InsertError> {
    let marker = config.marker;
    if !(1..=ROWS_MAX).contains(&marker.rows) {
        return Err(InsertError::Config {
            reason: format!("--rows {}: from 1 to {ROWS_MAX} rows are accepted", marker.rows),
        });
    }
    if meta_id(db)?.is_some() {
        return Err(InsertError::AlreadyLoaded {
            reason: "this database already has the insert table".into(),
        });
    }
    let started = Instant::now();
    let meta = db.create_index(META, true)?;
    db.run(|t| t.insert(meta, META_LOAD_STARTED, &marker.encode()))?;
    let mut jobs = vec![Job::Primary(db.create_index(PRIMARY, true)?)];
    for j in 0..marker.shape.secondary_indexes {
        jobs.push(Job::Secondary(j, db.create_index(&secondary_name(j + 1), false)?));
    }
    let expected = marker.rows * jobs.len() as u64;
    let next = AtomicUsize::new(0);
    let loaded = AtomicU64::new(0);
    let per_index = Mutex::new(Vec::new());
    let first_error: Mutex<Option<InsertError>> = Mutex::new(None);
    let threads = config.threads.max(1).min(jobs.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&job) = jobs.get(i) else { return };
                let (id, name) = match job {
                    Job::Primary(id) => (id, PRIMARY.to_string()),
                    Job::Secondary(j, id) => (id, secondary_name(j + 1)),
                };
                let counted = entries(marker, job).inspect(|_| {
                    let n = loaded.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % 50_000 == 0 {
                        progress(n, expected);
                    }
                });
                match db.load_sorted(id, counted) {
                    Ok(report) => {
                        if let Ok(mut v) = per_index.lock() {
                            v.push((
                                i,
                                IndexEntries {
                                    index: name,
                                    entries: report.rows,
                                },
                            ));
                        }
                    }
                    Err(e) => {
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(InsertError::Db(e));
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
    let mut per_index = per_index.into_inner().unwrap_or_default();
    per_index.sort_by_key(|(i, _)| *i);
    let per_index: Vec<IndexEntries> = per_index.into_iter().map(|(_, e)| e).collect();
    let entries_loaded = per_index.iter().map(|r| r.entries).sum();
    progress(entries_loaded, expected);
    let elapsed_s = started.elapsed().as_secs_f64();
    Ok(LoadReport {
        marker,
        threads,
        entries_loaded,
        per_index,
        elapsed_s,
        rows_per_s: marker.rows as f64 / elapsed_s.max(1e-9),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_marker_round_trips_and_a_bad_shape_is_refused() {
        let m = LoadMarker {
            rows: 1_000_000,
            shape: RowShape::new(3, 120).expect("shape"),
            seed: 9,
        };
        assert_eq!(LoadMarker::decode(&m.encode()).expect("decodes"), m);
        let bad = RowWriter::with_capacity(24).u64(1).u32(99).u32(120).u64(1).finish();
        assert!(LoadMarker::decode(&bad).is_err());
        assert!(LoadMarker::decode(&m.encode()[..10]).is_err());
    }

    #[test]
    fn a_secondary_job_yields_its_entries_in_key_order() {
        let marker = LoadMarker {
            rows: 3000,
            shape: RowShape::new(2, 40).expect("shape"),
            seed: 4,
        };
        let keys: Vec<Vec<u8>> = entries(marker, Job::Secondary(1, IndexId(9))).map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 3000);
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        let primary: Vec<Vec<u8>> = entries(marker, Job::Primary(IndexId(8))).map(|(k, _)| k).collect();
        assert!(primary.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(primary[0], Row::key_of(ID_FIRST).to_vec());
    }
}
