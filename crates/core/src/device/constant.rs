//! Constant-time disks: the disk subsystem of the DB2 page-cleaning study.
//!
//! # What it models
//! Paper 002 (Wang, Bunt, *Self-tuning Page Cleaning in DB2*), §5: "because
//! the track and sector information of disk pages is not available from the
//! trace, it is assumed that a disk has constant read and write time.
//! Unprocessed requests to a disk are queued and served in a first-in-first-out
//! order. When there are multiple disks in the simulator, different disks can
//! perform reads and writes simultaneously."
//!
//! So: `disk_count` independent disks, each a FIFO server. A request goes to
//! disk `(offset_bytes / page_size_bytes) % disk_count` (by its first byte)
//! and occupies it for `read_time_us` or `write_time_us`, whatever its
//! length: the paper's times are per page operation.
//!
//! # Invariants (checked by `check_invariants`)
//! - each disk's busy-until never moves backwards (completions on one disk
//!   are in submission order) and never exceeds the latest completion;
//! - every completion is at or after its arrival;
//! - the in-flight set holds only completions later than the latest arrival.
//!
//! # Where the constants come from
//! Paper 002, Table 3 ("Time Parameters in the Simulator"), disk operation
//! times in simulator units: `ReadTime 6000`, `WriteTime 6000`,
//! `AsynchronousWriteTime 6000`. The paper (§5, text under Table 3): "roughly
//! 40 million units of simulator time corresponds to 1 minute of real time
//! ... a disk operation on our system requires approximately 9 msec". One
//! unit is therefore 60 s / 40e6 = 1.5 us, and 6000 units = 9000 us. Both
//! write kinds take the same time, so one `write_time_us` serves both.
//! See [`ConstantConfig::db2_table3`] for the disk count and page size.

use super::{check_range, DeviceError, DeviceModel, InFlight, IoKind, IoRequest};
use crate::types::TimeUs;

/// Microseconds per simulator time unit of paper 002: 40 million units are
/// about one minute, so a unit is 60e6 us / 40e6 = 1.5 us. Kept as the
/// ratio 3/2 so the conversion is exact.
pub const DB2_SIM_UNIT_US_NUMERATOR: u64 = 3;
pub const DB2_SIM_UNIT_US_DENOMINATOR: u64 = 2;

/// Converts paper 002's simulator time units to microseconds (rounded up).
pub const fn db2_sim_units_to_us(units: u64) -> TimeUs {
    (units * DB2_SIM_UNIT_US_NUMERATOR).div_ceil(DB2_SIM_UNIT_US_DENOMINATOR)
}

/// Largest disk count a config may ask for (bounds memory).
pub const DISK_COUNT_MAX: u32 = 1 << 16;

/// Configuration of a [`ConstantModel`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstantConfig {
    /// Preset name, or any label; shown by `describe()`.
    pub name: String,
    pub disk_count: u32,
    /// Striping unit: consecutive pages go to consecutive disks.
    pub page_size_bytes: u32,
    pub read_time_us: TimeUs,
    pub write_time_us: TimeUs,
}

impl ConstantConfig {
    /// Paper 002's simulated disks.
    /// - `read_time_us = write_time_us = 9000`: Table 3's 6000 units at
    ///   1.5 us per unit (see the module doc).
    /// - `disk_count = 9`: the traced TPC-C database "is installed on 9
    ///   disks" (paper 002, §4); the paper does not say how many disks its
    ///   simulator used for each experiment.
    /// - `page_size_bytes = 16384`: our choice, the engine's page size, so
    ///   each page lives on one disk; the paper gives no page size.
    pub fn db2_table3() -> ConstantConfig {
        ConstantConfig {
            name: "db2-table3".to_string(),
            disk_count: 9,
            page_size_bytes: 16 * 1024,
            read_time_us: db2_sim_units_to_us(6000),
            write_time_us: db2_sim_units_to_us(6000),
        }
    }

    /// Paper 002 Figure 7's "faster disk": Table 3's disks five times
    /// faster (read and write 1,200 units, 1.8 ms), 9 disks.
    pub fn db2_table3_disk5x() -> ConstantConfig {
        ConstantConfig {
            name: "db2-table3-disk5x".to_string(),
            read_time_us: db2_sim_units_to_us(6000 / 5),
            write_time_us: db2_sim_units_to_us(6000 / 5),
            ..ConstantConfig::db2_table3()
        }
    }

    /// Paper 002 §8's "small system": "a 50-warehouse TPC-C database
    /// spanning over 7 disks" (Table 3's disk times; the paper measured a
    /// real DB2 7.1 there and gives no disk time).
    pub fn db2_small() -> ConstantConfig {
        ConstantConfig {
            name: "db2-small".to_string(),
            disk_count: 7,
            ..ConstantConfig::db2_table3()
        }
    }

    /// Paper 002 §8's "medium system": "a 300-warehouse TPC-C database
    /// spanning over 70 disks" (Table 3's disk times, as [`Self::db2_small`]).
    pub fn db2_medium() -> ConstantConfig {
        ConstantConfig {
            name: "db2-medium".to_string(),
            disk_count: 70,
            ..ConstantConfig::db2_table3()
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), DeviceError> {
        check_range("disk_count", self.disk_count.into(), 1, DISK_COUNT_MAX.into())?;
        check_range("page_size_bytes", self.page_size_bytes.into(), 1, 1 << 30)?;
        // A day per operation is already absurd; the bound keeps sums small.
        check_range("read_time_us", self.read_time_us, 0, 86_400_000_000)?;
        check_range("write_time_us", self.write_time_us, 0, 86_400_000_000)?;
        Ok(())
    }
}

/// Constant-time FIFO disks; see the module doc.
#[derive(Clone, Debug)]
pub struct ConstantModel {
    config: ConstantConfig,
    /// Per disk: when it finishes the last request queued on it.
    disk_busy_until_us: Vec<TimeUs>,
    in_flight: InFlight,
    last_arrival_us: TimeUs,
    latest_completion_us: TimeUs,
    submitted: u64,
}

impl ConstantModel {
    pub fn new(config: ConstantConfig) -> Result<ConstantModel, DeviceError> {
        config.validate()?;
        Ok(ConstantModel {
            disk_busy_until_us: vec![0; config.disk_count as usize],
            in_flight: InFlight::default(),
            last_arrival_us: 0,
            latest_completion_us: 0,
            submitted: 0,
            config,
        })
    }

    pub fn config(&self) -> &ConstantConfig {
        &self.config
    }

    /// The disk serving requests that start at `offset_bytes`.
    pub fn disk_of(&self, offset_bytes: u64) -> usize {
        let page_no = offset_bytes / u64::from(self.config.page_size_bytes);
        (page_no % u64::from(self.config.disk_count)) as usize
    }
}

impl DeviceModel for ConstantModel {
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs {
        let arrival_us = arrival_us.max(self.last_arrival_us);
        self.last_arrival_us = arrival_us;
        self.in_flight.prune(arrival_us);

        let service_us = match request.kind {
            IoKind::Read => self.config.read_time_us,
            IoKind::Write => self.config.write_time_us,
        };
        let disk = self.disk_of(request.offset_bytes);
        let start_us = arrival_us.max(self.disk_busy_until_us[disk]);
        let completion_us = start_us.saturating_add(service_us);
        self.disk_busy_until_us[disk] = completion_us;
        self.latest_completion_us = self.latest_completion_us.max(completion_us);
        self.submitted += 1;
        self.in_flight.push(completion_us);
        completion_us
    }

    fn outstanding(&self, now_us: TimeUs) -> usize {
        self.in_flight.count_after(now_us)
    }

    fn describe(&self) -> String {
        format!("constant({})", self.config.name)
    }

    fn check_invariants(&self) {
        assert_eq!(
            self.disk_busy_until_us.len(),
            self.config.disk_count as usize,
            "one busy-until per disk"
        );
        for (disk, busy_us) in self.disk_busy_until_us.iter().enumerate() {
            assert!(
                *busy_us <= self.latest_completion_us,
                "disk {disk} busy past the latest completion"
            );
        }
        assert!(
            self.in_flight.len() as u64 <= self.submitted,
            "more in flight than submitted"
        );
        self.in_flight.check_invariants();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::testing::{closed_loop, random_request, SplitMix64};

    const PAGE_BYTES: u64 = 16 * 1024;

    fn db2() -> ConstantModel {
        ConstantModel::new(ConstantConfig::db2_table3()).expect("preset is valid")
    }

    fn request(kind: IoKind, page_no: u64) -> IoRequest {
        IoRequest {
            kind,
            offset_bytes: page_no * PAGE_BYTES,
            len_bytes: PAGE_BYTES as u32,
        }
    }

    #[test]
    fn table3_units_convert_to_nine_milliseconds() {
        // 40 million units ~ 1 minute (paper 002, §5).
        assert_eq!(db2_sim_units_to_us(40_000_000), 60_000_000);
        assert_eq!(db2_sim_units_to_us(6000), 9000);
        let config = ConstantConfig::db2_table3();
        assert_eq!((config.read_time_us, config.write_time_us), (9000, 9000));
    }

    #[test]
    fn constant_model_is_fifo_per_disk() {
        let mut disks = db2();
        let disk_count = u64::from(disks.config().disk_count);
        // Three requests to disk 0 queue behind each other; one to disk 1
        // runs beside them.
        let first = disks.submit(request(IoKind::Read, 0), 100);
        let second = disks.submit(request(IoKind::Write, disk_count), 100);
        let other_disk = disks.submit(request(IoKind::Read, 1), 150);
        let third = disks.submit(request(IoKind::Read, 2 * disk_count), 200);
        assert_eq!(first, 9100);
        assert_eq!(second, 18_100);
        assert_eq!(other_disk, 9150);
        assert_eq!(third, 27_100);
        assert_eq!(disks.outstanding(200), 4);
        assert_eq!(disks.outstanding(18_100), 1);
        disks.check_invariants();
        // Once disk 0 is idle, a request is served at once.
        assert_eq!(disks.submit(request(IoKind::Read, 0), 30_000), 39_000);
        assert_eq!(disks.outstanding(30_000), 1, "earlier completions pruned");
    }

    #[test]
    fn constant_disks_scale_throughput_with_disk_count() {
        let mut rng = SplitMix64(9);
        let mut disks = db2();
        let result = closed_loop(&mut disks, 64, 20_000, || {
            random_request(&mut rng, IoKind::Read, PAGE_BYTES as u32, 1 << 36)
        });
        println!("db2-table3 random reads QD64: {:.0} IOPS", result.iops);
        // Nine disks at 9 ms each: at most 1000 IOPS.
        assert!((900.0..=1000.0).contains(&result.iops), "{result:?}");
        let mut one_disk = ConstantModel::new(ConstantConfig {
            disk_count: 1,
            ..ConstantConfig::db2_table3()
        })
        .expect("valid");
        let single = closed_loop(&mut one_disk, 64, 2000, || {
            random_request(&mut rng, IoKind::Read, PAGE_BYTES as u32, 1 << 36)
        });
        assert!((single.iops - 1e6 / 9000.0).abs() < 1.0, "{single:?}");
    }
}
