//! From command-line flags to the engine's [`DbOptions`], and the small
//! files and checks around a TPC-C database directory: its manifest, free
//! disk space, and the copy `compare` runs each policy on.
//!
//! The manifest (`flushwise-tpcc.json`, written by `prepare` after the load
//! completed) records what later commands must agree on (page size) and what
//! produced the data (warehouses, seed, commit). The database itself also
//! knows whether its load completed (`tpcc::loaded_warehouses`): the manifest
//! is a convenience, never the only proof.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use flushwise_core::device::DeviceSpec;
use flushwise_engine::db::DbOptions;
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;
use flushwise_engine::storage::IoMode;

use crate::args::{duration_flag, size_flag, DbLocationArgs, EngineRunArgs, OnOff};

/// The manifest's file name inside a database directory.
pub const MANIFEST_FILE: &str = "flushwise-tpcc.json";

/// What `prepare` left in a database directory.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub warehouses: u32,
    pub page_size_bytes: u32,
    pub redo_bytes: u64,
    pub seed: u64,
    pub rows: u64,
    pub load_seconds: f64,
    pub database_bytes: u64,
    pub commit: String,
}

impl Manifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    pub fn read(dir: &Path) -> Result<Manifest, String> {
        let path = Self::path(dir);
        let text = fs::read_to_string(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "--dir {}: no prepared TPC-C database here ({} is missing); run `flushwise tpcc prepare --dir {}` first",
                    dir.display(),
                    MANIFEST_FILE,
                    dir.display()
                )
            } else {
                format!("{}: cannot read: {e}", path.display())
            }
        })?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not a flushwise manifest: {e}", path.display()))
    }

    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = Self::path(dir);
        let text = serde_json::to_string_pretty(self).map_err(|e| format!("cannot render the manifest: {e}"))?;
        fs::write(&path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))
    }
}

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

/// `--device native` or `--device emulated PRESET`.
pub fn device(words: &[String]) -> Result<Option<DeviceSpec>, String> {
    let presets = flushwise_core::device::preset_names().join(", ");
    match words {
        [] => Ok(None),
        [kind] if kind.eq_ignore_ascii_case("native") => Ok(None),
        [kind] if kind.eq_ignore_ascii_case("emulated") => {
            Err(format!("--device emulated: name the device model, one of {presets}"))
        }
        [kind, preset] if kind.eq_ignore_ascii_case("emulated") => DeviceSpec::parse(preset)
            .map(Some)
            .map_err(|e| format!("--device emulated {preset}: {e}")),
        _ => Err(format!(
            "--device {}: accepted are `native` and `emulated PRESET` with PRESET one of {presets}",
            words.join(" ")
        )),
    }
}

/// A short description of the device for results and banners.
pub fn device_text(spec: &Option<DeviceSpec>, io: IoMode) -> String {
    match spec {
        None => format!("native({io})"),
        Some(spec) => format!("emulated {} ({io})", spec.describe()),
    }
}

pub fn flush_mode(value: u8) -> Result<FlushMode, String> {
    match value {
        0 => Ok(FlushMode::EverySecond),
        1 => Ok(FlushMode::SyncAtCommit),
        2 => Ok(FlushMode::WriteAtCommit),
        _ => Err(format!("--flush-log-at-commit {value}: accepted are 0, 1 and 2")),
    }
}

/// Options to open a prepared database with the run's engine settings.
pub fn run_options(
    location: &DbLocationArgs,
    engine: &EngineRunArgs,
    policy: &str,
    manifest: &Manifest,
) -> Result<DbOptions, String> {
    flushwise_core::policy::build(policy).map_err(|e| format!("--policy: {e}"))?;
    let page_size = PageSize::new(manifest.page_size_bytes as usize)
        .map_err(|e| format!("{MANIFEST_FILE}: page size {}: {e}", manifest.page_size_bytes))?;
    let redo = engine.redo.as_deref().map(|r| size_flag("--redo", r)).transpose()?;
    let buffer_pool_bytes = size_flag("--buffer-pool", engine.buffer_pool())?;
    let frames = buffer_pool_bytes / manifest.page_size_bytes as u64;
    if frames < BUFFER_POOL_FRAMES_MIN {
        return Err(format!(
            "--buffer-pool {}: {frames} pages of {} bytes; at least {BUFFER_POOL_FRAMES_MIN} pages are needed for {} connections' latched pages and the cleaner's batches",
            engine.buffer_pool(), manifest.page_size_bytes, engine.connections
        ));
    }
    Ok(DbOptions {
        redo_dir: location.redo_dir.clone(),
        page_size,
        buffer_pool_bytes,
        redo_bytes: redo.unwrap_or(manifest.redo_bytes),
        resize_redo_at_open: redo.is_some(),
        io: io_mode(&location.io)?,
        data_device: device(&engine.device)?,
        doublewrite: engine.doublewrite == OnOff::On,
        flush_log_at_trx_commit: flush_mode(engine.flush_log_at_commit)?,
        policy: policy.to_string(),
        // A quick open: `check` reads every row anyway, and runs start from
        // a cleanly closed database.
        verify_pages_at_open: false,
        ..DbOptions::default()
    })
}

/// The smallest pool `run` accepts, in pages.
pub const BUFFER_POOL_FRAMES_MIN: u64 = 256;

/// Durations of a run, in microseconds: warm-up, measured, report interval.
pub fn run_durations(engine: &EngineRunArgs) -> Result<(Duration, Duration, Duration), String> {
    let warmup = Duration::from_micros(duration_flag("--warmup", engine.warmup())?);
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

/// Bytes free for an unprivileged user on the filesystem holding `path`
/// (or its nearest existing ancestor).
pub fn free_bytes(path: &Path) -> Result<u64, String> {
    let mut probe = path.to_path_buf();
    while !probe.exists() {
        if !probe.pop() {
            probe = PathBuf::from(".");
            break;
        }
    }
    if probe.as_os_str().is_empty() {
        probe = PathBuf::from(".");
    }
    let stat = rustix::fs::statvfs(&probe).map_err(|e| format!("{}: cannot read free space: {e}", probe.display()))?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Fails, saying what is needed, unless `path`'s filesystem has `needed_bytes` free.
pub fn require_free(path: &Path, needed_bytes: u64, what: &str) -> Result<(), String> {
    let free = free_bytes(path)?;
    if free < needed_bytes {
        return Err(format!(
            "{}: {what} needs about {} but the filesystem has {} free; free some space, choose another --dir, or use fewer --warehouses",
            path.display(),
            human_bytes(needed_bytes),
            human_bytes(free)
        ));
    }
    Ok(())
}

pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

/// Bytes of the regular files directly in `dir` (a database directory has
/// no subdirectories of its own).
pub fn dir_bytes(dir: &Path) -> Result<u64, String> {
    let mut total = 0;
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
        let meta = entry
            .metadata()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        if meta.is_file() {
            total += meta.len();
        }
    }
    Ok(total)
}

/// Copies the regular files of `from` into a fresh `to` (removed first if
/// it exists), then fsyncs them: each policy of `compare` starts from the
/// same bytes.
pub fn copy_database(from: &Path, to: &Path) -> Result<(), String> {
    if to.exists() {
        fs::remove_dir_all(to).map_err(|e| format!("{}: cannot remove the previous copy: {e}", to.display()))?;
    }
    fs::create_dir_all(to).map_err(|e| format!("{}: cannot create: {e}", to.display()))?;
    let entries = fs::read_dir(from).map_err(|e| format!("{}: cannot list: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", from.display()))?;
        let meta = entry
            .metadata()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        if !meta.is_file() {
            continue;
        }
        let target = to.join(entry.file_name());
        fs::copy(entry.path(), &target)
            .map_err(|e| format!("cannot copy {} to {}: {e}", entry.path().display(), target.display()))?;
        fs::File::open(&target)
            .and_then(|f| f.sync_all())
            .map_err(|e| format!("{}: cannot sync the copy: {e}", target.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_flag_accepts_native_and_emulated_presets_and_names_the_choices() {
        assert!(device(&["native".into()]).unwrap().is_none());
        assert!(device(&["emulated".into(), "samsung-850-pro".into()])
            .unwrap()
            .is_some());
        let e = device(&["emulated".into()]).unwrap_err();
        assert!(e.contains("samsung-850-pro"), "{e}");
        let e = device(&["emulated".into(), "floppy".into()]).unwrap_err();
        assert!(e.starts_with("--device emulated floppy"), "{e}");
        let e = device(&["tape".into()]).unwrap_err();
        assert!(e.contains("native") && e.contains("emulated PRESET"), "{e}");
    }

    #[test]
    fn flush_mode_flag_accepts_only_0_1_2() {
        assert_eq!(flush_mode(1).unwrap(), FlushMode::SyncAtCommit);
        assert!(flush_mode(3).unwrap_err().contains("0, 1 and 2"));
    }

    #[test]
    fn free_space_of_a_missing_path_is_that_of_its_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("a/b/c");
        assert!(free_bytes(&missing).unwrap() > 0);
        let e = require_free(dir.path(), u64::MAX, "the test").unwrap_err();
        assert!(e.contains("needs about") && e.contains("free"), "{e}");
    }

    #[test]
    fn copy_database_copies_every_file_and_replaces_an_old_copy() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        let to = dir.path().join("to");
        fs::create_dir_all(&from).unwrap();
        fs::write(from.join("a"), b"alpha").unwrap();
        fs::write(from.join("b"), b"beta").unwrap();
        fs::create_dir_all(&to).unwrap();
        fs::write(to.join("stale"), b"x").unwrap();
        copy_database(&from, &to).unwrap();
        assert_eq!(fs::read(to.join("a")).unwrap(), b"alpha");
        assert_eq!(fs::read(to.join("b")).unwrap(), b"beta");
        assert!(!to.join("stale").exists());
        assert_eq!(dir_bytes(&to).unwrap(), 9);
    }
}
