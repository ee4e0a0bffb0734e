//! Number formatting for the UI (pure, unit-tested).

/// 65536 → "65,536".
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Small relative errors: "2.4e-8"; exact zero stays "0".
pub fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !x.is_finite() {
        "∞".into()
    } else {
        format!("{x:.1e}")
    }
}

/// "a / b" as a factor: "0.50×", "12.00×"; "–" when either side is zero (0 against 73,728
/// accesses has no meaningful factor, and "0.00×" would read as a rounding).
pub fn ratio(a: u64, b: u64) -> String {
    let r = a as f64 / b as f64;
    if a == 0 || b == 0 {
        "–".into()
    } else if r < 0.01 {
        format!("{r:.1e}×")
    } else {
        format!("{r:.2}×")
    }
}

/// Milliseconds with sensible precision: "0.042", "3.21", "120".
pub fn ms(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x < 0.1 {
        format!("{x:.3}")
    } else if x < 100.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.0}")
    }
}

/// Throughputs: three significant digits.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Bytes in binary units: "128 MiB", "16 KiB", "100 B".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 || u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_never_show_zero_for_a_real_difference() {
        assert_eq!(ratio(0, 73_728), "–");
        assert_eq!(ratio(73_728, 0), "–");
        assert_eq!(ratio(1, 2), "0.50×");
        assert_eq!(ratio(16, 1), "16.00×");
        assert_eq!(ratio(5, 73_728), "6.8e-5×");
    }

    #[test]
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(65536), "65,536");
        assert_eq!(count(16777216), "16,777,216");
        assert_eq!(sci(2.44e-8), "2.4e-8");
        assert_eq!(sci(0.0), "0");
        assert_eq!(ms(0.0421), "0.042");
        assert_eq!(ms(3.214), "3.21");
        assert_eq!(ms(1234.0), "1234");
        assert_eq!(rate(51300.0), "51300");
        assert_eq!(rate(2.345), "2.35");
        assert_eq!(bytes(134217728), "128 MiB");
        assert_eq!(bytes(2147483644), "2.0 GiB");
        assert_eq!(bytes(100), "100 B");
    }
}
