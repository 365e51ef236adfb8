//! [`RedoLog`]: thread-safe append, group commit, flush modes, checkpoints.
//!
//! # Append and the log buffer
//! [`RedoLog::append`] encodes a group of records (a mini-transaction)
//! outside any lock, then, under one short mutex, checks space, reserves the
//! group's LSN range and copies the bytes into the log buffer. It returns
//! the group's end LSN. Nothing is written to the file by `append` unless
//! the buffer is full (then the appender writes the buffer out first).
//!
//! # Group commit
//! [`RedoLog::wait_durable`] is leader/follower, as in InnoDB and
//! PostgreSQL: the first waiter that finds no I/O in flight becomes the
//! leader, formats *everything* buffered into blocks, writes it and fsyncs
//! once, outside the mutex; waiters whose LSN that covers return when it
//! completes (a `Condvar` wakes them). Commits that arrive during the fsync
//! are all covered by the next leader's single fsync. So N concurrent
//! committers cost about two fsyncs per wave rather than N.
//!
//! # `flush_log_at_trx_commit` ([`FlushMode`], [`RedoLog::commit_durability`])
//! | mode | at commit | background, every `flush_interval` (1 s) | a commit survives |
//! |------|-----------|-------------------------------------------|-------------------|
//! | `1` [`FlushMode::SyncAtCommit`] | write + fsync | write + fsync | process crash **and** power loss |
//! | `2` [`FlushMode::WriteAtCommit`] | write (to the OS page cache) | write + fsync | a process crash (the page cache survives); a power loss or OS crash can lose up to ~1 s |
//! | `0` [`FlushMode::EverySecond`] | nothing (stays in the log buffer) | write + fsync | neither for sure: even a process crash can lose up to ~1 s |
//!
//! Semantics from the MySQL manual, as summarised in
//! `/work/shared/reference/reliability.md` §2. The background flusher is a
//! thread owned by the `RedoLog`, started when `flush_interval` is set and
//! stopped by [`RedoLog::stop_background_flusher`], [`RedoLog::close`] or
//! drop.
//!
//! # Space accounting
//! The data area is a ring. Blocks from the one holding the last *written*
//! checkpoint LSN up to the one holding the current LSN are in use and are
//! never overwritten: an append that would need more is refused with
//! [`RedoError::LogFull`]. The buffer pool above must flush pages and call
//! [`RedoLog::write_checkpoint`] before that (the core's redo margins); this
//! module only enforces the hard rule.
//!
//! # Invariants (checked in `State::check_invariants` in debug builds)
//! 1. `checkpoint_sn <= durable_sn <= written_sn <= reserved_sn`.
//! 2. The buffer holds record bytes `[buf_base_sn, reserved_sn)`;
//!    `buf_base_sn` is the start of the block holding `written_sn`.
//! 3. Blocks in use span at most `capacity / BLOCK_SIZE` blocks.
//! 4. At most one thread does log I/O at a time (`io_busy`).
//! 5. After a failed write or fsync the log is poisoned for good.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use flushwise_core::Lsn;
use parking_lot::{Condvar, Mutex, MutexGuard};

use super::log_file::{
    block_no_of_sn, block_offset, capacity_is_valid, encode_block, file_len, lsn_offset, lsn_to_sn, sn_to_lsn,
    CheckpointBlock, FileHeader, BLOCK_HDR_SIZE, BLOCK_PAYLOAD, BLOCK_SIZE, CAPACITY_BYTES_MAX, CAPACITY_BYTES_MIN,
    CHECKPOINT_OFFSETS, DATA_OFFSET,
};
use super::reader::{self, RecoveryScan};
use super::record::Record;
use super::{RedoError, Result};
use crate::storage::{StorageBackend, StorageError};

/// Default log buffer: InnoDB 8.0's `innodb_log_buffer_size` default, 16 MiB.
pub const LOG_BUFFER_BYTES_DEFAULT: usize = 16 << 20;
/// Smallest log buffer: 8 blocks of record bytes.
pub const LOG_BUFFER_BYTES_MIN: usize = 8 * BLOCK_PAYLOAD;
/// Largest log buffer, 1 GiB (a limit on memory, per TigerBeetle style).
pub const LOG_BUFFER_BYTES_MAX: usize = 1 << 30;
/// Background flush period: InnoDB flushes the log "once per second".
pub const FLUSH_INTERVAL_DEFAULT: Duration = Duration::from_secs(1);

/// What a commit does with the log (`innodb_flush_log_at_trx_commit`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlushMode {
    /// `0`: nothing at commit; the background flusher writes and fsyncs.
    EverySecond,
    /// `1`: write and fsync at commit (group commit shares the fsync).
    SyncAtCommit,
    /// `2`: write at commit; the background flusher fsyncs.
    WriteAtCommit,
}

impl FlushMode {
    /// Maps `innodb_flush_log_at_trx_commit` values 0, 1, 2.
    pub const fn from_innodb(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::EverySecond),
            1 => Some(Self::SyncAtCommit),
            2 => Some(Self::WriteAtCommit),
            _ => None,
        }
    }

    pub const fn innodb_value(self) -> u8 {
        match self {
            Self::EverySecond => 0,
            Self::SyncAtCommit => 1,
            Self::WriteAtCommit => 2,
        }
    }
}

/// Tunables of an open log (the capacity is fixed at creation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedoConfig {
    /// Bytes of records buffered before an append must write them out.
    pub log_buffer_bytes: usize,
    /// Period of the background write + fsync; `None`: no flusher thread.
    pub flush_interval: Option<Duration>,
}

impl Default for RedoConfig {
    fn default() -> Self {
        Self {
            log_buffer_bytes: LOG_BUFFER_BYTES_DEFAULT,
            flush_interval: Some(FLUSH_INTERVAL_DEFAULT),
        }
    }
}

/// Counters since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedoStats {
    pub groups: u64,
    pub records: u64,
    /// Record bytes appended (without block framing).
    pub record_bytes: u64,
    /// Log write batches (each one or two `write` calls).
    pub log_writes: u64,
    /// fsyncs of log data, background ones included (checkpoints excluded).
    pub log_syncs: u64,
    /// Of `log_syncs`, those done by the background flusher.
    pub background_syncs: u64,
    pub checkpoints: u64,
    /// Wall time of the batches that ended in an fsync (formatting the
    /// blocks, their writes and the fsync), ns: what a group commit waits
    /// for on the device.
    pub synced_batch_ns: u64,
}

#[derive(Default)]
struct Counters {
    groups: AtomicU64,
    records: AtomicU64,
    record_bytes: AtomicU64,
    log_writes: AtomicU64,
    log_syncs: AtomicU64,
    background_syncs: AtomicU64,
    checkpoints: AtomicU64,
    synced_batch_ns: AtomicU64,
}

struct State {
    /// Record bytes reserved by appends (the current LSN in sn units).
    reserved_sn: u64,
    /// Record bytes handed to the OS.
    written_sn: u64,
    /// Record bytes fsynced.
    durable_sn: u64,
    /// Last written checkpoint.
    checkpoint_sn: u64,
    /// Record bytes `[buf_base_sn, reserved_sn)`.
    buf: Vec<u8>,
    buf_base_sn: u64,
    /// `first_rec` per block from `buf_base_sn`'s block; 0 = none (yet).
    first_recs: VecDeque<u16>,
    io_busy: bool,
    poisoned: Option<String>,
}

impl State {
    fn check_invariants(&self) {
        debug_assert!(self.checkpoint_sn <= self.durable_sn);
        debug_assert!(self.durable_sn <= self.written_sn);
        debug_assert!(self.written_sn <= self.reserved_sn);
        debug_assert_eq!(
            self.buf_base_sn,
            self.written_sn / BLOCK_PAYLOAD as u64 * BLOCK_PAYLOAD as u64
        );
        debug_assert_eq!(self.buf_base_sn + self.buf.len() as u64, self.reserved_sn);
    }
}

/// A batch for the I/O leader: record bytes from a block start to `end_sn`.
struct Job {
    first_sn: u64,
    end_sn: u64,
    data: Vec<u8>,
    first_recs: Vec<u16>,
    durable_lsn: Lsn,
}

struct Shared {
    path: PathBuf,
    backend: Arc<dyn StorageBackend>,
    capacity_bytes: u64,
    n_blocks: u64,
    incarnation: u32,
    log_buffer_bytes: usize,
    state: Mutex<State>,
    io_done: Condvar,
    /// Last written checkpoint; its lock serialises checkpoint writers.
    checkpoint: Mutex<CheckpointBlock>,
    stop: Mutex<bool>,
    stop_cv: Condvar,
    counters: Counters,
}

/// The redo log of one database. Share it as `Arc<RedoLog>`.
pub struct RedoLog {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for RedoLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedoLog")
            .field("path", &self.shared.path)
            .field("capacity_bytes", &self.shared.capacity_bytes)
            .field("current_lsn", &self.current_lsn())
            .field("checkpoint_lsn", &self.checkpoint_lsn())
            .finish()
    }
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

impl Shared {
    fn check_poison(&self, st: &State) -> Result<()> {
        match &st.poisoned {
            Some(first_error) => Err(RedoError::Poisoned {
                path: self.path.clone(),
                first_error: first_error.clone(),
            }),
            None => Ok(()),
        }
    }

    fn poison(&self, err: &StorageError) {
        let mut st = self.state.lock();
        st.poisoned.get_or_insert_with(|| err.to_string());
        self.io_done.notify_all();
    }

    fn sn_of(&self, lsn: Lsn) -> Result<u64> {
        lsn_to_sn(lsn).ok_or_else(|| RedoError::InvalidLsn {
            path: self.path.clone(),
            lsn,
            reason: "not a record position (inside a block header or trailer)".into(),
        })
    }

    /// (bytes the append of `len` record bytes needs, bytes free), both in
    /// whole blocks of the ring.
    fn space(&self, st: &State, len: u64) -> (u64, u64) {
        let p = BLOCK_PAYLOAD as u64;
        let b = BLOCK_SIZE as u64;
        let ckpt_block = st.checkpoint_sn / p;
        let used = ceil_div(st.reserved_sn, p) - ckpt_block;
        let after = ceil_div(st.reserved_sn + len, p) - ckpt_block;
        ((after - used) * b, self.capacity_bytes.saturating_sub(used * b))
    }

    fn take_job(&self, st: &State) -> Job {
        let p = BLOCK_PAYLOAD as u64;
        let first_sn = st.written_sn / p * p;
        let end_sn = st.reserved_sn;
        let (data, first_recs) = if end_sn > st.written_sn {
            let from = (first_sn - st.buf_base_sn) as usize;
            let to = (end_sn - st.buf_base_sn) as usize;
            let skip = ((first_sn - st.buf_base_sn) / p) as usize;
            let n = ceil_div(end_sn - first_sn, p) as usize;
            let recs = (0..n)
                .map(|k| st.first_recs.get(skip + k).copied().unwrap_or(0))
                .collect();
            (st.buf[from..to].to_vec(), recs)
        } else {
            (Vec::new(), Vec::new())
        };
        Job {
            first_sn,
            end_sn,
            data,
            first_recs,
            durable_lsn: sn_to_lsn(st.durable_sn),
        }
    }

    /// Formats and writes a job (at most two writes: the ring may wrap),
    /// then fsyncs if asked. Runs outside the state mutex.
    fn run_io(&self, job: &Job, sync: bool) -> std::result::Result<(), StorageError> {
        let batch_clock = std::time::Instant::now();
        if !job.data.is_empty() {
            let n = job.first_recs.len();
            let mut out = vec![0u8; n * BLOCK_SIZE];
            let first_block = block_no_of_sn(job.first_sn);
            for (k, block) in out.chunks_exact_mut(BLOCK_SIZE).enumerate() {
                let from = k * BLOCK_PAYLOAD;
                let to = (from + BLOCK_PAYLOAD).min(job.data.len());
                encode_block(
                    block,
                    first_block + k as u64,
                    job.durable_lsn,
                    self.incarnation,
                    job.first_recs[k],
                    &job.data[from..to],
                );
            }
            assert!(n as u64 <= self.n_blocks, "a write batch never exceeds the ring");
            let first_run = (self.n_blocks - first_block % self.n_blocks).min(n as u64) as usize;
            self.backend.write(
                block_offset(first_block, self.capacity_bytes),
                &out[..first_run * BLOCK_SIZE],
            )?;
            if first_run < n {
                self.backend.write(DATA_OFFSET, &out[first_run * BLOCK_SIZE..])?;
            }
            self.counters.log_writes.fetch_add(1, Ordering::Relaxed);
        }
        if sync {
            self.backend.sync_data()?;
            self.counters.log_syncs.fetch_add(1, Ordering::Relaxed);
            let batch_ns = batch_clock.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            self.counters.synced_batch_ns.fetch_add(batch_ns, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Returns once record bytes up to `target_sn` (clamped to the current
    /// position) are written, and fsynced if `sync`. Leader/follower: see
    /// the module doc.
    fn write_up_to(&self, target_sn: u64, sync: bool) -> Result<()> {
        let mut st = self.state.lock();
        let target = target_sn.min(st.reserved_sn);
        loop {
            self.check_poison(&st)?;
            let done = if sync {
                st.durable_sn >= target
            } else {
                st.written_sn >= target
            };
            if done {
                return Ok(());
            }
            if st.io_busy {
                self.io_done.wait(&mut st);
                continue;
            }
            st.io_busy = true;
            let job = self.take_job(&st);
            let res = MutexGuard::unlocked(&mut st, || self.run_io(&job, sync));
            st.io_busy = false;
            self.io_done.notify_all();
            if let Err(e) = res {
                st.poisoned.get_or_insert_with(|| e.to_string());
                return Err(e.into());
            }
            st.written_sn = st.written_sn.max(job.end_sn);
            if sync {
                st.durable_sn = st.durable_sn.max(job.end_sn);
            }
            // Drop buffered bytes of blocks that will never be rewritten.
            let p = BLOCK_PAYLOAD as u64;
            let new_base = st.written_sn / p * p;
            let drop_bytes = (new_base - st.buf_base_sn) as usize;
            let drop_blocks = ((new_base - st.buf_base_sn) / p) as usize;
            st.buf.drain(..drop_bytes);
            let drop_blocks = drop_blocks.min(st.first_recs.len());
            st.first_recs.drain(..drop_blocks);
            st.buf_base_sn = new_base;
            st.check_invariants();
        }
    }

    fn write_checkpoint_block(&self, block: &CheckpointBlock) -> Result<()> {
        let res = self
            .backend
            .write(CHECKPOINT_OFFSETS[block.slot()], &block.encode())
            .and_then(|()| self.backend.sync_data());
        if let Err(e) = res {
            self.poison(&e);
            return Err(e.into());
        }
        Ok(())
    }
}

fn flusher_loop(shared: Arc<Shared>, interval: Duration) {
    loop {
        {
            let mut stop = shared.stop.lock();
            if !*stop {
                shared.stop_cv.wait_for(&mut stop, interval);
            }
            if *stop {
                return;
            }
        }
        let (target, pending, poisoned) = {
            let st = shared.state.lock();
            (st.reserved_sn, st.durable_sn < st.reserved_sn, st.poisoned.is_some())
        };
        if poisoned {
            return;
        }
        if pending {
            if shared.write_up_to(target, true).is_err() {
                return; // the log is poisoned; callers see the error
            }
            shared.counters.background_syncs.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl RedoLog {
    /// Creates (or overwrites) the log file at `path` through `backend` with
    /// a data area of `capacity_bytes` (a multiple of [`BLOCK_SIZE`], 4 KiB
    /// to 1 TiB), and opens it. `path` names the file in errors.
    pub fn create(
        path: &Path,
        backend: Arc<dyn StorageBackend>,
        capacity_bytes: u64,
        config: RedoConfig,
    ) -> Result<RedoLog> {
        Self::create_from(path, backend, capacity_bytes, config, sn_to_lsn(0))
    }

    /// [`Self::create`] for a log that continues an earlier one: the new
    /// stream starts at the first block boundary at or after `resume_lsn`
    /// (the old log's end), so LSNs never go backwards and every page LSN
    /// already on disk stays below the new log's start. Used to resize the
    /// log of a cleanly closed database (InnoDB 5.6.8+ does the same at
    /// startup when `innodb_log_file_size` changed).
    pub fn create_from(
        path: &Path,
        backend: Arc<dyn StorageBackend>,
        capacity_bytes: u64,
        config: RedoConfig,
        resume_lsn: Lsn,
    ) -> Result<RedoLog> {
        if !capacity_is_valid(capacity_bytes) {
            return Err(RedoError::InvalidConfig {
                path: path.to_path_buf(),
                reason: format!(
                    "capacity {capacity_bytes} bytes must be a multiple of {BLOCK_SIZE} in {CAPACITY_BYTES_MIN}..={CAPACITY_BYTES_MAX}"
                ),
            });
        }
        // Zero-fill: an unwritten data block fails its checksum.
        backend.set_len(0)?;
        backend.set_len(file_len(capacity_bytes))?;
        backend.write(0, &FileHeader { capacity_bytes }.encode())?;
        let p = BLOCK_PAYLOAD as u64;
        // The first record byte of the block holding `resume_lsn`, or of the
        // next block: a fresh block boundary.
        let resume_block = resume_lsn.0.saturating_sub(sn_to_lsn(0).0).div_ceil(BLOCK_SIZE as u64);
        let start = sn_to_lsn(resume_block * p);
        let first = CheckpointBlock {
            checkpoint_no: 0,
            checkpoint_lsn: start,
            offset: lsn_offset(start, capacity_bytes),
            durable_lsn: start,
            incarnation: 0,
        };
        backend.write(CHECKPOINT_OFFSETS[first.slot()], &first.encode())?;
        backend.sync_data()?;
        let (log, _empty) = Self::open(path, backend, config)?;
        Ok(log)
    }

    /// Opens an existing log: scans it from the newest valid checkpoint,
    /// makes what it read durable, starts a new incarnation (written into a
    /// fresh checkpoint block) and resumes appending at the end found.
    /// Returns the log and the records recovery must redo.
    pub fn open(path: &Path, backend: Arc<dyn StorageBackend>, config: RedoConfig) -> Result<(RedoLog, RecoveryScan)> {
        if !(LOG_BUFFER_BYTES_MIN..=LOG_BUFFER_BYTES_MAX).contains(&config.log_buffer_bytes) {
            return Err(RedoError::InvalidConfig {
                path: path.to_path_buf(),
                reason: format!(
                    "log buffer of {} bytes outside {LOG_BUFFER_BYTES_MIN}..={LOG_BUFFER_BYTES_MAX}",
                    config.log_buffer_bytes
                ),
            });
        }
        if config.flush_interval == Some(Duration::ZERO) {
            return Err(RedoError::InvalidConfig {
                path: path.to_path_buf(),
                reason: "flush interval must be positive".into(),
            });
        }
        let rec = reader::recover(path, &*backend)?;
        // After a process crash what we read may sit only in the page cache;
        // make it durable before a checkpoint claims it is.
        backend.sync_data()?;
        let old = rec.checkpoint;
        let incarnation = old.incarnation.checked_add(1).ok_or_else(|| RedoError::Corrupt {
            path: path.to_path_buf(),
            lsn: old.checkpoint_lsn,
            offset: old.offset,
            reason: "incarnation counter exhausted".into(),
        })?;
        let checkpoint = CheckpointBlock {
            checkpoint_no: old.checkpoint_no + 1,
            durable_lsn: sn_to_lsn(rec.end_sn),
            incarnation,
            ..old
        };
        let checkpoint_sn = lsn_to_sn(old.checkpoint_lsn).unwrap_or(rec.end_sn);
        let p = BLOCK_PAYLOAD as u64;
        let mut first_recs = VecDeque::new();
        if !rec.tail.is_empty() {
            first_recs.push_back(rec.tail_first_rec);
        }
        let state = State {
            reserved_sn: rec.end_sn,
            written_sn: rec.end_sn,
            durable_sn: rec.end_sn,
            checkpoint_sn,
            buf: rec.tail,
            buf_base_sn: rec.end_sn / p * p,
            first_recs,
            io_busy: false,
            poisoned: None,
        };
        state.check_invariants();
        let shared = Arc::new(Shared {
            path: path.to_path_buf(),
            backend,
            capacity_bytes: rec.capacity_bytes,
            n_blocks: rec.capacity_bytes / BLOCK_SIZE as u64,
            incarnation,
            log_buffer_bytes: config.log_buffer_bytes,
            state: Mutex::new(state),
            io_done: Condvar::new(),
            checkpoint: Mutex::new(checkpoint),
            stop: Mutex::new(false),
            stop_cv: Condvar::new(),
            counters: Counters::default(),
        });
        shared.write_checkpoint_block(&checkpoint)?;
        let flusher = match config.flush_interval {
            Some(interval) => {
                let sh = Arc::clone(&shared);
                let handle = std::thread::Builder::new()
                    .name("redo-flusher".into())
                    .spawn(move || flusher_loop(sh, interval))
                    .map_err(|source| RedoError::FlusherSpawn {
                        path: path.to_path_buf(),
                        source,
                    })?;
                Some(handle)
            }
            None => None,
        };
        let log = RedoLog {
            shared,
            flusher: Mutex::new(flusher),
        };
        Ok((log, rec.scan))
    }

    /// Appends one group of records atomically (recovery redoes all of it
    /// or none of it) and returns the group's end LSN. The LSN of record
    /// `i` is the group's start plus the encoded lengths before it (see
    /// [`super::lsn_after`]). Fails with [`RedoError::LogFull`] rather than
    /// overwrite log still needed by the last checkpoint.
    pub fn append(&self, records: &[Record]) -> Result<Lsn> {
        let sh = &*self.shared;
        if records.is_empty() {
            return Ok(self.current_lsn());
        }
        let total: usize = records.iter().map(Record::encoded_len).sum();
        let mut bytes = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            starts.push(bytes.len() as u64);
            r.encode_into(&mut bytes, i + 1 == records.len())
                .map_err(|source| RedoError::Record {
                    path: sh.path.clone(),
                    source,
                })?;
        }
        if bytes.len() + BLOCK_PAYLOAD > sh.log_buffer_bytes {
            return Err(RedoError::GroupTooLarge {
                path: sh.path.clone(),
                bytes: bytes.len(),
                buffer_bytes: sh.log_buffer_bytes,
            });
        }
        let len = bytes.len() as u64;
        let mut st = sh.state.lock();
        loop {
            sh.check_poison(&st)?;
            let (needed, free) = sh.space(&st, len);
            if needed > free {
                return Err(RedoError::LogFull {
                    path: sh.path.clone(),
                    needed,
                    free,
                    checkpoint_lsn: sn_to_lsn(st.checkpoint_sn),
                });
            }
            if (st.reserved_sn + len - st.buf_base_sn) as usize > sh.log_buffer_bytes {
                let target = st.reserved_sn;
                MutexGuard::unlocked(&mut st, || sh.write_up_to(target, false))?;
                continue;
            }
            break;
        }
        let p = BLOCK_PAYLOAD as u64;
        let start = st.reserved_sn;
        let base_block = st.buf_base_sn / p;
        st.buf.extend_from_slice(&bytes);
        for s in starts {
            let sn = start + s;
            let idx = (sn / p - base_block) as usize;
            if st.first_recs.len() <= idx {
                st.first_recs.resize(idx + 1, 0);
            }
            if st.first_recs[idx] == 0 {
                st.first_recs[idx] = (BLOCK_HDR_SIZE as u64 + sn % p) as u16;
            }
        }
        st.reserved_sn += len;
        let end = st.reserved_sn;
        st.check_invariants();
        drop(st);
        let c = &sh.counters;
        c.groups.fetch_add(1, Ordering::Relaxed);
        c.records.fetch_add(records.len() as u64, Ordering::Relaxed);
        c.record_bytes.fetch_add(len, Ordering::Relaxed);
        Ok(sn_to_lsn(end))
    }

    /// Returns once the log is written and fsynced up to `lsn` (clamped to
    /// the current LSN). Concurrent callers share fsyncs (group commit).
    pub fn wait_durable(&self, lsn: Lsn) -> Result<()> {
        let sn = self.shared.sn_of(lsn)?;
        self.shared.write_up_to(sn, true)
    }

    /// Returns once the log is written (not necessarily fsynced) up to `lsn`.
    pub fn wait_written(&self, lsn: Lsn) -> Result<()> {
        let sn = self.shared.sn_of(lsn)?;
        self.shared.write_up_to(sn, false)
    }

    /// What a transaction commit ending at `lsn` does in `mode`; see the
    /// module doc for what each mode survives.
    pub fn commit_durability(&self, lsn: Lsn, mode: FlushMode) -> Result<()> {
        match mode {
            FlushMode::SyncAtCommit => self.wait_durable(lsn),
            FlushMode::WriteAtCommit => self.wait_written(lsn),
            FlushMode::EverySecond => {
                let st = self.shared.state.lock();
                self.shared.check_poison(&st)
            }
        }
    }

    /// Writes a checkpoint at `lsn`: makes the log durable up to `lsn`,
    /// writes the next alternating checkpoint block and fsyncs it. The
    /// caller guarantees every page change before `lsn` is on disk, and that
    /// `lsn` is an append-group boundary (an LSN returned by `append`, or
    /// `current_lsn()`); redo space before it becomes reusable.
    pub fn write_checkpoint(&self, lsn: Lsn) -> Result<()> {
        let sh = &*self.shared;
        let sn = sh.sn_of(lsn)?;
        let mut last = sh.checkpoint.lock();
        {
            let st = sh.state.lock();
            sh.check_poison(&st)?;
            let reason = if sn < st.checkpoint_sn {
                Some(format!(
                    "older than the current checkpoint at lsn {}",
                    sn_to_lsn(st.checkpoint_sn)
                ))
            } else if sn > st.reserved_sn {
                Some(format!("beyond the current lsn {}", sn_to_lsn(st.reserved_sn)))
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(RedoError::InvalidLsn {
                    path: sh.path.clone(),
                    lsn,
                    reason,
                });
            }
        }
        sh.write_up_to(sn, true)?;
        let durable_lsn = sn_to_lsn(sh.state.lock().durable_sn);
        let checkpoint_lsn = sn_to_lsn(sn);
        let next = CheckpointBlock {
            checkpoint_no: last.checkpoint_no + 1,
            checkpoint_lsn,
            offset: lsn_offset(checkpoint_lsn, sh.capacity_bytes),
            durable_lsn,
            incarnation: sh.incarnation,
        };
        sh.write_checkpoint_block(&next)?;
        *last = next;
        let mut st = sh.state.lock();
        st.checkpoint_sn = st.checkpoint_sn.max(sn);
        st.check_invariants();
        sh.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// LSN of the last written checkpoint.
    pub fn checkpoint_lsn(&self) -> Lsn {
        sn_to_lsn(self.shared.state.lock().checkpoint_sn)
    }

    /// Number of the last written checkpoint.
    pub fn checkpoint_no(&self) -> u64 {
        self.shared.checkpoint.lock().checkpoint_no
    }

    /// End LSN of the last appended group.
    pub fn current_lsn(&self) -> Lsn {
        sn_to_lsn(self.shared.state.lock().reserved_sn)
    }

    /// The log is written (handed to the OS) up to here.
    pub fn written_lsn(&self) -> Lsn {
        sn_to_lsn(self.shared.state.lock().written_sn)
    }

    /// The log is fsynced up to here.
    pub fn durable_lsn(&self) -> Lsn {
        sn_to_lsn(self.shared.state.lock().durable_sn)
    }

    /// Checkpoint age: LSN bytes from the last checkpoint to the current LSN.
    pub fn checkpoint_age(&self) -> u64 {
        let st = self.shared.state.lock();
        sn_to_lsn(st.reserved_sn).bytes_since(sn_to_lsn(st.checkpoint_sn))
    }

    /// Bytes of the ring an append may still use before it would overwrite
    /// log the last checkpoint needs (counted in whole blocks).
    pub fn free_bytes(&self) -> u64 {
        let st = self.shared.state.lock();
        self.shared.space(&st, 0).1
    }

    /// Size of the circular data area.
    pub fn capacity_bytes(&self) -> u64 {
        self.shared.capacity_bytes
    }

    /// This open's incarnation number (bumped at every open).
    pub fn incarnation(&self) -> u32 {
        self.shared.incarnation
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    pub fn stats(&self) -> RedoStats {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RedoStats {
            groups: get(&c.groups),
            records: get(&c.records),
            record_bytes: get(&c.record_bytes),
            log_writes: get(&c.log_writes),
            log_syncs: get(&c.log_syncs),
            background_syncs: get(&c.background_syncs),
            checkpoints: get(&c.checkpoints),
            synced_batch_ns: get(&c.synced_batch_ns),
        }
    }

    /// Stops and joins the background flusher, if any. Idempotent.
    pub fn stop_background_flusher(&self) {
        *self.shared.stop.lock() = true;
        self.shared.stop_cv.notify_all();
        if let Some(handle) = self.flusher.lock().take() {
            // A panicked flusher has nothing left to clean up.
            let _ = handle.join();
        }
    }

    /// Stops the flusher and makes everything appended durable. Dropping
    /// without `close` is a process crash for whatever was not yet written.
    pub fn close(self) -> Result<()> {
        self.stop_background_flusher();
        let target = self.shared.state.lock().reserved_sn;
        self.shared.write_up_to(target, true)
    }
}

impl Drop for RedoLog {
    fn drop(&mut self) {
        self.stop_background_flusher();
    }
}
