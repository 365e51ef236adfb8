//! The Wisconsin relation and 003's UPDATE load on the engine, end to end:
//! the load's tuples, an open-loop (Poisson) and a closed-loop run, every
//! committed update visible afterwards, response times from arrival.
//!
//! 20,000 tuples on buffered I/O in a temporary directory; each test loads
//! its own (about a second).

use std::collections::HashMap;
use std::ops::Bound;
use std::time::Duration;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbOptions};
use flushwise_workloads::wisconsin::driver::{self, Arrivals, RunConfig};
use flushwise_workloads::wisconsin::load::{self, LoadMarker};
use flushwise_workloads::wisconsin::schema::{Tuple, RELATION};
use flushwise_workloads::wisconsin::{series, WisconsinError};

const N: u64 = 20_000;
const SEED: u64 = 3;

fn options() -> DbOptions {
    DbOptions {
        buffer_pool_bytes: 8 << 20,
        redo_bytes: 32 << 20,
        ..DbOptions::default()
    }
}

fn loaded() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = Database::create(dir.path(), options()).expect("create");
    let report = load::prepare(&db, LoadMarker { n: N, seed: SEED }, &|_| {}).expect("load");
    assert_eq!(report.tuples_loaded, N);
    (dir, db)
}

fn all_tuples(db: &Database) -> Vec<Tuple> {
    let id = db.index(RELATION).expect("the relation");
    let mut out = Vec::new();
    db.scan_unlocked(id, Bound::Unbounded, Bound::Unbounded, Direction::Forward, |k, v| {
        out.push(Tuple::decode(&k, &v).expect("a tuple"));
        true
    })
    .expect("scan");
    out
}

/// Every key's final `unique3` is one some committed update wrote (the
/// only one, for a key updated once), or the loaded `unique1` for a key
/// never updated.
fn check_visible(db: &Database, requests: &[driver::Request]) {
    let mut written: HashMap<u32, Vec<u32>> = HashMap::new();
    for r in requests {
        written.entry(r.unique1).or_default().push(r.unique3);
    }
    let tuples = all_tuples(db);
    assert_eq!(tuples.len() as u64, N);
    for t in &tuples {
        match written.get(&t.unique1) {
            None => assert_eq!(t.unique3, t.unique1, "untouched tuple {}", t.unique1),
            Some(values) => assert!(
                values.contains(&t.unique3),
                "tuple {}: unique3 {} is none of the committed {values:?}",
                t.unique1,
                t.unique3
            ),
        }
    }
}

#[test]
fn load_has_every_unique1_and_unique2_once_and_refuses_a_second_load() {
    let (_dir, db) = loaded();
    let tuples = all_tuples(&db);
    let mut u2: Vec<u32> = tuples.iter().map(|t| t.unique2).collect();
    u2.sort_unstable();
    assert_eq!(u2, (0..N as u32).collect::<Vec<_>>());
    assert!(tuples.iter().enumerate().all(|(i, t)| t.unique1 == i as u32));
    assert!(tuples.iter().all(|t| *t == Tuple::derive(t.unique1, t.unique2)));
    let again = load::prepare(&db, LoadMarker { n: N, seed: SEED }, &|_| {});
    assert!(matches!(again, Err(WisconsinError::AlreadyLoaded { .. })), "{again:?}");
}

#[test]
fn open_loop_commits_every_request_and_measures_from_arrival() {
    let (_dir, db) = loaded();
    let mut config = RunConfig::new(
        Arrivals::Poisson {
            rate_per_s: 400.0,
            workers: 16,
        },
        Duration::from_millis(1500),
        SEED,
    );
    config.sample_interval = Duration::from_millis(250);
    let report = driver::run(&db, &config).expect("run");
    // The schedule is the seed's: the same arrivals as the pure schedule.
    assert_eq!(report.run_number, 0);
    let expected: Vec<(u64, u32, u32)> = driver::poisson_schedule(400.0, N, SEED, 0)
        .take_while(|a| a.0 < 1_500_000)
        .collect();
    assert_eq!(report.offered, expected.len() as u64);
    assert_eq!(report.requests.len() as u64 + report.unserved, report.offered);
    assert_eq!(report.unserved, 0);
    assert!(!report.overloaded);
    let mut by_seq = report.requests.clone();
    by_seq.sort_by_key(|r| r.seq);
    for (r, e) in by_seq.iter().zip(&expected) {
        assert_eq!((r.arrival_us, r.unique1, r.unique3), *e);
        assert!(r.arrival_us <= r.start_us + 1_000, "{r:?}");
        assert!(r.start_us <= r.end_us);
        assert!(r.response_us() >= r.end_us - r.start_us);
    }
    check_visible(&db, &report.requests);
    assert!(report.samples.len() >= 4, "{} samples", report.samples.len());
    let rows = series::intervals(&report.requests, &report.samples, 250_000);
    assert_eq!(
        rows.iter().map(|r| r.completions).sum::<u64>(),
        report.requests.len() as u64
    );
    assert_eq!(
        rows.iter().map(|r| r.arrivals).sum::<u64>(),
        report.requests.len() as u64
    );
    db.close().expect("close");
}

#[test]
fn closed_loop_keeps_n_jobs_busy_and_commits_every_request() {
    let (_dir, db) = loaded();
    let config = RunConfig::new(Arrivals::Closed { jobs: 4 }, Duration::from_millis(800), SEED);
    let report = driver::run(&db, &config).expect("run");
    assert_eq!(report.requests.len() as u64, report.offered);
    assert!(report.offered > 20, "{} requests", report.offered);
    assert!(report
        .requests
        .iter()
        .all(|r| r.arrival_us == r.start_us && r.end_us >= r.start_us));
    check_visible(&db, &report.requests);
    // With a warm-up, its requests run but only later ones are recorded.
    let mut config = RunConfig::new(Arrivals::Closed { jobs: 4 }, Duration::from_millis(400), SEED + 1);
    config.warmup = Duration::from_millis(200);
    let second = driver::run(&db, &config).expect("run with a warm-up");
    // A second run on the database draws other keys and values (the same
    // values again would change nothing: no page dirtied).
    assert_eq!((report.run_number, second.run_number), (0, 1));
    let report = second;
    assert_eq!(report.requests.len() as u64, report.offered);
    assert!(report.requests.iter().all(|r| r.arrival_us >= 200_000));
    assert!(report.offered > 10, "{} requests", report.offered);
    db.close().expect("close");
}

#[test]
fn bad_rate_is_an_error_naming_the_flag() {
    let (_dir, db) = loaded();
    let config = RunConfig::new(
        Arrivals::Poisson {
            rate_per_s: 0.0,
            workers: 4,
        },
        Duration::from_secs(1),
        1,
    );
    let e = driver::run(&db, &config).expect_err("rate 0");
    assert!(e.to_string().contains("--rate"), "{e}");
}

/// A pool far smaller than the relation: every update's page is evicted
/// (written first) long before the run ends; after a clean close and a
/// reopen every committed update is still there, and the pool counted a
/// write for about every page it evicted dirty.
#[test]
fn updates_survive_eviction_and_every_dirty_eviction_is_a_counted_write() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let small = || DbOptions {
        buffer_pool_bytes: 2 << 20,
        ..options()
    };
    let db = Database::create(dir.path(), small()).expect("create");
    load::prepare(&db, LoadMarker { n: N, seed: SEED }, &|_| {}).expect("load");
    let before = db.shell().metrics().counters;
    let config = RunConfig::new(Arrivals::Closed { jobs: 4 }, Duration::from_millis(1500), SEED);
    let report = driver::run(&db, &config).expect("run");
    let c = db.shell().metrics().counters.since(&before);
    let dirty_now = u64::from(db.shell().metrics().Innodb_buffer_pool_pages_dirty);
    let written = c.async_writes() + c.sync_writes();
    eprintln!(
        "{} updates, {} reads, {} writes ({:?}), {} dirty now",
        report.requests.len(),
        c.reads,
        written,
        (
            c.lru_batch_flush_pages,
            c.flush_list_pages,
            c.cleaner_clean_pages,
            c.sync_replacement_writes
        ),
        dirty_now
    );
    db.close().expect("close");
    let db = Database::open(dir.path(), small()).expect("reopen");
    check_visible(&db, &report.requests);
    db.close().expect("close");
}
