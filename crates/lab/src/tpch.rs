//! A TPC-H database directory on the engine and what is done with it:
//! `prepare` (create and load), `export` (CSV), `answers` (the 22 queries
//! with the validation parameters) and `run` (power and throughput tests
//! with the flushing figures of each test).
//!
//! The directory follows the TPC-C one's rules ([`crate::database`]): a
//! manifest (`flushwise-tpch.json`, written after the load completed), a
//! load marker (`flushwise-tpch.loading`) from before the database exists
//! until the manifest is durable, and the directory lock held by every
//! command from before it reads the manifest until after it closed the
//! database. The database itself also knows whether its load completed
//! (`tpch::load::require_loaded`).
//!
//! Flushing figures of a test come from the engine's own pool counters,
//! differenced over the test: reads, writes by kind, `sync_write_pct`
//! (Lee et al.'s percentage_sync_write), hit ratio, user stall time, and
//! I/O per query (reads and writes over the queries and refresh
//! functions the test ran).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use flushwise_core::policy::PolicySpec;
use flushwise_core::PoolCounters;
use flushwise_engine::db::{Database, DbOptions, DirLock};
use flushwise_engine::page::PageSize;
use flushwise_sim::config_hash_of;
use flushwise_workloads::tpch::driver::{self, Observer, QueryTiming, RunConfig, RunReport};
use flushwise_workloads::tpch::load::{self, LoadConfig, LoadProgress};
use flushwise_workloads::tpch::query::{self, Answer, Params};
use flushwise_workloads::tpch::{export as tpch_export, gen::Scale, TpchDb};

use crate::database::{self, human_bytes};
use crate::engine_options::{self, io_mode, DbLocation, EngineSettings};
use crate::workload_dir::{self, DirKind};
use crate::COMMIT;

/// The manifest's file name inside a TPC-H database directory.
pub const MANIFEST_FILE: &str = "flushwise-tpch.json";
/// Present while `tpch prepare` runs.
pub const LOAD_MARKER_FILE: &str = "flushwise-tpch.loading";

/// What `tpch prepare` left in a directory.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TpchManifest {
    pub sf: f64,
    pub seed: u64,
    pub page_size_bytes: u32,
    pub redo_bytes: u64,
    pub rows: u64,
    pub load_seconds: f64,
    pub database_bytes: u64,
    pub data_file_bytes: u64,
    pub commit: String,
    /// Per table: rows and B+tree pages after the load (what the
    /// simulator's TPC-H model sizes its tables by).
    #[serde(default)]
    pub tables: Vec<TableShape>,
}

/// One table's size after the load.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TableShape {
    pub table: String,
    pub rows: u64,
    pub leaf_pages: u64,
    pub internal_pages: u64,
}

/// The TPC-H kind of prepared directory.
pub const KIND: DirKind = DirKind {
    workload: "TPC-H",
    command: "tpch",
    manifest_file: MANIFEST_FILE,
    marker_file: LOAD_MARKER_FILE,
    prepare_flags: "--sf SF",
};

impl TpchManifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    /// Reads and checks the manifest (scale factor, page size).
    pub fn read(dir: &Path) -> Result<TpchManifest, String> {
        let m: TpchManifest = workload_dir::read_manifest(dir, &KIND)?;
        m.check().map_err(|e| format!("{}: {e}", Self::path(dir).display()))?;
        Ok(m)
    }

    fn check(&self) -> Result<(), String> {
        Scale::new(self.sf)?;
        PageSize::new(self.page_size_bytes as usize).map_err(|e| format!("page size: {e}"))?;
        Ok(())
    }
}

/// What `tpch prepare` loads, from its flags.
#[derive(Clone, Debug)]
pub struct TpchPrepareSpec<'a> {
    pub sf: f64,
    pub seed: u64,
    pub threads: usize,
    /// The engine settings of the load (`prepare`'s flags).
    pub load: workload_dir::LoadFlags<'a>,
}

/// Disk a load of `sf` needs, with margin: about 1.4 GB of engine pages at
/// SF 1 (measured: rows plus the B+tree's fill), the redo log, and the
/// doublewrite file.
pub fn database_bytes_estimate(sf: f64, redo_bytes: u64) -> u64 {
    (1.6e9 * sf) as u64 + (64 << 20) + redo_bytes
}

/// Creates and loads; returns the manifest and a one-line summary.
pub fn prepare(location: &DbLocation, spec: &TpchPrepareSpec<'_>) -> Result<(TpchManifest, String), String> {
    let dir = &location.dir;
    let scale = Scale::new(spec.sf)?;
    let created = workload_dir::create_for_load(
        location,
        &KIND,
        &spec.load,
        |redo_bytes| database_bytes_estimate(spec.sf, redo_bytes),
        &format!("a TPC-H database of scale factor {}", spec.sf),
        &format!(
            "tpch prepare of SF {} by process {} (commit {COMMIT}) has not finished\n",
            spec.sf,
            std::process::id()
        ),
    )?;
    let (db, lock, page, redo_bytes) = (created.db, created.lock, created.page_size, created.redo_bytes);
    let started = Instant::now();
    let expected: u64 = flushwise_workloads::tpch::Table::DATA
        .iter()
        .map(|t| scale.rows(*t))
        .sum();
    let bar = workload_dir::LoadProgress::new(expected, "rows");
    let progress = |p: LoadProgress| bar.update(p.rows_loaded, p.rows_expected);
    let config = LoadConfig {
        sf: spec.sf,
        seed: spec.seed,
        threads: spec.threads.max(1),
    };
    let report = load::prepare(&db, &config, &progress).map_err(|e| format!("tpch prepare: {e}"))?;
    bar.finish();
    let mut tables = Vec::new();
    for table in flushwise_workloads::tpch::Table::DATA {
        let id = db.index(table.store_name()).map_err(|e| format!("tpch prepare: {e}"))?;
        let stats = db.index_stats(id).map_err(|e| format!("tpch prepare: {e}"))?;
        tables.push(TableShape {
            table: table.name().to_string(),
            rows: stats.entries,
            leaf_pages: stats.leaf_pages,
            internal_pages: stats.internal_pages,
        });
    }
    db.close()
        .map_err(|e| format!("{}: closing after the load: {e}", dir.display()))?;
    let manifest = TpchManifest {
        sf: spec.sf,
        seed: spec.seed,
        page_size_bytes: page.bytes() as u32,
        redo_bytes,
        rows: report.rows_loaded,
        load_seconds: started.elapsed().as_secs_f64(),
        database_bytes: database::dir_bytes(dir)?,
        data_file_bytes: workload_dir::data_file_bytes(location)?,
        commit: COMMIT.to_string(),
        tables,
    };
    workload_dir::finish_prepare(dir, &KIND, &manifest)?;
    drop(lock);
    let summary = format!(
        "prepared TPC-H SF {} in {}: {} rows in {:.1} s ({:.0} rows/s, {} threads), {} on disk; seed={} commit={}",
        spec.sf,
        dir.display(),
        report.rows_loaded,
        report.elapsed_s,
        report.rows_per_s,
        report.threads,
        human_bytes(manifest.database_bytes),
        spec.seed,
        COMMIT
    );
    Ok((manifest, summary))
}

/// Locks a prepared TPC-H directory and reads its manifest, refusing an
/// unfinished load and a truncated data file.
pub fn open_prepared(location: &DbLocation) -> Result<(Arc<DirLock>, TpchManifest), String> {
    let (lock, manifest) = workload_dir::open_prepared(location, &KIND, |m: &TpchManifest| m.data_file_bytes)?;
    manifest
        .check()
        .map_err(|e| format!("{}: {e}", TpchManifest::path(&location.dir).display()))?;
    Ok((lock, manifest))
}

/// Opens for reading (export, answers): a modest pool, no run settings.
fn open_for_reading(location: &DbLocation) -> Result<Database, String> {
    let (lock, manifest) = open_prepared(location)?;
    let options = DbOptions {
        dir_lock: Some(lock),
        redo_dir: location.redo_dir.clone(),
        page_size: PageSize::new(manifest.page_size_bytes as usize).map_err(|e| format!("{MANIFEST_FILE}: {e}"))?,
        buffer_pool_bytes: 128 << 20,
        redo_bytes: manifest.redo_bytes,
        io: io_mode(&location.io)?,
        verify_pages_at_open: false,
        ..DbOptions::default()
    };
    Database::open(&location.dir, options).map_err(|e| format!("{}: {e}", location.dir.display()))
}

/// `tpch export`: the eight tables as CSV in `out`.
pub fn export(location: &DbLocation, out: &Path) -> Result<tpch_export::ExportReport, String> {
    let db = open_for_reading(location)?;
    let report = tpch_export::export(&db, out).map_err(|e| format!("tpch export: {e}"))?;
    db.close().map_err(|e| format!("{}: {e}", location.dir.display()))?;
    Ok(report)
}

/// One query's answer with the validation parameters.
pub struct QueryAnswer {
    pub params: Params,
    pub answer: Answer,
    pub seconds: f64,
}

/// `tpch answers`: the 22 queries with the specification's validation
/// parameters (what the DuckDB check compares), and the scale factor.
pub fn answers(location: &DbLocation) -> Result<(f64, Vec<QueryAnswer>), String> {
    let db = open_for_reading(location)?;
    let sf = load::require_loaded(&db).map_err(|e| e.to_string())?.sf;
    let tables = TpchDb::new(&db).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for q in 1..=query::QUERIES {
        let params = Params::validation(q);
        let started = Instant::now();
        let answer = query::run_query(&tables, &params).map_err(|e| format!("Q{q}: {e}"))?;
        out.push(QueryAnswer {
            params,
            answer,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    db.close().map_err(|e| format!("{}: {e}", location.dir.display()))?;
    Ok((sf, out))
}

/// The flushing figures of one test, from the engine's pool counters.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TestFigures {
    pub test: String,
    pub seconds: f64,
    pub queries: u64,
    pub refresh_functions: u64,
    pub reads: u64,
    pub async_writes: u64,
    pub sync_replacement_writes: u64,
    pub sync_recoverability_writes: u64,
    pub sync_write_pct: f64,
    pub hit_ratio: f64,
    /// Page reads and writes per query or refresh function.
    pub io_per_query: f64,
    pub user_stall_us: u64,
    pub wait_free: u64,
    /// Redo generated during the test.
    pub redo_bytes: u64,
    /// Time the refresh functions took, added up (in the throughput test
    /// they run beside the queries).
    pub refresh_seconds: f64,
    /// Orders inserted or deleted by the refresh functions.
    pub refresh_orders: u64,
}

impl TestFigures {
    fn compute(test: &str, seconds: f64, queries: u64, refresh_functions: u64, pool: &PoolCounters) -> Self {
        let units = (queries + refresh_functions).max(1);
        Self {
            test: test.to_string(),
            seconds,
            queries,
            refresh_functions,
            reads: pool.reads,
            async_writes: pool.async_writes(),
            sync_replacement_writes: pool.sync_replacement_writes,
            sync_recoverability_writes: pool.sync_recoverability_writes,
            sync_write_pct: pool.sync_write_pct(),
            hit_ratio: pool.hit_ratio(),
            io_per_query: (pool.reads + pool.async_writes() + pool.sync_writes()) as f64 / units as f64,
            user_stall_us: pool.user_stall_us(),
            wait_free: pool.wait_free,
            redo_bytes: 0,
            refresh_seconds: 0.0,
            refresh_orders: 0,
        }
    }
}

/// A finished `tpch run`.
#[derive(Clone, Debug, Serialize)]
pub struct TpchRunOutput {
    pub kind: &'static str,
    pub shell: &'static str,
    pub policy: String,
    pub seed: u64,
    pub config_hash: String,
    pub commit: String,
    pub buffer_pool_bytes: u64,
    pub device: String,
    #[serde(flatten)]
    pub report: RunReport,
    pub tests: Vec<TestFigures>,
}

/// What a `tpch run` is, besides the database.
#[derive(Clone, Debug)]
pub struct TpchRunSettings {
    pub buffer_pool: String,
    pub redo: Option<String>,
    pub device: Vec<String>,
    pub doublewrite: bool,
    pub flush_log_at_commit: u8,
    pub max_recovery_time: Option<String>,
    pub policy: PolicySpec,
    pub config: RunConfig,
}

impl TpchRunSettings {
    /// The hash of everything that defines the run (not the paths).
    fn config_hash(&self, manifest: &TpchManifest, options: &DbOptions) -> String {
        let c = &self.config;
        config_hash_of(&format!(
            "tpch-engine|policy={}|pool={}|redo={}|page={}|io={}|device={:?}|dw={}|flush={}|sf={}|load_seed={}|streams={}|power={}|refresh={}|validation={}|seed={}",
            options.policy,
            options.buffer_pool_bytes,
            options.redo_bytes,
            options.page_size.bytes(),
            options.io,
            options.data_device.as_ref().map(|d| d.describe()),
            options.doublewrite,
            self.flush_log_at_commit,
            manifest.sf,
            manifest.seed,
            c.streams,
            c.power,
            c.refresh,
            c.validation_params,
            c.seed
        ))
    }
}

/// Pool counters at each test's start and end.
struct Boundaries<'a, F: Fn(&QueryTiming) + Sync> {
    db: &'a Database,
    /// (test, pool counters, redo LSN) at each test's start and end.
    starts: Mutex<Vec<Mark>>,
    ends: Mutex<Vec<Mark>>,
    on_query: F,
}

type Mark = (&'static str, PoolCounters, u64);

impl<F: Fn(&QueryTiming) + Sync> Observer for Boundaries<'_, F> {
    fn query(&self, timing: &QueryTiming) {
        (self.on_query)(timing);
    }
    fn test_started(&self, test: &'static str) {
        if let Ok(mut v) = self.starts.lock() {
            v.push((test, self.db.shell().metrics().counters, self.db.redo().current_lsn().0));
        }
    }
    fn test_ended(&self, test: &'static str) {
        if let Ok(mut v) = self.ends.lock() {
            v.push((test, self.db.shell().metrics().counters, self.db.redo().current_lsn().0));
        }
    }
}

/// `tpch run`: opens the prepared database with the run's settings, runs
/// the tests, closes it. `on_query` sees each query as it ends.
pub fn run(
    location: &DbLocation,
    settings: &TpchRunSettings,
    on_query: impl Fn(&QueryTiming) + Sync,
) -> Result<TpchRunOutput, String> {
    engine_options::check_pool(&settings.buffer_pool)?;
    if settings.config.streams == 0 && !settings.config.power {
        return Err("--streams 0 with --no-power: nothing to run".into());
    }
    let (lock, manifest) = open_prepared(location)?;
    let engine = EngineSettings {
        connections: settings.config.streams + 1,
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
    let config_hash = settings.config_hash(&manifest, &options);
    let device = database::device_text(&options.data_device, options.io);
    let buffer_pool_bytes = options.buffer_pool_bytes;
    let db = Database::open(&location.dir, options).map_err(|e| format!("{}: {e}", location.dir.display()))?;
    let observer = Boundaries {
        db: &db,
        starts: Mutex::new(Vec::new()),
        ends: Mutex::new(Vec::new()),
        on_query,
    };
    let report = driver::run(&db, &settings.config, &observer).map_err(|e| format!("tpch run: {e}"));
    let starts = observer.starts.into_inner().unwrap_or_default();
    let ends = observer.ends.into_inner().unwrap_or_default();
    let closed = db.close().map_err(|e| format!("{}: {e}", location.dir.display()));
    let report = report?;
    closed?;
    let mut tests = Vec::new();
    for t in [&report.power, &report.throughput].into_iter().flatten() {
        let start = starts.iter().find(|(n, _, _)| *n == t.test);
        let end = ends.iter().find(|(n, _, _)| *n == t.test);
        if let (Some((_, a, lsn_a)), Some((_, b, lsn_b))) = (start, end) {
            let mut f = TestFigures::compute(
                t.test,
                t.seconds,
                t.queries.len() as u64,
                t.refreshes.len() as u64,
                &b.since(a),
            );
            f.redo_bytes = lsn_b.saturating_sub(*lsn_a);
            f.refresh_seconds = t.refreshes.iter().map(|r| r.report.seconds).sum();
            f.refresh_orders = t.refreshes.iter().map(|r| r.report.orders).sum();
            tests.push(f);
        }
    }
    Ok(TpchRunOutput {
        kind: "tpch-result",
        shell: flushwise_sim::SHELL_ENGINE,
        policy: settings.policy.to_string(),
        seed: settings.config.seed,
        config_hash,
        commit: COMMIT.to_string(),
        buffer_pool_bytes,
        device,
        report,
        tests,
    })
}
