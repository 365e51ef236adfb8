//! Buffer-pool hits per second on a fully cached working set: the core
//! path (every fix and unfix under the core's mutex) beside the hit fast
//! path (`ShellConfig::hit_fast_path`), with 1 and 2 threads.
//!
//! A tablespace of `--pages` (1024) sealed 16 KiB pages and a pool of
//! twice as many frames; every page is read in first, so each measured
//! operation is a hit: `SpaceStore::latch(page, Shared)` then drop (fix,
//! shared latch, unlatch, unfix) of a uniformly random page. Each
//! (path, threads) cell runs `--seconds` (2) on a fresh shell over the same
//! file; the best of `--rounds` (3) runs counts.
//!
//! ```text
//! cargo run --release -p flushwise-engine --example hit_bench -- --seconds 2 --rounds 3
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_engine::buffer::{BufferPoolShell, ShellConfig};
use flushwise_engine::page::PageSize;
use flushwise_engine::page_store::{Latch, PageStore};
use flushwise_engine::redo::{RedoConfig, RedoLog};
use flushwise_engine::storage::{open_file, IoMode, Tablespace};

mod common;
use common::Rng;

const SPACE: u32 = 1;
const THREAD_COUNTS: [usize; 2] = [1, 2];

struct Args {
    dir: PathBuf,
    pages: u32,
    seconds: f64,
    rounds: u32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: std::env::temp_dir().join(format!("flushwise_hit_bench_{}", std::process::id())),
        pages: 1024,
        seconds: 2.0,
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--dir" => args.dir = PathBuf::from(value()?),
            "--pages" => args.pages = value()?.parse().map_err(|e| bad(&e))?,
            "--seconds" => args.seconds = value()?.parse().map_err(|e| bad(&e))?,
            "--rounds" => args.rounds = value()?.parse().map_err(|e| bad(&e))?,
            "-h" | "--help" => {
                return Err("usage: hit_bench [--dir DIR] [--pages N] [--seconds S] [--rounds N]".into());
            }
            other => return Err(format!("unknown flag {other:?} (try --help)")),
        }
    }
    if !(16..=1 << 20).contains(&args.pages) {
        return Err("--pages must be in 16..=1048576".into());
    }
    if !(args.seconds > 0.0 && args.seconds <= 600.0) {
        return Err("--seconds must be in (0, 600]".into());
    }
    if !(1..=100).contains(&args.rounds) {
        return Err("--rounds must be in 1..=100".into());
    }
    Ok(args)
}

/// Hits per second of one (path, threads) cell on a fresh shell.
fn measure(args: &Args, ts: &Arc<Tablespace>, fast: bool, threads: usize, run: u32) -> Result<f64, String> {
    let redo_path = args.dir.join(format!("redo_{fast}_{threads}_{run}.log"));
    let redo_backend = open_file(&redo_path, IoMode::Buffered, true).map_err(|e| e.to_string())?;
    let redo = RedoLog::create(&redo_path, redo_backend, 8 << 20, RedoConfig::default()).map_err(|e| e.to_string())?;
    let config = ShellConfig {
        frames: args.pages * 2,
        hit_fast_path: fast,
        ..ShellConfig::default()
    };
    let shell = BufferPoolShell::open(config, Arc::new(redo), None, vec![Arc::clone(ts)]).map_err(|e| e.to_string())?;
    let store = shell.store(SPACE).map_err(|e| e.to_string())?;
    for p in 0..args.pages {
        store.latch(p, Latch::Shared).map_err(|e| e.to_string())?;
    }
    let reads_before = shell.metrics().Innodb_buffer_pool_reads;
    let duration = Duration::from_secs_f64(args.seconds);
    let started = Instant::now();
    let counts: Vec<Result<u64, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let store = &store;
                let pages = u64::from(args.pages);
                s.spawn(move || {
                    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
                    let deadline = started + duration;
                    let mut n = 0u64;
                    // Check the clock every 256 hits: it costs as much as a hit.
                    while Instant::now() < deadline {
                        for _ in 0..256 {
                            let p = (rng.next() % pages) as u32;
                            store.latch(p, Latch::Shared).map_err(|e| e.to_string())?;
                        }
                        n += 256;
                    }
                    Ok(n)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut total = 0;
    for c in counts {
        total += c?;
    }
    let m = shell.metrics();
    if m.Innodb_buffer_pool_reads != reads_before {
        return Err(format!(
            "{} reads during the run: the working set was not cached",
            m.Innodb_buffer_pool_reads - reads_before
        ));
    }
    drop(store);
    shell.shutdown().map_err(|e| e.to_string())?;
    drop(shell);
    std::fs::remove_file(&redo_path).map_err(|e| format!("{}: {e}", redo_path.display()))?;
    Ok(total as f64 / elapsed)
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let page_size = PageSize::DEFAULT;
    let ts_path = args.dir.join("hits.ibd");
    let backend = open_file(&ts_path, IoMode::Buffered, true).map_err(|e| e.to_string())?;
    let ts = Arc::new(Tablespace::open(SPACE, &ts_path, backend, page_size).map_err(|e| e.to_string())?);
    if ts.page_count() < args.pages {
        common::prepare_pages(&ts, SPACE, args.pages)?;
    }
    println!(
        "pages={} frames={} seconds={:.1} rounds={} (best of rounds)",
        args.pages,
        args.pages * 2,
        args.seconds,
        args.rounds
    );
    println!(
        "{:>7}  {:>16}  {:>16}  {:>9}",
        "threads", "core path hits/s", "fast path hits/s", "fast/core"
    );
    let mut rows = Vec::new();
    for threads in THREAD_COUNTS {
        let mut best = [0.0f64; 2];
        for round in 0..args.rounds {
            for (i, fast) in [false, true].into_iter().enumerate() {
                best[i] = best[i].max(measure(args, &ts, fast, threads, round)?);
            }
        }
        println!(
            "{threads:>7}  {:>16.0}  {:>16.0}  {:>9.2}",
            best[0],
            best[1],
            best[1] / best[0]
        );
        rows.push(best);
    }
    if let [one, two] = rows[..] {
        println!(
            "scaling 1 -> 2 threads: core path x{:.2}, fast path x{:.2}",
            two[0] / one[0],
            two[1] / one[1]
        );
    }
    drop(ts);
    std::fs::remove_file(&ts_path).map_err(|e| format!("{}: {e}", ts_path.display()))?;
    // Left in place if the caller's --dir holds other files.
    let _ = std::fs::remove_dir(&args.dir);
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hit_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
