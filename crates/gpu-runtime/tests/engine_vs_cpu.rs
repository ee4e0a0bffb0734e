//! The engine's proof: a model made from a layer list alone — linear, LayerNorm, a residual
//! around linear → GELU → linear, linear, softmax cross-entropy — trains with Adam on a real
//! wgpu device (lavapipe under `cargo xtask test`) in lockstep with its CPU twin
//! (`engine::twin`). Sizes cross the tiled kernels' 64-wide tiles and 16-deep slices (batch
//! 37, widths 19, 23, 45, 11), the data are seeded, one row's target is ignored. After every
//! step each parameter, gradient and Adam moment, and each row's loss, must be within the
//! twin's bound, which is derived from the arithmetic (its module header says how); the next
//! step starts from the GPU's state (`Twin::adopt`). Then the evaluation program's losses.
//!
//! Then a GPT block as a layer list (embeddings, pre-LayerNorm causal attention with its
//! projection, the MLP, both residuals, the final LayerNorm and head) with `gpt::model`'s own
//! parameters: its loss must be within the bound of the model's f64 loss, and it must train
//! in lockstep with the twin as the first model does.
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

/// Trains `engine` and `twin` for [`STEPS`] steps on what `feed` writes into both, checking
/// after each step every loss, gradient, Adam moment and parameter against the twin's bound.
fn lockstep(
    net: &Net,
    engine: &mut Engine,
    twin: &mut Twin,
    feed: impl Fn(&mut Engine, &mut Twin, u64),
) {
    let all = net.arena.params.all();
    let reads = [
        all.read(buffer::PARAMS),
        all.read(buffer::GRADS),
        all.read(buffer::M),
        all.read(buffer::V),
        net.losses.read(buffer::DELTAS),
    ];
    for step in 1..=STEPS {
        feed(engine, twin, step);
        engine.run(TRAIN_STEP, 1).expect("a step runs");
        twin.step(net);
        let got = engine.read_blocking(&reads).expect("read back");
        let b = &twin.bound;
        let (losses, loss_bound) = twin.losses(net);
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
    lockstep(&net, &mut engine, &mut twin, |engine, twin, step| {
        let (x, t) = batch(step);
        engine.write_input(&x).expect("input");
        engine.write_targets(&t).expect("targets");
        twin.set_input(&net, &x);
        twin.set_targets(&net, &t);
    });
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

/// `src` (k × m, row-major, the GPT's x·W layout) transposed into `dst` (m × k, the engine's
/// W[out][in]).
fn put_transposed(dst: &mut [f32], src: &[f32], k: usize, m: usize) {
    for kk in 0..k {
        for n in 0..m {
            dst[n * k + kk] = src[kk * m + n];
        }
    }
}

#[test]
fn a_gpt_block_as_a_layer_list_matches_the_models_loss_and_trains_in_lockstep() {
    use gpu_runtime::gpt::model::{Config, Model as Gpt};
    // Odd sizes: 3 sequences of 5 positions, 3 heads of width 4, 11 characters.
    let cfg = Config {
        vocab: 11,
        context: 5,
        width: 12,
        heads: 3,
        layers: 1,
    };
    let (b, c, v, t) = (3, cfg.width, cfg.vocab, cfg.context);
    let gpt = Gpt::new(cfg).expect("a valid shape");
    let model = Model {
        batch: b * t,
        input: 1,
        layers: vec![
            Layer::Embed {
                vocab: v,
                width: c,
                context: t,
            },
            Layer::Residual(vec![
                Layer::LayerNorm,
                Layer::Linear { out: 3 * c },
                Layer::Attention {
                    heads: cfg.heads,
                    context: t,
                },
                Layer::Linear { out: c },
            ]),
            Layer::Residual(vec![
                Layer::LayerNorm,
                Layer::Linear { out: 4 * c },
                Layer::Gelu,
                Layer::Linear { out: c },
            ]),
            Layer::LayerNorm,
            // The head has no bias: the engine's stays zero.
            Layer::Linear { out: v },
            Layer::SoftmaxXent,
        ],
    };
    let net = Net::compile(&model).expect("the block compiles");
    // The GPT's parameters (non-trivial LayerNorms and biases, so a misplaced one shows) put
    // into the engine's layout by name.
    let mut gp: Vec<f32> = gpt.init_params(7);
    let noise = random_vec(gp.len(), 8);
    for (p, n) in gp.iter_mut().zip(&noise) {
        *p += 0.1 * n;
    }
    let (l, bl) = (&gpt.layout, &gpt.layout.blocks[0]);
    // Embeddings of unit spread: GPT-2's 0.02 gives rows of tiny variance, whose LayerNorm
    // multiplies every difference (and so every bound) by 1/σ ≈ 30, leaving the lockstep
    // bound too wide to see a wrong update.
    for (p, n) in gp[l.wte..l.wpe + t * c]
        .iter_mut()
        .zip(random_vec((v + t) * c, 9))
    {
        *p = n;
    }
    let mut p = vec![0.0f32; net.param_words()];
    let range = |name: &str| net.arena.params.get(name).expect(name);
    let copy = |p: &mut Vec<f32>, name: &str, at: usize| {
        let r = range(name);
        p[r.words()].copy_from_slice(&gp[at..at + r.len]);
    };
    copy(&mut p, "1.wte", l.wte);
    copy(&mut p, "1.wpe", l.wpe);
    for (ln, g, be) in [
        ("3", bl.ln1_g, bl.ln1_b),
        ("8", bl.ln2_g, bl.ln2_b),
        ("12", l.lnf_g, l.lnf_b),
    ] {
        copy(&mut p, &format!("{ln}.gamma"), g);
        copy(&mut p, &format!("{ln}.beta"), be);
    }
    for (lin, w, bias, k, m) in [
        ("4", bl.qkv_w, Some(bl.qkv_b), c, 3 * c),
        ("6", bl.proj_w, Some(bl.proj_b), c, c),
        ("9", bl.fc_w, Some(bl.fc_b), c, 4 * c),
        ("11", bl.out_w, Some(bl.out_b), 4 * c, c),
        ("13", l.head, None, c, v),
    ] {
        let r = range(&format!("{lin}.w"));
        put_transposed(&mut p[r.words()], &gp[w..w + k * m], k, m);
        if let Some(at) = bias {
            copy(&mut p, &format!("{lin}.b"), at);
        }
    }
    let tokens: Vec<u32> = (0..b * t).map(|r| ((r * 7 + 3) % v) as u32).collect();
    let targets: Vec<u32> = (0..b * t)
        .map(|r| {
            if r == 4 {
                IGNORE
            } else {
                ((r * 5 + 1) % v) as u32
            }
        })
        .collect();

    let mut engine =
        pollster::block_on(Engine::new(gpu(), net.clone(), LR, &p)).expect("the engine builds");
    engine.write_tokens(&tokens).expect("tokens");
    engine.write_targets(&targets).expect("targets");
    engine.run(EVAL_LOSS, 1).expect("evaluation runs");
    let got = engine
        .read_blocking(&[net.losses.read(buffer::DELTAS)])
        .expect("read back");
    let mut twin = Twin::new(&net, p, LR);
    twin.set_tokens(&net, &tokens);
    twin.set_targets(&net, &targets);
    twin.forward(&net);
    let (losses, bounds) = twin.losses(&net);
    within("block losses", &got[0], losses, bounds);
    // The mean, as the model takes it: rows summed in order over the rows counted.
    let counted = targets.iter().filter(|&&k| k != IGNORE).count() as f64;
    let gpu_loss = got[0].iter().map(|&x| x as f64).sum::<f64>() / counted;
    let bound = bounds.iter().sum::<f64>() / counted;
    let p64: Vec<f64> = gp.iter().map(|&x| x as f64).collect();
    let want = gpt.forward::<f64>(&p64, &tokens, &targets, b).loss;
    println!("block loss: GPU {gpu_loss}, model (f64) {want}, bound {bound:e}");
    assert!(
        (gpu_loss - want).abs() <= bound,
        "the block's loss {gpu_loss} is {:e} from the model's {want}, bound {bound:e}",
        (gpu_loss - want).abs()
    );

    // Then it trains in lockstep, each step on new tokens.
    lockstep(&net, &mut engine, &mut twin, |engine, twin, step| {
        let tokens: Vec<u32> = (0..b * t)
            .map(|r| ((r * 7 + 3 * step as usize) % v) as u32)
            .collect();
        let targets: Vec<u32> = (0..b * t)
            .map(|r| {
                if r == 4 {
                    IGNORE
                } else {
                    ((r * 5 + step as usize) % v) as u32
                }
            })
            .collect();
        engine.write_tokens(&tokens).expect("tokens");
        engine.write_targets(&targets).expect("targets");
        twin.set_tokens(&net, &tokens);
        twin.set_targets(&net, &targets);
    });
}
