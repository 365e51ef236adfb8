//! Child process of the crash test (`tests/db_crash.rs`): commits
//! transactions with `flush_log_at_trx_commit = 1` and prints `C <id>` for
//! each one after `commit` returned (and `R <id>` after a deliberate
//! rollback), until it is killed.
//!
//! Usage: `crash_writer <dir> <create: 0|1> <first id> <seed>`.
//!
//! Transaction `id` inserts `row/<id>/a`, `row/<id>/b`, `row/<id>/c`
//! (values name the id), upserts `last = id`, and every fifth one also
//! rewrites an older row. Every seventh transaction is rolled back after
//! writing `rb/<id>`; every tenth forces all dirty pages (its uncommitted
//! changes included) to disk before committing.

use std::io::Write;
use std::process::ExitCode;

use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;

/// Options shared with the test.
fn options() -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).expect("valid page size"),
        buffer_pool_bytes: 512 << 10,
        redo_bytes: 4 << 20,
        flush_log_at_trx_commit: FlushMode::SyncAtCommit,
        ..DbOptions::default()
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let [dir, create, first, seed] = args else {
        return Err("usage: crash_writer <dir> <create: 0|1> <first id> <seed>".into());
    };
    let create = create == "1";
    let first: u64 = first.parse()?;
    let mut rng: u64 = seed.parse::<u64>()? | 1;
    let db = if create {
        let db = Database::create(dir, options())?;
        db.create_index("rows", true)?;
        db
    } else {
        Database::open(dir, options())?
    };
    let rows = db.index("rows")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "S {}", db.recovery_report())?;
    out.flush()?;
    for id in first.. {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut txn = db.begin();
        for part in ["a", "b", "c"] {
            let value = format!("{id}:{part}:{}", "x".repeat((rng % 200) as usize));
            txn.insert(rows, format!("row/{id:010}/{part}").as_bytes(), value.as_bytes())?;
        }
        txn.upsert(rows, b"last", id.to_string().as_bytes())?;
        if id % 5 == 0 && id > first {
            let old = first + rng % (id - first);
            txn.update(
                rows,
                format!("row/{old:010}/a").as_bytes(),
                format!("{old}:a:rewritten by {id}").as_bytes(),
            )?;
        }
        if id % 10 == 0 {
            db.flush_all()?;
        }
        if id % 7 == 0 {
            txn.insert(rows, format!("rb/{id:010}").as_bytes(), b"must never be seen")?;
            txn.rollback()?;
            writeln!(out, "R {id}")?;
        } else {
            txn.commit()?;
            writeln!(out, "C {id}")?;
        }
        out.flush()?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crash_writer: {e}");
            ExitCode::FAILURE
        }
    }
}
