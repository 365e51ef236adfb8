//! The narrow storage trait every byte of the engine goes through.
//!
//! Modelled on redb's `StorageBackend`: six documented methods, positional
//! I/O, no seek state. Backends: direct (O_DIRECT), buffered, emulated (real
//! I/O whose completion follows a core device model). A failed write or
//! fsync is sticky: the checked wrapper refuses all further work.
//!
//! Invariants: `read` either fills the whole buffer or fails; `write` either
//! writes the whole buffer or fails; after `sync_data` returns `Ok`, every
//! `write` that returned before it is durable.

use std::path::PathBuf;

/// Errors of the storage layer. Messages are lowercase and name the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    #[error("i/o error on {path}: {op} at offset {offset}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("short read on {path} at offset {offset}: wanted {wanted} bytes, file ends first")]
    ShortRead { path: PathBuf, offset: u64, wanted: usize },
    #[error("{path}: the filesystem refused O_DIRECT ({source}); choose the buffered backend (--io buffered) on this filesystem")]
    DirectIoUnsupported {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unaligned direct i/o: offset {offset} and length {len} must be multiples of {alignment}")]
    Unaligned {
        path: PathBuf,
        offset: u64,
        len: usize,
        alignment: usize,
    },
    #[error("{path}: an earlier write or fsync failed ({first_error}); the storage refuses further work: close and re-open the database")]
    Poisoned { path: PathBuf, first_error: String },
}

pub type Result<T> = std::result::Result<T, StorageError>;

/// Positional, thread-safe access to one file.
pub trait StorageBackend: Send + Sync {
    /// Current length of the file in bytes.
    fn len(&self) -> Result<u64>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Writes all of `data` at `offset` (not yet durable).
    fn write(&self, offset: u64, data: &[u8]) -> Result<()>;
    /// Grows or shrinks the file to `len` bytes.
    fn set_len(&self, len: u64) -> Result<()>;
    /// Makes every completed `write` durable (fdatasync).
    fn sync_data(&self) -> Result<()>;
    /// Flushes and releases the file; later calls fail.
    fn close(&self) -> Result<()>;
}
