//! Reading numbers the way people type them ("7B", "1,024", "2.5e9") and writing byte and
//! time amounts in decimal and binary units, for the calculators' fields and results.

/// A finite number from a field: digits with optional `,`/`_` separators, a decimal point,
/// an exponent, and an optional suffix k (10³), M (10⁶), B or G (10⁹), T (10¹²).
/// Returns None for anything else (empty, words, NaN, infinity).
pub fn parse_number(s: &str) -> Option<f64> {
    let s: String = s
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && *c != ' ')
        .collect();
    let (body, scale) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1e3),
        'm' | 'M' => (&s[..s.len() - 1], 1e6),
        'b' | 'B' | 'g' | 'G' => (&s[..s.len() - 1], 1e9),
        't' | 'T' => (&s[..s.len() - 1], 1e12),
        _ => (s.as_str(), 1.0),
    };
    // Only plain decimal notation: `f64::from_str` would also accept "inf" and "NaN".
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
    {
        return None;
    }
    let v = body.parse::<f64>().ok()? * scale;
    v.is_finite().then_some(v)
}

/// A whole number from a field (as [`parse_number`], but it must be an integer ≥ 0).
pub fn parse_count(s: &str) -> Option<u64> {
    let v = parse_number(s)?;
    (v >= 0.0 && v.fract() == 0.0 && v <= 9.0e15).then_some(v as u64)
}

/// Three significant digits for 0 ≤ v < 1000, rounding first so that 99.97 reads "100",
/// not "100.0".
fn three_digits(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let decimals = |x: f64| (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let scale = 10f64.powi(decimals(v) as i32);
    let r = (v * scale).round() / scale;
    format!("{r:.prec$}", prec = decimals(r))
}

/// Bytes in decimal units (what GPU vendors print): "112 GB", "54.0 MB", "1.50 TB".
pub fn decimal_bytes(b: f64) -> String {
    if !b.is_finite() || b < 0.0 {
        return "–".into();
    }
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{} {}", three_digits(v), UNITS[u])
    }
}

/// Bytes in binary units: "104 GiB", "51.5 MiB".
pub fn binary_bytes(b: f64) -> String {
    if !b.is_finite() || b < 0.0 {
        return "–".into();
    }
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{} {}", three_digits(v), UNITS[u])
    }
}

/// Seconds with a unit that keeps three significant digits: "81.7 ms", "12.0 µs", "1.37 s",
/// "2.50 h", "35,064 h" (units are symbols, the same in every language).
pub fn duration(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "–".into();
    }
    if s == 0.0 {
        return "0 s".into();
    }
    let (v, unit) = if s < 1e-6 {
        (s * 1e9, "ns")
    } else if s < 1e-3 {
        (s * 1e6, "µs")
    } else if s < 1.0 {
        (s * 1e3, "ms")
    } else if s < 120.0 {
        (s, "s")
    } else if s < 7200.0 {
        (s / 60.0, "min")
    } else {
        return format!("{} h", number(s / 3600.0));
    };
    format!("{} {unit}", three_digits(v))
}

/// A plain number with three significant digits and thousands separators for large values.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v.abs() >= 1000.0 {
        let s = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else {
        three_digits(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_people_type() {
        assert_eq!(parse_number("7e9"), Some(7e9));
        assert_eq!(parse_number(" 7B "), Some(7e9));
        assert_eq!(parse_number("175b"), Some(175e9));
        assert_eq!(parse_number("25.6M"), Some(25.6e6));
        assert_eq!(parse_number("1,024"), Some(1024.0));
        assert_eq!(parse_number("1.5T"), Some(1.5e12));
        assert_eq!(parse_number("-3"), Some(-3.0));
        for bad in ["", "abc", "NaN", "inf", "1e999", "B", "7 billion", "0x10"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
        assert_eq!(parse_count("2048"), Some(2048));
        assert_eq!(parse_count("2.5"), None);
        assert_eq!(parse_count("-1"), None);
    }

    #[test]
    fn formats() {
        assert_eq!(decimal_bytes(112e9), "112 GB");
        assert_eq!(binary_bytes(112e9), "104 GiB");
        assert_eq!(decimal_bytes(54e6), "54.0 MB");
        assert_eq!(decimal_bytes(1.5e12), "1.50 TB");
        assert_eq!(decimal_bytes(512.0), "512 B");
        assert_eq!(decimal_bytes(f64::NAN), "–");
        assert_eq!(binary_bytes(201_326_592.0), "192 MiB");
        assert_eq!(duration(24.5 / 300.0), "81.7 ms");
        assert_eq!(duration(70e-6), "70.0 µs");
        assert_eq!(duration(1.37438953472), "1.37 s");
        assert_eq!(duration(0.0), "0 s");
        assert_eq!(duration(4.0 * 365.25 * 86_400.0), "35,064 h");
        assert_eq!(duration(9000.0), "2.50 h");
        assert_eq!(number(137_438_953_472.0), "137,438,953,472");
        assert_eq!(number(72.0), "72.0");
        assert_eq!(number(f64::INFINITY), "–");
        assert_eq!(number(99.99999), "100");
        assert_eq!(number(9.999), "10.0");
        assert_eq!(number(0.0123), "0.0123");
        assert_eq!(number(0.0), "0");
    }
}
