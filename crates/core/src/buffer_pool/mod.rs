//! The buffer pool as a sans-IO state machine, faithful to InnoDB 5.6.
//!
//! A fixed array of frames, a page table (page id -> frame) and three lists:
//! - **free**: frames holding no page, usable at once;
//! - **LRU**: every resident page, clean or dirty, split InnoDB-style into a
//!   *young* and an *old* sublist. A page read from disk enters at the head
//!   of the old sublist (the midpoint, `innodb_old_blocks_pct` = 37%) and is
//!   made young only when accessed again at least `innodb_old_blocks_time`
//!   (1 s) after its first access. The LRU tail is the old sublist's tail;
//! - **flush list**: exactly the dirty pages, ordered by oldest modification
//!   LSN (head = newest, tail = oldest). Its tail bounds the checkpoint.
//!
//! The pool never does I/O. It answers requests with what the shell must do
//! ([`FixOutcome`], [`WriteOrder`], [`FreeCheck`]) and is told when the I/O
//! finished (`complete_read`, `complete_write`). Time is a parameter.
//!
//! # Frame states
//!
//! ```text
//!            fix (miss): take free frame            complete_read
//!   FREE ───────────────────────────────> READING ────────────────> CLEAN
//!    ^                                                     note_modification
//!    │ evict (unfixed, no I/O)                 CLEAN ──────────────────────> DIRTY
//!    │                                                  start_write
//!    ├──────────────────────── CLEAN          DIRTY ─────────────> WRITING
//!    │                                                 complete_write
//!    │ complete_write with evict_after_write  WRITING ────────────> CLEAN (or DIRTY
//!    └──────────────────────────────────────── WRITING    if modified meanwhile)
//! ```
//! READING, CLEAN, DIRTY and WRITING frames are *resident*: in the page table
//! and on the LRU. Any resident frame may also be fixed (pinned) by users;
//! a fixed frame is never evicted; a READING frame is never written.
//!
//! # Invariants (checked by [`BufferPool::check_invariants`])
//! 1. Every frame is either free (on the free list, not in the page table,
//!    on no other list, unfixed, clean, no I/O) or resident (in the page table
//!    under its page id, on exactly one of the young/old sublists).
//! 2. `free + |LRU| = frames`; the page table holds exactly the resident frames.
//! 3. A frame is on the flush list iff its oldest modification is non-zero;
//!    the flush list is ordered by oldest modification, newest at the head.
//! 4. `oldest_modification <= newest_modification <= current_lsn`.
//! 5. A WRITING frame is dirty; a frame modified while WRITING records the
//!    first such modification and stays dirty when the write completes.
//! 6. The old sublist holds `old_blocks_pct` of the LRU within
//!    `BUF_LRU_OLD_TOLERANCE` once the LRU reaches `lru_old_min_len`, and is
//!    empty below that.
//! 7. The pending-I/O counters equal the number of frames in each I/O state.
//! 8. With a [`FastHits`] shell: the access rule and freed-page clock the
//!    shell holds equal the core's (see [`crate::fast_hits`]).
//! 9. The LRU index ([`lru_index`]) holds exactly the LRU's frames in LRU
//!    order, each flagged with at least its frame's victim flags
//!    (replaceable; flushable and unfixed), so the victim searches it
//!    answers equal the walks from the tail they stand for.
//!
//! # Hits served outside the core
//! A pool built with [`BufferPool::with_fast_hits`] shares eviction with a
//! shell that pins frames itself: every eviction first asks the shell
//! ([`FastHits::try_evict`]; a veto counts in `PoolCounters::pin_vetoes` and
//! the page stays, like a fixed one), the shell is told each frame's
//! [`AccessRule`] so it knows which hits need the core for an LRU move, and
//! the hits it served are added with [`BufferPool::note_fast_hits`].
//! `fix_count` counts fixes taken through the core only.
//!
//! # Who writes synchronously
//! A miss with no free frame scans the LRU tail for a clean victim (NP_clean,
//! `buf_LRU_scan_and_free_block`); failing that, it picks the first flushable
//! dirty page from the tail (NP_dirty, `buf_flush_single_page_from_LRU`): a
//! **synchronous replacement write**. A writer whose redo age exceeds the
//! sync margin must flush the flush list up to the needed LSN itself
//! (`log_preflush_pool_modified_pages`): **synchronous recoverability writes**.

use crate::fast_hits::{AccessRule, FastHits};
use crate::free_page_path::{FreePageRule, LruWrittenPages, PreflushAdvance};
use crate::histogram::Histogram;
use crate::list::{FrameList, Link, Links, LinksMut, NIL};
use crate::page_table::{new_page_table, PageTable};
use crate::redo_space::{RedoConfig, RedoSpace};
use crate::stats::PoolCounters;
use crate::types::{FrameId, Lsn, PageId, TimeUs};

mod checkpoint;
mod invariants;
mod lists;
mod lru_index;
mod victim;

use lists::{FlushLinks, FlushLinksMut, LruLinks};
use lru_index::LruIndex;

/// `BUF_LRU_OLD_RATIO_DIV` (buf0lru.h): old ratios are in 1/1024ths.
const OLD_RATIO_DIV: u64 = 1024;
/// `BUF_LRU_OLD_TOLERANCE` (buf0lru.h): slack before the old pointer moves.
const OLD_TOLERANCE: u32 = 20;

/// Why [`BufferPool::checkpoint_due`] says a checkpoint is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointReason {
    /// The background period passed.
    Periodic,
    /// The checkpoint age passed `max_checkpoint_age_async`.
    AgeMargin,
}

/// Static configuration; defaults are InnoDB 5.6's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferPoolConfig {
    /// Number of frames (`innodb_buffer_pool_size / page size`).
    pub frames: u32,
    /// Page size in bytes (16 KiB as InnoDB's default).
    pub page_size_bytes: u32,
    /// `innodb_old_blocks_pct`, default 37.
    pub old_blocks_pct: u32,
    /// `innodb_old_blocks_time`, default 1000 ms in 5.6.
    pub old_blocks_time_us: TimeUs,
    /// `BUF_LRU_OLD_MIN_LEN` = 512: no old sublist below this LRU length.
    pub lru_old_min_len: u32,
    /// `BUF_LRU_MIN_LEN` = 256: the LRU batch does not evict below this.
    pub lru_min_len: u32,
    /// Depth of a user's first clean-victim scan until a page cleaner sets
    /// its policy's rule ([`BufferPool::set_free_page_rule`]): 5.7's
    /// `BUF_LRU_SEARCH_SCAN_THRESHOLD` = 100. A 5.6 policy replaces it with
    /// its Pscan (see [`crate::free_page_path`]).
    pub lru_search_scan_threshold: u32,
    pub redo: RedoConfig,
    /// Period of the background checkpoint ([`BufferPool::checkpoint_due`]).
    /// InnoDB 5.6's master thread checkpoints from its once-a-second active
    /// loop; 1 s is what both shells have always used.
    pub checkpoint_interval_us: TimeUs,
}

impl Default for BufferPoolConfig {
    fn default() -> Self {
        Self {
            frames: 8192,
            page_size_bytes: 16384,
            old_blocks_pct: 37,
            old_blocks_time_us: 1_000_000,
            lru_old_min_len: 512,
            lru_min_len: 256,
            lru_search_scan_threshold: 100,
            redo: RedoConfig::default(),
            checkpoint_interval_us: 1_000_000,
        }
    }
}

impl BufferPoolConfig {
    /// Pools of at least this many frames (64 MiB of 16 KiB pages) keep
    /// InnoDB's list limits; smaller ones get [`Self::small`]'s.
    pub const INNODB_LIMITS_MIN_FRAMES: u32 = 4096;

    /// The configuration both shells use for a pool of `frames` frames:
    /// InnoDB's limits from [`Self::INNODB_LIMITS_MIN_FRAMES`] frames on,
    /// [`Self::small`]'s below (where InnoDB's 512-page old-list minimum and
    /// 256-page LRU minimum would be most of the pool).
    pub fn for_frames(frames: u32) -> Self {
        if frames >= Self::INNODB_LIMITS_MIN_FRAMES {
            Self {
                frames,
                ..Self::default()
            }
        } else {
            Self::small(frames)
        }
    }

    /// A configuration for `frames` frames with the small-list limits scaled
    /// down so that tiny pools (tests) still exercise every mechanism.
    pub fn small(frames: u32) -> Self {
        Self {
            frames,
            lru_old_min_len: (frames / 4).clamp(4, 512),
            lru_min_len: (frames / 8).clamp(2, 256),
            lru_search_scan_threshold: (frames / 4).clamp(4, 100),
            ..Self::default()
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.frames < crate::limits::POOL_FRAMES_MIN {
            return Err(format!(
                "buffer pool of {} frames: at least {} are needed",
                self.frames,
                crate::limits::POOL_FRAMES_MIN
            ));
        }
        if !(5..=95).contains(&self.old_blocks_pct) {
            return Err(format!(
                "old_blocks_pct {} out of range: InnoDB accepts 5..=95",
                self.old_blocks_pct
            ));
        }
        if !self.page_size_bytes.is_power_of_two() || !(4096..=65536).contains(&self.page_size_bytes) {
            return Err(format!(
                "page size {} bytes: a power of two from 4096 to 65536 is needed",
                self.page_size_bytes
            ));
        }
        Ok(())
    }
}

/// Why a page is being written; decides counters and what follows completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteKind {
    /// Page-cleaner LRU batch: the page is evicted once written.
    LruBatch,
    /// Page-cleaner flush-list batch: the page stays resident, now clean.
    FlushList,
    /// A cleaner that cleans LRU-tail pages without evicting them (DB2).
    CleanerClean,
    /// A user thread found no free or clean frame (single-page flush).
    SyncReplacement,
    /// A user thread needed redo space (sync preflush).
    SyncRecoverability,
    /// A user thread's LRU flush batch keeping InnoDB 5.1's free margin
    /// (`buf_flush_free_margin`, see [`crate::free_page_path::FreeMargin`]):
    /// the page stays resident, now clean, for users to evict. Counted with
    /// the synchronous replacement writes: a user thread wrote it to get
    /// frames.
    UserLruBatch,
}

impl WriteKind {
    pub const ALL: [WriteKind; 6] = [
        WriteKind::LruBatch,
        WriteKind::FlushList,
        WriteKind::CleanerClean,
        WriteKind::SyncReplacement,
        WriteKind::SyncRecoverability,
        WriteKind::UserLruBatch,
    ];

    /// Written by a user thread rather than a page cleaner.
    pub fn is_synchronous(self) -> bool {
        matches!(
            self,
            WriteKind::SyncReplacement | WriteKind::SyncRecoverability | WriteKind::UserLruBatch
        )
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Io {
    None,
    Read,
    Write(WriteKind),
}

/// What a user must do after asking for a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixOutcome {
    /// The page is resident; the frame is now fixed by the caller.
    Hit(FrameId),
    /// The page was not resident: `frame` is assigned to it and fixed by the
    /// caller, who reads the page into it and then calls `complete_read`
    /// (or, for a created page, uses it at once).
    Miss(FrameId),
    /// Another request is reading the page into `frame`: wait for that read
    /// to complete, then ask again.
    WaitRead(FrameId),
    /// No free frame and no clean victim near the LRU tail: the caller must
    /// write this dirty page synchronously, report `complete_write`, and ask
    /// again with `attempt + 1`.
    SyncReplacementWrite(WriteOrder),
    /// No frame can be freed now (every page is fixed or under I/O, or the
    /// dirty pages are all being written): wait for an unfix or an I/O
    /// completion and ask again with `attempt + 1` (which scans the whole
    /// LRU for a clean victim).
    NoFrame,
    /// InnoDB 5.1's free margin is short and no user batch is running: the
    /// caller runs one. It takes the writes with
    /// [`BufferPool::take_user_lru_batch`], writes them (through the
    /// doublewrite buffer), reports each `complete_write`, and asks again
    /// with `attempt + 1`. Meanwhile other users get `NoFrame`.
    UserLruBatch,
}

/// Whether a fix that misses reads the page or creates it empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixIntent {
    Read,
    Create,
}

/// A page write the shell must perform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOrder {
    pub frame: FrameId,
    pub page: PageId,
    /// Newest modification of the page when the write started: the page LSN
    /// written. The redo up to it must be durable first (WAL).
    pub page_lsn: Lsn,
    pub kind: WriteKind,
}

/// What a writer must do before generating redo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FreeCheck {
    /// Redo age is below the sync margin.
    Proceed,
    /// Write these pages synchronously (recoverability writes), report their
    /// completion, then check again.
    SyncFlush(Vec<WriteOrder>),
    /// The pages that must reach disk are being written by others: wait for
    /// a write completion and check again.
    WaitForFlush,
}

/// Conditions under which the pool asks the page cleaner(s) to wake up
/// (DB2's triggers; InnoDB cleaners run on a timer and leave these off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeThresholds {
    /// Wake when the number of dirty pages exceeds this.
    pub dirty_pages: Option<u32>,
    /// Wake when the redo age (head minus oldest modification) exceeds this.
    pub redo_age_bytes: Option<u64>,
    /// Wake when a user thread has to write a dirty victim.
    pub on_sync_replacement: bool,
    /// Wake when a user takes a free frame and fewer than this many are
    /// left (`flushwise`'s low watermark).
    pub free_pages_below: Option<u32>,
    /// With `free_pages_below`: also count the pages within this depth of
    /// the LRU tail that a user takes without a write
    /// ([`BufferPool::takeable_without_write`]); 0 counts free frames only.
    pub takeable_depth_pages: u32,
}

/// What a user thread was held up for ([`BufferPool::note_user_stall`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallKind {
    /// No free frame: it wrote a victim itself or waited.
    FreeFrame,
    /// The redo log was past its sync margin: it flushed or waited.
    RedoSpace,
}

/// One LRU-batch chunk's outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LruChunk {
    pub writes: Vec<WriteOrder>,
    pub evicted: u32,
    pub scanned: u32,
}

/// How the LRU batch treats the tail pages it scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruMode {
    /// InnoDB: evict clean pages to the free list, write dirty ones and
    /// evict them once written.
    EvictToFree,
    /// DB2: write dirty pages near the tail and leave them resident, clean.
    CleanOnly,
}

#[derive(Clone, Debug)]
struct Frame {
    page: PageId,
    resident: bool,
    fix_count: u32,
    io: Io,
    /// Start LSN of the first modification not yet on disk; ZERO when clean.
    oldest_modification: Lsn,
    /// End LSN of the latest modification (the page LSN in memory).
    newest_modification: Lsn,
    /// First modification that happened while a write was in flight.
    remodified_lsn: Lsn,
    evict_after_write: bool,
    in_old: bool,
    first_access_us: TimeUs,
    /// Pool's freed-page clock when the page was last made young.
    freed_page_clock: u64,
    lru: Link,
    flush: Link,
}

impl Frame {
    fn new() -> Self {
        Self {
            page: PageId::default(),
            resident: false,
            fix_count: 0,
            io: Io::None,
            oldest_modification: Lsn::ZERO,
            newest_modification: Lsn::ZERO,
            remodified_lsn: Lsn::ZERO,
            evict_after_write: false,
            in_old: false,
            first_access_us: 0,
            freed_page_clock: 0,
            lru: Link::default(),
            flush: Link::default(),
        }
    }

    fn is_dirty(&self) -> bool {
        self.oldest_modification != Lsn::ZERO
    }

    /// `buf_flush_ready_for_replace`: clean, unfixed, no I/O.
    fn replaceable(&self) -> bool {
        self.resident && !self.is_dirty() && self.fix_count == 0 && self.io == Io::None
    }

    /// `buf_flush_ready_for_flush`: dirty and no I/O (fixing does not prevent
    /// a write: the shell writes a copy taken under the page latch).
    fn flushable(&self) -> bool {
        self.is_dirty() && self.io == Io::None
    }

    /// What the victim searches may take this resident frame for, as the
    /// LRU index records it: [`lru_index::REPLACEABLE`] (`replaceable`),
    /// [`lru_index::SINGLE_PAGE_FLUSHABLE`] (`flushable`, unfixed in the
    /// core) and [`lru_index::LRU_FLUSHABLE`] (`flushable`, fixed or not).
    /// All need it without I/O; then clean or dirty decides which, and the
    /// first two need it unfixed (on every unfix that releases the last fix).
    fn victim_flags(&self) -> u8 {
        let flags = if !self.resident || self.io != Io::None {
            0
        } else if self.is_dirty() {
            let unfixed = if self.fix_count == 0 {
                lru_index::SINGLE_PAGE_FLUSHABLE
            } else {
                0
            };
            lru_index::LRU_FLUSHABLE | unfixed
        } else if self.fix_count == 0 {
            lru_index::REPLACEABLE
        } else {
            0
        };
        debug_assert_eq!(flags & lru_index::REPLACEABLE != 0, self.replaceable());
        debug_assert_eq!(
            flags & lru_index::SINGLE_PAGE_FLUSHABLE != 0,
            self.resident && self.flushable() && self.fix_count == 0
        );
        debug_assert_eq!(flags & lru_index::LRU_FLUSHABLE != 0, self.resident && self.flushable());
        flags
    }
}

/// The buffer pool state machine. See the module documentation.
pub struct BufferPool {
    config: BufferPoolConfig,
    frames: Vec<Frame>,
    page_table: PageTable,
    free: Vec<u32>,
    young: FrameList,
    old: FrameList,
    flush: FrameList,
    redo: RedoSpace,
    counters: PoolCounters,
    /// Every single user stall's length (see [`BufferPool::note_user_stall`]).
    stall_histogram: Histogram,
    /// `buf_pool->freed_page_clock`: evictions so far (drives "too old").
    freed_page_clock: u64,
    /// `buf_pool->try_LRU_scan`: cleared when a tail scan found nothing clean.
    try_lru_scan: bool,
    pending_reads: u32,
    pending_writes: [u32; 6],
    /// The writes of the user LRU batch `fix` last answered
    /// `FixOutcome::UserLruBatch` with, until the user takes them.
    user_lru_batch: Vec<WriteOrder>,
    wake: WakeThresholds,
    wake_pending: bool,
    old_ratio_1024: u64,
    /// `young_quarter` of `on_access`: evictions after which a young page is too old.
    young_quarter: u64,
    /// The shell serving hits outside the core, if any.
    fast: Option<Box<dyn FastHits>>,
    /// When the last checkpoint was noted (see `checkpoint_due`).
    last_checkpoint_us: TimeUs,
    /// The free-page rule users follow (see [`crate::free_page_path`]).
    free_rule: FreePageRule,
    /// The LRU's frames by position with their victim flags: the user's
    /// victim searches in O(log n) (see [`lru_index`]).
    lru_index: LruIndex,
    /// Tests only: answer the victim searches by walking the LRU, the
    /// reference the index is compared with.
    #[cfg(test)]
    linear_victim_search: bool,
}

impl BufferPool {
    /// A pool whose hits all go through [`BufferPool::fix`].
    pub fn new(config: BufferPoolConfig, start_lsn: Lsn) -> Result<Self, String> {
        Self::build(config, start_lsn, None)
    }

    /// A pool sharing eviction and LRU decisions with a shell that serves
    /// hits itself (see [`crate::fast_hits`]).
    pub fn with_fast_hits(config: BufferPoolConfig, start_lsn: Lsn, fast: Box<dyn FastHits>) -> Result<Self, String> {
        let pool = Self::build(config, start_lsn, Some(fast))?;
        if let Some(f) = &pool.fast {
            f.publish_freed_page_clock(0);
        }
        Ok(pool)
    }

    fn build(config: BufferPoolConfig, start_lsn: Lsn, fast: Option<Box<dyn FastHits>>) -> Result<Self, String> {
        config.validate()?;
        let redo = RedoSpace::new(config.redo, config.page_size_bytes, start_lsn)?;
        let frames = vec![Frame::new(); config.frames as usize];
        // Pop order hands out frame 0 first.
        let free: Vec<u32> = (0..config.frames).rev().collect();
        let old_ratio_1024 = u64::from(config.old_blocks_pct) * OLD_RATIO_DIV / 100;
        Ok(Self {
            old_ratio_1024,
            // buf_page_peek_if_young: a quarter of the young sublist's share of the pool.
            young_quarter: u64::from(config.frames) * (OLD_RATIO_DIV - old_ratio_1024) / (OLD_RATIO_DIV * 4),
            fast,
            config,
            frames,
            page_table: new_page_table(config.frames as usize),
            free,
            young: FrameList::default(),
            old: FrameList::default(),
            flush: FrameList::default(),
            redo,
            counters: PoolCounters::default(),
            stall_histogram: Histogram::new(),
            freed_page_clock: 0,
            try_lru_scan: true,
            pending_reads: 0,
            pending_writes: [0; 6],
            user_lru_batch: Vec::new(),
            wake: WakeThresholds::default(),
            wake_pending: false,
            last_checkpoint_us: 0,
            free_rule: FreePageRule::later_than_5_6(config.lru_search_scan_threshold),
            lru_index: LruIndex::new(config.frames),
            #[cfg(test)]
            linear_victim_search: false,
        })
    }

    // ----- getters -------------------------------------------------------

    pub fn config(&self) -> &BufferPoolConfig {
        &self.config
    }
    pub fn frame_count(&self) -> u32 {
        self.config.frames
    }
    /// |free| in Lee et al., Table 2.
    pub fn free_len(&self) -> u32 {
        self.free.len() as u32
    }
    /// |LRU| in Lee et al., Table 2.
    pub fn lru_len(&self) -> u32 {
        self.young.len + self.old.len
    }
    pub fn old_len(&self) -> u32 {
        self.old.len
    }
    /// Number of dirty pages (the flush list's length).
    pub fn dirty_pages(&self) -> u32 {
        self.flush.len
    }
    /// Dirty pages as a percentage of all frames (`buf_get_modified_ratio_pct`
    /// divides by LRU + free, which is the same thing here).
    pub fn dirty_pct(&self) -> f64 {
        100.0 * f64::from(self.flush.len) / f64::from(self.config.frames)
    }
    pub fn counters(&self) -> &PoolCounters {
        &self.counters
    }
    pub fn redo(&self) -> &RedoSpace {
        &self.redo
    }
    pub fn current_lsn(&self) -> Lsn {
        self.redo.current_lsn
    }
    /// Oldest modification in the flush list, or the log head when nothing
    /// is dirty (`buf_pool_get_oldest_modification` returns 0 then; callers
    /// treat that as "no age").
    pub fn oldest_modification(&self) -> Lsn {
        if self.flush.tail == NIL {
            self.redo.current_lsn
        } else {
            self.frames[self.flush.tail as usize].oldest_modification
        }
    }
    /// Redo age pinned by dirty pages: head LSN minus oldest modification.
    pub fn redo_age_bytes(&self) -> u64 {
        self.redo.current_lsn.bytes_since(self.oldest_modification())
    }
    /// Dirty pages counted from the oldest end of the flush list while
    /// their oldest modification is at most `lsn`, up to `max` (the
    /// `pages_for_lsn` scan of MySQL 8.0 `Adaptive_flush::set_flush_target_by_lsn`
    /// and MariaDB `page_cleaner_flush_pages_recommendation`).
    pub fn flush_list_pages_up_to(&self, lsn: Lsn, max: u32) -> u32 {
        let mut count = 0;
        let mut cursor = self.flush.tail;
        while cursor != NIL && count < max {
            let f = &self.frames[cursor as usize];
            if f.oldest_modification > lsn {
                break;
            }
            count += 1;
            cursor = f.flush.prev;
        }
        count
    }
    /// The highest LSN a checkpoint may be written at now.
    pub fn checkpoint_candidate(&self) -> Lsn {
        self.oldest_modification()
    }
    pub fn pending_reads(&self) -> u32 {
        self.pending_reads
    }
    pub fn pending_writes(&self, kind: WriteKind) -> u32 {
        self.pending_writes[kind.index()]
    }
    /// Writes in flight issued by page cleaners (A in Wang & Bunt §7).
    pub fn pending_async_writes(&self) -> u32 {
        WriteKind::ALL
            .iter()
            .filter(|k| !k.is_synchronous())
            .map(|k| self.pending_writes[k.index()])
            .sum()
    }
    /// Page writes in flight, of every kind.
    pub fn pending_writes_total(&self) -> u32 {
        self.pending_writes.iter().sum()
    }
    /// The free-page rule users follow now.
    pub fn free_page_rule(&self) -> FreePageRule {
        self.free_rule
    }
    /// Sets the free-page rule (the page-cleaner driver does, from its
    /// policy, at start and after each iteration).
    pub fn set_free_page_rule(&mut self, rule: FreePageRule) {
        debug_assert!(rule.user_scan_depth >= 1);
        self.free_rule = FreePageRule {
            user_scan_depth: rule.user_scan_depth.max(1),
            ..rule
        };
    }
    /// All I/O in flight (T in Wang & Bunt §7).
    pub fn pending_io(&self) -> u32 {
        self.pending_reads + self.pending_writes.iter().sum::<u32>()
    }
    pub fn page_of(&self, frame: FrameId) -> Option<PageId> {
        let f = &self.frames[frame.index()];
        f.resident.then_some(f.page)
    }
    pub fn lookup(&self, page: PageId) -> Option<FrameId> {
        self.page_table.get(&page).map(|&i| FrameId(i))
    }
    /// True while a read into `frame` is in flight.
    pub fn is_reading(&self, frame: FrameId) -> bool {
        self.frames[frame.index()].io == Io::Read
    }
    pub fn is_dirty(&self, frame: FrameId) -> bool {
        self.frames[frame.index()].is_dirty()
    }
    /// Fixes taken through the core (a [`FastHits`] shell's pins are its own).
    pub fn fix_count(&self, frame: FrameId) -> u32 {
        self.frames[frame.index()].fix_count
    }
    /// `buf_pool->freed_page_clock`: pages evicted so far.
    pub fn freed_page_clock(&self) -> u64 {
        self.freed_page_clock
    }
    /// When a hit on `frame` would make its page young (meaningful for
    /// resident frames).
    pub fn access_rule(&self, frame: FrameId) -> AccessRule {
        let f = &self.frames[frame.index()];
        if f.in_old {
            AccessRule {
                young_at_us: f.first_access_us.saturating_add(self.config.old_blocks_time_us),
                young_at_freed_clock: AccessRule::NEVER,
            }
        } else {
            AccessRule {
                young_at_us: AccessRule::NEVER,
                young_at_freed_clock: f.freed_page_clock.saturating_add(self.young_quarter),
            }
        }
    }
    /// In-memory page LSN (end of the newest modification), ZERO if never modified here.
    pub fn page_lsn(&self, frame: FrameId) -> Lsn {
        self.frames[frame.index()].newest_modification
    }
    pub fn oldest_modification_of(&self, frame: FrameId) -> Lsn {
        self.frames[frame.index()].oldest_modification
    }

    // ----- user requests -------------------------------------------------

    /// A user asks for `page` at `now_us`. `attempt` is 0 for a new request
    /// and counts retries after `SyncReplacementWrite` or `NoFrame` (the
    /// second and later attempts scan the whole LRU, as InnoDB does); a retry
    /// after `WaitRead` keeps its attempt. The request is counted once, when
    /// it is served (`Hit` or `Miss`).
    pub fn fix(&mut self, page: PageId, intent: FixIntent, attempt: u32, now_us: TimeUs) -> FixOutcome {
        if let Some(&index) = self.page_table.get(&page) {
            let frame = &mut self.frames[index as usize];
            if frame.io == Io::Read {
                return FixOutcome::WaitRead(FrameId(index));
            }
            // A request is counted once, when it is served (retries after a
            // wait are the same request).
            self.counters.requests += 1;
            // A fix only takes victim flags away: the LRU index learns that
            // lazily (see `refresh_victim_flags`).
            frame.fix_count += 1;
            self.on_access(index, now_us);
            self.note_fixed(index);
            return FixOutcome::Hit(FrameId(index));
        }
        let index = match self.take_free_frame(attempt) {
            Ok(index) => index,
            Err(outcome) => return outcome,
        };
        self.counters.requests += 1;
        let frame = &mut self.frames[index as usize];
        frame.page = page;
        frame.resident = true;
        frame.fix_count = 1;
        frame.first_access_us = now_us;
        frame.freed_page_clock = self.freed_page_clock;
        self.lru_index.set_first_access(index, now_us);
        match intent {
            FixIntent::Read => {
                frame.io = Io::Read;
                self.pending_reads += 1;
                self.counters.reads += 1;
            }
            FixIntent::Create => self.counters.pages_created += 1,
        }
        self.page_table.insert(page, index);
        self.lru_insert_new(index);
        FixOutcome::Miss(FrameId(index))
    }

    /// The hit path alone: fixes `page` if it is resident and not being
    /// read, in one page-table lookup; `None` otherwise (then call `fix`).
    pub fn fix_if_resident(&mut self, page: PageId, now_us: TimeUs) -> Option<FrameId> {
        let index = *self.page_table.get(&page)?;
        let frame = &mut self.frames[index as usize];
        if frame.io == Io::Read {
            return None;
        }
        self.counters.requests += 1;
        frame.fix_count += 1;
        self.on_access(index, now_us);
        self.note_fixed(index);
        Some(FrameId(index))
    }

    /// A hit fixed the frame: where the LRU index holds [`lru_index::REPLACEABLE`]
    /// exactly, the frame loses it now (elsewhere lazily, see
    /// `refresh_victim_flags`).
    fn note_fixed(&mut self, index: u32) {
        if self.lru_index.replaceable_exact() {
            let flags = self.frames[index as usize].victim_flags();
            self.lru_index.set_flags(index, flags);
        }
    }

    /// Counts `hits` page requests a [`FastHits`] shell served without the
    /// core (each would have been a `Hit` that moved nothing).
    pub fn note_fast_hits(&mut self, hits: u64) {
        self.counters.requests += hits;
        self.counters.fast_hits += hits;
    }

    /// Releases one fix of `frame`.
    pub fn unfix(&mut self, frame: FrameId) {
        let f = &mut self.frames[frame.index()];
        assert!(f.resident && f.fix_count > 0, "unfix of {frame} which is not fixed");
        f.fix_count -= 1;
        if f.fix_count == 0 {
            self.refresh_victim_flags(frame.0);
        }
    }

    /// The read into `frame` finished.
    pub fn complete_read(&mut self, frame: FrameId) {
        let f = &mut self.frames[frame.index()];
        assert_eq!(f.io, Io::Read, "complete_read on {frame} without a read in flight");
        f.io = Io::None;
        self.pending_reads -= 1;
        self.refresh_victim_flags(frame.0);
    }

    /// The read into `frame` failed (e.g. a corrupt page): the page leaves the
    /// pool and the frame returns to the free list; the caller's fix is void.
    pub fn fail_read(&mut self, frame: FrameId) {
        let index = frame.0;
        let f = &mut self.frames[index as usize];
        assert_eq!(f.io, Io::Read, "fail_read on {frame} without a read in flight");
        f.io = Io::None;
        f.fix_count = 0;
        self.pending_reads -= 1;
        self.remove_from_pool(index);
    }

    /// A user modified the fixed page in `frame`; its redo spans
    /// `start_lsn..end_lsn` (InnoDB adds the page to the flush list at
    /// mini-transaction commit with `oldest_modification = start_lsn`).
    pub fn note_modification(&mut self, frame: FrameId, start_lsn: Lsn, end_lsn: Lsn) {
        let index = frame.0;
        assert!(
            start_lsn <= end_lsn && start_lsn > Lsn::ZERO,
            "bad redo range {start_lsn}..{end_lsn}"
        );
        {
            let f = &self.frames[index as usize];
            let pinned = f.fix_count > 0 || self.fast.as_ref().is_some_and(|g| g.is_pinned(frame));
            assert!(f.resident && pinned, "modification of unfixed {frame}");
            assert_ne!(f.io, Io::Read, "modification of {frame} before its read completed");
        }
        self.counters.modifications += 1;
        if end_lsn > self.redo.current_lsn {
            self.redo.current_lsn = end_lsn;
        }
        let f = &mut self.frames[index as usize];
        if end_lsn > f.newest_modification {
            f.newest_modification = end_lsn;
        }
        if matches!(f.io, Io::Write(_)) {
            if f.remodified_lsn == Lsn::ZERO {
                f.remodified_lsn = start_lsn;
            }
        } else if !f.is_dirty() {
            f.oldest_modification = start_lsn;
            self.refresh_victim_flags(index);
            self.flush_insert_sorted(index);
            if let Some(limit) = self.wake.dirty_pages {
                if self.flush.len > limit {
                    self.wake_pending = true;
                }
            }
        }
        if let Some(limit) = self.wake.redo_age_bytes {
            if self.redo_age_bytes() > limit {
                self.wake_pending = true;
            }
        }
    }

    // ----- writes ----------------------------------------------------------

    /// The write of `frame` finished. Returns true if the frame was evicted
    /// (LRU-batch and replacement writes evict an unfixed, still clean page).
    pub fn complete_write(&mut self, frame: FrameId) -> bool {
        let index = frame.0;
        let f = &mut self.frames[index as usize];
        let Io::Write(kind) = f.io else {
            panic!("complete_write on {frame} without a write in flight");
        };
        f.io = Io::None;
        self.pending_writes[kind.index()] -= 1;
        self.counters.writes_completed += 1;
        let remodified = f.remodified_lsn;
        f.remodified_lsn = Lsn::ZERO;
        let evict = std::mem::take(&mut f.evict_after_write);
        {
            let mut links = FlushLinksMut(&mut self.frames);
            self.flush.remove(&mut links, index);
        }
        if remodified != Lsn::ZERO {
            self.frames[index as usize].oldest_modification = remodified;
            self.refresh_victim_flags(index);
            self.flush_insert_sorted(index);
            return false;
        }
        self.frames[index as usize].oldest_modification = Lsn::ZERO;
        self.refresh_victim_flags(index);
        if evict && self.claim_victim(index) {
            self.evict(index);
            return true;
        }
        false
    }

    /// The write of `frame` failed: the page stays dirty (the engine's sticky
    /// error then stops further writes).
    pub fn fail_write(&mut self, frame: FrameId) {
        let index = frame.0;
        let f = &mut self.frames[index as usize];
        let Io::Write(kind) = f.io else {
            panic!("fail_write on {frame} without a write in flight");
        };
        f.io = Io::None;
        f.evict_after_write = false;
        f.remodified_lsn = Lsn::ZERO;
        self.pending_writes[kind.index()] -= 1;
        self.refresh_victim_flags(index);
    }

    /// A write the core ordered was never issued (the shell could not latch
    /// the page, or it refuses writes): the page stays dirty and the write
    /// is taken out of the counters, as if it had not been ordered.
    pub fn abandon_write(&mut self, frame: FrameId) {
        let Io::Write(kind) = self.frames[frame.index()].io else {
            panic!("abandon_write on {frame} without a write in flight");
        };
        self.fail_write(frame);
        let counter = match kind {
            WriteKind::LruBatch => &mut self.counters.lru_batch_flush_pages,
            WriteKind::FlushList => &mut self.counters.flush_list_pages,
            WriteKind::CleanerClean => &mut self.counters.cleaner_clean_pages,
            WriteKind::SyncReplacement | WriteKind::UserLruBatch => &mut self.counters.sync_replacement_writes,
            WriteKind::SyncRecoverability => &mut self.counters.sync_recoverability_writes,
        };
        *counter -= 1;
    }

    // ----- wake-ups ----------------------------------------------------------

    pub fn set_wake_thresholds(&mut self, wake: WakeThresholds) {
        self.wake = wake;
    }

    /// A shell reports how long one page read took, from issue to
    /// completion (the core reads no clock); policies see the sums in
    /// [`PoolCounters::read_latency_us`] and `reads_timed`.
    pub fn note_read_latency(&mut self, latency_us: TimeUs) {
        self.counters.reads_timed += 1;
        self.counters.read_latency_us += latency_us;
    }

    /// A shell reports that a user thread was held up for `stall_us`: for a
    /// free frame (from the first fix that could not hand it one, a
    /// synchronous replacement write or a wait, until it got one) or for
    /// redo space (from the first free check that did not let it proceed
    /// until one did). Measured by the shell, whose clock it is.
    pub fn note_user_stall(&mut self, kind: StallKind, stall_us: TimeUs) {
        self.counters.user_stalls += 1;
        match kind {
            StallKind::FreeFrame => self.counters.free_frame_stall_us += stall_us,
            StallKind::RedoSpace => self.counters.redo_space_stall_us += stall_us,
        }
        self.stall_histogram.record(stall_us);
    }

    /// Every user stall so far (cumulative; `since` gives a window's).
    pub fn stall_histogram(&self) -> &Histogram {
        &self.stall_histogram
    }

    /// True once since the last call if a wake condition fired.
    pub fn take_wake(&mut self) -> bool {
        std::mem::take(&mut self.wake_pending)
    }
}
