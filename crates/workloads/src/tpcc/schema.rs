//! The TPC-C schema: nine tables (clause 1.3), their keys and row codecs.
//!
//! Every index is a unique ordered index of byte keys ([`super::codec`]):
//!
//! | index | key | value |
//! |---|---|---|
//! | `warehouse` | (w_id) | [`Warehouse`] |
//! | `district` | (d_w_id, d_id) | [`District`] |
//! | `customer` | (c_w_id, c_d_id, c_id) | [`Customer`] |
//! | `customer_by_name` | (c_w_id, c_d_id, c_last, c_first, c_id) | empty |
//! | `history` | (h_c_w_id, h_c_d_id, h_c_id, h_seq) | [`History`] |
//! | `new_order` | (no_w_id, no_d_id, no_o_id) | [`NewOrder`] |
//! | `oorder` | (o_w_id, o_d_id, o_id) | [`Order`] |
//! | `oorder_by_customer` | (o_w_id, o_d_id, o_c_id, o_id) | empty |
//! | `order_line` | (ol_w_id, ol_d_id, ol_o_id, ol_number) | [`OrderLine`] |
//! | `item` | (i_id) | [`Item`] |
//! | `stock` | (s_w_id, s_i_id) | [`Stock`] |
//! | `meta` | a name | load marker, C constants ([`super::load`]) |
//!
//! The two secondary indexes are the ones every TPC-C kit adds: customers by
//! last name (Payment and Order-Status, clauses 2.5.2.2 and 2.6.2.2, need
//! them sorted by c_first) and orders by customer (Order-Status reads a
//! customer's most recent order). A transaction maintains them together
//! with their table, inside the same transaction.
//!
//! HISTORY has no primary key in the specification (clause 1.3). Its
//! synthetic key appends `h_seq`, the customer's payment sequence number:
//! 1 for the row the loader writes, then one more than the customer's
//! highest `h_seq`, read by Payment while it holds the CUSTOMER row
//! exclusively. Payments of one customer are thereby serialised, so the key
//! is unique across concurrent terminals and across restarts without a
//! global counter. `h_seq` is stored in the key only, not in the row.
//!
//! Units: money (w_ytd, d_ytd, c_credit_lim, c_balance, c_ytd_payment,
//! h_amount, ol_amount, i_price) is an `i64` of cents, so consistency
//! conditions 8–12 (clause 3.3.2) are exact sums; tax and discount rates
//! (numeric(4,4)) are a `u16` of ten-thousandths; dates are `u64`
//! microseconds since the Unix epoch, UTC. Column names are the spec's,
//! lower case; the struct fields carry them unchanged (unit suffixes would
//! break the spec names the CSV export and the check messages use).
//!
//! Constants (cardinalities, string widths) are clause 1.3 and 4.3.3.1.

use super::codec::{KeyReader, KeyWriter, RowError, RowReader, RowWriter};

/// Districts per warehouse (clause 1.2).
pub const DISTRICTS_PER_WAREHOUSE: u8 = 10;
/// Customers per district (clause 4.3.3.1).
pub const CUSTOMERS_PER_DISTRICT: u32 = 3_000;
/// Rows of ITEM, and of STOCK per warehouse (clause 4.3.3.1).
pub const ITEMS: u32 = 100_000;
/// Orders per district at load (clause 4.3.3.1).
pub const INITIAL_ORDERS_PER_DISTRICT: u32 = 3_000;
/// The first order id of the 900 undelivered orders at load.
pub const FIRST_UNDELIVERED_ORDER: u32 = 2_101;
/// NEW_ORDER rows per district at load.
pub const INITIAL_NEW_ORDERS_PER_DISTRICT: u32 = 900;
/// Order lines per order (clause 2.4.1.3 and 4.3.3.1).
pub const ORDER_LINES_MIN: u32 = 5;
pub const ORDER_LINES_MAX: u32 = 15;

/// Every index the workload uses, in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Index {
    Warehouse,
    District,
    Customer,
    CustomerByName,
    History,
    NewOrder,
    Oorder,
    OorderByCustomer,
    OrderLine,
    Item,
    Stock,
    Meta,
}

impl Index {
    pub const ALL: [Index; 12] = [
        Index::Warehouse,
        Index::District,
        Index::Customer,
        Index::CustomerByName,
        Index::History,
        Index::NewOrder,
        Index::Oorder,
        Index::OorderByCustomer,
        Index::OrderLine,
        Index::Item,
        Index::Stock,
        Index::Meta,
    ];

    /// Lower-case name (the CSV file name of the nine tables).
    pub const fn name(self) -> &'static str {
        match self {
            Index::Warehouse => "warehouse",
            Index::District => "district",
            Index::Customer => "customer",
            Index::CustomerByName => "customer_by_name",
            Index::History => "history",
            Index::NewOrder => "new_order",
            Index::Oorder => "oorder",
            Index::OorderByCustomer => "oorder_by_customer",
            Index::OrderLine => "order_line",
            Index::Item => "item",
            Index::Stock => "stock",
            Index::Meta => "meta",
        }
    }

    /// The name of the index in the store (prefixed so that a TPC-C
    /// database can share a store with other indexes).
    pub const fn store_name(self) -> &'static str {
        match self {
            Index::Warehouse => "tpcc.warehouse",
            Index::District => "tpcc.district",
            Index::Customer => "tpcc.customer",
            Index::CustomerByName => "tpcc.customer_by_name",
            Index::History => "tpcc.history",
            Index::NewOrder => "tpcc.new_order",
            Index::Oorder => "tpcc.oorder",
            Index::OorderByCustomer => "tpcc.oorder_by_customer",
            Index::OrderLine => "tpcc.order_line",
            Index::Item => "tpcc.item",
            Index::Stock => "tpcc.stock",
            Index::Meta => "tpcc.meta",
        }
    }
}

/// The nine tables of the specification, in the CSV export's order.
pub const TABLES: [Index; 9] = [
    Index::Warehouse,
    Index::District,
    Index::Customer,
    Index::History,
    Index::NewOrder,
    Index::Oorder,
    Index::OrderLine,
    Index::Item,
    Index::Stock,
];

// ---- keys -------------------------------------------------------------

pub fn warehouse_key(w_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).finish()
}
pub fn district_key(w_id: u32, d_id: u8) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).finish()
}
/// Prefix of everything of one district in the district-scoped indexes.
pub fn district_prefix(w_id: u32, d_id: u8) -> Vec<u8> {
    district_key(w_id, d_id)
}
pub fn customer_key(w_id: u32, d_id: u8, c_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).u32(c_id).finish()
}
pub fn customer_name_key(w_id: u32, d_id: u8, c_last: &str, c_first: &str, c_id: u32) -> Vec<u8> {
    KeyWriter::new()
        .u32(w_id)
        .u8(d_id)
        .str(c_last)
        .str(c_first)
        .u32(c_id)
        .finish()
}
/// Prefix of the customers of one district with one last name.
pub fn customer_name_prefix(w_id: u32, d_id: u8, c_last: &str) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).str(c_last).finish()
}
/// `c_id` of a `customer_by_name` key.
pub fn customer_name_key_c_id(key: &[u8]) -> Result<u32, RowError> {
    let mut r = KeyReader::new("customer_by_name", key);
    let _w = r.u32()?;
    let _d = r.u8()?;
    let _last = r.str()?;
    let _first = r.str()?;
    let c_id = r.u32()?;
    r.finish()?;
    Ok(c_id)
}
pub fn history_key(c_w_id: u32, c_d_id: u8, c_id: u32, h_seq: u32) -> Vec<u8> {
    KeyWriter::new().u32(c_w_id).u8(c_d_id).u32(c_id).u32(h_seq).finish()
}
/// `h_seq` of a history key.
pub fn history_key_seq(key: &[u8]) -> Result<u32, RowError> {
    let mut r = KeyReader::new("history", key);
    let _w = r.u32()?;
    let _d = r.u8()?;
    let _c = r.u32()?;
    let seq = r.u32()?;
    r.finish()?;
    Ok(seq)
}
pub fn new_order_key(w_id: u32, d_id: u8, o_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).u32(o_id).finish()
}
pub fn order_key(w_id: u32, d_id: u8, o_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).u32(o_id).finish()
}
pub fn order_customer_key(w_id: u32, d_id: u8, c_id: u32, o_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).u32(c_id).u32(o_id).finish()
}
/// `o_id` of an `oorder_by_customer` key.
pub fn order_customer_key_o_id(key: &[u8]) -> Result<u32, RowError> {
    let mut r = KeyReader::new("oorder_by_customer", key);
    let _w = r.u32()?;
    let _d = r.u8()?;
    let _c = r.u32()?;
    let o_id = r.u32()?;
    r.finish()?;
    Ok(o_id)
}
pub fn order_line_key(w_id: u32, d_id: u8, o_id: u32, ol_number: u8) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u8(d_id).u32(o_id).u8(ol_number).finish()
}
pub fn item_key(i_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(i_id).finish()
}
pub fn stock_key(w_id: u32, i_id: u32) -> Vec<u8> {
    KeyWriter::new().u32(w_id).u32(i_id).finish()
}

// ---- rows ---------------------------------------------------------------

/// An integer column's range check.
fn check_id(r: &RowReader<'_>, column: &str, v: u32, lo: u32, hi: u32) -> Result<(), RowError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(r.err(format!("{column} = {v} is outside {lo}..={hi}")))
    }
}

/// A street address: the four columns of clause 1.3 `*_street_1` …
/// `*_zip` that WAREHOUSE, DISTRICT and CUSTOMER share.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Address {
    pub street_1: String,
    pub street_2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
}

impl Address {
    fn write(&self, w: &mut RowWriter) {
        w.str(&self.street_1)
            .str(&self.street_2)
            .str(&self.city)
            .str(&self.state)
            .str(&self.zip);
    }
    fn read(r: &mut RowReader<'_>, p: &str) -> Result<Self, RowError> {
        Ok(Self {
            street_1: r.str(&format!("{p}_street_1"), 20)?,
            street_2: r.str(&format!("{p}_street_2"), 20)?,
            city: r.str(&format!("{p}_city"), 20)?,
            state: r.str(&format!("{p}_state"), 2)?,
            zip: r.str(&format!("{p}_zip"), 9)?,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warehouse {
    pub w_id: u32,
    pub w_name: String,
    pub w_address: Address,
    /// Ten-thousandths.
    pub w_tax: u16,
    /// Cents.
    pub w_ytd: i64,
}

impl Warehouse {
    pub fn key(&self) -> Vec<u8> {
        warehouse_key(self.w_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(96);
        w.u32(self.w_id).str(&self.w_name);
        self.w_address.write(&mut w);
        w.u16(self.w_tax).i64(self.w_ytd);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("warehouse", b);
        let row = Self {
            w_id: r.u32()?,
            w_name: r.str("w_name", 10)?,
            w_address: Address::read(&mut r, "w")?,
            w_tax: r.u16()?,
            w_ytd: r.i64()?,
        };
        check_id(&r, "w_id", row.w_id, 1, u32::MAX)?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct District {
    pub d_id: u8,
    pub d_w_id: u32,
    pub d_name: String,
    pub d_address: Address,
    /// Ten-thousandths.
    pub d_tax: u16,
    /// Cents.
    pub d_ytd: i64,
    pub d_next_o_id: u32,
}

impl District {
    pub fn key(&self) -> Vec<u8> {
        district_key(self.d_w_id, self.d_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(100);
        w.u8(self.d_id).u32(self.d_w_id).str(&self.d_name);
        self.d_address.write(&mut w);
        w.u16(self.d_tax).i64(self.d_ytd).u32(self.d_next_o_id);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("district", b);
        let row = Self {
            d_id: r.u8()?,
            d_w_id: r.u32()?,
            d_name: r.str("d_name", 10)?,
            d_address: Address::read(&mut r, "d")?,
            d_tax: r.u16()?,
            d_ytd: r.i64()?,
            d_next_o_id: r.u32()?,
        };
        check_id(&r, "d_id", u32::from(row.d_id), 1, u32::from(DISTRICTS_PER_WAREHOUSE))?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Customer {
    pub c_id: u32,
    pub c_d_id: u8,
    pub c_w_id: u32,
    pub c_first: String,
    pub c_middle: String,
    pub c_last: String,
    pub c_address: Address,
    pub c_phone: String,
    /// Microseconds since the epoch.
    pub c_since: u64,
    /// "GC" (good) or "BC" (bad credit).
    pub c_credit: String,
    /// Cents.
    pub c_credit_lim: i64,
    /// Ten-thousandths.
    pub c_discount: u16,
    /// Cents.
    pub c_balance: i64,
    /// Cents.
    pub c_ytd_payment: i64,
    pub c_payment_cnt: u32,
    pub c_delivery_cnt: u32,
    pub c_data: String,
}

/// Widest `c_data` (clause 1.3).
pub const C_DATA_LEN_MAX: usize = 500;

impl Customer {
    pub fn key(&self) -> Vec<u8> {
        customer_key(self.c_w_id, self.c_d_id, self.c_id)
    }
    pub fn name_key(&self) -> Vec<u8> {
        customer_name_key(self.c_w_id, self.c_d_id, &self.c_last, &self.c_first, self.c_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(200 + self.c_data.len());
        w.u32(self.c_id)
            .u8(self.c_d_id)
            .u32(self.c_w_id)
            .str(&self.c_first)
            .str(&self.c_middle)
            .str(&self.c_last);
        self.c_address.write(&mut w);
        w.str(&self.c_phone)
            .u64(self.c_since)
            .str(&self.c_credit)
            .i64(self.c_credit_lim)
            .u16(self.c_discount)
            .i64(self.c_balance)
            .i64(self.c_ytd_payment)
            .u32(self.c_payment_cnt)
            .u32(self.c_delivery_cnt)
            .long_str(&self.c_data);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("customer", b);
        let row = Self {
            c_id: r.u32()?,
            c_d_id: r.u8()?,
            c_w_id: r.u32()?,
            c_first: r.str("c_first", 16)?,
            c_middle: r.str("c_middle", 2)?,
            c_last: r.str("c_last", 16)?,
            c_address: Address::read(&mut r, "c")?,
            c_phone: r.str("c_phone", 16)?,
            c_since: r.u64()?,
            c_credit: r.str("c_credit", 2)?,
            c_credit_lim: r.i64()?,
            c_discount: r.u16()?,
            c_balance: r.i64()?,
            c_ytd_payment: r.i64()?,
            c_payment_cnt: r.u32()?,
            c_delivery_cnt: r.u32()?,
            c_data: r.long_str("c_data", C_DATA_LEN_MAX)?,
        };
        check_id(
            &r,
            "c_d_id",
            u32::from(row.c_d_id),
            1,
            u32::from(DISTRICTS_PER_WAREHOUSE),
        )?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    pub h_c_id: u32,
    pub h_c_d_id: u8,
    pub h_c_w_id: u32,
    pub h_d_id: u8,
    pub h_w_id: u32,
    /// Microseconds since the epoch.
    pub h_date: u64,
    /// Cents.
    pub h_amount: i64,
    pub h_data: String,
}

impl History {
    pub fn key(&self, h_seq: u32) -> Vec<u8> {
        history_key(self.h_c_w_id, self.h_c_d_id, self.h_c_id, h_seq)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(64);
        w.u32(self.h_c_id)
            .u8(self.h_c_d_id)
            .u32(self.h_c_w_id)
            .u8(self.h_d_id)
            .u32(self.h_w_id)
            .u64(self.h_date)
            .i64(self.h_amount)
            .str(&self.h_data);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("history", b);
        let row = Self {
            h_c_id: r.u32()?,
            h_c_d_id: r.u8()?,
            h_c_w_id: r.u32()?,
            h_d_id: r.u8()?,
            h_w_id: r.u32()?,
            h_date: r.u64()?,
            h_amount: r.i64()?,
            h_data: r.str("h_data", 24)?,
        };
        check_id(
            &r,
            "h_d_id",
            u32::from(row.h_d_id),
            1,
            u32::from(DISTRICTS_PER_WAREHOUSE),
        )?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrder {
    pub no_o_id: u32,
    pub no_d_id: u8,
    pub no_w_id: u32,
}

impl NewOrder {
    pub fn key(&self) -> Vec<u8> {
        new_order_key(self.no_w_id, self.no_d_id, self.no_o_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(9);
        w.u32(self.no_o_id).u8(self.no_d_id).u32(self.no_w_id);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("new_order", b);
        let row = Self {
            no_o_id: r.u32()?,
            no_d_id: r.u8()?,
            no_w_id: r.u32()?,
        };
        r.finish()?;
        Ok(row)
    }
}

/// A row of ORDER (table OORDER: ORDER is an SQL keyword).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    pub o_id: u32,
    pub o_d_id: u8,
    pub o_w_id: u32,
    pub o_c_id: u32,
    /// Microseconds since the epoch.
    pub o_entry_d: u64,
    /// NULL while the order is undelivered.
    pub o_carrier_id: Option<u8>,
    pub o_ol_cnt: u8,
    pub o_all_local: u8,
}

impl Order {
    pub fn key(&self) -> Vec<u8> {
        order_key(self.o_w_id, self.o_d_id, self.o_id)
    }
    pub fn customer_key(&self) -> Vec<u8> {
        order_customer_key(self.o_w_id, self.o_d_id, self.o_c_id, self.o_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(32);
        w.u32(self.o_id)
            .u8(self.o_d_id)
            .u32(self.o_w_id)
            .u32(self.o_c_id)
            .u64(self.o_entry_d)
            .opt_u8(self.o_carrier_id)
            .u8(self.o_ol_cnt)
            .u8(self.o_all_local);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("oorder", b);
        let row = Self {
            o_id: r.u32()?,
            o_d_id: r.u8()?,
            o_w_id: r.u32()?,
            o_c_id: r.u32()?,
            o_entry_d: r.u64()?,
            o_carrier_id: r.opt_u8("o_carrier_id")?,
            o_ol_cnt: r.u8()?,
            o_all_local: r.u8()?,
        };
        check_id(
            &r,
            "o_ol_cnt",
            u32::from(row.o_ol_cnt),
            ORDER_LINES_MIN,
            ORDER_LINES_MAX,
        )?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderLine {
    pub ol_o_id: u32,
    pub ol_d_id: u8,
    pub ol_w_id: u32,
    pub ol_number: u8,
    pub ol_i_id: u32,
    pub ol_supply_w_id: u32,
    /// Microseconds since the epoch; NULL while undelivered.
    pub ol_delivery_d: Option<u64>,
    pub ol_quantity: u8,
    /// Cents.
    pub ol_amount: i64,
    pub ol_dist_info: String,
}

impl OrderLine {
    pub fn key(&self) -> Vec<u8> {
        order_line_key(self.ol_w_id, self.ol_d_id, self.ol_o_id, self.ol_number)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(64);
        w.u32(self.ol_o_id)
            .u8(self.ol_d_id)
            .u32(self.ol_w_id)
            .u8(self.ol_number)
            .u32(self.ol_i_id)
            .u32(self.ol_supply_w_id)
            .opt_u64(self.ol_delivery_d)
            .u8(self.ol_quantity)
            .i64(self.ol_amount)
            .str(&self.ol_dist_info);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("order_line", b);
        let row = Self {
            ol_o_id: r.u32()?,
            ol_d_id: r.u8()?,
            ol_w_id: r.u32()?,
            ol_number: r.u8()?,
            ol_i_id: r.u32()?,
            ol_supply_w_id: r.u32()?,
            ol_delivery_d: r.opt_u64("ol_delivery_d")?,
            ol_quantity: r.u8()?,
            ol_amount: r.i64()?,
            ol_dist_info: r.str("ol_dist_info", 24)?,
        };
        check_id(&r, "ol_number", u32::from(row.ol_number), 1, ORDER_LINES_MAX)?;
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub i_id: u32,
    pub i_im_id: u32,
    pub i_name: String,
    /// Cents.
    pub i_price: i64,
    pub i_data: String,
}

impl Item {
    pub fn key(&self) -> Vec<u8> {
        item_key(self.i_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(96);
        w.u32(self.i_id)
            .u32(self.i_im_id)
            .str(&self.i_name)
            .i64(self.i_price)
            .str(&self.i_data);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("item", b);
        let row = Self {
            i_id: r.u32()?,
            i_im_id: r.u32()?,
            i_name: r.str("i_name", 24)?,
            i_price: r.i64()?,
            i_data: r.str("i_data", 50)?,
        };
        r.finish()?;
        Ok(row)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stock {
    pub s_i_id: u32,
    pub s_w_id: u32,
    pub s_quantity: i32,
    /// `s_dist_01` … `s_dist_10`.
    pub s_dist: [String; 10],
    pub s_ytd: u32,
    pub s_order_cnt: u32,
    pub s_remote_cnt: u32,
    pub s_data: String,
}

impl Stock {
    pub fn key(&self) -> Vec<u8> {
        stock_key(self.s_w_id, self.s_i_id)
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(320);
        w.u32(self.s_i_id).u32(self.s_w_id).u32(self.s_quantity as u32);
        for d in &self.s_dist {
            w.str(d);
        }
        w.u32(self.s_ytd)
            .u32(self.s_order_cnt)
            .u32(self.s_remote_cnt)
            .str(&self.s_data);
        w.finish()
    }
    pub fn decode(b: &[u8]) -> Result<Self, RowError> {
        let mut r = RowReader::new("stock", b);
        let s_i_id = r.u32()?;
        let s_w_id = r.u32()?;
        let s_quantity = r.u32()? as i32;
        let mut s_dist: [String; 10] = Default::default();
        for (i, d) in s_dist.iter_mut().enumerate() {
            *d = r.str(&format!("s_dist_{:02}", i + 1), 24)?;
        }
        let row = Self {
            s_i_id,
            s_w_id,
            s_quantity,
            s_dist,
            s_ytd: r.u32()?,
            s_order_cnt: r.u32()?,
            s_remote_cnt: r.u32()?,
            s_data: r.str("s_data", 50)?,
        };
        check_id(&r, "s_i_id", row.s_i_id, 1, ITEMS)?;
        r.finish()?;
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(max: usize) -> impl Strategy<Value = String> {
        proptest::string::string_regex(&format!("[A-Za-z0-9 .]{{0,{max}}}")).expect("a valid regex")
    }

    fn address() -> impl Strategy<Value = Address> {
        (s(20), s(20), s(20), s(2), s(9)).prop_map(|(street_1, street_2, city, state, zip)| Address {
            street_1,
            street_2,
            city,
            state,
            zip,
        })
    }

    fn customer() -> impl Strategy<Value = Customer> {
        (
            (
                any::<u32>(),
                1u8..=10,
                any::<u32>(),
                s(16),
                s(2),
                s(16),
                address(),
                s(16),
            ),
            (
                any::<u64>(),
                s(2),
                any::<i64>(),
                any::<u16>(),
                any::<i64>(),
                any::<i64>(),
            ),
            (any::<u32>(), any::<u32>(), s(500)),
        )
            .prop_map(
                |(
                    (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_address, c_phone),
                    (c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment),
                    (c_payment_cnt, c_delivery_cnt, c_data),
                )| Customer {
                    c_id,
                    c_d_id,
                    c_w_id,
                    c_first,
                    c_middle,
                    c_last,
                    c_address,
                    c_phone,
                    c_since,
                    c_credit,
                    c_credit_lim,
                    c_discount,
                    c_balance,
                    c_ytd_payment,
                    c_payment_cnt,
                    c_delivery_cnt,
                    c_data,
                },
            )
    }

    proptest! {
        #[test]
        fn customer_round_trips(c in customer()) {
            prop_assert_eq!(Customer::decode(&c.encode()), Ok(c));
        }

        #[test]
        fn order_and_lines_round_trip(
            o_id in any::<u32>(), d in 1u8..=10, w in any::<u32>(), c in any::<u32>(), t in any::<u64>(),
            carrier in proptest::option::of(1u8..=10), cnt in 5u8..=15, local in 0u8..=1,
            n in 1u8..=15, i in any::<u32>(), delivery in proptest::option::of(any::<u64>()),
            q in any::<u8>(), amount in any::<i64>(), info in s(24),
        ) {
            let o = Order { o_id, o_d_id: d, o_w_id: w, o_c_id: c, o_entry_d: t, o_carrier_id: carrier, o_ol_cnt: cnt, o_all_local: local };
            prop_assert_eq!(Order::decode(&o.encode()), Ok(o));
            let l = OrderLine { ol_o_id: o_id, ol_d_id: d, ol_w_id: w, ol_number: n, ol_i_id: i, ol_supply_w_id: w,
                ol_delivery_d: delivery, ol_quantity: q, ol_amount: amount, ol_dist_info: info };
            prop_assert_eq!(OrderLine::decode(&l.encode()), Ok(l));
        }

        #[test]
        fn stock_warehouse_district_history_item_round_trip(
            i in 1u32..=ITEMS, w in any::<u32>(), q in any::<i32>(), dist in proptest::array::uniform10(s(24)),
            ytd in any::<i64>(), tax in any::<u16>(), name in s(10), addr in address(), data in s(50),
            d in 1u8..=10, next in any::<u32>(), t in any::<u64>(),
        ) {
            let st = Stock { s_i_id: i, s_w_id: w, s_quantity: q, s_dist: dist, s_ytd: 7, s_order_cnt: 8, s_remote_cnt: 9, s_data: data.clone() };
            prop_assert_eq!(Stock::decode(&st.encode()), Ok(st));
            let wh = Warehouse { w_id: w.max(1), w_name: name.clone(), w_address: addr.clone(), w_tax: tax, w_ytd: ytd };
            prop_assert_eq!(Warehouse::decode(&wh.encode()), Ok(wh));
            let di = District { d_id: d, d_w_id: w, d_name: name.clone(), d_address: addr, d_tax: tax, d_ytd: ytd, d_next_o_id: next };
            prop_assert_eq!(District::decode(&di.encode()), Ok(di));
            let h = History { h_c_id: i, h_c_d_id: d, h_c_w_id: w, h_d_id: d, h_w_id: w, h_date: t, h_amount: ytd, h_data: name.clone() };
            prop_assert_eq!(History::decode(&h.encode()), Ok(h));
            let it = Item { i_id: i, i_im_id: next, i_name: name, i_price: ytd, i_data: data };
            prop_assert_eq!(Item::decode(&it.encode()), Ok(it));
            let no = NewOrder { no_o_id: next, no_d_id: d, no_w_id: w };
            prop_assert_eq!(NewOrder::decode(&no.encode()), Ok(no));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..700)) {
            let _ = Customer::decode(&bytes);
            let _ = Stock::decode(&bytes);
            let _ = OrderLine::decode(&bytes);
            let _ = Order::decode(&bytes);
            let _ = History::decode(&bytes);
            let _ = customer_name_key_c_id(&bytes);
        }

        #[test]
        fn truncated_rows_are_errors(c in customer(), cut in 1usize..40) {
            let b = c.encode();
            let cut = cut.min(b.len());
            let e = Customer::decode(&b[..b.len() - cut]);
            prop_assert!(e.is_err());
            prop_assert_eq!(e.err().map(|e| e.table), Some("customer"));
        }
    }

    #[test]
    fn customer_name_keys_sort_by_last_then_first_then_id() {
        let a = customer_name_key(1, 1, "BARBAR", "Zed", 5);
        let b = customer_name_key(1, 1, "BARBARBAR", "Abe", 1);
        let c = customer_name_key(1, 1, "BARBARBAR", "Abe", 2);
        assert!(a < b && b < c);
        assert_eq!(customer_name_key_c_id(&c), Ok(2));
    }
}
