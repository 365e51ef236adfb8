//! Running simulations: one at a time with a progress bar, or many on a few
//! threads.
//!
//! Each run is a pure function of its configuration (the simulator has one
//! seeded PRNG and no wall clock in the model), so running a grid on threads
//! changes nothing but the wall time: results are placed by index, never by
//! completion order. Progress bars go to stderr only when stderr is a
//! terminal, so piped output is never interleaved with bar redraws.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use flushwise_core::{Decision, IterationRecord};
use flushwise_sim::{IntervalRow, LiveSample, RunResult, SimConfig, Simulation};

use crate::COMMIT;

/// What one run leaves behind.
pub struct RunOutput {
    pub result: RunResult,
    pub rows: Vec<IntervalRow>,
    pub decisions: Vec<Decision>,
    pub decisions_dropped: u64,
    /// One record per page-cleaner iteration, when asked for.
    pub iterations: Vec<IterationRecord>,
    pub iterations_dropped: u64,
}

/// Progress bars only when a person is watching stderr.
pub fn progress_enabled() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar on stderr of `len` steps, drawn with `template` after `label`.
fn styled_bar(len: u64, template: &str, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(label.to_string());
    bar
}

/// A bar of `len` counted steps (trials, runs) with an ETA, after `label`.
pub fn count_bar(len: u64, label: &str) -> ProgressBar {
    styled_bar(len, "{prefix:>12} [{bar:30}] {pos}/{len} {elapsed}/{eta}", label)
}

/// One run's bar: its share of simulated time, in thousandths.
fn bar(label: &str) -> ProgressBar {
    styled_bar(1000, "{prefix:>24} [{bar:30}] {percent:>3}% {elapsed}/{eta}", label)
}

/// Runs one configuration; `bar` (if any) follows the simulated time.
pub fn run_one(config: SimConfig, bar: Option<&ProgressBar>) -> Result<RunOutput, String> {
    run_one_live(config, bar, None)
}

/// [`run_one`], handing `live` (if any) the run as it stands every 100 ms
/// of simulated time and at its end (`Simulation::live_sample`; the
/// policy's decision log is kept for it).
pub fn run_one_live(
    config: SimConfig,
    bar: Option<&ProgressBar>,
    live: Option<&dyn Fn(&LiveSample)>,
) -> Result<RunOutput, String> {
    let mut sim = Simulation::new(config, COMMIT)?;
    if live.is_some() {
        sim.keep_decision_log();
    }
    let end_us = sim.end_us().max(1) as f64;
    let result = sim.run_observed(|sim, now| {
        if let Some(bar) = bar {
            bar.set_position((now as f64 / end_us * 1000.0) as u64);
        }
        if let Some(publish) = live {
            publish(&sim.live_sample(now));
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let rows = sim.rows().to_vec();
    let decisions = sim.decisions().entries().cloned().collect();
    let decisions_dropped = sim.decisions().dropped();
    let (iterations, iterations_dropped) = sim.take_iteration_records();
    Ok(RunOutput {
        result,
        rows,
        decisions,
        decisions_dropped,
        iterations,
        iterations_dropped,
    })
}

/// Runs one configuration with a progress bar when stderr is a terminal;
/// `live` as in [`run_one_live`].
pub fn run_with_progress(
    config: SimConfig,
    label: &str,
    live: Option<&dyn Fn(&LiveSample)>,
) -> Result<RunOutput, String> {
    let bar = progress_enabled().then(|| bar(label));
    run_one_live(config, bar.as_ref(), live)
}

/// Default parallelism: the machine's cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs every configuration on up to `jobs` threads; results in input order.
pub fn run_many(configs: Vec<(String, SimConfig)>, jobs: usize) -> Vec<Result<RunOutput, String>> {
    let n = configs.len();
    let jobs = jobs.clamp(1, n.max(1));
    let multi = progress_enabled().then(MultiProgress::new);
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<RunOutput, String>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((label, config)) = configs.get(i) else { break };
                let bar = multi.as_ref().map(|m| m.add(bar(label)));
                let out = run_one(config.clone(), bar.as_ref());
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(out);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err("a simulation thread panicked".to_string()))
        })
        .collect()
}

/// Runs every configuration on up to `jobs` threads, handing each outcome
/// to `done` as it finishes (in completion order), under one progress bar
/// with an ETA for the whole batch: for grids of hundreds of short runs,
/// where a bar per run would be noise and a result kept per run would
/// hold every run's rows in memory.
pub fn run_each<F>(configs: Vec<SimConfig>, jobs: usize, label: &str, done: F)
where
    F: Fn(&SimConfig, Result<RunOutput, String>) + Sync,
{
    let n = configs.len();
    if n == 0 {
        return;
    }
    let jobs = jobs.clamp(1, n);
    let total = progress_enabled().then(|| {
        styled_bar(
            n as u64,
            "{prefix:>24} [{bar:30}] {pos}/{len} runs {elapsed}/{eta}",
            label,
        )
    });
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(config) = configs.get(i) else { break };
                let out = run_one(config.clone(), None);
                done(config, out);
                if let Some(bar) = &total {
                    bar.inc(1);
                }
            });
        }
    });
    if let Some(bar) = total {
        bar.finish_and_clear();
    }
}
