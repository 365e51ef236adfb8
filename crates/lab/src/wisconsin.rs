//! A Wisconsin database directory on the engine and paper 003's load over
//! it: `prepare` (create and load), `run` (open- or closed-loop UPDATEs,
//! with every request and the flush activity recorded) and `model` (003's
//! model fitted to earlier runs and simulated beside them).
//!
//! The directory follows the TPC-C and TPC-H ones' rules
//! ([`crate::database`], [`crate::tpch`]): a manifest
//! (`flushwise-wisconsin.json`, written after the load completed), a load
//! marker (`flushwise-wisconsin.loading`) from before the database exists
//! until the manifest is durable, and the directory lock held by every
//! command from before it reads the manifest until after it closed the
//! database.
//!
//! A run writes `OUT/<label>/` (label `open-<rate>` or `closed-<jobs>`):
//! `run.json` (settings, seed, configuration hash, commit, summary),
//! `requests.csv` (every committed request: arrival, start, end in µs
//! since the start, key, value), `series.csv` (per interval: arrivals,
//! completions, response times, pages written by kind, dirty pages,
//! checkpoint age), `cdf.csv` (the response-time distribution) and
//! `figure.svg` (response time over time with the flush activity beside
//! it). `model` reads such directories back.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use flushwise_core::policy::PolicySpec;
use flushwise_engine::db::{Database, DbOptions, DirLock};
use flushwise_engine::page::PageSize;
use flushwise_sim::config_hash_of;
use flushwise_workloads::wisconsin::driver::{self, Arrivals, Request, RunConfig, RunReport, Sample};
use flushwise_workloads::wisconsin::load::{self, LoadMarker};
use flushwise_workloads::wisconsin::series::{self, IntervalRow, ResponseSummary};

use crate::database::{self, human_bytes};
use crate::engine_options::{self, DbLocation, EngineSettings};
use crate::model003::{self, Fit, ModelParams};
use crate::plot::{self, Layout, Panel, Series};
use crate::render::{render_table, Csv};
use crate::workload_dir::{self, DirKind};
use crate::COMMIT;

/// The manifest's file name inside a Wisconsin database directory.
pub const MANIFEST_FILE: &str = "flushwise-wisconsin.json";
/// Present while `wisconsin prepare` runs.
pub const LOAD_MARKER_FILE: &str = "flushwise-wisconsin.loading";
/// A run's summary inside its output directory.
pub const RUN_FILE: &str = "run.json";
pub const REQUESTS_FILE: &str = "requests.csv";

/// What `wisconsin prepare` left in a directory.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WisconsinManifest {
    pub tuples: u64,
    pub seed: u64,
    pub page_size_bytes: u32,
    pub redo_bytes: u64,
    pub load_seconds: f64,
    pub database_bytes: u64,
    pub data_file_bytes: u64,
    pub commit: String,
}

/// The Wisconsin kind of prepared directory.
pub const KIND: DirKind = DirKind {
    workload: "Wisconsin",
    command: "wisconsin",
    manifest_file: MANIFEST_FILE,
    marker_file: LOAD_MARKER_FILE,
    prepare_flags: "--tuples N",
};

impl WisconsinManifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    /// Reads and checks the manifest (page size).
    pub fn read(dir: &Path) -> Result<Self, String> {
        let m: Self = workload_dir::read_manifest(dir, &KIND)?;
        m.check().map_err(|e| format!("{}: {e}", Self::path(dir).display()))?;
        Ok(m)
    }

    fn check(&self) -> Result<(), String> {
        PageSize::new(self.page_size_bytes as usize).map_err(|e| format!("page size: {e}"))?;
        Ok(())
    }
}

/// What `wisconsin prepare` loads, from its flags.
#[derive(Clone, Debug)]
pub struct WisconsinPrepareSpec<'a> {
    pub tuples: u64,
    pub seed: u64,
    /// The engine settings of the load (`prepare`'s flags).
    pub load: workload_dir::LoadFlags<'a>,
}

/// Disk a load of `tuples` needs, with margin: a tuple is 4 + 207 bytes
/// plus its slot, about 240 bytes in a bulk-loaded leaf; 400 bytes each
/// leaves room for the run's page splits, plus the redo log and the
/// doublewrite file.
pub fn database_bytes_estimate(tuples: u64, redo_bytes: u64) -> u64 {
    tuples.saturating_mul(400) + (64 << 20) + redo_bytes
}

/// Creates and loads; returns the manifest and a one-line summary.
pub fn prepare(location: &DbLocation, spec: &WisconsinPrepareSpec<'_>) -> Result<(WisconsinManifest, String), String> {
    let dir = &location.dir;
    if !(1..=flushwise_workloads::wisconsin::schema::TUPLES_MAX).contains(&spec.tuples) {
        return Err(format!(
            "--tuples {}: from 1 to {} are accepted",
            spec.tuples,
            flushwise_workloads::wisconsin::schema::TUPLES_MAX
        ));
    }
    let created = workload_dir::create_for_load(
        location,
        &KIND,
        &spec.load,
        |redo_bytes| database_bytes_estimate(spec.tuples, redo_bytes),
        &format!("a Wisconsin relation of {} tuples", spec.tuples),
        &format!(
            "wisconsin prepare of {} tuples by process {} (commit {COMMIT}) has not finished\n",
            spec.tuples,
            std::process::id()
        ),
    )?;
    let (db, lock, page, redo_bytes) = (created.db, created.lock, created.page_size, created.redo_bytes);
    let started = Instant::now();
    let last = std::sync::Mutex::new(Instant::now());
    let progress = |n: u64| {
        if let Ok(mut last) = last.lock() {
            if last.elapsed().as_secs() >= 5 {
                *last = Instant::now();
                eprintln!("loading: {n} of {} tuples", spec.tuples);
            }
        }
    };
    let report = load::prepare(
        &db,
        LoadMarker {
            n: spec.tuples,
            seed: spec.seed,
        },
        &progress,
    )
    .map_err(|e| format!("wisconsin prepare: {e}"))?;
    db.close()
        .map_err(|e| format!("{}: closing after the load: {e}", dir.display()))?;
    let manifest = WisconsinManifest {
        tuples: spec.tuples,
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
        "prepared the Wisconsin relation in {}: {} tuples in {:.1} s ({:.0} tuples/s), {} on disk; seed={} commit={}",
        dir.display(),
        report.tuples_loaded,
        report.elapsed_s,
        report.tuples_per_s,
        human_bytes(manifest.database_bytes),
        spec.seed,
        COMMIT
    );
    Ok((manifest, summary))
}

/// Locks a prepared Wisconsin directory and reads its manifest, refusing
/// an unfinished load and a truncated data file.
pub fn open_prepared(location: &DbLocation) -> Result<(Arc<DirLock>, WisconsinManifest), String> {
    let (lock, manifest) = workload_dir::open_prepared(location, &KIND, |m: &WisconsinManifest| m.data_file_bytes)?;
    manifest
        .check()
        .map_err(|e| format!("{}: {e}", WisconsinManifest::path(&location.dir).display()))?;
    Ok((lock, manifest))
}

/// What a `wisconsin run` is, besides the database.
#[derive(Clone, Debug)]
pub struct WisconsinRunSettings {
    pub buffer_pool: String,
    pub redo: Option<String>,
    pub device: Vec<String>,
    pub doublewrite: bool,
    pub flush_log_at_commit: u8,
    pub max_recovery_time: Option<String>,
    pub policy: PolicySpec,
    pub config: RunConfig,
    /// Runs go to `out/<label>/`.
    pub out: PathBuf,
}

/// Totals of the pool counters over a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FlushTotals {
    pub reads: u64,
    pub flush_list_pages: u64,
    pub lru_batch_flush_pages: u64,
    #[serde(default)]
    pub cleaner_clean_pages: u64,
    pub sync_replacement_writes: u64,
    pub sync_recoverability_writes: u64,
    pub wait_free: u64,
    pub user_stall_s: f64,
    pub dirty_pages_max: u32,
    pub checkpoint_age_bytes_max: u64,
}

/// A finished `wisconsin run` (the `run.json` of its directory).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WisconsinRunOutput {
    pub kind: String,
    pub label: String,
    /// `open` or `closed`.
    pub mode: String,
    pub rate_per_s: Option<f64>,
    pub workers: Option<u32>,
    pub jobs: Option<u32>,
    pub policy: String,
    pub seed: u64,
    /// The database's run number: keys and values depend on it and the
    /// seed, so repeating a command does not repeat its updates.
    #[serde(default)]
    pub db_run: u64,
    pub config_hash: String,
    pub commit: String,
    pub tuples: u64,
    pub buffer_pool_bytes: u64,
    pub device: String,
    /// Requests arriving before this were offered but not recorded.
    #[serde(default)]
    pub warmup_s: f64,
    pub duration_s: f64,
    pub elapsed_s: f64,
    pub offered: u64,
    pub completed: u64,
    pub unserved: u64,
    pub overloaded: bool,
    pub interrupted: bool,
    pub throughput_per_s: f64,
    pub response: ResponseSummary,
    pub flush: FlushTotals,
    pub generator_late_ms_max: f64,
    pub sample_interval_s: f64,
    pub dir: PathBuf,
}

impl WisconsinRunSettings {
    fn config_hash(&self, manifest: &WisconsinManifest, options: &DbOptions) -> String {
        let c = &self.config;
        config_hash_of(&format!(
            "wisconsin-engine|policy={}|pool={}|redo={}|page={}|io={}|device={:?}|dw={}|flush={}|tuples={}|load_seed={}|arrivals={:?}|warmup_us={}|duration_us={}|sample_us={}|seed={}",
            options.policy,
            options.buffer_pool_bytes,
            options.redo_bytes,
            options.page_size.bytes(),
            options.io,
            options.data_device.as_ref().map(|d| d.describe()),
            options.doublewrite,
            self.flush_log_at_commit,
            manifest.tuples,
            manifest.seed,
            c.arrivals,
            c.warmup.as_micros(),
            c.duration.as_micros(),
            c.sample_interval.as_micros(),
            c.seed
        ))
    }
}

fn totals(samples: &[Sample]) -> FlushTotals {
    let (Some(a), Some(b)) = (samples.first(), samples.last()) else {
        return FlushTotals::default();
    };
    FlushTotals {
        reads: b.reads - a.reads,
        flush_list_pages: b.flush_list_pages - a.flush_list_pages,
        lru_batch_flush_pages: b.lru_batch_flush_pages - a.lru_batch_flush_pages,
        cleaner_clean_pages: b.cleaner_clean_pages - a.cleaner_clean_pages,
        sync_replacement_writes: b.sync_replacement_writes - a.sync_replacement_writes,
        sync_recoverability_writes: b.sync_recoverability_writes - a.sync_recoverability_writes,
        wait_free: b.wait_free - a.wait_free,
        user_stall_s: (b.user_stall_us - a.user_stall_us) as f64 / 1e6,
        dirty_pages_max: samples.iter().map(|s| s.dirty_pages).max().unwrap_or(0),
        checkpoint_age_bytes_max: samples.iter().map(|s| s.checkpoint_age_bytes).max().unwrap_or(0),
    }
}

/// `requests.csv`: one line per committed request, in completion order.
pub fn requests_csv(requests: &[Request]) -> String {
    let mut out = String::with_capacity(48 * requests.len() + 64);
    out.push_str("seq,arrival_us,start_us,end_us,response_us,unique1,unique3\n");
    for r in requests {
        out.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            r.seq,
            r.arrival_us,
            r.start_us,
            r.end_us,
            r.response_us(),
            r.unique1,
            r.unique3
        ));
    }
    out
}

/// Reads `requests.csv` back.
pub fn parse_requests_csv(path: &Path, text: &str) -> Result<Vec<Request>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |k: usize| -> Result<u64, String> {
            f.get(k)
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("{} line {}: not a request line: {line}", path.display(), i + 1))
        };
        out.push(Request {
            seq: num(0)?,
            arrival_us: num(1)?,
            start_us: num(2)?,
            end_us: num(3)?,
            unique1: num(5)? as u32,
            unique3: num(6)? as u32,
        });
    }
    Ok(out)
}

fn series_csv(rows: &[IntervalRow], out: &WisconsinRunOutput) -> String {
    let mut csv = Csv::default();
    for r in rows {
        let mut row = vec![
            ("label".to_string(), out.label.clone()),
            ("policy".into(), out.policy.clone()),
            ("seed".into(), out.seed.to_string()),
            ("config_hash".into(), out.config_hash.clone()),
            ("commit".into(), out.commit.clone()),
        ];
        row.extend(crate::render::flatten(r));
        csv.push(row);
    }
    csv.render()
}

/// The empirical CDF at up to `points` response times (seconds, sorted).
pub fn cdf_points(sorted_s: &[f64], points: usize) -> Vec<(f64, f64)> {
    if sorted_s.is_empty() {
        return Vec::new();
    }
    let n = sorted_s.len();
    let step = (n / points.max(1)).max(1);
    let mut out: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (sorted_s[i], (i + 1) as f64 / n as f64))
        .collect();
    out.push((sorted_s[n - 1], 1.0));
    out
}

fn run_figure(path: &Path, rows: &[IntervalRow], title: &str) -> Result<(), String> {
    let pts = |f: &dyn Fn(&IntervalRow) -> f64| rows.iter().map(|r| (r.t_s, f(r))).collect::<Vec<_>>();
    let panels = vec![
        Panel {
            title: format!("{title}: response time per interval"),
            x_label: "time (s)".into(),
            y_label: Some("response time (s)".into()),
            series: vec![
                Series::line("max", pts(&|r| r.response_max_s), true),
                Series::line("p99", pts(&|r| r.response_p99_s), false),
                Series::line("mean", pts(&|r| r.response_mean_s), false),
            ],
        },
        Panel {
            title: "pages written per interval, by kind".into(),
            x_label: "time (s)".into(),
            y_label: Some("pages".into()),
            series: vec![
                Series::line("flush list", pts(&|r| r.flush_list_pages as f64), false),
                Series::line("LRU batch", pts(&|r| r.lru_batch_flush_pages as f64), false),
                Series::line("cleaned ahead", pts(&|r| r.cleaner_clean_pages as f64), false),
                Series::line("sync replacement", pts(&|r| r.sync_replacement_writes as f64), false),
                Series::line("sync preflush", pts(&|r| r.sync_recoverability_writes as f64), false),
                Series::line("reads", pts(&|r| r.reads as f64), false),
            ],
        },
        Panel {
            title: "dirty pages and checkpoint age".into(),
            x_label: "time (s)".into(),
            y_label: Some("pages / MiB".into()),
            series: vec![
                Series::line("dirty pages", pts(&|r| f64::from(r.dirty_pages)), false),
                Series::line(
                    "checkpoint age (MiB)",
                    pts(&|r| r.checkpoint_age_bytes as f64 / (1 << 20) as f64),
                    false,
                ),
            ],
        },
    ];
    plot::panels_svg_with(
        path,
        &panels,
        "",
        Layout {
            columns: 1,
            shared_y: false,
            log_x_if_wide: false,
        },
    )
}

/// Writes a run's files into `dir`.
fn write_run_files(dir: &Path, report: &RunReport, out: &WisconsinRunOutput) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("--out {}: cannot create: {e}", dir.display()))?;
    let interval_us = (out.sample_interval_s * 1e6) as u64;
    let rows = series::intervals(&report.requests, &report.samples, interval_us.max(1));
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))
    };
    write(REQUESTS_FILE, &requests_csv(&report.requests))?;
    write("series.csv", &series_csv(&rows, out))?;
    let mut rt: Vec<f64> = report.requests.iter().map(|r| r.response_us() as f64 / 1e6).collect();
    rt.sort_by(f64::total_cmp);
    let mut cdf = String::from("response_s,cdf\n");
    for (x, y) in cdf_points(&rt, 1000) {
        cdf.push_str(&format!("{x:.6},{y:.6}\n"));
    }
    write("cdf.csv", &cdf)?;
    run_figure(&dir.join("figure.svg"), &rows, &out.label)?;
    write(
        RUN_FILE,
        &(serde_json::to_string_pretty(out).map_err(|e| format!("cannot render JSON: {e}"))? + "\n"),
    )
}

/// `wisconsin run`: opens the prepared database with the run's settings,
/// offers the load, closes it, writes the run's files.
pub fn run(location: &DbLocation, settings: &WisconsinRunSettings) -> Result<WisconsinRunOutput, String> {
    engine_options::check_pool(&settings.buffer_pool)?;
    let (lock, manifest) = open_prepared(location)?;
    let connections = match settings.config.arrivals {
        Arrivals::Poisson { workers, .. } => workers,
        Arrivals::Closed { jobs } => jobs,
    };
    let engine = EngineSettings {
        connections,
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
    let report = driver::run(&db, &settings.config).map_err(|e| format!("wisconsin run: {e}"));
    let closed = db.close().map_err(|e| format!("{}: {e}", location.dir.display()));
    let report = report?;
    closed?;
    let label = settings.config.arrivals.label();
    let dir = settings.out.join(&label);
    let (mode, rate, workers, jobs) = match settings.config.arrivals {
        Arrivals::Poisson { rate_per_s, workers } => ("open", Some(rate_per_s), Some(workers), None),
        Arrivals::Closed { jobs } => ("closed", None, None, Some(jobs)),
    };
    let out = WisconsinRunOutput {
        kind: "wisconsin-result".into(),
        label,
        mode: mode.into(),
        rate_per_s: rate,
        workers,
        jobs,
        policy: settings.policy.to_string(),
        seed: settings.config.seed,
        db_run: report.run_number,
        config_hash,
        commit: COMMIT.to_string(),
        tuples: manifest.tuples,
        buffer_pool_bytes,
        device,
        warmup_s: report.warmup_s,
        duration_s: report.duration_s,
        elapsed_s: report.elapsed_s,
        offered: report.offered,
        completed: report.requests.len() as u64,
        unserved: report.unserved,
        overloaded: report.overloaded,
        interrupted: report.interrupted,
        throughput_per_s: report.requests.len() as f64 / report.duration_s.max(1e-9),
        response: ResponseSummary::of(&report.requests),
        flush: totals(&report.samples),
        generator_late_ms_max: report.generator_late_us_max as f64 / 1e3,
        sample_interval_s: settings.config.sample_interval.as_secs_f64(),
        dir: dir.clone(),
    };
    write_run_files(&dir, &report, &out)?;
    Ok(out)
}

/// One run read back from its directory.
pub struct StoredRun {
    pub output: WisconsinRunOutput,
    pub requests: Vec<Request>,
}

impl StoredRun {
    pub fn read(dir: &Path) -> Result<Self, String> {
        let path = dir.join(RUN_FILE);
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let output: WisconsinRunOutput =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a wisconsin run: {e}", path.display()))?;
        let path = dir.join(REQUESTS_FILE);
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let requests = parse_requests_csv(&path, &text)?;
        Ok(Self { output, requests })
    }

    fn responses_s(&self) -> Vec<f64> {
        self.requests.iter().map(|r| r.response_us() as f64 / 1e6).collect()
    }

    /// Answer times from the end of the warm-up, sorted.
    fn ends_s(&self) -> Vec<f64> {
        let w = self.output.warmup_s;
        let mut e: Vec<f64> = self.requests.iter().map(|r| r.end_us as f64 / 1e6 - w).collect();
        e.sort_by(f64::total_cmp);
        e
    }
}

/// Every run directory under `runs` (those holding a `run.json`).
pub fn read_runs(runs: &Path) -> Result<Vec<StoredRun>, String> {
    let entries = fs::read_dir(runs).map_err(|e| format!("--runs {}: cannot read: {e}", runs.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(RUN_FILE).is_file())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| StoredRun::read(d)).collect()
}

/// Model runs of the measured length behind `ks_model_spread_p95`.
pub const KS_SPREAD_RUNS: u64 = 20;

/// The 95th percentile of the KS distance between `KS_SPREAD_RUNS` model
/// runs of `duration_s` (seeds after `seed`) and `reference` (a long run).
pub fn ks_model_spread_p95(p: &ModelParams, rate: f64, duration_s: f64, seed: u64, reference: &[f64]) -> f64 {
    let mut distances: Vec<f64> = (1..=KS_SPREAD_RUNS)
        .filter_map(|k| model003::simulate_open(p, rate, duration_s, seed.wrapping_add(k)).ok())
        .map(|o| {
            let rt: Vec<f64> = o.requests.iter().map(|r| r.response_s()).collect();
            model003::ks_statistic(&rt, reference)
        })
        .collect();
    if distances.is_empty() {
        return f64::NAN;
    }
    distances.sort_by(f64::total_cmp);
    let index = ((distances.len() as f64 * 0.95).ceil() as usize).clamp(1, distances.len()) - 1;
    distances[index]
}

/// One open-loop rate: measured against modelled.
#[derive(Clone, Debug, Serialize)]
pub struct RateComparison {
    pub label: String,
    pub rate_per_s: f64,
    pub measured: ResponseSummary,
    pub modelled: ResponseSummary,
    pub ks: f64,
    /// The 5 % critical value for independent samples of these sizes
    /// (response times are autocorrelated, so it is a yardstick only).
    pub ks_critical_5pct: f64,
    /// The distance the model keeps from itself: the 95th percentile of
    /// the KS distance between [`KS_SPREAD_RUNS`] model runs as long as
    /// the measured one (other seeds) and the long model run. Response
    /// times within a pause move together, so a run of this length is a
    /// few hundred pauses, not thousands of independent answers: this is
    /// the stated bound a measured CDF is held to (`within_model_spread`).
    pub ks_model_spread_p95: f64,
    pub within_model_spread: bool,
    /// A diagnostic: the KS distance when the model draws request service
    /// times from the one-job run's answers (those under 5x its median,
    /// i.e. outside pauses; rescaled to E[Tproc]) instead of Exp(E[Tproc]).
    /// `None` without a one-job run.
    pub ks_measured_service_shape: Option<f64>,
    /// Flush period measured in this run (pauses rule) and the model's
    /// DPBmax / lambda.
    pub measured_period_s: Option<f64>,
    pub measured_acf_period_s: Option<f64>,
    /// Dominant period of the mean response time per 100 ms, measured
    /// and modelled (spikes that are not pauses).
    pub measured_acf_spike_period_s: Option<f64>,
    pub model_acf_spike_period_s: Option<f64>,
    /// Spike events (answers over 5x the median, grouped within 1 s):
    /// count, median period and its coefficient of variation.
    pub measured_spike_events: usize,
    pub measured_spike_period_s: Option<f64>,
    pub measured_spike_period_cv: Option<f64>,
    pub model_spike_events: usize,
    pub model_spike_period_s: Option<f64>,
    pub model_spike_period_cv: Option<f64>,
    /// Share of 1 s intervals whose largest response time is over 5x the
    /// run's median: how visible the spikes are.
    pub measured_spiky_intervals: f64,
    pub model_spiky_intervals: f64,
    pub model_period_s: Option<f64>,
    /// Why the model was not simulated at this rate, if it was not.
    pub note: Option<String>,
}

/// One closed-loop population: engine against model.
#[derive(Clone, Debug, Serialize)]
pub struct PopulationComparison {
    pub jobs: u32,
    pub engine_throughput_per_s: Option<f64>,
    pub engine_mean_response_s: Option<f64>,
    pub model_throughput_per_s: f64,
    pub model_mean_response_s: f64,
}

/// `wisconsin model`'s result.
#[derive(Clone, Debug, Serialize)]
pub struct ModelReport {
    pub kind: &'static str,
    pub commit: String,
    pub seed: u64,
    /// The run the flush period, pauses and P came from, and the
    /// one-request run.
    pub saturated_run: String,
    pub single_run: Option<String>,
    pub fit: Fit,
    pub paper: ModelParams,
    pub rates: Vec<RateComparison>,
    pub populations: Vec<PopulationComparison>,
    pub files: Vec<PathBuf>,
}

/// Share of 1 s intervals (by answer time) whose largest response time is
/// over 5x the median response time of all answers.
pub fn spiky_share(answers: &[(f64, f64)]) -> f64 {
    if answers.is_empty() {
        return 0.0;
    }
    let mut rt: Vec<f64> = answers.iter().map(|a| a.1).collect();
    rt.sort_by(f64::total_cmp);
    let median = rt[rt.len() / 2];
    let last = answers.iter().map(|a| a.0).fold(0.0, f64::max);
    let bins = (last.ceil() as usize).max(1);
    let mut max = vec![0.0f64; bins];
    for &(t, r) in answers {
        let i = (t.max(0.0) as usize).min(bins - 1);
        max[i] = max[i].max(r);
    }
    max.iter().filter(|&&m| m > 5.0 * median).count() as f64 / bins as f64
}

fn summary_of_s(mut v: Vec<f64>) -> ResponseSummary {
    v.sort_by(f64::total_cmp);
    let us: Vec<u64> = v.iter().map(|s| (s * 1e6).round().max(0.0) as u64).collect();
    ResponseSummary::of_sorted_us(&us)
}

/// `wisconsin model`: fits 003's model to the runs in `runs`, simulates it
/// at every measured rate and population, writes the comparison files and
/// figures into `out`.
pub fn model(runs: &Path, out: &Path, seed: u64) -> Result<ModelReport, String> {
    let stored = read_runs(runs)?;
    if stored.is_empty() {
        return Err(format!(
            "--runs {}: no run directories (with {RUN_FILE}) here; run `flushwise wisconsin run --out {}` first",
            runs.display(),
            runs.display()
        ));
    }
    // 003 §4.2: P and p from "some high traffic", the pauses from "some
    // experiment with high number of concurrent requests": the closed run
    // with the most jobs, else the open run at the highest rate.
    let saturated = stored
        .iter()
        .filter(|r| r.output.mode == "closed")
        .max_by_key(|r| r.output.jobs.unwrap_or(0))
        .or_else(|| {
            stored.iter().filter(|r| r.output.mode == "open").max_by(|a, b| {
                a.output
                    .rate_per_s
                    .unwrap_or(0.0)
                    .total_cmp(&b.output.rate_per_s.unwrap_or(0.0))
            })
        })
        .ok_or("no runs")?;
    let single = stored
        .iter()
        .find(|r| r.output.mode == "closed" && r.output.jobs == Some(1));
    let single_rt = single.map(StoredRun::responses_s);
    let fit = model003::fit(&saturated.ends_s(), saturated.output.duration_s, single_rt.as_deref())?;
    let p = fit.params;
    // The one-job run's answers outside pauses: the measured shape of a
    // request's service time (a diagnostic beside 003's exponential).
    let service_shape: Option<Vec<f64>> = single_rt.as_ref().map(|rt| {
        let mut sorted = rt.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
        sorted.into_iter().filter(|t| *t <= 5.0 * median).collect()
    });
    fs::create_dir_all(out).map_err(|e| format!("--out {}: cannot create: {e}", out.display()))?;
    let mut rates = Vec::new();
    let mut cdf_panels = Vec::new();
    let mut traffic_panels = Vec::new();
    let mut open: Vec<&StoredRun> = stored.iter().filter(|r| r.output.mode == "open").collect();
    open.sort_by(|a, b| {
        a.output
            .rate_per_s
            .unwrap_or(0.0)
            .total_cmp(&b.output.rate_per_s.unwrap_or(0.0))
    });
    for run in open {
        let rate = run.output.rate_per_s.unwrap_or(0.0);
        let measured = run.responses_s();
        let pauses = model003::detect_pauses(&run.ends_s());
        let acf = model003::acf_period(&run.ends_s(), 0.1, 120.0);
        // Ten times the measured duration, at least 2,000 s: the model's
        // CDF then varies less between seeds than the measured one.
        let sim_s = (run.output.duration_s * 10.0).max(2_000.0);
        let (modelled, note) = match model003::simulate_open(&p, rate, sim_s, seed) {
            Ok(o) => (o, None),
            Err(e) => (model003::SimOutcome::default(), Some(e)),
        };
        let modelled_rt: Vec<f64> = modelled.requests.iter().map(|r| r.response_s()).collect();
        let ks = model003::ks_statistic(&measured, &modelled_rt);
        let ks_spread = ks_model_spread_p95(&p, rate, run.output.duration_s, seed, &modelled_rt);
        let ks_shape = service_shape.as_ref().and_then(|shape| {
            let o = model003::simulate_open_with_service(&p, shape, rate, sim_s, seed).ok()?;
            let rt: Vec<f64> = o.requests.iter().map(|r| r.response_s()).collect();
            Some(model003::ks_statistic(&measured, &rt))
        });
        let mut m_sorted = measured.clone();
        m_sorted.sort_by(f64::total_cmp);
        let mut s_sorted = modelled_rt.clone();
        s_sorted.sort_by(f64::total_cmp);
        cdf_panels.push(Panel {
            title: format!("lambda = {rate}/s (KS {ks:.3})"),
            x_label: "response time (s)".into(),
            y_label: Some("CDF".into()),
            series: vec![
                Series::line("engine (measured)", cdf_points(&m_sorted, 300), true),
                Series::line("003 model (fitted)", cdf_points(&s_sorted, 300), false),
            ],
        });
        // Traffic: response time of each request over time, the first
        // 120 s of each, as 003's Figures 1 and 3.
        let window = 120.0;
        let measured_pts: Vec<(f64, f64)> = run
            .requests
            .iter()
            .map(|r| {
                (
                    r.arrival_us as f64 / 1e6 - run.output.warmup_s,
                    r.response_us() as f64 / 1e6,
                )
            })
            .filter(|&(t, _)| t < window)
            .collect();
        let model_pts: Vec<(f64, f64)> = modelled
            .requests
            .iter()
            .map(|r| (r.arrival_s, r.response_s()))
            .filter(|&(t, _)| t < window)
            .collect();
        let mut measured_pts = measured_pts;
        measured_pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut model_pts = model_pts;
        model_pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        traffic_panels.push(Panel {
            title: format!("engine, lambda = {rate}/s"),
            x_label: "arrival (s)".into(),
            y_label: Some("response time (s)".into()),
            series: vec![Series::line("engine (measured)", measured_pts, true)],
        });
        traffic_panels.push(Panel {
            title: format!("003 model, lambda = {rate}/s"),
            x_label: "arrival (s)".into(),
            y_label: Some("response time (s)".into()),
            series: vec![Series::line("003 model (fitted)", model_pts, false)],
        });
        let measured_answers: Vec<(f64, f64)> = run
            .requests
            .iter()
            .map(|r| {
                (
                    r.end_us as f64 / 1e6 - run.output.warmup_s,
                    r.response_us() as f64 / 1e6,
                )
            })
            .collect();
        let measured_spikes = model003::spikes(&measured_answers, 5.0, 1.0);
        let model_answers: Vec<(f64, f64)> = modelled.requests.iter().map(|r| (r.end_s, r.response_s())).collect();
        let model_spikes = model003::spikes(&model_answers, 5.0, 1.0);
        rates.push(RateComparison {
            measured_acf_spike_period_s: model003::response_period(&measured_answers, 0.1, 60.0),
            model_acf_spike_period_s: model003::response_period(&model_answers, 0.1, 60.0),
            measured_spike_events: measured_spikes.starts_s.len(),
            measured_spike_period_s: measured_spikes.period_s,
            measured_spike_period_cv: measured_spikes.period_cv,
            model_spike_events: model_spikes.starts_s.len(),
            model_spike_period_s: model_spikes.period_s,
            model_spike_period_cv: model_spikes.period_cv,
            measured_spiky_intervals: spiky_share(&measured_answers),
            model_spiky_intervals: spiky_share(&model_answers),
            label: run.output.label.clone(),
            rate_per_s: rate,
            measured: summary_of_s(measured.clone()),
            modelled: summary_of_s(modelled_rt.clone()),
            ks,
            ks_critical_5pct: model003::ks_critical_5pct(measured.len(), modelled_rt.len()),
            ks_model_spread_p95: ks_spread,
            within_model_spread: ks <= ks_spread,
            ks_measured_service_shape: ks_shape,
            measured_period_s: pauses.period_s,
            measured_acf_period_s: acf,
            model_period_s: (p.dpb_max > 0).then(|| f64::from(p.dpb_max) / rate),
            note,
        });
    }
    // N/T and N/P: every closed run's population, and a few more for the
    // model's curve.
    let mut jobs: Vec<u32> = stored.iter().filter_map(|r| r.output.jobs).collect();
    jobs.extend([1, 2, 5, 10, 20, 40, 60, 80, 100]);
    jobs.sort_unstable();
    jobs.dedup();
    let mut populations = Vec::new();
    for &n in &jobs {
        let sim = model003::simulate_closed(&p, n, 900.0, seed)?;
        let (thr, mean) = model003::closed_figures(&sim, 60.0);
        let engine = stored.iter().find(|r| r.output.jobs == Some(n));
        populations.push(PopulationComparison {
            jobs: n,
            engine_throughput_per_s: engine.map(|r| r.output.throughput_per_s),
            engine_mean_response_s: engine.map(|r| r.output.response.mean_s),
            model_throughput_per_s: thr,
            model_mean_response_s: mean,
        });
    }
    let mut files = Vec::new();
    let layout = |columns| Layout {
        columns,
        shared_y: false,
        log_x_if_wide: false,
    };
    if !cdf_panels.is_empty() {
        let path = out.join("cdf.svg");
        // Response times span 0.1 ms to seconds: a logarithmic x axis.
        plot::panels_svg_with(
            &path,
            &cdf_panels,
            "CDF",
            Layout {
                log_x_if_wide: true,
                ..layout(3)
            },
        )?;
        files.push(path);
        let path = out.join("traffic.svg");
        plot::panels_svg_with(&path, &traffic_panels, "response time (s)", layout(2))?;
        files.push(path);
    }
    let engine_pts = |f: &dyn Fn(&PopulationComparison) -> Option<f64>| {
        populations
            .iter()
            .filter_map(|c| f(c).map(|v| (f64::from(c.jobs), v)))
            .collect::<Vec<_>>()
    };
    let nt_np = vec![
        Panel {
            title: "N/P: throughput vs concurrent jobs".into(),
            x_label: "concurrent jobs".into(),
            y_label: Some("throughput (/s)".into()),
            series: vec![
                Series::line("engine (measured)", engine_pts(&|c| c.engine_throughput_per_s), true),
                Series::line(
                    "003 model (fitted)",
                    engine_pts(&|c| Some(c.model_throughput_per_s)),
                    false,
                ),
            ],
        },
        Panel {
            title: "N/T: mean response time vs concurrent jobs".into(),
            x_label: "concurrent jobs".into(),
            y_label: Some("mean response time (s)".into()),
            series: vec![
                Series::line("engine (measured)", engine_pts(&|c| c.engine_mean_response_s), true),
                Series::line(
                    "003 model (fitted)",
                    engine_pts(&|c| Some(c.model_mean_response_s)),
                    false,
                ),
            ],
        },
    ];
    let path = out.join("nt_np.svg");
    plot::panels_svg_with(&path, &nt_np, "", layout(2))?;
    files.push(path);
    let report = ModelReport {
        kind: "wisconsin-model",
        commit: COMMIT.to_string(),
        seed,
        saturated_run: saturated.output.label.clone(),
        single_run: single.map(|r| r.output.label.clone()),
        fit,
        paper: ModelParams::PAPER,
        rates,
        populations,
        files: Vec::new(),
    };
    let path = out.join("model.json");
    let mut with_files = report.clone();
    files.push(path.clone());
    with_files.files = files;
    fs::write(
        &path,
        serde_json::to_string_pretty(&with_files).map_err(|e| format!("cannot render JSON: {e}"))? + "\n",
    )
    .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(with_files)
}

/// 003 Table 1 beside ours, as text.
pub fn table1_text(report: &ModelReport) -> String {
    let p = &report.fit.params;
    let q = &report.paper;
    let header: Vec<String> = ["parameter", "003 Table 1", "fitted to the engine"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows = vec![
        vec![
            "Tproc".into(),
            format!("Exp({})", q.tproc_mean_s),
            format!("Exp({:.5})", p.tproc_mean_s),
        ],
        vec![
            "Tnd".into(),
            format!("{} + Exp({})", q.tnd_const_s, q.tnd_exp_mean_s),
            format!("{:.5} + Exp({:.5})", p.tnd_const_s, p.tnd_exp_mean_s),
        ],
        vec!["DPBmax".into(), q.dpb_max.to_string(), p.dpb_max.to_string()],
        vec![
            "Tdp".into(),
            format!("Exp({})", q.tdp_mean_s),
            format!("Exp({:.5})", p.tdp_mean_s),
        ],
    ];
    let mut text = render_table(&header, &rows);
    let i = &report.fit.inputs;
    text.push_str(&format!(
        "fitted from {} (P = {:.2}/s, {} pauses above {:.3} s, mean pause {}, flush period {} by pauses, {} by autocorrelation){}\n",
        report.saturated_run,
        i.throughput_per_s,
        i.pauses.pauses.len(),
        i.pauses.threshold_s,
        opt_s(i.pauses.mean_pause_s),
        opt_s(i.pauses.period_s),
        opt_s(i.acf_period_s),
        report
            .single_run
            .as_ref()
            .map(|s| format!(" and {s} (E[T1] {})", opt_s(i.single_mean_s)))
            .unwrap_or_default()
    ));
    for n in &report.fit.notes {
        text.push_str(&format!("note: {n}\n"));
    }
    text
}

fn opt_s(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3} s")).unwrap_or_else(|| "-".into())
}

/// The per-rate comparison and the N/T, N/P rows as text.
pub fn comparison_text(report: &ModelReport) -> String {
    let header: Vec<String> = [
        "rate/s",
        "mean meas",
        "mean model",
        "p99 meas",
        "p99 model",
        "max meas",
        "KS",
        "KS 5% iid",
        "KS model p95",
        "KS meas. Tproc shape",
        "pause period",
        "spike period meas (cv, n)",
        "spike period model (cv)",
        "spiky s meas",
        "spiky s model",
        "DPBmax/lambda",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = report
        .rates
        .iter()
        .map(|r| {
            vec![
                r.rate_per_s.to_string(),
                format!("{:.3}", r.measured.mean_s),
                format!("{:.3}", r.modelled.mean_s),
                format!("{:.3}", r.measured.p99_s),
                format!("{:.3}", r.modelled.p99_s),
                format!("{:.3}", r.measured.max_s),
                format!("{:.3}", r.ks),
                format!("{:.3}", r.ks_critical_5pct),
                format!(
                    "{:.3}{}",
                    r.ks_model_spread_p95,
                    if r.within_model_spread { " (within)" } else { "" }
                ),
                r.ks_measured_service_shape
                    .map(|k| format!("{k:.3}"))
                    .unwrap_or_else(|| "-".into()),
                opt_s(r.measured_period_s),
                format!(
                    "{} ({}, {})",
                    opt_s(r.measured_spike_period_s),
                    r.measured_spike_period_cv
                        .map(|c| format!("{c:.2}"))
                        .unwrap_or_else(|| "-".into()),
                    r.measured_spike_events
                ),
                format!(
                    "{} ({})",
                    opt_s(r.model_spike_period_s),
                    r.model_spike_period_cv
                        .map(|c| format!("{c:.2}"))
                        .unwrap_or_else(|| "-".into())
                ),
                format!("{:.0}%", r.measured_spiky_intervals * 100.0),
                format!("{:.0}%", r.model_spiky_intervals * 100.0),
                opt_s(r.model_period_s),
            ]
        })
        .collect();
    let mut text = render_table(&header, &rows);
    for r in &report.rates {
        if let Some(n) = &r.note {
            text.push_str(&format!("lambda {}: {n}\n", r.rate_per_s));
        }
    }
    let header: Vec<String> = ["jobs", "P engine", "P model", "T engine", "T model"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let f = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into());
    let rows: Vec<Vec<String>> = report
        .populations
        .iter()
        .map(|c| {
            vec![
                c.jobs.to_string(),
                f(c.engine_throughput_per_s),
                format!("{:.3}", c.model_throughput_per_s),
                f(c.engine_mean_response_s),
                format!("{:.3}", c.model_mean_response_s),
            ]
        })
        .collect();
    text.push('\n');
    text.push_str(&render_table(&header, &rows));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_spread_bounds_the_model_against_itself_and_not_another_model() {
        let p = ModelParams::PAPER;
        let long: Vec<f64> = model003::simulate_open(&p, 25.0, 4_000.0, 1)
            .unwrap()
            .requests
            .iter()
            .map(|r| r.response_s())
            .collect();
        let spread = ks_model_spread_p95(&p, 25.0, 240.0, 1, &long);
        assert!(spread > 0.0 && spread < 0.2, "{spread}");
        // A run of the same model with a seed outside the spread's runs is
        // usually within it; a model with half the service time is not.
        let same: Vec<f64> = model003::simulate_open(&p, 25.0, 240.0, 99)
            .unwrap()
            .requests
            .iter()
            .map(|r| r.response_s())
            .collect();
        assert!(model003::ks_statistic(&same, &long) <= spread * 1.5);
        let faster = ModelParams {
            tproc_mean_s: p.tproc_mean_s / 2.0,
            ..p
        };
        let other: Vec<f64> = model003::simulate_open(&faster, 25.0, 240.0, 7)
            .unwrap()
            .requests
            .iter()
            .map(|r| r.response_s())
            .collect();
        assert!(model003::ks_statistic(&other, &long) > spread, "{spread}");
    }

    #[test]
    fn requests_csv_round_trips() {
        let r = vec![Request {
            seq: 3,
            arrival_us: 10,
            start_us: 12,
            end_us: 40,
            unique1: 7,
            unique3: 9,
        }];
        let text = requests_csv(&r);
        assert_eq!(parse_requests_csv(Path::new("x"), &text).unwrap(), r);
        let e = parse_requests_csv(Path::new("x.csv"), "h\n1,2\n").unwrap_err();
        assert!(e.contains("x.csv line 2"), "{e}");
    }

    #[test]
    fn cdf_points_end_at_one() {
        let v: Vec<f64> = (0..1000).map(f64::from).collect();
        let c = cdf_points(&v, 10);
        assert_eq!(c.last(), Some(&(999.0, 1.0)));
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(cdf_points(&[], 10).is_empty());
    }
}
