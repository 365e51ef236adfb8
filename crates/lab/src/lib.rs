//! flushwise-lab: everything between a shell and a person.
//!
//! - [`experiment`]: the papers' experiment grids as data (paper, figure or
//!   table, the varied parameter, policies, scale), and running them;
//! - [`sim_runner`]: simulator runs, one with a progress bar or many on a
//!   few threads (results in input order);
//! - [`engine_run`]: one TPC-C run on the real engine, measured into the
//!   same [`flushwise_sim::RunResult`] the simulator fills;
//! - [`engine_options`]: an engine run's settings as text, into the
//!   engine's options; `prepare` and one `tpcc run` (the CLI's and the
//!   Python package's);
//! - [`engine_compare`]: a policy comparison's outcomes, regime, files
//!   and table;
//! - [`database`]: a prepared TPC-C database directory (manifest, free
//!   space, the per-policy copy);
//! - [`device_preset`]: this machine's disk measured, fitted and written
//!   as a calibrated device preset (`device calibrate`, `lab run
//!   fidelity`);
//! - [`fidelity`]: `lab run fidelity`, issue #18's engine runs against
//!   the simulator's replays of their traces, checked against its bounds;
//! - [`render`]: tables, CSV and JSON lines from results;
//! - [`own_policy_matrix`]: every policy and the tuned oracle (a grid
//!   search over 5.6's fixed knobs) over devices x sizes x loads;
//! - [`catalog`]: every figure and table of papers 000-002 as data (study,
//!   view, the paper's values and claims);
//! - [`figures`]: running catalog entries (cached by configuration hash),
//!   drawing them, their verdicts, and the HTML report;
//! - [`run_cache`]: simulator runs cached by configuration hash;
//! - [`plot`]: figures as SVG (plotters) and PNG (resvg);
//! - [`sim_bench`]: simulated buffer requests per wall-clock second;
//! - [`sweep`]: a grid of simulator runs given as JSON, one CSV table
//!   (`sim sweep`, the Python package's Ray sweeps);
//! - [`tpch`]: a TPC-H database directory: prepare, export, the
//!   validation answers, and power/throughput runs with flushing figures;
//! - [`tpch_fig10`]: `lab run 000-fig10`, Lee et al.'s TPC-H experiment on
//!   the engine (every policy, interleaved repeats, median and spread);
//! - [`insert`]: an insert-load database directory (paper 004's sysbench
//!   insert with secondary indexes): prepare, runs with the change buffer
//!   off or on (Tables 1 and 2's figures), the consistency check;
//! - [`wisconsin`]: a Wisconsin database directory (paper 003's UPDATE
//!   load): prepare, open- and closed-loop runs with their response-time
//!   series, CDF and flush activity, and `model` (003's model fitted to
//!   the runs, side by side);
//! - [`insert_lab`]: `lab run 004-change-buffer`, paper 004's Tables 1-4
//!   on the engine (change buffer off, on, on its own RAM-disk device;
//!   this disk and the emulated hard disk).
//! - [`wisconsin_lab`]: `lab run 003-model`, paper 003's whole experiment
//!   on the engine under `mysql51` (003's server), the model fitted, and
//!   `flushwise` at the same rates;
//! - [`model003`]: paper 003's queueing model as a seeded discrete-event
//!   simulation, its fitting rules, the Kolmogorov-Smirnov distance;
//! - [`workload_dir`]: a prepared database directory of TPC-H,
//!   Wisconsin or the insert load (manifest, load marker, lock, free
//!   space, load progress);
//! - [`steady`]: when an engine run's warm-up may end (fixed, or once the
//!   policy's tuned parameters hold still).
//!
//! Layer: above both shells and the workloads, below the command line,
//! which only parses arguments and prints. Every result carries
//! [`COMMIT`].

pub mod catalog;
pub mod crash_rounds;
pub mod database;
pub mod device_preset;
pub mod engine_compare;
pub mod engine_options;
pub mod engine_run;
pub mod experiment;
pub mod fidelity;
pub mod figures;
pub mod insert;
pub mod insert_lab;
pub mod model003;
pub mod own_policy_matrix;
pub mod plot;
pub mod render;
pub mod run_cache;
pub mod sim_bench;
pub mod sim_runner;
pub mod steady;
pub mod sweep;
pub mod torture;
pub mod tpch;
pub mod tpch_fig10;
pub mod wisconsin;
pub mod wisconsin_lab;
pub mod workload_dir;

/// The commit every result carries (set by build.rs).
pub const COMMIT: &str = env!("FLUSHWISE_COMMIT");
