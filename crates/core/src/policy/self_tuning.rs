//! `self-tuning`: Algorithm 3 and Figure 1 of Lee, Lee, Kim (2016).
//!
//! MySQL 5.6's loop (Algorithm 1) with Pscan and Pio adapted after every
//! iteration from statistics InnoDB already has (Table 2), by the condition-
//! action rules of Table 1:
//!
//! - T_flushing > 1 s (the I/O subsystem is overloaded): the majority
//!   flusher is slowed. If NP_LRU > NP_flush and NP_LRU > NP_LRU^stable,
//!   `Pscan <- max(Pscan x NP_LRU^stable / NP_LRU, Pscan_MIN)`; otherwise, if
//!   NP_flush > NP_flush^stable, `Pio <- max(Pio x NP_flush^stable / NP_flush,
//!   Pio_MIN)`. Flushing no more than at the last stable state means someone
//!   else overloaded the device, so nothing changes. No sleep.
//! - Otherwise, for Pscan: synchronous replacement writes (NP_dirty > 0, and
//!   Pscan + NP_dirty <= |LRU|) raise Pscan by NP_dirty; surplus free pages
//!   that nobody needed to scan for (|free| > 0, NP_clean = 0, Pscan >=
//!   |free| + Pscan_MIN) lower Pscan by |free|, where |free| is the free
//!   list *left over* when the iteration starts (measured after the LRU
//!   batch it would always be about Pscan, and the rule could never fire); else, if NP_LRU > 0, this is
//!   a stable state: NP_LRU^stable <- NP_LRU.
//!   For Pio: synchronous recoverability writes while Pio < NP_req_flush
//!   raise Pio by NP_sync_rec; Pio > NP_req_flush >= Pio_MIN lowers Pio to
//!   NP_req_flush; else, if NP_flush > 0, NP_flush^stable <- NP_flush.
//!   Then `sleep(1 s - T_flushing)`.
//!
//! Reading of NP_dirty. Table 2 defines it as "the number of pages scanned
//! to find a dirty page to evict", and line 20 adds it to Pscan, a depth.
//! InnoDB 5.6.15 keeps two figures for it (`srv0mon.cc`): the total over all
//! single-page flushes (`buffer_LRU_single_flush_scanned`) and the pages
//! per call (`..._per_call`). Summed over a second of a thousand
//! single-page flushes it is millions of pages, which line 20's test
//! `Pscan + NP_dirty <= |LRU|` would never pass and which, capped, throws
//! Pscan to |LRU| in one step; at |LRU| the LRU batch needs |LRU|/100
//! chunks, each waited for, T_flushing passes 1 s, and line 10 cuts Pscan
//! by NP_LRU^stable / NP_LRU with NP_LRU^stable still Pscan_MIN (line 26 is
//! never reached while NP_dirty > 0): Pscan oscillates between |LRU| and
//! 100 for the whole run (measured: `sim run --warehouses 50 --buffer-pool
//! 204.8MiB --redo 819.2MiB --cpu-cores 4 --policy
//! self-tuning:np_dirty=total --decisions x.jsonl`). The default,
//! [`NpDirty::PerCall`], is the depth at which a user found its dirty page:
//! a depth added to a depth, as line 20 reads. `np_dirty=total` keeps the sum.
//!
//! Reading of line 20 (`NP_dirty > 0 and Pscan + NP_dirty <= |LRU|`): the
//! text explains the second clause as "Pscan obviously cannot exceed
//! |LRU|". Taken literally the clause freezes Pscan when Pscan is within
//! NP_dirty of |LRU| (with `np_dirty=total`, whenever single-page flushes
//! are heavy). The default, [`ScanDepthRaise::CappedAtLru`]
//! (`scan_depth_raise=capped`), raises Pscan by NP_dirty up to |LRU|;
//! [`ScanDepthRaise::Literal`] (`scan_depth_raise=literal`) keeps the flow
//! chart's test. With NP_dirty per call the two rarely differ.
//!
//! The LRU phase this policy runs is 5.6.15's (`crate::cleaner`): chunks of
//! 100 written pages, each waited for (`buf_flush_wait_batch_end` in
//! `buf_flush_LRU_tail`), so T_flushing grows with Pscan / 100; and users
//! follow 5.6.15's free-page path (`crate::free_page_path`): their first
//! clean-victim scan goes Pscan deep, so a raise of Pscan also lets users
//! evict deeper instead of writing.
//!
//! `innodb_io_capacity_max` is 2 x Pio with no lower limit (§4.3). Pscan_MIN
//! and Pio_MIN are InnoDB's minima for `innodb_lru_scan_depth` (100,
//! WL#5580) and `innodb_io_capacity` (100, MySQL 5.6 manual).
//!
//! Invariants: Pscan >= Pscan_MIN and Pio >= Pio_MIN after every iteration;
//! Pscan never exceeds |LRU| because of a raise.

use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig};
use crate::free_page_path::{FreePagePath, FreePageRule};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::mysql56::{IO_CAPACITY, LRU_SCAN_DEPTH};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep};
use crate::types::{TimeUs, SECOND_US};

/// `self-tuning`'s own parameters: the initial Pscan and Pio (MySQL's
/// defaults) and the two readings of Algorithm 3 discussed above.
pub const PARAMS: &[ParamDecl] = &[
    LRU_SCAN_DEPTH,
    IO_CAPACITY,
    ParamDecl::choice(
        "np_dirty",
        "per_call",
        &[
            ("per_call", "pages per single-page flush"),
            ("total", "the sum over the iteration"),
        ],
        "what NP_dirty is (module docs, \"Reading of NP_dirty\")",
    ),
    ParamDecl::choice(
        "scan_depth_raise",
        "capped",
        &[("capped", "raise up to |LRU|"), ("literal", "line 20's test")],
        "how line 20 bounds a raise of Pscan by |LRU|",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "self-tuning",
    about: "Lee, Lee, Kim's self-tuning algorithm (Algorithm 3): Pscan and Pio adapted every iteration",
    params: &[PARAMS, crate::free_page_path::PARAMS],
    build: |p| Box::new(SelfTuning::new(SelfTuningConfig::from_params(p))),
};

/// What NP_dirty (Table 2: "the number of pages scanned to find a dirty
/// page to evict") is over one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NpDirty {
    /// Pages scanned per single-page flush (InnoDB 5.6's monitor
    /// `buffer_LRU_single_flush_scanned_per_call`, `srv0mon.cc`): the depth
    /// at which users found a dirty page, averaged over the iteration's calls.
    PerCall,
    /// The sum over every single-page flush of the iteration
    /// (`buffer_LRU_single_flush_scanned`).
    Total,
}

/// How line 20 of Algorithm 3 bounds a raise of Pscan by |LRU|.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanDepthRaise {
    /// Raise by NP_dirty, but never above |LRU| (the text's explanation).
    CappedAtLru,
    /// Raise only if Pscan + NP_dirty <= |LRU| (the flow chart's test).
    Literal,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfTuningConfig {
    pub scan_depth_raise: ScanDepthRaise,
    pub np_dirty: NpDirty,
    /// Initial Pscan (MySQL's default, 1024).
    pub initial_lru_scan_depth: u32,
    /// Initial Pio (MySQL's default, 200).
    pub initial_io_capacity: u32,
    /// Pscan_MIN: minimum `innodb_lru_scan_depth` (100).
    pub min_lru_scan_depth: u32,
    /// Pio_MIN: minimum `innodb_io_capacity` (100).
    pub min_io_capacity: u32,
    /// The "1 s" of Algorithm 3: the period InnoDB assumes an iteration fits in.
    pub period_us: TimeUs,
    /// The users' free-page path (5.6.15's by default: Algorithm 3 was built
    /// on 5.6.15, where users' first scan follows Pscan; see
    /// [`crate::free_page_path`]).
    pub free_page_path: FreePagePath,
    pub adaptive: AdaptiveFlushingConfig,
}

impl Default for SelfTuningConfig {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl SelfTuningConfig {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            scan_depth_raise: match p.name("scan_depth_raise") {
                "literal" => ScanDepthRaise::Literal,
                _ => ScanDepthRaise::CappedAtLru,
            },
            np_dirty: match p.name("np_dirty") {
                "total" => NpDirty::Total,
                _ => NpDirty::PerCall,
            },
            initial_lru_scan_depth: p.u32("lru_scan_depth"),
            initial_io_capacity: p.u32("io_capacity"),
            min_lru_scan_depth: 100,
            min_io_capacity: 100,
            period_us: SECOND_US,
            free_page_path: FreePagePath::from_params(p),
            adaptive: AdaptiveFlushingConfig::default(),
        }
    }
}

pub struct SelfTuning {
    config: SelfTuningConfig,
    adaptive: AdaptiveFlushing,
    /// Pscan.
    lru_scan_depth: u32,
    /// Pio.
    io_capacity: u32,
    /// NP_LRU^stable.
    np_lru_stable: u32,
    /// NP_flush^stable.
    np_flush_stable: u32,
    /// NP_req_flush of the current iteration (0 when adaptive flushing
    /// returned early).
    np_req_flush: u32,
    recommended: bool,
}

impl SelfTuning {
    pub fn new(config: SelfTuningConfig) -> Self {
        Self {
            adaptive: AdaptiveFlushing::new(config.adaptive),
            lru_scan_depth: config.initial_lru_scan_depth.max(config.min_lru_scan_depth),
            io_capacity: config.initial_io_capacity.max(config.min_io_capacity),
            np_lru_stable: config.min_lru_scan_depth,
            np_flush_stable: config.min_io_capacity,
            np_req_flush: 0,
            recommended: false,
            config,
        }
    }

    /// Pscan.
    pub fn lru_scan_depth(&self) -> u32 {
        self.lru_scan_depth
    }
    /// Pio.
    pub fn io_capacity(&self) -> u32 {
        self.io_capacity
    }
    pub fn np_lru_stable(&self) -> u32 {
        self.np_lru_stable
    }
    pub fn np_flush_stable(&self) -> u32 {
        self.np_flush_stable
    }

    fn io_capacity_max(&self) -> u32 {
        2 * self.io_capacity
    }

    /// The left branch of Figure 1: the I/O subsystem is overloaded.
    fn on_overload(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) {
        if r.np_lru > r.np_flush {
            if r.np_lru > self.np_lru_stable {
                let old = self.lru_scan_depth;
                let scaled = u64::from(old) * u64::from(self.np_lru_stable) / u64::from(r.np_lru);
                self.lru_scan_depth = (scaled as u32).max(self.config.min_lru_scan_depth);
                let (new, stable) = (self.lru_scan_depth, self.np_lru_stable);
                ctx.decide("overload_lowers_scan_depth", || {
                    format!(
                        "T_flushing={} us > period, NP_LRU={} > NP_LRU_stable={stable}: Pscan {old} -> {new}",
                        r.flushing_time_us, r.np_lru
                    )
                });
            } else {
                ctx.decide("overload_by_others_keeps_scan_depth", || {
                    format!(
                        "T_flushing={} us, NP_LRU={} <= NP_LRU_stable={}",
                        r.flushing_time_us, r.np_lru, self.np_lru_stable
                    )
                });
            }
        } else if r.np_flush > self.np_flush_stable {
            let old = self.io_capacity;
            let scaled = u64::from(old) * u64::from(self.np_flush_stable) / u64::from(r.np_flush);
            self.io_capacity = (scaled as u32).max(self.config.min_io_capacity);
            let (new, stable) = (self.io_capacity, self.np_flush_stable);
            ctx.decide("overload_lowers_io_capacity", || {
                format!(
                    "T_flushing={} us > period, NP_flush={} > NP_flush_stable={stable}: Pio {old} -> {new}",
                    r.flushing_time_us, r.np_flush
                )
            });
        } else {
            ctx.decide("overload_by_others_keeps_io_capacity", || {
                format!(
                    "T_flushing={} us, NP_flush={} <= NP_flush_stable={}",
                    r.flushing_time_us, r.np_flush, self.np_flush_stable
                )
            });
        }
    }

    /// The right branch of Figure 1, Pscan half.
    fn tune_scan_depth(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) {
        let np_dirty = match self.config.np_dirty {
            NpDirty::Total => r.np_dirty(),
            NpDirty::PerCall => r.np_dirty().div_ceil(r.user.wait_free.max(1)),
        };
        let np_clean = r.np_clean();
        let lru = u64::from(r.lru_len);
        // Pages left over from the last period (see IterationReport).
        let free = r.free_len_at_start;
        let pscan = self.lru_scan_depth;
        let raise = match self.config.scan_depth_raise {
            ScanDepthRaise::CappedAtLru => np_dirty > 0 && u64::from(pscan) < lru,
            ScanDepthRaise::Literal => np_dirty > 0 && u64::from(pscan) + np_dirty <= lru,
        };
        if raise {
            self.lru_scan_depth = (u64::from(pscan) + np_dirty).min(lru) as u32;
            let new = self.lru_scan_depth;
            ctx.decide("sync_replacement_raises_scan_depth", || {
                format!("NP_dirty={np_dirty}: Pscan {pscan} -> {new} (|LRU|={lru})")
            });
        } else if free > 0 && np_clean == 0 && pscan >= free + self.config.min_lru_scan_depth {
            self.lru_scan_depth = pscan - free;
            let new = self.lru_scan_depth;
            ctx.decide("surplus_free_pages_lower_scan_depth", || {
                format!("|free|={free}, NP_clean=0: Pscan {pscan} -> {new}")
            });
        } else if r.np_lru > 0 {
            self.np_lru_stable = r.np_lru;
            ctx.decide("lru_stable_state", || {
                format!("Pscan={pscan} kept: NP_LRU_stable <- {}", r.np_lru)
            });
        }
    }

    /// The right branch of Figure 1, Pio half.
    fn tune_io_capacity(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) {
        let np_sync_rec = r.np_sync_rec();
        let req = self.np_req_flush;
        let pio = self.io_capacity;
        if np_sync_rec > 0 && pio < req {
            self.io_capacity = pio.saturating_add(np_sync_rec.min(u64::from(u32::MAX)) as u32);
            let new = self.io_capacity;
            ctx.decide("sync_recoverability_raises_io_capacity", || {
                format!("NP_sync_rec={np_sync_rec}, Pio={pio} < NP_req_flush={req}: Pio -> {new}")
            });
        } else if pio > req && req >= self.config.min_io_capacity {
            self.io_capacity = req;
            ctx.decide("surplus_io_capacity_lowers_to_requested", || {
                format!("Pio {pio} > NP_req_flush={req}: Pio -> {req}")
            });
        } else if r.np_flush > 0 {
            self.np_flush_stable = r.np_flush;
            ctx.decide("flush_stable_state", || {
                format!("Pio={pio} kept: NP_flush_stable <- {}", r.np_flush)
            });
        }
    }
}

impl FlushPolicy for SelfTuning {
    fn name(&self) -> &'static str {
        "self-tuning"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let depth = self.lru_scan_depth;
        ctx.decide("lru_batch", || format!("LRU batch with Pscan={depth}"));
        Plan::Flush(IterationPlan::innodb(depth))
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        let io_max = self.io_capacity_max();
        match self.adaptive.recommend(ctx.pool, self.io_capacity, io_max) {
            None => {
                self.recommended = false;
                self.np_req_flush = 0;
                ctx.decide("adaptive_flushing_skipped", || {
                    "first iteration or no redo generated since the last averaging point".to_string()
                });
                FlushListPlan::NONE
            }
            Some(rec) => {
                self.recommended = true;
                self.np_req_flush = rec.pages;
                let pio = self.io_capacity;
                ctx.decide("adaptive_flushing", || {
                    format!(
                        "NP_req_flush={} with Pio={pio} (pct_for_dirty={} pct_for_lsn={} age={} B)",
                        rec.pages, rec.pct_for_dirty, rec.pct_for_lsn, rec.age_bytes
                    )
                });
                FlushListPlan {
                    pages: rec.pages,
                    lsn_limit: rec.lsn_limit,
                }
            }
        }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, r: &IterationReport) -> Sleep {
        if self.recommended {
            self.adaptive.record_flushed(r.np_flush);
        }
        if r.flushing_time_us > self.config.period_us {
            self.on_overload(ctx, r);
            return Sleep::none();
        }
        self.tune_scan_depth(ctx, r);
        self.tune_io_capacity(ctx, r);
        Sleep::for_us(self.config.period_us.saturating_sub(r.flushing_time_us))
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        let mut params = vec![
            ("p_scan", f64::from(self.lru_scan_depth)),
            ("p_io", f64::from(self.io_capacity)),
            ("io_capacity_max", f64::from(self.io_capacity_max())),
            ("np_lru_stable", f64::from(self.np_lru_stable)),
            ("np_flush_stable", f64::from(self.np_flush_stable)),
            ("np_req_flush", f64::from(self.np_req_flush)),
        ];
        params.extend(self.config.free_page_path.parameters());
        params
    }

    fn free_page_rule(&self) -> Option<FreePageRule> {
        Some(self.config.free_page_path.resolve(self.lru_scan_depth))
    }
}

#[cfg(test)]
mod tests {
    //! One test per row of Lee et al. Table 1 and per branch of Figure 1.
    use super::*;
    use crate::buffer_pool::{BufferPool, BufferPoolConfig};
    use crate::decision_log::DecisionLog;
    use crate::stats::PoolCounters;
    use crate::types::Lsn;

    fn pool() -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(4096), Lsn(1)).unwrap()
    }

    fn report(t_flushing_us: u64) -> IterationReport {
        IterationReport {
            flushing_time_us: t_flushing_us,
            lru_len: 4000,
            free_len: 0,
            ..IterationReport::default()
        }
    }

    /// Runs end_iteration and returns (sleep, rules fired).
    fn end(st: &mut SelfTuning, r: &IterationReport) -> (Sleep, Vec<&'static str>) {
        let pool = pool();
        let mut log = DecisionLog::new(64, true);
        let mut ctx = PolicyCtx {
            pool: &pool,
            now_us: 0,
            cleaner: 0,
            policy_name: "self-tuning",
            log: &mut log,
        };
        let sleep = st.end_iteration(&mut ctx, r);
        (sleep, log.drain().into_iter().map(|d| d.rule).collect())
    }

    fn tuned(pscan: u32, pio: u32, req: u32) -> SelfTuning {
        let mut st = SelfTuning::new(SelfTuningConfig::default());
        st.lru_scan_depth = pscan;
        st.io_capacity = pio;
        st.np_req_flush = req;
        st
    }

    #[test]
    fn sync_replacement_writes_raise_scan_depth() {
        let mut st = tuned(1024, 200, 200);
        let mut r = report(300_000);
        r.user = PoolCounters {
            dirty_victim_scanned: 37,
            ..PoolCounters::default()
        };
        let (sleep, rules) = end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 1024 + 37);
        assert!(rules.contains(&"sync_replacement_raises_scan_depth"));
        assert_eq!(sleep, Sleep::for_us(700_000), "sleep(1 - T_flushing)");
    }

    /// NP_dirty is read per single-page flush (5.6.15's
    /// `buffer_LRU_single_flush_scanned_per_call`) by default: 3 flushes
    /// that scanned 9,000 pages in all raise Pscan by 3,000; the total
    /// reading raises it by 9,000 (capped at |LRU|).
    #[test]
    fn np_dirty_is_read_per_single_page_flush_by_default() {
        let mut r = report(300_000);
        r.user.dirty_victim_scanned = 9_000;
        r.user.wait_free = 3;
        r.lru_len = 20_000;
        let mut st = tuned(1024, 200, 200);
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 1024 + 3_000);
        let mut st = SelfTuning::new(SelfTuningConfig {
            np_dirty: NpDirty::Total,
            ..SelfTuningConfig::default()
        });
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 1024 + 9_000);
    }

    #[test]
    fn scan_depth_raise_is_capped_at_lru_length() {
        let mut st = tuned(3990, 200, 200);
        let mut r = report(100);
        r.user.dirty_victim_scanned = 20;
        r.np_lru = 5;
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 4000, "Pscan obviously cannot exceed |LRU|");
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 4000);
    }

    #[test]
    fn literal_flow_chart_does_not_raise_scan_depth_past_lru_length() {
        let mut st = SelfTuning::new(SelfTuningConfig {
            scan_depth_raise: ScanDepthRaise::Literal,
            ..SelfTuningConfig::default()
        });
        st.lru_scan_depth = 3990;
        st.np_req_flush = 200;
        let mut r = report(100);
        r.user.dirty_victim_scanned = 20;
        r.np_lru = 5;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 3990, "Pscan + NP_dirty > |LRU|: no raise");
        assert!(rules.contains(&"lru_stable_state"), "falls through to the stable state");
    }

    #[test]
    fn surplus_free_pages_lower_scan_depth() {
        let mut st = tuned(1024, 200, 200);
        let mut r = report(100);
        r.free_len_at_start = 300;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 724);
        assert!(rules.contains(&"surplus_free_pages_lower_scan_depth"));
    }

    #[test]
    fn surplus_free_pages_do_not_lower_scan_depth_below_minimum() {
        let mut st = tuned(350, 200, 200);
        let mut r = report(100);
        r.free_len_at_start = 300;
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 350, "Pscan < |free| + Pscan_MIN");
    }

    #[test]
    fn users_scanning_for_clean_pages_keep_scan_depth() {
        let mut st = tuned(1024, 200, 200);
        let mut r = report(100);
        r.free_len_at_start = 300;
        r.user.clean_victim_scanned = 4;
        r.np_lru = 12;
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 1024, "NP_clean > 0: free pages are needed");
        assert_eq!(st.np_lru_stable(), 12);
    }

    #[test]
    fn lru_stable_state_records_np_lru() {
        let mut st = tuned(1024, 200, 200);
        let mut r = report(100);
        r.np_lru = 321;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.np_lru_stable(), 321);
        assert!(rules.contains(&"lru_stable_state"));
    }

    #[test]
    fn idle_iteration_is_not_a_stable_state() {
        let mut st = tuned(1024, 200, 0);
        let (_, rules) = end(&mut st, &report(100));
        assert_eq!(st.np_lru_stable(), 100, "NP_LRU = 0 leaves NP_LRU_stable alone");
        assert_eq!(st.np_flush_stable(), 100);
        assert!(rules.is_empty(), "{rules:?}");
    }

    #[test]
    fn sync_recoverability_writes_raise_io_capacity() {
        let mut st = tuned(1024, 200, 400);
        let mut r = report(100);
        r.user.sync_recoverability_writes = 55;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.io_capacity(), 255);
        assert!(rules.contains(&"sync_recoverability_raises_io_capacity"));
    }

    #[test]
    fn sync_recoverability_writes_with_enough_io_capacity_do_not_raise_it() {
        let mut st = tuned(1024, 500, 400);
        let mut r = report(100);
        r.user.sync_recoverability_writes = 55;
        end(&mut st, &r);
        assert_eq!(
            st.io_capacity(),
            400,
            "Pio >= NP_req_flush: the 'higher than required' rule applies instead"
        );
    }

    #[test]
    fn io_capacity_higher_than_required_drops_to_np_req_flush() {
        let mut st = tuned(1024, 800, 150);
        let (_, rules) = end(&mut st, &report(100));
        assert_eq!(st.io_capacity(), 150);
        assert!(rules.contains(&"surplus_io_capacity_lowers_to_requested"));
    }

    #[test]
    fn io_capacity_not_lowered_below_minimum() {
        let mut st = tuned(1024, 800, 60);
        let mut r = report(100);
        r.np_flush = 60;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.io_capacity(), 800, "NP_req_flush < Pio_MIN");
        assert!(rules.contains(&"flush_stable_state"));
        assert_eq!(st.np_flush_stable(), 60);
    }

    #[test]
    fn flush_stable_state_records_np_flush() {
        let mut st = tuned(1024, 200, 200);
        let mut r = report(100);
        r.np_flush = 190;
        end(&mut st, &r);
        assert_eq!(st.np_flush_stable(), 190);
        assert_eq!(st.io_capacity(), 200);
    }

    #[test]
    fn overloaded_lru_majority_lowers_scan_depth_toward_stable() {
        let mut st = tuned(2000, 200, 200);
        st.np_lru_stable = 500;
        let mut r = report(1_500_000);
        r.np_lru = 1000;
        r.np_flush = 100;
        let (sleep, rules) = end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 1000, "Pscan x 500/1000");
        assert_eq!(st.io_capacity(), 200);
        assert_eq!(sleep, Sleep::none(), "no sleep when overloaded");
        assert!(rules.contains(&"overload_lowers_scan_depth"));
    }

    #[test]
    fn flushing_beyond_io_capacity_lowers_io_capacity_toward_stable() {
        let mut st = tuned(1024, 4000, 4000);
        st.np_flush_stable = 1000;
        let mut r = report(2_000_000);
        r.np_lru = 10;
        r.np_flush = 8000;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.io_capacity(), 500, "Pio x 1000/8000");
        assert_eq!(st.lru_scan_depth(), 1024);
        assert!(rules.contains(&"overload_lowers_io_capacity"));
    }

    #[test]
    fn overload_lowering_stops_at_minimums() {
        let mut st = tuned(1024, 300, 300);
        st.np_flush_stable = 100;
        let mut r = report(2_000_000);
        r.np_flush = 100_000;
        end(&mut st, &r);
        assert_eq!(st.io_capacity(), 100, "Pio_MIN");
        let mut st = tuned(1024, 300, 300);
        st.np_lru_stable = 100;
        let mut r = report(2_000_000);
        r.np_lru = 100_000;
        end(&mut st, &r);
        assert_eq!(st.lru_scan_depth(), 100, "Pscan_MIN");
    }

    #[test]
    fn overload_caused_by_other_activity_changes_nothing() {
        let mut st = tuned(1024, 200, 200);
        st.np_lru_stable = 900;
        st.np_flush_stable = 300;
        let mut r = report(1_800_000);
        r.np_lru = 800;
        r.np_flush = 100;
        r.user.dirty_victim_scanned = 50;
        let (_, rules) = end(&mut st, &r);
        assert_eq!((st.lru_scan_depth(), st.io_capacity()), (1024, 200));
        assert!(rules.contains(&"overload_by_others_keeps_scan_depth"));
        let mut r = report(1_800_000);
        r.np_flush = 250;
        let (_, rules) = end(&mut st, &r);
        assert_eq!(st.io_capacity(), 200);
        assert!(rules.contains(&"overload_by_others_keeps_io_capacity"));
    }

    #[test]
    fn io_capacity_max_is_twice_io_capacity_without_floor() {
        let st = tuned(1024, 150, 0);
        assert_eq!(st.io_capacity_max(), 300);
        let params: std::collections::HashMap<_, _> = st.parameters().into_iter().collect();
        assert_eq!(params["io_capacity_max"], 300.0);
        assert_eq!(params["p_scan"], 1024.0);
    }
}
