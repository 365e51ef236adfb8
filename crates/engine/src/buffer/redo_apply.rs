//! Applying page redo records to a page image: the primitive recovery uses.
//!
//! Records the buffer pool shell writes (see [`super::space_store`]):
//! - `PageInit`: payload = the new page type as a little-endian `u16`; the
//!   page is re-initialised (zeroed, header rewritten) — an allocation, or a
//!   free (type `Free`);
//! - `PageWrite`: payload = `u32` byte offset *within the whole page* (the
//!   header included, so offsets of payload bytes start at
//!   [`crate::page::HEADER_LEN`]) followed by the bytes.
//!
//! Idempotence rule (InnoDB's page-LSN test): a record whose *end* LSN is
//! not above the page LSN is already in the page and is skipped; an applied
//! record sets the page LSN to its end LSN. A mini-transaction stamps its
//! pages with the group's end LSN, which is at or above the end of every
//! record of the group, so a page written after the group skips all of it,
//! and a page written before applies all of it.
//!
//! Invariant: applying never touches the checksum or trailer (the page is
//! sealed when written) and never writes outside the payload.

use flushwise_core::{Lsn, PageId};

use crate::page::{self, PageType, HEADER_LEN, TRAILER_LEN};
use crate::redo::{lsn_after, Record, RecordKind};

/// Why a record cannot be applied to a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedoApplyError {
    #[error("page {page}: record at lsn {lsn} is for page {record_page}")]
    WrongPage {
        page: PageId,
        record_page: PageId,
        lsn: Lsn,
    },
    #[error("page {page}: page write at lsn {lsn} of {len} bytes at offset {offset} leaves the payload")]
    OutOfBounds {
        page: PageId,
        lsn: Lsn,
        offset: u32,
        len: usize,
    },
    #[error("page {page}: record at lsn {lsn} is malformed: {reason}")]
    Malformed { page: PageId, lsn: Lsn, reason: String },
    #[error("page {page}: record at lsn {lsn} is not a position in the log")]
    BadLsn { page: PageId, lsn: Lsn },
}

/// What [`apply_redo_record`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// The page LSN already covers the record.
    Skipped,
    /// Applied; the page LSN is now `end_lsn`.
    Applied { end_lsn: Lsn },
    /// Not a page record (transaction markers): nothing to do.
    NotAPageRecord,
}

/// Encodes the payload of a `PageInit` record for `page_type`.
pub fn page_init_payload(page_type: PageType) -> Vec<u8> {
    (page_type as u16).to_le_bytes().to_vec()
}

/// Applies `record`, which starts at `start_lsn` in the log, to `buf`, the
/// current image of `page` (all zeros if the page was never written), if
/// the page LSN is older than the record's end.
pub fn apply_redo_record(
    buf: &mut [u8],
    page: PageId,
    record: &Record,
    start_lsn: Lsn,
) -> Result<ApplyOutcome, RedoApplyError> {
    if !matches!(record.kind, RecordKind::PageInit | RecordKind::PageWrite) {
        return Ok(ApplyOutcome::NotAPageRecord);
    }
    if record.page != page {
        return Err(RedoApplyError::WrongPage {
            page,
            record_page: record.page,
            lsn: start_lsn,
        });
    }
    let end_lsn =
        lsn_after(start_lsn, record.encoded_len() as u64).ok_or(RedoApplyError::BadLsn { page, lsn: start_lsn })?;
    let page_lsn = if buf.iter().all(|b| *b == 0) {
        Lsn::ZERO
    } else {
        page::peek_lsn(buf)
    };
    if page_lsn >= end_lsn {
        return Ok(ApplyOutcome::Skipped);
    }
    match record.kind {
        RecordKind::PageInit => {
            let raw = match record.payload.as_slice() {
                [a, b] => u16::from_le_bytes([*a, *b]),
                other => {
                    return Err(RedoApplyError::Malformed {
                        page,
                        lsn: start_lsn,
                        reason: format!("page init payload of {} bytes, expected 2", other.len()),
                    })
                }
            };
            let page_type = PageType::from_u16(raw).ok_or_else(|| RedoApplyError::Malformed {
                page,
                lsn: start_lsn,
                reason: format!("unknown page type {raw}"),
            })?;
            page::init(buf, page, page_type, end_lsn);
        }
        RecordKind::PageWrite => {
            let (offset, bytes) = record.page_write_parts().ok_or_else(|| RedoApplyError::Malformed {
                page,
                lsn: start_lsn,
                reason: "page write payload shorter than its offset".into(),
            })?;
            let at = offset as usize;
            if at < HEADER_LEN || at + bytes.len() > buf.len() - TRAILER_LEN {
                return Err(RedoApplyError::OutOfBounds {
                    page,
                    lsn: start_lsn,
                    offset,
                    len: bytes.len(),
                });
            }
            if page_lsn == Lsn::ZERO {
                return Err(RedoApplyError::Malformed {
                    page,
                    lsn: start_lsn,
                    reason: "page write to a page that was never initialised".into(),
                });
            }
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            page::set_lsn(buf, end_lsn);
        }
        _ => unreachable!("filtered above"),
    }
    Ok(ApplyOutcome::Applied { end_lsn })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redo::log_file::sn_to_lsn;

    #[test]
    fn init_then_write_apply_once_and_skip_when_replayed() {
        let id = PageId::new(1, 4);
        let mut buf = vec![0u8; 4096];
        let init = Record::page_init(0, id, page_init_payload(PageType::BTreeLeaf));
        let start = sn_to_lsn(0);
        let r = apply_redo_record(&mut buf, id, &init, start).unwrap();
        let ApplyOutcome::Applied { end_lsn } = r else {
            panic!("{r:?}")
        };
        let write = Record::page_write(0, id, HEADER_LEN as u32 + 10, b"abc");
        let r2 = apply_redo_record(&mut buf, id, &write, end_lsn).unwrap();
        assert!(matches!(r2, ApplyOutcome::Applied { .. }));
        assert_eq!(&page::payload(&buf)[10..13], b"abc");
        // Replaying both is a no-op.
        assert_eq!(
            apply_redo_record(&mut buf, id, &init, start).unwrap(),
            ApplyOutcome::Skipped
        );
        assert_eq!(
            apply_redo_record(&mut buf, id, &write, end_lsn).unwrap(),
            ApplyOutcome::Skipped
        );
        let out = Record::page_write(0, id, 4090, b"abcdef");
        assert!(matches!(
            apply_redo_record(&mut buf, id, &out, sn_to_lsn(1000)),
            Err(RedoApplyError::OutOfBounds { .. })
        ));
    }
}
