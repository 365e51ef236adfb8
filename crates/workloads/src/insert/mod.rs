//! Paper 004's insert load on the flushwise engine (issue #16): a
//! sysbench-like table with non-unique secondary indexes, and many threads
//! inserting one row per transaction into it.
//!
//! What it models: sysbench's `insert` test as 004 ran it against InnoDB
//! (50 threads, a table much larger than the buffer pool, Table 1:
//! transactions/s and sysbench's R/W requests/s, 18 statements per
//! transaction, with the insert buffer on and off;
//! Table 2: page reads and writes by page type, INDEX against IBUF_INDEX).
//! A table is one unique primary index keyed by a `u64` id and N
//! non-unique secondary indexes, each on a `u32` drawn uniformly per row:
//! a new row's primary entry goes to the right-most leaf (hot, always in
//! the pool), but each secondary entry lands on a random leaf, which is
//! what a change buffer saves reading.
//!
//! - [`schema`]: index names, the row (its secondary keys and a seeded
//!   filler) and its encoding, deterministic per (seed, id).
//! - [`load`]: `prepare`: the primary index and every secondary index
//!   bulk-loaded in key order, with load markers in `insert.meta`.
//! - [`driver`]: the run: threads inserting rows under fresh ids, retries,
//!   warm-up, the measured window's transactions, latency, page I/O by
//!   page type and change-buffer counters.
//! - [`check`]: every secondary index holds exactly one entry per primary
//!   row, with the key the row says ([`check_consistency`]; crash tests
//!   reuse it).

pub mod check;
pub mod driver;
pub mod load;
pub mod schema;

use thiserror::Error;

pub use check::{check_consistency, ConsistencyReport, Mismatch};
pub use driver::{RunConfig, RunReport, WindowSnapshot};
pub use load::{require_loaded, LoadMarker, LoadReport};
pub use schema::{InsertSchema, Row, RowShape};

/// An error of the insert workload.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InsertError {
    #[error(transparent)]
    Db(#[from] flushwise_engine::db::DbError),
    #[error(transparent)]
    Row(#[from] crate::tpcc::RowError),
    #[error("{reason}")]
    NotLoaded { reason: String },
    #[error("{reason}")]
    AlreadyLoaded { reason: String },
    #[error("invalid configuration: {reason}")]
    Config { reason: String },
}
