//! CPU cores as a FIFO multi-server queue.
//!
//! Agents spend CPU per page fix, per unfix and per transaction (Wang &
//! Bunt's simulator charges fixed time units per buffer operation, Table 3).
//! With `cores` servers, a burst of CPU work starts when the earliest core is
//! free; more runnable agents than cores queue. The paper's machine (Lee et
//! al. §5.1, Intel Core i7-2600K) has 4 cores / 8 hardware threads.
//!
//! Invariant: each core's busy-until time never decreases.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flushwise_core::TimeUs;

pub struct CpuCores {
    free_at: BinaryHeap<Reverse<TimeUs>>,
    busy_us: u64,
}

impl CpuCores {
    pub fn new(cores: u32) -> Self {
        Self {
            free_at: (0..cores.max(1)).map(|_| Reverse(0)).collect(),
            busy_us: 0,
        }
    }

    /// Runs `work_us` of CPU for a burst ready at `ready_us`; returns its end.
    pub fn run(&mut self, ready_us: TimeUs, work_us: TimeUs) -> TimeUs {
        let Reverse(free) = self.free_at.pop().unwrap_or(Reverse(0));
        let start = free.max(ready_us);
        let end = start + work_us;
        self.free_at.push(Reverse(end));
        self.busy_us += work_us;
        end
    }

    /// Total CPU time consumed.
    pub fn busy_us(&self) -> u64 {
        self.busy_us
    }
}
