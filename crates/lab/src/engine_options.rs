//! An engine TPC-C run as a person describes it (sizes and durations as
//! text, the device as words) and its translation into the engine's
//! [`DbOptions`] and the driver's [`RunConfig`]; `prepare` of a database
//! directory; one `tpcc run` from a prepared directory.
//!
//! The one translation for every front end: `flushwise tpcc prepare | run`,
//! `compare` and `tpcc crash` fill [`DbLocation`] and [`EngineSettings`]
//! from their flags, the Python package (`flushwise.engine`) from keyword
//! arguments. Errors name the command-line flag (`--buffer-pool 1QB: ...`).
//! Flags are checked before the directory is touched; every command holds
//! the database's directory lock from before it reads the manifest until
//! after it closed the database ([`database::open_prepared`]).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_core::limits::RUN_POOL_FRAMES_MIN;
use flushwise_core::policy::PolicySpec;
use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;
use flushwise_engine::storage::IoMode;
use flushwise_sim::options::{duration_flag, size_flag};
use flushwise_sim::IntervalRow;
use flushwise_workloads::tpcc::{self, LoadConfig, LoadProgress, RunConfig};

use crate::database::{self, human_bytes, Manifest, MANIFEST_FILE};
use crate::engine_run::{self, EngineRunOutput, EngineRunSpec};
use crate::steady::Warmup;
use crate::COMMIT;

/// Where a database lives (`--dir`, `--redo-dir`, `--io`).
#[derive(Clone, Debug)]
pub struct DbLocation {
    pub dir: PathBuf,
    /// The redo log's own directory (a separate disk), if any.
    pub redo_dir: Option<PathBuf>,
    /// `direct` or `buffered`.
    pub io: String,
}

/// The engine and load settings of a run, as text (`tpcc run`'s flags,
/// defaults resolved by the caller).
#[derive(Clone, Debug)]
pub struct EngineSettings {
    pub connections: u32,
    pub buffer_pool: String,
    /// Resize the redo log to this before the run; `None` keeps it.
    pub redo: Option<String>,
    /// `native`, or `emulated PRESET`.
    pub device: Vec<String>,
    pub doublewrite: bool,
    pub flush_log_at_commit: u8,
    /// A duration, or `steady` / `steady:MAX`.
    pub warmup: String,
    pub duration: String,
    pub report_interval: String,
    pub seed: u64,
    pub keying_think: bool,
    /// `--max-recovery-time` (the `flushwise` policy's bound), if given.
    pub max_recovery_time: Option<String>,
}

pub fn io_mode(text: &str) -> Result<IoMode, String> {
    text.parse::<IoMode>().map_err(|e| format!("--io: {e}"))
}

pub fn page_size(text: &str) -> Result<PageSize, String> {
    let bytes = size_flag("--page-size", text)?;
    usize::try_from(bytes)
        .ok()
        .and_then(|b| PageSize::new(b).ok())
        .ok_or_else(|| format!("--page-size {text}: a power of two from 4096 to 65536 bytes is accepted"))
}

/// `--flush-log-at-commit`: `innodb_flush_log_at_trx_commit`.
pub fn flush_mode(value: u8) -> Result<FlushMode, String> {
    match value {
        0 => Ok(FlushMode::EverySecond),
        1 => Ok(FlushMode::SyncAtCommit),
        2 => Ok(FlushMode::WriteAtCommit),
        _ => Err(format!("--flush-log-at-commit {value}: accepted are 0, 1 and 2")),
    }
}

/// `policy` with `--max-recovery-time`, if given.
pub fn with_recovery_bound(settings: &EngineSettings, policy: &PolicySpec) -> Result<PolicySpec, String> {
    match &settings.max_recovery_time {
        None => Ok(policy.clone()),
        Some(text) => {
            let us = flushwise_sim::units::parse_duration_us(text)
                .map_err(|e| format!("--max-recovery-time {text}: {e}"))?;
            policy.with_max_recovery_time(us as f64 / 1e6)
        }
    }
}

/// Refuses a redo capacity smaller than the engine needs with `page` pages
/// (`flag_text` names where it came from), before anything on disk changes.
pub fn check_redo_flag(flag_text: &str, redo_bytes: u64, page: PageSize) -> Result<(), String> {
    let min = Database::redo_bytes_min(&DbOptions {
        page_size: page,
        ..DbOptions::default()
    });
    if redo_bytes < min {
        return Err(format!(
            "{flag_text}: the redo log must be at least {} ({min} bytes) with {}-byte pages: the buffer pool keeps 4 pages per thread and 8 more free in it, under half its capacity; give --redo {}MiB or more (nothing was changed)",
            human_bytes(min),
            page.bytes(),
            min.div_ceil(1 << 20)
        ));
    }
    if redo_bytes % flushwise_engine::redo::BLOCK_SIZE as u64 != 0 {
        return Err(format!(
            "{flag_text}: the redo log's size must be a multiple of {} bytes (nothing was changed)",
            flushwise_engine::redo::BLOCK_SIZE
        ));
    }
    Ok(())
}

/// `--buffer-pool` against this machine's memory, before anything else.
pub fn check_pool(buffer_pool: &str) -> Result<(), String> {
    let buffer_pool_bytes = size_flag("--buffer-pool", buffer_pool)?;
    database::require_pool_fits_memory(buffer_pool_bytes).map_err(|e| format!("--buffer-pool {buffer_pool}: {e}"))
}

/// Options to open a prepared database with the run's engine settings.
pub fn run_options(
    location: &DbLocation,
    settings: &EngineSettings,
    policy: &PolicySpec,
    manifest: &Manifest,
) -> Result<DbOptions, String> {
    let page_size = PageSize::new(manifest.page_size_bytes as usize)
        .map_err(|e| format!("{MANIFEST_FILE}: page size {}: {e}", manifest.page_size_bytes))?;
    run_options_with(location, settings, policy, page_size, manifest.redo_bytes)
}

/// [`run_options`] for a database of any workload: its page size and the
/// redo capacity it was prepared with.
pub fn run_options_with(
    location: &DbLocation,
    settings: &EngineSettings,
    policy: &PolicySpec,
    page_size: PageSize,
    prepared_redo_bytes: u64,
) -> Result<DbOptions, String> {
    let redo = settings.redo.as_deref().map(|r| size_flag("--redo", r)).transpose()?;
    if let (Some(bytes), Some(text)) = (redo, settings.redo.as_deref()) {
        // Before the open resizes anything.
        check_redo_flag(&format!("--redo {text}"), bytes, page_size)?;
    }
    let buffer_pool_bytes = size_flag("--buffer-pool", &settings.buffer_pool)?;
    let frames = buffer_pool_bytes / page_size.bytes() as u64;
    if frames < RUN_POOL_FRAMES_MIN {
        return Err(format!(
            "--buffer-pool {}: {frames} pages of {} bytes; at least {RUN_POOL_FRAMES_MIN} pages are needed for {} connections' latched pages and the cleaner's batches",
            settings.buffer_pool,
            page_size.bytes(),
            settings.connections
        ));
    }
    database::require_pool_fits_memory(buffer_pool_bytes)
        .map_err(|e| format!("--buffer-pool {}: {e}", settings.buffer_pool))?;
    Ok(DbOptions {
        redo_dir: location.redo_dir.clone(),
        page_size,
        buffer_pool_bytes,
        redo_bytes: redo.unwrap_or(prepared_redo_bytes),
        resize_redo_at_open: redo.is_some(),
        io: io_mode(&location.io)?,
        data_device: database::device_flag(&settings.device)?,
        doublewrite: settings.doublewrite,
        flush_log_at_trx_commit: flush_mode(settings.flush_log_at_commit)?,
        policy: with_recovery_bound(settings, policy)?,
        // A quick open: `check` reads every row anyway, and runs start from
        // a cleanly closed database.
        verify_pages_at_open: false,
        ..DbOptions::default()
    })
}

/// A run's warm-up rule, measured time and report interval.
pub fn run_durations(settings: &EngineSettings) -> Result<(Warmup, Duration, Duration), String> {
    let warmup = Warmup::parse(&settings.warmup).map_err(|e| format!("--warmup {}: {e}", settings.warmup))?;
    let duration = Duration::from_micros(duration_flag("--duration", &settings.duration)?);
    let interval = Duration::from_micros(duration_flag("--report-interval", &settings.report_interval)?);
    if duration.is_zero() {
        return Err(format!("--duration {}: must be positive", settings.duration));
    }
    if interval.is_zero() {
        return Err(format!(
            "--report-interval {}: must be positive",
            settings.report_interval
        ));
    }
    Ok((warmup, duration, interval))
}

/// The driver's configuration and, for `--warmup steady`, the least warm-up
/// before the steady test may end it.
pub fn run_config(settings: &EngineSettings) -> Result<(RunConfig, Option<Duration>), String> {
    let (warmup, duration, report_interval) = run_durations(settings)?;
    let steady_warmup_min = match warmup {
        Warmup::UntilSteady { min, .. } => Some(min),
        Warmup::Fixed(_) => None,
    };
    if settings.connections == 0 {
        return Err("--connections 0: at least one connection is needed".into());
    }
    let run = RunConfig {
        connections: settings.connections,
        warmup: warmup.max(),
        duration,
        report_interval,
        seed: settings.seed,
        keying_think: settings.keying_think,
        ..RunConfig::default()
    };
    Ok((run, steady_warmup_min))
}

/// What `prepare` loads, from its flags.
pub struct PrepareSpec<'a> {
    pub warehouses: u32,
    pub threads: usize,
    pub seed: u64,
    pub page_size: &'a str,
    pub redo: &'a str,
    pub buffer_pool: &'a str,
    /// Wipe a database already in the directory (finished or not).
    pub force: bool,
}

/// Creates and loads; returns the manifest written and a one-line summary
/// (the caller prints it where its output format allows). Holds the
/// directory lock throughout; the load marker is there from before the
/// database is created until after the manifest is durable.
pub fn prepare_database(location: &DbLocation, spec: &PrepareSpec<'_>) -> Result<(Manifest, String), String> {
    let dir = &location.dir;
    let warehouses = spec.warehouses;
    if warehouses == 0 {
        return Err("--warehouses 0: at least one warehouse is needed".into());
    }
    let page = page_size(spec.page_size)?;
    let redo_bytes = size_flag("--redo", spec.redo)?;
    check_redo_flag(&format!("--redo {}", spec.redo), redo_bytes, page)?;
    let buffer_pool_bytes = size_flag("--buffer-pool", spec.buffer_pool)?;
    database::require_pool_fits_memory(buffer_pool_bytes)
        .map_err(|e| format!("--buffer-pool {}: {e}", spec.buffer_pool))?;
    let io = io_mode(&location.io)?;

    let redo_dir = location.redo_dir.as_deref();
    for d in std::iter::once(dir.as_path()).chain(redo_dir) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: cannot create the directory: {e}", d.display()))?;
    }
    let lock = database::lock_dirs(dir, redo_dir)?;
    match database::prepared_state(dir, redo_dir) {
        database::PreparedState::Empty => {}
        _ if spec.force => database::wipe_database(dir, redo_dir)?,
        database::PreparedState::Prepared => {
            return Err(format!(
                "--dir {}: a database is already here; remove the directory, choose another, or add --force to wipe it and load again",
                dir.display()
            ))
        }
        database::PreparedState::Unfinished => {
            return Err(format!(
                "{} (add --force to this command)",
                database::unfinished_prepare_error(dir)
            ))
        }
    }
    let needed = database::database_bytes_estimate(warehouses, redo_bytes);
    database::require_free(dir, needed, &format!("a {warehouses}-warehouse database"))?;
    database::write_load_marker(
        dir,
        &format!(
            "tpcc prepare of {warehouses} warehouses by process {} (commit {COMMIT}) has not finished\n",
            std::process::id()
        ),
    )?;
    let options = DbOptions {
        redo_dir: location.redo_dir.clone(),
        page_size: page,
        buffer_pool_bytes,
        redo_bytes,
        io,
        dir_lock: Some(Arc::clone(&lock)),
        ..DbOptions::default()
    };
    let db = Database::create(dir, options).map_err(|e| format!("{}: {e}", dir.display()))?;
    let started = Instant::now();
    let bar = crate::workload_dir::LoadProgress::new(1, "rows");
    let progress = |p: LoadProgress| bar.update(p.rows_loaded, p.rows_expected);
    let config = LoadConfig {
        warehouses,
        threads: spec.threads,
        seed: spec.seed,
        ..LoadConfig::default()
    };
    let report = tpcc::prepare(&db, &config, &progress).map_err(|e| format!("tpcc prepare: {e}"))?;
    bar.finish();
    db.close()
        .map_err(|e| format!("{}: closing after the load: {e}", dir.display()))?;
    let manifest = Manifest {
        warehouses,
        page_size_bytes: page.bytes() as u32,
        redo_bytes,
        seed: spec.seed,
        rows: report.rows_loaded,
        load_seconds: started.elapsed().as_secs_f64(),
        database_bytes: database::dir_bytes(dir)?,
        commit: COMMIT.to_string(),
        data_file_bytes: Manifest::data_file_bytes_of(dir, redo_dir)?,
    };
    manifest.write(dir)?;
    database::remove_load_marker(dir)?;
    drop(lock);
    let summary = format!(
        "prepared {} warehouses in {}: {} rows in {:.1} s ({:.0} rows/s, {} threads), {} on disk; seed={} commit={}",
        warehouses,
        dir.display(),
        report.rows_loaded,
        report.elapsed_s,
        report.rows_per_s,
        report.threads,
        human_bytes(manifest.database_bytes),
        spec.seed,
        COMMIT
    );
    Ok((manifest, summary))
}

/// What one `tpcc run` records besides its result.
#[derive(Clone, Debug, Default)]
pub struct RunFiles {
    /// The page-reference trace of the run (`--trace`).
    pub trace: Option<PathBuf>,
    /// One JSON object per page-cleaner iteration (`--decisions`).
    pub decisions: Option<PathBuf>,
}

/// What a `tpcc run` has settled before it starts: the settings checked
/// (nothing is read or locked for a run that cannot start), then the
/// directory locked (the lock travels in `options.dir_lock`), its manifest
/// read and the engine's options built. Both the command line and
/// [`run_tpcc`] start from here.
pub struct PreparedRun {
    pub manifest: Manifest,
    pub options: DbOptions,
    pub run: RunConfig,
    /// `--warmup steady`'s least warm-up.
    pub steady_warmup_min: Option<Duration>,
}

pub fn prepare_run(
    location: &DbLocation,
    settings: &EngineSettings,
    policy: &PolicySpec,
) -> Result<PreparedRun, String> {
    check_pool(&settings.buffer_pool)?;
    let (run, steady_warmup_min) = run_config(settings)?;
    let (lock, manifest) = database::open_prepared(&location.dir, location.redo_dir.as_deref())?;
    let mut options = run_options(location, settings, policy, &manifest)?;
    options.dir_lock = Some(lock);
    Ok(PreparedRun {
        manifest,
        options,
        run,
        steady_warmup_min,
    })
}

/// One `tpcc run` on the prepared database at `location`: the settings are
/// checked, the directory locked, the database opened with the run's
/// settings, the mix driven, the database closed. `interrupt` ends the run
/// early with a partial result; `on_row` sees each interval row.
pub fn run_tpcc(
    location: &DbLocation,
    settings: &EngineSettings,
    policy: &PolicySpec,
    files: &RunFiles,
    interrupt: Option<Arc<AtomicBool>>,
    on_row: impl FnMut(&IntervalRow),
) -> Result<EngineRunOutput, String> {
    let mut prepared = prepare_run(location, settings, policy)?;
    prepared.run.interrupt = interrupt;
    let spec = EngineRunSpec {
        dir: &location.dir,
        options: prepared.options,
        manifest: &prepared.manifest,
        run: prepared.run,
        steady_warmup_min: prepared.steady_warmup_min,
        trace: files.trace.clone(),
        decisions: files.decisions.clone(),
        flush_log_at_trx_commit: settings.flush_log_at_commit,
        print_new_orders: false,
        live: None,
    };
    engine_run::run(spec, &policy.to_string(), on_row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_mode_flag_accepts_only_0_1_2() {
        assert_eq!(flush_mode(1).unwrap(), FlushMode::SyncAtCommit);
        assert!(flush_mode(3).unwrap_err().contains("0, 1 and 2"));
    }
}
