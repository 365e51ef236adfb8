//! Crash torture: the real engine on a [`PowerLossDisk`], the power cut at
//! one sync point after another, recovery, and a check that nothing
//! acknowledged was lost.
//!
//! A trial starts from a prepared database image (built once per torture,
//! cleanly closed), opens it on a fresh power-loss disk whose power fails
//! at sync point k (the k-th `sync_data` of any file: data, doublewrite,
//! redo or the change buffer's own), and runs a workload on a few threads
//! until the cut stops it. The workloads: **bank** (transfers between
//! accounts), **tpcc** (one warehouse), **secondary** (rows inserted,
//! updated and deleted in a table with three secondary indexes, the
//! change buffer on: [`secondary`]); **mixed** rotates bank, tpcc, bank,
//! secondary.
//! The disk then keeps, drops or tears each unsynced write as the trial's
//! seed says (the model is in [`flushwise_engine::storage::power_loss`]).
//! A quarter of the trials cut the power a second time, during recovery.
//! The database is then opened (crash recovery, timed) and checked:
//! - **no acknowledged commit lost**: every transaction whose `commit`
//!   returned Ok is there;
//! - **no effect of a transaction that never committed**: one rolled back,
//!   or stopped by the cut before it asked to commit, left nothing; a
//!   transaction whose commit was under way at the cut may be there or not,
//!   but whole (all its changes or none);
//! - **invariants**: the bank's total is conserved and every account holds
//!   its initial balance plus exactly the transfers present; TPC-C's
//!   consistency conditions 1-4 hold; every secondary index of the
//!   `secondary` table holds exactly one entry per row, under the row's
//!   key, and nothing else (no entry lost or duplicated through the change
//!   buffer), and no change-buffer merge met an insert already in its leaf
//!   or a delete of an absent entry; the engine's own structural check
//!   (`Database::check`, the change buffer's tree against its claims
//!   included) passes.
//!
//! The change buffer is exercised, not just switched on: the report counts
//! the trials whose database held buffered changes when the cut came and
//! those whose recovered change-buffer tree still held entries, which the
//! checks' reads then merged ([`ChangeBufferTotals`]). `secondary` trials
//! alternate the change buffer in the data file (`on`) and in a file of
//! its own (`separate-device`); on this disk the own file is a second
//! persistent device whose unsynced writes the cut keeps, drops or tears
//! like the others (`004`'s ramdisk, whose contents a power cut loses
//! whole, is not what is modelled: no engine could recover the changes
//! buffered there).
//!
//! Sync points are taken in turn: a workload's n-th trial cuts at point
//! `(n mod S) + 1`, where S is the number of sync points a reference run
//! of the workload makes, so every point is tried before any is tried
//! twice (with a new seed each round; `secondary`'s reference run has the
//! change buffer `on`, and its modes swap each round, so every point is
//! cut in both). The trials run with `flush_log_at_trx_commit = 1`,
//! whose promise is that an acknowledged commit survives any crash.
//!
//! Determinism: the seed fixes every workload input and every cut
//! decision; the interleaving of the engine's threads is the machine's,
//! so a failure is reported with its crash point and seed and reproduced
//! by running that trial again (usually the same outcome, not always).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flushwise_core::policy::PolicySpec;
use flushwise_engine::btree::Direction;
use flushwise_engine::db::{
    ChangeBufferMode, ChangeBufferOptions, ChangeBufferStats, Database, DbError, DbOptions, IndexId,
};
use flushwise_engine::page::PageSize;
use flushwise_engine::redo::FlushMode;
use flushwise_engine::storage::{CutReport, DiskCounters, DiskFaultPlan, DiskImage, PowerLossDisk, StorageOpener};
use flushwise_workloads::tpcc::check::check as tpcc_check;
use flushwise_workloads::tpcc::load::{prepare, require_loaded, LoadConfig};
use flushwise_workloads::tpcc::random::{self, NurandConstants, Rng64};
use flushwise_workloads::tpcc::schema::{order_key, Index};
use flushwise_workloads::tpcc::store::{TpccStore, TpccTxn};
use flushwise_workloads::tpcc::txn::{execute, generate, Outcome, TerminalContext, TxnInput, TxnKind};
use serde::Serialize;

mod secondary;

/// Where the torture's database lives on the power-loss disk (a name only).
const DB_DIR: &str = "/torture";
/// Where the change buffer's own file lives in `separate-device` trials:
/// another file on the same power-loss disk (a name only).
const CHANGE_BUFFER_DIR: &str = "/torture-change-buffer";
/// Bank accounts and their opening balance.
pub const BANK_ACCOUNTS: u32 = 20_000;
pub const BANK_OPENING_BALANCE: i64 = 10_000;
/// Bytes of an account row: big enough that the accounts span many pages.
const ACCOUNT_ROW_BYTES: usize = 120;
/// One transfer in this many is rolled back on purpose.
const BANK_ROLLBACK_ONE_IN: u64 = 8;
/// Retries of a transfer or TPC-C transaction after a deadlock or timeout.
const RETRIES_MAX: u32 = 50;
/// Failures kept in the report (the count is exact).
pub const FAILURES_KEPT_MAX: usize = 20;
/// A second cut during recovery falls within its first this many syncs.
const RECOVERY_CUT_WITHIN_SYNCS: u64 = 12;

/// The workload of a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TortureWorkload {
    /// Transfers between accounts with a conserved total.
    Bank,
    /// TPC-C's five transactions on one warehouse.
    Tpcc,
    /// Rows inserted, updated and deleted in a table with three
    /// secondary indexes, with the change buffer on (issue #16).
    Secondary,
    /// Of every four trials two bank, one TPC-C and one secondary.
    Mixed,
}

/// The rotation of `mixed`: trial i runs `MIXED_ROTATION[i % 4]`.
const MIXED_ROTATION: [TortureWorkload; 4] = [
    TortureWorkload::Bank,
    TortureWorkload::Tpcc,
    TortureWorkload::Bank,
    TortureWorkload::Secondary,
];

impl TortureWorkload {
    pub const ACCEPTED: [&'static str; 4] = ["bank", "tpcc", "secondary", "mixed"];

    fn for_trial(self, trial: u64) -> TortureWorkload {
        match self {
            TortureWorkload::Mixed => MIXED_ROTATION[(trial % 4) as usize],
            w => w,
        }
    }

    /// How many trials of the same workload came before trial `trial`
    /// (its place in that workload's cycle of sync points).
    fn nth_of_its_kind(self, trial: u64) -> u64 {
        if self != TortureWorkload::Mixed {
            return trial;
        }
        let kind = self.for_trial(trial);
        let per_rotation = MIXED_ROTATION.iter().filter(|w| **w == kind).count() as u64;
        let earlier = MIXED_ROTATION[..(trial % 4) as usize]
            .iter()
            .filter(|w| **w == kind)
            .count() as u64;
        trial / 4 * per_rotation + earlier
    }

    /// The workloads whose trials a torture of `self` runs.
    fn runs(self, w: TortureWorkload) -> bool {
        self == w || (self == TortureWorkload::Mixed && MIXED_ROTATION.contains(&w))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TortureWorkload::Bank => "bank",
            TortureWorkload::Tpcc => "tpcc",
            TortureWorkload::Secondary => "secondary",
            TortureWorkload::Mixed => "mixed",
        }
    }
}

/// What one trial opens: its workload and where the change buffer is
/// (off but for `secondary`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TrialKind {
    workload: TortureWorkload,
    change_buffer: ChangeBufferMode,
}

impl TrialKind {
    /// The workload's trial number `nth` of a cycle of `points` sync
    /// points. `secondary` alternates the change buffer in the data file
    /// (`on`) and in a file of its own (`separate-device`), flipped each
    /// cycle so that every point is cut in both modes.
    fn of_trial(workload: TortureWorkload, nth: u64, points: u64) -> Self {
        let mut kind = TrialKind::from(workload);
        if workload == TortureWorkload::Secondary && (nth % points.max(1) + nth / points.max(1)) % 2 == 1 {
            kind.change_buffer = ChangeBufferMode::SeparateDevice;
        }
        kind
    }
}

impl From<TortureWorkload> for TrialKind {
    fn from(workload: TortureWorkload) -> Self {
        let change_buffer = match workload {
            TortureWorkload::Secondary => ChangeBufferMode::On,
            _ => ChangeBufferMode::Off,
        };
        Self {
            workload,
            change_buffer,
        }
    }
}

impl std::str::FromStr for TortureWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bank" => Ok(TortureWorkload::Bank),
            "tpcc" => Ok(TortureWorkload::Tpcc),
            "secondary" => Ok(TortureWorkload::Secondary),
            "mixed" => Ok(TortureWorkload::Mixed),
            _ => Err(format!(
                "unknown torture workload {s:?}; choose one of {}",
                TortureWorkload::ACCEPTED.join(", ")
            )),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct TortureConfig {
    pub crash_points: u64,
    pub seed: u64,
    pub workload: TortureWorkload,
    /// Worker threads of the workload in a trial.
    pub threads: u32,
    /// Transactions each worker runs if no cut stops it.
    pub txns_per_thread: u32,
    /// Trials run at once.
    pub jobs: usize,
    /// `innodb_flush_log_at_trx_commit` of the workload: 1 promises that
    /// no acknowledged commit is lost; 0 and 2 may lose the last second's
    /// (counted, not failures), never consistency.
    pub flush_log_at_trx_commit: u8,
    /// The disk acknowledges fsyncs it never did (a drive that lies about
    /// its cache flushes): nothing written after the prepared image is
    /// durable, so commits are lost whatever the engine does. Shows that
    /// the torture catches lost commits.
    pub lying_fsync: bool,
    /// Page-cleaning policy of the runs and recoveries.
    #[serde(serialize_with = "policy_name")]
    pub policy: PolicySpec,
    /// The doublewrite buffer. Off, a torn page cannot be repaired: the
    /// torture must then see recovery refuse the page (a checksum
    /// mismatch), never a silently wrong answer.
    pub doublewrite: bool,
}

fn policy_name<S: serde::Serializer>(p: &PolicySpec, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string())
}

impl Default for TortureConfig {
    fn default() -> Self {
        Self {
            crash_points: 300,
            seed: 1,
            workload: TortureWorkload::Mixed,
            threads: 3,
            txns_per_thread: 40,
            jobs: 2,
            flush_log_at_trx_commit: 1,
            lying_fsync: false,
            policy: PolicySpec::default(),
            doublewrite: true,
        }
    }
}

impl TortureConfig {
    fn flush_mode(&self) -> FlushMode {
        FlushMode::from_innodb(self.flush_log_at_trx_commit).unwrap_or(FlushMode::SyncAtCommit)
    }

    /// True if an acknowledged commit must survive a crash.
    pub fn promises_durable_commits(&self) -> bool {
        self.flush_mode() == FlushMode::SyncAtCommit
    }

    /// Options of the workload's open.
    fn run_options(&self, disk: &PowerLossDisk, kind: TrialKind) -> Result<DbOptions, String> {
        Ok(DbOptions {
            flush_log_at_trx_commit: self.flush_mode(),
            ..options(disk, kind, self)?
        })
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.crash_points == 0 {
            return Err("--crash-points 0: give at least one crash point".into());
        }
        if !(1..=16).contains(&self.threads) {
            return Err(format!("--threads {}: give 1 to 16 workload threads", self.threads));
        }
        if !(1..=100_000).contains(&self.txns_per_thread) {
            return Err(format!(
                "--txns-per-thread {}: give 1 to 100000 transactions",
                self.txns_per_thread
            ));
        }
        if FlushMode::from_innodb(self.flush_log_at_trx_commit).is_none() {
            return Err(format!(
                "--flush-log-at-trx-commit {}: give 0, 1 or 2",
                self.flush_log_at_trx_commit
            ));
        }
        if !(1..=64).contains(&self.jobs) {
            return Err(format!("--jobs {}: give 1 to 64 trials at once", self.jobs));
        }
        Ok(())
    }
}

/// A trial that found something wrong.
#[derive(Clone, Debug, Serialize)]
pub struct TrialFailure {
    pub trial: u64,
    pub workload: TortureWorkload,
    /// Where the change buffer was: off, on, separate-device.
    pub change_buffer: String,
    pub crash_point: u64,
    pub seed: u64,
    pub what: String,
}

/// Totals of what the cuts did.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CutTotals {
    pub cuts: u64,
    pub unsynced_ops: u64,
    pub writes_kept: u64,
    pub writes_dropped: u64,
    pub writes_torn: u64,
    pub set_len_dropped: u64,
    pub cuts_drop_all: u64,
    pub cuts_keep_all: u64,
    pub cuts_mixed: u64,
    pub cuts_512b_sectors: u64,
    pub cuts_4k_sectors: u64,
}

impl CutTotals {
    fn add(&mut self, r: &CutReport) {
        use flushwise_engine::storage::CutMode;
        self.cuts += 1;
        self.unsynced_ops += r.unsynced_ops;
        self.writes_kept += r.writes_kept;
        self.writes_dropped += r.writes_dropped;
        self.writes_torn += r.writes_torn;
        self.set_len_dropped += r.set_len_dropped;
        match r.mode {
            CutMode::DropAll => self.cuts_drop_all += 1,
            CutMode::KeepAll => self.cuts_keep_all += 1,
            CutMode::Mixed { .. } => self.cuts_mixed += 1,
        }
        if r.sector_bytes == 512 {
            self.cuts_512b_sectors += 1;
        } else {
            self.cuts_4k_sectors += 1;
        }
    }
}

/// Recovery times, microseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RecoveryTimes {
    pub min_us: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

impl RecoveryTimes {
    fn of(mut us: Vec<u64>) -> Self {
        if us.is_empty() {
            return Self::default();
        }
        us.sort_unstable();
        let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
        Self {
            min_us: us[0],
            p50_us: at(0.5),
            p99_us: at(0.99),
            max_us: us[us.len() - 1],
        }
    }
}

/// What the change buffer held and did in the `secondary` trials: the
/// proof that the power cuts met buffered changes.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ChangeBufferTotals {
    /// Trials with the change buffer in the data file (`on`), and in a
    /// file of its own (`separate-device`).
    pub trials_on: u64,
    pub trials_separate_device: u64,
    /// Inserts and deletes the workloads put in the change buffer instead
    /// of their leaves, before the cuts.
    pub buffered_inserts: u64,
    pub buffered_deletes: u64,
    /// Trials whose database held buffered changes (leaves with entries
    /// in the change buffer) when the cut stopped the workload.
    pub trials_pending_at_cut: u64,
    /// Trials whose recovered change-buffer tree held entries at open:
    /// recovery kept buffered changes, and the check merged them.
    pub trials_pending_at_recovery: u64,
    /// Leaves with buffered entries at those opens, summed.
    pub pending_leaves_at_recovery: u64,
    /// Buffered entries merged into their leaves after recovery (by the
    /// checks' reads, the losers' rollback and the background merger).
    pub merged_after_recovery: u64,
    /// Buffered inserts a merge found already in their leaf, and buffered
    /// deletes that found no entry, before or after the cut: an entry
    /// duplicated or lost and absorbed by the merge (must be 0; counted
    /// as broken invariants).
    pub merge_duplicates: u64,
    pub merge_missing: u64,
}

impl ChangeBufferTotals {
    fn add(&mut self, kind: TrialKind, r: &TrialResult) {
        match kind.change_buffer {
            ChangeBufferMode::On => self.trials_on += 1,
            ChangeBufferMode::SeparateDevice => self.trials_separate_device += 1,
            ChangeBufferMode::Off => return,
        }
        self.buffered_inserts += r.cb_at_cut.buffered_inserts;
        self.buffered_deletes += r.cb_at_cut.buffered_deletes;
        self.trials_pending_at_cut += u64::from(r.cb_at_cut.pending_pages > 0);
        self.trials_pending_at_recovery += u64::from(r.cb_at_recovery.pending_pages > 0);
        self.pending_leaves_at_recovery += r.cb_at_recovery.pending_pages;
        self.merged_after_recovery += r.cb_after_check.merged_entries;
        self.merge_duplicates += r.cb_at_cut.merge_duplicates + r.cb_after_check.merge_duplicates;
        self.merge_missing += r.cb_at_cut.merge_missing + r.cb_after_check.merge_missing;
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TortureReport {
    pub crash_points: u64,
    pub bank_trials: u64,
    pub tpcc_trials: u64,
    pub secondary_trials: u64,
    /// Sync points of a reference run, per workload (the cycle of points).
    pub bank_sync_points: u64,
    pub tpcc_sync_points: u64,
    /// (with the change buffer `on`).
    pub secondary_sync_points: u64,
    /// Opens after a cut that succeeded (second cuts included).
    pub recoveries: u64,
    /// Trials whose recovery was itself cut.
    pub double_crashes: u64,
    /// Commits acknowledged before the cut, over all trials.
    pub acked_commits: u64,
    /// Acknowledged commits missing after recovery (must be 0).
    pub lost_commits: u64,
    /// Changes of transactions that never committed found after recovery
    /// (must be 0).
    pub uncommitted_effects: u64,
    /// Commits under way at the cut, and how many of them survived.
    pub in_flight_commits: u64,
    pub in_flight_survived: u64,
    /// Broken invariants: bank total or balances, TPC-C conditions, engine
    /// check (must be 0).
    pub broken_invariants: u64,
    /// Opens that failed after a cut (must be 0).
    pub recovery_errors: u64,
    pub redo_bytes_applied: u64,
    pub pages_repaired_from_doublewrite: u64,
    pub losers_rolled_back: u64,
    pub torn_log_tails: u64,
    pub cuts: CutTotals,
    pub change_buffer: ChangeBufferTotals,
    pub recovery_time: RecoveryTimes,
    pub failures_total: u64,
    pub failures: Vec<TrialFailure>,
    /// `innodb_flush_log_at_trx_commit` of the workload (lost commits are
    /// failures only at 1).
    pub flush_log_at_trx_commit: u8,
    pub elapsed_s: f64,
    pub seed: u64,
    pub commit: String,
}

impl TortureReport {
    pub fn passed(&self) -> bool {
        self.failures_total == 0
    }
}

/// The options every torture database is opened with: small pages, a pool
/// of a few dozen frames and a small log, so that every trial evicts,
/// writes through the doublewrite buffer and checkpoints.
fn options(disk: &PowerLossDisk, kind: TrialKind, cfg: &TortureConfig) -> Result<DbOptions, String> {
    let page_size = PageSize::new(4096).map_err(|e| e.to_string())?;
    let (pool, redo) = match kind.workload {
        TortureWorkload::Tpcc => (2 << 20, 4 << 20),
        _ => (256 << 10, 1 << 20),
    };
    let change_buffer = ChangeBufferOptions {
        mode: kind.change_buffer,
        dir: (kind.change_buffer == ChangeBufferMode::SeparateDevice).then(|| PathBuf::from(CHANGE_BUFFER_DIR)),
        ..ChangeBufferOptions::default()
    };
    Ok(DbOptions {
        page_size,
        buffer_pool_bytes: pool,
        redo_bytes: redo,
        flush_log_at_trx_commit: FlushMode::SyncAtCommit,
        checkpoint_interval: Duration::from_millis(20),
        lock_wait_timeout: Duration::from_millis(500),
        storage: Some(Arc::new(disk.clone()) as Arc<dyn StorageOpener>),
        policy: cfg.policy.clone(),
        doublewrite: cfg.doublewrite,
        change_buffer,
        ..DbOptions::default()
    })
}

fn account_key(a: u32) -> [u8; 4] {
    a.to_be_bytes()
}

fn account_row(balance: i64) -> Vec<u8> {
    let mut row = vec![b'.'; ACCOUNT_ROW_BYTES];
    row[..8].copy_from_slice(&balance.to_le_bytes());
    row
}

fn balance_of(row: &[u8]) -> Result<i64, String> {
    let b: [u8; 8] = row
        .get(..8)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| format!("account row of {} bytes, want {ACCOUNT_ROW_BYTES}", row.len()))?;
    Ok(i64::from_le_bytes(b))
}

/// A transfer row: from, to, amount.
fn transfer_row(from: u32, to: u32, amount: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(&from.to_le_bytes());
    v.extend_from_slice(&to.to_le_bytes());
    v.extend_from_slice(&amount.to_le_bytes());
    v
}

fn parse_transfer(row: &[u8]) -> Result<(u32, u32, i64), String> {
    if row.len() != 16 {
        return Err(format!("transfer row of {} bytes, want 16", row.len()));
    }
    let u = |r: std::ops::Range<usize>| u32::from_le_bytes(row[r].try_into().unwrap_or([0; 4]));
    let amount = i64::from_le_bytes(row[8..16].try_into().unwrap_or([0; 8]));
    Ok((u(0..4), u(4..8), amount))
}

/// The prepared databases, built once: those of the workloads the torture
/// runs.
struct Images {
    bank: Option<DiskImage>,
    tpcc: Option<(DiskImage, NurandConstants)>,
    secondary: Option<(DiskImage, secondary::Table)>,
}

impl Images {
    fn build(workload: TortureWorkload, cfg: &TortureConfig) -> Result<Self, String> {
        Ok(Self {
            bank: workload
                .runs(TortureWorkload::Bank)
                .then(|| build_bank_image(cfg))
                .transpose()?,
            tpcc: workload
                .runs(TortureWorkload::Tpcc)
                .then(|| build_tpcc_image(cfg))
                .transpose()?,
            secondary: workload
                .runs(TortureWorkload::Secondary)
                .then(|| build_secondary_image(cfg))
                .transpose()?,
        })
    }

    fn image(&self, workload: TortureWorkload) -> Result<&DiskImage, String> {
        match workload {
            TortureWorkload::Bank => self.bank.as_ref(),
            TortureWorkload::Tpcc => self.tpcc.as_ref().map(|(i, _)| i),
            TortureWorkload::Secondary => self.secondary.as_ref().map(|(i, _)| i),
            TortureWorkload::Mixed => None,
        }
        .ok_or_else(|| format!("no prepared {} database", workload.as_str()))
    }
}

fn build_bank_image(cfg: &TortureConfig) -> Result<DiskImage, String> {
    let disk = PowerLossDisk::new();
    let db = Database::create(DB_DIR, options(&disk, TortureWorkload::Bank.into(), cfg)?).map_err(|e| e.to_string())?;
    let accounts = db.create_index("accounts", true).map_err(|e| e.to_string())?;
    db.create_index("transfers", true).map_err(|e| e.to_string())?;
    let rows = (0..BANK_ACCOUNTS).map(|a| (account_key(a).to_vec(), account_row(BANK_OPENING_BALANCE)));
    db.load_sorted(accounts, rows).map_err(|e| e.to_string())?;
    db.close().map_err(|e| e.to_string())?;
    Ok(disk.durable_image())
}

fn build_tpcc_image(cfg: &TortureConfig) -> Result<(DiskImage, NurandConstants), String> {
    let seed = cfg.seed;
    let disk = PowerLossDisk::new();
    let db = Database::create(DB_DIR, options(&disk, TortureWorkload::Tpcc.into(), cfg)?).map_err(|e| e.to_string())?;
    let cfg = LoadConfig {
        warehouses: 1,
        threads: 1,
        seed,
        load_time_us: Some(1_700_000_000_000_000),
    };
    prepare(&db, &cfg, &|_| {}).map_err(|e| format!("tpcc prepare on the power-loss disk: {e}"))?;
    let marker = require_loaded(&db).map_err(|e| e.to_string())?;
    db.close().map_err(|e| e.to_string())?;
    Ok((
        disk.durable_image(),
        NurandConstants::for_run(seed, marker.constants.c_last),
    ))
}

fn build_secondary_image(cfg: &TortureConfig) -> Result<(DiskImage, secondary::Table), String> {
    let disk = PowerLossDisk::new();
    let db =
        Database::create(DB_DIR, options(&disk, TortureWorkload::Secondary.into(), cfg)?).map_err(|e| e.to_string())?;
    let table = secondary::load(&db, cfg.seed)?;
    db.close().map_err(|e| e.to_string())?;
    Ok((disk.durable_image(), table))
}

/// What the workload threads saw before the cut.
#[derive(Default)]
struct Outcomes {
    /// Commit returned Ok.
    acked: BTreeSet<u64>,
    /// Commit was called and failed (the cut came during it).
    in_flight: BTreeSet<u64>,
    /// Rolled back, or stopped before asking to commit.
    never_committed: BTreeSet<u64>,
    /// The error that stopped each thread that stopped early, with its
    /// sources.
    errors: Vec<String>,
    /// `secondary`: every row change, each thread's in its order.
    row_ops: Vec<secondary::RowOp>,
    /// `secondary`: what a thread read before the cut that its own commits
    /// contradict (must be empty).
    surprises: Vec<String>,
}

impl Outcomes {
    fn merge(&mut self, o: Outcomes) {
        self.acked.extend(o.acked);
        self.in_flight.extend(o.in_flight);
        self.never_committed.extend(o.never_committed);
        self.errors.extend(o.errors);
        self.row_ops.extend(o.row_ops);
        self.surprises.extend(o.surprises);
    }

    fn note_error(&mut self, e: &dyn std::error::Error) {
        self.errors.push(error_chain(e));
    }
}

/// An error and its sources, `: `-joined (each layer once).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let layer = s.to_string();
        if !text.contains(&layer) {
            text.push_str(": ");
            text.push_str(&layer);
        }
        source = s.source();
    }
    text
}

fn bank_worker(db: &Database, accounts: IndexId, transfers: IndexId, t: u32, n: u32, seed: u64) -> Outcomes {
    let mut out = Outcomes::default();
    let mut rng = random::stream(seed, &[0x62616e6b, u64::from(t)]);
    'txns: for i in 0..n {
        let id = (u64::from(t) << 32) | u64::from(i);
        let a = rng.between(0, u64::from(BANK_ACCOUNTS - 1)) as u32;
        let mut b = rng.between(0, u64::from(BANK_ACCOUNTS - 2)) as u32;
        if b >= a {
            b += 1;
        }
        let amount = rng.between(1, 500) as i64;
        let roll_back = rng.between(1, BANK_ROLLBACK_ONE_IN) == 1;
        for _attempt in 0..RETRIES_MAX {
            let mut txn = db.begin();
            let body = (|| -> Result<(), DbError> {
                // Lock in account order: no deadlock between transfers.
                let (lo, hi) = (a.min(b), a.max(b));
                let lo_row = txn.get_for_update(accounts, &account_key(lo))?;
                let hi_row = txn.get_for_update(accounts, &account_key(hi))?;
                let (Some(lo_row), Some(hi_row)) = (lo_row, hi_row) else {
                    return Err(DbError::Options {
                        reason: "an account row is missing".into(),
                    });
                };
                let parse = |r: &[u8]| balance_of(r).map_err(|reason| DbError::Options { reason });
                let (mut lo_bal, mut hi_bal) = (parse(&lo_row)?, parse(&hi_row)?);
                if a == lo {
                    lo_bal -= amount;
                    hi_bal += amount;
                } else {
                    lo_bal += amount;
                    hi_bal -= amount;
                }
                txn.update(accounts, &account_key(lo), &account_row(lo_bal))?;
                txn.update(accounts, &account_key(hi), &account_row(hi_bal))?;
                txn.insert(transfers, &id.to_be_bytes(), &transfer_row(a, b, amount))?;
                Ok(())
            })();
            match body {
                Ok(()) if roll_back => {
                    // Whether or not the rollback reaches the log, the
                    // transfer never committed.
                    let _ = txn.rollback();
                    out.never_committed.insert(id);
                    continue 'txns;
                }
                Ok(()) => {
                    match txn.commit() {
                        Ok(()) => out.acked.insert(id),
                        Err(e) => {
                            out.note_error(&e);
                            out.in_flight.insert(id);
                            return out;
                        }
                    };
                    continue 'txns;
                }
                Err(e) if e.is_retryable() => {
                    let _ = txn.rollback();
                }
                Err(e) => {
                    out.note_error(&e);
                    let _ = txn.rollback();
                    out.never_committed.insert(id);
                    return out;
                }
            }
        }
        out.never_committed.insert(id);
    }
    out
}

/// New-Orders: id = d_id << 32 | o_id (only those, TPC-C's other
/// transactions are covered by the consistency conditions).
fn tpcc_worker(db: &Database, t: u32, n: u32, seed: u64, constants: NurandConstants) -> Outcomes {
    let mut out = Outcomes::default();
    let mut rng = random::stream(seed, &[0x7470_6363, u64::from(t)]);
    let ctx = TerminalContext {
        w_id: 1,
        stock_level_d_id: (t % 10 + 1) as u8,
        warehouses: 1,
        c: constants,
    };
    for i in 0..n {
        let kind = match rng.between(1, 100) {
            1..=45 => TxnKind::NewOrder,
            46..=88 => TxnKind::Payment,
            89..=92 => TxnKind::OrderStatus,
            93..=96 => TxnKind::Delivery,
            _ => TxnKind::StockLevel,
        };
        let input = generate(kind, &mut rng, &ctx);
        let now_us = 1_700_000_000_000_000 + u64::from(i);
        let mut done = false;
        for _attempt in 0..RETRIES_MAX {
            let mut txn = TpccStore::begin(db);
            match execute(&mut txn, &input, now_us) {
                Ok(Outcome::Commit(value)) => {
                    let id = match &input {
                        TxnInput::NewOrder { d_id, .. } => Some((u64::from(*d_id) << 32) | value),
                        _ => None,
                    };
                    match txn.commit() {
                        Ok(()) => {
                            if let Some(id) = id {
                                out.acked.insert(id);
                            }
                        }
                        Err(e) => {
                            out.note_error(&e);
                            if let Some(id) = id {
                                out.in_flight.insert(id);
                            }
                            return out;
                        }
                    }
                    done = true;
                    break;
                }
                Ok(Outcome::Rollback) => {
                    if let Err(e) = txn.rollback() {
                        out.note_error(&e);
                        return out;
                    }
                    done = true;
                    break;
                }
                Err(e) if e.is_retryable() => {
                    let _ = txn.rollback();
                }
                Err(e) => {
                    out.note_error(&e);
                    let _ = txn.rollback();
                    return out;
                }
            }
        }
        if !done {
            out.errors
                .push(format!("a transaction was retried {RETRIES_MAX} times"));
            return out;
        }
    }
    out
}

/// Runs the workload on `db` until it ends or the power is cut.
fn run_workload(
    db: &Database,
    workload: TortureWorkload,
    cfg: &TortureConfig,
    seed: u64,
    images: &Images,
) -> Result<Outcomes, String> {
    enum Setup<'a> {
        Bank(IndexId, IndexId),
        Tpcc(NurandConstants),
        Secondary(flushwise_workloads::insert::InsertSchema, &'a secondary::Table),
    }
    let setup = match workload {
        TortureWorkload::Bank => Setup::Bank(
            db.index("accounts").map_err(|e| e.to_string())?,
            db.index("transfers").map_err(|e| e.to_string())?,
        ),
        TortureWorkload::Tpcc => Setup::Tpcc(images.tpcc.as_ref().map(|(_, c)| *c).ok_or("no TPC-C image")?),
        TortureWorkload::Secondary => {
            let (_, table) = images.secondary.as_ref().ok_or("no secondary image")?;
            let schema = secondary::schema(db, table)?;
            // Reads: the cut (a background sync) or an injected fault may
            // stop them, as it stops a transaction.
            if let Err(e) = secondary::learn_leaves(db, &schema) {
                return Ok(Outcomes {
                    errors: vec![e],
                    ..Outcomes::default()
                });
            }
            Setup::Secondary(schema, table)
        }
        TortureWorkload::Mixed => return Err("a trial runs one workload, not mixed".into()),
    };
    let merged = Mutex::new(Outcomes::default());
    std::thread::scope(|s| {
        for t in 0..cfg.threads {
            let (merged, setup) = (&merged, &setup);
            s.spawn(move || {
                let n = cfg.txns_per_thread;
                let o = match setup {
                    Setup::Bank(a, tr) => bank_worker(db, *a, *tr, t, n, seed),
                    Setup::Tpcc(c) => tpcc_worker(db, t, n, seed, *c),
                    Setup::Secondary(schema, table) => secondary::worker(db, schema, table, t, cfg.threads, n, seed),
                };
                if let Ok(mut m) = merged.lock() {
                    m.merge(o);
                }
            });
        }
    });
    merged
        .into_inner()
        .map_err(|_| "a workload thread panicked".to_string())
}

/// What one trial found.
#[derive(Default)]
struct TrialResult {
    /// flush_log_at_trx_commit 0 or 2: a lost acknowledged commit is
    /// counted, not a failure.
    lost_allowed: bool,
    acked: u64,
    lost: u64,
    uncommitted_effects: u64,
    in_flight: u64,
    in_flight_survived: u64,
    broken: u64,
    recovery_errors: u64,
    recoveries: u64,
    double_crash: bool,
    recovery_us: Vec<u64>,
    redo_bytes: u64,
    repaired: u64,
    losers: u64,
    torn_tails: u64,
    cuts: Vec<CutReport>,
    /// The change buffer's counters when the workload stopped, just after
    /// the recovery's open, and after the checks.
    cb_at_cut: ChangeBufferStats,
    cb_at_recovery: ChangeBufferStats,
    cb_after_check: ChangeBufferStats,
    problems: Vec<String>,
}

fn check_bank(db: &Database, o: &Outcomes, r: &mut TrialResult) -> Result<(), String> {
    let accounts = db.index("accounts").map_err(|e| e.to_string())?;
    let transfers = db.index("transfers").map_err(|e| e.to_string())?;
    let mut txn = db.begin();
    let rows = txn
        .range(transfers, Bound::Unbounded, Bound::Unbounded, Direction::Forward, None)
        .map_err(|e| format!("reading the transfers: {e}"))?;
    let mut present = BTreeMap::new();
    for (k, v) in rows {
        let id = u64::from_be_bytes(k.as_slice().try_into().map_err(|_| "a transfer key is not 8 bytes")?);
        present.insert(id, parse_transfer(&v)?);
    }
    let mut balances = BTreeMap::new();
    let all = txn
        .range(accounts, Bound::Unbounded, Bound::Unbounded, Direction::Forward, None)
        .map_err(|e| format!("reading the accounts: {e}"))?;
    for (k, v) in all {
        let a = u32::from_be_bytes(k.as_slice().try_into().map_err(|_| "an account key is not 4 bytes")?);
        balances.insert(a, balance_of(&v)?);
    }
    drop(txn);
    for id in &o.acked {
        if !present.contains_key(id) {
            r.lost += 1;
            if !r.lost_allowed {
                r.problems.push(format!("acknowledged transfer {id:#x} lost"));
            }
        }
    }
    for id in present.keys() {
        if o.never_committed.contains(id) {
            r.uncommitted_effects += 1;
            r.problems.push(format!(
                "transfer {id:#x} never committed (rolled back or cut before commit) but is present"
            ));
        } else if o.in_flight.contains(id) {
            r.in_flight_survived += 1;
        } else if !o.acked.contains(id) {
            r.uncommitted_effects += 1;
            r.problems
                .push(format!("transfer {id:#x} was never run but is present"));
        }
    }
    let mut expected: BTreeMap<u32, i64> = (0..BANK_ACCOUNTS).map(|a| (a, BANK_OPENING_BALANCE)).collect();
    for &(from, to, amount) in present.values() {
        *expected.entry(from).or_default() -= amount;
        *expected.entry(to).or_default() += amount;
    }
    let total: i64 = balances.values().sum();
    let opening = i64::from(BANK_ACCOUNTS) * BANK_OPENING_BALANCE;
    if total != opening || balances.len() != BANK_ACCOUNTS as usize {
        r.broken += 1;
        r.problems.push(format!(
            "bank total {total} over {} accounts, opened with {opening} over {BANK_ACCOUNTS}",
            balances.len()
        ));
    }
    let wrong: Vec<_> = expected
        .iter()
        .filter(|(a, e)| balances.get(a) != Some(e))
        .map(|(a, e)| format!("account {a}: {:?}, want {e}", balances.get(a)))
        .take(3)
        .collect();
    if !wrong.is_empty() {
        r.broken += 1;
        r.problems.push(format!(
            "balances disagree with the transfers present: {}",
            wrong.join("; ")
        ));
    }
    Ok(())
}

fn check_tpcc(db: &Database, o: &Outcomes, r: &mut TrialResult) -> Result<(), String> {
    let mut present = BTreeSet::new();
    {
        let mut txn = TpccStore::begin(db);
        for &id in o.acked.iter().chain(o.in_flight.iter()) {
            let (d_id, o_id) = ((id >> 32) as u8, id as u32);
            let found = txn
                .get(Index::Oorder, &order_key(1, d_id, o_id))
                .map_err(|e| format!("reading order {d_id}/{o_id}: {e}"))?;
            if found.is_some() {
                present.insert(id);
            }
        }
        let _ = txn.rollback();
    }
    for id in &o.acked {
        if !present.contains(id) {
            r.lost += 1;
            if !r.lost_allowed {
                r.problems.push(format!(
                    "acknowledged New-Order district {} order {} lost",
                    id >> 32,
                    id & 0xffff_ffff
                ));
            }
        }
    }
    r.in_flight_survived += o.in_flight.iter().filter(|id| present.contains(id)).count() as u64;
    // Conditions 1-4 (the per-row ones would read everything each trial).
    let report = tpcc_check(db, false).map_err(|e| format!("tpcc check: {e}"))?;
    if !report.passed() {
        r.broken += report.violations_total;
        for v in report.violations.iter().take(3) {
            r.problems.push(format!("tpcc condition broken: {v:?}"));
        }
    }
    Ok(())
}

/// The checks after a recovery: the workload's own, then the engine's,
/// then what the change buffer's merges met.
fn check_recovered(
    db: &Database,
    workload: TortureWorkload,
    images: &Images,
    outcomes: &Outcomes,
    r: &mut TrialResult,
) {
    let checked = match (workload, &images.secondary) {
        (TortureWorkload::Tpcc, _) => check_tpcc(db, outcomes, r),
        (TortureWorkload::Secondary, Some((_, table))) => secondary::check(db, table, outcomes, r),
        (TortureWorkload::Secondary, None) => Err("no secondary image".to_string()),
        _ => check_bank(db, outcomes, r),
    };
    if let Err(e) = checked {
        r.broken += 1;
        r.problems.push(e);
    }
    if let Err(e) = db.check() {
        r.broken += 1;
        r.problems.push(format!("engine check: {e}"));
    }
    r.cb_after_check = db.change_buffer_stats();
    let duplicates = r.cb_at_cut.merge_duplicates + r.cb_after_check.merge_duplicates;
    let missing = r.cb_at_cut.merge_missing + r.cb_after_check.merge_missing;
    if duplicates + missing > 0 {
        r.broken += duplicates + missing;
        r.problems.push(format!(
            "change buffer merges met {duplicates} inserts already in their leaf and {missing} deletes of entries not there"
        ));
    }
}

/// Opens the database on `image` (crash recovery), optionally cutting the
/// power again at sync point `recut` of the recovery. Returns the open
/// database and the disk under it.
fn recover(
    image: &DiskImage,
    kind: TrialKind,
    cfg: &TortureConfig,
    recut: Option<(u64, u64)>,
    r: &mut TrialResult,
) -> Result<(Database, PowerLossDisk), String> {
    let disk = PowerLossDisk::from_image(image);
    if let Some((at, cut_seed)) = recut {
        disk.cut_power_at_sync(Some(at));
        let started = Instant::now();
        match Database::open(DB_DIR, options(&disk, kind, cfg)?) {
            Ok(db) => {
                // Recovery made fewer syncs than `at`. Disarm, then look:
                // a background thread of the open database may have made
                // sync `at` in between (found at 10,000 points: the
                // checks then failed on "power lost").
                disk.cut_power_at_sync(None);
                if disk.is_cut() {
                    drop(db);
                    r.double_crash = true;
                    let (second, cut) = disk.image_after_cut(cut_seed);
                    r.cuts.push(cut);
                    return recover(&second, kind, cfg, None, r);
                }
                r.recoveries += 1;
                r.recovery_us.push(started.elapsed().as_micros() as u64);
                note_recovery(&db, r);
                return Ok((db, disk));
            }
            Err(_) if disk.is_cut() => {
                r.double_crash = true;
                let (second, cut) = disk.image_after_cut(cut_seed);
                r.cuts.push(cut);
                return recover(&second, kind, cfg, None, r);
            }
            Err(e) => {
                r.recovery_errors += 1;
                return Err(format!("recovery failed: {e}"));
            }
        }
    }
    let started = Instant::now();
    match Database::open(DB_DIR, options(&disk, kind, cfg)?) {
        Ok(db) => {
            r.recoveries += 1;
            r.recovery_us.push(started.elapsed().as_micros() as u64);
            note_recovery(&db, r);
            Ok((db, disk))
        }
        Err(e) => {
            r.recovery_errors += 1;
            Err(format!("recovery failed: {e}"))
        }
    }
}

fn note_recovery(db: &Database, r: &mut TrialResult) {
    let rep = db.recovery_report();
    r.redo_bytes += rep.redo_bytes_applied;
    r.repaired += rep.pages_repaired_from_doublewrite;
    r.losers += rep.losers_rolled_back;
    r.torn_tails += u64::from(rep.torn_log_tail);
    r.cb_at_recovery = db.change_buffer_stats();
}

/// Sync points a workload makes from open to its end, uncut (the
/// `secondary` workload with the change buffer `on`).
fn reference_sync_points(images: &Images, workload: TortureWorkload, cfg: &TortureConfig) -> Result<u64, String> {
    if !cfg.workload.runs(workload) {
        return Ok(0);
    }
    let disk = PowerLossDisk::from_image(images.image(workload)?);
    let db = Database::open(DB_DIR, cfg.run_options(&disk, workload.into())?).map_err(|e| e.to_string())?;
    let _ = run_workload(&db, workload, cfg, cfg.seed, images)?;
    let syncs = disk.counters().syncs;
    drop(db);
    Ok(syncs.max(1))
}

fn trial(
    images: &Images,
    kind: TrialKind,
    cfg: &TortureConfig,
    crash_point: u64,
    seed: u64,
) -> Result<TrialResult, String> {
    let mut r = TrialResult {
        lost_allowed: !cfg.promises_durable_commits(),
        ..TrialResult::default()
    };
    let disk = PowerLossDisk::from_image(images.image(kind.workload)?);
    disk.cut_power_at_sync(Some(crash_point));
    disk.set_lying_syncs(cfg.lying_fsync);
    let outcomes = match Database::open(DB_DIR, cfg.run_options(&disk, kind)?) {
        Ok(db) => {
            let o = run_workload(&db, kind.workload, cfg, seed, images)?;
            // What the change buffer held when the cut stopped the
            // workload (each thread stops at its first I/O that fails
            // after the cut: this is the state at the cut, give or take a
            // transaction's changes).
            r.cb_at_cut = db.change_buffer_stats();
            // The run ended before its crash point: cut now.
            disk.cut_power("end of the workload");
            drop(db);
            o
        }
        Err(_) if disk.is_cut() => Outcomes::default(),
        Err(e) => return Err(format!("opening the prepared database failed: {e}")),
    };
    r.acked = outcomes.acked.len() as u64;
    r.in_flight = outcomes.in_flight.len() as u64;
    let (after, cut) = disk.image_after_cut(seed);
    r.cuts.push(cut);
    let mix = random::mix64(seed ^ 0x0072_6563_7574);
    let recut = (mix % 4 == 0).then(|| (1 + (mix >> 8) % RECOVERY_CUT_WITHIN_SYNCS, mix.rotate_left(17)));
    let (db, _disk) = match recover(&after, kind, cfg, recut, &mut r) {
        Ok(x) => x,
        Err(e) => {
            r.problems.push(e);
            return Ok(r);
        }
    };
    check_recovered(&db, kind.workload, images, &outcomes, &mut r);
    drop(db);
    Ok(r)
}

/// Runs the torture; `progress(done, total)` after each trial.
pub fn run(cfg: &TortureConfig, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<TortureReport, String> {
    cfg.validate()?;
    let started = Instant::now();
    let images = Images::build(cfg.workload, cfg)?;
    let bank_points = reference_sync_points(&images, TortureWorkload::Bank, cfg)?;
    let tpcc_points = reference_sync_points(&images, TortureWorkload::Tpcc, cfg)?;
    let secondary_points = reference_sync_points(&images, TortureWorkload::Secondary, cfg)?;
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let report = Mutex::new(TortureReport {
        crash_points: cfg.crash_points,
        bank_sync_points: bank_points,
        tpcc_sync_points: tpcc_points,
        secondary_sync_points: secondary_points,
        seed: cfg.seed,
        commit: crate::COMMIT.to_string(),
        flush_log_at_trx_commit: cfg.flush_log_at_trx_commit,
        ..TortureReport::default()
    });
    let times = Mutex::new(Vec::new());
    let fatal = Mutex::new(None::<String>);
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cfg.crash_points {
                    break;
                }
                let workload = cfg.workload.for_trial(i);
                let nth = cfg.workload.nth_of_its_kind(i);
                let points = match workload {
                    TortureWorkload::Tpcc => tpcc_points,
                    TortureWorkload::Secondary => secondary_points,
                    _ => bank_points,
                }
                .max(1);
                let crash_point = nth % points + 1;
                let kind = TrialKind::of_trial(workload, nth, points);
                let seed = random::mix64(cfg.seed ^ random::mix64(i.wrapping_add(1)));
                let result = trial(&images, kind, cfg, crash_point, seed);
                let mut rep = match report.lock() {
                    Ok(g) => g,
                    Err(_) => break,
                };
                match result {
                    Err(e) => {
                        if let Ok(mut f) = fatal.lock() {
                            f.get_or_insert(format!("trial {i} ({}): {e}", workload.as_str()));
                        }
                        break;
                    }
                    Ok(r) => {
                        match workload {
                            TortureWorkload::Tpcc => rep.tpcc_trials += 1,
                            TortureWorkload::Secondary => rep.secondary_trials += 1,
                            _ => rep.bank_trials += 1,
                        }
                        rep.change_buffer.add(kind, &r);
                        rep.recoveries += r.recoveries;
                        rep.double_crashes += u64::from(r.double_crash);
                        rep.acked_commits += r.acked;
                        rep.lost_commits += r.lost;
                        rep.uncommitted_effects += r.uncommitted_effects;
                        rep.in_flight_commits += r.in_flight;
                        rep.in_flight_survived += r.in_flight_survived;
                        rep.broken_invariants += r.broken;
                        rep.recovery_errors += r.recovery_errors;
                        rep.redo_bytes_applied += r.redo_bytes;
                        rep.pages_repaired_from_doublewrite += r.repaired;
                        rep.losers_rolled_back += r.losers;
                        rep.torn_log_tails += r.torn_tails;
                        for c in &r.cuts {
                            rep.cuts.add(c);
                        }
                        if let Ok(mut t) = times.lock() {
                            t.extend(r.recovery_us.iter().copied());
                        }
                        if !r.problems.is_empty() {
                            rep.failures_total += 1;
                            if rep.failures.len() < FAILURES_KEPT_MAX {
                                rep.failures.push(TrialFailure {
                                    trial: i,
                                    workload,
                                    change_buffer: kind.change_buffer.name().to_string(),
                                    crash_point,
                                    seed,
                                    what: r.problems.join("; "),
                                });
                            }
                        }
                    }
                }
                drop(rep);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, cfg.crash_points);
            });
        }
    });
    if let Some(e) = fatal.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut report = report
        .into_inner()
        .map_err(|_| "a torture thread panicked".to_string())?;
    report.recovery_time = RecoveryTimes::of(times.into_inner().unwrap_or_default());
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The report as `key value` lines for people.
pub fn render_text(r: &TortureReport) -> String {
    let c = &r.cuts;
    let t = &r.recovery_time;
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<30} {v}\n"));
    line(
        "crash points tried",
        format!(
            "{} (bank {}, tpcc {}, secondary {})",
            r.crash_points, r.bank_trials, r.tpcc_trials, r.secondary_trials
        ),
    );
    line(
        "sync points per cycle",
        format!(
            "bank {}, tpcc {}, secondary {}",
            r.bank_sync_points, r.tpcc_sync_points, r.secondary_sync_points
        ),
    );
    line(
        "recoveries",
        format!("{} ({} cut again during recovery)", r.recoveries, r.double_crashes),
    );
    line("acknowledged commits", r.acked_commits.to_string());
    line(
        "lost commits",
        if r.flush_log_at_trx_commit == 1 {
            r.lost_commits.to_string()
        } else {
            format!(
                "{} (flush_log_at_trx_commit={}: allowed, the last second's commits)",
                r.lost_commits, r.flush_log_at_trx_commit
            )
        },
    );
    line("uncommitted effects", r.uncommitted_effects.to_string());
    line(
        "commits under way at the cut",
        format!("{} ({} survived whole)", r.in_flight_commits, r.in_flight_survived),
    );
    line("broken invariants", r.broken_invariants.to_string());
    line("recovery errors", r.recovery_errors.to_string());
    line(
        "cuts",
        format!(
            "{} (drop all {}, keep all {}, mixed {}; 512 B sectors {}, 4 KiB {})",
            c.cuts, c.cuts_drop_all, c.cuts_keep_all, c.cuts_mixed, c.cuts_512b_sectors, c.cuts_4k_sectors
        ),
    );
    line(
        "unsynced writes at the cuts",
        format!(
            "{} ops: {} kept, {} dropped, {} torn; {} length changes dropped",
            c.unsynced_ops, c.writes_kept, c.writes_dropped, c.writes_torn, c.set_len_dropped
        ),
    );
    line(
        "recovery",
        format!(
            "{} redo bytes applied, {} pages repaired from doublewrite, {} losers rolled back, {} torn log tails",
            r.redo_bytes_applied, r.pages_repaired_from_doublewrite, r.losers_rolled_back, r.torn_log_tails
        ),
    );
    if r.secondary_trials > 0 {
        let cb = &r.change_buffer;
        line(
            "change buffer",
            format!(
                "{} trials on, {} separate-device; {} inserts and {} deletes buffered",
                cb.trials_on, cb.trials_separate_device, cb.buffered_inserts, cb.buffered_deletes
            ),
        );
        line(
            "buffered changes pending",
            format!(
                "at the cut in {} trials; in the recovered tree in {} ({} leaves), {} entries merged after recovery",
                cb.trials_pending_at_cut,
                cb.trials_pending_at_recovery,
                cb.pending_leaves_at_recovery,
                cb.merged_after_recovery
            ),
        );
        line(
            "merges that met no entry",
            format!(
                "{} inserts already there, {} deletes of nothing",
                cb.merge_duplicates, cb.merge_missing
            ),
        );
    }
    line(
        "recovery time (ms)",
        format!(
            "min {:.1}, p50 {:.1}, p99 {:.1}, max {:.1}",
            t.min_us as f64 / 1e3,
            t.p50_us as f64 / 1e3,
            t.p99_us as f64 / 1e3,
            t.max_us as f64 / 1e3
        ),
    );
    line("elapsed", format!("{:.1} s", r.elapsed_s));
    line("seed, commit", format!("{}, {}", r.seed, r.commit));
    for f in &r.failures {
        let change_buffer = if f.change_buffer == ChangeBufferMode::Off.name() {
            String::new()
        } else {
            format!(", change buffer {}", f.change_buffer)
        };
        s.push_str(&format!(
            "FAILED trial {} ({}{change_buffer}, crash point {}, seed {:#x}): {}\n",
            f.trial,
            f.workload.as_str(),
            f.crash_point,
            f.seed,
            f.what
        ));
    }
    s.push_str(&match (r.passed(), r.flush_log_at_trx_commit) {
        (true, 1) => "verdict                        PASS: nothing acknowledged lost, nothing uncommitted visible\n".to_string(),
        (true, m) => format!(
            "verdict                        PASS: consistent after every crash, nothing uncommitted visible; {} acknowledged commits lost, as flush_log_at_trx_commit={m} allows\n",
            r.lost_commits
        ),
        (false, _) => "verdict                        FAIL\n".to_string(),
    });
    s
}

/// The report as one JSON object.
pub fn render_json(r: &TortureReport) -> String {
    serde_json::to_string(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Columns of [`render_csv`].
pub const CSV_COLUMNS: [&str; 23] = [
    "crash_points",
    "bank_trials",
    "tpcc_trials",
    "secondary_trials",
    "recoveries",
    "double_crashes",
    "acked_commits",
    "lost_commits",
    "uncommitted_effects",
    "in_flight_commits",
    "in_flight_survived",
    "broken_invariants",
    "recovery_errors",
    "writes_kept",
    "writes_dropped",
    "writes_torn",
    "recovery_p50_us",
    "recovery_p99_us",
    "recovery_max_us",
    "cb_trials_pending_at_cut",
    "cb_trials_pending_at_recovery",
    "seed",
    "commit",
];

/// The report as a CSV header and one row.
pub fn render_csv(r: &TortureReport) -> String {
    let row = [
        r.crash_points.to_string(),
        r.bank_trials.to_string(),
        r.tpcc_trials.to_string(),
        r.secondary_trials.to_string(),
        r.recoveries.to_string(),
        r.double_crashes.to_string(),
        r.acked_commits.to_string(),
        r.lost_commits.to_string(),
        r.uncommitted_effects.to_string(),
        r.in_flight_commits.to_string(),
        r.in_flight_survived.to_string(),
        r.broken_invariants.to_string(),
        r.recovery_errors.to_string(),
        r.cuts.writes_kept.to_string(),
        r.cuts.writes_dropped.to_string(),
        r.cuts.writes_torn.to_string(),
        r.recovery_time.p50_us.to_string(),
        r.recovery_time.p99_us.to_string(),
        r.recovery_time.max_us.to_string(),
        r.change_buffer.trials_pending_at_cut.to_string(),
        r.change_buffer.trials_pending_at_recovery.to_string(),
        r.seed.to_string(),
        r.commit.clone(),
    ];
    format!("{}\n{}\n", CSV_COLUMNS.join(","), row.join(","))
}

/// The kind of call an I/O error sweep fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoFault {
    /// EIO on the N-th read.
    Read,
    /// EIO on the N-th write.
    Write,
    /// EIO on the N-th fsync.
    Sync,
    /// ENOSPC on the N-th write or length change that grows a file.
    Extend,
}

impl IoFault {
    pub const ALL: [IoFault; 4] = [IoFault::Read, IoFault::Write, IoFault::Sync, IoFault::Extend];

    pub fn as_str(self) -> &'static str {
        match self {
            IoFault::Read => "read",
            IoFault::Write => "write",
            IoFault::Sync => "sync",
            IoFault::Extend => "extend",
        }
    }

    fn plan(self, n: u64) -> DiskFaultPlan {
        let mut p = DiskFaultPlan::default();
        match self {
            IoFault::Read => p.fail_read_n = Some(n),
            IoFault::Write => p.fail_write_n = Some(n),
            IoFault::Sync => p.fail_sync_n = Some(n),
            IoFault::Extend => p.fail_extend_n = Some(n),
        }
        p
    }

    fn count(self, c: &DiskCounters) -> u64 {
        match self {
            IoFault::Read => c.reads,
            IoFault::Write => c.writes,
            IoFault::Sync => c.syncs,
            IoFault::Extend => c.extends,
        }
    }

    /// True if `message` names this failure.
    fn named_in(self, message: &str) -> bool {
        match self {
            IoFault::Extend => message.contains("no space left on device"),
            _ => message.contains("injected EIO"),
        }
    }
}

impl std::str::FromStr for IoFault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        IoFault::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown I/O fault {s:?}; choose from read, write, sync, extend"))
    }
}

/// An I/O error sweep (SQLite's `ioerr` tests over the whole database).
#[derive(Clone, Debug, Serialize)]
pub struct SweepConfig {
    pub workload: TortureWorkload,
    pub faults: Vec<IoFault>,
    /// Transactions of the one workload thread.
    pub txns: u32,
    pub seed: u64,
    pub jobs: usize,
    /// Give up on a kind after this many N (the run is then reported
    /// unfinished rather than looping for ever).
    pub max_points: u64,
    /// Count the calls from before the open (the open's recovery and page
    /// verification included) rather than from the first transaction.
    pub include_open: bool,
}

impl Default for SweepConfig {
    fn default() -> Self {
        Self {
            workload: TortureWorkload::Tpcc,
            faults: IoFault::ALL.to_vec(),
            txns: 20,
            seed: 1,
            jobs: 2,
            max_points: 50_000,
            include_open: false,
        }
    }
}

/// One fault kind's sweep.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepRow {
    pub fault: String,
    /// N tried, the clean run included.
    pub points: u64,
    /// The first N the run never reached: the sweep's end (0: not reached
    /// within `max_points`).
    pub clean_at: u64,
    /// Runs the fault stopped with an error naming it.
    pub named_errors: u64,
    /// Runs that finished although the fault fired (a failed read retried,
    /// a background write redone).
    pub completed_despite_fault: u64,
    /// Errors that did not name the injected failure, or errors without one
    /// (must be 0).
    pub unnamed_errors: u64,
    pub lost_commits: u64,
    pub uncommitted_effects: u64,
    pub broken_invariants: u64,
    /// Reopens on the healthy device that failed (must be 0).
    pub recovery_errors: u64,
    pub failures: Vec<String>,
}

impl SweepRow {
    pub fn passed(&self) -> bool {
        self.clean_at > 0
            && self.unnamed_errors + self.lost_commits + self.uncommitted_effects + self.broken_invariants == 0
            && self.recovery_errors == 0
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepReport {
    pub workload: String,
    pub rows: Vec<SweepRow>,
    pub elapsed_s: f64,
    pub seed: u64,
    pub commit: String,
}

impl SweepReport {
    pub fn passed(&self) -> bool {
        self.rows.iter().all(SweepRow::passed)
    }
}

/// What one N of a sweep found.
struct SweepPoint {
    fired: bool,
    named: bool,
    completed: bool,
    unnamed: Vec<String>,
    result: TrialResult,
}

fn sweep_point(
    images: &Images,
    workload: TortureWorkload,
    cfg: &TortureConfig,
    fault: IoFault,
    n: u64,
    include_open: bool,
) -> Result<SweepPoint, String> {
    let disk = PowerLossDisk::from_image(images.image(workload)?);
    if include_open {
        disk.set_faults(fault.plan(n));
    }
    let base = if include_open {
        DiskCounters::default()
    } else {
        disk.counters()
    };
    let mut messages = Vec::new();
    let mut base = base;
    let kind = TrialKind::from(workload);
    let outcomes = match Database::open(DB_DIR, options(&disk, kind, cfg)?) {
        Ok(db) => {
            if !include_open {
                base = disk.counters();
                disk.set_faults(fault.plan(n));
            }
            let o = run_workload(&db, workload, cfg, cfg.seed, images)?;
            if let Err(e) = db.close() {
                messages.push(format!("close: {}", error_chain(&e)));
            }
            o
        }
        Err(e) => {
            messages.push(format!("open: {}", error_chain(&e)));
            Outcomes::default()
        }
    };
    let fired = fault.count(&disk.counters()) - fault.count(&base) >= n;
    messages.extend(outcomes.errors.iter().cloned());
    let unnamed: Vec<String> = messages.iter().filter(|m| !fault.named_in(m)).cloned().collect();
    let mut r = TrialResult::default();
    // A healthy device with what was written (the process exits, the
    // kernel keeps its cache): recovery, then the same checks as a cut.
    let (db, _disk) = match recover(&disk.volatile_image(), kind, cfg, None, &mut r) {
        Ok(x) => x,
        Err(e) => {
            r.problems.push(e);
            return Ok(SweepPoint {
                fired,
                named: !messages.is_empty() && unnamed.is_empty(),
                completed: messages.is_empty(),
                unnamed,
                result: r,
            });
        }
    };
    check_recovered(&db, workload, images, &outcomes, &mut r);
    drop(db);
    Ok(SweepPoint {
        fired,
        named: !messages.is_empty() && unnamed.is_empty(),
        completed: messages.is_empty(),
        unnamed,
        result: r,
    })
}

/// Runs the sweep; `progress(fault, n)` after each point.
pub fn io_error_sweep(cfg: &SweepConfig, progress: &(dyn Fn(IoFault, u64) + Sync)) -> Result<SweepReport, String> {
    if cfg.workload == TortureWorkload::Mixed {
        return Err("an I/O error sweep runs one workload: bank, tpcc or secondary".into());
    }
    if cfg.faults.is_empty() || cfg.max_points == 0 || cfg.jobs == 0 || cfg.txns == 0 {
        return Err("an I/O error sweep needs a fault kind, --max-points, --jobs and --txns above 0".into());
    }
    let started = Instant::now();
    let run_cfg = TortureConfig {
        threads: 1,
        txns_per_thread: cfg.txns,
        seed: cfg.seed,
        workload: cfg.workload,
        ..TortureConfig::default()
    };
    let images = Images::build(cfg.workload, &run_cfg)?;
    let mut rows = Vec::new();
    for &fault in &cfg.faults {
        let next = AtomicU64::new(1);
        let clean_at = AtomicU64::new(u64::MAX);
        let points = Mutex::new(BTreeMap::new());
        let fatal = Mutex::new(None::<String>);
        std::thread::scope(|s| {
            for _ in 0..cfg.jobs {
                s.spawn(|| loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n > cfg.max_points || n > clean_at.load(Ordering::Relaxed) {
                        break;
                    }
                    match sweep_point(&images, cfg.workload, &run_cfg, fault, n, cfg.include_open) {
                        Ok(p) => {
                            if !p.fired {
                                clean_at.fetch_min(n, Ordering::Relaxed);
                            }
                            if let Ok(mut m) = points.lock() {
                                m.insert(n, p);
                            }
                            progress(fault, n);
                        }
                        Err(e) => {
                            if let Ok(mut f) = fatal.lock() {
                                f.get_or_insert(format!("{} fault {n}: {e}", fault.as_str()));
                            }
                            clean_at.fetch_min(0, Ordering::Relaxed);
                            break;
                        }
                    }
                });
            }
        });
        if let Some(e) = fatal.into_inner().ok().flatten() {
            return Err(e);
        }
        let end = clean_at.into_inner();
        let mut row = SweepRow {
            fault: fault.as_str().to_string(),
            clean_at: if end == u64::MAX { 0 } else { end },
            ..SweepRow::default()
        };
        let points = points.into_inner().map_err(|_| "a sweep thread panicked".to_string())?;
        for (n, p) in points.into_iter().filter(|(n, _)| *n <= end) {
            row.points += 1;
            row.named_errors += u64::from(p.fired && p.named);
            row.completed_despite_fault += u64::from(p.fired && p.completed);
            let r = &p.result;
            row.lost_commits += r.lost;
            row.uncommitted_effects += r.uncommitted_effects;
            row.broken_invariants += r.broken;
            row.recovery_errors += r.recovery_errors;
            let mut problems = r.problems.clone();
            if !p.unnamed.is_empty() {
                row.unnamed_errors += 1;
                problems.push(format!(
                    "errors that do not name the injected failure: {}",
                    p.unnamed.join(" | ")
                ));
            } else if !p.fired && !p.completed {
                row.unnamed_errors += 1;
                problems.push("an error although no fault fired".into());
            }
            if !problems.is_empty() && row.failures.len() < FAILURES_KEPT_MAX {
                row.failures.push(format!("N={n}: {}", problems.join("; ")));
            }
        }
        rows.push(row);
    }
    Ok(SweepReport {
        workload: cfg.workload.as_str().to_string(),
        rows,
        elapsed_s: started.elapsed().as_secs_f64(),
        seed: cfg.seed,
        commit: crate::COMMIT.to_string(),
    })
}

/// The sweep as one JSON object.
pub fn render_sweep_json(r: &SweepReport) -> String {
    serde_json::to_string(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The sweep as CSV, one row per fault kind.
pub fn render_sweep_csv(r: &SweepReport) -> String {
    let mut s = String::from(
        "workload,fault,points,clean_at,named_errors,completed_despite_fault,unnamed_errors,lost_commits,uncommitted_effects,broken_invariants,recovery_errors,seed,commit\n",
    );
    for row in &r.rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.workload,
            row.fault,
            row.points,
            row.clean_at,
            row.named_errors,
            row.completed_despite_fault,
            row.unnamed_errors,
            row.lost_commits,
            row.uncommitted_effects,
            row.broken_invariants,
            row.recovery_errors,
            r.seed,
            r.commit
        ));
    }
    s
}

/// The sweep as a table for people.
pub fn render_sweep_text(r: &SweepReport) -> String {
    let mut s = format!(
        "{:<8} {:>7} {:>9} {:>7} {:>10} {:>8} {:>5} {:>11} {:>7} {:>10}\n",
        "fault", "points", "clean at", "named", "completed", "unnamed", "lost", "uncommitted", "broken", "reopen err"
    );
    for row in &r.rows {
        s.push_str(&format!(
            "{:<8} {:>7} {:>9} {:>7} {:>10} {:>8} {:>5} {:>11} {:>7} {:>10}\n",
            row.fault,
            row.points,
            row.clean_at,
            row.named_errors,
            row.completed_despite_fault,
            row.unnamed_errors,
            row.lost_commits,
            row.uncommitted_effects,
            row.broken_invariants,
            row.recovery_errors
        ));
        for f in &row.failures {
            s.push_str(&format!("  FAILED {}: {f}\n", row.fault));
        }
    }
    s.push_str(&format!(
        "workload {}, {:.1} s, seed {}, commit {}\nverdict {}\n",
        r.workload,
        r.elapsed_s,
        r.seed,
        r.commit,
        if r.passed() {
            "PASS: every fault ended in an error naming it or in success; nothing acknowledged lost"
        } else {
            "FAIL"
        }
    ));
    s
}

/// The path every torture database is named by on its disk.
pub fn database_path() -> PathBuf {
    Path::new(DB_DIR).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_times_take_quantiles() {
        let t = RecoveryTimes::of((1..=100).collect());
        assert_eq!((t.min_us, t.p50_us, t.max_us), (1, 51, 100));
        assert_eq!(RecoveryTimes::of(Vec::new()).max_us, 0);
    }

    #[test]
    fn mixed_workload_runs_one_tpcc_and_one_secondary_trial_in_four() {
        let mixed = TortureWorkload::Mixed;
        let kinds: Vec<_> = (0..8).map(|i| mixed.for_trial(i)).collect();
        let count = |w| kinds.iter().filter(|k| **k == w).count();
        assert_eq!(count(TortureWorkload::Tpcc), 2);
        assert_eq!(count(TortureWorkload::Secondary), 2);
        assert_eq!(count(TortureWorkload::Bank), 4);
        // Each workload takes its own sync points in turn: 0, 1, 2, ...
        for w in [TortureWorkload::Bank, TortureWorkload::Tpcc, TortureWorkload::Secondary] {
            let nth: Vec<u64> = (0..40)
                .filter(|&i| mixed.for_trial(i) == w)
                .map(|i| mixed.nth_of_its_kind(i))
                .collect();
            assert_eq!(nth, (0..nth.len() as u64).collect::<Vec<_>>(), "{w:?}");
        }
        assert_eq!(TortureWorkload::Bank.nth_of_its_kind(7), 7);
        assert_eq!("bank".parse::<TortureWorkload>(), Ok(TortureWorkload::Bank));
        assert_eq!("secondary".parse::<TortureWorkload>(), Ok(TortureWorkload::Secondary));
        assert!("nope"
            .parse::<TortureWorkload>()
            .unwrap_err()
            .contains("bank, tpcc, secondary, mixed"));
    }

    #[test]
    fn secondary_trials_cut_every_point_with_the_change_buffer_on_and_on_its_own_device() {
        let modes = |cycle: u64| -> Vec<ChangeBufferMode> {
            (cycle * 5..cycle * 5 + 5)
                .map(|nth| TrialKind::of_trial(TortureWorkload::Secondary, nth, 5).change_buffer)
                .collect()
        };
        let (first, second) = (modes(0), modes(1));
        for (a, b) in first.iter().zip(&second) {
            assert_ne!(a, b, "{first:?} then {second:?}");
        }
        assert_eq!(first[0], ChangeBufferMode::On);
        assert_eq!(
            TrialKind::of_trial(TortureWorkload::Bank, 1, 5).change_buffer,
            ChangeBufferMode::Off
        );
    }

    #[test]
    fn secondary_torture_keeps_every_index_equal_to_its_rows_and_meets_buffered_changes() {
        let cfg = TortureConfig {
            crash_points: 36,
            workload: TortureWorkload::Secondary,
            ..TortureConfig::default()
        };
        let r = run(&cfg, &|_, _| {}).unwrap();
        let text = render_text(&r);
        assert!(r.passed(), "{text}");
        assert_eq!((r.secondary_trials, r.bank_trials, r.tpcc_trials), (36, 0, 0));
        assert_eq!(
            r.lost_commits + r.uncommitted_effects + r.broken_invariants,
            0,
            "{text}"
        );
        assert!(r.acked_commits > 0 && r.recoveries >= 36, "{text}");
        let cb = &r.change_buffer;
        assert_eq!((cb.trials_on, cb.trials_separate_device), (18, 18), "{text}");
        // The cuts met buffered changes, and recovery kept some: a test
        // the change buffer could not pass by never being used.
        assert!(cb.buffered_inserts > 0 && cb.buffered_deletes > 0, "{text}");
        assert!(cb.trials_pending_at_cut > 0, "{text}");
        assert!(cb.trials_pending_at_recovery > 0, "{text}");
        let csv = render_csv(&r);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count(), "{csv}");
    }

    #[test]
    fn bank_torture_loses_nothing_over_a_few_crash_points() {
        let cfg = TortureConfig {
            crash_points: 12,
            workload: TortureWorkload::Bank,
            txns_per_thread: 15,
            ..TortureConfig::default()
        };
        let r = run(&cfg, &|_, _| {}).unwrap();
        assert!(r.passed(), "{}", render_text(&r));
        assert_eq!(r.bank_trials, 12);
        assert!(r.acked_commits > 0 && r.recoveries >= 12, "{}", render_text(&r));
    }

    #[test]
    fn torture_counts_lost_commits_at_flush_log_at_trx_commit_2_and_stays_consistent() {
        let cfg = TortureConfig {
            crash_points: 30,
            workload: TortureWorkload::Bank,
            txns_per_thread: 15,
            flush_log_at_trx_commit: 2,
            ..TortureConfig::default()
        };
        let r = run(&cfg, &|_, _| {}).unwrap();
        assert!(
            r.lost_commits > 0,
            "mode 2 lost nothing in 30 cuts?\n{}",
            render_text(&r)
        );
        assert!(r.passed(), "{}", render_text(&r));
        assert_eq!(r.broken_invariants + r.uncommitted_effects, 0);
    }

    #[test]
    fn torture_catches_a_drive_that_lies_about_fsync() {
        let cfg = TortureConfig {
            crash_points: 10,
            workload: TortureWorkload::Bank,
            txns_per_thread: 15,
            lying_fsync: true,
            ..TortureConfig::default()
        };
        let r = run(&cfg, &|_, _| {}).unwrap();
        // Either the commits are simply gone, or recovery notices that the
        // log was durable past a point the disk did not keep and refuses
        // to open (the redo layer's check of its own durable mark).
        assert!(!r.passed(), "{}", render_text(&r));
        assert!(r.lost_commits + r.recovery_errors > 0, "{}", render_text(&r));
        assert!(
            r.failures
                .iter()
                .all(|f| f.what.contains("lost") || f.what.contains("corrupt")),
            "{:?}",
            r.failures
        );
    }

    #[test]
    fn every_policy_survives_power_cuts() {
        for policy in PolicySpec::all() {
            let cfg = TortureConfig {
                crash_points: 24,
                workload: TortureWorkload::Bank,
                txns_per_thread: 15,
                policy: policy.clone(),
                ..TortureConfig::default()
            };
            let r = run(&cfg, &|_, _| {}).unwrap();
            assert!(r.passed(), "{policy}: {}", render_text(&r));
        }
    }

    #[test]
    fn without_doublewrite_a_torn_page_is_refused_never_silently_wrong() {
        let cfg = TortureConfig {
            crash_points: 200,
            workload: TortureWorkload::Bank,
            txns_per_thread: 30,
            doublewrite: false,
            ..TortureConfig::default()
        };
        let r = run(&cfg, &|_, _| {}).unwrap();
        assert_eq!(r.broken_invariants + r.uncommitted_effects, 0, "{}", render_text(&r));
        // Every failure is recovery refusing a page it cannot trust.
        assert!(r.recovery_errors > 0, "no torn page in 200 cuts?\n{}", render_text(&r));
        assert!(
            r.failures.iter().all(|f| f.what.contains("corrupt")),
            "{}",
            render_text(&r)
        );
    }

    #[test]
    fn io_error_sweep_of_a_bank_run_ends_clean_and_names_every_failure() {
        let cfg = SweepConfig {
            workload: TortureWorkload::Bank,
            txns: 5,
            faults: vec![IoFault::Write, IoFault::Sync, IoFault::Extend],
            ..SweepConfig::default()
        };
        let r = io_error_sweep(&cfg, &|_, _| {}).unwrap();
        assert!(r.passed(), "{}", render_sweep_text(&r));
        let write = &r.rows[0];
        assert!(
            write.clean_at > 1 && write.named_errors > 0,
            "{}",
            render_sweep_text(&r)
        );
    }
}
