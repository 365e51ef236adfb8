//! Plans of Q17–Q22 (TPC-H 3.0.1, clauses 2.4.17–2.4.22).
//!
//! As in [`super::q01_08`]: one function per query text, its plan written
//! above it, hash tables built from the smaller input, ties the ORDER BY
//! leaves open broken by a key.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::access::TpchDb;
use super::super::schema::{Customer, Date, Lineitem, Order, Part, Supplier};
use super::super::TpchError;
use super::exec::{
    dec, disc_price, for_each_order, get_by_key, money, nationkeys_named, partsupps_of, quantity, ratio, sort_limit,
    sum_or_null, Like, DISC_PRICE_SCALE, MONEY_SCALE,
};
use super::{Answer, Value};

/// Q17, small-quantity-order revenue.
///
/// Plan: a hash set of the parts of BRAND and CONTAINER (a few hundred at
/// SF 1); one LINEITEM scan keeping, per such part, its quantity sum,
/// count and lines — the correlated `0.2 × avg(l_quantity)` is over all of
/// the part's lines; then `l_quantity < 0.2 × avg` exactly, as `5 ×
/// quantity × count < sum`.
pub fn q17(db: &TpchDb<'_>, brand: &str, container: &str) -> Result<Answer, TpchError> {
    #[derive(Default)]
    struct PartLines {
        sum_quantity: i128,
        count: i128,
        /// (quantity, extendedprice cents)
        lines: Vec<(i64, i64)>,
    }
    let mut parts: HashMap<i64, PartLines> = HashMap::new();
    db.scan(|p: Part| {
        if p.brand == brand && p.container == container {
            parts.insert(p.partkey, PartLines::default());
        }
        true
    })?;
    db.scan(|l: Lineitem| {
        if let Some(part) = parts.get_mut(&l.partkey) {
            part.sum_quantity += i128::from(l.quantity);
            part.count += 1;
            part.lines.push((l.quantity, l.extendedprice));
        }
        true
    })?;
    let mut total: Option<i128> = None;
    for part in parts.values() {
        for (qty, price) in &part.lines {
            if 5 * i128::from(*qty) * part.count < part.sum_quantity {
                *total.get_or_insert(0) += i128::from(*price);
            }
        }
    }
    // sum(l_extendedprice) / 7.0: cents / 700.
    let avg_yearly = total.map_or(Value::NULL, |t| Value::Float(ratio(t, 700)));
    Ok(Answer {
        columns: vec!["avg_yearly"],
        rows: vec![vec![avg_yearly]],
    })
}

/// Q18, large volume customer.
///
/// Plan: one LINEITEM scan grouped by order without a hash table (the key
/// order is the order-key order, [`for_each_order`]), keeping the orders
/// whose quantity exceeds QUANTITY; their order and customer by key; top
/// 100.
pub fn q18(db: &TpchDb<'_>, quantity_min: i64) -> Result<Answer, TpchError> {
    let mut large: Vec<(i64, i128)> = Vec::new();
    for_each_order(db, |lines| {
        let sum: i128 = lines.iter().map(|l| i128::from(l.quantity)).sum();
        if sum > i128::from(quantity_min) {
            large.push((lines[0].orderkey, sum));
        }
    })?;
    let mut rows: Vec<(Order, Customer, i128)> = Vec::new();
    for (orderkey, sum) in large {
        let Some(order) = get_by_key::<Order>(db, orderkey)? else {
            continue;
        };
        let Some(customer) = get_by_key::<Customer>(db, order.custkey)? else {
            continue;
        };
        rows.push((order, customer, sum));
    }
    sort_limit(&mut rows, Some(100), |a, b| {
        b.0.totalprice
            .cmp(&a.0.totalprice)
            .then_with(|| a.0.orderdate.cmp(&b.0.orderdate))
            .then_with(|| a.0.orderkey.cmp(&b.0.orderkey))
    });
    Ok(Answer {
        columns: vec![
            "c_name",
            "c_custkey",
            "o_orderkey",
            "o_orderdate",
            "o_totalprice",
            "sum(l_quantity)",
        ],
        rows: rows
            .into_iter()
            .map(|(o, c, sum)| {
                vec![
                    Value::Str(c.name),
                    Value::Int(c.custkey),
                    Value::Int(o.orderkey),
                    Value::Date(o.orderdate),
                    money(o.totalprice),
                    quantity(sum),
                ]
            })
            .collect(),
    })
}

/// Q19, discounted revenue. The three OR-ed conjunctions share
/// `p_partkey = l_partkey`, the ship mode and the instruction.
///
/// Plan: PART scanned into a hash table part → which of the three
/// (brand, containers, size range) branches it satisfies (few parts do);
/// one LINEITEM scan with the shared predicates probing it, then the
/// branch's quantity range. The modes are the standard text's `('AIR',
/// 'AIR REG')`; the population writes `REG AIR`, so only `AIR` matches,
/// in every implementation of the text.
pub fn q19(db: &TpchDb<'_>, quantities: &[i64; 3], brands: &[String; 3]) -> Result<Answer, TpchError> {
    const CONTAINERS: [[&str; 4]; 3] = [
        ["SM CASE", "SM BOX", "SM PACK", "SM PKG"],
        ["MED BAG", "MED BOX", "MED PKG", "MED PACK"],
        ["LG CASE", "LG BOX", "LG PACK", "LG PKG"],
    ];
    const SIZE_MAX: [i32; 3] = [5, 10, 15];
    let mut branches_of: HashMap<i64, [bool; 3]> = HashMap::new();
    db.scan(|p: Part| {
        let branches: [bool; 3] = std::array::from_fn(|i| {
            p.brand == brands[i] && CONTAINERS[i].contains(&p.container.as_str()) && (1..=SIZE_MAX[i]).contains(&p.size)
        });
        if branches.iter().any(|b| *b) {
            branches_of.insert(p.partkey, branches);
        }
        true
    })?;
    let mut revenue: Option<i128> = None;
    db.scan(|l: Lineitem| {
        if l.shipinstruct == "DELIVER IN PERSON" && (l.shipmode == "AIR" || l.shipmode == "AIR REG") {
            if let Some(branches) = branches_of.get(&l.partkey) {
                let hit = (0..3).any(|i| branches[i] && (quantities[i]..=quantities[i] + 10).contains(&l.quantity));
                if hit {
                    *revenue.get_or_insert(0) += disc_price(&l);
                }
            }
        }
        true
    })?;
    Ok(Answer {
        columns: vec!["revenue"],
        rows: vec![vec![sum_or_null(revenue, DISC_PRICE_SCALE)]],
    })
}

/// Q20, potential part promotion.
///
/// Plan: a hash set of the parts named `COLOR%`; one LINEITEM scan for the
/// year summing quantity per (part, supplier) of those parts; each part's
/// PARTSUPP rows by key, kept when `ps_availqty > 0.5 × sum` (as `2 ×
/// availqty > sum`; no lines means a NULL sum, which fails); SUPPLIER
/// scanned for NATION's suppliers among them.
pub fn q20(db: &TpchDb<'_>, color: &str, date: Date, nation: &str) -> Result<Answer, TpchError> {
    let name_like = Like::new(&format!("{color}%"));
    let mut parts: HashSet<i64> = HashSet::new();
    db.scan(|p: Part| {
        if name_like.matches(&p.name) {
            parts.insert(p.partkey);
        }
        true
    })?;
    let end = date.add_years(1);
    let mut shipped: HashMap<(i64, i64), i64> = HashMap::new();
    db.scan(|l: Lineitem| {
        if l.shipdate >= date && l.shipdate < end && parts.contains(&l.partkey) {
            *shipped.entry((l.partkey, l.suppkey)).or_default() += l.quantity;
        }
        true
    })?;
    let mut suppkeys: HashSet<i64> = HashSet::new();
    let mut sorted_parts: Vec<i64> = parts.into_iter().collect();
    sorted_parts.sort_unstable();
    for partkey in sorted_parts {
        for ps in partsupps_of(db, partkey)? {
            if let Some(sum) = shipped.get(&(ps.partkey, ps.suppkey)) {
                if 2 * i64::from(ps.availqty) > *sum {
                    suppkeys.insert(ps.suppkey);
                }
            }
        }
    }
    let nationkeys = nationkeys_named(db, nation)?;
    let mut rows: Vec<(String, String, i64)> = Vec::new();
    db.scan(|s: Supplier| {
        if nationkeys.contains(&s.nationkey) && suppkeys.contains(&s.suppkey) {
            rows.push((s.name, s.address, s.suppkey));
        }
        true
    })?;
    sort_limit(&mut rows, None, |a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
    Ok(Answer {
        columns: vec!["s_name", "s_address"],
        rows: rows
            .into_iter()
            .map(|(name, address, _)| vec![Value::Str(name), Value::Str(address)])
            .collect(),
    })
}

/// Q21, suppliers who kept orders waiting.
///
/// Plan: a hash table of NATION's suppliers; one LINEITEM scan grouped by
/// order ([`for_each_order`]), where the EXISTS (another supplier in the
/// order) and NOT EXISTS (another supplier late in the order) are
/// evaluated on the order's lines in memory; each late line `l1` of a
/// NATION supplier that passes is a candidate; the candidates' orders
/// fetched by key once each for `o_orderstatus = 'F'`; counted per
/// supplier name; top 100.
pub fn q21(db: &TpchDb<'_>, nation: &str) -> Result<Answer, TpchError> {
    let nationkeys = nationkeys_named(db, nation)?;
    let mut suppliers: HashMap<i64, String> = HashMap::new();
    db.scan(|s: Supplier| {
        if nationkeys.contains(&s.nationkey) {
            suppliers.insert(s.suppkey, s.name);
        }
        true
    })?;
    let late = |l: &Lineitem| l.receiptdate > l.commitdate;
    // (orderkey, suppkey), one per qualifying l1 row, in order-key order.
    let mut candidates: Vec<(i64, i64)> = Vec::new();
    for_each_order(db, |lines| {
        for l1 in lines {
            if !late(l1) || !suppliers.contains_key(&l1.suppkey) {
                continue;
            }
            let other_supplier = lines.iter().any(|l2| l2.suppkey != l1.suppkey);
            let other_late = lines.iter().any(|l3| l3.suppkey != l1.suppkey && late(l3));
            if other_supplier && !other_late {
                candidates.push((l1.orderkey, l1.suppkey));
            }
        }
    })?;
    let mut numwait: HashMap<&str, i64> = HashMap::new();
    let mut status: Option<(i64, bool)> = None;
    for (orderkey, suppkey) in candidates {
        let finished = match status {
            Some((k, f)) if k == orderkey => f,
            _ => {
                let f = get_by_key::<Order>(db, orderkey)?.is_some_and(|o| o.orderstatus == b'F');
                status = Some((orderkey, f));
                f
            }
        };
        if let (true, Some(name)) = (finished, suppliers.get(&suppkey)) {
            *numwait.entry(name.as_str()).or_default() += 1;
        }
    }
    let mut rows: Vec<(&str, i64)> = numwait.into_iter().collect();
    sort_limit(&mut rows, Some(100), |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    Ok(Answer {
        columns: vec!["s_name", "numwait"],
        rows: rows
            .into_iter()
            .map(|(name, n)| vec![Value::Str(name.to_string()), Value::Int(n)])
            .collect(),
    })
}

/// Q22, global sales opportunity.
///
/// Plan: one CUSTOMER scan computing the average positive balance of the
/// chosen country codes (`substring(c_phone, 1, 2)`) and keeping those
/// customers; filtered by `c_acctbal > avg` exactly (as `acctbal × count >
/// sum`); one ORDERS scan removing the customers with an order (the NOT
/// EXISTS as an anti-join against the smaller customer side); grouped by
/// code in key order.
pub fn q22(db: &TpchDb<'_>, country_codes: &[u8; 7]) -> Result<Answer, TpchError> {
    let codes: HashSet<String> = country_codes.iter().map(|c| c.to_string()).collect();
    let (mut positive_sum, mut positive_count) = (0i128, 0i128);
    let mut chosen: Vec<(i64, String, i64)> = Vec::new();
    db.scan(|c: Customer| {
        let code: String = c.phone.chars().take(2).collect();
        if codes.contains(&code) {
            if c.acctbal > 0 {
                positive_sum += i128::from(c.acctbal);
                positive_count += 1;
            }
            chosen.push((c.custkey, code, c.acctbal));
        }
        true
    })?;
    // Above the average: none when there is no average (a NULL compares
    // false).
    let mut candidates: HashMap<i64, (String, i64)> = chosen
        .into_iter()
        .filter(|(_, _, bal)| positive_count > 0 && i128::from(*bal) * positive_count > positive_sum)
        .map(|(key, code, bal)| (key, (code, bal)))
        .collect();
    if !candidates.is_empty() {
        db.scan(|o: Order| {
            candidates.remove(&o.custkey);
            !candidates.is_empty()
        })?;
    }
    let mut groups: BTreeMap<String, (i64, i128)> = BTreeMap::new();
    for (code, bal) in candidates.into_values() {
        let g = groups.entry(code).or_default();
        g.0 += 1;
        g.1 += i128::from(bal);
    }
    Ok(Answer {
        columns: vec!["cntrycode", "numcust", "totacctbal"],
        rows: groups
            .into_iter()
            .map(|(code, (n, sum))| vec![Value::Str(code), Value::Int(n), dec(sum, MONEY_SCALE)])
            .collect(),
    })
}
