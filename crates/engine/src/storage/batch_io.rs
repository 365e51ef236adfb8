//! Batches of positional writes kept in flight together.
//!
//! InnoDB posts every in-place write of a doublewrite batch at once
//! through Linux native AIO (5.6.15 `buf0dblwr.cc`
//! `buf_dblwr_flush_buffered_writes` -> `buf_dblwr_write_block_to_datafile`
//! for each block, `innodb_use_native_aio` = ON, 4 write I/O threads of 256
//! slots each) and syncs the files when the last one completes. flushwise
//! does the same with io_uring: one thread queues the whole batch, one
//! `io_uring_enter` submits it, and the completions are reaped as they
//! come, so the device sees the batch's depth without a thread per write.
//! Where the kernel refuses io_uring (no support, a seccomp filter, or
//! `FLUSHWISE_NO_IO_URING=1` for an A/B), a batch is written from up to
//! [`IN_PLACE_WRITE_DEPTH`] threads, each `pwrite` at a time (the engine's
//! way before io_uring). Backends that model latency per request (the
//! emulated device) or inject faults per call keep the threaded way.
//!
//! Why it matters (measured, session 19): in the main regime flushwise's
//! one page cleaner spent 84 % of the measured minute in batch writes, 63 %
//! of that (57 us a page) in the threaded in-place writes, which spawned 15
//! helper threads per batch on a 2-core machine where 16 user threads were
//! runnable.
//!
//! Invariants: every buffer handed to the kernel outlives its request
//! (nothing returns while a request is in flight: on an error the others
//! are still reaped); a ring goes back to the pool empty; the first error
//! (by position in the batch) is the one returned, after every write ended.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::OnceLock;

use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;

/// One write of a batch: its offset in the file and its bytes.
pub type BatchWrite<'a> = (u64, &'a [u8]);

/// How many writes of one batch the threaded fallback keeps in flight.
///
/// Measured on this machine's disk with 16 KiB O_DIRECT random writes over
/// 1 GiB, 5 s each: 12.3k writes/s at depth 1, 22.6k at 4, 37.1k at 16,
/// 40.9k at 32. 16 takes most of that gain for half the threads.
pub const IN_PLACE_WRITE_DEPTH: usize = 16;

/// Submission-queue entries of one ring: a doublewrite batch (120 pages)
/// goes in one submission; a longer batch keeps this many in flight.
pub const RING_ENTRIES: u32 = 128;

/// Rings not in use. A batch takes one (or makes one) and puts it back
/// drained, so concurrent batches (several page cleaners) never share a
/// ring and a ring is set up once, not per batch.
struct RingPool {
    idle: Mutex<Vec<IoUring>>,
}

/// `None` when io_uring is unavailable here (decided once, at first use).
fn ring_pool() -> Option<&'static RingPool> {
    static POOL: OnceLock<Option<RingPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        if std::env::var_os("FLUSHWISE_NO_IO_URING").is_some_and(|v| v != "0") {
            return None;
        }
        // A ring that cannot be set up (ENOSYS, EPERM under seccomp,
        // io_uring_disabled) means the threaded path, for the process.
        let first = IoUring::new(RING_ENTRIES).ok()?;
        Some(RingPool {
            idle: Mutex::new(vec![first]),
        })
    })
    .as_ref()
}

/// True if batches go through io_uring in this process.
pub fn io_uring_in_use() -> bool {
    ring_pool().is_some()
}

/// How batches reach the kernel, for reports: `io_uring` or `threads`.
pub fn batch_io_mode() -> &'static str {
    if io_uring_in_use() {
        "io_uring"
    } else {
        "threads"
    }
}

/// Writes every `(offset, data)` of `writes` to `file`, all in flight at
/// once through io_uring. `None` if io_uring is unavailable (nothing was
/// written: use [`write_threaded`]); otherwise the first failed write's
/// index in `writes` and its error, if any failed.
pub(crate) fn write_uring(file: &File, writes: &[BatchWrite<'_>]) -> Option<Result<(), (usize, io::Error)>> {
    let pool = ring_pool()?;
    let ring = pool.idle.lock().pop();
    let mut ring = match ring {
        Some(r) => r,
        None => match IoUring::new(RING_ENTRIES) {
            Ok(r) => r,
            // Out of memory for rings (locked memory): this batch goes
            // the threaded way.
            Err(_) => return None,
        },
    };
    let result = write_on_ring(&mut ring, file, writes);
    pool.idle.lock().push(ring);
    Some(result)
}

fn write_on_ring(ring: &mut IoUring, file: &File, writes: &[BatchWrite<'_>]) -> Result<(), (usize, io::Error)> {
    let fd = types::Fd(file.as_raw_fd());
    let mut first_error: Option<(usize, io::Error)> = None;
    let mut keep = |index: usize, e: io::Error| {
        if first_error.as_ref().is_none_or(|(i, _)| index < *i) {
            first_error = Some((index, e));
        }
    };
    let mut next = 0;
    let mut in_flight = 0usize;
    while next < writes.len() || in_flight > 0 {
        // Queue what fits.
        {
            let mut sq = ring.submission();
            while next < writes.len() && !sq.is_full() {
                let (offset, data) = writes[next];
                let Ok(len) = u32::try_from(data.len()) else {
                    keep(
                        next,
                        io::Error::new(io::ErrorKind::InvalidInput, "a write of 4 GiB or more"),
                    );
                    next += 1;
                    continue;
                };
                let entry = opcode::Write::new(fd, data.as_ptr(), len)
                    .offset(offset)
                    .build()
                    .user_data(next as u64);
                // SAFETY: the entry points into `data`, borrowed from
                // `writes` for this whole call, and into `file`, borrowed
                // likewise; this function does not return while the entry
                // is in flight (the loop runs until `in_flight` is 0, and
                // a ring that cannot be waited on aborts the process
                // rather than free buffers the kernel may still read).
                if unsafe { sq.push(&entry) }.is_err() {
                    break;
                }
                next += 1;
                in_flight += 1;
            }
        }
        if in_flight == 0 {
            continue;
        }
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
            Err(e) => {
                // Requests are in flight and the ring cannot be waited on:
                // returning would let their buffers be freed under the
                // kernel. Nothing sane is left to do.
                eprintln!("flushwise: io_uring wait failed with {in_flight} writes in flight: {e}; aborting");
                std::process::abort();
            }
        }
        for cqe in ring.completion() {
            in_flight -= 1;
            let index = cqe.user_data() as usize;
            let (offset, data) = writes[index];
            let res = cqe.result();
            if res < 0 {
                keep(index, io::Error::from_raw_os_error(-res));
            } else if (res as usize) < data.len() {
                // A short write: the rest, synchronously (rare; on O_DIRECT
                // the kernel splits at aligned boundaries).
                let done = res as usize;
                if let Err(e) = file.write_all_at(&data[done..], offset + done as u64) {
                    keep(index, e);
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Runs `write(i)` for every index of a batch of `len` writes from up to
/// [`IN_PLACE_WRITE_DEPTH`] threads (the caller is one of them). After the
/// first error no further write starts; the ones in flight finish; the
/// first error (in time) is returned.
pub fn write_threaded<E: Send>(len: usize, write: impl Fn(usize) -> Result<(), E> + Sync) -> Result<(), E> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<E>> = Mutex::new(None);
    let writer = || loop {
        if failed.load(Ordering::Acquire) {
            return;
        }
        let i = next.fetch_add(1, Ordering::AcqRel);
        if i >= len {
            return;
        }
        if let Err(e) = write(i) {
            failed.store(true, Ordering::Release);
            first_error.lock().get_or_insert(e);
        }
    };
    let helpers = IN_PLACE_WRITE_DEPTH.min(len).saturating_sub(1);
    std::thread::scope(|scope| {
        for i in 0..helpers {
            // A helper that cannot be spawned leaves its share to the
            // others (the caller always writes), so the batch still
            // completes, at a lower depth.
            if std::thread::Builder::new()
                .name(format!("page-writer-{i}"))
                .spawn_scoped(scope, writer)
                .is_err()
            {
                break;
            }
        }
        writer();
    });
    match first_error.into_inner() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_batch_through_the_ring_lands_every_write_where_it_was_aimed() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("f"))
            .unwrap();
        // More writes than a ring holds, out of order, of different sizes.
        let n = RING_ENTRIES as usize * 2 + 7;
        let images: Vec<Vec<u8>> = (0..n).map(|i| vec![(i % 251) as u8; 512 * (1 + i % 3)]).collect();
        let slot = 2048u64;
        let writes: Vec<BatchWrite<'_>> = images
            .iter()
            .enumerate()
            .map(|(i, img)| (((i * 7919) % n) as u64 * slot, img.as_slice()))
            .collect();
        match write_uring(&file, &writes) {
            None => write_threaded(writes.len(), |i| file.write_all_at(writes[i].1, writes[i].0)).unwrap(),
            Some(r) => r.unwrap(),
        }
        for (offset, data) in &writes {
            let mut back = vec![0u8; data.len()];
            file.read_exact_at(&mut back, *offset).unwrap();
            assert_eq!(&back, data, "write at {offset}");
        }
    }

    #[test]
    fn a_failed_write_is_reported_by_its_index_after_the_others_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        // A read-only descriptor: every write fails with EBADF.
        let file = std::fs::File::open(&path).unwrap();
        let data = [1u8; 512];
        let writes: Vec<BatchWrite<'_>> = (0..5).map(|i| (i * 512, &data[..])).collect();
        match write_uring(&file, &writes) {
            None => {} // io_uring unavailable here: nothing to check.
            Some(r) => {
                let (index, e) = r.unwrap_err();
                assert_eq!(index, 0, "the first failure by position");
                assert_eq!(e.raw_os_error(), Some(libc::EBADF));
            }
        }
    }

    #[test]
    fn the_threaded_fallback_stops_starting_writes_after_an_error() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let started = AtomicUsize::new(0);
        let r = write_threaded(10_000, |i| {
            started.fetch_add(1, Ordering::Relaxed);
            if i == 3 {
                Err(i)
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err(3));
        assert!(started.load(Ordering::Relaxed) < 10_000);
    }
}
