//! `bench dump-kernels --dir DIR --gpt-peer SHAPE`: what a peer implementation of the GPT
//! training step (`crates/bench/tfjs/gpt_tfjs.mjs`, TensorFlow.js on Dawn) needs to train
//! the engine's model and to prove it does before it is timed. Writes DIR/gpt-peer/:
//!
//! - `gpt.json`: the shape (`gpt::Config`), the batch (windows × context rows), Adam's
//!   constants (`cpu_kernels::optim`, the engine's) and learning rate, LayerNorm's ε, GELU's
//!   constants, the parameter tensors (name, offset in floats, shape; `gpt::ParamLayout`'s
//!   order, every weight k × m row-major as the model's x·W), the reference losses and their
//!   bounds (below), and the f32 twin's losses for comparison.
//! - `params.bin`: `gpt::Model::init_params(SEED)`, f32 little-endian, `ParamLayout` order.
//! - `tokens.bin`, `targets.bin`: one seeded batch of windows (`gpt::data::window` of seeded
//!   documents of 1…context tokens, so short ones end in IGNORE = 0xFFFFFFFF targets), u32.
//!
//! SHAPE is `default` (`gpt::Config::default_for(28)`, 32 windows, lr 1e-2: the engine's
//! `GptSession` defaults and the vocabulary of `docs/benchmarks.md`'s engine step) or
//! `key=value,…` over vocab, context, width, heads, layers, batch, lr (the rest default).
//!
//! # The reference and its bound
//! `gpt::Model::loss_and_grad` in f64 with Adam in f64 (the engine's β₁, β₂, ε and lr): the
//! loss on the batch before any step, then after each of [`STEPS`] steps on that same batch.
//! A peer computes in f32, in its own summation orders. Every floating-point sum of k terms
//! is within k·u·Σ|terms| of the exact one (u = 2⁻²⁴, any order), so:
//! - **Forward**: ρ_f = u·R_f, R_f the reduction lengths along the longest chain from the
//!   parameters to the loss (per block: LayerNorm's two sums of c, qkv's c, the scores' hs,
//!   softmax's t, P·V's t, proj's c, LayerNorm's 2c, fc's c, out's 4c, plus a few roundings
//!   per element-wise step; then the final LayerNorm, the head's c, the log-sum-exp's vocab and
//!   the mean over the counted rows); errors added along the chain, each stage's output
//!   taken at the magnitude of its terms. The loss L₀ is held to ρ_f·L₀.
//! - **Steps**: a gradient adds the backward's chain (R_b: the head's vocab, each linear
//!   layer's output-width sum, LayerNorm's 2c, attention's hs and 3t) and its own batch sum of
//!   N rows: ρ_g = u·(R_f + R_b + N). Adam's update lr·m̂/(√v̂ + ε) is scale-free in the
//!   gradient, so a relative error ρ_g in every gradient moves each update by at most 2ρ_g of
//!   itself, and (first order) the loss by at most 2ρ_g of what that step changed it by. The
//!   displacement persists, and the moments carry each gradient into every later update, so
//!   after k steps: tol_k = ρ_f·L_k + 2ρ_g·Σ_{j≤k} (k − j + 1)·|L_{j−1} − L_j|.
//!
//! This is a first-order bound, so the dump checks it against the arithmetic it claims to
//! cover: the same model in f32 (`gpt` in f32 and `cpu_kernels::optim::adam_update`, the
//! f32 twin, summing in yet another order) must land inside it, or nothing is written.

use gpu_runtime::cpu_kernels::data::SplitMix64;
use gpu_runtime::cpu_kernels::optim;
use gpu_runtime::gpt::data::window;
use gpu_runtime::gpt::ops::{IGNORE, LN_EPS};
use gpu_runtime::gpt::{Config, Model, ParamLayout};

use crate::json::{f, js, num_list};

/// The seed of the parameters and of the batch.
pub const SEED: u64 = 39;
/// Adam steps the reference takes on the batch (losses after 0…STEPS steps are written).
pub const STEPS: usize = 3;
/// √(2/π) and the cubic coefficient of GELU's tanh form (`gpt::ops::gelu`).
const GELU_C: f64 = 0.797_884_560_802_865_4;
const GELU_A: f64 = 0.044_715;

/// The peer's shape, batch and learning rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeerSpec {
    pub cfg: Config,
    /// Windows per step.
    pub batch: usize,
    pub lr: f64,
}

/// `default`, or `key=value,…` over vocab, context, width, heads, layers, batch, lr.
pub fn parse(spec: &str) -> Result<PeerSpec, String> {
    let mut s = PeerSpec {
        cfg: Config::default_for(28),
        batch: 32,
        lr: 1e-2,
    };
    if spec.trim() == "default" {
        return Ok(s);
    }
    for kv in spec.split(',') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--gpt-peer wants `default` or key=value,…: `{kv}`"))?;
        let n = || {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--gpt-peer {k} wants a whole number ≥ 1: `{v}`"))
        };
        match k.trim() {
            "vocab" => s.cfg.vocab = n()?,
            "context" => s.cfg.context = n()?,
            "width" => s.cfg.width = n()?,
            "heads" => s.cfg.heads = n()?,
            "layers" => s.cfg.layers = n()?,
            "batch" => s.batch = n()?.min(4096),
            "lr" => {
                s.lr = v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 1.0)
                    .ok_or_else(|| format!("--gpt-peer lr wants 0 < lr ≤ 1: `{v}`"))?
            }
            other => return Err(format!("--gpt-peer: unknown key `{other}`")),
        }
    }
    s.cfg.validate().map_err(|e| format!("--gpt-peer: {e}"))?;
    if s.cfg.vocab < 2 {
        return Err("--gpt-peer: a vocabulary of at least 2 (the boundary and one more)".into());
    }
    Ok(s)
}

/// One seeded batch: `batch` windows of documents of 1…context tokens from 1…vocab − 1.
pub fn seeded_batch(s: &PeerSpec) -> (Vec<u32>, Vec<u32>) {
    let t = s.cfg.context;
    let mut rng = SplitMix64::new(SEED ^ 0xBA7C_4000);
    let (mut tokens, mut targets) = (Vec::new(), Vec::new());
    for _ in 0..s.batch {
        let len = 1 + (rng.next_u64() % t as u64) as usize;
        let doc: Vec<u32> = (0..len)
            .map(|_| 1 + (rng.next_u64() % (s.cfg.vocab as u64 - 1)) as u32)
            .collect();
        let (a, b) = window(&doc, t);
        tokens.extend(a);
        targets.extend(b);
    }
    (tokens, targets)
}

/// (R_f, R_b): the forward's and the backward's reduction lengths along the longest chain
/// (see the module documentation), each element-wise step counted as the roundings it makes.
pub fn reduction_lengths(cfg: &Config, rows: usize) -> (usize, usize) {
    let (c, t, v) = (cfg.width, cfg.context, cfg.vocab);
    let hs = cfg.head_size();
    // LayerNorm: Σx and Σ(x − mean)² over c, then sqrt, divide, scale, shift.
    let ln = 2 * c + 4;
    // Per block: ln1, qkv (+ bias), scores (+ scale), softmax (max-sub, exp, sum, divide),
    // P·V, proj (+ bias), residual; ln2, fc (+ bias), GELU (cube, multiply-adds, tanh, …),
    // out (+ bias), residual.
    let block_f =
        ln + (c + 1) + (hs + 1) + (t + 3) + t + (c + 1) + 1 + ln + (c + 1) + 8 + (4 * c + 1) + 1;
    // Then the embedding's add, the final LayerNorm, the head, log-sum-exp and the mean.
    let r_f = 1 + cfg.layers * block_f + ln + c + (v + 3) + rows;
    // Backward: the loss gradient; the head's dx (sum over vocab); lnf's two sums; per block,
    // out's dx (c), GELU's derivative, fc's dx (4c), ln2's, proj's dx (c), attention's (dp
    // over hs, Σp·dp, dq and dk over t, dv over t), qkv's dx (3c), ln1's.
    let block_b = c + 10 + 4 * c + ln + c + (hs + 3 * t + 4) + 3 * c + ln;
    let r_b = 2 + v + ln + cfg.layers * block_b;
    (r_f, r_b)
}

/// Adam in f64 with the engine's constants (`cpu_kernels::optim`) at step `step` ≥ 1.
fn adam64(lr: f64, step: u64, p: &mut [f64], g: &[f64], m: &mut [f64], v: &mut [f64]) {
    let (b1, b2, eps) = (
        f64::from(optim::BETA1),
        f64::from(optim::BETA2),
        f64::from(optim::EPSILON),
    );
    let (c1, c2) = (1.0 - b1.powi(step as i32), 1.0 - b2.powi(step as i32));
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
        *m = b1 * *m + (1.0 - b1) * g;
        *v = b2 * *v + (1.0 - b2) * g * g;
        *p -= lr * (*m / c1) / ((*v / c2).sqrt() + eps);
    }
}

/// The losses before any step and after each of `steps` Adam steps on one batch: in f64
/// (the reference) and in f32 (the twin's arithmetic).
pub fn losses(
    model: &Model,
    p0: &[f32],
    s: &PeerSpec,
    tokens: &[u32],
    targets: &[u32],
    steps: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut p: Vec<f64> = p0.iter().map(|&x| f64::from(x)).collect();
    let (mut m, mut v) = (vec![0.0; p.len()], vec![0.0; p.len()]);
    let mut r64 = Vec::new();
    for k in 0..=steps {
        let (loss, g) = model.loss_and_grad(&p, tokens, targets, s.batch);
        r64.push(loss);
        if k < steps {
            adam64(s.lr, k as u64 + 1, &mut p, &g, &mut m, &mut v);
        }
    }
    let mut p = p0.to_vec();
    let (mut m, mut v) = (vec![0.0f32; p.len()], vec![0.0f32; p.len()]);
    let mut r32 = Vec::new();
    for k in 0..=steps {
        let (loss, g) = model.loss_and_grad(&p, tokens, targets, s.batch);
        r32.push(f64::from(loss));
        if k < steps {
            optim::adam_update(s.lr as f32, k as u64 + 1, &mut p, &g, &mut m, &mut v);
        }
    }
    (r64, r32)
}

/// The bound on each loss of `reference` (module documentation).
pub fn tolerances(cfg: &Config, rows: usize, reference: &[f64]) -> Vec<f64> {
    let u = f64::powi(2.0, -24);
    let (r_f, r_b) = reduction_lengths(cfg, rows);
    let rho_f = u * r_f as f64;
    let rho_g = u * (r_f + r_b + rows) as f64;
    (0..reference.len())
        .map(|k| {
            let moved: f64 = (1..=k)
                .map(|j| (k - j + 1) as f64 * (reference[j - 1] - reference[j]).abs())
                .sum();
            rho_f * reference[k].abs() + 2.0 * rho_g * moved
        })
        .collect()
}

/// The tensors of `layout` as (name, offset, shape), in its order.
pub fn tensors(cfg: &Config, l: &ParamLayout) -> Vec<(String, usize, Vec<usize>)> {
    let (c, v, t) = (cfg.width, cfg.vocab, cfg.context);
    let mut out = vec![
        ("wte".to_string(), l.wte, vec![v, c]),
        ("wpe".to_string(), l.wpe, vec![t, c]),
    ];
    for (i, b) in l.blocks.iter().enumerate() {
        for (name, at, shape) in [
            ("ln1_g", b.ln1_g, vec![c]),
            ("ln1_b", b.ln1_b, vec![c]),
            ("qkv_w", b.qkv_w, vec![c, 3 * c]),
            ("qkv_b", b.qkv_b, vec![3 * c]),
            ("proj_w", b.proj_w, vec![c, c]),
            ("proj_b", b.proj_b, vec![c]),
            ("ln2_g", b.ln2_g, vec![c]),
            ("ln2_b", b.ln2_b, vec![c]),
            ("fc_w", b.fc_w, vec![c, 4 * c]),
            ("fc_b", b.fc_b, vec![4 * c]),
            ("out_w", b.out_w, vec![4 * c, c]),
            ("out_b", b.out_b, vec![c]),
        ] {
            out.push((format!("h{i}.{name}"), at, shape));
        }
    }
    out.push(("lnf_g".to_string(), l.lnf_g, vec![c]));
    out.push(("lnf_b".to_string(), l.lnf_b, vec![c]));
    out.push(("head".to_string(), l.head, vec![c, v]));
    out
}

fn le_bytes(words: impl Iterator<Item = u32>) -> Vec<u8> {
    words.flat_map(u32::to_le_bytes).collect()
}

/// Writes DIR/gpt-peer/ for `spec` (module documentation).
pub fn dump(dir: &str, spec: &PeerSpec) -> Result<(), String> {
    let cfg = spec.cfg;
    let model = Model::new(cfg).map_err(|e| e.to_string())?;
    let p0 = model.init_params(SEED);
    let (tokens, targets) = seeded_batch(spec);
    let rows = tokens.len();
    let counted = targets.iter().filter(|&&g| g != IGNORE).count();
    let (reference, twin) = losses(&model, &p0, spec, &tokens, &targets, STEPS);
    let tol = tolerances(&cfg, counted, &reference);
    for (k, ((&r, &t), &b)) in reference.iter().zip(&twin).zip(&tol).enumerate() {
        if (r - t).abs() > b {
            return Err(format!(
                "the bound does not hold for the f32 twin after {k} steps: {t} vs {r}, bound {b}"
            ));
        }
    }
    let d = format!("{dir}/gpt-peer");
    std::fs::create_dir_all(&d).map_err(|e| format!("{d}: {e}"))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(format!("{d}/{name}"), bytes).map_err(|e| format!("{d}/{name}: {e}"))
    };
    write("params.bin", &le_bytes(p0.iter().map(|x| x.to_bits())))?;
    write("tokens.bin", &le_bytes(tokens.iter().copied()))?;
    write("targets.bin", &le_bytes(targets.iter().copied()))?;
    let (r_f, r_b) = reduction_lengths(&cfg, counted);
    let tensor_json: Vec<String> = tensors(&cfg, &model.layout)
        .iter()
        .map(|(n, at, shape)| {
            format!(
                "{{\"name\":{},\"offset\":{at},\"shape\":{}}}",
                js(n),
                num_list(shape)
            )
        })
        .collect();
    let json = format!(
        "{{\"what\":{},\"config\":{{\"vocab\":{},\"context\":{},\"width\":{},\"heads\":{},\"layers\":{},\"head_size\":{}}},\
         \"batch\":{},\"rows\":{rows},\"counted\":{counted},\"ignore\":{IGNORE},\"seed\":{SEED},\
         \"adam\":{{\"lr\":{},\"beta1\":{},\"beta2\":{},\"epsilon\":{}}},\"ln_eps\":{},\"gelu\":{{\"c\":{},\"a\":{}}},\
         \"params\":{{\"file\":\"params.bin\",\"count\":{},\"dtype\":\"f32\",\"tensors\":[{}]}},\
         \"tokens\":\"tokens.bin\",\"targets\":\"targets.bin\",\
         \"reference\":{{\"steps\":{},\"loss\":{},\"tol\":{},\"twin_f32\":{},\"r_f\":{r_f},\"r_b\":{r_b},\"bound\":{}}}}}\n",
        js("the engine GPT's training step for a peer: gpt::Model in f64 with Adam is the reference"),
        cfg.vocab,
        cfg.context,
        cfg.width,
        cfg.heads,
        cfg.layers,
        cfg.head_size(),
        spec.batch,
        f(spec.lr),
        f(f64::from(optim::BETA1)),
        f(f64::from(optim::BETA2)),
        f(f64::from(optim::EPSILON)),
        f(LN_EPS),
        f(GELU_C),
        f(GELU_A),
        p0.len(),
        tensor_json.join(","),
        num_list(0..=STEPS),
        num_list(reference.iter().map(|&x| f(x))),
        num_list(tol.iter().map(|&x| f(x))),
        num_list(twin.iter().map(|&x| f(x))),
        js("tol_k = u·R_f·L_k + 2·u·(R_f + R_b + counted)·Σ_{j≤k}(k−j+1)·|L_{j−1} − L_j|, u = 2^-24 (crates/bench/src/gpt_peer.rs)"),
    );
    write("gpt.json", json.as_bytes())?;
    println!(
        "gpt peer: {cfg:?}, {} windows ({counted} of {rows} rows counted), {} parameters; \
         f64 losses {:?}, bounds {:?}, f32 twin {:?} → {d}",
        spec.batch,
        p0.len(),
        reference,
        tol,
        twin
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_bad_ones_are_named() {
        let d = parse("default").expect("default");
        assert_eq!((d.cfg, d.batch, d.lr), (Config::default_for(28), 32, 1e-2));
        let s = parse("vocab=7,context=5,width=6,heads=3,layers=1,batch=3,lr=0.1").expect("keys");
        assert_eq!((s.cfg.vocab, s.cfg.context, s.cfg.width), (7, 5, 6));
        assert_eq!((s.cfg.heads, s.cfg.layers, s.batch, s.lr), (3, 1, 3, 0.1));
        assert!(parse("width=6,heads=4").is_err());
        assert!(parse("vocab=1").is_err());
        assert!(parse("depth=2").is_err());
        assert!(parse("lr=-1").is_err());
    }

    #[test]
    fn the_batch_has_short_windows_and_the_layout_covers_every_parameter() {
        let s = parse("vocab=9,context=7,width=6,heads=2,layers=2,batch=11").expect("shape");
        let (tokens, targets) = seeded_batch(&s);
        assert_eq!(tokens.len(), 77);
        assert!(
            targets.contains(&IGNORE),
            "some window is shorter than the context"
        );
        assert!(tokens.iter().all(|&t| t < 9));
        let l = ParamLayout::new(&s.cfg);
        let mut covered: Vec<(usize, usize)> = tensors(&s.cfg, &l)
            .iter()
            .map(|(_, at, shape)| (*at, shape.iter().product()))
            .collect();
        covered.sort_unstable();
        let mut at = 0;
        for (o, n) in covered {
            assert_eq!(o, at, "tensors tile the buffer without gaps or overlaps");
            at += n;
        }
        assert_eq!(at, l.len);
    }

    #[test]
    fn the_twin_is_inside_the_bound_and_a_wrong_model_is_not() {
        let s = parse("vocab=11,context=9,width=12,heads=3,layers=2,batch=5").expect("shape");
        let model = Model::new(s.cfg).expect("model");
        let p0 = model.init_params(SEED);
        let (tokens, targets) = seeded_batch(&s);
        let counted = targets.iter().filter(|&&g| g != IGNORE).count();
        let (r, t) = losses(&model, &p0, &s, &tokens, &targets, STEPS);
        let tol = tolerances(&s.cfg, counted, &r);
        for k in 0..=STEPS {
            assert!(
                (r[k] - t[k]).abs() <= tol[k],
                "step {k}: {} vs {}",
                t[k],
                r[k]
            );
        }
        assert!(r[STEPS] < r[0], "the steps lower the loss: {r:?}");
        // One parameter off by the size of one Adam step moves the losses out of the bound:
        // the bound is not so loose that it passes a different model.
        let mut p1 = p0.clone();
        p1[model.layout.blocks[1].fc_w + 5] += 0.01;
        let (r1, _) = losses(&model, &p1, &s, &tokens, &targets, STEPS);
        assert!(
            (0..=STEPS).any(|k| (r1[k] - r[k]).abs() > tol[k]),
            "{r1:?} vs {r:?} within {tol:?}"
        );
    }
}
