//! The catalog's engine entries (`lab run 000-fig2-engine`, ...): each run
//! of an engine study is a one-policy `compare` on a copy of a prepared
//! database (prepared once under `--dir`, as `compare` does), its result
//! digested like a simulator run's and drawn by the lab.
//!
//! Finished runs are cached in the lab's cache file under a hash of
//! everything that defines them (study, series, policy, pool, redo,
//! doublewrite, times, warehouses, connections, seed), per commit, so
//! `lab run all` resumes after an interruption without repeating them.

use std::collections::HashMap;
use std::path::Path;

use flushwise_core::policy::PolicySpec;
use flushwise_lab::catalog::{self, EngineStudy, Entry};
use flushwise_lab::engine_compare;
use flushwise_lab::figures::{self, DrawnStudy, EntryResult, LabRequest, RunDigest};
use flushwise_lab::run_cache;
use flushwise_lab::COMMIT;

use crate::args::{EngineCompareArgs, EngineRunArgs, OnOff, OutputFormat, PolicyList};
use crate::compare_cmd;

/// What the engine entries of one `lab run` did.
pub struct EngineEntries {
    pub results: Vec<EntryResult>,
    pub notes: Vec<String>,
    pub runs_total: usize,
    pub runs_done: usize,
}

/// The lab's key of an engine run.
fn run_key(study: &EngineStudy, run: &catalog::EngineRun, seed: u64) -> String {
    flushwise_sim::config_hash_of(&format!(
        "lab-engine|study={}|series={}|policy={}|pool={}|redo={}|dw={}|w={}|c={}|warmup={}|duration={}|interval={}|seed={}",
        study.name,
        run.series,
        run.policy,
        run.buffer_pool_bytes,
        study.redo_bytes,
        run.doublewrite,
        study.warehouses,
        study.connections,
        study.warmup,
        study.duration,
        study.report_interval,
        seed
    ))
}

/// `compare`'s arguments for one run of `study`.
fn compare_args(
    study: &EngineStudy,
    run: &catalog::EngineRun,
    request: &LabRequest,
    dir: &Path,
) -> Result<EngineCompareArgs, String> {
    Ok(EngineCompareArgs {
        dir: dir.to_path_buf(),
        redo_dir: None,
        io: "direct".into(),
        preset: engine_compare::compare_preset("paper-regime")?,
        warehouses: Some(study.warehouses),
        policies: PolicyList(vec![PolicySpec::parse(&run.policy)?]),
        engine: EngineRunArgs {
            connections: study.connections,
            buffer_pool: Some(format!("{}MiB", run.buffer_pool_bytes >> 20)),
            redo: Some(format!("{}MiB", study.redo_bytes >> 20)),
            device: vec!["native".into()],
            doublewrite: if run.doublewrite { OnOff::On } else { OnOff::Off },
            flush_log_at_commit: 1,
            warmup: Some(study.warmup.into()),
            duration: Some(study.duration.into()),
            report_interval: study.report_interval.into(),
            seed: request.seed,
            keying_think: false,
            max_recovery_time: None,
            // Prose to stderr: the lab prints its own report on stdout.
            output: OutputFormat::Json,
        },
        out: request.out.join(study.name).join("compare"),
        decisions: false,
        metrics: crate::args::MetricsArgs::default(),
    })
}

/// Runs the engine studies of `entries` (cached runs skipped) and writes
/// each entry's files.
pub fn run(entries: &[&'static Entry], request: &LabRequest, dir: &Path) -> Result<EngineEntries, String> {
    let cache = request.out.join(".cache").join(format!("lab-{COMMIT}.jsonl"));
    let mut records: HashMap<String, RunDigest> = if run_cache::reusable(COMMIT) {
        run_cache::load(&cache, COMMIT)
    } else {
        HashMap::new()
    };
    if let Some(parent) = cache.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut studies: Vec<EngineStudy> = Vec::new();
    for e in entries {
        if !studies.iter().any(|s| s.name == e.study) {
            studies.push(catalog::engine_study(e.study, request.full)?);
        }
    }
    let mut notes = Vec::new();
    let (mut runs_total, mut runs_done) = (0, 0);
    for study in &studies {
        for (i, run) in study.runs.iter().enumerate() {
            runs_total += 1;
            let key = run_key(study, run, request.seed);
            if records.contains_key(&key) {
                continue;
            }
            eprintln!(
                "lab: {} run {}/{}: {} at {} MiB (doublewrite {})",
                study.name,
                i + 1,
                study.runs.len(),
                run.series,
                run.buffer_pool_bytes >> 20,
                if run.doublewrite { "on" } else { "off" }
            );
            let args = compare_args(study, run, request, dir)?;
            let done = match compare_cmd::run_policies(&args, None) {
                Ok(done) => done,
                Err(e) => {
                    notes.push(format!("{} {}: {e}", study.name, run.series));
                    continue;
                }
            };
            if let Some(failure) = &done.failure {
                notes.push(format!("{} {}: {failure}", study.name, run.series));
            }
            runs_done += 1;
            let Some(outcome) = done.outcomes.first() else {
                notes.push(format!("{} {}: no outcome", study.name, run.series));
                continue;
            };
            if let Err(e) = &outcome.check {
                notes.push(format!("{} {}: consistency check failed: {e}", study.name, run.series));
            }
            let r = &outcome.out.result;
            let mut digest = RunDigest::from_parts(
                r,
                &outcome.out.rows,
                run.policy.clone(),
                run.buffer_pool_bytes / done.page_bytes.max(1),
                crate::args::duration_flag("--report-interval", study.report_interval)? as f64 / 1e6,
                r.warmup_seconds,
            );
            digest.config_hash = key.clone();
            digest.commit = COMMIT.to_string();
            run_cache::append(&cache, &digest);
            records.insert(key, digest);
        }
    }
    let mut results = Vec::new();
    for e in entries {
        let Some(study) = studies.iter().find(|s| s.name == e.study) else {
            continue;
        };
        let drawn = DrawnStudy::new(
            study.name,
            &study.scale,
            study.x_label,
            &study.notes,
            flushwise_sim::SHELL_ENGINE,
            study
                .runs
                .iter()
                .map(|r| (r.series.as_str(), r.x, records.get(&run_key(study, r, request.seed)))),
        );
        match figures::write_entry(e, &drawn, request) {
            Ok(result) => results.push(result),
            Err(err) => notes.push(format!("{}: {err}", e.name)),
        }
    }
    Ok(EngineEntries {
        results,
        notes,
        runs_total,
        runs_done,
    })
}
