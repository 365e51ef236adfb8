//! Device models: sans-IO time arithmetic for storage devices.
//!
//! A model is told "this request arrives at time t" and answers "it completes
//! at time c" (`c >= t`). It never sleeps and never reads a clock, so the
//! simulator uses it for virtual time and the engine's emulated backend uses
//! it to delay real I/O until the modelled completion time.
//!
//! Three models, one file each:
//! - [`ssd`]: flash parallel units (channels x chips x planes) behind a host
//!   interface with a queue-depth limit; parameter names follow MQSim / FEMU.
//! - [`hdd`]: one actuator, Lee-style seek curve, rotational position computed
//!   from virtual time; parameter names follow DiskSim.
//! - [`constant`]: the DB2 study's disks (paper 002, Table 3): constant read
//!   and write times, one FIFO per disk.
//!
//! [`DeviceSpec`] names a model by preset (`samsung-850-pro`, `nvme-generic`,
//! `wd-1tb-7200`, `db2-table3`) or by kind (`ssd`, `hdd`, `constant`, each
//! meaning its kind's first preset) and builds fresh models from it.
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

pub mod constant;
pub mod hdd;
pub mod ssd;

pub use constant::{ConstantConfig, ConstantModel};
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
            DeviceError::UnknownName { name } => write!(
                f,
                "unknown device `{name}`; accepted: {}",
                accepted_names().join(", ")
            ),
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
        return Err(invalid(
            field,
            format!("must be finite and >= 0, got {value_us}"),
        ));
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
pub(crate) fn check_range(
    field: &'static str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), DeviceError> {
    if value < min || value > max {
        return Err(invalid(
            field,
            format!("must be in {min}..={max}, got {value}"),
        ));
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
        self.completions_us
            .iter()
            .filter(|Reverse(c)| *c > now_us)
            .count()
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
        .collect()
}

/// A validated device description from which fresh models are built.
///
/// Built only from a preset name ([`DeviceSpec::parse`]) or a config that
/// passed validation ([`DeviceSpec::ssd`], [`DeviceSpec::hdd`],
/// [`DeviceSpec::constant`]), so [`DeviceSpec::build`] cannot fail.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    prototype: Prototype,
}

/// A freshly constructed (never submitted to) model; `build` clones it.
#[derive(Clone, Debug)]
enum Prototype {
    Ssd(SsdModel),
    Hdd(HddModel),
    Constant(ConstantModel),
}

impl DeviceSpec {
    /// Parses a kind (`ssd`, `hdd`, `constant`), a preset name, or the
    /// `kind(preset)` form that [`DeviceModel::describe`] prints.
    /// Case-insensitive; surrounding whitespace is ignored.
    pub fn parse(name: &str) -> Result<DeviceSpec, DeviceError> {
        let wanted = name.trim().to_ascii_lowercase();
        let unknown = || DeviceError::UnknownName {
            name: name.to_string(),
        };
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
        })
    }

    pub fn hdd(config: HddConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Hdd(HddModel::new(config)?),
        })
    }

    pub fn constant(config: ConstantConfig) -> Result<DeviceSpec, DeviceError> {
        Ok(DeviceSpec {
            prototype: Prototype::Constant(ConstantModel::new(config)?),
        })
    }

    /// `ssd`, `hdd` or `constant`.
    pub fn kind(&self) -> &'static str {
        match &self.prototype {
            Prototype::Ssd(_) => "ssd",
            Prototype::Hdd(_) => "hdd",
            Prototype::Constant(_) => "constant",
        }
    }

    /// A fresh model: idle, nothing submitted.
    pub fn build(&self) -> Box<dyn DeviceModel> {
        match &self.prototype {
            Prototype::Ssd(model) => Box::new(model.clone()),
            Prototype::Hdd(model) => Box::new(model.clone()),
            Prototype::Constant(model) => Box::new(model.clone()),
        }
    }

    /// Same text as the built model's `describe()`, e.g. `ssd(samsung-850-pro)`.
    pub fn describe(&self) -> String {
        match &self.prototype {
            Prototype::Ssd(model) => model.describe(),
            Prototype::Hdd(model) => model.describe(),
            Prototype::Constant(model) => model.describe(),
        }
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
