//! [`TraceRecorder`]: records what the engine's buffer pool sees of a real
//! workload as a `flushwise-trace` file, so the simulator can replay it.
//!
//! Installed into a running shell ([`crate::buffer::BufferPoolShell::set_trace_recorder`],
//! or [`crate::db::Database::set_trace_recorder`]), the recorder gets one
//! `Fix` per page guard a user thread takes through a
//! [`crate::buffer::SpaceStore`] (B+tree descents, catalog reads, page
//! allocations) and one `Unfix` when the guard is released. The workload
//! adds the transaction boundaries itself ([`TraceRecorder::txn_begin`],
//! [`TraceRecorder::txn_commit`], [`TraceRecorder::txn_rollback`]) and names
//! the agent of each thread with [`set_agent`] (threads that never call it
//! record as agent 0).
//!
//! What each record carries:
//! - `Fix`: the page and the latch mode of the guard (an allocation is an
//!   exclusive fix);
//! - `Unfix`: the same, `modified` = the guard's changes were committed in
//!   a redo group, and `redo_bytes` = the encoded length of the redo records
//!   of that page in that group (record headers included; the group's own
//!   framing is not attributed). A guard dropped without commit (its changes
//!   rolled back in memory) or committed unchanged is unmodified, 0 bytes.
//!
//! # Invariants
//! 1. Records reach the stream in the order they happened: each is appended
//!    under the recorder's mutex at the moment of its event; a `Fix` after
//!    its latch is granted, an `Unfix` before its latch is released, so the
//!    stream never shows two holders of a page in conflicting modes at once.
//! 2. Every `Fix` recorded has its `Unfix` recorded by the same recorder
//!    (a guard remembers the recorder that saw its fix), so fixes and
//!    unfixes balance per agent once every guard is dropped, even if the
//!    recorder is uninstalled meanwhile.
//! 3. I/O errors are sticky: the first one stops recording and is returned
//!    by [`TraceRecorder::finish`]; nothing is silently dropped except
//!    records arriving after `finish`, which are counted
//!    ([`TraceRecorder::records_discarded`]).
//!
//! Cost: with no recorder installed a fix pays one relaxed atomic load.
//! With one installed every record takes one global mutex (the price of
//! invariant 1) and encodes 20 bytes into a block buffer; the writer issues
//! one write per block of `flushwise_trace::MAX_BLOCK_RECORDS` records.

use std::cell::Cell;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceError, TraceHeader, TraceRecord, TraceWriter, TxnType};
use parking_lot::Mutex;

use crate::page_store::Latch;

/// Bytes of the file buffer in front of the trace writer.
const FILE_BUFFER_BYTES: usize = 1 << 20;

thread_local! {
    static AGENT: Cell<u32> = const { Cell::new(0) };
}

/// Sets the agent id recorded for this thread's page fixes from now on.
pub fn set_agent(id: u32) {
    AGENT.with(|a| a.set(id));
}

/// The agent id of this thread (0 unless [`set_agent`] was called).
pub fn agent() -> u32 {
    AGENT.with(Cell::get)
}

/// Errors of the recorder; each names the trace file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecorderError {
    #[error("trace {path}: cannot create: {source}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("trace {path}: {source}")]
    Trace {
        path: PathBuf,
        #[source]
        source: TraceError,
    },
    #[error("trace {path}: already finished")]
    Finished { path: PathBuf },
}

enum State {
    Open(TraceWriter<BufWriter<File>>),
    Failed(TraceError),
    Finished,
}

/// A thread-safe, buffered trace file being recorded. Share it as
/// `Arc<TraceRecorder>`; see the module documentation.
pub struct TraceRecorder {
    path: PathBuf,
    state: Mutex<State>,
    discarded: AtomicU64,
}

impl std::fmt::Debug for TraceRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceRecorder").field("path", &self.path).finish()
    }
}

fn latch_mode(latch: Latch) -> LatchMode {
    match latch {
        Latch::Shared => LatchMode::Shared,
        Latch::Exclusive => LatchMode::Exclusive,
    }
}

impl TraceRecorder {
    /// Creates (truncates) `path` and writes the trace header.
    pub fn create(
        path: impl AsRef<Path>,
        page_size_bytes: u32,
        description: impl Into<String>,
    ) -> Result<Self, RecorderError> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|source| RecorderError::Create {
            path: path.clone(),
            source,
        })?;
        let sink = BufWriter::with_capacity(FILE_BUFFER_BYTES, file);
        let writer = TraceWriter::new(sink, &TraceHeader::new(page_size_bytes, description)).map_err(|source| {
            RecorderError::Trace {
                path: path.clone(),
                source,
            }
        })?;
        Ok(Self {
            path,
            state: Mutex::new(State::Open(writer)),
            discarded: AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record (in the order of calls; see invariant 1).
    pub fn record(&self, record: TraceRecord) {
        let mut state = self.state.lock();
        match &mut *state {
            State::Open(writer) => {
                if let Err(e) = writer.write(&record) {
                    *state = State::Failed(e);
                }
            }
            State::Failed(_) => {}
            State::Finished => {
                self.discarded.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub fn txn_begin(&self, agent: u32, txn_type: TxnType) {
        self.record(TraceRecord::txn_begin(agent, txn_type));
    }

    pub fn txn_commit(&self, agent: u32, txn_type: TxnType) {
        self.record(TraceRecord::txn_commit(agent, txn_type));
    }

    pub fn txn_rollback(&self, agent: u32, txn_type: TxnType) {
        self.record(TraceRecord::txn_rollback(agent, txn_type));
    }

    pub(crate) fn fix(&self, agent: u32, page: PageId, latch: Latch) {
        self.record(TraceRecord::fix(agent, page, latch_mode(latch)));
    }

    pub(crate) fn unfix(&self, agent: u32, page: PageId, latch: Latch, redo_bytes: Option<u32>) {
        let (modified, bytes) = match redo_bytes {
            Some(b) => (true, b),
            None => (false, 0),
        };
        self.record(TraceRecord::unfix(agent, page, latch_mode(latch), modified, bytes));
    }

    /// Records written so far (0 once failed or finished).
    pub fn records_written(&self) -> u64 {
        match &*self.state.lock() {
            State::Open(w) => w.records_written(),
            _ => 0,
        }
    }

    /// Records that arrived after [`Self::finish`] and were dropped.
    pub fn records_discarded(&self) -> u64 {
        self.discarded.load(Ordering::Relaxed)
    }

    /// Writes the last block and the trailer and flushes the file; returns
    /// the number of records written. The first I/O error of the recording
    /// (sticky) is returned instead, and the file then lacks its trailer
    /// (the reader reports it as truncated). Later records are discarded.
    pub fn finish(&self) -> Result<u64, RecorderError> {
        let state = std::mem::replace(&mut *self.state.lock(), State::Finished);
        let trace_err = |source| RecorderError::Trace {
            path: self.path.clone(),
            source,
        };
        match state {
            State::Open(writer) => {
                let records = writer.records_written();
                let sink = writer.finish().map_err(trace_err)?;
                let file = sink.into_inner().map_err(|e| {
                    trace_err(TraceError::Io {
                        offset: 0,
                        source: e.into_error(),
                    })
                })?;
                file.sync_all()
                    .map_err(|source| trace_err(TraceError::Io { offset: 0, source }))?;
                Ok(records)
            }
            State::Failed(e) => Err(trace_err(e)),
            State::Finished => Err(RecorderError::Finished {
                path: self.path.clone(),
            }),
        }
    }
}
