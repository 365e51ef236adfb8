//! A simulator run as a person describes it: the options of `flushwise sim
//! run` as text ("64MiB", "10s", "mysql56:io_capacity=400"), their defaults,
//! and their translation into a validated [`SimConfig`].
//!
//! One translation for every front end: the command line fills
//! [`SimOptions`] from its flags, the Python package (`python/`) and the
//! lab's sweeps from a JSON object whose keys are the field names below, so
//! a configuration means the same thing, and hashes the same, whichever way
//! it was given. Errors name the command-line flag (`--buffer-pool 12QB:
//! ...`), the one vocabulary the user documentation uses.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use flushwise_core::policy::{PolicySpec, DEFAULT_POLICY};
use flushwise_tpcc_model::TpccMix;

use crate::units::{parse_duration_us, parse_size_bytes};
use crate::{CpuCosts, SimConfig, WorkloadSpec};

/// The options of one simulator run, as text; defaults are the command
/// line's (`flushwise sim run` with no flags).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimOptions {
    /// `tpcc` (the TPC-C page-reference model), `tpch` (the TPC-H one) or
    /// `trace` (replay `trace`).
    pub workload: String,
    /// Trace file to replay (with `workload` = `trace`).
    pub trace: Option<PathBuf>,
    pub warehouses: u32,
    /// `standard` (45/43/4/4/4) or `read-mostly`.
    pub mix: String,
    pub connections: u32,
    /// A size such as `64MiB` (a bare number is bytes).
    #[serde(deserialize_with = "text_or_number")]
    pub buffer_pool: String,
    #[serde(deserialize_with = "text_or_number")]
    pub redo: String,
    #[serde(deserialize_with = "text_or_number")]
    pub page_size: String,
    /// Data device: ssd, hdd, constant, a preset name or `calibrated:PATH`.
    pub device: String,
    /// Redo log device (default: the same model as `device`).
    pub log_device: Option<String>,
    /// A duration such as `30s` or `5m` (a bare number is seconds).
    #[serde(deserialize_with = "text_or_number")]
    pub warmup: String,
    #[serde(deserialize_with = "text_or_number")]
    pub duration: String,
    pub seed: u64,
    /// CPU cores of the simulated server; 0 = unlimited.
    pub cpu_cores: u32,
    /// An engine run's measured CPU per transaction type (the
    /// `TRACE.cpu.json` that `tpcc run --trace TRACE` writes), charged
    /// instead of the default costs.
    pub cpu_costs: Option<PathBuf>,
    /// In-place writes of a doublewrite batch in flight at once (0 = all,
    /// as MySQL 5.6.15; 16 = the engine's).
    pub in_place_write_depth: u32,
    /// Doublewrite slots for users' single-page flushes (MySQL 5.6 and the
    /// engine: 8; 0 = no limit).
    pub single_page_slots: u32,
    #[serde(deserialize_with = "text_or_number")]
    pub report_interval: String,
    /// `name` or `name:key=value,...` (`flushwise policies`).
    pub policy: String,
    /// TPC-H scale factor (with `workload` = `tpch`; 0.001 steps).
    pub sf: f64,
    /// TPC-H: run the refresh stream on connection 0.
    pub refresh: bool,
    /// Insert load (`workload` = `insert`): rows loaded.
    pub rows: u64,
    /// Insert load: non-unique secondary indexes.
    pub secondary_indexes: u32,
    /// Insert load: `off` or `on` (the change buffer's model).
    pub change_buffer: String,
    /// Insert load: the change buffer's largest share of the pool, %.
    pub change_buffer_max_pct: u8,
    /// Insert load: percent of transactions that update a loaded row.
    pub update_pct: u8,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            workload: "tpcc".into(),
            trace: None,
            warehouses: 10,
            mix: "standard".into(),
            connections: 20,
            buffer_pool: "64MiB".into(),
            redo: "256MiB".into(),
            page_size: "16384".into(),
            device: "ssd".into(),
            log_device: None,
            warmup: "5s".into(),
            duration: "15s".into(),
            seed: 1,
            cpu_cores: 8,
            cpu_costs: None,
            in_place_write_depth: 0,
            single_page_slots: crate::config::SINGLE_PAGE_SLOTS_MYSQL56,
            report_interval: "5s".into(),
            policy: DEFAULT_POLICY.into(),
            sf: 1.0,
            refresh: true,
            rows: 1_000_000,
            secondary_indexes: 3,
            change_buffer: "off".into(),
            change_buffer_max_pct: 25,
            update_pct: 0,
        }
    }
}

/// A size or duration given as text or as a JSON number (kept as its
/// decimal text, which the unit parsers read as bytes or seconds).
fn text_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum TextOrNumber {
        Text(String),
        Whole(u64),
        Number(f64),
    }
    match TextOrNumber::deserialize(d)? {
        TextOrNumber::Text(t) => Ok(t),
        TextOrNumber::Whole(n) => Ok(n.to_string()),
        // A negative or fractional number reaches the unit parser as text,
        // which names the flag and what it accepts.
        TextOrNumber::Number(x) => Ok(x.to_string()),
    }
}

/// Parses a size flag; the error names the flag.
pub fn size_flag(flag: &str, text: &str) -> Result<u64, String> {
    parse_size_bytes(text).map_err(|e| format!("{flag} {text}: {e}"))
}

/// Parses a duration flag; the error names the flag.
pub fn duration_flag(flag: &str, text: &str) -> Result<u64, String> {
    parse_duration_us(text).map_err(|e| format!("{flag} {text}: {e}"))
}

/// A page size: a size that fits in 32 bits (the simulator checks the range).
pub fn page_size_flag(text: &str) -> Result<u32, String> {
    let bytes = size_flag("--page-size", text)?;
    u32::try_from(bytes).map_err(|_| format!("--page-size {text}: a power of two from 4096 to 65536 bytes is accepted"))
}

impl SimOptions {
    /// The validated configuration, with `policy` parsed from its text.
    pub fn to_config(&self) -> Result<SimConfig, String> {
        let policy = PolicySpec::parse(&self.policy).map_err(|e| format!("--policy {}: {e}", self.policy))?;
        self.to_config_with(policy)
    }

    /// The validated configuration these options describe, for `policy`
    /// (the command line parses its policy flags itself).
    pub fn to_config_with(&self, policy: PolicySpec) -> Result<SimConfig, String> {
        let workload = match (self.workload.as_str(), &self.trace) {
            ("tpcc", None) => WorkloadSpec::Tpcc {
                warehouses: self.warehouses,
                mix: TpccMix::parse(&self.mix).map_err(|e| format!("--mix: {e}"))?,
            },
            ("tpcc", Some(_)) => {
                return Err("--trace is only accepted with --workload trace".into());
            }
            ("trace", Some(path)) => WorkloadSpec::Trace { path: path.clone() },
            ("trace", None) => {
                return Err(
                    "--workload trace needs --trace FILE (a flushwise trace, see `flushwise trace record-model`)"
                        .into(),
                )
            }
            ("tpch", None) => {
                if !(self.sf.is_finite() && (0.001..=1000.0).contains(&self.sf)) {
                    return Err(format!("--sf {}: the scale factor must be from 0.001 to 1000", self.sf));
                }
                WorkloadSpec::Tpch {
                    sf_thousandths: (self.sf * 1000.0).round() as u32,
                    refresh: self.refresh,
                }
            }
            ("tpch", Some(_)) | ("insert", Some(_)) => {
                return Err("--trace is only accepted with --workload trace".into());
            }
            ("insert", None) => {
                if !(1..=50).contains(&self.change_buffer_max_pct) {
                    return Err(format!(
                        "--change-buffer-max-pct {}: from 1 to 50 percent of the buffer pool",
                        self.change_buffer_max_pct
                    ));
                }
                let change_buffer_max_pct = match self.change_buffer.as_str() {
                    "off" => 0,
                    "on" => self.change_buffer_max_pct,
                    other => {
                        return Err(format!(
                            "--change-buffer {other}: the simulator models off and on (a separate device is a data-device setting there)"
                        ))
                    }
                };
                WorkloadSpec::Insert {
                    rows: self.rows,
                    secondary_indexes: self.secondary_indexes,
                    change_buffer_max_pct,
                    update_pct: self.update_pct,
                }
            }
            (other, _) => return Err(format!("--workload {other}: accepted are tpcc, tpch, insert and trace")),
        };
        let config = SimConfig {
            workload,
            connections: self.connections,
            buffer_pool_bytes: size_flag("--buffer-pool", &self.buffer_pool)?,
            redo_bytes: size_flag("--redo", &self.redo)?,
            page_size_bytes: page_size_flag(&self.page_size)?,
            // A calibrated preset is recorded with its content hash.
            data_device: crate::device::pin_device(&self.device).map_err(|e| format!("--device: {e}"))?,
            log_device: crate::device::pin_device(self.log_device.as_deref().unwrap_or(&self.device))
                .map_err(|e| format!("--log-device: {e}"))?,
            policy,
            warmup_us: duration_flag("--warmup", &self.warmup)?,
            duration_us: duration_flag("--duration", &self.duration)?,
            seed: self.seed,
            cpu_cores: self.cpu_cores,
            report_interval_us: duration_flag("--report-interval", &self.report_interval)?,
            in_place_write_depth: self.in_place_write_depth,
            single_page_slots: self.single_page_slots,
            costs: match &self.cpu_costs {
                Some(path) => read_cpu_costs(path)?,
                None => CpuCosts::default(),
            },
            ..SimConfig::default()
        };
        config.validate()?;
        Ok(config)
    }
}

/// Reads an engine run's measured CPU costs; errors name the flag and file.
fn read_cpu_costs(path: &std::path::Path) -> Result<CpuCosts, String> {
    read_measured_cpu_costs(path)?
        .to_costs()
        .map_err(|e| format!("--cpu-costs {}: {e}", path.display()))
}

/// The file an engine run wrote beside its trace (`TRACE.cpu.json`), as
/// written; errors name the flag and file.
pub fn read_measured_cpu_costs(path: &std::path::Path) -> Result<crate::config::MeasuredCpuCosts, String> {
    let bad = |e: String| format!("--cpu-costs {}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_make_a_valid_configuration() {
        let config = SimOptions::default().to_config().unwrap();
        assert_eq!(config.buffer_pool_bytes, 64 << 20);
        assert_eq!(config.duration_us, 15_000_000);
        assert_eq!(config.policy.name(), DEFAULT_POLICY);
    }

    #[test]
    fn bad_options_name_their_flag() {
        let cases = [
            (
                SimOptions {
                    buffer_pool: "12QB".into(),
                    ..SimOptions::default()
                },
                "--buffer-pool 12QB",
            ),
            (
                SimOptions {
                    policy: "nosuch".into(),
                    ..SimOptions::default()
                },
                "--policy nosuch",
            ),
            (
                SimOptions {
                    workload: "tpcd".into(),
                    ..SimOptions::default()
                },
                "--workload tpcd",
            ),
            (
                SimOptions {
                    workload: "tpch".into(),
                    sf: 0.0,
                    ..SimOptions::default()
                },
                "--sf 0",
            ),
        ];
        for (options, start) in cases {
            let err = options.to_config().unwrap_err();
            assert!(err.starts_with(start), "{err}");
        }
    }
}
