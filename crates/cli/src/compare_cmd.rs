//! `flushwise compare`, the main job: argument handling around
//! `flushwise_lab::engine_compare` (what it does and why the default preset
//! is Lee et al.'s regime is documented there).

use std::fs;

use flushwise_lab::database::{self, human_bytes, Manifest};
use flushwise_lab::engine_compare::{
    compare_table, convergence_text, file_label, regime_text, results_dir, warmup_text, write_results, PolicyOutcome,
};
use flushwise_lab::engine_run::{self, EngineRunSpec};
use flushwise_lab::render::{self as output, write_path_text, Csv};
use flushwise_lab::steady::Warmup;
use flushwise_lab::COMMIT;

use crate::args::{DbLocationArgs, EngineCompareArgs, OutputFormat};
use crate::engine_opts;
use crate::tpcc_cmd;

/// Redo capacity the prepared database is created with: large enough that
/// at this scale checkpoints are not the only thing the cleaners do.
const COMPARE_REDO: &str = "256MiB";

/// The database `name` under `--dir`, its redo log under `--redo-dir/name`
/// when that is given (the prepared database and the run copy each have
/// their own log; sharing one would let a run write into the base's).
fn location(name: &str, args: &EngineCompareArgs) -> DbLocationArgs {
    DbLocationArgs {
        dir: args.dir.join(name),
        redo_dir: args.redo_dir.as_ref().map(|r| r.join(name)),
        io: args.io.clone(),
    }
}

/// The prepared base database: reused when its `prepare` finished; a
/// directory an interrupted `prepare` left is wiped and loaded again (under
/// its directory lock, so never while another process uses it).
fn prepared_base(args: &EngineCompareArgs, warehouses: u32) -> Result<(DbLocationArgs, Manifest), String> {
    let base = location(&format!("tpcc-w{warehouses}"), args);
    let state = database::prepared_state(&base.dir, base.redo_dir.as_deref());
    if state == database::PreparedState::Prepared {
        let manifest = Manifest::read(&base.dir)?;
        say(
            args,
            format!(
                "using the prepared database {} ({} warehouses, {}, loaded by commit {})",
                base.dir.display(),
                manifest.warehouses,
                human_bytes(manifest.database_bytes),
                manifest.commit
            ),
        );
        return Ok((base, manifest));
    }
    if state == database::PreparedState::Unfinished {
        eprintln!(
            "{}: a load that did not finish; wiping it and loading again",
            base.dir.display()
        );
    }
    let redo = engine_opts::size_flag_bytes(COMPARE_REDO)?;
    // Base plus one run copy.
    let run_redo = match &args.engine.redo {
        Some(r) => engine_opts::size_flag_bytes(r)?,
        None => redo,
    };
    let needed = 2 * database::database_bytes_estimate(warehouses, redo) + run_redo;
    database::require_free(
        &args.dir,
        needed,
        &format!("`compare` at {warehouses} warehouses (a database and one copy with its redo log)"),
    )?;
    say(
        args,
        format!(
            "preparing {warehouses} warehouses in {} (once; later runs reuse it)",
            base.dir.display()
        ),
    );
    let spec = tpcc_cmd::PrepareSpec {
        warehouses,
        threads: flushwise_lab::sim_runner::default_jobs(),
        seed: 1,
        page_size: "16384",
        redo: COMPARE_REDO,
        buffer_pool: "256MiB",
        force: true,
    };
    let (manifest, summary) = tpcc_cmd::prepare_database(&base, &spec)?;
    say(args, summary);
    Ok((base, manifest))
}

/// Prose and progress: stdout for a table, stderr when stdout carries JSON
/// or CSV only.
fn say(args: &EngineCompareArgs, text: String) {
    if args.engine.output == OutputFormat::Table {
        println!("{text}");
    } else {
        eprintln!("{text}");
    }
}

/// `args` with the preset's values wherever no flag was given.
fn with_preset(args: &EngineCompareArgs) -> (EngineCompareArgs, u32) {
    let preset = args.preset;
    let mut args = args.clone();
    let warehouses = args.warehouses.unwrap_or(preset.warehouses);
    args.engine
        .buffer_pool
        .get_or_insert_with(|| preset.buffer_pool.to_string());
    args.engine.warmup.get_or_insert_with(|| preset.warmup.to_string());
    args.engine.duration.get_or_insert_with(|| preset.duration.to_string());
    if args.engine.redo.is_none() {
        args.engine.redo = preset.redo.map(str::to_string);
    }
    (args, warehouses)
}

/// What [`run_policies`] leaves: each policy's outcome (in order) and the
/// sizes the regime lines need.
pub struct CompareOutcomes {
    pub outcomes: Vec<PolicyOutcome>,
    pub pool_bytes: u64,
    pub data_bytes: u64,
    pub page_bytes: u64,
    pub results_dir: std::path::PathBuf,
    /// The policy whose run failed, and why: the runs after it were not
    /// made; the ones before it are in `outcomes` and the results files.
    pub failure: Option<String>,
}

pub fn command(args: &EngineCompareArgs) -> Result<(), String> {
    let (args, _) = with_preset(args);
    let args = &args;
    let live = crate::live::Live::start(&args.metrics)?;
    let CompareOutcomes {
        outcomes,
        pool_bytes,
        data_bytes,
        page_bytes,
        results_dir,
        failure,
    } = run_policies(args, live.as_ref())?;
    let text = match args.engine.output {
        OutputFormat::Table => compare_table(&outcomes),
        OutputFormat::Json => output::json_lines(outcomes.iter().map(|o| (&o.out.result, o.out.rows.as_slice())))?,
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            for o in &outcomes {
                csv.push(output::flatten(&o.out.result));
            }
            csv.render()
        }
    };
    print!("{text}");
    for o in &outcomes {
        let r = &o.out.result;
        say(args, format!("{}: {}", r.policy, convergence_text(&o.out.rows)));
        say(
            args,
            format!(
                "{}: {}",
                r.policy,
                regime_text(pool_bytes, data_bytes, page_bytes, &r.figures, r.measured_seconds)
            ),
        );
        if let Some(w) = &r.write_path {
            say(args, format!("{}: {}", r.policy, write_path_text(w)));
        }
    }
    say(args, format!("results: {}", results_dir.display()));
    if let Some(l) = live {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        l.finish();
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    if let Some(failed) = outcomes.iter().find_map(|o| o.check.as_ref().err()) {
        return Err(failed.clone());
    }
    Ok(())
}

/// A policy of the sequence could not start or failed: says so, and
/// returns the error `compare` exits with. The policies before it are kept
/// (a failure at the fifth of six must not cost the four finished runs);
/// the ones after it are not run.
fn stop_sequence(
    args: &EngineCompareArgs,
    name: &str,
    what: &str,
    error: &dyn std::fmt::Display,
    kept: usize,
) -> String {
    say(
        args,
        format!("{name}: {what}: {error}; the remaining policies are not run, the {kept} finished are kept"),
    );
    format!("{name}: {error}")
}

/// Prepares (or reuses) the base database, then for each policy copies it,
/// runs it and checks the copy; writes the results directory. `args` must
/// already carry the preset's values (`command` does that; the lab sets
/// every value itself). `live` (`--metrics-addr`) is handed each policy's
/// run as it goes, labelled by the policy running.
pub fn run_policies(args: &EngineCompareArgs, live: Option<&crate::live::Live>) -> Result<CompareOutcomes, String> {
    let warehouses = args.warehouses.unwrap_or(args.preset.warehouses);
    let (run_config, steady_warmup_min) = tpcc_cmd::run_config(&args.engine)?;
    // A policy the flags do not fit (`--max-recovery-time` with one that
    // does not bound recovery) is refused before the first run, not when
    // its turn comes after an hour of others.
    let settings = args.engine.settings();
    for policy in &args.policies.0 {
        flushwise_lab::engine_options::with_recovery_bound(&settings, policy)?;
    }
    let (base, manifest) = prepared_base(args, warehouses)?;
    let copy = location("run", args);
    let run_redo = match &args.engine.redo {
        Some(r) => engine_opts::size_flag_bytes(r)?,
        None => 0,
    };
    database::require_free(
        &args.dir,
        manifest.database_bytes + run_redo + (64 << 20),
        "a copy of the prepared database (with its redo log)",
    )?;
    let pool_bytes = crate::args::size_flag("--buffer-pool", args.engine.buffer_pool())?;
    let data_path = base.dir.join("flushwise.data");
    let data_bytes = fs::metadata(&data_path)
        .map_err(|e| format!("{}: {e}", data_path.display()))?
        .len();
    say(
        args,
        format!(
            "workload (--preset {}): TPC-C, {} warehouses ({} of data pages), {} connections, pool {} = {:.1}% of the data, redo {}",
            args.preset.name,
            manifest.warehouses,
            human_bytes(data_bytes),
            args.engine.connections,
            human_bytes(pool_bytes),
            100.0 * pool_bytes as f64 / data_bytes.max(1) as f64,
            args.engine.redo.as_deref().unwrap_or("as prepared (256 MiB)")
        ),
    );
    say(
        args,
        format!(
            "each policy: copy the prepared database, warm up {}, measure {}, check consistency; commit={COMMIT}",
            Warmup::parse(args.engine.warmup()).map(|w| w.describe())?,
            args.engine.duration()
        ),
    );
    let results_dir = results_dir(&args.out)?;
    // From here on (the load is behind us) Ctrl-C / SIGTERM end the
    // policy's run early with its partial result, and no further policy
    // runs.
    let mut run_config = run_config;
    run_config.interrupt = Some(crate::interrupt::install()?);
    let publish = |sample: &flushwise_sim::LiveSample| {
        if let Some(l) = live {
            l.publish(sample);
        }
    };
    let mut outcomes = Vec::new();
    let mut failure = None;
    for policy in &args.policies.0 {
        let name = &policy.to_string();
        let prepared = (|| {
            // The base must not change while it is copied.
            let (_base_lock, _) = database::open_prepared(&base.dir, base.redo_dir.as_deref())?;
            database::copy_with_redo(&base.dir, base.redo_dir.as_deref(), &copy.dir, copy.redo_dir.as_deref())?;
            engine_opts::run_options(&copy, &args.engine, policy, &manifest)
        })();
        let options = match prepared {
            Ok(options) => options,
            Err(e) => {
                failure = Some(stop_sequence(args, name, "could not start", &e, outcomes.len()));
                break;
            }
        };
        let spec = EngineRunSpec {
            dir: &copy.dir,
            options,
            manifest: &manifest,
            run: run_config.clone(),
            steady_warmup_min,
            trace: None,
            decisions: args
                .decisions
                .then(|| results_dir.join(format!("decisions-{}.jsonl", file_label(name)))),
            flush_log_at_trx_commit: args.engine.flush_log_at_commit,
            print_new_orders: false,
            live: live.as_ref().map(|_| &publish as &dyn Fn(&flushwise_sim::LiveSample)),
        };
        say(
            args,
            format!(
                "{name}: seed={} config_hash={} commit={COMMIT} batch_io={}",
                spec.run.seed,
                spec.config_hash(),
                flushwise_engine::storage::batch_io_mode()
            ),
        );
        let label = format!("{name:>12} ");
        let run = engine_run::run(spec, name, |row| {
            if args.engine.output == OutputFormat::Table {
                println!("{}", output::interval_line(&label, row));
            }
        });
        let out = match run {
            Ok(out) => out,
            Err(e) => {
                failure = Some(stop_sequence(args, name, "failed", &e, outcomes.len()));
                break;
            }
        };
        say(
            args,
            warmup_text(name, &out.result, steady_warmup_min.is_some(), run_config.warmup),
        );
        if out.result.partial {
            // Ctrl-C / SIGTERM: this policy's partial result is the last;
            // the copy was closed cleanly and is removed below.
            say(
                args,
                format!("{name}: interrupted: its figures are partial; the remaining policies are not run"),
            );
            let check = Ok("consistency not checked: the run was interrupted".to_string());
            outcomes.push(PolicyOutcome { out, check });
            break;
        }
        let check = tpcc_cmd::check_database(&copy, false).and_then(|r| database::check_verdict(&r));
        match &check {
            Ok(text) | Err(text) => say(args, format!("{name}: {text}")),
        }
        outcomes.push(PolicyOutcome { out, check });
    }
    database::remove_with_redo(&copy.dir, copy.redo_dir.as_deref())?;
    write_results(&results_dir, &outcomes)?;
    Ok(CompareOutcomes {
        outcomes,
        pool_bytes,
        data_bytes,
        page_bytes: u64::from(manifest.page_size_bytes),
        results_dir,
        failure,
    })
}
