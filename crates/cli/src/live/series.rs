//! The dashboard's history: one [`Point`] per second of run time
//! (simulated seconds in the simulator), rates differenced from the
//! cumulative counters of consecutive samples, and the JSON the page reads
//! (`/series.json`, `/decisions.json`).
//!
//! Invariants: points are in the order published; a new policy (`compare`
//! runs one after the other) starts its rates from zero counters at its own
//! time zero, as its run does; at most [`POINTS_MAX`] points are kept:
//! when full, every other one is dropped and the step doubles, so a long
//! run keeps its whole span at a coarser grain; a point's gauges (dirty,
//! free, checkpoint age) are the mean of every sample published in its
//! step, not the last one: the simulator publishes ten a second, and a
//! value read at each whole second would alias with a cleaner that runs
//! once a second (the free list refilled at every boundary, empty between).

use serde_json::{json, Map, Value};

use flushwise_core::{Decision, PoolCounters};
use flushwise_sim::metrics::TxnCounts;
use flushwise_sim::LiveSample;

/// Points kept at most.
pub const POINTS_MAX: usize = 2_000;
/// Run time between points at first, s.
const STEP_S: f64 = 1.0;

/// One step of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub policy: String,
    /// Seconds since this policy's run began.
    pub t: f64,
    pub warmup: bool,
    pub txn_per_s: f64,
    /// New-Orders committed per minute over the step.
    pub nopm: f64,
    pub sync_replacement_per_s: f64,
    pub sync_recoverability_per_s: f64,
    pub async_per_s: f64,
    pub reads_per_s: f64,
    pub dirty: u64,
    pub free: u64,
    pub checkpoint_age: u64,
    pub parameters: Vec<(String, f64)>,
}

/// The last sample a point was made from.
#[derive(Clone, Debug)]
struct Mark {
    policy: String,
    t: f64,
    pool: PoolCounters,
    txns: TxnCounts,
}

/// Gauge sums of the samples since the last point.
#[derive(Clone, Copy, Debug, Default)]
struct Gauges {
    n: u64,
    dirty: f64,
    free: f64,
    checkpoint_age: f64,
}

impl Gauges {
    fn mean(&self, sum: f64) -> u64 {
        (sum / self.n.max(1) as f64).round() as u64
    }
}

#[derive(Debug)]
pub struct Series {
    points: Vec<Point>,
    step_s: f64,
    last: Option<Mark>,
    gauges: Gauges,
    gauges_policy: String,
}

impl Default for Series {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            step_s: STEP_S,
            last: None,
            gauges: Gauges::default(),
            gauges_policy: String::new(),
        }
    }
}

impl Series {
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Adds a point for `sample` when a step has passed since the last one
    /// (or it is the run's last sample, or another policy's first).
    pub fn push(&mut self, sample: &LiveSample) {
        if self.gauges_policy != sample.policy {
            self.gauges = Gauges::default();
            self.gauges_policy = sample.policy.clone();
        }
        self.gauges.n += 1;
        self.gauges.dirty += sample.pages_dirty as f64;
        self.gauges.free += sample.pages_free as f64;
        self.gauges.checkpoint_age += sample.checkpoint_age_bytes as f64;
        let pool = sample.pool_run;
        let txns = sample.txns_run;
        let same_run = self
            .last
            .as_ref()
            .filter(|m| m.policy == sample.policy && m.t <= sample.time_s);
        let (t0, pool0, txns0) = match same_run {
            Some(m) => (m.t, m.pool, m.txns),
            None => (0.0, PoolCounters::default(), TxnCounts::default()),
        };
        let dt = sample.time_s - t0;
        let due = dt >= self.step_s || (sample.finished && dt >= self.step_s / 4.0);
        if !due || dt <= 0.0 {
            return;
        }
        let d = pool.since(&pool0);
        let n = txns.since(&txns0);
        self.points.push(Point {
            policy: sample.policy.clone(),
            t: sample.time_s,
            warmup: sample.warmup,
            txn_per_s: n.total() as f64 / dt,
            nopm: n.new_orders() as f64 * 60.0 / dt,
            sync_replacement_per_s: d.sync_replacement_writes as f64 / dt,
            sync_recoverability_per_s: d.sync_recoverability_writes as f64 / dt,
            async_per_s: d.async_writes() as f64 / dt,
            reads_per_s: d.reads as f64 / dt,
            dirty: self.gauges.mean(self.gauges.dirty),
            free: self.gauges.mean(self.gauges.free),
            checkpoint_age: self.gauges.mean(self.gauges.checkpoint_age),
            parameters: sample.parameters.clone(),
        });
        self.gauges = Gauges::default();
        self.last = Some(Mark {
            policy: sample.policy.clone(),
            t: sample.time_s,
            pool,
            txns,
        });
        if self.points.len() > POINTS_MAX {
            let mut keep = false;
            self.points.retain(|_| {
                keep = !keep;
                keep
            });
            self.step_s *= 2.0;
        }
    }
}

fn pairs(values: &[(String, f64)]) -> Value {
    Value::Object(values.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<_, _>>())
}

/// `/series.json`: the run as it stands and every point kept.
pub fn series_json(series: &Series, current: Option<&LiveSample>) -> String {
    let points: Vec<Value> = series
        .points()
        .iter()
        .map(|p| {
            json!({
                "policy": p.policy,
                "t": p.t,
                "warmup": p.warmup,
                "txn_per_s": p.txn_per_s,
                "nopm": p.nopm,
                "sync_replacement_per_s": p.sync_replacement_per_s,
                "sync_recoverability_per_s": p.sync_recoverability_per_s,
                "async_per_s": p.async_per_s,
                "reads_per_s": p.reads_per_s,
                "dirty": p.dirty,
                "free": p.free,
                "checkpoint_age": p.checkpoint_age,
                "parameters": pairs(&p.parameters),
            })
        })
        .collect();
    let run = current.map(|s| {
        let m = &s.margins;
        let pool = s.pool_run;
        json!({
            "shell": s.shell,
            "policy": s.policy,
            "seed": s.seed,
            "config_hash": s.config_hash,
            "time_s": s.time_s,
            "warmup": s.warmup,
            "finished": s.finished,
            "pages_total": s.pages_total,
            "transactions": s.txns_run.total(),
            "new_orders": s.txns_run.new_orders(),
            "reads": pool.reads,
            "sync_writes": pool.sync_writes(),
            "async_writes": pool.async_writes(),
            "margins": {
                "max_modified_age_async": m.max_modified_age_async_bytes,
                "max_modified_age_sync": m.max_modified_age_sync_bytes,
                "max_checkpoint_age": m.max_checkpoint_age_bytes,
            },
            "parameters": pairs(&s.parameters),
        })
    });
    json!({
        "run": run,
        "step_s": series.step_s,
        "points": points,
    })
    .to_string()
}

/// `/decisions.json`: the policy's latest decisions, oldest first.
pub fn decisions_json(decisions: &[Decision]) -> String {
    Value::Array(
        decisions
            .iter()
            .map(|d| {
                json!({
                    "time_s": d.time_us as f64 / 1e6,
                    "policy": d.policy,
                    "cleaner": d.cleaner,
                    "rule": d.rule,
                    "detail": d.detail,
                })
            })
            .collect(),
    )
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flushwise_core::RedoMargins;

    fn sample(policy: &str, t: f64, reads: u64, new_orders: u64, finished: bool) -> LiveSample {
        let mut txns = TxnCounts::default();
        txns.committed[0] = new_orders;
        LiveSample {
            shell: "simulator".into(),
            policy: policy.into(),
            seed: 1,
            config_hash: "h".into(),
            time_s: t,
            warmup: false,
            finished,
            pool_run: PoolCounters {
                reads,
                ..PoolCounters::default()
            },
            pool_measured: PoolCounters::default(),
            txns_run: txns,
            txns_measured: TxnCounts::default(),
            log_written_run_bytes: 0,
            log_written_measured_bytes: 0,
            latency: Vec::new(),
            pages_total: 100,
            pages_dirty: 10,
            pages_free: 5,
            checkpoint_age_bytes: 0,
            margins: RedoMargins {
                group_capacity_bytes: 0,
                max_modified_age_async_bytes: 0,
                max_modified_age_sync_bytes: 0,
                max_checkpoint_age_async_bytes: 0,
                max_checkpoint_age_bytes: 0,
            },
            parameters: vec![("pio".into(), 200.0)],
            decisions: Vec::new(),
        }
    }

    #[test]
    fn one_point_per_second_with_rates_from_the_counters() {
        let mut s = Series::default();
        for i in 1..=25u32 {
            let t = f64::from(i) * 0.1;
            s.push(&sample("a", t, 100 * u64::from(i), u64::from(i), false));
        }
        let p = s.points();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!((p[0].reads_per_s - 1000.0).abs() < 1e-6, "{p:?}");
        assert!((p[1].nopm - 600.0).abs() < 1e-6, "{p:?}");
        // The run's last sample makes a point even before a full step.
        s.push(&sample("a", 2.5, 2500, 25, true));
        assert_eq!(s.points().len(), 3);
    }

    #[test]
    fn a_points_gauges_are_the_mean_of_its_step_not_its_last_sample() {
        let mut s = Series::default();
        for i in 1..=10 {
            let mut x = sample("a", f64::from(i) * 0.1, 0, 0, false);
            // Refilled to 100 at the step's end only.
            x.pages_free = if i == 10 { 100 } else { 0 };
            s.push(&x);
        }
        assert_eq!(s.points()[0].free, 10);
    }

    #[test]
    fn a_new_policy_starts_from_zero_and_a_full_history_halves() {
        let mut s = Series::default();
        s.push(&sample("a", 1.0, 500, 0, false));
        s.push(&sample("b", 1.0, 300, 0, false));
        assert_eq!(s.points()[1].reads_per_s, 300.0);
        for i in 2..=(POINTS_MAX as u64 + 5) {
            s.push(&sample("b", i as f64, 300 * i, 0, false));
        }
        assert!(s.points().len() <= POINTS_MAX);
        assert_eq!(s.step_s, 2.0);
        let json: Value = serde_json::from_str(&series_json(&s, None)).unwrap();
        assert!(json["points"].as_array().is_some_and(|a| a.len() > 1000));
    }
}
