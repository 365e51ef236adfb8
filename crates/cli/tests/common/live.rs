//! Watching a run's `--metrics-addr` endpoint from a test: start the
//! binary with the flag, read the address it prints on stderr, fetch pages
//! with a plain HTTP/1.0 GET over a `TcpStream`, and parse the Prometheus
//! text format.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_flushwise");

/// A running `flushwise` whose endpoint is up. Killed when dropped (a
/// lingering server would otherwise outlive the test).
pub struct Watched {
    child: Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    stdout_lines: Receiver<String>,
    pub stdout: String,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `flushwise args...` and waits (up to a minute) for the
/// `metrics: http://ADDR/` line on stderr.
pub fn start(args: &[&str]) -> Watched {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the flushwise binary starts");
    let stderr_pipe = child.stderr.take().expect("stderr");
    let stdout_pipe = child.stdout.take().expect("stdout");
    let stderr = Arc::new(Mutex::new(String::new()));
    let (addr_tx, addr_rx) = mpsc::channel();
    {
        let stderr = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("metrics: http://") {
                    let addr = rest.split('/').next().unwrap_or("").to_string();
                    let _ = addr_tx.send(addr);
                }
                if let Ok(mut all) = stderr.lock() {
                    all.push_str(&line);
                    all.push('\n');
                }
            }
        });
    }
    let (line_tx, stdout_lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout_pipe).lines().map_while(Result::ok) {
            if line_tx.send(line).is_err() {
                break;
            }
        }
    });
    let addr = match addr_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(addr) => addr,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no `metrics: http://...` line on stderr:\n{}", stderr.lock().unwrap());
        }
    };
    Watched {
        child,
        addr,
        stdout_lines,
        stdout: String::new(),
        stderr,
    }
}

impl Watched {
    /// Stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// `GET path`: (status, body).
    pub fn get(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap_or_else(|e| panic!("connect {}: {e}", self.addr));
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(stream, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("a response");
        let (head, body) = response.split_once("\r\n\r\n").expect("headers and a body");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head}"));
        (status, body.to_string())
    }

    /// `/metrics`, which must answer 200, parsed.
    pub fn metrics(&self) -> Metrics {
        let (status, body) = self.get("/metrics");
        assert_eq!(status, 200, "{body}");
        Metrics::parse(&body)
    }

    /// Collects stdout lines until the run's `"kind":"result"` line (the
    /// run is over; a lingering server still answers), at most `limit`.
    /// `between` runs every ~300 ms while waiting.
    pub fn wait_for_result(&mut self, limit: Duration, mut between: impl FnMut(&Watched)) {
        let end = Instant::now() + limit;
        loop {
            match self.stdout_lines.recv_timeout(Duration::from_millis(300)) {
                Ok(line) => {
                    let done = line.contains("\"kind\":\"result\"");
                    self.stdout.push_str(&line);
                    self.stdout.push('\n');
                    if done {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => between(self),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the run ended without a result:\n{}\n{}", self.stdout, self.stderr())
                }
            }
            assert!(Instant::now() < end, "no result within {limit:?}:\n{}", self.stderr());
        }
    }
}

/// Parsed exposition: series (name, labels sorted) -> value.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    pub series: BTreeMap<(String, Vec<(String, String)>), f64>,
}

impl Metrics {
    /// Parses the text format (sample lines only; label values must not
    /// hold `,` or `"`, which ours do not).
    pub fn parse(text: &str) -> Metrics {
        let mut series = BTreeMap::new();
        for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("bad line {line:?}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value in {line:?}"));
            let (name, labels) = match key.split_once('{') {
                Some((name, rest)) => {
                    let inner = rest
                        .strip_suffix('}')
                        .unwrap_or_else(|| panic!("bad labels in {line:?}"));
                    let mut labels: Vec<(String, String)> = inner
                        .split(',')
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("bad label in {line:?}"));
                            (k.to_string(), v.trim_matches('"').to_string())
                        })
                        .collect();
                    labels.sort();
                    (name.to_string(), labels)
                }
                None => (key.to_string(), Vec::new()),
            };
            assert!(series.insert((name, labels), value).is_none(), "series twice: {line}");
        }
        Metrics { series }
    }

    /// The value of the series `name` with exactly `labels`.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let mut l: Vec<(String, String)> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        l.sort();
        *self
            .series
            .get(&(name.to_string(), l))
            .unwrap_or_else(|| panic!("no {name}{labels:?} in {:#?}", self.series.keys().collect::<Vec<_>>()))
    }

    /// Sum over every series of `name` whose labels include `having`.
    pub fn sum(&self, name: &str, having: &[(&str, &str)]) -> f64 {
        self.series
            .iter()
            .filter(|((n, labels), _)| {
                n == name
                    && having
                        .iter()
                        .all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|(_, v)| v)
            .sum()
    }
}
