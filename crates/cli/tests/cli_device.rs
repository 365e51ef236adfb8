//! Scenarios for `flushwise device calibrate`: a quick calibration of a
//! temporary directory gives one JSON record and a preset that the
//! simulator takes (`--device calibrated:FILE`) and names in its result.
//! Nothing here asserts a speed: the numbers are this machine's, whatever
//! it is doing meanwhile.

mod common;

use common::{flushwise, ok, text};

const TINY_SIM: &[&str] = &[
    "--warehouses",
    "2",
    "--buffer-pool",
    "8MiB",
    "--redo",
    "64MiB",
    "--warmup",
    "1s",
    "--duration",
    "2s",
    "--report-interval",
    "1s",
];

#[test]
fn quick_calibration_writes_a_preset_the_simulator_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("measured");
    let preset = dir.path().join("disk.toml");
    let o = flushwise(&[
        "device",
        "calibrate",
        "--dir",
        measured.to_str().unwrap(),
        "--out",
        preset.to_str().unwrap(),
        "--quick",
        "--duration-per-point",
        "50ms",
        "--output",
        "json",
    ]);
    let stdout = ok(&o);
    let lines = common::json_lines(&stdout);
    assert_eq!(lines.len(), 1, "one JSON record on stdout: {stdout}");
    let v = &lines[0];
    assert_eq!(v["kind"], "calibration");
    assert_eq!(v["preset"], preset.to_str().unwrap());
    for field in [
        "commit",
        "dir",
        "filesystem",
        "io",
        "preset_hash",
        "model",
        "points",
        "log_writes",
        "fsync_mean_us",
        "data_fsync_mean_us",
        "sequential_write_mb_per_s",
        "mean_abs_iops_error_fitted",
        "mean_abs_iops_error_mixed",
        "mean_abs_iops_error_mixed_without_cross_kind",
    ] {
        assert!(!v[field].is_null(), "{field} missing: {v}");
    }
    for field in [
        "read_base_latency_us",
        "write_base_latency_us",
        "read_latency_per_outstanding_us",
        "write_latency_per_outstanding_us",
        "read_latency_per_outstanding_write_us",
        "write_latency_per_outstanding_read_us",
        "transfer_us_per_mib",
    ] {
        assert!(v["model"][field].as_f64().is_some_and(|x| x >= 0.0), "{field}: {v}");
    }
    let points = v["points"].as_array().unwrap();
    // --quick: reads and writes at QD 1, 2, 4, 8 and one mixed point.
    assert_eq!(points.len(), 9, "{v}");
    for p in points {
        let pattern = p["pattern"].as_str().unwrap();
        for dir in ["read", "write"] {
            let expected = pattern == dir || pattern == "mixed";
            assert_eq!(!p[dir].is_null(), expected, "{p}");
            if expected {
                assert!(p[dir]["measured"]["iops"].as_f64().unwrap() > 0.0, "{p}");
                assert!(p[dir]["model"]["iops"].as_f64().unwrap() > 0.0, "{p}");
                assert!(p[dir]["iops_error"].as_f64().unwrap().is_finite(), "{p}");
                // Where Linux gives a thread's schedstat, the callers' own
                // CPU and wait for a core are measured, and the device's
                // part reported is the mean latency less both.
                if std::path::Path::new("/proc/thread-self/schedstat").exists() {
                    let measured = &p[dir]["measured"];
                    let cpu = measured["caller_cpu_us"].as_f64().unwrap();
                    let wait = measured["caller_core_wait_us"].as_f64().unwrap();
                    let mean = measured["mean_latency_us"].as_f64().unwrap();
                    assert!(cpu > 0.0 && wait >= 0.0, "{p}");
                    let device = measured["device_latency_us"].as_f64().unwrap();
                    assert!((device - (mean - cpu - wait).max(1.0)).abs() < 1e-6, "{p}");
                }
            }
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(&measured)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        leftovers.is_empty(),
        "test files left in the measured dir: {leftovers:?}"
    );

    // The preset names its provenance and is what the JSON said.
    let toml = std::fs::read_to_string(&preset).unwrap();
    assert!(toml.contains("[model]") && toml.contains("[provenance]") && toml.contains("[[point]]"));
    assert!(
        toml.contains(&format!("commit = \"{}\"", v["commit"].as_str().unwrap())),
        "{toml}"
    );

    // The simulator runs on it and records the preset's path and hash.
    let device = format!("calibrated:{}", preset.display());
    let mut args = vec!["sim", "run"];
    args.extend_from_slice(TINY_SIM);
    args.extend_from_slice(&["--device", &device, "--output", "json"]);
    let run = ok(&flushwise(&args));
    let result = common::result(&run);
    let hash = v["preset_hash"].as_str().unwrap();
    assert_eq!(result["device"], format!("{device}#{hash}"), "{result}");
    assert!(result["nopm"].as_f64().unwrap() > 0.0, "{result}");

    // The same path with other content is another configuration.
    std::fs::write(&preset, toml.replace("[model]", "# edited\n[model]")).unwrap();
    let edited = common::result(&ok(&flushwise(&args)));
    assert_ne!(edited["config_hash"], result["config_hash"]);
    assert_ne!(edited["device"], result["device"]);
}

#[test]
fn a_bad_preset_is_one_error_line_naming_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("bad.toml");
    std::fs::write(&preset, "format_version = 1\n[model]\nread_base_latency_us = 100\n").unwrap();
    let device = format!("calibrated:{}", preset.display());
    let mut args = vec!["sim", "run"];
    args.extend_from_slice(TINY_SIM);
    args.extend_from_slice(&["--device", &device]);
    let o = flushwise(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for needle in ["error: --device", "bad.toml", "write_base_latency_us"] {
        assert!(err.contains(needle), "{needle:?} missing in {err}");
    }
}

#[test]
fn calibrate_refuses_bad_flags_before_touching_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (flags, needle) in [
        (&["--file-size", "1000"][..], "--file-size"),
        (&["--duration-per-point", "1ms"][..], "--duration-per-point"),
        (&["--io", "mmap"][..], "--io mmap"),
        (&["--file-size", "1000TiB"][..], "needs about"),
    ] {
        let mut args = vec!["device", "calibrate", "--dir", d];
        args.extend_from_slice(flags);
        let o = flushwise(&args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{flags:?}: {err}");
        assert!(std::fs::read_dir(d).unwrap().next().is_none(), "{flags:?} left files");
    }
}
