//! Redo records: `flushwise_engine::redo::Record::decode` on bytes from the
//! log's data area.
//!
//! Modes (low bit of the first byte):
//! - 0: the rest decoded as it is, or (bit 1 set) with its checksum fixed up
//!   over the length its first four bytes claim, so mutations reach the
//!   kind, flag and reserved checks;
//! - 1: a sequence of structured records encoded back to back must decode to
//!   the same records, and a flipped bit must be refused at the record it
//!   hit.
//!
//! Properties: `decode` never panics; a record it accepts fits the input,
//! and encoding it again gives back exactly the bytes it came from (every
//! byte of the format is meaningful, reserved ones included); every strict
//! prefix of an accepted record is a truncation; errors name the LSN.

use arbitrary::Unstructured;
use flushwise_core::{Lsn, PageId};
use flushwise_engine::redo::record::{Record, RecordKind, RECORD_BYTES_MAX, RECORD_HDR_SIZE};

/// The LSN errors are asked to name.
const LSN: Lsn = Lsn(8216);
/// Largest payload of a structured record (enough to cross log blocks).
const PAYLOAD_MAX: usize = 1024;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        let mut bytes = rest.to_vec();
        if mode & 2 != 0 {
            fix_checksum(&mut bytes);
        }
        assert_decoded(&bytes);
    } else {
        round_trip(rest);
    }
}

/// Stores the CRC-32C the format defines (bytes 0..4 and 8..len) for the
/// length the record claims, when the input holds that much.
fn fix_checksum(bytes: &mut [u8]) {
    if bytes.len() < 8 {
        return;
    }
    let claimed = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    let len = claimed.clamp(8, bytes.len());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..4]), &bytes[8..len]);
    bytes[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// The properties of one `decode` verdict; the accepted record's length.
fn assert_decoded(bytes: &[u8]) -> Option<usize> {
    match Record::decode(bytes, LSN) {
        Ok(d) => {
            assert!(d.len <= bytes.len(), "decoded past the input");
            assert!((RECORD_HDR_SIZE..=RECORD_BYTES_MAX).contains(&d.len));
            assert_eq!(d.len, d.record.encoded_len());
            let mut again = Vec::new();
            d.record
                .encode_into(&mut again, d.group_end)
                .expect("an accepted record re-encodes");
            assert!(
                again == bytes[..d.len],
                "an accepted record re-encodes to other bytes than it came from"
            );
            if let Some((_, written)) = d.record.page_write_parts() {
                assert_eq!(written.len() + 4, d.record.payload.len());
            }
            for cut in [0, 3, 4, RECORD_HDR_SIZE - 1, d.len - 1] {
                if cut < d.len {
                    let e = Record::decode(&bytes[..cut], LSN).expect_err("a strict prefix decoded");
                    assert!(e.is_truncation(), "prefix of {cut} bytes: {e}");
                }
            }
            Some(d.len)
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains(&LSN.to_string()), "{message}");
            if e.is_truncation() {
                assert!(bytes.len() < RECORD_BYTES_MAX);
            }
            None
        }
    }
}

/// A record of any kind with up to `payload_max` payload bytes.
pub(crate) fn arbitrary_record(u: &mut Unstructured<'_>, payload_max: usize) -> arbitrary::Result<Record> {
    let kind = RecordKind::from_tag(u.int_in_range(1u8..=7)?).unwrap_or(RecordKind::PageWrite);
    let txn_id = u.arbitrary::<u64>()?;
    let page = PageId::new(u.arbitrary()?, u.arbitrary()?);
    let len = u.int_in_range(0..=payload_max)?;
    let payload = u.bytes(len.min(u.len()))?.to_vec();
    Ok(Record::new(kind, txn_id, page, payload))
}

fn round_trip(rest: &[u8]) {
    let mut u = Unstructured::new(rest);
    let Ok(flip) = u.arbitrary::<u32>() else {
        return;
    };
    let mut records = Vec::new();
    while !u.is_empty() && records.len() < 32 {
        let (Ok(record), Ok(group_end)) = (arbitrary_record(&mut u, PAYLOAD_MAX), u.arbitrary::<bool>()) else {
            break;
        };
        records.push((record, group_end));
    }
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for (record, group_end) in &records {
        starts.push(bytes.len());
        record
            .encode_into(&mut bytes, *group_end)
            .expect("a small record encodes");
    }
    let mut at = 0;
    for (record, group_end) in &records {
        let d = Record::decode(&bytes[at..], LSN).expect("an encoded record decodes");
        assert_eq!(
            (&d.record, d.group_end, d.len),
            (record, *group_end, record.encoded_len())
        );
        assert_decoded(&bytes[at..]);
        at += d.len;
    }
    assert_eq!(at, bytes.len());
    if bytes.is_empty() {
        return;
    }

    // One flipped bit: the records before it still decode, its own does not.
    let bit = flip as usize % (bytes.len() * 8);
    bytes[bit / 8] ^= 1 << (bit % 8);
    let hit = starts.partition_point(|s| *s <= bit / 8) - 1;
    for (i, start) in starts.iter().enumerate().take(hit + 1) {
        let verdict = Record::decode(&bytes[*start..], LSN);
        if i < hit {
            assert_eq!(verdict.map(|d| d.record).as_ref(), Ok(&records[i].0));
        } else {
            assert!(verdict.is_err(), "a flip of bit {bit} in record {i} went unnoticed");
        }
    }
}
