//! Deterministic pseudo-random data, so a failing case can be replayed from its seed.

/// SplitMix64: tiny, fast and good enough for test data; the same seed gives the same
/// numbers on every platform (native, wasm).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), built from the top 24 bits so every value is exact in f32.
    pub fn next_signed_unit(&mut self) -> f32 {
        let bits = (self.next_u64() >> 40) as u32; // 24 bits
        (bits as f32 / (1u32 << 23) as f32) - 1.0
    }
}

/// `len` values uniform in [-1, 1), reproducible from `seed`.
pub fn random_vec(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..len).map(|_| rng.next_signed_unit()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_data_and_in_range() {
        let a = random_vec(1000, 7);
        assert_eq!(a, random_vec(1000, 7));
        assert_ne!(a, random_vec(1000, 8));
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        // Not degenerate: both signs appear and the mean is near zero.
        let mean: f32 = a.iter().sum::<f32>() / a.len() as f32;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }
}
