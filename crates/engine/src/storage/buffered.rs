//! `BufferedFile`: a file accessed through the OS page cache.
//!
//! Models the `--io buffered` mode (InnoDB's `innodb_flush_method=fsync`):
//! writes land in the page cache and become durable at `sync_data`
//! (fdatasync). Works on every filesystem, including those that refuse
//! O_DIRECT. Reads may be served from the page cache, so measured read
//! latency is not the device's.
//!
//! Invariants: as [`StorageBackend`]; no alignment is required.

use std::path::Path;

use super::positional::{io_error, PositionalFile};
use super::{BatchWrite, Result, StorageBackend};

/// A file read and written through the page cache.
pub struct BufferedFile {
    file: PositionalFile,
}

impl BufferedFile {
    /// Opens `path` read-write; with `create`, creates it if missing.
    pub fn open(path: impl AsRef<Path>, create: bool) -> Result<Self> {
        let path = path.as_ref();
        let file = PositionalFile::open(path, create, 0).map_err(|e| io_error(path, "open", 0, 0, e))?;
        Ok(Self { file })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl StorageBackend for BufferedFile {
    fn len(&self) -> Result<u64> {
        self.file.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read(offset, buf)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.file.write(offset, data)
    }

    fn write_many(&self, writes: &[BatchWrite<'_>]) -> Result<()> {
        self.file.write_many(writes)
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
