//! Opening a database, and crash recovery.
//!
//! `open` steps (each error names its file):
//! 1. open the redo log: its scan yields the complete append groups from
//!    the last checkpoint (a truncated or corrupt log is the redo layer's
//!    error, returned as is);
//! 2. open the data tablespace (a file shorter than the redo expects is
//!    refused, naming both sizes) and the doublewrite file and run
//!    `Doublewrite::recover` with the checkpoint LSN: torn pages with a
//!    valid copy at or past it are restored, a damaged page whose copy
//!    cannot be the torn version is refused;
//! 3. read and verify every data page (`verify_pages_at_open`): a page that
//!    is still corrupt is [`DbError::CorruptPage`], never used; at once if
//!    a redo record names it, else after step 6 finds the pending bulk
//!    loads, unless it lies in one of their extents (a loader page torn by
//!    the crash, which nothing references; see [`super::bulk`]);
//! 4. open the buffer pool shell with the checkpoint floor held at the scan
//!    start (no checkpoint may pass redo not yet applied), read the pages
//!    the redo names into the pool [`RECOVERY_READ_AHEAD`] at a time (the
//!    first [`read_ahead_limit`] of them before anything is applied, the
//!    rest while the redo before them is applied, at most half the pool
//!    ahead of it; InnoDB's recovery reads them in asynchronous batches
//!    too), and apply every record in LSN order through `apply_redo`
//!    (pages already newer skip);
//! 5. analysis over the same scan: a transaction with `TxnBegin`/`Undo`
//!    records and no `TxnCommit`/`TxnRollback` is a loser; its undo entries
//!    are collected in log order;
//! 6. build the free-page set (after redo, before any allocation), open
//!    the catalog and the index trees, undo each loser's entries in
//!    reverse through the trees (ordinary logged changes), append its
//!    `TxnRollback`, make the log durable;
//! 7. release the floor, reclaim the extents of bulk loads that never
//!    committed (their journals were found by the free-page scan of step
//!    6), and checkpoint.
//!
//! Between 4 and 6 the floor drops from the scan start to the first record
//! of the oldest loser: applied redo is protected by the dirty pages it
//! made (the pool never checkpoints past its oldest modification), so the
//! rollback can checkpoint to make room for its own redo. A loser whose
//! undo records fill most of the log can still run the log full at
//! recovery (`RedoError::LogFull`): transactions must stay well below the
//! redo capacity.
//!
//! Transaction ids restart above the largest one in the scan (ids only need
//! to be unique within the redo the next recovery will read).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_core::Lsn;
use parking_lot::{Mutex, RwLock};

use super::bulk;
use super::change_buffer::{ChangeBuffer, ChangeBufferMode, Merger};
use super::leaf_space::LeafSpace;
use super::lock::{LockTable, TxnId};
use super::recovery_profile::RecoveryProfile;
use super::store::SharedStore;
use super::txn::restore;
use super::undo::UndoEntry;
use super::{
    corrupt_page, Database, DbError, DbOptions, DbPaths, IndexId, Result, TxnTable, CATALOG_ROOT_PAGE,
    CHANGE_BUFFER_SPACE_ID, DATA_SPACE_ID,
};
use crate::btree::BTree;
use crate::buffer::{ApplyOutcome, BufferPoolShell, CheckpointFloor, ReadAheadWindow};
use crate::page::PageError;
use crate::redo::{Record, RecordKind, RecoveryScan, RedoConfig, RedoLog};
use crate::storage::{
    open_emulated, open_file, AlignedBuf, Doublewrite, EmulatedDevice, EngineStorageError, IoMode, Tablespace,
};

/// Doublewrite slots (InnoDB's classic 128).
/// Where the data file starts on an emulated device: after the doublewrite
/// file (at offset 0), with room to spare for the largest page size.
const EMULATED_DATA_OFFSET_BYTES: u64 = 64 << 20;
const DOUBLEWRITE_SLOTS: u32 = crate::storage::doublewrite::DEFAULT_SLOTS;
/// Page reads recovery keeps in flight while it reads ahead the pages its
/// redo names: InnoDB 5.6 issues the reads of a 32-page area at once
/// (`RECV_READ_AHEAD_AREA`, `recv_read_in_area` in `log0recv.cc`).
pub const RECOVERY_READ_AHEAD: usize = 32;

/// The pages a redo scan names.
#[derive(Debug, Default)]
pub struct NamedPages {
    /// Each page once, in the order the redo first names it.
    pub pages: Vec<flushwise_core::PageId>,
    /// For each record, how many of `pages` the redo has named up to and
    /// including it (what the apply has met when it reaches the record).
    pub met_by_record: Vec<usize>,
}

/// The pages `records` name (see [`NamedPages`]).
pub fn named_pages(records: &[(Lsn, Record)]) -> NamedPages {
    let mut seen = HashSet::new();
    let mut named = NamedPages::default();
    for (_, r) in records {
        if matches!(r.kind, RecordKind::PageInit | RecordKind::PageWrite) && seen.insert(r.page) {
            named.pages.push(r.page);
        }
        named.met_by_record.push(named.pages.len());
    }
    named
}

/// How many of the [`named_pages`] recovery reads ahead: at most three
/// quarters of the pool's `frames` (the rest stay free for pages the redo
/// creates and for the pages past the read-ahead, which `apply_redo` reads
/// as it meets them), so no page read ahead is evicted before its redo is
/// applied.
pub fn read_ahead_limit(frames: u32) -> usize {
    (frames as usize / 4 * 3).max(1)
}

/// Wall time of each step of an open (the module's numbered steps). After a
/// clean shutdown the steps that scale with the database's size (the
/// free-page scan, verification if enabled) are all an open costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryPhases {
    /// Directory lock, options, files found.
    pub open: Duration,
    /// Step 1: the redo log opened and scanned from the checkpoint.
    pub log_scan: Duration,
    /// Step 2: data file opened, torn pages repaired from doublewrite.
    pub doublewrite: Duration,
    /// Step 3: every data page read and checked (when enabled).
    pub verify: Duration,
    /// Step 4: the buffer pool's frames allocated and its threads started
    /// (a fixed cost that grows with the pool, not with the redo).
    pub pool_open: Duration,
    /// Step 4: the pages the redo names read ahead.
    pub redo_page_reads: Duration,
    /// Step 4: redo applied (with the reads of pages past the read-ahead).
    pub redo_apply: Duration,
    /// Step 6: the free-page set, built by reading every page's header.
    pub free_page_scan: Duration,
    /// Step 6: pending bulk loads found, catalog and trees opened.
    pub catalog: Duration,
    /// Step 6: losers rolled back and the rollback made durable.
    pub undo: Duration,
    /// Step 7: crashed bulk loads reclaimed, checkpoint (writes the pages
    /// redo dirtied).
    pub checkpoint: Duration,
}

/// What recovery did at open (all zero after a clean shutdown, except
/// `pages_read`, `duration` and `phases`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecoveryReport {
    /// Data pages read and verified at open.
    pub pages_read: u64,
    pub pages_repaired_from_doublewrite: u64,
    /// Redo bytes from the checkpoint to the end of the log.
    pub redo_bytes_applied: u64,
    /// Pages the redo names (each once), how many of them were read ahead
    /// before anything was applied, and how many while it was applied
    /// (the others were resident, past the file's end, or read as met).
    pub redo_pages_named: u64,
    pub redo_pages_read: u64,
    pub redo_pages_read_while_applying: u64,
    /// Redo records scanned / applied to a page (older pages only).
    pub records_scanned: u64,
    pub records_applied: u64,
    /// The log ended in a torn or incomplete group (a crash mid-write).
    pub torn_log_tail: bool,
    pub losers_rolled_back: u64,
    /// Undo entries applied to roll the losers back.
    pub undo_entries_applied: u64,
    /// The redo log was resized at open (`DbOptions::resize_redo_at_open`)
    /// from this capacity.
    pub redo_resized_from_bytes: Option<u64>,
    /// Bulk loads that never committed, and the pages of theirs freed.
    pub loads_reclaimed: u64,
    pub load_pages_reclaimed: u64,
    pub duration: Duration,
    /// Where `duration` went.
    pub phases: RecoveryPhases,
    /// The recovery costs measured on this database's earlier opens that
    /// the policy was given (see [`super::recovery_profile`]): the open's
    /// fixed part, s, the redo apply rate beyond it, MiB/s, and the wall
    /// time per page read ahead, us.
    pub measured_recovery_fixed_s: Option<f64>,
    pub measured_redo_apply_mib_per_s: Option<f64>,
    pub measured_recovery_page_read_us: Option<f64>,
    /// The recovery profile could not be read or written (the open went on).
    pub profile_error: Option<String>,
    /// Leaves whose free space a clean close kept (the change buffer can
    /// buffer for them at once; [`super::leaf_space`]).
    pub leaf_space_pages_loaded: u64,
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recovery: {} pages read, {} repaired from doublewrite, {} redo bytes ({} records scanned, {} applied{}, {} pages named, {} + {} read ahead), {} loser transactions rolled back ({} undo entries), {} bulk loads reclaimed ({} pages), {:.1} ms",
            self.pages_read,
            self.pages_repaired_from_doublewrite,
            self.redo_bytes_applied,
            self.records_scanned,
            self.records_applied,
            if self.torn_log_tail { ", torn tail" } else { "" },
            self.redo_pages_named,
            self.redo_pages_read,
            self.redo_pages_read_while_applying,
            self.losers_rolled_back,
            self.undo_entries_applied,
            self.loads_reclaimed,
            self.load_pages_reclaimed,
            self.duration.as_secs_f64() * 1e3
        )?;
        let p = &self.phases;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            " (open {:.1}, log scan {:.1}, doublewrite {:.1}, verify {:.1}, pool open {:.1}, redo read-ahead {:.1}, redo apply {:.1}, free-page scan {:.1}, catalog {:.1}, undo {:.1}, checkpoint {:.1} ms)",
            ms(p.open),
            ms(p.log_scan),
            ms(p.doublewrite),
            ms(p.verify),
            ms(p.pool_open),
            ms(p.redo_page_reads),
            ms(p.redo_apply),
            ms(p.free_page_scan),
            ms(p.catalog),
            ms(p.undo),
            ms(p.checkpoint)
        )?;
        if let Some(from) = self.redo_resized_from_bytes {
            write!(f, ", redo log resized from {from} bytes")?;
        }
        if let Some(fixed) = self.measured_recovery_fixed_s {
            write!(f, ", policy given the measured fixed open cost {fixed:.2} s")?;
        }
        if let Some(rate) = self.measured_redo_apply_mib_per_s {
            write!(f, ", policy given the measured redo apply rate {rate:.1} MiB/s")?;
        }
        if let Some(us) = self.measured_recovery_page_read_us {
            write!(f, ", policy given the measured page read cost {us:.1} us")?;
        }
        if let Some(e) = &self.profile_error {
            write!(f, " (recovery profile not used: {e})")?;
        }
        Ok(())
    }
}

fn files_err(path: &Path, reason: impl Into<String>) -> DbError {
    DbError::Files {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn redo_config(options: &DbOptions) -> RedoConfig {
    RedoConfig {
        log_buffer_bytes: (options.redo_bytes / 4).clamp(64 << 10, 16 << 20) as usize,
        ..RedoConfig::default()
    }
}

/// Step 1b: replaces the redo log of a cleanly closed database by an empty
/// one of `options.redo_bytes` that continues its LSNs. Written to a
/// temporary file, synced, renamed over the old log, directory synced: a
/// crash at any point leaves either the old clean log or the new empty one,
/// and both say "nothing to redo" for data pages that are all durable.
fn resize_redo(path: &Path, log: RedoLog, scan: &RecoveryScan, options: &DbOptions) -> Result<RedoLog> {
    // End records change no page and a transaction that ends here has no
    // undo after the checkpoint (the floor keeps the checkpoint before a
    // transaction's first write until its end is durable), so they need no
    // recovery; a log written before clean closes checkpointed at the head
    // may still end with one.
    let pending = scan
        .records
        .iter()
        .filter(|(_, r)| {
            !matches!(
                r.kind,
                RecordKind::CheckpointMarker | RecordKind::TxnCommit | RecordKind::TxnRollback
            )
        })
        .count();
    if pending > 0 {
        return Err(files_err(
            path,
            format!(
                "cannot resize the redo log from {} to {} bytes: it holds {pending} records to recover \
                 (the database was not closed cleanly); open it once without resizing, close it, then resize",
                log.capacity_bytes(),
                options.redo_bytes
            ),
        ));
    }
    let resume = log.current_lsn();
    log.close()?;
    let mut tmp_name = path.as_os_str().to_os_string();
    tmp_name.push(".resize");
    let tmp = std::path::PathBuf::from(tmp_name);
    {
        let backend = open_file(&tmp, IoMode::Buffered, true)?;
        let fresh = RedoLog::create_from(&tmp, backend, options.redo_bytes, redo_config(options), resume)?;
        fresh.close()?;
    }
    std::fs::rename(&tmp, path)
        .map_err(|e| files_err(path, format!("cannot rename {} over it: {e}", tmp.display())))?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| files_err(dir, format!("cannot sync the directory after the redo resize: {e}")))?;
    }
    let backend = open_file(path, IoMode::Buffered, false)?;
    let (log, _empty) = RedoLog::open(path, backend, redo_config(options))?;
    Ok(log)
}

/// Step 3: every page verifies or was never written; returns the pages
/// read and the corrupt ones with their error (I/O errors fail at once).
fn verify_pages(ts: &Tablespace) -> Result<(u64, Vec<(u32, DbError)>)> {
    let mut buf = AlignedBuf::zeroed(ts.page_size().bytes());
    let mut read = 0;
    let mut corrupt = Vec::new();
    for page_no in 0..ts.page_count() {
        match ts.read_page(page_no, &mut buf) {
            Ok(_) => read += 1,
            Err(EngineStorageError::Page(PageError::NeverWritten { .. })) => read += 1,
            Err(e) => match corrupt_page(&e) {
                Some(err) => corrupt.push((page_no, err)),
                None => return Err(DbError::PageFile(e)),
            },
        }
    }
    Ok((read, corrupt))
}

/// Step 2, before the doublewrite repair: the data file holds every page
/// the redo scan changes without creating it. Such a page was created
/// before the checkpoint, so it was written and synced before it, and a
/// file without it was cut short. (A page created within the scan may lie
/// past the end: its extension may not have been durable.)
fn check_file_covers_redo(ts: &Tablespace, scan: &RecoveryScan) -> Result<()> {
    let page_count = ts.page_count();
    let mut created: HashSet<u32> = HashSet::new();
    for (start, record) in &scan.records {
        if record.page.space != DATA_SPACE_ID {
            continue;
        }
        match record.kind {
            RecordKind::PageInit => {
                created.insert(record.page.page_no);
            }
            RecordKind::PageWrite if record.page.page_no >= page_count && !created.contains(&record.page.page_no) => {
                let by = format!(
                    "the redo log (a change at lsn {start} to page {}, which was created before the checkpoint)",
                    record.page.page_no
                );
                return Err(ts.shorter_than_expected(record.page.page_no, by).into());
            }
            _ => {}
        }
    }
    Ok(())
}

pub(crate) fn open_database(dir: &Path, mut options: DbOptions, create: bool) -> Result<Database> {
    let started = Instant::now();
    // Before any file is read or created: one process per directory.
    let dir_lock = super::dir_lock::for_open(dir, &options, create)?;
    let paths = DbPaths::new(dir, &options);
    let mut report = RecoveryReport::default();
    // The measured recovery cost replaces the policy's assumed one unless
    // the user gave it (real files only: a test's storage keeps no profile).
    let profile_path = (options.storage.is_none())
        .then(|| paths.redo.parent().map(RecoveryProfile::path_in))
        .flatten();
    let mut profile = match &profile_path {
        Some(path) if !create => RecoveryProfile::load(path).unwrap_or_else(|e| {
            report.profile_error = Some(e);
            RecoveryProfile::default()
        }),
        _ => RecoveryProfile::default(),
    };
    for (key, value, source) in super::recovery_profile::policy_costs(&options.policy, profile.plan()) {
        if source != super::recovery_profile::CostSource::Measured {
            continue;
        }
        options.policy = options
            .policy
            .with_param(key, value)
            .map_err(|reason| DbError::Options { reason })?;
        match key {
            flushwise_core::policy::RECOVERY_FIXED_KEY => report.measured_recovery_fixed_s = Some(value),
            flushwise_core::policy::REDO_APPLY_RATE_KEY => report.measured_redo_apply_mib_per_s = Some(value),
            _ => report.measured_recovery_page_read_us = Some(value),
        }
    }
    if !(1..=super::change_buffer::MAX_MAX_PCT).contains(&options.change_buffer.max_pct) {
        return Err(DbError::Options {
            reason: format!(
                "change-buffer maximum {} % of the buffer pool is outside 1..={}",
                options.change_buffer.max_pct,
                super::change_buffer::MAX_MAX_PCT
            ),
        });
    }
    let shell_config = Database::shell_config(&options)?;
    if create || options.resize_redo_at_open {
        Database::check_redo_bytes(&options)?;
    }
    let storage = options.storage.clone();
    if let Some(opener) = &storage {
        if options.data_device.is_some() {
            return Err(DbError::Options {
                reason: format!(
                    "an emulated data device cannot be used with {}: choose one",
                    opener.describe()
                ),
            });
        }
        if options.resize_redo_at_open {
            return Err(DbError::Options {
                reason: format!(
                    "the redo log cannot be resized on {} (it needs a rename)",
                    opener.describe()
                ),
            });
        }
    } else {
        for d in [paths.data.parent(), paths.redo.parent()].into_iter().flatten() {
            if create {
                std::fs::create_dir_all(d).map_err(|e| files_err(d, format!("cannot create the directory: {e}")))?;
            }
        }
    }
    let exists = |p: &Path| match &storage {
        Some(opener) => opener.exists(p),
        None => p.exists(),
    };
    if create {
        for p in [&paths.data, &paths.redo] {
            if exists(p) {
                return Err(files_err(p, "a database file already exists here; open it instead"));
            }
        }
    } else {
        for p in [&paths.data, &paths.redo] {
            if !exists(p) {
                return Err(files_err(p, "no such database file"));
            }
        }
    }

    // 1. The redo log.
    let mut phase = Instant::now();
    let mut lap = move || {
        let now = Instant::now();
        let took = now - phase;
        phase = now;
        took
    };
    report.phases.open = started.elapsed();
    lap();
    let redo_backend = match &storage {
        Some(opener) => opener.open(&paths.redo, create)?,
        None => open_file(&paths.redo, IoMode::Buffered, create)?,
    };
    let (redo, scan) = if create {
        let log = RedoLog::create(&paths.redo, redo_backend, options.redo_bytes, redo_config(&options))?;
        (log, None)
    } else {
        let (log, scan) = RedoLog::open(&paths.redo, redo_backend, redo_config(&options))?;
        if options.resize_redo_at_open && log.capacity_bytes() != options.redo_bytes {
            let resized = resize_redo(&paths.redo, log, &scan, &options)?;
            report.redo_resized_from_bytes = Some(scan.report.capacity_bytes);
            (resized, Some(scan))
        } else {
            (log, Some(scan))
        }
    };
    let redo = Arc::new(redo);

    report.phases.log_scan = lap();

    // 2. Data file and doublewrite repair.
    let emulated = options
        .data_device
        .as_ref()
        .map(|spec| EmulatedDevice::new(spec.build()));
    let open_data_file = |path: &Path, create: bool, base_offset_bytes: u64| match (&storage, &emulated) {
        (Some(opener), _) => opener.open(path, create),
        (None, Some(device)) => open_emulated(path, options.io, create, device.clone(), base_offset_bytes),
        (None, None) => open_file(path, options.io, create),
    };
    let data_backend = open_data_file(&paths.data, create, EMULATED_DATA_OFFSET_BYTES)?;
    let ts = Arc::new(Tablespace::open(
        DATA_SPACE_ID,
        &paths.data,
        data_backend,
        options.page_size,
    )?);
    if let Some(scan) = &scan {
        check_file_covers_redo(&ts, scan)?;
    }
    // The change buffer's own file, if it has one or is to get one. Its
    // "device" is wherever the file is (another disk, or `/dev/shm` for
    // 004's ramdisk), never the emulated data device; on tmpfs, which has
    // no O_DIRECT, it is read and written through the page cache.
    let cb_file_exists = exists(&paths.change_buffer);
    let cb_ts = if options.change_buffer.mode == ChangeBufferMode::SeparateDevice || cb_file_exists {
        if let Some(dir) = paths.change_buffer.parent() {
            if storage.is_none() && !dir.is_dir() {
                return Err(files_err(dir, "the change buffer's directory does not exist"));
            }
        }
        let backend = match &storage {
            Some(opener) => opener.open(&paths.change_buffer, !cb_file_exists)?,
            None => {
                let io = if crate::storage::is_tmpfs(&paths.change_buffer) {
                    IoMode::Buffered
                } else {
                    options.io
                };
                open_file(&paths.change_buffer, io, !cb_file_exists)?
            }
        };
        Some(Arc::new(Tablespace::open(
            CHANGE_BUFFER_SPACE_ID,
            &paths.change_buffer,
            backend,
            options.page_size,
        )?))
    } else {
        None
    };
    if cb_ts.is_none() {
        if let Some(scan) = &scan {
            if let Some((lsn, _)) = scan
                .records
                .iter()
                .find(|(_, r)| r.page.space == CHANGE_BUFFER_SPACE_ID)
            {
                return Err(files_err(
                    &paths.change_buffer,
                    format!(
                        "the redo log changes the change buffer's own file (at lsn {lsn}) and it is not here: give --change-buffer-dir where it is"
                    ),
                ));
            }
        }
    }
    let dw = if options.doublewrite {
        let backend = open_data_file(&paths.doublewrite, true, 0)?;
        let dw = Doublewrite::open(&paths.doublewrite, backend, options.page_size, DOUBLEWRITE_SLOTS)?;
        if !create {
            let checkpoint_lsn = scan.as_ref().map_or(Lsn::ZERO, |s| s.report.checkpoint_lsn);
            let mut spaces: Vec<&Tablespace> = vec![&ts];
            spaces.extend(cb_ts.as_deref());
            let dw_report = dw.recover(&spaces, checkpoint_lsn)?;
            report.pages_repaired_from_doublewrite = dw_report.pages_repaired() as u64;
        }
        Some(Arc::new(dw))
    } else {
        None
    };

    report.phases.doublewrite = lap();

    // 3. Verification. A corrupt page that redo would read fails now; the
    // others wait for the pending bulk loads (step 6).
    let mut corrupt_pages = Vec::new();
    if !create && options.verify_pages_at_open {
        let (read, mut corrupt) = verify_pages(&ts)?;
        report.pages_read = read;
        if !corrupt.is_empty() {
            let named: HashSet<u32> = scan
                .iter()
                .flat_map(|s| s.records.iter())
                .filter(|(_, r)| r.page.space == DATA_SPACE_ID)
                .map(|(_, r)| r.page.page_no)
                .collect();
            if let Some(at) = corrupt.iter().position(|(p, _)| named.contains(p)) {
                return Err(corrupt.swap_remove(at).1);
            }
        }
        corrupt_pages = corrupt;
    }

    report.phases.verify = lap();

    // 4. Shell with the floor at the scan start, then redo.
    let txns = Arc::new(TxnTable::default());
    if let Some(scan) = &scan {
        txns.set_recovery(Some(scan.report.checkpoint_lsn));
    }
    let floor: CheckpointFloor = {
        let txns = Arc::clone(&txns);
        let redo = Arc::clone(&redo);
        Arc::new(move || txns.floor(&redo))
    };
    let mut spaces = vec![Arc::clone(&ts)];
    spaces.extend(cb_ts.iter().cloned());
    let shell = BufferPoolShell::open_with_floor(shell_config, Arc::clone(&redo), dw, spaces, Some(floor))?;
    report.phases.pool_open = lap();
    let mut losers: BTreeMap<TxnId, Vec<UndoEntry>> = BTreeMap::new();
    // Start LSN of each transaction's first record (its TxnBegin opens a
    // group, so this is a group boundary).
    let mut first_lsn: BTreeMap<TxnId, Lsn> = BTreeMap::new();
    let mut max_txn: TxnId = 0;
    let named = scan.as_ref().map(|scan| named_pages(&scan.records)).unwrap_or_default();
    let limit = read_ahead_limit(shell.config().frames);
    let (ahead, rest) = named.pages.split_at(named.pages.len().min(limit));
    report.redo_pages_named = named.pages.len() as u64;
    report.redo_pages_read = shell.prefetch_for_recovery(ahead, RECOVERY_READ_AHEAD, None);
    report.phases.redo_page_reads = lap();
    if let Some(scan) = &scan {
        report.redo_bytes_applied = scan.report.bytes;
        report.records_scanned = scan.records.len() as u64;
        report.torn_log_tail = scan.report.torn_tail;
        // The pages past the first read-ahead are read while the redo
        // before them is applied, at most half the pool ahead of it (the
        // other half holds the pages being changed).
        let window = ReadAheadWindow::new(ahead.len(), (limit * 2 / 3).max(1));
        let applied: Result<u64> = std::thread::scope(|threads| {
            let reader = threads.spawn(|| shell.prefetch_for_recovery(rest, RECOVERY_READ_AHEAD, Some(&window)));
            let mut apply = || -> Result<()> {
                for ((start, record), &met) in scan.records.iter().zip(&named.met_by_record) {
                    window.advance(met);
                    if let ApplyOutcome::Applied { .. } = shell.apply_redo(record, *start)? {
                        report.records_applied += 1;
                    }
                    // 5. Analysis.
                    max_txn = max_txn.max(record.txn_id);
                    match record.kind {
                        RecordKind::TxnBegin => {
                            losers.entry(record.txn_id).or_default();
                            first_lsn.entry(record.txn_id).or_insert(*start);
                        }
                        RecordKind::Undo => {
                            let entry = UndoEntry::from_record(record).ok_or_else(|| DbError::Recovery {
                                path: paths.redo.clone(),
                                txn: record.txn_id,
                                reason: format!("malformed undo record at lsn {start}"),
                            })?;
                            losers.entry(record.txn_id).or_default().push(entry);
                        }
                        RecordKind::TxnCommit | RecordKind::TxnRollback => {
                            losers.remove(&record.txn_id);
                        }
                        _ => {}
                    }
                }
                Ok(())
            };
            let result = apply();
            window.finish();
            // A reader that panicked read nothing more worth counting.
            let read_more = reader.join().unwrap_or(0);
            result.map(|()| read_more)
        });
        report.redo_pages_read_while_applying = applied?;
    }

    report.phases.redo_apply = lap();

    // 6. Catalog, trees, loser rollback.
    let store = SharedStore::new(Arc::new(shell.store(DATA_SPACE_ID)?));
    // Build the store's free-page set now, holding no latch: the store
    // builds it lazily on the first allocation by latching every page
    // shared, which self-deadlocks when that allocation is a B+tree split
    // holding exclusive latches on the path.
    store.0.free_pages()?;
    report.phases.free_page_scan = lap();
    let cb_store = match &cb_ts {
        Some(_) => {
            let store = SharedStore::new(Arc::new(shell.store(CHANGE_BUFFER_SPACE_ID)?));
            store.0.free_pages()?;
            Some(store)
        }
        None => None,
    };
    let pending_loads = bulk::pending_loads(&store.0)?;
    if let Some((_, err)) = corrupt_pages
        .into_iter()
        .find(|(p, _)| !pending_loads.iter().any(|l| l.contains(*p)))
    {
        return Err(err);
    }
    let catalog = if create {
        let tree = BTree::create(store.clone()).map_err(|e| DbError::index("catalog", e))?;
        if tree.root_page_no() != CATALOG_ROOT_PAGE {
            return Err(DbError::Catalog {
                path: paths.data.clone(),
                reason: format!("the catalog root landed on page {}", tree.root_page_no()),
            });
        }
        redo.wait_durable(redo.current_lsn())?;
        tree
    } else {
        BTree::open(store.clone(), CATALOG_ROOT_PAGE).map_err(|e| match &e {
            crate::btree::BTreeError::Store(_) => DbError::Catalog {
                path: paths.data.clone(),
                reason: e.to_string(),
            },
            _ => DbError::index("catalog", e),
        })?
    };
    let mut db = Database {
        merger: Mutex::new(None),
        change_buffer: None,
        secondary_hook: Arc::new(Default::default()),
        locks: LockTable::new(options.lock_wait_timeout),
        options,
        paths,
        redo,
        shell,
        store,
        catalog,
        indexes: RwLock::new(Default::default()),
        names: RwLock::new(Default::default()),
        txns,
        next_txn: AtomicU64::new(max_txn + 1),
        ddl: Mutex::new(()),
        loading: Mutex::new(Default::default()),
        report: RecoveryReport::default(),
        dir_lock,
    };
    db.load_catalog()?;
    // The change buffer before any secondary index is touched (the losers'
    // undo below may read leaves with buffered entries).
    // Leaf free space kept by a clean close (the file is deleted either way).
    if db.options.storage.is_none() {
        let path = LeafSpace::path_in(db.paths.data.parent().unwrap_or(Path::new(".")));
        let checkpoint = scan.as_ref().map_or(Lsn::ZERO, |s| s.report.checkpoint_lsn);
        let clean = scan.as_ref().is_some_and(|s| s.records.is_empty());
        report.leaf_space_pages_loaded = db
            .secondary_hook
            .leaves
            .take_saved(&path, checkpoint, clean)
            .map_err(|e| files_err(&path, format!("cannot read or remove the saved leaf free space: {e}")))?;
    }
    if let Some(cb) = ChangeBuffer::open(
        &db.store,
        cb_store.as_ref(),
        &db.secondary_hook.leaves,
        &db.catalog,
        &db.options.change_buffer,
        db.options.buffer_pool_bytes,
    )
    .map_err(|e| DbError::index("change buffer", e))?
    {
        let _ = db.secondary_hook.change_buffer.set(Arc::clone(&cb));
        db.change_buffer = Some(cb);
        db.redo.wait_durable(db.redo.current_lsn())?;
    }
    // The applied redo now lives in dirty pages (the pool keeps the
    // checkpoint behind them); only the losers' undo records must stay in
    // the log, so the floor drops to the first of them and checkpoints can
    // make room for the rollback's own redo.
    let scan_start = scan.as_ref().map_or(Lsn::ZERO, |s| s.report.checkpoint_lsn);
    let loser_floor = losers
        .keys()
        .map(|t| first_lsn.get(t).copied().unwrap_or(scan_start))
        .min();
    db.txns.set_recovery(loser_floor);
    report.phases.catalog = lap();
    for (txn, entries) in &losers {
        for entry in entries.iter().rev() {
            let index = db.index_by_id(IndexId(entry.index_id)).map_err(|_| DbError::Recovery {
                path: db.paths.redo.clone(),
                txn: *txn,
                reason: format!(
                    "undo entry names index {} which the catalog does not have",
                    entry.index_id
                ),
            })?;
            restore(&index, entry).map_err(|e| DbError::Index {
                index: index.name.clone(),
                source: e,
            })?;
            report.undo_entries_applied += 1;
        }
        db.redo.append(&[Record::txn_rollback(*txn)])?;
        report.losers_rolled_back += 1;
    }
    db.redo.wait_durable(db.redo.current_lsn())?;

    report.phases.undo = lap();

    // 7. Floor off, crashed bulk loads reclaimed, checkpoint.
    db.txns.set_recovery(None);
    for load in &pending_loads {
        report.load_pages_reclaimed += bulk::reclaim(&db.store.0, &db.redo, load, true)?;
        report.loads_reclaimed += 1;
    }
    db.shell.checkpoint()?;
    // The maximum binds users only: redo and the losers' undo above had to
    // complete whatever the size.
    db.store.0.tablespace().set_max_bytes(db.options.data_file_max_bytes);
    report.phases.checkpoint = lap();
    if let Some(cb) = &db.change_buffer {
        if db.shell.config().background_threads {
            let merger = Merger::start(Arc::clone(cb)).map_err(|e| DbError::Options {
                reason: format!("cannot start the change buffer's merge thread: {e}"),
            })?;
            *db.merger.lock() = Some(merger);
        }
    }
    report.duration = started.elapsed();
    // An open that resized the redo log wrote a new log file: its time is
    // the resize's, not what opening costs, so it is not recorded.
    if let Some(path) = profile_path.filter(|_| !create && report.redo_resized_from_bytes.is_none()) {
        // Verification is a check's option, not part of serving opens.
        let took = report.duration.saturating_sub(report.phases.verify);
        if report.redo_bytes_applied > 0 {
            profile.record_recovery(
                report.redo_bytes_applied,
                took,
                report.redo_pages_read,
                report.phases.redo_page_reads,
                report.phases.redo_apply,
            );
        } else {
            profile.record_open(took);
        }
        if let Err(e) = profile.save(&path) {
            // Derived data: the database is recovered whether or not the
            // measurement is kept.
            report.profile_error = Some(e);
        }
    }
    db.report = report;
    Ok(db)
}
