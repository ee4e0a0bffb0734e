//! The conv race's settings in the URL (`#/race?view=conv&batch=1&h=32&…&ccpu=im2col-simd&
//! cgpu=conv-tiled`): the shape fields (read like the conv ladder's, with `batch` for N so the
//! matmul race's `n` keeps its meaning), the CPU variant and the GPU stage. A bad shape field
//! is named at its field (nothing runs until it is fixed); a bad variant or stage is named
//! and replaced by its default. Pure.

use cpu_kernels::conv_variants::CpuConvVariant;
use gpu_runtime::conv::ConvStage;

use super::params::ParamIssue;
use crate::query::Query;
use crate::run_family::{FieldSpec, Parsed, RunFamily};

pub const DEFAULT_CPU: CpuConvVariant = CpuConvVariant::Im2colSimd;
/// Tiled direct: the stage the SIMT view steps through, and one every browser runs.
pub const DEFAULT_GPU: ConvStage = ConvStage::Tiled;

/// The conv race's shape fields: the ladder's, with N under `batch` and a default that takes
/// a software GPU and the naive CPU loop about a second.
pub const FIELDS: [FieldSpec; 10] = {
    let mut f = *RunFamily::CONV_FIELDS;
    f[0].key = "batch";
    f[0].default = "1";
    f[1].default = "32";
    f[2].default = "32";
    f[3].default = "8";
    f[4].default = "16";
    f
};

/// The CPU variant and GPU stage (the shape is read by [`parse_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvRaceParams {
    pub cpu: CpuConvVariant,
    pub gpu: ConvStage,
}

pub fn parse(q: &Query) -> (ConvRaceParams, Vec<ParamIssue>) {
    let mut p = ConvRaceParams {
        cpu: DEFAULT_CPU,
        gpu: DEFAULT_GPU,
    };
    let mut issues = Vec::new();
    if let Some(v) = q.get("ccpu") {
        match CpuConvVariant::from_id(v) {
            Some(c) => p.cpu = c,
            None => issues.push(issue("ccpu", v, p.cpu.id())),
        }
    }
    if let Some(v) = q.get("cgpu") {
        match ConvStage::from_id(v) {
            Some(s) => p.gpu = s,
            None => issues.push(issue("cgpu", v, p.gpu.id())),
        }
    }
    (p, issues)
}

fn issue(name: &'static str, value: &str, used: &str) -> ParamIssue {
    ParamIssue {
        name,
        value: value.chars().take(40).collect(),
        used: used.to_string(),
    }
}

/// The shape fields' text as the URL has it (defaults where absent).
pub fn field_values(q: &Query) -> Vec<String> {
    FIELDS
        .iter()
        .map(|f| q.get(f.key).unwrap_or(f.default).to_string())
        .collect()
}

/// The fields checked one by one, then as a shape by `ConvShape::validate`.
pub fn parse_shape(values: &[String]) -> Parsed {
    RunFamily::Conv.parse_with(&FIELDS, values)
}

/// The settings written into the query (other parameters kept).
pub fn write(p: &ConvRaceParams, mut q: Query) -> Query {
    q.set("ccpu", p.cpu.id());
    q.set("cgpu", p.gpu.id());
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_family::{FieldError, Problem};
    use cpu_kernels::conv::{ConvShape, ConvShapeError};

    #[test]
    fn defaults_and_named_bad_values() {
        let (p, issues) = parse(&Query::parse(""));
        assert_eq!((p.cpu, p.gpu), (DEFAULT_CPU, DEFAULT_GPU));
        assert!(issues.is_empty());
        let (p, issues) = parse(&Query::parse("ccpu=gpu&cgpu=conv-winograd"));
        assert_eq!((p.cpu, p.gpu), (DEFAULT_CPU, DEFAULT_GPU));
        assert_eq!(issues.len(), 2);
        assert_eq!(issues[0].name, "ccpu");
        assert_eq!(issues[1].value, "conv-winograd");
        assert_eq!(issues[1].used, "conv-tiled");
        let (p, _) = parse(&Query::parse("ccpu=direct&cgpu=conv-implicit-gemm"));
        assert_eq!(
            (p.cpu, p.gpu),
            (CpuConvVariant::Direct, ConvStage::ImplicitGemm)
        );
        let q = write(&p, Query::parse("lang=zh&n=64"));
        assert_eq!(parse(&q).0, p);
        assert_eq!(q.get("n"), Some("64"), "the matmul race's n is left alone");
    }

    #[test]
    fn the_shape_uses_batch_not_n() {
        let q = Query::parse("n=512&batch=2&h=9&w=11&c=3&k=5&r=3&s=3&stride=2&pad=1&dil=1");
        let parsed = parse_shape(&field_values(&q));
        assert_eq!(
            parsed.problem,
            Some(Problem::Conv(
                ConvShape::new(2, 3, 9, 11, 5, 3, 3).with(2, 1, 1)
            ))
        );
        let zero = parse_shape(&field_values(&Query::parse("batch=0")));
        assert_eq!(
            zero.fields[0],
            Some(FieldError::Shape(ConvShapeError::ZeroSize("n")))
        );
        // Defaults: 1×32×32×8 → 16 filters 3×3 "same".
        assert_eq!(
            parse_shape(&field_values(&Query::parse(""))).problem,
            Some(Problem::Conv(
                ConvShape::new(1, 8, 32, 32, 16, 3, 3).with(1, 1, 1)
            ))
        );
    }
}
