//! A user's single-page flush (MySQL 5.6.15 `buf_flush_single_page_from_LRU`)
//! on the engine: without the doublewrite buffer the page's own tablespace
//! is fsynced after the write (`buf_flush_write_block_low` with `sync`:
//! `fil_flush(space)`), in both the 5.6.12-5.7 mode and the 5.6.10/11
//! `buf_flush_sync_datafiles` mode; with doublewrite the batch path already
//! fsyncs the slots and the tablespace.

mod common;

use std::sync::Arc;

use common::buffer::{allocate_filled, open_db, shell_config, ts_path};
use common::faulty_file;
use flushwise_engine::storage::StorageBackend;

const REDO_BYTES: u64 = 8 << 20;

/// Fills 200 pages through a 32-frame pool with no page cleaner running, so
/// every frame beyond the first 32 comes from a user's single-page flush;
/// returns (single-page flushes, tablespace fsyncs).
fn fill_through_small_pool(policy: &str) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let file = faulty_file(&ts_path(dir.path()));
    let mut config = shell_config(32, policy);
    config.background_threads = false;
    let backend: Arc<dyn StorageBackend> = file.clone();
    let db = open_db(dir.path(), true, config, REDO_BYTES, false, Some(backend));
    let store = db.shell.store(1).unwrap();
    let before = file.inner().counters().syncs;
    allocate_filled(&store, 200);
    let single = db.shell.metrics().counters.sync_replacement_writes;
    let syncs = file.inner().counters().syncs - before;
    drop(store);
    db.close();
    (single, syncs)
}

#[test]
fn single_page_flush_syncs_its_tablespace_in_5615() {
    let (single, syncs) = fill_through_small_pool("mysql56");
    assert!(single >= 100, "the load must force single-page flushes ({single})");
    assert!(syncs >= single, "{single} single-page flushes but {syncs} fsyncs");
}

#[test]
fn single_page_flush_syncs_every_data_file_in_the_5610_mode() {
    let (single, syncs) = fill_through_small_pool("self-tuning:single_page_flush=all_datafiles");
    assert!(single >= 100, "the load must force single-page flushes ({single})");
    assert!(syncs >= single, "{single} single-page flushes but {syncs} fsyncs");
}
