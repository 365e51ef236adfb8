//! Prints how fast the TPC-C model generates page references.
//!
//! `cargo run --release -p flushwise-tpcc-model --example tpcc_refgen_speed
//!  [warehouses] [agents] [transactions]` (defaults 1000, 20, 200000: the
//! largest setup of papers/000 §5.1).

use std::time::Instant;

use flushwise_tpcc_model::{TpccModel, TpccModelConfig, TpccRefGen};
use flushwise_trace::TraceEvent;

fn arg(n: usize, default: u64) -> u64 {
    std::env::args().nth(n).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() {
    let warehouses = arg(1, 1000) as u32;
    let agents = arg(2, 20) as u32;
    let transactions = arg(3, 200_000);
    let model = match TpccModel::new(TpccModelConfig {
        warehouses,
        seed: 1,
        ..TpccModelConfig::default()
    }) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let gen = TpccRefGen::new(model, agents, transactions);
    let start = Instant::now();
    let (mut records, mut fixes) = (0u64, 0u64);
    for r in gen {
        records += 1;
        if matches!(r.event, TraceEvent::Fix { .. }) {
            fixes += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "warehouses={warehouses} agents={agents} transactions={transactions} \
         records={records} page_references={fixes} seconds={secs:.3} \
         page_references_per_sec={:.0} records_per_sec={:.0} references_per_txn={:.1}",
        fixes as f64 / secs,
        records as f64 / secs,
        fixes as f64 / transactions as f64
    );
}
