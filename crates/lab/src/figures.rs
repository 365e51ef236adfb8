//! `lab run` for the catalog's entries and `lab report`: runs an entry's
//! study (cached by configuration hash, so a rerun skips finished runs and
//! entries sharing a study run it once), draws it like the paper's figure
//! (SVG and PNG), checks the paper's claims against the runs, and writes
//! `<out>/<entry>/` (figure, `runs.csv`, `intervals.csv`, `result.json`);
//! the report gathers every entry's result into one self-contained HTML
//! page.
//!
//! Invariants: a verdict is computed from the runs written beside it,
//! never typed in; every row of `runs.csv` carries the seed, configuration
//! hash and commit of its run; the report inlines its figures (no network,
//! no file beside it needed) and marks on the page whether every image
//! loaded, which `lab report --check` reads back through a real browser.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use flushwise_sim::{IntervalRow, RunResult, SimConfig};

use crate::catalog::{self, Claim, Entry, Metric, PaperPoint, Study, View};
use crate::plot::{self, Bar, Layout, Panel, Series};
use crate::render::{self, Csv};
use crate::run_cache::{self, CachedRun};
use crate::sim_runner::{self as runner, RunOutput};
use crate::COMMIT;

const MIB: f64 = (1u64 << 20) as f64;

/// One report interval of a run, as the figures use it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IntervalPoint {
    /// End of the interval, seconds since the run began.
    pub since_start_s: f64,
    pub warmup: bool,
    pub nopm: f64,
    pub reads: u64,
    pub async_writes: u64,
    pub sync_writes: u64,
    pub dirty_pct: f64,
    pub free_pages: u32,
    pub checkpoint_age_mib: f64,
    pub parameters: Vec<(String, f64)>,
}

/// What the lab keeps of a run (and caches).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunDigest {
    pub config_hash: String,
    pub commit: String,
    pub seed: u64,
    /// The policy as configured (`name:key=value,...`).
    pub policy: String,
    pub frames: u64,
    pub interval_s: f64,
    pub nopm: f64,
    /// Coefficient of variation of the measured intervals' NOPM.
    pub nopm_cov: f64,
    pub sync_write_pct: f64,
    pub io_per_txn: f64,
    pub hit_ratio: f64,
    pub dirty_pct_avg: f64,
    pub checkpoint_age_avg_mib: f64,
    pub final_parameters: Vec<(String, f64)>,
    pub wall_seconds: f64,
    pub intervals: Vec<IntervalPoint>,
}

impl CachedRun for RunDigest {
    fn config_hash(&self) -> &str {
        &self.config_hash
    }
    fn commit(&self) -> &str {
        &self.commit
    }
}

fn param(params: &[(String, f64)], name: &str) -> Option<f64> {
    params.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

impl RunDigest {
    fn of(config: &SimConfig, out: &RunOutput) -> RunDigest {
        RunDigest::from_parts(
            &out.result,
            &out.rows,
            config.policy.to_string(),
            config.frames(),
            config.report_interval_us as f64 / 1e6,
            config.warmup_us as f64 / 1e6,
        )
    }

    /// A digest of either shell's result (`RunResult` is their one
    /// vocabulary): `frames` of the pool, intervals of `interval_s`, a
    /// warm-up of `warmup_s` before the measured window.
    pub fn from_parts(
        r: &RunResult,
        rows: &[IntervalRow],
        policy: String,
        frames: u64,
        interval_s: f64,
        warmup_s: f64,
    ) -> RunDigest {
        RunDigest {
            config_hash: r.config_hash.clone(),
            commit: r.commit.clone(),
            seed: r.seed,
            policy,
            frames,
            interval_s,
            nopm: r.figures.nopm,
            nopm_cov: render::nopm_cov(rows),
            sync_write_pct: r.figures.sync_write_pct,
            io_per_txn: r.figures.io_per_txn,
            hit_ratio: r.figures.hit_ratio,
            dirty_pct_avg: r.dirty_pct_avg,
            checkpoint_age_avg_mib: r.checkpoint_age_avg_bytes / MIB,
            final_parameters: r.final_parameters.clone(),
            wall_seconds: r.wall_seconds,
            intervals: rows
                .iter()
                .map(|row| IntervalPoint {
                    since_start_s: row.time_s + warmup_s,
                    warmup: row.warmup,
                    nopm: row.figures.nopm,
                    reads: row.figures.reads,
                    async_writes: row.figures.async_writes,
                    sync_writes: row.figures.sync_replacement_writes + row.figures.sync_recoverability_writes,
                    dirty_pct: row.dirty_pct,
                    free_pages: row.free_pages,
                    checkpoint_age_mib: row.checkpoint_age_bytes as f64 / MIB,
                    parameters: row.parameters.clone(),
                })
                .collect(),
        }
    }

    /// The measured window's value of `metric`.
    pub fn summary(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Nopm => Some(self.nopm),
            Metric::SyncWritePct => Some(self.sync_write_pct),
            Metric::IoPerTxn => Some(self.io_per_txn),
            Metric::DirtyPct => Some(self.dirty_pct_avg),
            Metric::CheckpointAgeMib => Some(self.checkpoint_age_avg_mib),
            Metric::Param(name) => param(&self.final_parameters, name),
        }
    }
}

impl IntervalPoint {
    fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Nopm => Some(self.nopm),
            Metric::SyncWritePct => {
                let writes = self.sync_writes + self.async_writes;
                Some(if writes == 0 {
                    0.0
                } else {
                    100.0 * self.sync_writes as f64 / writes as f64
                })
            }
            Metric::IoPerTxn => None,
            Metric::DirtyPct => Some(self.dirty_pct),
            Metric::CheckpointAgeMib => Some(self.checkpoint_age_mib),
            Metric::Param(name) => param(&self.parameters, name),
        }
    }
}

/// How a paper claim fared.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Our value lies in the paper's range (5 % tolerance).
    Matches,
    /// Not the paper's value, but on the same side (of 1 for a ratio).
    SameDirection,
    Differs,
    /// A run the claim needs failed or is missing.
    NoData,
}

impl Outcome {
    pub fn text(self) -> &'static str {
        match self {
            Outcome::Matches => "matches",
            Outcome::SameDirection => "same direction",
            Outcome::Differs => "differs",
            Outcome::NoData => "no data",
        }
    }
}

/// A claim with our value and the outcome.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub outcome: Outcome,
}

/// One run of a study as an entry draws it: its series, x and digest (a
/// failed run has none).
pub struct DrawnRun<'a> {
    pub series: &'a str,
    pub x: f64,
    pub digest: Option<&'a RunDigest>,
}

/// A study's runs with their digests, from either shell.
pub struct DrawnStudy<'a> {
    pub name: &'a str,
    pub scale: &'a str,
    /// Label of the x axis of by-x views ("" when nothing is varied).
    pub x_label: &'a str,
    pub notes: &'a [String],
    /// "simulator" or "engine".
    pub shell: &'a str,
    pub runs: Vec<DrawnRun<'a>>,
}

impl<'a> DrawnStudy<'a> {
    /// A study drawn from `runs` (series, x, digest) on `shell`.
    pub fn new(
        name: &'a str,
        scale: &'a str,
        x_label: &'a str,
        notes: &'a [String],
        shell: &'a str,
        runs: impl Iterator<Item = (&'a str, f64, Option<&'a RunDigest>)>,
    ) -> DrawnStudy<'a> {
        DrawnStudy {
            name,
            scale,
            x_label,
            notes,
            shell,
            runs: runs.map(|(series, x, digest)| DrawnRun { series, x, digest }).collect(),
        }
    }

    /// (x, digest) of `series`, by x.
    fn of(&self, series: &str) -> Vec<(f64, &RunDigest)> {
        let mut v: Vec<(f64, &RunDigest)> = self
            .runs
            .iter()
            .filter(|r| r.series == series)
            .filter_map(|r| r.digest.map(|d| (r.x, d)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// The study's series in first-run order.
    fn series(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !names.contains(&r.series) {
                names.push(r.series);
            }
        }
        names
    }

    /// The study's distinct x values, ascending.
    fn xs(&self) -> Vec<f64> {
        let mut xs: Vec<f64> = self.runs.iter().map(|r| r.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    }
}

/// The side of 1 a ratio lies on, with 2 % counted as equal.
fn side(ratio: f64) -> i8 {
    if ratio > 1.02 {
        1
    } else if ratio < 0.98 {
        -1
    } else {
        0
    }
}

fn range_text(values: &[f64], unit: &str) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if (hi - lo).abs() < 0.005 {
        format!("{lo:.2}{unit}")
    } else {
        format!("{lo:.2}-{hi:.2}{unit} over {} points", values.len())
    }
}

fn paper_range_text(lo: f64, hi: f64, unit: &str) -> String {
    if hi.is_infinite() {
        format!("> {lo:.2}{unit}")
    } else if (hi - lo).abs() < 1e-9 {
        format!("{lo:.2}{unit}")
    } else {
        format!("{lo:.2}-{hi:.2}{unit}")
    }
}

impl Verdict {
    /// A claim whose runs failed or are missing.
    fn no_data(claim: &str, paper: String) -> Verdict {
        Verdict {
            claim: claim.into(),
            paper,
            ours: "no runs".into(),
            outcome: Outcome::NoData,
        }
    }
}

/// Checks one claim against the runs.
fn verdict(claim: &Claim, runs: &DrawnStudy<'_>) -> Verdict {
    match *claim {
        Claim::Ratio {
            text,
            metric,
            num,
            den,
            lo,
            hi,
        } => {
            let (nums, dens) = (runs.of(num), runs.of(den));
            let ratio = |n: &RunDigest, d: &RunDigest| -> Option<f64> {
                let (a, b) = (n.summary(metric)?, d.summary(metric)?);
                (b > 0.0).then_some(a / b)
            };
            // Paired by x; two series of one run each (two settings of
            // the varied parameter) pair with each other.
            let ratios: Vec<f64> = match (nums.as_slice(), dens.as_slice()) {
                ([(_, n)], [(_, d)]) => ratio(n, d).into_iter().collect(),
                _ => nums
                    .iter()
                    .filter_map(|(x, n)| {
                        let (_, d) = dens.iter().find(|(dx, _)| dx == x)?;
                        ratio(n, d)
                    })
                    .collect(),
            };
            let paper = paper_range_text(lo, hi, "x");
            if ratios.is_empty() {
                return Verdict::no_data(text, paper);
            }
            let inside = ratios.iter().all(|&r| r >= lo * 0.95 && r <= hi * 1.05);
            let paper_mid = if hi.is_infinite() {
                lo.max(1.03)
            } else {
                (lo + hi) / 2.0
            };
            let paper_side = if hi.is_infinite() && lo >= 0.97 {
                // "at least as fast": equal counts.
                if lo >= 1.0 {
                    1
                } else {
                    0
                }
            } else {
                side(paper_mid)
            };
            let same = ratios.iter().all(|&r| {
                let s = side(r);
                s == paper_side || (hi.is_infinite() && s >= paper_side.min(0))
            });
            Verdict {
                claim: text.into(),
                paper,
                ours: range_text(&ratios, "x"),
                outcome: if inside {
                    Outcome::Matches
                } else if same {
                    Outcome::SameDirection
                } else {
                    Outcome::Differs
                },
            }
        }
        Claim::AtMost {
            text,
            metric,
            series,
            bound,
        } => {
            let values: Vec<f64> = runs.of(series).iter().filter_map(|(_, d)| d.summary(metric)).collect();
            let paper = format!("<= {bound}");
            if values.is_empty() {
                return Verdict::no_data(text, paper);
            }
            let max = values.iter().copied().fold(0.0, f64::max);
            Verdict {
                claim: text.into(),
                paper,
                ours: format!("max {max:.3}"),
                outcome: if max <= bound + 1e-9 {
                    Outcome::Matches
                } else if max <= (bound * 2.0).max(0.1) {
                    Outcome::SameDirection
                } else {
                    Outcome::Differs
                },
            }
        }
        Claim::Within {
            text,
            metric,
            series,
            lo,
            hi,
        } => {
            let values: Vec<f64> = runs.of(series).iter().filter_map(|(_, d)| d.summary(metric)).collect();
            let paper = paper_range_text(lo, hi, "");
            if values.is_empty() {
                return Verdict::no_data(text, paper);
            }
            let (min, max) = (
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            );
            let overlaps = max >= lo * 0.97 && min <= hi * 1.03;
            Verdict {
                claim: text.into(),
                paper,
                ours: range_text(&values, ""),
                outcome: if overlaps { Outcome::Matches } else { Outcome::Differs },
            }
        }
    }
}

/// The paper's points of `metric` for a by-x panel.
fn paper_series(points: &[PaperPoint], metric: Metric, xs: &[f64]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for p in points.iter().filter(|p| p.metric == metric) {
        let at: Vec<(f64, f64)> = match p.at {
            Some(i) => xs.get(i).map(|&x| vec![(x, p.value)]).unwrap_or_default(),
            None => xs.iter().map(|&x| (x, p.value)).collect(),
        };
        out.push(Series::paper(format!("{} (paper)", legend_name(p.series)), at));
    }
    out
}

/// The paper's steady-state values of `metric` for a time panel: one
/// square at the end of the run.
fn paper_time_series(points: &[PaperPoint], metric: Metric, end_s: f64) -> Vec<Series> {
    points
        .iter()
        .filter(|p| p.metric == metric)
        .map(|p| Series::paper(format!("{} (paper)", legend_name(p.series)), vec![(end_s, p.value)]))
        .collect()
}

fn time_points(d: &RunDigest, metric: Metric) -> Vec<(f64, f64)> {
    d.intervals
        .iter()
        .filter_map(|i| i.value(metric).map(|v| (i.since_start_s, v)))
        .collect()
}

const TIME_LABEL: &str = "time since start (s)";

/// Two panels of different quantities over time, side by side.
const TWO_TIME_PANELS: Layout = Layout {
    columns: 2,
    shared_y: false,
    log_x_if_wide: false,
};

/// A series as a legend names it: Lee et al.'s policies with the paper's
/// own names beside ours (000 §5: the naive algorithm is MySQL 5.6.15's,
/// Algorithm 1; Percona's is Algorithm 2; theirs Algorithm 3); the other
/// papers' series are already named as in their text.
pub fn legend_name(series: &str) -> String {
    match series {
        "mysql56" => "mysql56 (the paper's naive, Alg. 1)".into(),
        "percona56" => "percona56 (Percona's, Alg. 2)".into(),
        "self-tuning" => "self-tuning (the paper's, Alg. 3)".into(),
        "flushwise" => "flushwise (ours, not in the paper)".into(),
        other => other.into(),
    }
}

/// Draws `entry` from `runs` into `svg` (and its PNG beside it).
fn draw(entry: &Entry, runs: &DrawnStudy<'_>, svg: &Path) -> Result<(), String> {
    let emphasized = |s: &str| s == "flushwise";
    match entry.view {
        View::ByX { metrics, one_line } => {
            let xs = runs.xs();
            let panels: Vec<Panel> = metrics
                .iter()
                .map(|&metric| {
                    let line_of = |names: &[&str]| -> Vec<(f64, f64)> {
                        let mut points: Vec<(f64, f64)> = names
                            .iter()
                            .flat_map(|name| runs.of(name))
                            .filter_map(|(x, d)| d.summary(metric).map(|v| (x, v)))
                            .collect();
                        points.sort_by(|a, b| a.0.total_cmp(&b.0));
                        points
                    };
                    let mut series: Vec<Series> = match one_line {
                        Some(label) => vec![Series::line(label, line_of(&runs.series()), false)],
                        None => runs
                            .series()
                            .into_iter()
                            .map(|name| Series::line(legend_name(name), line_of(&[name]), emphasized(name)))
                            .collect(),
                    };
                    series.extend(paper_series(entry.paper, metric, &xs));
                    Panel {
                        title: if metrics.len() > 1 {
                            metric.label()
                        } else {
                            entry.title.to_string()
                        },
                        x_label: runs.x_label.to_string(),
                        y_label: Some(metric.label()),
                        series,
                    }
                })
                .collect();
            let layout = Layout {
                columns: metrics.len(),
                shared_y: metrics.len() == 1,
                log_x_if_wide: true,
            };
            plot::panels_svg_with(svg, &panels, "", layout)?;
        }
        View::OverTime { panels } => {
            let mut end_s: f64 = 0.0;
            let mut drawn: Vec<Panel> = Vec::new();
            let metrics: BTreeSet<String> = panels.iter().map(|p| p.metric.column()).collect();
            for p in panels {
                let names: Vec<&str> = if p.series.is_empty() {
                    runs.series()
                } else {
                    p.series.to_vec()
                };
                let mut series: Vec<Series> = Vec::new();
                for name in names {
                    for (_, d) in runs.of(name) {
                        let points = time_points(d, p.metric);
                        end_s = points.iter().map(|(t, _)| *t).fold(end_s, f64::max);
                        series.push(Series::line(legend_name(name), points, emphasized(name)));
                    }
                }
                drawn.push(Panel {
                    title: p.title.to_string(),
                    x_label: TIME_LABEL.into(),
                    y_label: Some(p.metric.label()),
                    series,
                });
            }
            for (panel, p) in drawn.iter_mut().zip(panels.iter()) {
                panel.series.extend(paper_time_series(entry.paper, p.metric, end_s));
            }
            let layout = Layout {
                columns: panels.len().min(2),
                shared_y: metrics.len() == 1,
                log_x_if_wide: false,
            };
            plot::panels_svg_with(svg, &drawn, "", layout)?;
        }
        View::Io { series } => {
            let Some((_, d)) = runs.of(series).first().copied() else {
                return Err(format!("{}: the run of {series} failed; nothing to draw", entry.name));
            };
            let per_s = |f: fn(&IntervalPoint) -> u64| -> Vec<(f64, f64)> {
                d.intervals
                    .iter()
                    .map(|i| (i.since_start_s, f(i) as f64 / d.interval_s.max(1e-9)))
                    .collect()
            };
            let io = Panel {
                title: format!("I/O activities, {series}"),
                x_label: TIME_LABEL.into(),
                y_label: Some("pages per second".into()),
                series: vec![
                    Series::line("reads", per_s(|i| i.reads), false),
                    Series::line("asynchronous writes", per_s(|i| i.async_writes), false),
                    Series::line("synchronous writes", per_s(|i| i.sync_writes), true),
                ],
            };
            let dirty = Panel {
                title: format!("dirty pages, {series}"),
                x_label: TIME_LABEL.into(),
                y_label: Some(Metric::DirtyPct.label()),
                series: vec![Series::line("dirty pages", time_points(d, Metric::DirtyPct), false)],
            };
            plot::panels_svg_with(svg, &[io, dirty], "", TWO_TIME_PANELS)?;
        }
        View::Pages { series } => {
            let Some((_, d)) = runs.of(series).first().copied() else {
                return Err(format!("{}: the run of {series} failed; nothing to draw", entry.name));
            };
            let frames = d.frames as f64;
            let dirty: Vec<(f64, f64)> = d
                .intervals
                .iter()
                .map(|i| (i.since_start_s, i.dirty_pct / 100.0 * frames))
                .collect();
            let free: Vec<(f64, f64)> = d
                .intervals
                .iter()
                .map(|i| (i.since_start_s, f64::from(i.free_pages)))
                .collect();
            let clean: Vec<(f64, f64)> = dirty
                .iter()
                .zip(&free)
                .map(|(&(t, dp), &(_, fp))| (t, (frames - dp - fp).max(0.0)))
                .collect();
            let end_s = d.intervals.last().map_or(0.0, |i| i.since_start_s);
            let mut pages = Panel {
                title: format!("pages in the buffer pool, {series}"),
                x_label: TIME_LABEL.into(),
                y_label: Some("pages".into()),
                series: vec![
                    Series::line("dirty pages", dirty, true),
                    Series::line("clean pages", clean, false),
                    Series::line("free pages", free, false),
                ],
            };
            for p in entry.paper.iter().filter(|p| p.metric == Metric::DirtyPct) {
                pages.series.push(Series::paper(
                    "dirty pages (paper)",
                    vec![(end_s, p.value / 100.0 * frames)],
                ));
            }
            let throughput = Panel {
                title: "throughput".into(),
                x_label: TIME_LABEL.into(),
                y_label: Some(Metric::Nopm.label()),
                series: vec![Series::line(series, time_points(d, Metric::Nopm), false)],
            };
            plot::panels_svg_with(svg, &[pages, throughput], "", TWO_TIME_PANELS)?;
        }
        View::Averages { baseline, paper } => {
            let base = runs.of(baseline).first().map(|(_, d)| d.nopm).unwrap_or(0.0);
            let mut bars = Vec::new();
            for (name, paper_ratio) in paper {
                let ours = runs.of(name).first().map(|(_, d)| d.nopm);
                if let Some(ours) = ours.filter(|_| base > 0.0) {
                    bars.push(Bar {
                        label: legend_name(name),
                        value: ours / base,
                        paper: false,
                    });
                }
                bars.push(Bar {
                    label: format!("{} (paper)", legend_name(name)),
                    value: *paper_ratio,
                    paper: true,
                });
            }
            plot::bars_svg(
                svg,
                &format!("{}: NOPM / {baseline}'s (filled: ours, hollow: paper)", entry.title),
                &format!("throughput relative to {baseline}"),
                &bars,
            )?;
        }
    }
    plot::png_from_svg(svg, &svg.with_extension("png"))
}

/// The series an entry shows (its table's rows).
fn shown_series<'a>(entry: &Entry, runs: &'a DrawnStudy<'a>) -> Vec<&'a str> {
    let all = runs.series();
    let named: Vec<&str> = match entry.view {
        View::ByX { .. } => return all,
        View::OverTime { panels } => {
            if panels.iter().any(|p| p.series.is_empty()) {
                return all;
            }
            panels.iter().flat_map(|p| p.series.iter().copied()).collect()
        }
        View::Io { series } | View::Pages { series } => vec![series],
        View::Averages { paper, .. } => paper.iter().map(|(s, _)| *s).collect(),
    };
    all.into_iter().filter(|s| named.contains(s)).collect()
}

/// What `result.json` holds: everything the report shows of an entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EntryResult {
    pub name: String,
    pub reproduces: String,
    pub title: String,
    pub claim: String,
    pub shell: String,
    pub study: String,
    pub scale: String,
    pub seed: u64,
    pub commit: String,
    pub command: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub verdicts: Vec<Verdict>,
    pub notes: Vec<String>,
    pub figure_svg: String,
    pub figure_png: String,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct LabRequest {
    /// Entry names (`all` expanded by the caller).
    pub entries: Vec<String>,
    pub full: bool,
    pub seed: u64,
    pub jobs: Option<usize>,
    pub out: PathBuf,
}

/// What a `lab run` of entries did.
pub struct LabRun {
    pub results: Vec<EntryResult>,
    pub runs_total: usize,
    pub runs_done: usize,
    pub wall_seconds: f64,
    pub notes: Vec<String>,
}

/// Runs the entries' studies and writes each entry's files.
pub fn run(request: &LabRequest) -> Result<LabRun, String> {
    let started = Instant::now();
    let mut entries: Vec<&'static Entry> = Vec::new();
    for name in &request.entries {
        let e = catalog::entry(name).ok_or_else(|| format!("no catalog entry named {name}"))?;
        if e.on_engine() {
            return Err(format!(
                "{name} runs on the engine: the command line runs it (`flushwise lab run {name}`)"
            ));
        }
        entries.push(e);
    }
    let mut study_names: Vec<&str> = Vec::new();
    for e in &entries {
        if !study_names.contains(&e.study) {
            study_names.push(e.study);
        }
    }
    let studies: Vec<Study> = study_names
        .iter()
        .map(|name| catalog::study(name, request.full, request.seed))
        .collect::<Result<_, _>>()?;
    let configs: Vec<SimConfig> = studies
        .iter()
        .flat_map(|s| s.runs.iter().map(|r| r.config.clone()))
        .collect();
    for c in &configs {
        c.validate()?;
    }
    let runs_total = configs.len();
    let jobs = request.jobs.unwrap_or_else(runner::default_jobs);
    let cache = request.out.join(".cache").join(format!("lab-{COMMIT}.jsonl"));
    let done = run_cache::run_all(configs, jobs, &cache, "lab", RunDigest::of)?;
    let mut notes: Vec<String> = done.failures.iter().map(|f| format!("run failed: {f}")).collect();
    let mut results = Vec::new();
    for e in entries {
        let study = studies
            .iter()
            .find(|s| s.name == e.study)
            .ok_or_else(|| format!("{}: study {} was not built", e.name, e.study))?;
        let runs = DrawnStudy::new(
            study.name,
            &study.scale,
            study.x_label,
            &study.notes,
            flushwise_sim::SHELL_SIMULATOR,
            study
                .runs
                .iter()
                .map(|r| (r.series.as_str(), r.x, done.records.get(&r.config.config_hash()))),
        );
        match write_entry(e, &runs, request) {
            Ok(result) => results.push(result),
            Err(err) => notes.push(format!("{}: {err}", e.name)),
        }
    }
    Ok(LabRun {
        results,
        runs_total,
        runs_done: done.ran,
        wall_seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

fn write_err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot write {}: {e}", path.display())
}

/// Writes `<out>/<entry>/`: figure, CSVs, result.json (the engine's
/// entries come here from the command line, which runs them).
pub fn write_entry(entry: &Entry, runs: &DrawnStudy<'_>, request: &LabRequest) -> Result<EntryResult, String> {
    let dir = request.out.join(entry.name);
    fs::create_dir_all(&dir).map_err(|e| write_err(&dir, e))?;
    let svg = dir.join("figure.svg");
    draw(entry, runs, &svg)?;

    let shown = shown_series(entry, runs);
    let mut csv = Csv::default();
    let mut intervals = Csv::default();
    let mut rows = Vec::new();
    let has_x = !runs.x_label.is_empty();
    for run in &runs.runs {
        let Some(d) = run.digest else { continue };
        let mut row = vec![
            ("entry".to_string(), entry.name.to_string()),
            ("study".to_string(), runs.name.to_string()),
            ("series".to_string(), run.series.to_string()),
            ("x".to_string(), format!("{}", run.x)),
        ];
        let cells = render::flatten(d);
        row.extend(cells.into_iter().filter(|(k, _)| k != "intervals"));
        csv.push(row);
        for i in &d.intervals {
            let mut row = vec![
                ("series".to_string(), run.series.to_string()),
                ("x".to_string(), format!("{}", run.x)),
                ("config_hash".to_string(), d.config_hash.clone()),
                ("seed".to_string(), d.seed.to_string()),
                ("commit".to_string(), d.commit.clone()),
            ];
            row.extend(render::flatten(i));
            intervals.push(row);
        }
        if shown.contains(&run.series) {
            let mut cells = vec![run.series.to_string()];
            if has_x {
                cells.push(format!("{}", run.x));
            }
            cells.extend([
                format!("{:.0}", d.nopm),
                format!("{:.3}", d.nopm_cov),
                format!("{:.2}", d.sync_write_pct),
                format!("{:.2}", d.io_per_txn),
                format!("{:.1}", d.dirty_pct_avg),
                format!("{:.4}", d.hit_ratio),
            ]);
            rows.push(cells);
        }
    }
    let runs_csv = dir.join("runs.csv");
    fs::write(&runs_csv, csv.render()).map_err(|e| write_err(&runs_csv, e))?;
    let intervals_csv = dir.join("intervals.csv");
    fs::write(&intervals_csv, intervals.render()).map_err(|e| write_err(&intervals_csv, e))?;

    let mut header = vec!["series".to_string()];
    if has_x {
        header.push(runs.x_label.to_string());
    }
    header.extend(
        [
            "NOPM",
            "NOPM C.O.V.",
            "sync writes %",
            "I/O per txn",
            "dirty % (avg)",
            "hit ratio",
        ]
        .map(String::from),
    );
    let verdicts: Vec<Verdict> = entry.claims.iter().map(|c| verdict(c, runs)).collect();
    let mut notes = runs.notes.to_vec();
    let missing = runs.runs.iter().filter(|r| r.digest.is_none()).count();
    if missing > 0 {
        notes.push(format!("{missing} run(s) of the study failed; their rows are missing"));
    }
    let result = EntryResult {
        name: entry.name.into(),
        reproduces: entry.reproduces.into(),
        title: entry.title.into(),
        claim: entry.claim.into(),
        shell: runs.shell.into(),
        study: runs.name.into(),
        scale: runs.scale.to_string(),
        seed: request.seed,
        commit: COMMIT.into(),
        command: format!(
            "flushwise lab run {}{}{}",
            entry.name,
            if request.full { " --full" } else { "" },
            if request.seed != 1 {
                format!(" --seed {}", request.seed)
            } else {
                String::new()
            }
        ),
        header,
        rows,
        verdicts,
        notes,
        figure_svg: "figure.svg".into(),
        figure_png: "figure.png".into(),
    };
    let json = dir.join("result.json");
    let text = serde_json::to_string_pretty(&result).map_err(|e| write_err(&json, e))?;
    fs::write(&json, text).map_err(|e| write_err(&json, e))?;
    Ok(result)
}

/// The human summary of one entry's result (table and verdicts).
pub fn result_text(r: &EntryResult) -> String {
    let mut out = format!(
        "{} — {} ({}), {}\n{}\n",
        r.name, r.reproduces, r.shell, r.title, r.scale
    );
    out.push_str(&render::render_table(&r.header, &r.rows));
    for v in &r.verdicts {
        out.push_str(&format!(
            "  [{}] {}: paper {}, ours {}\n",
            v.outcome.text(),
            v.claim,
            v.paper,
            v.ours
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An `<img>` of an SVG file, inlined as a data URI.
fn inline_svg(path: &Path, alt: &str) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Some(format!(
        "<img src=\"data:image/svg+xml;base64,{data}\" alt=\"{}\">",
        html_escape(alt)
    ))
}

/// The page's own check: whether every image decoded, written on the body
/// (`data-images-loaded="ok/total"`) for a headless browser to read back.
const IMAGE_CHECK_SCRIPT: &str = r#"<script>
// `report.html#only=NAME` shows that entry's section alone (screenshots).
if (location.hash.indexOf('#only=') === 0) {
  var only = decodeURIComponent(location.hash.slice(6));
  Array.prototype.forEach.call(document.querySelectorAll('body > *'), function (el) {
    if (el.tagName !== 'SCRIPT' && el.id !== only) { el.style.display = 'none'; }
  });
}
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-images-loaded', ok + '/' + imgs.length);
  var p = document.getElementById('image-check');
  if (p) { p.textContent = ok + ' of ' + imgs.length + ' figures loaded'; }
});
</script>"#;

const STYLE: &str = "body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2.2em;border-top:1px solid #ccc;padding-top:1em}\
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}\
th{background:#f3f3f3}td:first-child,th:first-child,.summary td:nth-child(2){text-align:left}img{max-width:100%;border:1px solid #eee}\
.matches{color:#1a7f37;font-weight:bold}.same_direction{color:#9a6700;font-weight:bold}.differs{color:#cf222e;font-weight:bold}\
.no_data{color:#666}code{background:#f6f8fa;padding:.1em .3em}.meta{color:#555;font-size:.9em}";

/// Writes `<out>/report.html` from every entry's `result.json` (entries
/// not run yet are listed with the command that runs them) and the
/// own-policy matrix's figure if it was drawn. Returns the path.
pub fn report(out: &Path) -> Result<PathBuf, String> {
    let mut body = String::new();
    let mut summary = String::new();
    let mut sections = 0usize;
    for e in catalog::ENTRIES {
        let dir = out.join(e.name);
        let result: Option<EntryResult> = fs::read_to_string(dir.join("result.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let Some(r) = result else {
            summary.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td colspan=\"4\">not run yet: <code>flushwise lab run {}</code></td></tr>\n",
                e.name,
                html_escape(e.reproduces),
                e.name
            ));
            continue;
        };
        sections += 1;
        let count = |o: Outcome| r.verdicts.iter().filter(|v| v.outcome == o).count();
        summary.push_str(&format!(
            "<tr><td><a href=\"#{n}\">{n}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            html_escape(&r.reproduces),
            count(Outcome::Matches),
            count(Outcome::SameDirection),
            count(Outcome::Differs),
            html_escape(&r.commit),
            n = r.name
        ));
        body.push_str(&format!(
            "<section id=\"{n}\">\n<h2>{n}: {}</h2>\n<p class=\"meta\">{} · {} · {} · seed {} · commit {}</p>\n<p><b>The paper:</b> {}</p>\n",
            html_escape(&r.title),
            html_escape(&r.reproduces),
            html_escape(&r.shell),
            html_escape(&r.scale),
            r.seed,
            html_escape(&r.commit),
            html_escape(&r.claim),
            n = r.name
        ));
        match inline_svg(&dir.join(&r.figure_svg), &r.title) {
            Some(img) => body.push_str(&format!(
                "<p>{img}</p>\n<p class=\"meta\">files: <a href=\"{n}/figure.svg\">SVG</a> · <a href=\"{n}/figure.png\">PNG</a> · <a href=\"{n}/runs.csv\">runs.csv</a> · <a href=\"{n}/intervals.csv\">intervals.csv</a></p>\n",
                n = r.name
            )),
            None => body.push_str("<p class=\"differs\">figure missing: rerun the command below</p>\n"),
        }
        body.push_str("<table><tr>");
        for h in &r.header {
            body.push_str(&format!("<th>{}</th>", html_escape(h)));
        }
        body.push_str("</tr>\n");
        for row in &r.rows {
            body.push_str("<tr>");
            for c in row {
                body.push_str(&format!("<td>{}</td>", html_escape(c)));
            }
            body.push_str("</tr>\n");
        }
        body.push_str("</table>\n");
        if !r.verdicts.is_empty() {
            body.push_str("<table><tr><th>claim</th><th>paper</th><th>ours</th><th>verdict</th></tr>\n");
            for v in &r.verdicts {
                let class = serde_json::to_value(v.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                body.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>\n",
                    html_escape(&v.claim),
                    html_escape(&v.paper),
                    html_escape(&v.ours),
                    v.outcome.text()
                ));
            }
            body.push_str("</table>\n");
        } else {
            body.push_str("<p class=\"meta\">The text gives no number or direction to check here: the figure is the result.</p>\n");
        }
        for n in &r.notes {
            body.push_str(&format!("<p class=\"meta\">note: {}</p>\n", html_escape(n)));
        }
        body.push_str(&format!(
            "<p class=\"meta\">regenerate: <code>{}</code></p>\n</section>\n",
            html_escape(&r.command)
        ));
    }
    let matrix_svg = out.join(format!("{}.svg", crate::own_policy_matrix::MATRIX_NAME));
    if let Some(img) = inline_svg(&matrix_svg, "own-policy matrix") {
        sections += 1;
        body.push_str(&format!(
            "<section id=\"own-policy-matrix\">\n<h2>own-policy-matrix: every policy against the tuned oracle</h2>\n\
             <p><b>Issue #12:</b> NOPM of every policy at its defaults over the best fixed setting of MySQL 5.6 or Percona's two knobs, by device, size and load (simulator). The verdicts per cell are in <a href=\"{m}.csv\">{m}.csv</a>.</p>\n<p>{img}</p>\n\
             <p class=\"meta\">regenerate: <code>flushwise lab run own-policy-matrix</code></p>\n</section>\n",
            m = crate::own_policy_matrix::MATRIX_NAME
        ));
    }
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>flushwise lab report</title><style>{STYLE}</style></head>\n<body>\n\
         <h1>flushwise lab report</h1>\n<p class=\"meta\">{sections} experiments drawn · report written by commit {COMMIT} · \
         <span id=\"image-check\">figures not checked (scripts off)</span></p>\n\
         <p>Each section reproduces one figure or table of the papers in <code>shared/papers/</code>: the paper's claim, our figure (squares: the paper's own values where its text gives them), our table, and a verdict per claim computed from our runs: <span class=\"matches\">matches</span> (within 5% of the paper's value or range), <span class=\"same_direction\">same direction</span>, or <span class=\"differs\">differs</span>. EXPERIMENTS.md discusses why where they differ.</p>\n\
         <table class=\"summary\"><tr><th>entry</th><th>reproduces</th><th>matches</th><th>same direction</th><th>differs</th><th>commit</th></tr>\n{summary}</table>\n{body}{IMAGE_CHECK_SCRIPT}\n</body></html>\n"
    );
    fs::create_dir_all(out).map_err(|e| write_err(out, e))?;
    let path = out.join("report.html");
    fs::write(&path, html).map_err(|e| write_err(&path, e))?;
    Ok(path)
}

/// A headless Chromium on this machine: `$FLUSHWISE_CHROMIUM`, or the
/// first of `chromium`, `chromium-browser`, `google-chrome` on the PATH.
pub fn find_chromium() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("FLUSHWISE_CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(
        "no headless browser: install Debian's chromium (`apt-get install chromium`) \
         or set FLUSHWISE_CHROMIUM to one"
            .into(),
    )
}

fn chromium(browser: &Path, args: &[String]) -> Result<std::process::Output, String> {
    std::process::Command::new(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--allow-file-access-from-files",
        ])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", browser.display()))
}

/// Opens `report` in headless Chromium and returns (images loaded, images
/// on the page), as the page's own script counted them.
pub fn check_in_browser(report: &Path) -> Result<(usize, usize), String> {
    let browser = find_chromium()?;
    let url = file_url(report)?;
    let out = chromium(
        &browser,
        &["--virtual-time-budget=20000".into(), "--dump-dom".into(), url],
    )?;
    let dom = String::from_utf8_lossy(&out.stdout);
    let marker = "data-images-loaded=\"";
    let Some(at) = dom.find(marker) else {
        return Err(format!(
            "{} loaded {} without running its image check (exit {}): {}",
            browser.display(),
            report.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        ));
    };
    let rest = &dom[at + marker.len()..];
    let value = rest.split('"').next().unwrap_or("");
    let (ok, total) = value
        .split_once('/')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| format!("unreadable image count {value:?} in {}", report.display()))?;
    Ok((ok, total))
}

/// A screenshot of `report` (of entry `anchor`'s section alone, if given) at 1400 x
/// `height` pixels, written to `png`.
pub fn screenshot(report: &Path, anchor: Option<&str>, height: u32, png: &Path) -> Result<(), String> {
    let browser = find_chromium()?;
    let mut url = file_url(report)?;
    if let Some(a) = anchor {
        // The page's script shows that section alone (a scrolled
        // headless screenshot comes out blank).
        url.push_str("#only=");
        url.push_str(a);
    }
    let png_abs = std::path::absolute(png).map_err(|e| write_err(png, e))?;
    let out = chromium(
        &browser,
        &[
            format!("--screenshot={}", png_abs.display()),
            format!("--window-size=1400,{height}"),
            "--virtual-time-budget=20000".into(),
            url,
        ],
    )?;
    if !png_abs.is_file() {
        return Err(format!(
            "{} wrote no screenshot to {} (exit {}): {}",
            browser.display(),
            png_abs.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        ));
    }
    Ok(())
}

fn file_url(path: &Path) -> Result<String, String> {
    let abs = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("file://{}", abs.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(nopm: f64, sync: f64) -> RunDigest {
        RunDigest {
            config_hash: format!("{nopm}-{sync}"),
            commit: "c".into(),
            seed: 1,
            policy: "p".into(),
            frames: 100,
            interval_s: 1.0,
            nopm,
            nopm_cov: 0.0,
            sync_write_pct: sync,
            io_per_txn: 1.0,
            hit_ratio: 0.9,
            dirty_pct_avg: 50.0,
            checkpoint_age_avg_mib: 1.0,
            final_parameters: vec![],
            wall_seconds: 0.0,
            intervals: vec![],
        }
    }

    fn study_of<'a>(series: &[(&'a str, f64)], digests: &'a [RunDigest]) -> DrawnStudy<'a> {
        DrawnStudy {
            name: "t",
            scale: "s",
            x_label: "x",
            notes: &[],
            shell: "simulator",
            runs: series
                .iter()
                .enumerate()
                .map(|(i, (s, x))| DrawnRun {
                    series: s,
                    x: *x,
                    digest: digests.get(i),
                })
                .collect(),
        }
    }

    #[test]
    fn a_ratio_claim_matches_within_five_percent_and_otherwise_reports_the_direction() {
        let series = [("a", 1.0), ("b", 1.0), ("a", 2.0), ("b", 2.0)];
        let ds = [
            digest(150.0, 0.0),
            digest(100.0, 0.0),
            digest(120.0, 0.0),
            digest(100.0, 0.0),
        ];
        let runs = study_of(&series, &ds);
        let claim = |lo: f64, hi: f64| Claim::Ratio {
            text: "a over b",
            metric: Metric::Nopm,
            num: "a",
            den: "b",
            lo,
            hi,
        };
        assert_eq!(verdict(&claim(1.2, 1.5), &runs).outcome, Outcome::Matches);
        let v = verdict(&claim(1.9, 2.1), &runs);
        assert_eq!(v.outcome, Outcome::SameDirection);
        assert_eq!(v.ours, "1.20-1.50x over 2 points");
        assert_eq!(verdict(&claim(0.7, 0.8), &runs).outcome, Outcome::Differs);
        assert_eq!(verdict(&claim(1.0, f64::INFINITY), &runs).outcome, Outcome::Matches);
        let missing = study_of(&series, &[]);
        assert_eq!(verdict(&claim(1.2, 1.5), &missing).outcome, Outcome::NoData);
    }

    #[test]
    fn bound_and_range_claims_compare_every_point() {
        let ds = [digest(1.0, 0.0), digest(1.0, 0.05)];
        let runs = study_of(&[("a", 1.0), ("a", 2.0)], &ds);
        let at_most = |bound: f64| Claim::AtMost {
            text: "t",
            metric: Metric::SyncWritePct,
            series: "a",
            bound,
        };
        assert_eq!(verdict(&at_most(0.04), &runs).outcome, Outcome::SameDirection);
        assert_eq!(verdict(&at_most(0.05), &runs).outcome, Outcome::Matches);
        let within = |lo: f64, hi: f64| Claim::Within {
            text: "t",
            metric: Metric::SyncWritePct,
            series: "a",
            lo,
            hi,
        };
        assert_eq!(verdict(&within(0.04, 0.2), &runs).outcome, Outcome::Matches);
        assert_eq!(verdict(&within(8.9, 9.7), &runs).outcome, Outcome::Differs);
    }

    #[test]
    fn the_report_lists_entries_not_run_with_their_command_and_checks_its_images() {
        let dir = tempfile::tempdir().unwrap();
        let path = report(dir.path()).unwrap();
        let html = fs::read_to_string(path).unwrap();
        assert!(html.contains("not run yet: <code>flushwise lab run 000-fig2</code>"));
        assert!(html.contains("data-images-loaded"));
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "no network needed"
        );
    }
}
