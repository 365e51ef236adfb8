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

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), DeviceError> {
        check_range(
            "disk_count",
            self.disk_count.into(),
            1,
            DISK_COUNT_MAX.into(),
        )?;
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
