//! TPC-C on the flushwise engine: prepare (with a progress bar), run, check.
//!
//! `cargo run --release -p flushwise-workloads --example tpcc_engine -- [WAREHOUSES] [SECONDS] [CONNECTIONS]`

use std::sync::Arc;
use std::time::Duration;

use flushwise_engine::db::{Database, DbOptions};
use flushwise_workloads::tpcc::{self, LoadConfig, RunConfig};
use indicatif::{ProgressBar, ProgressStyle};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let warehouses = args.first().copied().unwrap_or(1) as u32;
    let seconds = args.get(1).copied().unwrap_or(10);
    let connections = args.get(2).copied().unwrap_or(4) as u32;
    let dir = tempfile::tempdir()?;
    let options = DbOptions {
        buffer_pool_bytes: 512 << 20,
        redo_bytes: 256 << 20,
        ..DbOptions::default()
    };
    let db = Arc::new(Database::create(dir.path(), options)?);

    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} rows {per_sec} eta {eta} {msg}",
    )?);
    let load = tpcc::prepare(
        db.as_ref(),
        &LoadConfig {
            warehouses,
            ..LoadConfig::default()
        },
        &|p| {
            bar.set_length(p.rows_expected);
            bar.set_position(p.rows_loaded);
            bar.set_message(format!("{}/{} indexes", p.indexes_done, p.indexes_total));
        },
    )?;
    bar.finish();
    println!(
        "loaded {} rows in {:.1} s: {:.0} rows/s ({} threads)",
        load.rows_loaded, load.elapsed_s, load.rows_per_s, load.threads
    );

    let report = tpcc::run(
        &db,
        &RunConfig {
            connections,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(seconds),
            report_interval: Duration::from_secs(5),
            ..RunConfig::default()
        },
        None,
        &mut |i| {
            println!(
                "[{:>5.1} s{}] nopm {:>8.0} tpm_total {:>8.0} retries {} rollbacks {}",
                i.elapsed_s,
                if i.warmup { " warm-up" } else { "" },
                i.nopm,
                i.tpm_total,
                i.retries,
                i.rollbacks
            );
            tpcc::AfterInterval::Continue
        },
    )?;
    println!("{}", serde_json_like(&report));
    let check = tpcc::check(db.as_ref(), false)?;
    println!(
        "check: {} violations over {} rows",
        check.violations_total, check.rows_read
    );
    for v in check.violations.iter().take(10) {
        println!("  {v}");
    }
    Ok(())
}

fn serde_json_like(r: &tpcc::RunReport) -> String {
    let mut s = format!(
        "nopm {:.0}, tpm_total {:.0}, commits {}, rollbacks {}, retries {}, errors {}\n",
        r.nopm, r.tpm_total, r.commits, r.rollbacks, r.retries, r.errors
    );
    for l in &r.latency {
        s.push_str(&format!(
            "  {:<12} n {:>7} p50 {:>7} us p95 {:>7} us p99 {:>7} us max {:>7} us\n",
            l.kind, l.count, l.p50_us, l.p95_us, l.p99_us, l.max_us
        ));
    }
    s
}
