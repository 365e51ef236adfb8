//! Where a page cleaner's write time goes: cumulative wall-clock time per
//! phase of the batch write path.
//!
//! A batch (an LRU batch or a flush-list slice handed to
//! `Inner::write_pages`) passes through: copying and sealing the frames'
//! images under their latches, waiting for the redo to be durable up to
//! the newest image (WAL), and then either the doublewrite path (wait for
//! the batch lock, write the copies in one sequential write, fsync the
//! doublewrite file, write in place, fsync the tablespaces) or, without a
//! doublewrite buffer, the in-place writes alone; finally the core is told
//! the writes completed. Each phase adds its elapsed time here, so a run's
//! report can say which phase a busy cleaner spends its time in.
//! Single-page flushes (users writing their own victim) are counted apart,
//! as one total. So are the page cleaners' decisions: every
//! `PageCleaner::poll` runs under the core's mutex, which every user miss,
//! eviction and commit also takes, so the time a cleaner spends deciding
//! is time users may wait on that mutex (`latch_wait`); it is counted per
//! poll, whether the poll ends in a batch or a sleep.
//!
//! Invariants: counters only grow (relaxed atomics; a snapshot taken while
//! a batch is in flight may hold some of its phases and not others); times
//! are microseconds of the shell's monotonic clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One phase of the batch write path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePhase {
    /// Latch, copy and seal the frames' images.
    CopyImages,
    /// Wait for the redo to be durable up to the newest image (WAL).
    WaitRedo,
    /// Wait for the doublewrite batch lock (another batch holds the slots).
    DoublewriteLockWait,
    /// The copies' sequential write to the doublewrite file.
    DoublewriteWrite,
    /// The doublewrite file's fsync.
    DoublewriteSync,
    /// The in-place page writes (up to `IN_PLACE_WRITE_DEPTH` in flight).
    InPlaceWrite,
    /// The tablespaces' fsyncs after the in-place writes.
    TablespaceSync,
    /// Telling the core the writes completed (core lock included).
    Complete,
}

impl WritePhase {
    pub const ALL: [WritePhase; 8] = [
        WritePhase::CopyImages,
        WritePhase::WaitRedo,
        WritePhase::DoublewriteLockWait,
        WritePhase::DoublewriteWrite,
        WritePhase::DoublewriteSync,
        WritePhase::InPlaceWrite,
        WritePhase::TablespaceSync,
        WritePhase::Complete,
    ];

    /// Snake-case name, as in reports (`<name>_us`).
    pub fn name(self) -> &'static str {
        match self {
            WritePhase::CopyImages => "copy_images",
            WritePhase::WaitRedo => "wait_redo",
            WritePhase::DoublewriteLockWait => "doublewrite_lock_wait",
            WritePhase::DoublewriteWrite => "doublewrite_write",
            WritePhase::DoublewriteSync => "doublewrite_sync",
            WritePhase::InPlaceWrite => "in_place_write",
            WritePhase::TablespaceSync => "tablespace_sync",
            WritePhase::Complete => "complete",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The live counters (shared by the shell's writers).
#[derive(Debug, Default)]
pub struct WritePathClock {
    phase_us: [AtomicU64; 8],
    batches: AtomicU64,
    batch_pages: AtomicU64,
    single_pages: AtomicU64,
    single_page_us: AtomicU64,
    polls: AtomicU64,
    poll_us: AtomicU64,
}

impl WritePathClock {
    /// Adds the time since `started` to `phase`; returns now, so phases
    /// can be chained.
    pub fn lap(&self, phase: WritePhase, started: Instant) -> Instant {
        let now = Instant::now();
        self.phase_us[phase.index()].fetch_add(us_between(started, now), Ordering::Relaxed);
        now
    }

    /// One batch of `pages` pages entered the write path.
    pub fn count_batch(&self, pages: usize) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.batch_pages.fetch_add(pages as u64, Ordering::Relaxed);
    }

    /// One single-page flush took `started`..now, all phases.
    pub fn count_single_page(&self, started: Instant) {
        count_since(&self.single_pages, &self.single_page_us, started);
    }

    /// One cleaner poll held the core's mutex from `started` to now.
    pub fn count_poll(&self, started: Instant) {
        count_since(&self.polls, &self.poll_us, started);
    }

    pub fn times(&self) -> WritePathTimes {
        let mut phase_us = [0; 8];
        for (out, c) in phase_us.iter_mut().zip(&self.phase_us) {
            *out = c.load(Ordering::Relaxed);
        }
        WritePathTimes {
            phase_us,
            batches: self.batches.load(Ordering::Relaxed),
            batch_pages: self.batch_pages.load(Ordering::Relaxed),
            single_pages: self.single_pages.load(Ordering::Relaxed),
            single_page_us: self.single_page_us.load(Ordering::Relaxed),
            polls: self.polls.load(Ordering::Relaxed),
            poll_us: self.poll_us.load(Ordering::Relaxed),
        }
    }
}

/// Microseconds from `started` to `now` (0 if `now` is earlier).
fn us_between(started: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(started).as_micros()).unwrap_or(u64::MAX)
}

/// One more event in `count`, and its time since `started` in `total_us`.
fn count_since(count: &AtomicU64, total_us: &AtomicU64, started: Instant) {
    count.fetch_add(1, Ordering::Relaxed);
    total_us.fetch_add(us_between(started, Instant::now()), Ordering::Relaxed);
}

/// A snapshot of [`WritePathClock`] (cumulative; `since` gives a window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritePathTimes {
    /// Per [`WritePhase`], in [`WritePhase::ALL`] order, µs.
    pub phase_us: [u64; 8],
    /// Batches written (`Inner::write_pages` calls that wrote a batch).
    pub batches: u64,
    /// Pages those batches wrote.
    pub batch_pages: u64,
    /// Single-page flushes by users, and their total time, µs.
    pub single_pages: u64,
    pub single_page_us: u64,
    /// Page-cleaner polls (decisions, each under the core's mutex) and
    /// their total time, µs.
    pub polls: u64,
    pub poll_us: u64,
}

impl WritePathTimes {
    pub fn phase(&self, phase: WritePhase) -> u64 {
        self.phase_us[phase.index()]
    }

    /// Time in every batch phase, µs.
    pub fn batch_us(&self) -> u64 {
        self.phase_us.iter().sum()
    }

    /// Both sets of counts added (the shell's and its doublewrite
    /// buffer's clocks).
    pub fn plus(&self, other: &WritePathTimes) -> WritePathTimes {
        let mut phase_us = self.phase_us;
        for (out, more) in phase_us.iter_mut().zip(&other.phase_us) {
            *out = out.saturating_add(*more);
        }
        WritePathTimes {
            phase_us,
            batches: self.batches.saturating_add(other.batches),
            batch_pages: self.batch_pages.saturating_add(other.batch_pages),
            single_pages: self.single_pages.saturating_add(other.single_pages),
            single_page_us: self.single_page_us.saturating_add(other.single_page_us),
            polls: self.polls.saturating_add(other.polls),
            poll_us: self.poll_us.saturating_add(other.poll_us),
        }
    }

    /// The counts of `self` minus those of `earlier` (saturating).
    pub fn since(&self, earlier: &WritePathTimes) -> WritePathTimes {
        let mut phase_us = [0; 8];
        for (i, out) in phase_us.iter_mut().enumerate() {
            *out = self.phase_us[i].saturating_sub(earlier.phase_us[i]);
        }
        WritePathTimes {
            phase_us,
            batches: self.batches.saturating_sub(earlier.batches),
            batch_pages: self.batch_pages.saturating_sub(earlier.batch_pages),
            single_pages: self.single_pages.saturating_sub(earlier.single_pages),
            single_page_us: self.single_page_us.saturating_sub(earlier.single_page_us),
            polls: self.polls.saturating_sub(earlier.polls),
            poll_us: self.poll_us.saturating_sub(earlier.poll_us),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn laps_add_to_their_phase_and_since_subtracts() {
        let clock = WritePathClock::default();
        let before = clock.times();
        let t0 = Instant::now() - Duration::from_millis(3);
        let t1 = clock.lap(WritePhase::DoublewriteWrite, t0);
        clock.lap(WritePhase::InPlaceWrite, t1);
        clock.count_batch(120);
        clock.count_poll(Instant::now() - Duration::from_millis(2));
        let w = clock.times().since(&before);
        assert_eq!(w.polls, 1);
        assert!(w.poll_us >= 2_000, "{}", w.poll_us);
        assert!(w.phase(WritePhase::DoublewriteWrite) >= 3_000);
        assert_eq!(w.phase(WritePhase::CopyImages), 0);
        assert_eq!((w.batches, w.batch_pages), (1, 120));
        assert_eq!(
            w.batch_us(),
            w.phase(WritePhase::DoublewriteWrite) + w.phase(WritePhase::InPlaceWrite)
        );
        assert_eq!(clock.times().since(&clock.times()), WritePathTimes::default());
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<_> = WritePhase::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WritePhase::ALL.len());
        for (i, p) in WritePhase::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
    }
}
