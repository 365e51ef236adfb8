//! Redo checkpoint blocks: `CheckpointBlock::decode` on the two blocks
//! after the redo log's file header.
//!
//! Modes (low bit of the first byte):
//! - 0: the rest as one 512-byte block read from slot `mode >> 1 & 1`, with
//!   optional fix-ups of the magic (bit 2) and the checksum (bit 3), for a
//!   log whose capacity the next eight bytes choose;
//! - 1: a structured valid checkpoint must decode from its own slot to
//!   itself, be refused from the other slot, and be refused after any
//!   single bit flip.
//!
//! Properties: `decode` never panics; a checkpoint it accepts belongs to the
//! slot it was read from, starts at a record position, maps to the file
//! offset it names, was durable at least up to itself, and encodes back to
//! the same 44 meaningful bytes.

use arbitrary::Unstructured;
use flushwise_engine::redo::log_file::{
    capacity_is_valid, lsn_after, lsn_offset, lsn_to_sn, sn_to_lsn, CheckpointBlock, BLOCK_SIZE, CAPACITY_BYTES_MAX,
    CAPACITY_BYTES_MIN,
};

/// Bytes of a checkpoint block that carry fields (the rest is zero).
const FIELDS_LEN: usize = 44;
const CRC_AT: usize = BLOCK_SIZE - 4;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        raw(mode, rest);
    } else {
        round_trip(rest);
    }
}

/// A valid data-area size derived from any number.
pub(crate) fn capacity_from(raw: u64) -> u64 {
    let span = CAPACITY_BYTES_MAX - CAPACITY_BYTES_MIN;
    let capacity = (CAPACITY_BYTES_MIN + raw % span) & !(BLOCK_SIZE as u64 - 1);
    assert!(capacity_is_valid(capacity), "{capacity}");
    capacity
}

fn raw(mode: u8, rest: &[u8]) {
    let mut u = Unstructured::new(rest);
    let capacity = capacity_from(u.arbitrary::<u64>().unwrap_or(0));
    let mut block = [0u8; BLOCK_SIZE];
    let bytes = u.take_rest();
    let n = bytes.len().min(BLOCK_SIZE);
    block[..n].copy_from_slice(&bytes[..n]);
    if mode & 4 != 0 {
        block[..8].copy_from_slice(b"FWCKPT01");
    }
    if mode & 8 != 0 {
        let crc = crc32c::crc32c(&block[..CRC_AT]);
        block[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    }
    let slot = usize::from(mode >> 1 & 1);
    assert_decoded(&block, slot, capacity);
}

fn assert_decoded(block: &[u8], slot: usize, capacity: u64) -> Option<CheckpointBlock> {
    match CheckpointBlock::decode(block, slot, capacity) {
        Ok(c) => {
            assert_eq!(c.slot(), slot, "a checkpoint accepted from the other slot");
            assert!(
                lsn_to_sn(c.checkpoint_lsn).map(sn_to_lsn) == Some(c.checkpoint_lsn),
                "checkpoint lsn not a record position in the writer's form"
            );
            assert_eq!(c.offset, lsn_offset(c.checkpoint_lsn, capacity));
            assert!(c.durable_lsn >= c.checkpoint_lsn);
            let again = c.encode();
            assert!(
                again[..FIELDS_LEN] == block[..FIELDS_LEN],
                "re-encoding changed a field"
            );
            assert_eq!(CheckpointBlock::decode(&again, slot, capacity), Ok(c));
            Some(c)
        }
        Err(reason) => {
            assert!(!reason.is_empty());
            None
        }
    }
}

fn round_trip(rest: &[u8]) {
    let mut u = Unstructured::new(rest);
    let (Ok(raw_capacity), Ok(checkpoint_no), Ok(sn), Ok(ahead), Ok(incarnation), Ok(flip)) = (
        u.arbitrary::<u64>(),
        u.arbitrary::<u64>(),
        u.int_in_range(0u64..=1 << 56),
        u.int_in_range(0u64..=1 << 40),
        u.arbitrary::<u32>(),
        u.arbitrary::<u32>(),
    ) else {
        return;
    };
    let capacity = capacity_from(raw_capacity);
    let checkpoint_lsn = sn_to_lsn(sn);
    let Some(durable_lsn) = lsn_after(checkpoint_lsn, ahead) else {
        panic!("lsn_after refused the record position {checkpoint_lsn}");
    };
    let c = CheckpointBlock {
        checkpoint_no,
        checkpoint_lsn,
        offset: lsn_offset(checkpoint_lsn, capacity),
        durable_lsn,
        incarnation,
    };
    let mut block = c.encode();
    assert_eq!(CheckpointBlock::decode(&block, c.slot(), capacity), Ok(c));
    assert_eq!(assert_decoded(&block, c.slot(), capacity), Some(c));
    assert!(CheckpointBlock::decode(&block, 1 - c.slot(), capacity).is_err());
    let bit = flip as usize % (BLOCK_SIZE * 8);
    block[bit / 8] ^= 1 << (bit % 8);
    assert!(
        CheckpointBlock::decode(&block, c.slot(), capacity).is_err(),
        "a flip of bit {bit} went unnoticed"
    );
}
