//! One network for "look inside": the filters, a test image's feature maps, the confusion
//! matrix and the mistakes all come from the same [`Snapshot`], so a learner never sees the
//! filters after one step beside a confusion matrix after another.
//!
//! The GPU side reads its network back in pieces (the test split's logits, then the
//! parameters, then one image's activations), sending no step in between; [`Pending`]
//! gathers the pieces of one step and hands over a snapshot once the evaluation and the
//! parameters of that step are both in. The activations may follow (same step) or not; a
//! test image the GPU did not read back is run through the snapshot's own parameters by the
//! CPU twin's forward pass, so it is still the same network.

use ::cnn::net::{LayerView, Net};

use super::inspect::classify;
use crate::train::run::Side;

/// What "look inside" shows, all of it the network of one side after `step` steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub side: Side,
    pub step: u64,
    /// The network's parameters (its filters; its forward pass for a picked image).
    pub params: Vec<f32>,
    /// The test split's logits (rows × classes) and each row's predicted class.
    pub logits: Vec<f32>,
    pub predicted: Vec<u32>,
    /// A test image's activations at every layer as this side computed them, if read.
    pub layers: Option<(usize, Vec<LayerView>)>,
}

/// Where a test image's maps in a snapshot came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapsFrom {
    /// The side's own reading of its activations.
    Side,
    /// The snapshot's parameters run through the CPU twin's forward pass.
    Twin,
}

impl Snapshot {
    /// Test image `index`'s maps at every layer in this network, and where they came from;
    /// None when the image or the parameters do not fit the network.
    pub fn layers_of(
        &self,
        net: &Net,
        index: usize,
        image: &[f32],
    ) -> Option<(Vec<LayerView>, MapsFrom)> {
        match &self.layers {
            Some((i, views)) if *i == index => Some((views.clone(), MapsFrom::Side)),
            _ => classify(net, &self.params, Ok(image.to_vec()))
                .ok()
                .map(|ins| (ins.layers, MapsFrom::Twin)),
        }
    }
}

/// The GPU's pieces of one step's snapshot as they arrive.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pending {
    step: Option<u64>,
    eval: Option<(Vec<f32>, Vec<u32>)>,
    params: Option<Vec<f32>>,
}

impl Pending {
    /// The test evaluation of `step`: pieces of another step are dropped.
    pub fn eval(&mut self, step: u64, logits: Vec<f32>, predicted: Vec<u32>) -> Option<Snapshot> {
        self.at(step);
        self.eval = Some((logits, predicted));
        self.take()
    }

    /// The parameters after `step` steps.
    pub fn params(&mut self, step: u64, params: Vec<f32>) -> Option<Snapshot> {
        self.at(step);
        self.params = Some(params);
        self.take()
    }

    fn at(&mut self, step: u64) {
        if self.step != Some(step) {
            *self = Pending {
                step: Some(step),
                ..Pending::default()
            };
        }
    }

    fn take(&mut self) -> Option<Snapshot> {
        let step = self.step?;
        if self.eval.is_none() || self.params.is_none() {
            return None;
        }
        let (logits, predicted) = self.eval.take()?;
        let params = self.params.take()?;
        *self = Pending::default();
        Some(Snapshot {
            side: Side::Gpu,
            step,
            params,
            logits,
            predicted,
            layers: None,
        })
    }
}

/// Adds a side's reading of test image `index`'s activations after `step` steps to the
/// snapshot of that step (one of another step would mix two networks, and is dropped).
pub fn add_layers(snapshot: &mut Option<Snapshot>, step: u64, index: usize, views: Vec<LayerView>) {
    if let Some(s) = snapshot.as_mut().filter(|s| s.step == step) {
        s.layers = Some((index, views));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::cnn::Spec;

    fn view(v: f32) -> Vec<LayerView> {
        vec![LayerView {
            kind: ::cnn::net::LayerKind::Input,
            block: 0,
            channels: 1,
            side: 1,
            values: vec![v],
        }]
    }

    #[test]
    fn a_snapshot_needs_the_evaluation_and_the_parameters_of_one_step() {
        let mut p = Pending::default();
        assert_eq!(p.eval(3, vec![1.0, 0.0], vec![0]), None);
        let s = p.params(3, vec![0.5]).expect("both pieces of step 3");
        assert_eq!((s.side, s.step), (Side::Gpu, 3));
        assert_eq!(
            (s.params, s.logits, s.predicted),
            (vec![0.5], vec![1.0, 0.0], vec![0])
        );
        assert_eq!(s.layers, None);
        // Taken: the next snapshot starts from nothing.
        assert_eq!(p.params(3, vec![0.6]), None);
    }

    #[test]
    fn pieces_of_two_steps_never_make_a_snapshot() {
        let mut p = Pending::default();
        assert_eq!(p.eval(3, vec![1.0], vec![0]), None);
        // The parameters of step 7 replace step 3's evaluation rather than joining it.
        assert_eq!(p.params(7, vec![0.5]), None);
        let s = p.eval(7, vec![2.0], vec![0]).expect("step 7 complete");
        assert_eq!((s.step, s.logits), (7, vec![2.0]));
        // Either order.
        assert_eq!(p.params(9, vec![0.1]), None);
        assert_eq!(p.eval(8, vec![0.0], vec![0]), None);
        assert_eq!(p.params(8, vec![0.2]).map(|s| s.step), Some(8));
    }

    #[test]
    fn activations_join_only_the_snapshot_of_their_step() {
        let mut p = Pending::default();
        p.eval(4, vec![], vec![]);
        let mut snap = p.params(4, vec![]);
        add_layers(&mut snap, 5, 0, view(1.0));
        assert_eq!(
            snap.as_ref().and_then(|s| s.layers.clone()),
            None,
            "step 5 is another network"
        );
        add_layers(&mut snap, 4, 2, view(2.0));
        assert_eq!(snap.and_then(|s| s.layers), Some((2, view(2.0))));
    }

    #[test]
    fn an_image_not_read_back_runs_through_the_snapshots_own_parameters() {
        let spec = Spec::default();
        let net = spec.net().expect("default spec");
        let params = net.init_params(spec.seed);
        let image = vec![0.25f32; net.side * net.side];
        let snap = Snapshot {
            side: Side::Gpu,
            step: 2,
            params: params.clone(),
            logits: vec![],
            predicted: vec![],
            layers: Some((0, view(9.0))),
        };
        // Image 0 was read back: those maps, as read.
        assert_eq!(
            snap.layers_of(&net, 0, &image),
            Some((view(9.0), MapsFrom::Side))
        );
        // Image 5 was not: the twin's forward pass through the same parameters.
        let (views, from) = snap.layers_of(&net, 5, &image).expect("fits the network");
        assert_eq!(from, MapsFrom::Twin);
        let want = classify(&net, &params, Ok(image.clone()))
            .expect("classifies")
            .layers;
        assert_eq!(views, want);
        // Parameters of another shape: nothing, rather than another network's maps.
        let wrong = Snapshot {
            params: vec![0.0; 3],
            ..snap
        };
        assert_eq!(wrong.layers_of(&net, 5, &image), None);
    }
}
