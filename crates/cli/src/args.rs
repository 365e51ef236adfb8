//! The command-line grammar (clap derive) and its translation into a
//! [`SimConfig`].
//!
//! Sizes and durations are taken as text and parsed here, not by clap, so a
//! bad value gives one line naming the flag and what is accepted
//! (`error: --buffer-pool 12QB: unknown size unit ...`) instead of clap's
//! multi-line usage block. Everything else the simulator checks itself
//! (`SimConfig::validate`, whose errors start with the flag name).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use flushwise_core::policy::PolicySpec;
use flushwise_lab::engine_compare::{compare_preset, ComparePreset};
use flushwise_sim::{SimConfig, SimOptions};

/// `--preset`: one of the lab's named `compare` setups.
fn preset_parser() -> impl clap::builder::TypedValueParser<Value = &'static ComparePreset> {
    |text: &str| compare_preset(text)
}

/// `--policies`: comma-separated policies, parameters kept with their
/// policy ([`PolicySpec::parse_list`]).
#[derive(Clone, Debug)]
pub struct PolicyList(pub Vec<PolicySpec>);

impl std::str::FromStr for PolicyList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        PolicySpec::parse_list(text).map(PolicyList)
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "flushwise",
    version,
    args_override_self = true,
    about = "Buffer-pool flushing policies: simulate, compare, reproduce the papers' experiments"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The main job: TPC-C on the real engine under several page-cleaning
    /// policies, side by side (prepares the database once, then reuses it).
    Compare(Box<EngineCompareArgs>),
    /// Every page-cleaning policy and its parameters: key, default,
    /// accepted values, meaning.
    Policies,
    /// TPC-C on the real engine: prepare, run, check, export.
    #[command(subcommand)]
    Tpcc(TpccCommand),
    /// TPC-H on the real engine: prepare, run (power and throughput
    /// tests), answers (the 22 queries with the validation parameters),
    /// export.
    #[command(subcommand)]
    Tpch(TpchCommand),
    /// The deterministic simulator.
    #[command(subcommand)]
    Sim(SimCommand),
    /// Page-reference traces: record, export, inspect.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// The lab: the papers' experiments, the tuned oracle and the
    /// own-policy matrix, each one command.
    #[command(subcommand)]
    Lab(LabCommand),
    /// Crash torture: the engine on an in-memory disk whose power is cut
    /// at one sync point after another (unsynced writes kept, dropped or
    /// torn), then recovery and a check that no acknowledged commit was
    /// lost. Exits 1 if anything was.
    Torture(TortureArgs),
    /// Whole-database I/O error sweep (SQLite's ioerr tests): for N = 1, 2,
    /// ... fail the N-th read, write, fsync or file extension of a short
    /// run until a run never reaches N; each must end in an error naming
    /// the failure or in success, and a reopen on a healthy device must
    /// hold every acknowledged commit. Exits 1 if one did not.
    IoerrSweep(IoerrSweepArgs),
    /// Paper 003's write-heavy load on the Wisconsin relation: prepare,
    /// run (UPDATEs arriving as a Poisson process, or N jobs back to
    /// back), model (003's queueing model fitted to the runs and simulated
    /// beside them).
    #[command(subcommand)]
    Wisconsin(WisconsinCommand),
    /// Paper 004's insert load (sysbench's insert with secondary indexes):
    /// prepare, run (threads inserting rows, the change buffer off or on;
    /// 004's Tables 1 and 2), check (every secondary entry against its row).
    #[command(subcommand)]
    Insert(InsertCommand),
    /// Storage devices: calibrate measures this machine's storage the way
    /// the engine uses it and writes a device-model preset that `sim run
    /// --device calibrated:FILE` and `--device emulated calibrated:FILE`
    /// take.
    #[command(subcommand)]
    Device(DeviceCommand),
}

#[derive(Subcommand, Debug)]
pub enum DeviceCommand {
    /// Measures 16 KiB O_DIRECT random reads and writes at queue depths
    /// 1-32 (one thread per request in flight, as the engine), reads beside
    /// writes, sequential log appends with fdatasync and fdatasync alone,
    /// in test files it removes at the end; fits the calibrated device
    /// model, prints measured vs model for every point and writes the
    /// preset (about 1.5 minutes by default, a few seconds with --quick).
    Calibrate(CalibrateArgs),
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Directory to measure (its filesystem and disk); created if missing.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Where to write the preset (default: DIR/calibrated.toml).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// How long each measured point runs, e.g. 2s, 500ms (default 2s; 100ms
    /// with --quick).
    #[arg(long, value_name = "DURATION")]
    pub duration_per_point: Option<String>,
    /// Size of the random-I/O test file, e.g. 1GiB (default 1GiB; 16MiB
    /// with --quick). Larger than any cache in front of the disk measures
    /// the disk.
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<String>,
    /// A run of a few seconds (tests, a first look): small file, short
    /// points, queue depths 1-8.
    #[arg(long)]
    pub quick: bool,
    /// direct (O_DIRECT, as the engine's data files), buffered, or auto:
    /// direct unless DIR is on a tmpfs, which refuses O_DIRECT.
    #[arg(long, default_value = "auto")]
    pub io: String,
    #[arg(long, value_enum, default_value = "table")]
    pub output: CalibrateOutput,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrateOutput {
    /// Measured vs model, one line a point, on stdout.
    Table,
    /// One JSON object (`"kind":"calibration"`) on stdout; progress on stderr.
    Json,
}

#[derive(Args, Debug)]
pub struct IoerrSweepArgs {
    /// tpcc (one warehouse), bank or secondary (three secondary indexes,
    /// the change buffer on).
    #[arg(long, default_value = "tpcc", value_parser = parse_torture_workload)]
    pub workload: flushwise_lab::torture::TortureWorkload,
    /// Which calls to fail, comma-separated: read, write, sync, extend.
    #[arg(long, default_value = "read,write,sync,extend", value_delimiter = ',', value_parser = parse_io_fault)]
    pub faults: Vec<flushwise_lab::torture::IoFault>,
    /// Transactions of the run (one thread).
    #[arg(long, default_value_t = 20)]
    pub txns: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Points at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Stop a kind's sweep after this many N.
    #[arg(long, default_value_t = 50_000)]
    pub max_points: u64,
    /// Count the calls from before the open (its recovery and its reading
    /// of every page included), not from the first transaction.
    #[arg(long)]
    pub include_open: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

fn parse_io_fault(s: &str) -> Result<flushwise_lab::torture::IoFault, String> {
    s.parse()
}

#[derive(Args, Debug)]
pub struct TortureArgs {
    /// Crash points to try (sync points in turn, then again with new seeds).
    #[arg(long, default_value_t = 300)]
    pub crash_points: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// bank (transfers, conserved total), tpcc (one warehouse), secondary
    /// (rows in a table with three secondary indexes, the change buffer on,
    /// every index compared with its rows) or mixed (of every four trials
    /// two bank, one tpcc, one secondary).
    #[arg(long, default_value = "mixed", value_parser = parse_torture_workload)]
    pub workload: flushwise_lab::torture::TortureWorkload,
    /// Workload threads in each trial.
    #[arg(long, default_value_t = 3)]
    pub threads: u32,
    /// Transactions each thread runs if no cut stops it.
    #[arg(long, default_value_t = 40)]
    pub txns_per_thread: u32,
    /// Trials at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// 1: an acknowledged commit must survive (a lost one fails the
    /// torture); 0 or 2: lost commits are counted, consistency still
    /// checked.
    #[arg(long, default_value_t = 1)]
    pub flush_log_at_trx_commit: u8,
    /// Model a drive that acknowledges fsyncs it never did: commits are
    /// lost whatever the engine does, and the torture must say so.
    #[arg(long)]
    pub lying_fsync: bool,
    /// Page-cleaning policy of the runs; `name:key=value,...` sets its
    /// parameters.
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Turn the doublewrite buffer off: a torn page can then not be
    /// repaired, and recovery must refuse it (reported as a failure).
    #[arg(long)]
    pub no_doublewrite: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

fn parse_torture_workload(s: &str) -> Result<flushwise_lab::torture::TortureWorkload, String> {
    s.parse()
}

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Every experiment: name, what it reproduces, shell and scale.
    List(LabListArgs),
    /// Runs one experiment, or `all`, into `--out/NAME/` (figure as SVG
    /// and PNG, CSV, result.json with the verdicts); finished runs are
    /// cached by configuration hash and skipped when run again.
    Run(LabRunArgs),
    /// Gathers every result under `--out` into one self-contained
    /// `report.html`.
    Report(LabReportArgs),
}

#[derive(Args, Debug)]
pub struct LabReportArgs {
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Open the report in the desktop's browser (`xdg-open`).
    #[arg(long)]
    pub open: bool,
    /// Load the report in headless Chromium and fail unless every figure
    /// on it loaded.
    #[arg(long)]
    pub check: bool,
    /// Also save a screenshot of the report, taken by headless Chromium.
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Scroll the screenshot to this entry (its section's anchor).
    #[arg(long, value_name = "ENTRY", requires = "screenshot")]
    pub at: Option<String>,
}

#[derive(Args, Debug)]
pub struct LabListArgs {
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// What `lab run` prints on stdout.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabOutput {
    /// The report with its verdicts.
    Table,
    /// Only the experiment's main CSV (the report goes to stderr).
    Csv,
}

#[derive(Args, Debug)]
pub struct LabRunArgs {
    #[command(flatten)]
    pub grid: ExperimentArgs,
    /// Where the engine entries' prepared database (and its per-run copy)
    /// live, as `compare --dir`: prepared once, reused after.
    #[arg(long, value_name = "DIR", default_value = "flushwise-data")]
    pub dir: PathBuf,
    #[arg(long, value_enum, default_value = "table")]
    pub output: LabOutput,
    /// `own-policy-matrix` only: run `flushwise` and the best other policy
    /// again at seeds seed+1 .. seed+N-1 in every cell where they are within
    /// 2 % of each other, and say whether flushwise is ahead at every seed,
    /// behind at every seed, or a tie (writes own-policy-matrix-seeds.csv).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seeds: u32,
}

#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// One run of one policy.
    Run(Box<RunArgs>),
    /// The same run for several policies, side by side.
    Compare(Box<CompareArgs>),
    /// A paper experiment's grid (`list` shows them).
    Experiment(ExperimentArgs),
    /// Simulated buffer requests per wall-clock second on one core.
    Bench(BenchArgs),
    /// A grid of runs from a JSON file (policy x parameters x pool x device
    /// x workload ...), one CSV row per run.
    Sweep(crate::sweep_cmd::SweepArgs),
}

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Writes a TPC-C model trace in the flushwise format.
    RecordModel(RecordModelArgs),
    /// Exports a trace to libCacheSim's oracleGeneral binary format.
    OracleGeneral(OracleGeneralArgs),
    /// Prints a trace's header and record counts; checks it end to end.
    Info(InfoArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Tpcc,
    /// The TPC-H throughput test's page-reference model (`--sf`).
    Tpch,
    /// Paper 004's insert load's page-reference model (`--rows`,
    /// `--secondary-indexes`, `--change-buffer`).
    Insert,
    Trace,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
}

/// Flags shared by `sim run` and `sim compare`. Defaults finish in seconds.
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    #[arg(long, value_enum, default_value = "tpcc")]
    pub workload: WorkloadKind,
    /// Trace file to replay (with --workload trace).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// TPC-C scale factor.
    #[arg(long, default_value_t = 10)]
    pub warehouses: u32,
    /// TPC-H scale factor (with --workload tpch).
    #[arg(long, default_value_t = 1.0)]
    pub sf: f64,
    /// TPC-H: no refresh stream (every connection runs queries; by default
    /// connection 0 runs RF1/RF2).
    #[arg(long)]
    pub no_refresh: bool,
    /// Insert load (with --workload insert): rows loaded.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// Insert load: non-unique secondary indexes on random keys.
    #[arg(long, default_value_t = 3)]
    pub secondary_indexes: u32,
    /// Insert load: the change buffer's model, off or on.
    #[arg(long, default_value = "off")]
    pub change_buffer: String,
    /// Insert load: the change buffer's largest share of the pool, percent.
    #[arg(long, default_value_t = 25)]
    pub change_buffer_max_pct: u8,
    /// Insert load: percent of transactions that update a loaded row's
    /// secondary columns (`k = k + 1`) instead of inserting, 0 to 100.
    #[arg(long, default_value_t = 0)]
    pub update_pct: u8,
    /// TPC-C transaction mix: standard (45/43/4/4/4) or read-mostly
    /// (10/6/40/4/40: 80 % Order-Status and Stock-Level).
    #[arg(long, default_value = "standard")]
    pub mix: String,
    /// Database connections (agents); a trace brings its own.
    #[arg(long, default_value_t = 20)]
    pub connections: u32,
    /// Buffer pool size, e.g. 64MiB, 1G.
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    pub buffer_pool: String,
    /// Redo log capacity (all log files together).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub redo: String,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    /// Data device: ssd, hdd, constant, a preset (samsung-850-pro, nvme-generic, wd-1tb-7200, db2-table3)
    /// or calibrated:FILE (a preset from `flushwise device calibrate`).
    #[arg(long, default_value = "ssd")]
    pub device: String,
    /// Redo log device (default: the same model as --device, a separate disk).
    #[arg(long)]
    pub log_device: Option<String>,
    /// Simulated warm-up excluded from the measurement, e.g. 30s, 5m.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub warmup: String,
    /// Simulated measured time.
    #[arg(long, value_name = "DURATION", default_value = "15s")]
    pub duration: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// CPU cores of the simulated server; 0 = unlimited.
    #[arg(long, default_value_t = 8)]
    pub cpu_cores: u32,
    /// Charge an engine run's measured CPU per transaction type (the
    /// `TRACE.cpu.json` that `tpcc run --trace TRACE` writes) instead of
    /// the default costs.
    #[arg(long, value_name = "FILE")]
    pub cpu_costs: Option<PathBuf>,
    /// In-place writes of a doublewrite batch in flight at once: 0 = all
    /// of them (MySQL 5.6.15, native AIO), 16 = what the engine does
    /// (use it to predict an engine run).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub in_place_write_depth: u32,
    /// Doublewrite slots for users' single-page flushes: at most this many
    /// at once, the others wait (MySQL 5.6 and the engine: 8; 0 = no limit)
    #[arg(long, value_name = "N", default_value_t = flushwise_sim::config::SINGLE_PAGE_SLOTS_MYSQL56)]
    pub single_page_slots: u32,
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub report_interval: String,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
    /// Also write the interval rows as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub intervals: Option<PathBuf>,
}

/// `--metrics-addr` and `--metrics-linger`: watch a run while it goes
/// (Prometheus text at `/metrics`, a live dashboard at `/`).
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve the run's metrics (Prometheus text format) at
    /// http://HOST:PORT/metrics and a live dashboard at http://HOST:PORT/;
    /// port 0 picks a free one. The address is printed on stderr.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Keep serving this long after the run ended (e.g. 30s), so the last
    /// values can still be scraped and seen.
    #[arg(long, value_name = "DURATION", default_value = "0s", requires = "metrics_addr")]
    pub metrics_linger: String,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// Page-cleaning policy; `name:key=value,...` sets its parameters
    /// (`flushwise policies` lists them).
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Write the policy decision log to FILE: as CSV, or, when FILE ends in
    /// `.jsonl`, one JSON object per page-cleaner iteration (Table-2 inputs,
    /// parameters before and after, rules fired).
    #[arg(long, value_name = "FILE")]
    pub decisions: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    /// Comma-separated policies, each `name` or `name:key=value,...`
    /// (`flushwise policies`); the first is the ratio baseline
    /// (default: every registered policy).
    #[arg(long)]
    pub policies: Option<PolicyList>,
    /// Runs in parallel (default: available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// An experiment grid by name, its scale, where to, how parallel
/// (`sim experiment`, `lab run`).
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment: `flushwise lab list` names them (`sim experiment`
    /// takes the papers' grids and `list`).
    pub name: String,
    /// Paper scale (hours of simulation) instead of the scaled default.
    #[arg(long)]
    pub full: bool,
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Runs in parallel (default: available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl ExperimentArgs {
    /// The lab's request for these flags.
    pub fn request(&self) -> flushwise_lab::experiment::ExperimentRequest {
        flushwise_lab::experiment::ExperimentRequest {
            name: self.name.clone(),
            full: self.full,
            seed: self.seed,
            jobs: self.jobs,
            out: self.out.clone(),
        }
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Buffer requests (page fixes) per measurement.
    #[arg(long, default_value_t = 2_000_000)]
    pub requests: u64,
}

#[derive(Args, Debug)]
pub struct RecordModelArgs {
    #[arg(long, default_value_t = 10)]
    pub warehouses: u32,
    #[arg(long, default_value_t = 20)]
    pub connections: u32,
    #[arg(long, default_value_t = 10_000)]
    pub transactions: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct OracleGeneralArgs {
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    pub file: PathBuf,
}

pub use flushwise_sim::options::{duration_flag, page_size_flag, size_flag};

impl SimArgs {
    /// The run's options as the simulator's one translation takes them
    /// ([`SimOptions`], shared with the Python package and the sweeps).
    pub fn options(&self, policy: &PolicySpec) -> SimOptions {
        SimOptions {
            workload: match self.workload {
                WorkloadKind::Tpcc => "tpcc",
                WorkloadKind::Tpch => "tpch",
                WorkloadKind::Insert => "insert",
                WorkloadKind::Trace => "trace",
            }
            .into(),
            trace: self.trace.clone(),
            warehouses: self.warehouses,
            mix: self.mix.clone(),
            connections: self.connections,
            buffer_pool: self.buffer_pool.clone(),
            redo: self.redo.clone(),
            page_size: self.page_size.clone(),
            device: self.device.clone(),
            log_device: self.log_device.clone(),
            warmup: self.warmup.clone(),
            duration: self.duration.clone(),
            seed: self.seed,
            cpu_cores: self.cpu_cores,
            cpu_costs: self.cpu_costs.clone(),
            in_place_write_depth: self.in_place_write_depth,
            single_page_slots: self.single_page_slots,
            report_interval: self.report_interval.clone(),
            policy: policy.to_string(),
            sf: self.sf,
            refresh: !self.no_refresh,
            rows: self.rows,
            secondary_indexes: self.secondary_indexes,
            change_buffer: self.change_buffer.clone(),
            change_buffer_max_pct: self.change_buffer_max_pct,
            update_pct: self.update_pct,
        }
    }

    /// The simulator configuration these flags describe, for `policy`.
    pub fn to_config(&self, policy: &PolicySpec) -> Result<SimConfig, String> {
        self.options(policy).to_config_with(policy.clone())
    }
}

// ---------------------------------------------------------------------------
// The real engine: `tpcc prepare|run|check|export` and `compare`.
// ---------------------------------------------------------------------------

#[derive(Subcommand, Debug)]
pub enum TpccCommand {
    /// Creates a database in --dir and loads W warehouses.
    Prepare(TpccPrepareArgs),
    /// Runs the TPC-C mix on a prepared database.
    Run(Box<TpccRunArgs>),
    /// Checks the TPC-C consistency conditions (clause 3.3.2).
    Check(TpccCheckArgs),
    /// Kills (SIGKILL) a TPC-C run after a while, reopens the database and
    /// times its crash recovery, N times (`--max-recovery-time` checks the
    /// bound of `flushwise`).
    Crash(Box<TpccCrashArgs>),
    /// Writes the nine tables as CSV files.
    Export(TpccExportArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

/// Where a database lives.
#[derive(Args, Debug, Clone)]
pub struct DbLocationArgs {
    /// The database directory (its files, and `flushwise-tpcc.json`).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Put the redo log in this directory instead (a separate disk, as Lee et
    /// al. §5.1 did); give it again on every later command.
    #[arg(long, value_name = "DIR")]
    pub redo_dir: Option<PathBuf>,
    /// Data-file I/O: direct (O_DIRECT, no OS page cache: what a measurement
    /// needs) or buffered (any filesystem).
    #[arg(long, value_name = "MODE", default_value = "direct")]
    pub io: String,
}

#[derive(Args, Debug)]
pub struct TpccPrepareArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,
    /// Loader threads (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    /// Redo log capacity at creation (`run --redo` can resize it later).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub redo: String,
    /// Buffer pool while loading.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_pool: String,
    /// Wipe the database already in --dir (a finished one, or what an
    /// interrupted prepare left) and load again.
    #[arg(long)]
    pub force: bool,
}

/// The engine and load flags shared by `tpcc run` and `compare`.
#[derive(Args, Debug, Clone)]
pub struct EngineRunArgs {
    /// Connections (terminal threads).
    #[arg(long, default_value_t = 16)]
    pub connections: u32,
    /// Buffer pool [default: 32MiB for `tpcc run`; `compare` takes its
    /// preset's].
    #[arg(long, value_name = "SIZE")]
    pub buffer_pool: Option<String>,
    /// Resize the redo log to SIZE before the run (a cleanly closed database
    /// only); default: keep the capacity it has.
    #[arg(long, value_name = "SIZE")]
    pub redo: Option<String>,
    /// `native` (this machine's disk) or `emulated PRESET` (real I/O whose
    /// completion follows a device model: samsung-850-pro, nvme-generic,
    /// wd-1tb-7200, db2-table3, ssd, hdd).
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "PRESET"], default_value = "native")]
    pub device: Vec<String>,
    #[arg(long, value_enum, default_value = "on")]
    pub doublewrite: OnOff,
    /// `innodb_flush_log_at_trx_commit`: 1 fsync at commit, 2 write at
    /// commit and fsync each second, 0 both each second.
    #[arg(long, value_name = "0|1|2", default_value_t = 1)]
    pub flush_log_at_commit: u8,
    /// Excluded from the measurement, e.g. 30s, 2m, or `steady` / `steady:MAX`
    /// (at least 3 min, then until the policy's tuned parameters hold still
    /// for 60 s, at most MAX, 12 min by default) [default: 30s for `tpcc
    /// run`; `compare` takes its preset's].
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Measured time [default: 60s; `compare` takes its preset's].
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub report_interval: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Use TPC-C's keying and think times (clause 5.2.5); by default
    /// terminals submit back to back, as in Lee et al. §5.1.
    #[arg(long)]
    pub keying_think: bool,
    /// Crash recovery must finish within this, e.g. 5s (sets
    /// `max_recovery_time_s` of the `flushwise` policy; other policies do
    /// not bound recovery time and are refused) [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub max_recovery_time: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

impl EngineRunArgs {
    /// `--buffer-pool`, or `tpcc run`'s default.
    pub fn buffer_pool(&self) -> &str {
        self.buffer_pool.as_deref().unwrap_or("32MiB")
    }
    /// `--warmup`, or `tpcc run`'s default.
    pub fn warmup(&self) -> &str {
        self.warmup.as_deref().unwrap_or("30s")
    }
    /// `--duration`, or `tpcc run`'s default.
    pub fn duration(&self) -> &str {
        self.duration.as_deref().unwrap_or("60s")
    }
}

#[derive(Args, Debug)]
pub struct TpccRunArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    #[command(flatten)]
    pub engine: EngineRunArgs,
    /// Page-cleaning policy; `name:key=value,...` sets its parameters
    /// (`flushwise policies` lists them).
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Record the page-reference trace of the measured run (warm-up
    /// included) in the simulator's format to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Also write the interval rows as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub intervals: Option<PathBuf>,
    /// Write one JSON object per page-cleaner iteration to FILE (JSON lines:
    /// Lee et al.'s Table-2 inputs, parameters before and after, the rules
    /// that fired; schema in `flushwise_core::iteration_log`).
    #[arg(long, value_name = "FILE.jsonl")]
    pub decisions: Option<PathBuf>,
    /// Print `new-order-committed W D O` on stdout after each New-Order
    /// commit returns (for crash tests: what was acknowledged).
    #[arg(long, hide = true)]
    pub print_new_orders: bool,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

#[derive(Args, Debug)]
pub struct TpccCrashArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    #[command(flatten)]
    pub engine: EngineRunArgs,
    /// Page-cleaning policy of the runs (and of the reopen).
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// How long each run goes on before it is killed, warm-up included.
    #[arg(long, value_name = "DURATION", default_value = "120s")]
    pub kill_after: String,
    /// Crashes and recoveries, one after the other on the same database.
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
}

#[derive(Args, Debug)]
pub struct TpccCheckArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Also check condition 11 (holds only right after `prepare`).
    #[arg(long)]
    pub condition_11: bool,
}

#[derive(Args, Debug)]
pub struct TpccExportArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Output directory for the nine `<table>.csv` files.
    #[arg(long, value_name = "CSVDIR")]
    pub out: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct EngineCompareArgs {
    /// Where the prepared database (and the per-run copies) live.
    #[arg(long, value_name = "DIR", default_value = "flushwise-data")]
    pub dir: PathBuf,
    /// Put the redo logs (of the prepared database and of every per-policy
    /// copy) in this directory instead: a separate disk, as Lee et al. §5.1.
    #[arg(long, value_name = "DIR")]
    pub redo_dir: Option<PathBuf>,
    /// Data-file I/O: direct (O_DIRECT, no OS page cache: what a measurement
    /// needs) or buffered (any filesystem).
    #[arg(long, value_name = "MODE", default_value = "direct")]
    pub io: String,
    /// Which setup to run (warehouses, pool, redo, warm-up, duration);
    /// explicit flags override its values: paper-regime, paper-regime-quick,
    /// paper-warmup, small-pool, in-memory (README, "The two commands").
    #[arg(long, default_value = "paper-regime", value_parser = preset_parser())]
    pub preset: &'static ComparePreset,
    /// TPC-C scale [default: the preset's].
    #[arg(long)]
    pub warehouses: Option<u32>,
    /// Comma-separated policies, each `name` or `name:key=value,...`
    /// (`flushwise policies`); the first is the ratio baseline.
    #[arg(long, default_value = "mysql56,percona56,self-tuning,flushwise")]
    pub policies: PolicyList,
    #[command(flatten)]
    pub engine: EngineRunArgs,
    /// Results directory (a subdirectory per run of `compare`).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Also write each policy's page-cleaner iterations as JSON lines to
    /// `OUT/decisions-<policy>.jsonl`.
    #[arg(long)]
    pub decisions: bool,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sim run` with no flags means what `SimOptions::default()` means,
    /// so the Python package's defaults are the command line's.
    #[test]
    fn sim_flag_defaults_are_the_simulator_options_defaults() {
        let cli = Cli::try_parse_from(["flushwise", "sim", "run"]).unwrap();
        let Command::Sim(SimCommand::Run(args)) = cli.command else {
            panic!("not sim run")
        };
        assert_eq!(args.sim.options(&args.policy), SimOptions::default());
    }
}

#[derive(Subcommand, Debug)]
pub enum TpchCommand {
    /// Creates a database directory and loads the eight tables.
    Prepare(TpchPrepareArgs),
    /// The power test (RF1, the 22 queries, RF2) and the throughput test
    /// (S query streams and a refresh stream), with the flushing figures.
    Run(TpchRunArgs),
    /// The 22 queries with the specification's validation parameters:
    /// their answers (what the DuckDB check compares).
    Answers(TpchAnswersArgs),
    /// Writes the eight tables as CSV.
    Export(TpchExportArgs),
}

#[derive(Args, Debug)]
pub struct TpchPrepareArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Scale factor: SF 1 is about 1 GB of rows (6 million order lines).
    #[arg(long, default_value_t = 1.0)]
    pub sf: f64,
    /// Loader threads (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub redo: String,
    /// Buffer pool of the load.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_pool: String,
    /// Wipe a database already in the directory and load again.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct TpchRunArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Page-cleaning policy; `name:key=value,...` sets its parameters.
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Query streams of the throughput test (Lee et al.: 10); 0 skips it.
    #[arg(long, default_value_t = 2)]
    pub streams: u32,
    /// Skip the power test.
    #[arg(long)]
    pub no_power: bool,
    /// Skip the refresh functions (queries only).
    #[arg(long)]
    pub no_refresh: bool,
    /// Every query with the specification's validation parameters instead
    /// of random substitution parameters.
    #[arg(long)]
    pub validation_params: bool,
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    pub buffer_pool: String,
    /// Resize the redo log to SIZE before the run.
    #[arg(long, value_name = "SIZE")]
    pub redo: Option<String>,
    /// `native` or `emulated PRESET`.
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "PRESET"], default_value = "native")]
    pub device: Vec<String>,
    #[arg(long, value_enum, default_value = "on")]
    pub doublewrite: OnOff,
    #[arg(long, value_name = "0|1|2", default_value_t = 1)]
    pub flush_log_at_commit: u8,
    /// Crash recovery must finish within this (the `flushwise` policy).
    #[arg(long, value_name = "DURATION")]
    pub max_recovery_time: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write every query's timing as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct TpchAnswersArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct TpchExportArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Directory for the CSV files (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum WisconsinCommand {
    /// Creates a database directory and loads the Wisconsin relation
    /// (keyed by unique1).
    Prepare(WisconsinPrepareArgs),
    /// 003's load: `UPDATE SET unique3=? WHERE unique1=?` requests, open
    /// loop (`--rate`) or closed loop (`--jobs`); writes the requests,
    /// per-interval series, CDF and a figure to `--out`/<label>/.
    Run(WisconsinRunArgs),
    /// Fits 003's model (ND, JQ, DPB) to the runs under `--runs`, simulates
    /// it at the same rates and populations, prints Table 1's analogue and
    /// the Kolmogorov-Smirnov distances, writes the side-by-side figures.
    Model(WisconsinModelArgs),
}

#[derive(Args, Debug)]
pub struct WisconsinPrepareArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Tuples (003: 10^7 on a 16 MB pool; 10^6 is about 240 MB of pages).
    #[arg(long, default_value_t = 1_000_000)]
    pub tuples: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    pub redo: String,
    /// Buffer pool of the load.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_pool: String,
    /// Wipe a database already in the directory and load again.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct WisconsinRunArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Page-cleaning policy; `name:key=value,...` sets its parameters.
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Open loop: Poisson arrivals at this many requests per second.
    #[arg(long, value_name = "LAMBDA", conflicts_with = "jobs")]
    pub rate: Option<f64>,
    /// Open loop: worker threads serving the arrivals (003: 200).
    #[arg(long, default_value_t = 200)]
    pub workers: u32,
    /// Closed loop: this many requests in the system at all times.
    #[arg(long, value_name = "N")]
    pub jobs: Option<u32>,
    /// The same load before the measured part, not recorded (the pool
    /// fills with dirty pages meanwhile).
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub warmup: String,
    /// How long requests are offered and recorded after the warm-up.
    #[arg(long, value_name = "DURATION", default_value = "300s")]
    pub duration: String,
    /// Pool counters are sampled (and the series binned) this often.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub sample_interval: String,
    /// 003: 16 MB.
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    pub buffer_pool: String,
    /// Resize the redo log to SIZE before the run.
    #[arg(long, value_name = "SIZE")]
    pub redo: Option<String>,
    /// `native` or `emulated PRESET` (003 used a hard disk: `emulated wd-1tb-7200`).
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "PRESET"], default_value = "native")]
    pub device: Vec<String>,
    #[arg(long, value_enum, default_value = "on")]
    pub doublewrite: OnOff,
    #[arg(long, value_name = "0|1|2", default_value_t = 1)]
    pub flush_log_at_commit: u8,
    /// Crash recovery must finish within this (the `flushwise` policy).
    #[arg(long, value_name = "DURATION")]
    pub max_recovery_time: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs go to OUT/<label>/ (`open-<rate>`, `closed-<jobs>`).
    #[arg(long, value_name = "DIR", default_value = "results/wisconsin")]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct WisconsinModelArgs {
    /// The `--out` of earlier `wisconsin run`s: one directory per run.
    #[arg(long, value_name = "DIR", default_value = "results/wisconsin")]
    pub runs: PathBuf,
    /// Figures and model.json go here [default: RUNS/model].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of the model's simulations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

#[derive(Subcommand, Debug)]
pub enum InsertCommand {
    /// Creates a database directory and bulk-loads the table: a unique
    /// primary index and N non-unique secondary indexes on random keys.
    Prepare(InsertPrepareArgs),
    /// Threads inserting one row per transaction into the primary and every
    /// secondary index; reports transactions/s, page I/O per second, page reads
    /// and writes by page type (INDEX vs change buffer) and latency.
    Run(Box<InsertRunArgs>),
    /// Checks that every secondary index holds exactly one entry per row,
    /// with the key the row says (recovers a crashed database first).
    Check(InsertCheckArgs),
}

#[derive(Args, Debug)]
pub struct InsertPrepareArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Rows (1,000,000 with 3 secondary indexes make a data file of about
    /// 290 MB, loaded in seconds).
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// Non-unique secondary indexes, each on a random 32-bit key per row.
    #[arg(long, default_value_t = flushwise_workloads::insert::schema::SECONDARY_INDEXES_DEFAULT)]
    pub secondary_indexes: u32,
    /// Bytes of a row: its secondary keys plus filler (sysbench's `c` is
    /// 120 characters).
    #[arg(long, value_name = "BYTES", default_value_t = flushwise_workloads::insert::schema::ROW_BYTES_DEFAULT)]
    pub row_bytes: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Loader threads, one index each at a time (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, value_name = "BYTES", default_value = "16384")]
    pub page_size: String,
    /// Redo log capacity at creation (`run --redo` can resize it later).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub redo: String,
    /// Buffer pool of the load.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_pool: String,
    /// Wipe a database already in the directory and load again.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct InsertRunArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
    /// Page-cleaning policy; `name:key=value,...` sets its parameters.
    #[arg(long, default_value = flushwise_core::policy::DEFAULT_POLICY)]
    pub policy: PolicySpec,
    /// Inserting threads, no think time (004: 50).
    #[arg(long, default_value_t = 16)]
    pub threads: u32,
    /// Inserts before the measured window, not measured.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub warmup: String,
    /// The measured window.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub duration: String,
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub report_interval: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Buffer pool (004: 1 GB for 100 GB of data).
    #[arg(long, value_name = "SIZE", default_value = "32MiB")]
    pub buffer_pool: String,
    /// Resize the redo log to SIZE before the run.
    #[arg(long, value_name = "SIZE")]
    pub redo: Option<String>,
    /// `native` or `emulated PRESET` (004 ran an SSD and a 7200 rpm disk:
    /// `emulated samsung-850-pro`, `emulated wd-1tb-7200`).
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "PRESET"], default_value = "native")]
    pub device: Vec<String>,
    #[arg(long, value_enum, default_value = "on")]
    pub doublewrite: OnOff,
    #[arg(long, value_name = "0|1|2", default_value_t = 1)]
    pub flush_log_at_commit: u8,
    /// Crash recovery must finish within this (the `flushwise` policy).
    #[arg(long, value_name = "DURATION")]
    pub max_recovery_time: Option<String>,
    /// The change buffer (InnoDB's insert buffer): off, on (in the data
    /// file), or separate-device (in a file of its own, `--change-buffer-dir`).
    #[arg(long, value_name = "MODE", default_value = "off")]
    pub change_buffer: String,
    /// Largest size of the change buffer, percent of the buffer pool
    /// (`innodb_change_buffer_max_size`), 1 to 50.
    #[arg(long, value_name = "P", default_value_t = u32::from(flushwise_engine::db::change_buffer::DEFAULT_MAX_PCT))]
    pub change_buffer_max_pct: u32,
    /// Percent of transactions that update a loaded row's secondary
    /// columns (`k = k + 1` on each, sysbench's `oltp_update_index`: a
    /// delete and an insert per secondary index) instead of inserting a
    /// row; 0 to 100.
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub update_pct: u32,
    /// With `--change-buffer separate-device`: the directory of its file
    /// (`/dev/shm` for 004's ramdisk) [default: beside the data file].
    #[arg(long, value_name = "DIR")]
    pub change_buffer_dir: Option<PathBuf>,
    /// After the run, check every secondary entry against its row (exit 2
    /// on a mismatch).
    #[arg(long)]
    pub check: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct InsertCheckArgs {
    #[command(flatten)]
    pub location: DbLocationArgs,
}
