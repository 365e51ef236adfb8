//! Constants of the on-disk layout (described in the crate doc and FORMAT.md)
//! and the file header.
//!
//! Invariants: a block never holds more than [`MAX_BLOCK_RECORDS`] records,
//! so neither writer nor reader buffers more than 65,520 payload bytes; the
//! description never exceeds [`DESCRIPTION_BYTES_MAX`].

/// First eight bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"FWTRACE\0";
/// The version this crate writes and the only one it reads.
pub const FORMAT_VERSION: u16 = 1;
/// Size of one encoded record.
pub const RECORD_BYTES: usize = 20;
/// Records per block: the most 20-byte records that fit in 64 KiB.
pub const MAX_BLOCK_RECORDS: u32 = 3276;
/// Longest description accepted (it is read into memory whole).
pub const DESCRIPTION_BYTES_MAX: usize = 64 * 1024;

pub(crate) const BLOCK_MAGIC: [u8; 4] = *b"FWBK";
pub(crate) const TRAILER_MAGIC: [u8; 4] = *b"FWEN";
/// magic, version, flags, page size, description length.
pub(crate) const HEADER_FIXED_BYTES: usize = 20;
pub(crate) const BLOCK_HEADER_BYTES: usize = 16;
pub(crate) const TRAILER_BYTES: usize = 16;

/// What a trace says about itself.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TraceHeader {
    /// Page size of the recorded database; the oracleGeneral export uses it
    /// as every object's size.
    pub page_size_bytes: u32,
    /// Reserved for future use; version 1 writes 0 and accepts any value.
    pub flags: u16,
    /// Free-form UTF-8: seed, configuration, commit of the recorder.
    pub description: String,
}

impl TraceHeader {
    pub fn new(page_size_bytes: u32, description: impl Into<String>) -> Self {
        Self {
            page_size_bytes,
            flags: 0,
            description: description.into(),
        }
    }
}

/// CRC-32C of several byte slices as if they were one.
pub(crate) fn crc_of(parts: &[&[u8]]) -> u32 {
    parts.iter().fold(0u32, |crc, part| crc32c::crc32c_append(crc, part))
}
