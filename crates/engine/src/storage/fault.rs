//! `FaultInjector`: a backend wrapper that fails chosen I/O on purpose.
//!
//! After SQLite's `testvfs` and `do_ioerr_test`: a fault plan fails the N-th
//! read, write or sync (counting from 1 after the plan is armed) with `EIO`,
//! either once (transient) or from then on (persistent), and
//! [`FaultPlan::disk_full_after_bytes`] models a device that has room for a
//! file of that many bytes: a write or `set_len` that would grow the file
//! beyond it fails with [`StorageError::DiskFull`] ("no space left on
//! device"), while rewrites inside the file keep working, as on a real full
//! disk. Compiled in normal builds so the crash and fault tests of other
//! crates can use it.
//!
//! Invariants: an injected failure changes nothing in the inner file (the
//! call is refused before it reaches it); counters count every call that
//! reached the injector, failed or not; a disarmed injector is a transparent
//! pass-through.

use std::io;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::{Result, StorageBackend, StorageError};

/// Which calls to fail. `None` fields inject nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Fail the N-th read (1-based) after arming.
    pub fail_read_n: Option<u64>,
    /// Fail the N-th write (1-based) after arming.
    pub fail_write_n: Option<u64>,
    /// Fail the N-th `sync_data` (1-based) after arming.
    pub fail_sync_n: Option<u64>,
    /// Once the N-th call has failed, fail every later call of that kind too.
    pub persistent: bool,
    /// Refuse to grow the file beyond this many bytes (ENOSPC).
    pub disk_full_after_bytes: Option<u64>,
}

impl FaultPlan {
    pub fn fail_nth_write(n: u64) -> Self {
        Self {
            fail_write_n: Some(n),
            ..Self::default()
        }
    }

    pub fn fail_nth_sync(n: u64) -> Self {
        Self {
            fail_sync_n: Some(n),
            ..Self::default()
        }
    }

    pub fn fail_nth_read(n: u64) -> Self {
        Self {
            fail_read_n: Some(n),
            ..Self::default()
        }
    }

    pub fn disk_full_after(bytes: u64) -> Self {
        Self {
            disk_full_after_bytes: Some(bytes),
            ..Self::default()
        }
    }

    pub fn persistent(self) -> Self {
        Self {
            persistent: true,
            ..self
        }
    }
}

/// Calls seen since the plan was armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounters {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub injected: u64,
}

struct State {
    plan: FaultPlan,
    counters: FaultCounters,
}

/// A backend wrapper that injects the failures of its [`FaultPlan`].
pub struct FaultInjector<B> {
    inner: B,
    path: PathBuf,
    state: Mutex<State>,
}

impl<B: StorageBackend> FaultInjector<B> {
    /// A disarmed injector over `inner`; `path` names the file in errors.
    pub fn new(inner: B, path: impl Into<PathBuf>) -> Self {
        Self {
            inner,
            path: path.into(),
            state: Mutex::new(State {
                plan: FaultPlan::default(),
                counters: FaultCounters::default(),
            }),
        }
    }

    /// Replaces the plan and restarts the counters.
    pub fn arm(&self, plan: FaultPlan) {
        let mut state = self.state.lock();
        state.plan = plan;
        state.counters = FaultCounters::default();
    }

    pub fn disarm(&self) {
        self.arm(FaultPlan::default());
    }

    pub fn counters(&self) -> FaultCounters {
        self.state.lock().counters
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    fn injected_eio(&self, op: &'static str, offset: u64, n: u64) -> StorageError {
        StorageError::Io {
            path: self.path.clone(),
            op,
            offset,
            source: io::Error::other(format!("injected i/o error (eio) on {op} #{n}")),
        }
    }

    fn disk_full(&self, op: &'static str, offset: u64, len: u64) -> StorageError {
        StorageError::DiskFull {
            path: self.path.clone(),
            op,
            offset,
            len,
        }
    }
}

/// True if call number `seen` (1-based) is to fail under `nth`.
fn hits(nth: Option<u64>, seen: u64, persistent: bool) -> bool {
    match nth {
        Some(n) if persistent => seen >= n,
        Some(n) => seen == n,
        None => false,
    }
}

impl<B: StorageBackend> StorageBackend for FaultInjector<B> {
    fn len(&self) -> Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        {
            let mut s = self.state.lock();
            s.counters.reads += 1;
            let seen = s.counters.reads;
            if hits(s.plan.fail_read_n, seen, s.plan.persistent) {
                s.counters.injected += 1;
                return Err(self.injected_eio("read", offset, seen));
            }
        }
        self.inner.read(offset, buf)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        {
            let mut s = self.state.lock();
            s.counters.writes += 1;
            let seen = s.counters.writes;
            if hits(s.plan.fail_write_n, seen, s.plan.persistent) {
                s.counters.injected += 1;
                return Err(self.injected_eio("write", offset, seen));
            }
            if let Some(limit) = s.plan.disk_full_after_bytes {
                let end = offset.saturating_add(data.len() as u64);
                if end > limit && end > self.inner.len()? {
                    s.counters.injected += 1;
                    return Err(self.disk_full("write", offset, data.len() as u64));
                }
            }
        }
        self.inner.write(offset, data)
    }

    fn set_len(&self, len: u64) -> Result<()> {
        {
            let mut s = self.state.lock();
            if let Some(limit) = s.plan.disk_full_after_bytes {
                if len > limit && len > self.inner.len()? {
                    s.counters.injected += 1;
                    let current = self.inner.len()?;
                    return Err(self.disk_full("set_len", current, len - current));
                }
            }
        }
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> Result<()> {
        {
            let mut s = self.state.lock();
            s.counters.syncs += 1;
            let seen = s.counters.syncs;
            if hits(s.plan.fail_sync_n, seen, s.plan.persistent) {
                s.counters.injected += 1;
                return Err(self.injected_eio("fdatasync", 0, seen));
            }
        }
        self.inner.sync_data()
    }

    fn close(&self) -> Result<()> {
        self.inner.close()
    }
}
