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

/// The free-page-path parameters of a policy that stands for 5.6, with
/// MySQL 5.6.15's values as defaults ([`FreePagePath::MYSQL_5_6_15`]).
pub const PARAMS: &[ParamDecl] = &[
    ParamDecl {
        key: "user_scan_depth",
        ty: ParamType::ChoiceOrInt {
            choices: &[("lru_scan_depth", "follows Pscan, MySQL 5.6.15")],
            min: 1,
            max: u32::MAX as u64,
        },
        default: ParamValue::Name("lru_scan_depth"),
        doc: "depth of a user's first clean-victim scan (5.7: 100, BUF_LRU_SEARCH_SCAN_THRESHOLD)",
    },
    ParamDecl::choice(
        "single_page_flush",
        "own_space",
        &[("own_space", "5.6.12-5.7"), ("all_datafiles", "5.6.10/11")],
        "what a user's single-page flush syncs besides its write",
    ),
    ParamDecl::choice(
        "lru_written_pages",
        "stay",
        &[("stay", "5.6.15"), ("evict", "5.7")],
        "pages the LRU batch wrote stay on the LRU, clean, or are evicted when written",
    ),
    ParamDecl::choice(
        "preflush_advance",
        "twice",
        &[("twice", "5.6.15"), ("once", "5.7")],
        "how far a writer past the sync margin flushes: 2x or 1x the excess age",
    ),
];

/// How deep a user's first clean-victim scan goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserScanDepth {
    /// `srv_LRU_scan_depth`: the policy's current Pscan (MySQL 5.6.15).
    LruScanDepth,
    /// A fixed depth (5.7 and later: [`SEARCH_SCAN_THRESHOLD_57`]).
    Fixed(u32),
}

/// What a user's single-page flush costs besides the write itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinglePageFlush {
    /// 5.6.12 through 5.7 (5.6.15 included): a synchronous write and an
    /// fsync of the page's own tablespace; no wait for other writes.
    OwnSpace,
    /// 5.6.10/5.6.11 `buf_flush_sync_datafiles()`: after the write, wait
    /// until no page write is in flight, then fsync every data file.
    AllDatafiles,
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
    /// field holds, 0 where the later one does (all_datafiles is 2).
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
                },
            ),
            (
                "lru_written_pages_stay",
                f64::from(u8::from(self.lru_written_pages == LruWrittenPages::StayOnLru)),
            ),
            (
                "preflush_twice_excess",
                f64::from(u8::from(
                    self.preflush_advance == PreflushAdvance::TwiceExcessWaitRunning,
                )),
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
            err.contains("own_space (5.6.12-5.7)") && err.contains("all_datafiles"),
            "{err}"
        );
        let err = parse("percona56:user_scan_depth=0").err().unwrap();
        assert!(err.contains("user_scan_depth"), "{err}");
    }
}
