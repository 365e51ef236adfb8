//! The power test and the throughput test (TPC-H clause 5.3), and their
//! figures.
//!
//! - **Power test**: RF1, query stream 00 (the 22 queries one after the
//!   other), RF2, on one connection. Power@Size = 3600 × SF / the geometric
//!   mean of the 24 timing intervals (clause 5.4.1), with intervals shorter
//!   than 1/1000 of the longest raised to it (clause 5.4.1.4).
//! - **Throughput test**: `streams` query streams at once, each on its own
//!   thread, and one refresh stream running `streams` refresh pairs one
//!   after the other. Throughput@Size = streams × 22 × 3600 / Ts × SF, Ts
//!   the test's elapsed seconds (clause 5.4.2). `queries_per_hour` =
//!   streams × 22 × 3600 / Ts is Lee et al.'s "ratio of the number of
//!   queries executed over the measurement interval" (`000` Exp. 4).
//! - `qphh` = √(Power@Size × Throughput@Size) (clause 5.4.3).
//!
//! Query order: stream 00 runs the specification's order for stream 00
//! (Appendix A: 14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15,
//! 1, 10, 19, 5, 7, 12); stream `s` ≥ 1 runs a permutation drawn from the
//! run's seed and `s` (the specification's table for streams 01..40 is not
//! reproduced: a stated deviation). Substitution parameters are drawn per
//! stream and query from the seed by the rules of clause 2.4
//! ([`Params::random`]), or are the validation values everywhere when
//! asked. Timing intervals are not rounded to 0.1 s (clause 5.3.7.5 does),
//! so small scale factors keep their resolution.
//!
//! Invariant: the driver never changes data other than through RF1/RF2,
//! and a refresh pair is recorded in `tpch.meta` only after both of its
//! functions completed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use flushwise_engine::db::Database;

use crate::tpcc::random::{mix64, Xoshiro256StarStar};

use super::access::TpchDb;
use super::gen::Generator;
use super::load::require_loaded;
use super::query::{run_query, Params, QUERIES};
use super::refresh::{self, RefreshReport};
use super::TpchError;

/// Query orders are the simulator model's (one definition for both shells).
pub use flushwise_tpcc_model::tpch::{stream_order, STREAM_00_ORDER};

/// What to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Query streams of the throughput test (0 = no throughput test).
    pub streams: u32,
    pub power: bool,
    /// Run RF1/RF2 (off: the queries only; Power@Size then averages the 22
    /// query intervals).
    pub refresh: bool,
    /// Use the validation parameters for every query.
    pub validation_params: bool,
    pub seed: u64,
    /// Set from outside to stop after the queries running now.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            streams: 2,
            power: true,
            refresh: true,
            validation_params: false,
            seed: 1,
            interrupt: None,
        }
    }
}

/// One query execution.
#[derive(Clone, Debug, serde::Serialize)]
pub struct QueryTiming {
    /// `power` or `throughput`.
    pub test: &'static str,
    pub stream: u32,
    /// 1-based position in the stream.
    pub position: u32,
    pub query: u8,
    pub params: String,
    pub seconds: f64,
    pub rows: usize,
}

/// One refresh function execution.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RefreshTiming {
    pub test: &'static str,
    /// `RF1` or `RF2`.
    pub function: &'static str,
    #[serde(flatten)]
    pub report: RefreshReport,
}

/// One test (power or throughput).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TestReport {
    pub test: &'static str,
    pub seconds: f64,
    pub queries: Vec<QueryTiming>,
    pub refreshes: Vec<RefreshTiming>,
    /// Completed every query and refresh (not interrupted).
    pub complete: bool,
}

/// What a run did and its figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunReport {
    pub sf: f64,
    pub streams: u32,
    pub power: Option<TestReport>,
    pub throughput: Option<TestReport>,
    pub power_at_size: Option<f64>,
    pub throughput_at_size: Option<f64>,
    pub qphh: Option<f64>,
    /// Queries per hour of the throughput test (Lee et al.'s figure).
    pub queries_per_hour: Option<f64>,
}

/// What a caller sees of a run as it goes (all on the driver's threads).
pub trait Observer: Sync {
    /// A query ended.
    fn query(&self, _timing: &QueryTiming) {}
    /// `test` (`power` or `throughput`) is about to start.
    fn test_started(&self, _test: &'static str) {}
    /// `test` ended (every stream joined).
    fn test_ended(&self, _test: &'static str) {}
}

/// An observer that looks at nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// The parameters of each query of stream `stream`, by query number.
pub fn stream_params(config: &RunConfig, sf: f64, stream: u32) -> Vec<Params> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(mix64(config.seed ^ 0x9a4a_3e7e ^ (u64::from(stream) << 40)));
    (1..=QUERIES)
        .map(|q| {
            if config.validation_params {
                Params::validation(q)
            } else {
                Params::random(q, sf, &mut rng)
            }
        })
        .collect()
}

fn interrupted(config: &RunConfig) -> bool {
    config.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Runs one query stream; the observer sees each query as it ends.
fn run_stream(
    tables: &TpchDb<'_>,
    config: &RunConfig,
    sf: f64,
    test: &'static str,
    stream: u32,
    observer: &dyn Observer,
) -> Result<(Vec<QueryTiming>, bool), TpchError> {
    let params = stream_params(config, sf, stream);
    let mut out = Vec::with_capacity(22);
    for (i, q) in stream_order(config.seed, stream).iter().enumerate() {
        if interrupted(config) {
            return Ok((out, false));
        }
        let p = &params[usize::from(*q) - 1];
        let started = Instant::now();
        let answer = run_query(tables, p)?;
        let timing = QueryTiming {
            test,
            stream,
            position: i as u32 + 1,
            query: *q,
            params: p.describe(),
            seconds: started.elapsed().as_secs_f64(),
            rows: answer.rows.len(),
        };
        observer.query(&timing);
        out.push(timing);
    }
    Ok((out, true))
}

fn refresh_pair(
    db: &Database,
    generator: &Generator,
    test: &'static str,
    out: &mut Vec<RefreshTiming>,
    between: impl FnOnce() -> Result<bool, TpchError>,
) -> Result<bool, TpchError> {
    let pair = refresh::next_pair(db)?;
    out.push(RefreshTiming {
        test,
        function: "RF1",
        report: refresh::rf1(db, generator, pair)?,
    });
    let complete = between()?;
    out.push(RefreshTiming {
        test,
        function: "RF2",
        report: refresh::rf2(db, generator, pair)?,
    });
    refresh::record_pair(db, pair)?;
    Ok(complete)
}

/// Geometric mean of `seconds`, each raised to at least 1/1000 of the
/// longest (clause 5.4.1.4).
pub fn geometric_mean_clamped(seconds: &[f64]) -> f64 {
    let longest = seconds.iter().copied().fold(0.0, f64::max);
    if seconds.is_empty() || longest <= 0.0 {
        return 0.0;
    }
    let floor = longest / 1000.0;
    let log_sum: f64 = seconds.iter().map(|s| s.max(floor).ln()).sum();
    (log_sum / seconds.len() as f64).exp()
}

/// Runs the tests `config` asks for on a loaded database.
pub fn run(db: &Database, config: &RunConfig, observer: &dyn Observer) -> Result<RunReport, TpchError> {
    let marker = require_loaded(db)?;
    let scale = marker.scale()?;
    let sf = marker.sf;
    let tables = TpchDb::new(db)?;
    let generator = Generator::new(scale, marker.seed);
    let pairs_needed = u64::from(config.power) + u64::from(config.streams);
    if config.refresh && refresh::next_pair(db)? - 1 + pairs_needed > scale.refresh_pairs_max() {
        return Err(TpchError::Config {
            reason: format!(
                "this database has run {} refresh pairs of its {}; this run needs {pairs_needed} more: prepare it again or add --no-refresh",
                refresh::next_pair(db)? - 1,
                scale.refresh_pairs_max()
            ),
        });
    }
    let mut report = RunReport {
        sf,
        streams: config.streams,
        power: None,
        throughput: None,
        power_at_size: None,
        throughput_at_size: None,
        qphh: None,
        queries_per_hour: None,
    };
    if config.power {
        observer.test_started("power");
        let started = Instant::now();
        let mut refreshes = Vec::new();
        let (queries, complete) = if config.refresh {
            let mut result = (Vec::new(), false);
            let ran = refresh_pair(db, &generator, "power", &mut refreshes, || {
                result = run_stream(&tables, config, sf, "power", 0, observer)?;
                Ok(result.1)
            })?;
            (result.0, ran)
        } else {
            run_stream(&tables, config, sf, "power", 0, observer)?
        };
        let mut intervals: Vec<f64> = queries.iter().map(|q| q.seconds).collect();
        intervals.extend(refreshes.iter().map(|r| r.report.seconds));
        if complete {
            let g = geometric_mean_clamped(&intervals);
            report.power_at_size = (g > 0.0).then(|| 3600.0 * sf / g);
        }
        report.power = Some(TestReport {
            test: "power",
            seconds: started.elapsed().as_secs_f64(),
            queries,
            refreshes,
            complete,
        });
        observer.test_ended("power");
    }
    if config.streams > 0 && !interrupted(config) {
        observer.test_started("throughput");
        let started = Instant::now();
        let all_queries = Mutex::new(Vec::new());
        let refreshes = Mutex::new(Vec::new());
        let failures: Mutex<Vec<TpchError>> = Mutex::new(Vec::new());
        let complete = AtomicBool::new(true);
        let fail = |e: TpchError| {
            if let Ok(mut f) = failures.lock() {
                f.push(e);
            }
        };
        let panicked = std::thread::scope(|scope| {
            let mut handles = Vec::new();
            for stream in 1..=config.streams {
                let (tables, all_queries, complete, fail) = (&tables, &all_queries, &complete, &fail);
                handles.push((
                    stream,
                    scope.spawn(
                        move || match run_stream(tables, config, sf, "throughput", stream, observer) {
                            Ok((q, done)) => {
                                if !done {
                                    complete.store(false, Ordering::Relaxed);
                                }
                                if let Ok(mut all) = all_queries.lock() {
                                    all.extend(q);
                                }
                            }
                            Err(e) => fail(e),
                        },
                    ),
                ));
            }
            if config.refresh {
                let (generator, refreshes, complete, fail) = (&generator, &refreshes, &complete, &fail);
                handles.push((
                    0,
                    scope.spawn(move || {
                        let mut mine = Vec::new();
                        for _ in 0..config.streams {
                            if interrupted(config) {
                                complete.store(false, Ordering::Relaxed);
                                break;
                            }
                            if let Err(e) = refresh_pair(db, generator, "throughput", &mut mine, || Ok(true)) {
                                fail(e);
                                break;
                            }
                        }
                        if let Ok(mut r) = refreshes.lock() {
                            r.extend(mine);
                        }
                    }),
                ));
            }
            handles
                .into_iter()
                .find_map(|(stream, h)| h.join().is_err().then_some(stream))
        });
        if let Some(stream) = panicked {
            return Err(TpchError::StreamPanic { stream });
        }
        if let Some(e) = failures
            .into_inner()
            .ok()
            .and_then(|mut f| (!f.is_empty()).then(|| f.remove(0)))
        {
            return Err(e);
        }
        let seconds = started.elapsed().as_secs_f64();
        observer.test_ended("throughput");
        let complete = complete.load(Ordering::Relaxed);
        let queries: Vec<QueryTiming> = all_queries.into_inner().unwrap_or_default();
        if complete && seconds > 0.0 {
            let qph = f64::from(config.streams) * 22.0 * 3600.0 / seconds;
            report.queries_per_hour = Some(qph);
            report.throughput_at_size = Some(qph * sf);
        }
        report.throughput = Some(TestReport {
            test: "throughput",
            seconds,
            queries,
            refreshes: refreshes.into_inner().unwrap_or_default(),
            complete,
        });
    }
    if let (Some(p), Some(t)) = (report.power_at_size, report.throughput_at_size) {
        report.qphh = Some((p * t).sqrt());
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_orders_are_permutations_and_stream_00_is_the_specifications() {
        assert_eq!(stream_order(9, 0), STREAM_00_ORDER);
        for s in 1..20 {
            let mut o = stream_order(9, s).to_vec();
            assert_ne!(o, STREAM_00_ORDER.to_vec(), "stream {s} reshuffled");
            o.sort_unstable();
            assert_eq!(o, (1..=22).collect::<Vec<u8>>());
        }
        assert_eq!(stream_order(9, 3), stream_order(9, 3));
    }

    #[test]
    fn the_power_mean_raises_tiny_intervals_to_a_thousandth_of_the_longest() {
        assert!((geometric_mean_clamped(&[2.0, 8.0]) - 4.0).abs() < 1e-12);
        // 0.0001 is raised to 10/1000 = 0.01: mean of (10, 0.01) = sqrt(0.1).
        assert!((geometric_mean_clamped(&[10.0, 0.0001]) - 0.1f64.sqrt()).abs() < 1e-12);
        assert_eq!(geometric_mean_clamped(&[]), 0.0);
    }
}
