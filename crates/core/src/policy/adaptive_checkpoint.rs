//! `adaptive-checkpoint-reflex` and `adaptive-checkpoint-estimate`: XtraDB
//! 5.1's `innodb_adaptive_checkpoint` (paper 001, Percona blog "Which
//! adaptive should we use?", 2009).
//!
//! Both run in the InnoDB 5.1 master thread's 1-second loop (see
//! [`super::innodb_plugin`] for the loop, its `log_free_check` preflush, the
//! `innodb_max_dirty_pages_pct` rule and `PCT_IO`), in place of the plugin's
//! `innodb_adaptive_flushing`, which XtraDB checks first and which must be
//! OFF for these to run. No LRU batch: 5.1 user threads did LRU flushing.
//!
//! Source of every rule: `srv_master_thread` in XtraDB 5.1
//! (percona/percona-server `storage/innodb_plugin/srv/srv0srv.c`, the
//! `srv_adaptive_checkpoint == 1` and `== 2` branches). "max" is
//! `log_sys->max_checkpoint_age` (our `RedoMargins::max_checkpoint_age_bytes`)
//! and age is `lsn - buf_pool_get_oldest_modification()`; nothing happens
//! when nothing is dirty.
//!
//! # reflex (`srv_adaptive_checkpoint == 1`)
//! - age > max - max/8 (87.5%): no flush from here ("LOG_POOL_PREFLUSH_RATIO_ASYNC
//!   is exceeded. We should not flush from here"): the storm is the
//!   `log_free_check` preflush (`max - max/8` is exactly our
//!   `max_modified_age_async_bytes`);
//! - age > max - max/4 (75%), "2nd defence line": `PCT_IO(100)` pages, no LSN
//!   limit, skip the next sleep (strong constant flushing);
//! - age > max/2, "1st defence line": `PCT_IO(10)` pages, no LSN limit, skip
//!   the next sleep (weak constant flushing);
//! - else nothing.
//!
//! # estimate (`srv_adaptive_checkpoint == 2`)
//! - age > max - max/8: no flush from here (as reflex);
//! - age > start: with `lsn_old` the log head at the previous pass and, over
//!   the `n` dirty pages, `level = Σ (max - (lsn - oldest_modification_i))`,
//!   flush `bpl = n² x (lsn - lsn_old) / level` pages (x 7/8 when the
//!   doublewrite buffer is off: "flush is faster than when doublewrite") with
//!   LSN limit `oldest + (lsn - lsn_old)`; no skip of the sleep. Since
//!   `level = n x (max - average age)`, `bpl = n x Δlsn / (max - average
//!   age)`: the blog's dirty count, redo speed and average modified age;
//! - else nothing. `lsn_old` is set to the head on every pass.
//!
//! `start` is max/2 per the blog's table and the Percona 5.1 manual
//! (`innodb_adaptive_checkpoint`: "If the oldest modified age exceeds 1/2 of
//! the maximum age capacity"); the source we read compares against
//! `max_checkpoint_age / 4` under a comment saying "1/2", probably after the
//! blog's "estimate is adjusted more". [`EstimateStart`] selects either; the
//! 2009 constants could not be read.
//!
//! Invariants: reflex requests only 0, `PCT_IO(10)` or `PCT_IO(100)` pages
//! from its own rule; estimate's request is `bpl` with an LSN limit no older
//! than the oldest modification; neither flushes from its rule past 87.5%.

use crate::policy::innodb_plugin::{
    master_thread_plan, pct_io, MasterBatch, MasterLoop, MasterThreadConfig, MASTER_PARAM_GROUPS,
};
use crate::policy::{FlushListPlan, FlushPolicy, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};

pub const ENTRY_REFLEX: PolicyEntry = PolicyEntry {
    name: "adaptive-checkpoint-reflex",
    about: "Percona's adaptive_checkpoint=reflex (paper 001): flush by bands of the checkpoint age",
    params: MASTER_PARAM_GROUPS,
    build: |p| {
        Box::new(AdaptiveCheckpoint::new(AdaptiveCheckpointConfig {
            master: MasterThreadConfig::from_params(p),
            ..AdaptiveCheckpointConfig::reflex()
        }))
    },
};

pub const ENTRY_ESTIMATE: PolicyEntry = PolicyEntry {
    name: "adaptive-checkpoint-estimate",
    about: "Percona's adaptive_checkpoint=estimate (paper 001): flush at the rate the age grows",
    params: MASTER_PARAM_GROUPS,
    build: |p| {
        Box::new(AdaptiveCheckpoint::new(AdaptiveCheckpointConfig {
            master: MasterThreadConfig::from_params(p),
            ..AdaptiveCheckpointConfig::estimate()
        }))
    },
};
use crate::types::Lsn;

/// Which `innodb_adaptive_checkpoint` method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Reflex,
    Estimate,
}

/// Where estimate's band starts, as a divisor of `max_checkpoint_age`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimateStart {
    /// max/2: paper 001 and the Percona 5.1 manual.
    HalfOfMax,
    /// max/4: the later XtraDB 5.1 source.
    QuarterOfMax,
}

impl EstimateStart {
    fn age_bytes(self, max_bytes: u64) -> u64 {
        match self {
            EstimateStart::HalfOfMax => max_bytes / 2,
            EstimateStart::QuarterOfMax => max_bytes / 4,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveCheckpointConfig {
    pub method: Method,
    pub master: MasterThreadConfig,
    /// `innodb_doublewrite`: ON by default (paper 001 ran both).
    pub doublewrite: bool,
    pub estimate_start: EstimateStart,
}

impl AdaptiveCheckpointConfig {
    pub fn reflex() -> Self {
        Self {
            method: Method::Reflex,
            master: MasterThreadConfig::default(),
            doublewrite: true,
            estimate_start: EstimateStart::HalfOfMax,
        }
    }
    pub fn estimate() -> Self {
        Self {
            method: Method::Estimate,
            ..Self::reflex()
        }
    }
}

/// The band of the oldest modified age the last pass fell in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// Nothing dirty, or below the first line.
    Nothing = 0,
    /// Reflex 50-75%.
    Weak = 1,
    /// Reflex 75-87.5%.
    Strong = 2,
    /// Estimate's band.
    Estimate = 3,
    /// Past 87.5%: left to the `log_free_check` preflush.
    Storm = 4,
}

pub struct AdaptiveCheckpoint {
    config: AdaptiveCheckpointConfig,
    master: MasterLoop,
    /// `lsn_old`: the log head at the previous pass.
    lsn_old: Option<Lsn>,
    last_band: Band,
    last_age_pct: f64,
    last_pages: u32,
}

impl AdaptiveCheckpoint {
    pub fn new(config: AdaptiveCheckpointConfig) -> Self {
        Self {
            config,
            master: MasterLoop::default(),
            lsn_old: None,
            last_band: Band::Nothing,
            last_age_pct: 0.0,
            last_pages: 0,
        }
    }

    fn reflex(ctx: &mut PolicyCtx<'_>, io_capacity: u32, age: u64, max: u64) -> (Band, MasterBatch) {
        let pct = 100.0 * age as f64 / max.max(1) as f64;
        let constant = |pages: u32| MasterBatch {
            plan: FlushListPlan {
                pages,
                lsn_limit: Lsn::MAX,
            },
            skip_sleep: true,
        };
        if age > max - max / 8 {
            ctx.decide("reflex_storm", || {
                format!("age {age} B = {pct:.1}% of max {max} B > 87.5%: no flush from the master's rule")
            });
            (Band::Storm, MasterBatch::NONE)
        } else if age > max - max / 4 {
            let pages = pct_io(io_capacity, 100);
            ctx.decide("reflex_strong", || {
                format!("age {pct:.1}% of max > 75%: flush PCT_IO(100) = {pages} pages, skip sleep")
            });
            (Band::Strong, constant(pages))
        } else if age > max / 2 {
            let pages = pct_io(io_capacity, 10);
            ctx.decide("reflex_weak", || {
                format!("age {pct:.1}% of max > 50%: flush PCT_IO(10) = {pages} pages, skip sleep")
            });
            (Band::Weak, constant(pages))
        } else {
            ctx.decide("reflex_none", || format!("age {pct:.1}% of max <= 50%: nothing"));
            (Band::Nothing, MasterBatch::NONE)
        }
    }

    fn estimate(
        ctx: &mut PolicyCtx<'_>,
        config: &AdaptiveCheckpointConfig,
        lsn_old: Lsn,
        age: u64,
        max: u64,
    ) -> (Band, MasterBatch) {
        let pct = 100.0 * age as f64 / max.max(1) as f64;
        let start = config.estimate_start.age_bytes(max);
        if age > max - max / 8 {
            ctx.decide("estimate_storm", || {
                format!("age {age} B = {pct:.1}% of max {max} B > 87.5%: no flush from the master's rule")
            });
            return (Band::Storm, MasterBatch::NONE);
        }
        if age <= start {
            ctx.decide("estimate_none", || {
                format!("age {pct:.1}% of max <= start {start} B: nothing")
            });
            return (Band::Nothing, MasterBatch::NONE);
        }
        let pool = ctx.pool;
        let lsn = pool.current_lsn();
        // level = Σ (max - age_i) over the flush list. Every age_i <= age <=
        // 7/8 max here, so no term is negative.
        let mut level: u128 = 0;
        let pages = pool.flush_list_pages();
        for page in &pages {
            let frame = pool.lookup(*page).expect("a flush-list page is resident");
            let page_age = lsn.bytes_since(pool.oldest_modification_of(frame));
            level += u128::from(max.saturating_sub(page_age));
        }
        let n = pages.len() as u128;
        let progress = lsn.bytes_since(lsn_old);
        let mut bpl = (n * n * u128::from(progress)).checked_div(level).unwrap_or(0);
        if !config.doublewrite {
            bpl = bpl * 7 / 8;
        }
        let bpl = bpl.min(u128::from(u32::MAX)) as u32;
        let lsn_limit = pool.oldest_modification().advance(progress);
        ctx.decide("estimate_flush", || {
            let avg_age = level.checked_div(n).map_or(0, |per_page| u128::from(max) - per_page);
            format!(
                "age {pct:.1}% of max: n_dirty={n} x lsn progress={progress} B / (max {max} B - avg age {avg_age} B) \
                 = {bpl} pages{} below {lsn_limit}",
                if config.doublewrite {
                    ""
                } else {
                    " (x7/8, no doublewrite)"
                }
            )
        });
        let batch = if bpl > 0 {
            MasterBatch {
                plan: FlushListPlan { pages: bpl, lsn_limit },
                skip_sleep: false,
            }
        } else {
            MasterBatch::NONE
        };
        (Band::Estimate, batch)
    }
}

impl FlushPolicy for AdaptiveCheckpoint {
    fn name(&self) -> &'static str {
        match self.config.method {
            Method::Reflex => "adaptive-checkpoint-reflex",
            Method::Estimate => "adaptive-checkpoint-estimate",
        }
    }

    fn plan(&mut self, _ctx: &mut PolicyCtx<'_>) -> Plan {
        master_thread_plan()
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        let new_pass = self.master.starts_pass();
        let lsn = ctx.pool.current_lsn();
        let lsn_old = self.lsn_old.unwrap_or(lsn);
        let config = self.config;
        let mut band = self.last_band;
        let plan = self.master.plan_flush_list(ctx, &config.master, |ctx| {
            let pool = ctx.pool;
            if pool.dirty_pages() == 0 {
                band = Band::Nothing;
                return MasterBatch::NONE;
            }
            let age = pool.redo_age_bytes();
            let max = pool.redo().margins.max_checkpoint_age_bytes;
            let (b, batch) = match config.method {
                Method::Reflex => Self::reflex(ctx, config.master.io_capacity, age, max),
                Method::Estimate => Self::estimate(ctx, &config, lsn_old, age, max),
            };
            band = b;
            batch
        });
        if new_pass {
            // Every branch of the master loop sets lsn_old to the head.
            self.lsn_old = Some(lsn);
            let max = ctx.pool.redo().margins.max_checkpoint_age_bytes.max(1);
            self.last_age_pct = 100.0 * ctx.pool.redo_age_bytes() as f64 / max as f64;
            self.last_band = band;
        }
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
            ("band", f64::from(self.last_band as u8)),
            ("pages_requested", f64::from(self.last_pages)),
        ]
        .into_iter()
        .chain(self.config.master.free_page_path.parameters())
        .collect()
    }

    fn free_page_rule(&self) -> Option<crate::free_page_path::FreePageRule> {
        Some(self.config.master.free_page_path.resolve(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::policy::innodb_plugin::test_support::*;
    use crate::types::SECOND_US;

    fn reflex() -> AdaptiveCheckpoint {
        AdaptiveCheckpoint::new(AdaptiveCheckpointConfig::reflex())
    }

    fn estimate() -> AdaptiveCheckpoint {
        AdaptiveCheckpoint::new(AdaptiveCheckpointConfig::estimate())
    }

    /// A 64-frame pool with an 8 MiB log and 8 dirty pages, the oldest at
    /// `pct` percent of max_checkpoint_age.
    fn pool_at(pct: f64) -> crate::buffer_pool::BufferPool {
        let mut p = pool(64, 8 << 20);
        dirty(&mut p, 0, 8, |i| 1 + u64::from(i) * 1000);
        set_age_pct(&mut p, pct);
        p
    }

    #[test]
    fn reflex_below_half_of_max_age_does_nothing() {
        let pool = pool_at(40.0);
        let mut caller = Caller::new();
        let (plan, sleep) = caller.iterate(&mut reflex(), &pool, 0);
        assert_eq!(plan.pages, 0);
        assert_eq!(sleep.max_us, Some(SECOND_US));
        assert!(caller.fired("reflex_none"));
    }

    #[test]
    fn reflex_weak_band_flushes_constant_weak_amount() {
        let pool = pool_at(60.0);
        let mut caller = Caller::new();
        let mut policy = reflex();
        let (plan, sleep) = caller.iterate(&mut policy, &pool, 0);
        assert_eq!(plan.pages, 400, "PCT_IO(10) of 4000");
        assert_eq!(plan.lsn_limit, Lsn::MAX);
        assert_eq!(sleep, Sleep::none(), "the 1st defence line skips the sleep");
        assert!(caller.fired("reflex_weak"));
        assert!(policy.parameters().contains(&("band", 1.0)));
        // Constant: the same amount next time whatever the redo speed.
        let (plan, _) = caller.iterate(&mut policy, &pool, 1);
        assert_eq!(plan.pages, 400);
    }

    #[test]
    fn reflex_strong_band_flushes_constant_strong_amount() {
        let pool = pool_at(80.0);
        let mut caller = Caller::new();
        let (plan, sleep) = caller.iterate(&mut reflex(), &pool, 0);
        assert_eq!(plan.pages, 4000, "PCT_IO(100) = innodb_io_capacity");
        assert_eq!(plan.lsn_limit, Lsn::MAX);
        assert_eq!(sleep, Sleep::none());
        assert!(caller.fired("reflex_strong"));
    }

    #[test]
    fn reflex_above_87_5pct_leaves_storm_to_log_free_check_preflush() {
        let pool = pool_at(90.0);
        let margins = pool.redo().margins;
        // 87.5% of max_checkpoint_age is exactly InnoDB's async preflush age.
        let max = margins.max_checkpoint_age_bytes;
        assert_eq!(max - max / 8, margins.max_modified_age_async_bytes);
        let mut caller = Caller::new();
        let mut policy = reflex();
        let (plan, sleep) = caller.iterate(&mut policy, &pool, 0);
        assert!(caller.fired("reflex_storm"));
        assert!(caller.fired("log_free_check_async_preflush"));
        assert_eq!(plan.pages, u32::MAX, "the storm: everything below the target");
        let age = pool.redo_age_bytes();
        assert_eq!(
            plan.lsn_limit,
            pool.oldest_modification()
                .advance(age - margins.max_modified_age_async_bytes)
        );
        assert_eq!(sleep.max_us, Some(SECOND_US), "reflex adds no batch of its own");
        // Without the master's preflush the reflex rule flushes nothing.
        let mut config = AdaptiveCheckpointConfig::reflex();
        config.master.log_free_check_preflush = false;
        let (plan, _) = caller.iterate(&mut AdaptiveCheckpoint::new(config), &pool, 0);
        assert_eq!(plan.pages, 0);
    }

    #[test]
    fn estimate_below_half_does_nothing() {
        let mut pool = pool_at(40.0);
        let mut caller = Caller::new();
        let mut policy = estimate();
        caller.iterate(&mut policy, &pool, 0);
        // Redo moves on but the age stays under half of max.
        pool.note_redo(pool.current_lsn().advance(1000));
        let (plan, _) = caller.iterate(&mut policy, &pool, SECOND_US);
        assert_eq!(plan.pages, 0);
        assert!(caller.fired("estimate_none"));
        assert!(!caller.fired("estimate_flush"));
    }

    /// bpl after one second of `progress` bytes of redo that brings the
    /// oldest of `n` dirty pages to 60% of max (so the ages, and the headroom
    /// `max - average age`, are the same whatever the progress); also returns
    /// the independently computed expectation.
    fn estimate_after(n: u32, progress: u64, doublewrite: bool) -> (FlushListPlan, u64) {
        let mut pool = pool(256, 8 << 20);
        dirty(&mut pool, 0, n, |i| 1 + u64::from(i) * 100);
        let max = pool.redo().margins.max_checkpoint_age_bytes;
        let head = pool.oldest_modification().advance(max * 6 / 10 + 1);
        pool.note_redo(Lsn(head.0 - progress));
        let mut config = AdaptiveCheckpointConfig::estimate();
        config.doublewrite = doublewrite;
        let mut policy = AdaptiveCheckpoint::new(config);
        let mut caller = Caller::new();
        let (first, _) = caller.iterate(&mut policy, &pool, 0);
        assert_eq!(first.pages, 0, "no redo progress seen yet");
        let oldest = pool.oldest_modification();
        pool.note_redo(head);
        let (plan, sleep) = caller.iterate(&mut policy, &pool, SECOND_US);
        assert!(caller.fired("estimate_flush"));
        assert_eq!(sleep.max_us, Some(SECOND_US), "estimate does not skip the sleep");
        assert_eq!(plan.lsn_limit, oldest.advance(progress));
        let max = u128::from(pool.redo().margins.max_checkpoint_age_bytes);
        let lsn = u128::from(pool.current_lsn().0);
        let level: u128 = (0..n).map(|i| max - (lsn - u128::from(1 + u64::from(i) * 100))).sum();
        let mut expected = u128::from(n) * u128::from(n) * u128::from(progress) / level;
        if !doublewrite {
            expected = expected * 7 / 8;
        }
        (plan, expected as u64)
    }

    #[test]
    fn estimate_scales_with_redo_speed_and_dirty_pages() {
        let (base, expected) = estimate_after(100, 400_000, true);
        assert_eq!(u64::from(base.pages), expected);
        assert!(base.pages > 10, "{base:?}");
        // Twice the redo speed: twice the pages (integer rounding aside).
        let (fast, _) = estimate_after(100, 800_000, true);
        assert!(fast.pages.abs_diff(2 * base.pages) <= 1, "{fast:?} vs {base:?}");
        // Twice the dirty pages of about the same age: about twice the pages.
        let (more, expected) = estimate_after(200, 400_000, true);
        assert_eq!(u64::from(more.pages), expected);
        let ratio = f64::from(more.pages) / f64::from(base.pages);
        assert!((1.9..2.1).contains(&ratio), "{ratio}");
        // Without doublewrite, 7/8 of it.
        let (no_dw, expected) = estimate_after(100, 400_000, false);
        assert_eq!(u64::from(no_dw.pages), expected);
        assert!(no_dw.pages < base.pages);
    }

    #[test]
    fn estimate_quarter_start_flushes_between_quarter_and_half() {
        // 30% of max, then 1 MB of redo: about 46%, under half of max.
        let run = |start: EstimateStart| {
            let mut pool = pool_at(30.0);
            let mut config = AdaptiveCheckpointConfig::estimate();
            config.estimate_start = start;
            let mut policy = AdaptiveCheckpoint::new(config);
            let mut caller = Caller::new();
            caller.iterate(&mut policy, &pool, 0);
            pool.note_redo(pool.current_lsn().advance(1_000_000));
            assert!(pool.redo_age_bytes() < pool.redo().margins.max_checkpoint_age_bytes / 2);
            caller.iterate(&mut policy, &pool, SECOND_US).0
        };
        assert!(run(EstimateStart::QuarterOfMax).pages > 0);
        assert_eq!(run(EstimateStart::HalfOfMax).pages, 0);
    }

    /// The closed loop of [`run_workload`] with the dirty share under
    /// `innodb_max_dirty_pages_pct` and no user flushes, so every flush the
    /// loop sees comes from the policy's band (or the preflush), and every
    /// pass's band can be checked against the redo age the workload measured.
    /// The loop runs with 5.7's user path (users evict clean cold pages
    /// deeper than 5.1's free margin looks), so that only the policy's own
    /// rule writes; the 5.1 margin's batches are tested in `innodb_plugin`.
    fn run_loop(mut policy: AdaptiveCheckpoint) -> (Vec<LoopDecision>, BTreeMap<&'static str, usize>) {
        policy.config.master.free_page_path = crate::free_page_path::FreePagePath::MYSQL_5_7;
        let (cleaner, pool, summary) = run_workload(Box::new(policy), Workload::hot_updates_cold_reads(20_000));
        pool.check_invariants();
        let counts = rule_counts(&cleaner);
        println!(
            "{}: {counts:?}, redo age max {:.1}%",
            cleaner.policy_name(),
            summary.age_pct_max
        );
        assert!(cleaner.iterations() > 10);
        assert!(pool.redo_age_bytes() < pool.redo().config.capacity_bytes);
        assert!(summary.modified_ratio_pct_max <= 90, "{summary:?}");
        assert_eq!(
            counts.get("max_dirty_pages_pct"),
            None,
            "the policy's own rule runs every pass"
        );
        let c = pool.counters();
        assert_eq!(c.sync_replacement_writes, 0, "users evict clean cold pages");
        assert!(c.flush_list_pages > 0);
        (summary.decisions, counts)
    }

    #[test]
    fn reflex_loop_keeps_pool_invariants() {
        let (decisions, counts) = run_loop(reflex());
        // The age climbs through the "nothing" band to the 1st defence line,
        // whose PCT_IO(10) = 400 pages clean the whole pool; three cycles.
        assert!(counts.get("reflex_weak").copied().unwrap_or(0) >= 3, "{counts:?}");
        assert!(counts.get("reflex_none").copied().unwrap_or(0) >= 20, "{counts:?}");
        for d in &decisions {
            match d.rule {
                "reflex_none" => assert!(d.age_pct <= 50.0, "{d:?}"),
                "reflex_weak" => assert!(d.age_pct > 50.0 && d.age_pct <= 75.0, "{d:?}"),
                other => panic!("weak constant flushing holds the age: no {other} ({d:?})"),
            }
        }
    }

    #[test]
    fn estimate_loop_keeps_pool_invariants() {
        let (decisions, counts) = run_loop(estimate());
        assert!(counts.get("estimate_flush").copied().unwrap_or(0) >= 20, "{counts:?}");
        assert!(counts.get("estimate_none").copied().unwrap_or(0) >= 5, "{counts:?}");
        for d in &decisions {
            match d.rule {
                "estimate_none" => assert!(d.age_pct <= 50.0, "{d:?}"),
                "estimate_flush" => assert!(d.age_pct > 50.0 && d.age_pct <= 87.5, "{d:?}"),
                "estimate_storm" | "log_free_check_async_preflush" => assert!(d.age_pct > 87.5, "{d:?}"),
                other => panic!("unexpected {other} ({d:?})"),
            }
        }
        // The whole hot set is dirtied in the first 2 s, so when the age
        // first passes half of max the flush list is one old cluster that
        // estimate's share of it does not drain before 87.5%: the preflush
        // takes over once. After that the pages' ages are spread and estimate
        // alone holds the age in its band (about 70-80%): the last 15 passes.
        let tail: Vec<_> = decisions.iter().rev().take(15).collect();
        assert!(tail.iter().all(|d| d.rule == "estimate_flush"), "{tail:?}");
    }
}
