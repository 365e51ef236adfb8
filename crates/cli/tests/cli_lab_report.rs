//! `lab run` of catalog entries and `lab report`: the files a user gets,
//! the report's figures loaded in a real headless Chromium, and the
//! errors a mistyped name gets.
//!
//! The browser test needs Debian's `chromium` (or `$FLUSHWISE_CHROMIUM`).
//! Without one it says so and passes, unless `FLUSHWISE_REQUIRE_BROWSER`
//! is set, as `.ci/run` sets it (after installing chromium): in CI a
//! missing browser fails the test.

mod common;

use common::{flushwise, ok, text};

fn browser_available() -> bool {
    if std::env::var_os("FLUSHWISE_CHROMIUM").is_some() {
        return true;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|name| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

#[test]
fn lab_run_of_two_entries_then_report_renders_every_figure_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_string_lossy().into_owned();
    for entry in ["002-fig7", "002-table4"] {
        let stdout = ok(&flushwise(&["lab", "run", entry, "--out", &out, "--jobs", "2"]));
        assert!(stdout.contains(entry), "{stdout}");
        assert!(
            stdout.contains("paper") && stdout.contains("ours"),
            "a verdict line: {stdout}"
        );
        for file in ["figure.svg", "figure.png", "runs.csv", "intervals.csv", "result.json"] {
            let path = dir.path().join(entry).join(file);
            let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(meta.len() > 100, "{} is {} bytes", path.display(), meta.len());
        }
        let runs = std::fs::read_to_string(dir.path().join(entry).join("runs.csv")).expect("runs.csv");
        let header = runs.lines().next().unwrap_or("");
        for column in ["series", "config_hash", "seed", "commit", "nopm"] {
            assert!(
                header.split(',').any(|c| c == column),
                "runs.csv lacks {column}: {header}"
            );
        }
    }
    // The second run of an entry reads its runs from the cache (a build
    // from a clean commit) or reruns them (an edited tree): both succeed.
    ok(&flushwise(&["lab", "run", "002-fig7", "--out", &out]));

    if !browser_available() {
        assert!(
            std::env::var_os("FLUSHWISE_REQUIRE_BROWSER").is_none(),
            "FLUSHWISE_REQUIRE_BROWSER is set but no chromium is installed"
        );
        eprintln!("no headless browser on this machine: report check skipped (apt-get install chromium)");
        return;
    }
    let shot = dir.path().join("report.png");
    let shot_text = shot.to_string_lossy().into_owned();
    let stdout = ok(&flushwise(&[
        "lab",
        "report",
        "--out",
        &out,
        "--check",
        "--screenshot",
        &shot_text,
        "--at",
        "002-table4",
    ]));
    assert!(stdout.contains("2 of 2 figures loaded"), "{stdout}");
    let png = std::fs::read(&shot).expect("the screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("report.html");
    assert!(html.contains("id=\"002-fig7\"") && html.contains("id=\"002-table4\""));
    assert!(html.contains("not run yet: <code>flushwise lab run 000-fig2</code>"));
}

#[test]
fn lab_run_of_an_unknown_entry_names_it_and_the_accepted_ones() {
    let o = flushwise(&["lab", "run", "002-fig99"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("002-fig99") && err.contains("002-fig14") && err.contains("all"),
        "{err}"
    );
}

#[test]
fn lab_list_says_what_each_entry_reproduces_its_shell_scale_and_the_papers_numbers() {
    let stdout = ok(&flushwise(&["lab", "list"]));
    for text in [
        "000-fig2",
        "Lee et al. (000) Figure 2",
        "002-table4",
        "Wang & Bunt (002) Table 4",
        "001-throughput",
        "simulator, study",
        "divided by 20",
        "1.9-2.1x",
    ] {
        assert!(stdout.contains(text), "missing {text}: {stdout}");
    }
    let entries = stdout.lines().filter(|l| l.starts_with("00")).count();
    assert!(entries >= 20, "{entries} entries");
}
