//! `EmulatedFile`: real I/O whose completion time follows a device model.
//!
//! Lets the engine study an HDD or a given SSD on this machine's disk: each
//! read or write is submitted to a shared [`DeviceModel`] at its arrival
//! time, performed for real on the inner backend, and then the calling
//! thread sleeps until the model's completion time. The data path is real
//! (so crash and checksum behaviour are real); only the latency is modelled.
//! If the real I/O finishes after the modelled completion the emulation ran
//! late; [`EmulationStats`] counts such requests so a report can say when
//! this machine's disk was too slow to emulate the chosen device.
//!
//! Time: an [`EmulatedDevice`] captures a `std::time::Instant` at
//! construction and measures arrivals in microseconds since it. Files that
//! share one device (data and redo on one disk) share one origin and one
//! model; files on separate devices use separate [`EmulatedDevice`]s. Each
//! file may sit at its own `base_offset_bytes` on the device, so a model of
//! an HDD sees the seek distance between them.
//!
//! Invariants: arrivals are read from the clock while the model's lock is
//! held, so a model sees non-decreasing arrival times as its trait
//! requires; a call never returns before its modelled completion time;
//! `set_len`, `sync_data` and `close` are passed through unmodelled (the
//! device-model trait has no flush request).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_core::device::{DeviceModel, IoKind, IoRequest};
use flushwise_core::TimeUs;
use parking_lot::Mutex;

use super::{Result, StorageBackend};

/// A device model shared by every file on one emulated device.
pub type SharedDeviceModel = Arc<Mutex<Box<dyn DeviceModel>>>;

/// Counters of one emulated device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmulationStats {
    pub requests: u64,
    /// Requests whose real I/O finished after their modelled completion.
    pub late_requests: u64,
    /// Sum over late requests of how late they were.
    pub late_us_total: u64,
    /// Sum of time spent sleeping until modelled completions.
    pub waited_us_total: u64,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    late_requests: AtomicU64,
    late_us_total: AtomicU64,
    waited_us_total: AtomicU64,
}

/// One emulated device: a shared model and its time origin.
#[derive(Clone)]
pub struct EmulatedDevice {
    model: SharedDeviceModel,
    origin: Instant,
    counters: Arc<Counters>,
}

impl EmulatedDevice {
    /// A device over `model`; time zero is now.
    pub fn new(model: Box<dyn DeviceModel>) -> Self {
        Self::from_shared(Arc::new(Mutex::new(model)))
    }

    /// A device over an already shared model; time zero is now.
    pub fn from_shared(model: SharedDeviceModel) -> Self {
        Self {
            model,
            origin: Instant::now(),
            counters: Arc::default(),
        }
    }

    pub fn model(&self) -> &SharedDeviceModel {
        &self.model
    }

    /// Microseconds since this device's origin.
    pub fn now_us(&self) -> TimeUs {
        self.origin.elapsed().as_micros().try_into().unwrap_or(TimeUs::MAX)
    }

    pub fn describe(&self) -> String {
        self.model.lock().describe()
    }

    pub fn stats(&self) -> EmulationStats {
        let c = &self.counters;
        EmulationStats {
            requests: c.requests.load(Ordering::Relaxed),
            late_requests: c.late_requests.load(Ordering::Relaxed),
            late_us_total: c.late_us_total.load(Ordering::Relaxed),
            waited_us_total: c.waited_us_total.load(Ordering::Relaxed),
        }
    }

    /// Submits a request arriving now; returns its completion time.
    fn submit(&self, kind: IoKind, offset_bytes: u64, len: usize) -> TimeUs {
        let request = IoRequest {
            kind,
            offset_bytes,
            len_bytes: u32::try_from(len).unwrap_or(u32::MAX),
        };
        let mut model = self.model.lock();
        let arrival_us = self.now_us();
        let completion_us = model.submit(request, arrival_us);
        drop(model);
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        completion_us.max(arrival_us)
    }

    /// Sleeps until `completion_us`, or records that the real I/O was late.
    fn wait_until(&self, completion_us: TimeUs) {
        let now_us = self.now_us();
        if now_us > completion_us {
            self.counters.late_requests.fetch_add(1, Ordering::Relaxed);
            self.counters
                .late_us_total
                .fetch_add(now_us - completion_us, Ordering::Relaxed);
            return;
        }
        let wait_us = completion_us - now_us;
        std::thread::sleep(Duration::from_micros(wait_us));
        self.counters.waited_us_total.fetch_add(wait_us, Ordering::Relaxed);
    }
}

/// A backend whose reads and writes take the modelled device's time.
pub struct EmulatedFile<B> {
    inner: B,
    device: EmulatedDevice,
    base_offset_bytes: u64,
}

impl<B: StorageBackend> EmulatedFile<B> {
    /// Emulates `inner` as a file starting at `base_offset_bytes` of `device`.
    pub fn new(inner: B, device: EmulatedDevice, base_offset_bytes: u64) -> Self {
        Self {
            inner,
            device,
            base_offset_bytes,
        }
    }

    pub fn device(&self) -> &EmulatedDevice {
        &self.device
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    fn device_offset(&self, offset: u64) -> u64 {
        self.base_offset_bytes.saturating_add(offset)
    }
}

impl<B: StorageBackend> StorageBackend for EmulatedFile<B> {
    fn len(&self) -> Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let completion_us = self.device.submit(IoKind::Read, self.device_offset(offset), buf.len());
        let result = self.inner.read(offset, buf);
        self.device.wait_until(completion_us);
        result
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let completion_us = self
            .device
            .submit(IoKind::Write, self.device_offset(offset), data.len());
        let result = self.inner.write(offset, data);
        self.device.wait_until(completion_us);
        result
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> Result<()> {
        self.inner.sync_data()
    }

    fn close(&self) -> Result<()> {
        self.inner.close()
    }
}
