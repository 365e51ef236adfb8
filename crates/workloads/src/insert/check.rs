//! The table's consistency: every secondary index holds exactly one entry
//! per primary row, `(k_j, id)` with the key `k_j` the row itself stores,
//! and nothing else (crash tests reuse [`check_consistency`]).
//!
//! One pass per secondary index (so memory is 16 bytes a row, whatever the
//! number of indexes): the primary is scanned, every row decoded and its
//! `(k_j, id)` collected and sorted; then the secondary is scanned in key
//! order, which is `(k_j, id)` order, and the two sorted sequences merged:
//! an expected pair the index lacks is a [`Mismatch::MissingEntry`], an
//! entry no row asks for a [`Mismatch::ExtraEntry`]. A row that does not
//! decode, or holds another number of keys than the table has indexes, is
//! reported once (in the first pass).
//!
//! Scans are without locks ([`Database::scan_unlocked`]): run the check on
//! a database nothing writes to (after a run, or after recovery).

use std::fmt;
use std::ops::Bound;

use flushwise_engine::btree::secondary::split_composite_key;
use flushwise_engine::btree::Direction;
use flushwise_engine::db::Database;

use super::schema::{secondary_name, InsertSchema, Row};
use super::InsertError;

/// Mismatches kept in a report (all are counted).
pub const MISMATCHES_KEPT: usize = 100;

/// One thing wrong.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mismatch {
    /// A primary row that does not decode.
    CorruptRow { key: String, reason: String },
    /// A row holding another number of secondary keys than the table has
    /// secondary indexes.
    WrongKeyCount { id: u64, keys: usize, indexes: usize },
    /// The row `id` says `key`, and the index has no `(key, id)`.
    MissingEntry { index: String, key: u32, id: u64 },
    /// The index has `(key, id)`, and no row asks for it.
    ExtraEntry { index: String, key: u32, id: u64 },
    /// An index entry that is not a `(u32, u64)` composite with an empty
    /// value.
    MalformedEntry { index: String, reason: String },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::CorruptRow { key, reason } => write!(f, "primary row with key {key}: {reason}"),
            Mismatch::WrongKeyCount { id, keys, indexes } => {
                write!(
                    f,
                    "row {id} holds {keys} secondary keys, the table has {indexes} secondary indexes"
                )
            }
            Mismatch::MissingEntry { index, key, id } => {
                write!(f, "{index} lacks the entry ({key}, {id}) of row {id}")
            }
            Mismatch::ExtraEntry { index, key, id } => {
                write!(f, "{index} has the entry ({key}, {id}), which no row asks for")
            }
            Mismatch::MalformedEntry { index, reason } => write!(f, "{index}: malformed entry: {reason}"),
        }
    }
}

/// Entries checked in one secondary index.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IndexChecked {
    pub index: String,
    pub entries: u64,
}

/// What the check found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConsistencyReport {
    /// Primary rows.
    pub rows: u64,
    pub per_index: Vec<IndexChecked>,
    pub mismatches_total: u64,
    /// The first [`MISMATCHES_KEPT`].
    pub mismatches: Vec<Mismatch>,
}

impl ConsistencyReport {
    pub fn passed(&self) -> bool {
        self.mismatches_total == 0
    }

    fn note(&mut self, m: Mismatch) {
        self.mismatches_total += 1;
        if self.mismatches.len() < MISMATCHES_KEPT {
            self.mismatches.push(m);
        }
    }

    /// One line: the verdict, or the count and the first mismatch.
    pub fn summary(&self) -> String {
        let entries: u64 = self.per_index.iter().map(|i| i.entries).sum();
        match self.mismatches.first() {
            None => format!(
                "consistency: {} rows, {} secondary indexes, {entries} secondary entries: every entry matches its row",
                self.rows,
                self.per_index.len()
            ),
            Some(first) => format!(
                "consistency: {} mismatches over {} rows and {} secondary indexes; first: {first}",
                self.mismatches_total,
                self.rows,
                self.per_index.len()
            ),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `(key, id)` of a secondary index entry.
fn decode_entry(key: &[u8], value: &[u8]) -> Result<(u32, u64), String> {
    let (secondary, primary) =
        split_composite_key(key).ok_or_else(|| format!("key {} is not a composite", hex(key)))?;
    let k: [u8; 4] = secondary
        .as_slice()
        .try_into()
        .map_err(|_| format!("key {}: secondary part of {} bytes, not 4", hex(key), secondary.len()))?;
    let id = Row::id_of(primary).map_err(|e| format!("key {}: {}", hex(key), e.reason))?;
    if !value.is_empty() {
        return Err(format!(
            "entry ({}, {id}) has a value of {} bytes",
            u32::from_be_bytes(k),
            value.len()
        ));
    }
    Ok((u32::from_be_bytes(k), id))
}

/// Checks every secondary index of `schema` against the primary rows.
/// Mismatches are in the report (`passed()` says whether there were
/// any); an error is a database error that stopped the check.
pub fn check_consistency(db: &Database, schema: &InsertSchema) -> Result<ConsistencyReport, InsertError> {
    let mut report = ConsistencyReport::default();
    let indexes = schema.secondaries.len();
    let passes = indexes.max(1);
    for pass in 0..passes {
        let first = pass == 0;
        let mut expected: Vec<(u32, u64)> = Vec::new();
        let mut rows = 0u64;
        db.scan_unlocked(
            schema.primary,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            |key, value| {
                rows += 1;
                match Row::decode(&key, &value) {
                    Ok(row) => {
                        if row.keys.len() != indexes && first {
                            report.note(Mismatch::WrongKeyCount {
                                id: row.id,
                                keys: row.keys.len(),
                                indexes,
                            });
                        }
                        if let Some(&k) = row.keys.get(pass) {
                            expected.push((k, row.id));
                        }
                    }
                    Err(e) if first => report.note(Mismatch::CorruptRow {
                        key: hex(&key),
                        reason: e.reason,
                    }),
                    Err(_) => {}
                }
                true
            },
        )?;
        if first {
            report.rows = rows;
        }
        let Some(&index) = schema.secondaries.get(pass) else {
            break;
        };
        let name = secondary_name(pass as u32 + 1);
        expected.sort_unstable();
        let mut want = expected.into_iter().peekable();
        let mut entries = 0u64;
        let mut found = Vec::new();
        db.scan_unlocked(
            index,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            |key, value| {
                entries += 1;
                let got = match decode_entry(&key, &value) {
                    Ok(got) => got,
                    Err(reason) => {
                        found.push(Mismatch::MalformedEntry {
                            index: name.clone(),
                            reason,
                        });
                        return true;
                    }
                };
                while let Some(&w) = want.peek() {
                    if w >= got {
                        break;
                    }
                    found.push(Mismatch::MissingEntry {
                        index: name.clone(),
                        key: w.0,
                        id: w.1,
                    });
                    want.next();
                }
                if want.peek() == Some(&got) {
                    want.next();
                } else {
                    found.push(Mismatch::ExtraEntry {
                        index: name.clone(),
                        key: got.0,
                        id: got.1,
                    });
                }
                true
            },
        )?;
        for (key, id) in want {
            found.push(Mismatch::MissingEntry {
                index: name.clone(),
                key,
                id,
            });
        }
        for m in found {
            report.note(m);
        }
        report.per_index.push(IndexChecked { index: name, entries });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use flushwise_engine::db::{Database, DbOptions};

    use super::super::load::{prepare, require_loaded, LoadConfig, LoadMarker};
    use super::super::schema::RowShape;
    use super::*;

    fn loaded(dir: &std::path::Path, rows: u64) -> Database {
        let options = DbOptions {
            buffer_pool_bytes: 4 << 20,
            redo_bytes: 8 << 20,
            io: flushwise_engine::storage::IoMode::Buffered,
            ..DbOptions::default()
        };
        let db = Database::create(dir, options).expect("create");
        let marker = LoadMarker {
            rows,
            shape: RowShape::new(2, 64).expect("shape"),
            seed: 3,
        };
        prepare(&db, &LoadConfig { marker, threads: 2 }, &|_, _| {}).expect("load");
        db
    }

    #[test]
    fn a_loaded_table_passes_and_each_kind_of_damage_is_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        let db = loaded(tmp.path(), 2000);
        let (_, schema) = require_loaded(&db).expect("loaded");
        let report = check_consistency(&db, &schema).expect("check");
        assert!(report.passed(), "{}", report.summary());
        assert_eq!(report.rows, 2000);
        assert_eq!(
            report.per_index.iter().map(|i| i.entries).collect::<Vec<_>>(),
            [2000, 2000]
        );

        // A row whose second index entry is lost, and an entry of no row.
        let row = Row::generate(3, 77, schema.shape);
        let mut txn = db.begin();
        assert!(txn
            .delete_secondary(schema.secondaries[1], &Row::secondary_key(row.keys[1]), &row.key())
            .expect("delete"));
        txn.insert_secondary(
            schema.secondaries[0],
            &Row::secondary_key(5),
            &Row::key_of(999_999),
            &[],
        )
        .expect("insert");
        txn.insert(schema.secondaries[0], b"junk", &[]).expect("junk");
        txn.commit().expect("commit");
        let report = check_consistency(&db, &schema).expect("check");
        assert!(!report.passed());
        assert_eq!(report.mismatches_total, 3, "{:?}", report.mismatches);
        assert!(report.mismatches.contains(&Mismatch::MissingEntry {
            index: "insert_k2".into(),
            key: row.keys[1],
            id: 77
        }));
        assert!(report.mismatches.contains(&Mismatch::ExtraEntry {
            index: "insert_k1".into(),
            key: 5,
            id: 999_999
        }));
        assert!(report
            .mismatches
            .iter()
            .any(|m| matches!(m, Mismatch::MalformedEntry { index, .. } if index == "insert_k1")));
        assert!(report.summary().contains("3 mismatches"), "{}", report.summary());

        // A corrupt primary row is named once, by its key.
        let mut txn = db.begin();
        txn.update(schema.primary, &Row::key_of(10), b"\x07").expect("update");
        txn.commit().expect("commit");
        let report = check_consistency(&db, &schema).expect("check");
        let corrupt = report
            .mismatches
            .iter()
            .filter(|m| matches!(m, Mismatch::CorruptRow { key, .. } if key == &hex(&Row::key_of(10))))
            .count();
        assert_eq!(corrupt, 1, "{:?}", report.mismatches);
        // ... and its entries are then extra (no row asks for them).
        assert!(report
            .mismatches
            .iter()
            .any(|m| matches!(m, Mismatch::ExtraEntry { id: 10, .. })));
        db.close().expect("close");
    }
}
