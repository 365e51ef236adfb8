//! Sweeps: a grid of simulator runs given as data (policy x parameters x
//! pool x device x workload x ...), one table out.
//!
//! A grid is one JSON object whose keys are [`SimOptions`] fields. A key
//! whose value is a list is an axis; any other value holds for every run.
//! Runs are the axes' product, the first axis varying slowest (nested
//! loops in the object's order). A `policy` value may also be an object,
//! `{"name": "mysql56", "io_capacity": [200, 400]}`: the policy's
//! parameters, each a value or a list, expand into one policy per
//! combination (`mysql56:io_capacity=200`, ...).
//!
//! ```json
//! {"warehouses": 10, "warmup": "10s", "duration": "10s",
//!  "policy": ["mysql56", {"name": "percona56", "io_capacity": [200, 400]}],
//!  "buffer_pool": ["32MiB", "64MiB"], "device": ["ssd", "hdd"]}
//! ```
//!
//! Every run's row ([`row`]) is `run` (its index in the grid), the
//! result's columns as `sim run --output csv` names them, and `nopm_cov`;
//! [`table`] joins rows in index order into one CSV. `flushwise sim sweep`
//! runs a grid on threads, the Python package's `flushwise-sweep` as Ray
//! tasks, both through [`expand`], [`row`] and [`table`]: the simulator is
//! deterministic, so the two tables are equal except for the wall-clock
//! columns (`wall_seconds`, `requests_per_second`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::{Map, Value};

use flushwise_sim::SimOptions;

use crate::render::{self as output, Csv};
use crate::sim_runner as runner;

/// One run's table row: (column, cell) pairs.
pub type Row = Vec<(String, String)>;

/// The most runs one grid may expand to (a typo such as a 1,000-seed list
/// times every other axis should fail at once, not run for a week).
pub const SWEEP_RUNS_MAX: usize = 100_000;

/// Columns that depend on the machine and its load, not on the run.
pub const WALL_CLOCK_COLUMNS: [&str; 2] = ["wall_seconds", "requests_per_second"];

/// A value's text as a policy parameter takes it.
fn param_text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("a policy parameter must be a string or a number, not {other}")),
    }
}

/// The values of an axis or of a fixed key: a list's items, or the value.
fn values(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    }
}

/// A `policy` value: a string, or an object of name and parameters (each a
/// value or a list), expanded into policy texts.
fn policy_texts(value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Object(fields) => {
            let name = fields
                .get("name")
                .and_then(Value::as_str)
                .ok_or("grid: a policy object needs \"name\" (a policy name, as `flushwise policies` lists them)")?;
            let mut texts = vec![String::new()];
            for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "name") {
                let choices = values(value)
                    .iter()
                    .map(param_text)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("grid: policy {name} parameter {key}: {e}"))?;
                texts = texts
                    .iter()
                    .flat_map(|t| {
                        choices.iter().map(move |c| {
                            if t.is_empty() {
                                format!("{key}={c}")
                            } else {
                                format!("{t},{key}={c}")
                            }
                        })
                    })
                    .collect();
            }
            Ok(texts
                .into_iter()
                .map(|t| if t.is_empty() { name.to_string() } else { format!("{name}:{t}") })
                .collect())
        }
        other => Err(format!(
            "grid: policy {other}: a policy is a string (`name:key=value,...`) or an object {{\"name\": ..., key: value or [values]}}"
        )),
    }
}

/// The runs a grid describes, in order; every run's options are checked
/// (an unknown key, a bad size or policy is an error naming it) before
/// anything runs.
pub fn expand(grid: &Value) -> Result<Vec<SimOptions>, String> {
    let Value::Object(fields) = grid else {
        return Err(
            "grid: a JSON object of simulator options is expected (keys as `flushwise sim run`'s flags, with _ for -)"
                .into(),
        );
    };
    let mut points: Vec<Map<String, Value>> = vec![Map::new()];
    for (key, value) in fields {
        let choices: Vec<Value> = if key == "policy" {
            let mut texts = Vec::new();
            for v in values(value) {
                texts.extend(policy_texts(&v)?.into_iter().map(Value::String));
            }
            texts
        } else {
            values(value)
        };
        if choices.is_empty() {
            return Err(format!("grid: {key} is an empty list: give at least one value"));
        }
        let n = points.len().saturating_mul(choices.len());
        if n > SWEEP_RUNS_MAX {
            return Err(format!("grid: more than {SWEEP_RUNS_MAX} runs (at {key})"));
        }
        points = points
            .iter()
            .flat_map(|p| {
                choices.iter().map(move |c| {
                    let mut p = p.clone();
                    p.insert(key.clone(), c.clone());
                    p
                })
            })
            .collect();
    }
    points
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let options: SimOptions = serde_json::from_value(Value::Object(p)).map_err(|e| format!("grid: {e}"))?;
            options
                .to_config()
                .map_err(|e| format!("grid run {i} ({}): {e}", options.policy))?;
            Ok(options)
        })
        .collect()
}

/// Parses a grid from JSON text.
pub fn parse(text: &str) -> Result<Vec<SimOptions>, String> {
    let grid: Value = serde_json::from_str(text).map_err(|e| format!("grid: not JSON: {e}"))?;
    expand(&grid)
}

/// Runs run `index` of a grid; its row: `run`, the result's columns, `nopm_cov`.
pub fn row(index: usize, options: &SimOptions) -> Result<Row, String> {
    let config = options.to_config()?;
    let out = runner::run_one(config, None).map_err(|e| format!("grid run {index} ({}): {e}", options.policy))?;
    let mut cells = vec![("run".to_string(), index.to_string())];
    cells.extend(output::flatten(&out.result));
    cells.push(("nopm_cov".to_string(), format!("{:.4}", output::nopm_cov(&out.rows))));
    Ok(cells)
}

/// The rows as one CSV table (header: the union of their columns, in
/// first-seen order), in the order given.
pub fn table(rows: &[Row]) -> String {
    let mut csv = Csv::default();
    for r in rows {
        csv.push(r.clone());
    }
    csv.render()
}

/// Runs every run of `runs` on up to `jobs` threads; `progress` is told
/// (done, total) after each; the table in grid order.
pub fn run(runs: &[SimOptions], jobs: usize, progress: impl Fn(usize, usize) + Sync) -> Result<String, String> {
    let n = runs.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Row, String>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(options) = runs.get(i) else { break };
                let out = row(i, options);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(out);
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, n);
            });
        }
    });
    let rows = slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err("a simulation thread panicked".to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(table(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_axes_first_slowest_and_policy_objects_expand() {
        let grid = serde_json::json!({
            "warehouses": 2,
            "policy": ["mysql56", {"name": "percona56", "io_capacity": [200, 400]}],
            "buffer_pool": ["2MiB", "4MiB"],
        });
        let runs = expand(&grid).unwrap();
        let got: Vec<(String, String)> = runs.iter().map(|o| (o.policy.clone(), o.buffer_pool.clone())).collect();
        assert_eq!(
            got,
            [
                ("mysql56", "2MiB"),
                ("mysql56", "4MiB"),
                ("percona56:io_capacity=200", "2MiB"),
                ("percona56:io_capacity=200", "4MiB"),
                ("percona56:io_capacity=400", "2MiB"),
                ("percona56:io_capacity=400", "4MiB"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert!(runs.iter().all(|o| o.warehouses == 2));
    }

    #[test]
    fn a_bad_grid_names_the_problem() {
        let err = expand(&serde_json::json!({"warehouse": 3})).unwrap_err();
        assert!(err.contains("warehouse"), "{err}");
        let err = expand(&serde_json::json!({"buffer_pool": ["64MiB", "12QB"]})).unwrap_err();
        assert!(err.contains("--buffer-pool 12QB"), "{err}");
        let err = expand(&serde_json::json!({"policy": []})).unwrap_err();
        assert!(err.contains("empty"), "{err}");
    }
}
