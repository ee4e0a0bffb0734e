//! How the site writes numbers for people — one rule for every page: three significant digits
//! (rounded first, so 99.97 reads "100", not "100.0"), whole numbers from 1,000 up, and a unit
//! chosen so the digits stay few ("81.7 ms", not "0.0817 s"). So "21.0 ms" sits beside
//! "148 ms" (never "21.00 ms"), and a small rate reads "0.00123", never "0.00".
//!
//! Reading what people type is the other direction and lives with the calculators
//! (`lessons::units`). Everything here is pure and unit-tested; "–" stands for a value that
//! is not a number. [`median`] is the one summary of repeated runs that pages, lessons and
//! benchmarks report.

/// The median of the finite values (the mean of the middle two for an even count); None
/// when there is none. A run that could not be timed (NaN) is left out, not sorted somewhere.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// `v` with `digits` significant digits, for |v| below 10^digits (larger values are whole
/// numbers without separators; see [`number`] for separators).
pub fn sig(v: f64, digits: u32) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = digits.max(1) as i32;
    let decimals = |x: f64| (digits - 1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let scale = 10f64.powi(decimals(v) as i32);
    let r = (v * scale).round() / scale;
    format!("{r:.prec$}", prec = decimals(r))
}

/// A plain number: three significant digits, and thousands separators from 1,000 up.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v.abs() >= 999.5 {
        let s = count(v.abs().round() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else {
        sig(v, 3)
    }
}

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

/// "a / b" as a factor: "0.500×", "16.0×"; "–" when either side is zero (0 against 73,728
/// accesses has no meaningful factor, and "0.00×" would read as a rounding).
pub fn ratio(a: u64, b: u64) -> String {
    let r = a as f64 / b as f64;
    if a == 0 || b == 0 {
        "–".into()
    } else if r < 0.001 {
        format!("{r:.1e}×")
    } else {
        format!("{}×", number(r))
    }
}

/// Milliseconds as a bare number (the text around it says "ms"): "0.0421", "3.21", "21.0",
/// "1234" (no separator: a time this long is usually shown through [`duration`]).
pub fn ms(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x.abs() >= 999.5 {
        format!("{x:.0}")
    } else {
        sig(x, 3)
    }
}

/// Throughputs (steps/s, GFLOP/s, GB/s) as a bare number: "51,300", "2.35", "0.00123"
/// (separators as every other count of thousands on the site: 51300 steps/s beside
/// "9,569 steps" read as two kinds of number).
pub fn rate(x: f64) -> String {
    number(x)
}

/// A percentage of a fraction (0.4321 → "43.2"): three significant digits, whole from 100.
pub fn percent(fraction: f64) -> String {
    number(fraction * 100.0)
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
    let text = sig(v, 3);
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text} {unit}")
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
    // 999.96 ms rounds to "1000": say "1.00 s" instead.
    let text = sig(v, 3);
    if text == "1000" && unit != "min" {
        return duration(s * 1.0001);
    }
    format!("{text} {unit}")
}

fn scaled(b: f64, base: f64, units: &[&str]) -> String {
    if !b.is_finite() || b < 0.0 {
        return "–".into();
    }
    let mut v = b;
    let mut u = 0;
    while v >= base && u + 1 < units.len() {
        v /= base;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", units[0])
    } else {
        format!("{} {}", sig(v, 3), units[u])
    }
}

/// Bytes in decimal units (what GPU vendors print): "112 GB", "54.0 MB", "1.50 TB".
pub fn decimal_bytes(b: f64) -> String {
    scaled(b, 1000.0, &["B", "kB", "MB", "GB", "TB", "PB"])
}

/// Bytes in binary units: "104 GiB", "51.5 MiB", "128 MiB".
pub fn binary_bytes(b: f64) -> String {
    scaled(b, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
}

/// Bytes of a buffer in binary units: "128 MiB", "2.00 GiB", "100 B".
pub fn bytes(n: u64) -> String {
    binary_bytes(n as f64)
}

/// An expected value and what was got, each with four significant digits, or more (up to
/// nine) where four would print them alike: a wrong element never reads "-0.2140 -0.2140".
pub fn pair(expected: f64, got: f64) -> (String, String) {
    let mut out = (sig(expected, 4), sig(got, 4));
    for digits in 5..=9 {
        if out.0 != out.1 {
            break;
        }
        out = (sig(expected, digits), sig(got, digits));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_gets_the_digits_that_tell_it_apart() {
        assert_eq!(pair(2.5, 3.0), ("2.500".into(), "3.000".into()));
        assert_eq!(
            pair(-0.214_012_3, -0.214_045_6),
            ("-0.21401".into(), "-0.21405".into())
        );
        assert_eq!(
            pair(1.0, 1.000_000_2),
            ("1.0000000".into(), "1.0000002".into())
        );
        // Equal to nine digits (a rounding-level difference): nine digits, not more.
        assert_eq!(pair(1.0, 1.0 + 1e-12).0, "1.00000000");
        assert_eq!(pair(f64::NAN, 1.0), ("–".into(), "1.000".into()));
    }

    #[test]
    fn median_of_odd_even_unsorted_and_untimed_runs() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.5]), Some(7.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[f64::NAN, f64::INFINITY]), None);
        // One slow outlier does not move it.
        assert_eq!(median(&[1.0, 1.1, 900.0]), Some(1.1));
    }

    #[test]
    fn significant_digits_round_first() {
        assert_eq!(sig(99.97, 3), "100");
        assert_eq!(sig(9.999, 3), "10.0");
        assert_eq!(sig(21.0, 3), "21.0");
        assert_eq!(sig(0.0012345, 3), "0.00123");
        assert_eq!(sig(-2.345, 2), "-2.3");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(f64::NAN, 3), "–");
    }

    #[test]
    fn numbers_and_counts() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(65536), "65,536");
        assert_eq!(count(16777216), "16,777,216");
        assert_eq!(number(137_438_953_472.0), "137,438,953,472");
        assert_eq!(number(72.0), "72.0");
        assert_eq!(number(f64::INFINITY), "–");
        assert_eq!(number(99.99999), "100");
        assert_eq!(number(999.7), "1,000");
        assert_eq!(number(0.0123), "0.0123");
        assert_eq!(number(-1234.0), "-1,234");
        assert_eq!(percent(0.4321), "43.2");
    }

    #[test]
    fn times_and_rates_never_pad_with_zeros_or_round_to_zero() {
        assert_eq!(ms(0.0421), "0.0421");
        assert_eq!(ms(3.214), "3.21");
        assert_eq!(ms(21.0), "21.0");
        assert_eq!(ms(148.2), "148");
        assert_eq!(ms(1234.0), "1234");
        assert_eq!(rate(2.345), "2.35");
        assert_eq!(rate(0.00123), "0.00123");
        assert_eq!(sci(2.44e-8), "2.4e-8");
        assert_eq!(sci(0.0), "0");
    }

    #[test]
    fn rates_from_a_thousand_up_have_separators() {
        assert_eq!(rate(51300.0), "51,300");
        assert_eq!(rate(1_234_567.4), "1,234,567");
        assert_eq!(rate(999.4), "999");
        // 999.5 rounds to a thousand: written as one, with its separator.
        assert_eq!(rate(999.5), "1,000");
        assert_eq!(rate(-51300.0), "-51,300");
        assert_eq!(rate(f64::NAN), "–");
    }

    #[test]
    fn ratios_never_show_zero_for_a_real_difference() {
        assert_eq!(ratio(0, 73_728), "–");
        assert_eq!(ratio(73_728, 0), "–");
        assert_eq!(ratio(1, 2), "0.500×");
        assert_eq!(ratio(16, 1), "16.0×");
        assert_eq!(ratio(5, 73_728), "6.8e-5×");
    }

    #[test]
    fn units() {
        assert_eq!(decimal_bytes(112e9), "112 GB");
        assert_eq!(binary_bytes(112e9), "104 GiB");
        assert_eq!(decimal_bytes(54e6), "54.0 MB");
        assert_eq!(decimal_bytes(1.5e12), "1.50 TB");
        assert_eq!(decimal_bytes(512.0), "512 B");
        assert_eq!(decimal_bytes(f64::NAN), "–");
        assert_eq!(binary_bytes(201_326_592.0), "192 MiB");
        assert_eq!(bytes(134217728), "128 MiB");
        assert_eq!(bytes(2147483644), "2.00 GiB");
        assert_eq!(bytes(100), "100 B");
        assert_eq!(duration(24.5 / 300.0), "81.7 ms");
        assert_eq!(duration(70e-6), "70.0 µs");
        assert_eq!(duration(1.37438953472), "1.37 s");
        assert_eq!(duration(0.99996), "1.00 s");
        assert_eq!(duration(0.0), "0 s");
        assert_eq!(duration(4.0 * 365.25 * 86_400.0), "35,064 h");
        assert_eq!(duration(9000.0), "2.50 h");
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
