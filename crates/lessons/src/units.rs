//! Reading numbers the way people type them ("7B", "1,024", "2.5e9") into the calculators'
//! fields. Writing them is the `numbers` crate's job.

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
}
