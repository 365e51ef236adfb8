//! Paper 004's insert load as a page-reference model (issue #16): the
//! fix/unfix stream of `flushwise insert run` without a database, for the
//! simulator.
//!
//! What it models: one table of `rows` rows, a unique primary index on an
//! increasing id and `secondary_indexes` non-unique indexes on keys drawn
//! uniformly per row (`flushwise_workloads::insert`). A transaction inserts
//! one row: a descent of the primary to its right-most leaf (exclusive,
//! modified) and, per secondary index, a descent through the root and one
//! internal page (shared) to a uniformly drawn leaf (exclusive, modified).
//! With `update_pct`, that share of the transactions update a loaded row's
//! secondary columns instead (`insert run --update-pct`, `k = k + 1`): the
//! primary's leaf of a uniformly drawn loaded row (exclusive, modified)
//! and, per secondary index, a uniformly drawn leaf fixed twice exclusive
//! (the old entry's delete, then the new entry's insert: `k + 1` lands on
//! the same leaf but for a vanishing share of keys); the table does not
//! grow.
//!
//! Sizes follow the engine's layout (16 KiB pages: a primary entry of a
//! 120-byte row takes about 134 bytes, a secondary entry 20): the loaded
//! leaves are 15/16 full (the bulk loader's fill), and a secondary index
//! grows by new leaves as inserts fill it, at the 69 % a B+tree under
//! random inserts settles to (Yao 1978, ln 2); a key's leaf is its uniform
//! draw scaled to the current leaf count (which leaf does not matter under
//! uniform keys, how many does). The primary's new leaf is read like any
//! other page (the trace format has no "create" fix: one read per ~114
//! rows, noted). Splits' page writes are not modelled.
//!
//! Spaces: the primary is space [`PRIMARY_SPACE`], secondary index `i` is
//! space `SECONDARY_SPACE_FIRST + i`; in each, page 0 is the root and pages
//! `1..=INTERNAL_PAGES` the internal level. The secondary spaces are the
//! ones a change buffer may buffer for (`is_secondary_space`).
//!
//! Invariant: a run is a pure function of (config, seed, agent order).

use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceRecord, TxnType};

use crate::rng::Rng64;

pub const PRIMARY_SPACE: u32 = 1;
pub const SECONDARY_SPACE_FIRST: u32 = 2;
/// Internal pages per index below the root (an index of 10^6 entries of
/// 20 bytes has ~1,700 leaves, ~3 internal pages' worth of separators).
pub const INTERNAL_PAGES: u32 = 8;
/// Bytes of a secondary entry in a leaf (slot, cell header, the escaped
/// 4-byte key and terminator, the 8-byte primary key).
pub const SECONDARY_ENTRY_BYTES: u64 = 20;
/// Row header and primary key over the row bytes.
const PRIMARY_ENTRY_OVERHEAD_BYTES: u64 = 14;
/// Redo of one leaf insert (its entry and the page header's change).
const INSERT_REDO_BYTES: u32 = 60;
const MAX_SECONDARY_INDEXES: u32 = 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertModelConfig {
    pub rows: u64,
    pub secondary_indexes: u32,
    pub row_bytes: u32,
    pub page_size_bytes: u32,
    /// Percent of transactions that update a loaded row (0..=100).
    pub update_pct: u8,
}

impl Default for InsertModelConfig {
    fn default() -> Self {
        Self {
            rows: 1_000_000,
            secondary_indexes: 3,
            row_bytes: 120,
            page_size_bytes: 16_384,
            update_pct: 0,
        }
    }
}

pub struct InsertModel {
    config: InsertModelConfig,
    /// Rows in the table now (loaded and inserted).
    rows: u64,
    rows_per_primary_leaf: u64,
    /// Leaves of each secondary index after the load.
    loaded_secondary_leaves: u64,
}

impl InsertModel {
    pub fn new(config: InsertModelConfig) -> Result<Self, String> {
        if config.rows == 0 {
            return Err("--rows 0: at least one row".into());
        }
        if !(1..=MAX_SECONDARY_INDEXES).contains(&config.secondary_indexes) {
            return Err(format!(
                "--secondary-indexes {}: from 1 to {MAX_SECONDARY_INDEXES}",
                config.secondary_indexes
            ));
        }
        if config.update_pct > 100 {
            return Err(format!("--update-pct {}: from 0 to 100", config.update_pct));
        }
        let page = u64::from(config.page_size_bytes);
        let loaded_fill = page * 15 / 16;
        let rows_per_primary_leaf = (loaded_fill / (u64::from(config.row_bytes) + PRIMARY_ENTRY_OVERHEAD_BYTES)).max(1);
        let loaded_secondary_leaves = config
            .rows
            .saturating_mul(SECONDARY_ENTRY_BYTES)
            .div_ceil(loaded_fill)
            .max(1);
        Ok(Self {
            rows: config.rows,
            rows_per_primary_leaf,
            loaded_secondary_leaves,
            config,
        })
    }

    pub fn config(&self) -> &InsertModelConfig {
        &self.config
    }

    pub fn is_secondary_space(&self, space: u32) -> bool {
        (SECONDARY_SPACE_FIRST..SECONDARY_SPACE_FIRST + self.config.secondary_indexes).contains(&space)
    }

    /// Leaves of a secondary index holding `rows` entries: the loaded ones,
    /// or more once inserts fill them past 69 %.
    fn secondary_leaves(&self) -> u64 {
        let settled = (self.rows * SECONDARY_ENTRY_BYTES * 100).div_ceil(u64::from(self.config.page_size_bytes) * 69);
        settled.max(self.loaded_secondary_leaves)
    }

    /// A secondary leaf's free bytes now, on average: the leaves' room
    /// less the entries they hold (1/16 of a page after the load, toward
    /// 31 % as inserts split them).
    pub fn secondary_leaf_free_bytes(&self) -> u64 {
        let room = self.secondary_leaves() * u64::from(self.config.page_size_bytes);
        room.saturating_sub(self.rows * SECONDARY_ENTRY_BYTES) / self.secondary_leaves()
    }

    /// Pages per space (for the device layout), at the start.
    pub fn space_pages(&self, space: u32) -> u64 {
        let first = u64::from(INTERNAL_PAGES) + 1;
        if space == PRIMARY_SPACE {
            first + self.rows.div_ceil(self.rows_per_primary_leaf)
        } else if self.is_secondary_space(space) {
            first + self.secondary_leaves()
        } else {
            0
        }
    }

    pub fn spaces(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(PRIMARY_SPACE).chain((0..self.config.secondary_indexes).map(|i| SECONDARY_SPACE_FIRST + i))
    }

    pub fn database_pages(&self) -> u64 {
        self.spaces().map(|s| self.space_pages(s)).sum()
    }

    /// Appends one transaction (one row inserted, or one updated) to `out`.
    pub fn fill_transaction(&mut self, agent: u32, rng: &mut impl Rng64, out: &mut Vec<TraceRecord>) {
        let first = INTERNAL_PAGES + 1;
        let update = self.config.update_pct > 0 && rng.percent(u64::from(self.config.update_pct));
        out.push(TraceRecord::txn_begin(agent, TxnType::Other));
        let change_at = |space: u32, internal: u32, leaf: u64, out: &mut Vec<TraceRecord>| {
            let root = PageId::new(space, 0);
            let inner = PageId::new(space, 1 + internal);
            let leaf = PageId::new(space, first + leaf as u32);
            out.push(TraceRecord::fix(agent, root, LatchMode::Shared));
            out.push(TraceRecord::fix(agent, inner, LatchMode::Shared));
            out.push(TraceRecord::unfix(agent, root, LatchMode::Shared, false, 0));
            out.push(TraceRecord::fix(agent, leaf, LatchMode::Exclusive));
            out.push(TraceRecord::unfix(agent, inner, LatchMode::Shared, false, 0));
            out.push(TraceRecord::unfix(
                agent,
                leaf,
                LatchMode::Exclusive,
                true,
                INSERT_REDO_BYTES,
            ));
        };
        let primary_leaves = self.config.rows.div_ceil(self.rows_per_primary_leaf);
        let (primary_leaf, primary_internal) = if update {
            let leaf = rng.below(primary_leaves);
            (leaf, (leaf * u64::from(INTERNAL_PAGES) / primary_leaves) as u32)
        } else {
            (self.rows / self.rows_per_primary_leaf, INTERNAL_PAGES - 1)
        };
        change_at(PRIMARY_SPACE, primary_internal, primary_leaf, out);
        let leaves = self.secondary_leaves();
        for i in 0..self.config.secondary_indexes {
            let leaf = rng.below(leaves);
            let internal = (leaf * u64::from(INTERNAL_PAGES) / leaves) as u32;
            change_at(SECONDARY_SPACE_FIRST + i, internal, leaf, out);
            if update {
                change_at(SECONDARY_SPACE_FIRST + i, internal, leaf, out);
            }
        }
        out.push(TraceRecord::txn_commit(agent, TxnType::Other));
        if !update {
            self.rows += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Xoshiro256StarStar;
    use flushwise_trace::TraceEvent;

    /// The pages a transaction's records unfix modified, in order.
    fn modified_pages(out: &[TraceRecord]) -> Vec<PageId> {
        out.iter()
            .filter_map(|r| match r.event {
                TraceEvent::Unfix {
                    page, modified: true, ..
                } => Some(page),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_transaction_inserts_into_the_primary_and_every_secondary_leaf() {
        let mut m = InsertModel::new(InsertModelConfig::default()).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let mut out = Vec::new();
        m.fill_transaction(3, &mut rng, &mut out);
        let modified = modified_pages(&out);
        assert_eq!(modified.len(), 4, "{out:?}");
        assert_eq!(modified[0].space, PRIMARY_SPACE);
        assert!(modified[1..]
            .iter()
            .all(|p| m.is_secondary_space(p.space) && p.page_no > INTERNAL_PAGES));
        let fixes = out.iter().filter(|r| matches!(r.event, TraceEvent::Fix { .. })).count();
        let unfixes = out
            .iter()
            .filter(|r| matches!(r.event, TraceEvent::Unfix { .. }))
            .count();
        assert_eq!(fixes, unfixes);
    }

    #[test]
    fn an_update_changes_a_loaded_row_and_each_secondary_leaf_twice_without_growing_the_table() {
        let mut m = InsertModel::new(InsertModelConfig {
            update_pct: 100,
            ..InsertModelConfig::default()
        })
        .unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let mut out = Vec::new();
        let pages_before = m.database_pages();
        for _ in 0..1_000 {
            out.clear();
            m.fill_transaction(0, &mut rng, &mut out);
            let modified = modified_pages(&out);
            assert_eq!(modified.len(), 1 + 2 * 3, "{out:?}");
            assert!(modified[0].page_no < m.space_pages(PRIMARY_SPACE) as u32);
            for pair in modified[1..].chunks(2) {
                assert_eq!(pair[0], pair[1], "the delete and the insert share a leaf");
            }
        }
        assert_eq!(m.database_pages(), pages_before, "updates do not grow the table");
        assert!(InsertModel::new(InsertModelConfig {
            update_pct: 101,
            ..InsertModelConfig::default()
        })
        .is_err());
    }

    #[test]
    fn the_secondary_indexes_grow_as_rows_come_in_and_the_loaded_size_is_the_engines() {
        let mut m = InsertModel::new(InsertModelConfig::default()).unwrap();
        // The engine: 10^6 rows, 3 secondary indexes, a 285 MiB data file.
        let mib = m.database_pages() * 16_384 / (1 << 20);
        assert!((200..=320).contains(&mib), "{mib} MiB");
        let before = m.secondary_leaves();
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let mut out = Vec::new();
        for _ in 0..600_000 {
            out.clear();
            m.fill_transaction(0, &mut rng, &mut out);
        }
        assert!(m.secondary_leaves() > before, "{} vs {before}", m.secondary_leaves());
    }
}
