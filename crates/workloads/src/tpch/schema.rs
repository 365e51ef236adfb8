//! The eight TPC-H tables (TPC-H specification, revision 3.0.1, clause 1.4)
//! as typed rows, their engine keys and row encodings, and dates.
//!
//! Types (clause 1.3.1): identifiers are integers; money (`*_ACCTBAL`,
//! `*_PRICE`, `*_SUPPLYCOST`) is decimal with two places, held here as
//! integer cents; `L_DISCOUNT` and `L_TAX` are decimals in [0, 0.10] with
//! two places, held as hundredths; `L_QUANTITY` is a decimal that the
//! population only ever fills with whole numbers 1..50 (clause 4.2.3), held
//! as an integer; dates are days since 1970-01-01 ([`Date`]). Fixed-text
//! columns (`*_RETURNFLAG`, `*_LINESTATUS`, `O_ORDERSTATUS`) are one ASCII
//! byte. All strings are ASCII (the generator only produces ASCII).
//!
//! Each table is one unique engine index named [`Table::store_name`],
//! keyed by its primary key (clause 1.4.2.2) with integers big-endian, so a
//! key-ordered scan is a primary-key-ordered scan; LINEITEM is keyed by
//! `(L_ORDERKEY, L_LINENUMBER)`, so one order's lines are one short range.
//! Values are the remaining columns in [`RowWriter`] encoding. A row that
//! does not decode is a [`RowError`] naming the table, never a panic.
//!
//! Invariant: `R::decode(&r.key(), &r.value()) == r` for every row type
//! (tested below), and a key sorts as its primary-key tuple.

use crate::tpcc::codec::{KeyReader, KeyWriter, RowError, RowReader, RowWriter};

/// Days since 1970-01-01 (proleptic Gregorian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Date(pub i32);

impl Date {
    /// The date `y-m-d`; `None` if it does not exist.
    pub fn from_ymd(y: i32, m: u32, d: u32) -> Option<Date> {
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
            return None;
        }
        // Days from civil (the well-known era algorithm: years start in
        // March so the leap day is the last day of the year).
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = (m as i32 + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d as i32 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Some(Date(era * 146_097 + doe - 719_468))
    }

    /// `from_ymd` for dates known to exist (constants of the specification).
    pub const fn ymd_const(y: i32, m: u32, d: u32) -> Date {
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m as i32 + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d as i32 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Date(era * 146_097 + doe - 719_468)
    }

    /// (year, month, day).
    pub fn ymd(self) -> (i32, u32, u32) {
        let z = self.0 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i32::from(m <= 2);
        (y, m, d)
    }

    pub fn year(self) -> i32 {
        self.ymd().0
    }

    pub fn add_days(self, days: i32) -> Date {
        Date(self.0 + days)
    }

    /// The same day `months` later (clamped to the month's last day; the
    /// queries only add months to the first of a month).
    pub fn add_months(self, months: i32) -> Date {
        let (y, m, d) = self.ymd();
        let total = y * 12 + (m as i32 - 1) + months;
        let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let nd = d.min(days_in_month(ny, nm));
        Date::ymd_const(ny, nm, nd)
    }

    pub fn add_years(self, years: i32) -> Date {
        self.add_months(12 * years)
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Option<Date> {
        let mut parts = text.split('-');
        let y = parts.next()?.parse().ok()?;
        let m = parts.next()?.parse().ok()?;
        let d = parts.next()?.parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Date::from_ymd(y, m, d)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// The eight tables, plus the workload's own metadata index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    Lineitem,
    /// Load marker and refresh-set counter (not a TPC-H table).
    Meta,
}

impl Table {
    /// The eight TPC-H tables, in load order.
    pub const DATA: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Supplier,
        Table::Customer,
        Table::Part,
        Table::PartSupp,
        Table::Orders,
        Table::Lineitem,
    ];

    /// Lower-case table name (also the CSV file's stem).
    pub const fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Supplier => "supplier",
            Table::Customer => "customer",
            Table::Part => "part",
            Table::PartSupp => "partsupp",
            Table::Orders => "orders",
            Table::Lineitem => "lineitem",
            Table::Meta => "meta",
        }
    }

    /// The engine index holding the table.
    pub const fn store_name(self) -> &'static str {
        match self {
            Table::Region => "tpch.region",
            Table::Nation => "tpch.nation",
            Table::Supplier => "tpch.supplier",
            Table::Customer => "tpch.customer",
            Table::Part => "tpch.part",
            Table::PartSupp => "tpch.partsupp",
            Table::Orders => "tpch.orders",
            Table::Lineitem => "tpch.lineitem",
            Table::Meta => "tpch.meta",
        }
    }

    /// Base cardinality at scale factor 1 (clause 4.2.5.1); LINEITEM's is
    /// the expected value (1..7 lines per order, mean 4).
    pub const fn rows_at_sf1(self) -> u64 {
        match self {
            Table::Region => 5,
            Table::Nation => 25,
            Table::Supplier => 10_000,
            Table::Customer => 150_000,
            Table::Part => 200_000,
            Table::PartSupp => 800_000,
            Table::Orders => 1_500_000,
            Table::Lineitem => 6_000_000,
            Table::Meta => 0,
        }
    }
}

/// A row of one table: its key, its value, and back.
pub trait Row: Sized {
    const TABLE: Table;
    fn key(&self) -> Vec<u8>;
    fn value(&self) -> Vec<u8>;
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError>;
    /// The row as the fields of one CSV line, in column order.
    fn csv_fields(&self) -> Vec<String>;
    /// Column names, in the order of [`Row::csv_fields`].
    const COLUMNS: &'static [&'static str];
}

/// Formats cents as a decimal with two places (`-12.05`).
pub fn cents_text(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

fn key_u32(v: i64, table: Table, column: &str) -> u32 {
    // Keys are generated in range (at most 6e9 / 4 even at SF 1000 for
    // orders); a row with a key outside u32 is a generator bug.
    assert!(
        (0..=i64::from(u32::MAX)).contains(&v),
        "{}.{column} = {v} does not fit a key",
        table.name()
    );
    v as u32
}

fn date_w(w: &mut RowWriter, d: Date) {
    w.u32(d.0 as u32);
}

fn date_r(r: &mut RowReader<'_>) -> Result<Date, RowError> {
    Ok(Date(r.u32()? as i32))
}

/// Comment columns are at most 199 bytes (`PS_COMMENT`, clause 4.2.3).
const COMMENT_MAX: usize = 199;
/// Every other string column is at most 117 bytes.
const STR_MAX: usize = 117;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub regionkey: i64,
    pub name: String,
    pub comment: String,
}

impl Row for Region {
    const TABLE: Table = Table::Region;
    const COLUMNS: &'static [&'static str] = &["r_regionkey", "r_name", "r_comment"];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.regionkey, Self::TABLE, "r_regionkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(160)
            .str(&self.name)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("region", key);
        let regionkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("region", value);
        let row = Region {
            regionkey,
            name: r.str("r_name", STR_MAX)?,
            comment: r.str("r_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![self.regionkey.to_string(), self.name.clone(), self.comment.clone()]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nation {
    pub nationkey: i64,
    pub name: String,
    pub regionkey: i64,
    pub comment: String,
}

impl Row for Nation {
    const TABLE: Table = Table::Nation;
    const COLUMNS: &'static [&'static str] = &["n_nationkey", "n_name", "n_regionkey", "n_comment"];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.nationkey, Self::TABLE, "n_nationkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(160)
            .str(&self.name)
            .i64(self.regionkey)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("nation", key);
        let nationkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("nation", value);
        let row = Nation {
            nationkey,
            name: r.str("n_name", STR_MAX)?,
            regionkey: r.i64()?,
            comment: r.str("n_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.nationkey.to_string(),
            self.name.clone(),
            self.regionkey.to_string(),
            self.comment.clone(),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Supplier {
    pub suppkey: i64,
    pub name: String,
    pub address: String,
    pub nationkey: i64,
    pub phone: String,
    /// Cents.
    pub acctbal: i64,
    pub comment: String,
}

impl Row for Supplier {
    const TABLE: Table = Table::Supplier;
    const COLUMNS: &'static [&'static str] = &[
        "s_suppkey",
        "s_name",
        "s_address",
        "s_nationkey",
        "s_phone",
        "s_acctbal",
        "s_comment",
    ];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.suppkey, Self::TABLE, "s_suppkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(200)
            .str(&self.name)
            .str(&self.address)
            .i64(self.nationkey)
            .str(&self.phone)
            .i64(self.acctbal)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("supplier", key);
        let suppkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("supplier", value);
        let row = Supplier {
            suppkey,
            name: r.str("s_name", STR_MAX)?,
            address: r.str("s_address", STR_MAX)?,
            nationkey: r.i64()?,
            phone: r.str("s_phone", STR_MAX)?,
            acctbal: r.i64()?,
            comment: r.str("s_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.suppkey.to_string(),
            self.name.clone(),
            self.address.clone(),
            self.nationkey.to_string(),
            self.phone.clone(),
            cents_text(self.acctbal),
            self.comment.clone(),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Customer {
    pub custkey: i64,
    pub name: String,
    pub address: String,
    pub nationkey: i64,
    pub phone: String,
    /// Cents.
    pub acctbal: i64,
    pub mktsegment: String,
    pub comment: String,
}

impl Row for Customer {
    const TABLE: Table = Table::Customer;
    const COLUMNS: &'static [&'static str] = &[
        "c_custkey",
        "c_name",
        "c_address",
        "c_nationkey",
        "c_phone",
        "c_acctbal",
        "c_mktsegment",
        "c_comment",
    ];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.custkey, Self::TABLE, "c_custkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(220)
            .str(&self.name)
            .str(&self.address)
            .i64(self.nationkey)
            .str(&self.phone)
            .i64(self.acctbal)
            .str(&self.mktsegment)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("customer", key);
        let custkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("customer", value);
        let row = Customer {
            custkey,
            name: r.str("c_name", STR_MAX)?,
            address: r.str("c_address", STR_MAX)?,
            nationkey: r.i64()?,
            phone: r.str("c_phone", STR_MAX)?,
            acctbal: r.i64()?,
            mktsegment: r.str("c_mktsegment", STR_MAX)?,
            comment: r.str("c_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.custkey.to_string(),
            self.name.clone(),
            self.address.clone(),
            self.nationkey.to_string(),
            self.phone.clone(),
            cents_text(self.acctbal),
            self.mktsegment.clone(),
            self.comment.clone(),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub partkey: i64,
    pub name: String,
    pub mfgr: String,
    pub brand: String,
    /// `P_TYPE`.
    pub type_: String,
    pub size: i32,
    pub container: String,
    /// Cents.
    pub retailprice: i64,
    pub comment: String,
}

impl Row for Part {
    const TABLE: Table = Table::Part;
    const COLUMNS: &'static [&'static str] = &[
        "p_partkey",
        "p_name",
        "p_mfgr",
        "p_brand",
        "p_type",
        "p_size",
        "p_container",
        "p_retailprice",
        "p_comment",
    ];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.partkey, Self::TABLE, "p_partkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(160)
            .str(&self.name)
            .str(&self.mfgr)
            .str(&self.brand)
            .str(&self.type_)
            .u32(self.size as u32)
            .str(&self.container)
            .i64(self.retailprice)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("part", key);
        let partkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("part", value);
        let row = Part {
            partkey,
            name: r.str("p_name", STR_MAX)?,
            mfgr: r.str("p_mfgr", STR_MAX)?,
            brand: r.str("p_brand", STR_MAX)?,
            type_: r.str("p_type", STR_MAX)?,
            size: r.u32()? as i32,
            container: r.str("p_container", STR_MAX)?,
            retailprice: r.i64()?,
            comment: r.str("p_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.partkey.to_string(),
            self.name.clone(),
            self.mfgr.clone(),
            self.brand.clone(),
            self.type_.clone(),
            self.size.to_string(),
            self.container.clone(),
            cents_text(self.retailprice),
            self.comment.clone(),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartSupp {
    pub partkey: i64,
    pub suppkey: i64,
    pub availqty: i32,
    /// Cents.
    pub supplycost: i64,
    pub comment: String,
}

impl Row for PartSupp {
    const TABLE: Table = Table::PartSupp;
    const COLUMNS: &'static [&'static str] =
        &["ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost", "ps_comment"];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.partkey, Self::TABLE, "ps_partkey"))
            .u32(key_u32(self.suppkey, Self::TABLE, "ps_suppkey"))
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        RowWriter::with_capacity(220)
            .u32(self.availqty as u32)
            .i64(self.supplycost)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("partsupp", key);
        let partkey = i64::from(k.u32()?);
        let suppkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("partsupp", value);
        let row = PartSupp {
            partkey,
            suppkey,
            availqty: r.u32()? as i32,
            supplycost: r.i64()?,
            comment: r.str("ps_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.partkey.to_string(),
            self.suppkey.to_string(),
            self.availqty.to_string(),
            cents_text(self.supplycost),
            self.comment.clone(),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    pub orderkey: i64,
    pub custkey: i64,
    /// `F`, `O` or `P`.
    pub orderstatus: u8,
    /// Cents.
    pub totalprice: i64,
    pub orderdate: Date,
    pub orderpriority: String,
    pub clerk: String,
    pub shippriority: i32,
    pub comment: String,
}

impl Row for Order {
    const TABLE: Table = Table::Orders;
    const COLUMNS: &'static [&'static str] = &[
        "o_orderkey",
        "o_custkey",
        "o_orderstatus",
        "o_totalprice",
        "o_orderdate",
        "o_orderpriority",
        "o_clerk",
        "o_shippriority",
        "o_comment",
    ];
    fn key(&self) -> Vec<u8> {
        order_key(self.orderkey)
    }
    fn value(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(140);
        w.i64(self.custkey).u8(self.orderstatus).i64(self.totalprice);
        date_w(&mut w, self.orderdate);
        w.str(&self.orderpriority)
            .str(&self.clerk)
            .u32(self.shippriority as u32)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("orders", key);
        let orderkey = i64::from(k.u32()?);
        k.finish()?;
        let mut r = RowReader::new("orders", value);
        let custkey = r.i64()?;
        let orderstatus = r.u8()?;
        let totalprice = r.i64()?;
        let orderdate = date_r(&mut r)?;
        let row = Order {
            orderkey,
            custkey,
            orderstatus,
            totalprice,
            orderdate,
            orderpriority: r.str("o_orderpriority", STR_MAX)?,
            clerk: r.str("o_clerk", STR_MAX)?,
            shippriority: r.u32()? as i32,
            comment: r.str("o_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.orderkey.to_string(),
            self.custkey.to_string(),
            char::from(self.orderstatus).to_string(),
            cents_text(self.totalprice),
            self.orderdate.to_string(),
            self.orderpriority.clone(),
            self.clerk.clone(),
            self.shippriority.to_string(),
            self.comment.clone(),
        ]
    }
}

/// The ORDERS key of `orderkey`.
pub fn order_key(orderkey: i64) -> Vec<u8> {
    KeyWriter::new()
        .u32(key_u32(orderkey, Table::Orders, "o_orderkey"))
        .finish()
}

/// The prefix of every LINEITEM key of `orderkey`.
pub fn lineitem_prefix(orderkey: i64) -> Vec<u8> {
    KeyWriter::new()
        .u32(key_u32(orderkey, Table::Lineitem, "l_orderkey"))
        .finish()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lineitem {
    pub orderkey: i64,
    pub partkey: i64,
    pub suppkey: i64,
    pub linenumber: i32,
    /// Whole units (1..50).
    pub quantity: i64,
    /// Cents.
    pub extendedprice: i64,
    /// Hundredths (0..10).
    pub discount: i64,
    /// Hundredths (0..8).
    pub tax: i64,
    pub returnflag: u8,
    pub linestatus: u8,
    pub shipdate: Date,
    pub commitdate: Date,
    pub receiptdate: Date,
    pub shipinstruct: String,
    pub shipmode: String,
    pub comment: String,
}

impl Row for Lineitem {
    const TABLE: Table = Table::Lineitem;
    const COLUMNS: &'static [&'static str] = &[
        "l_orderkey",
        "l_partkey",
        "l_suppkey",
        "l_linenumber",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_tax",
        "l_returnflag",
        "l_linestatus",
        "l_shipdate",
        "l_commitdate",
        "l_receiptdate",
        "l_shipinstruct",
        "l_shipmode",
        "l_comment",
    ];
    fn key(&self) -> Vec<u8> {
        KeyWriter::new()
            .u32(key_u32(self.orderkey, Self::TABLE, "l_orderkey"))
            .u8(self.linenumber as u8)
            .finish()
    }
    fn value(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(120);
        w.i64(self.partkey)
            .i64(self.suppkey)
            .u8(self.quantity as u8)
            .i64(self.extendedprice)
            .u8(self.discount as u8)
            .u8(self.tax as u8)
            .u8(self.returnflag)
            .u8(self.linestatus);
        date_w(&mut w, self.shipdate);
        date_w(&mut w, self.commitdate);
        date_w(&mut w, self.receiptdate);
        w.str(&self.shipinstruct)
            .str(&self.shipmode)
            .str(&self.comment)
            .finish()
    }
    fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let mut k = KeyReader::new("lineitem", key);
        let orderkey = i64::from(k.u32()?);
        let linenumber = i32::from(k.u8()?);
        k.finish()?;
        let mut r = RowReader::new("lineitem", value);
        let partkey = r.i64()?;
        let suppkey = r.i64()?;
        let quantity = i64::from(r.u8()?);
        let extendedprice = r.i64()?;
        let discount = i64::from(r.u8()?);
        let tax = i64::from(r.u8()?);
        let returnflag = r.u8()?;
        let linestatus = r.u8()?;
        let shipdate = date_r(&mut r)?;
        let commitdate = date_r(&mut r)?;
        let receiptdate = date_r(&mut r)?;
        let row = Lineitem {
            orderkey,
            partkey,
            suppkey,
            linenumber,
            quantity,
            extendedprice,
            discount,
            tax,
            returnflag,
            linestatus,
            shipdate,
            commitdate,
            receiptdate,
            shipinstruct: r.str("l_shipinstruct", STR_MAX)?,
            shipmode: r.str("l_shipmode", STR_MAX)?,
            comment: r.str("l_comment", COMMENT_MAX)?,
        };
        r.finish()?;
        Ok(row)
    }
    fn csv_fields(&self) -> Vec<String> {
        vec![
            self.orderkey.to_string(),
            self.partkey.to_string(),
            self.suppkey.to_string(),
            self.linenumber.to_string(),
            self.quantity.to_string(),
            cents_text(self.extendedprice),
            format!("0.{:02}", self.discount),
            format!("0.{:02}", self.tax),
            char::from(self.returnflag).to_string(),
            char::from(self.linestatus).to_string(),
            self.shipdate.to_string(),
            self.commitdate.to_string(),
            self.receiptdate.to_string(),
            self.shipinstruct.clone(),
            self.shipmode.clone(),
            self.comment.clone(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_do_arithmetic() {
        assert_eq!(Date::from_ymd(1970, 1, 1), Some(Date(0)));
        assert_eq!(Date::from_ymd(1992, 1, 1), Some(Date::ymd_const(1992, 1, 1)));
        assert_eq!(Date::from_ymd(1995, 2, 29), None);
        assert_eq!(
            Date::from_ymd(1996, 2, 29).map(|d| d.to_string()),
            Some("1996-02-29".into())
        );
        for days in -1000..20_000 {
            let d = Date(days);
            let (y, m, dd) = d.ymd();
            assert_eq!(Date::from_ymd(y, m, dd), Some(d));
            assert_eq!(Date::parse(&d.to_string()), Some(d));
        }
        let d = Date::ymd_const(1994, 1, 1);
        assert_eq!(d.add_months(3).to_string(), "1994-04-01");
        assert_eq!(d.add_years(1).to_string(), "1995-01-01");
        assert_eq!(Date::ymd_const(1998, 12, 1).add_days(-90).to_string(), "1998-09-02");
        assert_eq!(Date::parse("1998-13-01"), None);
        assert_eq!(Date::parse("1998-1"), None);
    }

    #[test]
    fn rows_round_trip_and_keys_sort_as_their_tuples() {
        let li = |o: i64, n: i32| Lineitem {
            orderkey: o,
            partkey: 7,
            suppkey: 9,
            linenumber: n,
            quantity: 17,
            extendedprice: 1_234_567,
            discount: 4,
            tax: 8,
            returnflag: b'R',
            linestatus: b'F',
            shipdate: Date::ymd_const(1994, 3, 4),
            commitdate: Date::ymd_const(1994, 3, 1),
            receiptdate: Date::ymd_const(1994, 3, 20),
            shipinstruct: "NONE".into(),
            shipmode: "MAIL".into(),
            comment: "ironic deposits".into(),
        };
        let a = li(1, 7);
        assert_eq!(Lineitem::decode(&a.key(), &a.value()), Ok(a.clone()));
        assert!(li(1, 7).key() < li(2, 1).key());
        assert!(li(256, 1).key() > li(255, 7).key());
        assert!(li(3, 1).key().starts_with(&lineitem_prefix(3)));
        let o = Order {
            orderkey: 33,
            custkey: 2,
            orderstatus: b'P',
            totalprice: -5,
            orderdate: Date::ymd_const(1996, 1, 2),
            orderpriority: "1-URGENT".into(),
            clerk: "Clerk#000000951".into(),
            shippriority: 0,
            comment: "x".into(),
        };
        assert_eq!(Order::decode(&o.key(), &o.value()), Ok(o.clone()));
        assert!(Order::decode(&o.key(), &o.value()[..5]).is_err());
        let ps = PartSupp {
            partkey: 5,
            suppkey: 300,
            availqty: 9999,
            supplycost: 100_000,
            comment: "c".repeat(199),
        };
        assert_eq!(PartSupp::decode(&ps.key(), &ps.value()), Ok(ps.clone()));
        assert_eq!(cents_text(-99_999), "-999.99");
        assert_eq!(cents_text(5), "0.05");
        assert_eq!(a.csv_fields()[6], "0.04");
        assert_eq!(a.csv_fields().len(), Lineitem::COLUMNS.len());
    }
}
