//! The state the shell handle, the page stores and the background threads
//! share ([`Inner`]): frames and their latches, the core behind one mutex,
//! and every I/O path (fix, page writes, free check, checkpoint).
//!
//! The shell handle ([`super::shell::BufferPoolShell`]) owns an
//! `Arc<Inner>` and the background threads; stores
//! ([`super::space_store::SpaceStore`]) and threads
//! ([`super::background`]) hold the same `Arc` and call in here. Nothing in
//! this file knows about either, so the three sit side by side over it.
//!
//! Paths (see the table in [`super`]):
//! - `fix`: the user's page request loop;
//! - `write_pages`: every page write (cleaner batches, synchronous
//!   replacement and recoverability writes, shutdown): copy under a shared
//!   latch, seal, WAL (`RedoLog::wait_durable`), doublewrite batch or
//!   in-place writes, then `complete_write` (or `fail_write`);
//! - `free_check`: InnoDB's `log_free_check` before a mini-transaction,
//!   called only by threads holding no page latch (a sync flush may need to
//!   latch any dirty page);
//! - `checkpoint`: oldest modification → fsync the tablespaces →
//!   `RedoLog::write_checkpoint` → `note_checkpoint`.
//!
//! Limits: a user waits at most `no_frame_waits_max` times 1 ms for a frame
//! (waits while page-cleaner writes are in flight do not count)
//! and `FREE_CHECK_ROUNDS_MAX` rounds for redo space before it gets an error.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use flushwise_core::policy::{PolicySpec, FLUSH_BATCH_PAGES};
use flushwise_core::{
    BufferPool, BufferPoolConfig, CheckpointReason, DecisionLog, FixIntent, FixOutcome, FrameId, FreeCheck, Lsn,
    PageCleaner, PageId, RedoConfig as CoreRedoConfig, SinglePageFlush, StallKind, TimeUs, WriteKind, WriteOrder,
};
use parking_lot::{Condvar, Mutex, RwLock};

use super::hit_path::{Gate, HitPath};
use super::latch_wait::{CoreMutex, FrameLatch};
use super::metrics::{MetricsSnapshot, PageIoCounts, ReadSplitTimes};
use super::{redo_apply, BufferError, Result};
use crate::page::{self, PageSize, PageType};
use crate::redo::{Record, RedoLog};
use crate::sched::{self, ThreadSchedNs};
use crate::storage::{
    AlignedBuf, Doublewrite, EngineStorageError, Tablespace, WritePathClock, WritePathTimes, WritePhase,
};
use crate::trace_recorder::TraceRecorder;

/// Wait between retries when no frame can be freed (InnoDB sleeps 10 ms
/// from the third free-block iteration; 1 ms keeps small pools moving).
pub const NO_FRAME_WAIT: Duration = Duration::from_millis(1);
/// Longest single condvar wait for an I/O completion before re-checking.
const IO_WAIT_SLICE: Duration = Duration::from_millis(10);
/// Rounds of a free check (sync flush or wait) before giving up (~30 s).
const FREE_CHECK_ROUNDS_MAX: u32 = 3_000;
/// Rounds of `flush_all` before giving up.
const FLUSH_ALL_ROUNDS_MAX: u32 = 100_000;
/// Metrics snapshots kept (one per second: an hour).
const METRICS_HISTORY_MAX: usize = 3_600;

thread_local! {
    /// Page guards this thread holds, over all shells: a free check (which
    /// may latch any dirty page) runs only when it is zero.
    static GUARDS_HELD: Cell<u32> = const { Cell::new(0) };
}

pub(crate) fn guards_held() -> u32 {
    GUARDS_HELD.with(Cell::get)
}

pub(crate) fn guard_acquired() {
    GUARDS_HELD.with(|c| c.set(c.get() + 1));
}

pub(crate) fn guard_released() {
    GUARDS_HELD.with(|c| c.set(c.get().saturating_sub(1)));
}

/// Configuration of a shell.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// Number of frames (pool bytes / page size); at least 8.
    pub frames: u32,
    /// Page-cleaning policy and its parameters.
    pub policy: PolicySpec,
    /// `innodb_thread_concurrency`, used by the core's redo margins.
    pub thread_concurrency: u32,
    /// Period of the master thread's checkpoint.
    pub checkpoint_interval: Duration,
    /// Period of the metrics snapshots.
    pub metrics_interval: Duration,
    /// Record the policy's decisions (bounded ring of `decision_log_capacity`).
    pub decision_log: bool,
    pub decision_log_capacity: usize,
    /// Keep one `flushwise_core::IterationRecord` per page-cleaner iteration
    /// until drained ([`BufferPoolShell::drain_iteration_records`]).
    pub iteration_records: bool,
    /// 1 ms waits for a frame, with no page-cleaner write in flight,
    /// before "buffer pool too small".
    pub no_frame_waits_max: u32,
    /// Start the page-cleaner and master threads (tests may drive by hand).
    pub background_threads: bool,
    /// Serve hits that move nothing in the LRU without the core's mutex
    /// ([`super::hit_path`]); `false` sends every fix and unfix through it.
    pub hit_fast_path: bool,
}

impl Default for ShellConfig {
    fn default() -> Self {
        Self {
            frames: 8192,
            policy: PolicySpec::default(),
            thread_concurrency: 16,
            checkpoint_interval: Duration::from_secs(1),
            metrics_interval: Duration::from_secs(1),
            decision_log: false,
            decision_log_capacity: 100_000,
            iteration_records: false,
            no_frame_waits_max: 5_000,
            background_threads: true,
            hit_fast_path: true,
        }
    }
}

/// A lower bound the layer above puts on checkpoints: the shell never
/// checkpoints past the LSN it returns (`None`: no bound now). The
/// transaction layer uses it to keep the redo of every unfinished
/// transaction (its logical undo entries) after the checkpoint, and to keep
/// the whole recovery scan until recovery is done. It must return an
/// append-group boundary and must not block on the shell.
pub type CheckpointFloor = Arc<dyn Fn() -> Option<Lsn> + Send + Sync>;

/// How a writer takes the shared latch of a page to copy it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LatchWait {
    /// Wait for it (page cleaners, free checks: they hold no latch).
    Block,
    /// Give up on pages latched exclusively (a user thread that may hold
    /// latches itself: InnoDB's `rw_lock_s_lock_nowait` for single-page
    /// flushes). A skipped write is abandoned (`abandon_write`: uncounted).
    Try,
}

pub(crate) struct Core {
    pub pool: BufferPool,
    pub cleaner: PageCleaner,
}

#[derive(Default)]
pub(crate) struct WakeState {
    pub stop: bool,
    /// Bumped when `take_wake` fired after a user operation.
    pub event_seq: u64,
    /// Bumped on every page-write completion.
    pub write_seq: u64,
}

/// State shared by the shell handle, the stores and the background threads.
pub(crate) struct Inner {
    pub config: ShellConfig,
    pub page_size: PageSize,
    origin: Instant,
    pub frames: Box<[FrameLatch]>,
    pub core: CoreMutex<Core>,
    /// The hit fast path, if `config.hit_fast_path`.
    pub hit_path: Option<Arc<HitPath>>,
    /// Signalled (under `core`) on read and write completions.
    pub io_cv: Condvar,
    /// Serialises redo append + `note_modification` against the checkpoint
    /// candidate (invariant 4 of the module doc).
    pub flush_order: Mutex<()>,
    /// Serialises checkpoints.
    checkpoint_lock: Mutex<()>,
    pub redo: Arc<RedoLog>,
    pub doublewrite: Option<Arc<Doublewrite>>,
    pub spaces: Vec<Arc<Tablespace>>,
    pub wake: Mutex<WakeState>,
    pub wake_cv: Condvar,
    pub poisoned: OnceLock<String>,
    pub metrics: Mutex<VecDeque<MetricsSnapshot>>,
    /// See [`CheckpointFloor`]; read after the checkpoint candidate.
    checkpoint_floor: Option<CheckpointFloor>,
    /// True while `trace` holds a recorder: the only cost of tracing off.
    pub trace_on: AtomicBool,
    pub trace: RwLock<Option<Arc<TraceRecorder>>>,
    /// Page writes issued to the files and not yet returned (after WAL):
    /// what `os_aio_wait_until_no_pending_writes` waits on.
    writes_in_flight: Mutex<u32>,
    writes_in_flight_cv: Condvar,
    /// Reads and writes by page type (`MetricsSnapshot::page_io`).
    page_io: PageIoCounters,
    /// A sample of users' page reads split into the device's time, the
    /// wait for a core after it and the read's own CPU
    /// (`MetricsSnapshot::read_split`).
    read_split: ReadSplitCounters,
    /// Time per phase of the page-write path outside the doublewrite
    /// buffer (`MetricsSnapshot::write_path`).
    write_clock: WritePathClock,
}

/// [`PageIoCounts`] as atomics: bumped after each read or write returns.
#[derive(Default)]
struct PageIoCounters {
    reads: [AtomicU64; 3],
    writes: [AtomicU64; 3],
}

impl PageIoCounters {
    /// 0: index pages, 1: change-buffer pages, 2: the rest.
    fn class(image: &[u8]) -> usize {
        match PageType::from_u16(page::peek_page_type_raw(image)) {
            Some(PageType::BTreeLeaf | PageType::BTreeInternal) => 0,
            Some(PageType::ChangeBuffer) => 1,
            _ => 2,
        }
    }

    fn counts(&self) -> PageIoCounts {
        let r = |i: usize| self.reads[i].load(Ordering::Relaxed);
        let w = |i: usize| self.writes[i].load(Ordering::Relaxed);
        PageIoCounts {
            index_reads: r(0),
            index_writes: w(0),
            change_buffer_reads: r(1),
            change_buffer_writes: w(1),
            other_reads: r(2),
            other_writes: w(2),
        }
    }
}

/// One user read in this many (per thread) is split by
/// [`crate::sched::thread_sched_ns`]: two `pread`s of a proc file (1 µs
/// each on this machine) on a read of 100-500 µs, on a quarter of the
/// reads.
const READ_SPLIT_SAMPLE_EVERY: u32 = 4;

thread_local! {
    /// Users' reads by this thread, for [`READ_SPLIT_SAMPLE_EVERY`].
    static READS_BY_THREAD: Cell<u32> = const { Cell::new(0) };
}

/// [`ReadSplitTimes`] as atomics.
#[derive(Default)]
struct ReadSplitCounters {
    sampled_reads: AtomicU64,
    latency_ns: AtomicU64,
    core_wait_ns: AtomicU64,
    on_cpu_ns: AtomicU64,
}

impl ReadSplitCounters {
    fn add(&self, latency_ns: u64, sched: ThreadSchedNs) {
        self.sampled_reads.fetch_add(1, Ordering::Relaxed);
        self.latency_ns.fetch_add(latency_ns, Ordering::Relaxed);
        self.core_wait_ns.fetch_add(sched.run_delay_ns, Ordering::Relaxed);
        self.on_cpu_ns.fetch_add(sched.on_cpu_ns, Ordering::Relaxed);
    }

    fn times(&self) -> ReadSplitTimes {
        ReadSplitTimes {
            sampled_reads: self.sampled_reads.load(Ordering::Relaxed),
            latency_ns: self.latency_ns.load(Ordering::Relaxed),
            core_wait_ns: self.core_wait_ns.load(Ordering::Relaxed),
            on_cpu_ns: self.on_cpu_ns.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    /// Builds the shared state: the core with its policy, the frames; no
    /// thread is started here.
    pub(crate) fn open(
        config: ShellConfig,
        redo: Arc<RedoLog>,
        doublewrite: Option<Arc<Doublewrite>>,
        tablespaces: Vec<Arc<Tablespace>>,
        checkpoint_floor: Option<CheckpointFloor>,
        page_size: PageSize,
    ) -> Result<Arc<Inner>> {
        let config_err = |reason: String| BufferError::Config { reason };
        let mut pool_config = BufferPoolConfig::for_frames(config.frames);
        pool_config.page_size_bytes = page_size.bytes() as u32;
        pool_config.checkpoint_interval_us = config.checkpoint_interval.as_micros() as TimeUs;
        pool_config.redo = CoreRedoConfig {
            capacity_bytes: redo.capacity_bytes(),
            thread_concurrency: config.thread_concurrency,
        };
        // The core starts at the checkpoint, then learns the log head: pages
        // recovery dirties carry LSNs between the two.
        let hit_path = config.hit_fast_path.then(|| Arc::new(HitPath::new(config.frames)));
        let mut pool = match &hit_path {
            Some(hp) => BufferPool::with_fast_hits(pool_config, redo.checkpoint_lsn(), Box::new(Gate(Arc::clone(hp)))),
            None => BufferPool::new(pool_config, redo.checkpoint_lsn()),
        }
        .map_err(config_err)?;
        pool.note_redo(redo.current_lsn());
        let policy = config.policy.build();
        let log = DecisionLog::new(config.decision_log_capacity, config.decision_log);
        let mut cleaner = PageCleaner::new(policy, &mut pool, log);
        if config.iteration_records {
            cleaner.enable_iteration_records();
        }
        let frames = (0..config.frames)
            .map(|_| FrameLatch::new(AlignedBuf::zeroed(page_size.bytes())))
            .collect();
        Ok(Arc::new(Inner {
            page_size,
            origin: Instant::now(),
            frames,
            core: CoreMutex::new(Core { pool, cleaner }),
            hit_path,
            io_cv: Condvar::new(),
            flush_order: Mutex::new(()),
            checkpoint_lock: Mutex::new(()),
            redo,
            doublewrite,
            spaces: tablespaces,
            wake: Mutex::new(WakeState::default()),
            wake_cv: Condvar::new(),
            poisoned: OnceLock::new(),
            metrics: Mutex::new(VecDeque::new()),
            checkpoint_floor,
            trace_on: AtomicBool::new(false),
            trace: RwLock::new(None),
            writes_in_flight: Mutex::new(0),
            writes_in_flight_cv: Condvar::new(),
            page_io: PageIoCounters::default(),
            read_split: ReadSplitCounters::default(),
            write_clock: WritePathClock::default(),
            config,
        }))
    }
}

/// A frame fixed for the caller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fixed {
    pub frame: FrameId,
    /// A `Create` fix that missed: the frame holds garbage to initialise.
    pub created: bool,
}

impl Inner {
    /// The installed recorder; one relaxed load when there is none.
    pub fn trace_recorder(&self) -> Option<Arc<TraceRecorder>> {
        if !self.trace_on.load(Ordering::Relaxed) {
            return None;
        }
        self.trace.read().clone()
    }

    pub fn now_us(&self) -> TimeUs {
        self.origin.elapsed().as_micros() as TimeUs
    }

    /// Adds the hits the fast path served to the core's counters.
    pub fn fold_hits(&self, core: &mut Core) {
        if let Some(hp) = &self.hit_path {
            let hits = hp.take_hits();
            if hits > 0 {
                core.pool.note_fast_hits(hits);
            }
        }
    }

    /// With the core locked, for a frame the core fixed for `page` whose
    /// contents are valid: with the fast path, the fix becomes a hit-path
    /// pin (so every unfix is one atomic decrement).
    fn hand_over(&self, core: &mut Core, frame: FrameId, page: PageId) {
        if let Some(hp) = &self.hit_path {
            hp.adopt(frame, page);
            core.pool.unfix(frame);
        }
    }

    pub fn space(&self, space_id: u32) -> Result<&Arc<Tablespace>> {
        self.spaces
            .iter()
            .find(|t| t.space_id() == space_id)
            .ok_or(BufferError::NoSuchSpace { space_id })
    }

    pub fn check_poison(&self) -> Result<()> {
        match self.poisoned.get() {
            None => Ok(()),
            Some(first_error) => Err(BufferError::Poisoned {
                first_error: first_error.clone(),
            }),
        }
    }

    pub fn poison(&self, err: &dyn std::fmt::Display) {
        let _ = self.poisoned.set(err.to_string());
        self.io_cv.notify_all();
        self.wake_cv.notify_all();
    }

    /// Wakes sleeping cleaners if the core's wake condition fired; call
    /// with the core locked after a user operation.
    pub fn after_user_operation(&self, core: &mut Core) {
        if core.pool.take_wake() {
            self.wake.lock().event_seq += 1;
            self.wake_cv.notify_all();
        }
    }

    fn after_writes(&self) {
        self.wake.lock().write_seq += 1;
        self.wake_cv.notify_all();
    }

    /// The user's page request: loops over the core's answers until the
    /// page is resident and fixed for the caller.
    pub fn fix(&self, ts: &Tablespace, page_no: u32, intent: FixIntent) -> Result<Fixed> {
        let page = ts.page_id(page_no);
        if let Some(hp) = &self.hit_path {
            if let Some(frame) = hp.try_hit(page, || self.now_us()) {
                return Ok(Fixed { frame, created: false });
            }
        }
        let mut attempt = 0u32;
        let mut waits = 0u32;
        // When this user was first held up for a free frame.
        let mut stall_started_us: Option<TimeUs> = None;
        let mut writes_completed_at_last_wait = u64::MAX;
        loop {
            let mut core = self.core.lock();
            let now_us = self.now_us();
            let outcome = core.pool.fix(page, intent, attempt, now_us);
            match outcome {
                FixOutcome::SyncReplacementWrite(_) | FixOutcome::NoFrame | FixOutcome::UserLruBatch => {
                    stall_started_us.get_or_insert(now_us);
                }
                _ => {
                    if let Some(started) = stall_started_us.take() {
                        core.pool
                            .note_user_stall(StallKind::FreeFrame, now_us.saturating_sub(started));
                    }
                }
            }
            if let FixOutcome::Hit(frame) | FixOutcome::Miss(frame) = outcome {
                if matches!(outcome, FixOutcome::Hit(_)) || intent == FixIntent::Create {
                    self.hand_over(&mut core, frame, page);
                    let created = matches!(outcome, FixOutcome::Miss(_));
                    return Ok(Fixed { frame, created });
                }
            }
            drop(core);
            match outcome {
                FixOutcome::Hit(_) => unreachable!("served above"),
                FixOutcome::Miss(frame) => {
                    let sampled = READS_BY_THREAD.with(|n| {
                        let seen = n.get();
                        n.set(seen.wrapping_add(1));
                        seen % READ_SPLIT_SAMPLE_EVERY == 0
                    });
                    let sched_before = if sampled { sched::thread_sched_ns() } else { None };
                    let read_clock = Instant::now();
                    let read_started_us = self.now_us();
                    let read = {
                        let mut buf = self.frames[frame.index()].write();
                        let read = ts.read_page(page_no, &mut buf);
                        if read.is_ok() {
                            self.page_io.reads[PageIoCounters::class(&buf)].fetch_add(1, Ordering::Relaxed);
                        }
                        read
                    };
                    let read_us = self.now_us().saturating_sub(read_started_us);
                    if let Some(before) = sched_before {
                        let read_ns = read_clock.elapsed().as_nanos() as u64;
                        if let Some(after) = sched::thread_sched_ns() {
                            self.read_split.add(read_ns, after.since(&before));
                        }
                    }
                    let mut core = self.core.lock();
                    let result = match read {
                        Ok(_) => {
                            core.pool.note_read_latency(read_us);
                            core.pool.complete_read(frame);
                            self.hand_over(&mut core, frame, page);
                            Ok(Fixed { frame, created: false })
                        }
                        Err(e) => {
                            core.pool.fail_read(frame);
                            Err(e.into())
                        }
                    };
                    drop(core);
                    self.io_cv.notify_all();
                    return result;
                }
                FixOutcome::WaitRead(frame) => {
                    let mut core = self.core.lock();
                    while core.pool.lookup(page) == Some(frame) && core.pool.is_reading(frame) {
                        self.io_cv.wait_for(&mut core, IO_WAIT_SLICE);
                    }
                }
                FixOutcome::SyncReplacementWrite(order) => {
                    attempt += 1;
                    let rule = self.core.lock().pool.free_page_rule();
                    let written = self.write_pages(vec![order], LatchWait::Try)?;
                    if written > 0 {
                        self.finish_single_page_flush(order.page.space, rule.single_page_flush)?;
                    }
                    {
                        let mut core = self.core.lock();
                        self.after_user_operation(&mut core);
                    }
                    if written == 0 {
                        // The victim is latched exclusively: let its holder
                        // go on, bounded like a NoFrame wait.
                        waits += 1;
                        if waits > self.config.no_frame_waits_max {
                            return Err(self.too_small(waits));
                        }
                        std::thread::sleep(NO_FRAME_WAIT);
                    }
                }
                FixOutcome::UserLruBatch => {
                    // InnoDB 5.1 `buf_flush_free_margin`: this user runs the
                    // LRU batch (through the doublewrite buffer, as the
                    // cleaner's batches); others wait for it to end. Pages
                    // latched exclusively are skipped (`LatchWait::Try`), as
                    // 5.1 flushes only pages it can latch without waiting.
                    attempt += 1;
                    let orders = self.core.lock().pool.take_user_lru_batch();
                    self.write_pages(orders, LatchWait::Try)?;
                    let mut core = self.core.lock();
                    self.after_user_operation(&mut core);
                }
                FixOutcome::NoFrame => {
                    attempt += 1;
                    // Read before the core's mutex: `write_images` takes
                    // this one without the core's.
                    let writing = *self.writes_in_flight.lock() > 0;
                    let mut core = self.core.lock();
                    // A user that waits for a frame may have woken the page
                    // cleaner (MariaDB's `page_cleaner_wakeup(true)`).
                    self.after_user_operation(&mut core);
                    // Only waits during which no write completed count
                    // towards the bound: while writes complete, frames are
                    // on their way (a user of `SinglePageFlush::WaitForCleaner`
                    // waits out a whole cleaner pass, which may outlast the
                    // bound), nor do waits while a page write is in flight
                    // (a batch posted at once completes all its pages
                    // together, many 1 ms waits later: MariaDB's users in
                    // the main job waited out 5,000 of those and were told
                    // every frame was fixed); a cleaner stuck behind a latch
                    // this user holds writes and completes nothing, so the
                    // wait still ends.
                    let completed = core.pool.counters().writes_completed;
                    if completed == writes_completed_at_last_wait && !writing {
                        waits += 1;
                        if waits > self.config.no_frame_waits_max {
                            return Err(self.too_small(waits));
                        }
                    }
                    writes_completed_at_last_wait = completed;
                    self.io_cv.wait_for(&mut core, NO_FRAME_WAIT);
                }
            }
        }
    }

    /// What a user's single-page flush does after its write, before the
    /// frame is reused (see `flushwise_core::free_page_path`):
    /// - [`SinglePageFlush::OwnSpace`] (5.6.12-5.7, `buf_flush_write_block_low`
    ///   with `sync`): fsync the page's tablespace. Through the doublewrite
    ///   buffer that already happened (`Doublewrite::write_single_page` fsyncs the
    ///   slots and then the tablespace, as `buf_dblwr_write_single_page`
    ///   and `fil_flush(space)` do), so only a write without doublewrite
    ///   syncs here;
    /// - [`SinglePageFlush::AllDatafiles`] (5.6.10/11 `buf_flush_sync_datafiles`):
    ///   wait until no page write is in flight, then fsync every tablespace.
    fn finish_single_page_flush(&self, space_id: u32, mode: SinglePageFlush) -> Result<()> {
        let spaces: Vec<&Arc<Tablespace>> = match mode {
            // Users under these rules never write a single page.
            SinglePageFlush::WaitForCleaner | SinglePageFlush::FreeMarginBatch => return Ok(()),
            SinglePageFlush::OwnSpace if self.doublewrite.is_some() => return Ok(()),
            SinglePageFlush::OwnSpace => vec![self.space(space_id)?],
            SinglePageFlush::AllDatafiles => {
                let mut n = self.writes_in_flight.lock();
                while *n > 0 {
                    self.writes_in_flight_cv.wait_for(&mut n, IO_WAIT_SLICE);
                    self.check_poison()?;
                }
                self.spaces.iter().collect()
            }
        };
        for ts in spaces {
            if let Err(e) = ts.sync() {
                self.poison(&e);
                return Err(e.into());
            }
        }
        Ok(())
    }

    fn too_small(&self, waits: u32) -> BufferError {
        BufferError::PoolTooSmall {
            frames: self.config.frames,
            waits,
        }
    }

    /// Releases one fix (the caller released the latch first).
    pub fn unfix(&self, frame: FrameId) {
        if let Some(hp) = &self.hit_path {
            hp.unpin(frame);
            return;
        }
        let mut core = self.core.lock();
        core.pool.unfix(frame);
        self.after_user_operation(&mut core);
    }

    /// Recovery's read-ahead of one page (see
    /// `BufferPoolShell::prefetch_for_recovery`): true if it was read now.
    pub fn prefetch(&self, page: PageId) -> bool {
        let Ok(ts) = self.space(page.space) else { return false };
        if page.page_no >= ts.page_count() || self.core.lock().pool.lookup(page).is_some() {
            return false;
        }
        match self.fix(ts, page.page_no, FixIntent::Read) {
            Ok(fixed) => {
                self.unfix(fixed.frame);
                true
            }
            Err(_) => false,
        }
    }

    /// Writes the pages of `orders` (all started by the core). Returns how
    /// many were written; with [`LatchWait::Try`] the others were backed
    /// out. On an I/O error every order is backed out and the shell is
    /// poisoned.
    pub fn write_pages(&self, orders: Vec<WriteOrder>, latch: LatchWait) -> Result<usize> {
        if orders.is_empty() {
            return Ok(0);
        }
        if let Err(e) = self.check_poison() {
            self.abandon(&orders);
            return Err(e);
        }
        let started = Instant::now();
        let mut images: Vec<(WriteOrder, AlignedBuf)> = Vec::with_capacity(orders.len());
        let mut skipped: Vec<WriteOrder> = Vec::new();
        for order in orders {
            let frame = &self.frames[order.frame.index()];
            let copy = match latch {
                LatchWait::Block => Some(AlignedBuf::copy_from(&frame.read_recursive())),
                LatchWait::Try => frame.try_read_recursive().map(|g| AlignedBuf::copy_from(&g)),
            };
            match copy {
                Some(mut image) => {
                    page::seal(&mut image);
                    images.push((order, image));
                }
                None => skipped.push(order),
            }
        }
        self.abandon(&skipped);
        if images.is_empty() {
            return Ok(0);
        }
        let written: Vec<WriteOrder> = images.iter().map(|(o, _)| *o).collect();
        match self.write_images(&images, started) {
            Ok(t) => {
                for (_, image) in &images {
                    self.page_io.writes[PageIoCounters::class(image)].fetch_add(1, Ordering::Relaxed);
                }
                let mut core = self.core.lock();
                for o in &written {
                    core.pool.complete_write(o.frame);
                }
                drop(core);
                self.io_cv.notify_all();
                self.after_writes();
                match t {
                    Some(t) => {
                        self.write_clock.lap(WritePhase::Complete, t);
                    }
                    None => self.write_clock.count_single_page(started),
                }
                Ok(written.len())
            }
            Err(e) => {
                self.poison(&e);
                self.back_out(&written);
                Err(e)
            }
        }
    }

    /// Writes the core ordered but the shell never issued: uncounted.
    fn abandon(&self, orders: &[WriteOrder]) {
        if orders.is_empty() {
            return;
        }
        let mut core = self.core.lock();
        for o in orders {
            core.pool.abandon_write(o.frame);
        }
        drop(core);
        self.io_cv.notify_all();
    }

    /// Writes that were issued and failed: the pages stay dirty.
    fn back_out(&self, orders: &[WriteOrder]) {
        if orders.is_empty() {
            return;
        }
        let mut core = self.core.lock();
        for o in orders {
            core.pool.fail_write(o.frame);
        }
        drop(core);
        self.io_cv.notify_all();
    }

    /// WAL, then the doublewrite batch or the in-place writes. `started`
    /// is when the images' copy began; returns, for a batch, when its last
    /// phase ended (its phases are on the write clocks), or `None` for a
    /// single-page flush (timed whole by the caller).
    fn write_images(&self, images: &[(WriteOrder, AlignedBuf)], started: Instant) -> Result<Option<Instant>> {
        // A user's single-page flush takes a single-page doublewrite slot
        // (5.6 `buf_dblwr_write_single_page`), not the batch lock.
        let single_page = matches!(images, [(o, _)] if o.kind == WriteKind::SyncReplacement);
        // Batch phases only (`None` for a single page).
        let t = (!single_page).then(|| {
            self.write_clock.count_batch(images.len());
            self.write_clock.lap(WritePhase::CopyImages, started)
        });
        let newest = images
            .iter()
            .map(|(o, img)| o.page_lsn.max(page::peek_lsn(img)))
            .max()
            .unwrap_or(Lsn::ZERO);
        if newest > self.redo.durable_lsn() {
            self.redo.wait_durable(newest)?;
        }
        let t = t.map(|t| self.write_clock.lap(WritePhase::WaitRedo, t));
        let mut batch = Vec::with_capacity(images.len());
        for (o, img) in images {
            batch.push((self.space(o.page.space)?.as_ref(), o.page.page_no, img));
        }
        *self.writes_in_flight.lock() += 1;
        let written = match &self.doublewrite {
            Some(dw) if single_page => dw.write_single_page(batch[0]),
            // The doublewrite buffer times its own phases.
            Some(dw) => dw.write_batch(&batch),
            None => {
                let written = crate::storage::tablespace::write_sealed_pages(&batch);
                if let Some(t) = t {
                    self.write_clock.lap(WritePhase::InPlaceWrite, t);
                }
                written
            }
        };
        {
            let mut n = self.writes_in_flight.lock();
            *n -= 1;
            if *n == 0 {
                self.writes_in_flight_cv.notify_all();
            }
        }
        written?;
        Ok(t.map(|_| Instant::now()))
    }

    pub fn free_check(&self) -> Result<()> {
        // When this writer was first held up for redo space.
        let mut stall_started_us: Option<TimeUs> = None;
        for _ in 0..FREE_CHECK_ROUNDS_MAX {
            self.check_poison()?;
            let check = self.core.lock().pool.redo_free_check();
            if !matches!(check, FreeCheck::Proceed) && stall_started_us.is_none() {
                stall_started_us = Some(self.now_us());
            }
            match check {
                FreeCheck::Proceed => {
                    if let Some(started) = stall_started_us {
                        let stall_us = self.now_us().saturating_sub(started);
                        self.core.lock().pool.note_user_stall(StallKind::RedoSpace, stall_us);
                    }
                    // log_checkpoint_margin: past the async checkpoint age
                    // the writer checkpoints itself (the core decides).
                    let due = self.core.lock().pool.checkpoint_due(self.now_us());
                    if due == Some(CheckpointReason::AgeMargin) {
                        self.checkpoint()?;
                    }
                    return Ok(());
                }
                FreeCheck::SyncFlush(orders) => {
                    self.write_pages(orders, LatchWait::Block)?;
                }
                FreeCheck::WaitForFlush => {
                    let mut core = self.core.lock();
                    self.io_cv.wait_for(&mut core, IO_WAIT_SLICE);
                }
            }
        }
        Err(BufferError::Stalled {
            what: "waiting for redo space",
            waited_ms: u64::from(FREE_CHECK_ROUNDS_MAX) * IO_WAIT_SLICE.as_millis() as u64,
        })
    }

    pub fn checkpoint(&self) -> Result<Lsn> {
        let _serial = self.checkpoint_lock.lock();
        self.check_poison()?;
        let candidate = {
            let _order = self.flush_order.lock();
            self.core.lock().pool.checkpoint_candidate()
        };
        // The floor is read after the candidate: a bound registered later
        // starts at or after the log head of that moment, so past the candidate.
        let lsn = match self.checkpoint_floor.as_ref().and_then(|f| f()) {
            Some(floor) => candidate.min(floor),
            None => candidate,
        };
        let last = self.redo.checkpoint_lsn();
        if lsn <= last {
            return Ok(last);
        }
        // Pages whose write completed before the candidate was read are
        // durable after these fsyncs (the doublewrite path already synced).
        if self.doublewrite.is_none() {
            for ts in &self.spaces {
                if let Err(e) = ts.sync() {
                    self.poison(&e);
                    return Err(e.into());
                }
            }
        }
        if let Err(e) = self.redo.write_checkpoint(lsn) {
            self.poison(&e);
            return Err(e.into());
        }
        self.core.lock().pool.note_checkpoint(lsn, self.now_us());
        Ok(lsn)
    }

    pub fn flush_all(&self) -> Result<()> {
        for _ in 0..FLUSH_ALL_ROUNDS_MAX {
            self.check_poison()?;
            let (orders, dirty) = {
                let mut core = self.core.lock();
                let (w, _) = core
                    .pool
                    .flush_list_batch(FLUSH_BATCH_PAGES, Lsn::MAX, WriteKind::FlushList);
                (w, core.pool.dirty_pages())
            };
            if dirty == 0 {
                return Ok(());
            }
            if orders.is_empty() {
                let mut core = self.core.lock();
                self.io_cv.wait_for(&mut core, IO_WAIT_SLICE);
                continue;
            }
            self.write_pages(orders, LatchWait::Block)?;
        }
        Err(BufferError::Stalled {
            what: "flushing every dirty page",
            waited_ms: 0,
        })
    }

    pub fn snapshot(&self) -> MetricsSnapshot {
        let age = self.redo.checkpoint_age();
        let mut core = self.core.lock();
        self.fold_hits(&mut core);
        MetricsSnapshot::capture(
            self.now_us(),
            &core.pool,
            age,
            core.cleaner.parameters(),
            self.page_io.counts(),
            self.read_split.times(),
            self.write_times(),
        )
    }

    /// A page cleaner's poll held the core's mutex from `held` to now.
    pub fn count_cleaner_poll(&self, held: Instant) {
        self.write_clock.count_poll(held);
    }

    /// Cumulative time per phase of the page-write path.
    pub fn write_times(&self) -> WritePathTimes {
        let own = self.write_clock.times();
        match &self.doublewrite {
            Some(dw) => own.plus(&dw.write_times()),
            None => own,
        }
    }

    pub fn record_snapshot(&self) {
        let snap = self.snapshot();
        let mut m = self.metrics.lock();
        if m.len() == METRICS_HISTORY_MAX {
            m.pop_front();
        }
        m.push_back(snap);
    }

    pub fn apply_redo(&self, record: &Record, start_lsn: Lsn) -> Result<redo_apply::ApplyOutcome> {
        use redo_apply::ApplyOutcome;
        if !matches!(
            record.kind,
            crate::redo::RecordKind::PageInit | crate::redo::RecordKind::PageWrite
        ) {
            return Ok(ApplyOutcome::NotAPageRecord);
        }
        self.check_poison()?;
        let page: PageId = record.page;
        let ts = self.space(page.space)?;
        if page.page_no >= ts.page_count() {
            ts.extend(page.page_no + 1 - ts.page_count())?;
        }
        let fixed = match self.fix(ts, page.page_no, FixIntent::Read) {
            Ok(f) => f,
            Err(e) if e.is_never_written() => self.fix(ts, page.page_no, FixIntent::Create)?,
            Err(e) => return Err(e),
        };
        let result = {
            let mut buf = self.frames[fixed.frame.index()].write();
            if fixed.created {
                buf.fill_zero();
            }
            let outcome =
                redo_apply::apply_redo_record(&mut buf, page, record, start_lsn).map_err(|source| BufferError::Apply {
                    path: ts.path().to_path_buf(),
                    source,
                });
            if let Ok(ApplyOutcome::Applied { end_lsn }) = outcome {
                let _order = self.flush_order.lock();
                self.core.lock().pool.note_modification(fixed.frame, start_lsn, end_lsn);
            }
            outcome
        };
        if fixed.created && !matches!(result, Ok(ApplyOutcome::Applied { .. })) {
            // Leave no garbage behind in a frame the core thinks is valid.
            let mut buf = self.frames[fixed.frame.index()].write();
            page::init(&mut buf, page, page::PageType::Free, Lsn::ZERO);
        }
        self.unfix(fixed.frame);
        result
    }
}

impl From<EngineStorageError> for crate::page_store::StoreError {
    fn from(e: EngineStorageError) -> Self {
        crate::page_store::StoreError::Engine(e.to_string())
    }
}
