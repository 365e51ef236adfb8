//! How a user thread that misses finds a frame: the free-page path of
//! MySQL 5.6.15 and the two places where later versions changed it.
//!
//! In 5.6.15 (`buf0lru.cc`, `buf_LRU_get_free_block`) a user thread that
//! finds the free list empty first scans the LRU tail for a clean page to
//! evict (`buf_LRU_scan_and_free_block` -> `buf_LRU_free_from_common_LRU_list`,
//! `scan_all` false); that first scan goes `srv_LRU_scan_depth` pages deep,
//! i.e. Pscan (`innodb_lru_scan_depth`), and Lee et al. §2.2 say so ("MySQL
//! scans the LRU list to the Pscan depth to find a clean page to evict").
//! 5.7 replaced the bound by the constant `BUF_LRU_SEARCH_SCAN_THRESHOLD`
//! (100). Since Algorithm 3 tunes Pscan, in 5.6.15 a raise of Pscan also
//! lets users evict clean pages deeper instead of writing: [`UserScanDepth`].
//!
//! Failing that, the user writes one dirty page from the tail itself
//! (`buf_flush_single_page_from_LRU`, only pages with `buf_fix_count == 0`).
//! From 5.6.12 through 5.6.15 the write is synchronous
//! (`buf_flush_page(..., sync = true)`, Bug#16477781): a doublewrite
//! single-page slot written and fsynced, the page written in place, its own
//! tablespace fsynced (`fil_flush(space)`). 5.6.10/5.6.11 instead queued the
//! write and called `buf_flush_sync_datafiles()`: wait until no asynchronous
//! write is pending (`os_aio_wait_until_no_pending_writes`, the page
//! cleaner's batches included) and fsync every data file: [`SinglePageFlush`].
//!
//! Two more user-visible rules changed after 5.6.15:
//! - pages the LRU batch writes stay on the LRU, clean, until a later batch
//!   or a user's scan evicts them (5.6.15 `buf_page_io_complete` has no
//!   eviction); 5.7 evicts them when the write completes: [`LruWrittenPages`];
//! - a writer past the sync margin flushes the flush list itself up to
//!   `oldest + 2 x (age - max_modified_age_sync)` (5.6.15
//!   `log_checkpoint_margin`) and, if a flush-list batch is already running,
//!   waits for it to end and checks again (`log_preflush_pool_modified_pages`
//!   -> `buf_flush_list` skips a busy instance, `buf_flush_wait_batch_end`);
//!   5.7 asks for one times the excess: [`PreflushAdvance`].
//!
//! Sources: MySQL 5.6.15 as imported in `facebookarchive/webscalesql-5.6`
//! (commit dad2a3c5), `storage/innobase/buf/buf0lru.cc`
//! (`buf_LRU_get_free_block`, `buf_LRU_free_from_common_LRU_list`),
//! `buf/buf0flu.cc` (`buf_flush_single_page_from_LRU`,
//! `buf_flush_write_block_low`, `buf_flush_LRU_list_batch`),
//! `buf/buf0dblwr.cc` (`buf_dblwr_write_single_page`), `buf/buf0buf.cc`
//! (`buf_page_io_complete`), `log/log0log.cc` (`log_checkpoint_margin`,
//! `log_preflush_pool_modified_pages`); 5.7.44 for the later behaviour.
//!
//! One more user-side rule came with MariaDB 10.5's rewritten page cleaner:
//! users never write a page to get a frame. A user whose first clean-victim
//! scan (100 pages) fails wakes the page cleaner and waits for its LRU pass
//! to put frames on the free list, taking only from the free list after
//! that (MariaDB `buf0lru.cc` `buf_LRU_get_free_block`:
//! `buf_pool.page_cleaner_wakeup(true)`, wait on `buf_pool.done_free`;
//! MDEV-33613 removed the last user-side LRU flush):
//! [`SinglePageFlush::WaitForCleaner`]. The pool answers such a user with
//! `FixOutcome::NoFrame`, counts `wait_free` once per request and raises the
//! page-cleaner wake when the policy's `WakeThresholds::on_sync_replacement`
//! asks for it.
//!
//! Before 5.6 there was no page cleaner and no single-page flush: InnoDB
//! 5.1 (the built-in engine, and the InnoDB Plugin 1.0 with it) keeps a
//! *margin* of replaceable frames instead. After every page read
//! (`buf0rea.c` `buf_read_page`) and whenever a free-frame search fails
//! (`buf0lru.c` `buf_LRU_get_free_block`), the user calls
//! `buf_flush_free_margin` (`buf0flu.c`): it counts the free frames plus the
//! clean, unfixed pages within `BUF_LRU_FREE_SEARCH_LEN` of the LRU tail
//! (`buf_flush_LRU_recommendation`), and if fewer than
//! `BUF_FLUSH_FREE_BLOCK_MARGIN`, the user itself runs an LRU flush batch
//! of `BUF_FLUSH_FREE_BLOCK_MARGIN + BUF_FLUSH_EXTRA_MARGIN - n_replaceable`
//! pages (`buf_flush_batch(BUF_FLUSH_LRU, ...)`). A user that finds the
//! margin short while such a batch is running waits for the batch to end
//! (`buf_flush_wait_batch_end`): with every request missing, the whole
//! server waits for one user's batch. That is the pause paper 003 models.
//! [`SinglePageFlush::FreeMarginBatch`], sized by [`FreeMargin`].
//!
//! A policy that stands for 5.6 (`mysql56`, `percona56`, `self-tuning`)
//! carries a [`FreePagePath`] with 5.6.15's values as defaults; the page
//! cleaner driver hands the pool the resolved path ([`FreePageRule`]) at
//! start and after every iteration, so a new Pscan applies to users at once,
//! as `srv_LRU_scan_depth` does in 5.6.
//!
//! Invariant: a resolved user scan depth is at least 1.

use crate::params::{ParamDecl, ParamSet, ParamType, ParamValue};

/// `BUF_LRU_SEARCH_SCAN_THRESHOLD` (5.7 `buf0lru.cc`): the first clean-victim
/// scan's depth after 5.6.
pub const SEARCH_SCAN_THRESHOLD_57: u32 = 100;

/// Doublewrite slots a user's single-page flush may take, one each, beside
/// the batch area: MySQL 5.6's `2 * TRX_SYS_DOUBLEWRITE_BLOCK_SIZE -
/// srv_doublewrite_batch_size` = 128 - 120 (`buf0dblwr.cc`
/// `buf_dblwr_write_single_page`). The engine's doublewrite buffer and the
/// simulator's model both take it from here.
pub const DOUBLEWRITE_SINGLE_PAGE_SLOTS: u32 = 8;

/// `single_page_flush`'s values, shared by every group below.
const SINGLE_PAGE_FLUSH_CHOICES: &[(&str, &str)] = &[
    ("own_space", "5.6.12-8.0"),
    ("all_datafiles", "5.6.10/11"),
    (
        "wait_for_cleaner",
        "MariaDB 10.5+: no user write, wake the cleaner and wait",
    ),
    (
        "free_margin_batch",
        "5.1/5.5: a user keeps a margin of replaceable frames by its own LRU batch; others wait for it",
    ),
];
/// `lru_written_pages`' values.
const LRU_WRITTEN_PAGES_CHOICES: &[(&str, &str)] = &[("stay", "5.6.15"), ("evict", "5.7+")];
/// `preflush_advance`'s values.
const PREFLUSH_ADVANCE_CHOICES: &[(&str, &str)] = &[("twice", "5.6.15"), ("once", "5.7+")];
/// `user_scan_depth`'s type: a depth, or Pscan.
const USER_SCAN_DEPTH_TYPE: ParamType = ParamType::ChoiceOrInt {
    choices: &[("lru_scan_depth", "follows Pscan, MySQL 5.6.15")],
    min: 1,
    max: u32::MAX as u64,
};
const USER_SCAN_DEPTH_DOC: &str = "depth of a user's first clean-victim scan (5.7: 100, BUF_LRU_SEARCH_SCAN_THRESHOLD)";
const SINGLE_PAGE_FLUSH_DOC: &str = "what a user that finds no clean victim does: write one page and sync, or wait";
const LRU_WRITTEN_PAGES_DOC: &str = "pages the LRU batch wrote stay on the LRU, clean, or are evicted when written";
const PREFLUSH_ADVANCE_DOC: &str = "how far a writer past the sync margin flushes: 2x or 1x the excess age";

/// The four free-page-path parameters with the given defaults (one
/// declaration; each version below differs only in its defaults).
const fn path_params(
    user_scan_depth: ParamValue,
    single_page_flush: &'static str,
    lru_written_pages: &'static str,
    preflush_advance: &'static str,
) -> [ParamDecl; 4] {
    [
        ParamDecl {
            key: "user_scan_depth",
            ty: USER_SCAN_DEPTH_TYPE,
            default: user_scan_depth,
            doc: USER_SCAN_DEPTH_DOC,
        },
        ParamDecl::choice(
            "single_page_flush",
            single_page_flush,
            SINGLE_PAGE_FLUSH_CHOICES,
            SINGLE_PAGE_FLUSH_DOC,
        ),
        ParamDecl::choice(
            "lru_written_pages",
            lru_written_pages,
            LRU_WRITTEN_PAGES_CHOICES,
            LRU_WRITTEN_PAGES_DOC,
        ),
        ParamDecl::choice(
            "preflush_advance",
            preflush_advance,
            PREFLUSH_ADVANCE_CHOICES,
            PREFLUSH_ADVANCE_DOC,
        ),
    ]
}

/// The free-page-path parameters of a policy that stands for 5.6, with
/// MySQL 5.6.15's values as defaults ([`FreePagePath::MYSQL_5_6_15`]).
pub const PARAMS: &[ParamDecl] = &path_params(ParamValue::Name("lru_scan_depth"), "own_space", "stay", "twice");

/// The same parameters with MySQL 8.0's values as defaults
/// ([`FreePagePath::MYSQL_8_0`]).
pub const PARAMS_MYSQL_8_0: &[ParamDecl] = &path_params(
    ParamValue::Int(SEARCH_SCAN_THRESHOLD_57 as u64),
    "own_space",
    "evict",
    "once",
);

/// The same parameters with MySQL 5.1's values as defaults
/// ([`FreePagePath::MYSQL_5_1`]; `user_scan_depth` is not used by
/// [`SinglePageFlush::FreeMarginBatch`], whose search depth 5.1 derives
/// from the pool size).
pub const PARAMS_MYSQL_5_1: &[ParamDecl] = &path_params(
    ParamValue::Int(SEARCH_SCAN_THRESHOLD_57 as u64),
    "free_margin_batch",
    "stay",
    "twice",
);

/// The same parameters with MariaDB 10.5+'s values as defaults
/// ([`FreePagePath::MARIADB_10_5`]).
pub const PARAMS_MARIADB_10_5: &[ParamDecl] = &path_params(
    ParamValue::Int(SEARCH_SCAN_THRESHOLD_57 as u64),
    "wait_for_cleaner",
    "evict",
    "once",
);

/// How deep a user's first clean-victim scan goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserScanDepth {
    /// `srv_LRU_scan_depth`: the policy's current Pscan (MySQL 5.6.15).
    LruScanDepth,
    /// A fixed depth (5.7 and later: [`SEARCH_SCAN_THRESHOLD_57`]).
    Fixed(u32),
}

/// What a user that found no clean victim does: a single-page flush and
/// what it costs besides the write itself, or no write at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinglePageFlush {
    /// 5.6.12 through 8.0 (5.6.15 included): a synchronous write and an
    /// fsync of the page's own tablespace; no wait for other writes
    /// (8.0.27 `buf0dblwr.cc` `Double_write::sync_page_flush`:
    /// `fil_flush(space)` after the write).
    OwnSpace,
    /// 5.6.10/5.6.11 `buf_flush_sync_datafiles()`: after the write, wait
    /// until no page write is in flight, then fsync every data file.
    AllDatafiles,
    /// MariaDB 10.5+ (`buf_LRU_get_free_block`): no user write; the user
    /// wakes the page cleaner and waits for a frame on the free list
    /// (`FixOutcome::NoFrame`, then retries that take only a free frame).
    WaitForCleaner,
    /// MySQL 5.1 (built-in InnoDB and Plugin 1.0) through 5.5: no
    /// single-page flush. A user that finds fewer than
    /// [`FreeMargin::margin_pages`] replaceable frames runs an LRU flush
    /// batch itself (`FixOutcome::UserLruBatch`); while it runs, every user
    /// that finds the margin short waits for it to end (`FixOutcome::NoFrame`).
    /// A failed free-frame search scans `100 + n x |pool| / 10` pages deep
    /// on its n-th try, the whole LRU after ten (`buf_LRU_search_and_free_block`).
    FreeMarginBatch,
}

/// InnoDB 5.1's free-frame margin for a pool of `frames` pages (read in
/// MySQL 5.1.45 `storage/innobase`: `include/buf0rea.h`
/// `BUF_READ_AHEAD_AREA`, `include/buf0flu.h` `BUF_FLUSH_FREE_BLOCK_MARGIN`
/// and `BUF_FLUSH_EXTRA_MARGIN`, `include/buf0lru.h`
/// `BUF_LRU_FREE_SEARCH_LEN`). For a 16 MiB pool (1,024 pages) a batch
/// writes 146 - n_replaceable >= 110 pages: about paper 003's DPBmax of 111.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeMargin {
    /// `BUF_READ_AHEAD_AREA` = min(64, the power of two >= |pool| / 32).
    pub read_ahead_area_pages: u32,
    /// `BUF_FLUSH_FREE_BLOCK_MARGIN` = 5 + the read-ahead area.
    pub margin_pages: u32,
    /// `BUF_FLUSH_EXTRA_MARGIN` = margin / 4 + 100.
    pub extra_pages: u32,
    /// `BUF_LRU_FREE_SEARCH_LEN` = 5 + 2 x the read-ahead area: how far from
    /// the LRU tail replaceable pages count towards the margin.
    pub search_len_pages: u32,
}

impl FreeMargin {
    pub fn for_pool(frames: u32) -> FreeMargin {
        // ut_2_power_up: the least power of two >= n (1 for n = 0).
        let area = (frames / 32).max(1).next_power_of_two().min(64);
        let margin = 5 + area;
        FreeMargin {
            read_ahead_area_pages: area,
            margin_pages: margin,
            extra_pages: margin / 4 + 100,
            search_len_pages: 5 + 2 * area,
        }
    }

    /// `buf_flush_LRU_recommendation`: pages to flush given `replaceable`
    /// frames counted (free plus clean within the search length), 0 when
    /// the margin holds.
    pub fn pages_to_flush(&self, replaceable: u32) -> u32 {
        if replaceable >= self.margin_pages {
            0
        } else {
            self.margin_pages + self.extra_pages - replaceable
        }
    }

    /// `buf_LRU_search_and_free_block`'s depth on try `n_iterations` (from 1):
    /// `100 + n x |pool| / 10`, unbounded after ten tries.
    pub fn search_depth(frames: u32, n_iterations: u32) -> u32 {
        if n_iterations > 10 {
            u32::MAX
        } else {
            let depth = 100 + u64::from(n_iterations) * u64::from(frames) / 10;
            u32::try_from(depth).unwrap_or(u32::MAX)
        }
    }
}

/// What becomes of a page the LRU batch wrote, when its write completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruWrittenPages {
    /// 5.6.15: it stays on the LRU, clean; a later LRU chunk or a user's
    /// clean-victim scan evicts it.
    StayOnLru,
    /// 5.7: `buf_page_io_complete` evicts it to the free list.
    EvictOnCompletion,
}

/// How far a writer past the sync margin flushes the flush list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreflushAdvance {
    /// 5.6.15: to `oldest + 2 x (age - sync margin)`, and a running
    /// flush-list batch is waited for, then the check is made again.
    TwiceExcessWaitRunning,
    /// 5.7: to `oldest + (age - sync margin)`; no wait for others' batches.
    Excess,
    /// No writer writes: it waits (a redo-space stall) while the page
    /// cleaner brings the age back under the margin, as MySQL 8.0's
    /// `log_free_check` (`innodb_flush_sync`) and MariaDB 10.5+'s
    /// (`log_checkpoint_margin` -> `buf_flush_wait_flushed`) do. Only for a
    /// policy whose cleaner is sure to flush past the sync margin (flushwise:
    /// past its target age, which is below it, every slice is urgent and the
    /// cleaner loops at once); not offered as a parameter, because a cleaner
    /// that never flushes there would leave writers waiting.
    WaitForCleaner,
}

/// A policy's named free-page-path parameters (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreePagePath {
    pub user_scan_depth: UserScanDepth,
    pub single_page_flush: SinglePageFlush,
    pub lru_written_pages: LruWrittenPages,
    pub preflush_advance: PreflushAdvance,
}

impl FreePagePath {
    /// MySQL 5.6.15 (and Percona Server 5.6.15, which shares the path).
    pub const MYSQL_5_6_15: FreePagePath = FreePagePath {
        user_scan_depth: UserScanDepth::LruScanDepth,
        single_page_flush: SinglePageFlush::OwnSpace,
        lru_written_pages: LruWrittenPages::StayOnLru,
        preflush_advance: PreflushAdvance::TwiceExcessWaitRunning,
    };
    /// MySQL 5.7.
    pub const MYSQL_5_7: FreePagePath = FreePagePath {
        user_scan_depth: UserScanDepth::Fixed(SEARCH_SCAN_THRESHOLD_57),
        single_page_flush: SinglePageFlush::OwnSpace,
        lru_written_pages: LruWrittenPages::EvictOnCompletion,
        preflush_advance: PreflushAdvance::Excess,
    };
    /// MySQL 8.0 keeps 5.7's path (read in 8.0.27): `buf0lru.cc`
    /// `BUF_LRU_SEARCH_SCAN_THRESHOLD` = 100 in `buf_LRU_free_from_common_LRU_list`,
    /// then `buf_flush_single_page_from_LRU` (a synchronous write with
    /// `fil_flush(space)`, `buf0dblwr.cc` `Double_write::sync_page_flush`);
    /// `buf0buf.cc` `buf_page_io_complete` evicts every `BUF_FLUSH_LRU`
    /// page once written. The writer's side differs (8.0's `log_free_check`
    /// waits for the checkpointer instead of flushing) and is not modelled:
    /// [`PreflushAdvance::Excess`], 5.7's, stands for it.
    pub const MYSQL_8_0: FreePagePath = FreePagePath::MYSQL_5_7;
    /// MariaDB 10.5+ (read in `buf0lru.cc` `buf_LRU_get_free_block` and
    /// `buf0flu.cc` `buf_page_write_complete`): a 100-page clean-victim scan,
    /// then wait for the page cleaner ([`SinglePageFlush::WaitForCleaner`]);
    /// LRU-batch pages are freed when their write completes. Its writers
    /// wait for the cleaner past the redo margin (`log_free_check` ->
    /// `buf_flush_wait_flushed`), which is not modelled: 5.7's
    /// [`PreflushAdvance::Excess`] stands for it.
    pub const MARIADB_10_5: FreePagePath = FreePagePath {
        user_scan_depth: UserScanDepth::Fixed(SEARCH_SCAN_THRESHOLD_57),
        single_page_flush: SinglePageFlush::WaitForCleaner,
        lru_written_pages: LruWrittenPages::EvictOnCompletion,
        preflush_advance: PreflushAdvance::Excess,
    };

    /// MySQL 5.1.45's built-in InnoDB (and the Plugin 1.0 and 5.5, which keep
    /// `buf_flush_free_margin`): users keep the free margin by their own LRU
    /// batches ([`SinglePageFlush::FreeMarginBatch`]); written pages stay on
    /// the LRU, clean (`buf_LRU_try_free_flushed_blocks` frees them from
    /// the tail later); a writer past the sync margin preflushes twice the
    /// excess (`log0log.c` `log_checkpoint_margin`, as 5.6.15).
    pub const MYSQL_5_1: FreePagePath = FreePagePath {
        user_scan_depth: UserScanDepth::Fixed(SEARCH_SCAN_THRESHOLD_57),
        single_page_flush: SinglePageFlush::FreeMarginBatch,
        lru_written_pages: LruWrittenPages::StayOnLru,
        preflush_advance: PreflushAdvance::TwiceExcessWaitRunning,
    };

    /// The rule users follow now, given the policy's current Pscan.
    pub fn resolve(&self, lru_scan_depth: u32) -> FreePageRule {
        let depth = match self.user_scan_depth {
            UserScanDepth::LruScanDepth => lru_scan_depth,
            UserScanDepth::Fixed(depth) => depth,
        };
        FreePageRule {
            // buf_LRU_free_from_common_LRU_list: `scanned < depth` with
            // `scanned` from 1 examines depth - 1 pages.
            user_scan_depth: depth.saturating_sub(1).max(1),
            single_page_flush: self.single_page_flush,
            lru_written_pages: self.lru_written_pages,
            preflush_advance: self.preflush_advance,
        }
    }

    /// Builds the path from a policy's parameters ([`PARAMS`]).
    pub fn from_params(params: &ParamSet) -> FreePagePath {
        FreePagePath {
            user_scan_depth: match params.value("user_scan_depth") {
                ParamValue::Int(depth) => UserScanDepth::Fixed(u32::try_from(depth).unwrap_or(u32::MAX)),
                _ => UserScanDepth::LruScanDepth,
            },
            single_page_flush: match params.name("single_page_flush") {
                "all_datafiles" => SinglePageFlush::AllDatafiles,
                "wait_for_cleaner" => SinglePageFlush::WaitForCleaner,
                "free_margin_batch" => SinglePageFlush::FreeMarginBatch,
                _ => SinglePageFlush::OwnSpace,
            },
            lru_written_pages: match params.name("lru_written_pages") {
                "evict" => LruWrittenPages::EvictOnCompletion,
                _ => LruWrittenPages::StayOnLru,
            },
            preflush_advance: match params.name("preflush_advance") {
                "once" => PreflushAdvance::Excess,
                _ => PreflushAdvance::TwiceExcessWaitRunning,
            },
        }
    }

    /// (name, value) pairs for a policy's `parameters()`: the scan depth as
    /// pages (0 = follows Pscan), and 1 where the 5.6.15 rule of each other
    /// field holds, 0 where the later one does (all_datafiles is 2; for
    /// `single_page_flush`, MariaDB's wait for the cleaner is the later one
    /// and 5.1's free-margin batch is 3;
    /// `preflush_twice_excess` is -1 where writers wait for the cleaner).
    pub fn parameters(&self) -> [(&'static str, f64); 4] {
        [
            (
                "user_scan_depth",
                match self.user_scan_depth {
                    UserScanDepth::LruScanDepth => 0.0,
                    UserScanDepth::Fixed(n) => f64::from(n),
                },
            ),
            (
                "single_page_flush",
                match self.single_page_flush {
                    SinglePageFlush::OwnSpace => 1.0,
                    SinglePageFlush::AllDatafiles => 2.0,
                    SinglePageFlush::WaitForCleaner => 0.0,
                    SinglePageFlush::FreeMarginBatch => 3.0,
                },
            ),
            (
                "lru_written_pages_stay",
                f64::from(u8::from(self.lru_written_pages == LruWrittenPages::StayOnLru)),
            ),
            (
                "preflush_twice_excess",
                match self.preflush_advance {
                    PreflushAdvance::TwiceExcessWaitRunning => 1.0,
                    PreflushAdvance::Excess => 0.0,
                    PreflushAdvance::WaitForCleaner => -1.0,
                },
            ),
        ]
    }
}

/// The free-page rule users follow at this moment (a resolved [`FreePagePath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreePageRule {
    /// Pages the first clean-victim scan examines.
    pub user_scan_depth: u32,
    pub single_page_flush: SinglePageFlush,
    pub lru_written_pages: LruWrittenPages,
    pub preflush_advance: PreflushAdvance,
}

impl FreePageRule {
    /// The rule of a pool no 5.6 policy configured: 5.7's, with
    /// `user_scan_depth` pages for the first scan.
    pub fn later_than_5_6(user_scan_depth: u32) -> Self {
        FreePageRule {
            user_scan_depth: user_scan_depth.max(1),
            ..FreePagePath::MYSQL_5_7.resolve(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_5_6_15_follows_pscan_and_5_7_scans_100() {
        assert_eq!(FreePagePath::MYSQL_5_6_15.resolve(4000).user_scan_depth, 3999);
        assert_eq!(FreePagePath::MYSQL_5_7.resolve(4000).user_scan_depth, 99);
        assert_eq!(FreePagePath::MYSQL_5_6_15.resolve(0).user_scan_depth, 1, "never zero");
        let rule = FreePagePath::MYSQL_5_6_15.resolve(1);
        assert_eq!(rule.single_page_flush, SinglePageFlush::OwnSpace);
        assert_eq!(rule.lru_written_pages, LruWrittenPages::StayOnLru);
        assert_eq!(rule.preflush_advance, PreflushAdvance::TwiceExcessWaitRunning);
    }

    #[test]
    fn parameters_parse_by_name_and_bad_values_name_the_choices() {
        let parse = |spec: &str| crate::policy::build(spec).map(|p| p.free_page_rule());
        let rule = parse("mysql56:user_scan_depth=100,lru_written_pages=evict,preflush_advance=once")
            .unwrap()
            .unwrap();
        assert_eq!(rule.user_scan_depth, 99);
        assert_eq!(rule.lru_written_pages, LruWrittenPages::EvictOnCompletion);
        assert_eq!(rule.preflush_advance, PreflushAdvance::Excess);
        let err = parse("self-tuning:single_page_flush=fast").err().unwrap();
        assert!(
            err.contains("own_space (5.6.12-8.0)") && err.contains("all_datafiles") && err.contains("wait_for_cleaner"),
            "{err}"
        );
        let err = parse("percona56:user_scan_depth=0").err().unwrap();
        assert!(err.contains("user_scan_depth"), "{err}");
    }

    #[test]
    fn free_margin_follows_5_1_45_constants() {
        // 16 MiB of 16 KiB pages: area 32, margin 37, extra 109, search 69.
        let m = FreeMargin::for_pool(1024);
        assert_eq!(
            (
                m.read_ahead_area_pages,
                m.margin_pages,
                m.extra_pages,
                m.search_len_pages
            ),
            (32, 37, 109, 69)
        );
        assert_eq!(m.pages_to_flush(37), 0);
        assert_eq!(m.pages_to_flush(36), 110);
        assert_eq!(m.pages_to_flush(0), 146);
        // The area is capped at 64 pages and rounds up to a power of two.
        assert_eq!(FreeMargin::for_pool(1 << 20).read_ahead_area_pages, 64);
        assert_eq!(FreeMargin::for_pool(100).read_ahead_area_pages, 4);
        assert_eq!(FreeMargin::for_pool(10).read_ahead_area_pages, 1);
        assert_eq!(FreeMargin::search_depth(1024, 1), 202);
        assert_eq!(FreeMargin::search_depth(1024, 10), 1124);
        assert_eq!(FreeMargin::search_depth(1024, 11), u32::MAX);
        const GROUPS_5_1: &[&[ParamDecl]] = &[PARAMS_MYSQL_5_1];
        assert_eq!(
            FreePagePath::from_params(&ParamSet::defaults(GROUPS_5_1)),
            FreePagePath::MYSQL_5_1
        );
    }

    #[test]
    fn later_groups_default_to_their_versions_and_5_6_15_defaults_stay() {
        const GROUPS_5_6_15: &[&[ParamDecl]] = &[PARAMS];
        const GROUPS_8_0: &[&[ParamDecl]] = &[PARAMS_MYSQL_8_0];
        const GROUPS_MARIADB: &[&[ParamDecl]] = &[PARAMS_MARIADB_10_5];
        let path = |groups| FreePagePath::from_params(&ParamSet::defaults(groups));
        assert_eq!(path(GROUPS_5_6_15), FreePagePath::MYSQL_5_6_15);
        assert_eq!(path(GROUPS_8_0), FreePagePath::MYSQL_8_0);
        assert_eq!(path(GROUPS_MARIADB), FreePagePath::MARIADB_10_5);
        assert_eq!(FreePagePath::MYSQL_8_0, FreePagePath::MYSQL_5_7);
        let rule = FreePagePath::MARIADB_10_5.resolve(1536);
        assert_eq!(rule.single_page_flush, SinglePageFlush::WaitForCleaner);
        assert_eq!(rule.lru_written_pages, LruWrittenPages::EvictOnCompletion);
        let params: std::collections::HashMap<_, _> = FreePagePath::MARIADB_10_5.parameters().into_iter().collect();
        assert_eq!(params["single_page_flush"], 0.0);
        assert_eq!(params["user_scan_depth"], 100.0);
        // Any 5.6 policy may be told to wait instead of writing.
        let rule = crate::policy::build("mysql56:single_page_flush=wait_for_cleaner")
            .unwrap()
            .free_page_rule()
            .unwrap();
        assert_eq!(rule.single_page_flush, SinglePageFlush::WaitForCleaner);
    }
}
