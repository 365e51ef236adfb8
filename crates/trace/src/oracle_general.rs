//! Export to libCacheSim's `oracleGeneral` binary trace.
//!
//! libCacheSim (1a1a11a/libCacheSim,
//! `libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h`)
//! reads packed 24-byte little-endian records:
//!
//! ```text
//! u32 clock_time | u64 obj_id | u32 obj_size | i64 next_access_vtime
//! ```
//!
//! We write one record per Fix (a buffer-pool request): `obj_id` is
//! `PageId::as_u64`, `obj_size` the trace header's page size, and
//! `next_access_vtime` the 0-based index (among exported requests) of the
//! next Fix of the same page, or -1 if there is none (libCacheSim maps -1 to
//! "never"). Unfix and transaction events are not requests and are skipped.
//!
//! Time: the trace has no wall clock, so `clock_time` is a logical clock,
//! `request_index / requests_per_tick` ([`ExportOptions`]). With the default
//! of one request per tick it equals the request index, and libCacheSim's
//! `--warmup-sec` then counts requests. The export fails rather than wrap
//! when the clock passes `u32::MAX`.
//!
//! Memory: the next-access field needs the future, so the export makes two
//! passes over its own output: a forward pass writes every record with -1,
//! then a backward pass reads the output in chunks from the end, keeping only
//! "index of the nearest later request" per distinct page, and patches the
//! field in place. Memory is one chunk plus one map entry per distinct page,
//! whatever the trace length. The output must therefore be readable and
//! seekable (a `File` opened read+write, or a `Cursor`).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};

use crate::error::TraceError;
use crate::reader::TraceReader;
use crate::record::{le_array, TraceEvent};

/// Size of one oracleGeneral record.
pub const ORACLE_RECORD_BYTES: usize = 24;
/// Records per chunk of the backward pass (1.5 MiB of buffer).
const CHUNK_RECORDS: u64 = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Requests per tick of the 32-bit logical clock; at least 1.
    pub requests_per_tick: u64,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self { requests_per_tick: 1 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ExportSummary {
    /// Records written (Fix events in the trace).
    pub requests: u64,
    /// Distinct pages among them.
    pub distinct_pages: u64,
}

/// Writes the Fix events of `trace` to `out` as oracleGeneral records,
/// starting at `out`'s current position.
pub fn export<R, W>(trace: TraceReader<R>, out: &mut W, options: ExportOptions) -> Result<ExportSummary, TraceError>
where
    R: Read,
    W: Read + Write + Seek,
{
    let requests_per_tick = options.requests_per_tick.max(1);
    let page_size_bytes = trace.header().page_size_bytes;
    let start = out
        .stream_position()
        .map_err(|source| TraceError::Io { offset: 0, source })?;

    // Forward pass: everything but the next-access field.
    let mut requests = 0u64;
    let mut buffered = Vec::with_capacity(CHUNK_RECORDS as usize * ORACLE_RECORD_BYTES);
    for record in trace {
        let page = match record?.event {
            TraceEvent::Fix { page, .. } => page,
            _ => continue,
        };
        let tick = u32::try_from(requests / requests_per_tick).map_err(|_| TraceError::Export {
            reason: format!("request {requests} overflows the 32-bit clock at {requests_per_tick} requests per tick"),
        })?;
        buffered.extend_from_slice(&tick.to_le_bytes());
        buffered.extend_from_slice(&page.as_u64().to_le_bytes());
        buffered.extend_from_slice(&page_size_bytes.to_le_bytes());
        buffered.extend_from_slice(&(-1i64).to_le_bytes());
        requests += 1;
        if buffered.len() >= CHUNK_RECORDS as usize * ORACLE_RECORD_BYTES {
            write_at(out, None, &buffered)?;
            buffered.clear();
        }
    }
    write_at(out, None, &buffered)?;

    // Backward pass: patch next_access_vtime chunk by chunk from the end.
    let mut next_access: HashMap<u64, u64> = HashMap::new();
    let mut chunk_end = requests;
    let mut chunk = Vec::new();
    while chunk_end > 0 {
        let chunk_start = chunk_end.saturating_sub(CHUNK_RECORDS);
        let n = (chunk_end - chunk_start) as usize;
        let at = start + chunk_start * ORACLE_RECORD_BYTES as u64;
        chunk.resize(n * ORACLE_RECORD_BYTES, 0);
        seek(out, at)?;
        out.read_exact(&mut chunk)
            .map_err(|source| TraceError::Io { offset: at, source })?;
        for i in (0..n).rev() {
            let rec = &mut chunk[i * ORACLE_RECORD_BYTES..(i + 1) * ORACLE_RECORD_BYTES];
            let obj_id = u64::from_le_bytes(le_array(&rec[4..12]));
            let index = chunk_start + i as u64;
            let next = next_access.insert(obj_id, index).map_or(-1i64, |later| later as i64);
            rec[16..24].copy_from_slice(&next.to_le_bytes());
        }
        write_at(out, Some(at), &chunk)?;
        chunk_end = chunk_start;
    }
    seek(out, start + requests * ORACLE_RECORD_BYTES as u64)?;
    out.flush().map_err(|source| TraceError::Io { offset: start, source })?;
    Ok(ExportSummary {
        requests,
        distinct_pages: next_access.len() as u64,
    })
}

/// One decoded oracleGeneral record (for tests and tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleRecord {
    pub clock_time: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    pub next_access_vtime: i64,
}

impl OracleRecord {
    pub fn decode(bytes: &[u8; ORACLE_RECORD_BYTES]) -> Self {
        Self {
            clock_time: u32::from_le_bytes(le_array(&bytes[0..4])),
            obj_id: u64::from_le_bytes(le_array(&bytes[4..12])),
            obj_size: u32::from_le_bytes(le_array(&bytes[12..16])),
            next_access_vtime: i64::from_le_bytes(le_array(&bytes[16..24])),
        }
    }
}

fn seek<W: Seek>(out: &mut W, at: u64) -> Result<(), TraceError> {
    out.seek(SeekFrom::Start(at))
        .map(|_| ())
        .map_err(|source| TraceError::Io { offset: at, source })
}

fn write_at<W: Write + Seek>(out: &mut W, at: Option<u64>, bytes: &[u8]) -> Result<(), TraceError> {
    if let Some(at) = at {
        seek(out, at)?;
    }
    out.write_all(bytes).map_err(|source| TraceError::Io {
        offset: at.unwrap_or(0),
        source,
    })
}
