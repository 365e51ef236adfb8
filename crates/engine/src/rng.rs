//! [`SplitMix64`]: the engine's one small seeded generator (Steele, Lea
//! and Flood 2014), for what needs reproducible noise but no statistical
//! strength: torn-write patterns of the power-loss disk, the calibration's
//! request offsets and fill bytes. Same seed, same sequence, on every
//! platform (integer arithmetic only).

/// See the module doc.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True or false, evenly.
    pub(crate) fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 0
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Fills `bytes` with the next words, little-endian.
    pub(crate) fn fill(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_sequence_and_fill_takes_its_words() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        let first = a.next_u64();
        assert_eq!(first, b.next_u64());
        assert_ne!(first, SplitMix64::new(8).next_u64());
        let mut bytes = [0u8; 12];
        a.fill(&mut bytes);
        let (w1, w2) = (b.next_u64().to_le_bytes(), b.next_u64().to_le_bytes());
        assert_eq!(&bytes[..8], &w1);
        assert_eq!(&bytes[8..], &w2[..4]);
        let u = a.unit();
        assert!((0.0..1.0).contains(&u));
    }
}
