//! A log-bucketed latency histogram with bounded relative error.
//!
//! Values (microseconds) below 2^[`SUB_BITS`] have a bucket each; above,
//! every power of two [2^e, 2^(e+1)) is split into 2^[`SUB_BITS`] equal
//! buckets of width 2^(e − SUB_BITS). A value is reported as its bucket's
//! midpoint, so the error is at most half a bucket width over the bucket's
//! lower bound: 2^(e−SUB_BITS−1) / 2^e = 1/256 ≈ 0.4 % with SUB_BITS = 7,
//! within the 1 % the driver promises (HdrHistogram with two significant
//! digits gives the same guarantee; this is its layout without the
//! dependency). Values above 2^[`EXP_MAX`] µs (about 38 hours) are clamped.
//! Memory: (EXP_MAX − SUB_BITS + 2) · 128 counters of 8 bytes ≈ 30 KiB.

/// Sub-bucket bits: 128 buckets per power of two.
pub const SUB_BITS: u32 = 7;
/// Largest exponent kept.
pub const EXP_MAX: u32 = 37;

const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (EXP_MAX - SUB_BITS + 2) as usize * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max_us: u64,
    sum_us: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(v: u64) -> usize {
    let v = v.min((1u64 << (EXP_MAX + 1)) - 1);
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
    (e - SUB_BITS + 1) as usize * SUB + sub
}

/// The value a bucket stands for (its midpoint).
fn value_of(bucket: usize) -> u64 {
    let block = bucket / SUB;
    let sub = (bucket % SUB) as u64;
    if block == 0 {
        return sub;
    }
    let e = block as u32 + SUB_BITS - 1;
    let width = 1u64 << (e - SUB_BITS);
    (1u64 << e) + sub * width + width / 2
}

impl Histogram {
    pub fn new() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
            max_us: 0,
            sum_us: 0,
        }
    }

    pub fn record(&mut self, value_us: u64) {
        self.counts[bucket_of(value_us)] += 1;
        self.total += 1;
        self.max_us = self.max_us.max(value_us);
        self.sum_us += u128::from(value_us);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max_us = self.max_us.max(other.max_us);
        self.sum_us += other.sum_us;
    }

    /// What was recorded after `earlier`, a copy of this histogram taken
    /// before (counts subtract; the maximum is the later one's, an upper bound).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let mut out = self.clone();
        for (a, b) in out.counts.iter_mut().zip(&earlier.counts) {
            *a = a.saturating_sub(*b);
        }
        out.total = self.total.saturating_sub(earlier.total);
        out.sum_us = self.sum_us.saturating_sub(earlier.sum_us);
        if out.total == 0 {
            out.max_us = 0;
        }
        out
    }

    pub fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
        self.max_us = 0;
        self.sum_us = 0;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max_us(&self) -> u64 {
        self.max_us
    }

    pub fn mean_us(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_us as f64 / self.total as f64
        }
    }

    /// Sum of every value recorded, µs (exact).
    pub fn sum_us(&self) -> u128 {
        self.sum_us
    }

    /// Values recorded at or below `value_us`, as the buckets tell it: a
    /// bucket counts when its lower bound is at most `value_us`, so a value
    /// at the bound counts, and one less than 0.8 % above it may too (what
    /// a Prometheus histogram's `le` buckets are built from).
    pub fn count_at_most(&self, value_us: u64) -> u64 {
        let last = bucket_of(value_us);
        self.counts[..=last].iter().sum()
    }

    /// The value at quantile `q` in [0, 1] (0 if empty); never above max.
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(b).min(self.max_us);
            }
        }
        self.max_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_at_most_splits_values_at_the_bound_and_sum_is_exact() {
        let mut h = Histogram::new();
        for v in [10, 900, 1_000, 1_100, 50_000] {
            h.record(v);
        }
        assert_eq!(h.count_at_most(5), 0);
        assert_eq!(h.count_at_most(1_000), 3);
        assert_eq!(h.count_at_most(49_000), 4);
        assert_eq!(h.count_at_most(u64::MAX), 5);
        assert_eq!(h.sum_us(), 53_010);
    }

    #[test]
    fn relative_error_stays_under_half_a_percent() {
        for v in (0..2_000_000u64).step_by(7).chain([u64::from(u32::MAX), 1 << 37]) {
            let got = value_of(bucket_of(v));
            let err = (got as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / 256.0 + 1e-12, "v {v} got {got}");
        }
    }

    #[test]
    fn quantiles_of_a_uniform_sample() {
        let mut h = Histogram::new();
        for v in 1..=10_000 {
            h.record(v);
        }
        let p50 = h.quantile_us(0.5) as f64;
        let p99 = h.quantile_us(0.99) as f64;
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.01, "{p50}");
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.01, "{p99}");
        assert_eq!(h.quantile_us(1.0), 10_000);
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn since_keeps_only_the_later_samples() {
        let mut h = Histogram::new();
        for _ in 0..1000 {
            h.record(10);
        }
        let earlier = h.clone();
        for _ in 0..100 {
            h.record(5_000);
        }
        let window = h.since(&earlier);
        assert_eq!(window.count(), 100);
        assert!((window.quantile_us(0.5) as f64 - 5000.0).abs() < 50.0);
        assert_eq!(window.mean_us().round(), 5000.0);
        assert_eq!(h.since(&h).count(), 0);
    }
}
