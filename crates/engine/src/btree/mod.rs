//! B+tree indexes over a [`PageStore`](crate::page_store::PageStore).
//!
//! - [`node`]: the slotted-page layout of one node inside a page payload;
//! - [`tree`]: [`BTree`], the concurrent tree (get, insert, upsert, update,
//!   delete, range cursors, `check`);
//! - [`secondary`]: [`SecondaryIndex`], a non-unique index stored as a unique
//!   tree of `(secondary key, primary key)` composites;
//! - [`memory_store`]: [`MemoryStore`], an in-memory page store for tests and
//!   in-memory trees.
//!
//! The tree only ever sees pages through latched guards and makes every
//! change through `PageStore::commit` groups, so the same code runs on the
//! in-memory store and on the engine's buffer pool. Keys and values are byte
//! strings compared bytewise; `key.len() + value.len()` is limited to a
//! quarter of the page payload ([`node::max_entry_len`]).

pub mod memory_store;
pub mod node;
pub mod secondary;
pub mod tree;

pub use memory_store::{MemorySnapshot, MemoryStore};
pub use secondary::SecondaryIndex;
pub use tree::{BTree, Range, TreeStats};

use crate::page_store::StoreError;

/// Scan direction of a range cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Ascending keys.
    Forward,
    /// Descending keys.
    Backward,
}

/// Errors of the B+tree layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BTreeError {
    #[error("entry of a {key_len}-byte key and a {value_len}-byte value exceeds the {max_len}-byte limit (a quarter of the page payload)")]
    EntryTooLarge {
        key_len: usize,
        value_len: usize,
        max_len: usize,
    },
    #[error("duplicate key")]
    DuplicateKey,
    #[error("the tree is not empty")]
    NotEmpty,
    #[error("page payload of {payload_len} bytes is outside the supported {min}..={max}")]
    UnsupportedPayload { payload_len: usize, min: usize, max: usize },
    #[error("b+tree page {page_no} is corrupt: {reason}")]
    Corrupt { page_no: u32, reason: String },
    #[error("page store: {0}")]
    Store(#[from] StoreError),
}

/// Result of the B+tree layer.
pub type Result<T> = std::result::Result<T, BTreeError>;
