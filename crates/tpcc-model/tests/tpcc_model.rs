//! Scenarios for the TPC-C page-reference model.

use std::collections::HashMap;

use flushwise_core::PageId;
use flushwise_tpcc_model::{
    nurand, Table, TpccMix, TpccModel, TpccModelConfig, TpccRefGen, WarehouseChoice, Xoshiro256StarStar,
};
use flushwise_trace::{TraceEvent, TraceHeader, TraceRecord, TraceWriter, TxnType};

fn model(warehouses: u32, seed: u64) -> TpccModel {
    TpccModel::new(TpccModelConfig {
        warehouses,
        seed,
        ..TpccModelConfig::default()
    })
    .unwrap()
}

fn encoded(warehouses: u32, seed: u64, agents: u32, txns: u64) -> Vec<u8> {
    let gen = TpccRefGen::new(model(warehouses, seed), agents, txns);
    let header = TraceHeader::new(16 * 1024, format!("tpcc_model seed={seed}"));
    let mut writer = TraceWriter::new(Vec::new(), &header).unwrap();
    for record in gen {
        writer.write(&record).unwrap();
    }
    writer.finish().unwrap()
}

#[test]
fn same_seed_gives_a_byte_identical_trace() {
    let a = encoded(4, 42, 40, 3_000);
    let b = encoded(4, 42, 40, 3_000);
    assert_eq!(a, b);
    let c = encoded(4, 43, 40, 3_000);
    assert_ne!(a, c);
}

fn assert_mix_over_20k_transactions(mix: TpccMix, expected: [f64; 5]) {
    let model = TpccModel::new(TpccModelConfig {
        warehouses: 2,
        seed: 7,
        mix,
        ..TpccModelConfig::default()
    })
    .unwrap();
    let mut gen = TpccRefGen::new(model, 20, 20_000);
    let mut begins = [0u64; 5];
    for r in gen.by_ref() {
        if let TraceEvent::TxnBegin { txn_type } = r.event {
            begins[txn_type.code() as usize] += 1;
        }
    }
    assert_eq!(begins, gen.model().stats().txns);
    for (i, &n) in begins.iter().enumerate() {
        let pct = n as f64 / 200.0;
        assert!((pct - expected[i]).abs() < 1.2, "{mix} type {i}: {pct:.2} %");
    }
}

#[test]
fn mix_matches_45_43_4_4_4_over_20k_transactions() {
    assert_mix_over_20k_transactions(TpccMix::Standard, [45.0, 43.0, 4.0, 4.0, 4.0]);
}

#[test]
fn read_mostly_mix_draws_80_percent_read_only_transactions() {
    assert_eq!(TpccMix::ReadMostly.percent().iter().sum::<u32>(), 100);
    assert_mix_over_20k_transactions(TpccMix::ReadMostly, [10.0, 6.0, 40.0, 4.0, 40.0]);
    assert_eq!(TpccMix::parse("read-mostly"), Ok(TpccMix::ReadMostly));
    let err = TpccMix::parse("olap").unwrap_err();
    assert!(err.contains("standard, read-mostly"), "{err}");
}

#[test]
fn every_transaction_is_bracketed_and_releases_every_page() {
    let gen = TpccRefGen::new(model(3, 11), 30, 5_000);
    let mut open: Option<TxnType> = None;
    let mut held: HashMap<PageId, u32> = HashMap::new();
    for r in gen {
        match r.event {
            TraceEvent::TxnBegin { txn_type } => {
                assert!(open.is_none());
                open = Some(txn_type);
            }
            TraceEvent::TxnCommit { txn_type } | TraceEvent::TxnRollback { txn_type } => {
                assert_eq!(open.take(), Some(txn_type));
                assert!(held.is_empty(), "pages left fixed: {held:?}");
            }
            TraceEvent::Fix { page, .. } => {
                assert!(open.is_some());
                *held.entry(page).or_default() += 1;
            }
            TraceEvent::Unfix {
                page,
                modified,
                redo_bytes,
                ..
            } => {
                assert_eq!(modified, redo_bytes > 0);
                let n = held.get_mut(&page).expect("unfix of a page not fixed");
                *n -= 1;
                if *n == 0 {
                    held.remove(&page);
                }
            }
        }
    }
    assert!(open.is_none());
}

#[test]
fn nurand_stays_in_range_and_is_skewed() {
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    for (a, c, x, y) in [
        (255u64, 123u64, 0u64, 999u64),
        (1023, 259, 1, 3000),
        (8191, 7911, 1, 100_000),
    ] {
        let mut counts: HashMap<u64, u64> = HashMap::new();
        let draws = 200_000;
        for _ in 0..draws {
            let v = nurand(&mut rng, a, c, x, y);
            assert!((x..=y).contains(&v), "{v} outside {x}..={y}");
            *counts.entry(v).or_default() += 1;
        }
        // Skew: the hottest 10 % of the range gets far more than 10 %.
        let mut freq: Vec<u64> = counts.values().copied().collect();
        freq.sort_unstable_by(|a, b| b.cmp(a));
        let top = ((y - x + 1) / 10) as usize;
        let share = freq.iter().take(top).sum::<u64>() as f64 / draws as f64;
        assert!(share > 0.2, "A={a}: hottest 10 % get {share:.3}");
    }
}

#[test]
fn nurand_constants_respect_the_c_last_delta_rule() {
    for seed in 0..200 {
        let c = model(1, seed).constants();
        let delta = c.c_last_run.abs_diff(c.c_last_load);
        assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
        assert!(c.c_last_run <= 255 && c.c_id <= 1023 && c.ol_i_id <= 8191);
    }
}

#[test]
fn rollbacks_and_remote_shares_follow_the_spec() {
    let mut gen = TpccRefGen::new(model(10, 5), 100, 40_000);
    let mut rollbacks = 0u64;
    for r in gen.by_ref() {
        if let TraceEvent::TxnRollback { txn_type } = r.event {
            assert_eq!(txn_type, TxnType::NewOrder);
            rollbacks += 1;
        }
    }
    let s = gen.model().stats();
    assert_eq!(rollbacks, s.new_order_rollbacks);
    let new_orders = s.txns[0] as f64;
    let payments = s.txns[1] as f64;
    let order_status = s.txns[2] as f64;
    let pct = |n: u64, of: f64| 100.0 * n as f64 / of;
    assert!(
        (0.6..1.5).contains(&pct(rollbacks, new_orders)),
        "rollbacks {}",
        pct(rollbacks, new_orders)
    );
    assert!((0.7..1.3).contains(&pct(s.remote_order_lines, s.order_lines as f64)));
    assert!((13.5..16.5).contains(&pct(s.remote_payments, payments)));
    assert!((58.0..62.0).contains(&pct(s.payments_by_last_name, payments)));
    assert!((53.0..67.0).contains(&pct(s.order_status_by_last_name, order_status)));
    let lines_per_order = s.order_lines as f64 / new_orders;
    assert!((9.5..10.5).contains(&lines_per_order), "{lines_per_order}");
}

#[test]
fn a_single_warehouse_has_no_remote_accesses() {
    let mut gen = TpccRefGen::new(model(1, 9), 10, 5_000);
    gen.by_ref().for_each(drop);
    assert_eq!(gen.model().stats().remote_order_lines, 0);
    assert_eq!(gen.model().stats().remote_payments, 0);
}

#[test]
fn page_ids_stay_within_each_tables_allocated_range() {
    // Long enough for Delivery to empty a NEW_ORDER leaf (497 rows).
    let mut m = model(2, 21);
    let mut rng = Xoshiro256StarStar::seed_from_u64(21);
    let spaces: Vec<u32> = Table::ALL.iter().map(|t| t.space()).collect();
    for i in 0..40_000u32 {
        let records = m.next_transaction(i % 20, &mut rng);
        for r in &records {
            if let Some(page) = r.page() {
                assert!(spaces.contains(&page.space), "unknown space in {page}");
                let limit = m.space_page_limit(page.space).unwrap();
                assert!(
                    u64::from(page.page_no) < limit,
                    "{page} beyond limit {limit} of {:?}",
                    Table::from_space(page.space)
                );
            }
        }
    }
    // Growth happened and was accounted.
    let s = m.stats();
    assert!(s.pages_allocated > 0);
    assert!(s.pages_freed > 0);
    assert!(m.database_pages() > m.table_sizes().iter().map(|t| t.pages).sum::<u64>());
}

#[test]
fn agents_work_on_their_home_warehouse() {
    let home = |w| {
        TpccModel::new(TpccModelConfig {
            warehouses: w,
            warehouse_choice: WarehouseChoice::HomePerAgent,
            ..TpccModelConfig::default()
        })
        .unwrap()
    };
    let m = home(7);
    assert_eq!(m.home_warehouse(0), 1);
    assert_eq!(m.home_warehouse(6), 7);
    assert_eq!(m.home_warehouse(7), 1);
    // Warehouse rows are one per warehouse: a Payment of agent 3 updates
    // warehouse 4's leaf, the only WAREHOUSE leaf here.
    let mut m = home(7);
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let mut out = Vec::new();
    m.fill_transaction_of(TxnType::Payment, 3, &mut rng, &mut out);
    let modified_warehouse = out.iter().any(
        |r| matches!(r.event, TraceEvent::Unfix { page, modified: true, .. } if page.space == Table::Warehouse.space()),
    );
    assert!(modified_warehouse);
    assert!(out.iter().all(|r: &TraceRecord| r.agent == 3));
}

#[test]
fn delivery_consumes_the_oldest_new_orders() {
    let mut m = model(1, 2);
    let mut rng = Xoshiro256StarStar::seed_from_u64(2);
    let before = *m.district(1, 1);
    assert_eq!(before.next_o_id, 3001);
    assert_eq!(before.oldest_new_order, 2101);
    let mut out = Vec::new();
    m.fill_transaction_of(TxnType::Delivery, 0, &mut rng, &mut out);
    for d in 1..=10 {
        assert_eq!(m.district(1, d).oldest_new_order, 2102);
    }
    // Ten districts x (new order, order, lines, customer): all modified.
    let modified = out
        .iter()
        .filter(|r| matches!(r.event, TraceEvent::Unfix { modified: true, .. }))
        .count();
    assert!(modified >= 40, "{modified}");
}

#[test]
fn database_is_about_100_mb_per_warehouse_at_16_kib_pages() {
    let one = model(1, 0);
    let ten = model(10, 0);
    println!("table sizes at 1 warehouse, 16 KiB pages, 80 % fill:");
    println!(
        "{:<22} {:>5} {:>10} {:>6} {:>5} {:>7} {:>8} {:>9}",
        "table", "space", "rows", "height", "rows/leaf", "fanout", "pages", "MB"
    );
    for t in one.table_sizes() {
        println!(
            "{:<22} {:>5} {:>10} {:>6} {:>9} {:>7} {:>8} {:>9.1}",
            t.table.name(),
            t.space,
            t.rows,
            t.height,
            t.rows_per_leaf,
            t.fanout,
            t.pages,
            t.bytes as f64 / 1e6
        );
    }
    let per_warehouse_bytes = (ten.database_pages() - one.database_pages()) as f64 / 9.0 * 16384.0;
    println!("per warehouse: {:.1} MB", per_warehouse_bytes / 1e6);
    assert!((90e6..115e6).contains(&per_warehouse_bytes), "{per_warehouse_bytes}");
    let thousand = model(1000, 0);
    let total = thousand.database_pages() as f64 * 16384.0;
    println!("1,000 warehouses: {:.1} GB", total / 1e9);
    assert!((90e9..115e9).contains(&total));
}

#[test]
fn memory_state_is_per_district_only() {
    // Running long does not change the model's size: the only growing
    // numbers are counters.
    let mut gen = TpccRefGen::new(model(2, 4), 20, 50_000);
    gen.by_ref().for_each(drop);
    let m = gen.model();
    assert!(m.district(2, 10).next_o_id > 3001);
    assert_eq!(m.table_sizes().len(), 11);
}

#[test]
fn transactions_spread_over_all_warehouses_by_default() {
    // 4 agents, 50 warehouses. Customer leaves are in (w, d, c) order, so
    // the upper half of the CUSTOMER pages belongs to warehouses 26-50:
    // per-transaction draws go there about half the time, a home warehouse
    // per agent only through the 15% remote payments.
    let upper_half_share = |choice: WarehouseChoice| {
        let mut m = TpccModel::new(TpccModelConfig {
            warehouses: 50,
            seed: 3,
            warehouse_choice: choice,
            ..TpccModelConfig::default()
        })
        .unwrap();
        let half = m.space_page_limit(Table::Customer.space()).unwrap() / 2;
        let mut rng = Xoshiro256StarStar::seed_from_u64(9);
        let mut out = Vec::new();
        for i in 0..2_000u32 {
            m.fill_transaction_of(TxnType::Payment, i % 4, &mut rng, &mut out);
        }
        let pages: Vec<u64> = out
            .iter()
            .filter_map(|r| match r.event {
                TraceEvent::Fix { page, .. } if page.space == Table::Customer.space() => Some(u64::from(page.page_no)),
                _ => None,
            })
            .collect();
        pages.iter().filter(|&&p| p > half).count() as f64 / pages.len() as f64
    };
    let uniform = upper_half_share(WarehouseChoice::UniformPerTransaction);
    let home = upper_half_share(WarehouseChoice::HomePerAgent);
    assert!(
        uniform > 3.0 * home,
        "upper-half share: uniform {uniform:.2}, home-per-agent {home:.2}"
    );
}
