//! The redo log as the pool sees it: the log head, the free check a writer
//! runs (`log_free_check`: sync preflush past the margin), when a checkpoint
//! is due (each period, or at once past the async age) and what a finished
//! checkpoint moves (invariant 4 of the parent module).

use super::*;

impl BufferPool {
    /// Advances the log head without touching a page (e.g. commit records).
    pub fn note_redo(&mut self, end_lsn: Lsn) {
        if end_lsn > self.redo.current_lsn {
            self.redo.current_lsn = end_lsn;
        }
    }

    /// `log_free_check` before generating redo: past the sync margin the
    /// writer flushes the flush list itself (`log_checkpoint_margin`,
    /// `log_preflush_pool_modified_pages`). Under 5.6.15's rule it flushes
    /// up to `oldest + 2 x (age - sync_margin)`, and while a flush-list
    /// batch (the cleaner's or another writer's) is in flight it waits for
    /// that batch and checks again (`buf_flush_list` skips a busy instance,
    /// then `buf_flush_wait_batch_end`); under 5.7's, one times the excess.
    pub fn redo_free_check(&mut self) -> FreeCheck {
        let age = self.redo_age_bytes();
        let sync_margin = self.redo.margins.max_modified_age_sync_bytes;
        if age <= sync_margin {
            return FreeCheck::Proceed;
        }
        self.counters.sync_flush_waits += 1;
        let advance = match self.free_rule.preflush_advance {
            PreflushAdvance::TwiceExcessWaitRunning => {
                let running = self.pending_writes[WriteKind::FlushList.index()]
                    + self.pending_writes[WriteKind::SyncRecoverability.index()];
                if running > 0 {
                    return FreeCheck::WaitForFlush;
                }
                (age - sync_margin).saturating_mul(2)
            }
            PreflushAdvance::Excess => age - sync_margin,
            // The cleaner flushes; completions wake the writer to check again.
            PreflushAdvance::WaitForCleaner => return FreeCheck::WaitForFlush,
        };
        let target = self.oldest_modification().advance(advance);
        let (writes, _) = self.flush_list_batch(u32::MAX, target, WriteKind::SyncRecoverability);
        if writes.is_empty() {
            FreeCheck::WaitForFlush
        } else {
            FreeCheck::SyncFlush(writes)
        }
    }

    /// Whether a shell should write a checkpoint at `now`, and why. One rule
    /// for every shell (the simulator's event loop, the engine's master
    /// thread and its writers' free check):
    /// - [`CheckpointReason::AgeMargin`]: the checkpoint age (log head minus
    ///   the last checkpoint) passed `max_checkpoint_age_async`; InnoDB's
    ///   `log_checkpoint_margin` has the writer checkpoint at once;
    /// - [`CheckpointReason::Periodic`]: `checkpoint_interval_us` passed
    ///   since the last checkpoint (the master thread's).
    ///
    /// `None` when neither holds, or when the checkpoint could not move
    /// (the oldest modification is at the last checkpoint; InnoDB's
    /// `log_checkpoint` returns early then too). The LSN to write is
    /// [`Self::checkpoint_candidate`] (a shell may lower it, never raise it).
    pub fn checkpoint_due(&self, now: TimeUs) -> Option<CheckpointReason> {
        if self.checkpoint_candidate() <= self.redo.checkpoint_lsn {
            return None;
        }
        if self.redo.checkpoint_age_bytes() > self.redo.margins.max_checkpoint_age_async_bytes {
            Some(CheckpointReason::AgeMargin)
        } else if now.saturating_sub(self.last_checkpoint_us) >= self.config.checkpoint_interval_us {
            Some(CheckpointReason::Periodic)
        } else {
            None
        }
    }

    /// When the periodic checkpoint of [`Self::checkpoint_due`] is next due
    /// (a shell's background thread sleeps until then).
    pub fn periodic_checkpoint_at_us(&self) -> TimeUs {
        self.last_checkpoint_us
            .saturating_add(self.config.checkpoint_interval_us)
    }

    /// A checkpoint at `lsn` is durable; `now` starts the next period of
    /// [`Self::checkpoint_due`].
    pub fn note_checkpoint(&mut self, lsn: Lsn, now: TimeUs) {
        assert!(
            lsn <= self.checkpoint_candidate(),
            "checkpoint {lsn} passes a dirty page"
        );
        if lsn > self.redo.checkpoint_lsn {
            self.redo.checkpoint_lsn = lsn;
        }
        self.last_checkpoint_us = self.last_checkpoint_us.max(now);
    }
}
