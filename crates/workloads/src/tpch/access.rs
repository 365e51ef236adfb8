//! Read access to a loaded TPC-H database for the queries: typed full and
//! range scans, point lookups, and one order's lines.
//!
//! Queries read without locks ([`Database::scan_unlocked`], *read
//! uncommitted*): a query scans millions of rows, and key locks on each
//! would fill the lock table. The engine has no multi-version reads, so a
//! query that runs beside a refresh stream may see part of an order the
//! refresh is inserting or deleting; the TPC-H specification asks for
//! consistent reads (clause 3.4), which an engine with MVCC (InnoDB's
//! consistent read) gives. The answer check runs without refreshes, where
//! the difference cannot show. This is a stated deviation, not an accident.
//!
//! Invariant: every row handed to a caller decoded cleanly; a row that does
//! not decode ends the scan with [`TpchError::Row`] naming its table.

use std::ops::Bound;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, IndexId};

use super::schema::{lineitem_prefix, Lineitem, Row, Table};
use super::TpchError;

/// The tables of a loaded database, resolved to engine indexes.
pub struct TpchDb<'db> {
    db: &'db Database,
    ids: [IndexId; 9],
}

const ALL_TABLES: [Table; 9] = [
    Table::Region,
    Table::Nation,
    Table::Supplier,
    Table::Customer,
    Table::Part,
    Table::PartSupp,
    Table::Orders,
    Table::Lineitem,
    Table::Meta,
];

impl<'db> TpchDb<'db> {
    /// Resolves every table; [`TpchError::NotLoaded`] names the first one
    /// the database does not have.
    pub fn new(db: &'db Database) -> Result<Self, TpchError> {
        let mut ids = [IndexId(0); 9];
        for (slot, table) in ids.iter_mut().zip(ALL_TABLES) {
            *slot = db.index(table.store_name()).map_err(|_| TpchError::NotLoaded {
                reason: format!(
                    "no TPC-H table {} in this database (run `flushwise tpch prepare` first)",
                    table.name()
                ),
            })?;
        }
        Ok(Self { db, ids })
    }

    pub fn database(&self) -> &'db Database {
        self.db
    }

    /// The engine index of `table`.
    pub fn id(&self, table: Table) -> IndexId {
        self.ids[ALL_TABLES.iter().position(|t| *t == table).unwrap_or(0)]
    }

    /// Every row of `R`'s table in primary-key order; `visit` returns
    /// `false` to stop.
    pub fn scan<R: Row>(&self, visit: impl FnMut(R) -> bool) -> Result<(), TpchError> {
        self.scan_range(Bound::Unbounded, Bound::Unbounded, visit)
    }

    /// The rows of `R`'s table with keys within `(start, end)`.
    pub fn scan_range<R: Row>(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        mut visit: impl FnMut(R) -> bool,
    ) -> Result<(), TpchError> {
        let mut failed = None;
        self.db.scan_unlocked(
            self.id(R::TABLE),
            start,
            end,
            Direction::Forward,
            |k, v| match R::decode(&k, &v) {
                Ok(row) => visit(row),
                Err(e) => {
                    failed = Some(e);
                    false
                }
            },
        )?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Every row of `R`'s table, collected.
    pub fn all<R: Row>(&self) -> Result<Vec<R>, TpchError> {
        let mut out = Vec::new();
        self.scan(|r| {
            out.push(r);
            true
        })?;
        Ok(out)
    }

    /// The row of `R`'s table with primary key `key` (as [`Row::key`]
    /// encodes it).
    pub fn get<R: Row>(&self, key: &[u8]) -> Result<Option<R>, TpchError> {
        match self.db.read_unlocked(self.id(R::TABLE), key)? {
            Some(v) => Ok(Some(R::decode(key, &v)?)),
            None => Ok(None),
        }
    }

    /// The lines of order `orderkey`, by line number.
    pub fn lineitems_of(&self, orderkey: i64) -> Result<Vec<Lineitem>, TpchError> {
        let prefix = lineitem_prefix(orderkey);
        let end = flushwise_engine::btree::secondary::prefix_successor(&prefix);
        let end = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        let mut out = Vec::new();
        self.scan_range(Bound::Included(prefix.as_slice()), end, |l: Lineitem| {
            out.push(l);
            true
        })?;
        Ok(out)
    }
}
