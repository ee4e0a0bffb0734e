//! The editor page's logic, without DOM or GPU: share links (the source deflated and
//! base64url-encoded into the URL, with a limit), local-storage draft keys, and the
//! explanation of a wrong matmul result (which elements differ, expected and got).

use cpu_kernels::matmul::{MatmulSize, Reference};
use cpu_kernels::verify::{compare, Precision};

/// Longest share code we put in a URL. Browsers and hosts accept far longer URLs, but chat
/// apps and mail clients cut around 8 000 characters; 6 000 leaves room for the rest.
pub const MAX_SHARE_CHARS: usize = 6000;
/// Longest source text a share code may unpack to (a guard against a crafted link).
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// The compressed source needs `chars` characters, over the limit.
    TooLong { chars: usize, limit: usize },
    /// The code in the link is not a share code (cut, or typed by hand).
    Corrupt,
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let digits: Option<Vec<u32>> = s
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32))
        .collect();
    for chunk in digits?.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | (d << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// The share code of `source`: raw deflate, then base64url (safe in a URL as is).
pub fn share_code(source: &str) -> Result<String, ShareError> {
    let packed = miniz_oxide::deflate::compress_to_vec(source.as_bytes(), 9);
    let code = base64url(&packed);
    if code.len() > MAX_SHARE_CHARS {
        return Err(ShareError::TooLong {
            chars: code.len(),
            limit: MAX_SHARE_CHARS,
        });
    }
    Ok(code)
}

/// The source in a share code; never panics on a damaged or hostile code.
pub fn source_from_code(code: &str) -> Result<String, ShareError> {
    if code.len() > MAX_SHARE_CHARS {
        return Err(ShareError::Corrupt);
    }
    let packed = unbase64url(code).ok_or(ShareError::Corrupt)?;
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_SOURCE_BYTES)
        .map_err(|_| ShareError::Corrupt)?;
    String::from_utf8(bytes).map_err(|_| ShareError::Corrupt)
}

/// Local-storage key of the draft of kernel or puzzle `id`.
pub fn draft_key(kind: &str, id: &str) -> String {
    format!("gpu-playground.draft.{kind}.{id}")
}

/// One wrong element of C.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub index: usize,
    pub row: u32,
    pub col: u32,
    pub expected: f64,
    pub got: f32,
}

/// Which elements of C are outside the verification bound (the same rule as the ladder's
/// check, element by element): how many, and the first `max` in row-major order.
pub fn differences(
    size: MatmulSize,
    got: &[f32],
    reference: &Reference,
    precision: Precision,
    max: usize,
) -> (usize, Vec<Difference>) {
    let mut count = 0;
    let mut first = Vec::new();
    for (i, (&r, &mag)) in reference.value.iter().zip(&reference.magnitude).enumerate() {
        let one = Reference {
            value: vec![r],
            magnitude: vec![mag],
            reduction_len: reference.reduction_len,
            max_abs_input: reference.max_abs_input,
        };
        let g = got.get(i).copied().unwrap_or(f32::NAN);
        if !compare(&[g], &one, precision).ok {
            count += 1;
            if first.len() < max {
                let n = size.n.max(1);
                first.push(Difference {
                    index: i,
                    row: i as u32 / n,
                    col: i as u32 % n,
                    expected: r,
                    got: g,
                });
            }
        }
    }
    (count, first)
}

/// A message of the browser's WGSL compiler that names a place: `:line:column error: text`
/// (how Chromium's compiler writes them into the validation error). Lines and columns are
/// 1-based as the compiler gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedMessage {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// Finds the placed messages in a shader-compile error text, so the editor can underline
/// them beside naga's own.
pub fn placed_messages(text: &str) -> Vec<PlacedMessage> {
    fn number(s: &str) -> Option<(u32, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        Some((s[..end].parse().ok()?, &s[end..]))
    }
    // `L:C error: text` at the start of `s`.
    fn placed(s: &str) -> Option<PlacedMessage> {
        let (line, s) = number(s)?;
        let (column, s) = number(s.strip_prefix(':')?)?;
        let s = s.strip_prefix(' ')?;
        let m = s
            .strip_prefix("error:")
            .or_else(|| s.strip_prefix("warning:"))?;
        Some(PlacedMessage {
            line: line.max(1),
            column: column.max(1),
            message: m.trim().to_string(),
        })
    }
    text.lines()
        .filter_map(|l| l.match_indices(':').find_map(|(i, _)| placed(&l[i + 1..])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpu_kernels::matmul;

    #[test]
    fn share_codes_round_trip_any_text() {
        for src in [
            "",
            "a",
            "ab",
            "abc",
            "// 中文注释 😀\nfn main() {}\n",
            &"x".repeat(10_000),
        ] {
            let code = share_code(src).expect("fits");
            assert!(code
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(source_from_code(&code).as_deref(), Ok(src));
        }
    }

    #[test]
    fn a_source_too_big_for_a_link_is_refused_with_its_size() {
        // Pseudo-random text barely compresses.
        let mut x = 12345u32;
        let noisy: String = (0..20_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                char::from(b'!' + ((x >> 16) % 90) as u8)
            })
            .collect();
        match share_code(&noisy) {
            Err(ShareError::TooLong { chars, limit }) => {
                assert!(chars > limit);
                assert_eq!(limit, MAX_SHARE_CHARS);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn damaged_codes_are_corrupt_not_a_panic() {
        let code = share_code("fn main() {}").expect("fits");
        for bad in [
            "!!!",
            "A",
            &code[..code.len() - 2],
            &"A".repeat(MAX_SHARE_CHARS + 1),
        ] {
            assert_eq!(source_from_code(bad), Err(ShareError::Corrupt), "{bad}");
        }
        // A deflate bomb is cut at the limit.
        let bomb = base64url(&miniz_oxide::deflate::compress_to_vec(
            &vec![b'a'; MAX_SOURCE_BYTES + 1],
            9,
        ));
        assert_eq!(source_from_code(&bomb), Err(ShareError::Corrupt));
    }

    #[test]
    fn browser_compiler_messages_are_placed() {
        let text = "Shader validation error: \n  ┌─ :3:18\nError while parsing WGSL: :3:18 error: expected expression\n    let x = 1.0 +;\n";
        assert_eq!(
            placed_messages(text),
            vec![PlacedMessage {
                line: 3,
                column: 18,
                message: "expected expression".into()
            }]
        );
        assert_eq!(placed_messages("no place here: 12: not a number"), vec![]);
        assert_eq!(placed_messages(""), vec![]);
    }

    #[test]
    fn differences_name_the_wrong_elements_in_order() {
        let size = MatmulSize::new(3, 4, 5);
        let (a, b) = size.inputs(7);
        let reference = matmul::reference(size, &a, &b);
        let mut got: Vec<f32> = reference.value.iter().map(|&v| v as f32).collect();
        assert_eq!(
            differences(size, &got, &reference, Precision::F32, 4),
            (0, vec![])
        );
        got[6] += 1.0; // row 1, col 2
        got[11] = f32::NAN; // row 2, col 3
        let (count, first) = differences(size, &got, &reference, Precision::F32, 1);
        assert_eq!(count, 2);
        assert_eq!(first.len(), 1);
        assert_eq!((first[0].index, first[0].row, first[0].col), (6, 1, 2));
        assert_eq!(first[0].expected, reference.value[6]);
        // A short output counts its missing elements as wrong.
        assert_eq!(
            differences(size, &got[..10], &reference, Precision::F32, 8).0,
            3
        );
    }
}
