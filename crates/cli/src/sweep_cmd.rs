//! `sim sweep --grid FILE`: a grid of simulator runs (the lab's
//! [`flushwise_lab::sweep`]) on threads, one CSV table, the same table the
//! Python package's `flushwise-sweep` makes with Ray.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use flushwise_lab::render::write_file;
use flushwise_lab::sim_runner::default_jobs;
use flushwise_lab::sweep;

/// What `sim sweep` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepOutput {
    /// One header and one row per run.
    Csv,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The grid: a JSON object of `sim run` options (`buffer_pool`, not
    /// `--buffer-pool`); a list is an axis (flushwise_lab::sweep).
    #[arg(long, value_name = "FILE")]
    pub grid: PathBuf,
    /// Runs in parallel (default: available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[arg(long, value_enum, default_value = "csv")]
    pub output: SweepOutput,
    /// Write the table to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn sweep(args: &SweepArgs) -> Result<(), String> {
    // CSV is the one table format (the lab's experiments write CSV too).
    let SweepOutput::Csv = args.output;
    let text =
        std::fs::read_to_string(&args.grid).map_err(|e| format!("--grid {}: cannot read: {e}", args.grid.display()))?;
    let runs = sweep::parse(&text).map_err(|e| format!("--grid {}: {e}", args.grid.display()))?;
    let started = std::time::Instant::now();
    eprintln!(
        "flushwise sim sweep: {} runs, commit {}",
        runs.len(),
        flushwise_lab::COMMIT
    );
    let table = sweep::run(&runs, args.jobs.unwrap_or_else(default_jobs), |done, total| {
        eprintln!("sweep: {done}/{total} runs, {:.0} s", started.elapsed().as_secs_f64());
    })?;
    match &args.out {
        Some(path) => write_file(path, &table, "--out"),
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an input error.
            let _ = stdout.write_all(table.as_bytes());
            let _ = stdout.flush();
            Ok(())
        }
    }
}
