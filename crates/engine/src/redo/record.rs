//! Physiological redo records and their byte encoding.
//!
//! A record says "in page P, do operation O" (physical to a page, logical
//! within it), as InnoDB's redo records do. The operation is a
//! [`RecordKind`] tag plus opaque payload bytes whose meaning the kind
//! defines; the engine extends the enum as it grows.
//!
//! Encoding (little-endian), [`RECORD_HDR_SIZE`] = 28 bytes of header:
//!
//! ```text
//! 0  u32 total_len   whole record, header included
//! 4  u32 crc32c      CRC-32C of bytes [0..4) ++ [8..total_len)
//! 8  u8  kind        RecordKind tag
//! 9  u8  flags       bit 0: last record of its append group
//! 10 u16 reserved    zero
//! 12 u64 txn_id
//! 20 u32 space       page id; transaction records carry PageId(0, 0)
//! 24 u32 page_no
//! 28 ..  payload
//! ```
//!
//! Invariants: `decode(encode(r)) == r`, and a record `decode` accepts
//! encodes back to exactly its bytes (reserved bits must be zero); any
//! single-bit flip in an encoded
//! record is detected (CRC-32C detects all 1- and 2-bit errors at these
//! lengths); a record is never longer than [`RECORD_BYTES_MAX`], so a
//! corrupt length field cannot make the reader swallow the log.
//!
//! The group-end flag makes an append group (a mini-transaction) atomic at
//! recovery, like InnoDB's `MLOG_MULTI_REC_END`: the reader drops a trailing
//! group whose last record did not reach the disk.

use flushwise_core::{Lsn, PageId};

/// Bytes of the fixed record header.
pub const RECORD_HDR_SIZE: usize = 28;

/// Largest encoded record. A 64 KiB page image plus header fits with room;
/// the bound keeps a corrupt length from looking plausible.
pub const RECORD_BYTES_MAX: usize = 1 << 20;

const FLAG_GROUP_END: u8 = 0x01;
const FLAGS_KNOWN: u8 = FLAG_GROUP_END;

/// What a record does. Tags are stable on disk: never renumber a variant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
#[repr(u8)]
pub enum RecordKind {
    /// The page was (re)initialised; payload: page-type specific (may be empty).
    PageInit = 1,
    /// Bytes written into the page; payload: u32 offset in the page, then the bytes.
    PageWrite = 2,
    /// A transaction started; page is `PageId(0, 0)`.
    TxnBegin = 3,
    /// A transaction committed; page is `PageId(0, 0)`.
    TxnCommit = 4,
    /// A transaction rolled back; page is `PageId(0, 0)`.
    TxnRollback = 5,
    /// A checkpoint marker; payload: the u64 checkpoint LSN.
    CheckpointMarker = 6,
    /// A transaction's logical undo entry for one row change, logged before
    /// the change; page is `PageId(0, 0)`; payload: see `crate::db::undo`.
    Undo = 7,
}

impl RecordKind {
    pub const fn tag(self) -> u8 {
        self as u8
    }

    pub const fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            1 => Self::PageInit,
            2 => Self::PageWrite,
            3 => Self::TxnBegin,
            4 => Self::TxnCommit,
            5 => Self::TxnRollback,
            6 => Self::CheckpointMarker,
            7 => Self::Undo,
            _ => return None,
        })
    }
}

/// One redo record.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Record {
    pub kind: RecordKind,
    pub txn_id: u64,
    pub page: PageId,
    /// Kind-specific operation bytes, opaque to the log.
    pub payload: Vec<u8>,
}

/// Why bytes are not a valid record. Messages name the record's LSN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    #[error("redo record at lsn {lsn} is truncated: needs {needed} bytes, {available} available")]
    Truncated { lsn: Lsn, needed: usize, available: usize },
    #[error("redo record at lsn {lsn} has impossible length {len} (valid: {RECORD_HDR_SIZE}..={RECORD_BYTES_MAX})")]
    BadLength { lsn: Lsn, len: usize },
    #[error("redo record at lsn {lsn} fails its checksum: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum { lsn: Lsn, stored: u32, computed: u32 },
    #[error("redo record at lsn {lsn} has unknown kind tag {tag}")]
    UnknownKind { lsn: Lsn, tag: u8 },
    #[error("redo record at lsn {lsn} has unknown flags {flags:#04x}")]
    BadFlags { lsn: Lsn, flags: u8 },
    #[error("redo record at lsn {lsn} has reserved field {reserved:#06x}, expected 0")]
    BadReserved { lsn: Lsn, reserved: u16 },
    #[error("redo record of {len} bytes exceeds the maximum of {max} bytes")]
    TooLarge { len: usize, max: usize },
}

impl RecordError {
    /// True when more bytes could complete the record (a torn tail), false
    /// when the bytes present are themselves wrong.
    pub fn is_truncation(&self) -> bool {
        matches!(self, RecordError::Truncated { .. })
    }
}

/// A decoded record with its framing.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Decoded {
    pub record: Record,
    /// Encoded length in bytes.
    pub len: usize,
    /// Whether this record closes its append group.
    pub group_end: bool,
}

impl Record {
    pub fn new(kind: RecordKind, txn_id: u64, page: PageId, payload: Vec<u8>) -> Self {
        Self {
            kind,
            txn_id,
            page,
            payload,
        }
    }

    pub fn page_init(txn_id: u64, page: PageId, payload: Vec<u8>) -> Self {
        Self::new(RecordKind::PageInit, txn_id, page, payload)
    }

    /// `bytes` written at `offset` within `page`.
    pub fn page_write(txn_id: u64, page: PageId, offset: u32, bytes: &[u8]) -> Self {
        let mut payload = Vec::with_capacity(4 + bytes.len());
        payload.extend_from_slice(&offset.to_le_bytes());
        payload.extend_from_slice(bytes);
        Self::new(RecordKind::PageWrite, txn_id, page, payload)
    }

    pub fn txn_begin(txn_id: u64) -> Self {
        Self::new(RecordKind::TxnBegin, txn_id, PageId::default(), Vec::new())
    }

    pub fn txn_commit(txn_id: u64) -> Self {
        Self::new(RecordKind::TxnCommit, txn_id, PageId::default(), Vec::new())
    }

    pub fn txn_rollback(txn_id: u64) -> Self {
        Self::new(RecordKind::TxnRollback, txn_id, PageId::default(), Vec::new())
    }

    pub fn checkpoint_marker(checkpoint_lsn: Lsn) -> Self {
        Self::new(
            RecordKind::CheckpointMarker,
            0,
            PageId::default(),
            checkpoint_lsn.0.to_le_bytes().to_vec(),
        )
    }

    /// For a `PageWrite`: the offset in the page and the bytes written.
    pub fn page_write_parts(&self) -> Option<(u32, &[u8])> {
        if self.kind != RecordKind::PageWrite || self.payload.len() < 4 {
            return None;
        }
        let (head, bytes) = self.payload.split_at(4);
        Some((u32::from_le_bytes([head[0], head[1], head[2], head[3]]), bytes))
    }

    /// Length of the encoded record.
    pub fn encoded_len(&self) -> usize {
        RECORD_HDR_SIZE + self.payload.len()
    }

    /// Appends the encoding to `out`; `group_end` marks the last record of
    /// an append group.
    pub fn encode_into(&self, out: &mut Vec<u8>, group_end: bool) -> Result<(), RecordError> {
        let len = self.encoded_len();
        if len > RECORD_BYTES_MAX {
            return Err(RecordError::TooLarge {
                len,
                max: RECORD_BYTES_MAX,
            });
        }
        let start = out.len();
        out.reserve(len);
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(&[0u8; 4]); // crc, filled below
        out.push(self.kind.tag());
        out.push(if group_end { FLAG_GROUP_END } else { 0 });
        out.extend_from_slice(&[0u8; 2]);
        out.extend_from_slice(&self.txn_id.to_le_bytes());
        out.extend_from_slice(&self.page.space.to_le_bytes());
        out.extend_from_slice(&self.page.page_no.to_le_bytes());
        out.extend_from_slice(&self.payload);
        let crc = record_crc(&out[start..start + len]);
        out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(out.len() - start, len);
        Ok(())
    }

    /// Encodes one record (group end set) into a fresh buffer.
    pub fn encode(&self) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out, true)?;
        Ok(out)
    }

    /// Decodes the record at the start of `bytes`, which begins at `lsn`
    /// (used only to name the record in errors).
    pub fn decode(bytes: &[u8], lsn: Lsn) -> Result<Decoded, RecordError> {
        if bytes.len() < 4 {
            return Err(RecordError::Truncated {
                lsn,
                needed: RECORD_HDR_SIZE,
                available: bytes.len(),
            });
        }
        let len = read_u32(bytes, 0) as usize;
        if !(RECORD_HDR_SIZE..=RECORD_BYTES_MAX).contains(&len) {
            return Err(RecordError::BadLength { lsn, len });
        }
        if bytes.len() < len {
            return Err(RecordError::Truncated {
                lsn,
                needed: len,
                available: bytes.len(),
            });
        }
        let rec = &bytes[..len];
        let stored = read_u32(rec, 4);
        let computed = record_crc(rec);
        if stored != computed {
            return Err(RecordError::Checksum { lsn, stored, computed });
        }
        let tag = rec[8];
        let kind = RecordKind::from_tag(tag).ok_or(RecordError::UnknownKind { lsn, tag })?;
        let flags = rec[9];
        if flags & !FLAGS_KNOWN != 0 {
            return Err(RecordError::BadFlags { lsn, flags });
        }
        // Every byte of a record means something: a non-zero reserved field
        // is a writer this build does not know, not padding to skip.
        let reserved = read_u16(rec, 10);
        if reserved != 0 {
            return Err(RecordError::BadReserved { lsn, reserved });
        }
        let record = Record {
            kind,
            txn_id: read_u64(rec, 12),
            page: PageId::new(read_u32(rec, 20), read_u32(rec, 24)),
            payload: rec[RECORD_HDR_SIZE..].to_vec(),
        };
        Ok(Decoded {
            record,
            len,
            group_end: flags & FLAG_GROUP_END != 0,
        })
    }
}

fn record_crc(rec: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&rec[0..4]);
    crc32c::crc32c_append(crc, &rec[8..])
}

pub(crate) fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Vec<Record> {
        vec![
            Record::txn_begin(7),
            Record::page_init(7, PageId::new(1, 2), vec![]),
            Record::page_write(7, PageId::new(1, 2), 100, b"hello"),
            Record::txn_commit(7),
            Record::txn_rollback(8),
            Record::checkpoint_marker(Lsn(12345)),
        ]
    }

    #[test]
    fn records_round_trip() {
        let mut bytes = Vec::new();
        let recs = sample();
        for (i, r) in recs.iter().enumerate() {
            r.encode_into(&mut bytes, i + 1 == recs.len()).unwrap();
        }
        let mut at = 0;
        for (i, r) in recs.iter().enumerate() {
            let d = Record::decode(&bytes[at..], Lsn(at as u64)).unwrap();
            assert_eq!(&d.record, r);
            assert_eq!(d.len, r.encoded_len());
            assert_eq!(d.group_end, i + 1 == recs.len());
            at += d.len;
        }
        assert_eq!(at, bytes.len());
        assert_eq!(
            recs[2].page_write_parts(),
            Some((100u32, &b"hello"[..])),
            "page write keeps offset and bytes"
        );
    }

    #[test]
    fn truncated_record_is_a_truncation_naming_the_lsn() {
        let bytes = Record::page_write(1, PageId::new(0, 3), 0, &[9; 40]).encode().unwrap();
        for cut in 0..bytes.len() {
            let err = Record::decode(&bytes[..cut], Lsn(777)).unwrap_err();
            assert!(err.is_truncation(), "cut {cut}: {err}");
            assert!(err.to_string().contains("lsn 777"));
        }
    }

    #[test]
    fn corrupt_length_and_kind_are_reported() {
        let mut bytes = Record::txn_commit(3).encode().unwrap();
        bytes[0..4].copy_from_slice(&(u32::MAX).to_le_bytes());
        assert!(matches!(
            Record::decode(&bytes, Lsn(5)),
            Err(RecordError::BadLength { lsn: Lsn(5), .. })
        ));
        let too_big = Record::page_init(1, PageId::new(0, 0), vec![0; RECORD_BYTES_MAX]);
        assert!(matches!(too_big.encode(), Err(RecordError::TooLarge { .. })));
    }

    #[test]
    fn nonzero_reserved_field_is_refused() {
        // Found by the redo_record fuzz target: a record whose reserved
        // bytes were not zero decoded, and re-encoded to other bytes.
        let mut bytes = Record::txn_commit(3).encode().unwrap();
        bytes[11] = 0x2a;
        let crc = record_crc(&bytes);
        bytes[4..8].copy_from_slice(&crc.to_le_bytes());
        let err = Record::decode(&bytes, Lsn(9)).unwrap_err();
        assert_eq!(
            err,
            RecordError::BadReserved {
                lsn: Lsn(9),
                reserved: 0x2a00
            }
        );
        assert!(err.to_string().contains("reserved field 0x2a00"), "{err}");
    }

    proptest! {
        #[test]
        fn any_record_round_trips_and_any_bit_flip_is_detected(
            tag in 1u8..=7,
            txn in any::<u64>(),
            space in any::<u32>(),
            page_no in any::<u32>(),
            payload in proptest::collection::vec(any::<u8>(), 0..300),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let kind = RecordKind::from_tag(tag).unwrap();
            let r = Record::new(kind, txn, PageId::new(space, page_no), payload);
            let bytes = r.encode().unwrap();
            let d = Record::decode(&bytes, Lsn(1)).unwrap();
            prop_assert_eq!(&d.record, &r);
            let mut bad = bytes.clone();
            let i = flip.index(bad.len());
            bad[i] ^= 1 << bit;
            prop_assert!(Record::decode(&bad, Lsn(1)).is_err());
        }
    }
}
