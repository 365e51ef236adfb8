//! Scenarios for `flushwise insert prepare | run | check` (paper 004's
//! insert load) on the real engine, against the built binary, with a
//! 5,000-row table in a temporary directory and the smallest pool an
//! engine run accepts (256 pages of 16 KiB):
//!
//! - a run with `--output json` keeps stdout to one record carrying
//!   Table 1's figures, Table 2's page reads and writes by type, the
//!   change-buffer counters, latency, seed, configuration hash and commit;
//! - a run with `--change-buffer on --output csv` keeps stdout to a header
//!   and one row, one column per field;
//! - a run with `--update-pct 50` counts its updates and its buffered
//!   deletes, and `run --check` finds every moved entry under its row's
//!   new key;
//! - `insert check` (and `run --check`) pass after the runs: every
//!   secondary entry matches its row;
//! - bad input gets one clear line naming the flag and exit 2.

mod common;

use std::path::Path;

use common::{flushwise, ok, text};
use serde_json::Value;

fn prepare(dir: &Path) {
    let out = ok(&flushwise(&[
        "insert",
        "prepare",
        "--dir",
        dir.to_str().unwrap(),
        "--rows",
        "5000",
        "--redo",
        "16MiB",
        "--io",
        "buffered",
    ]));
    assert!(out.contains("5000 rows and 3 secondary indexes"), "{out}");
}

fn run(dir: &Path, duration: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "insert",
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--io",
        "buffered",
        "--buffer-pool",
        "4MiB",
        "--threads",
        "4",
        "--warmup",
        "0s",
        "--duration",
        duration,
        "--report-interval",
        "1s",
    ];
    args.extend_from_slice(extra);
    ok(&flushwise(&args))
}

#[test]
fn json_and_csv_runs_report_tables_1_and_2_and_the_table_stays_consistent() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    prepare(&dir);

    let stdout = run(&dir, "3s", &["--output", "json"]);
    assert_eq!(stdout.lines().count(), 1, "one JSON record: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["kind"].as_str(), Some("insert-result"));
    assert_eq!(v["change_buffer"].as_str(), Some("off"));
    assert_eq!(v["rows_loaded"].as_u64(), Some(5000));
    assert_eq!(v["first_id"].as_u64(), Some(5001));
    assert!(v["transactions"].as_u64().unwrap() > 0, "{v}");
    assert!(v["transactions_per_s"].as_f64().unwrap() > 0.0, "{v}");
    for field in [
        "page_io_per_s",
        "reads_per_s",
        "writes_per_s",
        "seed",
        "config_hash",
        "commit",
        "measured_s",
    ] {
        assert!(!v[field].is_null(), "{field} missing in {v}");
    }
    for field in ["p50_us", "p95_us", "p99_us", "max_us"] {
        assert!(v["latency"][field].as_u64().is_some(), "latency.{field} missing in {v}");
    }
    for field in [
        "index_reads",
        "index_writes",
        "change_buffer_reads",
        "change_buffer_writes",
    ] {
        assert!(v["page_io"][field].as_u64().is_some(), "page_io.{field} missing in {v}");
    }
    for field in ["buffered_inserts", "merged_entries", "pending_pages", "pending_bytes"] {
        assert!(
            v["change_buffer_stats"][field].as_u64().is_some(),
            "change_buffer_stats.{field} missing in {v}"
        );
    }
    for field in ["sync_write_pct", "user_stalls", "user_stall_us"] {
        assert!(!v["flush"][field].is_null(), "flush.{field} missing in {v}");
    }
    // With the change buffer off, no change-buffer page moves.
    assert_eq!(v["page_io"]["change_buffer_reads"].as_u64(), Some(0));
    assert_eq!(v["page_io"]["change_buffer_writes"].as_u64(), Some(0));
    let inserted = v["rows_inserted"].as_u64().unwrap();

    let csv = run(&dir, "2s", &["--change-buffer", "on", "--output", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "header and one row: {csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), row.len(), "{csv}");
    for column in [
        "transactions_per_s",
        "page_io_per_s",
        "latency_p99_us",
        "page_io_index_reads",
        "page_io_change_buffer_writes",
        "change_buffer_stats_buffered_inserts",
        "flush_sync_write_pct",
        "config_hash",
        "commit",
    ] {
        assert!(header.contains(&column), "{column} in {header:?}");
    }
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cell("change_buffer"), "on");
    // The second run starts past every row of the first.
    assert_eq!(cell("first_id").parse::<u64>().unwrap(), 5001 + inserted);
    assert!(!lines[1].contains('{'), "no JSON in a cell: {}", lines[1]);

    let mixed = run(
        &dir,
        "2s",
        &[
            "--change-buffer",
            "on",
            "--update-pct",
            "50",
            "--check",
            "--output",
            "json",
        ],
    );
    let m: Value = serde_json::from_str(mixed.trim()).unwrap();
    let (txns, updates) = (m["transactions"].as_u64().unwrap(), m["updates"].as_u64().unwrap());
    assert!(updates > 0 && updates < txns, "a mix of updates and inserts: {m}");
    assert_eq!(m["update_pct"].as_u64(), Some(50));
    assert!(m["change_buffer_stats"]["buffered_deletes"].as_u64().is_some(), "{m}");
    assert_eq!(m["change_buffer_stats"]["merge_missing"].as_u64(), Some(0), "{m}");
    assert!(
        m["consistency"]
            .as_str()
            .unwrap_or("")
            .contains("every entry matches its row"),
        "{m}"
    );

    let verdict = ok(&flushwise(&[
        "insert",
        "check",
        "--dir",
        dir.to_str().unwrap(),
        "--io",
        "buffered",
    ]));
    assert!(verdict.contains("every entry matches its row"), "{verdict}");

    let table = run(&dir, "1s", &["--check"]);
    assert!(table.contains("Table 1") && table.contains("Table 2"), "{table}");
    assert!(table.contains("IBUF_INDEX"), "{table}");
    assert!(table.contains("every entry matches its row"), "{table}");
}

#[test]
fn bad_insert_input_is_refused_naming_the_flag() {
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
        &["insert", "run", "--dir", d, "--change-buffer", "foo"],
        "--change-buffer foo: unknown change-buffer mode",
    );
    refused(
        &[
            "insert",
            "run",
            "--dir",
            d,
            "--change-buffer",
            "on",
            "--change-buffer-max-pct",
            "0",
        ],
        "--change-buffer-max-pct 0",
    );
    refused(
        &[
            "insert",
            "run",
            "--dir",
            d,
            "--change-buffer-dir",
            root.path().to_str().unwrap(),
        ],
        "only with --change-buffer separate-device",
    );
    refused(&["insert", "run", "--dir", d, "--threads", "0"], "--threads 0");
    refused(
        &["insert", "run", "--dir", d, "--update-pct", "101"],
        "--update-pct 101",
    );
    refused(&["insert", "run", "--dir", d], "no prepared insert database");
    refused(&["insert", "prepare", "--dir", d, "--rows", "0"], "--rows 0");
    refused(
        &["insert", "prepare", "--dir", d, "--secondary-indexes", "17"],
        "--secondary-indexes 17",
    );
    refused(
        &["insert", "prepare", "--dir", d, "--row-bytes", "10"],
        "--row-bytes 10",
    );
    assert!(!Path::new(d).exists(), "nothing was created by refused commands");
}
