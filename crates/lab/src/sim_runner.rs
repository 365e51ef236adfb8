//! Running simulations: one at a time with a progress bar, or many on a few
//! threads.
//!
//! Each run is a pure function of its configuration (the simulator has one
//! seeded PRNG and no wall clock in the model), so running a grid on threads
//! changes nothing but the wall time: results are placed by index, never by
//! completion order. Progress bars go to stderr only when stderr is a
//! terminal, so piped output is never interleaved with bar redraws.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

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

impl RunOutput {
    /// Everything the finished `sim` leaves, with its `result`.
    fn of(sim: &mut Simulation, result: RunResult) -> Self {
        let (iterations, iterations_dropped) = sim.take_iteration_records();
        Self {
            result,
            rows: sim.rows().to_vec(),
            decisions: sim.decisions().entries().cloned().collect(),
            decisions_dropped: sim.decisions().dropped(),
            iterations,
            iterations_dropped,
        }
    }

    /// A result alone (no rows, decisions or iteration records).
    fn result_only(result: RunResult) -> Self {
        Self {
            result,
            rows: Vec::new(),
            decisions: Vec::new(),
            decisions_dropped: 0,
            iterations: Vec::new(),
            iterations_dropped: 0,
        }
    }
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
    Ok(RunOutput::of(&mut sim, result))
}

/// One simulation standing for a group of configurations that differ only
/// in their policy's parameters ([`Simulation::new_lockstep`]).
pub struct LockstepOutput {
    /// The first configuration's run, in full.
    pub primary: RunOutput,
    /// Per other configuration: its result when its policy never decided
    /// differently from the first's (then its run is the first's, figure
    /// for figure: the result carries its own configuration hash, policy
    /// and final parameters, and 0 wall seconds; interval rows, decisions
    /// and iteration records are not kept for it), `None` when it did (it
    /// needs a run of its own).
    pub shadows: Vec<Option<RunOutput>>,
}

/// Runs `primary` with `shadows` in lockstep (see [`LockstepOutput`]).
/// Every shadow must equal `primary` but for its policy's parameters.
pub fn run_lockstep(primary: SimConfig, shadows: &[SimConfig]) -> Result<LockstepOutput, String> {
    for shadow in shadows {
        let alike = SimConfig {
            policy: primary.policy.clone(),
            ..shadow.clone()
        };
        if alike.config_hash() != primary.config_hash() || shadow.policy.name() != primary.policy.name() {
            return Err(format!(
                "{} cannot run in lockstep with {}: they differ in more than the policy's parameters",
                shadow.policy, primary.policy
            ));
        }
    }
    let specs: Vec<_> = shadows.iter().map(|c| c.policy.clone()).collect();
    let (mut sim, watch) = Simulation::new_lockstep(primary, COMMIT, &specs)?;
    let result = sim.run_observed(|_, _| {})?;
    let shadow_outputs = shadows
        .iter()
        .zip(watch.states())
        .map(|(config, state)| {
            state.diverged_at_us.is_none().then(|| {
                RunOutput::result_only(RunResult {
                    config_hash: config.config_hash(),
                    policy: config.policy.to_string(),
                    final_parameters: state.parameters.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
                    // It cost no simulation of its own.
                    wall_seconds: 0.0,
                    requests_per_second: None,
                    ..result.clone()
                })
            })
        })
        .collect();
    Ok(LockstepOutput {
        primary: RunOutput::of(&mut sim, result),
        shadows: shadow_outputs,
    })
}

/// Runs each group in lockstep ([`run_lockstep`]: the first configuration
/// with the rest as shadows) on up to `jobs` threads, handing each outcome
/// to `done` as it finishes, under one progress bar counting simulations.
/// `done` returns the groups to simulate next (the shadows that diverged,
/// grouped again); they go to the front of the queue, so a group's
/// follow-ups start as soon as it ends and no thread waits for a round of
/// others to finish.
pub fn run_groups<F>(groups: Vec<Vec<SimConfig>>, jobs: usize, label: &str, done: F)
where
    F: Fn(&[SimConfig], Result<LockstepOutput, String>) -> Vec<Vec<SimConfig>> + Sync,
{
    on_threads(groups, jobs, label, "simulations", |group| {
        let out = match group.split_first() {
            Some((primary, shadows)) => run_lockstep(primary.clone(), shadows),
            None => Err("an empty lockstep group".to_string()),
        };
        done(&group, out)
    });
}

/// Calls `work` on every item on up to `jobs` threads (in completion
/// order), under one progress bar of `unit`s with an ETA when a person
/// watches stderr. The items `work` returns are queued in front of the
/// rest (in their order) and worked on the same way; the call returns
/// when the queue is empty and no thread is working.
fn on_threads<T: Send>(items: Vec<T>, jobs: usize, label: &str, unit: &str, work: impl Fn(T) -> Vec<T> + Sync) {
    if items.is_empty() {
        return;
    }
    let jobs = jobs.clamp(1, items.len());
    let total = progress_enabled().then(|| {
        styled_bar(
            items.len() as u64,
            &format!("{{prefix:>24}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{elapsed}}/{{eta}}"),
            label,
        )
    });
    /// The queue, and how many threads hold an item of it.
    struct Work<T> {
        queue: VecDeque<T>,
        busy: usize,
    }
    let state = Mutex::new(Work {
        queue: VecDeque::from(items),
        busy: 0,
    });
    let wake = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let item = {
                    let Ok(mut w) = state.lock() else { return };
                    loop {
                        if let Some(item) = w.queue.pop_front() {
                            w.busy += 1;
                            break item;
                        }
                        if w.busy == 0 {
                            // Nothing queued and nobody can queue more.
                            wake.notify_all();
                            return;
                        }
                        w = match wake.wait(w) {
                            Ok(w) => w,
                            Err(_) => return,
                        };
                    }
                };
                let more = work(item);
                if let Some(bar) = &total {
                    bar.inc(1);
                    bar.inc_length(more.len() as u64);
                }
                let Ok(mut w) = state.lock() else { return };
                for item in more.into_iter().rev() {
                    w.queue.push_front(item);
                }
                w.busy -= 1;
                wake.notify_all();
            });
        }
    });
    if let Some(bar) = total {
        bar.finish_and_clear();
    }
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
    on_threads(configs, jobs, label, "runs", |config| {
        let out = run_one(config.clone(), None);
        done(&config, out);
        Vec::new()
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use flushwise_core::policy::PolicySpec;
    use flushwise_sim::WorkloadSpec;

    /// TPC-C, 2 warehouses, `pool_mib` of pool and `redo_mib` of redo, 20 s.
    fn config(policy: &str, pool_mib: u64, redo_mib: u64) -> SimConfig {
        SimConfig {
            workload: WorkloadSpec::tpcc(2),
            buffer_pool_bytes: pool_mib << 20,
            redo_bytes: redo_mib << 20,
            warmup_us: 10_000_000,
            duration_us: 10_000_000,
            report_interval_us: 10_000_000,
            policy: PolicySpec::parse(policy).expect("test policy"),
            ..SimConfig::default()
        }
    }

    /// A result without what differs between two runs of one configuration
    /// (wall time) or between a shadow's result and its own run's.
    fn figures(mut r: RunResult) -> RunResult {
        r.wall_seconds = 0.0;
        r.requests_per_second = None;
        r
    }

    #[test]
    fn a_shadow_that_never_decided_differently_has_its_own_runs_result() {
        let mut shared = 0;
        let mut own = 0;
        // mysql56 with a small pool is all LRU work (Pio reaches no
        // decision); percona56 with 16 MiB of redo flushes the flush list
        // at a pace Pio sets.
        for (policy, pool_mib, redo_mib) in [("mysql56", 4, 64), ("percona56", 40, 16)] {
            let settings = [
                "io_capacity=100",
                "io_capacity=400",
                "io_capacity=25600",
                "lru_scan_depth=256,io_capacity=100",
            ];
            let configs: Vec<SimConfig> = settings
                .iter()
                .map(|s| config(&format!("{policy}:{s}"), pool_mib, redo_mib))
                .collect();
            let out = run_lockstep(configs[0].clone(), &configs[1..]).expect("lockstep run");
            let alone = run_one(configs[0].clone(), None).expect("primary alone");
            assert_eq!(
                figures(out.primary.result),
                figures(alone.result),
                "{policy}: the primary's run"
            );
            if policy == "percona56" {
                assert!(
                    out.shadows[1].is_none(),
                    "percona56: Pio 25600 flushes more than Pio 100"
                );
            }
            for (config, shadow) in configs[1..].iter().zip(out.shadows) {
                let Some(shadow) = shadow else {
                    own += 1;
                    continue;
                };
                shared += 1;
                let alone = run_one(config.clone(), None).expect("shadow alone");
                assert_eq!(
                    figures(shadow.result),
                    figures(alone.result),
                    "{}: the shared result is its own run's",
                    config.policy
                );
            }
        }
        // Both outcomes occur (Pscan is in every plan), so neither path is
        // left untested.
        assert!(shared > 0 && own > 0, "shared {shared}, own {own}");
    }

    /// Every item, and every follow-up an item's work returns, is worked on
    /// exactly once, on one thread or several, even when the queue runs dry
    /// while a thread is still working on an item that will add more.
    #[test]
    fn the_queue_works_every_item_and_follow_up_once() {
        for jobs in [1, 2, 4] {
            let seen = Mutex::new(Vec::new());
            on_threads(vec![1u32, 2, 3], jobs, "test", "items", |x| {
                if let Ok(mut v) = seen.lock() {
                    v.push(x);
                }
                // Chains: x -> 10x -> 100x, the last item's chain longest.
                if x < 100 {
                    std::thread::sleep(std::time::Duration::from_millis(u64::from(x % 10)));
                    vec![x * 10]
                } else {
                    Vec::new()
                }
            });
            let mut seen = seen.into_inner().expect("no worker panicked");
            seen.sort_unstable();
            assert_eq!(seen, vec![1, 2, 3, 10, 20, 30, 100, 200, 300], "{jobs} threads");
        }
    }

    #[test]
    fn configurations_that_differ_beyond_the_policy_are_refused() {
        let a = config("mysql56", 4, 64);
        let b = config("mysql56:io_capacity=400", 4, 32);
        assert!(run_lockstep(a.clone(), &[b]).is_err());
        assert!(run_lockstep(a, &[config("percona56", 4, 64)]).is_err());
    }
}
