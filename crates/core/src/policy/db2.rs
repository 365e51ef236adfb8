//! `db2`: DB2's page cleaners as Wang & Bunt describe them (paper 002, §3.2).
//!
//! N cleaners (`num_iocleaners`; the paper's default is 2, §6.2) sleep until
//! one of three events wakes them:
//!
//! 1. **dirty-page threshold**: the dirty pages exceed `chngpgs_thresh` percent
//!    of the pool (default 60, paper §3.2 and the Db2 `chngpgs_thresh`
//!    reference page);
//! 2. **dirty replacement** (Db2's "dirty steal"): a user had to write a dirty
//!    victim synchronously;
//! 3. **softmax** (Db2's "LSN gap"): the oldest dirty page holds redo older
//!    than `softmax` behind the log head. Db2 counts this trigger as
//!    `pool_lsn_gap_clns`, "triggered if the oldest page in the buffer pool
//!    contains an update described by a log record that is older than the
//!    current log position by the criterion value", which is exactly our
//!    [`BufferPool::redo_age_bytes`] exceeding a byte limit.
//!
//! A woken cleaner collects dirty pages and writes them asynchronously; if a
//! condition still holds it does another round, else it sleeps until the next
//! event (§3.2). Which pages: for the threshold and replacement triggers the
//! dirty pages near the LRU tail, written and left resident
//! ([`LruMode::CleanOnly`]): they become the clean victims users will take.
//! For softmax, the oldest pages of the flush list below the LSN that brings
//! the redo age back to softmax (Db2: "write out all the pages that are
//! contributing to the LSN gap", proactive page cleaning page).
//!
//! # Constants and mappings
//! - `softmax_pct` is a percentage of **our whole redo capacity**
//!   ([`crate::redo_space::RedoConfig::capacity_bytes`]). Db2 expresses
//!   `softmax` as a percentage of *one primary log file*, default 100 (Db2
//!   10.5 `softmax` reference page, outside pureScale; new databases since
//!   10.5 set 0 and use `page_age_trgt_mcr`, which the paper's DB2 6.1/7.1
//!   did not have). With `logprimary` = 3 (its Db2 default) and our redo ring
//!   standing for the primary logs, 100 % of one file is 100/3 = 33.3 % of
//!   the capacity: the default here. This sits well below InnoDB's async
//!   preflush margin (~71 % of the capacity), so softmax fires first.
//! - `pages_per_round` = 100: a cleaner builds a list of pages, writes them
//!   and waits for them before it looks again (Db2 `chngpgs_thresh` page:
//!   "they will build a list of the pages to write to disk. Once they have
//!   completed writing those pages ... they will become inactive again").
//!   No public source gives the list's length, so we take the driver's LRU
//!   chunk ([`LRU_CHUNK_PAGES`], MySQL's `PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE`):
//!   each awaited batch is then exactly one chunk. It is a lab knob.
//! - The LRU window: the driver uses one number, `lru_scan_depth`, both as the
//!   depth a chunk scans from the tail and as the round's write budget, and a
//!   page a cleaner is writing stays on the tail. So that N cleaners can each
//!   find a batch of their own (more cleaners = more cleaning bandwidth, the
//!   paper's §6.3 result), the cleaners share a tail window of
//!   `cleaners x pages_per_round` pages; each writes at most
//!   `min(window, LRU_CHUNK_PAGES)` pages per awaited batch.
//!
//! # Invariants
//! - A cleaner asks to flush only when a trigger holds; it sleeps with
//!   [`Sleep::until_event`] otherwise, and the pool's wake thresholds are
//!   exactly the three triggers.
//! - A round that wrote nothing never returns a zero sleep, so a cleaner that
//!   finds no dirty page in its window cannot spin.
//! - The softmax LSN limit never passes the log head.

use crate::buffer_pool::{BufferPool, LruMode, WakeThresholds};
use crate::params::{ParamDecl, ParamSet};
use crate::policy::{
    FlushListPlan, FlushPolicy, IterationPlan, IterationReport, Plan, PolicyCtx, PolicyEntry, Sleep, WaitFor,
    LRU_CHUNK_PAGES,
};
use crate::types::Lsn;

/// `chngpgs_thresh`: 60 (%), Db2's default.
pub const DIRTY_PAGE_THRESHOLD_PCT: ParamDecl = ParamDecl::float(
    "dirty_page_threshold_pct",
    60.0,
    0.0,
    100.0,
    "chngpgs_thresh: dirty share of the pool that wakes the cleaners (Db2 default 60)",
);
/// `softmax` as % of the redo capacity (module docs).
pub const SOFTMAX_PCT: ParamDecl = ParamDecl::float(
    "softmax_pct",
    DB2_SOFTMAX_PCT_OF_CAPACITY,
    0.0,
    100.0,
    "softmax as % of the redo capacity: one of logprimary=3 files (100/3)",
);

/// `db2`'s parameters.
pub const PARAMS: &[ParamDecl] = &[
    ParamDecl::int(
        "cleaners",
        2,
        1,
        crate::limits::CLEANERS_MAX,
        "num_iocleaners: page-cleaner threads (paper 002's DB2: 2)",
    ),
    DIRTY_PAGE_THRESHOLD_PCT,
    SOFTMAX_PCT,
    ParamDecl::int(
        "pages_per_round",
        LRU_CHUNK_PAGES as u64,
        1,
        u32::MAX as u64,
        "pages a cleaner writes before waiting for them",
    ),
];

pub const ENTRY: PolicyEntry = PolicyEntry {
    name: "db2",
    about: "DB2's page cleaners (paper 002): woken by chngpgs_thresh, softmax and dirty steals",
    params: &[PARAMS],
    build: |p| Box::new(Db2::new(Db2Config::from_params(p))),
};

/// `logprimary` default in Db2 (circular logging): the number of primary log
/// files `softmax` is a fraction of.
pub const DB2_LOG_PRIMARY_FILES: f64 = 3.0;

/// Db2's default `softmax` (100 % of one primary log file) as a percentage of
/// the whole redo capacity.
pub const DB2_SOFTMAX_PCT_OF_CAPACITY: f64 = 100.0 / DB2_LOG_PRIMARY_FILES;

/// The three wake-up conditions of §3.2, shared by `db2` and `db2-aiop`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Db2Triggers {
    /// `chngpgs_thresh`: dirty pages, % of the pool, that wake the cleaners.
    pub dirty_page_threshold_pct: f64,
    /// `softmax` mapped to our redo model: redo age, % of the redo capacity.
    pub softmax_pct: f64,
}

impl Default for Db2Triggers {
    /// The declared defaults ([`DIRTY_PAGE_THRESHOLD_PCT`], [`SOFTMAX_PCT`]).
    fn default() -> Self {
        Db2Config::default().triggers()
    }
}

/// Which triggers hold now, with the numbers behind them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triggered {
    pub dirty_pages: u32,
    pub dirty_threshold_pages: u32,
    /// Synchronous replacement writes since the caller last looked.
    pub new_replacements: u64,
    pub redo_age_bytes: u64,
    pub softmax_bytes: u64,
}

impl Triggered {
    pub fn dirty_over(&self) -> bool {
        self.dirty_pages > self.dirty_threshold_pages
    }
    pub fn replacement(&self) -> bool {
        self.new_replacements > 0
    }
    pub fn softmax_over(&self) -> bool {
        self.redo_age_bytes > self.softmax_bytes
    }
    /// A trigger that asks for LRU-tail cleaning.
    pub fn lru(&self) -> bool {
        self.dirty_over() || self.replacement()
    }
    pub fn any(&self) -> bool {
        self.lru() || self.softmax_over()
    }
    pub fn describe(&self) -> String {
        format!(
            "dirty={} (threshold {}), new dirty replacements={}, redo age={} B (softmax {} B)",
            self.dirty_pages,
            self.dirty_threshold_pages,
            self.new_replacements,
            self.redo_age_bytes,
            self.softmax_bytes
        )
    }
}

impl Db2Triggers {
    /// Panics on a configuration no Db2 accepts (programmer error).
    pub fn assert_valid(&self) {
        assert!(
            self.dirty_page_threshold_pct > 0.0 && self.dirty_page_threshold_pct <= 100.0,
            "dirty_page_threshold_pct {} outside (0, 100]",
            self.dirty_page_threshold_pct
        );
        assert!(
            self.softmax_pct > 0.0 && self.softmax_pct <= 100.0,
            "softmax_pct {} outside (0, 100]",
            self.softmax_pct
        );
    }

    /// Dirty pages above which the cleaners wake.
    pub fn dirty_threshold_pages(&self, pool: &BufferPool) -> u32 {
        (self.dirty_page_threshold_pct / 100.0 * f64::from(pool.frame_count())).floor() as u32
    }

    /// Redo age above which the cleaners wake.
    pub fn softmax_bytes(&self, pool: &BufferPool) -> u64 {
        (self.softmax_pct / 100.0 * pool.redo().config.capacity_bytes as f64) as u64
    }

    /// Pages whose oldest modification is below this LSN keep the redo age
    /// above softmax; writing them brings it back to softmax.
    pub fn softmax_lsn_limit(&self, pool: &BufferPool) -> Lsn {
        Lsn(pool.current_lsn().0.saturating_sub(self.softmax_bytes(pool)))
    }

    pub fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        WakeThresholds {
            dirty_pages: Some(self.dirty_threshold_pages(pool)),
            redo_age_bytes: Some(self.softmax_bytes(pool)),
            on_sync_replacement: true,
            ..WakeThresholds::default()
        }
    }

    /// The triggers now; `replacements_seen` is the caller's last snapshot of
    /// the synchronous-replacement counter.
    pub fn check(&self, pool: &BufferPool, replacements_seen: u64) -> Triggered {
        Triggered {
            dirty_pages: pool.dirty_pages(),
            dirty_threshold_pages: self.dirty_threshold_pages(pool),
            new_replacements: pool
                .counters()
                .sync_replacement_writes
                .saturating_sub(replacements_seen),
            redo_age_bytes: pool.redo_age_bytes(),
            softmax_bytes: self.softmax_bytes(pool),
        }
    }

    /// Records which triggers fired, one rule each.
    pub fn record(ctx: &mut PolicyCtx<'_>, t: &Triggered) {
        if t.dirty_over() {
            ctx.decide("dirty_threshold_exceeded", || {
                format!("dirty={} > threshold={} pages", t.dirty_pages, t.dirty_threshold_pages)
            });
        }
        if t.replacement() {
            ctx.decide("dirty_replacement", || {
                format!(
                    "{} synchronous replacement write(s) since last look",
                    t.new_replacements
                )
            });
        }
        if t.softmax_over() {
            ctx.decide("softmax_exceeded", || {
                format!("redo age={} B > softmax={} B", t.redo_age_bytes, t.softmax_bytes)
            });
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Db2Config {
    /// `num_iocleaners`: 2, the default of the paper's DB2 (§6.2).
    pub cleaners: u32,
    /// `chngpgs_thresh`: 60 (%).
    pub dirty_page_threshold_pct: f64,
    /// `softmax` as % of the redo capacity: 100/3 (see module docs).
    pub softmax_pct: f64,
    /// Pages a cleaner writes before waiting for them: 100 (module docs).
    pub pages_per_round: u32,
}

impl Default for Db2Config {
    fn default() -> Self {
        Self::from_params(&ParamSet::defaults(ENTRY.params))
    }
}

impl Db2Config {
    pub fn from_params(p: &ParamSet) -> Self {
        Self {
            cleaners: p.u32("cleaners"),
            dirty_page_threshold_pct: p.f64("dirty_page_threshold_pct"),
            softmax_pct: p.f64("softmax_pct"),
            pages_per_round: p.u32("pages_per_round"),
        }
    }
}

impl Db2Config {
    pub fn triggers(&self) -> Db2Triggers {
        Db2Triggers {
            dirty_page_threshold_pct: self.dirty_page_threshold_pct,
            softmax_pct: self.softmax_pct,
        }
    }

    /// The LRU-tail window the cleaners share (module docs).
    pub fn lru_window_pages(&self) -> u32 {
        self.cleaners.max(1).saturating_mul(self.pages_per_round)
    }
}

/// What one cleaner remembers between its polls.
#[derive(Clone, Copy, Debug, Default)]
struct CleanerState {
    /// `sync_replacement_writes` when this cleaner last planned.
    replacements_seen: u64,
}

pub struct Db2 {
    config: Db2Config,
    triggers: Db2Triggers,
    cleaners: Vec<CleanerState>,
    /// Thresholds in pages/bytes as last computed, for `parameters()`.
    dirty_threshold_pages: u32,
    softmax_bytes: u64,
}

impl Db2 {
    pub fn new(config: Db2Config) -> Self {
        assert!(config.cleaners >= 1, "db2 needs at least one page cleaner");
        assert!(config.pages_per_round >= 1, "pages_per_round must be at least 1");
        let triggers = config.triggers();
        triggers.assert_valid();
        Self {
            cleaners: vec![CleanerState::default(); config.cleaners as usize],
            config,
            triggers,
            dirty_threshold_pages: 0,
            softmax_bytes: 0,
        }
    }

    pub fn config(&self) -> &Db2Config {
        &self.config
    }
}

impl FlushPolicy for Db2 {
    fn name(&self) -> &'static str {
        "db2"
    }

    fn cleaner_count(&self) -> u32 {
        self.config.cleaners
    }

    fn plan(&mut self, ctx: &mut PolicyCtx<'_>) -> Plan {
        let state = &mut self.cleaners[ctx.cleaner as usize];
        let t = self.triggers.check(ctx.pool, state.replacements_seen);
        state.replacements_seen = ctx.pool.counters().sync_replacement_writes;
        self.dirty_threshold_pages = t.dirty_threshold_pages;
        self.softmax_bytes = t.softmax_bytes;
        if !t.any() {
            ctx.decide("sleep_until_trigger", || t.describe());
            return Plan::Sleep(Sleep::until_event());
        }
        Db2Triggers::record(ctx, &t);
        let lru_scan_depth = if t.lru() { self.config.lru_window_pages() } else { 0 };
        Plan::Flush(IterationPlan {
            lru_scan_depth,
            lru_mode: LruMode::CleanOnly,
            lru_time_limit_us: None,
            flush_time_limit_us: None,
            flush_batch_pages: self.config.pages_per_round,
            lru_chunk_pages: LRU_CHUNK_PAGES,
            lru_dirty_grace: None,
            wait: WaitFor::AllWrites,
        })
    }

    fn plan_flush_list(&mut self, ctx: &mut PolicyCtx<'_>) -> FlushListPlan {
        let age = ctx.pool.redo_age_bytes();
        let softmax = self.triggers.softmax_bytes(ctx.pool);
        if age <= softmax {
            return FlushListPlan::NONE;
        }
        let lsn_limit = self.triggers.softmax_lsn_limit(ctx.pool);
        let pages = self.config.pages_per_round;
        ctx.decide("softmax_flush_oldest", || {
            format!("redo age={age} B > softmax={softmax} B: up to {pages} oldest pages below LSN {lsn_limit}")
        });
        FlushListPlan { pages, lsn_limit }
    }

    fn end_iteration(&mut self, ctx: &mut PolicyCtx<'_>, report: &IterationReport) -> Sleep {
        let seen = self.cleaners[ctx.cleaner as usize].replacements_seen;
        let t = self.triggers.check(ctx.pool, seen);
        let written = report.np_lru + report.np_flush;
        if !t.any() {
            ctx.decide("conditions_cleared_sleep", || {
                format!("round wrote {written} pages; {}", t.describe())
            });
            return Sleep::until_event();
        }
        if written == 0 {
            ctx.decide("nothing_to_clean_sleep", || {
                format!(
                    "a trigger holds but no idle dirty page in the {}-page tail window or below the softmax LSN; {}",
                    self.config.lru_window_pages(),
                    t.describe()
                )
            });
            return Sleep::until_event();
        }
        ctx.decide("condition_holds_another_round", || {
            format!("round wrote {written} pages; {}", t.describe())
        });
        Sleep::none()
    }

    fn wake_thresholds(&self, pool: &BufferPool) -> WakeThresholds {
        self.triggers.wake_thresholds(pool)
    }

    fn parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("cleaners", f64::from(self.config.cleaners)),
            ("dirty_page_threshold_pct", self.config.dirty_page_threshold_pct),
            ("dirty_threshold_pages", f64::from(self.dirty_threshold_pages)),
            ("softmax_pct", self.config.softmax_pct),
            ("softmax_bytes", self.softmax_bytes as f64),
            ("pages_per_round", f64::from(self.config.pages_per_round)),
            ("lru_window_pages", f64::from(self.config.lru_window_pages())),
        ]
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::buffer_pool::{BufferPoolConfig, FixIntent, FixOutcome, WriteKind, WriteOrder};
    use crate::cleaner::{CleanerAction, PageCleaner};
    use crate::decision_log::DecisionLog;
    use crate::types::{PageId, TimeUs};
    use std::collections::HashSet;

    /// Redo bytes each test modification spans.
    pub(crate) const REDO_PER_CHANGE_BYTES: u64 = 100;

    pub(crate) fn pool(frames: u32) -> BufferPool {
        BufferPool::new(BufferPoolConfig::small(frames), Lsn(1)).unwrap()
    }

    /// Creates `page` (a miss served from the free list or a clean victim)
    /// and leaves it fixed; returns its frame.
    pub(crate) fn create_fixed(pool: &mut BufferPool, page: u32) -> crate::types::FrameId {
        match pool.fix(PageId::new(0, page), FixIntent::Create, 0, 0) {
            FixOutcome::Miss(frame) | FixOutcome::Hit(frame) => frame,
            other => panic!("create of page {page}: {other:?}"),
        }
    }

    /// Creates `page`, modifies it (redo after the current head) and unfixes it.
    pub(crate) fn create_dirty(pool: &mut BufferPool, page: u32) {
        let frame = create_fixed(pool, page);
        let start = pool.current_lsn();
        pool.note_modification(frame, start, start.advance(REDO_PER_CHANGE_BYTES));
        pool.unfix(frame);
    }

    pub(crate) fn create_clean(pool: &mut BufferPool, page: u32) {
        let frame = create_fixed(pool, page);
        pool.unfix(frame);
    }

    pub(crate) fn complete_all(pool: &mut BufferPool, writes: &[WriteOrder]) {
        for w in writes {
            pool.complete_write(w.frame);
        }
        pool.check_invariants();
    }

    fn cleaner(config: Db2Config, pool: &mut BufferPool) -> PageCleaner {
        PageCleaner::new(Box::new(Db2::new(config)), pool, DecisionLog::new(1024, true))
    }

    /// Polls `cleaner` until it sleeps, completing every write at once.
    /// Returns the pages written and the sleep.
    fn run_until_sleep(pc: &mut PageCleaner, pool: &mut BufferPool, cleaner: u32, now_us: TimeUs) -> (u32, Sleep) {
        let mut written = 0;
        for step in 0..10_000u64 {
            match pc.poll(pool, cleaner, now_us + step) {
                CleanerAction::Write { writes, wait } => {
                    assert_eq!(wait, WaitFor::AllWrites);
                    written += writes.len() as u32;
                    complete_all(pool, &writes);
                }
                CleanerAction::Sleep(sleep) => return (written, sleep),
            }
        }
        panic!("cleaner never slept");
    }

    /// The `depth` pages nearest the LRU tail.
    fn tail_window(pool: &BufferPool, depth: u32) -> HashSet<PageId> {
        pool.lru_pages().into_iter().rev().take(depth as usize).collect()
    }

    fn writes_of(action: CleanerAction) -> Vec<WriteOrder> {
        match action {
            CleanerAction::Write { writes, .. } => writes,
            CleanerAction::Sleep(s) => panic!("expected writes, got {s:?}"),
        }
    }

    #[test]
    fn db2_cleaners_sleep_until_dirty_threshold_exceeded() {
        let mut pool = pool(1024);
        let mut pc = cleaner(Db2Config::default(), &mut pool);
        let threshold = (0.6 * 1024.0) as u32; // 614
        for page in 0..threshold {
            create_dirty(&mut pool, page);
        }
        pool.check_invariants();
        assert!(!pool.take_wake(), "at the threshold nothing wakes the cleaners");
        for cleaner in 0..2 {
            assert_eq!(
                pc.poll(&mut pool, cleaner, 0),
                CleanerAction::Sleep(Sleep::until_event())
            );
        }
        create_dirty(&mut pool, threshold);
        assert!(pool.take_wake(), "one page over the threshold wakes the cleaners");
        let window = tail_window(&pool, Db2Config::default().lru_window_pages());
        let writes = writes_of(pc.poll(&mut pool, 0, 10));
        assert_eq!(writes.len() as u32, LRU_CHUNK_PAGES, "one awaited batch");
        assert!(writes.iter().all(|w| w.kind == WriteKind::CleanerClean));
        // Clean-only: the written pages stay resident and come from the LRU tail.
        for w in &writes {
            assert!(pool.lookup(w.page).is_some());
            assert!(window.contains(&w.page), "{} is not near the LRU tail", w.page);
        }
        complete_all(&mut pool, &writes);
        assert!(writes.iter().all(|w| !pool.is_dirty(w.frame)));
        assert_eq!(pool.lru_len(), threshold + 1);
    }

    #[test]
    fn db2_dirty_replacement_wakes_cleaners() {
        let mut pool = pool(1024);
        let mut pc = cleaner(Db2Config::default(), &mut pool);
        // 300 dirty pages at the tail (29 %, under the threshold), then the
        // rest of the pool clean but pinned: no clean victim anywhere.
        for page in 0..300 {
            create_dirty(&mut pool, page);
        }
        let pinned: Vec<_> = (300..1024).map(|p| create_fixed(&mut pool, p)).collect();
        assert_eq!(pool.free_len(), 0);
        assert_eq!(pc.poll(&mut pool, 0, 0), CleanerAction::Sleep(Sleep::until_event()));
        assert!(!pool.take_wake());
        let order = match pool.fix(PageId::new(0, 5000), FixIntent::Read, 0, 1) {
            FixOutcome::SyncReplacementWrite(order) => order,
            other => panic!("expected a dirty replacement, got {other:?}"),
        };
        assert!(pool.take_wake(), "a dirty replacement wakes the cleaners");
        for cleaner in 0..2 {
            let writes = writes_of(pc.poll(&mut pool, cleaner, 2));
            assert!(writes.iter().all(|w| w.kind == WriteKind::CleanerClean));
            assert!(writes.iter().all(|w| w.page != order.page));
            complete_all(&mut pool, &writes);
        }
        pool.complete_write(order.frame);
        for frame in pinned {
            pool.unfix(frame);
        }
        pool.check_invariants();
        assert!(pc
            .log()
            .entries()
            .any(|d| d.rule == "dirty_replacement" && d.cleaner == 1));
    }

    #[test]
    fn db2_softmax_wakes_cleaners_and_flushes_oldest() {
        let mut pool = pool(1024);
        let mut pc = cleaner(Db2Config::default(), &mut pool);
        let softmax = Db2Triggers::default().softmax_bytes(&pool);
        assert_eq!(softmax, (512u64 << 20) / 3);
        // Ten old pages, then the log moves past softmax and ten new pages.
        for page in 0..10 {
            create_dirty(&mut pool, page);
        }
        assert_eq!(pc.poll(&mut pool, 0, 0), CleanerAction::Sleep(Sleep::until_event()));
        pool.note_redo(pool.current_lsn().advance(softmax));
        for page in 10..20 {
            create_dirty(&mut pool, page);
        }
        assert!(pool.take_wake(), "redo age over softmax wakes the cleaners");
        let writes = writes_of(pc.poll(&mut pool, 0, 1));
        assert!(writes.iter().all(|w| w.kind == WriteKind::FlushList));
        let written: HashSet<u32> = writes.iter().map(|w| w.page.page_no).collect();
        assert_eq!(written, (0..10).collect(), "exactly the pages older than softmax");
        complete_all(&mut pool, &writes);
        assert!(pool.redo_age_bytes() <= softmax);
        let (more, sleep) = run_until_sleep(&mut pc, &mut pool, 0, 2);
        assert_eq!(more, 0);
        assert_eq!(sleep, Sleep::until_event(), "softmax no longer exceeded");
        assert_eq!(pool.dirty_pages(), 10);
    }

    #[test]
    fn db2_cleaner_repeats_rounds_while_condition_holds() {
        let mut pool = pool(1024);
        let config = Db2Config {
            cleaners: 1,
            dirty_page_threshold_pct: 10.0,
            ..Db2Config::default()
        };
        let mut pc = cleaner(config, &mut pool);
        // A full pool of dirty pages: far over the 10 % threshold.
        for page in 0..1024 {
            create_dirty(&mut pool, page);
        }
        assert!(pool.take_wake());
        let threshold = config.triggers().dirty_threshold_pages(&pool);
        let mut rounds_with_writes = 0;
        let mut next_page = 2000;
        for round in 0..8u64 {
            let dirty_before = pool.dirty_pages();
            let (written, sleep) = run_until_sleep(&mut pc, &mut pool, 0, round * 1000);
            pool.check_invariants();
            assert!(pool.dirty_pages() > threshold);
            assert!(written <= config.lru_window_pages());
            assert_eq!(pool.dirty_pages(), dirty_before - written);
            if written > 0 {
                rounds_with_writes += 1;
                assert_eq!(sleep, Sleep::none(), "the threshold still holds: another round at once");
            } else {
                assert_eq!(
                    sleep,
                    Sleep::until_event(),
                    "nothing idle in the window: wait for an event"
                );
            }
            // Users take the cleaned tail pages as victims, without writing.
            for _ in 0..config.lru_window_pages() {
                create_clean(&mut pool, next_page);
                next_page += 1;
            }
            assert_eq!(pool.counters().sync_replacement_writes, 0);
        }
        assert!(rounds_with_writes >= 4, "only {rounds_with_writes} rounds wrote pages");
        assert!(pc.log().entries().any(|d| d.rule == "condition_holds_another_round"));
    }

    #[test]
    fn db2_runs_configured_number_of_cleaners() {
        let mut pool = pool(1024);
        let config = Db2Config {
            cleaners: 3,
            ..Db2Config::default()
        };
        let mut pc = cleaner(config, &mut pool);
        assert_eq!(pc.cleaner_count(), 3);
        for page in 0..700 {
            create_dirty(&mut pool, page);
        }
        assert!(pool.take_wake());
        // Each cleaner, polled on its own, takes a batch of its own.
        let mut seen = HashSet::new();
        let mut batches = Vec::new();
        for cleaner in 0..3 {
            let writes = writes_of(pc.poll(&mut pool, cleaner, 0));
            assert_eq!(writes.len() as u32, LRU_CHUNK_PAGES);
            for w in &writes {
                assert!(seen.insert(w.page), "page {} written by two cleaners", w.page);
            }
            batches.push(writes);
            pool.check_invariants();
        }
        assert_eq!(pool.pending_async_writes(), 3 * LRU_CHUNK_PAGES);
        for writes in &batches {
            complete_all(&mut pool, writes);
        }
        assert_eq!(pool.dirty_pages(), 400);
        let params = pc.parameters();
        assert!(params.contains(&("cleaners", 3.0)));
        assert!(params.contains(&("lru_window_pages", 300.0)));
    }
}
