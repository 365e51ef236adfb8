//! Data pages: `flushwise_engine::page::verify` on bytes read from a data or
//! doublewrite file.
//!
//! Modes (low two bits of the first byte):
//! - 0: the rest laid into a page of a chosen size (header from the front,
//!   trailer from the back), with optional fix-ups of the checksum, the
//!   trailer, the fixed header fields and the expected page id, so
//!   mutations get past each check in turn;
//! - 1: a structured page (`init`, payload, `seal`) must verify with exactly
//!   its fields, and any single bit flip must be refused;
//! - 2: the rest as the whole buffer, of any length.
//!
//! Properties: `verify` never panics; a page it accepts carries the expected
//! id, its stored checksum is the CRC-32C of bytes 4.., and sealing it again
//! changes nothing; an all-zero page is `NeverWritten`; every error names
//! the expected page number.

use std::path::Path;

use arbitrary::Unstructured;
use flushwise_core::{Lsn, PageId};
use flushwise_engine::page::{self, CorruptReason, PageError, PageSize, PageType, FORMAT_VERSION, MAGIC};

const SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
const FILE: &str = "fuzz.ibd";

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    match mode & 3 {
        0 => laid_out(mode, rest),
        1 => sealed_round_trip(rest),
        _ => assert_verdict(rest, PageId::new(1, 2)),
    }
}

fn laid_out(mode: u8, rest: &[u8]) {
    let size = SIZES[usize::from(mode >> 2) % SIZES.len()];
    let mut buf = vec![0u8; size];
    let head = rest.len().min(size / 2);
    buf[..head].copy_from_slice(&rest[..head]);
    let tail = (rest.len() - head).min(size - head);
    buf[size - tail..].copy_from_slice(&rest[rest.len() - tail..]);
    if mode & 0x20 != 0 {
        buf[4..8].copy_from_slice(&MAGIC.to_le_bytes());
        buf[18] = size.trailing_zeros() as u8;
        buf[19] = FORMAT_VERSION;
    }
    if mode & 0x40 != 0 {
        let lsn_low = page::peek_lsn(&buf).0 as u32;
        buf[size - 4..].copy_from_slice(&lsn_low.to_le_bytes());
    }
    if mode & 0x80 != 0 {
        let crc = crc32c::crc32c(&buf[4..]);
        buf[..4].copy_from_slice(&crc.to_le_bytes());
    }
    // The expected id: the one in the header (so the id check passes) or a
    // fixed one, chosen by a bit the size choice leaves free.
    let expected = if mode & 0x10 != 0 {
        page::peek_page_id(&buf)
    } else {
        PageId::new(1, 2)
    };
    assert_verdict(&buf, expected);
}

/// The properties every verdict of `verify` must have.
fn assert_verdict(buf: &[u8], expected: PageId) {
    let result = page::verify(buf, expected, Path::new(FILE));
    let all_zero = buf.iter().all(|b| *b == 0);
    match result {
        Ok(header) => {
            assert_eq!(header.page_id, expected, "accepted a page of another id");
            assert_eq!(header.lsn, page::peek_lsn(buf));
            assert_eq!(header.page_type as u16, page::peek_page_type_raw(buf));
            assert_eq!(header.checksum, crc32c::crc32c(&buf[4..]), "accepted a wrong checksum");
            let mut resealed = buf.to_vec();
            page::seal(&mut resealed);
            assert!(resealed == buf, "an accepted page is not what seal makes of it");
        }
        Err(e) => {
            let message = e.to_string();
            match e {
                PageError::InvalidPageSize { bytes } => {
                    assert_eq!(bytes, buf.len());
                    assert!(PageSize::new(buf.len()).is_err(), "refused a valid page size");
                }
                PageError::NeverWritten { page_no, .. } => {
                    assert!(all_zero, "a page with data called never written");
                    assert_eq!(page_no, expected.page_no);
                }
                PageError::Corrupt { page_no, reason, .. } => {
                    assert!(!all_zero, "an all-zero page called corrupt");
                    assert_eq!(page_no, expected.page_no);
                    if let CorruptReason::WrongPageId { expected: e, found } = reason {
                        assert_eq!(e, expected);
                        assert_ne!(found, expected);
                    }
                }
                other => panic!("unexpected page error: {other}"),
            }
            assert!(message.contains(FILE) || message.contains("page size"), "{message}");
        }
    }
}

fn sealed_round_trip(rest: &[u8]) {
    let mut u = Unstructured::new(rest);
    let (Ok(size), Ok(space), Ok(page_no), Ok(kind), Ok(lsn), Ok(flip)) = (
        u.choose(&SIZES),
        u.arbitrary::<u32>(),
        u.arbitrary::<u32>(),
        u.choose(&PageType::ALL),
        u.arbitrary::<u64>(),
        u.arbitrary::<u32>(),
    ) else {
        return;
    };
    let id = PageId::new(space, page_no);
    let mut buf = vec![0u8; *size];
    page::init(&mut buf, id, *kind, Lsn(lsn));
    let payload = page::payload_mut(&mut buf);
    let fill = u.take_rest();
    let n = fill.len().min(payload.len());
    payload[..n].copy_from_slice(&fill[..n]);
    page::seal(&mut buf);
    let header = page::verify(&buf, id, Path::new(FILE)).expect("a sealed page verifies");
    assert_eq!((header.page_id, header.page_type, header.lsn), (id, *kind, Lsn(lsn)));
    assert_verdict(&buf, id);

    let bit = flip as usize % (buf.len() * 8);
    buf[bit / 8] ^= 1 << (bit % 8);
    assert!(
        page::verify(&buf, id, Path::new(FILE)).is_err(),
        "a flip of bit {bit} went unnoticed"
    );
    assert_verdict(&buf, id);
}
