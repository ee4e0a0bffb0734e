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

/// A chart tick on a log time axis (decades in ms): as few digits as the value needs and one
/// unit per range, so "10 ms" sits beside "100 ms" and "1 s", never "10.00 ms".
pub fn tick_ms(ms: f64) -> String {
    if !ms.is_finite() || ms <= 0.0 {
        return "–".into();
    }
    let (v, unit) = if ms >= 1000.0 {
        (ms / 1000.0, "s")
    } else {
        (ms, "ms")
    };
    // Round to 3 significant digits, then drop trailing zeros.
    let decimals = (2 - v.log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text} {unit}")
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

    #[test]
    fn ticks_are_formatted_one_way() {
        let ticks: Vec<String> = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
            .iter()
            .map(|&t| tick_ms(t))
            .collect();
        assert_eq!(
            ticks,
            ["0.01 ms", "0.1 ms", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
        );
        assert_eq!(tick_ms(2.5), "2.5 ms");
        assert_eq!(tick_ms(f64::NAN), "–");
        assert_eq!(tick_ms(0.0), "–");
    }
}
