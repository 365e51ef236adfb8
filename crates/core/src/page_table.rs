//! The page table: page id -> frame, with a fast non-cryptographic hash.
//!
//! Page ids are not attacker-chosen inside one engine, so the default SipHash
//! (DoS-resistant, slower) buys nothing on the hit path; a multiplicative
//! hash of the packed id spreads sequential page numbers well.
//!
//! Invariant: a page id maps to at most one frame, and that frame's `page`
//! field is that id (checked by the buffer pool's `check_invariants`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::types::PageId;

/// Multiplicative (Fibonacci) hashing of one u64 word.
#[derive(Default, Clone, Copy)]
pub struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        // 2^64 / golden ratio; rotate so that both halves of the id matter.
        self.0 = (self.0.rotate_left(29) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type PageTable = HashMap<PageId, u32, BuildHasherDefault<PageIdHasher>>;

pub fn new_page_table(capacity: usize) -> PageTable {
    HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::default())
}
