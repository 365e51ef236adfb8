//! `percona56`: Percona Server 5.6's page cleaner, Algorithm 2 of Lee et al.
//!
//! MySQL 5.6's loop (Algorithm 1, [`super::mysql56`]) with two sleep times
//! that adapt, and a time limit on each half of an iteration:
//!
//! 1. flush the LRU tail with Pscan (`innodb_lru_scan_depth`, 1024), stopping
//!    after `innodb_cleaner_max_lru_time` (1 s);
//! 2. flush the flush list with Pio (`innodb_io_capacity`, 200) through
//!    adaptive flushing, stopping after `innodb_cleaner_max_flush_time` (1 s);
//! 3. adjust T_LRU from the free-list length: below 1% no sleep (0); below
//!    5% 50 ms shorter; 5%..20% unchanged; above 20% 50 ms longer, capped at
//!    the max LRU time;
//! 4. adjust T_flush: 0 in the sync-preflush zone ("redo log space is
//!    full"), else the max flush time (1 s);
//! 5. `sleep(min(T_LRU, T_flush) - T_flushing)`, floored at zero.
//!
//! Pio and Pscan never change; `innodb_io_capacity_max` = max(2000, 2 x Pio).
//!
//! # Sources of each rule and constant
//! Paper: Lee, Lee, Kim (2016) §2.3, Algorithm 2 (T_LRU <- 1 s, T_flush <-
//! 1 s, the 1%/5%/20% rules, the 1 s limits). Docs: Percona Server 5.6
//! "Page cleaner thread tuning" (`percona/percona-server`
//! `doc/source/performance/page_cleaner_tuning.rst`: 5.6.13-61.0, both
//! limits 1000 ms, chunk sizes 100, `innodb_cleaner_lsn_age_factor` default
//! `high_checkpoint`). Code: XtraDB 5.6 as merged into MariaDB
//! (`MariaDB/server` `storage/xtradb/buf/buf0flu.cc`, read at commit
//! 01be663c): `page_cleaner_adapt_lru_sleep_time`,
//! `page_cleaner_adapt_flush_sleep_time`, `page_cleaner_flush_pages_if_needed`,
//! `buf_flush_list`, `buf_flush_LRU_tail`, `buf_flush_page_cleaner_thread`.
//!
//! - **What the 1%/5%/20% are of.** The paper says "of the buffer pool
//!   size". The code compares the total free-list length against
//!   `innodb_lru_scan_depth x innodb_buffer_pool_instances`, with integer
//!   division (`free < max/100`, `free > max/5`, `free < max/20`), tests
//!   "> 20%" before "< 5%", and only subtracts 50 ms while T_LRU >= 50 ms.
//!   The docs say "over all buffer pool instances" without naming the base.
//!   Default here: the paper's basis ([`FreeListBasis::BufferPool`]);
//!   [`FreeListBasis::ScanDepth`] is the code's (one pool instance). Both use
//!   the code's integer arithmetic and rule order.
//! - **"Redo log space is full".** The code returns T_flush = 0 when the
//!   *checkpoint* age `log_get_lsn() - last_checkpoint_lsn` exceeds
//!   `max_modified_age_sync` (the sync-preflush zone), else
//!   `innodb_cleaner_max_flush_time`. Default here:
//!   [`RedoFullAge::CheckpointAge`] against
//!   `max_modified_age_sync_bytes`; the age the flush list pins
//!   ([`RedoFullAge::OldestModificationAge`]) is offered for shells that do
//!   not write checkpoints.
//! - **Adaptive flushing.** `high_checkpoint` (`f^2.5 / 700.5`) is the
//!   default (docs above; the help text MariaDB kept for the variable in
//!   `storage/innobase/handler/ha_xtradb.h` reads "HIGH_CHECKPOINT: (the
//!   default) Percona Server 5.6 formula"). Once the age reaches
//!   `max_modified_age_async` the code skips the averaging with
//!   `avg_page_rate` and requests `PCT_IO(pct_total)` outright; the request
//!   is still capped at `innodb_io_capacity_max` per iteration. Flushing
//!   beyond `io_capacity_max` *per second* happens only because T_flush = 0
//!   removes the sleep in the sync zone (docs, "Furious Flushing"), not by a
//!   larger batch. [`AdaptiveFlushing`] keeps its own averaged request as
//!   `prev_pages` (used for the LSN limit's age factor): a small deviation.
//! - **Idle server.** As in 5.6.13-61.0 (blueprint
//!   `xtradb-cleaner-srv-activity-fixes`) the LRU batch runs every iteration;
//!   the flush list gets adaptive flushing while the server was active in
//!   the last second (`ut_time_ms() - last_activity_time < 1000`, read in the
//!   later XtraDB 5.6 code above) and `PCT_IO(100)` pages with no LSN limit
//!   otherwise. `buf_flush_list` applies the time limit only when the LSN
//!   limit is not `LSN_MAX`, so the idle flush has none.
//! - **Where the adjustment happens.** The code adapts both sleeps at the top
//!   of the loop (after the previous sleep, before flushing) and sets
//!   `next_loop_time = now + min(...)`; the paper adapts after flushing. We
//!   follow the paper, measuring |free| at the end of the iteration.
//! - **Versions.** The paper ran 5.6.15, where one cleaner thread did both
//!   flushes and slept the shorter of the two times. From 5.6.16 an LRU
//!   manager thread does the LRU part with its own sleep (starting at
//!   `srv_cleaner_max_lru_time`, i.e. T_LRU <- 1 s); blueprint
//!   `lru-manager-thread` gives "using the shorter sleep time of the times
//!   requested by both" as the earlier behaviour.
//! - The time limits are checked between chunks ([`super::LRU_CHUNK_PAGES`]
//!   LRU pages; flush batches of `innodb_cleaner_flush_chunk_size` = 100).
//!   XtraDB also keeps flushing one instance while its free list is below
//!   `innodb_cleaner_free_list_lwm` (10%) of the scan depth without checking
//!   the clock; with one pool instance that loop is not modelled.
//!
//! Invariants: 0 <= T_LRU <= max LRU time; T_flush is 0 or the max flush
//! time; the returned sleep never exceeds min(T_LRU, T_flush).

use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig, LsnAgeFactor};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::mysql56::{IO_CAPACITY, LRU_SCAN_DEPTH};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{Lsn, TimeUs, SECOND_US};

/// `percona56`'s own parameters (Percona Server 5.6 shares MySQL's defaults).
pub const PARAMS: &[ParamDecl] = &[LRU_SCAN_DEPTH, IO_CAPACITY];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "percona56",
    about: "Percona Server 5.6.15's page cleaner (Lee et al. Algorithm 2): adaptive LRU sleep, time-bounded phases",
    params: &[PARAMS, crate::free_page_path::PARAMS],
    build: |p| Box::new(Percona56::new(Percona56Config::from_params(p))),
};

/// T_LRU's step: "50ms shorter/longer sleep time" (paper §2.3; code).
pub const LRU_SLEEP_STEP_US: TimeUs = 50_000;

/// `innodb_cleaner_flush_chunk_size`, default 100 (Percona docs).
pub const FLUSH_CHUNK_PAGES: u32 = 100;

/// What the free-list percentages are taken of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeListBasis {
    /// Lee et al. §2.3: "of the buffer pool size" (frames).
    BufferPool,
    /// XtraDB `page_cleaner_adapt_lru_sleep_time`: `innodb_lru_scan_depth`
    /// times the number of pool instances (one here).
    ScanDepth,
}

/// Which redo age decides that "the redo log space is full".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedoFullAge {
    /// XtraDB `page_cleaner_adapt_flush_sleep_time`: head LSN minus the last
    /// checkpoint LSN.
    CheckpointAge,
    /// Head LSN minus the oldest modification on the flush list.
    OldestModificationAge,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percona56Config {
    /// Pscan: `innodb_lru_scan_depth`, default 1024.
    pub lru_scan_depth: u32,
    /// Pio: `innodb_io_capacity`, default 200.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`; `None` = max(2000, 2 x Pio) as in 5.6.
    pub io_capacity_max: Option<u32>,
    /// `innodb_cleaner_max_lru_time`: the LRU phase's limit and T_LRU's cap.
    pub max_lru_time_us: TimeUs,
    /// `innodb_cleaner_max_flush_time`: the flush phase's limit and T_flush
    /// outside the sync-preflush zone.
    pub max_flush_time_us: TimeUs,
    /// T_LRU before the first adjustment (Algorithm 2, line 1: 1 s).
    pub initial_lru_sleep_us: TimeUs,
    pub free_list_basis: FreeListBasis,
    pub redo_full_age: RedoFullAge,
    /// Past `max_modified_age_async`, request `PCT_IO(pct_total)` without
    /// averaging with `avg_page_rate` (XtraDB 5.6 code).
    pub unaveraged_past_async: bool,
    /// The users' free-page path (Percona Server 5.6.15 shares MySQL 5.6.15's; the
    /// `innodb_empty_free_list_algorithm=backoff` of 5.6.16+ is not modelled; see
    /// [`crate::free_page_path`]).
    pub free_page_path: FreePagePath,
    pub adaptive: AdaptiveFlushingConfig,
}

impl Default for Percona56Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Percona56Config {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            lru_scan_depth: p.u32("lru_scan_depth"),
            io_capacity: p.u32("io_capacity"),
            io_capacity_max: None,
            max_lru_time_us: SECOND_US,
            max_flush_time_us: SECOND_US,
            initial_lru_sleep_us: SECOND_US,
            free_list_basis: FreeListBasis::BufferPool,
            redo_full_age: RedoFullAge::CheckpointAge,
            unaveraged_past_async: true,
            free_page_path: FreePagePath::from_params(p),
            adaptive: AdaptiveFlushingConfig {
                lsn_age_factor: LsnAgeFactor::HighCheckpoint,
                ..AdaptiveFlushingConfig::default()
            },
        }
    }

    pub fn io_capacity_max(&self) -> u32 {
        self.io_capacity_max.unwrap_or((2 * self.io_capacity).max(2000))
    }
}

pub struct Percona56 {
    config: Percona56Config,
    adaptive: AdaptiveFlushing,
    /// T_LRU.
    lru_sleep_us: TimeUs,
    /// T_flush.
    flush_sleep_us: TimeUs,
    last_requests: u64,
    /// When user activity was last seen; `None` before the first iteration.
    last_activity_us: Option<TimeUs>,
    idle_iteration: bool,
    recommended: bool,
    last_np_req_flush: u32,
}

impl Percona56 {
    pub fn new(config: Percona56Config) -> Self {
        Self {
            adaptive: AdaptiveFlushing::new(config.adaptive),
            lru_sleep_us: config.initial_lru_sleep_us.min(config.max_lru_time_us),
            flush_sleep_us: config.max_flush_time_us,
            last_requests: 0,
            last_activity_us: None,
            idle_iteration: false,
            recommended: false,
            last_np_req_flush: 0,
            config,
        }
    }

    pub fn config(&self) -> &Percona56Config {
        &self.config
    }
    /// T_LRU.
    pub fn lru_sleep_us(&self) -> TimeUs {
        self.lru_sleep_us
    }
    /// T_flush.
    pub fn flush_sleep_us(&self) -> TimeUs {
        self.flush_sleep_us
    }

    /// Algorithm 2, line 5 (`page_cleaner_adapt_lru_sleep_time`).
    fn adapt_lru_sleep(&mut self, ctx: &mut PolicyCtx<'_>, free_len: u32) {
        let basis = match self.config.free_list_basis {
            FreeListBasis::BufferPool => ctx.pool.frame_count(),
            FreeListBasis::ScanDepth => self.config.lru_scan_depth,
        };
        let old_ms = self.lru_sleep_us / 1000;
        if free_len < basis / 100 {
            self.lru_sleep_us = 0;
            ctx.decide("free_list_below_1pct_no_lru_sleep", || {
                format!("|free|={free_len} < 1% of {basis}: T_LRU {old_ms} ms -> 0 ms")
            });
        } else if free_len > basis / 5 {
            self.lru_sleep_us = (self.lru_sleep_us + LRU_SLEEP_STEP_US).min(self.config.max_lru_time_us);
            let new_ms = self.lru_sleep_us / 1000;
            ctx.decide("free_list_above_20pct_lengthens_lru_sleep", || {
                format!("|free|={free_len} > 20% of {basis}: T_LRU {old_ms} ms -> {new_ms} ms")
            });
        } else if free_len < basis / 20 && self.lru_sleep_us >= LRU_SLEEP_STEP_US {
            self.lru_sleep_us -= LRU_SLEEP_STEP_US;
            let new_ms = self.lru_sleep_us / 1000;
            ctx.decide("free_list_below_5pct_shortens_lru_sleep", || {
                format!("|free|={free_len} < 5% of {basis}: T_LRU {old_ms} ms -> {new_ms} ms")
            });
        } else {
            ctx.decide("free_list_keeps_lru_sleep", || {
                format!("|free|={free_len} of {basis} (5%..20%, or T_LRU < 50 ms): T_LRU {old_ms} ms kept")
            });
        }
    }

    /// Algorithm 2, line 6 (`page_cleaner_adapt_flush_sleep_time`).
    fn adapt_flush_sleep(&mut self, ctx: &mut PolicyCtx<'_>) {
        let redo = ctx.pool.redo();
        let age = match self.config.redo_full_age {
            RedoFullAge::CheckpointAge => redo.current_lsn.bytes_since(redo.checkpoint_lsn),
            RedoFullAge::OldestModificationAge => ctx.pool.redo_age_bytes(),
        };
        let sync = redo.margins.max_modified_age_sync_bytes;
        if age > sync {
            self.flush_sleep_us = 0;
            ctx.decide("redo_sync_zone_no_flush_sleep", || {
                format!("redo age {age} B > max_modified_age_sync {sync} B: T_flush 0 ms")
            });
        } else {
            self.flush_sleep_us = self.config.max_flush_time_us;
            let ms = self.flush_sleep_us / 1000;
            ctx.decide("redo_below_sync_flush_sleep", || {
                format!("redo age {age} B <= max_modified_age_sync {sync} B: T_flush {ms} ms")
            });
        }
    }
}

impl FlushPolicy for Percona56 {
    fn name(&self) -> &'static str {
        "percona56"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let requests = ctx.pool.counters().requests;
        let last_activity_us = match self.last_activity_us {
            Some(t) if requests == self.last_requests => t,
            _ => ctx.now_us,
        };
        self.last_requests = requests;
        self.last_activity_us = Some(last_activity_us);
        self.idle_iteration = ctx.now_us.saturating_sub(last_activity_us) >= SECOND_US;
        let mut plan = IterationPlan::innodb(self.config.lru_scan_depth);
        plan.lru_time_limit_us = Some(self.config.max_lru_time_us);
        plan.flush_time_limit_us = (!self.idle_iteration).then_some(self.config.max_flush_time_us);
        plan.flush_batch_pages = FLUSH_CHUNK_PAGES;
        Plan::Flush(plan)
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        self.recommended = false;
        if self.idle_iteration {
            let pages = self.config.io_capacity;
            ctx.decide("idle_background_flush", || {
                format!("no activity for 1 s: flush PCT_IO(100) = {pages} pages, no LSN or time limit")
            });
            return FlushListPlan {
                pages,
                lsn_limit: Lsn::MAX,
            };
        }
        let io = self.config.io_capacity;
        let io_max = self.config.io_capacity_max();
        let Some(rec) = self.adaptive.recommend(ctx.pool, io, io_max) else {
            return FlushListPlan::NONE;
        };
        self.recommended = true;
        let async_age = ctx.pool.redo().margins.max_modified_age_async_bytes;
        let mut pages = rec.pages;
        if self.config.unaveraged_past_async && rec.age_bytes >= async_age {
            let pct_total = rec.pct_for_dirty.max(rec.pct_for_lsn);
            pages = (u64::from(io) * pct_total / 100).min(u64::from(io_max)) as u32;
            ctx.decide("past_async_unaveraged_request", || {
                format!(
                    "age {} B >= max_modified_age_async {async_age} B: NP_req_flush = PCT_IO({pct_total}) capped at \
                     {io_max} = {pages} (averaged would be {})",
                    rec.age_bytes, rec.pages
                )
            });
        }
        self.last_np_req_flush = pages;
        ctx.decide("adaptive_flushing", || {
            format!(
                "NP_req_flush={pages} (pct_for_dirty={} pct_for_lsn={} age={} B, avg_page_rate={})",
                rec.pct_for_dirty,
                rec.pct_for_lsn,
                rec.age_bytes,
                self.adaptive.avg_page_rate()
            )
        });
        FlushListPlan {
            pages,
            lsn_limit: rec.lsn_limit,
        }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        if self.recommended {
            self.adaptive.record_flushed(report.np_flush);
        }
        if report.lru_time_limited {
            ctx.decide("lru_time_limit_reached", || {
                format!(
                    "LRU phase stopped at innodb_cleaner_max_lru_time={} ms: NP_LRU={} evicted={}",
                    self.config.max_lru_time_us / 1000,
                    report.np_lru,
                    report.lru_evicted
                )
            });
        }
        if report.flush_time_limited {
            ctx.decide("flush_time_limit_reached", || {
                format!(
                    "flush phase stopped at innodb_cleaner_max_flush_time={} ms: NP_flush={} of {}",
                    self.config.max_flush_time_us / 1000,
                    report.np_flush,
                    report.flush_requested
                )
            });
        }
        // XtraDB adapts T_LRU at the top of its loop, after the previous
        // sleep: the free list *left over* from the last period, not the one
        // this iteration's LRU batch just refilled to Pscan.
        self.adapt_lru_sleep(ctx, report.free_len_at_start);
        self.adapt_flush_sleep(ctx);
        let period_us = self.lru_sleep_us.min(self.flush_sleep_us);
        Sleep::for_us(period_us.saturating_sub(report.flushing_time_us))
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let mut params = vec![
            ("p_scan", f64::from(self.config.lru_scan_depth)),
            ("p_io", f64::from(self.config.io_capacity)),
            ("t_lru_ms", self.lru_sleep_us as f64 / 1000.0),
            ("t_flush_ms", self.flush_sleep_us as f64 / 1000.0),
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
    use crate::buffer_pool::{BufferPool, BufferPoolConfig, FixIntent, FixOutcome, FreeCheck, WriteKind, WriteOrder};
    use crate::cleaner::{CleanerAction, PageCleaner};
    use crate::decision_log::DecisionLog;
    use crate::redo_space::RedoConfig;
    use crate::types::PageId;

    const MS: TimeUs = 1_000;

    fn pool(frames: u32) -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap()
    }

    /// Runs `end_iteration` for a hand-made report and returns the sleep.
    fn end(
        policy: &mut Percona56,
        pool: &BufferPool,
        log: &mut DecisionLog,
        free_len: u32,
        flushing_us: TimeUs,
    ) -> Sleep {
        let mut ctx = PolicyCtx {
            pool,
            now_us: 0,
            cleaner: 0,
            policy_name: "percona56",
            log,
        };
        let report = IterationReport {
            free_len_at_start: free_len,
            flushing_time_us: flushing_us,
            ..IterationReport::default()
        };
        policy.end_iteration(&mut ctx, &report)
    }

    fn rules(log: &DecisionLog) -> Vec<&'static str> {
        log.entries().map(|d| d.rule).collect()
    }

    /// Fixes `page`, dirties it with `bytes` of redo and unfixes it; completes
    /// any read or synchronous write at once. Returns false, having changed
    /// nothing, when the user must wait for a cleaner write to complete.
    fn try_dirty(pool: &mut BufferPool, page: PageId, bytes: u64, now_us: TimeUs) -> bool {
        loop {
            match pool.redo_free_check() {
                FreeCheck::Proceed => break,
                FreeCheck::WaitForFlush => return false,
                FreeCheck::SyncFlush(writes) => complete(pool, &writes),
            }
        }
        let mut attempt = 0;
        let frame = loop {
            match pool.fix(page, FixIntent::Read, attempt, now_us) {
                FixOutcome::Hit(frame) => break frame,
                FixOutcome::Miss(frame) => {
                    pool.complete_read(frame);
                    break frame;
                }
                FixOutcome::SyncReplacementWrite(order) => complete(pool, &[order]),
                FixOutcome::UserLruBatch => {
                    let writes = pool.take_user_lru_batch();
                    complete(pool, &writes);
                }
                FixOutcome::NoFrame => return false,
                FixOutcome::WaitRead(_) => panic!("the test shell completes every read at once"),
            }
            attempt += 1;
            assert!(attempt < 100, "fix of {page} does not converge");
        };
        let start = pool.current_lsn();
        pool.note_modification(frame, start, start.advance(bytes));
        pool.unfix(frame);
        true
    }

    fn dirty(pool: &mut BufferPool, page: PageId, bytes: u64, now_us: TimeUs) {
        assert!(try_dirty(pool, page, bytes, now_us), "no cleaner write is in flight");
    }

    fn complete(pool: &mut BufferPool, writes: &[WriteOrder]) {
        for w in writes {
            pool.complete_write(w.frame);
        }
    }

    #[test]
    fn percona_free_list_below_1pct_skips_lru_sleep() {
        // 1000 frames: 1% = 10, 5% = 50, 20% = 200 free frames.
        let pool = pool(1000);
        let mut log = DecisionLog::new(64, true);
        let mut policy = Percona56::new(Percona56Config::default());
        assert_eq!(
            policy.lru_sleep_us(),
            SECOND_US,
            "T_LRU starts at 1 s (Algorithm 2, line 1)"
        );
        let sleep = end(&mut policy, &pool, &mut log, 9, 0);
        assert_eq!(policy.lru_sleep_us(), 0);
        assert_eq!(sleep, Sleep::for_us(0));
        assert_eq!(rules(&log)[0], "free_list_below_1pct_no_lru_sleep");
        // 10 is exactly 1%: not below it, but below 5% with T_LRU = 0 < 50 ms.
        end(&mut policy, &pool, &mut log, 10, 0);
        assert_eq!(policy.lru_sleep_us(), 0, "no underflow below zero");
    }

    #[test]
    fn percona_free_list_below_5pct_shortens_lru_sleep_by_50ms() {
        let pool = pool(1000);
        let mut log = DecisionLog::new(64, true);
        let mut policy = Percona56::new(Percona56Config::default());
        let sleep = end(&mut policy, &pool, &mut log, 30, 0);
        assert_eq!(policy.lru_sleep_us(), 950 * MS);
        assert_eq!(sleep, Sleep::for_us(950 * MS));
        end(&mut policy, &pool, &mut log, 49, 0);
        assert_eq!(
            policy.lru_sleep_us(),
            900 * MS,
            "the step is relative to the previous iteration"
        );
        assert_eq!(
            rules(&log)
                .iter()
                .filter(|r| **r == "free_list_below_5pct_shortens_lru_sleep")
                .count(),
            2
        );
    }

    #[test]
    fn percona_free_list_between_5_and_20pct_keeps_lru_sleep() {
        let pool = pool(1000);
        let mut log = DecisionLog::new(64, true);
        let mut policy = Percona56::new(Percona56Config::default());
        end(&mut policy, &pool, &mut log, 30, 0);
        assert_eq!(policy.lru_sleep_us(), 950 * MS);
        // 5% and 20% themselves belong to the unchanged band (strict tests).
        for free in [50, 100, 200] {
            end(&mut policy, &pool, &mut log, free, 0);
            assert_eq!(policy.lru_sleep_us(), 950 * MS, "|free|={free}");
        }
        assert!(rules(&log).contains(&"free_list_keeps_lru_sleep"));
    }

    #[test]
    fn percona_free_list_above_20pct_lengthens_lru_sleep_up_to_limit() {
        let pool = pool(1000);
        let mut log = DecisionLog::new(64, true);
        let mut policy = Percona56::new(Percona56Config::default());
        end(&mut policy, &pool, &mut log, 0, 0);
        assert_eq!(policy.lru_sleep_us(), 0);
        for step in 1..=20u64 {
            end(&mut policy, &pool, &mut log, 201, 0);
            assert_eq!(policy.lru_sleep_us(), step * 50 * MS);
        }
        end(&mut policy, &pool, &mut log, 1000, 0);
        assert_eq!(
            policy.lru_sleep_us(),
            SECOND_US,
            "capped at innodb_cleaner_max_lru_time"
        );
        let params = policy.parameters();
        assert!(params.contains(&("t_lru_ms", 1000.0)), "{params:?}");
    }

    #[test]
    fn percona_scan_depth_basis_measures_free_list_against_lru_scan_depth() {
        // 4000 frames: 1% = 40, 5% = 200, 20% = 800 of the pool; of Pscan
        // 1024: 1% = 10, 5% = 51, 20% = 204.
        let pool = pool(4000);
        let mut log = DecisionLog::disabled();
        let mut paper = Percona56::new(Percona56Config::default());
        let mut code = Percona56::new(Percona56Config {
            free_list_basis: FreeListBasis::ScanDepth,
            ..Percona56Config::default()
        });
        end(&mut paper, &pool, &mut log, 30, 0);
        end(&mut code, &pool, &mut log, 30, 0);
        assert_eq!(paper.lru_sleep_us(), 0, "30 < 1% of 4000 frames");
        assert_eq!(code.lru_sleep_us(), 950 * MS, "30 < 5% of 1024");
        end(&mut paper, &pool, &mut log, 300, 0);
        end(&mut code, &pool, &mut log, 300, 0);
        assert_eq!(paper.lru_sleep_us(), 0, "300 is 7.5% of the pool: unchanged");
        assert_eq!(code.lru_sleep_us(), SECOND_US, "300 > 20% of 1024: +50 ms up to 1 s");
    }

    #[test]
    fn percona_redo_full_zeroes_flush_sleep() {
        let mut pool = pool(64);
        let mut log = DecisionLog::new(64, true);
        let mut policy = Percona56::new(Percona56Config::default());
        let sync = pool.redo().margins.max_modified_age_sync_bytes;
        // Checkpoint at LSN 1: a checkpoint age of exactly the sync margin is
        // not yet in the sync-preflush zone.
        pool.note_redo(Lsn(1).advance(sync));
        let sleep = end(&mut policy, &pool, &mut log, 64, 0);
        assert_eq!(policy.flush_sleep_us(), SECOND_US);
        assert_eq!(sleep, Sleep::for_us(SECOND_US));
        pool.note_redo(Lsn(1).advance(sync + 1));
        let sleep = end(&mut policy, &pool, &mut log, 64, 0);
        assert_eq!(policy.flush_sleep_us(), 0);
        assert_eq!(sleep, Sleep::for_us(0), "no sleep at all even with T_LRU = 1 s");
        assert!(rules(&log).contains(&"redo_sync_zone_no_flush_sleep"));
        assert!(policy.parameters().contains(&("t_flush_ms", 0.0)));
        // Nothing is dirty, so a checkpoint can catch up with the head.
        pool.note_checkpoint(pool.checkpoint_candidate(), 0);
        end(&mut policy, &pool, &mut log, 64, 0);
        assert_eq!(policy.flush_sleep_us(), SECOND_US);
    }

    #[test]
    fn percona_oldest_modification_age_ignores_a_lagging_checkpoint() {
        let mut pool = pool(64);
        let mut log = DecisionLog::disabled();
        let mut policy = Percona56::new(Percona56Config {
            redo_full_age: RedoFullAge::OldestModificationAge,
            ..Percona56Config::default()
        });
        let sync = pool.redo().margins.max_modified_age_sync_bytes;
        pool.note_redo(Lsn(1).advance(2 * sync));
        end(&mut policy, &pool, &mut log, 64, 0);
        assert_eq!(policy.flush_sleep_us(), SECOND_US, "no dirty page pins redo");
        dirty(&mut pool, PageId::new(0, 1), 100, 0);
        pool.note_redo(pool.current_lsn().advance(sync));
        end(&mut policy, &pool, &mut log, 64, 0);
        assert_eq!(
            policy.flush_sleep_us(),
            0,
            "the dirty page pins more than the sync margin"
        );
    }

    #[test]
    fn percona_sleeps_min_of_both_minus_flushing_time() {
        let mut pool = pool(1000);
        let mut log = DecisionLog::disabled();
        let mut policy = Percona56::new(Percona56Config::default());
        // T_LRU 950 ms, T_flush 1 s, 200 ms of flushing: 750 ms.
        assert_eq!(end(&mut policy, &pool, &mut log, 30, 200 * MS), Sleep::for_us(750 * MS));
        // T_LRU 1 s after a surplus, T_flush 1 s: 1 s - 300 ms.
        assert_eq!(
            end(&mut policy, &pool, &mut log, 500, 300 * MS),
            Sleep::for_us(700 * MS)
        );
        // Flushing longer than the period: no sleep, never negative.
        assert_eq!(end(&mut policy, &pool, &mut log, 500, 1_500 * MS), Sleep::for_us(0));
        // T_flush = 0 wins over T_LRU = 1 s.
        pool.note_redo(Lsn(2).advance(pool.redo().margins.max_modified_age_sync_bytes));
        assert_eq!(end(&mut policy, &pool, &mut log, 500, 100 * MS), Sleep::for_us(0));
        assert_eq!(policy.lru_sleep_us(), SECOND_US);
    }

    #[test]
    fn percona_plan_limits_each_phase_to_one_second_except_idle_flush() {
        let mut pool = pool(64);
        let mut log = DecisionLog::new(16, true);
        let mut policy = Percona56::new(Percona56Config::default());
        let mut plan_at = |policy: &mut Percona56, pool: &BufferPool, now_us| {
            let mut ctx = PolicyCtx {
                pool,
                now_us,
                cleaner: 0,
                policy_name: "percona56",
                log: &mut log,
            };
            let Plan::Flush(plan) = policy.plan(&mut ctx) else {
                panic!("percona56 always flushes");
            };
            (plan, policy.plan_flush_list(&mut ctx))
        };
        let (plan, _) = plan_at(&mut policy, &pool, 0);
        assert_eq!(plan.lru_scan_depth, 1024);
        assert_eq!(plan.lru_time_limit_us, Some(SECOND_US));
        assert_eq!(plan.flush_time_limit_us, Some(SECOND_US));
        assert_eq!(plan.flush_batch_pages, FLUSH_CHUNK_PAGES);
        // Activity within the last second keeps adaptive flushing.
        dirty(&mut pool, PageId::new(0, 1), 100, 0);
        let (plan, _) = plan_at(&mut policy, &pool, 500 * MS);
        assert_eq!(plan.flush_time_limit_us, Some(SECOND_US));
        let (plan, _) = plan_at(&mut policy, &pool, 1_400 * MS);
        assert_eq!(plan.flush_time_limit_us, Some(SECOND_US), "last activity 0.9 s ago");
        // A second without requests: PCT_IO(100) with no LSN or time limit,
        // and the LRU batch still runs.
        let (plan, flush) = plan_at(&mut policy, &pool, 1_500 * MS);
        assert_eq!(plan.lru_scan_depth, 1024);
        assert_eq!(plan.flush_time_limit_us, None);
        assert_eq!(
            flush,
            FlushListPlan {
                pages: 200,
                lsn_limit: Lsn::MAX
            }
        );
    }

    #[test]
    fn percona_lru_phase_stops_at_time_limit() {
        // Every frame dirty and no free frame: each LRU chunk is 100 writes.
        let setup = || {
            let mut pool = pool(2000);
            for page_no in 0..2000 {
                dirty(&mut pool, PageId::new(0, page_no), 100, 0);
            }
            assert_eq!(pool.free_len(), 0);
            let policy = Box::new(Percona56::new(Percona56Config::default()));
            let cleaner = PageCleaner::new(policy, &mut pool, DecisionLog::new(64, true));
            (pool, cleaner)
        };
        let first_chunk = |pool: &mut BufferPool, cleaner: &mut PageCleaner| {
            let CleanerAction::Write { writes, .. } = cleaner.poll(pool, 0, 0) else {
                panic!("the LRU batch must write");
            };
            assert_eq!(writes.len(), 100);
            assert!(writes.iter().all(|w| w.kind == WriteKind::LruBatch));
            // The shell reports the completions before polling again.
            complete(pool, &writes);
            pool.check_invariants();
        };

        // The writes took 1.1 s: the next chunk is not issued.
        let (mut pool, mut cleaner) = setup();
        first_chunk(&mut pool, &mut cleaner);
        let action = cleaner.poll(&mut pool, 0, 1_100 * MS);
        assert!(matches!(action, CleanerAction::Sleep(_)), "{action:?}");
        // 5.6.15: the written pages stay on the LRU, clean, for the next
        // chunk or a user's scan to evict.
        assert_eq!(pool.free_len(), 0);
        assert_eq!(pool.dirty_pages(), 1900);
        let logged: Vec<_> = cleaner.log().entries().map(|d| d.rule).collect();
        assert!(logged.contains(&"lru_time_limit_reached"), "{logged:?}");
        pool.check_invariants();

        // Control: within the limit the batch goes on.
        let (mut pool, mut cleaner) = setup();
        first_chunk(&mut pool, &mut cleaner);
        let CleanerAction::Write { writes, .. } = cleaner.poll(&mut pool, 0, 900 * MS) else {
            panic!("the LRU batch goes on within 1 s");
        };
        assert!(writes.iter().all(|w| w.kind == WriteKind::LruBatch));
        assert!(!cleaner.log().entries().any(|d| d.rule == "lru_time_limit_reached"));
    }

    /// A deterministic shell: a user dirties pages of a working set larger
    /// than the pool every millisecond, a checkpoint is written every second,
    /// each cleaner batch takes `WRITE_BATCH_US` to complete.
    #[test]
    fn percona_full_loop_keeps_pool_invariants_under_dirtying_workload() {
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
        let policy = Box::new(Percona56::new(Percona56Config::default()));
        let mut cleaner = PageCleaner::new(policy, &mut pool, DecisionLog::new(100_000, true));
        let mut rng: u64 = 0x5eed;
        let mut in_flight: Vec<WriteOrder> = Vec::new();
        let mut cleaner_ready_us = 0;
        let mut sleeps = 0u32;
        let mut waits = 0u32;
        for step in 0..STEPS_MS {
            let now = step * MS;
            for _ in 0..5 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let page_no = ((rng >> 33) % PAGES) as u32;
                if !try_dirty(&mut pool, PageId::new(1, page_no), 200, now) {
                    waits += 1;
                    break;
                }
            }
            if pool.checkpoint_due(now).is_some() {
                pool.note_checkpoint(pool.checkpoint_candidate(), now);
            }
            if now >= cleaner_ready_us {
                complete(&mut pool, &in_flight);
                in_flight.clear();
                match cleaner.poll(&mut pool, 0, now) {
                    CleanerAction::Write { writes, .. } => {
                        in_flight = writes;
                        cleaner_ready_us = now + WRITE_BATCH_US;
                    }
                    CleanerAction::Sleep(sleep) => {
                        let max_us = sleep.max_us.expect("percona56 always sleeps for a bounded time");
                        assert!(max_us <= SECOND_US, "sleep {max_us} us");
                        sleeps += 1;
                        cleaner_ready_us = now + max_us.max(MS);
                    }
                }
            }
            pool.check_invariants();
        }
        assert!(cleaner.iterations() >= 20, "iterations {}", cleaner.iterations());
        assert_eq!(u64::from(sleeps), cleaner.iterations());
        assert!(pool.counters().writes_completed > 0);
        assert!(
            u64::from(waits) < STEPS_MS / 2,
            "the user was blocked in {waits} of {STEPS_MS} ms"
        );
        let params: Vec<_> = cleaner.parameters().iter().map(|(name, _)| *name).collect();
        for name in ["p_scan", "p_io", "t_lru_ms", "t_flush_ms"] {
            assert!(params.contains(&name), "{params:?}");
        }
        let logged: Vec<_> = cleaner.log().entries().map(|d| d.rule).collect();
        assert!(
            logged.contains(&"free_list_below_1pct_no_lru_sleep")
                || logged.contains(&"free_list_below_5pct_shortens_lru_sleep"),
            "free list never ran low: {:?}",
            &logged[..logged.len().min(20)]
        );
        assert!(logged.contains(&"adaptive_flushing"));
    }
}
