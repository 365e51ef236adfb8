//! Paper 003's performance model of InnoDB under a write-heavy load, as a
//! seeded discrete-event simulation, and its fitting procedure (003 §4).
//!
//! The model (003 Figure 4): a request passes a network delay (ND: a
//! constant plus an exponential, an infinite server), then waits in a job
//! queue (JQ) for one server, FIFO; its service is Exp(E[Tproc]). When a
//! request is served its client is answered and one dirty-page equivalent
//! enters the dirty-page buffer (DPB). When the DPB holds DPBmax the server
//! stops serving the JQ and serves dirty pages, Exp(E[Tdp]) each, until
//! the DPB is empty, then returns to the JQ. `dpb_max = 0` disables the
//! DPB: the model is then an M/M/1 queue behind the delay.
//!
//! Fitting (003 §4.2), each rule a function here so it is tested:
//! - pauses: in a saturated run (many concurrent requests), inter-departure
//!   gaps above a threshold tau are pauses; tau = ln(10^4) x (median gap /
//!   ln 2), the gap an exponential inter-departure time at the measured
//!   median exceeds with probability 10^-4 ([`pause_threshold`]); pauses
//!   count only when at least 3 and 10 x as many as chance would give;
//! - the flush period p: the median time between the starts of successive
//!   pauses ([`detect_pauses`]); cross-checked by the dominant period of the
//!   autocorrelation of departures binned in 100 ms ([`acf_period`]); the
//!   period of response-time spikes that are not pauses (requests slowed,
//!   not stopped) is the dominant period of the mean response time per
//!   100 ms ([`response_period`]), or, robust to a jittering period, the
//!   median time between spike events: answers over 5x the median
//!   response time, grouped when less than 1 s apart ([`spikes`]);
//! - DPBmax = P x p (P the saturated throughput); E[Tdp] = mean pause /
//!   DPBmax; E[Tproc] = 1/P - E[Tdp];
//! - the delay, from a run with one request in the system: E[Tnd] = E[T] -
//!   E[Tproc] - E[Tdp] (003's formula; clamped at 0, the raw value kept),
//!   split into constant + Exp(m) by the variance: Var(T) = m^2 +
//!   E[Tproc]^2 + Var(flush share), the flush share being DPBmax dirty pages
//!   with probability 1/DPBmax.
//!
//! Nothing here reads a clock or a file: times are seconds as `f64`.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use flushwise_tpcc_model::rng::{Rng64, Xoshiro256StarStar};

/// The model's parameters (003 Table 1's rows).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelParams {
    /// E[Tproc], seconds.
    pub tproc_mean_s: f64,
    /// Tnd = constant + Exp(mean).
    pub tnd_const_s: f64,
    pub tnd_exp_mean_s: f64,
    /// 0: no dirty-page buffer.
    pub dpb_max: u32,
    /// E[Tdp], seconds.
    pub tdp_mean_s: f64,
}

impl ModelParams {
    /// 003 Table 1: Tproc Exp(0.0269), Tnd 0.0025 + Exp(0.00049), DPBmax
    /// 111, Tdp Exp(0.00433).
    pub const PAPER: ModelParams = ModelParams {
        tproc_mean_s: 0.0269,
        tnd_const_s: 0.0025,
        tnd_exp_mean_s: 0.00049,
        dpb_max: 111,
        tdp_mean_s: 0.00433,
    };

    fn validate(&self) -> Result<(), String> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !(ok(self.tproc_mean_s) && self.tproc_mean_s > 0.0) {
            return Err(format!("E[Tproc] {} s: must be positive", self.tproc_mean_s));
        }
        if !(ok(self.tnd_const_s) && ok(self.tnd_exp_mean_s) && ok(self.tdp_mean_s)) {
            return Err("Tnd and Tdp must be finite and non-negative".into());
        }
        Ok(())
    }

    /// Saturated throughput: one request and one dirty page per request.
    pub fn capacity_per_s(&self) -> f64 {
        let per_request = self.tproc_mean_s + if self.dpb_max > 0 { self.tdp_mean_s } else { 0.0 };
        1.0 / per_request
    }
}

/// One simulated request: arrival (issue) and answer, seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimRequest {
    pub arrival_s: f64,
    pub end_s: f64,
}

impl SimRequest {
    pub fn response_s(&self) -> f64 {
        self.end_s - self.arrival_s
    }
}

/// What a simulation produced.
#[derive(Clone, Debug, Default)]
pub struct SimOutcome {
    /// Answered requests in answer order.
    pub requests: Vec<SimRequest>,
    /// When each DPB flush began.
    pub flush_starts_s: Vec<f64>,
    pub duration_s: f64,
}

/// Largest number of events one simulation may process.
pub const SIM_EVENTS_MAX: u64 = 200_000_000;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Event {
    /// A new request is issued (open loop: the next arrival; closed loop:
    /// job `job` issues again).
    Issue { job: u32 },
    /// Request `id` leaves the delay and joins the JQ.
    EnterQueue { id: usize },
    /// The server finishes its current piece of work.
    ServiceDone,
}

#[derive(Clone, Copy, Debug)]
struct Timed {
    t: f64,
    seq: u64,
    event: Event,
}

impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timed {
    // A min-heap on (time, sequence) in a max-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        other.t.total_cmp(&self.t).then(other.seq.cmp(&self.seq))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Server {
    Idle,
    Request(usize),
    DirtyPage,
}

/// Exponential with `mean` (0 gives 0).
fn exp(rng: &mut Xoshiro256StarStar, mean: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -mean * u.ln()
}

enum Load {
    Open { rate_per_s: f64 },
    Closed { jobs: u32 },
}

struct Sim {
    p: ModelParams,
    rng: Xoshiro256StarStar,
    heap: BinaryHeap<Timed>,
    seq: u64,
    /// Per request: issue time and job.
    issued: Vec<(f64, u32)>,
    jq: VecDeque<usize>,
    server: Server,
    dpb: u32,
    in_flush: bool,
    out: SimOutcome,
    /// Request service times drawn from these (seconds, mean E[Tproc])
    /// instead of Exp(E[Tproc]): see [`simulate_open_with_service`].
    service: Option<Vec<f64>>,
}

impl Sim {
    fn push(&mut self, t: f64, event: Event) {
        self.seq += 1;
        self.heap.push(Timed {
            t,
            seq: self.seq,
            event,
        });
    }

    fn issue(&mut self, t: f64, job: u32) {
        let id = self.issued.len();
        self.issued.push((t, job));
        let delay = self.p.tnd_const_s + exp(&mut self.rng, self.p.tnd_exp_mean_s);
        self.push(t + delay, Event::EnterQueue { id });
    }

    /// The idle server takes its next piece of work: dirty pages while a
    /// flush is on (it began when the DPB reached DPBmax and lasts until
    /// the DPB is empty), else the JQ's head.
    fn dispatch(&mut self, t: f64) {
        debug_assert_eq!(self.server, Server::Idle);
        if self.p.dpb_max > 0 && !self.in_flush && self.dpb >= self.p.dpb_max {
            self.in_flush = true;
            self.out.flush_starts_s.push(t);
        }
        if self.in_flush {
            self.server = Server::DirtyPage;
            let s = exp(&mut self.rng, self.p.tdp_mean_s);
            self.push(t + s, Event::ServiceDone);
        } else if let Some(id) = self.jq.pop_front() {
            self.server = Server::Request(id);
            let s = match &self.service {
                Some(times) => times[self.rng.below(times.len() as u64) as usize],
                None => exp(&mut self.rng, self.p.tproc_mean_s),
            };
            self.push(t + s, Event::ServiceDone);
        }
    }

    fn run(mut self, load: Load, duration_s: f64) -> Result<SimOutcome, String> {
        match load {
            Load::Open { .. } => self.push(0.0, Event::Issue { job: 0 }),
            Load::Closed { jobs } => {
                for job in 0..jobs {
                    self.push(0.0, Event::Issue { job });
                }
            }
        }
        let mut events = 0u64;
        while let Some(Timed { t, event, .. }) = self.heap.pop() {
            events += 1;
            if events > SIM_EVENTS_MAX {
                return Err(format!("the model simulation passed {SIM_EVENTS_MAX} events"));
            }
            match event {
                Event::Issue { job } => {
                    if t >= duration_s {
                        continue;
                    }
                    self.issue(t, job);
                    if let Load::Open { rate_per_s } = load {
                        let next = t + exp(&mut self.rng, 1.0 / rate_per_s);
                        self.push(next, Event::Issue { job: 0 });
                    }
                }
                Event::EnterQueue { id } => {
                    self.jq.push_back(id);
                    if self.server == Server::Idle {
                        self.dispatch(t);
                    }
                }
                Event::ServiceDone => {
                    match self.server {
                        Server::Request(id) => {
                            let (arrival_s, job) = self.issued[id];
                            self.out.requests.push(SimRequest { arrival_s, end_s: t });
                            if self.p.dpb_max > 0 {
                                self.dpb += 1;
                            }
                            if let Load::Closed { .. } = load {
                                self.push(t, Event::Issue { job });
                            }
                        }
                        Server::DirtyPage => {
                            self.dpb -= 1;
                        }
                        Server::Idle => unreachable!("a service ended on an idle server"),
                    }
                    self.server = Server::Idle;
                    if self.dpb == 0 {
                        self.in_flush = false;
                    }
                    self.dispatch(t);
                }
            }
        }
        self.out.duration_s = duration_s;
        Ok(self.out)
    }
}

fn new_sim(p: &ModelParams, seed: u64) -> Result<Sim, String> {
    p.validate()?;
    Ok(Sim {
        p: *p,
        rng: Xoshiro256StarStar::seed_from_u64(seed ^ 0x0003_0003),
        heap: BinaryHeap::new(),
        seq: 0,
        issued: Vec::new(),
        jq: VecDeque::new(),
        server: Server::Idle,
        dpb: 0,
        in_flush: false,
        out: SimOutcome::default(),
        service: None,
    })
}

/// Poisson arrivals at `rate_per_s` for `duration_s` (every request issued
/// before the end is answered).
pub fn simulate_open(p: &ModelParams, rate_per_s: f64, duration_s: f64, seed: u64) -> Result<SimOutcome, String> {
    if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
        return Err(format!("rate {rate_per_s}: must be positive"));
    }
    if rate_per_s >= p.capacity_per_s() {
        return Err(format!(
            "rate {rate_per_s}/s is at or above the model's capacity {:.2}/s: the queue grows without bound",
            p.capacity_per_s()
        ));
    }
    let mut sim = new_sim(p, seed)?;
    sim.issued.reserve((rate_per_s * duration_s * 1.1) as usize);
    sim.run(Load::Open { rate_per_s }, duration_s)
}

/// [`simulate_open`] with request service times drawn uniformly from
/// `service_shape_s`, rescaled to mean E[Tproc]: 003's model with a
/// measured service-time shape instead of an exponential one. A
/// diagnostic (which of the model's assumptions a measured CDF departs
/// from), not 003's model.
pub fn simulate_open_with_service(
    p: &ModelParams,
    service_shape_s: &[f64],
    rate_per_s: f64,
    duration_s: f64,
    seed: u64,
) -> Result<SimOutcome, String> {
    let positive: Vec<f64> = service_shape_s
        .iter()
        .copied()
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    if positive.is_empty() {
        return Err("no positive service time to draw from".into());
    }
    let mean = positive.iter().sum::<f64>() / positive.len() as f64;
    let scale = p.tproc_mean_s / mean;
    let mut sim = new_sim(p, seed)?;
    sim.service = Some(positive.iter().map(|t| t * scale).collect());
    if !(rate_per_s.is_finite() && rate_per_s > 0.0 && rate_per_s < p.capacity_per_s()) {
        return Err(format!(
            "rate {rate_per_s}/s: must be positive and under the model's capacity {:.2}/s",
            p.capacity_per_s()
        ));
    }
    sim.run(Load::Open { rate_per_s }, duration_s)
}

/// `jobs` requests in the system at all times for `duration_s`.
pub fn simulate_closed(p: &ModelParams, jobs: u32, duration_s: f64, seed: u64) -> Result<SimOutcome, String> {
    if jobs == 0 {
        return Err("jobs: at least 1".into());
    }
    new_sim(p, seed)?.run(Load::Closed { jobs }, duration_s)
}

/// Throughput and mean response time of a closed run, over the requests
/// issued after `warmup_s`.
pub fn closed_figures(out: &SimOutcome, warmup_s: f64) -> (f64, f64) {
    let measured: Vec<&SimRequest> = out.requests.iter().filter(|r| r.arrival_s >= warmup_s).collect();
    let span = (out.duration_s - warmup_s).max(1e-9);
    let mean = if measured.is_empty() {
        0.0
    } else {
        measured.iter().map(|r| r.response_s()).sum::<f64>() / measured.len() as f64
    };
    (measured.len() as f64 / span, mean)
}

/// The two-sample Kolmogorov-Smirnov statistic: the largest distance
/// between the empirical CDFs of `a` and `b` (1 if either is empty).
pub fn ks_statistic(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The KS statistic's 5 % critical value for samples of `n` and `m`:
/// 1.358 x sqrt((n + m) / (n m)).
pub fn ks_critical_5pct(n: usize, m: usize) -> f64 {
    let (n, m) = (n.max(1) as f64, m.max(1) as f64);
    1.358 * ((n + m) / (n * m)).sqrt()
}

/// The pause threshold tau for departures `ends_s` (sorted): ln(10^4) x
/// the exponential mean implied by the median gap (median / ln 2).
pub fn pause_threshold(ends_s: &[f64]) -> Option<f64> {
    let mut gaps: Vec<f64> = ends_s.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.len() < 10 {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    Some((1e4f64).ln() * median / std::f64::consts::LN_2)
}

/// Pauses found in departures.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Pauses {
    pub threshold_s: f64,
    /// (start, duration) of each gap above the threshold.
    pub pauses: Vec<(f64, f64)>,
    /// Median time between successive pause starts; `None` with fewer than
    /// 3 pauses or fewer than 10 x the pauses exponential gaps would give
    /// by chance (10^-4 per gap).
    pub period_s: Option<f64>,
    pub mean_pause_s: Option<f64>,
}

/// The gaps above [`pause_threshold`] in `ends_s` (sorted answer times)
/// and the flush period they imply.
pub fn detect_pauses(ends_s: &[f64]) -> Pauses {
    let Some(threshold_s) = pause_threshold(ends_s) else {
        return Pauses::default();
    };
    let pauses: Vec<(f64, f64)> = ends_s
        .windows(2)
        .filter(|w| w[1] - w[0] > threshold_s)
        .map(|w| (w[0], w[1] - w[0]))
        .collect();
    // Exponential gaps alone pass tau with probability 10^-4: a flush
    // period is claimed only with ten times as many pauses as those would
    // give (and at least 3).
    let by_chance = 1e-4 * (ends_s.len() - 1) as f64;
    let significant = pauses.len() >= 3 && pauses.len() as f64 >= 10.0 * by_chance;
    let mean_pause_s =
        (significant && !pauses.is_empty()).then(|| pauses.iter().map(|p| p.1).sum::<f64>() / pauses.len() as f64);
    let period_s = significant.then(|| {
        let mut d: Vec<f64> = pauses.windows(2).map(|w| w[1].0 - w[0].0).collect();
        d.sort_by(f64::total_cmp);
        d[d.len() / 2]
    });
    Pauses {
        threshold_s,
        pauses,
        period_s,
        mean_pause_s,
    }
}

/// The dominant period of departures: `ends_s` binned in `bin_s`, then
/// [`dominant_period`] of the counts.
pub fn acf_period(ends_s: &[f64], bin_s: f64, max_lag_s: f64) -> Option<f64> {
    let last = ends_s.iter().copied().fold(0.0, f64::max);
    let bins = (last / bin_s).ceil() as usize;
    if bins < 8 {
        return None;
    }
    let mut x = vec![0.0f64; bins];
    for &t in ends_s {
        let i = ((t / bin_s) as usize).min(bins - 1);
        x[i] += 1.0;
    }
    dominant_period(&x, bin_s, max_lag_s)
}

/// The dominant period of response times: the mean response time of the
/// requests answered in each `bin_s` (0 for a bin without answers), then
/// [`dominant_period`]. `answers` are (answer time, response time).
pub fn response_period(answers: &[(f64, f64)], bin_s: f64, max_lag_s: f64) -> Option<f64> {
    let last = answers.iter().map(|a| a.0).fold(0.0, f64::max);
    let bins = (last / bin_s).ceil() as usize;
    if bins < 8 {
        return None;
    }
    let mut sum = vec![0.0f64; bins];
    let mut count = vec![0u32; bins];
    for &(t, rt) in answers {
        let i = ((t.max(0.0) / bin_s) as usize).min(bins - 1);
        sum[i] += rt;
        count[i] += 1;
    }
    let x: Vec<f64> = sum
        .iter()
        .zip(&count)
        .map(|(s, &c)| if c == 0 { 0.0 } else { s / f64::from(c) })
        .collect();
    dominant_period(&x, bin_s, max_lag_s)
}

/// Response-time spikes grouped into events: answers slower than
/// `factor` x the median response time; a spike more than `merge_s` after
/// the previous one starts a new event.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Spikes {
    pub threshold_s: f64,
    /// Answer time of each event's first spike.
    pub starts_s: Vec<f64>,
    /// Median time between successive event starts (at least 3 events).
    pub period_s: Option<f64>,
    /// Standard deviation over mean of those times (0 for a clock).
    pub period_cv: Option<f64>,
}

/// [`Spikes`] of `answers` (answer time, response time), in any order.
pub fn spikes(answers: &[(f64, f64)], factor: f64, merge_s: f64) -> Spikes {
    if answers.len() < 10 {
        return Spikes::default();
    }
    let mut rt: Vec<f64> = answers.iter().map(|a| a.1).collect();
    rt.sort_by(f64::total_cmp);
    let threshold_s = factor * rt[rt.len() / 2];
    let mut slow: Vec<f64> = answers.iter().filter(|a| a.1 > threshold_s).map(|a| a.0).collect();
    slow.sort_by(f64::total_cmp);
    let mut starts_s: Vec<f64> = Vec::new();
    let mut last = f64::NEG_INFINITY;
    for t in slow {
        if t - last > merge_s {
            starts_s.push(t);
        }
        last = t;
    }
    let (period_s, period_cv) = if starts_s.len() >= 3 {
        let mut d: Vec<f64> = starts_s.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d.len() as f64).sqrt();
        d.sort_by(f64::total_cmp);
        (Some(d[d.len() / 2]), Some(sd / mean))
    } else {
        (None, None)
    };
    Spikes {
        threshold_s,
        starts_s,
        period_s,
        period_cv,
    }
}

/// The period of a series sampled every `bin_s`: the lag of the highest
/// autocorrelation after its first negative value, up to `max_lag_s`;
/// `None` when the autocorrelation never goes negative or the peak is
/// under 0.1.
pub fn dominant_period(series: &[f64], bin_s: f64, max_lag_s: f64) -> Option<f64> {
    let bins = series.len();
    if bins < 8 {
        return None;
    }
    let mean = series.iter().sum::<f64>() / bins as f64;
    let x: Vec<f64> = series.iter().map(|v| v - mean).collect();
    let var: f64 = x.iter().map(|v| v * v).sum();
    if var <= 0.0 {
        return None;
    }
    let max_lag = ((max_lag_s / bin_s) as usize).min(bins / 2);
    let acf: Vec<f64> = (0..=max_lag)
        .map(|k| x.iter().zip(&x[k..]).map(|(a, b)| a * b).sum::<f64>() / var)
        .collect();
    let first_negative = acf.iter().position(|&r| r < 0.0)?;
    let (lag, peak) = acf
        .iter()
        .enumerate()
        .skip(first_negative)
        .max_by(|a, b| a.1.total_cmp(b.1))?;
    (*peak >= 0.1).then_some(lag as f64 * bin_s)
}

/// What the fit was made from.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FitInputs {
    /// Saturated throughput P, requests per second.
    pub throughput_per_s: f64,
    pub pauses: Pauses,
    /// The autocorrelation's period, for comparison with the pauses'.
    pub acf_period_s: Option<f64>,
    /// One-request run: mean and variance of the response time.
    pub single_mean_s: Option<f64>,
    pub single_var_s2: Option<f64>,
}

/// A fitted model and how each number came about.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    pub params: ModelParams,
    pub inputs: FitInputs,
    /// E[Tnd] by 003's formula before clamping at 0.
    pub tnd_mean_raw_s: Option<f64>,
    /// Why a parameter is what it is, when a rule could not apply.
    pub notes: Vec<String>,
}

/// 003 §4.2 from a saturated run's sorted answer times `ends_s` over
/// `duration_s`, and optionally a one-request run's response times.
pub fn fit(ends_s: &[f64], duration_s: f64, single_response_s: Option<&[f64]>) -> Result<Fit, String> {
    if ends_s.len() < 100 || duration_s <= 0.0 {
        return Err(format!(
            "the saturated run has {} answers in {duration_s} s: at least 100 are needed to fit",
            ends_s.len()
        ));
    }
    let throughput = ends_s.len() as f64 / duration_s;
    let pauses = detect_pauses(ends_s);
    let acf = acf_period(ends_s, 0.1, 120.0);
    let mut notes = Vec::new();
    let (dpb_max, tdp) = match (pauses.period_s, pauses.mean_pause_s) {
        (Some(p), Some(pause)) => {
            let dpb = (throughput * p).round().max(1.0) as u32;
            (dpb, pause / f64::from(dpb))
        }
        _ => {
            notes.push(format!(
                "{} pause(s) above {:.3} s: too few for a flush period; the DPB is left out (DPBmax 0)",
                pauses.pauses.len(),
                pauses.threshold_s
            ));
            (0, 0.0)
        }
    };
    let tproc = 1.0 / throughput - tdp;
    if tproc <= 0.0 {
        return Err(format!(
            "E[Tproc] = 1/P - E[Tdp] = {:.5} - {tdp:.5} s is not positive",
            1.0 / throughput
        ));
    }
    let (mut tnd_const, mut tnd_exp, mut raw) = (0.0, 0.0, None);
    let (mut single_mean, mut single_var) = (None, None);
    match single_response_s {
        Some(t) if t.len() >= 2 => {
            let mean = t.iter().sum::<f64>() / t.len() as f64;
            let var = t.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (t.len() - 1) as f64;
            single_mean = Some(mean);
            single_var = Some(var);
            let tnd = mean - tproc - tdp;
            raw = Some(tnd);
            if tnd <= 0.0 {
                notes.push(format!(
                    "E[Tnd] = E[T1] - E[Tproc] - E[Tdp] = {mean:.5} - {tproc:.5} - {tdp:.5} = {tnd:.5} s <= 0: set to 0"
                ));
            } else {
                let d = f64::from(dpb_max);
                let flush_var = if dpb_max > 0 {
                    (d * tdp * tdp + d * d * tdp * tdp) / d - tdp * tdp
                } else {
                    0.0
                };
                let m = (var - tproc * tproc - flush_var).max(0.0).sqrt().min(tnd);
                tnd_exp = m;
                tnd_const = tnd - m;
            }
        }
        _ => notes.push("no one-request run: Tnd set to 0".into()),
    }
    Ok(Fit {
        params: ModelParams {
            tproc_mean_s: tproc,
            tnd_const_s: tnd_const,
            tnd_exp_mean_s: tnd_exp,
            dpb_max,
            tdp_mean_s: tdp,
        },
        inputs: FitInputs {
            throughput_per_s: throughput,
            pauses,
            acf_period_s: acf,
            single_mean_s: single_mean,
            single_var_s2: single_var,
        },
        tnd_mean_raw_s: raw,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mm1(tproc: f64) -> ModelParams {
        ModelParams {
            tproc_mean_s: tproc,
            tnd_const_s: 0.0,
            tnd_exp_mean_s: 0.0,
            dpb_max: 0,
            tdp_mean_s: 0.0,
        }
    }

    fn responses(out: &SimOutcome) -> Vec<f64> {
        out.requests.iter().map(SimRequest::response_s).collect()
    }

    #[test]
    fn without_the_dpb_the_model_is_an_m_m_1_queue() {
        // lambda 20, mu 40: E[T] = 1/(mu - lambda) = 50 ms. Over 20,000 s
        // (400,000 requests) the sample mean's sd is about 0.5 %
        // (autocorrelated M/M/1 at rho 0.5); 3 % is a safe bound.
        let out = simulate_open(&mm1(0.025), 20.0, 20_000.0, 1).unwrap();
        let rt = responses(&out);
        let mean = rt.iter().sum::<f64>() / rt.len() as f64;
        assert!((mean - 0.05).abs() < 0.05 * 0.03, "mean {mean}");
        assert!(out.flush_starts_s.is_empty());
        // And the response time is Exp(mu - lambda): its median ln2/20.
        let mut sorted = rt.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!(
            (median - 0.05 * std::f64::consts::LN_2).abs() < 0.002,
            "median {median}"
        );
    }

    #[test]
    fn simulation_is_seeded() {
        let a = simulate_open(&ModelParams::PAPER, 25.0, 200.0, 5).unwrap();
        let b = simulate_open(&ModelParams::PAPER, 25.0, 200.0, 5).unwrap();
        let c = simulate_open(&ModelParams::PAPER, 25.0, 200.0, 6).unwrap();
        assert_eq!(a.requests, b.requests);
        assert_ne!(a.requests, c.requests);
    }

    #[test]
    fn flush_period_is_dpb_max_over_lambda() {
        // 003 Equation (1): 111 / 12.5 = 8.9 s, 111 / 25 = 4.4 s.
        for rate in [12.5, 18.75, 25.0] {
            let out = simulate_open(&ModelParams::PAPER, rate, 4_000.0, 2).unwrap();
            let f = &out.flush_starts_s;
            let period = (f[f.len() - 1] - f[0]) / (f.len() - 1) as f64;
            let expected = 111.0 / rate;
            assert!(
                (period - expected).abs() < expected * 0.02,
                "rate {rate}: {period} vs {expected}"
            );
        }
    }

    #[test]
    fn flushes_empty_the_dpb_and_pause_the_queue() {
        // During a flush nothing is answered: the answers' largest gaps are
        // about DPBmax x E[Tdp] = 0.48 s, far above E[Tproc].
        let out = simulate_closed(&ModelParams::PAPER, 50, 600.0, 3).unwrap();
        let ends: Vec<f64> = out.requests.iter().map(|r| r.end_s).collect();
        let pauses = detect_pauses(&ends);
        let mean = pauses.mean_pause_s.unwrap();
        assert!((mean - 111.0 * 0.00433).abs() < 0.05, "mean pause {mean}");
    }

    #[test]
    fn fit_recovers_known_parameters_from_the_model_itself() {
        let truth = ModelParams {
            tproc_mean_s: 0.02,
            tnd_const_s: 0.004,
            tnd_exp_mean_s: 0.002,
            dpb_max: 150,
            tdp_mean_s: 0.006,
        };
        let duration = 3_000.0;
        let saturated = simulate_closed(&truth, 60, duration, 11).unwrap();
        let ends: Vec<f64> = saturated.requests.iter().map(|r| r.end_s).collect();
        let single = simulate_closed(&truth, 1, 20_000.0, 12).unwrap();
        let fit = fit(&ends, duration, Some(&responses(&single))).unwrap();
        let p = fit.params;
        let within = |got: f64, want: f64, tol: f64| (got - want).abs() <= want * tol;
        assert!(within(f64::from(p.dpb_max), 150.0, 0.05), "{fit:?}");
        assert!(within(p.tdp_mean_s, 0.006, 0.10), "{fit:?}");
        assert!(within(p.tproc_mean_s, 0.02, 0.03), "{fit:?}");
        let tnd = p.tnd_const_s + p.tnd_exp_mean_s;
        assert!(within(tnd, 0.006, 0.25), "{fit:?}");
        let acf = fit.inputs.acf_period_s.unwrap();
        let period = fit.inputs.pauses.period_s.unwrap();
        assert!((acf - period).abs() < period * 0.1, "acf {acf} vs pauses {period}");
    }

    #[test]
    fn fit_without_pauses_leaves_the_dpb_out() {
        let out = simulate_closed(&mm1(0.01), 20, 500.0, 4).unwrap();
        let ends: Vec<f64> = out.requests.iter().map(|r| r.end_s).collect();
        let fit = fit(&ends, 500.0, None).unwrap();
        assert_eq!(fit.params.dpb_max, 0);
        assert!((fit.params.tproc_mean_s - 0.01).abs() < 0.0005, "{fit:?}");
        assert!(fit.notes.iter().any(|n| n.contains("DPBmax 0")));
    }

    #[test]
    fn ks_statistic_is_zero_for_equal_samples_and_one_for_disjoint() {
        let a = [1.0, 2.0, 3.0];
        assert_eq!(ks_statistic(&a, &a), 0.0);
        assert_eq!(ks_statistic(&a, &[4.0, 5.0]), 1.0);
        assert!((ks_statistic(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0]) - 0.5).abs() < 1e-12);
        // Two seeds of one model: below the 5 % critical value.
        let a = responses(&simulate_open(&ModelParams::PAPER, 20.0, 2_000.0, 1).unwrap());
        let b = responses(&simulate_open(&ModelParams::PAPER, 20.0, 2_000.0, 2).unwrap());
        // Autocorrelated samples: allow 3x the iid critical value.
        assert!(ks_statistic(&a, &b) < 3.0 * ks_critical_5pct(a.len(), b.len()));
    }

    #[test]
    fn acf_finds_a_planted_period() {
        // 30 answers a second, none for 0.5 s every 6 s.
        let mut ends = Vec::new();
        let mut t = 0.0;
        while t < 600.0 {
            if t % 6.0 >= 0.5 {
                ends.push(t);
            }
            t += 1.0 / 30.0;
        }
        let p = acf_period(&ends, 0.1, 60.0).unwrap();
        assert!((p - 6.0).abs() < 0.15, "{p}");
        let pauses = detect_pauses(&ends);
        assert!((pauses.period_s.unwrap() - 6.0).abs() < 0.1, "{pauses:?}");
        // Spikes without pauses: answers every 1/30 s, 0.1 s slower for
        // the 0.5 s after each multiple of 4 s.
        let answers: Vec<(f64, f64)> = (0..18_000)
            .map(|i| {
                let t = f64::from(i) / 30.0;
                (t, if t % 4.0 < 0.5 { 0.11 } else { 0.01 })
            })
            .collect();
        let p = response_period(&answers, 0.1, 60.0).unwrap();
        assert!((p - 4.0).abs() < 0.15, "{p}");
        let s = spikes(&answers, 5.0, 1.0);
        assert_eq!(s.starts_s.len(), 150);
        assert!((s.period_s.unwrap() - 4.0).abs() < 0.05, "{s:?}");
        assert!(s.period_cv.unwrap() < 0.01, "{s:?}");
        assert!(detect_pauses(&answers.iter().map(|a| a.0).collect::<Vec<_>>())
            .period_s
            .is_none());
    }

    #[test]
    fn open_loop_above_capacity_is_refused() {
        let e = simulate_open(&ModelParams::PAPER, 40.0, 10.0, 1).unwrap_err();
        assert!(e.contains("capacity"), "{e}");
    }
}
