//! From command-line flags to the engine's [`DbOptions`] (sizes, I/O mode,
//! device, page size, `innodb_flush_log_at_trx_commit`, run durations).
//! The database directory itself (manifest, free space, per-policy copy) is
//! `flushwise_lab::database`.

use flushwise_core::limits::RUN_POOL_FRAMES_MIN;
use flushwise_core::policy::PolicySpec;
use flushwise_lab::steady::Warmup;
use std::time::Duration;

use flushwise_engine::db::DbOptions;
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;
use flushwise_engine::storage::IoMode;

use flushwise_lab::database::{Manifest, MANIFEST_FILE};

use crate::args::{duration_flag, size_flag, DbLocationArgs, EngineRunArgs, OnOff};

/// A size from a constant of ours (its error names no flag).
pub fn size_flag_bytes(text: &str) -> Result<u64, String> {
    size_flag("size", text)
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
pub fn with_recovery_bound(engine: &EngineRunArgs, policy: &PolicySpec) -> Result<PolicySpec, String> {
    match &engine.max_recovery_time {
        None => Ok(policy.clone()),
        Some(text) => {
            let us = flushwise_sim::units::parse_duration_us(text)
                .map_err(|e| format!("--max-recovery-time {text}: {e}"))?;
            policy.with_max_recovery_time(us as f64 / 1e6)
        }
    }
}

/// Refuses a redo capacity smaller than the engine needs with `page` pages
/// (`flag` names where it came from), before anything on disk changes.
pub fn check_redo_flag(flag_text: &str, redo_bytes: u64, page: flushwise_engine::page::PageSize) -> Result<(), String> {
    let min = flushwise_engine::db::Database::redo_bytes_min(&DbOptions {
        page_size: page,
        ..DbOptions::default()
    });
    if redo_bytes < min {
        return Err(format!(
            "{flag_text}: the redo log must be at least {} ({min} bytes) with {}-byte pages: the buffer pool keeps 4 pages per thread and 8 more free in it, under half its capacity; give --redo {}MiB or more (nothing was changed)",
            flushwise_lab::database::human_bytes(min),
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
pub fn check_pool_flag(engine: &EngineRunArgs) -> Result<(), String> {
    let buffer_pool_bytes = size_flag("--buffer-pool", engine.buffer_pool())?;
    flushwise_lab::database::require_pool_fits_memory(buffer_pool_bytes)
        .map_err(|e| format!("--buffer-pool {}: {e}", engine.buffer_pool()))
}

/// Options to open a prepared database with the run's engine settings.
pub fn run_options(
    location: &DbLocationArgs,
    engine: &EngineRunArgs,
    policy: &PolicySpec,
    manifest: &Manifest,
) -> Result<DbOptions, String> {
    let page_size = PageSize::new(manifest.page_size_bytes as usize)
        .map_err(|e| format!("{MANIFEST_FILE}: page size {}: {e}", manifest.page_size_bytes))?;
    let redo = engine.redo.as_deref().map(|r| size_flag("--redo", r)).transpose()?;
    if let (Some(bytes), Some(text)) = (redo, engine.redo.as_deref()) {
        // Before the open resizes anything.
        check_redo_flag(&format!("--redo {text}"), bytes, page_size)?;
    }
    let buffer_pool_bytes = size_flag("--buffer-pool", engine.buffer_pool())?;
    let frames = buffer_pool_bytes / manifest.page_size_bytes as u64;
    if frames < RUN_POOL_FRAMES_MIN {
        return Err(format!(
            "--buffer-pool {}: {frames} pages of {} bytes; at least {RUN_POOL_FRAMES_MIN} pages are needed for {} connections' latched pages and the cleaner's batches",
            engine.buffer_pool(), manifest.page_size_bytes, engine.connections
        ));
    }
    flushwise_lab::database::require_pool_fits_memory(buffer_pool_bytes)
        .map_err(|e| format!("--buffer-pool {}: {e}", engine.buffer_pool()))?;
    Ok(DbOptions {
        redo_dir: location.redo_dir.clone(),
        page_size,
        buffer_pool_bytes,
        redo_bytes: redo.unwrap_or(manifest.redo_bytes),
        resize_redo_at_open: redo.is_some(),
        io: io_mode(&location.io)?,
        data_device: flushwise_lab::database::device_flag(&engine.device)?,
        doublewrite: engine.doublewrite == OnOff::On,
        flush_log_at_trx_commit: flush_mode(engine.flush_log_at_commit)?,
        policy: with_recovery_bound(engine, policy)?,
        // A quick open: `check` reads every row anyway, and runs start from
        // a cleanly closed database.
        verify_pages_at_open: false,
        ..DbOptions::default()
    })
}

/// A run's warm-up rule, measured time and report interval.
pub fn run_durations(engine: &EngineRunArgs) -> Result<(Warmup, Duration, Duration), String> {
    let warmup = Warmup::parse(engine.warmup()).map_err(|e| format!("--warmup {}: {e}", engine.warmup()))?;
    let duration = Duration::from_micros(duration_flag("--duration", engine.duration())?);
    let interval = Duration::from_micros(duration_flag("--report-interval", &engine.report_interval)?);
    if duration.is_zero() {
        return Err(format!("--duration {}: must be positive", engine.duration()));
    }
    if interval.is_zero() {
        return Err(format!(
            "--report-interval {}: must be positive",
            engine.report_interval
        ));
    }
    Ok((warmup, duration, interval))
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
