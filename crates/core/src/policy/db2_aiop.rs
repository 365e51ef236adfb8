//! `db2-aiop`: the self-tuning page cleaner of Wang & Bunt (paper 002, §7).
//!
//! One cleaner (§8.2: "with more than one page cleaner, the throughput is
//! bursty ... only results with one page cleaner are discussed") keeps the
//! share of page-cleaner writes among all pending I/O at a target AioP in
//! [0, 1]. T = [`BufferPool::pending_io`], A = [`BufferPool::pending_async_writes`].
//!
//! - **Sending** (§7 steps 1-3). Woken by a Db2 cleaning event (the triggers
//!   of [`super::db2`]), it sends n pages, the least integer with
//!   `(A + n) / (T + n) >= AioP`, i.e. `n = ceil((AioP x T - A) / (1 - AioP))`
//!   (the paper's formula, rounded up so that the share is reached, as step
//!   3(a) "send until A/T = AioP" does one write at a time). n = 0 when
//!   `A/T >= AioP` or AioP = 0; with T = 0 and AioP > 0 one page is sent
//!   (0/0 counts as a share below target); AioP = 1 has no finite n, and every
//!   n is capped at `max_pages_per_send` (a limit on everything). Writes are
//!   awaited with [`WaitFor::AnyWrite`]: after each completion the cleaner
//!   re-checks A/T and sends more, or sleeps with `wake_on_write_completion`.
//! - **Tuning** (§7). Every interval I (100 ms, §8.2: "about 10 times of the
//!   average disk access time"), with D the dirty share of the pool:
//!   `AioP <- AioP x (1 + delta_d x (D_n - D_{n-1}) / D_{n-1} + delta_s x S)`,
//!   `delta_d` = `delta_dirty_up` if D grew else `delta_dirty_down`, then
//!   clamped to [0, 1]. All three deltas default to 7.5 (§7, the simulation
//!   value; the DB2 runs of §8.2 used delta_s = 0).
//!
//! # Choices the paper leaves open (ours, documented)
//! - **S.** The paper defines S as "current number of pending synchronous
//!   writes in the whole buffer pool", sampled at the check. That is the
//!   default ([`SyncWriteMeasure::PendingAtCheck`], replacement and
//!   recoverability writes). [`SyncWriteMeasure::IssuedInInterval`] counts
//!   the synchronous writes issued during the interval instead: less noisy,
//!   but by Little's law about I / (disk access time) = 10 times larger on
//!   average, so delta_s = 7.5 would act ten times harder. Both are reported.
//! - **AioP = 0.** The paper starts AioP at 0 (Figure 14 shows it growing
//!   from there) but a multiplicative rule never leaves 0, and the text does
//!   not say how it does. Smallest fix: when AioP is below `aiop_floor`
//!   (0.01) and the factor would raise it, the factor is applied to the floor
//!   instead (rule `aiop_seeded_from_floor`).
//! - **D_{n-1} = 0** (an empty or all-clean pool): the relative change divides
//!   by one page's share (1 / frames) instead.
//! - **When it cleans.** Only while a Db2 trigger holds: dirty pages over
//!   `chngpgs_thresh`, a dirty replacement within the last interval, or the
//!   redo age over softmax. The tuning runs every interval regardless.
//! - **Which pages.** As `db2`: the LRU tail, written and left resident
//!   ([`LruMode::CleanOnly`]) for the threshold and replacement triggers, the
//!   oldest pages of the flush list for softmax. The driver scans exactly n
//!   pages from the tail (its scan depth is also its write budget), and those
//!   are often clean or already in flight from the previous send; so the
//!   flush-list phase then tops up to the target share with the oldest dirty
//!   pages (no LSN limit under an LRU trigger; the softmax limit otherwise).
//!
//! # Invariants
//! - 0 <= AioP <= 1 after every adjustment.
//! - At most `max_pages_per_send` writes are issued per send.
//! - A send never pushes A/T past the smallest share >= AioP reachable with
//!   whole pages.
//! - Every sleep ends at the next tuning instant at the latest.

use crate::buffer_pool::{BufferPool, LruMode, WakeThresholds, WriteKind};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::db2::{Db2Triggers, Triggered, DIRTY_PAGE_THRESHOLD_PCT, SOFTMAX_PCT};
use crate::policy::{
    FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep, WaitFor,
    LRU_CHUNK_PAGES,
};
use crate::types::{Lsn, TimeUs};

/// `db2-aiop`'s parameters (the tuning rule's constants, §7 and §8.2).
pub const PARAMS: &[ParamDecl] = &[
    DIRTY_PAGE_THRESHOLD_PCT,
    SOFTMAX_PCT,
    ParamDecl::float(
        "delta_dirty_up",
        7.5,
        0.0,
        1000.0,
        "delta_d-up: AioP rise per dirty-threshold breach (§7: 7.5)",
    ),
    ParamDecl::float(
        "delta_dirty_down",
        7.5,
        0.0,
        1000.0,
        "delta_d-down: AioP fall when under the threshold (§7: 7.5)",
    ),
    ParamDecl::float(
        "delta_sync",
        7.5,
        0.0,
        1000.0,
        "delta_s: AioP rise per synchronous write (§7: 7.5)",
    ),
    ParamDecl::int(
        "interval_us",
        100_000,
        1,
        3_600_000_000,
        "I: the tuning interval (§8.2: 100 ms)",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "db2-aiop",
    about: "Ou et al.'s AioP (paper 002): a target share of the device's writes in flight, tuned every I",
    params: &[PARAMS],
    build: |p| Box::new(Db2Aiop::new(Db2AiopConfig::from_params(p))),
};

/// What S, the synchronous-write term of the tuning rule, counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncWriteMeasure {
    /// Synchronous writes in flight at the check (the paper's definition).
    PendingAtCheck,
    /// Synchronous writes issued during the interval.
    IssuedInInterval,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Db2AiopConfig {
    /// `chngpgs_thresh`: 60 (%), as `db2`.
    pub dirty_page_threshold_pct: f64,
    /// `softmax` as % of the redo capacity, as `db2`.
    pub softmax_pct: f64,
    /// AioP at start: 0, as in the paper's Figure 14.
    pub initial_aiop: f64,
    /// Seed for a multiplicative rise from (near) zero: 0.01 (ours).
    pub aiop_floor: f64,
    /// delta_d-up: 7.5 (§7).
    pub delta_dirty_up: f64,
    /// delta_d-down: 7.5 (§7).
    pub delta_dirty_down: f64,
    /// delta_s: 7.5 (§7).
    pub delta_sync: f64,
    /// I: 100 ms (§8.2).
    pub interval_us: TimeUs,
    /// Most pages one send may issue: [`LRU_CHUNK_PAGES`] (100), the
    /// driver's LRU batch; bounds AioP = 1.
    pub max_pages_per_send: u32,
    pub sync_measure: SyncWriteMeasure,
}

impl Default for Db2AiopConfig {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Db2AiopConfig {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            dirty_page_threshold_pct: p.f64("dirty_page_threshold_pct"),
            softmax_pct: p.f64("softmax_pct"),
            initial_aiop: 0.0,
            aiop_floor: 0.01,
            delta_dirty_up: p.f64("delta_dirty_up"),
            delta_dirty_down: p.f64("delta_dirty_down"),
            delta_sync: p.f64("delta_sync"),
            interval_us: p.u64("interval_us"),
            max_pages_per_send: LRU_CHUNK_PAGES,
            sync_measure: SyncWriteMeasure::PendingAtCheck,
        }
    }
}

/// Pages to send so that the share of pending asynchronous writes reaches
/// `aiop`: the least n with `(a + n) / (t + n) >= aiop`, capped at `cap`.
pub fn pages_to_send(aiop: f64, a: u32, t: u32, cap: u32) -> u32 {
    debug_assert!(a <= t, "A={a} > T={t}");
    if aiop <= 0.0 {
        return 0;
    }
    if t > 0 && f64::from(a) / f64::from(t) >= aiop {
        return 0;
    }
    if aiop >= 1.0 {
        return cap;
    }
    let n = (aiop * f64::from(t) - f64::from(a)) / (1.0 - aiop);
    // The tolerance keeps an exact integer from rounding up to the next one.
    let n = (n - 1e-9).ceil().max(1.0);
    if n >= f64::from(cap) {
        cap
    } else {
        n as u32
    }
}

pub struct Db2Aiop {
    config: Db2AiopConfig,
    triggers: Db2Triggers,
    aiop: f64,
    /// D_{n-1}; `None` until the first poll sets the baseline.
    prev_dirty_share: Option<f64>,
    /// D at the last check.
    dirty_share: f64,
    next_check_us: TimeUs,
    sync_writes_at_check: u64,
    /// Synchronous writes issued during the last finished interval.
    interval_sync_writes: u64,
    /// S as used by the last adjustment.
    sync_term: f64,
    replacements_seen: u64,
    /// A dirty replacement keeps the cleaner active until then.
    replacement_active_until_us: TimeUs,
    lru_active: bool,
    /// Pages asked for by the last send (LRU phase or flush-list top-up).
    last_sent: u32,
}

impl Db2Aiop {
    pub fn new(config: Db2AiopConfig) -> Self {
        let triggers = Db2Triggers {
            dirty_page_threshold_pct: config.dirty_page_threshold_pct,
            softmax_pct: config.softmax_pct,
        };
        triggers.assert_valid();
        assert!(
            (0.0..=1.0).contains(&config.initial_aiop),
            "initial AioP {} outside [0, 1]",
            config.initial_aiop
        );
        assert!(
            config.aiop_floor > 0.0 && config.aiop_floor <= 1.0,
            "aiop_floor {} outside (0, 1]",
            config.aiop_floor
        );
        assert!(config.interval_us > 0, "the tuning interval must be positive");
        assert!(config.max_pages_per_send >= 1, "max_pages_per_send must be at least 1");
        Self {
            aiop: config.initial_aiop,
            config,
            triggers,
            prev_dirty_share: None,
            dirty_share: 0.0,
            next_check_us: 0,
            sync_writes_at_check: 0,
            interval_sync_writes: 0,
            sync_term: 0.0,
            replacements_seen: 0,
            replacement_active_until_us: 0,
            lru_active: false,
            last_sent: 0,
        }
    }

    pub fn aiop(&self) -> f64 {
        self.aiop
    }

    fn dirty_share_of(pool: &BufferPool) -> f64 {
        f64::from(pool.dirty_pages()) / f64::from(pool.frame_count())
    }

    fn sync_writes_pending(pool: &BufferPool) -> u32 {
        pool.pending_writes(WriteKind::SyncReplacement) + pool.pending_writes(WriteKind::SyncRecoverability)
    }

    /// Runs the §7 adjustment if an interval ended (at most once per call:
    /// a cleaner that slept through several intervals sees one long one).
    fn adjust_if_due(&mut self, ctx: &mut PolicyCtx<'_>) {
        let now = ctx.now_us;
        let d = Self::dirty_share_of(ctx.pool);
        let sync_total = ctx.pool.counters().sync_writes();
        let Some(prev) = self.prev_dirty_share else {
            self.prev_dirty_share = Some(d);
            self.dirty_share = d;
            self.sync_writes_at_check = sync_total;
            self.next_check_us = now + self.config.interval_us;
            return;
        };
        if now < self.next_check_us {
            return;
        }
        self.interval_sync_writes = sync_total - self.sync_writes_at_check;
        let s = match self.config.sync_measure {
            SyncWriteMeasure::PendingAtCheck => f64::from(Self::sync_writes_pending(ctx.pool)),
            SyncWriteMeasure::IssuedInInterval => self.interval_sync_writes as f64,
        };
        let one_page_share = 1.0 / f64::from(ctx.pool.frame_count());
        let relative_change = (d - prev) / prev.max(one_page_share);
        let delta_dirty = if d > prev {
            self.config.delta_dirty_up
        } else {
            self.config.delta_dirty_down
        };
        let factor = 1.0 + delta_dirty * relative_change + self.config.delta_sync * s;
        let old = self.aiop;
        let base = if old < self.config.aiop_floor && factor > 1.0 {
            let floor = self.config.aiop_floor;
            ctx.decide("aiop_seeded_from_floor", || {
                format!("AioP={old} < floor={floor} and factor={factor:.4} > 1: the factor applies to the floor")
            });
            floor
        } else {
            old
        };
        let raw = base * factor;
        let new = raw.clamp(0.0, 1.0);
        let detail = || {
            format!(
                "D {prev:.4} -> {d:.4} (rel {relative_change:+.4}, delta_d={delta_dirty}), S={s} \
                 (issued in interval {}), factor={factor:.4}: AioP {old:.6} -> {new:.6}",
                self.interval_sync_writes
            )
        };
        let rule = if new > old {
            "aiop_raised"
        } else if new < old {
            "aiop_lowered"
        } else {
            "aiop_kept"
        };
        ctx.decide(rule, detail);
        if raw != new {
            ctx.decide("aiop_clamped", || format!("AioP {raw:.6} clamped to {new}"));
        }
        self.aiop = new;
        self.sync_term = s;
        self.prev_dirty_share = Some(d);
        self.dirty_share = d;
        self.sync_writes_at_check = sync_total;
        self.next_check_us = now + self.config.interval_us;
    }

    /// The triggers now; a dirty replacement keeps LRU cleaning on for one
    /// interval. Returns (LRU trigger, softmax trigger, details).
    fn triggers_now(&mut self, ctx: &PolicyCtx<'_>) -> (bool, bool, Triggered) {
        let t = self.triggers.check(ctx.pool, self.replacements_seen);
        self.replacements_seen = ctx.pool.counters().sync_replacement_writes;
        if t.replacement() {
            self.replacement_active_until_us = ctx.now_us + self.config.interval_us;
        }
        let lru = t.dirty_over() || ctx.now_us < self.replacement_active_until_us;
        (lru, t.softmax_over(), t)
    }

    fn until_next_check(&self, now_us: TimeUs) -> TimeUs {
        self.next_check_us.saturating_sub(now_us).max(1)
    }

    /// Waiting for the share to drop below AioP (or for a trigger).
    fn wait_for_completion(&self, now_us: TimeUs) -> Sleep {
        Sleep {
            max_us: Some(self.until_next_check(now_us)),
            wake_on_event: true,
            wake_on_write_completion: true,
        }
    }

    fn idle(&self, now_us: TimeUs) -> Sleep {
        Sleep {
            max_us: Some(self.until_next_check(now_us)),
            wake_on_event: true,
            wake_on_write_completion: false,
        }
    }

    fn target_pages(&self, pool: &BufferPool) -> (u32, u32, u32) {
        let a = pool.pending_async_writes();
        let t = pool.pending_io();
        (pages_to_send(self.aiop, a, t, self.config.max_pages_per_send), a, t)
    }
}

impl FlushPolicy for Db2Aiop {
    fn name(&self) -> &'static str {
        "db2-aiop"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        self.adjust_if_due(ctx);
        let (lru, softmax, t) = self.triggers_now(ctx);
        self.lru_active = lru;
        if !lru && !softmax {
            ctx.decide("sleep_until_trigger", || t.describe());
            return Plan::Sleep(self.idle(ctx.now_us));
        }
        Db2Triggers::record(ctx, &t);
        let (n, a, total) = self.target_pages(ctx.pool);
        let aiop = self.aiop;
        if n == 0 {
            ctx.decide("share_reached_wait", || {
                format!("A={a}, T={total}, AioP={aiop:.6}: no write until a completion lowers A/T")
            });
            return Plan::Sleep(self.wait_for_completion(ctx.now_us));
        }
        self.last_sent = n;
        ctx.decide("send_to_target_share", || {
            format!("A={a}, T={total}, AioP={aiop:.6}: send n={n} (LRU tail first: {lru})")
        });
        Plan::Flush(IterationPlan {
            lru_scan_depth: if lru { n } else { 0 },
            lru_mode: LruMode::CleanOnly,
            lru_time_limit_us: None,
            flush_time_limit_us: None,
            flush_batch_pages: self.config.max_pages_per_send,
            lru_chunk_pages: LRU_CHUNK_PAGES,
            lru_dirty_grace: None,
            wait: WaitFor::AnyWrite,
        })
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        let (n, a, total) = self.target_pages(ctx.pool);
        let softmax = ctx.pool.redo_age_bytes() > self.triggers.softmax_bytes(ctx.pool);
        if n == 0 || !(self.lru_active || softmax) {
            return FlushListPlan::NONE;
        }
        let lsn_limit = if self.lru_active {
            Lsn::MAX
        } else {
            self.triggers.softmax_lsn_limit(ctx.pool)
        };
        let rule = if self.lru_active {
            "top_up_from_flush_list"
        } else {
            "softmax_flush_oldest"
        };
        self.last_sent = n;
        ctx.decide(rule, || {
            format!("A={a}, T={total}: {n} oldest pages below LSN {lsn_limit} to reach AioP")
        });
        FlushListPlan { pages: n, lsn_limit }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        let written = report.np_lru + report.np_flush;
        let (lru, softmax, _) = self.triggers_now(ctx);
        if !lru && !softmax {
            return self.idle(ctx.now_us);
        }
        let (n, a, total) = self.target_pages(ctx.pool);
        if written > 0 && n > 0 {
            let aiop = self.aiop;
            ctx.decide("write_completed_below_share", || {
                format!("A={a}, T={total} < AioP={aiop:.6}: send more at once")
            });
            return Sleep::none();
        }
        self.wait_for_completion(ctx.now_us)
    }

    fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        self.triggers.wake_thresholds(pool)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("aiop", self.aiop),
            ("dirty_share", self.dirty_share),
            ("interval_sync_writes", self.interval_sync_writes as f64),
            ("sync_term_s", self.sync_term),
            ("pages_last_send", f64::from(self.last_sent)),
            ("interval_ms", self.config.interval_us as f64 / 1000.0),
            ("dirty_page_threshold_pct", self.config.dirty_page_threshold_pct),
            ("softmax_pct", self.config.softmax_pct),
            ("cleaners", 1.0),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer_pool::{FixIntent, FixOutcome, FreeCheck};
    use crate::cleaner::{CleanerAction, PageCleaner};
    use crate::decision_log::DecisionLog;
    use crate::policy::db2::tests::{
        complete_all, create_clean, create_dirty, create_fixed, pool, REDO_PER_CHANGE_BYTES,
    };
    use crate::types::PageId;

    const I_US: TimeUs = 100_000;

    fn policy(initial_aiop: f64) -> Db2Aiop {
        Db2Aiop::new(Db2AiopConfig {
            initial_aiop,
            ..Db2AiopConfig::default()
        })
    }

    /// Polls `plan` at `now_us` (which runs a due adjustment).
    fn tick(p: &mut Db2Aiop, pool: &BufferPool, now_us: TimeUs, log: &mut DecisionLog) -> Plan {
        let mut ctx = PolicyCtx {
            pool,
            now_us,
            cleaner: 0,
            policy_name: "db2-aiop",
            log,
        };
        p.plan(&mut ctx)
    }

    fn dirty_pool(dirty: u32) -> BufferPool {
        let mut pool = pool(1024);
        for page in 0..dirty {
            create_dirty(&mut pool, page);
        }
        pool
    }

    /// Cleans `pages` of the oldest dirty pages (writes completed at once).
    fn clean_oldest(pool: &mut BufferPool, pages: u32) {
        let (writes, _) = pool.flush_list_batch(pages, Lsn::MAX, WriteKind::FlushList);
        complete_all(pool, &writes);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn aiop_sends_n_pages_to_reach_target_share() {
        // The formula: n = (AioP T - A) / (1 - AioP), rounded up.
        assert_eq!(pages_to_send(0.5, 2, 10, 100), 6); // (5 - 2) / 0.5
        assert_eq!(pages_to_send(0.25, 0, 9, 100), 3); // 2.25 / 0.75
        assert_eq!(pages_to_send(0.3, 1, 10, 100), 3); // 2 / 0.7 = 2.86
        assert_eq!(pages_to_send(0.5, 5, 10, 100), 0, "A/T = AioP: nothing to send");
        assert_eq!(pages_to_send(0.0, 0, 10, 100), 0);
        assert_eq!(pages_to_send(0.01, 0, 0, 100), 1, "idle disks: one page");
        assert_eq!(pages_to_send(1.0, 3, 10, 100), 100, "AioP = 1: the cap");
        assert_eq!(pages_to_send(0.99, 0, 1000, 100), 100, "capped");
        for (aiop, a, t) in [(0.5, 2, 10), (0.25, 0, 9), (0.3, 1, 10), (0.7, 4, 33)] {
            let n = pages_to_send(aiop, a, t, u32::MAX);
            assert!(f64::from(a + n) / f64::from(t + n) >= aiop);
            assert!(
                f64::from(a + n - 1) / f64::from(t + n - 1) < aiop,
                "n={n} is not the least"
            );
        }

        // In the pool: A = 2 cleaner writes and 8 reads in flight, T = 10.
        let mut pool = pool(1024);
        let frames: Vec<_> = (0..20).map(|p| create_fixed(&mut pool, p)).collect();
        // Modified newest-first so the flush list's oldest pages (written
        // below to make A) are the LRU's newest, away from the tail.
        for &frame in frames.iter().rev() {
            let start = pool.current_lsn();
            pool.note_modification(frame, start, start.advance(REDO_PER_CHANGE_BYTES));
            pool.unfix(frame);
        }
        // Clean pages above them: the LRU batch works only on an LRU longer
        // than `lru_min_len` (128 here); below `lru_old_min_len` (256) there
        // is no midpoint, so page 0 is the tail.
        for page in 20..150 {
            create_clean(&mut pool, page);
        }
        let (in_flight, _) = pool.flush_list_batch(2, Lsn::MAX, WriteKind::FlushList);
        for page in 1000..1008 {
            assert!(matches!(
                pool.fix(PageId::new(0, page), FixIntent::Read, 0, 0),
                FixOutcome::Miss(_)
            ));
        }
        assert_eq!((pool.pending_async_writes(), pool.pending_io()), (2, 10));
        let config = Db2AiopConfig {
            initial_aiop: 0.5,
            dirty_page_threshold_pct: 1.0, // 10 pages: 20 dirty wake it
            ..Db2AiopConfig::default()
        };
        let mut pc = PageCleaner::new(Box::new(Db2Aiop::new(config)), &mut pool, DecisionLog::new(64, true));
        let CleanerAction::Write { writes, wait } = pc.poll(&mut pool, 0, 0) else {
            panic!("expected a send");
        };
        assert_eq!(wait, WaitFor::AnyWrite);
        assert_eq!(writes.len(), 6);
        assert!(writes.iter().all(|w| w.kind == WriteKind::CleanerClean));
        let tail: Vec<u32> = writes.iter().map(|w| w.page.page_no).collect();
        assert_eq!(tail, vec![0, 1, 2, 3, 4, 5], "the six pages at the LRU tail");
        assert_eq!((pool.pending_async_writes(), pool.pending_io()), (8, 16), "A/T = AioP");
        pool.check_invariants();
        // One write completes: A/T = 7/15 < 0.5, so the cleaner sends one more.
        pool.complete_write(writes[0].frame);
        let CleanerAction::Write { writes: more, .. } = pc.poll(&mut pool, 0, 10) else {
            panic!("expected a top-up");
        };
        assert_eq!(more.len(), 1);
        assert_eq!((pool.pending_async_writes(), pool.pending_io()), (8, 16));
        // Another completion is needed before anything else is sent.
        let CleanerAction::Sleep(sleep) = pc.poll(&mut pool, 0, 20) else {
            panic!("expected a wait");
        };
        assert!(sleep.wake_on_write_completion && sleep.max_us.is_some());
        complete_all(&mut pool, &writes[1..]);
        complete_all(&mut pool, &more);
        complete_all(&mut pool, &in_flight);
        assert!(pc.parameters().contains(&("pages_last_send", 1.0)));
    }

    #[test]
    fn aiop_more_dirty_pages_raise_aiop() {
        let mut log = DecisionLog::new(64, true);
        let mut pool = dirty_pool(100);
        let mut p = policy(0.2);
        tick(&mut p, &pool, 0, &mut log); // baseline D_0
        for page in 100..110 {
            create_dirty(&mut pool, page);
        }
        tick(&mut p, &pool, I_US, &mut log);
        // D up 10 %: AioP x (1 + 7.5 x 0.1).
        assert!(close(p.aiop(), 0.2 * 1.75), "{}", p.aiop());

        // From the paper's start at 0 the floor seeds the rise.
        let mut p = policy(0.0);
        tick(&mut p, &pool, 0, &mut log);
        for page in 110..121 {
            create_dirty(&mut pool, page);
        }
        tick(&mut p, &pool, I_US, &mut log);
        assert!(close(p.aiop(), 0.01 * 1.75), "{}", p.aiop());
        assert!(log.entries().any(|d| d.rule == "aiop_seeded_from_floor"));
        pool.check_invariants();
    }

    #[test]
    fn aiop_fewer_dirty_pages_lower_aiop() {
        let mut log = DecisionLog::new(64, true);
        let mut pool = dirty_pool(100);
        let mut p = policy(0.2);
        tick(&mut p, &pool, 0, &mut log);
        clean_oldest(&mut pool, 10);
        tick(&mut p, &pool, I_US, &mut log);
        // D down 10 %: AioP x (1 - 7.5 x 0.1).
        assert!(close(p.aiop(), 0.2 * 0.25), "{}", p.aiop());
        // A small drop keeps falling multiplicatively, never below 0.
        clean_oldest(&mut pool, 1);
        tick(&mut p, &pool, 2 * I_US, &mut log);
        assert!(p.aiop() > 0.0 && p.aiop() < 0.05);
        assert!(log.entries().any(|d| d.rule == "aiop_lowered"));
    }

    #[test]
    fn aiop_sync_writes_raise_aiop() {
        let mut log = DecisionLog::new(64, true);
        let mut pool = pool(1024);
        create_dirty(&mut pool, 0);
        let sync_margin = pool.redo().margins.max_modified_age_sync_bytes;
        pool.note_redo(pool.current_lsn().advance(sync_margin));
        for page in 1..100 {
            create_dirty(&mut pool, page);
        }
        let mut p = policy(0.05);
        tick(&mut p, &pool, 0, &mut log);
        // A writer past the sync margin writes page 0 itself; still in flight
        // at the check: S = 1 pending synchronous write, D unchanged.
        let FreeCheck::SyncFlush(sync) = pool.redo_free_check() else {
            panic!("expected a synchronous recoverability write");
        };
        assert_eq!(sync.len(), 1);
        tick(&mut p, &pool, I_US, &mut log);
        assert!(close(p.aiop(), 0.05 * (1.0 + 7.5)), "{}", p.aiop());
        assert!(p.parameters().contains(&("interval_sync_writes", 1.0)));
        assert!(p.parameters().contains(&("sync_term_s", 1.0)));
        complete_all(&mut pool, &sync);

        // Counting writes issued in the interval sees it after completion too.
        let mut p = Db2Aiop::new(Db2AiopConfig {
            initial_aiop: 0.05,
            sync_measure: SyncWriteMeasure::IssuedInInterval,
            ..Db2AiopConfig::default()
        });
        tick(&mut p, &pool, 0, &mut log);
        pool.note_redo(pool.current_lsn().advance(sync_margin));
        let FreeCheck::SyncFlush(sync) = pool.redo_free_check() else {
            panic!("expected synchronous recoverability writes");
        };
        let issued = sync.len() as f64;
        let d0 = f64::from(pool.dirty_pages()) / 1024.0;
        complete_all(&mut pool, &sync);
        let d1 = f64::from(pool.dirty_pages()) / 1024.0;
        tick(&mut p, &pool, I_US, &mut log);
        let expected = 0.05 * (1.0 + 7.5 * (d1 - d0) / d0 + 7.5 * issued);
        assert!(close(p.aiop(), expected.min(1.0)), "{} vs {expected}", p.aiop());
        assert!(p.aiop() > 0.05);
    }

    #[test]
    fn aiop_is_clamped_to_unit_interval() {
        let mut log = DecisionLog::new(64, true);
        let mut pool = dirty_pool(100);
        let mut p = policy(0.9);
        tick(&mut p, &pool, 0, &mut log);
        for page in 100..150 {
            create_dirty(&mut pool, page);
        }
        tick(&mut p, &pool, I_US, &mut log);
        assert_eq!(p.aiop(), 1.0, "0.9 x (1 + 7.5 x 0.5) clamps to 1");
        clean_oldest(&mut pool, 75);
        tick(&mut p, &pool, 2 * I_US, &mut log);
        assert_eq!(p.aiop(), 0.0, "1 x (1 - 7.5 x 0.5) clamps to 0");
        assert!(log.entries().filter(|d| d.rule == "aiop_clamped").count() >= 2);
        // An empty pool (D_{n-1} = 0) divides by one page's share, not zero.
        let mut p = policy(0.5);
        let mut empty = dirty_pool(0);
        tick(&mut p, &empty, 0, &mut log);
        create_dirty(&mut empty, 0);
        tick(&mut p, &empty, I_US, &mut log);
        assert!(p.aiop().is_finite() && (0.0..=1.0).contains(&p.aiop()));
    }

    #[test]
    fn aiop_steady_state_keeps_aiop() {
        let mut log = DecisionLog::new(64, true);
        let pool = dirty_pool(700); // over the threshold: the cleaner is active
        let mut p = policy(0.3);
        for k in 0..5 {
            tick(&mut p, &pool, k * I_US, &mut log);
            assert_eq!(p.aiop(), 0.3, "same D and no synchronous write: AioP stays");
        }
        assert!(log.entries().any(|d| d.rule == "aiop_kept"));
        // Mid-interval polls do not adjust.
        tick(&mut p, &pool, 5 * I_US - 1, &mut log);
        assert_eq!(p.aiop(), 0.3);
        assert!(p.parameters().contains(&("aiop", 0.3)));
    }
}
