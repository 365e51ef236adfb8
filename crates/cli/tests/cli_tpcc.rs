//! Scenarios for `flushwise tpcc prepare | run | check | export` on the
//! real engine, against the built binary, with one-warehouse databases in
//! temporary directories (about 160 MB each; a load takes about a second).
//!
//! - a prepared database passes every consistency condition (11 included);
//! - a run reports the flushing figures, its trace replays in the simulator,
//!   and the database still passes afterwards; the export has nine tables;
//! - SIGKILL in the middle of runs: the database reopens, passes `check`,
//!   and holds every New-Order whose commit was acknowledged;
//! - bad input gets one clear line.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

use common::{flushwise, ok, text};

fn prepare(dir: &Path) {
    let d = dir.to_str().unwrap();
    let out = ok(&flushwise(&[
        "tpcc",
        "prepare",
        "--dir",
        d,
        "--warehouses",
        "1",
        "--redo",
        "32MiB",
    ]));
    assert!(out.contains("prepared 1 warehouses"), "{out}");
}

fn check(dir: &Path, condition_11: bool) -> String {
    let d = dir.to_str().unwrap();
    let mut args = vec!["tpcc", "check", "--dir", d];
    if condition_11 {
        args.push("--condition-11");
    }
    ok(&flushwise(&args))
}

/// (w, d, o) of every order in an export's `oorder.csv`.
fn exported_orders(csv_dir: &Path) -> HashSet<(u32, u32, u32)> {
    let text = std::fs::read_to_string(csv_dir.join("oorder.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    let (w, d, o) = (col("o_w_id"), col("o_d_id"), col("o_id"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (
                cells[w].parse().unwrap(),
                cells[d].parse().unwrap(),
                cells[o].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn prepare_run_with_trace_check_and_export_on_one_warehouse() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    prepare(&dir);
    let verdict = check(&dir, true);
    assert!(
        verdict.contains("conditions 1,2,3,4,5,6,7,8,9,10,11,12 hold"),
        "{verdict}"
    );

    // A second prepare into the same directory is refused.
    let again = flushwise(&["tpcc", "prepare", "--dir", d, "--warehouses", "1"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already here"), "{}", text(&again.stderr));

    let trace = root.path().join("run.trace");
    let out = ok(&flushwise(&[
        "tpcc",
        "run",
        "--dir",
        d,
        "--policy",
        "self-tuning",
        "--connections",
        "4",
        "--buffer-pool",
        "4MiB",
        "--warmup",
        "1s",
        "--duration",
        "3s",
        "--report-interval",
        "1s",
        "--trace",
        trace.to_str().unwrap(),
        // Prepared with 32 MiB: the run resizes the cleanly closed log.
        "--redo",
        "48MiB",
        "--output",
        "json",
    ]));
    let result = &common::result(&out);
    assert!(result["nopm"].as_f64().unwrap() > 0.0, "{result}");
    for field in [
        "tpm_total",
        "sync_write_pct",
        "sync_replacement_writes",
        "sync_recoverability_writes",
        "io_per_txn",
        "hit_ratio",
        "dirty_pct_avg",
        "seed",
        "config_hash",
        "commit",
    ] {
        assert!(!result[field].is_null(), "{field} missing in {result}");
    }
    // A 4 MiB pool over ~160 MB: pages are read from the device.
    assert!(result["reads"].as_u64().unwrap() > 0, "{result}");
    // A sample of those reads, split by the reading thread's scheduler
    // counters (issue #18): the parts add up to the sample's latency.
    // Absent only on a kernel without `/proc/thread-self/schedstat`.
    if std::path::Path::new("/proc/thread-self/schedstat").exists() {
        let split = &result["read_split"];
        assert!(split["sampled_reads"].as_u64().unwrap() > 0, "{result}");
        let part = |f: &str| split[f].as_f64().unwrap();
        assert!(part("device_us_mean") > 0.0, "{split}");
        assert!(
            part("core_wait_us_mean") >= 0.0 && part("on_cpu_us_mean") > 0.0,
            "{split}"
        );
        let sum = part("device_us_mean") + part("core_wait_us_mean") + part("on_cpu_us_mean");
        assert!((sum - part("latency_us_mean")).abs() < 1e-6 * sum.max(1.0), "{split}");
        // Measured per transaction with --trace.
        assert!(
            result["core_wait_us_per_txn"].as_f64().is_some_and(|w| w >= 0.0),
            "{result}"
        );
        assert!(
            result["core_mutex_wait_us_per_txn"].as_f64().is_some_and(|w| w >= 0.0),
            "{result}"
        );
    }
    assert_eq!(result["redo_bytes"].as_u64(), Some(48 << 20), "{result}");
    let latency = result["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 5, "{result}");
    assert!(latency
        .iter()
        .all(|l| !l["p99_us"].is_null() && !l["p999_us"].is_null()));
    let intervals = common::intervals(&out);
    assert!(intervals.iter().any(|r| r["warmup"] == true));
    assert!(intervals.iter().filter(|r| r["warmup"] == false).count() >= 3);
    let trace_records = result["trace_records"].as_u64().unwrap();
    assert!(trace_records > 1000, "{result}");

    // The recorded trace replays in the simulator.
    let replay = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "run",
            "--workload",
            "trace",
            "--trace",
            trace.to_str().unwrap(),
            "--buffer-pool",
            "4MiB",
            "--warmup",
            "0s",
            "--duration",
            "2s",
            "--output",
            "json",
        ];
        args.extend_from_slice(extra);
        common::result(&ok(&flushwise(&args)))
    };
    let sim = replay(&[]);
    assert!(sim["transactions"].as_u64().unwrap() > 0, "{sim}");
    assert!(sim["requests"].as_u64().unwrap() > 0, "{sim}");

    // Beside the trace, the user threads' CPU per transaction type over
    // the measured window (issue #18), which the replay can charge.
    let costs_path = format!("{}.cpu.json", trace.display());
    let costs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&costs_path).unwrap()).unwrap();
    assert_eq!(costs["kind"].as_str(), Some("engine-cpu-costs"), "{costs}");
    let types = costs["txn_types"].as_array().unwrap();
    assert!(
        types.iter().any(|t| t["txn_type"] == "new_order"
            && t["attempts"].as_u64().unwrap() > 0
            && t["cpu_us_mean"].as_f64().unwrap() > 0.0),
        "{costs}"
    );
    // Over the whole measured window: as many attempts as the result has
    // transactions, give or take those in flight at its ends (the tally
    // once began only after the first measured interval, and so counted
    // about a fraction (intervals - 1) / intervals of them).
    let attempts: u64 = types.iter().map(|t| t["attempts"].as_u64().unwrap()).sum();
    let transactions = result["transactions"].as_u64().unwrap();
    assert!(
        attempts as f64 >= 0.95 * transactions as f64,
        "{attempts} attempts tallied, {transactions} transactions: {costs}"
    );
    // And the time each type spent blocked on key locks (the replay models
    // no lock and holds its transactions up that long): measured for every
    // type that ran, zero or more.
    assert!(
        types
            .iter()
            .all(|t| t["lock_wait_us_mean"].as_f64().is_some_and(|w| w >= 0.0)),
        "{costs}"
    );
    // And each attempt's wall time, never below its CPU or its wait for
    // the log at commit.
    assert!(
        types.iter().all(|t| {
            let wall = t["wall_us_mean"].as_f64().unwrap();
            wall >= t["cpu_us_mean"].as_f64().unwrap() && wall >= t["commit_wait_us_mean"].as_f64().unwrap()
        }),
        "{costs}"
    );
    // Commits wait for the log's fsync (flush_log_at_trx_commit = 1), and
    // the writer times its synced writes.
    assert!(
        result["log_synced_write_us_mean"].as_f64().is_some_and(|w| w > 0.0),
        "{result}"
    );
    assert!(
        result["commit_wait_us_per_txn"].as_f64().is_some_and(|w| w > 0.0),
        "{result}"
    );
    let charged = replay(&["--cpu-costs", &costs_path, "--cpu-cores", "2"]);
    assert!(charged["transactions"].as_u64().unwrap() > 0, "{charged}");
    // The replay splits its reads the same way: device, then the agent's
    // wait for a modelled core.
    let split = &charged["read_split"];
    assert!(split["sampled_reads"].as_u64().unwrap() > 0, "{split}");
    assert!(split["device_us_mean"].as_f64().unwrap() > 0.0, "{split}");
    assert!(charged["core_wait_us_per_txn"].as_f64().is_some(), "{charged}");
    assert!(
        charged["commit_wait_us_per_txn"].as_f64().is_some_and(|w| w > 0.0),
        "{charged}"
    );
    assert!(
        charged["log_synced_write_us_mean"].as_f64().is_some_and(|w| w > 0.0),
        "{charged}"
    );
    assert_ne!(
        charged["config_hash"], sim["config_hash"],
        "the costs are part of the configuration"
    );

    let verdict = check(&dir, false);
    assert!(verdict.contains("hold"), "{verdict}");

    let csv = root.path().join("csv");
    let out = ok(&flushwise(&[
        "tpcc",
        "export",
        "--dir",
        d,
        "--out",
        csv.to_str().unwrap(),
    ]));
    for table in [
        "warehouse",
        "district",
        "customer",
        "history",
        "new_order",
        "oorder",
        "order_line",
        "item",
        "stock",
    ] {
        assert!(out.contains(table), "{out}");
        let first = std::fs::read_to_string(csv.join(format!("{table}.csv"))).unwrap();
        let header = first.lines().next().unwrap().to_string();
        assert!(
            !header.is_empty() && header == header.to_lowercase(),
            "{table}: {header}"
        );
    }
    assert!(
        exported_orders(&csv).len() > 30_000,
        "the run added orders to the 30,000 loaded"
    );
}

#[test]
fn acknowledged_new_orders_survive_sigkill_in_the_middle_of_runs() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    prepare(&dir);
    let mut acknowledged: HashSet<(u32, u32, u32)> = HashSet::new();
    // Kill once the run is under way (some New-Orders acknowledged), at a
    // different moment each round.
    for (round, extra_ms) in [0u64, 700, 1900].into_iter().enumerate() {
        let mut child = Command::new(BIN)
            .args([
                "tpcc",
                "run",
                "--dir",
                d,
                "--connections",
                "4",
                "--buffer-pool",
                "4MiB",
                "--warmup",
                "0s",
                "--duration",
                "120s",
                "--seed",
                &(round + 1).to_string(),
                "--flush-log-at-commit",
                "1",
                "--print-new-orders",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(rest) = line.strip_prefix("new-order-committed ") {
                        let v: Vec<u32> = rest.split(' ').map(|x| x.parse().unwrap()).collect();
                        seen.lock().unwrap().push((v[0], v[1], v[2]));
                    }
                }
            })
        };
        let started = Instant::now();
        while seen.lock().unwrap().len() < 20 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "round {round}: fewer than 20 New-Orders acknowledged in 60 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(extra_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let acks = seen.lock().unwrap().clone();
        acknowledged.extend(acks);
        // Reopening recovers; the consistency conditions hold.
        let verdict = check(&dir, false);
        assert!(verdict.contains("hold"), "round {round}: {verdict}");
    }
    let csv = root.path().join("csv");
    ok(&flushwise(&[
        "tpcc",
        "export",
        "--dir",
        d,
        "--out",
        csv.to_str().unwrap(),
    ]));
    let present = exported_orders(&csv);
    let missing: Vec<_> = acknowledged.iter().filter(|k| !present.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged New-Orders are missing, e.g. {:?}",
        missing.len(),
        acknowledged.len(),
        &missing[..missing.len().min(5)]
    );
}

/// `tpcc crash` under `flushwise` with a recovery bound: each round kills a
/// run with SIGKILL, reopens (crash recovery, timed) and reports the redo
/// applied; the database passes `check` afterwards. A policy that does not
/// bound recovery time is refused.
#[test]
fn sigkill_under_flushwise_recovers_within_its_bound_and_reports_the_redo_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    prepare(&dir);
    let d = dir.to_str().unwrap();
    let out = ok(&flushwise(&[
        "tpcc",
        "crash",
        "--dir",
        d,
        "--buffer-pool",
        "8MiB",
        "--policy",
        "flushwise",
        "--max-recovery-time",
        "5s",
        "--warmup",
        "1s",
        "--kill-after",
        "4s",
        "--repeat",
        "2",
        "--output",
        "json",
    ]));
    let rounds: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rounds.len(), 2, "{out}");
    for r in &rounds {
        assert_eq!(r["policy"], "flushwise:max_recovery_time_s=5", "{r}");
        assert!(
            r["redo_bytes_applied"].as_u64().unwrap() > 0,
            "a run that wrote for 4 s leaves redo: {r}"
        );
        let recovery_s = r["recovery_s"].as_f64().unwrap();
        assert!(recovery_s <= 5.0, "{r}");
        assert_eq!(r["within_bound"], true, "{r}");
        assert!(r["killed_after_s"].as_f64().unwrap() >= 4.0, "{r}");
    }
    check(&dir, false);
    let refused = flushwise(&[
        "tpcc",
        "crash",
        "--dir",
        d,
        "--policy",
        "mysql56",
        "--max-recovery-time",
        "5s",
        "--repeat",
        "1",
    ]);
    assert!(!refused.status.success());
    let err = text(&refused.stderr);
    assert!(
        err.contains("mysql56") && err.contains("does not bound recovery time"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_one_line_naming_the_problem() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("nothing");
    let m = missing.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["tpcc", "run", "--dir", m], "tpcc prepare"),
        (vec!["tpcc", "check", "--dir", m], "tpcc prepare"),
        (
            vec!["tpcc", "prepare", "--dir", m, "--warehouses", "0"],
            "--warehouses 0",
        ),
        (
            vec!["tpcc", "prepare", "--dir", m, "--page-size", "3000"],
            "--page-size 3000",
        ),
        (vec!["tpcc", "prepare", "--dir", m, "--io", "mmap"], "--io"),
        // Refused before anything is prepared or run, not at mysql56's turn.
        (
            vec![
                "compare",
                "--dir",
                m,
                "--policies",
                "flushwise,mysql56",
                "--max-recovery-time",
                "5s",
            ],
            "policy 'mysql56' does not bound recovery time",
        ),
    ];
    for (args, expected) in cases {
        let o = flushwise(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!missing.exists(), "a refused command created {}", missing.display());
    // Engine flags are checked against a prepared database.
    let dir = root.path().join("db");
    prepare(&dir);
    let d = dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--device", "emulated"], "samsung-850-pro"),
        (vec!["--device", "emulated", "floppy"], "--device emulated floppy"),
        (vec!["--flush-log-at-commit", "3"], "0, 1 and 2"),
        (vec!["--policy", "nonsense"], "--policy"),
        (vec!["--buffer-pool", "64KiB"], "--buffer-pool"),
        (vec!["--duration", "0s"], "--duration"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["tpcc", "run", "--dir", d];
        args.extend(extra.iter());
        let o = flushwise(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

/// `compare` on the engine as a user runs it, shrunk: the preset's values
/// are overridden by flags, `--output json` keeps stdout to one JSON object
/// per policy (prose and the regime line go to stderr), each copy passes the
/// consistency check, and `--decisions` leaves one JSON-lines file per
/// policy with the Table-2 inputs.
#[test]
fn compare_small_run_prints_json_only_and_writes_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out_dir = dir.path().join("results");
    let o = flushwise(&[
        "compare",
        "--dir",
        data.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--io",
        "buffered",
        "--preset",
        "small-pool",
        "--warehouses",
        "1",
        "--buffer-pool",
        "4MiB",
        "--connections",
        "2",
        "--warmup",
        "2s",
        "--duration",
        "3s",
        "--report-interval",
        "1s",
        "--policies",
        "mysql56,self-tuning",
        "--output",
        "json",
        "--decisions",
    ]);
    let stdout = ok(&o);
    let lines = common::results(&stdout);
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines.iter().all(|r| r["shell"] == "engine"), "{stdout}");
    assert!(
        common::intervals(&stdout).len() >= 6,
        "interval objects of both runs: {stdout}"
    );
    assert_eq!(lines[0]["policy"], "mysql56");
    assert_eq!(lines[1]["policy"], "self-tuning");
    // Without a trace every run still reports the waits kept as running
    // totals (issue #18): commit, the core mutex, page latches; the ones
    // that need a system call per transaction only with --trace.
    for r in &lines {
        for key in [
            "commit_wait_us_per_txn",
            "core_mutex_wait_us_per_txn",
            "page_latch_wait_us_per_txn",
        ] {
            assert!(r[key].as_f64().is_some_and(|w| w >= 0.0), "{key}: {r}");
        }
        assert!(r["core_wait_us_per_txn"].is_null(), "{r}");
    }
    let stderr = text(&o.stderr);
    assert!(stderr.contains("regime: pool"), "{stderr}");
    assert!(stderr.contains("conditions 1,2,3"), "{stderr}");
    let run_dir = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("compare-"))
        })
        .expect("a compare-<time> directory");
    for policy in ["mysql56", "self-tuning"] {
        let path = run_dir.join(format!("decisions-{policy}.jsonl"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let first: Value = serde_json::from_str(text.lines().next().expect("at least one iteration")).unwrap();
        assert_eq!(first["policy"], policy);
        assert!(
            first["np_dirty"].is_number() && first["free_len_start"].is_number(),
            "{first}"
        );
    }
}
