//! One TPC-C run on the real engine: open the prepared database with the
//! run's settings, drive the mix, and report the same flushing figures as
//! the simulator (`FlushFigures`: NOPM, sync-write share, I/O per
//! transaction, hit ratio, ...) from the engine's own counters.
//!
//! Measurement window: the driver ends an interval exactly at the end of
//! the warm-up, so the pool counters captured at the last warm-up interval
//! are the baseline the measured figures are differenced from (the start of
//! the run if there is no warm-up). Gauges (dirty share, free frames,
//! checkpoint age) are sampled every 100 ms by a thread of this module and
//! averaged over the measured window.
//!
//! Live observer ([`EngineRunSpec::live`]): every second of the run (the
//! driver's [`tpcc::LIVE_TICK`]) and once at its end it gets a
//! [`LiveSample`] built from the same pool counters, baseline and driver
//! totals the result is; the last one is built from the very snapshot and
//! counts the result is, so the two agree.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flushwise_core::{Decision, PoolCounters, RedoMargins};
use flushwise_engine::buffer::{thread_core_mutex_wait_ns, thread_page_latch_wait_ns};
use flushwise_engine::buffer::{MetricsSnapshot, ReadSplitTimes};
use flushwise_engine::db::{thread_commit_wait_ns, thread_lock_wait_ns, Database, DbOptions};
use flushwise_engine::sched::thread_sched_ns;
use flushwise_engine::storage::{WritePathTimes, WritePhase};
use flushwise_engine::trace_recorder::{self, TraceRecorder};
use flushwise_sim::config::{MeasuredCpuCosts, MeasuredTxnCpu};
use flushwise_sim::live::DECISIONS_KEPT;
use flushwise_sim::{
    config_hash_of, FlushFigures, IntervalRow, LatencyBuckets, LiveSample, ReadSplitFigures, RunResult, TxnCounts,
    WritePathFigures, SHELL_ENGINE,
};
use flushwise_trace::TxnType;
use flushwise_workloads::tpcc::{self, AfterInterval, IntervalReport, LiveCounts, RunConfig, TxnKind, TxnObserver};

use crate::database::{device_text, Manifest};
use crate::steady::SteadyWatch;
use crate::COMMIT;

/// Gauge sampling period: 100 ms, the simulator's `SAMPLE_US`. Not the
/// shell's per-second history: the dirty share swings with the cleaner's
/// once-a-second batches, and sampling at that same period aliases (it
/// reads the same phase of every swing).
const SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// A finished run: the result and its interval rows.
pub struct EngineRunOutput {
    pub result: RunResult,
    pub rows: Vec<IntervalRow>,
}

/// What to run.
pub struct EngineRunSpec<'a> {
    pub dir: &'a Path,
    pub options: DbOptions,
    pub manifest: &'a Manifest,
    /// `run.warmup` is the warm-up, or its cap when `steady_warmup_min`
    /// is set.
    pub run: RunConfig,
    /// End the warm-up once the policy's tuned parameters hold still, after
    /// at least this long ([`crate::steady`]).
    pub steady_warmup_min: Option<Duration>,
    pub trace: Option<PathBuf>,
    /// Write one JSON object per page-cleaner iteration to this file.
    pub decisions: Option<PathBuf>,
    pub flush_log_at_trx_commit: u8,
    /// Print `new-order-committed W D O` on stdout after each New-Order
    /// commit returns (crash tests).
    pub print_new_orders: bool,
    /// Handed the run as it stands every second and at its end (keeps the
    /// policy's decision log on for it); called on the driving thread.
    pub live: Option<&'a dyn Fn(&LiveSample)>,
}

impl EngineRunSpec<'_> {
    /// The hash of everything that defines the run (not the paths).
    pub fn config_hash(&self) -> String {
        let o = &self.options;
        let text = format!(
            "tpcc-engine|policy={}|pool={}|redo={}|page={}|io={}|device={:?}|dw={}|flush={}|w={}|c={}|warmup={:?}|steady_warmup_min={:?}|duration={:?}|seed={}|weights={:?}|keying_think={}|load_seed={}",
            o.policy,
            o.buffer_pool_bytes,
            o.redo_bytes,
            o.page_size.bytes(),
            o.io,
            o.data_device.as_ref().map(|d| d.describe()),
            o.doublewrite,
            self.flush_log_at_trx_commit,
            self.manifest.warehouses,
            self.run.connections,
            self.run.warmup,
            self.steady_warmup_min,
            self.run.duration,
            self.run.seed,
            self.run.weights,
            self.run.keying_think,
            self.manifest.seed,
        );
        config_hash_of(&text)
    }
}

/// Appends the shell's iteration records as JSON lines (`--decisions`);
/// the first write error is kept and reported at the end.
struct IterationWriter {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    error: Option<std::io::Error>,
    dropped: u64,
}

impl IterationWriter {
    fn create(path: &Path) -> Result<Self, String> {
        let file = std::fs::File::create(path).map_err(|e| format!("--decisions {}: {e}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            error: None,
            dropped: 0,
        })
    }

    fn append(&mut self, shell: &flushwise_engine::buffer::BufferPoolShell) {
        let (records, dropped) = shell.drain_iteration_records();
        self.dropped = dropped;
        if self.error.is_some() {
            return;
        }
        let text = crate::render::iteration_jsonl(&records);
        if let Err(e) = std::io::Write::write_all(&mut self.out, text.as_bytes()) {
            self.error = Some(e);
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        if self.error.is_none() {
            if let Err(e) = std::io::Write::flush(&mut self.out) {
                self.error = Some(e);
            }
        }
        if let Some(e) = self.error.take() {
            return Err(format!("--decisions {}: {e}", self.path.display()));
        }
        if self.dropped > 0 {
            eprintln!(
                "note: --decisions {}: {} iteration records were dropped between drains",
                self.path.display(),
                self.dropped
            );
        }
        Ok(())
    }
}

fn trace_type(kind: TxnKind) -> TxnType {
    match kind {
        TxnKind::NewOrder => TxnType::NewOrder,
        TxnKind::Payment => TxnType::Payment,
        TxnKind::OrderStatus => TxnType::OrderStatus,
        TxnKind::Delivery => TxnType::Delivery,
        TxnKind::StockLevel => TxnType::StockLevel,
    }
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000) + t.tv_nsec.max(0) as u64
}

/// The process's CPU time, every thread's, ended ones too
/// (`CLOCK_PROCESS_CPUTIME_ID`), ns.
fn process_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000) + t.tv_nsec.max(0) as u64
}

thread_local! {
    /// Thread CPU time at the current attempt's begin.
    static ATTEMPT_CPU_START_NS: Cell<u64> = const { Cell::new(0) };
    /// The thread's time blocked on key locks at the current attempt's begin.
    static ATTEMPT_LOCK_WAIT_START_NS: Cell<u64> = const { Cell::new(0) };
    /// The thread's time waiting for the log at commit at the attempt's begin.
    static ATTEMPT_COMMIT_WAIT_START_NS: Cell<u64> = const { Cell::new(0) };
    /// The thread's time blocked on the core mutex and on page latches at
    /// the attempt's begin.
    static ATTEMPT_LATCH_WAIT_START_NS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    /// The thread's time runnable without a core at the current attempt's
    /// begin (`None`: the kernel does not say).
    static ATTEMPT_RUN_DELAY_START_NS: Cell<Option<u64>> = const { Cell::new(None) };
    /// When the current attempt began.
    static ATTEMPT_START: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// User threads' CPU per transaction type over the measured window (what
/// the simulator's replay charges, issue #18; written beside the trace).
#[derive(Default)]
struct CpuTally {
    measuring: Arc<AtomicBool>,
    /// With a trace: also each attempt's thread CPU, its wait for a core
    /// (a schedstat read) and its wall time. Without one only the waits
    /// kept as thread-local running totals are tallied (key locks, commit,
    /// core mutex, page latches: no system call per transaction), so every
    /// run reports them.
    full: bool,
    ns: [AtomicU64; 5],
    /// Time blocked on key locks, per type, ns (not CPU: the replay
    /// charges it as a wait, issue #18).
    lock_wait_ns: [AtomicU64; 5],
    /// Time runnable and waiting for a core, per type, ns (Linux
    /// schedstat; stays 0 where the kernel does not provide it).
    core_wait_ns: [AtomicU64; 5],
    /// Attempts whose core wait was measured, per type.
    core_wait_attempts: [AtomicU64; 5],
    /// Wall time of the attempts, per type, ns.
    wall_ns: [AtomicU64; 5],
    /// Time waiting at commit for the log, per type, ns.
    commit_wait_ns: [AtomicU64; 5],
    /// Time blocked on the buffer pool's core mutex, per type, ns.
    core_mutex_wait_ns: [AtomicU64; 5],
    /// Time blocked on page latches, per type, ns.
    page_latch_wait_ns: [AtomicU64; 5],
    attempts: [AtomicU64; 5],
    /// The process's CPU when the first attempt of the measured window
    /// began (0: not yet), ns.
    process_start_ns: AtomicU64,
}

impl CpuTally {
    /// Time runnable without a core per attempt over every type, µs
    /// (`None` where the kernel gave no counters).
    fn core_wait_us_per_txn(&self) -> Option<f64> {
        per_attempt_us(&self.core_wait_ns, &self.core_wait_attempts)
    }

    /// Time waiting at commit for the log per attempt over every type, µs.
    fn commit_wait_us_per_txn(&self) -> Option<f64> {
        per_attempt_us(&self.commit_wait_ns, &self.attempts)
    }

    fn measured(&self, source: String) -> MeasuredCpuCosts {
        let start = self.process_start_ns.load(Ordering::Relaxed);
        let process_ns = process_cpu_ns().saturating_sub(start);
        let user_ns: u64 = self.ns.iter().map(|n| n.load(Ordering::Relaxed)).sum();
        let attempts: u64 = self.attempts.iter().map(|n| n.load(Ordering::Relaxed)).sum();
        let background_cpu_us_per_txn =
            (start > 0 && attempts > 0).then(|| process_ns.saturating_sub(user_ns) as f64 / 1e3 / attempts as f64);
        MeasuredCpuCosts {
            background_cpu_us_per_txn,
            kind: MeasuredCpuCosts::KIND.into(),
            commit: COMMIT.to_string(),
            source,
            txn_types: TxnKind::ALL
                .iter()
                .enumerate()
                .filter_map(|(i, kind)| {
                    let attempts = self.attempts[i].load(Ordering::Relaxed);
                    let mean_us = |ns: &AtomicU64| ns.load(Ordering::Relaxed) as f64 / 1e3 / attempts as f64;
                    (attempts > 0).then(|| MeasuredTxnCpu {
                        txn_type: flushwise_sim::live::TXN_TYPES[trace_type(*kind).slot()].to_string(),
                        attempts,
                        cpu_us_mean: mean_us(&self.ns[i]),
                        lock_wait_us_mean: Some(mean_us(&self.lock_wait_ns[i])),
                        core_wait_us_mean: {
                            let measured = self.core_wait_attempts[i].load(Ordering::Relaxed);
                            (measured > 0)
                                .then(|| self.core_wait_ns[i].load(Ordering::Relaxed) as f64 / 1e3 / measured as f64)
                        },
                        wall_us_mean: Some(mean_us(&self.wall_ns[i])),
                        commit_wait_us_mean: Some(mean_us(&self.commit_wait_ns[i])),
                        core_mutex_wait_us_mean: Some(mean_us(&self.core_mutex_wait_ns[i])),
                        page_latch_wait_us_mean: Some(mean_us(&self.page_latch_wait_ns[i])),
                    })
                })
                .collect(),
        }
    }
}

/// The sum of `ns` over every type per attempt counted in `attempts`, µs
/// (`None` before any).
fn per_attempt_us(ns: &[AtomicU64; 5], attempts: &[AtomicU64; 5]) -> Option<f64> {
    let total = |a: &[AtomicU64; 5]| a.iter().map(|n| n.load(Ordering::Relaxed)).sum::<u64>();
    let counted = total(attempts);
    (counted > 0).then(|| total(ns) as f64 / 1e3 / counted as f64)
}

/// Where a trace's measured CPU costs go: `TRACE.cpu.json`.
pub fn cpu_costs_path(trace: &Path) -> PathBuf {
    let mut name = trace.as_os_str().to_owned();
    name.push(".cpu.json");
    PathBuf::from(name)
}

/// The run's observer: records transaction boundaries into the trace (the
/// engine records the page fixes of the same thread under the agent id set
/// here), with the trace each attempt's thread CPU time, and, for crash
/// tests, prints each acknowledged New-Order.
struct RunObserver {
    recorder: Option<Arc<TraceRecorder>>,
    cpu: Arc<CpuTally>,
    print_new_orders: bool,
}

impl TxnObserver for RunObserver {
    fn terminal_start(&self, terminal: u32) {
        trace_recorder::set_agent(terminal);
    }
    fn txn_begin(&self, terminal: u32, kind: TxnKind) {
        if let Some(r) = &self.recorder {
            r.txn_begin(terminal, trace_type(kind));
        }
        let cpu = &self.cpu;
        // Thread-local running totals: no system call.
        ATTEMPT_LOCK_WAIT_START_NS.with(|c| c.set(thread_lock_wait_ns()));
        ATTEMPT_COMMIT_WAIT_START_NS.with(|c| c.set(thread_commit_wait_ns()));
        ATTEMPT_LATCH_WAIT_START_NS.with(|c| c.set((thread_core_mutex_wait_ns(), thread_page_latch_wait_ns())));
        if !cpu.full {
            return;
        }
        ATTEMPT_CPU_START_NS.with(|c| c.set(thread_cpu_ns()));
        ATTEMPT_RUN_DELAY_START_NS.with(|c| c.set(thread_sched_ns().map(|s| s.run_delay_ns)));
        ATTEMPT_START.with(|c| c.set(Some(Instant::now())));
        if cpu.measuring.load(Ordering::Relaxed) && cpu.process_start_ns.load(Ordering::Relaxed) == 0 {
            let _ =
                cpu.process_start_ns
                    .compare_exchange(0, process_cpu_ns().max(1), Ordering::Relaxed, Ordering::Relaxed);
        }
    }
    fn txn_end(&self, terminal: u32, kind: TxnKind, committed: bool) {
        let cpu = &self.cpu;
        if cpu.measuring.load(Ordering::Relaxed) {
            let locked = thread_lock_wait_ns().saturating_sub(ATTEMPT_LOCK_WAIT_START_NS.with(Cell::get));
            if let Some(i) = TxnKind::ALL.iter().position(|k| *k == kind) {
                cpu.lock_wait_ns[i].fetch_add(locked, Ordering::Relaxed);
                let committing = thread_commit_wait_ns().saturating_sub(ATTEMPT_COMMIT_WAIT_START_NS.with(Cell::get));
                cpu.commit_wait_ns[i].fetch_add(committing, Ordering::Relaxed);
                let (mutex_start, latch_start) = ATTEMPT_LATCH_WAIT_START_NS.with(Cell::get);
                cpu.core_mutex_wait_ns[i].fetch_add(
                    thread_core_mutex_wait_ns().saturating_sub(mutex_start),
                    Ordering::Relaxed,
                );
                cpu.page_latch_wait_ns[i].fetch_add(
                    thread_page_latch_wait_ns().saturating_sub(latch_start),
                    Ordering::Relaxed,
                );
                cpu.attempts[i].fetch_add(1, Ordering::Relaxed);
                if cpu.full {
                    let spent = thread_cpu_ns().saturating_sub(ATTEMPT_CPU_START_NS.with(Cell::get));
                    cpu.ns[i].fetch_add(spent, Ordering::Relaxed);
                    if let (Some(start), Some(now)) = (ATTEMPT_RUN_DELAY_START_NS.with(Cell::get), thread_sched_ns()) {
                        cpu.core_wait_ns[i].fetch_add(now.run_delay_ns.saturating_sub(start), Ordering::Relaxed);
                        cpu.core_wait_attempts[i].fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some(start) = ATTEMPT_START.with(Cell::get) {
                        cpu.wall_ns[i].fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                }
            }
        }
        if let Some(r) = &self.recorder {
            if committed {
                r.txn_commit(terminal, trace_type(kind));
            } else {
                r.txn_rollback(terminal, trace_type(kind));
            }
        }
    }
    fn new_order_committed(&self, _terminal: u32, w_id: u32, d_id: u8, o_id: u32) {
        if self.print_new_orders {
            // One line per order, flushed at once: a parent that kills this
            // process knows exactly what was acknowledged.
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "new-order-committed {w_id} {d_id} {o_id}");
            let _ = out.flush();
        }
    }
}

/// Transaction counts in the simulator's layout, from driver counts.
fn txn_counts(per_type: &[tpcc::driver::TypeCounts]) -> TxnCounts {
    let mut out = TxnCounts::default();
    for (i, kind) in TxnKind::ALL.iter().enumerate() {
        if let Some(c) = per_type.iter().find(|c| c.kind == kind.name()) {
            out.committed[i] = c.commits;
            out.rolled_back[i] = c.rollbacks;
        }
    }
    out
}

#[derive(Default)]
struct GaugeSums {
    samples: u64,
    dirty_pct: f64,
    free_pages: f64,
    checkpoint_age_bytes: f64,
}

fn dirty_pct(m: &MetricsSnapshot, frames: u64) -> f64 {
    100.0 * f64::from(m.Innodb_buffer_pool_pages_dirty) / frames.max(1) as f64
}

fn parameters(m: &MetricsSnapshot) -> Vec<(String, f64)> {
    m.parameters.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// What a live sample needs that stays fixed through a run.
struct LiveContext {
    policy: String,
    seed: u64,
    config_hash: String,
    frames: u64,
    margins: RedoMargins,
    start: PoolCounters,
    start_lsn: u64,
}

impl LiveContext {
    /// The run now: `m` the shell's snapshot, `counts` the driver's,
    /// `baseline` (and its LSN) the pool at the measurement's start.
    fn sample(
        &self,
        m: &MetricsSnapshot,
        lsn: u64,
        counts: &LiveCounts,
        baseline: (PoolCounters, u64),
        decisions: &VecDeque<Decision>,
        finished: bool,
    ) -> LiveSample {
        let warmup = txn_counts(&counts.warmup_counts);
        let measured = txn_counts(&counts.measured_counts);
        let mut run = measured;
        for i in 0..run.committed.len() {
            run.committed[i] += warmup.committed[i];
            run.rolled_back[i] += warmup.rolled_back[i];
        }
        let (pool_measured, lsn_measured) = if counts.warmup {
            (PoolCounters::default(), 0)
        } else {
            (m.counters.since(&baseline.0), lsn.saturating_sub(baseline.1))
        };
        LiveSample {
            shell: SHELL_ENGINE.to_string(),
            policy: self.policy.clone(),
            seed: self.seed,
            config_hash: self.config_hash.clone(),
            time_s: counts.elapsed_s,
            warmup: counts.warmup,
            finished,
            pool_run: m.counters.since(&self.start),
            pool_measured,
            txns_run: run,
            txns_measured: measured,
            log_written_run_bytes: lsn.saturating_sub(self.start_lsn),
            log_written_measured_bytes: lsn_measured,
            latency: TxnKind::ALL
                .iter()
                .zip(&counts.measured_latency)
                .filter(|(_, h)| h.count() > 0)
                .map(|(kind, h)| LatencyBuckets::from_histogram(kind.name(), h))
                .collect(),
            pages_total: self.frames,
            pages_dirty: u64::from(m.Innodb_buffer_pool_pages_dirty),
            pages_free: u64::from(m.Innodb_buffer_pool_pages_free),
            checkpoint_age_bytes: m.log_lsn_checkpoint_age,
            margins: self.margins,
            parameters: parameters(m),
            decisions: decisions.iter().cloned().collect(),
        }
    }
}

/// Keeps the newest [`DECISIONS_KEPT`] of `new` in `tail`.
fn keep_tail(tail: &mut VecDeque<Decision>, new: Vec<Decision>) {
    tail.extend(new);
    while tail.len() > DECISIONS_KEPT {
        tail.pop_front();
    }
}

/// Opens, runs, closes. `label` prefixes progress lines on stderr.
pub fn run(
    spec: EngineRunSpec<'_>,
    label: &str,
    mut on_row: impl FnMut(&IntervalRow),
) -> Result<EngineRunOutput, String> {
    let wall = Instant::now();
    let config_hash = spec.config_hash();
    let mut options = spec.options.clone();
    options.iteration_records = spec.decisions.is_some();
    options.decision_log = spec.live.is_some();
    let mut decisions = match &spec.decisions {
        Some(path) => Some(IterationWriter::create(path)?),
        None => None,
    };
    let db = Database::open(spec.dir, options).map_err(|e| format!("{}: {e}", spec.dir.display()))?;
    let report = db.recovery_report();
    if report.records_applied > 0 || report.losers_rolled_back > 0 || report.redo_resized_from_bytes.is_some() {
        eprintln!("{label}: {report}");
    }
    let db = Arc::new(db);
    let frames = db.shell().config().frames as u64;
    let recorder = match &spec.trace {
        Some(path) => {
            let description = format!(
                "flushwise engine TPC-C: {} warehouses, {} connections, policy {}, seed {}, commit {COMMIT}",
                spec.manifest.warehouses, spec.run.connections, spec.options.policy, spec.run.seed
            );
            let recorder = TraceRecorder::create(path, spec.options.page_size.bytes() as u32, description)
                .map_err(|e| format!("--trace: {e}"))?;
            let recorder = Arc::new(recorder);
            db.set_trace_recorder(Some(Arc::clone(&recorder)));
            Some(recorder)
        }
        None => None,
    };
    // Gauge sampler (and the CPU tally) count from the window's start.
    let measuring = Arc::new(AtomicBool::new(spec.run.warmup.is_zero()));
    let cpu = Arc::new(CpuTally {
        measuring: Arc::clone(&measuring),
        full: recorder.is_some(),
        ..CpuTally::default()
    });
    let observer: Option<Arc<dyn TxnObserver>> = Some(Arc::new(RunObserver {
        recorder: recorder.clone(),
        cpu: Arc::clone(&cpu),
        print_new_orders: spec.print_new_orders,
    }) as Arc<dyn TxnObserver>);

    let stop = Arc::new(AtomicBool::new(false));
    let sums = Arc::new(Mutex::new(GaugeSums::default()));
    let sampler = {
        let (db, measuring, stop, sums) = (
            Arc::clone(&db),
            Arc::clone(&measuring),
            Arc::clone(&stop),
            Arc::clone(&sums),
        );
        std::thread::Builder::new()
            .name("tpcc-gauges".into())
            .spawn(move || {
                let mut next = Instant::now() + SAMPLE_PERIOD;
                while !stop.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep((next - now).min(Duration::from_millis(50)));
                        continue;
                    }
                    next += SAMPLE_PERIOD;
                    if !measuring.load(Ordering::Relaxed) {
                        continue;
                    }
                    let m = db.shell().metrics();
                    if let Ok(mut s) = sums.lock() {
                        s.samples += 1;
                        s.dirty_pct += dirty_pct(&m, frames);
                        s.free_pages += f64::from(m.Innodb_buffer_pool_pages_free);
                        s.checkpoint_age_bytes += m.log_lsn_checkpoint_age as f64;
                    }
                }
            })
            .map_err(|e| format!("cannot start the gauge sampler thread: {e}"))?
    };

    let lsn_now = || db.shell().redo().current_lsn().0;
    let start_snapshot = db.shell().metrics();
    let live = LiveContext {
        policy: spec.options.policy.to_string(),
        seed: spec.run.seed,
        config_hash: config_hash.clone(),
        frames,
        margins: db.shell().with_core(|p| p.redo().margins),
        start: start_snapshot.counters,
        start_lsn: lsn_now(),
    };
    // Shared by the interval and the tick callbacks (one thread).
    let baseline = Cell::new((start_snapshot.counters, live.start_lsn));
    let decision_tail = RefCell::new(VecDeque::new());
    let last_counts: RefCell<Option<LiveCounts>> = RefCell::new(None);
    let mut previous: PoolCounters = start_snapshot.counters;
    let mut baseline_stalls = db.shell().stall_histogram();
    let mut previous_stalls = baseline_stalls.clone();
    let mut baseline_writes = start_snapshot.write_path;
    let mut baseline_reads = start_snapshot.read_split;
    let mut baseline_redo = db.redo().stats();
    let mut rows = Vec::new();
    // Rows carry seconds since the run started until the warm-up's end is
    // known; then `time_s` becomes seconds since the measurement began.
    let mut elapsed_s: Vec<f64> = Vec::new();
    let mut steady = spec.steady_warmup_min.map(SteadyWatch::new);
    // When the warm-up ends, in seconds since the start: known in advance
    // for a fixed warm-up, when the steady test fires otherwise.
    let mut warmup_end_s = spec
        .steady_warmup_min
        .is_none()
        .then_some(spec.run.warmup.as_secs_f64());
    let policy = spec.options.policy.to_string();
    let seed = spec.run.seed;
    let mut on_interval = |r: &IntervalReport| {
        let m = db.shell().metrics();
        let stalls = db.shell().stall_histogram();
        let counts = txn_counts(&r.per_type);
        let row = IntervalRow {
            policy: policy.clone(),
            seed,
            config_hash: config_hash.clone(),
            // Until a steady warm-up ends, seconds since the start.
            time_s: r.elapsed_s - warmup_end_s.unwrap_or(0.0),
            warmup: r.warmup,
            figures: FlushFigures::compute(
                &m.counters.since(&previous),
                &counts,
                r.interval_s,
                Some(&stalls.since(&previous_stalls)),
            ),
            dirty_pct: dirty_pct(&m, frames),
            free_pages: m.Innodb_buffer_pool_pages_free,
            checkpoint_age_bytes: m.log_lsn_checkpoint_age,
            parameters: parameters(&m),
        };
        previous = m.counters;
        if r.warmup {
            baseline_stalls = stalls.clone();
            baseline_writes = m.write_path;
            baseline_reads = m.read_split;
            baseline_redo = db.redo().stats();
        }
        previous_stalls = stalls;
        if let Some(w) = decisions.as_mut() {
            w.append(db.shell());
        }
        if r.warmup {
            baseline.set((m.counters, lsn_now()));
        }
        // The CPU tally counts from the end of the warm-up's last interval
        // (which ends at the measurement's start), as the figures do; it
        // once waited for the first measured interval's end and so missed
        // the measurement's first 10 s.
        if !r.warmup || r.elapsed_s >= spec.run.warmup.as_secs_f64() {
            measuring.store(true, Ordering::Relaxed);
        }
        let is_steady = r.warmup
            && steady
                .as_mut()
                .is_some_and(|watch| watch.observe(r.elapsed_s, &row.parameters));
        let after = if is_steady {
            warmup_end_s = Some(r.elapsed_s);
            measuring.store(true, Ordering::Relaxed);
            AfterInterval::EndWarmup
        } else {
            AfterInterval::Continue
        };
        on_row(&row);
        elapsed_s.push(r.elapsed_s);
        rows.push(row);
        after
    };
    // The warm-up's last interval ends exactly at the measurement start:
    // from then on the sampler averages.
    let mut on_tick = |counts: &LiveCounts| {
        let Some(publish) = spec.live else { return };
        let m = db.shell().metrics();
        let mut tail = decision_tail.borrow_mut();
        keep_tail(&mut tail, db.shell().drain_decisions());
        publish(&live.sample(&m, lsn_now(), counts, baseline.get(), &tail, false));
        *last_counts.borrow_mut() = Some(counts.clone());
    };
    let outcome = if spec.live.is_some() {
        tpcc::run_live(&db, &spec.run, observer, &mut on_interval, &mut on_tick)
    } else {
        tpcc::run(&db, &spec.run, observer, &mut on_interval)
    };
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let end = db.shell().metrics();
    let end_lsn = lsn_now();
    let end_stalls = db.shell().stall_histogram();
    if let Some(w) = decisions.as_mut() {
        w.append(db.shell());
        w.finish()?;
    }
    let trace_records = match &recorder {
        Some(r) => {
            db.set_trace_recorder(None);
            Some(r.finish().map_err(|e| format!("--trace: {e}"))?)
        }
        None => None,
    };
    if let Some(path) = &spec.trace {
        let source = format!(
            "flushwise engine TPC-C: {} warehouses, {} connections, policy {}, seed {}, trace {}",
            spec.manifest.warehouses,
            spec.run.connections,
            spec.options.policy,
            spec.run.seed,
            path.display()
        );
        let costs = cpu_costs_path(path);
        let text = serde_json::to_string_pretty(&cpu.measured(source))
            .map_err(|e| format!("--trace: cannot render the CPU costs: {e}"))?;
        std::fs::write(&costs, text + "\n").map_err(|e| format!("--trace: {}: {e}", costs.display()))?;
    }
    let run_report = outcome.map_err(|e| format!("tpcc run: {e}"))?;
    for (row, elapsed) in rows.iter_mut().zip(&elapsed_s) {
        row.time_s = elapsed - run_report.warmup_s;
    }
    let redo_end = db.redo().stats();
    let db = Arc::try_unwrap(db).map_err(|_| "the database is still shared after the run".to_string())?;
    db.close()
        .map_err(|e| format!("{}: closing after the run: {e}", spec.dir.display()))?;

    let measured = end.counters.since(&baseline.get().0);
    if let (Some(publish), Some(counts)) = (spec.live, last_counts.borrow().as_ref()) {
        // The last tick came after the terminals stopped: its counts are
        // the report's; `end` is the snapshot the figures come from.
        let mut tail = decision_tail.borrow_mut();
        publish(&live.sample(&end, end_lsn, counts, baseline.get(), &tail, true));
        tail.clear();
    }
    let counts = txn_counts(&run_report.per_type);
    let stalls = end_stalls.since(&baseline_stalls);
    let figures = FlushFigures::compute(&measured, &counts, run_report.duration_s, Some(&stalls));
    let sums = sums
        .lock()
        .map(|s| (s.samples, s.dirty_pct, s.free_pages, s.checkpoint_age_bytes));
    let (n, dirty, free, age) = sums.unwrap_or((0, 0.0, 0.0, 0.0));
    let n = n.max(1) as f64;
    let latency = run_report
        .latency
        .iter()
        .map(|l| flushwise_sim::LatencySummary {
            txn_type: l.kind.to_string(),
            count: l.count,
            p50_us: l.p50_us,
            p90_us: l.p90_us,
            p95_us: l.p95_us,
            p99_us: l.p99_us,
            p999_us: l.p999_us,
            max_us: l.max_us,
        })
        .collect();
    let result = RunResult {
        shell: SHELL_ENGINE.to_string(),
        policy: spec.options.policy.to_string(),
        workload: "tpcc-engine".into(),
        device: device_text(&spec.options.data_device, spec.options.io),
        // The redo log is always a buffered file on this machine's disk
        // (`DbOptions::data_device` emulates the data files only).
        log_device: "native(buffered)".to_string(),
        buffer_pool_bytes: spec.options.buffer_pool_bytes,
        redo_bytes: spec.options.redo_bytes,
        page_size_bytes: spec.options.page_size.bytes() as u32,
        doublewrite: spec.options.doublewrite,
        flush_log_at_trx_commit: Some(spec.flush_log_at_trx_commit),
        warehouses: run_report.warehouses,
        connections: run_report.connections,
        seed: spec.run.seed,
        config_hash,
        commit: COMMIT.to_string(),
        figures,
        dirty_pct_avg: dirty / n,
        free_pages_avg: free / n,
        checkpoint_age_avg_bytes: age / n,
        transactions: counts.total(),
        rollbacks: run_report.rollbacks,
        retries: run_report.retries,
        requests: measured.requests,
        measured_seconds: run_report.duration_s,
        warmup_seconds: run_report.warmup_s,
        simulated_seconds: None,
        wall_seconds: wall.elapsed().as_secs_f64(),
        requests_per_second: None,
        cleaner_iterations: None,
        final_parameters: parameters(&end),
        latency,
        mix_pct: run_report.mix_pct.clone(),
        database_pages: None,
        database_bytes: crate::database::dir_bytes(spec.dir).unwrap_or(0),
        trace_records,
        partial: run_report.interrupted,
        change_buffer: None,
        write_path: Some(write_path_figures(
            &end.write_path.since(&baseline_writes),
            run_report.duration_s,
        )),
        read_split: read_split_figures(&end.read_split.since(&baseline_reads)),
        core_wait_us_per_txn: cpu.core_wait_us_per_txn(),
        commit_wait_us_per_txn: cpu.commit_wait_us_per_txn(),
        core_mutex_wait_us_per_txn: per_attempt_us(&cpu.core_mutex_wait_ns, &cpu.attempts),
        page_latch_wait_us_per_txn: per_attempt_us(&cpu.page_latch_wait_ns, &cpu.attempts),
        log_synced_write_us_mean: {
            let syncs = redo_end.log_syncs.saturating_sub(baseline_redo.log_syncs);
            let ns = redo_end.synced_batch_ns.saturating_sub(baseline_redo.synced_batch_ns);
            (syncs > 0).then(|| ns as f64 / 1e3 / syncs as f64)
        },
    };
    Ok(EngineRunOutput { result, rows })
}

/// The sampled reads' split over a window, or `None` if none was sampled
/// (a kernel without scheduler counters, or no misses).
pub fn read_split_figures(t: &ReadSplitTimes) -> Option<ReadSplitFigures> {
    if t.sampled_reads == 0 {
        return None;
    }
    let per_read_us = |ns: u64| ns as f64 / 1e3 / t.sampled_reads as f64;
    Some(ReadSplitFigures::from_latency(
        t.sampled_reads,
        per_read_us(t.latency_ns),
        per_read_us(t.core_wait_ns),
        per_read_us(t.on_cpu_ns),
    ))
}

/// The write path's counters over a window of `seconds`, per batch page.
pub fn write_path_figures(t: &WritePathTimes, seconds: f64) -> WritePathFigures {
    let phases: Vec<(&str, u64)> = WritePhase::ALL.iter().map(|p| (p.name(), t.phase(*p))).collect();
    WritePathFigures::from_totals(
        t.batches,
        t.batch_pages,
        &phases,
        seconds,
        t.single_pages,
        t.single_page_us,
    )
    .with_polls(t.polls, t.poll_us, seconds)
}
