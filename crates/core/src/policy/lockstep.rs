//! One policy run with "shadows": other policies fed exactly the inputs it
//! is fed, so that one simulation answers for every shadow whose decisions
//! never differed from it.
//!
//! A run is a pure function of its configuration, and the policy touches
//! the run only through what its [`FlushPolicy`] methods return (plans,
//! sleeps, wake thresholds, the free-page rule, the number of cleaners;
//! `parameters` and the decision log are reports, not decisions). So if a
//! second policy, called with the same arguments at every call, returns
//! the same value at every call, its own run would have been this run,
//! call for call. The tuned oracle's grid (issue #12) is the case: for many
//! cells `innodb_io_capacity` never reaches a decision (the adaptive
//! flushing's share is 0 and its cap never binds), and its five settings
//! are one simulation.
//!
//! Invariants:
//! - the primary's value is what the driver gets, always; a shadow never
//!   changes the run;
//! - a shadow is called only while every value it returned so far equalled
//!   the primary's; at its first different value it is marked diverged
//!   (with the time) and never called again, since from then on the
//!   inputs it is fed are no longer those its own run would feed it;
//! - one difference is judged by its effect, not its value: a flush-list
//!   plan with the primary's LSN limit and another positive page count is
//!   the same run if the primary's flush-list phase wrote nothing (its
//!   first batch found no page under the limit, so any count's would), or
//!   wrote, in one batch that came back short, no more pages than the
//!   shadow asked for in one batch; the shadow then gets the iteration's
//!   report with its own requested count, and diverges otherwise; and
//!   two plans of 0 pages are equal whatever their limits (the driver
//!   makes no batch). (The idle server's
//!   PCT_IO(100) flush of an empty flush list, and adaptive flushing's
//!   count under a limit no page is below, are where `innodb_io_capacity`
//!   reaches a value but no write.)
//! - a shadow logs nothing: its decision log is off.

use std::sync::{Arc, Mutex};

use super::{FlushListPlan, FlushPolicy, IterationReport, Plan, PolicyCtx, Sleep};
use crate::buffer_pool::{BufferPool, WakeThresholds};
use crate::decision_log::DecisionLog;
use crate::free_page_path::FreePageRule;
use crate::types::TimeUs;

/// What became of one shadow, readable after (or during) the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShadowState {
    /// When its first value differed from the primary's (`Some(0)` for one
    /// that differed before the run started, e.g. in its free-page rule).
    pub diverged_at_us: Option<TimeUs>,
    /// Its parameters as they stood at its last call (its run's final
    /// parameters when it never diverged).
    pub parameters: Vec<(&'static str, f64)>,
    /// Its value and the primary's at the divergence, for a reader.
    pub diverged_on: String,
}

/// The shadows' states, shared with whoever built the [`Lockstep`].
#[derive(Clone, Debug, Default)]
pub struct LockstepWatch(Arc<Mutex<Vec<ShadowState>>>);

impl LockstepWatch {
    /// Each shadow's state, in the order the shadows were given.
    pub fn states(&self) -> Vec<ShadowState> {
        match self.0.lock() {
            Ok(states) => states.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

struct Shadow {
    policy: Box<dyn FlushPolicy>,
    log: DecisionLog,
    /// Per cleaner: the pages its flush-list plan of the iteration under
    /// way asked for, when that plan differed from the primary's in the
    /// count alone (judged by its effect at the iteration's end).
    asked: Vec<Option<u32>>,
}

/// The primary policy with its shadows (see the module documentation).
pub struct Lockstep {
    primary: Box<dyn FlushPolicy>,
    shadows: Vec<Shadow>,
    /// Which shadows diverged (the truth the shadows are called by; also
    /// the caller's view, hence behind a lock even for `&self` calls).
    watch: LockstepWatch,
    /// The time of the last call with a clock (0 before the first).
    now_us: TimeUs,
    /// The flush-list batch size of the iteration under way (its plan's).
    /// Per cleaner (their iterations interleave).
    batch_pages: Vec<u32>,
}

impl Lockstep {
    /// `primary` drives the run; each of `shadows` is checked against it.
    pub fn new(primary: Box<dyn FlushPolicy>, shadows: Vec<Box<dyn FlushPolicy>>) -> (Self, LockstepWatch) {
        let states = shadows
            .iter()
            .map(|s| ShadowState {
                diverged_at_us: None,
                parameters: s.parameters(),
                diverged_on: String::new(),
            })
            .collect();
        let watch = LockstepWatch(Arc::new(Mutex::new(states)));
        let cleaners = primary.cleaner_count().max(1) as usize;
        let lockstep = Self {
            primary,
            shadows: shadows
                .into_iter()
                .map(|policy| Shadow {
                    policy,
                    log: DecisionLog::disabled(),
                    asked: vec![None; cleaners],
                })
                .collect(),
            watch: watch.clone(),
            now_us: 0,
            batch_pages: vec![1; cleaners],
        };
        let count = lockstep.primary.cleaner_count();
        lockstep.check_ref(|s| s.policy.cleaner_count(), &count);
        (lockstep, watch)
    }

    fn states(&self) -> std::sync::MutexGuard<'_, Vec<ShadowState>> {
        match self.watch.0.lock() {
            Ok(states) => states,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Calls `call` on every live shadow and marks those whose value
    /// differs from `expected` (for the driver's `&self` questions).
    fn check_ref<T: PartialEq + std::fmt::Debug>(&self, call: impl Fn(&Shadow) -> T, expected: &T) {
        let now_us = self.now_us;
        let mut states = self.states();
        for (shadow, state) in self.shadows.iter().zip(states.iter_mut()) {
            if state.diverged_at_us.is_none() {
                let v = call(shadow);
                if v != *expected {
                    state.diverged_at_us = Some(now_us);
                    state.diverged_on = format!("{v:?} against {expected:?}");
                }
            }
        }
    }

    /// As [`Self::check_ref`], for the calls that change a policy's state;
    /// also records each live shadow's parameters.
    fn check_mut<T: PartialEq + std::fmt::Debug>(&mut self, mut call: impl FnMut(&mut Shadow) -> T, expected: &T) {
        let now_us = self.now_us;
        let mut states = match self.watch.0.lock() {
            Ok(states) => states,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (shadow, state) in self.shadows.iter_mut().zip(states.iter_mut()) {
            if state.diverged_at_us.is_some() {
                continue;
            }
            let v = call(shadow);
            if v != *expected {
                state.diverged_at_us = Some(now_us);
                state.diverged_on = format!("{v:?} against {expected:?}");
            }
            state.parameters = shadow.policy.parameters();
        }
    }

    /// A shadow's context: the primary's, with the shadow's own (silent)
    /// log.
    fn shadow_ctx<'a>(ctx: &PolicyCtx<'a>, log: &'a mut DecisionLog) -> PolicyCtx<'a> {
        PolicyCtx {
            pool: ctx.pool,
            now_us: ctx.now_us,
            cleaner: ctx.cleaner,
            policy_name: ctx.policy_name,
            log,
        }
    }
}

impl FlushPolicy for Lockstep {
    fn name(&self) -> &'static str {
        self.primary.name()
    }

    fn cleaner_count(&self) -> u32 {
        self.primary.cleaner_count()
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        self.now_us = ctx.now_us;
        let plan = self.primary.plan(ctx);
        if let Plan::Flush(iteration) = plan {
            if let Some(batch) = self.batch_pages.get_mut(ctx.cleaner as usize) {
                *batch = iteration.flush_batch_pages.max(1);
            }
        }
        let view = &*ctx;
        self.check_mut(|s| s.policy.plan(&mut Self::shadow_ctx(view, &mut s.log)), &plan);
        plan
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        self.now_us = ctx.now_us;
        let plan = self.primary.plan_flush_list(ctx);
        let view = &*ctx;
        self.check_mut(
            |s| {
                let own = s.policy.plan_flush_list(&mut Self::shadow_ctx(view, &mut s.log));
                let asked = s.asked.get_mut(view.cleaner as usize);
                let Some(asked) = asked else {
                    // A cleaner the policy did not announce: no judging
                    // by effect.
                    return own;
                };
                *asked = None;
                if own.pages == 0 && plan.pages == 0 {
                    // No batch at all, whatever the limit.
                    return plan;
                }
                if own != plan && own.lsn_limit == plan.lsn_limit && own.pages > 0 && plan.pages > 0 {
                    // Another count, the same limit: see `end_iteration`.
                    *asked = Some(own.pages);
                    return plan;
                }
                own
            },
            &plan,
        );
        plan
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        self.now_us = ctx.now_us;
        let sleep = self.primary.end_iteration(ctx, report);
        let view = &*ctx;
        // Whether the flush-list phase a shadow asked `pages` of (under the
        // primary's limit) would have written what the primary's did. The
        // driver asks min(budget, batch) a call, takes budget down by that
        // and stops at an empty call, an empty budget or the time limit:
        // - nothing written: the first call found no page under the limit,
        //   and so would any other count's;
        // - w pages in one call that came back short (w below what it
        //   asked, the budget then spent): a count of at least w that is
        //   also one call takes the same w pages, the first w under the
        //   limit from the list's tail.
        let written = report.np_flush;
        let batch = self.batch_pages.get(ctx.cleaner as usize).copied().unwrap_or(1);
        let requested = report.flush_requested;
        let same_writes = |pages: u32| {
            !report.flush_time_limited
                && (written == 0 || (requested <= batch && pages <= batch && written < requested && written <= pages))
        };
        self.check_mut(
            |s| {
                let asked = s.asked.get_mut(view.cleaner as usize).and_then(Option::take);
                let own = match asked {
                    None => *report,
                    Some(pages) if same_writes(pages) => IterationReport {
                        flush_requested: pages,
                        ..*report
                    },
                    Some(_) => return None,
                };
                Some(s.policy.end_iteration(&mut Self::shadow_ctx(view, &mut s.log), &own))
            },
            &Some(sleep),
        );
        sleep
    }

    fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        let thresholds = self.primary.wake_thresholds(pool);
        self.check_ref(|s| s.policy.wake_thresholds(pool), &thresholds);
        thresholds
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        self.primary.parameters()
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        let rule = self.primary.free_page_rule();
        self.check_ref(|s| s.policy.free_page_rule(), &rule);
        rule
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::policy::db2::tests::{create_dirty, pool};
    use crate::policy::{PolicySpec, SECOND_US};

    fn build(spec: &str) -> Box<dyn FlushPolicy> {
        PolicySpec::parse(spec).expect("test policy").build()
    }

    /// Runs `iterations` cleaner iterations' worth of calls, one a second.
    fn drive(lockstep: &mut Lockstep, pool: &BufferPool, iterations: u64) {
        let mut log = DecisionLog::disabled();
        for i in 0..iterations {
            let mut ctx = PolicyCtx {
                pool,
                now_us: (i + 1) * SECOND_US,
                cleaner: 0,
                policy_name: "test",
                log: &mut log,
            };
            lockstep.plan(&mut ctx);
            lockstep.plan_flush_list(&mut ctx);
            lockstep.end_iteration(&mut ctx, &IterationReport::default());
            lockstep.wake_thresholds(pool);
            lockstep.free_page_rule();
        }
    }

    #[test]
    fn a_shadow_configured_alike_never_diverges_and_another_scan_depth_does() {
        let mut pool = pool(1024);
        for page in 0..64 {
            create_dirty(&mut pool, page);
        }
        let (mut lockstep, watch) = Lockstep::new(
            build("mysql56"),
            vec![build("mysql56"), build("mysql56:lru_scan_depth=256")],
        );
        drive(&mut lockstep, &pool, 5);
        let states = watch.states();
        assert_eq!(
            states[0].diverged_at_us, None,
            "the same configuration decides the same"
        );
        assert_eq!(
            states[0].parameters,
            lockstep.parameters(),
            "its parameters are the primary's"
        );
        // Pscan is in the first plan (the LRU batch's depth).
        assert_eq!(states[1].diverged_at_us, Some(SECOND_US));
        assert!(states[1].parameters.contains(&("p_scan", 256.0)));
    }

    #[test]
    fn another_flush_list_count_is_judged_by_the_writes_it_would_make() {
        let mut pool = pool(1024);
        for page in 0..64 {
            create_dirty(&mut pool, page);
        }
        // An idle server (no request between iterations): 5.6 flushes
        // PCT_IO(100) = Pio pages, so each setting asks its own count, under
        // the same limit.
        let (mut lockstep, watch) = Lockstep::new(
            build("mysql56:io_capacity=100"),
            vec![
                build("mysql56:io_capacity=110"),
                build("mysql56:io_capacity=400"),
                build("mysql56:io_capacity=104"),
            ],
        );
        let mut log = DecisionLog::disabled();
        let mut iterate = |lockstep: &mut Lockstep, now_us: TimeUs, report: IterationReport| {
            let mut ctx = PolicyCtx {
                pool: &pool,
                now_us,
                cleaner: 0,
                policy_name: "test",
                log: &mut log,
            };
            lockstep.plan(&mut ctx);
            let plan = lockstep.plan_flush_list(&mut ctx);
            lockstep.end_iteration(
                &mut ctx,
                &IterationReport {
                    flush_requested: plan.pages,
                    ..report
                },
            );
        };
        // The first iteration (requests seen: not idle), then idle ones
        // that wrote nothing: any count writes nothing.
        for second in 1..=3 {
            iterate(&mut lockstep, second * SECOND_US, IterationReport::default());
        }
        assert!(watch.states().iter().all(|s| s.diverged_at_us.is_none()));
        // 5 pages written in one batch that came back short of 100: 110
        // (one batch, 120 pages) and 104 take the same 5; 400 is four
        // batches, whose later ones the primary never made.
        let short = IterationReport {
            np_flush: 5,
            ..IterationReport::default()
        };
        iterate(&mut lockstep, 4 * SECOND_US, short);
        let states = watch.states();
        assert_eq!(states[0].diverged_at_us, None);
        assert_eq!(states[1].diverged_at_us, Some(4 * SECOND_US));
        assert_eq!(states[2].diverged_at_us, None);
        // A full batch of 100: a count of 104 might have written more.
        let full = IterationReport {
            np_flush: 100,
            ..IterationReport::default()
        };
        iterate(&mut lockstep, 5 * SECOND_US, full);
        let states = watch.states();
        assert_eq!(states[2].diverged_at_us, Some(5 * SECOND_US));
        assert_eq!(states[0].diverged_at_us, Some(5 * SECOND_US), "110 as well");
    }

    /// Sleeps `value` us from the `from`-th end of an iteration on, 1 us
    /// before; counts its calls.
    struct Switching {
        from: u32,
        value: TimeUs,
        calls: Arc<AtomicU32>,
    }

    impl FlushPolicy for Switching {
        fn name(&self) -> &'static str {
            "switching"
        }
        fn plan(&mut self, _ctx: &mut PolicyCtx<'_>) -> Plan {
            Plan::Sleep(Sleep::for_us(1))
        }
        fn plan_flush_list(&mut self, _ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
            FlushListPlan::NONE
        }
        fn end_iteration(&mut self, _ctx: &mut PolicyCtx<'_>, _report: &IterationReport) -> Sleep {
            let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
            Sleep::for_us(if n >= self.from { self.value } else { 1 })
        }
        fn parameters(&self) -> Vec<(&'static str, f64)> {
            vec![("value", self.value as f64)]
        }
    }

    #[test]
    fn a_shadow_is_dropped_at_its_first_different_value_and_never_called_after() {
        let pool = pool(256);
        let switching = |from, value| {
            let calls = Arc::new(AtomicU32::new(0));
            let policy: Box<dyn FlushPolicy> = Box::new(Switching {
                from,
                value,
                calls: calls.clone(),
            });
            (policy, calls)
        };
        let (primary, _) = switching(u32::MAX, 7);
        let (late, late_calls) = switching(3, 9);
        let (never, never_calls) = switching(u32::MAX, 9);
        let (mut lockstep, watch) = Lockstep::new(primary, vec![late, never]);
        drive(&mut lockstep, &pool, 6);
        let states = watch.states();
        assert_eq!(
            states[0].diverged_at_us,
            Some(3 * SECOND_US),
            "its third sleep differed"
        );
        assert_eq!(late_calls.load(Ordering::Relaxed), 3, "not called after it diverged");
        assert_eq!(
            states[1].diverged_at_us, None,
            "equal sleeps: its parameters alone differ"
        );
        assert_eq!(never_calls.load(Ordering::Relaxed), 6);
        assert_eq!(lockstep.parameters(), vec![("value", 7.0)], "the primary's parameters");
    }
}
