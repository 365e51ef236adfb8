//! A prepared database directory of a workload other than TPC-C (TPC-H,
//! Wisconsin, the insert load): the steps every such `prepare`, `run` and `export` shares,
//! with the TPC-C directory's rules ([`crate::database`]).
//!
//! - `prepare` ([`begin_prepare`] .. [`finish_prepare`]): the directories
//!   created, the directory lock taken, a database already there refused
//!   (or wiped with `--force`), free space checked, the load marker written
//!   durably before the database exists; after the load the manifest
//!   written durably (temporary file, fsync, rename, directory fsync), then
//!   the marker removed durably.
//! - Every later command ([`open_prepared`]): the lock taken before the
//!   manifest is read; an unfinished load (marker, or database files
//!   without a manifest), another workload's database, and a data file
//!   shorter than when the load finished are refused with what to do.
//!
//! Invariant: a directory holds a manifest only if its load completed, and
//! the load marker from before the first database file until after the
//! manifest is durable.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::de::DeserializeOwned;
use serde::Serialize;

use flushwise_engine::db::{Database, DbOptions, DirLock};
use flushwise_engine::page::PageSize;
use flushwise_sim::options::size_flag;

use crate::database;
use crate::engine_options::{self, DbLocation};
use crate::sim_runner::progress_enabled;

/// Which workload a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirKind {
    /// "TPC-H".
    pub workload: &'static str,
    /// The command group: "tpch".
    pub command: &'static str,
    pub manifest_file: &'static str,
    pub marker_file: &'static str,
    /// The flags `prepare` needs besides `--dir`, for messages: "--sf SF".
    pub prepare_flags: &'static str,
}

/// Every non-TPC-C kind, to name another workload's directory.
const OTHER_MANIFESTS: [(&str, &str); 4] = [
    (database::MANIFEST_FILE, "TPC-C"),
    ("flushwise-tpch.json", "TPC-H"),
    ("flushwise-wisconsin.json", "Wisconsin"),
    ("flushwise-insert.json", "insert"),
];

/// Writes `path` in `dir` whole and durably: a temporary file beside it,
/// synced, renamed over it, the directory synced.
pub fn write_durably(dir: &Path, path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut file = fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        fs::File::open(dir)?.sync_all()
    };
    write().map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Reads the manifest of `kind` in `dir`; a missing one says how to make it.
pub fn read_manifest<T: DeserializeOwned>(dir: &Path, kind: &DirKind) -> Result<T, String> {
    let path = dir.join(kind.manifest_file);
    let text = fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "--dir {}: no prepared {} database here ({} is missing); run `flushwise {} prepare --dir {} {}` first",
                dir.display(),
                kind.workload,
                kind.manifest_file,
                kind.command,
                dir.display(),
                kind.prepare_flags
            )
        } else {
            format!("{}: cannot read: {e}", path.display())
        }
    })?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a flushwise {} manifest: {e}", path.display(), kind.workload))
}

/// Writes the manifest of `kind` durably (pretty JSON, final newline).
pub fn write_manifest<T: Serialize>(dir: &Path, kind: &DirKind, manifest: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(manifest).map_err(|e| format!("cannot render the manifest: {e}"))? + "\n";
    write_durably(dir, &dir.join(kind.manifest_file), &text)
}

fn has_database(dir: &Path, redo_dir: Option<&Path>) -> bool {
    database::database_files(dir, redo_dir).iter().any(|p| p.exists())
}

/// The first step of `prepare`: directories, lock, an existing database
/// refused (or wiped with `force`), free space (`needed_bytes` for
/// `what`), the load marker (`marker_text`). Returns the lock, held until
/// [`finish_prepare`].
pub fn begin_prepare(
    location: &DbLocation,
    kind: &DirKind,
    force: bool,
    needed_bytes: u64,
    what: &str,
    marker_text: &str,
) -> Result<Arc<DirLock>, String> {
    let dir = &location.dir;
    let redo_dir = location.redo_dir.as_deref();
    for d in std::iter::once(dir.as_path()).chain(redo_dir) {
        fs::create_dir_all(d).map_err(|e| format!("{}: cannot create the directory: {e}", d.display()))?;
    }
    let lock = database::lock_dirs(dir, redo_dir)?;
    let manifests = OTHER_MANIFESTS
        .iter()
        .map(|(f, _)| *f)
        .chain([kind.manifest_file, kind.marker_file]);
    let exists = has_database(dir, redo_dir) || manifests.clone().any(|f| dir.join(f).exists());
    if exists {
        if !force {
            return Err(format!(
                "--dir {}: a database is already here; remove the directory, choose another, or add --force to wipe it and load again",
                dir.display()
            ));
        }
        database::wipe_database(dir, redo_dir)?;
        for f in manifests {
            let path = dir.join(f);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: cannot remove: {e}", path.display())),
            }
        }
    }
    database::require_free(dir, needed_bytes, what)?;
    write_durably(dir, &dir.join(kind.marker_file), marker_text)?;
    Ok(lock)
}

/// The engine settings of a load, as `prepare`'s flags give them.
#[derive(Clone, Copy, Debug)]
pub struct LoadFlags<'a> {
    pub page_size: &'a str,
    pub redo: &'a str,
    pub buffer_pool: &'a str,
    pub force: bool,
}

/// A database created for a load, with what `finish_prepare` records.
pub struct CreatedForLoad {
    pub db: Database,
    /// Held until the manifest is written.
    pub lock: Arc<DirLock>,
    pub page_size: PageSize,
    pub redo_bytes: u64,
}

/// `prepare` up to the empty database: the flags checked (each error names
/// its flag), [`begin_prepare`] (`needed_bytes` from the redo capacity,
/// `what` and the marker's text for messages), the database created.
pub fn create_for_load(
    location: &DbLocation,
    kind: &DirKind,
    flags: &LoadFlags<'_>,
    needed_bytes: impl FnOnce(u64) -> u64,
    what: &str,
    marker_text: &str,
) -> Result<CreatedForLoad, String> {
    let page = engine_options::page_size(flags.page_size)?;
    let redo_bytes = size_flag("--redo", flags.redo)?;
    engine_options::check_redo_flag(&format!("--redo {}", flags.redo), redo_bytes, page)?;
    let buffer_pool_bytes = size_flag("--buffer-pool", flags.buffer_pool)?;
    database::require_pool_fits_memory(buffer_pool_bytes)
        .map_err(|e| format!("--buffer-pool {}: {e}", flags.buffer_pool))?;
    let io = engine_options::io_mode(&location.io)?;
    let lock = begin_prepare(location, kind, flags.force, needed_bytes(redo_bytes), what, marker_text)?;
    let options = DbOptions {
        redo_dir: location.redo_dir.clone(),
        page_size: page,
        buffer_pool_bytes,
        redo_bytes,
        io,
        dir_lock: Some(Arc::clone(&lock)),
        ..DbOptions::default()
    };
    let db = Database::create(&location.dir, options).map_err(|e| format!("{}: {e}", location.dir.display()))?;
    Ok(CreatedForLoad {
        db,
        lock,
        page_size: page,
        redo_bytes,
    })
}

/// The last step of `prepare`: the manifest written, then the marker
/// removed, both durably.
pub fn finish_prepare<T: Serialize>(dir: &Path, kind: &DirKind, manifest: &T) -> Result<(), String> {
    write_manifest(dir, kind, manifest)?;
    let marker = dir.join(kind.marker_file);
    fs::remove_file(&marker)
        .and_then(|()| fs::File::open(dir)?.sync_all())
        .map_err(|e| format!("{}: cannot remove: {e}", marker.display()))
}

/// The data file's size now.
pub fn data_file_bytes(location: &DbLocation) -> Result<u64, String> {
    let data = database::database_files(&location.dir, location.redo_dir.as_deref()).remove(0);
    fs::metadata(&data)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", data.display()))
}

/// Locks a prepared directory of `kind` and reads its manifest, refusing
/// an unfinished load, another workload's database and a data file
/// shorter than `recorded_data_bytes(&manifest)`.
pub fn open_prepared<T: DeserializeOwned>(
    location: &DbLocation,
    kind: &DirKind,
    recorded_data_bytes: impl Fn(&T) -> u64,
) -> Result<(Arc<DirLock>, T), String> {
    let dir = &location.dir;
    let redo_dir = location.redo_dir.as_deref();
    if !dir.is_dir() {
        return Err(read_manifest::<T>(dir, kind).err().unwrap_or_default());
    }
    let lock = database::lock_dirs(dir, redo_dir)?;
    if !dir.join(kind.manifest_file).exists() {
        if let Some((file, other)) = OTHER_MANIFESTS
            .iter()
            .find(|(f, _)| *f != kind.manifest_file && dir.join(f).exists())
        {
            return Err(format!(
                "--dir {}: this is a {other} database ({file}); {} commands need `flushwise {} prepare`",
                dir.display(),
                kind.workload,
                kind.command
            ));
        }
    }
    if dir.join(kind.marker_file).exists() || (has_database(dir, redo_dir) && !dir.join(kind.manifest_file).exists()) {
        return Err(format!(
            "--dir {}: the `{} prepare` that created this database did not finish ({} is still there, or database files without {}); run `flushwise {} prepare --dir {} {} --force` to wipe it and load again",
            dir.display(),
            kind.command,
            kind.marker_file,
            kind.manifest_file,
            kind.command,
            dir.display(),
            kind.prepare_flags
        ));
    }
    let manifest: T = read_manifest(dir, kind)?;
    let bytes = data_file_bytes(location)?;
    let recorded = recorded_data_bytes(&manifest);
    if bytes < recorded {
        let data = database::database_files(dir, redo_dir).remove(0);
        return Err(format!(
            "{}: the data file is {bytes} bytes, shorter than the {recorded} bytes it had when `{} prepare` finished; it was truncated or replaced: load again with `flushwise {} prepare --force`",
            data.display(),
            kind.command,
            kind.command
        ));
    }
    Ok((lock, manifest))
}

/// A load's progress on stderr: a bar on a terminal, else a line every
/// 10 s.
pub struct LoadProgress {
    bar: Option<ProgressBar>,
    last_line: Mutex<Instant>,
    unit: &'static str,
}

impl LoadProgress {
    /// `unit` names what is counted ("rows", "tuples").
    pub fn new(expected: u64, unit: &'static str) -> Self {
        let bar = progress_enabled().then(|| {
            let bar = ProgressBar::with_draw_target(Some(expected.max(1)), ProgressDrawTarget::stderr());
            let template = format!("loading [{{bar:30}}] {{percent:>3}}% {{pos}}/{{len}} {unit} {{per_sec}} {{eta}}");
            let style = ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Self {
            bar,
            last_line: Mutex::new(Instant::now()),
            unit,
        }
    }

    /// `loaded` of about `expected` done.
    pub fn update(&self, loaded: u64, expected: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(expected.max(loaded).max(1));
            bar.set_position(loaded);
        } else if let Ok(mut last) = self.last_line.lock() {
            if last.elapsed().as_secs() >= 10 {
                *last = Instant::now();
                eprintln!("loading: {loaded} of about {expected} {}", self.unit);
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: DirKind = DirKind {
        workload: "TPC-H",
        command: "tpch",
        manifest_file: "flushwise-tpch.json",
        marker_file: "flushwise-tpch.loading",
        prepare_flags: "--sf SF",
    };

    #[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
    struct M {
        data: u64,
    }

    fn location(dir: &Path) -> DbLocation {
        DbLocation {
            dir: dir.to_path_buf(),
            redo_dir: None,
            io: "buffered".into(),
        }
    }

    #[test]
    fn a_directory_is_prepared_once_and_every_broken_state_is_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("db");
        let loc = location(&dir);
        let e = open_prepared::<M>(&loc, &KIND, |m| m.data).expect_err("nothing there");
        assert!(
            e.contains("no prepared TPC-H database") && e.contains("tpch prepare"),
            "{e}"
        );
        let lock = begin_prepare(&loc, &KIND, false, 0, "a test", "loading\n").expect("begin");
        // Interrupted here: the marker names it.
        drop(lock);
        fs::write(dir.join("flushwise.data"), vec![0u8; 100]).expect("data");
        let e = open_prepared::<M>(&loc, &KIND, |m| m.data).expect_err("unfinished");
        assert!(e.contains("did not finish") && e.contains("--force"), "{e}");
        let e = begin_prepare(&loc, &KIND, false, 0, "a test", "x").expect_err("refused");
        assert!(e.contains("already here"), "{e}");
        let lock = begin_prepare(&loc, &KIND, true, 0, "a test", "x").expect("wiped");
        assert!(!dir.join("flushwise.data").exists());
        fs::write(dir.join("flushwise.data"), vec![0u8; 100]).expect("data");
        finish_prepare(&dir, &KIND, &M { data: 100 }).expect("finish");
        drop(lock);
        assert!(!dir.join(KIND.marker_file).exists());
        let (_lock, m) = open_prepared::<M>(&loc, &KIND, |m| m.data).expect("open");
        assert_eq!(m, M { data: 100 });
        drop(_lock);
        // A truncated data file is refused with both sizes.
        fs::write(dir.join("flushwise.data"), vec![0u8; 10]).expect("truncate");
        let e = open_prepared::<M>(&loc, &KIND, |m| m.data).expect_err("truncated");
        assert!(e.contains("10 bytes") && e.contains("100 bytes"), "{e}");
        // Another workload's directory is named as such.
        let other = tmp.path().join("c");
        fs::create_dir_all(&other).expect("dir");
        fs::write(other.join(database::MANIFEST_FILE), "{}").expect("manifest");
        let e = open_prepared::<M>(&location(&other), &KIND, |m| m.data).expect_err("tpcc");
        assert!(e.contains("TPC-C database"), "{e}");
    }
}
