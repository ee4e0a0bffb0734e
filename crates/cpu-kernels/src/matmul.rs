//! Matrix multiply C = A·B with row-major A (M×K), B (K×N), C (M×N).

/// Problem size of a matrix multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatmulSize {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl MatmulSize {
    pub const fn new(m: u32, n: u32, k: u32) -> Self {
        Self { m, n, k }
    }

    pub fn a_len(&self) -> usize {
        self.m as usize * self.k as usize
    }

    pub fn b_len(&self) -> usize {
        self.k as usize * self.n as usize
    }

    pub fn c_len(&self) -> usize {
        self.m as usize * self.n as usize
    }

    /// Floating-point operations of one multiply (one multiply + one add per term).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Deterministic inputs (A, B) for this size: the seed picks the data, the size is mixed
    /// in so that different shapes never share a prefix of numbers by accident.
    pub fn inputs(&self, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let mix = seed ^ ((self.m as u64) << 42) ^ ((self.n as u64) << 21) ^ self.k as u64;
        (
            crate::data::random_vec(self.a_len(), mix),
            crate::data::random_vec(self.b_len(), mix.rotate_left(17) ^ 0xA5A5),
        )
    }
}

/// The reference result, accumulated in f64 so that its own rounding is negligible next to
/// the f32 kernels it judges. Also returns, per element, Σ|a_ik·b_kj|: the scale the
/// tolerance is measured against.
pub fn reference(size: MatmulSize, a: &[f32], b: &[f32]) -> Reference {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    assert_eq!(a.len(), m * k, "A must be M×K");
    assert_eq!(b.len(), k * n, "B must be K×N");
    let mut value = vec![0f64; m * n];
    let mut magnitude = vec![0f64; m * n];
    for i in 0..m {
        let c_row = i * n;
        for p in 0..k {
            let aip = a[i * k + p] as f64;
            let b_row = &b[p * n..(p + 1) * n];
            for (j, &bpj) in b_row.iter().enumerate() {
                let t = aip * bpj as f64;
                value[c_row + j] += t;
                magnitude[c_row + j] += t.abs();
            }
        }
    }
    Reference {
        value,
        magnitude,
        reduction_len: size.k,
        max_abs_input: max_abs(a, b),
    }
}

/// The reference for selected output elements only (row-major indices into C), for sizes
/// where the full O(M·N·K) reference would take too long on the visitor's CPU.
pub fn reference_at(size: MatmulSize, a: &[f32], b: &[f32], indices: &[usize]) -> Reference {
    let (n, k) = (size.n as usize, size.k as usize);
    assert_eq!(a.len(), size.a_len(), "A must be M×K");
    assert_eq!(b.len(), size.b_len(), "B must be K×N");
    let mut value = Vec::with_capacity(indices.len());
    let mut magnitude = Vec::with_capacity(indices.len());
    for &idx in indices {
        let (i, j) = (idx / n, idx % n);
        let (mut v, mut mag) = (0f64, 0f64);
        for p in 0..k {
            let t = a[i * k + p] as f64 * b[p * n + j] as f64;
            v += t;
            mag += t.abs();
        }
        value.push(v);
        magnitude.push(mag);
    }
    Reference {
        value,
        magnitude,
        reduction_len: size.k,
        max_abs_input: max_abs(a, b),
    }
}

/// Which output elements to check: all of them when the full reference is cheap (at most
/// `full_limit` multiply-adds), otherwise the four corners, the last row and column (where
/// edge guards live) and `samples` pseudo-random elements.
pub fn check_indices(
    size: MatmulSize,
    full_limit: u64,
    samples: usize,
    seed: u64,
) -> Option<Vec<usize>> {
    let macs = size.m as u64 * size.n as u64 * size.k as u64;
    if macs <= full_limit {
        return None;
    }
    let (m, n) = (size.m as usize, size.n as usize);
    let mut idx: Vec<usize> = vec![0, n - 1, (m - 1) * n, m * n - 1];
    idx.extend((0..n).step_by((n / 64).max(1)).map(|j| (m - 1) * n + j));
    idx.extend((0..m).step_by((m / 64).max(1)).map(|i| i * n + n - 1));
    let mut rng = crate::data::SplitMix64::new(seed);
    idx.extend((0..samples).map(|_| (rng.next_u64() % (m * n) as u64) as usize));
    idx.sort_unstable();
    idx.dedup();
    Some(idx)
}

/// An exact-enough result plus what is needed to judge a candidate against it.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The reference value of each output element.
    pub value: Vec<f64>,
    /// Σ|terms| of each output element: rounding error scales with it, not with the result.
    pub magnitude: Vec<f64>,
    /// Number of terms summed per element (K for a matmul).
    pub reduction_len: u32,
    /// Largest |input| (over A and B): scales the absolute error floor of f16 inputs.
    pub max_abs_input: f64,
}

fn max_abs(a: &[f32], b: &[f32]) -> f64 {
    a.iter().chain(b).fold(0f32, |m, x| m.max(x.abs())) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_2x2() {
        let size = MatmulSize::new(2, 2, 3);
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        let r = reference(size, &a, &b);
        assert_eq!(r.value, vec![58.0, 64.0, 139.0, 154.0]);
        assert_eq!(r.magnitude, r.value); // all terms positive
    }

    #[test]
    fn magnitude_counts_cancelling_terms() {
        let size = MatmulSize::new(1, 1, 2);
        let r = reference(size, &[1.0, -1.0], &[3.0, 3.0]);
        assert_eq!(r.value, vec![0.0]);
        assert_eq!(r.magnitude, vec![6.0]);
    }

    #[test]
    fn sampled_reference_matches_the_full_one() {
        let size = MatmulSize::new(37, 41, 19);
        let (a, b) = size.inputs(5);
        let full = reference(size, &a, &b);
        let idx = check_indices(size, 0, 50, 1).expect("sampling forced");
        assert!(idx.contains(&0) && idx.contains(&(37 * 41 - 1)));
        let part = reference_at(size, &a, &b, &idx);
        for (p, &i) in idx.iter().enumerate() {
            assert_eq!(part.value[p], full.value[i]);
            assert_eq!(part.magnitude[p], full.magnitude[i]);
        }
        assert_eq!(check_indices(size, u64::MAX, 50, 1), None);
    }

    #[test]
    fn inputs_are_reproducible_and_shape_dependent() {
        let s = MatmulSize::new(7, 13, 5);
        let (a, b) = s.inputs(1);
        assert_eq!(a.len(), 35);
        assert_eq!(b.len(), 65);
        assert_eq!((a.clone(), b), s.inputs(1));
        assert_ne!(a, MatmulSize::new(7, 14, 5).inputs(1).0);
    }
}
