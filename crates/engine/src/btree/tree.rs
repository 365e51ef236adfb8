//! A concurrent B+tree over a [`PageStore`], with a root page that never moves.
//!
//! Shape invariants (checked by [`BTree::check`]):
//! 1. all leaves are at level 0 and every child is one level below its parent;
//! 2. keys are strictly increasing within a node, across the leaf chain and
//!    within the bounds its parent's separators give a child (`[key(i-1), key(i))`);
//! 3. leaves form a doubly linked list in key order, ending in [`NO_PAGE`];
//! 4. every page is reached exactly once from the root;
//! 5. a non-root leaf is never empty; an internal root has at least one key.
//!
//! **Stable root.** The root page number is fixed at [`BTree::create`] and can
//! be kept in a catalog. A root split (InnoDB's `btr_root_raise_and_insert`)
//! copies the root into a fresh child, turns the root into an internal node
//! one level higher pointing at that child, then splits the child as usual.
//! The reverse (root lowering) copies a lone child back into the root.
//!
//! **Atomic structure changes.** Every change goes through one
//! `PageStore::commit`: a plain insert or delete commits the leaf alone; a
//! split (of a leaf, its ancestors and possibly the root) or a leaf removal
//! commits every page it touched, new and freed pages included, in one group.
//! If anything fails midway (say an allocation), the guards are dropped
//! without commit and the store puts every page back as it was.
//!
//! **Concurrency** (latches only, no tree-wide mutex):
//! - Readers descend with shared latch coupling (latch child, then release
//!   parent).
//! - Writers first descend optimistically the same way but latch the leaf
//!   exclusive. If the change fits in the leaf (no split, and a delete does not
//!   empty a non-root leaf), they apply it and commit the leaf alone.
//! - Otherwise they release everything and restart pessimistically: exclusive
//!   latches from the root down to the leaf, all held until the structure
//!   modification (SMO) commits. Holding the root exclusive serialises SMOs
//!   (InnoDB 5.6's index X-lock), which keeps the scheme simple: during an SMO
//!   no other page is split or freed, so sibling pointers cannot move under it.
//!   SMOs are rare (about one per leaf's worth of inserts).
//! - Deadlock freedom: everyone but the (single) SMO latches top-down and holds
//!   at most a parent and a child, or only one leaf (cursors). The SMO also
//!   latches leaf siblings (the right neighbour on a split, both neighbours on
//!   a leaf removal), but nobody holding a leaf ever waits for another latch,
//!   so no cycle can form.
//! - Cursors hold no latch between leaves (so a caller may write the tree
//!   inside a scan loop). Two counters stamp SMOs: `smo_started` is bumped
//!   under the root X latch before an SMO touches anything, `smo_finished`
//!   after its commit (a seqlock split in two, because the next SMO may begin
//!   as soon as the commit releases the root). While holding a leaf, a cursor
//!   takes a stamp: `started` if it equals `finished` (read first), i.e. no SMO
//!   was running. To step to the sibling it checks `started` against the
//!   stamp before and after latching the sibling, and follows the link only
//!   if unchanged (no SMO ran in between, so the link is still exact).
//!   Otherwise it re-seeks from the root by the last key it saw (the
//!   last/first key of the leaf just read), so it never skips or repeats a
//!   key across concurrent splits, leaf removals or root raises.
//!
//! **Reading pages defensively.** Every latched node's header is checked
//! (kind, level against the parent's, slot array within bounds) and reported
//! as [`BTreeError::Corrupt`]; cell offsets are only fully validated by
//! [`BTree::check`], so a page corrupted inside its cell area can still panic
//! on a slice bound (pages come from our own store, which checksums them).
//!
//! **Space policy on delete.** A leaf whose last key is deleted is unlinked
//! from its siblings and freed; a parent left without children is freed too,
//! and a root left with a single child absorbs it (root lowering), so the
//! tree shrinks in height when it empties. Leaves are never merged or
//! rebalanced: a leaf keeps its page while it holds at least one key, so
//! after deleting most keys at random the tree can be sparse (as low as one
//! key per leaf). This trades space for simplicity and avoids the
//! merge/split ping-pong InnoDB guards against with `MERGE_THRESHOLD`.

use std::collections::{HashSet, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use flushwise_core::Lsn;

use crate::page_store::{Latch, PageGuard, PageStore};

use super::node::{self, Node, NodeKind, NO_PAGE};
use super::secondary::prefix_bounds;
use super::{BTreeError, Direction, Result};

/// Upper bound on descent steps (levels are a `u8`).
const MAX_DEPTH: usize = 256;

/// A B+tree over the pages of one store.
pub struct BTree<S: PageStore> {
    store: S,
    root: u32,
    /// Structure modifications begun (incremented under the root X latch).
    smo_started: AtomicU64,
    /// Structure modifications ended (incremented after their commit, which
    /// may be after the next one has begun).
    smo_finished: AtomicU64,
}

/// What [`BTree::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Levels, leaves included (1 for a lone root leaf).
    pub height: u32,
    pub entries: u64,
    pub leaf_pages: u64,
    pub internal_pages: u64,
    /// Bytes used by slots and cells over all nodes.
    pub used_bytes: u64,
    /// Payload bytes over all nodes.
    pub payload_bytes: u64,
}

impl TreeStats {
    pub fn pages(&self) -> u64 {
        self.leaf_pages + self.internal_pages
    }
}

#[derive(Clone, Copy)]
enum WriteOp<'v> {
    Insert(&'v [u8]),
    Upsert(&'v [u8]),
    Update(&'v [u8]),
    Delete,
}

/// What a write needs in its leaf.
enum Step {
    /// Nothing to change; the result.
    Unchanged(bool),
    /// Fits in the leaf.
    Apply,
    /// Needs a split or a leaf removal.
    NeedsSmo,
}

/// Marks an SMO in progress for the life of the value.
struct SmoInProgress<'a> {
    finished: &'a AtomicU64,
}

impl<'a> SmoInProgress<'a> {
    fn begin(started: &'a AtomicU64, finished: &'a AtomicU64) -> Self {
        started.fetch_add(1, Ordering::SeqCst);
        Self { finished }
    }
}

impl Drop for SmoInProgress<'_> {
    fn drop(&mut self) {
        self.finished.fetch_add(1, Ordering::SeqCst);
    }
}

fn corrupt(page_no: u32, reason: impl Into<String>) -> BTreeError {
    BTreeError::Corrupt {
        page_no,
        reason: reason.into(),
    }
}

/// Checks a freshly latched node's header and expected level.
fn checked(guard: &[u8], page_no: u32, level: Option<u8>) -> Result<Node<&[u8]>> {
    let node = Node::new(guard);
    node.validate_header().map_err(|reason| corrupt(page_no, reason))?;
    if let Some(level) = level {
        if node.level() != level {
            return Err(corrupt(
                page_no,
                format!("level {} where {level} was expected", node.level()),
            ));
        }
    }
    Ok(node)
}

fn classify(leaf: &[u8], key: &[u8], op: WriteOp<'_>, is_root: bool) -> Result<Step> {
    let node = Node::new(leaf);
    let found = node.search(key);
    Ok(match (op, found) {
        (WriteOp::Insert(_), Ok(_)) => return Err(BTreeError::DuplicateKey),
        (WriteOp::Insert(v) | WriteOp::Upsert(v), Err(_)) => {
            if node.fits(key.len(), v.len()) {
                Step::Apply
            } else {
                Step::NeedsSmo
            }
        }
        (WriteOp::Upsert(v) | WriteOp::Update(v), Ok(i)) => {
            if node.fits_replacing(i, v.len()) {
                Step::Apply
            } else {
                Step::NeedsSmo
            }
        }
        (WriteOp::Update(_) | WriteOp::Delete, Err(_)) => Step::Unchanged(false),
        (WriteOp::Delete, Ok(_)) => {
            if node.count() > 1 || is_root {
                Step::Apply
            } else {
                Step::NeedsSmo
            }
        }
    })
}

/// Applies a write that [`classify`] found to fit; returns whether the key
/// existed.
fn apply(leaf: &mut [u8], key: &[u8], op: WriteOp<'_>) -> bool {
    let mut node = Node::new(leaf);
    match (op, node.search(key)) {
        (WriteOp::Insert(v) | WriteOp::Upsert(v), Err(i)) => {
            node.insert_at(i, key, v);
            false
        }
        (WriteOp::Upsert(v) | WriteOp::Update(v), Ok(i)) => {
            node.replace_value(i, v);
            true
        }
        (WriteOp::Delete, Ok(i)) => {
            node.remove_at(i);
            true
        }
        (WriteOp::Update(_) | WriteOp::Delete, Err(_)) | (WriteOp::Insert(_), Ok(_)) => false,
    }
}

/// Footprints of entries in a node (slot included).
fn footprints(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<usize> {
    entries
        .iter()
        .map(|(k, v)| node::entry_footprint(k.len(), v.len()))
        .collect()
}

/// Leaf split point `s`: entries `..s` stay, `s..` move right; both halves
/// fit and are as even in bytes as possible.
fn leaf_split_point(entries: &[(Vec<u8>, Vec<u8>)], capacity: usize, page_no: u32) -> Result<usize> {
    let sizes = footprints(entries);
    let total: usize = sizes.iter().sum();
    let mut left = 0;
    let mut best: Option<(usize, usize)> = None;
    for (s, size) in sizes.iter().enumerate().skip(1).map(|(s, _)| (s, sizes[s - 1])) {
        left += size;
        let right = total - left;
        if left <= capacity && right <= capacity {
            let imbalance = left.abs_diff(right);
            if !matches!(best, Some((_, b)) if b <= imbalance) {
                best = Some((s, imbalance));
            }
        }
    }
    best.map(|(s, _)| s)
        .ok_or_else(|| corrupt(page_no, format!("no split point for {} entries", entries.len())))
}

/// Internal split point `m`: cells `..m` stay, cell `m` moves up, `m+1..`
/// move right.
fn internal_split_point(entries: &[(Vec<u8>, Vec<u8>)], capacity: usize, page_no: u32) -> Result<usize> {
    let sizes = footprints(entries);
    let total: usize = sizes.iter().sum();
    let mut left = 0;
    let mut best: Option<(usize, usize)> = None;
    for (m, size) in sizes.iter().enumerate() {
        let right = total - left - size;
        if left <= capacity && right <= capacity {
            let imbalance = left.abs_diff(right);
            if !matches!(best, Some((_, b)) if b <= imbalance) {
                best = Some((m, imbalance));
            }
        }
        left += size;
    }
    best.map(|(m, _)| m)
        .ok_or_else(|| corrupt(page_no, format!("no split point for {} separators", entries.len())))
}

fn child_from_value(value: &[u8], page_no: u32) -> Result<u32> {
    let bytes: [u8; 4] = value
        .try_into()
        .map_err(|_| corrupt(page_no, "child pointer is not 4 bytes"))?;
    Ok(u32::from_le_bytes(bytes))
}

impl<S: PageStore> BTree<S> {
    /// Creates an empty tree: allocates its root page in its own group.
    pub fn create(store: S) -> Result<Self> {
        let payload_len = store.payload_len();
        if !(node::MIN_PAYLOAD_LEN..=node::MAX_PAYLOAD_LEN).contains(&payload_len) {
            return Err(BTreeError::UnsupportedPayload {
                payload_len,
                min: node::MIN_PAYLOAD_LEN,
                max: node::MAX_PAYLOAD_LEN,
            });
        }
        let root = {
            let mut page = store.allocate()?;
            Node::new(page.bytes_mut()).init(NodeKind::Leaf, 0);
            let root = page.page_no();
            store.commit(vec![page])?;
            root
        };
        Ok(Self::with_root(store, root))
    }

    fn with_root(store: S, root: u32) -> Self {
        Self {
            store,
            root,
            smo_started: AtomicU64::new(0),
            smo_finished: AtomicU64::new(0),
        }
    }

    /// The number of SMOs begun if none is in progress now, else `None`
    /// (`finished` is read first: if both agree, none was running then).
    fn smo_stamp(&self) -> Option<u64> {
        let finished = self.smo_finished.load(Ordering::SeqCst);
        let started = self.smo_started.load(Ordering::SeqCst);
        (started == finished).then_some(started)
    }

    /// Opens the tree whose root is `root` (as kept in a catalog).
    pub fn open(store: S, root: u32) -> Result<Self> {
        {
            let page = store.latch(root, Latch::Shared)?;
            checked(&page, root, None)?;
        }
        Ok(Self::with_root(store, root))
    }

    pub fn root_page_no(&self) -> u32 {
        self.root
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn into_store(self) -> S {
        self.store
    }

    /// Largest `key.len() + value.len()` accepted.
    pub fn max_entry_len(&self) -> usize {
        node::max_entry_len(self.store.payload_len())
    }

    fn check_entry(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let max_len = self.max_entry_len();
        if key.len() + value.len() > max_len {
            return Err(BTreeError::EntryTooLarge {
                key_len: key.len(),
                value_len: value.len(),
                max_len,
            });
        }
        Ok(())
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let leaf = self.descend_shared(|node| node.child_index_for(key))?;
        let node = Node::new(&*leaf);
        Ok(node.search(key).ok().map(|i| node.value(i).to_vec()))
    }

    /// Inserts a new key; [`BTreeError::DuplicateKey`] if present.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_entry(key, value)?;
        self.modify(key, WriteOp::Insert(value), Vec::new()).map(|_| ())
    }

    /// Inserts or replaces; returns whether the key existed.
    pub fn upsert(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.check_entry(key, value)?;
        self.modify(key, WriteOp::Upsert(value), Vec::new())
    }

    /// Replaces the value of an existing key; `false` if absent.
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.check_entry(key, value)?;
        self.modify(key, WriteOp::Update(value), Vec::new())
    }

    /// Removes a key; `false` if absent.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        self.modify(key, WriteOp::Delete, Vec::new())
    }

    /// [`Self::delete`], committing `extra` (exclusive guards of other
    /// pages of the same buffer pool, changed by the caller) in the same
    /// group, so after a crash both or neither happened. The change
    /// buffer's merge: the leaf that received the buffered entries and the
    /// deletion of their record. `extra` is committed even when `key` is
    /// absent; if anything fails it is dropped (its pages restored).
    pub fn delete_with<'t>(&'t self, key: &[u8], extra: Vec<S::Guard<'t>>) -> Result<bool> {
        self.modify(key, WriteOp::Delete, extra)
    }

    /// Descends with shared latch coupling to the lowest internal node on
    /// `key`'s path and calls `at_leaf` with the number of the leaf `key`
    /// belongs to, holding that node shared: no split or removal can change
    /// which leaf holds `key` until `at_leaf` returns. `None` (and
    /// `at_leaf` not called) if the root is a leaf.
    pub fn with_leaf_parent<T>(&self, key: &[u8], at_leaf: impl FnOnce(u32) -> T) -> Result<Option<T>> {
        let mut guard = self.store.latch(self.root, Latch::Shared)?;
        checked(&guard, self.root, None)?;
        for _ in 0..MAX_DEPTH {
            let node = Node::new(&*guard);
            if node.is_leaf() {
                return Ok(None);
            }
            let level = node.level();
            let child_no = node.child_at(node.child_index_for(key));
            if level == 1 {
                let result = at_leaf(child_no);
                drop(guard);
                return Ok(Some(result));
            }
            let child = self.store.latch(child_no, Latch::Shared)?;
            checked(&child, child_no, Some(level - 1))?;
            guard = child;
        }
        Err(corrupt(self.root, "descent deeper than 256 levels"))
    }

    /// True if the tree holds no entry (its root is an empty leaf).
    pub fn is_empty(&self) -> Result<bool> {
        let root = self.store.latch(self.root, Latch::Shared)?;
        let node = checked(&root, self.root, None)?;
        Ok(node.is_leaf() && node.count() == 0)
    }

    /// Bulk load's switch: if the tree is still empty, replaces its root
    /// by `image` (a whole node payload whose children, if any, are
    /// already durable in the store's file) and frees `free_page` in the
    /// same group, so after a crash either both happened or neither.
    /// Counts as an SMO for cursors. [`BTreeError::NotEmpty`] if an entry
    /// was inserted meanwhile; the tree is then unchanged.
    pub fn install_root(&self, image: &[u8], free_page: Option<u32>) -> Result<Lsn> {
        if image.len() != self.store.payload_len() {
            return Err(corrupt(
                self.root,
                format!(
                    "root image of {} bytes for a {}-byte payload",
                    image.len(),
                    self.store.payload_len()
                ),
            ));
        }
        Node::new(image)
            .validate()
            .map_err(|reason| corrupt(self.root, format!("root image: {reason}")))?;
        let mut root = self.store.latch(self.root, Latch::Exclusive)?;
        let node = checked(&root, self.root, None)?;
        if !node.is_leaf() || node.count() > 0 {
            return Err(BTreeError::NotEmpty);
        }
        let _smo = SmoInProgress::begin(&self.smo_started, &self.smo_finished);
        root.bytes_mut().copy_from_slice(image);
        let mut group = vec![root];
        if let Some(page_no) = free_page {
            let mut guard = self.store.latch(page_no, Latch::Exclusive)?;
            self.store.free(&mut guard)?;
            group.push(guard);
        }
        Ok(self.store.commit(group)?)
    }

    /// Entries with keys within `(start, end)`, in `direction`.
    pub fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>, direction: Direction) -> Range<'_, S> {
        Range::new(self, start.map(<[u8]>::to_vec), end.map(<[u8]>::to_vec), direction)
    }

    /// Entries whose key starts with `prefix`, in `direction`.
    pub fn scan_prefix(&self, prefix: &[u8], direction: Direction) -> Range<'_, S> {
        let (start, end) = prefix_bounds(prefix);
        Range::new(self, start, end, direction)
    }

    /// Shared latch coupling from the root to the leaf `choose` leads to.
    fn descend_shared(&self, choose: impl Fn(&Node<&[u8]>) -> usize) -> Result<S::Guard<'_>> {
        let mut guard = self.store.latch(self.root, Latch::Shared)?;
        checked(&guard, self.root, None)?;
        for _ in 0..MAX_DEPTH {
            let node = Node::new(&*guard);
            if node.is_leaf() {
                return Ok(guard);
            }
            let level = node.level();
            let child_no = node.child_at(choose(&node));
            let child = self.store.latch(child_no, Latch::Shared)?;
            checked(&child, child_no, Some(level - 1))?;
            guard = child;
        }
        Err(corrupt(self.root, "descent deeper than 256 levels"))
    }

    /// Optimistic write descent: shared coupling, the leaf exclusive. `None`
    /// if the root stopped being a leaf between its shared and exclusive latch.
    fn latch_leaf_for_write(&self, key: &[u8]) -> Result<Option<S::Guard<'_>>> {
        let root = self.store.latch(self.root, Latch::Shared)?;
        if checked(&root, self.root, None)?.is_leaf() {
            drop(root);
            let root = self.store.latch(self.root, Latch::Exclusive)?;
            return Ok(checked(&root, self.root, None)?.is_leaf().then_some(root));
        }
        let mut guard = root;
        for _ in 0..MAX_DEPTH {
            let node = Node::new(&*guard);
            let level = node.level();
            let child_no = node.child_at(node.child_index_for(key));
            let latch = if level == 1 { Latch::Exclusive } else { Latch::Shared };
            let child = self.store.latch(child_no, latch)?;
            checked(&child, child_no, Some(level - 1))?;
            guard = child;
            if level == 1 {
                return Ok(Some(guard));
            }
        }
        Err(corrupt(self.root, "descent deeper than 256 levels"))
    }

    /// Every write: optimistic on the leaf alone, else pessimistic. `extra`
    /// joins whichever group commits (see [`Self::delete_with`]).
    fn modify<'t>(&'t self, key: &[u8], op: WriteOp<'_>, mut extra: Vec<S::Guard<'t>>) -> Result<bool> {
        if let Some(mut leaf) = self.latch_leaf_for_write(key)? {
            let is_root = leaf.page_no() == self.root;
            match classify(&leaf, key, op, is_root)? {
                Step::Unchanged(existed) => {
                    drop(leaf);
                    if !extra.is_empty() {
                        self.store.commit(extra)?;
                    }
                    return Ok(existed);
                }
                Step::Apply => {
                    let existed = apply(leaf.bytes_mut(), key, op);
                    extra.insert(0, leaf);
                    self.store.commit(extra)?;
                    return Ok(existed);
                }
                Step::NeedsSmo => drop(leaf),
            }
        }
        let root = self.store.latch(self.root, Latch::Exclusive)?;
        let smo = SmoInProgress::begin(&self.smo_started, &self.smo_finished);
        let result = self.modify_pessimistic(root, key, op, extra);
        drop(smo);
        result
    }

    /// Holds the whole path exclusive; every guard is committed or dropped
    /// (restored) before this returns.
    fn modify_pessimistic<'t>(
        &'t self,
        root: S::Guard<'t>,
        key: &[u8],
        op: WriteOp<'_>,
        mut extra: Vec<S::Guard<'t>>,
    ) -> Result<bool> {
        checked(&root, self.root, None)?;
        let mut path = vec![root];
        let mut child_idx = Vec::new();
        loop {
            let Some(last) = path.last() else {
                unreachable!("the path starts at the root")
            };
            let node = Node::new(&**last);
            if node.is_leaf() {
                break;
            }
            if path.len() > MAX_DEPTH {
                return Err(corrupt(self.root, "descent deeper than 256 levels"));
            }
            let level = node.level();
            let idx = node.child_index_for(key);
            let child_no = node.child_at(idx);
            let child = self.store.latch(child_no, Latch::Exclusive)?;
            checked(&child, child_no, Some(level - 1))?;
            child_idx.push(idx);
            path.push(child);
        }
        let is_root = path.len() == 1;
        let Some(leaf) = path.last_mut() else {
            unreachable!("the path starts at the root")
        };
        match classify(leaf, key, op, is_root)? {
            Step::Unchanged(existed) => {
                drop(path);
                if !extra.is_empty() {
                    self.store.commit(extra)?;
                }
                Ok(existed)
            }
            Step::Apply => {
                let existed = apply(leaf.bytes_mut(), key, op);
                let Some(leaf) = path.pop() else { unreachable!() };
                extra.insert(0, leaf);
                self.store.commit(extra)?;
                Ok(existed)
            }
            Step::NeedsSmo => match op {
                WriteOp::Delete => self.remove_leaf(path, &child_idx, extra).map(|()| true),
                WriteOp::Insert(v) | WriteOp::Upsert(v) | WriteOp::Update(v) => {
                    self.split_insert(path, &child_idx, key, v, extra)
                }
            },
        }
    }

    /// Splits the leaf at the end of `path` (and ancestors as needed) to hold
    /// `key -> value`; returns whether the key existed.
    fn split_insert<'t>(
        &'t self,
        mut path: Vec<S::Guard<'t>>,
        child_idx: &[usize],
        key: &[u8],
        value: &[u8],
        extra: Vec<S::Guard<'t>>,
    ) -> Result<bool> {
        let Some(leaf) = path.last() else {
            unreachable!("the path starts at the root")
        };
        let mut entries = Node::new(&**leaf).entries();
        let existed = match entries.binary_search_by(|(k, _)| k.as_slice().cmp(key)) {
            Ok(i) => {
                entries[i].1 = value.to_vec();
                true
            }
            Err(i) => {
                entries.insert(i, (key.to_vec(), value.to_vec()));
                false
            }
        };
        let mut touched = Vec::new();
        let mut j = path.len() - 1;
        loop {
            if j == 0 {
                self.raise_root(&mut path[0], &entries, &mut touched)?;
                break;
            }
            let (separator, right) = self.split_node(&mut path[j], &entries, &mut touched)?;
            j -= 1;
            let pos = child_idx[j];
            let parent = Node::new(&*path[j]);
            if parent.fits(separator.len(), 4) {
                Node::new(path[j].bytes_mut()).insert_at(pos, &separator, &right.to_le_bytes());
                break;
            }
            entries = parent.entries();
            entries.insert(pos, (separator, right.to_le_bytes().to_vec()));
        }
        path.extend(touched);
        path.extend(extra);
        self.store.commit(path)?;
        Ok(existed)
    }

    /// Root split: moves the root's contents to a new child, makes the root
    /// its parent one level up, then splits the child to hold `entries`.
    fn raise_root<'t>(
        &'t self,
        root: &mut S::Guard<'t>,
        entries: &[(Vec<u8>, Vec<u8>)],
        touched: &mut Vec<S::Guard<'t>>,
    ) -> Result<()> {
        let level = Node::new(&**root).level();
        let new_level = level
            .checked_add(1)
            .ok_or_else(|| corrupt(self.root, "tree taller than 255 levels"))?;
        let mut child = self.store.allocate()?;
        child.bytes_mut().copy_from_slice(root);
        let child_no = child.page_no();
        let split = self.split_node(&mut child, entries, touched);
        touched.push(child);
        let (separator, right) = split?;
        let mut root_node = Node::new(root.bytes_mut());
        root_node.init(NodeKind::Internal, new_level);
        root_node.set_leftmost(child_no);
        root_node.insert_at(0, &separator, &right.to_le_bytes());
        Ok(())
    }

    /// Rewrites `guard` with the left part of `entries` and a new right
    /// sibling with the rest; returns the separator and the new page.
    fn split_node<'t>(
        &'t self,
        guard: &mut S::Guard<'t>,
        entries: &[(Vec<u8>, Vec<u8>)],
        touched: &mut Vec<S::Guard<'t>>,
    ) -> Result<(Vec<u8>, u32)> {
        let page_no = guard.page_no();
        let node = Node::new(&**guard);
        let (is_leaf, level, old_next) = (node.is_leaf(), node.level(), node.next());
        let capacity = node.payload_len() - node::HEADER_LEN;
        let mut right = self.store.allocate()?;
        let right_no = right.page_no();
        let separator = if is_leaf {
            let s = leaf_split_point(entries, capacity, page_no)?;
            let mut left = Node::new(guard.bytes_mut());
            left.rebuild(&entries[..s]);
            left.set_next(right_no);
            let mut r = Node::new(right.bytes_mut());
            r.init(NodeKind::Leaf, 0);
            r.set_prev(page_no);
            r.set_next(old_next);
            r.rebuild(&entries[s..]);
            if old_next != NO_PAGE {
                let mut next = self.store.latch(old_next, Latch::Exclusive)?;
                checked(&next, old_next, Some(0))?;
                Node::new(next.bytes_mut()).set_prev(right_no);
                touched.push(next);
            }
            entries[s].0.clone()
        } else {
            let m = internal_split_point(entries, capacity, page_no)?;
            let up_child = child_from_value(&entries[m].1, page_no)?;
            Node::new(guard.bytes_mut()).rebuild(&entries[..m]);
            let mut r = Node::new(right.bytes_mut());
            r.init(NodeKind::Internal, level);
            r.set_leftmost(up_child);
            r.rebuild(&entries[m + 1..]);
            entries[m].0.clone()
        };
        touched.push(right);
        Ok((separator, right_no))
    }

    /// Deletes the only key of the non-root leaf at the end of `path`: unlinks
    /// and frees it, frees ancestors left childless, lowers the root if it is
    /// left with one child.
    fn remove_leaf<'t>(
        &'t self,
        mut path: Vec<S::Guard<'t>>,
        child_idx: &[usize],
        extra: Vec<S::Guard<'t>>,
    ) -> Result<()> {
        let mut touched = Vec::new();
        let last = path.len() - 1;
        let (leaf_no, prev, next) = {
            let leaf = Node::new(&*path[last]);
            (path[last].page_no(), leaf.prev(), leaf.next())
        };
        // Leftward latch while holding the leaf: safe because SMOs are
        // serialised and no other latch holder waits on a second latch.
        if prev != NO_PAGE {
            let mut guard = self.store.latch(prev, Latch::Exclusive)?;
            checked(&guard, prev, Some(0))?;
            if Node::new(&*guard).next() != leaf_no {
                return Err(corrupt(prev, format!("right sibling is not {leaf_no}")));
            }
            Node::new(guard.bytes_mut()).set_next(next);
            touched.push(guard);
        }
        if next != NO_PAGE {
            let mut guard = self.store.latch(next, Latch::Exclusive)?;
            checked(&guard, next, Some(0))?;
            Node::new(guard.bytes_mut()).set_prev(prev);
            touched.push(guard);
        }
        Node::new(path[last].bytes_mut()).remove_at(0);
        self.store.free(&mut path[last])?;
        // Remove freed children from their parents, upward.
        let mut j = last;
        let alive = loop {
            let parent_at = j - 1;
            let idx = child_idx[parent_at];
            let parent = Node::new(&*path[parent_at]);
            if parent.count() == 0 {
                if parent_at == 0 {
                    // The tree is now empty.
                    Node::new(path[0].bytes_mut()).init(NodeKind::Leaf, 0);
                    break 1;
                }
                self.store.free(&mut path[parent_at])?;
                j = parent_at;
                continue;
            }
            let mut parent = Node::new(path[parent_at].bytes_mut());
            if idx == 0 {
                let new_leftmost = parent.child_at(1);
                parent.set_leftmost(new_leftmost);
                parent.remove_at(0);
            } else {
                parent.remove_at(idx - 1);
            }
            break parent_at + 1;
        };
        // Root lowering: a root left with one child absorbs it (repeatedly).
        // Only possible when the root itself lost a child, so its remaining
        // child is off the descent path (but may be a leaf sibling latched
        // above, hence the look-up in `touched` before latching).
        if alive == 1 {
            for _ in 0..MAX_DEPTH {
                let root = Node::new(&*path[0]);
                if root.is_leaf() || root.count() > 0 {
                    break;
                }
                let (child_no, child_level) = (root.leftmost(), root.level() - 1);
                let mut child = match touched.iter().position(|g: &S::Guard<'t>| g.page_no() == child_no) {
                    Some(at) => touched.swap_remove(at),
                    None => self.store.latch(child_no, Latch::Exclusive)?,
                };
                checked(&child, child_no, Some(child_level))?;
                let image = child.to_vec();
                path[0].bytes_mut().copy_from_slice(&image);
                self.store.free(&mut child)?;
                touched.push(child);
            }
        }
        path.extend(touched);
        path.extend(extra);
        self.store.commit(path)?;
        Ok(())
    }

    /// Walks the whole tree under a shared root latch (which excludes SMOs)
    /// and verifies the module's invariants.
    pub fn check(&self) -> Result<TreeStats> {
        let root = self.store.latch(self.root, Latch::Shared)?;
        let root_node = checked(&root, self.root, None)?;
        let mut walk = Walk {
            visited: HashSet::new(),
            leaves: Vec::new(),
            last_key: None,
            stats: TreeStats::default(),
        };
        walk.stats.height = u32::from(root_node.level()) + 1;
        if !root_node.is_leaf() && root_node.count() == 0 {
            return Err(corrupt(self.root, "internal root without keys"));
        }
        self.check_node(&root, self.root, None, None, root_node.level(), &mut walk)?;
        let leaves = &walk.leaves;
        for (i, &(page_no, prev, next)) in leaves.iter().enumerate() {
            let want_prev = if i == 0 { NO_PAGE } else { leaves[i - 1].0 };
            let want_next = leaves.get(i + 1).map_or(NO_PAGE, |l| l.0);
            if prev != want_prev || next != want_next {
                return Err(corrupt(
                    page_no,
                    format!("sibling links ({prev}, {next}) where ({want_prev}, {want_next}) were expected"),
                ));
            }
        }
        Ok(walk.stats)
    }

    fn check_node(
        &self,
        bytes: &[u8],
        page_no: u32,
        low: Option<&[u8]>,
        high: Option<&[u8]>,
        level: u8,
        walk: &mut Walk,
    ) -> Result<()> {
        if !walk.visited.insert(page_no) {
            return Err(corrupt(page_no, "reached twice"));
        }
        let node = checked(bytes, page_no, Some(level))?;
        node.validate().map_err(|reason| corrupt(page_no, reason))?;
        let count = node.count();
        for i in 0..count {
            let key = node.key(i);
            if low.is_some_and(|low| key < low) || high.is_some_and(|high| key >= high) {
                return Err(corrupt(page_no, format!("key {i} outside the bounds its parent gives")));
            }
        }
        walk.stats.used_bytes += node.used_bytes() as u64;
        walk.stats.payload_bytes += node.payload_len() as u64;
        if node.is_leaf() {
            if count == 0 && page_no != self.root {
                return Err(corrupt(page_no, "empty non-root leaf"));
            }
            if count > 0 {
                if walk.last_key.as_deref().is_some_and(|last| last >= node.key(0)) {
                    return Err(corrupt(page_no, "first key not above the previous leaf's last key"));
                }
                walk.last_key = Some(node.key(count - 1).to_vec());
            }
            walk.stats.leaf_pages += 1;
            walk.stats.entries += count as u64;
            walk.leaves.push((page_no, node.prev(), node.next()));
            return Ok(());
        }
        walk.stats.internal_pages += 1;
        for idx in 0..=count {
            let child_no = node.child_at(idx);
            let child_low = if idx == 0 { low } else { Some(node.key(idx - 1)) };
            let child_high = if idx == count { high } else { Some(node.key(idx)) };
            let child = self.store.latch(child_no, Latch::Shared)?;
            self.check_node(&child, child_no, child_low, child_high, level - 1, walk)?;
        }
        Ok(())
    }
}

struct Walk {
    visited: HashSet<u32>,
    /// `(page, prev, next)` of each leaf in key order.
    leaves: Vec<(u32, u32, u32)>,
    last_key: Option<Vec<u8>>,
    stats: TreeStats,
}

/// A range cursor: yields entries within bounds in one direction, one leaf's
/// worth at a time, holding no latch between calls (see the module docs for
/// how it copes with concurrent splits).
pub struct Range<'t, S: PageStore> {
    tree: &'t BTree<S>,
    direction: Direction,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    buffered: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// Last key of the last leaf read, in scan order: everything up to it
    /// (inclusive) has been seen.
    resume: Option<Vec<u8>>,
    /// Sibling to read next and the SMO stamp under which it was read
    /// (`None` if an SMO was running); `None` before the first leaf.
    link: Option<(u32, Option<u64>)>,
    done: bool,
}

impl<'t, S: PageStore> Range<'t, S> {
    fn new(tree: &'t BTree<S>, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>, direction: Direction) -> Self {
        Self {
            tree,
            direction,
            start,
            end,
            buffered: VecDeque::new(),
            resume: None,
            link: None,
            done: false,
        }
    }

    fn after_start(&self, key: &[u8]) -> bool {
        match &self.start {
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
            Bound::Unbounded => true,
        }
    }

    fn before_end(&self, key: &[u8]) -> bool {
        match &self.end {
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// Seeks from the root to the leaf where the scan continues.
    fn seek(&self) -> Result<S::Guard<'t>> {
        let resume = self.resume.as_deref();
        match self.direction {
            Direction::Forward => {
                self.tree
                    .descend_shared(|node| match (resume, self.start.as_ref().map(Vec::as_slice)) {
                        (Some(k), _) | (None, Bound::Included(k) | Bound::Excluded(k)) => node.child_index_for(k),
                        (None, Bound::Unbounded) => 0,
                    })
            }
            Direction::Backward => {
                self.tree
                    .descend_shared(|node| match (resume, self.end.as_ref().map(Vec::as_slice)) {
                        (Some(k), _) | (None, Bound::Excluded(k)) => node.child_index_before(k),
                        (None, Bound::Included(k)) => node.child_index_for(k),
                        (None, Bound::Unbounded) => node.count(),
                    })
            }
        }
    }

    /// The sibling to read next, if no SMO ran since its link was read.
    fn follow_link(&self, page_no: u32, stamp: Option<u64>) -> Result<Option<S::Guard<'t>>> {
        let started = &self.tree.smo_started;
        let Some(stamp) = stamp else { return Ok(None) };
        if started.load(Ordering::SeqCst) != stamp {
            return Ok(None);
        }
        let guard = self.tree.store.latch(page_no, Latch::Shared)?;
        if started.load(Ordering::SeqCst) != stamp {
            return Ok(None);
        }
        checked(&guard, page_no, Some(0))?;
        Ok(Some(guard))
    }

    /// Reads the next leaf into the buffer (possibly nothing).
    fn fill(&mut self) -> Result<()> {
        let linked = match self.link {
            Some((page_no, seq)) => self.follow_link(page_no, seq)?,
            None => None,
        };
        let leaf = match linked {
            Some(leaf) => leaf,
            None => self.seek()?,
        };
        let seq = self.tree.smo_stamp();
        let node = Node::new(&*leaf);
        let count = node.count();
        let resume = self.resume.take();
        match self.direction {
            Direction::Forward => {
                for i in 0..count {
                    let key = node.key(i);
                    if resume.as_deref().is_some_and(|r| key <= r) || !self.after_start(key) {
                        continue;
                    }
                    if !self.before_end(key) {
                        self.done = true;
                        break;
                    }
                    self.buffered.push_back((key.to_vec(), node.value(i).to_vec()));
                }
                let last = (count > 0).then(|| node.key(count - 1));
                self.resume = match (resume, last) {
                    (Some(r), Some(l)) if l <= r.as_slice() => Some(r),
                    (r, l) => l.map(<[u8]>::to_vec).or(r),
                };
                self.link = Some((node.next(), seq));
                self.done |= node.next() == NO_PAGE;
            }
            Direction::Backward => {
                for i in (0..count).rev() {
                    let key = node.key(i);
                    if resume.as_deref().is_some_and(|r| key >= r) || !self.before_end(key) {
                        continue;
                    }
                    if !self.after_start(key) {
                        self.done = true;
                        break;
                    }
                    self.buffered.push_back((key.to_vec(), node.value(i).to_vec()));
                }
                let first = (count > 0).then(|| node.key(0));
                self.resume = match (resume, first) {
                    (Some(r), Some(f)) if f >= r.as_slice() => Some(r),
                    (r, f) => f.map(<[u8]>::to_vec).or(r),
                };
                self.link = Some((node.prev(), seq));
                self.done |= node.prev() == NO_PAGE;
            }
        }
        Ok(())
    }
}

impl<S: PageStore> Iterator for Range<'_, S> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.buffered.pop_front() {
                return Some(Ok(entry));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}
