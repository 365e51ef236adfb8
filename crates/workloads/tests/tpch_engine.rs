//! TPC-H on the flushwise engine, end to end: the load's cardinalities and
//! referential integrity, the refresh functions, the power and throughput
//! tests, the export.
//!
//! Scale factor 0.01 (15,000 orders, about 60,000 lines) is loaded once per
//! test binary into `CARGO_TARGET_TMPDIR` and closed cleanly; every test
//! opens its own copy (never the shared directory itself: an open creates
//! and removes files there, the directory lock and the recovery profile,
//! while other tests are copying it).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use flushwise_engine::db::{Database, DbOptions};
use flushwise_workloads::tpch::driver::{self, Observer, QueryTiming, RunConfig};
use flushwise_workloads::tpch::gen::{Generator, Scale};
use flushwise_workloads::tpch::load::{self, LoadConfig, LoadReport};
use flushwise_workloads::tpch::schema::{Customer, Lineitem, Nation, Order, Part, PartSupp, Region, Supplier};
use flushwise_workloads::tpch::{export, refresh, TpchDb, TpchError};

const SF: f64 = 0.01;
const SEED: u64 = 7;

fn options() -> DbOptions {
    DbOptions {
        buffer_pool_bytes: 64 << 20,
        redo_bytes: 64 << 20,
        ..DbOptions::default()
    }
}

struct Shared {
    dir: PathBuf,
    report: LoadReport,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("tpch-sf001-") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = root.join(format!("tpch-sf001-{}", std::process::id()));
        let db = Database::create(&dir, options()).expect("create the shared database");
        let report = load::prepare(
            &db,
            &LoadConfig {
                sf: SF,
                seed: SEED,
                threads: 2,
            },
            &|_| {},
        )
        .expect("load SF 0.01");
        db.close().expect("close the shared database");
        Shared { dir, report }
    })
}

fn loaded_copy() -> (tempfile::TempDir, Database) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    copy_dir(&shared().dir, tmp.path());
    let db = Database::open(tmp.path(), options()).expect("open the copy");
    (tmp, db)
}

fn copy_dir(src: &Path, dst: &Path) {
    for e in std::fs::read_dir(src).expect("read the shared directory").flatten() {
        let from = e.path();
        if let Err(err) = std::fs::copy(&from, dst.join(e.file_name())) {
            panic!("copy {}: {err}", from.display());
        }
    }
}

/// Orders by key with their line count, and every line's order key.
fn orders_and_lines(t: &TpchDb<'_>) -> (HashMap<i64, Order>, HashMap<i64, Vec<Lineitem>>) {
    let orders: HashMap<i64, Order> = t
        .all::<Order>()
        .expect("orders")
        .into_iter()
        .map(|o| (o.orderkey, o))
        .collect();
    let mut lines: HashMap<i64, Vec<Lineitem>> = HashMap::new();
    t.scan(|l: Lineitem| {
        lines.entry(l.orderkey).or_default().push(l);
        true
    })
    .expect("lineitems");
    (orders, lines)
}

#[test]
fn sf_001_loads_with_the_specifications_cardinalities_and_keys_that_join() {
    let shared = shared();
    // A copy even to read: an open takes the directory lock and rewrites
    // the recovery profile, files that would come and go under the other
    // tests' copies of the shared directory.
    let (_tmp, db) = loaded_copy();
    let t = TpchDb::new(&db).expect("tables");
    let scale = Scale::new(SF).expect("scale");
    assert_eq!(t.all::<Region>().expect("region").len(), 5);
    let nations = t.all::<Nation>().expect("nation");
    assert_eq!(nations.len(), 25);
    assert!(nations.iter().all(|n| (0..5).contains(&n.regionkey)));
    let suppliers = t.all::<Supplier>().expect("supplier");
    assert_eq!(suppliers.len(), 100);
    let customers = t.all::<Customer>().expect("customer");
    assert_eq!(customers.len(), 1_500);
    let parts = t.all::<Part>().expect("part");
    assert_eq!(parts.len(), 2_000);
    let partsupp = t.all::<PartSupp>().expect("partsupp");
    assert_eq!(partsupp.len(), 8_000);
    let supplied: HashSet<(i64, i64)> = partsupp.iter().map(|p| (p.partkey, p.suppkey)).collect();
    let (orders, lines) = orders_and_lines(&t);
    assert_eq!(orders.len() as i64, scale.orders);
    let line_count: usize = lines.values().map(Vec::len).sum();
    assert!(
        (52_000..=68_000).contains(&line_count),
        "{line_count} lines: 1..7 per order, mean 4"
    );
    for (k, ls) in &lines {
        let o = orders.get(k).expect("every line's order exists");
        assert!((1..=7).contains(&ls.len()));
        assert!(
            ls.iter().all(|l| supplied.contains(&(l.partkey, l.suppkey))),
            "a line's supplier supplies its part"
        );
        assert!(o.custkey % 3 != 0 && o.custkey <= 1_500);
    }
    assert_eq!(lines.len(), orders.len(), "every order has lines");
    let reported: u64 = shared.report.per_table.iter().map(|r| r.rows).sum();
    assert_eq!(reported, shared.report.rows_loaded);
    assert_eq!(
        shared.report.rows_loaded,
        5 + 25 + 100 + 1_500 + 2_000 + 8_000 + 15_000 + line_count as u64
    );
    // The same seed gives the same rows.
    let again = Generator::new(scale, SEED);
    assert_eq!(
        &again.order(123).0,
        orders.get(&again.order(123).0.orderkey).expect("order 123")
    );
    // A second prepare is refused, naming why.
    let e = load::prepare(
        &db,
        &LoadConfig {
            sf: SF,
            seed: SEED,
            threads: 1,
        },
        &|_| {},
    )
    .expect_err("already loaded");
    assert!(matches!(e, TpchError::AlreadyLoaded { .. }), "{e}");
    db.close().expect("close");
}

#[test]
fn a_refresh_pair_replaces_whole_orders_and_can_run_again_after_a_cut() {
    let (_tmp, db) = loaded_copy();
    let marker = load::require_loaded(&db).expect("loaded");
    let generator = Generator::new(marker.scale().expect("scale"), marker.seed);
    let t = TpchDb::new(&db).expect("tables");
    let (before, _) = orders_and_lines(&t);
    assert_eq!(refresh::next_pair(&db).expect("pair"), 1);
    let rf1 = refresh::rf1(&db, &generator, 1).expect("rf1");
    assert_eq!(rf1.orders, 15);
    // Cut after RF1 and run the pair again: RF1 inserts nothing twice.
    let again = refresh::rf1(&db, &generator, 1).expect("rf1 again");
    assert_eq!((again.orders, again.lineitems), (0, 0));
    let (mid, mid_lines) = orders_and_lines(&t);
    assert_eq!(mid.len(), before.len() + 15);
    let rf2 = refresh::rf2(&db, &generator, 1).expect("rf2");
    assert_eq!(rf2.orders, 15);
    assert!(rf2.lineitems >= 15);
    refresh::record_pair(&db, 1).expect("record");
    assert_eq!(refresh::next_pair(&db).expect("pair"), 2);
    let (after, after_lines) = orders_and_lines(&t);
    assert_eq!(after.len(), before.len(), "RF1 adds as many orders as RF2 deletes");
    assert_eq!(
        after_lines.len(),
        after.len(),
        "no order without lines, no lines without order"
    );
    assert!(after_lines.keys().all(|k| after.contains_key(k)));
    let inserted: Vec<i64> = mid.keys().filter(|k| !before.contains_key(k)).copied().collect();
    assert_eq!(inserted.len(), 15);
    let generated: HashMap<i64, Vec<Lineitem>> = (0..15)
        .map(|j| {
            let (o, ls) = generator.refresh_order(1, j);
            (o.orderkey, ls)
        })
        .collect();
    for k in &inserted {
        assert_eq!(mid_lines.get(k), generated.get(k), "RF1 inserts the generated lines");
        assert!(after.contains_key(k), "RF2 deletes old orders, not the new ones");
    }
    let deleted = before.keys().filter(|k| !after.contains_key(k)).count();
    assert_eq!(deleted, 15);
    // Pairs beyond what the keys allow are refused.
    let e = refresh::rf1(&db, &generator, 1_001).expect_err("too many pairs");
    assert!(e.to_string().contains("1..=1000"), "{e}");
    db.close().expect("close");
}

struct Seen(Mutex<Vec<(String, u8)>>, Mutex<Vec<String>>);

impl Observer for Seen {
    fn query(&self, t: &QueryTiming) {
        self.0.lock().expect("lock").push((t.test.to_string(), t.query));
    }
    fn test_started(&self, test: &'static str) {
        self.1.lock().expect("lock").push(format!("start {test}"));
    }
    fn test_ended(&self, test: &'static str) {
        self.1.lock().expect("lock").push(format!("end {test}"));
    }
}

#[test]
fn the_power_and_throughput_tests_run_every_query_and_refresh_and_report_qphh() {
    let (_tmp, db) = loaded_copy();
    let seen = Seen(Mutex::new(Vec::new()), Mutex::new(Vec::new()));
    let config = RunConfig {
        streams: 2,
        power: true,
        refresh: true,
        validation_params: false,
        seed: 3,
        interrupt: None,
    };
    let report = driver::run(&db, &config, &seen).expect("run");
    let power = report.power.as_ref().expect("power test");
    assert!(power.complete);
    assert_eq!(
        power.queries.iter().map(|q| q.query).collect::<Vec<_>>(),
        driver::STREAM_00_ORDER.to_vec()
    );
    assert_eq!(power.refreshes.len(), 2);
    let throughput = report.throughput.as_ref().expect("throughput test");
    assert!(throughput.complete);
    assert_eq!(throughput.queries.len(), 44);
    assert_eq!(throughput.refreshes.len(), 4);
    for stream in 1..=2 {
        let mut qs: Vec<u8> = throughput
            .queries
            .iter()
            .filter(|q| q.stream == stream)
            .map(|q| q.query)
            .collect();
        qs.sort_unstable();
        assert_eq!(qs, (1..=22).collect::<Vec<u8>>());
    }
    let (p, tp, q) = (
        report.power_at_size.expect("power"),
        report.throughput_at_size.expect("throughput"),
        report.qphh.expect("qphh"),
    );
    assert!(p > 0.0 && tp > 0.0);
    assert!((q - (p * tp).sqrt()).abs() < 1e-6 * q);
    assert_eq!(seen.0.lock().expect("lock").len(), 66);
    assert_eq!(
        *seen.1.lock().expect("lock"),
        vec!["start power", "end power", "start throughput", "end throughput"]
    );
    assert_eq!(
        refresh::next_pair(&db).expect("pairs"),
        4,
        "1 pair in the power test, 2 in the throughput test"
    );
    let t = TpchDb::new(&db).expect("tables");
    let (orders, lines) = orders_and_lines(&t);
    assert_eq!(orders.len(), 15_000);
    assert_eq!(lines.len(), orders.len());
    db.close().expect("close");
}

#[test]
fn export_writes_eight_tables_with_headers_and_every_row() {
    // A copy even to read: an open takes the directory lock and rewrites
    // the recovery profile, files that would come and go under the other
    // tests' copies of the shared directory.
    let (_tmp, db) = loaded_copy();
    let out = tempfile::tempdir().expect("tmp");
    let report = export::export(&db, out.path()).expect("export");
    assert_eq!(report.tables.len(), 8);
    for t in &report.tables {
        let text = std::fs::read_to_string(&t.path).expect("read csv");
        let mut lines = text.lines();
        let header = lines.next().expect("header");
        assert!(header.starts_with(&t.table[..1]), "{header}");
        assert_eq!(lines.count() as u64, t.rows, "{}", t.table);
    }
    let region = std::fs::read_to_string(out.path().join("region.csv")).expect("region");
    assert!(region.starts_with("r_regionkey,r_name,r_comment\n0,AFRICA,"));
    let lineitem = std::fs::read_to_string(out.path().join("lineitem.csv")).expect("lineitem");
    let first = lineitem.lines().nth(1).expect("a line");
    assert!(first.starts_with("1,"), "{first}");
    db.close().expect("close");
}
