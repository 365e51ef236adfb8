//! Hard disk model: one actuator, first-in first-out, seek + rotation +
//! transfer computed from a simple geometry and the virtual clock.
//!
//! # What it models
//! Geometry: every track holds `bytes_per_track` bytes (no zones); a
//! cylinder is `surfaces` tracks; `cylinder_count = ceil(capacity_bytes /
//! (bytes_per_track * surfaces))`. Byte `p` (taken modulo the capacity) lies
//! on track `t = p / bytes_per_track`, cylinder `t / surfaces`, surface
//! `t % surfaces`, at angle `(p % bytes_per_track) / bytes_per_track` of a
//! revolution.
//!
//! A request waits for every earlier one (one actuator, FIFO), then costs:
//! 1. **Seek** over `d` cylinders, with Lee's curve as in DiskSim's
//!    `mech_g1` "Lee" seek type:
//!    `seek(0) = 0`, `seek(d) = single + a * sqrt(d - 1) + b * (d - 1)`,
//!    where `a` and `b` are solved so that the curve passes through
//!    `single_cylinder_seek_ms` at `d = 1`, `full_strobe_seek_ms` at the
//!    full stroke `d = D = cylinder_count - 1`, and its mean over uniformly
//!    random start and end cylinders is `average_seek_ms` (with `X = D - 1`,
//!    `E[d - 1] = X / 3` and `E[sqrt(d - 1)] = 8/15 sqrt(X)`):
//!    `a = (-10 single + 15 avg - 5 full) / (3 sqrt(X))`,
//!    `b = (7 single - 15 avg + 8 full) / (3 X)`.
//!    Config validation requires `a, b >= 0`, so the curve rises with
//!    distance: a square-root (acceleration-bound) start, linear
//!    (coast-bound) tail. Changing surface on the same cylinder costs
//!    `head_switch_ms`; a write adds `write_settle_ms` after positioning.
//! 2. **Rotation**: the platter is at angle 0 at time 0 and turns at `rpm`,
//!    so at time `t` it is at `(t / rotation_period) mod 1`. When the seek
//!    ends, the head waits until the target sector's angle comes round
//!    (0 to 1 revolution). Computed in integer nanoseconds x rpm, so it is
//!    exact and deterministic.
//! 3. **Transfer** at the media rate `bytes_per_track` per revolution, plus
//!    `head_switch_ms` for each track boundary crossed (track skew is
//!    assumed to hide the rotation after a switch).
//!
//! A request that starts exactly where the previous one ended, within 1 us
//! of its end (completions are rounded up to whole microseconds), streams
//! on: no seek, no rotational wait (only a head switch or single-cylinder
//! seek if it starts a new track). That is sequential access at media rate.
//!
//! Not modelled: zones (outer tracks faster), the drive's cache (read-ahead
//! and write-back), command reordering (NCQ), host interface time (a 16 KiB
//! transfer over SATA takes 27 us, small next to a positioning delay).
//!
//! # Invariants (checked by `check_invariants`)
//! - completions are handed out in submission order (FIFO): each is at or
//!   after the previous one, so the actuator's busy-until never moves back;
//! - the head's cylinder and surface are inside the geometry;
//! - the in-flight set holds only completions later than the latest arrival.
//!
//! # Parameter names
//! DiskSim's (`diskmodel/modules/mech_g1.modspec`, `disk.modspec`): `rpm`,
//! `single_cylinder_seek_ms` ("Single-cylinder seek time"),
//! `average_seek_ms` ("Average seek time"), `full_strobe_seek_ms`
//! ("Full-strobe seek time", DiskSim's spelling kept), `write_settle_ms`,
//! `head_switch_ms`, `surfaces`. DiskSim derives the track size from its
//! layout model; we give `bytes_per_track` directly.
//!
//! # Where the constants come from
//! See [`HddConfig::wd_1tb_7200`]; approximations, not measurements.

use super::{
    check_range, config_us_to_ns, invalid, ns_to_us_ceil, us_to_ns, DeviceError, DeviceModel, InFlight, IoKind,
    IoRequest,
};
use crate::types::TimeUs;

/// Nanoseconds in a minute: one revolution is `MINUTE_NS / rpm` ns, so
/// angles kept in "ns x rpm" units are exact integers.
const MINUTE_NS: u128 = 60_000_000_000;

/// Slack within which a request continuing the previous transfer streams on.
const STREAMING_SLACK_NS: u64 = 1000;

/// Configuration of an [`HddModel`]; names follow DiskSim.
#[derive(Clone, Debug, PartialEq)]
pub struct HddConfig {
    /// Preset name, or any label; shown by `describe()`.
    pub name: String,
    pub capacity_bytes: u64,
    /// Recording surfaces (heads): tracks per cylinder.
    pub surfaces: u32,
    /// Bytes on every track (one zone for the whole disk).
    pub bytes_per_track: u32,
    pub rpm: u32,
    pub single_cylinder_seek_ms: f64,
    pub average_seek_ms: f64,
    pub full_strobe_seek_ms: f64,
    /// Extra settling before a write once the head is on track.
    pub write_settle_ms: f64,
    /// Switching to another surface of the same cylinder.
    pub head_switch_ms: f64,
}

impl HddConfig {
    /// A 7200 rpm WD 1 TB desktop disk (WD10EZEX class) as in paper 000
    /// (§5.1: "Western Digital 1TB HDDs"). Approximations:
    /// - `rpm = 7200`: 8.33 ms per revolution, 4.17 ms mean rotational wait.
    /// - `capacity_bytes = 10^12`, `surfaces = 2`: the WD10EZEX is a single
    ///   1 TB platter, two recording surfaces.
    /// - `bytes_per_track = 1_368_064` (334 x 4 KiB): a media rate of
    ///   1_368_064 B / 8.333 ms = 164 MB/s within a track; with a head switch
    ///   (0.8 ms) per track, sequential transfer sustains
    ///   1_368_064 B / 9.133 ms = 149.8 MB/s, the WD10EZEX's quoted
    ///   sustained rate (~150 MB/s). Real tracks vary from ~200 MB/s (outer)
    ///   to ~100 MB/s (inner); one zone stands for all. That makes 365,480
    ///   cylinders.
    /// - `average_seek_ms = 8.9`: the usual read seek of 7200 rpm desktop
    ///   drives (WD does not publish one for this model; 8.5-9 ms class).
    /// - `single_cylinder_seek_ms = 1.0`, `full_strobe_seek_ms = 18.0`:
    ///   typical desktop figures; within the range where Lee's curve rises.
    /// - `write_settle_ms = 1.0`: desktop drives quote write seeks ~1 ms
    ///   above read seeks.
    /// - `head_switch_ms = 0.8`: typical of the class (assumed).
    ///
    /// A random 16 KiB read over the whole disk costs about
    /// 8.9 + 4.17 + 0.10 = 13.2 ms: ~76 IOPS (FIFO, so at any queue depth);
    /// a random write adds the 1 ms settle: ~70 IOPS.
    pub fn wd_1tb_7200() -> HddConfig {
        HddConfig {
            name: "wd-1tb-7200".to_string(),
            capacity_bytes: 1_000_000_000_000,
            surfaces: 2,
            bytes_per_track: 334 * 4096,
            rpm: 7200,
            single_cylinder_seek_ms: 1.0,
            average_seek_ms: 8.9,
            full_strobe_seek_ms: 18.0,
            write_settle_ms: 1.0,
            head_switch_ms: 0.8,
        }
    }

    /// Cylinders implied by capacity, track size and surfaces.
    pub fn cylinder_count(&self) -> u64 {
        let cylinder_bytes = u64::from(self.bytes_per_track) * u64::from(self.surfaces);
        if cylinder_bytes == 0 {
            return 0;
        }
        self.capacity_bytes.div_ceil(cylinder_bytes)
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), DeviceError> {
        self.validated().map(|_| ())
    }

    fn validated(&self) -> Result<Mechanics, DeviceError> {
        check_range("surfaces", self.surfaces.into(), 1, 256)?;
        check_range("bytes_per_track", self.bytes_per_track.into(), 512, 1 << 30)?;
        check_range("rpm", self.rpm.into(), 1, 1_000_000)?;
        let min_capacity_bytes = 3 * u64::from(self.bytes_per_track) * u64::from(self.surfaces);
        if self.capacity_bytes < min_capacity_bytes {
            return Err(invalid(
                "capacity_bytes",
                format!(
                    "must give at least 3 cylinders ({min_capacity_bytes} bytes), got {}",
                    self.capacity_bytes
                ),
            ));
        }
        let ms = |field, value_ms: f64| config_us_to_ns(field, value_ms * 1000.0);
        let single_ns = ms("single_cylinder_seek_ms", self.single_cylinder_seek_ms)?;
        let average_ns = ms("average_seek_ms", self.average_seek_ms)?;
        let full_ns = ms("full_strobe_seek_ms", self.full_strobe_seek_ms)?;
        let write_settle_ns = ms("write_settle_ms", self.write_settle_ms)?;
        let head_switch_ns = ms("head_switch_ms", self.head_switch_ms)?;
        if !(single_ns <= average_ns && average_ns <= full_ns) {
            return Err(invalid(
                "average_seek_ms",
                "must lie between single_cylinder_seek_ms and full_strobe_seek_ms",
            ));
        }
        let (single, average, full) = (single_ns as f64, average_ns as f64, full_ns as f64);
        let cylinders = self.cylinder_count();
        let x = (cylinders - 2) as f64;
        let a_numerator = -10.0 * single + 15.0 * average - 5.0 * full;
        let b_numerator = 7.0 * single - 15.0 * average + 8.0 * full;
        if a_numerator < 0.0 {
            return Err(invalid(
                "average_seek_ms",
                "is too low for a rising Lee seek curve: need 15 x average >= 10 x single_cylinder + 5 x full_strobe",
            ));
        }
        if b_numerator < 0.0 {
            return Err(invalid(
                "average_seek_ms",
                "is too high for a rising Lee seek curve: need 15 x average <= 7 x single_cylinder + 8 x full_strobe",
            ));
        }
        Ok(Mechanics {
            cylinder_count: cylinders,
            single_cylinder_seek_ns: single_ns,
            seek_sqrt_coeff_ns: a_numerator / (3.0 * x.sqrt()),
            seek_linear_coeff_ns: b_numerator / (3.0 * x),
            write_settle_ns,
            head_switch_ns,
        })
    }
}

/// Derived geometry and seek-curve coefficients.
#[derive(Clone, Copy, Debug)]
struct Mechanics {
    cylinder_count: u64,
    single_cylinder_seek_ns: u64,
    /// `a` of the Lee curve, per sqrt(cylinder).
    seek_sqrt_coeff_ns: f64,
    /// `b` of the Lee curve, per cylinder.
    seek_linear_coeff_ns: f64,
    write_settle_ns: u64,
    head_switch_ns: u64,
}

/// Where a byte lives on the platters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Location {
    cylinder: u64,
    surface: u64,
    offset_in_track_bytes: u64,
}

/// A hard disk as time arithmetic; see the module doc.
#[derive(Clone, Debug)]
pub struct HddModel {
    config: HddConfig,
    mechanics: Mechanics,
    /// When the actuator finishes the last request queued.
    busy_until_ns: u64,
    head_cylinder: u64,
    head_surface: u64,
    /// Disk byte position just after the last transfer, if any.
    last_end_position_bytes: Option<u64>,
    in_flight: InFlight,
    last_arrival_us: TimeUs,
    last_completion_us: TimeUs,
    submitted: u64,
}

impl HddModel {
    pub fn new(config: HddConfig) -> Result<HddModel, DeviceError> {
        let mechanics = config.validated()?;
        Ok(HddModel {
            config,
            mechanics,
            busy_until_ns: 0,
            head_cylinder: 0,
            head_surface: 0,
            last_end_position_bytes: None,
            in_flight: InFlight::default(),
            last_arrival_us: 0,
            last_completion_us: 0,
            submitted: 0,
        })
    }

    pub fn config(&self) -> &HddConfig {
        &self.config
    }

    pub fn cylinder_count(&self) -> u64 {
        self.mechanics.cylinder_count
    }

    /// Duration of one revolution in nanoseconds (rounded down).
    pub fn rotation_period_ns(&self) -> u64 {
        (MINUTE_NS / u128::from(self.config.rpm)) as u64
    }

    /// Seek time over `distance_cylinders` (Lee's curve; 0 for 0).
    pub fn seek_time_ns(&self, distance_cylinders: u64) -> u64 {
        if distance_cylinders == 0 {
            return 0;
        }
        let m = &self.mechanics;
        let beyond_one = distance_cylinders.min(m.cylinder_count - 1) as f64 - 1.0;
        let curve_ns = m.seek_sqrt_coeff_ns * beyond_one.sqrt() + m.seek_linear_coeff_ns * beyond_one;
        m.single_cylinder_seek_ns + curve_ns.round() as u64
    }

    fn locate(&self, position_bytes: u64) -> Location {
        let track_bytes = u64::from(self.config.bytes_per_track);
        let surfaces = u64::from(self.config.surfaces);
        let track = position_bytes / track_bytes;
        Location {
            cylinder: track / surfaces,
            surface: track % surfaces,
            offset_in_track_bytes: position_bytes % track_bytes,
        }
    }

    /// Nanoseconds from `ready_ns` until the byte at `offset_in_track_bytes`
    /// passes under the head.
    fn rotational_wait_ns(&self, ready_ns: u64, offset_in_track_bytes: u64) -> u64 {
        let rpm = u128::from(self.config.rpm);
        let platter_angle = (u128::from(ready_ns) * rpm) % MINUTE_NS;
        let target_angle = u128::from(offset_in_track_bytes) * MINUTE_NS / u128::from(self.config.bytes_per_track);
        let wait_angle = (target_angle + MINUTE_NS - platter_angle) % MINUTE_NS;
        wait_angle.div_ceil(rpm) as u64
    }

    /// Media time of `len_bytes` starting at `offset_in_track_bytes`,
    /// including a head switch per track boundary crossed.
    fn transfer_ns(&self, offset_in_track_bytes: u64, len_bytes: u64) -> u64 {
        let track_bytes = u64::from(self.config.bytes_per_track);
        let media = (u128::from(len_bytes) * MINUTE_NS).div_ceil(u128::from(track_bytes) * u128::from(self.config.rpm));
        let boundaries = (offset_in_track_bytes + len_bytes - 1) / track_bytes;
        let media_ns = u64::try_from(media).unwrap_or(u64::MAX);
        media_ns.saturating_add(boundaries.saturating_mul(self.mechanics.head_switch_ns))
    }

    /// Time to move the head from where it is to `target` (seek or head
    /// switch), before any rotational wait.
    fn positioning_ns(&self, target: Location) -> u64 {
        let distance = self.head_cylinder.abs_diff(target.cylinder);
        if distance > 0 {
            self.seek_time_ns(distance)
        } else if target.surface != self.head_surface {
            self.mechanics.head_switch_ns
        } else {
            0
        }
    }
}

impl DeviceModel for HddModel {
    fn submit(&mut self, request: IoRequest, arrival_us: TimeUs) -> TimeUs {
        let arrival_us = arrival_us.max(self.last_arrival_us);
        self.last_arrival_us = arrival_us;
        self.in_flight.prune(arrival_us);

        let capacity = self.config.capacity_bytes;
        let position = request.offset_bytes % capacity;
        let len_bytes = u64::from(request.len_bytes.max(1));
        let target = self.locate(position);
        let start_ns = us_to_ns(arrival_us).max(self.busy_until_ns);

        let streams_on =
            self.last_end_position_bytes == Some(position) && start_ns - self.busy_until_ns <= STREAMING_SLACK_NS;
        let media_start_ns = if streams_on {
            // Continuing the previous transfer: the head is already there,
            // unless this request starts a new track.
            start_ns.saturating_add(self.positioning_ns(target))
        } else {
            let mut ready_ns = start_ns.saturating_add(self.positioning_ns(target));
            if request.kind == IoKind::Write {
                ready_ns = ready_ns.saturating_add(self.mechanics.write_settle_ns);
            }
            ready_ns.saturating_add(self.rotational_wait_ns(ready_ns, target.offset_in_track_bytes))
        };
        let completion_ns = media_start_ns.saturating_add(self.transfer_ns(target.offset_in_track_bytes, len_bytes));

        let last_byte = self.locate(position.saturating_add(len_bytes - 1) % capacity);
        self.head_cylinder = last_byte.cylinder;
        self.head_surface = last_byte.surface;
        self.last_end_position_bytes = Some(position.saturating_add(len_bytes) % capacity);
        self.busy_until_ns = completion_ns;
        self.submitted += 1;

        let completion_us = ns_to_us_ceil(completion_ns);
        assert!(completion_us >= arrival_us, "hdd completion precedes arrival");
        assert!(
            completion_us >= self.last_completion_us,
            "hdd completions out of FIFO order"
        );
        self.last_completion_us = completion_us;
        self.in_flight.push(completion_us);
        completion_us
    }

    fn outstanding(&self, now_us: TimeUs) -> usize {
        self.in_flight.count_after(now_us)
    }

    fn describe(&self) -> String {
        format!("hdd({})", self.config.name)
    }

    fn check_invariants(&self) {
        assert!(
            self.head_cylinder < self.mechanics.cylinder_count,
            "head on cylinder {} of {}",
            self.head_cylinder,
            self.mechanics.cylinder_count
        );
        assert!(
            self.head_surface < u64::from(self.config.surfaces),
            "head on surface {} of {}",
            self.head_surface,
            self.config.surfaces
        );
        assert_eq!(
            ns_to_us_ceil(self.busy_until_ns),
            self.last_completion_us,
            "actuator busy-until is the last completion"
        );
        assert!(
            self.last_completion_us >= self.last_arrival_us || self.submitted == 0,
            "last completion before last arrival"
        );
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
    use crate::types::SECOND_US;

    const PAGE_BYTES: u32 = 16 * 1024;

    fn wd() -> HddModel {
        HddModel::new(HddConfig::wd_1tb_7200()).expect("preset is valid")
    }

    fn read_at(offset_bytes: u64) -> IoRequest {
        IoRequest {
            kind: IoKind::Read,
            offset_bytes,
            len_bytes: PAGE_BYTES,
        }
    }

    #[test]
    fn hdd_seek_curve_passes_through_configured_points() {
        let disk = wd();
        let config = disk.config().clone();
        let full_stroke = disk.cylinder_count() - 1;
        let ms = |ns: u64| ns as f64 / 1e6;
        assert_eq!(disk.seek_time_ns(0), 0);
        assert!((ms(disk.seek_time_ns(1)) - config.single_cylinder_seek_ms).abs() < 1e-6);
        assert!((ms(disk.seek_time_ns(full_stroke)) - config.full_strobe_seek_ms).abs() < 1e-3);
        // Mean over uniformly random start and end cylinders.
        let mut rng = SplitMix64(3);
        let samples = 200_000;
        let total_ns: u64 = (0..samples)
            .map(|_| {
                let from = rng.below(disk.cylinder_count());
                let to = rng.below(disk.cylinder_count());
                disk.seek_time_ns(from.abs_diff(to))
            })
            .sum();
        let mean_ms = ms(total_ns) / samples as f64;
        assert!(
            (mean_ms - config.average_seek_ms).abs() < 0.05,
            "mean seek {mean_ms:.3} ms"
        );
    }

    #[test]
    fn hdd_longer_seeks_take_longer() {
        let disk = wd();
        let mut previous_ns = 0;
        let mut distance = 1;
        while distance < disk.cylinder_count() {
            let seek_ns = disk.seek_time_ns(distance);
            assert!(seek_ns > previous_ns, "seek({distance}) = {seek_ns} ns");
            previous_ns = seek_ns;
            distance *= 2;
        }
        // Through submit: requests alternating between cylinders far apart
        // take longer on average than alternating between near ones (the
        // rotational wait averages out over many requests).
        let cylinder_bytes = u64::from(disk.config().bytes_per_track) * 2;
        let mean_latency_us = |distance_cylinders: u64| {
            let mut disk = wd();
            let mut rng = SplitMix64(11);
            let mut now_us = 0;
            let mut total_us = 0;
            for i in 0..2000u64 {
                let base = if i % 2 == 0 {
                    0
                } else {
                    distance_cylinders * cylinder_bytes
                };
                let in_cylinder = rng.below(cylinder_bytes / u64::from(PAGE_BYTES)) * u64::from(PAGE_BYTES);
                let done_us = disk.submit(read_at(base + in_cylinder), now_us);
                total_us += done_us - now_us;
                now_us = done_us;
            }
            total_us as f64 / 2000.0
        };
        let near = mean_latency_us(10);
        let middle = mean_latency_us(10_000);
        let far = mean_latency_us(300_000);
        assert!(near < middle && middle < far, "{near:.0} {middle:.0} {far:.0} us");
    }

    #[test]
    fn hdd_sequential_reads_avoid_seek_and_rotation() {
        let mut disk = wd();
        let start_bytes = 123 * u64::from(disk.config().bytes_per_track);
        let first_us = disk.submit(read_at(start_bytes), 0);
        let mut now_us = first_us;
        let count = 1000u64;
        for i in 1..=count {
            now_us = disk.submit(read_at(start_bytes + i * u64::from(PAGE_BYTES)), now_us);
        }
        let per_read_us = (now_us - first_us) as f64 / count as f64;
        // 16 KiB at 164 MB/s is 100 us; a head switch every 83.5 reads
        // adds ~10 us on average: ~150 MB/s sustained.
        assert!((100.0..=115.0).contains(&per_read_us), "{per_read_us:.1} us per read");
        let media_mb_per_s = (count * u64::from(PAGE_BYTES)) as f64 / (now_us - first_us) as f64;
        println!("wd-1tb-7200 sequential 16 KiB reads: {per_read_us:.1} us each, {media_mb_per_s:.0} MB/s");
        disk.check_invariants();
    }

    #[test]
    fn hdd_random_iops_near_preset() {
        let mut rng = SplitMix64(5);
        let capacity = HddConfig::wd_1tb_7200().capacity_bytes;
        for queue_depth in [1, 32] {
            let mut disk = wd();
            let result = closed_loop(&mut disk, queue_depth, 5000, || {
                random_request(&mut rng, IoKind::Read, PAGE_BYTES, capacity)
            });
            println!(
                "wd-1tb-7200 random 16 KiB reads QD{queue_depth}: {:.1} IOPS, {:.1} ms mean",
                result.iops,
                result.mean_latency_us / 1000.0
            );
            // FIFO: a deeper queue does not raise throughput.
            assert!((70.0..=85.0).contains(&result.iops), "{result:?}");
        }
        // A database file on a tenth of the disk (short-stroking): shorter
        // seeks, more IOPS.
        let mut disk = wd();
        let short = closed_loop(&mut disk, 1, 5000, || {
            random_request(&mut rng, IoKind::Read, PAGE_BYTES, capacity / 10)
        });
        println!("wd-1tb-7200 random 16 KiB reads over 100 GB: {:.1} IOPS", short.iops);
        assert!((110.0..=145.0).contains(&short.iops), "{short:?}");
        let mut disk = wd();
        let writes = closed_loop(&mut disk, 1, 5000, || {
            random_request(&mut rng, IoKind::Write, PAGE_BYTES, capacity)
        });
        println!("wd-1tb-7200 random 16 KiB writes QD1: {:.1} IOPS", writes.iops);
        assert!((65.0..=80.0).contains(&writes.iops), "{writes:?}");
    }

    #[test]
    fn hdd_rotational_wait_follows_platter_angle() {
        let disk = wd();
        let period_ns = disk.rotation_period_ns();
        let half_track = u64::from(disk.config().bytes_per_track) / 2;
        // At time 0 the platter is at angle 0: sector 0 is under the head,
        // the sector half a track away is half a revolution off.
        assert_eq!(disk.rotational_wait_ns(0, 0), 0);
        assert!(disk.rotational_wait_ns(0, half_track).abs_diff(period_ns / 2) <= 1);
        // A quarter revolution later, sector 0 is three quarters away.
        assert!(disk.rotational_wait_ns(period_ns / 4, 0).abs_diff(3 * period_ns / 4) <= 3);
        // One whole revolution later the picture repeats (60e9 / 7200 is
        // not a whole number of ns, so allow the rounding).
        assert!(disk.rotational_wait_ns(period_ns, half_track).abs_diff(period_ns / 2) <= 2);
    }

    #[test]
    fn hdd_is_fifo_even_when_a_later_request_is_closer() {
        let mut disk = wd();
        let far = disk.config().capacity_bytes - u64::from(PAGE_BYTES);
        let first_us = disk.submit(read_at(far), 0);
        let second_us = disk.submit(read_at(0), 0);
        assert!(second_us > first_us);
        assert_eq!(disk.outstanding(0), 2);
        assert_eq!(disk.outstanding(first_us), 1);
        assert!(second_us - first_us > 10 * SECOND_US / 1000, "long seek back");
        disk.check_invariants();
    }
}
