//! The engine's proof: a model made from a layer list alone — linear, LayerNorm, a residual
//! around linear → GELU → linear, linear, softmax cross-entropy — trains with Adam on a real
//! wgpu device (lavapipe under `cargo xtask test`) in lockstep with its CPU twin
//! (`engine::twin`). Sizes cross the tiled kernels' 64-wide tiles and 16-deep slices (batch
//! 37, widths 19, 23, 45, 11), the data are seeded, one row's target is ignored. After every
//! step each parameter, gradient and Adam moment, and each row's loss, must be within the
//! twin's bound, which is derived from the arithmetic and carried from step to step (its
//! module header says how); then the evaluation program's losses must be too.

use std::rc::Rc;

use gpu_runtime::cpu_kernels::data::random_vec;
use gpu_runtime::engine::{buffer, twin::Twin, Engine, Layer, Model, Net, EVAL_LOSS, TRAIN_STEP};
use gpu_runtime::gpt::ops::IGNORE;
use gpu_runtime::Gpu;

/// The test adapter (lavapipe under `cargo xtask test`, as `tests/common` asks); a missing
/// one fails, never skips.
fn gpu() -> Rc<Gpu> {
    Rc::new(Gpu::request_blocking().expect(
        "no GPU adapter: install a Vulkan driver (`cargo xtask test` installs Mesa's lavapipe)",
    ))
}

const BATCH: usize = 37;
const INPUT: usize = 19;
const CLASSES: usize = 11;
const STEPS: u64 = 4;
const LR: f32 = 0.01;

fn model() -> Model {
    Model {
        batch: BATCH,
        input: INPUT,
        layers: vec![
            Layer::Linear { out: 23 },
            Layer::LayerNorm,
            Layer::Residual(vec![
                Layer::Linear { out: 45 },
                Layer::Gelu,
                Layer::Linear { out: 23 },
            ]),
            Layer::Linear { out: CLASSES },
            Layer::SoftmaxXent,
        ],
    }
}

/// Seeded starting parameters in the net's layout: weights uniform in ±1/√fan_in, biases and
/// β small, γ near 1, padding zero.
fn start(net: &Net) -> Vec<f32> {
    let mut p = vec![0.0f32; net.param_words()];
    for (k, (name, r)) in net.arena.params.entries().iter().enumerate() {
        let v = random_vec(r.len, 1000 + k as u64);
        let dst = &mut p[r.words()];
        if name.ends_with(".gamma") {
            dst.iter_mut().zip(&v).for_each(|(d, s)| *d = 1.0 + 0.1 * s);
        } else if name.ends_with(".w") {
            // fan_in: the row length, the weight count over the layer's bias count.
            let bias = net
                .arena
                .params
                .get(&name.replace(".w", ".b"))
                .map_or(1, |b| b.len.max(1));
            let scale = 1.0 / ((r.len / bias) as f32).sqrt();
            dst.iter_mut().zip(&v).for_each(|(d, s)| *d = scale * s);
        } else {
            dst.iter_mut().zip(&v).for_each(|(d, s)| *d = 0.1 * s);
        }
    }
    p
}

fn batch(step: u64) -> (Vec<f32>, Vec<u32>) {
    let x: Vec<f32> = random_vec(BATCH * INPUT, 50 + step)
        .iter()
        .map(|v| 2.0 * v)
        .collect();
    let t = (0..BATCH)
        .map(|r| {
            if r == 5 {
                IGNORE
            } else {
                ((r as u64 * 7 + step * 3) % CLASSES as u64) as u32
            }
        })
        .collect();
    (x, t)
}

/// |gpu − twin| ≤ bound everywhere; returns the largest error over its bound.
fn within(what: &str, gpu: &[f32], twin: &[f32], bound: &[f64]) -> f64 {
    assert_eq!(gpu.len(), twin.len(), "{what}: length");
    let mut worst = 0.0f64;
    for (i, ((&g, &t), &b)) in gpu.iter().zip(twin).zip(bound).enumerate() {
        let e = (g as f64 - t as f64).abs();
        assert!(
            e <= b,
            "{what}[{i}]: GPU {g}, twin {t}, apart {e:e}, bound {b:e}"
        );
        if b > 0.0 {
            worst = worst.max(e / b);
        }
    }
    worst
}

#[test]
fn a_layer_list_with_a_residual_trains_in_lockstep_with_its_twin() {
    let gpu = gpu();
    let net = Net::compile(&model()).expect("the model compiles");
    let params = start(&net);
    let mut engine =
        pollster::block_on(Engine::new(gpu, net.clone(), LR, &params)).expect("the engine builds");
    assert_eq!(engine.programs(), [TRAIN_STEP, EVAL_LOSS]);
    let mut twin = Twin::new(&net, params, LR);
    let all = net.arena.params.all();
    let reads = [
        all.read(buffer::PARAMS),
        all.read(buffer::GRADS),
        all.read(buffer::M),
        all.read(buffer::V),
        net.losses.read(buffer::DELTAS),
    ];
    for step in 1..=STEPS {
        let (x, t) = batch(step);
        engine.write_input(&x).expect("input");
        engine.write_targets(&t).expect("targets");
        twin.set_input(&net, &x);
        twin.set_targets(&net, &t);
        engine.run(TRAIN_STEP, 1).expect("a step runs");
        twin.step(&net);
        let got = engine.read_blocking(&reads).expect("read back");
        let b = &twin.bound;
        let (losses, loss_bound) = twin.losses(&net);
        let worst = [
            within(&format!("step {step} loss"), &got[4], losses, loss_bound),
            within(
                &format!("step {step} grads"),
                &got[1],
                &twin.grads,
                &b.grads,
            ),
            within(&format!("step {step} m"), &got[2], &twin.m, &b.m),
            within(&format!("step {step} v"), &got[3], &twin.v, &b.v),
            within(
                &format!("step {step} params"),
                &got[0],
                &twin.params,
                &b.params,
            ),
        ];
        // The bound must stay informative: a bound that allowed most parameters a whole
        // step's move could not see a wrong update. (Where a gradient is within its own bound
        // of zero, Adam's normalisation lets its sign, and so a step of up to about lr, differ.)
        let mut sorted: Vec<f64> = all.words().map(|i| b.params[i]).collect();
        sorted.sort_by(f64::total_cmp);
        let (median, p90) = (sorted[sorted.len() / 2], sorted[sorted.len() * 9 / 10]);
        println!(
            "step {step}: largest error / bound (loss, grads, m, v, params) {worst:?}; \
             parameter bounds: median {median:.2e}, 90th percentile {p90:.2e} (lr {LR})"
        );
        assert!(
            median < 0.1 * LR as f64,
            "the parameter bounds grew to {median:e} (median)"
        );
        // The next step starts from the GPU's state, found within its bound.
        twin.adopt(&got[0], &got[2], &got[3]);
    }
    assert_eq!(engine.steps(), STEPS);

    // The evaluation program: the forward alone, on a new batch, with the trained parameters.
    let (x, t) = batch(STEPS + 1);
    engine.write_input(&x).expect("input");
    engine.write_targets(&t).expect("targets");
    twin.set_input(&net, &x);
    twin.set_targets(&net, &t);
    engine.run(EVAL_LOSS, 1).expect("evaluation runs");
    twin.forward(&net);
    let got = engine
        .read_blocking(&[net.losses.read(buffer::DELTAS)])
        .expect("read back");
    let (losses, loss_bound) = twin.losses(&net);
    within("evaluation loss", &got[0], losses, loss_bound);
    assert_eq!(engine.steps(), STEPS, "an evaluation is no training step");
}

#[test]
fn models_that_cannot_be_laid_out_are_refused_with_a_reason() {
    let bad = |layers: Vec<Layer>| {
        Net::compile(&Model {
            batch: 3,
            input: 4,
            layers,
        })
        .err()
        .unwrap_or_default()
    };
    assert!(bad(vec![Layer::Gelu]).contains("loss head"));
    assert!(bad(vec![Layer::SoftmaxXent, Layer::Gelu]).contains("last layer"));
    assert!(bad(vec![
        Layer::Residual(vec![Layer::Linear { out: 5 }]),
        Layer::SoftmaxXent
    ])
    .contains("width"));
    assert!(bad(vec![Layer::Residual(vec![]), Layer::SoftmaxXent]).contains("empty"));
}
