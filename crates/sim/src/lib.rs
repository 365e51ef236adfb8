//! flushwise-sim: a deterministic discrete-event, trace-driven simulator of
//! the buffer pool, built on the same core the engine runs.
//!
//! Virtual time, one event queue, one seeded PRNG; no wall clock anywhere in
//! the model. The same seed and inputs give byte-identical outputs.
//!
//! - [`config`]: the run's configuration, validation and hash;
//! - [`device`]: device names, `calibrated:PATH` presets read and pinned;
//! - [`workload`]: TPC-C, TPC-H and paper 004's insert load generated, or trace replay;
//! - [`change_buffer`]: the change buffer's effect on page references (004);
//! - [`simulation`]: agents, cleaners, devices and the log in one clock;
//! - [`metrics`]: interval rows and the final [`metrics::RunResult`];
//! - [`live`]: a running run's snapshot for a live observer ([`live::LiveSample`]).
//! - [`options`]: a run's options as text (the command line's, the Python
//!   package's) and their translation into a [`SimConfig`].

pub mod change_buffer;
pub mod config;
pub mod cpu;
pub mod device;
pub mod event_queue;
pub mod live;
pub mod metrics;
pub mod options;
pub mod preset;
pub mod simulation;
pub mod units;
pub mod workload;

pub use config::{config_hash_of, CpuCosts, SimConfig, WorkloadSpec};
pub use device::{pin_device, resolve_device};
pub use live::{LatencyBuckets, LiveSample};
pub use metrics::{
    FlushFigures, IntervalRow, LatencySummary, ReadSplitFigures, RunResult, TxnCounts, WritePathFigures, SHELL_ENGINE,
    SHELL_SIMULATOR,
};
pub use options::SimOptions;
pub use simulation::Simulation;
