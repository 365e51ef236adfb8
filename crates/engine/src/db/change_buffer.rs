//! The change buffer (InnoDB's insert buffer, paper `004`, issue #16): an
//! insert into or a delete from a non-unique secondary index whose target
//! leaf is not in the buffer pool is recorded in a separate B+tree instead
//! of reading the leaf, and applied to the leaf when anyone next latches
//! it, or by the background merger.
//!
//! **Layout.** One B+tree (pages typed [`PageType::ChangeBuffer`], root in
//! the catalog under `change_buffer`) with one record per leaf that has
//! buffered entries: key = the leaf's page number (big-endian), value = the
//! index id (u32 LE) then each operation as key length (u16 LE, its top
//! bit set for a delete), value length (u16 LE), key, value, in arrival
//! order (a merge applies them in that order, so an insert and a later
//! delete of one entry cancel). A record never exceeds the
//! tree's entry limit (a quarter page), so a leaf holds at most that much
//! buffered (InnoDB caps it with its free-space bits at 1/8..1/32 of a
//! page, `ibuf0ibuf.c` `IBUF_BITMAP_FREE`).
//!
//! **Never overflow a leaf, never empty one.** A merge must not split a
//! leaf or remove it: the leaf is changed under its own latch, with no
//! latch on its parent. So an insert is buffered only if the leaf's free
//! space is *known* and covers every insert buffered for it (deletes
//! buffered before it are not counted as freeing anything), and a delete
//! only if the leaf's entry count is known and exceeds the deletes
//! buffered for it, this one included ([`super::leaf_space`]: learned from
//! every latch and commit of a leaf through a secondary index's store and
//! from the bulk loader, kept across a clean close, unknown after a crash
//! until the leaf is read again; InnoDB keeps the free space in its bitmap
//! pages and infers the count from what it buffered, `ibuf_insert_low`).
//! A leaf with nothing known gets its changes directly.
//!
//! **Invariants.**
//! 1. A claim (buffered bytes for a leaf) exists only while the leaf's
//!    record exists in the tree; both change under the leaf's shard mutex.
//! 2. A leaf gains a claim only while it is not resident: the buffering
//!    thread sets the leaf's pending bit, then checks residency, both under
//!    the shard mutex; a thread that reads the leaf after that check sees
//!    the bit after its latch (the core's mutex orders the two) and merges.
//! 3. Hence a leaf latched through a secondary store, past the check of its
//!    pending bit, has no claim: merges never wait for a leaf someone holds
//!    past that check (the deadlock argument of `SharedStore::latch`).
//! 4. While a claim exists the key range of its leaf can only grow: the
//!    buffering thread holds the leaf's parent shared while it decides, and
//!    a split of the leaf needs the leaf (so a merge first).
//! 5. A merge commits the leaf's new entries and the deletion of its record
//!    in one redo group ([`BTree::delete_with`]): after a crash, both or
//!    neither. Claims and pending bits are rebuilt from the tree at open.
//!
//! **Lock order:** secondary-index latches -> shard mutex -> the leaf being
//! merged -> change-buffer tree latches. No one takes a secondary latch or
//! a shard while holding a change-buffer latch.
//!
//! **Deletes** (InnoDB's buffered purge, `IBUF_OP_DELETE`; this engine
//! deletes physically, so there is no delete-mark to buffer) come through
//! [`crate::db::Txn::delete_secondary_entry`], whose caller knows the
//! entry exists because it derived it from the row it holds locked, as
//! InnoDB's purge and delete-mark do: the leaf is not read to confirm it,
//! and the undo record holds the entry's value from the caller. A
//! buffered delete that finds no entry at merge removes nothing and is
//! counted (`merge_missing`).
//!
//! **Size.** At most `max_pct` % of the buffer pool in buffered bytes
//! (every operation counted at its entry's footprint,
//! `innodb_change_buffer_max_size`); past it changes go to their leaves.
//! The background merger reads pending leaves every second: 10 a second
//! (5 % of InnoDB's default `innodb_io_capacity` of 200, 5.6's
//! `ibuf_merge_in_background` `PCT_IO(5)`) while at most half full, rising
//! linearly to 200 a second when full.
//!
//! **Where it lives.** `on`: in the data file. `separate-device`: in its
//! own file, space 2 of the same buffer pool and redo log (`004` §3 put
//! the insert buffer on a ramdisk; point `dir` at `/dev/shm` for that, where
//! the file is read and written through the page cache since tmpfs has no
//! O_DIRECT), named after the data directory when it is elsewhere so two
//! databases never share one. A merge's redo group then spans both
//! files. The location is fixed while the buffer holds entries; an empty
//! buffer moves when the mode asks for the other place. `off` takes no new
//! entries but merges what a previous run buffered.
//!
//! **Not buffered:** changes to unique indexes (an insert must read the
//! leaf to check uniqueness, as in InnoDB), updates in place (a
//! non-unique index's entries are replaced by a delete and an insert), and
//! deletes through `delete` / `delete_secondary`, which report whether the
//! entry existed and so must read it.
//! With the change buffer active `insert_secondary` does not read the leaf
//! to reject a duplicate `(secondary, primary)` pair: the primary key's
//! uniqueness makes the pair new, as InnoDB assumes; a duplicate met at
//! merge is dropped and counted (`merge_duplicates`).

use std::collections::HashMap;
use std::fmt;
use std::ops::Bound;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::btree::node::{self, Node};
use crate::btree::{BTree, BTreeError, Direction};
use crate::buffer::{ShellGuard, SpaceStore};
use crate::page::{self, PageType};
use crate::page_store::{Latch, PageGuard, PageStore, StoreError};

use super::leaf_space::{LeafFill, LeafSpace};
use super::store::{Role, SharedStore};

/// Where secondary-index inserts go when their leaf is not in the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangeBufferMode {
    /// Every insert reads its leaf (InnoDB `innodb_change_buffering=none`).
    #[default]
    Off,
    /// Buffered in a B+tree in the data file (InnoDB's system tablespace).
    On,
    /// Buffered in a B+tree in a file of its own, on another device
    /// (`004` §3: the insert buffer on a ramdisk).
    SeparateDevice,
}

impl ChangeBufferMode {
    pub const NAMES: [&'static str; 3] = ["off", "on", "separate-device"];

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::On => "on",
            Self::SeparateDevice => "separate-device",
        }
    }
}

impl fmt::Display for ChangeBufferMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ChangeBufferMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Self::Off),
            "on" => Ok(Self::On),
            "separate-device" => Ok(Self::SeparateDevice),
            other => Err(format!(
                "unknown change-buffer mode {other:?}: expected one of {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// Default largest size of the change buffer, percent of the buffer pool
/// (`innodb_change_buffer_max_size`, MySQL 5.6+ default 25).
pub const DEFAULT_MAX_PCT: u8 = 25;
/// Largest accepted `max_pct` (InnoDB's limit is 50).
pub const MAX_MAX_PCT: u8 = 50;

/// The change buffer's options (part of `DbOptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeBufferOptions {
    pub mode: ChangeBufferMode,
    /// Largest size, percent of the buffer pool (1..=50).
    pub max_pct: u8,
    /// `SeparateDevice`: the directory of the change buffer's own file
    /// (`flushwise.ibuf`); `None`: beside the data file. Point it at a
    /// RAM-backed file system (`/dev/shm`) for `004`'s ramdisk.
    pub dir: Option<PathBuf>,
}

impl Default for ChangeBufferOptions {
    fn default() -> Self {
        Self {
            mode: ChangeBufferMode::Off,
            max_pct: DEFAULT_MAX_PCT,
            dir: None,
        }
    }
}

/// Cumulative counters and gauges of the change buffer since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangeBufferStats {
    /// Inserts recorded in the change buffer instead of their leaf.
    pub buffered_inserts: u64,
    /// Deletes recorded in the change buffer instead of their leaf.
    pub buffered_deletes: u64,
    /// Changes that wanted buffering but went to their leaf (leaf free
    /// space or entry count unknown or short, buffer full).
    pub buffer_refused: u64,
    /// Buffered operations applied to their leaf (inserts added, deletes
    /// that removed an entry).
    pub merged_entries: u64,
    /// Merges done when a user latched a leaf with buffered entries.
    pub merges_on_access: u64,
    /// Merges done by the background merger (leaves it read for that).
    pub merges_background: u64,
    /// Leaves with buffered entries now.
    pub pending_pages: u64,
    /// Bytes of buffered entries now (their footprint in the leaves).
    pub pending_bytes: u64,
    /// Buffered inserts found already in their leaf at merge and dropped.
    pub merge_duplicates: u64,
    /// Buffered deletes whose entry was not in their leaf at merge.
    pub merge_missing: u64,
}

/// Rounds of "latch, find entries to merge, merge" before a latch gives up
/// (each round merges everything buffered; a second is rare, a third needs
/// a buffering thread to win the race again).
pub(crate) const MERGE_ROUNDS_MAX: u32 = 64;
/// The catalog key of the change buffer's root.
pub(crate) const CATALOG_KEY: &[u8] = b"change_buffer";
/// Mutexes the leaves are spread over (by page number).
const SHARDS: usize = 64;
/// Record header: the index id.
const RECORD_HEADER_LEN: usize = 4;
/// Entry header: key and value lengths.
const ENTRY_HEADER_LEN: usize = 4;
/// The key length's top bit: the operation is a delete.
const OP_DELETE_BIT: u16 = 1 << 15;
/// Background merge rate while at most half full, leaves per second.
const MERGE_PER_S_MIN: u64 = 10;
/// Background merge rate when full, leaves per second.
const MERGE_PER_S_MAX: u64 = 200;
const MERGER_PERIOD: Duration = Duration::from_secs(1);

/// A buffered operation on a leaf entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Insert,
    Delete,
}

/// What is buffered for one leaf (the sums its record's operations give).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Claim {
    index_id: u32,
    /// Bytes the buffered inserts will take in the leaf, slots included.
    footprint: u32,
    /// Buffered deletes.
    deletes: u32,
    /// Bytes counted against the size cap (every operation's entry
    /// footprint).
    size: u32,
    /// Length of the leaf's record in the tree.
    record_len: u32,
}

impl Claim {
    fn of_record(index_id: u32, ops: &Ops<'_>, record_len: usize) -> Self {
        let mut claim = Self {
            index_id,
            footprint: 0,
            deletes: 0,
            size: 0,
            record_len: record_len as u32,
        };
        for (op, key, value) in ops {
            let footprint = node::entry_footprint(key.len(), value.len()) as u32;
            claim.size += footprint;
            match op {
                Op::Insert => claim.footprint += footprint,
                Op::Delete => claim.deletes += 1,
            }
        }
        claim
    }
}

#[derive(Default)]
struct Counters {
    buffered_inserts: AtomicU64,
    buffered_deletes: AtomicU64,
    buffer_refused: AtomicU64,
    merged_entries: AtomicU64,
    merges_on_access: AtomicU64,
    merges_background: AtomicU64,
    merge_duplicates: AtomicU64,
    merge_missing: AtomicU64,
}

/// The open change buffer of a database.
pub(crate) struct ChangeBuffer {
    mode: ChangeBufferMode,
    tree: BTree<SharedStore>,
    data: Arc<SpaceStore>,
    max_bytes: u64,
    max_record_len: usize,
    /// Per data page: pending bit and known free space (shared with the
    /// secondary indexes' stores).
    leaves: Arc<LeafSpace>,
    shards: Box<[Mutex<HashMap<u32, Claim>>]>,
    total_bytes: AtomicU64,
    counters: Counters,
}

fn store_err(e: BTreeError) -> StoreError {
    match e {
        BTreeError::Store(e) => e,
        other => StoreError::Engine(format!("change buffer: {other}")),
    }
}

fn corrupt(page_no: u32, reason: impl Into<String>) -> BTreeError {
    BTreeError::Corrupt {
        page_no,
        reason: reason.into(),
    }
}

/// Buffered `(operation, key, value)` of one record, borrowed from it.
type Ops<'r> = Vec<(Op, &'r [u8], &'r [u8])>;

/// The operations of a record: `(index id, operations)`.
fn decode_record(page_no: u32, record: &[u8]) -> Result<(u32, Ops<'_>), BTreeError> {
    let bad = || corrupt(page_no, "change-buffer record is malformed");
    let id = record.get(..RECORD_HEADER_LEN).ok_or_else(bad)?;
    let index_id = u32::from_le_bytes([id[0], id[1], id[2], id[3]]);
    let mut entries = Vec::new();
    let mut at = RECORD_HEADER_LEN;
    while at < record.len() {
        let h = record.get(at..at + ENTRY_HEADER_LEN).ok_or_else(bad)?;
        let key_word = u16::from_le_bytes([h[0], h[1]]);
        let op = if key_word & OP_DELETE_BIT != 0 {
            Op::Delete
        } else {
            Op::Insert
        };
        let key_len = usize::from(key_word & !OP_DELETE_BIT);
        let value_len = usize::from(u16::from_le_bytes([h[2], h[3]]));
        at += ENTRY_HEADER_LEN;
        let key = record.get(at..at + key_len).ok_or_else(bad)?;
        at += key_len;
        let value = record.get(at..at + value_len).ok_or_else(bad)?;
        at += value_len;
        entries.push((op, key, value));
    }
    Ok((index_id, entries))
}

fn encode_entry(out: &mut Vec<u8>, op: Op, key: &[u8], value: &[u8]) {
    // Keys are at most a quarter page (`BTree::max_entry_len`), far below
    // the flag bit.
    debug_assert!(key.len() < usize::from(OP_DELETE_BIT));
    let flag = match op {
        Op::Insert => 0,
        Op::Delete => OP_DELETE_BIT,
    };
    out.extend_from_slice(&(key.len() as u16 | flag).to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

impl ChangeBuffer {
    /// Opens the change buffer whose root the catalog names, or creates it
    /// if the options ask for one and there is none; `None` if neither.
    /// Rebuilds the claims from the tree (a crash keeps the tree, not the
    /// memory).
    pub(crate) fn open(
        store: &SharedStore,
        own_file: Option<&SharedStore>,
        leaves: &Arc<LeafSpace>,
        catalog: &BTree<SharedStore>,
        options: &ChangeBufferOptions,
        pool_bytes: u64,
    ) -> Result<Option<Arc<Self>>, BTreeError> {
        // Where the tree is to live: the data space (`on`), its own file
        // (`separate-device`), or where it is (`off`).
        let space_store = |space: u32| -> Result<SharedStore, BTreeError> {
            let s = if space == super::DATA_SPACE_ID {
                Some(store)
            } else {
                own_file.filter(|s| s.0.space_id() == space)
            };
            s.map(|s| s.with_role(Role::ChangeBufferTree)).ok_or_else(|| {
                corrupt(
                    catalog.root_page_no(),
                    format!(
                        "the change buffer lives in its own file (space {space}), which was not found: open with --change-buffer-dir where it is"
                    ),
                )
            })
        };
        let wanted = match options.mode {
            ChangeBufferMode::SeparateDevice => Some(super::CHANGE_BUFFER_SPACE_ID),
            ChangeBufferMode::On => Some(super::DATA_SPACE_ID),
            ChangeBufferMode::Off => None,
        };
        let create = |space: u32| -> Result<BTree<SharedStore>, BTreeError> {
            let tree = BTree::create(space_store(space)?)?;
            let mut value = tree.root_page_no().to_le_bytes().to_vec();
            value.extend_from_slice(&space.to_le_bytes());
            catalog.upsert(CATALOG_KEY, &value)?;
            Ok(tree)
        };
        let tree = match catalog.get(CATALOG_KEY)? {
            Some(v) => {
                let bad = || corrupt(catalog.root_page_no(), "change-buffer catalog entry is malformed");
                let root = u32::from_le_bytes(v.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
                let space = match v.get(4..8) {
                    Some(b) => u32::from_le_bytes(b.try_into().map_err(|_| bad())?),
                    None => super::DATA_SPACE_ID,
                };
                let tree = BTree::open(space_store(space)?, root)?;
                match wanted {
                    Some(w) if w != space => {
                        if !tree.is_empty()? {
                            return Err(corrupt(
                                root,
                                format!(
                                    "the change buffer holds entries in {}; open with --change-buffer {} (or off) until they are merged",
                                    if space == super::DATA_SPACE_ID { "the data file" } else { "its own file" },
                                    if space == super::DATA_SPACE_ID { "on" } else { "separate-device" },
                                ),
                            ));
                        }
                        // Empty: move it. New tree and catalog first; a crash
                        // before the old root is freed leaks that one page.
                        let moved = create(w)?;
                        let old = tree.into_store();
                        let mut guard = old.latch(root, Latch::Exclusive)?;
                        old.free(&mut guard)?;
                        old.commit(vec![guard])?;
                        moved
                    }
                    _ => tree,
                }
            }
            None => match wanted {
                None => return Ok(None),
                Some(w) => create(w)?,
            },
        };
        let max_record_len = tree.max_entry_len() - 4;
        let cb = Self {
            mode: options.mode,
            max_bytes: pool_bytes / 100 * u64::from(options.max_pct),
            max_record_len,
            tree,
            data: Arc::clone(&store.0),
            leaves: Arc::clone(leaves),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            total_bytes: AtomicU64::new(0),
            counters: Counters::default(),
        };
        for entry in cb.tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward) {
            let (key, record) = entry?;
            let page_no = u32::from_be_bytes(
                key.as_slice()
                    .try_into()
                    .map_err(|_| corrupt(cb.tree.root_page_no(), "change-buffer key is not a page number"))?,
            );
            let (index_id, ops) = decode_record(page_no, &record)?;
            let claim = Claim::of_record(index_id, &ops, record.len());
            cb.shard(page_no).lock().insert(page_no, claim);
            cb.total_bytes.fetch_add(u64::from(claim.size), Ordering::SeqCst);
            cb.set_pending(page_no);
        }
        Ok(Some(Arc::new(cb)))
    }

    /// Checks the tree's shape and that every record decodes and matches
    /// its claim.
    pub(crate) fn check(&self) -> Result<(), BTreeError> {
        self.tree.check()?;
        for entry in self.tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward) {
            let (key, record) = entry?;
            let page_no = <[u8; 4]>::try_from(key.as_slice())
                .map(u32::from_be_bytes)
                .map_err(|_| corrupt(self.tree.root_page_no(), "change-buffer key is not a page number"))?;
            let (index_id, ops) = decode_record(page_no, &record)?;
            let expected = Claim::of_record(index_id, &ops, record.len());
            if self.shard(page_no).lock().get(&page_no) != Some(&expected) {
                return Err(corrupt(page_no, "change-buffer record without a matching claim"));
            }
        }
        Ok(())
    }

    pub(crate) fn mode(&self) -> ChangeBufferMode {
        self.mode
    }

    fn shard(&self, page_no: u32) -> &Mutex<HashMap<u32, Claim>> {
        &self.shards[page_no as usize % SHARDS]
    }

    fn set_pending(&self, page_no: u32) {
        self.leaves.set_pending(page_no);
    }

    fn clear_pending(&self, page_no: u32) {
        self.leaves.clear_pending(page_no);
    }

    /// The free bytes and entries of a B+tree leaf page (`None` for any
    /// other page).
    pub(crate) fn leaf_fill(guard: &ShellGuard<'_>) -> Option<LeafFill> {
        if page::peek_page_type_raw(guard.page_bytes()) != PageType::BTreeLeaf as u16 {
            return None;
        }
        let node = Node::new(&**guard);
        if node.validate_header().is_err() || !node.is_leaf() {
            return None;
        }
        Some(LeafFill {
            free_bytes: node.free_total() as u32,
            entries: node.count() as u32,
        })
    }

    /// Buffers `op` of `key -> value` for `tree` (the non-unique index
    /// `index_id`) if its leaf is not resident and what is known of it
    /// allows (room for an insert, an entry left after a delete); `false`:
    /// the caller changes the tree itself.
    pub(crate) fn try_buffer(
        &self,
        op: Op,
        index_id: u32,
        tree: &BTree<SharedStore>,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, BTreeError> {
        if self.mode == ChangeBufferMode::Off {
            return Ok(false);
        }
        let Some(footprint) = self.under_cap(key, value) else {
            self.counters.buffer_refused.fetch_add(1, Ordering::Relaxed);
            return Ok(false);
        };
        let decided = tree.with_leaf_parent(key, |leaf_no| {
            self.buffer_for_leaf(op, index_id, leaf_no, key, value, footprint)
        })?;
        let buffered = decided.unwrap_or(Ok(false))?;
        let counter = match (buffered, op) {
            (true, Op::Insert) => &self.counters.buffered_inserts,
            (true, Op::Delete) => &self.counters.buffered_deletes,
            (false, _) => &self.counters.buffer_refused,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(buffered)
    }

    /// The entry's footprint if buffering it keeps the buffer within its
    /// size cap; `None` if it would not.
    fn under_cap(&self, key: &[u8], value: &[u8]) -> Option<u32> {
        let footprint = node::entry_footprint(key.len(), value.len()) as u32;
        (self.total_bytes.load(Ordering::SeqCst) + u64::from(footprint) <= self.max_bytes).then_some(footprint)
    }

    /// Whether `op` on the leaf, with `claim` buffered for it, may be
    /// buffered by what is known of the leaf (not its residency).
    fn admits(&self, op: Op, leaf_no: u32, claim: Option<Claim>, key: &[u8], value: &[u8], footprint: u32) -> bool {
        let Some(known) = self.leaves.known(leaf_no) else {
            return false;
        };
        let record_len =
            claim.map_or(RECORD_HEADER_LEN, |c| c.record_len as usize) + ENTRY_HEADER_LEN + key.len() + value.len();
        let fits = match op {
            Op::Insert => claim.map_or(0, |c| c.footprint) + footprint <= known.free_bytes,
            // Every buffered delete may remove an entry; buffered inserts
            // are not counted on (a duplicate is dropped at merge).
            Op::Delete => claim.map_or(0, |c| c.deletes) + 1 < known.entries,
        };
        fits && record_len <= self.max_record_len
    }

    /// Whether [`Self::try_buffer`] would buffer `op` now (a hint: the
    /// answer may change before the call; nothing is reserved).
    pub(crate) fn would_buffer(
        &self,
        op: Op,
        tree: &BTree<SharedStore>,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, BTreeError> {
        let Some(footprint) = self
            .under_cap(key, value)
            .filter(|_| self.mode != ChangeBufferMode::Off)
        else {
            return Ok(false);
        };
        let decided = tree.with_leaf_parent(key, |leaf_no| {
            let claim = self.shard(leaf_no).lock().get(&leaf_no).copied();
            !self.data.is_resident(leaf_no) && self.admits(op, leaf_no, claim, key, value, footprint)
        })?;
        Ok(decided.unwrap_or(false))
    }

    /// Counts a delete through [`Self::try_buffer`]'s refusal path that
    /// found no entry (the caller said it existed).
    pub(crate) fn note_missing_delete(&self) {
        self.counters.merge_missing.fetch_add(1, Ordering::Relaxed);
    }

    fn buffer_for_leaf(
        &self,
        op: Op,
        index_id: u32,
        leaf_no: u32,
        key: &[u8],
        value: &[u8],
        footprint: u32,
    ) -> Result<bool, BTreeError> {
        let mut shard = self.shard(leaf_no).lock();
        let claim = shard.get(&leaf_no).copied();
        // Invariant 2: the bit before the residency check.
        self.set_pending(leaf_no);
        let refuse = |this: &Self| {
            if claim.is_none() {
                this.clear_pending(leaf_no);
            }
            Ok(false)
        };
        if self.data.is_resident(leaf_no) {
            return refuse(self);
        }
        if !self.admits(op, leaf_no, claim, key, value, footprint) {
            return refuse(self);
        }
        let claimed = claim.map_or(0, |c| c.footprint);
        let deletes = claim.map_or(0, |c| c.deletes);
        let cb_key = leaf_no.to_be_bytes();
        let mut record = match claim {
            Some(c) => {
                if c.index_id != index_id {
                    return Err(corrupt(
                        leaf_no,
                        format!("buffered for index {} and now for index {index_id}", c.index_id),
                    ));
                }
                match self.tree.get(&cb_key)? {
                    Some(r) => r,
                    None => return Err(corrupt(leaf_no, "a claim without its change-buffer record")),
                }
            }
            None => index_id.to_le_bytes().to_vec(),
        };
        encode_entry(&mut record, op, key, value);
        if let Err(e) = self.tree.upsert(&cb_key, &record) {
            refuse(self)?;
            return Err(e);
        }
        let (added_footprint, added_deletes) = match op {
            Op::Insert => (footprint, 0),
            Op::Delete => (0, 1),
        };
        shard.insert(
            leaf_no,
            Claim {
                index_id,
                footprint: claimed + added_footprint,
                deletes: deletes + added_deletes,
                size: claim.map_or(0, |c| c.size) + footprint,
                record_len: record.len() as u32,
            },
        );
        self.total_bytes.fetch_add(u64::from(footprint), Ordering::SeqCst);
        Ok(true)
    }

    /// Applies the page's buffered operations, if any, and deletes its
    /// record, in one redo group. The caller holds no latch on the page.
    pub(crate) fn merge(&self, space: &SpaceStore, page_no: u32, background: bool) -> Result<(), StoreError> {
        // The redo free check may wait for the page cleaner: never under
        // the shard (see the lock order).
        space.check_redo_space()?;
        let mut shard = self.shard(page_no).lock();
        let Some(claim) = shard.get(&page_no).copied() else {
            self.clear_pending(page_no);
            return Ok(());
        };
        let mut leaf = space.latch_unchecked(page_no, Latch::Exclusive)?;
        let cb_key = page_no.to_be_bytes();
        let record = self
            .tree
            .get(&cb_key)
            .map_err(store_err)?
            .ok_or_else(|| store_err(corrupt(page_no, "a claim without its change-buffer record")))?;
        let (index_id, ops) = decode_record(page_no, &record).map_err(store_err)?;
        if index_id != claim.index_id {
            return Err(store_err(corrupt(page_no, "change-buffer record names another index")));
        }
        let (mut duplicates, mut missing) = (0u64, 0u64);
        let fill_after = {
            let mut node = Node::new(leaf.bytes_mut());
            node.validate_header().map_err(|r| store_err(corrupt(page_no, r)))?;
            if !node.is_leaf() {
                return Err(store_err(corrupt(
                    page_no,
                    "buffered entries for a page that is not a leaf",
                )));
            }
            for (op, key, value) in &ops {
                match (op, node.search(key)) {
                    (Op::Insert, Ok(_)) => duplicates += 1,
                    (Op::Insert, Err(i)) => {
                        if !node.fits(key.len(), value.len()) {
                            return Err(store_err(corrupt(
                                page_no,
                                "buffered entries do not fit in their leaf (free space was overstated)",
                            )));
                        }
                        node.insert_at(i, key, value);
                    }
                    (Op::Delete, Ok(i)) => node.remove_at(i),
                    (Op::Delete, Err(_)) => missing += 1,
                }
            }
            if node.count() == 0 {
                // Dropping the guard unapplied puts the page back.
                return Err(store_err(corrupt(
                    page_no,
                    "buffered deletes would empty their leaf (its entry count was overstated)",
                )));
            }
            LeafFill {
                free_bytes: node.free_total() as u32,
                entries: node.count() as u32,
            }
        };
        self.tree.delete_with(&cb_key, vec![leaf]).map_err(store_err)?;
        shard.remove(&page_no);
        self.total_bytes.fetch_sub(u64::from(claim.size), Ordering::SeqCst);
        self.clear_pending(page_no);
        self.leaves.note(page_no, Some(fill_after));
        drop(shard);
        let c = &self.counters;
        c.merged_entries
            .fetch_add(ops.len() as u64 - duplicates - missing, Ordering::Relaxed);
        c.merge_duplicates.fetch_add(duplicates, Ordering::Relaxed);
        c.merge_missing.fetch_add(missing, Ordering::Relaxed);
        if background {
            c.merges_background.fetch_add(1, Ordering::Relaxed);
        } else {
            c.merges_on_access.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Merges up to `n` leaves, in page order from `cursor` (wrapping);
    /// returns how many it merged and where to go on.
    fn merge_some(&self, n: u64, cursor: u32) -> Result<(u64, u32), StoreError> {
        let mut pages: Vec<u32> = Vec::new();
        for from in [Bound::Excluded(cursor.to_be_bytes()), Bound::Unbounded] {
            let from = match &from {
                Bound::Excluded(k) => Bound::Excluded(&k[..]),
                _ => Bound::Unbounded,
            };
            for entry in self.tree.range(from, Bound::Unbounded, Direction::Forward) {
                if pages.len() as u64 >= n {
                    break;
                }
                let (key, _) = entry.map_err(store_err)?;
                if let Ok(b) = <[u8; 4]>::try_from(key.as_slice()) {
                    let p = u32::from_be_bytes(b);
                    if !pages.contains(&p) {
                        pages.push(p);
                    }
                }
            }
            if pages.len() as u64 >= n {
                break;
            }
        }
        let mut merged = 0;
        for &page_no in &pages {
            // Read the leaf first, outside any shard, then merge it.
            drop(self.data.latch_unchecked(page_no, Latch::Shared)?);
            if self.shard(page_no).lock().contains_key(&page_no) {
                self.merge(&self.data, page_no, true)?;
                merged += 1;
            }
        }
        Ok((merged, pages.last().copied().unwrap_or(0)))
    }

    /// Leaves the background merger reads per second now.
    fn merge_rate_per_s(&self) -> u64 {
        if self.max_bytes == 0 {
            return MERGE_PER_S_MIN;
        }
        let fill = self.total_bytes.load(Ordering::SeqCst) as f64 / self.max_bytes as f64;
        if fill <= 0.5 {
            MERGE_PER_S_MIN
        } else {
            let extra = (fill.min(1.0) - 0.5) / 0.5 * (MERGE_PER_S_MAX - MERGE_PER_S_MIN) as f64;
            MERGE_PER_S_MIN + extra.round() as u64
        }
    }

    pub(crate) fn stats(&self) -> ChangeBufferStats {
        let c = &self.counters;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ChangeBufferStats {
            buffered_inserts: r(&c.buffered_inserts),
            buffered_deletes: r(&c.buffered_deletes),
            buffer_refused: r(&c.buffer_refused),
            merged_entries: r(&c.merged_entries),
            merges_on_access: r(&c.merges_on_access),
            merges_background: r(&c.merges_background),
            pending_pages: self.shards.iter().map(|s| s.lock().len() as u64).sum(),
            pending_bytes: self.total_bytes.load(Ordering::SeqCst),
            merge_duplicates: r(&c.merge_duplicates),
            merge_missing: r(&c.merge_missing),
        }
    }
}

/// The background merger thread; stopped (and joined) on drop.
pub(crate) struct Merger {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Merger {
    pub(crate) fn start(cb: Arc<ChangeBuffer>) -> std::io::Result<Self> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("flushwise-ibuf-merge".into())
                .spawn(move || {
                    let mut cursor = 0u32;
                    loop {
                        {
                            let (lock, cv) = &*stop;
                            let mut stopped = lock.lock();
                            if !*stopped {
                                cv.wait_for(&mut stopped, MERGER_PERIOD);
                            }
                            if *stopped {
                                return;
                            }
                        }
                        match cb.merge_some(cb.merge_rate_per_s(), cursor) {
                            Ok((_, next)) => cursor = next,
                            // The shell is poisoned or the disk failed: users
                            // get the error on their own next access.
                            Err(_) => return,
                        }
                    }
                })?
        };
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    pub(crate) fn stop(&mut self) {
        {
            let (lock, cv) = &*self.stop;
            *lock.lock() = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.stop();
    }
}
