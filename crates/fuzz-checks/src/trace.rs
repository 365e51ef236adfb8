//! Page-reference traces: `flushwise_trace::TraceReader` over a trace file's
//! bytes (header, checksummed blocks, trailer).
//!
//! Modes (low bit of the first byte):
//! - 0: the rest read as a trace;
//! - 1: a structured trace (header, records, a small block size) written by
//!   `TraceWriter` must read back to itself; every strict prefix must be
//!   `Truncated` at its own length, and a flipped bit or a byte after the
//!   trailer must be refused.
//!
//! Properties: the reader never panics, stops after its first error, and
//! returns a whole trace only if it is one: a trace read to its end writes
//! back (through `TraceWriter`) to a trace that reads the same.

use arbitrary::Unstructured;
use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceError, TraceHeader, TraceReader, TraceRecord, TraceWriter, TxnType};

/// Records of a structured trace: with blocks of 1..=8 records, enough for
/// many blocks while an input stays cheap.
const RECORDS_MAX: usize = 128;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        if let Ok((header, records)) = read_all(rest) {
            let again = write(&header, &records, u32::MAX);
            let (header2, records2) = read_all(&again).expect("a rewritten trace reads");
            assert_eq!(
                (header2, records2),
                (header, records),
                "a trace changed through a rewrite"
            );
        }
    } else {
        let _ = round_trip(rest);
    }
}

/// Reads a whole trace, checking that the reader is fused after an error.
fn read_all(bytes: &[u8]) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let mut reader = TraceReader::new(bytes)?;
    let mut records = Vec::new();
    while let Some(item) = reader.next() {
        match item {
            Ok(record) => {
                assert!(record.validate().is_ok(), "the reader returned an invalid record");
                records.push(record);
            }
            Err(e) => {
                assert!(reader.next().is_none(), "the reader went on after an error");
                return Err(e);
            }
        }
    }
    assert_eq!(reader.records_read(), records.len() as u64);
    Ok((reader.header().clone(), records))
}

fn write(header: &TraceHeader, records: &[TraceRecord], block_records: u32) -> Vec<u8> {
    let mut writer =
        TraceWriter::with_block_records(Vec::new(), header, block_records).expect("a read header writes back");
    writer.write_all(records).expect("a read record writes back");
    writer.finish().expect("a trace in memory finishes")
}

fn arbitrary_record(u: &mut Unstructured<'_>) -> arbitrary::Result<TraceRecord> {
    let agent = u.arbitrary::<u32>()?;
    let page = PageId::from_u64(u.arbitrary::<u64>()?);
    let latch = if u.arbitrary::<bool>()? {
        LatchMode::Exclusive
    } else {
        LatchMode::Shared
    };
    let txn_type = *u.choose(&TxnType::ALL)?;
    Ok(match u.int_in_range(0u8..=4)? {
        0 => TraceRecord::fix(agent, page, latch),
        1 => {
            let modified = u.arbitrary::<bool>()?;
            let redo_bytes = if modified { u.arbitrary::<u32>()? } else { 0 };
            TraceRecord::unfix(agent, page, latch, modified, redo_bytes)
        }
        2 => TraceRecord::txn_begin(agent, txn_type),
        3 => TraceRecord::txn_commit(agent, txn_type),
        _ => TraceRecord::txn_rollback(agent, txn_type),
    })
}

fn round_trip(rest: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(rest);
    let page_size_bytes = u.arbitrary::<u32>()?;
    let flags = u.arbitrary::<u16>()?;
    let block_records = u.int_in_range(1u32..=8)?;
    let cut_pick = u.arbitrary::<u32>()?;
    let flip_pick = u.arbitrary::<u32>()?;
    let description_len = u.int_in_range(0usize..=64)?;
    let description: String = String::from_utf8_lossy(u.bytes(description_len.min(u.len()))?).into_owned();
    let header = TraceHeader {
        page_size_bytes,
        flags,
        description,
    };
    let mut records = Vec::new();
    while !u.is_empty() && records.len() < RECORDS_MAX {
        records.push(arbitrary_record(&mut u)?);
    }
    let mut bytes = write(&header, &records, block_records);
    match read_all(&bytes) {
        Ok(read) => assert!(read == (header, records), "a written trace reads back differently"),
        Err(e) => panic!("a written trace is refused: {e}"),
    }

    let cut = cut_pick as usize % bytes.len();
    match read_all(&bytes[..cut]) {
        Err(TraceError::Truncated { offset }) => assert_eq!(offset, cut as u64, "truncation at the wrong offset"),
        other => panic!("a trace cut at {cut} of {} bytes: {other:?}", bytes.len()),
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(read_all(&longer).is_err(), "a byte after the trailer was accepted");
    let bit = flip_pick as usize % (bytes.len() * 8);
    bytes[bit / 8] ^= 1 << (bit % 8);
    assert!(read_all(&bytes).is_err(), "a flip of bit {bit} went unnoticed");
    Ok(())
}
