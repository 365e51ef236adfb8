//! Scenarios for `flushwise sim run` and `sim compare`, run against the built
//! binary with tiny configurations (2 warehouses, an 8 MiB pool, 3 simulated
//! seconds) so each takes well under a second in release.

mod common;

use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

const TINY: &[&str] = &[
    "--warehouses",
    "2",
    "--buffer-pool",
    "8MiB",
    "--redo",
    "64MiB",
    "--warmup",
    "1s",
    "--duration",
    "2s",
    "--report-interval",
    "1s",
];

fn flushwise(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the flushwise binary runs")
}

fn sim(sub: &str, extra: &[&str]) -> Output {
    let mut args = vec!["sim", sub];
    args.extend_from_slice(TINY);
    args.extend_from_slice(extra);
    flushwise(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run's JSON without the wall-clock fields (the only ones a seed does
/// not determine).
fn deterministic_json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    let mut v = common::result(&stdout(o));
    let map = v.as_object_mut().expect("an object");
    map.remove("wall_seconds");
    map.remove("requests_per_second");
    v
}

fn assert_one_error_line(o: &Output, must_contain: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for needle in must_contain {
        assert!(lines[0].contains(needle), "missing {needle:?} in {err}");
    }
}

#[test]
fn sim_run_json_has_contract_fields() {
    let o = sim("run", &["--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let v = common::result(&text);
    let lines = common::json_lines(&text);
    assert_eq!(lines.last(), Some(&v), "the result closes the run: {text}");
    let rows = common::intervals(&text);
    assert!(rows.len() >= 2, "interval objects before the result: {text}");
    assert!(rows
        .iter()
        .all(|r| r["shell"] == "simulator" && r["commit"] == v["commit"]));
    assert_eq!(v["shell"], "simulator");
    for field in [
        "measured_seconds",
        "policy",
        "device",
        "buffer_pool_bytes",
        "warehouses",
        "connections",
        "seed",
        "config_hash",
        "commit",
        "nopm",
        "tpm_total",
        "reads",
        "async_writes",
        "sync_replacement_writes",
        "sync_recoverability_writes",
        "sync_write_pct",
        "io_per_txn",
        "hit_ratio",
        "dirty_pct_avg",
        "simulated_seconds",
        "wall_seconds",
        "requests_per_second",
    ] {
        assert!(v.get(field).is_some(), "missing {field} in {text}");
    }
    assert_eq!(v["warehouses"], 2);
    assert_eq!(v["buffer_pool_bytes"], 8 << 20);
    assert!(v["nopm"].as_f64().unwrap_or(0.0) > 0.0, "{text}");
    // The banner (seed, hash, commit) went to stderr, keeping stdout JSON.
    let banner = stderr(&o);
    assert!(banner.contains("seed=1") && banner.contains("config_hash=") && banner.contains("commit="));
    assert!(banner.contains(v["config_hash"].as_str().unwrap_or("?")), "{banner}");
}

#[test]
fn same_seed_gives_identical_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a_path = dir.path().join("a.csv");
    let b_path = dir.path().join("b.csv");
    let a_csv = a_path.to_string_lossy().into_owned();
    let b_csv = b_path.to_string_lossy().into_owned();
    let a = sim("run", &["--output", "json", "--seed", "7", "--intervals", &a_csv]);
    let b = sim("run", &["--output", "json", "--seed", "7", "--intervals", &b_csv]);
    assert_eq!(deterministic_json(&a), deterministic_json(&b));
    let a_rows = std::fs::read_to_string(&a_path).expect("interval csv a");
    let b_rows = std::fs::read_to_string(&b_path).expect("interval csv b");
    assert!(a_rows.lines().count() >= 3, "{a_rows}");
    assert!(a_rows.lines().next().unwrap_or("").contains("config_hash"), "{a_rows}");
    assert_eq!(a_rows, b_rows);
}

#[test]
fn different_seed_changes_results() {
    let a = deterministic_json(&sim("run", &["--output", "json", "--seed", "1"]));
    let b = deterministic_json(&sim("run", &["--output", "json", "--seed", "2"]));
    assert_ne!(a["config_hash"], b["config_hash"]);
    let figures = ["reads", "nopm", "tpm_total", "hit_ratio"];
    assert!(
        figures.iter().any(|f| a[f] != b[f]),
        "seeds 1 and 2 gave the same figures: {a} / {b}"
    );
}

#[test]
fn bad_size_is_one_clear_line() {
    let o = sim("run", &["--buffer-pool", "12QB"]);
    assert_one_error_line(&o, &["--buffer-pool", "12QB", "GiB"]);
    let o = sim("run", &["--warmup", "3 fortnights"]);
    assert_one_error_line(&o, &["--warmup", "accepted units"]);
}

#[test]
fn unknown_policy_lists_accepted() {
    let o = sim("run", &["--policy", "fastest"]);
    let mut accepted: Vec<&str> = vec!["fastest"];
    accepted.extend(flushwise_core::policy::names());
    assert_one_error_line(&o, &accepted);
    assert!(stderr(&o).contains("--policy"));
    // compare rejects it before running anything: no banner, no output.
    let o = sim("compare", &["--policies", "self-tuning,fastest"]);
    assert_one_error_line(&o, &accepted);
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

#[test]
fn zero_connections_rejected() {
    let o = sim("run", &["--connections", "0"]);
    assert_one_error_line(&o, &["--connections", "at least one"]);
}

#[test]
fn pool_larger_than_data_rejected() {
    let o = sim("run", &["--buffer-pool", "4GiB"]);
    assert_one_error_line(&o, &["--buffer-pool", "larger than the data"]);
}

#[test]
fn compare_prints_ratio_column() {
    let o = sim("compare", &["--policies", "mysql56,self-tuning"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let header = text
        .lines()
        .find(|l| l.starts_with("policy"))
        .unwrap_or_else(|| panic!("no table header in {text}"));
    for column in [
        "NOPM",
        "ratio",
        "sync_write_pct",
        "io_per_txn",
        "hit_ratio",
        "dirty_pct_avg",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let first = text
        .lines()
        .find(|l| l.starts_with("mysql56"))
        .unwrap_or_else(|| panic!("no mysql56 row in {text}"));
    assert!(first.contains("1.00x"), "the baseline's ratio is 1.00x: {first}");
    assert!(text.lines().any(|l| l.starts_with("self-tuning")), "{text}");
}

#[test]
fn compare_in_parallel_matches_sequential() {
    let strip = |o: &Output| -> Vec<Value> {
        assert!(o.status.success(), "{}", stderr(o));
        common::results(&stdout(o))
            .into_iter()
            .map(|mut v| {
                if let Some(m) = v.as_object_mut() {
                    m.remove("wall_seconds");
                    m.remove("requests_per_second");
                }
                v
            })
            .collect()
    };
    let policies = ["--policies", "mysql56,self-tuning", "--output", "json"];
    let serial = strip(&sim("compare", &[&policies[..], &["--jobs", "1"]].concat()));
    let parallel = strip(&sim("compare", &[&policies[..], &["--jobs", "2"]].concat()));
    assert_eq!(serial.len(), 2);
    assert_eq!(serial, parallel);
    assert_eq!(serial[0]["policy"], "mysql56");
}

#[test]
fn csv_output_has_header_and_param_columns() {
    let o = sim("run", &["--output", "csv", "--policy", "mysql56"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("shell,policy,"), "{text}");
    assert!(lines[0].contains("param_"), "{text}");
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count(), "{text}");
}

#[test]
fn decisions_are_written_as_csv() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("decisions.csv");
    let p = path.to_string_lossy().into_owned();
    let o = sim("run", &["--output", "json", "--decisions", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).expect("decision csv");
    assert!(text.starts_with("time_us,policy,cleaner,rule,detail\n"), "{text}");
}

#[test]
fn no_progress_bar_when_piped() {
    let o = sim("run", &["--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        !err.contains('\r') && !err.contains('\u{1b}'),
        "terminal control in {err:?}"
    );
    assert_eq!(err.lines().count(), 1, "only the banner on stderr: {err:?}");
    assert!(err.starts_with("flushwise sim: seed="), "{err}");
}

#[test]
fn experiment_list_names_every_experiment() {
    let o = flushwise(&["sim", "experiment", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for name in ["000-exp1-ssd", "000-exp1-hdd", "000-exp2", "000-exp3", "002-table4"] {
        assert!(text.contains(name), "{text}");
    }
    let o = flushwise(&["sim", "experiment", "000-exp9"]);
    assert_one_error_line(&o, &["000-exp9", "000-exp1-ssd"]);
}

#[test]
fn experiment_writes_csv_with_one_row_per_policy() {
    // 002-table4 is the cheapest grid (constant disks, a few seconds); its
    // `db2:cleaners=50` variant goes through the registry's parameter syntax.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_string_lossy().into_owned();
    let o = flushwise(&["sim", "experiment", "002-table4", "--out", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!text.contains("note: skipped"), "{text}");
    assert!(text.contains("db2 (50 cleaners)"), "{text}");
    let csv = std::fs::read_to_string(dir.path().join("002-table4.csv")).expect("the experiment's CSV");
    assert!(
        csv.starts_with("experiment,scale,setup,policy_label,shell,policy,"),
        "{csv}"
    );
    assert_eq!(csv.lines().skip(1).count(), 3, "{csv}");
}

/// `--decisions FILE.jsonl` writes one JSON object per page-cleaner
/// iteration with every Table-2 input, the parameters before and after and
/// the rules that fired; the same seed writes the same lines.
#[test]
fn decisions_jsonl_has_one_object_per_iteration_with_table_2_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.jsonl");
    let path_text = path.to_str().unwrap();
    let o = sim(
        "run",
        &["--policy", "self-tuning", "--output", "json", "--decisions", path_text],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 2, "one line per iteration over 3 s: {}", lines.len());
    for line in &lines {
        let v: Value = serde_json::from_str(line).expect("each line is one JSON object");
        for key in [
            "np_lru",
            "np_flush",
            "np_clean",
            "np_dirty",
            "single_page_flush_calls",
            "np_sync_rec",
            "np_req_flush",
            "lru_len",
            "free_len_start",
            "free_len_end",
            "t_flushing_us",
            "sleep_us",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
        assert_eq!(v["policy"], "self-tuning");
        assert!(v["params_before"]["p_scan"].is_number() && v["params_after"]["p_io"].is_number());
        assert!(v["rules"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x == "lru_batch")));
    }
    let again = dir.path().join("again.jsonl");
    let o = sim(
        "run",
        &[
            "--policy",
            "self-tuning",
            "--output",
            "json",
            "--decisions",
            again.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        text,
        std::fs::read_to_string(&again).unwrap(),
        "deterministic for a seed"
    );
}

/// The 5.6.15-vs-later parameters are accepted by name, and a bad value is
/// one line naming the parameter and the accepted values.
#[test]
fn free_page_path_parameters_are_named_and_checked() {
    let o = sim(
        "run",
        &[
            "--policy",
            "mysql56:user_scan_depth=100,single_page_flush=all_datafiles,lru_written_pages=evict,preflush_advance=once",
            "--output",
            "json",
        ],
    );
    let v = deterministic_json(&o);
    let params = v["final_parameters"].as_array().expect("final parameters");
    assert!(
        params.iter().any(|p| p[0] == "user_scan_depth" && p[1] == 100.0),
        "{params:?}"
    );
    let o = sim("run", &["--policy", "self-tuning:lru_written_pages=sometimes"]);
    assert_one_error_line(&o, &["lru_written_pages", "stay (5.6.15)", "evict (5.7+)"]);
}

#[test]
fn lab_list_names_the_papers_grids_the_oracle_and_the_matrix() {
    let o = flushwise(&["lab", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for name in ["000-exp1-ssd", "002-table4", "oracle", "own-policy-matrix", "36 cells"] {
        assert!(text.contains(name), "missing {name}: {text}");
    }
    let o = flushwise(&["lab", "run", "own-policy-matrx"]);
    assert_one_error_line(&o, &["own-policy-matrx", "own-policy-matrix", "oracle"]);
    // Seed replicates are the matrix's alone.
    let o = flushwise(&["lab", "run", "002-table4", "--seeds", "3"]);
    assert_one_error_line(&o, &["002-table4", "--seeds", "own-policy-matrix"]);
}

#[test]
fn lab_run_of_a_paper_grid_with_csv_output_puts_only_the_csv_on_stdout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_string_lossy().into_owned();
    let o = flushwise(&["lab", "run", "002-table4", "--out", &out, "--output", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("experiment,scale,setup,policy_label,"), "{text}");
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(stderr(&o).contains("Wang & Bunt"), "the report goes to stderr");
}

#[test]
fn sim_run_read_mostly_mix_draws_mostly_read_only_transactions() {
    let o = sim("run", &["--mix", "read-mostly", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = stdout(&o).lines().last().map(str::to_owned).unwrap_or_default();
    let v: Value = serde_json::from_str(&last).expect("a JSON result line");
    let mix = v["mix_pct"].as_array().expect("mix_pct");
    let share = |name: &str| {
        mix.iter()
            .find(|p| p[0] == name)
            .and_then(|p| p[1].as_f64())
            .unwrap_or(0.0)
    };
    assert!(share("order_status") + share("stock_level") > 60.0, "{mix:?}");
    let o = sim("run", &["--mix", "olap"]);
    assert_one_error_line(&o, &["--mix", "olap", "read-mostly"]);
}

#[test]
fn sim_run_tpch_runs_query_streams_and_a_refresh_stream_deterministically() {
    let args = [
        "sim",
        "run",
        "--workload",
        "tpch",
        "--sf",
        "0.02",
        "--connections",
        "3",
        "--buffer-pool",
        "64MiB",
        "--warmup",
        "1s",
        "--duration",
        "5s",
        "--output",
        "json",
    ];
    let result = |o: &Output| -> Value {
        assert!(o.status.success(), "{}", stderr(o));
        let last = stdout(o).lines().last().map(str::to_owned).unwrap_or_default();
        serde_json::from_str(&last).expect("a JSON result line")
    };
    let v = result(&flushwise(&args));
    let mix = v["mix_pct"].as_array().expect("mix_pct");
    let share = |name: &str| mix.iter().find(|p| p[0] == name).and_then(|p| p[1].as_f64());
    assert!(share("query").is_some_and(|s| s > 0.0), "{mix:?}");
    assert!(share("refresh").is_some_and(|s| s > 0.0), "{mix:?}");
    assert_eq!(v["nopm"].as_f64(), Some(0.0));
    assert!(v["workload"].as_str().is_some_and(|w| w.starts_with("tpch(SF 0.02")));
    // The pool may hold the data (the paper's setting): nothing to evict.
    assert!(v["hit_ratio"].as_f64().is_some_and(|h| h > 0.9));
    // Bit for bit the same for the same seed.
    let again = result(&flushwise(&args));
    assert_eq!(v["transactions"], again["transactions"]);
    assert_eq!(v["requests"], again["requests"]);
    assert_eq!(v["async_writes"], again["async_writes"]);
    // Bad scale factors name the flag.
    let o = flushwise(&["sim", "run", "--workload", "tpch", "--sf", "0"]);
    assert_one_error_line(&o, &["--sf 0"]);
}
