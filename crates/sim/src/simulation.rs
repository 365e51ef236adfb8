//! The discrete-event simulation: agents, the buffer pool (the core), page
//! cleaners (the core's driver and policy), devices (the core's models) and
//! a redo log writer with group commit, in one virtual clock.
//!
//! Components follow Wang & Bunt §5: agents execute their own request
//! streams, charging CPU per fix/unfix and per transaction; a miss blocks
//! the agent for a read; a synchronous write (replacement or recoverability)
//! blocks the agent that issued it; an agent waiting for redo space or for
//! its commit to be durable is blocked too; page-cleaner writes compete for
//! the same data device. Data and redo live on separate devices (Lee et al.
//! §5.1).
//!
//! Every decision (frame choice, eviction, what to flush, when writers must
//! flush) is the core's: this module only moves time. There is no wall
//! clock and one seeded PRNG (the workload's), so a run is a pure function
//! of its configuration: same seed, same bytes out.
//!
//! Simplifications (documented, not hidden):
//! - an agent's buffer hits are applied when its CPU burst starts, and the
//!   burst's time is spent before its next blocking operation (a miss, a
//!   synchronous write, a commit), which happens at the right virtual time;
//! - page latches, row locks and the time a core decision holds the
//!   pool's mutex are not modelled; a replay given an engine run's
//!   measured key-lock waits (`CpuCosts::lock_wait_us_by_type`) and its
//!   core-mutex and page-latch waits (`latch_wait_us_by_type`) holds each
//!   transaction up that long at its start, whatever the contention of the
//!   replayed run would have been;
//! - the WAL rule holds before a page write: a write batch whose newest
//!   page LSN is not durable yet waits for the log write that makes it so
//!   (one is started if none is in flight), as the engine's batches do
//!   (their `wait_redo` phase, measured at 9 µs per page at 16
//!   connections in session 23);
//! - with doublewrite on, each write batch first goes sequentially to the
//!   doublewrite area; batches do not wait for each other's doublewrite
//!   slots. An fsync costs the log device's `DeviceSpec::fsync_cost` or
//!   the data device's `DeviceSpec::data_fsync_cost` (a calibrated
//!   device's measured `fdatasync`, the data file's after a direct
//!   write apart from the log's after a buffered append; free for the
//!   built-in models, which have no volatile write cache) where the engine pays one (`Doublewrite::write_batch`):
//!   after the doublewrite copy, and after the batch's last in-place
//!   write, whose pages are all released together then; and after every
//!   log write. Its cost follows the data reads and writes in flight when
//!   it is issued (a flush waits behind them, measured:
//!   `core::device::fsync`), counted among the requests already
//!   submitted; the log's sees them only when the log and the data are on
//!   the same device (the same name, as the engine keeps both in one
//!   directory); each fsync is an event of its own at the moment it is
//!   issued (the write before it done), so it sees what is in flight then.
//!   It delays its waiter only, it does not occupy the device;
//! - a user's single-page flush is its doublewrite copy then its in-place
//!   write, one after the other (5.6.15: both synchronous), in one of
//!   `SimConfig::single_page_slots` doublewrite slots (5.6: 8); a user
//!   that finds every slot taken waits for one (`buf_dblwr_write_single_page`,
//!   `s_event`), and the slot is let go once its in-place write (and the
//!   fsync, where one is charged) completed;
//! - a trace replay ends when its first connection has no transaction
//!   left (the recording's connections ran side by side to its end); the
//!   result then covers the time it ran and is `partial`; under the
//!   5.6.10/11 rule (`SinglePageFlush::AllDatafiles`,
//!   `buf_flush_sync_datafiles`) the user then also waits until no page
//!   write of anyone is in flight (the page cleaner's batch included); its
//!   fsync of every data file is not charged;
//! - checkpoints follow the core's `checkpoint_due` (every second, and at
//!   once when a writer finds the checkpoint age past the async margin),
//!   at the oldest modification; each writes one log block.
//!
//! Invariants: the pool's invariants hold (checked every `check_every`
//! events when enabled); an agent is in exactly one wait at a time; every
//! issued I/O completes exactly once.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use flushwise_core::device::{DeviceModel, FsyncCost, IoKind, IoRequest};
use flushwise_core::histogram::Histogram;
use flushwise_core::{
    BufferPool, BufferPoolConfig, CheckpointReason, CleanerAction, DecisionLog, FixIntent, FixOutcome, FrameId,
    FreeCheck, IterationRecord, Lsn, PageCleaner, PoolCounters, RedoConfig, SinglePageFlush, Sleep, StallKind, TimeUs,
    WaitFor, WriteOrder,
};
use flushwise_trace::{TraceEvent, TraceRecord, TxnType};

use crate::change_buffer::SimChangeBuffer;
use crate::config::{SimConfig, WorkloadSpec};
use crate::cpu::CpuCores;
use crate::event_queue::EventQueue;
use crate::live::{LatencyBuckets, LiveSample, DECISIONS_KEPT, TXN_TYPES};
use crate::metrics::{
    FlushFigures, IntervalRow, LatencyHistogram, LatencySummary, ReadSplitFigures, RunResult, TxnCounts,
    WritePathFigures, SHELL_SIMULATOR,
};
use crate::workload::{InsertWorkload, TpccWorkload, TpchWorkload, TraceWorkload, Workload};

/// Sampling period for time-averaged figures (dirty share, free list).
const SAMPLE_US: TimeUs = 100_000;
/// Retry delay when every frame is fixed or under I/O (InnoDB sleeps 10 ms
/// from the second free-block iteration; 1 ms keeps small pools moving).
const NO_FRAME_RETRY_US: TimeUs = 1_000;
/// Redo bytes of a commit record.
const COMMIT_REDO_BYTES: u64 = 16;
/// Where the doublewrite area sits on the data device (InnoDB keeps it in
/// the system tablespace, at the start of the data files).
const DOUBLEWRITE_OFFSET_BYTES: u64 = 0;
/// The log device's write unit (`OS_FILE_LOG_BLOCK_SIZE`).
const LOG_BLOCK_BYTES: u64 = 512;
/// The LSN a run starts at.
const START_LSN: Lsn = Lsn(1);

#[derive(Clone, Copy, Debug)]
enum Owner {
    Agent(u32),
    Cleaner(u32),
}

#[derive(Clone, Copy, Debug)]
enum Event {
    AgentRun(u32),
    ReadDone {
        frame: FrameId,
        agent: u32,
    },
    WriteDone {
        frame: FrameId,
        owner: Owner,
    },
    /// A batch's doublewrite copy is written; its fsync is issued now
    /// (only when the data device charges one).
    DoublewriteWritten {
        batch: u64,
    },
    DoublewriteDone {
        batch: u64,
    },
    /// A batch's last in-place write (posted all at once) ended; the
    /// tablespace's fsync is issued now.
    BatchWritten {
        batch: u64,
    },
    /// A log write is on the device; its fsync is issued now (only when
    /// the log device charges one).
    LogWritten {
        end: Lsn,
        started_us: TimeUs,
    },
    /// One in-place write of a doublewrite batch posted at a bounded depth
    /// (`SimConfig::in_place_write_depth`) ended.
    InPlaceWriteDone {
        batch: u64,
        frame: FrameId,
    },
    LogWriteDone {
        end: Lsn,
    },
    CleanerWake {
        cleaner: u32,
        generation: u64,
    },
    Checkpoint,
    Sample,
    Report,
    WarmupEnd,
}

#[derive(Default)]
struct Agent {
    records: Vec<TraceRecord>,
    /// Pages this agent holds fixed (latch coupling keeps it short).
    fixed: Vec<(flushwise_core::PageId, FrameId)>,
    pos: usize,
    txn_type: Option<TxnType>,
    txn_start_us: TimeUs,
    /// When the agent's commit joined the log writer's waiters.
    commit_started_us: TimeUs,
    attempt: u32,
    outstanding_writes: u32,
    /// After the outstanding single-page write: wait for every page write
    /// in flight to end (5.6.15 `buf_flush_sync_datafiles`).
    drain_after_write: bool,
    free_check_passed: bool,
    /// When this agent was first held up for a frame or redo space, and
    /// for which (ends, and is reported to the pool, when it gets it).
    stall: Option<(TimeUs, StallKind)>,
    done: bool,
    /// The record position the change buffer last looked at (it looks at
    /// each fix once, however often the fix is retried).
    cb_checked: Option<usize>,
    /// The agent's outstanding write is a single-page flush holding one of
    /// the doublewrite's single-page slots.
    holds_single_page_slot: bool,
    /// The share of the current transaction's CPU each of its page fixes
    /// spends (`CpuCosts::txn_cpu_along_fixes`; 0 otherwise), µs.
    cpu_per_fix_us: u64,
}

/// A doublewrite batch's in-place writes posted at a bounded depth.
struct InPlaceBatch {
    pending: std::collections::VecDeque<WriteOrder>,
    in_flight: u32,
    owner: Owner,
    clock: BatchClock,
    /// When its in-place writes began (its doublewrite copy synced).
    in_place_started_us: TimeUs,
    /// Frames written, released together after the fsync (when the
    /// device charges one).
    done: Vec<FrameId>,
}

/// A doublewrite batch's times so far (the engine's `WritePathClock`).
#[derive(Clone, Copy, Debug)]
struct BatchClock {
    single_page: bool,
    pages: u64,
    wait_redo_us: TimeUs,
    doublewrite_write_us: TimeUs,
    doublewrite_sync_us: TimeUs,
}

#[derive(Default)]
struct CleanerState {
    outstanding: u32,
    wait: Option<WaitFor>,
    sleep: Option<Sleep>,
    generation: u64,
}

/// Group commit: one log write in flight, waiters batched behind it.
#[derive(Default)]
struct LogWriter {
    durable: Lsn,
    in_flight: Option<Lsn>,
    waiters: Vec<(u32, Lsn)>,
    /// Write batches held by the WAL rule until the log is durable up to
    /// their newest page LSN (the engine's `wait_redo` phase).
    batch_waiters: Vec<WalHeldBatch>,
    writes: u64,
    bytes: u64,
}

/// A write batch waiting for the log (see [`LogWriter::batch_waiters`]).
struct WalHeldBatch {
    newest_lsn: Lsn,
    orders: Vec<WriteOrder>,
    owner: Owner,
    single_page: bool,
    held_since_us: TimeUs,
}

#[derive(Default, Clone, Copy)]
struct Samples {
    n: u64,
    dirty_pct_sum: f64,
    free_sum: f64,
    checkpoint_age_sum: f64,
    /// Reads completed in the window, and what followed each before its
    /// agent ran on: the wait for a core and the fix's CPU, µs (the
    /// engine's `read_split`, measured the same way).
    reads_done: u64,
    read_core_wait_us_sum: u64,
    read_on_cpu_us_sum: u64,
    /// Every wait of an agent for a core in the window (its CPU bursts,
    /// after its reads), µs.
    core_wait_us_sum: u64,
    /// Time from a commit to the end of the log write covering it, µs.
    commit_wait_us_sum: u64,
    /// The write path's phases, as the engine's `write_path` (batches
    /// ended in the window; µs summed over them).
    batches: u64,
    batch_pages: u64,
    wait_redo_us: u64,
    doublewrite_write_us: u64,
    doublewrite_sync_us: u64,
    in_place_write_us: u64,
    tablespace_sync_us: u64,
    single_pages: u64,
    single_page_us: u64,
    /// Log writes started in the window and their time with the fsync, µs.
    log_writes: u64,
    log_write_us_sum: u64,
}

/// One simulation run.
pub struct Simulation {
    config: SimConfig,
    commit: String,
    pool: BufferPool,
    cleaner: PageCleaner,
    cleaners: Vec<CleanerState>,
    data_device: Box<dyn DeviceModel>,
    log_device: Box<dyn DeviceModel>,
    /// What an fsync of the data / log device costs (module doc).
    data_fsync: FsyncCost,
    log_fsync: FsyncCost,
    /// Whether the log's fsync waits behind the data requests (one device).
    log_beside_data: bool,
    /// Completion times of the data reads / writes submitted and not yet done.
    data_reads_in_flight: BinaryHeap<Reverse<TimeUs>>,
    data_writes_in_flight: BinaryHeap<Reverse<TimeUs>>,
    workload: Box<dyn Workload>,
    /// The change buffer's model, for workloads with secondary indexes.
    change_buffer: Option<SimChangeBuffer>,
    queue: EventQueue<Event>,
    cpu: Option<CpuCores>,
    /// The longest run of page hits an agent does as one CPU burst
    /// ([`Workload::cpu_slice_us`]); `None`: a whole run of hits.
    cpu_slice_us: Option<u64>,
    agents: Vec<Agent>,
    read_waiters: HashMap<u32, Vec<u32>>,
    /// Write batches whose doublewrite copy is in flight.
    doublewrite_batches: HashMap<u64, (Vec<WriteOrder>, Owner, BatchClock)>,
    /// Doublewrite batches whose in-place writes are posted at a bounded
    /// depth, by batch.
    in_place_batches: HashMap<u64, InPlaceBatch>,
    next_doublewrite_batch: u64,
    /// Single-page doublewrite slots taken, and the users waiting for one
    /// with the write they will issue (`SimConfig::single_page_slots`).
    single_page_slots_taken: u32,
    single_page_slot_waiters: std::collections::VecDeque<(u32, WriteOrder)>,
    write_waiters: Vec<u32>,
    /// Agents waiting until no page write is in flight.
    drain_waiters: Vec<u32>,
    log: LogWriter,
    txns: TxnCounts,
    latency: Vec<LatencyHistogram>,
    sync_margin_bytes: u64,
    // measurement
    warmup_pool: PoolCounters,
    warmup_stalls: Histogram,
    last_report_stalls: Histogram,
    warmup_txns: TxnCounts,
    /// The LSN when the measurement began (the start's before).
    warmup_lsn: Lsn,
    last_report_pool: PoolCounters,
    last_report_txns: TxnCounts,
    last_report_us: TimeUs,
    samples: Samples,
    rows: Vec<IntervalRow>,
    measuring: bool,
    check_every: u64,
    events: u64,
    /// When the first agent ran out of transactions, for a workload that
    /// ends the run then ([`Workload::ends_with_first_agent`]).
    workload_ended_us: Option<TimeUs>,
}

impl Simulation {
    /// Builds a simulation, validating the configuration and the workload.
    pub fn new(config: SimConfig, commit: impl Into<String>) -> Result<Self, String> {
        let policy = config.policy.build();
        Self::with_policy(config, commit, policy)
    }

    /// A simulation of `config` whose policy also answers for `shadows`
    /// (policies that differ from `config`'s only in their parameters):
    /// each is fed the policy's inputs, and the returned watch says which
    /// ever decided differently ([`flushwise_core::policy::lockstep`]). A
    /// shadow that never did would have run exactly this run.
    pub fn new_lockstep(
        config: SimConfig,
        commit: impl Into<String>,
        shadows: &[flushwise_core::policy::PolicySpec],
    ) -> Result<(Self, flushwise_core::policy::lockstep::LockstepWatch), String> {
        let (policy, watch) = flushwise_core::policy::lockstep::Lockstep::new(
            config.policy.build(),
            shadows.iter().map(|spec| spec.build()).collect(),
        );
        Ok((Self::with_policy(config, commit, Box::new(policy))?, watch))
    }

    fn with_policy(
        config: SimConfig,
        commit: impl Into<String>,
        policy: Box<dyn flushwise_core::policy::FlushPolicy>,
    ) -> Result<Self, String> {
        config.validate()?;
        let workload: Box<dyn Workload> = match &config.workload {
            WorkloadSpec::Tpcc { warehouses, mix } => Box::new(TpccWorkload::new(
                *warehouses,
                *mix,
                config.page_size_bytes,
                config.seed,
            )?),
            WorkloadSpec::Trace { path } => {
                let trace = TraceWorkload::open(path)?;
                if trace.summary().page_size_bytes != config.page_size_bytes {
                    return Err(format!(
                        "--trace {}: recorded with {}-byte pages but --page-size is {}",
                        path.display(),
                        trace.summary().page_size_bytes,
                        config.page_size_bytes
                    ));
                }
                Box::new(trace)
            }
            WorkloadSpec::Tpch {
                sf_thousandths,
                refresh,
            } => Box::new(TpchWorkload::new(
                f64::from(*sf_thousandths) / 1000.0,
                *refresh,
                config.page_size_bytes,
                config.seed,
            )?),
            WorkloadSpec::Insert {
                rows,
                secondary_indexes,
                update_pct,
                ..
            } => Box::new(InsertWorkload::new(
                *rows,
                *secondary_indexes,
                *update_pct,
                config.page_size_bytes,
                config.seed,
            )?),
        };
        let change_buffer = match (&config.workload, workload.change_buffer_spaces()) {
            (
                WorkloadSpec::Insert {
                    change_buffer_max_pct, ..
                },
                Some((spaces, slots)),
            ) if *change_buffer_max_pct > 0 => Some(SimChangeBuffer::new(
                config.page_size_bytes,
                config.buffer_pool_bytes,
                *change_buffer_max_pct,
                spaces,
                slots,
            )),
            _ => None,
        };
        let frames = config.frames();
        let data_pages = workload.database_pages();
        // TPC-H's Experiment 4 runs with the data in the pool (SF 1 in
        // 4 GB): a read-mostly load with nothing to evict is its point.
        let data_may_fit = matches!(config.workload, WorkloadSpec::Tpch { .. });
        if frames > data_pages && !data_may_fit {
            return Err(format!(
                "--buffer-pool {} bytes ({frames} pages) is larger than the data ({data_pages} pages, {} bytes): \
                 choose a pool smaller than the database",
                config.buffer_pool_bytes,
                data_pages * u64::from(config.page_size_bytes)
            ));
        }
        let mut pool_config = BufferPoolConfig::for_frames(frames as u32);
        pool_config.page_size_bytes = config.page_size_bytes;
        pool_config.redo = RedoConfig {
            capacity_bytes: config.redo_bytes,
            thread_concurrency: config.thread_concurrency,
        };
        let mut pool = BufferPool::new(pool_config, START_LSN)?;
        let log = DecisionLog::new(100_000, config.decision_log);
        let mut cleaner = PageCleaner::new(policy, &mut pool, log);
        if config.iteration_records {
            cleaner.enable_iteration_records();
        }
        let agents_n = workload.fixed_agents().unwrap_or(config.connections);
        let data_spec = crate::device::resolve_device(&config.data_device).map_err(|e| format!("--device: {e}"))?;
        let log_spec = crate::device::resolve_device(&config.log_device).map_err(|e| format!("--log-device: {e}"))?;
        let (data_fsync, log_fsync) = (data_spec.data_fsync_cost().clone(), log_spec.fsync_cost().clone());
        let log_beside_data = config.log_device == config.data_device;
        let (data_device, log_device) = (data_spec.build(), log_spec.build());
        let sync_margin_bytes = pool.redo().margins.max_modified_age_sync_bytes;
        let cpu = (config.cpu_cores > 0).then(|| CpuCores::new(config.cpu_cores));
        let cpu_slice_us = workload.cpu_slice_us();
        Ok(Self {
            commit: commit.into(),
            cleaners: (0..cleaner.cleaner_count()).map(|_| CleanerState::default()).collect(),
            cleaner,
            data_device,
            log_device,
            data_fsync,
            log_fsync,
            log_beside_data,
            data_reads_in_flight: BinaryHeap::new(),
            data_writes_in_flight: BinaryHeap::new(),
            workload,
            change_buffer,
            queue: EventQueue::new(),
            cpu,
            cpu_slice_us,
            agents: (0..agents_n).map(|_| Agent::default()).collect(),
            read_waiters: HashMap::new(),
            doublewrite_batches: HashMap::new(),
            in_place_batches: HashMap::new(),
            next_doublewrite_batch: 0,
            single_page_slots_taken: 0,
            single_page_slot_waiters: std::collections::VecDeque::new(),
            write_waiters: Vec::new(),
            drain_waiters: Vec::new(),
            log: LogWriter {
                durable: START_LSN,
                ..LogWriter::default()
            },
            txns: TxnCounts::default(),
            latency: vec![LatencyHistogram::default(); TxnType::SLOTS],
            sync_margin_bytes,
            warmup_pool: PoolCounters::default(),
            warmup_stalls: Histogram::new(),
            last_report_stalls: Histogram::new(),
            warmup_txns: TxnCounts::default(),
            warmup_lsn: START_LSN,
            last_report_pool: PoolCounters::default(),
            last_report_txns: TxnCounts::default(),
            last_report_us: 0,
            samples: Samples::default(),
            rows: Vec::new(),
            measuring: config.warmup_us == 0,
            check_every: 0,
            events: 0,
            workload_ended_us: None,
            pool,
            config,
        })
    }

    /// Check the pool's invariants every `n` events (0 = never); for tests.
    pub fn check_invariants_every(&mut self, n: u64) {
        self.check_every = n;
    }

    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    pub fn cleaner(&self) -> &PageCleaner {
        &self.cleaner
    }

    /// Interval rows produced so far.
    pub fn rows(&self) -> &[IntervalRow] {
        &self.rows
    }

    /// Simulated time at which the run ends, warm-up included.
    pub fn end_us(&self) -> TimeUs {
        self.config.warmup_us + self.config.duration_us
    }

    /// Keeps the policy's decision log (the latest entries of which
    /// [`Simulation::live_sample`] carries) without changing the
    /// configuration, so the run's hash stays the same; the decisions
    /// change nothing else.
    pub fn keep_decision_log(&mut self) {
        self.cleaner.log_mut().set_enabled(true);
    }

    /// Runs to the end; `progress` gets the finished fraction now and then.
    pub fn run(&mut self, mut progress: impl FnMut(f64)) -> Result<RunResult, String> {
        let end_us = self.end_us() as f64;
        self.run_observed(|_, now| progress(now as f64 / end_us))
    }

    /// Runs to the end; `observe` sees the simulation and its clock every
    /// 100 ms of simulated time (`SAMPLE_US`), and once more at the end.
    pub fn run_observed(&mut self, mut observe: impl FnMut(&Simulation, TimeUs)) -> Result<RunResult, String> {
        let wall = Instant::now();
        let end_us = self.end_us();
        for a in 0..self.agents.len() as u32 {
            self.queue.schedule(u64::from(a), Event::AgentRun(a));
        }
        for c in 0..self.cleaners.len() as u32 {
            self.poll_cleaner(c, 0);
        }
        self.queue
            .schedule(self.pool.config().checkpoint_interval_us, Event::Checkpoint);
        self.queue.schedule(SAMPLE_US, Event::Sample);
        self.queue.schedule(self.config.report_interval_us, Event::Report);
        if self.config.warmup_us > 0 {
            self.queue.schedule(self.config.warmup_us, Event::WarmupEnd);
        }
        while let Some((now, event)) = self.queue.pop() {
            if now >= end_us || self.workload_ended_us.is_some() {
                break;
            }
            self.events += 1;
            self.handle(now, event)?;
            if self.check_every > 0 && self.events % self.check_every == 0 {
                self.pool.check_invariants();
            }
            if matches!(event, Event::Sample) {
                observe(self, now);
            }
        }
        let end_us = match self.workload_ended_us {
            Some(ended) if ended < end_us => {
                if ended <= self.config.warmup_us {
                    return Err(format!(
                        "the trace ran out {:.1} s into the replay (its first connection had no transaction left), \
                         before the warm-up ended at {:.1} s: give a shorter --warmup or record a longer trace",
                        ended as f64 / 1e6,
                        self.config.warmup_us as f64 / 1e6
                    ));
                }
                ended
            }
            _ => end_us,
        };
        if self.last_report_us < end_us {
            // The last, possibly partial, interval.
            self.report_interval(end_us);
        }
        observe(self, end_us);
        Ok(self.result(end_us, wall.elapsed().as_secs_f64()))
    }

    fn handle(&mut self, now: TimeUs, event: Event) -> Result<(), String> {
        match event {
            Event::AgentRun(a) => self.run_agent(a, now)?,
            Event::ReadDone { frame, agent } => {
                self.pool.complete_read(frame);
                let ag = &mut self.agents[agent as usize];
                ag.pos += 1;
                ag.attempt = 0;
                ag.free_check_passed = false;
                if let Some(waiters) = self.read_waiters.remove(&frame.0) {
                    for w in waiters {
                        self.queue.schedule(now, Event::AgentRun(w));
                    }
                }
                // The agent's CPU after its read, queued for a core as
                // `spend_cpu` does; the queueing is the read's wait for a
                // core (the engine's `read_split.core_wait_us_mean`).
                let fix_us = u64::from(self.config.costs.fix_us) + ag.cpu_per_fix_us;
                let runs_on_us = self.queue_for_core(now, fix_us);
                if self.measuring {
                    self.samples.reads_done += 1;
                    self.samples.read_core_wait_us_sum += runs_on_us - now - fix_us;
                    self.samples.read_on_cpu_us_sum += fix_us;
                }
                self.queue.schedule(runs_on_us, Event::AgentRun(agent));
            }
            Event::WriteDone { frame, owner } => {
                self.pool.complete_write(frame);
                for w in std::mem::take(&mut self.write_waiters) {
                    self.queue.schedule(now, Event::AgentRun(w));
                }
                let drained = self.pool.pending_writes_total() == 0;
                if drained {
                    for w in std::mem::take(&mut self.drain_waiters) {
                        self.queue.schedule(now, Event::AgentRun(w));
                    }
                }
                match owner {
                    Owner::Agent(a) => {
                        let ag = &mut self.agents[a as usize];
                        ag.outstanding_writes -= 1;
                        if ag.outstanding_writes == 0 && std::mem::take(&mut ag.holds_single_page_slot) {
                            // The slot goes to the next waiting user.
                            match self.single_page_slot_waiters.pop_front() {
                                Some((w, order)) => self.submit_writes(vec![order], Owner::Agent(w), true, now),
                                None => self.single_page_slots_taken -= 1,
                            }
                        }
                        let ag = &mut self.agents[a as usize];
                        if ag.outstanding_writes == 0 {
                            if std::mem::take(&mut ag.drain_after_write) && !drained {
                                self.drain_waiters.push(a);
                            } else {
                                self.run_agent(a, now)?;
                            }
                        }
                    }
                    Owner::Cleaner(c) => {
                        let st = &mut self.cleaners[c as usize];
                        st.outstanding -= 1;
                        let ready = st.sleep.is_none()
                            && match st.wait {
                                Some(WaitFor::AnyWrite) => true,
                                _ => st.outstanding == 0,
                            };
                        if ready {
                            self.poll_cleaner(c, now);
                        }
                    }
                }
                self.wake_cleaners(now, |s| s.wake_on_write_completion);
            }
            Event::InPlaceWriteDone { batch, frame } => {
                let fsync_charged = self.data_fsync_charged();
                let Some(b) = self.in_place_batches.get_mut(&batch) else {
                    return Err(format!("in-place write of unknown batch {batch}"));
                };
                b.in_flight -= 1;
                let owner = b.owner;
                if !fsync_charged {
                    self.queue.schedule(now, Event::WriteDone { frame, owner });
                } else {
                    b.done.push(frame);
                }
                self.post_in_place(batch, now);
                let finished = self
                    .in_place_batches
                    .get(&batch)
                    .is_some_and(|b| b.in_flight == 0 && b.pending.is_empty());
                if finished {
                    if let Some(b) = self.in_place_batches.remove(&batch) {
                        // The tablespace's fsync, then the batch is let go.
                        let fsync_us = self.data_fsync_us(now);
                        self.note_batch_written(&b.clock, now - b.in_place_started_us, fsync_us);
                        for frame in b.done {
                            self.queue.schedule(now + fsync_us, Event::WriteDone { frame, owner });
                        }
                    }
                }
            }
            Event::DoublewriteWritten { batch } => {
                let fsync_us = self.data_fsync_us(now);
                let Some((_, _, clock)) = self.doublewrite_batches.get_mut(&batch) else {
                    return Err(format!("doublewrite copy of unknown batch {batch}"));
                };
                clock.doublewrite_sync_us = fsync_us;
                self.queue.schedule(now + fsync_us, Event::DoublewriteDone { batch });
            }
            Event::BatchWritten { batch } => {
                let Some(b) = self.in_place_batches.remove(&batch) else {
                    return Err(format!("in-place writes of unknown batch {batch}"));
                };
                let fsync_us = self.data_fsync_us(now);
                self.note_batch_written(&b.clock, now - b.in_place_started_us, fsync_us);
                for frame in b.done {
                    self.queue
                        .schedule(now + fsync_us, Event::WriteDone { frame, owner: b.owner });
                }
            }
            Event::LogWritten { end, started_us } => {
                let (reads, writes) = if self.log_beside_data {
                    self.data_in_flight(now)
                } else {
                    (0, 0)
                };
                let synced = now + self.log_fsync.beside_us(reads, writes);
                self.note_log_write(started_us, synced);
                self.queue.schedule(synced, Event::LogWriteDone { end });
            }
            Event::DoublewriteDone { batch } => {
                if let Some((orders, owner, clock)) = self.doublewrite_batches.remove(&batch) {
                    if self.config.in_place_write_depth > 0 {
                        self.in_place_batches.insert(
                            batch,
                            InPlaceBatch {
                                pending: orders.into(),
                                in_flight: 0,
                                owner,
                                clock,
                                in_place_started_us: now,
                                done: Vec::new(),
                            },
                        );
                        self.post_in_place(batch, now);
                    } else if !self.data_fsync_charged() {
                        let mut last = now;
                        for order in orders {
                            last = last.max(self.submit_in_place(order, owner, now));
                        }
                        self.note_batch_written(&clock, last - now, 0);
                    } else {
                        // The engine fsyncs the tablespace after the last
                        // in-place write and only then lets the batch go.
                        let mut last = now;
                        for o in &orders {
                            last = last.max(self.write_in_place(o.page, now));
                        }
                        self.in_place_batches.insert(
                            batch,
                            InPlaceBatch {
                                pending: Default::default(),
                                in_flight: 0,
                                owner,
                                clock,
                                in_place_started_us: now,
                                done: orders.iter().map(|o| o.frame).collect(),
                            },
                        );
                        self.queue.schedule(last, Event::BatchWritten { batch });
                    }
                }
            }
            Event::LogWriteDone { end } => {
                self.log.durable = end;
                self.log.in_flight = None;
                let mut still = Vec::new();
                for (a, lsn) in std::mem::take(&mut self.log.waiters) {
                    if lsn <= end {
                        if self.measuring {
                            let started = self.agents[a as usize].commit_started_us;
                            self.samples.commit_wait_us_sum += now.saturating_sub(started);
                        }
                        self.finish_transaction(a, now, true);
                        self.run_agent(a, now)?;
                    } else {
                        still.push((a, lsn));
                    }
                }
                self.log.waiters.extend(still);
                let (ready, held): (Vec<_>, Vec<_>) = std::mem::take(&mut self.log.batch_waiters)
                    .into_iter()
                    .partition(|b| b.newest_lsn <= end);
                self.log.batch_waiters = held;
                for b in ready {
                    let waited_us = now - b.held_since_us;
                    self.write_through_doublewrite(b.orders, b.owner, b.single_page, waited_us, now);
                }
                if !self.log.waiters.is_empty() || !self.log.batch_waiters.is_empty() {
                    self.start_log_write(now);
                }
            }
            Event::CleanerWake { cleaner, generation } => {
                let st = &mut self.cleaners[cleaner as usize];
                if st.generation == generation && st.sleep.is_some() {
                    st.sleep = None;
                    self.poll_cleaner(cleaner, now);
                }
            }
            Event::Checkpoint => {
                if self.pool.checkpoint_due(now).is_some() {
                    self.write_checkpoint(now);
                }
                self.queue
                    .schedule(now + self.pool.config().checkpoint_interval_us, Event::Checkpoint);
            }
            Event::Sample => {
                if self.measuring {
                    self.samples.n += 1;
                    self.samples.dirty_pct_sum += self.pool.dirty_pct();
                    self.samples.free_sum += f64::from(self.pool.free_len());
                    self.samples.checkpoint_age_sum += self.pool.redo().checkpoint_age_bytes() as f64;
                }
                self.queue.schedule(now + SAMPLE_US, Event::Sample);
            }
            Event::Report => {
                self.report_interval(now);
                self.queue.schedule(now + self.config.report_interval_us, Event::Report);
            }
            Event::WarmupEnd => {
                self.measuring = true;
                self.warmup_pool = *self.pool.counters();
                self.warmup_stalls = self.pool.stall_histogram().clone();
                self.warmup_txns = self.txns;
                self.warmup_lsn = self.pool.redo().current_lsn;
                self.latency = vec![LatencyHistogram::default(); TxnType::SLOTS];
                self.samples = Samples::default();
            }
        }
        Ok(())
    }

    /// Spends `cpu_us` of the agent's CPU, then lets it continue.
    fn spend_cpu(&mut self, agent: u32, now: TimeUs, cpu_us: u64) {
        self.spend_cpu_then_wait(agent, now, cpu_us, 0);
    }

    /// Spends `cpu_us` of the agent's CPU, then holds it up `wait_us` more
    /// on no core, then lets it continue.
    fn spend_cpu_then_wait(&mut self, agent: u32, now: TimeUs, cpu_us: u64, wait_us: u64) {
        let at = self.queue_for_core(now, cpu_us);
        self.queue.schedule(at + wait_us, Event::AgentRun(agent));
    }

    /// Runs `cpu_us` of an agent's CPU on the first free core from `now`;
    /// returns its end and counts the wait for the core.
    fn queue_for_core(&mut self, now: TimeUs, cpu_us: u64) -> TimeUs {
        let end = match &mut self.cpu {
            Some(cpu) => cpu.run(now, cpu_us),
            None => now + cpu_us,
        };
        if self.measuring {
            self.samples.core_wait_us_sum += end - now - cpu_us;
        }
        end
    }

    /// Runs agent `a` from its current record until it blocks.
    fn run_agent(&mut self, a: u32, now: TimeUs) -> Result<(), String> {
        let costs = self.config.costs;
        let mut cpu: u64 = 0;
        loop {
            let ag = &mut self.agents[a as usize];
            if ag.done || ag.outstanding_writes > 0 {
                return Ok(());
            }
            if ag.pos >= ag.records.len() {
                ag.records.clear();
                ag.pos = 0;
                let mut records = std::mem::take(&mut ag.records);
                let more = self.workload.next_transaction(a, &mut records)?;
                let ag = &mut self.agents[a as usize];
                ag.records = records;
                ag.cb_checked = None;
                if !more || ag.records.is_empty() {
                    ag.done = true;
                    if self.workload.ends_with_first_agent() && self.workload_ended_us.is_none() {
                        self.workload_ended_us = Some(now + cpu);
                    }
                    return Ok(());
                }
                continue;
            }
            let record = ag.records[ag.pos];
            match record.event {
                TraceEvent::TxnBegin { txn_type } => {
                    ag.txn_type = Some(txn_type);
                    ag.txn_start_us = now + cpu;
                    ag.pos += 1;
                    let txn_us = u64::from(costs.txn_us_of(txn_type));
                    let (at_begin_us, per_fix_us) = if costs.txn_cpu_along_fixes {
                        let fixes = ag.records[ag.pos..]
                            .iter()
                            .filter(|r| matches!(r.event, TraceEvent::Fix { .. }))
                            .count() as u64;
                        let per_fix_us = txn_us / (fixes + 1);
                        (txn_us - per_fix_us * fixes, per_fix_us)
                    } else {
                        (txn_us, 0)
                    };
                    ag.cpu_per_fix_us = per_fix_us;
                    cpu += at_begin_us;
                    let wait_us =
                        u64::from(costs.lock_wait_us_of(txn_type)) + u64::from(costs.latch_wait_us_of(txn_type));
                    if wait_us > 0 {
                        // The engine's measured key-lock, core-mutex and
                        // page-latch waits (none is modelled): after the
                        // transaction's CPU, on no core, holding no page.
                        self.spend_cpu_then_wait(a, now, cpu, wait_us);
                        return Ok(());
                    }
                }
                TraceEvent::Fix { page, latch } => {
                    // Only runs with a change buffer pay for it (a fix is
                    // the simulator's hot path).
                    if let Some(cb) = self.change_buffer.as_mut().filter(|_| ag.cb_checked != Some(ag.pos)) {
                        ag.cb_checked = Some(ag.pos);
                        let resident = self.pool.lookup(page).is_some();
                        let free = self.workload.leaf_free_bytes();
                        if cb.on_fix(&mut ag.records, ag.pos, page, latch, resident, free) {
                            continue;
                        }
                    }
                    let writes = latch == flushwise_trace::LatchMode::Exclusive;
                    if writes && !ag.free_check_passed && self.pool.redo_age_bytes() > self.sync_margin_bytes {
                        if cpu > 0 {
                            self.spend_cpu(a, now, cpu);
                            return Ok(());
                        }
                        match self.pool.redo_free_check() {
                            FreeCheck::Proceed => {
                                // log_checkpoint_margin: the writer checkpoints itself.
                                if self.pool.checkpoint_due(now) == Some(CheckpointReason::AgeMargin) {
                                    self.write_checkpoint(now);
                                }
                            }
                            FreeCheck::SyncFlush(orders) => {
                                self.begin_stall(a, now, StallKind::RedoSpace);
                                self.agents[a as usize].outstanding_writes = orders.len() as u32;
                                self.submit_writes(orders, Owner::Agent(a), false, now);
                                return Ok(());
                            }
                            FreeCheck::WaitForFlush => {
                                self.begin_stall(a, now, StallKind::RedoSpace);
                                self.write_waiters.push(a);
                                return Ok(());
                            }
                        }
                    }
                    self.end_stall(a, now, StallKind::RedoSpace);
                    let ag = &mut self.agents[a as usize];
                    ag.free_check_passed = true;
                    if let Some(frame) = self.pool.fix_if_resident(page, now) {
                        self.end_stall(a, now, StallKind::FreeFrame);
                        let ag = &mut self.agents[a as usize];
                        ag.fixed.push((page, frame));
                        ag.pos += 1;
                        ag.attempt = 0;
                        ag.free_check_passed = false;
                        cpu += u64::from(costs.fix_us) + ag.cpu_per_fix_us;
                        if self.cpu_slice_us.is_some_and(|slice| cpu >= slice) {
                            // The time slice is used up: others run first.
                            self.spend_cpu(a, now, cpu);
                            return Ok(());
                        }
                        continue;
                    }
                    if cpu > 0 {
                        self.spend_cpu(a, now, cpu);
                        return Ok(());
                    }
                    let attempt = ag.attempt;
                    match self.pool.fix(page, FixIntent::Read, attempt, now) {
                        FixOutcome::Hit(frame) => {
                            self.end_stall(a, now, StallKind::FreeFrame);
                            let ag = &mut self.agents[a as usize];
                            ag.fixed.push((page, frame));
                            ag.pos += 1;
                            ag.attempt = 0;
                            ag.free_check_passed = false;
                            cpu += u64::from(costs.fix_us) + ag.cpu_per_fix_us;
                        }
                        FixOutcome::Miss(frame) => {
                            self.end_stall(a, now, StallKind::FreeFrame);
                            self.agents[a as usize].fixed.push((page, frame));
                            let done = self.data_device.submit(
                                IoRequest {
                                    kind: IoKind::Read,
                                    offset_bytes: self.workload.page_offset_bytes(page),
                                    len_bytes: self.config.page_size_bytes,
                                },
                                now,
                            );
                            self.note_data_read(now, done);
                            self.pool.note_read_latency(done.saturating_sub(now));
                            self.queue.schedule(done, Event::ReadDone { frame, agent: a });
                            return Ok(());
                        }
                        FixOutcome::WaitRead(frame) => {
                            self.end_stall(a, now, StallKind::FreeFrame);
                            self.read_waiters.entry(frame.0).or_default().push(a);
                            return Ok(());
                        }
                        FixOutcome::SyncReplacementWrite(order) => {
                            self.begin_stall(a, now, StallKind::FreeFrame);
                            let sync_datafiles =
                                self.pool.free_page_rule().single_page_flush == SinglePageFlush::AllDatafiles;
                            let ag = &mut self.agents[a as usize];
                            ag.attempt += 1;
                            ag.outstanding_writes = 1;
                            ag.drain_after_write = sync_datafiles;
                            let slots = self.config.single_page_slots;
                            if self.config.doublewrite && slots > 0 {
                                // buf_dblwr_write_single_page: a slot of its
                                // own, or wait for one (`s_event`).
                                self.agents[a as usize].holds_single_page_slot = true;
                                if self.single_page_slots_taken >= slots {
                                    self.single_page_slot_waiters.push_back((a, order));
                                    self.after_user_operation(now);
                                    return Ok(());
                                }
                                self.single_page_slots_taken += 1;
                            }
                            self.submit_writes(vec![order], Owner::Agent(a), true, now);
                            self.after_user_operation(now);
                            return Ok(());
                        }
                        FixOutcome::UserLruBatch => {
                            // InnoDB 5.1 `buf_flush_free_margin`: this user
                            // writes the LRU batch and waits for it; others
                            // get `NoFrame` until it ends.
                            self.begin_stall(a, now, StallKind::FreeFrame);
                            let orders = self.pool.take_user_lru_batch();
                            let ag = &mut self.agents[a as usize];
                            ag.attempt += 1;
                            if orders.is_empty() {
                                self.queue.schedule(now + NO_FRAME_RETRY_US, Event::AgentRun(a));
                                return Ok(());
                            }
                            ag.outstanding_writes = orders.len() as u32;
                            ag.drain_after_write = false;
                            self.submit_writes(orders, Owner::Agent(a), false, now);
                            self.after_user_operation(now);
                            return Ok(());
                        }
                        FixOutcome::NoFrame => {
                            self.begin_stall(a, now, StallKind::FreeFrame);
                            self.agents[a as usize].attempt += 1;
                            self.queue.schedule(now + NO_FRAME_RETRY_US, Event::AgentRun(a));
                            // A waiting user may have woken the page cleaner
                            // (MariaDB's `page_cleaner_wakeup(true)`).
                            self.after_user_operation(now);
                            return Ok(());
                        }
                    }
                }
                TraceEvent::Unfix {
                    page,
                    modified,
                    redo_bytes,
                    ..
                } => {
                    let held = ag.fixed.iter().rposition(|&(p, _)| p == page).ok_or_else(|| {
                        format!("agent {a}: unfix of page {page} which it has not fixed (trace out of order?)")
                    })?;
                    let (_, frame) = ag.fixed.swap_remove(held);
                    if modified {
                        let start = self.pool.current_lsn();
                        let end = start.advance(u64::from(redo_bytes).max(1));
                        self.pool.note_modification(frame, start, end);
                    }
                    self.pool.unfix(frame);
                    let ag = &mut self.agents[a as usize];
                    ag.pos += 1;
                    cpu += u64::from(costs.unfix_us);
                    self.after_user_operation(now);
                }
                TraceEvent::TxnCommit { .. } => {
                    if cpu > 0 {
                        self.spend_cpu(a, now, cpu);
                        return Ok(());
                    }
                    let lsn = self.pool.current_lsn().advance(COMMIT_REDO_BYTES);
                    self.pool.note_redo(lsn);
                    self.agents[a as usize].pos += 1;
                    self.agents[a as usize].commit_started_us = now;
                    self.log.waiters.push((a, lsn));
                    if self.log.in_flight.is_none() {
                        self.start_log_write(now);
                    }
                    return Ok(());
                }
                TraceEvent::TxnRollback { .. } => {
                    ag.pos += 1;
                    self.finish_transaction(a, now + cpu, false);
                }
            }
        }
    }

    /// Agent `a` is held up for `kind` from `now`, unless it already was.
    fn begin_stall(&mut self, a: u32, now: TimeUs, kind: StallKind) {
        let ag = &mut self.agents[a as usize];
        if ag.stall.is_none() {
            ag.stall = Some((now, kind));
        }
    }

    /// Agent `a` got what it was held up for (if `kind`): the stall goes to the pool.
    fn end_stall(&mut self, a: u32, now: TimeUs, kind: StallKind) {
        let ag = &mut self.agents[a as usize];
        if let Some((started, k)) = ag.stall {
            if k == kind {
                ag.stall = None;
                self.pool.note_user_stall(kind, now.saturating_sub(started));
            }
        }
    }

    fn finish_transaction(&mut self, a: u32, now: TimeUs, committed: bool) {
        // The engine's threads besides the users' (measured per
        // transaction, `CpuCosts::background_us_per_txn`) take a core for
        // that long; no agent waits for them, every agent waits behind them.
        let background_us = u64::from(self.config.costs.background_us_per_txn);
        if background_us > 0 {
            if let Some(cpu) = &mut self.cpu {
                cpu.run(now, background_us);
            }
        }
        let ag = &mut self.agents[a as usize];
        let code = ag.txn_type.take().map_or(TxnType::Other.slot(), TxnType::slot);
        if committed {
            self.txns.committed[code] += 1;
        } else {
            self.txns.rolled_back[code] += 1;
        }
        if self.measuring {
            self.latency[code].record(now.saturating_sub(ag.txn_start_us));
        }
    }

    fn start_log_write(&mut self, now: TimeUs) {
        let end = self.pool.current_lsn();
        let start = self.log.durable;
        let bytes = end.bytes_since(start).div_ceil(LOG_BLOCK_BYTES).max(1) * LOG_BLOCK_BYTES;
        let done = self.log_device.submit(
            IoRequest {
                kind: IoKind::Write,
                offset_bytes: (start.0 / LOG_BLOCK_BYTES * LOG_BLOCK_BYTES)
                    % self.config.redo_bytes.max(LOG_BLOCK_BYTES),
                len_bytes: bytes.min(u64::from(u32::MAX)) as u32,
            },
            now,
        );
        self.log.in_flight = Some(end);
        self.log.writes += 1;
        self.log.bytes += bytes;
        if self.log_fsync.is_free() {
            self.note_log_write(now, done);
            self.queue.schedule(done, Event::LogWriteDone { end });
        } else {
            self.queue.schedule(done, Event::LogWritten { end, started_us: now });
        }
    }

    /// A log write started at `started_us` is durable at `synced`.
    fn note_log_write(&mut self, started_us: TimeUs, synced: TimeUs) {
        if self.measuring {
            self.samples.log_writes += 1;
            self.samples.log_write_us_sum += synced - started_us;
        }
    }

    /// Writes a batch of pages. With the doublewrite buffer on (InnoDB's
    /// default), the batch is first written sequentially to the doublewrite
    /// area and only then in place, as `buf_dblwr_flush_buffered_writes`
    /// does; a single-page flush pays the same two writes for one page.
    /// A checkpoint at the oldest modification: noted in the core, one log
    /// block written to the log device.
    fn write_checkpoint(&mut self, now: TimeUs) {
        let lsn = self.pool.checkpoint_candidate();
        self.pool.note_checkpoint(lsn, now);
        let offset = lsn.0 % self.config.redo_bytes.max(LOG_BLOCK_BYTES);
        self.log_device.submit(
            IoRequest {
                kind: IoKind::Write,
                offset_bytes: offset,
                len_bytes: LOG_BLOCK_BYTES as u32,
            },
            now,
        );
    }

    /// `single_page`: a user's single-page flush (counted apart in the
    /// write path, as the engine's `write_single_page`). The WAL rule
    /// first: a batch whose newest page LSN is not yet durable waits for
    /// the log write that makes it so (one is started if none is in
    /// flight), as the engine's `wait_durable` before a batch and
    /// InnoDB's `log_write_up_to` in `buf_flush_write_block_low`.
    fn submit_writes(&mut self, orders: Vec<WriteOrder>, owner: Owner, single_page: bool, now: TimeUs) {
        if orders.is_empty() {
            return;
        }
        let newest_lsn = orders.iter().map(|o| o.page_lsn).max().unwrap_or(Lsn::ZERO);
        if newest_lsn > self.log.durable {
            self.log.batch_waiters.push(WalHeldBatch {
                newest_lsn,
                orders,
                owner,
                single_page,
                held_since_us: now,
            });
            if self.log.in_flight.is_none() {
                self.start_log_write(now);
            }
            return;
        }
        self.write_through_doublewrite(orders, owner, single_page, 0, now);
    }

    /// Writes a batch the WAL rule let go, `wait_redo_us` after it was
    /// submitted: through the doublewrite buffer when it is on.
    fn write_through_doublewrite(
        &mut self,
        orders: Vec<WriteOrder>,
        owner: Owner,
        single_page: bool,
        wait_redo_us: TimeUs,
        now: TimeUs,
    ) {
        if !self.config.doublewrite {
            for order in orders {
                self.submit_in_place(order, owner, now);
            }
            return;
        }
        let batch = self.next_doublewrite_batch;
        self.next_doublewrite_batch += 1;
        let len = orders.len() as u64 * u64::from(self.config.page_size_bytes);
        let done = self.data_device.submit(
            IoRequest {
                kind: IoKind::Write,
                offset_bytes: DOUBLEWRITE_OFFSET_BYTES,
                len_bytes: len.min(u64::from(u32::MAX)) as u32,
            },
            now,
        );
        self.note_data_write(now, done);
        let clock = BatchClock {
            single_page,
            pages: orders.len() as u64,
            wait_redo_us,
            doublewrite_write_us: done - now,
            doublewrite_sync_us: 0,
        };
        self.doublewrite_batches.insert(batch, (orders, owner, clock));
        if self.data_fsync_charged() {
            self.queue.schedule(done, Event::DoublewriteWritten { batch });
        } else {
            self.queue.schedule(done, Event::DoublewriteDone { batch });
        }
    }

    /// Posts a bounded-depth batch's next in-place writes, up to
    /// `in_place_write_depth` in flight (the engine's
    /// `IN_PLACE_WRITE_DEPTH` threads).
    fn post_in_place(&mut self, batch: u64, now: TimeUs) {
        let depth = self.config.in_place_write_depth;
        loop {
            let Some(b) = self.in_place_batches.get_mut(&batch) else {
                return;
            };
            if b.in_flight >= depth {
                return;
            }
            let Some(order) = b.pending.pop_front() else {
                return;
            };
            b.in_flight += 1;
            let done = self.write_in_place(order.page, now);
            self.queue.schedule(
                done,
                Event::InPlaceWriteDone {
                    batch,
                    frame: order.frame,
                },
            );
        }
    }

    /// Submits a page's in-place write; returns its completion.
    fn write_in_place(&mut self, page: flushwise_core::PageId, now: TimeUs) -> TimeUs {
        let done = self.data_device.submit(
            IoRequest {
                kind: IoKind::Write,
                offset_bytes: self.workload.page_offset_bytes(page),
                len_bytes: self.config.page_size_bytes,
            },
            now,
        );
        self.note_data_write(now, done);
        done
    }

    /// Records a data write submitted at `now`, in flight until `done`.
    fn note_data_write(&mut self, now: TimeUs, done: TimeUs) {
        self.forget_data_requests_done(now);
        self.data_writes_in_flight.push(Reverse(done));
    }

    /// Records a data read submitted at `now`, in flight until `done`.
    fn note_data_read(&mut self, now: TimeUs, done: TimeUs) {
        self.forget_data_requests_done(now);
        self.data_reads_in_flight.push(Reverse(done));
    }

    /// Drops the requests done by `now`: the heaps hold only those in flight.
    fn forget_data_requests_done(&mut self, now: TimeUs) {
        for heap in [&mut self.data_reads_in_flight, &mut self.data_writes_in_flight] {
            while heap.peek().is_some_and(|Reverse(done)| *done <= now) {
                heap.pop();
            }
        }
    }

    /// Data (reads, writes) in flight at `now`.
    fn data_in_flight(&mut self, now: TimeUs) -> (usize, usize) {
        self.forget_data_requests_done(now);
        (self.data_reads_in_flight.len(), self.data_writes_in_flight.len())
    }

    /// Whether a data fsync costs anything on this device.
    fn data_fsync_charged(&self) -> bool {
        !self.data_fsync.is_free()
    }

    /// What a data fsync issued `now` costs.
    fn data_fsync_us(&mut self, now: TimeUs) -> TimeUs {
        if !self.data_fsync_charged() {
            return 0;
        }
        let (reads, writes) = self.data_in_flight(now);
        self.data_fsync.beside_us(reads, writes)
    }

    /// Submits an in-place write whose completion lets its frame go;
    /// returns the completion.
    fn submit_in_place(&mut self, order: WriteOrder, owner: Owner, now: TimeUs) -> TimeUs {
        let done = self.write_in_place(order.page, now);
        self.queue.schedule(
            done,
            Event::WriteDone {
                frame: order.frame,
                owner,
            },
        );
        done
    }

    /// A doublewrite batch's last phases are known: its in-place writes
    /// took `in_place_us` and the tablespace's fsync `sync_us`.
    fn note_batch_written(&mut self, clock: &BatchClock, in_place_us: TimeUs, sync_us: TimeUs) {
        if !self.measuring {
            return;
        }
        let s = &mut self.samples;
        if clock.single_page {
            s.single_pages += 1;
            s.single_page_us +=
                clock.wait_redo_us + clock.doublewrite_write_us + clock.doublewrite_sync_us + in_place_us + sync_us;
        } else {
            s.batches += 1;
            s.batch_pages += clock.pages;
            s.wait_redo_us += clock.wait_redo_us;
            s.doublewrite_write_us += clock.doublewrite_write_us;
            s.doublewrite_sync_us += clock.doublewrite_sync_us;
            s.in_place_write_us += in_place_us;
            s.tablespace_sync_us += sync_us;
        }
    }

    /// After a user operation, wake cleaners whose wake condition fired.
    fn after_user_operation(&mut self, now: TimeUs) {
        if self.pool.take_wake() {
            self.wake_cleaners(now, |s| s.wake_on_event);
        }
    }

    fn wake_cleaners(&mut self, now: TimeUs, applies: impl Fn(&Sleep) -> bool) {
        for c in 0..self.cleaners.len() {
            let st = &mut self.cleaners[c];
            if st.sleep.is_some_and(|s| applies(&s)) {
                st.sleep = None;
                st.generation += 1;
                self.poll_cleaner(c as u32, now);
            }
        }
    }

    fn poll_cleaner(&mut self, c: u32, now: TimeUs) {
        match self.cleaner.poll(&mut self.pool, c, now) {
            CleanerAction::Write { writes, wait } => {
                let st = &mut self.cleaners[c as usize];
                st.outstanding += writes.len() as u32;
                st.wait = Some(wait);
                st.sleep = None;
                self.submit_writes(writes, Owner::Cleaner(c), false, now);
            }
            CleanerAction::Sleep(sleep) => {
                let st = &mut self.cleaners[c as usize];
                st.sleep = Some(sleep);
                st.generation += 1;
                if let Some(d) = sleep.max_us {
                    let generation = st.generation;
                    self.queue
                        .schedule(now + d, Event::CleanerWake { cleaner: c, generation });
                }
            }
        }
    }

    fn report_interval(&mut self, now: TimeUs) {
        let pool_now = *self.pool.counters();
        let diff = pool_now.since(&self.last_report_pool);
        let txns = self.txns.since(&self.last_report_txns);
        let seconds = (now - self.last_report_us) as f64 / 1e6;
        let stalls_now = self.pool.stall_histogram().clone();
        let stalls = stalls_now.since(&self.last_report_stalls);
        self.last_report_stalls = stalls_now;
        self.rows.push(IntervalRow {
            policy: self.config.policy.to_string(),
            seed: self.config.seed,
            config_hash: self.config.config_hash(),
            time_s: (now as f64 - self.config.warmup_us as f64) / 1e6,
            warmup: now <= self.config.warmup_us,
            figures: FlushFigures::compute(&diff, &txns, seconds, Some(&stalls)),
            dirty_pct: self.pool.dirty_pct(),
            free_pages: self.pool.free_len(),
            checkpoint_age_bytes: self.pool.redo().checkpoint_age_bytes(),
            parameters: self
                .cleaner
                .parameters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        });
        self.last_report_pool = pool_now;
        self.last_report_txns = self.txns;
        self.last_report_us = now;
    }

    fn result(&self, end_us: TimeUs, wall_seconds: f64) -> RunResult {
        let pool = self.pool.counters().since(&self.warmup_pool);
        let txns = self.txns.since(&self.warmup_txns);
        // A replay whose trace ran out ends early: its figures cover the
        // time it ran (`partial`).
        let seconds = end_us.saturating_sub(self.config.warmup_us) as f64 / 1e6;
        let partial = end_us < self.end_us();
        let n = self.samples.n.max(1) as f64;
        const NAMES: [&str; TxnType::SLOTS] = TXN_TYPES;
        let finished = txns.total().max(1) as f64;
        // TPC-H's two types appear only when they ran, so a TPC-C result
        // keeps the columns it always had.
        let mix_pct = NAMES
            .iter()
            .zip(txns.committed.iter().zip(&txns.rolled_back))
            .filter(|(name, (c, r))| !(matches!(**name, "query" | "refresh") && *c + *r == 0))
            .map(|(name, (c, r))| (name.to_string(), 100.0 * (c + r) as f64 / finished))
            .collect();
        let figures = FlushFigures::compute(
            &pool,
            &txns,
            seconds,
            Some(&self.pool.stall_histogram().since(&self.warmup_stalls)),
        );
        // The device model's latency: the first part of a read's split.
        let device_read_us = figures.read_latency_avg_us;
        RunResult {
            shell: SHELL_SIMULATOR.to_string(),
            policy: self.config.policy.to_string(),
            workload: self.workload.describe(),
            device: self.config.data_device.clone(),
            log_device: self.config.log_device.clone(),
            buffer_pool_bytes: self.config.buffer_pool_bytes,
            redo_bytes: self.config.redo_bytes,
            page_size_bytes: self.config.page_size_bytes,
            doublewrite: self.config.doublewrite,
            flush_log_at_trx_commit: None,
            warehouses: match self.config.workload {
                WorkloadSpec::Tpcc { warehouses, .. } => warehouses,
                WorkloadSpec::Trace { .. } | WorkloadSpec::Tpch { .. } | WorkloadSpec::Insert { .. } => 0,
            },
            connections: self.agents.len() as u32,
            seed: self.config.seed,
            config_hash: self.config.config_hash(),
            commit: self.commit.clone(),
            figures,
            dirty_pct_avg: self.samples.dirty_pct_sum / n,
            free_pages_avg: self.samples.free_sum / n,
            checkpoint_age_avg_bytes: self.samples.checkpoint_age_sum / n,
            transactions: txns.total(),
            rollbacks: txns.rolled_back.iter().sum(),
            retries: 0,
            requests: pool.requests,
            measured_seconds: seconds,
            warmup_seconds: self.config.warmup_us as f64 / 1e6,
            simulated_seconds: Some(end_us as f64 / 1e6),
            wall_seconds,
            requests_per_second: Some(self.pool.counters().requests as f64 / wall_seconds.max(1e-9)),
            cleaner_iterations: Some(self.cleaner.iterations()),
            final_parameters: self
                .cleaner
                .parameters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            latency: NAMES
                .iter()
                .zip(&self.latency)
                .filter(|(_, h)| h.count() > 0)
                .map(|(name, h)| LatencySummary::from_histogram(name, h))
                .collect(),
            mix_pct,
            database_pages: Some(self.workload.database_pages()),
            database_bytes: self.workload.database_pages() * u64::from(self.config.page_size_bytes),
            trace_records: None,
            partial,
            change_buffer: self.change_buffer.as_ref().map(SimChangeBuffer::stats),
            write_path: (self.config.doublewrite && self.samples.batches + self.samples.single_pages > 0).then(|| {
                let s = &self.samples;
                WritePathFigures::from_totals(
                    s.batches,
                    s.batch_pages,
                    &[
                        ("wait_redo", s.wait_redo_us),
                        ("doublewrite_write", s.doublewrite_write_us),
                        ("doublewrite_sync", s.doublewrite_sync_us),
                        ("in_place_write", s.in_place_write_us),
                        ("tablespace_sync", s.tablespace_sync_us),
                    ],
                    seconds,
                    s.single_pages,
                    s.single_page_us,
                )
            }),
            log_synced_write_us_mean: (self.samples.log_writes > 0)
                .then(|| self.samples.log_write_us_sum as f64 / self.samples.log_writes as f64),
            commit_wait_us_per_txn: Some(self.samples.commit_wait_us_sum as f64 / txns.total().max(1) as f64),
            core_mutex_wait_us_per_txn: None,
            page_latch_wait_us_per_txn: None,
            core_wait_us_per_txn: self
                .cpu
                .as_ref()
                .map(|_| self.samples.core_wait_us_sum as f64 / txns.total().max(1) as f64),
            read_split: (self.samples.reads_done > 0).then(|| {
                let reads = self.samples.reads_done as f64;
                let core_wait = self.samples.read_core_wait_us_sum as f64 / reads;
                let on_cpu = self.samples.read_on_cpu_us_sum as f64 / reads;
                ReadSplitFigures::from_latency(
                    self.samples.reads_done,
                    device_read_us + core_wait + on_cpu,
                    core_wait,
                    on_cpu,
                )
            }),
        }
    }

    /// The run at simulated time `now` as a live observer sees it, from
    /// the counters [`Simulation::run`]'s result is built from: at the
    /// end (`now` = [`Simulation::end_us`]) its measured part is the
    /// result's.
    pub fn live_sample(&self, now: TimeUs) -> LiveSample {
        let pool_run = *self.pool.counters();
        let lsn = self.pool.redo().current_lsn;
        let (pool_measured, txns_measured, lsn_measured) = if self.measuring {
            (
                pool_run.since(&self.warmup_pool),
                self.txns.since(&self.warmup_txns),
                lsn.0 - self.warmup_lsn.0,
            )
        } else {
            (PoolCounters::default(), TxnCounts::default(), 0)
        };
        let log = self.cleaner.log();
        let skip = log.entries().len().saturating_sub(DECISIONS_KEPT);
        LiveSample {
            shell: SHELL_SIMULATOR.to_string(),
            policy: self.config.policy.to_string(),
            seed: self.config.seed,
            config_hash: self.config.config_hash(),
            time_s: now as f64 / 1e6,
            warmup: !self.measuring,
            finished: now >= self.end_us(),
            pool_run,
            pool_measured,
            txns_run: self.txns,
            txns_measured,
            log_written_run_bytes: lsn.0 - START_LSN.0,
            log_written_measured_bytes: lsn_measured,
            latency: if self.measuring {
                TXN_TYPES
                    .iter()
                    .zip(&self.latency)
                    .filter(|(_, h)| h.count() > 0)
                    .map(|(name, h)| LatencyBuckets::from_sim(name, h))
                    .collect()
            } else {
                Vec::new()
            },
            pages_total: u64::from(self.pool.config().frames),
            pages_dirty: u64::from(self.pool.dirty_pages()),
            pages_free: u64::from(self.pool.free_len()),
            checkpoint_age_bytes: self.pool.redo().checkpoint_age_bytes(),
            margins: self.pool.redo().margins,
            parameters: self
                .cleaner
                .parameters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            decisions: log.entries().skip(skip).cloned().collect(),
        }
    }

    /// The policy's decision log (enable with `SimConfig::decision_log`).
    pub fn decisions(&self) -> &DecisionLog {
        self.cleaner.log()
    }

    /// Takes the page cleaner's iteration records (enable with
    /// `SimConfig::iteration_records`) and how many were dropped.
    pub fn take_iteration_records(&mut self) -> (Vec<IterationRecord>, u64) {
        (
            self.cleaner.drain_iteration_records(),
            self.cleaner.iteration_records_dropped(),
        )
    }
}
