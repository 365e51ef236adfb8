//! Redo-space accounting: how far the oldest dirty page lags the log head.
//!
//! The redo log is circular: a record may be overwritten only once every page
//! it describes is on disk, i.e. once the checkpoint has passed it. The
//! checkpoint can advance at most to the oldest modification still in the
//! flush list, so the *age* `current_lsn - oldest_modification` is the redo
//! space the dirty pages pin. InnoDB 5.6 reacts to that age at fixed margins
//! (`log_calc_max_ages`, `log0log.cc`; ratios confirmed in
//! `../shared/reference/innodb-flushing.md` §1.3):
//!
//! - `capacity' = capacity - capacity/10` (extra safety),
//! - `free = 4 pages x (10 + innodb_thread_concurrency) + 8 pages`
//!   (`LOG_CHECKPOINT_FREE_PER_THREAD`, `LOG_CHECKPOINT_EXTRA_FREE`),
//! - `margin = 0.9 x (capacity' - free)`,
//! - async preflush at `margin - margin/8`: the page cleaner's adaptive
//!   flushing climbs steeply past this age (`af_get_pct_for_lsn`),
//! - sync preflush at `margin - margin/16`: a writer must flush the flush
//!   list itself before it may go on (synchronous recoverability writes),
//! - async checkpoint at `margin - margin/32`, and `max_checkpoint_age = margin`.
//!
//! Invariants: `async < sync < checkpoint_async < max_checkpoint_age <
//! capacity`; the checkpoint LSN never decreases and never passes the oldest
//! modification that is still dirty.

use crate::types::Lsn;

/// Static configuration of the redo log as the core needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedoConfig {
    /// Total redo capacity (all log files, headers excluded), bytes.
    pub capacity_bytes: u64,
    /// `innodb_thread_concurrency`; 16 in Lee et al., Table 3.
    pub thread_concurrency: u32,
}

impl Default for RedoConfig {
    fn default() -> Self {
        Self {
            capacity_bytes: 512 << 20,
            thread_concurrency: 16,
        }
    }
}

/// The ages (bytes of redo) at which InnoDB 5.6 changes behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedoMargins {
    /// `log_group_capacity` after InnoDB's 10% safety cut.
    pub group_capacity_bytes: u64,
    /// `max_modified_age_async`: adaptive flushing's 100% point.
    pub max_modified_age_async_bytes: u64,
    /// `max_modified_age_sync`: writers flush synchronously beyond this.
    pub max_modified_age_sync_bytes: u64,
    /// `max_checkpoint_age_async`: an asynchronous checkpoint is due.
    pub max_checkpoint_age_async_bytes: u64,
    /// `max_checkpoint_age`: a synchronous checkpoint is due.
    pub max_checkpoint_age_bytes: u64,
}

impl RedoMargins {
    /// Computes the margins for `config` and a page size, or explains why
    /// the log is too small (InnoDB refuses to start in the same case).
    pub fn compute(config: &RedoConfig, page_size_bytes: u32) -> Result<Self, String> {
        let capacity = config.capacity_bytes;
        let group_capacity = capacity - capacity / 10;
        let page = u64::from(page_size_bytes);
        let free = 4 * page * (10 + u64::from(config.thread_concurrency)) + 8 * page;
        if free >= group_capacity / 2 {
            return Err(format!(
                "redo capacity {capacity} bytes is too small for {} concurrent threads with {page_size_bytes}-byte pages: \
                 it must exceed {} bytes",
                config.thread_concurrency,
                (free * 2) * 10 / 9 + 1
            ));
        }
        let margin = group_capacity - free;
        let margin = margin - margin / 10;
        Ok(Self {
            group_capacity_bytes: group_capacity,
            max_modified_age_async_bytes: margin - margin / 8,
            max_modified_age_sync_bytes: margin - margin / 16,
            max_checkpoint_age_async_bytes: margin - margin / 32,
            max_checkpoint_age_bytes: margin,
        })
    }
}

/// Live redo state: the log head and the last written checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedoSpace {
    pub config: RedoConfig,
    pub margins: RedoMargins,
    /// End of the redo generated so far (`log_sys->lsn`).
    pub current_lsn: Lsn,
    /// LSN of the last checkpoint written (`log_sys->last_checkpoint_lsn`).
    pub checkpoint_lsn: Lsn,
}

impl RedoSpace {
    pub fn new(config: RedoConfig, page_size_bytes: u32, start_lsn: Lsn) -> Result<Self, String> {
        Ok(Self {
            config,
            margins: RedoMargins::compute(&config, page_size_bytes)?,
            current_lsn: start_lsn,
            checkpoint_lsn: start_lsn,
        })
    }

    /// Redo bytes between the last checkpoint and the head.
    pub fn checkpoint_age_bytes(&self) -> u64 {
        self.current_lsn.bytes_since(self.checkpoint_lsn)
    }

    /// Free redo bytes before the log would overwrite needed records.
    pub fn free_bytes(&self) -> u64 {
        self.config.capacity_bytes.saturating_sub(self.checkpoint_age_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_are_ordered_and_match_innodb_ratios() {
        let m = RedoMargins::compute(
            &RedoConfig {
                capacity_bytes: 1 << 30,
                thread_concurrency: 16,
            },
            16384,
        )
        .unwrap();
        assert!(m.max_modified_age_async_bytes < m.max_modified_age_sync_bytes);
        assert!(m.max_modified_age_sync_bytes < m.max_checkpoint_age_async_bytes);
        assert!(m.max_checkpoint_age_async_bytes < m.max_checkpoint_age_bytes);
        assert!(m.max_checkpoint_age_bytes < 1 << 30);
        // margin ~= 0.9 x 0.9 x capacity; async = 7/8 of it.
        let ratio = m.max_modified_age_async_bytes as f64 / (1u64 << 30) as f64;
        assert!((ratio - 0.81 * 7.0 / 8.0).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn too_small_log_is_refused_with_the_minimum() {
        let err = RedoMargins::compute(
            &RedoConfig {
                capacity_bytes: 1 << 20,
                thread_concurrency: 16,
            },
            16384,
        )
        .unwrap_err();
        assert!(err.contains("too small"), "{err}");
    }
}
