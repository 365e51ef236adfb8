//! `sim run` and `sim compare`.

use std::io::Write;

use flushwise_core::policy::PolicySpec;
use flushwise_sim::SimConfig;

use crate::args::{CompareArgs, ExperimentArgs, OutputFormat, RunArgs, SimArgs};
use flushwise_lab::experiment;
use flushwise_lab::render::{self as output, write_file, Csv};
use flushwise_lab::sim_runner::{self as runner, RunOutput};
use flushwise_lab::COMMIT;

/// The run banner: where it goes depends on the output format.
pub fn banner(format: OutputFormat, config: &SimConfig) {
    let line = format!(
        "flushwise sim: seed={} config_hash={} commit={} policy={}",
        config.seed,
        config.config_hash(),
        COMMIT,
        config.policy
    );
    match format {
        OutputFormat::Table => println!("{line}"),
        OutputFormat::Json | OutputFormat::Csv => eprintln!("{line}"),
    }
}

fn write_intervals(sim: &SimArgs, outputs: &[&RunOutput]) -> Result<(), String> {
    if let Some(path) = &sim.intervals {
        let mut csv = Csv::default();
        for out in outputs {
            for row in &out.rows {
                csv.push(output::flatten_interval(row, COMMIT));
            }
        }
        write_file(path, &csv.render(), "--intervals")?;
    }
    Ok(())
}

/// A replay whose trace ran out before the run's end says so on stderr
/// (its figures cover the time it ran, `partial` in the result).
fn note_partial(result: &flushwise_sim::RunResult) {
    if result.partial {
        eprintln!(
            "note: {}: the trace ran out {:.1} s into the measured window (asked: longer); \
             the figures cover those {:.1} s",
            result.policy, result.measured_seconds, result.measured_seconds
        );
    }
}

fn print_stdout(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an input error; stop quietly.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(())
}

pub fn run(args: &RunArgs) -> Result<(), String> {
    let mut config = args.sim.to_config(&args.policy)?;
    let jsonl = args.decisions.as_deref().is_some_and(output::is_jsonl_path);
    config.decision_log = args.decisions.is_some() && !jsonl;
    config.iteration_records = jsonl;
    let live = crate::live::Live::start(&args.metrics)?;
    banner(args.sim.output, &config);
    let publish = |sample: &flushwise_sim::LiveSample| {
        if let Some(l) = &live {
            l.publish(sample);
        }
    };
    let out = runner::run_with_progress(
        config,
        &args.policy.to_string(),
        live.as_ref().map(|_| &publish as &dyn Fn(&flushwise_sim::LiveSample)),
    )?;
    if let (Some(path), true) = (&args.decisions, jsonl) {
        write_file(path, &output::iteration_jsonl(&out.iterations), "--decisions")?;
        if out.iterations_dropped > 0 {
            eprintln!(
                "note: kept the newest {} iteration records and dropped {} older ones",
                out.iterations.len(),
                out.iterations_dropped
            );
        }
    } else if let Some(path) = &args.decisions {
        let mut text = String::from("time_us,policy,cleaner,rule,detail\n");
        for d in &out.decisions {
            text.push_str(&format!(
                "{},{},{},{},{}\n",
                d.time_us,
                output::quote(d.policy),
                d.cleaner,
                output::quote(d.rule),
                output::quote(&d.detail)
            ));
        }
        write_file(path, &text, "--decisions")?;
        if out.decisions_dropped > 0 {
            eprintln!(
                "note: the decision log kept the newest {} decisions and dropped {} older ones",
                out.decisions.len(),
                out.decisions_dropped
            );
        }
    }
    write_intervals(&args.sim, &[&out])?;
    note_partial(&out.result);
    let text = match args.sim.output {
        OutputFormat::Json => output::json_lines([(&out.result, out.rows.as_slice())])?,
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            csv.push(output::flatten(&out.result));
            csv.render()
        }
        OutputFormat::Table => output::run_table(&out.result, &out.rows),
    };
    print_stdout(&text)?;
    if let Some(l) = live {
        l.finish();
    }
    Ok(())
}

pub fn compare(args: &CompareArgs) -> Result<(), String> {
    // No `--policies`: every registered policy.
    let specs = args.policies.as_ref().map_or_else(PolicySpec::all, |l| l.0.clone());
    // Every configuration is validated before anything runs.
    let configs: Vec<(String, SimConfig)> = specs
        .iter()
        .map(|spec| args.sim.to_config(spec).map(|c| (spec.to_string(), c)))
        .collect::<Result<_, _>>()?;
    for (_, config) in &configs {
        banner(args.sim.output, config);
    }
    let jobs = args.jobs.unwrap_or_else(runner::default_jobs);
    let outputs: Vec<RunOutput> = runner::run_many(configs, jobs).into_iter().collect::<Result<_, _>>()?;
    let refs: Vec<&RunOutput> = outputs.iter().collect();
    write_intervals(&args.sim, &refs)?;
    for out in &outputs {
        note_partial(&out.result);
    }
    let text = match args.sim.output {
        OutputFormat::Json => output::json_lines(outputs.iter().map(|o| (&o.result, o.rows.as_slice())))?,
        OutputFormat::Csv => {
            let mut csv = Csv::default();
            for out in &outputs {
                csv.push(output::flatten(&out.result));
            }
            csv.render()
        }
        OutputFormat::Table => compare_table(&outputs),
    };
    print_stdout(&text)
}

/// Policy, NOPM, ratio to the first policy, the figures behind it and
/// each policy's final parameters.
pub fn compare_table(outputs: &[RunOutput]) -> String {
    let rows: Vec<output::PolicyRow<'_>> = outputs
        .iter()
        .map(|o| output::PolicyRow {
            policy: &o.result.policy,
            figures: &o.result.figures,
            dirty_pct_avg: o.result.dirty_pct_avg,
            extra: vec![output::parameters_text(&o.result.final_parameters)],
        })
        .collect();
    output::policy_table(&rows, &["final parameters"])
}

/// `sim experiment NAME|list`: the lab runs the grid; its report goes to
/// stdout as it is produced.
pub fn experiment(args: &ExperimentArgs) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    if args.name == "list" {
        return experiment::list(args.seed, &mut out);
    }
    experiment::run(&args.request(), &mut out)
}
