//! `insert prepare | run | check`: paper 004's insert load on the real
//! engine, with the change buffer off or on.
//!
//! `prepare` creates the directory's database and bulk-loads the table
//! (`--force` wipes one that is there); `run` opens it with the run's
//! settings and change buffer, inserts rows on `--threads` threads and
//! prints 004's Tables 1 and 2 for the measured window (`--check` checks
//! the table before the close); `check` checks every secondary entry
//! against its row. With `--output json|csv`, stdout carries only the
//! result; the banner and the interval lines go to stderr. A failed check
//! prints every mismatch on stderr and exits 2.

use std::io::Write as _;
use std::time::Duration;

use flushwise_lab::insert::{self, InsertPrepareSpec, InsertRunSettings};
use flushwise_lab::render::{flatten_objects, Csv};
use flushwise_lab::workload_dir::LoadFlags;
use flushwise_lab::COMMIT;
use flushwise_sim::options::duration_flag;
use flushwise_workloads::insert::driver::RunConfig;

use crate::args::{InsertCheckArgs, InsertPrepareArgs, InsertRunArgs, OnOff, OutputFormat};

pub fn prepare(args: &InsertPrepareArgs) -> Result<(), String> {
    let threads = args
        .threads
        .unwrap_or_else(flushwise_lab::sim_runner::default_jobs)
        .max(1);
    let spec = InsertPrepareSpec {
        rows: args.rows,
        secondary_indexes: args.secondary_indexes,
        row_bytes: args.row_bytes,
        seed: args.seed,
        threads,
        load: LoadFlags {
            page_size: &args.page_size,
            redo: &args.redo,
            buffer_pool: &args.buffer_pool,
            force: args.force,
        },
    };
    let (_, summary) = insert::prepare(&args.location.location(), &spec)?;
    println!("{summary}");
    Ok(())
}

/// The driver's configuration from the flags; errors name the flag.
fn run_config(args: &InsertRunArgs) -> Result<RunConfig, String> {
    let duration = Duration::from_micros(duration_flag("--duration", &args.duration)?);
    if duration.is_zero() {
        return Err(format!("--duration {}: must be positive", args.duration));
    }
    let report_interval = Duration::from_micros(duration_flag("--report-interval", &args.report_interval)?);
    if report_interval < Duration::from_millis(100) {
        return Err(format!("--report-interval {}: at least 100ms", args.report_interval));
    }
    let mut config = RunConfig::new(args.threads, duration, args.seed);
    config.warmup = Duration::from_micros(duration_flag("--warmup", &args.warmup)?);
    config.report_interval = report_interval;
    config.update_pct = u8::try_from(args.update_pct)
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| format!("--update-pct {}: from 0 to 100", args.update_pct))?;
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

pub fn run(args: &InsertRunArgs) -> Result<(), String> {
    let mut config = run_config(args)?;
    let change_buffer = insert::change_buffer_options(
        &args.change_buffer,
        args.change_buffer_max_pct,
        args.change_buffer_dir.as_deref(),
    )?;
    // From here on Ctrl-C / SIGTERM end the run early with a partial
    // result and a clean close.
    config.interrupt = Some(crate::interrupt::install()?);
    let settings = InsertRunSettings {
        buffer_pool: args.buffer_pool.clone(),
        redo: args.redo.clone(),
        device: args.device.clone(),
        doublewrite: args.doublewrite == OnOff::On,
        flush_log_at_commit: args.flush_log_at_commit,
        max_recovery_time: args.max_recovery_time.clone(),
        policy: args.policy.clone(),
        change_buffer,
        config,
        check: args.check,
    };
    let table = args.output == OutputFormat::Table;
    let mut on_start = |config_hash: &str| {
        let banner = format!(
            "flushwise insert run: threads={} update_pct={} seed={} config_hash={config_hash} commit={} policy={} change_buffer={} pool={} device={} warmup={} duration={} dir={}",
            args.threads,
            args.update_pct,
            args.seed,
            COMMIT,
            args.policy,
            args.change_buffer,
            args.buffer_pool,
            args.device.join(" "),
            args.warmup,
            args.duration,
            args.location.dir.display()
        );
        if table {
            println!("{banner}");
        } else {
            eprintln!("{banner}");
        }
    };
    let mut on_interval = |i: &flushwise_workloads::insert::driver::Interval| {
        let line = insert::interval_line(i);
        if table {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    };
    let (out, consistency) = insert::run(&args.location.location(), &settings, &mut on_start, &mut on_interval)?;
    let text = match args.output {
        OutputFormat::Table => format!("\n{}", insert::run_text(&out)),
        OutputFormat::Json => serde_json::to_string(&out).map_err(|e| format!("cannot render JSON: {e}"))? + "\n",
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            csv.push(flatten_objects(&out));
            csv.render()
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    if let Some(report) = &consistency {
        insert::check_verdict(report)?;
    }
    Ok(())
}

pub fn check(args: &InsertCheckArgs) -> Result<(), String> {
    let report = insert::check(&args.location.location())?;
    println!("{}", insert::check_verdict(&report)?);
    Ok(())
}
