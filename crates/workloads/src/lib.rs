//! flushwise-workloads: the workloads that drive the engine (the simulator's
//! TPC-C page-reference model is the crate `flushwise-tpcc-model`).
//!
//! - [`tpcc`]: TPC-C itself on a transactional store (the flushwise engine
//!   through [`tpcc::TpccStore`]): schema, parallel loader, the five
//!   transactions, a terminal driver, consistency check and CSV export.
//! - [`tpch`]: TPC-H on the engine: generator, loader, the 22 queries over
//!   a small executor, the refresh functions, power and throughput tests.
//! - [`insert`]: paper 004's insert load: a sysbench-like table with
//!   non-unique secondary indexes, threads inserting one row per
//!   transaction, and the table's consistency check.
//! - [`wisconsin`]: the Wisconsin benchmark's relation and paper 003's
//!   UPDATE load (Poisson arrivals, open or closed loop) on the engine.

pub mod insert;
pub mod tpcc;
pub mod tpch;
pub mod wisconsin;
