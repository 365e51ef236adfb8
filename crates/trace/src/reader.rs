//! Streaming, validating trace reader.
//!
//! Invariants: memory is one block (at most 65,520 payload bytes) plus the
//! description; a block's records are handed out only after its checksum
//! and every record in it have been checked; after the first error the
//! iterator is fused (returns `None`), so a caller cannot read past damage.
//! End of input is accepted only right after a valid trailer whose record
//! count matches what was read.

use std::io::{ErrorKind, Read};

use crate::error::TraceError;
use crate::format::{
    crc_of, TraceHeader, BLOCK_HEADER_BYTES, BLOCK_MAGIC, DESCRIPTION_BYTES_MAX, FORMAT_VERSION, HEADER_FIXED_BYTES,
    MAGIC, MAX_BLOCK_RECORDS, RECORD_BYTES, TRAILER_BYTES, TRAILER_MAGIC,
};
use crate::record::{le_array, TraceRecord};

pub struct TraceReader<R: Read> {
    inner: R,
    header: TraceHeader,
    /// Bytes consumed from `inner` so far.
    offset: u64,
    block: Vec<u8>,
    /// Offset of the current block's payload, for record error offsets.
    block_payload_offset: u64,
    /// The current block, decoded; `next_in_block` indexes it.
    records: Vec<TraceRecord>,
    next_in_block: usize,
    total_records: u64,
    state: State,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Reading,
    Done,
    Failed,
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header.
    pub fn new(mut inner: R) -> Result<Self, TraceError> {
        let mut offset = 0u64;
        let mut fixed = [0u8; HEADER_FIXED_BYTES + 4];
        read_full(&mut inner, &mut fixed[..8], &mut offset)?;
        let magic: [u8; 8] = le_array(&fixed[..8]);
        if magic != MAGIC {
            return Err(TraceError::BadMagic { found: magic });
        }
        read_full(&mut inner, &mut fixed[8..10], &mut offset)?;
        let version = u16::from_le_bytes(le_array(&fixed[8..10]));
        if version != FORMAT_VERSION {
            return Err(TraceError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        read_full(&mut inner, &mut fixed[10..], &mut offset)?;
        let stored_crc = u32::from_le_bytes(le_array(&fixed[20..24]));
        if crc_of(&[&fixed[..20]]) != stored_crc {
            return Err(TraceError::Corrupt {
                offset: 0,
                reason: "header checksum mismatch".to_string(),
            });
        }
        let flags = u16::from_le_bytes(le_array(&fixed[10..12]));
        let page_size_bytes = u32::from_le_bytes(le_array(&fixed[12..16]));
        let description_len = u32::from_le_bytes(le_array(&fixed[16..20])) as usize;
        if description_len > DESCRIPTION_BYTES_MAX {
            return Err(TraceError::Corrupt {
                offset: 16,
                reason: format!("description length {description_len} over the limit {DESCRIPTION_BYTES_MAX}"),
            });
        }
        let description_offset = offset;
        let mut description = vec![0u8; description_len];
        read_full(&mut inner, &mut description, &mut offset)?;
        let mut crc_bytes = [0u8; 4];
        read_full(&mut inner, &mut crc_bytes, &mut offset)?;
        if crc_of(&[&description]) != u32::from_le_bytes(crc_bytes) {
            return Err(TraceError::Corrupt {
                offset: description_offset,
                reason: "description checksum mismatch".to_string(),
            });
        }
        let description = String::from_utf8(description).map_err(|e| TraceError::Corrupt {
            offset: description_offset + e.utf8_error().valid_up_to() as u64,
            reason: "description is not UTF-8".to_string(),
        })?;
        Ok(Self {
            inner,
            header: TraceHeader {
                page_size_bytes,
                flags,
                description,
            },
            offset,
            block: Vec::new(),
            block_payload_offset: 0,
            records: Vec::new(),
            next_in_block: 0,
            total_records: 0,
            state: State::Reading,
        })
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// Records handed out so far.
    pub fn records_read(&self) -> u64 {
        self.total_records
    }

    /// Reads the next block header (or the trailer) and, for a block, its
    /// payload. Returns false at a valid end of trace.
    fn load_block(&mut self) -> Result<bool, TraceError> {
        let structure_offset = self.offset;
        let mut head = [0u8; BLOCK_HEADER_BYTES];
        read_full(&mut self.inner, &mut head[..4], &mut self.offset)?;
        let magic: [u8; 4] = le_array(&head[..4]);
        if magic == TRAILER_MAGIC {
            debug_assert_eq!(TRAILER_BYTES, BLOCK_HEADER_BYTES);
            read_full(&mut self.inner, &mut head[4..], &mut self.offset)?;
            let total = u64::from_le_bytes(le_array(&head[4..12]));
            let stored_crc = u32::from_le_bytes(le_array(&head[12..16]));
            if crc_of(&[&head[..12]]) != stored_crc {
                return Err(corrupt(structure_offset, "trailer checksum mismatch"));
            }
            // Every record of every block has been handed out by now.
            if total != self.total_records {
                return Err(corrupt(
                    structure_offset,
                    &format!("trailer counts {total} records, the blocks held {}", self.total_records),
                ));
            }
            let mut probe = [0u8; 1];
            let n = read_some(&mut self.inner, &mut probe, self.offset)?;
            if n != 0 {
                return Err(corrupt(self.offset, "bytes after the trailer"));
            }
            return Ok(false);
        }
        if magic != BLOCK_MAGIC {
            return Err(corrupt(
                structure_offset,
                &format!("expected a block or trailer magic, found {magic:02x?}"),
            ));
        }
        read_full(&mut self.inner, &mut head[4..], &mut self.offset)?;
        let count = u32::from_le_bytes(le_array(&head[4..8]));
        let len = u32::from_le_bytes(le_array(&head[8..12]));
        let stored_crc = u32::from_le_bytes(le_array(&head[12..16]));
        if count == 0 || count > MAX_BLOCK_RECORDS {
            return Err(corrupt(
                structure_offset,
                &format!("block record count {count} outside 1..={MAX_BLOCK_RECORDS}"),
            ));
        }
        if u64::from(len) != u64::from(count) * RECORD_BYTES as u64 {
            return Err(corrupt(
                structure_offset,
                &format!("block payload length {len} is not {count} records"),
            ));
        }
        self.block.resize(len as usize, 0);
        self.block_payload_offset = self.offset;
        read_full(&mut self.inner, &mut self.block, &mut self.offset)?;
        if crc_of(&[&head[4..8], &head[8..12], &self.block]) != stored_crc {
            return Err(corrupt(structure_offset, "block checksum mismatch"));
        }
        // Decode every record now so a block is accepted or refused whole.
        self.records.clear();
        for (i, chunk) in self.block.chunks_exact(RECORD_BYTES).enumerate() {
            match TraceRecord::decode(&le_array(chunk)) {
                Ok(record) => self.records.push(record),
                Err(reason) => {
                    let at = self.block_payload_offset + (i * RECORD_BYTES) as u64;
                    return Err(corrupt(at, &reason));
                }
            }
        }
        self.next_in_block = 0;
        Ok(true)
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.state != State::Reading {
            return None;
        }
        if self.next_in_block == self.records.len() {
            match self.load_block() {
                Ok(true) => {}
                Ok(false) => {
                    self.state = State::Done;
                    return None;
                }
                Err(e) => {
                    self.state = State::Failed;
                    return Some(Err(e));
                }
            }
        }
        let record = self.records[self.next_in_block];
        self.next_in_block += 1;
        self.total_records += 1;
        Some(Ok(record))
    }
}

fn corrupt(offset: u64, reason: &str) -> TraceError {
    TraceError::Corrupt {
        offset,
        reason: reason.to_string(),
    }
}

/// Fills `buf` or reports truncation at the offset where input ran out.
fn read_full<R: Read>(inner: &mut R, buf: &mut [u8], offset: &mut u64) -> Result<(), TraceError> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = read_some(inner, &mut buf[filled..], *offset + filled as u64)?;
        if n == 0 {
            return Err(TraceError::Truncated {
                offset: *offset + filled as u64,
            });
        }
        filled += n;
    }
    *offset += buf.len() as u64;
    Ok(())
}

fn read_some<R: Read>(inner: &mut R, buf: &mut [u8], offset: u64) -> Result<usize, TraceError> {
    loop {
        match inner.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(source) => return Err(TraceError::Io { offset, source }),
        }
    }
}
