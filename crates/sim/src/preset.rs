//! The calibrated-device preset file: TOML text in, [`CalibratedPreset`]
//! out, and back.
//!
//! `flushwise device calibrate` writes one; `--device calibrated:PATH`
//! reads one ([`crate::device::resolve_device`]). The model it describes,
//! [`CalibratedConfig`], and the measurements behind it live in core; the
//! file format lives here, in a shell, read with the `toml` crate (core
//! keeps no dependency). Layout, every number with its unit in its name:
//!
//! ```toml
//! format_version = 1
//!
//! [model]                                  # the fitted CalibratedConfig
//! read_base_latency_us = 120.5
//! write_base_latency_us = 104.2
//! read_latency_per_outstanding_us = 14.5         # per read in flight
//! write_latency_per_outstanding_us = 12.4        # per write in flight
//! read_latency_per_outstanding_write_us = 22.9   # optional: per write in flight
//! write_latency_per_outstanding_read_us = 25.1   # optional: per read in flight
//! transfer_us_per_mib = 640.0
//!
//! [provenance]                             # optional: where it was measured
//! dir = "/work/calib"
//! filesystem = "ext4 (/dev/vda on /)"
//! commit = "50ed8de"
//! io = "direct"
//! file_size_bytes = 1073741824
//! duration_per_point_ms = 2000
//!
//! [measured]                               # optional: the measurements
//! request_bytes = 16384
//! sequential_write_mb_per_s = 826.0
//! fsync_mean_us = 206.0                   # the log's: after a 4 KiB append
//! fsync_p99_us = 1028.0
//! data_fsync_mean_us = 45.0                # optional: after a 16 KiB direct data write
//! data_fsync_p99_us = 80.0
//!
//! [[point]]                                # one per measured point
//! pattern = "mixed"                        # read | write | mixed
//! queue_depth = 4
//! read_iops = 17957.0                      # read_* for read and mixed
//! read_mean_latency_us = 222.0
//! read_p99_latency_us = 882.0
//! write_iops = 17913.0                     # write_* for write and mixed
//! write_mean_latency_us = 223.0
//! write_p99_latency_us = 890.0
//! read_caller_cpu_us = 21.0                # optional: the calling thread's own CPU
//! read_caller_core_wait_us = 30.0          # and its wait for a core, per request
//! write_caller_cpu_us = 19.0               # (inside the mean latency; reported,
//! write_caller_core_wait_us = 28.0         # not fitted)
//!
//! [[log_write]]                            # one per log-append size
//! write_bytes = 16384
//! mb_per_s = 47.4
//! mean_latency_us = 345.0
//! p99_latency_us = 1244.0
//!
//! [[fsync_beside]]                         # optional: one per kind and count
//! kind = "write"                           # read | write
//! in_flight = 4                            # 16 KiB data requests in flight
//! iops = 21415.0                           # theirs, meanwhile
//! mean_latency_us = 395.0                  # the log's fdatasync meanwhile
//! p99_latency_us = 751.0
//! ```
//!
//! Only `[model]` is needed to build a device; the rest is the evidence.
//! The two cross-kind weights (`read_latency_per_outstanding_write_us`,
//! `write_latency_per_outstanding_read_us`) came later: a preset without
//! one reads it as its kind's same-kind slope, every request in flight
//! counted alike, which is the model such a preset was fitted for.
//! Unknown tables and keys are refused (a typo is not silently a default);
//! a parse error names the line and the key, a value out of range names
//! its table and field.

use flushwise_core::device::calibration::{Figures, FsyncBeside, LogWritePoint, MeasuredPoint, Measurements, Pattern};
use flushwise_core::device::{CalibratedConfig, DeviceError, IoKind};
use serde::{Deserialize, Serialize};

/// The only `format_version` written and read.
pub const FORMAT_VERSION: i64 = 1;

/// Where and how a preset was measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The directory calibrate measured.
    pub dir: String,
    /// Its filesystem, e.g. `ext4 (/dev/vda on /)`.
    pub filesystem: String,
    /// The flushwise commit that measured.
    pub commit: String,
    /// `direct` or `buffered`.
    pub io: String,
    pub file_size_bytes: u64,
    pub duration_per_point_ms: u64,
}

/// A preset file's content.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibratedPreset {
    /// The model; its `name` is not in the file (the shell labels it).
    pub config: CalibratedConfig,
    pub provenance: Option<Provenance>,
    pub measurements: Option<Measurements>,
}

/// FNV-1a 64 of the preset's text as 16 hex digits: what a run records
/// beside the preset's path, so a changed file is a changed configuration.
pub fn content_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The file as TOML sees it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    format_version: i64,
    model: ModelTable,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provenance: Option<Provenance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    measured: Option<MeasuredTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    point: Vec<PointTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    log_write: Vec<LogWriteTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fsync_beside: Vec<FsyncBesideTable>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelTable {
    read_base_latency_us: f64,
    write_base_latency_us: f64,
    read_latency_per_outstanding_us: f64,
    write_latency_per_outstanding_us: f64,
    /// Absent: `read_latency_per_outstanding_us` (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_latency_per_outstanding_write_us: Option<f64>,
    /// Absent: `write_latency_per_outstanding_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_latency_per_outstanding_read_us: Option<f64>,
    transfer_us_per_mib: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MeasuredTable {
    request_bytes: u32,
    sequential_write_mb_per_s: f64,
    fsync_mean_us: f64,
    fsync_p99_us: f64,
    /// Absent (presets before session 24): data files sync as the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data_fsync_mean_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data_fsync_p99_us: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PointTable {
    pattern: String,
    queue_depth: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_mean_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_p99_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_mean_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_p99_latency_us: Option<f64>,
    /// The calling threads' own CPU and wait for a core per request
    /// (absent in presets before session 25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_caller_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_caller_core_wait_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_caller_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_caller_core_wait_us: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogWriteTable {
    write_bytes: u32,
    mb_per_s: f64,
    mean_latency_us: f64,
    p99_latency_us: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FsyncBesideTable {
    kind: String,
    in_flight: u32,
    iops: f64,
    mean_latency_us: f64,
    p99_latency_us: f64,
}

const HEADER: &str = "# A model of one machine's storage, written by `flushwise device calibrate`.\n\
# Use it with `--device calibrated:PATH` (simulator) or\n\
# `--device emulated calibrated:PATH` (engine). Latency of a request =\n\
# base + per_outstanding x (requests of its kind in flight at its arrival)\n\
# + per_outstanding_<other kind> x (requests of the other kind in flight)\n\
# + transfer x (MiB beyond 16 KiB); see crates/core/src/device/calibrated.rs.\n";

/// A TOML error on one line: `line N (the line's text): what is wrong`.
fn parse_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text[..start].matches('\n').count() + 1;
            let shown = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line} (`{shown}`): {message}")
        }
        None => message.to_string(),
    }
}

/// Three decimals: what the file keeps of a measured number.
fn rounded(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

fn figures_of(
    point: usize,
    dir: &str,
    [iops, mean, p99]: [Option<f64>; 3],
    [caller_cpu_us, caller_core_wait_us]: [Option<f64>; 2],
) -> Result<Option<Figures>, String> {
    match (iops, mean, p99) {
        (None, None, None) if caller_cpu_us.is_none() && caller_core_wait_us.is_none() => Ok(None),
        (Some(iops), Some(mean_latency_us), Some(p99_latency_us)) => {
            for (name, value) in [
                ("caller_cpu_us", caller_cpu_us),
                ("caller_core_wait_us", caller_core_wait_us),
            ] {
                if value.is_some_and(|v| !v.is_finite() || v < 0.0) {
                    return Err(format!("[[point]] {point}: `{dir}_{name}` must be finite and >= 0"));
                }
            }
            Ok(Some(Figures {
                iops,
                mean_latency_us,
                p99_latency_us,
                caller_cpu_us,
                caller_core_wait_us,
            }))
        }
        _ => Err(format!(
            "[[point]] {point}: give all of `{dir}_iops`, `{dir}_mean_latency_us` and `{dir}_p99_latency_us` or none"
        )),
    }
}

impl CalibratedPreset {
    /// Parses and validates a preset's text; the model's `name` is `label`.
    pub fn from_toml(text: &str, label: &str) -> Result<CalibratedPreset, String> {
        let file: PresetFile = toml::from_str(text).map_err(|e| parse_error(text, &e))?;
        if file.format_version != FORMAT_VERSION {
            return Err(format!(
                "`format_version` must be {FORMAT_VERSION}, got {}",
                file.format_version
            ));
        }
        let m = file.model;
        let config = CalibratedConfig {
            name: label.to_string(),
            read_base_latency_us: m.read_base_latency_us,
            write_base_latency_us: m.write_base_latency_us,
            read_latency_per_outstanding_us: m.read_latency_per_outstanding_us,
            write_latency_per_outstanding_us: m.write_latency_per_outstanding_us,
            read_latency_per_outstanding_write_us: m
                .read_latency_per_outstanding_write_us
                .unwrap_or(m.read_latency_per_outstanding_us),
            write_latency_per_outstanding_read_us: m
                .write_latency_per_outstanding_read_us
                .unwrap_or(m.write_latency_per_outstanding_us),
            transfer_us_per_mib: m.transfer_us_per_mib,
        };
        config.validate().map_err(|e| match e {
            DeviceError::InvalidConfig { field, reason } => format!("[model] `{field}` {reason}"),
            other => other.to_string(),
        })?;
        let measurements = match file.measured {
            Some(t) => {
                let mut points = Vec::with_capacity(file.point.len());
                for (i, p) in file.point.into_iter().enumerate() {
                    let n = i + 1;
                    let pattern = Pattern::parse(&p.pattern).ok_or_else(|| {
                        format!(
                            "[[point]] {n}: `pattern` {:?} is not one of {}",
                            p.pattern,
                            Pattern::ACCEPTED.join(", ")
                        )
                    })?;
                    points.push(MeasuredPoint {
                        pattern,
                        queue_depth: p.queue_depth,
                        read: figures_of(
                            n,
                            "read",
                            [p.read_iops, p.read_mean_latency_us, p.read_p99_latency_us],
                            [p.read_caller_cpu_us, p.read_caller_core_wait_us],
                        )?,
                        write: figures_of(
                            n,
                            "write",
                            [p.write_iops, p.write_mean_latency_us, p.write_p99_latency_us],
                            [p.write_caller_cpu_us, p.write_caller_core_wait_us],
                        )?,
                    });
                }
                let measurements = Measurements {
                    request_bytes: t.request_bytes,
                    points,
                    log_writes: file
                        .log_write
                        .into_iter()
                        .map(|l| LogWritePoint {
                            write_bytes: l.write_bytes,
                            mb_per_s: l.mb_per_s,
                            mean_latency_us: l.mean_latency_us,
                            p99_latency_us: l.p99_latency_us,
                        })
                        .collect(),
                    fsync_mean_us: t.fsync_mean_us,
                    fsync_p99_us: t.fsync_p99_us,
                    data_fsync_mean_us: t.data_fsync_mean_us,
                    data_fsync_p99_us: t.data_fsync_p99_us,
                    fsync_beside: file
                        .fsync_beside
                        .into_iter()
                        .enumerate()
                        .map(|(i, f)| {
                            let kind = match f.kind.as_str() {
                                "read" => IoKind::Read,
                                "write" => IoKind::Write,
                                other => {
                                    return Err(format!(
                                        "[[fsync_beside]] {}: `kind` {other:?} is not one of read, write",
                                        i + 1
                                    ))
                                }
                            };
                            Ok(FsyncBeside {
                                kind,
                                in_flight: f.in_flight,
                                iops: f.iops,
                                mean_latency_us: f.mean_latency_us,
                                p99_latency_us: f.p99_latency_us,
                            })
                        })
                        .collect::<Result<_, String>>()?,
                    sequential_write_mb_per_s: t.sequential_write_mb_per_s,
                };
                measurements
                    .validate()
                    .map_err(|reason| format!("[measured]: {reason}"))?;
                Some(measurements)
            }
            None if !file.point.is_empty() || !file.log_write.is_empty() || !file.fsync_beside.is_empty() => {
                return Err("[[point]], [[log_write]] and [[fsync_beside]] need a [measured] table".into())
            }
            None => None,
        };
        Ok(CalibratedPreset {
            config,
            provenance: file.provenance,
            measurements,
        })
    }

    /// The preset as TOML (see the module doc), measured numbers kept to
    /// three decimals; `from_toml` gives it back.
    pub fn to_toml(&self) -> Result<String, String> {
        let c = &self.config;
        let (measured, point, log_write, fsync_beside) = match &self.measurements {
            None => (None, Vec::new(), Vec::new(), Vec::new()),
            Some(m) => (
                Some(MeasuredTable {
                    request_bytes: m.request_bytes,
                    sequential_write_mb_per_s: rounded(m.sequential_write_mb_per_s),
                    fsync_mean_us: rounded(m.fsync_mean_us),
                    fsync_p99_us: rounded(m.fsync_p99_us),
                    data_fsync_mean_us: m.data_fsync_mean_us.map(rounded),
                    data_fsync_p99_us: m.data_fsync_p99_us.map(rounded),
                }),
                m.points
                    .iter()
                    .map(|p| PointTable {
                        pattern: p.pattern.as_str().to_string(),
                        queue_depth: p.queue_depth,
                        read_iops: p.read.map(|f| rounded(f.iops)),
                        read_mean_latency_us: p.read.map(|f| rounded(f.mean_latency_us)),
                        read_p99_latency_us: p.read.map(|f| rounded(f.p99_latency_us)),
                        write_iops: p.write.map(|f| rounded(f.iops)),
                        write_mean_latency_us: p.write.map(|f| rounded(f.mean_latency_us)),
                        write_p99_latency_us: p.write.map(|f| rounded(f.p99_latency_us)),
                        read_caller_cpu_us: p.read.and_then(|f| f.caller_cpu_us).map(rounded),
                        read_caller_core_wait_us: p.read.and_then(|f| f.caller_core_wait_us).map(rounded),
                        write_caller_cpu_us: p.write.and_then(|f| f.caller_cpu_us).map(rounded),
                        write_caller_core_wait_us: p.write.and_then(|f| f.caller_core_wait_us).map(rounded),
                    })
                    .collect(),
                m.log_writes
                    .iter()
                    .map(|l| LogWriteTable {
                        write_bytes: l.write_bytes,
                        mb_per_s: rounded(l.mb_per_s),
                        mean_latency_us: rounded(l.mean_latency_us),
                        p99_latency_us: rounded(l.p99_latency_us),
                    })
                    .collect(),
                m.fsync_beside
                    .iter()
                    .map(|f| FsyncBesideTable {
                        kind: match f.kind {
                            IoKind::Read => "read",
                            IoKind::Write => "write",
                        }
                        .to_string(),
                        in_flight: f.in_flight,
                        iops: rounded(f.iops),
                        mean_latency_us: rounded(f.mean_latency_us),
                        p99_latency_us: rounded(f.p99_latency_us),
                    })
                    .collect(),
            ),
        };
        let file = PresetFile {
            format_version: FORMAT_VERSION,
            model: ModelTable {
                read_base_latency_us: c.read_base_latency_us,
                write_base_latency_us: c.write_base_latency_us,
                read_latency_per_outstanding_us: c.read_latency_per_outstanding_us,
                write_latency_per_outstanding_us: c.write_latency_per_outstanding_us,
                read_latency_per_outstanding_write_us: Some(c.read_latency_per_outstanding_write_us),
                write_latency_per_outstanding_read_us: Some(c.write_latency_per_outstanding_read_us),
                transfer_us_per_mib: c.transfer_us_per_mib,
            },
            provenance: self.provenance.clone(),
            measured,
            point,
            log_write,
            fsync_beside,
        };
        let body = toml::to_string(&file).map_err(|e| format!("cannot write the preset as TOML: {e}"))?;
        Ok(format!("{HEADER}{body}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_only() -> String {
        "format_version = 1\n[model]\nread_base_latency_us = 120.5\nwrite_base_latency_us = 100.0\n\
         read_latency_per_outstanding_us = 14.5\nwrite_latency_per_outstanding_us = 12.25\n\
         transfer_us_per_mib = 640.0\n"
            .to_string()
    }

    fn full() -> CalibratedPreset {
        let figures = |iops: f64| Figures {
            iops,
            mean_latency_us: 1e6 / iops,
            p99_latency_us: 3e6 / iops,
            caller_cpu_us: Some(21.5),
            caller_core_wait_us: Some(30.25),
        };
        CalibratedPreset {
            config: CalibratedConfig {
                name: "label".into(),
                read_base_latency_us: 120.5,
                write_base_latency_us: 100.0,
                read_latency_per_outstanding_us: 14.5,
                write_latency_per_outstanding_us: 12.25,
                read_latency_per_outstanding_write_us: 22.875,
                write_latency_per_outstanding_read_us: 25.125,
                transfer_us_per_mib: 640.0,
            },
            provenance: Some(Provenance {
                dir: "/work/calib \"quoted\" # not a comment".into(),
                filesystem: "ext4 (/dev/vda on /)".into(),
                commit: "50ed8de".into(),
                io: "direct".into(),
                file_size_bytes: 1 << 30,
                duration_per_point_ms: 2000,
            }),
            measurements: Some(Measurements {
                request_bytes: 16384,
                points: vec![
                    MeasuredPoint {
                        pattern: Pattern::Read,
                        queue_depth: 1,
                        read: Some(figures(8000.0)),
                        write: None,
                    },
                    MeasuredPoint {
                        pattern: Pattern::Write,
                        queue_depth: 4,
                        read: None,
                        write: Some(figures(25000.0)),
                    },
                    MeasuredPoint {
                        pattern: Pattern::Mixed,
                        queue_depth: 4,
                        read: Some(figures(18000.0)),
                        write: Some(figures(17500.0)),
                    },
                ],
                log_writes: vec![LogWritePoint {
                    write_bytes: 65536,
                    mb_per_s: 240.0,
                    mean_latency_us: 273.0,
                    p99_latency_us: 1052.0,
                }],
                fsync_mean_us: 206.0,
                fsync_p99_us: 1028.0,
                data_fsync_mean_us: Some(45.5),
                data_fsync_p99_us: Some(80.0),
                fsync_beside: vec![
                    FsyncBeside {
                        kind: IoKind::Write,
                        in_flight: 4,
                        iops: 21415.25,
                        mean_latency_us: 395.5,
                        p99_latency_us: 751.0,
                    },
                    FsyncBeside {
                        kind: IoKind::Read,
                        in_flight: 4,
                        iops: 20388.0,
                        mean_latency_us: 414.0,
                        p99_latency_us: 765.0,
                    },
                ],
                sequential_write_mb_per_s: 826.0,
            }),
        }
    }

    /// Rounds every measured number to the three decimals the writer keeps.
    fn rounded_preset(mut preset: CalibratedPreset) -> CalibratedPreset {
        if let Some(m) = &mut preset.measurements {
            for p in &mut m.points {
                for f in [&mut p.read, &mut p.write].into_iter().flatten() {
                    f.iops = rounded(f.iops);
                    f.mean_latency_us = rounded(f.mean_latency_us);
                    f.p99_latency_us = rounded(f.p99_latency_us);
                }
            }
        }
        preset
    }

    fn error_of(text: &str) -> String {
        CalibratedPreset::from_toml(text, "x").unwrap_err()
    }

    #[test]
    fn a_preset_survives_its_own_text() {
        let preset = full();
        let text = preset.to_toml().unwrap();
        let back = CalibratedPreset::from_toml(&text, "label").expect("own text parses");
        assert_eq!(back, rounded_preset(preset), "{text}");
        assert_eq!(back.to_toml().unwrap(), text);
        assert!(text.starts_with("# A model of one machine's storage"), "{text}");
    }

    #[test]
    fn the_model_table_alone_is_a_preset() {
        let preset = CalibratedPreset::from_toml(&model_only(), "m").unwrap();
        assert_eq!(preset.config.write_base_latency_us, 100.0);
        assert_eq!(preset.config.name, "m");
        assert!(preset.provenance.is_none() && preset.measurements.is_none());
        let with_comments = format!(
            "# a preset\n\n{}  # trailing\n",
            model_only().replace('\n', "   # note\n")
        );
        assert!(CalibratedPreset::from_toml(&with_comments, "x").is_ok());
    }

    #[test]
    fn a_preset_without_cross_kind_weights_reads_as_the_model_before_them() {
        use flushwise_core::device::{CalibratedModel, DeviceModel, IoKind, IoRequest};
        let old = CalibratedPreset::from_toml(&model_only(), "old").unwrap().config;
        assert_eq!(old.read_latency_per_outstanding_write_us, 14.5);
        assert_eq!(old.write_latency_per_outstanding_read_us, 12.25);
        assert_eq!(old, old.without_cross_kind_weights());
        // Every request in flight adds the same-kind slope, whatever its
        // kind: a read behind two reads and two writes, 120.5 + 4 x 14.5 us.
        let mut device = CalibratedModel::new(old.clone()).unwrap();
        for kind in [IoKind::Read, IoKind::Write, IoKind::Write, IoKind::Read] {
            device.submit(
                IoRequest {
                    kind,
                    offset_bytes: 0,
                    len_bytes: 16384,
                },
                0,
            );
        }
        let read = IoRequest {
            kind: IoKind::Read,
            offset_bytes: 0,
            len_bytes: 16384,
        };
        assert_eq!(device.submit(read, 10), 10 + 179, "178.5 us, rounded up");
        device.check_invariants();
        // One given, the other still defaults; written back, both are kept.
        let one = model_only().replace(
            "transfer_us_per_mib",
            "read_latency_per_outstanding_write_us = 30.0\ntransfer_us_per_mib",
        );
        let preset = CalibratedPreset::from_toml(&one, "one").unwrap();
        assert_eq!(preset.config.read_latency_per_outstanding_write_us, 30.0);
        assert_eq!(preset.config.write_latency_per_outstanding_read_us, 12.25);
        let text = preset.to_toml().unwrap();
        assert!(text.contains("write_latency_per_outstanding_read_us = 12.25"), "{text}");
        assert_eq!(CalibratedPreset::from_toml(&text, "one").unwrap(), preset);
    }

    #[test]
    fn bad_presets_are_refused_naming_line_and_field() {
        let model = model_only();
        let cases: Vec<(String, &[&str])> = vec![
            (
                model.replace("transfer_us_per_mib = 640.0\n", ""),
                &["transfer_us_per_mib"],
            ),
            (
                model.replace("14.5", "\"fast\""),
                &["line 5", "read_latency_per_outstanding_us", "string"],
            ),
            (
                model.replace("120.5", "-3.0"),
                &["[model]", "read_base_latency_us", ">= 0"],
            ),
            (model.replace("120.5", "nan"), &["read_base_latency_us", "NaN"]),
            (
                model.replace(
                    "transfer_us_per_mib",
                    "write_latency_per_outstanding_read_us = -2.0\ntransfer_us_per_mib",
                ),
                &["[model]", "write_latency_per_outstanding_read_us", ">= 0"],
            ),
            (format!("{model}speed = 3\n"), &["unknown field `speed`"]),
            (format!("{model}[disk]\n"), &["unknown field `disk`"]),
            (format!("{model}[model]\n"), &["line 8"]),
            (
                model.replace(
                    "write_base_latency_us = 100.0",
                    "write_base_latency_us = 100.0\nwrite_base_latency_us = 7.0",
                ),
                &["line 5", "duplicate key"],
            ),
            (model.replace("format_version = 1\n", ""), &["format_version"]),
            (
                model.replace("format_version = 1", "format_version = 2"),
                &["format_version", "2"],
            ),
            (model.replace("[model]", "[model"), &["line 2"]),
            ("format_version = 1\n".into(), &["missing field `model`"]),
            (format!("{model}[provenance]\ndir = \"/x\n"), &["line 9"]),
            (format!("{model}[provenance]\ndir = 3\n"), &["line 9", "string"]),
            (
                format!("{model}[[point]]\npattern = \"read\"\nqueue_depth = 1\n"),
                &["[[point]], [[log_write]] and [[fsync_beside]] need a [measured] table"],
            ),
            (
                format!("{model}[[fsync_beside]]\nkind = \"write\"\nin_flight = 2\niops = 1.0\nmean_latency_us = 9.0\np99_latency_us = 9.0\n"),
                &["need a [measured] table"],
            ),
            (
                format!("{model}[measured]\nrequest_bytes = 16384\nsequential_write_mb_per_s = 1.0\nfsync_mean_us = 1.0\nfsync_p99_us = 1.0\n\
                         [[fsync_beside]]\nkind = \"flush\"\nin_flight = 2\niops = 1.0\nmean_latency_us = 9.0\np99_latency_us = 9.0\n"),
                &["[[fsync_beside]] 1", "\"flush\"", "read, write"],
            ),
            (format!("{model}read_iops 3\n"), &["line 8"]),
        ];
        for (text, wanted) in cases {
            let message = error_of(&text);
            for w in wanted {
                assert!(message.contains(w), "{message:?} lacks {w:?} for\n{text}");
            }
        }
    }

    #[test]
    fn bad_measurements_are_refused_naming_the_field() {
        let text = full().to_toml().unwrap();
        let message = error_of(&text.replace("pattern = \"read\"", "pattern = \"scan\""));
        assert!(
            message.contains("`pattern` \"scan\"") && message.contains("mixed"),
            "{message}"
        );
        let message = error_of(&text.replace("queue_depth = 1\n", "queue_depth = 1\nwrite_iops = 5.0\n"));
        assert!(message.contains("write_iops"), "{message}");
        let message = error_of(&text.replace("write_iops = 25000.0\n", ""));
        assert!(message.contains("write_iops"), "{message}");
        let message = error_of(&text.replace("queue_depth = 4", "queue_depth = 0"));
        assert!(message.contains("queue_depth must be >= 1"), "{message}");
        let message = error_of(&text.replace("file_size_bytes = 1073741824", "file_size_bytes = -1"));
        assert!(message.contains("file_size_bytes"), "{message}");
        let message =
            error_of(&text.replacen("read_caller_core_wait_us = 30.25", "read_caller_core_wait_us = -3.0", 1));
        assert!(
            message.contains("`read_caller_core_wait_us` must be finite and >= 0"),
            "{message}"
        );
    }
}
