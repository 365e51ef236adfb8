//! What one `fdatasync` costs, as a function of the data reads and writes
//! in flight on the same device when it is issued (issue #18).
//!
//! Measured on this machine (EXPERIMENTS.md, session 23; `flushwise
//! device calibrate`'s `fsync_beside` points): a 4 KiB overwrite of the
//! preallocated log and its `fdatasync` take about 100 us alone, 166 us
//! beside one thread writing 16 KiB pages with `O_DIRECT`, 395 us beside
//! 4 and 1,051 us beside 16; beside 4 readers 377-414 us, beside 8
//! readers 587-599 us (a read in flight delays a flush more than a write
//! does); beside 4 readers *and* 4 writers 503-524 us, where adding the
//! two extra costs predicts 560. 128 KiB writes cost about what 16 KiB
//! ones do per request, and pages written *before* the sync, all
//! complete, barely move it (161 us after 0, 200-270 us after 1-128): the
//! cost follows the *requests in flight*, not the bytes written since the
//! last flush.
//!
//! So: cost = alone + extra_writes(writes in flight) + extra_reads(reads
//! in flight), each extra a piecewise-linear curve through its measured
//! points minus the alone figure (`(0, alone)` first; past the last point
//! the last segment's slope goes on: the measured curves have no ceiling
//! up to 128). A cost with no points is a constant.
//!
//! Invariants (checked by [`FsyncCost::new`]): per kind, the points' counts
//! are >= 1 and distinct; every cost finite and >= 0. A cost is never
//! below 0.

use crate::types::TimeUs;

/// One measured point: the mean `fdatasync` latency with `in_flight`
/// requests of one kind outstanding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FsyncPoint {
    pub in_flight: u32,
    pub fsync_us: f64,
}

/// The cost model (module doc). `FsyncCost::default()` is free (0 us), as
/// the built-in models' writes are durable when complete.
#[derive(Clone, Debug, PartialEq)]
pub struct FsyncCost {
    alone_us: f64,
    /// Sorted by `in_flight`, `(0, alone)` first.
    beside_writes: Vec<FsyncPoint>,
    beside_reads: Vec<FsyncPoint>,
}

impl Default for FsyncCost {
    fn default() -> Self {
        FsyncCost::constant(0)
    }
}

/// The curve `(0, alone)` + `points`, sorted; errors name the bad point.
fn curve(alone_us: f64, points: &[FsyncPoint], kind: &str) -> Result<Vec<FsyncPoint>, String> {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.in_flight);
    let mut out = Vec::with_capacity(sorted.len() + 1);
    out.push(FsyncPoint {
        in_flight: 0,
        fsync_us: alone_us,
    });
    for p in sorted {
        if p.in_flight == 0 {
            return Err(format!(
                "fsync beside 0 {kind}: the count must be >= 1 (the cost alone is given apart)"
            ));
        }
        if !(p.fsync_us.is_finite() && p.fsync_us >= 0.0) {
            return Err(format!(
                "fsync beside {} {kind} must be finite and >= 0, got {}",
                p.in_flight, p.fsync_us
            ));
        }
        if out.last().is_some_and(|last| last.in_flight == p.in_flight) {
            return Err(format!("fsync beside {} {kind} given twice", p.in_flight));
        }
        out.push(p);
    }
    Ok(out)
}

/// The curve's value at `x` requests in flight (module doc).
fn at(curve: &[FsyncPoint], x: usize) -> f64 {
    let x = x as f64;
    let right = curve
        .iter()
        .position(|p| f64::from(p.in_flight) > x)
        .unwrap_or(curve.len() - 1);
    if right == 0 {
        return curve[0].fsync_us;
    }
    let (a, b) = (curve[right - 1], curve[right]);
    let slope = (b.fsync_us - a.fsync_us) / f64::from(b.in_flight - a.in_flight);
    a.fsync_us + slope * (x - f64::from(a.in_flight))
}

impl FsyncCost {
    /// The same cost whatever is in flight.
    pub fn constant(fsync_us: TimeUs) -> FsyncCost {
        let alone_us = fsync_us as f64;
        let origin = vec![FsyncPoint {
            in_flight: 0,
            fsync_us: alone_us,
        }];
        FsyncCost {
            alone_us,
            beside_writes: origin.clone(),
            beside_reads: origin,
        }
    }

    /// `alone_us` with nothing in flight, the measured points beside
    /// writes and beside reads (each in any order, either may be empty).
    pub fn new(alone_us: f64, beside_writes: &[FsyncPoint], beside_reads: &[FsyncPoint]) -> Result<FsyncCost, String> {
        if !(alone_us.is_finite() && alone_us >= 0.0) {
            return Err(format!("fsync alone must be finite and >= 0, got {alone_us}"));
        }
        Ok(FsyncCost {
            alone_us,
            beside_writes: curve(alone_us, beside_writes, "writes")?,
            beside_reads: curve(alone_us, beside_reads, "reads")?,
        })
    }

    /// The same extras over what is in flight, from `alone_us` instead
    /// (every point moved by the difference, none below 0): a flush of
    /// another file of the device whose cost alone was measured apart.
    pub fn starting_at(&self, alone_us: f64) -> Result<FsyncCost, String> {
        if !(alone_us.is_finite() && alone_us >= 0.0) {
            return Err(format!("fsync alone must be finite and >= 0, got {alone_us}"));
        }
        let shift = alone_us - self.alone_us;
        let moved = |curve: &[FsyncPoint]| -> Vec<FsyncPoint> {
            curve
                .iter()
                .map(|p| FsyncPoint {
                    in_flight: p.in_flight,
                    fsync_us: if p.in_flight == 0 {
                        alone_us
                    } else {
                        (p.fsync_us + shift).max(0.0)
                    },
                })
                .collect()
        };
        Ok(FsyncCost {
            alone_us,
            beside_writes: moved(&self.beside_writes),
            beside_reads: moved(&self.beside_reads),
        })
    }

    /// The cost with nothing else in flight, µs (rounded to nearest).
    pub fn alone_us(&self) -> TimeUs {
        self.alone_us.round() as TimeUs
    }

    /// The cost with `reads` and `writes` data requests outstanding, µs
    /// (rounded to nearest, never below 0).
    pub fn beside_us(&self, reads: usize, writes: usize) -> TimeUs {
        let extra_writes = at(&self.beside_writes, writes) - self.alone_us;
        let extra_reads = at(&self.beside_reads, reads) - self.alone_us;
        (self.alone_us + extra_writes + extra_reads).round().max(0.0) as TimeUs
    }

    /// Whether the cost depends on what is in flight.
    pub fn varies(&self) -> bool {
        self.beside_writes.len() > 1 || self.beside_reads.len() > 1
    }

    /// Whether an fsync costs anything at all.
    pub fn is_free(&self) -> bool {
        !self.varies() && self.alone_us() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(in_flight: u32, fsync_us: f64) -> FsyncPoint {
        FsyncPoint { in_flight, fsync_us }
    }

    #[test]
    fn a_constant_cost_ignores_what_is_in_flight() {
        let cost = FsyncCost::constant(96);
        for n in [0, 1, 7, 1000] {
            assert_eq!(cost.beside_us(n, n), 96);
        }
        assert!(!cost.varies() && !cost.is_free());
        assert!(FsyncCost::default().is_free());
        assert_eq!(FsyncCost::default().beside_us(5, 5), 0);
    }

    #[test]
    fn a_cost_moved_to_another_start_keeps_its_extras_and_never_goes_below_0() {
        let cost = FsyncCost::new(100.0, &[point(1, 166.0), point(4, 395.0)], &[point(4, 120.0)]).unwrap();
        let data = cost.starting_at(45.0).unwrap();
        assert_eq!(data.alone_us(), 45);
        assert_eq!(data.beside_us(0, 1), 111);
        assert_eq!(data.beside_us(0, 4), 340);
        assert_eq!(data.beside_us(4, 0), 65);
        let low = FsyncCost::new(100.0, &[point(1, 20.0)], &[])
            .unwrap()
            .starting_at(10.0)
            .unwrap();
        assert_eq!(low.beside_us(0, 1), 0, "20 - 90 is held at 0");
        assert!(cost.starting_at(-1.0).is_err() && cost.starting_at(f64::INFINITY).is_err());
    }

    #[test]
    fn each_curve_passes_through_its_points_and_interpolates_between() {
        // This machine's session-23 probe, rounded.
        let writes = [point(4, 395.0), point(1, 166.0), point(16, 1051.0)];
        let cost = FsyncCost::new(100.0, &writes, &[]).unwrap();
        assert_eq!(cost.alone_us(), 100);
        assert_eq!(cost.beside_us(0, 1), 166);
        assert_eq!(cost.beside_us(0, 4), 395);
        assert_eq!(cost.beside_us(0, 16), 1051);
        // Between 1 and 4: 166 + (395 - 166) / 3 per write.
        assert_eq!(cost.beside_us(0, 2), 242);
        assert_eq!(cost.beside_us(0, 10), 723);
        // Past the last point, the last segment's slope (656 / 12 a write).
        assert_eq!(cost.beside_us(0, 28), 1707);
        // No read points: reads in flight cost nothing extra.
        assert_eq!(cost.beside_us(50, 4), 395);
        assert!(cost.varies());
    }

    #[test]
    fn reads_and_writes_in_flight_add_their_extra_costs() {
        // Beside 4 writes 280 (+170), beside 4 reads 390 (+280): both at
        // once 100 + 170 + 280 (the probe measured 503-524).
        let cost = FsyncCost::new(110.0, &[point(4, 280.0)], &[point(4, 390.0)]).unwrap();
        assert_eq!(cost.beside_us(4, 0), 390);
        assert_eq!(cost.beside_us(0, 4), 280);
        assert_eq!(cost.beside_us(4, 4), 560);
        assert_eq!(cost.beside_us(2, 2), 335);
    }

    #[test]
    fn a_falling_curve_never_goes_below_zero() {
        let cost = FsyncCost::new(100.0, &[point(1, 50.0)], &[]).unwrap();
        assert_eq!(cost.beside_us(0, 1), 50);
        assert_eq!(cost.beside_us(0, 3), 0);
        assert_eq!(cost.beside_us(0, 100), 0);
    }

    #[test]
    fn bad_points_are_refused_by_name() {
        let e = FsyncCost::new(100.0, &[point(0, 120.0)], &[]).unwrap_err();
        assert!(e.contains("beside 0 writes"), "{e}");
        let e = FsyncCost::new(100.0, &[], &[point(2, 1.0), point(2, 3.0)]).unwrap_err();
        assert!(e.contains("beside 2 reads given twice"), "{e}");
        let e = FsyncCost::new(f64::NAN, &[], &[]).unwrap_err();
        assert!(e.contains("alone"), "{e}");
        let e = FsyncCost::new(1.0, &[point(3, -1.0)], &[]).unwrap_err();
        assert!(e.contains("beside 3 writes"), "{e}");
    }
}
