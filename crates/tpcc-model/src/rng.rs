//! Seeded randomness for the TPC-C model, with no dependency.
//!
//! - [`Xoshiro256StarStar`]: xoshiro256** by Blackman and Vigna (2018), the
//!   generator behind transaction choices; seeded from one `u64` through
//!   SplitMix64, as its authors recommend.
//! - [`SplitMix64`]: Steele, Lea and Flood's SplitMix64; also used keyed by a
//!   hash of (seed, warehouse, district, order) to derive an order's
//!   attributes again later without storing them.
//! - Bounded integers use Lemire's multiply-and-reject method, so they are
//!   unbiased and depend only on integer arithmetic: a seed gives the same
//!   stream on every platform.
//! - [`nurand`] is TPC-C's non-uniform random function, clause 2.1.6.

/// A source of 64 random bits plus the bounded draws built on it.
pub trait Rng64 {
    fn next_u64(&mut self) -> u64;

    /// Uniform in `0..n`; `n` must be at least 1.
    fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        // Lemire, "Fast random integer generation in an interval" (2019).
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `lo..=hi` (TPC-C's `random(x, y)`).
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// TPC-C clause 2.1.6: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C)
/// % (y - x + 1)) + x. Parenthesised exactly as the spec: in Rust `+` binds
/// tighter than `|`.
pub fn nurand<R: Rng64 + ?Sized>(rng: &mut R, a: u64, c: u64, x: u64, y: u64) -> u64 {
    let r1 = rng.between(0, a);
    let r2 = rng.between(x, y);
    (((r1 | r2) + c) % (y - x + 1)) + x
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }
}

impl Rng64 for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }
}

/// SplitMix64's output function: a bijective 64-bit mixer.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoshiro256StarStar {
    s: [u64; 4],
}

impl Xoshiro256StarStar {
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        let s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        // SplitMix64 is a bijection of its counter, so four consecutive
        // outputs are never all zero (the one state xoshiro cannot leave).
        debug_assert!(s.iter().any(|&w| w != 0));
        Self { s }
    }
}

impl Rng64 for Xoshiro256StarStar {
    fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[rng.below(10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = Xoshiro256StarStar::seed_from_u64(99);
        let mut b = Xoshiro256StarStar::seed_from_u64(99);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
