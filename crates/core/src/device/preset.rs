//! The calibrated-device preset file: TOML text in, [`CalibratedPreset`] out,
//! and back.
//!
//! `flushwise device calibrate` writes one; `--device calibrated:PATH`
//! reads one (the shell reads the file and hands the text here: core does
//! no I/O). Layout, every number with its unit in its name:
//!
//! ```toml
//! format_version = 1
//!
//! [model]                                  # the fitted CalibratedConfig
//! read_base_latency_us = 120.5
//! write_base_latency_us = 104.2
//! read_latency_per_outstanding_us = 14.5
//! write_latency_per_outstanding_us = 12.4
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
//! fsync_mean_us = 206.0
//! fsync_p99_us = 1028.0
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
//!
//! [[log_write]]                            # one per log-append size
//! write_bytes = 16384
//! mb_per_s = 47.4
//! mean_latency_us = 345.0
//! p99_latency_us = 1244.0
//! ```
//!
//! Only `[model]` is needed to build a device; the rest is the evidence.
//!
//! The reader takes the subset of TOML this layout needs (comments, bare
//! keys, `[table]` and `[[array]]` headers, basic strings, integers,
//! floats, booleans) rather than a TOML crate, so core keeps no dependency;
//! what the writer emits is plain TOML any TOML reader accepts. Unknown
//! tables and keys are refused (a typo is not silently a default), as are
//! duplicate keys. Every error names the line, the table and the field.

use std::fmt::Write as _;

use super::calibrated::CalibratedConfig;
use super::calibration::{Figures, LogWritePoint, MeasuredPoint, Measurements, Pattern};
use super::DeviceError;

/// The only `format_version` written and read.
pub const FORMAT_VERSION: i64 = 1;

/// Where and how a preset was measured.
#[derive(Clone, Debug, PartialEq, Eq)]
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

fn preset_error(line: usize, reason: impl Into<String>) -> DeviceError {
    DeviceError::InvalidPreset {
        line,
        reason: reason.into(),
    }
}

/// One TOML value of the subset.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Bool(_) => "a boolean",
        }
    }
}

/// One table of the file: the root (`name` empty), a `[name]` or one
/// element of a `[[name]]` array.
#[derive(Debug)]
struct Table {
    name: String,
    /// Line of its header (0 for the root).
    line: usize,
    entries: Vec<(String, Value, usize)>,
    /// Keys read by the decoder; any other is refused at the end.
    taken: Vec<bool>,
}

impl Table {
    fn what(&self) -> String {
        if self.name.is_empty() {
            "the top level".into()
        } else {
            format!("[{}] at line {}", self.name, self.line)
        }
    }

    fn get(&mut self, key: &str) -> Option<(Value, usize)> {
        let index = self.entries.iter().position(|(k, _, _)| k == key)?;
        self.taken[index] = true;
        let (_, value, line) = &self.entries[index];
        Some((value.clone(), *line))
    }

    fn missing(&self, key: &str) -> DeviceError {
        preset_error(self.line, format!("{} lacks `{key}`", self.what()))
    }

    fn f64(&mut self, key: &str) -> Result<f64, DeviceError> {
        match self.get(key) {
            Some((Value::Float(v), _)) => Ok(v),
            Some((Value::Int(v), _)) => Ok(v as f64),
            Some((other, line)) => Err(preset_error(
                line,
                format!("`{key}` must be a number, got {}", other.type_name()),
            )),
            None => Err(self.missing(key)),
        }
    }

    fn u64(&mut self, key: &str) -> Result<u64, DeviceError> {
        match self.get(key) {
            Some((Value::Int(v), line)) => {
                u64::try_from(v).map_err(|_| preset_error(line, format!("`{key}` must be >= 0, got {v}")))
            }
            Some((other, line)) => Err(preset_error(
                line,
                format!("`{key}` must be a whole number, got {}", other.type_name()),
            )),
            None => Err(self.missing(key)),
        }
    }

    fn u32(&mut self, key: &str) -> Result<u32, DeviceError> {
        let line = self.get(key).map_or(self.line, |(_, line)| line);
        let v = self.u64(key)?;
        u32::try_from(v).map_err(|_| preset_error(line, format!("`{key}` must be at most {}, got {v}", u32::MAX)))
    }

    fn string(&mut self, key: &str) -> Result<String, DeviceError> {
        match self.get(key) {
            Some((Value::Str(v), _)) => Ok(v),
            Some((other, line)) => Err(preset_error(
                line,
                format!("`{key}` must be a string, got {}", other.type_name()),
            )),
            None => Err(self.missing(key)),
        }
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _, _)| k == key)
    }

    /// Refuses any key the decoder did not read.
    fn check_all_taken(&self) -> Result<(), DeviceError> {
        match self.entries.iter().zip(&self.taken).find(|(_, taken)| !**taken) {
            Some(((key, _, line), _)) => Err(preset_error(*line, format!("unknown key `{key}` in {}", self.what()))),
            None => Ok(()),
        }
    }
}

/// Splits the text into tables (see the module doc for the subset).
fn parse_tables(text: &str) -> Result<Vec<Table>, DeviceError> {
    const SINGLE: &[&str] = &["model", "provenance", "measured"];
    const ARRAYS: &[&str] = &["point", "log_write"];
    let mut tables = vec![Table {
        name: String::new(),
        line: 0,
        entries: Vec::new(),
        taken: Vec::new(),
    }];
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = strip_comment(raw).trim();
        if content.is_empty() {
            continue;
        }
        if let Some(header) = content.strip_prefix("[[") {
            let name = header
                .strip_suffix("]]")
                .ok_or_else(|| preset_error(line, format!("unclosed table header `{content}`")))?
                .trim();
            if !ARRAYS.contains(&name) {
                return Err(preset_error(
                    line,
                    format!("unknown table array `[[{name}]]`; accepted: [[point]], [[log_write]]"),
                ));
            }
            tables.push(Table {
                name: name.to_string(),
                line,
                entries: Vec::new(),
                taken: Vec::new(),
            });
        } else if let Some(header) = content.strip_prefix('[') {
            let name = header
                .strip_suffix(']')
                .ok_or_else(|| preset_error(line, format!("unclosed table header `{content}`")))?
                .trim();
            if !SINGLE.contains(&name) {
                return Err(preset_error(
                    line,
                    format!("unknown table `[{name}]`; accepted: [model], [provenance], [measured]"),
                ));
            }
            if let Some(earlier) = tables.iter().find(|t| t.name == name) {
                return Err(preset_error(
                    line,
                    format!("table `[{name}]` is defined twice (first at line {})", earlier.line),
                ));
            }
            tables.push(Table {
                name: name.to_string(),
                line,
                entries: Vec::new(),
                taken: Vec::new(),
            });
        } else {
            let (key, value) = content
                .split_once('=')
                .ok_or_else(|| preset_error(line, format!("expected `key = value` or a [table], got `{content}`")))?;
            let key = key.trim();
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                return Err(preset_error(
                    line,
                    format!("`{key}` is not a bare key (letters, digits, _ and -)"),
                ));
            }
            let value = parse_value(value.trim()).map_err(|reason| preset_error(line, format!("`{key}`: {reason}")))?;
            let table = match tables.last_mut() {
                Some(table) => table,
                None => unreachable!("the root table is always there"),
            };
            if let Some((_, _, first)) = table.entries.iter().find(|(k, _, _)| k == key) {
                return Err(preset_error(
                    line,
                    format!("`{key}` is given twice in {} (first at line {first})", table.what()),
                ));
            }
            table.entries.push((key.to_string(), value, line));
            table.taken.push(false);
        }
    }
    Ok(tables)
}

/// The line without its `#` comment (a `#` inside a string is kept).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

fn parse_value(text: &str) -> Result<Value, String> {
    if let Some(body) = text.strip_prefix('"') {
        return parse_string(body).map(Value::Str);
    }
    match text {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "" => return Err("a value is missing".into()),
        _ => {}
    }
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    let looks_numeric = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && digits.bytes().any(|b| b.is_ascii_digit());
    if !looks_numeric {
        return Err(format!(
            "`{text}` is not a value this file takes (a number, a \"string\", true or false)"
        ));
    }
    if let Ok(v) = digits.parse::<i64>() {
        return Ok(Value::Int(v));
    }
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Value::Float(v)),
        _ => Err(format!("`{text}` is not a finite number")),
    }
}

/// A basic string's body after its opening quote, up to the closing one.
fn parse_string(body: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let rest = chars.as_str().trim();
                return if rest.is_empty() {
                    Ok(out)
                } else {
                    Err(format!("unexpected `{rest}` after the string"))
                };
            }
            '\\' => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).map_err(|_| format!("bad escape `\\u{hex}`"))?;
                    out.push(char::from_u32(code).ok_or_else(|| format!("bad escape `\\u{hex}`"))?);
                }
                other => {
                    return Err(format!(
                        "unsupported escape `\\{}`",
                        other.map(String::from).unwrap_or_default()
                    ))
                }
            },
            c if c.is_control() => return Err("control character inside a string".into()),
            c => out.push(c),
        }
    }
    Err("unterminated string".into())
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A float as TOML: always with a fraction, at most three decimals.
fn number(value: f64) -> String {
    let text = format!("{value:.3}");
    let trimmed = text.trim_end_matches('0');
    if trimmed.ends_with('.') {
        format!("{trimmed}0")
    } else {
        trimmed.to_string()
    }
}

impl CalibratedPreset {
    /// Parses and validates a preset's text; the model's `name` is `label`.
    pub fn from_toml(text: &str, label: &str) -> Result<CalibratedPreset, DeviceError> {
        let mut tables = parse_tables(text)?;
        let root = &mut tables[0];
        match root.get("format_version") {
            Some((Value::Int(FORMAT_VERSION), _)) => {}
            Some((other, line)) => {
                return Err(preset_error(
                    line,
                    format!("`format_version` must be {FORMAT_VERSION}, got {other:?}"),
                ))
            }
            None => return Err(preset_error(1, "`format_version = 1` is missing at the top")),
        }
        let model = tables
            .iter_mut()
            .find(|t| t.name == "model")
            .ok_or_else(|| preset_error(1, "the [model] table is missing"))?;
        let config = CalibratedConfig {
            name: label.to_string(),
            read_base_latency_us: model.f64("read_base_latency_us")?,
            write_base_latency_us: model.f64("write_base_latency_us")?,
            read_latency_per_outstanding_us: model.f64("read_latency_per_outstanding_us")?,
            write_latency_per_outstanding_us: model.f64("write_latency_per_outstanding_us")?,
            transfer_us_per_mib: model.f64("transfer_us_per_mib")?,
        };
        let model_line = model.line;
        config.validate().map_err(|e| match e {
            DeviceError::InvalidConfig { field, reason } => {
                let line = model
                    .entries
                    .iter()
                    .find(|(k, _, _)| k == field)
                    .map_or(model_line, |e| e.2);
                preset_error(line, format!("[model] `{field}` {reason}"))
            }
            other => other,
        })?;

        let provenance = match tables.iter_mut().find(|t| t.name == "provenance") {
            Some(t) => Some(Provenance {
                dir: t.string("dir")?,
                filesystem: t.string("filesystem")?,
                commit: t.string("commit")?,
                io: t.string("io")?,
                file_size_bytes: t.u64("file_size_bytes")?,
                duration_per_point_ms: t.u64("duration_per_point_ms")?,
            }),
            None => None,
        };

        let measurements = match tables.iter().position(|t| t.name == "measured") {
            Some(index) => Some(read_measurements(&mut tables, index)?),
            None => {
                if let Some(t) = tables.iter().find(|t| t.name == "point" || t.name == "log_write") {
                    return Err(preset_error(t.line, format!("[[{}]] needs a [measured] table", t.name)));
                }
                None
            }
        };
        for table in &tables {
            table.check_all_taken()?;
        }
        Ok(CalibratedPreset {
            config,
            provenance,
            measurements,
        })
    }

    /// The preset as TOML (see the module doc); `from_toml` gives it back.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let c = &self.config;
        let _ = writeln!(
            out,
            "# A model of one machine's storage, written by `flushwise device calibrate`.\n\
             # Use it with `--device calibrated:PATH` (simulator) or\n\
             # `--device emulated calibrated:PATH` (engine). Latency of a request =\n\
             # base + per_outstanding x (requests in flight at its arrival)\n\
             # + transfer x (MiB beyond 16 KiB); see crates/core/src/device/calibrated.rs.\n\
             format_version = {FORMAT_VERSION}\n\n\
             [model]\n\
             read_base_latency_us = {}\n\
             write_base_latency_us = {}\n\
             read_latency_per_outstanding_us = {}\n\
             write_latency_per_outstanding_us = {}\n\
             transfer_us_per_mib = {}",
            number(c.read_base_latency_us),
            number(c.write_base_latency_us),
            number(c.read_latency_per_outstanding_us),
            number(c.write_latency_per_outstanding_us),
            number(c.transfer_us_per_mib),
        );
        if let Some(p) = &self.provenance {
            let _ = writeln!(
                out,
                "\n[provenance]\ndir = {}\nfilesystem = {}\ncommit = {}\nio = {}\nfile_size_bytes = {}\nduration_per_point_ms = {}",
                quote(&p.dir),
                quote(&p.filesystem),
                quote(&p.commit),
                quote(&p.io),
                p.file_size_bytes,
                p.duration_per_point_ms
            );
        }
        if let Some(m) = &self.measurements {
            let _ = writeln!(
                out,
                "\n[measured]\nrequest_bytes = {}\nsequential_write_mb_per_s = {}\nfsync_mean_us = {}\nfsync_p99_us = {}",
                m.request_bytes,
                number(m.sequential_write_mb_per_s),
                number(m.fsync_mean_us),
                number(m.fsync_p99_us)
            );
            for p in &m.points {
                let _ = writeln!(
                    out,
                    "\n[[point]]\npattern = {}\nqueue_depth = {}",
                    quote(p.pattern.as_str()),
                    p.queue_depth
                );
                for (dir, figures) in [("read", p.read), ("write", p.write)] {
                    if let Some(f) = figures {
                        let _ = writeln!(
                            out,
                            "{dir}_iops = {}\n{dir}_mean_latency_us = {}\n{dir}_p99_latency_us = {}",
                            number(f.iops),
                            number(f.mean_latency_us),
                            number(f.p99_latency_us)
                        );
                    }
                }
            }
            for l in &m.log_writes {
                let _ = writeln!(
                    out,
                    "\n[[log_write]]\nwrite_bytes = {}\nmb_per_s = {}\nmean_latency_us = {}\np99_latency_us = {}",
                    l.write_bytes,
                    number(l.mb_per_s),
                    number(l.mean_latency_us),
                    number(l.p99_latency_us)
                );
            }
        }
        out
    }
}

fn read_measurements(tables: &mut [Table], measured: usize) -> Result<Measurements, DeviceError> {
    let t = &mut tables[measured];
    let request_bytes = t.u32("request_bytes")?;
    let sequential_write_mb_per_s = t.f64("sequential_write_mb_per_s")?;
    let fsync_mean_us = t.f64("fsync_mean_us")?;
    let fsync_p99_us = t.f64("fsync_p99_us")?;
    let mut points = Vec::new();
    let mut log_writes = Vec::new();
    for t in tables.iter_mut() {
        match t.name.as_str() {
            "point" => {
                let (pattern_text, line) = match t.get("pattern") {
                    Some((Value::Str(s), line)) => (s, line),
                    Some((other, line)) => {
                        return Err(preset_error(
                            line,
                            format!("`pattern` must be a string, got {}", other.type_name()),
                        ))
                    }
                    None => return Err(t.missing("pattern")),
                };
                let pattern = Pattern::parse(&pattern_text).ok_or_else(|| {
                    preset_error(
                        line,
                        format!(
                            "`pattern` {pattern_text:?} is not one of {}",
                            Pattern::ACCEPTED.join(", ")
                        ),
                    )
                })?;
                let queue_depth = t.u32("queue_depth")?;
                let mut figures = |dir: &str, wanted: bool| -> Result<Option<Figures>, DeviceError> {
                    let key = format!("{dir}_iops");
                    if !wanted {
                        return if t.has(&key) {
                            Err(preset_error(
                                t.line,
                                format!("a {pattern} point has no `{key}` ({})", t.what()),
                            ))
                        } else {
                            Ok(None)
                        };
                    }
                    Ok(Some(Figures {
                        iops: t.f64(&key)?,
                        mean_latency_us: t.f64(&format!("{dir}_mean_latency_us"))?,
                        p99_latency_us: t.f64(&format!("{dir}_p99_latency_us"))?,
                    }))
                };
                let read = figures("read", pattern.readers(1) > 0)?;
                let write = figures("write", pattern.writers(1) > 0)?;
                points.push(MeasuredPoint {
                    pattern,
                    queue_depth,
                    read,
                    write,
                });
            }
            "log_write" => log_writes.push(LogWritePoint {
                write_bytes: t.u32("write_bytes")?,
                mb_per_s: t.f64("mb_per_s")?,
                mean_latency_us: t.f64("mean_latency_us")?,
                p99_latency_us: t.f64("p99_latency_us")?,
            }),
            _ => {}
        }
    }
    let measurements = Measurements {
        request_bytes,
        points,
        log_writes,
        fsync_mean_us,
        fsync_p99_us,
        sequential_write_mb_per_s,
    };
    measurements
        .validate()
        .map_err(|reason| preset_error(tables[measured].line, format!("[measured]: {reason}")))?;
    Ok(measurements)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceSpec;

    fn model_only() -> String {
        "format_version = 1\n[model]\nread_base_latency_us = 120.5\nwrite_base_latency_us = 100\n\
         read_latency_per_outstanding_us = 14.5\nwrite_latency_per_outstanding_us = 12.25\n\
         transfer_us_per_mib = 640.0\n"
            .to_string()
    }

    fn full() -> CalibratedPreset {
        let figures = |iops: f64| Figures {
            iops,
            mean_latency_us: 1e6 / iops,
            p99_latency_us: 3e6 / iops,
        };
        CalibratedPreset {
            config: CalibratedConfig {
                name: "label".into(),
                read_base_latency_us: 120.5,
                write_base_latency_us: 100.0,
                read_latency_per_outstanding_us: 14.5,
                write_latency_per_outstanding_us: 12.25,
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
                sequential_write_mb_per_s: 826.0,
            }),
        }
    }

    /// Rounds every number to the three decimals the writer keeps.
    fn rounded(mut preset: CalibratedPreset) -> CalibratedPreset {
        let r = |v: &mut f64| *v = (*v * 1000.0).round() / 1000.0;
        if let Some(m) = &mut preset.measurements {
            for p in &mut m.points {
                for f in [&mut p.read, &mut p.write].into_iter().flatten() {
                    r(&mut f.iops);
                    r(&mut f.mean_latency_us);
                    r(&mut f.p99_latency_us);
                }
            }
        }
        preset
    }

    fn error_of(text: &str) -> String {
        CalibratedPreset::from_toml(text, "x").unwrap_err().to_string()
    }

    #[test]
    fn a_preset_survives_its_own_text() {
        let preset = full();
        let text = preset.to_toml();
        let back = CalibratedPreset::from_toml(&text, "label").expect("own text parses");
        assert_eq!(back, rounded(preset), "{text}");
        assert_eq!(back.to_toml(), text);
    }

    #[test]
    fn the_model_table_alone_is_a_device() {
        let preset = CalibratedPreset::from_toml(&model_only(), "m").unwrap();
        assert_eq!(preset.config.write_base_latency_us, 100.0, "an integer is a number");
        assert!(preset.provenance.is_none() && preset.measurements.is_none());
        let spec = DeviceSpec::from_calibrated_toml(&model_only(), "/tmp/m.toml").unwrap();
        assert_eq!(spec.kind(), "calibrated");
        let hash = content_hash(&model_only());
        assert_eq!(spec.describe(), format!("calibrated(/tmp/m.toml#{hash})"));
        assert_eq!(spec.build().describe(), spec.describe());
        // Another text, another name: a run records which preset it used.
        let other = model_only().replace("120.5", "121.5");
        assert_ne!(
            DeviceSpec::from_calibrated_toml(&other, "/tmp/m.toml")
                .unwrap()
                .describe(),
            spec.describe()
        );
    }

    #[test]
    fn comments_and_blank_lines_are_ignored() {
        let text = format!(
            "# a preset\n\n{}  # trailing\n",
            model_only().replace('\n', "   # note\n")
        );
        assert!(CalibratedPreset::from_toml(&text, "x").is_ok(), "{text}");
    }

    #[test]
    fn bad_presets_are_refused_naming_line_and_field() {
        let model = model_only();
        let cases: Vec<(String, &[&str])> = vec![
            (
                model.replace("transfer_us_per_mib = 640.0\n", ""),
                &["[model]", "transfer_us_per_mib"],
            ),
            (
                model.replace("14.5", "\"fast\""),
                &["line 5", "read_latency_per_outstanding_us", "a string"],
            ),
            (
                model.replace("120.5", "-3"),
                &["line 3", "read_base_latency_us", ">= 0"],
            ),
            (model.replace("120.5", "nan"), &["read_base_latency_us", "nan"]),
            (format!("{model}speed = 3\n"), &["unknown key `speed`", "[model]"]),
            (format!("{model}[disk]\n"), &["unknown table `[disk]`"]),
            (format!("{model}[model]\n"), &["defined twice"]),
            (
                model.replace(
                    "write_base_latency_us = 100",
                    "write_base_latency_us = 100\nwrite_base_latency_us = 7",
                ),
                &["given twice"],
            ),
            (model.replace("format_version = 1\n", ""), &["format_version"]),
            (
                model.replace("format_version = 1", "format_version = 2"),
                &["format_version", "2"],
            ),
            (model.replace("[model]", "[model"), &["line 2", "unclosed"]),
            ("format_version = 1\n".into(), &["[model] table is missing"]),
            (
                format!("{model}[provenance]\ndir = \"/x\n"),
                &["`dir`", "unterminated string"],
            ),
            (format!("{model}[provenance]\ndir = 3\n"), &["`dir` must be a string"]),
            (
                format!("{model}[[point]]\npattern = \"read\"\n"),
                &["[[point]] needs a [measured] table"],
            ),
            (format!("{model}read_iops 3\n"), &["expected `key = value`"]),
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
        let text = full().to_toml();
        let message = error_of(&text.replace("pattern = \"read\"", "pattern = \"scan\""));
        assert!(
            message.contains("`pattern` \"scan\"") && message.contains("mixed"),
            "{message}"
        );
        let message = error_of(&text.replace("queue_depth = 1\n", "queue_depth = 1\nwrite_iops = 5.0\n"));
        assert!(message.contains("no `write_iops`"), "{message}");
        let message = error_of(&text.replace("write_iops = 25000.0\n", ""));
        assert!(message.contains("lacks `write_iops`"), "{message}");
        let message = error_of(&text.replace("queue_depth = 4", "queue_depth = 0"));
        assert!(message.contains("queue_depth must be >= 1"), "{message}");
        let message = error_of(&text.replace("file_size_bytes = 1073741824", "file_size_bytes = -1"));
        assert!(message.contains("`file_size_bytes` must be >= 0"), "{message}");
    }
}
