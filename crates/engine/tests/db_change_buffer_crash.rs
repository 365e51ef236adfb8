//! Crash test of the change buffer (issue #16): a child process commits
//! rows into a primary and two non-unique secondary indexes with the
//! change buffer on and a pool far smaller than the indexes, and is killed
//! with SIGKILL at seeded moments; every even transaction also deletes an
//! older row, its secondary entries through `delete_secondary_entry` (which
//! the change buffer may buffer). After every reopen: every acknowledged
//! row is present unless an acknowledged transaction deleted it, no
//! rolled-back or deleted row is, and each secondary index holds
//! exactly one entry per row under the row's key (no entry lost,
//! duplicated or left without its row), the change buffer's tree matches
//! its claims (`Database::check`), and buffered entries were found in the
//! recovered change buffer at least once (so recovery really had some).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flushwise_engine::btree::secondary::split_composite_key;
use flushwise_engine::btree::Direction;
use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions, Database, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;

const KILL_AFTER_MS: [u64; 5] = [150, 420, 90, 700, 260];
const PRELOAD_ROWS: u64 = 3_000;
/// Must match `src/bin/cb_crash_writer.rs`: an even transaction `id`
/// deletes row `id - DELETE_LAG`.
const DELETE_LAG: u64 = 2_000;

/// Must match `src/bin/cb_crash_writer.rs`.
fn options(cb_dir: Option<&std::path::Path>) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 512 << 10,
        redo_bytes: 8 << 20,
        flush_log_at_trx_commit: FlushMode::SyncAtCommit,
        change_buffer: ChangeBufferOptions {
            mode: if cb_dir.is_some() {
                ChangeBufferMode::SeparateDevice
            } else {
                ChangeBufferMode::On
            },
            dir: cb_dir.map(Into::into),
            ..ChangeBufferOptions::default()
        },
        ..DbOptions::default()
    }
}

fn secondary_keys(id: u64) -> [[u8; 4]; 2] {
    let h = |salt: u64| {
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        ((x >> 32) as u32).to_be_bytes()
    };
    [h(1), h(2)]
}

fn run_writer(
    dir: &std::path::Path,
    cb_dir: Option<&std::path::Path>,
    create: bool,
    first: u64,
    kill_after: Duration,
) -> Vec<String> {
    let mut args = vec![
        dir.to_str().unwrap().to_string(),
        if create { "1" } else { "0" }.to_string(),
        first.to_string(),
    ];
    args.extend(cb_dir.map(|d| d.to_str().unwrap().to_string()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cb_crash_writer"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn cb_crash_writer");
    let stdout = child.stdout.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let lines = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !lines.lock().unwrap().iter().any(|l| l.starts_with("C ")) {
        assert!(Instant::now() < deadline, "writer acknowledged nothing");
        assert!(
            child.try_wait().unwrap().is_none(),
            "writer exited: {:?}",
            lines.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(kill_after);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap();
    let lines = lines.lock().unwrap().clone();
    lines
}

#[test]
fn secondary_indexes_match_their_rows_after_sigkill_with_the_change_buffer_on() {
    let dir = tempfile::tempdir().unwrap();
    kill_and_check(dir.path(), None);
}

/// The same with the change buffer in its own file on a RAM disk
/// (`/dev/shm` where there is one, as `004`'s ramdisk; a SIGKILL keeps
/// its contents, a power cut would not).
#[test]
fn secondary_indexes_match_their_rows_after_sigkill_with_the_change_buffer_on_its_own_device() {
    let dir = tempfile::tempdir().unwrap();
    let shm = std::path::Path::new("/dev/shm");
    let cb_dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    kill_and_check(dir.path(), Some(cb_dir.path()));
    let files: Vec<_> = std::fs::read_dir(cb_dir.path()).unwrap().collect();
    assert_eq!(
        files.len(),
        1,
        "the change buffer's file is in its own directory: {files:?}"
    );
}

fn kill_and_check(dir: &std::path::Path, cb_dir: Option<&std::path::Path>) {
    let mut acknowledged: BTreeSet<u64> = (0..PRELOAD_ROWS).collect();
    let mut rolled_back: BTreeSet<u64> = BTreeSet::new();
    let mut deleted: BTreeSet<u64> = BTreeSet::new();
    // Rows the transaction in flight at some kill was deleting: present or
    // not, depending on whether its commit reached the log.
    let mut maybe_deleted: BTreeSet<u64> = BTreeSet::new();
    let mut recovered_pending = 0u64;
    let mut deletes_buffered = 0u64;
    let mut first = PRELOAD_ROWS;
    for (round, kill_ms) in KILL_AFTER_MS.into_iter().enumerate() {
        let lines = run_writer(dir, cb_dir, round == 0, first, Duration::from_millis(kill_ms));
        let ids = |tag: &str| -> BTreeSet<u64> {
            lines
                .iter()
                .filter_map(|l| l.strip_prefix(tag))
                .map(|n| n.trim().parse().unwrap())
                .collect()
        };
        acknowledged.extend(ids("C "));
        rolled_back.extend(ids("R "));
        deleted.extend(ids("D "));
        // The transaction in flight at the kill may have committed, delete
        // included.
        let last = ids("C ").union(&ids("R ")).max().copied().unwrap_or(first - 1);
        let in_flight = last + 1;
        maybe_deleted.extend(
            (in_flight % 2 == 0)
                .then(|| in_flight.checked_sub(DELETE_LAG))
                .flatten(),
        );
        deletes_buffered += lines
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix("S "))
            .and_then(|s| s.split("buffered_deletes: ").nth(1))
            .and_then(|s| s.split(',').next())
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);

        let db = Database::open(dir, options(cb_dir)).unwrap();
        let at_open = db.change_buffer_stats();
        recovered_pending += at_open.pending_pages;
        let primary = db.index("rows").unwrap();
        let secondaries = [db.index("k1").unwrap(), db.index("k2").unwrap()];
        let mut txn = db.begin();
        let rows: BTreeSet<u64> = txn
            .scan_prefix(primary, b"", Direction::Forward, None)
            .unwrap()
            .into_iter()
            .map(|(k, _)| u64::from_be_bytes(k.try_into().unwrap()))
            .collect();
        for id in acknowledged.difference(&deleted) {
            if !maybe_deleted.contains(id) {
                assert!(rows.contains(id), "round {round}: acknowledged row {id} is missing");
            }
        }
        for id in &deleted {
            assert!(!rows.contains(id), "round {round}: deleted row {id} is visible");
        }
        for id in &rolled_back {
            assert!(!rows.contains(id), "round {round}: rolled-back row {id} is visible");
        }
        for (n, index) in secondaries.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for (k, _) in txn.scan_prefix(*index, b"", Direction::Forward, None).unwrap() {
                let (sec, pk) = split_composite_key(&k).unwrap();
                let id = u64::from_be_bytes(pk.try_into().unwrap());
                assert!(
                    rows.contains(&id),
                    "round {round}, index {n}: entry of row {id}, which is not there"
                );
                assert_eq!(
                    sec,
                    secondary_keys(id)[n],
                    "round {round}, index {n}: row {id} under a wrong key"
                );
                assert!(seen.insert(id), "round {round}, index {n}: row {id} has two entries");
            }
            let missing: Vec<_> = rows.difference(&seen).take(5).collect();
            assert!(
                missing.is_empty(),
                "round {round}, index {n}: rows without an entry: {missing:?}"
            );
        }
        txn.commit().unwrap();
        db.check().unwrap();
        eprintln!(
            "round {round}: killed {kill_ms} ms after the first commit; {} rows; change buffer at open: {at_open:?}; recovery: {}",
            rows.len(),
            db.recovery_report()
        );
        first = rows
            .iter()
            .max()
            .copied()
            .unwrap_or(0)
            .max(rolled_back.last().copied().unwrap_or(0))
            + 1;
        db.close().unwrap();
    }
    assert!(
        recovered_pending > 0,
        "no reopen found buffered entries: the test did not exercise the change buffer's recovery"
    );
    assert!(
        deletes_buffered > 0 && !deleted.is_empty(),
        "no delete was buffered ({deletes_buffered}) or committed ({}): the test did not exercise buffered deletes",
        deleted.len()
    );
}
