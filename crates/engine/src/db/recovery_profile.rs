//! What this database's opens and crash recoveries cost, measured, so that
//! a policy that bounds recovery time (`flushwise`, `--max-recovery-time`)
//! plans with this machine's figures instead of assumed ones (issue #12).
//!
//! Recovery time here is a fixed part, a part that grows with the pages the
//! redo names and a part that grows with the redo:
//! `recovery_s ~ fixed_s + pages x page_read_s + redo_bytes / apply_rate`.
//! Every open pays the fixed part (the log's header, the doublewrite file,
//! and the free-page scan, which reads every page's header: it grows with
//! the database, not with the redo); a crash recovery first reads the pages
//! its redo names (many at a time, `BufferPoolShell::prefetch_for_recovery`),
//! then applies the redo, rolls the losers back and checkpoints the pages
//! it dirtied. So:
//! - every clean open (no redo to apply) records its wall time: the fixed
//!   part, measured;
//! - every crash recovery records its redo bytes, wall time, the pages it
//!   read ahead before applying anything, how long that took, and how long
//!   the apply took (with the reads of the pages past the first read-ahead
//!   and the evictions a pool smaller than the redo's pages needs); the
//!   page cost is `read time / pages`, the apply rate
//!   `redo_bytes / apply time`, and the rest of its time is a fixed part
//!   too (a crash recovery's log and free-page scans can take longer than
//!   a clean open's). A line written before the read-ahead existed has two
//!   numbers: its rate is `redo_bytes / (time - fixed)`, page reads
//!   counted as apply time, the slower, safe reading.
//!
//! Both exclude page verification (`verify_pages_at_open`, an option of
//! checks, not of serving opens); an open that resized the redo log (it
//! writes a new log file, 6.5 s for 2 GiB here) is not recorded. The file keeps the last [`PROFILE_SAMPLES`]
//! of each. A policy plans with the *largest* recent fixed part and the
//! *slowest* recent rate among recoveries that applied at least
//! [`RATE_SAMPLE_MIN_BYTES`] (a few kilobytes of redo measure noise): five
//! recoveries of one database applied 6-10 MB/s overall, slower as it aged
//! (EXPERIMENTS.md, "The recovery bound"), so the latest alone would be
//! optimistic. A measured rate is believed only up to the most redo a
//! measured recovery applied (`believed_apply_rate`): past it the redo
//! names more pages than the pool holds and applies slower.
//!
//! File: `flushwise.recovery` beside the redo log, text, one sample per
//! line: `open US` or `recovery REDO_BYTES US [PAGES READ_US APPLY_US]`,
//! `#` comments. It is derived
//! data: a missing file means "nothing measured yet"; a malformed one is
//! reported (`RecoveryProfile::load` names the file and the line), the open
//! goes on with the defaults, and the next open rewrites it. Writes go to a
//! temporary file, are synced, and renamed over the old one, so a crash
//! mid-write leaves the old profile or the new one, never a mix.
//!
//! Invariants: at most [`PROFILE_SAMPLES`] samples of each kind, oldest
//! first; every duration is non-zero.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Samples kept of each kind (the most recent).
pub const PROFILE_SAMPLES: usize = 8;
/// A recovery gives a rate only if it applied at least this much redo.
pub const RATE_SAMPLE_MIN_BYTES: u64 = 8 << 20;
/// A recovery gives a page read cost only if it read at least this many
/// pages ahead (a handful measures the first reads' latency, not the
/// device's rate at depth).
pub const PAGE_SAMPLE_MIN_PAGES: u64 = 256;
/// The profile's file name, in the redo log's directory.
pub const PROFILE_FILE_NAME: &str = "flushwise.recovery";

const HEADER: &str =
    "# flushwise recovery profile: `open US` (a clean open) or `recovery REDO_BYTES US PAGES READ_US APPLY_US` (a crash recovery: redo applied, its wall time, the pages read ahead before the apply, the time that took, the apply's time)";

/// One crash recovery, measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverySample {
    pub redo_bytes: u64,
    pub recovery_us: u64,
    /// Pages the redo named that recovery read ahead before it applied
    /// anything (0 on a line written before the read-ahead).
    pub pages_read: u64,
    /// Wall time of those reads, us.
    pub page_reads_us: u64,
    /// Wall time of the apply after them, us (0: not measured).
    pub apply_us: u64,
}

/// What a policy should plan with, from the profile.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RecoveryPlan {
    /// What an open costs whatever the redo, s (largest recent clean open).
    pub fixed_s: Option<f64>,
    /// Redo applied per second beyond that and the page reads, MiB/s
    /// (slowest recent recovery).
    pub apply_mib_per_s: Option<f64>,
    /// Wall time per page recovery read ahead, us (slowest recent).
    pub page_read_us: Option<f64>,
    /// The most redo a recovery that gave a rate applied, MiB: how far
    /// the measured rate is known to hold ([`policy_costs`]).
    pub largest_redo_mib: Option<f64>,
}

/// Where a recovery cost a policy plans with comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostSource {
    Given,
    Measured,
    Default,
}

impl CostSource {
    pub fn name(self) -> &'static str {
        match self {
            CostSource::Given => "given",
            CostSource::Measured => "measured",
            CostSource::Default => "default",
        }
    }
}

/// The recovery costs `policy` plans with under `plan`: the open's fixed
/// part, the apply rate, then the page read cost, each as (parameter,
/// value, source): given
/// by the user, else measured (rounded for the spec's text, at least the
/// parameter's minimum), else the default. Empty for a policy without
/// them. The one rule the engine applies at open and `tpcc crash` reports.
pub fn policy_costs(
    policy: &flushwise_core::policy::PolicySpec,
    plan: RecoveryPlan,
) -> Vec<(&'static str, f64, CostSource)> {
    use flushwise_core::policy::{RECOVERY_FIXED_KEY, RECOVERY_PAGE_READ_KEY, REDO_APPLY_RATE_KEY};
    // Given by the user, else measured (rounded, at least `least`), else
    // the default: one rule for every cost.
    let resolve = |key: &'static str, measured: Option<f64>, least: f64| match measured {
        _ if policy.gives(key) => (key, policy.params().f64(key), CostSource::Given),
        Some(m) => (key, ((m * 1000.0).round() / 1000.0).max(least), CostSource::Measured),
        None => (key, policy.params().f64(key), CostSource::Default),
    };
    let fixed = policy
        .declares(RECOVERY_FIXED_KEY)
        .then(|| resolve(RECOVERY_FIXED_KEY, plan.fixed_s, 0.0));
    let apply = plan
        .apply_mib_per_s
        .map(|rate| believed_apply_rate(policy, &plan, fixed.map(|(_, s, _)| s), rate));
    [
        fixed,
        policy
            .declares(REDO_APPLY_RATE_KEY)
            .then(|| resolve(REDO_APPLY_RATE_KEY, apply, 0.1)),
        policy
            .declares(RECOVERY_PAGE_READ_KEY)
            .then(|| resolve(RECOVERY_PAGE_READ_KEY, plan.page_read_us, 0.1)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A measured apply rate is believed up to the most redo a measured
/// recovery applied, not past it: the rate falls as the redo names more
/// pages than the pool holds (the apply then evicts dirty pages to make
/// room). Measured (EXPERIMENTS.md "Session 33", `tpcc crash
/// --max-recovery-time 5s`, 64 MiB pool, a new database): round 1 applied
/// 51 MB at 28.5 MiB/s, round 2 planned with that rate, was allowed 70 MB,
/// which named five times the pool's pages, applied them at 17 MB/s and
/// took 5.86 s. So the rate planned with is at most the one that fits the
/// largest measured redo into the bound's redo budget (`flushwise`'s own,
/// `policy::flushwise::redo_budget_us`), and never below the policy's default:
/// a database that has crashed once with little redo plans no faster than
/// one never measured, and the believed size grows with each recovery.
/// `fixed_s` is the open's fixed part as [`policy_costs`] resolved it.
fn believed_apply_rate(
    policy: &flushwise_core::policy::PolicySpec,
    plan: &RecoveryPlan,
    fixed_s: Option<f64>,
    measured: f64,
) -> f64 {
    use flushwise_core::policy::flushwise::redo_budget_us;
    use flushwise_core::policy::{MAX_RECOVERY_TIME_KEY, REDO_APPLY_RATE_KEY};
    let (Some(largest_mib), Some(fixed_s)) = (plan.largest_redo_mib, fixed_s) else {
        return measured;
    };
    if !policy.declares(MAX_RECOVERY_TIME_KEY) || !policy.declares(REDO_APPLY_RATE_KEY) {
        return measured;
    }
    let budget_s = redo_budget_us(policy.params().f64(MAX_RECOVERY_TIME_KEY) * 1e6, fixed_s * 1e6) / 1e6;
    let default = policy.params().f64(REDO_APPLY_RATE_KEY);
    measured.min((largest_mib / budget_s).max(default))
}

/// The recent opens and recoveries of one database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecoveryProfile {
    opens_us: Vec<u64>,
    recoveries: Vec<RecoverySample>,
}

fn to_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

fn keep_last<T>(v: &mut Vec<T>) {
    let excess = v.len().saturating_sub(PROFILE_SAMPLES);
    v.drain(..excess);
}

impl RecoveryProfile {
    pub fn path_in(redo_dir: &Path) -> PathBuf {
        redo_dir.join(PROFILE_FILE_NAME)
    }

    pub fn opens_us(&self) -> &[u64] {
        &self.opens_us
    }

    pub fn recoveries(&self) -> &[RecoverySample] {
        &self.recoveries
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
        let mut profile = RecoveryProfile::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let kind = words.next();
            let numbers: Vec<Option<u64>> = words.map(|w| w.parse().ok()).collect();
            match (kind, numbers.as_slice()) {
                (Some("open"), [Some(us)]) if *us > 0 => profile.opens_us.push(*us),
                (Some("recovery"), [Some(redo_bytes), Some(recovery_us)]) if *recovery_us > 0 => {
                    profile.recoveries.push(RecoverySample {
                        redo_bytes: *redo_bytes,
                        recovery_us: *recovery_us,
                        pages_read: 0,
                        page_reads_us: 0,
                        apply_us: 0,
                    })
                }
                (
                    Some("recovery"),
                    [Some(redo_bytes), Some(recovery_us), Some(pages), Some(reads_us), Some(apply_us)],
                ) if *recovery_us > 0 && reads_us.saturating_add(*apply_us) <= *recovery_us => {
                    profile.recoveries.push(RecoverySample {
                        redo_bytes: *redo_bytes,
                        recovery_us: *recovery_us,
                        pages_read: *pages,
                        page_reads_us: *reads_us,
                        apply_us: *apply_us,
                    })
                }
                _ => {
                    return Err(format!(
                    "line {}: expected `open US` or `recovery REDO_BYTES US [PAGES READ_US]` (integers, durations > 0, READ_US + APPLY_US <= US), found {line:?}",
                    n + 1
                ))
                }
            }
        }
        keep_last(&mut profile.opens_us);
        keep_last(&mut profile.recoveries);
        Ok(profile)
    }

    /// Adds a clean open's wall time.
    pub fn record_open(&mut self, took: Duration) {
        self.opens_us.push(to_us(took));
        keep_last(&mut self.opens_us);
    }

    /// Adds a crash recovery: the redo it applied, its wall time, the pages
    /// it read ahead before the apply, how long those reads took and how
    /// long the apply took (both part of `took`).
    pub fn record_recovery(
        &mut self,
        redo_bytes: u64,
        took: Duration,
        pages_read: u64,
        page_reads: Duration,
        apply: Duration,
    ) {
        let recovery_us = to_us(took);
        let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let page_reads_us = us(page_reads).min(recovery_us);
        self.recoveries.push(RecoverySample {
            redo_bytes,
            recovery_us,
            pages_read,
            page_reads_us,
            apply_us: us(apply).min(recovery_us - page_reads_us),
        });
        keep_last(&mut self.recoveries);
    }

    /// The figures to plan with (see the module documentation). A
    /// recovery's time beyond the fixed part and its page reads is taken as
    /// at least a tenth of its time, so a noisy fixed part cannot make a
    /// rate infinite.
    pub fn plan(&self) -> RecoveryPlan {
        // A measured recovery's time besides its reads and apply is fixed
        // cost as much as a clean open is.
        let fixed_us = self
            .opens_us
            .iter()
            .copied()
            .chain(
                self.recoveries
                    .iter()
                    .filter(|s| s.apply_us > 0)
                    .map(|s| s.recovery_us - s.page_reads_us - s.apply_us),
            )
            .max();
        let apply = self
            .recoveries
            .iter()
            .filter(|s| s.redo_bytes >= RATE_SAMPLE_MIN_BYTES)
            .map(|s| {
                let total = s.recovery_us as f64;
                let redo_us = if s.apply_us > 0 {
                    s.apply_us as f64
                } else {
                    (total - fixed_us.unwrap_or(0) as f64).max(total / 10.0)
                };
                s.redo_bytes as f64 / (redo_us / 1e6) / f64::from(1u32 << 20)
            })
            .min_by(f64::total_cmp);
        let page_read_us = self
            .recoveries
            .iter()
            .filter(|s| s.pages_read >= PAGE_SAMPLE_MIN_PAGES)
            .map(|s| s.page_reads_us as f64 / s.pages_read as f64)
            .max_by(f64::total_cmp);
        let largest_redo_mib = self
            .recoveries
            .iter()
            .filter(|s| s.redo_bytes >= RATE_SAMPLE_MIN_BYTES)
            .map(|s| s.redo_bytes as f64 / f64::from(1u32 << 20))
            .max_by(f64::total_cmp);
        RecoveryPlan {
            fixed_s: fixed_us.map(|us| us as f64 / 1e6),
            apply_mib_per_s: apply,
            page_read_us,
            largest_redo_mib,
        }
    }

    /// Writes the profile to `path` (temporary file, fsync, rename, fsync
    /// of the directory).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let err = |what: &str, p: &Path, e: std::io::Error| format!("{}: cannot {what}: {e}", p.display());
        let tmp = path.with_extension("recovery.tmp");
        let mut text = String::from(HEADER);
        text.push('\n');
        for us in &self.opens_us {
            text.push_str(&format!("open {us}\n"));
        }
        for s in &self.recoveries {
            text.push_str(&format!(
                "recovery {} {} {} {} {}\n",
                s.redo_bytes, s.recovery_us, s.pages_read, s.page_reads_us, s.apply_us
            ));
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
    fn the_plan_is_the_largest_fixed_part_and_the_slowest_rate_beyond_it() {
        let mut p = RecoveryProfile::default();
        assert_eq!(p.plan(), RecoveryPlan::default(), "nothing measured yet");
        // A tiny recovery measures noise, not a rate.
        p.record_recovery(100_000, Duration::from_millis(300), 0, Duration::ZERO, Duration::ZERO);
        assert_eq!(p.plan().apply_mib_per_s, None);
        // Without a clean open, the whole time is the redo's.
        p.record_recovery(64 << 20, Duration::from_secs(4), 0, Duration::ZERO, Duration::ZERO);
        assert_eq!(p.plan().apply_mib_per_s, Some(16.0));
        p.record_open(Duration::from_millis(1500));
        p.record_open(Duration::from_secs(2));
        p.record_recovery(32 << 20, Duration::from_secs(3), 0, Duration::ZERO, Duration::ZERO);
        let plan = p.plan();
        assert_eq!(plan.fixed_s, Some(2.0));
        // 64 MiB in 4 - 2 s = 32 MiB/s; 32 MiB in 3 - 2 s = 32 MiB/s.
        assert_eq!(plan.apply_mib_per_s, Some(32.0));
        p.record_recovery(16 << 20, Duration::from_secs(4), 0, Duration::ZERO, Duration::ZERO);
        assert_eq!(p.plan().apply_mib_per_s, Some(8.0), "the slowest wins");
        // A recovery no longer than the fixed part still gives a finite rate.
        p.record_recovery(10 << 20, Duration::from_secs(1), 0, Duration::ZERO, Duration::ZERO);
        assert_eq!(p.plan().apply_mib_per_s, Some(8.0));
        assert_eq!(p.plan().page_read_us, None, "no recovery read pages ahead yet");
    }

    #[test]
    fn a_measured_rate_is_believed_up_to_the_most_redo_it_was_measured_on() {
        use flushwise_core::policy::{PolicySpec, REDO_APPLY_RATE_KEY};
        let rate = |spec: &str, plan: RecoveryPlan| {
            let policy = PolicySpec::parse(spec).expect("spec");
            policy_costs(&policy, plan)
                .into_iter()
                .find(|(key, _, _)| *key == REDO_APPLY_RATE_KEY)
                .map(|(_, value, _)| value)
        };
        // Session 33's round 2: 49 MiB applied at 28.5 MiB/s beyond a
        // 1.26 s fixed part. A 5 s bound's redo budget is 4 - 1.26 s, and
        // 28.5 MiB/s over it would allow 78 MiB, past what was measured:
        // the rate fits the 49 MiB into the budget instead.
        let mut p = RecoveryProfile::default();
        p.record_open(Duration::from_millis(1260));
        p.record_recovery(
            49 << 20,
            Duration::from_millis(1260 + 70 + 1719),
            3072,
            Duration::from_millis(70),
            Duration::from_millis(1719),
        );
        let plan = p.plan();
        assert_eq!(plan.largest_redo_mib, Some(49.0));
        let measured = plan.apply_mib_per_s.expect("a rate");
        assert!((measured - 28.5).abs() < 0.01, "{measured}");
        let believed = rate("flushwise:max_recovery_time_s=5", plan).expect("flushwise plans a rate");
        assert!((believed - 49.0 / 2.74).abs() < 0.01, "{believed}");
        // At the measured rate a 2 s bound's budget (0.34 s) allows
        // 9.7 MiB, within what was measured: the measured rate stands.
        let believed = rate("flushwise:max_recovery_time_s=2", plan).expect("flushwise plans a rate");
        assert!((believed - measured).abs() < 0.01, "{believed}");
        // A 60 s bound would believe 49 MiB / 46.7 s = 1 MiB/s: never below
        // the default a database with no recovery plans with.
        let believed = rate("flushwise:max_recovery_time_s=60", plan).expect("flushwise plans a rate");
        assert_eq!(believed, 16.0);
        // A rate slower than the default is believed as measured.
        let slow = RecoveryPlan {
            apply_mib_per_s: Some(8.0),
            ..plan
        };
        assert_eq!(rate("flushwise:max_recovery_time_s=60", slow), Some(8.0));
        // A rate the user gives is the user's.
        assert_eq!(
            rate("flushwise:max_recovery_time_s=5,redo_apply_mib_per_s=40", plan),
            Some(40.0)
        );
    }

    #[test]
    fn page_reads_apply_and_the_rest_are_measured_apart() {
        let mut p = RecoveryProfile::default();
        p.record_open(Duration::from_secs(1));
        // 4 s: 1 s reading 10,000 pages, 32 MiB applied in 2 s, 1 s else.
        let s = Duration::from_secs;
        p.record_recovery(32 << 20, s(4), 10_000, s(1), s(2));
        let plan = p.plan();
        assert_eq!(plan.apply_mib_per_s, Some(16.0));
        assert_eq!(plan.page_read_us, Some(100.0));
        assert_eq!(plan.fixed_s, Some(1.0));
        // Too few pages to measure a rate at depth; the slowest of the rest
        // wins; a recovery whose scans took longer than any clean open
        // raises the fixed part.
        p.record_recovery(32 << 20, s(4), 10, Duration::from_millis(50), s(2));
        assert_eq!(p.plan().page_read_us, Some(100.0));
        p.record_recovery(32 << 20, s(6), 5_000, s(1), s(3));
        let plan = p.plan();
        assert_eq!(plan.page_read_us, Some(200.0));
        assert_eq!(plan.fixed_s, Some(2.0));
        assert!((plan.apply_mib_per_s.unwrap() - 32.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn a_line_from_before_the_read_ahead_still_loads() {
        let p = RecoveryProfile::parse("open 1000000\nrecovery 33554432 3000000\n").unwrap();
        assert_eq!(p.recoveries()[0].pages_read, 0);
        // Its page reads count as apply time: 32 MiB in 2 s.
        assert_eq!(p.plan().apply_mib_per_s, Some(16.0));
        assert_eq!(p.plan().page_read_us, None);
        let e = RecoveryProfile::parse("recovery 10 100 5 60 60\n").unwrap_err();
        assert!(
            e.contains("line 1"),
            "reads and apply longer than the recovery are refused: {e}"
        );
    }

    #[test]
    fn only_the_latest_samples_of_each_kind_are_kept() {
        let mut p = RecoveryProfile::default();
        for i in 1..=(PROFILE_SAMPLES as u64 + 3) {
            p.record_recovery(i << 20, Duration::from_secs(1), i, Duration::ZERO, Duration::ZERO);
            p.record_open(Duration::from_millis(i));
        }
        assert_eq!(p.recoveries().len(), PROFILE_SAMPLES);
        assert_eq!(p.recoveries()[0].redo_bytes, 4 << 20, "the three oldest dropped");
        assert_eq!(p.opens_us().len(), PROFILE_SAMPLES);
        assert_eq!(p.opens_us()[0], 4_000);
    }

    #[test]
    fn saves_and_loads_the_same_profile_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = RecoveryProfile::path_in(dir.path());
        assert_eq!(RecoveryProfile::load(&path).unwrap(), RecoveryProfile::default());
        let mut p = RecoveryProfile::default();
        p.record_open(Duration::from_micros(2_100_321));
        p.record_recovery(
            50_000_000,
            Duration::from_micros(3_900_123),
            0,
            Duration::ZERO,
            Duration::ZERO,
        );
        p.record_recovery(
            60_000_000,
            Duration::from_micros(4_800_000),
            9_000,
            Duration::from_micros(600_000),
            Duration::from_micros(2_000_000),
        );
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
        std::fs::write(&path, format!("{HEADER}\nopen 20\nrecovery ten 5\n")).unwrap();
        let e = RecoveryProfile::load(&path).unwrap_err();
        assert!(
            e.contains(PROFILE_FILE_NAME) && e.contains("line 3") && e.contains("recovery ten 5"),
            "{e}"
        );
        std::fs::write(&path, "open 0\n").unwrap();
        let e = RecoveryProfile::load(&path).unwrap_err();
        assert!(e.contains("line 1"), "a zero duration is refused: {e}");
    }
}
