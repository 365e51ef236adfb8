//! Scenarios for the trace format: what goes in comes out, and damage is
//! always reported with the offset where it was found.

use std::io::Cursor;

use flushwise_core::PageId;
use flushwise_trace::oracle_general::{self, ExportOptions, OracleRecord, ORACLE_RECORD_BYTES};
use flushwise_trace::{
    LatchMode, TraceError, TraceHeader, TraceReader, TraceRecord, TraceWriter, TxnType, RECORD_BYTES,
};

fn sample_records(n: u32) -> Vec<TraceRecord> {
    let mut out = Vec::new();
    for i in 0..n {
        let agent = i % 7;
        let txn = TxnType::TPCC[(i % 5) as usize];
        let page = PageId::new(i % 11 + 1, i.wrapping_mul(2_654_435_761) % 100_000);
        out.push(TraceRecord::txn_begin(agent, txn));
        out.push(TraceRecord::fix(agent, page, LatchMode::Shared));
        out.push(TraceRecord::unfix(agent, page, LatchMode::Shared, false, 0));
        out.push(TraceRecord::fix(agent, page, LatchMode::Exclusive));
        out.push(TraceRecord::unfix(agent, page, LatchMode::Exclusive, true, 37 + i));
        if i % 10 == 9 {
            out.push(TraceRecord::txn_rollback(agent, txn));
        } else {
            out.push(TraceRecord::txn_commit(agent, TxnType::Other));
        }
    }
    out
}

fn encode(records: &[TraceRecord], block_records: u32) -> Vec<u8> {
    let header = TraceHeader::new(16 * 1024, "seed=42 config=test commit=abc123");
    let mut writer = TraceWriter::with_block_records(Vec::new(), &header, block_records).unwrap();
    writer.write_all(records).unwrap();
    writer.finish().unwrap()
}

fn decode(bytes: &[u8]) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let reader = TraceReader::new(Cursor::new(bytes))?;
    let header = reader.header().clone();
    let records = reader.collect::<Result<Vec<_>, _>>()?;
    Ok((header, records))
}

#[test]
fn round_trip_preserves_header_and_every_record() {
    let records = sample_records(2_000);
    for block_records in [1, 7, 3276] {
        let bytes = encode(&records, block_records);
        let (header, back) = decode(&bytes).unwrap();
        assert_eq!(header.page_size_bytes, 16 * 1024);
        assert_eq!(header.description, "seed=42 config=test commit=abc123");
        assert_eq!(back, records);
    }
}

#[test]
fn default_blocks_keep_records_at_twenty_bytes() {
    let records = sample_records(10_000);
    let bytes = encode(&records, 3276);
    let per_record = bytes.len() as f64 / records.len() as f64;
    assert!(per_record < RECORD_BYTES as f64 + 0.2, "{per_record}");
}

#[test]
fn empty_trace_round_trips() {
    let bytes = encode(&[], 16);
    let (_, back) = decode(&bytes).unwrap();
    assert!(back.is_empty());
}

#[test]
fn truncation_at_every_offset_is_reported_at_that_offset() {
    let records = sample_records(12);
    let bytes = encode(&records, 5);
    for cut in 0..bytes.len() {
        match decode(&bytes[..cut]) {
            Err(TraceError::Truncated { offset }) => {
                assert_eq!(offset, cut as u64, "cut at {cut}")
            }
            other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
        }
    }
    assert!(decode(&bytes).is_ok());
}

#[test]
fn every_single_bit_flip_is_detected() {
    let records = sample_records(6);
    let bytes = encode(&records, 4);
    for byte in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[byte] ^= 1 << bit;
            match decode(&damaged) {
                Err(TraceError::Corrupt { offset, .. }) => {
                    assert!(offset <= byte as u64, "flip at {byte}: offset {offset}")
                }
                Err(TraceError::BadMagic { .. }) => assert!(byte < 8),
                Err(TraceError::UnsupportedVersion { found, .. }) => {
                    assert!((8..10).contains(&byte));
                    assert_ne!(found, 1);
                }
                other => panic!("flip at byte {byte} bit {bit}: got {other:?}"),
            }
        }
    }
}

#[test]
fn bad_magic_names_what_was_found() {
    let mut bytes = encode(&sample_records(1), 4);
    bytes[..8].copy_from_slice(b"NOTATRCE");
    match decode(&bytes) {
        Err(TraceError::BadMagic { found }) => assert_eq!(&found, b"NOTATRCE"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn trailing_garbage_after_trailer_is_corrupt() {
    let mut bytes = encode(&sample_records(3), 4);
    let end = bytes.len() as u64;
    bytes.push(0);
    match decode(&bytes) {
        Err(TraceError::Corrupt { offset, .. }) => assert_eq!(offset, end),
        other => panic!("{other:?}"),
    }
}

#[test]
fn writer_refuses_redo_on_an_unmodified_unfix() {
    let header = TraceHeader::new(4096, "");
    let mut writer = TraceWriter::new(Vec::new(), &header).unwrap();
    let bad = TraceRecord::unfix(1, PageId::new(1, 1), LatchMode::Shared, false, 10);
    assert!(matches!(writer.write(&bad), Err(TraceError::InvalidRecord { .. })));
}

#[test]
fn oracle_general_next_access_points_at_the_next_fix_of_the_same_page() {
    // Fix sequence (pages): A B A C B A, interleaved with unfix and txn events
    // that must not count as requests.
    let a = PageId::new(1, 5);
    let b = PageId::new(2, 9);
    let c = PageId::new(1, 6);
    let mut records = vec![TraceRecord::txn_begin(0, TxnType::Payment)];
    for page in [a, b, a, c, b, a] {
        records.push(TraceRecord::fix(0, page, LatchMode::Shared));
        records.push(TraceRecord::unfix(0, page, LatchMode::Shared, false, 0));
    }
    records.push(TraceRecord::txn_commit(0, TxnType::Payment));
    let bytes = encode(&records, 3);

    let mut out = Cursor::new(Vec::new());
    let reader = TraceReader::new(Cursor::new(&bytes)).unwrap();
    let summary = oracle_general::export(reader, &mut out, ExportOptions::default()).unwrap();
    assert_eq!(summary.requests, 6);
    assert_eq!(summary.distinct_pages, 3);
    let out = out.into_inner();
    assert_eq!(out.len(), 6 * ORACLE_RECORD_BYTES);
    let decoded: Vec<OracleRecord> = out
        .chunks_exact(ORACLE_RECORD_BYTES)
        .map(|c| OracleRecord::decode(c.try_into().unwrap()))
        .collect();
    let ids: Vec<u64> = decoded.iter().map(|r| r.obj_id).collect();
    assert_eq!(
        ids,
        [a, b, a, c, b, a].map(|p| p.as_u64()).to_vec(),
        "obj_id is PageId::as_u64"
    );
    let next: Vec<i64> = decoded.iter().map(|r| r.next_access_vtime).collect();
    assert_eq!(next, vec![2, 4, 5, -1, -1, -1]);
    let times: Vec<u32> = decoded.iter().map(|r| r.clock_time).collect();
    assert_eq!(times, vec![0, 1, 2, 3, 4, 5]);
    assert!(decoded.iter().all(|r| r.obj_size == 16 * 1024));
}

#[test]
fn oracle_general_matches_a_naive_forward_scan_on_a_longer_trace() {
    let records = sample_records(3_000);
    let bytes = encode(&records, 3276);
    let mut out = Cursor::new(Vec::new());
    let reader = TraceReader::new(Cursor::new(&bytes)).unwrap();
    let options = ExportOptions { requests_per_tick: 4 };
    oracle_general::export(reader, &mut out, options).unwrap();
    let decoded: Vec<OracleRecord> = out
        .into_inner()
        .chunks_exact(ORACLE_RECORD_BYTES)
        .map(|c| OracleRecord::decode(c.try_into().unwrap()))
        .collect();
    for (i, rec) in decoded.iter().enumerate() {
        let expected = decoded[i + 1..]
            .iter()
            .position(|later| later.obj_id == rec.obj_id)
            .map_or(-1, |d| (i + 1 + d) as i64);
        assert_eq!(rec.next_access_vtime, expected, "request {i}");
        assert_eq!(rec.clock_time as usize, i / 4);
    }
}

#[test]
fn oracle_general_export_propagates_trace_damage() {
    let records = sample_records(50);
    let bytes = encode(&records, 16);
    let cut = bytes.len() - 30;
    let reader = TraceReader::new(Cursor::new(&bytes[..cut])).unwrap();
    let mut out = Cursor::new(Vec::new());
    assert!(matches!(
        oracle_general::export(reader, &mut out, ExportOptions::default()),
        Err(TraceError::Truncated { .. })
    ));
}
