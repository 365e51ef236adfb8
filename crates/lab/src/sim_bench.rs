//! `sim bench`: simulated buffer requests (page fixes) per wall-clock second
//! on one core, against the 10 M/s target.
//!
//! (a) trace replay: a TPC-C model trace is generated into memory, then
//!     replayed by the simulator. `Simulation` takes a trace only by path,
//!     so the bytes go through a temporary file (served from the page cache;
//!     the pre-scan is outside the timed run);
//! (b) on-line TPC-C: the simulator generates transactions as it goes. A
//!     short pilot run measures requests per simulated second so that the
//!     timed run covers about `--requests` requests;
//! (c) as (b) with a 96 MiB pool that holds almost all of a 1-warehouse database,
//!     so the miss and synchronous-write path is rarely taken.
//!
//! A command, not a test: the numbers depend on the machine and its load.

use std::io::Write;
use std::time::Instant;

use flushwise_sim::{SimConfig, Simulation, WorkloadSpec};
use flushwise_tpcc_model::{TpccModel, TpccModelConfig, Xoshiro256StarStar};
use flushwise_trace::{TraceEvent, TraceHeader, TraceWriter};

use crate::COMMIT;

/// The throughput the simulator is meant to reach.
const TARGET_REQUESTS_PER_SECOND: f64 = 10e6;
const WAREHOUSES: u32 = 10;
const AGENTS: u32 = 20;

/// The bench's policy: self-tuning, whose users take 5.6.15's single-page
/// flush path on misses (the slow path the bench is about), whatever the
/// default policy is.
const BENCH_POLICY: &str = "self-tuning";

fn bench_policy() -> flushwise_core::policy::PolicySpec {
    flushwise_core::policy::PolicySpec::parse(BENCH_POLICY).unwrap_or_default()
}

fn base_config() -> SimConfig {
    SimConfig {
        workload: WorkloadSpec::tpcc(WAREHOUSES),
        connections: AGENTS,
        buffer_pool_bytes: 64 << 20,
        warmup_us: 0,
        policy: bench_policy(),
        ..SimConfig::default()
    }
}

fn report(out: &mut dyn Write, label: &str, requests: u64, seconds: f64) -> Result<(), String> {
    let rate = requests as f64 / seconds.max(1e-9);
    writeln!(
        out,
        "{label:<34} {requests:>11} requests in {seconds:>7.2} s = {:>10.0} requests/s = {:.4} of the 10 M/s target",
        rate,
        rate / TARGET_REQUESTS_PER_SECOND
    )
    .and_then(|()| out.flush())
    .map_err(|e| format!("cannot write the report: {e}"))
}

/// Generates at least `requests` fixes of TPC-C model trace into memory.
fn generate_trace(requests: u64) -> Result<(Vec<u8>, u64, f64), String> {
    let model_config = TpccModelConfig {
        warehouses: WAREHOUSES,
        seed: 1,
        ..TpccModelConfig::default()
    };
    let mut model = TpccModel::new(model_config).map_err(|e| e.to_string())?;
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let header = TraceHeader::new(
        16384,
        format!("bench tpcc-model warehouses={WAREHOUSES} commit={COMMIT}"),
    );
    let mut writer = TraceWriter::new(Vec::new(), &header).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut fixes = 0u64;
    let mut txn = Vec::new();
    let mut agent = 0u32;
    while fixes < requests {
        txn.clear();
        model.fill_transaction(agent, &mut rng, &mut txn);
        agent = (agent + 1) % AGENTS;
        fixes += txn.iter().filter(|r| matches!(r.event, TraceEvent::Fix { .. })).count() as u64;
        writer.write_all(&txn).map_err(|e| e.to_string())?;
    }
    let bytes = writer.finish().map_err(|e| e.to_string())?;
    Ok((bytes, fixes, started.elapsed().as_secs_f64()))
}

fn timed_run(config: SimConfig) -> Result<(u64, f64), String> {
    let mut sim = Simulation::new(config, COMMIT)?;
    let started = Instant::now();
    let result = sim.run(|_| {})?;
    let seconds = started.elapsed().as_secs_f64();
    Ok((sim.pool().counters().requests.max(result.requests), seconds))
}

/// Runs the three measurements of about `requests` buffer requests each
/// and writes one line per measurement to `out` as it finishes.
pub fn run(requests: u64, out: &mut dyn Write) -> Result<(), String> {
    if requests == 0 {
        return Err("--requests 0: at least one request is needed".into());
    }
    writeln!(
        out,
        "flushwise sim bench: commit={COMMIT}, TPC-C {WAREHOUSES} warehouses, {AGENTS} agents, 64 MiB pool, \
         {}, ssd, one thread",
        BENCH_POLICY
    )
    .map_err(|e| format!("cannot write the report: {e}"))?;

    // (a) trace replay from an in-memory generated trace.
    let (bytes, fixes, gen_seconds) = generate_trace(requests)?;
    report(out, "model generation + encoding", fixes, gen_seconds)?;
    let path = std::env::temp_dir().join(format!("flushwise-bench-{}.fwt", std::process::id()));
    std::fs::write(&path, &bytes).map_err(|e| format!("{}: cannot write the bench trace: {e}", path.display()))?;
    let replay = SimConfig {
        workload: WorkloadSpec::Trace { path: path.clone() },
        // Long enough for the replay to run until its first agent has no
        // record left (the run ends there).
        duration_us: 3_600_000_000,
        report_interval_us: 60_000_000,
        ..base_config()
    };
    let replayed = timed_run(replay);
    let _ = std::fs::remove_file(&path);
    let (replayed_requests, seconds) = replayed?;
    report(out, "(a) trace replay (simulated)", replayed_requests, seconds)?;

    // (b) on-line TPC-C generation; (c) the same with a pool that holds
    // almost the whole database, where misses and synchronous writes are
    // rare: the gap between (b) and (c) is the cost of the miss path.
    let hot = SimConfig {
        workload: WorkloadSpec::tpcc(1),
        buffer_pool_bytes: 96 << 20,
        ..base_config()
    };
    for (label, base) in [
        ("(b) on-line TPC-C (simulated)", base_config()),
        ("(c) on-line TPC-C, 1 wh, 96 MiB", hot),
    ] {
        let pilot = SimConfig {
            duration_us: 2_000_000,
            ..base.clone()
        };
        let (pilot_requests, _) = timed_run(pilot)?;
        let per_sim_second = (pilot_requests as f64 / 2.0).max(1.0);
        let duration_us = ((requests as f64 / per_sim_second) * 1e6).ceil().max(1e6) as u64;
        let (timed_requests, seconds) = timed_run(SimConfig { duration_us, ..base })?;
        report(out, label, timed_requests, seconds)?;
    }
    Ok(())
}
