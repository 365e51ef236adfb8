//! A counting storage backend for the redo log's tests: it wraps any
//! backend, counts writes and fsyncs, and can hold every `sync_data` at a
//! gate so a test can line up many committers behind one in-flight fsync.
//!
//! Invariants: every call is forwarded unchanged; counters only grow.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flushwise_engine::storage::{BufferedFile, Result, StorageBackend};
use parking_lot::{Condvar, Mutex};

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

    /// Opens (creating) `path` as a buffered file underneath.
    pub fn open_file(path: &Path) -> Result<Arc<Self>> {
        Ok(Arc::new(Self::new(Arc::new(BufferedFile::open(path, true)?))))
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
