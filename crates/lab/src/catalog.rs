//! The lab's catalog: every figure and table of papers 000, 001 and 002
//! that shows measured or simulated results, as data.
//!
//! An [`Entry`] names what it reproduces (paper, figure or table), the
//! [`Study`] whose runs it draws (several entries share one: Lee et al.
//! Figures 2-4 are three views of Experiment 1 on SSDs), how it is drawn
//! ([`View`]), the paper's own values where the text gives them
//! ([`PaperPoint`]), and the paper's claims as checks ([`Claim`]) from
//! which the report computes a verdict. Nothing here runs anything: the
//! runner and the drawing are [`crate::figures`].
//!
//! Invariants: every entry's study is in [`STUDIES`]; every series an
//! entry names is a series of its study (tested); a paper value is put
//! beside ours only where the units compare (percentages, ratios), never a
//! paper-scale TPM beside a scaled one.
//!
//! The paper numbers come from the texts in `shared/papers/` (line numbers
//! there): 000 §5.2 (Figures 2-9), 001's two blocks of averages, 002 §5-§8
//! (Figures 4-19, Tables 4-8).

use flushwise_core::policy::PolicySpec;
use flushwise_sim::{CpuCosts, SimConfig, WorkloadSpec};

use crate::experiment::{self, clamp_pool, wang_config, GridRun};

/// One run of a study: its series label and x value.
#[derive(Clone, Debug)]
pub struct StudyRun {
    pub series: String,
    /// The varied parameter's value (0 when a study varies nothing but the
    /// series).
    pub x: f64,
    pub config: SimConfig,
}

/// A set of runs several entries draw from.
#[derive(Clone, Debug)]
pub struct Study {
    pub name: &'static str,
    /// The scale, as printed and written to the CSV.
    pub scale: String,
    /// Label of the x axis of by-x views (with its unit).
    pub x_label: &'static str,
    pub runs: Vec<StudyRun>,
    pub notes: Vec<String>,
}

/// A quantity of a run: its measured-window summary or its value per
/// report interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// New-Order transactions per minute.
    Nopm,
    /// Synchronous writes, % of all writes.
    SyncWritePct,
    /// Reads and writes per transaction.
    IoPerTxn,
    /// Dirty pages, % of the pool.
    DirtyPct,
    /// Redo checkpoint age, MiB.
    CheckpointAgeMib,
    /// A policy parameter's value (e.g. `aiop`).
    Param(&'static str),
}

impl Metric {
    /// Axis label, with the unit.
    pub fn label(self) -> String {
        match self {
            Metric::Nopm => "NOPM (New-Order txn / min)".into(),
            Metric::SyncWritePct => "synchronous writes (% of writes)".into(),
            Metric::IoPerTxn => "I/O operations per transaction".into(),
            Metric::DirtyPct => "dirty pages (% of the pool)".into(),
            Metric::CheckpointAgeMib => "checkpoint age (MiB)".into(),
            Metric::Param(name) => format!("{name} (policy parameter)"),
        }
    }

    /// Column name in CSV and tables.
    pub fn column(self) -> String {
        match self {
            Metric::Nopm => "nopm".into(),
            Metric::SyncWritePct => "sync_write_pct".into(),
            Metric::IoPerTxn => "io_per_txn".into(),
            Metric::DirtyPct => "dirty_pct".into(),
            Metric::CheckpointAgeMib => "checkpoint_age_mib".into(),
            Metric::Param(name) => format!("param_{name}"),
        }
    }
}

/// A panel of a time view.
#[derive(Clone, Copy, Debug)]
pub struct TimePanel {
    pub title: &'static str,
    pub metric: Metric,
    /// The series drawn; empty: all of the study's.
    pub series: &'static [&'static str],
}

/// How an entry is drawn.
#[derive(Clone, Copy, Debug)]
pub enum View {
    /// One panel per metric: its measured-window value by the study's x,
    /// one line per series, or, with `one_line`, every run on one line of
    /// that name (a study whose series are the x values: 2 cleaners, 50
    /// cleaners, ...).
    ByX {
        metrics: &'static [Metric],
        one_line: Option<&'static str>,
    },
    /// Panels of per-interval values over time since the run began
    /// (warm-up included: the papers' curves start at an empty pool).
    OverTime { panels: &'static [TimePanel] },
    /// Reads, asynchronous and synchronous writes per second over time, for
    /// one series (Wang & Bunt's "I/O activities"), and its dirty pages.
    Io { series: &'static str },
    /// Pages in the pool over time for one series: dirty, clean and free
    /// (Wang & Bunt Figure 8), and the throughput beside them.
    Pages { series: &'static str },
    /// Bars: each series' measured NOPM over `baseline`'s, ours beside the
    /// paper's ratio (a table of averages).
    Averages {
        baseline: &'static str,
        paper: &'static [(&'static str, f64)],
    },
}

/// A value the paper gives, drawn beside ours: the paper's point `at` the
/// study's x values (by index; `None`: every x), or, for time views, a
/// horizontal reference.
#[derive(Clone, Copy, Debug)]
pub struct PaperPoint {
    pub series: &'static str,
    pub metric: Metric,
    pub at: Option<usize>,
    pub value: f64,
}

/// A claim of the paper, checked against our runs (measured-window values).
#[derive(Clone, Copy, Debug)]
pub enum Claim {
    /// `num / den` of `metric` lies in `lo..=hi` at every x (for "up to"
    /// claims `lo` is 1.0 and the check is on the largest ratio).
    Ratio {
        text: &'static str,
        metric: Metric,
        num: &'static str,
        den: &'static str,
        lo: f64,
        hi: f64,
    },
    /// `series`' `metric` is at most `bound` at every x.
    AtMost {
        text: &'static str,
        metric: Metric,
        series: &'static str,
        bound: f64,
    },
    /// `series`' `metric` lies in `lo..=hi` (over the x values).
    Within {
        text: &'static str,
        metric: Metric,
        series: &'static str,
        lo: f64,
        hi: f64,
    },
}

/// One entry of `flushwise lab list`.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub name: &'static str,
    /// Paper and figure or table, e.g. "Lee et al. (000) Figure 2".
    pub reproduces: &'static str,
    pub title: &'static str,
    pub study: &'static str,
    pub view: View,
    /// The paper's claim in our words, for the report.
    pub claim: &'static str,
    pub paper: &'static [PaperPoint],
    pub claims: &'static [Claim],
}

impl Entry {
    /// Whether the entry's study runs on the real engine (the command line
    /// runs it: it needs a prepared database).
    pub fn on_engine(&self) -> bool {
        self.study.starts_with("engine-")
    }
}

/// One run of an engine study: TPC-C on the real engine, on this machine's
/// disk, one policy at one pool size.
#[derive(Clone, Debug)]
pub struct EngineRun {
    pub series: String,
    pub x: f64,
    /// The policy (`name:key=value,...`).
    pub policy: String,
    pub buffer_pool_bytes: u64,
    pub doublewrite: bool,
}

/// A set of engine runs on one prepared database.
#[derive(Clone, Debug)]
pub struct EngineStudy {
    pub name: &'static str,
    pub scale: String,
    pub x_label: &'static str,
    pub warehouses: u32,
    pub connections: u32,
    pub redo_bytes: u64,
    /// `--warmup`, `--duration` and `--report-interval` of each run.
    pub warmup: &'static str,
    pub duration: &'static str,
    pub report_interval: &'static str,
    pub runs: Vec<EngineRun>,
    pub notes: Vec<String>,
}

const MIB_BYTES: u64 = 1 << 20;

/// The engine's Lee et al. Experiment 1: 10 warehouses (916 MiB of data
/// pages), 20 connections, the redo log 16% of the data (144 MiB) as the
/// paper's 16 GiB for ~100 GB, pools of 2, 4 and 8% of the data (18, 36,
/// 72 MiB: the paper's 2, 4 and 8 GB of ~100 GB; `--full` adds 1%, 9 MiB)
/// on this machine's disk with O_DIRECT. Runs are short at the default
/// scale (15 s warm-up, 30 s measured): engine runs on this disk move
/// 10-20% from run to run, so the figure shows the direction, and `--full`
/// (2 + 3 minutes) the numbers.
fn engine_lee_exp1(full: bool) -> EngineStudy {
    let pools: &[u64] = if full { &[9, 18, 36, 72] } else { &[18, 36, 72] };
    let mut runs = Vec::new();
    for &mib in pools {
        for policy in ["mysql56", "percona56", "self-tuning", "flushwise"] {
            runs.push(EngineRun {
                series: policy.to_string(),
                x: mib as f64,
                policy: policy.to_string(),
                buffer_pool_bytes: mib * MIB_BYTES,
                doublewrite: true,
            });
        }
    }
    let (warmup, duration) = if full { ("2m", "3m") } else { ("15s", "30s") };
    EngineStudy {
        name: "engine-lee-exp1",
        scale: format!(
            "{}: engine, 10 warehouses (916 MiB of data pages), 20 connections, redo 144 MiB, pools {} MiB \
             (1-8% of the data as the paper's 1-8 GB of ~100 GB), warm-up {warmup}, measured {duration}, \
             this machine's disk (O_DIRECT)",
            if full {
                "paper ratios (--full)"
            } else {
                "scaled default"
            },
            pools.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
        ),
        x_label: "buffer pool (MiB)",
        warehouses: 10,
        connections: 20,
        redo_bytes: 144 * MIB_BYTES,
        warmup,
        duration,
        report_interval: "5s",
        runs,
        notes: vec!["engine runs on this disk vary 10-20% from run to run; one run per point".into()],
    }
}

/// The engine's 001: adaptive_flushing against adaptive_checkpoint reflex
/// and estimate, doublewrite on and off, from a cold start with a pool
/// that holds the data (the post's 16 GiB pool for ~10 GB), redo 128 MiB
/// (the post's 1 GiB for ~10 GB: 14% of our 916 MiB), 16 connections, `innodb_io_capacity`
/// 4000 (the policies' default, the post's value).
fn engine_001(full: bool) -> EngineStudy {
    let mut runs = Vec::new();
    for (dw, suffix) in [(false, "doublewrite off"), (true, "doublewrite on")] {
        for (label, policy) in [
            ("flushing", "innodb-adaptive-flushing"),
            ("reflex", "adaptive-checkpoint-reflex"),
            ("estimate", "adaptive-checkpoint-estimate"),
        ] {
            runs.push(EngineRun {
                series: format!("{label}, {suffix}"),
                x: 0.0,
                policy: policy.to_string(),
                buffer_pool_bytes: 1536 * MIB_BYTES,
                doublewrite: dw,
            });
        }
    }
    let (warmup, duration) = if full { ("20m", "10m") } else { ("30s", "20s") };
    EngineStudy {
        name: "engine-001",
        scale: format!(
            "{}: engine, 10 warehouses (916 MiB of data pages) in a 1.5 GiB pool from a cold start, redo 128 MiB, \
             16 connections, warm-up {warmup} then measured {duration} (the post: 1200 s, then 600 s), \
             this machine's disk (O_DIRECT)",
            if full {
                "the post's times (--full)"
            } else {
                "scaled default"
            }
        ),
        x_label: "",
        warehouses: 10,
        connections: 16,
        redo_bytes: 128 * MIB_BYTES,
        warmup,
        duration,
        report_interval: "5s",
        runs,
        notes: vec![
            "the post's `none` series (neither adaptive method) is not modelled".into(),
            "engine runs on this disk vary 10-20% from run to run; one run per series".into(),
        ],
    }
}

/// The engine studies, by name.
/// Builds an engine study at the paper's ratios (`--full`) or scaled.
pub type EngineStudyBuilder = fn(bool) -> EngineStudy;

pub const ENGINE_STUDIES: &[(&str, EngineStudyBuilder)] =
    &[("engine-lee-exp1", engine_lee_exp1), ("engine-001", engine_001)];

/// Builds the engine study named `name`.
pub fn engine_study(name: &str, full: bool) -> Result<EngineStudy, String> {
    ENGINE_STUDIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, build)| build(full))
        .ok_or_else(|| format!("no engine study named {name}"))
}

/// The study builders, by name.
/// Builds a simulator study at paper scale (`--full`) or scaled, for a seed.
pub type StudyBuilder = fn(bool, u64) -> Result<Study, String>;

pub const STUDIES: &[(&str, StudyBuilder)] = &[
    ("lee-exp1-ssd", |full, seed| {
        lee("lee-exp1-ssd", "000-exp1-ssd", full, seed)
    }),
    ("lee-exp1-hdd", |full, seed| {
        lee("lee-exp1-hdd", "000-exp1-hdd", full, seed)
    }),
    ("lee-exp2", |full, seed| lee("lee-exp2", "000-exp2", full, seed)),
    ("lee-exp3", |full, seed| lee("lee-exp3", "000-exp3", full, seed)),
    ("percona-001", percona_001),
    ("wang-speed", wang_speed),
    ("wang-cleaners", wang_cleaners),
    ("wang-aiop", wang_aiop),
    ("wang-small", wang_small),
    ("wang-medium", wang_medium),
];

/// Builds the study named `name`.
pub fn study(name: &str, full: bool, seed: u64) -> Result<Study, String> {
    let (_, build) = STUDIES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| format!("no study named {name}"))?;
    build(full, seed)
}

fn lee(name: &'static str, grid: &str, full: bool, seed: u64) -> Result<Study, String> {
    let (scale, runs, notes) = experiment::grid_runs(grid, full, seed)?;
    let x_label = match grid {
        "000-exp2" => "database size (warehouses)",
        "000-exp3" => "database connections",
        _ => "buffer pool (MiB)",
    };
    let runs = runs
        .into_iter()
        .map(|GridRun { label, config }| {
            let x = match (grid, &config.workload) {
                ("000-exp2", WorkloadSpec::Tpcc { warehouses, .. }) => f64::from(*warehouses),
                ("000-exp3", _) => f64::from(config.connections),
                _ => config.buffer_pool_bytes as f64 / (1u64 << 20) as f64,
            };
            StudyRun {
                series: label.to_string(),
                x,
                config,
            }
        })
        .collect();
    Ok(Study {
        name,
        scale,
        x_label,
        runs,
        notes,
    })
}

fn with_policy(config: &SimConfig, policy: &str) -> Result<SimConfig, String> {
    Ok(SimConfig {
        policy: PolicySpec::parse(policy)?,
        ..config.clone()
    })
}

/// Runs of `config` under each (series label, policy) at x = 0.
fn series_runs(config: &SimConfig, series: &[(&str, &str)]) -> Result<Vec<StudyRun>, String> {
    series
        .iter()
        .map(|(label, policy)| {
            Ok(StudyRun {
                series: (*label).to_string(),
                x: 0.0,
                config: with_policy(config, policy)?,
            })
        })
        .collect()
}

/// 001: the InnoDB Plugin's `innodb_adaptive_flushing` against Percona's
/// `adaptive_checkpoint` reflex and estimate, doublewrite on and off.
///
/// The post's setup: 100 warehouses (~10 GB), 16 sessions, a 16 GiB pool
/// (the data fits: the run starts cold and ends in memory), 2 x 512 MiB of
/// redo, `innodb_io_capacity` 4000, 30 minutes from startup. Scaled: the
/// database, pool and redo divided by 20 and 10 simulated minutes
/// (`--full`: 30), averaged over the last third as the post's averages
/// are (1200-1800 s). The device is our choice: the post names only a
/// "local RAID". On a flash device (the Samsung 850 PRO) every policy ran
/// CPU-bound at the same NOPM (measured: 38,218 NOPM for all six runs,
/// data in memory), so flushing could not matter; on a disk (the WD 1 TB
/// 7200 rpm) writes compete with reads, the regime the post's differences
/// come from.
/// The post's fourth series, `none` (neither adaptive), is not one of our
/// policies and is left out.
fn percona_001(full: bool, seed: u64) -> Result<Study, String> {
    let divisor: u64 = if full { 1 } else { 20 };
    let minutes: u64 = if full { 30 } else { 10 };
    let mut base = experiment::lee_base(
        100 / divisor,
        (16 << 30) / divisor,
        (1 << 30) / divisor,
        "wd-1tb-7200",
        seed,
    );
    base.connections = 16;
    // The post averages the last third (1200-1800 s of 1800 s): the first
    // two thirds are our warm-up, so the measured window is that third.
    let run_us = minutes * 60_000_000;
    base.warmup_us = run_us / 3 * 2;
    base.duration_us = run_us / 3;
    base.report_interval_us = run_us / 60;
    let mut notes: Vec<String> = clamp_pool(&mut base).into_iter().collect();
    notes.push("the post's `none` series (neither adaptive method) is not modelled".into());
    let mut runs = Vec::new();
    for (dw, suffix) in [(false, "doublewrite off"), (true, "doublewrite on")] {
        let config = SimConfig {
            doublewrite: dw,
            ..base.clone()
        };
        for (label, policy) in [
            ("flushing", "innodb-adaptive-flushing"),
            ("reflex", "adaptive-checkpoint-reflex"),
            ("estimate", "adaptive-checkpoint-estimate"),
        ] {
            runs.push(StudyRun {
                series: format!("{label}, {suffix}"),
                x: 0.0,
                config: with_policy(&config, policy)?,
            });
        }
    }
    Ok(Study {
        name: "percona-001",
        scale: format!(
            "{}: 100/{divisor} warehouses, pool and redo divided by {divisor}, 16 sessions, \
             {minutes} simulated minutes from a cold start",
            if full { "paper scale (--full)" } else { "scaled default" }
        ),
        x_label: "",
        runs,
        notes,
    })
}

/// 002 Figures 5-7: the default system, a CPU ten times faster and disks
/// five times faster (§5.3).
fn wang_speed(full: bool, seed: u64) -> Result<Study, String> {
    let (base, scale) = wang_config(full, seed, 50, 1, "db2-table3");
    let table3 = CpuCosts::db2_table3();
    let fast_cpu = SimConfig {
        // Table 3's Fix 20 and Unfix 16 units (30 and 24 us) over 10, to
        // the microsecond: 3 and 2 us (2.4 rounds down).
        costs: CpuCosts {
            fix_us: table3.fix_us / 10,
            unfix_us: table3.unfix_us / 10,
            txn_us: table3.txn_us / 10,
            ..table3
        },
        ..base.clone()
    };
    let fast_disk = SimConfig {
        data_device: "db2-table3-disk5x".into(),
        log_device: "db2-table3-disk5x".into(),
        ..base.clone()
    };
    let mut runs = series_runs(&base, &[("original parameters", "db2")])?;
    runs.extend(series_runs(&fast_cpu, &[("CPU 10x faster", "db2")])?);
    runs.extend(series_runs(&fast_disk, &[("disk 5x faster", "db2")])?);
    Ok(Study {
        name: "wang-speed",
        scale,
        x_label: "",
        runs,
        notes: vec!["faster CPU: Fix 3 us and Unfix 2 us (Table 3's 30 and 24 us over 10, rounded down)".into()],
    })
}

/// The cleaner counts of 002 Figure 12 (the paper names 2 and 50, and a
/// drop past 50).
const CLEANER_COUNTS: [u32; 8] = [1, 2, 4, 8, 16, 32, 50, 100];

/// 002 Figures 8-12: DB2's page cleaners on the default system, 1 to 100
/// cleaners (the default is 2).
fn wang_cleaners(full: bool, seed: u64) -> Result<Study, String> {
    let (base, scale) = wang_config(full, seed, 50, 1, "db2-table3");
    let mut runs = Vec::new();
    for n in CLEANER_COUNTS {
        runs.push(StudyRun {
            series: format!("{n} cleaners"),
            x: f64::from(n),
            config: with_policy(&base, &format!("db2:cleaners={n}"))?,
        });
    }
    Ok(Study {
        name: "wang-cleaners",
        scale,
        x_label: "page cleaners",
        runs,
        notes: Vec::new(),
    })
}

/// 002 Figures 13-15 and Table 4: the old algorithm with 2 and 50 cleaners
/// against AioP (δ = 7.5, I = 100 ms), the configurations of
/// `sim experiment 002-table4`.
fn wang_aiop(full: bool, seed: u64) -> Result<Study, String> {
    let (base, scale) = wang_config(full, seed, 50, 1, "db2-table3");
    let runs = series_runs(
        &base,
        &[
            ("old algorithm (2 cleaners)", "db2"),
            ("old algorithm (50 cleaners)", "db2:cleaners=50"),
            ("self-tuning (AioP)", "db2-aiop"),
        ],
    )?;
    Ok(Study {
        name: "wang-aiop",
        scale,
        x_label: "",
        runs,
        notes: Vec::new(),
    })
}

/// 002 §8.2: the small system (50 warehouses on 7 disks), the old
/// algorithm with 2, 16 and 50 cleaners and AioP with one cleaner, δs = 0,
/// I = 100 ms and four (δd↑, δd↓) pairs.
fn wang_small(full: bool, seed: u64) -> Result<Study, String> {
    let (base, scale) = wang_config(full, seed, 50, 1, "db2-small");
    let runs = series_runs(
        &base,
        &[
            ("50 cleaners", "db2:cleaners=50"),
            ("16 cleaners (baseline)", "db2:cleaners=16"),
            ("2 cleaners", "db2"),
            (
                "(20, 20)",
                "db2-aiop:delta_dirty_up=20,delta_dirty_down=20,delta_sync=0",
            ),
            ("(1, 2)", "db2-aiop:delta_dirty_up=1,delta_dirty_down=2,delta_sync=0"),
            ("(3, 6)", "db2-aiop:delta_dirty_up=3,delta_dirty_down=6,delta_sync=0"),
            (
                "(10, 10)",
                "db2-aiop:delta_dirty_up=10,delta_dirty_down=10,delta_sync=0",
            ),
        ],
    )?;
    Ok(Study {
        name: "wang-small",
        scale,
        x_label: "",
        runs,
        notes: vec![
            "the paper measured a real DB2 7.1 here; we simulate it with Table 3's disk times on 7 disks".into(),
        ],
    })
}

/// 002 §8.3: the medium system (300 warehouses on 70 disks; the pool and
/// redo per warehouse of the 50-warehouse system), the old algorithm with
/// 2, 16 and 70 cleaners and AioP with (20, 20) and (10, 10).
fn wang_medium(full: bool, seed: u64) -> Result<Study, String> {
    let (base, scale) = wang_config(full, seed, 300, 1, "db2-medium");
    let runs = series_runs(
        &base,
        &[
            ("70 cleaners", "db2:cleaners=70"),
            ("16 cleaners (baseline)", "db2:cleaners=16"),
            ("2 cleaners", "db2"),
            (
                "(20, 20)",
                "db2-aiop:delta_dirty_up=20,delta_dirty_down=20,delta_sync=0",
            ),
            (
                "(10, 10)",
                "db2-aiop:delta_dirty_up=10,delta_dirty_down=10,delta_sync=0",
            ),
        ],
    )?;
    Ok(Study {
        name: "wang-medium",
        scale,
        x_label: "",
        runs,
        notes: vec![
            "the paper measured a real DB2 7.1 here; we simulate it with Table 3's disk times on 70 disks".into(),
        ],
    })
}

const LEE_SSD_NOPM_CLAIMS: &[Claim] = &[
    Claim::Ratio {
        text: "self-tuning is 1.9-2.1x the naive (MySQL 5.6) algorithm at every pool",
        metric: Metric::Nopm,
        num: "self-tuning",
        den: "mysql56",
        lo: 1.9,
        hi: 2.1,
    },
    Claim::Ratio {
        text: "self-tuning is 1.2-1.5x Percona's at every pool",
        metric: Metric::Nopm,
        num: "self-tuning",
        den: "percona56",
        lo: 1.2,
        hi: 1.5,
    },
];

const LEE_SSD_SYNC_PAPER: &[PaperPoint] = &[
    PaperPoint {
        series: "percona56",
        metric: Metric::SyncWritePct,
        at: None,
        value: 0.0,
    },
    PaperPoint {
        series: "self-tuning",
        metric: Metric::SyncWritePct,
        at: None,
        value: 0.04,
    },
];

const LEE_SSD_SYNC_CLAIMS: &[Claim] = &[
    Claim::Within {
        text: "MySQL 5.6: 8.9-9.7% synchronous writes",
        metric: Metric::SyncWritePct,
        series: "mysql56",
        lo: 8.9,
        hi: 9.7,
    },
    Claim::AtMost {
        text: "self-tuning: at most 0.04% synchronous writes",
        metric: Metric::SyncWritePct,
        series: "self-tuning",
        bound: 0.04,
    },
    Claim::AtMost {
        text: "Percona: no synchronous writes",
        metric: Metric::SyncWritePct,
        series: "percona56",
        bound: 0.0,
    },
];

const LEE_SSD_IO_CLAIMS: &[Claim] = &[
    Claim::Ratio {
        text: "Percona does more I/O per transaction than self-tuning",
        metric: Metric::IoPerTxn,
        num: "percona56",
        den: "self-tuning",
        lo: 1.0,
        hi: f64::INFINITY,
    },
    Claim::Ratio {
        text: "self-tuning does more I/O per transaction than MySQL 5.6",
        metric: Metric::IoPerTxn,
        num: "self-tuning",
        den: "mysql56",
        lo: 1.0,
        hi: f64::INFINITY,
    },
];

const PERCONA_001_PANELS: &[TimePanel] = &[
    TimePanel {
        title: "innodb_doublewrite = false",
        metric: Metric::Nopm,
        series: &[
            "flushing, doublewrite off",
            "reflex, doublewrite off",
            "estimate, doublewrite off",
        ],
    },
    TimePanel {
        title: "innodb_doublewrite = true",
        metric: Metric::Nopm,
        series: &[
            "flushing, doublewrite on",
            "reflex, doublewrite on",
            "estimate, doublewrite on",
        ],
    },
];

const PERCONA_001_CLAIMS: &[Claim] = &[
    Claim::Ratio {
        text: "doublewrite on: flushing / estimate = 0.77 (5090.12 / 6609.9)",
        metric: Metric::Nopm,
        num: "flushing, doublewrite on",
        den: "estimate, doublewrite on",
        lo: 0.77,
        hi: 0.77,
    },
    Claim::Ratio {
        text: "doublewrite off: flushing / estimate = 1.01 (6655.92 / 6575.88)",
        metric: Metric::Nopm,
        num: "flushing, doublewrite off",
        den: "estimate, doublewrite off",
        lo: 1.01,
        hi: 1.01,
    },
    Claim::Ratio {
        text: "flushing loses to doublewrite: on / off = 0.76 (5090.12 / 6655.92)",
        metric: Metric::Nopm,
        num: "flushing, doublewrite on",
        den: "flushing, doublewrite off",
        lo: 0.76,
        hi: 0.76,
    },
];

const PERCONA_001_AVERAGES: &[(&str, f64)] = &[
    ("flushing, doublewrite off", 6655.92 / 6575.88),
    ("reflex, doublewrite off", 6481.0 / 6575.88),
    ("estimate, doublewrite off", 1.0),
    ("flushing, doublewrite on", 5090.12 / 6575.88),
    ("reflex, doublewrite on", 6871.9 / 6575.88),
    ("estimate, doublewrite on", 6609.9 / 6575.88),
];

const PERCONA_001_AVERAGE_CLAIMS: &[Claim] = &[Claim::Ratio {
    text: "reflex with doublewrite / reflex without = 1.06 (6871.9 / 6481)",
    metric: Metric::Nopm,
    num: "reflex, doublewrite on",
    den: "reflex, doublewrite off",
    lo: 1.06,
    hi: 1.06,
}];

/// The catalog, in report order.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "000-fig2",
        reproduces: "Lee et al. (000) Figure 2",
        title: "TPM by buffer pool size, TPC-C on SSDs",
        study: "lee-exp1-ssd",
        view: View::ByX {
            metrics: &[Metric::Nopm],
            one_line: None,
        },
        claim: "The self-tuning algorithm improves throughput 1.9-2.1x over MySQL 5.6 and 1.2-1.5x over Percona at every pool size.",
        paper: &[],
        claims: LEE_SSD_NOPM_CLAIMS,
    },
    Entry {
        name: "000-fig3",
        reproduces: "Lee et al. (000) Figure 3",
        title: "Synchronous writes by buffer pool size, TPC-C on SSDs",
        study: "lee-exp1-ssd",
        view: View::ByX {
            metrics: &[Metric::SyncWritePct],
            one_line: None,
        },
        claim: "MySQL 5.6 leaves 8.9-9.7% of writes to user threads; self-tuning at most 0.04%; Percona none.",
        paper: LEE_SSD_SYNC_PAPER,
        claims: LEE_SSD_SYNC_CLAIMS,
    },
    Entry {
        name: "000-fig4",
        reproduces: "Lee et al. (000) Figure 4",
        title: "I/O operations per transaction by buffer pool size, TPC-C on SSDs",
        study: "lee-exp1-ssd",
        view: View::ByX {
            metrics: &[Metric::IoPerTxn],
            one_line: None,
        },
        claim: "Percona spends the most I/O per transaction, MySQL 5.6 the least; self-tuning lies between.",
        paper: &[],
        claims: LEE_SSD_IO_CLAIMS,
    },
    Entry {
        name: "000-fig5",
        reproduces: "Lee et al. (000) Figure 5",
        title: "TPM by buffer pool size, TPC-C on HDDs",
        study: "lee-exp1-hdd",
        view: View::ByX {
            metrics: &[Metric::Nopm],
            one_line: None,
        },
        claim: "On HDDs self-tuning improves throughput up to 1.3x over MySQL 5.6 and up to 1.2x over Percona.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "self-tuning up to 1.3x MySQL 5.6",
                metric: Metric::Nopm,
                num: "self-tuning",
                den: "mysql56",
                lo: 1.0,
                hi: 1.3,
            },
            Claim::Ratio {
                text: "self-tuning up to 1.2x Percona",
                metric: Metric::Nopm,
                num: "self-tuning",
                den: "percona56",
                lo: 1.0,
                hi: 1.2,
            },
        ],
    },
    Entry {
        name: "000-fig6",
        reproduces: "Lee et al. (000) Figure 6",
        title: "Synchronous writes by buffer pool size, TPC-C on HDDs",
        study: "lee-exp1-hdd",
        view: View::ByX {
            metrics: &[Metric::SyncWritePct],
            one_line: None,
        },
        claim: "On HDDs MySQL 5.6 and Percona have no synchronous writes; self-tuning has 0.52-1.61%.",
        paper: &[
            PaperPoint {
                series: "mysql56",
                metric: Metric::SyncWritePct,
                at: None,
                value: 0.0,
            },
            PaperPoint {
                series: "percona56",
                metric: Metric::SyncWritePct,
                at: None,
                value: 0.0,
            },
        ],
        claims: &[
            Claim::AtMost {
                text: "MySQL 5.6: no synchronous writes",
                metric: Metric::SyncWritePct,
                series: "mysql56",
                bound: 0.0,
            },
            Claim::AtMost {
                text: "Percona: no synchronous writes",
                metric: Metric::SyncWritePct,
                series: "percona56",
                bound: 0.0,
            },
            Claim::Within {
                text: "self-tuning: 0.52-1.61% synchronous writes",
                metric: Metric::SyncWritePct,
                series: "self-tuning",
                lo: 0.52,
                hi: 1.61,
            },
        ],
    },
    Entry {
        name: "000-fig7",
        reproduces: "Lee et al. (000) Figure 7",
        title: "I/O operations per transaction by buffer pool size, TPC-C on HDDs",
        study: "lee-exp1-hdd",
        view: View::ByX {
            metrics: &[Metric::IoPerTxn],
            one_line: None,
        },
        claim: "On HDDs self-tuning does the least I/O per transaction of the three.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "MySQL 5.6 does more I/O per transaction than self-tuning",
                metric: Metric::IoPerTxn,
                num: "mysql56",
                den: "self-tuning",
                lo: 1.0,
                hi: f64::INFINITY,
            },
            Claim::Ratio {
                text: "Percona does more I/O per transaction than self-tuning",
                metric: Metric::IoPerTxn,
                num: "percona56",
                den: "self-tuning",
                lo: 1.0,
                hi: f64::INFINITY,
            },
        ],
    },
    Entry {
        name: "000-fig8",
        reproduces: "Lee et al. (000) Figure 8",
        title: "TPM by database size, TPC-C on SSDs",
        study: "lee-exp2",
        view: View::ByX {
            metrics: &[Metric::Nopm],
            one_line: None,
        },
        claim: "At 10 warehouses (data in memory) the three are about equal; as the database grows self-tuning leads.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "self-tuning at least as fast as MySQL 5.6 at every size",
            metric: Metric::Nopm,
            num: "self-tuning",
            den: "mysql56",
            lo: 0.97,
            hi: f64::INFINITY,
        }],
    },
    Entry {
        name: "000-fig9",
        reproduces: "Lee et al. (000) Figure 9",
        title: "TPM by number of connections, TPC-C on SSDs",
        study: "lee-exp3",
        view: View::ByX {
            metrics: &[Metric::Nopm],
            one_line: None,
        },
        claim: "With one connection the three are equal; with more, self-tuning is the fastest.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "self-tuning at least as fast as Percona at every connection count",
            metric: Metric::Nopm,
            num: "self-tuning",
            den: "percona56",
            lo: 0.97,
            hi: f64::INFINITY,
        }],
    },
    Entry {
        name: "001-throughput",
        reproduces: "Percona (001) throughput graphs, doublewrite off and on",
        title: "Throughput over time: adaptive_flushing vs adaptive_checkpoint reflex and estimate",
        study: "percona-001",
        view: View::OverTime {
            panels: PERCONA_001_PANELS,
        },
        claim: "Without doublewrite the three are close (adaptive_flushing slightly ahead); with doublewrite adaptive_flushing flushes too much and falls to ~0.77x estimate, while reflex and estimate keep their throughput.",
        paper: &[],
        claims: PERCONA_001_CLAIMS,
    },
    Entry {
        name: "001-averages",
        reproduces: "Percona (001) averages over 1200-1800 s",
        title: "Average throughput relative to estimate without doublewrite",
        study: "percona-001",
        view: View::Averages {
            baseline: "estimate, doublewrite off",
            paper: PERCONA_001_AVERAGES,
        },
        claim: "The post's two blocks of averages (1200-1800 s): adaptive_flushing with doublewrite is the outlier (0.77x), the rest within 6% of each other.",
        paper: &[],
        claims: PERCONA_001_AVERAGE_CLAIMS,
    },
    Entry {
        name: "001-checkpoint-age",
        reproduces: "Percona (001) oldest-modified age bands (reflex and estimate)",
        title: "Checkpoint age over time, doublewrite on",
        study: "percona-001",
        view: View::OverTime {
            panels: &[
                TimePanel {
                    title: "innodb_doublewrite = false",
                    metric: Metric::CheckpointAgeMib,
                    series: &[
                        "flushing, doublewrite off",
                        "reflex, doublewrite off",
                        "estimate, doublewrite off",
                    ],
                },
                TimePanel {
                    title: "innodb_doublewrite = true",
                    metric: Metric::CheckpointAgeMib,
                    series: &[
                        "flushing, doublewrite on",
                        "reflex, doublewrite on",
                        "estimate, doublewrite on",
                    ],
                },
            ],
        },
        claim: "reflex and estimate do nothing below 50% of the maximum age and flush harder in bands above it; adaptive_flushing never exceeds reflex's strong band. The post shows no age graph: this one shows the mechanism behind its throughput graphs.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "000-fig2-engine",
        reproduces: "Lee et al. (000) Figure 2, on the engine",
        title: "TPM by buffer pool size, TPC-C on the engine (this machine's disk)",
        study: "engine-lee-exp1",
        view: View::ByX {
            metrics: &[Metric::Nopm],
            one_line: None,
        },
        claim: "The self-tuning algorithm improves throughput 1.9-2.1x over MySQL 5.6 and 1.2-1.5x over Percona at every pool size (measured by the paper on MySQL with SSDs).",
        paper: &[],
        claims: LEE_SSD_NOPM_CLAIMS,
    },
    Entry {
        name: "000-fig3-engine",
        reproduces: "Lee et al. (000) Figure 3, on the engine",
        title: "Synchronous writes by buffer pool size, TPC-C on the engine",
        study: "engine-lee-exp1",
        view: View::ByX {
            metrics: &[Metric::SyncWritePct],
            one_line: None,
        },
        claim: "MySQL 5.6 leaves 8.9-9.7% of writes to user threads; self-tuning at most 0.04%; Percona none.",
        paper: LEE_SSD_SYNC_PAPER,
        claims: LEE_SSD_SYNC_CLAIMS,
    },
    Entry {
        name: "000-fig4-engine",
        reproduces: "Lee et al. (000) Figure 4, on the engine",
        title: "I/O operations per transaction by buffer pool size, TPC-C on the engine",
        study: "engine-lee-exp1",
        view: View::ByX {
            metrics: &[Metric::IoPerTxn],
            one_line: None,
        },
        claim: "Percona spends the most I/O per transaction, MySQL 5.6 the least; self-tuning lies between.",
        paper: &[],
        claims: LEE_SSD_IO_CLAIMS,
    },
    Entry {
        name: "001-engine-throughput",
        reproduces: "Percona (001) throughput graphs, on the engine",
        title: "Throughput over time on the engine: adaptive_flushing vs adaptive_checkpoint, doublewrite off and on",
        study: "engine-001",
        view: View::OverTime {
            panels: PERCONA_001_PANELS,
        },
        claim: "Without doublewrite the three are close; with doublewrite adaptive_flushing flushes too much and falls to ~0.77x estimate.",
        paper: &[],
        claims: PERCONA_001_CLAIMS,
    },
    Entry {
        name: "001-engine-averages",
        reproduces: "Percona (001) averages, on the engine",
        title: "Average throughput on the engine relative to estimate without doublewrite",
        study: "engine-001",
        view: View::Averages {
            baseline: "estimate, doublewrite off",
            paper: PERCONA_001_AVERAGES,
        },
        claim: "adaptive_flushing with doublewrite is the outlier (0.77x); the rest within 6% of each other.",
        paper: &[],
        claims: PERCONA_001_AVERAGE_CLAIMS,
    },
    Entry {
        name: "002-fig4",
        reproduces: "Wang & Bunt (002) Figure 4",
        title: "Throughput of the default DB2 configuration from an empty pool",
        study: "wang-speed",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "simulator (default DB2: 2 cleaners, 60% threshold)",
                metric: Metric::Nopm,
                series: &["original parameters"],
            }],
        },
        claim: "Throughput peaks while the pool fills and falls to a lower stable value once cleaning sets in; the simulator's steady state has 91% dirty pages (the real system 85%).",
        paper: &[PaperPoint {
            series: "original parameters",
            metric: Metric::DirtyPct,
            at: None,
            value: 91.0,
        }],
        claims: &[Claim::Within {
            text: "steady-state dirty pages 85-91% (real system, simulator)",
            metric: Metric::DirtyPct,
            series: "original parameters",
            lo: 85.0,
            hi: 91.0,
        }],
    },
    Entry {
        name: "002-fig5",
        reproduces: "Wang & Bunt (002) Figure 5",
        title: "Throughput with the original parameters (Table 3)",
        study: "wang-speed",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "original parameters",
                metric: Metric::Nopm,
                series: &["original parameters"],
            }],
        },
        claim: "The reference run for Figures 6 and 7: the drop after the pool fills.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "002-fig6",
        reproduces: "Wang & Bunt (002) Figure 6",
        title: "Throughput with a CPU ten times faster",
        study: "wang-speed",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "CPU 10x faster vs original",
                metric: Metric::Nopm,
                series: &["CPU 10x faster", "original parameters"],
            }],
        },
        claim: "With a CPU ten times faster the performance is the same: the system is not CPU bound.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "CPU 10x faster / original = 1.0 (\"the same\")",
            metric: Metric::Nopm,
            num: "CPU 10x faster",
            den: "original parameters",
            lo: 0.95,
            hi: 1.05,
        }],
    },
    Entry {
        name: "002-fig7",
        reproduces: "Wang & Bunt (002) Figure 7",
        title: "Throughput with disks five times faster",
        study: "wang-speed",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "disk 5x faster vs original",
                metric: Metric::Nopm,
                series: &["disk 5x faster", "original parameters"],
            }],
        },
        claim: "With disks five times faster the run finishes in a fifth of the time: the system is I/O bound.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "disk 5x faster / original = 5 (1/5 of the time for the same transactions)",
            metric: Metric::Nopm,
            num: "disk 5x faster",
            den: "original parameters",
            lo: 5.0,
            hi: 5.0,
        }],
    },
    Entry {
        name: "002-fig8",
        reproduces: "Wang & Bunt (002) Figure 8",
        title: "Pages in the buffer pool over time, default configuration",
        study: "wang-cleaners",
        view: View::Pages { series: "2 cleaners" },
        claim: "The pool starts free; dirty and clean pages rise; once it is full dirty pages keep rising, clean ones fall and throughput drops; the steady state has 87% dirty pages.",
        paper: &[PaperPoint {
            series: "2 cleaners",
            metric: Metric::DirtyPct,
            at: None,
            value: 87.0,
        }],
        claims: &[Claim::Within {
            text: "87% of the pool dirty in the steady state",
            metric: Metric::DirtyPct,
            series: "2 cleaners",
            lo: 87.0,
            hi: 87.0,
        }],
    },
    Entry {
        name: "002-fig9",
        reproduces: "Wang & Bunt (002) Figure 9",
        title: "I/O activities of the buffer pool, default configuration (2 cleaners)",
        study: "wang-cleaners",
        view: View::Io { series: "2 cleaners" },
        claim: "The I/O bandwidth is constant and shared by reads, synchronous and asynchronous writes; synchronous writes are many.",
        paper: &[],
        claims: &[Claim::Within {
            text: "synchronous writes are a large share (we read \"high\" as at least 10%)",
            metric: Metric::SyncWritePct,
            series: "2 cleaners",
            lo: 10.0,
            hi: 100.0,
        }],
    },
    Entry {
        name: "002-fig10",
        reproduces: "Wang & Bunt (002) Figure 10",
        title: "Effect of the number of page cleaners on throughput over time",
        study: "wang-cleaners",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "2 vs 50 page cleaners",
                metric: Metric::Nopm,
                series: &["2 cleaners", "50 cleaners"],
            }],
        },
        claim: "With 50 page cleaners the throughput increases.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "50 cleaners faster than 2",
            metric: Metric::Nopm,
            num: "50 cleaners",
            den: "2 cleaners",
            lo: 1.0,
            hi: f64::INFINITY,
        }],
    },
    Entry {
        name: "002-fig11",
        reproduces: "Wang & Bunt (002) Figure 11",
        title: "I/O activities with 50 page cleaners",
        study: "wang-cleaners",
        view: View::Io { series: "50 cleaners" },
        claim: "With 50 cleaners nearly no synchronous writes are left and the dirty pages drop significantly.",
        paper: &[],
        claims: &[
            Claim::AtMost {
                text: "nearly no synchronous writes (we read \"nearly none\" as at most 1%)",
                metric: Metric::SyncWritePct,
                series: "50 cleaners",
                bound: 1.0,
            },
            Claim::Ratio {
                text: "dirty pages drop against 2 cleaners",
                metric: Metric::DirtyPct,
                num: "50 cleaners",
                den: "2 cleaners",
                lo: 0.0,
                hi: 0.97,
            },
        ],
    },
    Entry {
        name: "002-fig12",
        reproduces: "Wang & Bunt (002) Figure 12",
        title: "Effect of multiple page cleaners: throughput, dirty pages and synchronous writes by cleaners",
        study: "wang-cleaners",
        view: View::ByX {
            metrics: &[Metric::Nopm, Metric::DirtyPct, Metric::SyncWritePct],
            one_line: Some("DB2 old algorithm (simulator)"),
        },
        claim: "More cleaners cut both dirty pages and synchronous writes; throughput improves up to 50 cleaners and drops sharply past that (simulator and DB2 test bed alike).",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "100 cleaners slower than 50 (the drop past 50)",
            metric: Metric::Nopm,
            num: "100 cleaners",
            den: "50 cleaners",
            lo: 0.0,
            hi: 0.97,
        }],
    },
    Entry {
        name: "002-fig13",
        reproduces: "Wang & Bunt (002) Figure 13",
        title: "Throughput comparison: old algorithm vs self-tuning (AioP)",
        study: "wang-aiop",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "throughput",
                metric: Metric::Nopm,
                series: &[],
            }],
        },
        claim: "The self-tuning algorithm's throughput is higher than the old algorithm's.",
        paper: &[],
        claims: &[Claim::Ratio {
            text: "AioP faster than the old algorithm with 2 cleaners",
            metric: Metric::Nopm,
            num: "self-tuning (AioP)",
            den: "old algorithm (2 cleaners)",
            lo: 1.0,
            hi: f64::INFINITY,
        }],
    },
    Entry {
        name: "002-fig14",
        reproduces: "Wang & Bunt (002) Figure 14",
        title: "Dirty pages and AioP over time",
        study: "wang-aiop",
        view: View::OverTime {
            panels: &[
                TimePanel {
                    title: "dirty pages",
                    metric: Metric::DirtyPct,
                    series: &["old algorithm (2 cleaners)", "self-tuning (AioP)"],
                },
                TimePanel {
                    title: "AioP (maximum 1)",
                    metric: Metric::Param("aiop"),
                    series: &["self-tuning (AioP)"],
                },
            ],
        },
        claim: "Under self-tuning the dirty pages fall from 91% to 69% of the pool; AioP starts at 0 and moves below its maximum.",
        paper: &[
            PaperPoint {
                series: "old algorithm (2 cleaners)",
                metric: Metric::DirtyPct,
                at: None,
                value: 91.0,
            },
            PaperPoint {
                series: "self-tuning (AioP)",
                metric: Metric::DirtyPct,
                at: None,
                value: 69.0,
            },
        ],
        claims: &[
            Claim::Ratio {
                text: "dirty pages, self-tuning / old = 0.76 (69% / 91%)",
                metric: Metric::DirtyPct,
                num: "self-tuning (AioP)",
                den: "old algorithm (2 cleaners)",
                lo: 69.0 / 91.0,
                hi: 69.0 / 91.0,
            },
            Claim::Within {
                text: "self-tuning: 69% dirty",
                metric: Metric::DirtyPct,
                series: "self-tuning (AioP)",
                lo: 69.0,
                hi: 69.0,
            },
        ],
    },
    Entry {
        name: "002-fig15",
        reproduces: "Wang & Bunt (002) Figure 15",
        title: "I/O activities of the self-tuning algorithm (AioP)",
        study: "wang-aiop",
        view: View::Io {
            series: "self-tuning (AioP)",
        },
        claim: "Compared with Figure 9, the self-tuning algorithm eliminates synchronous writes.",
        paper: &[],
        claims: &[Claim::AtMost {
            text: "no synchronous writes (we allow 0.1%)",
            metric: Metric::SyncWritePct,
            series: "self-tuning (AioP)",
            bound: 0.1,
        }],
    },
    Entry {
        name: "002-table4",
        reproduces: "Wang & Bunt (002) Table 4",
        title: "Average throughput after the drop: old algorithm (2, 50 cleaners) vs self-tuning",
        study: "wang-aiop",
        view: View::Averages {
            baseline: "old algorithm (2 cleaners)",
            paper: &[
                ("old algorithm (2 cleaners)", 1.0),
                ("old algorithm (50 cleaners)", 1669.0 / 1471.2),
                ("self-tuning (AioP)", 1691.6 / 1471.2),
            ],
        },
        claim: "Self-tuning (1691.6) matches the hand-tuned 50 cleaners (1669.0); both are ~15% above the default (1471.2). C.O.V. 0.026 / 0.024 / 0.043.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "self-tuning / 2 cleaners = 1.15",
                metric: Metric::Nopm,
                num: "self-tuning (AioP)",
                den: "old algorithm (2 cleaners)",
                lo: 1.15,
                hi: 1.15,
            },
            Claim::Ratio {
                text: "50 cleaners / 2 cleaners = 1.13",
                metric: Metric::Nopm,
                num: "old algorithm (50 cleaners)",
                den: "old algorithm (2 cleaners)",
                lo: 1.134,
                hi: 1.134,
            },
        ],
    },
    Entry {
        name: "002-fig16",
        reproduces: "Wang & Bunt (002) Figure 16",
        title: "Small system: TPM of the old algorithm (50, 16, 2 cleaners)",
        study: "wang-small",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "small system, old algorithm",
                metric: Metric::Nopm,
                series: &["50 cleaners", "16 cleaners (baseline)", "2 cleaners"],
            }],
        },
        claim: "On the small system 50 cleaners is fastest but varies most; 16 cleaners is the baseline.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "002-table5",
        reproduces: "Wang & Bunt (002) Table 5",
        title: "Small system: average TPM of the old algorithm",
        study: "wang-small",
        view: View::Averages {
            baseline: "16 cleaners (baseline)",
            paper: &[
                ("50 cleaners", 2487.0 / 2280.3),
                ("16 cleaners (baseline)", 1.0),
                ("2 cleaners", 2177.7 / 2280.3),
            ],
        },
        claim: "50 cleaners 1.09x, 2 cleaners 0.96x the 16-cleaner baseline.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "50 / 16 cleaners = 1.09",
                metric: Metric::Nopm,
                num: "50 cleaners",
                den: "16 cleaners (baseline)",
                lo: 1.09,
                hi: 1.09,
            },
            Claim::Ratio {
                text: "2 / 16 cleaners = 0.96",
                metric: Metric::Nopm,
                num: "2 cleaners",
                den: "16 cleaners (baseline)",
                lo: 0.955,
                hi: 0.955,
            },
        ],
    },
    Entry {
        name: "002-fig17",
        reproduces: "Wang & Bunt (002) Figure 17",
        title: "Small system: TPM of the self-tuning algorithm by (δd↑, δd↓)",
        study: "wang-small",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "small system, self-tuning (one cleaner, δs = 0)",
                metric: Metric::Nopm,
                series: &["(20, 20)", "(1, 2)", "(3, 6)", "(10, 10)", "16 cleaners (baseline)"],
            }],
        },
        claim: "Self-tuning beats the baseline whatever its parameters, though more bursty.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "002-table6",
        reproduces: "Wang & Bunt (002) Table 6",
        title: "Small system: average TPM of the self-tuning algorithm",
        study: "wang-small",
        view: View::Averages {
            baseline: "16 cleaners (baseline)",
            paper: &[
                ("(20, 20)", 2554.5 / 2280.3),
                ("(1, 2)", 2506.3 / 2280.3),
                ("(3, 6)", 2497.8 / 2280.3),
                ("(10, 10)", 2478.3 / 2280.3),
                ("16 cleaners (baseline)", 1.0),
            ],
        },
        claim: "Every (δd↑, δd↓) pair gives 1.09-1.12x the baseline: throughput is not sensitive to the parameters.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "(20, 20) / baseline = 1.12",
                metric: Metric::Nopm,
                num: "(20, 20)",
                den: "16 cleaners (baseline)",
                lo: 1.12,
                hi: 1.12,
            },
            Claim::Ratio {
                text: "(10, 10) / baseline = 1.09",
                metric: Metric::Nopm,
                num: "(10, 10)",
                den: "16 cleaners (baseline)",
                lo: 1.087,
                hi: 1.087,
            },
            Claim::Ratio {
                text: "(1, 2) / (20, 20) = 0.98: not sensitive to the parameters",
                metric: Metric::Nopm,
                num: "(1, 2)",
                den: "(20, 20)",
                lo: 2506.3 / 2554.5,
                hi: 2506.3 / 2554.5,
            },
        ],
    },
    Entry {
        name: "002-fig18",
        reproduces: "Wang & Bunt (002) Figure 18",
        title: "Medium system: TPM of the old algorithm (70, 16, 2 cleaners)",
        study: "wang-medium",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "medium system, old algorithm",
                metric: Metric::Nopm,
                series: &["70 cleaners", "16 cleaners (baseline)", "2 cleaners"],
            }],
        },
        claim: "On the medium system 70 and 16 cleaners tie; 2 cleaners is 10% slower.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "002-table7",
        reproduces: "Wang & Bunt (002) Table 7",
        title: "Medium system: average TPM of the old algorithm",
        study: "wang-medium",
        view: View::Averages {
            baseline: "16 cleaners (baseline)",
            paper: &[
                ("70 cleaners", 6458.8 / 6455.4),
                ("16 cleaners (baseline)", 1.0),
                ("2 cleaners", 5804.1 / 6455.4),
            ],
        },
        claim: "70 cleaners 1.00x, 2 cleaners 0.90x the 16-cleaner baseline.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "70 / 16 cleaners = 1.00",
                metric: Metric::Nopm,
                num: "70 cleaners",
                den: "16 cleaners (baseline)",
                lo: 1.0,
                hi: 1.0,
            },
            Claim::Ratio {
                text: "2 / 16 cleaners = 0.90",
                metric: Metric::Nopm,
                num: "2 cleaners",
                den: "16 cleaners (baseline)",
                lo: 0.899,
                hi: 0.899,
            },
        ],
    },
    Entry {
        name: "002-fig19",
        reproduces: "Wang & Bunt (002) Figure 19",
        title: "Medium system: TPM of the self-tuning algorithm",
        study: "wang-medium",
        view: View::OverTime {
            panels: &[TimePanel {
                title: "medium system, self-tuning",
                metric: Metric::Nopm,
                series: &["(20, 20)", "(10, 10)", "16 cleaners (baseline)"],
            }],
        },
        claim: "Under self-tuning the medium system's throughput is comparable to the hand-tuned one.",
        paper: &[],
        claims: &[],
    },
    Entry {
        name: "002-table8",
        reproduces: "Wang & Bunt (002) Table 8",
        title: "Medium system: average TPM of the self-tuning algorithm",
        study: "wang-medium",
        view: View::Averages {
            baseline: "16 cleaners (baseline)",
            paper: &[
                ("16 cleaners (baseline)", 1.0),
                ("(20, 20)", 6383.9 / 6455.4),
                ("(10, 10)", 6373.8 / 6455.4),
            ],
        },
        claim: "(20, 20) and (10, 10) reach 0.99x the hand-tuned baseline.",
        paper: &[],
        claims: &[
            Claim::Ratio {
                text: "(20, 20) / baseline = 0.99",
                metric: Metric::Nopm,
                num: "(20, 20)",
                den: "16 cleaners (baseline)",
                lo: 0.989,
                hi: 0.989,
            },
            Claim::Ratio {
                text: "(10, 10) / baseline = 0.99",
                metric: Metric::Nopm,
                num: "(10, 10)",
                den: "16 cleaners (baseline)",
                lo: 0.987,
                hi: 0.987,
            },
        ],
    },
];

/// The entry named `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every series an entry names, with where it is named.
    fn named_series(e: &Entry) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        match e.view {
            View::ByX { .. } => {}
            View::OverTime { panels } => {
                for p in panels {
                    names.extend(p.series.iter().copied());
                }
            }
            View::Io { series } | View::Pages { series } => names.push(series),
            View::Averages { baseline, paper } => {
                names.push(baseline);
                names.extend(paper.iter().map(|(s, _)| *s));
            }
        }
        names.extend(e.paper.iter().map(|p| p.series));
        for c in e.claims {
            match *c {
                Claim::Ratio { num, den, .. } => names.extend([num, den]),
                Claim::AtMost { series, .. } | Claim::Within { series, .. } => names.push(series),
            }
        }
        names
    }

    #[test]
    fn every_entry_names_only_series_its_study_runs() {
        for e in ENTRIES {
            let series: Vec<String> = if e.on_engine() {
                let s = engine_study(e.study, false).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                s.runs.into_iter().map(|r| r.series).collect()
            } else {
                let s = study(e.study, false, 1).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                s.runs.into_iter().map(|r| r.series).collect()
            };
            for name in named_series(e) {
                assert!(
                    series.iter().any(|r| r == name),
                    "{}: series {name:?} is not in study {}",
                    e.name,
                    e.study
                );
            }
        }
    }

    #[test]
    fn the_catalog_covers_twenty_figures_and_tables_with_unique_names() {
        assert!(ENTRIES.len() >= 20, "{}", ENTRIES.len());
        let mut names: Vec<&str> = ENTRIES.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENTRIES.len(), "duplicate entry names");
        for fig in 2..=9 {
            assert!(entry(&format!("000-fig{fig}")).is_some(), "000 Figure {fig}");
        }
        for fig in 4..=19 {
            assert!(entry(&format!("002-fig{fig}")).is_some(), "002 Figure {fig}");
        }
        for table in 4..=8 {
            assert!(entry(&format!("002-table{table}")).is_some(), "002 Table {table}");
        }
    }

    #[test]
    fn every_study_validates_at_both_scales() {
        for (name, _) in STUDIES {
            for full in [false, true] {
                let s = study(name, full, 7).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(!s.runs.is_empty(), "{name}");
                for r in &s.runs {
                    r.config
                        .validate()
                        .unwrap_or_else(|e| panic!("{name} {}: {e}", r.series));
                    assert_eq!(r.config.seed, 7, "{name}: the seed reaches every run");
                }
            }
        }
    }

    #[test]
    fn engine_studies_name_valid_policies_and_the_papers_pool_ratios() {
        for (name, _) in ENGINE_STUDIES {
            for full in [false, true] {
                let s = engine_study(name, full).unwrap();
                assert!(s.runs.len() >= 6, "{name}");
                for r in &s.runs {
                    PolicySpec::parse(&r.policy).unwrap_or_else(|e| panic!("{name}: {e}"));
                }
            }
        }
        let lee = engine_study("engine-lee-exp1", false).unwrap();
        let pools: std::collections::BTreeSet<u64> = lee.runs.iter().map(|r| r.buffer_pool_bytes >> 20).collect();
        assert!(pools.len() >= 3, "3-4 pool sizes: {pools:?}");
    }

    #[test]
    fn table4_shares_its_runs_with_sim_experiment_002_table4() {
        let ours = study("wang-aiop", false, 1).unwrap();
        let (_, grid, _) = experiment::grid_runs("002-table4", false, 1).unwrap();
        let mut a: Vec<String> = ours.runs.iter().map(|r| r.config.config_hash()).collect();
        let mut b: Vec<String> = grid.iter().map(|r| r.config.config_hash()).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }
}
