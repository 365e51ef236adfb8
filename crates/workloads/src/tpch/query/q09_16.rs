//! Plans of Q9–Q16 (TPC-H 3.0.1, clauses 2.4.9–2.4.16).
//!
//! As in [`super::q01_08`]: one function per query text, its plan written
//! above it, hash tables built from the smaller input, ties the ORDER BY
//! leaves open broken by a key.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;

use super::super::access::TpchDb;
use super::super::schema::{Customer, Date, Lineitem, Order, Part, PartSupp, Supplier};
use super::super::TpchError;
use super::exec::{
    dec, disc_price, get_by_key, money, nation_names, nationkeys_named, partsupps_of, ratio, single_key, sort_limit,
    text, Like, DISC_PRICE_SCALE, MONEY_SCALE,
};
use super::params::Fraction;
use super::{Answer, Value};

/// Q9, product type profit measure.
///
/// Plan: a hash set of the parts whose name contains COLOR; their
/// PARTSUPP rows by key into a hash table (partkey, suppkey) → supplycost;
/// every supplier's nation; one LINEITEM scan probing both, keeping
/// (orderkey, nation, amount) — in order-key order, since the scan is —
/// then a merge join with one ORDERS range scan for the order year.
pub fn q9(db: &TpchDb<'_>, color: &str) -> Result<Answer, TpchError> {
    let name_like = Like::new(&format!("%{color}%"));
    let mut parts: Vec<i64> = Vec::new();
    db.scan(|p: Part| {
        if name_like.matches(&p.name) {
            parts.push(p.partkey);
        }
        true
    })?;
    let mut supplycost: HashMap<(i64, i64), i64> = HashMap::new();
    for partkey in &parts {
        for ps in partsupps_of(db, *partkey)? {
            supplycost.insert((ps.partkey, ps.suppkey), ps.supplycost);
        }
    }
    let names = nation_names(db)?;
    let mut supplier_nation: HashMap<i64, &str> = HashMap::new();
    db.scan(|s: Supplier| {
        if let Some(name) = names.get(&s.nationkey) {
            supplier_nation.insert(s.suppkey, name.as_str());
        }
        true
    })?;
    // l_extendedprice × (1 − l_discount) − ps_supplycost × l_quantity, at
    // scale 4 (the second term is cents × units, scale 2, times 100).
    let mut lines: Vec<(i64, &str, i128)> = Vec::new();
    db.scan(|l: Lineitem| {
        if let (Some(cost), Some(nation)) = (supplycost.get(&(l.partkey, l.suppkey)), supplier_nation.get(&l.suppkey)) {
            let amount = disc_price(&l) - i128::from(*cost) * i128::from(l.quantity) * 100;
            lines.push((l.orderkey, nation, amount));
        }
        true
    })?;
    let mut profit: BTreeMap<(&str, Reverse<i32>), i128> = BTreeMap::new();
    if let (Some(first), Some(last)) = (lines.first(), lines.last()) {
        // Both keys came from LINEITEM keys, so they encode; were one not
        // to, an unbounded end would only read more orders.
        let (from, to) = (single_key(first.0), single_key(last.0));
        let start = from.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let end = to.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let mut next = 0;
        db.scan_range(start, end, |o: Order| {
            while next < lines.len() && lines[next].0 < o.orderkey {
                next += 1; // a line without an order: the inner join drops it
            }
            while next < lines.len() && lines[next].0 == o.orderkey {
                let (_, nation, amount) = lines[next];
                *profit.entry((nation, Reverse(o.orderdate.year()))).or_default() += amount;
                next += 1;
            }
            next < lines.len()
        })?;
    }
    Ok(Answer {
        columns: vec!["nation", "o_year", "sum_profit"],
        rows: profit
            .into_iter()
            .map(|((nation, Reverse(year)), p)| {
                vec![text(nation), Value::Int(i64::from(year)), dec(p, DISC_PRICE_SCALE)]
            })
            .collect(),
    })
}

/// Q10, returned item reporting.
///
/// Plan: ORDERS scanned for the quarter; each order's lines by key with
/// `l_returnflag = 'R'`, summed per customer; sorted by revenue; customer
/// and nation fetched by key for the first 20 that join.
pub fn q10(db: &TpchDb<'_>, date: Date) -> Result<Answer, TpchError> {
    let end = date.add_months(3);
    let mut orders: Vec<(i64, i64)> = Vec::new();
    db.scan(|o: Order| {
        if o.orderdate >= date && o.orderdate < end {
            orders.push((o.orderkey, o.custkey));
        }
        true
    })?;
    let mut revenue: HashMap<i64, i128> = HashMap::new();
    for (orderkey, custkey) in orders {
        for l in db.lineitems_of(orderkey)? {
            if l.returnflag == b'R' {
                *revenue.entry(custkey).or_default() += disc_price(&l);
            }
        }
    }
    let mut ranked: Vec<(i64, i128)> = revenue.into_iter().collect();
    sort_limit(&mut ranked, None, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let names = nation_names(db)?;
    let mut rows = Vec::new();
    for (custkey, revenue) in ranked {
        if rows.len() == 20 {
            break;
        }
        let Some(c) = get_by_key::<Customer>(db, custkey)? else {
            continue;
        };
        let Some(nation) = names.get(&c.nationkey) else {
            continue;
        };
        rows.push(vec![
            Value::Int(custkey),
            Value::Str(c.name),
            dec(revenue, DISC_PRICE_SCALE),
            money(c.acctbal),
            text(nation),
            Value::Str(c.address),
            Value::Str(c.phone),
            Value::Str(c.comment),
        ]);
    }
    Ok(Answer {
        columns: vec![
            "c_custkey",
            "c_name",
            "revenue",
            "c_acctbal",
            "n_name",
            "c_address",
            "c_phone",
            "c_comment",
        ],
        rows,
    })
}

/// Q11, important stock identification.
///
/// Plan: a hash set of NATION's suppliers; one PARTSUPP scan probing it,
/// `ps_supplycost × ps_availqty` summed per part and in total (the HAVING
/// subquery is the same join, so one pass computes both); kept when
/// `value > total × FRACTION`, compared exactly as `value × den > total ×
/// num`.
pub fn q11(db: &TpchDb<'_>, nation: &str, fraction: Fraction) -> Result<Answer, TpchError> {
    let nationkeys = nationkeys_named(db, nation)?;
    let mut suppliers: HashSet<i64> = HashSet::new();
    db.scan(|s: Supplier| {
        if nationkeys.contains(&s.nationkey) {
            suppliers.insert(s.suppkey);
        }
        true
    })?;
    let mut values: HashMap<i64, i128> = HashMap::new();
    let mut total: i128 = 0;
    db.scan(|ps: PartSupp| {
        if suppliers.contains(&ps.suppkey) {
            let value = i128::from(ps.supplycost) * i128::from(ps.availqty);
            *values.entry(ps.partkey).or_default() += value;
            total += value;
        }
        true
    })?;
    let (num, den) = (i128::from(fraction.numerator), i128::from(fraction.denominator));
    let mut rows: Vec<(i64, i128)> = values.into_iter().filter(|(_, v)| *v * den > total * num).collect();
    sort_limit(&mut rows, None, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Answer {
        columns: vec!["ps_partkey", "value"],
        rows: rows
            .into_iter()
            .map(|(p, v)| vec![Value::Int(p), dec(v, MONEY_SCALE)])
            .collect(),
    })
}

/// Q12, shipping modes and order priority.
///
/// Plan: one LINEITEM scan with the mode and date predicates; the few
/// surviving lines fetch their order by key for its priority.
pub fn q12(db: &TpchDb<'_>, shipmode1: &str, shipmode2: &str, date: Date) -> Result<Answer, TpchError> {
    let end = date.add_years(1);
    let mut lines: Vec<(i64, String)> = Vec::new();
    db.scan(|l: Lineitem| {
        if (l.shipmode == shipmode1 || l.shipmode == shipmode2)
            && l.commitdate < l.receiptdate
            && l.shipdate < l.commitdate
            && l.receiptdate >= date
            && l.receiptdate < end
        {
            lines.push((l.orderkey, l.shipmode));
        }
        true
    })?;
    let mut counts: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (orderkey, shipmode) in lines {
        let Some(order) = get_by_key::<Order>(db, orderkey)? else {
            continue;
        };
        let c = counts.entry(shipmode).or_default();
        if order.orderpriority == "1-URGENT" || order.orderpriority == "2-HIGH" {
            c.0 += 1;
        } else {
            c.1 += 1;
        }
    }
    Ok(Answer {
        columns: vec!["l_shipmode", "high_line_count", "low_line_count"],
        rows: counts
            .into_iter()
            .map(|(mode, (high, low))| vec![Value::Str(mode), Value::Int(high), Value::Int(low)])
            .collect(),
    })
}

/// Q13, customer distribution.
///
/// Plan: one ORDERS scan counting, per customer, the orders whose comment
/// is not like `%WORD1%WORD2%`; one CUSTOMER scan as the outer side of the
/// LEFT OUTER JOIN, so a customer without such orders counts 0; then a
/// histogram of the counts.
pub fn q13(db: &TpchDb<'_>, word1: &str, word2: &str) -> Result<Answer, TpchError> {
    let comment_like = Like::new(&format!("%{word1}%{word2}%"));
    let mut orders_of: HashMap<i64, i64> = HashMap::new();
    db.scan(|o: Order| {
        if !comment_like.matches(&o.comment) {
            *orders_of.entry(o.custkey).or_default() += 1;
        }
        true
    })?;
    let mut customers_with: HashMap<i64, i64> = HashMap::new();
    db.scan(|c: Customer| {
        let count = orders_of.get(&c.custkey).copied().unwrap_or(0);
        *customers_with.entry(count).or_default() += 1;
        true
    })?;
    let mut rows: Vec<(i64, i64)> = customers_with.into_iter().collect();
    sort_limit(&mut rows, None, |a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    Ok(Answer {
        columns: vec!["c_count", "custdist"],
        rows: rows
            .into_iter()
            .map(|(count, dist)| vec![Value::Int(count), Value::Int(dist)])
            .collect(),
    })
}

/// Q14, promotion effect.
///
/// Plan: one LINEITEM scan for the month, revenue summed per part (the
/// smaller side); one PART scan probing it, splitting PROMO types.
pub fn q14(db: &TpchDb<'_>, date: Date) -> Result<Answer, TpchError> {
    let end = date.add_months(1);
    let mut revenue_of: HashMap<i64, i128> = HashMap::new();
    db.scan(|l: Lineitem| {
        if l.shipdate >= date && l.shipdate < end {
            *revenue_of.entry(l.partkey).or_default() += disc_price(&l);
        }
        true
    })?;
    let promo_like = Like::new("PROMO%");
    let (mut promo, mut total, mut joined) = (0i128, 0i128, false);
    db.scan(|p: Part| {
        if let Some(r) = revenue_of.get(&p.partkey) {
            joined = true;
            total += r;
            if promo_like.matches(&p.type_) {
                promo += r;
            }
        }
        true
    })?;
    // 100.00 × promo / total; NULL when no line joined (SUM over no rows).
    let value = if joined && total != 0 {
        Value::Float(ratio(100 * promo, total))
    } else {
        Value::NULL
    };
    Ok(Answer {
        columns: vec!["promo_revenue"],
        rows: vec![vec![value]],
    })
}

/// Q15, top supplier. The view `revenue[STREAM]` is computed in the plan:
/// one LINEITEM scan for the quarter summed per supplier (exactly, so the
/// `= max(total_revenue)` comparison is exact); the suppliers at the
/// maximum fetched by key, in key order.
pub fn q15(db: &TpchDb<'_>, date: Date) -> Result<Answer, TpchError> {
    let end = date.add_months(3);
    let mut revenue: HashMap<i64, i128> = HashMap::new();
    db.scan(|l: Lineitem| {
        if l.shipdate >= date && l.shipdate < end {
            *revenue.entry(l.suppkey).or_default() += disc_price(&l);
        }
        true
    })?;
    let mut rows = Vec::new();
    if let Some(max) = revenue.values().max().copied() {
        let mut top: Vec<i64> = revenue.iter().filter(|(_, r)| **r == max).map(|(s, _)| *s).collect();
        top.sort_unstable();
        for suppkey in top {
            if let Some(s) = get_by_key::<Supplier>(db, suppkey)? {
                rows.push(vec![
                    Value::Int(suppkey),
                    Value::Str(s.name),
                    Value::Str(s.address),
                    Value::Str(s.phone),
                    dec(max, DISC_PRICE_SCALE),
                ]);
            }
        }
    }
    Ok(Answer {
        columns: vec!["s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"],
        rows,
    })
}

/// Q16, parts/supplier relationship.
///
/// Plan: a hash set of the suppliers with complaints (the NOT IN list);
/// PART scanned for brand, type and size; each such part's PARTSUPP rows
/// by key, collecting the distinct non-complained-about suppliers per
/// (brand, type, size).
pub fn q16(db: &TpchDb<'_>, brand: &str, type_prefix: &str, sizes: &[i32; 8]) -> Result<Answer, TpchError> {
    let complaint_like = Like::new("%Customer%Complaints%");
    let mut complained: HashSet<i64> = HashSet::new();
    db.scan(|s: Supplier| {
        if complaint_like.matches(&s.comment) {
            complained.insert(s.suppkey);
        }
        true
    })?;
    let type_like = Like::new(&format!("{type_prefix}%"));
    let mut parts: Vec<(i64, String, String, i32)> = Vec::new();
    db.scan(|p: Part| {
        if p.brand != brand && !type_like.matches(&p.type_) && sizes.contains(&p.size) {
            parts.push((p.partkey, p.brand, p.type_, p.size));
        }
        true
    })?;
    let mut suppliers_of: HashMap<(String, String, i32), HashSet<i64>> = HashMap::new();
    for (partkey, brand, type_, size) in parts {
        let suppliers: Vec<i64> = partsupps_of(db, partkey)?
            .into_iter()
            .map(|ps| ps.suppkey)
            .filter(|s| !complained.contains(s))
            .collect();
        if !suppliers.is_empty() {
            suppliers_of.entry((brand, type_, size)).or_default().extend(suppliers);
        }
    }
    let mut rows: Vec<((String, String, i32), usize)> =
        suppliers_of.into_iter().map(|(group, s)| (group, s.len())).collect();
    sort_limit(&mut rows, None, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Answer {
        columns: vec!["p_brand", "p_type", "p_size", "supplier_cnt"],
        rows: rows
            .into_iter()
            .map(|((brand, type_, size), count)| {
                vec![
                    Value::Str(brand),
                    Value::Str(type_),
                    Value::Int(i64::from(size)),
                    Value::Int(count as i64),
                ]
            })
            .collect(),
    })
}
