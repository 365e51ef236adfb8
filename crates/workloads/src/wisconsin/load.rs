//! `prepare`: the relation created and bulk-loaded in `unique1` order, and
//! the load markers in `wisconsin.meta`.
//!
//! Markers: `load_started` (n, seed) before any tuple, `load_complete`
//! after the last; a database without `load_complete` is refused by the
//! driver ([`require_loaded`]).

use std::time::Instant;

use flushwise_engine::db::{Database, DbError, IndexId};

use crate::tpcc::codec::{RowReader, RowWriter};

use super::schema::{tuples, Tuple, RELATION, TUPLES_MAX};
use super::WisconsinError;

/// The meta index's name.
pub const META: &str = "wisconsin.meta";
const META_LOAD_STARTED: &[u8] = b"load_started";
const META_LOAD_COMPLETE: &[u8] = b"load_complete";
const META_RUNS: &[u8] = b"runs";

/// What to load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoadMarker {
    /// Tuples.
    pub n: u64,
    pub seed: u64,
}

impl LoadMarker {
    fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(16).u64(self.n).u64(self.seed).finish()
    }
    fn decode(b: &[u8]) -> Result<Self, WisconsinError> {
        let mut r = RowReader::new(META, b);
        let m = Self {
            n: r.u64()?,
            seed: r.u64()?,
        };
        r.finish()?;
        Ok(m)
    }
}

/// What a load did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub n: u64,
    pub seed: u64,
    pub tuples_loaded: u64,
    pub elapsed_s: f64,
    pub tuples_per_s: f64,
}

fn meta_id(db: &Database) -> Result<Option<IndexId>, WisconsinError> {
    match db.index(META) {
        Ok(id) => Ok(Some(id)),
        Err(DbError::NoSuchIndex { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The marker of a complete load and the relation's index, or an error
/// that says what is wrong.
pub fn require_loaded(db: &Database) -> Result<(LoadMarker, IndexId), WisconsinError> {
    let Some(meta) = meta_id(db)? else {
        return Err(WisconsinError::NotLoaded {
            reason: "no Wisconsin relation here: run `flushwise wisconsin prepare` first".into(),
        });
    };
    let (complete, started) = db.run(|t| Ok((t.get(meta, META_LOAD_COMPLETE)?, t.get(meta, META_LOAD_STARTED)?)))?;
    match (complete, started) {
        (Some(c), _) => Ok((LoadMarker::decode(&c)?, db.index(RELATION)?)),
        (None, Some(s)) => Err(WisconsinError::NotLoaded {
            reason: format!(
                "the load of {} tuples did not complete (no completion marker): delete the database and run `flushwise wisconsin prepare` again",
                LoadMarker::decode(&s)?.n
            ),
        }),
        (None, None) => Err(WisconsinError::NotLoaded {
            reason: "no Wisconsin load marker here: run `flushwise wisconsin prepare` first".into(),
        }),
    }
}

/// Creates the relation and loads `marker.n` tuples. Refuses a database
/// that has the relation already. `progress` sees the tuples loaded so far
/// every 50,000.
pub fn prepare(db: &Database, marker: LoadMarker, progress: &dyn Fn(u64)) -> Result<LoadReport, WisconsinError> {
    if !(1..=TUPLES_MAX).contains(&marker.n) {
        return Err(WisconsinError::Config {
            reason: format!("--tuples {}: from 1 to {TUPLES_MAX} tuples are accepted", marker.n),
        });
    }
    if meta_id(db)?.is_some() {
        return Err(WisconsinError::AlreadyLoaded {
            reason: "this database already has the Wisconsin relation".into(),
        });
    }
    let started = Instant::now();
    let meta = db.create_index(META, true)?;
    db.run(|t| t.insert(meta, META_LOAD_STARTED, &marker.encode()))?;
    let relation = db.create_index(RELATION, true)?;
    let mut loaded = 0u64;
    let rows = tuples(marker.n, marker.seed).map(|t: Tuple| {
        loaded += 1;
        if loaded % 50_000 == 0 {
            progress(loaded);
        }
        (t.key().to_vec(), t.value())
    });
    let report = db.load_sorted(relation, rows)?;
    db.run(|t| t.insert(meta, META_LOAD_COMPLETE, &marker.encode()))?;
    db.checkpoint()?;
    progress(report.rows);
    let elapsed_s = started.elapsed().as_secs_f64();
    Ok(LoadReport {
        n: marker.n,
        seed: marker.seed,
        tuples_loaded: report.rows,
        elapsed_s,
        tuples_per_s: report.rows as f64 / elapsed_s.max(1e-9),
    })
}

/// Counts a run against the database and returns its number (0 for the
/// first). Committed before the run's first request, so a later run on
/// the same database never repeats an earlier run's keys and values (an
/// UPDATE that sets the value a tuple already holds changes nothing: no
/// page is dirtied, as MySQL reports "Changed: 0").
pub fn next_run_number(db: &Database) -> Result<u64, WisconsinError> {
    let Some(meta) = meta_id(db)? else {
        return Err(WisconsinError::NotLoaded {
            reason: "no Wisconsin relation here: run `flushwise wisconsin prepare` first".into(),
        });
    };
    let mut corrupt = None;
    let n = db.run(|t| {
        let n = match t.get_for_update(meta, META_RUNS)? {
            None => 0,
            Some(v) => {
                let mut r = RowReader::new(META, &v);
                match r.u64() {
                    Ok(n) => n,
                    Err(e) => {
                        corrupt = Some(e);
                        0
                    }
                }
            }
        };
        t.upsert(meta, META_RUNS, &RowWriter::with_capacity(8).u64(n + 1).finish())?;
        Ok(n)
    })?;
    match corrupt {
        Some(e) => Err(e.into()),
        None => Ok(n),
    }
}
