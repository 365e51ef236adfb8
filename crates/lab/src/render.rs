//! Rendering results: flat CSV rows, one-line JSON, and readable tables.
//!
//! A result is flattened from its serde form so that CSV columns follow the
//! JSON contract's names: scalars keep their field name, the policy's
//! parameters become `param_<name>`, latency summaries become
//! `latency_<txn_type>_<field>`. Rows of different runs may have different
//! columns (policies have different parameters): [`Csv`] takes the union in
//! first-seen order and leaves a cell empty where a run has no value.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use flushwise_sim::{FlushFigures, IntervalRow, LatencySummary, RunResult, WritePathFigures};

/// A value's cell text: numbers and booleans as JSON writes them, strings raw.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Flattens one serializable record into (column, cell) pairs.
pub fn flatten(record: &impl Serialize) -> Vec<(String, String)> {
    let value = serde_json::to_value(record).unwrap_or(Value::Null);
    let mut out = Vec::new();
    let Value::Object(map) = value else {
        return out;
    };
    for (key, value) in map {
        match (key.as_str(), value) {
            ("final_parameters" | "parameters", Value::Array(pairs)) => {
                for pair in pairs {
                    if let Value::Array(kv) = pair {
                        if let [Value::String(name), v] = kv.as_slice() {
                            out.push((format!("param_{name}"), cell(v)));
                        }
                    }
                }
            }
            ("mix_pct", Value::Array(pairs)) => {
                for pair in pairs {
                    if let Value::Array(kv) = pair {
                        if let [Value::String(name), v] = kv.as_slice() {
                            out.push((format!("mix_pct_{name}"), cell(v)));
                        }
                    }
                }
            }
            ("latency", Value::Array(summaries)) => {
                for summary in summaries {
                    let Value::Object(fields) = summary else { continue };
                    let txn = fields.get("txn_type").map(cell).unwrap_or_default();
                    for (field, v) in fields.iter().filter(|(f, _)| f.as_str() != "txn_type") {
                        out.push((format!("latency_{txn}_{field}"), cell(v)));
                    }
                }
            }
            // The engine's write-path figures: a column per field, a
            // column per phase (`write_path_<phase>_us_per_page`); absent
            // (simulator) as nothing.
            ("write_path", Value::Object(fields)) => {
                for (field, v) in fields {
                    match (field.as_str(), v) {
                        ("phase_us_per_page", Value::Array(pairs)) => {
                            for pair in pairs {
                                if let Value::Array(kv) = pair {
                                    if let [Value::String(name), v] = kv.as_slice() {
                                        out.push((format!("write_path_{name}_us_per_page"), cell(v)));
                                    }
                                }
                            }
                        }
                        (_, v) => out.push((format!("write_path_{field}"), cell(&v))),
                    }
                }
            }
            ("write_path" | "read_split", Value::Null) => {}
            ("read_split", Value::Object(fields)) => {
                for (field, v) in fields {
                    out.push((format!("read_split_{field}"), cell(&v)));
                }
            }
            (_, v @ (Value::Array(_) | Value::Object(_))) => out.push((key, v.to_string())),
            (_, v) => out.push((key, cell(&v))),
        }
    }
    out
}

/// [`flatten`], with every nested object's fields as their own columns,
/// `outer_inner` (one level), instead of one cell of JSON: for records
/// such as a Wisconsin run's, whose response-time summary and flush
/// totals are objects.
pub fn flatten_objects(record: &impl Serialize) -> Vec<(String, String)> {
    let value = serde_json::to_value(record).unwrap_or(Value::Null);
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map {
        match value {
            Value::Object(fields) => {
                for (field, v) in fields {
                    let text = match v {
                        Value::Array(_) | Value::Object(_) => v.to_string(),
                        other => cell(&other),
                    };
                    out.push((format!("{key}_{field}"), text));
                }
            }
            v => out.extend(flatten(&serde_json::json!({ key: v }))),
        }
    }
    out
}

/// An interval row's cells, with the commit (every output row carries
/// config hash, seed and commit, STYLE.md §5).
pub fn flatten_interval(row: &IntervalRow, commit: &str) -> Vec<(String, String)> {
    let mut cells = flatten(row);
    cells.push(("commit".into(), commit.into()));
    cells
}

/// Runs as JSON lines, the `--output json` contract of every command: for
/// each run, one object per interval row (`"kind":"interval"`, with the
/// run's shell and commit), then one for the run (`"kind":"result"`).
/// `kind` is always the first key.
pub fn json_lines<'a>(runs: impl IntoIterator<Item = (&'a RunResult, &'a [IntervalRow])>) -> Result<String, String> {
    fn object(kind: &str, value: &impl Serialize, extra: &[(&str, &str)]) -> Result<String, String> {
        let Value::Object(fields) = serde_json::to_value(value).map_err(|e| format!("cannot render JSON: {e}"))? else {
            return Err(format!("cannot render JSON: a {kind} is not an object"));
        };
        let mut out = serde_json::Map::new();
        out.insert("kind".into(), Value::from(kind));
        for (k, v) in extra {
            out.insert((*k).into(), Value::from(*v));
        }
        out.extend(fields);
        serde_json::to_string(&Value::Object(out)).map_err(|e| format!("cannot render JSON: {e}"))
    }
    let mut text = String::new();
    for (result, rows) in runs {
        for row in rows {
            let extra = [("shell", result.shell.as_str()), ("commit", result.commit.as_str())];
            text.push_str(&object("interval", row, &extra)?);
            text.push('\n');
        }
        text.push_str(&object("result", result, &[])?);
        text.push('\n');
    }
    Ok(text)
}

/// A CSV table whose header is the union of its rows' columns.
#[derive(Default)]
pub struct Csv {
    columns: Vec<String>,
    rows: Vec<Vec<(String, String)>>,
}

impl Csv {
    pub fn push(&mut self, row: Vec<(String, String)>) {
        for (column, _) in &row {
            if !self.columns.contains(column) {
                self.columns.push(column.clone());
            }
        }
        self.rows.push(row);
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| quote(c)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = self
                .columns
                .iter()
                .map(|c| {
                    row.iter()
                        .find(|(k, _)| k == c)
                        .map(|(_, v)| quote(v))
                        .unwrap_or_default()
                })
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

/// RFC 4180 quoting where needed.
pub fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Left-aligned first column, right-aligned others, two spaces apart.
pub fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, c) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let mut text = String::new();
        for (i, c) in cells.iter().enumerate().take(columns) {
            if i > 0 {
                text.push_str("  ");
            }
            if i == 0 {
                let _ = write!(text, "{c:<w$}", w = widths[i]);
            } else {
                let _ = write!(text, "{c:>w$}", w = widths[i]);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, &mut out);
    for row in rows {
        line(row, &mut out);
    }
    out
}

/// "name=value, ..." for a policy's parameters.
pub fn parameters_text(parameters: &[(String, f64)]) -> String {
    parameters
        .iter()
        .map(|(k, v)| format!("{k}={}", short_number(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Integers without decimals, others with up to 3 significant decimals.
pub fn short_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The flushing figures of a run as summary rows, the same for both shells.
fn flushing_rows(result: &RunResult) -> Vec<(&'static str, String)> {
    let f = &result.figures;
    vec![
        ("reads / async writes", format!("{} / {}", f.reads, f.async_writes)),
        (
            "sync writes (replacement / recoverability)",
            format!(
                "{} / {} ({:.2}% of writes)",
                f.sync_replacement_writes, f.sync_recoverability_writes, f.sync_write_pct
            ),
        ),
        ("I/O per transaction", format!("{:.2}", f.io_per_txn)),
        ("hit ratio", format!("{:.4}", f.hit_ratio)),
        ("dirty pages (avg)", format!("{:.1}%", result.dirty_pct_avg)),
        ("wait free", f.wait_free.to_string()),
        ("final parameters", parameters_text(&result.final_parameters)),
    ]
}

/// The human-readable summary of one run plus its interval rows.
pub fn run_table(result: &RunResult, rows: &[IntervalRow]) -> String {
    let f = &result.figures;
    let mut out = String::new();
    let mut kv: Vec<(&str, String)> = vec![
        ("policy", result.policy.clone()),
        ("workload", result.workload.clone()),
        (
            "device / log device",
            format!("{} / {}", result.device, result.log_device),
        ),
        (
            "buffer pool / redo",
            format!(
                "{} / {} ({} of the database's {})",
                flushwise_sim::units::format_bytes(result.buffer_pool_bytes),
                flushwise_sim::units::format_bytes(result.redo_bytes),
                format_args!(
                    "{:.2}%",
                    100.0 * result.buffer_pool_bytes as f64 / result.database_bytes.max(1) as f64
                ),
                flushwise_sim::units::format_bytes(result.database_bytes)
            ),
        ),
        ("connections", result.connections.to_string()),
        ("NOPM / TPM total", format!("{:.0} / {:.0}", f.nopm, f.tpm_total)),
    ];
    kv.extend(flushing_rows(result));
    kv.extend([(
        "simulated / wall",
        format!(
            "{:.0} s / {:.2} s ({:.0} requests/s)",
            result.simulated_seconds.unwrap_or(result.measured_seconds),
            result.wall_seconds,
            result.requests_per_second.unwrap_or(0.0)
        ),
    )]);
    out.push_str(&key_value_text(&kv));
    if !result.latency.is_empty() {
        out.push('\n');
        out.push_str(&latency_table(&result.latency));
    }
    if !rows.is_empty() {
        out.push('\n');
        let header: Vec<String> = [
            "time s",
            "NOPM",
            "reads",
            "async wr",
            "sync repl",
            "sync rec",
            "sync %",
            "hit",
            "dirty %",
            "free",
            "parameters",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    format!("{:.0}{}", r.time_s, if r.warmup { " (warm-up)" } else { "" }),
                    format!("{:.0}", r.figures.nopm),
                    r.figures.reads.to_string(),
                    r.figures.async_writes.to_string(),
                    r.figures.sync_replacement_writes.to_string(),
                    r.figures.sync_recoverability_writes.to_string(),
                    format!("{:.2}", r.figures.sync_write_pct),
                    format!("{:.4}", r.figures.hit_ratio),
                    format!("{:.1}", r.dirty_pct),
                    r.free_pages.to_string(),
                    parameters_text(&r.parameters),
                ]
            })
            .collect();
        out.push_str(&render_table(&header, &body));
    }
    out
}

/// Coefficient of variation of NOPM over the measured interval rows
/// (Wang & Bunt Table 4's C.O.V.); 0 with fewer than two intervals.
pub fn nopm_cov(rows: &[IntervalRow]) -> f64 {
    let values: Vec<f64> = rows.iter().filter(|r| !r.warmup).map(|r| r.figures.nopm).collect();
    if values.len() < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean == 0.0 {
        return 0.0;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
    var.sqrt() / mean
}

/// `key  value` lines, keys padded to the widest.
pub fn key_value_text(kv: &[(&str, String)]) -> String {
    let width = kv.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in kv {
        let _ = writeln!(out, "{k:<width$}  {v}");
    }
    out
}

/// Latency percentiles per transaction type, in milliseconds.
pub fn latency_table(latency: &[LatencySummary]) -> String {
    let header: Vec<String> = [
        "txn", "count", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let ms = |us: u64| format!("{:.2}", us as f64 / 1000.0);
    let body: Vec<Vec<String>> = latency
        .iter()
        .map(|l| {
            vec![
                l.txn_type.clone(),
                l.count.to_string(),
                ms(l.p50_us),
                ms(l.p90_us),
                ms(l.p95_us),
                ms(l.p99_us),
                ms(l.p999_us),
                ms(l.max_us),
            ]
        })
        .collect();
    render_table(&header, &body)
}

/// One row of a side-by-side policy table.
pub struct PolicyRow<'a> {
    pub policy: &'a str,
    pub figures: &'a FlushFigures,
    pub dirty_pct_avg: f64,
    /// Cells of the `extra_header` columns.
    pub extra: Vec<String>,
}

/// Policy, NOPM, ratio to the first row, the figures behind it, then the
/// caller's extra columns.
pub fn policy_table(rows: &[PolicyRow<'_>], extra_header: &[&str]) -> String {
    let base = rows.first().map_or(0.0, |r| r.figures.nopm);
    let header: Vec<String> = [
        "policy",
        "NOPM",
        "ratio",
        "sync_write_pct",
        "io_per_txn",
        "hit_ratio",
        "dirty_pct_avg",
    ]
    .iter()
    .chain(extra_header.iter())
    .map(|s| s.to_string())
    .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.policy.to_string(),
                format!("{:.0}", r.figures.nopm),
                ratio_text(r.figures.nopm, base),
                format!("{:.2}", r.figures.sync_write_pct),
                format!("{:.2}", r.figures.io_per_txn),
                format!("{:.4}", r.figures.hit_ratio),
                format!("{:.1}", r.dirty_pct_avg),
            ];
            cells.extend(r.extra.iter().cloned());
            cells
        })
        .collect();
    render_table(&header, &body)
}

/// `value / base` as `1.23x`, or `n/a` without a base.
pub fn ratio_text(value: f64, base: f64) -> String {
    if base > 0.0 {
        format!("{:.2}x", value / base)
    } else {
        "n/a".to_string()
    }
}

/// True if `--decisions` names a `.jsonl` file: one JSON object per
/// page-cleaner iteration (schema in `flushwise_core::iteration_log`),
/// instead of the prose decision log as CSV.
pub fn is_jsonl_path(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
}

/// Iteration records as JSON lines.
pub fn iteration_jsonl(records: &[flushwise_core::IterationRecord]) -> String {
    let mut text = String::with_capacity(records.len() * 600);
    for r in records {
        text.push_str(&r.to_json());
        text.push('\n');
    }
    text
}

/// Writes `text` to `path`; an error names the flag that chose the path.
pub fn write_file(path: &std::path::Path, text: &str, flag: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{flag} {}: cannot write: {e}", path.display()))
}

/// One interval line for people (tables) on stdout.
pub fn interval_line(label: &str, row: &flushwise_sim::IntervalRow) -> String {
    format!(
        "{label}[{:>6.0}s{}] NOPM {:>7.0}  tpm {:>7.0}  reads {:>6}  async wr {:>6}  sync wr {:>5}/{:<5} ({:>5.1}%)  hit {:.4}  dirty {:>4.1}%  free {:>5}",
        row.time_s,
        if row.warmup { " warm-up" } else { "" },
        row.figures.nopm,
        row.figures.tpm_total,
        row.figures.reads,
        row.figures.async_writes,
        row.figures.sync_replacement_writes,
        row.figures.sync_recoverability_writes,
        row.figures.sync_write_pct,
        row.figures.hit_ratio,
        row.dirty_pct,
        row.free_pages
    )
}

/// The final summary of one run, for people.
/// Where the page writers' time went (`write_path` of an engine run): how
/// busy the batch writers were and each phase's share, µs per page.
pub fn write_path_text(w: &WritePathFigures) -> String {
    if w.batch_pages == 0 {
        return format!(
            "page writes: no batch writes; {} single-page flushes (mean {:.0} us)",
            w.single_pages, w.single_page_us_mean
        );
    }
    let phases: Vec<String> = w
        .phase_us_per_page
        .iter()
        .filter(|(_, us)| *us >= 0.05)
        .map(|(name, us)| format!("{name} {us:.1}"))
        .collect();
    let polls = match (w.cleaner_polls_per_s, w.cleaner_poll_us_mean) {
        (Some(per_s), Some(us)) => format!(
            "; cleaner decided {per_s:.0} times a second, {us:.1} us each under the core mutex ({:.1}% of the time)",
            per_s * us / 1e4
        ),
        _ => String::new(),
    };
    format!(
        "page writes: {} batches of {:.0} pages, writers busy {:.0}% of the window, {:.1} us/page ({}); {} single-page flushes (mean {:.0} us){polls}",
        w.batches,
        w.batch_pages as f64 / w.batches.max(1) as f64,
        100.0 * w.batch_busy_share,
        w.batch_us_per_page,
        phases.join(", "),
        w.single_pages,
        w.single_page_us_mean
    )
}

pub fn engine_summary_text(r: &RunResult) -> String {
    let f = &r.figures;
    let mut text = String::new();
    let mut kv: Vec<(&str, String)> = Vec::new();
    if r.partial {
        kv.push((
            "partial result",
            format!(
                "interrupted after {:.0} s of warm-up and {:.0} s measured: the figures cover only that",
                r.warmup_seconds, r.measured_seconds
            ),
        ));
    }
    kv.extend([
        ("policy", r.policy.clone()),
        ("device", r.device.clone()),
        (
            "warehouses / connections",
            format!("{} / {}", r.warehouses, r.connections),
        ),
        ("NOPM", format!("{:.0}", f.nopm)),
        ("tpm_total", format!("{:.0}", f.tpm_total)),
        (
            "transactions / rollbacks / retries",
            format!("{} / {} / {}", r.transactions, r.rollbacks, r.retries),
        ),
    ]);
    kv.extend(flushing_rows(r));
    kv.push((
        "warm-up / measured / wall",
        format!(
            "{:.0} s / {:.0} s / {:.0} s",
            r.warmup_seconds, r.measured_seconds, r.wall_seconds
        ),
    ));
    if let Some(n) = r.trace_records {
        kv.push(("trace records", n.to_string()));
    }
    if let Some(w) = &r.write_path {
        kv.push(("write path", write_path_text(w)));
    }
    if let Some(s) = &r.read_split {
        kv.push((
            "page reads (sampled)",
            format!(
                "{} reads, {:.0} us each: device {:.0}, waiting for a core {:.0}, on a core {:.0}",
                s.sampled_reads, s.latency_us_mean, s.device_us_mean, s.core_wait_us_mean, s.on_cpu_us_mean
            ),
        ));
    }
    text.push_str(&key_value_text(&kv));
    if !r.latency.is_empty() {
        text.push('\n');
        text.push_str(&latency_table(&r.latency));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_objects_spreads_nested_objects_into_columns() {
        let record = serde_json::json!({
            "label": "open-30",
            "response": {"p50_s": 0.5, "max_s": 1.5},
            "rate_per_s": null,
            "dir": "{not json}",
        });
        let cells = flatten_objects(&record);
        let get = |k: &str| cells.iter().find(|(c, _)| c == k).map(|(_, v)| v.as_str());
        assert_eq!(get("label"), Some("open-30"));
        assert_eq!(get("response_p50_s"), Some("0.5"));
        assert_eq!(get("response_max_s"), Some("1.5"));
        assert_eq!(get("rate_per_s"), Some(""));
        assert_eq!(get("dir"), Some("{not json}"));
        let json_cells = cells
            .iter()
            .filter(|(_, v)| matches!(serde_json::from_str::<Value>(v), Ok(Value::Object(_))))
            .count();
        assert_eq!(json_cells, 0, "{cells:?}");
    }

    #[test]
    fn an_engine_runs_write_path_becomes_columns_and_a_line() {
        let w = WritePathFigures {
            batches: 10,
            batch_pages: 520,
            batch_busy_share: 0.84,
            batch_us_per_page: 91.0,
            phase_us_per_page: vec![("in_place_write".into(), 57.3), ("complete".into(), 0.01)],
            single_pages: 8,
            single_page_us_mean: 1472.0,
            cleaner_polls_per_s: Some(250.0),
            cleaner_poll_us_mean: Some(12.5),
        };
        let engine = RunResult {
            write_path: Some(w.clone()),
            ..RunResult::default()
        };
        let cells = flatten(&engine);
        let get = |k: &str| cells.iter().find(|(c, _)| c == k).map(|(_, v)| v.as_str());
        assert_eq!(get("write_path_batch_pages"), Some("520"));
        assert_eq!(get("write_path_in_place_write_us_per_page"), Some("57.3"));
        assert_eq!(get("write_path"), None, "no JSON cell: {cells:?}");
        // The simulator has none: no column at all.
        let sim = flatten(&RunResult::default());
        assert!(!sim.iter().any(|(c, _)| c.starts_with("write_path")), "{sim:?}");
        let line = write_path_text(&w);
        assert!(
            line.contains("10 batches of 52 pages") && line.contains("busy 84%"),
            "{line}"
        );
        assert!(
            line.contains("in_place_write 57.3") && !line.contains("complete"),
            "{line}"
        );
        assert_eq!(get("write_path_cleaner_poll_us_mean"), Some("12.5"));
        assert!(
            line.contains("decided 250 times a second, 12.5 us each") && line.contains("(0.3% of the time)"),
            "{line}"
        );
    }
}
