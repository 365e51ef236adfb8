//! Measures this machine's storage the way the engine uses it, for
//! `flushwise device calibrate` (issue #18).
//!
//! Everything goes through the engine's own storage backends
//! ([`crate::storage::open_file`]): data-file requests are 16 KiB pages in
//! [`AlignedBuf`]s, `pread`/`pwrite` with `O_DIRECT` (or buffered, on a
//! filesystem without it), and the log file is written and `fdatasync`ed
//! through the buffered backend as the redo log is. The engine has no
//! asynchronous I/O, so a queue depth of k is k threads each with one
//! synchronous request outstanding, as k engine threads would be (fio's
//! `ioengine=psync` with `numjobs=k` measures the same thing).
//!
//! The sequence, each point for `duration_per_point` (the first tenth, at
//! most 500 ms, is warm-up and not counted; a point runs on until each of
//! its threads has completed `SAMPLES_PER_THREAD_MIN` measured requests,
//! and its IOPS divide by the window it really took):
//! 1. fill the test file (`file_size_bytes`) with 1 MiB direct writes of
//!    pseudo-random bytes and fsync it: every later read reaches written
//!    blocks (a read of an unwritten extent never reaches the device), and
//!    the fill's rate is the sequential-write figure;
//! 2. random 16 KiB reads, then writes, at each queue depth;
//! 3. `mixed`: k readers and k writers at once at a few depths, to see how
//!    much writes slow reads;
//! 4. sequential log appends of each size, each followed by `fdatasync`;
//! 5. `fdatasync` after a 4 KiB log append, timed alone;
//! 6. the same beside k threads reading, then k threads writing, 16 KiB
//!    pages at random in the data file (`fsync_beside_counts`): a flush
//!    waits behind the data requests in flight
//!    (`flushwise_core::device::fsync`).
//!
//! Both test files (`flushwise-calibrate-<pid>.data` and `.log` in the
//! directory) are removed when the run ends, whether it succeeded, failed
//! or was stopped (the `stop` flag, polled between requests; a second
//! Ctrl-C that kills the process at once leaves them behind).
//!
//! Latencies are taken with `Instant` around each call; the figures are
//! per direction: IOPS over the measured window, mean and p99 from a
//! `flushwise_core::histogram::Histogram` (<= 0.4 % bucket error). Each
//! thread of a random point also reads its own scheduler counters
//! ([`crate::sched`]) before its first measured request and after its
//! last, so a point gives the callers' own CPU and wait for a core per
//! request (`Figures::caller_cpu_us`, `caller_core_wait_us`), reported
//! beside the latency as the device's part and the callers' (the fit
//! stays on the wall time: `Figures::device_latency_us` says why); nothing
//! is added to the requests themselves.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use flushwise_core::device::calibration::{Figures, FsyncBeside, LogWritePoint, MeasuredPoint, Measurements, Pattern};
use flushwise_core::device::IoKind;
use flushwise_core::histogram::Histogram;

use crate::rng::SplitMix64;
use crate::sched::{thread_sched_ns, ThreadSchedNs};
use crate::storage::{open_file, AlignedBuf, IoMode, StorageBackend, StorageError};

/// The engine's page: every random request is one.
pub const REQUEST_BYTES: u32 = 16 * 1024;
/// Write unit of the file fill (a power of two).
const FILL_CHUNK_BYTES: usize = 1 << 20;
/// Size of the append before the timed `fdatasync` (a small group commit).
const FSYNC_APPEND_BYTES: usize = 4096;
/// Deepest queue accepted (threads started for one point, per direction).
pub const QUEUE_DEPTH_MAX: u32 = 256;
/// Longest warm-up of a point.
const WARMUP_MAX: Duration = Duration::from_millis(500);
/// Requests every thread of a point completes in the measured window at
/// least, however slow the device is at that moment: a point's window
/// stretches past its duration until each has (a short point on a
/// stalled disk would otherwise count nothing).
const SAMPLES_PER_THREAD_MIN: u64 = 4;

/// What to measure and where.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// Directory the test files are created in (created if missing).
    pub dir: PathBuf,
    /// Size of the random-I/O test file.
    pub file_size_bytes: u64,
    pub duration_per_point: Duration,
    /// `Direct` as the engine's data files; `Buffered` where O_DIRECT is refused.
    pub io: IoMode,
    /// Depths of the read and write points.
    pub queue_depths: Vec<u32>,
    /// Depths of the mixed points (readers = writers = depth).
    pub mixed_queue_depths: Vec<u32>,
    /// Sizes of the log-append points.
    pub log_write_bytes: Vec<u32>,
    /// Size of the log test file (appends wrap around in it).
    pub log_file_bytes: u64,
    /// Data readers, then writers, beside which the log's `fdatasync` is
    /// timed again.
    pub fsync_beside_counts: Vec<u32>,
}

impl CalibrateOptions {
    /// The default run: 1 GiB file, 2 s a point, QD 1-32, mixed at 1, 4 and
    /// 16, log appends of 16 KiB to 512 KiB, the fsync beside 1 to 128
    /// readers and 1 to 128 writers (about 90 s of points plus the fill;
    /// the engine posts a batch's in-place writes all at once through
    /// io_uring, so a flush may meet far more than 16 in flight).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            file_size_bytes: 1 << 30,
            duration_per_point: Duration::from_secs(2),
            io: IoMode::Direct,
            queue_depths: vec![1, 2, 4, 8, 16, 32],
            mixed_queue_depths: vec![1, 4, 16],
            log_write_bytes: vec![16 << 10, 64 << 10, 128 << 10, 512 << 10],
            log_file_bytes: 64 << 20,
            fsync_beside_counts: vec![1, 2, 4, 8, 16, 32, 64, 128],
        }
    }

    /// A short run beside each engine run of `lab run fidelity` (this
    /// disk's speed moves by 2x within minutes: EXPERIMENTS, session 23):
    /// 512 MiB file, 400 ms a point, every kind of point at fewer depths
    /// (about 12 s of points plus the fill).
    pub fn beside_a_run(dir: impl Into<PathBuf>) -> Self {
        Self {
            file_size_bytes: 512 << 20,
            duration_per_point: Duration::from_millis(400),
            queue_depths: vec![1, 4, 16, 32],
            mixed_queue_depths: vec![1, 4, 16],
            log_write_bytes: vec![16 << 10, 128 << 10, 512 << 10],
            fsync_beside_counts: vec![1, 4, 16, 64, 128],
            ..Self::new(dir)
        }
    }

    /// A run of a few seconds for tests: 16 MiB file, 100 ms a point.
    pub fn quick(dir: impl Into<PathBuf>) -> Self {
        Self {
            file_size_bytes: 16 << 20,
            duration_per_point: Duration::from_millis(100),
            queue_depths: vec![1, 2, 4, 8],
            mixed_queue_depths: vec![2],
            log_write_bytes: vec![16 << 10, 128 << 10],
            log_file_bytes: 4 << 20,
            fsync_beside_counts: vec![2],
            ..Self::new(dir)
        }
    }

    /// Disk space both test files take.
    pub fn needed_bytes(&self) -> u64 {
        self.file_size_bytes.saturating_add(self.log_file_bytes)
    }

    /// Points measured, for progress reports.
    pub fn point_count(&self) -> usize {
        2 * self.queue_depths.len()
            + self.mixed_queue_depths.len()
            + self.log_write_bytes.len()
            + 1
            + 2 * self.fsync_beside_counts.len()
    }

    /// Checks every field; the message names the option.
    pub fn validate(&self) -> Result<(), String> {
        let request = u64::from(REQUEST_BYTES);
        if self.file_size_bytes < 64 * request || self.file_size_bytes & (FILL_CHUNK_BYTES as u64 - 1) != 0 {
            return Err(format!(
                "file size {} bytes: a multiple of 1 MiB and at least {} bytes (64 pages) is needed",
                self.file_size_bytes,
                64 * request
            ));
        }
        if self.duration_per_point < Duration::from_millis(10) {
            return Err(format!(
                "duration per point {:?}: at least 10 ms is needed",
                self.duration_per_point
            ));
        }
        if self.queue_depths.is_empty() {
            return Err("no queue depth to measure".into());
        }
        for qd in self
            .queue_depths
            .iter()
            .chain(&self.mixed_queue_depths)
            .chain(&self.fsync_beside_counts)
        {
            if !(1..=QUEUE_DEPTH_MAX).contains(qd) {
                return Err(format!("queue depth {qd}: 1 to {QUEUE_DEPTH_MAX} is accepted"));
            }
        }
        let largest_log = self.log_write_bytes.iter().copied().max().unwrap_or(0);
        for size in &self.log_write_bytes {
            if *size == 0 || size & 511 != 0 {
                return Err(format!("log write of {size} bytes: a multiple of 512 bytes is needed"));
            }
        }
        if self.log_file_bytes < 2 * u64::from(largest_log.max(FSYNC_APPEND_BYTES as u32)) {
            return Err(format!(
                "log file of {} bytes: at least two of the largest append are needed",
                self.log_file_bytes
            ));
        }
        Ok(())
    }
}

/// Why a calibration stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    #[error("{0}")]
    Storage(#[from] StorageError),
    #[error("{path}: {op}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("stopped before the end; the test files were removed")]
    Interrupted,
}

/// Removes the test files when dropped: at the end, on error and on a stop.
struct TestFiles {
    paths: Vec<PathBuf>,
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        for path in &self.paths {
            // Nothing to do about a file that cannot be removed but say so.
            if let Err(e) = std::fs::remove_file(path) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("warning: cannot remove the test file {}: {e}", path.display());
                }
            }
        }
    }
}

/// The filesystem type of `dir` from `/proc/self/mounts` (the longest
/// mount point that contains it), e.g. `ext4 (/dev/vda on /)`; `unknown`
/// where that file cannot be read.
pub fn filesystem_of(dir: &Path) -> String {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return "unknown".into();
    };
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [device, mount_point, fs_type, ..] = fields[..] else {
            continue;
        };
        // The kernel escapes spaces in mount points as \040.
        let mount_point = mount_point.replace("\\040", " ");
        let longer = match &best {
            Some((len, _)) => mount_point.len() >= *len,
            None => true,
        };
        if dir.starts_with(&mount_point) && longer {
            best = Some((mount_point.len(), format!("{fs_type} ({device} on {mount_point})")));
        }
    }
    best.map_or_else(|| "unknown".into(), |(_, text)| text)
}

/// Runs the whole calibration (see the module doc); `progress` is told
/// what is measured next and each point's result, on the calling thread.
pub fn calibrate(
    options: &CalibrateOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Measurements, CalibrateError> {
    options.validate().map_err(CalibrateError::Invalid)?;
    std::fs::create_dir_all(&options.dir).map_err(|source| CalibrateError::Io {
        path: options.dir.clone(),
        op: "create directory",
        source,
    })?;
    let pid = std::process::id();
    let data_path = options.dir.join(format!("flushwise-calibrate-{pid}.data"));
    let log_path = options.dir.join(format!("flushwise-calibrate-{pid}.log"));
    let _guard = TestFiles {
        paths: vec![data_path.clone(), log_path.clone()],
    };

    let data = open_file(&data_path, options.io, true)?;
    progress(&format!(
        "filling {} with {} MiB ({})",
        data_path.display(),
        options.file_size_bytes >> 20,
        options.io
    ));
    let sequential_write_mb_per_s = fill(&*data, options.file_size_bytes, stop)?;
    progress(&format!(
        "  sequential 1 MiB writes: {sequential_write_mb_per_s:.0} MB/s"
    ));

    let slots = options.file_size_bytes / u64::from(REQUEST_BYTES);
    let mut points = Vec::new();
    let plan = options
        .queue_depths
        .iter()
        .map(|qd| (Pattern::Read, *qd))
        .chain(options.queue_depths.iter().map(|qd| (Pattern::Write, *qd)))
        .chain(options.mixed_queue_depths.iter().map(|qd| (Pattern::Mixed, *qd)));
    for (index, (pattern, queue_depth)) in plan.enumerate() {
        let point = random_point(
            &*data,
            slots,
            pattern,
            queue_depth,
            options.duration_per_point,
            stop,
            index as u64,
        )?;
        progress(&format!("  {}", describe_point(&point)));
        points.push(point);
    }
    let log = open_file(&log_path, IoMode::Buffered, true)?;
    log.set_len(options.log_file_bytes)?;
    let mut log_writes = Vec::new();
    for size in &options.log_write_bytes {
        let point = log_point(&*log, options.log_file_bytes, *size, options.duration_per_point, stop)?;
        progress(&format!(
            "  log appends of {} KiB + fdatasync: {:.1} MB/s, mean {:.0} us, p99 {:.0} us",
            size >> 10,
            point.mb_per_s,
            point.mean_latency_us,
            point.p99_latency_us
        ));
        log_writes.push(point);
    }
    let (fsync_mean_us, fsync_p99_us) = fsync_point(
        &*log,
        SyncedWrite::LogAppend {
            log_file_bytes: options.log_file_bytes,
        },
        options.duration_per_point,
        stop,
    )?;
    progress(&format!(
        "  fdatasync after a 4 KiB append: mean {fsync_mean_us:.0} us, p99 {fsync_p99_us:.0} us"
    ));
    let (data_fsync_mean_us, data_fsync_p99_us) = fsync_point(
        &*data,
        SyncedWrite::DataPage { slots },
        options.duration_per_point,
        stop,
    )?;
    progress(&format!(
        "  data file fdatasync after a 16 KiB direct write: mean {data_fsync_mean_us:.0} us, p99 {data_fsync_p99_us:.0} us"
    ));
    let mut fsync_beside = Vec::new();
    let plan = [IoKind::Read, IoKind::Write]
        .into_iter()
        .flat_map(|kind| options.fsync_beside_counts.iter().map(move |count| (kind, *count)));
    for (index, (kind, count)) in plan.enumerate() {
        let point = fsync_beside_point(
            &*log,
            options.log_file_bytes,
            &*data,
            slots,
            kind,
            count,
            options.duration_per_point,
            stop,
            1000 + index as u64,
        )?;
        progress(&format!(
            "  fdatasync beside {} data {} ({:.0}/s): mean {:.0} us, p99 {:.0} us",
            point.in_flight,
            if kind == IoKind::Read { "readers" } else { "writers" },
            point.iops,
            point.mean_latency_us,
            point.p99_latency_us
        ));
        fsync_beside.push(point);
    }
    log.close()?;
    data.close()?;

    Ok(Measurements {
        request_bytes: REQUEST_BYTES,
        points,
        log_writes,
        fsync_mean_us,
        fsync_p99_us,
        data_fsync_mean_us: Some(data_fsync_mean_us),
        data_fsync_p99_us: Some(data_fsync_p99_us),
        fsync_beside,
        sequential_write_mb_per_s,
    })
}

/// One line for a measured point, e.g. `read QD4: 12000 IOPS, mean 330 us, p99 900 us`.
pub fn describe_point(point: &MeasuredPoint) -> String {
    let mut text = format!("{} QD{}:", point.pattern, point.queue_depth);
    for (dir, figures) in [("read", point.read), ("write", point.write)] {
        if let Some(f) = figures {
            text.push_str(&format!(
                " {dir} {:.0} IOPS, mean {:.0} us, p99 {:.0} us;",
                f.iops, f.mean_latency_us, f.p99_latency_us
            ));
        }
    }
    text.pop();
    text
}

fn check_stop(stop: &AtomicBool) -> Result<(), CalibrateError> {
    if stop.load(Ordering::Relaxed) {
        Err(CalibrateError::Interrupted)
    } else {
        Ok(())
    }
}

/// Writes the whole file sequentially and fsyncs it; returns MB/s.
fn fill(file: &dyn StorageBackend, size_bytes: u64, stop: &AtomicBool) -> Result<f64, CalibrateError> {
    file.set_len(size_bytes)?;
    let mut chunk = AlignedBuf::zeroed(FILL_CHUNK_BYTES);
    let mut rng = SplitMix64::new(0x5EED);
    let started = Instant::now();
    let mut offset = 0;
    while offset < size_bytes {
        check_stop(stop)?;
        rng.fill(&mut chunk);
        file.write(offset, &chunk)?;
        offset += FILL_CHUNK_BYTES as u64;
    }
    file.sync_data()?;
    Ok(mb_per_s(size_bytes, started.elapsed()))
}

fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6
}

/// Microseconds of `d`, rounded to nearest.
fn round_us(d: Duration) -> u64 {
    u64::try_from((d.as_nanos() + 500) / 1000).unwrap_or(u64::MAX)
}

/// What one thread of a point saw in the measured window.
struct ThreadTally {
    is_reader: bool,
    latencies: Histogram,
    /// When its last measured request ended.
    last_end: Instant,
    /// Its own CPU and wait for a core over its measured requests (`None`
    /// where the kernel gives no schedstat).
    sched: Option<ThreadSchedNs>,
}

/// Keeps `queue_depth` readers and/or writers busy for `duration`.
fn random_point(
    file: &dyn StorageBackend,
    slots: u64,
    pattern: Pattern,
    queue_depth: u32,
    duration: Duration,
    stop: &AtomicBool,
    seed: u64,
) -> Result<MeasuredPoint, CalibrateError> {
    let readers = pattern.readers(queue_depth);
    let writers = pattern.writers(queue_depth);
    let warmup = (duration / 10).min(WARMUP_MAX);
    let started = Instant::now();
    let measured_from = started + warmup;
    let until = started + duration;
    // The first error (or the stop flag) ends every thread's loop.
    let abort = AtomicBool::new(false);
    let tallies: Vec<Result<ThreadTally, StorageError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..readers + writers)
            .map(|thread| {
                let abort = &abort;
                scope.spawn(move || {
                    let is_reader = thread < readers;
                    let mut rng = SplitMix64::new(seed.wrapping_mul(1_000_003).wrapping_add(u64::from(thread)));
                    let mut buf = AlignedBuf::zeroed(REQUEST_BYTES as usize);
                    rng.fill(&mut buf);
                    let mut latencies = Histogram::new();
                    let mut last_end = measured_from;
                    // Read once before the first measured request and once
                    // after the last: nothing is added to each request.
                    let mut sched_from: Option<Option<ThreadSchedNs>> = None;
                    while !abort.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                        let offset = (rng.next_u64() % slots) * u64::from(REQUEST_BYTES);
                        if sched_from.is_none() && Instant::now() >= measured_from {
                            sched_from = Some(thread_sched_ns());
                        }
                        let begun = Instant::now();
                        let outcome = if is_reader {
                            file.read(offset, &mut buf)
                        } else {
                            file.write(offset, &buf)
                        };
                        let ended = Instant::now();
                        if let Err(e) = outcome {
                            abort.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        if begun >= measured_from {
                            latencies.record(round_us(ended - begun));
                            last_end = ended;
                        }
                        if ended >= until && latencies.count() >= SAMPLES_PER_THREAD_MIN {
                            break;
                        }
                    }
                    let sched = match (sched_from.flatten(), thread_sched_ns()) {
                        (Some(from), Some(to)) => Some(to.since(&from)),
                        _ => None,
                    };
                    Ok(ThreadTally {
                        is_reader,
                        latencies,
                        last_end,
                        sched,
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| match w.join() {
                Ok(tally) => tally,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    check_stop(stop)?;
    let tallies = tallies.into_iter().collect::<Result<Vec<_>, _>>()?;
    // From the window's start to the last measured completion (at least
    // the planned window).
    let window = tallies
        .iter()
        .map(|t| t.last_end.saturating_duration_since(measured_from))
        .max()
        .unwrap_or_default()
        .max(duration - warmup);
    let mut read = Direction::default();
    let mut write = Direction::default();
    for tally in tallies {
        let direction = if tally.is_reader { &mut read } else { &mut write };
        direction.latencies.merge(&tally.latencies);
        direction.sched = match (direction.sched, tally.sched) {
            (Some(sum), Some(this)) => Some(sum.plus(&this)),
            _ => None,
        };
    }
    Ok(MeasuredPoint {
        pattern,
        queue_depth,
        read: (readers > 0).then(|| read.figures(window)),
        write: (writers > 0).then(|| write.figures(window)),
    })
}

/// One direction's threads of a point, merged.
struct Direction {
    latencies: Histogram,
    /// Their own CPU and wait for a core, summed (`None` if any thread's
    /// is unknown).
    sched: Option<ThreadSchedNs>,
}

impl Default for Direction {
    fn default() -> Self {
        Direction {
            latencies: Histogram::new(),
            sched: Some(ThreadSchedNs::default()),
        }
    }
}

impl Direction {
    fn figures(&self, window: Duration) -> Figures {
        let requests = self.latencies.count().max(1) as f64;
        let per_request_us = |ns: u64| ns as f64 / 1e3 / requests;
        Figures {
            iops: self.latencies.count() as f64 / window.as_secs_f64(),
            mean_latency_us: self.latencies.mean_us(),
            p99_latency_us: self.latencies.quantile_us(0.99) as f64,
            caller_cpu_us: self.sched.map(|s| per_request_us(s.on_cpu_ns)),
            caller_core_wait_us: self.sched.map(|s| per_request_us(s.run_delay_ns)),
        }
    }
}

/// Sequential appends of `write_bytes`, each followed by `fdatasync`, for
/// `duration` (wrapping around in the log file).
fn log_point(
    log: &dyn StorageBackend,
    log_file_bytes: u64,
    write_bytes: u32,
    duration: Duration,
    stop: &AtomicBool,
) -> Result<LogWritePoint, CalibrateError> {
    let mut buf = AlignedBuf::zeroed(write_bytes as usize);
    SplitMix64::new(u64::from(write_bytes)).fill(&mut buf);
    let warmup = (duration / 10).min(WARMUP_MAX);
    let started = Instant::now();
    let measured_from = started + warmup;
    let until = started + duration;
    let mut latencies = Histogram::new();
    let mut bytes = 0u64;
    let mut offset = 0u64;
    loop {
        check_stop(stop)?;
        if offset + u64::from(write_bytes) > log_file_bytes {
            offset = 0;
        }
        let begun = Instant::now();
        log.write(offset, &buf)?;
        log.sync_data()?;
        let ended = Instant::now();
        offset += u64::from(write_bytes);
        if begun >= measured_from && ended <= until {
            latencies.record(round_us(ended - begun));
            bytes += u64::from(write_bytes);
        }
        if ended >= until {
            break;
        }
    }
    Ok(LogWritePoint {
        write_bytes,
        mb_per_s: mb_per_s(bytes, duration - warmup),
        mean_latency_us: latencies.mean_us(),
        p99_latency_us: latencies.quantile_us(0.99) as f64,
    })
}

/// What is written before each timed `fdatasync`.
#[derive(Clone, Copy)]
enum SyncedWrite {
    /// A 4 KiB append to the (preallocated, buffered) log, wrapping at
    /// its end: the engine's redo write.
    LogAppend { log_file_bytes: u64 },
    /// A 16 KiB direct write at a random page of the data file: the
    /// engine's doublewrite copy or in-place write before it syncs.
    DataPage { slots: u64 },
}

/// `fdatasync` after each write of `write`, the sync alone timed; returns
/// its mean and p99 in microseconds.
fn fsync_point(
    file: &dyn StorageBackend,
    write: SyncedWrite,
    duration: Duration,
    stop: &AtomicBool,
) -> Result<(f64, f64), CalibrateError> {
    let latencies = timed_syncs(file, write, duration, stop)?;
    Ok((latencies.mean_us(), latencies.quantile_us(0.99) as f64))
}

/// Writes as `write` says for `duration`, each `fdatasync` after a write
/// timed alone (after the warm-up): the latencies.
fn timed_syncs(
    file: &dyn StorageBackend,
    write: SyncedWrite,
    duration: Duration,
    stop: &AtomicBool,
) -> Result<Histogram, CalibrateError> {
    let len = match write {
        SyncedWrite::LogAppend { .. } => FSYNC_APPEND_BYTES,
        SyncedWrite::DataPage { .. } => REQUEST_BYTES as usize,
    };
    let mut buf = AlignedBuf::zeroed(len);
    let mut rng = SplitMix64::new(7);
    rng.fill(&mut buf);
    let warmup = (duration / 10).min(WARMUP_MAX);
    let started = Instant::now();
    let measured_from = started + warmup;
    let until = started + duration;
    let mut latencies = Histogram::new();
    let mut offset = 0u64;
    loop {
        check_stop(stop)?;
        match write {
            SyncedWrite::LogAppend { log_file_bytes } => {
                if offset + FSYNC_APPEND_BYTES as u64 > log_file_bytes {
                    offset = 0;
                }
            }
            SyncedWrite::DataPage { slots } => offset = (rng.next_u64() % slots) * u64::from(REQUEST_BYTES),
        }
        file.write(offset, &buf)?;
        let begun = Instant::now();
        file.sync_data()?;
        let ended = Instant::now();
        offset += len as u64;
        if begun >= measured_from && ended <= until {
            latencies.record(round_us(ended - begun));
        }
        if ended >= until && latencies.count() >= SAMPLES_PER_THREAD_MIN {
            break;
        }
    }
    Ok(latencies)
}

/// The log's timed `fdatasync` (as [`fsync_point`]) while `count`
/// threads each keep one random 16 KiB request of `kind` in flight on
/// `data`.
#[allow(clippy::too_many_arguments)]
fn fsync_beside_point(
    log: &dyn StorageBackend,
    log_file_bytes: u64,
    data: &dyn StorageBackend,
    slots: u64,
    kind: IoKind,
    count: u32,
    duration: Duration,
    stop: &AtomicBool,
    seed: u64,
) -> Result<FsyncBeside, CalibrateError> {
    // Set once the syncs are timed (or failed): the threads stop.
    let finished = AtomicBool::new(false);
    let warmup = (duration / 10).min(WARMUP_MAX);
    let (syncs, writes) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..count)
            .map(|thread| {
                let finished = &finished;
                scope.spawn(move || -> Result<(u64, Duration), StorageError> {
                    let mut rng = SplitMix64::new(seed.wrapping_mul(1_000_003).wrapping_add(u64::from(thread)));
                    let mut buf = AlignedBuf::zeroed(REQUEST_BYTES as usize);
                    rng.fill(&mut buf);
                    let started = Instant::now();
                    let mut counted = 0u64;
                    while !finished.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                        let offset = (rng.next_u64() % slots) * u64::from(REQUEST_BYTES);
                        let result = match kind {
                            IoKind::Read => data.read(offset, &mut buf),
                            IoKind::Write => data.write(offset, &buf),
                        };
                        if let Err(e) = result {
                            finished.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        if started.elapsed() >= warmup {
                            counted += 1;
                        }
                    }
                    Ok((counted, started.elapsed().saturating_sub(warmup)))
                })
            })
            .collect();
        let syncs = timed_syncs(log, SyncedWrite::LogAppend { log_file_bytes }, duration, stop);
        finished.store(true, Ordering::Relaxed);
        let writes: Vec<Result<(u64, Duration), StorageError>> = workers
            .into_iter()
            .map(|w| match w.join() {
                Ok(tally) => tally,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect();
        (syncs, writes)
    });
    let latencies = syncs?;
    let mut completed = 0u64;
    let mut window = Duration::ZERO;
    for tally in writes {
        let (count, measured) = tally?;
        completed += count;
        window = window.max(measured);
    }
    Ok(FsyncBeside {
        kind,
        in_flight: count,
        iops: completed as f64 / window.as_secs_f64().max(1e-9),
        mean_latency_us: latencies.mean_us(),
        p99_latency_us: latencies.quantile_us(0.99) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::is_tmpfs;

    fn quick(dir: &Path) -> CalibrateOptions {
        let mut options = CalibrateOptions::quick(dir);
        options.duration_per_point = Duration::from_millis(30);
        options.queue_depths = vec![1, 2];
        options.mixed_queue_depths = vec![1];
        if is_tmpfs(dir) {
            options.io = IoMode::Buffered;
        }
        options
    }

    #[test]
    fn quick_calibration_measures_every_point_and_removes_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let options = quick(dir.path());
        let stop = AtomicBool::new(false);
        let mut lines = Vec::new();
        let m = match calibrate(&options, &stop, &mut |line| lines.push(line.to_string())) {
            Ok(m) => m,
            Err(CalibrateError::Storage(StorageError::DirectIoUnsupported { .. })) => return,
            Err(e) => panic!("{e}"),
        };
        m.validate().unwrap();
        assert_eq!(m.points.len(), 5, "{:?}", m.points);
        assert!(m.point(Pattern::Read, 2).is_some_and(|p| p.read.unwrap().iops > 0.0));
        assert!(m.point(Pattern::Write, 1).is_some_and(|p| p.write.unwrap().iops > 0.0));
        let mixed = m.point(Pattern::Mixed, 1).unwrap();
        assert!(mixed.read.is_some() && mixed.write.is_some());
        assert_eq!(m.log_writes.len(), 2);
        assert!(m.log_writes.iter().all(|l| l.mb_per_s > 0.0));
        assert!(m.fsync_mean_us > 0.0 && m.sequential_write_mb_per_s > 0.0);
        assert_eq!(m.fsync_beside.len(), 2, "{:?}", m.fsync_beside);
        for (beside, kind) in m.fsync_beside.iter().zip([IoKind::Read, IoKind::Write]) {
            assert_eq!((beside.kind, beside.in_flight), (kind, 2));
            assert!(beside.iops > 0.0 && beside.mean_latency_us > 0.0, "{beside:?}");
        }
        m.fsync_cost().unwrap();
        assert!(lines.len() >= options.point_count(), "{lines:?}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "test files left behind: {left:?}");
    }

    #[test]
    fn a_stop_ends_the_run_and_removes_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let options = quick(dir.path());
        let stop = AtomicBool::new(false);
        let mut seen = 0;
        let err = calibrate(&options, &stop, &mut |_| {
            seen += 1;
            if seen == 3 {
                stop.store(true, Ordering::Relaxed);
            }
        });
        match err {
            Err(CalibrateError::Interrupted) => {}
            Err(CalibrateError::Storage(StorageError::DirectIoUnsupported { .. })) => return,
            other => panic!("expected an interruption, got {other:?}"),
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "test files left behind: {left:?}");
    }

    #[test]
    fn bad_options_are_refused_naming_the_value() {
        let mut options = CalibrateOptions::quick("/nonexistent");
        options.file_size_bytes = 12345;
        assert!(options.validate().unwrap_err().contains("12345"));
        let mut options = CalibrateOptions::quick("/nonexistent");
        options.queue_depths = vec![0];
        assert!(options.validate().unwrap_err().contains("queue depth 0"));
        let mut options = CalibrateOptions::quick("/nonexistent");
        options.log_write_bytes = vec![1000];
        assert!(options.validate().unwrap_err().contains("1000"));
    }

    #[test]
    fn filesystem_is_named_from_the_mount_table() {
        let dir = tempfile::tempdir().unwrap();
        let fs = filesystem_of(dir.path());
        assert!(!fs.is_empty());
        if Path::new("/proc/self/mounts").exists() {
            assert_ne!(fs, "unknown");
        }
    }
}
