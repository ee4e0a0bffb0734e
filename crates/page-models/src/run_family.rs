//! The kernel families the Run widget and the ladder page show (matrix multiply and
//! convolution): what differs between them — the stages, the size fields and their URL keys,
//! how the fields become a problem with named errors, and the shape written on the chart —
//! so the widget and the ladder are one component each. Pure, unit-tested natively.

use cpu_kernels::conv::{ConvShape, ConvShapeError};
use cpu_kernels::matmul::MatmulSize;
use gpu_runtime::conv::{self, ConvError, ConvStage};
use gpu_runtime::{parse_dim, BufferLimits, Family, KernelSpec, SizeError, Workload};

use crate::query::Query;

/// A family the ladder and the Run widget can show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunFamily {
    #[default]
    Matmul,
    Conv,
}

/// One size field: URL key, label (locale key), default text, accepted range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpec {
    pub key: &'static str,
    pub label_key: &'static str,
    pub default: &'static str,
    pub min: u32,
    pub max: u32,
}

const fn field(
    key: &'static str,
    label_key: &'static str,
    default: &'static str,
    min: u32,
    max: u32,
) -> FieldSpec {
    FieldSpec {
        key,
        label_key,
        default,
        min,
        max,
    }
}

/// Largest matmul dimension (the device's buffer limits may allow less).
pub const MATMUL_MAX_DIM: u32 = 8192;

const MATMUL_FIELDS: [FieldSpec; 3] = [
    field("m", "run.m", "256", 1, MATMUL_MAX_DIM),
    field("n", "run.n", "256", 1, MATMUL_MAX_DIM),
    field("k", "run.k", "256", 1, MATMUL_MAX_DIM),
];

/// Conv fields accept 0 where a size is counted, so `ConvShape::validate` names a zero size
/// itself ("h must be at least 1"); the upper bounds keep a typo from asking for terabytes.
pub(crate) const CONV_FIELDS_LIST: [FieldSpec; 10] = [
    field("n", "convrun.n", "2", 0, 64),
    field("h", "convrun.h", "17", 0, 4096),
    field("w", "convrun.w", "19", 0, 4096),
    field("c", "convrun.c", "3", 0, 2048),
    field("k", "convrun.k", "8", 0, 2048),
    field("r", "convrun.r", "3", 0, 31),
    field("s", "convrun.s", "3", 0, 31),
    field("stride", "convrun.stride", "1", 0, 16),
    field("pad", "convrun.pad", "1", 0, 64),
    field("dil", "convrun.dil", "1", 0, 16),
];

/// A stage of a family's ladder.
#[derive(Clone, Copy, Debug)]
pub enum Stage {
    Matmul(&'static KernelSpec),
    Conv(ConvStage),
}

/// Stages are equal when their ids are (a kernel spec is one per id).
impl PartialEq for Stage {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Stage {
    pub fn id(&self) -> &'static str {
        match self {
            Stage::Matmul(k) => k.id,
            Stage::Conv(s) => s.id(),
        }
    }

    pub fn title_key(&self) -> String {
        match self {
            Stage::Matmul(k) => k.title_key.to_string(),
            Stage::Conv(s) => format!("kernel.{}.title", s.id()),
        }
    }

    pub fn summary_key(&self) -> String {
        match self {
            Stage::Matmul(k) => k.summary_key.to_string(),
            Stage::Conv(s) => format!("kernel.{}.summary", s.id()),
        }
    }

    pub fn why_key(&self) -> String {
        format!("kernel.{}.why", self.id())
    }

    /// The kernels the stage may dispatch: their sources are shown, their features decide
    /// whether it runs here.
    pub fn kernels(&self) -> Vec<&'static KernelSpec> {
        match self {
            Stage::Matmul(k) => vec![k],
            Stage::Conv(s) => s.kernels(),
        }
    }

    /// The kernel whose source is compared with the previous stage's (its first).
    pub fn main_kernel(&self) -> Option<&'static KernelSpec> {
        self.kernels().first().copied()
    }

    pub fn family(&self) -> RunFamily {
        match self {
            Stage::Matmul(_) => RunFamily::Matmul,
            Stage::Conv(_) => RunFamily::Conv,
        }
    }
}

/// A problem ready to run: the family's sizes, all valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    Matmul(MatmulSize),
    Conv(ConvShape),
}

impl Problem {
    pub fn flops(&self) -> f64 {
        match self {
            Problem::Matmul(s) => s.flops(),
            Problem::Conv(s) => s.flops(),
        }
    }

    /// The shape as the chart's caption writes it (digits and symbols only).
    pub fn chart_shape(&self) -> String {
        match self {
            Problem::Matmul(s) => format!("{}×{}×{}", s.m, s.n, s.k),
            Problem::Conv(s) => format!(
                "{}×{}×{}×{} → {}, {}×{} /{} +{} ·{}",
                s.n, s.h, s.w, s.c, s.k, s.r, s.s, s.stride, s.pad, s.dilation
            ),
        }
    }
}

/// Why a field's text is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    Size(SizeError),
    /// A named shape error that belongs to this field (a zero size, stride or dilation).
    Shape(ConvShapeError),
}

/// The fields read: one error slot per field, the whole-shape error (if any), the problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub fields: Vec<Option<FieldError>>,
    pub shape_error: Option<ConvShapeError>,
    pub problem: Option<Problem>,
}

/// Why a valid problem cannot run on this device or stage (checked before any GPU call).
#[derive(Clone, Debug, PartialEq)]
pub enum LimitError {
    Matmul(SizeError),
    Conv(ConvError),
}

/// The family named by `family=` in the URL; an unknown value is returned as `Err(value)`
/// (the page names it and shows matrix multiply).
pub fn family_from_query(query: &Query) -> Result<RunFamily, String> {
    match query.get("family") {
        None | Some("") | Some("matmul") => Ok(RunFamily::Matmul),
        Some("conv") => Ok(RunFamily::Conv),
        Some(other) => Err(other.chars().take(40).collect()),
    }
}

impl RunFamily {
    pub const ALL: [RunFamily; 2] = [RunFamily::Matmul, RunFamily::Conv];
    /// The conv ladder's fields (the conv race reuses them under other URL keys).
    pub const CONV_FIELDS: &'static [FieldSpec; 10] = &CONV_FIELDS_LIST;

    pub fn id(self) -> &'static str {
        match self {
            RunFamily::Matmul => "matmul",
            RunFamily::Conv => "conv",
        }
    }

    /// Locale key of its name (the family switch) and of its ladder's heading.
    pub fn name_key(self) -> &'static str {
        match self {
            RunFamily::Matmul => "ladder.family.matmul",
            RunFamily::Conv => "ladder.family.conv",
        }
    }

    pub fn heading_key(self) -> &'static str {
        match self {
            RunFamily::Matmul => "ladder.heading",
            RunFamily::Conv => "convrun.heading",
        }
    }

    /// Locale keys of "Run all"'s intro and of the tolerance note under a result.
    pub fn run_all_intro_key(self) -> &'static str {
        match self {
            RunFamily::Matmul => "ladder.run_all.intro",
            RunFamily::Conv => "convrun.run_all.intro",
        }
    }

    pub fn tolerance_key(self) -> &'static str {
        match self {
            RunFamily::Matmul => "run.note_tolerance",
            RunFamily::Conv => "convrun.note_tolerance",
        }
    }

    /// The ladder, numbered from 1.
    pub fn stages(self) -> Vec<(usize, Stage)> {
        match self {
            RunFamily::Matmul => KernelSpec::ladder(Family::Matmul)
                .map(|(n, k)| (n, Stage::Matmul(k)))
                .collect(),
            RunFamily::Conv => ConvStage::ALL
                .iter()
                .enumerate()
                .map(|(i, s)| (i + 1, Stage::Conv(*s)))
                .collect(),
        }
    }

    pub fn stage(self, id: &str) -> Option<(usize, Stage)> {
        self.stages().into_iter().find(|(_, s)| s.id() == id)
    }

    /// The stage before `stage` in this ladder.
    pub fn previous(self, stage: &Stage) -> Option<Stage> {
        let all = self.stages();
        let i = all.iter().position(|(_, s)| s.id() == stage.id())?;
        i.checked_sub(1).map(|j| all[j].1)
    }

    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            RunFamily::Matmul => &MATMUL_FIELDS,
            RunFamily::Conv => Self::CONV_FIELDS,
        }
    }

    /// The fields' text as the URL has it (defaults where absent).
    pub fn field_values(self, query: &Query) -> Vec<String> {
        self.fields()
            .iter()
            .map(|f| query.get(f.key).unwrap_or(f.default).to_string())
            .collect()
    }

    /// Reads the fields: each checked alone, then (conv) the whole shape by
    /// `ConvShape::validate`, its error put on the field it names when there is one.
    pub fn parse(self, values: &[String]) -> Parsed {
        self.parse_with(self.fields(), values)
    }

    /// [`Self::parse`] with other field specs in the same order (other URL keys or defaults).
    pub fn parse_with(self, specs: &[FieldSpec], values: &[String]) -> Parsed {
        let nums: Vec<Result<u32, SizeError>> = specs
            .iter()
            .enumerate()
            .map(|(i, f)| parse_dim(values.get(i).map_or("", |v| v.as_str()), f.min, f.max))
            .collect();
        let mut fields: Vec<Option<FieldError>> = nums
            .iter()
            .map(|r| r.as_ref().err().map(|e| FieldError::Size(e.clone())))
            .collect();
        let ok: Option<Vec<u32>> = nums.iter().map(|r| r.as_ref().ok().copied()).collect();
        let Some(v) = ok else {
            return Parsed {
                fields,
                shape_error: None,
                problem: None,
            };
        };
        match self {
            RunFamily::Matmul => Parsed {
                fields,
                shape_error: None,
                problem: Some(Problem::Matmul(MatmulSize::new(v[0], v[1], v[2]))),
            },
            RunFamily::Conv => {
                let shape =
                    ConvShape::new(v[0], v[3], v[1], v[2], v[4], v[5], v[6]).with(v[7], v[8], v[9]);
                match shape.validate() {
                    Ok(_) => Parsed {
                        fields,
                        shape_error: None,
                        problem: Some(Problem::Conv(shape)),
                    },
                    Err(e) => {
                        let owner = match e {
                            ConvShapeError::ZeroSize(name) => Some(name),
                            ConvShapeError::ZeroStep("dilation") => Some("dil"),
                            ConvShapeError::ZeroStep(name) => Some(name),
                            _ => None,
                        };
                        // The conv fields' order: n, h, w, c, k, r, s, stride, pad, dil.
                        let order = ["n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil"];
                        match owner.and_then(|k| order.iter().position(|f| *f == k)) {
                            Some(i) => {
                                fields[i] = Some(FieldError::Shape(e));
                                Parsed {
                                    fields,
                                    shape_error: None,
                                    problem: None,
                                }
                            }
                            None => Parsed {
                                fields,
                                shape_error: Some(e),
                                problem: None,
                            },
                        }
                    }
                }
            }
        }
    }

    /// The problem in the URL (defaults where absent), if it is valid.
    pub fn problem_from_query(self, query: &Query) -> Option<Problem> {
        self.parse(&self.field_values(query)).problem
    }
}

/// Checks a problem against the device's limits and the stage's own constraints (conv:
/// `conv::check`'s named errors) before any GPU call. `limits` are the adapter's buffer
/// limits; the workgroup count limit is WebGPU's guaranteed minimum.
pub fn check_limits(stage: &Stage, problem: &Problem, limits: &BufferLimits) -> Option<LimitError> {
    match (stage, problem) {
        (Stage::Matmul(_), Problem::Matmul(s)) => Workload::Matmul(*s)
            .check_limits(limits)
            .err()
            .map(LimitError::Matmul),
        (Stage::Conv(st), Problem::Conv(s)) => {
            let mut l = gpu_runtime::wgpu::Limits::downlevel_defaults();
            l.max_storage_buffer_binding_size = limits.max_storage_buffer_binding_size;
            l.max_buffer_size = limits.max_buffer_size;
            l.max_compute_workgroups_per_dimension = 65535;
            conv::check(*st, s, &l).err().map(LimitError::Conv)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(s)
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn family_from_the_url() {
        assert_eq!(family_from_query(&q("")), Ok(RunFamily::Matmul));
        assert_eq!(
            family_from_query(&q("family=matmul")),
            Ok(RunFamily::Matmul)
        );
        assert_eq!(family_from_query(&q("family=conv")), Ok(RunFamily::Conv));
        assert_eq!(family_from_query(&q("family=fft")), Err("fft".to_string()));
    }

    #[test]
    fn conv_ladder_is_the_five_stages_in_order() {
        let ids: Vec<&str> = RunFamily::Conv
            .stages()
            .iter()
            .map(|(_, s)| s.id())
            .collect();
        assert_eq!(
            ids,
            [
                "conv-direct",
                "conv-tiled",
                "conv-im2col-gemm",
                "conv-implicit-gemm",
                "conv-pointwise"
            ]
        );
        let (n, tiled) = RunFamily::Conv.stage("conv-tiled").expect("stage");
        assert_eq!(n, 2);
        assert_eq!(
            RunFamily::Conv.previous(&tiled).map(|s| s.id()),
            Some("conv-direct")
        );
        assert_eq!(tiled.why_key(), "kernel.conv-tiled.why");
        assert_eq!(
            RunFamily::Conv
                .stage("conv-im2col-gemm")
                .map(|(_, s)| s.kernels().len()),
            Some(2)
        );
        // The matmul ladder is still the catalogue's.
        assert_eq!(RunFamily::Matmul.stages()[0].1.id(), "matmul-naive");
        assert!(RunFamily::Matmul.stage("conv-direct").is_none());
    }

    #[test]
    fn conv_fields_parse_into_a_shape() {
        let f = RunFamily::Conv;
        let values = f.field_values(&q("n=1&h=7&w=9&c=5&k=4&r=3&s=3&stride=2&pad=1&dil=1"));
        let p = f.parse(&values);
        assert!(p.fields.iter().all(Option::is_none));
        assert_eq!(
            p.problem,
            Some(Problem::Conv(
                ConvShape::new(1, 5, 7, 9, 4, 3, 3).with(2, 1, 1)
            ))
        );
        // Defaults where the URL says nothing.
        assert!(f.problem_from_query(&q("")).is_some());
    }

    #[test]
    fn conv_errors_are_named_at_their_field_or_for_the_shape() {
        let f = RunFamily::Conv;
        // A zero height: validate's own error, at the h field.
        let p = f.parse(&strings(&[
            "1", "0", "9", "3", "4", "3", "3", "1", "1", "1",
        ]));
        assert_eq!(
            p.fields[1],
            Some(FieldError::Shape(ConvShapeError::ZeroSize("h")))
        );
        assert_eq!(p.problem, None);
        // Zero dilation lands on the "dil" field.
        let p = f.parse(&strings(&[
            "1", "8", "9", "3", "4", "3", "3", "1", "1", "0",
        ]));
        assert_eq!(
            p.fields[9],
            Some(FieldError::Shape(ConvShapeError::ZeroStep("dilation")))
        );
        // A 7×7 filter over a 3×3 input without padding: the shape's error.
        let p = f.parse(&strings(&[
            "1", "3", "3", "1", "1", "7", "7", "1", "0", "1",
        ]));
        assert_eq!(
            p.shape_error,
            Some(ConvShapeError::FilterLargerThanInput {
                axis: "h",
                extent: 7,
                padded: 3
            })
        );
        // Text and range errors come first, per field.
        let p = f.parse(&strings(&[
            "x", "8", "9", "3", "4", "3", "3", "99", "1", "1",
        ]));
        assert_eq!(p.fields[0], Some(FieldError::Size(SizeError::NotAnInteger)));
        assert_eq!(
            p.fields[7],
            Some(FieldError::Size(SizeError::OutOfRange { min: 0, max: 16 }))
        );
    }

    #[test]
    fn limits_are_checked_per_stage() {
        let small = BufferLimits {
            max_storage_buffer_binding_size: 1 << 20,
            max_buffer_size: 1 << 20,
        };
        let shape = ConvShape::new(1, 64, 64, 64, 64, 3, 3).with(1, 1, 1);
        let direct = Stage::Conv(ConvStage::Direct);
        // x = 64·64·64 floats = 1 MiB: fits exactly; im2col's 4096 × 576 matrix does not.
        assert_eq!(check_limits(&direct, &Problem::Conv(shape), &small), None);
        assert!(matches!(
            check_limits(
                &Stage::Conv(ConvStage::Im2colGemm),
                &Problem::Conv(shape),
                &small
            ),
            Some(LimitError::Conv(ConvError::BufferTooLarge { .. }))
        ));
        assert_eq!(
            check_limits(
                &Stage::Conv(ConvStage::Pointwise),
                &Problem::Conv(shape),
                &small
            ),
            Some(LimitError::Conv(ConvError::NotPointwise))
        );
    }

    #[test]
    fn chart_shapes() {
        assert_eq!(
            Problem::Matmul(MatmulSize::new(1, 2, 3)).chart_shape(),
            "1×2×3"
        );
        assert_eq!(
            Problem::Conv(ConvShape::new(2, 3, 17, 19, 8, 3, 3).with(1, 1, 1)).chart_shape(),
            "2×17×19×3 → 8, 3×3 /1 +1 ·1"
        );
    }
}
