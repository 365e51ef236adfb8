//! The hit fast path: buffer hits that pin a frame with atomics, without
//! the core's mutex, while the core keeps every list decision.
//!
//! [`HitPath`] holds, beside the core (`flushwise_core::fast_hits`):
//! - a **page table** (page id -> frame, [`super::hit_table`]) that readers
//!   search without any lock or write, so concurrent hits share no written
//!   cache line but their frame's;
//! - per frame, a **pin count**, the **page it holds for hits** (or
//!   [`NO_PAGE`]) and the core's **access rule** (when a hit would make the
//!   page young);
//! - the core's **freed-page clock**, and striped counters of the hits it
//!   served, folded into the core's `requests` when someone reads them.
//!
//! A hit ([`HitPath::try_hit`]): look the page up in the table, raise the
//! frame's pin, then re-read the frame's page; if it changed, drop the pin
//! and take the core's path. If the core's rule says this hit makes the page
//! young, also take the core's path (the core moves it, under its mutex).
//! Otherwise the hit is served: counted in a stripe, the frame stays pinned
//! until [`HitPath::unpin`]. Every fix the core serves is handed over the
//! same way ([`HitPath::adopt`]: publish the page, pin, then the shell
//! releases the core's fix), so an unfix is always one atomic decrement.
//!
//! # Invariants
//! 1. (Under the core mutex) a frame's published page is the page the core
//!    holds in that frame, not being read; the table maps exactly
//!    the published pages to their frames ([`HitPath::check`]).
//! 2. The core evicts a frame only after [`FastHits::try_evict`] cleared its
//!    published page and then found no pin (both `SeqCst`); a hit raises the
//!    pin and then reads the published page (both `SeqCst`). In the single
//!    total order of those four operations one side sees the other: either
//!    the eviction sees the pin and is vetoed (the page is re-published), or
//!    the hit sees the cleared page and backs off. So a pinned frame is
//!    never evicted, and a hit never pins a frame for the wrong page (an
//!    A-B-A reuse for the same page is the right page).
//! 3. Publishing (adopt) and clearing (evict) happen only under the core
//!    mutex; so do rule and clock updates (the core calls them).
//! 4. Counted hits = served fast hits: each served hit adds one to a stripe
//!    before returning; `take_hits` swaps the stripes to zero, so every hit
//!    is folded exactly once.
//!
//! The access rule a hit reads may be a moment old (the core may be
//! changing it under its mutex): such a hit is ordered just before the
//! change, as if it had won the mutex first.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::hit_table::HitTable;
use flushwise_core::{AccessRule, BufferPool, FastHits, FrameId, PageId, TimeUs};

/// Hit-counter stripes (a power of two); a thread keeps to one.
const STRIPES: usize = 16;
/// The published page of a frame that holds none for hits.
pub const NO_PAGE: u64 = u64::MAX;

/// One frame's hit state, on its own cache line.
#[repr(align(64))]
struct FrameMeta {
    pins: AtomicU32,
    page: AtomicU64,
    young_at_us: AtomicU64,
    young_at_freed_clock: AtomicU64,
}

#[repr(align(64))]
struct Stripe(AtomicU64);

thread_local! {
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

fn my_stripe() -> usize {
    STRIPE.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
            s.set(i);
        }
        i
    })
}

/// See the module documentation.
pub(crate) struct HitPath {
    frames: Box<[FrameMeta]>,
    table: HitTable,
    freed_page_clock: AtomicU64,
    hits: Box<[Stripe]>,
}

impl HitPath {
    pub fn new(frames: u32) -> Self {
        Self {
            frames: (0..frames)
                .map(|_| FrameMeta {
                    pins: AtomicU32::new(0),
                    page: AtomicU64::new(NO_PAGE),
                    young_at_us: AtomicU64::new(AccessRule::NEVER),
                    young_at_freed_clock: AtomicU64::new(AccessRule::NEVER),
                })
                .collect(),
            table: HitTable::new(frames),
            freed_page_clock: AtomicU64::new(0),
            hits: (0..STRIPES).map(|_| Stripe(AtomicU64::new(0))).collect(),
        }
    }

    /// Serves a hit on `page` without the core if it is resident, not being
    /// read, and the hit moves nothing in the LRU; the frame is then pinned.
    /// `now_us` is called only for pages whose rule depends on time.
    pub fn try_hit(&self, page: PageId, now_us: impl FnOnce() -> TimeUs) -> Option<FrameId> {
        let raw = page.as_u64();
        let index = self.table.get(raw)?;
        let m = &self.frames[index as usize];
        m.pins.fetch_add(1, Ordering::SeqCst);
        if m.page.load(Ordering::SeqCst) != raw {
            m.pins.fetch_sub(1, Ordering::Release);
            return None;
        }
        let rule = AccessRule {
            young_at_us: m.young_at_us.load(Ordering::Relaxed),
            young_at_freed_clock: m.young_at_freed_clock.load(Ordering::Relaxed),
        };
        // Nothing moves before the first eviction; the clock is read only
        // for pages whose rule depends on it.
        let clock = self.freed_page_clock.load(Ordering::Relaxed);
        let now = if clock != 0 && rule.needs_time() { now_us() } else { 0 };
        if rule.moves(now, clock) {
            m.pins.fetch_sub(1, Ordering::Release);
            return None;
        }
        self.hits[my_stripe()].0.fetch_add(1, Ordering::Relaxed);
        Some(FrameId(index))
    }

    /// Call with the core mutex held, for a frame the core has fixed for
    /// `page` and whose contents are valid: publishes it for hits and pins
    /// it. The caller then releases the core's fix.
    pub fn adopt(&self, frame: FrameId, page: PageId) {
        let raw = page.as_u64();
        debug_assert_ne!(raw, NO_PAGE, "page id collides with the no-page marker");
        let m = &self.frames[frame.index()];
        m.pins.fetch_add(1, Ordering::SeqCst);
        if m.page.load(Ordering::Relaxed) != raw {
            self.table.insert(raw, frame.0);
            m.page.store(raw, Ordering::SeqCst);
        }
    }

    /// Releases one pin of `frame` (its latch was released first).
    pub fn unpin(&self, frame: FrameId) {
        let before = self.frames[frame.index()].pins.fetch_sub(1, Ordering::Release);
        assert!(before > 0, "unfix of {frame} which is not pinned");
    }

    /// Hits served since the last call (to add to the core's counters).
    pub fn take_hits(&self) -> u64 {
        self.hits.iter().map(|s| s.0.swap(0, Ordering::Relaxed)).sum()
    }

    /// Pins held now, over all frames (tests: zero when nothing is fixed).
    pub fn pins_held(&self) -> u64 {
        self.frames
            .iter()
            .map(|m| u64::from(m.pins.load(Ordering::SeqCst)))
            .sum()
    }

    /// Invariant 1 of the module doc; call with the core mutex held.
    pub fn check(&self, pool: &BufferPool) {
        let mut published = 0usize;
        for (i, m) in self.frames.iter().enumerate() {
            let frame = FrameId(i as u32);
            let raw = m.page.load(Ordering::SeqCst);
            if raw == NO_PAGE {
                continue;
            }
            published += 1;
            let page = PageId::from_u64(raw);
            assert_eq!(pool.page_of(frame), Some(page), "{frame} published for {page}");
            assert!(!pool.is_reading(frame), "{frame} published while being read");
            assert_eq!(self.table.get(raw), Some(frame.0), "page table entry of {page}");
        }
        let mapped = self.table.entries().len();
        assert_eq!(mapped, published, "page table holds exactly the published pages");
    }
}

/// The core's view of a [`HitPath`].
pub(crate) struct Gate(pub Arc<HitPath>);

impl FastHits for Gate {
    fn try_evict(&self, frame: FrameId, page: PageId) -> bool {
        let m = &self.0.frames[frame.index()];
        let previous = m.page.swap(NO_PAGE, Ordering::SeqCst);
        if m.pins.load(Ordering::SeqCst) != 0 {
            m.page.store(previous, Ordering::SeqCst);
            return false;
        }
        if previous != NO_PAGE {
            debug_assert_eq!(previous, page.as_u64(), "{frame} published for another page");
            self.0.table.remove(previous);
        }
        true
    }

    fn is_pinned(&self, frame: FrameId) -> bool {
        self.0.frames[frame.index()].pins.load(Ordering::SeqCst) != 0
    }

    fn publish_access_rule(&self, frame: FrameId, rule: AccessRule) {
        let m = &self.0.frames[frame.index()];
        m.young_at_us.store(rule.young_at_us, Ordering::Relaxed);
        m.young_at_freed_clock
            .store(rule.young_at_freed_clock, Ordering::Relaxed);
    }

    fn publish_freed_page_clock(&self, clock: u64) {
        self.0.freed_page_clock.store(clock, Ordering::Relaxed);
    }

    fn published_access_rule(&self, frame: FrameId) -> Option<AccessRule> {
        let m = &self.0.frames[frame.index()];
        Some(AccessRule {
            young_at_us: m.young_at_us.load(Ordering::Relaxed),
            young_at_freed_clock: m.young_at_freed_clock.load(Ordering::Relaxed),
        })
    }

    fn published_freed_page_clock(&self) -> Option<u64> {
        Some(self.0.freed_page_clock.load(Ordering::Relaxed))
    }
}
