//! TPC-H on the flushwise engine: the eight tables, a data generator that
//! follows the specification's population rules, a bulk loader, the 22
//! queries as hand-built plans over a small executor, the two refresh
//! functions, the power and throughput tests, and a CSV export.
//!
//! What it models: the TPC-H benchmark (specification revision 3.0.1) as
//! far as the database sees it, for Lee et al.'s Experiment 4 (`000` §5:
//! scale factor 1, 10 query streams, a 4 GB pool, "TPC-H throughput is the
//! ratio of the number of queries executed over the measurement
//! interval"). Results are reported as the specification's Power@Size,
//! Throughput@Size and their geometric mean, named `qphh` here; they are
//! not audited results.
//!
//! - [`schema`]: typed rows, keys, encodings, dates.
//! - [`gen`]: the population of clause 4.2 (deterministic per seed).
//! - [`load`]: `prepare`: tables created and bulk-loaded in key order.
//! - [`access`]: unlocked typed scans and lookups for the queries.
//! - [`query`]: the executor and Q1..Q22 with their substitution parameters.
//! - [`refresh`]: RF1 (new sales) and RF2 (old sales) as transactions.
//! - [`driver`]: the power test and the throughput test.
//! - [`export`]: the tables as CSV (what the DuckDB answer check reads).

pub mod access;
pub mod driver;
pub mod export;
pub mod gen;
pub mod load;
pub mod query;
pub mod refresh;
pub mod schema;

use thiserror::Error;

pub use access::TpchDb;
pub use schema::{Date, Row, Table};

/// An error of the TPC-H workload.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TpchError {
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
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("stream {stream} panicked")]
    StreamPanic { stream: u32 },
}
