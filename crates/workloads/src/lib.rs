//! flushwise-workloads: the workloads that drive the engine and the simulator.
//!
//! - [`tpcc_model`]: a TPC-C page-reference generator. It needs no database
//!   and no stored trace: it models the nine TPC-C tables and their indexes
//!   as B+trees laid out over page numbers and emits, per transaction, the
//!   fix/unfix sequence a page-latching engine would issue.

pub mod tpcc_model;
