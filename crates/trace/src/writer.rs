//! Streaming trace writer.
//!
//! Invariants: at most one block of records is buffered; every record is
//! validated before it is buffered; the trailer is written only by
//! [`TraceWriter::finish`], so a writer dropped without finishing leaves a
//! file the reader reports as truncated, never one that looks complete.

use std::io::Write;

use crate::error::TraceError;
use crate::format::{
    crc_of, TraceHeader, BLOCK_MAGIC, DESCRIPTION_BYTES_MAX, FORMAT_VERSION, MAGIC, MAX_BLOCK_RECORDS, RECORD_BYTES,
    TRAILER_MAGIC,
};
use crate::record::TraceRecord;

pub struct TraceWriter<W: Write> {
    inner: W,
    block: Vec<u8>,
    block_records: u32,
    block_records_max: u32,
    total_records: u64,
    offset: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header; records then go in blocks of up to
    /// [`MAX_BLOCK_RECORDS`].
    pub fn new(inner: W, header: &TraceHeader) -> Result<Self, TraceError> {
        Self::with_block_records(inner, header, MAX_BLOCK_RECORDS)
    }

    /// As [`TraceWriter::new`] with smaller blocks (clamped to
    /// `1..=MAX_BLOCK_RECORDS`), e.g. to test multi-block files cheaply.
    pub fn with_block_records(inner: W, header: &TraceHeader, block_records_max: u32) -> Result<Self, TraceError> {
        let description = header.description.as_bytes();
        if description.len() > DESCRIPTION_BYTES_MAX {
            return Err(TraceError::DescriptionTooLong {
                len_bytes: description.len(),
                max_bytes: DESCRIPTION_BYTES_MAX,
            });
        }
        let block_records_max = block_records_max.clamp(1, MAX_BLOCK_RECORDS);
        let mut writer = Self {
            inner,
            block: Vec::with_capacity(block_records_max as usize * RECORD_BYTES),
            block_records: 0,
            block_records_max,
            total_records: 0,
            offset: 0,
        };
        let mut fixed = Vec::with_capacity(24);
        fixed.extend_from_slice(&MAGIC);
        fixed.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        fixed.extend_from_slice(&header.flags.to_le_bytes());
        fixed.extend_from_slice(&header.page_size_bytes.to_le_bytes());
        // Bounded by DESCRIPTION_BYTES_MAX above, so it fits in u32.
        fixed.extend_from_slice(&(description.len() as u32).to_le_bytes());
        let header_crc = crc_of(&[&fixed]);
        fixed.extend_from_slice(&header_crc.to_le_bytes());
        writer.put(&fixed)?;
        writer.put(description)?;
        let description_crc = crc_of(&[description]);
        writer.put(&description_crc.to_le_bytes())?;
        Ok(writer)
    }

    pub fn write(&mut self, record: &TraceRecord) -> Result<(), TraceError> {
        record
            .validate()
            .map_err(|reason| TraceError::InvalidRecord { reason })?;
        let mut encoded = [0u8; RECORD_BYTES];
        record.encode(&mut encoded);
        self.block.extend_from_slice(&encoded);
        self.block_records += 1;
        self.total_records += 1;
        if self.block_records == self.block_records_max {
            self.flush_block()?;
        }
        Ok(())
    }

    pub fn write_all<'a>(&mut self, records: impl IntoIterator<Item = &'a TraceRecord>) -> Result<(), TraceError> {
        records.into_iter().try_for_each(|r| self.write(r))
    }

    /// Records written so far.
    pub fn records_written(&self) -> u64 {
        self.total_records
    }

    /// Writes the last block and the trailer, flushes, and returns the sink.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.flush_block()?;
        let mut trailer = Vec::with_capacity(16);
        trailer.extend_from_slice(&TRAILER_MAGIC);
        trailer.extend_from_slice(&self.total_records.to_le_bytes());
        let crc = crc_of(&[&trailer]);
        trailer.extend_from_slice(&crc.to_le_bytes());
        self.put(&trailer)?;
        let offset = self.offset;
        self.inner.flush().map_err(|source| TraceError::Io { offset, source })?;
        Ok(self.inner)
    }

    fn flush_block(&mut self) -> Result<(), TraceError> {
        if self.block_records == 0 {
            return Ok(());
        }
        debug_assert_eq!(self.block.len(), self.block_records as usize * RECORD_BYTES);
        let count = self.block_records.to_le_bytes();
        // At most MAX_BLOCK_RECORDS * RECORD_BYTES, well inside u32.
        let len = (self.block.len() as u32).to_le_bytes();
        let crc = crc_of(&[&count, &len, &self.block]);
        let mut head = [0u8; 16];
        head[0..4].copy_from_slice(&BLOCK_MAGIC);
        head[4..8].copy_from_slice(&count);
        head[8..12].copy_from_slice(&len);
        head[12..16].copy_from_slice(&crc.to_le_bytes());
        self.put(&head)?;
        let block = std::mem::take(&mut self.block);
        let result = self.put(&block);
        self.block = block;
        self.block.clear();
        self.block_records = 0;
        result
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), TraceError> {
        let offset = self.offset;
        self.inner
            .write_all(bytes)
            .map_err(|source| TraceError::Io { offset, source })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }
}
