//! Scenarios for `flushwise trace ...` and replaying a recorded trace in
//! the simulator, against the built binary.

mod common;

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

fn flushwise(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the flushwise binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Records a small model trace: 2 warehouses, 4 agents, `transactions`.
fn record(path: &Path, transactions: &str) {
    let p = path.to_string_lossy();
    let o = flushwise(&[
        "trace",
        "record-model",
        "--warehouses",
        "2",
        "--connections",
        "4",
        "--transactions",
        transactions,
        "--seed",
        "3",
        "--out",
        &p,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn recorded_model_trace_replays_in_sim() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("model.fwt");
    record(&trace, "3000");
    let p = trace.to_string_lossy().into_owned();

    let info = flushwise(&["trace", "info", &p]);
    assert!(info.status.success(), "{}", stderr(&info));
    let text = stdout(&info);
    assert!(text.contains("agents") && text.contains(" 4\n"), "{text}");
    assert!(text.contains("warehouses=2"), "{text}");

    let o = flushwise(&[
        "sim",
        "run",
        "--workload",
        "trace",
        "--trace",
        &p,
        "--buffer-pool",
        "1MiB",
        "--redo",
        "64MiB",
        "--warmup",
        "0s",
        "--duration",
        "10s",
        "--output",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = common::result(&stdout(&o));
    assert_eq!(v["connections"], 4, "a trace brings its own agents");
    assert!(v["requests"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(v["transactions"].as_u64().unwrap_or(0) > 0, "{v}");
}

#[test]
fn truncated_trace_reports_byte_offset() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("cut.fwt");
    record(&trace, "500");
    let bytes = std::fs::read(&trace).expect("trace bytes");
    let cut = bytes.len() * 2 / 3;
    std::fs::write(&trace, &bytes[..cut]).expect("truncate");
    let p = trace.to_string_lossy().into_owned();

    let o = flushwise(&["trace", "info", &p]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: ") && err.contains("byte offset"), "{err}");
    assert!(err.contains("truncated"), "{err}");
    assert!(stdout(&o).is_empty(), "no summary of a damaged trace: {}", stdout(&o));

    // The simulator refuses it the same way.
    let o = flushwise(&[
        "sim",
        "run",
        "--workload",
        "trace",
        "--trace",
        &p,
        "--buffer-pool",
        "1MiB",
        "--redo",
        "64MiB",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("byte offset"), "{}", stderr(&o));
}

#[test]
fn corrupt_trace_reports_byte_offset() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("flip.fwt");
    record(&trace, "200");
    let mut bytes = std::fs::read(&trace).expect("trace bytes");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&trace, &bytes).expect("corrupt");
    let o = flushwise(&["trace", "info", &trace.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("byte offset"), "{}", stderr(&o));
}

#[test]
fn oracle_general_export_has_one_record_per_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("model.fwt");
    let out = dir.path().join("model.oracleGeneral.bin");
    record(&trace, "200");
    let info = stdout(&flushwise(&["trace", "info", &trace.to_string_lossy()]));
    let fixes: u64 = info
        .lines()
        .find(|l| l.starts_with("fixes"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fixes line in {info}"));
    let o = flushwise(&[
        "trace",
        "oracle-general",
        &trace.to_string_lossy(),
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let len = std::fs::metadata(&out).expect("export written").len();
    assert_eq!(len, fixes * 24, "24-byte records, one per fix");
}
