//! [`BufferPoolShell`]: the handle users hold. It opens the shared state
//! ([`super::inner::Inner`]: frames, the core behind a mutex, the I/O
//! paths), owns the background threads ([`super::background`]) and stops
//! them before the state goes away (shutdown order: threads, then a final
//! flush and checkpoint, then the files).
//!
//! With `ShellConfig::hit_fast_path` (the default) a buffer hit that moves
//! nothing in the LRU pins its frame through [`super::hit_path`] without
//! the core's mutex, and every unfix is an atomic decrement; otherwise a
//! hit takes the mutex twice, briefly. I/O never happens under it. Time for
//! the core is microseconds since the shell's `Instant` origin.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use flushwise_core::{BufferPool, Decision, IterationRecord, Lsn, PageId, TimeUs};
use parking_lot::Mutex;

use super::inner::{CheckpointFloor, Inner, ShellConfig};
use super::metrics::MetricsSnapshot;
use super::{background, redo_apply, BufferError, Result};
use crate::page::PageSize;
use crate::redo::{Record, RedoLog};
use crate::storage::{Doublewrite, Tablespace};
use crate::trace_recorder::TraceRecorder;

/// The buffer pool shell. Share it as `Arc<BufferPoolShell>`; see the
/// module documentation.
pub struct BufferPoolShell {
    pub(crate) inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for BufferPoolShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferPoolShell")
            .field("frames", &self.inner.config.frames)
            .field("policy", &self.inner.config.policy)
            .finish()
    }
}

impl BufferPoolShell {
    /// Opens a shell over `tablespaces` (all of one page size), logging to
    /// `redo` and, if given, writing pages through `doublewrite`. Pages on
    /// disk may be older than the redo: nothing here assumes they are
    /// current (recovery applies the log through [`Self::apply_redo`]).
    pub fn open(
        config: ShellConfig,
        redo: Arc<RedoLog>,
        doublewrite: Option<Arc<Doublewrite>>,
        tablespaces: Vec<Arc<Tablespace>>,
    ) -> Result<Arc<Self>> {
        Self::open_with_floor(config, redo, doublewrite, tablespaces, None)
    }

    /// [`Self::open`] with a [`CheckpointFloor`] in force from the first
    /// moment (the background threads may checkpoint right after open,
    /// before recovery has applied anything).
    pub fn open_with_floor(
        config: ShellConfig,
        redo: Arc<RedoLog>,
        doublewrite: Option<Arc<Doublewrite>>,
        tablespaces: Vec<Arc<Tablespace>>,
        checkpoint_floor: Option<CheckpointFloor>,
    ) -> Result<Arc<Self>> {
        let config_err = |reason: String| BufferError::Config { reason };
        let Some(first) = tablespaces.first() else {
            return Err(config_err("at least one tablespace is needed".into()));
        };
        let page_size = first.page_size();
        for ts in &tablespaces {
            if ts.page_size() != page_size {
                return Err(config_err(format!(
                    "{} has page size {}, {} has {}",
                    ts.path().display(),
                    ts.page_size(),
                    first.path().display(),
                    page_size
                )));
            }
            if tablespaces.iter().filter(|t| t.space_id() == ts.space_id()).count() > 1 {
                return Err(config_err(format!("space id {} given twice", ts.space_id())));
            }
        }
        let inner = Inner::open(config, redo, doublewrite, tablespaces, checkpoint_floor, page_size)?;
        let shell = Arc::new(Self {
            inner: Arc::clone(&inner),
            threads: Mutex::new(Vec::new()),
        });
        if inner.config.background_threads {
            let handles = background::start(&inner)?;
            shell.threads.lock().extend(handles);
        }
        Ok(shell)
    }

    pub fn config(&self) -> &ShellConfig {
        &self.inner.config
    }

    pub fn page_size(&self) -> PageSize {
        self.inner.page_size
    }

    pub fn redo(&self) -> &Arc<RedoLog> {
        &self.inner.redo
    }

    /// Microseconds since the shell opened (the core's clock).
    pub fn now_us(&self) -> TimeUs {
        self.inner.now_us()
    }

    /// The first error that poisoned the shell, if any.
    pub fn poisoned(&self) -> Option<&str> {
        self.inner.poisoned.get().map(String::as_str)
    }

    /// A metrics snapshot now.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.snapshot()
    }

    /// Every user stall so far, as a histogram of single stalls
    /// (cumulative; `Histogram::since` gives a window's).
    pub fn stall_histogram(&self) -> flushwise_core::histogram::Histogram {
        self.inner.core.lock().pool.stall_histogram().clone()
    }

    /// The per-second snapshots recorded so far (oldest first, bounded).
    pub fn metrics_history(&self) -> Vec<MetricsSnapshot> {
        self.inner.metrics.lock().iter().cloned().collect()
    }

    /// The policy's current parameters.
    pub fn policy_parameters(&self) -> Vec<(&'static str, f64)> {
        self.inner.core.lock().cleaner.parameters()
    }

    /// Takes the policy's decisions recorded so far.
    pub fn drain_decisions(&self) -> Vec<Decision> {
        self.inner.core.lock().cleaner.log_mut().drain()
    }

    /// Takes the page cleaner's iteration records kept so far (with
    /// `ShellConfig::iteration_records`) and how many were dropped in all.
    pub fn drain_iteration_records(&self) -> (Vec<IterationRecord>, u64) {
        let mut core = self.inner.core.lock();
        let dropped = core.cleaner.iteration_records_dropped();
        (core.cleaner.drain_iteration_records(), dropped)
    }

    /// Test and diagnostics hook: runs `f` on the core under its mutex
    /// (e.g. `|pool| pool.check_invariants()`). Keep it short.
    pub fn with_core<R>(&self, f: impl FnOnce(&BufferPool) -> R) -> R {
        let mut core = self.inner.core.lock();
        self.inner.fold_hits(&mut core);
        f(&core.pool)
    }

    /// Checks the core's invariants and the hit path's (test hook; the
    /// core's counters include every hit served so far).
    pub fn check_invariants(&self) {
        let mut core = self.inner.core.lock();
        self.inner.fold_hits(&mut core);
        core.pool.check_invariants();
        if let Some(hp) = &self.inner.hit_path {
            hp.check(&core.pool);
        }
    }

    /// Pins the hit path holds now (0 once every guard is dropped; 0 without
    /// the fast path, whose fixes the core counts).
    pub fn fast_pins_held(&self) -> u64 {
        self.inner.hit_path.as_ref().map_or(0, |hp| hp.pins_held())
    }

    /// Installs (or, with `None`, removes) the recorder that gets every
    /// page fix and unfix user threads make through this shell's
    /// [`SpaceStore`]s (see [`crate::trace_recorder`]). Guards taken before
    /// a change keep reporting to the recorder that saw their fix.
    pub fn set_trace_recorder(&self, recorder: Option<Arc<TraceRecorder>>) {
        let mut slot = self.inner.trace.write();
        self.inner.trace_on.store(recorder.is_some(), Ordering::Relaxed);
        *slot = recorder;
    }

    /// The recorder installed now, if any.
    pub fn trace_recorder(&self) -> Option<Arc<TraceRecorder>> {
        self.inner.trace_recorder()
    }

    /// `log_free_check`: call before a mini-transaction while holding no
    /// page latch. [`SpaceStore`] calls it on a thread's first exclusive
    /// latch or allocation.
    pub fn free_check(&self) -> Result<()> {
        self.inner.free_check()
    }

    /// Writes a checkpoint at the oldest modification; returns its LSN.
    pub fn checkpoint(&self) -> Result<Lsn> {
        self.inner.checkpoint()
    }

    /// Writes every dirty page (no page latch may be held exclusively
    /// meanwhile by a thread waiting on this one).
    pub fn flush_all(&self) -> Result<()> {
        self.inner.flush_all()
    }

    /// Recovery: applies one redo record (starting at `start_lsn`) to its
    /// page through the pool if the page is older than the record. Pages
    /// never written on disk start as zeros; pages past the end of the
    /// tablespace are made to exist. The page becomes dirty with the
    /// record's LSN range, so the cleaner writes it like any other.
    pub fn apply_redo(&self, record: &Record, start_lsn: Lsn) -> Result<redo_apply::ApplyOutcome> {
        self.inner.apply_redo(record, start_lsn)
    }

    /// Recovery: reads the pages of `pages` into the pool ahead of the redo
    /// that names them, `threads` reads in flight at a time (InnoDB 5.6
    /// reads the pages its hashed log records name in batches of up to
    /// `RECV_READ_AHEAD_AREA` = 32 asynchronous reads, `recv_read_in_area`
    /// in `log0recv.cc` through `buf_read_recv_pages` in `buf0rea.cc`,
    /// instead of one synchronous read per page). Pages past the end of
    /// their tablespace, already resident, or never written are skipped;
    /// a page that fails to read is left for `apply_redo`, which reports
    /// the error where it matters. Returns the pages read.
    ///
    /// Without a `window` every page is read at once: the caller keeps
    /// `pages` within what the pool holds. With one, `pages[i]` is the
    /// redo's `window.offset + i`-th named page and is read only once the
    /// redo being applied has met fewer than `window.pages` pages before
    /// it; the reads stop when the window is finished.
    pub fn prefetch_for_recovery(&self, pages: &[PageId], threads: usize, window: Option<&ReadAheadWindow>) -> u64 {
        use std::sync::atomic::{AtomicU64, AtomicUsize};
        let next = AtomicUsize::new(0);
        let read = AtomicU64::new(0);
        let worker = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&page) = pages.get(i) else { break };
            if let Some(w) = window {
                if !w.wait_for(w.offset + i) {
                    break;
                }
            }
            if self.inner.prefetch(page) {
                read.fetch_add(1, Ordering::Relaxed);
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..threads.max(1) {
                scope.spawn(worker);
            }
            worker();
        });
        read.into_inner()
    }

    /// Clean shutdown: stops the background threads, writes every dirty
    /// page, then checkpoints at the log head. Every guard must have been
    /// dropped. Idempotent.
    pub fn shutdown(&self) -> Result<()> {
        self.stop_threads();
        self.inner.flush_all()?;
        // The core learns the log head from page changes only; records
        // after the last of them (a transaction's commit) would otherwise
        // stay after the checkpoint. With nothing dirty, the candidate is
        // then the head itself.
        let head = self.inner.redo.current_lsn();
        self.inner.core.lock().pool.note_redo(head);
        self.inner.checkpoint()?;
        Ok(())
    }

    fn stop_threads(&self) {
        {
            let mut w = self.inner.wake.lock();
            w.stop = true;
        }
        self.inner.wake_cv.notify_all();
        let handles: Vec<_> = self.threads.lock().drain(..).collect();
        for h in handles {
            // A panicked background thread has nothing left to clean up;
            // its panic was already reported on stderr.
            let _ = h.join();
        }
    }
}

impl Drop for BufferPoolShell {
    /// Without [`BufferPoolShell::shutdown`] this is a crash: threads stop,
    /// dirty pages are lost, the redo log decides what survives.
    fn drop(&mut self) {
        self.stop_threads();
    }
}

/// How far recovery's read-ahead may run ahead of the redo being applied
/// (see [`BufferPoolShell::prefetch_for_recovery`]): the applier reports
/// how many distinct pages it has met, readers wait until their page is
/// within `pages` of that.
pub struct ReadAheadWindow {
    /// Named pages read before this window started (its index base).
    pub offset: usize,
    /// How many named pages past the applier's a reader may be.
    pub pages: usize,
    met: std::sync::atomic::AtomicUsize,
    finished: std::sync::atomic::AtomicBool,
    lock: parking_lot::Mutex<()>,
    moved: parking_lot::Condvar,
}

/// A waiting reader looks again at least this often (a missed wake-up
/// costs no more).
const READ_AHEAD_POLL: std::time::Duration = std::time::Duration::from_millis(1);

impl ReadAheadWindow {
    pub fn new(offset: usize, pages: usize) -> Self {
        Self {
            offset,
            pages: pages.max(1),
            met: Default::default(),
            finished: Default::default(),
            lock: parking_lot::Mutex::new(()),
            moved: parking_lot::Condvar::new(),
        }
    }

    /// The applier has met `met` distinct named pages.
    pub fn advance(&self, met: usize) {
        let before = self.met.swap(met, Ordering::Release);
        // Wake readers once per batch of pages, not per record.
        if met / 32 != before / 32 {
            let _g = self.lock.lock();
            self.moved.notify_all();
        }
    }

    /// No more reads are wanted (the redo is applied, or failed).
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
        let _g = self.lock.lock();
        self.moved.notify_all();
    }

    /// Waits until named page `index` is within the window; false if the
    /// window finished first.
    fn wait_for(&self, index: usize) -> bool {
        loop {
            if self.finished.load(Ordering::Acquire) {
                return false;
            }
            if index < self.met.load(Ordering::Acquire) + self.pages {
                return true;
            }
            let mut g = self.lock.lock();
            self.moved.wait_for(&mut g, READ_AHEAD_POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_read_ahead_reader_waits_until_its_page_is_within_the_window() {
        let window = ReadAheadWindow::new(100, 8);
        // Pages 0..8 are within the window before anything is applied.
        assert!(window.wait_for(7));
        let reached = AtomicUsize::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(window.wait_for(40), "page 40 comes within the window");
                reached.store(1, Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(reached.load(Ordering::SeqCst), 0, "page 40 is 33 past the window");
            window.advance(32);
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(reached.load(Ordering::SeqCst), 0, "32 + 8 = 40: still one short");
            window.advance(33);
        });
        assert_eq!(reached.load(Ordering::SeqCst), 1);
        // A finished window releases every reader with "stop".
        let window = ReadAheadWindow::new(0, 1);
        std::thread::scope(|s| {
            let waiting = s.spawn(|| window.wait_for(1_000));
            window.finish();
            assert!(!waiting.join().unwrap());
        });
    }
}
