//! The one error enum of the trace layer.
//!
//! Every variant a reader can return names the byte offset (from the start of
//! the stream) where the problem was found, or what was found instead of the
//! expected magic or version, so a damaged multi-gigabyte trace can be
//! inspected with `xxd -s`.

use std::io;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("i/o error at byte offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: io::Error,
    },

    #[error("trace truncated: input ends at byte offset {offset}")]
    Truncated { offset: u64 },

    #[error("corrupt trace at byte offset {offset}: {reason}")]
    Corrupt { offset: u64, reason: String },

    #[error("not a flushwise trace: magic is {found:02x?}, expected \"FWTRACE\\0\"")]
    BadMagic { found: [u8; 8] },

    #[error("unsupported trace format version {found} (this reader knows version {supported})")]
    UnsupportedVersion { found: u16, supported: u16 },

    /// A record handed to the writer breaks the per-kind field rules.
    #[error("invalid trace record: {reason}")]
    InvalidRecord { reason: String },

    #[error("trace description is {len_bytes} bytes, the limit is {max_bytes}")]
    DescriptionTooLong { len_bytes: usize, max_bytes: usize },

    /// The oracleGeneral export has a 32-bit time field.
    #[error("oracleGeneral export: {reason}")]
    Export { reason: String },
}
