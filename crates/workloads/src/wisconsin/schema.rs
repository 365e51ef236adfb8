//! The Wisconsin relation: its sixteen attributes, how each is derived,
//! its key and its encoding.
//!
//! The attributes follow the scalable Wisconsin benchmark (Bitton, DeWitt
//! and Turbyfill 1983; DeWitt, "The Wisconsin Benchmark: Past, Present, and
//! Future", 1993, Table 1): for a relation of `n` tuples,
//!
//! | attribute | values |
//! |---|---|
//! | `unique1` | 0..n-1, a random permutation (candidate key) |
//! | `unique2` | 0..n-1 in tuple order (the original's declared key) |
//! | `two`, `four`, `ten`, `twenty` | `unique1 mod 2, 4, 10, 20` |
//! | `onePercent`, `tenPercent`, `twentyPercent`, `fiftyPercent` | `unique1 mod 100, 10, 5, 2` |
//! | `unique3` | `unique1` (what 003's UPDATE sets) |
//! | `evenOnePercent`, `oddOnePercent` | `onePercent * 2`, `onePercent * 2 + 1` |
//! | `stringu1`, `stringu2` | 52 characters: `unique1` / `unique2` in base 26 as seven letters `A..Z` (right-aligned, `A`-padded), then 45 `x` |
//! | `string4` | 52 characters: four of one letter cycling `A`, `H`, `O`, `V` by `unique2 mod 4`, then 48 `x` |
//!
//! The engine index is keyed by `unique1` (4 bytes big-endian), not by
//! `unique2` as in the original: 003's load is `UPDATE ... WHERE
//! unique1=?`, and a clustered primary key on the attribute the updates
//! name makes each update one B+tree descent to one leaf, as a unique
//! index on `unique1` over a `unique2`-clustered table would in InnoDB
//! only after a second descent. A deviation, stated.
//!
//! The permutation is a seeded Feistel network over the smallest
//! power-of-four domain holding `n`, restricted to `0..n` by cycle walking
//! (Black and Rogaway 2002): a bijection computable in both directions
//! without a table, so a tuple is generated from its `unique1` in key
//! order (what the bulk loader needs) in O(1) memory.

use crate::tpcc::codec::{RowReader, RowWriter};
use crate::tpcc::random::mix64;
use crate::tpcc::RowError;

/// Length of every string attribute (the benchmark's 52 bytes).
pub const STRING_LEN: usize = 52;
/// The name the relation's index has in the engine.
pub const RELATION: &str = "wisconsin";
/// Largest relation (the key is a `u32`; the benchmark's own largest is
/// 10^8 tuples in DeWitt 1993's "scalable" version).
pub const TUPLES_MAX: u64 = 1 << 32;

/// One tuple (all integers are the benchmark's 4-byte ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuple {
    pub unique1: u32,
    pub unique2: u32,
    pub two: u32,
    pub four: u32,
    pub ten: u32,
    pub twenty: u32,
    pub one_percent: u32,
    pub ten_percent: u32,
    pub twenty_percent: u32,
    pub fifty_percent: u32,
    pub unique3: u32,
    pub even_one_percent: u32,
    pub odd_one_percent: u32,
    pub stringu1: String,
    pub stringu2: String,
    pub string4: String,
}

/// The seeded permutation `unique2 -> unique1` of `0..n` and its inverse.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// `n` must be in `1..=TUPLES_MAX`.
    pub fn new(n: u64, seed: u64) -> Self {
        assert!((1..=TUPLES_MAX).contains(&n), "relation of {n} tuples");
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut keys = [0u64; 4];
        let mut k = mix64(seed ^ 0x5749_5343_4f4e_5349); // "WISCONSI"
        for slot in &mut keys {
            k = mix64(k.wrapping_add(0x9E37_79B9_7F4A_7C15));
            *slot = k;
        }
        Self { n, half_bits, keys }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn mask(&self) -> u64 {
        (1u64 << self.half_bits) - 1
    }

    fn round(&self, i: usize, r: u64) -> u64 {
        mix64(r ^ self.keys[i]) & self.mask()
    }

    fn forward_once(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask());
        for i in 0..4 {
            let next = l ^ self.round(i, r);
            l = r;
            r = next;
        }
        (l << self.half_bits) | r
    }

    fn backward_once(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask());
        for i in (0..4).rev() {
            let prev = r ^ self.round(i, l);
            r = l;
            l = prev;
        }
        (l << self.half_bits) | r
    }

    /// `unique1` of the tuple with `unique2`.
    pub fn unique1_of(&self, unique2: u64) -> u64 {
        debug_assert!(unique2 < self.n);
        // Cycle walking: the domain is at most 4n, so the expected number
        // of steps is under 4; the walk ends because the Feistel network is
        // a bijection of the domain and `unique2` itself is in 0..n.
        let mut x = self.forward_once(unique2);
        while x >= self.n {
            x = self.forward_once(x);
        }
        x
    }

    /// `unique2` of the tuple with `unique1`.
    pub fn unique2_of(&self, unique1: u64) -> u64 {
        debug_assert!(unique1 < self.n);
        let mut x = self.backward_once(unique1);
        while x >= self.n {
            x = self.backward_once(x);
        }
        x
    }
}

/// Seven letters `A..Z`: `v` in base 26, right-aligned, `A`-padded, as the
/// benchmark's generator's `convert`; then `x` up to 52 characters.
pub fn unique_string(v: u32) -> String {
    let mut letters = [b'A'; 7];
    let mut rest = v;
    let mut i = letters.len();
    while rest > 0 && i > 0 {
        i -= 1;
        letters[i] = b'A' + (rest % 26) as u8;
        rest /= 26;
    }
    let mut s = String::with_capacity(STRING_LEN);
    s.extend(letters.iter().map(|&b| char::from(b)));
    s.extend(std::iter::repeat('x').take(STRING_LEN - letters.len()));
    s
}

/// `string4` of the tuple with `unique2`.
pub fn string4(unique2: u32) -> String {
    let letter = ['A', 'H', 'O', 'V'][(unique2 % 4) as usize];
    let mut s = String::with_capacity(STRING_LEN);
    s.extend(std::iter::repeat(letter).take(4));
    s.extend(std::iter::repeat('x').take(STRING_LEN - 4));
    s
}

impl Tuple {
    /// The tuple with these `unique1` and `unique2`, `unique3` as loaded.
    pub fn derive(unique1: u32, unique2: u32) -> Self {
        let one_percent = unique1 % 100;
        Self {
            unique1,
            unique2,
            two: unique1 % 2,
            four: unique1 % 4,
            ten: unique1 % 10,
            twenty: unique1 % 20,
            one_percent,
            ten_percent: unique1 % 10,
            twenty_percent: unique1 % 5,
            fifty_percent: unique1 % 2,
            unique3: unique1,
            even_one_percent: one_percent * 2,
            odd_one_percent: one_percent * 2 + 1,
            stringu1: unique_string(unique1),
            stringu2: unique_string(unique2),
            string4: string4(unique2),
        }
    }

    /// The engine key: `unique1` big-endian (key order = `unique1` order).
    pub fn key_of(unique1: u32) -> [u8; 4] {
        unique1.to_be_bytes()
    }

    pub fn key(&self) -> [u8; 4] {
        Self::key_of(self.unique1)
    }

    /// Every attribute but the key, fixed-width integers then the strings.
    pub fn value(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(12 * 4 + 3 * (STRING_LEN + 1));
        w.u32(self.unique2)
            .u32(self.two)
            .u32(self.four)
            .u32(self.ten)
            .u32(self.twenty)
            .u32(self.one_percent)
            .u32(self.ten_percent)
            .u32(self.twenty_percent)
            .u32(self.fifty_percent)
            .u32(self.unique3)
            .u32(self.even_one_percent)
            .u32(self.odd_one_percent)
            .str(&self.stringu1)
            .str(&self.stringu2)
            .str(&self.string4);
        w.finish()
    }

    /// The tuple from its key and value; a malformed one is an error.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let unique1 = u32::from_be_bytes(key.try_into().map_err(|_| RowError {
            table: RELATION,
            reason: format!("key of {} bytes, not 4", key.len()),
        })?);
        let mut r = RowReader::new(RELATION, value);
        let t = Self {
            unique1,
            unique2: r.u32()?,
            two: r.u32()?,
            four: r.u32()?,
            ten: r.u32()?,
            twenty: r.u32()?,
            one_percent: r.u32()?,
            ten_percent: r.u32()?,
            twenty_percent: r.u32()?,
            fifty_percent: r.u32()?,
            unique3: r.u32()?,
            even_one_percent: r.u32()?,
            odd_one_percent: r.u32()?,
            stringu1: r.str("stringu1", STRING_LEN)?,
            stringu2: r.str("stringu2", STRING_LEN)?,
            string4: r.str("string4", STRING_LEN)?,
        };
        r.finish()?;
        Ok(t)
    }

    /// Byte offset of `unique3` in [`Tuple::value`] (the one field 003's
    /// UPDATE changes, rewritten in place).
    pub const UNIQUE3_OFFSET: usize = 9 * 4;

    /// `value` with `unique3` set, or `None` if `value` is too short to be
    /// a tuple's.
    pub fn with_unique3(value: &[u8], unique3: u32) -> Option<Vec<u8>> {
        let mut v = value.to_vec();
        v.get_mut(Self::UNIQUE3_OFFSET..Self::UNIQUE3_OFFSET + 4)?
            .copy_from_slice(&unique3.to_le_bytes());
        Some(v)
    }
}

/// The tuples of a relation of `n` tuples, in key (`unique1`) order.
pub fn tuples(n: u64, seed: u64) -> impl Iterator<Item = Tuple> {
    let perm = Permutation::new(n, seed);
    (0..n).map(move |u1| Tuple::derive(u1 as u32, perm.unique2_of(u1) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection_and_inverts() {
        for n in [1u64, 2, 3, 17, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for u2 in 0..n {
                let u1 = p.unique1_of(u2);
                assert!(u1 < n);
                assert!(!seen[u1 as usize], "n={n}: {u1} twice");
                seen[u1 as usize] = true;
                assert_eq!(p.unique2_of(u1), u2);
            }
        }
    }

    #[test]
    fn permutation_depends_on_the_seed_and_is_not_the_identity() {
        let a = Permutation::new(10_000, 1);
        let b = Permutation::new(10_000, 2);
        let fixed = (0..10_000).filter(|&i| a.unique1_of(i) == i).count();
        assert!(fixed < 20, "{fixed} fixed points");
        assert!((0..100).any(|i| a.unique1_of(i) != b.unique1_of(i)));
    }

    #[test]
    fn attributes_follow_the_benchmark() {
        let t = Tuple::derive(1234, 7);
        assert_eq!((t.two, t.four, t.ten, t.twenty), (0, 2, 4, 14));
        assert_eq!(
            (t.one_percent, t.ten_percent, t.twenty_percent, t.fifty_percent),
            (34, 4, 4, 0)
        );
        assert_eq!((t.even_one_percent, t.odd_one_percent, t.unique3), (68, 69, 1234));
        // 1234 = 1*26^2 + 21*26 + 12 -> "AAAABVM".
        assert_eq!(&t.stringu1[..7], "AAAABVM");
        assert_eq!(t.stringu1.len(), STRING_LEN);
        assert!(t.stringu1[7..].chars().all(|c| c == 'x'));
        assert_eq!(&unique_string(0)[..7], "AAAAAAA");
        assert_eq!(&t.string4[..5], "VVVVx"); // 7 mod 4 = 3 -> V
        assert_eq!(&string4(4)[..4], "AAAA");
    }

    #[test]
    fn tuple_round_trips_and_unique3_is_rewritten_in_place() {
        let t = Tuple::derive(99, 5);
        let v = t.value();
        assert_eq!(Tuple::decode(&t.key(), &v).unwrap(), t);
        let changed = Tuple::with_unique3(&v, 777).unwrap();
        let d = Tuple::decode(&t.key(), &changed).unwrap();
        assert_eq!(d.unique3, 777);
        assert_eq!(Tuple { unique3: 99, ..d }, t);
        assert!(Tuple::decode(&t.key(), &v[..10]).is_err());
    }

    #[test]
    fn tuples_come_in_key_order() {
        let keys: Vec<[u8; 4]> = tuples(500, 3).map(|t| t.key()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        let mut u2: Vec<u32> = tuples(500, 3).map(|t| t.unique2).collect();
        u2.sort_unstable();
        assert_eq!(u2, (0..500).collect::<Vec<_>>());
    }
}
