//! The five TPC-C transactions (clauses 2.4–2.8): their inputs as a
//! terminal draws them, and their bodies over a [`TpccTxn`].
//!
//! Input generation (clause 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1):
//! - New-Order: district uniform, customer NURand(1023, 1, 3000), 5–15
//!   lines, item NURand(8191, 1, 100000), each line supplied by a remote
//!   warehouse with 1 % probability (if there is one), quantity 1–10; 1 %
//!   of New-Orders carry an unused item id (100,001) on the last line and
//!   roll back (clause 2.4.2.3) — a real rollback of every change made.
//! - Payment: 85 % home / 15 % remote customer (remote district uniform,
//!   warehouse uniform among the others), 60 % selected by last name
//!   NURand(255, 0, 999), amount 1.00–5,000.00.
//! - Order-Status: 60 % by last name.
//! - Delivery: carrier 1–10, all ten districts in one transaction.
//! - Stock-Level: the terminal's fixed district, threshold 10–20, the
//!   last 20 orders.
//!
//! Locking (strict 2PL from the store, which does not lock gaps):
//! - New-Order and Delivery lock the DISTRICT row exclusively before they
//!   touch the district's NEW_ORDER or ORDER rows (New-Order to take and
//!   bump d_next_o_id, Delivery as a guard), so they never interleave on a
//!   district's NEW_ORDER range and Delivery's "oldest NEW_ORDER" is exact.
//! - Lock order, to make deadlocks rare (they are still detected and
//!   retried): WAREHOUSE before DISTRICT before CUSTOMER; New-Order takes
//!   its STOCK rows in ascending (s_w_id, s_i_id) order and Stock-Level
//!   reads STOCK in the same order; Delivery takes districts 1 to 10 in
//!   order.
//! - A customer selected by last name is the one at position ⌈n/2⌉ of the
//!   n customers with that last name sorted by c_first (clause 2.5.2.2).

use std::fmt;

use super::random::{nurand, NurandConstants, Rng64, A_C_ID, A_C_LAST, A_OL_I_ID};
use super::schema::*;
use super::store::{ScanDirection, ScanLock, TpccTxn};
use super::TpccError;

/// The five transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum TxnKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxnKind {
    /// In the order of `RunConfig::weights`.
    pub const ALL: [TxnKind; 5] = [
        TxnKind::NewOrder,
        TxnKind::Payment,
        TxnKind::OrderStatus,
        TxnKind::Delivery,
        TxnKind::StockLevel,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    /// snake_case name (JSON, CSV).
    pub const fn name(self) -> &'static str {
        match self {
            TxnKind::NewOrder => "new_order",
            TxnKind::Payment => "payment",
            TxnKind::OrderStatus => "order_status",
            TxnKind::Delivery => "delivery",
            TxnKind::StockLevel => "stock_level",
        }
    }
}

impl fmt::Display for TxnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TxnKind::NewOrder => "New-Order",
            TxnKind::Payment => "Payment",
            TxnKind::OrderStatus => "Order-Status",
            TxnKind::Delivery => "Delivery",
            TxnKind::StockLevel => "Stock-Level",
        })
    }
}

/// How a customer is selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CustomerSelector {
    ById(u32),
    ByLastName(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderLineInput {
    pub i_id: u32,
    pub supply_w_id: u32,
    pub quantity: u8,
}

/// One transaction's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnInput {
    NewOrder {
        w_id: u32,
        d_id: u8,
        c_id: u32,
        lines: Vec<OrderLineInput>,
    },
    Payment {
        w_id: u32,
        d_id: u8,
        c_w_id: u32,
        c_d_id: u8,
        customer: CustomerSelector,
        /// Cents.
        h_amount: i64,
    },
    OrderStatus {
        w_id: u32,
        d_id: u8,
        customer: CustomerSelector,
    },
    Delivery {
        w_id: u32,
        o_carrier_id: u8,
    },
    StockLevel {
        w_id: u32,
        d_id: u8,
        threshold: i32,
    },
}

impl TxnInput {
    pub fn kind(&self) -> TxnKind {
        match self {
            TxnInput::NewOrder { .. } => TxnKind::NewOrder,
            TxnInput::Payment { .. } => TxnKind::Payment,
            TxnInput::OrderStatus { .. } => TxnKind::OrderStatus,
            TxnInput::Delivery { .. } => TxnKind::Delivery,
            TxnInput::StockLevel { .. } => TxnKind::StockLevel,
        }
    }
}

/// What a terminal needs to draw inputs.
#[derive(Clone, Copy, Debug)]
pub struct TerminalContext {
    pub w_id: u32,
    /// Stock-Level's fixed district (clause 2.8.1.1).
    pub stock_level_d_id: u8,
    pub warehouses: u32,
    /// The run's C constants.
    pub c: NurandConstants,
}

fn other_warehouse<R: Rng64>(rng: &mut R, w_id: u32, warehouses: u32) -> u32 {
    let o = rng.between(1, u64::from(warehouses - 1)) as u32;
    if o >= w_id {
        o + 1
    } else {
        o
    }
}

fn district<R: Rng64>(rng: &mut R) -> u8 {
    rng.between(1, u64::from(DISTRICTS_PER_WAREHOUSE)) as u8
}

fn customer_selector<R: Rng64>(rng: &mut R, c: &NurandConstants) -> CustomerSelector {
    if rng.between(1, 100) <= 60 {
        CustomerSelector::ByLastName(super::random::last_name(
            nurand(rng, A_C_LAST, u64::from(c.c_last), 0, 999) as u32,
        ))
    } else {
        CustomerSelector::ById(nurand(rng, A_C_ID, u64::from(c.c_id), 1, u64::from(CUSTOMERS_PER_DISTRICT)) as u32)
    }
}

/// Draws the input of a `kind` transaction for a terminal.
pub fn generate<R: Rng64>(kind: TxnKind, rng: &mut R, ctx: &TerminalContext) -> TxnInput {
    let w_id = ctx.w_id;
    match kind {
        TxnKind::NewOrder => {
            let d_id = district(rng);
            let c_id = nurand(rng, A_C_ID, u64::from(ctx.c.c_id), 1, u64::from(CUSTOMERS_PER_DISTRICT)) as u32;
            let ol_cnt = rng.between(u64::from(ORDER_LINES_MIN), u64::from(ORDER_LINES_MAX)) as usize;
            let rollback = rng.between(1, 100) == 1;
            let lines = (0..ol_cnt)
                .map(|n| {
                    let i_id = if rollback && n == ol_cnt - 1 {
                        ITEMS + 1
                    } else {
                        nurand(rng, A_OL_I_ID, u64::from(ctx.c.ol_i_id), 1, u64::from(ITEMS)) as u32
                    };
                    let supply_w_id = if ctx.warehouses > 1 && rng.between(1, 100) == 1 {
                        other_warehouse(rng, w_id, ctx.warehouses)
                    } else {
                        w_id
                    };
                    OrderLineInput {
                        i_id,
                        supply_w_id,
                        quantity: rng.between(1, 10) as u8,
                    }
                })
                .collect();
            TxnInput::NewOrder {
                w_id,
                d_id,
                c_id,
                lines,
            }
        }
        TxnKind::Payment => {
            let d_id = district(rng);
            let home = rng.between(1, 100) <= 85 || ctx.warehouses == 1;
            let (c_w_id, c_d_id) = if home {
                (w_id, d_id)
            } else {
                (other_warehouse(rng, w_id, ctx.warehouses), district(rng))
            };
            let customer = customer_selector(rng, &ctx.c);
            TxnInput::Payment {
                w_id,
                d_id,
                c_w_id,
                c_d_id,
                customer,
                h_amount: rng.between(100, 500_000) as i64,
            }
        }
        TxnKind::OrderStatus => TxnInput::OrderStatus {
            w_id,
            d_id: district(rng),
            customer: customer_selector(rng, &ctx.c),
        },
        TxnKind::Delivery => TxnInput::Delivery {
            w_id,
            o_carrier_id: rng.between(1, 10) as u8,
        },
        TxnKind::StockLevel => TxnInput::StockLevel {
            w_id,
            d_id: ctx.stock_level_d_id,
            threshold: rng.between(10, 20) as i32,
        },
    }
}

/// How a transaction body ended (errors aside).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Commit what was done. `o_id` of New-Order, delivered orders of
    /// Delivery, low-stock count of Stock-Level; 0 otherwise.
    Commit(u64),
    /// New-Order's unused item: roll back (clause 2.4.2.3).
    Rollback,
}

fn missing(table: &'static str, key: impl fmt::Debug) -> TpccError {
    TpccError::MissingRow {
        table,
        key: format!("{key:?}"),
    }
}

/// Runs the body of `input` in `txn` (the caller commits or rolls back as
/// the [`Outcome`] says, and rolls back on error).
pub fn execute<T: TpccTxn>(txn: &mut T, input: &TxnInput, now_us: u64) -> Result<Outcome, TpccError> {
    match input {
        TxnInput::NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
        } => new_order(txn, *w_id, *d_id, *c_id, lines, now_us),
        TxnInput::Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer,
            h_amount,
        } => payment(txn, *w_id, *d_id, *c_w_id, *c_d_id, customer, *h_amount, now_us),
        TxnInput::OrderStatus { w_id, d_id, customer } => order_status(txn, *w_id, *d_id, customer),
        TxnInput::Delivery { w_id, o_carrier_id } => delivery(txn, *w_id, *o_carrier_id, now_us),
        TxnInput::StockLevel { w_id, d_id, threshold } => stock_level(txn, *w_id, *d_id, *threshold),
    }
}

/// Clause 2.4.2.
fn new_order<T: TpccTxn>(
    txn: &mut T,
    w_id: u32,
    d_id: u8,
    c_id: u32,
    lines: &[OrderLineInput],
    now_us: u64,
) -> Result<Outcome, TpccError> {
    let w_key = warehouse_key(w_id);
    let warehouse = Warehouse::decode(
        &txn.get(Index::Warehouse, &w_key)?
            .ok_or_else(|| missing("warehouse", w_id))?,
    )?;
    let d_key = district_key(w_id, d_id);
    let mut district = District::decode(
        &txn.get_for_update(Index::District, &d_key)?
            .ok_or_else(|| missing("district", (w_id, d_id)))?,
    )?;
    let o_id = district.d_next_o_id;
    district.d_next_o_id += 1;
    txn.update(Index::District, &d_key, &district.encode())?;
    let c_key = customer_key(w_id, d_id, c_id);
    let customer = Customer::decode(
        &txn.get(Index::Customer, &c_key)?
            .ok_or_else(|| missing("customer", (w_id, d_id, c_id)))?,
    )?;

    let all_local = lines.iter().all(|l| l.supply_w_id == w_id);
    let order = Order {
        o_id,
        o_d_id: d_id,
        o_w_id: w_id,
        o_c_id: c_id,
        o_entry_d: now_us,
        o_carrier_id: None,
        o_ol_cnt: lines.len() as u8,
        o_all_local: u8::from(all_local),
    };
    txn.insert(Index::Oorder, &order.key(), &order.encode())?;
    txn.insert(Index::OorderByCustomer, &order.customer_key(), &[])?;
    let no = NewOrder {
        no_o_id: o_id,
        no_d_id: d_id,
        no_w_id: w_id,
    };
    txn.insert(Index::NewOrder, &no.key(), &no.encode())?;

    // Lines in stock-lock order; ol_number stays the input position.
    let mut by_stock: Vec<usize> = (0..lines.len()).collect();
    by_stock.sort_by_key(|&n| (lines[n].supply_w_id, lines[n].i_id, n));
    let mut total_cents: i64 = 0;
    for n in by_stock {
        let line = &lines[n];
        let Some(item) = txn.get(Index::Item, &item_key(line.i_id))? else {
            // Clause 2.4.2.3: "Item number is not valid"; everything done
            // so far is rolled back by the caller.
            return Ok(Outcome::Rollback);
        };
        let item = Item::decode(&item)?;
        let s_key = stock_key(line.supply_w_id, line.i_id);
        let mut stock = Stock::decode(
            &txn.get_for_update(Index::Stock, &s_key)?
                .ok_or_else(|| missing("stock", (line.supply_w_id, line.i_id)))?,
        )?;
        let q = i32::from(line.quantity);
        stock.s_quantity = if stock.s_quantity >= q + 10 {
            stock.s_quantity - q
        } else {
            stock.s_quantity - q + 91
        };
        stock.s_ytd += u32::from(line.quantity);
        stock.s_order_cnt += 1;
        if line.supply_w_id != w_id {
            stock.s_remote_cnt += 1;
        }
        txn.update(Index::Stock, &s_key, &stock.encode())?;
        let ol_amount = i64::from(line.quantity) * item.i_price;
        total_cents += ol_amount;
        let ol = OrderLine {
            ol_o_id: o_id,
            ol_d_id: d_id,
            ol_w_id: w_id,
            ol_number: (n + 1) as u8,
            ol_i_id: line.i_id,
            ol_supply_w_id: line.supply_w_id,
            ol_delivery_d: None,
            ol_quantity: line.quantity,
            ol_amount,
            ol_dist_info: stock.s_dist[usize::from(d_id - 1)].clone(),
        };
        txn.insert(Index::OrderLine, &ol.key(), &ol.encode())?;
    }
    // The total the terminal would display (clause 2.4.2.2); not stored.
    let _total = i128::from(total_cents)
        * i128::from(10_000 - i64::from(customer.c_discount))
        * i128::from(10_000 + i64::from(warehouse.w_tax) + i64::from(district.d_tax));
    Ok(Outcome::Commit(u64::from(o_id)))
}

/// The customer a selector names (clause 2.5.2.2 / 2.6.2.2), share-locked
/// or exclusively locked.
fn select_customer<T: TpccTxn>(
    txn: &mut T,
    w_id: u32,
    d_id: u8,
    selector: &CustomerSelector,
    for_update: bool,
) -> Result<Customer, TpccError> {
    let c_id = match selector {
        CustomerSelector::ById(c_id) => *c_id,
        CustomerSelector::ByLastName(last) => {
            let entries = txn.prefix(
                Index::CustomerByName,
                &customer_name_prefix(w_id, d_id, last),
                ScanDirection::Forward,
                None,
                ScanLock::Shared,
            )?;
            if entries.is_empty() {
                return Err(missing("customer", (w_id, d_id, last)));
            }
            // Sorted by c_first (then c_id); position ⌈n/2⌉, 1-based.
            let pos = entries.len().div_ceil(2) - 1;
            customer_name_key_c_id(&entries[pos].0)?
        }
    };
    let key = customer_key(w_id, d_id, c_id);
    let row = if for_update {
        txn.get_for_update(Index::Customer, &key)?
    } else {
        txn.get(Index::Customer, &key)?
    };
    Ok(Customer::decode(
        &row.ok_or_else(|| missing("customer", (w_id, d_id, c_id)))?,
    )?)
}

/// Clause 2.5.2.
#[allow(clippy::too_many_arguments)]
fn payment<T: TpccTxn>(
    txn: &mut T,
    w_id: u32,
    d_id: u8,
    c_w_id: u32,
    c_d_id: u8,
    selector: &CustomerSelector,
    h_amount: i64,
    now_us: u64,
) -> Result<Outcome, TpccError> {
    let w_key = warehouse_key(w_id);
    let mut warehouse = Warehouse::decode(
        &txn.get_for_update(Index::Warehouse, &w_key)?
            .ok_or_else(|| missing("warehouse", w_id))?,
    )?;
    warehouse.w_ytd += h_amount;
    txn.update(Index::Warehouse, &w_key, &warehouse.encode())?;
    let d_key = district_key(w_id, d_id);
    let mut district = District::decode(
        &txn.get_for_update(Index::District, &d_key)?
            .ok_or_else(|| missing("district", (w_id, d_id)))?,
    )?;
    district.d_ytd += h_amount;
    txn.update(Index::District, &d_key, &district.encode())?;

    let mut customer = select_customer(txn, c_w_id, c_d_id, selector, true)?;
    customer.c_balance -= h_amount;
    customer.c_ytd_payment += h_amount;
    customer.c_payment_cnt += 1;
    if customer.c_credit == "BC" {
        // Clause 2.5.2.2: prepend the payment's ids and amount, keep 500.
        let mut data = format!(
            "{} {} {} {} {} {}.{:02} ",
            customer.c_id,
            customer.c_d_id,
            customer.c_w_id,
            d_id,
            w_id,
            h_amount / 100,
            h_amount % 100
        );
        data.push_str(&customer.c_data);
        data.truncate(C_DATA_LEN_MAX);
        customer.c_data = data;
    }
    txn.update(Index::Customer, &customer.key(), &customer.encode())?;

    // The customer row is locked exclusively: no other Payment can pick
    // the same next h_seq (schema.rs, HISTORY key).
    let last = txn.prefix(
        Index::History,
        &customer_key(customer.c_w_id, customer.c_d_id, customer.c_id),
        ScanDirection::Backward,
        Some(1),
        ScanLock::Shared,
    )?;
    let h_seq = match last.first() {
        Some((k, _)) => history_key_seq(k)? + 1,
        None => 1,
    };
    let mut h_data = warehouse.w_name.clone();
    h_data.push_str("    ");
    h_data.push_str(&district.d_name);
    let history = History {
        h_c_id: customer.c_id,
        h_c_d_id: customer.c_d_id,
        h_c_w_id: customer.c_w_id,
        h_d_id: d_id,
        h_w_id: w_id,
        h_date: now_us,
        h_amount,
        h_data,
    };
    txn.insert(Index::History, &history.key(h_seq), &history.encode())?;
    Ok(Outcome::Commit(0))
}

/// Clause 2.6.2.
fn order_status<T: TpccTxn>(
    txn: &mut T,
    w_id: u32,
    d_id: u8,
    selector: &CustomerSelector,
) -> Result<Outcome, TpccError> {
    let customer = select_customer(txn, w_id, d_id, selector, false)?;
    let last = txn.prefix(
        Index::OorderByCustomer,
        &customer_key(w_id, d_id, customer.c_id),
        ScanDirection::Backward,
        Some(1),
        ScanLock::Shared,
    )?;
    let Some((k, _)) = last.first() else {
        return Ok(Outcome::Commit(0));
    };
    let o_id = order_customer_key_o_id(k)?;
    let order = Order::decode(
        &txn.get(Index::Oorder, &order_key(w_id, d_id, o_id))?
            .ok_or_else(|| missing("oorder", (w_id, d_id, o_id)))?,
    )?;
    let lines = txn.prefix(
        Index::OrderLine,
        &order_key(w_id, d_id, o_id),
        ScanDirection::Forward,
        None,
        ScanLock::Shared,
    )?;
    for (_, v) in &lines {
        OrderLine::decode(v)?;
    }
    Ok(Outcome::Commit(u64::from(order.o_id)))
}

/// Clause 2.7.4: the deferred part, all ten districts in one transaction.
fn delivery<T: TpccTxn>(txn: &mut T, w_id: u32, o_carrier_id: u8, now_us: u64) -> Result<Outcome, TpccError> {
    let mut delivered = 0u64;
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        // Guard: no New-Order or Delivery of this district runs meanwhile.
        txn.get_for_update(Index::District, &district_key(w_id, d_id))?
            .ok_or_else(|| missing("district", (w_id, d_id)))?;
        let oldest = txn.prefix(
            Index::NewOrder,
            &district_prefix(w_id, d_id),
            ScanDirection::Forward,
            Some(1),
            ScanLock::Exclusive,
        )?;
        let Some((no_key, no_value)) = oldest.into_iter().next() else {
            // Clause 2.7.4.2: no undelivered order, the district is skipped.
            continue;
        };
        let o_id = NewOrder::decode(&no_value)?.no_o_id;
        txn.delete(Index::NewOrder, &no_key)?;
        let o_key = order_key(w_id, d_id, o_id);
        let mut order = Order::decode(
            &txn.get_for_update(Index::Oorder, &o_key)?
                .ok_or_else(|| missing("oorder", (w_id, d_id, o_id)))?,
        )?;
        order.o_carrier_id = Some(o_carrier_id);
        txn.update(Index::Oorder, &o_key, &order.encode())?;
        let lines = txn.prefix(
            Index::OrderLine,
            &o_key,
            ScanDirection::Forward,
            None,
            ScanLock::Exclusive,
        )?;
        let mut amount_cents = 0i64;
        for (k, v) in lines {
            let mut line = OrderLine::decode(&v)?;
            amount_cents += line.ol_amount;
            line.ol_delivery_d = Some(now_us);
            txn.update(Index::OrderLine, &k, &line.encode())?;
        }
        let c_key = customer_key(w_id, d_id, order.o_c_id);
        let mut customer = Customer::decode(
            &txn.get_for_update(Index::Customer, &c_key)?
                .ok_or_else(|| missing("customer", (w_id, d_id, order.o_c_id)))?,
        )?;
        customer.c_balance += amount_cents;
        customer.c_delivery_cnt += 1;
        txn.update(Index::Customer, &c_key, &customer.encode())?;
        delivered += 1;
    }
    Ok(Outcome::Commit(delivered))
}

/// Clause 2.8.2.
fn stock_level<T: TpccTxn>(txn: &mut T, w_id: u32, d_id: u8, threshold: i32) -> Result<Outcome, TpccError> {
    let district = District::decode(
        &txn.get(Index::District, &district_key(w_id, d_id))?
            .ok_or_else(|| missing("district", (w_id, d_id)))?,
    )?;
    let next = district.d_next_o_id;
    let lo = order_key(w_id, d_id, next.saturating_sub(20));
    let hi = order_key(w_id, d_id, next);
    let lines = txn.range(
        Index::OrderLine,
        std::ops::Bound::Included(&lo),
        std::ops::Bound::Excluded(&hi),
        ScanDirection::Forward,
        None,
        ScanLock::Shared,
    )?;
    let mut items: Vec<u32> = Vec::with_capacity(lines.len());
    for (_, v) in &lines {
        items.push(OrderLine::decode(v)?.ol_i_id);
    }
    items.sort_unstable();
    items.dedup();
    let mut low = 0u64;
    for i_id in items {
        let stock = Stock::decode(
            &txn.get(Index::Stock, &stock_key(w_id, i_id))?
                .ok_or_else(|| missing("stock", (w_id, i_id)))?,
        )?;
        if stock.s_quantity < threshold {
            low += 1;
        }
    }
    Ok(Outcome::Commit(low))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::random::Xoshiro256StarStar;

    fn ctx(warehouses: u32) -> TerminalContext {
        TerminalContext {
            w_id: 1,
            stock_level_d_id: 3,
            warehouses,
            c: NurandConstants::for_run(1, 100),
        }
    }

    #[test]
    fn new_order_inputs_follow_clause_2_4_1() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(2);
        let mut rollbacks = 0;
        let mut remote = 0;
        let mut lines_total = 0;
        for _ in 0..20_000 {
            let TxnInput::NewOrder { lines, .. } = generate(TxnKind::NewOrder, &mut rng, &ctx(3)) else {
                unreachable!("asked for a New-Order");
            };
            assert!((5..=15).contains(&lines.len()));
            lines_total += lines.len();
            remote += lines.iter().filter(|l| l.supply_w_id != 1).count();
            if lines.iter().any(|l| l.i_id > ITEMS) {
                assert_eq!(lines.last().map(|l| l.i_id), Some(ITEMS + 1));
                rollbacks += 1;
            }
        }
        assert!((140..270).contains(&rollbacks), "{rollbacks}");
        let remote_pct = 100.0 * remote as f64 / lines_total as f64;
        assert!((0.7..1.3).contains(&remote_pct), "{remote_pct}");
    }

    #[test]
    fn single_warehouse_payments_are_all_home() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(4);
        for _ in 0..1000 {
            let TxnInput::Payment {
                c_w_id, c_d_id, d_id, ..
            } = generate(TxnKind::Payment, &mut rng, &ctx(1))
            else {
                unreachable!("asked for a Payment");
            };
            assert_eq!((c_w_id, c_d_id), (1, d_id));
        }
    }
}
