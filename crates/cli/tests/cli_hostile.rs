//! What a hostile user found (issue #14), against the built binary, each
//! finding a scenario:
//!
//! 1. a second process on a database in use is refused, naming the holder;
//! 3. extreme values (cleaner threads, a pool larger than the memory, a
//!    trace's agent id near 2^32) get one clear line, never a panic or an
//!    abort;
//! 4. a redo log too small for the engine is refused before anything on
//!    disk changes;
//! 5. an interrupted `prepare` is named as such, and `prepare --force`
//!    loads again;
//! 6. a truncated data file is reported as shorter than expected, with
//!    both sizes;
//! 7. SIGTERM during `tpcc run` stops it cleanly: a partial summary, the
//!    database closed and consistent.
//!
//! Finding 2 (a stale doublewrite copy) is the engine's
//! (`crates/engine/tests/storage_doublewrite.rs`).

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

use common::{flushwise, ok, text};

/// The one-line error of a refused command (exit 2, no panic, no abort).
fn refused(o: &Output) -> String {
    let stderr = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a clean refusal (exit 2)\nstdout:\n{}\nstderr:\n{stderr}",
        text(&o.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr
}

fn prepare(dir: &Path) {
    let out = ok(&flushwise(&[
        "tpcc",
        "prepare",
        "--dir",
        dir.to_str().unwrap(),
        "--warehouses",
        "1",
        "--redo",
        "32MiB",
    ]));
    assert!(out.contains("prepared 1 warehouses"), "{out}");
}

fn check(dir: &Path) -> String {
    ok(&flushwise(&["tpcc", "check", "--dir", dir.to_str().unwrap()]))
}

/// Starts `tpcc run` on `dir` for a long time; returns the child once its
/// first interval line is out (the database is open and running).
fn start_long_run(dir: &Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(BIN)
        .args([
            "tpcc",
            "run",
            "--dir",
            dir.to_str().unwrap(),
            "--connections",
            "2",
            "--warmup",
            "1s",
            "--duration",
            "120s",
            "--report-interval",
            "1s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tpcc run");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the run printed no interval line");
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the run ended early ({status}): {err}");
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) if line.starts_with('[') => break,
            _ => {}
        }
    }
    (child, rx)
}

#[test]
fn tpcc_check_during_a_run_is_refused_naming_the_running_pid() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    prepare(&dir);
    let d = dir.to_str().unwrap();
    let (mut run, _lines) = start_long_run(&dir);
    let pid = run.id().to_string();

    let during_check = flushwise(&["tpcc", "check", "--dir", d]);
    let second_run = flushwise(&["tpcc", "run", "--dir", d, "--warmup", "0s", "--duration", "2s"]);
    let export = flushwise(&[
        "tpcc",
        "export",
        "--dir",
        d,
        "--out",
        root.path().join("csv").to_str().unwrap(),
    ]);
    let prepare_again = flushwise(&["tpcc", "prepare", "--dir", d, "--force"]);
    run.kill().unwrap();
    run.wait().unwrap();

    for o in [&during_check, &second_run, &export, &prepare_again] {
        let msg = refused(o);
        assert!(msg.contains(&pid), "the holder's pid {pid} is named: {msg}");
        assert!(msg.contains(d), "the directory is named: {msg}");
    }
    // The refusals changed nothing: after the killed run recovers, the
    // database is consistent.
    assert!(check(&dir).contains("hold"));
}

#[test]
fn cleaner_threads_past_the_sane_limit_are_refused_with_the_limit() {
    for cleaners in ["100000", "4096", "129"] {
        let policy = format!("db2:cleaners={cleaners}");
        let msg = refused(&flushwise(&[
            "sim",
            "run",
            "--policy",
            &policy,
            "--warmup",
            "0s",
            "--duration",
            "1s",
        ]));
        assert!(msg.contains("cleaners") && msg.contains("1..=128"), "{msg}");
    }
}

/// `MemAvailable` of this machine, bytes.
fn mem_available_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with("MemAvailable:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// `flushwise args` with its address space capped at 4 GiB: a pool the
/// command failed to refuse aborts at once instead of eating the machine's
/// memory page by page.
fn flushwise_capped(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(args)
        .output()
        .expect("sh runs the flushwise binary")
}

#[test]
fn buffer_pool_larger_than_available_memory_is_refused_with_both_numbers() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    // Twice what is available, rounded to MiB (the flag's unit).
    let pool = format!("{}MiB", 2 * mem_available_bytes() / (1 << 20));
    for args in [
        vec!["tpcc", "prepare", "--dir", d, "--buffer-pool", &pool],
        vec!["tpcc", "run", "--dir", d, "--buffer-pool", &pool],
    ] {
        let msg = refused(&flushwise_capped(&args));
        assert!(msg.contains("--buffer-pool") && msg.contains("available"), "{msg}");
        assert!(msg.contains("GiB"), "both sizes, in readable units: {msg}");
    }
    prepare(&dir);
    let msg = refused(&flushwise_capped(&["tpcc", "run", "--dir", d, "--buffer-pool", &pool]));
    assert!(msg.contains("available"), "{msg}");
}

#[test]
fn trace_agent_id_near_2_pow_32_is_refused_before_anything_is_allocated() {
    use flushwise_core::PageId;
    use flushwise_trace::{LatchMode, TraceEvent, TraceHeader, TraceRecord, TraceWriter, TxnType};
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("hostile.trace");
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = TraceWriter::new(file, &TraceHeader::new(16384, String::from("agent id near 2^32"))).unwrap();
    let agent = u32::MAX - 1;
    let page = PageId::new(1, 7);
    for event in [
        TraceEvent::TxnBegin {
            txn_type: TxnType::NewOrder,
        },
        TraceEvent::Fix {
            page,
            latch: LatchMode::Shared,
        },
        TraceEvent::Unfix {
            page,
            latch: LatchMode::Shared,
            modified: false,
            redo_bytes: 0,
        },
        TraceEvent::TxnCommit {
            txn_type: TxnType::NewOrder,
        },
    ] {
        writer.write(&TraceRecord { agent, event }).unwrap();
    }
    writer.finish().unwrap();
    let trace = path.to_str().unwrap();
    let msg = refused(&flushwise(&[
        "sim",
        "run",
        "--workload",
        "trace",
        "--trace",
        trace,
        "--buffer-pool",
        "1MiB",
        "--warmup",
        "0s",
        "--duration",
        "1s",
    ]));
    assert!(msg.contains(&agent.to_string()), "the agent id is named: {msg}");
    assert!(msg.contains("100000"), "the limit is named: {msg}");
}

#[test]
fn redo_smaller_than_the_engine_needs_is_refused_before_the_log_changes() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    prepare(&dir);
    let redo = dir.join("flushwise.redo");
    let before = std::fs::read(&redo).unwrap();
    for size in ["8KiB", "1MiB"] {
        let msg = refused(&flushwise(&[
            "tpcc",
            "run",
            "--dir",
            d,
            "--redo",
            size,
            "--warmup",
            "0s",
            "--duration",
            "1s",
        ]));
        assert!(msg.contains(&format!("--redo {size}")), "the flag is named: {msg}");
        assert!(msg.contains("at least"), "the minimum is given: {msg}");
    }
    assert!(std::fs::read(&redo).unwrap() == before, "the redo log is unchanged");
    assert!(check(&dir).contains("hold"));
    let out = ok(&flushwise(&[
        "tpcc",
        "export",
        "--dir",
        d,
        "--out",
        root.path().join("csv").to_str().unwrap(),
    ]));
    assert!(out.contains("warehouse"), "{out}");
}

#[test]
fn interrupted_prepare_is_named_and_force_loads_again() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    // A real interruption: SIGKILL while the rows are being loaded (the
    // data file grows, the manifest is not there yet).
    let mut load = Command::new(BIN)
        .args(["tpcc", "prepare", "--dir", d, "--warehouses", "2", "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let data = dir.join("flushwise.data");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(&data).map_or(0, |m| m.len()) < 16 << 20 {
        assert!(Instant::now() < deadline, "the load never got going");
        assert!(
            load.try_wait().unwrap().is_none(),
            "the load ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    load.kill().unwrap();
    load.wait().unwrap();
    assert!(
        !dir.join("flushwise-tpcc.json").exists(),
        "the load was killed before it finished"
    );

    for args in [
        vec!["tpcc", "run", "--dir", d, "--warmup", "0s", "--duration", "1s"],
        vec!["tpcc", "check", "--dir", d],
    ] {
        let msg = refused(&flushwise(&args));
        assert!(msg.contains("did not finish"), "{msg}");
        assert!(msg.contains("tpcc prepare") && msg.contains("--force"), "{msg}");
    }
    let msg = refused(&flushwise(&["tpcc", "prepare", "--dir", d, "--warehouses", "1"]));
    assert!(msg.contains("did not finish") && msg.contains("--force"), "{msg}");

    let out = ok(&flushwise(&[
        "tpcc",
        "prepare",
        "--dir",
        d,
        "--warehouses",
        "1",
        "--redo",
        "32MiB",
        "--force",
    ]));
    assert!(out.contains("prepared 1 warehouses"), "{out}");
    assert!(check(&dir).contains("hold"));

    // A complete database is not overwritten without --force either.
    let msg = refused(&flushwise(&["tpcc", "prepare", "--dir", d]));
    assert!(msg.contains("already here") && msg.contains("--force"), "{msg}");
}

#[test]
fn truncated_data_file_is_reported_as_shorter_than_expected_with_both_sizes() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let d = dir.to_str().unwrap();
    prepare(&dir);
    let data = dir.join("flushwise.data");
    let full_bytes = std::fs::metadata(&data).unwrap().len();
    let cut_bytes = 16384 * 4000;
    assert!(cut_bytes < full_bytes);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&data)
        .unwrap()
        .set_len(cut_bytes)
        .unwrap();
    for args in [
        vec!["tpcc", "check", "--dir", d],
        vec!["tpcc", "run", "--dir", d, "--warmup", "0s", "--duration", "1s"],
    ] {
        let msg = refused(&flushwise(&args));
        assert!(msg.contains("flushwise.data") && msg.contains("shorter"), "{msg}");
        assert!(msg.contains(&cut_bytes.to_string()), "the file's size: {msg}");
        assert!(msg.contains(&full_bytes.to_string()), "the expected size: {msg}");
        assert!(!msg.contains("never written") && !msg.contains("redo"), "{msg}");
    }
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        cut_bytes,
        "nothing grew the file back"
    );
}

#[test]
fn sigterm_during_a_run_prints_a_partial_summary_and_closes_the_database() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    prepare(&dir);
    let (mut run, lines) = start_long_run(&dir);
    std::thread::sleep(Duration::from_secs(2));
    let sent = Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run did not stop after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    run.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let stdout: Vec<String> = lines.try_iter().collect();
    let stdout = stdout.join("\n");
    // 128 + SIGTERM, as a shell reports a command it stopped; the process
    // exited by itself (a signal death has no code).
    assert_eq!(
        status.code(),
        Some(143),
        "{status}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("NOPM"), "the summary is printed: {stdout}");
    assert!(stdout.contains("partial"), "the summary says it is partial: {stdout}");
    assert!(stdout.contains("p99"), "with its latency table: {stdout}");
    // Closed cleanly: the next open has nothing to recover, and the data
    // are consistent.
    let verdict = flushwise(&["tpcc", "check", "--dir", dir.to_str().unwrap()]);
    let verdict_out = ok(&verdict);
    assert!(verdict_out.contains("hold"), "{verdict_out}");
    assert!(
        !text(&verdict.stderr).contains("recovery:"),
        "a clean close leaves nothing to recover: {}",
        text(&verdict.stderr)
    );
}
