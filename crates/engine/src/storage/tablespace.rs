//! `Tablespace`: one file of fixed-size, checksummed pages.
//!
//! Page `n` lives at byte offset `n * page_size` of the file. Every read is
//! verified ([`page::verify`]) against the page id it should hold, and
//! every write is sealed and verified before it leaves, so a page that
//! reaches the disk is always self-consistent and a page read back is
//! either exactly what was written or an error naming the file and page.
//!
//! Invariants:
//! - the file length is a multiple of the page size and
//!   `page_count() * page_size == len` after every successful `extend`;
//! - `write_page` never writes a page whose header does not verify as
//!   `(space_id, page_no)`, and never writes past `page_count()` (extend
//!   first: growing the file is an explicit, serialised step);
//! - reads and writes of different pages run concurrently (`&self`);
//!   callers (the buffer pool) guarantee one writer per page at a time;
//! - a written page is durable only after `sync()`; a new page count is
//!   durable only after `sync()` too (fdatasync covers the file size).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use flushwise_core::PageId;
use parking_lot::Mutex;

use super::{AlignedBuf, BatchWrite, StorageBackend, StorageError};
use crate::page::{self, PageError, PageHeader, PageSize};

/// Errors of the page-file layer (tablespaces and the doublewrite buffer).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineStorageError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Page(#[from] PageError),
    #[error("{path}: page {page_no} is past the end of the tablespace ({page_count} pages)")]
    PageOutOfRange {
        path: PathBuf,
        page_no: u32,
        page_count: u32,
    },
    #[error("{path}: file length {len} bytes is not a multiple of the page size {page_size}: its last page is cut short (the file was truncated or damaged); restore it from a backup or a copy")]
    PartialPage { path: PathBuf, len: u64, page_size: usize },
    #[error("{path}: the data file is shorter than {expected_by} expects: it is {len_bytes} bytes ({page_count} pages), but page {page_no} needs at least {needed_bytes} bytes; the file was truncated or replaced: restore it from a backup or a copy")]
    ShorterThanExpected {
        path: PathBuf,
        len_bytes: u64,
        page_count: u32,
        page_no: u32,
        needed_bytes: u64,
        /// What knows the page exists (the doublewrite file, the redo log).
        expected_by: String,
    },
    #[error("{path}: page {page_no} is corrupt and its doublewrite copy cannot repair it: {reason}; restore the database from a backup or a copy")]
    UnrepairablePage {
        path: PathBuf,
        page_no: u32,
        reason: String,
    },
    #[error("{path}: cannot grow by {n_pages} pages from {page_count}: page numbers are 32-bit")]
    TooManyPages {
        path: PathBuf,
        page_count: u32,
        n_pages: u32,
    },
    #[error("{path}: refusing to write page {page_no}: the buffer does not verify as that page ({source})")]
    RefusedWrite {
        path: PathBuf,
        page_no: u32,
        #[source]
        source: PageError,
    },
    #[error("{path}: the tablespace is full: {page_count} pages, and growing by {n_pages} would pass its maximum of {max_bytes} bytes (raise the maximum, or delete rows to free pages)")]
    SpaceFull {
        path: PathBuf,
        page_count: u32,
        n_pages: u32,
        max_bytes: u64,
    },
    #[error("{path}: page size {found} differs from the expected {expected}")]
    PageSizeMismatch {
        path: PathBuf,
        expected: PageSize,
        found: PageSize,
    },
}

impl EngineStorageError {
    /// True if the error says a page on disk is torn or corrupt (not an I/O
    /// failure): the cases the doublewrite buffer can repair.
    pub fn is_corrupt_page(&self) -> bool {
        matches!(
            self,
            EngineStorageError::Page(PageError::Corrupt { .. } | PageError::NeverWritten { .. })
        )
    }

    /// True if the space could not grow: its maximum size, or a full disk.
    /// Nothing was changed; the pages the space has stay usable.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            EngineStorageError::SpaceFull { .. } => true,
            EngineStorageError::Storage(e) => e.is_disk_full(),
            _ => false,
        }
    }
}

pub type Result<T> = std::result::Result<T, EngineStorageError>;

/// One file of pages of one space.
pub struct Tablespace {
    space_id: u32,
    path: PathBuf,
    backend: Arc<dyn StorageBackend>,
    page_size: PageSize,
    page_count: AtomicU32,
    /// `extend` refuses to pass this many pages (`u32::MAX`: no maximum).
    max_pages: AtomicU32,
    /// Serialises `extend`, the only change of the file length.
    extend_lock: Mutex<()>,
}

impl Tablespace {
    /// Opens the tablespace `space_id` stored in `backend` (opened from
    /// `path`, which names the file in errors).
    pub fn open(
        space_id: u32,
        path: impl Into<PathBuf>,
        backend: Arc<dyn StorageBackend>,
        page_size: PageSize,
    ) -> Result<Self> {
        let path = path.into();
        let len = backend.len()?;
        if len % page_size.bytes_u64() != 0 {
            return Err(EngineStorageError::PartialPage {
                path,
                len,
                page_size: page_size.bytes(),
            });
        }
        let pages = len / page_size.bytes_u64();
        let page_count = u32::try_from(pages).map_err(|_| EngineStorageError::TooManyPages {
            path: path.clone(),
            page_count: u32::MAX,
            n_pages: 0,
        })?;
        Ok(Self {
            space_id,
            path,
            backend,
            page_size,
            page_count: AtomicU32::new(page_count),
            max_pages: AtomicU32::new(u32::MAX),
            extend_lock: Mutex::new(()),
        })
    }

    /// Pages `extend` may still add before the maximum (`u32::MAX` minus
    /// the count when there is none).
    pub fn pages_below_max(&self) -> u32 {
        self.max_pages.load(Ordering::Acquire).saturating_sub(self.page_count())
    }

    /// Caps the file at `max_bytes` (rounded down to whole pages; `None`: no
    /// cap), as InnoDB's `innodb_data_file_path=...:autoextend:max:SIZE`.
    /// A file already larger keeps its pages and does not grow.
    pub fn set_max_bytes(&self, max_bytes: Option<u64>) {
        let pages = max_bytes.map_or(u32::MAX, |b| {
            u32::try_from(b / self.page_size.bytes_u64()).unwrap_or(u32::MAX)
        });
        self.max_pages.store(pages, Ordering::Release);
    }

    pub fn space_id(&self) -> u32 {
        self.space_id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn page_size(&self) -> PageSize {
        self.page_size
    }

    pub fn page_count(&self) -> u32 {
        self.page_count.load(Ordering::Acquire)
    }

    pub fn page_id(&self, page_no: u32) -> PageId {
        PageId::new(self.space_id, page_no)
    }

    pub fn backend(&self) -> &Arc<dyn StorageBackend> {
        &self.backend
    }

    /// The error for a page past the end that `expected_by` says must
    /// exist: the file was cut short.
    pub fn shorter_than_expected(&self, page_no: u32, expected_by: String) -> EngineStorageError {
        let page_count = self.page_count();
        EngineStorageError::ShorterThanExpected {
            path: self.path.clone(),
            len_bytes: self.page_size.offset_of(page_count),
            page_count,
            page_no,
            needed_bytes: self.page_size.offset_of(page_no) + self.page_size.bytes_u64(),
            expected_by,
        }
    }

    /// A zeroed, aligned buffer of one page.
    pub fn new_page_buf(&self) -> AlignedBuf {
        AlignedBuf::zeroed(self.page_size.bytes())
    }

    fn check_buf(&self, buf: &[u8]) {
        assert_eq!(
            buf.len(),
            self.page_size.bytes(),
            "{}: page buffer of {} bytes for page size {}",
            self.path.display(),
            buf.len(),
            self.page_size
        );
    }

    fn check_in_range(&self, page_no: u32) -> Result<()> {
        let page_count = self.page_count();
        if page_no < page_count {
            Ok(())
        } else {
            Err(EngineStorageError::PageOutOfRange {
                path: self.path.clone(),
                page_no,
                page_count,
            })
        }
    }

    /// Reads page `page_no` into `buf` without verifying it.
    pub fn read_page_unverified(&self, page_no: u32, buf: &mut AlignedBuf) -> Result<()> {
        self.check_buf(buf);
        self.check_in_range(page_no)?;
        self.backend
            .read(self.page_size.offset_of(page_no), buf)
            .map_err(Into::into)
    }

    /// Reads pages `first_page..first_page + pages` into `buf` (back to back)
    /// in one call, unverified: sequential scans at open.
    pub fn read_run_unverified(&self, first_page: u32, buf: &mut AlignedBuf, pages: usize) -> Result<()> {
        let page_len = self.page_size.bytes();
        assert!(
            pages * page_len <= buf.len(),
            "{}: run of {pages} pages in a buffer of {} bytes",
            self.path.display(),
            buf.len()
        );
        if pages == 0 {
            return Ok(());
        }
        let last = first_page.saturating_add(pages as u32 - 1);
        self.check_in_range(last)?;
        self.backend
            .read(self.page_size.offset_of(first_page), &mut buf[..pages * page_len])
            .map_err(Into::into)
    }

    /// Reads and verifies page `page_no`.
    pub fn read_page(&self, page_no: u32, buf: &mut AlignedBuf) -> Result<PageHeader> {
        self.read_page_unverified(page_no, buf)?;
        Ok(page::verify(buf, self.page_id(page_no), &self.path)?)
    }

    /// Seals `buf` (checksum and trailer) and writes it as page `page_no`.
    pub fn write_page(&self, page_no: u32, buf: &mut AlignedBuf) -> Result<()> {
        self.check_buf(buf);
        page::seal(buf);
        self.write_sealed(page_no, buf)
    }

    /// Writes an already sealed page after checking that it verifies as
    /// page `page_no` of this space.
    pub fn write_sealed(&self, page_no: u32, buf: &AlignedBuf) -> Result<()> {
        self.check_sealed(page_no, buf)?;
        self.check_in_range(page_no)?;
        self.backend
            .write(self.page_size.offset_of(page_no), buf)
            .map_err(Into::into)
    }

    /// Writes `pages` sealed pages held back to back in `buf` as pages
    /// `first_page..first_page + pages` in one call (the bulk loader's
    /// sequential runs), after checking every image like
    /// [`Self::write_sealed`].
    pub fn write_sealed_run(&self, first_page: u32, buf: &AlignedBuf, pages: usize) -> Result<()> {
        let page_len = self.page_size.bytes();
        assert!(
            pages * page_len <= buf.len(),
            "{}: run of {pages} pages in a buffer of {} bytes",
            self.path.display(),
            buf.len()
        );
        if pages == 0 {
            return Ok(());
        }
        let last = u32::try_from(pages)
            .ok()
            .and_then(|n| first_page.checked_add(n))
            .and_then(|end| end.checked_sub(1))
            .ok_or_else(|| EngineStorageError::TooManyPages {
                path: self.path.clone(),
                page_count: first_page,
                n_pages: pages as u32,
            })?;
        for (i, image) in buf[..pages * page_len].chunks_exact(page_len).enumerate() {
            let page_no = first_page + i as u32;
            page::verify(image, self.page_id(page_no), &self.path).map_err(|source| {
                EngineStorageError::RefusedWrite {
                    path: self.path.clone(),
                    page_no,
                    source,
                }
            })?;
        }
        self.check_in_range(last)?;
        self.backend
            .write(self.page_size.offset_of(first_page), &buf[..pages * page_len])
            .map_err(Into::into)
    }

    /// Checks, before any I/O, that `buf` is a sealed image of `page_no`.
    pub(crate) fn check_sealed(&self, page_no: u32, buf: &AlignedBuf) -> Result<()> {
        self.check_buf(buf);
        page::verify(buf, self.page_id(page_no), &self.path)
            .map(|_| ())
            .map_err(|source| EngineStorageError::RefusedWrite {
                path: self.path.clone(),
                page_no,
                source,
            })
    }

    /// Grows the file by `n_pages` zeroed pages; returns the first new page
    /// number. New pages read as [`PageError::NeverWritten`] until written.
    pub fn extend(&self, n_pages: u32) -> Result<u32> {
        let _guard = self.extend_lock.lock();
        let first_new = self.page_count();
        let new_count = first_new
            .checked_add(n_pages)
            .ok_or_else(|| EngineStorageError::TooManyPages {
                path: self.path.clone(),
                page_count: first_new,
                n_pages,
            })?;
        let max_pages = self.max_pages.load(Ordering::Acquire);
        if new_count > max_pages {
            return Err(EngineStorageError::SpaceFull {
                path: self.path.clone(),
                page_count: first_new,
                n_pages,
                max_bytes: self.page_size.offset_of(max_pages),
            });
        }
        self.backend.set_len(self.page_size.offset_of(new_count))?;
        self.page_count.store(new_count, Ordering::Release);
        Ok(first_new)
    }

    /// Makes every completed write and extension durable (fdatasync).
    pub fn sync(&self) -> Result<()> {
        self.backend.sync_data().map_err(Into::into)
    }
}

/// One page of a batch write: the tablespace, the page number and its
/// sealed image.
pub type BatchPage<'a> = (&'a Tablespace, u32, &'a AlignedBuf);

/// Writes every page of `pages` in place, each tablespace's pages as one
/// batch in flight at once (`StorageBackend::write_many`: io_uring on real
/// files, as 5.6.15 posts a doublewrite batch's in-place writes through
/// native AIO; see [`super::batch_io`]). Every page is checked as
/// [`Tablespace::write_sealed`] checks it before any is written. On an
/// error the writes in flight finish and the first error is returned.
/// Nothing is synced: the caller syncs the tablespaces.
pub fn write_sealed_pages(pages: &[BatchPage<'_>]) -> Result<()> {
    for (ts, page_no, image) in pages {
        ts.check_sealed(*page_no, image)?;
        ts.check_in_range(*page_no)?;
    }
    let mut done: Vec<&Tablespace> = Vec::new();
    for (ts, _, _) in pages {
        if done.iter().any(|d| std::ptr::eq(*d, *ts)) {
            continue;
        }
        done.push(ts);
        let writes: Vec<BatchWrite<'_>> = pages
            .iter()
            .filter(|(other, _, _)| std::ptr::eq(*other, *ts))
            .map(|(_, page_no, image)| (ts.page_size.offset_of(*page_no), &image[..]))
            .collect();
        ts.backend.write_many(&writes)?;
    }
    Ok(())
}
