//! Raw random-read IOPS of a file, fio-style: the ceiling that the engine's
//! page-miss-bound reads are compared against.
//!
//! N threads each keep one page-sized read in flight (queue depth = N, as
//! fio's `psync` engine with `numjobs=N`) at uniformly random page-aligned
//! offsets, through the same `StorageBackend` the engine uses, for a fixed
//! duration. Direct I/O by default, so the page cache is not measured.
//!
//! ```text
//! cargo run --release -p flushwise-engine --example raw_iops -- \
//!     --file /tmp/raw_iops.dat --size-mib 64 --threads 4 --seconds 5
//! ```
//!
//! Flags: `--file PATH`, `--size-mib N` (file is created and filled with
//! pseudo-random bytes if shorter), `--page-size BYTES` (default 16384),
//! `--threads N` (queue depth), `--seconds S`, `--io direct|buffered`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_engine::page::PageSize;
use flushwise_engine::storage::{open_file, AlignedBuf, IoMode, StorageBackend};

mod common;
use common::Rng;

struct Args {
    file: PathBuf,
    size_mib: u64,
    page_size: PageSize,
    threads: usize,
    seconds: f64,
    io: IoMode,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        file: PathBuf::from("/tmp/flushwise_raw_iops.dat"),
        size_mib: 64,
        page_size: PageSize::DEFAULT,
        threads: 1,
        seconds: 5.0,
        io: IoMode::Direct,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--file" => args.file = PathBuf::from(value()?),
            "--size-mib" => args.size_mib = value()?.parse().map_err(|e| bad(&e))?,
            "--page-size" => {
                let bytes: usize = value()?.parse().map_err(|e| bad(&e))?;
                args.page_size = PageSize::new(bytes).map_err(|e| bad(&e))?;
            }
            "--threads" | "--qd" => args.threads = value()?.parse().map_err(|e| bad(&e))?,
            "--seconds" => args.seconds = value()?.parse().map_err(|e| bad(&e))?,
            "--io" => args.io = value()?.parse().map_err(|e| bad(&e))?,
            "-h" | "--help" => {
                return Err("usage: raw_iops [--file PATH] [--size-mib N] [--page-size BYTES] \
                            [--threads N] [--seconds S] [--io direct|buffered]"
                    .into())
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
    if args.size_mib * (1 << 20) < args.page_size.bytes_u64() {
        return Err("--size-mib must hold at least one page".into());
    }
    Ok(args)
}

/// Grows the file to `bytes` with incompressible data, then syncs it.
fn prepare(file: &dyn StorageBackend, bytes: u64) -> Result<(), String> {
    let have = file.len().map_err(|e| e.to_string())?;
    if have >= bytes {
        return Ok(());
    }
    let chunk = 1 << 20;
    let mut buf = AlignedBuf::zeroed(chunk);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut offset = have - have % chunk as u64;
    while offset < bytes {
        for word in buf.chunks_exact_mut(8) {
            word.copy_from_slice(&rng.next().to_le_bytes());
        }
        file.write(offset, &buf).map_err(|e| e.to_string())?;
        offset += chunk as u64;
    }
    file.sync_data().map_err(|e| e.to_string())
}

fn run(args: &Args) -> Result<(), String> {
    let file: Arc<dyn StorageBackend> = open_file(&args.file, args.io, true).map_err(|e| e.to_string())?;
    let bytes = args.size_mib << 20;
    prepare(file.as_ref(), bytes)?;
    let pages = bytes / args.page_size.bytes_u64();
    let duration = Duration::from_secs_f64(args.seconds);

    let started = Instant::now();
    let per_thread: Vec<Result<Vec<u32>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let file = file.clone();
                s.spawn(move || {
                    let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9));
                    let mut buf = AlignedBuf::zeroed(args.page_size.bytes());
                    let mut latencies_us = Vec::new();
                    let deadline = started + duration;
                    loop {
                        let t0 = Instant::now();
                        if t0 >= deadline {
                            break;
                        }
                        let page = rng.next() % pages;
                        file.read(args.page_size.offset_of(page as u32), &mut buf)
                            .map_err(|e| e.to_string())?;
                        let us = t0.elapsed().as_micros();
                        latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
                    }
                    Ok(latencies_us)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("reader thread panicked".into())))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for r in per_thread {
        all.extend(r?);
    }
    if all.is_empty() {
        return Err("no read completed".into());
    }
    all.sort_unstable();
    let n = all.len();
    let pct = |p: f64| all[((n as f64 * p) as usize).min(n - 1)];
    let mean = all.iter().map(|v| u64::from(*v)).sum::<u64>() as f64 / n as f64;
    let iops = n as f64 / elapsed;
    println!(
        "file={} size={} MiB io={} page={} threads(qd)={} seconds={:.1}",
        args.file.display(),
        args.size_mib,
        args.io,
        args.page_size.bytes(),
        args.threads,
        elapsed
    );
    println!(
        "reads={n} iops={iops:.0} MiB/s={:.1} lat_us mean={mean:.1} p50={} p99={} max={}",
        iops * args.page_size.bytes() as f64 / (1 << 20) as f64,
        pct(0.50),
        pct(0.99),
        all[n - 1]
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("raw_iops: {e}");
            ExitCode::FAILURE
        }
    }
}
