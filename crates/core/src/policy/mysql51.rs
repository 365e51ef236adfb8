//! `mysql51`: MySQL 5.1's built-in InnoDB, the server paper 003 measured
//! (MySQL 5.1.41). There is no page cleaner: the master thread flushes the
//! flush list on fixed rules, and user threads keep a margin of replaceable
//! frames by LRU flush batches of their own, during which every other user
//! that misses waits ([`FreePagePath::MYSQL_5_1`],
//! [`crate::free_page_path::FreeMargin`]). The latter is what stops the
//! server in 003's Figure 1.
//!
//! # The master thread (MySQL 5.1.45 `storage/innobase/srv/srv0srv.c`,
//! `srv_master_thread`; no `innodb_io_capacity` and no adaptive flushing,
//! which came with the InnoDB Plugin)
//! Ten one-second passes, then the ten-second block:
//! - a pass sleeps 1 s (`os_thread_sleep(1000000)`) unless the previous one
//!   set `skip_sleep`, then runs `log_free_check()` (past the async preflush
//!   age the master thread flushes the flush list itself:
//!   [`log_free_check_preflush`], shared with the Plugin policies), and if
//!   `buf_get_modified_ratio_pct() > innodb_max_dirty_pages_pct` (default
//!   90 in 5.1) flushes 100 pages from the flush list and sets `skip_sleep`;
//! - the ten-second block: if fewer than 3 I/Os are pending and fewer than
//!   200 page reads and writes happened in the ten passes, flush 100 pages;
//!   then "flush a few oldest pages": 100 if the modified ratio is over 70 %,
//!   else 10.
//!
//! Each rule is evaluated when its turn comes, after the writes of the rule
//! before it completed, as the master thread runs them one after the other.
//! Not modelled: the insert-buffer merges, purge and the idle server's
//! background loop (the workloads here never idle), and the log I/Os in the
//! ten-second I/O count (only page reads and writes are counted).
//!
//! Invariants: every flush-list request is 10 or 100 pages, or a preflush
//! (every page below its LSN target); the pass counter stays below 10.

use std::collections::VecDeque;

use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::innodb_plugin::{log_free_check_preflush, master_thread_plan, modified_ratio_pct};
use crate::policy::{FlushListPlan, FlushPolicy, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{Lsn, SECOND_US};

/// Pages of each master-thread flush (the constant 100 of 5.1's `srv0srv.c`).
pub const MASTER_FLUSH_PAGES: u32 = 100;
/// Pages of the ten-second block's small flush.
pub const MASTER_SMALL_FLUSH_PAGES: u32 = 10;
/// The ten-second block flushes 100 pages above this modified ratio.
pub const TEN_SECOND_RATIO_PCT: u64 = 70;
/// Passes of the one-second loop per ten-second block.
pub const PASSES_PER_BLOCK: u32 = 10;

const PARAMS: &[ParamDecl] = &[ParamDecl::int(
    "max_dirty_pages_pct",
    90,
    0,
    100,
    "innodb_max_dirty_pages_pct (5.1 default 90)",
)];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "mysql51",
    about: "MySQL 5.1's built-in InnoDB: master-thread flushing, users' free-margin LRU batches (paper 003)",
    params: &[PARAMS, crate::free_page_path::PARAMS_MYSQL_5_1],
    build: |p| Box::new(Mysql51::new(Mysql51Config::from_params(p))),
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mysql51Config {
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: u64,
    /// The users' side ([`FreePagePath::MYSQL_5_1`] by default).
    pub free_page_path: FreePagePath,
}

impl Mysql51Config {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            max_dirty_pages_pct: u64::from(p.u32("max_dirty_pages_pct")),
            free_page_path: FreePagePath::from_params(p),
        }
    }
}

impl Default for Mysql51Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

/// One rule of the master thread, evaluated when its turn comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `log_free_check()` in a one-second pass.
    Preflush,
    /// The modified ratio over `innodb_max_dirty_pages_pct`.
    MaxDirty,
    /// The ten-second block: 100 pages when the disk looks idle.
    IdleIo,
    /// The ten-second block: 100 or 10 of the oldest pages.
    OldestPages,
}

pub struct Mysql51 {
    config: Mysql51Config,
    /// Rules of the current pass still to evaluate.
    steps: VecDeque<Step>,
    /// One-second passes finished in the current ten-second block.
    passes: u32,
    skip_sleep: bool,
    /// Page reads and writes at the start of the ten-second block.
    ios_at_block_start: u64,
    last_pages: u32,
}

impl Mysql51 {
    pub fn new(config: Mysql51Config) -> Self {
        Self {
            config,
            steps: VecDeque::new(),
            passes: 0,
            skip_sleep: false,
            ios_at_block_start: 0,
            last_pages: 0,
        }
    }

    fn page_ios(ctx: &PolicyCtx<'_>) -> u64 {
        let c = ctx.pool.counters();
        c.reads + c.writes_completed
    }

    /// Evaluates `step` on the pool as it is now.
    fn evaluate(&mut self, ctx: &mut PolicyCtx<'_>, step: Step) -> FlushListPlan {
        let oldest = |pages| FlushListPlan {
            pages,
            lsn_limit: Lsn::MAX,
        };
        match step {
            Step::Preflush => log_free_check_preflush(ctx).unwrap_or(FlushListPlan::NONE),
            Step::MaxDirty => {
                let ratio = modified_ratio_pct(ctx.pool);
                if ratio <= self.config.max_dirty_pages_pct {
                    return FlushListPlan::NONE;
                }
                let max = self.config.max_dirty_pages_pct;
                ctx.decide("max_dirty_pages_pct", || {
                    format!(
                        "modified ratio {ratio}% > innodb_max_dirty_pages_pct {max}%: flush 100 pages, skip the sleep"
                    )
                });
                self.skip_sleep = true;
                oldest(MASTER_FLUSH_PAGES)
            }
            Step::IdleIo => {
                let pending = ctx.pool.pending_io();
                let ios = Self::page_ios(ctx).saturating_sub(self.ios_at_block_start);
                if pending >= 3 || ios >= 200 {
                    return FlushListPlan::NONE;
                }
                ctx.decide("ten_second_idle_io", || {
                    format!("{pending} I/Os pending, {ios} page I/Os in ten passes (< 3, < 200): flush 100 pages")
                });
                oldest(MASTER_FLUSH_PAGES)
            }
            Step::OldestPages => {
                let ratio = modified_ratio_pct(ctx.pool);
                let pages = if ratio > TEN_SECOND_RATIO_PCT {
                    MASTER_FLUSH_PAGES
                } else {
                    MASTER_SMALL_FLUSH_PAGES
                };
                ctx.decide("ten_second_oldest_pages", || {
                    format!("modified ratio {ratio}% (> {TEN_SECOND_RATIO_PCT}%: 100, else 10): flush {pages} pages")
                });
                oldest(pages)
            }
        }
    }
}

impl FlushPolicy for Mysql51 {
    fn name(&self) -> &'static str {
        "mysql51"
    }

    fn plan(&mut self, _ctx: &mut PolicyCtx<'_>) -> Plan {
        master_thread_plan()
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        if self.steps.is_empty() {
            // A new one-second pass (the sleep before it was the previous
            // iteration's).
            self.skip_sleep = false;
            self.steps.extend([Step::Preflush, Step::MaxDirty]);
            self.passes += 1;
            if self.passes == PASSES_PER_BLOCK {
                self.steps.extend([Step::IdleIo, Step::OldestPages]);
            }
        }
        while let Some(step) = self.steps.pop_front() {
            if matches!(step, Step::IdleIo) {
                // The block's checks close the ten passes.
                self.passes = 0;
            }
            let plan = self.evaluate(ctx, step);
            if step == Step::OldestPages {
                self.ios_at_block_start = Self::page_ios(ctx);
            }
            if plan.pages > 0 {
                self.last_pages = plan.pages;
                return plan;
            }
        }
        self.last_pages = 0;
        FlushListPlan::NONE
    }

    fn end_iteration(&mut self, _ctx: &mut PolicyCtx<'_>, _report: &IterationReport) -> Sleep {
        if !self.steps.is_empty() || self.skip_sleep {
            // The pass goes on with its next rule, or `skip_sleep`.
            self.skip_sleep = false;
            return Sleep::none();
        }
        Sleep::for_us(SECOND_US)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let mut params = vec![
            ("max_dirty_pages_pct", self.config.max_dirty_pages_pct as f64),
            ("pages_requested", f64::from(self.last_pages)),
        ];
        params.extend(self.config.free_page_path.parameters());
        params
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        Some(self.config.free_page_path.resolve(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer_pool::{FixIntent, FixOutcome, WriteKind};
    use crate::free_page_path::{FreeMargin, SinglePageFlush};
    use crate::policy::innodb_plugin::test_support::{dirty, pool, Caller};
    use crate::types::PageId;

    #[test]
    fn defaults_follow_5_1() {
        let p = Mysql51::new(Mysql51Config::default());
        assert_eq!(p.config.max_dirty_pages_pct, 90);
        assert_eq!(p.config.free_page_path, FreePagePath::MYSQL_5_1);
        let rule = p.free_page_rule().unwrap();
        assert_eq!(rule.single_page_flush, SinglePageFlush::FreeMarginBatch);
    }

    fn pool_with_dirty(n: u32) -> crate::buffer_pool::BufferPool {
        let mut pool = pool(1024, 64 << 20);
        dirty(&mut pool, 0, n, |i| u64::from(i) + 1);
        pool
    }

    #[test]
    fn master_flushes_100_over_max_dirty_and_skips_the_sleep() {
        let mut caller = Caller::new();
        // 950 of 1,024 frames dirty: 92 % > 90 %.
        let mut p = Mysql51::new(Mysql51Config::default());
        let (plan, sleep) = caller.iterate(&mut p, &pool_with_dirty(950), 0);
        assert_eq!(plan.pages, 100);
        assert_eq!(sleep, Sleep::none(), "skip_sleep after a max-dirty flush");
        assert!(caller.fired("max_dirty_pages_pct"));
        // 500 dirty (48 %): nothing in a one-second pass, then a 1 s sleep.
        let mut p = Mysql51::new(Mysql51Config::default());
        let (plan, sleep) = caller.iterate(&mut p, &pool_with_dirty(500), 0);
        assert_eq!(plan.pages, 0);
        assert_eq!(sleep, Sleep::for_us(SECOND_US));
    }

    #[test]
    fn the_ten_second_block_flushes_100_over_70_pct_else_10() {
        for (dirty_pages, expected) in [(800u32, 100u32), (500, 10)] {
            let pool = pool_with_dirty(dirty_pages);
            let mut p = Mysql51::new(Mysql51Config::default());
            let mut caller = Caller::new();
            let plans: Vec<_> = (0..11u64)
                .map(|s| caller.iterate(&mut p, &pool, s * SECOND_US))
                .collect();
            // Nine quiet passes with a 1 s sleep each.
            for (plan, sleep) in &plans[..9] {
                assert_eq!((plan.pages, *sleep), (0, Sleep::for_us(SECOND_US)));
            }
            // The tenth ends with the block. The pool saw no page read or
            // write (its pages were created), so the idle-I/O rule fires,
            // and the oldest-pages rule follows without a sleep.
            assert_eq!(
                plans[9],
                (
                    FlushListPlan {
                        pages: 100,
                        lsn_limit: Lsn::MAX
                    },
                    Sleep::none()
                )
            );
            assert_eq!(plans[10].0.pages, expected, "{dirty_pages} dirty");
            assert_eq!(plans[10].1, Sleep::for_us(SECOND_US));
            assert!(caller.fired("ten_second_idle_io"));
            assert!(caller.fired("ten_second_oldest_pages"));
        }
    }

    /// A pool of `frames` pages, all resident and dirty, none fixed.
    fn full_dirty_pool(frames: u32) -> crate::buffer_pool::BufferPool {
        let mut pool = pool(frames, 64 << 20);
        dirty(&mut pool, 0, frames, |i| u64::from(i) + 1);
        pool.set_free_page_rule(FreePagePath::MYSQL_5_1.resolve(1));
        pool
    }

    #[test]
    fn a_short_margin_makes_the_user_run_the_batch_and_others_wait_for_its_end() {
        let mut pool = full_dirty_pool(1024);
        let margin = FreeMargin::for_pool(1024);
        // No frame is free or clean: the first miss runs a batch of
        // margin + extra pages from the tail.
        let outcome = pool.fix(PageId::new(0, 5000), FixIntent::Read, 0, 0);
        assert_eq!(outcome, FixOutcome::UserLruBatch);
        let writes = pool.take_user_lru_batch();
        assert_eq!(writes.len() as u32, margin.margin_pages + margin.extra_pages);
        assert!(writes.iter().all(|w| w.kind == WriteKind::UserLruBatch));
        // The batch starts at the tail: the oldest pages created.
        assert_eq!(writes[0].page, PageId::new(0, 0));
        assert_eq!(pool.counters().sync_replacement_writes, 146);
        // While it runs, another user's miss waits; a hit is served.
        assert_eq!(
            pool.fix(PageId::new(0, 5001), FixIntent::Read, 0, 0),
            FixOutcome::NoFrame
        );
        assert!(matches!(
            pool.fix(PageId::new(0, 1000), FixIntent::Read, 0, 0),
            FixOutcome::Hit(_)
        ));
        // 20 pages written: fewer than the margin replaceable, and the
        // batch has not ended: still waiting.
        for w in &writes[..20] {
            pool.complete_write(w.frame);
        }
        assert_eq!(
            pool.fix(PageId::new(0, 5001), FixIntent::Read, 1, 0),
            FixOutcome::NoFrame
        );
        for w in &writes[20..] {
            pool.complete_write(w.frame);
        }
        pool.check_invariants();
        // Batch ended: 146 clean pages at the tail; both users get frames.
        assert!(matches!(
            pool.fix(PageId::new(0, 5000), FixIntent::Read, 1, 0),
            FixOutcome::Miss(_)
        ));
        assert!(matches!(
            pool.fix(PageId::new(0, 5001), FixIntent::Read, 2, 0),
            FixOutcome::Miss(_)
        ));
        assert_eq!(pool.counters().wait_free, 2, "one wait per request");
    }

    #[test]
    fn the_margin_holds_until_fewer_than_margin_pages_are_replaceable() {
        let mut pool = full_dirty_pool(1024);
        let margin = FreeMargin::for_pool(1024);
        assert_eq!(
            pool.fix(PageId::new(0, 5000), FixIntent::Read, 0, 0),
            FixOutcome::UserLruBatch
        );
        for w in pool.take_user_lru_batch() {
            pool.complete_write(w.frame);
        }
        // 146 clean at the tail, 69 of them within the search length: the
        // margin (37) holds until 69 - 37 + 1 = 33 misses took clean frames.
        let mut misses = 0u32;
        loop {
            let page = PageId::new(0, 6000 + misses);
            match pool.fix(page, FixIntent::Read, 0, 0) {
                FixOutcome::Miss(f) => {
                    pool.complete_read(f);
                    pool.unfix(f);
                    misses += 1;
                }
                FixOutcome::UserLruBatch => break,
                other => panic!("after {misses} misses: {other:?}"),
            }
        }
        // Each miss takes the clean page at the tail, and a new (clean,
        // unmodified) page enters the old sublist far from the tail, so the
        // window slides over the written pages: 146 - 37 + 1 misses.
        assert_eq!(misses, 146 - margin.margin_pages + 1, "batch after {misses} misses");
        let writes = pool.take_user_lru_batch();
        // 36 replaceable left: 37 + 109 - 36 = 110 pages, paper 003's ~111.
        assert_eq!(writes.len(), 110);
    }
}
