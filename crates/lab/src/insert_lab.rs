//! `lab run 004-change-buffer`: paper 004's experiments on the engine in
//! one command. The insert load (`crate::insert`: one row per transaction
//! into a primary and three non-unique secondary indexes on random keys,
//! 16 threads) on a table whose secondary indexes are several times the
//! pool, with the change buffer off, on (in the data file) and on its own
//! device (`separate-device` in `/dev/shm`, 004 §3's ramdisk), on this
//! machine's disk (004's SSD) and on the emulated 7200 rpm disk (004's hard
//! disk):
//!
//! - Table 1: transactions per second, off vs on, both devices;
//! - Tables 3 and 4: off, on, own device;
//! - Table 2: pages read and written by type (index vs change buffer),
//!   from the engine's own counters instead of blktrace.
//!
//! Every run starts from a fresh copy of the prepared table (an insert run
//! grows it; runs must not inherit each other's rows), runs go one at a
//! time, and the modes interleave (off, on, own device, off, ...) so a
//! drift of the disk falls on all three. 004's "R/W requests per sec." is
//! sysbench's count of SQL statements, exactly 18 per transaction in every
//! cell of its Table 1 (17,031.05 / 946.17 = 18.00), not I/O: the
//! comparable figure is transactions per second, and page I/O per second
//! is reported beside it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flushwise_core::policy::PolicySpec;
use flushwise_engine::db::{ChangeBufferMode, ChangeBufferOptions};
use flushwise_workloads::insert::driver::RunConfig;

use crate::database;
use crate::engine_options::DbLocation;
use crate::insert::{self, InsertPrepareSpec, InsertRunOutput, InsertRunSettings};
use crate::render::{render_table, write_file, Csv};
use crate::COMMIT;

pub const NAME: &str = "004-change-buffer";
/// Rows loaded (secondary indexes of about 32 MiB each).
pub const ROWS: u64 = 1_000_000;
pub const SECONDARY_INDEXES: u32 = 3;
pub const THREADS: u32 = 16;
/// A pool several times smaller than the secondary indexes (004: 1 GB for
/// 100 GB of data).
pub const BUFFER_POOL: &str = "32MiB";
/// The devices: this machine's disk (004's SSD) and the emulated 7200 rpm
/// disk (004's hard disk).
pub const DEVICES: [(&str, &[&str]); 2] = [("this disk", &["native"]), ("hdd", &["emulated", "wd-1tb-7200"])];
pub const MODES: [ChangeBufferMode; 3] = [
    ChangeBufferMode::Off,
    ChangeBufferMode::On,
    ChangeBufferMode::SeparateDevice,
];
/// 004 Tables 1, 3 and 4: transactions per second (SSD: off, on, ramdisk;
/// hard disk: off, on, ramdisk).
pub const PAPER_TPS: [(&str, [f64; 3]); 2] = [("SSD", [792.81, 946.17, 1071.19]), ("hard disk", [13.71, 19.22, 19.21])];

/// How long each run warms up and measures, per device, and how many
/// times each cell runs. The emulated hard disk needs a long warm-up: the
/// bulk-loaded leaves are 15/16 full, so at first a leaf takes ~50
/// buffered entries before an insert must read it (and split it); only
/// once the leaves have split (~60 s here) does the buffer reach its
/// regime, and it fills for a few minutes more (EXPERIMENTS.md: 200-300
/// transactions/s in the first minute, ~1,000 at steady state).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lab004Scale {
    /// (warm-up, measured) on this disk.
    pub disk: (Duration, Duration),
    /// (warm-up, measured) on the emulated hard disk.
    pub hdd: (Duration, Duration),
    pub repeats: u32,
}

impl Lab004Scale {
    pub fn new(full: bool) -> Self {
        let s = Duration::from_secs;
        if full {
            Self {
                disk: (s(60), s(120)),
                hdd: (s(300), s(300)),
                repeats: 2,
            }
        } else {
            Self {
                disk: (s(30), s(60)),
                hdd: (s(180), s(60)),
                repeats: 1,
            }
        }
    }

    /// (warm-up, measured) of a run on `device` (a name of [`DEVICES`]).
    pub fn of(&self, device: &str) -> (Duration, Duration) {
        if device == DEVICES[1].0 {
            self.hdd
        } else {
            self.disk
        }
    }

    /// Seconds of runs, copies not included.
    pub fn seconds(&self) -> u64 {
        let per_rep: u64 = DEVICES
            .iter()
            .map(|(d, _)| {
                let (w, m) = self.of(d);
                (w + m).as_secs() * MODES.len() as u64
            })
            .sum();
        per_rep * u64::from(self.repeats)
    }
}

/// One run's figures.
#[derive(Clone, Debug)]
pub struct Lab004Row {
    pub device: String,
    pub mode: ChangeBufferMode,
    pub repeat: u32,
    pub output: InsertRunOutput,
}

pub struct Lab004Report {
    pub scale: Lab004Scale,
    pub rows: Vec<Lab004Row>,
    pub files: Vec<PathBuf>,
}

/// Prepares `dir/insert-1000000` unless it is there.
fn prepared(dir: &Path, progress: &mut dyn FnMut(&str)) -> Result<DbLocation, String> {
    let location = DbLocation {
        dir: dir.join(format!("insert-{ROWS}")),
        redo_dir: None,
        io: "direct".into(),
    };
    match insert::open_prepared(&location) {
        Ok((_, m)) if m.rows == ROWS && m.secondary_indexes == SECONDARY_INDEXES => {
            progress(&format!("reusing the prepared table {}", location.dir.display()));
        }
        _ => {
            progress(&format!(
                "preparing an insert table of {ROWS} rows in {}",
                location.dir.display()
            ));
            let spec = InsertPrepareSpec {
                rows: ROWS,
                secondary_indexes: SECONDARY_INDEXES,
                row_bytes: 120,
                seed: 1,
                threads: 2,
                load: crate::workload_dir::LoadFlags {
                    page_size: "16384",
                    redo: "256MiB",
                    buffer_pool: "256MiB",
                    force: true,
                },
            };
            let (_, summary) = insert::prepare(&location, &spec)?;
            progress(&summary);
        }
    }
    Ok(location)
}

/// Where `separate-device` puts the change buffer: a fresh directory on
/// the RAM disk if there is one, else beside the runs.
fn own_device_dir(dir: &Path) -> Result<PathBuf, String> {
    let shm = Path::new("/dev/shm");
    let d = if shm.is_dir() {
        shm.join(format!("flushwise-004-{}", std::process::id()))
    } else {
        dir.join("change-buffer-device")
    };
    if d.exists() {
        std::fs::remove_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

/// Runs the experiment and writes `out/004-change-buffer/`.
pub fn run(
    full: bool,
    seed: u64,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Lab004Report, String> {
    let scale = Lab004Scale::new(full);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let shape = flushwise_workloads::insert::schema::RowShape::new(SECONDARY_INDEXES, 120)?;
    let table_bytes = insert::database_bytes_estimate(ROWS, shape, 256 << 20);
    // The table, one run's copy, and what a run inserts into the copy.
    database::require_free(
        dir,
        3 * table_bytes,
        "the insert table of lab run 004-change-buffer and a run's copy",
    )?;
    // The output directory first: ten minutes of runs must not end in
    // "cannot write".
    let root = out.join(NAME);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: cannot create: {e}", root.display()))?;
    let base = prepared(dir, progress)?;
    let copy = DbLocation {
        dir: dir.join("insert-run"),
        redo_dir: None,
        io: "direct".into(),
    };
    let policy = PolicySpec::default();
    progress(&format!(
        "{} engine runs, one at a time, about {} min",
        DEVICES.len() * MODES.len() * scale.repeats as usize,
        scale.seconds().div_ceil(60)
    ));
    let mut rows = Vec::new();
    for repeat in 1..=scale.repeats {
        for (device, words) in DEVICES {
            for mode in MODES {
                database::copy_database(&base.dir, &copy.dir)?;
                let cb_dir = match mode {
                    ChangeBufferMode::SeparateDevice => Some(own_device_dir(dir)?),
                    _ => None,
                };
                let (warmup, duration) = scale.of(device);
                let mut config = RunConfig::new(THREADS, duration, seed);
                config.warmup = warmup;
                let settings = InsertRunSettings {
                    buffer_pool: BUFFER_POOL.into(),
                    redo: None,
                    device: words.iter().map(|s| s.to_string()).collect(),
                    doublewrite: true,
                    flush_log_at_commit: 1,
                    max_recovery_time: None,
                    policy: policy.clone(),
                    change_buffer: ChangeBufferOptions {
                        mode,
                        dir: cb_dir.clone(),
                        ..ChangeBufferOptions::default()
                    },
                    config,
                    check: false,
                };
                progress(&format!(
                    "{device}, change buffer {mode}, run {repeat} of {} ({} s)",
                    scale.repeats,
                    (warmup + duration).as_secs()
                ));
                let result = insert::run(&copy, &settings, &mut |_| {}, &mut |_| {});
                if let Some(d) = &cb_dir {
                    let _ = std::fs::remove_dir_all(d);
                }
                let (output, _) = result?;
                progress(&format!(
                    "  {:.1} transactions/s, {:.0} page I/O/s, p99 {:.1} ms",
                    output.transactions_per_s,
                    output.page_io_per_s,
                    output.latency.p99_us as f64 / 1000.0
                ));
                rows.push(Lab004Row {
                    device: device.to_string(),
                    mode,
                    repeat,
                    output,
                });
            }
        }
    }
    database::remove_with_redo(&copy.dir, None)?;
    let mut csv = Csv::default();
    for r in &rows {
        let o = &r.output;
        csv.push(vec![
            ("device".into(), r.device.clone()),
            ("change_buffer".into(), r.mode.to_string()),
            ("repeat".into(), r.repeat.to_string()),
            ("transactions_per_s".into(), format!("{:.2}", o.transactions_per_s)),
            ("page_io_per_s".into(), format!("{:.1}", o.page_io_per_s)),
            ("index_reads".into(), o.page_io.index_reads.to_string()),
            ("index_writes".into(), o.page_io.index_writes.to_string()),
            ("change_buffer_reads".into(), o.page_io.change_buffer_reads.to_string()),
            (
                "change_buffer_writes".into(),
                o.page_io.change_buffer_writes.to_string(),
            ),
            ("p99_us".into(), o.latency.p99_us.to_string()),
            ("sync_write_pct".into(), format!("{:.3}", o.flush.sync_write_pct)),
            ("seed".into(), seed.to_string()),
            ("config_hash".into(), o.config_hash.clone()),
            ("commit".into(), COMMIT.to_string()),
        ]);
    }
    let runs_csv = root.join("runs.csv");
    write_file(&runs_csv, &csv.render(), "lab run 004-change-buffer")?;
    let mut report = Lab004Report {
        scale,
        rows,
        files: vec![runs_csv],
    };
    let text_path = root.join("report.txt");
    write_file(&text_path, &report_text(&report), "lab run 004-change-buffer")?;
    report.files.push(text_path);
    Ok(report)
}

/// Mean and (min..max) of a cell's runs.
fn cell(
    rows: &[Lab004Row],
    device: &str,
    mode: ChangeBufferMode,
    f: impl Fn(&InsertRunOutput) -> f64,
) -> (f64, f64, f64) {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.device == device && r.mode == mode)
        .map(|r| f(&r.output))
        .collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

/// Tables 1, 3/4 and 2 beside 004's numbers.
pub fn report_text(report: &Lab004Report) -> String {
    let tps = |o: &InsertRunOutput| o.transactions_per_s;
    let mut t1 = Vec::new();
    for ((device, _), (paper_device, paper)) in DEVICES.iter().zip(PAPER_TPS) {
        let off = cell(&report.rows, device, ChangeBufferMode::Off, tps);
        let on = cell(&report.rows, device, ChangeBufferMode::On, tps);
        let own = cell(&report.rows, device, ChangeBufferMode::SeparateDevice, tps);
        let fmt = |c: (f64, f64, f64)| format!("{:.1} ({:.1}..{:.1})", c.0, c.1, c.2);
        t1.push(vec![
            device.to_string(),
            fmt(off),
            fmt(on),
            fmt(own),
            format!("{:.2}x", on.0 / off.0),
            format!("{:.2}x", own.0 / on.0),
            format!(
                "{paper_device}: {:.2}x, {:.2}x",
                paper[1] / paper[0],
                paper[2] / paper[1]
            ),
        ]);
    }
    let mut t2 = Vec::new();
    for (device, _) in DEVICES {
        for mode in MODES {
            let io = |f: fn(&InsertRunOutput) -> u64| cell(&report.rows, device, mode, |o| f(o) as f64).0;
            t2.push(vec![
                device.to_string(),
                mode.to_string(),
                format!("{:.0}", io(|o| o.page_io.index_reads)),
                format!("{:.0}", io(|o| o.page_io.index_writes)),
                format!("{:.0}", io(|o| o.page_io.change_buffer_reads)),
                format!("{:.0}", io(|o| o.page_io.change_buffer_writes)),
                format!("{:.0}", cell(&report.rows, device, mode, |o| o.page_io_per_s).0),
            ]);
        }
    }
    format!(
        "lab run {NAME}: {} rows, {SECONDARY_INDEXES} secondary indexes, {THREADS} threads, pool {BUFFER_POOL}; warm-up + measured per run: this disk {} + {} s, hdd {} + {} s; {} run(s) per cell, modes interleaved; commit {COMMIT}\n\n\
         Tables 1, 3 and 4: transactions per second, mean (min..max)\n{}\n\
         Table 2: pages read and written in the measured window (mean per run), by page type\n{}",
        ROWS,
        report.scale.disk.0.as_secs(),
        report.scale.disk.1.as_secs(),
        report.scale.hdd.0.as_secs(),
        report.scale.hdd.1.as_secs(),
        report.scale.repeats,
        render_table(
            &["device", "off", "on", "own device", "on / off", "own device / on", "004"].map(String::from),
            &t1
        ),
        render_table(
            &[
                "device",
                "change buffer",
                "index reads",
                "index writes",
                "change-buffer reads",
                "change-buffer writes",
                "page I/O per s",
            ]
            .map(String::from),
            &t2
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_fits_in_twenty_minutes_and_full_is_longer() {
        let (d, f) = (Lab004Scale::new(false), Lab004Scale::new(true));
        assert!(d.seconds() <= 20 * 60, "{}", d.seconds());
        assert!(f.seconds() > d.seconds());
    }

    #[test]
    fn the_papers_ratios_are_tables_1_3_and_4() {
        let [(_, ssd), (_, hdd)] = PAPER_TPS;
        assert!((ssd[1] / ssd[0] - 1.19).abs() < 0.01, "004: +19 % on SSD");
        assert!((hdd[1] / hdd[0] - 1.40).abs() < 0.01, "004: +40 % on the hard disk");
        assert!((ssd[2] / ssd[1] - 1.13).abs() < 0.01, "004: +13 % on a ramdisk");
    }
}
