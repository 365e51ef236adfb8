//! `mysql56`: MySQL 5.6's page cleaner, Algorithm 1 of Lee et al.
//!
//! Every second: an LRU batch with depth Pscan (`innodb_lru_scan_depth`,
//! 1024), then a flush-list batch of NP_req_flush pages from adaptive
//! flushing with Pio (`innodb_io_capacity`, 200) and `innodb_io_capacity_max`
//! = max(2000, 2 x Pio); then `sleep(1 s - T_flushing)`. Neither parameter
//! adapts. When the server was idle since the last iteration (InnoDB's
//! `srv_check_activity`), it instead flushes `PCT_IO(100)` = Pio pages with
//! no LSN limit and skips the sleep if it flushed something and no read is
//! pending (5.6 `buf_flush_page_cleaner_thread`).

use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::Lsn;

/// `innodb_lru_scan_depth` (Pscan): default 1024, minimum 100 (MySQL 5.6 manual).
pub const LRU_SCAN_DEPTH: ParamDecl = ParamDecl::int(
    "lru_scan_depth",
    1024,
    100,
    u32::MAX as u64,
    "Pscan, innodb_lru_scan_depth: LRU batch depth and free-list target (5.6 default 1024)",
);
/// `innodb_io_capacity` (Pio): default 200, minimum 100 (MySQL 5.6 manual).
pub const IO_CAPACITY: ParamDecl = ParamDecl::int(
    "io_capacity",
    200,
    100,
    u32::MAX as u64,
    "Pio, innodb_io_capacity: pages per second the flush list may write (5.6 default 200)",
);

/// `mysql56`'s own parameters.
pub const PARAMS: &[ParamDecl] = &[
    LRU_SCAN_DEPTH,
    IO_CAPACITY,
    ParamDecl::int(
        "io_capacity_max",
        0,
        0,
        u32::MAX as u64,
        "innodb_io_capacity_max; 0 = max(2000, 2 x Pio) as in 5.6",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "mysql56",
    about: "MySQL 5.6.15's page cleaner (Lee et al. Algorithm 1): fixed Pscan and Pio",
    params: &[PARAMS, crate::free_page_path::PARAMS],
    build: |p| Box::new(Mysql56::new(Mysql56Config::from_params(p))),
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mysql56Config {
    /// Pscan: `innodb_lru_scan_depth`, default 1024.
    pub lru_scan_depth: u32,
    /// Pio: `innodb_io_capacity`, default 200.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`; `None` = max(2000, 2 x Pio) as in 5.6.
    pub io_capacity_max: Option<u32>,
    /// The users' free-page path (5.6.15's by default; see
    /// [`crate::free_page_path`]).
    pub free_page_path: FreePagePath,
    pub adaptive: AdaptiveFlushingConfig,
}

impl Default for Mysql56Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Mysql56Config {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            lru_scan_depth: p.u32("lru_scan_depth"),
            io_capacity: p.u32("io_capacity"),
            io_capacity_max: Some(p.u32("io_capacity_max")).filter(|&v| v > 0),
            free_page_path: FreePagePath::from_params(p),
            adaptive: AdaptiveFlushingConfig::default(),
        }
    }

    pub fn io_capacity_max(&self) -> u32 {
        self.io_capacity_max.unwrap_or((2 * self.io_capacity).max(2000))
    }
}

pub struct Mysql56 {
    config: Mysql56Config,
    adaptive: AdaptiveFlushing,
    last_requests: u64,
    idle_iteration: bool,
    recommended: bool,
    last_np_req_flush: u32,
}

impl Mysql56 {
    pub fn new(config: Mysql56Config) -> Self {
        Self {
            adaptive: AdaptiveFlushing::new(config.adaptive),
            config,
            last_requests: 0,
            idle_iteration: false,
            recommended: false,
            last_np_req_flush: 0,
        }
    }
}

impl FlushPolicy for Mysql56 {
    fn name(&self) -> &'static str {
        "mysql56"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let requests = ctx.pool.counters().requests;
        self.idle_iteration = requests == self.last_requests;
        self.last_requests = requests;
        let depth = if self.idle_iteration {
            0
        } else {
            self.config.lru_scan_depth
        };
        let idle = self.idle_iteration;
        ctx.decide("lru_batch", || format!("LRU batch with Pscan={depth} (idle={idle})"));
        Plan::Flush(IterationPlan::innodb(depth))
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        self.recommended = false;
        if self.idle_iteration {
            let pages = self.config.io_capacity;
            ctx.decide("idle_background_flush", || {
                format!("server idle: flush PCT_IO(100) = {pages} pages")
            });
            return FlushListPlan {
                pages,
                lsn_limit: Lsn::MAX,
            };
        }
        let io_max = self.config.io_capacity_max();
        match self.adaptive.recommend(ctx.pool, self.config.io_capacity, io_max) {
            None => {
                ctx.decide("adaptive_flushing_skipped", || {
                    "first iteration or no redo generated since the last averaging point".to_string()
                });
                FlushListPlan::NONE
            }
            Some(rec) => {
                self.recommended = true;
                self.last_np_req_flush = rec.pages;
                ctx.decide("adaptive_flushing", || {
                    format!(
                        "NP_req_flush={} (pct_for_dirty={} pct_for_lsn={} age={} B, avg_page_rate={})",
                        rec.pages,
                        rec.pct_for_dirty,
                        rec.pct_for_lsn,
                        rec.age_bytes,
                        self.adaptive.avg_page_rate()
                    )
                });
                FlushListPlan {
                    pages: rec.pages,
                    lsn_limit: rec.lsn_limit,
                }
            }
        }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        if self.recommended {
            self.adaptive.record_flushed(report.np_flush);
        }
        let flushed = report.np_lru + report.np_flush;
        if self.idle_iteration && flushed > 0 && ctx.pool.pending_reads() == 0 {
            return Sleep::none();
        }
        Sleep::rest_of_second(report.flushing_time_us)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let mut params = vec![
            ("p_scan", f64::from(self.config.lru_scan_depth)),
            ("p_io", f64::from(self.config.io_capacity)),
            ("io_capacity_max", f64::from(self.config.io_capacity_max())),
            ("np_req_flush", f64::from(self.last_np_req_flush)),
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
    use crate::buffer_pool::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome};
    use crate::decision_log::DecisionLog;
    use crate::policy::{FlushPolicy, PolicyCtx, LRU_CHUNK_PAGES};
    use crate::types::PageId;

    fn pool() -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(256), Lsn(1)).unwrap()
    }

    /// One user request (a fix and unfix of page `n`), so the server is active.
    fn request(pool: &mut BufferPool, n: u32) {
        let f = match pool.fix(PageId::new(1, n), FixIntent::Create, 0, 0) {
            FixOutcome::Hit(f) | FixOutcome::Miss(f) => f,
            other => panic!("{other:?}"),
        };
        pool.unfix(f);
    }

    fn with_ctx<T>(pool: &BufferPool, f: impl FnOnce(&mut PolicyCtx<'_>) -> T) -> T {
        let mut log = DecisionLog::new(64, true);
        let mut ctx = PolicyCtx {
            pool,
            now_us: 0,
            cleaner: 0,
            policy_name: "mysql56",
            log: &mut log,
        };
        f(&mut ctx)
    }

    fn report(t_flushing_us: u64, np_lru: u32, np_flush: u32) -> IterationReport {
        IterationReport {
            flushing_time_us: t_flushing_us,
            np_lru,
            np_flush,
            ..IterationReport::default()
        }
    }

    #[test]
    fn mysql56_io_capacity_max_is_max_of_2000_and_twice_io() {
        let with_io = |io| Mysql56Config {
            io_capacity: io,
            ..Mysql56Config::default()
        };
        assert_eq!(Mysql56Config::default().io_capacity_max(), 2000);
        assert_eq!(with_io(999).io_capacity_max(), 2000);
        assert_eq!(with_io(1000).io_capacity_max(), 2000);
        assert_eq!(with_io(1500).io_capacity_max(), 3000);
        let explicit = Mysql56Config {
            io_capacity_max: Some(500),
            ..Mysql56Config::default()
        };
        assert_eq!(explicit.io_capacity_max(), 500, "an explicit setting wins");
        let policy = Mysql56::new(with_io(1500));
        let params: std::collections::HashMap<_, _> = policy.parameters().into_iter().collect();
        assert_eq!(params["io_capacity_max"], 3000.0);
    }

    #[test]
    fn mysql56_idle_server_flushes_io_capacity_pages_without_lsn_limit() {
        let pool = pool();
        let mut policy = Mysql56::new(Mysql56Config::default());
        // No request since the last iteration (none at all): idle.
        let Plan::Flush(plan) = with_ctx(&pool, |ctx| policy.plan(ctx)) else {
            panic!("mysql56 always runs an iteration")
        };
        assert_eq!(plan.lru_scan_depth, 0, "an idle server skips the LRU batch");
        let flush = with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 200,
                lsn_limit: Lsn::MAX
            }
        );
        // Flushed something, no read pending: go again at once.
        let sleep = with_ctx(&pool, |ctx| policy.end_iteration(ctx, &report(40_000, 0, 200)));
        assert_eq!(sleep, Sleep::none());
        // Nothing left to flush: the normal sleep.
        with_ctx(&pool, |ctx| policy.plan(ctx));
        with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
        let sleep = with_ctx(&pool, |ctx| policy.end_iteration(ctx, &report(1_000, 0, 0)));
        assert_eq!(sleep, Sleep::for_us(999_000));
    }

    #[test]
    fn mysql56_sleeps_rest_of_second_after_flushing() {
        let mut pool = pool();
        let mut policy = Mysql56::new(Mysql56Config::default());
        request(&mut pool, 1);
        let Plan::Flush(plan) = with_ctx(&pool, |ctx| policy.plan(ctx)) else {
            panic!()
        };
        assert_eq!(plan.lru_scan_depth, 1024, "active server: Pscan");
        assert!(LRU_CHUNK_PAGES < plan.lru_scan_depth);
        with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
        let sleep = with_ctx(&pool, |ctx| policy.end_iteration(ctx, &report(300_000, 50, 20)));
        assert_eq!(sleep, Sleep::for_us(700_000), "sleep(1 s - T_flushing)");
        request(&mut pool, 2);
        with_ctx(&pool, |ctx| policy.plan(ctx));
        with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
        let sleep = with_ctx(&pool, |ctx| policy.end_iteration(ctx, &report(1_700_000, 50, 20)));
        assert_eq!(sleep, Sleep::for_us(0), "an overlong iteration does not sleep");
        // Flushing while active never takes the idle shortcut, even with
        // nothing pending.
        request(&mut pool, 3);
        with_ctx(&pool, |ctx| policy.plan(ctx));
        with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
        let sleep = with_ctx(&pool, |ctx| policy.end_iteration(ctx, &report(10_000, 0, 300)));
        assert_eq!(sleep, Sleep::for_us(990_000));
    }

    #[test]
    fn mysql56_never_changes_its_parameters() {
        let mut pool = pool();
        let mut policy = Mysql56::new(Mysql56Config::default());
        let fixed = |p: &Mysql56| -> Vec<(&'static str, f64)> {
            p.parameters()
                .into_iter()
                .filter(|(name, _)| *name != "np_req_flush")
                .collect()
        };
        let before = fixed(&policy);
        assert_eq!(
            before,
            vec![
                ("p_scan", 1024.0),
                ("p_io", 200.0),
                ("io_capacity_max", 2000.0),
                ("user_scan_depth", 0.0),
                ("single_page_flush", 1.0),
                ("lru_written_pages_stay", 1.0),
                ("preflush_twice_excess", 1.0)
            ]
        );
        // Everything that makes self-tuning move: sync writes of both kinds,
        // overload, surplus free pages, idle iterations.
        let mut busy = report(2_500_000, 900, 100);
        busy.user.dirty_victim_scanned = 500;
        busy.user.sync_recoverability_writes = 300;
        let mut spare = report(1_000, 10, 10);
        spare.free_len = 200;
        for i in 0..50u32 {
            if i % 3 != 0 {
                request(&mut pool, i);
            }
            pool.note_redo(pool.current_lsn().advance(1 << 20));
            with_ctx(&pool, |ctx| policy.plan(ctx));
            with_ctx(&pool, |ctx| policy.plan_flush_list(ctx));
            let r = if i % 2 == 0 { busy } else { spare };
            with_ctx(&pool, |ctx| policy.end_iteration(ctx, &r));
            assert_eq!(fixed(&policy), before, "iteration {i}");
        }
    }
}
