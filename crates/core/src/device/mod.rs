//! Device models: sans-IO time arithmetic for storage devices.
//!
//! A model is told "this request arrives at time t" and answers "it completes
//! at time c" (`c >= t`). It never sleeps and never reads a clock, so the
//! simulator uses it for virtual time and the engine's emulated backend uses
//! it to delay real I/O until the modelled completion time.
//!
//! Four models, one file each:
//! - [`ssd`]: flash parallel units (channels x chips x planes) behind a host
//!   interface with a queue-depth limit; parameter names follow MQSim / FEMU.
//! - [`hdd`]: one actuator, Lee-style seek curve, rotational position computed
//!   from virtual time; parameter names follow DiskSim.
//! - [`constant`]: the DB2 study's disks (paper 002, Table 3): constant read
//!   and write times, one FIFO per disk;
//! - [`calibrated`]: this machine's storage as `flushwise device calibrate`
//!   measured it (latency growing with the requests in flight), fitted in
//!   [`calibration`]; its preset file (TOML) is a shell's business
//!   (`flushwise_sim::preset`).
//!
//! [`DeviceSpec`] names a model by preset (`samsung-850-pro`, `nvme-generic`,
//! `wd-1tb-7200`, `db2-table3`; paper 002's variants `db2-table3-disk5x`,
//! `db2-small`, `db2-medium`) or by kind (`ssd`, `hdd`, `constant`, each
//! meaning its kind's first preset) and builds fresh models from it. A
//! calibrated device is named `calibrated:PATH`: core cannot read the file,
//! so a shell reads and parses it and calls [`DeviceSpec::calibrated`]
//! ([`split_calibrated_name`] parses the name for it).
//!
//! Invariants, checked by each model's `check_invariants()`:
//! - completion times are never earlier than arrival times;
//! - for one queue (a channel, a disk), completions are in service order and
//!   the queue's busy-until time never moves backwards;
//! - a model is deterministic: the same request sequence gives the same
//!   completion times.
//!
//! Models keep their own clocks in nanoseconds so that sub-microsecond costs
//! (a 4 KiB transfer over SATA is 7.4 us) do not round up per request; the
//! completion handed back is rounded up to a whole microsecond. Floating
//! point appears only in configuration (converted once to integer
//! nanoseconds) and in the HDD seek curve, whose operations (`+ * / sqrt`)
//! are exactly rounded under IEEE 754, so results do not vary by platform.
//!
//! Arrival order: [`DeviceModel::submit`] requires non-decreasing arrivals.
//! A shell whose threads read a real clock may race by a few microseconds;
//! rather than crash, every model treats an arrival earlier than the previous
//! one as arriving at the previous arrival time.

pub mod calibrated;
pub mod calibration;
pub mod constant;
pub mod fsync;
pub mod hdd;
pub mod ssd;

pub use calibrated::{CalibratedConfig, CalibratedModel};
pub use constant::{ConstantConfig, ConstantModel};
pub use fsync::{FsyncCost, FsyncPoint};
pub use hdd::{HddConfig, HddModel};
pub use ssd::{SsdConfig, SsdModel};

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use crate::types::TimeUs;

/// Direction of a device request.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum IoKind {
    Read,
    Write,
}

/// One request as a device model sees it: a byte range of the device.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IoRequest {
    pub kind: IoKind,
    /// Byte offset on the device.
    pub offset_bytes: u64,
    /// Length of the transfer in bytes (a page, or a redo write).
    pub len_bytes: u32,
}

/// A storage device as time arithmetic.
pub trait DeviceModel: Send {
    /// Queue `request`, arriving at `arrival_us`, and return its completion
    /// time. Requests must be submitted in non-decreasing arrival order.
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs;

    /// Requests submitted whose completion time is later than `now_us`.
    fn outstanding(&self, now_us: TimeUs) -> usize;

    /// Short description for reports, e.g. "ssd(samsung-850-pro)".
    fn describe(&self) -> String;

    /// Panics if a model invariant is broken (used by tests and the simulator).
    fn check_invariants(&self);
}

/// Why a device could not be named or configured.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// `parse` was given a name that is neither a kind nor a preset.
    UnknownName { name: String },
    /// A configuration field is out of range; `field` is its name.
    InvalidConfig { field: &'static str, reason: String },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::UnknownName { name } => {
                write!(f, "unknown device `{name}`; accepted: {}", accepted_names().join(", "))
            }
            DeviceError::InvalidConfig { field, reason } => {
                write!(f, "invalid device config: `{field}` {reason}")
            }
        }
    }
}

impl std::error::Error for DeviceError {}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> DeviceError {
    DeviceError::InvalidConfig {
        field,
        reason: reason.into(),
    }
}

/// Upper bound for any configured time, in microseconds (about 11.6 days):
/// keeps every nanosecond conversion and sum far from `u64` overflow.
pub(crate) const CONFIG_TIME_US_MAX: f64 = 1.0e12;

/// Checks a configured duration in microseconds and converts it to integer
/// nanoseconds (rounded to nearest).
pub(crate) fn config_us_to_ns(field: &'static str, value_us: f64) -> Result<u64, DeviceError> {
    if !value_us.is_finite() || value_us < 0.0 {
        return Err(invalid(field, format!("must be finite and >= 0, got {value_us}")));
    }
    if value_us > CONFIG_TIME_US_MAX {
        return Err(invalid(
            field,
            format!("must be <= {CONFIG_TIME_US_MAX} us, got {value_us}"),
        ));
    }
    Ok((value_us * 1000.0).round() as u64)
}

/// Checks an integer field lies in `min..=max`.
pub(crate) fn check_range(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), DeviceError> {
    if value < min || value > max {
        return Err(invalid(field, format!("must be in {min}..={max}, got {value}")));
    }
    Ok(())
}

pub(crate) const fn us_to_ns(time_us: TimeUs) -> u64 {
    time_us.saturating_mul(1000)
}

/// Rounds a nanosecond instant up to the microsecond, so that a completion
/// is never reported before the modelled instant.
pub(crate) const fn ns_to_us_ceil(time_ns: u64) -> TimeUs {
    time_ns.div_ceil(1000)
}

/// Completion times of submitted requests that may still be outstanding.
///
/// Bounded: entries `<= t` are pruned whenever a request arrives at `t`, so
/// it holds only requests in flight at the latest arrival.
#[derive(Clone, Debug, Default)]
pub(crate) struct InFlight {
    completions_us: BinaryHeap<Reverse<TimeUs>>,
    /// Latest time passed to `prune`; every entry is later than it.
    pruned_up_to_us: TimeUs,
}

impl InFlight {
    pub(crate) fn prune(&mut self, now_us: TimeUs) {
        while let Some(&Reverse(earliest)) = self.completions_us.peek() {
            if earliest > now_us {
                break;
            }
            self.completions_us.pop();
        }
        self.pruned_up_to_us = self.pruned_up_to_us.max(now_us);
    }

    /// Records a completion; one not after the latest arrival is never
    /// outstanding again, so it is not kept.
    pub(crate) fn push(&mut self, completion_us: TimeUs) {
        if completion_us > self.pruned_up_to_us {
            self.completions_us.push(Reverse(completion_us));
        }
    }

    /// Requests whose completion is later than `now_us`. Exact for any
    /// `now_us` at or after the latest arrival (earlier completions are pruned).
    pub(crate) fn count_after(&self, now_us: TimeUs) -> usize {
        self.completions_us.iter().filter(|Reverse(c)| *c > now_us).count()
    }

    pub(crate) fn len(&self) -> usize {
        self.completions_us.len()
    }

    pub(crate) fn check_invariants(&self) {
        for Reverse(c) in &self.completions_us {
            assert!(
                *c > self.pruned_up_to_us,
                "in-flight completion {c} not after pruning time {}",
                self.pruned_up_to_us
            );
        }
    }
}

/// The accepted preset names, kind default first within each kind.
const PRESET_NAMES: &[&str] = &[
    "samsung-850-pro",
    "nvme-generic",
    "wd-1tb-7200",
    "db2-table3",
    "db2-table3-disk5x",
    "db2-small",
    "db2-medium",
];

/// Kind names and the preset each stands for.
const KIND_DEFAULTS: &[(&str, &str)] = &[
    ("ssd", "samsung-850-pro"),
    ("hdd", "wd-1tb-7200"),
    ("constant", "db2-table3"),
];

/// Names of the built-in device presets.
pub fn preset_names() -> &'static [&'static str] {
    PRESET_NAMES
}

fn accepted_names() -> Vec<&'static str> {
    KIND_DEFAULTS
        .iter()
        .map(|(kind, _)| *kind)
        .chain(PRESET_NAMES.iter().copied())
        .chain(["calibrated:PATH (a preset file from `flushwise device calibrate`)"])
        .collect()
}

/// Prefix of a calibrated device's name: `calibrated:PATH`.
pub const CALIBRATED_PREFIX: &str = "calibrated:";

/// For `calibrated:PATH` or `calibrated:PATH#HASH` (a name pinned to the
/// preset file's content hash, as a run's configuration records it),
/// the path and the hash; `None` for any other name. The prefix is
/// case-insensitive; the path is kept as given (trimmed).
pub fn split_calibrated_name(name: &str) -> Option<(&str, Option<&str>)> {
    let name = name.trim();
    let prefix = name.get(..CALIBRATED_PREFIX.len())?;
    if !prefix.eq_ignore_ascii_case(CALIBRATED_PREFIX) {
        return None;
    }
    let rest = &name[CALIBRATED_PREFIX.len()..];
    match rest.rsplit_once('#') {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some((path, Some(hash)))
        }
        _ => Some((rest, None)),
    }
}

/// A validated device description from which fresh models are built.
///
/// Built only from a preset name ([`DeviceSpec::parse`]) or a config that
/// passed validation ([`DeviceSpec::ssd`], [`DeviceSpec::hdd`],
/// [`DeviceSpec::constant`]), so [`DeviceSpec::build`] cannot fail.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    prototype: Prototype,
    /// What one `fdatasync` of the device costs (free: the built-in
    /// models have no volatile write cache, so a completed write is
    /// durable; a calibrated device carries its measured curve over the
    /// data writes in flight, [`fsync`]). Not part of `build()`'s model
    /// (the trait has no flush): a shell charges it where the engine
    /// fsyncs. This is the log's: a buffered append, then `fdatasync`.
    fsync: FsyncCost,
    /// What one `fdatasync` of a data file costs after a direct write
    /// (the doublewrite copy's, the tablespace's): on this machine well
    /// below the log's (the page cache holds nothing to write back).
    /// [`DeviceSpec::with_fsync`] sets both alike.
    data_fsync: FsyncCost,
}

/// A freshly constructed (never submitted to) model; `build` clones it.
#[derive(Clone, Debug)]
enum Prototype {
    Ssd(SsdModel),
    Hdd(HddModel),
    Constant(ConstantModel),
    Calibrated(CalibratedModel),
    /// The inner device with every write free (an analysis device, see
    /// [`FreeWritesModel`]).
    FreeWrites(Box<Prototype>),
}

impl Prototype {
    fn kind(&self) -> &'static str {
        match self {
            Prototype::Ssd(_) => "ssd",
            Prototype::Hdd(_) => "hdd",
            Prototype::Constant(_) => "constant",
            Prototype::Calibrated(_) => "calibrated",
            Prototype::FreeWrites(inner) => inner.kind(),
        }
    }

    fn build(&self) -> Box<dyn DeviceModel> {
        match self {
            Prototype::Ssd(model) => Box::new(model.clone()),
            Prototype::Hdd(model) => Box::new(model.clone()),
            Prototype::Constant(model) => Box::new(model.clone()),
            Prototype::Calibrated(model) => Box::new(model.clone()),
            Prototype::FreeWrites(inner) => Box::new(FreeWritesModel { inner: inner.build() }),
        }
    }

    fn describe(&self) -> String {
        match self {
            Prototype::Ssd(model) => model.describe(),
            Prototype::Hdd(model) => model.describe(),
            Prototype::Constant(model) => model.describe(),
            Prototype::Calibrated(model) => model.describe(),
            Prototype::FreeWrites(inner) => format!("{FREE_WRITES_PREFIX}{}", inner.describe()),
        }
    }
}

/// Prefix of a device name whose writes are free: `free-writes:samsung-850-pro`.
pub const FREE_WRITES_PREFIX: &str = "free-writes:";

/// An analysis device, not a real one: reads go to the inner model as
/// usual, writes complete on arrival and occupy no channel, chip, queue
/// slot or link time. No flushing policy can make writes cheaper than
/// free, so a run on it bounds from above what any policy can reach with
/// the same reads (issue #12: is 1.3x Percona reachable at all?).
pub struct FreeWritesModel {
    inner: Box<dyn DeviceModel>,
}

impl DeviceModel for FreeWritesModel {
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs {
        match request.kind {
            IoKind::Write => arrival_us,
            IoKind::Read => self.inner.submit(request, arrival_us),
        }
    }

    fn outstanding(&self, now_us: TimeUs) -> usize {
        self.inner.outstanding(now_us)
    }

    fn describe(&self) -> String {
        format!("{FREE_WRITES_PREFIX}{}", self.inner.describe())
    }

    fn check_invariants(&self) {
        self.inner.check_invariants();
    }
}

impl DeviceSpec {
    /// Parses a kind (`ssd`, `hdd`, `constant`), a preset name, or the
    /// `kind(preset)` form that [`DeviceModel::describe`] prints.
    /// Case-insensitive; surrounding whitespace is ignored.
    pub fn parse(name: &str) -> Result<DeviceSpec, DeviceError> {
        let wanted = name.trim().to_ascii_lowercase();
        if let Some(inner) = wanted.strip_prefix(FREE_WRITES_PREFIX) {
            let inner = DeviceSpec::parse(inner)?;
            if inner.writes_are_free() {
                return Err(DeviceError::UnknownName { name: name.to_string() });
            }
            return Ok(DeviceSpec {
                prototype: Prototype::FreeWrites(Box::new(inner.prototype)),
                fsync: FsyncCost::default(),
                data_fsync: FsyncCost::default(),
            });
        }
        let unknown = || DeviceError::UnknownName { name: name.to_string() };
        // `kind(preset)`: the preset must belong to the kind.
        let (kind, preset) = match wanted.split_once('(') {
            Some((kind, tail)) => {
                let preset = tail.strip_suffix(')').ok_or_else(unknown)?;
                (Some(kind.trim().to_string()), preset.trim().to_string())
            }
            None => match KIND_DEFAULTS.iter().find(|(k, _)| *k == wanted) {
                Some((_, preset)) => (None, (*preset).to_string()),
                None => (None, wanted),
            },
        };
        let spec = match preset.as_str() {
            "samsung-850-pro" => DeviceSpec::ssd(SsdConfig::samsung_850_pro()),
            "nvme-generic" => DeviceSpec::ssd(SsdConfig::nvme_generic()),
            "wd-1tb-7200" => DeviceSpec::hdd(HddConfig::wd_1tb_7200()),
            "db2-table3" => DeviceSpec::constant(ConstantConfig::db2_table3()),
            "db2-table3-disk5x" => DeviceSpec::constant(ConstantConfig::db2_table3_disk5x()),
            "db2-small" => DeviceSpec::constant(ConstantConfig::db2_small()),
            "db2-medium" => DeviceSpec::constant(ConstantConfig::db2_medium()),
            _ => return Err(unknown()),
        }?;
        match kind {
            Some(kind) if kind != spec.kind() => Err(unknown()),
            _ => Ok(spec),
        }
    }

    pub fn ssd(config: SsdConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Ssd(SsdModel::new(config)?),
            fsync: FsyncCost::default(),
            data_fsync: FsyncCost::default(),
        })
    }

    pub fn hdd(config: HddConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Hdd(HddModel::new(config)?),
            fsync: FsyncCost::default(),
            data_fsync: FsyncCost::default(),
        })
    }

    pub fn constant(config: ConstantConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Constant(ConstantModel::new(config)?),
            fsync: FsyncCost::default(),
            data_fsync: FsyncCost::default(),
        })
    }

    pub fn calibrated(config: CalibratedConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Calibrated(CalibratedModel::new(config)?),
            fsync: FsyncCost::default(),
            data_fsync: FsyncCost::default(),
        })
    }

    /// The same device with every write free (see [`FreeWritesModel`]);
    /// what `free-writes:NAME` names. Refused for a device already so.
    pub fn with_free_writes(self) -> Result<DeviceSpec, DeviceError> {
        if self.writes_are_free() {
            return Err(DeviceError::UnknownName {
                name: format!("{FREE_WRITES_PREFIX}{}", self.describe()),
            });
        }
        Ok(DeviceSpec {
            prototype: Prototype::FreeWrites(Box::new(self.prototype)),
            fsync: FsyncCost::default(),
            data_fsync: FsyncCost::default(),
        })
    }

    /// The same device with a measured `fdatasync` cost, the log's and a
    /// data file's alike (see the fields).
    pub fn with_fsync(mut self, fsync: FsyncCost) -> DeviceSpec {
        self.data_fsync = fsync.clone();
        self.fsync = fsync;
        self
    }

    /// The same device with a data file's `fdatasync` measured apart.
    pub fn with_data_fsync(mut self, data_fsync: FsyncCost) -> DeviceSpec {
        self.data_fsync = data_fsync;
        self
    }

    /// What one `fdatasync` costs on this device with nothing else in
    /// flight, µs (0 for the built-in models and for a free-writes device).
    pub fn fsync_us(&self) -> TimeUs {
        self.fsync.alone_us()
    }

    /// The whole `fdatasync` cost curve of the log (see [`fsync`]).
    pub fn fsync_cost(&self) -> &FsyncCost {
        &self.fsync
    }

    /// The `fdatasync` cost curve of a data file after direct writes.
    pub fn data_fsync_cost(&self) -> &FsyncCost {
        &self.data_fsync
    }

    /// `ssd`, `hdd`, `constant` or `calibrated` (a free-writes device: its inner kind).
    pub fn kind(&self) -> &'static str {
        self.prototype.kind()
    }

    /// A fresh model: idle, nothing submitted.
    pub fn build(&self) -> Box<dyn DeviceModel> {
        self.prototype.build()
    }

    /// Same text as the built model's `describe()`, e.g. `ssd(samsung-850-pro)`.
    pub fn describe(&self) -> String {
        self.prototype.describe()
    }

    /// True for a `free-writes:` analysis device.
    pub fn writes_are_free(&self) -> bool {
        matches!(self.prototype, Prototype::FreeWrites(_))
    }
}

impl std::str::FromStr for DeviceSpec {
    type Err = DeviceError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DeviceSpec::parse(name)
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Helpers shared by the models' tests: a seeded generator and closed-loop
/// drivers that measure IOPS in virtual time.
#[cfg(test)]
pub(crate) mod testing {
    use super::{DeviceModel, IoKind, IoRequest};
    use crate::types::{TimeUs, SECOND_US};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// SplitMix64: a tiny deterministic generator for test request streams.
    pub(crate) struct SplitMix64(pub u64);

    impl SplitMix64 {
        pub(crate) fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        pub(crate) fn below(&mut self, bound: u64) -> u64 {
            self.next_u64() % bound
        }
    }

    /// A `len_bytes` request at a random `len_bytes`-aligned offset below
    /// `span_bytes`.
    pub(crate) fn random_request(rng: &mut SplitMix64, kind: IoKind, len_bytes: u32, span_bytes: u64) -> IoRequest {
        let slots = span_bytes / u64::from(len_bytes);
        IoRequest {
            kind,
            offset_bytes: rng.below(slots) * u64::from(len_bytes),
            len_bytes,
        }
    }

    /// Result of a closed-loop run.
    #[derive(Debug)]
    pub(crate) struct LoopResult {
        pub(crate) iops: f64,
        pub(crate) mean_latency_us: f64,
    }

    /// Keeps `queue_depth` requests outstanding (a new one arrives the
    /// moment one completes) for `requests` requests; IOPS from virtual time.
    pub(crate) fn closed_loop(
        model: &mut dyn DeviceModel,
        queue_depth: usize,
        requests: usize,
        mut next_request: impl FnMut() -> IoRequest,
    ) -> LoopResult {
        let mut completions: BinaryHeap<Reverse<TimeUs>> = BinaryHeap::new();
        let mut latency_sum_us = 0u64;
        let mut last_completion_us = 0;
        for i in 0..requests {
            let arrival_us = if i < queue_depth {
                0
            } else {
                match completions.pop() {
                    Some(Reverse(t)) => t,
                    None => 0,
                }
            };
            let completion_us = model.submit(next_request(), arrival_us);
            assert!(completion_us >= arrival_us);
            latency_sum_us += completion_us - arrival_us;
            last_completion_us = last_completion_us.max(completion_us);
            completions.push(Reverse(completion_us));
        }
        model.check_invariants();
        LoopResult {
            iops: requests as f64 * SECOND_US as f64 / last_completion_us as f64,
            mean_latency_us: latency_sum_us as f64 / requests as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::SplitMix64;
    use super::*;
    use proptest::prelude::*;

    fn run_stream(spec: &DeviceSpec, requests: &[(IoRequest, TimeUs)]) -> Vec<TimeUs> {
        let mut model = spec.build();
        requests
            .iter()
            .map(|(request, arrival_us)| model.submit(*request, *arrival_us))
            .collect()
    }

    fn mixed_stream(seed: u64, count: usize) -> Vec<(IoRequest, TimeUs)> {
        let mut rng = SplitMix64(seed);
        let mut now_us = 0;
        (0..count)
            .map(|_| {
                now_us += rng.below(200);
                let kind = if rng.below(3) == 0 { IoKind::Write } else { IoKind::Read };
                let request = IoRequest {
                    kind,
                    offset_bytes: rng.below(1 << 36),
                    len_bytes: 1 + rng.below(64 * 1024) as u32,
                };
                (request, now_us)
            })
            .collect()
    }

    #[test]
    fn models_are_deterministic() {
        for name in preset_names() {
            let spec = DeviceSpec::parse(name).expect("preset parses");
            let stream = mixed_stream(42, 2000);
            let first = run_stream(&spec, &stream);
            let second = run_stream(&spec, &stream);
            assert_eq!(first, second, "{name} gave two answers");
        }
    }

    #[test]
    fn unknown_device_name_lists_presets() {
        let err = DeviceSpec::parse("floppy").expect_err("floppy is not a device");
        let message = err.to_string();
        assert!(message.contains("floppy"), "{message}");
        for name in preset_names().iter().chain(["ssd", "hdd", "constant"].iter()) {
            assert!(message.contains(name), "{message} lacks {name}");
        }
    }

    #[test]
    fn kind_names_and_presets_parse_and_round_trip_through_describe() {
        assert_eq!(DeviceSpec::parse("ssd").unwrap().describe(), "ssd(samsung-850-pro)");
        assert_eq!(DeviceSpec::parse(" HDD ").unwrap().describe(), "hdd(wd-1tb-7200)");
        assert_eq!(
            DeviceSpec::parse("constant").unwrap().describe(),
            "constant(db2-table3)"
        );
        for name in preset_names() {
            let spec: DeviceSpec = name.parse().expect("preset parses");
            let again = DeviceSpec::parse(&spec.describe()).expect("describe() parses");
            assert_eq!(again.describe(), spec.describe());
            assert_eq!(spec.build().describe(), spec.describe());
        }
        assert!(DeviceSpec::parse("hdd(samsung-850-pro)").is_err());
        assert!(DeviceSpec::parse("ssd(nvme-generic").is_err());
    }

    #[test]
    fn invalid_config_error_names_the_field() {
        let mut config = SsdConfig::samsung_850_pro();
        config.channel_count = 0;
        let message = DeviceSpec::ssd(config).unwrap_err().to_string();
        assert!(message.contains("channel_count"), "{message}");

        let mut config = HddConfig::wd_1tb_7200();
        config.average_seek_ms = f64::NAN;
        let message = DeviceSpec::hdd(config).unwrap_err().to_string();
        assert!(message.contains("average_seek_ms"), "{message}");

        let mut config = ConstantConfig::db2_table3();
        config.page_size_bytes = 0;
        let message = DeviceSpec::constant(config).unwrap_err().to_string();
        assert!(message.contains("page_size_bytes"), "{message}");
    }

    #[test]
    fn outstanding_counts_requests_not_yet_complete() {
        for name in preset_names() {
            let mut model = DeviceSpec::parse(name).unwrap().build();
            let request = IoRequest {
                kind: IoKind::Read,
                offset_bytes: 0,
                len_bytes: 16 * 1024,
            };
            let first_us = model.submit(request, 0);
            let second_us = model.submit(request, 0);
            assert!(second_us >= first_us, "{name}");
            assert_eq!(model.outstanding(0), 2, "{name}");
            assert_eq!(model.outstanding(first_us), usize::from(second_us > first_us), "{name}");
            assert_eq!(model.outstanding(second_us), 0, "{name}");
            model.check_invariants();
        }
    }

    fn arb_stream() -> impl Strategy<Value = Vec<(bool, u64, u32, u64)>> {
        prop::collection::vec(
            (any::<bool>(), 0u64..(1 << 41), 0u32..(256 * 1024), 0u64..20_000),
            1..200,
        )
    }

    proptest! {
        #[test]
        fn completion_never_precedes_arrival(
            preset in prop::sample::select(preset_names()),
            stream in arb_stream(),
            out_of_order in 0u64..50,
        ) {
            let mut model = DeviceSpec::parse(preset).unwrap().build();
            let mut now_us: TimeUs = 0;
            let mut latest_arrival_us: TimeUs = 0;
            for (is_write, offset_bytes, len_bytes, gap_us) in stream {
                now_us += gap_us;
                // A shell racing its clock may hand in a slightly earlier time.
                let arrival_us = now_us.saturating_sub(out_of_order * (gap_us % 2));
                latest_arrival_us = latest_arrival_us.max(arrival_us);
                let kind = if is_write { IoKind::Write } else { IoKind::Read };
                let request = IoRequest { kind, offset_bytes, len_bytes };
                let completion_us = model.submit(request, arrival_us);
                prop_assert!(completion_us >= latest_arrival_us);
                prop_assert!(model.outstanding(latest_arrival_us) >= usize::from(completion_us > latest_arrival_us));
                model.check_invariants();
            }
        }
    }
}

#[cfg(test)]
mod free_writes_tests {
    use super::*;

    #[test]
    fn free_writes_complete_on_arrival_and_leave_reads_as_they_were() {
        let plain = DeviceSpec::parse("samsung-850-pro").unwrap();
        let free = DeviceSpec::parse("free-writes:samsung-850-pro").unwrap();
        assert!(free.writes_are_free() && !plain.writes_are_free());
        assert_eq!(free.describe(), "free-writes:ssd(samsung-850-pro)");
        assert_eq!(DeviceSpec::parse(&free.describe()).unwrap().describe(), free.describe());
        assert_eq!(free.kind(), "ssd");
        let (mut a, mut b) = (plain.build(), free.build());
        let read = |offset_bytes| IoRequest {
            kind: IoKind::Read,
            offset_bytes,
            len_bytes: 16384,
        };
        let write = IoRequest {
            kind: IoKind::Write,
            offset_bytes: 0,
            len_bytes: 16384,
        };
        assert_eq!(b.submit(write, 10), 10);
        assert!(a.submit(write, 10) > 10);
        // The plain device's read queues behind its write; the free one's does not.
        let (ra, rb) = (a.submit(read(0), 11), b.submit(read(0), 11));
        assert!(rb < ra, "{rb} vs {ra}");
        assert_eq!(rb, plain.build().submit(read(0), 11));
        assert!(DeviceSpec::parse("free-writes:free-writes:samsung-850-pro").is_err());
        assert!(DeviceSpec::parse("free-writes:nope").is_err());
    }
}
