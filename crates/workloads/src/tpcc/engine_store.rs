//! [`TpccStore`] for the flushwise engine's embeddable [`Database`].
//!
//! Each [`Index`] is a unique engine index named [`Index::store_name`];
//! a [`TpccTxn`] is an engine [`Txn`] (strict two-phase key locking with
//! deadlock detection; ranges lock the keys they return, not the gaps, as
//! the `flushwise_engine::db` module documentation says). Deadlocks and
//! lock wait timeouts map to [`StoreErrorKind::Retryable`], exactly the
//! errors for which `DbError::is_retryable` holds.
//!
//! Bulk loading is the engine's `Database::load_sorted`: a bottom-up build
//! of each empty index, atomic and durable per index (the load marker of
//! [`super::load`] covers a crash between indexes).

use std::ops::Bound;

use flushwise_engine::btree::Direction;
use flushwise_engine::db::{Database, DbError, IndexId, Txn};

use super::schema::Index;
use super::store::{Entries, ScanDirection, ScanLock, StoreError, StoreErrorKind, TpccStore, TpccTxn};

fn store_err(index: Index, e: DbError) -> StoreError {
    let kind = if e.is_retryable() {
        StoreErrorKind::Retryable
    } else {
        match e {
            DbError::DuplicateKey { .. } => StoreErrorKind::DuplicateKey,
            DbError::NoSuchIndex { .. } | DbError::NoSuchIndexId { .. } => StoreErrorKind::NoSuchIndex,
            _ => StoreErrorKind::Other,
        }
    };
    StoreError {
        kind,
        index: index.name(),
        source: Box::new(e),
    }
}

fn index_id(db: &Database, index: Index) -> Result<IndexId, StoreError> {
    db.index(index.store_name()).map_err(|e| store_err(index, e))
}

/// An engine transaction.
pub struct EngineTxn<'db> {
    db: &'db Database,
    txn: Txn<'db>,
}

impl EngineTxn<'_> {
    fn id(&self, index: Index) -> Result<IndexId, StoreError> {
        index_id(self.db, index)
    }
}

impl TpccTxn for EngineTxn<'_> {
    fn get(&mut self, index: Index, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let id = self.id(index)?;
        self.txn.get(id, key).map_err(|e| store_err(index, e))
    }

    fn get_for_update(&mut self, index: Index, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let id = self.id(index)?;
        self.txn.get_for_update(id, key).map_err(|e| store_err(index, e))
    }

    fn insert(&mut self, index: Index, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        let id = self.id(index)?;
        self.txn.insert(id, key, value).map_err(|e| store_err(index, e))
    }

    fn update(&mut self, index: Index, key: &[u8], value: &[u8]) -> Result<bool, StoreError> {
        let id = self.id(index)?;
        self.txn.update(id, key, value).map_err(|e| store_err(index, e))
    }

    fn delete(&mut self, index: Index, key: &[u8]) -> Result<bool, StoreError> {
        let id = self.id(index)?;
        self.txn.delete(id, key).map_err(|e| store_err(index, e))
    }

    fn range(
        &mut self,
        index: Index,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: ScanDirection,
        limit: Option<usize>,
        lock: ScanLock,
    ) -> Result<Entries, StoreError> {
        let id = self.id(index)?;
        let direction = match direction {
            ScanDirection::Forward => Direction::Forward,
            ScanDirection::Backward => Direction::Backward,
        };
        let r = match lock {
            ScanLock::Shared => self.txn.range(id, start, end, direction, limit),
            ScanLock::Exclusive => self.txn.range_for_update(id, start, end, direction, limit),
        };
        r.map_err(|e| store_err(index, e))
    }

    fn commit(self) -> Result<(), StoreError> {
        self.txn
            .commit()
            .map_err(|e| store_err(Index::Meta, e))
            .map_err(|mut e| {
                e.index = "commit";
                e
            })
    }

    fn rollback(self) -> Result<(), StoreError> {
        self.txn
            .rollback()
            .map_err(|e| store_err(Index::Meta, e))
            .map_err(|mut e| {
                e.index = "rollback";
                e
            })
    }
}

impl TpccStore for Database {
    type Txn<'s> = EngineTxn<'s>;

    fn create_indexes(&self) -> Result<(), StoreError> {
        for index in Index::ALL {
            if !self.has_index(index)? {
                self.create_index(index.store_name(), true)
                    .map_err(|e| store_err(index, e))?;
            }
        }
        Ok(())
    }

    fn has_index(&self, index: Index) -> Result<bool, StoreError> {
        match self.index(index.store_name()) {
            Ok(_) => Ok(true),
            Err(DbError::NoSuchIndex { .. }) => Ok(false),
            Err(e) => Err(store_err(index, e)),
        }
    }

    fn begin(&self) -> EngineTxn<'_> {
        EngineTxn {
            db: self,
            txn: Database::begin(self),
        }
    }

    fn bulk_load(&self, index: Index, rows: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>) -> Result<u64, StoreError> {
        // The engine's bottom-up load: empty index, strictly ascending keys
        // (checked by the engine), durable and atomic per index when it
        // returns; InnoDB's default fill (1/16 of each page left free).
        let id = index_id(self, index)?;
        let report = self.load_sorted(id, rows).map_err(|e| store_err(index, e))?;
        Ok(report.rows)
    }
}
