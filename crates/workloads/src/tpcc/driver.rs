//! The terminal driver: terminals as threads, the transaction mix, retries,
//! warm-up, per-interval and final reports.
//!
//! - Terminal `t` (0-based) works for home warehouse `t % W + 1`
//!   (round-robin, so any number of connections spreads evenly; clause
//!   2.1.4 fixes a terminal's warehouse for the run) and runs Stock-Level
//!   for district `(t / W) % 10 + 1` (clause 2.8.1.1 fixes that too).
//! - Each terminal draws the transaction type from `weights` (default
//!   45/43/4/4/4, the minimum mix of clause 5.2.3 with New-Order taking the
//!   rest, as go-tpc and BenchBase do) and its inputs from its own seeded
//!   stream ([`super::txn::generate`]).
//! - Keying and think times (clause 5.2.5) are off by default, as in Lee
//!   et al. §5.1 (each terminal submits its next transaction at once); with
//!   `keying_think` they are the spec's: keying 18/3/2/2/2 s, think time
//!   negative-exponential with mean 12/12/10/5/5 s, capped at ten means.
//! - A retryable store error (deadlock victim, lock wait timeout) rolls the
//!   attempt back and runs the same input again, up to `retries_max`
//!   times; a retry is counted in `retries`, not as a rollback. A
//!   transaction out of retries counts in `errors` and the terminal goes
//!   on. Any other error stops the run and is returned naming the type.
//! - `rollbacks` are New-Order's 1 % business rollbacks (clause 2.4.2.3).
//! - A transaction is measured if it completes within the measurement
//!   window [warm-up end, warm-up end + duration]: everything of the
//!   warm-up is left out, as if the counters were reset at its end.
//!   Latency runs from the first attempt's begin to the final commit or
//!   rollback (retries and back-off included).
//! - The warm-up lasts `warmup`, unless the interval callback ends it
//!   earlier ([`AfterInterval::EndWarmup`], e.g. once the page cleaner's
//!   parameters are steady); the measured window then starts at once and
//!   still lasts `duration`. [`RunReport::warmup_s`] is the warm-up run.
//! - [`RunConfig::interrupt`], set from outside (a signal handler), ends
//!   the run early: the measured window ends then, terminals finish the
//!   transaction in hand, and the report covers what ran, marked
//!   [`RunReport::interrupted`] (an interrupted warm-up measures nothing).
//! - Every [`LIVE_TICK`] of the run, and once at its end, [`run_live`]
//!   hands its tick callback the counts so far ([`LiveCounts`]): the
//!   measured part is merged from the very per-terminal totals the final
//!   report is, so the last tick's and the report's counts are equal.
//! - NOPM = New-Orders committed per minute of the window; `tpm_total` =
//!   transactions of every type completed (committed or rolled back by
//!   New-Order's rule) per minute. Never "tpmC".

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::histogram::Histogram;
use super::load::require_loaded;
use super::random::{self, NurandConstants, Rng64};
use super::schema::DISTRICTS_PER_WAREHOUSE;
use super::store::{TpccStore, TpccTxn};
use super::txn::{execute, generate, Outcome, TerminalContext, TxnKind};
use super::TpccError;

/// How often [`run_live`] hands over the counts so far.
pub const LIVE_TICK: Duration = Duration::from_secs(1);

/// Retries of one transaction by default.
pub const RETRIES_MAX_DEFAULT: u32 = 100;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Terminals (threads).
    pub connections: u32,
    /// The warm-up; the longest one when the interval callback may end it
    /// early.
    pub warmup: Duration,
    pub duration: Duration,
    pub report_interval: Duration,
    pub seed: u64,
    /// New-Order, Payment, Order-Status, Delivery, Stock-Level.
    pub weights: [u32; 5],
    pub keying_think: bool,
    /// Home warehouses used, 1..=W; `None` = every loaded warehouse.
    pub warehouses: Option<u32>,
    pub retries_max: u32,
    /// Set to end the run early (Ctrl-C, SIGTERM); `None`: runs its course.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            connections: 4,
            warmup: Duration::from_secs(10),
            duration: Duration::from_secs(60),
            report_interval: Duration::from_secs(10),
            seed: 1,
            weights: [45, 43, 4, 4, 4],
            keying_think: false,
            warehouses: None,
            retries_max: RETRIES_MAX_DEFAULT,
            interrupt: None,
        }
    }
}

/// Hooks for trace recording, called on the terminal's own thread.
pub trait TxnObserver: Send + Sync {
    /// Once, when the terminal's thread starts (set a thread-local agent id
    /// here).
    fn terminal_start(&self, _terminal: u32) {}
    /// Before each attempt (a retry begins again).
    fn txn_begin(&self, terminal: u32, kind: TxnKind);
    /// After each attempt: `committed` is false for a rollback, a retried
    /// attempt and a failure.
    fn txn_end(&self, terminal: u32, kind: TxnKind, committed: bool);
    /// After a New-Order's commit returned (so it is durable as the store's
    /// flush mode promises): the order's key. Crash tests use it to check
    /// that every acknowledged order survives.
    fn new_order_committed(&self, _terminal: u32, _w_id: u32, _d_id: u8, _o_id: u32) {}
}

/// Counts of one transaction type.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TypeCounts {
    pub kind: &'static str,
    pub commits: u64,
    pub rollbacks: u64,
    pub retries: u64,
    pub errors: u64,
}

/// Latency of one transaction type, microseconds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub kind: &'static str,
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl LatencySummary {
    fn of(kind: TxnKind, h: &Histogram) -> Self {
        Self {
            kind: kind.name(),
            count: h.count(),
            mean_us: h.mean_us(),
            p50_us: h.quantile_us(0.50),
            p90_us: h.quantile_us(0.90),
            p95_us: h.quantile_us(0.95),
            p99_us: h.quantile_us(0.99),
            p999_us: h.quantile_us(0.999),
            max_us: h.max_us(),
        }
    }
}

/// One reporting interval.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IntervalReport {
    /// 1, 2, ... over the whole run, warm-up included.
    pub interval: u32,
    /// True while warming up (not part of the final report).
    pub warmup: bool,
    /// Seconds since the run started, at the end of the interval.
    pub elapsed_s: f64,
    pub interval_s: f64,
    pub per_type: Vec<TypeCounts>,
    pub commits: u64,
    pub rollbacks: u64,
    pub retries: u64,
    pub errors: u64,
    pub nopm: f64,
    pub tpm_total: f64,
    pub latency: Vec<LatencySummary>,
}

/// The measured window of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunReport {
    pub warehouses: u32,
    pub connections: u32,
    pub seed: u64,
    pub warmup_s: f64,
    /// The measured window: the configured duration, or what ran of it
    /// when interrupted.
    pub duration_s: f64,
    /// [`RunConfig::interrupt`] ended the run before its end: the figures
    /// are of a partial window.
    pub interrupted: bool,
    pub constants: NurandConstants,
    pub per_type: Vec<TypeCounts>,
    pub commits: u64,
    pub rollbacks: u64,
    pub retries: u64,
    pub errors: u64,
    /// Completed transactions of each type over all completed, percent.
    pub mix_pct: Vec<(String, f64)>,
    pub nopm: f64,
    pub tpm_total: f64,
    pub latency: Vec<LatencySummary>,
}

#[derive(Clone, Debug)]
struct Stats {
    counts: [TypeCounts; 5],
    latency: [Histogram; 5],
}

impl Default for Stats {
    fn default() -> Self {
        Self {
            counts: TxnKind::ALL.map(|k| TypeCounts {
                kind: k.name(),
                ..TypeCounts::default()
            }),
            latency: std::array::from_fn(|_| Histogram::new()),
        }
    }
}

impl Stats {
    fn merge(&mut self, other: &Stats) {
        for i in 0..5 {
            let (a, b) = (&mut self.counts[i], &other.counts[i]);
            a.commits += b.commits;
            a.rollbacks += b.rollbacks;
            a.retries += b.retries;
            a.errors += b.errors;
            self.latency[i].merge(&other.latency[i]);
        }
    }
    fn clear(&mut self) {
        for i in 0..5 {
            let kind = self.counts[i].kind;
            self.counts[i] = TypeCounts {
                kind,
                ..TypeCounts::default()
            };
            self.latency[i].clear();
        }
    }
    fn sum(&self, f: impl Fn(&TypeCounts) -> u64) -> u64 {
        self.counts.iter().map(f).sum()
    }
    fn completed(&self) -> u64 {
        self.sum(|c| c.commits + c.rollbacks)
    }
    fn per_minute(n: u64, window: Duration) -> f64 {
        n as f64 * 60.0 / window.as_secs_f64().max(1e-9)
    }
    fn nopm(&self, window: Duration) -> f64 {
        Self::per_minute(self.counts[TxnKind::NewOrder.index()].commits, window)
    }
    fn latency(&self) -> Vec<LatencySummary> {
        TxnKind::ALL
            .iter()
            .map(|&k| LatencySummary::of(k, &self.latency[k.index()]))
            .collect()
    }
}

/// What each terminal shares with the reporting thread.
#[derive(Default)]
struct TerminalStats {
    /// Since the last interval report (warm-up included).
    interval: Stats,
    /// The measurement window.
    total: Stats,
    /// Transactions that ended before the measurement window.
    warmup: Stats,
}

/// The run's transaction counts so far (see [`run_live`]).
#[derive(Clone, Debug)]
pub struct LiveCounts {
    /// Seconds since the run started.
    pub elapsed_s: f64,
    /// The measured window has not begun.
    pub warmup: bool,
    /// Per type ([`TxnKind::ALL`] order), transactions that ended in the
    /// warm-up.
    pub warmup_counts: Vec<TypeCounts>,
    /// Per type, the measured window's so far: what the final report's
    /// `per_type` counts.
    pub measured_counts: Vec<TypeCounts>,
    /// Per type, the latency of the measured window's transactions.
    pub measured_latency: Vec<Histogram>,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Clause 5.2.5.7 keying times and 5.2.5.4 mean think times, seconds.
fn keying_think_s(kind: TxnKind) -> (f64, f64) {
    match kind {
        TxnKind::NewOrder => (18.0, 12.0),
        TxnKind::Payment => (3.0, 12.0),
        TxnKind::OrderStatus => (2.0, 10.0),
        TxnKind::Delivery | TxnKind::StockLevel => (2.0, 5.0),
    }
}

fn unit_f64<R: Rng64>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Sleeps up to `d`, waking early when the run stops.
fn sleep_interruptible(d: Duration, until: Instant, stop: &AtomicBool) {
    let end = (Instant::now() + d).min(until);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

fn pick_kind<R: Rng64>(rng: &mut R, weights: &[u32; 5], total: u64) -> TxnKind {
    let mut r = rng.below(total);
    for (i, &w) in weights.iter().enumerate() {
        if r < u64::from(w) {
            return TxnKind::ALL[i];
        }
        r -= u64::from(w);
    }
    TxnKind::NewOrder
}

enum Attempted {
    Committed,
    RolledBack,
}

/// One transaction with its retries. `Ok(Err(e))`: out of retries, or the
/// run is stopping (`stop`: the end, or another terminal's fatal error).
fn run_one<S: TpccStore>(
    store: &S,
    terminal: u32,
    input: &super::txn::TxnInput,
    retries_max: u32,
    stop: &AtomicBool,
    observer: Option<&dyn TxnObserver>,
    retries: &mut u64,
) -> Result<Result<Attempted, TpccError>, TpccError> {
    let kind = input.kind();
    let mut attempt = 0u32;
    loop {
        if let Some(o) = observer {
            o.txn_begin(terminal, kind);
        }
        let mut txn = store.begin();
        let result = match execute(&mut txn, input, now_us()) {
            Ok(Outcome::Commit(value)) => {
                let committed = txn.commit().map(|()| Attempted::Committed).map_err(TpccError::from);
                if let (Ok(_), Some(o), super::txn::TxnInput::NewOrder { w_id, d_id, .. }) =
                    (&committed, observer, input)
                {
                    o.new_order_committed(terminal, *w_id, *d_id, value as u32);
                }
                committed
            }
            Ok(Outcome::Rollback) => txn.rollback().map(|()| Attempted::RolledBack).map_err(TpccError::from),
            Err(e) => {
                // The error, not a failed rollback, is what to report; a
                // rollback failure poisons the store and shows next time.
                let _ = txn.rollback();
                Err(e)
            }
        };
        if let Some(o) = observer {
            o.txn_end(terminal, kind, matches!(result, Ok(Attempted::Committed)));
        }
        match result {
            Ok(a) => return Ok(Ok(a)),
            Err(e) if e.is_retryable() => {
                if attempt >= retries_max || stop.load(Ordering::Relaxed) {
                    return Ok(Err(e));
                }
                attempt += 1;
                *retries += 1;
                std::thread::sleep(Duration::from_micros(100 * u64::from(attempt.min(50))));
            }
            Err(e) => return Err(e),
        }
    }
}

/// What the interval callback asks of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterInterval {
    Continue,
    /// End the warm-up now (ignored once measuring).
    EndWarmup,
}

struct Shared<'a> {
    stop: AtomicBool,
    fatal: Mutex<Option<TpccError>>,
    stats: Vec<Mutex<TerminalStats>>,
    start: Instant,
    /// The measured window, in microseconds since `start`; moved earlier
    /// when the callback ends the warm-up.
    measure_start_us: AtomicU64,
    measure_end_us: AtomicU64,
    cfg: &'a RunConfig,
    weights_total: u64,
    warehouses: u32,
    constants: NurandConstants,
}

impl Shared<'_> {
    fn measure_start(&self) -> Instant {
        self.start + Duration::from_micros(self.measure_start_us.load(Ordering::Acquire))
    }
    fn measure_end(&self) -> Instant {
        self.start + Duration::from_micros(self.measure_end_us.load(Ordering::Acquire))
    }
    /// Ends the run at `now` (an interrupt): the measured window ends here,
    /// and is empty if it had not begun.
    fn end_at(&self, now: Instant) {
        let now_us = (now - self.start).as_micros() as u64;
        let end_us = self.measure_end_us.load(Ordering::Acquire).min(now_us);
        let start_us = self.measure_start_us.load(Ordering::Acquire).min(end_us);
        self.measure_end_us.store(end_us, Ordering::Release);
        self.measure_start_us.store(start_us, Ordering::Release);
    }
    /// Starts the measured window at `now`, lasting the configured duration.
    fn end_warmup(&self, now: Instant) {
        let start_us = (now - self.start).as_micros() as u64;
        let end_us = start_us + self.cfg.duration.as_micros() as u64;
        self.measure_end_us.store(end_us, Ordering::Release);
        self.measure_start_us.store(start_us, Ordering::Release);
    }
}

fn terminal<S: TpccStore>(store: &S, shared: &Shared<'_>, t: u32, observer: Option<&dyn TxnObserver>) {
    let cfg = shared.cfg;
    let w = shared.warehouses;
    let ctx = TerminalContext {
        w_id: t % w + 1,
        stock_level_d_id: ((t / w) % u32::from(DISTRICTS_PER_WAREHOUSE) + 1) as u8,
        warehouses: w,
        c: shared.constants,
    };
    let mut rng = random::stream(cfg.seed, &[0x7465_726d, u64::from(t)]);
    if let Some(o) = observer {
        o.terminal_start(t);
    }
    let stats = &shared.stats[t as usize];
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < shared.measure_end() {
        let kind = pick_kind(&mut rng, &cfg.weights, shared.weights_total);
        let input = generate(kind, &mut rng, &ctx);
        let (keying_s, think_mean_s) = keying_think_s(kind);
        if cfg.keying_think {
            sleep_interruptible(Duration::from_secs_f64(keying_s), shared.measure_end(), &shared.stop);
        }
        let began = Instant::now();
        let mut retries = 0u64;
        let result = run_one(store, t, &input, cfg.retries_max, &shared.stop, observer, &mut retries);
        let ended = Instant::now();
        let latency_us = (ended - began).as_micros() as u64;
        let fatal = match result {
            Ok(outcome) => {
                let Ok(mut s) = stats.lock() else { return };
                let measured = ended >= shared.measure_start() && ended <= shared.measure_end();
                let s = &mut *s;
                let record = |st: &mut Stats| {
                    let c = &mut st.counts[kind.index()];
                    c.retries += retries;
                    match &outcome {
                        Ok(Attempted::Committed) => c.commits += 1,
                        Ok(Attempted::RolledBack) => c.rollbacks += 1,
                        Err(_) => c.errors += 1,
                    }
                    if outcome.is_ok() {
                        st.latency[kind.index()].record(latency_us);
                    }
                };
                record(&mut s.interval);
                if measured {
                    record(&mut s.total);
                } else if ended < shared.measure_start() {
                    record(&mut s.warmup);
                }
                None
            }
            Err(e) => Some(e),
        };
        if let Some(e) = fatal {
            if let Ok(mut f) = shared.fatal.lock() {
                f.get_or_insert(TpccError::Txn {
                    kind,
                    terminal: t,
                    source: Box::new(e),
                });
            }
            shared.stop.store(true, Ordering::Relaxed);
            return;
        }
        if cfg.keying_think {
            let think_s = (-(1.0 - unit_f64(&mut rng)).ln() * think_mean_s).min(10.0 * think_mean_s);
            sleep_interruptible(Duration::from_secs_f64(think_s), shared.measure_end(), &shared.stop);
        }
    }
}

fn interval_report(shared: &Shared<'_>, n: u32, since: Instant, now: Instant) -> IntervalReport {
    let mut agg = Stats::default();
    for s in &shared.stats {
        if let Ok(mut s) = s.lock() {
            agg.merge(&s.interval);
            s.interval.clear();
        }
    }
    let window = now - since;
    IntervalReport {
        interval: n,
        warmup: since < shared.measure_start(),
        elapsed_s: (now - shared.start).as_secs_f64(),
        interval_s: window.as_secs_f64(),
        commits: agg.sum(|c| c.commits),
        rollbacks: agg.sum(|c| c.rollbacks),
        retries: agg.sum(|c| c.retries),
        errors: agg.sum(|c| c.errors),
        nopm: agg.nopm(window),
        tpm_total: Stats::per_minute(agg.completed(), window),
        latency: agg.latency(),
        per_type: agg.counts.to_vec(),
    }
}

fn live_counts(shared: &Shared<'_>, now: Instant) -> LiveCounts {
    let mut warmup = Stats::default();
    let mut total = Stats::default();
    for s in &shared.stats {
        if let Ok(s) = s.lock() {
            warmup.merge(&s.warmup);
            total.merge(&s.total);
        }
    }
    LiveCounts {
        elapsed_s: (now - shared.start).as_secs_f64(),
        warmup: now < shared.measure_start(),
        warmup_counts: warmup.counts.to_vec(),
        measured_counts: total.counts.to_vec(),
        measured_latency: total.latency.to_vec(),
    }
}

/// Runs the mix (see the module documentation).
pub fn run<S: TpccStore + Send + Sync + 'static>(
    store: &Arc<S>,
    cfg: &RunConfig,
    observer: Option<Arc<dyn TxnObserver>>,
    on_interval: &mut dyn FnMut(&IntervalReport) -> AfterInterval,
) -> Result<RunReport, TpccError> {
    drive(store, cfg, observer, on_interval, None)
}

/// [`run`], handing `on_tick` the counts so far every [`LIVE_TICK`] (on
/// the calling thread, after any interval report due then) and once after
/// the terminals stopped, with the final report's counts.
pub fn run_live<S: TpccStore + Send + Sync + 'static>(
    store: &Arc<S>,
    cfg: &RunConfig,
    observer: Option<Arc<dyn TxnObserver>>,
    on_interval: &mut dyn FnMut(&IntervalReport) -> AfterInterval,
    on_tick: &mut dyn FnMut(&LiveCounts),
) -> Result<RunReport, TpccError> {
    drive(store, cfg, observer, on_interval, Some(on_tick))
}

/// The run; without `on_tick` nothing is merged between interval reports.
fn drive<S: TpccStore + Send + Sync + 'static>(
    store: &Arc<S>,
    cfg: &RunConfig,
    observer: Option<Arc<dyn TxnObserver>>,
    on_interval: &mut dyn FnMut(&IntervalReport) -> AfterInterval,
    mut on_tick: Option<&mut dyn FnMut(&LiveCounts)>,
) -> Result<RunReport, TpccError> {
    let marker = require_loaded(store.as_ref())?;
    let warehouses = cfg.warehouses.unwrap_or(marker.warehouses);
    if warehouses == 0 || warehouses > marker.warehouses {
        return Err(TpccError::Config {
            reason: format!("warehouses {warehouses}: the database has 1..={}", marker.warehouses),
        });
    }
    if cfg.connections == 0 {
        return Err(TpccError::Config {
            reason: "connections must be at least 1".into(),
        });
    }
    let weights_total: u64 = cfg.weights.iter().map(|&w| u64::from(w)).sum();
    if weights_total == 0 {
        return Err(TpccError::Config {
            reason: "the transaction weights are all zero".into(),
        });
    }
    if cfg.duration.is_zero() {
        return Err(TpccError::Config {
            reason: "duration must be positive".into(),
        });
    }
    let report_interval = if cfg.report_interval.is_zero() {
        cfg.warmup + cfg.duration
    } else {
        cfg.report_interval
    };
    let constants = NurandConstants::for_run(cfg.seed, marker.constants.c_last);
    let start = Instant::now();
    let shared = Shared {
        stop: AtomicBool::new(false),
        fatal: Mutex::new(None),
        stats: (0..cfg.connections)
            .map(|_| Mutex::new(TerminalStats::default()))
            .collect(),
        start,
        measure_start_us: AtomicU64::new(cfg.warmup.as_micros() as u64),
        measure_end_us: AtomicU64::new((cfg.warmup + cfg.duration).as_micros() as u64),
        cfg,
        weights_total,
        warehouses,
        constants,
    };
    let store_ref: &S = store.as_ref();
    let observer_ref: Option<&dyn TxnObserver> = observer.as_deref();
    let mut panicked = None;
    let mut interrupted = false;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..cfg.connections)
            .map(|t| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("tpcc-terminal-{t}"))
                    .spawn_scoped(scope, move || terminal(store_ref, shared, t, observer_ref))
            })
            .collect();
        let mut n = 0u32;
        let mut since = start;
        let mut next_tick = start + LIVE_TICK;
        while !shared.stop.load(Ordering::Relaxed) {
            if cfg.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed)) {
                interrupted = true;
                shared.end_at(Instant::now());
                break;
            }
            let (measure_start, measure_end) = (shared.measure_start(), shared.measure_end());
            let next = (since + report_interval).min(measure_end);
            // A boundary at the end of the warm-up, so no interval mixes both.
            let next = if since < measure_start && next > measure_start {
                measure_start
            } else {
                next
            };
            let now = Instant::now();
            if now >= next {
                n += 1;
                let report = interval_report(&shared, n, since, now);
                if on_interval(&report) == AfterInterval::EndWarmup && report.warmup {
                    shared.end_warmup(now);
                }
                since = now;
                if now >= shared.measure_end() {
                    break;
                }
            }
            // After the interval report: a tick past the warm-up's end
            // comes after the report that ended it.
            let mut wait = next.saturating_duration_since(now);
            if let Some(tick) = on_tick.as_mut() {
                if now >= next_tick {
                    tick(&live_counts(&shared, now));
                    next_tick = now + LIVE_TICK;
                }
                wait = wait.min(next_tick.saturating_duration_since(now));
            }
            if now < next {
                std::thread::sleep(wait.min(Duration::from_millis(50)));
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
        for (t, h) in handles.into_iter().enumerate() {
            match h {
                Ok(h) => {
                    if h.join().is_err() {
                        panicked.get_or_insert(t as u32);
                    }
                }
                Err(e) => {
                    if let Ok(mut f) = shared.fatal.lock() {
                        f.get_or_insert(TpccError::Io {
                            path: "terminal thread".into(),
                            source: e,
                        });
                    }
                }
            }
        }
    });
    if let Some(e) = shared.fatal.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    if let Some(terminal) = panicked {
        return Err(TpccError::TerminalPanic { terminal });
    }
    if let Some(tick) = on_tick {
        tick(&live_counts(&shared, Instant::now()));
    }
    let mut total = Stats::default();
    for s in &shared.stats {
        if let Ok(s) = s.lock() {
            total.merge(&s.total);
        }
    }
    let completed = total.completed();
    let window = if interrupted {
        shared.measure_end() - shared.measure_start()
    } else {
        cfg.duration
    };
    let mix_pct = TxnKind::ALL
        .iter()
        .map(|&k| {
            let c = &total.counts[k.index()];
            (
                k.name().to_string(),
                100.0 * (c.commits + c.rollbacks) as f64 / completed.max(1) as f64,
            )
        })
        .collect();
    Ok(RunReport {
        warehouses,
        connections: cfg.connections,
        seed: cfg.seed,
        warmup_s: (shared.measure_start() - start).as_secs_f64(),
        duration_s: window.as_secs_f64(),
        interrupted,
        constants,
        commits: total.sum(|c| c.commits),
        rollbacks: total.sum(|c| c.rollbacks),
        retries: total.sum(|c| c.retries),
        errors: total.sum(|c| c.errors),
        mix_pct,
        nopm: total.nopm(window),
        tpm_total: Stats::per_minute(completed, window),
        latency: total.latency(),
        per_type: total.counts.to_vec(),
    })
}
