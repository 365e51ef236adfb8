//! Recovery scenarios for the redo log: wrap-around, the no-overwrite rule,
//! torn tails, mid-log corruption, truncated files, checkpoint slots.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::counting::CountingBackend;
use flushwise_core::{Lsn, PageId};
use flushwise_engine::redo::log_file::{lsn_offset, BLOCK_SIZE, CHECKPOINT_OFFSETS, DATA_OFFSET};
use flushwise_engine::redo::{lsn_after, reader, Record, RecoveryScan, RedoConfig, RedoError, RedoLog};

fn cfg() -> RedoConfig {
    RedoConfig {
        log_buffer_bytes: 16 << 10,
        flush_interval: None,
    }
}

fn create(cap: u64) -> (tempfile::TempDir, PathBuf, RedoLog) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redo.log");
    let backend = CountingBackend::open_file(&path).unwrap();
    let log = RedoLog::create(&path, backend, cap, cfg()).unwrap();
    (dir, path, log)
}

fn reopen(path: &Path) -> Result<(RedoLog, RecoveryScan), RedoError> {
    RedoLog::open(path, CountingBackend::open_file(path).unwrap(), cfg())
}

fn scan_only(path: &Path) -> Result<RecoveryScan, RedoError> {
    let backend = CountingBackend::open_file(path).unwrap();
    reader::scan(path, &*backend)
}

/// A group of `n` page writes for transaction `txn`, payload sizes varying.
fn group(txn: u64, n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let len = (txn as usize * 37 + i * 11) % 150;
            Record::page_write(
                txn,
                PageId::new(1, (txn * 10 + i as u64) as u32),
                i as u32 * 8,
                &vec![txn as u8; len],
            )
        })
        .collect()
}

/// Appends and returns `(start lsn, record)` of each record of the group.
fn append(log: &RedoLog, recs: Vec<Record>) -> Result<Vec<(Lsn, Record)>, RedoError> {
    let start = log.current_lsn();
    let end = log.append(&recs)?;
    let mut at = 0u64;
    let out: Vec<_> = recs
        .into_iter()
        .map(|r| {
            let lsn = lsn_after(start, at).unwrap();
            at += r.encoded_len() as u64;
            (lsn, r)
        })
        .collect();
    assert_eq!(lsn_after(start, at), Some(end));
    Ok(out)
}

fn corrupt_byte(path: &Path, offset: u64) {
    let f = OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    f.write_all_at(&[b[0] ^ 0x5a], offset).unwrap();
}

fn block_start(lsn: Lsn) -> Lsn {
    Lsn(lsn.0 / BLOCK_SIZE as u64 * BLOCK_SIZE as u64)
}

#[test]
fn log_wraps_around_and_recovers_records_after_checkpoint() {
    let cap = 8 << 10;
    let (_dir, path, log) = create(cap);
    let mut since_checkpoint = Vec::new();
    for txn in 1..=400u64 {
        since_checkpoint.extend(append(&log, group(txn, 1 + txn as usize % 3)).unwrap());
        log.wait_durable(log.current_lsn()).unwrap();
        if txn % 7 == 0 {
            // The buffer pool has flushed everything: checkpoint at the end.
            log.write_checkpoint(log.current_lsn()).unwrap();
            since_checkpoint.clear();
        }
    }
    assert!(
        log.current_lsn().0 > 5 * cap,
        "the log went round the ring several times"
    );
    let checkpoint = log.checkpoint_lsn();
    let end = log.current_lsn();
    drop(log);

    let (log, scan) = reopen(&path).unwrap();
    assert_eq!(scan.report.checkpoint_lsn, checkpoint);
    assert_eq!(scan.report.end_lsn, end);
    assert!(!scan.report.torn_tail);
    assert_eq!(scan.records, since_checkpoint);
    assert_eq!(log.current_lsn(), end, "appends resume at the end found");

    // And the resumed log keeps working across another reopen.
    let more = append(&log, group(999, 2)).unwrap();
    log.close().unwrap();
    let (_log, scan) = reopen(&path).unwrap();
    since_checkpoint.extend(more);
    assert_eq!(scan.records, since_checkpoint);
}

#[test]
fn append_refuses_to_overwrite_unchekpointed_records() {
    let cap = 4 << 10;
    let (_dir, path, log) = create(cap);
    let mut appended = Vec::new();
    let mut txn = 0;
    let err = loop {
        txn += 1;
        match append(&log, group(txn, 2)) {
            Ok(recs) => appended.extend(recs),
            Err(e) => break e,
        }
        assert!(txn < 1000, "the log must fill up");
    };
    match &err {
        RedoError::LogFull {
            needed,
            free,
            checkpoint_lsn,
            ..
        } => {
            assert!(needed > free);
            assert_eq!(*free, log.free_bytes());
            assert_eq!(*checkpoint_lsn, log.checkpoint_lsn());
        }
        other => panic!("expected LogFull, got {other}"),
    }
    assert!(err.to_string().contains("redo.log"), "{err}");
    log.close().unwrap();

    // Nothing the checkpoint needs was overwritten.
    let (log, scan) = reopen(&path).unwrap();
    assert_eq!(scan.records, appended);

    // After a checkpoint the space is reusable.
    log.write_checkpoint(log.current_lsn()).unwrap();
    assert!(log.free_bytes() >= cap - BLOCK_SIZE as u64);
    append(&log, group(txn, 2)).unwrap();
}

#[test]
fn torn_tail_block_ends_log_cleanly() {
    let (_dir, path, log) = create(64 << 10);
    let mut durable = Vec::new();
    for txn in 1..=20 {
        durable.extend(append(&log, group(txn, 2)).unwrap());
        log.wait_durable(log.current_lsn()).unwrap();
    }
    let durable_end = log.current_lsn();
    // A last group spanning into fresh blocks; the crash tears its final
    // block (half the sector's bytes never reached the disk).
    let big: Vec<Record> = (0..3)
        .map(|i| Record::page_write(77, PageId::new(2, i), 0, &[7u8; 300]))
        .collect();
    let last_start = log.current_lsn();
    log.append(&big).unwrap();
    log.wait_written(log.current_lsn()).unwrap();
    let torn_block = block_start(log.current_lsn());
    assert!(torn_block > durable_end, "the torn block holds only the last group");
    let off = lsn_offset(torn_block, 64 << 10);
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.write_all_at(&[0xAB; BLOCK_SIZE / 2], off + BLOCK_SIZE as u64 / 2)
        .unwrap();
    drop(log);

    let scan = scan_only(&path).unwrap();
    assert!(scan.report.torn_tail);
    assert_eq!(
        scan.report.end_lsn, durable_end,
        "the incomplete group is dropped whole"
    );
    assert!(scan.report.discarded_bytes > 0);
    assert_eq!(scan.records, durable);
    assert!(scan.records.iter().all(|(lsn, _)| *lsn < last_start));

    // The writer resumes at the crash point and the log stays readable.
    let (log, _) = reopen(&path).unwrap();
    assert_eq!(log.current_lsn(), durable_end);
    durable.extend(append(&log, group(100, 3)).unwrap());
    log.close().unwrap();
    let (_log, scan) = reopen(&path).unwrap();
    assert_eq!(scan.records, durable);
    assert!(!scan.report.torn_tail);
}

#[test]
fn corruption_in_middle_is_reported_with_lsn() {
    let cap = 64 << 10;
    let (_dir, path, log) = create(cap);
    let mut ends = Vec::new();
    for txn in 1..=60 {
        append(&log, group(txn, 2)).unwrap();
        log.wait_durable(log.current_lsn()).unwrap();
        ends.push(log.current_lsn());
    }
    drop(log);
    // Damage a block in the middle of the durable log.
    let bad_block = block_start(ends[20]);
    let bad_offset = lsn_offset(bad_block, cap);
    corrupt_byte(&path, bad_offset + 100);

    let err = reopen(&path).unwrap_err();
    match &err {
        RedoError::Corrupt { lsn, offset, .. } => {
            assert_eq!(*lsn, bad_block);
            assert_eq!(*offset, bad_offset);
        }
        other => panic!("expected Corrupt, got {other}"),
    }
    let msg = err.to_string();
    assert!(msg.contains(&format!("lsn {}", bad_block.0)), "{msg}");
    assert!(msg.contains("redo.log"), "{msg}");
}

#[test]
fn truncated_log_file_is_reported() {
    let cap = 16 << 10;
    let (_dir, path, log) = create(cap);
    append(&log, group(1, 3)).unwrap();
    log.close().unwrap();
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(DATA_OFFSET + cap / 2).unwrap();

    match reopen(&path).unwrap_err() {
        RedoError::Truncated {
            path: p,
            expected_len,
            actual_len,
        } => {
            assert_eq!(p, path);
            assert_eq!(expected_len, DATA_OFFSET + cap);
            assert_eq!(actual_len, DATA_OFFSET + cap / 2);
        }
        other => panic!("expected Truncated, got {other}"),
    }
    f.set_len(100).unwrap();
    assert!(matches!(reopen(&path), Err(RedoError::Truncated { .. })));
}

fn checkpoint_no_in_slot(path: &Path, slot: usize) -> u64 {
    let f = std::fs::File::open(path).unwrap();
    let mut b = [0u8; 16];
    f.read_exact_at(&mut b, CHECKPOINT_OFFSETS[slot]).unwrap();
    u64::from_le_bytes(b[8..16].try_into().unwrap())
}

#[test]
fn checkpoint_blocks_alternate_and_newest_valid_wins() {
    let (_dir, path, log) = create(32 << 10);
    // create wrote checkpoint 0 (slot 0); opening wrote checkpoint 1 (slot 1).
    assert_eq!(log.checkpoint_no(), 1);
    let mut all = Vec::new();
    all.extend(append(&log, group(1, 2)).unwrap());
    let a = log.current_lsn();
    all.extend(append(&log, group(2, 2)).unwrap());
    log.write_checkpoint(a).unwrap(); // no 2, slot 0
    assert_eq!(checkpoint_no_in_slot(&path, 0), 2);
    all.extend(append(&log, group(3, 2)).unwrap());
    let b = log.current_lsn();
    all.extend(append(&log, group(4, 2)).unwrap());
    log.write_checkpoint(b).unwrap(); // no 3, slot 1
    assert_eq!(checkpoint_no_in_slot(&path, 1), 3);
    assert_eq!(checkpoint_no_in_slot(&path, 0), 2);
    log.close().unwrap();

    let scan = scan_only(&path).unwrap();
    assert_eq!((scan.report.checkpoint_no, scan.report.checkpoint_lsn), (3, b));
    let after = |lsn: Lsn| -> Vec<_> { all.iter().filter(|(l, _)| *l >= lsn).cloned().collect() };
    assert_eq!(scan.records, after(b));

    // A torn newest checkpoint: the older one wins, recovery starts earlier.
    corrupt_byte(&path, CHECKPOINT_OFFSETS[1] + 20);
    let scan = scan_only(&path).unwrap();
    assert_eq!((scan.report.checkpoint_no, scan.report.checkpoint_lsn), (2, a));
    assert_eq!(scan.records, after(a));

    // Both gone: an error naming the file.
    corrupt_byte(&path, CHECKPOINT_OFFSETS[0] + 20);
    let err = reopen(&path).unwrap_err();
    assert!(matches!(err, RedoError::NoValidCheckpoint { .. }), "{err}");
    assert!(err.to_string().contains("redo.log"), "{err}");
}

#[test]
fn reopening_bumps_the_incarnation_and_keeps_records() {
    let (_dir, path, log) = create(16 << 10);
    let first = log.incarnation();
    let recs = append(&log, group(5, 3)).unwrap();
    log.close().unwrap();
    let (log, scan) = reopen(&path).unwrap();
    assert_eq!(log.incarnation(), first + 1);
    assert_eq!(scan.records, recs);
    assert_eq!(scan.report.records, 3);
    assert_eq!(scan.report.groups, 1);
    let _ = Arc::new(log);
}

#[test]
fn blocks_left_by_a_crashed_incarnation_are_not_replayed() {
    let cap = 64 << 10;
    let (_dir, path, log) = create(cap);
    let mut kept = append(&log, group(1, 1)).unwrap();
    log.wait_durable(log.current_lsn()).unwrap();
    let tail_block = block_start(log.current_lsn());
    let tail_offset = lsn_offset(tail_block, cap);
    let f = OpenOptions::new().read(true).write(true).open(&path).unwrap();
    let mut before = vec![0u8; BLOCK_SIZE];
    f.read_exact_at(&mut before, tail_offset).unwrap();

    // A big group is written over the tail block and the next ones, but the
    // power fails: the tail block's rewrite is lost, the later blocks land.
    let big: Vec<Record> = (0..4)
        .map(|i| Record::page_write(2, PageId::new(3, i), 0, &[2u8; 400]))
        .collect();
    log.append(&big).unwrap();
    log.wait_written(log.current_lsn()).unwrap();
    drop(log);
    f.write_all_at(&before, tail_offset).unwrap();

    let (log, scan) = reopen(&path).unwrap();
    assert_eq!(scan.records, kept, "the unsynced group is gone, cleanly");
    // The new incarnation fills the tail block exactly, so the next block
    // on disk is the dead incarnation's, with the expected block number.
    let used = (log.current_lsn().0 % BLOCK_SIZE as u64) as usize - 24;
    let fill = 484 - used - 28 - 4;
    kept.extend(
        append(
            &log,
            vec![Record::page_write(3, PageId::new(4, 0), 0, &vec![3u8; fill])],
        )
        .unwrap(),
    );
    assert_eq!(log.current_lsn().0 % BLOCK_SIZE as u64, 24, "tail block exactly full");
    log.wait_durable(log.current_lsn()).unwrap();
    drop(log);

    let scan = scan_only(&path).unwrap();
    assert_eq!(scan.records, kept, "no record of the dead incarnation is replayed");
}
