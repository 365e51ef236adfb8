//! `flushwise`: our own page cleaner. No knob to tune: it forecasts free-page
//! demand, learns what the device delivers, and keeps the redo age inside a
//! recovery-time bound.
//!
//! Every policy of the papers fails somewhere (issue #12): MySQL 5.6 runs
//! one LRU batch a second and leaves users writing when misses outrun it;
//! Percona avoids that by flushing harder and pays in I/O; self-tuning cannot
//! raise Pscan past |LRU| and reacts a second late; all of them need
//! `innodb_io_capacity`, and none bounds recovery time. This policy keeps the
//! page cleaner's loop (the driver in [`crate::cleaner`]: an LRU phase, then a
//! flush-list phase) and changes what decides each phase and when it runs.
//!
//! ## Rules
//!
//! 1. **Demand forecast** (`forecast_demand`). Free-page demand is the rate
//!    at which users take frames (`reads + pages_created`), sampled over at
//!    least [`RATE_WINDOW_US`] and smoothed PostgreSQL-style
//!    (`BgBufferSync`'s `smoothed_alloc`): a higher sample is taken at once,
//!    a lower one approached with time constant [`DEMAND_DECAY_US`].
//! 2. **Free-list watermarks** (`watermarks`). The free list must cover
//!    demand while the cleaner reacts: its wake-up plus one batch's latency
//!    (measured, rule 4). `free_low = demand x (2 x wake-up + batch
//!    latency)`; `free_high = free_low + demand x period`, where the period
//!    (rule 3) is the time demand takes to use [`REFILL_PAGES`] frames.
//!    `free_high` is at most a quarter of the pool: free frames cache
//!    nothing. The wake-up is doubled as a margin for demand's bursts over
//!    a few milliseconds; the batch latency is not: it is the time the
//!    *last* page of a batch takes, and frames come back as each write
//!    completes. (Until session 30 both were doubled, `2 x demand x
//!    (wake-up + latency)`: where a batch takes long, on the disk (~1 s)
//!    or the 850 PRO at a 1 % pool (6 ms at 19,000 allocations a second),
//!    that held a quarter of the pool free. Measured over the matrix,
//!    EXPERIMENTS.md "Session 30": hit ratio +0.005-0.028 in the small
//!    pools, NOPM +2-7 % there, no cell below 0.987x; doubling neither
//!    term instead left 0.006-0.025 % synchronous writes on the NVMe.)
//!    **The reserve is what users take without a write**, not the free
//!    list alone: free frames plus the pages within the users' scan depth
//!    of the tail (`free_high`, at least a chunk) that an LRU batch would
//!    not write ([`BufferPool::takeable_without_write`], from the LRU
//!    index's dirty-page counts in O(log n)). A user that finds the free
//!    list empty evicts such a clean page itself (MySQL 5.7's path), so the
//!    LRU phase runs only for the shortfall of the reserve below
//!    `free_high` and stops when the free list has grown by it; the wake-up
//!    at `free_low`, the "go again" at the end of an iteration and a
//!    flush-list slice's coverage count the same reserve. Why: free frames
//!    cache nothing, and where the tail is clean (a read-mostly load) a
//!    free list kept at `free_high` held up to a quarter of a small pool
//!    empty. Measured over the matrix (EXPERIMENTS.md "Session 31"): 850
//!    PRO read-mostly at 1 % 2,144 -> 2,260 NOPM (free frames 292 -> 68 of
//!    1,263, hit ratio 0.704 -> 0.723), the disk's read-mostly and TPC-C
//!    cells +0.4-3.6 %, NVMe read-mostly 1 % -1.0 %, every other cell
//!    within 0.2 %.
//! 3. **Small, frequent refills** (`refill_us`, `end_iteration`,
//!    `wake_thresholds`). The cleaner's period is the time demand takes to
//!    use [`REFILL_PAGES`] frames (between [`REFILL_MIN_US`] and
//!    [`TICK_US`]): at 15,000 allocations a second it runs every ~1 ms and
//!    writes a few pages each time. It also wakes when a user leaves fewer
//!    than `free_low` free frames (a [`WakeThresholds::free_pages_below`]
//!    event), a user has to write a victim, or the redo age passes the
//!    middle of its band (rule 5), and loops at once while the free list is
//!    below `free_low` or a flush-list slice was cut short. Nothing is tied
//!    to one batch a second, and the free-list target is not bounded by
//!    |LRU| the way Pscan is. Why small batches (measured in the simulator,
//!    `000-exp1-ssd` scale, 409.6 MiB pool, 120 s warm-up): a closed-loop
//!    transaction waits on its reads, and a read queues behind the writes
//!    ahead of it on the device. Refills of about 4 batch latencies gave
//!    27,606 NOPM (mean read 901 us), of one batch latency 28,994, of half
//!    one 30,404, of 32 pages 31,148 (778 us) with the same I/O per
//!    transaction; LRU chunks of up to 1,024 pages instead of 100 cost 6%
//!    at 51.2 MiB. Hence InnoDB's chunks of [`LRU_CHUNK_PAGES`].
//!    Tried and left out: evicting the clean pages within a window of the
//!    tail before writing a dirty one (CFLRU, Park et al. 2006, what a
//!    5.6.15 user's Pscan-deep first scan does). At 409.6 MiB it cut I/O
//!    per transaction from 15.4 to 11.9 (hit ratio 0.872 -> 0.898) but NOPM
//!    did not move (33,290 -> 33,330: the simulated CPU is the limit
//!    there); at 51.2-204.8 MiB it lost 6-12% with any window from 1/32 to
//!    1/4 of the pool, because once the window holds no clean page the
//!    cleaner must write a whole chunk at once and reads queue behind it
//!    (batch latency 4-6 ms -> 8 ms).
//! 4. **Device capacity discovered** (`learn_device`). From every iteration
//!    that wrote: the batch latency (T_flushing over the batches it waited
//!    for) and the pages per second the device delivered, kept as a
//!    decaying maximum. No `io_capacity`. A flush-list slice that is not
//!    urgent is sized to [`FLUSH_SLICE_US`] of that capacity, so the LRU
//!    phase of the next iteration is never far away.
//! 5. **Redo age band from a recovery-time bound** (`age_band`). Crash
//!    recovery applies the redo since the checkpoint and reads the pages it
//!    names: `recovery_s ~ age / apply_rate + dirty_pages x page_read_us`.
//!    The target age is the largest age for which that stays within 80% of
//!    `max_recovery_time_s` less the open's fixed cost (`recovery_fixed_s`:
//!    on the engine, the log and free-page scans every open pays), and
//!    never past InnoDB's asynchronous margin
//!    (`max_modified_age_async`), so writers never reach the sync margin.
//!    Flushing starts `headroom` below the target. Where the log's async
//!    margin sets the target, `headroom` is the redo generated over the
//!    cleaner's reaction time (`redo_reaction_us`: its longest sleep, one
//!    flush-list slice and one batch latency); where the recovery bound
//!    sets it, one second of redo ([`RECOVERY_HEADROOM_US`]); between 1/8
//!    and 1/2 of the target either way. Why the reaction time: past the
//!    start the age overshoots by about that much before the cleaner's
//!    writes hold it; a wider band only writes pages earlier and loses
//!    their combining. Measured on the engine (in memory, 64 MiB redo,
//!    ~37 MB/s of redo, target 46 MB = the async margin; EXPERIMENTS.md
//!    "Session 33"): with one second of redo (clamped to half the target)
//!    flushwise wrote 3.1 pages per transaction at a mean age of 38.8 MB,
//!    mysql80 2.4 at 48 MB; with the reaction time (~120 ms, so the 1/8
//!    floor) 2.5 at 46.9 MB and 15 % more NOPM (five runs each), still with
//!    no synchronous write or stall. A floor of 1/16 wrote 1 % less and
//!    was not faster. Why not below a recovery target: that target is an
//!    estimate (the apply rate of past recoveries, which falls as the redo
//!    names more pages than the pool holds), and the age at a crash is
//!    anywhere in the band. Measured with `tpcc crash --max-recovery-time
//!    5s` (64 MiB pool, 512 MiB redo, five rounds on a new database): with
//!    the reaction-time band there too the age sat at the target and the
//!    rounds after the first two took 4.41-4.51 s; with the one-second band
//!    3.44-3.91 s. (Round 2 missed the bound both ways, 6.28 and 5.86 s: it
//!    planned with round 1's apply rate, measured on less redo; the engine
//!    now believes a measured rate only up to the redo it was measured on,
//!    `recovery_profile::believed_apply_rate`, and five of five held.) Between
//!    start and target the flush list is written up to `lsn = head - start`:
//!    every iteration takes only the pages the new redo pushed past the
//!    start, so flushing follows redo generation, early and smoothly. A
//!    slice lasts at most [`FLUSH_SLICE_US`] and never longer than the free
//!    list above `free_low` lasts at the forecast demand (one batch at
//!    least); the cleaner goes again at once while pages past the start
//!    remain, with an LRU phase between slices, so users never wait on the
//!    redo. Only past InnoDB's async margin (the log itself nearly full) is
//!    a slice [`URGENT_SLICE_FACTOR`] times longer.
//! 6. **Write combining kept** (`age_band`). Below the start age the flush
//!    list is not touched: a page modified again soon stays dirty and
//!    absorbs its next changes. Pages the LRU phase writes are the cold
//!    tail, which an eviction must write anyway.
//! 7. **Reads must not starve** (`read_congestion`). When the mean read
//!    latency of the last interval (shells report it, see
//!    [`PoolCounters::read_latency_us`]) exceeds twice its floor, flushing
//!    that is not urgent moves its start age up toward the target (up to
//!    halfway), yielding the device to reads. Demand-driven LRU flushing is
//!    never deferred: it is what keeps users from writing or waiting.
//! 8. **Recovery bound on dirty pages** (`plan_flush_list`). If the dirty
//!    pages alone would take more than half the recovery budget to read,
//!    the oldest are written until they would not.
//!
//! 9. **Dirty pages keep a grace at the tail** (`dirty_grace_us`,
//!    `dirty_grace`). The LRU phase does not write a dirty page first
//!    accessed less than [`DIRTY_GRACE_OLD_BLOCKS_TIMES`] x
//!    `innodb_old_blocks_time` ago while it is within the grace depth from
//!    the tail (half of a quarter of the pool less `free_high`): clean pages and
//!    older dirty pages above it are taken instead
//!    ([`BufferPool::lru_batch_chunk_graced`]); past that depth the walk is
//!    InnoDB's. Why: when the old sublist turns over faster than
//!    `innodb_old_blocks_time` (a few hundred ms at 25,000 misses a second),
//!    a page read into it is evicted before InnoDB would make it young, and
//!    a dirty page written the moment it reaches the tail is often
//!    modified or read again soon after (TPC-C's stock, order-line and
//!    customer pages): one write and one read more. A dirty page must stay
//!    `innodb_old_blocks_time` to become eligible to be made young, and
//!    gets as long again to be touched. Measured in the simulator
//!    (`000-exp1-ssd` scale, 50 warehouses, 600 s warm-up, 60 s measured,
//!    seed 1): no grace 24,513 / 27,775 / 30,444 / 33,260 NOPM at 51.2 /
//!    102.4 / 204.8 / 409.6 MiB; a grace of 1 s 24,608 / 28,214 / 31,388 /
//!    34,938; 2 s 24,467 / 28,167 / 32,375 / 36,554 (I/O per transaction at
//!    409.6 MiB 15.5 -> 12.4, hit ratio 0.873 -> 0.895); 4 s 24,235 /
//!    27,951 / 31,951 / 36,346; 8 s 24,148 / 27,617 / 31,579 / 36,080. Time,
//!    not depth, bounds the grace, so pages leave it at the rate they came
//!    in and the writes stay smooth: a depth-bounded clean-first window
//!    (CFLRU, rule 3's note) wrote whole chunks at once when it ran dry.
//!    Where the grace cannot hold (every dirty page within the depth is in
//!    it), a walk would pass the whole depth to take a dozen pages;
//!    the pool answers the chunk from its LRU index instead, visiting only
//!    the pages it takes, with the walk's decisions and counts.
//!    Why the depth shares a quarter with the free list: free frames and
//!    graced dirty pages both stand outside LRU order (neither is where
//!    plain LRU would have it), and at most a quarter of the pool may. In a
//!    small pool the pool turns over in tens of milliseconds, so every
//!    dirty page near the tail is in its grace: a full quarter of them
//!    held there while rule 2's free list took another quarter made the
//!    walk evict clean pages first (CFLRU again) and lowered the hit
//!    ratio. Measured over the matrix (EXPERIMENTS.md "Session 30"):
//!    without any grace the 1-2 % pools gained 3-10 % but the 4-8 % pools
//!    lost 7-14 %; with the shared depth the small pools gain and the large
//!    ones, where `free_high` is ~1 % of the pool, keep their grace.
//!    Why half of what the free list leaves ([`DIRTY_GRACE_DEPTH_DIVISOR`]):
//!    once users take clean tail pages themselves (rule 2's reserve),
//!    graced dirty pages at the tail are pages the reserve cannot count, so
//!    a deep grace makes the free list make up for them. Measured with
//!    the reserve, over the matrix and `000-exp1-ssd` (EXPERIMENTS.md
//!    "Session 31"), against x 1 (session 30's depth): x 0 (no grace)
//!    lost 12-34 % in the 850 PRO's read-mostly cells and 5-9 % in its
//!    TPC-C 4-8 % cells; x 1/2 gained 0.5-1.3 % in every 850 PRO TPC-C
//!    cell, 2.4 and 1.3 % at read-mostly 4 and 8 %, 0.1-1.6 % in
//!    `000-exp1-ssd`, and lost 1.5 % at read-mostly 1 %. Against x 1/2:
//!    x 1/4 lost 7 and 3 % at read-mostly 1 and 4 %, x 3/4 0.3-0.8 % in
//!    TPC-C and read-mostly 4-8 %. The landscape is not smooth (the
//!    read-mostly cells move 3-7 % between neighbouring depths), so the
//!    half is the best of five measured, not an optimum derived.
//!
//! Users follow MySQL 5.7's free-page path except for the first scan's
//! depth, which is `free_high` (a user that finds the free list empty may
//! evict any clean page the cleaner would have): pages the LRU phase wrote
//! are evicted when their write completes, so frames reach the free list as
//! soon as the device returns them. And a writer that finds the redo age
//! past the sync margin never flushes: it waits for the cleaner
//! ([`PreflushAdvance::WaitForCleaner`], as MySQL 8.0 and MariaDB 10.5+
//! writers do), which is flushing then (the margin is past rule 5's target,
//! so every slice is urgent and the cleaner loops at once). Measured in the
//! simulator on the HDD with the data in memory and a 1-8 % redo log, where
//! the disk's write capacity holds every policy's age at the margin: under
//! 5.7's path (the writer flushes the excess itself) 0.5-0.9 % of the writes
//! were users' (EXPERIMENTS.md, session 12).
//!
//! Every rule that fires is recorded with its numbers (`ctx.decide`).
//!
//! Invariants: `free_low <= free_high <= max(frames / 4, 1)`;
//! `age_start <= age_target <= max_modified_age_async`; the learned
//! figures are finite and non-negative.

use crate::buffer_pool::{BufferPool, WakeThresholds};
use crate::free_page_path::{FreePagePath, FreePageRule, PreflushAdvance, UserScanDepth};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{
    DirtyGrace, FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep,
    FLUSH_BATCH_PAGES, LRU_CHUNK_PAGES,
};
use crate::stats::PoolCounters;
use crate::types::{Lsn, TimeUs, SECOND_US};

/// Shortest window a demand sample covers: shorter ones are noise.
pub const RATE_WINDOW_US: TimeUs = 25_000;
/// Time constant with which the demand forecast follows a falling demand
/// (PostgreSQL's 16 rounds of 200 ms are 3.2 s; we follow twice as fast).
pub const DEMAND_DECAY_US: TimeUs = 1_600_000;
/// A thread's wake-up and list work before its first write goes out.
pub const REACTION_FLOOR_US: TimeUs = 2_000;
/// Shortest refill a wake-up is worth.
pub const REFILL_MIN_US: TimeUs = 1_000;
/// Pages one refill aims at: small batches keep reads from queueing
/// behind writes.
pub const REFILL_PAGES: u32 = 16;
/// Longest sleep: the forecast and the redo band are looked at least this often.
pub const TICK_US: TimeUs = 100_000;
/// A flush-list slice that is not urgent lasts about this long.
pub const FLUSH_SLICE_US: TimeUs = 50_000;
/// Past the asynchronous margin a flush-list slice is this many ordinary ones.
pub const URGENT_SLICE_FACTOR: u32 = 4;
/// Rule 5: below a target the recovery bound sets, flushing starts this
/// much redo generation lower (at most half the target): the estimate's
/// own margin (module docs).
pub const RECOVERY_HEADROOM_US: TimeUs = SECOND_US;
/// Share of the recovery bound the estimate may use.
pub const RECOVERY_BUDGET_SHARE: f64 = 0.8;
/// Rule 9: a dirty page's grace at the LRU tail, in units of the pool's
/// `innodb_old_blocks_time` (the wait before InnoDB makes a page young).
pub const DIRTY_GRACE_OLD_BLOCKS_TIMES: u64 = 2;
/// Rule 9: the grace's depth is this fraction (1 / divisor) of what the
/// free list leaves of a quarter of the pool (measured, module docs).
pub const DIRTY_GRACE_DEPTH_DIVISOR: u32 = 2;
/// The learned write capacity decays toward new observations with this
/// time constant, so a device that got slower is believed within seconds.
pub const CAPACITY_DECAY_US: TimeUs = 5_000_000;

/// `flushwise`'s parameters. None needs setting: the recovery bound
/// (`--max-recovery-time`) and three recovery costs, which the engine
/// measures on each database (`engine::db::recovery_profile`: the open's
/// fixed cost from every open, the page read cost and the apply rate from
/// every crash recovery) and sets unless they are given; the defaults
/// serve until then. They are the engine's, measured on this machine
/// (10 warehouses, 64 MiB pool, 512 MiB redo, killed with SIGKILL after
/// 90 s, `tpcc crash`): recovery reads the pages its redo names 32 at a
/// time, 40-41 us a page for the first 3,072 and 86 us a page for 13,208
/// at once (a 512 MiB pool); the redo then applies at 16-20 MiB/s beyond
/// the fixed part and the read-ahead when the pages it names outnumber
/// the pool (reads and evictions while it applies), at ~700 MB/s when
/// they fit. The defaults take the slow cases: 100 us a page, 16 MiB/s.
/// (Before the read-ahead, recovery read one page at a time at ~200 us.)
pub const PARAMS: &[ParamDecl] = &[
    ParamDecl::float(
        crate::policy::MAX_RECOVERY_TIME_KEY,
        10.0,
        0.1,
        86_400.0,
        "crash recovery must finish within this many seconds (Oracle FAST_START_MTTR_TARGET, SQL Server TARGET_RECOVERY_TIME)",
    ),
    ParamDecl::float(
        crate::policy::REDO_APPLY_RATE_KEY,
        16.0,
        0.1,
        1_000_000.0,
        "redo bytes recovery applies per second, MiB (a recovery cost, not a knob)",
    ),
    ParamDecl::float(
        crate::policy::RECOVERY_FIXED_KEY,
        0.0,
        0.0,
        86_400.0,
        "time an open costs whatever the redo (log and free-page scans), s (a recovery cost, not a knob; the engine measures it)",
    ),
    ParamDecl::float(
        crate::policy::RECOVERY_PAGE_READ_KEY,
        100.0,
        0.1,
        1_000_000.0,
        "time recovery spends reading one page it must redo, us (a recovery cost, not a knob)",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "flushwise",
    about: "flushwise's own cleaner: demand forecast, device capacity learned, redo age within a recovery-time bound; no knobs",
    params: &[PARAMS],
    build: |p| Box::new(Flushwise::new(FlushwiseConfig::from_params(p))),
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlushwiseConfig {
    /// Crash recovery must finish within this (`--max-recovery-time`).
    pub max_recovery_time_us: TimeUs,
    /// Redo recovery applies per second.
    pub redo_apply_bytes_per_s: f64,
    /// Time recovery spends on one page it must read.
    pub recovery_page_read_us: f64,
    /// Time an open costs whatever the redo, us.
    pub recovery_fixed_us: f64,
}

impl Default for FlushwiseConfig {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl FlushwiseConfig {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            max_recovery_time_us: (p.f64("max_recovery_time_s") * SECOND_US as f64) as TimeUs,
            redo_apply_bytes_per_s: p.f64(crate::policy::REDO_APPLY_RATE_KEY) * f64::from(1u32 << 20),
            recovery_page_read_us: p.f64(crate::policy::RECOVERY_PAGE_READ_KEY),
            recovery_fixed_us: p.f64(crate::policy::RECOVERY_FIXED_KEY) * SECOND_US as f64,
        }
    }
}

/// The redo-age band of rule 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgeBand {
    /// Below this age the flush list is left alone.
    pub start_bytes: u64,
    /// At or past this age flushing is urgent (uncapped).
    pub target_bytes: u64,
}

pub struct Flushwise {
    config: FlushwiseConfig,
    /// Rule 1: free-page demand, pages per second (smoothed).
    demand_pages_per_s: f64,
    window_started_us: Option<TimeUs>,
    window_counters: PoolCounters,
    window_lsn: Lsn,
    /// Redo generated per second (smoothed like demand).
    redo_bytes_per_s: f64,
    /// Rule 4: latency of one waited batch, us (moving average).
    batch_latency_us: f64,
    /// Rule 4: pages per second the device delivered (decaying maximum).
    write_pages_per_s: f64,
    /// Rule 7: mean read latency of the last interval and its floor, us.
    read_latency_us: f64,
    read_latency_floor_us: f64,
    /// Rule 2: the watermarks now.
    free_low: u32,
    free_high: u32,
    /// Rule 5: the band now.
    band: AgeBand,
    /// This iteration's flush-list slice was cut short: go again at once.
    flush_capped: bool,
    last_end_us: Option<TimeUs>,
    counters_at_last_end: Option<PoolCounters>,
}

impl Flushwise {
    pub fn new(config: FlushwiseConfig) -> Self {
        Self {
            config,
            demand_pages_per_s: 0.0,
            window_started_us: None,
            window_counters: PoolCounters::default(),
            window_lsn: Lsn::ZERO,
            redo_bytes_per_s: 0.0,
            batch_latency_us: 0.0,
            write_pages_per_s: 0.0,
            read_latency_us: 0.0,
            read_latency_floor_us: f64::INFINITY,
            free_low: 0,
            free_high: LRU_CHUNK_PAGES,
            band: AgeBand {
                start_bytes: u64::MAX,
                target_bytes: u64::MAX,
            },
            flush_capped: false,
            last_end_us: None,
            counters_at_last_end: None,
        }
    }

    pub fn demand_pages_per_s(&self) -> f64 {
        self.demand_pages_per_s
    }
    pub fn free_low(&self) -> u32 {
        self.free_low
    }
    pub fn free_high(&self) -> u32 {
        self.free_high
    }
    pub fn band(&self) -> AgeBand {
        self.band
    }
    pub fn batch_latency_us(&self) -> f64 {
        self.batch_latency_us
    }
    pub fn write_pages_per_s(&self) -> f64 {
        self.write_pages_per_s
    }

    /// Rule 1: folds the allocations and redo since the window started
    /// into the forecasts once the window is long enough.
    fn forecast_demand(&mut self, ctx: &mut PolicyCtx<'_>) {
        let now = ctx.now_us;
        let counters = *ctx.pool.counters();
        let lsn = ctx.pool.current_lsn();
        let Some(started) = self.window_started_us else {
            self.window_started_us = Some(now);
            self.window_counters = counters;
            self.window_lsn = lsn;
            return;
        };
        let elapsed_us = now.saturating_sub(started);
        if elapsed_us < RATE_WINDOW_US {
            return;
        }
        let seconds = elapsed_us as f64 / SECOND_US as f64;
        let d = counters.since(&self.window_counters);
        let alloc_sample = (d.reads + d.pages_created) as f64 / seconds;
        let redo_sample = lsn.bytes_since(self.window_lsn) as f64 / seconds;
        let follow = (elapsed_us as f64 / DEMAND_DECAY_US as f64).min(1.0);
        let before = self.demand_pages_per_s;
        self.demand_pages_per_s = fast_up_slow_down(before, alloc_sample, follow);
        self.redo_bytes_per_s = fast_up_slow_down(self.redo_bytes_per_s, redo_sample, follow);
        let after = self.demand_pages_per_s;
        if after > before * 1.5 && after - before > 100.0 {
            ctx.decide("demand_rises", || {
                format!(
                    "allocations {alloc_sample:.0}/s over {elapsed_us} us: demand {before:.0} -> {after:.0} pages/s"
                )
            });
        }
        self.window_started_us = Some(now);
        self.window_counters = counters;
        self.window_lsn = lsn;
    }

    /// Rule 2: the free-list watermarks for the current forecast.
    fn watermarks(&mut self, ctx: &mut PolicyCtx<'_>) {
        let cap = out_of_lru_order_pages(ctx.pool);
        let demand_per_us = self.demand_pages_per_s / SECOND_US as f64;
        let reaction_us = REACTION_FLOOR_US as f64 + self.batch_latency_us;
        let refill_us = self.refill_us();
        let low = (demand_per_us * (REACTION_FLOOR_US as f64 + reaction_us)).ceil();
        let high = low + (demand_per_us * refill_us).ceil().max(f64::from(REFILL_PAGES));
        let (old_low, old_high) = (self.free_low, self.free_high);
        self.free_high = (high.min(f64::from(cap))) as u32;
        self.free_low = (low as u32).min(self.free_high);
        if (old_low, old_high) != (self.free_low, self.free_high) {
            let (new_low, new_high, demand, latency) = (
                self.free_low,
                self.free_high,
                self.demand_pages_per_s,
                self.batch_latency_us,
            );
            ctx.decide("free_watermarks", || {
                format!(
                    "demand {demand:.0} pages/s, batch latency {latency:.0} us: free_low {old_low} -> {new_low}, free_high {old_high} -> {new_high} (cap {cap})"
                )
            });
        }
    }

    /// Rule 3: the cleaner's period: one batch latency, at least
    /// [`REFILL_MIN_US`], at most [`TICK_US`].
    fn refill_us(&self) -> f64 {
        let per_page_us = SECOND_US as f64 / self.demand_pages_per_s.max(1.0);
        (f64::from(REFILL_PAGES) * per_page_us).clamp(REFILL_MIN_US as f64, TICK_US as f64)
    }

    /// Rule 4: what the iteration's writes say about the device.
    fn learn_device(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) {
        let pages = r.np_lru + r.np_flush;
        if pages == 0 || r.flushing_time_us == 0 {
            return;
        }
        let batches = r.np_lru.div_ceil(LRU_CHUNK_PAGES) + r.np_flush.div_ceil(FLUSH_BATCH_PAGES);
        let latency = r.flushing_time_us as f64 / f64::from(batches.max(1));
        self.batch_latency_us = if self.batch_latency_us == 0.0 {
            latency
        } else {
            0.75 * self.batch_latency_us + 0.25 * latency
        };
        let rate = f64::from(pages) * SECOND_US as f64 / r.flushing_time_us as f64;
        let since = self
            .last_end_us
            .map_or(TICK_US, |t| ctx.now_us.saturating_sub(t).max(1));
        let decay = (since as f64 / CAPACITY_DECAY_US as f64).min(1.0);
        let before = self.write_pages_per_s;
        self.write_pages_per_s = if rate >= before {
            rate
        } else {
            before + (rate - before) * decay
        };
        if rate > before * 1.25 && before > 0.0 {
            ctx.decide("device_capacity_rises", || {
                format!(
                    "{pages} pages in {} us: {before:.0} -> {rate:.0} pages/s",
                    r.flushing_time_us
                )
            });
        }
    }

    /// Rule 7: congestion of reads in [0, 1] from the interval's mean read latency.
    fn read_congestion(&mut self, ctx: &mut PolicyCtx<'_>, interval: &PoolCounters) -> f64 {
        if interval.reads_timed == 0 {
            return 0.0;
        }
        let mean = interval.read_latency_us as f64 / interval.reads_timed as f64;
        self.read_latency_us = mean;
        // The floor drifts up slowly so a device that got slower for good
        // is not read as congested forever.
        self.read_latency_floor_us = if mean < self.read_latency_floor_us {
            mean
        } else {
            self.read_latency_floor_us * 1.001
        };
        let ratio = mean / self.read_latency_floor_us.max(1.0);
        let congestion = ((ratio - 2.0) / 2.0).clamp(0.0, 1.0);
        if congestion > 0.0 {
            let floor = self.read_latency_floor_us;
            ctx.decide("reads_congested", || {
                format!("mean read latency {mean:.0} us = {ratio:.1} x floor {floor:.0} us: congestion {congestion:.2}")
            });
        }
        congestion
    }

    /// Rule 5: what recovery may spend on the redo and the pages it names:
    /// the bound's budget share less the open's fixed cost (the measured
    /// `recovery_fixed_s`), at least a tenth of the share (a fixed cost past
    /// the bound cannot be flushed away; the age is then kept small).
    pub fn redo_budget_us(&self) -> f64 {
        redo_budget_us(self.config.max_recovery_time_us as f64, self.config.recovery_fixed_us)
    }

    /// Rule 5 (and 7): the redo-age band now.
    pub fn age_band(&self, pool: &BufferPool, congestion: f64) -> AgeBand {
        let async_margin = pool.redo().margins.max_modified_age_async_bytes;
        let budget_us = self.redo_budget_us();
        let page_reads_us = f64::from(pool.dirty_pages()) * self.config.recovery_page_read_us;
        let redo_us = (budget_us - page_reads_us).max(budget_us / 2.0);
        let recovery_age = (redo_us / SECOND_US as f64 * self.config.redo_apply_bytes_per_s) as u64;
        let target = async_margin.min(recovery_age).max(1);
        let headroom_us = if recovery_age < async_margin {
            RECOVERY_HEADROOM_US as f64
        } else {
            self.redo_reaction_us()
        };
        let headroom = ((self.redo_bytes_per_s * headroom_us / SECOND_US as f64) as u64).clamp(target / 8, target / 2);
        let start = target - headroom;
        let start = start + ((target - start) as f64 * congestion / 2.0) as u64;
        AgeBand {
            start_bytes: start,
            target_bytes: target,
        }
    }

    /// Rule 5: how long the age may grow past the start before this
    /// cleaner's writes hold it: its longest sleep, one flush-list slice,
    /// and one batch's latency.
    fn redo_reaction_us(&self) -> f64 {
        self.period_us() as f64 + FLUSH_SLICE_US as f64 + self.batch_latency_us
    }

    /// Rule 3: the longest sleep between iterations.
    fn period_us(&self) -> TimeUs {
        if self.demand_pages_per_s > 0.0 {
            self.refill_us() as TimeUs
        } else {
            TICK_US
        }
    }

    /// Rule 2: how deep a user looks for a clean page before it waits.
    fn user_scan_depth(&self) -> u32 {
        self.free_high.max(LRU_CHUNK_PAGES)
    }

    /// Rule 2: what users can take without a write: free frames and the
    /// clean pages within their scan depth of the tail.
    fn reserve(&self, pool: &BufferPool) -> u32 {
        pool.takeable_without_write(self.user_scan_depth())
    }

    /// Rule 8: dirty pages recovery could read within half its budget.
    fn dirty_pages_limit(&self) -> u32 {
        let budget_us = self.redo_budget_us() / 2.0;
        (budget_us / self.config.recovery_page_read_us.max(0.1)).min(f64::from(u32::MAX)) as u32
    }
}

/// Rule 5: the recovery budget for redo and page reads under a bound of
/// `max_recovery_time_us` and an open's fixed cost: the bound's
/// [`RECOVERY_BUDGET_SHARE`] less the fixed cost, at least a tenth of the
/// share. The engine's recovery profile plans with the same budget.
pub fn redo_budget_us(max_recovery_time_us: f64, recovery_fixed_us: f64) -> f64 {
    let share_us = max_recovery_time_us * RECOVERY_BUDGET_SHARE;
    (share_us - recovery_fixed_us).max(share_us / 10.0)
}

/// Rule 9: how long a dirty page read into the pool is not written by the
/// LRU phase while it is near the tail.
pub fn dirty_grace_us(pool: &BufferPool) -> TimeUs {
    pool.config()
        .old_blocks_time_us
        .saturating_mul(DIRTY_GRACE_OLD_BLOCKS_TIMES)
}

/// Rules 2 and 9: the pages that may stand outside LRU order, free frames
/// and graced dirty pages together: a quarter of the pool.
pub fn out_of_lru_order_pages(pool: &BufferPool) -> u32 {
    (pool.frame_count() / 4).max(1)
}

/// Rule 9: the grace and its depth: a [`DIRTY_GRACE_DEPTH_DIVISOR`]th of
/// what of [`out_of_lru_order_pages`] the free list (up to `free_high`)
/// leaves.
pub fn dirty_grace(pool: &BufferPool, free_high: u32) -> DirtyGrace {
    DirtyGrace {
        grace_us: dirty_grace_us(pool),
        depth_pages: out_of_lru_order_pages(pool).saturating_sub(free_high) / DIRTY_GRACE_DEPTH_DIVISOR,
    }
}

/// PostgreSQL's `smoothed_alloc`: a higher sample at once, a lower one by
/// the share `follow` of the gap.
fn fast_up_slow_down(current: f64, sample: f64, follow: f64) -> f64 {
    if sample >= current {
        sample
    } else {
        current + (sample - current) * follow
    }
}

impl FlushPolicy for Flushwise {
    fn name(&self) -> &'static str {
        "flushwise"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        self.forecast_demand(ctx);
        self.watermarks(ctx);
        let reserve = self.reserve(ctx.pool);
        let shortfall = self.free_high.saturating_sub(reserve);
        let high = self.free_high;
        let free_target = ctx.pool.free_len() + shortfall;
        if shortfall > 0 {
            ctx.decide("refill_free_list", || {
                format!(
                    "reserve {reserve} < free_high={high}: LRU phase to |free|={free_target} in chunks of {LRU_CHUNK_PAGES}"
                )
            });
        }
        Plan::Flush(IterationPlan {
            lru_dirty_grace: Some(dirty_grace(ctx.pool, self.free_high)),
            ..IterationPlan::innodb(if shortfall > 0 { free_target } else { 0 })
        })
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        let interval = self
            .counters_at_last_end
            .map_or(PoolCounters::default(), |c| ctx.pool.counters().since(&c));
        let congestion = self.read_congestion(ctx, &interval);
        self.band = self.age_band(ctx.pool, congestion);
        self.flush_capped = false;
        let pool = ctx.pool;
        let age = pool.redo_age_bytes();
        let band = self.band;
        let dirty = pool.dirty_pages();
        let dirty_limit = self.dirty_pages_limit();
        let mut plan = FlushListPlan::NONE;
        if age > band.start_bytes {
            let lsn_limit = Lsn(pool.current_lsn().0.saturating_sub(band.start_bytes));
            let urgent = age >= band.target_bytes;
            // The log itself is nearly full only past InnoDB's async margin;
            // below it, a slice must end before the free list runs out, so
            // that the next iteration's LRU phase comes in time: uncapped
            // slices starved the free list on the engine (`tpcc crash`,
            // 5 s bound: 6-10% synchronous writes).
            let log_full = age >= pool.redo().margins.max_modified_age_async_bytes;
            let spare_frames = f64::from(self.reserve(pool).saturating_sub(self.free_low));
            let coverage_us = spare_frames * SECOND_US as f64 / self.demand_pages_per_s.max(1.0);
            let slice_us = if log_full {
                (FLUSH_SLICE_US * TimeUs::from(URGENT_SLICE_FACTOR)) as f64
            } else {
                (FLUSH_SLICE_US as f64).min(coverage_us)
            };
            let slice = (self.write_pages_per_s * slice_us / SECOND_US as f64) as u32;
            let pages = slice.max(FLUSH_BATCH_PAGES);
            self.flush_capped = true;
            plan = FlushListPlan { pages, lsn_limit };
            if urgent {
                ctx.decide("redo_age_past_target", || {
                    format!(
                        "age {age} B >= target {} B: up to {pages} pages older than head - {} B, then again at once",
                        band.target_bytes, band.start_bytes
                    )
                });
            } else {
                ctx.decide("redo_follows_generation", || {
                    format!(
                        "age {age} B in band [{}, {}] B: up to {pages} pages older than head - {} B",
                        band.start_bytes, band.target_bytes, band.start_bytes
                    )
                });
            }
        }
        if dirty > dirty_limit {
            let excess = dirty - dirty_limit;
            plan = FlushListPlan {
                pages: plan.pages.max(excess),
                lsn_limit: Lsn::MAX,
            };
            ctx.decide("dirty_pages_past_recovery_bound", || {
                format!(
                    "{dirty} dirty pages > {dirty_limit} recovery can read in half its budget: flush {excess} oldest"
                )
            });
        }
        if plan.pages == 0 {
            ctx.decide("write_combining_kept", || {
                format!("age {age} B <= start {} B: flush list left alone", band.start_bytes)
            });
        }
        plan
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) -> Sleep {
        self.learn_device(ctx, r);
        self.last_end_us = Some(ctx.now_us);
        self.counters_at_last_end = Some(*ctx.pool.counters());
        let free = self.reserve(ctx.pool);
        let wrote_flush_list = r.np_flush > 0;
        if free < self.free_low && (r.np_lru > 0 || r.lru_evicted > 0) {
            let low = self.free_low;
            ctx.decide("free_list_still_short", || {
                format!("|free|={free} < free_low={low}: go again")
            });
            return Sleep::none();
        }
        if self.flush_capped && wrote_flush_list && r.np_flush >= r.flush_requested {
            ctx.decide("flush_slice_cut_short", || {
                format!(
                    "{} flush-list pages written, more are past the start age: go again",
                    r.np_flush
                )
            });
            return Sleep::none();
        }
        Sleep {
            max_us: Some(self.period_us()),
            wake_on_event: true,
            wake_on_write_completion: false,
        }
    }

    fn wake_thresholds(&self, _pool: &BufferPool) -> WakeThresholds {
        let band = self.band;
        WakeThresholds {
            free_pages_below: Some(self.free_low.max(1)),
            takeable_depth_pages: self.user_scan_depth(),
            on_sync_replacement: true,
            redo_age_bytes: (band.start_bytes != u64::MAX)
                .then(|| band.start_bytes + (band.target_bytes - band.start_bytes) / 2),
            ..WakeThresholds::default()
        }
    }

    /// Every figure follows the load within seconds (none is a knob that
    /// climbs toward a setting), so all are named `obs_*`: a steady
    /// warm-up (`crates/lab/src/steady.rs`) does not wait for them.
    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
        vec![
            ("obs_free_low", f64::from(self.free_low)),
            ("obs_free_high", f64::from(self.free_high)),
            ("obs_age_start_bytes", finite(self.band.start_bytes as f64)),
            ("obs_age_target_bytes", finite(self.band.target_bytes as f64)),
            ("obs_demand_pages_per_s", self.demand_pages_per_s),
            ("obs_redo_bytes_per_s", self.redo_bytes_per_s),
            ("obs_batch_latency_us", self.batch_latency_us),
            ("obs_write_pages_per_s", self.write_pages_per_s),
            ("obs_read_latency_us", self.read_latency_us),
        ]
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        let path = FreePagePath {
            user_scan_depth: UserScanDepth::LruScanDepth,
            preflush_advance: PreflushAdvance::WaitForCleaner,
            ..FreePagePath::MYSQL_5_7
        };
        Some(path.resolve(self.user_scan_depth()))
    }
}

#[cfg(test)]
mod tests {
    //! One test per rule of the module documentation.
    use super::*;
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome, LruMode};
    use crate::decision_log::DecisionLog;
    use crate::free_page_path::LruWrittenPages;
    use crate::types::PageId;

    const FRAMES: u32 = 4096;

    fn pool() -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(FRAMES), Lsn(1)).unwrap()
    }

    /// Reads `n` new pages into the pool (each a miss: one allocation).
    fn miss(pool: &mut BufferPool, first: u32, n: u32) {
        for p in first..first + n {
            match pool.fix(PageId::new(1, p), FixIntent::Read, 0, 0) {
                FixOutcome::Miss(f) => {
                    pool.complete_read(f);
                    pool.unfix(f);
                }
                other => panic!("page {p}: {other:?}"),
            }
        }
    }

    /// Makes page `p` dirty with its first change at `lsn`.
    fn dirty(pool: &mut BufferPool, p: u32, lsn: u64) {
        let f = match pool.fix(PageId::new(1, p), FixIntent::Read, 0, 0) {
            FixOutcome::Miss(f) => {
                pool.complete_read(f);
                f
            }
            FixOutcome::Hit(f) => f,
            other => panic!("page {p}: {other:?}"),
        };
        pool.note_modification(f, Lsn(lsn), Lsn(lsn + 100));
        pool.unfix(f);
    }

    /// Runs `f` with a policy context at `now_us`; returns its result and the rules fired.
    fn with_ctx<T>(
        pool: &BufferPool,
        now_us: TimeUs,
        f: impl FnOnce(&mut PolicyCtx<'_>) -> T,
    ) -> (T, Vec<&'static str>) {
        let mut log = DecisionLog::new(64, true);
        let mut ctx = PolicyCtx {
            pool,
            now_us,
            cleaner: 0,
            policy_name: "flushwise",
            log: &mut log,
        };
        let out = f(&mut ctx);
        (out, log.drain().into_iter().map(|d| d.rule).collect())
    }

    /// A policy that forecasts `demand_pages_per_s` over an 8-ms batch
    /// latency, its demand window opened at `pool`'s counters.
    fn with_demand(pool: &BufferPool, demand_pages_per_s: f64) -> Flushwise {
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        fw.demand_pages_per_s = demand_pages_per_s;
        fw.batch_latency_us = 8_000.0;
        fw.window_started_us = Some(0);
        fw.window_counters = *pool.counters();
        fw
    }

    fn iteration(flushing_time_us: TimeUs, np_lru: u32, np_flush: u32) -> IterationReport {
        IterationReport {
            flushing_time_us,
            np_lru,
            np_flush,
            flush_requested: np_flush,
            ..IterationReport::default()
        }
    }

    #[test]
    fn rule1_demand_is_taken_at_once_when_it_rises_and_followed_slowly_when_it_falls() {
        let mut pool = pool();
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        with_ctx(&pool, 0, |ctx| fw.plan(ctx));
        miss(&mut pool, 0, 500);
        // A window shorter than RATE_WINDOW_US is not a sample.
        with_ctx(&pool, RATE_WINDOW_US - 1, |ctx| fw.plan(ctx));
        assert_eq!(fw.demand_pages_per_s(), 0.0);
        let (_, rules) = with_ctx(&pool, 50_000, |ctx| fw.plan(ctx));
        assert_eq!(fw.demand_pages_per_s(), 10_000.0, "500 pages in 50 ms");
        assert!(rules.contains(&"demand_rises"), "{rules:?}");
        // 50 ms without a miss: 50/1600 of the way down.
        with_ctx(&pool, 100_000, |ctx| fw.plan(ctx));
        let expected = 10_000.0 * (1.0 - 50_000.0 / DEMAND_DECAY_US as f64);
        assert!(
            (fw.demand_pages_per_s() - expected).abs() < 1e-6,
            "{}",
            fw.demand_pages_per_s()
        );
        assert_eq!(fast_up_slow_down(5.0, 9.0, 0.1), 9.0);
        assert_eq!(fast_up_slow_down(9.0, 5.0, 0.25), 8.0);
    }

    #[test]
    fn rule2_watermarks_cover_demand_over_the_reaction_time_and_are_capped() {
        let pool = pool();
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        fw.demand_pages_per_s = 10_000.0;
        fw.batch_latency_us = 8_000.0;
        let (_, rules) = with_ctx(&pool, 0, |ctx| fw.watermarks(ctx));
        // low = 0.01 pages/us x (2 x 2 ms + 8 ms): the wake-up doubled,
        // the batch latency not; refill: 16 pages at 100 us each = 1.6 ms.
        assert_eq!(fw.free_low(), 120);
        assert_eq!(fw.free_high(), 120 + 16);
        assert!(rules.contains(&"free_watermarks"));
        // A demand no quarter of the pool can cover: both capped.
        fw.demand_pages_per_s = 1e7;
        with_ctx(&pool, 0, |ctx| fw.watermarks(ctx));
        assert_eq!(fw.free_high(), FRAMES / 4);
        assert!(fw.free_low() <= fw.free_high());
    }

    #[test]
    fn rule9_the_lru_phase_gives_dirty_pages_twice_the_old_blocks_time() {
        let mut pool = pool();
        miss(&mut pool, 0, FRAMES);
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        let (plan, _) = with_ctx(&pool, 1, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        let old_blocks_time_us = pool.config().old_blocks_time_us;
        assert!(old_blocks_time_us > 0);
        let grace = plan.lru_dirty_grace.expect("flushwise plans a grace");
        assert_eq!(grace.grace_us, 2 * old_blocks_time_us);
        assert_eq!(
            grace.depth_pages,
            (FRAMES / 4 - fw.free_high()) / DIRTY_GRACE_DEPTH_DIVISOR
        );
        // InnoDB's policies keep strict LRU order.
        assert_eq!(IterationPlan::innodb(100).lru_dirty_grace, None);
    }

    #[test]
    fn rule2_the_reserve_counts_the_clean_pages_users_reach_without_a_write() {
        let mut pool = pool();
        // The free list is empty, every page clean.
        miss(&mut pool, 0, FRAMES);
        // The LRU index keeps the dirty pages' positions from the first
        // graced walk on (an empty one here).
        let _ = pool.lru_batch_chunk_graced(0, 0, 0, 0);
        let mut fw = with_demand(&pool, 10_000.0);
        let (plan, rules) = with_ctx(&pool, 1, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        let depth = fw.user_scan_depth();
        assert!(fw.free_high() > 0 && depth >= fw.free_high());
        // A clean tail as deep as the users scan is a full reserve: no
        // LRU phase, although no frame is free.
        assert_eq!(pool.free_len(), 0);
        assert_eq!(pool.takeable_without_write(depth), depth);
        assert_eq!(plan.lru_scan_depth, 0);
        assert!(!rules.contains(&"refill_free_list"), "{rules:?}");
        // Dirty pages at the tail are not in it: the LRU phase makes up
        // the difference in free frames. Pages enter at the old head, so
        // page 0 is the tail.
        let dirty_tail = depth - fw.free_high() + 40;
        for p in 0..dirty_tail {
            dirty(&mut pool, p, 10 + u64::from(p));
        }
        assert_eq!(pool.takeable_without_write(depth), depth - dirty_tail);
        let (plan, rules) = with_ctx(&pool, 2, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        assert_eq!(plan.lru_scan_depth, 40);
        assert!(rules.contains(&"refill_free_list"), "{rules:?}");
        // The wake-up threshold counts the same pages.
        let wake = fw.wake_thresholds(&pool);
        assert_eq!(wake.free_pages_below, Some(fw.free_low()));
        assert_eq!(wake.takeable_depth_pages, depth);
    }

    #[test]
    fn rule9_the_grace_depth_is_what_the_free_list_leaves_of_a_quarter() {
        let mut pool = pool();
        miss(&mut pool, 0, FRAMES);
        assert_eq!(
            dirty_grace(&pool, 100).depth_pages,
            (FRAMES / 4 - 100) / DIRTY_GRACE_DEPTH_DIVISOR
        );
        // A free list at its cap leaves no grace: strict LRU order.
        assert_eq!(dirty_grace(&pool, FRAMES / 4).depth_pages, 0);
        // A high demand over a long batch latency raises free_high, and
        // the plan's grace shrinks with it.
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        fw.demand_pages_per_s = 100_000.0;
        fw.batch_latency_us = 8_000.0;
        let (plan, _) = with_ctx(&pool, 1, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        assert_eq!(fw.free_high(), FRAMES / 4);
        assert_eq!(plan.lru_dirty_grace.map(|g| g.depth_pages), Some(0));
    }

    #[test]
    fn rule3_the_lru_phase_refills_to_free_high_in_chunks_sized_to_the_shortfall() {
        let mut pool = pool();
        miss(&mut pool, 0, FRAMES); // the free list is empty
        let mut fw = with_demand(&pool, 100_000.0);
        let (plan, rules) = with_ctx(&pool, 1, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        assert_eq!(plan.lru_scan_depth, fw.free_high());
        assert_eq!(plan.lru_chunk_pages, LRU_CHUNK_PAGES);
        assert_eq!(plan.lru_mode, LruMode::EvictToFree);
        assert!(rules.contains(&"refill_free_list"), "{rules:?}");
        // With the free list full there is no LRU phase.
        let pool = self::pool();
        let (plan, _) = with_ctx(&pool, 2, |ctx| fw.plan(ctx));
        let Plan::Flush(plan) = plan else { panic!("{plan:?}") };
        assert_eq!(plan.lru_scan_depth, 0);
    }

    #[test]
    fn rule3_the_period_follows_demand_and_a_short_free_list_wakes_the_cleaner() {
        let mut pool = pool();
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        fw.demand_pages_per_s = 8_000.0;
        fw.free_low = 100;
        fw.free_high = 150;
        let (sleep, _) = with_ctx(&pool, 0, |ctx| fw.end_iteration(ctx, &iteration(1_000, 10, 0)));
        // 16 pages at 125 us each.
        assert_eq!(sleep.max_us, Some(2_000));
        assert!(sleep.wake_on_event);
        let wake = fw.wake_thresholds(&pool);
        assert_eq!(wake.free_pages_below, Some(100));
        assert!(wake.on_sync_replacement);
        // Still short after refilling: go again at once.
        miss(&mut pool, 0, FRAMES - 50);
        let (sleep, rules) = with_ctx(&pool, 0, |ctx| fw.end_iteration(ctx, &iteration(1_000, 10, 0)));
        assert_eq!(sleep, Sleep::none());
        assert!(rules.contains(&"free_list_still_short"));
        // No demand: the longest tick.
        let mut idle = Flushwise::new(FlushwiseConfig::default());
        let (sleep, _) = with_ctx(&self::pool(), 0, |ctx| idle.end_iteration(ctx, &iteration(0, 0, 0)));
        assert_eq!(sleep.max_us, Some(TICK_US));
    }

    #[test]
    fn rule4_the_device_capacity_and_batch_latency_are_learned_from_completed_writes() {
        let pool = pool();
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        with_ctx(&pool, 0, |ctx| fw.end_iteration(ctx, &iteration(10_000, 200, 0)));
        assert_eq!(fw.batch_latency_us(), 5_000.0, "two chunks of 100 in 10 ms");
        assert_eq!(fw.write_pages_per_s(), 20_000.0);
        // A slower iteration 1 s later lowers the capacity by 1/5 of the gap.
        with_ctx(&pool, 1_000_000, |ctx| {
            fw.end_iteration(ctx, &iteration(100_000, 100, 0))
        });
        assert!((fw.write_pages_per_s() - (20_000.0 - 19_000.0 * 0.2)).abs() < 1e-6);
        assert_eq!(fw.batch_latency_us(), 0.75 * 5_000.0 + 0.25 * 100_000.0);
        // A faster one is believed at once.
        let (_, rules) = with_ctx(&pool, 1_100_000, |ctx| fw.end_iteration(ctx, &iteration(1_000, 100, 0)));
        assert_eq!(fw.write_pages_per_s(), 100_000.0);
        assert!(rules.contains(&"device_capacity_rises"));
    }

    #[test]
    fn rule5_and_6_the_flush_list_is_left_alone_below_the_band_and_follows_redo_inside_it() {
        let mut pool = pool();
        let async_margin = pool.redo().margins.max_modified_age_async_bytes;
        let mut fw = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: 3600 * SECOND_US,
            ..FlushwiseConfig::default()
        });
        fw.write_pages_per_s = 10_000.0;
        dirty(&mut pool, 1, 10);
        // Below the band: write combining kept.
        let (plan, rules) = with_ctx(&pool, 0, |ctx| fw.plan_flush_list(ctx));
        assert_eq!(plan, FlushListPlan::NONE);
        assert!(rules.contains(&"write_combining_kept"), "{rules:?}");
        let band = fw.band();
        assert_eq!(band.target_bytes, async_margin, "no recovery bound at one hour");
        assert_eq!(
            band.start_bytes,
            async_margin - async_margin / 8,
            "headroom: no redo rate yet"
        );
        // Inside the band: pages older than head - start, a capped slice.
        pool.note_redo(Lsn(10 + band.start_bytes + 1_000));
        let (plan, rules) = with_ctx(&pool, 0, |ctx| fw.plan_flush_list(ctx));
        assert_eq!(plan.lsn_limit, Lsn(10 + 1_000));
        assert_eq!(plan.pages, 500, "50 ms of 10,000 pages/s");
        assert!(rules.contains(&"redo_follows_generation"));
        // Past the target (here the async margin): a longer slice.
        pool.note_redo(Lsn(10 + band.target_bytes + 1));
        let (plan, rules) = with_ctx(&pool, 0, |ctx| fw.plan_flush_list(ctx));
        assert_eq!(plan.pages, 500 * URGENT_SLICE_FACTOR);
        assert!(rules.contains(&"redo_age_past_target"));
        // Below the async margin, a slice ends before the free list would:
        // 100 spare frames at 10,000 allocations/s last 10 ms = 100 pages,
        // raised to one batch.
        let mut bounded = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: SECOND_US,
            redo_apply_bytes_per_s: 1e6,
            recovery_page_read_us: 1.0,
            recovery_fixed_us: 0.0,
        });
        bounded.write_pages_per_s = 10_000.0;
        bounded.demand_pages_per_s = 10_000.0;
        bounded.free_low = FRAMES - 100;
        let mut pool = self::pool();
        dirty(&mut pool, 1, 10);
        pool.note_redo(Lsn(10 + (1 << 20)));
        let (plan, rules) = with_ctx(&pool, 0, |ctx| bounded.plan_flush_list(ctx));
        assert!(bounded.band().target_bytes < 1 << 20, "0.8 s at 1 MB/s");
        assert!(rules.contains(&"redo_age_past_target"));
        assert_eq!(plan.pages, FLUSH_BATCH_PAGES);
        // A fast redo rate widens the headroom, at most to half the target.
        fw.redo_bytes_per_s = 1e15;
        assert_eq!(fw.age_band(&pool, 0.0).start_bytes, async_margin - async_margin / 2);
    }

    #[test]
    fn rule5_the_headroom_is_the_redo_of_one_reaction_of_the_cleaner() {
        let pool = pool();
        let target = pool.redo().margins.max_modified_age_async_bytes;
        let mut fw = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: 3600 * SECOND_US,
            ..FlushwiseConfig::default()
        });
        // No demand: the cleaner sleeps a tick (100 ms), then a slice
        // (50 ms) and a batch (10 ms): 160 ms of redo is a quarter here.
        fw.batch_latency_us = 10_000.0;
        fw.redo_bytes_per_s = target as f64 / 4.0 / 0.16;
        assert_eq!(fw.redo_reaction_us(), 160_000.0);
        let quarter = target - fw.age_band(&pool, 0.0).start_bytes;
        assert!(quarter.abs_diff(target / 4) <= 1, "{quarter} vs {}", target / 4);
        // A demand that wakes the cleaner every millisecond shortens the
        // reaction to 61 ms, and the headroom with it (to the 1/8 floor).
        fw.demand_pages_per_s = 16_000.0;
        assert_eq!(fw.period_us(), REFILL_MIN_US);
        assert_eq!(fw.redo_reaction_us(), 61_000.0);
        assert_eq!(fw.age_band(&pool, 0.0).start_bytes, target - target / 8);
        // Four times the redo rate: 61 ms of it is 0.38 of the target,
        // within the clamps.
        fw.redo_bytes_per_s *= 4.0;
        let headroom = target - fw.age_band(&pool, 0.0).start_bytes;
        let expected = (fw.redo_bytes_per_s * 0.061) as u64;
        assert_eq!(headroom, expected);
        assert!(headroom > target / 8 && headroom < target / 2);
        // Below a target the recovery bound sets, the headroom is a second
        // of redo, whatever the reaction: the band is the estimate's margin.
        let mut bounded = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: SECOND_US,
            redo_apply_bytes_per_s: 10.0 * 1024.0 * 1024.0,
            recovery_page_read_us: 100.0,
            recovery_fixed_us: 0.0,
        });
        bounded.batch_latency_us = 10_000.0;
        let bound = bounded.age_band(&pool, 0.0).target_bytes;
        assert!(bound < target);
        bounded.redo_bytes_per_s = bound as f64 / 4.0;
        assert_eq!(bound - bounded.age_band(&pool, 0.0).start_bytes, bound / 4);
    }

    #[test]
    fn rule5_a_short_recovery_bound_lowers_the_target_age() {
        let mut pool = pool();
        dirty(&mut pool, 1, 10);
        let fw = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: SECOND_US,
            redo_apply_bytes_per_s: 10.0 * 1024.0 * 1024.0,
            recovery_page_read_us: 100.0,
            recovery_fixed_us: 0.0,
        });
        let band = fw.age_band(&pool, 0.0);
        // 0.8 s of budget, one dirty page read: (0.8 s - 100 us) x 10 MiB/s.
        let expected = ((800_000.0 - 100.0) / 1e6 * 10.0 * 1024.0 * 1024.0) as u64;
        assert_eq!(band.target_bytes, expected);
        assert!(band.target_bytes < pool.redo().margins.max_modified_age_async_bytes);
    }

    #[test]
    fn rule5_the_opens_fixed_cost_comes_out_of_the_budget_before_the_redo() {
        let mut pool = pool();
        dirty(&mut pool, 1, 10);
        let config = FlushwiseConfig {
            max_recovery_time_us: 5 * SECOND_US,
            redo_apply_bytes_per_s: 10.0 * 1024.0 * 1024.0,
            recovery_page_read_us: 100.0,
            recovery_fixed_us: 0.0,
        };
        let free = Flushwise::new(config).age_band(&pool, 0.0).target_bytes;
        // 4 s of budget; an open that costs 2.5 s leaves 1.5 s for the redo.
        let fixed = Flushwise::new(FlushwiseConfig {
            recovery_fixed_us: 2.5e6,
            ..config
        });
        assert_eq!(fixed.redo_budget_us(), 1.5e6);
        let target = fixed.age_band(&pool, 0.0).target_bytes;
        let expected = ((1.5e6 - 100.0) / 1e6 * 10.0 * 1024.0 * 1024.0) as u64;
        assert_eq!(target, expected);
        assert!(target < free);
        // A fixed cost past the budget cannot be flushed away: the redo
        // keeps a tenth of the budget.
        let past = Flushwise::new(FlushwiseConfig {
            recovery_fixed_us: 9e6,
            ..config
        });
        assert_eq!(past.redo_budget_us(), 0.4e6);
        // And it is a parameter, with the engine's key.
        let spec = crate::policy::PolicySpec::parse("flushwise:recovery_fixed_s=2.5").unwrap();
        assert_eq!(FlushwiseConfig::from_params(spec.params()).recovery_fixed_us, 2.5e6);
    }

    #[test]
    fn rule7_congested_reads_move_the_start_age_toward_the_target() {
        let pool = pool();
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        let calm = fw.age_band(&pool, 0.0);
        let congested = fw.age_band(&pool, 1.0);
        assert_eq!(congested.target_bytes, calm.target_bytes);
        assert_eq!(
            congested.start_bytes,
            calm.start_bytes + (calm.target_bytes - calm.start_bytes) / 2
        );
        let interval = |reads: u64, us: u64| PoolCounters {
            reads_timed: reads,
            read_latency_us: us,
            ..PoolCounters::default()
        };
        let (c, _) = with_ctx(&pool, 0, |ctx| fw.read_congestion(ctx, &interval(10, 1_000)));
        assert_eq!(c, 0.0, "100 us is the floor");
        let (c, rules) = with_ctx(&pool, 0, |ctx| fw.read_congestion(ctx, &interval(10, 3_000)));
        assert!(c > 0.0 && c < 1.0, "{c}");
        assert!(rules.contains(&"reads_congested"));
        let (c, _) = with_ctx(&pool, 0, |ctx| fw.read_congestion(ctx, &interval(10, 100_000)));
        assert_eq!(c, 1.0);
    }

    #[test]
    fn rule8_dirty_pages_past_the_recovery_bound_are_flushed() {
        let mut pool = pool();
        for p in 0..50 {
            dirty(&mut pool, p, 10 + u64::from(p));
        }
        // 0.8 s x 1/2 of budget at 10 ms a page: 40 pages may stay dirty.
        let mut fw = Flushwise::new(FlushwiseConfig {
            max_recovery_time_us: SECOND_US,
            redo_apply_bytes_per_s: 1e12,
            recovery_page_read_us: 10_000.0,
            recovery_fixed_us: 0.0,
        });
        let (plan, rules) = with_ctx(&pool, 0, |ctx| fw.plan_flush_list(ctx));
        assert_eq!(plan.pages, 10);
        assert_eq!(plan.lsn_limit, Lsn::MAX);
        assert!(rules.contains(&"dirty_pages_past_recovery_bound"), "{rules:?}");
    }

    #[test]
    fn users_evict_pages_the_cleaner_wrote_at_once_and_scan_as_deep_as_free_high() {
        let mut fw = Flushwise::new(FlushwiseConfig::default());
        fw.free_high = 700;
        let rule = fw.free_page_rule().unwrap();
        assert_eq!(rule.lru_written_pages, LruWrittenPages::EvictOnCompletion);
        assert_eq!(rule.user_scan_depth, 699);
        assert_eq!(rule.preflush_advance, PreflushAdvance::WaitForCleaner);
    }

    #[test]
    fn it_needs_no_parameter_and_validates_the_ones_it_has() {
        let spec = crate::policy::PolicySpec::parse("flushwise").unwrap();
        assert_eq!(spec.build().name(), "flushwise");
        let spec = crate::policy::PolicySpec::parse("flushwise:max_recovery_time_s=5").unwrap();
        assert_eq!(
            FlushwiseConfig::from_params(spec.params()).max_recovery_time_us,
            5 * SECOND_US
        );
        assert!(crate::policy::PolicySpec::parse("flushwise:max_recovery_time_s=0").is_err());
    }
}
