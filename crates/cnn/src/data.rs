//! The digits: the compact binary asset the page fetches, its seeded train/test split, the
//! per-epoch batch order and the pixels' scaling to f32.
//!
//! Asset format (all integers little-endian), version [`VERSION`]:
//!
//! | bytes                | what                                                   |
//! |----------------------|--------------------------------------------------------|
//! | 0..4                 | magic [`MAGIC`] (`GPMD`: GPU Playground MNIST digits)   |
//! | 4..8                 | version (u32)                                          |
//! | 8..12                | count of images (u32)                                  |
//! | 12..16               | rows per image (u32)                                   |
//! | 16..20               | columns per image (u32), equal to rows                 |
//! | 20..20+count·rows·cols | pixels, u8, image after image, row-major, 0 = paper  |
//! | next count bytes     | labels, u8, one per image, 0–9                          |
//! | last 4               | FNV-1a (32-bit) of every byte before it                 |
//!
//! The checksum covers the header too, so a flipped count is caught as well as a flipped
//! pixel. Decoding never panics: every way the bytes can be wrong is a [`DataError`].

use cpu_kernels::data::SplitMix64;

pub const MAGIC: [u8; 4] = *b"GPMD";
pub const VERSION: u32 = 1;
pub const HEADER_LEN: usize = 20;
pub const CHECKSUM_LEN: usize = 4;
/// Digits 0–9.
pub const CLASSES: usize = 10;
/// Largest side accepted (MNIST's is 28; a larger one is a corrupt header, not a dataset).
pub const MAX_SIDE: u32 = 64;
/// Most images accepted (MNIST has 70,000; the asset holds 10,000).
pub const MAX_COUNT: u32 = 100_000;
/// One image in [`TEST_DIVISOR`] is held out for testing: 1,000 of the 10,000.
pub const TEST_DIVISOR: usize = 10;

/// Why the asset's bytes were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataError {
    /// Fewer bytes than the header and checksum need (`len` of at least `need`).
    TooShort { len: usize, need: usize },
    /// The first four bytes are not [`MAGIC`] (something else was fetched, e.g. an HTML page).
    BadMagic([u8; 4]),
    /// A version this code cannot read.
    WrongVersion(u32),
    /// No images, or more than [`MAX_COUNT`].
    BadCount(u32),
    /// Rows or columns zero, above [`MAX_SIDE`], or unequal (the network's maps are square).
    BadShape { rows: u32, cols: u32 },
    /// The file's length does not match its header (`expected` bytes, `actual` present).
    WrongLength { expected: usize, actual: usize },
    /// The stored checksum differs from the bytes' (a truncated or altered download).
    ChecksumMismatch { stored: u32, computed: u32 },
    /// Image `index` has label `label`, not a digit.
    LabelOutOfRange { index: usize, label: u8 },
}

/// Decoded digits: `count` images of `rows × cols` u8 pixels and their labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digits {
    pub rows: usize,
    pub cols: usize,
    /// count · rows · cols bytes, image after image.
    pub pixels: Vec<u8>,
    pub labels: Vec<u8>,
}

/// 32-bit FNV-1a: simple to write again in JavaScript or Python if ever needed, and enough to
/// catch a damaged download (it is not a defence against tampering; the hashed file name is).
pub fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    // Callers check the length first; an out-of-range read would be a bug here, not bad input.
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Reads the asset. Checks, in order: length of the header, magic, version, count, shape,
/// total length, checksum, labels.
pub fn decode(bytes: &[u8]) -> Result<Digits, DataError> {
    let need = HEADER_LEN + CHECKSUM_LEN;
    if bytes.len() < need {
        return Err(DataError::TooShort {
            len: bytes.len(),
            need,
        });
    }
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if magic != MAGIC {
        return Err(DataError::BadMagic(magic));
    }
    let version = read_u32(bytes, 4);
    if version != VERSION {
        return Err(DataError::WrongVersion(version));
    }
    let count = read_u32(bytes, 8);
    if count == 0 || count > MAX_COUNT {
        return Err(DataError::BadCount(count));
    }
    let (rows, cols) = (read_u32(bytes, 12), read_u32(bytes, 16));
    if rows == 0 || rows > MAX_SIDE || cols != rows {
        return Err(DataError::BadShape { rows, cols });
    }
    // Bounded by the checks above (100,000 · 64 · 64 ≈ 4·10⁸): no overflow even on wasm32.
    let (count, rows, cols) = (count as usize, rows as usize, cols as usize);
    let n_pixels = count * rows * cols;
    let expected = HEADER_LEN + n_pixels + count + CHECKSUM_LEN;
    if bytes.len() != expected {
        return Err(DataError::WrongLength {
            expected,
            actual: bytes.len(),
        });
    }
    let body = expected - CHECKSUM_LEN;
    let stored = read_u32(bytes, body);
    let computed = fnv1a(&bytes[..body]);
    if stored != computed {
        return Err(DataError::ChecksumMismatch { stored, computed });
    }
    let pixels = bytes[HEADER_LEN..HEADER_LEN + n_pixels].to_vec();
    let labels = bytes[HEADER_LEN + n_pixels..body].to_vec();
    if let Some((index, &label)) = labels
        .iter()
        .enumerate()
        .find(|(_, &l)| l as usize >= CLASSES)
    {
        return Err(DataError::LabelOutOfRange { index, label });
    }
    Ok(Digits {
        rows,
        cols,
        pixels,
        labels,
    })
}

impl Digits {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The asset's bytes (for xtask). The caller builds `Digits` itself; pixels must hold
    /// `len() · rows · cols` bytes (checked: a wrong one is an error, not a bad file).
    pub fn encode(&self) -> Result<Vec<u8>, DataError> {
        let count = self.labels.len();
        let too_big = |v: usize| u32::try_from(v).map_or(true, |v| v > MAX_SIDE);
        if too_big(self.rows) || self.rows == 0 || self.cols != self.rows {
            return Err(DataError::BadShape {
                rows: self.rows as u32,
                cols: self.cols as u32,
            });
        }
        if count == 0 || count > MAX_COUNT as usize {
            return Err(DataError::BadCount(count.min(u32::MAX as usize) as u32));
        }
        let n_pixels = count * self.rows * self.cols;
        if self.pixels.len() != n_pixels {
            return Err(DataError::WrongLength {
                expected: n_pixels,
                actual: self.pixels.len(),
            });
        }
        if let Some((index, &label)) = self
            .labels
            .iter()
            .enumerate()
            .find(|(_, &l)| l as usize >= CLASSES)
        {
            return Err(DataError::LabelOutOfRange { index, label });
        }
        let mut out = Vec::with_capacity(HEADER_LEN + n_pixels + count + CHECKSUM_LEN);
        out.extend_from_slice(&MAGIC);
        for v in [VERSION, count as u32, self.rows as u32, self.cols as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.pixels);
        out.extend_from_slice(&self.labels);
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Ok(out)
    }

    /// Image `i`'s pixels.
    pub fn image(&self, i: usize) -> &[u8] {
        let n = self.rows * self.cols;
        &self.pixels[i * n..(i + 1) * n]
    }

    /// Images per class.
    pub fn class_counts(&self) -> [usize; CLASSES] {
        let mut c = [0; CLASSES];
        for &l in &self.labels {
            c[l as usize] += 1;
        }
        c
    }

    /// The images at `indices`, scaled to f32 and ready for the network.
    pub fn samples(&self, indices: &[u32]) -> Samples {
        let n = self.rows * self.cols;
        let mut x = Vec::with_capacity(indices.len() * n);
        let mut y = Vec::with_capacity(indices.len());
        for &i in indices {
            x.extend(self.image(i as usize).iter().map(|&p| scale(p)));
            y.push(self.labels[i as usize] as u32);
        }
        Samples {
            side: self.rows,
            x,
            y,
        }
    }
}

/// A pixel in [0, 1]: p / 255, correctly rounded in f32. The GPU gets these f32 values
/// uploaded (WGSL's division may be off by 2.5 ulp, so the kernels do not rescale).
pub fn scale(p: u8) -> f32 {
    p as f32 / 255.0
}

/// Square single-channel images scaled to [0, 1] with their labels: what a trainer takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    /// Side of every (square) image.
    pub side: usize,
    /// len · side² values, image after image, row-major.
    pub x: Vec<f32>,
    pub y: Vec<u32>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    pub fn image(&self, i: usize) -> &[f32] {
        let n = self.side * self.side;
        &self.x[i * n..(i + 1) * n]
    }
}

/// A permutation of 0..n from `seed` (Fisher–Yates, from the last position down).
pub fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// The seeded split of `count` images: (train, test) indices, test being `count /
/// TEST_DIVISOR` of them (1,000 of 10,000). Not stratified; the same seed gives the same split
/// everywhere. Each list is in the permutation's order.
pub fn split(count: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let order = permutation(count, seed ^ 0x5B11_7D16);
    let n_test = count / TEST_DIVISOR;
    let test = order[..n_test].to_vec();
    let train = order[n_test..].to_vec();
    (train, test)
}

/// The order training samples are drawn in: each epoch a fresh seeded permutation of 0..n,
/// epochs one after the other. Step s's batch is entries s·B … s·B + B − 1 of that endless
/// sequence, so a batch may run from the end of one epoch into the next.
#[derive(Clone, Debug)]
pub struct BatchOrder {
    n: usize,
    seed: u64,
    /// The epoch whose permutation is cached, and that permutation.
    cached: Option<(u64, Vec<u32>)>,
}

impl BatchOrder {
    pub fn new(n: usize, seed: u64) -> Self {
        Self {
            n,
            seed,
            cached: None,
        }
    }

    /// Epoch e's permutation.
    pub fn epoch(&self, e: u64) -> Vec<u32> {
        permutation(
            self.n,
            self.seed ^ 0xBA7C_0DE5 ^ e.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
    }

    /// Indices of step `step`'s batch of `batch` samples, into `out` (cleared first).
    pub fn batch(&mut self, step: u64, batch: usize, out: &mut Vec<u32>) {
        out.clear();
        if self.n == 0 {
            return;
        }
        let n = self.n as u64;
        for i in 0..batch as u64 {
            // Wrapping: a step count near 2⁶⁴ / batch is no reason to panic.
            let t = step.wrapping_mul(batch as u64).wrapping_add(i);
            let (e, pos) = (t / n, (t % n) as usize);
            if self.cached.as_ref().map(|(ce, _)| *ce) != Some(e) {
                self.cached = Some((e, self.epoch(e)));
            }
            if let Some((_, perm)) = &self.cached {
                out.push(perm[pos]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Digits {
        Digits {
            rows: 3,
            cols: 3,
            pixels: (0..27).map(|i| i * 9).collect(),
            labels: vec![0, 9, 4],
        }
    }

    #[test]
    fn round_trip_and_layout() {
        let d = tiny();
        let bytes = d.encode().unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + 27 + 3 + CHECKSUM_LEN);
        assert_eq!(&bytes[..4], b"GPMD");
        assert_eq!(bytes[8], 3);
        assert_eq!(decode(&bytes), Ok(d.clone()));
        assert_eq!(d.image(1), &[81, 90, 99, 108, 117, 126, 135, 144, 153]);
        // FNV-1a's published test value.
        assert_eq!(fnv1a(b"a"), 0xE40C_292C);
    }

    fn with(mut bytes: Vec<u8>, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        f(&mut bytes);
        bytes
    }

    /// Rewrites the checksum so that a test reaches the check after it.
    fn resum(b: &mut [u8]) {
        let body = b.len() - CHECKSUM_LEN;
        let s = fnv1a(&b[..body]);
        b[body..].copy_from_slice(&s.to_le_bytes());
    }

    #[test]
    fn every_fault_is_named() {
        let good = tiny().encode().unwrap();
        let cases: Vec<(Vec<u8>, DataError)> = vec![
            (vec![], DataError::TooShort { len: 0, need: 24 }),
            (
                good[..23].to_vec(),
                DataError::TooShort { len: 23, need: 24 },
            ),
            (
                with(good.clone(), |b| b[0] = b'<'),
                DataError::BadMagic(*b"<PMD"),
            ),
            (with(good.clone(), |b| b[4] = 2), DataError::WrongVersion(2)),
            (with(good.clone(), |b| b[8] = 0), DataError::BadCount(0)),
            (
                with(good.clone(), |b| b[11] = 1),
                DataError::BadCount(3 + (1 << 24)),
            ),
            (
                with(good.clone(), |b| b[12] = 0),
                DataError::BadShape { rows: 0, cols: 3 },
            ),
            (
                with(good.clone(), |b| b[12] = 65),
                DataError::BadShape { rows: 65, cols: 3 },
            ),
            (
                with(good.clone(), |b| b[16] = 2),
                DataError::BadShape { rows: 3, cols: 2 },
            ),
            (
                with(good.clone(), |b| b[8] = 4),
                DataError::WrongLength {
                    expected: 20 + 36 + 4 + 4,
                    actual: 54,
                },
            ),
            (
                good[..good.len() - 1].to_vec(),
                DataError::WrongLength {
                    expected: 54,
                    actual: 53,
                },
            ),
            (
                with(good.clone(), |b| b[25] ^= 1),
                DataError::ChecksumMismatch {
                    stored: fnv1a(&good[..50]),
                    computed: fnv1a(&with(good[..50].to_vec(), |b| b[25] ^= 1)),
                },
            ),
            (
                with(good.clone(), |b| {
                    b[48] = 10;
                    resum(b)
                }),
                DataError::LabelOutOfRange {
                    index: 1,
                    label: 10,
                },
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(decode(&bytes), Err(want));
        }
        let bad = Digits {
            labels: vec![0, 1],
            ..tiny()
        };
        assert!(matches!(bad.encode(), Err(DataError::WrongLength { .. })));
        let oblong = Digits { cols: 4, ..tiny() };
        assert!(matches!(oblong.encode(), Err(DataError::BadShape { .. })));
    }

    /// Whatever arrives (a cut-off download, flipped bits, another file), decode answers
    /// with digits or an error, never a panic.
    #[test]
    fn damaged_bytes_never_panic() {
        let good = tiny().encode().unwrap();
        for len in 0..good.len() {
            assert!(decode(&good[..len]).is_err());
        }
        let mut rng = SplitMix64::new(4);
        for _ in 0..2000 {
            let mut b = good.clone();
            for _ in 0..1 + rng.next_u64() % 4 {
                let at = (rng.next_u64() % b.len() as u64) as usize;
                b[at] = rng.next_u64() as u8;
            }
            let _ = decode(&b);
        }
        let noise: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
        assert!(decode(&noise).is_err());
        assert!(decode(b"<!doctype html><html>").is_err());
    }

    #[test]
    fn split_is_seeded_and_disjoint() {
        let (train, test) = split(10_000, 1);
        assert_eq!((train.len(), test.len()), (9_000, 1_000));
        assert_eq!(split(10_000, 1), (train.clone(), test.clone()));
        assert_ne!(split(10_000, 2).1, test);
        let mut all: Vec<u32> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn batches_walk_seeded_epochs() {
        let mut o = BatchOrder::new(10, 7);
        let (e0, e1) = (o.epoch(0), o.epoch(1));
        assert_ne!(e0, e1);
        let mut sorted = e1.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        let mut b = Vec::new();
        // Step 2 of batch 4: positions 8, 9 of epoch 0, then 0, 1 of epoch 1.
        o.batch(2, 4, &mut b);
        assert_eq!(b, vec![e0[8], e0[9], e1[0], e1[1]]);
        o.batch(0, 3, &mut b);
        assert_eq!(b, e0[..3].to_vec());
        let mut again = Vec::new();
        BatchOrder::new(10, 7).batch(0, 3, &mut again);
        assert_eq!(again, b);
    }

    #[test]
    fn pixels_scale_to_unit_range() {
        assert_eq!(scale(0), 0.0);
        assert_eq!(scale(255), 1.0);
        let square = Digits {
            rows: 2,
            cols: 2,
            pixels: (0..12).map(|i| i * 20).collect(),
            labels: vec![0, 9, 4],
        };
        let s = square.samples(&[2, 0]);
        assert_eq!((s.len(), s.side), (2, 2));
        assert_eq!(s.y, vec![4, 0]);
        assert_eq!(
            s.image(0),
            &[160.0 / 255.0, 180.0 / 255.0, 200.0 / 255.0, 220.0 / 255.0]
        );
        assert_eq!(s.image(1)[1], 20.0 / 255.0);
    }
}
