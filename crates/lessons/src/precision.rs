//! Floating-point formats (the `precision` lesson): range, smallest normal and machine epsilon computed from
//! the exponent and mantissa widths, and rounding a value to each format.

/// A binary floating-point format with IEEE-style bias, subnormals and infinities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub name: &'static str,
    pub exponent_bits: u32,
    /// Stored fraction bits (the leading 1 is implicit).
    pub mantissa_bits: u32,
}

pub const FP32: Format = Format {
    name: "FP32",
    exponent_bits: 8,
    mantissa_bits: 23,
};
pub const TF32: Format = Format {
    name: "TF32",
    exponent_bits: 8,
    mantissa_bits: 10,
};
pub const FP16: Format = Format {
    name: "FP16",
    exponent_bits: 5,
    mantissa_bits: 10,
};
pub const BF16: Format = Format {
    name: "BF16",
    exponent_bits: 8,
    mantissa_bits: 7,
};

/// The formats the lesson compares.
pub const FORMATS: [Format; 4] = [FP32, TF32, FP16, BF16];

impl Format {
    /// Total bits: sign + exponent + mantissa (TF32 is stored in 32 bits but uses 19).
    pub fn bits(&self) -> u32 {
        1 + self.exponent_bits + self.mantissa_bits
    }
    fn bias(&self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }
    /// Largest finite value: (2 − 2^−m) · 2^bias.
    pub fn max(&self) -> f64 {
        (2.0 - 2f64.powi(-(self.mantissa_bits as i32))) * 2f64.powi(self.bias())
    }
    /// Smallest positive normal value: 2^(1 − bias).
    pub fn min_normal(&self) -> f64 {
        2f64.powi(1 - self.bias())
    }
    /// Smallest positive subnormal value: 2^(1 − bias − m).
    pub fn min_subnormal(&self) -> f64 {
        2f64.powi(1 - self.bias() - self.mantissa_bits as i32)
    }
    /// Gap between 1 and the next value: 2^−m.
    pub fn epsilon(&self) -> f64 {
        2f64.powi(-(self.mantissa_bits as i32))
    }
    /// Significant decimal digits, (m + 1)·log10 2.
    pub fn decimal_digits(&self) -> f64 {
        (self.mantissa_bits + 1) as f64 * 2f64.log10()
    }

    /// `x` rounded to the nearest value of this format (ties to even); values beyond the
    /// largest finite one become ±∞, tiny ones become subnormal or ±0.
    pub fn round(&self, x: f64) -> f64 {
        if !x.is_finite() || x == 0.0 {
            return x;
        }
        let a = x.abs();
        let exp_field = ((a.to_bits() >> 52) & 0x7ff) as i32;
        let exponent = (exp_field - 1023).max(1 - self.bias());
        let quantum = 2f64.powi(exponent - self.mantissa_bits as i32);
        let r = (a / quantum).round_ties_even() * quantum;
        let r = if r > self.max() { f64::INFINITY } else { r };
        r.copysign(x)
    }
}

/// Why a typed number cannot be rounded by the widget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedError {
    Empty,
    /// Not decimal notation at all ("abc", "1,5").
    NotANumber,
    /// "NaN": a value every format stores as NaN, so there is no rounding to show.
    NaN,
    /// "inf", "-Infinity": stored as infinity in every format, likewise.
    Infinite,
    /// A finite literal past f64's range ("1e309"), which f64 itself would round to infinity.
    TooLarge,
}

/// The number a learner typed into the rounding widget: a finite f64, or why not. Rust's
/// `f64::from_str` accepts "NaN", "inf" and "infinity" (any case, with a sign) and turns a
/// literal past f64's range into infinity; each case gets its own name here.
pub fn parse_typed(text: &str) -> Result<f64, TypedError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(TypedError::Empty);
    }
    let v = t.parse::<f64>().map_err(|_| TypedError::NotANumber)?;
    let word = t.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if v.is_nan() {
        Err(TypedError::NaN)
    } else if word.starts_with("inf") {
        Err(TypedError::Infinite)
    } else if v.is_infinite() {
        Err(TypedError::TooLarge)
    } else {
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_match_the_standards() {
        assert_eq!(FP16.max(), 65_504.0);
        assert_eq!(FP16.min_normal(), 6.103_515_625e-5);
        assert_eq!(FP16.min_subnormal(), 2f64.powi(-24));
        assert_eq!(FP16.epsilon(), 1.0 / 1024.0);
        assert_eq!(FP32.max(), f32::MAX as f64);
        assert_eq!(FP32.min_normal(), f32::MIN_POSITIVE as f64);
        assert_eq!(FP32.epsilon(), f32::EPSILON as f64);
        assert_eq!(BF16.epsilon(), 0.007_812_5);
        // BF16 keeps FP32's range: (2 − 2⁻⁷)·2¹²⁷ ≈ 3.39e38.
        assert_eq!(BF16.max(), (2.0 - 1.0 / 128.0) * 2f64.powi(127));
        assert_eq!(TF32.epsilon(), FP16.epsilon());
        assert_eq!(TF32.max(), (2.0 - 1.0 / 1024.0) * 2f64.powi(127));
        assert_eq!(
            (FP16.bits(), BF16.bits(), TF32.bits(), FP32.bits()),
            (16, 16, 19, 32)
        );
        assert!((FP16.decimal_digits() - 3.311).abs() < 1e-3);
    }

    #[test]
    fn rounding_by_hand() {
        // 1/3 = 0.0101…₂: FP16 keeps 11 significant bits → 0.333251953125.
        assert_eq!(FP16.round(1.0 / 3.0), 0.333_251_953_125);
        assert_eq!(BF16.round(1.0 / 3.0), 0.333_984_375);
        assert_eq!(FP32.round(0.1), 0.1f32 as f64);
        // Ties go to even: 1 + 2⁻¹¹ is halfway between 1 and 1 + 2⁻¹⁰.
        assert_eq!(FP16.round(1.0 + 2f64.powi(-11)), 1.0);
        assert_eq!(
            FP16.round(1.0 + 3.0 * 2f64.powi(-11)),
            1.0 + 2.0 * 2f64.powi(-10)
        );
        // Overflow: 65,519 rounds down to 65,504; 65,520 is the tie that goes to infinity.
        assert_eq!(FP16.round(65_519.0), 65_504.0);
        assert_eq!(FP16.round(65_520.0), f64::INFINITY);
        assert_eq!(FP16.round(-1e6), f64::NEG_INFINITY);
        assert_eq!(BF16.round(1e6), 999_424.0);
        // Subnormals and underflow.
        assert_eq!(FP16.round(2f64.powi(-24)), 2f64.powi(-24));
        assert_eq!(FP16.round(2f64.powi(-26)), 0.0);
        assert_eq!(FP16.round(-0.0).to_bits(), (-0.0f64).to_bits());
        assert!(FP16.round(f64::NAN).is_nan());
    }

    #[test]
    fn typed_numbers_are_finite_or_named() {
        assert_eq!(parse_typed(" 0.1 "), Ok(0.1));
        assert_eq!(parse_typed("-1e-6"), Ok(-1e-6));
        assert_eq!(parse_typed("1.7976931348623157e308"), Ok(f64::MAX));
        assert_eq!(parse_typed(""), Err(TypedError::Empty));
        assert_eq!(parse_typed("abc"), Err(TypedError::NotANumber));
        assert_eq!(parse_typed("1,5"), Err(TypedError::NotANumber));
        for nan in ["NaN", "nan", "-NaN", "+nan"] {
            assert_eq!(parse_typed(nan), Err(TypedError::NaN), "{nan}");
        }
        for inf in ["inf", "-inf", "Infinity", "+INFINITY"] {
            assert_eq!(parse_typed(inf), Err(TypedError::Infinite), "{inf}");
        }
        for big in ["1e309", "-2e400", "1e99999"] {
            assert_eq!(parse_typed(big), Err(TypedError::TooLarge), "{big}");
        }
    }
}
