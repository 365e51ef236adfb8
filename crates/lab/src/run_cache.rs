//! Simulator runs cached by configuration hash, so a long experiment
//! resumes where it stopped and two experiments that share a run run it
//! once.
//!
//! Invariants:
//! - a run is a pure function of its configuration (the simulator is
//!   deterministic), so its [`SimConfig::config_hash`] names it;
//! - a cache file holds one JSON record per line, appended as each run
//!   finishes (an interrupted write leaves a partial last line, which is
//!   skipped and rerun);
//! - a record is reused only under the commit that wrote it, and never by a
//!   build from an edited tree (`...-dirty`) or without git (`unknown`):
//!   two such builds share a label but not their code.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::Serialize;

use flushwise_sim::SimConfig;

use crate::sim_runner::{self as runner, RunOutput};
use crate::COMMIT;

/// A record a cache keeps: it must say which run and which commit it is.
pub trait CachedRun: Serialize + DeserializeOwned + Send + Sync {
    fn config_hash(&self) -> &str;
    fn commit(&self) -> &str;
}

/// Whether runs cached under `commit` may be reused.
pub fn reusable(commit: &str) -> bool {
    !(commit.ends_with("-dirty") || commit == "unknown")
}

/// Runs already finished at `commit`, by configuration hash.
pub fn load<R: CachedRun>(path: &Path, commit: &str) -> HashMap<String, R> {
    let Ok(file) = File::open(path) else {
        return HashMap::new();
    };
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<R>(&line).ok())
        .filter(|r| r.commit() == commit)
        .map(|r| (r.config_hash().to_string(), r))
        .collect()
}

/// Appends `record` to the cache at `path` (created if missing). A write
/// that fails costs a rerun next time, no more, so it is not an error.
pub fn append<R: CachedRun>(path: &Path, record: &R) {
    if let (Ok(line), Ok(mut f)) = (
        serde_json::to_string(record),
        OpenOptions::new().create(true).append(true).open(path),
    ) {
        let _ = writeln!(f, "{line}");
    }
}

/// What [`run_all`] did.
pub struct CachedRuns<R> {
    /// Every run asked for that finished (now or before), by hash.
    pub records: HashMap<String, R>,
    /// Runs settled now (the rest came from the cache).
    pub ran: usize,
    /// Simulations that settled them (fewer than `ran` where lockstep
    /// shadows took a run's figures).
    pub simulations: usize,
    /// One line per run that failed, naming its policy and hash.
    pub failures: Vec<String>,
}

/// The runs `configs` name, from the cache at `cache_path` or run now on
/// `jobs` threads under one progress bar labelled `label`; `keep` makes
/// the record of a finished run, which is appended to the cache at once.
pub fn run_all<R, K>(
    configs: Vec<SimConfig>,
    jobs: usize,
    cache_path: &Path,
    label: &str,
    keep: K,
) -> Result<CachedRuns<R>, String>
where
    R: CachedRun,
    K: Fn(&SimConfig, &RunOutput) -> R + Sync,
{
    let mut pending = Pending::open(configs, cache_path, label)?;
    let todo = std::mem::take(&mut pending.todo);
    runner::run_each(todo, jobs, label, |config, outcome| {
        pending.settle(config, outcome, &keep)
    });
    Ok(pending.finish())
}

/// [`run_all`], where configurations that differ only in their policy's
/// parameters (the tuned oracle's grid) run in lockstep
/// ([`runner::run_lockstep`]): one simulation per group, whose policy's
/// decisions the others' are checked against call by call; those that
/// never decided differently take its figures (their records are exact:
/// their runs would be this run), the rest are grouped again and run as
/// soon as their group ends (ahead of groups not yet started, so the
/// order of `configs`, most expensive first, is the order cells finish
/// in). Only the figures of a shadow's result are kept (no
/// interval rows or decisions): for experiments that read only those.
pub fn run_all_lockstep<R, K>(
    configs: Vec<SimConfig>,
    jobs: usize,
    cache_path: &Path,
    label: &str,
    keep: K,
) -> Result<CachedRuns<R>, String>
where
    R: CachedRun,
    K: Fn(&SimConfig, &RunOutput) -> R + Sync,
{
    let mut pending = Pending::open(configs, cache_path, label)?;
    let todo = std::mem::take(&mut pending.todo);
    let groups = lockstep_groups(todo);
    let simulations = AtomicUsize::new(0);
    runner::run_groups(groups, jobs, label, |group, outcome| {
        simulations.fetch_add(1, Ordering::Relaxed);
        let again = match outcome {
            Ok(out) => {
                pending.settle(&group[0], Ok(out.primary), &keep);
                let mut again = Vec::new();
                for (config, shadow) in group[1..].iter().zip(out.shadows) {
                    match shadow {
                        Some(output) => pending.settle(config, Ok(output), &keep),
                        None => again.push(config.clone()),
                    }
                }
                again
            }
            Err(e) => {
                // The group's first configuration failed; the others run
                // again (one of them first) so each failure is its own.
                pending.settle(&group[0], Err(e), &keep);
                group[1..].to_vec()
            }
        };
        lockstep_groups(again)
    });
    let simulations = simulations.into_inner();
    eprintln!("{label}: {} runs settled by {simulations} simulations", pending.ran);
    let mut done = pending.finish();
    done.simulations = simulations;
    Ok(done)
}

/// Groups configurations that are equal but for their policy's parameters
/// (same policy), in first-seen order; a group's first is its primary.
fn lockstep_groups(configs: Vec<SimConfig>) -> Vec<Vec<SimConfig>> {
    let mut groups: Vec<Vec<SimConfig>> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for config in configs {
        let key = format!(
            "{}/{}",
            config.policy.name(),
            SimConfig {
                policy: flushwise_core::policy::PolicySpec::default(),
                ..config.clone()
            }
            .config_hash()
        );
        match by_key.get(&key) {
            Some(&i) => groups[i].push(config),
            None => {
                by_key.insert(key, groups.len());
                groups.push(vec![config]);
            }
        }
    }
    groups
}

/// The cache as [`run_all`] and [`run_all_lockstep`] fill it.
struct Pending<R> {
    records: HashMap<String, R>,
    todo: Vec<SimConfig>,
    file: Mutex<File>,
    fresh: Mutex<Vec<R>>,
    failures: Mutex<Vec<String>>,
    ran: usize,
}

impl<R: CachedRun> Pending<R> {
    fn open(configs: Vec<SimConfig>, cache_path: &Path, label: &str) -> Result<Self, String> {
        let mut records: HashMap<String, R> = if reusable(COMMIT) {
            load(cache_path, COMMIT)
        } else {
            HashMap::new()
        };
        let mut todo: Vec<SimConfig> = Vec::new();
        let mut queued: HashSet<String> = HashSet::new();
        let mut wanted: HashSet<String> = HashSet::new();
        for config in configs {
            let hash = config.config_hash();
            wanted.insert(hash.clone());
            if !records.contains_key(&hash) && queued.insert(hash) {
                todo.push(config);
            }
        }
        records.retain(|hash, _| wanted.contains(hash));
        if let Some(dir) = cache_path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(cache_path)
            .map_err(|e| format!("cannot open the run cache {}: {e}", cache_path.display()))?;
        let ran = todo.len();
        eprintln!(
            "{label}: {ran} runs to do ({} cached at commit {COMMIT} in {})",
            records.len(),
            cache_path.display()
        );
        Ok(Self {
            records,
            todo,
            file: Mutex::new(file),
            fresh: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            ran,
        })
    }

    /// Records one run's outcome (and appends a finished one to the cache).
    fn settle<K>(&self, config: &SimConfig, outcome: Result<RunOutput, String>, keep: &K)
    where
        K: Fn(&SimConfig, &RunOutput) -> R,
    {
        match outcome {
            Ok(out) => {
                let record = keep(config, &out);
                if let (Ok(line), Ok(mut f)) = (serde_json::to_string(&record), self.file.lock()) {
                    // A cache write that fails costs a rerun next time, no more.
                    let _ = writeln!(f, "{line}");
                }
                if let Ok(mut v) = self.fresh.lock() {
                    v.push(record);
                }
            }
            Err(e) => {
                if let Ok(mut v) = self.failures.lock() {
                    v.push(format!("{} ({}): {e}", config.policy, config.config_hash()));
                }
            }
        }
    }

    fn finish(self) -> CachedRuns<R> {
        let mut records = self.records;
        for record in self.fresh.into_inner().unwrap_or_default() {
            records.insert(record.config_hash().to_string(), record);
        }
        CachedRuns {
            records,
            ran: self.ran,
            simulations: self.ran,
            failures: self.failures.into_inner().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Rec {
        config_hash: String,
        commit: String,
    }
    impl CachedRun for Rec {
        fn config_hash(&self) -> &str {
            &self.config_hash
        }
        fn commit(&self) -> &str {
            &self.commit
        }
    }

    /// What a lockstep cache keeps of a run: its figures.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Figures {
        config_hash: String,
        commit: String,
        policy: String,
        nopm: f64,
        sync_write_pct: f64,
        io_per_txn: f64,
    }
    impl CachedRun for Figures {
        fn config_hash(&self) -> &str {
            &self.config_hash
        }
        fn commit(&self) -> &str {
            &self.commit
        }
    }

    /// The oracle's way (lockstep groups, diverged settings simulated as
    /// their groups' follow-ups) settles every configuration with the
    /// figures of its own run, as running each alone does.
    #[test]
    fn lockstep_settles_every_configuration_as_its_own_run_would() {
        use flushwise_core::policy::PolicySpec;
        use flushwise_sim::WorkloadSpec;
        let mut configs = Vec::new();
        for (policy, pool_mib, redo_mib) in [("mysql56", 4u64, 64u64), ("percona56", 40, 16)] {
            for setting in [
                "io_capacity=100",
                "io_capacity=400",
                "io_capacity=25600",
                "lru_scan_depth=256",
            ] {
                configs.push(SimConfig {
                    workload: WorkloadSpec::tpcc(2),
                    buffer_pool_bytes: pool_mib << 20,
                    redo_bytes: redo_mib << 20,
                    warmup_us: 5_000_000,
                    duration_us: 5_000_000,
                    report_interval_us: 5_000_000,
                    policy: PolicySpec::parse(&format!("{policy}:{setting}")).expect("test policy"),
                    ..SimConfig::default()
                });
            }
        }
        let keep = |config: &SimConfig, out: &RunOutput| Figures {
            config_hash: out.result.config_hash.clone(),
            commit: out.result.commit.clone(),
            policy: config.policy.to_string(),
            nopm: out.result.figures.nopm,
            sync_write_pct: out.result.figures.sync_write_pct,
            io_per_txn: out.result.figures.io_per_txn,
        };
        let dir = tempfile::tempdir().unwrap();
        let shared = run_all_lockstep(configs.clone(), 2, &dir.path().join("a.jsonl"), "test", keep).unwrap();
        let alone = run_all(configs.clone(), 2, &dir.path().join("b.jsonl"), "test", keep).unwrap();
        assert!(shared.failures.is_empty() && alone.failures.is_empty());
        assert_eq!(shared.records.len(), configs.len());
        assert_eq!(shared.records, alone.records);
        // Some settings were shared (fewer simulations than runs) and some
        // diverged and ran as follow-ups (more than the two groups).
        assert!(
            shared.simulations > 2 && shared.simulations < configs.len(),
            "{} simulations for {} runs",
            shared.simulations,
            configs.len()
        );
    }

    #[test]
    fn the_cache_keeps_only_this_commits_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let mine = Rec {
            config_hash: "h1".into(),
            commit: "abc1234".into(),
        };
        let other = Rec {
            config_hash: "h2".into(),
            commit: "fff0000".into(),
        };
        let text = format!(
            "{}\n{}\n{{\"config_hash\":\"h3\",\"comm",
            serde_json::to_string(&mine).unwrap(),
            serde_json::to_string(&other).unwrap()
        );
        fs::write(&path, text).unwrap();
        let cache: HashMap<String, Rec> = load(&path, "abc1234");
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get("h1"), Some(&mine));
        assert!(reusable("abc1234"));
        assert!(!reusable("abc1234-dirty") && !reusable("unknown"));
    }
}
