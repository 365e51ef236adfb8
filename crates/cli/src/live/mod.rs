//! `--metrics-addr`: a run watched while it goes.
//!
//! The shells hand every [`LiveSample`] they build (the simulator every
//! 100 ms of simulated time, the engine every second of the run, both once
//! more at the end) to [`Live::publish`]; a small HTTP server on its own
//! thread serves what was last published:
//!
//! - `/metrics`: the Prometheus text format ([`exposition`]);
//! - `/`: the live dashboard, one self-contained page (`dashboard.html`,
//!   no network) that polls the two below about once a second;
//! - `/series.json`: the run's history, one point per second of run time
//!   ([`series`]);
//! - `/decisions.json`: the policy's latest decisions.
//!
//! Invariants: nothing here counts anything. Every value served is read
//! from a published sample, and a sample is built from the counters the
//! run's result is built from (see `flushwise_sim::live`), so the last
//! values served after a run and its `--output json` agree. The server
//! never holds the state's lock while writing to a socket. Standard output
//! is never written: the address line goes to stderr, so `--output
//! json|csv` keeps stdout machine-readable.

pub mod exposition;
pub mod series;
mod server;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flushwise_sim::LiveSample;

use crate::args::{duration_flag, MetricsArgs};

/// What the server shows: the last sample and the history.
#[derive(Default)]
pub struct State {
    pub current: Option<LiveSample>,
    pub series: series::Series,
}

/// A running endpoint. Dropping it stops the server.
pub struct Live {
    state: Arc<Mutex<State>>,
    server: server::Server,
    linger: Duration,
}

impl Live {
    /// Starts serving when `--metrics-addr` was given; checks both flags
    /// first, so a bad value stops the command before the run.
    pub fn start(args: &MetricsArgs) -> Result<Option<Live>, String> {
        let Some(text) = &args.metrics_addr else {
            return Ok(None);
        };
        let linger_us = duration_flag("--metrics-linger", &args.metrics_linger)?;
        let addr = parse_addr(text)?;
        let state = Arc::new(Mutex::new(State::default()));
        let server = server::Server::start(addr, Arc::clone(&state))
            .map_err(|e| format!("--metrics-addr {text}: cannot listen there: {e}"))?;
        eprintln!(
            "metrics: http://{}/ (dashboard; Prometheus text at /metrics)",
            server.addr()
        );
        Ok(Some(Live {
            state,
            server,
            linger: Duration::from_micros(linger_us),
        }))
    }

    /// Makes `sample` what the endpoint serves.
    pub fn publish(&self, sample: &LiveSample) {
        if let Ok(mut state) = self.state.lock() {
            state.series.push(sample);
            state.current = Some(sample.clone());
        }
    }

    /// After the run: keeps serving for `--metrics-linger` (less if
    /// Ctrl-C / SIGTERM comes: an engine command's handler only sets a
    /// flag), then stops.
    pub fn finish(self) {
        if self.linger.is_zero() {
            return;
        }
        eprintln!(
            "metrics: the run is over; serving http://{}/ for {:.0?} more",
            self.server.addr(),
            self.linger
        );
        let end = Instant::now() + self.linger;
        while !crate::interrupt::requested() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }
}

/// `HOST:PORT` (a name is resolved, its first address taken).
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let expected = "expected HOST:PORT, e.g. 127.0.0.1:9187 (port 0 picks a free one)";
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if !text.contains(':') {
        return Err(format!("--metrics-addr {text}: no port: {expected}"));
    }
    let mut addrs = text
        .to_socket_addrs()
        .map_err(|e| format!("--metrics-addr {text}: {e}: {expected}"))?;
    addrs
        .next()
        .ok_or_else(|| format!("--metrics-addr {text}: the name has no address: {expected}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_bad_ones_are_named() {
        assert_eq!(parse_addr("127.0.0.1:0").map(|a| a.port()), Ok(0), "an IP and port 0");
        assert!(parse_addr("localhost:9187").is_ok());
        let no_port = parse_addr("127.0.0.1").unwrap_err();
        assert!(no_port.contains("--metrics-addr 127.0.0.1: no port"), "{no_port}");
        let bad_port = parse_addr("127.0.0.1:99999").unwrap_err();
        assert!(bad_port.starts_with("--metrics-addr 127.0.0.1:99999"), "{bad_port}");
    }
}
