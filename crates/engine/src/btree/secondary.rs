//! Non-unique (secondary) indexes on top of a unique [`BTree`].
//!
//! Every entry's tree key is `encode(secondary key) ++ primary key`, so
//! entries are unique even when secondary keys repeat, and all entries of one
//! secondary key are adjacent, ordered by primary key.
//!
//! `encode` is order-preserving and prefix-free (the FoundationDB / CockroachDB
//! byte-string encoding): each `0x00` byte becomes `0x00 0xFF` and the string
//! ends with `0x00 0x01`. So `encode(a) ++ p < encode(b) ++ q` (bytewise) iff
//! `(a, p) < (b, q)` lexicographically, and the keys whose secondary key
//! starts with `s` are exactly the tree keys starting with `escape(s)`
//! (the encoding without its terminator).

use std::ops::Bound;

use crate::page_store::PageStore;

use super::{BTree, BTreeError, Direction, Result};

const ESCAPE: u8 = 0xFF;
const TERMINATOR: u8 = 0x01;

/// `s` with every `0x00` escaped, without the terminator.
pub fn escape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    for &b in s {
        out.push(b);
        if b == 0 {
            out.push(ESCAPE);
        }
    }
    out
}

/// The tree key of `(secondary, primary)`.
pub fn composite_key(secondary: &[u8], primary: &[u8]) -> Vec<u8> {
    let mut key = escape(secondary);
    key.extend_from_slice(&[0, TERMINATOR]);
    key.extend_from_slice(primary);
    key
}

/// Splits a tree key into `(secondary, primary)`; `None` if malformed.
pub fn split_composite_key(key: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut secondary = Vec::with_capacity(key.len());
    let mut i = 0;
    while i < key.len() {
        if key[i] != 0 {
            secondary.push(key[i]);
            i += 1;
            continue;
        }
        match key.get(i + 1) {
            Some(&ESCAPE) => {
                secondary.push(0);
                i += 2;
            }
            Some(&TERMINATOR) => return Some((secondary, &key[i + 2..])),
            _ => return None,
        }
    }
    None
}

/// The smallest byte string greater than every string starting with
/// `prefix`, or `None` if there is none (`prefix` is all `0xFF`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// A non-unique index: many primary keys per secondary key.
pub struct SecondaryIndex<S: PageStore> {
    tree: BTree<S>,
}

impl<S: PageStore> SecondaryIndex<S> {
    pub fn new(tree: BTree<S>) -> Self {
        Self { tree }
    }

    pub fn tree(&self) -> &BTree<S> {
        &self.tree
    }

    pub fn into_tree(self) -> BTree<S> {
        self.tree
    }

    /// Adds `(secondary, primary) -> value`; [`BTreeError::DuplicateKey`] if
    /// that exact pair is present.
    pub fn insert(&self, secondary: &[u8], primary: &[u8], value: &[u8]) -> Result<()> {
        self.tree.insert(&composite_key(secondary, primary), value)
    }

    pub fn get(&self, secondary: &[u8], primary: &[u8]) -> Result<Option<Vec<u8>>> {
        self.tree.get(&composite_key(secondary, primary))
    }

    /// Removes one pair; `false` if absent.
    pub fn delete(&self, secondary: &[u8], primary: &[u8]) -> Result<bool> {
        self.tree.delete(&composite_key(secondary, primary))
    }

    /// All `(primary, value)` of one secondary key, by primary key.
    pub fn lookup(
        &self,
        secondary: &[u8],
        direction: Direction,
    ) -> impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + '_ {
        let mut prefix = escape(secondary);
        prefix.extend_from_slice(&[0, TERMINATOR]);
        let strip = prefix.len();
        self.tree
            .scan_prefix(&prefix, direction)
            .map(move |entry| entry.map(|(key, value)| (key[strip..].to_vec(), value)))
    }

    /// All `(secondary, primary, value)` whose secondary key starts with
    /// `secondary_prefix`.
    pub fn scan_prefix(
        &self,
        secondary_prefix: &[u8],
        direction: Direction,
    ) -> impl Iterator<Item = Result<(Vec<u8>, Vec<u8>, Vec<u8>)>> + '_ {
        self.tree
            .scan_prefix(&escape(secondary_prefix), direction)
            .map(|entry| {
                let (key, value) = entry?;
                let (secondary, primary) = split_composite_key(&key).ok_or_else(|| BTreeError::Corrupt {
                    page_no: self.tree.root_page_no(),
                    reason: "secondary index key without a terminator".to_string(),
                })?;
                Ok((secondary, primary.to_vec(), value))
            })
    }
}

/// Bounds of a prefix scan.
pub(crate) fn prefix_bounds(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let end = match prefix_successor(prefix) {
        Some(end) => Bound::Excluded(end),
        None => Bound::Unbounded,
    };
    (Bound::Included(prefix.to_vec()), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_keys_sort_by_secondary_then_primary_and_round_trip() {
        let pairs: Vec<(&[u8], &[u8])> = vec![
            (b"", b"z"),
            (b"\x00", b""),
            (b"\x00", b"a"),
            (b"\x00\x00", b""),
            (b"\x00\x01", b""),
            (b"a", b"\x00"),
            (b"a\x00", b""),
            (b"ab", b""),
        ];
        let keys: Vec<Vec<u8>> = pairs.iter().map(|(s, p)| composite_key(s, p)).collect();
        for w in keys.windows(2) {
            assert!(w[0] < w[1], "{:?} !< {:?}", w[0], w[1]);
        }
        for ((s, p), key) in pairs.iter().zip(&keys) {
            let (s2, p2) = split_composite_key(key).unwrap();
            assert_eq!((s2.as_slice(), p2), (*s, *p));
        }
        assert_eq!(prefix_successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff"), None);
    }
}
