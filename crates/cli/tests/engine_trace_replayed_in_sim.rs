//! Scenarios of the page-reference trace recorder: a small multi-threaded
//! transaction workload on a real database is recorded, read back, checked
//! for balance and transaction framing, and replayed by the simulator. It
//! lives in the CLI crate, the lowest one that links both shells: the
//! simulator must not depend on the engine, nor the engine on the
//! simulator, even for tests.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;
use std::time::Duration;

use flushwise_engine::db::{Database, DbOptions, IndexId};
use flushwise_engine::page::PageSize;
use flushwise_engine::trace_recorder::{self, TraceRecorder};
use flushwise_sim::{SimConfig, Simulation, WorkloadSpec};
use flushwise_trace::{LatchMode, TraceEvent, TraceReader, TxnType};

const PAGE_BYTES: u32 = 4096;
const ROWS: u32 = 3_000;
const AGENTS: u32 = 4;
const TXNS_PER_AGENT: u32 = 40;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(PAGE_BYTES as usize).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 16 << 20,
        lock_wait_timeout: Duration::from_secs(2),
        ..DbOptions::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, tag: u32) -> Vec<u8> {
    format!("{tag:04}-{i:06}-{}", "v".repeat(100)).into_bytes()
}

/// One agent's transactions: reads and updates of pseudo-random rows; every
/// fifth transaction rolls back. Returns (transactions begun, committed).
fn agent_workload(db: &Database, idx: IndexId, recorder: &TraceRecorder, agent: u32) -> (u32, u32) {
    trace_recorder::set_agent(agent);
    let mut x = 0x9E37_79B9u32.wrapping_mul(agent + 1);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x % ROWS
    };
    let (mut begun, mut committed) = (0, 0);
    for t in 0..TXNS_PER_AGENT {
        let txn_type = if t % 2 == 0 {
            TxnType::Payment
        } else {
            TxnType::OrderStatus
        };
        recorder.txn_begin(agent, txn_type);
        begun += 1;
        let mut txn = db.begin();
        let mut ok = true;
        for _ in 0..4 {
            if txn.get(idx, &key(next())).is_err() {
                ok = false;
                break;
            }
        }
        if ok && txn_type == TxnType::Payment {
            let k = next();
            ok = txn.update(idx, &key(k), &value(k, t)).is_ok();
        }
        if ok && t % 5 != 4 {
            txn.commit().unwrap();
            recorder.txn_commit(agent, txn_type);
            committed += 1;
        } else {
            txn.rollback().unwrap();
            recorder.txn_rollback(agent, txn_type);
        }
    }
    (begun, committed)
}

#[test]
fn recorded_workload_balances_per_agent_and_replays_in_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), options()).unwrap();
    let idx = db.create_index("rows", true).unwrap();
    db.run(|txn| {
        for i in 0..ROWS {
            txn.insert(idx, &key(i), &value(i, 0))?;
        }
        Ok(())
    })
    .unwrap();

    let path = dir.path().join("engine.fwtrace");
    let recorder = Arc::new(TraceRecorder::create(&path, PAGE_BYTES, "engine test workload").unwrap());
    db.set_trace_recorder(Some(Arc::clone(&recorder)));
    let totals: Vec<(u32, u32)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..AGENTS)
            .map(|a| {
                let (db, recorder) = (&db, &recorder);
                s.spawn(move || agent_workload(db, idx, recorder, a))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    db.set_trace_recorder(None);
    let written = recorder.finish().unwrap();
    assert!(recorder.finish().is_err(), "a second finish is refused");
    db.close().unwrap();

    // Read back: per agent, every unfix matches an earlier fix of the same
    // page and latch, everything is unfixed, and page events sit inside
    // transactions that begin and end once.
    let reader = TraceReader::new(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert_eq!(reader.header().page_size_bytes, PAGE_BYTES);
    let mut held: HashMap<u32, Vec<(u64, LatchMode)>> = HashMap::new();
    let mut in_txn: HashMap<u32, bool> = HashMap::new();
    let mut begins: HashMap<u32, u32> = HashMap::new();
    let mut commits: HashMap<u32, u32> = HashMap::new();
    let (mut records, mut fixes, mut modified) = (0u64, 0u64, 0u64);
    for r in reader {
        let r = r.unwrap();
        records += 1;
        let open = in_txn.entry(r.agent).or_default();
        match r.event {
            TraceEvent::TxnBegin { .. } => {
                assert!(!*open, "agent {}: nested begin", r.agent);
                *open = true;
                *begins.entry(r.agent).or_default() += 1;
            }
            TraceEvent::TxnCommit { .. } | TraceEvent::TxnRollback { .. } => {
                assert!(*open, "agent {}: end without begin", r.agent);
                assert!(
                    held.get(&r.agent).map_or(0, Vec::len) == 0,
                    "agent {}: transaction ends holding pages",
                    r.agent
                );
                *open = false;
                if matches!(r.event, TraceEvent::TxnCommit { .. }) {
                    *commits.entry(r.agent).or_default() += 1;
                }
            }
            TraceEvent::Fix { page, latch } => {
                assert!(*open, "agent {}: fix outside a transaction", r.agent);
                fixes += 1;
                held.entry(r.agent).or_default().push((page.as_u64(), latch));
            }
            TraceEvent::Unfix {
                page,
                latch,
                modified: m,
                redo_bytes,
            } => {
                let h = held.entry(r.agent).or_default();
                let at = h
                    .iter()
                    .rposition(|&(p, l)| p == page.as_u64() && l == latch)
                    .unwrap_or_else(|| panic!("agent {}: unfix of {page} without its fix", r.agent));
                h.swap_remove(at);
                if m {
                    modified += 1;
                    assert_eq!(latch, LatchMode::Exclusive, "only exclusive guards modify");
                    assert!(redo_bytes > 0, "a committed change generated redo");
                }
            }
        }
    }
    assert_eq!(records, written);
    for a in 0..AGENTS {
        assert!(held[&a].is_empty(), "agent {a} left pages fixed");
        assert!(!in_txn[&a], "agent {a} left a transaction open");
        assert_eq!(begins[&a], totals[a as usize].0);
        assert_eq!(commits.get(&a).copied().unwrap_or(0), totals[a as usize].1);
    }
    assert!(
        fixes > u64::from(AGENTS * TXNS_PER_AGENT) * 4,
        "every read descends the tree"
    );
    assert!(modified > 0, "updates are recorded as modifications");

    // The simulator replays it until its first agent has no transaction
    // left (the run ends there, `partial`): all but the other agents' last
    // few.
    let config = SimConfig {
        workload: WorkloadSpec::Trace { path: path.clone() },
        page_size_bytes: PAGE_BYTES,
        buffer_pool_bytes: 64 * u64::from(PAGE_BYTES),
        redo_bytes: 8 << 20,
        policy: "self-tuning".parse().expect("a registered policy"),
        warmup_us: 0,
        duration_us: 3_600_000_000,
        report_interval_us: 1_000_000,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config, "test").unwrap();
    sim.check_invariants_every(101);
    let result = sim.run(|_| {}).unwrap();
    assert_eq!(result.connections, AGENTS, "agents come from the trace");
    let recorded = u64::from(AGENTS * TXNS_PER_AGENT);
    assert!(result.partial, "the hour asked for is cut short");
    assert!(
        result.transactions <= recorded && result.transactions * 10 >= recorded * 9,
        "{} of {recorded} transactions replayed",
        result.transactions
    );
}

#[test]
fn without_a_recorder_nothing_is_recorded_and_finish_reports_counts() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), options()).unwrap();
    let idx = db.create_index("rows", true).unwrap();
    let path = dir.path().join("t.fwtrace");
    let recorder = Arc::new(TraceRecorder::create(&path, PAGE_BYTES, "off").unwrap());
    db.run(|txn| txn.insert(idx, b"k", b"v")).unwrap();
    assert_eq!(recorder.records_written(), 0, "not installed: nothing recorded");
    db.set_trace_recorder(Some(Arc::clone(&recorder)));
    trace_recorder::set_agent(7);
    db.run(|txn| txn.get(idx, b"k").map(drop)).unwrap();
    db.set_trace_recorder(None);
    let n = recorder.finish().unwrap();
    assert!(n >= 2, "a lookup fixes and unfixes at least the root");
    recorder.txn_begin(7, TxnType::Other);
    assert_eq!(
        recorder.records_discarded(),
        1,
        "records after finish are counted, not written"
    );
    let reader = TraceReader::new(BufReader::new(File::open(&path).unwrap())).unwrap();
    let agents: Vec<u32> = reader.map(|r| r.unwrap().agent).collect();
    assert_eq!(agents.len() as u64, n);
    assert!(agents.iter().all(|&a| a == 7));
    db.close().unwrap();
}

#[test]
fn creating_in_a_missing_directory_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/t.fwtrace");
    let err = TraceRecorder::create(&path, PAGE_BYTES, "x").unwrap_err();
    assert!(err.to_string().contains("t.fwtrace"), "{err}");
}

#[test]
fn a_write_error_is_sticky_and_returned_by_finish() {
    // /dev/full accepts the open and fails every write with ENOSPC.
    let path = std::path::Path::new("/dev/full");
    if !path.exists() {
        return;
    }
    let recorder = TraceRecorder::create(path, PAGE_BYTES, "full").unwrap();
    // More than the 1 MiB file buffer: a block write reaches the device.
    for _ in 0..120_000 {
        recorder.txn_begin(1, TxnType::Other);
        recorder.txn_commit(1, TxnType::Other);
    }
    let err = recorder.finish().unwrap_err();
    assert!(err.to_string().contains("/dev/full"), "{err}");
}
