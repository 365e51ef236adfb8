//! The executor the 22 plans are built from: exact decimal arithmetic,
//! SQL LIKE, key lookups and prefix scans, a grouping of LINEITEM by order
//! that relies on key order, sort with limit, and the small dimension
//! lookups (nations, regions) most plans start with.
//!
//! Hash joins and hash aggregation are `HashMap`s in the plans themselves,
//! built from the smaller input; what is here is what more than one plan
//! needs and what has an invariant worth stating once.
//!
//! Invariants:
//! - decimal helpers never round: `l_extendedprice × (1 − l_discount)` is
//!   cents × (100 − discount hundredths), scale 4, and × (100 + tax
//!   hundredths) scale 6, in `i128` (no overflow below 10^20 lines).
//! - [`for_each_order`] hands every line of an order in one call, because
//!   LINEITEM's key starts with `L_ORDERKEY` and scans are in key order.
//! - [`sort_limit`] with a total order returns exactly the first `limit`
//!   rows of the full sort.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;

use flushwise_engine::btree::secondary::prefix_successor;

use crate::tpcc::codec::KeyWriter;

use super::super::access::TpchDb;
use super::super::schema::{Lineitem, Nation, PartSupp, Region, Row};
use super::super::TpchError;
use super::Value;

/// Scale of money columns (cents).
pub const MONEY_SCALE: u32 = 2;
/// Scale of `l_extendedprice × (1 − l_discount)`.
pub const DISC_PRICE_SCALE: u32 = 4;
/// Scale of `l_extendedprice × (1 − l_discount) × (1 + l_tax)`.
pub const CHARGE_SCALE: u32 = 6;

/// `l_extendedprice × (1 − l_discount)` at scale 4.
pub fn disc_price(l: &Lineitem) -> i128 {
    i128::from(l.extendedprice) * i128::from(100 - l.discount)
}

/// `l_extendedprice × (1 − l_discount) × (1 + l_tax)` at scale 6.
pub fn charge(l: &Lineitem) -> i128 {
    disc_price(l) * i128::from(100 + l.tax)
}

pub fn dec(units: i128, scale: u32) -> Value {
    Value::Dec { units, scale }
}

/// A money column (cents) as a decimal with two places.
pub fn money(cents: i64) -> Value {
    dec(i128::from(cents), MONEY_SCALE)
}

/// A sum of `L_QUANTITY` (a DECIMAL(15,2) column that holds whole units)
/// as a decimal with two places.
pub fn quantity(units: i128) -> Value {
    dec(units * 100, 2)
}

/// `units × 10^-scale`, or NULL when there was nothing to sum (SQL's SUM
/// over no rows).
pub fn sum_or_null(units: Option<i128>, scale: u32) -> Value {
    units.map_or(Value::NULL, |u| dec(u, scale))
}

pub fn text(s: &str) -> Value {
    Value::Str(s.to_string())
}

pub fn char_text(c: u8) -> Value {
    Value::Str(char::from(c).to_string())
}

/// `numerator / denominator` in `f64` (both exact integers at the same
/// scale); callers guarantee a non-zero denominator.
pub fn ratio(numerator: i128, denominator: i128) -> f64 {
    numerator as f64 / denominator as f64
}

/// A compiled SQL `LIKE` pattern: `%` matches any run of characters, `_`
/// exactly one (no escape character; TPC-H's patterns use neither in their
/// literals). Text is ASCII (schema invariant), so bytes are characters.
#[derive(Clone, Debug)]
pub struct Like {
    /// The pattern split at `%`: the first piece is anchored at the start,
    /// the last at the end; a pattern without `%` is one piece matching
    /// the whole text. `None` is `_`.
    pieces: Vec<Vec<Option<u8>>>,
}

impl Like {
    pub fn new(pattern: &str) -> Like {
        let pieces = pattern
            .split('%')
            .map(|piece| piece.bytes().map(|b| if b == b'_' { None } else { Some(b) }).collect())
            .collect();
        Like { pieces }
    }

    pub fn matches(&self, text: &str) -> bool {
        let t = text.as_bytes();
        let (first, last) = match (self.pieces.first(), self.pieces.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => return t.is_empty(),
        };
        if self.pieces.len() == 1 {
            return t.len() == first.len() && piece_at(first, t, 0);
        }
        if t.len() < first.len() + last.len() || !piece_at(first, t, 0) || !piece_at(last, t, t.len() - last.len()) {
            return false;
        }
        // Middle pieces, leftmost first: taking each as early as possible
        // leaves the most room for the rest, so this finds a match if any.
        let end = t.len() - last.len();
        let mut pos = first.len();
        for piece in &self.pieces[1..self.pieces.len() - 1] {
            match (pos..=end.saturating_sub(piece.len())).find(|&i| i + piece.len() <= end && piece_at(piece, t, i)) {
                Some(i) => pos = i + piece.len(),
                None => return false,
            }
        }
        true
    }
}

fn piece_at(piece: &[Option<u8>], text: &[u8], at: usize) -> bool {
    text.len() >= at + piece.len() && piece.iter().zip(&text[at..]).all(|(p, t)| p.map_or(true, |p| p == *t))
}

/// The key of a table whose primary key is one integer (every table but
/// PARTSUPP and LINEITEM); `None` for a value no key can hold.
pub fn single_key(key: i64) -> Option<Vec<u8>> {
    u32::try_from(key).ok().map(|k| KeyWriter::new().u32(k).finish())
}

/// The row of `R` with the one-integer primary key `key`.
pub fn get_by_key<R: Row>(db: &TpchDb<'_>, key: i64) -> Result<Option<R>, TpchError> {
    match single_key(key) {
        Some(k) => db.get::<R>(&k),
        None => Ok(None),
    }
}

/// The rows of `R` whose keys start with `prefix`, in key order.
pub fn scan_prefix<R: Row>(db: &TpchDb<'_>, prefix: &[u8], visit: impl FnMut(R) -> bool) -> Result<(), TpchError> {
    let end = prefix_successor(prefix);
    let end = match &end {
        Some(e) => Bound::Excluded(e.as_slice()),
        None => Bound::Unbounded,
    };
    db.scan_range(Bound::Included(prefix), end, visit)
}

/// The PARTSUPP rows of part `partkey` (an index lookup: the key starts
/// with `PS_PARTKEY`).
pub fn partsupps_of(db: &TpchDb<'_>, partkey: i64) -> Result<Vec<PartSupp>, TpchError> {
    let mut out = Vec::with_capacity(4);
    if let Some(prefix) = single_key(partkey) {
        scan_prefix(db, &prefix, |ps: PartSupp| {
            out.push(ps);
            true
        })?;
    }
    Ok(out)
}

/// Streams LINEITEM once and calls `visit` with all lines of one order at
/// a time, in order-key order (a sort-based grouping that needs no hash
/// table: the key order is the grouping order).
pub fn for_each_order(db: &TpchDb<'_>, mut visit: impl FnMut(&[Lineitem])) -> Result<(), TpchError> {
    let mut group: Vec<Lineitem> = Vec::with_capacity(8);
    db.scan::<Lineitem>(|l| {
        if let Some(previous) = group.last() {
            if previous.orderkey != l.orderkey {
                debug_assert!(previous.orderkey < l.orderkey, "LINEITEM scanned out of key order");
                visit(&group);
                group.clear();
            }
        }
        group.push(l);
        true
    })?;
    if !group.is_empty() {
        visit(&group);
    }
    Ok(())
}

/// Sorts `rows` by `cmp` and keeps the first `limit` (all when `None`);
/// only the kept rows are fully sorted.
pub fn sort_limit<T>(rows: &mut Vec<T>, limit: Option<usize>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if let Some(k) = limit {
        if k == 0 {
            rows.clear();
            return;
        }
        if rows.len() > k {
            rows.select_nth_unstable_by(k - 1, &mut cmp);
            rows.truncate(k);
        }
    }
    rows.sort_by(cmp);
}

/// Every nation: key → name.
pub fn nation_names(db: &TpchDb<'_>) -> Result<HashMap<i64, String>, TpchError> {
    let mut out = HashMap::new();
    db.scan(|n: Nation| {
        out.insert(n.nationkey, n.name);
        true
    })?;
    Ok(out)
}

/// The nations of the region named `region`: key → name (empty if no
/// region has that name).
pub fn nations_of_region(db: &TpchDb<'_>, region: &str) -> Result<HashMap<i64, String>, TpchError> {
    let mut regionkeys = Vec::new();
    db.scan(|r: Region| {
        if r.name == region {
            regionkeys.push(r.regionkey);
        }
        true
    })?;
    let mut out = HashMap::new();
    db.scan(|n: Nation| {
        if regionkeys.contains(&n.regionkey) {
            out.insert(n.nationkey, n.name);
        }
        true
    })?;
    Ok(out)
}

/// The keys of the nations named `name` (one in a valid population).
pub fn nationkeys_named(db: &TpchDb<'_>, name: &str) -> Result<Vec<i64>, TpchError> {
    let mut out = Vec::new();
    db.scan(|n: Nation| {
        if n.name == name {
            out.push(n.nationkey);
        }
        true
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_follows_sql_semantics() {
        let special_requests = Like::new("%special%requests%");
        assert!(special_requests.matches("the special quiet requests"));
        assert!(special_requests.matches("specialrequests"));
        assert!(!special_requests.matches("requests are special"));
        assert!(!special_requests.matches("specia requests"));
        assert!(Like::new("%BRASS").matches("ECONOMY BURNISHED BRASS"));
        assert!(!Like::new("%BRASS").matches("BRASS PLATED TIN"));
        assert!(Like::new("forest%").matches("forest green"));
        assert!(!Like::new("forest%").matches("green forest"));
        assert!(Like::new("%Customer%Complaints%").matches("xCustomer, Complaintsy"));
        assert!(!Like::new("%Customer%Complaints%").matches("Complaints Customer"));
        assert!(Like::new("a_c").matches("abc") && !Like::new("a_c").matches("abbc"));
        assert!(Like::new("abc").matches("abc") && !Like::new("abc").matches("abcd"));
        // Anchors may not overlap: "ab%ba" needs at least four characters.
        assert!(!Like::new("ab%ba").matches("aba"));
        assert!(Like::new("ab%ba").matches("abba"));
        assert!(Like::new("%").matches("") && Like::new("%%").matches("x"));
        assert!(Like::new("%x%x%").matches("xx") && !Like::new("%x%x%").matches("x"));
    }

    #[test]
    fn sort_limit_keeps_the_first_rows_of_the_full_sort() {
        let mut rows: Vec<i64> = (0..1000).map(|i| (i * 7919) % 1009).collect();
        let mut full = rows.clone();
        full.sort_by(|a, b| b.cmp(a));
        sort_limit(&mut rows, Some(10), |a, b| b.cmp(a));
        assert_eq!(rows, full[..10]);
        let mut short = vec![3, 1, 2];
        sort_limit(&mut short, Some(10), |a, b| a.cmp(b));
        assert_eq!(short, [1, 2, 3]);
        sort_limit(&mut short, Some(0), |a, b| a.cmp(b));
        assert!(short.is_empty());
    }

    #[test]
    fn decimal_arithmetic_is_exact() {
        let mut l = super::super::tests::line(1, 1, 1, 1, 17, 1_234_567, 4, 8);
        assert_eq!(disc_price(&l), 1_234_567 * 96);
        assert_eq!(charge(&l), 1_234_567 * 96 * 108);
        l.discount = 10;
        l.tax = 0;
        assert_eq!(charge(&l), 1_234_567 * 90 * 100);
        assert_eq!(single_key(-1), None);
        assert_eq!(single_key(1 << 33), None);
        assert_eq!(single_key(258), Some(vec![0, 0, 1, 2]));
    }
}
