//! `--metrics-addr`: a run's Prometheus endpoint, scraped with a plain
//! HTTP GET, agrees with the run's own `--output json` result.
//!
//! - a simulator run, scraped after it ended (`--metrics-linger`): every
//!   measured counter equals the result's figure, the policy's parameter
//!   gauges its final parameters, the latency histogram its counts;
//! - an engine run (`tpcc run` on a one-warehouse database), scraped every
//!   ~300 ms while it goes: every counter only grows, warm-up then
//!   measurement are seen, and the final values equal the result's;
//! - a bad address, or one already taken, is refused naming the flag.

mod common;

use std::time::Duration;

use serde_json::Value;

use common::live::{self, Metrics, Watched};
use common::{flushwise, ok, text};

/// Measured-phase counters against the result (`policy` is the result's).
fn assert_matches_result(m: &Metrics, result: &Value) {
    let policy = result["policy"].as_str().expect("policy");
    let measured = [("policy", policy), ("phase", "measured")];
    let field = |name: &str| result[name].as_f64().unwrap_or_else(|| panic!("{name} in {result}"));
    for (metric, name) in [
        ("innodb_buffer_pool_reads_total", "reads"),
        ("innodb_buffer_pool_read_requests_total", "requests"),
        ("innodb_buffer_pool_wait_free_total", "wait_free"),
        ("flushwise_sync_replacement_writes_total", "sync_replacement_writes"),
        (
            "flushwise_sync_recoverability_writes_total",
            "sync_recoverability_writes",
        ),
        ("flushwise_async_writes_total", "async_writes"),
        ("flushwise_lru_batch_flush_pages_total", "lru_batch_flush_pages"),
        ("flushwise_flush_list_pages_total", "flush_list_pages"),
        ("flushwise_user_stalls_total", "user_stalls"),
    ] {
        assert_eq!(
            m.get(metric, &measured),
            field(name),
            "{metric} against the result's {name}"
        );
    }
    assert_eq!(
        m.get("innodb_buffer_pool_pages_flushed_total", &measured),
        field("async_writes") + field("sync_replacement_writes") + field("sync_recoverability_writes")
    );
    let stall_s = m.get("flushwise_user_stall_seconds_total", &measured);
    assert!(
        (stall_s - field("user_stall_us") / 1e6).abs() < 1e-6,
        "{stall_s} s of stalls: {result}"
    );
    assert_eq!(
        m.sum("flushwise_transactions_total", &measured),
        field("transactions"),
        "transactions"
    );
    let rollbacks = m.sum(
        "flushwise_transactions_total",
        &[("phase", "measured"), ("outcome", "rolled_back")],
    );
    assert_eq!(rollbacks, field("rollbacks"));
    for l in result["latency"].as_array().expect("latency") {
        let ty = l["txn_type"].as_str().expect("txn_type");
        let count = l["count"].as_f64().expect("count");
        assert_eq!(
            m.get(
                "flushwise_transaction_latency_seconds_count",
                &[("policy", policy), ("type", ty)]
            ),
            count,
            "latency count of {ty}"
        );
        assert_eq!(
            m.sum("flushwise_transactions_total", &[("phase", "measured"), ("type", ty)]),
            count,
            "{ty} finished"
        );
    }
    for pair in result["final_parameters"].as_array().expect("final_parameters") {
        let (key, value) = (pair[0].as_str().expect("key"), pair[1].as_f64().expect("value"));
        assert_eq!(
            m.get("flushwise_policy_parameter", &[("policy", policy), ("param", key)]),
            value,
            "parameter {key}"
        );
    }
    let info = [
        ("policy", policy),
        ("shell", result["shell"].as_str().expect("shell")),
        ("seed", &result["seed"].to_string()),
        ("config_hash", result["config_hash"].as_str().expect("config_hash")),
    ];
    assert_eq!(m.get("flushwise_run_info", &info), 1.0);
    assert_eq!(m.get("flushwise_run_finished", &[("policy", policy)]), 1.0);
    assert!(m.get("innodb_buffer_pool_pages_total", &[("policy", policy)]) > 0.0);
}

#[test]
fn sim_run_metrics_after_the_end_equal_its_json_result() {
    let mut run = live::start(&[
        "sim",
        "run",
        "--policy",
        "mysql56",
        "--warehouses",
        "2",
        "--buffer-pool",
        "8MiB",
        "--redo",
        "32MiB",
        "--warmup",
        "2s",
        "--duration",
        "6s",
        "--output",
        "json",
        "--metrics-addr",
        "127.0.0.1:0",
        "--metrics-linger",
        "2m",
    ]);
    run.wait_for_result(Duration::from_secs(120), |_| {});
    // Stdout is the JSON lines alone: the address went to stderr.
    let result = common::result(&run.stdout);
    assert!(run.stderr().contains("metrics: http://127.0.0.1:"), "{}", run.stderr());
    let m = run.metrics();
    assert_matches_result(&m, &result);
    // A small pool under mysql56: users write victims themselves.
    assert!(result["sync_replacement_writes"].as_u64().unwrap() > 0, "{result}");
    assert!(result["reads"].as_u64().unwrap() > 0, "{result}");
    // The warm-up has its own series; both phases together are the run.
    assert!(
        m.get(
            "innodb_buffer_pool_reads_total",
            &[("policy", "mysql56"), ("phase", "warmup")]
        ) > 0.0
    );
    assert_eq!(m.get("flushwise_warming_up", &[("policy", "mysql56")]), 0.0);
    for margin in ["max_modified_age_async", "max_modified_age_sync", "max_checkpoint_age"] {
        assert!(
            m.get(
                "flushwise_redo_margin_bytes",
                &[("policy", "mysql56"), ("margin", margin)]
            ) > 0.0
        );
    }
    // The dashboard's feeds answer too.
    let (status, series) = run.get("/series.json");
    assert_eq!(status, 200);
    let series: Value = serde_json::from_str(&series).expect("series JSON");
    assert!(series["points"].as_array().is_some_and(|p| p.len() >= 6), "{series}");
    assert_eq!(series["run"]["finished"], true);
    let (status, decisions) = run.get("/decisions.json");
    assert_eq!(status, 200);
    let decisions: Value = serde_json::from_str(&decisions).expect("decisions JSON");
    assert!(
        decisions.as_array().is_some_and(|d| !d.is_empty() && d.len() <= 50),
        "{decisions}"
    );
    assert_eq!(run.get("/nothing-here").0, 404);
}

/// Every counter series of `before` is at most its value in `after`.
fn assert_grew(before: &Metrics, after: &Metrics) {
    for ((name, labels), value) in &before.series {
        let counter = name.ends_with("_total") || name.ends_with("_count") || name.ends_with("_bucket");
        if !counter {
            continue;
        }
        let later = after
            .series
            .get(&(name.clone(), labels.clone()))
            .copied()
            .unwrap_or(0.0);
        assert!(later >= *value, "{name}{labels:?} went from {value} to {later}");
    }
}

#[test]
fn tpcc_run_metrics_grow_during_the_run_and_end_equal_to_its_json_result() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    ok(&flushwise(&[
        "tpcc",
        "prepare",
        "--dir",
        d,
        "--warehouses",
        "1",
        "--redo",
        "32MiB",
        "--io",
        "buffered",
    ]));
    let mut run = live::start(&[
        "tpcc",
        "run",
        "--dir",
        d,
        "--io",
        "buffered",
        "--policy",
        "mysql56",
        "--connections",
        "4",
        "--buffer-pool",
        "4MiB",
        "--warmup",
        "3s",
        "--duration",
        "4s",
        "--report-interval",
        "1s",
        "--output",
        "json",
        "--metrics-addr",
        "127.0.0.1:0",
        "--metrics-linger",
        "2m",
    ]);
    let mut scrapes: Vec<Metrics> = Vec::new();
    run.wait_for_result(Duration::from_secs(180), |w: &Watched| {
        let (status, body) = w.get("/metrics");
        if status == 200 && body.contains("flushwise_run_info") {
            scrapes.push(Metrics::parse(&body));
        }
    });
    let result = common::result(&run.stdout);
    let last = run.metrics();
    assert!(scrapes.len() >= 5, "{} scrapes during a 7 s run", scrapes.len());
    for pair in scrapes.windows(2) {
        assert_grew(&pair[0], &pair[1]);
    }
    if let Some(final_during) = scrapes.last() {
        assert_grew(final_during, &last);
    }
    let warming = |m: &Metrics| m.get("flushwise_warming_up", &[("policy", "mysql56")]);
    assert!(scrapes.iter().any(|m| warming(m) == 1.0), "a scrape during the warm-up");
    assert!(
        scrapes.iter().any(|m| warming(m) == 0.0
            && m.get(
                "innodb_buffer_pool_read_requests_total",
                &[("policy", "mysql56"), ("phase", "measured")]
            ) > 0.0),
        "a scrape while measuring"
    );
    assert_matches_result(&last, &result);
    assert_eq!(result["shell"], "engine");
    assert!(result["transactions"].as_u64().unwrap() > 0, "{result}");
}

#[test]
fn a_bad_or_taken_metrics_address_is_refused_naming_the_flag() {
    for (addr, says) in [
        ("nonsense", "--metrics-addr nonsense: no port"),
        ("127.0.0.1:99999", "--metrics-addr 127.0.0.1:99999"),
    ] {
        let o = flushwise(&["sim", "run", "--duration", "1s", "--metrics-addr", addr]);
        assert_eq!(o.status.code(), Some(2), "{addr}");
        let err = text(&o.stderr);
        assert!(err.starts_with("error: ") && err.contains(says), "{addr}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = flushwise(&["sim", "run", "--duration", "1s", "--metrics-addr", &addr]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("--metrics-addr {addr}: cannot listen there")),
        "{err}"
    );
    let o = flushwise(&["sim", "run", "--duration", "1s", "--metrics-linger", "5s"]);
    assert_eq!(o.status.code(), Some(2), "--metrics-linger alone: {}", text(&o.stderr));
}
