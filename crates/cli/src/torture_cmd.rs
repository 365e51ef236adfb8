//! `flushwise torture` and `flushwise ioerr-sweep`: `torture` runs [`flushwise_lab::torture`] with a progress
//! bar on stderr and prints its report (table, JSON or CSV on stdout).
//! A torture that found a lost commit, an uncommitted effect, a broken
//! invariant or a failed recovery exits 1 after printing the report.

use std::io::Write as _;

use flushwise_lab::sim_runner::{count_bar, progress_enabled};
use flushwise_lab::torture::{self, SweepConfig, TortureConfig};

use crate::args::{IoerrSweepArgs, OutputFormat, TortureArgs};

pub fn torture(args: &TortureArgs) -> Result<(), String> {
    let cfg = TortureConfig {
        crash_points: args.crash_points,
        seed: args.seed,
        workload: args.workload,
        threads: args.threads,
        txns_per_thread: args.txns_per_thread,
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        flush_log_at_trx_commit: args.flush_log_at_trx_commit,
        lying_fsync: args.lying_fsync,
        policy: args.policy.clone(),
        doublewrite: !args.no_doublewrite,
    };
    cfg.validate()?;
    eprintln!(
        "torture: {} crash points, workload {}, policy {}, {} threads x {} transactions, seed {}, {} at once",
        cfg.crash_points,
        cfg.workload.as_str(),
        cfg.policy,
        cfg.threads,
        cfg.txns_per_thread,
        cfg.seed,
        cfg.jobs
    );
    let bar = progress_enabled().then(|| count_bar(cfg.crash_points, "crash points"));
    // Without a terminal, a line every 5 % (for runs left in the background).
    let step = (cfg.crash_points / 20).max(1);
    let started = std::time::Instant::now();
    let report = torture::run(&cfg, &|done, total| match &bar {
        Some(bar) => bar.set_position(done),
        None if done % step == 0 => {
            eprintln!(
                "torture: {done}/{total} crash points, {:.0} s",
                started.elapsed().as_secs_f64()
            )
        }
        None => {}
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    print_report(
        args.output,
        &torture::render_text(&report),
        &torture::render_json(&report),
        &torture::render_csv(&report),
    )?;
    if report.passed() {
        Ok(())
    } else {
        eprintln!(
            "torture FAILED: {} of {} crash points found a problem (listed above)",
            report.failures_total, report.crash_points
        );
        std::process::exit(1)
    }
}

pub fn ioerr_sweep(args: &IoerrSweepArgs) -> Result<(), String> {
    let cfg = SweepConfig {
        workload: args.workload,
        faults: args.faults.clone(),
        txns: args.txns,
        seed: args.seed,
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        max_points: args.max_points,
        include_open: args.include_open,
    };
    eprintln!(
        "ioerr-sweep: workload {}, {} transactions, faults {}, seed {}",
        cfg.workload.as_str(),
        cfg.txns,
        cfg.faults.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(","),
        cfg.seed
    );
    let report = torture::io_error_sweep(&cfg, &|fault, n| {
        if n % 100 == 0 && progress_enabled() {
            eprint!("\r{}: N = {n}   ", fault.as_str());
        }
    })?;
    if progress_enabled() {
        eprintln!();
    }
    print_report(
        args.output,
        &torture::render_sweep_text(&report),
        &torture::render_sweep_json(&report),
        &torture::render_sweep_csv(&report),
    )?;
    if report.passed() {
        Ok(())
    } else {
        eprintln!("ioerr-sweep FAILED (rows above)");
        std::process::exit(1)
    }
}

/// The report on stdout in the chosen format; with JSON or CSV the table
/// goes to stderr as well, so a person still sees it.
fn print_report(output: OutputFormat, table: &str, json: &str, csv: &str) -> Result<(), String> {
    let text = match output {
        OutputFormat::Table => table.to_string(),
        OutputFormat::Json => format!("{json}\n"),
        OutputFormat::Csv => csv.to_string(),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing the report: {e}"))?;
    if output != OutputFormat::Table {
        eprint!("{table}");
    }
    Ok(())
}
