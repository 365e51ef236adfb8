//! Scenarios of the page-cleaner threads and of sticky write errors.

mod common;

use flushwise_engine::storage::batch_io::IN_PLACE_WRITE_DEPTH;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::buffer::{allocate_filled, open_db, shell_config, ts_path};
use common::faulty_file;
use flushwise_core::policy;
use flushwise_engine::page_store::{Latch, PageGuard, PageStore};
use flushwise_engine::storage::{FaultPlan, StorageBackend};

#[test]
fn every_policy_runs_the_page_cleaner() {
    for name in policy::names() {
        // The paper-001 policies' master thread writes only past 90 % dirty
        // or a redo age this load never reaches, and their users keep 5.1's
        // free margin by LRU batches of their own, which keep the pool far
        // cleaner than that: here their users take a later version's path
        // (a single-page flush) so that the master thread has work. The
        // margin's own scenario is the one below.
        let spec = policy::PolicySpec::parse(name).expect("a registered policy");
        let keeps_margin = name != "mysql51"
            && spec.declares("single_page_flush")
            && spec.params().name("single_page_flush") == "free_margin_batch";
        let policy = if keeps_margin {
            format!("{name}:single_page_flush=own_space")
        } else {
            name.to_string()
        };
        let policy = policy.as_str();
        let dir = tempfile::tempdir().unwrap();
        let mut config = shell_config(64, policy);
        config.decision_log = true;
        config.metrics_interval = Duration::from_millis(200);
        let db = open_db(dir.path(), true, config, 8 << 20, true, None);
        let store = db.shell.store(1).unwrap();
        // More pages than frames, all dirty: the cleaner has work of both kinds.
        let pages = allocate_filled(&store, 150);
        for &p in pages.iter().step_by(3) {
            let mut g = store.latch(p, Latch::Exclusive).unwrap();
            g.bytes_mut()[0] ^= 0x5A;
            store.commit(vec![g]).unwrap();
        }
        // Keep writing while waiting: a cleaner may rightly stay idle over a
        // pool that stopped changing (db2-aiop's AioP starts at 0 and rises
        // only with the dirty share or with synchronous writes, Wang & Bunt
        // §7), so the scenario is a sustained load, not a burst.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut m = db.shell.metrics();
        let mut next = 0usize;
        while m.cleaner_pages_written() == 0 && Instant::now() < deadline {
            let p = pages[next % pages.len()];
            next += 7;
            let mut g = store.latch(p, Latch::Exclusive).unwrap();
            g.bytes_mut()[1] ^= 0x33;
            store.commit(vec![g]).unwrap();
            std::thread::sleep(Duration::from_millis(5));
            m = db.shell.metrics();
        }
        assert!(
            m.cleaner_pages_written() > 0,
            "{policy}: the cleaner wrote nothing: {m:?}"
        );
        assert!(!m.parameters.is_empty(), "{policy}: no parameters");
        // The master thread checkpoints on its own.
        let deadline = Instant::now() + Duration::from_secs(3);
        while db.redo.stats().checkpoints < 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            db.redo.stats().checkpoints >= 1,
            "{policy}: no periodic checkpoint: {:?} ckpt {} candidate {} poisoned {:?} {:?}",
            db.redo.stats(),
            db.redo.checkpoint_lsn(),
            db.shell.with_core(|p| p.checkpoint_candidate()),
            db.shell.poisoned(),
            db.shell.metrics()
        );
        assert!(!db.shell.drain_decisions().is_empty(), "{policy}: no decision logged");
        assert!(!db.shell.metrics_history().is_empty(), "{policy}: no snapshots");
        db.shell.with_core(|pool| pool.check_invariants());
        drop(store);
        db.close();
    }
}

#[test]
fn failed_write_makes_the_shell_refuse_further_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = faulty_file(&ts_path(dir.path()));
    let backend: Arc<dyn StorageBackend> = file.clone();
    let mut config = shell_config(32, "mysql56");
    config.background_threads = false;
    let db = open_db(dir.path(), true, config, 8 << 20, false, Some(backend));
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 10);
    file.inner().arm(FaultPlan::fail_nth_write(1));

    let first = db.shell.flush_all().unwrap_err().to_string();
    assert!(first.contains("injected") && first.contains("t1.ibd"), "{first}");
    assert!(db.shell.poisoned().is_some());
    // The failed write's batch had its other in-place writes in flight with
    // it (they go out together, as 5.6.15 posts them through native AIO):
    // those may have completed, but none was issued after the batch.
    let writes_at_failure = file.inner().counters().writes;
    assert!(
        (1..=IN_PLACE_WRITE_DEPTH as u64).contains(&writes_at_failure),
        "{writes_at_failure}"
    );
    // Every later write path refuses, naming the first error.
    // Resident pages still read (only writes are refused).
    assert!(store.latch(pages[0], Latch::Shared).is_ok());
    let commit_err = match store.latch(pages[1], Latch::Exclusive) {
        Err(e) => e.to_string(),
        Ok(mut g) => {
            g.bytes_mut()[0] = 1;
            store.commit(vec![g]).unwrap_err().to_string()
        }
    };
    assert!(commit_err.contains("refuses further writes"), "{commit_err}");
    assert!(store.allocate().is_err());
    let ckpt = db.shell.checkpoint().unwrap_err().to_string();
    assert!(ckpt.contains("refuses further writes"), "{ckpt}");
    assert!(db.shell.flush_all().is_err());
    assert!(db.shell.shutdown().is_err());
    // No write reached the file after the failed batch.
    assert_eq!(file.inner().counters().writes, writes_at_failure);
    db.shell.with_core(|pool| {
        pool.check_invariants();
        assert!(pool.dirty_pages() > 0, "nothing is claimed clean");
    });
}

/// MySQL 5.1's free margin on the engine: users whose misses find too few
/// clean pages near the LRU tail write LRU batches themselves (through the
/// doublewrite buffer), and the pages stay readable with their contents.
#[test]
fn mysql51_users_keep_the_free_margin_by_their_own_lru_batches() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path(), true, shell_config(64, "mysql51"), 8 << 20, true, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 300);
    for round in 0..3u8 {
        for &p in &pages {
            let mut g = store.latch(p, Latch::Exclusive).unwrap();
            g.bytes_mut()[2] = round;
            store.commit(vec![g]).unwrap();
        }
    }
    let m = db.shell.metrics();
    assert!(m.counters.sync_replacement_writes > 0, "{m:?}");
    assert_eq!(m.counters.lru_batch_flush_pages, 0, "no page-cleaner LRU batch: {m:?}");
    assert!(m.counters.wait_free > 0, "{m:?}");
    for &p in &pages {
        let g = store.latch(p, Latch::Shared).unwrap();
        assert_eq!(g[2], 2, "page {p:?}");
    }
    db.shell.with_core(|pool| pool.check_invariants());
    drop(store);
    db.close();
}
