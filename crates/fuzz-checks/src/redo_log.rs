//! Redo blocks, the redo file header and the whole recovery scan
//! (`flushwise_engine::redo::reader::scan_image`) over a log file image.
//!
//! Modes (low two bits of the first byte):
//! - 0: the rest as one data block for `decode_block` (bit 2: checksum
//!   fixed up);
//! - 1: the rest as the file header block (bit 2: magic, bit 3: checksum
//!   fixed up);
//! - 2: a log image assembled from fuzz choices: a valid file header, one
//!   checkpoint whose LSN may be anything, and per ring block zeros, a
//!   sealed block with near-expected fields or raw bytes; the scan must
//!   return a self-consistent answer or a clean error;
//! - 3: a log written by a model of the writer (append groups laid into
//!   blocks from a checkpoint anywhere in the ring, torn at any byte, with
//!   zero, stale, older-incarnation or damaged blocks after the tear, an
//!   older checkpoint in the other slot): the scan must return exactly the
//!   complete groups before the tear, or `Corrupt` when the checkpoint
//!   recorded more as durable.
//!
//! Properties: no panic; an accepted block's fields are in range and encode
//! back to the same bytes; a scan's records are contiguous from the
//! checkpoint LSN to the end LSN, and its report agrees with them.

use std::path::Path;

use arbitrary::Unstructured;
use flushwise_core::Lsn;
use flushwise_engine::redo::log_file::{
    block_no_of_sn, block_offset, decode_block, encode_block, file_len, lsn_after, lsn_offset, lsn_to_sn, sn_to_lsn,
    CheckpointBlock, FileHeader, BLOCK_HDR_SIZE, BLOCK_PAYLOAD, BLOCK_SIZE, CHECKPOINT_OFFSETS,
};
use flushwise_engine::redo::reader::{scan_image, RecoveryScan};
use flushwise_engine::redo::{Record, RedoError};

use crate::redo_record::arbitrary_record;

const LOG: &str = "fuzz-redo.log";
const CRC_AT: usize = BLOCK_SIZE - 4;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    match mode & 3 {
        0 => block(mode, rest),
        1 => header(mode, rest),
        2 => {
            let _ = assembled(rest);
        }
        _ => {
            let _ = modelled(rest);
        }
    }
}

fn block_from(rest: &[u8]) -> [u8; BLOCK_SIZE] {
    let mut b = [0u8; BLOCK_SIZE];
    let n = rest.len().min(BLOCK_SIZE);
    b[..n].copy_from_slice(&rest[..n]);
    b
}

fn seal(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[..CRC_AT]);
    b[CRC_AT..BLOCK_SIZE].copy_from_slice(&crc.to_le_bytes());
}

fn block(mode: u8, rest: &[u8]) {
    let mut b = block_from(rest);
    if mode & 4 != 0 {
        seal(&mut b);
    }
    let Some(h) = decode_block(&b) else {
        return;
    };
    let data_len = usize::from(h.data_len);
    assert!((BLOCK_HDR_SIZE..=BLOCK_HDR_SIZE + BLOCK_PAYLOAD).contains(&data_len));
    let first_rec = usize::from(h.first_rec);
    assert!(first_rec == 0 || (BLOCK_HDR_SIZE..data_len).contains(&first_rec));
    assert_eq!(h.payload_len(), data_len - BLOCK_HDR_SIZE);
    let mut again = [0u8; BLOCK_SIZE];
    encode_block(
        &mut again,
        h.block_no,
        h.durable_lsn,
        h.incarnation,
        h.first_rec,
        &b[BLOCK_HDR_SIZE..data_len],
    );
    assert!(again[..data_len] == b[..data_len], "re-encoding changed the block");
    assert_eq!(decode_block(&again), Some(h));
}

fn header(mode: u8, rest: &[u8]) {
    let mut b = block_from(rest);
    if mode & 4 != 0 {
        b[..8].copy_from_slice(b"FWREDO01");
    }
    if mode & 8 != 0 {
        seal(&mut b);
    }
    if let Ok(h) = FileHeader::decode(&b) {
        let again = h.encode();
        assert!(again[..24] == b[..24], "re-encoding changed the header");
        assert_eq!(FileHeader::decode(&again), Ok(h));
    }
}

/// The scan's verdict on `image` and its properties.
fn assert_scanned(image: &[u8], n_blocks: u64) -> Result<RecoveryScan, RedoError> {
    let result = scan_image(Path::new(LOG), image);
    match &result {
        Ok(scan) => {
            let r = &scan.report;
            assert!(r.end_lsn >= r.checkpoint_lsn, "the log ends before its checkpoint");
            assert_eq!(r.bytes, r.end_lsn.0 - r.checkpoint_lsn.0);
            assert_eq!(r.records, scan.records.len() as u64);
            assert!(r.groups <= r.records && (r.groups == 0) == (r.records == 0));
            assert!(
                r.blocks_read <= 2 * n_blocks,
                "read {} blocks of {n_blocks}",
                r.blocks_read
            );
            let mut next = r.checkpoint_lsn;
            for (lsn, record) in &scan.records {
                assert_eq!(*lsn, next, "records are not contiguous from the checkpoint");
                next = lsn_after(*lsn, record.encoded_len() as u64).expect("a record starts at a record position");
            }
            assert_eq!(next, r.end_lsn, "the end is not where the last group ends");
        }
        Err(e) => {
            assert!(
                !matches!(e, RedoError::Storage(_)),
                "the scan read outside the file: {e}"
            );
            assert!(e.to_string().contains(LOG), "{e}");
        }
    }
    result
}

fn image_with_header(n_blocks: u64) -> Vec<u8> {
    let capacity = n_blocks * BLOCK_SIZE as u64;
    let mut image = vec![0u8; file_len(capacity) as usize];
    image[..BLOCK_SIZE].copy_from_slice(
        &FileHeader {
            capacity_bytes: capacity,
        }
        .encode(),
    );
    image
}

fn put_block(image: &mut [u8], block_no: u64, n_blocks: u64, block: &[u8]) {
    let at = block_offset(block_no, n_blocks * BLOCK_SIZE as u64) as usize;
    image[at..at + BLOCK_SIZE].copy_from_slice(block);
}

fn put_checkpoint(image: &mut [u8], c: &CheckpointBlock) {
    let at = CHECKPOINT_OFFSETS[c.slot()] as usize;
    image[at..at + BLOCK_SIZE].copy_from_slice(&c.encode());
}

fn assembled(rest: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(rest);
    let n_blocks = u.int_in_range(8u64..=32)?;
    let capacity = n_blocks * BLOCK_SIZE as u64;
    let mut image = image_with_header(n_blocks);
    // Any LSN, one near the top of the LSN space (where arithmetic on it
    // may overflow), or a record position of a plausible log.
    let checkpoint_lsn = match u.int_in_range(0u8..=2)? {
        0 => Lsn(u.arbitrary::<u64>()?),
        1 => Lsn(u64::MAX - u.int_in_range(0u64..=4 * capacity)?),
        _ => sn_to_lsn(u.int_in_range(0u64..=1 << 40)?),
    };
    let durable_lsn = match u.int_in_range(0u8..=2)? {
        0 => checkpoint_lsn,
        1 => Lsn(u.arbitrary::<u64>()?),
        _ => lsn_after(checkpoint_lsn, u.int_in_range(0u64..=n_blocks * 600)?).unwrap_or(checkpoint_lsn),
    };
    let c = CheckpointBlock {
        checkpoint_no: u.arbitrary::<u64>()?,
        checkpoint_lsn,
        offset: lsn_offset(checkpoint_lsn, capacity),
        durable_lsn,
        incarnation: u.arbitrary::<u32>()?,
    };
    put_checkpoint(&mut image, &c);
    let base_sn = lsn_to_sn(checkpoint_lsn).unwrap_or(0) / BLOCK_PAYLOAD as u64 * BLOCK_PAYLOAD as u64;
    let b0 = block_no_of_sn(base_sn);
    for i in 0..n_blocks {
        if u.is_empty() {
            break;
        }
        let expected = b0 + i;
        let mut b = [0u8; BLOCK_SIZE];
        match u.int_in_range(0u8..=3)? {
            0 => {}
            1 | 2 => {
                let block_no = if u.arbitrary::<bool>()? {
                    expected
                } else {
                    expected.wrapping_add_signed(i64::from(u.arbitrary::<i8>()?))
                };
                let durable = if u.arbitrary::<bool>()? {
                    c.durable_lsn
                } else {
                    Lsn(u.arbitrary::<u64>()?)
                };
                let incarnation = if u.arbitrary::<bool>()? {
                    c.incarnation
                } else {
                    u.arbitrary::<u32>()?
                };
                let len = u.int_in_range(0..=BLOCK_PAYLOAD)?;
                let payload = u.bytes(len.min(u.len()))?;
                let first_rec = u.arbitrary::<u16>()?;
                let first_rec_fits =
                    usize::from(first_rec) >= BLOCK_HDR_SIZE && usize::from(first_rec) < BLOCK_HDR_SIZE + payload.len();
                let first_rec = if first_rec_fits { first_rec } else { 0 };
                encode_block(&mut b, block_no, durable, incarnation, first_rec, payload);
            }
            _ => {
                let len = BLOCK_SIZE.min(u.len());
                b[..len].copy_from_slice(u.bytes(len)?);
                if u.arbitrary::<bool>()? {
                    seal(&mut b);
                }
            }
        }
        put_block(&mut image, expected, n_blocks, &b);
    }
    let _ = assert_scanned(&image, n_blocks);
    Ok(())
}

/// What fills a ring block the modelled writer did not write after the tear.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Filler {
    /// Never written.
    Zero,
    /// Written one lap earlier: a valid block of a smaller number.
    PreviousLap,
    /// The right number, written by an earlier incarnation and abandoned.
    OlderIncarnation,
    /// Torn or rotten: no valid checksum.
    Damaged,
}

fn modelled(rest: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(rest);
    let n_blocks = u.int_in_range(8u64..=64)?;
    let capacity = n_blocks * BLOCK_SIZE as u64;
    let first_block = u.int_in_range(0u64..=1_000_000)?;
    let lead = u.int_in_range(0..=BLOCK_PAYLOAD - 1)?;
    let incarnation = u.arbitrary::<u32>()?;
    let checkpoint_no = u.arbitrary::<u64>()?;
    let older_checkpoint = u.arbitrary::<bool>()?;
    let tear_pick = u.arbitrary::<u32>()?;
    let durable_pick = u.arbitrary::<u32>()?;
    let fillers = u.arbitrary::<u128>()?;

    // The record stream from the checkpoint's block start: bytes of older
    // groups up to the checkpoint, then append groups while they fit.
    let room = n_blocks as usize * BLOCK_PAYLOAD;
    let mut stream = u.bytes(lead.min(u.len()))?.to_vec();
    stream.resize(lead, 0x5a);
    let mut groups: Vec<Vec<(usize, Record)>> = Vec::new();
    while !u.is_empty() {
        let n = u.int_in_range(1..=4)?;
        let mut bytes = Vec::new();
        let mut group = Vec::new();
        for j in 0..n {
            let record = arbitrary_record(&mut u, 300)?;
            group.push((stream.len() + bytes.len(), record.clone()));
            record
                .encode_into(&mut bytes, j + 1 == n)
                .expect("a small record encodes");
        }
        if stream.len() + bytes.len() > room {
            break;
        }
        stream.extend_from_slice(&bytes);
        groups.push(group);
    }
    let group_end = |g: &Vec<(usize, Record)>| g.last().map_or(lead, |(s, r)| s + r.encoded_len());
    let tear = lead + tear_pick as usize % (stream.len() - lead + 1);
    let durable_groups = durable_pick as usize % (groups.len() + 1);
    let durable_rel = groups[..durable_groups].last().map_or(lead, group_end);

    let base_sn = first_block * BLOCK_PAYLOAD as u64;
    let b0 = block_no_of_sn(base_sn);
    let checkpoint_lsn = sn_to_lsn(base_sn + lead as u64);
    let c = CheckpointBlock {
        checkpoint_no,
        checkpoint_lsn,
        offset: lsn_offset(checkpoint_lsn, capacity),
        durable_lsn: sn_to_lsn(base_sn + durable_rel as u64),
        incarnation,
    };
    let mut image = image_with_header(n_blocks);
    put_checkpoint(&mut image, &c);
    if older_checkpoint && checkpoint_no > 0 {
        let older_lsn = sn_to_lsn(base_sn);
        put_checkpoint(
            &mut image,
            &CheckpointBlock {
                checkpoint_no: checkpoint_no - 1,
                checkpoint_lsn: older_lsn,
                offset: lsn_offset(older_lsn, capacity),
                durable_lsn: older_lsn,
                incarnation,
            },
        );
    }

    let starts: Vec<usize> = groups.iter().flatten().map(|(s, _)| *s).collect();
    let written = tear.div_ceil(BLOCK_PAYLOAD);
    for i in 0..written {
        let from = i * BLOCK_PAYLOAD;
        let to = (from + BLOCK_PAYLOAD).min(tear);
        let first_rec = starts
            .iter()
            .find(|s| (from..to).contains(s))
            .map_or(0, |s| (BLOCK_HDR_SIZE + s - from) as u16);
        let mut b = [0u8; BLOCK_SIZE];
        encode_block(
            &mut b,
            b0 + i as u64,
            checkpoint_lsn,
            incarnation,
            first_rec,
            &stream[from..to],
        );
        put_block(&mut image, b0 + i as u64, n_blocks, &b);
    }
    let mut damaged_after = false;
    for i in written as u64..n_blocks {
        let mut filler = match (fillers >> (2 * (i % 64))) & 3 {
            0 => Filler::Zero,
            1 => Filler::PreviousLap,
            2 => Filler::OlderIncarnation,
            _ => Filler::Damaged,
        };
        // Nothing older precedes the first block to tell an abandoned one
        // from the current incarnation's, and a lap needs a lap before it.
        if (filler == Filler::OlderIncarnation && (incarnation == 0 || written == 0))
            || (filler == Filler::PreviousLap && b0 + i < n_blocks)
        {
            filler = Filler::Zero;
        }
        let mut b = [0u8; BLOCK_SIZE];
        match filler {
            Filler::Zero => {}
            Filler::PreviousLap => {
                encode_block(&mut b, b0 + i - n_blocks, Lsn(u64::MAX >> 1), incarnation, 0, &[7; 40])
            }
            Filler::OlderIncarnation => encode_block(&mut b, b0 + i, checkpoint_lsn, incarnation - 1, 0, &[9; 100]),
            Filler::Damaged => {
                b.iter_mut().enumerate().for_each(|(k, x)| *x = (k as u8) | 1);
                assert!(decode_block(&b).is_none());
            }
        }
        if i == written as u64 && tear % BLOCK_PAYLOAD == 0 {
            damaged_after = filler == Filler::Damaged;
        }
        put_block(&mut image, b0 + i, n_blocks, &b);
    }

    // What recovery must find: the groups that end at or before the tear.
    let complete: Vec<&Vec<(usize, Record)>> = groups.iter().filter(|g| group_end(g) <= tear).collect();
    let end_rel = complete.last().map_or(lead, |g| group_end(g));
    let result = assert_scanned(&image, n_blocks);
    if durable_rel > end_rel {
        assert!(
            matches!(result, Err(RedoError::Corrupt { .. })),
            "lost durable groups not reported: {result:?}"
        );
        return Ok(());
    }
    let scan = match result {
        Ok(scan) => scan,
        Err(e) => panic!("a log torn after its durable point refused: {e}"),
    };
    let expected: Vec<(Lsn, Record)> = complete
        .iter()
        .flat_map(|g| g.iter())
        .map(|(s, r)| (sn_to_lsn(base_sn + *s as u64), r.clone()))
        .collect();
    assert!(
        scan.records == expected,
        "the scan's records differ from the groups written"
    );
    let r = &scan.report;
    assert_eq!(r.checkpoint_no, checkpoint_no);
    assert_eq!(r.checkpoint_lsn, checkpoint_lsn);
    assert_eq!(r.end_lsn, sn_to_lsn(base_sn + end_rel as u64));
    assert_eq!(r.groups, complete.len() as u64);
    assert_eq!(r.discarded_bytes, (tear - end_rel) as u64);
    assert_eq!(r.torn_tail, damaged_after || tear > end_rel, "torn tail misreported");
    Ok(())
}
