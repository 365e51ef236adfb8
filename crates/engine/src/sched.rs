//! The calling thread's scheduler accounting, read from Linux's
//! `/proc/thread-self/schedstat`: nanoseconds spent on a core and
//! nanoseconds spent runnable but waiting for one (`run_delay`).
//!
//! What it is for: a user thread's page read (`pread` on O_DIRECT) sleeps
//! while the device works; when the device answers, the thread becomes
//! runnable and may wait for a core before it runs again (2 cores, 16
//! user threads). The difference of `run_delay` across the read is that
//! wait, the difference of `on_cpu` the read's own CPU (syscall and
//! checksum); the rest of the read's wall time is the device's (issue #18:
//! the simulator's read latency is the device model's alone).
//!
//! Invariants: the file is opened once per thread and kept in a
//! thread-local, so two samples of one thread always name that thread
//! (`/proc/thread-self` resolves at open). Where the file cannot be opened
//! or parsed (not Linux, a kernel without `sched_info`), every call
//! answers `None` and callers record nothing; nothing here can fail a read.

use std::cell::RefCell;
use std::fs::File;

/// One reading of the calling thread's counters, ns since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadSchedNs {
    /// Time on a core (`se.sum_exec_runtime`).
    pub on_cpu_ns: u64,
    /// Time runnable and waiting for a core (`sched_info.run_delay`).
    pub run_delay_ns: u64,
}

impl ThreadSchedNs {
    /// `self - earlier`, saturating (both of one thread, so never negative).
    pub fn since(&self, earlier: &ThreadSchedNs) -> ThreadSchedNs {
        ThreadSchedNs {
            on_cpu_ns: self.on_cpu_ns.saturating_sub(earlier.on_cpu_ns),
            run_delay_ns: self.run_delay_ns.saturating_sub(earlier.run_delay_ns),
        }
    }

    /// `self + other`: two spans' counters together (of one thread or of
    /// several), saturating.
    pub fn plus(&self, other: &ThreadSchedNs) -> ThreadSchedNs {
        ThreadSchedNs {
            on_cpu_ns: self.on_cpu_ns.saturating_add(other.on_cpu_ns),
            run_delay_ns: self.run_delay_ns.saturating_add(other.run_delay_ns),
        }
    }
}

thread_local! {
    /// `None` until first use; then the open file, or `None` inside if it
    /// could not be opened (not tried again).
    static SCHEDSTAT: RefCell<Option<Option<File>>> = const { RefCell::new(None) };
}

/// The calling thread's counters now, or `None` where the kernel does not
/// provide them. Costs one `pread` of a small proc file (a few µs).
pub fn thread_sched_ns() -> Option<ThreadSchedNs> {
    SCHEDSTAT.with(|cell| {
        let mut slot = cell.borrow_mut();
        let file = slot.get_or_insert_with(|| File::open("/proc/thread-self/schedstat").ok());
        read_from(file.as_ref()?)
    })
}

#[cfg(unix)]
fn read_from(file: &File) -> Option<ThreadSchedNs> {
    use std::os::unix::fs::FileExt;
    // Three decimal u64s and two spaces: at most 62 bytes.
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    parse_schedstat(std::str::from_utf8(&buf[..n]).ok()?)
}

#[cfg(not(unix))]
fn read_from(_file: &File) -> Option<ThreadSchedNs> {
    None
}

/// Parses `"<on_cpu_ns> <run_delay_ns> <timeslices>\n"`.
fn parse_schedstat(text: &str) -> Option<ThreadSchedNs> {
    let mut fields = text.split_ascii_whitespace();
    let on_cpu_ns = fields.next()?.parse().ok()?;
    let run_delay_ns = fields.next()?.parse().ok()?;
    Some(ThreadSchedNs {
        on_cpu_ns,
        run_delay_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernels_three_fields() {
        assert_eq!(
            parse_schedstat("342753218 501607 83\n"),
            Some(ThreadSchedNs {
                on_cpu_ns: 342_753_218,
                run_delay_ns: 501_607
            })
        );
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("12 x 3"), None);
    }

    #[test]
    fn a_busy_thread_sees_its_own_cpu_time_grow() {
        let Some(before) = thread_sched_ns() else {
            // A kernel without sched_info: nothing to check here.
            return;
        };
        let mut x = 0u64;
        let mut after = before;
        // Spin until the counter moves (it advances at least every tick).
        for i in 0..2_000_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            if i % 100_000 == 0 {
                after = thread_sched_ns().expect("the file read once reads again");
                if after.on_cpu_ns > before.on_cpu_ns {
                    break;
                }
            }
        }
        std::hint::black_box(x);
        assert!(after.on_cpu_ns > before.on_cpu_ns, "{before:?} -> {after:?}");
        assert!(after.run_delay_ns >= before.run_delay_ns);
    }

    #[test]
    fn each_thread_reads_its_own_counters() {
        let Some(before) = thread_sched_ns() else { return };
        // Another thread burns 50 ms of its own CPU while this one waits
        // in `join`: this thread's counter must not see that time.
        let burned = std::thread::spawn(|| {
            let start = thread_sched_ns().expect("same kernel");
            let mut now = start;
            let mut x = 1u64;
            while now.since(&start).on_cpu_ns < 50_000_000 {
                for _ in 0..10_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                now = thread_sched_ns().expect("same kernel");
            }
            std::hint::black_box(x);
            now.since(&start)
        })
        .join()
        .expect("the child thread does not panic");
        let own = thread_sched_ns().expect("same kernel").since(&before);
        assert!(burned.on_cpu_ns >= 50_000_000);
        assert!(own.on_cpu_ns < 25_000_000, "this thread {own:?}, the other {burned:?}");
    }
}
