//! TPC-C on a transactional store: schema, loader, the five transactions,
//! a terminal driver, the consistency check and a CSV export.
//!
//! What it models: the TPC-C benchmark (TPC-C standard specification,
//! revision 5.11) as far as the database sees it: the nine tables of
//! clause 1.3 ([`schema`]), the initial population of clause 4.3.3
//! ([`load`]), the New-Order, Payment, Order-Status, Delivery and
//! Stock-Level transactions of clauses 2.4–2.8 ([`txn`]) driven by
//! terminals without keying and think times unless asked
//! ([`driver`], following Lee et al. §5.1), and the consistency conditions
//! of clause 3.3.2 ([`check`]). Results are reported as NOPM (New-Orders
//! committed per minute) and `tpm_total`, never as tpmC, which names
//! audited results only.
//!
//! The store is reached through the small interface of [`store`]
//! ([`TpccStore`], [`TpccTxn`]); [`engine_store`] implements it for the
//! flushwise engine's `Database`, so the same driver can run on other
//! harnesses.
//!
//! Invariants kept by every transaction (and verified by [`check`]):
//! - each district's NEW_ORDER and ORDER rows are only inserted or deleted
//!   while the DISTRICT row is locked exclusively, which makes range reads
//!   of them serialisable on an engine that does not lock gaps;
//! - money is integer cents, so conditions 8–12 hold exactly.
//!
//! Sources of the constants: clause numbers in each module;
//! /work/shared/reference/ecosystem.md §2 summarises them.

pub mod check;
pub mod codec;
pub mod driver;
pub mod engine_store;
pub mod export;
pub use flushwise_core::histogram;
pub mod load;
pub mod random;
pub mod schema;
pub mod store;
pub mod txn;

use thiserror::Error;

pub use check::{check, CheckReport, Violation};
pub use codec::RowError;
pub use driver::{
    run, run_live, AfterInterval, IntervalReport, LatencySummary, LiveCounts, RunConfig, RunReport, TxnObserver,
    LIVE_TICK,
};
pub use engine_store::EngineTxn;
pub use export::{export, ExportReport};
pub use load::{prepare, LoadConfig, LoadMarker, LoadProgress, LoadReport};
pub use random::NurandConstants;
pub use schema::Index;
pub use store::{Entries, ScanDirection, ScanLock, StoreError, StoreErrorKind, TpccStore, TpccTxn};
pub use txn::TxnKind;

/// An error of the TPC-C workload.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TpccError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Row(#[from] RowError),
    #[error("loading {index}: {source}")]
    Load {
        index: &'static str,
        #[source]
        source: StoreError,
    },
    #[error("{reason}")]
    NotLoaded { reason: String },
    #[error("{reason}")]
    AlreadyLoaded { reason: String },
    #[error("invalid configuration: {reason}")]
    Config { reason: String },
    /// A row that must exist is missing (a broken database, not a
    /// retryable condition).
    #[error("{table} row {key} is missing")]
    MissingRow { table: &'static str, key: String },
    #[error("{kind} on terminal {terminal} failed: {source}")]
    Txn {
        kind: TxnKind,
        terminal: u32,
        #[source]
        source: Box<TpccError>,
    },
    #[error("terminal {terminal} panicked")]
    TerminalPanic { terminal: u32 },
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl TpccError {
    /// True for deadlock victims and lock wait timeouts.
    pub fn is_retryable(&self) -> bool {
        matches!(self, TpccError::Store(e) if e.is_retryable())
    }
}

/// The number of warehouses of a complete load, `None` if the store holds
/// no complete TPC-C database.
pub fn loaded_warehouses(store: &impl TpccStore) -> Result<Option<u32>, TpccError> {
    Ok(match load::load_state(store)? {
        load::LoadState::Complete(m) => Some(m.warehouses),
        _ => None,
    })
}
