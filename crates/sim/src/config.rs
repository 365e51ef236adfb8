//! A simulation's full configuration, its validation and its hash.
//!
//! Every output row carries `config_hash` (FNV-1a 64 of the canonical
//! rendering below) with the seed and the commit, so a number can always be
//! traced to the exact run that produced it (LeanStore / TigerBeetle habit).

use std::path::PathBuf;

use serde::Serialize;

use flushwise_core::limits::{CONNECTIONS_MAX, POOL_FRAMES_MAX, SIM_POOL_FRAMES_MIN};
use flushwise_core::policy::PolicySpec;
use flushwise_core::TimeUs;
use flushwise_tpcc_model::TpccMix;
use flushwise_trace::TxnType;

/// Where the page references come from.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadSpec {
    /// The TPC-C page-reference model at `warehouses`, drawing transaction
    /// types from `mix`.
    Tpcc {
        warehouses: u32,
        #[serde(serialize_with = "serialize_mix")]
        mix: TpccMix,
    },
    /// A recorded trace in flushwise's format.
    Trace { path: PathBuf },
    /// The TPC-H page-reference model (`flushwise_tpcc_model::tpch`) at
    /// scale factor `sf_thousandths` / 1000: query streams, and a refresh
    /// stream on agent 0 when `refresh`.
    Tpch { sf_thousandths: u32, refresh: bool },
    /// Paper 004's insert load (`flushwise_tpcc_model::insert`): `rows`
    /// loaded, `secondary_indexes` non-unique indexes on random keys; with
    /// the change buffer at `change_buffer_max_pct` % of the pool (0: off;
    /// `crate::change_buffer`); `update_pct` % of the transactions update a
    /// loaded row's secondary columns instead of inserting.
    Insert {
        rows: u64,
        secondary_indexes: u32,
        change_buffer_max_pct: u8,
        update_pct: u8,
    },
}

impl WorkloadSpec {
    /// TPC-C at `warehouses` with the specification's mix.
    pub const fn tpcc(warehouses: u32) -> Self {
        WorkloadSpec::Tpcc {
            warehouses,
            mix: TpccMix::Standard,
        }
    }
}

/// Written by hand so the canonical text (and so every configuration
/// hash) of a standard-mix run is what it was before mixes existed: the
/// mix appears only when it is not TPC-C's own.
impl std::fmt::Debug for WorkloadSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadSpec::Tpcc {
                warehouses,
                mix: TpccMix::Standard,
            } => f.debug_struct("Tpcc").field("warehouses", warehouses).finish(),
            WorkloadSpec::Tpcc { warehouses, mix } => f
                .debug_struct("Tpcc")
                .field("warehouses", warehouses)
                .field("mix", mix)
                .finish(),
            WorkloadSpec::Trace { path } => f.debug_struct("Trace").field("path", path).finish(),
            WorkloadSpec::Tpch {
                sf_thousandths,
                refresh,
            } => f
                .debug_struct("Tpch")
                .field("sf_thousandths", sf_thousandths)
                .field("refresh", refresh)
                .finish(),
            WorkloadSpec::Insert {
                rows,
                secondary_indexes,
                change_buffer_max_pct,
                update_pct,
            } => {
                let mut d = f.debug_struct("Insert");
                d.field("rows", rows)
                    .field("secondary_indexes", secondary_indexes)
                    .field("change_buffer_max_pct", change_buffer_max_pct);
                // Only when set: insert-only runs keep their hashes.
                if *update_pct > 0 {
                    d.field("update_pct", update_pct);
                }
                d.finish()
            }
        }
    }
}

fn serialize_mix<S: serde::Serializer>(mix: &TpccMix, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(mix)
}

/// CPU time charged per operation. Defaults approximate MySQL 5.6 on the
/// paper's Intel i7-2600K (4 cores): about 2.5 ms of SQL-layer work per
/// TPC-C transaction (an estimate: a 4-core desktop of that generation runs
/// on the order of 1,000-1,500 such transactions per second in memory) and a
/// few microseconds per page fix. Wang & Bunt's Table 3 values (FixTime 20,
/// UnfixTime 16 units at 1.5 us per unit) are the `db2_table3` preset.
#[derive(Clone, Copy, PartialEq, Serialize)]
pub struct CpuCosts {
    pub fix_us: u32,
    pub unfix_us: u32,
    /// Per transaction (parsing, network round trips, row processing).
    pub txn_us: u32,
    /// Per transaction of each type ([`TxnType::slot`] order), in place of
    /// `txn_us`: an engine run's measured CPU ([`MeasuredCpuCosts`]).
    pub txn_us_by_type: Option<[u32; TxnType::SLOTS]>,
    /// CPU the engine spent outside its user threads per transaction (page
    /// cleaner, in-place write helpers, log writer, trace recorder), µs:
    /// charged at each transaction's end as a burst that takes a core but
    /// holds no agent up, as those threads share the cores with the users.
    /// 0 = none (the model before it was measured).
    pub background_us_per_txn: u32,
    /// Time an engine run's transactions of each type spent blocked on key
    /// locks, per attempt ([`TxnType::slot`] order), µs: the simulator
    /// models no lock, so a replay holds each transaction up this long at
    /// its start, on no core and holding no page (issue #18). `None`: no
    /// wait (the model before it was measured).
    pub lock_wait_us_by_type: Option<[u32; TxnType::SLOTS]>,
    /// An engine run's measured time blocked on its buffer pool's core
    /// mutex and on page latches per transaction of each type, µs,
    /// charged beside the key-lock wait (after the transaction's start
    /// CPU, on no core, holding no page): the model's core decisions take
    /// no time and its pages have no latches (issue #18). `None`: no
    /// wait (files written before it was measured; the model's own costs).
    pub latch_wait_us_by_type: Option<[u32; TxnType::SLOTS]>,
    /// Where a transaction's CPU (`txn_us`, `txn_us_by_type`) is spent.
    /// `false`: all of it at its start, one burst (the model's default
    /// costs, which are an estimate of SQL-layer work). `true`: spread
    /// evenly over its start and each of its page fixes, as an engine
    /// thread spends it between its reads (measured costs, issue #18: one
    /// burst of a whole stock-level transaction, 8.4 ms, held every read
    /// completing behind it; the replay's reads waited 285 µs for a core,
    /// the engine's 89).
    pub txn_cpu_along_fixes: bool,
}

impl Default for CpuCosts {
    fn default() -> Self {
        Self {
            fix_us: 3,
            unfix_us: 1,
            txn_us: 2_500,
            txn_us_by_type: None,
            background_us_per_txn: 0,
            lock_wait_us_by_type: None,
            latch_wait_us_by_type: None,
            txn_cpu_along_fixes: false,
        }
    }
}

/// Written by hand so the canonical text (and every configuration hash)
/// of a run without per-type costs is what it was before they existed.
impl std::fmt::Debug for CpuCosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("CpuCosts");
        d.field("fix_us", &self.fix_us)
            .field("unfix_us", &self.unfix_us)
            .field("txn_us", &self.txn_us);
        if let Some(by_type) = &self.txn_us_by_type {
            d.field("txn_us_by_type", by_type);
        }
        if self.background_us_per_txn > 0 {
            d.field("background_us_per_txn", &self.background_us_per_txn);
        }
        if let Some(by_type) = &self.lock_wait_us_by_type {
            d.field("lock_wait_us_by_type", by_type);
        }
        if let Some(by_type) = &self.latch_wait_us_by_type {
            d.field("latch_wait_us_by_type", by_type);
        }
        if self.txn_cpu_along_fixes {
            d.field("txn_cpu_along_fixes", &true);
        }
        d.finish()
    }
}

/// The CPU an engine run's user threads spent per transaction, by type:
/// what `tpcc run --trace FILE` writes beside the trace (`FILE.cpu.json`)
/// so that `sim run --workload trace --cpu-costs FILE.cpu.json` charges
/// the engine's own costs (issue #18). Thread CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`) from a transaction's begin to its end, over
/// the measured window, every attempt counted (a retry pays again); it
/// includes the page fixes and the system time of the thread's own I/O
/// calls, and excludes every wait (I/O, locks, the log). The time blocked
/// on key locks is measured beside it (`lock_wait_us_mean`).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredCpuCosts {
    /// `engine-cpu-costs`.
    pub kind: String,
    pub commit: String,
    /// What ran (the trace's description).
    pub source: String,
    /// One per transaction type that ran.
    pub txn_types: Vec<MeasuredTxnCpu>,
    /// The process's CPU (`CLOCK_PROCESS_CPUTIME_ID`) over the measured
    /// window minus the user threads' above, per attempt: the page
    /// cleaner's, the in-place write helpers', the log writer's and the
    /// trace recorder's work. Absent in files written before it was
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_cpu_us_per_txn: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredTxnCpu {
    /// `new_order`, `payment`, ... ([`crate::live::TXN_TYPES`]).
    pub txn_type: String,
    pub attempts: u64,
    pub cpu_us_mean: f64,
    /// Time blocked on key locks per attempt (wall time from a blocked
    /// request to its answer), µs. Absent in files written before it was
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_wait_us_mean: Option<f64>,
    /// Time the attempt's thread was runnable without a core (Linux
    /// schedstat `run_delay`), per attempt, µs: after every wake-up (a
    /// read's completion, a lock's grant, a commit's fsync) a thread of
    /// the engine waits for one of the machine's cores. Not charged by
    /// the replay (its cores are modelled, `cpu::CpuCores`); recorded to
    /// account for the engine's time. Absent where not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_wait_us_mean: Option<f64>,
    /// Wall time per attempt, begin to commit or rollback, µs. Absent in
    /// files written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_us_mean: Option<f64>,
    /// Time waiting at commit for the log to be written and fsynced, per
    /// attempt, µs. Not charged by the replay (it models the log writer
    /// and its device); recorded to account for the engine's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_wait_us_mean: Option<f64>,
    /// Time blocked acquiring the buffer pool's core mutex per attempt,
    /// µs (`engine::buffer::latch_wait`). Not charged by the replay (its
    /// core decisions take no time); recorded to account for the
    /// engine's. Absent in files written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_mutex_wait_us_mean: Option<f64>,
    /// Time blocked acquiring page latches per attempt, µs (another
    /// thread's read of the page, a user holding it exclusively, a
    /// cleaner copying it). Not charged by the replay; recorded likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_latch_wait_us_mean: Option<f64>,
}

impl MeasuredCpuCosts {
    pub const KIND: &'static str = "engine-cpu-costs";

    /// Time blocked on key locks per attempt over every type, µs (0 when
    /// the file has none).
    pub fn lock_wait_us_per_attempt(&self) -> f64 {
        let attempts: u64 = self.txn_types.iter().map(|t| t.attempts).sum();
        let waited: f64 = self
            .txn_types
            .iter()
            .map(|t| t.lock_wait_us_mean.unwrap_or(0.0) * t.attempts as f64)
            .sum();
        if attempts == 0 {
            0.0
        } else {
            waited / attempts as f64
        }
    }

    /// The simulator's costs: each type its measured mean (fixes included,
    /// so `fix_us` and `unfix_us` are 0); a type that did not run costs
    /// the attempt-weighted mean of those that did.
    pub fn to_costs(&self) -> Result<CpuCosts, String> {
        if self.kind != Self::KIND {
            return Err(format!("`kind` is {:?}, expected {:?}", self.kind, Self::KIND));
        }
        let mut by_type = [None; TxnType::SLOTS];
        let mut lock_wait_by_type = [0u32; TxnType::SLOTS];
        let mut lock_waits_measured = false;
        let mut latch_wait_by_type = [0u32; TxnType::SLOTS];
        let mut latch_waits_measured = false;
        let (mut sum, mut attempts) = (0.0, 0u64);
        for t in &self.txn_types {
            let slot = crate::live::TXN_TYPES
                .iter()
                .position(|name| *name == t.txn_type)
                .ok_or_else(|| {
                    format!(
                        "unknown `txn_type` {:?}: one of {}",
                        t.txn_type,
                        crate::live::TXN_TYPES.join(", ")
                    )
                })?;
            if !(t.cpu_us_mean.is_finite() && t.cpu_us_mean >= 0.0) {
                return Err(format!("{}: `cpu_us_mean` must be finite and >= 0", t.txn_type));
            }
            by_type[slot] = Some(t.cpu_us_mean.round() as u32);
            // A measured wait, rounded; a bad one names its field.
            let checked = |name: &str, wait: Option<f64>| match wait {
                Some(w) if !(w.is_finite() && w >= 0.0) => {
                    Err(format!("{}: `{name}` must be finite and >= 0", t.txn_type))
                }
                w => Ok(w.map(|w| w.round() as u32)),
            };
            if let Some(wait) = checked("lock_wait_us_mean", t.lock_wait_us_mean)? {
                lock_wait_by_type[slot] = wait;
                lock_waits_measured = true;
            }
            for (name, wait) in [
                ("core_mutex_wait_us_mean", t.core_mutex_wait_us_mean),
                ("page_latch_wait_us_mean", t.page_latch_wait_us_mean),
            ] {
                if let Some(wait) = checked(name, wait)? {
                    latch_wait_by_type[slot] = latch_wait_by_type[slot].saturating_add(wait);
                    latch_waits_measured = true;
                }
            }
            sum += t.cpu_us_mean * t.attempts as f64;
            attempts += t.attempts;
        }
        if attempts == 0 {
            return Err("no transaction was measured".into());
        }
        let mean = (sum / attempts as f64).round() as u32;
        let background = match self.background_cpu_us_per_txn {
            Some(us) if us.is_finite() && us >= 0.0 => us.round() as u32,
            Some(_) => return Err("`background_cpu_us_per_txn` must be finite and >= 0".into()),
            None => 0,
        };
        Ok(CpuCosts {
            fix_us: 0,
            unfix_us: 0,
            txn_us: mean,
            txn_us_by_type: Some(by_type.map(|c| c.unwrap_or(mean))),
            background_us_per_txn: background,
            lock_wait_us_by_type: lock_waits_measured.then_some(lock_wait_by_type),
            latch_wait_us_by_type: latch_waits_measured.then_some(latch_wait_by_type),
            txn_cpu_along_fixes: true,
        })
    }
}

impl CpuCosts {
    /// The CPU charged at the start of a transaction of `txn_type`.
    pub fn txn_us_of(&self, txn_type: TxnType) -> u32 {
        self.txn_us_by_type.map_or(self.txn_us, |by| by[txn_type.slot()])
    }

    /// The lock wait a transaction of `txn_type` is held up at its start
    /// (0 when none was measured, or for a type that did not run).
    pub fn lock_wait_us_of(&self, txn_type: TxnType) -> u32 {
        self.lock_wait_us_by_type.map_or(0, |by| by[txn_type.slot()])
    }

    /// The measured core-mutex and page-latch wait a transaction of
    /// `txn_type` is held up at its start (0 when none was measured).
    pub fn latch_wait_us_of(&self, txn_type: TxnType) -> u32 {
        self.latch_wait_us_by_type.map_or(0, |by| by[txn_type.slot()])
    }
}

impl CpuCosts {
    /// Wang & Bunt Table 3: FixTime 20 and UnfixTime 16 units, 1.5 us each
    /// (40 M units ~ 1 minute); no per-transaction cost.
    pub fn db2_table3() -> Self {
        Self {
            fix_us: 30,
            unfix_us: 24,
            txn_us: 0,
            txn_us_by_type: None,
            background_us_per_txn: 0,
            lock_wait_us_by_type: None,
            latch_wait_us_by_type: None,
            txn_cpu_along_fixes: false,
        }
    }
}

/// MySQL 5.6's doublewrite slots for single-page flushes (128 - 120).
pub const SINGLE_PAGE_SLOTS_MYSQL56: u32 = flushwise_core::free_page_path::DOUBLEWRITE_SINGLE_PAGE_SLOTS;

#[derive(Clone, PartialEq, Serialize)]
pub struct SimConfig {
    pub workload: WorkloadSpec,
    /// Agents (database connections). Ignored for traces (their agents are used).
    pub connections: u32,
    pub buffer_pool_bytes: u64,
    pub redo_bytes: u64,
    pub page_size_bytes: u32,
    /// Device model for data pages (a `DeviceSpec` name, or
    /// `calibrated:PATH#HASH`: see [`crate::device`]).
    pub data_device: String,
    /// Device model for the redo log (separate disk, Lee et al. §5.1).
    pub log_device: String,
    #[serde(serialize_with = "serialize_display")]
    pub policy: PolicySpec,
    pub warmup_us: TimeUs,
    pub duration_us: TimeUs,
    pub seed: u64,
    /// CPU cores; 0 = unlimited (Wang & Bunt leave the CPU out).
    pub cpu_cores: u32,
    pub costs: CpuCosts,
    pub report_interval_us: TimeUs,
    /// `innodb_thread_concurrency` (16 in Lee et al. Table 3), used by the redo margins.
    pub thread_concurrency: u32,
    /// Record every policy decision with its reason.
    pub decision_log: bool,
    /// Keep one machine-readable record per page-cleaner iteration
    /// (`flushwise_core::IterationRecord`; `--decisions FILE.jsonl`).
    pub iteration_records: bool,
    /// `innodb_doublewrite` (ON by default in MySQL 5.6).
    pub doublewrite: bool,
    /// In-place writes of a doublewrite batch in flight at once: 0 = all
    /// of them (MySQL 5.6.15 posts them at once through native AIO), 16 =
    /// the engine (`IN_PLACE_WRITE_DEPTH` threads); what a replay that
    /// predicts the engine wants (issue #18).
    pub in_place_write_depth: u32,
    /// Doublewrite slots reserved for users' single-page flushes: at most
    /// this many are in flight, the others wait for a slot (MySQL 5.6: 8,
    /// `2 * TRX_SYS_DOUBLEWRITE_BLOCK_SIZE - srv_doublewrite_batch_size`,
    /// `buf0dblwr.cc` `buf_dblwr_write_single_page`; the engine's
    /// `SINGLE_PAGE_SLOTS`). 0 = no limit (the model before the slots).
    pub single_page_slots: u32,
}

/// Written by hand so the canonical text (and every configuration hash)
/// of a run that posts a batch's writes at once is what it was before the
/// depth existed: the derived form, the depth only when set.
impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("SimConfig");
        d.field("workload", &self.workload)
            .field("connections", &self.connections)
            .field("buffer_pool_bytes", &self.buffer_pool_bytes)
            .field("redo_bytes", &self.redo_bytes)
            .field("page_size_bytes", &self.page_size_bytes)
            .field("data_device", &self.data_device)
            .field("log_device", &self.log_device)
            .field("policy", &self.policy)
            .field("warmup_us", &self.warmup_us)
            .field("duration_us", &self.duration_us)
            .field("seed", &self.seed)
            .field("cpu_cores", &self.cpu_cores)
            .field("costs", &self.costs)
            .field("report_interval_us", &self.report_interval_us)
            .field("thread_concurrency", &self.thread_concurrency)
            .field("decision_log", &self.decision_log)
            .field("iteration_records", &self.iteration_records)
            .field("doublewrite", &self.doublewrite);
        if self.in_place_write_depth > 0 {
            d.field("in_place_write_depth", &self.in_place_write_depth);
        }
        if self.single_page_slots > 0 {
            d.field("single_page_slots", &self.single_page_slots);
        }
        d.finish()
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            workload: WorkloadSpec::tpcc(10),
            connections: 20,
            buffer_pool_bytes: 64 << 20,
            redo_bytes: 256 << 20,
            page_size_bytes: 16384,
            data_device: "samsung-850-pro".into(),
            log_device: "samsung-850-pro".into(),
            policy: PolicySpec::default(),
            warmup_us: 60_000_000,
            duration_us: 120_000_000,
            seed: 1,
            cpu_cores: 4,
            costs: CpuCosts::default(),
            report_interval_us: 10_000_000,
            thread_concurrency: 16,
            decision_log: false,
            iteration_records: false,
            doublewrite: true,
            in_place_write_depth: 0,
            single_page_slots: SINGLE_PAGE_SLOTS_MYSQL56,
        }
    }
}

impl SimConfig {
    /// Frames in the buffer pool.
    pub fn frames(&self) -> u64 {
        self.buffer_pool_bytes / u64::from(self.page_size_bytes.max(1))
    }

    /// Checks everything that does not need the workload; each error names
    /// the flag and what is accepted.
    pub fn validate(&self) -> Result<(), String> {
        if !self.page_size_bytes.is_power_of_two() || !(4096..=65536).contains(&self.page_size_bytes) {
            return Err(format!(
                "--page-size {}: a power of two from 4096 to 65536 bytes is accepted",
                self.page_size_bytes
            ));
        }
        if self.frames() < SIM_POOL_FRAMES_MIN {
            return Err(format!(
                "--buffer-pool {} bytes holds {} pages: at least {SIM_POOL_FRAMES_MIN} pages ({} bytes) are needed",
                self.buffer_pool_bytes,
                self.frames(),
                SIM_POOL_FRAMES_MIN * u64::from(self.page_size_bytes)
            ));
        }
        if self.frames() > POOL_FRAMES_MAX {
            return Err(format!("--buffer-pool {} bytes is too large", self.buffer_pool_bytes));
        }
        if matches!(self.workload, WorkloadSpec::Tpcc { .. }) && self.connections == 0 {
            return Err("--connections 0: at least one connection is needed".into());
        }
        if let WorkloadSpec::Tpch {
            sf_thousandths,
            refresh,
        } = self.workload
        {
            if !(1..=1_000_000).contains(&sf_thousandths) {
                return Err(format!(
                    "--sf {}: the scale factor must be from 0.001 to 1000",
                    f64::from(sf_thousandths) / 1000.0
                ));
            }
            let needed = if refresh { 2 } else { 1 };
            if self.connections < needed {
                return Err(format!(
                    "--connections {}: TPC-H needs at least {needed} (the refresh stream and one query stream; --no-refresh leaves only query streams)",
                    self.connections
                ));
            }
        }
        if let WorkloadSpec::Tpcc { warehouses, .. } = self.workload {
            if !(1..=flushwise_tpcc_model::WAREHOUSES_MAX).contains(&warehouses) {
                return Err(format!(
                    "--warehouses {warehouses}: 1 to {} warehouses are accepted",
                    flushwise_tpcc_model::WAREHOUSES_MAX
                ));
            }
        }
        if self.connections > CONNECTIONS_MAX {
            return Err(format!(
                "--connections {}: at most {CONNECTIONS_MAX} are accepted",
                self.connections
            ));
        }
        crate::device::resolve_device(&self.data_device).map_err(|e| format!("--device: {e}"))?;
        crate::device::resolve_device(&self.log_device).map_err(|e| format!("--log-device: {e}"))?;
        flushwise_core::RedoMargins::compute(
            &flushwise_core::RedoConfig {
                capacity_bytes: self.redo_bytes,
                thread_concurrency: self.thread_concurrency,
            },
            self.page_size_bytes,
        )
        .map_err(|e| format!("--redo: {e}"))?;
        if self.duration_us == 0 {
            return Err("--duration 0: the measured run must last longer than zero".into());
        }
        if self.report_interval_us == 0 {
            return Err("--report-interval 0: must be longer than zero".into());
        }
        Ok(())
    }

    /// A canonical one-line rendering of every field (what the hash covers).
    pub fn canonical(&self) -> String {
        format!("{self:?}")
    }

    /// FNV-1a 64 of [`SimConfig::canonical`], as 16 hex digits.
    pub fn config_hash(&self) -> String {
        config_hash_of(&self.canonical())
    }
}

fn serialize_display<S: serde::Serializer>(value: &PolicySpec, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// The 16-hex-digit FNV-1a hash of a canonical configuration text; every
/// run of the simulator and of the engine names its configuration by it.
pub fn config_hash_of(canonical: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canonical.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_cpu_costs_charge_each_type_and_keep_old_hashes_without_them() {
        assert_eq!(
            format!("{:?}", CpuCosts::default()),
            "CpuCosts { fix_us: 3, unfix_us: 1, txn_us: 2500 }",
            "configuration hashes of runs without measured costs stay as they were"
        );
        let t = |name: &str, attempts, cpu_us_mean| MeasuredTxnCpu {
            txn_type: name.into(),
            attempts,
            cpu_us_mean,
            lock_wait_us_mean: None,
            core_wait_us_mean: None,
            wall_us_mean: None,
            commit_wait_us_mean: None,
            core_mutex_wait_us_mean: None,
            page_latch_wait_us_mean: None,
        };
        let measured = MeasuredCpuCosts {
            background_cpu_us_per_txn: None,
            kind: MeasuredCpuCosts::KIND.into(),
            commit: "c".into(),
            source: "s".into(),
            txn_types: vec![t("new_order", 300, 1000.4), t("stock_level", 100, 4000.0)],
        };
        let costs = measured.to_costs().unwrap();
        assert_eq!(
            (costs.fix_us, costs.unfix_us),
            (0, 0),
            "fixes are in the measured means"
        );
        assert_eq!(costs.txn_us_of(TxnType::NewOrder), 1000);
        assert_eq!(costs.txn_us_of(TxnType::StockLevel), 4000);
        // A type that did not run costs the attempt-weighted mean.
        assert_eq!(costs.txn_us_of(TxnType::Payment), 1750);
        assert!(format!("{costs:?}").contains("txn_us_by_type"));
        assert!(
            !format!("{costs:?}").contains("background"),
            "old files keep their hashes"
        );
        let with_background = MeasuredCpuCosts {
            background_cpu_us_per_txn: Some(412.6),
            ..measured.clone()
        };
        assert_eq!(with_background.to_costs().unwrap().background_us_per_txn, 413);
        assert_eq!(costs.lock_wait_us_of(TxnType::NewOrder), 0, "no lock wait measured");
        let mut with_waits = measured.clone();
        with_waits.txn_types[0].lock_wait_us_mean = Some(250.4);
        let waits = with_waits.to_costs().unwrap();
        assert_eq!(waits.lock_wait_us_of(TxnType::NewOrder), 250);
        assert!((with_waits.lock_wait_us_per_attempt() - 250.4 * 300.0 / 400.0).abs() < 1e-9);
        assert_eq!(measured.lock_wait_us_per_attempt(), 0.0);
        assert_eq!(waits.lock_wait_us_of(TxnType::StockLevel), 0, "measured, none");
        assert_eq!(waits.lock_wait_us_of(TxnType::Payment), 0, "did not run: no wait");
        assert!(format!("{waits:?}").contains("lock_wait_us_by_type"));
        assert!(
            !format!("{costs:?}").contains("lock_wait"),
            "old files keep their hashes"
        );
        with_waits.txn_types[0].lock_wait_us_mean = Some(f64::NAN);
        assert!(with_waits.to_costs().unwrap_err().contains("lock_wait_us_mean"));
        // The core mutex's and the page latches' waits add up per type, apart
        // from the key locks', and only files that measured them carry them.
        assert_eq!(costs.latch_wait_us_of(TxnType::NewOrder), 0);
        assert!(
            !format!("{costs:?}").contains("latch_wait"),
            "old files keep their hashes"
        );
        let mut latched = measured.clone();
        latched.txn_types[0].core_mutex_wait_us_mean = Some(120.4);
        latched.txn_types[0].page_latch_wait_us_mean = Some(80.2);
        latched.txn_types[1].page_latch_wait_us_mean = Some(0.0);
        let latches = latched.to_costs().unwrap();
        assert_eq!(latches.latch_wait_us_of(TxnType::NewOrder), 200);
        assert_eq!(latches.latch_wait_us_of(TxnType::StockLevel), 0);
        assert_eq!(
            latches.lock_wait_us_of(TxnType::NewOrder),
            0,
            "no key-lock wait measured"
        );
        assert!(format!("{latches:?}").contains("latch_wait_us_by_type"));
        latched.txn_types[1].core_mutex_wait_us_mean = Some(-3.0);
        assert!(latched.to_costs().unwrap_err().contains("core_mutex_wait_us_mean"));
        let negative = MeasuredCpuCosts {
            background_cpu_us_per_txn: Some(-1.0),
            ..measured.clone()
        };
        assert!(negative.to_costs().unwrap_err().contains("background"));
        let mut bad = measured.clone();
        bad.txn_types[0].txn_type = "neworder".into();
        assert!(bad.to_costs().unwrap_err().contains("new_order"));
        bad = measured.clone();
        bad.kind = "other".into();
        assert!(bad.to_costs().is_err());
        bad = measured;
        bad.txn_types.clear();
        assert!(bad.to_costs().unwrap_err().contains("no transaction"));
    }

    #[test]
    fn bad_inputs_name_their_flag() {
        let cases: Vec<(SimConfig, &str)> = vec![
            (
                SimConfig {
                    connections: 0,
                    ..SimConfig::default()
                },
                "--connections",
            ),
            (
                SimConfig {
                    data_device: "floppy".into(),
                    ..SimConfig::default()
                },
                "--device",
            ),
            (
                SimConfig {
                    buffer_pool_bytes: 512 << 10,
                    ..SimConfig::default()
                },
                "--buffer-pool",
            ),
            (
                SimConfig {
                    redo_bytes: 1 << 20,
                    ..SimConfig::default()
                },
                "--redo",
            ),
        ];
        for (config, flag) in cases {
            let err = config.validate().unwrap_err();
            assert!(err.starts_with(flag), "{err}");
        }
    }

    #[test]
    fn hash_changes_with_any_field() {
        let a = SimConfig::default();
        let b = SimConfig { seed: 2, ..a.clone() };
        assert_ne!(a.config_hash(), b.config_hash());
        assert_eq!(a.config_hash(), a.clone().config_hash());
    }
}
