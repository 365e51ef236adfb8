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
use crate::policy::{
    FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, Sleep, WaitFor, LRU_CHUNK_PAGES,
};
use crate::stats::PoolCounters;
use crate::types::TimeUs;

/// Shortest sleep after an iteration that did nothing (1 ms): a real thread
/// spends at least that scanning lists before it could look again.
pub const MIN_IDLE_SLEEP_US: TimeUs = 1_000;

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
    flush_budget: u32,
    counters_at_last_end: PoolCounters,
}

/// Drives one policy's cleaner threads over a pool.
pub struct PageCleaner {
    policy: Box<dyn FlushPolicy>,
    slots: Vec<Slot>,
    log: DecisionLog,
    iterations: u64,
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
            flush_budget: 0,
            counters_at_last_end: *pool.counters(),
        };
        pool.set_wake_thresholds(policy.wake_thresholds(pool));
        Self {
            policy,
            slots: vec![slot; n as usize],
            log,
            iterations: 0,
        }
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
                                ..IterationReport::default()
                            };
                            slot.phase = Phase::Lru;
                            slot.phase_started_us = now_us;
                            slot.lru_budget = plan.lru_scan_depth;
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
                    self.iterations += 1;
                    let did_nothing = report.np_lru == 0 && report.np_flush == 0 && report.lru_evicted == 0;
                    if did_nothing && sleep.max_us.is_some_and(|d| d < MIN_IDLE_SLEEP_US) {
                        sleep.max_us = Some(MIN_IDLE_SLEEP_US);
                    }
                    pool.set_wake_thresholds(self.policy.wake_thresholds(pool));
                    return CleanerAction::Sleep(sleep);
                }
            }
        }
    }
}
