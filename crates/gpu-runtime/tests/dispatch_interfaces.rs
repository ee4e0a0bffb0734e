//! A static check of every dispatch the MLP and CNN sessions plan: what the planner binds and
//! writes must be what the kernel's WGSL declares. For each planned dispatch (every step path,
//! both optimisers, wide and narrow layers, pinned kernels, the evaluation's forward pass):
//! - the storage bindings are 0, 1, … in the family's slot order, each named as its slot
//!   (`DataX` → `data_x`; SGD's velocity sits in the `M` slot), then the uniform block at the
//!   next binding, and nothing else;
//! - the uniform's words are exactly the struct's size, and each word the planner names is the
//!   struct member at that place (a vector's or array's words: only their count).
//!
//! No GPU: it runs on the planners and the WGSL alone (`wgsl-check`'s naga reader).

use gpu_runtime::cnn;
use gpu_runtime::family::cnn as cnn_family;
use gpu_runtime::family::mlp as mlp_family;
use gpu_runtime::mlp::{Activation, Hyper, LossKind, Net, Optimiser};
use gpu_runtime::plan::PlannedDispatch;
use gpu_runtime::training::{
    forward_plan_with, step_plan_with, PathOptions, StepOptions, StepPath,
};
use wgsl_check::Class;

/// `DataX` → `data_x`.
fn snake(debug: &str) -> String {
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// What is wrong with `p` against its kernel's WGSL, given the WGSL names its slots bind
/// (empty when nothing is).
fn problems(p: &PlannedDispatch, slots: &[String]) -> Vec<String> {
    let id = p.kernel_id;
    let Some(spec) = gpu_runtime::kernel(id) else {
        return vec![format!("{id}: not catalogued")];
    };
    let src = spec.wgsl();
    let Some(iface) = wgsl_check::interface(&src, spec.entry_point) else {
        return vec![format!("{id}: naga rejects it")];
    };
    let mut out = Vec::new();
    if iface.resources.len() != slots.len() + 1 {
        out.push(format!(
            "{id}: the WGSL uses {} bindings, the plan binds {} buffers and a uniform",
            iface.resources.len(),
            slots.len()
        ));
    }
    for (i, r) in iface.resources.iter().enumerate() {
        let want = slots.get(i);
        let ok = r.group == 0
            && r.binding == i as u32
            && match want {
                Some(name) => {
                    matches!(r.class, Class::Storage { .. })
                        && (r.name == *name || (name == "m" && r.name == "velocity"))
                }
                None => r.class == Class::Uniform && i == slots.len(),
            };
        if !ok {
            out.push(format!(
                "{id}: binding {} is `{}` ({}), the plan binds {} there",
                r.binding,
                r.name,
                r.class.name(),
                want.map_or("the uniform", |s| s.as_str())
            ));
        }
    }
    let Some(words) = wgsl_check::uniform_words(&src, spec.entry_point) else {
        out.push(format!("{id}: no uniform struct"));
        return out;
    };
    let layout = p.uniform.layout();
    if words.len() != p.uniform.len() || layout.words.len() != p.uniform.len() {
        out.push(format!(
            "{id}: {} uniform words planned ({}), the struct has {}",
            p.uniform.len(),
            layout.name,
            words.len()
        ));
    }
    for (i, (planned, declared)) in layout.words.iter().zip(&words).enumerate() {
        let scalar = words.iter().filter(|w| *w == declared).count() == 1;
        if scalar && planned != declared {
            out.push(format!(
                "{id}: uniform word {i} is `{declared}` in the WGSL, `{planned}` in {}",
                layout.name
            ));
        }
    }
    out
}

fn mlp_slots(id: &str) -> Vec<String> {
    mlp_family::bindings(id)
        .iter()
        .map(|s| snake(&format!("{s:?}")))
        .collect()
}

/// Every MLP dispatch a session can plan: each step path, both optimiser kinds, a wide
/// layer, accumulation, each kernel pinned, the evaluation.
fn mlp_plans() -> Vec<PlannedDispatch> {
    let net = |sizes: Vec<usize>| Net {
        sizes,
        activation: Activation::Tanh,
        loss: LossKind::CrossEntropy,
    };
    let nets = [
        net(vec![2, 8, 8, 2]),
        net(vec![2, 3]),
        net(vec![2, 70, 65, 3]),
        net(vec![2; 10]),
    ];
    let paths = [
        PathOptions::default(),
        PathOptions::step(StepPath::Samples),
        PathOptions::step(StepPath::Layers),
        PathOptions::tiled(Some(true)),
        PathOptions::tiled(Some(false)),
    ];
    let pins: Vec<&str> = mlp_family::KERNELS.iter().map(|k| k.id).collect();
    let mut out = Vec::new();
    for n in &nets {
        for optimiser in [Optimiser::Adam, Optimiser::Momentum, Optimiser::Sgd] {
            let hyper = Hyper {
                lr: 0.1,
                optimiser,
                l1: 0.0,
                l2: 0.0,
            };
            for &p in &paths {
                for accum in [1, 3] {
                    for pin in std::iter::once(None).chain(pins.iter().map(Some)) {
                        let pinned: Vec<&str> = pin.into_iter().copied().collect();
                        let opts = StepOptions {
                            accum,
                            pinned: &pinned,
                            paths: p,
                        };
                        out.extend(step_plan_with(n, &hyper, 37, 100, opts));
                        out.extend(forward_plan_with(n, 41, &pinned, p));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_mlp_dispatch_binds_and_fills_what_its_wgsl_declares() {
    let plans = mlp_plans();
    let mut seen: Vec<&str> = Vec::new();
    let mut checked = Vec::new();
    let mut all = Vec::new();
    for p in &plans {
        if !seen.contains(&p.kernel_id) {
            seen.push(p.kernel_id);
        }
        // What is checked depends on the kernel, its uniform's layout and length only.
        let key = (
            p.kernel_id,
            p.uniform.layout().name,
            p.uniform.layout().words,
            p.uniform.len(),
        );
        if checked.contains(&key) {
            continue;
        }
        checked.push(key);
        all.extend(problems(p, &mlp_slots(p.kernel_id)));
    }
    all.dedup();
    assert!(all.is_empty(), "{}", all.join("\n"));
    // Every MLP kernel was planned somewhere above, so every one was checked.
    for k in mlp_family::KERNELS {
        assert!(seen.contains(&k.id), "{} never planned", k.id);
    }
}

#[test]
fn every_cnn_dispatch_binds_and_fills_what_its_wgsl_declares() {
    use gpu_runtime::engine::{cnn::model, Net};
    let b = |c_in, c_out, kernel| cnn::net::Block {
        c_in,
        c_out,
        kernel,
    };
    let net = cnn::net::Net::new(13, vec![b(1, 3, 3), b(3, 4, 3)], 10).expect("fits");
    let mut seen: Vec<&str> = Vec::new();
    let mut recorded = Vec::new();
    // A training step's layers at one batch, an evaluation's at another.
    for batch in [5, 7] {
        let n = Net::compile(&model(&net, batch)).expect("compiles");
        recorded.extend(n.forward());
        recorded.extend(n.backward());
        recorded.extend(n.forward_only());
    }
    for r in &recorded {
        if !seen.contains(&r.planned.kernel_id) {
            seen.push(r.planned.kernel_id);
        }
    }
    let all = engine_problems(&recorded);
    assert!(all.is_empty(), "{}", all.join("\n"));
    for k in cnn_family::KERNELS {
        assert!(seen.contains(&k.id), "{} never planned", k.id);
    }
}

/// What is wrong with the engine's recorded dispatches: bindings against the WGSL's (by
/// position: the WGSL's own names stand for its slots, so what is checked is the count, the
/// uniform's place and its words), and any buffer bound both read-only and writable.
fn engine_problems(planned: &[gpu_runtime::engine::Recorded]) -> Vec<String> {
    use gpu_runtime::plan::Binding;
    let mut all = Vec::new();
    for r in planned {
        let id = r.planned.kernel_id;
        let Some(spec) = gpu_runtime::kernel(id) else {
            all.push(format!("{id}: not catalogued"));
            continue;
        };
        let Some(iface) = wgsl_check::interface(&spec.wgsl(), spec.entry_point) else {
            all.push(format!("{id}: naga rejects it"));
            continue;
        };
        let slots: Vec<String> = (0..r.bindings.len())
            .map(|i| {
                iface
                    .resources
                    .get(i)
                    .map_or("?".into(), |x| x.name.clone())
            })
            .collect();
        all.extend(problems(&r.planned, &slots));
        // WebGPU forbids one buffer bound both read-only and writable in a dispatch, and two
        // writable bindings of one buffer whose ranges overlap (native wgpu checks neither).
        let mut access: Vec<(&str, bool, u64, Option<u64>)> = Vec::new();
        for (b, res) in r.bindings.iter().zip(&iface.resources) {
            if let (Binding::Buffer { name, offset, size }, Class::Storage { write }) =
                (b, res.class)
            {
                if access.iter().any(|(n, w, ..)| n == name && *w != write) {
                    all.push(format!(
                        "{id}: `{name}` is bound both read-only and writable"
                    ));
                }
                let end = |o: u64, s: Option<u64>| s.map_or(u64::MAX, |s| o + s);
                if write
                    && access.iter().any(|&(n, w, o, s)| {
                        n == *name && w && o < end(*offset, *size) && *offset < end(o, s)
                    })
                {
                    all.push(format!(
                        "{id}: `{name}` is bound writable twice with overlapping ranges"
                    ));
                }
                access.push((name, write, *offset, *size));
            }
        }
    }
    all.dedup();
    all
}

#[test]
fn every_engine_dispatch_binds_and_fills_what_its_wgsl_declares() {
    use gpu_runtime::engine::{Layer, Model, Net};
    let net = Net::compile(&Model {
        batch: 5,
        input: 3,
        layers: vec![
            Layer::Linear { out: 4 },
            Layer::LayerNorm,
            Layer::Residual(vec![
                Layer::Linear { out: 6 },
                Layer::Gelu,
                Layer::Linear { out: 4 },
            ]),
            Layer::SoftmaxXent,
        ],
    })
    .expect("compiles");
    // Embeddings, attention and a head, as the GPT block has them.
    let embed = |layers: Vec<Layer>| {
        let mut all = vec![Layer::Embed {
            vocab: 7,
            width: 6,
            context: 3,
        }];
        all.extend(layers);
        all.push(Layer::SoftmaxXent);
        Net::compile(&Model {
            batch: 6,
            input: 1,
            layers: all,
        })
        .expect("compiles")
    };
    let block = embed(vec![
        Layer::Linear { out: 18 },
        Layer::Attention {
            heads: 2,
            context: 3,
        },
    ]);
    let mut planned = Vec::new();
    for n in [&net, &block] {
        planned.extend(n.forward());
        planned.extend(n.backward());
    }
    // The KV-cache decoder's prompt, cache stores and decode step, at odd sizes.
    let odd = gpu_runtime::gpt::Config {
        vocab: 7,
        context: 5,
        width: 6,
        heads: 2,
        layers: 1,
    };
    let decoder = gpu_runtime::engine::decode::record(&odd, 3).expect("records");
    planned.extend(decoder.all().cloned());
    let all = engine_problems(&planned);
    assert!(all.is_empty(), "{}", all.join("\n"));
}

/// The `#/train` network as the engine's layer list (`training::layers`): its layers' dispatches
/// at odd sizes, with and without gradient accumulation, an evaluation's forward, and the
/// whole-step rewrite's two dispatches, each against its WGSL.
#[test]
fn every_mlp_layer_list_dispatch_binds_and_fills_what_its_wgsl_declares() {
    use gpu_runtime::engine::Net;
    use gpu_runtime::mlp::{Activation, Hyper, LossKind, Net as MlpNet, Optimiser};
    use gpu_runtime::training::layers::{fused_step, model};
    let net = MlpNet {
        sizes: vec![3, 5, 7, 2],
        activation: Activation::Sigmoid,
        loss: LossKind::Mse,
    };
    let hyper = Hyper {
        lr: 0.1,
        optimiser: Optimiser::Adam,
        l1: 0.0,
        l2: 0.0,
    };
    let mut planned = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (batch, accum) in [(5, 1), (9, 3)] {
        let n = Net::compile(&model(&net, batch, 40, accum)).expect("compiles");
        planned.extend(n.forward());
        planned.extend(n.backward());
        planned.extend(n.forward_only());
        if let Some(r) = fused_step(&net, &n, &hyper, Default::default()) {
            planned.extend(r.dispatches);
        }
    }
    for r in &planned {
        if !seen.contains(&r.planned.kernel_id) {
            seen.push(r.planned.kernel_id);
        }
    }
    for id in [
        "mlp-gather",
        "mlp-forward-tiled",
        "mlp-backward-input-tiled",
        "mlp-grad-tiled",
        "mlp-grad-reduce",
        "mlp-loss",
        "mlp-step-lanes",
        "mlp-step-reduce",
    ] {
        assert!(seen.contains(&id), "{id} never planned");
    }
    let all = engine_problems(&planned);
    assert!(all.is_empty(), "{}", all.join("\n"));
}
