//! Scenarios: atomic splits under allocation failures, limits, secondary
//! indexes, reopen from a catalogued root.

use std::collections::BTreeMap;
use std::ops::Bound;

use flushwise_engine::btree::{BTree, BTreeError, Direction, MemoryStore, SecondaryIndex};
use flushwise_engine::page_store::StoreError;

fn contents(tree: &BTree<MemoryStore>) -> Vec<(Vec<u8>, Vec<u8>)> {
    tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(Result::unwrap)
        .collect()
}

/// SQLite's `do_ioerr_test` shape: for every insert, fail the N-th
/// allocation for N = 0, 1, 2, ... until the insert goes through; each failed
/// attempt must leave every page of the tree exactly as before.
#[test]
fn split_that_fails_to_allocate_leaves_the_tree_exactly_as_before() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    let mut model = BTreeMap::new();
    let mut deepest_failure = 0;
    for i in 0..1500u32 {
        let key = (i.wrapping_mul(2_654_435_761) % 10_000).to_be_bytes().to_vec();
        let value = vec![b'x'; 20 + (i % 25) as usize];
        for allowed in 0.. {
            let before = tree.store().snapshot();
            let in_use = tree.store().pages_in_use();
            tree.store().fail_allocations_after(Some(allowed));
            let result = tree.upsert(&key, &value);
            tree.store().fail_allocations_after(None);
            match result {
                Ok(_) => break,
                Err(BTreeError::Store(StoreError::Full { .. })) => {
                    deepest_failure = deepest_failure.max(allowed);
                    let after = tree.store().snapshot();
                    for page in 0..before.page_count() {
                        assert_eq!(
                            after.page(page),
                            before.page(page),
                            "page {page} changed by a failed split"
                        );
                    }
                    assert_eq!(tree.store().pages_in_use(), in_use);
                    assert_eq!(tree.get(&key).unwrap(), model.get(&key).cloned());
                }
                Err(e) => panic!("{e}"),
            }
            assert!(allowed < 64, "an insert needs more than 64 allocations");
        }
        model.insert(key, value);
        if i % 100 == 0 {
            tree.check().unwrap();
        }
    }
    let stats = tree.check().unwrap();
    assert!(stats.height >= 4);
    // Some inserts split a leaf, its parent and the root: failures after 1, 2
    // and 3 successful allocations were all rolled back.
    assert!(
        deepest_failure >= 3,
        "deepest failure after {deepest_failure} allocations"
    );
    assert_eq!(contents(&tree), model.into_iter().collect::<Vec<_>>());
}

#[test]
fn oversized_entries_are_rejected_and_the_limit_is_a_quarter_page() {
    let tree = BTree::create(MemoryStore::new(1024)).unwrap();
    assert_eq!(tree.max_entry_len(), 256);
    tree.insert(&[1; 100], &[2; 156]).unwrap();
    let err = tree.insert(&[1; 100], &[2; 157]).unwrap_err();
    assert!(matches!(
        err,
        BTreeError::EntryTooLarge {
            key_len: 100,
            value_len: 157,
            max_len: 256
        }
    ));
    assert!(err.to_string().contains("quarter of the page payload"));
    assert!(matches!(
        tree.upsert(&[1; 100], &[2; 157]),
        Err(BTreeError::EntryTooLarge { .. })
    ));
    assert!(matches!(tree.insert(&[1; 100], &[3; 1]), Err(BTreeError::DuplicateKey)));
    assert_eq!(tree.get(&[1; 100]).unwrap(), Some(vec![2; 156]));
    assert!(matches!(
        BTree::create(MemoryStore::new(128)),
        Err(BTreeError::UnsupportedPayload { payload_len: 128, .. })
    ));
}

#[test]
fn reopening_at_the_catalogued_root_after_root_splits_finds_every_key() {
    let tree = BTree::create(MemoryStore::new(512)).unwrap();
    let root = tree.root_page_no();
    for i in 0..3000u32 {
        tree.insert(format!("key{i:06}").as_bytes(), &i.to_le_bytes()).unwrap();
    }
    assert!(tree.check().unwrap().height >= 3);
    assert_eq!(tree.root_page_no(), root);
    let snapshot = tree.into_store().snapshot();
    let tree = BTree::open(MemoryStore::restore(&snapshot), root).unwrap();
    tree.check().unwrap();
    for i in (0..3000u32).step_by(7) {
        assert_eq!(
            tree.get(format!("key{i:06}").as_bytes()).unwrap(),
            Some(i.to_le_bytes().to_vec())
        );
    }
    let tail: Vec<_> = tree
        .range(Bound::Excluded(b"key002990"), Bound::Unbounded, Direction::Backward)
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(tail.len(), 9);
    assert_eq!(tail[0], b"key002999");
}

#[test]
fn secondary_index_groups_primary_keys_under_each_secondary_key() {
    let index = SecondaryIndex::new(BTree::create(MemoryStore::new(512)).unwrap());
    // Secondary keys that are prefixes of each other and contain 0x00.
    let cities: [&[u8]; 4] = [b"ber", b"berlin", b"ber\x00x", b"bonn"];
    for pk in 0..200u32 {
        let city = cities[(pk % 4) as usize];
        index.insert(city, &pk.to_be_bytes(), b"row").unwrap();
    }
    assert!(matches!(
        index.insert(b"bonn", &3u32.to_be_bytes(), b"row"),
        Err(BTreeError::DuplicateKey)
    ));
    let berlin: Vec<u32> = index
        .lookup(b"berlin", Direction::Forward)
        .map(|e| u32::from_be_bytes(e.unwrap().0.try_into().unwrap()))
        .collect();
    assert_eq!(berlin, (0..200).filter(|pk| pk % 4 == 1).collect::<Vec<_>>());
    let ber_backward: Vec<u32> = index
        .lookup(b"ber", Direction::Backward)
        .map(|e| u32::from_be_bytes(e.unwrap().0.try_into().unwrap()))
        .collect();
    assert_eq!(
        ber_backward,
        (0..200).rev().filter(|pk| pk % 4 == 0).collect::<Vec<_>>()
    );
    // Prefix "ber" covers three secondary keys, in secondary-key order.
    let under_ber: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = index
        .scan_prefix(b"ber", Direction::Forward)
        .map(Result::unwrap)
        .collect();
    assert_eq!(under_ber.len(), 150);
    assert_eq!(under_ber[0].0, b"ber");
    assert_eq!(under_ber[50].0, b"ber\x00x");
    assert_eq!(under_ber[100].0, b"berlin");
    assert!(index.delete(b"berlin", &1u32.to_be_bytes()).unwrap());
    assert!(!index.delete(b"berlin", &1u32.to_be_bytes()).unwrap());
    assert_eq!(index.get(b"ber", &4u32.to_be_bytes()).unwrap(), Some(b"row".to_vec()));
    assert_eq!(index.lookup(b"berlin", Direction::Forward).count(), 49);
    index.tree().check().unwrap();
}

#[test]
fn raw_prefix_scan_stops_at_the_prefix_successor() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    for key in [&b"a\xff"[..], b"a\xff\xff", b"a\xff\x00", b"b", b"a", b"a\xfe"] {
        tree.insert(key, b"").unwrap();
    }
    let keys: Vec<Vec<u8>> = tree
        .scan_prefix(b"a\xff", Direction::Forward)
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(
        keys,
        vec![b"a\xff".to_vec(), b"a\xff\x00".to_vec(), b"a\xff\xff".to_vec()]
    );
    assert_eq!(tree.scan_prefix(b"\xff", Direction::Backward).count(), 0);
}
