//! An insert-load database directory on the engine and paper 004's load
//! over it: `prepare` (create and bulk-load the table and its secondary
//! indexes), `run` (threads inserting rows, with or without the change
//! buffer, measured as 004's Tables 1 and 2) and `check` (every secondary
//! entry against its row).
//!
//! The directory follows the TPC-H and Wisconsin ones' rules
//! ([`crate::workload_dir`]): a manifest (`flushwise-insert.json`, written
//! after the load completed), a load marker (`flushwise-insert.loading`)
//! from before the database exists until the manifest is durable, and the
//! directory lock held by every command from before it reads the manifest
//! until after it closed the database.
//!
//! A run's figures come from the engine's cumulative counters differenced
//! over the measured window ([`flushwise_workloads::insert::driver`]):
//! Table 1's transactions/s, page I/O per second (page reads plus page
//! writes of every type; 004's "R/W requests per sec." is sysbench's count
//! of SQL statements, 18 per transaction in every cell of its Table 1, so
//! transactions/s is the figure to compare), Table 2's reads and writes of index
//! pages against change-buffer pages, the change buffer's own counters
//! (differenced; its pending pages and bytes as they stand at the end),
//! the synchronous-write share and the user stalls, as every engine run
//! reports them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use flushwise_core::policy::PolicySpec;
use flushwise_engine::db::change_buffer::{DEFAULT_MAX_PCT, MAX_MAX_PCT};
use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions, ChangeBufferStats, Database, DbOptions, DirLock};
use flushwise_engine::page::PageSize;
use flushwise_sim::config_hash_of;
use flushwise_workloads::insert::driver::{self, page_io_since, page_reads, page_writes, Interval, RunConfig};
use flushwise_workloads::insert::load::{self, LoadConfig, LoadMarker};
use flushwise_workloads::insert::{check_consistency, require_loaded, ConsistencyReport, RowShape};

use crate::database::{self, human_bytes};
use crate::engine_options::{self, DbLocation, EngineSettings};
use crate::render::render_table;
use crate::workload_dir::{self, DirKind};
use crate::COMMIT;

/// The manifest's file name inside an insert database directory.
pub const MANIFEST_FILE: &str = "flushwise-insert.json";
/// Present while `insert prepare` runs.
pub const LOAD_MARKER_FILE: &str = "flushwise-insert.loading";
/// The buffer pool `insert check` opens the database with.
pub const CHECK_POOL_BYTES: u64 = 128 << 20;

/// The insert kind of prepared directory.
pub const KIND: DirKind = DirKind {
    workload: "insert",
    command: "insert",
    manifest_file: MANIFEST_FILE,
    marker_file: LOAD_MARKER_FILE,
    prepare_flags: "--rows N",
};

/// What `insert prepare` left in a directory.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InsertManifest {
    pub rows: u64,
    pub secondary_indexes: u32,
    pub row_bytes: u32,
    pub seed: u64,
    pub page_size_bytes: u32,
    pub redo_bytes: u64,
    pub load_seconds: f64,
    pub database_bytes: u64,
    pub data_file_bytes: u64,
    pub commit: String,
}

impl InsertManifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    /// Reads and checks the manifest.
    pub fn read(dir: &Path) -> Result<Self, String> {
        let m: Self = workload_dir::read_manifest(dir, &KIND)?;
        m.check().map_err(|e| format!("{}: {e}", Self::path(dir).display()))?;
        Ok(m)
    }

    fn check(&self) -> Result<PageSize, String> {
        RowShape::new(self.secondary_indexes, self.row_bytes)?;
        PageSize::new(self.page_size_bytes as usize).map_err(|e| format!("page size: {e}"))
    }
}

/// What `insert prepare` loads, from its flags.
#[derive(Clone, Debug)]
pub struct InsertPrepareSpec<'a> {
    pub rows: u64,
    pub secondary_indexes: u32,
    pub row_bytes: u32,
    pub seed: u64,
    /// Loader threads (one index per thread at a time).
    pub threads: usize,
    /// The engine settings of the load (`prepare`'s flags).
    pub load: workload_dir::LoadFlags<'a>,
}

/// Disk a load needs, with margin: a primary entry is its row, its 8-byte
/// key and its slot and cell header, a secondary entry about 14 key bytes
/// and the same overhead, at the loader's 15/16 fill and with the data
/// file's extents (measured: 1,000,000 rows of 120 bytes with 3 secondary
/// indexes made a 285 MiB data file, 299 bytes a row); a quarter more
/// leaves room for a run's inserts and splits; plus the redo log and the
/// doublewrite file.
pub fn database_bytes_estimate(rows: u64, shape: RowShape, redo_bytes: u64) -> u64 {
    let per_row = u64::from(shape.row_bytes) + 40 + 40 * u64::from(shape.secondary_indexes);
    rows.saturating_mul(per_row).saturating_mul(5) / 4 + (64 << 20) + redo_bytes
}

/// Creates and loads; returns the manifest and a one-line summary.
pub fn prepare(location: &DbLocation, spec: &InsertPrepareSpec<'_>) -> Result<(InsertManifest, String), String> {
    let dir = &location.dir;
    let shape = RowShape::new(spec.secondary_indexes, spec.row_bytes)?;
    if !(1..=load::ROWS_MAX).contains(&spec.rows) {
        return Err(format!(
            "--rows {}: from 1 to {} are accepted",
            spec.rows,
            load::ROWS_MAX
        ));
    }
    let created = workload_dir::create_for_load(
        location,
        &KIND,
        &spec.load,
        |redo_bytes| database_bytes_estimate(spec.rows, shape, redo_bytes),
        &format!(
            "an insert table of {} rows with {} secondary indexes",
            spec.rows, spec.secondary_indexes
        ),
        &format!(
            "insert prepare of {} rows by process {} (commit {COMMIT}) has not finished\n",
            spec.rows,
            std::process::id()
        ),
    )?;
    let (db, lock, page, redo_bytes) = (created.db, created.lock, created.page_size, created.redo_bytes);
    let started = Instant::now();
    let expected = spec.rows * (1 + u64::from(spec.secondary_indexes));
    let bar = workload_dir::LoadProgress::new(expected, "entries");
    let progress = |loaded: u64, expected: u64| bar.update(loaded, expected);
    let config = LoadConfig {
        marker: LoadMarker {
            rows: spec.rows,
            shape,
            seed: spec.seed,
        },
        threads: spec.threads.max(1),
    };
    let report = load::prepare(&db, &config, &progress).map_err(|e| format!("insert prepare: {e}"))?;
    bar.finish();
    db.close()
        .map_err(|e| format!("{}: closing after the load: {e}", dir.display()))?;
    let manifest = InsertManifest {
        rows: spec.rows,
        secondary_indexes: spec.secondary_indexes,
        row_bytes: spec.row_bytes,
        seed: spec.seed,
        page_size_bytes: page.bytes() as u32,
        redo_bytes,
        load_seconds: started.elapsed().as_secs_f64(),
        database_bytes: database::dir_bytes(dir)?,
        data_file_bytes: workload_dir::data_file_bytes(location)?,
        commit: COMMIT.to_string(),
    };
    workload_dir::finish_prepare(dir, &KIND, &manifest)?;
    drop(lock);
    let summary = format!(
        "prepared the insert table in {}: {} rows and {} secondary indexes ({} entries) in {:.1} s ({:.0} rows/s, {} threads), {} on disk; seed={} commit={}",
        dir.display(),
        spec.rows,
        spec.secondary_indexes,
        report.entries_loaded,
        report.elapsed_s,
        report.rows_per_s,
        report.threads,
        human_bytes(manifest.database_bytes),
        spec.seed,
        COMMIT
    );
    Ok((manifest, summary))
}

/// Locks a prepared insert directory and reads its manifest, refusing an
/// unfinished load and a truncated data file.
pub fn open_prepared(location: &DbLocation) -> Result<(Arc<DirLock>, InsertManifest), String> {
    let (lock, manifest) = workload_dir::open_prepared(location, &KIND, |m: &InsertManifest| m.data_file_bytes)?;
    manifest
        .check()
        .map_err(|e| format!("{}: {e}", InsertManifest::path(&location.dir).display()))?;
    Ok((lock, manifest))
}

/// `--change-buffer`, `--change-buffer-max-pct` and `--change-buffer-dir`
/// into the engine's options; each error names its flag.
pub fn change_buffer_options(mode: &str, max_pct: u32, dir: Option<&Path>) -> Result<ChangeBufferOptions, String> {
    let mode: ChangeBufferMode = mode.parse().map_err(|e| format!("--change-buffer {mode}: {e}"))?;
    if !(1..=u32::from(MAX_MAX_PCT)).contains(&max_pct) {
        return Err(format!(
            "--change-buffer-max-pct {max_pct}: from 1 to {MAX_MAX_PCT} percent of the buffer pool is accepted (InnoDB's innodb_change_buffer_max_size; default {DEFAULT_MAX_PCT})"
        ));
    }
    if let Some(dir) = dir {
        if mode != ChangeBufferMode::SeparateDevice {
            return Err(format!(
                "--change-buffer-dir {}: only with --change-buffer separate-device (the change buffer is {mode}: {})",
                dir.display(),
                if mode == ChangeBufferMode::Off {
                    "there is none"
                } else {
                    "it lives in the data file"
                }
            ));
        }
        if !dir.is_dir() {
            return Err(format!(
                "--change-buffer-dir {}: not a directory (create it first; /dev/shm is a RAM-backed one, 004's ramdisk)",
                dir.display()
            ));
        }
    }
    Ok(ChangeBufferOptions {
        mode,
        max_pct: max_pct as u8,
        dir: dir.map(Path::to_path_buf),
    })
}

/// What an `insert run` is, besides the database.
#[derive(Clone, Debug)]
pub struct InsertRunSettings {
    pub buffer_pool: String,
    pub redo: Option<String>,
    pub device: Vec<String>,
    pub doublewrite: bool,
    pub flush_log_at_commit: u8,
    pub max_recovery_time: Option<String>,
    pub policy: PolicySpec,
    pub change_buffer: ChangeBufferOptions,
    pub config: RunConfig,
    /// Check the table's consistency after the run, before the close.
    pub check: bool,
}

impl InsertRunSettings {
    /// The hash of everything that defines the run (not the paths).
    fn config_hash(&self, manifest: &InsertManifest, options: &DbOptions) -> String {
        let c = &self.config;
        config_hash_of(&(format!(
            "insert-engine|policy={}|pool={}|redo={}|page={}|io={}|device={:?}|dw={}|flush={}|rows={}|secondary={}|row_bytes={}|load_seed={}|threads={}|warmup_us={}|duration_us={}|seed={}|change_buffer={}|change_buffer_max_pct={}|change_buffer_dir={}",
            options.policy,
            options.buffer_pool_bytes,
            options.redo_bytes,
            options.page_size.bytes(),
            options.io,
            options.data_device.as_ref().map(|d| d.describe()),
            options.doublewrite,
            self.flush_log_at_commit,
            manifest.rows,
            manifest.secondary_indexes,
            manifest.row_bytes,
            manifest.seed,
            c.threads,
            c.warmup.as_micros(),
            c.duration.as_micros(),
            c.seed,
            self.change_buffer.mode,
            self.change_buffer.max_pct,
            self.change_buffer.dir.is_some()
        ) + &if c.update_pct > 0 {
            // Only when set: the hashes of insert-only runs stay as they were.
            format!("|update_pct={}", c.update_pct)
        } else {
            String::new()
        }))
    }
}

/// A measured transaction's latency, first begin to commit return.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct InsertLatency {
    pub mean_us: f64,
    pub p50_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// 004 Table 2's analogue: page reads and writes by page type over the
/// measured window (INDEX = index pages, IBUF_INDEX = change-buffer
/// pages).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PageIoFigures {
    pub index_reads: u64,
    pub index_writes: u64,
    pub change_buffer_reads: u64,
    pub change_buffer_writes: u64,
    pub other_reads: u64,
    pub other_writes: u64,
}

/// The change buffer's counters over the window, and its size at the end.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ChangeBufferFigures {
    pub buffered_inserts: u64,
    pub buffered_deletes: u64,
    pub buffer_refused: u64,
    pub merged_entries: u64,
    pub merges_on_access: u64,
    pub merges_background: u64,
    /// At the window's end.
    pub pending_pages: u64,
    pub pending_bytes: u64,
    /// Buffered deletes that found no entry at merge (0 unless a caller
    /// broke `delete_secondary_entry`'s contract).
    pub merge_missing: u64,
}

impl ChangeBufferFigures {
    fn window(start: &ChangeBufferStats, end: &ChangeBufferStats) -> Self {
        Self {
            buffered_inserts: end.buffered_inserts.saturating_sub(start.buffered_inserts),
            buffered_deletes: end.buffered_deletes.saturating_sub(start.buffered_deletes),
            buffer_refused: end.buffer_refused.saturating_sub(start.buffer_refused),
            merged_entries: end.merged_entries.saturating_sub(start.merged_entries),
            merges_on_access: end.merges_on_access.saturating_sub(start.merges_on_access),
            merges_background: end.merges_background.saturating_sub(start.merges_background),
            pending_pages: end.pending_pages,
            pending_bytes: end.pending_bytes,
            merge_missing: end.merge_missing.saturating_sub(start.merge_missing),
        }
    }
}

/// The buffer pool's flushing figures over the window, as every engine run
/// reports them.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct InsertFlushFigures {
    /// Pool misses (reads of every page type).
    pub reads: u64,
    pub async_writes: u64,
    pub sync_replacement_writes: u64,
    pub sync_recoverability_writes: u64,
    /// `percentage_sync_write` of Lee et al. §5.1.
    pub sync_write_pct: f64,
    pub hit_ratio: f64,
    pub wait_free: u64,
    pub user_stalls: u64,
    pub user_stall_us: u64,
    pub user_stall_us_per_txn: f64,
    pub user_stall_p99_us: u64,
    pub redo_bytes: u64,
    /// Dirty pages at the window's end.
    pub dirty_pages_end: u32,
}

/// A finished `insert run`.
#[derive(Clone, Debug, Serialize)]
pub struct InsertRunOutput {
    pub kind: &'static str,
    pub shell: &'static str,
    pub policy: String,
    pub seed: u64,
    pub config_hash: String,
    pub commit: String,
    pub rows_loaded: u64,
    pub secondary_indexes: u32,
    pub row_bytes: u32,
    /// The first id this run inserted (rows of earlier runs come before).
    pub first_id: u64,
    pub threads: u32,
    pub buffer_pool_bytes: u64,
    pub redo_bytes: u64,
    pub device: String,
    pub doublewrite: bool,
    pub flush_log_at_commit: u8,
    /// `off`, `on` or `separate-device`.
    pub change_buffer: String,
    pub change_buffer_max_pct: u8,
    pub warmup_s: f64,
    /// The measured window (shorter than asked when interrupted).
    pub measured_s: f64,
    pub elapsed_s: f64,
    pub interrupted: bool,
    /// Rows committed, warm-up included.
    pub rows_inserted: u64,
    /// Percent of transactions that were updates of secondary columns.
    pub update_pct: u8,
    /// Measured transactions (one row inserted or updated each), of them
    /// updates, and their retries.
    pub transactions: u64,
    pub updates: u64,
    pub retries: u64,
    /// 004 Table 1.
    pub transactions_per_s: f64,
    pub page_io_per_s: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub latency: InsertLatency,
    /// 004 Table 2.
    pub page_io: PageIoFigures,
    pub change_buffer_stats: ChangeBufferFigures,
    pub flush: InsertFlushFigures,
    /// With `--check`: the verdict's one line; `None` when not checked.
    pub consistency: Option<String>,
}

/// `insert run`: opens the prepared database with the run's settings (and
/// change buffer), calls `on_start` with the configuration hash once it is
/// open (the banner: nothing is printed for a run refused before),
/// runs the load (`on_interval` sees each report interval), checks the table if asked (before the close, nothing else
/// writing), closes it. Returns the output and the check's report: the
/// caller prints the output, then judges the report
/// ([`check_verdict`]).
pub fn run(
    location: &DbLocation,
    settings: &InsertRunSettings,
    on_start: &mut dyn FnMut(&str),
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(InsertRunOutput, Option<ConsistencyReport>), String> {
    engine_options::check_pool(&settings.buffer_pool)?;
    settings.config.validate().map_err(|e| e.to_string())?;
    let (lock, manifest) = open_prepared(location)?;
    let engine = EngineSettings {
        connections: settings.config.threads,
        buffer_pool: settings.buffer_pool.clone(),
        redo: settings.redo.clone(),
        device: settings.device.clone(),
        doublewrite: settings.doublewrite,
        flush_log_at_commit: settings.flush_log_at_commit,
        warmup: "0s".into(),
        duration: "1s".into(),
        report_interval: "1s".into(),
        seed: settings.config.seed,
        keying_think: false,
        max_recovery_time: settings.max_recovery_time.clone(),
    };
    let page = PageSize::new(manifest.page_size_bytes as usize).map_err(|e| format!("{MANIFEST_FILE}: {e}"))?;
    let mut options = engine_options::run_options_with(location, &engine, &settings.policy, page, manifest.redo_bytes)?;
    options.dir_lock = Some(lock);
    options.change_buffer = settings.change_buffer.clone();
    let config_hash = settings.config_hash(&manifest, &options);
    let device = database::device_text(&options.data_device, options.io);
    let (buffer_pool_bytes, redo_bytes) = (options.buffer_pool_bytes, options.redo_bytes);
    let db = Database::open(&location.dir, options).map_err(|e| format!("{}: {e}", location.dir.display()))?;
    on_start(&config_hash);
    let report = driver::run(&db, &settings.config, on_interval).map_err(|e| format!("insert run: {e}"));
    let checked = match (&report, settings.check) {
        (Ok(_), true) => Some(
            require_loaded(&db)
                .and_then(|(_, schema)| check_consistency(&db, &schema))
                .map_err(|e| format!("insert check: {e}")),
        ),
        _ => None,
    };
    let closed = db.close().map_err(|e| format!("{}: {e}", location.dir.display()));
    let report = report?;
    let consistency = checked.transpose()?;
    closed?;

    let (a, b) = (&report.window_start, &report.window_end);
    let seconds = report.measured_s.max(1e-9);
    let io = page_io_since(&b.page_io, &a.page_io);
    let pool = b.pool.since(&a.pool);
    let stalls = b.stalls.since(&a.stalls);
    let h = &report.latency;
    let out = InsertRunOutput {
        kind: "insert-result",
        shell: flushwise_sim::SHELL_ENGINE,
        policy: settings.policy.to_string(),
        seed: settings.config.seed,
        config_hash,
        commit: COMMIT.to_string(),
        rows_loaded: manifest.rows,
        secondary_indexes: manifest.secondary_indexes,
        row_bytes: manifest.row_bytes,
        first_id: report.first_id,
        threads: report.threads,
        buffer_pool_bytes,
        redo_bytes,
        device,
        doublewrite: settings.doublewrite,
        flush_log_at_commit: settings.flush_log_at_commit,
        change_buffer: settings.change_buffer.mode.to_string(),
        change_buffer_max_pct: settings.change_buffer.max_pct,
        warmup_s: report.warmup_s,
        measured_s: report.measured_s,
        elapsed_s: report.elapsed_s,
        interrupted: report.interrupted,
        rows_inserted: report.rows_inserted,
        update_pct: settings.config.update_pct,
        transactions: report.transactions,
        updates: report.updates,
        retries: report.retries,
        transactions_per_s: report.transactions as f64 / seconds,
        page_io_per_s: (page_reads(&io) + page_writes(&io)) as f64 / seconds,
        reads_per_s: page_reads(&io) as f64 / seconds,
        writes_per_s: page_writes(&io) as f64 / seconds,
        latency: InsertLatency {
            mean_us: h.mean_us(),
            p50_us: h.quantile_us(0.50),
            p95_us: h.quantile_us(0.95),
            p99_us: h.quantile_us(0.99),
            max_us: h.max_us(),
        },
        page_io: PageIoFigures {
            index_reads: io.index_reads,
            index_writes: io.index_writes,
            change_buffer_reads: io.change_buffer_reads,
            change_buffer_writes: io.change_buffer_writes,
            other_reads: io.other_reads,
            other_writes: io.other_writes,
        },
        change_buffer_stats: ChangeBufferFigures::window(&a.change_buffer, &b.change_buffer),
        flush: InsertFlushFigures {
            reads: pool.reads,
            async_writes: pool.async_writes(),
            sync_replacement_writes: pool.sync_replacement_writes,
            sync_recoverability_writes: pool.sync_recoverability_writes,
            sync_write_pct: pool.sync_write_pct(),
            hit_ratio: pool.hit_ratio(),
            wait_free: pool.wait_free,
            user_stalls: pool.user_stalls,
            user_stall_us: pool.user_stall_us(),
            user_stall_us_per_txn: if report.transactions == 0 {
                0.0
            } else {
                pool.user_stall_us() as f64 / report.transactions as f64
            },
            user_stall_p99_us: stalls.quantile_us(0.99),
            redo_bytes: b.redo_lsn.saturating_sub(a.redo_lsn),
            dirty_pages_end: b.dirty_pages,
        },
        consistency: consistency.as_ref().map(ConsistencyReport::summary),
    };
    Ok((out, consistency))
}

/// `insert check`: opens the prepared database (recovering it if it
/// crashed) and checks every secondary index against the rows.
pub fn check(location: &DbLocation) -> Result<ConsistencyReport, String> {
    let (lock, manifest) = open_prepared(location)?;
    let page = manifest
        .check()
        .map_err(|e| format!("{}: {e}", InsertManifest::path(&location.dir).display()))?;
    database::require_pool_fits_memory(CHECK_POOL_BYTES)?;
    let options = DbOptions {
        dir_lock: Some(lock),
        redo_dir: location.redo_dir.clone(),
        page_size: page,
        buffer_pool_bytes: CHECK_POOL_BYTES,
        redo_bytes: manifest.redo_bytes,
        io: engine_options::io_mode(&location.io)?,
        verify_pages_at_open: false,
        ..DbOptions::default()
    };
    let db = Database::open(&location.dir, options).map_err(|e| format!("{}: {e}", location.dir.display()))?;
    let recovery = db.recovery_report();
    if recovery.records_applied > 0 || recovery.losers_rolled_back > 0 {
        eprintln!("{recovery}");
    }
    let report = require_loaded(&db)
        .and_then(|(_, schema)| check_consistency(&db, &schema))
        .map_err(|e| format!("insert check: {e}"));
    let closed = db.close().map_err(|e| format!("{}: {e}", location.dir.display()));
    let report = report?;
    closed?;
    Ok(report)
}

/// The verdict of a check: its line, or an error naming the count and the
/// first mismatch (every kept mismatch goes to stderr first).
pub fn check_verdict(report: &ConsistencyReport) -> Result<String, String> {
    if report.passed() {
        return Ok(report.summary());
    }
    for m in &report.mismatches {
        eprintln!("insert check: {m}");
    }
    Err(format!("insert check: {}", report.summary()))
}

/// A report interval as one line.
pub fn interval_line(i: &Interval) -> String {
    format!(
        "{:>7.1} s{} {:>9.1} txn/s {:>9.1} page I/O/s  change buffer {:.1} reads/s {:.1} writes/s, {} pages pending; dirty {}",
        i.time_s,
        if i.warmup { " (warm-up)" } else { "" },
        i.transactions_per_s,
        i.page_io_per_s,
        i.change_buffer_reads_per_s,
        i.change_buffer_writes_per_s,
        i.change_buffer_pending_pages,
        i.dirty_pages
    )
}

/// The human summary of a run: 004's Tables 1 and 2 and the rest.
pub fn run_text(out: &InsertRunOutput) -> String {
    let mut t = format!(
        "insert run: {} threads, {:.1} s measured after {:.1} s warm-up{}; {} rows loaded, {} secondary indexes, {}-byte rows; first id {}\n\
         policy={} change_buffer={} (max {}% of the pool) pool={} device={} doublewrite={} flush_log_at_commit={}\n\n",
        out.threads,
        out.measured_s,
        out.warmup_s,
        if out.interrupted { " (INTERRUPTED)" } else { "" },
        out.rows_loaded,
        out.secondary_indexes,
        out.row_bytes,
        out.first_id,
        out.policy,
        out.change_buffer,
        out.change_buffer_max_pct,
        human_bytes(out.buffer_pool_bytes),
        out.device,
        if out.doublewrite { "on" } else { "off" },
        out.flush_log_at_commit
    );
    t.push_str("Table 1 (throughput)\n");
    t.push_str(&render_table(
        &[
            "transactions/s".into(),
            "page I/O/s".into(),
            "reads/s".into(),
            "writes/s".into(),
            "transactions".into(),
            "of them updates".into(),
            "retries".into(),
        ],
        &[vec![
            format!("{:.1}", out.transactions_per_s),
            format!("{:.1}", out.page_io_per_s),
            format!("{:.1}", out.reads_per_s),
            format!("{:.1}", out.writes_per_s),
            out.transactions.to_string(),
            out.updates.to_string(),
            out.retries.to_string(),
        ]],
    ));
    let l = &out.latency;
    t.push_str(&format!(
        "latency per transaction: mean {:.0} us  p50 {} us  p95 {} us  p99 {} us  max {} us\n\n",
        l.mean_us, l.p50_us, l.p95_us, l.p99_us, l.max_us
    ));
    t.push_str("Table 2 (pages read and written in the window, by page type)\n");
    let p = &out.page_io;
    t.push_str(&render_table(
        &["page type".into(), "reads".into(), "writes".into()],
        &[
            vec!["INDEX".into(), p.index_reads.to_string(), p.index_writes.to_string()],
            vec![
                "IBUF_INDEX (change buffer)".into(),
                p.change_buffer_reads.to_string(),
                p.change_buffer_writes.to_string(),
            ],
            vec!["other".into(), p.other_reads.to_string(), p.other_writes.to_string()],
        ],
    ));
    let c = &out.change_buffer_stats;
    t.push_str(&format!(
        "\nchange buffer: {} inserts and {} deletes buffered, {} refused, {} entries merged ({} merges on access, {} in the background); pending at the end: {} pages, {}\n",
        c.buffered_inserts,
        c.buffered_deletes,
        c.buffer_refused,
        c.merged_entries,
        c.merges_on_access,
        c.merges_background,
        c.pending_pages,
        human_bytes(c.pending_bytes)
    ));
    let f = &out.flush;
    t.push_str(&format!(
        "flushing: {:.2}% synchronous writes ({} replacement, {} preflush; {} async); hit ratio {:.4}; user stalls {} ({:.1} ms, {:.0} us per transaction, p99 {} us); redo {}; dirty pages at the end {}\n",
        f.sync_write_pct,
        f.sync_replacement_writes,
        f.sync_recoverability_writes,
        f.async_writes,
        f.hit_ratio,
        f.user_stalls,
        f.user_stall_us as f64 / 1e3,
        f.user_stall_us_per_txn,
        f.user_stall_p99_us,
        human_bytes(f.redo_bytes),
        f.dirty_pages_end
    ));
    if let Some(c) = &out.consistency {
        t.push_str(c);
        t.push('\n');
    }
    t.push_str(&format!(
        "seed={} config_hash={} commit={}\n",
        out.seed, out.config_hash, out.commit
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_buffer_flags_are_checked_and_each_error_names_its_flag() {
        let o = change_buffer_options("on", 25, None).expect("on");
        assert_eq!((o.mode, o.max_pct, o.dir), (ChangeBufferMode::On, 25, None));
        let e = change_buffer_options("foo", 25, None).expect_err("foo");
        assert!(
            e.starts_with("--change-buffer foo:") && e.contains("separate-device"),
            "{e}"
        );
        for pct in [0, 51] {
            let e = change_buffer_options("on", pct, None).expect_err("range");
            assert!(e.starts_with(&format!("--change-buffer-max-pct {pct}:")), "{e}");
        }
        let tmp = tempfile::tempdir().expect("tmp");
        let e = change_buffer_options("on", 25, Some(tmp.path())).expect_err("dir without separate-device");
        assert!(
            e.starts_with("--change-buffer-dir") && e.contains("separate-device"),
            "{e}"
        );
        let o = change_buffer_options("separate-device", 50, Some(tmp.path())).expect("separate");
        assert_eq!(o.dir.as_deref(), Some(tmp.path()));
        let e = change_buffer_options("separate-device", 25, Some(&tmp.path().join("missing"))).expect_err("missing");
        assert!(e.contains("not a directory"), "{e}");
    }

    #[test]
    fn the_estimate_grows_with_rows_indexes_and_row_length() {
        let s = |n, b| RowShape::new(n, b).expect("shape");
        let base = database_bytes_estimate(1_000_000, s(3, 120), 0);
        assert!(base > database_bytes_estimate(1_000_000, s(1, 120), 0));
        assert!(base < database_bytes_estimate(1_000_000, s(3, 400), 0));
        // The default table's data file is about 285 MiB.
        assert!((300 << 20..400 << 20).contains(&base), "{base}");
    }
}
