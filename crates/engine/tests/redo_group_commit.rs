//! Group commit and the `flush_log_at_trx_commit` modes.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::counting::CountingBackend;
use flushwise_core::PageId;
use flushwise_engine::redo::{FlushMode, Record, RecoveryScan, RedoConfig, RedoLog};

fn cfg(flush_interval: Option<Duration>) -> RedoConfig {
    RedoConfig {
        log_buffer_bytes: 1 << 20,
        flush_interval,
    }
}

fn create(
    cap: u64,
    flush_interval: Option<Duration>,
) -> (tempfile::TempDir, PathBuf, Arc<CountingBackend>, Arc<RedoLog>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redo.log");
    let backend = CountingBackend::open_file(&path).unwrap();
    let log = RedoLog::create(&path, backend.clone(), cap, cfg(flush_interval)).unwrap();
    (dir, path, backend, Arc::new(log))
}

fn reopen(path: &Path) -> (RedoLog, RecoveryScan) {
    RedoLog::open(path, CountingBackend::open_file(path).unwrap(), cfg(None)).unwrap()
}

fn txn(id: u64) -> Vec<Record> {
    vec![
        Record::txn_begin(id),
        Record::page_write(id, PageId::new(1, id as u32), 64, &[id as u8; 80]),
        Record::txn_commit(id),
    ]
}

fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn group_commit_fsyncs_once_for_many_waiters() {
    let (_dir, _path, backend, log) = create(1 << 20, None);
    let syncs_before = backend.syncs();

    // The first committer becomes the leader and is held inside its fsync.
    backend.close_gate();
    let leader = {
        let log = log.clone();
        std::thread::spawn(move || {
            let lsn = log.append(&txn(1)).unwrap();
            log.wait_durable(lsn).unwrap();
        })
    };
    backend.wait_held(1);

    // Seven more commit while that fsync is in flight.
    let followers = 7;
    let appended = Arc::new(Barrier::new(followers + 1));
    let handles: Vec<_> = (0..followers as u64)
        .map(|i| {
            let (log, appended) = (log.clone(), appended.clone());
            std::thread::spawn(move || {
                let lsn = log.append(&txn(2 + i)).unwrap();
                appended.wait();
                log.wait_durable(lsn).unwrap();
                lsn
            })
        })
        .collect();
    appended.wait();
    std::thread::sleep(Duration::from_millis(50)); // let them queue up
    backend.open_gate();
    leader.join().unwrap();
    let lsns: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    assert_eq!(
        backend.syncs() - syncs_before,
        2,
        "one fsync for the leader, one shared by all seven followers"
    );
    assert!(lsns.iter().all(|l| *l <= log.durable_lsn()));
    assert_eq!(log.stats().log_syncs, 2);
}

#[test]
fn eight_committers_in_mode_1_share_fsyncs() {
    let (_dir, path, backend, log) = create(16 << 20, None);
    let (threads, commits_each) = (8u64, 200u64);
    let syncs_before = backend.syncs();
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..commits_each {
                    let lsn = log.append(&txn(t * 1_000_000 + i)).unwrap();
                    log.commit_durability(lsn, FlushMode::SyncAtCommit).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let elapsed = start.elapsed();
    let commits = threads * commits_each;
    let syncs = backend.syncs() - syncs_before;
    eprintln!(
        "group commit: {threads} threads x {commits_each} commits in mode 1 on {}: {syncs} fsyncs for {commits} commits = {:.3} fsyncs/commit, {:.0} commits/s",
        path.display(),
        syncs as f64 / commits as f64,
        commits as f64 / elapsed.as_secs_f64()
    );
    assert!(syncs <= commits);
    assert_eq!(log.durable_lsn(), log.current_lsn());
    drop(log);
    let (_log, scan) = reopen(&path);
    assert_eq!(scan.report.groups, commits);
}

#[test]
fn flush_mode_2_fsyncs_in_background() {
    let interval = Duration::from_millis(200);
    let (_dir, _path, backend, log) = create(1 << 20, Some(interval));
    let syncs_before = backend.syncs();
    let lsn = log.append(&txn(1)).unwrap();
    log.commit_durability(lsn, FlushMode::WriteAtCommit).unwrap();
    assert!(log.written_lsn() >= lsn, "mode 2 writes at commit");
    assert!(
        log.durable_lsn() < lsn,
        "mode 2 does not fsync at commit (flusher period {interval:?})"
    );
    eventually("the background fsync", || log.durable_lsn() >= lsn);
    assert!(backend.syncs() > syncs_before);
    assert!(log.stats().background_syncs >= 1);

    // Mode 0 does not even write at commit; the flusher writes and fsyncs.
    let lsn0 = log.append(&txn(2)).unwrap();
    log.commit_durability(lsn0, FlushMode::EverySecond).unwrap();
    assert!(log.written_lsn() < lsn0, "mode 0 leaves the commit buffered");
    eventually("the background write + fsync", || log.durable_lsn() >= lsn0);

    // A stopped flusher fsyncs nothing more.
    log.stop_background_flusher();
    let lsn2 = log.append(&txn(3)).unwrap();
    log.commit_durability(lsn2, FlushMode::WriteAtCommit).unwrap();
    std::thread::sleep(interval * 2);
    assert!(log.durable_lsn() < lsn2);
}

#[test]
fn mode_2_commits_survive_a_process_crash_but_mode_0_commits_may_not() {
    let (_dir, path, _backend, log) = create(1 << 20, None);
    let lsn2 = log.append(&txn(1)).unwrap();
    log.commit_durability(lsn2, FlushMode::WriteAtCommit).unwrap();
    let lsn0 = log.append(&txn(2)).unwrap();
    log.commit_durability(lsn0, FlushMode::EverySecond).unwrap();
    // Process crash: the OS page cache survives, the log buffer does not.
    drop(log);
    let (_log, scan) = reopen(&path);
    assert_eq!(scan.report.end_lsn, lsn2);
    let txns: Vec<u64> = scan.records.iter().map(|(_, r)| r.txn_id).collect();
    assert_eq!(txns, vec![1, 1, 1]);
}
