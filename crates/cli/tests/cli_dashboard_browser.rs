//! The live dashboard (`/` of `--metrics-addr`) in a real headless
//! Chromium: a simulator run that lingers, the page loaded from it, and the
//! page's own record of what it drew read back from the dumped DOM (its
//! body carries `data-points`, `data-charts` and `data-decisions` after
//! every draw). The screenshot is kept under the target directory.
//!
//! Needs Debian's `chromium` (or `$FLUSHWISE_CHROMIUM`). Without one the
//! test says so and passes, unless `FLUSHWISE_REQUIRE_BROWSER` is set, as
//! `.ci/run` sets it (after installing chromium).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::live;

fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FLUSHWISE_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

fn chromium(browser: &PathBuf, args: &[&str]) -> std::process::Output {
    Command::new(browser)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .args(args)
        .output()
        .expect("chromium runs")
}

/// The number in `name="N"` of the dumped DOM.
fn attribute(dom: &str, name: &str) -> u64 {
    let marker = format!("{name}=\"");
    let at = dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in the dumped page:\n{dom}"));
    dom[at + marker.len()..]
        .split('"')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name} is not a number"))
}

#[test]
fn dashboard_draws_a_finished_sim_run_in_headless_chromium() {
    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("FLUSHWISE_REQUIRE_BROWSER").is_none(),
            "FLUSHWISE_REQUIRE_BROWSER is set but no chromium is installed"
        );
        eprintln!("no headless browser on this machine: dashboard check skipped (apt-get install chromium)");
        return;
    };
    let mut run = live::start(&[
        "sim",
        "run",
        "--policy",
        "mysql56",
        "--warehouses",
        "4",
        "--buffer-pool",
        "16MiB",
        "--redo",
        "48MiB",
        "--warmup",
        "5s",
        "--duration",
        "25s",
        "--output",
        "json",
        "--metrics-addr",
        "127.0.0.1:0",
        "--metrics-linger",
        "3m",
    ]);
    run.wait_for_result(Duration::from_secs(120), |_| {});
    let url = format!("http://{}/", run.addr);

    let out = chromium(
        &browser,
        &[
            "--window-size=1400,1000",
            "--virtual-time-budget=5000",
            "--dump-dom",
            &url,
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let points = attribute(&dom, "data-points");
    assert!(points >= 25, "{points} points drawn for a 30 s run");
    assert_eq!(attribute(&dom, "data-charts"), 4, "every chart has data");
    assert!(attribute(&dom, "data-decisions") > 0, "the decision log shows entries");
    // mysql56 reports 8 parameters (`flushwise policies`); all are shown.
    assert_eq!(attribute(&dom, "data-params"), 8, "every parameter has a row");
    assert_eq!(attribute(&dom, "data-params-clipped"), 0, "no parameter row is cut off");
    assert!(dom.contains("mysql56") && dom.contains("finished"), "{dom}");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        &browser,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000",
            "--virtual-time-budget=5000",
            &url,
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {} ({e}): {}",
            shot.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a {}-byte screenshot is too small to show charts",
        png.len()
    );
    eprintln!("dashboard screenshot: {}", shot.display());
}
