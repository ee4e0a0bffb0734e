//! What the editor can open, family by family, without DOM or GPU: every kernel the site shows
//! (the matmul ladder, each conv stage, the MLP's and the CNN's kernels, the measuring kernels)
//! as one
//! [`Target`], the fixed problem it runs on in the editor, how its output elements are named
//! and where each one sits on the result picture, and the comparison rules of the families
//! whose CPU check is not the matmul one (measuring kernels, the MLP's step against its twin;
//! the CNN's steps against theirs are `edit_cnn`), and the spec a learner's own kernel
//! (scratch mode, a puzzle) runs as.
//! The page (`components/editor_page.rs`) is written once against this interface.

use cpu_kernels::conv::ConvShape;
use gpu_runtime::conv::ConvStage;
use gpu_runtime::{Family, KernelSpec, MeasureSize};
use mlp::net::Optimiser;

/// One editable kernel, in the context it runs in.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// A matmul ladder stage, on the sizes in the URL.
    Matmul(&'static KernelSpec),
    /// A conv stage: its first kernel is edited, the rest of its plan runs as catalogued.
    Conv(ConvStage),
    /// One of the MLP's kernels: one training step and an evaluation, against the CPU twin.
    Mlp(&'static KernelSpec),
    /// One of the CNN's kernels: [`CNN_STEPS`] training steps of [`CnnProbe`]'s small
    /// network, each against the CPU twin (`crate::edit_cnn`).
    Cnn(&'static KernelSpec),
    /// A measuring kernel of the lessons, against its own CPU reference.
    Measure(&'static KernelSpec),
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.family() == other.family() && self.id() == other.id()
    }
}

/// The groups the editor's kernel list shows, in order.
pub const GROUPS: [Family; 5] = [
    Family::Matmul,
    Family::Conv,
    Family::Mlp,
    Family::Cnn,
    Family::Measure,
];

impl Target {
    /// Every editable kernel, grouped by family in [`GROUPS`] order.
    pub fn all() -> Vec<Target> {
        let mut v: Vec<Target> = KernelSpec::ladder(Family::Matmul)
            .map(|(_, k)| Target::Matmul(k))
            .collect();
        v.extend(ConvStage::ALL.into_iter().map(Target::Conv));
        v.extend(
            gpu_runtime::kernels()
                .filter(|k| k.family == Family::Mlp)
                .map(Target::Mlp),
        );
        v.extend(
            gpu_runtime::kernels()
                .filter(|k| k.family == Family::Cnn)
                .map(Target::Cnn),
        );
        v.extend(
            gpu_runtime::kernels()
                .filter(|k| k.family == Family::Measure)
                .map(Target::Measure),
        );
        v
    }

    /// The id in the URL (`#/editor?stage=<id>`): a conv stage's id, else the kernel's.
    pub fn id(&self) -> &'static str {
        match self {
            Target::Conv(s) => s.id(),
            Target::Matmul(k) | Target::Mlp(k) | Target::Cnn(k) | Target::Measure(k) => k.id,
        }
    }

    pub fn from_id(id: &str) -> Option<Target> {
        Self::all().into_iter().find(|t| t.id() == id)
    }

    pub fn family(&self) -> Family {
        match self {
            Target::Matmul(_) => Family::Matmul,
            Target::Conv(_) => Family::Conv,
            Target::Mlp(_) => Family::Mlp,
            Target::Cnn(_) => Family::Cnn,
            Target::Measure(_) => Family::Measure,
        }
    }

    /// The kernel whose source the editor opens.
    pub fn kernel(&self) -> Option<&'static KernelSpec> {
        match self {
            Target::Conv(s) => s.kernels().first().copied(),
            Target::Matmul(k) | Target::Mlp(k) | Target::Cnn(k) | Target::Measure(k) => Some(k),
        }
    }

    /// Translation key of its title (a conv stage's, else its kernel's).
    pub fn title_key(&self) -> String {
        match self {
            Target::Conv(s) => format!("kernel.{}.title", s.id()),
            Target::Matmul(k) | Target::Mlp(k) | Target::Cnn(k) | Target::Measure(k) => {
                k.title_key.to_string()
            }
        }
    }
}

/// The problem a conv stage runs on in the editor: small enough for the CPU reference of
/// every element in a moment, large enough to cross the tiles' edges (16×16 output tiles,
/// 8-channel blocks): 2 images of 19×21 pixels, 9 channels in, 10 filters of 3×3 "same".
/// The 1×1 stage gets the same sizes with a 1×1 filter.
pub fn conv_shape(stage: ConvStage) -> ConvShape {
    match stage {
        ConvStage::Pointwise => ConvShape::new(2, 9, 19, 21, 10, 1, 1),
        _ => ConvShape::new(2, 9, 19, 21, 10, 3, 3).with(1, 1, 1),
    }
}

/// The problem a measuring kernel runs on in the editor (a few thousand threads).
pub fn measure_size(id: &str) -> MeasureSize {
    match id {
        "measure-copy" => MeasureSize {
            elements: 1 << 14,
            threads: 1 << 14,
            param: 0,
        },
        "measure-strided" => MeasureSize {
            elements: 1 << 14,
            threads: 1 << 12,
            param: 8,
        },
        _ => MeasureSize {
            elements: 1 << 12,
            threads: 1 << 12,
            param: 64,
        },
    }
}

/// A learner's own kernel (scratch mode, a puzzle) as a spec named `id`, entry point `main`,
/// no constants or features. It borrows a measuring kernel's spec, whose layout rules do not
/// matter here: the page's plan names every binding and dispatch itself. None only if the
/// catalogue had no measuring kernel.
pub fn learner_spec(id: &'static str, source: String) -> Option<KernelSpec> {
    let base = gpu_runtime::kernels().find(|k| k.family == Family::Measure)?;
    let mut spec = base.with_source(source);
    spec.id = id;
    spec.entry_point = "main";
    spec.constants = &[];
    spec.required_features = gpu_runtime::wgpu::Features::empty();
    Some(spec)
}

/// The loop budget for a learner's edit of `target`'s kernel (`crate::loop_budget::budget`:
/// a loop's counter is never reset, so the budget bounds the iterations one invocation
/// spends in it over the whole run):
/// - matmul on `size`: m·n·k over the invocations launched;
/// - a measuring kernel on its probe: elements × its parameter over the invocations;
/// - a conv stage on [`conv_shape`]: the cost of the step that runs the kernel (its
///   multiply-adds, or elements written by im2col) over that step's invocations, the largest
///   share when several steps run it;
/// - a CNN kernel in [`CnnProbe`]'s steps: batch × (parameters + one sample's activations)
///   for each invocation, more than any one invocation of the step's kernels sums (a conv
///   output's C_in·K² taps, a filter tap's output map, a bias's B·OH·OW gradients, a dense
///   parameter's batch, a logit's inputs);
/// - an MLP kernel in [`mlp_spec`]'s step and evaluation: batch × parameters for each
///   invocation, more than any one invocation of the step's kernels does (a lane's samples
///   through every layer, a parameter's sum over the batch, a row through the network).
///
/// None only when the target has no kernel or its plan cannot be laid out.
pub fn loop_budget_for(
    target: Target,
    size: Option<cpu_kernels::matmul::MatmulSize>,
) -> Option<u32> {
    let kernel = target.kernel()?;
    let (work, workload) = match target {
        Target::Matmul(_) => {
            let s = size?;
            (
                f64::from(s.m) * f64::from(s.n) * f64::from(s.k),
                gpu_runtime::Workload::Matmul(s),
            )
        }
        Target::Measure(k) => {
            let m = measure_size(k.id);
            (
                f64::from(m.elements.max(m.threads)) * f64::from(m.param.max(1)),
                gpu_runtime::Workload::Measure(m),
            )
        }
        Target::Conv(stage) => {
            let loads = gpu_runtime::conv::step_loads(stage, &conv_shape(stage), kernel.id).ok()?;
            let per = loads
                .iter()
                .map(|&(cost, threads)| cost / threads.max(1.0))
                .reduce(f64::max)?;
            return Some(crate::loop_budget::budget(per, 1.0));
        }
        Target::Mlp(k) => {
            let spec = mlp_spec(k.id);
            let params = spec.net().layout().param_count as f64;
            return Some(crate::loop_budget::budget(spec.batch as f64 * params, 1.0));
        }
        Target::Cnn(_) => {
            let net = cnn_net()?;
            let per_sample = net.act_layout(1).len as f64;
            let params = net.param_layout().len as f64;
            let work = CNN_BATCH as f64 * (params + per_sample);
            return Some(crate::loop_budget::budget(work, 1.0));
        }
    };
    let groups = kernel.workgroups(&workload);
    let threads = groups
        .iter()
        .chain(&kernel.workgroup_size)
        .map(|&v| f64::from(v))
        .product::<f64>();
    Some(crate::loop_budget::budget(work, threads))
}

/// The second size every edited matmul kernel is checked at, after the learner's: odd in each
/// dimension, so it stops short of every power-of-two tile edge (8 … 128) and a missing bounds
/// check shows; between 33 and 159 where the learner's dimension allows, and never larger than
/// it, so the second run costs no more than the first (after a kernel that wedged the GPU, the
/// next small run stays small). Drawn by a generator seeded with the learner's size: one size
/// always gets the same one.
pub fn edge_size(size: cpu_kernels::matmul::MatmulSize) -> cpu_kernels::matmul::MatmulSize {
    // SplitMix64, seeded with the three dimensions.
    let mut state = (u64::from(size.m) << 40) ^ (u64::from(size.n) << 20) ^ u64::from(size.k);
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    // An odd number in [lo, hi]: hi the largest odd ≤ min(d, 159), lo = min(33, hi).
    let mut dim = |d: u32| {
        let hi = (d.clamp(1, 159) - 1) | 1;
        let hi = if hi > d.max(1) { hi - 2 } else { hi };
        let lo = hi.min(33);
        lo + 2 * (next() % u64::from((hi - lo) / 2 + 1)) as u32
    };
    let (m, n, k) = (dim(size.m), dim(size.n), dim(size.k));
    cpu_kernels::matmul::MatmulSize::new(m, n, k)
}

/// The training setup an MLP kernel runs one step of: the train page's default network
/// (circle data, 8-8 tanh, batch 16), with the optimiser whose kernel is edited.
pub fn mlp_spec(kernel_id: &str) -> mlp::Spec {
    mlp::Spec {
        optimiser: if kernel_id == "optim-sgd" {
            Optimiser::Sgd
        } else {
            Optimiser::Adam
        },
        ..Default::default()
    }
}

/// Rows of the evaluation pass an edited MLP kernel's logits are compared on.
pub const MLP_EVAL_ROWS: usize = 64;

/// What an edited MLP kernel runs: one training step of [`mlp_spec`]'s network on its
/// training set, from its seeded parameters, then an evaluation of the first
/// [`MLP_EVAL_ROWS`] training rows.
pub struct MlpProbe {
    pub spec: mlp::Spec,
    pub net: mlp::Net,
    pub train: mlp::Points,
    pub params: Vec<f32>,
    pub eval: Vec<f32>,
    pub rows: usize,
}

impl MlpProbe {
    pub fn new(kernel_id: &str) -> Self {
        let spec = mlp_spec(kernel_id);
        let net = spec.net();
        let (train, _) = spec.data();
        let rows = MLP_EVAL_ROWS.min(train.len());
        let eval = train.features(&spec.features)[..rows * net.inputs()].to_vec();
        let params = net.init_params(spec.seed);
        MlpProbe {
            spec,
            net,
            train,
            params,
            eval,
            rows,
        }
    }

    /// The GPU session's settings: the spec's, without gradient accumulation.
    pub fn config(&self) -> gpu_runtime::training::SessionConfig<'_> {
        gpu_runtime::training::SessionConfig {
            accum: 1,
            ..gpu_runtime::training::SessionConfig::from_spec(
                &self.net,
                &self.spec,
                &self.train,
                &self.params,
                &self.eval,
            )
        }
    }

    /// The CPU twin after the same step: its parameters, then its logits of the evaluation
    /// rows (what the GPU's `params` followed by `logits` is compared with), and how to draw
    /// them.
    pub fn twin(&self) -> (Vec<f64>, Layout) {
        let mut twin = mlp::CpuTrainer::new(
            self.net.clone(),
            self.spec.hyper(),
            self.params.clone(),
            self.spec.batch,
            self.train.features(&self.spec.features),
            self.train.label.clone(),
            mlp::net::batch_order(self.train.len(), self.spec.seed),
        );
        twin.step();
        let logits = self.net.logits(&twin.params, &self.eval, self.rows);
        let layout = Layout::Mlp {
            params: twin.params.len() as u32,
            logits: logits.len() as u32,
            classes: self.net.classes() as u32,
            cols: 32,
        };
        let expected = twin
            .params
            .iter()
            .chain(&logits)
            .map(|&v| f64::from(v))
            .collect();
        (expected, layout)
    }
}

/// How far the MLP's parameters and logits after one step may be from the twin's, relative
/// to max(|value|, 1): both run the same formulas in f32, so they differ by rounding only
/// (a few ulps; tanh/exp of the browser's compiler a few more). 2⁻¹⁶ ≈ 1.5·10⁻⁵ is about
/// 128 ulps, while the smallest wrong step (one term dropped from a gradient) moves a
/// parameter by lr·|g| ≈ 10⁻³.
pub const MLP_REL_BOUND: f64 = 1.0 / 65536.0;

/// Training steps an edited CNN kernel runs, each checked against the twin: two, so the
/// optimiser's state (momentum, Adam's moments) from a first step feeds a second.
pub const CNN_STEPS: usize = 2;
/// Samples per step of the editor's CNN.
pub const CNN_BATCH: usize = 4;

/// The editor's CNN: side 13, conv 3×3 → 3 channels (11) → pool (5) → conv 3×3 → 4 (3) →
/// pool (1) → dense 10. Odd sides, so pool's unpooled last row and column are exercised; two
/// blocks, so an input gradient feeds a block's backward pass; small enough that
/// SwiftShader runs a step in milliseconds and the editor needs no MNIST asset.
/// None only if `Net::new` refused these fixed shapes (a unit test holds that it does not).
pub fn cnn_net() -> Option<cnn::net::Net> {
    let block = |c_in, c_out, kernel| cnn::net::Block {
        c_in,
        c_out,
        kernel,
    };
    cnn::net::Net::new(13, vec![block(1, 3, 3), block(3, 4, 3)], 10).ok()
}

/// What an edited CNN kernel runs: [`CNN_STEPS`] steps of [`cnn_net`] with batch
/// [`CNN_BATCH`] on 16 seeded images (about half the pixels 0, as in MNIST, the rest in
/// (0, 1); labels cycling through the classes), from seeded parameters, with SGD and
/// momentum, or with Adam for `cnn-adam` (each optimiser's kernel runs only in its own step).
pub struct CnnProbe {
    pub net: cnn::net::Net,
    pub hyper: cnn::net::Hyper,
    pub batch: usize,
    pub params: Vec<f32>,
    pub train: cnn::data::Samples,
    pub order_seed: u64,
}

impl CnnProbe {
    /// None only when [`cnn_net`] is.
    pub fn new(kernel_id: &str) -> Option<Self> {
        use cnn::net::{Hyper, Optimiser};
        let net = cnn_net()?;
        let hyper = if kernel_id == "optim-adam" {
            Hyper {
                lr: 0.003,
                optimiser: Optimiser::Adam,
                momentum: 0.0,
            }
        } else {
            Hyper {
                lr: 0.05,
                optimiser: Optimiser::Sgd,
                momentum: 0.9,
            }
        };
        let mut rng = cpu_kernels::data::SplitMix64::new(5);
        let mut train = cnn::data::Samples {
            side: net.side,
            ..Default::default()
        };
        for i in 0..16u32 {
            for _ in 0..net.side * net.side {
                let r = rng.next_u64();
                train.x.push(if r.is_multiple_of(2) {
                    0.0
                } else {
                    (r >> 40) as f32 / (1u64 << 24) as f32
                });
            }
            train.y.push(i % 10);
        }
        Some(CnnProbe {
            params: net.init_params(11),
            net,
            hyper,
            batch: CNN_BATCH,
            train,
            order_seed: 3,
        })
    }

    /// The GPU session's settings (no evaluation pass: the step's own buffers are compared).
    pub fn config(&self) -> gpu_runtime::cnn_training::CnnConfig<'_> {
        gpu_runtime::cnn_training::CnnConfig {
            net: self.net.clone(),
            hyper: self.hyper,
            batch: self.batch,
            params: &self.params,
            train: self.train.clone(),
            order_seed: self.order_seed,
            eval_batch: 0,
        }
    }

    /// How a step's compared buffers are named and drawn (`crate::edit_cnn::step_values`).
    pub fn layout(&self) -> Layout {
        let acts = self.net.act_layout(self.batch);
        Layout::Cnn {
            params: self.net.param_layout().len as u32,
            acts: acts.len as u32,
            argmax: acts.argmax_len as u32,
            cols: 64,
        }
    }
}

/// Where one output element is drawn, and what it is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A rows × cols matrix (matmul's C): element i is row i / cols, column i % cols.
    Matrix { rows: u32, cols: u32 },
    /// The conv output, NPQK: drawn as N pictures of P × Q stacked, a pixel marked when any
    /// of its K channels is wrong.
    Conv { n: u32, p: u32, q: u32, k: u32 },
    /// A flat list (measuring kernels; the MLP's parameters then logits), `cols` per row.
    List {
        len: u32,
        cols: u32,
        name: &'static str,
    },
    /// The MLP after one step: its `params` parameters, then the logits of the evaluation
    /// rows (`classes` per row), drawn `cols` per row.
    Mlp {
        params: u32,
        logits: u32,
        classes: u32,
        cols: u32,
    },
    /// A CNN step's buffers one after another, in the order the step writes them
    /// ([`CNN_SEGMENTS`]): activations, argmax, deltas (`acts` and `argmax` long), then
    /// gradients, momentum or first moment, second moment and parameters (`params` long),
    /// drawn `cols` per row; an element is named by its buffer, as the kernels name it.
    Cnn {
        params: u32,
        acts: u32,
        argmax: u32,
        cols: u32,
    },
}

/// The buffers of a CNN step as [`Layout::Cnn`] lays them out, by their WGSL names.
pub const CNN_SEGMENTS: [&str; 7] = ["acts", "argmax", "deltas", "grads", "m", "v", "params"];

impl Layout {
    /// The picture's size in cells (rows, columns).
    pub fn picture(&self) -> (u32, u32) {
        match *self {
            Layout::Matrix { rows, cols } => (rows, cols),
            Layout::Conv { n, p, q, .. } => (n * p, q),
            Layout::List { len, cols, .. } => (len.div_ceil(cols.max(1)), cols.max(1)),
            Layout::Mlp {
                params,
                logits,
                cols,
                ..
            } => ((params + logits).div_ceil(cols.max(1)), cols.max(1)),
            Layout::Cnn { cols, .. } => (self.len().div_ceil(cols.max(1)), cols.max(1)),
        }
    }

    /// The cell element `i` is drawn in.
    pub fn cell(&self, i: usize) -> (u32, u32) {
        let i = i as u32;
        match *self {
            Layout::Matrix { cols, .. }
            | Layout::List { cols, .. }
            | Layout::Mlp { cols, .. }
            | Layout::Cnn { cols, .. } => (i / cols.max(1), i % cols.max(1)),
            Layout::Conv { q, k, .. } => {
                let pixel = i / k.max(1);
                (pixel / q.max(1), pixel % q.max(1))
            }
        }
    }

    /// The element's name as the learner reads it in the kernel: `C[row][col]`,
    /// `y[n][p][q][k]`, `out[i]`.
    pub fn label(&self, i: usize) -> String {
        match *self {
            Layout::Matrix { cols, .. } => {
                let i = i as u32;
                format!("C[{}][{}]", i / cols.max(1), i % cols.max(1))
            }
            Layout::Conv { p, q, k, .. } => {
                let i = i as u32;
                let (kk, pix) = (i % k.max(1), i / k.max(1));
                let (qq, rest) = (pix % q.max(1), pix / q.max(1));
                let (pp, nn) = (rest % p.max(1), rest / p.max(1));
                format!("y[{nn}][{pp}][{qq}][{kk}]")
            }
            Layout::List { name, .. } => format!("{name}[{i}]"),
            Layout::Mlp {
                params, classes, ..
            } => match (i as u32).checked_sub(params) {
                None => format!("params[{i}]"),
                Some(j) => format!("logit[{}][{}]", j / classes.max(1), j % classes.max(1)),
            },
            Layout::Cnn { .. } => {
                let mut at = i;
                for (name, len) in CNN_SEGMENTS.iter().zip(self.cnn_segments()) {
                    if at < len {
                        return format!("{name}[{at}]");
                    }
                    at -= len;
                }
                format!("[{i}]")
            }
        }
    }

    /// The lengths of [`CNN_SEGMENTS`] in a [`Layout::Cnn`] (zeros for another layout).
    pub fn cnn_segments(&self) -> [usize; 7] {
        match *self {
            Layout::Cnn {
                params,
                acts,
                argmax,
                ..
            } => {
                let (p, a, g) = (params as usize, acts as usize, argmax as usize);
                [a, g, a, p, p, p, p]
            }
            _ => [0; 7],
        }
    }

    /// Elements compared for a [`Layout::Cnn`] step (0 for other layouts).
    pub fn len(&self) -> u32 {
        self.cnn_segments().iter().sum::<usize>() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The wrong elements on the result picture, at most `MAX_SIDE` cells a side: a cell of a
/// large output stands for a block of elements and counts the wrong ones in it.
#[derive(Clone, Debug, PartialEq)]
pub struct WrongMap {
    pub rows: u32,
    pub cols: u32,
    /// Elements per cell, down and across.
    pub block: (u32, u32),
    /// Wrong elements in each cell, row-major.
    pub wrong: Vec<u32>,
}

pub const MAX_SIDE: u32 = 64;

impl WrongMap {
    pub fn new(layout: &Layout) -> Self {
        let (r, c) = layout.picture();
        let block = (r.div_ceil(MAX_SIDE).max(1), c.div_ceil(MAX_SIDE).max(1));
        let (rows, cols) = (r.div_ceil(block.0).max(1), c.div_ceil(block.1).max(1));
        Self {
            rows,
            cols,
            block,
            wrong: vec![0; (rows * cols) as usize],
        }
    }

    pub fn mark(&mut self, layout: &Layout, i: usize) {
        let (r, c) = layout.cell(i);
        let (r, c) = (r / self.block.0, c / self.block.1);
        if r < self.rows && c < self.cols {
            self.wrong[(r * self.cols + c) as usize] += 1;
        }
    }

    /// Cells with at least one wrong element.
    pub fn marked(&self) -> usize {
        self.wrong.iter().filter(|&&w| w > 0).count()
    }
}

/// One wrong element: where, its name, what the CPU says and what the GPU gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub index: usize,
    pub label: String,
    pub expected: f64,
    pub got: f32,
}

/// The outcome of comparing an output element by element.
#[derive(Clone, Debug, PartialEq)]
pub struct Differences {
    pub wrong: usize,
    pub total: usize,
    pub first: Vec<Difference>,
    pub map: WrongMap,
}

/// Compares `got` with `expected` under a per-element rule `bad(i, got, expected)`, naming
/// the first `max` wrong elements and marking every one on the picture. A missing element
/// (short output) is wrong.
pub fn compare_elements(
    layout: &Layout,
    got: &[f32],
    expected: &[f64],
    max: usize,
    bad: impl Fn(usize, f32, f64) -> bool,
) -> Differences {
    let mut d = Differences {
        wrong: 0,
        total: expected.len(),
        first: Vec::new(),
        map: WrongMap::new(layout),
    };
    for (i, &e) in expected.iter().enumerate() {
        let g = got.get(i).copied().unwrap_or(f32::NAN);
        if bad(i, g, e) {
            d.wrong += 1;
            d.map.mark(layout, i);
            if d.first.len() < max {
                d.first.push(Difference {
                    index: i,
                    label: layout.label(i),
                    expected: e,
                    got: g,
                });
            }
        }
    }
    d
}

/// A rule within `rel` of max(|expected|, 1) (NaN or ∞ where a finite value is expected is
/// always wrong); `rel` = 0 asks for the same bits.
pub fn within(rel: f64) -> impl Fn(usize, f32, f64) -> bool {
    move |_, g, e| {
        if rel == 0.0 {
            return g.to_bits() != (e as f32).to_bits();
        }
        !g.is_finite() || (g as f64 - e).abs() > rel * e.abs().max(1.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_edge_size_is_odd_small_and_fixed_by_the_learners_size() {
        use cpu_kernels::matmul::MatmulSize;
        let mut seen = std::collections::HashSet::new();
        for m in 1..=300u32 {
            for &(n, k) in &[(256, 256), (16, 4), (100, 1), (1024, 7)] {
                let size = MatmulSize::new(m, n, k);
                let e = edge_size(size);
                for (d, l) in [(e.m, m), (e.n, n), (e.k, k)] {
                    assert!(d % 2 == 1 && d <= l && d <= 159, "{size:?} → {e:?}");
                    // As large as 33 wherever the learner's size allows it.
                    assert!(
                        d >= 33.min(if l % 2 == 1 { l } else { l - 1 }),
                        "{size:?} → {e:?}"
                    );
                }
                assert_eq!(edge_size(size), e, "the same size gets the same edge size");
                seen.insert((e.m, e.n, e.k));
            }
        }
        assert!(
            seen.len() > 100,
            "other sizes get other edge sizes: {}",
            seen.len()
        );
        assert_eq!(
            edge_size(MatmulSize::new(4, 4, 4)),
            MatmulSize::new(3, 3, 3)
        );
    }

    use super::*;

    #[test]
    fn cnn_elements_are_named_by_their_buffer() {
        let probe = CnnProbe::new("cnn-conv-input-grad").expect("the editor's CNN");
        let l = probe.layout();
        let [a, g, ..] = l.cnn_segments();
        let p = probe.params.len();
        assert_eq!(l.len() as usize, 2 * a + g + 4 * p);
        assert_eq!(l.label(0), "acts[0]");
        assert_eq!(l.label(a + 1), "argmax[1]");
        assert_eq!(l.label(a + g + 7), "deltas[7]");
        assert_eq!(l.label(2 * a + g), "grads[0]");
        assert_eq!(l.label(2 * a + g + 3 * p + 5), "params[5]");
        assert_eq!(l.picture().1, 64);
        // The editor's network is the one described, and its edited kernels run: each one
        // the probe's step plan dispatches, the unused optimiser aside.
        assert_eq!(probe.net.shapes.len(), 2);
        assert_eq!(probe.train.len(), 16);
        let adam = CnnProbe::new("optim-adam").map(|p| p.hyper.optimiser);
        assert_eq!(adam, Some(cnn::net::Optimiser::Adam));
        let budget = loop_budget_for(
            Target::Cnn(gpu_runtime::kernel("cnn-conv-input-grad").expect("k")),
            None,
        );
        assert!(budget.is_some_and(|b| b > 4096), "{budget:?}");
    }

    #[test]
    fn every_family_is_listed_and_ids_round_trip() {
        let all = Target::all();
        for f in GROUPS {
            assert!(all.iter().any(|t| t.family() == f), "{f:?}");
        }
        assert_eq!(all.iter().filter(|t| t.family() == Family::Conv).count(), 5);
        assert_eq!(
            all.iter().filter(|t| t.family() == Family::Cnn).count(),
            gpu_runtime::family::cnn::KERNELS.len()
        );
        for t in &all {
            assert_eq!(Target::from_id(t.id()), Some(*t));
            assert!(t.kernel().is_some(), "{}", t.id());
        }
        // The im2col stage opens its own kernel; the 1×1 stage opens the matmul kernel it runs.
        assert_eq!(
            Target::Conv(ConvStage::Im2colGemm).kernel().map(|k| k.id),
            Some("conv-im2col")
        );
        assert_eq!(
            Target::Conv(ConvStage::Pointwise).kernel().map(|k| k.id),
            Some("matmul-vec4")
        );
        assert_eq!(Target::from_id("nope"), None);
    }

    #[test]
    fn editor_problems_are_valid_for_every_stage() {
        for s in ConvStage::ALL {
            let shape = conv_shape(s);
            assert!(shape.validate().is_ok());
            assert!(s.plan_kernels(&shape).is_ok(), "{s:?}");
        }
        for k in gpu_runtime::kernels().filter(|k| k.family == Family::Measure) {
            let m = measure_size(k.id);
            let input = gpu_runtime::measurements::input(m.elements as usize);
            assert!(!gpu_runtime::measurements::reference(k.id, m, &input).is_empty());
        }
    }

    #[test]
    fn conv_elements_are_named_and_placed_in_npqk_order() {
        let l = Layout::Conv {
            n: 2,
            p: 3,
            q: 4,
            k: 5,
        };
        // n = 1, p = 2, q = 3, k = 4 → ((1·3 + 2)·4 + 3)·5 + 4.
        let i = ((3 + 2) * 4 + 3) * 5 + 4;
        assert_eq!(l.label(i), "y[1][2][3][4]");
        assert_eq!(l.cell(i), (5, 3));
        assert_eq!(l.picture(), (6, 4));
    }

    #[test]
    fn big_outputs_are_drawn_in_blocks_and_every_wrong_element_counts() {
        let l = Layout::Matrix {
            rows: 1000,
            cols: 100,
        };
        let got = vec![1.0f32; 100_000];
        let mut expected = vec![1.0f64; 100_000];
        expected[0] = 2.0;
        expected[99_999] = 2.0;
        expected[99_998] = 2.0;
        let d = compare_elements(&l, &got, &expected, 2, within(1e-6));
        assert_eq!((d.wrong, d.total, d.first.len()), (3, 100_000, 2));
        assert_eq!(d.first[0].label, "C[0][0]");
        assert_eq!((d.map.rows, d.map.cols, d.map.block), (63, 50, (16, 2)));
        assert_eq!(d.map.wrong[0], 1);
        assert_eq!(*d.map.wrong.last().expect("cells"), 2);
        assert_eq!(d.map.marked(), 2);
    }

    #[test]
    fn rules_catch_nan_and_bits() {
        let exact = within(0.0);
        assert!(!exact(0, 3.0, 3.0));
        assert!(exact(0, 3.0000002, 3.0));
        let loose = within(1e-3);
        assert!(!loose(0, 1000.5, 1000.0));
        assert!(loose(0, 1002.0, 1000.0));
        assert!(loose(0, f32::NAN, 1.0));
        let short = compare_elements(
            &Layout::List {
                len: 3,
                cols: 64,
                name: "out",
            },
            &[1.0],
            &[1.0, 2.0, 3.0],
            8,
            loose,
        );
        assert_eq!(short.wrong, 2);
        assert_eq!(short.first[1].label, "out[2]");
        let mlp = Layout::Mlp {
            params: 10,
            logits: 6,
            classes: 2,
            cols: 4,
        };
        assert_eq!(mlp.label(9), "params[9]");
        assert_eq!(mlp.label(13), "logit[1][1]");
        assert_eq!(mlp.picture(), (4, 4));
    }
}
