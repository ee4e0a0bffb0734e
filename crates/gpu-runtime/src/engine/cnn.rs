//! The CNN page's network (`cnn::net::Net`) as a layer list on the engine, and the maps
//! between the arena and `cnn::net`'s own layouts (its twin's parameter vector and
//! `Workspace`), so that what the engine reads back compares with the twin element for
//! element. The maps are read off the compiled [`Net`]'s ranges; no offset is computed here.

use cnn::net::Net as CnnNet;

use super::{Layer, Model, Net, Node, Range};

/// The layer list of `net` over `batch` images: per block a convolution (bias, ReLU) and a
/// 2 × 2 max-pool, then the dense layer and the loss head.
pub fn model(net: &CnnNet, batch: usize) -> Model {
    let mut layers = Vec::new();
    for s in &net.shapes {
        layers.push(Layer::Conv2d {
            c_in: s.block.c_in,
            side: s.in_side,
            c_out: s.block.c_out,
            kernel: s.block.kernel,
        });
        layers.push(Layer::MaxPool2 {
            channels: s.block.c_out,
            side: s.conv_side,
        });
    }
    layers.push(Layer::Dense { out: net.classes });
    layers.push(Layer::SoftmaxXentProbs);
    Model {
        batch,
        input: net.side * net.side,
        layers,
    }
}

/// Where each of `cnn::net`'s regions lives in the arena: pairs of (offset in `cnn::net`'s
/// layout, arena range), in its order.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    /// The parameter layout (its length: `cnn::net`'s `ParamLayout::len`).
    pub params: Vec<(usize, Range)>,
    pub param_len: usize,
    /// The activation layout, which the deltas share (its length: `ActLayout::len`).
    pub acts: Vec<(usize, Range)>,
    pub act_len: usize,
    /// The pools' winners (u32, in the activation buffer; `ActLayout::argmax_len`).
    pub argmax: Vec<(usize, Range)>,
    pub argmax_len: usize,
    /// The logits, in the arena's activation layout.
    pub logits: Range,
    /// The images, in the arena's activation layout.
    pub input: Range,
}

impl Map {
    /// The map of `engine`, compiled from [`model`]`(net, batch)`; `None` when it is not.
    pub fn new(net: &CnnNet, engine: &Net) -> Option<Map> {
        let pl = net.param_layout();
        let l = net.act_layout(engine.batch);
        let mut params = Vec::new();
        let mut acts = vec![(l.input, engine.input.act)];
        let mut argmax = Vec::new();
        let (mut block, mut logits) = (0usize, None);
        for node in &engine.nodes {
            match node {
                Node::Conv2d { conv, y, w, b, .. } => {
                    let (p, a) = (pl.conv.get(block)?, l.blocks.get(block)?);
                    params.push((p.w, *w));
                    params.push((p.b, *b));
                    acts.push((a.conv, conv.act));
                    acts.push((a.relu, y.act));
                }
                Node::MaxPool2 { y, argmax: arg, .. } => {
                    let a = l.blocks.get(block)?;
                    acts.push((a.pool, y.act));
                    argmax.push((a.argmax, *arg));
                    block += 1;
                }
                Node::Dense { y, w, b, .. } => {
                    params.push((pl.dense_w, *w));
                    params.push((pl.dense_b, *b));
                    acts.push((l.logits, y.act));
                    logits = Some(y.act);
                }
                Node::SoftmaxXentProbs { probs, .. } => acts.push((l.probs, probs.act)),
                _ => return None,
            }
        }
        let total = |v: &[(usize, Range)]| v.iter().map(|(_, r)| r.len).sum::<usize>();
        if block != net.shapes.len()
            || total(&params) != pl.len
            || total(&acts) != l.len
            || total(&argmax) != l.argmax_len
        {
            return None;
        }
        Some(Map {
            params,
            param_len: pl.len,
            acts,
            act_len: l.len,
            argmax,
            argmax_len: l.argmax_len,
            logits: logits?,
            input: engine.input.act,
        })
    }

    /// `cnn::net`'s parameter vector (or a gradient, or a moment) in the arena's layout (its
    /// padding zero), `words` long.
    pub fn to_arena(&self, flat: &[f32], words: usize) -> Vec<f32> {
        let mut out = vec![0.0; words];
        for &(at, r) in &self.params {
            if let (Some(dst), Some(src)) = (out.get_mut(r.words()), flat.get(at..at + r.len)) {
                dst.copy_from_slice(src);
            }
        }
        out
    }

    /// The arena's parameter layout back in `cnn::net`'s.
    pub fn params_of(&self, arena: &[f32]) -> Vec<f32> {
        gather(&self.params, self.param_len, arena)
    }

    /// The arena's activations (or deltas) back in `cnn::net`'s `Workspace` layout.
    pub fn acts_of(&self, arena: &[f32]) -> Vec<f32> {
        gather(&self.acts, self.act_len, arena)
    }

    /// The pools' winners from the arena's activation buffer.
    pub fn argmax_of(&self, arena: &[f32]) -> Vec<u32> {
        gather(&self.argmax, self.argmax_len, arena)
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }
}

fn gather(map: &[(usize, Range)], len: usize, arena: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; len];
    for &(at, r) in map {
        if let (Some(dst), Some(src)) = (out.get_mut(at..at + r.len), arena.get(r.words())) {
            dst.copy_from_slice(src);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cnn::net::Block;

    #[test]
    fn the_maps_cover_cnn_nets_layouts_and_round_trip() {
        let b = |c_in, c_out, kernel| Block {
            c_in,
            c_out,
            kernel,
        };
        let net = CnnNet::new(13, vec![b(1, 3, 3), b(3, 4, 3)], 10).expect("fits");
        let engine = Net::compile(&model(&net, 5)).expect("compiles");
        let map = Map::new(&net, &engine).expect("maps");
        let p: Vec<f32> = (0..map.param_len).map(|i| i as f32).collect();
        let arena = map.to_arena(&p, engine.param_words());
        assert_eq!(map.params_of(&arena), p);
        // Every range is mirrored: an activation's delta sits at its offset.
        for node in &engine.nodes {
            if let Node::Conv2d { conv, y, .. } = node {
                assert_eq!((conv.act.at, y.act.at), (conv.delta.at, y.delta.at));
            }
        }
        let l = net.act_layout(5);
        assert_eq!(map.acts.first().map(|a| a.0), Some(l.input));
        assert_eq!(map.act_len, l.len);
    }
}
