//! A run as a live observer sees it now: [`LiveSample`], the one snapshot
//! both shells hand to whoever watches a run while it goes (the CLI's
//! `--metrics-addr` endpoint and dashboard).
//!
//! Invariants:
//! - a sample is built from the very counters the run's [`RunResult`] is
//!   built from (the pool's cumulative `PoolCounters`, the transaction
//!   counts, the latency histograms), never from a count of its own; so the
//!   last sample of a run agrees with its result: the result's figures are
//!   computed from `pool_measured` and `txns_measured`, its latency
//!   summaries from the histograms `latency` is read from;
//! - counters are split at the end of the warm-up into a warm-up part and a
//!   measured part; each part only grows (the warm-up part stops growing
//!   when the measurement starts, the measured part is zero before);
//! - `latency` covers the measured window only (empty while warming up),
//!   as the result's latency does.
//!
//! [`RunResult`]: crate::metrics::RunResult

use flushwise_core::histogram::Histogram;
use flushwise_core::{Decision, PoolCounters, RedoMargins};

use crate::metrics::{LatencyHistogram, TxnCounts};

/// Transaction types in [`TxnCounts`] order, as results name them.
pub const TXN_TYPES: [&str; 8] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
    "other",
    "query",
    "refresh",
];

/// Upper bounds of the latency buckets a live observer gets, µs: 0.5 ms to
/// 10 s in 1-2.5-5 steps, the span of TPC-C latencies from a hit-only
/// Order-Status to a Delivery stuck behind synchronous writes.
pub const LATENCY_BOUNDS_US: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
    10_000_000,
];

/// How many of the policy's latest decisions a sample carries.
pub const DECISIONS_KEPT: usize = 50;

/// Latency of one transaction type over the measured window, bucketed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyBuckets {
    pub txn_type: String,
    pub count: u64,
    pub sum_us: u64,
    /// Transactions at or below each of [`LATENCY_BOUNDS_US`] (cumulative,
    /// as the histogram's buckets tell it).
    pub at_most: Vec<u64>,
}

impl LatencyBuckets {
    /// From the simulator's histogram.
    pub fn from_sim(txn_type: &str, h: &LatencyHistogram) -> Self {
        Self {
            txn_type: txn_type.to_string(),
            count: h.count(),
            sum_us: h.sum_us(),
            at_most: LATENCY_BOUNDS_US.iter().map(|&b| h.count_at_most(b)).collect(),
        }
    }

    /// From the engine driver's histogram.
    pub fn from_histogram(txn_type: &str, h: &Histogram) -> Self {
        Self {
            txn_type: txn_type.to_string(),
            count: h.count(),
            sum_us: u64::try_from(h.sum_us()).unwrap_or(u64::MAX),
            at_most: LATENCY_BOUNDS_US.iter().map(|&b| h.count_at_most(b)).collect(),
        }
    }
}

/// One moment of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSample {
    /// `simulator` or `engine`.
    pub shell: String,
    pub policy: String,
    pub seed: u64,
    pub config_hash: String,
    /// Seconds since the run began, warm-up included (simulated seconds in
    /// the simulator, wall-clock seconds on the engine).
    pub time_s: f64,
    /// Still warming up.
    pub warmup: bool,
    /// The run is over: this is its last sample.
    pub finished: bool,
    /// The pool's counters over the whole run so far, warm-up included.
    pub pool_run: PoolCounters,
    /// The pool's counters over the measured window (zero until it starts):
    /// what the result's figures are computed from.
    pub pool_measured: PoolCounters,
    pub txns_run: TxnCounts,
    /// The result's `transactions` (committed and rolled back, per type).
    pub txns_measured: TxnCounts,
    /// Redo bytes generated (LSN advance) over the run and over the
    /// measured window.
    pub log_written_run_bytes: u64,
    pub log_written_measured_bytes: u64,
    /// Per transaction type that ran, over the measured window.
    pub latency: Vec<LatencyBuckets>,
    pub pages_total: u64,
    pub pages_dirty: u64,
    pub pages_free: u64,
    pub checkpoint_age_bytes: u64,
    pub margins: RedoMargins,
    /// The policy's parameters as they stand.
    pub parameters: Vec<(String, f64)>,
    /// The policy's latest decisions, oldest first, at most
    /// [`DECISIONS_KEPT`] (empty when the shell keeps no decision log).
    pub decisions: Vec<Decision>,
}

impl LiveSample {
    /// The pool's counters over the warm-up (growing while it lasts).
    pub fn pool_warmup(&self) -> PoolCounters {
        self.pool_run.since(&self.pool_measured)
    }

    pub fn txns_warmup(&self) -> TxnCounts {
        self.txns_run.since(&self.txns_measured)
    }

    pub fn log_written_warmup_bytes(&self) -> u64 {
        self.log_written_run_bytes - self.log_written_measured_bytes
    }
}
