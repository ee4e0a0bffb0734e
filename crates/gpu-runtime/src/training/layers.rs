//! The `#/train` page's tiny network (`mlp::Net`) as a layer list on the engine: a gathering
//! input layer over the training set resident on the GPU (in the seeded batch order the twin
//! shares), a [`Layer::Perceptron`] per layer (the hidden layers' activation in the tiled
//! kernels' epilogue, the output layer linear) and the MLP's loss head. [`Map`] places
//! `mlp::net`'s packed parameter layout in the arena (which aligns each tensor to 256 bytes),
//! so what the engine reads back compares with `mlp::CpuTrainer` element for element.
//!
//! Every sum is `mlp::net`'s: a layer's outputs by ascending input, its gradient in
//! `REDUCE`'s order (64 strided lanes halved pairwise, `mlp-grad-tiled` + `mlp-grad-reduce`),
//! the input gradient by ascending output, so one bound (`training::param_ulps_per_step` of
//! `training::batch_sum_len`) holds the engine and the twin together.

use ::mlp::net::{Hyper, Net as MlpNet, Optimiser};

use super::{lanes_fit, record, step_plan_at, PathOptions, Places, StepOptions, LANES};
use crate::engine::{buffer, Layer, Model, Net, Node, Range, Rewrite};
use crate::family::optim;
use crate::plan::{Init, ResidentBuffer};

/// The layer list of `net` over `batch` rows gathered from a training set of `rows` rows,
/// `accum` micro-batches per update (the evaluation's compilation, at its own batch, has the
/// same list: its forward skips the gathering layer, and the parameter layouts are then
/// equal, names and all).
pub fn model(net: &MlpNet, batch: usize, rows: usize, accum: usize) -> Model {
    let accum = accum.max(1);
    let mut layers = vec![Layer::Gather {
        rows: rows.max(1),
        accum,
    }];
    for l in 1..=net.depth() {
        layers.push(Layer::Perceptron {
            out: net.sizes[l],
            act: net.activation_of(l),
        });
    }
    layers.push(Layer::MlpLoss {
        kind: net.loss,
        accum,
    });
    Model {
        batch,
        input: net.inputs(),
        layers,
    }
}

/// The optimiser of `hyper` over the flat parameter range. The gathering layer advances the
/// step state, so the update only reads it (`advance` off).
pub fn optimiser(hyper: &Hyper) -> optim::Hyper {
    optim::Hyper {
        rule: match hyper.optimiser {
            Optimiser::Adam => optim::Rule::Adam,
            o => optim::Rule::Sgd {
                momentum: o.momentum(),
            },
        },
        lr: hyper.lr,
        l1: hyper.l1,
        l2: hyper.l2,
        advance: false,
    }
}

/// The training set in batch order, as the gathering layer reads it ([`buffer::DATA_X`],
/// [`buffer::DATA_Y`]): row j is sample `order[j]`, so a batch is a run of consecutive rows,
/// wrapping (the twin's `batch_indices`). `None` when an index or a row is out of range.
pub fn data_buffers(
    features: &[f32],
    labels: &[u32],
    width: usize,
    order: &[u32],
) -> Option<Vec<ResidentBuffer<'static>>> {
    let mut xs = Vec::with_capacity(order.len() * width);
    let mut ys = Vec::with_capacity(order.len());
    for &i in order {
        let i = i as usize;
        xs.extend_from_slice(features.get(i * width..(i + 1) * width)?);
        ys.push(*labels.get(i)?);
    }
    Some(vec![
        ResidentBuffer {
            name: buffer::DATA_X,
            init: Init::Bytes(bytemuck::cast_slice(&xs).to_vec().into()),
        },
        ResidentBuffer {
            name: buffer::DATA_Y,
            init: Init::Bytes(bytemuck::cast_slice(&ys).to_vec().into()),
        },
    ])
}

/// Where each of `mlp::net`'s parameter regions lives in the arena.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    /// (offset in `mlp::net`'s layout, arena range), in its order.
    pub params: Vec<(usize, Range)>,
    /// `mlp::net`'s parameter count.
    pub param_len: usize,
    /// The input rows and the logits, in the arena's activation layout.
    pub input: Range,
    pub logits: Range,
}

impl Map {
    /// The map of `engine`, compiled from [`model`]`(net, …)`; `None` when it is not.
    pub fn new(net: &MlpNet, engine: &Net) -> Option<Map> {
        let layout = net.layout();
        let mut params = Vec::new();
        let mut logits = None;
        let mut layers = layout.layers.iter();
        for node in &engine.nodes {
            match node {
                Node::Perceptron { x, y, w, b, .. } => {
                    let lo = layers.next()?;
                    if (x.width, y.width) != (lo.fan_in, lo.fan_out) {
                        return None;
                    }
                    params.push((lo.w_off, *w));
                    params.push((lo.b_off, *b));
                    logits = Some(y.act);
                }
                Node::Gather { .. } | Node::MlpLoss { .. } => {}
                _ => return None,
            }
        }
        let total: usize = params.iter().map(|(_, r)| r.len).sum();
        if layers.next().is_some() || total != layout.param_count {
            return None;
        }
        Some(Map {
            params,
            param_len: layout.param_count,
            input: engine.input.act,
            logits: logits?,
        })
    }

    /// `mlp::net`'s parameter vector in the arena's layout (its padding zero), `words` long.
    pub fn to_arena(&self, flat: &[f32], words: usize) -> Vec<f32> {
        let mut out = vec![0.0; words];
        for &(at, r) in &self.params {
            if let (Some(dst), Some(src)) = (out.get_mut(r.words()), flat.get(at..at + r.len)) {
                dst.copy_from_slice(src);
            }
        }
        out
    }

    /// The arena's parameter layout (or a gradient's, a moment's) back in `mlp::net`'s.
    pub fn params_of(&self, arena: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; self.param_len];
        for &(at, r) in &self.params {
            if let (Some(dst), Some(src)) = (out.get_mut(at..at + r.len), arena.get(r.words())) {
                dst.copy_from_slice(src);
            }
        }
        out
    }
}

/// The rewrite rule of the MLP's train step for a small network ([`lanes_fit`]: at most 8
/// layers of at most 64 neurons, no accumulation, no other path asked for in `paths`): the
/// whole step in two dispatches, `mlp-step-lanes` (one workgroup per lane of the gradient's
/// sum that has a sample, each running its samples forward and backward with the activations
/// in workgroup memory, gathering its rows from the resident training set and advancing the
/// step state) and `mlp-step-reduce` (a workgroup per parameter halves the 64 lane sums and
/// applies the optimiser). They add the terms in `REDUCE`'s order, so the twin's bound
/// holds. Their parameter table holds the arena's offsets; the parameters are numbered in
/// `mlp::net`'s packed order. `None` where the network does not fit (or `engine` is not
/// [`model`] of `net`).
pub fn fused_step(
    net: &MlpNet,
    engine: &Net,
    hyper: &Hyper,
    paths: PathOptions,
) -> Option<Rewrite> {
    if !lanes_fit(net, engine.accum(), paths) {
        return None;
    }
    let rows = engine.nodes.iter().find_map(|n| match n {
        Node::Gather { rows, .. } => Some(*rows),
        _ => None,
    })?;
    let opts = StepOptions {
        accum: 1,
        pinned: &[],
        paths,
    };
    let places = Places::of(engine)?;
    let plan = step_plan_at(net, hyper, engine.batch, rows, opts, places);
    if plan.first()?.kernel_id != "mlp-step-lanes" {
        return None;
    }
    Some(Rewrite {
        dispatches: plan.iter().map(|p| record(p, false, engine)).collect(),
        scratch_words: net.layout().param_count * LANES as usize,
        ..Rewrite::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::mlp::{Activation, LossKind};

    #[test]
    fn the_map_covers_mlp_nets_layout_and_round_trips() {
        let net = MlpNet {
            sizes: vec![3, 5, 70, 2],
            activation: Activation::Tanh,
            loss: LossKind::CrossEntropy,
        };
        let engine = Net::compile(&model(&net, 17, 40, 1)).expect("compiles");
        let map = Map::new(&net, &engine).expect("maps");
        let p: Vec<f32> = (0..map.param_len).map(|i| i as f32 + 1.0).collect();
        let arena = map.to_arena(&p, engine.param_words());
        assert_eq!(map.params_of(&arena), p);
        // Padding between tensors stays zero (the optimiser leaves it there).
        assert_eq!(arena.iter().filter(|&&v| v != 0.0).count(), map.param_len);
        // Hidden layers carry the activation; the output layer is linear; each sends the
        // gradient through the activation below it; the first one sends none.
        let perceptrons: Vec<_> = engine
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Perceptron {
                    act, below, first, ..
                } => Some((*act, *below, *first)),
                _ => None,
            })
            .collect();
        use Activation::{Linear, Tanh};
        assert_eq!(
            perceptrons,
            [
                (Tanh, Linear, true),
                (Tanh, Tanh, false),
                (Linear, Tanh, false)
            ]
        );
        // The gathering layer writes the loss head's targets; an evaluation's forward
        // leaves it out, and nothing of the loss head runs there.
        assert!(
            matches!(engine.nodes[0], Node::Gather { targets, rows: 40, .. } if targets == engine.targets)
        );
        let ids: Vec<_> = engine
            .forward_only()
            .iter()
            .map(|r| r.planned.kernel_id)
            .collect();
        assert_eq!(ids, ["mlp-forward-tiled"; 3]);
        let ids: Vec<_> = engine
            .forward()
            .iter()
            .map(|r| r.planned.kernel_id)
            .collect();
        assert_eq!(ids.first(), Some(&"mlp-gather"));
        assert_eq!(ids.last(), Some(&"mlp-loss"));
        // A regression head over two outputs is refused.
        let two = MlpNet {
            loss: LossKind::Regression,
            ..net
        };
        assert!(Net::compile(&model(&two, 4, 8, 1)).is_err());
    }
}
