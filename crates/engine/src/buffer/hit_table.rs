//! [`HitTable`]: the hit path's page table (page id -> frame), lock-free
//! for readers, with one writer at a time (the holder of the core mutex).
//!
//! Open addressing with linear probing over a power-of-two array of at
//! least twice as many slots as frames (load factor <= 1/2), Fibonacci
//! hashing, and backward-shift deletion (Knuth 6.4 Algorithm R), so there
//! are no tombstones and probe sequences stay short.
//!
//! A reader may race with the writer and then get a wrong answer in one
//! of two ways only: no frame for a page that is mapped (the entry was being
//! shifted past it), or a frame that holds another page (key and frame read
//! across a move). Both are harmless because the table is a hint: the hit
//! path re-checks the frame's published page after pinning it and takes
//! the core's path on any doubt. A reader never loops forever (at most
//! one pass over the slots) and only ever reads frame numbers the writer
//! stored, so always valid ones.
//!
//! Invariant (single writer, checked at rest by [`HitTable::entries`]):
//! each key is in at most one slot, reachable from its home slot without
//! crossing an empty one.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Key of an empty slot (no page id is all ones).
pub const EMPTY: u64 = u64::MAX;

struct Slot {
    key: AtomicU64,
    frame: AtomicU32,
}

pub(crate) struct HitTable {
    slots: Box<[Slot]>,
    mask: usize,
    shift: u32,
}

impl HitTable {
    /// A table for at most `frames` entries.
    pub fn new(frames: u32) -> Self {
        let capacity = (frames as usize * 2).next_power_of_two().max(16);
        Self {
            slots: (0..capacity)
                .map(|_| Slot {
                    key: AtomicU64::new(EMPTY),
                    frame: AtomicU32::new(0),
                })
                .collect(),
            mask: capacity - 1,
            shift: 64 - capacity.trailing_zeros(),
        }
    }

    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The frame mapped to `key`, as a hint (see the module documentation).
    pub fn get(&self, key: u64) -> Option<u32> {
        let mut i = self.home(key);
        for _ in 0..=self.mask {
            let slot = &self.slots[i];
            let k = slot.key.load(Ordering::Acquire);
            if k == key {
                return Some(slot.frame.load(Ordering::Acquire));
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    /// Maps `key` to `frame` (writer only).
    pub fn insert(&self, key: u64, frame: u32) {
        debug_assert_ne!(key, EMPTY);
        let mut i = self.home(key);
        for _ in 0..=self.mask {
            let slot = &self.slots[i];
            let k = slot.key.load(Ordering::Relaxed);
            if k == key {
                slot.frame.store(frame, Ordering::Release);
                return;
            }
            if k == EMPTY {
                slot.frame.store(frame, Ordering::Release);
                slot.key.store(key, Ordering::Release);
                return;
            }
            i = (i + 1) & self.mask;
        }
        panic!("hit table full: more pages mapped than frames");
    }

    /// Unmaps `key` if mapped (writer only).
    pub fn remove(&self, key: u64) {
        let mut hole = self.home(key);
        let mut found = false;
        for _ in 0..=self.mask {
            let k = self.slots[hole].key.load(Ordering::Relaxed);
            if k == key {
                found = true;
                break;
            }
            if k == EMPTY {
                return;
            }
            hole = (hole + 1) & self.mask;
        }
        if !found {
            return;
        }
        // Shift back every later entry of the run that may live in the
        // hole (its home is not cyclically in (hole, j]).
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key.load(Ordering::Relaxed);
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                let frame = self.slots[j].frame.load(Ordering::Relaxed);
                self.slots[hole].frame.store(frame, Ordering::Release);
                self.slots[hole].key.store(k, Ordering::Release);
                hole = j;
            }
        }
        self.slots[hole].key.store(EMPTY, Ordering::Release);
    }

    /// Every (key, frame) mapped, checking the invariant (call at rest).
    pub fn entries(&self) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        for slot in self.slots.iter() {
            let k = slot.key.load(Ordering::Acquire);
            if k != EMPTY {
                assert_eq!(
                    self.get(k),
                    Some(slot.frame.load(Ordering::Acquire)),
                    "key {k:#x} unreachable"
                );
                out.push((k, slot.frame.load(Ordering::Acquire)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn random_inserts_and_removes_agree_with_a_map() {
        let table = HitTable::new(64);
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct keys, so runs collide and wrap around.
            let key = ((x % 300) << 32) | ((x >> 40) % 3);
            if model.len() < 64 && x & 1 == 0 {
                table.insert(key, step);
                model.insert(key, step);
            } else {
                table.remove(key);
                model.remove(&key);
            }
            if step % 97 == 0 {
                let mut entries = table.entries();
                entries.sort_unstable();
                let mut expected: Vec<(u64, u32)> = model.iter().map(|(&k, &f)| (k, f)).collect();
                expected.sort_unstable();
                assert_eq!(entries, expected, "step {step}");
            }
            assert_eq!(table.get(key), model.get(&key).copied());
        }
    }
}
