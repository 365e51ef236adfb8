//! A prepared TPC-C database directory on the engine: its manifest, the
//! disk space a load or a copy needs, and the copy `compare` runs each
//! policy on.
//!
//! The manifest (`flushwise-tpcc.json`, written by `prepare` after the load
//! completed) records what later commands must agree on (page size) and what
//! produced the data (warehouses, seed, commit, the data file's size). The
//! database itself also knows whether its load completed
//! (`tpcc::loaded_warehouses`): the manifest is a convenience, never the
//! only proof.
//!
//! `prepare` writes a load marker (`flushwise-tpcc.loading`) before it
//! creates anything and removes it after the manifest is durable, so a
//! directory a killed `prepare` left behind is named as such
//! ([`PreparedState::Unfinished`]), and `prepare --force` wipes and loads
//! again. Every command takes the database's directory lock
//! ([`flushwise_engine::db::DirLock`]) before it reads or changes a file
//! there, and hands it to the database it opens.
//!
//! Invariant: a copy is complete and fsynced before a run opens it, so every
//! policy starts from the same bytes.

use flushwise_core::device::DeviceSpec;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flushwise_engine::db::dir_lock::LOCK_FILE;
use flushwise_engine::db::{DbOptions, DbPaths, DirLock};

use serde::{Deserialize, Serialize};

use flushwise_engine::page::PageSize;
use flushwise_engine::storage::IoMode;
use flushwise_workloads::tpcc::CheckReport;

/// The manifest's file name inside a database directory.
pub const MANIFEST_FILE: &str = "flushwise-tpcc.json";
/// Present while `prepare` runs: a directory that still has it after
/// `prepare` ended holds an unfinished load.
pub const LOAD_MARKER_FILE: &str = "flushwise-tpcc.loading";

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
    /// `flushwise.data` when the load finished (it only grows after that):
    /// a shorter file was truncated. 0 in manifests written before it was
    /// recorded (no check).
    #[serde(default)]
    pub data_file_bytes: u64,
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
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Decodes a manifest's text: the JSON `write` renders, with the fields
    /// later commands rely on checked. The error names the problem.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| format!("not a flushwise manifest: {e}"))?;
        manifest.validate()?;
        Ok(manifest)
    }

    /// What `write` puts in the file (pretty JSON and a final newline).
    pub fn render(&self) -> Result<String, String> {
        self.validate()?;
        let text = serde_json::to_string_pretty(self).map_err(|e| format!("cannot render the manifest: {e}"))?;
        Ok(text + "\n")
    }

    /// Writes the manifest durably and whole: beside it first, synced, then
    /// renamed over any old one and the directory synced.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        crate::workload_dir::write_durably(dir, &Self::path(dir), &self.render()?)
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir).and_then(|d| d.sync_all())
}

/// What a directory holds, as far as `tpcc` commands are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreparedState {
    /// No database file, no manifest.
    Empty,
    /// `prepare` finished: the manifest is there, the load marker is not.
    Prepared,
    /// `prepare` started and did not finish: the load marker is there, or
    /// database files without a manifest.
    Unfinished,
}

/// The database files under `dir` (and `redo_dir`), as the engine names
/// them, plus the redo log's resize scratch file.
pub fn database_files(dir: &Path, redo_dir: Option<&Path>) -> Vec<PathBuf> {
    let options = DbOptions {
        redo_dir: redo_dir.map(Path::to_path_buf),
        ..DbOptions::default()
    };
    let paths = DbPaths::new(dir, &options);
    let mut resize = paths.redo.clone().into_os_string();
    resize.push(".resize");
    let leaf_space = flushwise_engine::db::leaf_space::path_in(paths.data.parent().unwrap_or(Path::new(".")));
    vec![
        paths.data,
        paths.doublewrite,
        paths.redo,
        PathBuf::from(resize),
        // The change buffer's own file when it lives beside the data, and
        // the leaves' free space a clean close kept: a wiped database must
        // not leave them to the next one.
        paths.change_buffer,
        leaf_space,
    ]
}

/// The state of `dir` (see [`PreparedState`]).
pub fn prepared_state(dir: &Path, redo_dir: Option<&Path>) -> PreparedState {
    if dir.join(LOAD_MARKER_FILE).exists() {
        return PreparedState::Unfinished;
    }
    let manifest = Manifest::path(dir).exists();
    let files = database_files(dir, redo_dir).iter().any(|p| p.exists());
    match (manifest, files) {
        (true, _) => PreparedState::Prepared,
        (false, true) => PreparedState::Unfinished,
        (false, false) => PreparedState::Empty,
    }
}

/// Why a command refuses the directory a killed `prepare` left.
pub fn unfinished_prepare_error(dir: &Path) -> String {
    format!(
        "--dir {}: the `tpcc prepare` that created this database did not finish (it was interrupted: {}); run `flushwise tpcc prepare --dir {} --force` to wipe it and load again",
        dir.display(),
        if dir.join(LOAD_MARKER_FILE).exists() {
            format!("{LOAD_MARKER_FILE} is still there")
        } else {
            format!("database files but no {MANIFEST_FILE}")
        },
        dir.display()
    )
}

/// Locks the database's directories (`dir`, and `redo_dir` when given; each
/// must exist) for the caller, who hands the lock to the database it opens
/// ([`DbOptions::dir_lock`]). Refused, naming the holder's pid, while
/// another process has the database open.
pub fn lock_dirs(dir: &Path, redo_dir: Option<&Path>) -> Result<Arc<DirLock>, String> {
    let mut dirs = vec![dir];
    dirs.extend(redo_dir);
    DirLock::acquire(&dirs).map(Arc::new).map_err(|e| e.to_string())
}

/// Locks a prepared database for a command that opens it (`run`, `check`,
/// `export`, a copy's source) and reads its manifest: refuses a directory
/// without a database, a load that did not finish, and a data file
/// shorter than when the load finished (naming both sizes).
pub fn open_prepared(dir: &Path, redo_dir: Option<&Path>) -> Result<(Arc<DirLock>, Manifest), String> {
    if !dir.is_dir() || prepared_state(dir, redo_dir) == PreparedState::Empty {
        // Manifest::read names the missing database and the fix (and no
        // lock file is left in a directory that holds no database).
        let missing = format!("--dir {}: no prepared TPC-C database here", dir.display());
        return Err(Manifest::read(dir).err().unwrap_or(missing));
    }
    let lock = lock_dirs(dir, redo_dir)?;
    match prepared_state(dir, redo_dir) {
        PreparedState::Unfinished if dir.join(crate::tpch::MANIFEST_FILE).exists() => {
            return Err(format!(
                "--dir {}: this is a TPC-H database ({}); TPC-C commands need `flushwise tpcc prepare`",
                dir.display(),
                crate::tpch::MANIFEST_FILE
            ))
        }
        PreparedState::Unfinished => return Err(unfinished_prepare_error(dir)),
        PreparedState::Empty | PreparedState::Prepared => {}
    }
    let manifest = Manifest::read(dir)?;
    let data = database_files(dir, redo_dir).remove(0);
    let data_bytes = fs::metadata(&data)
        .map_err(|e| format!("{}: {e}", data.display()))?
        .len();
    if data_bytes < manifest.data_file_bytes {
        return Err(format!(
            "{}: the data file is shorter than expected: it is {data_bytes} bytes, but it was {} bytes when `tpcc prepare` finished ({MANIFEST_FILE}), and it only grows; it was truncated or replaced: restore it from a copy, or load again with `flushwise tpcc prepare --dir {} --force`",
            data.display(),
            manifest.data_file_bytes,
            dir.display()
        ));
    }
    Ok((lock, manifest))
}

/// Removes the database files, the manifest and the load marker of `dir`
/// (`prepare --force`); the caller holds the directory lock. Other files
/// are left alone.
pub fn wipe_database(dir: &Path, redo_dir: Option<&Path>) -> Result<(), String> {
    let mut files = database_files(dir, redo_dir);
    files.extend([Manifest::path(dir), dir.join(LOAD_MARKER_FILE)]);
    for path in files {
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: cannot remove: {e}", path.display())),
        }
    }
    for d in std::iter::once(dir).chain(redo_dir) {
        sync_dir(d).map_err(|e| format!("{}: cannot sync: {e}", d.display()))?;
    }
    Ok(())
}

/// Writes the load marker durably (`prepare`, before the database exists).
pub fn write_load_marker(dir: &Path, text: &str) -> Result<(), String> {
    let path = dir.join(LOAD_MARKER_FILE);
    let write = || -> std::io::Result<()> {
        let mut file = fs::File::create(&path)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        sync_dir(dir)
    };
    write().map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Removes the load marker durably (`prepare`, after the manifest).
pub fn remove_load_marker(dir: &Path) -> Result<(), String> {
    let path = dir.join(LOAD_MARKER_FILE);
    fs::remove_file(&path)
        .and_then(|()| sync_dir(dir))
        .map_err(|e| format!("{}: cannot remove: {e}", path.display()))
}

impl Manifest {
    /// The data file's size now (recorded by `prepare`).
    pub fn data_file_bytes_of(dir: &Path, redo_dir: Option<&Path>) -> Result<u64, String> {
        let data = database_files(dir, redo_dir).remove(0);
        fs::metadata(&data)
            .map(|m| m.len())
            .map_err(|e| format!("{}: {e}", data.display()))
    }

    /// The fields no run can use otherwise: at least one warehouse, a page
    /// size the engine supports, a load time that is a number of seconds.
    fn validate(&self) -> Result<(), String> {
        if self.warehouses == 0 {
            return Err("manifest says 0 warehouses: a prepared database has at least one".into());
        }
        PageSize::new(self.page_size_bytes as usize).map_err(|e| format!("manifest page size: {e}"))?;
        if !(self.load_seconds.is_finite() && self.load_seconds >= 0.0) {
            return Err(format!(
                "manifest load time {} s is not a non-negative number of seconds",
                self.load_seconds
            ));
        }
        Ok(())
    }
}

/// How a run's data device reads in results: `native(direct)` or
/// `emulated <model> (<io>)`.
pub fn device_text(spec: &Option<DeviceSpec>, io: IoMode) -> String {
    match spec {
        None => format!("native({io})"),
        Some(spec) => format!("emulated {} ({io})", spec.describe()),
    }
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
        // The lock file belongs to the source's holder, not to the copy.
        if !meta.is_file() || entry.file_name() == LOCK_FILE {
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

/// `--device native` (`None`: this machine's disk) or `--device emulated
/// PRESET` (the engine's data files behind a device model; PRESET may be
/// `calibrated:PATH`, a preset file from `flushwise device calibrate`, whose
/// path and content hash the device's description, and so the run's
/// configuration hash, carry).
pub fn device_flag(words: &[String]) -> Result<Option<DeviceSpec>, String> {
    let presets = flushwise_core::device::preset_names().join(", ");
    match words {
        [] => Ok(None),
        [kind] if kind.eq_ignore_ascii_case("native") => Ok(None),
        [kind] if kind.eq_ignore_ascii_case("emulated") => Err(format!(
            "--device emulated: name the device model, one of {presets} or calibrated:PATH"
        )),
        [kind, preset] if kind.eq_ignore_ascii_case("emulated") => flushwise_sim::resolve_device(preset)
            .map(Some)
            .map_err(|e| format!("--device emulated {preset}: {e}")),
        _ => Err(format!(
            "--device {}: accepted are `native` and `emulated PRESET` with PRESET one of {presets} or calibrated:PATH",
            words.join(" ")
        )),
    }
}

/// This machine's memory, from `/proc/meminfo` (`MemTotal`); `None` where
/// it cannot be read.
pub fn memory_bytes() -> Option<u64> {
    flushwise_engine::memory::total_bytes()
}

/// Refuses an engine pool larger than the memory available now
/// (`MemAvailable`: its allocation would fail and abort the process, or
/// swap) or than [`flushwise_core::limits::engine_pool_bytes_max`] of this
/// machine's memory (no check where the memory cannot be read). The
/// message gives both numbers.
pub fn require_pool_fits_memory(pool_bytes: u64) -> Result<(), String> {
    if let Some(available) = flushwise_engine::memory::available_bytes() {
        if pool_bytes > available {
            return Err(format!(
                "{} is more than the {} of memory available now (MemAvailable in /proc/meminfo); give a smaller pool, or free memory first",
                human_bytes(pool_bytes),
                human_bytes(available)
            ));
        }
    }
    match memory_bytes() {
        Some(ram) if pool_bytes > flushwise_core::limits::engine_pool_bytes_max(ram) => Err(format!(
            "{} does not fit this machine's {} of memory (at most {}: the rest is for the system, the redo buffer and the connections)",
            human_bytes(pool_bytes),
            human_bytes(ram),
            human_bytes(flushwise_core::limits::engine_pool_bytes_max(ram))
        )),
        _ => Ok(()),
    }
}

/// Replaces the database at `to` (and its redo directory, when both sides
/// have one of their own) with the files of `from`.
pub fn copy_with_redo(from: &Path, from_redo: Option<&Path>, to: &Path, to_redo: Option<&Path>) -> Result<(), String> {
    copy_database(from, to)?;
    if let (Some(from), Some(to)) = (from_redo, to_redo) {
        copy_database(from, to)?;
    }
    Ok(())
}

/// Removes a run copy: its directory and its own redo directory.
pub fn remove_with_redo(dir: &Path, redo: Option<&Path>) -> Result<(), String> {
    for dir in std::iter::once(dir).chain(redo) {
        fs::remove_dir_all(dir).map_err(|e| format!("{}: cannot remove the run copy: {e}", dir.display()))?;
    }
    Ok(())
}

/// Disk per warehouse a load needs, with margin: about 100 MiB of InnoDB
/// pages per warehouse is the usual figure (ecosystem.md §2); ours is
/// smaller, the margin covers page fill and the doublewrite file.
pub const BYTES_PER_WAREHOUSE_ESTIMATE: u64 = 110 << 20;
/// The item table and the files' fixed parts.
pub const BYTES_FIXED_ESTIMATE: u64 = 64 << 20;

/// Bytes a prepared database of `warehouses` is expected to take, redo included.
pub fn database_bytes_estimate(warehouses: u32, redo_bytes: u64) -> u64 {
    BYTES_FIXED_ESTIMATE + u64::from(warehouses) * BYTES_PER_WAREHOUSE_ESTIMATE + redo_bytes
}

/// The verdict of a TPC-C consistency check: one line per violation
/// (condition, warehouse, district, ...) on stderr, then a summary; `Err` if any condition failed.
pub fn check_verdict(report: &CheckReport) -> Result<String, String> {
    let conditions: Vec<String> = report.conditions_checked.iter().map(|c| c.to_string()).collect();
    if report.passed() {
        return Ok(format!(
            "consistency: conditions {} hold for {} warehouses ({} rows read)",
            conditions.join(","),
            report.warehouses,
            report.rows_read
        ));
    }
    let mut lines = Vec::new();
    for v in &report.violations {
        let mut place = format!("warehouse {}", v.w_id);
        if let Some(d) = v.d_id {
            place.push_str(&format!(" district {d}"));
        }
        if let Some(c) = v.c_id {
            place.push_str(&format!(" customer {c}"));
        }
        if let Some(o) = v.o_id {
            place.push_str(&format!(" order {o}"));
        }
        lines.push(format!("condition {} violated at {place}: {}", v.condition, v.detail));
    }
    // Every violation to stderr (diagnostics: stdout may carry JSON); the
    // error names the count and the first.
    for line in &lines {
        eprintln!("{line}");
    }
    Err(format!(
        "tpcc check: {} violations of conditions {}; first: {}",
        report.violations_total,
        conditions.join(","),
        lines.first().cloned().unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            warehouses: 2,
            page_size_bytes: 16384,
            redo_bytes: 256 << 20,
            seed: 42,
            rows: 1_234_567,
            load_seconds: 12.5,
            database_bytes: 300 << 20,
            commit: "f73e89c".into(),
            data_file_bytes: 280 << 20,
        }
    }

    #[test]
    fn manifest_load_time_survives_render_and_parse_exactly() {
        // Found by the manifest fuzz target: without serde_json's
        // float_roundtrip, 4.76565380644543e-11 read back one ulp off.
        let m = Manifest {
            load_seconds: 4.76565380644543e-11,
            ..manifest()
        };
        assert_eq!(Manifest::parse(&m.render().unwrap()), Ok(m));
    }

    #[test]
    fn manifest_with_fields_no_run_can_use_is_refused_naming_the_field() {
        let text = |m: Manifest| serde_json::to_string(&m).unwrap();
        let no_warehouses = Manifest::parse(&text(Manifest {
            warehouses: 0,
            ..manifest()
        }))
        .unwrap_err();
        assert!(no_warehouses.contains("0 warehouses"), "{no_warehouses}");
        let odd_page = Manifest::parse(&text(Manifest {
            page_size_bytes: 1000,
            ..manifest()
        }))
        .unwrap_err();
        assert!(
            odd_page.contains("page size") && odd_page.contains("1000"),
            "{odd_page}"
        );
        let negative = Manifest::parse(&text(Manifest {
            load_seconds: -1.0,
            ..manifest()
        }))
        .unwrap_err();
        assert!(negative.contains("load time"), "{negative}");
        assert!(Manifest::parse("{}").unwrap_err().contains("not a flushwise manifest"));
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
    fn device_flag_accepts_native_and_emulated_presets_and_names_the_choices() {
        assert!(device_flag(&["native".into()]).unwrap().is_none());
        assert!(device_flag(&["emulated".into(), "samsung-850-pro".into()])
            .unwrap()
            .is_some());
        let e = device_flag(&["emulated".into()]).unwrap_err();
        assert!(e.contains("samsung-850-pro"), "{e}");
        let e = device_flag(&["emulated".into(), "floppy".into()]).unwrap_err();
        assert!(e.starts_with("--device emulated floppy"), "{e}");
        let e = device_flag(&["tape".into()]).unwrap_err();
        assert!(e.contains("native") && e.contains("emulated PRESET"), "{e}");
    }

    #[test]
    fn device_flag_reads_a_calibrated_preset_and_names_it_with_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk.toml");
        let text = "format_version = 1\n[model]\nread_base_latency_us = 120\nwrite_base_latency_us = 100\n\
            read_latency_per_outstanding_us = 14\nwrite_latency_per_outstanding_us = 12\ntransfer_us_per_mib = 600\n";
        std::fs::write(&path, text).unwrap();
        let preset = format!("calibrated:{}", path.display());
        let spec = device_flag(&["emulated".into(), preset.clone()]).unwrap().unwrap();
        let hash = flushwise_sim::preset::content_hash(text);
        assert_eq!(spec.describe(), format!("calibrated({}#{hash})", path.display()));
        std::fs::write(&path, "format_version = 1\n").unwrap();
        let e = device_flag(&["emulated".into(), preset]).unwrap_err();
        assert!(e.contains("disk.toml") && e.contains("model"), "{e}");
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
