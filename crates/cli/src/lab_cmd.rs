//! `lab list` and `lab run NAME`: the papers' experiments (the same grids
//! as `sim experiment`), the tuned oracle and the own-policy matrix, by
//! name. Reports go to stdout as tables, or to stderr when stdout carries
//! the CSV (`--output csv`).

use std::io::Write;

use flushwise_lab::experiment;
use flushwise_lab::own_policy_matrix::{self as matrix, MatrixRequest};

use crate::args::{LabListArgs, LabOutput, LabRunArgs};

/// The lab's own experiments, beside the papers' grids.
const LAB_EXPERIMENTS: &[(&str, &str)] = &[
    (
        matrix::ORACLE_NAME,
        "Issue #12: the tuned oracle, a grid search over mysql56 and percona56's \
         innodb_lru_scan_depth x innodb_io_capacity in every matrix cell (simulator)",
    ),
    (
        matrix::MATRIX_NAME,
        "Issue #12: every policy at its defaults and the tuned oracle, devices \
         {samsung-850-pro, nvme-generic, wd-1tb-7200} x sizes {1,2,4,8}% x loads \
         {tpcc-io-bound, tpcc-in-memory, read-mostly} (simulator); CSV + SVG",
    ),
];

fn io_err(e: std::io::Error) -> String {
    format!("cannot write the report: {e}")
}

pub fn list(args: &LabListArgs) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    experiment::list(args.seed, &mut out)?;
    for (name, about) in LAB_EXPERIMENTS {
        writeln!(out, "{name:<17} {about}").map_err(io_err)?;
    }
    let scale = matrix::cells(false, args.seed)?.len();
    writeln!(
        out,
        "{:<17} {scale} cells x {} policies + {} oracle settings; default scale ~15 min on 2 cores",
        "",
        flushwise_core::policy::names().count(),
        matrix::oracle_grid()?.len()
    )
    .map_err(io_err)
}

pub fn run(lab: &LabRunArgs) -> Result<(), String> {
    let args = &lab.grid;
    let known: Vec<&str> = experiment::EXPERIMENTS
        .iter()
        .chain(LAB_EXPERIMENTS)
        .map(|(name, _)| *name)
        .collect();
    if !known.contains(&args.name.as_str()) {
        return Err(format!(
            "lab run {}: no such experiment; accepted are {} (`flushwise lab list` describes them)",
            args.name,
            known.join(", ")
        ));
    }
    let csv_only = lab.output == LabOutput::Csv;
    if args.name == matrix::MATRIX_NAME || args.name == matrix::ORACLE_NAME {
        let report = matrix::run(&MatrixRequest {
            name: args.name.clone(),
            full: args.full,
            seed: args.seed,
            jobs: args.jobs,
            out: args.out.clone(),
        })?;
        let mut prose = format!(
            "flushwise lab run {} ({}), seed={}, commit={}\n",
            report.name,
            report.scale,
            args.seed,
            flushwise_lab::COMMIT
        );
        prose.push_str(&matrix::report_table(&report));
        for note in &report.notes {
            prose.push_str(&format!("note: {note}\n"));
        }
        prose.push_str(&format!(
            "{} of {} runs simulated now (the rest cached or shared), {:.0} s wall; wrote {}\n",
            report.runs_done,
            report.runs_total,
            report.wall_seconds,
            report
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if csv_only {
            eprint!("{prose}");
            std::io::stdout()
                .lock()
                .write_all(report.csv.as_bytes())
                .map_err(io_err)
        } else {
            std::io::stdout().lock().write_all(prose.as_bytes()).map_err(io_err)
        }
    } else {
        let request = args.request();
        if csv_only {
            experiment::run(&request, &mut std::io::stderr().lock())?;
            let path = args.out.join(format!("{}.csv", args.name));
            let text = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            std::io::stdout().lock().write_all(&text).map_err(io_err)
        } else {
            experiment::run(&request, &mut std::io::stdout().lock())
        }
    }
}
