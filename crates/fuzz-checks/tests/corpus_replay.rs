//! Replays the fuzz corpus and the crash regressions on stable: every file
//! under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes
//! through the same check its cargo-fuzz target runs, so a decoder change
//! that breaks a property some fuzzing once reached fails `cargo test`.

use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Files directly under `dir` (none if it does not exist), sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `name`'s check on its corpus and regressions; fails naming every
/// input whose check panicked.
fn replay(name: &str) {
    let (_, check) = flushwise_fuzz_checks::TARGETS
        .iter()
        .find(|(target, _)| *target == name)
        .unwrap_or_else(|| panic!("no fuzz target named {name}"));
    let corpus = inputs(&fuzz_dir().join("corpus").join(name));
    assert!(!corpus.is_empty(), "fuzz/corpus/{name}/ is empty or missing");
    let regressions = inputs(&fuzz_dir().join("regressions").join(name));
    let mut failed = Vec::new();
    for path in corpus.iter().chain(&regressions) {
        let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if panic::catch_unwind(|| check(&bytes)).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{name}: {} of {} inputs break their check:\n{}",
        failed.len(),
        corpus.len() + regressions.len(),
        failed.join("\n")
    );
}

#[test]
fn every_target_has_a_replay_test() {
    let names: Vec<&str> = flushwise_fuzz_checks::TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "page",
            "btree_node",
            "redo_record",
            "redo_log",
            "checkpoint",
            "trace",
            "manifest",
            "units"
        ]
    );
}

#[test]
fn page_corpus_replays() {
    replay("page");
}

#[test]
fn btree_node_corpus_replays() {
    replay("btree_node");
}

#[test]
fn redo_record_corpus_replays() {
    replay("redo_record");
}

#[test]
fn redo_log_corpus_replays() {
    replay("redo_log");
}

#[test]
fn checkpoint_corpus_replays() {
    replay("checkpoint");
}

#[test]
fn trace_corpus_replays() {
    replay("trace");
}

#[test]
fn manifest_corpus_replays() {
    replay("manifest");
}

#[test]
fn units_corpus_replays() {
    replay("units");
}
