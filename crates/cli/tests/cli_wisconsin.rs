//! Scenarios for `flushwise wisconsin prepare | run | model` on the real
//! engine, against the built binary, with a 20,000-tuple relation (about
//! 8 MB) in a temporary directory:
//!
//! - a closed-loop and an open-loop run under `mysql51` (users keep 5.1's
//!   free margin) write their files and report the flush figures; `--output
//!   json` and `--output csv` keep stdout to one record, CSV with one
//!   column per field (no JSON in a cell);
//! - `model` fits 003's model to those runs and prints Table 1;
//! - bad input gets one clear line naming the flag.

mod common;

use std::path::Path;

use common::{flushwise, ok, text};
use serde_json::Value;

fn prepare(dir: &Path) {
    let out = ok(&flushwise(&[
        "wisconsin",
        "prepare",
        "--dir",
        dir.to_str().unwrap(),
        "--tuples",
        "20000",
        "--redo",
        "16MiB",
    ]));
    assert!(out.contains("20000 tuples"), "{out}");
}

fn run(dir: &Path, out_dir: &Path, load: &[&str], output: &str) -> String {
    let mut args = vec![
        "wisconsin",
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--policy",
        "mysql51",
        "--buffer-pool",
        "4MiB",
        "--warmup",
        "0s",
        "--duration",
        "2s",
        "--sample-interval",
        "100ms",
        "--output",
        output,
    ];
    args.extend_from_slice(load);
    ok(&flushwise(&args))
}

#[test]
fn closed_and_open_runs_under_mysql51_then_the_model_fitted_to_them() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let runs = root.path().join("runs");
    prepare(&dir);

    let stdout = run(&dir, &runs, &["--jobs", "8"], "json");
    assert_eq!(stdout.lines().count(), 1, "one JSON record: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["policy"].as_str(), Some("mysql51"));
    assert_eq!(v["label"].as_str(), Some("closed-8"));
    assert!(v["completed"].as_u64().unwrap() > 0, "{v}");
    for field in [
        "reads",
        "flush_list_pages",
        "sync_replacement_writes",
        "wait_free",
        "user_stall_s",
    ] {
        assert!(!v["flush"][field].is_null(), "flush.{field} missing in {v}");
    }
    for field in ["seed", "config_hash", "commit", "db_run"] {
        assert!(!v[field].is_null(), "{field} missing in {v}");
    }
    for file in ["run.json", "requests.csv", "series.csv", "cdf.csv", "figure.svg"] {
        assert!(runs.join("closed-8").join(file).is_file(), "closed-8/{file}");
    }

    let csv = run(&dir, &runs, &["--rate", "200"], "csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "header and one row: {csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for column in ["label", "rate_per_s", "response_p99_s", "flush_sync_replacement_writes"] {
        assert!(header.contains(&column), "{column} in {header:?}");
    }
    assert!(!lines[1].contains('{'), "no JSON in a cell: {}", lines[1]);
    assert!(runs.join("open-200").join("run.json").is_file());

    let table = ok(&flushwise(&["wisconsin", "model", "--runs", runs.to_str().unwrap()]));
    assert!(table.contains("Table 1"), "{table}");
    assert!(table.contains("DPBmax"), "{table}");
    assert!(runs.join("model").join("model.json").is_file());
}

#[test]
fn bad_wisconsin_input_is_refused_naming_the_flag() {
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("none");
    let d = d.to_str().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let o = flushwise(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: stdout stays empty");
    };
    refused(
        &["wisconsin", "run", "--dir", d, "--rate", "5", "--jobs", "2"],
        "cannot be used with",
    );
    refused(&["wisconsin", "run", "--dir", d, "--rate", "0"], "--rate 0");
    refused(&["wisconsin", "run", "--dir", d], "--rate LAMBDA");
    refused(&["wisconsin", "prepare", "--dir", d, "--tuples", "0"], "--tuples 0");
}
