//! The lock table: strict two-phase key locks with deadlock detection.
//!
//! A lock names `(index id, key bytes)`; modes are shared (reads) and
//! exclusive (writes). Compatibility: S–S only. A transaction holds every
//! lock it got until [`LockTable::release_all`] at commit or rollback
//! (strict 2PL), so no other transaction sees or overwrites its uncommitted
//! rows. An S→X upgrade is granted when the requester is the only holder.
//!
//! Waiting: a blocked request records its blockers as wait-for edges
//! (`txn → holders`) and, before sleeping and at every wake-up
//! ([`WAIT_SLICE`] at most apart, so edges follow holder changes), searches
//! the wait-for graph for a path back to itself. A cycle makes the
//! requester the victim: [`LockError::Deadlock`]. A request that waits
//! longer than the table's timeout gets [`LockError::Timeout`] (the backstop
//! for anything the graph misses). Either way the caller must roll the
//! transaction back (the `Txn` API leaves it to the caller; `Database::run`
//! does it and retries). A request that slept adds its time, from call to
//! answer, to its thread's running total ([`thread_lock_wait_ns`]).
//!
//! A transaction whose rollback failed (the storage refused a write: disk
//! full, an I/O error) can never release its locks before the database is
//! reopened, whose recovery rolls it back. [`LockTable::abandon`] marks it;
//! a request blocked by an abandoned holder fails at once with
//! [`LockError::HolderAbandoned`] instead of waiting out the timeout and
//! being retried against a lock that will never be freed.
//!
//! No fairness: new shared requests are granted while an exclusive request
//! waits (writers can starve under a stream of readers; the timeout bounds it).
//!
//! Invariants (checked by [`LockTable::check_invariants`]):
//! 1. a lock has either one exclusive holder and no shared holder, or only
//!    shared holders (at least one); empty locks are removed;
//! 2. `held[t]` lists exactly the keys whose lock `t` holds;
//! 3. `waits_for` has an entry only for a transaction inside `acquire`;
//! 4. an abandoned transaction keeps its locks; no request it blocks waits.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Longest sleep between two re-checks of a blocked request.
pub const WAIT_SLICE: Duration = Duration::from_millis(10);

/// Bound on the wait-for graph search (transactions visited).
const CYCLE_SEARCH_NODES_MAX: usize = 100_000;

thread_local! {
    /// Time the requests of this thread spent blocked in
    /// [`LockTable::acquire`] (a request that never slept adds nothing),
    /// ns, since the thread began.
    static THREAD_LOCK_WAIT_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The calling thread's time blocked on key locks so far, ns: a running
/// total that a caller takes the difference of around a transaction (the
/// lab records it per transaction type beside a trace, issue #18, as the
/// simulator models no lock).
pub fn thread_lock_wait_ns() -> u64 {
    THREAD_LOCK_WAIT_NS.with(std::cell::Cell::get)
}

pub type TxnId = u64;

/// A lock's name: index id and key.
pub type LockKey = (u32, Vec<u8>);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    Shared,
    Exclusive,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// Waiting would close a cycle; the requester is the victim.
    Deadlock { blockers: Vec<TxnId> },
    /// Waited `waited` without getting the lock.
    Timeout { waited: Duration, blockers: Vec<TxnId> },
    /// Blocked by a transaction whose rollback failed: the lock stays held
    /// until the database is reopened. Not worth a retry.
    HolderAbandoned { holder: TxnId, reason: String },
}

#[derive(Default)]
struct Lock {
    exclusive: Option<TxnId>,
    shared: Vec<TxnId>,
}

impl Lock {
    fn holders_other_than(&self, txn: TxnId, mode: LockMode) -> Vec<TxnId> {
        let mut out: Vec<TxnId> = self.exclusive.iter().copied().filter(|t| *t != txn).collect();
        if mode == LockMode::Exclusive {
            out.extend(self.shared.iter().copied().filter(|t| *t != txn));
        }
        out
    }
}

#[derive(Default)]
struct State {
    locks: HashMap<LockKey, Lock>,
    held: HashMap<TxnId, Vec<LockKey>>,
    waits_for: HashMap<TxnId, Vec<TxnId>>,
    /// Transactions whose rollback failed, with the error.
    abandoned: HashMap<TxnId, String>,
}

impl State {
    /// Grants if compatible; returns the blockers otherwise.
    fn try_grant(&mut self, txn: TxnId, key: &LockKey, mode: LockMode) -> Result<(), Vec<TxnId>> {
        let lock = self.locks.entry(key.clone()).or_default();
        let blockers = lock.holders_other_than(txn, mode);
        if !blockers.is_empty() {
            return Err(blockers);
        }
        let already = lock.exclusive == Some(txn) || lock.shared.contains(&txn);
        match mode {
            LockMode::Exclusive => {
                lock.shared.retain(|t| *t != txn);
                lock.exclusive = Some(txn);
            }
            LockMode::Shared => {
                if lock.exclusive != Some(txn) && !lock.shared.contains(&txn) {
                    lock.shared.push(txn);
                }
            }
        }
        if !already {
            self.held.entry(txn).or_default().push(key.clone());
        }
        Ok(())
    }

    /// True if following wait-for edges from `from` reaches `target`.
    fn reaches(&self, from: &[TxnId], target: TxnId) -> bool {
        let mut seen: HashSet<TxnId> = HashSet::new();
        let mut stack: Vec<TxnId> = from.to_vec();
        while let Some(t) = stack.pop() {
            if t == target {
                return true;
            }
            if !seen.insert(t) || seen.len() > CYCLE_SEARCH_NODES_MAX {
                continue;
            }
            if let Some(next) = self.waits_for.get(&t) {
                stack.extend(next.iter().copied());
            }
        }
        false
    }
}

/// The key lock table of one database.
pub struct LockTable {
    state: Mutex<State>,
    released: Condvar,
    timeout: Duration,
}

impl LockTable {
    pub fn new(timeout: Duration) -> Self {
        Self {
            state: Mutex::new(State::default()),
            released: Condvar::new(),
            timeout,
        }
    }

    /// Gets `key` in `mode` for `txn`, waiting while it conflicts. The time
    /// from the call to the answer of a request that had to sleep goes to
    /// [`thread_lock_wait_ns`].
    pub fn acquire(&self, txn: TxnId, key: &LockKey, mode: LockMode) -> Result<(), LockError> {
        let start = Instant::now();
        let mut slept = false;
        let result = self.acquire_from(txn, key, mode, start, &mut slept);
        if slept {
            let waited_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            THREAD_LOCK_WAIT_NS.with(|c| c.set(c.get().saturating_add(waited_ns)));
        }
        result
    }

    /// [`Self::acquire`]'s loop; `slept` is set once the request sleeps.
    fn acquire_from(
        &self,
        txn: TxnId,
        key: &LockKey,
        mode: LockMode,
        start: Instant,
        slept: &mut bool,
    ) -> Result<(), LockError> {
        let mut st = self.state.lock();
        loop {
            let blockers = match st.try_grant(txn, key, mode) {
                Ok(()) => {
                    st.waits_for.remove(&txn);
                    return Ok(());
                }
                Err(b) => b,
            };
            if let Some((&holder, reason)) = blockers.iter().find_map(|b| st.abandoned.get_key_value(b)) {
                let reason = reason.clone();
                st.waits_for.remove(&txn);
                self.drop_if_empty(&mut st, key);
                return Err(LockError::HolderAbandoned { holder, reason });
            }
            if st.reaches(&blockers, txn) {
                st.waits_for.remove(&txn);
                self.drop_if_empty(&mut st, key);
                return Err(LockError::Deadlock { blockers });
            }
            let waited = start.elapsed();
            if waited >= self.timeout {
                st.waits_for.remove(&txn);
                self.drop_if_empty(&mut st, key);
                return Err(LockError::Timeout { waited, blockers });
            }
            st.waits_for.insert(txn, blockers);
            let slice = WAIT_SLICE.min(self.timeout - waited);
            *slept = true;
            self.released.wait_for(&mut st, slice);
        }
    }

    fn drop_if_empty(&self, st: &mut State, key: &LockKey) {
        if st
            .locks
            .get(key)
            .is_some_and(|l| l.exclusive.is_none() && l.shared.is_empty())
        {
            st.locks.remove(key);
        }
    }

    /// Releases every lock of `txn` (commit or rollback) and wakes waiters.
    pub fn release_all(&self, txn: TxnId) {
        let mut st = self.state.lock();
        let keys = st.held.remove(&txn).unwrap_or_default();
        for key in keys {
            let empty = match st.locks.get_mut(&key) {
                Some(lock) => {
                    if lock.exclusive == Some(txn) {
                        lock.exclusive = None;
                    }
                    lock.shared.retain(|t| *t != txn);
                    lock.exclusive.is_none() && lock.shared.is_empty()
                }
                None => false,
            };
            if empty {
                st.locks.remove(&key);
            }
        }
        st.waits_for.remove(&txn);
        drop(st);
        self.released.notify_all();
    }

    /// Marks `txn` as unable to release its locks (its rollback failed with
    /// `reason`) and wakes the requests it blocks, which then fail with
    /// [`LockError::HolderAbandoned`]. Its locks stay: the rows they cover
    /// hold uncommitted changes until recovery rolls them back.
    pub fn abandon(&self, txn: TxnId, reason: &str) {
        let mut st = self.state.lock();
        st.waits_for.remove(&txn);
        st.abandoned.insert(txn, reason.to_string());
        drop(st);
        self.released.notify_all();
    }

    /// Locks held now (all transactions).
    pub fn locks_held(&self) -> usize {
        self.state.lock().held.values().map(Vec::len).sum()
    }

    /// Panics if an invariant of the module doc is broken (tests).
    pub fn check_invariants(&self) {
        let st = self.state.lock();
        let mut count = 0;
        for (key, lock) in &st.locks {
            assert!(
                lock.exclusive.is_some() == lock.shared.is_empty(),
                "lock {key:?}: exclusive {:?} with shared {:?}",
                lock.exclusive,
                lock.shared
            );
            for t in lock.exclusive.iter().chain(lock.shared.iter()) {
                assert!(
                    st.held.get(t).is_some_and(|h| h.contains(key)),
                    "txn {t} holds {key:?} untracked"
                );
                count += 1;
            }
        }
        assert_eq!(
            count,
            st.held.values().map(Vec::len).sum::<usize>(),
            "held list out of sync"
        );
        for t in st.abandoned.keys() {
            assert!(!st.waits_for.contains_key(t), "abandoned txn {t} is waiting");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> LockKey {
        (1, k.as_bytes().to_vec())
    }

    #[test]
    fn shared_locks_coexist_and_exclusive_waits_for_them() {
        let t = LockTable::new(Duration::from_millis(50));
        t.acquire(1, &key("a"), LockMode::Shared).unwrap();
        t.acquire(2, &key("a"), LockMode::Shared).unwrap();
        let e = t.acquire(3, &key("a"), LockMode::Exclusive).unwrap_err();
        assert!(matches!(e, LockError::Timeout { .. }), "{e:?}");
        t.release_all(1);
        t.release_all(2);
        t.acquire(3, &key("a"), LockMode::Exclusive).unwrap();
        t.check_invariants();
        t.release_all(3);
        assert_eq!(t.locks_held(), 0);
    }

    #[test]
    fn a_request_blocked_by_an_abandoned_holder_fails_at_once() {
        let t = std::sync::Arc::new(LockTable::new(Duration::from_secs(60)));
        t.acquire(1, &key("w"), LockMode::Exclusive).unwrap();
        let waiter = {
            let t = std::sync::Arc::clone(&t);
            std::thread::spawn(move || t.acquire(2, &key("w"), LockMode::Shared))
        };
        // The waiter is asleep on the lock (or about to be); abandoning the
        // holder must wake it long before the 60 s timeout.
        std::thread::sleep(Duration::from_millis(30));
        t.abandon(1, "no space left on device");
        let e = waiter.join().unwrap().unwrap_err();
        assert_eq!(
            e,
            LockError::HolderAbandoned {
                holder: 1,
                reason: "no space left on device".into()
            }
        );
        // A new request fails the same way; other keys are unaffected.
        assert!(matches!(
            t.acquire(3, &key("w"), LockMode::Exclusive),
            Err(LockError::HolderAbandoned { holder: 1, .. })
        ));
        t.acquire(3, &key("other"), LockMode::Exclusive).unwrap();
        t.check_invariants();
        assert_eq!(t.locks_held(), 2, "the abandoned lock stays held");
    }

    #[test]
    fn a_blocked_request_counts_its_wait_on_its_own_thread_only() {
        let t = std::sync::Arc::new(LockTable::new(Duration::from_secs(60)));
        let before = thread_lock_wait_ns();
        t.acquire(1, &key("w"), LockMode::Exclusive).unwrap();
        assert_eq!(thread_lock_wait_ns(), before, "a granted request waited for nothing");
        let waiter = {
            let t = std::sync::Arc::clone(&t);
            std::thread::spawn(move || {
                let start = thread_lock_wait_ns();
                t.acquire(2, &key("w"), LockMode::Shared).unwrap();
                thread_lock_wait_ns() - start
            })
        };
        // Release only once the waiter is blocked, and 20 ms after.
        while !t.state.lock().waits_for.contains_key(&2) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        t.release_all(1);
        let waited_ns = waiter.join().unwrap();
        assert!(
            waited_ns >= 20_000_000,
            "the waiter slept at least until the release: {waited_ns} ns"
        );
        assert_eq!(thread_lock_wait_ns(), before, "the holder's thread waited for nothing");
        t.release_all(2);
    }

    #[test]
    fn sole_shared_holder_upgrades() {
        let t = LockTable::new(Duration::from_millis(50));
        t.acquire(1, &key("a"), LockMode::Shared).unwrap();
        t.acquire(1, &key("a"), LockMode::Exclusive).unwrap();
        t.acquire(1, &key("a"), LockMode::Shared).unwrap();
        t.check_invariants();
        assert_eq!(t.locks_held(), 1);
    }
}
