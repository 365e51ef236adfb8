//! `lab list`, `lab run NAME|all` and `lab report`: the papers' figures and
//! tables (the catalog), the papers' grids as tables (the same grids as
//! `sim experiment`), the tuned oracle and the own-policy matrix, by name.
//! Reports go to stdout as tables, or to stderr when stdout carries the CSV
//! (`--output csv`).

use std::io::Write;

use flushwise_lab::catalog::{self, Claim};
use flushwise_lab::experiment;
use flushwise_lab::figures::{self, LabRequest};
use flushwise_lab::own_policy_matrix::{self as matrix, MatrixRequest};

use crate::args::{LabListArgs, LabOutput, LabReportArgs, LabRunArgs};
use crate::lab_engine;

/// The lab's own experiments, beside the papers' figures and grids.
const LAB_EXPERIMENTS: &[(&str, &str)] = &[
    (
        flushwise_lab::tpch_fig10::NAME,
        "Lee et al. (000) Figure 10: TPC-H throughput (queries per hour) of mysql56, \
         percona56, self-tuning and flushwise on the engine (SF 0.2, 4 streams, 1 GiB pool; \
         --full: SF 1, 10 streams, 4 GiB), runs interleaved; not part of `all`",
    ),
    (
        flushwise_lab::wisconsin_lab::NAME,
        "Paper 003 on the engine: the Wisconsin UPDATE load on the emulated HDD under mysql51 \
         (MySQL 5.1, 003's server): saturated, single-job, three open-loop rates and three \
         populations; 003's model fitted (Table 1, KS distances); flushwise at the same rates \
         (~17 min; --full ~40 min); not part of `all`",
    ),
    (
        flushwise_lab::insert_lab::NAME,
        "Paper 004 on the engine: the insert load (3 secondary indexes, 16 threads, 32 MiB pool) \
         with the change buffer off, on and on its own RAM-disk device, on this disk and the \
         emulated HDD: Tables 1, 3, 4 (transactions/s) and Table 2 (pages by type), runs \
         interleaved (~17 min; --full ~80 min); not part of `all`",
    ),
    (
        flushwise_lab::fidelity::NAME,
        "Issue #18: engine TPC-C runs (10 warehouses, 16 connections, 32 and 64 MiB pools, \
         mysql56, percona56, self-tuning, flushwise, 2 interleaved repeats, 10 s + 40 s) against \
         the simulator's replay of each run's trace on this disk's calibrated model \
         (DIR/calibrated.toml, calibrated if absent): NOPM, hit ratio, I/O per txn, dirty and \
         sync-write shares checked against the issue's bounds, the policies' ranking \
         (~20 min; --full 3 repeats of 30 s + 120 s); not part of `all`",
    ),
    (
        matrix::ORACLE_NAME,
        "Issue #12: the tuned oracle, a grid search over mysql56 and percona56's \
         innodb_lru_scan_depth x innodb_io_capacity in every matrix cell (simulator)",
    ),
    (
        matrix::MATRIX_NAME,
        "Issue #12: every policy at its defaults and the tuned oracle, devices \
         {samsung-850-pro, nvme-generic, wd-1tb-7200} x sizes {1,2,4,8}% x loads \
         {tpcc-io-bound, tpcc-in-memory, read-mostly} (simulator); CSV + SVG + PNG",
    ),
];

fn io_err(e: std::io::Error) -> String {
    format!("cannot write the report: {e}")
}

/// The paper's numbers an entry checks, in one line.
fn paper_numbers(claims: &[Claim]) -> String {
    let parts: Vec<&str> = claims
        .iter()
        .map(|c| match c {
            Claim::Ratio { text, .. } | Claim::AtMost { text, .. } | Claim::Within { text, .. } => *text,
        })
        .collect();
    if parts.is_empty() {
        "none in the text (the figure is the result)".into()
    } else {
        parts.join("; ")
    }
}

pub fn list(args: &LabListArgs) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "The papers' figures and tables (`flushwise lab run NAME`, or `all`; then `flushwise lab report`):"
    )
    .map_err(io_err)?;
    let mut scales: Vec<(&str, String)> = Vec::new();
    for e in catalog::ENTRIES {
        let scale = match scales.iter().find(|(s, _)| *s == e.study) {
            Some((_, text)) => text.clone(),
            None => {
                let text = if e.on_engine() {
                    catalog::engine_study(e.study, false)?.scale
                } else {
                    catalog::study(e.study, false, args.seed)?.scale
                };
                scales.push((e.study, text.clone()));
                text
            }
        };
        let shell = if e.on_engine() { "engine" } else { "simulator" };
        writeln!(out, "{:<22} {}: {}", e.name, e.reproduces, e.title).map_err(io_err)?;
        writeln!(out, "{:<22} {shell}, study {}; {scale}", "", e.study).map_err(io_err)?;
        writeln!(out, "{:<22} paper: {}", "", paper_numbers(e.claims)).map_err(io_err)?;
    }
    writeln!(
        out,
        "\nThe papers' grids as tables (the same as `flushwise sim experiment NAME`):"
    )
    .map_err(io_err)?;
    experiment::list(args.seed, &mut out)?;
    writeln!(out, "\nThe lab's own:").map_err(io_err)?;
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

/// An engine experiment of `LAB_EXPERIMENTS` (its own CSV is written to
/// `OUT/NAME/csv_file`, so `--output csv` is refused), progress on stderr.
fn engine_entry<R>(
    args: &crate::args::ExperimentArgs,
    csv_only: bool,
    csv_file: &str,
    run: impl FnOnce(&mut dyn FnMut(&str)) -> Result<R, String>,
) -> Result<R, String> {
    if csv_only {
        return Err(format!(
            "lab run {}: its CSV is written to {}/{}/{csv_file}; use --output table",
            args.name,
            args.out.display(),
            args.name
        ));
    }
    run(&mut |line| eprintln!("{line}"))
}

/// An engine experiment's report and the files it wrote, on stdout.
fn print_engine_report(text: &str, files: &[std::path::PathBuf]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}").map_err(io_err)?;
    for f in files {
        writeln!(out, "wrote {}", f.display()).map_err(io_err)?;
    }
    Ok(())
}

/// `all`: every catalog entry, then the own-policy matrix.
const ALL: &str = "all";

pub fn run(lab: &LabRunArgs) -> Result<(), String> {
    let args = &lab.grid;
    let entry_names: Vec<&str> = catalog::ENTRIES.iter().map(|e| e.name).collect();
    let known: Vec<&str> = std::iter::once(ALL)
        .chain(entry_names.iter().copied())
        .chain(
            experiment::EXPERIMENTS
                .iter()
                .chain(LAB_EXPERIMENTS)
                .map(|(name, _)| *name),
        )
        .collect();
    if !known.contains(&args.name.as_str()) {
        return Err(format!(
            "lab run {}: no such experiment; accepted are {} (`flushwise lab list` describes them)",
            args.name,
            known.join(", ")
        ));
    }
    let csv_only = lab.output == LabOutput::Csv;
    if lab.seeds != 1 && args.name != matrix::MATRIX_NAME {
        return Err(format!(
            "lab run {}: --seeds replicates cells of {} only",
            args.name,
            matrix::MATRIX_NAME
        ));
    }
    // `002-table4` is both a catalog entry (figure, verdicts) and a grid
    // (`sim experiment`'s table and CSV): `--output csv` asks for the grid.
    let is_grid = experiment::EXPERIMENTS.iter().any(|(n, _)| *n == args.name);
    let is_entry = entry_names.contains(&args.name.as_str());
    if args.name == ALL || (is_entry && !(csv_only && is_grid)) {
        if csv_only {
            return Err(format!(
                "lab run {}: --output csv is for the grids and the matrix; a figure's CSVs are written to {}/NAME/",
                args.name,
                args.out.display()
            ));
        }
        let chosen: Vec<&'static catalog::Entry> = catalog::ENTRIES
            .iter()
            .filter(|e| args.name == ALL || e.name == args.name)
            .collect();
        let request = LabRequest {
            entries: chosen
                .iter()
                .filter(|e| !e.on_engine())
                .map(|e| e.name.to_string())
                .collect(),
            full: args.full,
            seed: args.seed,
            jobs: args.jobs,
            out: args.out.clone(),
        };
        let started = std::time::Instant::now();
        let mut notes = Vec::new();
        if !request.entries.is_empty() {
            let done = figures::run(&request)?;
            print_results(&done.results)?;
            notes.extend(done.notes);
            eprintln!(
                "lab: simulator entries: {} drawn, {} of {} runs simulated now (the rest cached or shared), {:.0} s",
                done.results.len(),
                done.runs_done,
                done.runs_total,
                done.wall_seconds
            );
        }
        let on_engine: Vec<&'static catalog::Entry> = chosen.iter().copied().filter(|e| e.on_engine()).collect();
        if !on_engine.is_empty() {
            let done = lab_engine::run(&on_engine, &request, &lab.dir)?;
            print_results(&done.results)?;
            notes.extend(done.notes);
            eprintln!(
                "lab: engine entries: {} drawn, {} of {} runs made now (the rest cached)",
                done.results.len(),
                done.runs_done,
                done.runs_total
            );
        }
        if args.name == ALL {
            run_matrix(args, matrix::MATRIX_NAME, false, 1)?;
            let path = figures::report(&args.out)?;
            eprintln!("wrote {}", path.display());
        }
        let mut out = std::io::stdout().lock();
        for note in &notes {
            writeln!(out, "note: {note}").map_err(io_err)?;
        }
        writeln!(
            out,
            "lab run {}: {} entries into {} in {:.0} s, commit {}",
            args.name,
            chosen.len(),
            args.out.display(),
            started.elapsed().as_secs_f64(),
            flushwise_lab::COMMIT
        )
        .map_err(io_err)?;
        if !notes.is_empty() {
            return Err(format!("{} problem(s), listed above as notes", notes.len()));
        }
        return Ok(());
    }
    if args.name == flushwise_lab::tpch_fig10::NAME {
        let report = engine_entry(args, csv_only, "runs.csv", |progress| {
            flushwise_lab::tpch_fig10::run(args.full, args.seed, &lab.dir, &args.out, progress)
        })?;
        return print_engine_report(&flushwise_lab::tpch_fig10::report_text(&report), &report.files);
    }
    if args.name == flushwise_lab::wisconsin_lab::NAME {
        let report = engine_entry(args, csv_only, "rates.csv", |progress| {
            flushwise_lab::wisconsin_lab::run(args.full, args.seed, &lab.dir, &args.out, progress)
        })?;
        return print_engine_report(&flushwise_lab::wisconsin_lab::report_text(&report), &report.files);
    }
    if args.name == flushwise_lab::insert_lab::NAME {
        let report = engine_entry(args, csv_only, "runs.csv", |progress| {
            flushwise_lab::insert_lab::run(args.full, args.seed, &lab.dir, &args.out, progress)
        })?;
        return print_engine_report(&flushwise_lab::insert_lab::report_text(&report), &report.files);
    }
    if args.name == flushwise_lab::fidelity::NAME {
        let scale = flushwise_lab::fidelity::FidelityScale::new(args.full);
        let report = engine_entry(args, csv_only, "runs.csv", |progress| {
            flushwise_lab::fidelity::run(&scale, args.seed, &lab.dir, &args.out, progress)
        })?;
        return print_engine_report(&flushwise_lab::fidelity::report_text(&report), &report.files);
    }
    if args.name == matrix::MATRIX_NAME || args.name == matrix::ORACLE_NAME {
        return run_matrix(args, &args.name, csv_only, lab.seeds);
    }
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

fn print_results(results: &[figures::EntryResult]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    for r in results {
        writeln!(out, "{}", figures::result_text(r)).map_err(io_err)?;
    }
    Ok(())
}

fn run_matrix(args: &crate::args::ExperimentArgs, name: &str, csv_only: bool, seeds: u32) -> Result<(), String> {
    let report = matrix::run(&MatrixRequest {
        name: name.to_string(),
        full: args.full,
        seed: args.seed,
        seeds,
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
}

pub fn report(args: &LabReportArgs) -> Result<(), String> {
    let path = figures::report(&args.out)?;
    println!("wrote {}", path.display());
    if args.check {
        let (ok, total) = figures::check_in_browser(&path)?;
        if total == 0 || ok < total {
            return Err(format!(
                "{}: {ok} of {total} figures loaded in headless Chromium",
                path.display()
            ));
        }
        println!("headless Chromium: {ok} of {total} figures loaded");
    }
    if let Some(png) = &args.screenshot {
        figures::screenshot(&path, args.at.as_deref(), 2400, png)?;
        println!("screenshot: {}", png.display());
    }
    if args.open {
        let status = std::process::Command::new("xdg-open").arg(&path).status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!(
                "cannot open a browser here (xdg-open failed); open {} yourself",
                path.display()
            );
        }
    }
    Ok(())
}
