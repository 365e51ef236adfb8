//! Time threads spend blocked on the shell's own latches: the core's mutex
//! (every miss, eviction, write completion and cleaner decision takes it)
//! and the page latches of the frames.
//!
//! The simulator models neither (its core decisions are instantaneous and
//! its pages have no latches), so what an engine thread waits here is part
//! of the gap between an engine run and its replay (issue #18). Each
//! thread keeps two running totals, like the key locks'
//! (`db::thread_lock_wait_ns`); a caller takes their difference around a
//! transaction.
//!
//! Invariants:
//! - an uncontended acquisition adds nothing and reads no clock: the
//!   first attempt is a `try_*`; only when it fails is the blocking
//!   acquisition timed (so the cost of measuring is paid only where the
//!   thread waits anyway);
//! - the totals only grow, and only on the thread that waited.

use std::cell::Cell;
use std::time::Instant;

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::storage::AlignedBuf;

thread_local! {
    /// This thread's time blocked acquiring the core's mutex, ns.
    static CORE_MUTEX_WAIT_NS: Cell<u64> = const { Cell::new(0) };
    /// This thread's time blocked acquiring a frame's page latch, ns.
    static PAGE_LATCH_WAIT_NS: Cell<u64> = const { Cell::new(0) };
}

/// The calling thread's time blocked on the buffer pool's core mutex so
/// far, ns (a running total; see the module doc).
pub fn thread_core_mutex_wait_ns() -> u64 {
    CORE_MUTEX_WAIT_NS.with(Cell::get)
}

/// The calling thread's time blocked on page latches so far, ns. It
/// includes waiting for another thread's read of the same page (the
/// reader holds the exclusive latch while the page is read), for a user
/// holding the page exclusively, and for a page cleaner copying it.
pub fn thread_page_latch_wait_ns() -> u64 {
    PAGE_LATCH_WAIT_NS.with(Cell::get)
}

/// Acquires with `try_acquire` first; if that fails, times `acquire` and
/// adds the wait to `total`.
fn timed<G>(
    total: &'static std::thread::LocalKey<Cell<u64>>,
    try_acquire: impl FnOnce() -> Option<G>,
    acquire: impl FnOnce() -> G,
) -> G {
    if let Some(guard) = try_acquire() {
        return guard;
    }
    let started = Instant::now();
    let guard = acquire();
    let waited = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    total.with(|t| t.set(t.get().saturating_add(waited)));
    guard
}

/// The core's mutex: a `parking_lot::Mutex` whose `lock` records the
/// caller's wait when it is contended.
pub(crate) struct CoreMutex<T>(Mutex<T>);

impl<T> CoreMutex<T> {
    pub fn new(value: T) -> Self {
        CoreMutex(Mutex::new(value))
    }

    /// Locks, adding any wait to the thread's core-mutex total.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        timed(&CORE_MUTEX_WAIT_NS, || self.0.try_lock(), || self.0.lock())
    }
}

/// A frame's page latch, alone on its cache line: threads latching
/// neighbouring frames do not share one. `read`, `read_recursive` and
/// `write` record the caller's wait when the latch is held against it;
/// the `try_*` forms wait for nothing.
#[repr(align(64))]
pub(crate) struct FrameLatch(RwLock<AlignedBuf>);

impl FrameLatch {
    pub fn new(buf: AlignedBuf) -> Self {
        FrameLatch(RwLock::new(buf))
    }

    pub fn read(&self) -> RwLockReadGuard<'_, AlignedBuf> {
        timed(&PAGE_LATCH_WAIT_NS, || self.0.try_read(), || self.0.read())
    }

    /// A shared latch that does not queue behind waiting writers (a
    /// page cleaner copying a page).
    pub fn read_recursive(&self) -> RwLockReadGuard<'_, AlignedBuf> {
        timed(
            &PAGE_LATCH_WAIT_NS,
            || self.0.try_read_recursive(),
            || self.0.read_recursive(),
        )
    }

    pub fn try_read_recursive(&self) -> Option<RwLockReadGuard<'_, AlignedBuf>> {
        self.0.try_read_recursive()
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, AlignedBuf> {
        timed(&PAGE_LATCH_WAIT_NS, || self.0.try_write(), || self.0.write())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn an_uncontended_lock_adds_nothing() {
        let m = CoreMutex::new(0u32);
        let latch = FrameLatch::new(AlignedBuf::zeroed(4096));
        let (core_before, page_before) = (thread_core_mutex_wait_ns(), thread_page_latch_wait_ns());
        for _ in 0..100 {
            *m.lock() += 1;
            drop(latch.read());
            drop(latch.write());
            drop(latch.read_recursive());
        }
        assert_eq!(thread_core_mutex_wait_ns(), core_before);
        assert_eq!(thread_page_latch_wait_ns(), page_before);
    }

    #[test]
    fn a_contended_lock_counts_the_wait_on_the_waiting_thread() {
        let m = Arc::new(CoreMutex::new(()));
        let latch = Arc::new(FrameLatch::new(AlignedBuf::zeroed(4096)));
        let held = m.lock();
        let shared = latch.read();
        let (m2, latch2) = (Arc::clone(&m), Arc::clone(&latch));
        let ready = Arc::new(std::sync::Barrier::new(2));
        let ready2 = Arc::clone(&ready);
        let waiter = std::thread::spawn(move || {
            ready2.wait();
            drop(m2.lock());
            drop(latch2.write());
            (thread_core_mutex_wait_ns(), thread_page_latch_wait_ns())
        });
        ready.wait();
        std::thread::sleep(Duration::from_millis(50));
        drop(held);
        std::thread::sleep(Duration::from_millis(50));
        drop(shared);
        let (core_ns, page_ns) = waiter.join().expect("the waiter ran");
        // It was blocked until each release, most of the 50 ms sleep
        // (5 ms leaves room for a slow start on a loaded machine); the
        // holder's own totals did not move.
        assert!(core_ns >= 5_000_000, "core mutex wait {core_ns} ns");
        assert!(page_ns >= 5_000_000, "page latch wait {page_ns} ns");
        assert_eq!(thread_core_mutex_wait_ns(), 0);
        assert_eq!(thread_page_latch_wait_ns(), 0);
    }
}
