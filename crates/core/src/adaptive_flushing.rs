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
