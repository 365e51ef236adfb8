//! `DirectFile`: a file opened with `O_DIRECT`, bypassing the page cache.
//!
//! Models the `--io direct` mode (InnoDB's `innodb_flush_method=O_DIRECT`):
//! every read reaches the device, so read latency and IOPS are the device's
//! and the buffer pool is the only cache. Writes still need `sync_data`
//! (fdatasync) to be durable: O_DIRECT skips the page cache, not the
//! device's volatile write cache or the file's metadata.
//!
//! Invariants:
//! - every transfer reaching the OS has an offset, a length and a buffer
//!   address that are multiples of [`ALIGNMENT`];
//! - an unaligned offset or length is the caller's error
//!   ([`StorageError::Unaligned`]); an unaligned *buffer address* is not: the
//!   data is copied through an aligned bounce buffer allocated for the call;
//! - a filesystem that refuses O_DIRECT at open (`EINVAL`, e.g. older tmpfs)
//!   gives [`StorageError::DirectIoUnsupported`], whose message tells the
//!   user to choose the buffered backend.

use std::io;
use std::path::Path;

use super::aligned::{is_addr_aligned, is_aligned, AlignedBuf, ALIGNMENT};
use super::positional::{io_error, PositionalFile};
use super::{BatchWrite, Result, StorageBackend, StorageError};

/// A file read and written with `O_DIRECT`.
pub struct DirectFile {
    file: PositionalFile,
}

impl DirectFile {
    /// Opens `path` with `O_DIRECT`; with `create`, creates it if missing.
    pub fn open(path: impl AsRef<Path>, create: bool) -> Result<Self> {
        let path = path.as_ref();
        #[cfg(target_os = "linux")]
        {
            PositionalFile::open(path, create, libc::O_DIRECT)
                .map(|file| Self { file })
                .map_err(|e| open_error(path, e))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = create;
            Err(StorageError::DirectIoUnsupported {
                path: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::Unsupported, "o_direct is only implemented on linux"),
            })
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    fn check_aligned(&self, offset: u64, len: usize) -> Result<()> {
        if is_aligned(offset) && is_aligned(len as u64) {
            Ok(())
        } else {
            Err(StorageError::Unaligned {
                path: self.file.path().to_path_buf(),
                offset,
                len,
                alignment: ALIGNMENT,
            })
        }
    }
}

/// `EINVAL` at open with `O_DIRECT` means the filesystem does not support
/// it; any other error is an ordinary open failure.
pub(crate) fn open_error(path: &Path, source: io::Error) -> StorageError {
    if source.raw_os_error() == Some(libc::EINVAL) {
        StorageError::DirectIoUnsupported {
            path: path.to_path_buf(),
            source,
        }
    } else {
        io_error(path, "open", 0, 0, source)
    }
}

impl StorageBackend for DirectFile {
    fn len(&self) -> Result<u64> {
        self.file.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.check_aligned(offset, buf.len())?;
        if is_addr_aligned(buf) {
            return self.file.read(offset, buf);
        }
        let mut bounce = AlignedBuf::zeroed(buf.len());
        self.file.read(offset, &mut bounce)?;
        buf.copy_from_slice(&bounce);
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_aligned(offset, data.len())?;
        if is_addr_aligned(data) {
            return self.file.write(offset, data);
        }
        let bounce = AlignedBuf::copy_from(data);
        self.file.write(offset, &bounce)
    }

    fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
        for (offset, data) in writes {
            self.check_aligned(*offset, data.len())?;
        }
        if writes.iter().all(|(_, data)| is_addr_aligned(data)) {
            return self.file.write_many(writes);
        }
        let bounces: Vec<Option<AlignedBuf>> = writes
            .iter()
            .map(|(_, data)| (!is_addr_aligned(data)).then(|| AlignedBuf::copy_from(data)))
            .collect();
        let aligned: Vec<BatchWrite<'_>> = writes
            .iter()
            .zip(&bounces)
            .map(|((offset, data), bounce)| (*offset, bounce.as_deref().unwrap_or(data)))
            .collect();
        self.file.write_many(&aligned)
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.file.set_len(len)
    }

    fn sync_data(&self) -> Result<()> {
        self.file.sync_data()
    }

    fn close(&self) -> Result<()> {
        self.file.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_in_tmp(dir: &tempfile::TempDir) -> Option<DirectFile> {
        match DirectFile::open(dir.path().join("d.ibd"), true) {
            Ok(f) => Some(f),
            Err(StorageError::DirectIoUnsupported { .. }) => None,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn unaligned_buffer_address_goes_through_bounce_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let Some(f) = open_in_tmp(&dir) else { return };
        let mut backing = vec![0u8; 2 * ALIGNMENT + 1];
        let start = if is_addr_aligned(&backing) { 1 } else { 0 };
        let data = &mut backing[start..start + ALIGNMENT];
        data.fill(0xAB);
        assert!(!is_addr_aligned(data));
        f.write(ALIGNMENT as u64, data).unwrap();
        let mut back = vec![0u8; ALIGNMENT + 1];
        f.read(ALIGNMENT as u64, &mut back[1..]).unwrap();
        assert!(back[1..].iter().all(|b| *b == 0xAB));
    }

    #[test]
    fn unaligned_offset_or_length_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let Some(f) = open_in_tmp(&dir) else { return };
        let buf = AlignedBuf::zeroed(ALIGNMENT);
        let e = f.write(100, &buf).unwrap_err();
        assert!(matches!(e, StorageError::Unaligned { offset: 100, .. }), "{e}");
        let e = f.write(0, &buf[..100]).unwrap_err();
        assert!(matches!(e, StorageError::Unaligned { len: 100, .. }), "{e}");
    }

    #[test]
    fn einval_at_open_means_direct_io_unsupported() {
        let e = open_error(Path::new("/x/y"), io::Error::from_raw_os_error(libc::EINVAL));
        assert!(matches!(e, StorageError::DirectIoUnsupported { .. }));
        let e = open_error(Path::new("/x/y"), io::Error::from_raw_os_error(libc::ENOENT));
        assert!(matches!(e, StorageError::Io { op: "open", .. }));
    }
}
