//! `lab run fidelity`: does the simulator predict the engine (issue #18)?
//! One command for what EXPERIMENTS.md's first fidelity table was made by
//! hand with:
//!
//! 1. a TPC-C database of [`FidelityScale::warehouses`] warehouses under
//!    `--dir` (`tpcc-wW`, the name `compare` uses; prepared once, reused);
//! 2. this machine's disk calibrated right before each engine run
//!    ([`crate::device_preset`], `CalibrateOptions::beside_a_run`, about
//!    15 s) into `OUT/fidelity/presets/POLICY-POOL-REPEAT.toml`, the
//!    preset that run's replay uses: this disk's speed moves by 2x within
//!    minutes (EXPERIMENTS, session 23), so one preset for a 20-minute lab
//!    mixes the model's error with the disk's drift. Each run's row keeps
//!    what its calibration saw (`disk_read_qd1_us`, `disk_fsync_us`).
//!    With [`FidelityScale::calibrate_each_run`] off, one preset,
//!    `DIR/calibrated.toml` (calibrated unless it is there), serves all;
//! 3. per pool ({32, 64} MiB) and policy (mysql56, percona56, self-tuning,
//!    flushwise), an engine TPC-C run (16 connections, fresh copy of the
//!    prepared database, `--trace`, which also writes the user threads'
//!    CPU per transaction type beside the trace), then the simulator's
//!    replay of that trace with the same pool and policy, redo 256 MiB,
//!    the calibrated device (pinned to the preset's content hash), the
//!    run's measured CPU costs on 2 cores and in-place writes posted 16 at
//!    a time as the engine does, same warm-up and measured window;
//! 4. per cell, engine mean (min-max over repeats) against replay mean of
//!    NOPM, hit ratio, I/O per transaction, dirty share and synchronous
//!    write share, each delta checked against issue #18's bounds, and the
//!    policies' ranking by mean NOPM compared at each pool.
//!
//! The bounds ([`bound`]): hit ratio within 1 point, dirty share within 5
//! points, sync-write share within 1 point or 10 % of the engine's value,
//! whichever is larger, NOPM within 10 %; I/O per transaction is reported
//! without a bound.
//!
//! Repeats interleave (every cell of repeat 1, then every cell of repeat
//! 2): the engine's own run-to-run spread is as large as the gap being
//! measured (EXPERIMENTS.md, issue #18: two runs of mysql56 at 32 MiB with
//! the same settings and seed gave 7,952 and 10,954 NOPM, 47 % and 92 %
//! synchronous writes), so one engine run per cell cannot carry a bound,
//! and a drift of the disk must fall on every cell alike. Each trace is
//! replayed right after its engine run and removed after its replay (about
//! 0.5 GiB each); its `.cpu.json` stays in `OUT/fidelity/traces/`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use flushwise_core::policy::PolicySpec;
use flushwise_engine::calibrate::CalibrateOptions;
use flushwise_engine::storage::{is_tmpfs, IoMode};
use flushwise_sim::options::SimOptions;
use flushwise_sim::RunResult;

use crate::database::{self, human_bytes, Manifest};
use crate::engine_options::{self, DbLocation, EngineSettings, PrepareSpec, RunFiles};
use crate::render::{render_table, write_file, Csv};
use crate::COMMIT;
use flushwise_engine::storage::batch_io;

pub const NAME: &str = "fidelity";
pub const POOLS: [&str; 2] = ["32MiB", "64MiB"];
pub const POLICIES: [&str; 4] = ["mysql56", "percona56", "self-tuning", "flushwise"];
pub const CONNECTIONS: u32 = 16;
/// The prepared database's redo capacity, and the replay's.
pub const REDO: &str = "256MiB";
/// The replay's CPU cores (this machine's).
pub const CPU_CORES: u32 = 2;
/// In-place writes of a doublewrite batch in flight at once, as the engine
/// posts them: all of them (0) through io_uring, else its writer threads'
/// [`batch_io::IN_PLACE_WRITE_DEPTH`].
pub fn in_place_write_depth() -> u32 {
    if batch_io::io_uring_in_use() {
        0
    } else {
        batch_io::IN_PLACE_WRITE_DEPTH as u32
    }
}
/// The preset's file name under `--dir`.
pub const PRESET_FILE: &str = "calibrated.toml";
/// Room for one run's trace (a 40 s trace is about 0.5 GiB; 120 s, 1.5).
const TRACE_BYTES_ESTIMATE: u64 = 2 << 30;

/// What the lab runs: the grid, the times and the database's size.
#[derive(Clone, Debug, PartialEq)]
pub struct FidelityScale {
    pub warehouses: u32,
    pub warmup: Duration,
    pub duration: Duration,
    pub repeats: u32,
    pub pools: Vec<String>,
    pub policies: Vec<String>,
    /// Calibrate with `device calibrate --quick`'s short points (tests).
    pub quick_calibration: bool,
    /// Calibrate the disk again right before each engine run and replay
    /// that run on its own preset (`OUT/fidelity/presets/`), instead of
    /// one preset for the whole lab (`DIR/calibrated.toml`): this disk's
    /// speed moves by 2x within minutes (EXPERIMENTS, session 23).
    pub calibrate_each_run: bool,
}

impl FidelityScale {
    /// The default (2 repeats, 10 s + 40 s) or `--full` (3, 30 s + 120 s).
    pub fn new(full: bool) -> Self {
        let (warmup, duration, repeats) = if full { (30, 120, 3) } else { (10, 40, 2) };
        Self {
            warehouses: 10,
            warmup: Duration::from_secs(warmup),
            duration: Duration::from_secs(duration),
            repeats,
            pools: POOLS.map(String::from).to_vec(),
            policies: POLICIES.map(String::from).to_vec(),
            quick_calibration: false,
            calibrate_each_run: true,
        }
    }

    /// One warehouse, one pool, one policy, one 1 s + 2 s run, a quick
    /// calibration: the whole path in well under a minute (smoke test).
    pub fn smoke() -> Self {
        Self {
            warehouses: 1,
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(2),
            repeats: 1,
            pools: vec!["32MiB".into()],
            policies: vec!["percona56".into()],
            quick_calibration: true,
            calibrate_each_run: true,
        }
    }

    pub fn runs(&self) -> usize {
        self.pools.len() * self.policies.len() * self.repeats as usize
    }

    /// Seconds of engine runs, copies and replays not included.
    pub fn seconds(&self) -> u64 {
        (self.warmup + self.duration).as_secs() * self.runs() as u64
    }
}

/// One engine run and the replay of its trace.
#[derive(Clone, Debug)]
pub struct FidelityRun {
    pub pool: String,
    pub policy: String,
    pub repeat: u32,
    pub engine: RunResult,
    pub replay: RunResult,
    /// The engine's time blocked on key locks per transaction attempt
    /// (`TRACE.cpu.json`), µs: what the replay holds its transactions up,
    /// as it models no lock.
    pub engine_lock_wait_us_per_txn: f64,
    /// The replay's device (`calibrated:PATH#HASH`) and what its
    /// calibration measured of the disk's state: mean latency of a read
    /// at queue depth 1 and of the log's `fdatasync` alone, µs.
    pub device: String,
    pub disk_read_qd1_us: Option<f64>,
    pub disk_fsync_us: Option<f64>,
}

pub struct FidelityReport {
    pub scale: FidelityScale,
    pub seed: u64,
    /// The replays' device, `calibrated:PATH#HASH`, or where the
    /// per-run presets are.
    pub device: String,
    pub runs: Vec<FidelityRun>,
    pub files: Vec<PathBuf>,
}

/// The compared figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Nopm,
    HitRatio,
    IoPerTxn,
    DirtyPct,
    SyncWritePct,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Nopm,
        Metric::HitRatio,
        Metric::IoPerTxn,
        Metric::DirtyPct,
        Metric::SyncWritePct,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Metric::Nopm => "NOPM",
            Metric::HitRatio => "hit ratio",
            Metric::IoPerTxn => "I/O per txn",
            Metric::DirtyPct => "dirty %",
            Metric::SyncWritePct => "sync writes %",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Metric::Nopm => "nopm",
            Metric::HitRatio => "hit_ratio",
            Metric::IoPerTxn => "io_per_txn",
            Metric::DirtyPct => "dirty_pct",
            Metric::SyncWritePct => "sync_write_pct",
        }
    }

    pub fn of(self, r: &RunResult) -> f64 {
        match self {
            Metric::Nopm => r.figures.nopm,
            Metric::HitRatio => r.figures.hit_ratio,
            Metric::IoPerTxn => r.figures.io_per_txn,
            Metric::DirtyPct => r.dirty_pct_avg,
            Metric::SyncWritePct => r.figures.sync_write_pct,
        }
    }

    fn value_text(self, v: f64) -> String {
        match self {
            Metric::Nopm => format!("{v:.0}"),
            Metric::HitRatio => format!("{v:.3}"),
            Metric::IoPerTxn | Metric::DirtyPct => format!("{v:.1}"),
            Metric::SyncWritePct => format!("{v:.2}"),
        }
    }

    /// replay - engine, as the report states it: relative for NOPM and
    /// I/O per transaction, points for the shares.
    fn delta_text(self, engine: f64, replay: f64) -> String {
        match self {
            Metric::Nopm | Metric::IoPerTxn => format!("{:+.0} %", (replay / engine - 1.0) * 100.0),
            Metric::HitRatio => format!("{:+.1} pt", (replay - engine) * 100.0),
            Metric::DirtyPct | Metric::SyncWritePct => format!("{:+.1} pt", replay - engine),
        }
    }
}

/// Issue #18's bound on |replay - engine| for `metric` at the engine's
/// value `engine` (`None`: no bound). The hit ratio is a fraction (a point
/// is 0.01), the shares are percentages.
pub fn bound(metric: Metric, engine: f64) -> Option<f64> {
    match metric {
        Metric::Nopm => Some(0.10 * engine.abs()),
        Metric::HitRatio => Some(0.01),
        Metric::IoPerTxn => None,
        Metric::DirtyPct => Some(5.0),
        Metric::SyncWritePct => Some(f64::max(1.0, 0.10 * engine.abs())),
    }
}

/// Whether `replay` is within `metric`'s bound of `engine` (`None`: no
/// bound); a figure that is not a number fails.
pub fn within(metric: Metric, engine: f64, replay: f64) -> Option<bool> {
    let b = bound(metric, engine)?;
    Some(engine.is_finite() && replay.is_finite() && (replay - engine).abs() <= b + 1e-9)
}

/// Names ordered by mean, highest first (ties keep their order).
pub fn ranking(means: &[(String, f64)]) -> Vec<String> {
    let mut v: Vec<&(String, f64)> = means.iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.into_iter().map(|(n, _)| n.clone()).collect()
}

/// Mean, min and max (NaN for none).
pub fn spread(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

/// The prepared database `DIR/tpcc-wW`: reused when its `prepare`
/// finished, else (wiped and) loaded.
fn prepared(dir: &Path, warehouses: u32, progress: &mut dyn FnMut(&str)) -> Result<DbLocation, String> {
    let location = DbLocation {
        dir: dir.join(format!("tpcc-w{warehouses}")),
        redo_dir: None,
        io: "direct".into(),
    };
    if database::prepared_state(&location.dir, None) == database::PreparedState::Prepared {
        let m = Manifest::read(&location.dir)?;
        if m.warehouses == warehouses {
            progress(&format!(
                "reusing the prepared database {} ({} warehouses, {}, loaded by commit {})",
                location.dir.display(),
                m.warehouses,
                human_bytes(m.database_bytes),
                m.commit
            ));
            return Ok(location);
        }
    }
    progress(&format!(
        "preparing {warehouses} warehouses in {} (once; later runs reuse it)",
        location.dir.display()
    ));
    let spec = PrepareSpec {
        warehouses,
        threads: crate::sim_runner::default_jobs(),
        seed: 1,
        page_size: "16384",
        redo: REDO,
        buffer_pool: "256MiB",
        force: true,
    };
    let (_, summary) = engine_options::prepare_database(&location, &spec)?;
    progress(&summary);
    Ok(location)
}

/// `DIR/calibrated.toml`, calibrated now unless it is there; returns the
/// device name the replays record (`calibrated:PATH#HASH`).
fn calibrated(dir: &Path, quick: bool, progress: &mut dyn FnMut(&str)) -> Result<String, String> {
    let path = dir.join(PRESET_FILE);
    if path.exists() {
        progress(&format!("reusing the device preset {}", path.display()));
    } else {
        let options = if quick {
            CalibrateOptions::quick(dir)
        } else {
            CalibrateOptions::new(dir)
        };
        calibrate_now(dir, options, &path, progress)?;
    }
    flushwise_sim::pin_device(&format!("calibrated:{}", path.display()))
}

/// Calibrates the disk under `dir` into `path`; returns what it measured.
fn calibrate_now(
    dir: &Path,
    mut options: CalibrateOptions,
    path: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<flushwise_core::device::calibration::Measurements, String> {
    if is_tmpfs(dir) {
        options.io = IoMode::Buffered;
    }
    options.validate()?;
    crate::device_preset::require_free_space(&options)?;
    progress(&format!(
        "calibrating the disk under {} into {} (~{} points)",
        dir.display(),
        path.display(),
        options.point_count()
    ));
    let stop = AtomicBool::new(false);
    let calibration = crate::device_preset::calibrate_into(&options, path, &stop, progress)?
        .ok_or_else(|| "the calibration was stopped".to_string())?;
    Ok(calibration.measurements)
}

/// Runs the lab at `scale` and writes `out/fidelity/`.
pub fn run(
    scale: &FidelityScale,
    seed: u64,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<FidelityReport, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let redo_bytes = flushwise_sim::options::size_flag("--redo", REDO)?;
    // The database, one run's copy, and one trace.
    database::require_free(
        dir,
        2 * database::database_bytes_estimate(scale.warehouses, redo_bytes) + TRACE_BYTES_ESTIMATE,
        &format!(
            "lab run fidelity: a {}-warehouse database, a run's copy and one trace",
            scale.warehouses
        ),
    )?;
    let policies: Vec<PolicySpec> = scale
        .policies
        .iter()
        .map(|p| PolicySpec::parse(p))
        .collect::<Result<_, _>>()?;
    for pool in &scale.pools {
        engine_options::check_pool(pool)?;
    }
    // The output directory first: twenty minutes of runs must not end in
    // "cannot write".
    let root = out.join(NAME);
    let traces = root.join("traces");
    std::fs::create_dir_all(&traces).map_err(|e| format!("{}: cannot create: {e}", traces.display()))?;
    let base = prepared(dir, scale.warehouses, progress)?;
    let presets = root.join("presets");
    let device = if scale.calibrate_each_run {
        std::fs::create_dir_all(&presets).map_err(|e| format!("{}: cannot create: {e}", presets.display()))?;
        format!("calibrated before each run ({})", presets.display())
    } else {
        calibrated(dir, scale.quick_calibration, progress)?
    };
    let copy = DbLocation {
        dir: dir.join("fidelity-run"),
        redo_dir: None,
        io: "direct".into(),
    };
    progress(&format!(
        "{} engine runs, each replayed after it, about {} min of engine time",
        scale.runs(),
        scale.seconds().div_ceil(60)
    ));
    let warmup = format!("{}s", scale.warmup.as_secs());
    let duration = format!("{}s", scale.duration.as_secs());
    let mut runs = Vec::new();
    for repeat in 1..=scale.repeats {
        for pool in &scale.pools {
            for (policy_text, policy) in scale.policies.iter().zip(&policies) {
                database::copy_database(&base.dir, &copy.dir)?;
                let trace = traces.join(format!("{policy_text}-{pool}-{repeat}.fwtrace"));
                // This run's device: the disk as it is now, or the lab's one preset.
                let (run_device, disk) = if scale.calibrate_each_run {
                    let path = presets.join(format!("{policy_text}-{pool}-{repeat}.toml"));
                    let options = if scale.quick_calibration {
                        CalibrateOptions::quick(dir)
                    } else {
                        CalibrateOptions::beside_a_run(dir)
                    };
                    let mut quiet = |_: &str| {};
                    let m = calibrate_now(dir, options, &path, &mut quiet)?;
                    let read_qd1 = m
                        .point(flushwise_core::device::calibration::Pattern::Read, 1)
                        .and_then(|p| p.read)
                        .map(|f| f.mean_latency_us);
                    progress(&format!(
                        "  disk now: read QD1 {} us, log fdatasync {:.0} us (preset {})",
                        us_or_dash(read_qd1),
                        m.fsync_mean_us,
                        path.display()
                    ));
                    (
                        flushwise_sim::pin_device(&format!("calibrated:{}", path.display()))?,
                        (read_qd1, Some(m.fsync_mean_us)),
                    )
                } else {
                    (device.clone(), (None, None))
                };
                let settings = EngineSettings {
                    connections: CONNECTIONS,
                    buffer_pool: pool.clone(),
                    redo: None,
                    device: vec!["native".into()],
                    doublewrite: true,
                    flush_log_at_commit: 1,
                    warmup: warmup.clone(),
                    duration: duration.clone(),
                    report_interval: "10s".into(),
                    seed,
                    keying_think: false,
                    max_recovery_time: None,
                };
                progress(&format!(
                    "{pool} {policy_text}, run {repeat} of {}: engine ({} s)",
                    scale.repeats,
                    (scale.warmup + scale.duration).as_secs()
                ));
                let files = RunFiles {
                    trace: Some(trace.clone()),
                    decisions: None,
                };
                let engine = engine_options::run_tpcc(&copy, &settings, policy, &files, None, |_| {})?.result;
                let options = SimOptions {
                    workload: "trace".into(),
                    trace: Some(trace.clone()),
                    buffer_pool: pool.clone(),
                    redo: REDO.into(),
                    device: run_device.clone(),
                    warmup: warmup.clone(),
                    duration: duration.clone(),
                    seed,
                    cpu_cores: CPU_CORES,
                    cpu_costs: Some(crate::engine_run::cpu_costs_path(&trace)),
                    in_place_write_depth: in_place_write_depth(),
                    policy: policy_text.clone(),
                    ..SimOptions::default()
                };
                let measured =
                    flushwise_sim::options::read_measured_cpu_costs(&crate::engine_run::cpu_costs_path(&trace))?;
                let lock_wait_us_per_txn = measured.lock_wait_us_per_attempt();
                let config = options.to_config_with(policy.clone())?;
                let replay = crate::sim_runner::run_one(config, None)?.result;
                // Traces are large; the CPU costs beside them stay.
                std::fs::remove_file(&trace).map_err(|e| format!("{}: cannot remove: {e}", trace.display()))?;
                progress(&format!(
                    "  NOPM {:.0} / {:.0}, sync writes {:.1} / {:.1} %, dirty {:.1} / {:.1} %, synced log write {} / {} us (engine / replay), engine lock waits {lock_wait_us_per_txn:.0}, core mutex {}, page latches {} us per txn{}",
                    engine.figures.nopm,
                    replay.figures.nopm,
                    engine.figures.sync_write_pct,
                    replay.figures.sync_write_pct,
                    engine.dirty_pct_avg,
                    replay.dirty_pct_avg,
                    us_or_dash(engine.log_synced_write_us_mean),
                    us_or_dash(replay.log_synced_write_us_mean),
                    us_or_dash(engine.core_mutex_wait_us_per_txn),
                    us_or_dash(engine.page_latch_wait_us_per_txn),
                    if replay.partial {
                        format!(
                            "; the replay ran out of trace {:.1} s into its window",
                            replay.measured_seconds
                        )
                    } else {
                        String::new()
                    }
                ));
                runs.push(FidelityRun {
                    pool: pool.clone(),
                    policy: policy_text.clone(),
                    repeat,
                    engine,
                    replay,
                    engine_lock_wait_us_per_txn: lock_wait_us_per_txn,
                    device: run_device,
                    disk_read_qd1_us: disk.0,
                    disk_fsync_us: disk.1,
                });
            }
        }
    }
    database::remove_with_redo(&copy.dir, None)?;
    let runs_csv = root.join("runs.csv");
    write_file(&runs_csv, &runs_csv_text(&runs, seed), "lab run fidelity")?;
    let mut report = FidelityReport {
        scale: scale.clone(),
        seed,
        device,
        runs,
        files: vec![runs_csv],
    };
    let text_path = root.join("report.txt");
    write_file(&text_path, &report_text(&report), "lab run fidelity")?;
    report.files.push(text_path);
    Ok(report)
}

/// Whole microseconds, or "-" where a shell did not measure the figure.
fn us_or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"))
}

/// A read's mean device time, where the run split its reads.
fn read_device_us(r: &RunResult) -> Option<f64> {
    r.read_split.as_ref().map(|s| s.device_us_mean)
}

/// One row per engine run with its replay.
fn runs_csv_text(runs: &[FidelityRun], seed: u64) -> String {
    let mut csv = Csv::default();
    for r in runs {
        let mut row = vec![
            ("pool".to_string(), r.pool.clone()),
            ("policy".into(), r.policy.clone()),
            ("repeat".into(), r.repeat.to_string()),
        ];
        for m in Metric::ALL {
            row.push((format!("engine_{}", m.key()), format!("{:.4}", m.of(&r.engine))));
            row.push((format!("replay_{}", m.key()), format!("{:.4}", m.of(&r.replay))));
        }
        row.extend([
            ("engine_transactions".into(), r.engine.transactions.to_string()),
            ("replay_transactions".into(), r.replay.transactions.to_string()),
            // A replay faster than its recording runs out of trace before
            // the window ends; its figures cover these seconds.
            ("replay_measured_s".into(), format!("{:.1}", r.replay.measured_seconds)),
            (
                "engine_lock_wait_us_per_txn".into(),
                format!("{:.1}", r.engine_lock_wait_us_per_txn),
            ),
        ]);
        // Where a transaction's time goes, in both (the named causes of a
        // NOPM gap; empty where a shell did not measure it).
        let optional = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
        for (key, of) in [
            ("read_device_us_mean", read_device_us as fn(&RunResult) -> Option<f64>),
            ("core_wait_us_per_txn", |r: &RunResult| r.core_wait_us_per_txn),
            ("commit_wait_us_per_txn", |r: &RunResult| r.commit_wait_us_per_txn),
            ("log_synced_write_us_mean", |r: &RunResult| r.log_synced_write_us_mean),
            ("core_mutex_wait_us_per_txn", |r: &RunResult| {
                r.core_mutex_wait_us_per_txn
            }),
            ("page_latch_wait_us_per_txn", |r: &RunResult| {
                r.page_latch_wait_us_per_txn
            }),
        ] {
            row.push((format!("engine_{key}"), optional(of(&r.engine))));
            row.push((format!("replay_{key}"), optional(of(&r.replay))));
        }
        row.extend([
            (
                "engine_final_parameters".into(),
                crate::render::parameters_text(&r.engine.final_parameters),
            ),
            (
                "replay_final_parameters".into(),
                crate::render::parameters_text(&r.replay.final_parameters),
            ),
            ("seed".into(), seed.to_string()),
            ("engine_seed".into(), r.engine.seed.to_string()),
            ("replay_seed".into(), r.replay.seed.to_string()),
            ("engine_config_hash".into(), r.engine.config_hash.clone()),
            ("replay_config_hash".into(), r.replay.config_hash.clone()),
            ("engine_commit".into(), r.engine.commit.clone()),
            ("replay_commit".into(), r.replay.commit.clone()),
            ("replay_device".into(), r.device.clone()),
            ("disk_read_qd1_us".into(), optional(r.disk_read_qd1_us)),
            ("disk_fsync_us".into(), optional(r.disk_fsync_us)),
        ]);
        csv.push(row);
    }
    csv.render()
}

/// One figure of a cell: the engine's mean, min and max over runs, the
/// replays' mean, and whether they are within the bound (`None`: none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricFigures {
    pub metric: Metric,
    pub engine: (f64, f64, f64),
    pub replay: f64,
    pub within: Option<bool>,
}

/// A cell's figures, in [`Metric::ALL`]'s order.
pub struct CellFigures {
    pub pool: String,
    pub policy: String,
    pub figures: Vec<MetricFigures>,
}

/// Per cell of the grid (pool-major, policies in order), its figures.
pub fn cells(runs: &[FidelityRun]) -> Vec<CellFigures> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in runs {
        let k = (r.pool.clone(), r.policy.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(pool, policy)| {
            let of: Vec<&FidelityRun> = runs.iter().filter(|r| r.pool == pool && r.policy == policy).collect();
            let figures = Metric::ALL
                .iter()
                .map(|&m| {
                    let e = spread(&of.iter().map(|r| m.of(&r.engine)).collect::<Vec<_>>());
                    let s = spread(&of.iter().map(|r| m.of(&r.replay)).collect::<Vec<_>>()).0;
                    MetricFigures {
                        metric: m,
                        engine: e,
                        replay: s,
                        within: within(m, e.0, s),
                    }
                })
                .collect();
            CellFigures { pool, policy, figures }
        })
        .collect()
}

/// Per pool: the engine's and the replay's ranking by mean NOPM.
pub fn rankings(cells: &[CellFigures]) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut pools: Vec<&str> = Vec::new();
    for c in cells {
        if !pools.contains(&c.pool.as_str()) {
            pools.push(&c.pool);
        }
    }
    pools
        .into_iter()
        .map(|pool| {
            let means = |engine: bool| -> Vec<(String, f64)> {
                cells
                    .iter()
                    .filter(|c| c.pool == pool)
                    .map(|c| {
                        let f = c.figures[0];
                        (c.policy.clone(), if engine { f.engine.0 } else { f.replay })
                    })
                    .collect()
            };
            (pool.to_string(), ranking(&means(true)), ranking(&means(false)))
        })
        .collect()
}

/// The table, the bounds' tally and the rankings.
pub fn report_text(report: &FidelityReport) -> String {
    let cells = cells(&report.runs);
    let mut rows = Vec::new();
    let (mut passed, mut bounded) = (0, 0);
    for c in &cells {
        let mut row = vec![c.pool.clone(), c.policy.clone()];
        for f in &c.figures {
            let (m, (mean, min, max), replay, ok) = (f.metric, f.engine, f.replay, f.within);
            let verdict = match ok {
                Some(true) => " ok",
                Some(false) => " FAIL",
                None => "",
            };
            if let Some(ok) = ok {
                bounded += 1;
                passed += usize::from(ok);
            }
            row.push(format!(
                "{} ({}-{}) / {} ({}){verdict}",
                m.value_text(mean),
                m.value_text(min),
                m.value_text(max),
                m.value_text(replay),
                m.delta_text(mean, replay)
            ));
        }
        rows.push(row);
    }
    let mut header = vec!["pool".to_string(), "policy".to_string()];
    header.extend(Metric::ALL.iter().map(|m| m.label().to_string()));
    let mut text = format!(
        "lab run {NAME}: engine vs replay (issue #18), {} warehouses, {CONNECTIONS} connections, warm-up {} s + {} s measured, {} run(s) per cell interleaved; replay: redo {REDO}, device {}, measured CPU costs on {CPU_CORES} cores, in-place write depth {}; seed {}, commit {COMMIT}\n\n\
         engine mean (min-max over runs) / replay mean (replay - engine); ok / FAIL against issue #18's bounds\n{}\n",
        report.scale.warehouses,
        report.scale.warmup.as_secs(),
        report.scale.duration.as_secs(),
        report.scale.repeats,
        report.device,
        match in_place_write_depth() {
            0 => "all (io_uring)".to_string(),
            d => d.to_string(),
        },
        report.seed,
        render_table(&header, &rows)
    );
    text.push_str(&format!(
        "{passed} of {bounded} bounded figures within the bounds (hit ratio 1 pt, dirty 5 pt, sync writes max(1 pt, 10 %), NOPM 10 %; I/O per txn unbounded)\n"
    ));
    for (pool, engine, replay) in rankings(&cells) {
        let same = if engine == replay { "same" } else { "DIFFERENT" };
        text.push_str(&format!(
            "ranking by mean NOPM at {pool}: {same}; engine {}; replay {}\n",
            engine.join(" > "),
            replay.join(" > ")
        ));
    }
    // Each run side by side where the time goes and where the policy
    // ended (issue #18 asks for its final parameters too).
    text.push_str("\nper run, engine / replay: NOPM; users' wait for a core, us per transaction; a read's device time, us; the policy's final parameters\n");
    for r in &report.runs {
        text.push_str(&format!(
            "{} {} run {}: NOPM {:.0} / {:.0}; core wait {} / {}; read device {} / {}\n  engine: {}\n  replay: {}\n",
            r.pool,
            r.policy,
            r.repeat,
            r.engine.figures.nopm,
            r.replay.figures.nopm,
            us_or_dash(r.engine.core_wait_us_per_txn),
            us_or_dash(r.replay.core_wait_us_per_txn),
            us_or_dash(read_device_us(&r.engine)),
            us_or_dash(read_device_us(&r.replay)),
            crate::render::parameters_text(&r.engine.final_parameters),
            crate::render::parameters_text(&r.replay.final_parameters),
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(nopm: f64, hit: f64, dirty: f64, sync: f64) -> RunResult {
        let mut r = RunResult::default();
        r.figures.nopm = nopm;
        r.figures.hit_ratio = hit;
        r.figures.io_per_txn = 20.0;
        r.figures.sync_write_pct = sync;
        r.dirty_pct_avg = dirty;
        // Where the policy ended: the engine's 1024, the replay's (any
        // with a dirty share under 10 %) 2048.
        r.final_parameters = vec![("p_scan".into(), if dirty < 10.0 { 2048.0 } else { 1024.0 })];
        r
    }

    #[test]
    fn bounds_are_issue_18s() {
        assert_eq!(within(Metric::HitRatio, 0.931, 0.939), Some(true));
        assert_eq!(within(Metric::HitRatio, 0.931, 0.945), Some(false));
        assert_eq!(within(Metric::DirtyPct, 71.1, 66.2), Some(true));
        assert_eq!(within(Metric::DirtyPct, 71.1, 4.4), Some(false));
        // Sync writes: 1 point, or 10 % of a larger value.
        assert_eq!(within(Metric::SyncWritePct, 0.66, 1.6), Some(true));
        assert_eq!(within(Metric::SyncWritePct, 0.66, 2.26), Some(false));
        assert_eq!(within(Metric::SyncWritePct, 47.0, 51.5), Some(true));
        assert_eq!(within(Metric::SyncWritePct, 47.0, 97.3), Some(false));
        assert_eq!(within(Metric::Nopm, 34_370.0, 31_026.0), Some(true));
        assert_eq!(within(Metric::Nopm, 7_952.0, 3_593.0), Some(false));
        assert_eq!(within(Metric::Nopm, f64::NAN, 3_593.0), Some(false));
        assert_eq!(within(Metric::IoPerTxn, 20.5, 24.4), None);
    }

    #[test]
    fn rankings_compare_by_mean_nopm() {
        let m = |v: &[(&str, f64)]| v.iter().map(|(n, x)| (n.to_string(), *x)).collect::<Vec<_>>();
        let engine = ranking(&m(&[
            ("mysql56", 7_952.0),
            ("percona56", 34_370.0),
            ("flushwise", 36_398.0),
        ]));
        assert_eq!(engine, ["flushwise", "percona56", "mysql56"]);
        let replay = ranking(&m(&[
            ("mysql56", 3_593.0),
            ("percona56", 31_026.0),
            ("flushwise", 30_000.0),
        ]));
        assert_ne!(engine, replay);
    }

    #[test]
    fn the_report_marks_a_failing_bound_and_a_changed_ranking() {
        let run = |pool: &str, policy: &str, repeat, engine, replay| FidelityRun {
            pool: pool.into(),
            policy: policy.into(),
            repeat,
            engine,
            replay,
            engine_lock_wait_us_per_txn: 0.0,
            device: "calibrated:x#h".into(),
            disk_read_qd1_us: Some(80.0),
            disk_fsync_us: None,
        };
        let runs = vec![
            // mysql56: engine 8,000 and 12,000 (mean 10,000), replay 5,000: NOPM fails.
            run(
                "32MiB",
                "mysql56",
                1,
                result(8_000.0, 0.93, 70.0, 47.0),
                result(5_000.0, 0.93, 4.0, 97.0),
            ),
            run(
                "32MiB",
                "percona56",
                1,
                result(34_000.0, 0.93, 44.0, 0.7),
                result(33_000.0, 0.932, 42.0, 1.2),
            ),
            run(
                "32MiB",
                "mysql56",
                2,
                result(12_000.0, 0.93, 70.0, 47.0),
                result(5_000.0, 0.93, 4.0, 97.0),
            ),
            run(
                "32MiB",
                "percona56",
                2,
                result(34_000.0, 0.93, 44.0, 0.7),
                result(33_000.0, 0.932, 42.0, 1.2),
            ),
            run(
                "64MiB",
                "mysql56",
                1,
                result(16_000.0, 0.95, 60.0, 60.0),
                result(50_000.0, 0.95, 60.0, 60.0),
            ),
            run(
                "64MiB",
                "percona56",
                1,
                result(47_000.0, 0.95, 50.0, 0.2),
                result(46_000.0, 0.95, 50.0, 0.2),
            ),
        ];
        let c = cells(&runs);
        assert_eq!(c.len(), 4);
        let f = c[0].figures[0];
        let (m, (mean, min, max), replay, ok) = (f.metric, f.engine, f.replay, f.within);
        assert_eq!(m, Metric::Nopm);
        assert_eq!((mean, min, max, replay), (10_000.0, 8_000.0, 12_000.0, 5_000.0));
        assert_eq!(ok, Some(false));
        assert!(
            c[1].figures.iter().all(|f| f.within != Some(false)),
            "percona56 at 32 MiB is within"
        );
        let r = rankings(&c);
        assert_eq!(r[0].1, r[0].2, "32 MiB: same order");
        assert_ne!(r[1].1, r[1].2, "64 MiB: mysql56 passes percona56 in the replay");
        let report = FidelityReport {
            scale: FidelityScale::new(false),
            seed: 1,
            device: "calibrated:x#h".into(),
            runs,
            files: vec![],
        };
        let text = report_text(&report);
        assert!(text.contains("FAIL"), "{text}");
        assert!(text.contains("ranking by mean NOPM at 32MiB: same"), "{text}");
        assert!(text.contains("ranking by mean NOPM at 64MiB: DIFFERENT"), "{text}");
        assert!(text.contains("10000 (8000-12000) / 5000 (-50 %) FAIL"), "{text}");
        // Each run's own line, with where the policy ended in each shell.
        assert!(
            text.contains("32MiB mysql56 run 2: NOPM 12000 / 5000; core wait - / -"),
            "{text}"
        );
        assert!(
            text.contains("  engine: p_scan=1024\n  replay: p_scan=2048\n"),
            "{text}"
        );
        let csv = runs_csv_text(&report.runs, 1);
        assert!(csv.contains("engine_final_parameters"), "{csv}");
        assert!(csv.contains("p_scan=2048"), "{csv}");
    }

    #[test]
    fn the_default_scale_is_interleaved_repeats_of_the_whole_grid() {
        let d = FidelityScale::new(false);
        assert_eq!((d.repeats, d.runs()), (2, 16));
        assert!(d.seconds() <= 15 * 60, "{}", d.seconds());
        let f = FidelityScale::new(true);
        assert_eq!((f.repeats, f.warmup.as_secs(), f.duration.as_secs()), (3, 30, 120));
    }

    /// The whole path at [`FidelityScale::smoke`] (needs a disk; run by
    /// hand: `cargo test -p flushwise-lab fidelity_smoke -- --ignored`).
    #[test]
    #[ignore]
    fn fidelity_smoke() {
        let dir = std::env::temp_dir().join(format!("flushwise-fidelity-smoke-{}", std::process::id()));
        let report = run(
            &FidelityScale::smoke(),
            1,
            &dir.join("data"),
            &dir.join("out"),
            &mut |l| eprintln!("{l}"),
        )
        .unwrap();
        eprintln!("{}", report_text(&report));
        assert_eq!(report.runs.len(), 1);
        assert!(report.runs[0].engine.transactions > 0 && report.runs[0].replay.transactions > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
