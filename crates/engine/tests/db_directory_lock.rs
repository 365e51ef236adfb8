//! One process at a time per database directory (issue #14, finding 1):
//! two processes that both opened the same files would both write, and one
//! of them would then fail on a duplicate key or a "corrupt" redo log. An
//! open or create takes an exclusive lock on the directory for the life of
//! the `Database`; a second opener is refused with the holder's pid.

use std::path::Path;

use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;

fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).unwrap(),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 4 << 20,
        ..DbOptions::default()
    }
}

fn insert(db: &Database, key: &[u8]) {
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    txn.insert(idx, key, b"v").unwrap();
    txn.commit().unwrap();
}

fn refusal(dir: &Path) -> String {
    Database::open(dir, options())
        .expect_err("a second opener of a database in use must be refused")
        .to_string()
}

#[test]
fn second_opener_is_refused_with_holder_pid() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), options()).unwrap();
    db.create_index("t", true).unwrap();
    insert(&db, b"a");

    let msg = refusal(dir.path());
    let pid = std::process::id().to_string();
    assert!(msg.contains(&pid), "the holder's pid {pid} is named: {msg}");
    assert!(
        msg.contains(&dir.path().display().to_string()),
        "the directory is named: {msg}"
    );
    // A second create is refused by the lock as well, before it looks at the files.
    let msg = Database::create(dir.path(), options()).unwrap_err().to_string();
    assert!(msg.contains(&pid), "{msg}");

    // The holder is unharmed and keeps working.
    insert(&db, b"b");
    db.close().unwrap();

    // Released by close: the next open succeeds and sees both rows.
    let db = Database::open(dir.path(), options()).unwrap();
    insert(&db, b"c");
    // Released by a drop (a crash) as well.
    drop(db);
    let db = Database::open(dir.path(), options()).unwrap();
    let idx = db.index("t").unwrap();
    let mut txn = db.begin();
    for key in [b"a", b"b", b"c"] {
        assert_eq!(txn.get(idx, key).unwrap(), Some(b"v".to_vec()));
    }
    txn.commit().unwrap();
    db.close().unwrap();
}

#[test]
fn a_separate_redo_directory_is_locked_too() {
    let root = tempfile::tempdir().unwrap();
    let shared_redo = root.path().join("redo");
    let with_redo = |data: &str| DbOptions {
        data_dir: Some(root.path().join(data)),
        redo_dir: Some(shared_redo.clone()),
        ..options()
    };
    let db = Database::create(root.path().join("a"), with_redo("a")).unwrap();
    // Another data directory, the same redo directory: refused, naming it.
    let msg = Database::create(root.path().join("b"), with_redo("b"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains(&shared_redo.display().to_string()), "{msg}");
    assert!(msg.contains(&std::process::id().to_string()), "{msg}");
    db.close().unwrap();
}
