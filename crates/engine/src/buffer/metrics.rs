//! A point-in-time view of the buffer pool under InnoDB's metric names.
//!
//! Field names are InnoDB's (`information_schema.innodb_metrics` and status
//! variables, see `/work/shared/reference/ecosystem.md` §4) so PMM users read
//! them without a glossary; hence the non-snake-case names. Counters are
//! cumulative since the shell opened (subtract two snapshots for a rate);
//! gauges are values at `time_us`.

use flushwise_core::{BufferPool, PoolCounters, TimeUs};

use crate::storage::WritePathTimes;

/// One snapshot. The master thread records one per second.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsSnapshot {
    /// Microseconds since the shell opened.
    pub time_us: TimeUs,
    /// Pages written by flush-list batches (adaptive flushing).
    pub buffer_flush_adaptive_total_pages: u64,
    /// Dirty pages written by the LRU batch.
    pub buffer_LRU_batch_flush_total_pages: u64,
    /// Clean pages evicted by the LRU batch.
    pub buffer_LRU_batch_evict_total_pages: u64,
    /// Synchronous recoverability writes by user threads (sync preflush).
    pub buffer_flush_sync_total_pages: u64,
    /// Synchronous replacement writes by user threads (single-page flushes;
    /// InnoDB has no total-pages metric for these, the name follows its style).
    pub buffer_LRU_single_flush_total_pages: u64,
    /// Times a writer waited for redo space.
    pub buffer_flush_sync_waits: u64,
    /// Times a user thread found no free frame.
    pub Innodb_buffer_pool_wait_free: u64,
    /// Pages read from disk for misses.
    pub Innodb_buffer_pool_reads: u64,
    /// Page requests (fixes).
    pub Innodb_buffer_pool_read_requests: u64,
    /// Current LSN minus the LSN of the last written checkpoint, bytes.
    pub log_lsn_checkpoint_age: u64,
    /// Dirty pages (flush-list length).
    pub Innodb_buffer_pool_pages_dirty: u32,
    /// Frames on the free list.
    pub Innodb_buffer_pool_pages_free: u32,
    /// The policy's tunables as they stand (e.g. Pscan).
    pub parameters: Vec<(&'static str, f64)>,
    /// The raw core counters behind the figures above.
    pub counters: PoolCounters,
    /// Page reads and writes by page type (`004` Table 2's INDEX vs
    /// IBUF_INDEX, from our own counters instead of blktrace).
    pub page_io: PageIoCounts,
    /// A sample of users' page reads split into the device's time, the
    /// wait for a core after it, and their own CPU.
    pub read_split: ReadSplitTimes,
    /// Time per phase of the page-write path (cumulative; see
    /// [`crate::storage::write_timing`]).
    pub write_path: WritePathTimes,
}

/// Page reads (misses) and writes (in place; a doublewrite copy is not
/// counted twice) by the type in the page header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageIoCounts {
    /// B+tree pages of indexes (InnoDB's `FIL_PAGE_INDEX`).
    pub index_reads: u64,
    pub index_writes: u64,
    /// Pages of the change buffer's tree (`FIL_PAGE_IBUF_*`).
    pub change_buffer_reads: u64,
    pub change_buffer_writes: u64,
    /// Everything else (free, load journals, never-written pages).
    pub other_reads: u64,
    pub other_writes: u64,
}

/// Users' page reads, one in four per thread, with their wall time split
/// by the reading thread's scheduler counters ([`crate::sched`]):
/// `core_wait_ns` is time runnable without a core (mostly after the device
/// answered), `on_cpu_ns` the read's own CPU (syscall, checksum); the rest
/// of `latency_ns` is the device's. Cumulative; all zero where the kernel
/// does not provide the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSplitTimes {
    pub sampled_reads: u64,
    pub latency_ns: u64,
    pub core_wait_ns: u64,
    pub on_cpu_ns: u64,
}

impl ReadSplitTimes {
    /// The counts of the window between `earlier` and `self`.
    pub fn since(&self, earlier: &ReadSplitTimes) -> ReadSplitTimes {
        ReadSplitTimes {
            sampled_reads: self.sampled_reads.saturating_sub(earlier.sampled_reads),
            latency_ns: self.latency_ns.saturating_sub(earlier.latency_ns),
            core_wait_ns: self.core_wait_ns.saturating_sub(earlier.core_wait_ns),
            on_cpu_ns: self.on_cpu_ns.saturating_sub(earlier.on_cpu_ns),
        }
    }
}

impl MetricsSnapshot {
    pub(crate) fn capture(
        time_us: TimeUs,
        pool: &BufferPool,
        checkpoint_age_bytes: u64,
        parameters: Vec<(&'static str, f64)>,
        page_io: PageIoCounts,
        read_split: ReadSplitTimes,
        write_path: WritePathTimes,
    ) -> Self {
        let c = *pool.counters();
        Self {
            time_us,
            buffer_flush_adaptive_total_pages: c.flush_list_pages,
            buffer_LRU_batch_flush_total_pages: c.lru_batch_flush_pages,
            buffer_LRU_batch_evict_total_pages: c.lru_batch_evict_pages,
            buffer_flush_sync_total_pages: c.sync_recoverability_writes,
            buffer_LRU_single_flush_total_pages: c.sync_replacement_writes,
            buffer_flush_sync_waits: c.sync_flush_waits,
            Innodb_buffer_pool_wait_free: c.wait_free,
            Innodb_buffer_pool_reads: c.reads,
            Innodb_buffer_pool_read_requests: c.requests,
            log_lsn_checkpoint_age: checkpoint_age_bytes,
            Innodb_buffer_pool_pages_dirty: pool.dirty_pages(),
            Innodb_buffer_pool_pages_free: pool.free_len(),
            parameters,
            counters: c,
            page_io,
            read_split,
            write_path,
        }
    }

    /// Pages written by the page cleaner(s), all kinds.
    pub fn cleaner_pages_written(&self) -> u64 {
        self.counters.async_writes()
    }
}
