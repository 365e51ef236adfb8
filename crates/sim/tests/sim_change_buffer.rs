//! The change buffer's model in the simulator (issue #16): on paper 004's
//! insert load with secondary indexes several times the pool, buffering
//! replaces leaf reads by change-buffer page fixes, so transactions read
//! fewer pages and run faster on a slow disk; the run stays deterministic
//! and the pool's invariants hold.

use flushwise_sim::{RunResult, SimConfig, Simulation, WorkloadSpec};

fn insert_run(change_buffer_max_pct: u8, device: &str) -> RunResult {
    mixed_run(change_buffer_max_pct, 0, device)
}

fn mixed_run(change_buffer_max_pct: u8, update_pct: u8, device: &str) -> RunResult {
    let config = SimConfig {
        workload: WorkloadSpec::Insert {
            rows: 200_000,
            secondary_indexes: 3,
            change_buffer_max_pct,
            update_pct,
        },
        connections: 16,
        buffer_pool_bytes: 8 << 20,
        redo_bytes: 64 << 20,
        data_device: device.into(),
        log_device: device.into(),
        warmup_us: 10_000_000,
        duration_us: 20_000_000,
        report_interval_us: 5_000_000,
        seed: 3,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config, "test").unwrap();
    sim.check_invariants_every(991);
    let mut r = sim.run(|_| {}).unwrap();
    r.wall_seconds = 0.0;
    r.requests_per_second = None;
    r
}

#[test]
fn buffering_secondary_inserts_saves_leaf_reads_and_is_deterministic() {
    for device in ["samsung-850-pro", "wd-1tb-7200"] {
        let off = insert_run(0, device);
        let on = insert_run(25, device);
        let stats = on
            .change_buffer
            .expect("the insert load with the change buffer on reports it");
        assert!(off.change_buffer.is_none());
        assert!(stats.buffered_inserts > 0 && stats.merges > 0, "{device}: {stats:?}");
        let reads = |r: &RunResult| r.figures.reads as f64 / r.transactions.max(1) as f64;
        assert!(
            reads(&on) < 0.8 * reads(&off),
            "{device}: reads per transaction on {:.3} vs off {:.3}",
            reads(&on),
            reads(&off)
        );
        assert!(
            on.transactions > off.transactions,
            "{device}: {} vs {} transactions",
            on.transactions,
            off.transactions
        );
        assert_eq!(on, insert_run(25, device), "{device}: not deterministic");
    }
}

/// Half the transactions update a loaded row (a delete and an insert per
/// secondary index on one leaf): the buffer takes both, so the leaf reads
/// fall as for inserts.
#[test]
fn buffering_an_update_mix_saves_leaf_reads_too() {
    let off = mixed_run(0, 50, "samsung-850-pro");
    let on = mixed_run(25, 50, "samsung-850-pro");
    let reads = |r: &RunResult| r.figures.reads as f64 / r.transactions.max(1) as f64;
    assert!(
        reads(&on) < 0.8 * reads(&off),
        "reads per transaction on {:.3} vs off {:.3}",
        reads(&on),
        reads(&off)
    );
    assert_ne!(
        mixed_run(25, 50, "samsung-850-pro").transactions,
        insert_run(25, "samsung-850-pro").transactions,
        "the mix changes the run"
    );
}
