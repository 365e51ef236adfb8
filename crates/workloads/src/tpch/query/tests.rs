//! Queries on a tiny hand-made database on the real engine: 7 customers,
//! 4 suppliers, 2 parts, 6 orders and 14 lines, crafted so that each
//! tested query meets its edge cases (a tie at Q15's maximum, customers
//! without orders in Q13, a NOT EXISTS that removes an order in Q21, a
//! quantity exactly at Q18's and Q17's thresholds, a ship date exactly at
//! Q3's). Expected answers were computed by hand (and checked with Python's
//! `decimal`), not by the code under test.

use flushwise_engine::db::{Database, DbOptions};
use flushwise_engine::page::PageSize;

use super::super::access::TpchDb;
use super::super::gen::{NATIONS, REGIONS};
use super::super::schema::{Customer, Date, Lineitem, Nation, Order, Part, PartSupp, Region, Row, Supplier, Table};
use super::super::TpchError;
use super::{q01_08, q09_16, q17_22, run_query, Answer, Params, Subst, Value};

fn d(text: &str) -> Date {
    Date::parse(text).expect("a valid date in the test data")
}

/// A line with the columns most tests care about; dates and text are
/// filled in by [`lines`].
#[allow(clippy::too_many_arguments)]
pub(super) fn line(
    orderkey: i64,
    linenumber: i32,
    partkey: i64,
    suppkey: i64,
    quantity: i64,
    extendedprice: i64,
    discount: i64,
    tax: i64,
) -> Lineitem {
    Lineitem {
        orderkey,
        partkey,
        suppkey,
        linenumber,
        quantity,
        extendedprice,
        discount,
        tax,
        returnflag: b'N',
        linestatus: b'O',
        shipdate: d("1995-01-01"),
        commitdate: d("1995-01-01"),
        receiptdate: d("1995-01-01"),
        shipinstruct: "NONE".into(),
        shipmode: "MAIL".into(),
        comment: "line".into(),
    }
}

/// (orderkey, line, part, supplier, quantity, price cents, discount %,
/// tax %, returnflag, linestatus, ship, commit, receipt, instruction, mode)
type LineSpec = (
    i64,
    i32,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    u8,
    u8,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const LINES: [LineSpec; 14] = [
    (
        1,
        1,
        1,
        3,
        10,
        100_000,
        5,
        2,
        b'R',
        b'F',
        "1995-03-20",
        "1995-03-15",
        "1995-03-25",
        "DELIVER IN PERSON",
        "AIR",
    ),
    (
        1,
        2,
        2,
        1,
        20,
        40_000,
        0,
        0,
        b'A',
        b'F',
        "1995-03-12",
        "1995-03-20",
        "1995-03-14",
        "NONE",
        "MAIL",
    ),
    (
        2,
        1,
        2,
        3,
        30,
        200_000,
        10,
        4,
        b'N',
        b'O',
        "1995-04-01",
        "1995-03-20",
        "1995-04-05",
        "NONE",
        "SHIP",
    ),
    (
        2,
        2,
        1,
        1,
        5,
        10_000,
        0,
        8,
        b'N',
        b'O',
        "1995-03-16",
        "1995-03-30",
        "1995-03-20",
        "NONE",
        "RAIL",
    ),
    (
        3,
        1,
        1,
        2,
        40,
        80_000,
        3,
        1,
        b'R',
        b'F',
        "1995-03-15",
        "1995-03-20",
        "1995-03-18",
        "COLLECT COD",
        "TRUCK",
    ),
    (
        4,
        1,
        1,
        1,
        12,
        30_000,
        0,
        5,
        b'N',
        b'O',
        "1996-01-10",
        "1996-02-01",
        "1996-01-20",
        "NONE",
        "AIR",
    ),
    (
        4,
        2,
        2,
        2,
        8,
        10_000,
        0,
        5,
        b'N',
        b'O',
        "1996-02-10",
        "1996-02-20",
        "1996-02-15",
        "DELIVER IN PERSON",
        "AIR",
    ),
    (
        5,
        1,
        1,
        1,
        10,
        50_000,
        6,
        0,
        b'A',
        b'F',
        "1994-07-01",
        "1994-07-10",
        "1994-07-05",
        "NONE",
        "MAIL",
    ),
    (
        5,
        2,
        2,
        2,
        10,
        50_000,
        4,
        0,
        b'R',
        b'F',
        "1994-08-01",
        "1994-08-05",
        "1994-08-20",
        "NONE",
        "MAIL",
    ),
    (
        5,
        3,
        1,
        3,
        24,
        50_000,
        7,
        0,
        b'A',
        b'F',
        "1994-09-01",
        "1994-09-05",
        "1994-09-10",
        "NONE",
        "MAIL",
    ),
    (
        5,
        4,
        2,
        4,
        1,
        20_000,
        5,
        0,
        b'R',
        b'F',
        "1994-12-31",
        "1995-01-10",
        "1995-01-05",
        "NONE",
        "MAIL",
    ),
    (
        6,
        1,
        2,
        2,
        50,
        20_000,
        0,
        0,
        b'N',
        b'O',
        "1996-02-05",
        "1996-02-10",
        "1996-02-08",
        "NONE",
        "SHIP",
    ),
    (
        6,
        2,
        1,
        3,
        50,
        60_000,
        2,
        3,
        b'N',
        b'O',
        "1996-04-01",
        "1996-03-01",
        "1996-04-10",
        "NONE",
        "SHIP",
    ),
    (
        6,
        3,
        1,
        1,
        50,
        70_000,
        1,
        1,
        b'N',
        b'O',
        "1998-10-01",
        "1998-10-05",
        "1998-10-03",
        "NONE",
        "SHIP",
    ),
];

fn lines() -> Vec<Lineitem> {
    LINES
        .iter()
        .map(
            |&(o, n, p, s, q, price, disc, tax, rf, ls, ship, commit, receipt, instruct, mode)| Lineitem {
                returnflag: rf,
                linestatus: ls,
                shipdate: d(ship),
                commitdate: d(commit),
                receiptdate: d(receipt),
                shipinstruct: instruct.into(),
                shipmode: mode.into(),
                ..line(o, n, p, s, q, price, disc, tax)
            },
        )
        .collect()
}

fn orders() -> Vec<Order> {
    // (key, customer, status, total cents, date, priority, comment)
    let specs: [(i64, i64, u8, i64, &str, &str, &str); 6] = [
        (
            1,
            1,
            b'F',
            150_000,
            "1995-03-10",
            "1-URGENT",
            "fluffy special packages requests",
        ),
        (2, 1, b'O', 220_000, "1995-03-01", "5-LOW", "regular deposits"),
        (3, 2, b'F', 80_000, "1995-02-01", "2-HIGH", "requests special"),
        (4, 6, b'O', 40_000, "1996-01-05", "3-MEDIUM", "x"),
        (5, 2, b'F', 100_000, "1994-06-01", "4-NOT SPECIFIED", "special requests"),
        (6, 6, b'O', 200_000, "1996-02-01", "1-URGENT", "y"),
    ];
    specs
        .iter()
        .map(|&(orderkey, custkey, status, total, date, priority, comment)| Order {
            orderkey,
            custkey,
            orderstatus: status,
            totalprice: total,
            orderdate: d(date),
            orderpriority: priority.into(),
            clerk: "Clerk#000000001".into(),
            shippriority: 0,
            comment: comment.into(),
        })
        .collect()
}

fn customers() -> Vec<Customer> {
    // (key, nation, phone, balance cents, segment)
    let specs: [(i64, i64, &str, i64, &str); 7] = [
        (1, 7, "17-100-100-1000", 50_000, "BUILDING"),
        (2, 6, "16-200-200-2000", 5_000, "BUILDING"),
        (3, 3, "13-300-300-3000", 90_000, "AUTOMOBILE"),
        (4, 3, "13-400-400-4000", 10_000, "MACHINERY"),
        (5, 21, "31-500-500-5000", -1_000, "HOUSEHOLD"),
        (6, 21, "31-600-600-6000", 70_000, "FURNITURE"),
        (7, 20, "30-700-700-7000", 60_000, "BUILDING"),
    ];
    specs
        .iter()
        .map(|&(custkey, nationkey, phone, acctbal, segment)| Customer {
            custkey,
            name: format!("Customer#{custkey:09}"),
            address: format!("address {custkey}"),
            nationkey,
            phone: phone.into(),
            acctbal,
            mktsegment: segment.into(),
            comment: "customer".into(),
        })
        .collect()
}

fn suppliers() -> Vec<Supplier> {
    // (key, nation, balance cents, comment): GERMANY, FRANCE, SAUDI ARABIA, CANADA
    let specs: [(i64, i64, i64, &str); 4] = [
        (1, 7, 10_000, "quiet"),
        (2, 6, 20_000, "Customer slow Complaints"),
        (3, 20, 30_000, "bold"),
        (4, 3, 40_000, "even"),
    ];
    specs
        .iter()
        .map(|&(suppkey, nationkey, acctbal, comment)| Supplier {
            suppkey,
            name: format!("Supplier#{suppkey:09}"),
            address: format!("supplier street {suppkey}"),
            nationkey,
            phone: format!("{}-000-000-0000", nationkey + 10),
            acctbal,
            comment: comment.into(),
        })
        .collect()
}

fn parts() -> Vec<Part> {
    vec![
        Part {
            partkey: 1,
            name: "forest green lace".into(),
            mfgr: "Manufacturer#1".into(),
            brand: "Brand#23".into(),
            type_: "PROMO BURNISHED BRASS".into(),
            size: 15,
            container: "MED BOX".into(),
            retailprice: 90_100,
            comment: "part one".into(),
        },
        Part {
            partkey: 2,
            name: "blue ivory".into(),
            mfgr: "Manufacturer#2".into(),
            brand: "Brand#12".into(),
            type_: "STANDARD PLATED TIN".into(),
            size: 3,
            container: "SM CASE".into(),
            retailprice: 90_200,
            comment: "part two".into(),
        },
    ]
}

fn partsupps() -> Vec<PartSupp> {
    // Part 1: the cheapest supplier (3) is not in EUROPE; suppliers 1 and
    // 2 (GERMANY, FRANCE) tie at EUROPE's minimum.
    let costs = [(1, [1_000, 1_000, 500, 2_000]), (2, [700, 800, 900, 1_000])];
    costs
        .iter()
        .flat_map(|&(partkey, cost)| {
            (1..=4).map(move |suppkey| PartSupp {
                partkey,
                suppkey,
                availqty: 100,
                supplycost: cost[suppkey as usize - 1],
                comment: "ps".into(),
            })
        })
        .collect()
}

fn load<R: Row>(db: &Database, rows: Vec<R>) {
    let id = db.create_index(R::TABLE.store_name(), true).expect("create the table");
    let mut encoded: Vec<(Vec<u8>, Vec<u8>)> = rows.iter().map(|r| (r.key(), r.value())).collect();
    encoded.sort();
    db.load_sorted(id, encoded.into_iter()).expect("load the table");
}

/// The tiny database in a temporary directory.
struct Tiny {
    db: Database,
    _dir: tempfile::TempDir,
}

fn tiny() -> Tiny {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let options = DbOptions {
        page_size: PageSize::new(4096).expect("a valid page size"),
        buffer_pool_bytes: 1 << 20,
        redo_bytes: 8 << 20,
        ..DbOptions::default()
    };
    let db = Database::create(dir.path(), options).expect("create the database");
    let regions = REGIONS
        .iter()
        .enumerate()
        .map(|(k, name)| Region {
            regionkey: k as i64,
            name: name.to_string(),
            comment: "r".into(),
        })
        .collect();
    let nations = NATIONS
        .iter()
        .enumerate()
        .map(|(k, (name, regionkey))| Nation {
            nationkey: k as i64,
            name: name.to_string(),
            regionkey: *regionkey,
            comment: "n".into(),
        })
        .collect();
    load::<Region>(&db, regions);
    load::<Nation>(&db, nations);
    load(&db, suppliers());
    load(&db, customers());
    load(&db, parts());
    load(&db, partsupps());
    load(&db, orders());
    load(&db, lines());
    db.create_index(Table::Meta.store_name(), true)
        .expect("create the meta table");
    Tiny { db, _dir: dir }
}

fn texts(answer: &Answer) -> Vec<Vec<String>> {
    answer
        .rows
        .iter()
        .map(|r| r.iter().map(Value::to_text).collect())
        .collect()
}

fn float_at(answer: &Answer, row: usize, column: usize) -> f64 {
    match answer.rows[row][column] {
        Value::Float(f) => f,
        ref other => panic!("not a float: {other:?}"),
    }
}

#[test]
fn q1_groups_by_flag_and_status_and_leaves_out_lines_past_the_cutoff() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q01_08::q1(&db, 90).expect("q1");
    // Line 6-3 ships 1998-10-01, after 1998-12-01 − 90 days = 1998-09-02.
    assert_eq!(
        texts(&a).iter().map(|r| r[..6].to_vec()).collect::<Vec<_>>(),
        vec![
            vec!["A", "F", "54.00", "1400.00", "1335.0000", "1335.000000"],
            vec!["N", "O", "155.00", "3300.00", "3088.0000", "3205.640000"],
            vec!["R", "F", "61.00", "2500.00", "2396.0000", "2422.760000"],
        ]
    );
    let expected_avgs = [
        (18.0, 1400.0 / 3.0, 0.13 / 3.0, 3),
        (155.0 / 6.0, 550.0, 0.02, 6),
        (15.25, 625.0, 0.0425, 4),
    ];
    for (row, (qty, price, disc, count)) in expected_avgs.iter().enumerate() {
        assert!((float_at(&a, row, 6) - qty).abs() < 1e-9, "{:?}", a.rows[row]);
        assert!((float_at(&a, row, 7) - price).abs() < 1e-9, "{:?}", a.rows[row]);
        assert!((float_at(&a, row, 8) - disc).abs() < 1e-12, "{:?}", a.rows[row]);
        assert_eq!(a.rows[row][9], Value::Int(*count));
    }
    assert_eq!(a.columns.len(), 10);
}

#[test]
fn q2_keeps_every_supplier_at_the_region_s_minimum_cost() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q01_08::q2(&db, 15, "BRASS", "EUROPE").expect("q2");
    let rows: Vec<Vec<String>> = texts(&a).iter().map(|r| r[..5].to_vec()).collect();
    assert_eq!(
        rows,
        vec![
            vec!["200.00", "Supplier#000000002", "FRANCE", "1", "Manufacturer#1"],
            vec!["100.00", "Supplier#000000001", "GERMANY", "1", "Manufacturer#1"],
        ]
    );
    assert!(q01_08::q2(&db, 14, "BRASS", "EUROPE").expect("q2").rows.is_empty());
}

#[test]
fn q3_sums_lines_shipped_after_the_date_per_order() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q01_08::q3(&db, "BUILDING", d("1995-03-15")).expect("q3");
    // Order 3's only line ships on the date itself (not after it); order
    // 1's second line ships before it.
    assert_eq!(
        texts(&a),
        vec![
            vec!["2", "1900.0000", "1995-03-01", "0"],
            vec!["1", "950.0000", "1995-03-10", "0"]
        ]
    );
}

#[test]
fn q4_counts_orders_with_a_late_line_per_priority() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q01_08::q4(&db, d("1995-01-01")).expect("q4");
    // Order 3 falls in the quarter but its line arrived before its commit.
    assert_eq!(texts(&a), vec![vec!["1-URGENT", "1"], vec!["5-LOW", "1"]]);
}

#[test]
fn q6_applies_the_discount_band_and_the_strict_quantity_bound() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q01_08::q6(&db, d("1994-01-01"), 6, 24).expect("q6");
    // Lines 5-1 (500.00 × 0.06) and 5-4 (200.00 × 0.05); 5-2's discount is
    // outside 0.05..0.07 and 5-3's quantity is not below 24.
    assert_eq!(texts(&a), vec![vec!["40.0000"]]);
    let none = q01_08::q6(&db, d("1990-01-01"), 6, 24).expect("q6");
    assert!(none.rows[0][0].is_null(), "a SUM over no rows is NULL");
}

#[test]
fn q13_counts_customers_without_orders_in_the_left_outer_join() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(13)).expect("q13");
    // Orders 1 and 5 mention "special … requests" and are left out;
    // customers 3, 4, 5 and 7 have no orders at all.
    assert_eq!(a.columns, ["c_count", "custdist"]);
    assert_eq!(texts(&a), vec![vec!["0", "4"], vec!["1", "2"], vec!["2", "1"]]);
}

#[test]
fn q14_is_the_promo_share_of_the_month_s_revenue() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = q09_16::q14(&db, d("1995-03-01")).expect("q14");
    // PROMO (part 1): 950 + 100 + 776; all: that + 400 (part 2).
    assert!((float_at(&a, 0, 0) - 100.0 * 1826.0 / 2226.0).abs() < 1e-9, "{a:?}");
}

#[test]
fn q15_returns_every_supplier_tied_at_the_maximum_revenue() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(15)).expect("q15");
    // 1996 Q1: supplier 1 has 300.00 (line 4-1), supplier 2 has 100.00 +
    // 200.00 (4-2, 6-1); line 6-2 ships on 1996-04-01, outside.
    assert_eq!(
        texts(&a),
        vec![
            vec![
                "1",
                "Supplier#000000001",
                "supplier street 1",
                "17-000-000-0000",
                "300.0000"
            ],
            vec![
                "2",
                "Supplier#000000002",
                "supplier street 2",
                "16-000-000-0000",
                "300.0000"
            ],
        ]
    );
}

#[test]
fn q17_compares_with_a_fifth_of_the_part_s_average_quantity() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(17)).expect("q17");
    // Part 1 (Brand#23, MED BOX): 8 lines, 201 units, 0.2 × avg = 5.025;
    // only line 2-2 (5 units, 100.00) is below: 100.00 / 7.
    assert!((float_at(&a, 0, 0) - 100.0 / 7.0).abs() < 1e-9, "{a:?}");
    let none = q17_22::q17(&db, "Brand#11", "MED BOX").expect("q17");
    assert!(none.rows[0][0].is_null());
}

#[test]
fn q18_keeps_orders_strictly_above_the_quantity_by_total_price() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    // Quantities per order: 30, 35, 40, 20, 45, 150; order 3 sits at 40.
    let a = q17_22::q18(&db, 40).expect("q18");
    assert_eq!(
        texts(&a),
        vec![
            vec!["Customer#000000006", "6", "6", "1996-02-01", "2000.00", "150.00"],
            vec!["Customer#000000002", "2", "5", "1994-06-01", "1000.00", "45.00"],
        ]
    );
}

#[test]
fn q19_needs_the_part_s_branch_and_its_quantity_range() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(19)).expect("q19");
    // Line 4-2: part 2 is Brand#12, SM CASE, size 3, 8 units, AIR, in
    // person. Line 1-1 is in person by AIR too, but part 1 (size 15) fits
    // no branch.
    assert_eq!(texts(&a), vec![vec!["100.0000"]]);
}

#[test]
fn q21_counts_late_lines_only_of_finished_orders_where_no_other_supplier_was_late() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(21)).expect("q21");
    // Supplier 3 (SAUDI ARABIA) is late in orders 1, 2, 5 and 6: order 5
    // also has supplier 2 late, orders 2 and 6 are not finished.
    assert_eq!(texts(&a), vec![vec!["Supplier#000000003", "1"]]);
}

#[test]
fn q22_counts_customers_above_the_average_positive_balance_without_orders() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    let a = run_query(&db, &Params::validation(22)).expect("q22");
    // Codes 17, 13, 13, 31, 31, 30 are chosen; the positive balances
    // average (500 + 900 + 100 + 700 + 600) / 5 = 560; above it are
    // customers 3 (900), 6 (700, has orders) and 7 (600).
    assert_eq!(texts(&a), vec![vec!["13", "1", "900.00"], vec!["30", "1", "600.00"]]);
}

#[test]
fn every_query_runs_with_its_validation_values_and_fills_its_columns() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    for q in 1..=super::QUERIES {
        let a = run_query(&db, &Params::validation(q)).unwrap_or_else(|e| panic!("Q{q}: {e}"));
        assert!(!a.columns.is_empty());
        for row in &a.rows {
            assert_eq!(row.len(), a.columns.len(), "Q{q}: {row:?}");
        }
    }
}

#[test]
fn run_query_refuses_unknown_queries_and_mismatched_parameters() {
    let t = tiny();
    let db = TpchDb::new(&t.db).expect("tables");
    for bad in [
        Params::validation(0),
        Params::validation(23),
        Params {
            query: 2,
            subst: Subst::Q1 { delta_days: 90 },
        },
    ] {
        match run_query(&db, &bad) {
            Err(TpchError::Config { reason }) => assert!(reason.contains("does not exist"), "{reason}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn values_print_exactly() {
    assert_eq!(
        Value::Dec {
            units: 1_234_500,
            scale: 4
        }
        .to_text(),
        "123.4500"
    );
    assert_eq!(Value::Dec { units: -5, scale: 2 }.to_text(), "-0.05");
    assert_eq!(Value::Dec { units: 7, scale: 0 }.to_text(), "7");
    assert_eq!(Value::Date(Date::ymd_const(1995, 3, 1)).to_text(), "1995-03-01");
    assert_eq!(Value::NULL.to_text(), "NULL");
    assert!(Value::NULL.is_null() && !Value::Float(0.0).is_null());
}
