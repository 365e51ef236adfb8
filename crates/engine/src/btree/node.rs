//! The slotted-page layout of one B+tree node inside a page payload.
//!
//! Byte layout (integers little-endian, `P` = payload length, `n` = key count):
//!
//! | offset      | size | field                                                       |
//! |-------------|------|-------------------------------------------------------------|
//! | 0           | 1    | kind: 1 = leaf, 2 = internal (0 = a zeroed, unformatted page) |
//! | 1           | 1    | level: 0 for leaves, children's level + 1 for internal nodes |
//! | 2           | 2    | `n`: number of cells (keys)                                 |
//! | 4           | 2    | cell start: lowest byte used by cells (`P` when empty)       |
//! | 6           | 2    | garbage: bytes of removed cells below cell start not yet reclaimed |
//! | 8           | 4    | leaf: left sibling page; internal: leftmost child page      |
//! | 12          | 4    | leaf: right sibling page; internal: unused ([`NO_PAGE`])    |
//! | 16          | 2n   | slot array: offsets of the cells, in key order              |
//! | 16+2n       | ...  | free space                                                  |
//! | cell start  | ...  | cells, allocated downward from `P`, in any order            |
//!
//! A cell is `key_len: u16, value_len: u16, key, value`. In an internal node
//! the value is the 4-byte child page number: cell `i` points to the child
//! holding keys `>= key(i)` and `< key(i + 1)`; the leftmost child holds the
//! keys below `key(0)` (so an internal node with `n` keys has `n + 1`
//! children, numbered `0..=n` by [`Node::child_at`], 0 being the leftmost).
//! The sibling fields hold [`NO_PAGE`] at the ends of the leaf level.
//!
//! Keys compare bytewise (memcmp order) and are strictly increasing across
//! the slot array. Removing a cell only drops its slot and counts its bytes
//! as garbage; an insert that does not fit in the contiguous free space
//! compacts the cells first (SQLite's `defragmentPage` idea). Offsets are
//! `u16`, so payloads are limited to [`MAX_PAYLOAD_LEN`].
//!
//! Every key + value pair is at most a quarter of the payload
//! ([`max_entry_len`]), so a node that overflows by one entry always splits
//! into two halves that fit, and an internal node always holds at least two
//! separators before it has to split.

use std::cmp::Ordering;

/// Bytes of the node header.
pub const HEADER_LEN: usize = 16;
/// Bytes of one slot.
pub const SLOT_LEN: usize = 2;
/// Bytes of a cell header (key length, value length).
pub const CELL_HEADER_LEN: usize = 4;
/// "No page" in sibling fields.
pub const NO_PAGE: u32 = u32::MAX;
/// Largest payload the `u16` offsets can address.
pub const MAX_PAYLOAD_LEN: usize = u16::MAX as usize;
/// Smallest payload a tree accepts (keeps every split well-formed).
pub const MIN_PAYLOAD_LEN: usize = 256;

const OFF_KIND: usize = 0;
const OFF_LEVEL: usize = 1;
const OFF_COUNT: usize = 2;
const OFF_CELL_START: usize = 4;
const OFF_GARBAGE: usize = 6;
const OFF_LEFT: usize = 8;
const OFF_RIGHT: usize = 12;

/// Largest `key.len() + value.len()` a tree with this payload accepts.
pub fn max_entry_len(payload_len: usize) -> usize {
    payload_len / 4
}

/// Bytes an entry takes in a node, slot included.
pub fn entry_footprint(key_len: usize, value_len: usize) -> usize {
    SLOT_LEN + CELL_HEADER_LEN + key_len + value_len
}

/// Node kind (header byte 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Leaf = 1,
    Internal = 2,
}

/// A view of a node over page payload bytes; mutators need `B: AsMut<[u8]>`.
pub struct Node<B> {
    bytes: B,
}

fn read_u16(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn write_u16(bytes: &mut [u8], at: usize, value: usize) {
    debug_assert!(value <= MAX_PAYLOAD_LEN);
    bytes[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
}

fn write_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

impl<B: AsRef<[u8]>> Node<B> {
    pub fn new(bytes: B) -> Self {
        Self { bytes }
    }

    fn b(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    pub fn payload_len(&self) -> usize {
        self.b().len()
    }

    pub fn kind(&self) -> Option<NodeKind> {
        match self.b()[OFF_KIND] {
            1 => Some(NodeKind::Leaf),
            2 => Some(NodeKind::Internal),
            _ => None,
        }
    }

    pub fn is_leaf(&self) -> bool {
        self.kind() == Some(NodeKind::Leaf)
    }

    pub fn level(&self) -> u8 {
        self.b()[OFF_LEVEL]
    }

    pub fn count(&self) -> usize {
        read_u16(self.b(), OFF_COUNT)
    }

    fn cell_start(&self) -> usize {
        read_u16(self.b(), OFF_CELL_START)
    }

    fn garbage(&self) -> usize {
        read_u16(self.b(), OFF_GARBAGE)
    }

    /// Leaf: left sibling.
    pub fn prev(&self) -> u32 {
        read_u32(self.b(), OFF_LEFT)
    }

    /// Leaf: right sibling.
    pub fn next(&self) -> u32 {
        read_u32(self.b(), OFF_RIGHT)
    }

    /// Internal: leftmost child.
    pub fn leftmost(&self) -> u32 {
        read_u32(self.b(), OFF_LEFT)
    }

    fn slot(&self, i: usize) -> usize {
        read_u16(self.b(), HEADER_LEN + SLOT_LEN * i)
    }

    fn cell_len_at(&self, offset: usize) -> usize {
        CELL_HEADER_LEN + read_u16(self.b(), offset) + read_u16(self.b(), offset + 2)
    }

    pub fn key(&self, i: usize) -> &[u8] {
        let at = self.slot(i);
        let key_len = read_u16(self.b(), at);
        &self.b()[at + CELL_HEADER_LEN..at + CELL_HEADER_LEN + key_len]
    }

    pub fn value(&self, i: usize) -> &[u8] {
        let at = self.slot(i);
        let key_len = read_u16(self.b(), at);
        let value_len = read_u16(self.b(), at + 2);
        let start = at + CELL_HEADER_LEN + key_len;
        &self.b()[start..start + value_len]
    }

    /// Internal: child number `idx` in `0..=count()` (0 = leftmost).
    pub fn child_at(&self, idx: usize) -> u32 {
        if idx == 0 {
            return self.leftmost();
        }
        let value = self.value(idx - 1);
        if value.len() != 4 {
            return NO_PAGE;
        }
        u32::from_le_bytes([value[0], value[1], value[2], value[3]])
    }

    /// Binary search: `Ok(i)` if `key(i) == key`, else `Err(insertion point)`.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Internal: the child whose range contains `key`.
    pub fn child_index_for(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Internal: the child whose range contains the largest key `< key`.
    pub fn child_index_before(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) | Err(i) => i,
        }
    }

    /// Contiguous free bytes between the slot array and the cells.
    fn free_contiguous(&self) -> usize {
        self.cell_start().saturating_sub(HEADER_LEN + SLOT_LEN * self.count())
    }

    /// Free bytes, counting garbage a compaction would reclaim.
    pub fn free_total(&self) -> usize {
        self.free_contiguous() + self.garbage()
    }

    /// Bytes used by slots and live cells.
    pub fn used_bytes(&self) -> usize {
        self.payload_len() - HEADER_LEN - self.free_total()
    }

    pub fn fits(&self, key_len: usize, value_len: usize) -> bool {
        entry_footprint(key_len, value_len) <= self.free_total()
    }

    /// Would replacing entry `i`'s value by one of `value_len` bytes fit?
    pub fn fits_replacing(&self, i: usize, value_len: usize) -> bool {
        let old = SLOT_LEN + self.cell_len_at(self.slot(i));
        entry_footprint(self.key(i).len(), value_len) <= self.free_total() + old
    }

    /// All entries in key order (copies).
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..self.count())
            .map(|i| (self.key(i).to_vec(), self.value(i).to_vec()))
            .collect()
    }

    /// Cheap check of the header alone, done on every latch: kind known,
    /// kind agrees with level, slot array and cell area within the payload.
    pub fn validate_header(&self) -> Result<(), String> {
        let len = self.payload_len();
        if len < HEADER_LEN {
            return Err(format!("payload of {len} bytes is shorter than the node header"));
        }
        if self.kind().is_none() {
            return Err(format!("unknown node kind {}", self.b()[OFF_KIND]));
        }
        if self.is_leaf() != (self.level() == 0) {
            return Err(format!("kind {:?} at level {}", self.kind(), self.level()));
        }
        let slots_end = HEADER_LEN + SLOT_LEN * self.count();
        let cell_start = self.cell_start();
        if slots_end > cell_start || cell_start > len || self.garbage() > len - cell_start {
            return Err(format!(
                "slot array end {slots_end} and cell start {cell_start} overlap or exceed {len}"
            ));
        }
        Ok(())
    }

    /// Structural self-check (header, slots and cells within bounds, cells
    /// disjoint, keys strictly increasing). Returns a reason on failure.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_header()?;
        let len = self.payload_len();
        let count = self.count();
        let cell_start = self.cell_start();
        let mut cells: Vec<(usize, usize)> = Vec::with_capacity(count);
        for i in 0..count {
            let at = self.slot(i);
            if at < cell_start || at + CELL_HEADER_LEN > len {
                return Err(format!(
                    "slot {i} offset {at} outside the cell area {cell_start}..{len}"
                ));
            }
            let cell_len = self.cell_len_at(at);
            if at + cell_len > len {
                return Err(format!("cell {i} at {at} of {cell_len} bytes runs past the payload"));
            }
            if !self.is_leaf() && read_u16(self.b(), at + 2) != 4 {
                return Err(format!(
                    "internal cell {i} has a {}-byte child pointer",
                    read_u16(self.b(), at + 2)
                ));
            }
            cells.push((at, cell_len));
        }
        for i in 1..count {
            if self.key(i - 1) >= self.key(i) {
                return Err(format!("keys {} and {i} out of order", i - 1));
            }
        }
        cells.sort_unstable();
        let live: usize = cells.iter().map(|c| c.1).sum();
        if cells.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
            return Err("cells overlap".to_string());
        }
        if live + self.garbage() != len - cell_start {
            return Err(format!(
                "live cells ({live} bytes) + garbage ({}) != cell area ({} bytes)",
                self.garbage(),
                len - cell_start
            ));
        }
        Ok(())
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> Node<B> {
    fn bm(&mut self) -> &mut [u8] {
        self.bytes.as_mut()
    }

    /// Formats an empty node; sibling / leftmost fields become [`NO_PAGE`].
    pub fn init(&mut self, kind: NodeKind, level: u8) {
        let len = self.payload_len();
        let b = self.bm();
        b[..HEADER_LEN].fill(0);
        b[OFF_KIND] = kind as u8;
        b[OFF_LEVEL] = level;
        write_u16(b, OFF_CELL_START, len);
        write_u32(b, OFF_LEFT, NO_PAGE);
        write_u32(b, OFF_RIGHT, NO_PAGE);
    }

    pub fn set_prev(&mut self, page_no: u32) {
        write_u32(self.bm(), OFF_LEFT, page_no);
    }

    pub fn set_next(&mut self, page_no: u32) {
        write_u32(self.bm(), OFF_RIGHT, page_no);
    }

    pub fn set_leftmost(&mut self, page_no: u32) {
        write_u32(self.bm(), OFF_LEFT, page_no);
    }

    fn set_count(&mut self, count: usize) {
        write_u16(self.bm(), OFF_COUNT, count);
    }

    /// Inserts an entry as cell `i`. The caller checked [`Node::fits`] and
    /// the key order; both are programming errors otherwise.
    pub fn insert_at(&mut self, i: usize, key: &[u8], value: &[u8]) {
        let count = self.count();
        assert!(
            i <= count && self.fits(key.len(), value.len()),
            "insert_at({i}) into a full node"
        );
        let cell_len = CELL_HEADER_LEN + key.len() + value.len();
        if self.free_contiguous() < cell_len + SLOT_LEN {
            self.compact();
        }
        let at = self.cell_start() - cell_len;
        let b = self.bm();
        write_u16(b, at, key.len());
        write_u16(b, at + 2, value.len());
        b[at + CELL_HEADER_LEN..at + CELL_HEADER_LEN + key.len()].copy_from_slice(key);
        b[at + CELL_HEADER_LEN + key.len()..at + cell_len].copy_from_slice(value);
        let slot_i = HEADER_LEN + SLOT_LEN * i;
        b.copy_within(slot_i..HEADER_LEN + SLOT_LEN * count, slot_i + SLOT_LEN);
        write_u16(b, slot_i, at);
        write_u16(b, OFF_CELL_START, at);
        self.set_count(count + 1);
    }

    /// Removes cell `i`.
    pub fn remove_at(&mut self, i: usize) {
        let count = self.count();
        assert!(i < count, "remove_at({i}) of a node with {count} keys");
        let cell_len = self.cell_len_at(self.slot(i));
        let garbage = self.garbage() + cell_len;
        let len = self.payload_len();
        let b = self.bm();
        let slot_i = HEADER_LEN + SLOT_LEN * i;
        b.copy_within(slot_i + SLOT_LEN..HEADER_LEN + SLOT_LEN * count, slot_i);
        if count == 1 {
            write_u16(b, OFF_CELL_START, len);
            write_u16(b, OFF_GARBAGE, 0);
        } else {
            write_u16(b, OFF_GARBAGE, garbage);
        }
        self.set_count(count - 1);
    }

    /// Replaces entry `i`'s value (the caller checked [`Node::fits_replacing`]).
    pub fn replace_value(&mut self, i: usize, value: &[u8]) {
        let at = self.slot(i);
        if read_u16(self.b(), at + 2) == value.len() {
            let start = at + CELL_HEADER_LEN + read_u16(self.b(), at);
            self.bm()[start..start + value.len()].copy_from_slice(value);
            return;
        }
        let key = self.key(i).to_vec();
        self.remove_at(i);
        self.insert_at(i, &key, value);
    }

    /// Rewrites the cells contiguously at the end of the payload.
    fn compact(&mut self) {
        let entries = self.entries();
        self.rebuild(&entries);
    }

    /// Replaces all cells by `entries` (sorted), keeping kind, level and the
    /// page-number fields.
    pub fn rebuild(&mut self, entries: &[(Vec<u8>, Vec<u8>)]) {
        let len = self.payload_len();
        let b = self.bm();
        write_u16(b, OFF_COUNT, 0);
        write_u16(b, OFF_CELL_START, len);
        write_u16(b, OFF_GARBAGE, 0);
        for (i, (key, value)) in entries.iter().enumerate() {
            self.insert_at(i, key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_compact_keep_order_and_space_accounting() {
        let mut node = Node::new(vec![0u8; 256]);
        node.init(NodeKind::Leaf, 0);
        let empty_free = node.free_total();
        for (i, k) in [b"m", b"c", b"x", b"a"].iter().enumerate() {
            let at = node.search(*k).unwrap_err();
            node.insert_at(at, *k, &[i as u8; 40]);
            node.validate().unwrap();
        }
        assert_eq!(node.count(), 4);
        assert_eq!(node.key(0), b"a");
        assert_eq!(node.key(3), b"x");
        node.remove_at(1);
        node.validate().unwrap();
        // Fill until full: compaction must reclaim the removed cell's bytes.
        let mut k = 0u8;
        while node.fits(2, 40) {
            let key = [b'n', k];
            let at = node.search(&key).unwrap_err();
            node.insert_at(at, &key, &[k; 40]);
            node.validate().unwrap();
            k += 1;
        }
        assert!(node.free_total() < entry_footprint(2, 40));
        node.replace_value(0, b"short");
        assert_eq!(node.value(0), b"short");
        node.validate().unwrap();
        while node.count() > 0 {
            node.remove_at(0);
            node.validate().unwrap();
        }
        assert_eq!(node.free_total(), empty_free);
    }

    #[test]
    fn internal_child_lookup_follows_separators() {
        let mut node = Node::new(vec![0u8; 256]);
        node.init(NodeKind::Internal, 1);
        node.set_leftmost(10);
        node.insert_at(0, b"g", &11u32.to_le_bytes());
        node.insert_at(1, b"p", &12u32.to_le_bytes());
        node.validate().unwrap();
        assert_eq!(node.child_at(node.child_index_for(b"a")), 10);
        assert_eq!(node.child_at(node.child_index_for(b"g")), 11);
        assert_eq!(node.child_at(node.child_index_for(b"h")), 11);
        assert_eq!(node.child_at(node.child_index_for(b"z")), 12);
        assert_eq!(node.child_at(node.child_index_before(b"g")), 10);
        assert_eq!(node.child_at(node.child_index_before(b"p")), 11);
    }
}
