//! The train view's settings panels: the data (dataset, noise, split, seed, features, added
//! points) and the network (layers, activation, optimiser, loss, regularisation, learning
//! rate, batch, accumulation). Every control writes the URL (`SetQuery`), with values from
//! `page_models::train::settings`; the typed fields' text is the page model's.

use yew::prelude::*;

use gpu_runtime::training::accum_memory;
use mlp::spec::{MAX_ADDED, MAX_HIDDEN_LAYERS, MAX_NEURONS};
use mlp::{Activation, Dataset, Feature, LossKind, Optimiser, Regularisation, Spec};
use page_models::diagram::drawn_width;
use page_models::train::picture::{css, CLASS0, CLASS1};
use page_models::train::settings::{
    accum_choices, batch_error, batch_key, batch_param, layers_param, lr_error, lr_param,
    missing_features, reg_kind_params, reg_rates, toggle_feature, with_features,
};
use page_models::train::Action;

use super::{code_options, field_error, on_input, on_select, set_key, SetQuery, SPACE};
use crate::components::chart_width::use_chart_width;
use crate::components::draft_input::DraftInput;
use crate::components::Ctx;

#[derive(Properties, PartialEq)]
pub struct DataProps {
    pub spec: Spec,
    pub add_class: u32,
    pub set_query: SetQuery,
    pub dispatch: Callback<Action>,
}

/// The data panel: dataset, noise, split, seed, the input features (with the ones that help
/// this dataset suggested) and the points a click adds.
#[function_component]
pub fn DataPanel(p: &DataProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let (spec, set) = (&p.spec, &p.set_query);
    let regression = spec.dataset.is_regression();
    let on_feature = |f: Feature| {
        let current = spec.features.clone();
        set_key(set, "features").reform(move |_: Event| toggle_feature(&current, f))
    };
    html! {
        <section class="train-panel">
            <h2>{ ctx.t("train.data") }</h2>
            <label class="train-field">
                <span>{ ctx.t("train.dataset") }</span>
                <select id="train-data" onchange={on_select(set, "data")}>
                    <optgroup label={ctx.t("train.task.classification")}>
                        { code_options(&ctx, "train.dataset.", Dataset::ALL.map(Dataset::code), spec.dataset.code()) }
                    </optgroup>
                    <optgroup label={ctx.t("train.task.regression")}>
                        { code_options(&ctx, "train.dataset.", Dataset::REGRESSION.map(Dataset::code), spec.dataset.code()) }
                    </optgroup>
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.tf("train.noise", &[("value", &format!("{:.2}", spec.noise))]) }</span>
                <input type="range" min="0" max="0.5" step="0.05" value={spec.noise.to_string()}
                    onchange={on_input(set, "noise")} />
            </label>
            <label class="train-field">
                <span>{ ctx.tf("train.split", &[("value", &spec.split.to_string())]) }</span>
                <input id="train-split" type="range" min="10" max="90" step="10" value={spec.split.to_string()}
                    onchange={on_input(set, "split")} />
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.seed") }</span>
                // Its own draft: the page redraws every tick while training.
                <DraftInput kind="number" min="0" value={spec.seed.to_string()} on_commit={set_key(set, "seed")} />
            </label>
            <fieldset class="train-features">
                <legend>{ ctx.t("train.features") }</legend>
                { suggestion(&ctx, spec, set) }
                { for Feature::ALL.iter().map(|f| html! {
                    <label>
                        <input type="checkbox" checked={spec.features.contains(f)}
                            onchange={on_feature(*f)} />
                        { f.label() }
                    </label>
                }) }
            </fieldset>
            <fieldset class="train-add">
                <legend>{ ctx.t("train.add.title") }</legend>
                <p class="hint">{ ctx.tf(if regression { "train.add.hint_reg" } else { "train.add.hint" }, &[("max", &MAX_ADDED.to_string())]) }</p>
                { for [0u32, 1].iter().map(|&c| html! {
                    <label class={classes!("class-toggle", format!("class{c}"))}>
                        <input type="radio" name="train-add-class" checked={p.add_class == c}
                            onchange={p.dispatch.reform(move |_: Event| Action::AddClass(c))} />
                        { ctx.t(match (regression, c) {
                            (false, 0) => "train.class0",
                            (false, _) => "train.class1",
                            (true, 0) => "train.value_low",
                            (true, _) => "train.value_high",
                        }) }
                    </label>
                }) }
                <button class="button small" disabled={spec.added.is_empty()}
                    onclick={set_key(set, "add").reform(|_: MouseEvent| String::new())}>
                    { ctx.tf("train.add.clear", &[("count", &spec.added.len().to_string())]) }
                </button>
            </fieldset>
        </section>
    }
}

/// A dataset that x and y alone learn slowly names the features that help, one click away.
fn suggestion(ctx: &Ctx, spec: &Spec, set: &SetQuery) -> Html {
    let missing = missing_features(spec);
    if missing.is_empty() {
        return html! {};
    }
    let next = with_features(spec, &missing);
    let names: Vec<&str> = missing.iter().map(|f| f.label()).collect();
    html! {
        <p id="train-suggest" class="hint">
            { ctx.tf("train.suggest", &[("features", &names.join(", "))]) }{ " " }
            <button class="button" id="train-suggest-add"
                onclick={set_key(set, "features").reform(move |_: MouseEvent| next.clone())}>
                { ctx.t("train.suggest.add") }
            </button>
        </p>
    }
}

#[derive(Properties, PartialEq)]
pub struct NetworkProps {
    pub spec: Spec,
    /// The parameters drawn and each neuron's picture (the GPU's when it trains).
    pub weights: Vec<f32>,
    pub neurons: Vec<Vec<String>>,
    pub neurons_from_gpu: bool,
    /// The learning-rate and batch fields' text (the page model's).
    pub lr: String,
    pub batch: String,
    pub set_query: SetQuery,
    pub dispatch: Callback<Action>,
}

/// The network panel: the drawing, the layer controls and the training settings.
#[function_component]
pub fn NetworkPanel(p: &NetworkProps) -> Html {
    let ctx = use_context::<Ctx>();
    let svg_ref = use_node_ref();
    let svg_w = use_chart_width(svg_ref.clone());
    let Some(ctx) = ctx else {
        return html! {};
    };
    let spec = &p.spec;
    let net = spec.net();
    html! {
        <section class="train-panel">
            <h2>{ ctx.t("train.network") }</h2>
            { network_svg(&ctx, &net, &p.weights, &spec.features, &p.neurons, (&svg_ref, svg_w)) }
            <p class="hint">{ ctx.t(if p.neurons_from_gpu { "train.neurons.gpu" } else { "train.neurons.cpu" }) }</p>
            { layer_controls(&ctx, &spec.hidden, &set_key(&p.set_query, "layers")) }
            <HyperFields spec={spec.clone()} lr={p.lr.clone()} batch={p.batch.clone()}
                set_query={p.set_query.clone()} dispatch={p.dispatch.clone()} />
            { accum_summary(&ctx, spec) }
        </section>
    }
}

/// Fewer or more neurons per hidden layer; a layer added or removed.
fn layer_controls(ctx: &Ctx, hidden: &[usize], set: &Callback<String>) -> Html {
    let to = |h: Vec<usize>| set.reform(move |_: MouseEvent| layers_param(&h));
    let (mut added, mut removed) = (hidden.to_vec(), hidden.to_vec());
    added.push(4);
    removed.pop();
    html! {
        <div class="train-layers">
            { for hidden.iter().enumerate().map(|(i, &n)| {
                let mut less = hidden.to_vec();
                less[i] = n.saturating_sub(1).max(1);
                let mut more = hidden.to_vec();
                more[i] = (n + 1).min(MAX_NEURONS);
                html! {
                    <span class="layer-ctl">
                        <span>{ ctx.tf("train.layer", &[("index", &(i + 1).to_string())]) }</span>
                        <button class="button small" aria-label={ctx.t("train.fewer_neurons")}
                            disabled={n <= 1} onclick={to(less)}>{ "−" }</button>
                        <span class="count">{ n }</span>
                        <button class="button small" aria-label={ctx.t("train.more_neurons")}
                            disabled={n >= MAX_NEURONS} onclick={to(more)}>{ "+" }</button>
                    </span>
                }
            }) }
            <span class="layer-ctl">
                <button class="button small" disabled={hidden.len() >= MAX_HIDDEN_LAYERS}
                    onclick={to(added)}>
                    { ctx.t("train.add_layer") }
                </button>
                <button class="button small" disabled={hidden.is_empty()}
                    onclick={to(removed)}>
                    { ctx.t("train.remove_layer") }
                </button>
            </span>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct HyperProps {
    pub spec: Spec,
    pub lr: String,
    pub batch: String,
    pub set_query: SetQuery,
    pub dispatch: Callback<Action>,
}

/// Activation, optimiser, loss, regularisation, learning rate, batch and accumulation.
#[function_component]
pub fn HyperFields(p: &HyperProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let (spec, set) = (&p.spec, &p.set_query);
    let regression = spec.dataset.is_regression();
    // The learning rate applies live: each valid keystroke goes to the URL (and from there to
    // both trainers); a bad one is named at the field and goes nowhere.
    let lr_error = lr_error(&p.lr);
    let on_lr = {
        let (dispatch, set) = (p.dispatch.clone(), set_key(set, "lr"));
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let text = el.value();
            if let Some(v) = lr_param(&text) {
                set.emit(v);
            }
            dispatch.emit(Action::TypeLr(text));
        })
    };
    // The batch size needs new GPU buffers, so it applies (with a restart) on Enter, on leaving
    // the field or on an arrow key, not on every keystroke of "64".
    let batch_max = spec.train_len();
    let batch_error = batch_error(&p.batch, batch_max);
    let on_batch_input = p.dispatch.reform(|e: InputEvent| {
        let el: web_sys::HtmlInputElement = e.target_unchecked_into();
        Action::TypeBatch(el.value())
    });
    let on_batch_change = {
        let set = set_key(set, "batch");
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(v) = batch_param(&el.value(), batch_max) {
                set.emit(v);
            }
        })
    };
    let on_batch_key = {
        let (dispatch, set) = (p.dispatch.clone(), set_key(set, "batch"));
        Callback::from(move |e: KeyboardEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let Some(next) = batch_key(&e.key(), &el.value(), batch_max) else {
                return;
            };
            e.prevent_default();
            dispatch.emit(Action::TypeBatch(next.to_string()));
            set.emit(next.to_string());
        })
    };
    // Gradient accumulation: micro-batches per update, a structural change (the losses buffer
    // holds every micro-batch's samples). What it buys is activation memory.
    let accum_choices = accum_choices(spec.accum);
    // The offered strengths, plus a linked one that is not among them.
    let (reg_rate, reg_rates) = reg_rates(spec.reg);
    let on_reg_kind = set.reform(move |e: Event| {
        let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
        reg_kind_params(el.value(), reg_rate).to_vec()
    });
    html! {
        <div class="train-hyper">
            <label class="train-field">
                <span>{ ctx.t("train.activation") }</span>
                <select id="train-act" onchange={on_select(set, "act")}>
                    { code_options(&ctx, "train.act.", Activation::ALL.map(Activation::code), spec.activation.code()) }
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.optimiser") }</span>
                <select id="train-opt" onchange={on_select(set, "opt")}>
                    { code_options(&ctx, "train.opt.", Optimiser::ALL.map(Optimiser::code), spec.optimiser.code()) }
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.loss") }</span>
                // A regression dataset brings its own loss; the choice is for classes.
                <select id="train-loss" onchange={on_select(set, "loss")} disabled={regression}>
                    if regression {
                        <option selected=true>{ ctx.t("train.loss.reg") }</option>
                    } else {
                        { code_options(&ctx, "train.loss.", [LossKind::CrossEntropy, LossKind::Mse].map(LossKind::code), spec.loss.code()) }
                    }
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.reg") }</span>
                <select id="train-reg" onchange={on_reg_kind}>
                    { code_options(&ctx, "train.reg.", [Regularisation::None, Regularisation::L1(0.0), Regularisation::L2(0.0)].map(Regularisation::code), spec.reg.code()) }
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.reg_rate") }</span>
                <select id="train-reg-rate" onchange={on_select(set, "regrate")}
                    disabled={spec.reg == Regularisation::None}>
                    { for reg_rates.iter().map(|r| html! {
                        <option value={r.to_string()} selected={*r == reg_rate}>{ r.to_string() }</option>
                    }) }
                </select>
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.lr") }</span>
                <input id="train-lr" type="text" inputmode="decimal" value={p.lr.clone()}
                    aria-invalid={lr_error.is_some().to_string()} oninput={on_lr} />
                { field_error(&ctx, "train-lr-error", lr_error.as_ref()) }
            </label>
            <label class="train-field">
                <span>{ ctx.tf("train.batch", &[("max", &spec.train_len().to_string())]) }</span>
                <input id="train-batch" type="text" inputmode="numeric" value={p.batch.clone()}
                    aria-invalid={batch_error.is_some().to_string()}
                    oninput={on_batch_input} onchange={on_batch_change} onkeydown={on_batch_key} />
                { field_error(&ctx, "train-batch-error", batch_error.as_ref()) }
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.accum") }</span>
                <select id="train-accum" onchange={on_select(set, "accum")}>
                    { for accum_choices.iter().map(|k| html! {
                        <option value={k.to_string()} selected={*k == spec.accum}>{ k.to_string() }</option>
                    }) }
                </select>
            </label>
        </div>
    }
}

/// What accumulation buys: the effective batch and the activation memory of one micro-batch
/// against the whole batch at once.
fn accum_summary(ctx: &Ctx, spec: &Spec) -> Html {
    let m = accum_memory(&spec.net(), spec.batch, spec.accum);
    html! {
        <p id="train-accum-summary" class="hint"
            data-effective={m.effective_batch.to_string()}
            data-micro-bytes={m.micro_bytes.to_string()}
            data-effective-bytes={m.effective_bytes.to_string()}>
            { ctx.tf("train.accum.summary", &[
                ("k", &spec.accum.to_string()),
                ("batch", &numbers::count(spec.batch as u64)),
                ("effective", &numbers::count(m.effective_batch as u64)),
                ("micro", &numbers::bytes(m.micro_bytes)),
                ("whole", &numbers::bytes(m.effective_bytes)),
            ]) }
            { SPACE }
            <a href={format!("#/learn/grad-accum?lang={}", ctx.lang.code())}>{ ctx.t("train.accum.lesson") }</a>
        </p>
    }
}

fn network_svg(
    ctx: &Ctx,
    net: &mlp::Net,
    weights: &[f32],
    features: &[Feature],
    neurons: &[Vec<String>],
    (svg_ref, svg_w): (&NodeRef, Option<f64>),
) -> Html {
    let cols = net.sizes.len();
    // Drawn at its rendered width, so the feature names show at the stylesheet's size.
    let (w, h) = (drawn_width(svg_w, 360.0, 240.0), 220.0);
    let tallest = net.sizes.iter().copied().max().unwrap_or(1).max(1);
    let gap = (h - 20.0) / tallest as f64;
    // Room on the left for the feature names beside the input pictures.
    let x = |c: usize| 64.0 + c as f64 * (w - 84.0) / (cols.max(2) - 1) as f64;
    let y = |c: usize, i: usize| {
        let n = net.sizes[c] as f64;
        h / 2.0 + (i as f64 - (n - 1.0) / 2.0) * gap
    };
    let layout = net.layout();
    let mut lines = Vec::new();
    for (l, lo) in layout.layers.iter().enumerate() {
        for n in 0..lo.fan_out {
            for k in 0..lo.fan_in {
                let wv = weights
                    .get(lo.w_off + n * lo.fan_in + k)
                    .copied()
                    .unwrap_or(0.0);
                let mag = wv.abs().min(3.0) as f64;
                lines.push(html! {
                    <line x1={format!("{:.1}", x(l))} y1={format!("{:.1}", y(l, k))}
                        x2={format!("{:.1}", x(l + 1))} y2={format!("{:.1}", y(l + 1, n))}
                        stroke={css(if wv >= 0.0 { CLASS1 } else { CLASS0 })}
                        stroke-width={format!("{:.2}", 0.4 + mag * 1.2)}
                        stroke-opacity={format!("{:.2}", 0.2 + (mag / 3.0) * 0.8)} />
                });
            }
        }
    }
    let radius = (gap * 0.3).clamp(2.0, 7.0);
    // Inputs and hidden neurons show their output over the plane as a small square picture.
    let tile = (gap * 0.85).clamp(6.0, 30.0);
    let picture = |c: usize, i: usize| neurons.get(c).and_then(|l| l.get(i));
    html! {
        <svg class="train-network" ref={svg_ref.clone()} viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label={ctx.t("train.network.label")}>
            { for lines }
            { for (0..cols).flat_map(|c| (0..net.sizes[c]).map(move |i| (c, i))).map(|(c, i)| match picture(c, i) {
                Some(url) => html! {
                    <g class="neuron" data-layer={c.to_string()} data-neuron={i.to_string()}>
                        <image href={url.clone()} x={format!("{:.1}", x(c) - tile / 2.0)}
                            y={format!("{:.1}", y(c, i) - tile / 2.0)} width={format!("{tile:.1}")}
                            height={format!("{tile:.1}")} preserveAspectRatio="none" />
                        <rect class="tile" x={format!("{:.1}", x(c) - tile / 2.0)}
                            y={format!("{:.1}", y(c, i) - tile / 2.0)} width={format!("{tile:.1}")}
                            height={format!("{tile:.1}")} />
                    </g>
                },
                None => html! {
                    <circle class="node" cx={format!("{:.1}", x(c))} cy={format!("{:.1}", y(c, i))}
                        r={format!("{radius:.1}")} />
                },
            }) }
            { for features.iter().enumerate().map(|(i, f)| html! {
                <text class="feature" x={format!("{:.1}", x(0) - tile.max(2.0 * radius) / 2.0 - 3.0)}
                    y={format!("{:.1}", y(0, i) + 3.5)} text-anchor="end">{ f.label() }</text>
            }) }
        </svg>
    }
}
