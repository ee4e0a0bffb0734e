//! Reading numbers the way people type them ("7B", "1,024", "2.5e9") into the calculators'
//! fields. Writing them is the `numbers` crate's job.

/// A finite number from a field: digits with optional `,`/`_` separators, a decimal point,
/// an exponent, and an optional suffix k (10³), M (10⁶), B or G (10⁹), T (10¹²), or the
/// Chinese units a Chinese reader types: 千 (10³), 万 (10⁴), 百万 (10⁶), 亿 (10⁸), 十亿 (10⁹),
/// 万亿 (10¹²) — "70亿" is 7 × 10⁹. Full-width characters (a Chinese input method's "７B",
/// "１，０２４") count as their ASCII forms.
/// Returns None for anything else (empty, words, NaN, infinity).
pub fn parse_number(s: &str) -> Option<f64> {
    const SUFFIXES: [(&str, f64); 12] = [
        ("万亿", 1e12),
        ("十亿", 1e9),
        ("百万", 1e6),
        ("亿", 1e8),
        ("万", 1e4),
        ("千", 1e3),
        ("k", 1e3),
        ("m", 1e6),
        ("b", 1e9),
        ("g", 1e9),
        ("t", 1e12),
        ("", 1.0),
    ];
    let s: String = s
        .trim()
        .chars()
        .map(|c| match c {
            // Full-width ASCII (U+FF01–FF5E) is ASCII shifted by 0xFEE0.
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            '、' => ',',
            c => c.to_ascii_lowercase(),
        })
        .filter(|c| *c != ',' && *c != '_' && *c != ' ')
        .collect();
    let (body, scale) = SUFFIXES
        .iter()
        .find_map(|(suffix, scale)| s.strip_suffix(suffix).map(|b| (b, *scale)))?;
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
        // As a Chinese reader types them.
        assert_eq!(parse_number("70亿"), Some(7e9));
        assert_eq!(parse_number("７B"), Some(7e9));
        assert_eq!(parse_number("１，０２４"), Some(1024.0));
        assert_eq!(parse_number("1.5万亿"), Some(1.5e12));
        assert_eq!(parse_number("175十亿"), Some(175e9));
        assert_eq!(parse_number("3万"), Some(3e4));
        assert_eq!(parse_number("２．５ｅ９"), Some(2.5e9));
        for bad in ["亿", "七十亿", "70 亿 亿", "7B亿"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
        assert_eq!(parse_count("2048"), Some(2048));
        assert_eq!(parse_count("2.5"), None);
        assert_eq!(parse_count("-1"), None);
    }
}
