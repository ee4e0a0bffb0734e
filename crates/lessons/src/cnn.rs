//! The convolution lesson's calculator: a network's parameters and multiply-adds (MACs) from its
//! layer shapes, AlexNet's layers as the paper describes them, and what its training run
//! implies about the GPUs' sustained rate.
//!
//! AlexNet (Krizhevsky, Sutskever, Hinton, NeurIPS 2012, fig. 2 and §3.5): a 224×224×3 input
//! (227×227 is what makes the first layer's 55×55 output come out whole: (227 − 11)/4 + 1 = 55),
//! five convolutional layers and three fully connected ones; conv 2, 4 and 5 are split across
//! the two GPUs (groups = 2: each filter sees half of the previous layer's maps).

/// One layer of a feed-forward CNN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// `k` filters of `r`×`r` over `c` input channels, `groups` groups (each filter sees
    /// c/groups channels), then an optional max-pool of `pool`×`pool` at stride `pool_stride`.
    Conv {
        c: u32,
        k: u32,
        r: u32,
        stride: u32,
        pad: u32,
        groups: u32,
        pool: Option<(u32, u32)>,
    },
    /// A fully connected layer: every output sees every input.
    Fc { inputs: u64, outputs: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    pub name: &'static str,
    pub kind: LayerKind,
}

/// A layer's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerCost {
    pub name: &'static str,
    /// Output height, width and channels (before pooling), or (1, 1, outputs).
    pub out: (u64, u64, u64),
    /// Weights plus biases.
    pub params: u64,
    /// Multiply-adds of one image's forward pass.
    pub macs: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CnnError {
    /// The layer's filter does not fit its input, or a size is zero (the layer's name).
    DoesNotFit(&'static str),
    /// Channels not divisible by the groups.
    Groups(&'static str),
}

pub const ALEXNET_INPUT: (u64, u64, u64) = (227, 227, 3);

pub const ALEXNET: [Layer; 8] = [
    conv("conv1", 3, 96, 11, 4, 0, 1, Some((3, 2))),
    conv("conv2", 96, 256, 5, 1, 2, 2, Some((3, 2))),
    conv("conv3", 256, 384, 3, 1, 1, 1, None),
    conv("conv4", 384, 384, 3, 1, 1, 2, None),
    conv("conv5", 384, 256, 3, 1, 1, 2, Some((3, 2))),
    fc("fc6", 6 * 6 * 256, 4096),
    fc("fc7", 4096, 4096),
    fc("fc8", 4096, 1000),
];

#[allow(clippy::too_many_arguments)]
const fn conv(
    name: &'static str,
    c: u32,
    k: u32,
    r: u32,
    stride: u32,
    pad: u32,
    groups: u32,
    pool: Option<(u32, u32)>,
) -> Layer {
    Layer {
        name,
        kind: LayerKind::Conv {
            c,
            k,
            r,
            stride,
            pad,
            groups,
            pool,
        },
    }
}

const fn fc(name: &'static str, inputs: u64, outputs: u64) -> Layer {
    Layer {
        name,
        kind: LayerKind::Fc { inputs, outputs },
    }
}

fn out_len(input: u64, r: u64, stride: u64, pad: u64) -> Option<u64> {
    let padded = input + 2 * pad;
    (r >= 1 && stride >= 1 && padded >= r).then(|| (padded - r) / stride + 1)
}

/// Every layer's output size, parameters and MACs, feeding each layer the previous one's
/// (pooled) output, starting from `input` (H, W, C).
pub fn costs(input: (u64, u64, u64), layers: &[Layer]) -> Result<Vec<LayerCost>, CnnError> {
    let (mut h, mut w, mut ch) = input;
    let mut out = Vec::new();
    for l in layers {
        match l.kind {
            LayerKind::Conv {
                c,
                k,
                r,
                stride,
                pad,
                groups,
                pool,
            } => {
                let (c, k, r, groups) = (c as u64, k as u64, r as u64, groups as u64);
                if groups == 0 || c % groups != 0 || k % groups != 0 {
                    return Err(CnnError::Groups(l.name));
                }
                if c != ch || k == 0 {
                    return Err(CnnError::DoesNotFit(l.name));
                }
                let fit = |len| out_len(len, r, stride as u64, pad as u64);
                let (Some(p), Some(q)) = (fit(h), fit(w)) else {
                    return Err(CnnError::DoesNotFit(l.name));
                };
                let per_output = r * r * (c / groups);
                out.push(LayerCost {
                    name: l.name,
                    out: (p, q, k),
                    params: per_output * k + k,
                    macs: p * q * k * per_output,
                });
                (h, w, ch) = (p, q, k);
                if let Some((size, step)) = pool {
                    let fit = |len| out_len(len, size as u64, step as u64, 0);
                    let (Some(p), Some(q)) = (fit(h), fit(w)) else {
                        return Err(CnnError::DoesNotFit(l.name));
                    };
                    (h, w) = (p, q);
                }
            }
            LayerKind::Fc { inputs, outputs } => {
                if inputs != h * w * ch || outputs == 0 {
                    return Err(CnnError::DoesNotFit(l.name));
                }
                out.push(LayerCost {
                    name: l.name,
                    out: (1, 1, outputs),
                    params: inputs * outputs + outputs,
                    macs: inputs * outputs,
                });
                (h, w, ch) = (1, 1, outputs);
            }
        }
    }
    Ok(out)
}

/// Floating-point operations of training: forward 2 FLOPs per MAC, backward about twice the
/// forward (gradients for the inputs and for the weights), so 6 per MAC, per image, per epoch.
pub fn training_flops(macs_per_image: u64, images: f64, epochs: f64) -> f64 {
    6.0 * macs_per_image as f64 * images * epochs
}

/// The sustained rate a run of `flops` in `days` implies (FLOP/s), and its share of `gpus`
/// GPUs' peak of `peak_flops` each.
pub fn implied_rate(flops: f64, days: f64, gpus: f64, peak_flops: f64) -> Option<(f64, f64)> {
    if !(days > 0.0 && gpus > 0.0 && peak_flops > 0.0 && flops.is_finite()) {
        return None;
    }
    let rate = flops / (days * 86_400.0);
    Some((rate, rate / (gpus * peak_flops)))
}

/// One GTX 580's FP32 peak: 512 CUDA cores × 1,544 MHz shader clock × 2 (an FMA is two FLOPs).
pub const GTX580_PEAK_FLOPS: f64 = 512.0 * 1.544e9 * 2.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alexnet_by_hand() {
        let c = costs(ALEXNET_INPUT, &ALEXNET).expect("AlexNet fits");
        // Output sizes: 55, 27, 13, 13, 13 (conv), then pooled to 6×6×256 = 9216 for fc6.
        let outs: Vec<_> = c.iter().map(|l| l.out).collect();
        assert_eq!(outs[0], (55, 55, 96));
        assert_eq!(outs[1], (27, 27, 256));
        assert_eq!(outs[4], (13, 13, 256));
        // conv1: 11·11·3·96 + 96 weights; 55·55·96 outputs × 363 MACs.
        assert_eq!(c[0].params, 34_944);
        assert_eq!(c[0].macs, 105_415_200);
        // conv2 (2 groups): 5·5·48·256 + 256; 27·27·256 × 1200.
        assert_eq!(c[1].params, 307_456);
        assert_eq!(c[1].macs, 223_948_800);
        assert_eq!(c[2].macs, 169 * 384 * 2304);
        assert_eq!(c[3].params, 3 * 3 * 192 * 384 + 384);
        assert_eq!(c[5].params, 9216 * 4096 + 4096);
        let params: u64 = c.iter().map(|l| l.params).sum();
        let macs: u64 = c.iter().map(|l| l.macs).sum();
        let conv_macs: u64 = c[..5].iter().map(|l| l.macs).sum();
        // "60 million parameters": 60,965,224. Convolutions: 92 % of the MACs, 4 % of the weights.
        assert_eq!(params, 60_965_224);
        assert_eq!(macs, 724_406_816);
        assert_eq!(conv_macs, 665_784_864);
        // 224×224 does not fit: (224 − 11)/4 + 1 is not whole, and the rest stops matching.
        assert!(costs((224, 224, 3), &ALEXNET).is_err());
    }

    #[test]
    fn training_arithmetic() {
        // 724.4 M MACs × 6 × 1.2 M images × 90 epochs ≈ 4.69e17 FLOPs.
        let f = training_flops(724_406_816, 1.2e6, 90.0);
        assert!((f / 4.694e17 - 1.0).abs() < 1e-3, "{f}");
        assert!((GTX580_PEAK_FLOPS - 1.581e12).abs() < 1e9);
        // Over 5.5 days on two GTX 580s: ≈ 0.99 TFLOP/s, ≈ 31 % of their peak.
        let (rate, share) = implied_rate(f, 5.5, 2.0, GTX580_PEAK_FLOPS).expect("valid");
        assert!((rate / 0.9877e12 - 1.0).abs() < 2e-3, "{rate}");
        assert!((share - 0.3124).abs() < 1e-3, "{share}");
        assert_eq!(implied_rate(f, 0.0, 2.0, 1.0), None);
        assert_eq!(implied_rate(f, 1.0, 2.0, -1.0), None);
    }

    #[test]
    fn bad_layers_are_named() {
        let bad = [conv("x", 3, 8, 5, 1, 0, 2, None)];
        assert_eq!(costs((8, 8, 3), &bad), Err(CnnError::Groups("x")));
        let big = [conv("y", 3, 8, 9, 1, 0, 1, None)];
        assert_eq!(costs((8, 8, 3), &big), Err(CnnError::DoesNotFit("y")));
        let f = [fc("z", 10, 2)];
        assert_eq!(costs((2, 2, 3), &f), Err(CnnError::DoesNotFit("z")));
    }
}
