//! The endpoint's HTTP server: `tiny_http` on one thread, four read-only
//! routes over the shared [`State`].
//!
//! Each request copies what it needs under the state's lock and renders
//! and writes after releasing it, so a slow client never holds up the run
//! publishing its next sample. Only GET (and HEAD) are answered.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tiny_http::{Header, Method, Request, Response};

use super::{exposition, series, State};

/// The dashboard page, compiled in (no file to find at run time).
const DASHBOARD_HTML: &str = include_str!("dashboard.html");

pub struct Server {
    http: Arc<tiny_http::Server>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` and serves on a thread of its own until dropped.
    pub fn start(addr: SocketAddr, state: Arc<Mutex<State>>) -> Result<Server, String> {
        let http = tiny_http::Server::http(addr).map_err(|e| e.to_string())?;
        let bound = http
            .server_addr()
            .to_ip()
            .ok_or_else(|| "the server has no IP address".to_string())?;
        let http = Arc::new(http);
        let serving = Arc::clone(&http);
        let thread = std::thread::Builder::new()
            .name("metrics-http".into())
            .spawn(move || {
                for request in serving.incoming_requests() {
                    answer(request, &state);
                }
            })
            .map_err(|e| format!("cannot start the server thread: {e}"))?;
        Ok(Server {
            http,
            addr: bound,
            thread: Some(thread),
        })
    }

    /// The address bound (the port chosen, when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.http.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn respond(request: Request, status: u16, content_type: &str, body: String) {
    let mut response = Response::from_string(body).with_status_code(status);
    for h in [
        header("Content-Type", content_type),
        header("Cache-Control", "no-store"),
    ]
    .into_iter()
    .flatten()
    {
        response.add_header(h);
    }
    // A client that went away is not the run's problem.
    let _ = request.respond(response);
}

fn answer(request: Request, state: &Mutex<State>) {
    if !matches!(request.method(), Method::Get | Method::Head) {
        respond(request, 405, "text/plain; charset=utf-8", "only GET is served\n".into());
        return;
    }
    let path = request.url().split('?').next().unwrap_or("").to_string();
    match path.as_str() {
        "/metrics" => {
            let sample = state.lock().ok().and_then(|s| s.current.clone());
            let body = match &sample {
                Some(s) => exposition::render(s),
                None => Ok("# no sample yet: the run has not started\n".to_string()),
            };
            match body {
                Ok(text) => respond(request, 200, exposition::CONTENT_TYPE, text),
                Err(e) => respond(request, 500, "text/plain; charset=utf-8", format!("{e}\n")),
            }
        }
        "/" | "/index.html" => respond(request, 200, "text/html; charset=utf-8", DASHBOARD_HTML.to_string()),
        "/series.json" => {
            let body = state
                .lock()
                .ok()
                .map(|s| series::series_json(&s.series, s.current.as_ref()));
            respond(
                request,
                200,
                "application/json",
                body.unwrap_or_else(|| "{}".to_string()),
            );
        }
        "/decisions.json" => {
            let decisions = state
                .lock()
                .ok()
                .and_then(|s| s.current.as_ref().map(|c| c.decisions.clone()));
            respond(
                request,
                200,
                "application/json",
                series::decisions_json(decisions.as_deref().unwrap_or(&[])),
            );
        }
        _ => respond(
            request,
            404,
            "text/plain; charset=utf-8",
            "not found: / (dashboard), /metrics, /series.json, /decisions.json\n".into(),
        ),
    }
}
