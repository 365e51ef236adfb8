//! The `secondary` torture workload (issue #16): a table with secondary
//! indexes changed through the change buffer, and the check that after a
//! power cut every secondary index still holds exactly one entry per row.
//!
//! The table is the insert load's (`flushwise_workloads::insert`):
//! `insert_pk` (unique, the row under its `u64` id) and
//! [`SECONDARY_INDEXES`] non-unique indexes `insert_k1..` on `(k_j, id)`,
//! each `k_j` a random `u32` the row itself stores, so an entry lands on a
//! random leaf. The image holds [`ROWS`] rows, bulk-loaded, about three
//! times the torture's 64-frame pool, so most secondary leaves are not
//! resident and their changes are buffered.
//!
//! Each thread owns the rows whose id is its number modulo the threads
//! (and the rows it inserts, whose id is the inserting transaction's), so
//! every row has one writer and the order of its changes is that thread's
//! order: the row's expected value after the cut is exact. A transaction
//! does one of: insert a new row and its entries; update a row's
//! secondary columns (new keys, the old entries removed through
//! `delete_secondary_entry`, which the change buffer may buffer, the new
//! ones inserted, the row rewritten); delete a row and all its entries.
//! Every written row says which transaction wrote it (its filler), so a
//! value found after recovery names its writer. One transaction in eight
//! is rolled back on purpose.
//!
//! Before its threads start, a run scans every secondary index once: the
//! leaves' free space and entry counts are then known, as a clean close's
//! saved `flushwise.leafspace` would make them on real files (the
//! power-loss disk keeps no such file), and the change buffer may take a
//! change for any leaf the pool has since evicted.
//!
//! After recovery ([`check`]): every row holds the value of its last
//! acknowledged change (or, if its thread's commit was under way at the
//! cut, that change's value, whole); no value or deletion of a transaction
//! that never committed; every secondary index holds one entry per row
//! under the row's key and nothing else
//! (`flushwise_workloads::insert::check_consistency`); a row read before
//! the cut always held what its thread wrote last.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbError, IndexId, Txn};
use flushwise_workloads::insert::load::{prepare, require_loaded, LoadConfig, LoadMarker};
use flushwise_workloads::insert::schema::{keys_of, secondary_name, ID_FIRST, PRIMARY};
use flushwise_workloads::insert::{check_consistency, InsertSchema, Row, RowShape};
use flushwise_workloads::tpcc::random::{self, Rng64};

use super::{error_chain, Outcomes, TrialResult, RETRIES_MAX};

/// Rows of the prepared table: with 4 KiB pages about 140 primary leaves
/// and 22 leaves per secondary index, against a pool of 64 frames.
pub const ROWS: u64 = 4_000;
/// Non-unique secondary indexes of the table.
pub const SECONDARY_INDEXES: u32 = 3;
/// Bytes of a row (sysbench's `c` is `CHAR(120)`, as the insert load's).
const ROW_BYTES: u32 = 120;
/// One transaction in this many is rolled back on purpose.
const ROLLBACK_ONE_IN: u64 = 8;
/// Percent of transactions that insert a row, and that update one; the
/// rest delete one.
const INSERT_PCT: u64 = 40;
const UPDATE_PCT: u64 = 40;
/// How a row written by the workload starts its filler: `txn ` and the
/// writing transaction in 16 hex digits.
const WRITER_TAG: &str = "txn ";

/// The prepared table: the value of every loaded row, by id.
pub struct Table {
    loaded: BTreeMap<u64, Vec<u8>>,
    shape: RowShape,
}

impl Table {
    fn filler_bytes(&self) -> usize {
        (self.shape.row_bytes - RowShape::row_bytes_min(self.shape.secondary_indexes)) as usize
    }

    /// Row `id` as transaction `txn` writes it: fresh keys drawn from the
    /// trial's seed and `txn`, the writer named in the filler.
    fn written(&self, seed: u64, id: u64, txn: u64) -> Row {
        let mut filler = format!("{WRITER_TAG}{txn:016x}");
        let pad = self.filler_bytes().saturating_sub(filler.len());
        filler.push_str(&".".repeat(pad));
        Row {
            id,
            keys: keys_of(seed, txn, self.shape.secondary_indexes).collect(),
            filler,
        }
    }
}

/// Creates the table in the empty database `db` and loads it; `seed`
/// draws the loaded rows.
pub fn load(db: &Database, seed: u64) -> Result<Table, String> {
    let shape = RowShape::new(SECONDARY_INDEXES, ROW_BYTES)?;
    let marker = LoadMarker {
        rows: ROWS,
        shape,
        seed,
    };
    prepare(db, &LoadConfig { marker, threads: 1 }, &|_, _| {})
        .map_err(|e| format!("loading the secondary table on the power-loss disk: {e}"))?;
    require_loaded(db).map_err(|e| format!("the secondary table after its load: {e}"))?;
    let loaded = (ID_FIRST..ID_FIRST + ROWS)
        .map(|id| (id, Row::generate(seed, id, shape).value()))
        .collect();
    Ok(Table { loaded, shape })
}

/// The table's indexes in `db`, from the catalog (no read: the load's
/// marker was checked when the image was made).
pub fn schema(db: &Database, table: &Table) -> Result<InsertSchema, String> {
    let index = |name: &str| db.index(name).map_err(|e| format!("the secondary table: {e}"));
    Ok(InsertSchema {
        primary: index(PRIMARY)?,
        secondaries: (1..=table.shape.secondary_indexes)
            .map(|j| index(&secondary_name(j)))
            .collect::<Result<_, _>>()?,
        shape: table.shape,
    })
}

/// Reads every secondary index once, so the change buffer knows each
/// leaf's free space and entries (see the module doc).
pub fn learn_leaves(db: &Database, schema: &InsertSchema) -> Result<(), String> {
    for &index in &schema.secondaries {
        db.scan_unlocked(index, Bound::Unbounded, Bound::Unbounded, Direction::Forward, |_, _| {
            true
        })
        .map_err(|e| format!("scanning a secondary index before the run: {}", error_chain(&e)))?;
    }
    Ok(())
}

/// One change of a row by a transaction that reached its end (committed,
/// asked to commit, or rolled back): the row's value after it, `None` if
/// it deleted the row.
#[derive(Clone, Debug)]
pub struct RowOp {
    pub txn: u64,
    pub row: u64,
    pub after: Option<Vec<u8>>,
}

/// What a transaction does, to which row.
#[derive(Clone, Copy)]
enum Change {
    Insert(u64),
    Update(u64),
    Delete(u64),
}

impl Change {
    fn row(self) -> u64 {
        match self {
            Change::Insert(id) | Change::Update(id) | Change::Delete(id) => id,
        }
    }
}

/// A thread's transactions; `t` of `threads`, each its own rows.
pub fn worker(
    db: &Database,
    schema: &InsertSchema,
    table: &Table,
    t: u32,
    threads: u32,
    n: u32,
    seed: u64,
) -> Outcomes {
    let mut out = Outcomes::default();
    let mut rng = random::stream(seed, &[0x7365_636f_6e64, u64::from(t)]);
    // This thread's rows as it last committed them.
    let mut rows: HashMap<u64, Vec<u8>> = table
        .loaded
        .iter()
        .filter(|(id, _)| *id % u64::from(threads) == u64::from(t))
        .map(|(id, v)| (*id, v.clone()))
        .collect();
    let mut ids: Vec<u64> = rows.keys().copied().collect();
    ids.sort_unstable();
    'txns: for i in 0..n {
        let txn_id = ((u64::from(t) + 1) << 32) | u64::from(i);
        let roll = rng.between(1, 100);
        let pick = if ids.is_empty() {
            None
        } else {
            Some(rng.below(ids.len() as u64) as usize)
        };
        let change = match pick {
            Some(p) if roll > INSERT_PCT + UPDATE_PCT => Change::Delete(ids[p]),
            Some(p) if roll > INSERT_PCT => Change::Update(ids[p]),
            _ => Change::Insert(txn_id),
        };
        let roll_back = rng.between(1, ROLLBACK_ONE_IN) == 1;
        let row_id = change.row();
        let after = match change {
            Change::Insert(id) | Change::Update(id) => Some(table.written(seed, id, txn_id)),
            Change::Delete(_) => None,
        };
        let op = RowOp {
            txn: txn_id,
            row: row_id,
            after: after.as_ref().map(Row::value),
        };
        for _attempt in 0..RETRIES_MAX {
            let mut txn = db.begin();
            let mut surprise = None;
            let body = apply(
                &mut txn,
                schema,
                table,
                change,
                after.as_ref(),
                rows.get(&row_id),
                &mut surprise,
            );
            if let Some(s) = surprise {
                let _ = txn.rollback();
                out.surprises.push(format!("transaction {txn_id:#x}: {s}"));
                out.never_committed.insert(txn_id);
                out.row_ops.push(op);
                return out;
            }
            match body {
                Ok(()) if roll_back => {
                    let _ = txn.rollback();
                    out.never_committed.insert(txn_id);
                    out.row_ops.push(op);
                    continue 'txns;
                }
                Ok(()) => {
                    if let Err(e) = txn.commit() {
                        out.note_error(&e);
                        out.in_flight.insert(txn_id);
                        out.row_ops.push(op);
                        return out;
                    }
                    out.acked.insert(txn_id);
                    match (&change, &op.after) {
                        (Change::Insert(_), Some(v)) => {
                            rows.insert(row_id, v.clone());
                            ids.push(row_id);
                        }
                        (Change::Update(_), Some(v)) => {
                            rows.insert(row_id, v.clone());
                        }
                        _ => {
                            rows.remove(&row_id);
                            if let Some(p) = pick {
                                ids.swap_remove(p);
                            }
                        }
                    }
                    out.row_ops.push(op);
                    continue 'txns;
                }
                Err(e) if e.is_retryable() => {
                    let _ = txn.rollback();
                }
                Err(e) => {
                    out.note_error(&e);
                    let _ = txn.rollback();
                    out.never_committed.insert(txn_id);
                    out.row_ops.push(op);
                    return out;
                }
            }
        }
        out.never_committed.insert(txn_id);
        out.row_ops.push(op);
    }
    out
}

/// The transaction's statements. The old entries removed are the ones
/// the row read under its lock names (`delete_secondary_entry`'s
/// contract); a row read that differs from what the thread last committed
/// is put in `surprise` (and nothing more is done).
fn apply(
    txn: &mut Txn<'_>,
    schema: &InsertSchema,
    table: &Table,
    change: Change,
    after: Option<&Row>,
    committed: Option<&Vec<u8>>,
    surprise: &mut Option<String>,
) -> Result<(), DbError> {
    let id = change.row();
    let key = Row::key_of(id);
    let old = match change {
        Change::Insert(_) => None,
        Change::Update(_) | Change::Delete(_) => {
            let read = txn.get_for_update(schema.primary, &key)?;
            if read.as_ref() != committed {
                *surprise = Some(format!(
                    "row {id} read as {}, its thread last committed {}",
                    describe(table, id, read.as_deref()),
                    describe(table, id, committed.map(Vec::as_slice))
                ));
                return Ok(());
            }
            match read.as_deref().map(|v| Row::decode(&key, v)) {
                Some(Ok(row)) => Some(row),
                Some(Err(e)) => {
                    *surprise = Some(format!("row {id} does not decode: {e}"));
                    return Ok(());
                }
                None => None,
            }
        }
    };
    if let Some(old) = &old {
        if after.is_none() && !txn.delete(schema.primary, &key)? {
            *surprise = Some(format!("row {id} was read under its lock, then not there to delete"));
            return Ok(());
        }
        entries(txn, &schema.secondaries, old, &key, Entry::Remove)?;
    }
    if let Some(row) = after {
        entries(txn, &schema.secondaries, row, &key, Entry::Add)?;
        if old.is_some() {
            txn.update(schema.primary, &key, &row.value())?;
        } else {
            txn.insert(schema.primary, &key, &row.value())?;
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Entry {
    Add,
    Remove,
}

/// Adds or removes `row`'s entry in every secondary index.
fn entries(txn: &mut Txn<'_>, indexes: &[IndexId], row: &Row, key: &[u8], what: Entry) -> Result<(), DbError> {
    for (&index, &k) in indexes.iter().zip(&row.keys) {
        let secondary = Row::secondary_key(k);
        match what {
            Entry::Add => txn.insert_secondary(index, &secondary, key, &[])?,
            Entry::Remove => txn.delete_secondary_entry(index, &secondary, key, &[])?,
        }
    }
    Ok(())
}

/// Row `id`'s value for people: absent, loaded, or written by a
/// transaction.
fn describe(table: &Table, id: u64, value: Option<&[u8]>) -> String {
    let Some(v) = value else {
        return "absent".into();
    };
    match writer(v) {
        Some(txn) => format!("the value of transaction {txn:#x}"),
        None if table.loaded.get(&id).is_some_and(|l| l == v) => "its loaded value".into(),
        None => format!(
            "a value of {} bytes neither loaded nor written by the workload",
            v.len()
        ),
    }
}

/// The transaction that wrote a row value, if the workload wrote it.
fn writer(value: &[u8]) -> Option<u64> {
    let row = Row::decode(&Row::key_of(0), value).ok()?;
    let hex = row.filler.strip_prefix(WRITER_TAG)?.get(..16)?;
    u64::from_str_radix(hex, 16).ok()
}

/// The checks of a recovered database (see the module doc); what is wrong
/// goes into `r`, an error is a read that failed.
pub fn check(db: &Database, table: &Table, o: &Outcomes, r: &mut TrialResult) -> Result<(), String> {
    let schema = schema(db, table)?;
    let mut found: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut bad_keys = 0u64;
    db.scan_unlocked(
        schema.primary,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        |k, v| {
            match Row::id_of(&k) {
                Ok(id) => {
                    found.insert(id, v);
                }
                Err(_) => bad_keys += 1,
            }
            true
        },
    )
    .map_err(|e| format!("reading the rows: {}", error_chain(&e)))?;
    if bad_keys > 0 {
        r.broken += bad_keys;
        r.problems.push(format!("{bad_keys} primary keys are not 8 bytes"));
    }

    // The rows as the acknowledged commits left them, each row's changes
    // in its thread's order (`row_ops` keeps each thread's order).
    let mut expected = table.loaded.clone();
    let mut last_acked: BTreeMap<u64, u64> = BTreeMap::new();
    let mut in_flight: BTreeMap<u64, &RowOp> = BTreeMap::new();
    let mut never: BTreeMap<u64, Vec<&RowOp>> = BTreeMap::new();
    for op in &o.row_ops {
        if o.acked.contains(&op.txn) {
            match &op.after {
                Some(v) => expected.insert(op.row, v.clone()),
                None => expected.remove(&op.row),
            };
            last_acked.insert(op.row, op.txn);
        } else if o.in_flight.contains(&op.txn) {
            in_flight.insert(op.row, op);
        } else {
            never.entry(op.row).or_default().push(op);
        }
    }
    let ids: BTreeSet<u64> = expected
        .keys()
        .chain(found.keys())
        .chain(in_flight.keys())
        .copied()
        .collect();
    let mut noted = 0usize;
    let mut note = |r: &mut TrialResult, text: String| {
        if noted < 3 {
            r.problems.push(text);
        }
        noted += 1;
    };
    for id in ids {
        let (f, e) = (found.get(&id), expected.get(&id));
        if f == e {
            continue;
        }
        if in_flight.get(&id).is_some_and(|op| op.after.as_ref() == f) {
            r.in_flight_survived += 1;
            continue;
        }
        let (f_text, e_text) = (
            describe(table, id, f.map(Vec::as_slice)),
            describe(table, id, e.map(Vec::as_slice)),
        );
        if let Some(op) = never
            .get(&id)
            .and_then(|ops| ops.iter().find(|op| op.after.as_ref() == f))
        {
            r.uncommitted_effects += 1;
            note(
                r,
                format!(
                    "row {id} is {f_text}: the change of transaction {:#x}, which never committed (want {e_text})",
                    op.txn
                ),
            );
        } else if let Some(txn) = last_acked.get(&id) {
            r.lost += 1;
            if !r.lost_allowed {
                note(
                    r,
                    format!("row {id} is {f_text}, want {e_text} (acknowledged transaction {txn:#x} lost)"),
                );
            }
        } else {
            r.broken += 1;
            note(
                r,
                format!("row {id} is {f_text}, want {e_text} (no acknowledged transaction changed it)"),
            );
        }
    }

    let report = check_consistency(db, &schema).map_err(|e| format!("comparing the secondary indexes: {e}"))?;
    if !report.passed() {
        r.broken += report.mismatches_total;
        r.problems.push(report.summary());
    }
    for s in &o.surprises {
        r.broken += 1;
        r.problems.push(format!("before the cut: {s}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions, DbOptions};
    use flushwise_engine::page::PageSize;
    use flushwise_engine::storage::{PowerLossDisk, StorageOpener};

    use super::*;

    fn database(disk: &PowerLossDisk, create: bool) -> Database {
        let options = DbOptions {
            page_size: PageSize::new(4096).expect("page size"),
            buffer_pool_bytes: 256 << 10,
            redo_bytes: 1 << 20,
            storage: Some(Arc::new(disk.clone()) as Arc<dyn StorageOpener>),
            change_buffer: ChangeBufferOptions {
                mode: ChangeBufferMode::On,
                ..ChangeBufferOptions::default()
            },
            ..DbOptions::default()
        };
        if create {
            Database::create("/t", options).expect("create")
        } else {
            Database::open("/t", options).expect("open")
        }
    }

    fn checked(db: &Database, table: &Table, o: &Outcomes) -> TrialResult {
        let mut r = TrialResult::default();
        check(db, table, o, &mut r).expect("check ran");
        r
    }

    #[test]
    fn the_check_catches_a_lost_entry_a_duplicated_entry_and_a_lost_row() {
        let disk = PowerLossDisk::new();
        let db = database(&disk, true);
        let table = load(&db, 5).expect("load");
        db.close().expect("close");
        let db = database(&disk, false);
        let schema = schema(&db, &table).expect("schema");
        let o = worker(&db, &schema, &table, 0, 1, 30, 9);
        assert!(o.surprises.is_empty() && o.errors.is_empty(), "{:?}", o.errors);
        assert!(o.acked.len() > 15, "{}", o.acked.len());
        let r = checked(&db, &table, &o);
        assert!(r.problems.is_empty(), "{:?}", r.problems);

        // One entry removed by hand: a row without its entry in insert_k2.
        let (&id, value) = table
            .loaded
            .iter()
            .find(|(id, _)| !o.row_ops.iter().any(|op| op.row == **id))
            .expect("a row the workload did not change");
        let victim = Row::decode(&Row::key_of(id), value).expect("a loaded row");
        let mut txn = db.begin();
        assert!(txn
            .delete_secondary(
                schema.secondaries[1],
                &Row::secondary_key(victim.keys[1]),
                &victim.key()
            )
            .expect("delete"));
        txn.commit().expect("commit");
        let r = checked(&db, &table, &o);
        assert_eq!(r.broken, 1, "{:?}", r.problems);
        assert!(
            r.problems.iter().any(|p| p.contains("insert_k2 lacks the entry")),
            "{:?}",
            r.problems
        );

        // Put back, then a second entry for the same row: a duplicate.
        let mut txn = db.begin();
        txn.insert_secondary(
            schema.secondaries[1],
            &Row::secondary_key(victim.keys[1]),
            &victim.key(),
            &[],
        )
        .expect("put back");
        txn.insert_secondary(schema.secondaries[0], &Row::secondary_key(7), &victim.key(), &[])
            .expect("duplicate");
        txn.commit().expect("commit");
        let r = checked(&db, &table, &o);
        assert_eq!(r.broken, 1, "{:?}", r.problems);
        assert!(
            r.problems
                .iter()
                .any(|p| p.contains(&format!("insert_k1 has the entry (7, {id}), which no row asks for"))),
            "{:?}",
            r.problems
        );
        let mut txn = db.begin();
        assert!(txn
            .delete_secondary(schema.secondaries[0], &Row::secondary_key(7), &victim.key())
            .expect("delete"));
        txn.commit().expect("commit");
        assert!(checked(&db, &table, &o).problems.is_empty());

        // An acknowledged row taken away with its entries: a lost commit,
        // not an inconsistency.
        let mut last_acked = BTreeMap::new();
        for op in o.row_ops.iter().filter(|op| o.acked.contains(&op.txn)) {
            last_acked.insert(op.row, op);
        }
        let (&row, op) = last_acked
            .iter()
            .find(|(_, op)| op.after.is_some())
            .expect("a row an acknowledged transaction wrote last");
        let txn_id = op.txn;
        let value = db
            .run(|t| t.get(schema.primary, &Row::key_of(row)))
            .expect("read")
            .expect("the row is there");
        let lost = Row::decode(&Row::key_of(row), &value).expect("decodes");
        let mut txn = db.begin();
        txn.delete(schema.primary, &lost.key()).expect("delete row");
        entries(&mut txn, &schema.secondaries, &lost, &lost.key(), Entry::Remove).expect("delete entries");
        txn.commit().expect("commit");
        let r = checked(&db, &table, &o);
        assert_eq!((r.lost, r.broken, r.uncommitted_effects), (1, 0, 0), "{:?}", r.problems);
        assert!(
            r.problems.iter().any(|p| p.contains(&format!("row {row} is absent"))),
            "{:?} (txn {txn_id:#x})",
            r.problems
        );
        db.close().expect("close");
    }

    #[test]
    fn a_rolled_back_change_found_after_recovery_is_an_uncommitted_effect() {
        let disk = PowerLossDisk::new();
        let db = database(&disk, true);
        let table = load(&db, 5).expect("load");
        let schema = schema(&db, &table).expect("schema");
        // What a worker records for a rolled-back insert ...
        let txn_id = 1 << 32;
        let row = table.written(1, 1 << 40, txn_id);
        let mut o = Outcomes::default();
        o.never_committed.insert(txn_id);
        o.row_ops.push(RowOp {
            txn: txn_id,
            row: row.id,
            after: Some(row.value()),
        });
        // ... and the row present all the same.
        let mut txn = db.begin();
        apply(
            &mut txn,
            &schema,
            &table,
            Change::Insert(row.id),
            Some(&row),
            None,
            &mut None,
        )
        .expect("insert");
        txn.commit().expect("commit");
        let r = checked(&db, &table, &o);
        assert_eq!(r.uncommitted_effects, 1, "{:?}", r.problems);
        assert!(r.problems[0].contains("never committed"), "{:?}", r.problems);
        assert_eq!(writer(&row.value()), Some(txn_id));
        db.close().expect("close");
    }
}
