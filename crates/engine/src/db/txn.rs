//! [`Txn`]: one transaction: key locks, undo logging, commit, rollback.
//!
//! Life cycle: `Database::begin` → reads and writes → `commit` or
//! `rollback` (also on drop). A transaction logs nothing until its first
//! write, which appends `TxnBegin` with the first undo record and registers
//! the transaction's checkpoint floor. Every write is:
//! 1. exclusive lock on `(index, key)`;
//! 2. read the before-image;
//! 3. append the undo record (its own redo group, before the change);
//! 4. the B+tree change (its own mini-transaction);
//! 5. push the entry on the in-memory undo list.
//!
//! Commit appends `TxnCommit` and waits per `flush_log_at_trx_commit`;
//! rollback restores the undo list in reverse (each a normal logged tree
//! change) and appends `TxnRollback`. Both then release every lock.
//!
//! An error in the middle of an operation (deadlock, full page store, ...)
//! leaves the transaction usable for `rollback` (or further work, at the
//! caller's risk); the undo list covers every change that may have happened.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use flushwise_core::Lsn;

use super::change_buffer::Op;
use super::lock::{LockError, LockKey, LockMode, TxnId};
use super::undo::UndoEntry;
use super::{Database, DbError, Index, IndexId, Result};
use crate::btree::secondary::{composite_key, escape, split_composite_key};
use crate::btree::{BTreeError, Direction};
use crate::redo::{Record, RedoError};

/// Retries of an append that found the redo log full (a checkpoint between).
const LOG_FULL_RETRIES: u32 = 200;
const LOG_FULL_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Active,
    Finished,
}

thread_local! {
    /// Wall time this thread's commits spent waiting for the log
    /// (`commit_durability`), ns.
    static THREAD_COMMIT_WAIT_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The calling thread's time waiting at commit for the log to be written
/// (and fsynced, as `flush_log_at_trx_commit` says) so far, ns: a running
/// total a caller takes the difference of around a transaction (issue
/// #18 accounts the engine's time per transaction with it).
pub fn thread_commit_wait_ns() -> u64 {
    THREAD_COMMIT_WAIT_NS.with(std::cell::Cell::get)
}

/// A transaction. See the module documentation.
pub struct Txn<'db> {
    db: &'db Database,
    id: TxnId,
    undo: Vec<UndoEntry>,
    /// Locks this transaction holds (a cache of the lock table).
    locks: HashMap<LockKey, LockMode>,
    logged_begin: bool,
    state: State,
}

fn printable(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

impl<'db> Txn<'db> {
    pub(crate) fn new(db: &'db Database, id: TxnId) -> Self {
        Self {
            db,
            id,
            undo: Vec::new(),
            locks: HashMap::new(),
            logged_begin: false,
            state: State::Active,
        }
    }

    pub fn id(&self) -> TxnId {
        self.id
    }

    /// Row changes made so far (undo entries).
    pub fn changes(&self) -> usize {
        self.undo.len()
    }

    fn check_active(&self) -> Result<()> {
        match self.state {
            State::Active => Ok(()),
            State::Finished => Err(DbError::TxnFinished { txn: self.id }),
        }
    }

    fn lock(&mut self, index: &Index, key: &[u8], mode: LockMode) -> Result<()> {
        let lk: LockKey = (index.id.0, key.to_vec());
        if self.locks.get(&lk).is_some_and(|m| *m >= mode) {
            return Ok(());
        }
        match self.db.locks.acquire(self.id, &lk, mode) {
            Ok(()) => {
                self.locks.insert(lk, mode);
                Ok(())
            }
            Err(LockError::Deadlock { blockers }) => Err(DbError::Deadlock {
                txn: self.id,
                index: index.name.clone(),
                blockers,
            }),
            Err(LockError::Timeout { waited, blockers }) => Err(DbError::LockTimeout {
                txn: self.id,
                index: index.name.clone(),
                waited_ms: waited.as_millis() as u64,
                blockers,
            }),
            Err(LockError::HolderAbandoned { holder, reason }) => Err(DbError::LockHolderAbandoned {
                txn: self.id,
                index: index.name.clone(),
                holder,
                reason,
            }),
        }
    }

    fn index(&self, index: IndexId) -> Result<Arc<Index>> {
        self.check_active()?;
        self.db.index_by_id(index)
    }

    fn tree_err(index: &Index, e: BTreeError) -> DbError {
        DbError::Index {
            index: index.name.clone(),
            source: e,
        }
    }

    /// Appends `records` as one group, checkpointing if the log is full.
    fn append(&self, records: &[Record]) -> Result<Lsn> {
        let mut tries = 0;
        loop {
            match self.db.redo.append(records) {
                Ok(lsn) => return Ok(lsn),
                Err(RedoError::LogFull { .. }) if tries < LOG_FULL_RETRIES => {
                    tries += 1;
                    self.db.shell.checkpoint()?;
                    std::thread::sleep(LOG_FULL_WAIT);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Steps 2–5 of a write (the caller holds the exclusive lock): logs the
    /// undo entry for `key`, then runs `change`.
    fn logged_change<T>(
        &mut self,
        index: &Index,
        key: &[u8],
        before: Option<Vec<u8>>,
        change: impl FnOnce(&Index) -> std::result::Result<T, BTreeError>,
    ) -> Result<T> {
        let entry = UndoEntry {
            index_id: index.id.0,
            key: key.to_vec(),
            before,
        };
        let mut records = Vec::with_capacity(2);
        if !self.logged_begin {
            self.db.txns.register(self.id, &self.db.redo);
            records.push(Record::txn_begin(self.id));
        }
        records.push(entry.to_record(self.id));
        self.append(&records)?;
        self.logged_begin = true;
        self.undo.push(entry);
        change(index).map_err(|e| Self::tree_err(index, e))
    }

    fn check_entry(index: &Index, key: &[u8], value: &[u8]) -> Result<()> {
        let max_len = index.tree.max_entry_len();
        if key.len() + value.len() > max_len {
            return Err(Self::tree_err(
                index,
                BTreeError::EntryTooLarge {
                    key_len: key.len(),
                    value_len: value.len(),
                    max_len,
                },
            ));
        }
        Ok(())
    }

    fn read(&self, index: &Index, key: &[u8]) -> Result<Option<Vec<u8>>> {
        index.tree.get(key).map_err(|e| Self::tree_err(index, e))
    }

    /// The value of `key` (shared lock, held to the end).
    pub fn get(&mut self, index: IndexId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let index = self.index(index)?;
        self.lock(&index, key, LockMode::Shared)?;
        self.read(&index, key)
    }

    /// The value of `key` under an exclusive lock (read-modify-write without
    /// an S→X upgrade, which two readers of one key would deadlock on).
    pub fn get_for_update(&mut self, index: IndexId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let index = self.index(index)?;
        self.lock(&index, key, LockMode::Exclusive)?;
        self.read(&index, key)
    }

    /// Inserts a new key; [`DbError::DuplicateKey`] if it exists.
    pub fn insert(&mut self, index: IndexId, key: &[u8], value: &[u8]) -> Result<()> {
        let index = self.index(index)?;
        Self::check_entry(&index, key, value)?;
        self.lock(&index, key, LockMode::Exclusive)?;
        if self.read(&index, key)?.is_some() {
            return Err(DbError::DuplicateKey {
                index: index.name.clone(),
                key: printable(key),
            });
        }
        self.logged_change(&index, key, None, |i| i.tree.insert(key, value))
    }

    /// Replaces the value of an existing key; `false` (nothing done) if absent.
    pub fn update(&mut self, index: IndexId, key: &[u8], value: &[u8]) -> Result<bool> {
        let index = self.index(index)?;
        Self::check_entry(&index, key, value)?;
        self.lock(&index, key, LockMode::Exclusive)?;
        let Some(before) = self.read(&index, key)? else {
            return Ok(false);
        };
        self.logged_change(&index, key, Some(before), |i| i.tree.update(key, value))
    }

    /// Inserts or replaces; returns whether the key existed.
    pub fn upsert(&mut self, index: IndexId, key: &[u8], value: &[u8]) -> Result<bool> {
        let index = self.index(index)?;
        Self::check_entry(&index, key, value)?;
        self.lock(&index, key, LockMode::Exclusive)?;
        let before = self.read(&index, key)?;
        self.logged_change(&index, key, before, |i| i.tree.upsert(key, value))
    }

    /// Removes a key; `false` if absent.
    pub fn delete(&mut self, index: IndexId, key: &[u8]) -> Result<bool> {
        let index = self.index(index)?;
        self.lock(&index, key, LockMode::Exclusive)?;
        let Some(before) = self.read(&index, key)? else {
            return Ok(false);
        };
        self.logged_change(&index, key, Some(before), |i| i.tree.delete(key))
    }

    fn scan(
        &mut self,
        index: IndexId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: Direction,
        limit: Option<usize>,
        mode: LockMode,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let index = self.index(index)?;
        let mut out = Vec::new();
        let limit = limit.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(out);
        }
        for entry in index.tree.range(start, end, direction) {
            let (key, _) = entry.map_err(|e| Self::tree_err(&index, e))?;
            // Lock, then read again: the value seen unlocked may be stale,
            // or the key gone (deleted by the transaction we waited for).
            self.lock(&index, &key, mode)?;
            if let Some(value) = self.read(&index, &key)? {
                out.push((key, value));
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Entries with keys within `(start, end)` in `direction`, at most
    /// `limit`; each returned key is share-locked (gaps are not: phantoms
    /// are possible, see the module doc of [`crate::db`]).
    pub fn range(
        &mut self,
        index: IndexId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: Direction,
        limit: Option<usize>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.scan(index, start, end, direction, limit, LockMode::Shared)
    }

    /// [`Self::range`] with exclusive locks on the returned keys.
    pub fn range_for_update(
        &mut self,
        index: IndexId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: Direction,
        limit: Option<usize>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.scan(index, start, end, direction, limit, LockMode::Exclusive)
    }

    /// Entries whose key starts with `prefix` (locks as [`Self::range`]).
    pub fn scan_prefix(
        &mut self,
        index: IndexId,
        prefix: &[u8],
        direction: Direction,
        limit: Option<usize>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let end = crate::btree::secondary::prefix_successor(prefix);
        let end = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        self.scan(index, Bound::Included(prefix), end, direction, limit, LockMode::Shared)
    }

    fn non_unique(&self, index: IndexId, what: &'static str) -> Result<Arc<Index>> {
        let index = self.index(index)?;
        if index.unique {
            return Err(DbError::WrongIndexKind {
                index: index.name.clone(),
                kind: "unique",
                what,
            });
        }
        Ok(index)
    }

    /// Non-unique indexes: adds the entry `(secondary, primary) → value`.
    pub fn insert_secondary(&mut self, index: IndexId, secondary: &[u8], primary: &[u8], value: &[u8]) -> Result<()> {
        let index = self.non_unique(index, "insert_secondary needs a non-unique index")?;
        let key = composite_key(secondary, primary);
        let Some(cb) = self.db.active_change_buffer().cloned() else {
            return self.insert(index.id, &key, value);
        };
        // With the change buffer the leaf is not read to look for a
        // duplicate pair (the primary key's uniqueness makes it new; see
        // `change_buffer`): the insert may go to the buffer instead.
        Self::check_entry(&index, &key, value)?;
        self.lock(&index, &key, LockMode::Exclusive)?;
        self.logged_change(&index, &key, None, |i| {
            if cb.try_buffer(Op::Insert, i.id.0, &i.tree, &key, value)? {
                Ok(())
            } else {
                i.tree.insert(&key, value)
            }
        })
    }

    /// Non-unique indexes: removes the entry `(secondary, primary)`.
    pub fn delete_secondary(&mut self, index: IndexId, secondary: &[u8], primary: &[u8]) -> Result<bool> {
        let id = self.non_unique(index, "delete_secondary needs a non-unique index")?.id;
        self.delete(id, &composite_key(secondary, primary))
    }

    /// Non-unique indexes: removes the entry `(secondary, primary) → value`,
    /// which the caller knows exists because it derived it from the row it
    /// holds locked (an update of an indexed column, a row's deletion): the
    /// contract of InnoDB's buffered delete-mark and purge. Unlike
    /// [`Self::delete_secondary`] it need not read the leaf: with the
    /// change buffer active the delete may be buffered
    /// ([`super::change_buffer`]), and the undo record takes `value` from
    /// the caller.
    ///
    /// When the delete is not going to be buffered, the entry is read
    /// first and [`DbError::NoSuchEntry`] returned (nothing changed) if it
    /// is absent or holds another value. A buffered delete is checked at
    /// merge instead: an absent entry is counted
    /// (`ChangeBufferStats::merge_missing`), and a rollback would then
    /// insert the entry the caller described.
    pub fn delete_secondary_entry(
        &mut self,
        index: IndexId,
        secondary: &[u8],
        primary: &[u8],
        value: &[u8],
    ) -> Result<()> {
        let index = self.non_unique(index, "delete_secondary_entry needs a non-unique index")?;
        let key = composite_key(secondary, primary);
        Self::check_entry(&index, &key, value)?;
        self.lock(&index, &key, LockMode::Exclusive)?;
        // The change buffer, when it says it would take this delete.
        let buffering = match self.db.active_change_buffer().cloned() {
            Some(cb) => cb
                .would_buffer(Op::Delete, &index.tree, &key, value)
                .map_err(|e| Self::tree_err(&index, e))?
                .then_some(cb),
            None => None,
        };
        let Some(cb) = buffering else {
            if self.read(&index, &key)?.as_deref() != Some(value) {
                return Err(DbError::NoSuchEntry {
                    index: index.name.clone(),
                    key: printable(&key),
                });
            }
            return self.logged_change(&index, &key, Some(value.to_vec()), |i| i.tree.delete(&key).map(drop));
        };
        self.logged_change(&index, &key, Some(value.to_vec()), |i| {
            if cb.try_buffer(Op::Delete, i.id.0, &i.tree, &key, value)? {
                return Ok(());
            }
            // The leaf came in (or the buffer filled) since the hint:
            // delete in place, trusting the caller as a buffered delete does.
            if !i.tree.delete(&key)? {
                cb.note_missing_delete();
            }
            Ok(())
        })
    }

    /// Non-unique indexes: every `(primary, value)` of `secondary`, by primary key.
    pub fn lookup_secondary(&mut self, index: IndexId, secondary: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let id = self.non_unique(index, "lookup_secondary needs a non-unique index")?.id;
        let mut prefix = escape(secondary);
        prefix.extend_from_slice(&[0, 1]);
        let entries = self.scan_prefix(id, &prefix, Direction::Forward, None)?;
        Ok(entries
            .into_iter()
            .filter_map(|(k, v)| split_composite_key(&k).map(|(_, p)| (p.to_vec(), v)))
            .collect())
    }

    /// Commits: durable on return as `flush_log_at_trx_commit` says
    /// (`SyncAtCommit`: the commit record is fsynced). Locks are released.
    pub fn commit(mut self) -> Result<()> {
        self.check_active()?;
        if self.logged_begin {
            let end = match self.append(&[Record::txn_commit(self.id)]) {
                Ok(end) => end,
                Err(e) => {
                    // Not committed: roll back (best effort) and report.
                    let _ = self.finish_rollback();
                    return Err(e);
                }
            };
            self.db.txns.finish(self.id, end);
            self.state = State::Finished;
            self.db.locks.release_all(self.id);
            let waiting = std::time::Instant::now();
            let durable = self
                .db
                .redo
                .commit_durability(end, self.db.options.flush_log_at_trx_commit);
            let waited_ns = waiting.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            THREAD_COMMIT_WAIT_NS.with(|c| c.set(c.get().saturating_add(waited_ns)));
            durable?;
        } else {
            self.state = State::Finished;
            self.db.locks.release_all(self.id);
        }
        Ok(())
    }

    /// Rolls back every change (logged, through the trees), logs the
    /// rollback and releases the locks.
    pub fn rollback(mut self) -> Result<()> {
        if self.state == State::Finished {
            return Ok(());
        }
        self.finish_rollback()
    }

    fn finish_rollback(&mut self) -> Result<()> {
        let result = self.undo_all();
        self.state = State::Finished;
        // On failure the locks stay with a transaction nobody can finish
        // (the storage refused a write): the database must be reopened,
        // which rolls the transaction back at recovery. Until then the
        // requests its locks block fail at once instead of waiting.
        if let Err(e) = &result {
            self.db.locks.abandon(self.id, &e.to_string());
        }
        result?;
        self.db.locks.release_all(self.id);
        Ok(())
    }

    fn undo_all(&mut self) -> Result<()> {
        while let Some(entry) = self.undo.pop() {
            let index = self.db.index_by_id(super::IndexId(entry.index_id))?;
            restore(&index, &entry).map_err(|e| Self::tree_err(&index, e))?;
        }
        if self.logged_begin {
            let end = self.append(&[Record::txn_rollback(self.id)])?;
            self.db.txns.finish(self.id, end);
        }
        Ok(())
    }
}

/// Sets `entry.key` back to `entry.before` (idempotent).
pub(crate) fn restore(index: &Index, entry: &UndoEntry) -> std::result::Result<(), BTreeError> {
    match &entry.before {
        Some(v) => index.tree.upsert(&entry.key, v).map(|_| ()),
        None => index.tree.delete(&entry.key).map(|_| ()),
    }
}

impl Drop for Txn<'_> {
    /// A transaction dropped without commit is rolled back.
    fn drop(&mut self) {
        if self.state == State::Active {
            if let Err(e) = self.finish_rollback() {
                eprintln!("flushwise: rollback of transaction {} on drop failed: {e}", self.id);
            }
        }
    }
}
