//! Helpers shared by the storage scenario tests.
#![allow(dead_code)]

pub mod buffer;
pub mod counting;

use std::path::Path;
use std::sync::Arc;

use flushwise_core::{Lsn, PageId};
use flushwise_engine::page::{self, PageSize, PageType};
use flushwise_engine::storage::{AlignedBuf, BufferedFile, Checked, FaultInjector, IoMode, StorageBackend, Tablespace};

pub const PAGE: PageSize = PageSize::DEFAULT;

/// Direct I/O where the filesystem allows it, buffered otherwise.
pub fn io_mode_for(dir: &Path) -> IoMode {
    match flushwise_engine::storage::DirectFile::open(dir.join(".probe"), true) {
        Ok(_) => IoMode::Direct,
        Err(_) => IoMode::Buffered,
    }
}

/// A page image of `id` whose payload is derived from `lsn`.
pub fn page_image(id: PageId, lsn: u64) -> AlignedBuf {
    let mut buf = AlignedBuf::zeroed(PAGE.bytes());
    page::init(&mut buf, id, PageType::BTreeLeaf, Lsn(lsn));
    for (i, b) in page::payload_mut(&mut buf).iter_mut().enumerate() {
        *b = (i as u64).wrapping_mul(lsn | 1).wrapping_add(lsn) as u8;
    }
    page::seal(&mut buf);
    buf
}

pub type FaultyBackend = Arc<Checked<FaultInjector<BufferedFile>>>;

/// A checked, fault-injectable buffered file.
pub fn faulty_file(path: &Path) -> FaultyBackend {
    let raw = BufferedFile::open(path, true).unwrap();
    Arc::new(Checked::new(FaultInjector::new(raw, path), path))
}

pub fn tablespace_over(space: u32, path: &Path, backend: Arc<dyn StorageBackend>) -> Tablespace {
    Tablespace::open(space, path, backend, PAGE).unwrap()
}
