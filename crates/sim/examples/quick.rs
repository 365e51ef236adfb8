use flushwise_sim::{SimConfig, Simulation, WorkloadSpec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let policy = args.get(1).cloned().unwrap_or("self-tuning".into());
    let wh: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let pool_mb: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(64);
    let device = args.get(4).cloned().unwrap_or("samsung-850-pro".into());
    let config = SimConfig {
        workload: WorkloadSpec::Tpcc { warehouses: wh },
        buffer_pool_bytes: pool_mb << 20,
        policy,
        data_device: device.clone(),
        log_device: device,
        warmup_us: 60_000_000,
        duration_us: 60_000_000,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config, "dev").unwrap();
    sim.check_invariants_every(0);
    let r = sim.run(|_| {}).unwrap();
    println!("{:#?}", r);
}
