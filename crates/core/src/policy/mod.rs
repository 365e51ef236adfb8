//! Page-cleaning policies: one trait, one file per policy, one registry.
//!
//! Modelled on quinn-proto's congestion `Controller`: a policy sees events
//! and statistics and returns decisions; it never does I/O. The page-cleaner
//! driver ([`crate::cleaner::PageCleaner`]) runs every policy through the
//! same iteration, InnoDB's page-cleaner loop generalised:
//!
//! 1. [`FlushPolicy::plan`]: flush now (and how deep to scan the LRU tail,
//!    Pscan) or sleep;
//! 2. the LRU phase runs in chunks of [`LRU_CHUNK_PAGES`];
//! 3. [`FlushPolicy::plan_flush_list`]: how many pages to flush from the
//!    flush list (Pio / NP_req_flush) and up to which LSN, decided after the
//!    LRU phase as InnoDB 5.6 does;
//! 4. the flush phase runs in batches;
//! 5. [`FlushPolicy::end_iteration`] receives the iteration's Table-2
//!    statistics ([`IterationReport`]) and returns the sleep.
//!
//! Adding a policy is one file here plus one line in [`registry`].
//! Every rule a policy fires is recorded in the decision log through
//! [`PolicyCtx::decide`].

use crate::buffer_pool::{BufferPool, LruMode, WakeThresholds};
use crate::decision_log::DecisionLog;
use crate::stats::PoolCounters;
use crate::types::{Lsn, TimeUs, SECOND_US};

pub mod adaptive_checkpoint;
pub mod db2;
pub mod db2_aiop;
pub mod innodb_plugin;
pub mod mysql56;
pub mod percona56;
pub mod self_tuning;

/// `PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE` (buf0flu.cc, MySQL 5.6): the LRU
/// batch is split in chunks so that waiting user threads get frames early.
pub const LRU_CHUNK_PAGES: u32 = 100;

/// `srv_doublewrite_batch_size` = 120 (MySQL 5.6): a flush batch writes at
/// most this many pages before waiting for them, since the doublewrite
/// buffer must drain before it takes the next batch.
pub const FLUSH_BATCH_PAGES: u32 = 120;

/// What the shell waits for after issuing a batch of cleaner writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitFor {
    /// Every write of the batch (InnoDB and DB2 cleaners).
    AllWrites,
    /// Any one write of the batch (AioP keeps a target share in flight).
    AnyWrite,
}

/// How long a cleaner sleeps and what may wake it early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sleep {
    /// Longest sleep; `None` sleeps until woken.
    pub max_us: Option<TimeUs>,
    /// Wake on the pool's wake thresholds ([`BufferPool::take_wake`]).
    pub wake_on_event: bool,
    /// Wake when any page-cleaner write completes.
    pub wake_on_write_completion: bool,
}

impl Sleep {
    pub const fn for_us(duration_us: TimeUs) -> Self {
        Self {
            max_us: Some(duration_us),
            wake_on_event: false,
            wake_on_write_completion: false,
        }
    }
    pub const fn none() -> Self {
        Self::for_us(0)
    }
    pub const fn until_event() -> Self {
        Self {
            max_us: None,
            wake_on_event: true,
            wake_on_write_completion: false,
        }
    }
    /// InnoDB's `sleep(1 s - T_flushing)`, floored at zero.
    pub fn rest_of_second(flushing_time_us: TimeUs) -> Self {
        Self::for_us(SECOND_US.saturating_sub(flushing_time_us))
    }
}

/// The first half of an iteration's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IterationPlan {
    /// Pscan: pages the LRU batch may evict or write, and the free-list
    /// length it tops up to (`innodb_lru_scan_depth`). 0 skips the phase.
    pub lru_scan_depth: u32,
    pub lru_mode: LruMode,
    /// Percona's `innodb_cleaner_max_lru_time`.
    pub lru_time_limit_us: Option<TimeUs>,
    /// Percona's `innodb_cleaner_max_flush_time`.
    pub flush_time_limit_us: Option<TimeUs>,
    /// Pages issued per flush-list batch before waiting.
    pub flush_batch_pages: u32,
    pub wait: WaitFor,
}

impl IterationPlan {
    /// An InnoDB iteration with LRU depth `lru_scan_depth` and no time limits.
    pub fn innodb(lru_scan_depth: u32) -> Self {
        Self {
            lru_scan_depth,
            lru_mode: LruMode::EvictToFree,
            lru_time_limit_us: None,
            flush_time_limit_us: None,
            flush_batch_pages: FLUSH_BATCH_PAGES,
            wait: WaitFor::AllWrites,
        }
    }
}

/// What a policy decides at the start of an iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    Flush(IterationPlan),
    Sleep(Sleep),
}

/// The flush-list half of an iteration's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushListPlan {
    /// Pages to write from the oldest end of the flush list.
    pub pages: u32,
    /// Only pages whose oldest modification is below this LSN.
    pub lsn_limit: Lsn,
}

impl FlushListPlan {
    pub const NONE: FlushListPlan = FlushListPlan {
        pages: 0,
        lsn_limit: Lsn::ZERO,
    };
}

/// One finished iteration, with the statistics of Lee et al., Table 2.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IterationReport {
    pub cleaner: u32,
    pub started_us: TimeUs,
    /// T_flushing in Lee et al., Table 2: time from the start of the
    /// iteration until its last write completed.
    pub flushing_time_us: TimeUs,
    /// NP_LRU in Lee et al., Table 2: pages written by the LRU batch.
    pub np_lru: u32,
    /// Clean pages the LRU batch evicted without a write.
    pub lru_evicted: u32,
    pub lru_scanned: u32,
    /// NP_flush in Lee et al., Table 2: pages written from the flush list.
    pub np_flush: u32,
    /// Pages the flush-list phase was asked for.
    pub flush_requested: u32,
    pub lru_time_limited: bool,
    pub flush_time_limited: bool,
    /// User-thread activity since this cleaner's previous iteration ended.
    pub user: PoolCounters,
    /// |LRU| at the end of the iteration.
    pub lru_len: u32,
    /// |free| at the end of the iteration.
    pub free_len: u32,
    /// |free| at the start of the iteration, before the LRU batch refilled
    /// it: the free pages *left over* from the previous period, which is
    /// what Lee et al.'s surplus rule asks about (§4.3, line 23).
    pub free_len_at_start: u32,
}

impl IterationReport {
    /// NP_clean in Lee et al., Table 2.
    pub fn np_clean(&self) -> u64 {
        self.user.clean_victim_scanned
    }
    /// NP_dirty in Lee et al., Table 2.
    pub fn np_dirty(&self) -> u64 {
        self.user.dirty_victim_scanned
    }
    /// NP_sync_rec in Lee et al., Table 2.
    pub fn np_sync_rec(&self) -> u64 {
        self.user.sync_recoverability_writes
    }
}

/// What a policy may read and where it records its reasons.
pub struct PolicyCtx<'a> {
    pub pool: &'a BufferPool,
    pub now_us: TimeUs,
    pub cleaner: u32,
    pub(crate) policy_name: &'static str,
    pub(crate) log: &'a mut DecisionLog,
}

impl PolicyCtx<'_> {
    /// Records that `rule` fired; `detail` is only built if logging is on.
    pub fn decide(&mut self, rule: &'static str, detail: impl FnOnce() -> String) {
        self.log
            .record(self.now_us, self.policy_name, self.cleaner, rule, detail);
    }
}

/// A page-cleaning policy. See the module documentation for the protocol.
pub trait FlushPolicy: Send {
    /// Registry name, e.g. `self-tuning`.
    fn name(&self) -> &'static str;

    /// Page-cleaner threads this policy runs (DB2 runs N).
    fn cleaner_count(&self) -> u32 {
        1
    }

    /// Start of an iteration of one cleaner.
    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan;

    /// After the LRU phase: the flush-list batch.
    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan;

    /// The iteration's writes are done: adapt, and say how long to sleep.
    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep;

    /// Conditions that should wake a sleeping cleaner (DB2's triggers).
    fn wake_thresholds(&self, _pool: &BufferPool) -> WakeThresholds {
        WakeThresholds::default()
    }

    /// The tunable parameters as they stand (name, value), e.g. Pscan.
    fn parameters(&self) -> Vec<(&'static str, f64)>;
}

/// Names accepted by [`build`], in the order reports list them.
pub const POLICY_NAMES: &[&str] = &[
    "mysql56",
    "percona56",
    "self-tuning",
    "db2",
    "db2-aiop",
    "adaptive-checkpoint-reflex",
    "adaptive-checkpoint-estimate",
    "innodb-adaptive-flushing",
];

/// Builds a policy by name with its default configuration for a pool of
/// `frames` frames.
pub fn build(name: &str) -> Result<Box<dyn FlushPolicy>, String> {
    registry(name).ok_or_else(|| {
        format!(
            "unknown policy '{name}': accepted policies are {}",
            POLICY_NAMES.join(", ")
        )
    })
}

fn registry(name: &str) -> Option<Box<dyn FlushPolicy>> {
    Some(match name {
        "mysql56" => Box::new(mysql56::Mysql56::new(mysql56::Mysql56Config::default())),
        "percona56" => Box::new(percona56::Percona56::new(percona56::Percona56Config::default())),
        "self-tuning" => Box::new(self_tuning::SelfTuning::new(self_tuning::SelfTuningConfig::default())),
        "db2" => Box::new(db2::Db2::new(db2::Db2Config::default())),
        "db2-aiop" => Box::new(db2_aiop::Db2Aiop::new(db2_aiop::Db2AiopConfig::default())),
        "adaptive-checkpoint-reflex" => Box::new(adaptive_checkpoint::AdaptiveCheckpoint::new(
            adaptive_checkpoint::AdaptiveCheckpointConfig::reflex(),
        )),
        "adaptive-checkpoint-estimate" => Box::new(adaptive_checkpoint::AdaptiveCheckpoint::new(
            adaptive_checkpoint::AdaptiveCheckpointConfig::estimate(),
        )),
        "innodb-adaptive-flushing" => Box::new(innodb_plugin::InnodbPlugin::new(
            innodb_plugin::InnodbPluginConfig::default(),
        )),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_name_builds_and_unknown_lists_all() {
        for name in POLICY_NAMES {
            let policy = build(name).unwrap();
            assert_eq!(policy.name(), *name);
            assert!(!policy.parameters().is_empty());
        }
        let err = build("fastest").err().unwrap();
        for name in POLICY_NAMES {
            assert!(err.contains(name), "{err}");
        }
    }
}
