//! Many readers and writers on one tree with small pages (so splits, leaf
//! removals and root raises/lowerings happen all the time).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};

use flushwise_engine::btree::{BTree, BTreeError, Direction, MemoryStore};

const THREADS: u64 = 8;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn scan(tree: &BTree<MemoryStore>, direction: Direction) -> Vec<(Vec<u8>, Vec<u8>)> {
    tree.range(Bound::Unbounded, Bound::Unbounded, direction)
        .map(Result::unwrap)
        .collect()
}

fn assert_consistent(tree: &BTree<MemoryStore>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let stats = tree.check().unwrap();
    assert_eq!(stats.pages(), u64::from(tree.store().pages_in_use()));
    let forward = scan(tree, Direction::Forward);
    let mut backward = scan(tree, Direction::Backward);
    backward.reverse();
    assert_eq!(forward, backward);
    assert_eq!(forward.len() as u64, stats.entries);
    forward
}

#[test]
fn disjoint_writers_end_with_exactly_their_own_keys() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    let models: Vec<BTreeMap<Vec<u8>, Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let tree = &tree;
                s.spawn(move || {
                    let mut model = BTreeMap::new();
                    let mut seed = t + 1;
                    for op in 0..4000u64 {
                        let r = splitmix(&mut seed);
                        // Keys of all threads interleave, so they share leaves.
                        let key = format!("{:05}/{t}", r % 600).into_bytes();
                        let value = vec![t as u8; (r % 40) as usize];
                        match op % 7 {
                            0..=2 => match tree.insert(&key, &value) {
                                Ok(()) => assert!(model.insert(key, value).is_none()),
                                Err(BTreeError::DuplicateKey) => assert!(model.contains_key(&key)),
                                Err(e) => panic!("{e}"),
                            },
                            3 => assert_eq!(tree.upsert(&key, &value).unwrap(), model.insert(key, value).is_some()),
                            4 | 5 => assert_eq!(tree.delete(&key).unwrap(), model.remove(&key).is_some()),
                            _ => assert_eq!(tree.get(&key).unwrap(), model.get(&key).cloned()),
                        }
                    }
                    model
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let expected: Vec<_> = models
        .into_iter()
        .flatten()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect();
    assert_eq!(assert_consistent(&tree), expected);
}

#[test]
fn overlapping_writers_leave_a_valid_tree_of_written_values() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let tree = &tree;
            s.spawn(move || {
                let mut seed = 100 + t;
                for _ in 0..4000 {
                    let r = splitmix(&mut seed);
                    let key = format!("{:04}", r % 400).into_bytes();
                    let value = [&[t as u8][..], &key[..], &vec![0xAB; (r % 30) as usize][..]].concat();
                    match r % 5 {
                        0 => match tree.insert(&key, &value) {
                            Ok(()) | Err(BTreeError::DuplicateKey) => {}
                            Err(e) => panic!("{e}"),
                        },
                        1 => {
                            tree.upsert(&key, &value).unwrap();
                        }
                        2 => {
                            tree.update(&key, &value).unwrap();
                        }
                        3 => {
                            tree.delete(&key).unwrap();
                        }
                        _ => {
                            if let Some(v) = tree.get(&key).unwrap() {
                                assert_eq!(&v[1..1 + key.len()], &key[..], "a value under the wrong key");
                            }
                        }
                    }
                }
            });
        }
    });
    for (key, value) in assert_consistent(&tree) {
        assert_eq!(&value[1..1 + key.len()], &key[..]);
        assert!(u64::from(value[0]) < THREADS);
    }
}

#[test]
fn scans_during_splits_see_sorted_unique_keys_and_every_stable_key() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    // Stable keys are never touched again; volatile keys sit between them
    // and come and go, splitting and freeing the leaves stable keys live in.
    let stable: BTreeSet<Vec<u8>> = (0..300u32).map(|i| format!("{:05}s", i * 10).into_bytes()).collect();
    for key in &stable {
        tree.insert(key, b"stable").unwrap();
    }
    let writers_done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u64)
            .map(|t| {
                let tree = &tree;
                s.spawn(move || {
                    let mut seed = 1000 + t;
                    for _ in 0..6000 {
                        let r = splitmix(&mut seed);
                        let key = format!("{:05}v{t}", r % 3000).into_bytes();
                        match r % 3 {
                            0 => drop(tree.delete(&key).unwrap()),
                            _ => drop(tree.upsert(&key, &vec![b'v'; (r % 40) as usize]).unwrap()),
                        }
                    }
                })
            })
            .collect();
        for t in 0..4u64 {
            let (tree, stable, writers_done) = (&tree, &stable, &writers_done);
            s.spawn(move || {
                let mut seed = 2000 + t;
                let mut scans = 0;
                while !writers_done.load(Ordering::SeqCst) || scans < 20 {
                    scans += 1;
                    let r = splitmix(&mut seed);
                    let low_n = r % 3000;
                    let low = format!("{low_n:05}").into_bytes();
                    let high = format!("{:05}", low_n + 1 + (r >> 20) % 1000).into_bytes();
                    let direction = [Direction::Forward, Direction::Backward][(r % 2) as usize];
                    let keys: Vec<Vec<u8>> = tree
                        .range(Bound::Included(&low[..]), Bound::Excluded(&high[..]), direction)
                        .map(|entry| entry.unwrap().0)
                        .collect();
                    for pair in keys.windows(2) {
                        match direction {
                            Direction::Forward => assert!(pair[0] < pair[1], "out of order or repeated"),
                            Direction::Backward => assert!(pair[0] > pair[1], "out of order or repeated"),
                        }
                    }
                    let seen: BTreeSet<&Vec<u8>> = keys.iter().collect();
                    for key in stable.range(low.clone()..high.clone()) {
                        assert!(
                            seen.contains(key),
                            "scan skipped stable key {:?}",
                            String::from_utf8_lossy(key)
                        );
                    }
                }
            });
        }
        let results: Vec<_> = writers.into_iter().map(|w| w.join()).collect();
        // Readers stop even if a writer panicked, so a failure cannot hang.
        writers_done.store(true, Ordering::SeqCst);
        assert!(results.iter().all(Result::is_ok), "a writer panicked");
    });
    let entries = assert_consistent(&tree);
    assert!(stable
        .iter()
        .all(|k| entries.binary_search_by(|(e, _)| e.cmp(k)).is_ok()));
}

#[test]
fn writing_inside_a_scan_loop_does_not_deadlock_and_visits_each_key_once() {
    let tree = BTree::create(MemoryStore::new(256)).unwrap();
    for i in 0..2000u32 {
        tree.insert(&i.to_be_bytes(), &[1; 20]).unwrap();
    }
    let mut visited = 0u32;
    for entry in tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward) {
        let (key, _) = entry.unwrap();
        assert_eq!(key, visited.to_be_bytes());
        assert!(tree.delete(&key).unwrap());
        // Growing the neighbourhood ahead splits leaves the cursor has not reached.
        tree.upsert(&[&key[..], b"+"].concat(), &[2; 20]).unwrap();
        visited += 1;
        if visited == 2000 {
            break;
        }
    }
    assert_eq!(visited, 2000);
    assert_eq!(assert_consistent(&tree).len(), 2000);
}
