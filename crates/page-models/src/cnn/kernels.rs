//! The CNN page's kernel list (issue 24): every kernel of a training step in the order the
//! step runs it (`gpu_runtime::cnn_training::step_plan`), with the layer and phase it belongs
//! to and the text keys that explain it, as the ladder explains its stages: its title and
//! summary (`kernel.<id>.*`, the catalogue's, in the core text), what it computes in the
//! formula's terms (`cnn.kernel.<id>.what`) and how a thread's global id maps to the indices
//! it writes and what it sums over (`cnn.kernel.<id>.mapping`), both in `cnn-kernels.txt`.
//! The component renders [`explanations`] and puts the editor's "Edit this kernel" link
//! (`#/editor?stage=<id>`, [`KernelExplanation::edit_stage`]) beside each.

use cnn::net::Optimiser;

/// Where in the step a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Forward,
    Backward,
    Optimiser,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Forward, Phase::Backward, Phase::Optimiser];

    /// Translation key of the phase's heading.
    pub fn key(self) -> &'static str {
        match self {
            Phase::Forward => "cnn.kernel.phase.forward",
            Phase::Backward => "cnn.kernel.phase.backward",
            Phase::Optimiser => "cnn.kernel.phase.optimiser",
        }
    }
}

/// The layer a kernel works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// A conv block's convolution (with its bias and ReLU forward).
    Conv,
    /// A conv block's ReLU (backward; forward is in the conv's epilogue).
    Relu,
    Pool,
    Dense,
    /// Softmax and cross-entropy.
    Loss,
    /// Every parameter at once.
    Parameters,
}

impl Layer {
    pub const ALL: [Layer; 6] = [
        Layer::Conv,
        Layer::Relu,
        Layer::Pool,
        Layer::Dense,
        Layer::Loss,
        Layer::Parameters,
    ];

    /// Translation key of the layer's name.
    pub fn key(self) -> &'static str {
        match self {
            Layer::Conv => "cnn.kernel.layer.conv",
            Layer::Relu => "cnn.kernel.layer.relu",
            Layer::Pool => "cnn.kernel.layer.pool",
            Layer::Dense => "cnn.kernel.layer.dense",
            Layer::Loss => "cnn.kernel.layer.loss",
            Layer::Parameters => "cnn.kernel.layer.parameters",
        }
    }
}

/// One kernel as the page explains it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelExplanation {
    /// The catalogue id (`gpu_runtime::family::cnn::KERNELS`).
    pub id: &'static str,
    pub phase: Phase,
    pub layer: Layer,
    /// Whether it runs once per conv block (the step runs it for each block, last first
    /// going backward) rather than once per step.
    pub per_block: bool,
    /// The optimiser whose step runs it (None: every step runs it).
    pub only_with: Option<Optimiser>,
}

/// Every kernel in step order: forward per block (conv, pool), the dense layer, the loss,
/// dense backward, per block backward (pool, ReLU, filter gradient in two kernels, bias,
/// input), then the optimisers.
pub const KERNELS: [KernelExplanation; 14] = {
    const fn k(
        id: &'static str,
        phase: Phase,
        layer: Layer,
        per_block: bool,
        only_with: Option<Optimiser>,
    ) -> KernelExplanation {
        KernelExplanation {
            id,
            phase,
            layer,
            per_block,
            only_with,
        }
    }
    use Layer::*;
    use Phase::{Backward, Forward};
    [
        k("cnn-conv-forward", Forward, Conv, true, None),
        k("cnn-pool-forward", Forward, Pool, true, None),
        k("cnn-dense-forward", Forward, Dense, false, None),
        k("cnn-softmax-xent", Forward, Loss, false, None),
        k("cnn-dense-grad", Backward, Dense, false, None),
        k("cnn-dense-backward-input", Backward, Dense, false, None),
        k("cnn-pool-backward", Backward, Pool, true, None),
        k("cnn-relu-backward", Backward, Relu, true, None),
        k("cnn-conv-filter-partials", Backward, Conv, true, None),
        k("cnn-conv-filter-reduce", Backward, Conv, true, None),
        k("cnn-conv-bias-grad", Backward, Conv, true, None),
        k("cnn-conv-input-grad", Backward, Conv, true, None),
        k(
            "optim-sgd",
            Phase::Optimiser,
            Parameters,
            false,
            Some(Optimiser::Sgd),
        ),
        k(
            "optim-adam",
            Phase::Optimiser,
            Parameters,
            false,
            Some(Optimiser::Adam),
        ),
    ]
};

impl KernelExplanation {
    /// Its title (the catalogue's, core text).
    pub fn title_key(&self) -> String {
        format!("kernel.{}.title", self.id)
    }

    /// One line on what each thread does (the catalogue's, core text).
    pub fn summary_key(&self) -> String {
        format!("kernel.{}.summary", self.id)
    }

    /// What it computes, in the formula's terms (`cnn-kernels.txt`).
    pub fn what_key(&self) -> String {
        format!("cnn.kernel.{}.what", self.id)
    }

    /// How a thread's global id maps to the indices it writes and what it sums over
    /// (`cnn-kernels.txt`).
    pub fn mapping_key(&self) -> String {
        format!("cnn.kernel.{}.mapping", self.id)
    }

    /// The `stage=` of its editor page (`#/editor?stage=<id>`): the kernel's id, an
    /// `edit_target::Target::Cnn` (the optimisers, which every model shares, are the MLP
    /// group's: `Target::Mlp`).
    pub fn edit_stage(&self) -> &'static str {
        self.id
    }

    /// Its WGSL file, for a "source" link or caption.
    pub fn source_path(&self) -> Option<&'static str> {
        gpu_runtime::family::cnn::KERNELS
            .iter()
            .chain(gpu_runtime::family::optim::KERNELS)
            .find(|k| k.id == self.id)
            .map(|k| k.source_path)
    }

    /// Whether a step with `optimiser` runs it.
    pub fn runs_with(&self, optimiser: Optimiser) -> bool {
        self.only_with.is_none_or(|o| o == optimiser)
    }
}

/// The kernels a step with `optimiser` runs, in step order (all 14 with None).
pub fn explanations(optimiser: Option<Optimiser>) -> Vec<KernelExplanation> {
    KERNELS
        .iter()
        .filter(|k| optimiser.is_none_or(|o| k.runs_with(o)))
        .copied()
        .collect()
}

/// [`explanations`] under their phase's heading, phases in step order (none empty).
pub fn by_phase(optimiser: Option<Optimiser>) -> Vec<(Phase, Vec<KernelExplanation>)> {
    let all = explanations(optimiser);
    Phase::ALL
        .iter()
        .map(|&p| (p, all.iter().filter(|k| k.phase == p).copied().collect()))
        .filter(|(_, ks): &(Phase, Vec<KernelExplanation>)| !ks.is_empty())
        .collect()
}

/// The keys outside the per-kernel ones the view model hands the component.
pub const SHARED_KEYS: [&str; 9] = [
    "cnn.kernel.phase.forward",
    "cnn.kernel.phase.backward",
    "cnn.kernel.phase.optimiser",
    "cnn.kernel.layer.conv",
    "cnn.kernel.layer.relu",
    "cnn.kernel.layer.pool",
    "cnn.kernel.layer.dense",
    "cnn.kernel.layer.loss",
    "cnn.kernel.layer.parameters",
];

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::cnn_training::step_plan;
    use gpu_runtime::family::cnn::KERNELS as CNN;
    use gpu_runtime::family::optim::KERNELS as OPTIM;

    #[test]
    fn every_family_kernel_appears_exactly_once() {
        // The CNN's own kernels and the optimiser family's, which it runs.
        for f in CNN.iter().chain(OPTIM) {
            let n = KERNELS.iter().filter(|k| k.id == f.id).count();
            assert_eq!(n, 1, "{} listed {n} times", f.id);
        }
        assert_eq!(KERNELS.len(), CNN.len() + OPTIM.len());
        for k in KERNELS {
            assert!(k.source_path().is_some(), "{}", k.id);
        }
    }

    /// The list's order is the step's order (its first dispatch of each kernel), phases and
    /// optimisers included.
    #[test]
    fn the_order_is_the_steps() {
        let b = |c_in, c_out, kernel| cnn::net::Block {
            c_in,
            c_out,
            kernel,
        };
        let net = cnn::net::Net::new(13, vec![b(1, 3, 3), b(3, 4, 3)], 10).expect("fits");
        for opt in Optimiser::ALL {
            let hyper = cnn::net::Hyper {
                lr: 0.1,
                optimiser: opt,
                momentum: 0.9,
            };
            let mut order: Vec<&str> = Vec::new();
            for p in step_plan(&net, &hyper, 3).expect("plans") {
                if !order.contains(&p.kernel_id) {
                    order.push(p.kernel_id);
                }
            }
            let listed: Vec<&str> = explanations(Some(opt)).iter().map(|k| k.id).collect();
            assert_eq!(listed, order, "{opt:?}");
            for k in explanations(Some(opt)) {
                let blocks: Vec<usize> = step_plan(&net, &hyper, 3)
                    .expect("plans")
                    .iter()
                    .filter(|p| p.kernel_id == k.id)
                    .map(|p| p.layer)
                    .collect();
                assert_eq!(k.per_block, blocks != [0], "{}", k.id);
            }
        }
        assert_eq!(explanations(None).len(), 14);
        let phases = by_phase(Some(Optimiser::Sgd));
        let counts: Vec<(Phase, usize)> = phases.iter().map(|(p, ks)| (*p, ks.len())).collect();
        assert_eq!(
            counts,
            [
                (Phase::Forward, 4),
                (Phase::Backward, 8),
                (Phase::Optimiser, 1)
            ]
        );
    }

    fn tables() -> Vec<std::collections::BTreeMap<String, String>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/locales");
        locale_files::load_all(&dir).expect("the locale files load and agree")
    }

    #[test]
    fn every_key_exists_in_both_languages_and_in_the_cnn_kernels_file() {
        let tables = tables();
        let mut keys: Vec<String> = SHARED_KEYS.iter().map(|k| k.to_string()).collect();
        for k in KERNELS {
            keys.extend([
                k.title_key(),
                k.summary_key(),
                k.what_key(),
                k.mapping_key(),
            ]);
        }
        for p in Phase::ALL {
            assert!(SHARED_KEYS.contains(&p.key()));
        }
        for l in Layer::ALL {
            assert!(SHARED_KEYS.contains(&l.key()));
        }
        for (lang, table) in locale_files::LANGS.iter().zip(&tables) {
            for key in &keys {
                assert!(table.contains_key(key), "{lang}: {key} missing");
            }
        }
        // The page's own keys live in the CNN part, fetched with the page.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/locales");
        for lang in locale_files::LANGS {
            let text = std::fs::read_to_string(dir.join(lang).join("cnn-kernels.txt"))
                .expect("cnn-kernels.txt");
            for k in KERNELS {
                for key in [k.what_key(), k.mapping_key()] {
                    assert!(text.contains(&format!("{key} = ")), "{lang}: {key}");
                }
            }
        }
    }
}
