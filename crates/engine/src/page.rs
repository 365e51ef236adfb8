//! The on-disk page format: fixed-size, self-identifying, checksummed pages.
//!
//! Every page of every tablespace (and every copy in the doublewrite file)
//! carries its own identity and a CRC-32C, so a reader can tell a good page
//! from a torn, misdirected or bit-rotten one without any other file.
//!
//! Byte layout (all integers little-endian; `S` = page size):
//!
//! | offset    | size | field                                               |
//! |-----------|------|-----------------------------------------------------|
//! | 0         | 4    | checksum: CRC-32C of bytes `4..S`                   |
//! | 4         | 4    | magic `b"FWPG"`                                     |
//! | 8         | 4    | space id                                            |
//! | 12        | 4    | page number within the space                        |
//! | 16        | 2    | page type ([`PageType`])                            |
//! | 18        | 1    | log2 of the page size (12..=16)                     |
//! | 19        | 1    | format version ([`FORMAT_VERSION`])                 |
//! | 20        | 4    | reserved, zero                                      |
//! | 24        | 8    | page LSN: redo position of the newest change        |
//! | 32        | S-36 | payload                                             |
//! | S-4       | 4    | trailer: low 32 bits of the page LSN                |
//!
//! The trailer is InnoDB's `FIL_PAGE_END_LSN_OLD_CHKSUM` idea: the LSN sits
//! at both ends of the page, so a write torn between its first and last
//! sector is detectable even without the checksum. Page size, checksum
//! algorithm and layout follow InnoDB's (16 KiB default, CRC-32C since MySQL
//! 5.7), simplified.
//!
//! Invariants:
//! - a page on disk was [`seal`]ed: its checksum covers everything but the
//!   checksum field, and its trailer equals the low 32 bits of its LSN;
//! - [`verify`] accepts a page only if checksum, magic, version, page size,
//!   page id, page type and trailer all agree; an all-zero page (a freshly
//!   extended file) is [`PageError::NeverWritten`], never "corrupt";
//! - errors name the file and the page number.

use std::fmt;
use std::path::{Path, PathBuf};

use flushwise_core::{Lsn, PageId};

/// Size of the page header in bytes.
pub const HEADER_LEN: usize = 32;
/// Size of the page trailer in bytes.
pub const TRAILER_LEN: usize = 4;
/// `b"FWPG"` read as a little-endian u32.
pub const MAGIC: u32 = u32::from_le_bytes(*b"FWPG");
/// The only format version this code writes and reads.
pub const FORMAT_VERSION: u8 = 1;

const OFF_CHECKSUM: usize = 0;
const OFF_MAGIC: usize = 4;
const OFF_SPACE: usize = 8;
const OFF_PAGE_NO: usize = 12;
const OFF_TYPE: usize = 16;
const OFF_SIZE_SHIFT: usize = 18;
const OFF_VERSION: usize = 19;
const OFF_LSN: usize = 24;

/// Errors of the page format. Messages are lowercase and name file and page.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    #[error("invalid page size {bytes} bytes: must be a power of two from 4096 to 65536 (4 KiB to 64 KiB)")]
    InvalidPageSize { bytes: usize },
    #[error("{file}: page {page_no} was never written (all zeros)")]
    NeverWritten { file: PathBuf, page_no: u32 },
    #[error("{file}: page {page_no} is corrupt: {reason}")]
    Corrupt {
        file: PathBuf,
        page_no: u32,
        reason: CorruptReason,
    },
}

/// Why a page failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptReason {
    /// Checksum and LSN trailer both disagree: the write was torn.
    TornWrite {
        stored: u32,
        computed: u32,
        lsn_low: u32,
        trailer: u32,
    },
    ChecksumMismatch {
        stored: u32,
        computed: u32,
    },
    /// The checksum matches but the trailer does not (page was never sealed
    /// by this code).
    LsnTrailerMismatch {
        lsn_low: u32,
        trailer: u32,
    },
    BadMagic {
        found: u32,
    },
    UnsupportedVersion {
        found: u8,
    },
    PageSizeMismatch {
        header_bytes: u64,
        buffer_bytes: usize,
    },
    /// A valid page of another place: a misdirected write or a wrong pointer.
    WrongPageId {
        expected: PageId,
        found: PageId,
    },
    UnknownPageType {
        raw: u16,
    },
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorruptReason::TornWrite {
                stored,
                computed,
                lsn_low,
                trailer,
            } => write!(
                f,
                "torn write: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}) \
                 and header lsn low bits {lsn_low:#010x} differ from trailer {trailer:#010x}"
            ),
            CorruptReason::ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch: stored crc32c {stored:#010x}, computed {computed:#010x}"
            ),
            CorruptReason::LsnTrailerMismatch { lsn_low, trailer } => write!(
                f,
                "header lsn low bits {lsn_low:#010x} differ from trailer {trailer:#010x}"
            ),
            CorruptReason::BadMagic { found } => {
                write!(f, "bad magic {found:#010x}, expected {MAGIC:#010x} (\"FWPG\")")
            }
            CorruptReason::UnsupportedVersion { found } => write!(
                f,
                "unsupported page format version {found}, this build reads {FORMAT_VERSION}"
            ),
            CorruptReason::PageSizeMismatch {
                header_bytes,
                buffer_bytes,
            } => write!(
                f,
                "page was written with page size {header_bytes} but read as {buffer_bytes}"
            ),
            CorruptReason::WrongPageId { expected, found } => write!(
                f,
                "page id mismatch: header says {found}, expected {expected} (misdirected write?)"
            ),
            CorruptReason::UnknownPageType { raw } => write!(f, "unknown page type {raw}"),
        }
    }
}

/// A validated page size: a power of two from 4 KiB to 64 KiB.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct PageSize(u32);

impl PageSize {
    pub const MIN_BYTES: usize = 4096;
    pub const MAX_BYTES: usize = 65536;
    /// InnoDB's default page size.
    pub const DEFAULT: PageSize = PageSize(16384);

    pub fn new(bytes: usize) -> Result<Self, PageError> {
        if bytes.is_power_of_two() && (Self::MIN_BYTES..=Self::MAX_BYTES).contains(&bytes) {
            Ok(PageSize(bytes as u32))
        } else {
            Err(PageError::InvalidPageSize { bytes })
        }
    }

    pub const fn bytes(self) -> usize {
        self.0 as usize
    }

    pub const fn bytes_u64(self) -> u64 {
        self.0 as u64
    }

    /// log2 of the size, as stored in the header.
    pub const fn shift(self) -> u8 {
        self.0.trailing_zeros() as u8
    }

    /// Byte offset of page `page_no` in a file of such pages.
    pub const fn offset_of(self, page_no: u32) -> u64 {
        page_no as u64 * self.0 as u64
    }

    /// Usable payload bytes per page.
    pub const fn payload_len(self) -> usize {
        self.bytes() - HEADER_LEN - TRAILER_LEN
    }
}

impl Default for PageSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for PageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} KiB", self.0 / 1024)
    }
}

/// What a page holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u16)]
pub enum PageType {
    /// Allocated but unused.
    Free = 1,
    /// Tablespace metadata (page 0).
    Meta = 2,
    BTreeInternal = 3,
    BTreeLeaf = 4,
    Undo = 5,
    /// The journal of a bulk load in progress: the extents it writes
    /// outside the redo log (`db::bulk`), freed when the load commits.
    LoadJournal = 6,
    /// A node of the change buffer's B+tree (InnoDB's `FIL_PAGE_IBUF_*`).
    ChangeBuffer = 7,
}

impl PageType {
    pub const ALL: [PageType; 7] = [
        PageType::Free,
        PageType::Meta,
        PageType::BTreeInternal,
        PageType::BTreeLeaf,
        PageType::Undo,
        PageType::LoadJournal,
        PageType::ChangeBuffer,
    ];

    pub fn from_u16(raw: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|t| *t as u16 == raw)
    }
}

/// The verified header of a page.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PageHeader {
    pub page_id: PageId,
    pub page_type: PageType,
    pub lsn: Lsn,
    pub checksum: u32,
}

fn get_u16(buf: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([buf[at], buf[at + 1]])
}

fn get_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

fn get_u64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Panics unless `buf` is a whole page: a programmer error, not an I/O one.
fn assert_page_len(buf: &[u8]) -> PageSize {
    match PageSize::new(buf.len()) {
        Ok(size) => size,
        Err(e) => panic!("page buffer: {e}"),
    }
}

/// Zeroes `buf` and writes a fresh header. The page still needs [`seal`].
pub fn init(buf: &mut [u8], page_id: PageId, page_type: PageType, lsn: Lsn) {
    let size = assert_page_len(buf);
    buf.fill(0);
    put(buf, OFF_MAGIC, &MAGIC.to_le_bytes());
    put(buf, OFF_SPACE, &page_id.space.to_le_bytes());
    put(buf, OFF_PAGE_NO, &page_id.page_no.to_le_bytes());
    put(buf, OFF_TYPE, &(page_type as u16).to_le_bytes());
    buf[OFF_SIZE_SHIFT] = size.shift();
    buf[OFF_VERSION] = FORMAT_VERSION;
    put(buf, OFF_LSN, &lsn.0.to_le_bytes());
}

/// Records the newest change to the page. The page still needs [`seal`].
pub fn set_lsn(buf: &mut [u8], lsn: Lsn) {
    assert_page_len(buf);
    put(buf, OFF_LSN, &lsn.0.to_le_bytes());
}

pub fn set_page_type(buf: &mut [u8], page_type: PageType) {
    assert_page_len(buf);
    put(buf, OFF_TYPE, &(page_type as u16).to_le_bytes());
}

/// The page id in the header, unverified (used to route doublewrite copies).
pub fn peek_page_id(buf: &[u8]) -> PageId {
    PageId::new(get_u32(buf, OFF_SPACE), get_u32(buf, OFF_PAGE_NO))
}

/// The raw page-type field of the header, unverified.
pub fn peek_page_type_raw(buf: &[u8]) -> u16 {
    get_u16(buf, OFF_TYPE)
}

/// The LSN in the header, unverified.
pub fn peek_lsn(buf: &[u8]) -> Lsn {
    Lsn(get_u64(buf, OFF_LSN))
}

pub fn payload(buf: &[u8]) -> &[u8] {
    &buf[HEADER_LEN..buf.len() - TRAILER_LEN]
}

pub fn payload_mut(buf: &mut [u8]) -> &mut [u8] {
    let end = buf.len() - TRAILER_LEN;
    &mut buf[HEADER_LEN..end]
}

fn compute_checksum(buf: &[u8]) -> u32 {
    crc32c::crc32c(&buf[OFF_CHECKSUM + 4..])
}

/// Makes the page ready to write: copies the LSN's low 32 bits into the
/// trailer, then stores the CRC-32C of everything after the checksum field.
pub fn seal(buf: &mut [u8]) {
    assert_page_len(buf);
    let lsn_low = get_u64(buf, OFF_LSN) as u32;
    let end = buf.len();
    put(buf, end - TRAILER_LEN, &lsn_low.to_le_bytes());
    let checksum = compute_checksum(buf);
    put(buf, OFF_CHECKSUM, &checksum.to_le_bytes());
}

/// Checks a page read from `file` that should be `expected`.
pub fn verify(buf: &[u8], expected: PageId, file: &Path) -> Result<PageHeader, PageError> {
    let size = PageSize::new(buf.len())?;
    let corrupt = |reason| PageError::Corrupt {
        file: file.to_path_buf(),
        page_no: expected.page_no,
        reason,
    };
    if buf.iter().all(|b| *b == 0) {
        return Err(PageError::NeverWritten {
            file: file.to_path_buf(),
            page_no: expected.page_no,
        });
    }
    let stored = get_u32(buf, OFF_CHECKSUM);
    let computed = compute_checksum(buf);
    let lsn = Lsn(get_u64(buf, OFF_LSN));
    let lsn_low = lsn.0 as u32;
    let trailer = get_u32(buf, buf.len() - TRAILER_LEN);
    match (stored == computed, lsn_low == trailer) {
        (true, true) => {}
        (false, false) => {
            return Err(corrupt(CorruptReason::TornWrite {
                stored,
                computed,
                lsn_low,
                trailer,
            }))
        }
        (false, true) => return Err(corrupt(CorruptReason::ChecksumMismatch { stored, computed })),
        (true, false) => return Err(corrupt(CorruptReason::LsnTrailerMismatch { lsn_low, trailer })),
    }
    let magic = get_u32(buf, OFF_MAGIC);
    if magic != MAGIC {
        return Err(corrupt(CorruptReason::BadMagic { found: magic }));
    }
    let version = buf[OFF_VERSION];
    if version != FORMAT_VERSION {
        return Err(corrupt(CorruptReason::UnsupportedVersion { found: version }));
    }
    let shift = buf[OFF_SIZE_SHIFT];
    if shift != size.shift() {
        return Err(corrupt(CorruptReason::PageSizeMismatch {
            header_bytes: 1u64.checked_shl(u32::from(shift)).unwrap_or(0),
            buffer_bytes: buf.len(),
        }));
    }
    let found = peek_page_id(buf);
    if found != expected {
        return Err(corrupt(CorruptReason::WrongPageId { expected, found }));
    }
    let raw_type = get_u16(buf, OFF_TYPE);
    let Some(page_type) = PageType::from_u16(raw_type) else {
        return Err(corrupt(CorruptReason::UnknownPageType { raw: raw_type }));
    };
    Ok(PageHeader {
        page_id: found,
        page_type,
        lsn,
        checksum: stored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "t.ibd";

    fn sealed(size: usize, id: PageId, lsn: u64) -> Vec<u8> {
        let mut buf = vec![0u8; size];
        init(&mut buf, id, PageType::BTreeLeaf, Lsn(lsn));
        for (i, b) in payload_mut(&mut buf).iter_mut().enumerate() {
            *b = (i * 31 + 7) as u8;
        }
        seal(&mut buf);
        buf
    }

    #[test]
    fn page_size_accepts_powers_of_two_from_4k_to_64k_only() {
        for ok in [4096, 8192, 16384, 32768, 65536] {
            assert_eq!(PageSize::new(ok).unwrap().bytes(), ok);
        }
        for bad in [0, 512, 2048, 12288, 16383, 131072] {
            let e = PageSize::new(bad).unwrap_err().to_string();
            assert!(e.contains(&bad.to_string()) && e.contains("power of two"), "{e}");
        }
        assert_eq!(PageSize::default().bytes(), 16384);
        assert_eq!(PageSize::DEFAULT.shift(), 14);
    }

    #[test]
    fn sealed_page_verifies_with_its_header() {
        let id = PageId::new(3, 9);
        let buf = sealed(16384, id, 0x1_2345_6789);
        let h = verify(&buf, id, Path::new(FILE)).unwrap();
        assert_eq!(h.page_id, id);
        assert_eq!(h.page_type, PageType::BTreeLeaf);
        assert_eq!(h.lsn, Lsn(0x1_2345_6789));
    }

    #[test]
    fn all_zero_page_is_never_written_not_corrupt() {
        let buf = vec![0u8; 4096];
        let e = verify(&buf, PageId::new(0, 5), Path::new(FILE)).unwrap_err();
        assert!(matches!(e, PageError::NeverWritten { page_no: 5, .. }), "{e}");
    }

    #[test]
    fn page_under_another_id_is_a_misdirected_write() {
        let buf = sealed(4096, PageId::new(1, 2), 10);
        let e = verify(&buf, PageId::new(1, 3), Path::new(FILE)).unwrap_err();
        let PageError::Corrupt { reason, .. } = e else {
            panic!("{e}")
        };
        assert!(matches!(reason, CorruptReason::WrongPageId { .. }));
    }

    #[test]
    fn page_read_with_another_page_size_is_refused() {
        let id = PageId::new(1, 2);
        let buf = sealed(8192, id, 10);
        // Re-seal a 4 KiB prefix so only the size field disagrees.
        let mut half = buf[..4096].to_vec();
        seal(&mut half);
        let e = verify(&half, id, Path::new(FILE)).unwrap_err();
        assert!(e.to_string().contains("page size 8192"), "{e}");
    }

    #[test]
    fn torn_page_has_a_torn_write_reason() {
        let id = PageId::new(0, 1);
        let old = sealed(16384, id, 100);
        let mut new = sealed(16384, id, 200);
        new[8192..].copy_from_slice(&old[8192..]);
        let e = verify(&new, id, Path::new(FILE)).unwrap_err();
        assert!(e.to_string().contains("torn write"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_single_bit_flip_is_detected(bit in 0usize..(4096 * 8), lsn in any::<u64>()) {
            let id = PageId::new(7, 11);
            let mut buf = sealed(4096, id, lsn);
            buf[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(verify(&buf, id, Path::new(FILE)).is_err());
        }
    }
}
