//! Scenarios of the buffer pool shell's page contract: what commit makes
//! durable, what an uncommitted guard leaves behind, how a bad page reads.

mod common;

use common::buffer::{allocate_filled, open_db, pattern, read_payload, shell_config, ts_path};
use common::page_image;
use flushwise_engine::buffer::ApplyOutcome;
use flushwise_engine::page_store::{Latch, PageGuard, PageStore};
use flushwise_engine::storage::{open_file, IoMode, StorageBackend, Tablespace};

const REDO_BYTES: u64 = 8 << 20;

#[test]
fn pages_written_by_commit_survive_clean_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path(), true, shell_config(32, "mysql56"), REDO_BYTES, true, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 50);
    // A multi-page group changing a few bytes in each of three pages.
    let mut group = Vec::new();
    for &p in &pages[10..13] {
        let mut g = store.latch(p, Latch::Exclusive).unwrap();
        g.bytes_mut()[100..104].copy_from_slice(b"mtr!");
        group.push(g);
    }
    let lsn = store.commit(group).unwrap();
    assert!(lsn > flushwise_core::Lsn::ZERO);
    // One page freed.
    let mut g = store.latch(pages[20], Latch::Exclusive).unwrap();
    store.free(&mut g).unwrap();
    store.commit(vec![g]).unwrap();
    drop(store);
    db.close();

    let db = open_db(dir.path(), false, shell_config(32, "mysql56"), REDO_BYTES, true, None);
    let scan = db.scan.as_ref().unwrap();
    assert!(scan.records.is_empty(), "clean shutdown checkpoints at the head");
    let store = db.shell.store(1).unwrap();
    for &p in &pages {
        if p == pages[20] {
            continue;
        }
        let got = read_payload(&store, p);
        let mut want = pattern(p, 0, got.len());
        if pages[10..13].contains(&p) {
            want[100..104].copy_from_slice(b"mtr!");
        }
        assert!(got == want, "page {p} differs after reopen");
    }
    let free = store.free_pages().unwrap();
    assert!(free.contains(&pages[20]), "the freed page is free again");
    assert!(pages.iter().filter(|p| **p != pages[20]).all(|p| !free.contains(p)));
    // The next allocation reuses the lowest free page.
    let g = store.allocate().unwrap();
    assert_eq!(g.page_no(), *free.iter().min().unwrap());
    drop(g);
    drop(store);
    db.close();
}

#[test]
fn committed_pages_are_rebuilt_by_applying_redo_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = shell_config(64, "mysql56");
    config.background_threads = false; // nothing reaches the tablespace
    let db = open_db(dir.path(), true, config.clone(), REDO_BYTES, false, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 20);
    let mut g = store.latch(pages[3], Latch::Exclusive).unwrap();
    g.bytes_mut()[0..5].copy_from_slice(b"later");
    let lsn = store.commit(vec![g]).unwrap();
    db.redo.wait_durable(lsn).unwrap();
    assert_eq!(db.shell.metrics().counters.writes_completed, 0);
    // Crash: no shutdown, no page write.
    drop(store);
    let common::buffer::Db { shell, redo, ts, .. } = db;
    drop(shell);
    drop(ts);
    drop(redo);

    let db = open_db(dir.path(), false, config, REDO_BYTES, false, None);
    let scan = db.scan.clone().unwrap();
    assert!(!scan.records.is_empty());
    let mut applied = 0;
    for (start, record) in &scan.records {
        if let ApplyOutcome::Applied { .. } = db.shell.apply_redo(record, *start).unwrap() {
            applied += 1;
        }
    }
    assert!(applied >= 20, "applied {applied}");
    // Applying again changes nothing.
    for (start, record) in &scan.records {
        assert_ne!(
            db.shell.apply_redo(record, *start).unwrap(),
            ApplyOutcome::Applied {
                end_lsn: flushwise_core::Lsn::ZERO
            }
        );
        if let ApplyOutcome::Applied { .. } = db.shell.apply_redo(record, *start).unwrap() {
            panic!("record at {start} applied twice");
        }
    }
    let store = db.shell.store(1).unwrap();
    for &p in &pages {
        let got = read_payload(&store, p);
        let mut want = pattern(p, 0, got.len());
        if p == pages[3] {
            want[0..5].copy_from_slice(b"later");
        }
        assert!(got == want, "page {p} not rebuilt");
    }
    db.shell.with_core(|pool| pool.check_invariants());
    drop(store);
    db.close();
}

#[test]
fn dropped_uncommitted_guard_restores_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path(), true, shell_config(16, "mysql56"), REDO_BYTES, false, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 3);
    let lsn_before = db.redo.current_lsn();
    {
        let mut g = store.latch(pages[1], Latch::Exclusive).unwrap();
        g.bytes_mut().fill(0xEE);
    }
    assert_eq!(
        read_payload(&store, pages[1]),
        pattern(pages[1], 0, store.payload_len())
    );
    // A group that fails halfway is dropped whole: both pages restored.
    {
        let mut a = store.latch(pages[0], Latch::Exclusive).unwrap();
        a.bytes_mut()[0] ^= 0xFF;
        let mut b = store.latch(pages[2], Latch::Exclusive).unwrap();
        b.bytes_mut()[0] ^= 0xFF;
    }
    for &p in &pages {
        assert_eq!(read_payload(&store, p), pattern(p, 0, store.payload_len()));
    }
    // An allocation dropped without commit returns its page.
    let p = {
        let mut g = store.allocate().unwrap();
        g.bytes_mut().fill(1);
        g.page_no()
    };
    assert!(store.free_pages().unwrap().contains(&p));
    assert_eq!(db.redo.current_lsn(), lsn_before, "nothing was logged");
    drop(store);
    db.close();
}

#[test]
fn corrupt_page_read_returns_error_naming_file_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = ts_path(dir.path());
    {
        let backend = open_file(&path, IoMode::Buffered, true).unwrap();
        let ts = Tablespace::open(1, &path, backend.clone(), common::PAGE).unwrap();
        ts.extend(4).unwrap();
        for p in 0..4 {
            ts.write_page(p, &mut page_image(ts.page_id(p), 7)).unwrap();
        }
        // Flip payload bytes of page 2 behind the checksum's back.
        let offset = common::PAGE.offset_of(2) + 1000;
        backend.write(offset, &[0xAB; 16]).unwrap();
        ts.sync().unwrap();
    }
    let db = open_db(dir.path(), true, shell_config(16, "mysql56"), REDO_BYTES, false, None);
    let store = db.shell.store(1).unwrap();
    assert!(store.latch(1, Latch::Shared).is_ok());
    for _ in 0..2 {
        let err = store.latch(2, Latch::Shared).err().expect("corrupt page must not read");
        let msg = err.to_string();
        assert!(
            msg.contains("t1.ibd") && msg.contains("page 2") && msg.contains("corrupt"),
            "{msg}"
        );
    }
    assert!(matches!(
        store.latch(9, Latch::Shared).err(),
        Some(flushwise_engine::page_store::StoreError::NoSuchPage { page_no: 9, .. })
    ));
    db.shell.with_core(|pool| {
        pool.check_invariants();
        assert_eq!(pool.pending_reads(), 0);
    });
    drop(store);
    db.close();
}

/// A user that needs a frame while every frame is latched gets "buffer
/// pool too small" once its bounded waits (no page write in flight or
/// completed) run out, not a hang; the pool serves again once the latches
/// go.
#[test]
fn every_frame_latched_gives_pool_too_small_then_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let frames = 16;
    let config = flushwise_engine::buffer::ShellConfig {
        no_frame_waits_max: 50,
        ..shell_config(frames, "mysql56")
    };
    let db = open_db(dir.path(), true, config, REDO_BYTES, true, None);
    let store = db.shell.store(1).unwrap();
    let pages = allocate_filled(&store, 40);
    let held: Vec<_> = pages[..frames as usize]
        .iter()
        .map(|&p| store.latch(p, Latch::Shared).unwrap())
        .collect();
    let err = store
        .latch(pages[30], Latch::Shared)
        .err()
        .expect("no frame can be freed while all are latched");
    let msg = err.to_string();
    assert!(
        msg.contains("buffer pool too small") && msg.contains("16 frames"),
        "{msg}"
    );
    drop(held);
    assert_eq!(
        read_payload(&store, pages[30]),
        pattern(pages[30], 0, read_payload(&store, pages[30]).len())
    );
    drop(store);
    db.close();
}
