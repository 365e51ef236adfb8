//! `lab run 003-model`: paper 003's whole experiment on the engine, in one
//! command. A Wisconsin relation of 10^6 tuples under a 16 MiB pool on the
//! emulated hard disk (`wd-1tb-7200`, as 003 used a hard disk), run under
//! `mysql51`, the server 003 measured (MySQL 5.1's free-margin LRU batches,
//! see `flushwise_core::free_page_path::FreeMargin`):
//!
//! 1. a saturated closed loop (100 jobs): the throughput P, the flush
//!    period and the pauses 003 §4.2 fits from;
//! 2. one request at a time (1 job): the network-delay rule;
//! 3. open loops at 0.4, 0.6 and 0.8 of P (003's 12.5, 18.75 and 25 per
//!    second are those shares of its ~31/s);
//! 4. closed loops of 5, 20 and 64 jobs (N vs T and N vs P);
//! 5. the model fitted to these runs and simulated at the same rates and
//!    populations (`crate::wisconsin::model`): Table 1's analogue and the
//!    Kolmogorov-Smirnov distances;
//! 6. the same three open-loop rates under `flushwise`, to show what a
//!    page cleaner does to 003's anomaly.
//!
//! Runs go one at a time (engine runs on one disk must not overlap). The
//! database is prepared once under `--dir` (it loads in about a second)
//! and reused: every run draws fresh keys and values from the database's
//! run counter. The default sizes the runs for about 17 minutes; `--full`
//! runs them as long as EXPERIMENTS.md's measurement (about 40 minutes).

use std::path::{Path, PathBuf};
use std::time::Duration;

use flushwise_core::policy::PolicySpec;
use flushwise_workloads::wisconsin::driver::{Arrivals, RunConfig};

use crate::database;
use crate::engine_options::DbLocation;
use crate::render::{render_table, write_file, Csv};
use crate::wisconsin::{self, ModelReport, WisconsinPrepareSpec, WisconsinRunOutput, WisconsinRunSettings};
use crate::COMMIT;

pub const NAME: &str = "003-model";
/// The server 003 measured.
pub const FIT_POLICY: &str = "mysql51";
/// Ours, at the same rates.
pub const COMPARED_POLICY: &str = "flushwise";
/// Open-loop rates as shares of the saturated throughput.
pub const RATE_SHARES: [f64; 3] = [0.4, 0.6, 0.8];
/// Closed-loop populations besides the saturated run and the single job.
pub const POPULATIONS: [u32; 3] = [5, 20, 64];
/// The saturated run's population.
pub const SATURATED_JOBS: u32 = 100;
/// The relation: 10^6 tuples, about 320 MiB, 16 x the pool.
pub const TUPLES: u64 = 1_000_000;
/// 003's pool.
pub const BUFFER_POOL: &str = "16MiB";
/// 003's disk.
pub const DEVICE: [&str; 2] = ["emulated", "wd-1tb-7200"];

/// How long each kind of run warms up and measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lab003Scale {
    /// (warm-up, measured) of the saturated run.
    pub saturated: (Duration, Duration),
    pub single: (Duration, Duration),
    pub open: (Duration, Duration),
    pub populations: (Duration, Duration),
}

impl Lab003Scale {
    pub fn new(full: bool) -> Self {
        let s = Duration::from_secs;
        if full {
            Self {
                saturated: (s(30), s(180)),
                single: (s(10), s(120)),
                open: (s(30), s(240)),
                populations: (s(20), s(120)),
            }
        } else {
            Self {
                saturated: (s(20), s(90)),
                single: (s(10), s(40)),
                open: (s(20), s(90)),
                populations: (s(10), s(40)),
            }
        }
    }

    /// Wall time of the runs, seconds, without the drains.
    pub fn seconds(&self) -> u64 {
        let t = |(w, d): (Duration, Duration)| (w + d).as_secs();
        t(self.saturated)
            + t(self.single)
            + 2 * RATE_SHARES.len() as u64 * t(self.open)
            + POPULATIONS.len() as u64 * t(self.populations)
    }
}

/// One open-loop rate under both policies.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RateRow {
    pub rate_per_s: f64,
    pub policy: String,
    pub throughput_per_s: f64,
    pub p50_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
    pub sync_write_pct: f64,
    pub user_stall_s: f64,
    pub config_hash: String,
}

pub struct Lab003Report {
    pub scale: Lab003Scale,
    pub saturated_per_s: f64,
    pub model: ModelReport,
    pub rates: Vec<RateRow>,
    pub files: Vec<PathBuf>,
}

fn rate_row(out: &WisconsinRunOutput) -> RateRow {
    let f = &out.flush;
    let user = f.sync_replacement_writes + f.sync_recoverability_writes;
    let all = user + f.flush_list_pages + f.lru_batch_flush_pages + f.cleaner_clean_pages;
    RateRow {
        rate_per_s: out.rate_per_s.unwrap_or(f64::NAN),
        policy: out.policy.clone(),
        throughput_per_s: out.throughput_per_s,
        p50_s: out.response.p50_s,
        p99_s: out.response.p99_s,
        max_s: out.response.max_s,
        sync_write_pct: if all == 0 {
            0.0
        } else {
            100.0 * user as f64 / all as f64
        },
        user_stall_s: f.user_stall_s,
        config_hash: out.config_hash.clone(),
    }
}

/// Prepares `dir/wisconsin-1000000` unless it is there; returns its location.
fn prepared(dir: &Path, progress: &mut dyn FnMut(&str)) -> Result<DbLocation, String> {
    let location = DbLocation {
        dir: dir.join(format!("wisconsin-{TUPLES}")),
        redo_dir: None,
        io: "direct".into(),
    };
    match wisconsin::WisconsinManifest::read(&location.dir) {
        Ok(m) if m.tuples == TUPLES => {
            progress(&format!("reusing the prepared relation {}", location.dir.display()));
        }
        _ => {
            progress(&format!(
                "preparing a Wisconsin relation of {TUPLES} tuples in {}",
                location.dir.display()
            ));
            let spec = WisconsinPrepareSpec {
                tuples: TUPLES,
                seed: 1,
                load: crate::workload_dir::LoadFlags {
                    page_size: "16384",
                    redo: "64MiB",
                    buffer_pool: "256MiB",
                    force: true,
                },
            };
            let (_, summary) = wisconsin::prepare(&location, &spec)?;
            progress(&summary);
        }
    }
    Ok(location)
}

/// Runs the experiment and writes `out/003-model/`.
pub fn run(
    full: bool,
    seed: u64,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Lab003Report, String> {
    let scale = Lab003Scale::new(full);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // The relation, its redo log and doublewrite file, and the runs' files.
    database::require_free(
        dir,
        wisconsin::database_bytes_estimate(TUPLES, 64 << 20) + (64 << 20),
        "the Wisconsin relation of lab run 003-model",
    )?;
    let location = prepared(dir, progress)?;
    progress(&format!(
        "{} engine runs, one at a time, about {} min",
        2 + 2 * RATE_SHARES.len() + POPULATIONS.len(),
        scale.seconds().div_ceil(60)
    ));
    let root = out.join(NAME);
    let fit_dir = root.join(FIT_POLICY);
    let compared_dir = root.join(COMPARED_POLICY);
    for d in [&fit_dir, &compared_dir] {
        if d.exists() {
            // Old runs would be fitted with the new ones.
            std::fs::remove_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
    }
    let fit_policy: PolicySpec = FIT_POLICY.parse()?;
    let compared_policy: PolicySpec = COMPARED_POLICY.parse()?;
    let mut one = |arrivals: Arrivals, (warmup, duration): (Duration, Duration), policy: &PolicySpec, to: &Path| {
        let mut config = RunConfig::new(arrivals, duration, seed);
        config.warmup = warmup;
        config.sample_interval = Duration::from_millis(100);
        let settings = WisconsinRunSettings {
            buffer_pool: BUFFER_POOL.into(),
            redo: None,
            device: DEVICE.iter().map(|s| s.to_string()).collect(),
            doublewrite: true,
            flush_log_at_commit: 1,
            max_recovery_time: None,
            policy: policy.clone(),
            config,
            out: to.to_path_buf(),
        };
        progress(&format!(
            "{policy}: {} ({} s)",
            arrivals.label(),
            (warmup + duration).as_secs()
        ));
        let result = wisconsin::run(&location, &settings)?;
        progress(&format!(
            "{policy}: {}: {:.1}/s, p50 {:.3} s, p99 {:.3} s, max {:.3} s",
            result.label, result.throughput_per_s, result.response.p50_s, result.response.p99_s, result.response.max_s
        ));
        Ok::<_, String>(result)
    };
    let saturated = one(
        Arrivals::Closed { jobs: SATURATED_JOBS },
        scale.saturated,
        &fit_policy,
        &fit_dir,
    )?;
    let p = saturated.throughput_per_s;
    if !(p.is_finite() && p > 1.0) {
        return Err(format!(
            "the saturated run answered {p:.2} requests/s: too few to size the open-loop rates"
        ));
    }
    one(Arrivals::Closed { jobs: 1 }, scale.single, &fit_policy, &fit_dir)?;
    let mut rates = Vec::new();
    for share in RATE_SHARES {
        let rate = (p * share).round().max(1.0);
        let arrivals = Arrivals::Poisson {
            rate_per_s: rate,
            workers: 200,
        };
        rates.push(rate_row(&one(arrivals, scale.open, &fit_policy, &fit_dir)?));
    }
    for jobs in POPULATIONS {
        one(Arrivals::Closed { jobs }, scale.populations, &fit_policy, &fit_dir)?;
    }
    for share in RATE_SHARES {
        let rate = (p * share).round().max(1.0);
        let arrivals = Arrivals::Poisson {
            rate_per_s: rate,
            workers: 200,
        };
        rates.push(rate_row(&one(arrivals, scale.open, &compared_policy, &compared_dir)?));
    }
    progress("fitting 003's model to the mysql51 runs and simulating it");
    let model = wisconsin::model(&fit_dir, &root.join("model"), seed)?;
    let mut csv = Csv::default();
    for r in &rates {
        csv.push(vec![
            ("policy".into(), r.policy.clone()),
            ("rate_per_s".into(), format!("{}", r.rate_per_s)),
            ("throughput_per_s".into(), format!("{:.3}", r.throughput_per_s)),
            ("p50_s".into(), format!("{:.5}", r.p50_s)),
            ("p99_s".into(), format!("{:.5}", r.p99_s)),
            ("max_s".into(), format!("{:.5}", r.max_s)),
            ("sync_write_pct".into(), format!("{:.3}", r.sync_write_pct)),
            ("user_stall_s".into(), format!("{:.3}", r.user_stall_s)),
            ("seed".into(), seed.to_string()),
            ("config_hash".into(), r.config_hash.clone()),
            ("commit".into(), COMMIT.to_string()),
        ]);
    }
    let rates_csv = root.join("rates.csv");
    write_file(&rates_csv, &csv.render(), "lab run 003-model")?;
    let mut files = vec![rates_csv];
    files.extend(model.files.iter().cloned());
    let report = Lab003Report {
        scale,
        saturated_per_s: p,
        model,
        rates,
        files,
    };
    let text_path = root.join("report.txt");
    write_file(&text_path, &report_text(&report), "lab run 003-model")?;
    let mut report = report;
    report.files.push(text_path);
    Ok(report)
}

/// The report: Table 1, the model against the engine, and the two policies
/// at the same rates.
pub fn report_text(report: &Lab003Report) -> String {
    let mut t = format!(
        "003 on the engine: {TUPLES} tuples, {BUFFER_POOL} pool, emulated {}, fitted under {FIT_POLICY} (commit {COMMIT}, seed {})\n\
         saturated throughput P = {:.1}/s (closed loop, {SATURATED_JOBS} jobs)\n\nTable 1 (fitted model parameters)\n",
        DEVICE[1], report.model.seed, report.saturated_per_s
    );
    t.push_str(&wisconsin::table1_text(&report.model));
    t.push_str("\nthe model against the engine, per arrival rate, and N/P, N/T\n");
    t.push_str(&wisconsin::comparison_text(&report.model));
    t.push_str("\nthe same open-loop rates under both policies\n");
    let header: Vec<String> = [
        "rate/s",
        "policy",
        "answered/s",
        "p50 s",
        "p99 s",
        "max s",
        "user writes %",
        "user stall s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = report
        .rates
        .iter()
        .map(|r| {
            vec![
                format!("{}", r.rate_per_s),
                r.policy.clone(),
                format!("{:.2}", r.throughput_per_s),
                format!("{:.4}", r.p50_s),
                format!("{:.4}", r.p99_s),
                format!("{:.4}", r.max_s),
                format!("{:.1}", r.sync_write_pct),
                format!("{:.1}", r.user_stall_s),
            ]
        })
        .collect();
    t.push_str(&render_table(&header, &rows));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_fits_in_twenty_minutes_and_full_is_longer() {
        let default = Lab003Scale::new(false);
        let full = Lab003Scale::new(true);
        assert!(default.seconds() <= 20 * 60, "{} s", default.seconds());
        assert!(full.seconds() > default.seconds());
        // Every open-loop run holds many flush periods (a few seconds each).
        assert!(default.open.1 >= Duration::from_secs(60));
    }

    #[test]
    fn a_rate_row_counts_user_writes_against_all_writes() {
        let out: WisconsinRunOutput = serde_json::from_value(serde_json::json!({
            "kind": "wisconsin-result", "label": "open-30", "mode": "open", "rate_per_s": 30.0,
            "workers": 200, "jobs": null, "policy": "mysql51", "seed": 1, "config_hash": "h",
            "commit": "c", "tuples": 10, "buffer_pool_bytes": 1, "device": "d", "duration_s": 1.0,
            "elapsed_s": 1.0, "offered": 1, "completed": 1, "unserved": 0, "overloaded": false,
            "interrupted": false, "throughput_per_s": 30.0,
            "response": {"count": 1, "mean_s": 0.1, "p50_s": 0.01, "p90_s": 0.2, "p99_s": 0.7, "max_s": 0.9},
            "flush": {"reads": 10, "flush_list_pages": 30, "lru_batch_flush_pages": 0,
                      "sync_replacement_writes": 90, "sync_recoverability_writes": 0, "wait_free": 5,
                      "user_stall_s": 2.0, "dirty_pages_max": 900, "checkpoint_age_bytes_max": 1},
            "generator_late_ms_max": 0.0, "sample_interval_s": 0.1, "dir": "/tmp/x"
        }))
        .unwrap();
        let row = rate_row(&out);
        assert!((row.sync_write_pct - 75.0).abs() < 1e-9, "{}", row.sync_write_pct);
        assert_eq!(row.p99_s, 0.7);
    }
}
