//! `device calibrate`: measure this machine's storage, fit the calibrated
//! device model and write the preset (the lab's `device_preset`, which
//! `lab run fidelity` uses too), then print measured vs model for every
//! point.
//!
//! Stdout carries the result only: the table, or one JSON object with
//! `"kind":"calibration"`; the banner goes to stdout with the table and to
//! stderr with JSON, progress always to stderr. Ctrl-C stops the run
//! between requests; the test files are removed and the process exits 130.

use std::path::Path;
use std::time::Duration;

use flushwise_core::device::calibration::{self, Comparison, DirectionComparison, Measurements};
use flushwise_core::device::{CalibratedConfig, DeviceSpec, IoKind};
use flushwise_engine::calibrate::CalibrateOptions;
use flushwise_engine::storage::{is_tmpfs, IoMode};
use flushwise_lab::database::human_bytes;
use flushwise_lab::device_preset;
use flushwise_lab::COMMIT;
use flushwise_sim::options::{duration_flag, size_flag};
use flushwise_sim::preset::{content_hash, Provenance};
use serde_json::{json, Value};

use crate::args::{CalibrateArgs, CalibrateOutput};

fn options_of(args: &CalibrateArgs) -> Result<CalibrateOptions, String> {
    let mut options = if args.quick {
        CalibrateOptions::quick(&args.dir)
    } else {
        CalibrateOptions::new(&args.dir)
    };
    if let Some(text) = &args.duration_per_point {
        let us = duration_flag("--duration-per-point", text)?;
        options.duration_per_point = Duration::from_micros(us);
    }
    if let Some(text) = &args.file_size {
        options.file_size_bytes = size_flag("--file-size", text)?;
    }
    options.io = match args.io.trim().to_ascii_lowercase().as_str() {
        "auto" if is_tmpfs(&args.dir) => IoMode::Buffered,
        "auto" | "direct" => IoMode::Direct,
        "buffered" => IoMode::Buffered,
        other => return Err(format!("--io {other}: accepted are auto, direct and buffered")),
    };
    options.validate().map_err(|e| {
        if e.starts_with("file size") {
            format!("--file-size: {e}")
        } else if e.starts_with("duration") {
            format!("--duration-per-point: {e}")
        } else {
            e
        }
    })?;
    Ok(options)
}

pub fn calibrate(args: &CalibrateArgs) -> Result<(), String> {
    let options = options_of(args)?;
    device_preset::require_free_space(&options)?;
    let out_path = args.out.clone().unwrap_or_else(|| args.dir.join("calibrated.toml"));
    let stop = crate::interrupt::install()?;
    let banner = format!(
        "flushwise device calibrate: dir={} io={} file={} per-point={:?} points={} commit={}",
        args.dir.display(),
        options.io,
        human_bytes(options.file_size_bytes),
        options.duration_per_point,
        options.point_count(),
        COMMIT
    );
    match args.output {
        CalibrateOutput::Table => println!("{banner}"),
        CalibrateOutput::Json => eprintln!("{banner}"),
    }
    let Some(done) = device_preset::calibrate_into(&options, &out_path, &stop, &mut |line| eprintln!("{line}"))? else {
        eprintln!("calibrate stopped; its test files were removed, no preset was written");
        return Ok(());
    };
    let provenance = Some(&done.provenance);
    match args.output {
        CalibrateOutput::Table => print!(
            "{}",
            table(
                &done.measurements,
                &done.config,
                &done.comparisons,
                done.mixed_error_alike,
                &out_path,
                &done.spec,
                provenance
            )
        ),
        CalibrateOutput::Json => {
            let record = json_record(
                &done.measurements,
                &done.config,
                &done.comparisons,
                done.mixed_error_alike,
                &out_path,
                &done.text,
                provenance,
            );
            println!("{record}");
        }
    }
    Ok(())
}

fn pct(error: f64) -> String {
    format!("{:+.1}%", error * 100.0)
}

fn table(
    m: &Measurements,
    config: &CalibratedConfig,
    comparisons: &[Comparison],
    mixed_error_alike: f64,
    out_path: &Path,
    spec: &DeviceSpec,
    provenance: Option<&Provenance>,
) -> String {
    let mut out = String::new();
    if let Some(p) = provenance {
        out.push_str(&format!("filesystem: {}\n", p.filesystem));
    }
    out.push_str(&format!(
        "\n16 KiB random requests, measured vs model ({}); the model is fitted to the mean latency; \
         `caller us` is the calling thread's own CPU and wait for a core per request, `device us` \
         the rest:\n",
        spec.describe()
    ));
    out.push_str(&format!(
        "{:<7} {:>3} {:<5} {:>9} {:>9} {:>7}  {:>8} {:>8} {:>7} {:>9} {:>9}  {:>8}\n",
        "pattern",
        "QD",
        "dir",
        "IOPS",
        "model",
        "error",
        "mean us",
        "model",
        "error",
        "caller us",
        "device us",
        "p99 us"
    ));
    for c in comparisons {
        for (dir, d) in [("read", c.read), ("write", c.write)] {
            let Some(DirectionComparison { measured, predicted }) = d else {
                continue;
            };
            out.push_str(&format!(
                "{:<7} {:>3} {:<5} {:>9.0} {:>9.0} {:>7}  {:>8.1} {:>8.1} {:>7} {:>9.1} {:>9.1}  {:>8.0}\n",
                c.pattern.as_str(),
                c.queue_depth,
                dir,
                measured.iops,
                predicted.iops,
                pct(d.map_or(0.0, |d| d.iops_error())),
                measured.mean_latency_us,
                predicted.mean_latency_us,
                pct(d.map_or(0.0, |d| d.latency_error())),
                measured.caller_us(),
                measured.device_latency_us(),
                measured.p99_latency_us
            ));
        }
    }
    let (single, mixed) = device_preset::mean_abs_iops_errors(comparisons);
    out.push_str(&format!(
        "mean |IOPS error|: {:.1}% over the read/write points, {:.1}% over the mixed points \
         ({:.1}% with every request in flight counted alike, no cross-kind weights)\n",
        single * 100.0,
        mixed * 100.0,
        mixed_error_alike * 100.0
    ));
    out.push_str("\nlog appends + fdatasync (buffered, as the redo log):\n");
    out.push_str(&format!(
        "{:>9} {:>8} {:>8} {:>8}\n",
        "size", "MB/s", "mean us", "p99 us"
    ));
    for l in &m.log_writes {
        out.push_str(&format!(
            "{:>6} KiB {:>8.1} {:>8.0} {:>8.0}\n",
            l.write_bytes >> 10,
            l.mb_per_s,
            l.mean_latency_us,
            l.p99_latency_us
        ));
    }
    out.push_str(&format!(
        "fdatasync after a 4 KiB append: mean {:.0} us, p99 {:.0} us\n",
        m.fsync_mean_us, m.fsync_p99_us
    ));
    if let (Some(mean), Some(p99)) = (m.data_fsync_mean_us, m.data_fsync_p99_us) {
        out.push_str(&format!(
            "data file fdatasync after a 16 KiB direct write: mean {mean:.0} us, p99 {p99:.0} us\n"
        ));
    }
    if !m.fsync_beside.is_empty() {
        out.push_str(
            "the same fdatasync beside k threads reading or writing 16 KiB pages \
             (the simulator charges a flush by the data requests in flight):\n",
        );
        out.push_str(&format!(
            "{:>6} {:>4} {:>9} {:>8} {:>8}\n",
            "kind", "k", "IOPS", "mean us", "p99 us"
        ));
        for f in &m.fsync_beside {
            out.push_str(&format!(
                "{:>6} {:>4} {:>9.0} {:>8.0} {:>8.0}\n",
                io_kind_name(f.kind),
                f.in_flight,
                f.iops,
                f.mean_latency_us,
                f.p99_latency_us
            ));
        }
    }
    out.push_str(&format!(
        "sequential 1 MiB direct writes (the file fill): {:.0} MB/s\n",
        m.sequential_write_mb_per_s
    ));
    out.push_str(&format!(
        "\nmodel: latency = base + per_outstanding x (same kind in flight) + per_outstanding_other x (other kind in flight)\n       \
         + transfer x (MiB beyond 16 KiB)\n  \
         read  base {:.1} us, +{:.2} us per read in flight, +{:.2} us per write in flight\n  \
         write base {:.1} us, +{:.2} us per write in flight, +{:.2} us per read in flight\n  \
         transfer {:.1} us per MiB\n",
        config.read_base_latency_us,
        config.read_latency_per_outstanding_us,
        config.read_latency_per_outstanding_write_us,
        config.write_base_latency_us,
        config.write_latency_per_outstanding_us,
        config.write_latency_per_outstanding_read_us,
        config.transfer_us_per_mib
    ));
    out.push_str(&format!(
        "\npreset written to {} (use: sim run --device calibrated:{} ; tpcc run --device emulated calibrated:{})\n",
        out_path.display(),
        out_path.display(),
        out_path.display()
    ));
    out
}

fn io_kind_name(kind: IoKind) -> &'static str {
    match kind {
        IoKind::Read => "read",
        IoKind::Write => "write",
    }
}

fn figures_json(f: &calibration::Figures) -> Value {
    json!({
        "iops": f.iops,
        "mean_latency_us": f.mean_latency_us,
        "p99_latency_us": f.p99_latency_us,
        "caller_cpu_us": f.caller_cpu_us,
        "caller_core_wait_us": f.caller_core_wait_us,
        "device_latency_us": f.device_latency_us(),
    })
}

fn direction_json(d: &Option<DirectionComparison>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({
            "measured": figures_json(&d.measured),
            "model": figures_json(&d.predicted),
            "iops_error": d.iops_error(),
            "latency_error": d.latency_error(),
        }),
    }
}

fn json_record(
    m: &Measurements,
    config: &CalibratedConfig,
    comparisons: &[Comparison],
    mixed_error_alike: f64,
    out_path: &Path,
    text: &str,
    provenance: Option<&Provenance>,
) -> Value {
    let (single, mixed) = device_preset::mean_abs_iops_errors(comparisons);
    json!({
        "kind": "calibration",
        "commit": COMMIT,
        "dir": provenance.map(|p| p.dir.clone()),
        "filesystem": provenance.map(|p| p.filesystem.clone()),
        "io": provenance.map(|p| p.io.clone()),
        "file_size_bytes": provenance.map(|p| p.file_size_bytes),
        "duration_per_point_ms": provenance.map(|p| p.duration_per_point_ms),
        "preset": out_path.display().to_string(),
        "preset_hash": content_hash(text),
        "model": {
            "read_base_latency_us": config.read_base_latency_us,
            "write_base_latency_us": config.write_base_latency_us,
            "read_latency_per_outstanding_us": config.read_latency_per_outstanding_us,
            "write_latency_per_outstanding_us": config.write_latency_per_outstanding_us,
            "read_latency_per_outstanding_write_us": config.read_latency_per_outstanding_write_us,
            "write_latency_per_outstanding_read_us": config.write_latency_per_outstanding_read_us,
            "transfer_us_per_mib": config.transfer_us_per_mib,
        },
        "points": comparisons.iter().map(|c| json!({
            "pattern": c.pattern.as_str(),
            "queue_depth": c.queue_depth,
            "read": direction_json(&c.read),
            "write": direction_json(&c.write),
        })).collect::<Vec<_>>(),
        "mean_abs_iops_error_fitted": single,
        "mean_abs_iops_error_mixed": mixed,
        "mean_abs_iops_error_mixed_without_cross_kind": mixed_error_alike,
        "log_writes": m.log_writes.iter().map(|l| json!({
            "write_bytes": l.write_bytes,
            "mb_per_s": l.mb_per_s,
            "mean_latency_us": l.mean_latency_us,
            "p99_latency_us": l.p99_latency_us,
        })).collect::<Vec<_>>(),
        "fsync_mean_us": m.fsync_mean_us,
        "fsync_p99_us": m.fsync_p99_us,
        "data_fsync_mean_us": m.data_fsync_mean_us,
        "data_fsync_p99_us": m.data_fsync_p99_us,
        "fsync_beside": m.fsync_beside.iter().map(|f| json!({
            "kind": io_kind_name(f.kind),
            "in_flight": f.in_flight,
            "iops": f.iops,
            "mean_latency_us": f.mean_latency_us,
            "p99_latency_us": f.p99_latency_us,
        })).collect::<Vec<_>>(),
        "sequential_write_mb_per_s": m.sequential_write_mb_per_s,
    })
}
