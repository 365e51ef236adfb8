//! The simulation's single event queue, in virtual time.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! microsecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.
//!
//! Invariant: time never goes backwards: `pop` returns events in
//! non-decreasing time, and `schedule` refuses times before the last popped.
//!
//! Most events are scheduled earlier than everything already queued and
//! popped right after (an agent's next step after a page hit: roughly one
//! event per page request). Such an event waits in `front`, outside the
//! heap, so the common schedule-then-pop costs no heap push and pop.
//! Invariant: `front`, when set, orders before every event in the heap, so
//! the order of pops is exactly the heap-only order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flushwise_core::TimeUs;

pub struct EventQueue<E> {
    /// An event ordering before every event in `heap`, if any.
    front: Option<(TimeUs, u64, E)>,
    /// Keyed by `time << 64 | sequence`: one integer comparison orders them.
    heap: BinaryHeap<Reverse<(u128, Slot<E>)>>,
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

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            front: None,
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
        let seq = self.seq;
        // The new event has the largest sequence number, so it orders
        // before another event only at a strictly earlier time.
        match &self.front {
            Some((front_us, _, _)) if at_us < *front_us => {
                if let Some((t, q, e)) = self.front.replace((at_us, seq, event)) {
                    self.heap.push(Reverse((key(t, q), Slot(e))));
                }
            }
            Some(_) => self.heap.push(Reverse((key(at_us, seq), Slot(event)))),
            None if self.heap_time().map_or(true, |heap_us| at_us < heap_us) => {
                self.front = Some((at_us, seq, event));
            }
            None => self.heap.push(Reverse((key(at_us, seq), Slot(event)))),
        }
    }

    pub fn pop(&mut self) -> Option<(TimeUs, E)> {
        let (t, e) = match self.front.take() {
            Some((t, _, e)) => (t, e),
            None => {
                let Reverse((k, Slot(e))) = self.heap.pop()?;
                ((k >> 64) as TimeUs, e)
            }
        };
        debug_assert!(t >= self.now_us);
        self.now_us = t;
        Some((t, e))
    }

    fn heap_time(&self) -> Option<TimeUs> {
        self.heap.peek().map(|Reverse((k, _))| (*k >> 64) as TimeUs)
    }

    pub fn peek_time(&self) -> Option<TimeUs> {
        match &self.front {
            Some((t, _, _)) => Some(*t),
            None => self.heap_time(),
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len() + usize::from(self.front.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
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

    /// The front slot must not change the order: interleaved schedules and
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
            for _ in 0..300 {
                if next() % 3 == 0 {
                    model.sort_unstable();
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(q.peek_time(), want.map(|(t, _)| t));
                    let got = q.pop();
                    assert_eq!(got, want);
                } else {
                    // Often at the current time or just after it, as agents do.
                    let at_us = q.now_us() + next() % 4;
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
