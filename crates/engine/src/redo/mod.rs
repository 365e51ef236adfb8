//! The engine's redo log: an InnoDB-style fixed-capacity circular log.
//!
//! - [`record`]: physiological records and their checksummed encoding.
//! - [`log_file`]: the file layout (header, two alternating checkpoint
//!   blocks, a ring of 512-byte blocks) and the LSN ↔ offset map.
//! - [`writer`]: [`RedoLog`], thread-safe append, group commit, the three
//!   `flush_log_at_trx_commit` modes, checkpoints and space accounting.
//! - [`reader`]: the recovery scan from the newest valid checkpoint to the
//!   end of the valid log.
//!
//! Invariants kept across the module:
//! 1. An LSN is a byte position in the endless block stream; it never
//!    decreases and maps to `DATA_OFFSET + lsn % capacity` in the file.
//! 2. The log never overwrites a block at or after the last written
//!    checkpoint LSN; an append that would is refused with
//!    [`RedoError::LogFull`].
//! 3. A checkpoint is written only once the log is durable up to its LSN.
//! 4. A failed write or fsync poisons the log: every later call fails with
//!    [`RedoError::Poisoned`] (a failed fsync is never retried as if nothing
//!    happened; see reliability.md, TigerBeetle and redb).
//! 5. Recovery yields exactly the complete append groups from the checkpoint
//!    LSN to the end of the valid log; a torn tail ends the log, lost
//!    durable data is an error.

use std::path::PathBuf;

use flushwise_core::Lsn;

use crate::storage::StorageError;

pub mod log_file;
pub mod reader;
pub mod record;
pub mod writer;

pub use log_file::{lsn_after, BLOCK_SIZE};
pub use reader::{RecoveryScan, ScanReport};
pub use record::{Record, RecordError, RecordKind};
pub use writer::{FlushMode, RedoConfig, RedoLog, RedoStats};

/// Errors of the redo log. Messages are lowercase and name the file and LSN.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedoError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("redo log {path} is truncated: its header says {expected_len} bytes, the file has {actual_len}")]
    Truncated {
        path: PathBuf,
        expected_len: u64,
        actual_len: u64,
    },
    #[error("redo log {path} has a bad file header: {reason}")]
    BadHeader { path: PathBuf, reason: String },
    #[error("redo log {path} has no valid checkpoint block (slot 0: {slot0}; slot 1: {slot1})")]
    NoValidCheckpoint {
        path: PathBuf,
        slot0: String,
        slot1: String,
    },
    #[error("redo log {path} is corrupt at lsn {lsn} (file offset {offset}): {reason}")]
    Corrupt {
        path: PathBuf,
        lsn: Lsn,
        offset: u64,
        reason: String,
    },
    #[error("redo log {path} is full: the append needs {needed} bytes, {free} are free before the checkpoint at lsn {checkpoint_lsn}; flush pages and checkpoint first")]
    LogFull {
        path: PathBuf,
        needed: u64,
        free: u64,
        checkpoint_lsn: Lsn,
    },
    #[error("redo log {path}: append group of {bytes} bytes does not fit the {buffer_bytes}-byte log buffer")]
    GroupTooLarge {
        path: PathBuf,
        bytes: usize,
        buffer_bytes: usize,
    },
    #[error("redo log {path}: {source}")]
    Record {
        path: PathBuf,
        #[source]
        source: RecordError,
    },
    #[error("redo log {path}: invalid lsn {lsn}: {reason}")]
    InvalidLsn { path: PathBuf, lsn: Lsn, reason: String },
    #[error("redo log {path}: invalid configuration: {reason}")]
    InvalidConfig { path: PathBuf, reason: String },
    #[error("redo log {path}: cannot start the background flusher thread: {source}")]
    FlusherSpawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("redo log {path}: an earlier write or fsync failed ({first_error}); the log refuses further work: close and re-open the database")]
    Poisoned { path: PathBuf, first_error: String },
}

pub type Result<T> = std::result::Result<T, RedoError>;
