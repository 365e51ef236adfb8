//! MySQL 5.6 adaptive flushing: how many pages to flush from the flush list.
//!
//! Restates `page_cleaner_flush_pages_if_needed`, `af_get_pct_for_dirty` and
//! `af_get_pct_for_lsn` of MySQL 5.6 `buf0flu.cc` (read from the public
//! source; our own words):
//!
//! - every `innodb_flushing_avg_loops` (30) iterations with redo progress,
//!   `avg_page_rate = (sum_pages / loops + avg_page_rate) / 2` and
//!   `lsn_avg_rate = (lsn_avg_rate + Δlsn / loops) / 2`;
//! - `pct_for_dirty`: with `innodb_max_dirty_pages_pct_lwm` = 0 (5.6 default)
//!   100 once dirty% exceeds `innodb_max_dirty_pages_pct`, else 0; with a
//!   low-water mark L, `dirty% x 100 / (max + 1)` once dirty% > L;
//! - `pct_for_lsn`: 0 below `innodb_adaptive_flushing_lwm` (10% of the log
//!   capacity), else with `f = 100 x age / max_modified_age_async`,
//!   `(io_max / io) x f^1.5 / 7.5` (integer division of the capacities);
//!   Percona Server's `innodb_cleaner_lsn_age_factor = high_checkpoint`
//!   (its 5.6 default) uses `(io_max / io) x f^2.5 / 700.5` instead;
//! - `n = (PCT_IO(max(pct_for_dirty, pct_for_lsn)) + avg_page_rate) / 2`,
//!   capped at `io_capacity_max`: this is NP_req_flush (Lee et al., Table 2);
//! - the batch flushes pages older than
//!   `oldest + lsn_avg_rate x (age_factor + 1)`, where `age_factor =
//!   prev_pages / last_pages` when the log moved more than half the average
//!   rate since the last batch.
//!
//! MySQL 8.0 keeps the two percentages and changes the rest
//! (`Adaptive_flush` namespace of 8.0 `buf0flu.cc`, read in 8.0.27:
//! `initialize`, `set_average`, `get_pct_for_dirty`, `get_pct_for_lsn`,
//! `set_flush_target_by_lsn`, `page_recommendation`); [`AdaptiveGeneration::Mysql80`]
//! selects it and [`AdaptiveFlushing::recommend_80`] runs it:
//!
//! - the averages are refreshed after `innodb_flushing_avg_loops` calls *or*
//!   that many seconds, per elapsed second (floored at 1 s), not per loop;
//! - `get_pct_for_dirty` works on the real-valued dirty share and compares
//!   with `>=`; no dirty page gives 0 (with 8.0's low-water mark of 10,
//!   `dirty% x 100 / (max + 1)` from 10% on);
//! - `pages_for_lsn`: the flush-list pages, from the oldest, whose oldest
//!   modification is at most `oldest + lsn_avg_rate x 3`
//!   (`buf_flush_lsn_scan_factor`), at most `2 x io_max x 3 x 2` scanned,
//!   divided by 3, at least 1, at most `2 x io_max`;
//! - `n = (PCT_IO(max(pct_for_dirty, pct_for_lsn)) + page_avg_rate +
//!   pages_for_lsn) / 3`, capped at `io_capacity_max`, with no LSN limit;
//! - past the sync point (`innodb_flush_sync`), the target is the caller's
//!   sync LSN, the scan factor 1, and `n = pages_for_lsn` (at most
//!   `2 x io_max`), at least `io_capacity`;
//! - the one pool instance's request (`page_cleaner->slots[0].n_pages_requested`)
//!   is `n + 1`, or, once `pct_for_lsn > 30`, its share of `pages_for_lsn`
//!   scaled to `n`, plus 1.
//!
//! Invariant: the recommendation never exceeds `io_capacity_max`, except
//! 8.0's sync flush, which may ask for up to `2 x io_capacity_max` (and at
//! least `io_capacity`).

use crate::buffer_pool::BufferPool;
use crate::types::{Lsn, TimeUs, SECOND_US};

/// `buf_flush_lsn_scan_factor` (MySQL 8.0 and MariaDB `buf0flu.cc`): the
/// LSN target of `pages_for_lsn` is this many average redo rates ahead.
pub const LSN_SCAN_FACTOR: u64 = 3;

/// Which InnoDB's arithmetic [`AdaptiveFlushing`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaptiveGeneration {
    /// MySQL 5.6 `page_cleaner_flush_pages_if_needed` ([`AdaptiveFlushing::recommend`]).
    Mysql56,
    /// MySQL 8.0 `Adaptive_flush::page_recommendation` ([`AdaptiveFlushing::recommend_80`]).
    Mysql80,
}

/// The lsn-age curve: MySQL's, or Percona's flatter `high_checkpoint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LsnAgeFactor {
    /// MySQL 5.6: f^1.5 / 7.5.
    Legacy,
    /// Percona Server 5.6 default: f^2.5 / 700.5.
    HighCheckpoint,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveFlushingConfig {
    /// `innodb_max_dirty_pages_pct`: 90 in Lee et al., Table 3 (5.6 default 75).
    pub max_dirty_pages_pct: u64,
    /// `innodb_max_dirty_pages_pct_lwm`: 0 in MySQL 5.6.
    pub max_dirty_pages_pct_lwm: u64,
    /// `innodb_adaptive_flushing_lwm`: 10 (% of log capacity).
    pub adaptive_flushing_lwm_pct: u64,
    /// `innodb_flushing_avg_loops`: 30.
    pub flushing_avg_loops: u32,
    /// `innodb_adaptive_flushing`: ON.
    pub adaptive_flushing: bool,
    pub lsn_age_factor: LsnAgeFactor,
    pub generation: AdaptiveGeneration,
}

impl Default for AdaptiveFlushingConfig {
    fn default() -> Self {
        Self {
            max_dirty_pages_pct: 90,
            max_dirty_pages_pct_lwm: 0,
            adaptive_flushing_lwm_pct: 10,
            flushing_avg_loops: 30,
            adaptive_flushing: true,
            lsn_age_factor: LsnAgeFactor::Legacy,
            generation: AdaptiveGeneration::Mysql56,
        }
    }
}

/// One recommendation of the heuristic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushRecommendation {
    /// NP_req_flush in Lee et al., Table 2 (`buffer_flush_n_to_flush_requested`).
    pub pages: u32,
    pub lsn_limit: Lsn,
    /// `buffer_flush_pct_for_dirty`.
    pub pct_for_dirty: u64,
    /// `buffer_flush_pct_for_lsn`.
    pub pct_for_lsn: u64,
    pub age_bytes: u64,
}

/// One recommendation of MySQL 8.0's `Adaptive_flush::page_recommendation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushRecommendation80 {
    /// `n_pages` (`MONITOR_FLUSH_N_TO_FLUSH_REQUESTED`): NP_req_flush.
    pub pages: u32,
    /// What the one pool instance is asked to write
    /// (`page_cleaner->slots[0].n_pages_requested`); 0 when `pages` is 0.
    pub slot_request: u32,
    /// `Lsn::MAX`, or the sync-flush target.
    pub lsn_limit: Lsn,
    pub pct_for_dirty: u64,
    pub pct_for_lsn: u64,
    /// `sum_pages_for_lsn` after the division by the scan factor.
    pub pages_for_lsn: u64,
    pub age_bytes: u64,
    /// The log did not move since the last averaging point and this is no
    /// sync flush: no LSN-based estimate, `pages` = 0 (`skip_lsn`).
    pub lsn_skipped: bool,
}

/// The heuristic's running state (the function's `static`s in InnoDB).
#[derive(Clone, Debug)]
pub struct AdaptiveFlushing {
    pub config: AdaptiveFlushingConfig,
    lsn_avg_rate: u64,
    prev_lsn: Lsn,
    last_lsn: Lsn,
    sum_pages: u64,
    last_pages: u64,
    prev_pages: u64,
    avg_page_rate: u64,
    n_iterations: u32,
    /// 8.0's `prev_time`: when the averages were last refreshed.
    prev_time_us: TimeUs,
}

impl AdaptiveFlushing {
    pub fn new(config: AdaptiveFlushingConfig) -> Self {
        Self {
            config,
            lsn_avg_rate: 0,
            prev_lsn: Lsn::ZERO,
            last_lsn: Lsn::ZERO,
            sum_pages: 0,
            last_pages: 0,
            prev_pages: 0,
            avg_page_rate: 0,
            n_iterations: 0,
            prev_time_us: 0,
        }
    }

    /// `buffer_flush_avg_page_rate`.
    pub fn avg_page_rate(&self) -> u64 {
        self.avg_page_rate
    }

    /// `buffer_flush_lsn_avg_rate` (bytes of redo per iteration).
    pub fn lsn_avg_rate(&self) -> u64 {
        self.lsn_avg_rate
    }

    /// `af_get_pct_for_dirty` (5.6), or 8.0's `Adaptive_flush::get_pct_for_dirty`.
    pub fn pct_for_dirty(&self, pool: &BufferPool) -> u64 {
        if self.config.generation == AdaptiveGeneration::Mysql80 {
            return self.pct_for_dirty_80(pool);
        }
        // buf_get_modified_ratio_pct: dirty x 100 / (1 + LRU + free).
        let dirty_pct =
            u64::from(pool.dirty_pages()) * 100 / (1 + u64::from(pool.lru_len()) + u64::from(pool.free_len()));
        let max = self.config.max_dirty_pages_pct;
        let lwm = self.config.max_dirty_pages_pct_lwm;
        if lwm == 0 {
            if dirty_pct > max {
                return 100;
            }
        } else if dirty_pct > lwm {
            return dirty_pct * 100 / (max + 1);
        }
        0
    }

    /// 8.0 `get_pct_for_dirty`: the real-valued share
    /// `100 x dirty / (1 + LRU + free)` (`buf_get_modified_ratio_pct`), `>=`
    /// comparisons, 0 with no dirty page.
    fn pct_for_dirty_80(&self, pool: &BufferPool) -> u64 {
        let dirty_pct =
            100.0 * f64::from(pool.dirty_pages()) / (1.0 + f64::from(pool.lru_len()) + f64::from(pool.free_len()));
        if dirty_pct == 0.0 {
            return 0;
        }
        let max = self.config.max_dirty_pages_pct as f64;
        let lwm = self.config.max_dirty_pages_pct_lwm as f64;
        if lwm == 0.0 {
            if dirty_pct >= max {
                return 100;
            }
        } else if dirty_pct >= lwm {
            return (dirty_pct * 100.0 / (max + 1.0)) as u64;
        }
        0
    }

    /// `af_get_pct_for_lsn`.
    pub fn pct_for_lsn(&self, pool: &BufferPool, age_bytes: u64, io_capacity: u32, io_capacity_max: u32) -> u64 {
        let margins = &pool.redo().margins;
        let af_lwm = self.config.adaptive_flushing_lwm_pct * margins.group_capacity_bytes / 100;
        if age_bytes < af_lwm {
            return 0;
        }
        let max_async_age = margins.max_modified_age_async_bytes.max(1);
        if age_bytes < max_async_age && !self.config.adaptive_flushing {
            return 0;
        }
        let factor = (age_bytes * 100 / max_async_age) as f64;
        let capacity_ratio = f64::from(io_capacity_max / io_capacity.max(1));
        let pct = match self.config.lsn_age_factor {
            LsnAgeFactor::Legacy => capacity_ratio * (factor * factor.sqrt()) / 7.5,
            LsnAgeFactor::HighCheckpoint => capacity_ratio * (factor * factor * factor.sqrt()) / 700.5,
        };
        pct as u64
    }

    /// One call of `page_cleaner_flush_pages_if_needed` up to the batch:
    /// `None` where InnoDB returns early (first call, no redo since the last
    /// averaging point), else the pages and LSN limit to flush.
    pub fn recommend(
        &mut self,
        pool: &BufferPool,
        io_capacity: u32,
        io_capacity_max: u32,
    ) -> Option<FlushRecommendation> {
        let cur_lsn = pool.current_lsn();
        if self.prev_lsn == Lsn::ZERO {
            self.prev_lsn = cur_lsn.max(Lsn(1));
            return None;
        }
        if self.prev_lsn == cur_lsn {
            return None;
        }
        let loops = u64::from(self.config.flushing_avg_loops.max(1));
        self.n_iterations += 1;
        if u64::from(self.n_iterations) >= loops {
            self.avg_page_rate = (self.sum_pages / loops + self.avg_page_rate) / 2;
            let lsn_rate = cur_lsn.bytes_since(self.prev_lsn) / loops;
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) / 2;
            self.prev_lsn = cur_lsn;
            self.n_iterations = 0;
            self.sum_pages = 0;
        }
        let oldest = pool.oldest_modification();
        let age = cur_lsn.bytes_since(oldest);
        let pct_for_dirty = self.pct_for_dirty(pool);
        let pct_for_lsn = self.pct_for_lsn(pool, age, io_capacity, io_capacity_max);
        let pct_total = pct_for_dirty.max(pct_for_lsn);
        let pct_io = u64::from(io_capacity) * pct_total / 100;
        let pages = ((pct_io + self.avg_page_rate) / 2).min(u64::from(io_capacity_max));
        let mut age_factor = 0;
        if self.last_pages > 0 && cur_lsn.bytes_since(self.last_lsn) > self.lsn_avg_rate / 2 {
            age_factor = self.prev_pages / self.last_pages;
        }
        self.prev_pages = pages;
        self.last_lsn = cur_lsn;
        Some(FlushRecommendation {
            pages: pages as u32,
            lsn_limit: oldest.advance(self.lsn_avg_rate.saturating_mul(age_factor + 1)),
            pct_for_dirty,
            pct_for_lsn,
            age_bytes: age,
        })
    }

    /// One call of MySQL 8.0's `Adaptive_flush::page_recommendation` for one
    /// pool instance at `now_us`: `last_pages` is what the previous
    /// flush-list batch wrote (`last_pages_in`), `sync_target` the sync-flush
    /// LSN when `innodb_flush_sync` is in force. `None` on the first call
    /// (`initialize` only records the LSN and time).
    pub fn recommend_80(
        &mut self,
        pool: &BufferPool,
        io_capacity: u32,
        io_capacity_max: u32,
        now_us: TimeUs,
        last_pages: u32,
        sync_target: Option<Lsn>,
    ) -> Option<FlushRecommendation80> {
        let cur_lsn = pool.current_lsn();
        if self.prev_lsn == Lsn::ZERO {
            self.prev_lsn = cur_lsn.max(Lsn(1));
            self.prev_time_us = now_us;
            return None;
        }
        let lsn_skipped = self.prev_lsn == cur_lsn && sync_target.is_none();
        // set_average: per elapsed second, after `loops` calls or seconds.
        self.n_iterations += 1;
        self.sum_pages += u64::from(last_pages);
        let elapsed_s = (now_us.saturating_sub(self.prev_time_us) / SECOND_US).max(1);
        let loops = u64::from(self.config.flushing_avg_loops.max(1));
        if u64::from(self.n_iterations) >= loops || elapsed_s >= loops {
            let elapsed = elapsed_s as f64;
            self.avg_page_rate = ((self.sum_pages as f64 / elapsed + self.avg_page_rate as f64) / 2.0) as u64;
            let lsn_rate = (cur_lsn.bytes_since(self.prev_lsn) as f64 / elapsed) as u64;
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) / 2;
            self.prev_lsn = cur_lsn;
            self.prev_time_us = now_us;
            self.n_iterations = 0;
            self.sum_pages = 0;
        }
        let oldest = pool.oldest_modification();
        let age = cur_lsn.bytes_since(oldest);
        let pct_for_dirty = self.pct_for_dirty(pool);
        let pct_for_lsn = self.pct_for_lsn(pool, age, io_capacity, io_capacity_max);
        if lsn_skipped {
            return Some(FlushRecommendation80 {
                pages: 0,
                slot_request: 0,
                lsn_limit: Lsn::MAX,
                pct_for_dirty,
                pct_for_lsn,
                pages_for_lsn: 0,
                age_bytes: age,
                lsn_skipped,
            });
        }
        // set_flush_target_by_lsn.
        let pct_total = pct_for_dirty.max(pct_for_lsn);
        let (target_lsn, scan_factor) = match sync_target {
            Some(target) => (target, 1),
            None => (
                oldest.advance(self.lsn_avg_rate.saturating_mul(LSN_SCAN_FACTOR)),
                LSN_SCAN_FACTOR,
            ),
        };
        let sum_pages_max = 2 * u64::from(io_capacity_max);
        let scan_max = (sum_pages_max * scan_factor * 2).min(u64::from(u32::MAX)) as u32;
        let scanned = u64::from(pool.flush_list_pages_up_to(target_lsn, scan_max));
        let slot_share = scanned / scan_factor + 1;
        let sum_pages_for_lsn = (scanned / scan_factor).max(1);
        let pages_for_lsn = sum_pages_for_lsn.min(sum_pages_max);
        let io = u64::from(io_capacity);
        let pages = match sync_target {
            Some(_) => pages_for_lsn.max(io),
            None => {
                let pct_io = (io as f64 * (pct_total as f64 / 100.0)) as u64;
                ((pct_io + self.avg_page_rate + pages_for_lsn) / 3).min(u64::from(io_capacity_max))
            }
        };
        let slot_request = if pages == 0 {
            // pc_request(0, ...): no flush-list batch is requested at all.
            0
        } else if pct_for_lsn > 30 {
            slot_share * pages / sum_pages_for_lsn + 1
        } else {
            pages + 1
        };
        Some(FlushRecommendation80 {
            pages: pages as u32,
            slot_request: slot_request.min(u64::from(u32::MAX)) as u32,
            lsn_limit: sync_target.unwrap_or(Lsn::MAX),
            pct_for_dirty,
            pct_for_lsn,
            pages_for_lsn,
            age_bytes: age,
            lsn_skipped,
        })
    }

    /// The batch that followed the last recommendation wrote `pages`.
    pub fn record_flushed(&mut self, pages: u32) {
        self.last_pages = u64::from(pages) + 1;
        self.sum_pages += u64::from(pages);
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic of `page_cleaner_flush_pages_if_needed` checked against
    //! the worked numbers of `shared/reference/innodb-flushing.md` §1.2 and §2.
    use super::*;
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome};
    use crate::types::PageId;

    /// A pool of `frames` frames with every frame holding a page, `dirty` of
    /// them modified (redo `lsn..lsn+10`, one after the other from LSN 2).
    fn pool_with_dirty(frames: u32, dirty: u32) -> BufferPool {
        let mut pool = BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap();
        for n in 0..frames {
            let FixOutcome::Miss(f) = pool.fix(PageId::new(1, n), FixIntent::Read, 0, 0) else {
                panic!("page {n} should miss")
            };
            pool.complete_read(f);
            if n < dirty {
                let start = Lsn(2 + 10 * u64::from(n));
                pool.note_modification(f, start, start.advance(10));
            }
            pool.unfix(f);
        }
        assert_eq!(pool.dirty_pages(), dirty);
        pool
    }

    fn heuristic(config: AdaptiveFlushingConfig) -> AdaptiveFlushing {
        AdaptiveFlushing::new(config)
    }

    /// The smallest age whose `100 x age / max_async` is exactly `f`.
    fn age_for_factor(pool: &BufferPool, f: u64) -> u64 {
        let max_async = pool.redo().margins.max_modified_age_async_bytes;
        (f * max_async).div_ceil(100)
    }

    #[test]
    fn pct_for_dirty_is_100_above_max_with_lwm_zero() {
        let af = heuristic(AdaptiveFlushingConfig::default());
        assert_eq!(af.config.max_dirty_pages_pct_lwm, 0);
        // dirty% = dirty x 100 / (1 + LRU + free) = dirty x 100 / 101.
        assert_eq!(af.pct_for_dirty(&pool_with_dirty(100, 91)), 0, "90% is not above 90");
        assert_eq!(af.pct_for_dirty(&pool_with_dirty(100, 92)), 100, "91% is above 90");
        assert_eq!(
            af.pct_for_dirty(&pool_with_dirty(100, 50)),
            0,
            "no low-water mark: nothing below max"
        );
    }

    #[test]
    fn pct_for_dirty_scales_above_lwm() {
        let af = heuristic(AdaptiveFlushingConfig {
            max_dirty_pages_pct_lwm: 10,
            ..AdaptiveFlushingConfig::default()
        });
        // 10 dirty of 100: 1000 / 101 = 9% <= lwm.
        assert_eq!(af.pct_for_dirty(&pool_with_dirty(100, 10)), 0);
        // 50 dirty: 49% -> 49 x 100 / 91 = 53 (integer arithmetic as in InnoDB).
        assert_eq!(af.pct_for_dirty(&pool_with_dirty(100, 50)), 53);
        // 95 dirty: 94% -> 103, past 100: the heuristic does not clamp here.
        assert_eq!(af.pct_for_dirty(&pool_with_dirty(100, 95)), 94 * 100 / 91);
    }

    #[test]
    fn pct_for_lsn_is_zero_below_adaptive_flushing_lwm() {
        let pool = pool_with_dirty(64, 0);
        let af = heuristic(AdaptiveFlushingConfig::default());
        let lwm = pool.redo().margins.group_capacity_bytes / 10;
        assert_eq!(af.pct_for_lsn(&pool, 0, 200, 2000), 0);
        assert_eq!(af.pct_for_lsn(&pool, lwm - 1, 200, 2000), 0);
        assert!(af.pct_for_lsn(&pool, lwm, 200, 2000) > 0, "at the lwm the curve starts");
    }

    #[test]
    fn pct_for_lsn_matches_innodb_formula() {
        let pool = pool_with_dirty(64, 0);
        let af = heuristic(AdaptiveFlushingConfig::default());
        // Reference §1.2 (derived): io 200, io_max 2000 -> ratio 10;
        // f = 100 gives 10 x 100^1.5 / 7.5 = 1333 %, f = 50 about 471 %.
        assert_eq!(af.pct_for_lsn(&pool, age_for_factor(&pool, 100), 200, 2000), 1333);
        assert_eq!(af.pct_for_lsn(&pool, age_for_factor(&pool, 50), 200, 2000), 471);
        // The capacity ratio is an integer division: 2000 / 300 = 6, not 6.67.
        assert_eq!(af.pct_for_lsn(&pool, age_for_factor(&pool, 100), 300, 2000), 800);
        // Past max_modified_age_async the curve keeps climbing (f = 150).
        assert_eq!(af.pct_for_lsn(&pool, age_for_factor(&pool, 150), 200, 2000), 2449);
    }

    #[test]
    fn high_checkpoint_flattens_the_curve_below_f_93() {
        let pool = pool_with_dirty(64, 0);
        let legacy = heuristic(AdaptiveFlushingConfig::default());
        let high = heuristic(AdaptiveFlushingConfig {
            lsn_age_factor: LsnAgeFactor::HighCheckpoint,
            ..AdaptiveFlushingConfig::default()
        });
        // Reference §2 (derived): the curves cross at f ~= 93; at f = 50
        // high_checkpoint flushes about 0.54x as much as legacy.
        let at = |af: &AdaptiveFlushing, f: u64| af.pct_for_lsn(&pool, age_for_factor(&pool, f), 200, 2000);
        assert_eq!(at(&high, 50), 252);
        let ratio = at(&high, 50) as f64 / at(&legacy, 50) as f64;
        assert!((ratio - 0.54).abs() < 0.01, "{ratio}");
        for f in 1..=93 {
            let (l, h) = (at(&legacy, f), at(&high, f));
            assert!(h < l || l == 0, "f={f}: high_checkpoint {h} should be below legacy {l}");
        }
        for f in 94..=300 {
            let (l, h) = (at(&legacy, f), at(&high, f));
            assert!(h > l, "f={f}: high_checkpoint {h} should be above legacy {l}");
        }
    }

    #[test]
    fn first_call_and_no_redo_progress_return_none() {
        let mut pool = pool_with_dirty(64, 4);
        let mut af = heuristic(AdaptiveFlushingConfig::default());
        assert_eq!(af.recommend(&pool, 200, 2000), None, "first call only records the LSN");
        assert_eq!(af.recommend(&pool, 200, 2000), None, "no redo since");
        pool.note_redo(pool.current_lsn().advance(1000));
        let rec = af.recommend(&pool, 200, 2000).expect("redo moved");
        assert_eq!(rec.age_bytes, pool.redo_age_bytes());
        // prev_lsn only moves at an averaging point, so redo progress since
        // the first call keeps the heuristic running.
        assert!(af.recommend(&pool, 200, 2000).is_some());
    }

    #[test]
    fn recommendation_is_capped_at_io_capacity_max() {
        let mut pool = pool_with_dirty(64, 1);
        let mut af = heuristic(AdaptiveFlushingConfig::default());
        assert_eq!(af.recommend(&pool, 200, 2000), None);
        // Age at f = 150: PCT_IO(2449 %) = 4898 pages, halved with a zero
        // page rate = 2449 > io_capacity_max.
        let age = age_for_factor(&pool, 150);
        pool.note_redo(pool.oldest_modification().advance(age));
        let rec = af.recommend(&pool, 200, 2000).unwrap();
        assert_eq!(rec.pct_for_lsn, 2449);
        assert_eq!(rec.pages, 2000, "capped at io_capacity_max");
        // Below the cap, the formula shows through: f = 100 -> 2666 / 2.
        let mut pool = pool_with_dirty(64, 1);
        let mut af = heuristic(AdaptiveFlushingConfig::default());
        af.recommend(&pool, 200, 2000);
        pool.note_redo(pool.oldest_modification().advance(age_for_factor(&pool, 100)));
        assert_eq!(af.recommend(&pool, 200, 2000).unwrap().pages, 1333);
        // A dirty-page emergency is capped too: PCT_IO(100) with io 4000 > io_max 3000.
        let mut pool = pool_with_dirty(100, 95);
        let mut af = heuristic(AdaptiveFlushingConfig::default());
        af.recommend(&pool, 4000, 3000);
        pool.note_redo(pool.current_lsn().advance(10));
        let rec = af.recommend(&pool, 4000, 3000).unwrap();
        assert_eq!(rec.pct_for_dirty, 100);
        assert_eq!(rec.pages, 2000, "(4000 + 0) / 2 is under the cap");
        let mut af = heuristic(AdaptiveFlushingConfig::default());
        af.recommend(&pool, 8000, 3000);
        pool.note_redo(pool.current_lsn().advance(10));
        assert_eq!(af.recommend(&pool, 8000, 3000).unwrap().pages, 3000);
    }

    #[test]
    fn averages_update_every_flushing_avg_loops_iterations() {
        let mut pool = pool_with_dirty(64, 1);
        let mut af = heuristic(AdaptiveFlushingConfig {
            flushing_avg_loops: 3,
            ..AdaptiveFlushingConfig::default()
        });
        assert_eq!(af.recommend(&pool, 200, 2000), None);
        let mut rates = Vec::new();
        for _ in 0..6 {
            pool.note_redo(pool.current_lsn().advance(3000));
            let rec = af.recommend(&pool, 200, 2000).unwrap();
            af.record_flushed(30);
            rates.push((af.avg_page_rate(), af.lsn_avg_rate(), rec.lsn_limit));
        }
        let oldest = pool.oldest_modification();
        // Iterations 1-2: nothing averaged yet; the LSN limit is the oldest
        // modification itself (lsn_avg_rate 0 flushes nothing).
        assert_eq!(rates[0], (0, 0, oldest));
        assert_eq!(rates[1].0, 0);
        // Iteration 3: sum_pages = 60 over 3 loops -> (20 + 0) / 2 = 10;
        // 9000 bytes of redo over 3 loops -> (0 + 3000) / 2 = 1500.
        assert_eq!((rates[2].0, rates[2].1), (10, 1500));
        assert_eq!(
            (rates[3].0, rates[3].1),
            (10, 1500),
            "unchanged between averaging points"
        );
        assert_eq!((rates[4].0, rates[4].1), (10, 1500));
        // Iteration 6: sum_pages = 90 -> (30 + 10) / 2 = 20; (1500 + 3000) / 2 = 2250.
        assert_eq!((rates[5].0, rates[5].1), (20, 2250));
        // age_factor = prev_pages / last_pages = 0 here (prev recommendations
        // are tiny), so the limit is oldest + lsn_avg_rate.
        assert_eq!(rates[5].2, oldest.advance(2250));
    }
    // ----- MySQL 8.0 (`Adaptive_flush`, read in 8.0.27) -----------------

    fn heuristic_80(lwm: u64) -> AdaptiveFlushing {
        AdaptiveFlushing::new(AdaptiveFlushingConfig {
            max_dirty_pages_pct_lwm: lwm,
            generation: AdaptiveGeneration::Mysql80,
            ..AdaptiveFlushingConfig::default()
        })
    }

    #[test]
    fn pct_for_dirty_80_uses_the_real_share_and_reaches_marks_inclusively() {
        // 99 frames: dirty% = dirty x 100 / (1 + 99) exactly.
        let at_lwm = pool_with_dirty(99, 10);
        assert_eq!(heuristic_80(10).pct_for_dirty(&at_lwm), 10, "10% >= lwm: 10 x 100 / 91");
        let five_six = heuristic(AdaptiveFlushingConfig {
            max_dirty_pages_pct_lwm: 10,
            ..AdaptiveFlushingConfig::default()
        });
        assert_eq!(five_six.pct_for_dirty(&at_lwm), 0, "5.6 needs dirty% > lwm");
        let at_max = pool_with_dirty(99, 90);
        assert_eq!(heuristic_80(0).pct_for_dirty(&at_max), 100, "lwm 0: 90% >= max");
        assert_eq!(heuristic(AdaptiveFlushingConfig::default()).pct_for_dirty(&at_max), 0);
        assert_eq!(
            heuristic_80(10).pct_for_dirty(&pool_with_dirty(99, 0)),
            0,
            "nothing dirty"
        );
    }

    #[test]
    fn recommend_80_first_call_records_and_no_redo_skips_the_estimate() {
        let pool = pool_with_dirty(64, 4);
        let mut af = heuristic_80(10);
        assert_eq!(af.recommend_80(&pool, 200, 2000, 0, 0, None), None, "initialize");
        let rec = af.recommend_80(&pool, 200, 2000, SECOND_US, 0, None).unwrap();
        assert!(rec.lsn_skipped);
        assert_eq!((rec.pages, rec.slot_request), (0, 0), "skip_lsn: no flush-list request");
        // A sync flush is never skipped.
        let rec = af
            .recommend_80(&pool, 200, 2000, 2 * SECOND_US, 0, Some(Lsn(3)))
            .unwrap();
        assert!(!rec.lsn_skipped);
        assert_eq!(rec.pages, 200, "at least io_capacity");
    }

    #[test]
    fn recommend_80_averages_three_ways_with_pages_for_lsn() {
        // 60 of 64 frames dirty (oldest LSNs 2, 12, ...): dirty% = 6000/65 =
        // 92.3 -> pct_for_dirty = 92.3 x 100 / 91 = 101; the age (600 B) is
        // far below the adaptive-flushing lwm: pct_for_lsn = 0.
        let mut pool = pool_with_dirty(64, 60);
        let mut af = heuristic_80(10);
        af.recommend_80(&pool, 200, 2000, 0, 0, None);
        pool.note_redo(pool.current_lsn().advance(1000));
        let rec = af.recommend_80(&pool, 200, 2000, SECOND_US, 0, None).unwrap();
        assert_eq!((rec.pct_for_dirty, rec.pct_for_lsn), (101, 0));
        // lsn_avg_rate is still 0: the target is the oldest page itself,
        // 1 page / 3 -> floored at 1. n = (PCT_IO(101) = 202 + 0 + 1) / 3.
        assert_eq!(rec.pages_for_lsn, 1);
        assert_eq!(rec.pages, 67);
        assert_eq!(rec.slot_request, 68, "pct_for_lsn <= 30: n / instances + 1");
        assert_eq!(rec.lsn_limit, Lsn::MAX);
    }

    #[test]
    fn recommend_80_refreshes_averages_per_elapsed_second() {
        let mut pool = pool_with_dirty(64, 4);
        let mut af = heuristic_80(10);
        af.recommend_80(&pool, 200, 2000, 0, 0, None);
        // One call 40 s later: fewer than 30 calls but more than 30 s.
        pool.note_redo(pool.current_lsn().advance(40_000));
        af.recommend_80(&pool, 200, 2000, 40 * SECOND_US, 80, None);
        assert_eq!(af.avg_page_rate(), 1, "(80 pages / 40 s + 0) / 2");
        assert_eq!(af.lsn_avg_rate(), 500, "(0 + 40000 B / 40 s) / 2");
        // 5.6 would average per loop and only after 30 loops.
        let mut pool = pool_with_dirty(64, 4);
        let mut five_six = heuristic(AdaptiveFlushingConfig::default());
        five_six.recommend(&pool, 200, 2000);
        pool.note_redo(pool.current_lsn().advance(40_000));
        five_six.record_flushed(80);
        five_six.recommend(&pool, 200, 2000);
        assert_eq!((five_six.avg_page_rate(), five_six.lsn_avg_rate()), (0, 0));
    }

    #[test]
    fn recommend_80_sync_flush_targets_the_sync_lsn_with_io_capacity_floor() {
        // 10 dirty pages, oldest LSNs 2, 12, ..., 92; the age at f = 100 makes
        // pct_for_lsn 1333 > 30, so the request is pages_for_lsn's share.
        let mut pool = pool_with_dirty(64, 10);
        let mut af = heuristic_80(10);
        af.recommend_80(&pool, 200, 2000, 0, 0, None);
        pool.note_redo(pool.oldest_modification().advance(age_for_factor(&pool, 100)));
        let rec = af.recommend_80(&pool, 200, 2000, SECOND_US, 0, Some(Lsn(55))).unwrap();
        assert_eq!(rec.lsn_limit, Lsn(55));
        assert_eq!(rec.pages_for_lsn, 6, "scan factor 1: oldest 2..52");
        assert_eq!(rec.pages, 200, "max(pages_for_lsn, io_capacity)");
        assert_eq!(rec.slot_request, 7 * 200 / 6 + 1, "(S + 1) x n / S + 1");
        // Past io_capacity_max, up to 2 x io_capacity_max: io 1, io_max 2
        // scan at most 2 x 2 x 1 x 2 = 8 pages, keep 2 x 2 = 4.
        let rec = af
            .recommend_80(&pool, 1, 2, 2 * SECOND_US, 0, Some(pool.current_lsn()))
            .unwrap();
        assert_eq!((rec.pages_for_lsn, rec.pages), (4, 4));
    }
}
