//! The pieces of an engine comparison (`flushwise compare`) that are not
//! argument handling: what each policy's run left, which regime it was in,
//! the result files and the table.
//!
//! Invariant: the result files hold exactly what stdout would carry with
//! `--output json` (`results.json`, JSON lines of kind interval and result)
//! and `--output csv` (`results.csv`, plus the consistency verdict), so a
//! run can be read back later the same way.

use std::fs;
use std::path::{Path, PathBuf};

use flushwise_sim::{FlushFigures, IntervalRow};

use crate::engine_run::EngineRunOutput;
use crate::render::{self as output, write_file, Csv};
use crate::COMMIT;

/// One policy's run and its consistency verdict (the check's text, or why
/// it failed).
pub struct PolicyOutcome {
    pub out: EngineRunOutput,
    pub check: Result<String, String>,
}

/// Which regime a run was in: the pool's share of the data and how many
/// seconds of the measured misses it holds.
pub fn regime_text(pool_bytes: u64, data_bytes: u64, page_bytes: u64, figures: &FlushFigures, seconds: f64) -> String {
    let share = 100.0 * pool_bytes as f64 / data_bytes.max(1) as f64;
    let misses_per_s = figures.reads as f64 / seconds.max(1e-9);
    let held_s = (pool_bytes / page_bytes.max(1)) as f64 / misses_per_s.max(1e-9);
    let verdict = if (1.0..=15.0).contains(&share) && held_s >= 5.0 {
        "Lee et al.'s regime (pool 1-15% of the data, >= 5 s of misses)"
    } else if share > 100.0 {
        "data in memory"
    } else if held_s < 1.0 {
        "small pool: it turns over in under a second, faster than a once-a-second cleaner"
    } else {
        "between regimes"
    };
    format!(
        "regime: pool {share:.1}% of the data, {misses_per_s:.0} misses/s measured, the pool holds {held_s:.1} s of misses: {verdict}"
    )
}

/// Relative change of a tuned parameter between the end of the warm-up and
/// the end of the run above which the run is reported as still adapting.
pub const STILL_ADAPTING_CHANGE: f64 = 0.05;

/// Whether the policy's tuned parameters (Pscan, Pio and the like) still
/// moved during the measured window: each parameter at the end of the
/// warm-up against the end of the run. Parameters named `np_*` are Table 2
/// observations and the stable-state memory (NP_req_flush,
/// NP_LRU^stable, ...), which move with the load, not knobs: not counted. A policy that was still adapting
/// was measured before it converged (Lee et al. warm up 30 minutes).
pub fn convergence_text(rows: &[IntervalRow]) -> String {
    let start = rows.iter().rev().find(|r| r.warmup).or_else(|| rows.first());
    let (Some(start), Some(end)) = (start, rows.last()) else {
        return "no interval rows: convergence unknown".into();
    };
    let moved: Vec<String> = end
        .parameters
        .iter()
        .filter(|(name, _)| !name.starts_with("np_"))
        .filter_map(|(name, after)| {
            let before = start.parameters.iter().find(|(n, _)| n == name)?.1;
            let change = (after - before).abs() / before.abs().max(1.0);
            (change > STILL_ADAPTING_CHANGE).then(|| {
                format!(
                    "{name} {} -> {} ({:+.0}%)",
                    output::short_number(before),
                    output::short_number(*after),
                    100.0 * (after - before) / before.abs().max(1.0)
                )
            })
        })
        .collect();
    if moved.is_empty() {
        format!(
            "parameters steady in the measured window (none moved by more than {:.0}%)",
            100.0 * STILL_ADAPTING_CHANGE
        )
    } else {
        format!(
            "STILL ADAPTING in the measured window: {}; its figures are not those of a converged state (give it a longer --warmup)",
            moved.join(", ")
        )
    }
}

/// A policy spec as a file-name part (`self-tuning:np_dirty=total` ->
/// `self-tuning_np_dirty-total`).
pub fn file_label(policy: &str) -> String {
    policy
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '.' => c,
            '=' => '-',
            _ => '_',
        })
        .collect()
}

/// Creates `OUT/compare-<unix seconds>/` before the runs (`--decisions`
/// files go there as each run goes).
pub fn results_dir(out: &Path) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = out.join(format!("compare-{stamp}"));
    fs::create_dir_all(&dir).map_err(|e| format!("--out {}: cannot create: {e}", dir.display()))?;
    Ok(dir)
}

pub fn write_results(dir: &Path, outcomes: &[PolicyOutcome]) -> Result<(), String> {
    let json = output::json_lines(outcomes.iter().map(|o| (&o.out.result, o.out.rows.as_slice())))?;
    let mut csv = Csv::default();
    let mut intervals = Csv::default();
    for o in outcomes {
        let mut row = output::flatten(&o.out.result);
        row.push((
            "consistency".into(),
            match &o.check {
                Ok(_) => "pass".into(),
                Err(e) => e.clone(),
            },
        ));
        csv.push(row);
        for r in &o.out.rows {
            intervals.push(output::flatten_interval(r, COMMIT));
        }
    }
    write_file(&dir.join("results.json"), &json, "--out")?;
    write_file(&dir.join("results.csv"), &csv.render(), "--out")?;
    write_file(&dir.join("intervals.csv"), &intervals.render(), "--out")?;
    Ok(())
}

pub fn compare_table(outcomes: &[PolicyOutcome]) -> String {
    let rows: Vec<output::PolicyRow<'_>> = outcomes
        .iter()
        .map(|o| {
            let r = &o.out.result;
            let p90 = r
                .latency
                .iter()
                .find(|l| l.txn_type == "new_order")
                .map_or("n/a".to_string(), |l| format!("{:.1}", l.p90_us as f64 / 1000.0));
            output::PolicyRow {
                policy: &r.policy,
                figures: &r.figures,
                dirty_pct_avg: r.dirty_pct_avg,
                extra: vec![p90, if o.check.is_ok() { "pass".into() } else { "FAIL".into() }],
            }
        })
        .collect();
    output::policy_table(&rows, &["p90 New-Order ms", "consistency"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(warmup: bool, p_scan: f64) -> IntervalRow {
        IntervalRow {
            warmup,
            parameters: vec![
                ("p_scan".into(), p_scan),
                ("p_io".into(), 200.0),
                ("np_req_flush".into(), p_scan),
            ],
            ..IntervalRow::default()
        }
    }

    #[test]
    fn a_parameter_moving_in_the_measured_window_is_reported_as_still_adapting() {
        let rows = [
            row(true, 1024.0),
            row(true, 3000.0),
            row(false, 3300.0),
            row(false, 3700.0),
        ];
        let text = convergence_text(&rows);
        assert!(text.starts_with("STILL ADAPTING") && text.contains("p_scan"), "{text}");
        assert!(!text.contains("p_io") && !text.contains("np_req_flush"), "{text}");
        let rows = [
            row(true, 1024.0),
            row(true, 7900.0),
            row(false, 7950.0),
            row(false, 7990.0),
        ];
        assert!(convergence_text(&rows).starts_with("parameters steady"));
    }
}
