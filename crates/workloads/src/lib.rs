//! flushwise-workloads: the workloads that drive the engine and the simulator.
//!
//! - [`tpcc_model`]: a TPC-C page-reference generator. It needs no database
//!   and no stored trace: it models the nine TPC-C tables and their indexes
//!   as B+trees laid out over page numbers and emits, per transaction, the
//!   fix/unfix sequence a page-latching engine would issue.
//! - [`tpcc`]: TPC-C itself on a transactional store (the flushwise engine
//!   through [`tpcc::TpccStore`]): schema, parallel loader, the five
//!   transactions, a terminal driver, consistency check and CSV export.

pub mod tpcc;
pub mod tpcc_model;
