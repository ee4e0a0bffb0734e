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

/// Rounds an f32 to the nearest IEEE binary16 (ties to even), returning its bits. Handles
/// subnormals, overflow to infinity and NaN. Used to upload f16 inputs.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x007f_ffff;
    if exp == 0xff {
        // Inf or NaN (keep NaN quiet and non-zero).
        return sign | 0x7c00 | if mant != 0 { 0x0200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00; // overflow → ∞
    }
    if e <= 0 {
        // Subnormal (or zero) in f16: shift the full significand into place and round.
        if e < -10 {
            return sign; // below half the smallest subnormal → ±0
        }
        let full = mant | 0x0080_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = full & ((1u32 << shift) - 1);
        let mut m = full >> shift;
        if rest > half || (rest == half && (m & 1) == 1) {
            m += 1;
        }
        return sign | m as u16;
    }
    let mut h = ((e as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (h & 1) == 1) {
        h += 1; // may carry into the exponent, which is the correct rounding (up to ∞)
    }
    sign | h as u16
}

/// The f32 value of IEEE binary16 bits (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f32;
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        0x1f if mant == 0.0 => sign * f32::INFINITY,
        0x1f => f32::NAN,
        _ => sign * (1.0 + mant / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[cfg(test)]
mod f16_tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(f32_to_f16_bits(0.0), 0x0000);
        assert_eq!(f32_to_f16_bits(-0.0), 0x8000);
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00); // rounds up to ∞
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert!(f16_bits_to_f32(f32_to_f16_bits(f32::NAN)).is_nan());
        assert_eq!(f32_to_f16_bits(2f32.powi(-24)), 0x0001); // smallest subnormal
        assert_eq!(f32_to_f16_bits(2f32.powi(-26)), 0x0000); // under half of it
                                                             // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: ties to even → 1.
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
    }

    #[test]
    fn every_f16_round_trips_and_rounding_is_nearest() {
        for h in 0u16..=0xffff {
            let x = f16_bits_to_f32(h);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f32_to_f16_bits(x), h, "{h:#06x} ({x})");
        }
        let mut rng = SplitMix64::new(3);
        for _ in 0..20000 {
            let x = rng.next_signed_unit() * 4.0;
            let r = f16_bits_to_f32(f32_to_f16_bits(x));
            // Within half an f16 ulp: relative 2^-11 for normals, 2^-25 absolute below.
            assert!(
                (r - x).abs() <= (x.abs() * 2f32.powi(-11)).max(2f32.powi(-25)),
                "{x} → {r}"
            );
        }
    }
}
