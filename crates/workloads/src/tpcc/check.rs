//! The consistency conditions of clause 3.3.2, for a quiescent database.
//!
//! Per warehouse and district (one read transaction per district, so the
//! locks held stay bounded):
//! 1. W_YTD = Σ D_YTD of its districts.
//! 2. D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID) (the NEW_ORDER part when
//!    the district has undelivered orders).
//! 3. max(NO_O_ID) − min(NO_O_ID) + 1 = rows of NEW_ORDER.
//! 4. Σ O_OL_CNT = rows of ORDER_LINE.
//! 5. O_CARRIER_ID is NULL exactly for the orders in NEW_ORDER.
//! 6. O_OL_CNT = the order's ORDER_LINE rows, for every order.
//! 7. OL_DELIVERY_D is NULL exactly when the order's O_CARRIER_ID is.
//! 8. W_YTD = Σ H_AMOUNT with H_W_ID = W_ID.
//! 9. D_YTD = Σ H_AMOUNT with (H_W_ID, H_D_ID) = (W_ID, D_ID).
//! 10. C_BALANCE = Σ OL_AMOUNT of the customer's delivered lines
//!     (OL_DELIVERY_D not NULL) − Σ H_AMOUNT of the customer's history.
//! 11. rows of ORDER − rows of NEW_ORDER = 2,100 (only right after the
//!     load: Delivery changes it; checked when asked).
//! 12. C_BALANCE + C_YTD_PAYMENT = Σ OL_AMOUNT of delivered lines.
//!
//! Every violation names its condition, warehouse and district, and the
//! customer or order where the condition is about one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use super::load::require_loaded;
use super::schema::*;
use super::store::{ScanDirection, ScanLock, TpccStore, TpccTxn};
use super::TpccError;

/// Violations kept in the report (the count goes on).
pub const VIOLATIONS_KEPT_MAX: usize = 1_000;

/// One broken condition.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    pub condition: u8,
    pub w_id: u32,
    pub d_id: Option<u8>,
    pub c_id: Option<u32>,
    pub o_id: Option<u32>,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "condition {}: warehouse {}", self.condition, self.w_id)?;
        if let Some(d) = self.d_id {
            write!(f, ", district {d}")?;
        }
        if let Some(c) = self.c_id {
            write!(f, ", customer {c}")?;
        }
        if let Some(o) = self.o_id {
            write!(f, ", order {o}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// What the check found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    pub warehouses: u32,
    pub conditions_checked: Vec<u8>,
    /// At most [`VIOLATIONS_KEPT_MAX`].
    pub violations: Vec<Violation>,
    pub violations_total: u64,
    pub rows_read: u64,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.violations_total == 0
    }

    /// Whether some violation is of `condition`.
    pub fn violates(&self, condition: u8) -> bool {
        self.violations.iter().any(|v| v.condition == condition)
    }

    fn push(&mut self, v: Violation) {
        self.violations_total += 1;
        if self.violations.len() < VIOLATIONS_KEPT_MAX {
            self.violations.push(v);
        }
    }
}

/// Cents as "123.45" (negative: "-0.10").
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

struct At {
    w: u32,
    d: Option<u8>,
    c: Option<u32>,
    o: Option<u32>,
}

impl CheckReport {
    fn fail(&mut self, condition: u8, at: At, detail: String) {
        self.push(Violation {
            condition,
            w_id: at.w,
            d_id: at.d,
            c_id: at.c,
            o_id: at.o,
            detail,
        });
    }
}

fn district_at(w: u32, d: u8) -> At {
    At {
        w,
        d: Some(d),
        c: None,
        o: None,
    }
}

/// Checks conditions 1–10 and 12 (and 11 if asked).
pub fn check(store: &impl TpccStore, include_condition_11: bool) -> Result<CheckReport, TpccError> {
    let marker = require_loaded(store)?;
    let mut report = CheckReport {
        warehouses: marker.warehouses,
        conditions_checked: (1..=12).filter(|&c| c != 11 || include_condition_11).collect(),
        ..CheckReport::default()
    };
    // Σ H_AMOUNT by the paying (h_w_id, h_d_id), over every district's
    // customers (a remote payment lands in another warehouse's history).
    let mut paid: HashMap<(u32, u8), i64> = HashMap::new();
    let mut ytd: BTreeMap<(u32, u8), i64> = BTreeMap::new();
    let mut w_ytd: BTreeMap<u32, i64> = BTreeMap::new();

    for w in 1..=marker.warehouses {
        let mut txn = store.begin();
        let row = txn
            .get(Index::Warehouse, &warehouse_key(w))?
            .ok_or_else(|| TpccError::MissingRow {
                table: "warehouse",
                key: w.to_string(),
            })?;
        txn.commit()?;
        let warehouse = Warehouse::decode(&row)?;
        w_ytd.insert(w, warehouse.w_ytd);
        report.rows_read += 1;
        let mut d_ytd_sum = 0i64;
        for d in 1..=DISTRICTS_PER_WAREHOUSE {
            let d_ytd = check_district(store, w, d, include_condition_11, &mut paid, &mut report)?;
            d_ytd_sum += d_ytd;
            ytd.insert((w, d), d_ytd);
        }
        if warehouse.w_ytd != d_ytd_sum {
            report.fail(
                1,
                At {
                    w,
                    d: None,
                    c: None,
                    o: None,
                },
                format!("w_ytd {} != sum(d_ytd) {}", money(warehouse.w_ytd), money(d_ytd_sum)),
            );
        }
    }
    for (&w, &w_ytd) in &w_ytd {
        let h: i64 = (1..=DISTRICTS_PER_WAREHOUSE)
            .map(|d| paid.get(&(w, d)).copied().unwrap_or(0))
            .sum();
        if w_ytd != h {
            report.fail(
                8,
                At {
                    w,
                    d: None,
                    c: None,
                    o: None,
                },
                format!("w_ytd {} != sum(h_amount) {}", money(w_ytd), money(h)),
            );
        }
    }
    for (&(w, d), &d_ytd) in &ytd {
        let h = paid.get(&(w, d)).copied().unwrap_or(0);
        if d_ytd != h {
            report.fail(
                9,
                district_at(w, d),
                format!("d_ytd {} != sum(h_amount) {}", money(d_ytd), money(h)),
            );
        }
    }
    Ok(report)
}

/// Conditions 2–7, 10–12 of one district; adds its customers' payments to
/// `paid` and returns D_YTD.
fn check_district(
    store: &impl TpccStore,
    w: u32,
    d: u8,
    include_condition_11: bool,
    paid: &mut HashMap<(u32, u8), i64>,
    report: &mut CheckReport,
) -> Result<i64, TpccError> {
    let prefix = district_prefix(w, d);
    let mut txn = store.begin();
    let district = txn
        .get(Index::District, &district_key(w, d))?
        .ok_or_else(|| TpccError::MissingRow {
            table: "district",
            key: format!("({w}, {d})"),
        })?;
    let district = District::decode(&district)?;
    let customers = txn.prefix(Index::Customer, &prefix, ScanDirection::Forward, None, ScanLock::Shared)?;
    let history = txn.prefix(Index::History, &prefix, ScanDirection::Forward, None, ScanLock::Shared)?;
    let orders = txn.prefix(Index::Oorder, &prefix, ScanDirection::Forward, None, ScanLock::Shared)?;
    let new_orders = txn.prefix(Index::NewOrder, &prefix, ScanDirection::Forward, None, ScanLock::Shared)?;
    let lines = txn.prefix(
        Index::OrderLine,
        &prefix,
        ScanDirection::Forward,
        None,
        ScanLock::Shared,
    )?;
    txn.commit()?;
    report.rows_read += (1 + customers.len() + history.len() + orders.len() + new_orders.len() + lines.len()) as u64;
    let at = || district_at(w, d);

    let orders: Vec<Order> = orders.iter().map(|(_, v)| Order::decode(v)).collect::<Result<_, _>>()?;
    let no_ids: Vec<u32> = new_orders
        .iter()
        .map(|(_, v)| NewOrder::decode(v).map(|n| n.no_o_id))
        .collect::<Result<_, _>>()?;

    // 2 and 3.
    let max_o = orders.iter().map(|o| o.o_id).max().unwrap_or(0);
    if district.d_next_o_id.wrapping_sub(1) != max_o {
        report.fail(
            2,
            at(),
            format!(
                "d_next_o_id - 1 = {} != max(o_id) {max_o}",
                district.d_next_o_id.wrapping_sub(1)
            ),
        );
    }
    if let (Some(&min_no), Some(&max_no)) = (no_ids.iter().min(), no_ids.iter().max()) {
        if max_no != max_o {
            report.fail(2, at(), format!("max(no_o_id) {max_no} != max(o_id) {max_o}"));
        }
        let span = u64::from(max_no - min_no) + 1;
        if span != no_ids.len() as u64 {
            report.fail(
                3,
                at(),
                format!(
                    "max(no_o_id) - min(no_o_id) + 1 = {span} != {} new_order rows",
                    no_ids.len()
                ),
            );
        }
    }
    // 4, 6, 7 and the delivered amounts of 10 and 12.
    let lines: Vec<OrderLine> = lines
        .iter()
        .map(|(_, v)| OrderLine::decode(v))
        .collect::<Result<_, _>>()?;
    let ol_cnt_sum: u64 = orders.iter().map(|o| u64::from(o.o_ol_cnt)).sum();
    if ol_cnt_sum != lines.len() as u64 {
        report.fail(
            4,
            at(),
            format!("sum(o_ol_cnt) {ol_cnt_sum} != {} order_line rows", lines.len()),
        );
    }
    let by_id: HashMap<u32, &Order> = orders.iter().map(|o| (o.o_id, o)).collect();
    let mut line_count: HashMap<u32, u32> = HashMap::new();
    let mut delivered: HashMap<u32, i64> = HashMap::new();
    for l in &lines {
        *line_count.entry(l.ol_o_id).or_default() += 1;
        let order_at = || At {
            w,
            d: Some(d),
            c: None,
            o: Some(l.ol_o_id),
        };
        match by_id.get(&l.ol_o_id) {
            None => report.fail(6, order_at(), format!("order line {} has no order", l.ol_number)),
            Some(o) => {
                if o.o_carrier_id.is_none() != l.ol_delivery_d.is_none() {
                    report.fail(
                        7,
                        order_at(),
                        format!(
                            "line {}: ol_delivery_d {} but o_carrier_id {}",
                            l.ol_number,
                            if l.ol_delivery_d.is_some() { "set" } else { "null" },
                            if o.o_carrier_id.is_some() { "set" } else { "null" }
                        ),
                    );
                }
                if l.ol_delivery_d.is_some() {
                    *delivered.entry(o.o_c_id).or_default() += l.ol_amount;
                }
            }
        }
    }
    // 5 and 6.
    let undelivered: HashSet<u32> = no_ids.iter().copied().collect();
    for o in &orders {
        let order_at = || At {
            w,
            d: Some(d),
            c: Some(o.o_c_id),
            o: Some(o.o_id),
        };
        if o.o_carrier_id.is_none() != undelivered.contains(&o.o_id) {
            report.fail(
                5,
                order_at(),
                format!(
                    "o_carrier_id {} but the order is {}in new_order",
                    if o.o_carrier_id.is_some() { "set" } else { "null" },
                    if undelivered.contains(&o.o_id) { "" } else { "not " }
                ),
            );
        }
        let n = line_count.get(&o.o_id).copied().unwrap_or(0);
        if n != u32::from(o.o_ol_cnt) {
            report.fail(6, order_at(), format!("o_ol_cnt {} != {n} order_line rows", o.o_ol_cnt));
        }
    }
    for &no in &no_ids {
        if !by_id.contains_key(&no) {
            report.fail(
                5,
                At {
                    w,
                    d: Some(d),
                    c: None,
                    o: Some(no),
                },
                "new_order row without an order".into(),
            );
        }
    }
    // 11.
    if include_condition_11 {
        let diff = orders.len() as i64 - no_ids.len() as i64;
        if diff != 2_100 {
            report.fail(
                11,
                at(),
                format!("{} orders - {} new_orders = {diff} != 2100", orders.len(), no_ids.len()),
            );
        }
    }
    // History: the customers' payments (10) and the paying districts' (8, 9).
    let mut paid_by_customer: HashMap<u32, i64> = HashMap::new();
    for (_, v) in &history {
        let h = History::decode(v)?;
        *paid_by_customer.entry(h.h_c_id).or_default() += h.h_amount;
        *paid.entry((h.h_w_id, h.h_d_id)).or_default() += h.h_amount;
    }
    // 10 and 12.
    for (_, v) in &customers {
        let c = Customer::decode(v)?;
        let ol = delivered.get(&c.c_id).copied().unwrap_or(0);
        let h = paid_by_customer.get(&c.c_id).copied().unwrap_or(0);
        let customer_at = || At {
            w,
            d: Some(d),
            c: Some(c.c_id),
            o: None,
        };
        if c.c_balance != ol - h {
            report.fail(
                10,
                customer_at(),
                format!(
                    "c_balance {} != sum(delivered ol_amount) {} - sum(h_amount) {}",
                    money(c.c_balance),
                    money(ol),
                    money(h)
                ),
            );
        }
        if c.c_balance + c.c_ytd_payment != ol {
            report.fail(
                12,
                customer_at(),
                format!(
                    "c_balance {} + c_ytd_payment {} != sum(delivered ol_amount) {}",
                    money(c.c_balance),
                    money(c.c_ytd_payment),
                    money(ol)
                ),
            );
        }
    }
    Ok(district.d_ytd)
}
