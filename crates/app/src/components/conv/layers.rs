//! The conv page's layer view: K1 filters over the picture, ReLU, K2 filters over those maps,
//! each layer on the GPU (checked against the CPU reference) or on the CPU without WebGPU; the
//! maps as a gallery; and the receptive field of a picked pixel lit in every layer with its
//! multiply-adds written out. Logic and the view's state (`LayerView`, one reducer):
//! `page_models::conv_layers`.

use std::rc::Rc;

use cpu_kernels::conv::{self as cref, ConvShape};
use gpu_runtime::conv::{run_conv_with, verify_conv, ConvError, ConvStage};
use gpu_runtime::{GpuError, RunControl, RunOptions};
use yew::prelude::*;

use super::super::run_lifecycle::use_run;
use super::super::Ctx;
use super::io::{cell_at, draw_lit, zoom, Overlay};
use crate::session;
use page_models::conv_layers::{
    channel, filters1, filters2, layer_shapes, lit, map_rgba, relu, shown_terms, sum, sum_number,
    terms, Init, LayerAction, LayerOut, LayerSettings, LayerView, LayersDone, LayersOutcome, Pick,
    MAX_K, MAX_SEED,
};
use page_models::conv_page::{parse_in, shape_error_args, RgbImage, Settings};
use page_models::embed::Field;

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

/// The view's state in a `use_reducer`.
struct ViewState(LayerView);

impl Reducible for ViewState {
    type Action = LayerAction;
    fn reduce(self: Rc<Self>, action: LayerAction) -> Rc<Self> {
        let picking = matches!(
            action,
            LayerAction::Point(..) | LayerAction::Arrow { .. } | LayerAction::Focus { .. }
        );
        let next = self.0.apply(action);
        // A pick that did not move (a pointer inside one pixel) is not drawn again; the pick
        // alone is compared, not the maps.
        if picking && next.pick == self.0.pick {
            self
        } else {
            Rc::new(ViewState(next))
        }
    }
}

#[function_component]
pub fn Layers(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let view = use_reducer(|| ViewState(LayerView::new(props.layer.seed)));
    let runs = use_run::<()>(|| ());
    let input_canvas = use_node_ref();
    let maps: Vec<NodeRef> = (0..2 * MAX_K).map(|_| NodeRef::default()).collect();
    let maps = use_memo((), move |_| maps);

    // Anything that changes the result makes the shown one stale.
    {
        let view = view.dispatcher();
        use_effect_with(
            (props.input.clone(), props.settings.clone(), props.layer),
            move |_| view.dispatch(LayerAction::Stale),
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
            (view.0.outcome.clone(), view.0.pick, input),
            move |(o, pick, input)| draw_all(o, *pick, input, &input_canvas, &maps),
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
    let can_run = view.0.can_run(props.valid, shapes.is_ok(), checking);

    let run = {
        let (view, runs) = (view.dispatcher(), runs.clone());
        let (settings, layer, input) = (props.settings.clone(), props.layer, props.input.clone());
        let lang = ctx.lang;
        Callback::from(move |_: MouseEvent| {
            let Ok(shapes) = layer_shapes(&settings, &layer, input.width, input.height) else {
                return;
            };
            if !can_run {
                return;
            }
            view.dispatch(LayerAction::Started);
            let run = runs.start(());
            let token = run.token().clone();
            let (view, settings, input) = (view.clone(), settings.clone(), input.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let result = run_layers(&settings, &layer, shapes, &input, gpu, token).await;
                if !run.finish() {
                    return;
                }
                page_models::embed::report(match &result {
                    Ok(d) => Ok(report(d)),
                    Err(e) => Err(super::error_text(lang, e)),
                });
                view.dispatch(LayerAction::Finished(
                    result.map(Rc::new).map_err(|e| super::error_text(lang, &e)),
                ));
            });
        })
    };
    let on_seed = {
        let view = view.dispatcher();
        Callback::from(move |text| view.dispatch(LayerAction::SeedTyped(text)))
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
                        ("weights", numbers::count(s.f_len() as u64)),
                        ("macs", numbers::count(s.y_len() as u64 * s.reduction_len() as u64)),
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

    let done = match &view.0.outcome {
        LayersOutcome::Done(d) => Some(d.clone()),
        _ => None,
    };
    let explain = match (&done, view.0.pick) {
        (Some(d), Some((p, k))) => field_and_sum(&ctx, d, p, k),
        _ => html! {},
    };

    html! {
        <section class="panel conv-layers" id="conv-layers">
            <h2>{ ctx.t("conv.layers.heading") }</h2>
            <p>{ ctx.t("conv.layers.intro") }</p>
            <LayerControls layer={props.layer} on_layer={props.on_layer.clone()}
                seed_text={view.0.seed_text.clone()} seed_ok={view.0.seed_ok()} {on_seed} />
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
                if let Some(d) = done {
                    <Gallery done={d} pick={view.0.pick} maps={maps.clone()} on={view.dispatcher()} />
                }
            </div>
            { explain }
            <div class="conv-status" aria-live="polite" id="conv-layers-result" data-runs={view.0.runs.to_string()}
                data-verified={view.0.verified_attr()}>
                { match &view.0.outcome {
                    LayersOutcome::Idle => html! { { ctx.t("conv.layers.idle") } },
                    LayersOutcome::Running => html! { { ctx.t("conv.running") } },
                    LayersOutcome::Failed(m) => html! { <span class="message error" role="alert">{ m.clone() }</span> },
                    LayersOutcome::Done(_) => html! {},
                } }
            </div>
        </section>
    }
}

/// Draws the picture with the pick's receptive field lit and, after a run, every map with
/// the cells the pick reads.
fn draw_all(
    o: &LayersOutcome,
    pick: Option<(Pick, u32)>,
    input: &RgbImage,
    input_canvas: &NodeRef,
    maps: &[NodeRef],
) {
    let LayersOutcome::Done(d) = o else {
        let z = zoom(input.width.max(input.height));
        draw_lit(
            input_canvas,
            input.width,
            input.height,
            &input.to_rgba(),
            z,
            &Overlay::default(),
        );
        return;
    };
    let shapes = d.shapes();
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
        input_canvas,
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
            if let Some(node) = maps.get(li * MAX_K as usize + k) {
                draw_lit(node, q_len, p_len, &rgba, z, &overlay);
            }
        }
    }
}

#[derive(Properties, PartialEq)]
struct ControlProps {
    layer: LayerSettings,
    on_layer: Callback<LayerSettings>,
    seed_text: String,
    seed_ok: bool,
    on_seed: Callback<String>,
}

/// The filter counts, how layer 1's filters are made, and the seed.
#[function_component]
fn LayerControls(props: &ControlProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
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
        let (on, on_text) = (props.on_layer.clone(), props.on_seed.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let v = input.value();
            if let Some(seed) = parse_in(&v, 0, MAX_SEED) {
                on.emit(LayerSettings { seed, ..layer });
            }
            on_text.emit(v);
        })
    };
    let seed_ok = props.seed_ok;
    html! {
        <div class="conv-row">
            { select("conv-k1", ctx.t("conv.layers.k1"), counts(layer.k1), on_k(1)) }
            { select("conv-k2", ctx.t("conv.layers.k2"), counts(layer.k2), on_k(2)) }
            { select("conv-init", ctx.t("conv.layers.init"), Init::ALL.iter().map(|i|
                (i.id().to_string(), ctx.t(&format!("conv.layers.init.{}", i.id())).to_string(), layer.init == *i)).collect(), on_init) }
            <div class={classes!("field", (!seed_ok).then_some("invalid"))}>
                <label for="conv-seed">{ ctx.t("conv.layers.seed") }</label>
                <input id="conv-seed" type="text" inputmode="numeric" value={props.seed_text.clone()} oninput={on_seed}
                    aria-invalid={(!seed_ok).to_string()} />
                if !seed_ok {
                    <p class="field-error" role="alert" id="conv-seed-error">{ ctx.tf("conv.layers.seed_error", &[("hi", &MAX_SEED.to_string())]) }</p>
                }
            </div>
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct GalleryProps {
    done: Rc<LayersDone>,
    pick: Option<(Pick, u32)>,
    /// The maps' canvases, `MAX_K` per layer (drawn by the view).
    maps: Rc<Vec<NodeRef>>,
    on: UseReducerDispatcher<ViewState>,
}

/// Every layer's maps, each a canvas a pixel can be picked on (pointer, arrows, focus).
#[function_component]
fn Gallery(props: &GalleryProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let d = &props.done;
    html! {
        <div class="conv-gallery">
            { for d.layers.iter().enumerate().map(|(li, l)| {
                let (p_len, q_len) = l.shape.out_hw();
                html! {
                    <div class={classes!("conv-maps", format!("layer-{}", li + 1))}>
                        <h3>{ ctx.tf(if li == 0 { "conv.layers.maps1" } else { "conv.layers.maps2" }, &[("k", &l.shape.k.to_string())]) }</h3>
                        <p class="hint">{ layer_status(&ctx, li + 1, l) }</p>
                        <div class="conv-map-row">
                            { for (0..l.shape.k).map(|k| {
                                let node = props.maps.get(li * MAX_K as usize + k as usize).cloned().unwrap_or_default();
                                let layer = li as u8 + 1;
                                let set = {
                                    let on = props.on.clone();
                                    Callback::from(move |e: PointerEvent| {
                                        if let Some((p, q)) = cell_at(&e, p_len, q_len) {
                                            on.dispatch(LayerAction::Point(Pick { layer, p, q }, k));
                                        }
                                    })
                                };
                                let onkeydown = {
                                    let on = props.on.clone();
                                    Callback::from(move |e: KeyboardEvent| {
                                        let (dp, dq) = match e.key().as_str() {
                                            "ArrowUp" => (-1, 0),
                                            "ArrowDown" => (1, 0),
                                            "ArrowLeft" => (0, -1),
                                            "ArrowRight" => (0, 1),
                                            _ => return,
                                        };
                                        e.prevent_default();
                                        on.dispatch(LayerAction::Arrow { layer, k, dp, dq });
                                    })
                                };
                                let onfocus = {
                                    let on = props.on.clone();
                                    Callback::from(move |_: FocusEvent| on.dispatch(LayerAction::Focus { layer, k }))
                                };
                                let label = ctx.tf("conv.layers.map_label", &[("n", &(li + 1).to_string()), ("k", &(k + 1).to_string())]);
                                let picked = matches!(props.pick, Some((p, kk)) if p.layer == layer && kk == k);
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
}

fn layer_status(ctx: &Ctx, n: usize, l: &LayerOut) -> Html {
    let args = [("n", n.to_string()), ("ms", numbers::ms(l.ms))];
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

/// The receptive field's size and the picked pixel's multiply-adds.
fn field_and_sum(ctx: &Ctx, d: &LayersDone, pick: Pick, k: u32) -> Html {
    let l = lit(&d.shapes(), pick);
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
                        <span class="term" data-w={t.w.to_string()} data-x={t.x.to_string()}>{ format!("{}×{}", sum_number(t.w as f64), sum_number(t.x as f64)) }</span>
                    </>
                }) }
                if let Some((n, partial)) = rest {
                    { " " }
                    <span class="rest" data-count={n.to_string()} data-sum={partial.to_string()}>
                        { ctx.tf("conv.layers.sum_rest", &[("n", &n.to_string()), ("sum", &sum_number(partial))]) }
                    </span>
                }
                if all.is_empty() { { "0" } }
                { " = " }
                <strong id="conv-sum-result" data-value={value.to_string()} data-check={sum(&all).to_string()}>{ sum_number(value as f64) }</strong>
                if pick.layer == 1 {
                    { " " }{ ctx.tf("conv.layers.relu", &[("v", &sum_number(value.max(0.0) as f64))]) }
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
) -> Result<LayersDone, ConvError> {
    let f1 = filters1(settings, layer);
    let f2 = filters2(settings, layer);
    let x1 = Rc::new(input.data.clone());
    let one = run_layer(settings.stage, &shapes[0], x1, f1, gpu, &cancel).await?;
    let x2 = Rc::new(relu(&one.y));
    let two = run_layer(settings.stage, &shapes[1], x2, f2, gpu, &cancel).await?;
    Ok(LayersDone {
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

fn report(d: &LayersDone) -> Vec<(&'static str, Field)> {
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
