//! The load of 003 on the engine: UPDATE requests, each `UPDATE wisconsin
//! SET unique3=? WHERE unique1=?` with both values uniform in `0..n`, as
//! one committed transaction.
//!
//! Two ways to offer them:
//!
//! - open loop ([`Arrivals::Poisson`]): one generator thread draws a
//!   Poisson arrival schedule from the seed (exponential gaps of mean
//!   1/lambda; the arrival times depend on the seed, the keys and values on
//!   the seed and the database's run number, never on the engine's speed), sleeps until each scheduled arrival and queues
//!   the request; a pool of worker threads (003: 200) takes requests in
//!   arrival order. A request's response time runs from its *scheduled*
//!   arrival to the return of its commit, so time spent waiting for a free
//!   worker, and a generator that woke late, both count, as a client's
//!   would.
//! - closed loop ([`Arrivals::Closed`]): N jobs, each issuing its next
//!   request as soon as the previous one committed (003's N/T and N/P
//!   graphs); a request's arrival is its issue time.
//!
//! Every request is recorded (arrival, start, end, key, value) and the
//! engine's pool counters are sampled every `sample_interval`; the
//! per-interval series are computed from both afterwards
//! ([`super::series`]).
//!
//! A warm-up (`RunConfig::warmup`) offers the same load before the
//! measured part without recording it; times still count from the run's
//! start.
//!
//! Limits: at most `backlog_max` requests wait for a worker (past it the
//! run is overloaded: the generator stops and the report says so); after
//! the offered duration, workers get at most `drain_max` to finish the
//! backlog, and requests still waiting then are counted as unserved.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use flushwise_engine::db::{Database, IndexId};

use crate::tpcc::random::{stream, Rng64};

use super::load::{next_run_number, require_loaded};
use super::schema::Tuple;
use super::WisconsinError;

/// Largest worker pool and closed-loop population (one thread each).
pub const THREADS_MAX: u32 = 4096;
/// Highest offered rate, requests per second.
pub const RATE_MAX: f64 = 1e6;

/// How requests are offered.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Arrivals {
    /// Open loop: Poisson arrivals at `rate_per_s`, served by `workers`.
    Poisson { rate_per_s: f64, workers: u32 },
    /// Closed loop: `jobs` requests in the system at all times.
    Closed { jobs: u32 },
}

impl Arrivals {
    /// `open-12.5` or `closed-64`: a run's name in file names.
    pub fn label(&self) -> String {
        match self {
            Arrivals::Poisson { rate_per_s, .. } => format!("open-{rate_per_s}"),
            Arrivals::Closed { jobs } => format!("closed-{jobs}"),
        }
    }
}

/// A run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub arrivals: Arrivals,
    /// Requests are offered this long before the measured part and not
    /// recorded (the pool fills with dirty pages meanwhile).
    pub warmup: Duration,
    /// How long requests are offered and recorded after the warm-up.
    pub duration: Duration,
    pub seed: u64,
    /// Pool counters are sampled this often.
    pub sample_interval: Duration,
    pub backlog_max: usize,
    pub drain_max: Duration,
    /// Set (by Ctrl-C) to end the run early.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl RunConfig {
    pub fn new(arrivals: Arrivals, duration: Duration, seed: u64) -> Self {
        Self {
            arrivals,
            warmup: Duration::ZERO,
            duration,
            seed,
            sample_interval: Duration::from_secs(1),
            backlog_max: 100_000,
            drain_max: Duration::from_secs(30),
            interrupt: None,
        }
    }

    fn validate(&self) -> Result<(), WisconsinError> {
        let bad = |reason: String| Err(WisconsinError::Config { reason });
        match self.arrivals {
            Arrivals::Poisson { rate_per_s, workers } => {
                if !(rate_per_s.is_finite() && rate_per_s > 0.0 && rate_per_s <= RATE_MAX) {
                    return bad(format!(
                        "--rate {rate_per_s}: a rate above 0 and at most {RATE_MAX} per second"
                    ));
                }
                if !(1..=THREADS_MAX).contains(&workers) {
                    return bad(format!("--workers {workers}: from 1 to {THREADS_MAX}"));
                }
            }
            Arrivals::Closed { jobs } => {
                if !(1..=THREADS_MAX).contains(&jobs) {
                    return bad(format!("--jobs {jobs}: from 1 to {THREADS_MAX}"));
                }
            }
        }
        if self.duration.is_zero() {
            return bad("--duration: must be positive".into());
        }
        if self.sample_interval < Duration::from_millis(10) {
            return bad("--sample-interval: at least 10ms".into());
        }
        if self.backlog_max == 0 {
            return bad("backlog_max: at least 1".into());
        }
        Ok(())
    }
}

/// One request. Times are microseconds since the run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Request {
    pub seq: u64,
    /// Scheduled arrival (open loop) or issue time (closed loop).
    pub arrival_us: u64,
    /// A worker took it.
    pub start_us: u64,
    /// Its commit returned.
    pub end_us: u64,
    pub unique1: u32,
    pub unique3: u32,
}

impl Request {
    pub fn response_us(&self) -> u64 {
        self.end_us.saturating_sub(self.arrival_us)
    }
}

/// The engine's cumulative pool counters and gauges at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub t_us: u64,
    pub reads: u64,
    /// Pages written by flush-list batches.
    pub flush_list_pages: u64,
    /// Dirty pages written by LRU batches.
    pub lru_batch_flush_pages: u64,
    /// Pages a cleaner wrote without evicting them (the `flushwise`
    /// policy's and DB2's cleaning ahead of the LRU tail).
    #[serde(default)]
    pub cleaner_clean_pages: u64,
    /// Single-page flushes by user threads (sync replacement writes).
    pub sync_replacement_writes: u64,
    /// Sync preflush by user threads (sync recoverability writes).
    pub sync_recoverability_writes: u64,
    /// User waits for a free frame.
    pub wait_free: u64,
    pub user_stall_us: u64,
    pub dirty_pages: u32,
    pub free_pages: u32,
    pub checkpoint_age_bytes: u64,
}

impl Sample {
    fn capture(db: &Database, t_us: u64) -> Self {
        let m = db.shell().metrics();
        let c = &m.counters;
        Self {
            t_us,
            reads: c.reads,
            flush_list_pages: c.flush_list_pages,
            lru_batch_flush_pages: c.lru_batch_flush_pages,
            cleaner_clean_pages: c.cleaner_clean_pages,
            sync_replacement_writes: c.sync_replacement_writes,
            sync_recoverability_writes: c.sync_recoverability_writes,
            wait_free: c.wait_free,
            user_stall_us: c.user_stall_us(),
            dirty_pages: m.Innodb_buffer_pool_pages_dirty,
            free_pages: m.Innodb_buffer_pool_pages_free,
            checkpoint_age_bytes: m.log_lsn_checkpoint_age,
        }
    }

    /// Pages written of every kind.
    pub fn pages_written(&self) -> u64 {
        self.flush_list_pages
            + self.lru_batch_flush_pages
            + self.sync_replacement_writes
            + self.sync_recoverability_writes
    }
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunReport {
    pub arrivals: Arrivals,
    pub n: u64,
    pub seed: u64,
    /// This database's run number (keys and values depend on it).
    pub run_number: u64,
    /// Requests that arrived before this were not recorded.
    pub warmup_s: f64,
    /// The measured part, after the warm-up.
    pub duration_s: f64,
    /// Wall time from start to the last worker's exit.
    pub elapsed_s: f64,
    /// Requests scheduled (open loop) or issued (closed loop) in the
    /// measured part.
    pub offered: u64,
    /// Committed requests, in completion order.
    #[serde(skip)]
    pub requests: Vec<Request>,
    /// Open loop: requests still waiting when the drain time ran out.
    pub unserved: u64,
    /// The backlog reached `backlog_max` and the generator stopped.
    pub overloaded: bool,
    pub interrupted: bool,
    #[serde(skip)]
    pub samples: Vec<Sample>,
    /// Longest the generator woke after a scheduled arrival, microseconds.
    pub generator_late_us_max: u64,
}

/// The arrival schedule of an open-loop run: (arrival µs, unique1,
/// unique3) in arrival order, a pure function of its arguments. The
/// arrival times depend on `seed` (and the rate) only; the keys and values
/// on `seed` and `run`, the database's run number
/// ([`super::load::next_run_number`]), so two runs on one database never
/// write the same values.
pub fn poisson_schedule(rate_per_s: f64, n: u64, seed: u64, run: u64) -> impl Iterator<Item = (u64, u32, u32)> {
    let mut gaps = stream(seed, &[0x3003, 1]);
    let mut keys = stream(seed, &[0x3003, 3, run]);
    let mut t_s = 0.0f64;
    std::iter::from_fn(move || {
        // Exponential gap by inversion; 53 random bits, never ln(0).
        let u = ((gaps.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        t_s += -u.ln() / rate_per_s;
        let unique1 = keys.below(n) as u32;
        let unique3 = keys.below(n) as u32;
        Some(((t_s * 1e6) as u64, unique1, unique3))
    })
}

/// One update, committed; `false` if the key does not exist.
fn update(db: &Database, relation: IndexId, unique1: u32, unique3: u32) -> Result<bool, WisconsinError> {
    let key = Tuple::key_of(unique1);
    let mut malformed = false;
    let found = db.run(|t| {
        let Some(value) = t.get_for_update(relation, &key)? else {
            return Ok(false);
        };
        match Tuple::with_unique3(&value, unique3) {
            Some(v) => t.update(relation, &key, &v),
            None => {
                malformed = true;
                Ok(false)
            }
        }
    })?;
    if malformed {
        return Err(WisconsinError::Corrupt {
            reason: format!("tuple unique1={unique1}: value too short to hold unique3"),
        });
    }
    Ok(found)
}

/// A queued request: (seq, arrival µs, unique1, unique3).
type Queued = (u64, u64, u32, u32);

/// Requests waiting for a worker, and whether the generator has ended.
struct Queue {
    items: Mutex<(VecDeque<Queued>, bool)>,
    ready: Condvar,
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// Runs the load against a loaded database.
pub fn run(db: &Database, config: &RunConfig) -> Result<RunReport, WisconsinError> {
    config.validate()?;
    let (marker, relation) = require_loaded(db)?;
    let n = marker.n;
    let run_number = next_run_number(db)?;
    let start = Instant::now();
    let done = AtomicBool::new(false);
    let interrupted = || config.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
    let first_error: Mutex<Option<WisconsinError>> = Mutex::new(None);
    let fail = |e: WisconsinError| {
        if let Ok(mut slot) = first_error.lock() {
            slot.get_or_insert(e);
        }
    };
    let failed = || first_error.lock().map(|e| e.is_some()).unwrap_or(true);
    let records: Mutex<Vec<Request>> = Mutex::new(Vec::new());
    let samples: Mutex<Vec<Sample>> = Mutex::new(vec![Sample::capture(db, 0)]);
    let offered = AtomicU64::new(0);
    let unserved = AtomicU64::new(0);
    let overloaded = AtomicBool::new(false);
    let late_max = AtomicU64::new(0);
    let warmup_us = micros(config.warmup);
    let duration_us = micros(config.warmup + config.duration);
    let drain_deadline = config.warmup + config.duration + config.drain_max;

    std::thread::scope(|scope| {
        // The sampler: pool counters every interval until the workers end.
        scope.spawn(|| {
            let mut next = config.sample_interval;
            while !done.load(Ordering::Acquire) {
                let now = start.elapsed();
                if now >= next {
                    let s = Sample::capture(db, micros(now));
                    if let Ok(mut v) = samples.lock() {
                        v.push(s);
                    }
                    next += config.sample_interval;
                } else {
                    std::thread::sleep((next - now).min(Duration::from_millis(20)));
                }
            }
        });
        let mut workers = Vec::new();
        match config.arrivals {
            Arrivals::Poisson {
                rate_per_s,
                workers: count,
            } => {
                let queue = Arc::new(Queue {
                    items: Mutex::new((VecDeque::new(), false)),
                    ready: Condvar::new(),
                });
                for _ in 0..count {
                    let queue = Arc::clone(&queue);
                    let (records, fail, failed, unserved) = (&records, &fail, &failed, &unserved);
                    workers.push(scope.spawn(move || {
                        let mut mine = Vec::new();
                        loop {
                            let item = {
                                let Ok(mut q) = queue.items.lock() else { return };
                                loop {
                                    if let Some(item) = q.0.pop_front() {
                                        break Some(item);
                                    }
                                    if q.1 {
                                        break None;
                                    }
                                    q = match queue.ready.wait(q) {
                                        Ok(q) => q,
                                        Err(_) => return,
                                    };
                                }
                            };
                            let Some((seq, arrival_us, unique1, unique3)) = item else {
                                break;
                            };
                            if failed() || start.elapsed() > drain_deadline {
                                unserved.fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                            let start_us = micros(start.elapsed());
                            match update(db, relation, unique1, unique3) {
                                Ok(true) if arrival_us < warmup_us => {}
                                Ok(true) => mine.push(Request {
                                    seq,
                                    arrival_us,
                                    start_us,
                                    end_us: micros(start.elapsed()),
                                    unique1,
                                    unique3,
                                }),
                                Ok(false) => fail(WisconsinError::Corrupt {
                                    reason: format!("tuple unique1={unique1} is missing"),
                                }),
                                Err(e) => fail(e),
                            }
                        }
                        if let Ok(mut r) = records.lock() {
                            r.extend(mine);
                        }
                    }));
                }
                // The generator, on this thread.
                for (seq, (arrival_us, unique1, unique3)) in
                    poisson_schedule(rate_per_s, n, config.seed, run_number).enumerate()
                {
                    if arrival_us >= duration_us || interrupted() || failed() {
                        break;
                    }
                    let now = micros(start.elapsed());
                    if arrival_us > now {
                        std::thread::sleep(Duration::from_micros(arrival_us - now));
                    } else {
                        late_max.fetch_max(now - arrival_us, Ordering::Relaxed);
                    }
                    let Ok(mut q) = queue.items.lock() else { break };
                    if q.0.len() >= config.backlog_max {
                        overloaded.store(true, Ordering::Relaxed);
                        break;
                    }
                    q.0.push_back((seq as u64, arrival_us, unique1, unique3));
                    if arrival_us >= warmup_us {
                        offered.fetch_add(1, Ordering::Relaxed);
                    }
                    drop(q);
                    queue.ready.notify_one();
                }
                if let Ok(mut q) = queue.items.lock() {
                    q.1 = true;
                }
                queue.ready.notify_all();
            }
            Arrivals::Closed { jobs } => {
                let next_seq = &offered;
                for job in 0..jobs {
                    let (records, fail, failed) = (&records, &fail, &failed);
                    let interrupted = &interrupted;
                    workers.push(scope.spawn(move || {
                        let mut rng = stream(config.seed, &[0x3003, 2, u64::from(job), run_number]);
                        let mut mine = Vec::new();
                        loop {
                            let arrival_us = micros(start.elapsed());
                            if arrival_us >= duration_us || interrupted() || failed() {
                                break;
                            }
                            let measured = arrival_us >= warmup_us;
                            let seq = if measured {
                                next_seq.fetch_add(1, Ordering::Relaxed)
                            } else {
                                u64::MAX
                            };
                            let unique1 = rng.below(n) as u32;
                            let unique3 = rng.below(n) as u32;
                            match update(db, relation, unique1, unique3) {
                                Ok(true) if !measured => {}
                                Ok(true) => mine.push(Request {
                                    seq,
                                    arrival_us,
                                    start_us: arrival_us,
                                    end_us: micros(start.elapsed()),
                                    unique1,
                                    unique3,
                                }),
                                Ok(false) => fail(WisconsinError::Corrupt {
                                    reason: format!("tuple unique1={unique1} is missing"),
                                }),
                                Err(e) => fail(e),
                            }
                        }
                        if let Ok(mut r) = records.lock() {
                            r.extend(mine);
                        }
                    }));
                }
            }
        }
        for w in workers {
            if w.join().is_err() {
                fail(WisconsinError::Config {
                    reason: "a worker thread panicked".into(),
                });
            }
        }
        if let Ok(mut v) = samples.lock() {
            v.push(Sample::capture(db, micros(start.elapsed())));
        }
        done.store(true, Ordering::Release);
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut requests = records.into_inner().unwrap_or_default();
    requests.sort_by_key(|r| (r.end_us, r.seq));
    let mut samples = samples.into_inner().unwrap_or_default();
    samples.sort_by_key(|s| s.t_us);
    Ok(RunReport {
        arrivals: config.arrivals,
        n,
        seed: config.seed,
        run_number,
        warmup_s: config.warmup.as_secs_f64(),
        duration_s: config.duration.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        offered: offered.into_inner(),
        requests,
        unserved: unserved.into_inner(),
        overloaded: overloaded.into_inner(),
        interrupted: interrupted(),
        samples,
        generator_late_us_max: late_max.into_inner(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_schedule_is_seeded_and_has_the_rate() {
        let a: Vec<_> = poisson_schedule(25.0, 1000, 9, 0).take(20_000).collect();
        let b: Vec<_> = poisson_schedule(25.0, 1000, 9, 0).take(20_000).collect();
        assert_eq!(a, b);
        let c: Vec<_> = poisson_schedule(25.0, 1000, 10, 0).take(10).collect();
        assert_ne!(a[..10], c[..]);
        // Another run on the database: the same arrival times, other keys.
        let d: Vec<_> = poisson_schedule(25.0, 1000, 9, 1).take(10).collect();
        assert!(a.iter().zip(&d).all(|(x, y)| x.0 == y.0));
        assert_ne!(a[..10], d[..]);
        let last_s = a.last().unwrap().0 as f64 / 1e6;
        let rate = a.len() as f64 / last_s;
        // 20,000 exponential gaps: the mean's relative sd is 1/sqrt(20000) = 0.7 %.
        assert!((rate - 25.0).abs() < 25.0 * 0.03, "rate {rate}");
        assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(a.iter().all(|&(_, k, v)| k < 1000 && v < 1000));
        // Gaps' coefficient of variation is 1 for exponential gaps.
        let gaps: Vec<f64> = a.windows(2).map(|w| (w[1].0 - w[0].0) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.05, "cv {}", sd / mean);
    }

    #[test]
    fn labels_name_the_mode() {
        assert_eq!(
            Arrivals::Poisson {
                rate_per_s: 12.5,
                workers: 200
            }
            .label(),
            "open-12.5"
        );
        assert_eq!(Arrivals::Closed { jobs: 64 }.label(), "closed-64");
    }
}
