//! Property: random appends, commits, checkpoints, clean reopens and
//! process crashes; every reopen recovers exactly the complete groups at or
//! after the last checkpoint that had reached the OS (all of them after a
//! clean close), with their LSNs.

mod common;

use std::path::Path;

use common::counting::CountingBackend;
use flushwise_core::{Lsn, PageId};
use flushwise_engine::redo::{lsn_after, Record, RedoConfig, RedoError, RedoLog};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// A group with these payload sizes.
    Append(Vec<usize>),
    /// `wait_durable(current_lsn)`.
    Commit,
    /// Checkpoint at a group boundary chosen among those allowed.
    Checkpoint(prop::sample::Index),
    /// Reopen; `crash` drops without writing the log buffer out.
    Reopen { crash: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec(0usize..300, 1..4).prop_map(Op::Append),
        2 => Just(Op::Commit),
        2 => any::<prop::sample::Index>().prop_map(Op::Checkpoint),
        1 => any::<bool>().prop_map(|crash| Op::Reopen { crash }),
    ]
}

fn cfg() -> RedoConfig {
    RedoConfig {
        log_buffer_bytes: 8 << 10,
        flush_interval: None,
    }
}

fn open(path: &Path) -> (RedoLog, Vec<(Lsn, Record)>) {
    let (log, scan) = RedoLog::open(path, CountingBackend::open_file(path).unwrap(), cfg()).unwrap();
    (log, scan.records)
}

/// One appended group in the model.
struct Group {
    records: Vec<(Lsn, Record)>,
    end: Lsn,
}

fn run(capacity_blocks: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redo.log");
    let cap = capacity_blocks * 512;
    let mut log = RedoLog::create(&path, CountingBackend::open_file(&path).unwrap(), cap, cfg()).unwrap();
    let mut groups: Vec<Group> = Vec::new();
    let mut next_txn = 1u64;
    for op in ops {
        match op {
            Op::Append(sizes) => {
                let recs: Vec<Record> = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        Record::page_write(next_txn, PageId::new(0, i as u32), n as u32, &vec![next_txn as u8; n])
                    })
                    .collect();
                next_txn += 1;
                let start = log.current_lsn();
                let end = match log.append(&recs) {
                    Ok(end) => end,
                    Err(RedoError::LogFull { needed, free, .. }) => {
                        prop_assert!(needed > free);
                        prop_assert_eq!(free, log.free_bytes());
                        // The buffer pool would flush and checkpoint here.
                        log.write_checkpoint(log.current_lsn()).unwrap();
                        log.append(&recs).unwrap()
                    }
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                };
                let mut at = 0;
                let records = recs
                    .into_iter()
                    .map(|r| {
                        let lsn = lsn_after(start, at).unwrap();
                        at += r.encoded_len() as u64;
                        (lsn, r)
                    })
                    .collect();
                prop_assert_eq!(lsn_after(start, at), Some(end));
                groups.push(Group { records, end });
            }
            Op::Commit => log.wait_durable(log.current_lsn()).unwrap(),
            Op::Checkpoint(idx) => {
                let ckpt = log.checkpoint_lsn();
                let mut allowed: Vec<Lsn> = groups.iter().map(|g| g.end).filter(|e| *e >= ckpt).collect();
                allowed.push(ckpt);
                log.write_checkpoint(allowed[idx.index(allowed.len())]).unwrap();
            }
            Op::Reopen { crash } => {
                let checkpoint = log.checkpoint_lsn();
                let survived = if crash {
                    let written = log.written_lsn();
                    drop(log);
                    written
                } else {
                    let current = log.current_lsn();
                    log.close().unwrap();
                    current
                };
                groups.retain(|g| g.end <= survived);
                let (reopened, recovered) = open(&path);
                log = reopened;
                let expected: Vec<(Lsn, Record)> = groups
                    .iter()
                    .flat_map(|g| g.records.iter().cloned())
                    .filter(|(lsn, _)| *lsn >= checkpoint)
                    .collect();
                prop_assert_eq!(recovered, expected);
                prop_assert_eq!(log.checkpoint_lsn(), checkpoint);
                let end = groups.last().map_or(checkpoint, |g| g.end.max(checkpoint));
                prop_assert_eq!(log.current_lsn(), end);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn random_appends_checkpoints_and_reopens_recover_exactly_the_records_after_the_checkpoint(
        capacity_blocks in 8u64..40,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        run(capacity_blocks, ops)?;
    }
}
