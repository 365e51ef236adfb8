//! Device models: sans-IO time arithmetic for storage devices.
//!
//! A model is told "this request arrives at time t" and answers "it completes
//! at time c" (`c >= t`). It never sleeps and never reads a clock, so the
//! simulator uses it for virtual time and the engine's emulated backend uses
//! it to delay real I/O until the modelled completion time.
//!
//! Invariants, checked by each model's `check_invariants()`:
//! - completion times are never earlier than arrival times;
//! - for one queue (a channel, a disk), completions are in service order and
//!   the queue's busy-until time never moves backwards;
//! - a model is deterministic: the same request sequence gives the same
//!   completion times.

use crate::types::TimeUs;

/// Direction of a device request.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum IoKind {
    Read,
    Write,
}

/// One request as a device model sees it: a byte range of the device.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IoRequest {
    pub kind: IoKind,
    /// Byte offset on the device.
    pub offset_bytes: u64,
    /// Length of the transfer in bytes (a page, or a redo write).
    pub len_bytes: u32,
}

/// A storage device as time arithmetic.
pub trait DeviceModel: Send {
    /// Queue `request`, arriving at `arrival_us`, and return its completion
    /// time. Requests must be submitted in non-decreasing arrival order.
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs;

    /// Requests submitted whose completion time is later than `now_us`.
    fn outstanding(&self, now_us: TimeUs) -> usize;

    /// Short description for reports, e.g. "ssd(samsung-850-pro)".
    fn describe(&self) -> String;

    /// Panics if a model invariant is broken (used by tests and the simulator).
    fn check_invariants(&self);
}
