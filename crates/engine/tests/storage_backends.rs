//! Scenarios of the byte-level backends: direct and buffered files, the
//! O_DIRECT fallback message, and emulated device latency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flushwise_core::device::{DeviceModel, IoKind, IoRequest};
use flushwise_core::TimeUs;
use flushwise_engine::storage::{
    open_emulated, open_file, AlignedBuf, DirectFile, EmulatedDevice, IoMode, StorageBackend, StorageError,
};
use parking_lot::Mutex;

/// Requests a test model saw: kind and device offset.
type Seen = Arc<Mutex<Vec<(IoKind, u64)>>>;

/// Test-only device: every request takes exactly `service_us`, no queueing.
/// Records what it saw and asserts the trait's arrival-order contract.
struct ConstantLatency {
    service_us: TimeUs,
    last_arrival_us: TimeUs,
    seen: Seen,
    completions: Vec<TimeUs>,
}

impl ConstantLatency {
    fn boxed(service_us: TimeUs) -> (Box<dyn DeviceModel>, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let model = ConstantLatency {
            service_us,
            last_arrival_us: 0,
            seen: seen.clone(),
            completions: Vec::new(),
        };
        (Box::new(model), seen)
    }
}

impl DeviceModel for ConstantLatency {
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs {
        assert!(arrival_us >= self.last_arrival_us, "arrivals must not go backwards");
        self.last_arrival_us = arrival_us;
        self.seen.lock().push((request.kind, request.offset_bytes));
        let completion = arrival_us + self.service_us;
        self.completions.push(completion);
        completion
    }

    fn outstanding(&self, now_us: TimeUs) -> usize {
        self.completions.iter().filter(|c| **c > now_us).count()
    }

    fn describe(&self) -> String {
        format!("constant({} us)", self.service_us)
    }

    fn check_invariants(&self) {}
}

#[test]
fn emulated_backend_delays_to_model_completion() {
    let dir = tempfile::tempdir().unwrap();
    let (model, seen) = ConstantLatency::boxed(2_000);
    let device = EmulatedDevice::new(model);
    let file = open_emulated(dir.path().join("t1.ibd"), IoMode::Buffered, true, device.clone(), 0).unwrap();
    file.set_len(8 * 4096).unwrap();

    let buf = AlignedBuf::zeroed(4096);
    let started = Instant::now();
    for i in 0..5u64 {
        file.write(i * 4096, &buf).unwrap();
    }
    let mut back = AlignedBuf::zeroed(4096);
    file.read(0, &mut back).unwrap();
    let elapsed = started.elapsed();

    // Six requests of exactly 2 ms each, issued one after another.
    assert!(elapsed >= Duration::from_millis(12), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(500), "{elapsed:?}");
    let stats = device.stats();
    assert_eq!(stats.requests, 6);
    assert_eq!(seen.lock().len(), 6);
    assert_eq!(seen.lock()[5], (IoKind::Read, 0));
    assert!(stats.waited_us_total > 0);
    assert_eq!(device.describe(), "constant(2000 us)");
}

#[test]
fn files_sharing_an_emulated_device_share_its_model_and_clock() {
    let dir = tempfile::tempdir().unwrap();
    let (model, seen) = ConstantLatency::boxed(500);
    let device = EmulatedDevice::new(model);
    let data = open_emulated(dir.path().join("data"), IoMode::Buffered, true, device.clone(), 0).unwrap();
    let redo = open_emulated(dir.path().join("redo"), IoMode::Buffered, true, device.clone(), 1 << 30).unwrap();
    std::thread::scope(|s| {
        for file in [&data, &redo, &data, &redo] {
            s.spawn(move || {
                let buf = AlignedBuf::zeroed(4096);
                for i in 0..5 {
                    file.write(i * 4096, &buf).unwrap();
                }
            });
        }
    });
    // The model's arrival-order assertion held for 20 concurrent requests,
    // and redo's requests were placed at its base offset on the device.
    let seen = seen.lock();
    assert_eq!(seen.len(), 20);
    assert_eq!(seen.iter().filter(|(_, off)| *off >= 1 << 30).count(), 10);
}

#[test]
fn direct_io_unsupported_message_suggests_buffered() {
    // tmpfs refused O_DIRECT before Linux 6.6; newer kernels accept it.
    let dir = tempfile::Builder::new()
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let path = dir.path().join("t1.ibd");
    match DirectFile::open(&path, true) {
        Ok(f) => {
            // Accepted: it must then really work with aligned I/O.
            let buf = AlignedBuf::zeroed(4096);
            f.write(0, &buf).unwrap();
        }
        Err(e) => {
            assert!(matches!(e, StorageError::DirectIoUnsupported { .. }), "{e}");
            let msg = e.to_string();
            assert!(msg.contains("buffered") && msg.contains("t1.ibd"), "{msg}");
        }
    }
    // Whatever this machine's tmpfs does, the message a user would see says
    // what to do.
    let e = StorageError::DirectIoUnsupported {
        path: path.clone(),
        source: std::io::Error::from_raw_os_error(libc::EINVAL),
    };
    let msg = e.to_string();
    assert!(msg.contains("choose the buffered backend (--io buffered)"), "{msg}");
}

#[test]
fn direct_and_buffered_files_round_trip_and_report_short_reads() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [IoMode::Direct, IoMode::Buffered] {
        let path = dir.path().join(format!("f-{mode}"));
        let file = match open_file(&path, mode, true) {
            Ok(f) => f,
            Err(StorageError::DirectIoUnsupported { .. }) => continue,
            Err(e) => panic!("{e}"),
        };
        let mut data = AlignedBuf::zeroed(8192);
        data.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
        file.write(4096, &data).unwrap();
        file.sync_data().unwrap();
        assert_eq!(file.len().unwrap(), 12288);
        let mut back = AlignedBuf::zeroed(8192);
        file.read(4096, &mut back).unwrap();
        assert_eq!(back, data);
        let err = file.read(8192, &mut back).unwrap_err();
        assert!(matches!(err, StorageError::ShortRead { .. }), "{mode}: {err}");
        file.close().unwrap();
        let err = file.read(0, &mut back).unwrap_err();
        assert!(matches!(err, StorageError::Closed { .. }), "{mode}: {err}");
    }
}

#[test]
fn opening_a_missing_file_without_create_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.ibd");
    let err = open_file(&path, IoMode::Buffered, false).err().unwrap();
    assert!(err.to_string().contains("missing.ibd"), "{err}");
}
