//! Property: a B+tree on a small-page in-memory store behaves exactly like a
//! `BTreeMap` under random inserts, upserts, updates, deletes, gets, range
//! scans in both directions and clean reopens, and `check()` holds after
//! every batch of operations.

use std::collections::BTreeMap;
use std::ops::Bound;

use flushwise_engine::btree::{BTree, BTreeError, Direction, MemoryStore};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<u8>, Vec<u8>),
    Upsert(Vec<u8>, Vec<u8>),
    Update(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Get(Vec<u8>),
    Range(Bound<Vec<u8>>, Bound<Vec<u8>>, Direction),
    /// Upserts `prefix ++ i` for `i in 0..count` (grows the tree fast).
    UpsertRun(Vec<u8>, u16, Vec<u8>),
    /// Deletes every key within bounds (empties whole leaves and subtrees).
    DeleteRange(Bound<Vec<u8>>, Bound<Vec<u8>>),
    Check,
    Reopen,
}

/// Bytes from a 4-letter alphabet with both extremes, so keys collide and
/// memcmp corner cases (0x00, 0xFF, prefixes) come up.
fn bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', 0xFF]), 1..max_len)
}

/// Mostly short keys (collisions), sometimes up to `max_len`.
fn key(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![4 => bytes(6), 1 => bytes(max_len)]
}

fn value(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![4 => bytes(max_len / 8 + 2), 1 => bytes(max_len)]
}

fn bound(max_len: usize) -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        1 => Just(Bound::Unbounded),
        2 => key(max_len).prop_map(Bound::Included),
        2 => key(max_len).prop_map(Bound::Excluded),
    ]
}

fn op(max_len: usize) -> impl Strategy<Value = Op> {
    let direction = prop_oneof![Just(Direction::Forward), Just(Direction::Backward)];
    prop_oneof![
        8 => (key(max_len), value(max_len)).prop_map(|(k, v)| Op::Insert(k, v)),
        4 => (key(max_len), value(max_len)).prop_map(|(k, v)| Op::Upsert(k, v)),
        2 => (key(max_len), value(max_len)).prop_map(|(k, v)| Op::Update(k, v)),
        6 => key(max_len).prop_map(Op::Delete),
        2 => key(max_len).prop_map(Op::Get),
        2 => (bound(max_len), bound(max_len), direction).prop_map(|(s, e, d)| Op::Range(s, e, d)),
        1 => (key(max_len), 1u16..200, value(max_len)).prop_map(|(k, n, v)| Op::UpsertRun(k, n, v)),
        1 => (bound(max_len), bound(max_len)).prop_map(|(s, e)| Op::DeleteRange(s, e)),
        1 => Just(Op::Check),
        1 => Just(Op::Reopen),
    ]
}

fn in_bounds(key: &[u8], start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    let after_start = match start {
        Bound::Included(s) => key >= s.as_slice(),
        Bound::Excluded(s) => key > s.as_slice(),
        Bound::Unbounded => true,
    };
    let before_end = match end {
        Bound::Included(e) => key <= e.as_slice(),
        Bound::Excluded(e) => key < e.as_slice(),
        Bound::Unbounded => true,
    };
    after_start && before_end
}

fn check_matches(tree: &BTree<MemoryStore>, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let stats = tree.check().unwrap();
    assert_eq!(stats.entries, model.len() as u64);
    assert_eq!(
        stats.pages(),
        u64::from(tree.store().pages_in_use()),
        "a page leaked or was freed twice"
    );
    let all: Vec<_> = tree
        .range(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(all, want);
}

fn run(ops: Vec<Op>, payload_len: usize) {
    let mut tree = BTree::create(MemoryStore::new(payload_len)).unwrap();
    let root = tree.root_page_no();
    let max_entry = tree.max_entry_len();
    let mut model = BTreeMap::new();
    for op in ops {
        let too_big = |k: &[u8], v: &[u8]| k.len() + v.len() > max_entry;
        match op {
            Op::Insert(k, v) => match tree.insert(&k, &v) {
                Ok(()) => assert!(model.insert(k, v).is_none()),
                Err(BTreeError::DuplicateKey) => assert!(model.contains_key(&k)),
                Err(BTreeError::EntryTooLarge { .. }) => assert!(too_big(&k, &v)),
                Err(e) => panic!("insert: {e}"),
            },
            Op::Upsert(k, v) => match tree.upsert(&k, &v) {
                Ok(existed) => assert_eq!(existed, model.insert(k, v).is_some()),
                Err(BTreeError::EntryTooLarge { .. }) => assert!(too_big(&k, &v)),
                Err(e) => panic!("upsert: {e}"),
            },
            Op::Update(k, v) => match tree.update(&k, &v) {
                Ok(existed) => {
                    assert_eq!(existed, model.contains_key(&k));
                    if existed {
                        model.insert(k, v);
                    }
                }
                Err(BTreeError::EntryTooLarge { .. }) => assert!(too_big(&k, &v)),
                Err(e) => panic!("update: {e}"),
            },
            Op::Delete(k) => assert_eq!(tree.delete(&k).unwrap(), model.remove(&k).is_some()),
            Op::Get(k) => assert_eq!(tree.get(&k).unwrap(), model.get(&k).cloned()),
            Op::Range(start, end, direction) => {
                let got: Vec<_> = tree
                    .range(
                        start.as_ref().map(Vec::as_slice),
                        end.as_ref().map(Vec::as_slice),
                        direction,
                    )
                    .map(Result::unwrap)
                    .collect();
                let mut want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| in_bounds(k, &start, &end))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if direction == Direction::Backward {
                    want.reverse();
                }
                assert_eq!(got, want);
            }
            Op::UpsertRun(prefix, count, v) => {
                for i in 0..count {
                    let mut k = prefix.clone();
                    k.extend_from_slice(&i.to_be_bytes());
                    match tree.upsert(&k, &v) {
                        Ok(existed) => assert_eq!(existed, model.insert(k, v.clone()).is_some()),
                        Err(BTreeError::EntryTooLarge { .. }) => assert!(too_big(&k, &v)),
                        Err(e) => panic!("upsert: {e}"),
                    }
                }
            }
            Op::DeleteRange(start, end) => {
                let doomed: Vec<_> = model.keys().filter(|k| in_bounds(k, &start, &end)).cloned().collect();
                for k in doomed {
                    assert!(tree.delete(&k).unwrap());
                    model.remove(&k);
                }
            }
            Op::Check => check_matches(&tree, &model),
            Op::Reopen => {
                let snapshot = tree.into_store().snapshot();
                tree = BTree::open(MemoryStore::restore(&snapshot), root).unwrap();
                check_matches(&tree, &model);
            }
        }
    }
    check_matches(&tree, &model);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// 1 KiB pages, keys and values up to 200 bytes: a few levels, and
    /// oversized entries exercise the quarter-page limit.
    #[test]
    fn tree_matches_btreemap_with_1k_pages(ops in prop::collection::vec(op(200), 1..300)) {
        run(ops, 1024);
    }

    /// 256-byte pages (the minimum) and entries up to 60 bytes: deep trees,
    /// many splits, leaf removals and root lowering per case.
    #[test]
    fn tree_matches_btreemap_with_tiny_pages(ops in prop::collection::vec(op(30), 1..300)) {
        run(ops, 256);
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn filling_then_emptying_grows_then_lowers_the_root_in_place() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    let root = tree.root_page_no();
    let mut model = BTreeMap::new();
    let mut seed = 7;
    for _ in 0..4000 {
        let k = splitmix(&mut seed) % 100_000;
        let key = format!("{k:08}").into_bytes();
        tree.upsert(&key, &k.to_le_bytes()).unwrap();
        model.insert(key, k.to_le_bytes().to_vec());
    }
    let stats = tree.check().unwrap();
    assert!(stats.height >= 4, "height {}", stats.height);
    assert_eq!(tree.root_page_no(), root);
    check_matches(&tree, &model);
    let keys: Vec<_> = model.keys().cloned().collect();
    for (i, key) in keys.iter().enumerate() {
        assert!(tree.delete(key).unwrap());
        model.remove(key);
        if i % 500 == 0 {
            check_matches(&tree, &model);
        }
    }
    let stats = tree.check().unwrap();
    assert_eq!((stats.height, stats.entries, stats.pages()), (1, 0, 1));
    assert_eq!(tree.store().pages_in_use(), 1);
}
