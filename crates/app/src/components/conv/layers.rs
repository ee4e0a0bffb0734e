//! The conv page's layer view: K1 filters over the picture, ReLU, K2 filters over those maps,
//! each layer on the GPU (checked against the CPU reference) or on the CPU without WebGPU; the
//! maps as a gallery; and the receptive field of a picked pixel lit in every layer with its
//! multiply-adds written out. Logic: `crate::conv_layers`.

use std::rc::Rc;

use cpu_kernels::conv::{self as cref, ConvShape};
use gpu_runtime::conv::{run_conv_with, verify_conv, ConvError, ConvStage};
use gpu_runtime::{GpuError, RunControl, RunOptions};
use yew::prelude::*;

use super::super::matmul_run::use_cancel_on_unmount;
use super::super::Ctx;
use super::io::{cell_at, draw_lit, zoom, Overlay};
use crate::conv_layers::{
    channel, filters1, filters2, layer_shapes, lit, map_rgba, relu, shown_terms, sum, terms, Init,
    LayerSettings, Pick, MAX_K, MAX_SEED,
};
use crate::conv_page::{parse_in, shape_error_args, RgbImage, Settings};
use crate::embed::Field;
use crate::session;

const SEED: u64 = 11;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub input: Rc<RgbImage>,
    pub settings: Settings,
    pub layer: LayerSettings,
    pub on_layer: Callback<LayerSettings>,
    /// Every typed value of the page's form is valid.
    pub valid: bool,
}

/// One layer's result.
#[derive(PartialEq)]
struct LayerOut {
    shape: ConvShape,
    /// Its input (the picture, or layer 1's maps after ReLU), filters and raw output.
    x: Rc<Vec<f32>>,
    f: Vec<f32>,
    y: Vec<f32>,
    ms: f64,
    verified: Option<(bool, usize)>,
}

#[derive(PartialEq)]
struct Done {
    layers: [LayerOut; 2],
    stage: ConvStage,
}

#[derive(Clone, PartialEq)]
enum Outcome {
    Idle,
    Running,
    Done(Rc<Done>),
    Failed(String),
}

#[function_component]
pub fn Layers(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let outcome = use_state(|| Outcome::Idle);
    let runs = use_state(|| 0u32);
    let pick = use_state(|| None::<(Pick, u32)>);
    let seed_text = use_state(|| props.layer.seed.to_string());
    let cancel = use_cancel_on_unmount();
    let input_canvas = use_node_ref();
    let maps: Vec<NodeRef> = (0..2 * MAX_K).map(|_| NodeRef::default()).collect();
    let maps = use_memo((), move |_| maps);

    // Anything that changes the result makes the shown one stale.
    {
        let (outcome, pick) = (outcome.clone(), pick.clone());
        use_effect_with(
            (props.input.clone(), props.settings.clone(), props.layer),
            move |_| {
                outcome.set(Outcome::Idle);
                pick.set(None);
            },
        );
    }
    let shapes = layer_shapes(
        &props.settings,
        &props.layer,
        props.input.width,
        props.input.height,
    );
    // Draw the gallery and the lit cells.
    {
        let (maps, input_canvas, input) = (maps.clone(), input_canvas.clone(), props.input.clone());
        use_effect_with(
            ((*outcome).clone(), *pick, input),
            move |(o, pick, input)| {
                let Outcome::Done(d) = o else {
                    let z = zoom(input.width.max(input.height));
                    draw_lit(
                        &input_canvas,
                        input.width,
                        input.height,
                        &input.to_rgba(),
                        z,
                        &Overlay::default(),
                    );
                    return;
                };
                let shapes = [d.layers[0].shape, d.layers[1].shape];
                let lights = pick.map(|(p, k)| (lit(&shapes, p), p, k));
                let z = zoom(input.width.max(input.height));
                let over_input = lights
                    .as_ref()
                    .map(|(l, _, _)| Overlay {
                        cells: l.input.iter().copied().collect(),
                        picked: None,
                        bbox: l.field,
                    })
                    .unwrap_or_default();
                draw_lit(
                    &input_canvas,
                    input.width,
                    input.height,
                    &input.to_rgba(),
                    z,
                    &over_input,
                );
                for (li, layer) in d.layers.iter().enumerate() {
                    let (p_len, q_len) = layer.shape.out_hw();
                    let k_len = layer.shape.k as usize;
                    let z = zoom(p_len.max(q_len));
                    let shown = if li == 0 {
                        relu(&layer.y)
                    } else {
                        layer.y.clone()
                    };
                    for k in 0..k_len {
                        let overlay = match &lights {
                            Some((l, p, _)) => Overlay {
                                cells: if li == 0 {
                                    l.layer1.iter().copied().collect()
                                } else {
                                    vec![]
                                },
                                picked: (p.layer as usize == li + 1).then_some((p.p, p.q)),
                                bbox: None,
                            },
                            None => Overlay::default(),
                        };
                        let rgba = map_rgba(&channel(&shown, k_len, k), li == 1);
                        draw_lit(
                            &maps[li * MAX_K as usize + k],
                            q_len,
                            p_len,
                            &rgba,
                            z,
                            &overlay,
                        );
                    }
                }
            },
        );
    }

    let Some(ctx) = ctx else {
        return html! {};
    };
    let gpu = match &ctx.webgpu {
        crate::probe::WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let checking = matches!(ctx.webgpu, crate::probe::WebGpuStatus::Checking);
    let running = *outcome == Outcome::Running;
    let seed_ok = parse_in(&seed_text, 0, MAX_SEED).is_some();
    let can_run = props.valid && shapes.is_ok() && seed_ok && !checking && !running;

    let run = {
        let (outcome, runs, cancel, pick) =
            (outcome.clone(), runs.clone(), cancel.clone(), pick.clone());
        let (settings, layer, input) = (props.settings.clone(), props.layer, props.input.clone());
        let lang = ctx.lang;
        Callback::from(move |_: MouseEvent| {
            let Ok(shapes) = layer_shapes(&settings, &layer, input.width, input.height) else {
                return;
            };
            if !can_run {
                return;
            }
            outcome.set(Outcome::Running);
            let token = gpu_runtime::CancelToken::new();
            *cancel.borrow_mut() = token.clone();
            let (outcome, runs, pick, settings, input) = (
                outcome.clone(),
                runs.clone(),
                pick.clone(),
                settings.clone(),
                input.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let result = run_layers(&settings, &layer, shapes, &input, gpu, token).await;
                crate::embed::report(match &result {
                    Ok(d) => Ok(report(d)),
                    Err(e) => Err(super::error_text(lang, e)),
                });
                outcome.set(match result {
                    Ok(d) => {
                        // Start with the middle pixel of layer 2 picked.
                        let (p, q) = d.layers[1].shape.out_hw();
                        pick.set(Some((
                            Pick {
                                layer: 2,
                                p: p / 2,
                                q: q / 2,
                            },
                            0,
                        )));
                        Outcome::Done(Rc::new(d))
                    }
                    Err(e) => Outcome::Failed(super::error_text(lang, &e)),
                });
                runs.set(*runs + 1);
            });
        })
    };

    let select = |id: &'static str,
                  label: &str,
                  options: Vec<(String, String, bool)>,
                  on: Callback<String>| {
        let onchange = Callback::from(move |e: Event| {
            let s: web_sys::HtmlSelectElement = e.target_unchecked_into();
            on.emit(s.value());
        });
        html! {
            <div class="field">
                <label for={id}>{ label.to_string() }</label>
                <select {id} {onchange}>
                    { for options.into_iter().map(|(value, text, selected)| html! { <option {value} {selected}>{ text }</option> }) }
                </select>
            </div>
        }
    };
    let counts = |v: u32| {
        (1..=MAX_K)
            .map(|k| (k.to_string(), k.to_string(), k == v))
            .collect::<Vec<_>>()
    };
    let layer = props.layer;
    let on_k = |which: u8| {
        let on = props.on_layer.clone();
        Callback::from(move |v: String| {
            if let Some(k) = parse_in(&v, 1, MAX_K) {
                on.emit(if which == 1 {
                    LayerSettings { k1: k, ..layer }
                } else {
                    LayerSettings { k2: k, ..layer }
                });
            }
        })
    };
    let on_init = {
        let on = props.on_layer.clone();
        Callback::from(move |v: String| {
            if let Some(init) = Init::ALL.into_iter().find(|i| i.id() == v) {
                on.emit(LayerSettings { init, ..layer });
            }
        })
    };
    let on_seed = {
        let (on, seed_text) = (props.on_layer.clone(), seed_text.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let v = input.value();
            if let Some(seed) = parse_in(&v, 0, MAX_SEED) {
                on.emit(LayerSettings { seed, ..layer });
            }
            seed_text.set(v);
        })
    };

    let shape_lines = match &shapes {
        Ok(shapes) => html! {
            <ul class="conv-layer-shapes">
                { for shapes.iter().enumerate().map(|(i, s)| {
                    let (p, q) = s.out_hw();
                    let args = [
                        ("n", (i + 1).to_string()), ("h", s.h.to_string()), ("w", s.w.to_string()),
                        ("c", s.c.to_string()), ("k", s.k.to_string()), ("r", s.r.to_string()),
                        ("p", p.to_string()), ("q", q.to_string()),
                        ("weights", crate::format::count(s.f_len() as u64)),
                        ("macs", crate::format::count(s.y_len() as u64 * s.reduction_len() as u64)),
                    ];
                    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    html! { <li>{ ctx.tf("conv.layers.shape", &args) }</li> }
                }) }
            </ul>
        },
        Err(e) => {
            let (key, args) = shape_error_args(e);
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            html! { <p class="message error" role="alert" id="conv-layers-error">{ ctx.tf(key, &args) }</p> }
        }
    };

    let done = match &*outcome {
        Outcome::Done(d) => Some(d.clone()),
        _ => None,
    };
    let gallery = done.as_ref().map(|d| {
        html! {
            <div class="conv-gallery">
                { for d.layers.iter().enumerate().map(|(li, l)| {
                    let (p_len, q_len) = l.shape.out_hw();
                    let shapes = [d.layers[0].shape, d.layers[1].shape];
                    html! {
                        <div class={classes!("conv-maps", format!("layer-{}", li + 1))}>
                            <h3>{ ctx.tf(if li == 0 { "conv.layers.maps1" } else { "conv.layers.maps2" }, &[("k", &l.shape.k.to_string())]) }</h3>
                            <p class="hint">{ layer_status(&ctx, li + 1, l) }</p>
                            <div class="conv-map-row">
                                { for (0..l.shape.k).map(|k| {
                                    let node = maps[li * MAX_K as usize + k as usize].clone();
                                    let layer_no = li as u8 + 1;
                                    let set = {
                                        let pick = pick.clone();
                                        Callback::from(move |e: PointerEvent| {
                                            if let Some((p, q)) = cell_at(&e, p_len, q_len) {
                                                let next = Some((Pick { layer: layer_no, p, q }, k));
                                                if *pick != next {
                                                    pick.set(next);
                                                }
                                            }
                                        })
                                    };
                                    let onkeydown = {
                                        let pick = pick.clone();
                                        Callback::from(move |e: KeyboardEvent| {
                                            let (dp, dq) = match e.key().as_str() {
                                                "ArrowUp" => (-1, 0),
                                                "ArrowDown" => (1, 0),
                                                "ArrowLeft" => (0, -1),
                                                "ArrowRight" => (0, 1),
                                                _ => return,
                                            };
                                            e.prevent_default();
                                            let start = match *pick {
                                                Some((p, _)) if p.layer == layer_no => p,
                                                _ => Pick { layer: layer_no, p: p_len / 2, q: q_len / 2 },
                                            };
                                            pick.set(Some((start.moved(dp, dq, &shapes), k)));
                                        })
                                    };
                                    let onfocus = {
                                        let pick = pick.clone();
                                        Callback::from(move |_: FocusEvent| {
                                            let keep = matches!(*pick, Some((p, kk)) if p.layer == layer_no && kk == k);
                                            if !keep {
                                                let p0 = match *pick { Some((p, _)) if p.layer == layer_no => p, _ => Pick { layer: layer_no, p: p_len / 2, q: q_len / 2 } };
                                                pick.set(Some((p0, k)));
                                            }
                                        })
                                    };
                                    let label = ctx.tf("conv.layers.map_label", &[("n", &(li + 1).to_string()), ("k", &(k + 1).to_string())]);
                                    let picked = matches!(*pick, Some((p, kk)) if p.layer == layer_no && kk == k);
                                    html! {
                                        <figure class={classes!("conv-map", picked.then_some("picked"))}>
                                            <canvas ref={node} id={format!("conv-map-{}-{k}", li + 1)} tabindex="0" role="img"
                                                aria-label={label} onpointermove={set.clone()} onpointerdown={set}
                                                {onkeydown} {onfocus}></canvas>
                                            <figcaption>{ (k + 1).to_string() }</figcaption>
                                        </figure>
                                    }
                                }) }
                            </div>
                        </div>
                    }
                }) }
            </div>
        }
    });

    let explain = match (&done, *pick) {
        (Some(d), Some((p, k))) => field_and_sum(&ctx, d, p, k),
        _ => html! {},
    };

    html! {
        <section class="panel conv-layers" id="conv-layers">
            <h2>{ ctx.t("conv.layers.heading") }</h2>
            <p>{ ctx.t("conv.layers.intro") }</p>
            <div class="conv-row">
                { select("conv-k1", ctx.t("conv.layers.k1"), counts(layer.k1), on_k(1)) }
                { select("conv-k2", ctx.t("conv.layers.k2"), counts(layer.k2), on_k(2)) }
                { select("conv-init", ctx.t("conv.layers.init"), Init::ALL.iter().map(|i|
                    (i.id().to_string(), ctx.t(&format!("conv.layers.init.{}", i.id())).to_string(), layer.init == *i)).collect(), on_init) }
                <div class={classes!("field", (!seed_ok).then_some("invalid"))}>
                    <label for="conv-seed">{ ctx.t("conv.layers.seed") }</label>
                    <input id="conv-seed" type="text" inputmode="numeric" value={(*seed_text).clone()} oninput={on_seed}
                        aria-invalid={(!seed_ok).to_string()} />
                    if !seed_ok {
                        <p class="field-error" role="alert" id="conv-seed-error">{ ctx.tf("conv.layers.seed_error", &[("hi", &MAX_SEED.to_string())]) }</p>
                    }
                </div>
            </div>
            { shape_lines }
            <div class="buttons">
                <button type="button" class="button primary" id="conv-layers-run" disabled={!can_run} onclick={run}>{ ctx.t("conv.layers.run") }</button>
            </div>
            <p class="hint">{ ctx.t("conv.layers.pick_hint") }</p>
            <div class="conv-layers-body">
                <figure class="conv-map conv-field-input">
                    <canvas ref={input_canvas} id="conv-field-input"></canvas>
                    <figcaption>{ ctx.t("conv.layers.input") }</figcaption>
                </figure>
                { gallery.unwrap_or_default() }
            </div>
            { explain }
            <div class="conv-status" aria-live="polite" id="conv-layers-result" data-runs={runs.to_string()}
                data-verified={match &*outcome {
                    Outcome::Done(d) => match (d.layers[0].verified, d.layers[1].verified) {
                        (Some((a, _)), Some((b, _))) => (a && b).to_string(),
                        _ => "cpu".into(),
                    },
                    Outcome::Failed(_) => "error".into(),
                    _ => String::new(),
                }}>
                { match &*outcome {
                    Outcome::Idle => html! { { ctx.t("conv.layers.idle") } },
                    Outcome::Running => html! { { ctx.t("conv.running") } },
                    Outcome::Failed(m) => html! { <span class="message error" role="alert">{ m.clone() }</span> },
                    Outcome::Done(_) => html! {},
                } }
            </div>
        </section>
    }
}

fn layer_status(ctx: &Ctx, n: usize, l: &LayerOut) -> Html {
    let args = [("n", n.to_string()), ("ms", format!("{:.2}", l.ms))];
    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    html! {
        <>
            { ctx.tf(if l.verified.is_some() { "conv.layers.done_gpu" } else { "conv.layers.done_cpu" }, &args) }
            { " " }
            { match l.verified {
                Some((true, c)) => html! { <span class="badge ok" id={format!("conv-layer{n}-badge")}>{ ctx.tf("conv.verified", &[("n", &c.to_string())]) }</span> },
                Some((false, _)) => html! { <span class="badge bad" id={format!("conv-layer{n}-badge")}>{ ctx.t("conv.mismatch") }</span> },
                None => html! {},
            } }
        </>
    }
}

/// A number as the sum shows it: 4 decimals, negative ones in parentheses.
fn num(v: f64) -> String {
    let s = format!("{v:.4}");
    if v < 0.0 {
        format!("({s})")
    } else {
        s
    }
}

/// The receptive field's size and the picked pixel's multiply-adds.
fn field_and_sum(ctx: &Ctx, d: &Done, pick: Pick, k: u32) -> Html {
    let shapes = [d.layers[0].shape, d.layers[1].shape];
    let l = lit(&shapes, pick);
    let layer = &d.layers[pick.layer.clamp(1, 2) as usize - 1];
    let (_, q_len) = layer.shape.out_hw();
    let k = k.min(layer.shape.k - 1);
    let idx = ((pick.p * q_len + pick.q) * layer.shape.k + k) as usize;
    let value = layer.y.get(idx).copied().unwrap_or(0.0);
    let (all, padded) = terms(&layer.shape, &layer.x, &layer.f, pick.p, pick.q, k);
    let (shown, rest) = shown_terms(&all);
    let field = [
        ("n", pick.layer.to_string()),
        ("p", pick.p.to_string()),
        ("q", pick.q.to_string()),
        ("rows", l.extent.0.to_string()),
        ("cols", l.extent.1.to_string()),
        ("read", l.input.len().to_string()),
    ];
    let field: Vec<(&str, &str)> = field.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let head = [
        ("n", pick.layer.to_string()),
        ("k", (k + 1).to_string()),
        ("p", pick.p.to_string()),
        ("q", pick.q.to_string()),
    ];
    let head: Vec<(&str, &str)> = head.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let count = [
        ("macs", all.len().to_string()),
        ("padded", padded.to_string()),
        ("c", layer.shape.c.to_string()),
    ];
    let count: Vec<(&str, &str)> = count.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (p0, p1) = l.field.map(|(r, _)| r).unwrap_or_default();
    let (q0, q1) = l.field.map(|(_, c)| c).unwrap_or_default();
    html! {
        <div class="conv-explain" id="conv-explain">
            <p id="conv-field" data-rows={l.extent.0.to_string()} data-cols={l.extent.1.to_string()}
                data-read={l.input.len().to_string()} data-box={format!("{p0},{p1},{q0},{q1}")}
                data-layer1={l.layer1.len().to_string()}>
                { ctx.tf("conv.layers.field", &field) }
            </p>
            <h3>{ ctx.tf("conv.layers.sum_heading", &head) }</h3>
            <p class="conv-sum" id="conv-sum" data-macs={all.len().to_string()}>
                { for shown.iter().enumerate().map(|(i, t)| html! {
                    <>
                        if i > 0 { { " + " } }
                        <span class="term" data-w={t.w.to_string()} data-x={t.x.to_string()}>{ format!("{}×{}", num(t.w as f64), num(t.x as f64)) }</span>
                    </>
                }) }
                if let Some((n, partial)) = rest {
                    { " " }
                    <span class="rest" data-count={n.to_string()} data-sum={partial.to_string()}>
                        { ctx.tf("conv.layers.sum_rest", &[("n", &n.to_string()), ("sum", &num(partial))]) }
                    </span>
                }
                if all.is_empty() { { "0" } }
                { " = " }
                <strong id="conv-sum-result" data-value={value.to_string()} data-check={sum(&all).to_string()}>{ num(value as f64) }</strong>
                if pick.layer == 1 {
                    { " " }{ ctx.tf("conv.layers.relu", &[("v", &num(value.max(0.0) as f64))]) }
                }
            </p>
            <p class="hint">{ ctx.tf("conv.layers.sum_count", &count) }</p>
        </div>
    }
}

async fn run_layers(
    settings: &Settings,
    layer: &LayerSettings,
    shapes: [ConvShape; 2],
    input: &RgbImage,
    gpu: Option<bool>,
    cancel: gpu_runtime::CancelToken,
) -> Result<Done, ConvError> {
    let f1 = filters1(settings, layer);
    let f2 = filters2(settings, layer);
    let x1 = Rc::new(input.data.clone());
    let one = run_layer(settings.stage, &shapes[0], x1, f1, gpu, &cancel).await?;
    let x2 = Rc::new(relu(&one.y));
    let two = run_layer(settings.stage, &shapes[1], x2, f2, gpu, &cancel).await?;
    Ok(Done {
        layers: [one, two],
        stage: settings.stage,
    })
}

/// One layer on the GPU (checked against the CPU reference) or, without WebGPU, by the CPU
/// reference itself.
async fn run_layer(
    stage: ConvStage,
    shape: &ConvShape,
    x: Rc<Vec<f32>>,
    f: Vec<f32>,
    gpu: Option<bool>,
    cancel: &gpu_runtime::CancelToken,
) -> Result<LayerOut, ConvError> {
    shape.validate().map_err(ConvError::Shape)?;
    let (y, ms, verified) = match gpu {
        Some(software) => {
            let (g, _) = session::gpu(software).await.map_err(ConvError::Gpu)?;
            let ctl = RunControl {
                cancel: cancel.clone(),
                ..Default::default()
            };
            let out =
                run_conv_with(&g, stage, &[], shape, &x, &f, &RunOptions::default(), &ctl).await;
            let out = match out {
                Err(ConvError::Gpu(GpuError::DeviceLost(e))) => {
                    session::forget();
                    return Err(ConvError::Gpu(GpuError::DeviceLost(e)));
                }
                other => other?,
            };
            let (verdict, checked) = verify_conv(shape, &x, &f, &out.output, SEED);
            (
                out.output,
                out.timing.kernel_ms(),
                Some((verdict.ok, checked)),
            )
        }
        None => {
            let t0 = gpu_runtime::now_ms();
            let y = cref::reference(shape, &x, &f).value;
            let ms = gpu_runtime::now_ms() - t0;
            (y.into_iter().map(|v| v as f32).collect(), ms, None)
        }
    };
    Ok(LayerOut {
        shape: *shape,
        x,
        f,
        y,
        ms,
        verified,
    })
}

fn report(d: &Done) -> Vec<(&'static str, Field)> {
    let [a, b] = &d.layers;
    let verified = match (a.verified, b.verified) {
        (Some((x, _)), Some((y, _))) => Field::Bool(x && y),
        _ => Field::Str("cpu".into()),
    };
    vec![
        ("stage", Field::Str(d.stage.id().into())),
        ("k1", Field::Num(a.shape.k as f64)),
        ("k2", Field::Num(b.shape.k as f64)),
        ("kernelMs", Field::Num(a.ms + b.ms)),
        ("verified", verified),
        (
            "checked",
            Field::Num((a.verified.map_or(0, |v| v.1) + b.verified.map_or(0, |v| v.1)) as f64),
        ),
    ]
}
