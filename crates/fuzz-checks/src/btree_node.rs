//! B+tree nodes: `flushwise_engine::btree::node::Node::validate` on a page
//! payload, and every accessor and mutator on a node it accepts.
//!
//! Modes (low bit of the first byte):
//! - 0: the rest laid into a payload of a chosen length: the first
//!   `2 * rest[0]` bytes at the front (header and slots), the others at the
//!   back (cells), optionally with the cell start pointed at them; then
//!   edits driven by the bytes left;
//! - 1: a node built with `init` and `insert_at` from structured entries
//!   must validate and hold exactly those entries, through removals too.
//!
//! Properties: `validate` never panics, and `validate_header` refuses
//! whatever it refuses; on a node `validate` accepts, every key, value and
//! child is in bounds, keys strictly increase, `search` finds each key at
//! its slot, the space accounting adds up, rebuilding from the entries
//! gives the same node, and inserts and removals keep it valid and equal to
//! a model.

use std::collections::BTreeMap;

use arbitrary::Unstructured;
use flushwise_engine::btree::node::{self, Node, NodeKind, CELL_HEADER_LEN, HEADER_LEN, SLOT_LEN};

const LENS: [usize; 4] = [256, 1024, 4060, 16348];
/// Edits per input, and how often the full check runs among them.
const EDITS_MAX: usize = 16;
const FULL_CHECK_EVERY: usize = 4;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        decoded(mode, rest);
    } else {
        built(rest);
    }
}

fn decoded(mode: u8, rest: &[u8]) {
    let Some((&front, rest)) = rest.split_first() else {
        return;
    };
    let len = LENS[usize::from(mode >> 1) % LENS.len()];
    let front = (usize::from(front) * 2).min(rest.len()).min(len);
    let mut buf = vec![0u8; len];
    buf[..front].copy_from_slice(&rest[..front]);
    // The bytes after the front go to the back, unless the edits take them.
    let (back, edits) = if mode & 0x40 != 0 {
        let split = rest.len() - (rest.len() - front) / 2;
        (&rest[front..split], &rest[split..])
    } else {
        (&rest[front..], &[][..])
    };
    let back = &back[..back.len().min(len - front)];
    buf[len - back.len()..].copy_from_slice(back);
    if mode & 0x80 != 0 {
        let cell_start = (len - back.len()) as u16;
        buf[4..6].copy_from_slice(&cell_start.to_le_bytes());
    }
    let Some(entries) = assert_decoded(&buf) else {
        return;
    };
    edit(&mut buf, entries, &mut Unstructured::new(edits));
}

/// `validate`'s verdict and, for an accepted node, its properties; returns
/// the entries of an accepted node.
fn assert_decoded(buf: &[u8]) -> Option<Entries> {
    let node = Node::new(buf);
    let full = node.validate();
    if node.validate_header().is_err() {
        assert!(full.is_err(), "validate accepted a node whose header is refused");
    }
    full.ok()?;
    let len = buf.len();
    let count = node.count();
    let entries = node.entries();
    assert_eq!(entries.len(), count);
    let mut live = 0;
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            assert!(entries[i - 1].0 < *key, "keys {} and {i} not increasing", i - 1);
        }
        assert_eq!(node.search(key), Ok(i), "search misses key {i}");
        live += SLOT_LEN + CELL_HEADER_LEN + key.len() + value.len();
        if !node.is_leaf() {
            assert_eq!(value.len(), 4, "internal cell {i} without a 4-byte child");
            let child = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
            assert_eq!(node.child_at(i + 1), child);
            assert_eq!(node.child_index_for(key), i + 1);
            assert_eq!(node.child_index_before(key), i);
        }
    }
    if !node.is_leaf() {
        assert_eq!(node.child_at(0), node.leftmost());
    }
    assert_eq!(node.used_bytes(), live, "used bytes disagree with the cells");
    assert_eq!(node.used_bytes() + node.free_total(), len - HEADER_LEN);
    for i in 0..count {
        let _ = node.fits_replacing(i, 4);
    }

    // Rebuilding from the entries yields a compact node with the same content.
    let mut copy = buf.to_vec();
    Node::new(&mut copy[..]).rebuild(&entries);
    let rebuilt = Node::new(&copy[..]);
    rebuilt.validate().expect("a rebuilt node validates");
    assert_eq!(rebuilt.entries(), entries);
    assert_eq!(rebuilt.free_total(), node.free_total());
    assert_eq!(
        (rebuilt.kind(), rebuilt.level(), rebuilt.prev(), rebuilt.next()),
        (node.kind(), node.level(), node.prev(), node.next())
    );
    Some(entries)
}

/// Inserts and removals on a valid node, each followed by a full check
/// against a model of its entries.
fn edit(buf: &mut [u8], entries: Entries, u: &mut Unstructured<'_>) {
    let leaf = Node::new(&*buf).is_leaf();
    let max_entry = node::max_entry_len(buf.len());
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = entries.into_iter().collect();
    // `Unstructured` answers defaults once empty, so the loop ends on that;
    // the full check (linear in the node) runs every few edits and at the
    // end, `validate` after each.
    let mut edits = 0;
    while !u.is_empty() && edits < EDITS_MAX {
        edits += 1;
        let Ok(remove) = u.arbitrary::<bool>() else { break };
        let mut n = Node::new(&mut *buf);
        if remove {
            let Ok(pick) = u.arbitrary::<u16>() else { break };
            if n.count() == 0 {
                continue;
            }
            let i = usize::from(pick) % n.count();
            let key = n.key(i).to_vec();
            n.remove_at(i);
            model.remove(&key);
        } else {
            let Ok(key) = u.arbitrary::<&[u8]>() else { break };
            let value = if leaf {
                let Ok(value) = u.arbitrary::<&[u8]>() else { break };
                value.to_vec()
            } else {
                let Ok(child) = u.arbitrary::<u32>() else { break };
                child.to_le_bytes().to_vec()
            };
            if key.len() + value.len() > max_entry || !n.fits(key.len(), value.len()) {
                continue;
            }
            match n.search(key) {
                Ok(i) => {
                    if n.fits_replacing(i, value.len()) {
                        n.replace_value(i, &value);
                        model.insert(key.to_vec(), value);
                    }
                }
                Err(i) => {
                    n.insert_at(i, key, &value);
                    model.insert(key.to_vec(), value);
                }
            }
        }
        if let Err(reason) = Node::new(&*buf).validate() {
            panic!("an edit made a valid node invalid: {reason}");
        }
        if edits % FULL_CHECK_EVERY == 0 {
            assert_model(buf, &model);
        }
    }
    assert_model(buf, &model);
}

fn assert_model(buf: &[u8], model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let after = assert_decoded(buf).expect("an edited valid node stays valid");
    let expected: Entries = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(after == expected, "node entries differ from the model");
}

fn built(rest: &[u8]) {
    let mut u = Unstructured::new(rest);
    let (Ok(len), Ok(leaf), Ok(level), Ok(left), Ok(right)) = (
        u.choose(&LENS),
        u.arbitrary::<bool>(),
        u.int_in_range(1u8..=8),
        u.arbitrary::<u32>(),
        u.arbitrary::<u32>(),
    ) else {
        return;
    };
    let mut buf = vec![0u8; *len];
    let mut n = Node::new(&mut buf[..]);
    if leaf {
        n.init(NodeKind::Leaf, 0);
        n.set_prev(left);
        n.set_next(right);
    } else {
        n.init(NodeKind::Internal, level);
        n.set_leftmost(left);
    }
    let entries = assert_decoded(&buf).expect("an empty node validates");
    assert!(entries.is_empty());
    edit(&mut buf, entries, &mut u);
}
