//! Embedding flushwise: open, create an index, transact, close, reopen,
//! read back. Run with `cargo run -p flushwise-engine --example embed`.

use flushwise_engine::db::{Database, DbOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("flushwise-embed-{}", std::process::id()));
    let options = DbOptions {
        buffer_pool_bytes: 4 << 20,
        redo_bytes: 8 << 20,
        ..DbOptions::default()
    };

    // Create a database with one table (its unique primary index).
    let db = Database::create(&dir, options.clone())?;
    let accounts = db.create_index("accounts", true)?;

    // A transaction: committed, durable when commit returns.
    let mut txn = db.begin();
    txn.insert(accounts, b"alice", &100u64.to_le_bytes())?;
    txn.insert(accounts, b"bob", &50u64.to_le_bytes())?;
    txn.commit()?;

    // A transfer, retried automatically on deadlock or lock timeout.
    db.run(|txn| {
        let read = |v: Option<Vec<u8>>| v.map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        let alice = read(txn.get_for_update(accounts, b"alice")?);
        let bob = read(txn.get_for_update(accounts, b"bob")?);
        txn.update(accounts, b"alice", &(alice - 30).to_le_bytes())?;
        txn.update(accounts, b"bob", &(bob + 30).to_le_bytes())?;
        Ok(())
    })?;

    // A transaction rolled back (dropping it would do the same).
    let mut txn = db.begin();
    txn.delete(accounts, b"alice")?;
    txn.rollback()?;
    db.close()?;

    // Reopen and read back.
    let db = Database::open(&dir, options)?;
    println!("{}", db.recovery_report());
    let accounts = db.index("accounts")?;
    let mut txn = db.begin();
    for (key, value) in txn.scan_prefix(accounts, b"", flushwise_engine::btree::Direction::Forward, None)? {
        let balance = u64::from_le_bytes(value.as_slice().try_into()?);
        println!("{} = {balance}", String::from_utf8_lossy(&key));
    }
    assert_eq!(txn.get(accounts, b"alice")?, Some(70u64.to_le_bytes().to_vec()));
    txn.commit()?;
    db.close()?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
