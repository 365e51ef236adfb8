//! The properties flushwise's fuzz targets check, one module per decoder
//! family that reads bytes a disk or a user controls.
//!
//! Each module's `check(&[u8])` is the whole body of one cargo-fuzz target
//! (`fuzz/fuzz_targets/<name>.rs`) and is also what the stable replay test
//! (`tests/corpus_replay.rs`) runs on every file under `fuzz/corpus/<name>/`
//! and `fuzz/regressions/<name>/`. A check returns normally when the decoder
//! behaved and panics (an assertion naming the broken property) when it did
//! not, so libFuzzer and `cargo test` see the same verdict.
//!
//! The first input byte of every check picks a mode; the rest is either the
//! raw bytes handed to the decoder (optionally with checksums fixed up, so
//! mutations reach the checks behind them) or the seed of a structured value
//! built with `arbitrary` for a round trip. Checks allocate in proportion to
//! their input and bound every loop by it.

pub mod btree_node;
pub mod checkpoint;
pub mod manifest;
pub mod page;
pub mod redo_log;
pub mod redo_record;
pub mod trace;
pub mod units;

/// A target's check: returns if the decoder behaved, panics otherwise.
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (the folder under `fuzz/corpus/` and the
/// file under `fuzz/fuzz_targets/`) and its check.
pub const TARGETS: [(&str, Check); 8] = [
    ("page", page::check),
    ("btree_node", btree_node::check),
    ("redo_record", redo_record::check),
    ("redo_log", redo_log::check),
    ("checkpoint", checkpoint::check),
    ("trace", trace::check),
    ("manifest", manifest::check),
    ("units", units::check),
];

/// The mode byte and the rest; `None` for an empty input.
pub(crate) fn split_mode(data: &[u8]) -> Option<(u8, &[u8])> {
    data.split_first().map(|(mode, rest)| (*mode, rest))
}
