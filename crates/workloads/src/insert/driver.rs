//! The run: `threads` threads, each inserting one new row per transaction
//! into the primary index and every secondary index, back to back
//! (sysbench's `insert` with no think time; 004 ran 50 threads).
//!
//! A transaction: begin; insert the row under a fresh id (one atomic
//! counter for all threads, starting past the largest id in the table, so
//! runs after runs never collide) into the primary; insert `(k_j, id)`
//! into each secondary index; commit. A deadlock or lock-wait timeout
//! rolls back and retries the same row (at most [`RETRIES_MAX`] times; the
//! retries are counted); any other error ends the run with that error.
//! A row is a pure function of (run seed, id) ([`Row::generate`]).
//!
//! With `update_pct` > 0 that share of the transactions are instead
//! sysbench's `oltp_update_index` (`UPDATE sbtest SET k = k + 1 WHERE
//! id = ?`) over every secondary column: a loaded row, uniform over the
//! loaded ids, is read for update; each secondary entry `(k_j, id)` is
//! deleted (through `delete_secondary_entry`: the row says it exists, so
//! the change buffer may buffer the delete) and `(k_j + 1, id)` inserted;
//! the row is rewritten. The choice and the id come from a per-thread
//! stream of (seed, thread), so the mix does not depend on timing, though
//! which row a thread meets first does.
//!
//! The measured window starts after `warmup` and lasts `duration` (or
//! ends early at an interrupt). At both ends the coordinator (the calling
//! thread) takes a [`WindowSnapshot`] of the engine's cumulative counters
//! (pool counters, page I/O by page type, change-buffer counters, redo
//! LSN, the user-stall histogram); the lab differences the two. A
//! transaction is measured (counted, its latency recorded) when its
//! commit returned inside the window. Latency runs from the first begin
//! to the commit's return, retries included, as a client sees it.
//!
//! Every `report_interval` the coordinator also hands an [`Interval`]
//! (rates over that interval, warm-up included) to the caller's callback.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flushwise_core::histogram::Histogram;
use flushwise_core::PoolCounters;
use flushwise_engine::buffer::PageIoCounts;
use flushwise_engine::db::{ChangeBufferStats, Database, DbError, Txn};

use super::load::{max_id, require_loaded, LoadMarker};
use super::schema::{InsertSchema, Row, ID_FIRST};
use super::InsertError;
use crate::tpcc::random::{stream, Rng64};

/// Stream tag of a thread's insert/update choices ("UPDM").
const TAG_UPDATE_MIX: u64 = 0x5550_444d;

/// Most threads (one OS thread each).
pub const THREADS_MAX: u32 = 4096;
/// Retries of one row after deadlocks or lock-wait timeouts before the run
/// fails with the last of them.
pub const RETRIES_MAX: u32 = 100;
/// The coordinator looks at the interrupt flag and the workers' errors at
/// least this often.
const POLL: Duration = Duration::from_millis(50);

/// A run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub threads: u32,
    /// Inserts run this long before the measured window (the pool fills,
    /// the cleaner and the change buffer reach their regime).
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
    /// Rows inserted are generated from this seed and their id.
    pub seed: u64,
    /// How often the interval callback is called.
    pub report_interval: Duration,
    /// Set (by Ctrl-C) to end the run early.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Percent of transactions that update a loaded row's secondary
    /// columns instead of inserting a row (0..=100).
    pub update_pct: u8,
}

impl RunConfig {
    pub fn new(threads: u32, duration: Duration, seed: u64) -> Self {
        Self {
            threads,
            warmup: Duration::ZERO,
            duration,
            seed,
            report_interval: Duration::from_secs(10),
            interrupt: None,
            update_pct: 0,
        }
    }

    /// Errors name the flag.
    pub fn validate(&self) -> Result<(), InsertError> {
        let bad = |reason: String| Err(InsertError::Config { reason });
        if !(1..=THREADS_MAX).contains(&self.threads) {
            return bad(format!("--threads {}: from 1 to {THREADS_MAX}", self.threads));
        }
        if self.duration.is_zero() {
            return bad("--duration: must be positive".into());
        }
        if self.report_interval < Duration::from_millis(100) {
            return bad("--report-interval: at least 100ms".into());
        }
        if self.update_pct > 100 {
            return bad(format!("--update-pct {}: from 0 to 100", self.update_pct));
        }
        Ok(())
    }
}

/// The engine's cumulative counters at one instant.
#[derive(Clone, Debug, Default)]
pub struct WindowSnapshot {
    /// Since the run started.
    pub t_us: u64,
    /// Transactions committed since the run started (warm-up included).
    pub committed: u64,
    pub pool: PoolCounters,
    pub page_io: PageIoCounts,
    pub change_buffer: ChangeBufferStats,
    /// The redo log's head (bytes since the log began).
    pub redo_lsn: u64,
    /// Every user stall since the open.
    pub stalls: Histogram,
    pub dirty_pages: u32,
}

impl WindowSnapshot {
    fn capture(db: &Database, start: Instant, committed: u64) -> Self {
        let m = db.shell().metrics();
        Self {
            t_us: micros(start.elapsed()),
            committed,
            pool: m.counters,
            page_io: m.page_io,
            change_buffer: db.change_buffer_stats(),
            redo_lsn: db.redo().current_lsn().0,
            stalls: db.shell().stall_histogram(),
            dirty_pages: m.Innodb_buffer_pool_pages_dirty,
        }
    }
}

/// Page reads and writes of every page type.
pub fn page_reads(io: &PageIoCounts) -> u64 {
    io.index_reads + io.change_buffer_reads + io.other_reads
}

pub fn page_writes(io: &PageIoCounts) -> u64 {
    io.index_writes + io.change_buffer_writes + io.other_writes
}

/// Field-wise `later - earlier`.
pub fn page_io_since(later: &PageIoCounts, earlier: &PageIoCounts) -> PageIoCounts {
    PageIoCounts {
        index_reads: later.index_reads.saturating_sub(earlier.index_reads),
        index_writes: later.index_writes.saturating_sub(earlier.index_writes),
        change_buffer_reads: later.change_buffer_reads.saturating_sub(earlier.change_buffer_reads),
        change_buffer_writes: later.change_buffer_writes.saturating_sub(earlier.change_buffer_writes),
        other_reads: later.other_reads.saturating_sub(earlier.other_reads),
        other_writes: later.other_writes.saturating_sub(earlier.other_writes),
    }
}

/// One report interval (warm-up included).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Interval {
    /// End of the interval, seconds since the measured window began
    /// (negative during the warm-up).
    pub time_s: f64,
    /// The interval is part of the warm-up.
    pub warmup: bool,
    pub seconds: f64,
    pub transactions_per_s: f64,
    /// Page reads and writes per second, every page type.
    pub page_io_per_s: f64,
    pub change_buffer_reads_per_s: f64,
    pub change_buffer_writes_per_s: f64,
    pub dirty_pages: u32,
    /// Leaves with buffered entries at the interval's end.
    pub change_buffer_pending_pages: u64,
}

impl Interval {
    fn between(a: &WindowSnapshot, b: &WindowSnapshot, warmup_us: u64) -> Self {
        let seconds = (b.t_us.saturating_sub(a.t_us) as f64 / 1e6).max(1e-9);
        let io = page_io_since(&b.page_io, &a.page_io);
        Self {
            time_s: (b.t_us as f64 - warmup_us as f64) / 1e6,
            // An interval that began in the warm-up is a warm-up interval.
            warmup: a.t_us < warmup_us,
            seconds,
            transactions_per_s: b.committed.saturating_sub(a.committed) as f64 / seconds,
            page_io_per_s: (page_reads(&io) + page_writes(&io)) as f64 / seconds,
            change_buffer_reads_per_s: io.change_buffer_reads as f64 / seconds,
            change_buffer_writes_per_s: io.change_buffer_writes as f64 / seconds,
            dirty_pages: b.dirty_pages,
            change_buffer_pending_pages: b.change_buffer.pending_pages,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// What `prepare` loaded.
    pub marker: LoadMarker,
    pub threads: u32,
    pub seed: u64,
    /// The first id this run inserted (past the table's largest).
    pub first_id: u64,
    /// Rows committed, warm-up included.
    pub rows_inserted: u64,
    pub warmup_s: f64,
    /// The measured window's actual length (shorter when interrupted).
    pub measured_s: f64,
    /// Wall time from start to the last thread's exit.
    pub elapsed_s: f64,
    /// Transactions whose commit returned in the measured window.
    pub transactions: u64,
    /// Of them, updates (`update_pct`).
    pub updates: u64,
    /// Their retries (deadlocks, lock-wait timeouts).
    pub retries: u64,
    /// Their latency, first begin to commit return, us.
    pub latency: Histogram,
    pub window_start: WindowSnapshot,
    pub window_end: WindowSnapshot,
    pub interrupted: bool,
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// The transaction's body: the row into the primary and every secondary.
fn insert_body(txn: &mut Txn<'_>, schema: &InsertSchema, row: &Row, key: &[u8], value: &[u8]) -> Result<(), DbError> {
    txn.insert(schema.primary, key, value)?;
    for (&index, &k) in schema.secondaries.iter().zip(&row.keys) {
        txn.insert_secondary(index, &Row::secondary_key(k), key, &[])?;
    }
    Ok(())
}

/// The update's body: `k_j = k_j + 1` for every secondary column of row
/// `id`, its entries moved, the row rewritten.
fn update_body(txn: &mut Txn<'_>, schema: &InsertSchema, id: u64) -> Result<(), InsertError> {
    let key = Row::key_of(id);
    let Some(value) = txn.get_for_update(schema.primary, &key)? else {
        return Err(InsertError::NotLoaded {
            reason: format!("row {id} of the load is missing: run `insert check`"),
        });
    };
    let mut row = Row::decode(&key, &value)?;
    for (&index, k) in schema.secondaries.iter().zip(row.keys.iter_mut()) {
        let new = k.wrapping_add(1);
        txn.delete_secondary_entry(index, &Row::secondary_key(*k), &key, &[])?;
        txn.insert_secondary(index, &Row::secondary_key(new), &key, &[])?;
        *k = new;
    }
    txn.update(schema.primary, &key, &row.value())?;
    Ok(())
}

/// Inserts `row` in one transaction, retrying on deadlock or lock-wait
/// timeout; returns the retries it took.
pub fn insert_row(db: &Database, schema: &InsertSchema, row: &Row) -> Result<u32, InsertError> {
    let (key, value) = (row.key(), row.value());
    with_retries(db, |txn| Ok(insert_body(txn, schema, row, &key, &value)?))
}

/// Updates row `id`'s secondary columns in one transaction (see the
/// module doc), retrying as [`insert_row`]; returns the retries.
pub fn update_row(db: &Database, schema: &InsertSchema, id: u64) -> Result<u32, InsertError> {
    with_retries(db, |txn| update_body(txn, schema, id))
}

fn is_retryable(e: &InsertError) -> bool {
    matches!(e, InsertError::Db(e) if e.is_retryable())
}

/// Runs `body` in a transaction and commits, rolling back and retrying on
/// deadlock or lock-wait timeout; returns the retries it took.
fn with_retries(
    db: &Database,
    mut body: impl FnMut(&mut Txn<'_>) -> Result<(), InsertError>,
) -> Result<u32, InsertError> {
    let mut retries = 0;
    loop {
        let mut txn = db.begin();
        match body(&mut txn) {
            Ok(()) => {
                txn.commit()?;
                return Ok(retries);
            }
            Err(e) => {
                txn.rollback()?;
                if !is_retryable(&e) || retries >= RETRIES_MAX {
                    return Err(e);
                }
                retries += 1;
                // Back off a little, more for repeat victims.
                std::thread::sleep(Duration::from_micros(100 * u64::from(retries.min(50))));
            }
        }
    }
}

/// Per-thread results.
#[derive(Default)]
struct ThreadTotals {
    transactions: u64,
    updates: u64,
    retries: u64,
    latency: Histogram,
}

/// Runs the load against a loaded database; `on_interval` sees every
/// report interval as it ends (on the calling thread).
pub fn run(
    db: &Database,
    config: &RunConfig,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<RunReport, InsertError> {
    config.validate()?;
    let (marker, schema) = require_loaded(db)?;
    if schema.secondaries.len() != schema.shape.secondary_indexes as usize {
        return Err(InsertError::NotLoaded {
            reason: "the table's secondary indexes do not match its load marker".into(),
        });
    }
    let first_id = max_id(db, &schema)?.map_or(ID_FIRST, |m| m + 1);
    let next_id = AtomicU64::new(first_id);
    let committed = AtomicU64::new(0);
    let inserted = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let warmup_us = micros(config.warmup);
    // The window's end, us since the start; set by the coordinator.
    let window_end_us = AtomicU64::new(u64::MAX);
    let first_error: Mutex<Option<InsertError>> = Mutex::new(None);
    let failed = || first_error.lock().map(|e| e.is_some()).unwrap_or(true);
    let interrupted = || config.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
    let totals: Mutex<ThreadTotals> = Mutex::new(ThreadTotals::default());
    let start = Instant::now();
    let mut window_start = None;
    let mut window_end = None;
    let mut was_interrupted = false;

    std::thread::scope(|scope| {
        if warmup_us == 0 {
            window_start = Some(WindowSnapshot::capture(db, start, 0));
        }
        for thread in 0..config.threads {
            let (schema, next_id, committed, inserted, stop) = (&schema, &next_id, &committed, &inserted, &stop);
            let (window_end_us, first_error, totals) = (&window_end_us, &first_error, &totals);
            let loaded_rows = marker.rows;
            scope.spawn(move || {
                let mut mine = ThreadTotals::default();
                let mut mix = stream(config.seed, &[TAG_UPDATE_MIX, u64::from(thread)]);
                while !stop.load(Ordering::Relaxed) {
                    let update = loaded_rows > 0 && config.update_pct > 0 && mix.percent(u64::from(config.update_pct));
                    let began = Instant::now();
                    let done = if update {
                        update_row(db, schema, ID_FIRST + mix.below(loaded_rows))
                    } else {
                        let id = next_id.fetch_add(1, Ordering::Relaxed);
                        insert_row(db, schema, &Row::generate(config.seed, id, schema.shape))
                    };
                    match done {
                        Ok(retries) => {
                            committed.fetch_add(1, Ordering::Relaxed);
                            if !update {
                                inserted.fetch_add(1, Ordering::Relaxed);
                            }
                            let end_us = micros(start.elapsed());
                            if end_us >= warmup_us && end_us <= window_end_us.load(Ordering::Acquire) {
                                mine.transactions += 1;
                                mine.updates += u64::from(update);
                                mine.retries += u64::from(retries);
                                mine.latency.record(micros(began.elapsed()));
                            }
                        }
                        Err(e) => {
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                            break;
                        }
                    }
                }
                if let Ok(mut t) = totals.lock() {
                    t.transactions += mine.transactions;
                    t.updates += mine.updates;
                    t.retries += mine.retries;
                    t.latency.merge(&mine.latency);
                }
            });
        }
        // The coordinator: window boundaries, intervals, interrupt, errors.
        let deadline_us = warmup_us.saturating_add(micros(config.duration));
        let interval_us = micros(config.report_interval).max(1);
        let mut last = WindowSnapshot::capture(db, start, committed.load(Ordering::Relaxed));
        let mut next_report_us = interval_us;
        loop {
            let now_us = micros(start.elapsed());
            if failed() {
                break;
            }
            if interrupted() {
                was_interrupted = true;
                window_end_us.store(now_us, Ordering::Release);
                let snap = WindowSnapshot::capture(db, start, committed.load(Ordering::Relaxed));
                window_start.get_or_insert_with(|| snap.clone());
                window_end = Some(snap);
                break;
            }
            if window_start.is_none() && now_us >= warmup_us {
                let snap = WindowSnapshot::capture(db, start, committed.load(Ordering::Relaxed));
                // The warm-up's last interval ends with it; the measured
                // intervals count from the window's start.
                if snap.t_us > last.t_us {
                    on_interval(&Interval::between(&last, &snap, warmup_us));
                }
                last = snap.clone();
                next_report_us = warmup_us + interval_us;
                window_start = Some(snap);
            }
            if now_us >= deadline_us {
                window_end_us.store(deadline_us, Ordering::Release);
                window_end = Some(WindowSnapshot::capture(db, start, committed.load(Ordering::Relaxed)));
                break;
            }
            if now_us >= next_report_us {
                let snap = WindowSnapshot::capture(db, start, committed.load(Ordering::Relaxed));
                on_interval(&Interval::between(&last, &snap, warmup_us));
                last = snap;
                next_report_us += interval_us;
            }
            let mut wake_us = next_report_us.min(deadline_us);
            if window_start.is_none() {
                wake_us = wake_us.min(warmup_us);
            }
            let wait = Duration::from_micros(wake_us.saturating_sub(micros(start.elapsed())));
            std::thread::sleep(wait.min(POLL));
        }
        stop.store(true, Ordering::Relaxed);
        // The last interval, up to the window's end.
        if let Some(end) = &window_end {
            if end.t_us > last.t_us {
                on_interval(&Interval::between(&last, end, warmup_us));
            }
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let totals = totals.into_inner().unwrap_or_default();
    let (Some(window_start), Some(window_end)) = (window_start, window_end) else {
        return Err(InsertError::Config {
            reason: "the run ended without a measured window".into(),
        });
    };
    Ok(RunReport {
        marker,
        threads: config.threads,
        seed: config.seed,
        first_id,
        rows_inserted: inserted.into_inner(),
        warmup_s: config.warmup.as_secs_f64(),
        measured_s: window_end.t_us.saturating_sub(window_start.t_us) as f64 / 1e6,
        elapsed_s: start.elapsed().as_secs_f64(),
        transactions: totals.transactions,
        updates: totals.updates,
        retries: totals.retries,
        latency: totals.latency,
        window_start,
        window_end,
        interrupted: was_interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_config_names_the_bad_flag() {
        let mut c = RunConfig::new(0, Duration::from_secs(1), 1);
        let e = c.validate().expect_err("no threads").to_string();
        assert!(e.contains("--threads 0"), "{e}");
        c.threads = 16;
        c.duration = Duration::ZERO;
        let e = c.validate().expect_err("no duration").to_string();
        assert!(e.contains("--duration"), "{e}");
        c.duration = Duration::from_secs(1);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn page_io_differences_are_field_wise() {
        let a = PageIoCounts {
            index_reads: 10,
            index_writes: 4,
            change_buffer_reads: 1,
            change_buffer_writes: 2,
            other_reads: 0,
            other_writes: 3,
        };
        let b = PageIoCounts {
            index_reads: 15,
            index_writes: 9,
            change_buffer_reads: 1,
            change_buffer_writes: 7,
            other_reads: 2,
            other_writes: 3,
        };
        let d = page_io_since(&b, &a);
        assert_eq!((d.index_reads, d.index_writes), (5, 5));
        assert_eq!((d.change_buffer_reads, d.change_buffer_writes), (0, 5));
        assert_eq!((page_reads(&d), page_writes(&d)), (7, 10));
    }
}
