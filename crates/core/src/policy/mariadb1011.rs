//! `mariadb1011`: MariaDB 10.5+'s rewritten page cleaner (as in 10.11), over
//! its users' free-page path, where a user never writes a page to get a
//! frame: it wakes the cleaner and waits.
//!
//! One cleaner thread, one pool (MDEV-15058 removed the instances). A pass of
//! `buf0flu.cc` `buf_flush_page_cleaner` does, in order:
//!
//! 1. **Furious flush** (`buf_flush_sync_lsn` set, `innodb_flush_sync` ON):
//!    `buf_flush_sync_for_checkpoint`: an LRU pass of `innodb_io_capacity`
//!    pages if eviction is needed (MDEV-34265), then `innodb_io_capacity_max`
//!    pages from the flush list below the target, and no sleep until the
//!    oldest modification reaches it. With `innodb_flush_sync` OFF the
//!    target is handled like the soft one.
//! 2. **Eviction needed** (`buf_pool_t::need_LRU_eviction`: a user's scan
//!    failed since the last batch (`!try_LRU_scan`), or `|free| <
//!    innodb_lru_scan_depth / 2` with `|LRU| > BUF_LRU_MIN_LEN`) and no soft
//!    target: an LRU pass of `innodb_io_capacity_max` pages, nothing else.
//! 3. **Unemployed**: with `innodb_max_dirty_pages_pct_lwm` = 0 (its default)
//!    while dirty% < `innodb_max_dirty_pages_pct`, no soft target and the
//!    redo age at most `innodb_adaptive_flushing_lwm` % of the log capacity
//!    (`af_needed_for_redo`), the cleaner goes idle and sleeps until woken
//!    (no timeout). With a low-water mark L > 0, below L it idles, and an
//!    idle server (no activity since the last pass, no read pending) gets an
//!    "idle flush" of `innodb_io_capacity` pages.
//! 4. **Flush list**: towards a soft target (`buf_flush_async_lsn`)
//!    `innodb_io_capacity_max` pages below it; else, with adaptive flushing,
//!    `page_cleaner_flush_pages_recommendation` pages with no LSN limit.
//! 5. **LRU pass after the flush list** (MDEV-36226): up to
//!    `max(io_capacity_max - flushed, min(io_capacity_max, innodb_lru_scan_depth))`
//!    written pages, evicting clean ones until `|free|` reaches
//!    `innodb_lru_scan_depth` (`buf_flush_LRU_list_batch`).
//! 6. Sleep at most 1 s from the end of the previous sleep (`abstime`), or
//!    not at all while eviction is needed.
//!
//! The soft and furious targets come from the writers: at each
//! mini-transaction commit, a checkpoint age beyond `max_modified_age_async`
//! (7/8 of the margin) asks for soft flushing to the commit LSN, beyond
//! `max_checkpoint_age` (the margin) for furious flushing
//! (`mtr0mtr.cc` `log_close` -> `buf_flush_ahead`). A furious request wakes
//! the cleaner from any sleep; a soft one only from its idle sleep.
//!
//! The recommendation (`page_cleaner_flush_pages_recommendation`): below the
//! adaptive-flushing lwm (`pct_for_lsn` = 0) or on the first call, the dirty
//! page count if it is at most `io_capacity`, else `io_capacity` (or
//! `min(io_capacity_max, dirty)` when `dirty% / max% x io_capacity` reaches
//! the dirty count); otherwise the averages are refreshed after
//! `innodb_flushing_avg_loops` (30) calls or seconds, per elapsed second, and
//! `n = (io_capacity x ratio + avg_page_rate + pages_for_lsn) / 3`, capped at
//! `io_capacity_max`, where `ratio` is 1 with a zero lwm (the default) and
//! `max(pct_for_lsn / 100, dirty% / max%)` otherwise, and `pages_for_lsn`
//! counts up to `io_capacity_max` flush-list pages older than
//! `oldest + 3 x lsn_avg_rate`, divided by 3 (at least 1). LRU-pass writes
//! count in the next call's `last_pages`.
//!
//! Users ([`FreePagePath::MARIADB_10_5`], `buf0lru.cc` `buf_LRU_get_free_block`):
//! the free list, else a 100-page clean-victim scan (if `try_LRU_scan`), else
//! wake the cleaner (`page_cleaner_wakeup(true)`) and wait for a free frame
//! (`done_free`), taking only from the free list from then on; a user that
//! takes a frame and leaves fewer than `innodb_lru_scan_depth / 2` wakes the
//! cleaner too. Pages written by the LRU pass are freed when their write
//! completes (`buf_page_write_complete`).
//!
//! Defaults: `innodb_lru_scan_depth` 1536 (MariaDB 10.5+),
//! `innodb_io_capacity` 200, `innodb_io_capacity_max` max(2000, 2 x
//! io_capacity) when unset, `innodb_max_dirty_pages_pct` 90,
//! `innodb_max_dirty_pages_pct_lwm` 0, `innodb_adaptive_flushing_lwm` 10,
//! `innodb_flushing_avg_loops` 30, `innodb_adaptive_flushing` ON,
//! `innodb_flush_sync` ON (MariaDB server system-variable documentation).
//!
//! # Sources and versions
//! Read from `MariaDB/server`: `storage/innobase/buf/buf0flu.cc`
//! (`buf_flush_page_cleaner`, `buf_pool_t::need_LRU_eviction`,
//! `buf_pool_t::page_cleaner_wakeup`, `buf_flush_sync_for_checkpoint`,
//! `buf_flush_ahead`, `af_needed_for_redo`, `af_get_pct_for_lsn`,
//! `page_cleaner_flush_pages_recommendation`, `buf_flush_LRU_list_batch`) and
//! `buf0lru.cc` (`buf_LRU_get_free_block`) of the current development tree
//! (after MDEV-33053, MDEV-33613, MDEV-34265, MDEV-36226, which the 10.11
//! series received); `mtr0mtr.cc` (`log_close`, `mtr_t::commit`); and an
//! earlier 10.6/10.11-era `buf0flu.cc` (`buf_page_write_complete`: LRU writes
//! are freed on completion). No 10.11 release tag was read: where 10.11.x
//! and the development tree differ is unverified.
//!
//! # Deviations
//! - Targets are raised when a pass starts, from the pool's checkpoint age,
//!   not at every commit; the furious wake uses the pool's redo-age wake
//!   (head minus oldest modification, never more than the checkpoint age),
//!   so it may come a little later than MariaDB's.
//! - Redo margins are the core's 5.6-style ones: MariaDB's
//!   `log_set_capacity` has the same shape (async = 7/8 of the margin,
//!   `max_checkpoint_age` = the margin) with `innodb_thread_concurrency` 0
//!   in the reserve; the core uses the shell's setting.
//! - `!try_LRU_scan` is read as "a user waited since the last batch"
//!   (`wait_free` grew); `BUF_LRU_MIN_LEN` is the pool's `lru_min_len`.
//! - The driver runs the LRU phase before the flush list, so a pass with a
//!   flush-list batch is two driver iterations (flush list, then LRU) with
//!   no sleep between them. An LRU budget below `innodb_lru_scan_depth`
//!   (only the furious pass's `io_capacity`) also lowers the free target to
//!   the budget, since the driver's chunk count follows the free target.
//! - Checkpoints are the shell's (every second or past the async checkpoint
//!   age); MariaDB's cleaner also checkpoints after each batch.
//! - Writers past the sync margin still follow the core's preflush rule;
//!   MariaDB's writers wait for the cleaner (`buf_flush_wait_flushed`).
//!
//! Invariants: a pass never writes more than `io_capacity_max` pages from
//! the flush list; users never write (their path waits); a cleaner whose
//! eviction is still needed never sleeps on purpose; the soft and furious
//! targets only rise until the oldest modification reaches them.

use crate::adaptive_flushing::LSN_SCAN_FACTOR;
use crate::buffer_pool::{BufferPool, WakeThresholds};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{Lsn, TimeUs, SECOND_US};

/// `mariadb1011`'s own parameters (MariaDB 10.5+ defaults, module docs).
pub const PARAMS: &[ParamDecl] = &[
    ParamDecl::int(
        "lru_scan_depth",
        1536,
        100,
        u32::MAX as u64,
        "innodb_lru_scan_depth: free-list target; eviction wakes below half of it (MariaDB 10.5+ default 1536)",
    ),
    ParamDecl::int(
        "io_capacity",
        200,
        100,
        u32::MAX as u64,
        "innodb_io_capacity (default 200)",
    ),
    ParamDecl::int(
        "io_capacity_max",
        0,
        0,
        u32::MAX as u64,
        "innodb_io_capacity_max; 0 = max(2000, 2 x io_capacity)",
    ),
    ParamDecl::int(
        "max_dirty_pages_pct",
        90,
        1,
        99,
        "innodb_max_dirty_pages_pct (default 90)",
    ),
    ParamDecl::int(
        "max_dirty_pages_pct_lwm",
        0,
        0,
        99,
        "innodb_max_dirty_pages_pct_lwm; 0 (default) = refer to max_dirty_pages_pct",
    ),
    ParamDecl::int(
        "adaptive_flushing_lwm",
        10,
        0,
        70,
        "innodb_adaptive_flushing_lwm: % of the log capacity that makes an idle cleaner flush",
    ),
    ParamDecl::int(
        "flushing_avg_loops",
        30,
        1,
        1000,
        "innodb_flushing_avg_loops: calls or seconds between refreshes of the averages",
    ),
    ParamDecl::choice(
        "adaptive_flushing",
        "on",
        &[
            ("on", "page_cleaner_flush_pages_recommendation"),
            ("off", "flush innodb_io_capacity pages"),
        ],
        "innodb_adaptive_flushing (default ON)",
    ),
    ParamDecl::choice(
        "flush_sync",
        "on",
        &[
            ("on", "furious flushing past max_checkpoint_age"),
            ("off", "the furious target is flushed like the soft one"),
        ],
        "innodb_flush_sync (default ON)",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "mariadb1011",
    about: "MariaDB 10.5+/10.11's page cleaner: soft/furious targets, LRU pass after the flush list, users never write",
    params: &[PARAMS, crate::free_page_path::PARAMS_MARIADB_10_5],
    build: |p| Box::new(Mariadb1011::new(Mariadb1011Config::from_params(p))),
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mariadb1011Config {
    /// `innodb_lru_scan_depth`.
    pub lru_scan_depth: u32,
    /// `innodb_io_capacity`.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`; `None` = max(2000, 2 x io_capacity).
    pub io_capacity_max: Option<u32>,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: u32,
    /// `innodb_max_dirty_pages_pct_lwm`.
    pub max_dirty_pages_pct_lwm: u32,
    /// `innodb_adaptive_flushing_lwm` (% of the log capacity).
    pub adaptive_flushing_lwm_pct: u64,
    /// `innodb_flushing_avg_loops`.
    pub flushing_avg_loops: u32,
    /// `innodb_adaptive_flushing`.
    pub adaptive_flushing: bool,
    /// `innodb_flush_sync`.
    pub flush_sync: bool,
    /// The users' free-page path (MariaDB's by default: users wait).
    pub free_page_path: FreePagePath,
}

impl Default for Mariadb1011Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Mariadb1011Config {
    pub fn from_params(p: &ParamSet) -> Self {
        let max_dirty_pages_pct = p.u32("max_dirty_pages_pct");
        Self {
            lru_scan_depth: p.u32("lru_scan_depth"),
            io_capacity: p.u32("io_capacity"),
            io_capacity_max: Some(p.u32("io_capacity_max")).filter(|&v| v > 0),
            max_dirty_pages_pct,
            // innodb_max_dirty_pages_pct_lwm_update: never above the maximum.
            max_dirty_pages_pct_lwm: p.u32("max_dirty_pages_pct_lwm").min(max_dirty_pages_pct),
            adaptive_flushing_lwm_pct: p.u64("adaptive_flushing_lwm"),
            flushing_avg_loops: p.u32("flushing_avg_loops"),
            adaptive_flushing: p.name("adaptive_flushing") == "on",
            flush_sync: p.name("flush_sync") == "on",
            free_page_path: FreePagePath::from_params(p),
        }
    }

    /// `innodb_io_capacity_max` in force (never below `innodb_io_capacity`).
    pub fn io_capacity_max(&self) -> u32 {
        self.io_capacity_max
            .unwrap_or((2 * self.io_capacity).max(2000))
            .max(self.io_capacity)
    }
}

/// What the current driver iteration is, within a MariaDB pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `buf_flush_sync_for_checkpoint`.
    Furious,
    /// The `need_LRU_eviction` branch: an LRU pass only.
    LruOnly,
    /// The flush-list half of a pass; `adaptive` when the recommendation
    /// sized it (its writes become `last_pages`).
    FlushList { adaptive: bool },
    /// The LRU pass that follows the flush list.
    LruAfterFlush,
    /// Nothing to do: idle or waiting for the next second.
    Unemployed,
}

/// `page_cleaner_flush_pages_recommendation`'s `static`s and `lsn_avg_rate`.
#[derive(Clone, Copy, Debug, Default)]
struct Averages {
    prev_lsn: Lsn,
    prev_time_us: TimeUs,
    sum_pages: u64,
    avg_page_rate: u64,
    n_iterations: u32,
    lsn_avg_rate: u64,
}

/// One recommendation, with its numbers for the decision log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Recommendation {
    pages: u32,
    pct_for_lsn: u64,
    pages_for_lsn: u64,
    /// The first call or `pct_for_lsn` = 0: sized from the dirty count.
    below_lwm: bool,
}

pub struct Mariadb1011 {
    config: Mariadb1011Config,
    averages: Averages,
    /// `buf_flush_async_lsn` (ZERO = none).
    async_lsn: Lsn,
    /// `buf_flush_sync_lsn` (ZERO = none).
    sync_lsn: Lsn,
    /// `page_cleaner_idle()`.
    idle: bool,
    /// `last_pages`.
    last_pages: u64,
    /// `last_activity_count` (the pool's request count).
    last_activity: u64,
    /// `wait_free` when a batch last ended (`try_LRU_scan = true`).
    wait_free_seen: u64,
    /// When the last sleep ended (`set_timespec(abstime, 1)`).
    pass_started_us: TimeUs,
    step: Step,
    /// The LRU budget of the pass's second half, after a flush-list step.
    lru_after_flush: Option<u32>,
    flush_list: FlushListPlan,
    last_np_req_flush: u32,
}

impl Mariadb1011 {
    pub fn new(config: Mariadb1011Config) -> Self {
        Self {
            config,
            averages: Averages::default(),
            async_lsn: Lsn::ZERO,
            sync_lsn: Lsn::ZERO,
            idle: false,
            last_pages: 0,
            last_activity: 0,
            wait_free_seen: 0,
            pass_started_us: 0,
            step: Step::Unemployed,
            lru_after_flush: None,
            flush_list: FlushListPlan::NONE,
            last_np_req_flush: 0,
        }
    }

    pub fn config(&self) -> &Mariadb1011Config {
        &self.config
    }
    /// `buf_flush_async_lsn`, if set.
    pub fn soft_target(&self) -> Option<Lsn> {
        (self.async_lsn != Lsn::ZERO).then_some(self.async_lsn)
    }
    /// `buf_flush_sync_lsn`, if set.
    pub fn furious_target(&self) -> Option<Lsn> {
        (self.sync_lsn != Lsn::ZERO).then_some(self.sync_lsn)
    }
    /// `page_cleaner_idle()`.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// `buf_pool_t::need_LRU_eviction`.
    fn need_lru_eviction(&self, pool: &BufferPool) -> bool {
        let user_waited = pool.counters().wait_free > self.wait_free_seen;
        user_waited || (pool.lru_len() > pool.config().lru_min_len && pool.free_len() < self.config.lru_scan_depth / 2)
    }

    /// `100 x dirty / (LRU + free)` (`buf_flush_page_cleaner`).
    fn dirty_pct(pool: &BufferPool) -> f64 {
        100.0 * f64::from(pool.dirty_pages()) / f64::from((pool.lru_len() + pool.free_len()).max(1))
    }

    /// `innodb_adaptive_flushing_lwm` of the log capacity, in bytes.
    fn af_lwm_bytes(&self, pool: &BufferPool) -> u64 {
        (self.config.adaptive_flushing_lwm_pct as f64 * pool.redo().margins.group_capacity_bytes as f64 / 100.0) as u64
    }

    /// `af_get_pct_for_lsn` (MariaDB: no `innodb_adaptive_flushing` test; the
    /// capacity ratio is an integer division).
    fn pct_for_lsn(&self, pool: &BufferPool, age_bytes: u64) -> u64 {
        if age_bytes < self.af_lwm_bytes(pool) {
            return 0;
        }
        let factor = age_bytes * 100 / pool.redo().margins.max_modified_age_async_bytes.max(1);
        let ratio = u64::from(self.config.io_capacity_max() / self.config.io_capacity.max(1));
        ((ratio * factor) as f64 * (factor as f64).sqrt() / 7.5) as u64
    }

    /// `buf_flush_ahead` as the commits since the last pass would have
    /// called it: the checkpoint age past `max_checkpoint_age` raises the
    /// furious target, past `max_modified_age_async` the soft one, to the
    /// current LSN.
    fn flush_ahead(&mut self, ctx: &mut PolicyCtx<'_>) {
        let redo = ctx.pool.redo();
        let age = redo.checkpoint_age_bytes();
        let lsn = redo.current_lsn;
        if age > redo.margins.max_checkpoint_age_bytes {
            if self.sync_lsn < lsn {
                self.sync_lsn = lsn;
                let max = redo.margins.max_checkpoint_age_bytes;
                ctx.decide("furious_target_raised", || {
                    format!(
                        "checkpoint age {age} B > max_checkpoint_age {max} B: buf_flush_sync_lsn = {}",
                        lsn.0
                    )
                });
            }
        } else if age > redo.margins.max_modified_age_async_bytes && self.async_lsn < lsn {
            self.async_lsn = lsn;
            let async_bytes = redo.margins.max_modified_age_async_bytes;
            ctx.decide("soft_target_raised", || {
                format!(
                    "checkpoint age {age} B > max_modified_age_async {async_bytes} B: buf_flush_async_lsn = {}",
                    lsn.0
                )
            });
        }
    }

    /// `page_cleaner_flush_pages_recommendation`.
    fn recommend(&mut self, pool: &BufferPool, now_us: TimeUs, pct_lwm: f64) -> Recommendation {
        let io = u64::from(self.config.io_capacity);
        let io_max = u64::from(self.config.io_capacity_max());
        let dirty = u64::from(pool.dirty_pages());
        let dirty_pct = Self::dirty_pct(pool);
        let max_pct = f64::from(self.config.max_dirty_pages_pct);
        let cur = pool.current_lsn();
        let oldest = pool.oldest_modification();
        let pct_for_lsn = self.pct_for_lsn(pool, cur.bytes_since(oldest));
        let a = &mut self.averages;
        if a.prev_lsn == Lsn::ZERO || pct_for_lsn == 0 {
            a.prev_time_us = now_us;
            a.prev_lsn = cur.max(Lsn(1));
            let pages = if io >= dirty {
                dirty
            } else {
                let share = if max_pct > 1.0 { dirty_pct / max_pct } else { dirty_pct };
                let n = (share * io as f64) as u64;
                if n < dirty {
                    io
                } else {
                    io_max.min(dirty)
                }
            };
            return Recommendation {
                pages: pages as u32,
                pct_for_lsn,
                pages_for_lsn: 0,
                below_lwm: true,
            };
        }
        a.sum_pages += self.last_pages;
        let elapsed_s = (now_us.saturating_sub(a.prev_time_us) / SECOND_US).max(1);
        a.n_iterations += 1;
        let loops = u64::from(self.config.flushing_avg_loops.max(1));
        if u64::from(a.n_iterations) >= loops || elapsed_s >= loops {
            a.avg_page_rate = (a.sum_pages / elapsed_s + a.avg_page_rate) / 2;
            let lsn_rate = cur.bytes_since(a.prev_lsn) / elapsed_s;
            a.lsn_avg_rate = (a.lsn_avg_rate + lsn_rate) / 2;
            a.prev_lsn = cur;
            a.prev_time_us = now_us;
            a.n_iterations = 0;
            a.sum_pages = 0;
        }
        let total_ratio = if pct_lwm == 0.0 || max_pct == 0.0 {
            1.0
        } else {
            (pct_for_lsn as f64 / 100.0).max(dirty_pct / max_pct)
        };
        let target = oldest.advance(a.lsn_avg_rate.saturating_mul(LSN_SCAN_FACTOR));
        let scanned = u64::from(pool.flush_list_pages_up_to(target, io_max.min(u64::from(u32::MAX)) as u32));
        let pages_for_lsn = (scanned / LSN_SCAN_FACTOR).max(1);
        let pages = (((io as f64 * total_ratio) as u64 + a.avg_page_rate + pages_for_lsn) / 3).min(io_max);
        Recommendation {
            pages: pages as u32,
            pct_for_lsn,
            pages_for_lsn,
            below_lwm: false,
        }
    }

    /// An LRU pass writing at most `budget` pages and evicting towards
    /// `innodb_lru_scan_depth` free frames, as one driver chunk.
    fn lru_pass(&self, budget: u32) -> IterationPlan {
        if budget == 0 {
            return IterationPlan::innodb(0);
        }
        let depth = self.config.lru_scan_depth.min(budget);
        IterationPlan {
            lru_chunk_pages: budget,
            lru_dirty_grace: None,
            ..IterationPlan::innodb(depth)
        }
    }

    /// Where a pass without flushing ends: sleep, or go on at once.
    fn unemployed(&mut self, ctx: &mut PolicyCtx<'_>, rule: &'static str, why: String) -> Plan {
        self.step = Step::Unemployed;
        ctx.decide(rule, || why);
        Plan::Flush(IterationPlan::innodb(0))
    }

    /// The wait at the top of `buf_flush_page_cleaner`'s loop.
    fn wait(&self, ctx: &mut PolicyCtx<'_>) -> Sleep {
        if self.need_lru_eviction(ctx.pool) {
            return Sleep::none();
        }
        if self.idle && (ctx.pool.dirty_pages() == 0 || self.config.max_dirty_pages_pct_lwm == 0) {
            ctx.decide("idle_sleep_until_woken", || {
                "page cleaner idle: wait for page_cleaner_wakeup or buf_flush_ahead".to_string()
            });
            return Sleep::until_event();
        }
        Sleep {
            max_us: Some((self.pass_started_us + SECOND_US).saturating_sub(ctx.now_us)),
            wake_on_event: true,
            wake_on_write_completion: false,
        }
    }

    /// `check_oldest_and_set_idle` after an LRU pass.
    fn after_lru_pass(&mut self, pool: &BufferPool) {
        if pool.dirty_pages() == 0 {
            self.sync_lsn = Lsn::ZERO;
            self.idle = true;
            return;
        }
        if pool.oldest_modification() >= self.async_lsn {
            self.async_lsn = Lsn::ZERO;
        }
        self.idle = false;
    }
}

impl FlushPolicy for Mariadb1011 {
    fn name(&self) -> &'static str {
        "mariadb1011"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        self.flush_list = FlushListPlan::NONE;
        let io = self.config.io_capacity;
        let io_max = self.config.io_capacity_max();
        if let Some(budget) = self.lru_after_flush.take() {
            self.step = Step::LruAfterFlush;
            let depth = self.config.lru_scan_depth;
            ctx.decide("lru_pass_after_flush_list", || {
                format!("LRU pass: up to {budget} writes, free target {depth}")
            });
            return Plan::Flush(self.lru_pass(budget));
        }
        self.pass_started_us = ctx.now_us;
        self.flush_ahead(ctx);
        let need_lru = self.need_lru_eviction(ctx.pool);
        if self.sync_lsn != Lsn::ZERO && self.config.flush_sync {
            self.step = Step::Furious;
            let lru = if need_lru { io } else { 0 };
            self.flush_list = FlushListPlan {
                pages: io_max,
                lsn_limit: self.sync_lsn,
            };
            let target = self.sync_lsn.0;
            ctx.decide("furious_flush", || {
                format!("flush {io_max} pages below {target}, LRU pass of {lru} first, no sleep")
            });
            return Plan::Flush(self.lru_pass(lru));
        }
        if ctx.pool.dirty_pages() == 0 {
            if self.sync_lsn != Lsn::ZERO || self.async_lsn != Lsn::ZERO {
                ctx.decide("clean_pool_clears_targets", || {
                    "no dirty page: every target is reached".to_string()
                });
            }
            self.sync_lsn = Lsn::ZERO;
            self.async_lsn = Lsn::ZERO;
            self.idle = true;
            if !need_lru {
                return self.unemployed(ctx, "clean_pool_idle", "no dirty page, no eviction needed".to_string());
            }
        }
        let oldest = ctx.pool.oldest_modification();
        let mut soft = self.async_lsn;
        if self.sync_lsn != Lsn::ZERO {
            // innodb_flush_sync = OFF: the furious target is a soft one.
            if oldest >= self.sync_lsn {
                self.sync_lsn = Lsn::ZERO;
            } else if self.sync_lsn > soft {
                soft = self.sync_lsn;
            }
        }
        if soft != Lsn::ZERO {
            if oldest >= soft {
                self.async_lsn = Lsn::ZERO;
                soft = Lsn::ZERO;
                ctx.decide("soft_target_reached", || {
                    format!("oldest modification {} reached the soft target", oldest.0)
                });
            }
        } else if need_lru {
            self.step = Step::LruOnly;
            self.idle = false;
            let (free, depth) = (ctx.pool.free_len(), self.config.lru_scan_depth);
            ctx.decide("lru_eviction_needed", || {
                format!("|free|={free} < {depth}/2 or a user waited: LRU pass of {io_max} pages only")
            });
            return Plan::Flush(self.lru_pass(io_max));
        }
        let dirty_pct = Self::dirty_pct(ctx.pool);
        let lwm = f64::from(self.config.max_dirty_pages_pct_lwm);
        let mut pct_lwm = lwm;
        let mut idle_flush = false;
        let mut possibly_unemployed = false;
        if lwm != 0.0 {
            let activity = ctx.pool.counters().requests;
            if activity != self.last_activity {
                self.last_activity = activity;
            } else if self.idle && ctx.pool.pending_reads() == 0 {
                idle_flush = true;
            }
            if !idle_flush && dirty_pct < lwm {
                pct_lwm = 0.0;
                possibly_unemployed = true;
            }
        } else if dirty_pct < f64::from(self.config.max_dirty_pages_pct) {
            possibly_unemployed = true;
        }
        let age = ctx.pool.current_lsn().bytes_since(oldest);
        if possibly_unemployed && soft == Lsn::ZERO && age <= self.af_lwm_bytes(ctx.pool) {
            self.idle = true;
            if !self.need_lru_eviction(ctx.pool) {
                let why = format!(
                    "dirty {dirty_pct:.1}% below the mark, redo age {age} B within the adaptive-flushing lwm, \
                     no soft target: idle"
                );
                return self.unemployed(ctx, "unemployed_goes_idle", why);
            }
        }
        self.idle = false;
        let mut adaptive = false;
        if soft != Lsn::ZERO {
            self.flush_list = FlushListPlan {
                pages: io_max,
                lsn_limit: soft,
            };
            ctx.decide("soft_flush", || {
                format!("flush {io_max} pages below the soft target {}", soft.0)
            });
        } else if idle_flush || !self.config.adaptive_flushing {
            self.flush_list = FlushListPlan {
                pages: io,
                lsn_limit: Lsn::MAX,
            };
            let rule = if idle_flush {
                "idle_flush"
            } else {
                "adaptive_flushing_off"
            };
            ctx.decide(rule, || format!("flush innodb_io_capacity = {io} pages, no LSN limit"));
        } else {
            let rec = self.recommend(ctx.pool, ctx.now_us, pct_lwm);
            self.last_np_req_flush = rec.pages;
            if rec.pages > 0 {
                adaptive = true;
                self.flush_list = FlushListPlan {
                    pages: rec.pages,
                    lsn_limit: Lsn::MAX,
                };
                let avg = self.averages.avg_page_rate;
                ctx.decide("adaptive_flushing", || {
                    format!(
                        "n={} (pct_for_lsn={} pages_for_lsn={} avg_page_rate={avg} last_pages={}{})",
                        rec.pages,
                        rec.pct_for_lsn,
                        rec.pages_for_lsn,
                        self.last_pages,
                        if rec.below_lwm {
                            ", below the lwm: sized from the dirty count"
                        } else {
                            ""
                        }
                    )
                });
            } else if self.async_lsn <= oldest && !self.need_lru_eviction(ctx.pool) {
                if oldest >= self.async_lsn {
                    self.async_lsn = Lsn::ZERO;
                }
                return self.unemployed(
                    ctx,
                    "nothing_recommended",
                    "recommendation 0, no eviction needed".to_string(),
                );
            }
        }
        self.step = Step::FlushList { adaptive };
        Plan::Flush(IterationPlan::innodb(0))
    }

    fn plan_flush_list(&mut self, _ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        self.flush_list
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        if self.step != Step::Unemployed {
            // buf_flush_LRU / buf_flush_list end with try_LRU_scan = true.
            self.wait_free_seen = ctx.pool.counters().wait_free;
        }
        match self.step {
            Step::Furious => {
                self.last_pages = 0;
                let measure = if ctx.pool.dirty_pages() == 0 {
                    Lsn::MAX
                } else {
                    ctx.pool.oldest_modification()
                };
                if measure >= self.sync_lsn {
                    self.sync_lsn = Lsn::ZERO;
                    ctx.decide("furious_target_reached", || {
                        format!("oldest modification {} reached the furious target", measure.0)
                    });
                } else if measure >= self.async_lsn {
                    self.async_lsn = Lsn::ZERO;
                }
                if self.sync_lsn != Lsn::ZERO {
                    return Sleep::none();
                }
                // set_timespec(abstime, 1) after a furious pass.
                self.pass_started_us = ctx.now_us;
                self.wait(ctx)
            }
            Step::FlushList { adaptive } => {
                if adaptive {
                    self.last_pages = u64::from(report.np_flush);
                }
                let io_max = self.config.io_capacity_max();
                let floor = io_max.min(self.config.lru_scan_depth);
                self.lru_after_flush = Some(io_max.saturating_sub(report.np_flush).max(floor));
                Sleep::none()
            }
            Step::LruOnly | Step::LruAfterFlush => {
                self.last_pages += u64::from(report.np_lru);
                self.after_lru_pass(ctx.pool);
                self.wait(ctx)
            }
            Step::Unemployed => self.wait(ctx),
        }
    }

    fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        let margins = pool.redo().margins;
        // page_cleaner_wakeup() at commit wakes an idle cleaner once the
        // dirty share reaches the low-water mark (or the maximum, with none).
        let mark_pct = if self.config.max_dirty_pages_pct_lwm > 0 {
            self.config.max_dirty_pages_pct_lwm
        } else {
            self.config.max_dirty_pages_pct
        };
        let mark_pages = (u64::from(mark_pct) * u64::from(pool.frame_count())).div_ceil(100);
        WakeThresholds {
            dirty_pages: self.idle.then_some(mark_pages.saturating_sub(1) as u32),
            // buf_flush_ahead: a soft request wakes only an idle cleaner, a
            // furious one any.
            redo_age_bytes: Some(if self.idle {
                margins.max_modified_age_async_bytes
            } else {
                margins.max_checkpoint_age_bytes
            }),
            // buf_LRU_get_free_block: page_cleaner_wakeup(true) when a user
            // waits, and when a taken frame leaves |free| < scan depth / 2.
            on_sync_replacement: true,
            free_pages_below: Some(self.config.lru_scan_depth / 2),
            ..WakeThresholds::default()
        }
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let mut params = vec![
            ("p_scan", f64::from(self.config.lru_scan_depth)),
            ("p_io", f64::from(self.config.io_capacity)),
            ("io_capacity_max", f64::from(self.config.io_capacity_max())),
            (
                "max_dirty_pages_pct_lwm",
                f64::from(self.config.max_dirty_pages_pct_lwm),
            ),
            ("np_req_flush", f64::from(self.last_np_req_flush)),
            ("lsn_avg_rate", self.averages.lsn_avg_rate as f64),
            ("soft_target_set", f64::from(u8::from(self.async_lsn != Lsn::ZERO))),
            ("furious_target_set", f64::from(u8::from(self.sync_lsn != Lsn::ZERO))),
            ("idle", f64::from(u8::from(self.idle))),
        ];
        params.extend(self.config.free_page_path.parameters());
        params
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        Some(self.config.free_page_path.resolve(self.config.lru_scan_depth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome, FreeCheck, WriteOrder};
    use crate::cleaner::{CleanerAction, PageCleaner};
    use crate::decision_log::DecisionLog;
    use crate::free_page_path::SinglePageFlush;
    use crate::redo_space::RedoConfig;
    use crate::types::PageId;

    const MS: TimeUs = 1_000;

    fn pool(frames: u32) -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap()
    }

    /// A small-pool configuration: depth 100 (eviction below 50 free).
    fn small() -> Mariadb1011Config {
        Mariadb1011Config {
            lru_scan_depth: 100,
            ..Mariadb1011Config::default()
        }
    }

    /// Creates page `n` and, if `bytes > 0`, modifies it with that much redo.
    fn touch(pool: &mut BufferPool, n: u32, bytes: u64) {
        let f = match pool.fix(PageId::new(1, n), FixIntent::Create, 0, 0) {
            FixOutcome::Hit(f) | FixOutcome::Miss(f) => f,
            other => panic!("{other:?}"),
        };
        if bytes > 0 {
            let start = pool.current_lsn().advance(1);
            pool.note_modification(f, start, start.advance(bytes));
        }
        pool.unfix(f);
    }

    /// Runs `f` with a context at `now_us`; returns its result and the rules fired.
    fn at<T>(pool: &BufferPool, now_us: TimeUs, f: impl FnOnce(&mut PolicyCtx<'_>) -> T) -> (T, Vec<&'static str>) {
        let mut log = DecisionLog::new(64, true);
        let mut ctx = PolicyCtx {
            pool,
            now_us,
            cleaner: 0,
            policy_name: "mariadb1011",
            log: &mut log,
        };
        let out = f(&mut ctx);
        (out, log.drain().into_iter().map(|d| d.rule).collect())
    }

    /// `plan` and `plan_flush_list` at `now_us`.
    fn plan(
        policy: &mut Mariadb1011,
        pool: &BufferPool,
        now_us: TimeUs,
    ) -> (IterationPlan, FlushListPlan, Vec<&'static str>) {
        let ((plan, flush), rules) = at(pool, now_us, |ctx| (policy.plan(ctx), policy.plan_flush_list(ctx)));
        let Plan::Flush(plan) = plan else {
            panic!("mariadb1011 always runs an iteration")
        };
        (plan, flush, rules)
    }

    /// `end_iteration` at `now_us` for a report of these writes.
    fn end(
        policy: &mut Mariadb1011,
        pool: &BufferPool,
        now_us: TimeUs,
        np_lru: u32,
        np_flush: u32,
    ) -> (Sleep, Vec<&'static str>) {
        let report = IterationReport {
            np_lru,
            np_flush,
            ..IterationReport::default()
        };
        at(pool, now_us, |ctx| policy.end_iteration(ctx, &report))
    }

    fn complete(pool: &mut BufferPool, writes: &[WriteOrder]) {
        for w in writes {
            pool.complete_write(w.frame);
        }
    }

    #[test]
    fn mariadb_defaults_are_10_5s() {
        let config = Mariadb1011Config::default();
        assert_eq!(config.lru_scan_depth, 1536);
        assert_eq!((config.io_capacity, config.io_capacity_max()), (200, 2000));
        assert_eq!((config.max_dirty_pages_pct, config.max_dirty_pages_pct_lwm), (90, 0));
        assert_eq!(config.adaptive_flushing_lwm_pct, 10);
        assert!(config.adaptive_flushing && config.flush_sync);
        assert_eq!(config.free_page_path, FreePagePath::MARIADB_10_5);
        let policy = Mariadb1011::new(config);
        let rule = policy.free_page_rule().unwrap();
        assert_eq!(rule.single_page_flush, SinglePageFlush::WaitForCleaner);
        let params: std::collections::HashMap<_, _> = policy.parameters().into_iter().collect();
        assert_eq!(params["single_page_flush"], 0.0);
        assert_eq!(params["p_scan"], 1536.0);
    }

    #[test]
    fn mariadb_unemployed_cleaner_goes_idle_and_sleeps_until_woken() {
        let mut pool = pool(256);
        for n in 0..10 {
            touch(&mut pool, n, 100);
        }
        let mut policy = Mariadb1011::new(small());
        let (lru, flush, rules) = plan(&mut policy, &pool, 0);
        assert_eq!((lru.lru_scan_depth, flush), (0, FlushListPlan::NONE));
        assert!(rules.contains(&"unemployed_goes_idle"), "{rules:?}");
        assert!(policy.is_idle());
        let (sleep, rules) = end(&mut policy, &pool, 10 * MS, 0, 0);
        assert_eq!(sleep, Sleep::until_event(), "lwm 0: no timeout while idle");
        assert!(rules.contains(&"idle_sleep_until_woken"));
        // What may wake it: the dirty share reaching 90% of 256 (231 pages),
        // a soft request, a user wanting frames.
        let wake = policy.wake_thresholds(&pool);
        assert_eq!(wake.dirty_pages, Some(230));
        assert_eq!(
            wake.redo_age_bytes,
            Some(pool.redo().margins.max_modified_age_async_bytes)
        );
        assert!(wake.on_sync_replacement);
        assert_eq!(wake.free_pages_below, Some(50));
        // With a low-water mark, an idle cleaner keeps a timed wait.
        let mut lwm = Mariadb1011::new(Mariadb1011Config {
            max_dirty_pages_pct_lwm: 50,
            ..small()
        });
        plan(&mut lwm, &pool, 0);
        let (sleep, _) = end(&mut lwm, &pool, 10 * MS, 0, 0);
        assert_eq!(sleep.max_us, Some(990 * MS));
        assert_eq!(
            lwm.wake_thresholds(&pool).dirty_pages,
            Some(127),
            "50% of 256 pages, minus 1"
        );
    }

    #[test]
    fn mariadb_low_free_list_runs_an_lru_only_pass() {
        let mut pool = pool(256);
        for n in 0..220 {
            touch(&mut pool, n, 0);
        }
        assert_eq!(pool.free_len(), 36, "< 100 / 2");
        let mut cleaner = PageCleaner::new(
            Box::new(Mariadb1011::new(small())),
            &mut pool,
            DecisionLog::new(64, true),
        );
        // All clean: the pass evicts to the free target without a write;
        // a clean pool then leaves the cleaner idle until woken.
        let action = cleaner.poll(&mut pool, 0, 0);
        assert_eq!(pool.free_len(), 100, "evicted up to innodb_lru_scan_depth");
        assert_eq!(action, CleanerAction::Sleep(Sleep::until_event()));
        let rules: Vec<_> = cleaner.log().entries().map(|d| d.rule).collect();
        assert!(rules.contains(&"lru_eviction_needed"), "{rules:?}");
        assert_eq!(
            pool.counters().flush_list_pages,
            0,
            "no flush-list batch in this branch"
        );
        // The plan itself: io_capacity_max writes, free target the depth.
        let mut policy = Mariadb1011::new(small());
        let mut low = self::pool(256);
        for n in 0..220 {
            touch(&mut low, n, 10);
        }
        let (lru, flush, _) = plan(&mut policy, &low, 0);
        assert_eq!((lru.lru_scan_depth, lru.lru_chunk_pages), (100, 2000));
        assert_eq!(flush, FlushListPlan::NONE);
        let (sleep, _) = end(&mut policy, &low, MS, 0, 0);
        assert_eq!(sleep, Sleep::none(), "still short of frames: no sleep");
    }

    #[test]
    fn mariadb_recommendation_below_the_lwm_is_sized_from_the_dirty_count() {
        let mut pool = pool(256);
        for n in 0..10 {
            touch(&mut pool, n, 100);
        }
        let mut policy = Mariadb1011::new(small());
        // io_capacity >= dirty: the dirty count.
        let rec = policy.recommend(&pool, 0, 0.0);
        assert_eq!((rec.pages, rec.below_lwm), (10, true));
        // 240 dirty > io 200: 93.75% / 90 x 200 = 208 < 240 dirty: io.
        for n in 10..240 {
            touch(&mut pool, n, 100);
        }
        assert_eq!(policy.recommend(&pool, 0, 0.0).pages, 200);
        // Otherwise min(io_capacity_max, dirty): 201 of 210 frames dirty.
        let mut tight = self::pool(210);
        for n in 0..201 {
            touch(&mut tight, n, 100);
        }
        let mut policy = Mariadb1011::new(Mariadb1011Config {
            io_capacity_max: Some(205),
            ..small()
        });
        // 201 / 210 = 95.7% / 90 x 200 = 212 >= 201: min(io_max 205, 201).
        assert_eq!(policy.recommend(&tight, 0, 0.0).pages, 201);
    }

    #[test]
    fn mariadb_adaptive_flush_then_lru_pass_then_rest_of_the_second() {
        let mut pool = pool(256);
        for n in 0..10 {
            touch(&mut pool, n, 100);
        }
        let lwm = pool.redo().margins.group_capacity_bytes / 10;
        pool.note_redo(pool.oldest_modification().advance(lwm + 1000));
        let mut policy = Mariadb1011::new(small());
        // First call: below-lwm sizing (no previous LSN): the 10 dirty pages.
        let (lru, flush, rules) = plan(&mut policy, &pool, 0);
        assert_eq!(lru.lru_scan_depth, 0, "the flush list comes first");
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 10,
                lsn_limit: Lsn::MAX
            }
        );
        assert!(rules.contains(&"adaptive_flushing"), "{rules:?}");
        let (sleep, _) = end(&mut policy, &pool, 100 * MS, 0, 10);
        assert_eq!(sleep, Sleep::none(), "the LRU pass follows at once");
        // The second half: max(2000 - 10, min(2000, 100)) = 1990 writes.
        let (lru, flush, rules) = plan(&mut policy, &pool, 100 * MS);
        assert_eq!((lru.lru_scan_depth, lru.lru_chunk_pages), (100, 1990));
        assert_eq!(flush, FlushListPlan::NONE);
        assert!(rules.contains(&"lru_pass_after_flush_list"));
        let (sleep, _) = end(&mut policy, &pool, 150 * MS, 4, 0);
        assert_eq!(sleep.max_us, Some(850 * MS), "1 s from the end of the last sleep");
        assert!(sleep.wake_on_event);
        // Next pass: the averaged formula with ratio 1 (lwm 0):
        // (200 x 1 + avg_page_rate 0 + pages_for_lsn 1) / 3 = 67; the LRU
        // writes (4) joined last_pages (10 + 4).
        pool.note_redo(pool.current_lsn().advance(5000));
        let (_, flush, _) = plan(&mut policy, &pool, SECOND_US);
        assert_eq!(flush.pages, 67);
        assert_eq!(policy.averages.sum_pages, 14);
    }

    #[test]
    fn mariadb_soft_target_flushes_io_capacity_max_until_reached() {
        let mut pool = pool(256);
        for n in 0..20 {
            touch(&mut pool, n, 100);
        }
        let async_bytes = pool.redo().margins.max_modified_age_async_bytes;
        pool.note_redo(Lsn(1).advance(async_bytes + 1));
        let target = pool.current_lsn();
        let mut cleaner = PageCleaner::new(
            Box::new(Mariadb1011::new(small())),
            &mut pool,
            DecisionLog::new(64, true),
        );
        let CleanerAction::Write { writes, .. } = cleaner.poll(&mut pool, 0, 0) else {
            panic!("the soft target must flush")
        };
        assert_eq!(writes.len(), 20, "io_capacity_max pages below the target: all 20");
        complete(&mut pool, &writes);
        let rules: Vec<_> = cleaner.log().entries().map(|d| d.rule).collect();
        assert!(
            rules.contains(&"soft_target_raised") && rules.contains(&"soft_flush"),
            "{rules:?}"
        );
        // A checkpoint and a new page later, the oldest modification is
        // past the target.
        pool.note_checkpoint(pool.checkpoint_candidate(), 10 * MS);
        touch(&mut pool, 100, 100);
        assert!(pool.oldest_modification() >= target);
        let mut policy = Mariadb1011::new(small());
        policy.async_lsn = target;
        let (_, flush, rules) = plan(&mut policy, &pool, 20 * MS);
        assert!(rules.contains(&"soft_target_reached"), "{rules:?}");
        assert_eq!(policy.soft_target(), None);
        assert_ne!(flush.lsn_limit, target);
    }

    #[test]
    fn mariadb_furious_target_flushes_without_sleeping_until_reached() {
        let mut pool = pool(256);
        for n in 0..220 {
            touch(&mut pool, n, 100);
        }
        let max_age = pool.redo().margins.max_checkpoint_age_bytes;
        pool.note_redo(Lsn(1).advance(max_age + 1));
        let target = pool.current_lsn();
        let mut policy = Mariadb1011::new(small());
        let (lru, flush, rules) = plan(&mut policy, &pool, 0);
        assert!(
            rules.contains(&"furious_target_raised") && rules.contains(&"furious_flush"),
            "{rules:?}"
        );
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 2000,
                lsn_limit: target
            }
        );
        // 36 free < 50: an LRU pass of innodb_io_capacity comes first.
        assert_eq!((lru.lru_scan_depth, lru.lru_chunk_pages), (100, 200));
        let (sleep, _) = end(&mut policy, &pool, 50 * MS, 0, 0);
        assert_eq!(sleep, Sleep::none(), "target not reached: furious again");
        assert_eq!(policy.furious_target(), Some(target));
        assert_eq!(
            policy.wake_thresholds(&pool).redo_age_bytes,
            Some(max_age),
            "a furious request wakes even a timed wait"
        );
        // innodb_flush_sync = OFF: the same target is flushed as a soft one.
        let mut off = Mariadb1011::new(Mariadb1011Config {
            flush_sync: false,
            ..small()
        });
        let (lru, flush, rules) = plan(&mut off, &pool, 0);
        assert!(rules.contains(&"soft_flush"), "{rules:?}");
        assert_eq!(lru.lru_scan_depth, 0);
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 2000,
                lsn_limit: target
            }
        );
    }

    #[test]
    fn mariadb_pct_for_lsn_is_the_5_6_curve_without_its_guard() {
        use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig};
        let pool = pool(64);
        let policy = Mariadb1011::new(small());
        let five_six = AdaptiveFlushing::new(AdaptiveFlushingConfig::default());
        let async_bytes = pool.redo().margins.max_modified_age_async_bytes;
        let lwm = policy.af_lwm_bytes(&pool);
        assert_eq!(
            policy.pct_for_lsn(&pool, lwm - 1),
            0,
            "below innodb_adaptive_flushing_lwm"
        );
        for f in 15..=200u64 {
            let age = (f * async_bytes).div_ceil(100);
            assert_eq!(
                policy.pct_for_lsn(&pool, age),
                five_six.pct_for_lsn(&pool, age, 200, 2000),
                "f={f}"
            );
        }
        // MariaDB's af_get_pct_for_lsn has no innodb_adaptive_flushing test.
        let off = AdaptiveFlushing::new(AdaptiveFlushingConfig {
            adaptive_flushing: false,
            ..AdaptiveFlushingConfig::default()
        });
        let age = (50 * async_bytes).div_ceil(100);
        assert_eq!(off.pct_for_lsn(&pool, age, 200, 2000), 0);
        assert_eq!(policy.pct_for_lsn(&pool, age), 471);
    }

    /// The free-page rule in the pool: a user that finds no clean victim
    /// never writes; it wakes the cleaner and waits for the LRU pass.
    #[test]
    fn mariadb_users_wait_for_the_cleaner_instead_of_writing() {
        let mut pool = pool(64);
        for n in 0..64 {
            touch(&mut pool, n, 100);
        }
        assert_eq!((pool.free_len(), pool.dirty_pages()), (0, 64));
        let mut cleaner = PageCleaner::new(
            Box::new(Mariadb1011::new(small())),
            &mut pool,
            DecisionLog::new(64, true),
        );
        pool.take_wake();
        let scanned_before = pool.counters().clean_victim_scanned;
        assert_eq!(pool.fix(PageId::new(2, 0), FixIntent::Read, 0, 0), FixOutcome::NoFrame);
        assert_eq!(pool.counters().wait_free, 1);
        assert_eq!(pool.counters().sync_replacement_writes, 0, "no single-page flush");
        assert!(pool.take_wake(), "the user woke the page cleaner");
        assert!(
            pool.counters().clean_victim_scanned > scanned_before,
            "the 100-page scan came first"
        );
        // Waiting: only the free list, no scan, one wait counted per request.
        let scanned = pool.counters().clean_victim_scanned;
        assert_eq!(pool.fix(PageId::new(2, 0), FixIntent::Read, 1, MS), FixOutcome::NoFrame);
        assert_eq!(pool.counters().clean_victim_scanned, scanned);
        assert_eq!(pool.counters().wait_free, 1);
        assert!(pool.take_wake());
        // The cleaner's LRU pass writes the tail; completions free frames.
        let CleanerAction::Write { writes, .. } = cleaner.poll(&mut pool, 0, 2 * MS) else {
            panic!("the LRU pass must write")
        };
        assert!(writes.iter().all(|w| w.kind == crate::buffer_pool::WriteKind::LruBatch));
        complete(&mut pool, &writes);
        assert!(pool.free_len() > 0);
        assert!(matches!(
            pool.fix(PageId::new(2, 0), FixIntent::Read, 2, 3 * MS),
            FixOutcome::Miss(_)
        ));
        assert_eq!(pool.counters().sync_replacement_writes, 0);
        pool.check_invariants();
    }

    /// Fixes `page`, dirties it with `bytes` of redo and unfixes it, as the
    /// test shell's user; false when it has to wait (no frame, or redo).
    fn try_dirty(pool: &mut BufferPool, page: PageId, bytes: u64, attempt: &mut u32, now_us: TimeUs) -> bool {
        match pool.redo_free_check() {
            FreeCheck::Proceed => {}
            FreeCheck::WaitForFlush => return false,
            FreeCheck::SyncFlush(writes) => complete(pool, &writes),
        }
        let frame = match pool.fix(page, FixIntent::Read, *attempt, now_us) {
            FixOutcome::Hit(frame) => frame,
            FixOutcome::Miss(frame) => {
                pool.complete_read(frame);
                frame
            }
            FixOutcome::NoFrame => {
                *attempt += 1;
                return false;
            }
            other => panic!("a mariadb1011 user never gets {other:?}"),
        };
        *attempt = 0;
        let start = pool.current_lsn();
        pool.note_modification(frame, start, start.advance(bytes));
        pool.unfix(frame);
        true
    }

    /// A deterministic shell: a user dirties pages of a working set three
    /// times the pool every millisecond, checkpoints every second, cleaner
    /// batches complete 30 ms after they are issued, wakes are delivered.
    #[test]
    fn mariadb_full_loop_keeps_invariants_and_users_never_write() {
        const FRAMES: u32 = 512;
        const PAGES: u64 = 1500;
        const WRITE_BATCH_US: TimeUs = 30 * MS;
        const STEPS_MS: u64 = 20_000;
        let config = BufferPoolConfig {
            redo: RedoConfig {
                capacity_bytes: 8 << 20,
                thread_concurrency: 16,
            },
            ..BufferPoolConfig::small(FRAMES)
        };
        let mut pool = BufferPool::new(config, Lsn(1)).unwrap();
        let policy = Box::new(Mariadb1011::new(small()));
        let mut cleaner = PageCleaner::new(policy, &mut pool, DecisionLog::new(100_000, true));
        let mut rng: u64 = 0x5eed;
        let mut in_flight: Vec<WriteOrder> = Vec::new();
        let mut cleaner_ready_us = 0;
        let mut sleeping_until_event = false;
        let mut attempt = 0;
        let mut waits = 0u64;
        for step in 0..STEPS_MS {
            let now = step * MS;
            for _ in 0..5 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let page_no = ((rng >> 33) % PAGES) as u32;
                if !try_dirty(&mut pool, PageId::new(1, page_no), 200, &mut attempt, now) {
                    waits += 1;
                    break;
                }
            }
            if pool.checkpoint_due(now).is_some() {
                pool.note_checkpoint(pool.checkpoint_candidate(), now);
            }
            if pool.take_wake() && sleeping_until_event && in_flight.is_empty() {
                cleaner_ready_us = now;
            }
            if now >= cleaner_ready_us {
                complete(&mut pool, &in_flight);
                in_flight.clear();
                match cleaner.poll(&mut pool, 0, now) {
                    CleanerAction::Write { writes, .. } => {
                        in_flight = writes;
                        sleeping_until_event = false;
                        cleaner_ready_us = now + WRITE_BATCH_US;
                    }
                    CleanerAction::Sleep(sleep) => {
                        sleeping_until_event = sleep.wake_on_event;
                        cleaner_ready_us = match sleep.max_us {
                            Some(us) => now + us.max(MS),
                            None => u64::MAX,
                        };
                    }
                }
            }
            pool.check_invariants();
        }
        let counters = pool.counters();
        assert_eq!(
            counters.sync_replacement_writes, 0,
            "users never write a page for a frame"
        );
        assert!(
            counters.lru_batch_flush_pages > 0 && counters.flush_list_pages > 0,
            "{counters:?}"
        );
        assert!(waits < STEPS_MS / 2, "the user waited in {waits} of {STEPS_MS} ms");
        assert!(cleaner.iterations() >= 20, "iterations {}", cleaner.iterations());
        let logged: Vec<_> = cleaner.log().entries().map(|d| d.rule).collect();
        assert!(
            logged.contains(&"lru_eviction_needed"),
            "{:?}",
            &logged[..logged.len().min(20)]
        );
        assert!(
            logged.contains(&"adaptive_flushing") || logged.contains(&"soft_flush"),
            "{:?}",
            &logged[..logged.len().min(20)]
        );
    }
}
