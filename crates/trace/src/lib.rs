//! flushwise-trace: the page-reference trace format.
//!
//! A trace is what a buffer pool sees of a workload: which agent (connection)
//! fixed which page in which latch mode, whether it modified the page before
//! unfixing it and how much redo that modification generated, and where each
//! transaction began and ended. This is the record set of Wang and Bunt's DB2
//! trace (papers/002 §4.2, Table 2: type, tid, object, page, fix mode, modify
//! flag) plus the redo volume and transaction type a flushing study needs.
//! The simulator replays a trace agent by agent (papers/002 §5: "requests
//! belonging to each client are organized into a separate trace file"); the
//! per-agent order is the meaningful one, the interleaving between agents is
//! only the order in which the recorder saw them.
//!
//! # Layout (version 1, all integers little-endian)
//!
//! ```text
//! file    := header block* trailer
//! header  := magic "FWTRACE\0" (8) | version u16 = 1 | flags u16 = 0
//!            | page_size_bytes u32 | description_len u32 | header_crc u32
//!            | description (description_len bytes of UTF-8) | description_crc u32
//! block   := magic "FWBK" (4) | record_count u32 | payload_len u32 | crc u32
//!            | payload (record_count x 20-byte records)
//! trailer := magic "FWEN" (4) | total_records u64 | crc u32
//! record  := page_id u64 | agent u32 | redo_bytes u32
//!            | kind u8 | flags u8 | txn_type u8 | reserved u8 = 0
//! ```
//!
//! - `header_crc` is CRC-32C of the 20 bytes before it; `description_crc` of
//!   the description bytes; a block's `crc` covers `record_count`,
//!   `payload_len` and the payload; the trailer's covers its magic and count.
//! - A record is 20 bytes; a block holds at most [`MAX_BLOCK_RECORDS`]
//!   records (65,520 payload bytes, under 64 KiB). `payload_len` must equal
//!   `record_count * 20`, so a flipped length or count is caught before the
//!   payload is read and memory stays bounded by one block.
//! - `kind`: 0 Fix, 1 Unfix, 2 TxnBegin, 3 TxnCommit, 4 TxnRollback.
//!   `flags`: bit 0 exclusive latch, bit 1 modified; other bits zero.
//!   `txn_type`: TPC-C NewOrder 0, Payment 1, OrderStatus 2, Delivery 3,
//!   StockLevel 4, other 255.
//! - Field use per kind (unused fields must be zero): Fix has page and latch;
//!   Unfix has page, latch, modified and redo_bytes (zero unless modified);
//!   Txn* records have txn_type only.
//! - The trailer is mandatory: a file that ends at a block boundary without
//!   it was cut short and is reported as truncated.
//!
//! The same layout is written out in `crates/trace/FORMAT.md`.
//!
//! # Errors
//!
//! The reader never panics on input and never returns a short trace as if it
//! were whole: a file that ends early is [`TraceError::Truncated`] with the
//! offset at which bytes ran out; a checksum or field that does not hold is
//! [`TraceError::Corrupt`] with the offset of the structure that failed.

mod error;
mod format;
pub mod oracle_general;
mod reader;
mod record;
mod writer;

pub use error::TraceError;
pub use format::{TraceHeader, DESCRIPTION_BYTES_MAX, FORMAT_VERSION, MAGIC, MAX_BLOCK_RECORDS, RECORD_BYTES};
pub use reader::TraceReader;
pub use record::{LatchMode, TraceEvent, TraceRecord, TxnType};
pub use writer::TraceWriter;
