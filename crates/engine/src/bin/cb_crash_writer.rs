//! Child process of the change-buffer crash test
//! (`tests/db_change_buffer_crash.rs`): with the change buffer on and a
//! pool far smaller than its secondary indexes, commits one row per
//! transaction (`flush_log_at_trx_commit = 1`) into a primary index and two
//! non-unique secondary indexes on hashed keys, printing `C <id>` after
//! each commit returned and `R <id>` after a deliberate rollback (every
//! seventh), until it is killed. Every even transaction `id` also deletes
//! row `id - DELETE_LAG` if it is there (its primary entry and, through
//! `delete_secondary_entry`, its secondary entries: the deletes the change
//! buffer may buffer), printing `D <row>` after the commit returned and
//! before `C <id>`. Every tenth transaction forces all dirty pages (its own
//! uncommitted changes and the change buffer's included) to disk before it
//! commits. On create it first loads 3,000 rows in transactions of 100, so
//! the secondary indexes have many leaves.
//!
//! Usage: `cb_crash_writer <dir> <create: 0|1> <first id> [change-buffer dir]`
//! (with the last, the change buffer is `separate-device` in that directory).

use std::io::Write;
use std::process::ExitCode;

use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions, Database, DbOptions, IndexId};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;

/// Rows loaded at create.
pub const PRELOAD_ROWS: u64 = 3_000;
/// An even transaction `id` deletes row `id - DELETE_LAG` (the test uses
/// the same rule).
pub const DELETE_LAG: u64 = 2_000;

/// Options shared with the test.
fn options(cb_dir: Option<&str>) -> DbOptions {
    DbOptions {
        page_size: PageSize::new(4096).expect("valid page size"),
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

/// The secondary keys of row `id` (the test computes the same).
fn secondary_keys(id: u64) -> [[u8; 4]; 2] {
    let h = |salt: u64| {
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        ((x >> 32) as u32).to_be_bytes()
    };
    [h(1), h(2)]
}

fn insert_row(
    txn: &mut flushwise_engine::db::Txn<'_>,
    primary: IndexId,
    secondaries: &[IndexId; 2],
    id: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let pk = id.to_be_bytes();
    txn.insert(primary, &pk, &[id as u8; 100])?;
    for (index, key) in secondaries.iter().zip(secondary_keys(id)) {
        txn.insert_secondary(*index, &key, &pk, b"")?;
    }
    Ok(())
}

/// Deletes row `id` and its secondary entries if the row is there.
fn delete_row(
    txn: &mut flushwise_engine::db::Txn<'_>,
    primary: IndexId,
    secondaries: &[IndexId; 2],
    id: u64,
) -> Result<bool, Box<dyn std::error::Error>> {
    let pk = id.to_be_bytes();
    if !txn.delete(primary, &pk)? {
        return Ok(false);
    }
    for (index, key) in secondaries.iter().zip(secondary_keys(id)) {
        txn.delete_secondary_entry(*index, &key, &pk, b"")?;
    }
    Ok(true)
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let (dir, create, first, cb_dir) = match args {
        [dir, create, first] => (dir, create, first, None),
        [dir, create, first, cb_dir] => (dir, create, first, Some(cb_dir.as_str())),
        _ => return Err("usage: cb_crash_writer <dir> <create: 0|1> <first id> [change-buffer dir]".into()),
    };
    let create = create == "1";
    let first: u64 = first.parse()?;
    let db = if create {
        let db = Database::create(dir, options(cb_dir))?;
        db.create_index("rows", true)?;
        db.create_index("k1", false)?;
        db.create_index("k2", false)?;
        db
    } else {
        Database::open(dir, options(cb_dir))?
    };
    let primary = db.index("rows")?;
    let secondaries = [db.index("k1")?, db.index("k2")?];
    let mut out = std::io::stdout().lock();
    if create {
        for chunk in 0..PRELOAD_ROWS / 100 {
            let mut txn = db.begin();
            for id in chunk * 100..(chunk + 1) * 100 {
                insert_row(&mut txn, primary, &secondaries, id)?;
            }
            txn.commit()?;
        }
        writeln!(out, "L {PRELOAD_ROWS}")?;
    }
    writeln!(out, "S {:?}", db.change_buffer_stats())?;
    out.flush()?;
    for id in first.. {
        let mut txn = db.begin();
        insert_row(&mut txn, primary, &secondaries, id)?;
        let deleted = match id.checked_sub(DELETE_LAG) {
            Some(old) if id % 2 == 0 => delete_row(&mut txn, primary, &secondaries, old)?.then_some(old),
            _ => None,
        };
        if id % 10 == 0 {
            db.flush_all()?;
        }
        if id % 7 == 0 {
            txn.rollback()?;
            writeln!(out, "R {id}")?;
        } else {
            txn.commit()?;
            if let Some(old) = deleted {
                writeln!(out, "D {old}")?;
            }
            writeln!(out, "C {id}")?;
        }
        if id % 100 == 0 {
            writeln!(out, "S {:?}", db.change_buffer_stats())?;
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
            eprintln!("cb_crash_writer: {e}");
            ExitCode::FAILURE
        }
    }
}
