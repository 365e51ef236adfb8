//! Per-interval series of a run: arrivals, completions, response times and
//! the flush activity beside them, from the request records and the pool
//! counter samples; the response-time distribution.

use super::driver::{Request, Sample};

/// One interval `(t_s - interval_s, t_s]` of a run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct IntervalRow {
    /// End of the interval, seconds since the run started.
    pub t_s: f64,
    /// Requests whose (scheduled) arrival fell in the interval.
    pub arrivals: u64,
    /// Requests whose commit returned in the interval.
    pub completions: u64,
    /// Over the requests completed in the interval (0 when none).
    pub response_mean_s: f64,
    pub response_p99_s: f64,
    pub response_max_s: f64,
    /// Pages written in the interval, by kind (from the pool counters
    /// sampled nearest the interval's ends).
    pub flush_list_pages: u64,
    pub lru_batch_flush_pages: u64,
    pub cleaner_clean_pages: u64,
    pub sync_replacement_writes: u64,
    pub sync_recoverability_writes: u64,
    pub reads: u64,
    /// Gauges at the interval's end sample.
    pub dirty_pages: u32,
    pub free_pages: u32,
    pub checkpoint_age_bytes: u64,
}

/// The `q`-quantile (0..=1) of sorted values, nearest rank; 0 when empty.
pub fn quantile_sorted(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The latest sample at or before `t_us` (the first if none is).
fn sample_at(samples: &[Sample], t_us: u64) -> Sample {
    let i = samples.partition_point(|s| s.t_us <= t_us);
    samples.get(i.saturating_sub(1)).copied().unwrap_or_default()
}

/// Rows of `interval_us` from 0 to the last completion or sample.
/// `samples` must be sorted by time.
pub fn intervals(requests: &[Request], samples: &[Sample], interval_us: u64) -> Vec<IntervalRow> {
    assert!(interval_us > 0);
    let end_us = requests
        .iter()
        .map(|r| r.end_us)
        .chain(samples.iter().map(|s| s.t_us))
        .max()
        .unwrap_or(0);
    let buckets = end_us.div_ceil(interval_us).max(1) as usize;
    let mut arrivals = vec![0u64; buckets];
    let mut responses: Vec<Vec<u64>> = vec![Vec::new(); buckets];
    let bucket = |t: u64| ((t.saturating_sub(1)) / interval_us).min(buckets as u64 - 1) as usize;
    for r in requests {
        arrivals[bucket(r.arrival_us)] += 1;
        responses[bucket(r.end_us)].push(r.response_us());
    }
    (0..buckets)
        .map(|i| {
            let t0 = i as u64 * interval_us;
            let t1 = t0 + interval_us;
            let (a, b) = (sample_at(samples, t0), sample_at(samples, t1));
            let rt = &mut responses[i];
            rt.sort_unstable();
            let mean = if rt.is_empty() {
                0.0
            } else {
                rt.iter().sum::<u64>() as f64 / rt.len() as f64 / 1e6
            };
            IntervalRow {
                t_s: t1 as f64 / 1e6,
                arrivals: arrivals[i],
                completions: rt.len() as u64,
                response_mean_s: mean,
                response_p99_s: quantile_sorted(rt, 0.99) as f64 / 1e6,
                response_max_s: rt.last().copied().unwrap_or(0) as f64 / 1e6,
                flush_list_pages: b.flush_list_pages.saturating_sub(a.flush_list_pages),
                lru_batch_flush_pages: b.lru_batch_flush_pages.saturating_sub(a.lru_batch_flush_pages),
                cleaner_clean_pages: b.cleaner_clean_pages.saturating_sub(a.cleaner_clean_pages),
                sync_replacement_writes: b.sync_replacement_writes.saturating_sub(a.sync_replacement_writes),
                sync_recoverability_writes: b
                    .sync_recoverability_writes
                    .saturating_sub(a.sync_recoverability_writes),
                reads: b.reads.saturating_sub(a.reads),
                dirty_pages: b.dirty_pages,
                free_pages: b.free_pages,
                checkpoint_age_bytes: b.checkpoint_age_bytes,
            }
        })
        .collect()
}

/// Summary of response times, seconds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResponseSummary {
    pub count: u64,
    pub mean_s: f64,
    pub p50_s: f64,
    pub p90_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

impl ResponseSummary {
    pub fn of(requests: &[Request]) -> Self {
        let mut rt: Vec<u64> = requests.iter().map(Request::response_us).collect();
        rt.sort_unstable();
        Self::of_sorted_us(&rt)
    }

    pub fn of_sorted_us(rt: &[u64]) -> Self {
        let s = |q: f64| quantile_sorted(rt, q) as f64 / 1e6;
        Self {
            count: rt.len() as u64,
            mean_s: if rt.is_empty() {
                0.0
            } else {
                rt.iter().sum::<u64>() as f64 / rt.len() as f64 / 1e6
            },
            p50_s: s(0.5),
            p90_s: s(0.9),
            p99_s: s(0.99),
            max_s: rt.last().copied().unwrap_or(0) as f64 / 1e6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(arrival_us: u64, end_us: u64) -> Request {
        Request {
            seq: 0,
            arrival_us,
            start_us: arrival_us,
            end_us,
            unique1: 0,
            unique3: 0,
        }
    }

    #[test]
    fn intervals_count_arrivals_and_completions_where_they_fell() {
        let requests = [req(100, 200), req(900_000, 1_500_000), req(1_200_000, 1_300_000)];
        let samples = [
            Sample::default(),
            Sample {
                t_us: 1_000_000,
                flush_list_pages: 5,
                ..Sample::default()
            },
            Sample {
                t_us: 2_000_000,
                flush_list_pages: 12,
                dirty_pages: 3,
                ..Sample::default()
            },
        ];
        let rows = intervals(&requests, &samples, 1_000_000);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].arrivals, rows[0].completions), (2, 1));
        assert_eq!((rows[1].arrivals, rows[1].completions), (1, 2));
        assert_eq!((rows[0].flush_list_pages, rows[1].flush_list_pages), (5, 7));
        assert_eq!(rows[1].dirty_pages, 3);
        assert!((rows[1].response_max_s - 0.6).abs() < 1e-9);
        assert!((rows[1].response_mean_s - 0.35).abs() < 1e-9);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_sorted(&v, 0.99), 99);
        assert_eq!(quantile_sorted(&v, 0.5), 50);
        assert_eq!(quantile_sorted(&v, 1.0), 100);
        assert_eq!(quantile_sorted(&[], 0.5), 0);
    }
}
