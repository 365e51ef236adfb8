//! flushwise-workloads: the workloads that drive the engine (the simulator's
//! TPC-C page-reference model is the crate `flushwise-tpcc-model`).
//!
//! - [`tpcc`]: TPC-C itself on a transactional store (the flushwise engine
//!   through [`tpcc::TpccStore`]): schema, parallel loader, the five
//!   transactions, a terminal driver, consistency check and CSV export.

pub mod tpcc;
