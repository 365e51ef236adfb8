//! The shell's background threads: page cleaners and the master thread.
//!
//! A page-cleaner thread per cleaner slot of the policy drives
//! `PageCleaner::poll` on real time: a `Write` action is copied, logged
//! (WAL) and written by the thread itself before it polls again, so both
//! `WaitFor::AllWrites` and `WaitFor::AnyWrite` are satisfied when the batch
//! returns (the batch is written synchronously: the conservative reading of
//! "any"); a `Sleep` is a condvar wait with its timeout, cut short by a wake
//! event (`take_wake` after a user operation) or a write completion if the
//! sleep allows it. The master thread checkpoints and records a metrics
//! snapshot at their periods (InnoDB's master thread checkpoints about once
//! per second).
//!
//! Invariants: every thread exits promptly once `WakeState::stop` is set;
//! after the shell is poisoned no thread issues I/O (they wait for stop).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use flushwise_core::{CleanerAction, Sleep, WriteKind};

use super::inner::{Inner, LatchWait};
use super::{BufferError, Result};

pub(crate) fn start(inner: &Arc<Inner>) -> Result<Vec<JoinHandle<()>>> {
    let cleaners = inner.core.lock().cleaner.cleaner_count();
    let mut handles = Vec::new();
    for c in 0..cleaners {
        let sh = Arc::clone(inner);
        let name = format!("page-cleaner-{c}");
        let h = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || cleaner_loop(&sh, c))
            .map_err(|source| BufferError::Spawn { name, source })?;
        handles.push(h);
    }
    let sh = Arc::clone(inner);
    let name = "buffer-master".to_string();
    let h = std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || master_loop(&sh))
        .map_err(|source| BufferError::Spawn { name, source })?;
    handles.push(h);
    Ok(handles)
}

fn cleaner_loop(inner: &Inner, c: u32) {
    loop {
        let (stop, event_seq, write_seq) = {
            let w = inner.wake.lock();
            (w.stop, w.event_seq, w.write_seq)
        };
        if stop {
            return;
        }
        if inner.check_poison().is_err() {
            wait_for_stop(inner);
            return;
        }
        let now = inner.now_us();
        let action = {
            let mut guard = inner.core.lock();
            // The decision's hold of the mutex, from acquired to released
            // (the wait to acquire it is the thread's `latch_wait` total).
            let held = Instant::now();
            let core = &mut *guard;
            let action = core.cleaner.poll(&mut core.pool, c, now);
            drop(guard);
            inner.count_cleaner_poll(held);
            action
        };
        match action {
            CleanerAction::Write { writes, .. } => {
                // 5.6.15 `buf_flush_page`: an LRU-batch write takes the
                // page latch without waiting and skips a latched page (its
                // holder may be a user waiting for the very frame this
                // batch frees); a flush-list write waits for the latch.
                let latch = if writes.iter().all(|w| w.kind == WriteKind::LruBatch) {
                    LatchWait::Try
                } else {
                    LatchWait::Block
                };
                // An error poisons the shell; the loop then parks.
                let _ = inner.write_pages(writes, latch);
            }
            CleanerAction::Sleep(sleep) => sleep_until_woken(inner, sleep, event_seq, write_seq),
        }
    }
}

fn sleep_until_woken(inner: &Inner, sleep: Sleep, event_seq: u64, write_seq: u64) {
    let deadline = sleep.max_us.map(|us| Instant::now() + Duration::from_micros(us));
    let mut w = inner.wake.lock();
    loop {
        if w.stop
            || (sleep.wake_on_event && w.event_seq != event_seq)
            || (sleep.wake_on_write_completion && w.write_seq != write_seq)
        {
            return;
        }
        match deadline {
            Some(d) => {
                if Instant::now() >= d || inner.wake_cv.wait_until(&mut w, d).timed_out() {
                    return;
                }
            }
            None => inner.wake_cv.wait(&mut w),
        }
    }
}

fn wait_for_stop(inner: &Inner) {
    let mut w = inner.wake.lock();
    while !w.stop {
        inner.wake_cv.wait(&mut w);
    }
}

fn master_loop(inner: &Inner) {
    let start = Instant::now();
    let mut next_metrics = start + inner.config.metrics_interval;
    loop {
        // The core says when the periodic checkpoint is due (its clock is
        // the shell's `now_us`).
        let next_checkpoint = {
            let due_us = inner.core.lock().pool.periodic_checkpoint_at_us();
            match due_us.saturating_sub(inner.now_us()) {
                // Past due but not due: nothing to advance; look again a
                // period later.
                0 => Instant::now() + inner.config.checkpoint_interval,
                wait_us => Instant::now() + Duration::from_micros(wait_us),
            }
        };
        {
            let mut w = inner.wake.lock();
            let until = next_checkpoint.min(next_metrics);
            while !w.stop && Instant::now() < until {
                inner.wake_cv.wait_until(&mut w, until);
            }
            if w.stop {
                return;
            }
        }
        let now = Instant::now();
        if inner.core.lock().pool.checkpoint_due(inner.now_us()).is_some() {
            // A failure poisons the shell; users see it on their next write.
            let _ = inner.checkpoint();
        }
        if now >= next_metrics {
            inner.record_snapshot();
            next_metrics = now + inner.config.metrics_interval;
        }
    }
}
