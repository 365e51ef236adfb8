//! The 22 TPC-H queries (specification revision 3.0.1, clause 2.4) as
//! hand-built plans over a small executor of our own, with their
//! substitution parameters.
//!
//! What it models: what a query processor does for each query text — scans
//! of the tables, filters, hash joins with the smaller input as the build
//! side, index lookups where the primary key serves (a part's PARTSUPP
//! rows, an order's lines, one order or customer), grouping, aggregation,
//! sort and limit — written out per query rather than derived by an
//! optimiser. The plans are in [`q01_08`], [`q09_16`] and [`q17_22`]; the
//! operators they share in [`exec`]; the parameters in [`params`].
//!
//! Invariants:
//! - an [`Answer`] has the columns, in order, and the row order of the
//!   standard query text's SELECT list, ORDER BY and row limit (Q2 100,
//!   Q3 10, Q10 20, Q18 100, Q21 100). Where the ORDER BY is not a total
//!   order, ties are broken by a key so a run is reproducible; SQL leaves
//!   that order open.
//! - arithmetic on DECIMAL columns is exact: money is integer cents, and a
//!   sum is an `i128` at a fixed scale (`l_extendedprice × (1 −
//!   l_discount)` has scale 4, `× (1 + l_tax)` scale 6); averages and ratios
//!   are `f64`, computed once from exact sums.
//! - large tables are streamed through scan callbacks; a plan keeps only
//!   the projected tuples it needs (keys, a date, a sum), never a table.
//! - an aggregate over no rows without GROUP BY is one row holding SQL
//!   NULL, represented as [`Value::NULL`] (see there).

pub mod exec;
pub mod params;
pub mod q01_08;
pub mod q09_16;
pub mod q17_22;
#[cfg(test)]
mod tests;

use serde::Serialize;

use super::access::TpchDb;
use super::schema::Date;
use super::TpchError;

pub use params::{Fraction, Params, Subst};

/// Number of queries; they are numbered `1..=QUERIES`.
pub const QUERIES: u8 = 22;

/// One value of an answer.
///
/// SQL NULL (only the result of an aggregate over no rows) is
/// `Float(NaN)`, [`Value::NULL`]: `to_text` writes `NULL` and `serde_json`
/// writes any non-finite float as `null`. A query never produces NaN
/// otherwise (its ratios divide by sums over at least one row).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Value {
    Int(i64),
    /// Exact decimal `units × 10^-scale`.
    Dec {
        units: i128,
        scale: u32,
    },
    Float(f64),
    Str(String),
    Date(#[serde(serialize_with = "serialize_date")] Date),
}

fn serialize_date<S: serde::Serializer>(date: &Date, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(date)
}

impl Value {
    /// SQL NULL (see the type's documentation).
    pub const NULL: Value = Value::Float(f64::NAN);

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Float(f) if f.is_nan())
    }

    /// The value as text: a decimal with exactly `scale` places
    /// (`123.4500`), a date as `YYYY-MM-DD`, NULL as `NULL`.
    pub fn to_text(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Dec { units, scale } => decimal_text(*units, *scale),
            Value::Float(f) if f.is_nan() => "NULL".to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) => s.clone(),
            Value::Date(d) => d.to_string(),
        }
    }
}

/// `units × 10^-scale` written exactly.
fn decimal_text(units: i128, scale: u32) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let digits = units.unsigned_abs().to_string();
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// The result of one query.
#[derive(Clone, Debug)]
pub struct Answer {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Value>>,
}

/// Runs query `params.query` with its parameters. A query number outside
/// `1..=22`, or parameters of another query, is [`TpchError::Config`].
pub fn run_query(db: &TpchDb<'_>, params: &Params) -> Result<Answer, TpchError> {
    use Subst as S;
    if params.subst.query() != Some(params.query) {
        return Err(mismatch(params.query));
    }
    match &params.subst {
        S::Q1 { delta_days } => q01_08::q1(db, *delta_days),
        S::Q2 {
            size,
            type_syllable,
            region,
        } => q01_08::q2(db, *size, type_syllable, region),
        S::Q3 { segment, date } => q01_08::q3(db, segment, *date),
        S::Q4 { date } => q01_08::q4(db, *date),
        S::Q5 { region, date } => q01_08::q5(db, region, *date),
        S::Q6 {
            date,
            discount_hundredths,
            quantity,
        } => q01_08::q6(db, *date, *discount_hundredths, *quantity),
        S::Q7 { nation1, nation2 } => q01_08::q7(db, nation1, nation2),
        S::Q8 { nation, region, type_ } => q01_08::q8(db, nation, region, type_),
        S::Q9 { color } => q09_16::q9(db, color),
        S::Q10 { date } => q09_16::q10(db, *date),
        S::Q11 { nation, fraction } => q09_16::q11(db, nation, *fraction),
        S::Q12 {
            shipmode1,
            shipmode2,
            date,
        } => q09_16::q12(db, shipmode1, shipmode2, *date),
        S::Q13 { word1, word2 } => q09_16::q13(db, word1, word2),
        S::Q14 { date } => q09_16::q14(db, *date),
        S::Q15 { date } => q09_16::q15(db, *date),
        S::Q16 {
            brand,
            type_prefix,
            sizes,
        } => q09_16::q16(db, brand, type_prefix, sizes),
        S::Q17 { brand, container } => q17_22::q17(db, brand, container),
        S::Q18 { quantity } => q17_22::q18(db, *quantity),
        S::Q19 { quantities, brands } => q17_22::q19(db, quantities, brands),
        S::Q20 { color, date, nation } => q17_22::q20(db, color, *date, nation),
        S::Q21 { nation } => q17_22::q21(db, nation),
        S::Q22 { country_codes } => q17_22::q22(db, country_codes),
        S::OutOfRange => Err(mismatch(params.query)),
    }
}

fn mismatch(query: u8) -> TpchError {
    TpchError::Config {
        reason: format!("query {query} does not exist or does not match its parameters (queries are 1..={QUERIES})"),
    }
}
