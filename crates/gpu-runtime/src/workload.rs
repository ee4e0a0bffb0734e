//! Problem sizes: parsing what a user typed, and checking a size against device limits
//! before any GPU call is made.

use cpu_kernels::matmul::MatmulSize;

/// A schedule-probe launch: gx × gy workgroups, each busy for `work` iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleSize {
    pub gx: u32,
    pub gy: u32,
    pub work: u32,
}

/// A measuring-kernel launch (lessons): `elements` input floats, `threads` logical threads
/// (one output float each, except the copy kernel whose output has `elements` floats), and
/// one kernel-specific parameter (stride, iterations). See `shaders/measure_*.wgsl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureSize {
    pub elements: u32,
    pub threads: u32,
    pub param: u32,
}

/// A problem a kernel family solves, without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Matmul(MatmulSize),
    Schedule(ScheduleSize),
    Measure(MeasureSize),
}

/// A problem with its input data, ready to dispatch.
#[derive(Clone, Copy, Debug)]
pub enum Job<'a> {
    Matmul {
        size: MatmulSize,
        a: &'a [f32],
        b: &'a [f32],
    },
    /// Needs no input data: the probe only records when workgroups run.
    Schedule(ScheduleSize),
    /// A measuring kernel with its input floats (`input.len()` = `size.elements`).
    Measure { size: MeasureSize, input: &'a [f32] },
}

impl Job<'_> {
    pub fn workload(&self) -> Workload {
        match *self {
            Job::Matmul { size, .. } => Workload::Matmul(size),
            Job::Schedule(s) => Workload::Schedule(s),
            Job::Measure { size, .. } => Workload::Measure(size),
        }
    }
}

/// Why a size was refused. Each variant maps to a translated message in the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeError {
    /// The field is empty.
    Empty,
    /// Not a whole number ("abc", "1.5", "1e3").
    NotAnInteger,
    /// A whole number outside `min..=max` (0, negative, 99999).
    OutOfRange { min: u32, max: u32 },
    /// Fits the range, but a buffer would exceed a device limit.
    ExceedsLimit {
        /// The WebGPU name of the limit, e.g. `maxStorageBufferBindingSize`.
        limit: &'static str,
        limit_bytes: u64,
        needed_bytes: u64,
        /// The largest square size N (N×N×N) whose buffers fit.
        largest_square: u32,
    },
}

/// Parses one matrix dimension as typed by a user: a plain decimal integer in `min..=max`.
/// Surrounding whitespace is tolerated; signs, decimals, exponents and separators are not.
pub fn parse_dim(text: &str, min: u32, max: u32) -> Result<u32, SizeError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SizeError::NotAnInteger);
    }
    if t.starts_with('-') {
        return Err(SizeError::OutOfRange { min, max });
    }
    // Too many digits for u32 is simply out of range.
    let value: u64 = digits.parse().unwrap_or(u64::MAX);
    if value < min as u64 || value > max as u64 {
        return Err(SizeError::OutOfRange { min, max });
    }
    Ok(value as u32)
}

/// The device limits a workload has to respect (a subset of WebGPU's `GPUSupportedLimits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferLimits {
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
}

impl From<&wgpu::Limits> for BufferLimits {
    fn from(l: &wgpu::Limits) -> Self {
        Self {
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
        }
    }
}

impl Workload {
    /// Bytes of the largest single buffer this workload binds.
    pub fn largest_buffer_bytes(&self) -> u64 {
        match self {
            Workload::Matmul(s) => {
                let elems = s.a_len().max(s.b_len()).max(s.c_len()) as u64;
                elems * 4
            }
            Workload::Schedule(s) => 2 * 4 * s.gx as u64 * s.gy as u64,
            Workload::Measure(s) => 4 * (s.elements.max(s.threads) as u64).max(4),
        }
    }

    /// Checks every buffer against the device's limits, naming the limit that is exceeded
    /// and the largest square problem that would fit.
    pub fn check_limits(&self, limits: &BufferLimits) -> Result<(), SizeError> {
        let needed = self.largest_buffer_bytes();
        let (limit, limit_bytes) =
            if limits.max_storage_buffer_binding_size <= limits.max_buffer_size {
                (
                    "maxStorageBufferBindingSize",
                    limits.max_storage_buffer_binding_size,
                )
            } else {
                ("maxBufferSize", limits.max_buffer_size)
            };
        if needed <= limit_bytes {
            return Ok(());
        }
        let largest_square = ((limit_bytes / 4) as f64).sqrt().floor() as u32;
        Err(SizeError::ExceedsLimit {
            limit,
            limit_bytes,
            needed_bytes: needed,
            largest_square,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_dim_accepts_plain_integers_only() {
        assert_eq!(parse_dim("256", 1, 4096), Ok(256));
        assert_eq!(parse_dim(" 7 ", 1, 4096), Ok(7));
        assert_eq!(parse_dim("1", 1, 4096), Ok(1));
        assert_eq!(parse_dim("4096", 1, 4096), Ok(4096));
        assert_eq!(parse_dim("", 1, 4096), Err(SizeError::Empty));
        assert_eq!(parse_dim("abc", 1, 4096), Err(SizeError::NotAnInteger));
        assert_eq!(parse_dim("1.5", 1, 4096), Err(SizeError::NotAnInteger));
        assert_eq!(parse_dim("1e3", 1, 4096), Err(SizeError::NotAnInteger));
        assert_eq!(parse_dim("+5", 1, 4096), Err(SizeError::NotAnInteger));
        assert_eq!(parse_dim("-", 1, 4096), Err(SizeError::NotAnInteger));
        let range = Err(SizeError::OutOfRange { min: 1, max: 4096 });
        assert_eq!(parse_dim("0", 1, 4096), range);
        assert_eq!(parse_dim("-3", 1, 4096), range);
        assert_eq!(parse_dim("99999", 1, 4096), range);
        assert_eq!(parse_dim("99999999999999999999999", 1, 4096), range);
    }

    #[test]
    fn limit_check_names_the_limit_and_the_largest_fit() {
        let limits = BufferLimits {
            max_storage_buffer_binding_size: 128 << 20,
            max_buffer_size: 256 << 20,
        };
        let ok = Workload::Matmul(MatmulSize::new(4096, 4096, 4096));
        assert_eq!(ok.check_limits(&limits), Ok(()));
        let big = Workload::Matmul(MatmulSize::new(8192, 8192, 1));
        match big.check_limits(&limits) {
            Err(SizeError::ExceedsLimit {
                limit,
                largest_square,
                needed_bytes,
                ..
            }) => {
                assert_eq!(limit, "maxStorageBufferBindingSize");
                assert_eq!(needed_bytes, 8192 * 8192 * 4);
                assert_eq!(largest_square, 5792); // floor(sqrt(32 Mi floats))
            }
            other => panic!("expected a limit error, got {other:?}"),
        }
    }
}
