//! The one optimiser family every model trains with: SGD with momentum (`optim-sgd`) and
//! Adam (`optim-adam`) over a flat parameter buffer, one invocation per parameter on a grid
//! that wraps into y past 65,535 workgroups, with Adam's bias corrections read from a table
//! ([`correction_table`], the CPU twin's numbers) at a step counter the GPU keeps. The CPU
//! update and the constants are `cpu_kernels::optim`'s; this module encodes them into the
//! kernels' uniform ([`uniform`]) and sizes the grid ([`grid`]). What each model binds to
//! them is the model's (`family::mlp::bindings`, the engine's `Engine::build`): a model that
//! gathers its batch on the GPU advances the step counter there, any other lets Adam do it
//! ([`Hyper::advance`]).
//!
//! The kernels are offered in the editor with the MLP's (their family tag), which trains
//! with either optimiser; the CNN runs the same two.

use cpu_kernels::optim::{BETA1, BETA2, EPSILON, ONE_MINUS_BETA1, ONE_MINUS_BETA2};
use cpu_kernels::verify::Precision;

use crate::plan::{Uniform, UniformLayout};
use crate::spec::{Family, KernelSource, KernelSpec, Storage};
use crate::workload::Workload;

pub use cpu_kernels::optim::adam_correction_table as correction_table;

const SGD: &str = include_str!("../../../../shaders/optim_sgd.wgsl");
const ADAM: &str = include_str!("../../../../shaders/optim_adam.wgsl");
/// The uniform block, the step state and the grid's index (appended to both kernels).
const COMMON: &str = include_str!("../../../../shaders/optim_common.wgsl");

/// Invocations per workgroup (the kernels' `@workgroup_size(64)`).
pub const WORKGROUP: u32 = 64;
/// Words of the kernels' uniform block (`Optim` in `shaders/optim_common.wgsl`).
pub const UNIFORM_WORDS: usize = 16;
/// WebGPU's guaranteed maxComputeWorkgroupsPerDimension: the sessions' wrap limit.
pub const MAX_GROUPS_X: u32 = 65_535;

pub const SGD_ID: &str = "optim-sgd";
pub const ADAM_ID: &str = "optim-adam";

/// Which update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// SGD with this momentum μ (plain SGD: 0).
    Sgd {
        momentum: f32,
    },
    Adam,
}

/// What one optimiser dispatch applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    pub rule: Rule,
    pub lr: f32,
    /// Regularisation added to each gradient, g + (l1·sign(p) + l2·p) (0 for none).
    pub l1: f32,
    pub l2: f32,
    /// Whether Adam's dispatch itself writes the next step state (t + 1): for a model whose
    /// batch is not gathered on the GPU by a kernel that already does.
    pub advance: bool,
}

impl Hyper {
    /// The kernel this update runs.
    pub fn kernel_id(&self) -> &'static str {
        match self.rule {
            Rule::Sgd { .. } => SGD_ID,
            Rule::Adam => ADAM_ID,
        }
    }
}

/// Workgroups for `count` parameters and the invocations per grid row: one row up to
/// `max_x` workgroups (the sessions pass [`MAX_GROUPS_X`]; a test passes less to cross the
/// wrap with a few parameters), more rows beyond, the rows as even as can be.
pub fn grid(count: usize, max_x: u32) -> ([u32; 3], u32) {
    crate::plan::grid_for_within(count.max(1), WORKGROUP, max_x)
}

/// The 16 words of the uniform for `count` parameters on a grid of `max_x` workgroups per row.
pub fn uniform(h: &Hyper, count: usize, max_x: u32) -> Uniform {
    Uniform::from_words(&LAYOUT, &words(h, count, max_x))
}

/// The `Optim` struct of optim_common.wgsl, word by word.
pub static LAYOUT: UniformLayout = UniformLayout {
    name: "Optim",
    words: &[
        "lr",
        "momentum",
        "beta1",
        "beta2",
        "one_minus_beta1",
        "one_minus_beta2",
        "eps",
        "l1",
        "l2",
        "corr_len",
        "advance",
        "pad0",
        "pad1",
        "pad2",
        "count",
        "row",
    ],
};

fn words(h: &Hyper, count: usize, max_x: u32) -> [u32; UNIFORM_WORDS] {
    let f = f32::to_bits;
    let momentum = match h.rule {
        Rule::Sgd { momentum } => momentum,
        Rule::Adam => 0.0,
    };
    let (_, row) = grid(count, max_x);
    let corr_len = match h.rule {
        Rule::Adam => correction_table().len() as u32,
        Rule::Sgd { .. } => 1,
    };
    [
        f(h.lr),
        f(momentum),
        f(BETA1),
        f(BETA2),
        f(ONE_MINUS_BETA1),
        f(ONE_MINUS_BETA2),
        f(EPSILON),
        f(h.l1),
        f(h.l2),
        corr_len,
        u32::from(h.advance && h.rule == Rule::Adam),
        0,
        0,
        0,
        count as u32,
        row,
    ]
}

/// Word of the learning rate in [`uniform`] (what a session rewrites when it changes).
pub const LR_WORD: usize = 0;

/// The optimiser has no workload of its own: a session sizes its grid with [`grid`].
fn no_grid(_: &Workload) -> [u32; 3] {
    [0, 0, 0]
}

const fn optim_kernel(
    id: &'static str,
    source_path: &'static str,
    source: fn() -> String,
    title_key: &'static str,
    summary_key: &'static str,
) -> KernelSpec {
    KernelSpec {
        id,
        source_path,
        source: KernelSource::Built(source),
        entry_point: "main",
        family: Family::Mlp,
        constants: &[],
        workgroup_size: [WORKGROUP, 1, 1],
        grid: no_grid,
        storage: Storage::F32,
        required_features: wgpu::Features::empty(),
        precision: Precision::F32,
        title_key,
        summary_key,
    }
}

pub static KERNELS: &[KernelSpec] = &[
    optim_kernel(
        SGD_ID,
        "shaders/optim_sgd.wgsl",
        || format!("{SGD}\n{COMMON}"),
        "kernel.optim-sgd.title",
        "kernel.optim-sgd.summary",
    ),
    optim_kernel(
        ADAM_ID,
        "shaders/optim_adam.wgsl",
        || format!("{ADAM}\n{COMMON}"),
        "kernel.optim-adam.title",
        "kernel.optim-adam.summary",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_wrap_past_their_limit() {
        assert_eq!(grid(0, MAX_GROUPS_X), ([1, 1, 1], 64));
        assert_eq!(
            grid(64 * 65_535, MAX_GROUPS_X),
            ([65_535, 1, 1], 64 * 65_535)
        );
        assert_eq!(
            grid(64 * 65_535 + 1, MAX_GROUPS_X),
            ([32_768, 2, 1], 64 * 32_768)
        );
        // A small limit: 1,000 parameters are 16 groups, 3 to a row, 6 rows.
        assert_eq!(grid(1000, 3), ([3, 6, 1], 192));
    }

    #[test]
    fn the_uniform_holds_the_twins_constants() {
        let h = Hyper {
            rule: Rule::Adam,
            lr: 0.25,
            l1: 0.0,
            l2: 0.0,
            advance: true,
        };
        let w = uniform(&h, 1000, 3);
        assert_eq!(f32::from_bits(w[LR_WORD]), 0.25);
        assert_eq!(f32::from_bits(w[5]), 1.0f32 - 0.999f32);
        assert_eq!(w[9] as usize, correction_table().len());
        assert_eq!((w[10], w[14], w[15]), (1, 1000, 192));
        let sgd = Hyper {
            rule: Rule::Sgd { momentum: 0.9 },
            ..h
        };
        // Only Adam advances the counter.
        assert_eq!(uniform(&sgd, 10, 3)[10], 0);
        assert_eq!(f32::from_bits(uniform(&sgd, 10, 3)[1]), 0.9);
        // The kernels declare the words in this order.
        let common = COMMON;
        let fields: Vec<&str> = common
            .split("struct Optim {")
            .nth(1)
            .and_then(|s| s.split('}').next())
            .map(|s| {
                s.lines()
                    .map(str::trim)
                    .filter(|l| !l.starts_with("//") && l.contains(':'))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(fields.len(), UNIFORM_WORDS);
        assert!(fields[LR_WORD].starts_with("lr:"));
        assert!(fields[9].starts_with("corr_len:") && fields[10].starts_with("advance:"));
        assert!(fields[14].starts_with("count:") && fields[15].starts_with("row:"));
    }
}
