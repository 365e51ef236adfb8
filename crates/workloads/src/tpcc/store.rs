//! The engine-facing interface of the TPC-C workload: what a storage
//! harness must offer so that the loader, the driver, the check and the
//! export run on it.
//!
//! A store holds the [`Index`]es of [`super::schema`], every one a unique
//! ordered index of byte keys to byte values. A [`TpccTxn`] is a
//! serialisable transaction in the sense TPC-C needs (clause 3.4): reads
//! lock what they return until the end, writes lock exclusively; ranges
//! need not lock gaps, because the transactions guard each district's
//! NEW_ORDER and ORDER ranges with the DISTRICT row (see [`super::txn`]).
//! Any operation may fail with a [`StoreError`] that says whether the
//! transaction should be rolled back and retried (deadlock victim, lock
//! wait timeout).
//!
//! Invariant expected of an implementation: after `rollback` (or a failed
//! `commit`), none of the transaction's writes is visible to anyone.

use std::ops::Bound;

use thiserror::Error;

use super::schema::Index;

/// Why a store operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum StoreErrorKind {
    /// Deadlock victim or lock wait timeout: roll back and retry.
    Retryable,
    /// `insert` of a key that exists.
    DuplicateKey,
    /// The store has no such index (not created).
    NoSuchIndex,
    /// Anything else (I/O, corruption, ...): not retryable.
    Other,
}

/// An error of the store, with its cause.
#[derive(Debug, Error)]
#[error("{index}: {source}")]
pub struct StoreError {
    pub kind: StoreErrorKind,
    /// The index the operation was on, or "store".
    pub index: &'static str,
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl StoreError {
    pub fn is_retryable(&self) -> bool {
        self.kind == StoreErrorKind::Retryable
    }
}

/// Key–value pairs a range returns, in scan order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Scan direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanDirection {
    Forward,
    Backward,
}

/// How a range locks the keys it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanLock {
    Shared,
    Exclusive,
}

/// One transaction. Dropping it without `commit` rolls it back.
pub trait TpccTxn {
    /// The value of `key`, share-locked to the end.
    fn get(&mut self, index: Index, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The value of `key`, exclusively locked (read-modify-write).
    fn get_for_update(&mut self, index: Index, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Inserts a new key ([`StoreErrorKind::DuplicateKey`] if it exists).
    fn insert(&mut self, index: Index, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    /// Replaces an existing key's value; `false` if the key is absent.
    fn update(&mut self, index: Index, key: &[u8], value: &[u8]) -> Result<bool, StoreError>;
    /// Removes a key; `false` if absent.
    fn delete(&mut self, index: Index, key: &[u8]) -> Result<bool, StoreError>;
    /// Entries with keys within `(start, end)` in `direction`, at most
    /// `limit`, each locked as `lock` says.
    fn range(
        &mut self,
        index: Index,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: ScanDirection,
        limit: Option<usize>,
        lock: ScanLock,
    ) -> Result<Entries, StoreError>;
    fn commit(self) -> Result<(), StoreError>
    where
        Self: Sized;
    fn rollback(self) -> Result<(), StoreError>
    where
        Self: Sized;

    /// Entries whose key starts with `prefix`.
    fn prefix(
        &mut self,
        index: Index,
        prefix: &[u8],
        direction: ScanDirection,
        limit: Option<usize>,
        lock: ScanLock,
    ) -> Result<Entries, StoreError> {
        let end = flushwise_engine::btree::secondary::prefix_successor(prefix);
        let end = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        self.range(index, Bound::Included(prefix), end, direction, limit, lock)
    }
}

/// A store of TPC-C indexes.
pub trait TpccStore: Sync {
    type Txn<'s>: TpccTxn
    where
        Self: 's;

    /// Creates every index of [`Index::ALL`] that does not exist yet.
    fn create_indexes(&self) -> Result<(), StoreError>;
    /// Whether `index` exists.
    fn has_index(&self, index: Index) -> Result<bool, StoreError>;
    /// Starts a transaction.
    fn begin(&self) -> Self::Txn<'_>;
    /// Fills an empty index from `rows`, whose keys are strictly ascending.
    /// Returns the rows loaded. Not one transaction: a crash in the middle
    /// leaves part of the rows (the load marker detects that).
    fn bulk_load(&self, index: Index, rows: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>) -> Result<u64, StoreError>;
}
