//! What a run measures: per-interval rows and the final result.
//!
//! Counts come from the core's cumulative [`PoolCounters`] and the
//! simulator's own counters, differenced over the measured window (warm-up
//! excluded). Field names follow the JSON contract and InnoDB's
//! metric names where one exists.

use serde::Serialize;

use flushwise_core::histogram::Histogram;
use flushwise_core::PoolCounters;

/// Transaction counters by type (TPC-C order: New-Order, Payment,
/// Order-Status, Delivery, Stock-Level, other).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TxnCounts {
    /// By [`flushwise_trace::TxnType::slot`].
    pub committed: [u64; 8],
    pub rolled_back: [u64; 8],
}

impl TxnCounts {
    pub fn since(&self, earlier: &TxnCounts) -> TxnCounts {
        let mut out = TxnCounts::default();
        for i in 0..out.committed.len() {
            out.committed[i] = self.committed[i] - earlier.committed[i];
            out.rolled_back[i] = self.rolled_back[i] - earlier.rolled_back[i];
        }
        out
    }
    pub fn new_orders(&self) -> u64 {
        self.committed[0]
    }
    /// TPC-H queries committed (slot of `TxnType::Query`).
    pub fn queries(&self) -> u64 {
        self.committed[flushwise_trace::TxnType::Query.slot()]
    }
    pub fn total(&self) -> u64 {
        self.committed.iter().sum::<u64>() + self.rolled_back.iter().sum::<u64>()
    }
}

/// Log-bucketed latency histogram (8 buckets per power of two), enough for
/// p50..p99.9 within ~9% without storing samples.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    buckets: Vec<u64>,
    count: u64,
    max_us: u64,
    sum_us: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self {
            buckets: vec![0; 64 * 8],
            count: 0,
            max_us: 0,
            sum_us: 0,
        }
    }
}

impl LatencyHistogram {
    fn bucket(us: u64) -> usize {
        if us < 8 {
            return us as usize;
        }
        let log = 63 - us.leading_zeros() as usize;
        let sub = ((us >> (log - 3)) & 7) as usize;
        (log - 2) * 8 + sub
    }

    fn bucket_upper(index: usize) -> u64 {
        if index < 8 {
            return index as u64;
        }
        let log = index / 8 + 2;
        let sub = (index % 8) as u64;
        ((8 + sub + 1) << (log - 3)) - 1
    }

    pub fn record(&mut self, us: u64) {
        let b = Self::bucket(us).min(self.buckets.len() - 1);
        self.buckets[b] += 1;
        self.count += 1;
        self.max_us = self.max_us.max(us);
        self.sum_us = self.sum_us.saturating_add(us);
    }

    /// Sum of every latency recorded, µs.
    pub fn sum_us(&self) -> u64 {
        self.sum_us
    }

    /// Latencies recorded at or below `us`, as the buckets tell it (the
    /// bucket holding `us` counts whole: within ~12 % of the bound).
    pub fn count_at_most(&self, us: u64) -> u64 {
        let last = Self::bucket(us).min(self.buckets.len() - 1);
        self.buckets[..=last].iter().sum()
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Upper bound of the bucket holding quantile `q` (0..=1).
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return Self::bucket_upper(i).min(self.max_us);
            }
        }
        self.max_us
    }

    pub fn max_us(&self) -> u64 {
        self.max_us
    }
}

impl ReadSplitFigures {
    /// From the sample's mean wall time and its means waiting for and on a
    /// core (µs): the device's part is the rest.
    pub fn from_latency(sampled_reads: u64, latency_us_mean: f64, core_wait_us_mean: f64, on_cpu_us_mean: f64) -> Self {
        Self {
            sampled_reads,
            latency_us_mean,
            core_wait_us_mean,
            on_cpu_us_mean,
            device_us_mean: (latency_us_mean - core_wait_us_mean - on_cpu_us_mean).max(0.0),
        }
    }
}

impl WritePathFigures {
    /// From the window's totals: `phase_us` per phase (the batch's wall
    /// time is their sum), over a window of `seconds`; per batch page.
    pub fn from_totals(
        batches: u64,
        batch_pages: u64,
        phase_us: &[(&str, u64)],
        seconds: f64,
        single_pages: u64,
        single_page_us: u64,
    ) -> Self {
        let pages = batch_pages.max(1) as f64;
        let batch_us: u64 = phase_us.iter().map(|(_, us)| us).sum();
        Self {
            batches,
            batch_pages,
            batch_busy_share: batch_us as f64 / 1e6 / seconds.max(1e-9),
            batch_us_per_page: batch_us as f64 / pages,
            phase_us_per_page: phase_us
                .iter()
                .map(|(name, us)| (name.to_string(), *us as f64 / pages))
                .collect(),
            single_pages,
            single_page_us_mean: single_page_us as f64 / single_pages.max(1) as f64,
            cleaner_polls_per_s: None,
            cleaner_poll_us_mean: None,
        }
    }

    /// With the cleaners' `polls` over the window of `seconds` and their
    /// total time `poll_us` (both `None` when no poll was counted).
    pub fn with_polls(mut self, polls: u64, poll_us: u64, seconds: f64) -> Self {
        if polls > 0 {
            self.cleaner_polls_per_s = Some(polls as f64 / seconds.max(1e-9));
            self.cleaner_poll_us_mean = Some(poll_us as f64 / polls as f64);
        }
        self
    }
}

/// Latency quantiles of one transaction type, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub txn_type: String,
    pub count: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl LatencySummary {
    pub fn from_histogram(txn_type: &str, h: &LatencyHistogram) -> Self {
        Self {
            txn_type: txn_type.into(),
            count: h.count(),
            p50_us: h.quantile_us(0.50),
            p90_us: h.quantile_us(0.90),
            p95_us: h.quantile_us(0.95),
            p99_us: h.quantile_us(0.99),
            p999_us: h.quantile_us(0.999),
            max_us: h.max_us(),
        }
    }
}

/// The flushing figures shared by interval rows and the final result.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlushFigures {
    pub nopm: f64,
    pub tpm_total: f64,
    pub reads: u64,
    pub async_writes: u64,
    pub sync_replacement_writes: u64,
    pub sync_recoverability_writes: u64,
    /// `percentage_sync_write` of Lee et al. §5.1.
    pub sync_write_pct: f64,
    /// Data-page reads and writes per transaction (Lee et al. Figure 4).
    pub io_per_txn: f64,
    pub hit_ratio: f64,
    pub wait_free: u64,
    pub lru_batch_flush_pages: u64,
    pub lru_batch_evict_pages: u64,
    pub flush_list_pages: u64,
    /// Mean latency of a page read, issue to completion, us.
    pub read_latency_avg_us: f64,
    /// Times user threads were held up for a free frame or redo space.
    pub user_stalls: u64,
    /// Time user threads were held up, us: for a free frame (writing a
    /// victim themselves or waiting) plus for redo space.
    pub user_stall_us: u64,
    pub free_frame_stall_us: u64,
    pub redo_space_stall_us: u64,
    /// `user_stall_us` per transaction.
    pub user_stall_us_per_txn: f64,
    /// 99th percentile of a single stall, us (`None` where a shell does not
    /// keep the window's stall histogram).
    pub user_stall_p99_us: Option<u64>,
}

impl FlushFigures {
    /// The figures of a window: its counters, transactions and length, and
    /// the histogram of the stalls that ended in it, if kept.
    pub fn compute(pool: &PoolCounters, txns: &TxnCounts, seconds: f64, stalls: Option<&Histogram>) -> Self {
        let minutes = (seconds / 60.0).max(1e-9);
        let total_txns = txns.total();
        let writes = pool.async_writes() + pool.sync_writes();
        Self {
            nopm: txns.new_orders() as f64 / minutes,
            tpm_total: total_txns as f64 / minutes,
            reads: pool.reads,
            async_writes: pool.async_writes(),
            sync_replacement_writes: pool.sync_replacement_writes,
            sync_recoverability_writes: pool.sync_recoverability_writes,
            sync_write_pct: pool.sync_write_pct(),
            io_per_txn: if total_txns == 0 {
                0.0
            } else {
                (pool.reads + writes) as f64 / total_txns as f64
            },
            hit_ratio: pool.hit_ratio(),
            wait_free: pool.wait_free,
            lru_batch_flush_pages: pool.lru_batch_flush_pages,
            lru_batch_evict_pages: pool.lru_batch_evict_pages,
            flush_list_pages: pool.flush_list_pages,
            user_stalls: pool.user_stalls,
            user_stall_us: pool.user_stall_us(),
            free_frame_stall_us: pool.free_frame_stall_us,
            redo_space_stall_us: pool.redo_space_stall_us,
            user_stall_us_per_txn: if total_txns == 0 {
                0.0
            } else {
                pool.user_stall_us() as f64 / total_txns as f64
            },
            user_stall_p99_us: stalls.map(|h| h.quantile_us(0.99)),
            read_latency_avg_us: if pool.reads_timed == 0 {
                0.0
            } else {
                pool.read_latency_us as f64 / pool.reads_timed as f64
            },
        }
    }
}

/// One report interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IntervalRow {
    pub policy: String,
    pub seed: u64,
    pub config_hash: String,
    /// End of the interval, seconds since the measured window began
    /// (negative during warm-up).
    pub time_s: f64,
    pub warmup: bool,
    #[serde(flatten)]
    pub figures: FlushFigures,
    pub dirty_pct: f64,
    pub free_pages: u32,
    pub checkpoint_age_bytes: u64,
    /// The policy's parameters at the end of the interval.
    pub parameters: Vec<(String, f64)>,
}

/// Which shell produced a [`RunResult`].
pub const SHELL_SIMULATOR: &str = "simulator";
/// Which shell produced a [`RunResult`].
pub const SHELL_ENGINE: &str = "engine";

/// One run of either shell: the one result vocabulary. The simulator and
/// the engine harness fill the same fields with the same meaning, so JSON,
/// CSV and tables name a quantity the same way whichever shell measured
/// it; a field only one shell can know is an `Option` (JSON `null` for the
/// other shell, so every row of a kind has the same keys).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    /// [`SHELL_SIMULATOR`] or [`SHELL_ENGINE`].
    pub shell: String,
    pub policy: String,
    pub workload: String,
    pub device: String,
    pub log_device: String,
    pub buffer_pool_bytes: u64,
    pub redo_bytes: u64,
    pub page_size_bytes: u32,
    /// `innodb_doublewrite`.
    pub doublewrite: bool,
    /// `innodb_flush_log_at_trx_commit` (engine only: the simulator charges
    /// a log write per commit and has no such setting).
    pub flush_log_at_trx_commit: Option<u8>,
    pub warehouses: u32,
    pub connections: u32,
    pub seed: u64,
    pub config_hash: String,
    pub commit: String,
    #[serde(flatten)]
    pub figures: FlushFigures,
    /// Time-weighted dirty share of the pool over the measured window, %.
    pub dirty_pct_avg: f64,
    pub free_pages_avg: f64,
    pub checkpoint_age_avg_bytes: f64,
    pub transactions: u64,
    pub rollbacks: u64,
    /// Deadlock / lock-timeout retries, not counted as transactions
    /// (the simulator has no locks: 0).
    pub retries: u64,
    pub requests: u64,
    /// Length of the measured window, s (simulated seconds in the
    /// simulator, wall-clock seconds on the engine).
    pub measured_seconds: f64,
    /// Length of the warm-up before it, s (on the engine it may end early
    /// once the policy is steady: `--warmup steady`).
    pub warmup_seconds: f64,
    /// Simulated time at the end of the run, warm-up included, s
    /// (simulator only).
    pub simulated_seconds: Option<f64>,
    pub wall_seconds: f64,
    /// Simulated buffer requests (fixes) per wall-clock second, warm-up
    /// included (simulator only: its speed).
    pub requests_per_second: Option<f64>,
    pub cleaner_iterations: Option<u64>,
    pub final_parameters: Vec<(String, f64)>,
    pub latency: Vec<LatencySummary>,
    /// Share of each transaction type among finished transactions, %.
    pub mix_pct: Vec<(String, f64)>,
    /// Pages of the modelled database (simulator only).
    pub database_pages: Option<u64>,
    /// Bytes of the database: modelled pages (simulator), or the files of
    /// the run's directory, redo included (engine).
    pub database_bytes: u64,
    /// Records written to the `--trace` file, if one was recorded (engine).
    pub trace_records: Option<u64>,
    /// The run was stopped before its end (Ctrl-C, SIGTERM on the engine;
    /// in the simulator, a replayed trace whose first connection ran out
    /// of transactions): the figures cover `measured_seconds` only.
    /// Written only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The change buffer's counters (simulator runs of the insert load
    /// with it on; written only then, `crate::change_buffer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_buffer: Option<crate::change_buffer::ChangeBufferSimStats>,
    /// Where the page writers' time went over the measured window (engine
    /// only: the simulator charges modelled device time, not phases).
    pub write_path: Option<WritePathFigures>,
    /// Where user page reads spent their time, call to return: the device,
    /// the wait for a core after it answered, the CPU on the way
    /// (`read_latency_avg_us` is the device's part alone in the simulator).
    /// `None` where nothing was measured (no read; a kernel without
    /// scheduler counters).
    pub read_split: Option<ReadSplitFigures>,
    /// Time a transaction's thread was runnable without a core, per
    /// attempt, µs: the engine's user threads by their scheduler counters
    /// (measured with `--trace` only), the simulator's agents by the
    /// queueing of their CPU bursts (after reads too) on the modelled cores.
    /// `None` where not measured or no core is modelled.
    pub core_wait_us_per_txn: Option<f64>,
    /// Time a transaction waited at commit for its log write (and fsync),
    /// per attempt, µs: the engine's user threads around
    /// `commit_durability`, the simulator's agents
    /// from the commit to the end of the log write that covers it.
    pub commit_wait_us_per_txn: Option<f64>,
    /// Time a transaction's thread was blocked acquiring the buffer pool's
    /// core mutex, per attempt, µs (engine only, every run: a thread-local
    /// running total, no system call; the simulator's core decisions take
    /// no time, so `None` there).
    pub core_mutex_wait_us_per_txn: Option<f64>,
    /// Time a transaction's thread was blocked acquiring page latches, per
    /// attempt, µs (engine only, every run; the simulator has no page
    /// latches, so `None` there).
    pub page_latch_wait_us_per_txn: Option<f64>,
    /// Mean wall time of a log write that ends in an fsync (a group
    /// commit's time on the device), µs: the engine's redo writer around
    /// its writes and `fdatasync`, the simulator's log device model plus
    /// the device's fsync. `None` where no such write ended in the window.
    pub log_synced_write_us_mean: Option<f64>,
}

/// Users' page reads over a measured window, split into the device's time,
/// the reading thread's wait for a core after it, and its CPU. Means per
/// read, µs. The engine samples one read in four per thread and splits it
/// with the thread's scheduler counters (Linux
/// `/proc/thread-self/schedstat`); the simulator counts every read: its
/// device model's latency, then the queueing of the agent's next CPU burst
/// on the modelled cores (`cpu::CpuCores`) and that burst (`fix_us`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadSplitFigures {
    pub sampled_reads: u64,
    /// Wall time of the read, call to return (the sample's own
    /// `read_latency_avg_us`).
    pub latency_us_mean: f64,
    /// Runnable without a core: after the device answered, the thread
    /// waits for one of the machine's cores (engine), the agent's burst
    /// queues behind others' (simulator).
    pub core_wait_us_mean: f64,
    /// On a core: the system call and the page's checksum (engine), the
    /// fix's modelled CPU (simulator).
    pub on_cpu_us_mean: f64,
    /// The rest: the device (and the kernel's block layer).
    pub device_us_mean: f64,
}

/// The engine's page-write path over a measured window: how busy the batch
/// writers were and which phase held them (the engine's
/// `storage::write_timing`). Per-page figures divide by the batches'
/// pages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WritePathFigures {
    /// Batches written (page-cleaner LRU batches and flush-list slices,
    /// users' multi-page sync flushes).
    pub batches: u64,
    pub batch_pages: u64,
    /// Wall time inside batch writes over the window's length: 0.89 means
    /// a single cleaner was writing 89 % of the time (can exceed 1 when
    /// several threads write batches).
    pub batch_busy_share: f64,
    /// Batch time per page written, µs (all phases).
    pub batch_us_per_page: f64,
    /// Per phase (`copy_images`, `wait_redo`, `doublewrite_lock_wait`,
    /// `doublewrite_write`, `doublewrite_sync`, `in_place_write`,
    /// `tablespace_sync`, `complete`), µs per batch page.
    pub phase_us_per_page: Vec<(String, f64)>,
    /// Users' single-page flushes and their mean time, µs.
    pub single_pages: u64,
    pub single_page_us_mean: f64,
    /// The page cleaners' decisions (polls) a second and their mean time,
    /// µs: each holds the buffer pool's core mutex, which users' misses
    /// and commits wait on (engine only; the simulator's decisions take no
    /// time, so `None` there).
    pub cleaner_polls_per_s: Option<f64>,
    pub cleaner_poll_us_mean: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_close() {
        let mut h = LatencyHistogram::default();
        for us in 1..=10_000 {
            h.record(us);
        }
        let p50 = h.quantile_us(0.5) as f64;
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.13, "{p50}");
        let p99 = h.quantile_us(0.99) as f64;
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.13, "{p99}");
        assert_eq!(h.max_us(), 10_000);
    }
}
