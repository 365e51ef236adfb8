//! The insert table: its indexes, its row and the row's encoding.
//!
//! A table of the insert load is, as sysbench's `sbtest` under InnoDB:
//!
//! | index | kind | key | value |
//! |---|---|---|---|
//! | `insert_pk` | unique (the table) | `id`, `u64` big-endian | the row |
//! | `insert_k1` .. `insert_kN` | non-unique | `(k_j, id)`: `k_j` a `u32` big-endian, `id` as above | empty |
//!
//! sysbench's table has one secondary index on `k`; 004 measures the
//! insert buffer, whose effect grows with the secondary indexes a row
//! feeds, so N is a parameter (default 3). Each `k_j` is drawn uniformly
//! over `0..2^32` per row and index: consecutive rows' secondary entries
//! land on unrelated leaves, the random reads a change buffer saves.
//!
//! Row value, `row_bytes` long in all: `n` (`u8`, the secondary keys'
//! count), `k_1 .. k_n` (`u32` each), the filler (a `u16` length, then
//! sysbench's `c` pattern: groups of 11 digits joined by `-`). A row is a
//! pure function of (seed, id, shape): its keys and its filler come from
//! two seeded streams of the project's generator
//! ([`crate::tpcc::random::stream`]), so the loader of a secondary index
//! draws the keys without the filler, and any thread gets the same row.

use flushwise_engine::db::IndexId;

use crate::tpcc::codec::{RowReader, RowWriter};
use crate::tpcc::random::{stream, Rng64};
use crate::tpcc::RowError;

/// The primary index's (the table's) name.
pub const PRIMARY: &str = "insert_pk";
/// The prefix of the secondary indexes' names (`insert_k1` ...).
pub const SECONDARY_PREFIX: &str = "insert_k";
/// Most secondary indexes (InnoDB allows 64 per table; 16 keeps the row
/// header small and is past anything 004 varies).
pub const SECONDARY_INDEXES_MAX: u32 = 16;
/// Default secondary indexes per table.
pub const SECONDARY_INDEXES_DEFAULT: u32 = 3;
/// Default row length in bytes (sysbench's `c` is `CHAR(120)`).
pub const ROW_BYTES_DEFAULT: u32 = 120;
/// Longest row: with its 8-byte key it fits a quarter of a 4 KiB page's
/// payload, the B+tree's largest entry at the smallest page size.
pub const ROW_BYTES_MAX: u32 = 960;
/// The first id of a loaded table (sysbench's ids start at 1).
pub const ID_FIRST: u64 = 1;

/// Stream tags: the keys and the filler of a row come from two streams.
const TAG_KEYS: u64 = 0x0004_4b45_5953; // "KEYS"
const TAG_FILLER: u64 = 0x0004_4649_4c4c; // "FILL"

/// The name of secondary index `j` (1-based).
pub fn secondary_name(j: u32) -> String {
    format!("{SECONDARY_PREFIX}{j}")
}

/// How many secondary indexes a table has and how long its rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RowShape {
    pub secondary_indexes: u32,
    pub row_bytes: u32,
}

impl RowShape {
    /// The shortest row with `secondary_indexes` keys: count, keys and the
    /// filler's length.
    pub fn row_bytes_min(secondary_indexes: u32) -> u32 {
        1 + 4 * secondary_indexes + 2
    }

    /// A checked shape; an error names the flag and what is accepted.
    pub fn new(secondary_indexes: u32, row_bytes: u32) -> Result<Self, String> {
        if secondary_indexes > SECONDARY_INDEXES_MAX {
            return Err(format!(
                "--secondary-indexes {secondary_indexes}: from 0 to {SECONDARY_INDEXES_MAX} are accepted"
            ));
        }
        let min = Self::row_bytes_min(secondary_indexes);
        if !(min..=ROW_BYTES_MAX).contains(&row_bytes) {
            return Err(format!(
                "--row-bytes {row_bytes}: from {min} (a row holds its {secondary_indexes} secondary keys) to {ROW_BYTES_MAX} are accepted"
            ));
        }
        Ok(Self {
            secondary_indexes,
            row_bytes,
        })
    }

    fn filler_len(&self) -> usize {
        (self.row_bytes - Self::row_bytes_min(self.secondary_indexes)) as usize
    }
}

/// The indexes of a loaded table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertSchema {
    pub primary: IndexId,
    /// `insert_k1` first.
    pub secondaries: Vec<IndexId>,
    pub shape: RowShape,
}

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub id: u64,
    /// One per secondary index, `insert_k1`'s first.
    pub keys: Vec<u32>,
    pub filler: String,
}

/// The secondary keys of row `id`: uniform over `0..2^32`, one per index.
pub fn keys_of(seed: u64, id: u64, secondary_indexes: u32) -> impl Iterator<Item = u32> {
    let mut rng = stream(seed, &[TAG_KEYS, id]);
    (0..secondary_indexes).map(move |_| (rng.next_u64() >> 32) as u32)
}

/// sysbench's `c` pattern, `len` characters: groups of 11 random digits
/// joined by `-`.
fn filler(seed: u64, id: u64, len: usize) -> String {
    const DIGITS_PER_DRAW: u32 = 19; // 10^19 < 2^64
    let mut rng = stream(seed, &[TAG_FILLER, id]);
    let mut out = String::with_capacity(len);
    let mut draw = 0u64;
    let mut left = 0u32;
    for i in 0..len {
        if i % 12 == 11 {
            out.push('-');
            continue;
        }
        if left == 0 {
            draw = rng.below(10u64.pow(DIGITS_PER_DRAW));
            left = DIGITS_PER_DRAW;
        }
        out.push(char::from(b'0' + (draw % 10) as u8));
        draw /= 10;
        left -= 1;
    }
    out
}

impl Row {
    /// Row `id` of a table of `shape` generated from `seed`.
    pub fn generate(seed: u64, id: u64, shape: RowShape) -> Self {
        Self {
            id,
            keys: keys_of(seed, id, shape.secondary_indexes).collect(),
            filler: filler(seed, id, shape.filler_len()),
        }
    }

    /// The primary key: `id` big-endian (key order = id order).
    pub fn key_of(id: u64) -> [u8; 8] {
        id.to_be_bytes()
    }

    /// The id of a primary key; a key of another length is an error.
    pub fn id_of(key: &[u8]) -> Result<u64, RowError> {
        let bytes: [u8; 8] = key.try_into().map_err(|_| RowError {
            table: PRIMARY,
            reason: format!("key of {} bytes, not 8", key.len()),
        })?;
        Ok(u64::from_be_bytes(bytes))
    }

    /// A secondary key as its index stores it: big-endian.
    pub fn secondary_key(k: u32) -> [u8; 4] {
        k.to_be_bytes()
    }

    pub fn key(&self) -> [u8; 8] {
        Self::key_of(self.id)
    }

    /// The encoded row (its length is the shape's `row_bytes`).
    pub fn value(&self) -> Vec<u8> {
        let count = u8::try_from(self.keys.len()).unwrap_or(u8::MAX);
        let mut w = RowWriter::with_capacity(3 + 4 * self.keys.len() + self.filler.len());
        w.u8(count);
        for &k in self.keys.iter().take(usize::from(count)) {
            w.u32(k);
        }
        w.long_str(&self.filler);
        w.finish()
    }

    /// The row from its primary key and value; a malformed one is an error.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, RowError> {
        let id = Self::id_of(key)?;
        let mut r = RowReader::new(PRIMARY, value);
        let count = r.u8()?;
        if u32::from(count) > SECONDARY_INDEXES_MAX {
            return Err(r.err(format!(
                "row {id}: {count} secondary keys, more than {SECONDARY_INDEXES_MAX}"
            )));
        }
        let mut keys = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            keys.push(r.u32()?);
        }
        let filler = r.long_str("filler", ROW_BYTES_MAX as usize)?;
        r.finish()?;
        Ok(Self { id, keys, filler })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(n: u32, bytes: u32) -> RowShape {
        RowShape::new(n, bytes).expect("shape")
    }

    #[test]
    fn a_row_round_trips_and_has_the_asked_length() {
        for (n, bytes) in [(3, 120), (0, 3), (16, 67), (1, 960)] {
            let s = shape(n, bytes);
            let row = Row::generate(7, 42, s);
            assert_eq!(row.keys.len(), n as usize);
            let v = row.value();
            assert_eq!(v.len(), bytes as usize, "shape {s:?}");
            assert_eq!(Row::decode(&row.key(), &v).expect("decodes"), row);
        }
    }

    #[test]
    fn generation_is_a_pure_function_of_seed_and_id() {
        let s = shape(3, 120);
        assert_eq!(Row::generate(1, 5, s), Row::generate(1, 5, s));
        assert_ne!(Row::generate(1, 5, s).keys, Row::generate(2, 5, s).keys);
        assert_ne!(Row::generate(1, 5, s).keys, Row::generate(1, 6, s).keys);
        // The loader draws the keys alone: the same keys as the whole row.
        let keys: Vec<u32> = keys_of(1, 5, 3).collect();
        assert_eq!(keys, Row::generate(1, 5, s).keys);
        // Pinned: a seed's data must not drift between commits.
        let row = Row::generate(1, 1, s);
        assert_eq!(row.keys, [3_102_613_412, 2_890_229_545, 3_831_626_785]);
        assert_eq!(&row.filler[..23], "77732701605-08109938128");
        assert_eq!(row.filler.len(), 120 - 15);
        assert_eq!(row.filler.as_bytes()[11], b'-');
        assert!(row
            .filler
            .chars()
            .enumerate()
            .all(|(i, c)| if i % 12 == 11 { c == '-' } else { c.is_ascii_digit() }));
    }

    #[test]
    fn secondary_keys_spread_over_the_whole_u32_range() {
        let keys: Vec<u32> = (1..=4000).flat_map(|id| keys_of(3, id, 2)).collect();
        let quarters = |q: u32| keys.iter().filter(|&&k| k >> 30 == q).count();
        for q in 0..4 {
            // 8,000 draws, 2,000 expected per quarter, sd about 39.
            assert!((1800..2200).contains(&quarters(q)), "quarter {q}: {}", quarters(q));
        }
    }

    #[test]
    fn keys_sort_as_their_numbers() {
        assert!(Row::key_of(255) < Row::key_of(256));
        assert!(Row::secondary_key(0x00ff_ffff) < Row::secondary_key(0x0100_0000));
        assert_eq!(Row::id_of(&Row::key_of(1 << 40)).expect("id"), 1 << 40);
    }

    #[test]
    fn malformed_rows_and_shapes_are_refused() {
        let row = Row::generate(1, 9, shape(2, 40));
        let v = row.value();
        assert!(Row::decode(&row.key(), &v[..v.len() - 1]).is_err());
        assert!(Row::decode(&row.key()[..7], &v).is_err());
        let mut extra = v.clone();
        extra.push(0);
        assert!(Row::decode(&row.key(), &extra).is_err());
        let mut many = v;
        many[0] = 200;
        assert!(Row::decode(&row.key(), &many).is_err());
        let e = RowShape::new(17, 120).expect_err("too many indexes");
        assert!(e.contains("--secondary-indexes 17"), "{e}");
        let e = RowShape::new(3, 14).expect_err("too short");
        assert!(e.contains("--row-bytes 14") && e.contains("from 15"), "{e}");
        assert!(RowShape::new(3, ROW_BYTES_MAX + 1).is_err());
    }
}
