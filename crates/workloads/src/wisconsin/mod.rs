//! The Wisconsin benchmark's relation on the flushwise engine and 003's
//! write-heavy load over it (issue #15).
//!
//! What it models: the scalable Wisconsin relation (Bitton, DeWitt and
//! Turbyfill 1983; DeWitt 1993) and the load of paper 003 (a queueing
//! model of InnoDB under UPDATEs): `UPDATE <relation> SET unique3=? WHERE
//! unique1=?` with uniform random values in `0..n`, arriving as a Poisson
//! process at rate lambda and served by a pool of worker threads (open
//! loop), or issued by N jobs back to back (closed loop, for 003's N/T and
//! N/P graphs).
//!
//! - [`schema`]: the sixteen attributes, the seeded permutation, the key
//!   (`unique1`) and the encoding.
//! - [`load`]: `prepare`: the relation bulk-loaded in key order, with load
//!   markers.
//! - [`driver`]: the open- and closed-loop load; every request recorded,
//!   pool counters sampled.
//! - [`series`]: per-interval series and response-time summaries.

pub mod driver;
pub mod load;
pub mod schema;
pub mod series;

use thiserror::Error;

pub use driver::{Arrivals, Request, RunConfig, RunReport, Sample};
pub use schema::Tuple;

/// An error of the Wisconsin workload.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WisconsinError {
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
    #[error("corrupt wisconsin relation: {reason}")]
    Corrupt { reason: String },
}
