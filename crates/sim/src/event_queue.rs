//! The simulation's single event queue, in virtual time.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! microsecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.
//!
//! Invariant: time never goes backwards: `pop` returns events in
//! non-decreasing time, and `schedule` refuses times before the last popped.
//!
//! Almost every event is due within a few milliseconds (an agent's next
//! step, a page read or write, a CPU slice), so the queue is a timing wheel
//! of [`WHEEL_SLOTS`] one-microsecond slots over `[now, now + WHEEL_SLOTS)`
//! with a binary heap for the rest (cleaner sleeps, report ticks, an HDD's
//! slowest seeks). A slot holds the events of one microsecond in a FIFO
//! list, which is their scheduling order; a bitmap of occupied slots finds
//! the next one. Popping costs a few word scans instead of a heap's
//! sift-down (the heap was 20 % of a CPU-bound simulation's profile).
//!
//! Invariants:
//! - every event in the wheel is due in `[now, now + WHEEL_SLOTS)`, so
//!   slot `t % WHEEL_SLOTS` holds only events due at `t`;
//! - every event in the heap is due at or after `now + WHEEL_SLOTS`: when
//!   `now` advances, heap events that come within the horizon move to the
//!   wheel before anything else can be scheduled, so an event scheduled
//!   later at the same time lands behind them, as its sequence number says.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flushwise_core::TimeUs;

/// The wheel's horizon in microseconds (a power of two): 8.2 ms covers the
/// SSD and NVMe models' latencies and the CPU model's slices.
pub const WHEEL_SLOTS: usize = 1 << 13;
const SLOT_MASK: u64 = WHEEL_SLOTS as u64 - 1;
const BITMAP_WORDS: usize = WHEEL_SLOTS / 64;
// One bit per bitmap word in `occupied_words`.
const _: () = assert!(BITMAP_WORDS == 128);
/// No node: the end of a slot's list, or of the free list.
const NIL: u32 = u32::MAX;

pub struct EventQueue<E> {
    /// First and last node of each slot's FIFO list (NIL when empty).
    heads: Vec<u32>,
    tails: Vec<u32>,
    /// Bit `s` set when slot `s` holds an event.
    occupied: [u64; BITMAP_WORDS],
    /// Bit `w` set when `occupied[w]` is not 0: sparse wheels (a disk's
    /// milliseconds between events) are searched in two steps, not 128.
    occupied_words: u128,
    /// The lists' nodes: an event (None once popped) and the next node.
    nodes: Vec<(Option<E>, u32)>,
    /// Nodes free for reuse, linked through their `next`.
    free: u32,
    in_wheel: usize,
    /// Events due at or after `now + WHEEL_SLOTS`, keyed `time << 64 | sequence`.
    far: BinaryHeap<Reverse<(u128, Slot<E>)>>,
    seq: u64,
    now_us: TimeUs,
}

/// Wrapper that orders only by the key around it.
struct Slot<E>(E);

impl<E> PartialEq for Slot<E> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<E> Eq for Slot<E> {}
impl<E> PartialOrd for Slot<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Slot<E> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// The heap's key: time first, then the order of scheduling.
fn key(at_us: TimeUs, seq: u64) -> u128 {
    (u128::from(at_us) << 64) | u128::from(seq)
}

fn slot_of(at_us: TimeUs) -> usize {
    (at_us & SLOT_MASK) as usize
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heads: vec![NIL; WHEEL_SLOTS],
            tails: vec![NIL; WHEEL_SLOTS],
            occupied: [0; BITMAP_WORDS],
            occupied_words: 0,
            nodes: Vec::with_capacity(1024),
            free: NIL,
            in_wheel: 0,
            far: BinaryHeap::new(),
            seq: 0,
            now_us: 0,
        }
    }

    pub fn now_us(&self) -> TimeUs {
        self.now_us
    }

    pub fn schedule(&mut self, at_us: TimeUs, event: E) {
        assert!(
            at_us >= self.now_us,
            "event scheduled in the past: {at_us} < {}",
            self.now_us
        );
        self.seq += 1;
        if at_us - self.now_us < WHEEL_SLOTS as u64 {
            self.push_wheel(at_us, event);
        } else {
            self.far.push(Reverse((key(at_us, self.seq), Slot(event))));
        }
    }

    /// Appends to the list of `at_us`'s slot (which is within the horizon).
    fn push_wheel(&mut self, at_us: TimeUs, event: E) {
        let node = if self.free == NIL {
            let n = self.nodes.len();
            assert!(n < NIL as usize, "event queue: more than 2^32 events in the wheel");
            self.nodes.push((Some(event), NIL));
            n as u32
        } else {
            let n = self.free;
            let slot = &mut self.nodes[n as usize];
            self.free = slot.1;
            *slot = (Some(event), NIL);
            n
        };
        let s = slot_of(at_us);
        match self.tails[s] {
            NIL => {
                self.heads[s] = node;
                self.occupied[s / 64] |= 1 << (s % 64);
                self.occupied_words |= 1 << (s / 64);
            }
            tail => self.nodes[tail as usize].1 = node,
        }
        self.tails[s] = node;
        self.in_wheel += 1;
    }

    /// Microseconds from `now` to the wheel's first occupied slot, if any.
    fn next_occupied_after_now(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = slot_of(self.now_us);
        let (word, bit) = (start / 64, start % 64);
        // The start word's slots at and after `start`; else the first
        // occupied word after it, wrapping (back to the start word itself,
        // whose slots before `start` are the farthest).
        let first = self.occupied[word] & (u64::MAX << bit);
        if first != 0 {
            return Some((word * 64 + first.trailing_zeros() as usize - start) as u64);
        }
        let words_after = if word + 1 < BITMAP_WORDS {
            u128::MAX << (word + 1)
        } else {
            0
        };
        let after = self.occupied_words & words_after;
        let w = if after != 0 {
            after.trailing_zeros() as usize
        } else {
            debug_assert!(self.occupied_words != 0, "in_wheel > 0 but no slot is occupied");
            self.occupied_words.trailing_zeros() as usize
        };
        let s = w * 64 + self.occupied[w].trailing_zeros() as usize;
        Some(((s + WHEEL_SLOTS - start) % WHEEL_SLOTS) as u64)
    }

    pub fn pop(&mut self) -> Option<(TimeUs, E)> {
        let (t, e) = match self.next_occupied_after_now() {
            Some(distance) => {
                let t = self.now_us + distance;
                let s = slot_of(t);
                let node = self.heads[s];
                let (event, next) = {
                    let n = &mut self.nodes[node as usize];
                    (n.0.take(), std::mem::replace(&mut n.1, self.free))
                };
                self.free = node;
                self.heads[s] = next;
                if next == NIL {
                    self.tails[s] = NIL;
                    self.occupied[s / 64] &= !(1 << (s % 64));
                    if self.occupied[s / 64] == 0 {
                        self.occupied_words &= !(1 << (s / 64));
                    }
                }
                self.in_wheel -= 1;
                (t, event.expect("a wheel node holds its event until popped"))
            }
            None => {
                let Reverse((k, Slot(e))) = self.far.pop()?;
                ((k >> 64) as TimeUs, e)
            }
        };
        debug_assert!(t >= self.now_us);
        self.now_us = t;
        // Heap events now within the horizon join the wheel (in key order,
        // so behind nothing scheduled after them).
        let horizon = t + WHEEL_SLOTS as u64;
        while self
            .far
            .peek()
            .is_some_and(|Reverse((k, _))| ((k >> 64) as TimeUs) < horizon)
        {
            if let Some(Reverse((k, Slot(e)))) = self.far.pop() {
                self.push_wheel((k >> 64) as TimeUs, e);
            }
        }
        Some((t, e))
    }

    pub fn peek_time(&self) -> Option<TimeUs> {
        match self.next_occupied_after_now() {
            Some(distance) => Some(self.now_us + distance),
            None => self.far.peek().map(|Reverse((k, _))| (*k >> 64) as TimeUs),
        }
    }

    pub fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_keep_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(5, 'b');
        q.schedule(3, 'a');
        q.schedule(5, 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    /// An event beyond the horizon, scheduled first, pops before one
    /// scheduled later for the same microsecond from within the horizon.
    #[test]
    fn a_far_event_keeps_its_place_when_it_joins_the_wheel() {
        let mut q = EventQueue::new();
        let t = 3 * WHEEL_SLOTS as u64 + 7;
        q.schedule(t, "far first");
        q.schedule(t - WHEEL_SLOTS as u64, "step");
        q.schedule(t + WHEEL_SLOTS as u64, "farther");
        assert_eq!(q.pop(), Some((t - WHEEL_SLOTS as u64, "step")));
        q.schedule(t, "near later");
        q.schedule(t - 1, "before");
        let order: Vec<&str> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["before", "far first", "near later", "farther"]);
        assert!(q.is_empty());
    }

    /// The wheel must not change the order: interleaved schedules and
    /// pops, checked against a plain sort by (time, sequence).
    #[test]
    fn pops_in_time_then_schedule_order_whatever_the_interleaving() {
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..200 {
            let mut q = EventQueue::new();
            let mut model: Vec<(TimeUs, u64)> = Vec::new();
            let mut seq = 0u64;
            for _ in 0..600 {
                if next() % 3 == 0 {
                    model.sort_unstable();
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(q.peek_time(), want.map(|(t, _)| t));
                    let got = q.pop();
                    assert_eq!(got, want);
                } else {
                    // Often at the current time or just after it, as agents
                    // do; sometimes at or beyond the wheel's horizon.
                    let r = next();
                    let ahead = match r % 8 {
                        0 => (r >> 8) % (3 * WHEEL_SLOTS as u64),
                        1 => WHEEL_SLOTS as u64 - 1 + (r >> 8) % 3,
                        _ => (r >> 8) % 4,
                    };
                    let at_us = q.now_us() + ahead;
                    seq += 1;
                    q.schedule(at_us, seq);
                    model.push((at_us, seq));
                }
                assert_eq!(q.len(), model.len());
                assert_eq!(q.is_empty(), model.is_empty());
            }
        }
    }
}
