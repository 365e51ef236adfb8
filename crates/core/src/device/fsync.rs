//! What one `fdatasync` costs, as a function of the data writes in flight
//! on the same device when it is issued (issue #18).
//!
//! Measured on this machine (`flushwise device calibrate`, the
//! `fsync_beside_writes` points; EXPERIMENTS.md, session 23): a 4 KiB
//! overwrite of the preallocated log and its `fdatasync` take about 100 us
//! alone, 166 us beside one thread writing 16 KiB pages with `O_DIRECT`,
//! 395 us beside 4 and 1,051 us beside 16. The same probe with 128 KiB
//! writes gives about the same per writer (153 and 526 us beside 1 and 4),
//! and pages written *before* the sync, all complete, barely move it
//! (161 us after 0, 200-270 us after 1-128): the cost follows the
//! *requests in flight*, not the bytes written since the last flush. So a
//! flush is charged by the count of data write requests outstanding when
//! it is issued, whatever their size.
//!
//! The cost is a piecewise-linear curve through the measured points,
//! `(0, alone)` first; past the last point it goes on with the last
//! segment's slope (more writes in flight, a longer wait: the measured
//! curve has no ceiling up to 16). A curve of one point is a constant.
//!
//! Invariants (checked by [`FsyncCost::new`]): at least one point; the
//! first at 0 writes in flight; writes strictly increasing; every cost
//! finite and >= 0.

use crate::types::TimeUs;

/// One measured point: the mean `fdatasync` latency with `writes_in_flight`
/// data writes outstanding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FsyncPoint {
    pub writes_in_flight: u32,
    pub fsync_us: f64,
}

/// The cost curve (module doc). `FsyncCost::default()` is free (0 us), as
/// the built-in models' writes are durable when complete.
#[derive(Clone, Debug, PartialEq)]
pub struct FsyncCost {
    points: Vec<FsyncPoint>,
}

impl Default for FsyncCost {
    fn default() -> Self {
        FsyncCost::constant(0)
    }
}

impl FsyncCost {
    /// The same cost whatever is in flight.
    pub fn constant(fsync_us: TimeUs) -> FsyncCost {
        FsyncCost {
            points: vec![FsyncPoint {
                writes_in_flight: 0,
                fsync_us: fsync_us as f64,
            }],
        }
    }

    /// The curve through `alone_us` at 0 writes in flight and `beside`
    /// (in any order). Errors name the bad point.
    pub fn new(alone_us: f64, beside: &[FsyncPoint]) -> Result<FsyncCost, String> {
        let mut points = Vec::with_capacity(beside.len() + 1);
        points.push(FsyncPoint {
            writes_in_flight: 0,
            fsync_us: alone_us,
        });
        let mut rest = beside.to_vec();
        rest.sort_by_key(|p| p.writes_in_flight);
        points.extend(rest);
        for (i, p) in points.iter().enumerate() {
            if !(p.fsync_us.is_finite() && p.fsync_us >= 0.0) {
                return Err(format!(
                    "fsync cost at {} writes in flight must be finite and >= 0, got {}",
                    p.writes_in_flight, p.fsync_us
                ));
            }
            if i > 0 && p.writes_in_flight <= points[i - 1].writes_in_flight {
                return Err(format!(
                    "fsync cost given twice at {} writes in flight (the alone figure is at 0)",
                    p.writes_in_flight
                ));
            }
        }
        Ok(FsyncCost { points })
    }

    /// The cost with nothing else in flight, µs (rounded to nearest).
    pub fn alone_us(&self) -> TimeUs {
        self.beside_writes_us(0)
    }

    /// The cost with `writes_in_flight` data writes outstanding, µs
    /// (rounded to nearest, never below 0).
    pub fn beside_writes_us(&self, writes_in_flight: usize) -> TimeUs {
        let x = writes_in_flight as f64;
        let points = &self.points;
        // The segment whose right end is the first point past x, or the
        // last segment when x is beyond every point.
        let right = points
            .iter()
            .position(|p| f64::from(p.writes_in_flight) > x)
            .unwrap_or(points.len() - 1);
        let cost = if right == 0 {
            points[0].fsync_us
        } else {
            let (a, b) = (points[right - 1], points[right]);
            let slope = (b.fsync_us - a.fsync_us) / f64::from(b.writes_in_flight - a.writes_in_flight);
            a.fsync_us + slope * (x - f64::from(a.writes_in_flight))
        };
        cost.round().max(0.0) as TimeUs
    }

    /// Whether the cost depends on the writes in flight.
    pub fn varies_with_writes(&self) -> bool {
        self.points.len() > 1
    }

    /// The points, `(0, alone)` first.
    pub fn points(&self) -> &[FsyncPoint] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(writes_in_flight: u32, fsync_us: f64) -> FsyncPoint {
        FsyncPoint {
            writes_in_flight,
            fsync_us,
        }
    }

    #[test]
    fn a_constant_cost_ignores_writes_in_flight() {
        let cost = FsyncCost::constant(96);
        for n in [0, 1, 7, 1000] {
            assert_eq!(cost.beside_writes_us(n), 96);
        }
        assert!(!cost.varies_with_writes());
        assert_eq!(FsyncCost::default().beside_writes_us(5), 0);
    }

    #[test]
    fn the_curve_passes_through_its_points_and_interpolates_between() {
        // This machine's session-23 probe, rounded.
        let cost = FsyncCost::new(100.0, &[point(4, 395.0), point(1, 166.0), point(16, 1051.0)]).unwrap();
        assert_eq!(cost.alone_us(), 100);
        assert_eq!(cost.beside_writes_us(1), 166);
        assert_eq!(cost.beside_writes_us(4), 395);
        assert_eq!(cost.beside_writes_us(16), 1051);
        // Between 1 and 4: 166 + (395 - 166) / 3 per write.
        assert_eq!(cost.beside_writes_us(2), 242);
        assert_eq!(cost.beside_writes_us(10), 723);
        // Past the last point, the last segment's slope (656 / 12 a write).
        assert_eq!(cost.beside_writes_us(28), 1707);
        assert!(cost.varies_with_writes());
    }

    #[test]
    fn a_falling_last_segment_never_goes_below_zero() {
        let cost = FsyncCost::new(100.0, &[point(1, 50.0)]).unwrap();
        assert_eq!(cost.beside_writes_us(1), 50);
        assert_eq!(cost.beside_writes_us(3), 0);
        assert_eq!(cost.beside_writes_us(100), 0);
    }

    #[test]
    fn bad_points_are_refused_by_name() {
        let e = FsyncCost::new(100.0, &[point(0, 120.0)]).unwrap_err();
        assert!(e.contains("twice at 0"), "{e}");
        let e = FsyncCost::new(100.0, &[point(2, 1.0), point(2, 3.0)]).unwrap_err();
        assert!(e.contains("twice at 2"), "{e}");
        let e = FsyncCost::new(f64::NAN, &[]).unwrap_err();
        assert!(e.contains("at 0 writes"), "{e}");
        let e = FsyncCost::new(1.0, &[point(3, -1.0)]).unwrap_err();
        assert!(e.contains("at 3 writes"), "{e}");
    }
}
