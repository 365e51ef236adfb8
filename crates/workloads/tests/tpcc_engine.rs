//! TPC-C on the flushwise engine, end to end: load, check, run, rollback,
//! export, corruption, half-loaded databases.
//!
//! One warehouse is loaded once per test binary (about 20 s in release)
//! into `CARGO_TARGET_TMPDIR`, closed cleanly, and every test that needs it
//! opens its own copy.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flushwise_engine::db::{Database, DbOptions};
use flushwise_workloads::tpcc::export::for_each_row;
use flushwise_workloads::tpcc::schema::*;
use flushwise_workloads::tpcc::txn::{execute, OrderLineInput, Outcome, TxnInput};
use flushwise_workloads::tpcc::{
    self, AfterInterval, Index, LoadConfig, LoadReport, RunConfig, StoreError, TpccError, TpccStore, TpccTxn, TxnKind,
    TxnObserver,
};

fn options() -> DbOptions {
    DbOptions {
        buffer_pool_bytes: 256 << 20,
        redo_bytes: 128 << 20,
        ..DbOptions::default()
    }
}

struct Shared {
    dir: PathBuf,
    report: LoadReport,
}

/// The pristine one-warehouse database of this test binary.
fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        // Leftovers of earlier runs of this binary.
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("tpcc-1w-") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = root.join(format!("tpcc-1w-{}", std::process::id()));
        let db = Database::create(&dir, options()).expect("create the shared database");
        let report = tpcc::prepare(
            &db,
            &LoadConfig {
                warehouses: 1,
                threads: 2,
                seed: 42,
                load_time_us: Some(1_700_000_000_000_000),
            },
            &|_| {},
        )
        .expect("load one warehouse");
        eprintln!(
            "shared load: {} rows in {:.1} s ({:.0} rows/s)",
            report.rows_loaded, report.elapsed_s, report.rows_per_s
        );
        db.close().expect("close the shared database");
        Shared { dir, report }
    })
}

/// A private copy of the loaded database, open.
fn loaded_copy() -> (tempfile::TempDir, Database) {
    let src = &shared().dir;
    let tmp = tempfile::tempdir().expect("a temporary directory");
    copy_dir(src, tmp.path());
    let db = Database::open(tmp.path(), options()).expect("open the copy");
    (tmp, db)
}

fn copy_dir(src: &Path, dst: &Path) {
    for e in std::fs::read_dir(src).expect("read the shared directory").flatten() {
        std::fs::copy(e.path(), dst.join(e.file_name())).expect("copy a database file");
    }
}

fn count(db: &Database, index: Index) -> u64 {
    for_each_row(db, index, |_, _| Ok(())).expect("scan")
}

fn count_prefix(db: &Database, index: Index, prefix: &[u8]) -> usize {
    let mut txn = TpccStore::begin(db);
    let n = txn
        .prefix(
            index,
            prefix,
            tpcc::ScanDirection::Forward,
            None,
            tpcc::ScanLock::Shared,
        )
        .expect("prefix scan")
        .len();
    txn.commit().expect("commit");
    n
}

fn get(db: &Database, index: Index, key: &[u8]) -> Option<Vec<u8>> {
    let mut txn = TpccStore::begin(db);
    let v = txn.get(index, key).expect("get");
    txn.commit().expect("commit");
    v
}

#[test]
fn one_warehouse_loads_with_spec_cardinalities_and_passes_every_condition() {
    let (_dir, db) = loaded_copy();
    assert_eq!(tpcc::loaded_warehouses(&db).expect("marker"), Some(1));
    let expected = [
        (Index::Warehouse, 1),
        (Index::District, 10),
        (Index::Customer, 30_000),
        (Index::CustomerByName, 30_000),
        (Index::History, 30_000),
        (Index::NewOrder, 9_000),
        (Index::Oorder, 30_000),
        (Index::OorderByCustomer, 30_000),
        (Index::Item, 100_000),
        (Index::Stock, 100_000),
    ];
    for (index, rows) in expected {
        assert_eq!(count(&db, index), rows, "{index:?}");
    }
    let lines = count(&db, Index::OrderLine);
    assert!((5 * 30_000..=15 * 30_000).contains(&lines), "{lines}");
    assert!((lines as f64 / 30_000.0 - 10.0).abs() < 0.2, "mean lines per order");
    let loaded: u64 = shared().report.per_index.iter().map(|r| r.rows).sum();
    assert_eq!(loaded, shared().report.rows_loaded);

    let report = tpcc::check(&db, true).expect("check");
    assert!(
        report.passed(),
        "{:?}",
        &report.violations[..report.violations.len().min(5)]
    );
    assert_eq!(report.conditions_checked, (1..=12).collect::<Vec<u8>>());
}

/// Counts the driver's hooks and checks they run on the terminal's thread.
#[derive(Default)]
struct Observer {
    begins: AtomicU64,
    ends: AtomicU64,
    terminals: AtomicU64,
    wrong_thread: AtomicBool,
}

thread_local! {
    static TERMINAL: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

impl TxnObserver for Observer {
    fn terminal_start(&self, terminal: u32) {
        TERMINAL.with(|t| t.set(Some(terminal)));
        self.terminals.fetch_add(1, Ordering::Relaxed);
    }
    fn txn_begin(&self, terminal: u32, _kind: TxnKind) {
        if TERMINAL.with(|t| t.get()) != Some(terminal) {
            self.wrong_thread.store(true, Ordering::Relaxed);
        }
        self.begins.fetch_add(1, Ordering::Relaxed);
    }
    fn txn_end(&self, terminal: u32, _kind: TxnKind, _committed: bool) {
        if TERMINAL.with(|t| t.get()) != Some(terminal) {
            self.wrong_thread.store(true, Ordering::Relaxed);
        }
        self.ends.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_short_mix_keeps_the_database_consistent() {
    let (_dir, db) = loaded_copy();
    let db = Arc::new(db);
    let mut intervals = Vec::new();
    let observer = Arc::new(Observer::default());
    let report = tpcc::run(
        &db,
        &RunConfig {
            connections: 4,
            warmup: Duration::from_millis(500),
            duration: Duration::from_secs(4),
            report_interval: Duration::from_secs(1),
            seed: 7,
            ..RunConfig::default()
        },
        Some(observer.clone() as Arc<dyn TxnObserver>),
        &mut |i| {
            intervals.push(i.clone());
            AfterInterval::Continue
        },
    )
    .expect("run");
    eprintln!(
        "nopm {:.0} tpm_total {:.0} commits {} rollbacks {} retries {} mix {:?}",
        report.nopm, report.tpm_total, report.commits, report.rollbacks, report.retries, report.mix_pct
    );
    assert_eq!(report.errors, 0);
    let begins = observer.begins.load(Ordering::Relaxed);
    assert_eq!(begins, observer.ends.load(Ordering::Relaxed));
    assert!(begins >= report.commits + report.rollbacks + report.retries);
    assert_eq!(observer.terminals.load(Ordering::Relaxed), 4);
    assert!(!observer.wrong_thread.load(Ordering::Relaxed));
    assert!(report.commits > 500, "{}", report.commits);
    assert!(intervals.first().is_some_and(|i| i.warmup));
    assert!(intervals.iter().filter(|i| !i.warmup).count() >= 4);
    // 45/43/4/4/4 within sampling tolerance.
    let want = [45.0, 43.0, 4.0, 4.0, 4.0];
    for ((name, pct), want) in report.mix_pct.iter().zip(want) {
        let tolerance = if want > 10.0 { 5.0 } else { 2.5 };
        assert!((pct - want).abs() < tolerance, "{name}: {pct:.1} % vs {want} %");
    }
    // NOPM counts committed New-Orders only.
    let no = &report.per_type[0];
    assert!((report.nopm - no.commits as f64 * 60.0 / 4.0).abs() < 1e-6);

    let check = tpcc::check(db.as_ref(), false).expect("check");
    assert!(
        check.passed(),
        "{:?}",
        &check.violations[..check.violations.len().min(5)]
    );
}

#[test]
fn a_warmup_ended_by_the_callback_starts_the_measured_window_at_once() {
    let (_dir, db) = loaded_copy();
    let db = Arc::new(db);
    let mut intervals = Vec::new();
    let began = std::time::Instant::now();
    let report = tpcc::run(
        &db,
        &RunConfig {
            connections: 2,
            warmup: Duration::from_secs(600),
            duration: Duration::from_secs(2),
            report_interval: Duration::from_millis(500),
            seed: 3,
            ..RunConfig::default()
        },
        None,
        &mut |i| {
            intervals.push(i.clone());
            if intervals.len() == 2 {
                AfterInterval::EndWarmup
            } else {
                AfterInterval::Continue
            }
        },
    )
    .expect("run");
    let warmups = intervals.iter().filter(|i| i.warmup).count();
    assert_eq!(warmups, 2, "{intervals:?}");
    assert!(
        intervals.len() >= 5,
        "2 s measured in 500 ms intervals: {}",
        intervals.len()
    );
    assert!(report.warmup_s > 0.9 && report.warmup_s < 60.0, "{}", report.warmup_s);
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "the 600 s warm-up was not cut short"
    );
    assert!(report.commits > 0);
    let measured: u64 = intervals.iter().filter(|i| !i.warmup).map(|i| i.commits).sum();
    // A terminal's transaction may straddle each boundary: at most one per
    // terminal at each end.
    assert!(
        measured.abs_diff(report.commits) <= 4,
        "the measured window is the intervals after the warm-up: {measured} vs {}",
        report.commits
    );
}

#[test]
fn new_order_rollback_leaves_no_trace() {
    let (_dir, db) = loaded_copy();
    let (w, d) = (1, 4);
    let items = [17, 3, 99_999, 500, 1_234];
    let snapshot = |db: &Database| {
        let district = District::decode(&get(db, Index::District, &district_key(w, d)).expect("district"))
            .expect("decode district");
        let stock: Vec<Option<Vec<u8>>> = items.iter().map(|&i| get(db, Index::Stock, &stock_key(w, i))).collect();
        (
            district.d_next_o_id,
            count_prefix(db, Index::Oorder, &district_prefix(w, d)),
            count_prefix(db, Index::OrderLine, &district_prefix(w, d)),
            count_prefix(db, Index::NewOrder, &district_prefix(w, d)),
            count_prefix(db, Index::OorderByCustomer, &district_prefix(w, d)),
            stock,
        )
    };
    let before = snapshot(&db);
    let mut lines: Vec<OrderLineInput> = items
        .iter()
        .map(|&i_id| OrderLineInput {
            i_id,
            supply_w_id: w,
            quantity: 3,
        })
        .collect();
    lines.push(OrderLineInput {
        i_id: ITEMS + 1,
        supply_w_id: w,
        quantity: 1,
    });
    let input = TxnInput::NewOrder {
        w_id: w,
        d_id: d,
        c_id: 12,
        lines,
    };
    let mut txn = TpccStore::begin(&db);
    let outcome = execute(&mut txn, &input, 1_700_000_000_000_000).expect("new-order body");
    assert_eq!(outcome, Outcome::Rollback);
    txn.rollback().expect("rollback");
    assert_eq!(snapshot(&db), before);
    assert!(tpcc::check(&db, true).expect("check").passed());

    // The same order without the bad line commits and shows up.
    let TxnInput::NewOrder { mut lines, .. } = input else {
        unreachable!("built above")
    };
    lines.pop();
    let good = TxnInput::NewOrder {
        w_id: w,
        d_id: d,
        c_id: 12,
        lines,
    };
    let mut txn = TpccStore::begin(&db);
    let outcome = execute(&mut txn, &good, 1_700_000_000_000_000).expect("new-order body");
    assert_eq!(outcome, Outcome::Commit(3001));
    txn.commit().expect("commit");
    let after = snapshot(&db);
    assert_eq!(after.0, before.0 + 1);
    assert_eq!(after.2, before.2 + 5);
    assert_eq!(after.3, before.3 + 1);
    assert_ne!(after.5, before.5, "stock was updated");
    assert!(tpcc::check(&db, false).expect("check").passed());
}

#[test]
fn export_writes_nine_tables_with_headers_counts_and_empty_nulls() {
    let (_dir, db) = loaded_copy();
    let out = tempfile::tempdir().expect("a temporary directory");
    let report = tpcc::export(&db, out.path()).expect("export");
    assert_eq!(report.tables.len(), 9);
    let names: HashSet<&str> = report.tables.iter().map(|t| t.table).collect();
    for t in [
        "warehouse",
        "district",
        "customer",
        "history",
        "new_order",
        "oorder",
        "order_line",
        "item",
        "stock",
    ] {
        assert!(names.contains(t), "{t}");
    }
    for t in &report.tables {
        let text = std::fs::read_to_string(&t.path).expect("read a CSV");
        let mut lines = text.lines();
        let header = lines.next().expect("a header");
        let index = TABLES.iter().copied().find(|i| i.name() == t.table).expect("a table");
        assert_eq!(header, tpcc::export::header(index).join(","));
        let width = header.split(',').count();
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len() as u64, t.rows, "{}", t.table);
        if t.table != "customer" {
            // Generated strings have no commas; c_data may after Payment.
            assert!(rows.iter().all(|r| r.split(',').count() == width), "{}", t.table);
        }
    }
    let oorder = std::fs::read_to_string(out.path().join("oorder.csv")).expect("oorder.csv");
    let null_carriers = oorder
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(5) == Some(""))
        .count();
    assert_eq!(null_carriers, 9_000);
    let warehouse = std::fs::read_to_string(out.path().join("warehouse.csv")).expect("warehouse.csv");
    assert!(
        warehouse.lines().nth(1).is_some_and(|l| l.ends_with(",300000.00")),
        "{warehouse}"
    );
    let order_line = std::fs::read_to_string(out.path().join("order_line.csv")).expect("order_line.csv");
    let delivered = order_line
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(6))
        .find(|f| !f.is_empty())
        .expect("a delivered line");
    assert_eq!(delivered, "2023-11-14T22:13:20.000000Z");
}

#[test]
fn a_warehouse_ytd_off_by_one_cent_violates_condition_1() {
    let (_dir, db) = loaded_copy();
    let mut txn = TpccStore::begin(&db);
    let key = warehouse_key(1);
    let mut w =
        Warehouse::decode(&txn.get_for_update(Index::Warehouse, &key).expect("get").expect("row")).expect("decode");
    w.w_ytd += 1;
    txn.update(Index::Warehouse, &key, &w.encode()).expect("update");
    txn.commit().expect("commit");
    let report = tpcc::check(&db, false).expect("check");
    assert!(!report.passed());
    let v = report
        .violations
        .iter()
        .find(|v| v.condition == 1)
        .expect("condition 1");
    assert_eq!(v.w_id, 1);
    assert!(v.to_string().starts_with("condition 1: warehouse 1"), "{v}");
    assert!(report.violates(8));
    assert!(report.violations.iter().all(|v| v.condition == 1 || v.condition == 8));
}

#[test]
fn a_corrupt_row_is_an_error_naming_its_table() {
    let (_dir, db) = loaded_copy();
    let mut txn = TpccStore::begin(&db);
    txn.update(Index::District, &district_key(1, 2), &[1, 2, 3])
        .expect("update");
    txn.commit().expect("commit");
    let e = tpcc::check(&db, false).expect_err("a corrupt district");
    assert!(matches!(&e, TpccError::Row(r) if r.table == "district"), "{e}");
}

/// A store whose bulk load of STOCK fails: a load that dies half-way.
struct FailingStock(Database);

impl TpccStore for FailingStock {
    type Txn<'s> = <Database as TpccStore>::Txn<'s>;

    fn create_indexes(&self) -> Result<(), StoreError> {
        self.0.create_indexes()
    }
    fn has_index(&self, index: Index) -> Result<bool, StoreError> {
        self.0.has_index(index)
    }
    fn begin(&self) -> Self::Txn<'_> {
        TpccStore::begin(&self.0)
    }
    fn bulk_load(&self, index: Index, rows: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>) -> Result<u64, StoreError> {
        if index == Index::Stock {
            return Err(StoreError {
                kind: tpcc::StoreErrorKind::Other,
                index: index.name(),
                source: "disk full (injected)".into(),
            });
        }
        self.0.bulk_load(index, &mut (&mut *rows).take(1_000))
    }
}

#[test]
fn a_half_loaded_database_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = FailingStock(Database::create(dir.path(), options()).expect("create"));
    let e = tpcc::prepare(
        &store,
        &LoadConfig {
            warehouses: 1,
            threads: 2,
            seed: 1,
            load_time_us: None,
        },
        &|_| {},
    )
    .expect_err("the stock load fails");
    assert!(e.to_string().contains("loading stock"), "{e}");
    assert_eq!(tpcc::loaded_warehouses(&store).expect("marker"), None);
    let e = tpcc::check(&store, false).expect_err("refused");
    assert!(e.to_string().contains("half-loaded"), "{e}");
    let store = Arc::new(store);
    let e = tpcc::run(&store, &RunConfig::default(), None, &mut |_| AfterInterval::Continue).expect_err("refused");
    assert!(e.to_string().contains("half-loaded"), "{e}");
    let e = tpcc::prepare(store.as_ref(), &LoadConfig::default(), &|_| {}).expect_err("refused");
    assert!(matches!(e, TpccError::AlreadyLoaded { .. }), "{e}");

    let empty = tempfile::tempdir().expect("a temporary directory");
    let db = Database::create(empty.path(), options()).expect("create");
    let e = tpcc::check(&db, false).expect_err("nothing loaded");
    assert!(e.to_string().contains("run prepare first"), "{e}");
}
