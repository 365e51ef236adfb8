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
use crate::free_page_path::FreePagePath;
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

    /// The free-page rule users follow under this policy now (a 5.6 policy
    /// resolves its [`crate::free_page_path::FreePagePath`] with its current
    /// Pscan); `None` leaves the pool's configured default. The driver
    /// hands it to the pool at start and after every iteration.
    fn free_page_rule(&self) -> Option<crate::free_page_path::FreePageRule> {
        None
    }
}

/// The policy both shells run when none is named: Lee et al.'s
/// self-tuning algorithm (until flushwise's own policy lands).
pub const DEFAULT_POLICY: &str = "self-tuning";

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

/// Parameters given after a policy name: `name:key=value,key=value`.
///
/// Each policy takes the keys it documents; an unknown key or a bad value is
/// an error naming the key and what is accepted.
pub struct PolicyParams {
    name: String,
    pairs: Vec<(String, String)>,
    used: Vec<bool>,
}

impl PolicyParams {
    fn parse(spec: &str) -> Result<(String, PolicyParams), String> {
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n.trim(), r),
            None => (spec.trim(), ""),
        };
        let mut pairs = Vec::new();
        for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("policy '{spec}': parameter '{item}' must be key=value"))?;
            pairs.push((k.trim().to_string(), v.trim().to_string()));
        }
        let used = vec![false; pairs.len()];
        Ok((
            name.to_string(),
            PolicyParams {
                name: name.to_string(),
                pairs,
                used,
            },
        ))
    }

    /// The value of `key` parsed as `T`, or `default`.
    pub fn get<T: std::str::FromStr>(&mut self, key: &str, default: T) -> Result<T, String> {
        match self.pairs.iter().position(|(k, _)| k == key) {
            None => Ok(default),
            Some(i) => {
                self.used[i] = true;
                self.pairs[i]
                    .1
                    .parse()
                    .map_err(|_| format!("policy {}: bad value '{}' for {key}", self.name, self.pairs[i].1))
            }
        }
    }

    /// The value of `key` as one of `choices` (name, value, what it means),
    /// or `default`; a bad name is an error listing the accepted ones.
    pub fn choice<T: Copy + PartialEq>(
        &mut self,
        key: &str,
        default: T,
        choices: &[(&str, T, &str)],
    ) -> Result<T, String> {
        let default_name = choices
            .iter()
            .find(|(_, v, _)| *v == default)
            .map_or("", |(n, _, _)| *n)
            .to_string();
        let given: String = self.get(key, default_name)?;
        choices
            .iter()
            .find(|(n, _, _)| *n == given)
            .map(|(_, v, _)| *v)
            .ok_or_else(|| {
                let accepted: Vec<String> = choices.iter().map(|(n, _, what)| format!("{n} ({what})")).collect();
                format!(
                    "policy {}: bad value '{given}' for {key}: accepted are {}",
                    self.name,
                    accepted.join(", ")
                )
            })
    }

    /// Fails on any key the policy did not read, listing the accepted ones.
    fn finish(&self, accepted: &[&str]) -> Result<(), String> {
        for (i, (k, _)) in self.pairs.iter().enumerate() {
            if !self.used[i] {
                return Err(format!(
                    "policy {}: unknown parameter '{k}': accepted parameters are {}",
                    self.name,
                    if accepted.is_empty() {
                        "none".to_string()
                    } else {
                        accepted.join(", ")
                    }
                ));
            }
        }
        Ok(())
    }
}

/// Builds a policy from `name` or `name:key=value,...` (see each policy's
/// accepted keys in [`registry`]), with defaults for everything not given.
pub fn build(spec: &str) -> Result<Box<dyn FlushPolicy>, String> {
    let (name, mut params) = PolicyParams::parse(spec)?;
    registry(&name, &mut params)?.ok_or_else(|| {
        format!(
            "unknown policy '{name}': accepted policies are {}",
            POLICY_NAMES.join(", ")
        )
    })
}

fn registry(name: &str, p: &mut PolicyParams) -> Result<Option<Box<dyn FlushPolicy>>, String> {
    let policy: Box<dyn FlushPolicy> = match name {
        "mysql56" => {
            let d = mysql56::Mysql56Config::default();
            let config = mysql56::Mysql56Config {
                lru_scan_depth: p.get("lru_scan_depth", d.lru_scan_depth)?,
                io_capacity: p.get("io_capacity", d.io_capacity)?,
                io_capacity_max: p.get::<u32>("io_capacity_max", 0).map(|v| (v > 0).then_some(v))?,
                free_page_path: d.free_page_path.from_params(p)?,
                ..d
            };
            p.finish(
                &[
                    &["lru_scan_depth", "io_capacity", "io_capacity_max"][..],
                    &FreePagePath::PARAM_KEYS,
                ]
                .concat(),
            )?;
            Box::new(mysql56::Mysql56::new(config))
        }
        "percona56" => {
            let d = percona56::Percona56Config::default();
            let config = percona56::Percona56Config {
                lru_scan_depth: p.get("lru_scan_depth", d.lru_scan_depth)?,
                io_capacity: p.get("io_capacity", d.io_capacity)?,
                free_page_path: d.free_page_path.from_params(p)?,
                ..d
            };
            p.finish(&[&["lru_scan_depth", "io_capacity"][..], &FreePagePath::PARAM_KEYS].concat())?;
            Box::new(percona56::Percona56::new(config))
        }
        "self-tuning" => {
            let d = self_tuning::SelfTuningConfig::default();
            let config = self_tuning::SelfTuningConfig {
                initial_lru_scan_depth: p.get("lru_scan_depth", d.initial_lru_scan_depth)?,
                initial_io_capacity: p.get("io_capacity", d.initial_io_capacity)?,
                free_page_path: d.free_page_path.from_params(p)?,
                np_dirty: p.choice(
                    "np_dirty",
                    d.np_dirty,
                    &[
                        ("per_call", self_tuning::NpDirty::PerCall, "pages per single-page flush"),
                        ("total", self_tuning::NpDirty::Total, "the sum over the iteration"),
                    ],
                )?,
                scan_depth_raise: p.choice(
                    "scan_depth_raise",
                    d.scan_depth_raise,
                    &[
                        ("capped", self_tuning::ScanDepthRaise::CappedAtLru, "raise up to |LRU|"),
                        ("literal", self_tuning::ScanDepthRaise::Literal, "line 20's test"),
                    ],
                )?,
                ..d
            };
            p.finish(
                &[
                    &["lru_scan_depth", "io_capacity", "np_dirty", "scan_depth_raise"][..],
                    &FreePagePath::PARAM_KEYS,
                ]
                .concat(),
            )?;
            Box::new(self_tuning::SelfTuning::new(config))
        }
        "db2" => {
            let d = db2::Db2Config::default();
            let config = db2::Db2Config {
                cleaners: p.get("cleaners", d.cleaners)?.max(1),
                dirty_page_threshold_pct: p.get("dirty_page_threshold_pct", d.dirty_page_threshold_pct)?,
                softmax_pct: p.get("softmax_pct", d.softmax_pct)?,
                pages_per_round: p.get("pages_per_round", d.pages_per_round)?.max(1),
            };
            p.finish(&["cleaners", "dirty_page_threshold_pct", "softmax_pct", "pages_per_round"])?;
            Box::new(db2::Db2::new(config))
        }
        "db2-aiop" => {
            let d = db2_aiop::Db2AiopConfig::default();
            let config = db2_aiop::Db2AiopConfig {
                dirty_page_threshold_pct: p.get("dirty_page_threshold_pct", d.dirty_page_threshold_pct)?,
                delta_dirty_up: p.get("delta_dirty_up", d.delta_dirty_up)?,
                delta_dirty_down: p.get("delta_dirty_down", d.delta_dirty_down)?,
                delta_sync: p.get("delta_sync", d.delta_sync)?,
                interval_us: p.get("interval_us", d.interval_us)?.max(1),
                ..d
            };
            p.finish(&[
                "dirty_page_threshold_pct",
                "delta_dirty_up",
                "delta_dirty_down",
                "delta_sync",
                "interval_us",
            ])?;
            Box::new(db2_aiop::Db2Aiop::new(config))
        }
        "adaptive-checkpoint-reflex" | "adaptive-checkpoint-estimate" => {
            let mut config = if name.ends_with("reflex") {
                adaptive_checkpoint::AdaptiveCheckpointConfig::reflex()
            } else {
                adaptive_checkpoint::AdaptiveCheckpointConfig::estimate()
            };
            config.master.io_capacity = p.get("io_capacity", config.master.io_capacity)?;
            p.finish(&["io_capacity"])?;
            Box::new(adaptive_checkpoint::AdaptiveCheckpoint::new(config))
        }
        "innodb-adaptive-flushing" => {
            let mut config = innodb_plugin::InnodbPluginConfig::default();
            config.master.io_capacity = p.get("io_capacity", config.master.io_capacity)?;
            p.finish(&["io_capacity"])?;
            Box::new(innodb_plugin::InnodbPlugin::new(config))
        }
        _ => return Ok(None),
    };
    Ok(Some(policy))
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
        let db2 = build("db2:cleaners=50").unwrap();
        assert_eq!(db2.cleaner_count(), 50);
        let err = build("db2:cleaners=many").err().unwrap();
        assert!(err.contains("cleaners"), "{err}");
        let err = build("mysql56:depth=3").err().unwrap();
        assert!(
            err.contains("unknown parameter 'depth'") && err.contains("lru_scan_depth"),
            "{err}"
        );
        let err = build("fastest").err().unwrap();
        for name in POLICY_NAMES {
            assert!(err.contains(name), "{err}");
        }
    }
}
