//! TPC-C's random functions: NURand and its C constants (clause 2.1.6),
//! last names from syllables (clause 4.3.2.3), a-strings, n-strings, zip
//! codes and the "ORIGINAL" data strings (clause 4.3.2.2, 4.3.3.1).
//!
//! The bit generator is the page-reference model's seeded xoshiro256**
//! ([`flushwise_tpcc_model::rng`]), so a seed gives the same data everywhere.
//!
//! C constants (clause 2.1.6.1): one C per field — C_LAST (A = 255),
//! C_ID (A = 1023), OL_I_ID (A = 8191) — shared by every terminal. The C
//! of C_LAST used to load (C-Load) is kept in the database; the one of a
//! run (C-Run) must differ from it by C-Delta = |C-Run − C-Load| in
//! [65, 119] with 96 and 112 excluded. C_ID and OL_I_ID are not drawn with
//! NURand at load (customers of orders are a permutation, order-line items
//! are uniform), so their run values are free.

pub use flushwise_tpcc_model::rng::{mix64, nurand, Rng64, Xoshiro256StarStar};

/// NURand's A for C_LAST, C_ID and OL_I_ID (clause 2.1.6).
pub const A_C_LAST: u64 = 255;
pub const A_C_ID: u64 = 1023;
pub const A_OL_I_ID: u64 = 8191;

/// The C constants of one NURand use (load or run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NurandConstants {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

impl NurandConstants {
    /// Load constants from a seed.
    pub fn for_load(seed: u64) -> Self {
        let mut rng = Xoshiro256StarStar::seed_from_u64(mix64(seed ^ 0x10ad_c0de));
        Self {
            c_last: rng.between(0, A_C_LAST) as u32,
            c_id: rng.between(0, A_C_ID) as u32,
            ol_i_id: rng.between(0, A_OL_I_ID) as u32,
        }
    }

    /// Run constants from a seed, obeying clause 2.1.6.1 against the load's
    /// C_LAST.
    pub fn for_run(seed: u64, c_last_load: u32) -> Self {
        let mut rng = Xoshiro256StarStar::seed_from_u64(mix64(seed ^ 0x0072_0075_006e));
        let candidates: Vec<u32> = (0..=A_C_LAST as u32)
            .filter(|&c| c_delta_is_valid(c_last_load, c))
            .collect();
        // Every C-Load in [0, 255] has valid C-Runs: at least one of
        // C-Load ± 65..=119 lies in [0, 255].
        let c_last = candidates
            .get(rng.below(candidates.len().max(1) as u64) as usize)
            .copied()
            .unwrap_or((c_last_load + 65) % 256);
        Self {
            c_last,
            c_id: rng.between(0, A_C_ID) as u32,
            ol_i_id: rng.between(0, A_OL_I_ID) as u32,
        }
    }
}

/// Clause 2.1.6.1: |C-Run − C-Load| in [65, 119], not 96 nor 112.
pub fn c_delta_is_valid(c_load: u32, c_run: u32) -> bool {
    let delta = c_load.abs_diff(c_run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The ten syllables of clause 4.3.2.3.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` in 0..=999: its three digits index the
/// syllables (clause 4.3.2.3).
pub fn last_name(n: u32) -> String {
    debug_assert!(n <= 999);
    let mut s = String::with_capacity(15);
    s.push_str(SYLLABLES[(n / 100 % 10) as usize]);
    s.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    s.push_str(SYLLABLES[(n % 10) as usize]);
    s
}

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A random a-string of length in `lo..=hi` (clause 4.3.2.2).
pub fn astring<R: Rng64>(rng: &mut R, lo: usize, hi: usize) -> String {
    let len = rng.between(lo as u64, hi as u64) as usize;
    (0..len)
        .map(|_| char::from(ALPHANUMERIC[rng.below(ALPHANUMERIC.len() as u64) as usize]))
        .collect()
}

/// A random n-string (digits) of length in `lo..=hi`.
pub fn nstring<R: Rng64>(rng: &mut R, lo: usize, hi: usize) -> String {
    let len = rng.between(lo as u64, hi as u64) as usize;
    (0..len).map(|_| char::from(b'0' + rng.below(10) as u8)).collect()
}

/// A zip code: four random digits and "11111" (clause 4.3.2.7).
pub fn zip<R: Rng64>(rng: &mut R) -> String {
    let mut s = nstring(rng, 4, 4);
    s.push_str("11111");
    s
}

/// I_DATA / S_DATA: an a-string of 26..=50, in 10 % of rows with
/// "ORIGINAL" at a random position (clause 4.3.3.1).
pub fn data_string<R: Rng64>(rng: &mut R) -> String {
    let mut s = astring(rng, 26, 50);
    if rng.percent(10) {
        let pos = rng.between(0, (s.len() - 8) as u64) as usize;
        s.replace_range(pos..pos + 8, "ORIGINAL");
    }
    s
}

/// A tax rate in 0.0000..=0.2000, in ten-thousandths.
pub fn tax<R: Rng64>(rng: &mut R) -> u16 {
    rng.between(0, 2000) as u16
}

/// A seeded generator for one part of the data: the same `(seed, parts)`
/// give the same stream whatever thread or order generates it.
pub fn stream(seed: u64, parts: &[u64]) -> Xoshiro256StarStar {
    let mut h = mix64(seed);
    for &p in parts {
        h = mix64(h ^ p.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
    Xoshiro256StarStar::seed_from_u64(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let c = NurandConstants::for_load(1);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, A_C_ID, u64::from(c.c_id), 1, 3000);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1;
        }
        // Uniform would give 100 per id; NURand's OR makes some ids far
        // hotter than others.
        let max = *hits.iter().max().unwrap_or(&0);
        let min = *hits[1..].iter().min().unwrap_or(&0);
        assert!(max > 3 * min, "max {max} min {min}");
        for _ in 0..10_000 {
            let v = nurand(&mut rng, A_OL_I_ID, 7911, 1, 100_000);
            assert!((1..=100_000).contains(&v));
            let v = nurand(&mut rng, A_C_LAST, 223, 0, 999);
            assert!(v <= 999);
        }
    }

    #[test]
    fn run_c_last_obeys_the_delta_rule_for_every_load_value() {
        for c_load in 0..=255 {
            for seed in 0..4 {
                let run = NurandConstants::for_run(seed, c_load);
                assert!(c_delta_is_valid(c_load, run.c_last), "load {c_load} run {}", run.c_last);
            }
        }
        assert!(!c_delta_is_valid(100, 196));
        assert!(!c_delta_is_valid(200, 88));
        assert!(c_delta_is_valid(157, 223));
        assert!(!c_delta_is_valid(0, 64));
        assert!(!c_delta_is_valid(0, 120));
    }

    #[test]
    fn last_names_are_the_spec_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert_eq!(last_name(40), "BARPRESBAR");
    }

    #[test]
    fn data_strings_carry_original_about_one_in_ten() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(5);
        let n = (0..10_000)
            .filter(|_| data_string(&mut rng).contains("ORIGINAL"))
            .count();
        assert!((800..1200).contains(&n), "{n}");
    }
}
