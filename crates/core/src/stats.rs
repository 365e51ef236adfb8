//! Cumulative counters of the buffer pool, named after InnoDB's metrics.
//!
//! Counters only grow. Whoever needs a per-interval figure (a page cleaner
//! iteration, a report line) keeps the snapshot it saw last and subtracts:
//! several consumers can then read the same pool without resetting each
//! other's view.

/// Monotonic counters. The InnoDB metric each mirrors is named per field
/// (`information_schema.innodb_metrics` / status variables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCounters {
    /// Page requests (fixes) by user threads.
    pub requests: u64,
    /// Reads issued for misses (`Innodb_buffer_pool_reads`).
    pub reads: u64,
    /// Pages created in a frame without a read.
    pub pages_created: u64,
    /// Page modifications (mini-transaction commits touching a page).
    pub modifications: u64,
    /// Pages evicted from the LRU (clean, or after their write).
    pub evictions: u64,
    /// Pages moved to the young end on access (`buffer_pages_made_young`).
    pub pages_made_young: u64,
    /// Dirty pages written by the LRU batch (`buffer_LRU_batch_flush_total_pages`); NP_LRU sums these.
    pub lru_batch_flush_pages: u64,
    /// Clean pages evicted by the LRU batch (`buffer_LRU_batch_evict_total_pages`).
    pub lru_batch_evict_pages: u64,
    /// Pages written by the flush-list batch (`buffer_flush_adaptive_total_pages`); NP_flush sums these.
    pub flush_list_pages: u64,
    /// Pages written by a page cleaner that cleans without evicting (DB2 style).
    pub cleaner_clean_pages: u64,
    /// Synchronous replacement writes by user threads: single-page flushes,
    /// and the pages of InnoDB 5.1's user LRU batches (`buf_flush_free_margin`).
    pub sync_replacement_writes: u64,
    /// Synchronous recoverability writes by user threads (`buffer_flush_sync_total_pages`); NP_sync_rec.
    pub sync_recoverability_writes: u64,
    /// Times a user thread found no free frame and had to wait or flush (`Innodb_buffer_pool_wait_free`).
    pub wait_free: u64,
    /// Times a writer had to wait for redo space (`buffer_flush_sync_waits`).
    pub sync_flush_waits: u64,
    /// Pages scanned by user threads looking for a clean victim (`buffer_LRU_search_scanned`); NP_clean.
    pub clean_victim_scanned: u64,
    /// Pages scanned by user threads looking for a dirty victim (`buffer_LRU_single_flush_scanned`); NP_dirty.
    pub dirty_victim_scanned: u64,
    /// Writes completed, all kinds.
    pub writes_completed: u64,
    /// Of `requests`: hits a shell served without the core's lock (see
    /// `crate::fast_hits`), folded in later by `note_fast_hits`.
    pub fast_hits: u64,
    /// Eviction candidates skipped because a shell held a pin on them.
    pub pin_vetoes: u64,
    /// Reads whose latency a shell reported ([`crate::buffer_pool::BufferPool::note_read_latency`]).
    pub reads_timed: u64,
    /// Sum of those reads' latencies, us (issue to completion).
    pub read_latency_us: u64,
    /// Times a user thread was held up for a free frame (it wrote a victim
    /// or waited) or for redo space (it flushed or waited), as shells
    /// report them ([`crate::buffer_pool::BufferPool::note_user_stall`]).
    pub user_stalls: u64,
    /// Time user threads spent held up for a free frame, us.
    pub free_frame_stall_us: u64,
    /// Time user threads spent held up for redo space, us.
    pub redo_space_stall_us: u64,
    /// Dirty pages an LRU phase passed over because they were in their
    /// grace (`flushwise` rule 9), counted once per chunk that passed them.
    pub lru_grace_passed_pages: u64,
    /// Users whose first clean-victim scan found nothing within its depth
    /// and so turned `try_LRU_scan` off for everyone until the next batch
    /// (5.6.15 `buf_LRU_get_free_block`, `n_iterations == 0`).
    pub lru_scans_failed: u64,
    /// Users that found the free list empty and went to a single-page
    /// flush without a clean-victim scan because `try_LRU_scan` was off
    /// (5.6.15 `buf_LRU_get_free_block`: `if (buf_pool->try_LRU_scan ||
    /// n_iterations > 0)`), however many clean pages sat at the tail.
    pub lru_scans_skipped: u64,
}

impl PoolCounters {
    /// Field-wise `self - earlier`.
    pub fn since(&self, earlier: &PoolCounters) -> PoolCounters {
        PoolCounters {
            requests: self.requests - earlier.requests,
            reads: self.reads - earlier.reads,
            pages_created: self.pages_created - earlier.pages_created,
            modifications: self.modifications - earlier.modifications,
            evictions: self.evictions - earlier.evictions,
            pages_made_young: self.pages_made_young - earlier.pages_made_young,
            lru_batch_flush_pages: self.lru_batch_flush_pages - earlier.lru_batch_flush_pages,
            lru_batch_evict_pages: self.lru_batch_evict_pages - earlier.lru_batch_evict_pages,
            flush_list_pages: self.flush_list_pages - earlier.flush_list_pages,
            cleaner_clean_pages: self.cleaner_clean_pages - earlier.cleaner_clean_pages,
            sync_replacement_writes: self.sync_replacement_writes - earlier.sync_replacement_writes,
            sync_recoverability_writes: self.sync_recoverability_writes - earlier.sync_recoverability_writes,
            wait_free: self.wait_free - earlier.wait_free,
            sync_flush_waits: self.sync_flush_waits - earlier.sync_flush_waits,
            clean_victim_scanned: self.clean_victim_scanned - earlier.clean_victim_scanned,
            dirty_victim_scanned: self.dirty_victim_scanned - earlier.dirty_victim_scanned,
            writes_completed: self.writes_completed - earlier.writes_completed,
            fast_hits: self.fast_hits - earlier.fast_hits,
            pin_vetoes: self.pin_vetoes - earlier.pin_vetoes,
            reads_timed: self.reads_timed - earlier.reads_timed,
            read_latency_us: self.read_latency_us - earlier.read_latency_us,
            user_stalls: self.user_stalls - earlier.user_stalls,
            free_frame_stall_us: self.free_frame_stall_us - earlier.free_frame_stall_us,
            redo_space_stall_us: self.redo_space_stall_us - earlier.redo_space_stall_us,
            lru_grace_passed_pages: self.lru_grace_passed_pages - earlier.lru_grace_passed_pages,
            lru_scans_failed: self.lru_scans_failed - earlier.lru_scans_failed,
            lru_scans_skipped: self.lru_scans_skipped - earlier.lru_scans_skipped,
        }
    }

    /// Time user threads spent held up for a frame or redo space, us.
    pub fn user_stall_us(&self) -> u64 {
        self.free_frame_stall_us + self.redo_space_stall_us
    }

    /// Asynchronous (page-cleaner) writes issued.
    pub fn async_writes(&self) -> u64 {
        self.lru_batch_flush_pages + self.flush_list_pages + self.cleaner_clean_pages
    }

    /// Synchronous writes issued by user threads.
    pub fn sync_writes(&self) -> u64 {
        self.sync_replacement_writes + self.sync_recoverability_writes
    }

    /// `percentage_sync_write` of Lee et al. §5.1: synchronous writes among all writes, in %.
    pub fn sync_write_pct(&self) -> f64 {
        let all = self.async_writes() + self.sync_writes();
        if all == 0 {
            0.0
        } else {
            100.0 * self.sync_writes() as f64 / all as f64
        }
    }

    /// Requests served without a read or a page creation.
    pub fn hits(&self) -> u64 {
        self.requests.saturating_sub(self.reads + self.pages_created)
    }

    /// Share of requests served from the pool (`1 - reads / requests`).
    pub fn hit_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.hits() as f64 / self.requests as f64
        }
    }
}
