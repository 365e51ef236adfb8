//! `mysql80`: MySQL 8.0's page cleaner (coordinator loop, adaptive flushing,
//! `innodb_flush_sync`, the LRU batch) over 8.0's users' free-page path.
//!
//! What one iteration does (`buf0flu.cc` `buf_flush_page_coordinator_thread`,
//! read in 8.0.27, one pool instance so one slot):
//!
//! 1. **Timed or woken.** The loop aims at 1 s: it sleeps until
//!    `next_loop_time` (`pc_sleep_if_needed`) unless woken by `buf_flush_event`
//!    (a user whose free-block search failed, `buf0lru.cc`
//!    `buf_LRU_get_free_block`; the log checkpointer asking for a sync flush).
//!    Past `next_loop_time` the period restarts (`next_loop_time = now + 1 s`)
//!    and the server's activity over the period is sampled
//!    (`was_server_active = srv_check_activity(last_activity)`).
//! 2. **Sync flush** (`innodb_flush_sync` = ON, its default): once the redo
//!    age passes the sync point (`log0chkp.cc` `log_sync_flush_lsn`: the
//!    age beyond `max_modified_age_sync`), every pass flushes towards that
//!    target plus `lsn_avg_rate x 3` (`buf_flush_lsn_scan_factor`), asks
//!    [`AdaptiveFlushing::recommend_80`] for at least `innodb_io_capacity`
//!    and up to `2 x innodb_io_capacity_max` pages (ignoring the usual cap),
//!    and does not sleep between passes.
//! 3. **Active server** (active now or in the last period): the LRU batch,
//!    then, on a timed pass, the flush-list batch of
//!    `Adaptive_flush::page_recommendation` (no LSN limit); on a woken pass
//!    the LRU batch only (`pc_request(0, 0)`).
//! 4. **Idle server**, timed pass: `PCT_IO(innodb_idle_flush_pct)` (100, so
//!    `innodb_io_capacity` pages) from the flush list with no LSN limit and
//!    no LRU batch (`buf_flush_lists`).
//! 5. Sleep until `next_loop_time`; while idle, after flushing something and
//!    with no read pending, the sleep is not cut short by events.
//!
//! The LRU batch (`buf_flush_LRU_list` -> `buf_flush_LRU_list_batch`) is one
//! batch per pass, not 5.6's chunks of 100: depth `min(innodb_lru_scan_depth,
//! |LRU|)`, evicting clean pages and writing dirty ones from the tail until
//! the free list holds `innodb_lru_scan_depth` pages or the LRU is down to
//! `BUF_LRU_MIN_LEN`; written pages are freed when their write completes
//! (`buf0buf.cc` `buf_page_io_complete`: `BUF_FLUSH_LRU` always evicts).
//!
//! Users follow 8.0's free-page path ([`FreePagePath::MYSQL_8_0`]): a 100-page
//! clean-victim scan (`BUF_LRU_SEARCH_SCAN_THRESHOLD`), then a synchronous
//! single-page flush with an fsync of its tablespace
//! (`buf_flush_single_page_from_LRU`, `Double_write::sync_page_flush`); each
//! failed search wakes the cleaner (`os_event_set(buf_flush_event)`), which
//! [`WakeThresholds::on_sync_replacement`] stands for.
//!
//! Defaults (8.0.27 `ha_innodb.cc` system variables; `srv0srv.cc`):
//! `innodb_lru_scan_depth` 1024, `innodb_io_capacity` 200,
//! `innodb_io_capacity_max` = max(2 x io_capacity, 2000) when unset
//! (`innodb_init_params`), `innodb_max_dirty_pages_pct` 90,
//! `innodb_max_dirty_pages_pct_lwm` 10 (WL#9630), `innodb_adaptive_flushing_lwm`
//! 10, `innodb_flushing_avg_loops` 30, `innodb_flush_sync` ON,
//! `innodb_idle_flush_pct` 100.
//!
//! # Deviations (what the core cannot say, or says differently)
//! - Redo margins are the core's 5.6-style ones ([`crate::redo_space`]); 8.0.27
//!   takes the same 8/16/32 ratios of its free-check capacity
//!   (`log_calc_max_ages`). The sync point is `age > max_modified_age_sync`
//!   (8.0 adds the free-check margin to the age); the target ignores a
//!   requested checkpoint LSN and the flush-order lag.
//! - The core's LRU chunk counts written pages against its budget and evicts
//!   until `|free|` reaches the depth; 8.0 counts evicted pages too
//!   (`count + evict_count < max`). One chunk of up to Pscan writes stands
//!   for the batch, waited for as a whole (8.0 posts the writes and waits
//!   only for the doublewrite copy).
//! - Writers past the sync margin still follow the core's 5.7 preflush
//!   ([`crate::free_page_path::PreflushAdvance::Excess`]); 8.0's
//!   `log_free_check` waits for the checkpointer instead. The cleaner is
//!   woken at the same margin, so writers mostly find its writes in flight.
//! - Activity is the pool's request count (8.0 counts `srv_inc_activity_count`
//!   calls); the averaging clock is the shell's time.
//!
//! Invariants: outside a sync flush the flush-list request never exceeds
//! `io_capacity_max + 1` pages (the `+ 1` is the slot's); a sync flush never
//! sleeps; the LRU batch runs on every active pass, never on an idle one.

use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig, AdaptiveGeneration, LSN_SCAN_FACTOR};
use crate::buffer_pool::{BufferPool, WakeThresholds};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{Lsn, TimeUs, SECOND_US};

/// `mysql80`'s own parameters (8.0.27 defaults, module docs).
pub const PARAMS: &[ParamDecl] = &[
    ParamDecl::int(
        "lru_scan_depth",
        1024,
        100,
        u32::MAX as u64,
        "innodb_lru_scan_depth: LRU batch depth and free-list target (8.0 default 1024)",
    ),
    ParamDecl::int(
        "io_capacity",
        200,
        100,
        u32::MAX as u64,
        "innodb_io_capacity: pages per second for background flushing (8.0 default 200)",
    ),
    ParamDecl::int(
        "io_capacity_max",
        0,
        0,
        u32::MAX as u64,
        "innodb_io_capacity_max; 0 = max(2000, 2 x io_capacity) as in 8.0",
    ),
    ParamDecl::int(
        "max_dirty_pages_pct",
        90,
        1,
        99,
        "innodb_max_dirty_pages_pct (8.0 default 90)",
    ),
    ParamDecl::int(
        "max_dirty_pages_pct_lwm",
        10,
        0,
        99,
        "innodb_max_dirty_pages_pct_lwm: dirty share where flushing starts (8.0 default 10, WL#9630)",
    ),
    ParamDecl::int(
        "adaptive_flushing_lwm",
        10,
        0,
        70,
        "innodb_adaptive_flushing_lwm: % of the log capacity below which pct_for_lsn is 0",
    ),
    ParamDecl::int(
        "flushing_avg_loops",
        30,
        1,
        1000,
        "innodb_flushing_avg_loops: calls or seconds between refreshes of the averages",
    ),
    ParamDecl::choice(
        "flush_sync",
        "on",
        &[
            (
                "on",
                "past the sync point flush to the target, ignoring io_capacity_max",
            ),
            ("off", "no sync flush by the cleaner"),
        ],
        "innodb_flush_sync (8.0 default ON)",
    ),
    ParamDecl::int(
        "idle_flush_pct",
        100,
        0,
        100,
        "innodb_idle_flush_pct: % of io_capacity flushed per second while idle",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "mysql80",
    about: "MySQL 8.0's page cleaner: 8.0 adaptive flushing, innodb_flush_sync, one LRU batch per pass",
    params: &[PARAMS, crate::free_page_path::PARAMS_MYSQL_8_0],
    build: |p| Box::new(Mysql80::new(Mysql80Config::from_params(p))),
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mysql80Config {
    /// `innodb_lru_scan_depth`.
    pub lru_scan_depth: u32,
    /// `innodb_io_capacity`.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`; `None` = max(2000, 2 x io_capacity).
    pub io_capacity_max: Option<u32>,
    /// `innodb_flush_sync`.
    pub flush_sync: bool,
    /// `innodb_idle_flush_pct`.
    pub idle_flush_pct: u32,
    /// The users' free-page path (8.0's by default).
    pub free_page_path: FreePagePath,
    pub adaptive: AdaptiveFlushingConfig,
}

impl Default for Mysql80Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Mysql80Config {
    pub fn from_params(p: &ParamSet) -> Self {
        let max_dirty_pages_pct = p.u64("max_dirty_pages_pct");
        Self {
            lru_scan_depth: p.u32("lru_scan_depth"),
            io_capacity: p.u32("io_capacity"),
            io_capacity_max: Some(p.u32("io_capacity_max")).filter(|&v| v > 0),
            flush_sync: p.name("flush_sync") == "on",
            idle_flush_pct: p.u32("idle_flush_pct"),
            free_page_path: FreePagePath::from_params(p),
            adaptive: AdaptiveFlushingConfig {
                max_dirty_pages_pct,
                // innodb_max_dirty_pages_pct_lwm_update: a mark above the
                // maximum is set to the maximum.
                max_dirty_pages_pct_lwm: p.u64("max_dirty_pages_pct_lwm").min(max_dirty_pages_pct),
                adaptive_flushing_lwm_pct: p.u64("adaptive_flushing_lwm"),
                flushing_avg_loops: p.u32("flushing_avg_loops"),
                generation: AdaptiveGeneration::Mysql80,
                ..AdaptiveFlushingConfig::default()
            },
        }
    }

    /// `innodb_io_capacity_max` in force (`innodb_init_params`: unset gives
    /// max(2 x io_capacity, 2000); never below `innodb_io_capacity`).
    pub fn io_capacity_max(&self) -> u32 {
        self.io_capacity_max
            .unwrap_or((2 * self.io_capacity).max(2000))
            .max(self.io_capacity)
    }
}

/// What the current pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// LRU batch, and a flush-list batch when `flush_list` asks for pages.
    Active,
    /// `buf_flush_lists(PCT_IO(idle_flush_pct), LSN_MAX)`, no LRU batch.
    Idle,
    /// Woken while idle: nothing (`n_flushed = 0`).
    Nothing,
}

pub struct Mysql80 {
    config: Mysql80Config,
    adaptive: AdaptiveFlushing,
    /// `next_loop_time`.
    next_loop_us: TimeUs,
    /// `last_activity`: the request count at the last period's start.
    last_activity: u64,
    /// `was_server_active`.
    was_server_active: bool,
    /// `is_server_active` as computed before the sleep that ended this pass.
    server_active: bool,
    is_sync_flush: bool,
    /// `last_pages`: the last requested flush-list batch's writes.
    last_pages: u32,
    /// `n_flushed`: what the last pass wrote.
    n_flushed: u32,
    pass: Pass,
    flush_list: FlushListPlan,
    last_np_req_flush: u32,
}

impl Mysql80 {
    pub fn new(config: Mysql80Config) -> Self {
        Self {
            adaptive: AdaptiveFlushing::new(config.adaptive),
            config,
            next_loop_us: SECOND_US,
            last_activity: 0,
            was_server_active: true,
            server_active: true,
            is_sync_flush: false,
            last_pages: 0,
            n_flushed: 0,
            pass: Pass::Nothing,
            flush_list: FlushListPlan::NONE,
            last_np_req_flush: 0,
        }
    }

    pub fn config(&self) -> &Mysql80Config {
        &self.config
    }

    /// `log_sync_flush_lsn` in the core's redo model: the LSN the oldest
    /// modification must pass for the age to fall back to the sync point.
    pub fn sync_flush_lsn(pool: &BufferPool) -> Option<Lsn> {
        let sync_bytes = pool.redo().margins.max_modified_age_sync_bytes;
        let age = pool.redo_age_bytes();
        (pool.dirty_pages() > 0 && age > sync_bytes).then(|| pool.oldest_modification().advance(age - sync_bytes))
    }

    /// The LRU batch of an active pass: one chunk as deep as Pscan.
    fn lru_batch(&self) -> IterationPlan {
        let depth = self.config.lru_scan_depth;
        IterationPlan {
            lru_chunk_pages: depth,
            lru_dirty_grace: None,
            ..IterationPlan::innodb(depth)
        }
    }
}

impl FlushPolicy for Mysql80 {
    fn name(&self) -> &'static str {
        "mysql80"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let now = ctx.now_us;
        let requests = ctx.pool.counters().requests;
        let timed_out = now >= self.next_loop_us;
        if timed_out {
            self.next_loop_us = now + SECOND_US;
            self.was_server_active = requests != self.last_activity;
            self.last_activity = requests;
        }
        let io = self.config.io_capacity;
        let io_max = self.config.io_capacity_max();
        let sync_target = if self.config.flush_sync {
            Self::sync_flush_lsn(ctx.pool)
        } else {
            None
        };
        self.is_sync_flush = sync_target.is_some();
        self.flush_list = FlushListPlan::NONE;
        if let Some(target) = sync_target {
            let limit = target.advance(self.adaptive.lsn_avg_rate().saturating_mul(LSN_SCAN_FACTOR));
            let rec = self
                .adaptive
                .recommend_80(ctx.pool, io, io_max, now, self.last_pages, Some(limit));
            self.last_pages = 0;
            let age = ctx.pool.redo_age_bytes();
            match rec {
                None => ctx.decide("sync_flush", || {
                    format!(
                        "redo age {age} B past max_modified_age_sync: first pass initializes the averages, \
                         LRU batch only, no sleep"
                    )
                }),
                Some(rec) => {
                    self.last_np_req_flush = rec.pages;
                    self.flush_list = FlushListPlan {
                        pages: rec.slot_request,
                        lsn_limit: limit,
                    };
                    ctx.decide("sync_flush", || {
                        format!(
                            "redo age {age} B past max_modified_age_sync: flush {} pages (n={}, pages_for_lsn={}) \
                             below LSN {} (io_capacity_max {io_max} ignored), no sleep",
                            rec.slot_request, rec.pages, rec.pages_for_lsn, limit.0
                        )
                    });
                }
            }
            self.pass = Pass::Active;
            return Plan::Flush(self.lru_batch());
        }
        if self.server_active {
            if timed_out {
                let rec = self
                    .adaptive
                    .recommend_80(ctx.pool, io, io_max, now, self.last_pages, None);
                self.last_pages = 0;
                match rec {
                    None => ctx.decide("adaptive_flushing_initialized", || {
                        "first pass: averages start now, no flush-list batch".to_string()
                    }),
                    Some(rec) => {
                        self.last_np_req_flush = rec.pages;
                        self.flush_list = FlushListPlan {
                            pages: rec.slot_request,
                            lsn_limit: Lsn::MAX,
                        };
                        let avg = self.adaptive.avg_page_rate();
                        ctx.decide("adaptive_flushing", || {
                            format!(
                                "n={} (slot request {}; pct_for_dirty={} pct_for_lsn={} pages_for_lsn={} \
                                 page_avg_rate={avg} age={} B{})",
                                rec.pages,
                                rec.slot_request,
                                rec.pct_for_dirty,
                                rec.pct_for_lsn,
                                rec.pages_for_lsn,
                                rec.age_bytes,
                                if rec.lsn_skipped {
                                    ", no redo since the last average"
                                } else {
                                    ""
                                }
                            )
                        });
                    }
                }
            } else {
                ctx.decide("woken_lru_batch_only", || {
                    format!(
                        "woken {} us before the period ends: LRU batch only",
                        self.next_loop_us - now
                    )
                });
            }
            let (depth, lru_len) = (self.config.lru_scan_depth, ctx.pool.lru_len());
            ctx.decide("lru_batch", || {
                format!("one LRU batch: depth min({depth}, |LRU|={lru_len}), free target {depth}")
            });
            self.pass = Pass::Active;
            return Plan::Flush(self.lru_batch());
        }
        if timed_out && self.config.idle_flush_pct > 0 {
            let pages = (f64::from(io) * (f64::from(self.config.idle_flush_pct) / 100.0)) as u32;
            self.flush_list = FlushListPlan {
                pages,
                lsn_limit: Lsn::MAX,
            };
            ctx.decide("idle_flush", || {
                format!(
                    "no activity in the last period: PCT_IO({}) = {pages} pages, no LSN limit, no LRU batch",
                    self.config.idle_flush_pct
                )
            });
            self.pass = Pass::Idle;
        } else {
            self.pass = Pass::Nothing;
        }
        Plan::Flush(IterationPlan::innodb(0))
    }

    fn plan_flush_list(&mut self, _ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        // Decided in `plan`: 8.0 computes the request before the slots run
        // their LRU batch (`page_recommendation`, then `pc_request`).
        self.flush_list
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        if self.pass == Pass::Active && self.flush_list.pages > 0 {
            self.last_pages = report.np_flush;
        }
        self.n_flushed = report.np_lru + report.np_flush;
        // The top of the next loop: is_server_active, then the sleep.
        let requests = ctx.pool.counters().requests;
        self.server_active = self.was_server_active || requests != self.last_activity;
        if self.is_sync_flush {
            return Sleep::none();
        }
        let sleep_us = self.next_loop_us.saturating_sub(ctx.now_us);
        let wakeable = self.server_active || ctx.pool.pending_reads() > 0 || self.n_flushed == 0;
        if !wakeable {
            let flushed = self.n_flushed;
            ctx.decide("idle_sleep_not_woken", || {
                format!("idle and flushed {flushed} pages: sleep {sleep_us} us, not cut short by events")
            });
        }
        Sleep {
            max_us: Some(sleep_us),
            wake_on_event: wakeable,
            wake_on_write_completion: false,
        }
    }

    fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        WakeThresholds {
            // log_checkpointer -> log_request_sync_flush sets buf_flush_event.
            redo_age_bytes: self
                .config
                .flush_sync
                .then_some(pool.redo().margins.max_modified_age_sync_bytes),
            // buf_LRU_get_free_block sets buf_flush_event on a failed search.
            on_sync_replacement: true,
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
                self.config.adaptive.max_dirty_pages_pct_lwm as f64,
            ),
            ("np_req_flush", f64::from(self.last_np_req_flush)),
            ("lsn_avg_rate", self.adaptive.lsn_avg_rate() as f64),
            ("sync_flush", f64::from(u8::from(self.is_sync_flush))),
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
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome};
    use crate::decision_log::DecisionLog;
    use crate::types::PageId;

    fn pool(frames: u32) -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap()
    }

    /// Fixes page `n`, modifies it with `bytes` of redo and unfixes it.
    fn dirty(pool: &mut BufferPool, n: u32, bytes: u64) {
        let f = match pool.fix(PageId::new(1, n), FixIntent::Create, 0, 0) {
            FixOutcome::Hit(f) | FixOutcome::Miss(f) => f,
            other => panic!("{other:?}"),
        };
        let start = pool.current_lsn().advance(1);
        pool.note_modification(f, start, start.advance(bytes));
        pool.unfix(f);
    }

    /// Runs `f` with a context at `now_us`; returns its result and the rules fired.
    fn at<T>(pool: &BufferPool, now_us: TimeUs, f: impl FnOnce(&mut PolicyCtx<'_>) -> T) -> (T, Vec<&'static str>) {
        let mut log = DecisionLog::new(64, true);
        let mut ctx = PolicyCtx {
            pool,
            now_us,
            cleaner: 0,
            policy_name: "mysql80",
            log: &mut log,
        };
        let out = f(&mut ctx);
        (out, log.drain().into_iter().map(|d| d.rule).collect())
    }

    /// One whole pass at `now_us` with a hand-made report of `np_flush` pages.
    fn pass(policy: &mut Mysql80, pool: &BufferPool, now_us: TimeUs, np_flush: u32) -> (Plan, FlushListPlan, Sleep) {
        let (plan, _) = at(pool, now_us, |ctx| policy.plan(ctx));
        let (flush, _) = at(pool, now_us, |ctx| policy.plan_flush_list(ctx));
        let report = IterationReport {
            np_flush,
            ..IterationReport::default()
        };
        let (sleep, _) = at(pool, now_us, |ctx| policy.end_iteration(ctx, &report));
        (plan, flush, sleep)
    }

    #[test]
    fn mysql80_defaults_are_8_0s() {
        let config = Mysql80Config::default();
        assert_eq!((config.lru_scan_depth, config.io_capacity), (1024, 200));
        assert_eq!(config.io_capacity_max(), 2000);
        assert_eq!(config.adaptive.max_dirty_pages_pct_lwm, 10, "WL#9630");
        assert_eq!(config.adaptive.max_dirty_pages_pct, 90);
        assert_eq!(config.adaptive.adaptive_flushing_lwm_pct, 10);
        assert_eq!(config.adaptive.flushing_avg_loops, 30);
        assert_eq!(config.adaptive.generation, AdaptiveGeneration::Mysql80);
        assert!(config.flush_sync);
        assert_eq!(config.idle_flush_pct, 100);
        assert_eq!(config.free_page_path, FreePagePath::MYSQL_8_0);
        let rule = Mysql80::new(config).free_page_rule().unwrap();
        assert_eq!(
            rule.user_scan_depth,
            FreePagePath::MYSQL_5_7.resolve(1024).user_scan_depth
        );
        let wide =
            crate::policy::build("mysql80:io_capacity=1500,max_dirty_pages_pct=50,max_dirty_pages_pct_lwm=70").unwrap();
        let params: std::collections::HashMap<_, _> = wide.parameters().into_iter().collect();
        assert_eq!(params["io_capacity_max"], 3000.0, "2 x io_capacity");
        assert_eq!(
            params["max_dirty_pages_pct_lwm"], 50.0,
            "a mark above the maximum is the maximum"
        );
    }

    #[test]
    fn mysql80_timed_pass_runs_one_lru_batch_then_the_adaptive_request() {
        let mut pool = pool(256);
        for n in 0..200 {
            dirty(&mut pool, n, 100);
        }
        let mut policy = Mysql80::new(Mysql80Config::default());
        // t = 1 s: the period ends; the first recommendation only initializes.
        let (plan, flush, _) = pass(&mut policy, &pool, SECOND_US, 0);
        let Plan::Flush(lru) = plan else {
            panic!("an active pass flushes")
        };
        assert_eq!(
            (lru.lru_scan_depth, lru.lru_chunk_pages),
            (1024, 1024),
            "one batch, not chunks of 100"
        );
        assert_eq!(flush, FlushListPlan::NONE);
        // t = 2 s, after more redo: 200 of 256 dirty = 77.8% >= lwm 10
        // -> pct_for_dirty = 77.8 x 100 / 91 = 85; pages_for_lsn 1:
        // n = (PCT_IO(85) = 170 + 0 + 1) / 3 = 57, slot request n + 1.
        pool.note_redo(pool.current_lsn().advance(10_000));
        let (_, rules) = at(&pool, 2 * SECOND_US, |ctx| policy.plan(ctx));
        assert!(
            rules.contains(&"adaptive_flushing") && rules.contains(&"lru_batch"),
            "{rules:?}"
        );
        let (flush, _) = at(&pool, 2 * SECOND_US, |ctx| policy.plan_flush_list(ctx));
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 58,
                lsn_limit: Lsn::MAX
            }
        );
    }

    #[test]
    fn mysql80_woken_before_the_period_ends_runs_only_the_lru_batch() {
        let mut pool = pool(256);
        dirty(&mut pool, 1, 100);
        let mut policy = Mysql80::new(Mysql80Config::default());
        pass(&mut policy, &pool, SECOND_US, 0);
        pool.note_redo(pool.current_lsn().advance(10_000));
        // Woken at 1.3 s by a user's failed free-block search.
        let ((plan, flush), rules) = at(&pool, 1_300_000, |ctx| (policy.plan(ctx), policy.plan_flush_list(ctx)));
        let Plan::Flush(lru) = plan else { panic!() };
        assert_eq!(lru.lru_scan_depth, 1024);
        assert_eq!(flush, FlushListPlan::NONE, "pc_request(0, 0)");
        assert!(rules.contains(&"woken_lru_batch_only"), "{rules:?}");
        // ... and sleeps out the rest of the period, still wakeable.
        let (sleep, _) = at(&pool, 1_400_000, |ctx| {
            policy.end_iteration(ctx, &IterationReport::default())
        });
        assert_eq!(
            sleep,
            Sleep {
                max_us: Some(600_000),
                wake_on_event: true,
                wake_on_write_completion: false
            }
        );
    }

    #[test]
    fn mysql80_idle_server_flushes_idle_flush_pct_without_lru_batch() {
        let mut pool = pool(256);
        dirty(&mut pool, 1, 100);
        let mut policy = Mysql80::new(Mysql80Config::default());
        // Period 1 saw activity (the dirtying); period 2 none.
        pass(&mut policy, &pool, SECOND_US, 0);
        let (_, _, sleep) = pass(&mut policy, &pool, 2 * SECOND_US, 0);
        assert!(sleep.wake_on_event, "nothing flushed: events may wake it");
        let ((plan, flush), rules) = at(&pool, 3 * SECOND_US, |ctx| {
            (policy.plan(ctx), policy.plan_flush_list(ctx))
        });
        let Plan::Flush(lru) = plan else { panic!() };
        assert_eq!(lru.lru_scan_depth, 0, "buf_flush_lists: no LRU batch");
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 200,
                lsn_limit: Lsn::MAX
            }
        );
        assert!(rules.contains(&"idle_flush"), "{rules:?}");
        // Flushed something while idle with no read pending: the sleep to
        // the period's end is not cut short.
        let report = IterationReport {
            np_flush: 1,
            ..IterationReport::default()
        };
        let (sleep, rules) = at(&pool, 3_100_000, |ctx| policy.end_iteration(ctx, &report));
        assert_eq!(sleep.max_us, Some(900_000));
        assert!(!sleep.wake_on_event);
        assert!(rules.contains(&"idle_sleep_not_woken"));
        // innodb_idle_flush_pct = 0: an idle period flushes nothing.
        let mut quiet = Mysql80::new(Mysql80Config {
            idle_flush_pct: 0,
            ..Mysql80Config::default()
        });
        pass(&mut quiet, &pool, SECOND_US, 0);
        pass(&mut quiet, &pool, 2 * SECOND_US, 0);
        let (flush, _) = at(&pool, 3 * SECOND_US, |ctx| {
            quiet.plan(ctx);
            quiet.plan_flush_list(ctx)
        });
        assert_eq!(flush, FlushListPlan::NONE);
    }

    #[test]
    fn mysql80_sync_flush_ignores_io_capacity_max_and_does_not_sleep() {
        let mut pool = pool(8192);
        for n in 0..6000 {
            dirty(&mut pool, n, 10);
        }
        let sync = pool.redo().margins.max_modified_age_sync_bytes;
        // Age past the sync point by what 5000 of the 6000 pages pin.
        let oldest = pool.oldest_modification();
        pool.note_redo(oldest.advance(sync + 5000 * 11));
        let target = Mysql80::sync_flush_lsn(&pool).expect("past the sync point");
        assert_eq!(target, oldest.advance(5000 * 11));
        let config = Mysql80Config {
            io_capacity: 100,
            io_capacity_max: Some(1000),
            ..Mysql80Config::default()
        };
        let mut policy = Mysql80::new(config);
        // Mid-period (woken by the checkpointer), first call initializes
        // the averages but the sync flush still asks.
        let ((_, flush), rules) = at(&pool, 500_000, |ctx| (policy.plan(ctx), policy.plan_flush_list(ctx)));
        assert!(rules.contains(&"sync_flush"), "{rules:?}");
        assert_eq!(flush, FlushListPlan::NONE, "initialize: no estimate yet");
        let ((_, flush), _) = at(&pool, 600_000, |ctx| (policy.plan(ctx), policy.plan_flush_list(ctx)));
        assert_eq!(flush.lsn_limit, target, "lsn_avg_rate still 0: no scan-factor margin");
        // pages_for_lsn = 5000 pages below the target, capped at 2 x 1000;
        // above io_capacity_max; pct_for_lsn > 30 scales the slot's share.
        assert!(flush.pages > 1000 && flush.pages <= 2 * 2000 + 1, "{flush:?}");
        assert_eq!(
            policy
                .parameters()
                .iter()
                .find(|(k, _)| *k == "np_req_flush")
                .unwrap()
                .1,
            2000.0
        );
        let (sleep, _) = at(&pool, 700_000, |ctx| {
            policy.end_iteration(ctx, &IterationReport::default())
        });
        assert_eq!(
            sleep,
            Sleep::none(),
            "the coordinator skips its sleep while sync flushing"
        );
        // innodb_flush_sync = OFF: the same pool gets a normal pass.
        let mut off = Mysql80::new(Mysql80Config {
            flush_sync: false,
            ..config
        });
        let (_, rules) = at(&pool, 500_000, |ctx| off.plan(ctx));
        assert!(!rules.contains(&"sync_flush"), "{rules:?}");
        assert_eq!(off.wake_thresholds(&pool).redo_age_bytes, None);
    }

    #[test]
    fn mysql80_wakes_on_failed_free_block_search_and_at_the_sync_point() {
        let pool = pool(256);
        let policy = Mysql80::new(Mysql80Config::default());
        let wake = policy.wake_thresholds(&pool);
        assert!(wake.on_sync_replacement);
        assert_eq!(
            wake.redo_age_bytes,
            Some(pool.redo().margins.max_modified_age_sync_bytes)
        );
        assert_eq!(wake.dirty_pages, None);
    }
}
