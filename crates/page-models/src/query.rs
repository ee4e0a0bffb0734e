//! URL query state (`?lang=zh&m=256`): parsing and writing, pure so it is unit-tested.
//! Every view keeps its parameters here, so any state can be linked and embedded.

/// An ordered list of query parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses `?a=1&b=x%20y` (the leading `?` is optional). Malformed escapes are kept as
    /// typed; they are a user's input to be validated, not a reason to fail.
    pub fn parse(s: &str) -> Self {
        let s = s.strip_prefix('?').unwrap_or(s);
        Query(
            s.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets (or replaces) a parameter, keeping the order of the others.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes a parameter (if present).
    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// The parameters in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.set(key, value);
        self
    }

    /// `a=1&b=x%20y`, without the `?`.
    pub fn encode(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Percent-encodes one URL component (a query value, a path segment).
pub fn encode_component(s: &str) -> String {
    encode(s)
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let q = Query::default()
            .with("lang", "zh")
            .with("m", "2 56")
            .with("x", "a&b=c");
        let s = q.encode();
        assert_eq!(s, "lang=zh&m=2%2056&x=a%26b%3Dc");
        assert_eq!(Query::parse(&format!("?{s}")), q);
    }

    #[test]
    fn tolerates_junk() {
        let q = Query::parse("?m=%zz&&n&k=%E4%B8%AD&=v&t=%4&u=%中");
        assert_eq!(q.get("m"), Some("%zz"));
        assert_eq!(q.get("n"), Some(""));
        assert_eq!(q.get("k"), Some("中"));
        assert_eq!(q.get("t"), Some("%4"));
        assert_eq!(q.get("u"), Some("%中"));
        assert_eq!(q.get("missing"), None);
    }

    #[test]
    fn set_replaces_in_place() {
        let mut q = Query::parse("a=1&b=2");
        q.set("a", "3");
        assert_eq!(q.encode(), "a=3&b=2");
    }
}
