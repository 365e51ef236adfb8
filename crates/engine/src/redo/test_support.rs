//! Test-only storage backends for the redo log's tests (not for production:
//! the real direct/buffered backends live in `storage/`).
//!
//! - [`FileBackend`]: plain `std::fs::File` with positional I/O.
//! - [`CountingBackend`]: wraps any backend, counts writes and fsyncs, and
//!   can hold every `sync_data` at a gate so a test can line up many
//!   committers behind one in-flight fsync.
//!
//! Invariants: both forward every call unchanged; counters only grow.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::storage::{Result, StorageBackend, StorageError};

/// A file opened read-write (created if missing), positional I/O.
#[derive(Debug)]
pub struct FileBackend {
    path: PathBuf,
    file: File,
}

impl FileBackend {
    pub fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|source| StorageError::Io {
                path: path.to_path_buf(),
                op: "open",
                offset: 0,
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    fn io(&self, op: &'static str, offset: u64, source: std::io::Error) -> StorageError {
        StorageError::Io {
            path: self.path.clone(),
            op,
            offset,
            source,
        }
    }
}

impl StorageBackend for FileBackend {
    fn len(&self) -> Result<u64> {
        self.file.metadata().map(|m| m.len()).map_err(|e| self.io("stat", 0, e))
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                StorageError::ShortRead {
                    path: self.path.clone(),
                    offset,
                    wanted: buf.len(),
                }
            } else {
                self.io("read", offset, e)
            }
        })
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.file
            .write_all_at(data, offset)
            .map_err(|e| self.io("write", offset, e))
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.file.set_len(len).map_err(|e| self.io("set_len", len, e))
    }

    fn sync_data(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| self.io("sync_data", 0, e))
    }

    fn close(&self) -> Result<()> {
        self.sync_data()
    }
}

/// Counts the calls that reach an inner backend; optionally gates fsyncs.
pub struct CountingBackend {
    inner: Arc<dyn StorageBackend>,
    writes: AtomicU64,
    syncs: AtomicU64,
    gate: Mutex<Gate>,
    gate_cv: Condvar,
}

#[derive(Default)]
struct Gate {
    closed: bool,
    /// Syncs currently held at the closed gate.
    held: u64,
}

impl CountingBackend {
    pub fn new(inner: Arc<dyn StorageBackend>) -> Self {
        Self {
            inner,
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            gate: Mutex::new(Gate::default()),
            gate_cv: Condvar::new(),
        }
    }

    /// Opens `path` with a [`FileBackend`] underneath.
    pub fn open_file(path: &Path) -> Result<Arc<Self>> {
        Ok(Arc::new(Self::new(Arc::new(FileBackend::open(path)?))))
    }

    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::SeqCst)
    }

    /// From now on, `sync_data` blocks until [`Self::open_gate`].
    pub fn close_gate(&self) {
        self.gate.lock().closed = true;
    }

    pub fn open_gate(&self) {
        self.gate.lock().closed = false;
        self.gate_cv.notify_all();
    }

    /// Blocks until `n` syncs are held at the closed gate.
    pub fn wait_held(&self, n: u64) {
        let mut g = self.gate.lock();
        while g.held < n {
            self.gate_cv.wait(&mut g);
        }
    }
}

impl StorageBackend for CountingBackend {
    fn len(&self) -> Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read(offset, buf)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.write(offset, data)
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> Result<()> {
        {
            let mut g = self.gate.lock();
            if g.closed {
                g.held += 1;
                self.gate_cv.notify_all();
                while g.closed {
                    self.gate_cv.wait(&mut g);
                }
                g.held -= 1;
            }
        }
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync_data()
    }

    fn close(&self) -> Result<()> {
        self.inner.close()
    }
}
