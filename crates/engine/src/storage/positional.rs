//! Positional file access shared by the direct and buffered backends.
//!
//! Models one open file without seek state: every call names its offset, so
//! any number of threads may read and write at once (`pread`/`pwrite`).
//! `close` takes the handle out under a write lock; every later call fails
//! with [`StorageError::Closed`].
//!
//! Invariants: a read fills the whole buffer or fails (a file that ends
//! first is [`StorageError::ShortRead`]); a write writes everything or
//! fails; an `ENOSPC` from the OS is always reported as
//! [`StorageError::DiskFull`] so the user reads "no space left on device".
//!
//! Growth reserves space: `set_len` beyond the current length allocates
//! the new blocks (`fallocate`, as InnoDB extends its data and log files
//! with `posix_fallocate`), so a full disk is met when a file grows, not
//! later by a page write into a hole, which would leave a page that can
//! neither be written nor dropped. A growth that fails puts the length back:
//! the file is as it was. Filesystems without `fallocate` get a sparse
//! extension (the only option they offer).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use parking_lot::RwLock;

use super::batch_io::{self, BatchWrite};
use super::{Result, StorageError};

pub(crate) struct PositionalFile {
    path: PathBuf,
    file: RwLock<Option<File>>,
}

impl PositionalFile {
    /// Opens `path` read-write with extra `custom_flags` (e.g. `O_DIRECT`).
    /// With `create`, a missing file is created and its directory entry made
    /// durable (the parent directory is fsynced), so a later `sync_data` of
    /// the file is enough for its contents to survive a power loss.
    pub(crate) fn open(path: &Path, create: bool, custom_flags: i32) -> io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .custom_flags(custom_flags)
            .open(path)?;
        if create && !existed {
            sync_parent_dir(path)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: RwLock::new(Some(file)),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn with_file<T>(
        &self,
        op: &'static str,
        offset: u64,
        len: usize,
        f: impl FnOnce(&File) -> io::Result<T>,
    ) -> Result<T> {
        let guard = self.file.read();
        let Some(file) = guard.as_ref() else {
            return Err(StorageError::Closed {
                path: self.path.clone(),
            });
        };
        f(file).map_err(|e| io_error(&self.path, op, offset, len, e))
    }

    pub(crate) fn len(&self) -> Result<u64> {
        self.with_file("stat", 0, 0, |f| f.metadata().map(|m| m.len()))
    }

    pub(crate) fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let wanted = buf.len();
        match self.with_file("read", offset, wanted, |f| f.read_exact_at(buf, offset)) {
            Err(StorageError::Io { source, .. }) if source.kind() == io::ErrorKind::UnexpectedEof => {
                Err(StorageError::ShortRead {
                    path: self.path.clone(),
                    offset,
                    wanted,
                })
            }
            other => other,
        }
    }

    pub(crate) fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.with_file("write", offset, data.len(), |f| f.write_all_at(data, offset))
    }

    /// Writes a batch, all in flight at once through io_uring where the
    /// kernel offers it ([`super::batch_io`]), else from threads.
    pub(crate) fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
        // One write (a user's single-page flush) needs no ring.
        if let [(offset, data)] = writes {
            return self.write(*offset, data);
        }
        let guard = self.file.read();
        let Some(file) = guard.as_ref() else {
            return Err(StorageError::Closed {
                path: self.path.clone(),
            });
        };
        match batch_io::write_uring(file, writes) {
            Some(Ok(())) => Ok(()),
            Some(Err((i, e))) => Err(io_error(&self.path, "write", writes[i].0, writes[i].1.len(), e)),
            None => batch_io::write_threaded(writes.len(), |i| {
                let (offset, data) = writes[i];
                file.write_all_at(data, offset)
                    .map_err(|e| io_error(&self.path, "write", offset, data.len(), e))
            }),
        }
    }

    pub(crate) fn set_len(&self, len: u64) -> Result<()> {
        let old_len = self.len()?;
        if len <= old_len {
            return self.with_file("set_len", len, 0, |f| f.set_len(len));
        }
        let grow = len - old_len;
        // Errors name the growth: "extend of N bytes at offset <old end>".
        self.with_file("extend", old_len, usize::try_from(grow).unwrap_or(usize::MAX), |f| {
            use rustix::fs::{fallocate, FallocateFlags};
            use rustix::io::Errno;
            match fallocate(f, FallocateFlags::empty(), old_len, grow) {
                Ok(()) => Ok(()),
                Err(e) if e == Errno::OPNOTSUPP || e == Errno::NOSYS => f.set_len(len),
                Err(e) => {
                    // A partial allocation may have moved the end of file.
                    f.set_len(old_len)?;
                    Err(io::Error::from(e))
                }
            }
        })
    }

    pub(crate) fn sync_data(&self) -> Result<()> {
        self.with_file("fdatasync", 0, 0, |f| f.sync_data())
    }

    /// Releases the handle. Nothing is buffered in user space, so there is
    /// nothing to flush; durability is `sync_data`'s job, not `close`'s.
    pub(crate) fn close(&self) -> Result<()> {
        match self.file.write().take() {
            Some(file) => {
                drop(file);
                Ok(())
            }
            None => Err(StorageError::Closed {
                path: self.path.clone(),
            }),
        }
    }
}

/// Maps an OS error to the storage error that explains it best.
pub(crate) fn io_error(path: &Path, op: &'static str, offset: u64, len: usize, source: io::Error) -> StorageError {
    if source.raw_os_error() == Some(libc::ENOSPC) {
        return StorageError::DiskFull {
            path: path.to_path_buf(),
            op,
            offset,
            len: len as u64,
        };
    }
    StorageError::Io {
        path: path.to_path_buf(),
        op,
        offset,
        source,
    }
}

/// Makes a newly created directory entry durable.
fn sync_parent_dir(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_from_the_os_reads_no_space_left_on_device() {
        let e = io_error(
            Path::new("/data/t1.ibd"),
            "write",
            16384,
            16384,
            io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert!(e.is_disk_full());
        let msg = e.to_string();
        assert!(msg.contains("/data/t1.ibd: no space left on device"), "{msg}");
    }
}
