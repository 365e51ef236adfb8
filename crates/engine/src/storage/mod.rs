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
//!
//! Above the byte-level backends sit the page-level pieces: a
//! [`Tablespace`] is one file of checksummed pages (format in
//! [`crate::page`]), and the [`Doublewrite`] buffer makes in-place page
//! writes safe against torn writes.
//!
//! Layering (outermost first) of a file opened by [`open_file`]:
//! `Checked` (sticky errors) → [`EmulatedFile`] (optional modelled latency)
//! → [`DirectFile`] or [`BufferedFile`] (the real file). Tests slip a
//! [`FaultInjector`] under `Checked` to fail chosen calls. A database can
//! also live on a [`StorageOpener`] instead of real files: the
//! [`PowerLossDisk`] keeps its files in memory and, when its power is cut,
//! keeps, drops or tears each write not yet synced (crash torture).

pub mod aligned;
pub mod batch_io;
pub mod buffered;
pub mod checked;
pub mod direct;
pub mod doublewrite;
pub mod emulated;
pub mod fault;
mod positional;
pub mod power_loss;
pub mod tablespace;
pub mod write_timing;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

pub use aligned::{AlignedBuf, ALIGNMENT};
pub use batch_io::{batch_io_mode, BatchWrite};
pub use buffered::BufferedFile;
pub use checked::Checked;
pub use direct::DirectFile;
pub use doublewrite::{Doublewrite, DoublewriteReport};
pub use emulated::{EmulatedDevice, EmulatedFile, EmulationStats, SharedDeviceModel};
pub use fault::{FaultCounters, FaultInjector, FaultPlan};
pub use power_loss::{CutMode, CutReport, DiskCounters, DiskFaultPlan, DiskImage, PowerLossDisk};
pub use tablespace::{EngineStorageError, Tablespace};
pub use write_timing::{WritePathClock, WritePathTimes, WritePhase};

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
    #[error("{path}: no space left on device: {op} of {len} bytes at offset {offset} failed")]
    DiskFull {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        len: u64,
    },
    #[error("{path}: the file is closed")]
    Closed { path: PathBuf },
    #[error("{path}: an earlier write or fsync failed ({first_error}); the storage refuses further work: close and re-open the database")]
    Poisoned { path: PathBuf, first_error: String },
}

impl StorageError {
    /// True for an `ENOSPC`-like failure: the device has no room left.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, StorageError::DiskFull { .. })
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            StorageError::Io { path, .. }
            | StorageError::ShortRead { path, .. }
            | StorageError::DirectIoUnsupported { path, .. }
            | StorageError::Unaligned { path, .. }
            | StorageError::DiskFull { path, .. }
            | StorageError::Closed { path }
            | StorageError::Poisoned { path, .. } => path,
        }
    }
}

pub type Result<T> = std::result::Result<T, StorageError>;

/// Positional, thread-safe access to one file.
// redb's six methods, plus a batched write with a default (InnoDB's batch
// of asynchronous in-place writes); an `is_empty` would add nothing.
#[allow(clippy::len_without_is_empty)]
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
    /// Writes every `(offset, data)` of `writes` (not yet durable), as many
    /// in flight at once as the backend can keep; they may reach the file
    /// in any order, so no two may overlap. On an error no further write
    /// starts, the ones in flight finish, and the first error is returned.
    /// The default calls `write` from up to
    /// [`batch_io::IN_PLACE_WRITE_DEPTH`] threads (what a backend that
    /// models or injects per call needs); the real files use io_uring.
    fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
        batch_io::write_threaded(writes.len(), |i| self.write(writes[i].0, writes[i].1))
    }
}

/// Where a database's files live when they are not real files: opens and
/// names them by path. [`PowerLossDisk`] is one (the crash-torture disk).
/// Real files need none (`DbOptions::storage` is `None`).
pub trait StorageOpener: Send + Sync + fmt::Debug {
    /// True if a file exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Opens the file at `path`, creating it empty if `create` and absent.
    fn open(&self, path: &Path, create: bool) -> Result<Arc<dyn StorageBackend>>;
    /// What the files are, for error messages.
    fn describe(&self) -> &'static str;
}

/// Forwards the trait through a smart pointer to the backend it owns.
macro_rules! forward_storage_backend {
    ($($pointer:ident),*) => {$(
        impl<T: StorageBackend + ?Sized> StorageBackend for $pointer<T> {
            fn len(&self) -> Result<u64> {
                (**self).len()
            }
            fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
                (**self).read(offset, buf)
            }
            fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
                (**self).write(offset, data)
            }
            fn set_len(&self, len: u64) -> Result<()> {
                (**self).set_len(len)
            }
            fn sync_data(&self) -> Result<()> {
                (**self).sync_data()
            }
            fn close(&self) -> Result<()> {
                (**self).close()
            }
            fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
                (**self).write_many(writes)
            }
        }
    )*};
}

forward_storage_backend!(Arc, Box);

/// How data files are accessed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub enum IoMode {
    /// `O_DIRECT`: bypass the page cache (the buffer pool is the only cache).
    #[default]
    Direct,
    /// Through the OS page cache; works on every filesystem.
    Buffered,
}

impl IoMode {
    pub const ACCEPTED: [&'static str; 2] = ["direct", "buffered"];

    pub fn as_str(self) -> &'static str {
        match self {
            IoMode::Direct => "direct",
            IoMode::Buffered => "buffered",
        }
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An i/o mode string that is not one of [`IoMode::ACCEPTED`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown i/o mode {given:?}: expected one of \"direct\", \"buffered\"")]
pub struct ParseIoModeError {
    pub given: String,
}

impl FromStr for IoMode {
    type Err = ParseIoModeError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "direct" => Ok(IoMode::Direct),
            "buffered" => Ok(IoMode::Buffered),
            _ => Err(ParseIoModeError { given: s.to_string() }),
        }
    }
}

fn open_raw(path: &Path, mode: IoMode, create: bool) -> Result<Box<dyn StorageBackend>> {
    Ok(match mode {
        IoMode::Direct => Box::new(DirectFile::open(path, create)?),
        IoMode::Buffered => Box::new(BufferedFile::open(path, create)?),
    })
}

/// Opens `path` in `mode` behind the sticky-error [`Checked`] wrapper.
pub fn open_file(path: impl AsRef<Path>, mode: IoMode, create: bool) -> Result<Arc<dyn StorageBackend>> {
    let path = path.as_ref();
    let raw = open_raw(path, mode, create)?;
    Ok(Arc::new(Checked::new(raw, path)))
}

/// Opens `path` in `mode` as a file at `base_offset_bytes` of the emulated
/// `device`, behind the sticky-error [`Checked`] wrapper. Pass clones of
/// one [`EmulatedDevice`] for files that share a disk.
pub fn open_emulated(
    path: impl AsRef<Path>,
    mode: IoMode,
    create: bool,
    device: EmulatedDevice,
    base_offset_bytes: u64,
) -> Result<Arc<dyn StorageBackend>> {
    let path = path.as_ref();
    let raw = open_raw(path, mode, create)?;
    let emulated = EmulatedFile::new(raw, device, base_offset_bytes);
    Ok(Arc::new(Checked::new(emulated, path)))
}

/// True if `path` (or, for a file not yet created, its directory) is on a
/// tmpfs (RAM-backed, no O_DIRECT): the change buffer's `separate-device`
/// file on `/dev/shm`, as `004` put its insert buffer on a ramdisk.
pub fn is_tmpfs(path: &Path) -> bool {
    let probe = if path.exists() { Some(path) } else { path.parent() };
    probe
        .and_then(|p| rustix::fs::statfs(p).ok())
        // `f_type`'s integer type differs between targets.
        .is_some_and(|st| {
            #[allow(clippy::unnecessary_cast)]
            let is = st.f_type as i64 == libc::TMPFS_MAGIC as i64;
            is
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_mode_parses_accepted_values_and_lists_them_on_error() {
        assert_eq!("direct".parse::<IoMode>(), Ok(IoMode::Direct));
        assert_eq!("Buffered".parse::<IoMode>(), Ok(IoMode::Buffered));
        let e = "mmap".parse::<IoMode>().unwrap_err().to_string();
        assert!(
            e.contains("\"mmap\"") && e.contains("direct") && e.contains("buffered"),
            "{e}"
        );
        for s in IoMode::ACCEPTED {
            assert_eq!(s.parse::<IoMode>().unwrap().to_string(), s);
        }
    }
}
