//! An index over LRU positions: which frame is the first from the tail
//! that a user could evict, or write for a single-page flush, and how many
//! pages a walk from the tail examines to reach it, without the walk.
//!
//! InnoDB finds a victim by walking the LRU from its tail
//! (`buf_LRU_free_from_common_LRU_list`, `buf_flush_single_page_from_LRU`),
//! and the number of pages walked is a statistic policies read (NP_clean,
//! NP_dirty). The pool keeps those walks' results exactly but answers them
//! here in O(log n).
//!
//! # Model
//! The LRU is its young sublist followed by its old sublist (the tail is the
//! old tail). Each sublist only ever gains pages at its two ends: a new page
//! enters at the head of the old sublist (the midpoint) or, below
//! `lru_old_min_len`, of the young one; a page made young enters at the
//! young head; `rebalance_old` moves the young tail to the old head or the
//! old head to the young tail. Pages leave from anywhere. So each sublist is
//! a deque with holes, and labels that only decrease at its head and only
//! increase at its tail keep its order without ever relabelling a page
//! between ends: a page's label is its *slot* in an array of `capacity`
//! slots; the first page at either end of an exhausted array moves every
//! page of that sublist to the middle again, keeping their order
//! (`recompact`, amortized O(1): at least `capacity / 4` pushes apart).
//!
//! Per sublist the index keeps one bit per slot in use with a Fenwick tree
//! over the bit words' counts, so the pages between a slot and the tail
//! (its rank) are O(log n) to count, and per victim flag a bitset with
//! summary levels (a bit per non-zero word below), so the last flagged slot
//! below a given one is a few word scans away.
//!
//! For the page cleaner's graced LRU walk (`flushwise`'s rule 9) a third
//! flag marks the pages an LRU batch may write ([`LRU_FLUSHABLE`]: dirty,
//! no I/O, fixed or not), with a Fenwick tree of its counts, and per
//! sublist a tree over slots holding the least first access of those pages
//! below each node, so "the first such page from the tail first accessed
//! by a cutoff" is one descent and "how many lie between the tail and a
//! slot" one sum. A frame's first access never changes while it is on the
//! LRU (it is set when a page is read into the frame,
//! [`LruIndex::set_first_access`]).
//!
//! A flag a frame gains is recorded at once ([`LruIndex::note_flags`]);
//! [`REPLACEABLE`] or [`SINGLE_PAGE_FLUSHABLE`] lost may stay until a
//! search meets the frame, finds it stale and clears it
//! ([`LruIndex::set_flags`]). Most flag changes are a hit's fix (a clean
//! page stops being replaceable) and its unfix (it is again): with the
//! flag left standing in between, the pair costs one byte compare. A search
//! checks each flagged frame it meets against the frame itself anyway, so
//! stale flags change its cost, never its answer. [`LRU_FLUSHABLE`] is
//! held exactly: lost at once too (at a write's start, which the pool
//! reports), since its counts must be exact; a fix does not change it.
//! Only pools whose cleaner walks with a grace keep it: the index starts
//! tracking it at the first graced walk ([`LruIndex::track_lru_flushable`]),
//! and until then masks it out (the other policies' simulator runs were
//! 16 % slower paying for it). Likewise [`REPLACEABLE`] is held exactly
//! only in pools on MySQL 5.1's free margin, which count the replaceable
//! pages near the tail on every miss ([`LruIndex::replaceable_near_tail`],
//! a population count): there a fix clears it at once.
//!
//! # Invariants (checked by [`LruIndex::check`])
//! 1. The slots in use of a sublist, in increasing order, hold exactly that
//!    sublist's frames from head to tail; each lies in `lo..hi`; each frame
//!    on the LRU knows its sublist and slot; every other slot holds `NIL`.
//!    A frame off the LRU has no place and no flags.
//! 2. The Fenwick trees sum the bits in use, and the [`LRU_FLUSHABLE`]
//!    bits, of each word; `len` and `flushable_len` count them.
//! 3. A flag bit is set exactly for the slots in use whose frame holds the
//!    flag; a summary bit is set exactly for the non-zero words below it.
//! 4. A frame's flags include every victim flag the frame has (they may
//!    hold more: stale flags not yet cleared by a search); once the index
//!    tracks it, they hold [`LRU_FLUSHABLE`] exactly when the frame has it
//!    (before, never); once it keeps [`REPLACEABLE`] exact (5.1's free
//!    margin), they hold it exactly when the frame has it.
//! 5. A grace-tree leaf holds the frame's first access exactly for the
//!    slots in use whose frame holds [`LRU_FLUSHABLE`] (`TimeUs::MAX`
//!    elsewhere); each inner node holds the minimum of its two children.

use crate::list::NIL;
use crate::types::TimeUs;

/// The frame is clean, unfixed through the core and has no I/O
/// (`buf_flush_ready_for_replace`): a clean-victim scan stops here unless
/// a fast-hit shell vetoes it.
pub(super) const REPLACEABLE: u8 = 1;
/// The frame is dirty, has no I/O and no core fix (`buf_flush_ready_for_flush`
/// for `BUF_FLUSH_SINGLE_PAGE`): a single-page flush writes it unless a
/// fast-hit shell holds a pin on it.
pub(super) const SINGLE_PAGE_FLUSHABLE: u8 = 2;
/// The frame is dirty and has no I/O, fixed or not (`buf_flush_ready_for_flush`
/// for `BUF_FLUSH_LRU`): an LRU batch writes it when it meets it. Held
/// exactly; counted and, in the grace tree, ordered by first access.
pub(super) const LRU_FLUSHABLE: u8 = 4;
/// Every victim flag, in the order of `Deque::flagged`.
const VICTIM_FLAGS: [u8; 3] = [REPLACEABLE, SINGLE_PAGE_FLUSHABLE, LRU_FLUSHABLE];
/// [`LRU_FLUSHABLE`]'s index in `VICTIM_FLAGS`.
const LRU_FLUSHABLE_BITS: usize = 2;

/// The two sublists of the LRU, head to tail: young, then old.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sublist {
    Young = 0,
    Old = 1,
}

/// Where a frame on the LRU sits: its sublist and slot (`NIL` slot: off).
/// A place holds until the frame leaves the LRU, crosses the midpoint or a
/// push recompacts its sublist: callers keep ranks, not places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Place {
    slot: u32,
    sublist: Sublist,
}

impl Place {
    const OFF_LRU: Place = Place {
        slot: NIL,
        sublist: Sublist::Young,
    };
}

/// A bitset with summary levels: bit `i` of level `k + 1` is set iff word
/// `i` of level `k` is non-zero; the top level is one word.
#[derive(Clone, Debug)]
struct SummaryBits {
    levels: Vec<Vec<u64>>,
}

impl SummaryBits {
    fn new(bits: usize) -> Self {
        let mut levels = Vec::new();
        let mut width = bits.max(1);
        loop {
            let words = width.div_ceil(64);
            levels.push(vec![0; words]);
            if words == 1 {
                break;
            }
            width = words;
        }
        Self { levels }
    }

    fn get(&self, bit: u32) -> bool {
        self.levels[0][bit as usize / 64] & (1 << (bit % 64)) != 0
    }

    fn set(&mut self, bit: u32) {
        let mut i = bit as usize;
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            let was_zero = *word == 0;
            *word |= 1 << (i % 64);
            if !was_zero {
                break;
            }
            i /= 64;
        }
    }

    fn clear(&mut self, bit: u32) {
        let mut i = bit as usize;
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            *word &= !(1 << (i % 64));
            if *word != 0 {
                break;
            }
            i /= 64;
        }
    }

    fn clear_all(&mut self) {
        for level in &mut self.levels {
            level.fill(0);
        }
    }

    /// The set bits in `floor..below`: one summary search per non-zero
    /// word, then its population count.
    fn count_down(&self, floor: u32, below: u32) -> u32 {
        let mut count = 0;
        let mut next = below.checked_sub(1).and_then(|b| self.last_at_or_below(b));
        while let Some(top) = next {
            if top < floor {
                break;
            }
            let word_start = top - top % 64;
            let mut word = self.levels[0][top as usize / 64];
            if top % 64 != 63 {
                word &= (1u64 << (top % 64 + 1)) - 1;
            }
            if floor > word_start {
                word &= !((1u64 << (floor - word_start)) - 1);
            }
            count += word.count_ones();
            next = word_start.checked_sub(1).and_then(|b| self.last_at_or_below(b));
        }
        count
    }

    /// The highest set bit at or below `bit`.
    fn last_at_or_below(&self, bit: u32) -> Option<u32> {
        let mut level = 0;
        let mut i = bit as usize;
        // Climb until a word holds a set bit at or below the position...
        let found = loop {
            let below = if i % 64 == 63 {
                u64::MAX
            } else {
                (1u64 << (i % 64 + 1)) - 1
            };
            let word = self.levels[level][i / 64] & below;
            if word != 0 {
                break (i / 64) * 64 + 63 - word.leading_zeros() as usize;
            }
            if i < 64 || level + 1 == self.levels.len() {
                return None;
            }
            // ...looking at the words wholly below this one, a level up.
            i = i / 64 - 1;
            level += 1;
        };
        // ...then descend along the highest set bits.
        let mut i = found;
        while level > 0 {
            level -= 1;
            let word = self.levels[level][i];
            debug_assert_ne!(word, 0, "summary bit without a set bit below");
            i = i * 64 + 63 - word.leading_zeros() as usize;
        }
        Some(i as u32)
    }
}

/// A segment tree over slots: per node the least first access of the
/// [`LRU_FLUSHABLE`] slots below it (`TimeUs::MAX` if none). Leaf `slot`
/// is node `size + slot`; node `i`'s children are `2i` and `2i + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GraceTree {
    size: usize,
    min_access_us: Vec<TimeUs>,
}

impl GraceTree {
    fn new(slots: usize) -> Self {
        let size = slots.max(1).next_power_of_two();
        Self {
            size,
            min_access_us: vec![TimeUs::MAX; 2 * size],
        }
    }

    /// Marks `slot` flushable with first access `access_us`, or not
    /// (`TimeUs::MAX`). The climb stops where a node's minimum is unchanged.
    fn set(&mut self, slot: u32, access_us: TimeUs) {
        let mut node = self.size + slot as usize;
        self.min_access_us[node] = access_us;
        while node > 1 {
            let sibling = self.min_access_us[node ^ 1];
            let min = self.min_access_us[node].min(sibling);
            node /= 2;
            if self.min_access_us[node] == min {
                break;
            }
            self.min_access_us[node] = min;
        }
    }

    /// Sets the leaves `start..` to `leaves` (`TimeUs::MAX` where not
    /// flushable) and every inner node from them, in O(size).
    fn rebuild(&mut self, start: u32, leaves: impl Iterator<Item = TimeUs>) {
        self.min_access_us.fill(TimeUs::MAX);
        for (i, access_us) in leaves.enumerate() {
            self.min_access_us[self.size + start as usize + i] = access_us;
        }
        for node in (1..self.size).rev() {
            self.min_access_us[node] = self.min_access_us[2 * node].min(self.min_access_us[2 * node + 1]);
        }
    }

    /// The highest flushable slot at or below `slot` first accessed at or
    /// before `cutoff_us`, which must be below `TimeUs::MAX` (the value of
    /// a slot that is not flushable).
    fn last_at_or_below(&self, slot: u32, cutoff_us: TimeUs) -> Option<u32> {
        debug_assert!(cutoff_us < TimeUs::MAX, "a cutoff of TimeUs::MAX matches every slot");
        self.last_in(1, 0, self.size, slot as usize, cutoff_us)
    }

    /// [`Self::last_at_or_below`] within node `node`, which covers `lo..hi`.
    /// Only nodes cut by `slot` recurse into both children, one per level;
    /// a node wholly at or below it descends straight to its answer.
    fn last_in(&self, node: usize, lo: usize, hi: usize, slot: usize, cutoff_us: TimeUs) -> Option<u32> {
        if lo > slot || self.min_access_us[node] > cutoff_us {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo as u32);
        }
        let mid = (lo + hi) / 2;
        self.last_in(2 * node + 1, mid, hi, slot, cutoff_us)
            .or_else(|| self.last_in(2 * node, lo, mid, slot, cutoff_us))
    }
}

/// A Fenwick tree over the set bits of a bitset's words (node `i` at
/// index `i - 1`), so the set bits below any bit sum in O(log n).
#[derive(Clone, Debug, PartialEq, Eq)]
struct WordCounts {
    tree: Vec<u32>,
}

impl WordCounts {
    fn new(words: usize) -> Self {
        Self { tree: vec![0; words] }
    }

    fn add(&mut self, word: usize, delta: i32) {
        let mut node = word + 1;
        while node <= self.tree.len() {
            self.tree[node - 1] = self.tree[node - 1].wrapping_add_signed(delta);
            node += node & node.wrapping_neg();
        }
    }

    /// Set bits of `words` below `bit`.
    fn below(&self, words: &[u64], bit: u32) -> u32 {
        let word = bit as usize / 64;
        let mut sum = (words[word] & ((1u64 << (bit % 64)) - 1)).count_ones();
        let mut node = word;
        while node > 0 {
            sum += self.tree[node - 1];
            node &= node - 1;
        }
        sum
    }

    /// The tree of `words`, built in O(words).
    fn rebuild(&mut self, words: &[u64]) {
        for (count, word) in self.tree.iter_mut().zip(words) {
            *count = word.count_ones();
        }
        let n = self.tree.len();
        for node in 1..=n {
            let parent = node + (node & node.wrapping_neg());
            if parent <= n {
                self.tree[parent - 1] += self.tree[node - 1];
            }
        }
    }
}

/// One sublist: its frames by slot, which slots are in use (with counts)
/// and which hold each victim flag.
#[derive(Clone, Debug)]
struct Deque {
    /// The frame in each slot; `NIL` where none.
    frames: Vec<u32>,
    /// One bit a slot: in use.
    used: Vec<u64>,
    /// The slots in use below any slot.
    used_counts: WordCounts,
    /// Per victim flag (as `VICTIM_FLAGS`): the slots whose frame holds it.
    flagged: [SummaryBits; 3],
    /// The [`LRU_FLUSHABLE`] slots below any slot, and in all.
    flushable_counts: WordCounts,
    flushable_len: u32,
    /// The [`LRU_FLUSHABLE`] slots' frames' first accesses.
    grace: GraceTree,
    /// Every slot in use lies in `lo..hi`; the next head push takes
    /// `lo - 1`, the next tail push `hi`.
    lo: u32,
    hi: u32,
    len: u32,
}

impl Deque {
    fn new(capacity: u32) -> Self {
        let words = capacity as usize / 64;
        Self {
            frames: vec![NIL; capacity as usize],
            used: vec![0; words],
            used_counts: WordCounts::new(words),
            flagged: [(); 3].map(|()| SummaryBits::new(capacity as usize)),
            flushable_counts: WordCounts::new(words),
            flushable_len: 0,
            grace: GraceTree::new(capacity as usize),
            lo: capacity / 2,
            hi: capacity / 2,
            len: 0,
        }
    }

    fn capacity(&self) -> u32 {
        self.frames.len() as u32
    }

    /// Slots in use below `slot`.
    fn used_below(&self, slot: u32) -> u32 {
        self.used_counts.below(&self.used, slot)
    }

    /// Slots holding [`LRU_FLUSHABLE`] at or above `slot`.
    fn flushable_at_or_above(&self, slot: u32) -> u32 {
        self.flushable_len
            - self
                .flushable_counts
                .below(&self.flagged[LRU_FLUSHABLE_BITS].levels[0], slot)
    }

    /// `slot` gains ([`Some`] first access) or loses [`LRU_FLUSHABLE`];
    /// its bit is set or cleared by the caller.
    fn note_flushable(&mut self, slot: u32, access_us: Option<TimeUs>) {
        let delta = if access_us.is_some() { 1 } else { -1 };
        self.flushable_counts.add(slot as usize / 64, delta);
        self.flushable_len = self.flushable_len.wrapping_add_signed(delta);
        self.grace.set(slot, access_us.unwrap_or(TimeUs::MAX));
    }

    /// The counts and the grace tree of the current bits, in O(capacity).
    fn rebuild_counts(&mut self, first_access_us: impl Fn(u32) -> TimeUs) {
        self.used_counts.rebuild(&self.used);
        let flushable = &self.flagged[LRU_FLUSHABLE_BITS].levels[0];
        self.flushable_counts.rebuild(flushable);
        self.flushable_len = flushable.iter().map(|w| w.count_ones()).sum();
        if self.flushable_len == 0 {
            // Nothing flagged, so no leaf was ever left set: the tree is
            // all `TimeUs::MAX` already (the untracked case costs nothing).
            debug_assert_eq!(self.grace.min_access_us[1], TimeUs::MAX);
            return;
        }
        let (bits, frames) = (&self.flagged[LRU_FLUSHABLE_BITS], &self.frames);
        let leaves = (0..self.capacity()).map(|slot| {
            if bits.get(slot) {
                first_access_us(frames[slot as usize])
            } else {
                TimeUs::MAX
            }
        });
        self.grace.rebuild(0, leaves);
    }

    fn put(&mut self, slot: u32, frame: u32, flags: u8, access_us: TimeUs) {
        debug_assert_eq!(self.frames[slot as usize], NIL, "slot {slot} taken");
        self.frames[slot as usize] = frame;
        self.used[slot as usize / 64] |= 1 << (slot % 64);
        self.used_counts.add(slot as usize / 64, 1);
        for (bits, flag) in self.flagged.iter_mut().zip(VICTIM_FLAGS) {
            if flags & flag != 0 {
                bits.set(slot);
            }
        }
        if flags & LRU_FLUSHABLE != 0 {
            self.note_flushable(slot, Some(access_us));
        }
        self.len += 1;
    }

    fn take(&mut self, slot: u32, flags: u8) {
        debug_assert_ne!(self.frames[slot as usize], NIL, "slot {slot} empty");
        self.frames[slot as usize] = NIL;
        self.used[slot as usize / 64] &= !(1 << (slot % 64));
        self.used_counts.add(slot as usize / 64, -1);
        for (bits, flag) in self.flagged.iter_mut().zip(VICTIM_FLAGS) {
            if flags & flag != 0 {
                bits.clear(slot);
            }
        }
        if flags & LRU_FLUSHABLE != 0 {
            self.note_flushable(slot, None);
        }
        self.len -= 1;
        if self.len == 0 {
            self.lo = self.capacity() / 2;
            self.hi = self.lo;
        } else if slot == self.lo {
            self.lo += 1;
        } else if slot + 1 == self.hi {
            self.hi -= 1;
        }
    }

    /// The frames in use, head to tail.
    fn members(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len as usize);
        for (w, &word) in self.used.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                out.push(self.frames[slot]);
                bits &= bits - 1;
            }
        }
        out
    }
}

/// The index over LRU positions. See the module documentation.
pub(super) struct LruIndex {
    /// Per frame: its place on the LRU.
    places: Vec<Place>,
    /// Per frame: the victim flags the index holds for it (a byte a frame,
    /// so the check a fix or unfix makes stays in the first-level cache).
    flags: Vec<u8>,
    /// Per frame: when its page was first accessed (read into the frame).
    first_access_us: Vec<TimeUs>,
    /// The flags the index keeps: [`LRU_FLUSHABLE`] only once a graced
    /// walk asked for it ([`Self::track_lru_flushable`]), so the pools of
    /// other policies pay nothing for it.
    tracked: u8,
    /// Whether [`REPLACEABLE`] is held exactly: only pools on MySQL 5.1's
    /// free margin, which counts replaceable pages near the tail on every
    /// miss, pay for a fix clearing it at once
    /// ([`Self::keep_replaceable_exact`]).
    replaceable_exact: bool,
    /// Young, then old.
    deques: [Deque; 2],
}

impl LruIndex {
    pub(super) fn new(frames: u32) -> Self {
        // Twice the frames (a sublist never holds more than all of them),
        // whole words, at most what a u32 slot can name.
        let capacity = (u64::from(frames) * 2)
            .next_multiple_of(64)
            .clamp(128, u64::from(u32::MAX - 63));
        let capacity = capacity as u32;
        Self {
            places: vec![Place::OFF_LRU; frames as usize],
            flags: vec![0; frames as usize],
            first_access_us: vec![0; frames as usize],
            tracked: REPLACEABLE | SINGLE_PAGE_FLUSHABLE,
            replaceable_exact: false,
            deques: [Deque::new(capacity), Deque::new(capacity)],
        }
    }

    /// True once [`LRU_FLUSHABLE`] is kept.
    pub(super) fn tracks_lru_flushable(&self) -> bool {
        self.tracked & LRU_FLUSHABLE != 0
    }

    /// Starts keeping [`LRU_FLUSHABLE`], learning it for every frame on the
    /// LRU from `flags_of` (its victim flags), in O(n log n) once.
    pub(super) fn track_lru_flushable(&mut self, flags_of: impl Fn(u32) -> u8) {
        if self.tracks_lru_flushable() {
            return;
        }
        self.tracked |= LRU_FLUSHABLE;
        for frame in 0..self.places.len() as u32 {
            if self.contains(frame) {
                let flushable = flags_of(frame) & LRU_FLUSHABLE;
                if flushable != 0 {
                    self.set_flags(frame, self.flags[frame as usize] | flushable);
                }
            }
        }
    }

    /// True once [`REPLACEABLE`] is held exactly.
    pub(super) fn replaceable_exact(&self) -> bool {
        self.replaceable_exact
    }

    /// Starts holding [`REPLACEABLE`] exactly (the pool then reports a
    /// fix's loss of it at once), clearing every stale one from `flags_of`
    /// (the frames' victim flags), in O(n log n) once.
    pub(super) fn keep_replaceable_exact(&mut self, flags_of: impl Fn(u32) -> u8) {
        if self.replaceable_exact {
            return;
        }
        self.replaceable_exact = true;
        for frame in 0..self.places.len() as u32 {
            if self.contains(frame) {
                let held = self.flags[frame as usize];
                self.set_flags(frame, (held & !REPLACEABLE) | (flags_of(frame) & REPLACEABLE));
            }
        }
    }

    /// Frames on the LRU.
    pub(super) fn len(&self) -> u32 {
        self.deques[0].len + self.deques[1].len
    }

    pub(super) fn contains(&self, frame: u32) -> bool {
        self.places[frame as usize].slot != NIL
    }

    /// Records when the page now in `frame` (off the LRU) was first
    /// accessed; it holds while the frame stays on the LRU.
    pub(super) fn set_first_access(&mut self, frame: u32, access_us: TimeUs) {
        assert!(!self.contains(frame), "first access of frame {frame} set on the LRU");
        self.first_access_us[frame as usize] = access_us;
    }

    fn place(&mut self, frame: u32, sublist: Sublist, slot: u32, flags: u8) {
        let flags = flags & self.tracked;
        let access_us = self.first_access_us[frame as usize];
        self.deques[sublist as usize].put(slot, frame, flags, access_us);
        self.places[frame as usize] = Place { slot, sublist };
        self.flags[frame as usize] = flags;
    }

    /// Puts `frame` at the head of `sublist` with victim `flags`.
    pub(super) fn push_head(&mut self, frame: u32, sublist: Sublist, flags: u8) {
        assert!(!self.contains(frame), "frame {frame} already in the LRU index");
        if self.deques[sublist as usize].lo == 0 {
            self.recompact(sublist);
        }
        let deque = &mut self.deques[sublist as usize];
        deque.lo -= 1;
        let slot = deque.lo;
        self.place(frame, sublist, slot, flags);
    }

    /// Puts `frame` at the tail of `sublist` with victim `flags`.
    pub(super) fn push_tail(&mut self, frame: u32, sublist: Sublist, flags: u8) {
        assert!(!self.contains(frame), "frame {frame} already in the LRU index");
        if self.deques[sublist as usize].hi == self.deques[sublist as usize].capacity() {
            self.recompact(sublist);
        }
        let deque = &mut self.deques[sublist as usize];
        let slot = deque.hi;
        deque.hi += 1;
        self.place(frame, sublist, slot, flags);
    }

    /// Takes `frame` off the LRU.
    pub(super) fn remove(&mut self, frame: u32) {
        let place = self.places[frame as usize];
        assert_ne!(place.slot, NIL, "frame {frame} not in the LRU index");
        self.deques[place.sublist as usize].take(place.slot, self.flags[frame as usize]);
        self.places[frame as usize] = Place::OFF_LRU;
        self.flags[frame as usize] = 0;
    }

    /// `rebalance_old` moved `frame` across the midpoint: from the old head
    /// to the young tail, or from the young tail to the old head.
    pub(super) fn move_across_midpoint(&mut self, frame: u32) {
        let place = self.places[frame as usize];
        let flags = self.flags[frame as usize];
        self.remove(frame);
        match place.sublist {
            Sublist::Old => self.push_tail(frame, Sublist::Young, flags),
            Sublist::Young => self.push_head(frame, Sublist::Old, flags),
        }
    }

    /// Moves every page of `sublist` to the middle of its slots, in order.
    fn recompact(&mut self, sublist: Sublist) {
        let members = self.deques[sublist as usize].members();
        let deque = &mut self.deques[sublist as usize];
        let (lo, hi) = (deque.lo as usize, deque.hi as usize);
        deque.frames[lo..hi].fill(NIL);
        deque.used.fill(0);
        for bits in &mut deque.flagged {
            bits.clear_all();
        }
        let start = (deque.capacity() - deque.len) / 2;
        for (i, &frame) in members.iter().enumerate() {
            let slot = start + i as u32;
            deque.frames[slot as usize] = frame;
            deque.used[slot as usize / 64] |= 1 << (slot % 64);
            let flags = self.flags[frame as usize];
            for (bits, flag) in deque.flagged.iter_mut().zip(VICTIM_FLAGS) {
                if flags & flag != 0 {
                    bits.set(slot);
                }
            }
            self.places[frame as usize].slot = slot;
        }
        let first_access_us = &self.first_access_us;
        deque.rebuild_counts(|frame| first_access_us[frame as usize]);
        deque.lo = start;
        deque.hi = start + deque.len;
    }

    /// The frame's victim flags are now `flags`: a flag it gained is
    /// recorded at once, bitset flags it lost may stay (stale) until a
    /// search clears them with [`Self::set_flags`]; [`LRU_FLUSHABLE`] is
    /// recorded whether gained or lost.
    pub(super) fn note_flags(&mut self, frame: u32, flags: u8) {
        let flags = flags & self.tracked;
        let held = self.flags[frame as usize];
        if flags & !held != 0 || (flags ^ held) & LRU_FLUSHABLE != 0 {
            self.set_flags(frame, flags);
        }
    }

    /// Sets `frame`'s victim flags exactly.
    pub(super) fn set_flags(&mut self, frame: u32, flags: u8) {
        let flags = flags & self.tracked;
        let place = self.places[frame as usize];
        debug_assert_ne!(place.slot, NIL, "flags of frame {frame} off the LRU");
        let held = self.flags[frame as usize];
        if held == flags {
            return;
        }
        self.flags[frame as usize] = flags;
        let deque = &mut self.deques[place.sublist as usize];
        for (bits, flag) in deque.flagged.iter_mut().zip(VICTIM_FLAGS) {
            if (held ^ flags) & flag != 0 {
                if flags & flag != 0 {
                    bits.set(place.slot);
                } else {
                    bits.clear(place.slot);
                }
            }
        }
        if (held ^ flags) & LRU_FLUSHABLE != 0 {
            let access_us = (flags & LRU_FLUSHABLE != 0).then_some(self.first_access_us[frame as usize]);
            deque.note_flushable(place.slot, access_us);
        }
    }

    /// The first frame from the tail holding `flag`, closer to the head
    /// than `after` (from the tail itself when `None`), and its rank from
    /// the tail (1 = the tail): the pages a walk from the tail examines up
    /// to and including it. `None` if there is none.
    pub(super) fn first_from_tail(&self, flag: u8, after: Option<u32>) -> Option<(u32, u32)> {
        let from = after.map(|frame| {
            let place = self.places[frame as usize];
            debug_assert_ne!(place.slot, NIL, "search after frame {frame} off the LRU");
            place
        });
        self.next_flagged(flag, from).map(|(frame, rank, _)| (frame, rank))
    }

    /// The first frame from the tail holding the bitset flag `flag`, closer
    /// to the head than `from` (from the tail when `None`), with its rank
    /// from the tail and its place.
    pub(super) fn next_flagged(&self, flag: u8, from: Option<Place>) -> Option<(u32, u32, Place)> {
        let which = VICTIM_FLAGS.iter().position(|&f| f == flag);
        debug_assert!(which.is_some(), "{flag} is not one bitset victim flag");
        let which = which?;
        self.next_where(from, |deque, below| deque.flagged[which].last_at_or_below(below))
    }

    /// The first [`LRU_FLUSHABLE`] frame from the tail first accessed at or
    /// before `cutoff_us`, closer to the head than `from` (from the tail
    /// when `None`), with its rank from the tail and its place.
    pub(super) fn next_lru_flushable(&self, from: Option<Place>, cutoff_us: TimeUs) -> Option<(u32, u32, Place)> {
        if cutoff_us == TimeUs::MAX {
            return self.next_flagged(LRU_FLUSHABLE, from);
        }
        self.next_where(from, |deque, below| deque.grace.last_at_or_below(below, cutoff_us))
    }

    /// The first slot from the tail, closer to the head than `from`, that
    /// `last_at_or_below(deque, slot)` finds (the highest matching slot at
    /// or below `slot` of that sublist).
    fn next_where(
        &self,
        from: Option<Place>,
        last_at_or_below: impl Fn(&Deque, u32) -> Option<u32>,
    ) -> Option<(u32, u32, Place)> {
        let (mut sublist, mut below) = match from {
            None => (Sublist::Old, self.deques[Sublist::Old as usize].hi),
            Some(place) => (place.sublist, place.slot),
        };
        loop {
            let deque = &self.deques[sublist as usize];
            if let Some(slot) = below.checked_sub(1).and_then(|b| last_at_or_below(deque, b)) {
                let frame = deque.frames[slot as usize];
                debug_assert_ne!(frame, NIL, "a search found empty {sublist:?} slot {slot}");
                let place = Place { slot, sublist };
                return Some((frame, self.rank(place), place));
            }
            if sublist == Sublist::Young {
                return None;
            }
            sublist = Sublist::Young;
            below = self.deques[Sublist::Young as usize].hi;
        }
    }

    /// The rank from the tail (1 = the tail) of the slot in use `place`.
    fn rank(&self, place: Place) -> u32 {
        let deque = &self.deques[place.sublist as usize];
        let in_sublist = deque.len - deque.used_below(place.slot);
        match place.sublist {
            Sublist::Old => in_sublist,
            Sublist::Young => self.deques[Sublist::Old as usize].len + in_sublist,
        }
    }

    /// The place of the frame `rank` from the tail (1 = the tail); `None`
    /// past the head.
    pub(super) fn place_at_rank(&self, rank: u32) -> Option<Place> {
        let old_len = self.deques[Sublist::Old as usize].len;
        let (sublist, rank) = if rank <= old_len {
            (Sublist::Old, rank)
        } else {
            (Sublist::Young, rank - old_len)
        };
        let deque = &self.deques[sublist as usize];
        if rank == 0 || rank > deque.len {
            return None;
        }
        // The (len - rank + 1)-th slot in use from the low end: a Fenwick
        // descent to its word, then a scan of the word's bits.
        let mut nth = deque.len - rank + 1;
        let counts = &deque.used_counts.tree;
        let words = counts.len();
        let mut word = 0;
        let mut step = words.next_power_of_two();
        while step > 0 {
            if word + step <= words && counts[word + step - 1] < nth {
                word += step;
                nth -= counts[word - 1];
            }
            step /= 2;
        }
        let mut bits = deque.used[word];
        for _ in 1..nth {
            bits &= bits - 1;
        }
        debug_assert_ne!(bits, 0, "rank {rank} past the {sublist:?} sublist's slots");
        Some(Place {
            slot: (word * 64) as u32 + bits.trailing_zeros(),
            sublist,
        })
    }

    /// The frames holding [`REPLACEABLE`] among the `limit` pages nearest
    /// the tail, exact once [`Self::keep_replaceable_exact`] ran (before,
    /// stale flags count too). One select finds the boundary, then the
    /// flag's words are counted.
    pub(super) fn replaceable_near_tail(&self, limit: u32) -> u32 {
        let which = VICTIM_FLAGS.iter().position(|&f| f == REPLACEABLE).unwrap_or(0);
        let Some(boundary) = self.place_at_rank(limit.min(self.len())) else {
            return 0;
        };
        let mut count = 0;
        for sublist in [Sublist::Old, Sublist::Young] {
            let deque = &self.deques[sublist as usize];
            // Slots grow from head to tail: within the limit are the slots
            // at or above the boundary's in its sublist, all of the old
            // sublist when the boundary is in the young one.
            let floor = if sublist == boundary.sublist { boundary.slot } else { 0 };
            count += deque.flagged[which].count_down(floor, deque.hi);
            if sublist == boundary.sublist {
                break;
            }
        }
        count
    }

    /// [`LRU_FLUSHABLE`] frames from the tail through `through` (a place,
    /// which need not be in use any more), or on the whole LRU (`None`).
    pub(super) fn lru_flushable_through(&self, through: Option<Place>) -> u32 {
        let old = &self.deques[Sublist::Old as usize];
        let young = &self.deques[Sublist::Young as usize];
        match through {
            None => old.flushable_len + young.flushable_len,
            Some(Place {
                sublist: Sublist::Old,
                slot,
            }) => old.flushable_at_or_above(slot),
            Some(Place {
                sublist: Sublist::Young,
                slot,
            }) => old.flushable_len + young.flushable_at_or_above(slot),
        }
    }

    /// Panics unless the invariants of the module documentation hold for
    /// an LRU of `young` then `old` (each head to tail) whose frames have
    /// `flags_of` flags (which the index's flags must include).
    pub(super) fn check(&self, young: &[u32], old: &[u32], flags_of: impl Fn(u32) -> u8) {
        assert_eq!(self.len() as usize, young.len() + old.len(), "LRU index: length");
        let mut on_lru = vec![false; self.places.len()];
        for (sublist, expected) in [(Sublist::Young, young), (Sublist::Old, old)] {
            let deque = &self.deques[sublist as usize];
            // 1. order, places and bounds
            assert_eq!(deque.members(), expected, "LRU index: {sublist:?} sublist order");
            assert_eq!(deque.len as usize, expected.len(), "LRU index: {sublist:?} length");
            for (slot, &frame) in deque.frames.iter().enumerate() {
                let slot = slot as u32;
                let in_use = deque.used[slot as usize / 64] & (1 << (slot % 64)) != 0;
                if !in_use {
                    assert_eq!(frame, NIL, "LRU index: unused {sublist:?} slot {slot} names a frame");
                    for bits in &deque.flagged {
                        assert!(!bits.get(slot), "LRU index: unused {sublist:?} slot {slot} flagged");
                    }
                    continue;
                }
                assert!(
                    deque.lo <= slot && slot < deque.hi,
                    "LRU index: {sublist:?} slot {slot} out of bounds"
                );
                assert_eq!(
                    self.places[frame as usize],
                    Place { slot, sublist },
                    "LRU index: place of frame {frame}"
                );
                on_lru[frame as usize] = true;
                // 3. flag bits; 4. the frame's flags are all held
                let held = self.flags[frame as usize];
                for (bits, flag) in deque.flagged.iter().zip(VICTIM_FLAGS) {
                    assert_eq!(
                        bits.get(slot),
                        held & flag != 0,
                        "LRU index: flag {flag} bit of frame {frame}"
                    );
                }
                let actual = flags_of(frame) & self.tracked;
                assert_eq!(held & actual, actual, "LRU index: victim flags of frame {frame}");
                assert_eq!(
                    held & LRU_FLUSHABLE,
                    actual & LRU_FLUSHABLE & self.tracked,
                    "LRU index: LRU-flushable flag of frame {frame}"
                );
                if self.replaceable_exact {
                    assert_eq!(
                        held & REPLACEABLE,
                        actual & REPLACEABLE,
                        "LRU index: exact replaceable flag of frame {frame}"
                    );
                }
            }
            // 2. counts; 5. the grace tree (the bits were checked above)
            let mut rebuilt = deque.clone();
            rebuilt.rebuild_counts(|frame| self.first_access_us[frame as usize]);
            assert_eq!(
                rebuilt.used_counts, deque.used_counts,
                "LRU index: {sublist:?} slot counts"
            );
            assert_eq!(
                (rebuilt.flushable_counts, rebuilt.flushable_len),
                (deque.flushable_counts.clone(), deque.flushable_len),
                "LRU index: {sublist:?} LRU-flushable counts"
            );
            assert!(rebuilt.grace == deque.grace, "LRU index: {sublist:?} grace tree");
            // 3. summaries
            for bits in &deque.flagged {
                for k in 1..bits.levels.len() {
                    for (i, &word) in bits.levels[k - 1].iter().enumerate() {
                        let summary = bits.levels[k][i / 64] & (1 << (i % 64)) != 0;
                        assert_eq!(summary, word != 0, "LRU index: summary bit {i} at level {k}");
                    }
                }
            }
        }
        for (frame, &listed) in on_lru.iter().enumerate() {
            if !listed {
                assert_eq!(
                    self.places[frame],
                    Place::OFF_LRU,
                    "LRU index: frame {frame} off the LRU has a place"
                );
                assert_eq!(self.flags[frame], 0, "LRU index: frame {frame} off the LRU has flags");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: each sublist as a vector from head to tail of
    /// (frame, flags the index holds, first access).
    #[derive(Default)]
    struct Model {
        young: Vec<(u32, u8, TimeUs)>,
        old: Vec<(u32, u8, TimeUs)>,
    }

    impl Model {
        /// The LRU from the tail: old reversed, then young reversed.
        fn tail_to_head(&self) -> Vec<(u32, u8, TimeUs)> {
            self.old.iter().rev().chain(self.young.iter().rev()).copied().collect()
        }

        /// The first LRU-flushable frame from the tail after the `skip`
        /// nearest the tail, first accessed by `cutoff_us`, and its rank.
        fn next_lru_flushable(&self, skip: usize, cutoff_us: TimeUs) -> Option<(u32, u32)> {
            self.tail_to_head()
                .iter()
                .enumerate()
                .skip(skip)
                .find(|(_, (_, flags, access_us))| flags & LRU_FLUSHABLE != 0 && *access_us <= cutoff_us)
                .map(|(i, (frame, _, _))| (*frame, i as u32 + 1))
        }

        fn first_from_tail(&self, flag: u8, after: Option<u32>) -> Option<(u32, u32)> {
            let order = self.tail_to_head();
            let start = match after {
                None => 0,
                Some(frame) => order.iter().position(|m| m.0 == frame)? + 1,
            };
            order
                .iter()
                .enumerate()
                .skip(start)
                .find(|(_, (_, flags, _))| flags & flag != 0)
                .map(|(i, (frame, _, _))| (*frame, i as u32 + 1))
        }

        fn entry(&mut self, nth: u32) -> Option<&mut (u32, u8, TimeUs)> {
            let len = self.young.len() + self.old.len();
            if len == 0 {
                return None;
            }
            let i = nth as usize % len;
            if i < self.young.len() {
                Some(&mut self.young[i])
            } else {
                Some(&mut self.old[i - self.young.len()])
            }
        }
    }

    #[derive(Clone, Debug)]
    enum IndexOp {
        PushHead {
            old: bool,
            flags: u8,
            access_us: TimeUs,
        },
        PushTail {
            old: bool,
            flags: u8,
            access_us: TimeUs,
        },
        /// Remove the `nth % len` frame from the head.
        Remove {
            nth: u32,
        },
        /// Move the old head to the young tail, or the young tail to the old head.
        AcrossMidpoint {
            from_old: bool,
        },
        /// Re-flag the `nth % len` frame: exactly, or lazily (`note_flags`).
        SetFlags {
            nth: u32,
            flags: u8,
            exact: bool,
        },
    }

    fn index_op() -> impl Strategy<Value = IndexOp> {
        prop_oneof![
            3 => (any::<bool>(), 0u8..8, 0..16u64).prop_map(|(old, flags, access_us)| IndexOp::PushHead { old, flags, access_us }),
            1 => (any::<bool>(), 0u8..8, 0..16u64).prop_map(|(old, flags, access_us)| IndexOp::PushTail { old, flags, access_us }),
            3 => any::<u32>().prop_map(|nth| IndexOp::Remove { nth }),
            2 => any::<bool>().prop_map(|from_old| IndexOp::AcrossMidpoint { from_old }),
            3 => (any::<u32>(), 0u8..8, any::<bool>()).prop_map(|(nth, flags, exact)| IndexOp::SetFlags { nth, flags, exact }),
        ]
    }

    fn apply(index: &mut LruIndex, model: &mut Model, free: &mut Vec<u32>, op: &IndexOp) {
        match *op {
            IndexOp::PushHead { old, flags, access_us } | IndexOp::PushTail { old, flags, access_us } => {
                let Some(frame) = free.pop() else { return };
                index.set_first_access(frame, access_us);
                let head = matches!(op, IndexOp::PushHead { .. });
                let sublist = if old { Sublist::Old } else { Sublist::Young };
                let list = if old { &mut model.old } else { &mut model.young };
                if head {
                    index.push_head(frame, sublist, flags);
                    list.insert(0, (frame, flags, access_us));
                } else {
                    index.push_tail(frame, sublist, flags);
                    list.push((frame, flags, access_us));
                }
            }
            IndexOp::Remove { nth } => {
                let Some(&mut (frame, _, _)) = model.entry(nth) else {
                    return;
                };
                model.young.retain(|m| m.0 != frame);
                model.old.retain(|m| m.0 != frame);
                index.remove(frame);
                free.push(frame);
            }
            IndexOp::AcrossMidpoint { from_old } => {
                if from_old && !model.old.is_empty() {
                    let entry = model.old.remove(0);
                    index.move_across_midpoint(entry.0);
                    model.young.push(entry);
                } else if !from_old {
                    if let Some(entry) = model.young.pop() {
                        index.move_across_midpoint(entry.0);
                        model.old.insert(0, entry);
                    }
                }
            }
            IndexOp::SetFlags { nth, flags, exact } => {
                let Some(entry) = model.entry(nth) else { return };
                if exact {
                    entry.1 = flags;
                    index.set_flags(entry.0, flags);
                } else {
                    // Gains, and the exact flag's losses, are recorded.
                    if flags & !entry.1 != 0 || (flags ^ entry.1) & LRU_FLUSHABLE != 0 {
                        entry.1 = flags;
                    }
                    index.note_flags(entry.0, flags);
                }
            }
        }
    }

    fn check_against(index: &LruIndex, model: &Model) -> Result<(), TestCaseError> {
        let young: Vec<u32> = model.young.iter().map(|m| m.0).collect();
        let old: Vec<u32> = model.old.iter().map(|m| m.0).collect();
        let held = |frame: u32| {
            model
                .young
                .iter()
                .chain(&model.old)
                .find(|m| m.0 == frame)
                .map_or(0, |m| m.1)
        };
        index.check(&young, &old, held);
        prop_assert_eq!(index.len() as usize, young.len() + old.len());
        let order = model.tail_to_head();
        // Places by rank, and the searches that start from them.
        for (i, &(frame, _, _)) in order.iter().enumerate() {
            let rank = i as u32 + 1;
            let place = index.place_at_rank(rank);
            prop_assert_eq!(place, Some(index.places[frame as usize]), "place at rank {}", rank);
            let through = order[..=i].iter().filter(|m| m.1 & LRU_FLUSHABLE != 0).count() as u32;
            prop_assert_eq!(
                index.lru_flushable_through(place),
                through,
                "LRU-flushable through rank {}",
                rank
            );
        }
        prop_assert_eq!(index.place_at_rank(0), None);
        prop_assert_eq!(index.place_at_rank(order.len() as u32 + 1), None);
        // The held replaceable flags near the tail (5.1's count).
        for limit in 0..=order.len() + 2 {
            let near = order.iter().take(limit).filter(|m| m.1 & REPLACEABLE != 0).count() as u32;
            prop_assert_eq!(
                index.replaceable_near_tail(limit as u32),
                near,
                "replaceable within {}",
                limit
            );
        }
        let all = order.iter().filter(|m| m.1 & LRU_FLUSHABLE != 0).count() as u32;
        prop_assert_eq!(index.lru_flushable_through(None), all);
        for skip in 0..=order.len() {
            let from = skip.checked_sub(1).map(|i| index.places[order[i].0 as usize]);
            for cutoff_us in [0, 7, TimeUs::MAX] {
                prop_assert_eq!(
                    index
                        .next_lru_flushable(from, cutoff_us)
                        .map(|(frame, rank, _)| (frame, rank)),
                    model.next_lru_flushable(skip, cutoff_us),
                    "LRU-flushable by {} after {} from the tail",
                    cutoff_us,
                    skip
                );
            }
        }
        let afters = std::iter::once(None).chain(order.iter().map(|m| Some(m.0)));
        for after in afters {
            for flag in VICTIM_FLAGS {
                prop_assert_eq!(
                    index.first_from_tail(flag, after),
                    model.first_from_tail(flag, after),
                    "flag {} after {:?}",
                    flag,
                    after
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// Pushes at both ends of both sublists, moves across the midpoint,
        /// removals anywhere and flag changes (many enough to exhaust the
        /// slots and recompact): the index answers every search as a walk
        /// from the tail of the two vectors does.
        #[test]
        fn index_answers_like_a_walk_from_the_lru_tail(frames in 1u32..80, ops in proptest::collection::vec(index_op(), 1..600)) {
            let mut index = LruIndex::new(frames);
            index.track_lru_flushable(|_| 0);
            let mut model = Model::default();
            let mut free: Vec<u32> = (0..frames).rev().collect();
            for op in &ops {
                apply(&mut index, &mut model, &mut free, op);
                check_against(&index, &model)?;
            }
        }
    }

    #[test]
    fn summary_bits_find_the_last_set_bit_at_or_below() {
        let mut bits = SummaryBits::new(300_000);
        assert_eq!(bits.levels.len(), 4);
        assert_eq!(bits.last_at_or_below(299_999), None);
        for bit in [0, 63, 64, 4_095, 4_096, 262_143, 262_144, 299_999] {
            bits.set(bit);
        }
        assert_eq!(bits.last_at_or_below(299_999), Some(299_999));
        assert_eq!(bits.last_at_or_below(299_998), Some(262_144));
        assert_eq!(bits.last_at_or_below(262_143), Some(262_143));
        assert_eq!(bits.last_at_or_below(262_142), Some(4_096));
        assert_eq!(bits.last_at_or_below(4_095), Some(4_095));
        assert_eq!(bits.last_at_or_below(4_094), Some(64));
        assert_eq!(bits.last_at_or_below(63), Some(63));
        assert_eq!(bits.last_at_or_below(62), Some(0));
        bits.clear(0);
        assert_eq!(bits.last_at_or_below(62), None);
        bits.clear(4_096);
        bits.clear(4_095);
        assert_eq!(bits.last_at_or_below(262_142), Some(64));
    }

    #[test]
    fn midpoint_and_head_pushes_give_ranks_from_the_tail() {
        let mut index = LruIndex::new(8);
        // Young 0 1, old 2 3 (head to tail).
        index.push_head(1, Sublist::Young, 0);
        index.push_head(0, Sublist::Young, 0);
        index.push_head(3, Sublist::Old, SINGLE_PAGE_FLUSHABLE);
        index.push_head(2, Sublist::Old, 0);
        // A page at the midpoint: young 0 1, old 4 2 3.
        index.push_head(4, Sublist::Old, REPLACEABLE);
        assert_eq!(index.first_from_tail(REPLACEABLE, None), Some((4, 3)));
        assert_eq!(index.first_from_tail(SINGLE_PAGE_FLUSHABLE, None), Some((3, 1)));
        index.set_flags(1, REPLACEABLE);
        assert_eq!(index.first_from_tail(REPLACEABLE, Some(4)), Some((1, 4)));
        // The old head crosses to the young tail: young 0 1 4, old 2 3.
        index.move_across_midpoint(4);
        assert_eq!(index.first_from_tail(REPLACEABLE, None), Some((4, 3)));
        index.remove(3);
        assert_eq!(index.first_from_tail(REPLACEABLE, None), Some((4, 2)));
        assert_eq!(index.first_from_tail(SINGLE_PAGE_FLUSHABLE, None), None);
        index.check(&[0, 1, 4], &[2], |frame| match frame {
            1 | 4 => REPLACEABLE,
            _ => 0,
        });
    }
}
