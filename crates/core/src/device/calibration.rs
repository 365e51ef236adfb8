//! What `flushwise device calibrate` measured, and the model fitted to it.
//!
//! The shell (the engine's `calibrate` module) measures this machine's
//! storage and hands the numbers here as plain data ([`Measurements`]);
//! this module, like all of core, does no I/O and reads no clock. It
//! derives a [`CalibratedConfig`] from them ([`fit`]) and predicts every
//! measured point by running the fitted model in virtual time with the
//! same closed-loop queue depth ([`predict`]), so the preset carries its
//! own evidence: measured vs predicted, point by point.
//!
//! # The measured points
//! Every point keeps `queue_depth` requests of [`Measurements::request_bytes`]
//! (16 KiB, the engine's page) outstanding at random aligned offsets of one
//! file, one synchronous request per thread, as the engine's threads do:
//! - `read`: `queue_depth` readers;
//! - `write`: `queue_depth` writers (in-place page writes, no fsync);
//! - `mixed`: `queue_depth` readers *and* `queue_depth` writers at once,
//!   so reads at QD k meet writes at QD k (read/write interference: compare
//!   with the `read` point of the same depth; they fit the cross-kind
//!   weights).
//!
//! Log writes ([`LogWritePoint`]) are sequential appends of one size, each
//! followed by `fdatasync`, one at a time, as the redo log writes and
//! syncs a group commit. `fsync_*` is the `fdatasync` after a 4 KiB log
//! append alone: what a commit waits for beyond its write.
//! [`FsyncBeside`] is the same `fdatasync` while k threads each keep one
//! 16 KiB data read, or write, in flight on the same device: a flush
//! waits behind them, and [`Measurements::fsync_cost`] makes the cost the
//! simulator charges ([`super::fsync`]).
//!
//! # The callers' share
//! A thread's request takes the device's time, the thread's own CPU in the
//! call (submission, completion: 10-30 us per 16 KiB direct request on
//! this VM) and its wait for a core once the device answered (with 8-32
//! threads on two cores, 35-120 us). The shell measures the last two per
//! request ([`Figures::caller_cpu_us`], [`Figures::caller_core_wait_us`])
//! and reports the device's part beside the wall time; the model is still
//! fitted to the wall time (why: [`Figures::device_latency_us`]).
//!
//! # How the fit works
//! The model ([`super::calibrated`]) gives a request base + per_outstanding
//! x (same kind in flight) + per_outstanding_other x (other kind in
//! flight) + a transfer cost per byte beyond 16 KiB, in three steps, each
//! holding what the one before fitted:
//! 1. base and same-kind slope, per direction from its single-direction
//!    points alone: at queue depth k a request finds k - 1 others in
//!    flight, so the fit is a straight line through mean latency over
//!    k - 1, by least squares weighted by 1 / latency² (so each point's
//!    *relative* error counts alike; a base or slope below zero is set to
//!    zero and the other refitted). The mixed points do not move it.
//! 2. the cross-kind weight, per direction from the mixed points: a read
//!    there finds k - 1 reads and k writes in flight, so the weight is the
//!    line through the origin of (latency - base - slope x (k - 1)) over
//!    k, weighted by 1 / latency² as in step 1, at least zero. Without a
//!    mixed point it is the same-kind slope: every request in flight
//!    counts alike, the model before the weights.
//! 3. the transfer cost: the least-squares slope of log-append latency
//!    over size.

use super::calibrated::{CalibratedConfig, CalibratedModel};
use super::fsync::{FsyncCost, FsyncPoint};
use super::{DeviceModel, IoKind, IoRequest};
use crate::histogram::Histogram;
use crate::types::{TimeUs, SECOND_US};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// Requests the virtual-time prediction of one point runs.
const PREDICTION_REQUESTS: usize = 20_000;

/// What one measured point kept outstanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Random reads only.
    Read,
    /// Random writes only.
    Write,
    /// `queue_depth` readers and `queue_depth` writers at once.
    Mixed,
}

impl Pattern {
    pub const ACCEPTED: [&'static str; 3] = ["read", "write", "mixed"];

    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::Mixed => "mixed",
        }
    }

    pub fn parse(text: &str) -> Option<Pattern> {
        match text {
            "read" => Some(Pattern::Read),
            "write" => Some(Pattern::Write),
            "mixed" => Some(Pattern::Mixed),
            _ => None,
        }
    }

    /// Reads outstanding at `queue_depth`.
    pub fn readers(self, queue_depth: u32) -> u32 {
        match self {
            Pattern::Read | Pattern::Mixed => queue_depth,
            Pattern::Write => 0,
        }
    }

    /// Writes outstanding at `queue_depth`.
    pub fn writers(self, queue_depth: u32) -> u32 {
        match self {
            Pattern::Write | Pattern::Mixed => queue_depth,
            Pattern::Read => 0,
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Throughput and latency of one direction at one point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub iops: f64,
    /// Wall time of one request as its thread saw it: the device's time,
    /// the thread's own CPU in the call and its wait for a core after the
    /// device answered. The model is fitted to it.
    pub mean_latency_us: f64,
    pub p99_latency_us: f64,
    /// The calling thread's own CPU per request (the system call's
    /// submission and completion), µs; `None` where it was not measured
    /// (presets before session 25, a kernel without schedstat).
    pub caller_cpu_us: Option<f64>,
    /// The calling thread's wait for a core per request (Linux
    /// `run_delay`), µs; `None` as `caller_cpu_us`.
    pub caller_core_wait_us: Option<f64>,
}

impl Figures {
    /// Of a request's wall time, what the calling thread spent itself: its
    /// CPU and its wait for a core (0 where not measured).
    pub fn caller_us(&self) -> f64 {
        self.caller_cpu_us.unwrap_or(0.0) + self.caller_core_wait_us.unwrap_or(0.0)
    }

    /// The device's part of a request's latency: the wall time less the
    /// caller's CPU and wait for a core (at least 1 us). Reported beside
    /// the wall time, not fitted: fitted to it, the replay's predictions
    /// moved 14-37 % high in `lab run fidelity` (EXPERIMENTS.md, session
    /// 25), because the wall time's share of the calibrating threads' wait
    /// for a core stands in for the wait the replay's cores do not model.
    pub fn device_latency_us(&self) -> f64 {
        (self.mean_latency_us - self.caller_us()).max(1.0)
    }
}

/// One measured point (see the module doc for what each pattern ran).
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredPoint {
    pub pattern: Pattern,
    /// Requests outstanding per direction.
    pub queue_depth: u32,
    /// Present when the pattern reads.
    pub read: Option<Figures>,
    /// Present when the pattern writes.
    pub write: Option<Figures>,
}

/// Sequential appends of `write_bytes`, each followed by `fdatasync`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogWritePoint {
    pub write_bytes: u32,
    pub mb_per_s: f64,
    /// Latency of one append and its fdatasync.
    pub mean_latency_us: f64,
    pub p99_latency_us: f64,
}

/// A log append's `fdatasync` while `in_flight` threads each keep one
/// 16 KiB data request of `kind` in flight on the same device (the flush
/// waits behind them: [`super::fsync`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FsyncBeside {
    pub kind: IoKind,
    pub in_flight: u32,
    /// The threads' completed requests per second meanwhile.
    pub iops: f64,
    /// Latency of the `fdatasync` alone (the append before it not counted).
    pub mean_latency_us: f64,
    pub p99_latency_us: f64,
}

/// Everything one calibration measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurements {
    /// Size of every random request (the engine's page, 16 KiB).
    pub request_bytes: u32,
    pub points: Vec<MeasuredPoint>,
    pub log_writes: Vec<LogWritePoint>,
    /// `fdatasync` after a 4 KiB log append.
    pub fsync_mean_us: f64,
    pub fsync_p99_us: f64,
    /// `fdatasync` of the data file after one 16 KiB direct write to it
    /// (what the doublewrite copy's and the tablespace's syncs cost;
    /// `None` in presets written before session 24: the log's figure is
    /// then used for data files too). On this machine about 45 us against
    /// the log's 100-130: a direct write leaves nothing in the page cache
    /// to write back, so the sync is the device's cache flush alone.
    pub data_fsync_mean_us: Option<f64>,
    pub data_fsync_p99_us: Option<f64>,
    /// The same `fdatasync` beside data readers or writers (empty in
    /// presets written before session 23: the cost is then
    /// `fsync_mean_us` whatever is in flight).
    pub fsync_beside: Vec<FsyncBeside>,
    /// Filling the test file with 1 MiB direct writes, fsynced at the end.
    pub sequential_write_mb_per_s: f64,
}

impl Measurements {
    /// The `fdatasync` cost: `fsync_mean_us` alone, each `fsync_beside`
    /// point at its count of its kind.
    pub fn fsync_cost(&self) -> Result<FsyncCost, String> {
        let points = |kind: IoKind| -> Vec<FsyncPoint> {
            self.fsync_beside
                .iter()
                .filter(|f| f.kind == kind)
                .map(|f| FsyncPoint {
                    in_flight: f.in_flight,
                    fsync_us: f.mean_latency_us,
                })
                .collect()
        };
        FsyncCost::new(self.fsync_mean_us, &points(IoKind::Write), &points(IoKind::Read))
    }

    /// A data file's `fdatasync` cost: the log's curve ([`Self::fsync_cost`])
    /// moved to start at `data_fsync_mean_us` (what the requests in flight
    /// add is taken to be the same for both flushes; without the data
    /// figure, the log's cost as it is).
    pub fn data_fsync_cost(&self) -> Result<FsyncCost, String> {
        let log = self.fsync_cost()?;
        match self.data_fsync_mean_us {
            Some(alone_us) => log.starting_at(alone_us),
            None => Ok(log),
        }
    }

    /// The single-direction point of `pattern` at `queue_depth`, if measured.
    pub fn point(&self, pattern: Pattern, queue_depth: u32) -> Option<&MeasuredPoint> {
        self.points
            .iter()
            .find(|p| p.pattern == pattern && p.queue_depth == queue_depth)
    }

    /// Checks the numbers make sense; the error names the first bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.request_bytes == 0 {
            return Err("request_bytes must be > 0".into());
        }
        let finite = |field: &str, v: f64| -> Result<(), String> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("{field} must be finite and >= 0, got {v}"))
            }
        };
        for (i, p) in self.points.iter().enumerate() {
            if p.queue_depth == 0 {
                return Err(format!("point {}: queue_depth must be >= 1", i + 1));
            }
            let want_read = p.pattern.readers(p.queue_depth) > 0;
            let want_write = p.pattern.writers(p.queue_depth) > 0;
            if want_read != p.read.is_some() || want_write != p.write.is_some() {
                return Err(format!(
                    "point {} ({} QD{}): read figures {}, write figures {}",
                    i + 1,
                    p.pattern,
                    p.queue_depth,
                    if p.read.is_some() { "given" } else { "missing" },
                    if p.write.is_some() { "given" } else { "missing" },
                ));
            }
            for (dir, figures) in [("read", p.read), ("write", p.write)] {
                if let Some(f) = figures {
                    finite(&format!("point {}: {dir}_iops", i + 1), f.iops)?;
                    finite(&format!("point {}: {dir}_mean_latency_us", i + 1), f.mean_latency_us)?;
                    finite(&format!("point {}: {dir}_p99_latency_us", i + 1), f.p99_latency_us)?;
                }
            }
        }
        for (i, l) in self.log_writes.iter().enumerate() {
            if l.write_bytes == 0 {
                return Err(format!("log write {}: write_bytes must be > 0", i + 1));
            }
            finite(&format!("log write {}: mb_per_s", i + 1), l.mb_per_s)?;
            finite(&format!("log write {}: mean_latency_us", i + 1), l.mean_latency_us)?;
            finite(&format!("log write {}: p99_latency_us", i + 1), l.p99_latency_us)?;
        }
        finite("fsync_mean_us", self.fsync_mean_us)?;
        finite("fsync_p99_us", self.fsync_p99_us)?;
        if let Some(us) = self.data_fsync_mean_us {
            finite("data_fsync_mean_us", us)?;
        }
        if let Some(us) = self.data_fsync_p99_us {
            finite("data_fsync_p99_us", us)?;
        }
        for (i, f) in self.fsync_beside.iter().enumerate() {
            let n = i + 1;
            if f.in_flight == 0 {
                return Err(format!("fsync beside {n}: in_flight must be >= 1"));
            }
            finite(&format!("fsync beside {n}: iops"), f.iops)?;
            finite(&format!("fsync beside {n}: mean_latency_us"), f.mean_latency_us)?;
            finite(&format!("fsync beside {n}: p99_latency_us"), f.p99_latency_us)?;
        }
        self.fsync_cost()?;
        finite("sequential_write_mb_per_s", self.sequential_write_mb_per_s)?;
        Ok(())
    }
}

/// Why a fit could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FitError(pub String);

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FitError {}

/// (k - 1, mean latency) of each single-direction point of `pattern`.
fn latency_points(measurements: &Measurements, pattern: Pattern) -> Vec<(f64, f64)> {
    measurements
        .points
        .iter()
        .filter(|p| p.pattern == pattern)
        .filter_map(|p| {
            let f = match pattern {
                Pattern::Read => p.read,
                _ => p.write,
            }?;
            Some((f64::from(p.queue_depth - 1), f.mean_latency_us))
        })
        .filter(|(_, latency)| *latency > 0.0)
        .collect()
}

/// `y = base + slope x` by least squares weighted by 1 / y², both at
/// least zero; `None` without a point.
fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.is_empty() {
        return None;
    }
    let weight = |y: f64| 1.0 / (y * y);
    let sw: f64 = points.iter().map(|(_, y)| weight(*y)).sum();
    let sx: f64 = points.iter().map(|(x, y)| weight(*y) * x).sum();
    let sy: f64 = points.iter().map(|(_, y)| weight(*y) * y).sum();
    let sxx: f64 = points.iter().map(|(x, y)| weight(*y) * x * x).sum();
    let sxy: f64 = points.iter().map(|(x, y)| weight(*y) * x * y).sum();
    let det = sw * sxx - sx * sx;
    let (base, slope) = if det > 0.0 {
        ((sxx * sy - sx * sxy) / det, (sw * sxy - sx * sy) / det)
    } else {
        // One depth only: a flat line.
        (sy / sw, 0.0)
    };
    Some(if slope < 0.0 {
        (sy / sw, 0.0)
    } else if base < 0.0 {
        // Through the origin: slope = sum(w x y) / sum(w x²).
        (0.0, if sxx > 0.0 { sxy / sxx } else { 0.0 })
    } else {
        (base, slope)
    })
}

/// What each request of the other kind in flight adds to a request of
/// `kind`, fitted from the mixed points with the single-kind line
/// (`base`, `same_kind_slope`) held: at a mixed point of depth k a request
/// finds k - 1 of its kind and k of the other in flight, so the slope is
/// the least-squares line through the origin of (latency - base -
/// same_kind_slope x (k - 1)) over k, weighted by 1 / latency² as the
/// single-kind fit (relative error), at least zero. `None` without a mixed
/// point that measured `kind`.
fn cross_kind_slope(measurements: &Measurements, kind: IoKind, base: f64, same_kind_slope: f64) -> Option<f64> {
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for p in measurements.points.iter().filter(|p| p.pattern == Pattern::Mixed) {
        let (figures, same_kind, other_kind) = match kind {
            IoKind::Read => (
                p.read,
                p.pattern.readers(p.queue_depth),
                p.pattern.writers(p.queue_depth),
            ),
            IoKind::Write => (
                p.write,
                p.pattern.writers(p.queue_depth),
                p.pattern.readers(p.queue_depth),
            ),
        };
        let Some(latency) = figures.map(|f| f.mean_latency_us).filter(|l| *l > 0.0) else {
            continue;
        };
        let weight = 1.0 / (latency * latency);
        let x = f64::from(other_kind);
        let y = latency - base - same_kind_slope * f64::from(same_kind.saturating_sub(1));
        sxx += weight * x * x;
        sxy += weight * x * y;
    }
    (sxx > 0.0).then(|| (sxy / sxx).max(0.0))
}

/// Microseconds per MiB beyond 16 KiB: the least-squares slope of log
/// append latency over size; without two sizes or with a slope <= 0, the
/// sequential fill's rate.
fn transfer_us_per_mib(measurements: &Measurements) -> f64 {
    let points: Vec<(f64, f64)> = measurements
        .log_writes
        .iter()
        .map(|l| (f64::from(l.write_bytes), l.mean_latency_us))
        .collect();
    let n = points.len() as f64;
    if points.len() >= 2 {
        let mean_x = points.iter().map(|(x, _)| x).sum::<f64>() / n;
        let mean_y = points.iter().map(|(_, y)| y).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
        let sxy: f64 = points.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
        if sxx > 0.0 && sxy > 0.0 {
            return sxy / sxx * f64::from(1u32 << 20);
        }
    }
    if measurements.sequential_write_mb_per_s > 0.0 {
        // MB/s is bytes per microsecond.
        f64::from(1u32 << 20) / measurements.sequential_write_mb_per_s
    } else {
        0.0
    }
}

/// Rounds to a thousandth (a nanosecond for times in microseconds), so
/// the preset's text gives back the very model that was fitted.
fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Derives the model's parameters from the measurements (see the module
/// doc); the config's `name` is `fit` (the shell names it after its preset).
pub fn fit(measurements: &Measurements) -> Result<CalibratedConfig, FitError> {
    measurements.validate().map_err(FitError)?;
    let line = |pattern: Pattern| {
        fit_line(&latency_points(measurements, pattern))
            .ok_or_else(|| FitError(format!("no {pattern} point with a completed request was measured")))
    };
    let (read_base, read_slope) = line(Pattern::Read)?;
    let (write_base, write_slope) = line(Pattern::Write)?;
    // Rounded first, so the cross-kind fit holds the very line the preset keeps.
    let (read_base, read_slope) = (round3(read_base), round3(read_slope));
    let (write_base, write_slope) = (round3(write_base), round3(write_slope));
    let read_per_write = cross_kind_slope(measurements, IoKind::Read, read_base, read_slope).unwrap_or(read_slope);
    let write_per_read = cross_kind_slope(measurements, IoKind::Write, write_base, write_slope).unwrap_or(write_slope);
    Ok(CalibratedConfig {
        name: "fit".into(),
        read_base_latency_us: read_base,
        write_base_latency_us: write_base,
        read_latency_per_outstanding_us: read_slope,
        write_latency_per_outstanding_us: write_slope,
        read_latency_per_outstanding_write_us: round3(read_per_write),
        write_latency_per_outstanding_read_us: round3(write_per_read),
        transfer_us_per_mib: round3(transfer_us_per_mib(measurements)),
    })
}

/// Measured vs predicted for one direction of one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionComparison {
    pub measured: Figures,
    pub predicted: Figures,
}

impl DirectionComparison {
    /// (predicted - measured) / measured IOPS.
    pub fn iops_error(&self) -> f64 {
        relative_error(self.predicted.iops, self.measured.iops)
    }

    /// (predicted - measured) / measured mean latency.
    pub fn latency_error(&self) -> f64 {
        relative_error(self.predicted.mean_latency_us, self.measured.mean_latency_us)
    }
}

fn relative_error(predicted: f64, measured: f64) -> f64 {
    if measured > 0.0 {
        (predicted - measured) / measured
    } else {
        0.0
    }
}

/// One measured point beside the model's prediction of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub pattern: Pattern,
    pub queue_depth: u32,
    pub read: Option<DirectionComparison>,
    pub write: Option<DirectionComparison>,
}

/// Predicts every measured point with `config` (see [`predict`]).
pub fn compare(config: &CalibratedConfig, measurements: &Measurements) -> Result<Vec<Comparison>, super::DeviceError> {
    measurements
        .points
        .iter()
        .map(|point| {
            let (read, write) = predict(config, point.pattern, point.queue_depth, measurements.request_bytes)?;
            let pair = |measured: Option<Figures>, predicted: Option<Figures>| match (measured, predicted) {
                (Some(measured), Some(predicted)) => Some(DirectionComparison { measured, predicted }),
                _ => None,
            };
            Ok(Comparison {
                pattern: point.pattern,
                queue_depth: point.queue_depth,
                read: pair(point.read, read),
                write: pair(point.write, write),
            })
        })
        .collect()
}

/// The model's figures for `pattern` at `queue_depth` in virtual time: a
/// closed loop of `readers + writers` slots, each submitting its next
/// request of its own kind the moment the previous one completes (as a
/// calibrate thread does), [`PREDICTION_REQUESTS`] requests, the first
/// tenth not counted. Returns (read, write) figures, each present when the
/// pattern has that direction.
pub fn predict(
    config: &CalibratedConfig,
    pattern: Pattern,
    queue_depth: u32,
    request_bytes: u32,
) -> Result<(Option<Figures>, Option<Figures>), super::DeviceError> {
    let mut model = CalibratedModel::new(config.clone())?;
    let readers = pattern.readers(queue_depth) as usize;
    let slots = readers + pattern.writers(queue_depth) as usize;
    let kind_of = |slot: usize| if slot < readers { IoKind::Read } else { IoKind::Write };
    // Offsets do not matter to this model; every request reads page 0.
    let request = |kind| IoRequest {
        kind,
        offset_bytes: 0,
        len_bytes: request_bytes,
    };
    // (completion, slot, arrival): the earliest completion submits next.
    let mut pending: BinaryHeap<Reverse<(TimeUs, usize, TimeUs)>> = BinaryHeap::new();
    for slot in 0..slots {
        let completion_us = model.submit(request(kind_of(slot)), 0);
        pending.push(Reverse((completion_us, slot, 0)));
    }
    let counted_from = PREDICTION_REQUESTS / 10;
    let mut histograms = [Histogram::new(), Histogram::new()];
    let mut window_start_us = None;
    let mut window_end_us = 0;
    for done in 0..PREDICTION_REQUESTS {
        let Some(Reverse((completion_us, slot, arrival_us))) = pending.pop() else {
            break;
        };
        if done >= counted_from {
            let start = *window_start_us.get_or_insert(arrival_us);
            if arrival_us >= start {
                histograms[usize::from(kind_of(slot) == IoKind::Write)].record(completion_us - arrival_us);
            }
            window_end_us = completion_us;
        }
        let next_us = model.submit(request(kind_of(slot)), completion_us);
        pending.push(Reverse((next_us, slot, completion_us)));
    }
    model.check_invariants();
    let window_us = window_end_us.saturating_sub(window_start_us.unwrap_or(0)).max(1);
    let figures = |h: &Histogram| Figures {
        iops: h.count() as f64 * SECOND_US as f64 / window_us as f64,
        mean_latency_us: h.mean_us(),
        p99_latency_us: h.quantile_us(0.99) as f64,
        ..Figures::default()
    };
    let [read, write] = &histograms;
    Ok((
        (readers > 0).then(|| figures(read)),
        (slots > readers).then(|| figures(write)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth() -> CalibratedConfig {
        CalibratedConfig {
            name: "truth".into(),
            read_base_latency_us: 120.0,
            write_base_latency_us: 105.0,
            read_latency_per_outstanding_us: 14.5,
            write_latency_per_outstanding_us: 12.0,
            read_latency_per_outstanding_write_us: 24.0,
            write_latency_per_outstanding_read_us: 21.0,
            transfer_us_per_mib: 1200.0,
        }
    }

    /// What calibrate would measure on a device that is exactly `config`.
    fn measured_on(config: &CalibratedConfig) -> Measurements {
        let mut points = Vec::new();
        for (pattern, depths) in [
            (Pattern::Read, &[1, 2, 4, 8, 16, 32][..]),
            (Pattern::Write, &[1, 2, 4, 8, 16, 32][..]),
            (Pattern::Mixed, &[1, 4, 16][..]),
        ] {
            for &queue_depth in depths {
                let (read, write) = predict(config, pattern, queue_depth, 16384).unwrap();
                points.push(MeasuredPoint {
                    pattern,
                    queue_depth,
                    read,
                    write,
                });
            }
        }
        let log_writes = [16384u32, 65536, 131072, 524288]
            .iter()
            .map(|&write_bytes| {
                let latency = 300.0 + f64::from(write_bytes) / f64::from(1u32 << 20) * config.transfer_us_per_mib;
                LogWritePoint {
                    write_bytes,
                    mb_per_s: f64::from(write_bytes) / latency,
                    mean_latency_us: latency,
                    p99_latency_us: 2.0 * latency,
                }
            })
            .collect();
        Measurements {
            request_bytes: 16384,
            points,
            log_writes,
            fsync_mean_us: 200.0,
            fsync_p99_us: 900.0,
            data_fsync_mean_us: Some(80.0),
            data_fsync_p99_us: Some(300.0),
            fsync_beside: vec![
                FsyncBeside {
                    kind: IoKind::Write,
                    in_flight: 1,
                    iops: 9000.0,
                    mean_latency_us: 260.0,
                    p99_latency_us: 1000.0,
                },
                FsyncBeside {
                    kind: IoKind::Write,
                    in_flight: 4,
                    iops: 20000.0,
                    mean_latency_us: 500.0,
                    p99_latency_us: 1500.0,
                },
                FsyncBeside {
                    kind: IoKind::Read,
                    in_flight: 4,
                    iops: 20000.0,
                    mean_latency_us: 600.0,
                    p99_latency_us: 1500.0,
                },
            ],
            sequential_write_mb_per_s: 800.0,
        }
    }

    #[test]
    fn the_fsync_curve_runs_through_the_measured_points() {
        let measurements = measured_on(&truth());
        let cost = measurements.fsync_cost().unwrap();
        assert_eq!(cost.alone_us(), 200);
        assert_eq!(cost.beside_us(0, 1), 260);
        assert_eq!(cost.beside_us(0, 4), 500);
        assert_eq!(cost.beside_us(0, 2), 340);
        assert_eq!(cost.beside_us(4, 0), 600);
        assert_eq!(cost.beside_us(4, 4), 900, "both extras: 200 + 300 + 400");
        let mut twice = measurements.clone();
        twice.fsync_beside[1].in_flight = 1;
        let e = twice.validate().unwrap_err();
        assert!(e.contains("beside 1 writes given twice"), "{e}");
        let mut none = measurements;
        none.fsync_beside[0].in_flight = 0;
        let e = none.validate().unwrap_err();
        assert!(e.contains("fsync beside 1: in_flight"), "{e}");
    }

    #[test]
    fn a_data_files_fsync_starts_at_its_own_figure_and_adds_the_same_extras() {
        let measurements = measured_on(&truth());
        let data = measurements.data_fsync_cost().unwrap();
        assert_eq!(data.alone_us(), 80);
        assert_eq!(data.beside_us(0, 1), 140, "80 + the log's extra of 60");
        assert_eq!(data.beside_us(4, 4), 780, "80 + 300 + 400");
        let mut older = measurements;
        older.data_fsync_mean_us = None;
        assert_eq!(older.data_fsync_cost().unwrap(), older.fsync_cost().unwrap());
        older.data_fsync_mean_us = Some(f64::NAN);
        let e = older.validate().unwrap_err();
        assert!(e.contains("data_fsync_mean_us"), "{e}");
    }

    #[test]
    fn the_fit_recovers_the_device_that_was_measured() {
        let measurements = measured_on(&truth());
        let fitted = fit(&measurements).expect("fits");
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 0.02;
        assert!(close(fitted.read_base_latency_us, 120.0), "{fitted:?}");
        assert!(close(fitted.write_base_latency_us, 105.0), "{fitted:?}");
        assert!(close(fitted.read_latency_per_outstanding_us, 14.5), "{fitted:?}");
        assert!(close(fitted.write_latency_per_outstanding_us, 12.0), "{fitted:?}");
        assert!(close(fitted.read_latency_per_outstanding_write_us, 24.0), "{fitted:?}");
        assert!(close(fitted.write_latency_per_outstanding_read_us, 21.0), "{fitted:?}");
        assert!(close(fitted.transfer_us_per_mib, 1200.0), "{fitted:?}");
        for c in compare(&fitted, &measurements).unwrap() {
            for d in [c.read, c.write].into_iter().flatten() {
                assert!(d.iops_error().abs() < 0.03, "{c:?}");
                assert!(d.latency_error().abs() < 0.03, "{c:?}");
            }
        }
    }

    #[test]
    fn prediction_follows_the_closed_loop_formula() {
        let (read, write) = predict(&truth(), Pattern::Read, 8, 16384).unwrap();
        assert!(write.is_none());
        let read = read.unwrap();
        let latency = 120.0 + 14.5 * 7.0;
        assert!((read.mean_latency_us / latency - 1.0).abs() < 0.01, "{read:?}");
        assert!((read.iops / (8e6 / latency) - 1.0).abs() < 0.01, "{read:?}");
        // Mixed at QD4: every request finds 3 of its kind and 4 of the
        // other in flight.
        let (read, write) = predict(&truth(), Pattern::Mixed, 4, 16384).unwrap();
        let (read, write) = (read.unwrap(), write.unwrap());
        assert!(
            (read.mean_latency_us / (120.0 + 14.5 * 3.0 + 24.0 * 4.0) - 1.0).abs() < 0.02,
            "{read:?}"
        );
        assert!(
            (write.mean_latency_us / (105.0 + 12.0 * 3.0 + 21.0 * 4.0) - 1.0).abs() < 0.02,
            "{write:?}"
        );
    }

    #[test]
    fn cross_kind_weights_slow_the_mixed_points_as_they_say_and_nothing_else() {
        let weighted = truth();
        let alike = weighted.without_cross_kind_weights();
        let queue_depth = 8;
        let (read, write) = predict(&weighted, Pattern::Mixed, queue_depth, 16384).unwrap();
        let (old_read, old_write) = predict(&alike, Pattern::Mixed, queue_depth, 16384).unwrap();
        let k = f64::from(queue_depth);
        // Each of the k requests of the other kind in flight costs the
        // cross-kind weight instead of the same-kind slope.
        for (new, old, extra_us) in [
            (read.unwrap(), old_read.unwrap(), (24.0 - 14.5) * k),
            (write.unwrap(), old_write.unwrap(), (21.0 - 12.0) * k),
        ] {
            let added = new.mean_latency_us - old.mean_latency_us;
            assert!((added / extra_us - 1.0).abs() < 0.03, "{new:?} vs {old:?}");
            // A closed loop: IOPS fall as latency rises, k / latency.
            let iops_ratio = new.iops / old.iops;
            let latency_ratio = old.mean_latency_us / new.mean_latency_us;
            assert!((iops_ratio / latency_ratio - 1.0).abs() < 0.02, "{new:?} vs {old:?}");
        }
        for pattern in [Pattern::Read, Pattern::Write] {
            assert_eq!(
                predict(&weighted, pattern, queue_depth, 16384).unwrap(),
                predict(&alike, pattern, queue_depth, 16384).unwrap(),
                "{pattern}: one kind alone never meets the other"
            );
        }
    }

    #[test]
    fn without_mixed_points_every_request_in_flight_counts_alike() {
        let mut measurements = measured_on(&truth());
        let with_mixed = fit(&measurements).unwrap();
        measurements.points.retain(|p| p.pattern != Pattern::Mixed);
        let fitted = fit(&measurements).unwrap();
        assert_eq!(fitted, fitted.without_cross_kind_weights(), "{fitted:?}");
        assert_eq!(
            fitted,
            CalibratedConfig {
                read_latency_per_outstanding_write_us: with_mixed.read_latency_per_outstanding_us,
                write_latency_per_outstanding_read_us: with_mixed.write_latency_per_outstanding_us,
                ..with_mixed
            },
            "the single-kind fit does not look at the mixed points"
        );
    }

    #[test]
    fn mixed_points_faster_than_the_single_kind_line_fit_a_zero_weight() {
        let mut measurements = measured_on(&CalibratedConfig {
            read_latency_per_outstanding_write_us: 0.0,
            ..truth()
        });
        // Mixed reads a little faster than the reads' own line at k - 1.
        for p in measurements.points.iter_mut().filter(|p| p.pattern == Pattern::Mixed) {
            if let Some(f) = &mut p.read {
                f.mean_latency_us -= 5.0;
            }
        }
        let fitted = fit(&measurements).unwrap();
        assert_eq!(fitted.read_latency_per_outstanding_write_us, 0.0, "{fitted:?}");
        assert!(
            (fitted.write_latency_per_outstanding_read_us / 21.0 - 1.0).abs() < 0.02,
            "{fitted:?}"
        );
    }

    #[test]
    fn a_flat_device_fits_a_zero_slope_and_noise_never_a_negative_one() {
        let mut measurements = measured_on(&CalibratedConfig {
            read_latency_per_outstanding_us: 0.0,
            ..truth()
        });
        // Deeper reads measured slightly faster than shallow ones.
        for p in measurements.points.iter_mut().filter(|p| p.pattern == Pattern::Read) {
            if let Some(f) = &mut p.read {
                f.mean_latency_us -= f64::from(p.queue_depth) * 0.1;
            }
        }
        let fitted = fit(&measurements).unwrap();
        assert_eq!(fitted.read_latency_per_outstanding_us, 0.0, "{fitted:?}");
        assert!(fitted.read_base_latency_us > 110.0, "{fitted:?}");
    }

    #[test]
    fn a_fit_needs_reads_and_writes() {
        let mut measurements = measured_on(&truth());
        measurements.points.retain(|p| p.pattern != Pattern::Write);
        let err = fit(&measurements).unwrap_err().to_string();
        assert!(err.contains("write"), "{err}");
        let mut measurements = measured_on(&truth());
        measurements.points[0].read = None;
        let err = fit(&measurements).unwrap_err().to_string();
        assert!(err.contains("read figures missing"), "{err}");
    }

    #[test]
    fn without_log_sizes_the_transfer_cost_comes_from_the_fill_rate() {
        let mut measurements = measured_on(&truth());
        measurements.log_writes.truncate(1);
        let fitted = fit(&measurements).unwrap();
        // 800 MB/s: 1 MiB in 1310.72 us.
        assert!((fitted.transfer_us_per_mib - 1310.72).abs() < 0.01, "{fitted:?}");
    }
}
