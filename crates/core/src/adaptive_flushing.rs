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
//! Invariant: the recommendation never exceeds `io_capacity_max`.

use crate::buffer_pool::BufferPool;
use crate::types::Lsn;

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

    /// `af_get_pct_for_dirty`.
    pub fn pct_for_dirty(&self, pool: &BufferPool) -> u64 {
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
}
