//! Reading the `--output json` contract of every command: JSON lines, one
//! `"kind":"interval"` object per interval row and one `"kind":"result"`
//! object per run; and running the built binary (`flushwise`, `ok`, `text`).

#![allow(dead_code)]

use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

/// Runs the built binary with `args`.
pub fn flushwise(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the flushwise binary runs")
}

/// Output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Stdout of a run that must have succeeded; panics with both streams otherwise.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// Every stdout line as a JSON object; panics naming a line that is not.
pub fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line {l:?} is not JSON: {e}")))
        .collect()
}

/// The `"kind":"result"` objects, in order; every line must have a kind.
pub fn results(stdout: &str) -> Vec<Value> {
    of_kind(stdout, "result")
}

/// The `"kind":"interval"` objects, in order.
pub fn intervals(stdout: &str) -> Vec<Value> {
    of_kind(stdout, "interval")
}

/// The one result of a single run.
pub fn result(stdout: &str) -> Value {
    let mut all = results(stdout);
    assert_eq!(all.len(), 1, "one result object: {stdout}");
    all.remove(0)
}

fn of_kind(stdout: &str, kind: &str) -> Vec<Value> {
    json_lines(stdout)
        .into_iter()
        .inspect(|v| {
            let k = v["kind"].as_str().unwrap_or_else(|| panic!("no kind in {v}"));
            assert!(k == "result" || k == "interval", "unknown kind {k:?} in {v}");
        })
        .filter(|v| v["kind"] == kind)
        .collect()
}

pub mod live;
