//! Finite-difference check of every layer kind of the twin's backward pass.
//!
//! The twin's forward and backward are f32, like the kernels. Differencing an f32 loss would
//! drown small gradients in rounding (a loss of about 1 carries errors near 1e-7, so a step h
//! gives noise near 1e-7 / h), so the loss is recomputed here by an independent **f64
//! reference forward** over the same layout, and its central differences are compared with the
//! twin's f32 gradients:
//!
//! - step h = 1e-6: the central difference's rounding error is about ε₆₄·|L| / h ≈ 1e-10 and
//!   its truncation error h²·|L'''| / 6 ≈ 1e-12 for these small nets (|L'''| ≲ 10): both far
//!   below the tolerance. The one-sided differences (used to find kinks) differ from each
//!   other by h·|L''|, below 1e-4 of the region's largest gradient where the loss is smooth;
//! - the twin's f32 error: each gradient is a sum of at most N = 243 terms (the first conv's
//!   filter gradient, 3 samples × 9 × 9 positions) of values that themselves went through
//!   ≤ 30 roundings forward, so its error is below about (N + 30)·2⁻²⁴ ≈ 1.6e-5 of the
//!   magnitudes summed. Those magnitudes are bounded by the largest gradient of the region
//!   times the terms' spread; `TOL_SCALE = 1e-4` of the region's largest gradient covers that
//!   with a margin of 6, and `TOL_REL = 1e-4` of the value itself covers the rest;
//! - ReLU and max-pool have kinks, most often a pool window of tied zeros; see [`check`] for
//!   what is compared there. The test requires that almost no entry is left unchecked.

use cnn::net::{Block, Net, Workspace};
use cpu_kernels::data::SplitMix64;

const H: f64 = 1e-6;
const TOL_SCALE: f64 = 1e-4;
const TOL_REL: f64 = 1e-4;

/// The loss in f64, with `tap` = (offset in the activation layout, amount) added to that
/// activation right after the layer that computes it.
fn ref_loss(net: &Net, p: &[f64], x: &[f64], labels: &[u32], tap: Option<(usize, f64)>) -> f64 {
    let batch = labels.len();
    let l = net.act_layout(batch);
    let pl = net.param_layout();
    let mut a = vec![0.0f64; l.len];
    let poke = |a: &mut [f64], start: usize, len: usize| {
        if let Some((at, h)) = tap {
            if (start..start + len).contains(&at) {
                a[at] += h;
            }
        }
    };
    a[..x.len()].copy_from_slice(x);
    poke(&mut a, 0, x.len());
    let mut in_off = 0;
    for ((s, o), ba) in net.shapes.iter().zip(&pl.conv).zip(&l.blocks) {
        let Block {
            c_in,
            c_out,
            kernel,
        } = s.block;
        let (is, cs, ps) = (s.in_side, s.conv_side, s.pool_side);
        let conv_len = batch * c_out * cs * cs;
        for n in 0..batch {
            for oc in 0..c_out {
                for y in 0..cs {
                    for xx in 0..cs {
                        let mut acc = p[o.b + oc];
                        for c in 0..c_in {
                            for r in 0..kernel {
                                for t in 0..kernel {
                                    acc += a[in_off + ((n * c_in + c) * is + y + r) * is + xx + t]
                                        * p[o.w + ((oc * c_in + c) * kernel + r) * kernel + t];
                                }
                            }
                        }
                        a[ba.conv + ((n * c_out + oc) * cs + y) * cs + xx] = acc;
                    }
                }
            }
        }
        poke(&mut a, ba.conv, conv_len);
        for i in 0..conv_len {
            a[ba.relu + i] = a[ba.conv + i].max(0.0);
        }
        poke(&mut a, ba.relu, conv_len);
        for nc in 0..batch * c_out {
            for py in 0..ps {
                for px in 0..ps {
                    let v = |dy, dx| a[ba.relu + (nc * cs + 2 * py + dy) * cs + 2 * px + dx];
                    let m = v(0, 0).max(v(0, 1)).max(v(1, 0)).max(v(1, 1));
                    a[ba.pool + (nc * ps + py) * ps + px] = m;
                }
            }
        }
        poke(&mut a, ba.pool, batch * c_out * ps * ps);
        in_off = ba.pool;
    }
    let (d, k) = (net.dense_inputs(), net.classes);
    for n in 0..batch {
        for j in 0..k {
            let mut acc = p[pl.dense_b + j];
            for i in 0..d {
                acc += a[in_off + n * d + i] * p[pl.dense_w + j * d + i];
            }
            a[l.logits + n * k + j] = acc;
        }
    }
    poke(&mut a, l.logits, batch * k);
    let mut loss = 0.0;
    for (n, &y) in labels.iter().enumerate() {
        let z = &a[l.logits + n * k..][..k];
        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + z.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
        loss += lse - z[y as usize];
    }
    loss / batch as f64
}

struct Case {
    net: Net,
    params: Vec<f32>,
    x: Vec<f32>,
    labels: Vec<u32>,
}

/// A tiny net with odd sides, seeded weights, small non-zero biases and random pixels.
fn case(side: usize, blocks: &[(usize, usize, usize)], classes: usize, batch: usize) -> Case {
    let blocks = blocks
        .iter()
        .map(|&(c_in, c_out, kernel)| Block {
            c_in,
            c_out,
            kernel,
        })
        .collect();
    let net = Net::new(side, blocks, classes).expect("test shape fits");
    let mut params = net.init_params(5);
    let pl = net.param_layout();
    let mut rng = SplitMix64::new(99);
    // Conv biases in [0, 0.2) keep more ReLUs alive, so more paths carry a gradient.
    for (s, o) in net.shapes.iter().zip(&pl.conv) {
        for b in &mut params[o.b..o.b + s.block.c_out] {
            *b = 0.1 * (rng.next_signed_unit() + 1.0);
        }
    }
    for b in &mut params[pl.dense_b..pl.len] {
        *b = 0.1 * rng.next_signed_unit();
    }
    let x = (0..batch * side * side)
        .map(|_| 0.5 * (rng.next_signed_unit() + 1.0))
        .collect();
    let labels = (0..batch as u32).map(|n| n % classes as u32).collect();
    Case {
        net,
        params,
        x,
        labels,
    }
}

/// The twin's gradients, workspace and mean loss for the case.
fn twin(c: &Case) -> (Vec<f32>, Workspace, f32) {
    let mut ws = c.net.workspace(c.labels.len());
    let mut grads = vec![0.0; c.params.len()];
    c.net.forward(&c.params, &c.x, &mut ws);
    let loss = c.net.backward(&c.params, &c.labels, &mut ws, &mut grads);
    (grads, ws, loss / c.labels.len() as f32)
}

/// What [`check`] found in one region.
#[derive(Debug, Default)]
struct Tally {
    checked: usize,
    /// Near a kink, where no difference means anything.
    skipped: usize,
    /// Checked and not zero.
    nonzero: usize,
    /// Entries that disagree, described.
    wrong: Vec<String>,
}

/// Checks `got[i]` against differences of `loss_at(i, ±h)` for i in `range`.
///
/// Where the one-sided differences agree the function is smooth at the point and the twin
/// must match the central difference. Where they do not, the point sits on a kink: a ReLU at
/// exactly 0 or, far more often, a max-pool window whose values tie (several ReLU outputs
/// at 0). There the twin's gradient is one valid choice (the first maximum takes the delta),
/// and it must equal one of the two one-sided derivatives. An entry matching neither has a
/// kink within h but not at the point, where no difference means anything: it is skipped.
fn check(
    name: &str,
    range: std::ops::Range<usize>,
    got: &[f32],
    loss_at: impl Fn(usize, f64) -> f64,
) -> Tally {
    let diffs: Vec<(usize, f64, f64)> = range
        .map(|i| {
            let (up, mid, down) = (loss_at(i, H), loss_at(i, 0.0), loss_at(i, -H));
            (i, (up - mid) / H, (mid - down) / H)
        })
        .collect();
    let scale = diffs
        .iter()
        .map(|d| d.1.abs().max(d.2.abs()))
        .fold(0.0, f64::max);
    let mut t = Tally::default();
    for (i, fwd, bwd) in diffs {
        let g = got[i] as f64;
        let central = 0.5 * (fwd + bwd);
        let tol = |f: f64| TOL_SCALE * scale + TOL_REL * f.abs() + 1e-12;
        if (fwd - bwd).abs() <= TOL_SCALE * scale {
            if (g - central).abs() > tol(central) {
                t.wrong.push(format!(
                    "{name}[{i}]: twin {g:e}, finite difference {central:e} (tolerance {:e})",
                    tol(central)
                ));
            }
        } else {
            // One-sided differences carry h·|L''| / 2 more; |L''| ≤ 100 here.
            let one_sided = |f: f64| (g - f).abs() <= tol(f) + 50.0 * H;
            if !(one_sided(fwd) || one_sided(bwd)) {
                t.skipped += 1;
                continue;
            }
        }
        t.checked += 1;
        t.nonzero += usize::from(g.abs() > 1e-6 * scale);
    }
    t
}

fn check_case(c: &Case) {
    let (grads, ws, loss) = twin(c);
    let p64: Vec<f64> = c.params.iter().map(|&v| v as f64).collect();
    let x64: Vec<f64> = c.x.iter().map(|&v| v as f64).collect();
    let l = &ws.layout;
    let pl = c.net.param_layout();

    // The twin's loss is the reference's (so the differences are of the twin's function).
    let reference = ref_loss(&c.net, &p64, &x64, &c.labels, None);
    assert!(
        (loss as f64 - reference).abs() <= 1e-5 * reference,
        "twin loss {loss}, f64 reference {reference}"
    );

    let by_param = |i: usize, h: f64| {
        let mut p = p64.clone();
        p[i] += h;
        ref_loss(&c.net, &p, &x64, &c.labels, None)
    };
    let by_act = |i: usize, h: f64| ref_loss(&c.net, &p64, &x64, &c.labels, Some((i, h)));

    let mut regions: Vec<(String, std::ops::Range<usize>, bool)> = Vec::new();
    for (b, (s, o)) in c.net.shapes.iter().zip(&pl.conv).enumerate() {
        let n = b + 1;
        regions.push((format!("conv{n} filter gradient"), o.w..o.b, true));
        regions.push((
            format!("conv{n} bias gradient"),
            o.b..o.b + s.block.c_out,
            true,
        ));
    }
    regions.push(("dense weight gradient".into(), pl.dense_w..pl.dense_b, true));
    regions.push(("dense bias gradient".into(), pl.dense_b..pl.len, true));
    regions.push((
        "conv1 input gradient (transposed conv)".into(),
        l.input..l.blocks[0].conv,
        false,
    ));
    for (b, a) in l.blocks.iter().enumerate() {
        let n = b + 1;
        let next = l.blocks.get(b + 1).map_or(l.logits, |nb| nb.conv);
        regions.push((
            format!("block {n} conv output delta (ReLU backward)"),
            a.conv..a.relu,
            false,
        ));
        regions.push((
            format!("block {n} ReLU output delta (max-pool backward)"),
            a.relu..a.pool,
            false,
        ));
        let what = if b + 1 < l.blocks.len() {
            format!(
                "block {n} pool output delta (conv{} input gradient, transposed conv)",
                n + 1
            )
        } else {
            format!("block {n} pool output delta (dense input gradient)")
        };
        regions.push((what, a.pool..next, false));
    }
    regions.push((
        "logit delta (softmax cross-entropy)".into(),
        l.logits..l.probs,
        false,
    ));

    let (mut all, mut all_skipped) = (0, 0);
    for (name, range, is_param) in regions {
        let t = if is_param {
            check(&name, range, &grads, by_param)
        } else {
            check(&name, range, &ws.deltas, by_act)
        };
        eprintln!(
            "{name}: {} checked ({} non-zero), {} skipped",
            t.checked, t.nonzero, t.skipped
        );
        assert!(t.wrong.is_empty(), "{}", t.wrong.join("\n"));
        assert!(
            t.nonzero > 0,
            "{name}: every gradient was zero, nothing was checked"
        );
        all += t.checked;
        all_skipped += t.skipped;
    }
    // Kinks within h of the point are rare: a check that skipped much would prove little.
    assert!(
        all_skipped * 100 <= all,
        "{all_skipped} of {} entries sat at a kink",
        all + all_skipped
    );
}

/// Two blocks on 11×11 (conv 9×9, pool 4×4 dropping the odd row and column; conv 2×2, pool
/// 1×1), 2 and 3 channels, batch 3, 3 classes.
#[test]
fn two_blocks_match_finite_differences() {
    check_case(&case(11, &[(1, 2, 3), (2, 3, 3)], 3, 3));
}

/// One block on 9×9 (conv 7×7, pool 3×3), 3 channels, batch 3, 4 classes.
#[test]
fn one_block_matches_finite_differences() {
    check_case(&case(9, &[(1, 3, 3)], 4, 3));
}

/// A 5×5 kernel (the default's) and a 1×1 one.
#[test]
fn other_kernel_sides_match_finite_differences() {
    check_case(&case(13, &[(1, 2, 5), (2, 2, 1)], 3, 2));
}

/// The check has teeth: block 1's input gradient recomputed from the twin's own conv delta
/// *without* the transposed convolution's 180° flip (W[o,c,r',s'] instead of
/// W[o,c,K−1−r',K−1−s']) disagrees with the finite differences, while the twin's agrees.
#[test]
fn a_transposed_conv_without_the_flip_fails_the_check() {
    let c = case(9, &[(1, 3, 3)], 4, 3);
    let (_, ws, _) = twin(&c);
    let p64: Vec<f64> = c.params.iter().map(|&v| v as f64).collect();
    let x64: Vec<f64> = c.x.iter().map(|&v| v as f64).collect();
    let by_input = |i: usize, h: f64| ref_loss(&c.net, &p64, &x64, &c.labels, Some((i, h)));
    let l = &ws.layout;
    let input = l.input..l.blocks[0].conv;
    assert!(check("twin", input.clone(), &ws.deltas, by_input)
        .wrong
        .is_empty());

    let s = c.net.shapes[0];
    let (is, cs, k) = (s.in_side, s.conv_side, s.block.kernel);
    let w = c.net.param_layout().conv[0].w;
    let mut broken = ws.deltas.clone();
    for n in 0..c.labels.len() {
        for y in 0..is {
            for x in 0..is {
                let mut acc = 0.0f32;
                for o in 0..s.block.c_out {
                    for r in 0..k {
                        for t in 0..k {
                            let (Some(zy), Some(zx)) =
                                ((y + r).checked_sub(k - 1), (x + t).checked_sub(k - 1))
                            else {
                                continue;
                            };
                            if zy < cs && zx < cs {
                                let dz = ws.deltas[l.blocks[0].conv
                                    + ((n * s.block.c_out + o) * cs + zy) * cs
                                    + zx];
                                acc += dz * c.params[w + (o * k + r) * k + t];
                            }
                        }
                    }
                }
                broken[l.input + (n * is + y) * is + x] = acc;
            }
        }
    }
    let t = check("unflipped", input, &broken, by_input);
    assert!(
        t.wrong.len() > t.checked / 4,
        "only {} of {} entries disagree",
        t.wrong.len(),
        t.checked
    );
}
