//! Scenario tests of the simulator: determinism, trace replay, bad traces.

use std::fs::File;
use std::io::BufWriter;

use flushwise_sim::{RunResult, SimConfig, Simulation, WorkloadSpec};
use flushwise_tpcc_model::{TpccModel, TpccModelConfig, TpccRefGen};
use flushwise_trace::{TraceHeader, TraceWriter};

fn small(policy: &str, seed: u64) -> SimConfig {
    SimConfig {
        workload: WorkloadSpec::tpcc(2),
        connections: 8,
        buffer_pool_bytes: 16 << 20,
        redo_bytes: 64 << 20,
        policy: policy.parse().expect("a registered policy"),
        warmup_us: 5_000_000,
        duration_us: 10_000_000,
        report_interval_us: 2_000_000,
        seed,
        ..SimConfig::default()
    }
}

fn without_wall(mut r: RunResult) -> RunResult {
    r.wall_seconds = 0.0;
    r.requests_per_second = None;
    r
}

fn run(config: SimConfig) -> (RunResult, Vec<flushwise_sim::IntervalRow>) {
    let mut sim = Simulation::new(config, "test").unwrap();
    sim.check_invariants_every(997);
    let result = sim.run(|_| {}).unwrap();
    (without_wall(result), sim.rows().to_vec())
}

#[test]
fn same_seed_gives_identical_results_and_rows() {
    for policy in ["mysql56", "self-tuning"] {
        let a = run(small(policy, 7));
        let b = run(small(policy, 7));
        assert_eq!(a, b, "{policy} is not deterministic");
        assert!(a.0.transactions > 0 && a.0.requests > 0);
        assert!(a.0.figures.reads > 0, "the pool is smaller than the data: reads happen");
    }
}

#[test]
fn different_seed_gives_a_different_run() {
    let a = run(small("mysql56", 1)).0;
    let b = run(small("mysql56", 2)).0;
    assert_ne!(a.figures.reads, b.figures.reads);
    assert_ne!(a.config_hash, b.config_hash);
}

#[test]
fn warm_up_is_excluded_from_the_result() {
    let (r, rows) = run(SimConfig {
        warmup_us: 4_000_000,
        duration_us: 9_000_000,
        ..small("mysql56", 3)
    });
    let measured: u64 = rows.iter().filter(|row| !row.warmup).map(|row| row.figures.reads).sum();
    assert_eq!(r.figures.reads, measured, "the result counts the measured window only");
    assert!(rows.iter().any(|row| row.warmup));
}

fn record_trace(path: &std::path::Path, transactions: u64) {
    let model = TpccModel::new(TpccModelConfig {
        warehouses: 2,
        seed: 11,
        ..TpccModelConfig::default()
    })
    .unwrap();
    let file = BufWriter::new(File::create(path).unwrap());
    let mut writer = TraceWriter::new(file, &TraceHeader::new(16384, "test trace")).unwrap();
    for record in TpccRefGen::new(model, 4, transactions) {
        writer.write(&record).unwrap();
    }
    writer.finish().unwrap();
}

/// The replay runs at full concurrency until its first connection has no
/// transaction left, then ends (the others are a few transactions from
/// their ends; `Workload::ends_with_first_agent`).
#[test]
fn recorded_trace_replays_until_a_connection_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpcc.fwtrace");
    record_trace(&path, 3_000);
    let config = SimConfig {
        workload: WorkloadSpec::Trace { path: path.clone() },
        warmup_us: 0,
        duration_us: 3_600_000_000,
        ..small("self-tuning", 1)
    };
    let (r, _) = run(config);
    assert_eq!(r.connections, 4, "agents come from the trace");
    assert!(r.partial, "the hour asked for is cut short");
    assert!(
        (2_850..3_000).contains(&r.transactions),
        "all but each other connection's last few transactions replay: {}",
        r.transactions
    );
}

#[test]
fn truncated_trace_is_refused_naming_the_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpcc.fwtrace");
    record_trace(&path, 500);
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len / 2).unwrap();
    let config = SimConfig {
        workload: WorkloadSpec::Trace { path },
        ..small("mysql56", 1)
    };
    let err = Simulation::new(config, "test").err().unwrap();
    assert!(err.contains("--trace") && err.contains("offset"), "{err}");
}

#[test]
fn pool_larger_than_the_data_is_refused() {
    let config = SimConfig {
        buffer_pool_bytes: 8 << 30,
        ..small("mysql56", 1)
    };
    let err = Simulation::new(config, "test").err().unwrap();
    assert!(
        err.starts_with("--buffer-pool") && err.contains("larger than the data"),
        "{err}"
    );
}

/// TPC-H: long scans share the cores with the refresh stream's short
/// transactions, as an operating system's time slices share them, instead
/// of holding a core for a whole scan; and a pool may hold the data.
#[test]
fn tpch_scans_yield_the_cpu_so_the_refresh_stream_keeps_up() {
    let config = SimConfig {
        workload: WorkloadSpec::Tpch {
            sf_thousandths: 100,
            refresh: true,
        },
        connections: 5,
        cpu_cores: 1,
        buffer_pool_bytes: 512 << 20,
        redo_bytes: 64 << 20,
        policy: "mysql56".parse().expect("a registered policy"),
        warmup_us: 2_000_000,
        duration_us: 20_000_000,
        report_interval_us: 5_000_000,
        seed: 1,
        ..SimConfig::default()
    };
    let (r, _) = run(config.clone());
    let share = |name: &str| {
        r.mix_pct
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0.0, |(_, pct)| pct / 100.0)
    };
    let refresh_per_s = r.transactions as f64 * share("refresh") / 20.0;
    let queries = r.transactions as f64 * share("query");
    // One core, four query streams: measured 96.7 refresh transactions/s
    // with 4 ms slices, 47.4 with a whole run of hits as one burst (each
    // refresh burst then waits behind whole scans of resident leaves).
    assert!(refresh_per_s > 70.0, "{refresh_per_s} refresh transactions/s");
    assert!(queries > 0.0);
    assert!(
        r.figures.hit_ratio > 0.99,
        "the data fits the pool: {}",
        r.figures.hit_ratio
    );
    let (again, _) = run(config);
    assert_eq!(r, again, "deterministic");
}

/// A calibrated device's measured fsync is charged where the engine pays
/// it (after each log write, after a doublewrite copy and after a batch's
/// in-place writes): the same device with a slow fsync commits later, so
/// fewer transactions run.
#[test]
fn a_calibrated_devices_fsync_slows_commits_and_page_writes() {
    let dir = tempfile::tempdir().unwrap();
    let preset = |fsync_us: f64| {
        format!(
            "format_version = 1\n[model]\nread_base_latency_us = 80.0\nwrite_base_latency_us = 80.0\n\
             read_latency_per_outstanding_us = 10.0\nwrite_latency_per_outstanding_us = 10.0\n\
             transfer_us_per_mib = 1000.0\n[measured]\nrequest_bytes = 16384\n\
             sequential_write_mb_per_s = 900.0\nfsync_mean_us = {fsync_us}\nfsync_p99_us = {fsync_us}\n"
        )
    };
    let result = |fsync_us: f64| {
        let path = dir.path().join(format!("fsync-{fsync_us}.toml"));
        std::fs::write(&path, preset(fsync_us)).unwrap();
        let device = flushwise_sim::pin_device(&format!("calibrated:{}", path.display())).unwrap();
        run(SimConfig {
            data_device: device.clone(),
            log_device: device,
            ..small("mysql56", 7)
        })
        .0
    };
    let (fast, slow) = (result(0.0), result(3000.0));
    // The write path shows where a batch's time went, as the engine's:
    // its phases add up to the batch time, and the slow fsync is in both
    // syncs.
    let phase = |r: &flushwise_sim::RunResult, name: &str| {
        let w = r.write_path.as_ref().expect("doublewrite batches were written");
        assert!(w.batches > 0 && w.batch_pages >= w.batches, "{w:?}");
        let sum: f64 = w.phase_us_per_page.iter().map(|(_, us)| us).sum();
        assert!((sum - w.batch_us_per_page).abs() < 1e-6, "{w:?}");
        w.phase_us_per_page
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, us)| *us)
            .unwrap()
    };
    for name in ["doublewrite_sync", "tablespace_sync"] {
        assert_eq!(phase(&fast, name), 0.0, "{name}: no fsync cost");
        assert!(phase(&slow, name) > 10.0, "{name}: {}", phase(&slow, name));
    }
    assert!(phase(&slow, "in_place_write") > 0.0 && phase(&slow, "doublewrite_write") > 0.0);
    // The WAL rule: with a 3 ms log fsync, batches wait for the log.
    assert!(phase(&slow, "wait_redo") > phase(&fast, "wait_redo"), "WAL waits");
    // Eight connections, each commit waits a log write and its fsync.
    assert!(
        (slow.transactions as f64) < 0.8 * fast.transactions as f64,
        "{} vs {} transactions",
        slow.transactions,
        fast.transactions
    );
}

/// A log fsync waits behind the data requests in flight on its device
/// (measured, `core::device::fsync`): with a preset whose fsync grows with
/// them, a synced log write takes longer than with the same fsync alone,
/// and only when the log is on the data's device.
#[test]
fn a_log_fsync_beside_data_writes_costs_more_on_a_shared_device() {
    let dir = tempfile::tempdir().unwrap();
    let base = "format_version = 1\n[model]\nread_base_latency_us = 80.0\nwrite_base_latency_us = 80.0\n\
                read_latency_per_outstanding_us = 10.0\nwrite_latency_per_outstanding_us = 10.0\n\
                transfer_us_per_mib = 1000.0\n[measured]\nrequest_bytes = 16384\n\
                sequential_write_mb_per_s = 900.0\nfsync_mean_us = 100.0\nfsync_p99_us = 100.0\n";
    let beside = format!(
        "{base}[[fsync_beside]]\nkind = \"write\"\nin_flight = 1\niops = 9000.0\nmean_latency_us = 400.0\np99_latency_us = 900.0\n"
    );
    let pinned = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        flushwise_sim::pin_device(&format!("calibrated:{}", path.display())).unwrap()
    };
    let (flat, curve, log_apart) = (
        pinned("flat.toml", base),
        pinned("curve.toml", &beside),
        pinned("log.toml", &beside),
    );
    let result = |data: &str, log: &str| {
        run(SimConfig {
            data_device: data.to_string(),
            log_device: log.to_string(),
            buffer_pool_bytes: 8 << 20,
            ..small("mysql56", 9)
        })
        .0
    };
    let synced = |r: &flushwise_sim::RunResult| r.log_synced_write_us_mean.expect("log writes synced");
    let (alone, shared, apart) = (result(&flat, &flat), result(&curve, &curve), result(&curve, &log_apart));
    assert!(
        shared.figures.async_writes + shared.figures.sync_replacement_writes > 1000,
        "{shared:?}"
    );
    assert!(
        synced(&shared) > synced(&alone) + 50.0,
        "shared device: {} us, the fsync alone: {} us",
        synced(&shared),
        synced(&alone)
    );
    // A log of its own sees no data write: its fsync is the alone figure,
    // so its synced write costs what the flat preset's does (the runs
    // differ elsewhere, the data device's flushes being dearer).
    assert!(
        (synced(&apart) - synced(&alone)).abs() < 20.0,
        "log apart: {} us, flat: {} us",
        synced(&apart),
        synced(&alone)
    );
    assert_eq!(shared, result(&curve, &curve), "deterministic");
}

/// A doublewrite batch's in-place writes posted 16 at a time (the engine)
/// instead of all at once (5.6.15's AIO): every write still completes
/// once, the run differs, and a depth of 0 keeps the configuration hash of
/// a run configured before the depth existed.
#[test]
fn in_place_writes_at_a_bounded_depth_complete_and_change_the_run() {
    let all = small("mysql56", 3);
    assert!(
        !format!("{all:?}").contains("in_place_write_depth"),
        "the default keeps old configuration hashes"
    );
    let bounded = SimConfig {
        in_place_write_depth: 16,
        ..small("mysql56", 3)
    };
    assert_ne!(bounded.config_hash(), all.config_hash());
    let (a, _) = run(all);
    let (b, _) = run(bounded.clone());
    assert!(b.transactions > 0 && b.figures.async_writes > 0, "{b:?}");
    assert_ne!(a, b, "posting writes 16 at a time changes the device's queue");
    assert_eq!(b, run(bounded).0, "deterministic");
}

/// Users' single-page flushes take a doublewrite slot each (MySQL 5.6: 8);
/// with one slot they queue behind each other, so a run whose users write
/// their own victims does fewer of them and fewer transactions, and the
/// run stays deterministic.
#[test]
fn single_page_slots_bound_users_writes_in_flight() {
    let cfg = |slots| SimConfig {
        single_page_slots: slots,
        buffer_pool_bytes: 8 << 20,
        ..small("mysql56", 5)
    };
    assert_eq!(SimConfig::default().single_page_slots, 8, "MySQL 5.6's 128 - 120");
    let (eight, _) = run(cfg(8));
    let (one, _) = run(cfg(1));
    assert!(eight.figures.sync_replacement_writes > 1000, "users write: {eight:?}");
    assert!(
        (one.figures.sync_replacement_writes as f64) < 0.8 * eight.figures.sync_replacement_writes as f64,
        "one slot: {} single-page flushes, eight: {}",
        one.figures.sync_replacement_writes,
        eight.figures.sync_replacement_writes
    );
    assert!(one.transactions < eight.transactions);
    assert_eq!(one, run(cfg(1)).0, "deterministic");
}

/// A replayed trace that runs out before the measured window ends stops
/// there: the result covers the time it ran and says it is partial.
#[test]
fn a_replay_that_runs_out_of_trace_ends_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.fwtrace");
    record_trace(&path, 1_600);
    let cfg = |warmup_us| SimConfig {
        workload: WorkloadSpec::Trace { path: path.clone() },
        connections: 4,
        warmup_us,
        duration_us: 600_000_000,
        ..small("mysql56", 1)
    };
    let (r, _) = run(cfg(100_000));
    assert!(r.partial, "1,600 transactions do not last 10 minutes: {r:?}");
    assert!(
        r.measured_seconds > 0.0 && r.measured_seconds < 600.0,
        "{}",
        r.measured_seconds
    );
    let tpm = r.figures.tpm_total;
    assert!(
        (r.transactions as f64 - tpm * r.measured_seconds / 60.0).abs() <= 1.0 + 0.01 * r.transactions as f64,
        "rates are over the time it ran: {} transactions, {tpm} per minute, {} s",
        r.transactions,
        r.measured_seconds
    );
    let err = Simulation::new(cfg(500_000_000), "test")
        .unwrap()
        .run(|_| {})
        .unwrap_err();
    assert!(err.contains("ran out") && err.contains("--warmup"), "{err}");
}

/// The engine's CPU outside its user threads, charged per transaction,
/// takes cores the agents would have used: on a CPU-bound run, fewer
/// transactions.
#[test]
fn background_cpu_per_transaction_slows_a_cpu_bound_run() {
    let cfg = |background_us_per_txn| SimConfig {
        cpu_cores: 1,
        buffer_pool_bytes: 64 << 20,
        costs: flushwise_sim::config::CpuCosts {
            background_us_per_txn,
            ..flushwise_sim::config::CpuCosts::default()
        },
        ..small("percona56", 2)
    };
    let (none, _) = run(cfg(0));
    let (some, _) = run(cfg(2_500));
    assert!(
        (some.transactions as f64) < 0.7 * none.transactions as f64,
        "{} vs {} transactions",
        some.transactions,
        none.transactions
    );
}

/// An engine run's measured key-lock waits hold each transaction up on no
/// core: one connection runs slower by about the wait, while connections
/// that keep the only core busy lose little (others run while one waits).
#[test]
fn lock_waits_hold_a_transaction_up_without_taking_a_core() {
    let cfg = |connections, wait_us| SimConfig {
        cpu_cores: 1,
        connections,
        buffer_pool_bytes: 64 << 20,
        costs: flushwise_sim::config::CpuCosts {
            lock_wait_us_by_type: (wait_us > 0).then_some([wait_us; flushwise_trace::TxnType::SLOTS]),
            ..flushwise_sim::config::CpuCosts::default()
        },
        ..small("percona56", 2)
    };
    let ratio = |connections| {
        let (none, _) = run(cfg(connections, 0));
        let (some, _) = run(cfg(connections, 2_500));
        some.transactions as f64 / none.transactions as f64
    };
    let alone = ratio(1);
    assert!(
        alone < 0.8,
        "one connection: {alone:.3} of the transactions without waits"
    );
    let crowded = ratio(8);
    assert!(
        crowded > 0.9,
        "eight connections on one busy core: {crowded:.3} of the transactions without waits"
    );
}

/// The engine's measured core-mutex and page-latch waits are charged where
/// its key-lock waits are: a replay with 1,500 us of each kind is the run
/// with 3,000 us of key-lock waits, to the transaction, and slower than
/// the run with none.
#[test]
fn latch_waits_are_charged_beside_lock_waits() {
    let cfg = |lock_us: u32, latch_us: u32| SimConfig {
        cpu_cores: 1,
        connections: 2,
        buffer_pool_bytes: 64 << 20,
        costs: flushwise_sim::config::CpuCosts {
            lock_wait_us_by_type: (lock_us > 0).then_some([lock_us; flushwise_trace::TxnType::SLOTS]),
            latch_wait_us_by_type: (latch_us > 0).then_some([latch_us; flushwise_trace::TxnType::SLOTS]),
            ..flushwise_sim::config::CpuCosts::default()
        },
        ..small("percona56", 2)
    };
    let (split, _) = run(cfg(1_500, 1_500));
    let (locks_only, _) = run(cfg(3_000, 0));
    let (none, _) = run(cfg(0, 0));
    assert_eq!(split.transactions, locks_only.transactions);
    assert!(
        split.transactions < none.transactions,
        "{} vs {} transactions",
        split.transactions,
        none.transactions
    );
}

/// Issue #18: a read's latency, call to return, is the device's plus the
/// agent's wait for a core after it. One connection never waits for a
/// core; eight on one core wait after their reads, and the parts add up.
#[test]
fn reads_wait_for_a_core_when_agents_outnumber_cores() {
    let cfg = |connections, cpu_cores| SimConfig {
        cpu_cores,
        connections,
        buffer_pool_bytes: 16 << 20,
        ..small("percona56", 2)
    };
    let split = |r: &flushwise_sim::RunResult| r.read_split.clone().expect("the run reads pages");
    let (alone, _) = run(cfg(1, 1));
    let alone = split(&alone);
    assert_eq!(alone.core_wait_us_mean, 0.0, "{alone:?}");
    let (crowded_result, _) = run(cfg(8, 1));
    let crowded = split(&crowded_result);
    assert!(crowded.core_wait_us_mean > 10.0, "{crowded:?}");
    assert!(crowded_result.core_wait_us_per_txn.is_some_and(|w| w > 0.0));
    // Every commit waits for a log write on the modelled log device.
    assert!(crowded_result.commit_wait_us_per_txn.is_some_and(|w| w > 0.0));
    assert!(crowded_result.log_synced_write_us_mean.is_some_and(|w| w > 0.0));
    let sum = crowded.device_us_mean + crowded.core_wait_us_mean + crowded.on_cpu_us_mean;
    assert!((sum - crowded.latency_us_mean).abs() < 1e-6 * sum, "{crowded:?}");
    assert!(
        (crowded.device_us_mean - crowded_result.figures.read_latency_avg_us).abs() < 1e-9,
        "the device's part is the device model's read latency"
    );
}

/// Issue #18: an engine thread spends a transaction's CPU between its
/// page fixes, so a read completing waits for a core behind another
/// agent's share of one fix, not behind its whole transaction. Spread
/// along the fixes, the same CPU (the same total, one busy core) holds
/// the reads up far less, and the agents keep the core as busy.
#[test]
fn a_transactions_cpu_spent_along_its_fixes_holds_reads_up_less_than_one_burst() {
    let cfg = |along_fixes| SimConfig {
        cpu_cores: 1,
        connections: 4,
        costs: flushwise_sim::config::CpuCosts {
            fix_us: 0,
            unfix_us: 0,
            txn_us: 1_500,
            txn_cpu_along_fixes: along_fixes,
            ..flushwise_sim::config::CpuCosts::default()
        },
        ..small("percona56", 2)
    };
    let (burst, _) = run(cfg(false));
    let (along, _) = run(cfg(true));
    let wait = |r: &flushwise_sim::RunResult| r.read_split.clone().expect("the run reads pages").core_wait_us_mean;
    assert!(
        wait(&along) < 0.6 * wait(&burst),
        "a read's wait for the core: {:.0} us along the fixes, {:.0} us in one burst",
        wait(&along),
        wait(&burst)
    );
    let ratio = along.transactions as f64 / burst.transactions as f64;
    assert!(
        (0.8..1.5).contains(&ratio),
        "the same CPU per transaction on one core: {} vs {} transactions",
        along.transactions,
        burst.transactions
    );
}
