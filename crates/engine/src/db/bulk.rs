//! Bulk loading of an empty index from rows in key order
//! ([`Database::load_sorted`](super::Database::load_sorted)), after InnoDB's
//! sorted index build (`btr0bulk.cc`), which also writes page contents
//! without redo.
//!
//! # What a load does
//! 1. Checks the index is empty.
//! 2. Builds the tree bottom-up: leaves are filled in key order to the fill
//!    target ([`LoadOptions::fill_factor_pct`]) and linked, then each
//!    internal level is built over the first keys of the level below, until
//!    one node is left: the *root image*. Pages are encoded, stamped with
//!    the log head at the start of the load and sealed on the loader's own
//!    thread, holding no lock shared with other loads or transactions.
//! 3. Writes the pages in runs of [`RUN_PAGES`] straight to the data file
//!    (no buffer pool, no redo, no doublewrite), into *extents*: fresh pages
//!    appended to the file ([`SpaceStore::reserve_extent`]) that no frame
//!    holds and no free set lists, so concurrent splits of other indexes
//!    never get them.
//! 4. Fsyncs the data file, then *switches*: one mini-transaction copies
//!    the root image into the index's (stable) root page and frees the
//!    journal page ([`BTree::install_root`]), and the log is made durable
//!    up to it. The catalog does not change: the root page number is stable.
//!
//! # Crash atomicity: the journal
//! Before the first page of an extent is written, the extent is recorded in
//! the load's *journal*, a `LoadJournal` page changed through the pool
//! (logged), and the log is fsynced. The switch frees the journal in the
//! same redo group that installs the root. So after a crash:
//! - before the switch is durable, the root is still the empty leaf and the
//!   journal exists (from the redo or the page): recovery finds it in the
//!   free-set scan, keeps its extents out of the free set, accepts a torn
//!   page inside them (only the loader writes there, and nothing reaches
//!   it), and frees every extent page through the pool (logged
//!   `PageInit(Free)`, written by the cleaner through the doublewrite
//!   buffer, flushed and fsynced before the journal itself is freed);
//! - after it, every loaded page was complete on disk before the switch
//!   was logged, and the journal is gone.
//!
//! # Why recovery never overwrites loaded pages
//! Extent pages are past the end of the file when reserved, so no redo
//! record before the switch names them. Every record after the switch that
//! changes a loaded page ends above the switch's LSN, hence above the stamp
//! (the log head at the start of the load): the page-LSN test applies it to
//! the loaded image and skips it once the page was written back. Loaded
//! pages are not dirty in the pool, so the checkpoint is not held back by
//! them and needs nothing from them: they are durable before the switch.
//!
//! # Invariants
//! 1. A loader page is written only inside an extent whose journal entry is
//!    durable, and only while no frame holds it (checked per run).
//! 2. The switch is logged only after the data file was fsynced.
//! 3. The root changes only from an empty leaf, under its exclusive latch.
//! 4. Extent pages join the free set only when they will never be written
//!    by this load again: unused ones after the switch, written ones after
//!    their reclaim committed.
//!
//! Limits: one journal page holds `(payload - 12) / 8` extents, extents
//! double from [`EXTENT_PAGES_MIN`] to [`EXTENT_PAGES_MAX`] pages (at 16 KiB
//! pages over 100 GiB per load). Keys are not shortened in internal nodes
//! (no suffix truncation). A non-root internal node may end up with a
//! single child when the last two nodes of a level cannot be rebalanced
//! (huge keys); the tree code accepts such nodes.

use std::time::{Duration, Instant};

use flushwise_core::Lsn;

use super::leaf_space::LeafFill;
use super::{DbError, Index, Result};
use crate::btree::node::{self, Node, NodeKind, NO_PAGE};
use crate::btree::BTreeError;
use crate::buffer::SpaceStore;
use crate::page::{self, PageType};
use crate::page_store::{Latch, PageGuard, PageStore};
use crate::redo::RedoLog;
use crate::storage::{AlignedBuf, Tablespace};

/// Pages per write call (1 MiB at 16 KiB pages).
pub const RUN_PAGES: usize = 64;
/// First extent of a load: as much as the store's own extension step.
pub const EXTENT_PAGES_MIN: u32 = crate::buffer::space_store::EXTEND_CHUNK_PAGES;
/// Extents double up to this (64 MiB at 16 KiB pages): few journal fsyncs
/// per load, and a bounded tail of reserved but unused pages.
pub const EXTENT_PAGES_MAX: u32 = 4096;
/// `innodb_fill_factor`'s default.
pub const FILL_FACTOR_PCT_DEFAULT: u8 = 100;
/// Smallest fill factor accepted: a half-full node still takes any entry
/// (entries are at most a quarter of the payload).
pub const FILL_FACTOR_PCT_MIN: u8 = 50;

/// `b"FWBL"` read as a little-endian u32: a journal payload's first word.
const JOURNAL_MAGIC: u32 = u32::from_le_bytes(*b"FWBL");
const JOURNAL_HEADER_LEN: usize = 12;
const JOURNAL_EXTENT_LEN: usize = 8;

/// How a load fills pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Percent of each page filled, as `innodb_fill_factor`
    /// ([`FILL_FACTOR_PCT_MIN`]`..=100`). At 100, InnoDB still leaves 1/16
    /// of a clustered-index page free for later updates and inserts
    /// (`PageBulk::init`, `dict_index_get_space_reserve`); so do we, on
    /// every level.
    pub fill_factor_pct: u8,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            fill_factor_pct: FILL_FACTOR_PCT_DEFAULT,
        }
    }
}

impl LoadOptions {
    /// Bytes of slots and cells a node of `payload_len` bytes is filled to.
    fn fill_bytes(&self, payload_len: usize) -> usize {
        let capacity = payload_len - node::HEADER_LEN;
        let reserve = if self.fill_factor_pct >= 100 {
            payload_len / 16
        } else {
            payload_len * usize::from(100 - self.fill_factor_pct) / 100
        };
        capacity.saturating_sub(reserve)
    }
}

/// What a load did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    pub rows: u64,
    /// Pages of the new tree, its root included.
    pub pages: u64,
    /// Key + value bytes loaded.
    pub bytes: u64,
    pub leaf_pages: u64,
    pub internal_pages: u64,
    /// Levels, leaves included (1: the root is the only leaf).
    pub height: u32,
    /// Extents reserved (each journaled with one log fsync).
    pub extents: u64,
    /// Wall time of the whole load.
    pub elapsed: Duration,
    /// Of which: writing pages (write calls) and the data-file fsync
    /// before the switch.
    pub write_elapsed: Duration,
    pub sync_elapsed: Duration,
}

impl LoadReport {
    pub fn rows_per_sec(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Where a test wants the load to stop, as if the process died there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopAt {
    Never,
    /// Every page written and fsynced, the switch not logged, the journal
    /// left in place.
    BeforeSwitch,
}

/// A load's journal as found at open: a load that never committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingLoad {
    pub journal: u32,
    pub index_id: u32,
    /// `(first page, pages)`.
    pub extents: Vec<(u32, u32)>,
}

impl PendingLoad {
    pub fn contains(&self, page_no: u32) -> bool {
        self.extents
            .iter()
            .any(|&(first, n)| page_no >= first && page_no - first < n)
    }
}

fn journal_capacity(payload_len: usize) -> usize {
    (payload_len - JOURNAL_HEADER_LEN) / JOURNAL_EXTENT_LEN
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn journal_error(ts: &Tablespace, page_no: u32, reason: impl Into<String>) -> DbError {
    DbError::LoadJournal {
        path: ts.path().to_path_buf(),
        page_no,
        reason: reason.into(),
    }
}

fn store_error(e: crate::page_store::StoreError) -> DbError {
    DbError::Index {
        index: "bulk load".into(),
        source: BTreeError::Store(e),
    }
}

/// Reads the journal in page `page_no`.
pub(crate) fn read_journal(store: &SpaceStore, page_no: u32) -> Result<PendingLoad> {
    let ts = store.tablespace();
    let guard = store.latch(page_no, Latch::Shared).map_err(store_error)?;
    let b: &[u8] = &guard;
    if read_u32(b, 0) != JOURNAL_MAGIC {
        return Err(journal_error(ts, page_no, "bad magic"));
    }
    let index_id = read_u32(b, 4);
    let count = read_u32(b, 8) as usize;
    if count > journal_capacity(b.len()) {
        return Err(journal_error(ts, page_no, format!("{count} extents exceed the page")));
    }
    let extents = (0..count)
        .map(|i| {
            let at = JOURNAL_HEADER_LEN + i * JOURNAL_EXTENT_LEN;
            (read_u32(b, at), read_u32(b, at + 4))
        })
        .collect();
    Ok(PendingLoad {
        journal: page_no,
        index_id,
        extents,
    })
}

/// The loads that never committed, after redo (from the free-set scan).
/// Their extents are taken out of the free set until [`reclaim`].
pub(crate) fn pending_loads(store: &SpaceStore) -> Result<Vec<PendingLoad>> {
    let mut loads = Vec::new();
    for page_no in store.load_journals()? {
        let load = read_journal(store, page_no)?;
        let page_count = store.tablespace().page_count();
        for &(first, n) in &load.extents {
            store.withhold(first.min(page_count)..first.saturating_add(n).min(page_count));
        }
        loads.push(load);
    }
    Ok(loads)
}

/// Frees every page of `load`'s extents and then its journal. At open
/// (`pages_may_be_torn`) the freed pages are flushed and fsynced before the
/// journal goes, because their images on disk may be torn; after a failed
/// load in this process they are complete (the caller fsynced them), so the
/// logged `PageInit(Free)` is enough. Returns the pages freed.
pub(crate) fn reclaim(store: &SpaceStore, redo: &RedoLog, load: &PendingLoad, pages_may_be_torn: bool) -> Result<u64> {
    let ts = store.tablespace();
    let page_count = ts.page_count();
    // Each guard fixes a frame: leave most of the pool to everyone else.
    let chunk = (store.shell().config().frames as usize / 8).clamp(1, 256);
    let mut freed = 0u64;
    let mut group = Vec::with_capacity(chunk);
    for &(first, n) in &load.extents {
        for page_no in first..first.saturating_add(n).min(page_count) {
            group.push(store.latch_to_free(page_no)?);
            if group.len() == chunk {
                freed += group.len() as u64;
                store.commit(std::mem::take(&mut group)).map_err(store_error)?;
            }
        }
    }
    freed += group.len() as u64;
    if !group.is_empty() {
        store.commit(group).map_err(store_error)?;
    }
    if pages_may_be_torn {
        store.shell().flush_all()?;
        ts.sync()?;
    }
    let mut journal = store.latch(load.journal, Latch::Exclusive).map_err(store_error)?;
    store.free(&mut journal).map_err(store_error)?;
    let lsn = store.commit(vec![journal]).map_err(store_error)?;
    redo.wait_durable(lsn)?;
    for &(first, n) in &load.extents {
        store.release_unused(first.min(page_count)..first.saturating_add(n).min(page_count));
    }
    Ok(freed)
}

/// Pages of the load: extents, the journal that lists them, the write run.
struct PageSink<'a> {
    store: &'a SpaceStore,
    redo: &'a RedoLog,
    index_id: u32,
    stamp: Lsn,
    journal: Option<u32>,
    extents: Vec<(u32, u32)>,
    next: u32,
    end: u32,
    next_extent_pages: u32,
    run: AlignedBuf,
    run_first: u32,
    run_len: usize,
    written: u64,
    write_elapsed: Duration,
}

impl<'a> PageSink<'a> {
    fn new(store: &'a SpaceStore, redo: &'a RedoLog, index_id: u32) -> Self {
        let page_len = store.tablespace().page_size().bytes();
        Self {
            store,
            redo,
            index_id,
            stamp: redo.current_lsn(),
            journal: None,
            extents: Vec::new(),
            next: 0,
            end: 0,
            next_extent_pages: EXTENT_PAGES_MIN,
            run: AlignedBuf::zeroed(page_len * RUN_PAGES),
            run_first: 0,
            run_len: 0,
            written: 0,
            write_elapsed: Duration::ZERO,
        }
    }

    fn pending(&self) -> Option<PendingLoad> {
        self.journal.map(|journal| PendingLoad {
            journal,
            index_id: self.index_id,
            extents: self.extents.clone(),
        })
    }

    /// The next page number of the load, reserving an extent if needed.
    fn next_page(&mut self) -> Result<u32> {
        if self.next == self.end {
            self.reserve()?;
        }
        let page_no = self.next;
        self.next += 1;
        Ok(page_no)
    }

    fn create_journal(&mut self) -> Result<u32> {
        let mut guard = self.store.allocate_typed(PageType::LoadJournal)?;
        let b = guard.bytes_mut();
        b[0..4].copy_from_slice(&JOURNAL_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.index_id.to_le_bytes());
        b[8..12].copy_from_slice(&0u32.to_le_bytes());
        let page_no = guard.page_no();
        self.store.commit(vec![guard]).map_err(store_error)?;
        self.journal = Some(page_no);
        Ok(page_no)
    }

    /// Reserves the next extent and makes its journal entry durable before
    /// any page of it can be written (invariant 1).
    fn reserve(&mut self) -> Result<()> {
        let journal = match self.journal {
            Some(j) => j,
            None => self.create_journal()?,
        };
        let ts = self.store.tablespace();
        let slot = self.extents.len();
        if slot >= journal_capacity(ts.page_size().payload_len()) {
            return Err(journal_error(
                ts,
                journal,
                format!("the load needs more than {slot} extents; load it in parts"),
            ));
        }
        let pages = self.next_extent_pages;
        let first = self.store.reserve_extent(pages)?;
        // Recorded at once: the reclaim needs the extent listed even if the
        // journal update below fails.
        self.extents.push((first, pages));
        let mut guard = self.store.latch(journal, Latch::Exclusive).map_err(store_error)?;
        let b = guard.bytes_mut();
        let at = JOURNAL_HEADER_LEN + slot * JOURNAL_EXTENT_LEN;
        b[at..at + 4].copy_from_slice(&first.to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&pages.to_le_bytes());
        b[8..12].copy_from_slice(&(slot as u32 + 1).to_le_bytes());
        let lsn = self.store.commit(vec![guard]).map_err(store_error)?;
        self.redo.wait_durable(lsn)?;
        self.next = first;
        self.end = first + pages;
        self.next_extent_pages = (pages * 2).min(EXTENT_PAGES_MAX);
        Ok(())
    }

    /// Queues page `page_no` with node payload `payload`. Pages come in the
    /// order [`Self::next_page`] gave them out, so runs are sequential.
    fn write(&mut self, page_no: u32, page_type: PageType, payload: &[u8]) -> Result<()> {
        if self.run_len > 0 && (self.run_len == RUN_PAGES || page_no != self.run_first + self.run_len as u32) {
            self.flush()?;
        }
        if self.run_len == 0 {
            self.run_first = page_no;
        }
        let ts = self.store.tablespace();
        let page_len = ts.page_size().bytes();
        let slot = &mut self.run[self.run_len * page_len..(self.run_len + 1) * page_len];
        page::init(slot, ts.page_id(page_no), page_type, self.stamp);
        page::payload_mut(slot).copy_from_slice(payload);
        page::seal(slot);
        self.run_len += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.run_len == 0 {
            return Ok(());
        }
        let pages = self.run_first..self.run_first + self.run_len as u32;
        // Invariant 1: a frame holding one of these pages would later
        // overwrite it with a stale image. Reserved pages are never fixed,
        // so this is a programming error.
        assert!(
            self.store.none_resident(pages.clone()),
            "bulk load pages {pages:?} are in the buffer pool"
        );
        let started = Instant::now();
        self.store
            .tablespace()
            .write_sealed_run(self.run_first, &self.run, self.run_len)?;
        self.write_elapsed += started.elapsed();
        self.written += self.run_len as u64;
        self.run_len = 0;
        Ok(())
    }
}

/// The bottom-up tree builder of one load.
struct Builder<'a> {
    index: &'a Index,
    sink: PageSink<'a>,
    fill_bytes: usize,
    max_entry_len: usize,
    /// The leaf being filled (a node payload).
    leaf: Vec<u8>,
    /// Its page, once known (the first leaf gets one only if a second
    /// follows: a single leaf becomes the root image).
    leaf_page: Option<u32>,
    prev_leaf: u32,
    /// `(first key, page)` of every finished leaf.
    children: Vec<(Vec<u8>, u32)>,
    /// `(page, free bytes and entries)` of every leaf written (the change buffer's
    /// knowledge of a non-unique index's leaves, told once the load is in).
    leaf_free: Vec<(u32, LeafFill)>,
    prev_key: Option<Vec<u8>>,
    report: LoadReport,
}

impl<'a> Builder<'a> {
    fn new(index: &'a Index, store: &'a SpaceStore, redo: &'a RedoLog, options: LoadOptions) -> Self {
        let payload_len = store.tablespace().page_size().payload_len();
        let mut leaf = vec![0u8; payload_len];
        Node::new(&mut leaf[..]).init(NodeKind::Leaf, 0);
        Self {
            index,
            sink: PageSink::new(store, redo, index.id.0),
            fill_bytes: options.fill_bytes(payload_len),
            max_entry_len: node::max_entry_len(payload_len),
            leaf,
            leaf_page: None,
            prev_leaf: NO_PAGE,
            children: Vec::new(),
            leaf_free: Vec::new(),
            prev_key: None,
            report: LoadReport::default(),
        }
    }

    fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<()> {
        let position = self.report.rows;
        if let Some(prev) = &self.prev_key {
            match key.as_slice().cmp(prev.as_slice()) {
                std::cmp::Ordering::Greater => {}
                std::cmp::Ordering::Equal => {
                    return Err(DbError::LoadDuplicateKey {
                        index: self.index.name.clone(),
                        position,
                        key: String::from_utf8_lossy(&key).into_owned(),
                    })
                }
                std::cmp::Ordering::Less => {
                    return Err(DbError::LoadOutOfOrder {
                        index: self.index.name.clone(),
                        position,
                        key: String::from_utf8_lossy(&key).into_owned(),
                        previous: String::from_utf8_lossy(prev).into_owned(),
                    })
                }
            }
        }
        if key.len() + value.len() > self.max_entry_len {
            return Err(DbError::LoadRow {
                index: self.index.name.clone(),
                position,
                source: BTreeError::EntryTooLarge {
                    key_len: key.len(),
                    value_len: value.len(),
                    max_len: self.max_entry_len,
                },
            });
        }
        let footprint = node::entry_footprint(key.len(), value.len());
        let node = Node::new(&self.leaf[..]);
        if node.count() > 0 && node.used_bytes() + footprint > self.fill_bytes {
            self.next_leaf()?;
        }
        let mut node = Node::new(&mut self.leaf[..]);
        let count = node.count();
        node.insert_at(count, &key, &value);
        self.report.rows += 1;
        self.report.bytes += (key.len() + value.len()) as u64;
        self.prev_key = Some(key);
        Ok(())
    }

    /// Finishes the current leaf (it has a successor) and starts the next.
    fn next_leaf(&mut self) -> Result<()> {
        let page_no = match self.leaf_page {
            Some(p) => p,
            None => self.sink.next_page()?,
        };
        let next = self.sink.next_page()?;
        let mut node = Node::new(&mut self.leaf[..]);
        node.set_prev(self.prev_leaf);
        node.set_next(next);
        self.children.push((node.key(0).to_vec(), page_no));
        self.sink.write(page_no, PageType::BTreeLeaf, &self.leaf)?;
        self.leaf_free.push((page_no, leaf_fill(&self.leaf)));
        self.report.leaf_pages += 1;
        self.prev_leaf = page_no;
        self.leaf_page = Some(next);
        Node::new(&mut self.leaf[..]).init(NodeKind::Leaf, 0);
        Ok(())
    }

    /// Writes the last leaf and the internal levels; returns the root image.
    fn finish(&mut self) -> Result<Vec<u8>> {
        let Some(last) = self.leaf_page else {
            // Zero rows or one leaf: the leaf is the root.
            self.report.height = 1;
            self.report.pages = 1;
            self.report.leaf_pages = 1;
            return Ok(std::mem::take(&mut self.leaf));
        };
        let mut node = Node::new(&mut self.leaf[..]);
        node.set_prev(self.prev_leaf);
        node.set_next(NO_PAGE);
        self.children.push((node.key(0).to_vec(), last));
        self.sink.write(last, PageType::BTreeLeaf, &self.leaf)?;
        self.leaf_free.push((last, leaf_fill(&self.leaf)));
        self.report.leaf_pages += 1;
        let mut children = std::mem::take(&mut self.children);
        let mut level: u8 = 1;
        loop {
            let groups = group_children(&children, self.fill_bytes);
            if groups.len() == 1 {
                let root = internal_image(&children, level, self.leaf.len());
                self.report.height = u32::from(level) + 1;
                self.report.internal_pages += 1;
                break Ok(root);
            }
            let mut parents = Vec::with_capacity(groups.len());
            for g in groups {
                let page_no = self.sink.next_page()?;
                let image = internal_image(&children[g.clone()], level, self.leaf.len());
                self.sink.write(page_no, PageType::BTreeInternal, &image)?;
                self.report.internal_pages += 1;
                parents.push((std::mem::take(&mut children[g.start].0), page_no));
            }
            children = parents;
            level = level.checked_add(1).ok_or_else(|| DbError::LoadRow {
                index: self.index.name.clone(),
                position: self.report.rows,
                source: BTreeError::Corrupt {
                    page_no: NO_PAGE,
                    reason: "bulk-loaded tree would exceed 255 levels".into(),
                },
            })?;
        }
    }
}

/// Splits `children` (first key, page) into the children lists of the
/// nodes of the level above: greedily filled to `fill_bytes` (the first
/// child of a node is its leftmost pointer and costs no cell), then the
/// last node takes one child from the previous one if it was left with a
/// single child and the previous can spare one.
/// What the change buffer learns of a finished leaf image.
fn leaf_fill(image: &[u8]) -> LeafFill {
    let node = Node::new(image);
    LeafFill {
        free_bytes: node.free_total() as u32,
        entries: node.count() as u32,
    }
}

fn group_children(children: &[(Vec<u8>, u32)], fill_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    let mut used = 0;
    for (i, (key, _)) in children.iter().enumerate().skip(1) {
        let footprint = node::entry_footprint(key.len(), 4);
        if i - start >= 2 && used + footprint > fill_bytes {
            groups.push(start..i);
            start = i;
            used = 0;
        } else {
            used += footprint;
        }
    }
    groups.push(start..children.len());
    let n = groups.len();
    if n >= 2 && groups[n - 1].len() == 1 && groups[n - 2].len() >= 3 {
        groups[n - 2].end -= 1;
        groups[n - 1].start -= 1;
    }
    groups
}

/// The payload of an internal node at `level` over `children`.
fn internal_image(children: &[(Vec<u8>, u32)], level: u8, payload_len: usize) -> Vec<u8> {
    let mut image = vec![0u8; payload_len];
    let mut node = Node::new(&mut image[..]);
    node.init(NodeKind::Internal, level);
    node.set_leftmost(children[0].1);
    for (i, (key, page_no)) in children.iter().enumerate().skip(1) {
        node.insert_at(i - 1, key, &page_no.to_le_bytes());
    }
    image
}

/// Loads `rows` into the empty `index`; see the module documentation.
pub(crate) fn load(
    db: &super::Database,
    index: &Index,
    mut rows: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
    options: LoadOptions,
    stop: StopAt,
) -> Result<LoadReport> {
    if !(FILL_FACTOR_PCT_MIN..=100).contains(&options.fill_factor_pct) {
        return Err(DbError::Options {
            reason: format!(
                "bulk load fill factor {}% is outside {FILL_FACTOR_PCT_MIN}..=100",
                options.fill_factor_pct
            ),
        });
    }
    let started = Instant::now();
    let not_empty = || DbError::IndexNotEmpty {
        index: index.name.clone(),
    };
    let tree_err = |e| DbError::index(&index.name, e);
    if !index.tree.is_empty().map_err(tree_err)? {
        return Err(not_empty());
    }
    let store: &SpaceStore = &db.store.0;
    let mut builder = Builder::new(index, store, &db.redo, options);
    let built = rows
        .try_for_each(|(key, value)| builder.push(key, value))
        .and_then(|()| builder.finish())
        .and_then(|root| {
            builder.sink.flush()?;
            if builder.sink.journal.is_some() {
                let synced = Instant::now();
                store.tablespace().sync()?;
                builder.report.sync_elapsed = synced.elapsed();
            }
            Ok(root)
        });
    let pending = builder.sink.pending();
    let root = match built {
        Ok(root) => root,
        Err(e) => return Err(abandon(db, pending, e)),
    };
    if stop == StopAt::BeforeSwitch {
        return Ok(builder.report);
    }
    if builder.report.rows > 0 {
        let lsn = match index.tree.install_root(&root, builder.sink.journal) {
            Ok(lsn) => lsn,
            Err(BTreeError::NotEmpty) => return Err(abandon(db, pending, not_empty())),
            Err(e) => return Err(abandon(db, pending, tree_err(e))),
        };
        db.redo.wait_durable(lsn)?;
    }
    store.release_unused(builder.sink.next..builder.sink.end);
    if !index.unique {
        for &(page_no, fill) in &builder.leaf_free {
            db.secondary_hook.leaves.note(page_no, Some(fill));
        }
    }
    let mut report = builder.report;
    report.pages = report.leaf_pages + report.internal_pages;
    // Every page but the root went through the sink.
    debug_assert_eq!(builder.sink.written + 1, report.pages.max(1));
    report.extents = builder.sink.extents.len() as u64;
    report.write_elapsed = builder.sink.write_elapsed;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// After a failed load: fsyncs what was written (so the reclaim's logged
/// frees are enough) and reclaims it. If that fails too, the journal stays
/// and the next open reclaims. Returns `error`, the load's own.
fn abandon(db: &super::Database, pending: Option<PendingLoad>, error: DbError) -> DbError {
    let Some(load) = pending else { return error };
    let store: &SpaceStore = &db.store.0;
    // The load's error is the one to report; if the reclaim fails, the
    // journal survives for the next open.
    let _reclaim_failed = store
        .tablespace()
        .sync()
        .map_err(DbError::from)
        .and_then(|()| reclaim(store, &db.redo, &load, false))
        .is_err();
    error
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::ops::Bound;
    use std::path::Path;

    use super::*;
    use crate::btree::Direction;
    use crate::db::{Database, DbOptions};
    use crate::page::PageSize;

    const PAGE_BYTES: usize = 4096;

    fn options(doublewrite: bool) -> DbOptions {
        DbOptions {
            page_size: PageSize::new(PAGE_BYTES).unwrap(),
            buffer_pool_bytes: 1 << 20,
            redo_bytes: 8 << 20,
            doublewrite,
            ..DbOptions::default()
        }
    }

    fn rows(n: u64) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> {
        (0..n).map(|i| (format!("k{i:08}").into_bytes(), vec![(i % 251) as u8; 150]))
    }

    fn count(db: &Database, name: &str) -> usize {
        let idx = db.index(name).unwrap();
        let mut txn = db.begin();
        let n = txn
            .range(idx, Bound::Unbounded, Bound::Unbounded, Direction::Forward, None)
            .unwrap()
            .len();
        txn.commit().unwrap();
        n
    }

    /// Creates a database with a committed index `t` (100 rows) and an
    /// index `stock` whose load of 20 000 rows stopped before the switch;
    /// returns the page count before that load. The database is dropped
    /// without close: a crash.
    fn crash_before_switch(dir: &Path, doublewrite: bool, flush_journal: bool) -> u32 {
        let db = Database::create(dir, options(doublewrite)).unwrap();
        let t = db.create_index("t", true).unwrap();
        db.run(|txn| {
            for (k, v) in rows(100) {
                txn.insert(t, &k, &v)?;
            }
            Ok(())
        })
        .unwrap();
        let stock = db.create_index("stock", true).unwrap();
        let before = db.store.0.tablespace().page_count();
        let report = db
            .load_sorted_until(stock, rows(20_000), LoadOptions::default(), StopAt::BeforeSwitch)
            .unwrap();
        assert!(report.leaf_pages > 500, "{report:?}");
        if flush_journal {
            db.flush_all().unwrap();
        }
        // Visible to nobody: the root is still the empty leaf.
        assert_eq!(count(&db, "stock"), 0);
        drop(db);
        before
    }

    /// Overwrites the second half of the first `n` loaded leaves (page
    /// type `BTreeLeaf` at or after `from`) with garbage, as a torn write.
    fn tear_leaves(path: &Path, from: u32, n: usize) -> Vec<u32> {
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        let pages = (file.metadata().unwrap().len() / PAGE_BYTES as u64) as u32;
        let mut torn = Vec::new();
        let mut buf = vec![0u8; PAGE_BYTES];
        for page_no in from..pages {
            file.seek(SeekFrom::Start(u64::from(page_no) * PAGE_BYTES as u64))
                .unwrap();
            file.read_exact(&mut buf).unwrap();
            if page::peek_page_type_raw(&buf) != PageType::BTreeLeaf as u16 {
                continue;
            }
            file.seek(SeekFrom::Start(
                u64::from(page_no) * PAGE_BYTES as u64 + PAGE_BYTES as u64 / 2,
            ))
            .unwrap();
            file.write_all(&vec![0xAB; PAGE_BYTES / 2]).unwrap();
            torn.push(page_no);
            if torn.len() == n {
                break;
            }
        }
        file.sync_all().unwrap();
        torn
    }

    #[test]
    fn crash_before_the_switch_leaves_the_index_empty_and_its_pages_reclaimed() {
        let dir = tempfile::tempdir().unwrap();
        crash_before_switch(dir.path(), true, false);
        let db = Database::open(dir.path(), options(true)).unwrap();
        let report = db.recovery_report().clone();
        assert_eq!(report.loads_reclaimed, 1, "{report}");
        assert!(report.load_pages_reclaimed > 500, "{report}");
        db.check().unwrap();
        assert_eq!(count(&db, "stock"), 0);
        assert_eq!(count(&db, "t"), 100);
        // The freed pages serve the next load, which commits.
        let pages = db.store.0.tablespace().page_count();
        let stock = db.index("stock").unwrap();
        db.load_sorted(stock, rows(20_000)).unwrap();
        assert!(db.store.0.tablespace().page_count() <= pages + EXTENT_PAGES_MAX);
        db.close().unwrap();
        let db = Database::open(dir.path(), options(true)).unwrap();
        assert_eq!(db.recovery_report().loads_reclaimed, 0);
        assert_eq!(count(&db, "stock"), 20_000);
        db.check().unwrap();
    }

    #[test]
    fn torn_loader_pages_of_a_crashed_load_do_not_stop_the_open() {
        for (doublewrite, flush_journal) in [(true, true), (false, false)] {
            let dir = tempfile::tempdir().unwrap();
            let before = crash_before_switch(dir.path(), doublewrite, flush_journal);
            let torn = tear_leaves(&dir.path().join("flushwise.data"), before, 3);
            assert_eq!(torn.len(), 3);
            let db = Database::open(dir.path(), options(doublewrite)).unwrap();
            assert_eq!(db.recovery_report().loads_reclaimed, 1);
            db.check().unwrap();
            assert_eq!(count(&db, "stock"), 0);
            assert_eq!(count(&db, "t"), 100);
            db.close().unwrap();
            // Reclaimed means rewritten: the next open reads every page clean.
            let db = Database::open(dir.path(), options(doublewrite)).unwrap();
            assert_eq!(db.recovery_report().loads_reclaimed, 0);
        }
    }

    #[test]
    fn a_torn_page_outside_any_load_still_fails_the_open() {
        let dir = tempfile::tempdir().unwrap();
        crash_before_switch(dir.path(), false, true);
        {
            // Recover, load `stock`, then crash before another load's switch.
            let db = Database::open(dir.path(), options(false)).unwrap();
            let stock = db.index("stock").unwrap();
            db.load_sorted(stock, rows(20_000)).unwrap();
            let item = db.create_index("item", true).unwrap();
            db.load_sorted_until(item, rows(5_000), LoadOptions::default(), StopAt::BeforeSwitch)
                .unwrap();
            drop(db);
        }
        // Leaves of the committed load are referenced: a torn one is fatal.
        let torn = tear_leaves(&dir.path().join("flushwise.data"), 1, 1);
        let err = Database::open(dir.path(), options(false)).unwrap_err();
        assert!(
            matches!(&err, DbError::CorruptPage { page_no, .. } if *page_no == torn[0]),
            "{err}"
        );
    }
}
