//! `wisconsin prepare | run | model`: paper 003's write-heavy UPDATE load
//! on the Wisconsin relation, and 003's queueing model fitted to it.
//!
//! `prepare` creates the directory's database and loads the relation;
//! `run` offers the load (open loop at `--rate`, or closed loop with
//! `--jobs`) and writes the run's files under `--out`; `model` reads those
//! back, fits the model, simulates it and prints Table 1's analogue and
//! the comparison. With `--output json|csv`, stdout carries only that and
//! the banner goes to stderr.

use std::io::Write as _;
use std::time::Duration;

use flushwise_lab::render::{flatten, flatten_objects, Csv};
use flushwise_lab::wisconsin::{self, WisconsinPrepareSpec, WisconsinRunOutput, WisconsinRunSettings};
use flushwise_lab::workload_dir::LoadFlags;
use flushwise_lab::COMMIT;
use flushwise_sim::options::duration_flag;
use flushwise_workloads::wisconsin::driver::{Arrivals, RunConfig};

use crate::args::{OnOff, OutputFormat, WisconsinModelArgs, WisconsinPrepareArgs, WisconsinRunArgs};

pub fn prepare(args: &WisconsinPrepareArgs) -> Result<(), String> {
    let spec = WisconsinPrepareSpec {
        tuples: args.tuples,
        seed: args.seed,
        load: LoadFlags {
            page_size: &args.page_size,
            redo: &args.redo,
            buffer_pool: &args.buffer_pool,
            force: args.force,
        },
    };
    let (_, summary) = wisconsin::prepare(&args.location.location(), &spec)?;
    println!("{summary}");
    Ok(())
}

fn arrivals(args: &WisconsinRunArgs) -> Result<Arrivals, String> {
    match (args.rate, args.jobs) {
        (Some(rate), None) => {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(format!("--rate {rate}: a positive number of requests per second"));
            }
            Ok(Arrivals::Poisson {
                rate_per_s: rate,
                workers: args.workers,
            })
        }
        (None, Some(jobs)) => Ok(Arrivals::Closed { jobs }),
        (None, None) => Err("--rate LAMBDA (open loop) or --jobs N (closed loop) is needed".into()),
        (Some(_), Some(_)) => Err("--rate and --jobs: give one of them".into()),
    }
}

fn summary_text(out: &WisconsinRunOutput) -> String {
    let r = &out.response;
    let f = &out.flush;
    format!(
        "{}: {} of {} requests in {:.1} s ({:.2}/s), unserved {}{}{}\n\
         response time: mean {:.4} s  p50 {:.4}  p90 {:.4}  p99 {:.4}  max {:.4}\n\
         pages written: flush list {}  LRU batch {}  cleaned ahead {}  sync replacement {}  sync preflush {}; reads {}; dirty max {}; checkpoint age max {:.1} MiB; user stall {:.1} s\n\
         policy={} device={} seed={} config_hash={} commit={}\n\
         files: {}\n",
        out.label,
        out.completed,
        out.offered,
        out.duration_s,
        out.throughput_per_s,
        out.unserved,
        if out.overloaded { " (OVERLOADED: the backlog limit stopped the generator)" } else { "" },
        if out.interrupted { " (interrupted)" } else { "" },
        r.mean_s,
        r.p50_s,
        r.p90_s,
        r.p99_s,
        r.max_s,
        f.flush_list_pages,
        f.lru_batch_flush_pages,
        f.cleaner_clean_pages,
        f.sync_replacement_writes,
        f.sync_recoverability_writes,
        f.reads,
        f.dirty_pages_max,
        f.checkpoint_age_bytes_max as f64 / (1 << 20) as f64,
        f.user_stall_s,
        out.policy,
        out.device,
        out.seed,
        out.config_hash,
        out.commit,
        out.dir.display()
    )
}

pub fn run(args: &WisconsinRunArgs) -> Result<(), String> {
    let arrivals = arrivals(args)?;
    let duration = Duration::from_micros(duration_flag("--duration", &args.duration)?);
    let sample_interval = Duration::from_micros(duration_flag("--sample-interval", &args.sample_interval)?);
    if duration.is_zero() {
        return Err(format!("--duration {}: must be positive", args.duration));
    }
    if sample_interval < Duration::from_millis(10) {
        return Err(format!("--sample-interval {}: at least 10ms", args.sample_interval));
    }
    let mut config = RunConfig::new(arrivals, duration, args.seed);
    config.warmup = Duration::from_micros(duration_flag("--warmup", &args.warmup)?);
    config.sample_interval = sample_interval;
    config.interrupt = Some(crate::interrupt::install()?);
    let settings = WisconsinRunSettings {
        buffer_pool: args.buffer_pool.clone(),
        redo: args.redo.clone(),
        device: args.device.clone(),
        doublewrite: args.doublewrite == OnOff::On,
        flush_log_at_commit: args.flush_log_at_commit,
        max_recovery_time: args.max_recovery_time.clone(),
        policy: args.policy.clone(),
        config,
        out: args.out.clone(),
    };
    let banner = format!(
        "flushwise wisconsin run: {} seed={} commit={} policy={} pool={} device={} duration={} dir={}",
        arrivals.label(),
        args.seed,
        COMMIT,
        args.policy,
        args.buffer_pool,
        args.device.join(" "),
        args.duration,
        args.location.dir.display()
    );
    match args.output {
        OutputFormat::Table => println!("{banner}"),
        _ => eprintln!("{banner}"),
    }
    let out = wisconsin::run(&args.location.location(), &settings)?;
    let text = match args.output {
        OutputFormat::Table => summary_text(&out),
        OutputFormat::Json => serde_json::to_string(&out).map_err(|e| format!("cannot render JSON: {e}"))? + "\n",
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            csv.push(flatten_objects(&out));
            csv.render()
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    Ok(())
}

pub fn model(args: &WisconsinModelArgs) -> Result<(), String> {
    let out_dir = args.out.clone().unwrap_or_else(|| args.runs.join("model"));
    let report = wisconsin::model(&args.runs, &out_dir, args.seed)?;
    let text = match args.output {
        OutputFormat::Table => {
            let mut t = format!(
                "003 model fitted to {} (seed={} commit={})\n\nTable 1 (fitted model parameters)\n",
                args.runs.display(),
                args.seed,
                COMMIT
            );
            t.push_str(&wisconsin::table1_text(&report));
            t.push_str("\nmeasured against modelled, per arrival rate, and N/P, N/T\n");
            t.push_str(&wisconsin::comparison_text(&report));
            t.push_str("files:");
            for f in &report.files {
                t.push_str(&format!(" {}", f.display()));
            }
            t.push('\n');
            t
        }
        OutputFormat::Json => serde_json::to_string(&report).map_err(|e| format!("cannot render JSON: {e}"))? + "\n",
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            for r in &report.rates {
                let mut row = vec![
                    ("seed".to_string(), report.seed.to_string()),
                    ("commit".into(), report.commit.clone()),
                    ("saturated_run".into(), report.saturated_run.clone()),
                ];
                row.extend(flatten(&report.fit.params));
                row.extend(flatten(r));
                csv.push(row);
            }
            csv.render()
        }
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    Ok(())
}
