//! `tpcc prepare | run | check | export`: TPC-C on the real engine.
//!
//! `prepare` creates the database and loads it (refusing a directory that
//! already holds one, finished or not, unless `--force` wipes it), then
//! writes the manifest; a load marker names a load that was interrupted.
//! `run` opens it with the run's engine settings (pool, policy, device,
//! doublewrite, flush mode; `--redo` resizes the log of the cleanly closed
//! database), drives the mix and prints per-interval lines and a final
//! summary (a partial one after Ctrl-C or SIGTERM); `check` verifies the
//! consistency conditions and fails (exit 2) naming each violation;
//! `export` writes the nine tables as CSV.
//!
//! Flags are checked before the directory is touched. Every command holds
//! the database's directory lock from before it reads the manifest until
//! after it closed the database ([`database::open_prepared`]).

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use flushwise_engine::db::{Database, DbOptions, DirLock};
use flushwise_workloads::tpcc::{self, CheckReport, RunConfig};

use crate::args::{DbLocationArgs, OutputFormat, TpccCheckArgs, TpccExportArgs, TpccPrepareArgs, TpccRunArgs};
use crate::engine_opts;
use flushwise_lab::database::{self, human_bytes, Manifest};
use flushwise_lab::engine_run::{self, EngineRunSpec};
use flushwise_lab::render::{self as output, write_file, Csv};
use flushwise_lab::COMMIT;

/// Options to open a prepared database for `check` / `export` (a modest
/// pool; nothing else matters for reading), under the caller's lock.
fn read_options(location: &DbLocationArgs, manifest: &Manifest, lock: Arc<DirLock>) -> Result<DbOptions, String> {
    Ok(DbOptions {
        dir_lock: Some(lock),
        redo_dir: location.redo_dir.clone(),
        page_size: flushwise_engine::page::PageSize::new(manifest.page_size_bytes as usize)
            .map_err(|e| format!("{}: page size: {e}", database::MANIFEST_FILE))?,
        buffer_pool_bytes: 128 << 20,
        redo_bytes: manifest.redo_bytes,
        io: engine_opts::io_mode(&location.io)?,
        verify_pages_at_open: false,
        ..DbOptions::default()
    })
}

fn open(dir: &Path, options: DbOptions) -> Result<Database, String> {
    let db = Database::open(dir, options).map_err(|e| format!("{}: {e}", dir.display()))?;
    let report = db.recovery_report();
    if report.records_applied > 0 || report.losers_rolled_back > 0 {
        eprintln!("{report}");
    }
    Ok(db)
}

pub use flushwise_lab::engine_options::PrepareSpec;

/// Creates and loads (`flushwise_lab::engine_options::prepare_database`);
/// returns the manifest written and a one-line summary.
pub fn prepare_database(location: &DbLocationArgs, spec: &PrepareSpec<'_>) -> Result<(Manifest, String), String> {
    flushwise_lab::engine_options::prepare_database(&location.location(), spec)
}

pub fn prepare(args: &TpccPrepareArgs) -> Result<(), String> {
    let threads = args
        .threads
        .unwrap_or_else(flushwise_lab::sim_runner::default_jobs)
        .max(1);
    let spec = PrepareSpec {
        warehouses: args.warehouses,
        threads,
        seed: args.seed,
        page_size: &args.page_size,
        redo: &args.redo,
        buffer_pool: &args.buffer_pool,
        force: args.force,
    };
    prepare_database(&args.location, &spec).map(|(_, summary)| println!("{summary}"))
}

/// Runs the consistency check on a closed database directory.
pub fn check_database(location: &DbLocationArgs, condition_11: bool) -> Result<CheckReport, String> {
    let (lock, manifest) = database::open_prepared(&location.dir, location.redo_dir.as_deref())?;
    let db = open(&location.dir, read_options(location, &manifest, lock)?)?;
    let report = tpcc::check(&db, condition_11).map_err(|e| format!("tpcc check: {e}"))?;
    db.close().map_err(|e| format!("{}: {e}", location.dir.display()))?;
    Ok(report)
}

pub fn check(args: &TpccCheckArgs) -> Result<(), String> {
    let report = check_database(&args.location, args.condition_11)?;
    let text = database::check_verdict(&report)?;
    println!("{text}");
    Ok(())
}

pub fn export(args: &TpccExportArgs) -> Result<(), String> {
    let location = &args.location;
    let (lock, manifest) = database::open_prepared(&location.dir, location.redo_dir.as_deref())?;
    let db = open(&location.dir, read_options(location, &manifest, lock)?)?;
    let report = tpcc::export(&db, &args.out).map_err(|e| format!("tpcc export: {e}"))?;
    db.close()
        .map_err(|e| format!("{}: {e}", args.location.dir.display()))?;
    for t in &report.tables {
        println!("{:<12} {:>10} rows  {}", t.table, t.rows, t.path.display());
    }
    Ok(())
}

/// The driver's configuration and, for `--warmup steady`, the least warm-up
/// before the steady test may end it.
pub fn run_config(engine: &crate::args::EngineRunArgs) -> Result<(RunConfig, Option<Duration>), String> {
    flushwise_lab::engine_options::run_config(&engine.settings())
}

pub fn run(args: &TpccRunArgs) -> Result<(), String> {
    let dir = &args.location.dir;
    let mut prepared =
        flushwise_lab::engine_options::prepare_run(&args.location.location(), &args.engine.settings(), &args.policy)?;
    let live = crate::live::Live::start(&args.metrics)?;
    let publish = |sample: &flushwise_sim::LiveSample| {
        if let Some(l) = &live {
            l.publish(sample);
        }
    };
    // From here on Ctrl-C / SIGTERM end the run early with a partial
    // summary and a clean close.
    prepared.run.interrupt = Some(crate::interrupt::install()?);
    let manifest = &prepared.manifest;
    let spec = EngineRunSpec {
        dir,
        options: prepared.options,
        manifest,
        run: prepared.run,
        steady_warmup_min: prepared.steady_warmup_min,
        trace: args.trace.clone(),
        decisions: args.decisions.clone(),
        flush_log_at_trx_commit: args.engine.flush_log_at_commit,
        print_new_orders: args.print_new_orders,
        live: live.as_ref().map(|_| &publish as &dyn Fn(&flushwise_sim::LiveSample)),
    };
    let format = args.engine.output;
    let banner = format!(
        "flushwise tpcc run: seed={} config_hash={} commit={} batch_io={} policy={} warehouses={} connections={} pool={} dir={}",
        spec.run.seed,
        spec.config_hash(),
        COMMIT,
        flushwise_engine::storage::batch_io_mode(),
        args.policy,
        manifest.warehouses,
        spec.run.connections,
        human_bytes(spec.options.buffer_pool_bytes),
        dir.display()
    );
    match format {
        OutputFormat::Table => println!("{banner}"),
        OutputFormat::Json | OutputFormat::Csv => eprintln!("{banner}"),
    }
    let label = args.policy.to_string();
    let out = engine_run::run(spec, &label, |row| {
        let line = output::interval_line("", row);
        match format {
            OutputFormat::Table => {
                println!("{line}");
                let _ = std::io::stdout().flush();
            }
            _ => eprintln!("{line}"),
        }
    })?;
    if let Some(path) = &args.intervals {
        let mut csv = Csv::default();
        for row in &out.rows {
            csv.push(output::flatten_interval(row, COMMIT));
        }
        write_file(path, &csv.render(), "--intervals")?;
    }
    let text = match format {
        OutputFormat::Table => output::engine_summary_text(&out.result),
        OutputFormat::Json => output::json_lines([(&out.result, out.rows.as_slice())])?,
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            csv.push(output::flatten(&out.result));
            csv.render()
        }
    };
    print!("{text}");
    // Out before any linger: a reader of stdout has the result at once.
    let _ = std::io::stdout().flush();
    if let Some(l) = live {
        l.finish();
    }
    Ok(())
}
