//! Page-miss-bound random reads through the buffer pool shell, beside raw
//! random reads of the same file: how much of the device's IOPS the
//! engine's miss path delivers (target: at least 90%).
//!
//! A tablespace of `--size-mib` (64 MiB) of sealed pages, a pool of
//! `--pool-mib` (1 MiB = 64 frames of 16 KiB), `--threads` threads each
//! latching uniformly random pages shared (nearly every latch is a miss:
//! a read, a checksum verification, an eviction). Then, on the same file
//! with the same thread count, raw random page-sized O_DIRECT reads (the
//! logic of `examples/raw_iops.rs`). Phases run `--seconds` each and
//! alternate, raw first and last, for `--rounds` (3) engine phases; each
//! engine phase is compared with the mean of the two raw phases around it
//! and the median ratio is the result (the disk of a shared machine drifts
//! by 20% and more between phases).
//!
//! ```text
//! cargo run --release -p flushwise-engine --example page_miss_iops -- \
//!     --dir /tmp/fw_bench --size-mib 64 --pool-mib 1 --threads 4 --seconds 5
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_engine::buffer::{BufferPoolShell, ShellConfig};
use flushwise_engine::page::PageSize;
use flushwise_engine::page_store::{Latch, PageStore};
use flushwise_engine::redo::{RedoConfig, RedoLog};
use flushwise_engine::storage::{open_file, AlignedBuf, IoMode, StorageBackend, Tablespace};

mod common;
use common::Rng;

const SPACE: u32 = 1;

struct Args {
    dir: PathBuf,
    size_mib: u64,
    pool_mib: u64,
    threads: usize,
    seconds: f64,
    /// Engine phases, each between two raw phases.
    rounds: usize,
    io: IoMode,
    policy: flushwise_core::policy::PolicySpec,
    hit_fast_path: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: PathBuf::from("/tmp/flushwise_page_miss_iops"),
        size_mib: 64,
        pool_mib: 1,
        threads: 4,
        seconds: 5.0,
        rounds: 3,
        io: IoMode::Direct,
        policy: "mysql56".parse().expect("a registered policy"),
        hit_fast_path: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--dir" => args.dir = PathBuf::from(value()?),
            "--size-mib" => args.size_mib = value()?.parse().map_err(|e| bad(&e))?,
            "--pool-mib" => args.pool_mib = value()?.parse().map_err(|e| bad(&e))?,
            "--threads" => args.threads = value()?.parse().map_err(|e| bad(&e))?,
            "--seconds" => args.seconds = value()?.parse().map_err(|e| bad(&e))?,
            "--rounds" => args.rounds = value()?.parse::<usize>().map_err(|e| bad(&e))?.max(1),
            "--io" => args.io = value()?.parse().map_err(|e| bad(&e))?,
            "--policy" => args.policy = value()?.parse()?,
            "--no-hit-fast-path" => args.hit_fast_path = false,
            "-h" | "--help" => {
                return Err(
                    "usage: page_miss_iops [--dir DIR] [--size-mib N] [--pool-mib N] [--threads N] \
                            [--seconds S] [--rounds N] [--io direct|buffered] [--policy NAME] [--no-hit-fast-path]"
                        .into(),
                )
            }
            other => return Err(format!("unknown flag {other:?} (try --help)")),
        }
    }
    if args.threads == 0 || args.threads > 1024 {
        return Err("--threads must be in 1..=1024".into());
    }
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        return Err("--seconds must be in (0, 3600]".into());
    }
    if args.pool_mib == 0 || args.pool_mib >= args.size_mib {
        return Err("--pool-mib must be positive and smaller than --size-mib".into());
    }
    Ok(args)
}

/// Runs `op` on `threads` threads for `duration`; returns operations per second.
fn run_threads(
    threads: usize,
    duration: Duration,
    op: impl Fn(&mut Rng) -> Result<(), String> + Sync,
) -> Result<f64, String> {
    let started = Instant::now();
    let counts: Vec<Result<u64, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let op = &op;
                s.spawn(move || {
                    let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9));
                    let deadline = started + duration;
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        op(&mut rng)?;
                        n += 1;
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
    Ok(total as f64 / elapsed)
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let page_size = PageSize::DEFAULT;
    let pages = u32::try_from((args.size_mib << 20) / page_size.bytes_u64()).map_err(|e| e.to_string())?;
    let frames = u32::try_from((args.pool_mib << 20) / page_size.bytes_u64()).map_err(|e| e.to_string())?;
    let ts_path = args.dir.join("bench.ibd");
    let backend = open_file(&ts_path, args.io, true).map_err(|e| e.to_string())?;
    let ts = Arc::new(Tablespace::open(SPACE, &ts_path, backend.clone(), page_size).map_err(|e| e.to_string())?);
    common::prepare_pages(&ts, SPACE, pages)?;
    let redo_path = args.dir.join("redo.log");
    let redo_backend = open_file(&redo_path, IoMode::Buffered, true).map_err(|e| e.to_string())?;
    let redo = RedoLog::create(&redo_path, redo_backend, 64 << 20, RedoConfig::default()).map_err(|e| e.to_string())?;
    let config = ShellConfig {
        frames,
        policy: args.policy.clone(),
        hit_fast_path: args.hit_fast_path,
        ..ShellConfig::default()
    };
    let shell =
        BufferPoolShell::open(config, Arc::new(redo), None, vec![Arc::clone(&ts)]).map_err(|e| e.to_string())?;
    let store = shell.store(SPACE).map_err(|e| e.to_string())?;
    let duration = Duration::from_secs_f64(args.seconds);

    let raw_read = |rng: &mut Rng, buf: &mut AlignedBuf| -> Result<(), String> {
        let p = (rng.next() % u64::from(pages)) as u32;
        backend.read(page_size.offset_of(p), buf).map_err(|e| e.to_string())
    };
    let raw = || {
        run_threads(args.threads, duration, |rng| {
            thread_local! {
                static BUF: std::cell::RefCell<Option<AlignedBuf>> = const { std::cell::RefCell::new(None) };
            }
            BUF.with(|b| {
                let mut b = b.borrow_mut();
                let buf = b.get_or_insert_with(|| AlignedBuf::zeroed(page_size.bytes()));
                raw_read(rng, buf)
            })
        })
    };
    // Alternating rounds raw, engine, raw, engine, ..., raw: each engine
    // phase is compared with the mean of the raw phases around it, so a
    // device whose speed drifts (a shared virtual disk) biases no round.
    let mut raw_phases = vec![raw()?];
    let mut rounds = Vec::new();
    for _ in 0..args.rounds {
        let reads_before = shell.metrics().Innodb_buffer_pool_reads;
        let requests_before = shell.metrics().Innodb_buffer_pool_read_requests;
        let started = Instant::now();
        let engine_latches = run_threads(args.threads, duration, |rng| {
            let p = (rng.next() % u64::from(pages)) as u32;
            store.latch(p, Latch::Shared).map(drop).map_err(|e| e.to_string())
        })?;
        let engine_seconds = started.elapsed().as_secs_f64();
        let m = shell.metrics();
        let reads = m.Innodb_buffer_pool_reads - reads_before;
        let requests = m.Innodb_buffer_pool_read_requests - requests_before;
        raw_phases.push(raw()?);
        let n = raw_phases.len();
        let raw_around = (raw_phases[n - 2] + raw_phases[n - 1]) / 2.0;
        let engine_reads = reads as f64 / engine_seconds;
        let miss_ratio = if requests == 0 {
            0.0
        } else {
            reads as f64 / requests as f64
        };
        rounds.push((engine_latches, engine_reads, miss_ratio, raw_around));
    }
    println!(
        "file={} size={} MiB pages={pages} pool={} MiB frames={frames} io={} threads={} seconds={:.1} rounds={} policy={} hit_fast_path={}",
        ts_path.display(),
        args.size_mib,
        args.pool_mib,
        args.io,
        args.threads,
        args.seconds,
        args.rounds,
        args.policy,
        args.hit_fast_path
    );
    let mut ratios = Vec::new();
    for (i, (latches, reads, miss, raw_around)) in rounds.iter().enumerate() {
        let ratio = 100.0 * reads / raw_around;
        ratios.push(ratio);
        println!(
            "round {}: engine latches/s={latches:.0} reads/s={reads:.0} (miss ratio {miss:.3}); raw iops around it={raw_around:.0}; ratio {ratio:.1}%",
            i + 1
        );
    }
    let raw_text: Vec<String> = raw_phases.iter().map(|r| format!("{r:.0}")).collect();
    println!("raw phases (iops): {}", raw_text.join(", "));
    ratios.sort_by(|a, b| a.total_cmp(b));
    let median = ratios[ratios.len() / 2];
    println!(
        "ratio:  engine reads/s / raw iops = {median:.1}% (median of {} rounds)",
        ratios.len()
    );
    drop(store);
    shell.shutdown().map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("page_miss_iops: {e}");
            ExitCode::FAILURE
        }
    }
}
