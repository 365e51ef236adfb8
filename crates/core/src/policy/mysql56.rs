//! `mysql56`: MySQL 5.6's page cleaner, Algorithm 1 of Lee et al.
//!
//! Every second: an LRU batch with depth Pscan (`innodb_lru_scan_depth`,
//! 1024), then a flush-list batch of NP_req_flush pages from adaptive
//! flushing with Pio (`innodb_io_capacity`, 200) and `innodb_io_capacity_max`
//! = max(2000, 2 x Pio); then `sleep(1 s - T_flushing)`. Neither parameter
//! adapts. When the server was idle since the last iteration (InnoDB's
//! `srv_check_activity`), it instead flushes `PCT_IO(100)` = Pio pages with
//! no LSN limit and skips the sleep if it flushed something and no read is
//! pending (5.6 `buf_flush_page_cleaner_thread`).

use crate::adaptive_flushing::{AdaptiveFlushing, AdaptiveFlushingConfig};
use crate::policy::{FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, Sleep};
use crate::types::Lsn;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mysql56Config {
    /// Pscan: `innodb_lru_scan_depth`, default 1024.
    pub lru_scan_depth: u32,
    /// Pio: `innodb_io_capacity`, default 200.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`; `None` = max(2000, 2 x Pio) as in 5.6.
    pub io_capacity_max: Option<u32>,
    pub adaptive: AdaptiveFlushingConfig,
}

impl Default for Mysql56Config {
    fn default() -> Self {
        Self {
            lru_scan_depth: 1024,
            io_capacity: 200,
            io_capacity_max: None,
            adaptive: AdaptiveFlushingConfig::default(),
        }
    }
}

impl Mysql56Config {
    pub fn io_capacity_max(&self) -> u32 {
        self.io_capacity_max.unwrap_or((2 * self.io_capacity).max(2000))
    }
}

pub struct Mysql56 {
    config: Mysql56Config,
    adaptive: AdaptiveFlushing,
    last_requests: u64,
    idle_iteration: bool,
    recommended: bool,
    last_np_req_flush: u32,
}

impl Mysql56 {
    pub fn new(config: Mysql56Config) -> Self {
        Self {
            adaptive: AdaptiveFlushing::new(config.adaptive),
            config,
            last_requests: 0,
            idle_iteration: false,
            recommended: false,
            last_np_req_flush: 0,
        }
    }
}

impl FlushPolicy for Mysql56 {
    fn name(&self) -> &'static str {
        "mysql56"
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let requests = ctx.pool.counters().requests;
        self.idle_iteration = requests == self.last_requests;
        self.last_requests = requests;
        let depth = if self.idle_iteration {
            0
        } else {
            self.config.lru_scan_depth
        };
        Plan::Flush(IterationPlan::innodb(depth))
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        self.recommended = false;
        if self.idle_iteration {
            let pages = self.config.io_capacity;
            ctx.decide("idle_background_flush", || {
                format!("server idle: flush PCT_IO(100) = {pages} pages")
            });
            return FlushListPlan {
                pages,
                lsn_limit: Lsn::MAX,
            };
        }
        let io_max = self.config.io_capacity_max();
        match self.adaptive.recommend(ctx.pool, self.config.io_capacity, io_max) {
            None => FlushListPlan::NONE,
            Some(rec) => {
                self.recommended = true;
                self.last_np_req_flush = rec.pages;
                ctx.decide("adaptive_flushing", || {
                    format!(
                        "NP_req_flush={} (pct_for_dirty={} pct_for_lsn={} age={} B, avg_page_rate={})",
                        rec.pages,
                        rec.pct_for_dirty,
                        rec.pct_for_lsn,
                        rec.age_bytes,
                        self.adaptive.avg_page_rate()
                    )
                });
                FlushListPlan {
                    pages: rec.pages,
                    lsn_limit: rec.lsn_limit,
                }
            }
        }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        if self.recommended {
            self.adaptive.record_flushed(report.np_flush);
        }
        let flushed = report.np_lru + report.np_flush;
        if self.idle_iteration && flushed > 0 && ctx.pool.pending_reads() == 0 {
            return Sleep::none();
        }
        Sleep::rest_of_second(report.flushing_time_us)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("p_scan", f64::from(self.config.lru_scan_depth)),
            ("p_io", f64::from(self.config.io_capacity)),
            ("io_capacity_max", f64::from(self.config.io_capacity_max())),
            ("np_req_flush", f64::from(self.last_np_req_flush)),
        ]
    }
}
