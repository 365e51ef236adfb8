//! `tpcc crash`: the recovery bound, measured. Each round starts `flushwise
//! tpcc run` on the database as a child process (this binary, the same
//! engine flags), kills it with SIGKILL after `--kill-after`, reopens the
//! database with the run's options and times the open, which is crash
//! recovery (doublewrite repair, redo from the checkpoint, undo of the
//! losers). A round prints the recovery time, the redo bytes applied and,
//! with `--max-recovery-time`, whether the bound held. The database is
//! reused: each round continues from the recovered state.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flushwise_engine::db::recovery_profile::RecoveryProfile;
use flushwise_engine::db::Database;
use flushwise_lab::crash_rounds::{self, CrashRound};
use flushwise_lab::database;

use crate::args::{OutputFormat, TpccCrashArgs};
use crate::engine_opts;

/// Flags of `tpcc crash` that `tpcc run` does not take, with a value each.
const CRASH_ONLY_FLAGS: [&str; 4] = ["--kill-after", "--repeat", "--duration", "--output"];

/// `tpcc run`'s arguments for the child: ours after `tpcc crash`, without
/// the crash-only flags, with a run long enough to be killed.
fn child_args(raw: &[String]) -> Result<Vec<String>, String> {
    let at = raw
        .windows(2)
        .position(|w| w[0] == "tpcc" && w[1] == "crash")
        .ok_or("tpcc crash: cannot find `tpcc crash` in the command line")?;
    let mut out = vec!["tpcc".to_string(), "run".to_string()];
    let mut rest = raw[at + 2..].iter();
    while let Some(arg) = rest.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        if CRASH_ONLY_FLAGS.contains(&name) {
            if !arg.contains('=') {
                rest.next();
            }
            continue;
        }
        out.push(arg.clone());
    }
    out.extend(["--duration", "24h", "--output", "json"].map(String::from));
    Ok(out)
}

/// The recovery costs the next run's policy plans with, and where they
/// come from (the engine's own rule at open,
/// `recovery_profile::policy_costs`): fixed part, apply rate, page read
/// cost. `None` if the policy has none.
fn planned_costs(
    policy: &flushwise_core::policy::PolicySpec,
    options: &flushwise_engine::db::DbOptions,
    dir: &std::path::Path,
) -> Option<[(f64, &'static str); 3]> {
    let redo_dir = options.redo_dir.as_deref().unwrap_or(dir);
    let plan = RecoveryProfile::load(&RecoveryProfile::path_in(redo_dir))
        .map(|p| p.plan())
        .unwrap_or_default();
    match flushwise_engine::db::recovery_profile::policy_costs(policy, plan).as_slice() {
        [(_, fixed, a), (_, rate, b), (_, page, c)] => Some([(*fixed, a.name()), (*rate, b.name()), (*page, c.name())]),
        _ => None,
    }
}

pub fn crash(args: &TpccCrashArgs) -> Result<(), String> {
    let kill_after = Duration::from_micros(
        flushwise_sim::units::parse_duration_us(&args.kill_after)
            .map_err(|e| format!("--kill-after {}: {e}", args.kill_after))?,
    );
    if args.repeat == 0 {
        return Err("--repeat 0: give at least one round".into());
    }
    let dir = &args.location.dir;
    let manifest = database::Manifest::read(dir)?;
    let mut options = engine_opts::run_options(&args.location, &args.engine, &args.policy, &manifest)?;
    // The child resizes the redo log (`--redo`) on a cleanly closed
    // database; the reopen after a kill must recover first, never resize.
    options.resize_redo_at_open = false;
    let policy = options.policy.clone();
    let bound_s = policy
        .params()
        .decls()
        .any(|d| d.key == flushwise_core::policy::MAX_RECOVERY_TIME_KEY)
        .then(|| policy.params().f64(flushwise_core::policy::MAX_RECOVERY_TIME_KEY));
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let raw: Vec<String> = std::env::args().collect();
    let child = child_args(&raw)?;
    let log_path = dir.join("crash-run.log");
    let mut rounds = Vec::new();
    for round in 1..=args.repeat {
        let planned = planned_costs(&policy, &options, dir);
        let log = std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        eprintln!(
            "round {round}/{}: `flushwise {}` for {:.0} s, then SIGKILL (its stderr: {})",
            args.repeat,
            child.join(" "),
            kill_after.as_secs_f64(),
            log_path.display()
        );
        let started = Instant::now();
        let mut run = Command::new(&exe)
            .args(&child)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start the run: {e}"))?;
        // Sleep in slices so that a run that dies early is seen at once.
        while started.elapsed() < kill_after {
            if let Some(status) = run.try_wait().map_err(|e| format!("waiting for the run: {e}"))? {
                return Err(format!(
                    "the run ended by itself ({status}) before it could be killed; see {}",
                    log_path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Child::kill sends SIGKILL on Unix: no cleanup, no flush, no close.
        run.kill().map_err(|e| format!("cannot kill the run: {e}"))?;
        let _ = run.wait();
        let killed_after_s = started.elapsed().as_secs_f64();
        let opened = Instant::now();
        let db = Database::open(dir, options.clone()).map_err(|e| format!("{}: reopening: {e}", dir.display()))?;
        let recovery_s = opened.elapsed().as_secs_f64();
        let report = db.recovery_report().clone();
        let phases = report.phases;
        if let Some(e) = &report.profile_error {
            eprintln!("warning: {e}");
        }
        db.close()
            .map_err(|e| format!("{}: closing after recovery: {e}", dir.display()))?;
        let r = CrashRound {
            round,
            policy: policy.to_string(),
            killed_after_s,
            recovery_s,
            redo_bytes_applied: report.redo_bytes_applied,
            records_applied: report.records_applied,
            losers_rolled_back: report.losers_rolled_back,
            pages_repaired_from_doublewrite: report.pages_repaired_from_doublewrite,
            redo_apply_mb_per_s: report.redo_bytes_applied as f64 / 1e6 / recovery_s.max(1e-9),
            planned_fixed_s: planned.map(|[(fixed, _), _, _]| fixed),
            planned_redo_apply_mib_per_s: planned.map(|[_, (rate, _), _]| rate),
            planned_page_read_us: planned.map(|[_, _, (page, _)]| page),
            planned_from: planned.map(|[(_, a), (_, b), (_, c)]| {
                if a == b && b == c {
                    a.to_string()
                } else {
                    format!("{a}/{b}/{c}")
                }
            }),
            log_scan_s: phases.log_scan.as_secs_f64(),
            redo_read_ahead_s: phases.redo_page_reads.as_secs_f64(),
            redo_pages_named: report.redo_pages_named,
            redo_pages_read: report.redo_pages_read,
            redo_pages_read_while_applying: report.redo_pages_read_while_applying,
            redo_apply_s: phases.redo_apply.as_secs_f64(),
            free_page_scan_s: phases.free_page_scan.as_secs_f64(),
            undo_s: phases.undo.as_secs_f64(),
            checkpoint_s: phases.checkpoint.as_secs_f64(),
            other_s: (recovery_s
                - (phases.log_scan
                    + phases.redo_page_reads
                    + phases.redo_apply
                    + phases.free_page_scan
                    + phases.undo
                    + phases.checkpoint)
                    .as_secs_f64())
            .max(0.0),
            max_recovery_s: bound_s,
            within_bound: bound_s.map(|b| recovery_s <= b),
        };
        eprintln!(
            "round {round}: recovered in {:.2} s: {} redo bytes ({} records applied, {} losers rolled back){}",
            r.recovery_s,
            r.redo_bytes_applied,
            r.records_applied,
            r.losers_rolled_back,
            match bound_s {
                Some(b) if r.recovery_s <= b => format!(", within the {b} s bound"),
                Some(b) => format!(", PAST the {b} s bound"),
                None => String::new(),
            }
        );
        rounds.push(r);
    }
    print_rounds(&rounds, args.engine.output)?;
    if rounds.iter().any(|r| r.within_bound == Some(false)) {
        return Err("recovery took longer than --max-recovery-time in at least one round".into());
    }
    Ok(())
}

fn print_rounds(rounds: &[CrashRound], format: OutputFormat) -> Result<(), String> {
    let text = match format {
        OutputFormat::Json => crash_rounds::json_lines(rounds)?,
        OutputFormat::Csv => crash_rounds::csv(rounds),
        OutputFormat::Table => crash_rounds::table(rounds),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| format!("cannot write the report: {e}"))
}
