//! One process at a time per database directory: an exclusive `flock` on a
//! lock file in each directory that holds a database file.
//!
//! Two processes that opened the same files would both write pages and
//! redo, and one of them would soon fail on a duplicate key or a redo log it
//! calls corrupt. So [`open_database`](super::recovery) takes the lock
//! before it reads or creates any file, and the [`Database`](super::Database)
//! holds it until it is closed or dropped (a crash releases it too: the
//! kernel drops a dead process's `flock`s).
//!
//! - The lock file is `flushwise.lock` in the data directory and, when the
//!   redo log lives elsewhere, in the redo directory too (so two databases
//!   cannot share one redo log either). It stays after the lock is
//!   released: deleting it would race with the next opener.
//! - The holder writes its pid into the file, so a refused opener can name
//!   it; the pid is a hint for people (the lock itself is the `flock`).
//! - `LOCK_EX | LOCK_NB`: a second opener fails at once, never waits.
//! - A lock belongs to an open file description, so a second open in the
//!   same process is refused as well.
//! - A caller that must touch the directory's files outside a `Database`
//!   (the CLI's manifest and load marker, a copy of the files) takes the
//!   lock itself with [`DirLock::acquire`] and hands it to the database
//!   through [`DbOptions::dir_lock`](super::DbOptions::dir_lock).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{flock, FlockOperation};

use super::{DbError, DbOptions, DbPaths, Result};

/// The lock file's name in every locked directory.
pub const LOCK_FILE: &str = "flushwise.lock";

/// Exclusive locks on one or more directories, released on drop.
#[derive(Debug)]
pub struct DirLock {
    /// Each locked directory (as given) and its open, locked lock file.
    held: Vec<(PathBuf, File)>,
}

impl DirLock {
    /// Locks every directory of `dirs` (each must exist), in the order
    /// given; on a refusal the ones already taken are released.
    pub fn acquire(dirs: &[&Path]) -> Result<DirLock> {
        let mut held = Vec::with_capacity(dirs.len());
        for dir in dirs {
            if held.iter().any(|(d, _): &(PathBuf, File)| d == dir) {
                continue;
            }
            held.push((dir.to_path_buf(), lock_one(dir)?));
        }
        Ok(DirLock { held })
    }

    /// True if `dir` is one of the locked directories.
    pub fn covers(&self, dir: &Path) -> bool {
        self.held.iter().any(|(d, _)| same_dir(d, dir))
    }

    /// The locked directories.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.held.iter().map(|(d, _)| d.as_path())
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

fn lock_err(dir: &Path, reason: String) -> DbError {
    DbError::Files {
        path: dir.to_path_buf(),
        reason,
    }
}

fn lock_one(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| lock_err(dir, format!("cannot open the lock file {}: {e}", path.display())))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = match text.trim().parse::<u32>() {
                Ok(pid) => format!("process {pid}"),
                Err(_) => "another process (its pid is not written yet)".to_string(),
            };
            return Err(DbError::Locked {
                dir: dir.to_path_buf(),
                holder,
            });
        }
        Err(e) => {
            return Err(lock_err(
                dir,
                format!("cannot lock {}: {e} (a filesystem without flock?)", path.display()),
            ))
        }
    }
    // Ours now: say who holds it.
    let pid = std::process::id();
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{pid}"))
        .map_err(|e| lock_err(dir, format!("cannot write the pid into {}: {e}", path.display())))?;
    Ok(file)
}

/// The directories a database with these paths keeps files in: the data
/// directory, then the redo directory if it is another.
fn database_dirs(paths: &DbPaths) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for file in [&paths.data, &paths.redo] {
        let dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The lock an open or create of a database in `dir` holds: the one the
/// caller passed in `options.dir_lock` (checked to cover the database's
/// directories), or a new one. `create` makes the directories first.
pub(crate) fn for_open(dir: &Path, options: &DbOptions, create: bool) -> Result<Option<Arc<DirLock>>> {
    // A storage opener's files (the in-memory power-loss disk) are this
    // process's alone: no directory to lock, none to create.
    if options.storage.is_some() {
        return Ok(None);
    }
    let dirs = database_dirs(&DbPaths::new(dir, options));
    if let Some(held) = &options.dir_lock {
        return match dirs.iter().find(|d| !held.covers(d)) {
            None => Ok(Some(Arc::clone(held))),
            Some(missing) => Err(DbError::Options {
                reason: format!(
                    "the lock given in dir_lock holds {}, not {}: lock every directory of the database",
                    held.dirs()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    missing.display()
                ),
            }),
        };
    }
    for d in &dirs {
        if create {
            std::fs::create_dir_all(d).map_err(|e| lock_err(d, format!("cannot create the directory: {e}")))?;
        } else if !d.is_dir() {
            return Err(lock_err(d, "no such database directory".to_string()));
        }
    }
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    DirLock::acquire(&refs).map(|l| Some(Arc::new(l)))
}
