//! Recovery scan: from the newest valid checkpoint to the end of the log.
//!
//! Steps, each failing with an error that names the file:
//! 1. Block 0 must be a valid header; the file must be as long as the
//!    header says ([`RedoError::Truncated`] otherwise).
//! 2. Of the two checkpoint blocks, the valid one with the higher
//!    checkpoint number wins; none valid is [`RedoError::NoValidCheckpoint`].
//! 3. From the block holding the checkpoint LSN, blocks are read in ring
//!    order while each one is valid: checksum matches, `block_no` is the
//!    expected one (a block from the previous lap is smaller), and its
//!    incarnation is not older than the block before it. The first invalid
//!    block, or a partially filled block, ends the block stream.
//! 4. Records are parsed from the checkpoint LSN (which the writer keeps on
//!    an append-group boundary). A record cut off by the end of the stream is
//!    the torn tail. Only complete append groups are yielded.
//! 5. The end found must not precede what the log claimed durable: neither
//!    the checkpoint's `durable_lsn` nor the `durable_lsn` stamped in any
//!    block of the current lap found past the end. Otherwise durable data
//!    was lost in the middle of the log: [`RedoError::Corrupt`] naming the
//!    LSN and file offset where the valid log stops.
//!
//! A torn tail is expected after a crash: blocks written but never fsynced
//! may be missing, stale or half-written, and they all carry a durable LSN
//! below the end, so they end the log cleanly.
//!
//! Limit: the scan holds the record bytes between the checkpoint and the
//! end in memory, at most `capacity_bytes`; step 5 reads the rest of the
//! ring once, so a scan reads the whole data area at most once.

use std::path::{Path, PathBuf};

use flushwise_core::Lsn;

use super::log_file::{
    block_no_of_sn, block_offset, decode_block, file_len, lsn_offset, lsn_to_sn, sn_to_lsn, CheckpointBlock,
    FileHeader, BLOCK_HDR_SIZE, BLOCK_PAYLOAD, BLOCK_SIZE, CHECKPOINT_OFFSETS, DATA_OFFSET,
};
use super::record::Record;
use super::{RedoError, Result};
use crate::storage::{Result as StorageResult, StorageBackend, StorageError};

/// Blocks read per I/O during the scan (128 KiB).
const READ_RUN_BLOCKS: u64 = 256;

/// What a recovery scan found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanReport {
    pub path: PathBuf,
    pub capacity_bytes: u64,
    /// The checkpoint the scan started from.
    pub checkpoint_no: u64,
    pub checkpoint_lsn: Lsn,
    /// Incarnation of the writer that wrote that checkpoint.
    pub incarnation: u32,
    /// End of the last complete append group: where the log resumes.
    pub end_lsn: Lsn,
    /// Records and append groups yielded.
    pub records: u64,
    pub groups: u64,
    /// LSN bytes from the checkpoint to the end (headers included).
    pub bytes: u64,
    /// Data blocks read, including the look-past-the-end pass.
    pub blocks_read: u64,
    /// The log ended at a damaged block (bad checksum, not merely stale or
    /// never written) or in an incomplete group: a crash point mid-write.
    pub torn_tail: bool,
    /// Record bytes after `end_lsn` in readable blocks that were dropped
    /// because their group is incomplete.
    pub discarded_bytes: u64,
}

/// The records to redo, in LSN order, with the scan's report.
#[derive(Clone, Debug)]
pub struct RecoveryScan {
    /// `(start LSN, record)` for every record of every complete group at or
    /// after the checkpoint LSN.
    pub records: Vec<(Lsn, Record)>,
    pub report: ScanReport,
}

impl IntoIterator for RecoveryScan {
    type Item = (Lsn, Record);
    type IntoIter = std::vec::IntoIter<(Lsn, Record)>;

    fn into_iter(self) -> Self::IntoIter {
        self.records.into_iter()
    }
}

/// Everything the writer needs to resume after a scan.
pub(crate) struct Recovered {
    pub scan: RecoveryScan,
    pub checkpoint: CheckpointBlock,
    pub capacity_bytes: u64,
    /// Record-byte position where appends resume.
    pub end_sn: u64,
    /// Record bytes of the partial block holding `end_sn`, from its start.
    pub tail: Vec<u8>,
    /// `first_rec` of that block if a record starts before `end_sn`, else 0.
    pub tail_first_rec: u16,
}

/// Scans the log read-only and returns what recovery would redo.
pub fn scan(path: &Path, backend: &dyn StorageBackend) -> Result<RecoveryScan> {
    recover(path, backend).map(|r| r.scan)
}

/// [`scan`] over a whole log file held in memory: the recovery scan as a
/// pure function of the file's bytes (tools and the fuzz targets use it).
/// `path` only names the file in errors.
pub fn scan_image(path: &Path, image: &[u8]) -> Result<RecoveryScan> {
    scan(path, &LogImage { path, image })
}

/// A read-only [`StorageBackend`] over a log file's bytes.
struct LogImage<'a> {
    path: &'a Path,
    image: &'a [u8],
}

impl LogImage<'_> {
    fn refused(&self, op: &'static str, offset: u64) -> StorageError {
        StorageError::Io {
            path: self.path.to_path_buf(),
            op,
            offset,
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "a log image is read-only"),
        }
    }
}

impl StorageBackend for LogImage<'_> {
    fn len(&self) -> StorageResult<u64> {
        Ok(self.image.len() as u64)
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> StorageResult<()> {
        let short = || StorageError::ShortRead {
            path: self.path.to_path_buf(),
            offset,
            wanted: buf.len(),
        };
        let start = usize::try_from(offset).map_err(|_| short())?;
        let end = start.checked_add(buf.len()).ok_or_else(short)?;
        let bytes = self.image.get(start..end).ok_or_else(short)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    fn write(&self, offset: u64, _data: &[u8]) -> StorageResult<()> {
        Err(self.refused("write", offset))
    }

    fn set_len(&self, len: u64) -> StorageResult<()> {
        Err(self.refused("set_len", len))
    }

    fn sync_data(&self) -> StorageResult<()> {
        Ok(())
    }

    fn close(&self) -> StorageResult<()> {
        Ok(())
    }
}

struct Ring<'a> {
    path: &'a Path,
    backend: &'a dyn StorageBackend,
    capacity_bytes: u64,
    n_blocks: u64,
    blocks_read: u64,
}

impl Ring<'_> {
    /// Reads up to `max` blocks from absolute block `block_no`, stopping at
    /// the ring's end so the read is one contiguous range of the file.
    fn read_run(&mut self, block_no: u64, max: u64) -> Result<Vec<u8>> {
        let pos = block_no % self.n_blocks;
        let n = max.min(READ_RUN_BLOCKS).min(self.n_blocks - pos).max(1);
        let mut buf = vec![0u8; n as usize * BLOCK_SIZE];
        self.backend
            .read(block_offset(block_no, self.capacity_bytes), &mut buf)?;
        self.blocks_read += n;
        Ok(buf)
    }

    fn corrupt(&self, lsn: Lsn, reason: String) -> RedoError {
        RedoError::Corrupt {
            path: self.path.to_path_buf(),
            lsn,
            offset: lsn_offset(lsn, self.capacity_bytes),
            reason,
        }
    }
}

/// Reads the header and picks the newest valid checkpoint.
pub(crate) fn read_header(path: &Path, backend: &dyn StorageBackend) -> Result<(FileHeader, CheckpointBlock)> {
    let actual_len = backend.len()?;
    if actual_len < DATA_OFFSET {
        return Err(RedoError::Truncated {
            path: path.to_path_buf(),
            expected_len: DATA_OFFSET,
            actual_len,
        });
    }
    let mut hdr = vec![0u8; DATA_OFFSET as usize];
    backend.read(0, &mut hdr)?;
    let header = FileHeader::decode(&hdr[..BLOCK_SIZE]).map_err(|reason| RedoError::BadHeader {
        path: path.to_path_buf(),
        reason,
    })?;
    let expected_len = file_len(header.capacity_bytes);
    if actual_len < expected_len {
        return Err(RedoError::Truncated {
            path: path.to_path_buf(),
            expected_len,
            actual_len,
        });
    }
    let slot = |i: usize| {
        let at = CHECKPOINT_OFFSETS[i] as usize;
        CheckpointBlock::decode(&hdr[at..at + BLOCK_SIZE], i, header.capacity_bytes)
    };
    let newest = match (slot(0), slot(1)) {
        (Ok(a), Ok(b)) => {
            if a.checkpoint_no > b.checkpoint_no {
                a
            } else {
                b
            }
        }
        (Ok(a), Err(_)) => a,
        (Err(_), Ok(b)) => b,
        (Err(slot0), Err(slot1)) => {
            return Err(RedoError::NoValidCheckpoint {
                path: path.to_path_buf(),
                slot0,
                slot1,
            })
        }
    };
    Ok((header, newest))
}

pub(crate) fn recover(path: &Path, backend: &dyn StorageBackend) -> Result<Recovered> {
    let (header, ckpt) = read_header(path, backend)?;
    let capacity_bytes = header.capacity_bytes;
    let mut ring = Ring {
        path,
        backend,
        capacity_bytes,
        n_blocks: capacity_bytes / BLOCK_SIZE as u64,
        blocks_read: 0,
    };
    let n_blocks = ring.n_blocks;
    let p = BLOCK_PAYLOAD as u64;
    let ckpt_sn = lsn_to_sn(ckpt.checkpoint_lsn)
        .ok_or_else(|| ring.corrupt(ckpt.checkpoint_lsn, "checkpoint lsn is not a record position".into()))?;
    let base_sn = ckpt_sn / p * p;
    let b0 = block_no_of_sn(base_sn);

    // Step 3: the valid block stream.
    let mut data: Vec<u8> = Vec::new();
    let mut first_recs: Vec<u16> = Vec::new();
    let mut prev_incarnation = 0u32;
    let mut i = 0u64; // blocks accepted
    let mut stopped_at_invalid = false;
    let mut stopped_at_damaged = false;
    'scan: while i < n_blocks {
        let run = ring.read_run(b0 + i, n_blocks - i)?;
        for blk in run.chunks_exact(BLOCK_SIZE) {
            let expected = b0 + i;
            let h = match decode_block(blk) {
                Some(h)
                    if h.block_no == expected
                        && h.incarnation >= prev_incarnation
                        && h.incarnation <= ckpt.incarnation =>
                {
                    h
                }
                other => {
                    // A stale block (older number or incarnation) or a never
                    // written one is a clean end; anything else is damage.
                    stopped_at_damaged = other.is_none() && blk.iter().any(|&b| b != 0);
                    stopped_at_invalid = true;
                    break 'scan;
                }
            };
            prev_incarnation = h.incarnation;
            data.extend_from_slice(&blk[BLOCK_HDR_SIZE..h.data_len as usize]);
            first_recs.push(h.first_rec);
            i += 1;
            if !h.is_full() {
                break 'scan;
            }
        }
    }
    let data_end_sn = base_sn + data.len() as u64;
    if ckpt_sn > data_end_sn {
        return Err(ring.corrupt(
            ckpt.checkpoint_lsn,
            format!(
                "checkpoint {} points past the readable log, which ends at lsn {}",
                ckpt.checkpoint_no,
                sn_to_lsn(data_end_sn)
            ),
        ));
    }

    // Step 4: records from the checkpoint, complete groups only.
    let mut records = Vec::new();
    let mut pending = Vec::new();
    let mut groups = 0u64;
    let mut end_sn = ckpt_sn;
    let mut pos = ckpt_sn;
    while pos < data_end_sn {
        let lsn = sn_to_lsn(pos);
        match Record::decode(&data[(pos - base_sn) as usize..], lsn) {
            Ok(d) => {
                pending.push((lsn, d.record));
                pos += d.len as u64;
                if d.group_end {
                    records.append(&mut pending);
                    groups += 1;
                    end_sn = pos;
                }
            }
            Err(e) if e.is_truncation() => break,
            Err(e) => return Err(ring.corrupt(lsn, e.to_string())),
        }
    }
    let end_lsn = sn_to_lsn(end_sn);

    // Step 5: nothing the log once called durable may lie past the end.
    let durable_sn = lsn_to_sn(ckpt.durable_lsn).ok_or_else(|| {
        ring.corrupt(
            ckpt.durable_lsn,
            "checkpoint durable lsn is not a record position".into(),
        )
    })?;
    if durable_sn > end_sn {
        return Err(ring.corrupt(
            end_lsn,
            format!(
                "the log ends here but checkpoint {} recorded it durable up to lsn {}",
                ckpt.checkpoint_no, ckpt.durable_lsn
            ),
        ));
    }
    // Where the stream stopped: the invalid block, or past the partial one.
    let stop_pos = if stopped_at_invalid { i } else { i.saturating_sub(1) };
    let stop_lsn = if stopped_at_invalid {
        Lsn((b0 + i) * BLOCK_SIZE as u64)
    } else {
        end_lsn
    };
    let mut j = stop_pos + 1;
    while j < n_blocks {
        let run = ring.read_run(b0 + j, n_blocks - j)?;
        for blk in run.chunks_exact(BLOCK_SIZE) {
            if let Some(h) = decode_block(blk) {
                if h.block_no == b0 + j && h.durable_lsn > end_lsn {
                    return Err(ring.corrupt(
                        stop_lsn,
                        format!(
                            "the valid log stops here, but block {} at lsn {} was written after the log was durable up to lsn {}",
                            h.block_no,
                            h.block_no * BLOCK_SIZE as u64,
                            h.durable_lsn
                        ),
                    ));
                }
            }
            j += 1;
        }
    }

    // Tail block for the writer to continue in.
    let tail_start = end_sn / p * p;
    let tail = data[(tail_start - base_sn) as usize..(end_sn - base_sn) as usize].to_vec();
    let tail_first_rec = if tail.is_empty() {
        0
    } else {
        let f = first_recs[((tail_start - base_sn) / p) as usize];
        if f != 0 && (f as usize - BLOCK_HDR_SIZE) < tail.len() {
            f
        } else {
            0
        }
    };

    let report = ScanReport {
        path: path.to_path_buf(),
        capacity_bytes,
        checkpoint_no: ckpt.checkpoint_no,
        checkpoint_lsn: ckpt.checkpoint_lsn,
        incarnation: ckpt.incarnation,
        end_lsn,
        records: records.len() as u64,
        groups,
        bytes: end_lsn.bytes_since(ckpt.checkpoint_lsn),
        blocks_read: ring.blocks_read,
        torn_tail: stopped_at_damaged || end_sn < data_end_sn,
        discarded_bytes: data_end_sn - end_sn,
    };
    Ok(Recovered {
        scan: RecoveryScan { records, report },
        checkpoint: ckpt,
        capacity_bytes,
        end_sn,
        tail,
        tail_first_rec,
    })
}
