//! `Checked<B>`: sticky I/O errors, after redb's checked backend.
//!
//! After a failed `write`, `set_len` or `sync_data` the state of the file on
//! the device is unknown: the OS may have dropped the dirty pages and
//! cleared the error, so a retried fsync can report success for data that
//! never reached the disk (PostgreSQL's "fsyncgate"). A failed fsync is
//! therefore never retried as if nothing happened: the first such error
//! poisons the backend and every later call, reads included, returns
//! [`StorageError::Poisoned`] naming that first error. The only way on is to
//! close and re-open the database, whose recovery decides what is durable.
//!
//! Invariants: once poisoned, never un-poisoned; the failing call itself
//! returns its own error, every later call returns `Poisoned`; a failed read
//! does not poison (nothing was changed), so reading past the end of a file
//! stays a plain, recoverable error; a `set_len` refused for lack of space
//! ([`StorageError::DiskFull`]) does not poison either: backends leave the
//! file as it was (the positional file puts the length back, the fault
//! injector refuses before the call), so the database can go on serving
//! what fits, as InnoDB goes on after "the table is full"; `close` always
//! releases the inner file.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{BatchWrite, Result, StorageBackend, StorageError};

/// A backend that refuses all work after its first failed mutation.
pub struct Checked<B> {
    inner: B,
    path: PathBuf,
    first_error: OnceLock<String>,
}

impl<B: StorageBackend> Checked<B> {
    /// Wraps `inner`; `path` names the file in `Poisoned` errors.
    pub fn new(inner: B, path: impl Into<PathBuf>) -> Self {
        Self {
            inner,
            path: path.into(),
            first_error: OnceLock::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The error that poisoned this backend, if any.
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.get().map(String::as_str)
    }

    pub fn is_poisoned(&self) -> bool {
        self.first_error.get().is_some()
    }

    fn refuse_if_poisoned(&self) -> Result<()> {
        match self.first_error.get() {
            None => Ok(()),
            Some(first) => Err(StorageError::Poisoned {
                path: self.path.clone(),
                first_error: first.clone(),
            }),
        }
    }

    /// Runs a mutation; its failure poisons the backend.
    fn mutate(&self, f: impl FnOnce(&B) -> Result<()>) -> Result<()> {
        self.refuse_if_poisoned()?;
        self.poison_on_error(f(&self.inner))
    }

    fn poison_on_error(&self, result: Result<()>) -> Result<()> {
        if let Err(e) = &result {
            // Only the first error is kept: `set` fails if another thread
            // poisoned first, and that earlier error is the one to report.
            let _ = self.first_error.set(e.to_string());
        }
        result
    }
}

impl<B: StorageBackend> StorageBackend for Checked<B> {
    fn len(&self) -> Result<u64> {
        self.refuse_if_poisoned()?;
        self.inner.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.refuse_if_poisoned()?;
        self.inner.read(offset, buf)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.mutate(|b| b.write(offset, data))
    }

    fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
        self.mutate(|b| b.write_many(writes))
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.refuse_if_poisoned()?;
        match self.inner.set_len(len) {
            Err(e) if e.is_disk_full() => Err(e),
            other => self.poison_on_error(other),
        }
    }

    fn sync_data(&self) -> Result<()> {
        self.mutate(|b| b.sync_data())
    }

    fn close(&self) -> Result<()> {
        let closed = self.inner.close();
        self.refuse_if_poisoned()?;
        closed
    }
}
