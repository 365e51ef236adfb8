//! Scenarios for `flushwise torture` (power cut at 300 sync points, the
//! number CI runs) and `flushwise ioerr-sweep`, against the built binary:
//! stdout carries only the JSON or CSV asked for, nothing acknowledged is
//! lost, and bad input is refused with a message naming it.

use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

fn flushwise(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run flushwise")
}

#[test]
fn torture_at_300_crash_points_loses_no_acknowledged_commit() {
    let out = flushwise(&["torture", "--crash-points", "300", "--seed", "7", "--output", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\n{stderr}", out.status);
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(r["crash_points"], 300);
    let trials = |w: &str| r[format!("{w}_trials")].as_u64().unwrap();
    assert_eq!(trials("bank") + trials("tpcc") + trials("secondary"), 300);
    assert!(trials("tpcc") >= 70 && trials("secondary") >= 70, "{r}");
    assert!(r["recoveries"].as_u64().unwrap() >= 300, "{r}");
    for zero in [
        "lost_commits",
        "uncommitted_effects",
        "broken_invariants",
        "recovery_errors",
        "failures_total",
    ] {
        assert_eq!(r[zero], 0, "{zero}: {r}");
    }
    assert!(r["acked_commits"].as_u64().unwrap() > 1000, "{r}");
    let cuts = &r["cuts"];
    assert!(cuts["writes_torn"].as_u64().unwrap() > 0, "no write was torn: {r}");
    assert!(
        cuts["writes_dropped"].as_u64().unwrap() > 0,
        "no write was dropped: {r}"
    );
    assert!(
        r["pages_repaired_from_doublewrite"].as_u64().unwrap() > 0,
        "doublewrite never used: {r}"
    );
    // The secondary trials cut the power with buffered changes pending,
    // and recoveries found them in the change buffer.
    let cb = &r["change_buffer"];
    assert!(cb["trials_pending_at_cut"].as_u64().unwrap() > 0, "{r}");
    assert!(cb["trials_pending_at_recovery"].as_u64().unwrap() > 0, "{r}");
    assert!(cb["trials_separate_device"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(cb["merge_duplicates"], 0, "{r}");
    assert_eq!(cb["merge_missing"], 0, "{r}");
    assert!(stderr.contains("verdict") && stderr.contains("PASS"), "{stderr}");
}

#[test]
fn ioerr_sweep_csv_has_one_passing_row_per_fault() {
    let out = flushwise(&[
        "ioerr-sweep",
        "--workload",
        "bank",
        "--txns",
        "4",
        "--faults",
        "write,sync,extend",
        "--output",
        "csv",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0].starts_with("workload,fault,points,clean_at"));
    for (line, fault) in lines[1..].iter().zip(["write", "sync", "extend"]) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!((f[0], f[1]), ("bank", fault), "{line}");
        assert!(f[3].parse::<u64>().unwrap() >= 1, "never ended clean: {line}");
        // unnamed errors, lost, uncommitted, broken, reopen errors
        assert_eq!(&f[6..11], &["0"; 5], "{line}");
    }
}

#[test]
fn torture_refuses_bad_input_naming_it() {
    for (args, named) in [
        (vec!["torture", "--crash-points", "0"], "--crash-points 0"),
        (vec!["torture", "--workload", "sqlite"], "sqlite"),
        (vec!["torture", "--workload", "sqlite"], "bank, tpcc, secondary, mixed"),
        (
            vec!["torture", "--flush-log-at-trx-commit", "3"],
            "--flush-log-at-trx-commit 3",
        ),
        (vec!["ioerr-sweep", "--faults", "bitrot"], "bitrot"),
        (vec!["ioerr-sweep", "--workload", "mixed"], "one workload"),
    ] {
        let out = flushwise(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
}
