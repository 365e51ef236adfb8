//! The simulation's single event queue, in virtual time.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! microsecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.
//!
//! Invariant: time never goes backwards: `pop` returns events in
//! non-decreasing time, and `schedule` refuses times before the last popped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flushwise_core::TimeUs;

pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(TimeUs, u64, Slot<E>)>>,
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

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
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
        self.heap.push(Reverse((at_us, self.seq, Slot(event))));
    }

    pub fn pop(&mut self) -> Option<(TimeUs, E)> {
        let Reverse((t, _, Slot(e))) = self.heap.pop()?;
        debug_assert!(t >= self.now_us);
        self.now_us = t;
        Some((t, e))
    }

    pub fn peek_time(&self) -> Option<TimeUs> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
