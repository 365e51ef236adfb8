//! Plans of Q1–Q8 (TPC-H 3.0.1, clauses 2.4.1–2.4.8).
//!
//! Each function is one query text, with the plan written above it: which
//! inputs are scanned, which become hash tables (always the smaller side),
//! and where an index lookup replaces a scan. Results follow the query's
//! SELECT list and ORDER BY; ties the ORDER BY leaves open are broken by a
//! key so that a run is reproducible.
//!
//! Index lookups into LINEITEM ([`TpchDb::lineitems_of`]) serve the plans
//! whose ORDERS side is selective (a date range, a segment, a region):
//! the lines of a few percent of the orders cost less to fetch by key
//! than a scan of all of LINEITEM.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::access::TpchDb;
use super::super::schema::{Customer, Date, Lineitem, Order, Part, Supplier};
use super::super::TpchError;
use super::exec::{
    char_text, charge, dec, disc_price, money, nation_names, nationkeys_named, nations_of_region, partsupps_of,
    quantity, ratio, sort_limit, sum_or_null, text, Like, CHARGE_SCALE, DISC_PRICE_SCALE, MONEY_SCALE,
};
use super::{Answer, Value};

/// Q1, pricing summary report.
///
/// Plan: one LINEITEM scan, `l_shipdate <= 1998-12-01 - DELTA days`,
/// aggregated into at most a handful of (returnflag, linestatus) groups
/// kept in key order.
pub fn q1(db: &TpchDb<'_>, delta_days: i32) -> Result<Answer, TpchError> {
    #[derive(Default)]
    struct Group {
        sum_qty: i128,
        sum_base_price: i128,
        sum_disc_price: i128,
        sum_charge: i128,
        sum_discount: i128,
        count: i64,
    }
    let cutoff = Date::ymd_const(1998, 12, 1).add_days(-delta_days);
    let mut groups: BTreeMap<(u8, u8), Group> = BTreeMap::new();
    db.scan(|l: Lineitem| {
        if l.shipdate <= cutoff {
            let g = groups.entry((l.returnflag, l.linestatus)).or_default();
            g.sum_qty += i128::from(l.quantity);
            g.sum_base_price += i128::from(l.extendedprice);
            g.sum_disc_price += disc_price(&l);
            g.sum_charge += charge(&l);
            g.sum_discount += i128::from(l.discount);
            g.count += 1;
        }
        true
    })?;
    let rows = groups
        .into_iter()
        .map(|((returnflag, linestatus), g)| {
            let count = i128::from(g.count);
            vec![
                char_text(returnflag),
                char_text(linestatus),
                quantity(g.sum_qty),
                dec(g.sum_base_price, MONEY_SCALE),
                dec(g.sum_disc_price, DISC_PRICE_SCALE),
                dec(g.sum_charge, CHARGE_SCALE),
                Value::Float(ratio(g.sum_qty, count)),
                Value::Float(ratio(g.sum_base_price, 100 * count)),
                Value::Float(ratio(g.sum_discount, 100 * count)),
                Value::Int(g.count),
            ]
        })
        .collect();
    Ok(Answer {
        columns: vec![
            "l_returnflag",
            "l_linestatus",
            "sum_qty",
            "sum_base_price",
            "sum_disc_price",
            "sum_charge",
            "avg_qty",
            "avg_price",
            "avg_disc",
            "count_order",
        ],
        rows,
    })
}

/// Q2, minimum cost supplier.
///
/// Plan: REGION ⋈ NATION gives the region's nations; SUPPLIER scanned into
/// a hash table of the region's suppliers; PART scanned for `p_size = SIZE
/// and p_type like '%TYPE'`; for each such part its PARTSUPP rows by key
/// (the correlated `min(ps_supplycost)` is over those same rows restricted
/// to the region's suppliers), keeping the offers at the minimum.
pub fn q2(db: &TpchDb<'_>, size: i32, type_syllable: &str, region: &str) -> Result<Answer, TpchError> {
    struct Supp {
        acctbal: i64,
        name: String,
        nation: String,
        address: String,
        phone: String,
        comment: String,
    }
    let nations = nations_of_region(db, region)?;
    let mut suppliers: HashMap<i64, Supp> = HashMap::new();
    db.scan(|s: Supplier| {
        if let Some(nation) = nations.get(&s.nationkey) {
            suppliers.insert(
                s.suppkey,
                Supp {
                    acctbal: s.acctbal,
                    name: s.name,
                    nation: nation.clone(),
                    address: s.address,
                    phone: s.phone,
                    comment: s.comment,
                },
            );
        }
        true
    })?;
    let type_like = Like::new(&format!("%{type_syllable}"));
    let mut parts: Vec<(i64, String)> = Vec::new();
    db.scan(|p: Part| {
        if p.size == size && type_like.matches(&p.type_) {
            parts.push((p.partkey, p.mfgr));
        }
        true
    })?;
    let mut rows: Vec<(&Supp, i64, &str)> = Vec::new();
    for (partkey, mfgr) in &parts {
        let offers: Vec<(i64, &Supp)> = partsupps_of(db, *partkey)?
            .into_iter()
            .filter_map(|ps| suppliers.get(&ps.suppkey).map(|s| (ps.supplycost, s)))
            .collect();
        if let Some(min_cost) = offers.iter().map(|(cost, _)| *cost).min() {
            rows.extend(
                offers
                    .into_iter()
                    .filter(|(cost, _)| *cost == min_cost)
                    .map(|(_, s)| (s, *partkey, mfgr.as_str())),
            );
        }
    }
    sort_limit(&mut rows, Some(100), |a, b| {
        b.0.acctbal
            .cmp(&a.0.acctbal)
            .then_with(|| a.0.nation.cmp(&b.0.nation))
            .then_with(|| a.0.name.cmp(&b.0.name))
            .then_with(|| a.1.cmp(&b.1))
    });
    Ok(Answer {
        columns: vec![
            "s_acctbal",
            "s_name",
            "n_name",
            "p_partkey",
            "p_mfgr",
            "s_address",
            "s_phone",
            "s_comment",
        ],
        rows: rows
            .into_iter()
            .map(|(s, partkey, mfgr)| {
                vec![
                    money(s.acctbal),
                    text(&s.name),
                    text(&s.nation),
                    Value::Int(partkey),
                    text(mfgr),
                    text(&s.address),
                    text(&s.phone),
                    text(&s.comment),
                ]
            })
            .collect(),
    })
}

/// Q3, shipping priority.
///
/// Plan: CUSTOMER scanned into a hash set of the segment's customers;
/// ORDERS scanned for `o_orderdate < DATE` probing it; each surviving
/// order's lines by key, `l_shipdate > DATE`, summed per order; top 10.
pub fn q3(db: &TpchDb<'_>, segment: &str, date: Date) -> Result<Answer, TpchError> {
    let mut customers: HashSet<i64> = HashSet::new();
    db.scan(|c: Customer| {
        if c.mktsegment == segment {
            customers.insert(c.custkey);
        }
        true
    })?;
    let mut orders: Vec<(i64, Date, i32)> = Vec::new();
    db.scan(|o: Order| {
        if o.orderdate < date && customers.contains(&o.custkey) {
            orders.push((o.orderkey, o.orderdate, o.shippriority));
        }
        true
    })?;
    let mut rows: Vec<(i64, i128, Date, i32)> = Vec::new();
    for (orderkey, orderdate, shippriority) in orders {
        let mut revenue = None;
        for l in db.lineitems_of(orderkey)? {
            if l.shipdate > date {
                *revenue.get_or_insert(0) += disc_price(&l);
            }
        }
        if let Some(revenue) = revenue {
            rows.push((orderkey, revenue, orderdate, shippriority));
        }
    }
    sort_limit(&mut rows, Some(10), |a, b| {
        b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)).then_with(|| a.0.cmp(&b.0))
    });
    Ok(Answer {
        columns: vec!["l_orderkey", "revenue", "o_orderdate", "o_shippriority"],
        rows: rows
            .into_iter()
            .map(|(orderkey, revenue, orderdate, shippriority)| {
                vec![
                    Value::Int(orderkey),
                    dec(revenue, DISC_PRICE_SCALE),
                    Value::Date(orderdate),
                    Value::Int(i64::from(shippriority)),
                ]
            })
            .collect(),
    })
}

/// Q4, order priority checking.
///
/// Plan: ORDERS scanned for the quarter; the EXISTS is a semi-join by key
/// into the order's lines, stopping at the first late one.
pub fn q4(db: &TpchDb<'_>, date: Date) -> Result<Answer, TpchError> {
    let end = date.add_months(3);
    let mut orders: Vec<(i64, String)> = Vec::new();
    db.scan(|o: Order| {
        if o.orderdate >= date && o.orderdate < end {
            orders.push((o.orderkey, o.orderpriority));
        }
        true
    })?;
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (orderkey, priority) in orders {
        if db.lineitems_of(orderkey)?.iter().any(|l| l.commitdate < l.receiptdate) {
            *counts.entry(priority).or_default() += 1;
        }
    }
    Ok(Answer {
        columns: vec!["o_orderpriority", "order_count"],
        rows: counts
            .into_iter()
            .map(|(p, n)| vec![Value::Str(p), Value::Int(n)])
            .collect(),
    })
}

/// Q5, local supplier volume.
///
/// Plan: the region's nations; hash tables of the suppliers and of the
/// customers in them (nation of each); ORDERS scanned for the year probing
/// the customers; each order's lines by key, kept when the line's supplier
/// is of the customer's nation.
pub fn q5(db: &TpchDb<'_>, region: &str, date: Date) -> Result<Answer, TpchError> {
    let nations = nations_of_region(db, region)?;
    let mut supplier_nation: HashMap<i64, i64> = HashMap::new();
    db.scan(|s: Supplier| {
        if nations.contains_key(&s.nationkey) {
            supplier_nation.insert(s.suppkey, s.nationkey);
        }
        true
    })?;
    let mut customer_nation: HashMap<i64, i64> = HashMap::new();
    db.scan(|c: Customer| {
        if nations.contains_key(&c.nationkey) {
            customer_nation.insert(c.custkey, c.nationkey);
        }
        true
    })?;
    let end = date.add_years(1);
    let mut orders: Vec<(i64, i64)> = Vec::new();
    db.scan(|o: Order| {
        if o.orderdate >= date && o.orderdate < end {
            if let Some(nation) = customer_nation.get(&o.custkey) {
                orders.push((o.orderkey, *nation));
            }
        }
        true
    })?;
    let mut revenue: HashMap<&str, i128> = HashMap::new();
    for (orderkey, nationkey) in orders {
        for l in db.lineitems_of(orderkey)? {
            if supplier_nation.get(&l.suppkey) == Some(&nationkey) {
                if let Some(name) = nations.get(&nationkey) {
                    *revenue.entry(name.as_str()).or_default() += disc_price(&l);
                }
            }
        }
    }
    let mut rows: Vec<(&str, i128)> = revenue.into_iter().collect();
    sort_limit(&mut rows, None, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    Ok(Answer {
        columns: vec!["n_name", "revenue"],
        rows: rows
            .into_iter()
            .map(|(n, r)| vec![text(n), dec(r, DISC_PRICE_SCALE)])
            .collect(),
    })
}

/// Q6, forecasting revenue change.
///
/// Plan: one LINEITEM scan with the three predicates; a single sum (NULL
/// over no rows).
pub fn q6(db: &TpchDb<'_>, date: Date, discount_hundredths: i64, quantity: i64) -> Result<Answer, TpchError> {
    let end = date.add_years(1);
    let discounts = (discount_hundredths - 1)..=(discount_hundredths + 1);
    let mut revenue: Option<i128> = None;
    db.scan(|l: Lineitem| {
        if l.shipdate >= date && l.shipdate < end && discounts.contains(&l.discount) && l.quantity < quantity {
            *revenue.get_or_insert(0) += i128::from(l.extendedprice) * i128::from(l.discount);
        }
        true
    })?;
    Ok(Answer {
        columns: vec!["revenue"],
        rows: vec![vec![sum_or_null(revenue, DISC_PRICE_SCALE)]],
    })
}

/// Q7, volume shipping.
///
/// Plan: the two nations' keys; hash tables of their suppliers and
/// customers (nation of each); ORDERS scanned probing the customers; each
/// order's lines by key, shipped in 1995–1996, whose supplier and customer
/// nations are the pair in either direction; grouped in key order.
pub fn q7(db: &TpchDb<'_>, nation1: &str, nation2: &str) -> Result<Answer, TpchError> {
    let first = nationkeys_named(db, nation1)?;
    let second = nationkeys_named(db, nation2)?;
    let names = nation_names(db)?;
    let wanted = |nationkey: &i64| first.contains(nationkey) || second.contains(nationkey);
    let mut supplier_nation: HashMap<i64, i64> = HashMap::new();
    db.scan(|s: Supplier| {
        if wanted(&s.nationkey) {
            supplier_nation.insert(s.suppkey, s.nationkey);
        }
        true
    })?;
    let mut customer_nation: HashMap<i64, i64> = HashMap::new();
    db.scan(|c: Customer| {
        if wanted(&c.nationkey) {
            customer_nation.insert(c.custkey, c.nationkey);
        }
        true
    })?;
    let mut orders: Vec<(i64, i64)> = Vec::new();
    db.scan(|o: Order| {
        if let Some(nation) = customer_nation.get(&o.custkey) {
            orders.push((o.orderkey, *nation));
        }
        true
    })?;
    let (from, to) = (Date::ymd_const(1995, 1, 1), Date::ymd_const(1996, 12, 31));
    let mut revenue: BTreeMap<(&str, &str, i32), i128> = BTreeMap::new();
    for (orderkey, cust_nation) in orders {
        for l in db.lineitems_of(orderkey)? {
            if l.shipdate < from || l.shipdate > to {
                continue;
            }
            let Some(supp_nation) = supplier_nation.get(&l.suppkey) else {
                continue;
            };
            let pair = (first.contains(supp_nation) && second.contains(&cust_nation))
                || (second.contains(supp_nation) && first.contains(&cust_nation));
            if let (true, Some(supp_name), Some(cust_name)) = (pair, names.get(supp_nation), names.get(&cust_nation)) {
                *revenue.entry((supp_name, cust_name, l.shipdate.year())).or_default() += disc_price(&l);
            }
        }
    }
    Ok(Answer {
        columns: vec!["supp_nation", "cust_nation", "l_year", "revenue"],
        rows: revenue
            .into_iter()
            .map(|((s, c, year), r)| vec![text(s), text(c), Value::Int(i64::from(year)), dec(r, DISC_PRICE_SCALE)])
            .collect(),
    })
}

/// Q8, national market share.
///
/// Plan: the region's nations and a hash set of their customers; a hash
/// set of the parts of the exact TYPE; every supplier's nation (SUPPLIER
/// is small); ORDERS of 1995–1996 probing the customers; each order's
/// lines by key, probing the parts; per year the volume of NATION's
/// suppliers over all volume.
pub fn q8(db: &TpchDb<'_>, nation: &str, region: &str, type_: &str) -> Result<Answer, TpchError> {
    let region_nations = nations_of_region(db, region)?;
    let names = nation_names(db)?;
    let mut customers: HashSet<i64> = HashSet::new();
    db.scan(|c: Customer| {
        if region_nations.contains_key(&c.nationkey) {
            customers.insert(c.custkey);
        }
        true
    })?;
    let mut parts: HashSet<i64> = HashSet::new();
    db.scan(|p: Part| {
        if p.type_ == type_ {
            parts.insert(p.partkey);
        }
        true
    })?;
    // Supplier → "is of NATION" (the supplier's nation must exist: n2 is
    // an inner join).
    let mut supplier_is_nation: HashMap<i64, bool> = HashMap::new();
    db.scan(|s: Supplier| {
        if let Some(name) = names.get(&s.nationkey) {
            supplier_is_nation.insert(s.suppkey, name == nation);
        }
        true
    })?;
    let (from, to) = (Date::ymd_const(1995, 1, 1), Date::ymd_const(1996, 12, 31));
    let mut orders: Vec<(i64, i32)> = Vec::new();
    db.scan(|o: Order| {
        if o.orderdate >= from && o.orderdate <= to && customers.contains(&o.custkey) {
            orders.push((o.orderkey, o.orderdate.year()));
        }
        true
    })?;
    // Year → (volume of NATION's suppliers, all volume).
    let mut volumes: BTreeMap<i32, (i128, i128)> = BTreeMap::new();
    for (orderkey, year) in orders {
        for l in db.lineitems_of(orderkey)? {
            if !parts.contains(&l.partkey) {
                continue;
            }
            if let Some(is_nation) = supplier_is_nation.get(&l.suppkey) {
                let v = volumes.entry(year).or_default();
                let volume = disc_price(&l);
                if *is_nation {
                    v.0 += volume;
                }
                v.1 += volume;
            }
        }
    }
    Ok(Answer {
        columns: vec!["o_year", "mkt_share"],
        rows: volumes
            .into_iter()
            .map(|(year, (of_nation, all))| {
                let share = if all == 0 {
                    Value::NULL
                } else {
                    Value::Float(ratio(of_nation, all))
                };
                vec![Value::Int(i64::from(year)), share]
            })
            .collect(),
    })
}
