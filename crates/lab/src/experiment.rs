//! `sim experiment NAME`: the papers' experiment grids (policies x one varied
//! parameter), at paper scale with `--full` or scaled down by default.
//!
//! Paper scale (papers/000 §5.1 and Table 3; papers/002 §5, §8.1):
//! - 000-exp1-{ssd,hdd}: 1,000 warehouses, 20 connections, pool 1/2/4/8 GiB,
//!   redo 2 x 8 GiB (`innodb_log_file_size` 8G), data and log on Samsung
//!   850 PRO SSDs or WD 1 TB HDDs, warm-up 30 min (SSD) or 2 h (HDD);
//! - 000-exp2: pool 2 GiB, 10/100/1,000 warehouses, SSD;
//! - 000-exp3: 1,000 warehouses, pool 1 GiB, 1/10/100/1,000 connections, SSD;
//! - 002-table4: DB2 with 2 and 50 page cleaners and the AioP algorithm on
//!   Wang & Bunt's constant-time disks (Table 3 times, 9 disks), their CPU
//!   costs and no CPU limit, on a 50-warehouse database (their trace's).
//!
//! Scaled default: warehouses, pools and redo divided by the same factor,
//! so pool/data and redo/pool are the paper's; connections are not scaled
//! (they set the concurrency, not the size). Warm-up and measured time are
//! cut to what fits a few minutes on a 2-core machine (SSD: 10 minutes of
//! warm-up, see `SSD_SCALED_WARMUP_US`); the scale of each
//! experiment is printed with its table and written to its CSV.
//!
//! Policies are named with the registry's syntax (`db2:cleaners=50`); a
//! name the registry rejects is skipped with a note naming the reason, and
//! the rest of the grid runs.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use flushwise_core::policy::PolicySpec;

/// Warm-up of the scaled SSD experiments: 10 simulated minutes (the paper
/// warms up 30). Adaptive flushing needs 30 iterations to form its averages
/// (`innodb_flushing_avg_loops`), and self-tuning raises Pscan by NP_dirty
/// per single-page flush (tens of pages an iteration): at the scaled 205 MiB
/// point Pscan climbs from 1,024 to ~5,500 and synchronous writes stop only
/// after ~200 s (`sim run ... --decisions x.jsonl`, EXPERIMENTS.md), so the
/// former 120 s measured self-tuning before it had converged.
const SSD_SCALED_WARMUP_US: u64 = 600 * SECOND_US;
use flushwise_sim::{CpuCosts, SimConfig, WorkloadSpec};
use flushwise_tpcc_model::{TpccModel, TpccModelConfig};

use crate::render::{self as output, ratio_text, Csv};
use crate::sim_runner as runner;
use crate::COMMIT;

const GIB: u64 = 1 << 30;
const MINUTE_US: u64 = 60_000_000;
const SECOND_US: u64 = 1_000_000;

/// The experiments, with one line each for `list`.
pub const EXPERIMENTS: &[(&str, &str)] = &[
    ("000-exp1-ssd", "Lee et al. Exp. 1: TPC-C NOPM by buffer pool size, SSD"),
    ("000-exp1-hdd", "Lee et al. Exp. 1: TPC-C NOPM by buffer pool size, HDD"),
    (
        "000-exp2",
        "Lee et al. Exp. 2: TPC-C NOPM by database size (warehouses), SSD",
    ),
    ("000-exp3", "Lee et al. Exp. 3: TPC-C NOPM by connections, SSD"),
    (
        "002-table4",
        "Wang & Bunt Table 4: DB2 with 2 / 50 cleaners vs AioP, constant disks",
    ),
];

/// A policy of a grid: the registry name and how tables label it.
struct ExperimentPolicy {
    name: &'static str,
    label: &'static str,
}

/// One value of the varied parameter: its label and base configuration.
struct Point {
    value: String,
    config: SimConfig,
    note: Option<String>,
}

struct Experiment {
    name: &'static str,
    title: &'static str,
    /// Name of the varied parameter (a CSV column).
    varied: &'static str,
    policies: Vec<ExperimentPolicy>,
    points: Vec<Point>,
    /// (numerator label, denominator label) ratios of NOPM to print.
    ratios: Vec<(&'static str, &'static str)>,
    scale: String,
}

const LEE_POLICIES: [ExperimentPolicy; 4] = [
    ExperimentPolicy {
        name: "mysql56",
        label: "mysql56",
    },
    ExperimentPolicy {
        name: "percona56",
        label: "percona56",
    },
    ExperimentPolicy {
        name: "self-tuning",
        label: "self-tuning",
    },
    // Not in the paper: our own policy beside its algorithms (issue #12).
    ExperimentPolicy {
        name: "flushwise",
        label: "flushwise",
    },
];

const LEE_RATIOS: [(&str, &str); 4] = [
    ("self-tuning", "mysql56"),
    ("self-tuning", "percona56"),
    ("flushwise", "mysql56"),
    ("flushwise", "percona56"),
];

/// The scaled defaults, tuned so each experiment takes at most ~5 minutes
/// of wall time on 2 cores (measured; see the CLI's report).
struct Scale {
    /// Warehouses, pools and redo are divided by this.
    divisor: u64,
    warmup_us: u64,
    duration_us: u64,
    report_interval_us: u64,
}

/// Lee et al.'s SSD protocol (§5.1: 30-minute warm-up), at paper scale or
/// divided by 20 with `SSD_SCALED_WARMUP_US` of warm-up.
fn lee_ssd_scale(full: bool) -> Scale {
    if full {
        Scale {
            divisor: 1,
            warmup_us: 30 * MINUTE_US,
            duration_us: 10 * MINUTE_US,
            report_interval_us: MINUTE_US,
        }
    } else {
        Scale {
            divisor: 20,
            warmup_us: SSD_SCALED_WARMUP_US,
            duration_us: 60 * SECOND_US,
            report_interval_us: 2 * SECOND_US,
        }
    }
}

/// Lee et al.'s setup (Table 3) at a size: 20 connections,
/// `innodb_thread_concurrency` 16, 16 KiB pages, data and log each on its own
/// `device`.
pub(crate) fn lee_base(warehouses: u64, pool_bytes: u64, redo_bytes: u64, device: &str, seed: u64) -> SimConfig {
    SimConfig {
        workload: WorkloadSpec::tpcc(warehouses.max(1) as u32),
        connections: 20,
        buffer_pool_bytes: pool_bytes,
        redo_bytes,
        page_size_bytes: 16384,
        data_device: device.into(),
        log_device: device.into(),
        // innodb_thread_concurrency 16 (Table 3); CPU cores as SimConfig's
        // default (the i7-2600K's 4 cores).
        thread_concurrency: 16,
        seed,
        ..SimConfig::default()
    }
}

/// Pool bytes at most the database's size: the simulator refuses a pool
/// larger than the data (Exp. 2's smallest database fits in the pool).
pub(crate) fn clamp_pool(config: &mut SimConfig) -> Option<String> {
    let WorkloadSpec::Tpcc { warehouses, .. } = config.workload else {
        return None;
    };
    let model = TpccModel::new(TpccModelConfig {
        warehouses,
        page_size_bytes: config.page_size_bytes,
        seed: config.seed,
        ..TpccModelConfig::default()
    })
    .ok()?;
    let data_bytes = model.database_pages() * u64::from(config.page_size_bytes);
    (config.buffer_pool_bytes > data_bytes).then(|| {
        let note = format!(
            "pool {} clamped to the database's {} (the simulator refuses a pool larger than the data; \
             the database fits in the pool as in the paper)",
            flushwise_sim::units::format_bytes(config.buffer_pool_bytes),
            flushwise_sim::units::format_bytes(data_bytes)
        );
        config.buffer_pool_bytes = data_bytes;
        note
    })
}

fn apply_time(config: &mut SimConfig, scale: &Scale) {
    config.warmup_us = scale.warmup_us;
    config.duration_us = scale.duration_us;
    config.report_interval_us = scale.report_interval_us;
}

fn scale_text(full: bool, scale: &Scale) -> String {
    format!(
        "{}: warehouses/pool/redo divided by {}, warm-up {} s, measured {} s",
        if full { "paper scale (--full)" } else { "scaled default" },
        scale.divisor,
        scale.warmup_us / SECOND_US,
        scale.duration_us / SECOND_US
    )
}

fn build(name: &str, full: bool, seed: u64) -> Result<Experiment, String> {
    let exp = match name {
        "000-exp1-ssd" | "000-exp1-hdd" => {
            let ssd = name.ends_with("ssd");
            let device = if ssd { "samsung-850-pro" } else { "wd-1tb-7200" };
            let scale = match (full, ssd) {
                (true, true) => lee_ssd_scale(true),
                (true, false) => Scale {
                    divisor: 1,
                    warmup_us: 120 * MINUTE_US,
                    duration_us: 10 * MINUTE_US,
                    report_interval_us: MINUTE_US,
                },
                (false, true) => lee_ssd_scale(false),
                (false, false) => Scale {
                    divisor: 20,
                    // 2 h / 20: HDD runs are cheap to simulate (few I/Os per second).
                    warmup_us: 360 * SECOND_US,
                    duration_us: 600 * SECOND_US,
                    report_interval_us: 60 * SECOND_US,
                },
            };
            let points = [1u64, 2, 4, 8]
                .iter()
                .map(|gib| {
                    let pool = gib * GIB / scale.divisor;
                    let mut config = lee_base(1000 / scale.divisor, pool, 16 * GIB / scale.divisor, device, seed);
                    apply_time(&mut config, &scale);
                    Point {
                        value: flushwise_sim::units::format_bytes(pool),
                        config,
                        note: None,
                    }
                })
                .collect();
            Experiment {
                name: if ssd { "000-exp1-ssd" } else { "000-exp1-hdd" },
                title: if ssd {
                    "Lee et al. Experiment 1 (SSD): NOPM by buffer pool size"
                } else {
                    "Lee et al. Experiment 1 (HDD): NOPM by buffer pool size"
                },
                varied: "buffer_pool",
                policies: LEE_POLICIES.into(),
                points,
                ratios: LEE_RATIOS.into(),
                scale: scale_text(full, &scale),
            }
        }
        "000-exp2" => {
            let scale = lee_ssd_scale(full);
            let points = [10u64, 100, 1000]
                .iter()
                .map(|w| {
                    let warehouses = (w / scale.divisor).max(1);
                    let mut config = lee_base(
                        warehouses,
                        2 * GIB / scale.divisor,
                        16 * GIB / scale.divisor,
                        "samsung-850-pro",
                        seed,
                    );
                    apply_time(&mut config, &scale);
                    let note = clamp_pool(&mut config);
                    Point {
                        value: warehouses.to_string(),
                        config,
                        note,
                    }
                })
                .collect();
            Experiment {
                name: "000-exp2",
                title: "Lee et al. Experiment 2 (SSD): NOPM by database size",
                varied: "warehouses",
                policies: LEE_POLICIES.into(),
                points,
                ratios: LEE_RATIOS.into(),
                scale: format!(
                    "{} (paper: 10/100/1000 warehouses; with the divisor the smallest is rounded up to 1)",
                    scale_text(full, &scale)
                ),
            }
        }
        "000-exp3" => {
            let scale = lee_ssd_scale(full);
            let points = [1u32, 10, 100, 1000]
                .iter()
                .map(|&c| {
                    let mut config = lee_base(
                        1000 / scale.divisor,
                        GIB / scale.divisor,
                        16 * GIB / scale.divisor,
                        "samsung-850-pro",
                        seed,
                    );
                    config.connections = c;
                    apply_time(&mut config, &scale);
                    Point {
                        value: c.to_string(),
                        config,
                        note: None,
                    }
                })
                .collect();
            Experiment {
                name: "000-exp3",
                title: "Lee et al. Experiment 3 (SSD): NOPM by connections",
                varied: "connections",
                policies: LEE_POLICIES.into(),
                points,
                ratios: LEE_RATIOS.into(),
                scale: scale_text(full, &scale),
            }
        }
        "002-table4" => {
            let (config, scale) = wang_config(full, seed, 50, 1, "db2-table3");
            Experiment {
                name: "002-table4",
                title: "Wang & Bunt Table 4: average throughput (NOPM) and C.O.V.",
                varied: "setup",
                policies: vec![
                    ExperimentPolicy {
                        name: "db2",
                        label: "db2 (2 cleaners)",
                    },
                    ExperimentPolicy {
                        name: "db2:cleaners=50",
                        label: "db2 (50 cleaners)",
                    },
                    ExperimentPolicy {
                        name: "db2-aiop",
                        label: "db2-aiop",
                    },
                ],
                points: vec![Point {
                    value: format!("{} warehouses", wang_warehouses(full, 50)),
                    config,
                    note: None,
                }],
                ratios: vec![
                    ("db2 (50 cleaners)", "db2 (2 cleaners)"),
                    ("db2-aiop", "db2 (2 cleaners)"),
                ],
                scale,
            }
        }
        other => {
            let names: Vec<&str> = EXPERIMENTS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "experiment '{other}' is unknown: accepted are {}, list",
                names.join(", ")
            ));
        }
    };
    Ok(exp)
}

/// Wang & Bunt's scale: the paper's 10 + 20 minutes (`--full`), or the
/// database, pool and redo divided by 5 and 4 + 8 minutes.
fn wang_scale(full: bool) -> Scale {
    if full {
        Scale {
            divisor: 1,
            warmup_us: 10 * MINUTE_US,
            duration_us: 20 * MINUTE_US,
            report_interval_us: MINUTE_US,
        }
    } else {
        Scale {
            divisor: 5,
            warmup_us: 240 * SECOND_US,
            duration_us: 480 * SECOND_US,
            report_interval_us: 30 * SECOND_US,
        }
    }
}

/// The warehouses of a paper database of `paper_warehouses` at this scale.
pub(crate) fn wang_warehouses(full: bool, paper_warehouses: u64) -> u64 {
    (paper_warehouses / wang_scale(full).divisor).max(1)
}

/// Wang & Bunt's simulated system (paper 002 §4-§5) for a database of
/// `paper_warehouses`, `pool_gib_per_50_warehouses` GiB of pool and of redo
/// per 50 warehouses, on `device`: Table 3's CPU costs, no CPU limit, 20
/// agents, 16 KiB pages; returns the configuration (policy unset) and its
/// scale's description.
///
/// The paper's trace database has 50 warehouses (§4.2); it gives neither
/// the pool size nor the agent count: 1 GiB (about a fifth of the data)
/// and 20 agents are our choice.
pub(crate) fn wang_config(
    full: bool,
    seed: u64,
    paper_warehouses: u64,
    pool_gib_per_50_warehouses: u64,
    device: &str,
) -> (SimConfig, String) {
    let scale = wang_scale(full);
    let pool = pool_gib_per_50_warehouses * GIB * paper_warehouses / 50 / scale.divisor;
    let mut config = SimConfig {
        workload: WorkloadSpec::tpcc(wang_warehouses(full, paper_warehouses) as u32),
        connections: 20,
        buffer_pool_bytes: pool,
        redo_bytes: pool,
        page_size_bytes: 16384,
        data_device: device.into(),
        log_device: device.into(),
        cpu_cores: 0,
        costs: CpuCosts::db2_table3(),
        seed,
        ..SimConfig::default()
    };
    apply_time(&mut config, &scale);
    (config, scale_text(full, &scale))
}

/// One run of a paper grid, for the lab's figures.
pub(crate) struct GridRun {
    /// The policy as the grid's tables label it.
    pub label: &'static str,
    pub config: SimConfig,
}

/// A paper grid as runs: its scale, the varied parameter's name, the runs
/// (policy set) and the notes of its points.
pub(crate) fn grid_runs(name: &str, full: bool, seed: u64) -> Result<(String, Vec<GridRun>, Vec<String>), String> {
    let exp = build(name, full, seed)?;
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    for point in &exp.points {
        if let Some(note) = &point.note {
            notes.push(format!("{} {}: {note}", exp.varied, point.value));
        }
        for p in &exp.policies {
            let policy = PolicySpec::parse(p.name)?;
            runs.push(GridRun {
                label: p.label,
                config: SimConfig {
                    policy,
                    ..point.config.clone()
                },
            });
        }
    }
    Ok((exp.scale, runs, notes))
}

/// What to run: an experiment by name, at which scale, where to.
#[derive(Clone, Debug)]
pub struct ExperimentRequest {
    pub name: String,
    /// Paper scale instead of the scaled default.
    pub full: bool,
    pub seed: u64,
    /// Runs in parallel (default: the machine's cores).
    pub jobs: Option<usize>,
    /// Directory for `<name>.csv`.
    pub out: PathBuf,
}

fn say(out: &mut dyn Write, text: std::fmt::Arguments<'_>) -> Result<(), String> {
    out.write_fmt(text)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|e| format!("cannot write the report: {e}"))
}

/// Writes every experiment's name, title and scaled-default scale to `out`.
pub fn list(seed: u64, out: &mut dyn Write) -> Result<(), String> {
    for (name, about) in EXPERIMENTS {
        let scaled = build(name, false, seed)?;
        say(out, format_args!("{name:<14}  {about}"))?;
        say(out, format_args!("{:<14}  {}", "", scaled.scale))?;
    }
    Ok(())
}

/// Runs one experiment's grid, writes `<out>/<name>.csv` and its report
/// (setup, one row per run, the papers' ratios, notes) to `out` as it goes.
pub fn run(args: &ExperimentRequest, out: &mut dyn Write) -> Result<(), String> {
    let exp = build(&args.name, args.full, args.seed)?;
    let started = Instant::now();
    let mut notes: Vec<String> = Vec::new();
    let mut runnable: Vec<(&ExperimentPolicy, PolicySpec)> = Vec::new();
    for p in &exp.policies {
        match PolicySpec::parse(p.name) {
            Ok(spec) => runnable.push((p, spec)),
            Err(e) => notes.push(format!("skipped {}: {e}", p.label)),
        }
    }
    for point in &exp.points {
        if let Some(note) = &point.note {
            notes.push(format!("{} {}: {note}", exp.varied, point.value));
        }
    }
    let mut cells: Vec<(usize, &ExperimentPolicy)> = Vec::new();
    let mut configs: Vec<(String, SimConfig)> = Vec::new();
    for (i, point) in exp.points.iter().enumerate() {
        for (p, spec) in &runnable {
            let config = SimConfig {
                policy: spec.clone(),
                ..point.config.clone()
            };
            config.validate()?;
            cells.push((i, p));
            configs.push((format!("{} {}", point.value, p.label), config));
        }
    }
    say(
        out,
        format_args!("flushwise sim experiment {} ({}): commit={COMMIT}", exp.name, exp.title),
    )?;
    say(out, format_args!("{}", exp.scale))?;
    for (_, config) in configs.iter().take(1) {
        say(
            out,
            format_args!(
                "seed={} connections={} device={} log_device={} cpu_cores={}",
                config.seed, config.connections, config.data_device, config.log_device, config.cpu_cores
            ),
        )?;
    }
    let _ = out.flush();
    let jobs = args.jobs.unwrap_or_else(runner::default_jobs);
    let outputs = runner::run_many(configs, jobs);

    let mut csv = Csv::default();
    let mut table: Vec<Vec<String>> = Vec::new();
    // NOPM per (point, policy label), for the ratios.
    let mut nopm: Vec<Vec<(&str, f64)>> = vec![Vec::new(); exp.points.len()];
    for ((i, p), out) in cells.iter().zip(&outputs) {
        let value = &exp.points[*i].value;
        match out {
            Ok(out) => {
                let r = &out.result;
                let cov = output::nopm_cov(&out.rows);
                nopm[*i].push((p.label, r.figures.nopm));
                let mut row = vec![
                    ("experiment".to_string(), exp.name.to_string()),
                    (
                        "scale".to_string(),
                        if args.full { "full" } else { "scaled" }.to_string(),
                    ),
                    (exp.varied.to_string(), value.clone()),
                    ("policy_label".to_string(), p.label.to_string()),
                ];
                row.extend(output::flatten(r));
                row.push(("nopm_cov".to_string(), format!("{cov:.4}")));
                csv.push(row);
                table.push(vec![
                    value.clone(),
                    p.label.to_string(),
                    format!("{:.0}", r.figures.nopm),
                    format!("{cov:.3}"),
                    format!("{:.2}", r.figures.sync_write_pct),
                    format!("{:.2}", r.figures.io_per_txn),
                    format!("{:.4}", r.figures.hit_ratio),
                    format!("{:.1}", r.dirty_pct_avg),
                    output::parameters_text(&r.final_parameters),
                ]);
            }
            Err(e) => notes.push(format!("{} {} {}: run failed: {e}", exp.varied, value, p.label)),
        }
    }
    fs::create_dir_all(&args.out).map_err(|e| format!("--out {}: cannot create: {e}", args.out.display()))?;
    let path = args.out.join(format!("{}.csv", exp.name));
    fs::write(&path, csv.render()).map_err(|e| format!("--out {}: cannot write: {e}", path.display()))?;

    let header: Vec<String> = [
        exp.varied,
        "policy",
        "NOPM",
        "NOPM C.O.V.",
        "sync_write_pct",
        "io_per_txn",
        "hit_ratio",
        "dirty_pct_avg",
        "final parameters",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    say(
        out,
        format_args!("\n{}", output::render_table(&header, &table).trim_end()),
    )?;

    let present: Vec<&(&str, &str)> = exp
        .ratios
        .iter()
        .filter(|(a, b)| {
            nopm.iter()
                .any(|cell| cell.iter().any(|(l, _)| l == a) && cell.iter().any(|(l, _)| l == b))
        })
        .collect();
    if !present.is_empty() {
        let mut header = vec![exp.varied.to_string()];
        header.extend(present.iter().map(|(a, b)| format!("{a} / {b}")));
        let rows: Vec<Vec<String>> = exp
            .points
            .iter()
            .zip(&nopm)
            .map(|(point, cell)| {
                let get = |label: &str| cell.iter().find(|(l, _)| *l == label).map(|(_, v)| *v);
                let mut row = vec![point.value.clone()];
                for (a, b) in &present {
                    row.push(match (get(a), get(b)) {
                        (Some(x), Some(y)) => ratio_text(x, y),
                        _ => "n/a".into(),
                    });
                }
                row
            })
            .collect();
        say(
            out,
            format_args!("\n{}", output::render_table(&header, &rows).trim_end()),
        )?;
    }
    for note in &notes {
        say(out, format_args!("note: {note}"))?;
    }
    say(
        out,
        format_args!(
            "\nwrote {} ({} runs) in {:.1} s wall",
            path.display(),
            csv_rows(&outputs),
            started.elapsed().as_secs_f64()
        ),
    )
}

fn csv_rows(outputs: &[Result<runner::RunOutput, String>]) -> usize {
    outputs.iter().filter(|o| o.is_ok()).count()
}
