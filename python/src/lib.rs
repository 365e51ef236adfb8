//! `flushwise._native`: the Python package's extension module (PyO3).
//!
//! A narrow, text-shaped boundary: options arrive as JSON objects whose
//! keys are the command line's option names (`buffer_pool`, `warmup`, ...)
//! and are read by the same Rust types the command line fills
//! ([`SimOptions`], the lab's engine settings), so a configuration means
//! the same and hashes the same from Python; results leave as the command
//! line's `--output json` lines ([`render::json_lines`]) and sweeps' rows
//! as the lab's CSV cells. The pure-Python layer (`python/flushwise/`)
//! turns those into dicts and pandas DataFrames.
//!
//! Every run releases the GIL (`Python::detach`), so Python threads (and
//! Ray's workers) run simulations in parallel. Every error is a
//! `ValueError` carrying the Rust message, which names the option (as its
//! command-line flag) and what is accepted.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::Deserialize;
use serde_json::{json, Value};

use flushwise_core::params::ParamType;
use flushwise_core::policy::{PolicySpec, DEFAULT_POLICY, REGISTRY};
use flushwise_core::PageId;
use flushwise_lab::engine_options::{self, DbLocation, EngineSettings, PrepareSpec, RunFiles};
use flushwise_lab::render;
use flushwise_lab::sim_runner::{self as runner, RunOutput};
use flushwise_lab::{sweep, COMMIT};
use flushwise_sim::SimOptions;
use flushwise_tpcc_model::{TpccModel, TpccModelConfig, TpccRefGen};
use flushwise_trace::{LatchMode, TraceEvent, TraceHeader, TraceReader, TraceRecord, TraceWriter, TxnType};

fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// Reads a JSON object of options into `T`; an unknown key or a wrong type
/// is an error naming it.
fn from_json<T: for<'de> Deserialize<'de>>(what: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| {
        // The position in the JSON text the package made means nothing to
        // the caller: keep the message.
        let message = e.to_string();
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
        format!("{what}: {message}")
    })
}

/// The runs' `--output json` lines (intervals, then the result, per run).
fn json_lines(outputs: &[RunOutput]) -> Result<String, String> {
    render::json_lines(outputs.iter().map(|o| (&o.result, o.rows.as_slice())))
}

/// One simulator run of `options` (a JSON object of `sim run` options,
/// `policy` included); returns its `--output json` lines.
#[pyfunction]
fn sim_run(py: Python<'_>, options: &str) -> PyResult<String> {
    py.detach(|| {
        let options: SimOptions = from_json("config", options)?;
        let config = options.to_config()?;
        let out = runner::run_one(config, None)?;
        json_lines(std::slice::from_ref(&out))
    })
    .map_err(value_error)
}

/// The same run under each of `policies`, on up to `jobs` threads; the
/// runs' `--output json` lines in the order of `policies`.
#[pyfunction]
fn sim_compare(py: Python<'_>, options: &str, policies: Vec<String>, jobs: usize) -> PyResult<String> {
    py.detach(|| {
        let options: SimOptions = from_json("config", options)?;
        if policies.is_empty() {
            return Err("policies: give at least one policy".to_string());
        }
        let configs = policies
            .iter()
            .map(|p| {
                let spec = PolicySpec::parse(p).map_err(|e| format!("policies: {p}: {e}"))?;
                options.to_config_with(spec).map(|c| (p.clone(), c))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let outputs = runner::run_many(configs, jobs.max(1))
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        json_lines(&outputs)
    })
    .map_err(value_error)
}

/// A comma-separated policy list as the command line reads it
/// (`db2:cleaners=50,softmax_pct=20,mysql56` is two policies).
#[pyfunction]
fn parse_policy_list(text: &str) -> PyResult<Vec<String>> {
    PolicySpec::parse_list(text)
        .map(|specs| specs.iter().map(ToString::to_string).collect())
        .map_err(value_error)
}

/// Every registered policy and its declared parameters, as JSON.
#[pyfunction]
fn policies() -> String {
    let entries: Vec<Value> = REGISTRY
        .iter()
        .map(|e| {
            let params: Vec<Value> = e
                .params
                .iter()
                .flat_map(|g| g.iter())
                .map(|d| {
                    let kind = match d.ty {
                        ParamType::Int { .. } => "int",
                        ParamType::Float { .. } => "float",
                        ParamType::Choice(_) => "choice",
                        ParamType::ChoiceOrInt { .. } => "choice_or_int",
                    };
                    json!({
                        "key": d.key,
                        "type": kind,
                        "default": d.default.to_string(),
                        "accepted": d.accepted(),
                        "doc": d.doc,
                    })
                })
                .collect();
            json!({"name": e.name, "about": e.about, "default": e.name == DEFAULT_POLICY, "params": params})
        })
        .collect();
    Value::Array(entries).to_string()
}

/// The runs of a sweep grid (JSON), each its options as a JSON object.
#[pyfunction]
fn sweep_expand(grid: &str) -> PyResult<String> {
    let runs = sweep::parse(grid).map_err(value_error)?;
    serde_json::to_string(&runs).map_err(|e| value_error(format!("grid: {e}")))
}

/// Runs run `index` of a sweep (its options as JSON); its row as JSON
/// `[[column, cell], ...]`.
#[pyfunction]
fn sweep_row(py: Python<'_>, index: usize, options: &str) -> PyResult<String> {
    py.detach(|| {
        let options: SimOptions = from_json("grid run", options)?;
        let row = sweep::row(index, &options)?;
        serde_json::to_string(&row).map_err(|e| format!("grid run {index}: {e}"))
    })
    .map_err(value_error)
}

/// Rows (JSON `[[[column, cell], ...], ...]`) as the lab's CSV table.
#[pyfunction]
fn sweep_table(rows: &str) -> PyResult<String> {
    let rows: Vec<Vec<(String, String)>> = from_json("rows", rows).map_err(value_error)?;
    Ok(sweep::table(&rows))
}

/// A whole sweep grid (JSON) on up to `jobs` threads, as `flushwise sim
/// sweep` runs it; its CSV table.
#[pyfunction]
fn sweep_run(py: Python<'_>, grid: &str, jobs: usize) -> PyResult<String> {
    py.detach(|| {
        let runs = sweep::parse(grid)?;
        sweep::run(&runs, jobs.max(1), |_, _| {})
    })
    .map_err(value_error)
}

/// Column arrays of a trace, as little-endian bytes.
#[derive(Default)]
struct TraceColumns {
    agent: Vec<u8>,
    event: Vec<u8>,
    space: Vec<u8>,
    page_no: Vec<u8>,
    exclusive: Vec<u8>,
    modified: Vec<u8>,
    redo_bytes: Vec<u8>,
    txn_type: Vec<u8>,
}

/// `txn_type` of a record that is not a transaction boundary.
const NO_TXN_TYPE: u8 = 254;

impl TraceColumns {
    fn push(&mut self, r: &TraceRecord) {
        let (event, page, latch, modified, redo, txn) = match r.event {
            TraceEvent::Fix { page, latch } => (0u8, page, latch, false, 0u32, NO_TXN_TYPE),
            TraceEvent::Unfix {
                page,
                latch,
                modified,
                redo_bytes,
            } => (1, page, latch, modified, redo_bytes, NO_TXN_TYPE),
            TraceEvent::TxnBegin { txn_type } => (2, PageId::default(), LatchMode::Shared, false, 0, txn_type.code()),
            TraceEvent::TxnCommit { txn_type } => (3, PageId::default(), LatchMode::Shared, false, 0, txn_type.code()),
            TraceEvent::TxnRollback { txn_type } => {
                (4, PageId::default(), LatchMode::Shared, false, 0, txn_type.code())
            }
        };
        self.agent.extend_from_slice(&r.agent.to_le_bytes());
        self.event.push(event);
        self.space.extend_from_slice(&page.space.to_le_bytes());
        self.page_no.extend_from_slice(&page.page_no.to_le_bytes());
        self.exclusive.push(u8::from(latch == LatchMode::Exclusive));
        self.modified.push(u8::from(modified));
        self.redo_bytes.extend_from_slice(&redo.to_le_bytes());
        self.txn_type.push(txn);
    }
}

/// Reads a trace file end to end (at most `limit` records): its header as
/// JSON and its columns as bytes (agent u32, event u8, space u32, page_no
/// u32, exclusive u8, modified u8, redo_bytes u32, txn_type u8; 254 for
/// page records). A damaged or truncated trace is an error naming the
/// offset.
#[pyfunction]
#[pyo3(signature = (path, limit=None))]
fn trace_read<'py>(py: Python<'py>, path: PathBuf, limit: Option<u64>) -> PyResult<(String, Vec<Bound<'py, PyBytes>>)> {
    let (header, columns) = py
        .detach(|| -> Result<(String, TraceColumns), String> {
            let file = File::open(&path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
            let mut reader = TraceReader::new(BufReader::with_capacity(1 << 20, file))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let header = json!({
                "page_size_bytes": reader.header().page_size_bytes,
                "flags": reader.header().flags,
                "description": reader.header().description,
            })
            .to_string();
            let mut columns = TraceColumns::default();
            let limit = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
            for record in reader.by_ref().take(limit) {
                columns.push(&record.map_err(|e| format!("{}: {e}", path.display()))?);
            }
            Ok((header, columns))
        })
        .map_err(value_error)?;
    let c = columns;
    let arrays = [
        c.agent,
        c.event,
        c.space,
        c.page_no,
        c.exclusive,
        c.modified,
        c.redo_bytes,
        c.txn_type,
    ]
    .iter()
    .map(|bytes| PyBytes::new(py, bytes))
    .collect();
    Ok((header, arrays))
}

/// Little-endian u32 values of a column, checked against `n` rows.
fn u32s(name: &str, bytes: &[u8], n: usize) -> Result<Vec<u32>, String> {
    if bytes.len() != n * 4 {
        return Err(format!("column {name}: {} bytes for {n} rows of u32", bytes.len()));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Writes a trace from columns laid out as [`trace_read`] returns them;
/// every record is validated before it is written. Returns the records
/// written.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn trace_write(
    py: Python<'_>,
    path: PathBuf,
    page_size_bytes: u32,
    description: String,
    agent: &[u8],
    event: &[u8],
    space: &[u8],
    page_no: &[u8],
    exclusive: &[u8],
    modified: &[u8],
    redo_bytes: &[u8],
    txn_type: &[u8],
) -> PyResult<u64> {
    py.detach(|| -> Result<u64, String> {
        let n = event.len();
        let agent = u32s("agent", agent, n)?;
        let space = u32s("space", space, n)?;
        let page_no = u32s("page_no", page_no, n)?;
        let redo = u32s("redo_bytes", redo_bytes, n)?;
        for (name, column) in [("exclusive", exclusive), ("modified", modified), ("txn_type", txn_type)] {
            if column.len() != n {
                return Err(format!("column {name}: {} values for {n} rows", column.len()));
            }
        }
        let file = File::create(&path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        let header = TraceHeader::new(page_size_bytes, description);
        let write_err = |e: flushwise_trace::TraceError| format!("{}: {e}", path.display());
        let mut writer = TraceWriter::new(BufWriter::with_capacity(1 << 20, file), &header).map_err(write_err)?;
        for i in 0..n {
            let page = PageId::new(space[i], page_no[i]);
            let latch = if exclusive[i] != 0 {
                LatchMode::Exclusive
            } else {
                LatchMode::Shared
            };
            let txn = || {
                TxnType::from_code(txn_type[i]).ok_or_else(|| {
                    format!(
                        "row {i}: txn_type {}: accepted are 0-4 (TPC-C types) and 255 (other)",
                        txn_type[i]
                    )
                })
            };
            let record = match event[i] {
                0 => TraceRecord::fix(agent[i], page, latch),
                1 => TraceRecord::unfix(agent[i], page, latch, modified[i] != 0, redo[i]),
                2 => TraceRecord::txn_begin(agent[i], txn()?),
                3 => TraceRecord::txn_commit(agent[i], txn()?),
                4 => TraceRecord::txn_rollback(agent[i], txn()?),
                other => return Err(format!("row {i}: event code {other}: accepted are 0-4")),
            };
            record.validate().map_err(|e| format!("row {i}: {e}"))?;
            writer.write(&record).map_err(write_err)?;
        }
        let written = writer.records_written();
        writer.finish().map_err(write_err)?;
        Ok(written)
    })
    .map_err(value_error)
}

/// Writes a TPC-C model trace, as `flushwise trace record-model` does;
/// returns the records written.
#[pyfunction]
fn trace_record_model(
    py: Python<'_>,
    path: PathBuf,
    warehouses: u32,
    connections: u32,
    transactions: u64,
    seed: u64,
    page_size: &str,
) -> PyResult<u64> {
    py.detach(|| -> Result<u64, String> {
        if connections == 0 {
            return Err("--connections 0: at least one connection is needed".into());
        }
        if transactions == 0 {
            return Err("--transactions 0: at least one transaction is needed".into());
        }
        let page_size_bytes = flushwise_sim::options::page_size_flag(page_size)?;
        let model = TpccModel::new(TpccModelConfig {
            warehouses,
            page_size_bytes,
            seed,
            ..TpccModelConfig::default()
        })
        .map_err(|e| format!("--warehouses {warehouses} / --page-size {page_size}: {e}"))?;
        let description = format!(
            "tpcc-model warehouses={warehouses} connections={connections} transactions={transactions} seed={seed} page_size={page_size_bytes} commit={COMMIT}"
        );
        let file = File::create(&path).map_err(|e| format!("--out {}: cannot create: {e}", path.display()))?;
        let out_err = |e: flushwise_trace::TraceError| format!("--out {}: {e}", path.display());
        let mut writer = TraceWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            &TraceHeader::new(page_size_bytes, description),
        )
        .map_err(out_err)?;
        for record in TpccRefGen::new(model, connections, transactions) {
            writer.write(&record).map_err(out_err)?;
        }
        let records = writer.records_written();
        writer.finish().map_err(out_err)?;
        Ok(records)
    })
    .map_err(value_error)
}

/// `tpcc prepare`'s options.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PrepareOptions {
    dir: PathBuf,
    #[serde(default)]
    redo_dir: Option<PathBuf>,
    io: String,
    warehouses: u32,
    threads: Option<usize>,
    seed: u64,
    page_size: String,
    redo: String,
    buffer_pool: String,
    force: bool,
}

/// Creates a database in `dir` and loads TPC-C, as `flushwise tpcc
/// prepare` does; returns its one-line summary.
#[pyfunction]
fn tpcc_prepare(py: Python<'_>, options: &str) -> PyResult<String> {
    py.detach(|| {
        let o: PrepareOptions = from_json("tpcc_prepare", options)?;
        let location = DbLocation {
            dir: o.dir,
            redo_dir: o.redo_dir,
            io: o.io,
        };
        let spec = PrepareSpec {
            warehouses: o.warehouses,
            threads: o.threads.unwrap_or_else(runner::default_jobs).max(1),
            seed: o.seed,
            page_size: &o.page_size,
            redo: &o.redo,
            buffer_pool: &o.buffer_pool,
            force: o.force,
        };
        engine_options::prepare_database(&location, &spec).map(|(_, summary)| summary)
    })
    .map_err(value_error)
}

/// `tpcc run`'s options.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunOptions {
    dir: PathBuf,
    redo_dir: Option<PathBuf>,
    io: String,
    policy: String,
    connections: u32,
    buffer_pool: String,
    redo: Option<String>,
    device: Vec<String>,
    doublewrite: bool,
    flush_log_at_commit: u8,
    warmup: String,
    duration: String,
    report_interval: String,
    seed: u64,
    keying_think: bool,
    max_recovery_time: Option<String>,
    trace: Option<PathBuf>,
    decisions: Option<PathBuf>,
}

/// One TPC-C run on the real engine in a prepared `dir`, as `flushwise
/// tpcc run` does it; returns its `--output json` lines.
#[pyfunction]
fn tpcc_run(py: Python<'_>, options: &str) -> PyResult<String> {
    py.detach(|| {
        let o: RunOptions = from_json("tpcc_run", options)?;
        let policy = PolicySpec::parse(&o.policy).map_err(|e| format!("--policy {}: {e}", o.policy))?;
        let location = DbLocation {
            dir: o.dir,
            redo_dir: o.redo_dir,
            io: o.io,
        };
        let settings = EngineSettings {
            connections: o.connections,
            buffer_pool: o.buffer_pool,
            redo: o.redo,
            device: o.device,
            doublewrite: o.doublewrite,
            flush_log_at_commit: o.flush_log_at_commit,
            warmup: o.warmup,
            duration: o.duration,
            report_interval: o.report_interval,
            seed: o.seed,
            keying_think: o.keying_think,
            max_recovery_time: o.max_recovery_time,
        };
        let files = RunFiles {
            trace: o.trace,
            decisions: o.decisions,
        };
        let out = engine_options::run_tpcc(&location, &settings, &policy, &files, None, |_| {})?;
        render::json_lines([(&out.result, out.rows.as_slice())])
    })
    .map_err(value_error)
}

/// The extension module: the functions above, `COMMIT` (the git commit
/// every result carries) and `DEFAULT_POLICY`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("COMMIT", COMMIT)?;
    m.add("DEFAULT_POLICY", DEFAULT_POLICY)?;
    m.add(
        "SIM_DEFAULTS",
        serde_json::to_string(&SimOptions::default()).unwrap_or_default(),
    )?;
    m.add("WALL_CLOCK_COLUMNS", sweep::WALL_CLOCK_COLUMNS.to_vec())?;
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_compare, m)?)?;
    m.add_function(wrap_pyfunction!(parse_policy_list, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_expand, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_row, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run, m)?)?;
    m.add_function(wrap_pyfunction!(trace_read, m)?)?;
    m.add_function(wrap_pyfunction!(trace_write, m)?)?;
    m.add_function(wrap_pyfunction!(trace_record_model, m)?)?;
    m.add_function(wrap_pyfunction!(tpcc_prepare, m)?)?;
    m.add_function(wrap_pyfunction!(tpcc_run, m)?)?;
    Ok(())
}
