//! The contract between the core and a shell that serves buffer hits
//! without taking the core's lock.
//!
//! A threaded shell may keep, beside the core, a page table of its own and
//! a pin count per frame, so that a hit (page resident, no I/O) pins its
//! frame with atomics alone. The core still makes every decision:
//! - **eviction**: before the core evicts a page it asks
//!   [`FastHits::try_evict`]; a shell pin vetoes it and the core looks for
//!   another victim (InnoDB's `buf_page_can_relocate` on `buf_fix_count`);
//! - **LRU order**: the core publishes per resident frame an [`AccessRule`]
//!   (when a hit would make the page young, `buf_page_peek_if_too_old`) and
//!   its freed-page clock. A hit the rule says moves nothing is served by
//!   the shell; the others come to the core ([`crate::BufferPool::fix`]),
//!   which decides with its own state;
//! - **statistics**: hits served by the shell are folded into the core's
//!   counters later ([`crate::BufferPool::note_fast_hits`]), so the totals
//!   stay exact.
//!
//! Nothing here does I/O, reads a clock or spawns a thread: the trait is
//! implemented by the shell over its own memory.
//!
//! # Invariants (checked by [`crate::BufferPool::check_invariants`])
//! 1. For every resident frame the rule the shell holds equals
//!    [`crate::BufferPool::access_rule`], and the shell's freed-page clock
//!    equals the core's (every change is published before the core's
//!    method returns).
//! 2. A frame the core evicts had no shell pin at the moment of
//!    `try_evict`, and none can be taken until the shell maps the frame to
//!    a page again: the shell's side of that promise is its handshake
//!    (e.g. a pin count raised before re-checking the frame's page, against
//!    a page cleared before reading the pin count).

use crate::types::{FrameId, PageId, TimeUs};

/// When a hit on a resident page makes it young (moves it to the LRU head).
///
/// `buf_page_peek_if_too_old`: a page in the old sublist moves when
/// accessed `innodb_old_blocks_time` after its first access; a young page
/// moves once a quarter of the young sublist's worth of pages was evicted
/// since it was last made young; nothing moves before the first eviction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessRule {
    /// A hit at or after this time moves the page ([`AccessRule::NEVER`]: not by time).
    pub young_at_us: TimeUs,
    /// A hit once the pool's freed-page clock reaches this moves the page
    /// ([`AccessRule::NEVER`]: not by evictions).
    pub young_at_freed_clock: u64,
}

impl AccessRule {
    pub const NEVER: u64 = u64::MAX;

    /// True if a hit at `now_us` with the pool's freed-page clock at
    /// `freed_page_clock` makes the page young.
    pub fn moves(&self, now_us: TimeUs, freed_page_clock: u64) -> bool {
        freed_page_clock != 0 && (now_us >= self.young_at_us || freed_page_clock >= self.young_at_freed_clock)
    }

    /// True if [`AccessRule::moves`] depends on the time (callers may skip
    /// reading the clock otherwise).
    pub fn needs_time(&self) -> bool {
        self.young_at_us != Self::NEVER
    }
}

/// What a shell serving hits outside the core implements; see the module
/// documentation. Called by the core with the core's own state borrowed,
/// so implementations must not call back into the core.
pub trait FastHits: Send {
    /// The core is about to evict `frame` (resident with `page`, clean, no
    /// I/O, not fixed through the core). Return false if the shell holds a
    /// pin on it: the page stays. Returning true promises that no pin exists
    /// and none can be taken until the shell maps the frame to a page again.
    fn try_evict(&self, frame: FrameId, page: PageId) -> bool;

    /// True if the shell holds a pin on `frame` now (for assertions).
    fn is_pinned(&self, frame: FrameId) -> bool;

    /// The access rule of the resident `frame` is now `rule`.
    fn publish_access_rule(&self, frame: FrameId, rule: AccessRule);

    /// The pool's freed-page clock (evictions so far) is now `clock`.
    fn publish_freed_page_clock(&self, clock: u64);

    /// The rule the shell holds for `frame` (invariant checks; `None`
    /// skips the check).
    fn published_access_rule(&self, _frame: FrameId) -> Option<AccessRule> {
        None
    }

    /// The freed-page clock the shell holds (invariant checks).
    fn published_freed_page_clock(&self) -> Option<u64> {
        None
    }
}
