//! The page-cleaner driver: runs any [`FlushPolicy`] over the buffer pool.
//!
//! The shell (simulator or engine thread) calls [`PageCleaner::poll`] for a
//! cleaner and gets a [`CleanerAction`]: issue these writes and call again
//! when they (all, or any one) completed, or sleep. The driver runs one
//! iteration as InnoDB's page cleaner does (see [`crate::policy`]), measures
//! T_flushing in the shell's time, and hands the policy the iteration's
//! Table-2 statistics. It never does I/O and never reads a clock.
//!
//! Invariants: each cleaner slot is in exactly one phase; a slot in the LRU
//! or flush phase has a started iteration; an iteration that neither wrote
//! nor evicted anything sleeps at least [`MIN_IDLE_SLEEP_US`], so a policy
//! that asks to flush with nothing to flush cannot spin in virtual time.

use crate::buffer_pool::{BufferPool, LruMode, WriteKind, WriteOrder};
use crate::decision_log::DecisionLog;
use crate::iteration_log::IterationRecord;
use crate::policy::{
    FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, Sleep, WaitFor, LRU_CHUNK_PAGES,
};
use crate::stats::PoolCounters;
use crate::types::TimeUs;

/// Shortest sleep after an iteration that did nothing (1 ms): a real thread
/// spends at least that scanning lists before it could look again.
pub const MIN_IDLE_SLEEP_US: TimeUs = 1_000;

/// Most iteration records kept between two drains (TigerBeetle: a limit on
/// everything); older ones are dropped and counted.
pub const ITERATION_RECORDS_MAX: usize = 1 << 20;

/// What a cleaner must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CleanerAction {
    /// Issue these writes asynchronously, report each completion to the pool
    /// (`complete_write`), then poll again once `wait` is satisfied.
    Write { writes: Vec<WriteOrder>, wait: WaitFor },
    /// Poll again after the sleep (or earlier if it allows waking).
    Sleep(Sleep),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Lru,
    FlushStart,
    Flush,
    Done,
}

#[derive(Clone, Debug)]
struct Slot {
    phase: Phase,
    plan: IterationPlan,
    flush_plan: FlushListPlan,
    report: IterationReport,
    phase_started_us: TimeUs,
    lru_budget: u32,
    /// InnoDB LRU phase: chunks left (`buf_flush_LRU_tail`'s loop).
    lru_chunks_left: u32,
    lru_chunks: u32,
    flush_budget: u32,
    counters_at_last_end: PoolCounters,
    params_before: Vec<(&'static str, f64)>,
}

/// Drives one policy's cleaner threads over a pool.
pub struct PageCleaner {
    policy: Box<dyn FlushPolicy>,
    slots: Vec<Slot>,
    log: DecisionLog,
    iterations: u64,
    /// Iteration records, when enabled ([`Self::enable_iteration_records`]).
    records: Option<std::collections::VecDeque<IterationRecord>>,
    records_dropped: u64,
}

impl PageCleaner {
    pub fn new(policy: Box<dyn FlushPolicy>, pool: &mut BufferPool, log: DecisionLog) -> Self {
        let n = policy.cleaner_count().max(1);
        let slot = Slot {
            phase: Phase::Idle,
            plan: IterationPlan::innodb(0),
            flush_plan: FlushListPlan::NONE,
            report: IterationReport::default(),
            phase_started_us: 0,
            lru_budget: 0,
            lru_chunks_left: 0,
            lru_chunks: 0,
            flush_budget: 0,
            counters_at_last_end: *pool.counters(),
            params_before: Vec::new(),
        };
        pool.set_wake_thresholds(policy.wake_thresholds(pool));
        if let Some(rule) = policy.free_page_rule() {
            pool.set_free_page_rule(rule);
        }
        Self {
            policy,
            slots: vec![slot; n as usize],
            log,
            iterations: 0,
            records: None,
            records_dropped: 0,
        }
    }

    /// Keeps one [`IterationRecord`] per finished iteration until drained.
    pub fn enable_iteration_records(&mut self) {
        if self.records.is_none() {
            self.records = Some(std::collections::VecDeque::new());
            self.log.set_track_rules(true);
        }
    }

    /// Takes the iteration records kept so far (empty when not enabled).
    pub fn drain_iteration_records(&mut self) -> Vec<IterationRecord> {
        self.records.as_mut().map(|r| r.drain(..).collect()).unwrap_or_default()
    }

    /// Records dropped because [`ITERATION_RECORDS_MAX`] were waiting.
    pub fn iteration_records_dropped(&self) -> u64 {
        self.records_dropped
    }

    pub fn cleaner_count(&self) -> u32 {
        self.slots.len() as u32
    }
    pub fn policy(&self) -> &dyn FlushPolicy {
        self.policy.as_ref()
    }
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }
    pub fn parameters(&self) -> Vec<(&'static str, f64)> {
        self.policy.parameters()
    }
    pub fn log(&self) -> &DecisionLog {
        &self.log
    }
    pub fn log_mut(&mut self) -> &mut DecisionLog {
        &mut self.log
    }
    /// Iterations finished by all cleaners.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The next action for cleaner `cleaner` at `now_us`.
    pub fn poll(&mut self, pool: &mut BufferPool, cleaner: u32, now_us: TimeUs) -> CleanerAction {
        let name = self.policy.name();
        // Each pass returns, advances the phase, or spends LRU budget, so the
        // loop ends.
        loop {
            let slot = &mut self.slots[cleaner as usize];
            match slot.phase {
                Phase::Idle => {
                    let mut ctx = PolicyCtx {
                        pool,
                        now_us,
                        cleaner,
                        policy_name: name,
                        log: &mut self.log,
                    };
                    match self.policy.plan(&mut ctx) {
                        Plan::Sleep(sleep) => return CleanerAction::Sleep(sleep),
                        Plan::Flush(plan) => {
                            slot.plan = plan;
                            slot.report = IterationReport {
                                cleaner,
                                started_us: now_us,
                                free_len_at_start: pool.free_len(),
                                ..IterationReport::default()
                            };
                            slot.phase = Phase::Lru;
                            slot.phase_started_us = now_us;
                            slot.lru_budget = plan.lru_scan_depth;
                            // buf_flush_LRU_tail (5.6.15): Pscan capped by
                            // |LRU|, in chunks of 100 written pages (the
                            // plan's chunk size; InnoDB's is 100).
                            slot.lru_chunks_left = plan
                                .lru_scan_depth
                                .min(pool.lru_len())
                                .div_ceil(plan.lru_chunk_pages.max(1));
                            slot.lru_chunks = 0;
                            if self.records.is_some() {
                                slot.params_before = self.policy.parameters();
                            }
                        }
                    }
                }
                Phase::Lru => {
                    let limited = slot
                        .plan
                        .lru_time_limit_us
                        .is_some_and(|limit| now_us.saturating_sub(slot.phase_started_us) >= limit);
                    if limited {
                        slot.report.lru_time_limited = true;
                    }
                    if slot.plan.lru_mode == LruMode::EvictToFree {
                        if slot.lru_chunks_left == 0 || limited {
                            slot.phase = Phase::FlushStart;
                            continue;
                        }
                        // One `buf_flush_LRU` chunk: up to 100 written pages,
                        // clean pages evicted on the way until |free| reaches
                        // Pscan; then `buf_flush_wait_batch_end` (the shell
                        // waits for the writes); a chunk that wrote nothing
                        // ends the phase (`n_flushed == 0`: break).
                        slot.lru_chunks_left -= 1;
                        slot.lru_chunks += 1;
                        let chunk = match slot.plan.lru_dirty_grace {
                            None => pool.lru_batch_chunk(
                                slot.plan.lru_chunk_pages.max(1),
                                slot.plan.lru_scan_depth,
                                u32::MAX,
                                LruMode::EvictToFree,
                            ),
                            Some(grace) => pool.lru_batch_chunk_graced(
                                slot.plan.lru_chunk_pages.max(1),
                                slot.plan.lru_scan_depth,
                                now_us.saturating_sub(grace.grace_us),
                                grace.depth_pages,
                            ),
                        };
                        slot.report.np_lru += chunk.writes.len() as u32;
                        slot.report.lru_evicted += chunk.evicted;
                        slot.report.lru_scanned += chunk.scanned;
                        if chunk.writes.is_empty() {
                            slot.lru_chunks_left = 0;
                            continue;
                        }
                        return CleanerAction::Write {
                            writes: chunk.writes,
                            wait: slot.plan.wait,
                        };
                    }
                    // DB2's cleaning pass: Pscan pages scanned, in chunks.
                    if slot.lru_budget == 0 || limited {
                        slot.phase = Phase::FlushStart;
                        continue;
                    }
                    let chunk_pages = slot.lru_budget.min(LRU_CHUNK_PAGES);
                    slot.lru_budget -= chunk_pages;
                    let (free_target, scan_limit) = match slot.plan.lru_mode {
                        LruMode::EvictToFree => (slot.plan.lru_scan_depth, u32::MAX),
                        LruMode::CleanOnly => (u32::MAX, slot.plan.lru_scan_depth),
                    };
                    let chunk = pool.lru_batch_chunk(chunk_pages, free_target, scan_limit, slot.plan.lru_mode);
                    slot.report.np_lru += chunk.writes.len() as u32;
                    slot.report.lru_evicted += chunk.evicted;
                    slot.report.lru_scanned += chunk.scanned;
                    if !chunk.writes.is_empty() {
                        return CleanerAction::Write {
                            writes: chunk.writes,
                            wait: slot.plan.wait,
                        };
                    }
                    if chunk.evicted < chunk_pages {
                        // Target reached or nothing left to take: InnoDB's
                        // later chunks would find the same.
                        slot.lru_budget = 0;
                    }
                }
                Phase::FlushStart => {
                    let mut ctx = PolicyCtx {
                        pool,
                        now_us,
                        cleaner,
                        policy_name: name,
                        log: &mut self.log,
                    };
                    let flush_plan = self.policy.plan_flush_list(&mut ctx);
                    slot.flush_plan = flush_plan;
                    slot.flush_budget = flush_plan.pages;
                    slot.report.flush_requested = flush_plan.pages;
                    slot.phase = Phase::Flush;
                    slot.phase_started_us = now_us;
                }
                Phase::Flush => {
                    let limited = slot
                        .plan
                        .flush_time_limit_us
                        .is_some_and(|limit| now_us.saturating_sub(slot.phase_started_us) >= limit);
                    if limited {
                        slot.report.flush_time_limited = true;
                    }
                    if slot.flush_budget == 0 || limited {
                        slot.phase = Phase::Done;
                        continue;
                    }
                    let batch = slot.flush_budget.min(slot.plan.flush_batch_pages.max(1));
                    slot.flush_budget -= batch;
                    let (writes, _) = pool.flush_list_batch(batch, slot.flush_plan.lsn_limit, WriteKind::FlushList);
                    if writes.is_empty() {
                        slot.phase = Phase::Done;
                        continue;
                    }
                    slot.report.np_flush += writes.len() as u32;
                    return CleanerAction::Write {
                        writes,
                        wait: slot.plan.wait,
                    };
                }
                Phase::Done => {
                    let counters = *pool.counters();
                    slot.report.flushing_time_us = now_us.saturating_sub(slot.report.started_us);
                    slot.report.user = counters.since(&slot.counters_at_last_end);
                    slot.report.lru_len = pool.lru_len();
                    slot.report.free_len = pool.free_len();
                    slot.counters_at_last_end = counters;
                    slot.phase = Phase::Idle;
                    let report = slot.report;
                    let mut ctx = PolicyCtx {
                        pool,
                        now_us,
                        cleaner,
                        policy_name: name,
                        log: &mut self.log,
                    };
                    let mut sleep = self.policy.end_iteration(&mut ctx, &report);
                    let iteration = self.iterations;
                    self.iterations += 1;
                    let did_nothing = report.np_lru == 0 && report.np_flush == 0 && report.lru_evicted == 0;
                    if did_nothing && sleep.max_us.is_some_and(|d| d < MIN_IDLE_SLEEP_US) {
                        sleep.max_us = Some(MIN_IDLE_SLEEP_US);
                    }
                    pool.set_wake_thresholds(self.policy.wake_thresholds(pool));
                    if let Some(rule) = self.policy.free_page_rule() {
                        pool.set_free_page_rule(rule);
                    }
                    if let Some(records) = self.records.as_mut() {
                        let slot = &mut self.slots[cleaner as usize];
                        if records.len() >= ITERATION_RECORDS_MAX {
                            records.pop_front();
                            self.records_dropped += 1;
                        }
                        records.push_back(IterationRecord {
                            policy: name,
                            iteration,
                            ended_us: now_us,
                            report,
                            lru_chunks: slot.lru_chunks,
                            params_before: std::mem::take(&mut slot.params_before),
                            params_after: self.policy.parameters(),
                            sleep_us: sleep.max_us,
                            rules: self.log.take_fired(cleaner),
                        });
                    }
                    return CleanerAction::Sleep(sleep);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The driver's protocol with a scripted policy: what it asks the shell
    //! to do, in which order, and what it reports back to the policy.
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome};
    use crate::policy::FLUSH_BATCH_PAGES;
    use crate::types::{FrameId, Lsn, PageId};

    /// A test-only policy: the same plan every iteration; keeps the reports.
    struct Scripted {
        plan: IterationPlan,
        flush: FlushListPlan,
        sleep: Sleep,
        reports: Arc<Mutex<Vec<IterationReport>>>,
    }

    impl FlushPolicy for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn plan(&mut self, _ctx: &mut PolicyCtx<'_>) -> Plan {
            Plan::Flush(self.plan)
        }
        fn plan_flush_list(&mut self, _ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
            self.flush
        }
        fn end_iteration(&mut self, _ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
            self.reports.lock().unwrap().push(*report);
            self.sleep
        }
        fn parameters(&self) -> Vec<(&'static str, f64)> {
            vec![("p_scan", f64::from(self.plan.lru_scan_depth))]
        }
    }

    fn flush_all(pages: u32) -> FlushListPlan {
        FlushListPlan {
            pages,
            lsn_limit: Lsn::MAX,
        }
    }

    fn scripted_cleaner(
        pool: &mut BufferPool,
        plan: IterationPlan,
        flush: FlushListPlan,
        sleep: Sleep,
    ) -> (PageCleaner, Arc<Mutex<Vec<IterationReport>>>) {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let policy = Scripted {
            plan,
            flush,
            sleep,
            reports: Arc::clone(&reports),
        };
        (
            PageCleaner::new(Box::new(policy), pool, DecisionLog::disabled()),
            reports,
        )
    }

    fn page(n: u32) -> PageId {
        PageId::new(1, n)
    }

    /// Fixes `n` (reading it in if needed) and returns its frame, still fixed.
    fn fix(pool: &mut BufferPool, n: u32) -> FrameId {
        match pool.fix(page(n), FixIntent::Read, 0, 0) {
            FixOutcome::Hit(f) => f,
            FixOutcome::Miss(f) => {
                pool.complete_read(f);
                f
            }
            other => panic!("fix of {n}: {other:?}"),
        }
    }

    /// A full pool of `frames` clean pages (page numbers 0..frames).
    fn full_pool(frames: u32) -> BufferPool {
        let mut pool = BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap();
        for n in 0..frames {
            let f = fix(&mut pool, n);
            pool.unfix(f);
        }
        pool
    }

    /// Modifies each page of `pages` in order (older LSN first).
    fn modify(pool: &mut BufferPool, pages: impl IntoIterator<Item = PageId>) {
        for p in pages {
            let f = fix(pool, p.page_no);
            let start = pool.current_lsn().advance(1);
            pool.note_modification(f, start, start.advance(100));
            pool.unfix(f);
        }
    }

    /// Polls, expects a write action and completes every write.
    fn poll_and_complete(
        pool: &mut BufferPool,
        cleaner: &mut PageCleaner,
        now_us: TimeUs,
    ) -> (Vec<WriteKind>, WaitFor) {
        let action = cleaner.poll(pool, 0, now_us);
        complete(pool, action)
    }

    /// Expects a write action; completes every write; returns (kinds, wait).
    fn complete(pool: &mut BufferPool, action: CleanerAction) -> (Vec<WriteKind>, WaitFor) {
        let CleanerAction::Write { writes, wait } = action else {
            panic!("expected writes, got {action:?}")
        };
        for w in &writes {
            pool.complete_write(w.frame);
        }
        (writes.iter().map(|w| w.kind).collect(), wait)
    }

    #[test]
    fn iteration_runs_lru_then_flush_list_and_reports_t_flushing() {
        let mut pool = full_pool(64);
        let lru = pool.lru_pages();
        // The 4 tail pages dirty (oldest first), and 6 pages at the head.
        modify(&mut pool, lru.iter().rev().take(4).copied());
        modify(&mut pool, lru.iter().take(6).copied());
        let (mut cleaner, reports) = scripted_cleaner(
            &mut pool,
            IterationPlan::innodb(10),
            flush_all(100),
            Sleep::for_us(5_000),
        );
        // LRU phase: the 4 dirty tail pages are written; clean ones are
        // evicted until |free| reaches Pscan (10), the written ones join the
        // free list when their writes complete (5.6.15 counts only writes).
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 1_000);
        assert_eq!(kinds, vec![WriteKind::LruBatch; 4]);
        assert_eq!(pool.free_len(), 14, "10 evicted at once, 4 after their write");
        // Flush phase: the 6 remaining dirty pages.
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 1_200);
        assert_eq!(kinds, vec![WriteKind::FlushList; 6]);
        assert_eq!(pool.dirty_pages(), 0);
        let action = cleaner.poll(&mut pool, 0, 1_450);
        assert_eq!(action, CleanerAction::Sleep(Sleep::for_us(5_000)));
        let reports = reports.lock().unwrap();
        let r = reports[0];
        assert_eq!(r.started_us, 1_000);
        assert_eq!(r.flushing_time_us, 450, "T_flushing: start to last completion");
        assert_eq!(
            (r.np_lru, r.lru_evicted, r.np_flush, r.flush_requested),
            (4, 10, 6, 100)
        );
        assert_eq!((r.lru_len, r.free_len), (50, 14));
        assert_eq!(cleaner.iterations(), 1);
        pool.check_invariants();
    }

    /// 5.6.15 `buf_flush_LRU_tail`: ceil(min(Pscan, |LRU|) / 100) chunks of
    /// `buf_flush_LRU(100)`; a written page joins the free list only when
    /// its write completes, so |free| < Pscan holds through the third chunk
    /// and it writes a full 100 too.
    #[test]
    fn lru_phase_is_chunked_by_100_pages() {
        let mut pool = full_pool(1024);
        modify(&mut pool, (0..1024).map(page));
        let (mut cleaner, reports) =
            scripted_cleaner(&mut pool, IterationPlan::innodb(250), flush_all(0), Sleep::for_us(1));
        let mut chunks = Vec::new();
        let mut now = 0;
        loop {
            now += 10;
            match cleaner.poll(&mut pool, 0, now) {
                CleanerAction::Sleep(_) => break,
                action => {
                    let (kinds, _) = complete(&mut pool, action);
                    assert!(kinds.iter().all(|&k| k == WriteKind::LruBatch));
                    chunks.push(kinds.len());
                }
            }
        }
        assert_eq!(
            chunks,
            vec![100, 100, 100],
            "LRU_CHUNK_PAGES per chunk, ceil(Pscan/100) chunks"
        );
        assert_eq!(reports.lock().unwrap()[0].np_lru, 300);
        assert_eq!(pool.free_len(), 300, "written LRU-batch pages are evicted");
        pool.check_invariants();
    }

    #[test]
    fn flush_phase_is_batched_and_waits_for_all_writes() {
        let mut pool = full_pool(1024);
        modify(&mut pool, (0..300).map(page));
        let (mut cleaner, reports) =
            scripted_cleaner(&mut pool, IterationPlan::innodb(0), flush_all(1000), Sleep::for_us(1));
        let mut batches = Vec::new();
        let mut now = 0;
        loop {
            now += 10;
            let action = cleaner.poll(&mut pool, 0, now);
            if let CleanerAction::Write { writes, .. } = &action {
                // Until the shell reports completions the pages stay in flight.
                assert_eq!(pool.pending_writes(WriteKind::FlushList), writes.len() as u32);
            }
            match action {
                CleanerAction::Sleep(_) => break,
                action => {
                    let (kinds, wait) = complete(&mut pool, action);
                    assert_eq!(wait, WaitFor::AllWrites);
                    assert!(kinds.iter().all(|&k| k == WriteKind::FlushList));
                    batches.push(kinds.len() as u32);
                }
            }
        }
        assert_eq!(batches, vec![FLUSH_BATCH_PAGES, FLUSH_BATCH_PAGES, 60]);
        let r = reports.lock().unwrap()[0];
        assert_eq!((r.np_flush, r.flush_requested), (300, 1000));
        assert_eq!(pool.dirty_pages(), 0);
        // Oldest first: the flush list drained from its tail.
        assert_eq!(pool.counters().flush_list_pages, 300);
    }

    #[test]
    fn idle_iteration_sleeps_at_least_min_idle_sleep() {
        let mut pool = full_pool(64);
        // A policy asking for work where there is none, and no sleep.
        let (mut cleaner, _) = scripted_cleaner(&mut pool, IterationPlan::innodb(0), flush_all(500), Sleep::none());
        assert_eq!(
            cleaner.poll(&mut pool, 0, 0),
            CleanerAction::Sleep(Sleep::for_us(MIN_IDLE_SLEEP_US))
        );
        // A longer sleep, or a sleep until woken, is left alone.
        let (mut cleaner, _) = scripted_cleaner(
            &mut pool,
            IterationPlan::innodb(0),
            flush_all(500),
            Sleep::for_us(7_000),
        );
        assert_eq!(
            cleaner.poll(&mut pool, 0, 0),
            CleanerAction::Sleep(Sleep::for_us(7_000))
        );
        let (mut cleaner, _) = scripted_cleaner(
            &mut pool,
            IterationPlan::innodb(0),
            flush_all(500),
            Sleep::until_event(),
        );
        assert_eq!(
            cleaner.poll(&mut pool, 0, 0),
            CleanerAction::Sleep(Sleep::until_event())
        );
        // An iteration that did evict is not idle: its zero sleep stands.
        let mut pool = full_pool(64);
        let (mut cleaner, _) = scripted_cleaner(&mut pool, IterationPlan::innodb(5), flush_all(0), Sleep::none());
        assert_eq!(cleaner.poll(&mut pool, 0, 0), CleanerAction::Sleep(Sleep::none()));
        assert_eq!(pool.free_len(), 5);
    }

    #[test]
    fn time_limits_cut_a_phase_short() {
        let mut pool = full_pool(1024);
        modify(&mut pool, (0..1024).map(page));
        let plan = IterationPlan {
            lru_time_limit_us: Some(1_000),
            flush_time_limit_us: Some(1_000),
            ..IterationPlan::innodb(300)
        };
        let (mut cleaner, reports) = scripted_cleaner(&mut pool, plan, flush_all(500), Sleep::for_us(1));
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 0);
        assert_eq!(kinds, vec![WriteKind::LruBatch; 100]);
        // The first chunk took 1.5 ms: past the LRU limit, on to the flush list.
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 1_500);
        assert_eq!(kinds, vec![WriteKind::FlushList; FLUSH_BATCH_PAGES as usize]);
        // Still within the flush limit (measured from the flush phase's start).
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 2_400);
        assert_eq!(kinds.len(), FLUSH_BATCH_PAGES as usize);
        assert!(matches!(cleaner.poll(&mut pool, 0, 2_500), CleanerAction::Sleep(_)));
        let r = reports.lock().unwrap()[0];
        assert!(r.lru_time_limited && r.flush_time_limited);
        assert_eq!((r.np_lru, r.np_flush, r.flush_requested), (100, 240, 500));
        assert_eq!(r.flushing_time_us, 2_500);
        pool.check_invariants();
    }

    #[test]
    fn report_carries_user_counters_since_previous_iteration() {
        let mut pool = full_pool(64);
        let (mut cleaner, reports) =
            scripted_cleaner(&mut pool, IterationPlan::innodb(0), flush_all(0), Sleep::for_us(1));
        // Activity before the cleaner existed is not reported.
        for n in 0..5 {
            let f = fix(&mut pool, n);
            pool.unfix(f);
        }
        cleaner.poll(&mut pool, 0, 0);
        for n in 0..7 {
            let f = fix(&mut pool, n);
            pool.unfix(f);
        }
        modify(&mut pool, [page(1), page(2)]);
        cleaner.poll(&mut pool, 0, 2_000);
        cleaner.poll(&mut pool, 0, 4_000);
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 3);
        assert_eq!(reports[0].user.requests, 5);
        assert_eq!(reports[1].user.requests, 7 + 2, "7 plain fixes and 2 to modify");
        assert_eq!(reports[1].user.modifications, 2);
        assert_eq!(reports[1].user.reads, 0, "all hits");
        assert_eq!(reports[2].user, PoolCounters::default(), "nothing happened since");
    }

    /// InnoDB's `buf_flush_end` sets `try_LRU_scan` after *every* LRU or
    /// flush-list batch, so the next user that misses looks for a clean
    /// victim again. The core only sets it when an LRU chunk evicted a page.
    #[test]
    fn miss_after_flush_list_batch_rescans_for_clean_victims() {
        let mut pool = full_pool(16);
        let threshold = pool.config().lru_search_scan_threshold as usize;
        let tail: Vec<PageId> = pool.lru_pages().into_iter().rev().take(threshold).collect();
        modify(&mut pool, tail.iter().copied());
        // A miss: the clean scan of `threshold` tail pages fails (try_LRU_scan
        // goes off) and the tail page is written synchronously.
        let FixOutcome::SyncReplacementWrite(order) = pool.fix(page(100), FixIntent::Read, 0, 0) else {
            panic!("expected a replacement write")
        };
        assert!(pool.complete_write(order.frame));
        let frame = fix(&mut pool, 100);
        pool.unfix(frame);
        // The page cleaner cleans the rest of the tail with a flush-list batch.
        let (mut cleaner, _) = scripted_cleaner(&mut pool, IterationPlan::innodb(0), flush_all(100), Sleep::for_us(1));
        let (kinds, _) = poll_and_complete(&mut pool, &mut cleaner, 0);
        assert_eq!(kinds.len(), threshold - 1);
        assert!(matches!(cleaner.poll(&mut pool, 0, 10), CleanerAction::Sleep(_)));
        assert_eq!(pool.dirty_pages(), 0);
        // Every page is clean and unfixed: the next miss must find a victim.
        let outcome = pool.fix(page(101), FixIntent::Read, 0, 20);
        assert!(matches!(outcome, FixOutcome::Miss(_)), "got {outcome:?}");
    }
}
