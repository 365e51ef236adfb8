//! `flushwise`: the command line over the engine, the simulator and the
//! trace tools.
//!
//! - `compare`: the main job, TPC-C on the real engine under several
//!   policies side by side (prepares the database once);
//! - `tpcc prepare | run | check | export`: TPC-C on the real engine;
//! - `tpch prepare | run | answers | export`: TPC-H on the real engine;
//! - `wisconsin prepare | run | model`: paper 003's UPDATE load on the
//!   Wisconsin relation and 003's queueing model fitted to it;
//! - `insert prepare | run | check`: paper 004's insert load (sysbench's
//!   insert with secondary indexes), the change buffer off or on;
//! - `sim run`: one policy, one configuration;
//! - `sim compare`: the same configuration per policy, side by side;
//! - `sim experiment`: the papers' experiment grids, scaled or full;
//! - `sim sweep`: a grid of runs from a JSON file, one CSV table;
//! - `sim bench`: simulated buffer requests per wall-clock second;
//! - `lab list | run`: every experiment by name, the tuned oracle and the
//!   own-policy matrix among them;
//! - `trace record-model | oracle-general | info`;
//! - `device calibrate`: this machine's storage measured and fitted into a
//!   device-model preset (`--device calibrated:FILE`);
//! - `policies`: every policy and its declared parameters.
//!
//! `sim run`, `tpcc run` and `compare` take `--metrics-addr HOST:PORT`:
//! Prometheus metrics and a live dashboard while the run goes (`live`).
//!
//! Conventions: any bad input prints one line `error: <message>` naming the
//! flag and what is accepted, and exits 2 (clap's own usage errors exit 2
//! too). An engine run stopped by Ctrl-C or SIGTERM prints its partial
//! result and exits 128 + the signal number (130, 143). Every run prints its seed, config hash and commit before it starts:
//! to stdout for tables, to stderr for json/csv so stdout stays
//! machine-readable.

mod args;
mod compare_cmd;
mod crash_cmd;
mod device_cmd;
mod engine_opts;
mod insert_cmd;
mod interrupt;
mod lab_cmd;
mod lab_engine;
mod live;
mod sim_cmd;
mod sweep_cmd;
mod torture_cmd;
mod tpcc_cmd;
mod tpch_cmd;
mod trace_cmd;
mod wisconsin_cmd;

use std::process::ExitCode;

use clap::Parser;

use args::{
    Cli, Command, DeviceCommand, InsertCommand, LabCommand, SimCommand, TpccCommand, TpchCommand, TraceCommand,
    WisconsinCommand,
};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A value clap parsed with our parser (a policy): our one line.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value"));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    let outcome = match cli.command {
        Command::Policies => {
            print!("{}", flushwise_core::policy::describe_all());
            Ok(())
        }
        Command::Sim(SimCommand::Run(a)) => sim_cmd::run(&a),
        Command::Sim(SimCommand::Compare(a)) => sim_cmd::compare(&a),
        Command::Sim(SimCommand::Experiment(a)) => sim_cmd::experiment(&a),
        Command::Sim(SimCommand::Sweep(a)) => sweep_cmd::sweep(&a),
        Command::Sim(SimCommand::Bench(a)) => flushwise_lab::sim_bench::run(a.requests, &mut std::io::stdout().lock()),
        Command::Trace(TraceCommand::RecordModel(a)) => trace_cmd::record_model(&a),
        Command::Trace(TraceCommand::OracleGeneral(a)) => trace_cmd::oracle_general(&a),
        Command::Trace(TraceCommand::Info(a)) => trace_cmd::info(&a),
        Command::Tpcc(TpccCommand::Prepare(a)) => tpcc_cmd::prepare(&a),
        Command::Tpcc(TpccCommand::Run(a)) => tpcc_cmd::run(&a),
        Command::Tpcc(TpccCommand::Check(a)) => tpcc_cmd::check(&a),
        Command::Tpcc(TpccCommand::Crash(a)) => crash_cmd::crash(&a),
        Command::Tpcc(TpccCommand::Export(a)) => tpcc_cmd::export(&a),
        Command::Tpch(TpchCommand::Prepare(a)) => tpch_cmd::prepare(&a),
        Command::Tpch(TpchCommand::Run(a)) => tpch_cmd::run(&a),
        Command::Tpch(TpchCommand::Answers(a)) => tpch_cmd::answers(&a),
        Command::Tpch(TpchCommand::Export(a)) => tpch_cmd::export(&a),
        Command::Compare(a) => compare_cmd::command(&a),
        Command::Lab(LabCommand::List(a)) => lab_cmd::list(&a),
        Command::Lab(LabCommand::Run(a)) => lab_cmd::run(&a),
        Command::Lab(LabCommand::Report(a)) => lab_cmd::report(&a),
        Command::Torture(a) => torture_cmd::torture(&a),
        Command::IoerrSweep(a) => torture_cmd::ioerr_sweep(&a),
        Command::Wisconsin(WisconsinCommand::Prepare(a)) => wisconsin_cmd::prepare(&a),
        Command::Wisconsin(WisconsinCommand::Run(a)) => wisconsin_cmd::run(&a),
        Command::Wisconsin(WisconsinCommand::Model(a)) => wisconsin_cmd::model(&a),
        Command::Insert(InsertCommand::Prepare(a)) => insert_cmd::prepare(&a),
        Command::Insert(InsertCommand::Run(a)) => insert_cmd::run(&a),
        Command::Insert(InsertCommand::Check(a)) => insert_cmd::check(&a),
        Command::Device(DeviceCommand::Calibrate(a)) => device_cmd::calibrate(&a),
    };
    match outcome {
        // Stopped by Ctrl-C / SIGTERM: the partial result is out; exit as
        // a shell reports a command a signal stopped.
        Ok(()) if interrupt::requested() => ExitCode::from(interrupt::exit_code().unwrap_or(130)),
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // One line, whatever the message carried.
            eprintln!("error: {}", message.replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
