//! `innodb-adaptive-flushing`: InnoDB Plugin 1.0.4's `innodb_adaptive_flushing`
//! in the InnoDB 5.1 *master thread*, and the parts of that master thread the
//! XtraDB policies ([`super::adaptive_checkpoint`]) share with it.
//!
//! Users keep 5.1's free margin by LRU batches of their own
//! ([`FreePagePath::MYSQL_5_1`]; the Plugin 1.0 and XtraDB 5.1 call
//! `buf_flush_free_margin` as the built-in InnoDB does); the
//! `single_page_flush` parameter can give them a later version's path.
//!
//! # The master thread we model (InnoDB Plugin 1.0.x / XtraDB 5.1)
//! Before MySQL 5.6 there was no page cleaner: `srv_master_thread` flushed
//! the flush list once per second (`buf_flush_batch(BUF_FLUSH_LIST, n,
//! lsn_limit)`), and user threads freed frames themselves by LRU flushes
//! (the free margin below). So the page cleaner of these policies runs
//! **no LRU batch** (`lru_scan_depth` 0). One pass of the
//! 1-second loop, as read in `srv/srv0srv.c` `srv_master_thread`
//! (mysql/mysql-server `storage/innodb_plugin/srv/srv0srv.c`; XtraDB:
//! percona/percona-server `storage/innodb_plugin/srv/srv0srv.c`):
//!
//! 1. `log_free_check()`: past the async preflush age the master thread
//!    flushes the flush list itself (`log_checkpoint_margin`, `log0log.c`):
//!    above `max_modified_age_sync` to `oldest + 2 x (age - sync)`, else above
//!    `max_modified_age_async` to `oldest + (age - async)`. This is "the
//!    flushing storm" of paper 001. It is modelled here as its own batch
//!    ([`log_free_check_preflush`]); the writers' own sync preflush stays in
//!    the core (`BufferPool::redo_free_check`) and is not duplicated.
//! 2. `buf_get_modified_ratio_pct() > innodb_max_dirty_pages_pct`: flush
//!    `PCT_IO(100)` pages, no LSN limit, and skip the next sleep.
//! 3. otherwise the policy's rule: here `buf_flush_get_desired_flush_rate()`;
//!    in XtraDB `innodb_adaptive_checkpoint`.
//! 4. sleep until one second after the previous wake-up unless a rule set
//!    `skip_sleep`.
//!
//! `PCT_IO(p) = innodb_io_capacity x p / 100` (`srv0srv.c`). The 10-second
//! loop (an extra `PCT_IO(100)` or `PCT_IO(10)` flush every ten passes, and
//! an idle-I/O `PCT_IO(100)` flush) and the background loop of an idle server
//! are **not modelled**.
//!
//! # `buf_flush_get_desired_flush_rate` (mysql/mysql-server
//! `storage/innodb_plugin/buf/buf0flu.c`; rb://133 commit message: "log_capacity
//! / log_generated per second gives us number of seconds in which ALL dirty
//! pages need to be flushed")
//! - `buf_flush_stat_update`, once per second (`srv_error_monitor_thread`),
//!   keeps the last `BUF_FLUSH_STAT_N_INTERVAL` = 20 one-second samples of
//!   redo generated and of pages flushed by LRU flushes;
//! - `redo_avg = sum_redo / 20 + redo since the last sample`;
//! - `lru_flush_avg = sum_lru_flushed / 20 + LRU flushes since the last sample`;
//! - `n_flush_req = n_dirty x redo_avg / log_capacity`
//!   (`log_get_capacity()` = `log_sys->log_group_capacity`, the capacity after
//!   InnoDB's 10% safety cut: our `RedoMargins::group_capacity_bytes`);
//! - `rate = max(n_flush_req - lru_flush_avg, 0)`;
//! - the master thread flushes `min(PCT_IO(100), rate)` pages with no LSN
//!   limit, and skips the next sleep when the cap was hit. So the plugin never
//!   exceeds `innodb_io_capacity` pages per pass: the blog's "doesn't exceed
//!   constant flushing (strong)", which is `PCT_IO(100)` in XtraDB's reflex.
//!
//! Our error-monitor samples are taken when the policy runs: if `k` whole
//! seconds passed since the last sample, the redo and LRU flushes since then
//! are spread evenly over `k` samples (at most 20).
//!
//! `parameters()` reports `pages_requested` = `u32::MAX` for a preflush batch
//! (every page below its LSN target).
//!
//! Invariants: the flush-list request of a policy pass (step 2 or 3) never
//! exceeds `PCT_IO(100)`; the stat window holds exactly 20 samples and its
//! sums equal the sums of the samples.

use crate::buffer_pool::BufferPool;
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{Lsn, TimeUs, SECOND_US};

/// `BUF_FLUSH_STAT_N_INTERVAL` (buf0flu.c, InnoDB Plugin 1.0.4).
pub const BUF_FLUSH_STAT_N_INTERVAL: usize = 20;

/// `PCT_IO(p)` of `srv0srv.c`: `p` percent of `innodb_io_capacity`.
pub fn pct_io(io_capacity: u32, pct: u32) -> u32 {
    (u64::from(io_capacity) * u64::from(pct) / 100) as u32
}

/// `buf_get_modified_ratio_pct`: dirty x 100 / (1 + LRU + free).
pub fn modified_ratio_pct(pool: &BufferPool) -> u64 {
    u64::from(pool.dirty_pages()) * 100 / (1 + u64::from(pool.lru_len()) + u64::from(pool.free_len()))
}

/// The master-thread settings all three paper-001 policies share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MasterThreadConfig {
    /// `innodb_io_capacity`: 4000 in paper 001's runs (plugin default 200).
    pub io_capacity: u32,
    /// `innodb_max_dirty_pages_pct`: 90 in paper 001's runs (plugin default 75).
    pub max_dirty_pages_pct: u64,
    /// Model the master thread's own `log_free_check` preflush (step 1).
    pub log_free_check_preflush: bool,
    /// The users' side: the Plugin 1.0 (and XtraDB 5.1) keep 5.1's free
    /// margin by users' LRU batches (`buf_flush_free_margin` after every
    /// read, `storage/innodb_plugin/buf/buf0rea.c`), [`FreePagePath::MYSQL_5_1`].
    pub free_page_path: FreePagePath,
}

/// `innodb_io_capacity` of the three paper-001 policies.
pub const MASTER_IO_CAPACITY: ParamDecl = ParamDecl::int(
    "io_capacity",
    4000,
    100,
    u32::MAX as u64,
    "innodb_io_capacity: 4000 in paper 001's runs (plugin default 200)",
);

/// The parameters of the three paper-001 policies.
pub const MASTER_PARAMS: &[ParamDecl] = &[MASTER_IO_CAPACITY];
/// Every parameter group of the three paper-001 policies.
pub const MASTER_PARAM_GROUPS: &[&[ParamDecl]] = &[MASTER_PARAMS, crate::free_page_path::PARAMS_MYSQL_5_1];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "innodb-adaptive-flushing",
    about: "the InnoDB Plugin's master thread with innodb_adaptive_flushing (paper 001)",
    params: MASTER_PARAM_GROUPS,
    build: |p| {
        Box::new(InnodbPlugin::new(InnodbPluginConfig {
            master: MasterThreadConfig::from_params(p),
        }))
    },
};

impl MasterThreadConfig {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            io_capacity: p.u32("io_capacity"),
            free_page_path: FreePagePath::from_params(p),
            ..Self::default()
        }
    }
}

impl Default for MasterThreadConfig {
    fn default() -> Self {
        Self {
            io_capacity: ParamSet::defaults(ENTRY.params).u32("io_capacity"),
            max_dirty_pages_pct: 90,
            log_free_check_preflush: true,
            free_page_path: FreePagePath::MYSQL_5_1,
        }
    }
}

/// One flush-list batch of a master-thread pass and whether the next sleep
/// is skipped (`skip_sleep = TRUE` in `srv_master_thread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MasterBatch {
    pub plan: FlushListPlan,
    pub skip_sleep: bool,
}

impl MasterBatch {
    pub const NONE: MasterBatch = MasterBatch {
        plan: FlushListPlan::NONE,
        skip_sleep: false,
    };
}

/// Step 1: `log_free_check` -> `log_checkpoint_margin` (InnoDB 5.0/5.1
/// `log/log0log.c`): the preflush the master thread itself does once the
/// oldest modification is older than `max_modified_age_async`.
pub fn log_free_check_preflush(ctx: &mut PolicyCtx<'_>) -> Option<FlushListPlan> {
    let pool = ctx.pool;
    let age = pool.redo_age_bytes();
    let margins = pool.redo().margins;
    let oldest = pool.oldest_modification();
    let (rule, advance) = if age > margins.max_modified_age_sync_bytes {
        // "A flush is urgent: we have to do a synchronous preflush"; 5.0/5.1
        // advance twice the excess.
        (
            "log_free_check_sync_preflush",
            2 * (age - margins.max_modified_age_sync_bytes),
        )
    } else if age > margins.max_modified_age_async_bytes {
        (
            "log_free_check_async_preflush",
            age - margins.max_modified_age_async_bytes,
        )
    } else {
        return None;
    };
    let lsn_limit = oldest.advance(advance);
    ctx.decide(rule, || {
        format!(
            "age={age} B > async={} B (sync={} B): flush all pages older than {lsn_limit} (advance {advance} B)",
            margins.max_modified_age_async_bytes, margins.max_modified_age_sync_bytes
        )
    });
    Some(FlushListPlan {
        pages: u32::MAX,
        lsn_limit,
    })
}

/// The 1-second loop of `srv_master_thread` around a policy's own rule.
///
/// When step 1 preflushes, the pass is run as two driver iterations: the
/// preflush batch, then (with no sleep in between) the batch of steps 2-3,
/// decided on the state seen at the start of the pass.
#[derive(Clone, Debug, Default)]
pub struct MasterLoop {
    /// Steps 2-3's batch, queued behind this pass's preflush.
    pending: Option<MasterBatch>,
    /// The current driver iteration is the second half of a pass.
    second_half: bool,
    skip_sleep: bool,
    pass_started_us: TimeUs,
}

impl MasterLoop {
    /// True when the next `plan_flush_list` starts a new pass (the policy
    /// then takes its samples and decides).
    pub fn starts_pass(&self) -> bool {
        self.pending.is_none()
    }

    /// Steps 1-3. `policy_rule` is step 3, called only when step 2 does not
    /// fire, and only at the start of a pass.
    pub fn plan_flush_list(
        &mut self,
        ctx: &mut PolicyCtx<'_>,
        config: &MasterThreadConfig,
        policy_rule: impl FnOnce(&mut PolicyCtx<'_>) -> MasterBatch,
    ) -> FlushListPlan {
        if let Some(batch) = self.pending.take() {
            self.second_half = true;
            self.skip_sleep = batch.skip_sleep;
            return batch.plan;
        }
        self.second_half = false;
        self.pass_started_us = ctx.now_us;
        let preflush = if config.log_free_check_preflush {
            log_free_check_preflush(ctx)
        } else {
            None
        };
        let ratio = modified_ratio_pct(ctx.pool);
        let batch = if ratio > config.max_dirty_pages_pct {
            let pages = pct_io(config.io_capacity, 100);
            ctx.decide("max_dirty_pages_pct", || {
                format!(
                    "modified ratio {ratio}% > innodb_max_dirty_pages_pct {}%: flush PCT_IO(100) = {pages} pages",
                    config.max_dirty_pages_pct
                )
            });
            MasterBatch {
                plan: FlushListPlan {
                    pages,
                    lsn_limit: Lsn::MAX,
                },
                skip_sleep: true,
            }
        } else {
            policy_rule(ctx)
        };
        match preflush {
            Some(plan) => {
                if batch.plan.pages > 0 {
                    self.pending = Some(batch);
                }
                self.skip_sleep = batch.skip_sleep;
                plan
            }
            None => {
                self.skip_sleep = batch.skip_sleep;
                batch.plan
            }
        }
    }

    /// Step 4: the sleep after a driver iteration.
    pub fn sleep(&self, now_us: TimeUs) -> Sleep {
        if self.pending.is_some() || self.skip_sleep {
            return Sleep::none();
        }
        Sleep::rest_of_second(now_us.saturating_sub(self.pass_started_us))
    }

    /// The pass's second half (queued policy batch) is the current iteration.
    pub fn in_second_half(&self) -> bool {
        self.second_half
    }
}

/// The plan every master-thread policy starts an iteration with: no LRU batch.
pub fn master_thread_plan() -> Plan {
    Plan::Flush(IterationPlan::innodb(0))
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InnodbPluginConfig {
    pub master: MasterThreadConfig,
}

/// `buf_flush_stat_t`: redo bytes and LRU-flushed pages of one interval (or
/// the values at the start of the current interval).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FlushStat {
    redo_bytes: u64,
    lru_flushed_pages: u64,
}

/// The statistics window of `buf_flush_stat_update`.
#[derive(Clone, Debug)]
struct FlushStatWindow {
    samples: [FlushStat; BUF_FLUSH_STAT_N_INTERVAL],
    next: usize,
    sum: FlushStat,
    /// LSN and LRU-flush count at the start of the current interval; `None`
    /// before the first update ("First time around").
    cur: Option<(Lsn, u64)>,
    last_update_us: TimeUs,
}

impl FlushStatWindow {
    fn new() -> Self {
        Self {
            samples: [FlushStat::default(); BUF_FLUSH_STAT_N_INTERVAL],
            next: 0,
            sum: FlushStat::default(),
            cur: None,
            last_update_us: 0,
        }
    }

    /// `buf_flush_stat_update`, for every whole second elapsed.
    fn update(&mut self, lsn: Lsn, lru_flushed: u64, now_us: TimeUs) {
        let Some((cur_lsn, cur_flushed)) = self.cur else {
            self.cur = Some((lsn, lru_flushed));
            self.last_update_us = now_us;
            return;
        };
        let seconds = now_us.saturating_sub(self.last_update_us) / SECOND_US;
        if seconds == 0 {
            return;
        }
        let redo = lsn.bytes_since(cur_lsn);
        let flushed = lru_flushed.saturating_sub(cur_flushed);
        let n = seconds.min(BUF_FLUSH_STAT_N_INTERVAL as u64);
        for i in 0..n {
            // Spread evenly; the remainder goes to the first sample.
            let extra_redo = if i == 0 { redo % n } else { 0 };
            let extra_flushed = if i == 0 { flushed % n } else { 0 };
            let sample = FlushStat {
                redo_bytes: redo / n + extra_redo,
                lru_flushed_pages: flushed / n + extra_flushed,
            };
            let old = self.samples[self.next];
            self.sum.redo_bytes = self.sum.redo_bytes - old.redo_bytes + sample.redo_bytes;
            self.sum.lru_flushed_pages = self.sum.lru_flushed_pages - old.lru_flushed_pages + sample.lru_flushed_pages;
            self.samples[self.next] = sample;
            self.next = (self.next + 1) % BUF_FLUSH_STAT_N_INTERVAL;
        }
        self.cur = Some((lsn, lru_flushed));
        self.last_update_us += seconds * SECOND_US;
        debug_assert_eq!(
            self.sum.redo_bytes,
            self.samples.iter().map(|s| s.redo_bytes).sum::<u64>()
        );
    }
}

/// One evaluation of `buf_flush_get_desired_flush_rate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DesiredFlushRate {
    pub n_dirty: u64,
    /// Redo bytes per second.
    pub redo_avg_bytes: u64,
    /// Pages per second flushed by LRU flushes (user threads in our core).
    pub lru_flush_avg_pages: u64,
    pub log_capacity_bytes: u64,
    pub n_flush_req: u64,
    /// `max(n_flush_req - lru_flush_avg, 0)`.
    pub rate: u64,
}

pub struct InnodbPlugin {
    config: InnodbPluginConfig,
    master: MasterLoop,
    window: FlushStatWindow,
    last_rate: DesiredFlushRate,
    last_pages: u32,
    last_age_pct: f64,
}

impl InnodbPlugin {
    pub fn new(config: InnodbPluginConfig) -> Self {
        Self {
            config,
            master: MasterLoop::default(),
            window: FlushStatWindow::new(),
            last_rate: DesiredFlushRate::default(),
            last_pages: 0,
            last_age_pct: 0.0,
        }
    }

    /// Pages flushed by LRU flushes so far (`buf_lru_flush_page_count`): in
    /// 5.1 user threads ran them; in our core those are synchronous
    /// replacement writes, plus any page-cleaner LRU batch.
    fn lru_flushed_pages(pool: &BufferPool) -> u64 {
        let c = pool.counters();
        c.sync_replacement_writes + c.lru_batch_flush_pages
    }

    fn desired_flush_rate(&self, pool: &BufferPool) -> DesiredFlushRate {
        let n = BUF_FLUSH_STAT_N_INTERVAL as u64;
        let (cur_lsn, cur_flushed) = self
            .window
            .cur
            .unwrap_or((pool.current_lsn(), Self::lru_flushed_pages(pool)));
        let redo_avg = self.window.sum.redo_bytes / n + pool.current_lsn().bytes_since(cur_lsn);
        let lru_flush_avg =
            self.window.sum.lru_flushed_pages / n + Self::lru_flushed_pages(pool).saturating_sub(cur_flushed);
        let n_dirty = u64::from(pool.dirty_pages());
        let log_capacity = pool.redo().margins.group_capacity_bytes.max(1);
        let n_flush_req = (u128::from(n_dirty) * u128::from(redo_avg) / u128::from(log_capacity)) as u64;
        DesiredFlushRate {
            n_dirty,
            redo_avg_bytes: redo_avg,
            lru_flush_avg_pages: lru_flush_avg,
            log_capacity_bytes: log_capacity,
            n_flush_req,
            rate: n_flush_req.saturating_sub(lru_flush_avg),
        }
    }
}

impl FlushPolicy for InnodbPlugin {
    fn name(&self) -> &'static str {
        "innodb-adaptive-flushing"
    }

    fn plan(&mut self, _ctx: &mut PolicyCtx<'_>) -> Plan {
        master_thread_plan()
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        if self.master.starts_pass() {
            let pool = ctx.pool;
            self.window
                .update(pool.current_lsn(), Self::lru_flushed_pages(pool), ctx.now_us);
            self.last_rate = self.desired_flush_rate(pool);
            let max_age = pool.redo().margins.max_checkpoint_age_bytes.max(1);
            self.last_age_pct = 100.0 * pool.redo_age_bytes() as f64 / max_age as f64;
        }
        let rate = self.last_rate;
        let io_capacity = self.config.master.io_capacity;
        let plan = self.master.plan_flush_list(ctx, &self.config.master, |ctx| {
            if rate.rate == 0 {
                ctx.decide("adaptive_flushing_none", || {
                    format!(
                        "n_dirty={} x redo_avg={} B / capacity={} B = {} <= lru_flush_avg={}",
                        rate.n_dirty,
                        rate.redo_avg_bytes,
                        rate.log_capacity_bytes,
                        rate.n_flush_req,
                        rate.lru_flush_avg_pages
                    )
                });
                return MasterBatch::NONE;
            }
            let cap = pct_io(io_capacity, 100);
            let pages = rate.rate.min(u64::from(cap)) as u32;
            let capped = pages == cap;
            ctx.decide(
                if capped {
                    "adaptive_flushing_capped"
                } else {
                    "adaptive_flushing"
                },
                || {
                    format!(
                        "n_dirty={} x redo_avg={} B / capacity={} B = {} - lru_flush_avg={} = {}; \
                     flush min(PCT_IO(100)={cap}, rate) = {pages}",
                        rate.n_dirty,
                        rate.redo_avg_bytes,
                        rate.log_capacity_bytes,
                        rate.n_flush_req,
                        rate.lru_flush_avg_pages,
                        rate.rate
                    )
                },
            );
            MasterBatch {
                plan: FlushListPlan {
                    pages,
                    lsn_limit: Lsn::MAX,
                },
                skip_sleep: capped,
            }
        });
        self.last_pages = plan.pages;
        plan
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, _report: &IterationReport) -> Sleep {
        self.master.sleep(ctx.now_us)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("io_capacity", f64::from(self.config.master.io_capacity)),
            ("age_pct", self.last_age_pct),
            ("redo_avg_bytes", self.last_rate.redo_avg_bytes as f64),
            ("lru_flush_avg_pages", self.last_rate.lru_flush_avg_pages as f64),
            ("desired_rate_pages", self.last_rate.rate as f64),
            ("pages_requested", f64::from(self.last_pages)),
        ]
        .into_iter()
        .chain(self.config.master.free_page_path.parameters())
        .collect()
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        Some(self.config.master.free_page_path.resolve(1))
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Pools with chosen redo ages, a direct policy caller and a small
    //! closed-loop workload for the paper-001 policies.

    use std::collections::BTreeMap;

    use super::modified_ratio_pct;
    use crate::buffer_pool::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, FreeCheck};
    use crate::cleaner::{CleanerAction, PageCleaner};
    use crate::decision_log::DecisionLog;
    use crate::policy::{FlushListPlan, FlushPolicy, IterationReport, Plan, PolicyCtx, Sleep};
    use crate::redo_space::RedoConfig;
    use crate::types::{Lsn, PageId, TimeUs};

    /// A pool of `frames` frames with a redo log of `redo_bytes`.
    pub fn pool(frames: u32, redo_bytes: u64) -> BufferPool {
        let config = BufferPoolConfig {
            redo: RedoConfig {
                capacity_bytes: redo_bytes,
                thread_concurrency: 16,
            },
            ..BufferPoolConfig::small(frames)
        };
        BufferPool::new(config, Lsn(1)).unwrap()
    }

    /// Makes pages `first..first + count` dirty, page `i` with redo
    /// `lsn(i)..lsn(i) + 1`.
    pub fn dirty(pool: &mut BufferPool, first: u32, count: u32, lsn: impl Fn(u32) -> u64) {
        for i in first..first + count {
            let page = PageId::new(0, i);
            let frame = match pool.fix(page, FixIntent::Create, 0, 0) {
                FixOutcome::Miss(f) | FixOutcome::Hit(f) => f,
                other => panic!("fix of {page}: {other:?}"),
            };
            let start = lsn(i).max(1);
            pool.note_modification(frame, Lsn(start), Lsn(start + 1));
            pool.unfix(frame);
        }
    }

    /// Moves the log head so that the oldest modification is `pct` percent
    /// (plus one byte) of `max_checkpoint_age` old.
    pub fn set_age_pct(pool: &mut BufferPool, pct: f64) {
        let max = pool.redo().margins.max_checkpoint_age_bytes;
        let age = (max as f64 * pct / 100.0) as u64 + 1;
        let target = pool.oldest_modification().advance(age);
        pool.note_redo(target);
    }

    pub struct Caller {
        pub log: DecisionLog,
    }

    impl Caller {
        pub fn new() -> Self {
            Self {
                log: DecisionLog::new(10_000, true),
            }
        }

        /// One driver iteration without writes: plan, plan_flush_list, and
        /// end_iteration with an empty report.
        pub fn iterate(
            &mut self,
            policy: &mut dyn FlushPolicy,
            pool: &BufferPool,
            now_us: TimeUs,
        ) -> (FlushListPlan, Sleep) {
            let name = policy.name();
            let mut ctx = PolicyCtx {
                pool,
                now_us,
                cleaner: 0,
                policy_name: name,
                log: &mut self.log,
            };
            match policy.plan(&mut ctx) {
                Plan::Flush(plan) => assert_eq!(plan.lru_scan_depth, 0, "master-thread policies run no LRU batch"),
                Plan::Sleep(_) => panic!("master-thread policies always run a pass"),
            }
            let flush = policy.plan_flush_list(&mut ctx);
            let report = IterationReport {
                started_us: now_us,
                flush_requested: flush.pages,
                ..IterationReport::default()
            };
            let sleep = policy.end_iteration(&mut ctx, &report);
            (flush, sleep)
        }

        pub fn fired(&self, rule: &str) -> bool {
            self.log.entries().any(|d| d.rule == rule)
        }
    }

    /// The closed-loop workload of [`run_workload`].
    #[derive(Clone, Copy, Debug)]
    pub struct Workload {
        /// User steps, one every 2 ms.
        pub steps: u32,
        /// Pages outside the 200-page hot set; 10% of requests go to them
        /// (none if 0).
        pub cold_pages: u64,
        /// Percent of cold requests that modify the page; hot requests always
        /// modify. Below 100 the cold pages mostly stay clean, so the dirty
        /// share stays under `innodb_max_dirty_pages_pct` (90) and users find
        /// clean victims at the LRU tail.
        pub cold_modify_pct: u64,
        /// Redo bytes of one modification: uniform in `min..min + spread`.
        pub redo_bytes_min: u64,
        pub redo_bytes_spread: u64,
    }

    impl Workload {
        /// Every request modifies, about 400 bytes of redo each: with cold
        /// pages the pool is over 90% dirty and users flush their own victims.
        pub fn all_modify(steps: u32, cold_pages: u64) -> Self {
            Self {
                steps,
                cold_pages,
                cold_modify_pct: 100,
                redo_bytes_min: 200,
                redo_bytes_spread: 400,
            }
        }

        /// The hot set is updated (about 600 bytes of redo each, some 270 KB
        /// a second, 5% of `max_checkpoint_age`), 600 cold pages are read and
        /// 1% of those reads modify. The dirty share stays near 80%, under
        /// `innodb_max_dirty_pages_pct`, so the policy's own rule decides
        /// every pass; users evict clean cold pages (batch ends re-enable
        /// their tail scans) and flush nothing themselves; with nothing
        /// flushed the oldest modification passes half of
        /// `max_checkpoint_age` in about 10 s.
        pub fn hot_updates_cold_reads(steps: u32) -> Self {
            Self {
                steps,
                cold_pages: 600,
                cold_modify_pct: 1,
                redo_bytes_min: 400,
                redo_bytes_spread: 400,
            }
        }
    }

    /// A rule fired in the loop, with the pool it was decided on as the
    /// workload (not the policy) measured it.
    #[derive(Clone, Copy, Debug)]
    pub struct LoopDecision {
        pub rule: &'static str,
        /// Redo age, percent of `max_checkpoint_age`.
        pub age_pct: f64,
    }

    /// What the workload saw, sampled after every user step.
    #[derive(Clone, Debug, Default)]
    pub struct LoopSummary {
        /// Every rule the cleaner fired, in order.
        pub decisions: Vec<LoopDecision>,
        /// Largest redo age, percent of `max_checkpoint_age`.
        pub age_pct_max: f64,
        /// Largest `buf_get_modified_ratio_pct`.
        pub modified_ratio_pct_max: u64,
        /// Redo generated per second (500 steps), bytes.
        pub redo_per_s_bytes: u64,
    }

    /// How often each rule fired.
    pub fn rule_counts(cleaner: &PageCleaner) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for d in cleaner.log().entries() {
            *counts.entry(d.rule).or_insert(0) += 1;
        }
        counts
    }

    /// A closed loop: one user accesses pages of a 200-page hot set and
    /// `cold_pages` cold pages, in a 256-frame pool with an 8 MiB log, every
    /// 2 ms, modifies them as `workload` says and honours the redo free
    /// check; writes complete at once and take 50 us of the cleaner's time
    /// each. Checks the pool's invariants after every step; returns the
    /// cleaner for inspection.
    pub fn run_workload(policy: Box<dyn FlushPolicy>, workload: Workload) -> (PageCleaner, BufferPool, LoopSummary) {
        let mut pool = pool(256, 8 << 20);
        let mut cleaner = PageCleaner::new(policy, &mut pool, DecisionLog::new(100_000, true));
        let max_age = pool.redo().margins.max_checkpoint_age_bytes;
        let mut summary = LoopSummary::default();
        let mut now: TimeUs = 0;
        let mut cleaner_clock: TimeUs = 0;
        let mut lsn = 1u64;
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let cold_pages = workload.cold_pages;
        for _ in 0..workload.steps {
            now += 2_000;
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Hot set of 200 pages for 90% of requests (all if no cold pages).
            let cold = cold_pages > 0 && rng % 100 < 10;
            let page_no = if cold {
                200 + (rng >> 8) % cold_pages
            } else {
                (rng >> 8) % 200
            };
            let modify = !cold || (rng >> 40) % 100 < workload.cold_modify_pct;
            let page = PageId::new(1, page_no as u32);
            let mut frame = None;
            for attempt in 0..64 {
                match pool.fix(page, FixIntent::Read, attempt, now) {
                    FixOutcome::Hit(f) => {
                        frame = Some(f);
                        break;
                    }
                    FixOutcome::Miss(f) => {
                        pool.complete_read(f);
                        frame = Some(f);
                        break;
                    }
                    FixOutcome::SyncReplacementWrite(w) => {
                        pool.complete_write(w.frame);
                    }
                    FixOutcome::UserLruBatch => {
                        for w in pool.take_user_lru_batch() {
                            pool.complete_write(w.frame);
                        }
                    }
                    FixOutcome::WaitRead(_) | FixOutcome::NoFrame => {}
                }
            }
            let frame = frame.expect("a frame within 64 attempts");
            if modify {
                for _ in 0..64 {
                    match pool.redo_free_check() {
                        FreeCheck::Proceed => break,
                        FreeCheck::SyncFlush(writes) => {
                            for w in writes {
                                pool.complete_write(w.frame);
                            }
                        }
                        FreeCheck::WaitForFlush => break,
                    }
                }
                let bytes = workload.redo_bytes_min + (rng >> 20) % workload.redo_bytes_spread.max(1);
                pool.note_modification(frame, Lsn(lsn), Lsn(lsn + bytes));
                lsn += bytes;
            }
            pool.unfix(frame);
            pool.check_invariants();
            summary.age_pct_max = summary
                .age_pct_max
                .max(100.0 * pool.redo_age_bytes() as f64 / max_age as f64);
            summary.modified_ratio_pct_max = summary.modified_ratio_pct_max.max(modified_ratio_pct(&pool));
            let mut polls = 0;
            while cleaner_clock <= now && polls < 1_000 {
                polls += 1;
                // A pass decides on the pool as it is before the pass: no
                // write of it has completed yet.
                let age_pct = 100.0 * pool.redo_age_bytes() as f64 / max_age as f64;
                let logged = cleaner.log().entries().count();
                let action = cleaner.poll(&mut pool, 0, cleaner_clock);
                summary.decisions.extend(
                    cleaner
                        .log()
                        .entries()
                        .skip(logged)
                        .map(|d| LoopDecision { rule: d.rule, age_pct }),
                );
                match action {
                    CleanerAction::Write { writes, .. } => {
                        cleaner_clock += 50 * writes.len() as TimeUs;
                        for w in writes {
                            pool.complete_write(w.frame);
                        }
                    }
                    CleanerAction::Sleep(sleep) => {
                        cleaner_clock += sleep.max_us.unwrap_or(1_000_000).max(1);
                    }
                }
                pool.check_invariants();
            }
        }
        assert_eq!(cleaner.log().dropped(), 0, "decisions were paired by log position");
        let seconds = (now / 1_000_000).max(1);
        summary.redo_per_s_bytes = (lsn - 1) / seconds;
        (cleaner, pool, summary)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    fn plugin(io_capacity: u32) -> InnodbPlugin {
        InnodbPlugin::new(InnodbPluginConfig {
            master: MasterThreadConfig {
                io_capacity,
                max_dirty_pages_pct: 90,
                // Ages grow without bound here: keep step 1 out of the way.
                log_free_check_preflush: false,
                free_page_path: FreePagePath::MYSQL_5_1,
            },
        })
    }

    /// Runs `seconds` passes, one per second, with `redo_per_s` bytes of redo
    /// between them, and returns the last plan.
    fn run_constant_redo(policy: &mut InnodbPlugin, redo_per_s: u64, seconds: u64) -> (FlushListPlan, Sleep) {
        let mut pool = pool(1024, 64 << 20);
        dirty(&mut pool, 0, 100, |i| u64::from(i) + 1);
        let mut caller = Caller::new();
        let mut last = caller.iterate(policy, &pool, 0);
        for s in 1..=seconds {
            let head = pool.current_lsn().advance(redo_per_s);
            pool.note_redo(head);
            last = caller.iterate(policy, &pool, s * SECOND_US);
        }
        last
    }

    #[test]
    fn innodb_plugin_rate_follows_redo_generation() {
        let capacity = pool(1024, 64 << 20).redo().margins.group_capacity_bytes;
        // 10% of the log per second with 100 dirty pages: 10 pages a second
        // once the 20-second window is full.
        let redo = capacity / 10 + 1;
        let mut p = plugin(4000);
        let (plan, sleep) = run_constant_redo(&mut p, redo, 20);
        assert_eq!(plan.pages, 10);
        assert_eq!(plan.lsn_limit, Lsn::MAX);
        assert_eq!(sleep.max_us, Some(SECOND_US), "uncapped: a full second's sleep");
        // Twice the redo rate, twice the pages.
        let mut p = plugin(4000);
        let (plan, _) = run_constant_redo(&mut p, 2 * redo, 20);
        assert_eq!(plan.pages, 20);
        // The window fills over 20 s: after 5 s only a quarter of the rate.
        let mut p = plugin(4000);
        let (plan, _) = run_constant_redo(&mut p, redo, 5);
        assert_eq!(plan.pages, 2, "5/20 of 10 pages, rounded down");
    }

    #[test]
    fn innodb_plugin_is_capped() {
        let capacity = pool(1024, 64 << 20).redo().margins.group_capacity_bytes;
        // 100 dirty pages x 300 log capacities a second = 30000 pages >> PCT_IO(100).
        let mut p = plugin(200);
        let (plan, sleep) = run_constant_redo(&mut p, capacity * 300, 20);
        assert_eq!(plan.pages, 200, "capped at PCT_IO(100) = innodb_io_capacity");
        assert_eq!(sleep, Sleep::none(), "hitting the cap skips the sleep");
        assert!(p.last_rate.rate > 200);
    }

    #[test]
    fn innodb_plugin_above_max_dirty_pct_flushes_io_capacity() {
        let mut pool = pool(64, 8 << 20);
        dirty(&mut pool, 0, 60, |i| u64::from(i) + 1);
        let mut p = plugin(4000);
        let mut caller = Caller::new();
        let (plan, sleep) = caller.iterate(&mut p, &pool, 0);
        assert_eq!(plan.pages, 4000);
        assert_eq!(sleep, Sleep::none());
        assert!(caller.fired("max_dirty_pages_pct"));
    }

    #[test]
    fn master_preflushes_past_async_age() {
        let mut pool = pool(64, 8 << 20);
        dirty(&mut pool, 0, 4, |i| u64::from(i) + 1);
        // 90% of max_checkpoint_age: between async (87.5%) and sync (93.75%).
        set_age_pct(&mut pool, 90.0);
        let margins = pool.redo().margins;
        let age = pool.redo_age_bytes();
        let mut p = InnodbPlugin::new(InnodbPluginConfig::default());
        let mut caller = Caller::new();
        let (plan, sleep) = caller.iterate(&mut p, &pool, 0);
        assert!(caller.fired("log_free_check_async_preflush"));
        assert_eq!(plan.pages, u32::MAX);
        assert_eq!(
            plan.lsn_limit,
            pool.oldest_modification()
                .advance(age - margins.max_modified_age_async_bytes)
        );
        // First pass: the window has no history, the rate is 0: no second half.
        assert_eq!(sleep.max_us, Some(SECOND_US));
        // Past the sync age the advance doubles.
        set_age_pct(&mut pool, 99.0);
        let age = pool.redo_age_bytes();
        let (plan, _) = caller.iterate(&mut p, &pool, SECOND_US);
        assert!(caller.fired("log_free_check_sync_preflush"));
        assert_eq!(
            plan.lsn_limit,
            pool.oldest_modification()
                .advance(2 * (age - margins.max_modified_age_sync_bytes))
        );
    }

    #[test]
    fn master_runs_the_queued_batch_right_after_its_preflush() {
        let mut pool = pool(64, 8 << 20);
        dirty(&mut pool, 0, 60, |i| u64::from(i) + 1);
        set_age_pct(&mut pool, 90.0);
        let mut p = InnodbPlugin::new(InnodbPluginConfig::default());
        let mut caller = Caller::new();
        let (preflush, sleep) = caller.iterate(&mut p, &pool, 0);
        assert_eq!(preflush.pages, u32::MAX);
        assert_eq!(sleep, Sleep::none(), "the pass is not over");
        // Same pass: the max-dirty batch decided at its start.
        let (batch, sleep) = caller.iterate(&mut p, &pool, 10);
        assert_eq!(batch.pages, 4000);
        assert_eq!(batch.lsn_limit, Lsn::MAX);
        assert_eq!(sleep, Sleep::none(), "max-dirty flushing skips the sleep");
        // Next pass preflushes again.
        let (next, _) = caller.iterate(&mut p, &pool, 20);
        assert_eq!(next.pages, u32::MAX);
    }

    fn parameter(cleaner: &crate::cleaner::PageCleaner, name: &str) -> f64 {
        cleaner
            .parameters()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .expect("a reported parameter")
    }

    #[test]
    fn innodb_plugin_loop_keeps_pool_invariants() {
        // Users evict clean cold pages and flush nothing (5.7's user path:
        // 5.1's margin would make them flush, tested below): no LRU
        // flushes, the rate follows the redo.
        let policy = InnodbPlugin::new(InnodbPluginConfig {
            master: MasterThreadConfig {
                free_page_path: FreePagePath::MYSQL_5_7,
                ..MasterThreadConfig::default()
            },
        });
        let (cleaner, pool, summary) = run_workload(Box::new(policy), Workload::hot_updates_cold_reads(20_000));
        pool.check_invariants();
        let counts = rule_counts(&cleaner);
        println!(
            "without user flushes: {counts:?}, redo age max {:.1}%",
            summary.age_pct_max
        );
        assert!(cleaner.iterations() > 10);
        assert!(pool.redo_age_bytes() < pool.redo().config.capacity_bytes);
        assert_eq!(pool.counters().sync_replacement_writes, 0);
        assert_eq!(counts.get("max_dirty_pages_pct"), None, "{counts:?}");
        assert!(
            counts.get("adaptive_flushing").copied().unwrap_or(0) >= 30,
            "{counts:?}"
        );
        let redo_avg = parameter(&cleaner, "redo_avg_bytes");
        let redo = summary.redo_per_s_bytes as f64;
        assert!((0.75 * redo..1.5 * redo).contains(&redo_avg), "{redo_avg} vs {redo}");
        assert_eq!(parameter(&cleaner, "lru_flush_avg_pages"), 0.0);
        assert!(parameter(&cleaner, "desired_rate_pages") > 0.0);
        // Every request modifies 600 cold pages too: the pool is over 90%
        // dirty, users' tail scans find no clean victim and they flush their
        // own (5.1's LRU flushes), more than the desired rate, which drops to
        // nothing; max_dirty_pages_pct flushes in between.
        let policy = InnodbPlugin::new(InnodbPluginConfig::default());
        let (cleaner, pool, _) = run_workload(Box::new(policy), Workload::all_modify(20_000, 600));
        pool.check_invariants();
        let counts = rule_counts(&cleaner);
        println!("with user flushes: {counts:?}");
        assert!(pool.counters().sync_replacement_writes > 0);
        assert_eq!(counts.get("adaptive_flushing"), None, "{counts:?}");
        assert_eq!(counts.get("adaptive_flushing_capped"), None, "{counts:?}");
        assert!(
            counts.get("adaptive_flushing_none").copied().unwrap_or(0) >= 10,
            "{counts:?}"
        );
        assert!(parameter(&cleaner, "lru_flush_avg_pages") > 0.0);
        assert_eq!(parameter(&cleaner, "desired_rate_pages"), 0.0);
    }

    #[test]
    fn users_keep_the_5_1_free_margin_and_the_rate_subtracts_their_lru_flushes() {
        // The same load at the Plugin's defaults: with 80 % of the pool
        // dirty, fewer than BUF_FLUSH_FREE_BLOCK_MARGIN pages near the tail
        // are clean, so users run LRU batches (`buf_flush_free_margin`),
        // and `buf_flush_get_desired_flush_rate` counts them as LRU flushes.
        let policy = InnodbPlugin::new(InnodbPluginConfig::default());
        let (cleaner, pool, _) = run_workload(Box::new(policy), Workload::hot_updates_cold_reads(20_000));
        pool.check_invariants();
        let c = pool.counters();
        assert!(c.sync_replacement_writes > 0, "{c:?}");
        assert_eq!(c.lru_batch_flush_pages, 0, "the page cleaner runs no LRU batch");
        assert!(parameter(&cleaner, "lru_flush_avg_pages") > 0.0);
        assert_eq!(parameter(&cleaner, "single_page_flush"), 3.0, "the free-margin batch");
    }
}
