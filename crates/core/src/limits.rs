//! Size limits, in one place for every shell (TigerBeetle keeps its limits
//! as named constants; so do we). Each says who enforces it and why.
//!
//! Invariant: `POOL_FRAMES_MIN <= DATABASE_POOL_FRAMES_MIN <=
//! RUN_POOL_FRAMES_MIN` and `POOL_FRAMES_MIN <= SIM_POOL_FRAMES_MIN`:
//! anything a run accepts, the core (and on the engine, a database)
//! accepts too.

/// The core's smallest pool (`BufferPoolConfig::validate`): an LRU with an
/// old sublist and a free frame to read into.
pub const POOL_FRAMES_MIN: u32 = 8;

/// The engine's smallest pool for an open database (`DbOptions`): a B+tree
/// split latches a leaf, its parent and a new page while the undo and
/// catalog pages stay fixed.
pub const DATABASE_POOL_FRAMES_MIN: u32 = 16;

/// The smallest pool of a workload run on the engine (`tpcc run`,
/// `compare`): connections' latched pages plus one page-cleaner LRU chunk
/// and one doublewrite batch in flight (`policy::LRU_CHUNK_PAGES` +
/// `policy::FLUSH_BATCH_PAGES` = 220).
pub const RUN_POOL_FRAMES_MIN: u64 = 256;

/// The smallest pool of a simulator run (`sim run`, experiments, trace
/// replay): the simulator latches nothing and a fix never waits for a latch,
/// so only a short LRU with its old sublist is needed; trace replays of
/// small engine runs use 1 MiB (64 pages of 16 KiB).
pub const SIM_POOL_FRAMES_MIN: u64 = 64;

/// The largest pool either shell accepts, in frames (frame ids are `u32`;
/// half of the range keeps every index arithmetic in range).
pub const POOL_FRAMES_MAX: u64 = (u32::MAX / 2) as u64;

/// Most connections (terminals, simulated agents) of one run.
pub const CONNECTIONS_MAX: u32 = 100_000;

/// Most page-cleaner threads a policy may ask for (`db2:cleaners=N`): the
/// engine runs one thread per cleaner, so this bounds threads, not just a
/// number. 128 holds paper 002's largest setting (70 cleaners, one per
/// disk of its medium system, §8.3) with room; DB2's own `num_iocleaners`
/// goes to 255 and InnoDB's `innodb_page_cleaners` to 64. More cleaners
/// than that on one buffer pool only contend for its mutex.
pub const CLEANERS_MAX: u64 = 128;

/// The largest engine pool on a machine with `ram_bytes` of memory: three
/// quarters of it (the rest for the OS, the redo buffer and the
/// connections); a larger pool would swap, and a measurement with a
/// swapping pool measures the swap device.
pub fn engine_pool_bytes_max(ram_bytes: u64) -> u64 {
    ram_bytes / 4 * 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{FLUSH_BATCH_PAGES, LRU_CHUNK_PAGES};

    #[test]
    fn limits_nest_and_a_run_holds_one_cleaner_chunk_and_batch() {
        assert!(u64::from(POOL_FRAMES_MIN) <= u64::from(DATABASE_POOL_FRAMES_MIN));
        assert!(u64::from(DATABASE_POOL_FRAMES_MIN) <= RUN_POOL_FRAMES_MIN);
        assert!(u64::from(POOL_FRAMES_MIN) <= SIM_POOL_FRAMES_MIN);
        assert!(RUN_POOL_FRAMES_MIN > u64::from(LRU_CHUNK_PAGES + FLUSH_BATCH_PAGES));
        assert_eq!(engine_pool_bytes_max(24 << 30), 18 << 30);
    }
}
