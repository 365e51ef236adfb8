//! `lab run 000-fig10`: Lee et al.'s Experiment 4 (`000` §5.2.4, Figure
//! 10) on the real engine: TPC-H throughput of the flushing policies.
//!
//! The paper: scale factor 1, 10 query streams, a 4 GB buffer pool (the
//! data fits), SSD; "TPC-H throughput, the ratio of the number of queries
//! executed over the measurement interval"; the three algorithms "show
//! almost the same throughput because TPC-H is a read-intensive workload",
//! Percona's slightly lower. `--full` runs that setting; the default runs
//! scale factor 0.2 with 4 streams and a 1 GiB pool (the data fits too),
//! so it ends in minutes.
//!
//! Each run starts from a fresh copy of one prepared database (RF1/RF2
//! change it), runs the power test and the throughput test, and records
//! queries per hour of the throughput test (the paper's figure), QphH and
//! the throughput test's flushing figures. Runs are interleaved (every
//! policy once, then again: A B C D A B C D) because engine runs on this
//! disk move by 10-20 % from run to run; the table reports the median and
//! the spread. The verdict: the policies' medians within 10 % of each
//! other is "nearly equal", as the paper reports.
//!
//! The same setting also runs in the simulator (the TPC-H page-reference
//! model, `flushwise_tpcc_model::tpch`, on the Samsung 850 PRO model the
//! paper used, 4 cores as its i7-2600K): one deterministic run per policy,
//! 30 s of warm-up and 300 s measured. Its absolute rate is the model's
//! (no per-row CPU is charged), so only the policies' ratios compare.

use std::path::{Path, PathBuf};

use flushwise_core::policy::PolicySpec;
use flushwise_workloads::tpch::driver::RunConfig;

use crate::database;
use crate::engine_options::DbLocation;
use crate::plot::{self, Bar};
use crate::render::{render_table, write_file, Csv};
use crate::tpch::{self, TpchPrepareSpec, TpchRunSettings};
use crate::COMMIT;

pub const NAME: &str = "000-fig10";
/// The paper's three algorithms and ours.
pub const POLICIES: [&str; 4] = ["mysql56", "percona56", "self-tuning", "flushwise"];
/// Medians within this of each other: "nearly equal".
pub const NEARLY_EQUAL: f64 = 0.10;

/// The size of the experiment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fig10Scale {
    pub sf: f64,
    pub streams: u32,
    pub buffer_pool_bytes: u64,
    pub repeats: u32,
}

impl Fig10Scale {
    pub fn new(full: bool) -> Self {
        if full {
            Self {
                sf: 1.0,
                streams: 10,
                buffer_pool_bytes: 4 << 30,
                repeats: 2,
            }
        } else {
            Self {
                sf: 0.2,
                streams: 4,
                buffer_pool_bytes: 1 << 30,
                repeats: 2,
            }
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "SF {}, {} streams, {} pool, {} runs per policy interleaved",
            self.sf,
            self.streams,
            database::human_bytes(self.buffer_pool_bytes),
            self.repeats
        )
    }
}

/// One run's row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fig10Run {
    pub policy: String,
    pub repeat: u32,
    pub queries_per_hour: f64,
    pub power_at_size: f64,
    pub throughput_at_size: f64,
    pub qphh: f64,
    pub throughput_seconds: f64,
    pub sync_write_pct: f64,
    pub async_writes: u64,
    pub io_per_query: f64,
    pub hit_ratio: f64,
    pub config_hash: String,
}

/// A policy's median and spread.
#[derive(Clone, Debug)]
pub struct Fig10Policy {
    pub policy: String,
    pub median_qph: f64,
    pub min_qph: f64,
    pub max_qph: f64,
}

/// One simulator run of the same setting.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fig10SimRun {
    pub policy: String,
    pub queries_per_hour: f64,
    pub sync_write_pct: f64,
    pub async_writes: u64,
    pub hit_ratio: f64,
    pub config_hash: String,
}

pub struct Fig10Report {
    pub scale: Fig10Scale,
    pub runs: Vec<Fig10Run>,
    pub sim_runs: Vec<Fig10SimRun>,
    pub policies: Vec<Fig10Policy>,
    /// max median / min median − 1.
    pub spread: f64,
    pub verdict: String,
    pub files: Vec<PathBuf>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The policies' medians, spread and verdict from the runs.
pub fn summarise(runs: &[Fig10Run]) -> (Vec<Fig10Policy>, f64, String) {
    let mut policies = Vec::new();
    for p in POLICIES {
        let qph: Vec<f64> = runs
            .iter()
            .filter(|r| r.policy == p)
            .map(|r| r.queries_per_hour)
            .collect();
        if qph.is_empty() {
            continue;
        }
        policies.push(Fig10Policy {
            policy: p.to_string(),
            median_qph: median(qph.clone()),
            min_qph: qph.iter().copied().fold(f64::INFINITY, f64::min),
            max_qph: qph.iter().copied().fold(0.0, f64::max),
        });
    }
    let hi = policies.iter().map(|p| p.median_qph).fold(0.0, f64::max);
    let lo = policies.iter().map(|p| p.median_qph).fold(f64::INFINITY, f64::min);
    let spread = if lo > 0.0 && lo.is_finite() {
        hi / lo - 1.0
    } else {
        f64::NAN
    };
    let lowest = policies
        .iter()
        .min_by(|a, b| a.median_qph.total_cmp(&b.median_qph))
        .map(|p| p.policy.clone())
        .unwrap_or_default();
    let verdict = if spread <= NEARLY_EQUAL {
        format!(
            "nearly equal, as the paper reports: the medians are within {:.1} % of each other (bound {:.0} %); lowest: {lowest} (the paper: percona56 slightly lowest)",
            spread * 100.0,
            NEARLY_EQUAL * 100.0
        )
    } else {
        format!(
            "differs from the paper: the medians are {:.1} % apart (bound {:.0} %); lowest: {lowest}",
            spread * 100.0,
            NEARLY_EQUAL * 100.0
        )
    };
    (policies, spread, verdict)
}

/// Runs the experiment: prepares `dir/tpch-sf<SF>` once, then every run on
/// a fresh copy of it; writes `out/000-fig10/{runs.csv,figure.svg,figure.png}`.
pub fn run(
    full: bool,
    seed: u64,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Fig10Report, String> {
    let scale = Fig10Scale::new(full);
    let source = dir.join(format!("tpch-sf{}", scale.sf));
    let copy = dir.join(format!("tpch-sf{}-run", scale.sf));
    let location = |d: &Path| DbLocation {
        dir: d.to_path_buf(),
        redo_dir: None,
        io: "direct".into(),
    };
    match tpch::TpchManifest::read(&source) {
        Ok(m) if m.sf == scale.sf => progress(&format!("reusing the prepared database {}", source.display())),
        _ => {
            progress(&format!("preparing TPC-H SF {} in {}", scale.sf, source.display()));
            let spec = TpchPrepareSpec {
                sf: scale.sf,
                seed: 1,
                threads: crate::sim_runner::default_jobs(),
                load: crate::workload_dir::LoadFlags {
                    page_size: "16384",
                    redo: "256MiB",
                    buffer_pool: "256MiB",
                    force: true,
                },
            };
            let (_, summary) = tpch::prepare(&location(&source), &spec)?;
            progress(&summary);
        }
    }
    let needed = database::dir_bytes(&source)?;
    database::require_free(dir, needed + (256 << 20), "a run copy of the TPC-H database")?;
    let mut runs = Vec::new();
    for repeat in 1..=scale.repeats {
        for policy in POLICIES {
            progress(&format!(
                "run {repeat}/{}: {policy}: copying the database",
                scale.repeats
            ));
            database::copy_database(&source, &copy)?;
            let settings = TpchRunSettings {
                buffer_pool: format!("{}", scale.buffer_pool_bytes),
                redo: None,
                device: vec!["native".into()],
                doublewrite: true,
                flush_log_at_commit: 1,
                max_recovery_time: None,
                policy: policy.parse::<PolicySpec>()?,
                config: RunConfig {
                    streams: scale.streams,
                    power: true,
                    refresh: true,
                    validation_params: false,
                    seed,
                    interrupt: None,
                },
            };
            let outcome = tpch::run(&location(&copy), &settings, |_| {})?;
            let t = outcome
                .tests
                .iter()
                .find(|t| t.test == "throughput")
                .cloned()
                .unwrap_or_default();
            let r = &outcome.report;
            let row = Fig10Run {
                policy: policy.to_string(),
                repeat,
                queries_per_hour: r.queries_per_hour.unwrap_or(f64::NAN),
                power_at_size: r.power_at_size.unwrap_or(f64::NAN),
                throughput_at_size: r.throughput_at_size.unwrap_or(f64::NAN),
                qphh: r.qphh.unwrap_or(f64::NAN),
                throughput_seconds: t.seconds,
                sync_write_pct: t.sync_write_pct,
                async_writes: t.async_writes,
                io_per_query: t.io_per_query,
                hit_ratio: t.hit_ratio,
                config_hash: outcome.config_hash.clone(),
            };
            progress(&format!(
                "run {repeat}/{}: {policy}: {:.0} queries/hour, QphH {:.1}, sync writes {:.2} %",
                scale.repeats, row.queries_per_hour, row.qphh, row.sync_write_pct
            ));
            runs.push(row);
        }
    }
    database::remove_with_redo(&copy, None)?;
    let sim_runs = sim_runs(&scale, seed)?;
    for r in &sim_runs {
        progress(&format!(
            "simulator: {}: {:.0} queries/hour, sync writes {:.2} %",
            r.policy, r.queries_per_hour, r.sync_write_pct
        ));
    }
    let (policies, spread, verdict) = summarise(&runs);
    let dir_out = out.join(NAME);
    std::fs::create_dir_all(&dir_out).map_err(|e| format!("{}: {e}", dir_out.display()))?;
    let mut csv = Csv::default();
    for r in &runs {
        csv.push(vec![
            ("policy".into(), r.policy.clone()),
            ("repeat".into(), r.repeat.to_string()),
            ("sf".into(), scale.sf.to_string()),
            ("streams".into(), scale.streams.to_string()),
            ("buffer_pool_bytes".into(), scale.buffer_pool_bytes.to_string()),
            ("queries_per_hour".into(), format!("{:.1}", r.queries_per_hour)),
            ("power_at_size".into(), format!("{:.2}", r.power_at_size)),
            ("throughput_at_size".into(), format!("{:.2}", r.throughput_at_size)),
            ("qphh".into(), format!("{:.2}", r.qphh)),
            ("throughput_seconds".into(), format!("{:.2}", r.throughput_seconds)),
            ("sync_write_pct".into(), format!("{:.4}", r.sync_write_pct)),
            ("async_writes".into(), r.async_writes.to_string()),
            ("io_per_query".into(), format!("{:.2}", r.io_per_query)),
            ("hit_ratio".into(), format!("{:.6}", r.hit_ratio)),
            ("seed".into(), seed.to_string()),
            ("config_hash".into(), r.config_hash.clone()),
            ("commit".into(), COMMIT.to_string()),
        ]);
    }
    let csv_path = dir_out.join("runs.csv");
    write_file(&csv_path, &csv.render(), "lab run 000-fig10")?;
    let svg = dir_out.join("figure.svg");
    let bars: Vec<Bar> = policies
        .iter()
        .map(|p| Bar {
            label: format!("{} ({:.0}-{:.0})", p.policy, p.min_qph, p.max_qph),
            value: p.median_qph,
            paper: false,
        })
        .collect();
    plot::bars_svg(
        &svg,
        &format!("TPC-H throughput on the engine ({}), median of runs", scale.describe()),
        "queries per hour (throughput test)",
        &bars,
    )?;
    let png = dir_out.join("figure.png");
    plot::png_from_svg(&svg, &png)?;
    let mut sim_csv = Csv::default();
    for r in &sim_runs {
        sim_csv.push(vec![
            ("policy".into(), r.policy.clone()),
            ("sf".into(), scale.sf.to_string()),
            ("streams".into(), scale.streams.to_string()),
            ("buffer_pool_bytes".into(), scale.buffer_pool_bytes.to_string()),
            ("queries_per_hour".into(), format!("{:.1}", r.queries_per_hour)),
            ("sync_write_pct".into(), format!("{:.4}", r.sync_write_pct)),
            ("async_writes".into(), r.async_writes.to_string()),
            ("hit_ratio".into(), format!("{:.6}", r.hit_ratio)),
            ("seed".into(), seed.to_string()),
            ("config_hash".into(), r.config_hash.clone()),
            ("commit".into(), COMMIT.to_string()),
        ]);
    }
    let sim_path = dir_out.join("sim-runs.csv");
    write_file(&sim_path, &sim_csv.render(), "lab run 000-fig10")?;
    Ok(Fig10Report {
        scale,
        runs,
        sim_runs,
        policies,
        spread,
        verdict,
        files: vec![csv_path, sim_path, svg, png],
    })
}

/// The simulator's runs of the setting: one per policy.
pub fn sim_runs(scale: &Fig10Scale, seed: u64) -> Result<Vec<Fig10SimRun>, String> {
    let mut configs = Vec::new();
    for policy in POLICIES {
        let options = flushwise_sim::SimOptions {
            workload: "tpch".into(),
            sf: scale.sf,
            refresh: true,
            connections: scale.streams + 1,
            buffer_pool: scale.buffer_pool_bytes.to_string(),
            device: "samsung-850-pro".into(),
            warmup: "30s".into(),
            duration: "300s".into(),
            cpu_cores: 4,
            seed,
            policy: policy.into(),
            ..flushwise_sim::SimOptions::default()
        };
        configs.push((policy.to_string(), options.to_config()?));
    }
    let jobs = crate::sim_runner::default_jobs();
    let mut out = Vec::new();
    for (outcome, policy) in crate::sim_runner::run_many(configs, jobs).into_iter().zip(POLICIES) {
        let r = outcome?.result;
        let query_share = r
            .mix_pct
            .iter()
            .find(|(name, _)| name == "query")
            .map_or(0.0, |(_, pct)| pct / 100.0);
        out.push(Fig10SimRun {
            policy: policy.to_string(),
            queries_per_hour: r.transactions as f64 * query_share / r.measured_seconds.max(1e-9) * 3600.0,
            sync_write_pct: r.figures.sync_write_pct,
            async_writes: r.figures.async_writes,
            hit_ratio: r.figures.hit_ratio,
            config_hash: r.config_hash.clone(),
        });
    }
    Ok(out)
}

/// The report as a table and the verdict.
pub fn report_text(report: &Fig10Report) -> String {
    let header: Vec<String> = [
        "policy",
        "median q/h",
        "min",
        "max",
        "vs best",
        "sim q/h",
        "sim vs best",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let best = report.policies.iter().map(|p| p.median_qph).fold(0.0, f64::max);
    let sim_best = report.sim_runs.iter().map(|r| r.queries_per_hour).fold(0.0, f64::max);
    let rows: Vec<Vec<String>> = report
        .policies
        .iter()
        .map(|p| {
            let sim = report.sim_runs.iter().find(|r| r.policy == p.policy);
            vec![
                p.policy.clone(),
                format!("{:.0}", p.median_qph),
                format!("{:.0}", p.min_qph),
                format!("{:.0}", p.max_qph),
                format!("{:.3}", p.median_qph / best),
                sim.map_or("-".into(), |r| format!("{:.0}", r.queries_per_hour)),
                sim.map_or("-".into(), |r| format!("{:.3}", r.queries_per_hour / sim_best)),
            ]
        })
        .collect();
    format!(
        "{NAME} ({}), commit {COMMIT}\n{}verdict: {}\n",
        report.scale.describe(),
        render_table(&header, &rows),
        report.verdict
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_row(policy: &str, qph: f64) -> Fig10Run {
        Fig10Run {
            policy: policy.into(),
            repeat: 1,
            queries_per_hour: qph,
            power_at_size: 1.0,
            throughput_at_size: 1.0,
            qphh: 1.0,
            throughput_seconds: 1.0,
            sync_write_pct: 0.0,
            async_writes: 0,
            io_per_query: 0.0,
            hit_ratio: 1.0,
            config_hash: String::new(),
        }
    }

    #[test]
    fn medians_spread_and_verdict_follow_the_runs() {
        let runs = vec![
            run_row("mysql56", 100.0),
            run_row("mysql56", 110.0),
            run_row("percona56", 95.0),
            run_row("percona56", 97.0),
            run_row("self-tuning", 104.0),
        ];
        let (p, spread, verdict) = summarise(&runs);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].median_qph, 105.0);
        assert_eq!((p[1].min_qph, p[1].max_qph), (95.0, 97.0));
        assert!((spread - (105.0 / 96.0 - 1.0)).abs() < 1e-12);
        assert!(
            verdict.starts_with("nearly equal") && verdict.contains("lowest: percona56"),
            "{verdict}"
        );
        let (_, _, verdict) = summarise(&[run_row("mysql56", 100.0), run_row("flushwise", 150.0)]);
        assert!(verdict.starts_with("differs"), "{verdict}");
    }
}
