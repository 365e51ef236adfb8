//! `tpch prepare | run | answers | export`: TPC-H on the real engine.
//!
//! `prepare` creates the directory's database and loads it (`--force`
//! wipes one that is there); `run` opens it with the run's settings and
//! runs the power and throughput tests, printing each query as it ends and
//! a summary with the flushing figures of each test; `answers` runs the 22
//! queries with the validation parameters (`--output json` is what the
//! DuckDB check reads); `export` writes the tables as CSV. With `--output
//! json|csv`, stdout carries only that and the banner goes to stderr.

use std::io::Write as _;

use serde_json::json;

use flushwise_lab::render::{render_table, write_file, Csv};
use flushwise_lab::tpch::{self, TpchPrepareSpec, TpchRunOutput, TpchRunSettings};
use flushwise_lab::workload_dir::LoadFlags;
use flushwise_lab::COMMIT;
use flushwise_workloads::tpch::driver::{QueryTiming, RunConfig};
use flushwise_workloads::tpch::query::Value;

use crate::args::{OnOff, OutputFormat, TpchAnswersArgs, TpchExportArgs, TpchPrepareArgs, TpchRunArgs};

pub fn prepare(args: &TpchPrepareArgs) -> Result<(), String> {
    let threads = args
        .threads
        .unwrap_or_else(flushwise_lab::sim_runner::default_jobs)
        .max(1);
    let spec = TpchPrepareSpec {
        sf: args.sf,
        seed: args.seed,
        threads,
        load: LoadFlags {
            page_size: &args.page_size,
            redo: &args.redo,
            buffer_pool: &args.buffer_pool,
            force: args.force,
        },
    };
    let (_, summary) = tpch::prepare(&args.location.location(), &spec)?;
    println!("{summary}");
    Ok(())
}

pub fn export(args: &TpchExportArgs) -> Result<(), String> {
    let report = tpch::export(&args.location.location(), &args.out)?;
    for t in &report.tables {
        println!("{:<10} {:>10} rows  {}", t.table, t.rows, t.path.display());
    }
    Ok(())
}

fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(i) => json!(i),
        Value::Float(f) => json!(f),
        other => json!(other.to_text()),
    }
}

pub fn answers(args: &TpchAnswersArgs) -> Result<(), String> {
    let (sf, answers) = tpch::answers(&args.location.location())?;
    let text = match args.output {
        OutputFormat::Json => {
            let queries: Vec<serde_json::Value> = answers
                .iter()
                .map(|a| {
                    json!({
                        "query": a.params.query,
                        "params": a.params.describe(),
                        "seconds": a.seconds,
                        "columns": a.answer.columns,
                        "rows": a.answer.rows.iter().map(|r| r.iter().map(value_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let doc = json!({"kind": "tpch-answers", "sf": sf, "commit": COMMIT, "queries": queries});
            serde_json::to_string(&doc).map_err(|e| format!("cannot render JSON: {e}"))? + "\n"
        }
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            for a in &answers {
                for (i, row) in a.answer.rows.iter().enumerate() {
                    for (column, v) in a.answer.columns.iter().zip(row) {
                        csv.push(vec![
                            ("query".into(), a.params.query.to_string()),
                            ("row".into(), (i + 1).to_string()),
                            ("column".into(), column.to_string()),
                            ("value".into(), v.to_text()),
                        ]);
                    }
                }
            }
            csv.render()
        }
        OutputFormat::Table => {
            let mut out = String::new();
            for a in &answers {
                out.push_str(&format!(
                    "Q{} ({}) {} rows in {:.3} s\n",
                    a.params.query,
                    a.params.describe(),
                    a.answer.rows.len(),
                    a.seconds
                ));
                let header: Vec<String> = a.answer.columns.iter().map(|c| c.to_string()).collect();
                let rows: Vec<Vec<String>> = a
                    .answer
                    .rows
                    .iter()
                    .take(10)
                    .map(|r| r.iter().map(Value::to_text).collect())
                    .collect();
                out.push_str(&render_table(&header, &rows));
                if a.answer.rows.len() > 10 {
                    out.push_str(&format!("({} more rows)\n", a.answer.rows.len() - 10));
                }
                out.push('\n');
            }
            out
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    Ok(())
}

fn query_line(t: &QueryTiming) -> String {
    format!(
        "{:<10} stream {:>2} #{:>2}  Q{:<2} {:>9.3} s  {:>6} rows  {}",
        t.test, t.stream, t.position, t.query, t.seconds, t.rows, t.params
    )
}

fn summary_text(out: &TpchRunOutput) -> String {
    let r = &out.report;
    let fmt = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    let mut text = format!(
        "\nTPC-H SF {} policy {}: Power@Size {}  Throughput@Size {}  QphH {}  queries/hour {}\n",
        r.sf,
        out.policy,
        fmt(r.power_at_size),
        fmt(r.throughput_at_size),
        fmt(r.qphh),
        fmt(r.queries_per_hour)
    );
    let header: Vec<String> = [
        "test",
        "seconds",
        "queries",
        "RFs",
        "reads",
        "async_w",
        "sync_w",
        "sync_%",
        "hit",
        "io/query",
        "stall_ms",
        "redo_MiB",
        "RF_orders/s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = out
        .tests
        .iter()
        .map(|t| {
            vec![
                t.test.clone(),
                format!("{:.1}", t.seconds),
                t.queries.to_string(),
                t.refresh_functions.to_string(),
                t.reads.to_string(),
                t.async_writes.to_string(),
                (t.sync_replacement_writes + t.sync_recoverability_writes).to_string(),
                format!("{:.2}", t.sync_write_pct),
                format!("{:.4}", t.hit_ratio),
                format!("{:.1}", t.io_per_query),
                format!("{:.1}", t.user_stall_us as f64 / 1000.0),
                format!("{:.1}", t.redo_bytes as f64 / f64::from(1u32 << 20)),
                if t.refresh_seconds > 0.0 {
                    format!("{:.0}", t.refresh_orders as f64 / t.refresh_seconds)
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    text.push_str(&render_table(&header, &rows));
    let incomplete: Vec<&str> = [&r.power, &r.throughput]
        .into_iter()
        .flatten()
        .filter(|t| !t.complete)
        .map(|t| t.test)
        .collect();
    if !incomplete.is_empty() {
        text.push_str(&format!(
            "interrupted: {} did not complete (no figure for it)\n",
            incomplete.join(", ")
        ));
    }
    text
}

pub fn run(args: &TpchRunArgs) -> Result<(), String> {
    let settings = TpchRunSettings {
        buffer_pool: args.buffer_pool.clone(),
        redo: args.redo.clone(),
        device: args.device.clone(),
        doublewrite: args.doublewrite == OnOff::On,
        flush_log_at_commit: args.flush_log_at_commit,
        max_recovery_time: args.max_recovery_time.clone(),
        policy: args.policy.clone(),
        config: RunConfig {
            streams: args.streams,
            power: !args.no_power,
            refresh: !args.no_refresh,
            validation_params: args.validation_params,
            seed: args.seed,
            interrupt: Some(crate::interrupt::install()?),
        },
    };
    let format = args.output;
    let banner = format!(
        "flushwise tpch run: seed={} commit={} policy={} streams={} pool={} dir={}",
        args.seed,
        COMMIT,
        args.policy,
        args.streams,
        args.buffer_pool,
        args.location.dir.display()
    );
    match format {
        OutputFormat::Table => println!("{banner}"),
        _ => eprintln!("{banner}"),
    }
    let out = tpch::run(&args.location.location(), &settings, |t| {
        let line = query_line(t);
        match format {
            OutputFormat::Table => {
                println!("{line}");
                let _ = std::io::stdout().flush();
            }
            _ => eprintln!("{line}"),
        }
    })?;
    if let Some(path) = &args.queries {
        let mut csv = Csv::default();
        for t in [&out.report.power, &out.report.throughput].into_iter().flatten() {
            for q in &t.queries {
                csv.push(vec![
                    ("test".into(), q.test.into()),
                    ("stream".into(), q.stream.to_string()),
                    ("position".into(), q.position.to_string()),
                    ("query".into(), q.query.to_string()),
                    ("seconds".into(), format!("{:.6}", q.seconds)),
                    ("rows".into(), q.rows.to_string()),
                    ("params".into(), q.params.clone()),
                ]);
            }
        }
        write_file(path, &csv.render(), "--queries")?;
    }
    let text = match format {
        OutputFormat::Table => summary_text(&out),
        OutputFormat::Json => serde_json::to_string(&out).map_err(|e| format!("cannot render JSON: {e}"))? + "\n",
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            let r = &out.report;
            let opt = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
            for t in &out.tests {
                csv.push(vec![
                    ("policy".into(), out.policy.clone()),
                    ("seed".into(), out.seed.to_string()),
                    ("config_hash".into(), out.config_hash.clone()),
                    ("commit".into(), out.commit.clone()),
                    ("sf".into(), r.sf.to_string()),
                    ("streams".into(), r.streams.to_string()),
                    ("test".into(), t.test.clone()),
                    ("seconds".into(), format!("{:.3}", t.seconds)),
                    ("queries".into(), t.queries.to_string()),
                    ("refresh_functions".into(), t.refresh_functions.to_string()),
                    ("reads".into(), t.reads.to_string()),
                    ("async_writes".into(), t.async_writes.to_string()),
                    ("sync_replacement_writes".into(), t.sync_replacement_writes.to_string()),
                    (
                        "sync_recoverability_writes".into(),
                        t.sync_recoverability_writes.to_string(),
                    ),
                    ("sync_write_pct".into(), format!("{:.4}", t.sync_write_pct)),
                    ("hit_ratio".into(), format!("{:.6}", t.hit_ratio)),
                    ("io_per_query".into(), format!("{:.3}", t.io_per_query)),
                    ("user_stall_us".into(), t.user_stall_us.to_string()),
                    ("redo_bytes".into(), t.redo_bytes.to_string()),
                    ("refresh_seconds".into(), format!("{:.3}", t.refresh_seconds)),
                    ("refresh_orders".into(), t.refresh_orders.to_string()),
                    ("power_at_size".into(), opt(r.power_at_size)),
                    ("throughput_at_size".into(), opt(r.throughput_at_size)),
                    ("qphh".into(), opt(r.qphh)),
                    ("queries_per_hour".into(), opt(r.queries_per_hour)),
                ]);
            }
            csv.render()
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    Ok(())
}
