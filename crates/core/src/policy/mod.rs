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
//! Adding a policy is one file here (its configuration, its declared
//! parameters and its `ENTRY`) plus one line in [`REGISTRY`]; a policy is
//! named and configured by a [`PolicySpec`], parsed once at the edge.
//! Every rule a policy fires is recorded in the decision log through
//! [`PolicyCtx::decide`].

use crate::buffer_pool::{BufferPool, LruMode, WakeThresholds};
use crate::decision_log::DecisionLog;
use crate::params::{ParamDecl, ParamSet};
use crate::stats::PoolCounters;
use crate::types::{Lsn, TimeUs, SECOND_US};

pub mod adaptive_checkpoint;
pub mod db2;
pub mod db2_aiop;
pub mod flushwise;
pub mod innodb_plugin;
pub mod lockstep;
pub mod mariadb1011;
pub mod mysql51;
pub mod mysql56;
pub mod mysql80;
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
    /// Dirty pages one LRU chunk may write before waiting
    /// ([`LRU_CHUNK_PAGES`] for InnoDB; `flushwise` sizes it to demand).
    pub lru_chunk_pages: u32,
    /// `flushwise` rule 9: the LRU phase does not write a dirty page first
    /// accessed less than `grace_us` ago while it lies within `depth_pages`
    /// of the tail: clean pages above it refill the free list. `None`:
    /// InnoDB's strict LRU order.
    pub lru_dirty_grace: Option<DirtyGrace>,
    pub wait: WaitFor,
}

/// `flushwise` rule 9's grace for dirty pages at the LRU tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyGrace {
    /// A dirty page first accessed less than this long ago is passed over...
    pub grace_us: TimeUs,
    /// ...while it lies within this many pages of the tail.
    pub depth_pages: u32,
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
            lru_chunk_pages: LRU_CHUNK_PAGES,
            lru_dirty_grace: None,
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

/// The parameter a policy that bounds recovery time declares, in seconds.
pub const MAX_RECOVERY_TIME_KEY: &str = "max_recovery_time_s";
/// The redo apply rate, MiB/s, a policy that bounds recovery time assumes
/// (the engine sets it from its measured recoveries unless it is given).
pub const REDO_APPLY_RATE_KEY: &str = "redo_apply_mib_per_s";
/// The time an open costs whatever the redo, s (measured by the engine).
pub const RECOVERY_FIXED_KEY: &str = "recovery_fixed_s";
/// The wall time per page recovery reads ahead, us (measured by the
/// engine).
pub const RECOVERY_PAGE_READ_KEY: &str = "recovery_page_read_us";

/// The policy both shells run when none is named: flushwise's own
/// (issue #12), which needs no parameter.
pub const DEFAULT_POLICY: &str = "flushwise";

/// A registered policy: its name, what it stands for, its declared
/// parameters and how to build it from them.
pub struct PolicyEntry {
    /// Registry name, e.g. `self-tuning`.
    pub name: &'static str,
    /// One line: the algorithm and its source.
    pub about: &'static str,
    /// Its parameters, in groups (its own, then shared ones such as
    /// [`crate::free_page_path::PARAMS`]).
    pub params: &'static [&'static [ParamDecl]],
    /// Builds the policy; the parameters are already validated.
    pub build: fn(&ParamSet) -> Box<dyn FlushPolicy>,
}

/// Every policy, in the order reports list them. Adding a policy is one
/// file with its `ENTRY` plus one line here.
pub const REGISTRY: &[&PolicyEntry] = &[
    &mysql56::ENTRY,
    &mysql80::ENTRY,
    &mariadb1011::ENTRY,
    &percona56::ENTRY,
    &self_tuning::ENTRY,
    &db2::ENTRY,
    &db2_aiop::ENTRY,
    &adaptive_checkpoint::ENTRY_REFLEX,
    &adaptive_checkpoint::ENTRY_ESTIMATE,
    &innodb_plugin::ENTRY,
    &mysql51::ENTRY,
    &flushwise::ENTRY,
];

/// Registered policy names, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|e| e.name)
}

/// The registry entry called `name`.
pub fn entry(name: &str) -> Option<&'static PolicyEntry> {
    REGISTRY.iter().copied().find(|e| e.name == name)
}

/// A policy named and configured: `name` or `name:key=value,key=value`,
/// parsed and validated once at the edge (command line, configuration),
/// then carried as a value; building it cannot fail.
#[derive(Clone)]
pub struct PolicySpec {
    entry: &'static PolicyEntry,
    params: ParamSet,
}

impl PolicySpec {
    /// Parses and validates `name` or `name:key=value,...`: an unknown
    /// policy, an unknown key or a bad value is an error naming it and what
    /// is accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), r),
            None => (text.trim(), ""),
        };
        let entry = entry(name).ok_or_else(|| {
            format!(
                "unknown policy '{name}': accepted policies are {}",
                names().collect::<Vec<_>>().join(", ")
            )
        })?;
        let params = ParamSet::parse(entry.name, entry.params, rest)?;
        Ok(Self { entry, params })
    }

    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    pub fn entry(&self) -> &'static PolicyEntry {
        self.entry
    }

    /// The parameters, given or defaulted.
    pub fn params(&self) -> &ParamSet {
        &self.params
    }

    /// A fresh policy with these parameters.
    pub fn build(&self) -> Box<dyn FlushPolicy> {
        (self.entry.build)(&self.params)
    }

    /// A comma-separated list of policies, where a `key=value` item belongs
    /// to the policy before it: `db2:cleaners=50,softmax_pct=12.5,mysql56`
    /// is two policies. At least one; each validated.
    pub fn parse_list(text: &str) -> Result<Vec<PolicySpec>, String> {
        let mut texts: Vec<String> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let is_parameter = item.contains('=') && !item.contains(':');
            match texts.last_mut() {
                Some(last) if is_parameter => {
                    last.push(',');
                    last.push_str(item);
                }
                None if is_parameter => {
                    return Err(format!("parameter '{item}' comes before any policy name"));
                }
                _ => texts.push(item.to_string()),
            }
        }
        if texts.is_empty() {
            return Err(format!(
                "give at least one policy; accepted policies are {}",
                names().collect::<Vec<_>>().join(", ")
            ));
        }
        texts.iter().map(|t| Self::parse(t)).collect()
    }
}

impl PolicySpec {
    /// `entry` with every parameter at its default.
    pub fn with_defaults(entry: &'static PolicyEntry) -> Self {
        Self {
            entry,
            params: ParamSet::defaults(entry.params),
        }
    }

    /// This policy with its recovery-time bound set to `seconds`
    /// (`--max-recovery-time`): an error naming the policy if it does not
    /// bound recovery time (only `flushwise` declares
    /// [`MAX_RECOVERY_TIME_KEY`]).
    pub fn with_max_recovery_time(&self, seconds: f64) -> Result<PolicySpec, String> {
        if !self.declares(MAX_RECOVERY_TIME_KEY) {
            return Err(format!(
                "--max-recovery-time: policy '{}' does not bound recovery time (flushwise does)",
                self.entry.name
            ));
        }
        self.with_param(MAX_RECOVERY_TIME_KEY, seconds)
            .map_err(|e| format!("--max-recovery-time: {e}"))
    }

    /// Whether this policy has a parameter `key`.
    pub fn declares(&self, key: &str) -> bool {
        self.entry.params.iter().flat_map(|g| g.iter()).any(|d| d.key == key)
    }

    /// Whether `key` was given (not defaulted).
    pub fn gives(&self, key: &str) -> bool {
        self.params.given().iter().any(|(k, _)| *k == key)
    }

    /// This policy with `key` set to `value` (given, replacing any value
    /// given before), validated as if typed.
    pub fn with_param(&self, key: &str, value: f64) -> Result<PolicySpec, String> {
        let mut items: Vec<String> = self
            .params
            .given()
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        items.push(format!("{key}={value}"));
        PolicySpec::parse(&format!("{}:{}", self.entry.name, items.join(",")))
    }

    /// Every registered policy with its defaults, in registry order.
    pub fn all() -> Vec<PolicySpec> {
        REGISTRY.iter().map(|e| Self::with_defaults(e)).collect()
    }
}

impl Default for PolicySpec {
    /// [`DEFAULT_POLICY`] with its defaults.
    fn default() -> Self {
        Self::with_defaults(entry(DEFAULT_POLICY).unwrap_or(REGISTRY[0]))
    }
}

impl PartialEq for PolicySpec {
    fn eq(&self, other: &Self) -> bool {
        self.entry.name == other.entry.name && self.params == other.params
    }
}

impl std::fmt::Debug for PolicySpec {
    /// As the canonical text, quoted: configurations hash their `Debug`
    /// rendering, and a policy given by name hashes as its name always has.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

impl std::str::FromStr for PolicySpec {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

impl std::fmt::Display for PolicySpec {
    /// The canonical text: the name, then the parameters given, in order.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.entry.name)?;
        for (i, (key, value)) in self.params.given().iter().enumerate() {
            write!(f, "{}{key}={value}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Builds a policy from `name` or `name:key=value,...` (see [`PolicySpec::parse`]).
pub fn build(spec: &str) -> Result<Box<dyn FlushPolicy>, String> {
    PolicySpec::parse(spec).map(|s| s.build())
}

/// Every policy and its parameters in words, for `--help` and `flushwise policies`.
pub fn describe_all() -> String {
    let mut out = String::new();
    for e in REGISTRY {
        out.push_str(&format!("{}: {}\n", e.name, e.about));
        for d in e.params.iter().flat_map(|g| g.iter()) {
            out.push_str(&format!("    {}={} ({}; {})\n", d.key, d.default, d.doc, d.accepted()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_name_builds_and_unknown_lists_all() {
        for name in names() {
            let policy = build(name).unwrap();
            assert_eq!(policy.name(), name);
            assert!(!policy.parameters().is_empty());
        }
        let db2 = build("db2:cleaners=50").unwrap();
        assert_eq!(db2.cleaner_count(), 50);
        let err = build("db2:cleaners=many").err().unwrap();
        assert!(err.contains("cleaners"), "{err}");
        let err = build("db2:cleaners=0").err().unwrap();
        assert!(err.contains("cleaners") && err.contains("1..="), "{err}");
        let err = build("mysql56:depth=3").err().unwrap();
        assert!(
            err.contains("unknown parameter 'depth'") && err.contains("lru_scan_depth"),
            "{err}"
        );
        let err = build("fastest").err().unwrap();
        for name in names() {
            assert!(err.contains(name), "{err}");
        }
    }

    #[test]
    fn a_spec_prints_as_it_parses_and_compares_by_value() {
        for text in [
            "self-tuning",
            "db2:cleaners=50,softmax_pct=12.5",
            "mysql56:user_scan_depth=100",
        ] {
            let spec = PolicySpec::parse(text).unwrap();
            assert_eq!(spec.to_string(), text);
            assert_eq!(PolicySpec::parse(&spec.to_string()).unwrap(), spec);
        }
        assert_eq!(PolicySpec::default().name(), DEFAULT_POLICY);
        assert_ne!(
            PolicySpec::parse("db2").unwrap(),
            PolicySpec::parse("db2:cleaners=3").unwrap()
        );
        assert_eq!(
            PolicySpec::parse(" db2 : cleaners = 3 ").unwrap().to_string(),
            "db2:cleaners=3"
        );
    }

    #[test]
    fn a_recovery_bound_is_set_on_flushwise_and_refused_elsewhere() {
        let spec = PolicySpec::parse("flushwise")
            .unwrap()
            .with_max_recovery_time(5.0)
            .unwrap();
        assert_eq!(spec.to_string(), "flushwise:max_recovery_time_s=5");
        let spec = spec.with_max_recovery_time(2.5).unwrap();
        assert_eq!(spec.params().f64(MAX_RECOVERY_TIME_KEY), 2.5);
        let err = PolicySpec::parse("percona56")
            .unwrap()
            .with_max_recovery_time(5.0)
            .unwrap_err();
        assert!(err.contains("percona56") && err.contains("flushwise"), "{err}");
        let err = PolicySpec::parse("flushwise")
            .unwrap()
            .with_max_recovery_time(0.0)
            .unwrap_err();
        assert!(err.contains("max_recovery_time_s"), "{err}");
    }

    #[test]
    fn a_list_keeps_each_policys_parameters_with_it() {
        let list =
            PolicySpec::parse_list("db2:cleaners=50,softmax_pct=12.5, mysql56 ,self-tuning:np_dirty=total").unwrap();
        let texts: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            texts,
            [
                "db2:cleaners=50,softmax_pct=12.5",
                "mysql56",
                "self-tuning:np_dirty=total"
            ]
        );
        assert!(PolicySpec::parse_list(" , ").err().unwrap().contains("at least one"));
        assert!(PolicySpec::parse_list("cleaners=3,db2")
            .err()
            .unwrap()
            .contains("before any policy"));
        assert!(PolicySpec::parse_list("mysql56,fastest")
            .err()
            .unwrap()
            .contains("unknown policy 'fastest'"));
    }

    #[test]
    fn every_declared_parameter_is_documented_and_its_default_is_accepted() {
        let mut keys_seen = 0;
        for e in REGISTRY {
            let mut keys: Vec<&str> = Vec::new();
            for d in e.params.iter().flat_map(|g| g.iter()) {
                assert!(!d.doc.is_empty(), "{}: {} undocumented", e.name, d.key);
                assert!(!keys.contains(&d.key), "{}: {} declared twice", e.name, d.key);
                keys.push(d.key);
                let text = format!("{}:{}={}", e.name, d.key, d.default);
                let spec = PolicySpec::parse(&text).unwrap_or_else(|err| panic!("{text}: {err}"));
                assert_eq!(spec.params().value(d.key), d.default, "{text}");
                keys_seen += 1;
            }
        }
        assert!(keys_seen > 10);
        let help = describe_all();
        assert!(
            help.contains("self-tuning:") && help.contains("np_dirty=per_call"),
            "{help}"
        );
    }
}
