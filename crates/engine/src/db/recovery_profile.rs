//! What this database's crash recoveries cost, measured, so that a policy
//! that bounds recovery time (`flushwise`, `--max-recovery-time`) plans with
//! this machine's redo apply rate instead of an assumed one (issue #12).
//!
//! After every open that applied redo (a crash recovery), the open records
//! one sample: the redo bytes from the checkpoint to the end of the log and
//! the whole open's wall time (log scan, doublewrite repair, page
//! verification if enabled, redo apply with the page reads it needs, loser
//! rollback, final checkpoint): everything a user waits for before the
//! database answers. The file keeps the last [`PROFILE_SAMPLES`] samples.
//!
//! The rate a policy is given is the *slowest* of the kept samples that
//! applied at least [`RATE_SAMPLE_MIN_BYTES`] (a recovery of a few
//! kilobytes measures fixed costs, not a rate). Measured on this disk
//! (EXPERIMENTS.md, "The recovery bound"): five recoveries of the same
//! database applied 11.2-14.6 MB/s, slower as the database aged, so the
//! latest alone would be optimistic.
//!
//! File: `flushwise.recovery` beside the redo log, text, one sample per
//! line (`redo_bytes recovery_us`), `#` comments. It is derived data: a
//! missing file means "no measurement yet", a malformed one is reported
//! (`RecoveryProfile::load` names the file and line) and the open goes on
//! with the default rate; the next recovery rewrites it. Writes go to a
//! temporary file, are synced, and renamed over the old one, so a crash
//! mid-write leaves the old profile or the new one, never a mix.
//!
//! Invariants: at most [`PROFILE_SAMPLES`] samples, oldest first; every
//! sample has a non-zero duration.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Samples kept (the most recent).
pub const PROFILE_SAMPLES: usize = 8;
/// A sample gives a rate only if it applied at least this much redo.
pub const RATE_SAMPLE_MIN_BYTES: u64 = 8 << 20;
/// The profile's file name, in the redo log's directory.
pub const PROFILE_FILE_NAME: &str = "flushwise.recovery";

const HEADER: &str = "# flushwise recovery profile: one crash recovery per line, `redo_bytes_applied recovery_us`";

/// One crash recovery, measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverySample {
    pub redo_bytes: u64,
    pub recovery_us: u64,
}

impl RecoverySample {
    pub fn bytes_per_s(&self) -> f64 {
        self.redo_bytes as f64 / (self.recovery_us.max(1) as f64 / 1e6)
    }
}

/// The recent recoveries of one database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecoveryProfile {
    samples: Vec<RecoverySample>,
}

impl RecoveryProfile {
    pub fn path_in(redo_dir: &Path) -> PathBuf {
        redo_dir.join(PROFILE_FILE_NAME)
    }

    pub fn samples(&self) -> &[RecoverySample] {
        &self.samples
    }

    /// Reads the profile at `path`; a missing file is an empty profile. An
    /// error names the file and the line.
    pub fn load(path: &Path) -> Result<RecoveryProfile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RecoveryProfile::default()),
            Err(e) => return Err(format!("{}: cannot read the recovery profile: {e}", path.display())),
        };
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<RecoveryProfile, String> {
        let mut samples = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.split_whitespace().map(str::parse::<u64>);
            let sample = match (fields.next(), fields.next(), fields.next()) {
                (Some(Ok(redo_bytes)), Some(Ok(recovery_us)), None) if recovery_us > 0 => RecoverySample {
                    redo_bytes,
                    recovery_us,
                },
                _ => {
                    return Err(format!(
                        "line {}: expected `redo_bytes recovery_us` (two integers, the second > 0), found {line:?}",
                        n + 1
                    ))
                }
            };
            samples.push(sample);
        }
        let keep_from = samples.len().saturating_sub(PROFILE_SAMPLES);
        Ok(RecoveryProfile {
            samples: samples.split_off(keep_from),
        })
    }

    /// Adds a recovery, dropping the oldest beyond [`PROFILE_SAMPLES`].
    pub fn record(&mut self, redo_bytes: u64, took: Duration) {
        let recovery_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        self.samples.push(RecoverySample {
            redo_bytes,
            recovery_us,
        });
        if self.samples.len() > PROFILE_SAMPLES {
            self.samples.remove(0);
        }
        debug_assert!(self.samples.len() <= PROFILE_SAMPLES);
    }

    /// The rate to plan with: the slowest sample of at least
    /// [`RATE_SAMPLE_MIN_BYTES`], in MiB/s; `None` before any.
    pub fn planning_rate_mib_per_s(&self) -> Option<f64> {
        self.samples
            .iter()
            .filter(|s| s.redo_bytes >= RATE_SAMPLE_MIN_BYTES)
            .map(|s| s.bytes_per_s() / f64::from(1u32 << 20))
            .min_by(f64::total_cmp)
    }

    /// Writes the profile to `path` (temporary file, fsync, rename, fsync
    /// of the directory).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let err = |what: &str, p: &Path, e: std::io::Error| format!("{}: cannot {what}: {e}", p.display());
        let tmp = path.with_extension("recovery.tmp");
        let mut text = String::from(HEADER);
        text.push('\n');
        for s in &self.samples {
            text.push_str(&format!("{} {}\n", s.redo_bytes, s.recovery_us));
        }
        let mut file = std::fs::File::create(&tmp).map_err(|e| err("create", &tmp, e))?;
        file.write_all(text.as_bytes()).map_err(|e| err("write", &tmp, e))?;
        file.sync_all().map_err(|e| err("sync", &tmp, e))?;
        drop(file);
        std::fs::rename(&tmp, path).map_err(|e| err("rename the new profile over", path, e))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let d = std::fs::File::open(dir).map_err(|e| err("open the directory", dir, e))?;
            d.sync_all().map_err(|e| err("sync the directory", dir, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planning_rate_is_the_slowest_recovery_large_enough_to_measure_one() {
        let mut p = RecoveryProfile::default();
        assert_eq!(p.planning_rate_mib_per_s(), None, "no measurement yet");
        // A tiny recovery measures fixed costs: not a rate.
        p.record(100_000, Duration::from_millis(300));
        assert_eq!(p.planning_rate_mib_per_s(), None);
        p.record(64 << 20, Duration::from_secs(4));
        p.record(32 << 20, Duration::from_secs(1));
        let rate = p.planning_rate_mib_per_s().unwrap();
        assert!((rate - 16.0).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn only_the_latest_samples_are_kept() {
        let mut p = RecoveryProfile::default();
        for i in 1..=(PROFILE_SAMPLES as u64 + 3) {
            p.record(i << 20, Duration::from_secs(1));
        }
        assert_eq!(p.samples().len(), PROFILE_SAMPLES);
        assert_eq!(p.samples()[0].redo_bytes, 4 << 20, "the three oldest dropped");
    }

    #[test]
    fn saves_and_loads_the_same_profile_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = RecoveryProfile::path_in(dir.path());
        assert_eq!(RecoveryProfile::load(&path).unwrap(), RecoveryProfile::default());
        let mut p = RecoveryProfile::default();
        p.record(50_000_000, Duration::from_micros(3_900_123));
        p.record(60_000_000, Duration::from_micros(4_800_000));
        p.save(&path).unwrap();
        assert_eq!(RecoveryProfile::load(&path).unwrap(), p);
        assert!(
            !path.with_extension("recovery.tmp").exists(),
            "the temporary file was renamed"
        );
    }

    #[test]
    fn a_malformed_line_is_an_error_naming_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = RecoveryProfile::path_in(dir.path());
        std::fs::write(&path, format!("{HEADER}\n1000 20\nten 5\n")).unwrap();
        let e = RecoveryProfile::load(&path).unwrap_err();
        assert!(
            e.contains(PROFILE_FILE_NAME) && e.contains("line 3") && e.contains("ten 5"),
            "{e}"
        );
        std::fs::write(&path, "1000 0\n").unwrap();
        let e = RecoveryProfile::load(&path).unwrap_err();
        assert!(e.contains("line 1"), "a zero duration is refused: {e}");
    }
}
