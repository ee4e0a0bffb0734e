//! The train view (`#/train`): a tiny MLP trained on the visitor's GPU by WGSL kernels that
//! can be opened, with the same network trained by the CPU twin beside it. Every setting lives
//! in the URL (see `mlp::spec`); bad ones are named on the page and replaced by defaults.
//!
//! - `runner`: the GPU session and CPU twin, driven by one timer (time-sliced, main thread).
//! - `experiment`: samples/s against batch size.
//! - `crossover`: steps/s of the GPU and the tuned CPU over widths × batch sizes.
//! - `picture`: pixels and chart geometry (pure).
//! - `form`: the typed fields and the restart notice (a reducer, pure).

mod crossover;
mod experiment;
mod form;
mod picture;
mod runner;

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use yew::prelude::*;
use yew_router::prelude::*;

use gpu_runtime::mlp::data::EXTENT;
use gpu_runtime::mlp::spec::{
    parse_batch, parse_lr, MAX_ADDED, MAX_HIDDEN_LAYERS, MAX_NEURONS, REG_RATES,
};
use gpu_runtime::mlp::{
    Activation, Dataset, Feature, LossKind, Optimiser, Regularisation, Spec, SpecError,
};
use gpu_runtime::training::{accum_memory, max_batch};

use self::experiment::{growth, verdict, GpuCell, Row, Verdict};
use self::form::{structural_changes, Form, FormAction, Restart};
use self::picture::{
    css, heat_colour, heat_url, nice_ceiling, output_shade, plane_point, Frame, CLASS0, CLASS1,
};
use self::runner::{now_ms, rate_view, GpuState, RateView, Runner, GRID};
use super::{replace_query, Ctx};
use crate::format;
use crate::probe::WebGpuStatus;
use crate::session;
use crate::source_view::highlight_line;
use gpu_runtime::mlp::data::label_target;

/// Milliseconds between engine ticks, and between re-renders while training.
const TICK_MS: u32 = 16;
const RENDER_MS: f64 = 150.0;
const NEWLINE: &str = "\n";
const SPACE: &str = " ";

fn write_query(ctx: &Ctx, nav: &Option<Navigator>, pairs: &[(&str, String)]) {
    let mut q = ctx.query.clone();
    for (k, v) in pairs {
        q.set(k, v);
    }
    if let Some(nav) = nav {
        replace_query(nav, &ctx.route, &q);
    }
}

/// The settings that require a new network when they change (all but the learning rate).
fn structural(spec: &Spec) -> Spec {
    Spec {
        lr: 0.0,
        ..spec.clone()
    }
}

#[derive(Clone, Debug, PartialEq)]
enum ExperimentState {
    Idle,
    Running(Vec<Row>),
    Done(Vec<Row>),
}

#[function_component]
pub fn Train() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let redraw = use_force_update();
    let runner: Rc<RefCell<Option<Runner>>> = use_mut_ref(|| None);
    let generation = use_mut_ref(|| 0u64);
    let reset = use_state(|| 0u32);
    let add_class = use_state(|| 1u32);
    let selected_kernel = use_state(|| Option::<&'static str>::None);
    let experiment = use_state(|| ExperimentState::Idle);
    let experiment_gen = use_mut_ref(|| 0u64);
    // The learning rate of the latest render, for networks built by the effect below (whose
    // key leaves the rate out so that changing it does not start over).
    let current_lr = use_mut_ref(|| 0.0f32);
    let boundary = use_node_ref();

    let (spec, errors) = match &ctx {
        Some(c) => Spec::from_params(|k| c.query.get(k)),
        None => (Spec::default(), Vec::new()),
    };
    let gpu_software = match ctx.as_ref().map(|c| &c.webgpu) {
        Some(WebGpuStatus::Available(a)) => Some(a.is_software),
        _ => None,
    };
    let checking = matches!(
        ctx.as_ref().map(|c| &c.webgpu),
        Some(WebGpuStatus::Checking)
    );
    *current_lr.borrow_mut() = spec.lr;
    let form = {
        let spec = spec.clone();
        use_reducer(move || Form::new(&spec))
    };
    // The fields follow the URL (a link, Back, another tab's edit) unless they already say it.
    {
        let form = form.dispatcher();
        use_effect_with((spec.lr, spec.batch), move |&(lr, batch)| {
            form.dispatch(FormAction::Sync { lr, batch })
        });
    }

    // A new network (and GPU session) whenever a structural setting changes or Reset.
    {
        let (runner, generation, redraw, current_lr, form) = (
            runner.clone(),
            generation.clone(),
            redraw.clone(),
            current_lr.clone(),
            form.dispatcher(),
        );
        use_effect_with(
            (structural(&spec), *reset, gpu_software, checking),
            move |(key, _, software, checking)| {
                let interval = if *checking {
                    None
                } else {
                    let gen = {
                        let mut g = generation.borrow_mut();
                        *g += 1;
                        *g
                    };
                    let spec = Spec {
                        lr: *current_lr.borrow(),
                        ..key.clone()
                    };
                    // A structural change while the learner was using the network: say what
                    // restarted, and keep playing if it was (Reset and the first build say nothing).
                    let previous = runner
                        .borrow()
                        .as_ref()
                        .map(|r| (structural_changes(&r.spec, &spec), r.reached(), r.playing));
                    let mut fresh = Runner::new(spec.clone(), software.is_some());
                    let notice = match previous {
                        Some((settings, (gpu_step, cpu_step), playing)) if !settings.is_empty() => {
                            fresh.set_playing(playing);
                            // Nothing was lost before the first step: no need to say so.
                            let stepped = gpu_step.unwrap_or(0) > 0 || cpu_step > 0;
                            (stepped || playing).then_some(Restart {
                                settings,
                                gpu_step,
                                cpu_step,
                            })
                        }
                        _ => None,
                    };
                    form.dispatch(FormAction::Restarted(notice));
                    *runner.borrow_mut() = Some(fresh);
                    if let Some(software) = *software {
                        let parts = runner.borrow().as_ref().map(|r| r.session_parts());
                        let (runner, generation, redraw) =
                            (runner.clone(), generation.clone(), redraw.clone());
                        wasm_bindgen_futures::spawn_local(async move {
                            let Some(parts) = parts else { return };
                            let result = match session::gpu(software).await {
                                Ok((gpu, _)) => Runner::start_gpu(gpu, &spec, parts).await,
                                Err(e) => Err(e),
                            };
                            if *generation.borrow() != gen {
                                return;
                            }
                            if let Some(r) = runner.borrow_mut().as_mut() {
                                r.attach(result);
                            }
                            redraw.force_update();
                        });
                    }
                    let (runner, redraw) = (runner.clone(), redraw.clone());
                    let last_render = Rc::new(RefCell::new(0.0f64));
                    Some(Interval::new(TICK_MS, move || {
                        let now = now_ms();
                        let render = {
                            let Ok(mut guard) = runner.try_borrow_mut() else {
                                return;
                            };
                            let Some(r) = guard.as_mut() else { return };
                            // Training holds while the tab is hidden and resumes when shown.
                            r.set_hidden(crate::visibility::page_hidden());
                            r.tick(now);
                            if r.take_finished_run() {
                                crate::embed::report(Ok(train_report(r)));
                            }
                            let due = r.dirty && now - *last_render.borrow() >= RENDER_MS;
                            if due {
                                r.dirty = false;
                            }
                            due
                        };
                        if render {
                            *last_render.borrow_mut() = now;
                            redraw.force_update();
                        }
                    }))
                };
                move || drop(interval)
            },
        );
    }
    // The learning rate changes without starting over.
    {
        let runner = runner.clone();
        use_effect_with(spec.lr, move |lr| {
            if let Some(r) = runner.borrow_mut().as_mut() {
                r.spec.lr = *lr;
                r.cpu.hyper.lr = *lr;
                if let Some(s) = r.gpu.as_mut() {
                    s.set_lr(*lr);
                }
            }
        });
    }

    let Some(ctx) = ctx else {
        return html! {};
    };

    // ---- controls -------------------------------------------------------------------------
    let set = {
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        move |key: &'static str| {
            let (ctx, nav) = (ctx.clone(), nav.clone());
            Callback::from(move |value: String| write_query(&ctx, &nav, &[(key, value)]))
        }
    };
    let on_select = |key: &'static str| {
        let set = set(key);
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            set.emit(el.value());
        })
    };
    let on_input = |key: &'static str| {
        let set = set(key);
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            set.emit(el.value());
        })
    };
    let layers_cb = {
        let set = set("layers");
        move |hidden: Vec<usize>| {
            let set = set.clone();
            Callback::from(move |_: MouseEvent| {
                set.emit(
                    hidden
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                )
            })
        }
    };
    let feature_cb = {
        let (set, current) = (set("features"), spec.features.clone());
        move |f: Feature| {
            let (set, current) = (set.clone(), current.clone());
            Callback::from(move |_: Event| {
                let mut next: Vec<Feature> = current.clone();
                if next.contains(&f) {
                    next.retain(|x| *x != f);
                } else {
                    next.push(f);
                }
                let next: Vec<&str> = Feature::ALL
                    .iter()
                    .filter(|a| next.contains(a))
                    .map(|a| a.code())
                    .collect();
                set.emit(next.join(","));
            })
        }
    };

    let guard = runner.borrow();
    let r = guard.as_ref();
    let playing = r.is_some_and(|r| r.playing);
    let on_play = {
        let (runner, redraw) = (runner.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(r) = runner.borrow_mut().as_mut() {
                let pausing = r.playing;
                r.set_playing(!r.playing);
                // Pausing ends a training run: an embed reports where it got to, once the
                // steps already sent have finished (the timer sends it).
                if pausing {
                    r.report_when_finished();
                }
            }
            redraw.force_update();
        })
    };
    let on_step = {
        let (runner, redraw) = (runner.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(r) = runner.borrow_mut().as_mut() {
                r.set_playing(false);
                r.step_once(now_ms());
            }
            redraw.force_update();
        })
    };
    let on_reset = {
        let reset = reset.clone();
        Callback::from(move |_: MouseEvent| reset.set(*reset + 1))
    };

    // ---- sections ---------------------------------------------------------------------------
    let error_box = (!errors.is_empty()).then(|| {
        html! {
            <div class="train-errors" role="alert">
                <p><strong>{ ctx.t("train.err.title") }</strong></p>
                <ul>
                    { for errors.iter().map(|e| {
                        let args = e.args();
                        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                        html! { <li>{ ctx.tf(e.key(), &args) }</li> }
                    }) }
                </ul>
                <p>{ ctx.t("train.err.defaults") }</p>
            </div>
        }
    });

    let gpu_note = r.map(|r| match &r.gpu_state {
        GpuState::Unavailable => html! { <p class="train-note">{ ctx.t("train.gpu.unavailable") }</p> },
        GpuState::Starting => html! { <p class="train-note">{ ctx.t("train.gpu.starting") }</p> },
        GpuState::Ready => html! {},
        GpuState::Lost(e) => html! {
            <p class="train-note error" role="alert">{ ctx.tf("train.gpu.lost", &[("detail", e)]) }</p>
        },
        GpuState::Failed(e) => html! {
            <p class="train-note error" role="alert">{ ctx.tf("train.gpu.failed", &[("detail", &e.to_string())]) }</p>
        },
    });

    let restart_note = form.restarted.as_ref().map(|r| {
        let what = r
            .settings
            .iter()
            .map(|k| ctx.t(k).to_string())
            .reduce(|a, b| ctx.tf("train.setting.join", &[("a", &a), ("b", &b)]))
            .unwrap_or_default();
        html! {
            <p id="train-restarted" class="train-note" role="status">
                { ctx.tf("train.restarted", &[("what", &what)]) }
                { " " }
                { match r.gpu_step {
                    Some(g) => ctx.tf("train.restarted.reached", &[
                        ("gpu", &format::count(g)),
                        ("cpu", &format::count(r.cpu_step)),
                    ]),
                    None => ctx.tf("train.restarted.reached_cpu", &[("cpu", &format::count(r.cpu_step))]),
                } }
                { " " }
                { ctx.t("train.restarted.lr") }
            </p>
        }
    });

    let regression = spec.dataset.is_regression();
    // A dataset that x and y alone learn slowly names the features that help, one click away.
    let missing: Vec<Feature> = spec
        .dataset
        .suggested_features()
        .iter()
        .filter(|f| !spec.features.contains(f))
        .copied()
        .collect();
    let suggestion = (!missing.is_empty()).then(|| {
        let set = set("features");
        let next: Vec<&str> = Feature::ALL
            .iter()
            .filter(|f| spec.features.contains(f) || missing.contains(f))
            .map(|f| f.code())
            .collect();
        let next = next.join(",");
        let names: Vec<&str> = missing.iter().map(|f| f.label()).collect();
        html! {
            <p id="train-suggest" class="hint">
                { ctx.tf("train.suggest", &[("features", &names.join(", "))]) }{ " " }
                <button class="button" id="train-suggest-add"
                    onclick={Callback::from(move |_: MouseEvent| set.emit(next.clone()))}>
                    { ctx.t("train.suggest.add") }
                </button>
            </p>
        }
    });
    let data_panel = html! {
        <section class="train-panel">
            <h2>{ ctx.t("train.data") }</h2>
            <label class="train-field">
                <span>{ ctx.t("train.dataset") }</span>
                <select id="train-data" onchange={on_select("data")}>
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
                    onchange={on_input("noise")} />
            </label>
            <label class="train-field">
                <span>{ ctx.tf("train.split", &[("value", &spec.split.to_string())]) }</span>
                <input type="range" min="10" max="90" step="10" value={spec.split.to_string()}
                    onchange={on_input("split")} />
            </label>
            <label class="train-field">
                <span>{ ctx.t("train.seed") }</span>
                <input type="number" min="0" value={spec.seed.to_string()} onchange={on_input("seed")} />
            </label>
            <fieldset class="train-features">
                <legend>{ ctx.t("train.features") }</legend>
                { suggestion }
                { for Feature::ALL.iter().map(|f| html! {
                    <label>
                        <input type="checkbox" checked={spec.features.contains(f)}
                            onchange={feature_cb(*f)} />
                        { f.label() }
                    </label>
                }) }
            </fieldset>
            <fieldset class="train-add">
                <legend>{ ctx.t("train.add.title") }</legend>
                <p class="hint">{ ctx.tf(if regression { "train.add.hint_reg" } else { "train.add.hint" }, &[("max", &MAX_ADDED.to_string())]) }</p>
                { for [0u32, 1].iter().map(|&c| {
                    let add_class = add_class.clone();
                    html! {
                        <label class={classes!("class-toggle", format!("class{c}"))}>
                            <input type="radio" name="train-add-class" checked={*add_class == c}
                                onchange={Callback::from(move |_: Event| add_class.set(c))} />
                            { ctx.t(match (regression, c) {
                                (false, 0) => "train.class0",
                                (false, _) => "train.class1",
                                (true, 0) => "train.value_low",
                                (true, _) => "train.value_high",
                            }) }
                        </label>
                    }
                }) }
                <button class="button small" disabled={spec.added.is_empty()}
                    onclick={{ let set = set("add"); Callback::from(move |_: MouseEvent| set.emit(String::new())) }}>
                    { ctx.tf("train.add.clear", &[("count", &spec.added.len().to_string())]) }
                </button>
            </fieldset>
        </section>
    };

    // The learning rate applies live: each valid keystroke goes to the URL (and from there to
    // both trainers); a bad one is named at the field and goes nowhere.
    let lr_error = form.lr_error();
    let on_lr = {
        let (form, set) = (form.dispatcher(), set("lr"));
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let text = el.value();
            if parse_lr(&text).is_ok() {
                set.emit(text.trim().to_string());
            }
            form.dispatch(FormAction::TypeLr(text));
        })
    };
    // The batch size needs new GPU buffers, so it applies (with a restart) on Enter, on leaving
    // the field or on an arrow key, not on every keystroke of "64".
    let batch_max = spec.train_len();
    let batch_error = form.batch_error(batch_max);
    let on_batch_input = {
        let form = form.dispatcher();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            form.dispatch(FormAction::TypeBatch(el.value()));
        })
    };
    let on_batch_change = {
        let set = set("batch");
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Ok(b) = parse_batch(&el.value(), batch_max) {
                set.emit(b.to_string());
            }
        })
    };
    let on_batch_key = {
        let (form, set) = (form.dispatcher(), set("batch"));
        Callback::from(move |e: KeyboardEvent| {
            let delta: i64 = match e.key().as_str() {
                "ArrowUp" => 1,
                "ArrowDown" => -1,
                "Enter" => 0,
                _ => return,
            };
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let Ok(b) = parse_batch(&el.value(), batch_max) else {
                return;
            };
            e.prevent_default();
            let next = (b as i64 + delta).clamp(1, batch_max as i64) as usize;
            form.dispatch(FormAction::TypeBatch(next.to_string()));
            set.emit(next.to_string());
        })
    };
    // Gradient accumulation: micro-batches per update, a structural change (the losses buffer
    // holds every micro-batch's samples). What it buys is activation memory.
    let mut accum_choices = vec![1usize, 2, 4, 8, 16];
    if !accum_choices.contains(&spec.accum) {
        accum_choices.push(spec.accum);
        accum_choices.sort_unstable();
    }
    let accum_summary = {
        let m = accum_memory(&spec.net(), spec.batch, spec.accum);
        html! {
            <p id="train-accum-summary" class="hint"
                data-effective={m.effective_batch.to_string()}
                data-micro-bytes={m.micro_bytes.to_string()}
                data-effective-bytes={m.effective_bytes.to_string()}>
                { ctx.tf("train.accum.summary", &[
                    ("k", &spec.accum.to_string()),
                    ("batch", &format::count(spec.batch as u64)),
                    ("effective", &format::count(m.effective_batch as u64)),
                    ("micro", &format::bytes(m.micro_bytes)),
                    ("whole", &format::bytes(m.effective_bytes)),
                ]) }
                { SPACE }
                <a href={format!("#/learn/grad-accum?lang={}", ctx.lang.code())}>{ ctx.t("train.accum.lesson") }</a>
            </p>
        }
    };
    let reg_rate = match spec.reg {
        Regularisation::None => 0.001,
        r => r.rate(),
    };
    // The offered strengths, plus a linked one that is not among them.
    let mut reg_rates = REG_RATES.to_vec();
    if !reg_rates.contains(&reg_rate) {
        reg_rates.push(reg_rate);
        reg_rates.sort_by(f32::total_cmp);
    }
    let on_reg_kind = {
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let rate = if el.value() == "none" {
                String::new()
            } else {
                reg_rate.to_string()
            };
            write_query(&ctx, &nav, &[("reg", el.value()), ("regrate", rate)]);
        })
    };
    let on_reg_rate = on_select("regrate");

    let net = spec.net();
    let weights = r.map(|r| r.weights.clone()).unwrap_or_default();
    let neurons = r.map(|r| r.neurons.clone()).unwrap_or_default();
    let neurons_from_gpu = r.is_some_and(|r| r.heat_from_gpu);
    let network_panel = html! {
        <section class="train-panel">
            <h2>{ ctx.t("train.network") }</h2>
            { network_svg(&ctx, &net, &weights, &spec.features, &neurons) }
            <p class="hint">{ ctx.t(if neurons_from_gpu { "train.neurons.gpu" } else { "train.neurons.cpu" }) }</p>
            <div class="train-layers">
                { for spec.hidden.iter().enumerate().map(|(i, &n)| {
                    let mut less = spec.hidden.clone();
                    less[i] = n.saturating_sub(1).max(1);
                    let mut more = spec.hidden.clone();
                    more[i] = (n + 1).min(MAX_NEURONS);
                    html! {
                        <span class="layer-ctl">
                            <span>{ ctx.tf("train.layer", &[("index", &(i + 1).to_string())]) }</span>
                            <button class="button small" aria-label={ctx.t("train.fewer_neurons")}
                                disabled={n <= 1} onclick={layers_cb(less)}>{ "−" }</button>
                            <span class="count">{ n }</span>
                            <button class="button small" aria-label={ctx.t("train.more_neurons")}
                                disabled={n >= MAX_NEURONS} onclick={layers_cb(more)}>{ "+" }</button>
                        </span>
                    }
                }) }
                <span class="layer-ctl">
                    <button class="button small" disabled={spec.hidden.len() >= MAX_HIDDEN_LAYERS}
                        onclick={{ let mut h = spec.hidden.clone(); h.push(4); layers_cb(h) }}>
                        { ctx.t("train.add_layer") }
                    </button>
                    <button class="button small" disabled={spec.hidden.is_empty()}
                        onclick={{ let mut h = spec.hidden.clone(); h.pop(); layers_cb(h) }}>
                        { ctx.t("train.remove_layer") }
                    </button>
                </span>
            </div>
            <div class="train-hyper">
                <label class="train-field">
                    <span>{ ctx.t("train.activation") }</span>
                    <select id="train-act" onchange={on_select("act")}>
                        { code_options(&ctx, "train.act.", Activation::ALL.map(Activation::code), spec.activation.code()) }
                    </select>
                </label>
                <label class="train-field">
                    <span>{ ctx.t("train.optimiser") }</span>
                    <select id="train-opt" onchange={on_select("opt")}>
                        { code_options(&ctx, "train.opt.", Optimiser::ALL.map(Optimiser::code), spec.optimiser.code()) }
                    </select>
                </label>
                <label class="train-field">
                    <span>{ ctx.t("train.loss") }</span>
                    // A regression dataset brings its own loss; the choice is for classes.
                    <select id="train-loss" onchange={on_select("loss")} disabled={regression}>
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
                    <select id="train-reg-rate" onchange={on_reg_rate}
                        disabled={spec.reg == Regularisation::None}>
                        { for reg_rates.iter().map(|r| html! {
                            <option value={r.to_string()} selected={*r == reg_rate}>{ r.to_string() }</option>
                        }) }
                    </select>
                </label>
                <label class="train-field">
                    <span>{ ctx.t("train.lr") }</span>
                    <input id="train-lr" type="text" inputmode="decimal" value={form.lr.clone()}
                        aria-invalid={lr_error.is_some().to_string()} oninput={on_lr} />
                    { field_error(&ctx, "train-lr-error", lr_error.as_ref()) }
                </label>
                <label class="train-field">
                    <span>{ ctx.tf("train.batch", &[("max", &spec.train_len().to_string())]) }</span>
                    <input id="train-batch" type="text" inputmode="numeric" value={form.batch.clone()}
                        aria-invalid={batch_error.is_some().to_string()}
                        oninput={on_batch_input} onchange={on_batch_change} onkeydown={on_batch_key} />
                    { field_error(&ctx, "train-batch-error", batch_error.as_ref()) }
                </label>
                <label class="train-field">
                    <span>{ ctx.t("train.accum") }</span>
                    <select id="train-accum" onchange={on_select("accum")}>
                        { for accum_choices.iter().map(|k| html! {
                            <option value={k.to_string()} selected={*k == spec.accum}>{ k.to_string() }</option>
                        }) }
                    </select>
                </label>
            </div>
            { accum_summary }
        </section>
    };

    let output_panel = match r {
        Some(r) => output_panel(&ctx, r, &spec, &add_class, &set("add"), &boundary),
        None => html! { <p>{ ctx.t("train.gpu.starting") }</p> },
    };

    let plan = r.map(|r| r.plan.clone()).unwrap_or_default();
    let kernels_panel = html! {
        <details class="train-kernels">
            <summary>{ ctx.tf("train.kernels.title", &[("count", &plan.len().to_string())]) }</summary>
            <p>{ ctx.t("train.kernels.intro") }</p>
            <div class="train-table-wrap">
            <table class="train-plan">
                <thead><tr>
                    <th>{ "#" }</th>
                    <th>{ ctx.t("train.kernels.kernel") }</th>
                    <th>{ ctx.t("train.kernels.layer") }</th>
                    <th>{ ctx.t("train.kernels.threads") }</th>
                    <th>{ ctx.t("train.kernels.workgroups") }</th>
                </tr></thead>
                <tbody>
                    { for plan.iter().enumerate().map(|(i, p)| {
                        let id = p.kernel_id;
                        let sel = selected_kernel.clone();
                        let title = gpu_runtime::kernel(id).map(|k| ctx.t(k.title_key)).unwrap_or_default();
                        html! {
                            <tr class={classes!((*selected_kernel == Some(id)).then_some("selected"))}
                                onclick={Callback::from(move |_: MouseEvent| sel.set(Some(id)))}>
                                <td>{ i + 1 }</td>
                                <td>
                                    <button class="link" type="button"><code>{ id }</code></button>
                                    { SPACE }{ title }
                                </td>
                                <td>{ if p.layer == 0 { ctx.t("train.kernels.all_layers").to_string() } else { p.layer.to_string() } }</td>
                                <td>{ format::count(p.threads as u64) }</td>
                                <td>{ format!("{} × {} × {}", p.workgroups[0], p.workgroups[1], p.workgroups[2]) }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            </div>
            { kernel_source(&ctx, (*selected_kernel).or(plan.first().map(|p| p.kernel_id))) }
        </details>
    };

    let experiment_panel = {
        let limits = super::kernel_run::adapter_limits(&ctx);
        let ceiling = limits.map(|l| max_batch(&net, &l));
        let running = matches!(*experiment, ExperimentState::Running(_));
        let on_run = {
            let (experiment, experiment_gen, runner, spec) = (
                experiment.clone(),
                experiment_gen.clone(),
                runner.clone(),
                spec.clone(),
            );
            Callback::from(move |_: MouseEvent| {
                let gen = {
                    let mut g = experiment_gen.borrow_mut();
                    *g += 1;
                    *g
                };
                if running {
                    experiment.set(ExperimentState::Idle);
                    return;
                }
                if let Some(r) = runner.borrow_mut().as_mut() {
                    r.set_playing(false);
                }
                experiment.set(ExperimentState::Running(Vec::new()));
                let (experiment, experiment_gen, spec) =
                    (experiment.clone(), experiment_gen.clone(), spec.clone());
                wasm_bindgen_futures::spawn_local(async move {
                    let gpu = match gpu_software {
                        Some(sw) => session::gpu(sw).await.ok().map(|(g, _)| g),
                        None => None,
                    };
                    let rows = Rc::new(RefCell::new(Vec::new()));
                    let (rows2, exp2, gen2, gen3) = (
                        rows.clone(),
                        experiment.clone(),
                        experiment_gen.clone(),
                        experiment_gen.clone(),
                    );
                    experiment::run(
                        gpu,
                        spec,
                        move |row| {
                            if *gen2.borrow() == gen {
                                rows2.borrow_mut().push(row);
                                exp2.set(ExperimentState::Running(rows2.borrow().clone()));
                            }
                        },
                        move || *experiment_gen.borrow() != gen,
                    )
                    .await;
                    let rows = rows.borrow().clone();
                    // A cancelled experiment (a second press, new settings) reports nothing.
                    if *gen3.borrow() == gen {
                        crate::embed::report(Ok(experiment_report(&rows)));
                    }
                    experiment.set(ExperimentState::Done(rows));
                });
            })
        };
        let rows = match &*experiment {
            ExperimentState::Idle => Vec::new(),
            ExperimentState::Running(r) | ExperimentState::Done(r) => r.clone(),
        };
        html! {
            <section class="train-experiment">
                <h2>{ ctx.t("train.exp.title") }</h2>
                <super::EmbedButton widget="batch" />
                <p>{ ctx.t("train.exp.intro") }</p>
                { ceiling.map(|c| html! {
                    <p class="hint">{ ctx.tf("train.exp.ceiling", &[("batch", &format::count(c))]) }</p>
                }) }
                <button id="train-exp-run" class="button" onclick={on_run}>
                    { ctx.t(if running { "train.exp.cancel" } else { "train.exp.run" }) }
                </button>
                { (!rows.is_empty()).then(|| experiment_view(&ctx, &rows)) }
                { matches!(*experiment, ExperimentState::Done(_))
                    .then(|| conclusion(&ctx, &rows, gpu_software == Some(true))) }
            </section>
        }
    };

    // The crossover experiment times the CPU on this thread: training pauses while it runs.
    let pause_training = {
        let (runner, redraw) = (runner.clone(), redraw.clone());
        Callback::from(move |()| {
            if let Some(r) = runner.borrow_mut().as_mut() {
                r.set_playing(false);
            }
            redraw.force_update();
        })
    };

    html! {
        <section class="page train">
            <h1>{ ctx.t("train.heading") }</h1>
            <p class="lead">{ ctx.t("train.lead") }</p>
            <super::EmbedButton widget="train" />
            { error_box }
            { gpu_note }
            { restart_note }
            <div class="train-toolbar">
                <button id="train-play" class="button primary" onclick={on_play}>
                    { ctx.t(if playing { "train.pause" } else { "train.play" }) }
                </button>
                <button id="train-step" class="button" onclick={on_step}>{ ctx.t("train.step") }</button>
                <button id="train-reset" class="button" onclick={on_reset}>{ ctx.t("train.reset") }</button>
                { r.map(|r| rates(&ctx, r)) }
            </div>
            <div class="train-grid">
                { data_panel }
                { network_panel }
                { output_panel }
            </div>
            { kernels_panel }
            { experiment_panel }
            <crossover::CrossoverExperiment on_start={pause_training} />
        </section>
    }
}

/// `<option>`s for setting codes, each labelled by the key `{prefix}{code}` (`prefix` ends in a
/// dot), `current` selected.
/// `run-finished` of training (docs/embedding.md): the latest evaluation of the GPU's network
/// and of its CPU twin (each evaluated every few steps, so `step` says which step it is).
fn train_report(r: &Runner) -> crate::embed::Report {
    use crate::embed::Field;
    let sample = |s: Option<&runner::Sample>| match s {
        None => Field::List(Vec::new()),
        Some(s) => Field::List(vec![vec![
            ("step", Field::Num(s.step as f64)),
            ("trainLoss", Field::Num(s.train as f64)),
            ("testLoss", Field::Num(s.test as f64)),
            ("testAccuracy", Field::Num(s.test_acc as f64)),
        ]]),
    };
    let mut out = vec![
        ("data", Field::Str(r.spec.dataset.code().into())),
        ("batch", Field::Num(r.spec.batch as f64)),
        ("cpuSteps", Field::Num(r.cpu.step as f64)),
    ];
    if let Some(g) = r.gpu.as_ref() {
        out.push(("gpuSteps", Field::Num(g.steps_completed() as f64)));
    }
    out.push(("gpu", sample(r.gpu_hist.last())));
    out.push(("cpu", sample(r.cpu_hist.last())));
    out
}

/// `run-finished` of the batch-size experiment: samples per second per batch size on each
/// side, and the conclusion drawn from them.
fn experiment_report(rows: &[Row]) -> crate::embed::Report {
    use crate::embed::Field;
    let rows_out = rows
        .iter()
        .map(|row| {
            let mut o = vec![
                ("batch", Field::Num(row.batch as f64)),
                ("cpuSamplesPerSecond", Field::Num(row.cpu)),
            ];
            match &row.gpu {
                GpuCell::SamplesPerSecond(v) => o.push(("gpuSamplesPerSecond", Field::Num(*v))),
                GpuCell::TooLarge => o.push(("gpu", Field::Str("too-large".into()))),
                GpuCell::NoGpu => o.push(("gpu", Field::Str("no-gpu".into()))),
                GpuCell::Failed(e) => o.push(("gpuError", Field::Str(e.clone()))),
            }
            o
        })
        .collect();
    let (verdict_code, at) = match verdict(rows) {
        Verdict::NoGpu => ("no-gpu", None),
        Verdict::CpuEverywhere { largest } => ("cpu-everywhere", Some(largest)),
        Verdict::GpuEverywhere { smallest } => ("gpu-everywhere", Some(smallest)),
        Verdict::GpuFrom { from } => ("gpu-from", Some(from)),
        Verdict::Mixed => ("mixed", None),
    };
    let mut out = vec![
        ("rows", Field::List(rows_out)),
        ("verdict", Field::Str(verdict_code.into())),
    ];
    if let Some(b) = at {
        out.push(("verdictBatch", Field::Num(b as f64)));
    }
    out
}

fn code_options<const N: usize>(
    ctx: &Ctx,
    prefix: &str,
    codes: [&'static str; N],
    current: &str,
) -> Html {
    html! {
        { for codes.into_iter().map(|c| html! {
            <option value={c} selected={c == current}>{ ctx.t(&format!("{prefix}{c}")) }</option>
        }) }
    }
}

/// A bad value typed into a field, named under it.
fn field_error(ctx: &Ctx, id: &'static str, e: Option<&SpecError>) -> Html {
    let Some(e) = e else { return html! {} };
    let args = e.args();
    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    html! { <span id={id} class="field-error" role="alert">{ ctx.tf(e.key(), &args) }</span> }
}

fn rates(ctx: &Ctx, r: &Runner) -> Html {
    let gpu_steps = r.gpu.as_ref().map(|s| s.steps_completed());
    let gpu_rate = r.gpu.as_ref().and(r.gpu_rate.per_second());
    let cpu_rate = r.cpu_rate.per_second();
    let show = |v: RateView| match v {
        RateView::Paused => ctx.t("train.rate.paused").to_string(),
        RateView::Off => ctx.t("train.rate.off").to_string(),
        RateView::Measuring => ctx.t("train.rate.measuring").to_string(),
        RateView::PerSecond(v) => ctx.tf("train.rate.per_second", &[("rate", &format::rate(v))]),
    };
    // Without a session there is no GPU rate: "measuring"/"paused" while it starts, else none.
    let gpu_view = match (&r.gpu, &r.gpu_state) {
        (Some(_), _) => rate_view(r.running(), &r.gpu_rate),
        (None, GpuState::Starting) if r.playing => RateView::Measuring,
        (None, GpuState::Starting) => RateView::Paused,
        (None, _) => RateView::Off,
    };
    let cpu_view = rate_view(r.running(), &r.cpu_rate);
    // After Pause the GPU still finishes what was sent (it cannot be taken back): say so, and
    // the count stops once they are done.
    let finishing = r.gpu_in_flight();
    let gpu_rate_text = match gpu_view {
        RateView::Paused if finishing > 0 => {
            ctx.tf("train.rate.finishing", &[("n", &format::count(finishing))])
        }
        v => show(v),
    };
    let last_gpu = r.gpu_hist.last();
    let first_gpu = r.gpu_hist.first();
    html! {
        <div id="train-status" class="train-rates" data-running={r.running().to_string()}
            data-gpu={match r.gpu_state {
                GpuState::Ready => "ready",
                GpuState::Starting => "starting",
                GpuState::Unavailable => "unavailable",
                GpuState::Lost(_) => "lost",
                GpuState::Failed(_) => "failed",
            }}
            data-gpu-steps={gpu_steps.unwrap_or(0).to_string()}
            data-gpu-submitted={r.gpu.as_ref().map_or(0, |s| s.steps_submitted()).to_string()}
            data-gpu-in-flight={finishing.to_string()}
            data-cpu-steps={r.cpu.step.to_string()}
            data-gpu-loss={last_gpu.map(|s| s.train.to_string()).unwrap_or_default()}
            data-first-gpu-loss={first_gpu.map(|s| s.train.to_string()).unwrap_or_default()}
            data-cpu-loss={r.cpu_hist.last().map(|s| s.train.to_string()).unwrap_or_default()}
            data-heat={r.heat_version.to_string()}
            data-gpu-rate={gpu_rate.map(|v| format!("{v:.1}")).unwrap_or_default()}
            data-cpu-rate={cpu_rate.map(|v| format!("{v:.1}")).unwrap_or_default()}>
            <span class="rate gpu">
                { ctx.tf("train.rate.gpu", &[
                    ("rate", &gpu_rate_text),
                    ("steps", &gpu_steps.map(format::count).unwrap_or_else(|| "–".into())),
                ]) }
            </span>
            <span class="rate cpu">
                { ctx.tf("train.rate.cpu", &[
                    ("rate", &show(cpu_view)),
                    ("steps", &format::count(r.cpu.step)),
                ]) }
            </span>
        </div>
    }
}

fn output_panel(
    ctx: &Ctx,
    r: &Runner,
    spec: &Spec,
    add_class: &UseStateHandle<u32>,
    set_add: &Callback<String>,
    boundary: &NodeRef,
) -> Html {
    let size = 300.0;
    let to_px = |v: f32| ((v + EXTENT) / (2.0 * EXTENT) * size as f32) as f64;
    let on_click = {
        let (add_class, set_add, spec, boundary) = (
            add_class.clone(),
            set_add.clone(),
            spec.clone(),
            boundary.clone(),
        );
        Callback::from(move |e: MouseEvent| {
            // The picture's own box (yew delegates events, so `current_target` is not the
            // picture); clientX/Y and the box share one coordinate space at any zoom.
            let Some(el) = boundary.cast::<web_sys::Element>() else {
                return;
            };
            if spec.added.len() >= MAX_ADDED {
                return;
            }
            let rect = el.get_bounding_client_rect();
            let Some((x, y)) = plane_point(
                (rect.left(), rect.top(), rect.width(), rect.height()),
                (e.client_x() as f64, e.client_y() as f64),
                EXTENT as f64,
            ) else {
                return;
            };
            let mut added = spec.added.clone();
            added.push((x as f32, y as f32, *add_class));
            let mut s = spec.clone();
            s.added = added;
            if let Some((_, v)) = s.to_params().into_iter().find(|(k, _)| *k == "add") {
                set_add.emit(v);
            }
        })
    };
    let heat = (!r.heat.is_empty()).then(|| heat_url(GRID, &r.heat));
    let regression = spec.dataset.is_regression();
    let dot = |x: f32, y: f32, c: u32, class: &'static str| {
        // Added points carry their coordinates (as in the URL), so they can be read back.
        let (dx, dy) = if class == "added" {
            (Some(format!("{x:.2}")), Some(format!("{y:.2}")))
        } else {
            (None, None)
        };
        html! {
            <circle class={class} data-x={dx} data-y={dy}
                cx={format!("{:.1}", to_px(x))} cy={format!("{:.1}", size - to_px(y))}
                r={if class == "added" { "4.5" } else { "3.2" }}
                fill={css(match regression {
                    true => heat_colour(output_shade(&[label_target(c)])),
                    false if c == 1 => CLASS1,
                    false => CLASS0,
                })} />
        }
    };
    // The runner's own added points: the URL's may be one ahead until the network is rebuilt.
    let n_generated = r.train.len() - r.spec.added.len().min(r.train.len());
    // The latest evaluation, named by the side it came from: before the GPU has evaluated its
    // network the numbers are the CPU twin's, and the line says so.
    let last = r
        .gpu_hist
        .last()
        .map(|s| (s, "gpu"))
        .or(r.cpu_hist.last().map(|s| (s, "cpu")));
    html! {
        <section class="train-panel">
            <h2>{ ctx.t("train.output") }</h2>
            <svg id="train-boundary" ref={boundary.clone()} viewBox="0 0 300 300"
                class={classes!("train-boundary", regression.then_some("regression"))}
                role="img" aria-label={ctx.t("train.boundary.label")} onclick={on_click}>
                { heat.map(|h| html! {
                    <image href={h} x="0" y="0" width="300" height="300" preserveAspectRatio="none" />
                }) }
                <line class="axis" x1="150" y1="0" x2="150" y2="300" />
                <line class="axis" x1="0" y1="150" x2="300" y2="150" />
                { for r.train.xy.iter().zip(&r.train.label).enumerate().map(|(i, (p, &c))| {
                    dot(p[0], p[1], c, if i < n_generated { "train" } else { "added" })
                }) }
                { for r.test.xy.iter().zip(&r.test.label).map(|(p, &c)| dot(p[0], p[1], c, "test")) }
            </svg>
            <p class="hint">
                { ctx.t(if r.heat_from_gpu { "train.boundary.gpu" } else { "train.boundary.cpu" }) }
                { " " }{ ctx.t(if regression { "train.boundary.legend_reg" } else { "train.boundary.legend" }) }
            </p>
            { last.map(|(s, side)| html! {
                <p class="train-metrics" data-side={side}>
                <span class="side">{ ctx.t(if side == "gpu" { "train.metrics.gpu" } else { "train.metrics.cpu" }) }</span>{ " " }
                { if regression {
                    // For regression the sample's second number is the RMSE (mlp::net::metrics).
                    ctx.tf("train.metrics_reg", &[
                        ("train", &format!("{:.3}", s.train)),
                        ("test", &format!("{:.3}", s.test)),
                        ("rmse", &format!("{:.3}", s.test_acc)),
                    ])
                } else {
                    ctx.tf("train.metrics", &[
                        ("train", &format!("{:.3}", s.train)),
                        ("test", &format!("{:.3}", s.test)),
                        ("acc", &format!("{:.1}", s.test_acc * 100.0)),
                    ])
                } }
                </p>
            }) }
            { loss_chart(ctx, r) }
        </section>
    }
}

fn loss_chart(ctx: &Ctx, r: &Runner) -> Html {
    // Both curves over the steps both sides have reached, so they can be compared; the faster
    // side's later steps are left out.
    let reached = |h: &[runner::Sample]| h.last().map(|s| s.step);
    let max_step = match (reached(&r.gpu_hist), reached(&r.cpu_hist)) {
        (Some(g), Some(c)) if r.gpu_hist.len() > 1 => g.min(c),
        (g, c) => g.or(c).unwrap_or(1),
    }
    .max(1);
    let max_loss = r
        .gpu_hist
        .iter()
        .chain(&r.cpu_hist)
        .filter(|s| s.step <= max_step)
        .flat_map(|s| [s.train, s.test])
        .filter(|v| v.is_finite())
        .fold(0.0f32, f32::max);
    let top = nice_ceiling(max_loss as f64);
    let f = Frame {
        x0: 36.0,
        y0: 8.0,
        w: 276.0,
        h: 120.0,
        x_min: 0.0,
        x_max: max_step as f64,
        y_min: 0.0,
        y_max: top,
    };
    let line = |h: &[runner::Sample], test: bool| {
        f.path(
            h.iter()
                .filter(|s| s.step <= max_step)
                .map(|s| (s.step as f64, if test { s.test } else { s.train } as f64)),
        )
    };
    html! {
        <figure class="train-loss">
            <svg viewBox="0 0 320 150" role="img" aria-label={ctx.t("train.loss_chart")}>
                <line class="axis" x1="36" y1="128" x2="312" y2="128" />
                <line class="axis" x1="36" y1="8" x2="36" y2="128" />
                <text x="32" y="14" text-anchor="end">{ format!("{top}") }</text>
                <text x="32" y="128" text-anchor="end">{ "0" }</text>
                <text x="312" y="142" text-anchor="end">{ format::count(max_step) }</text>
                <polyline class="gpu-train" points={line(&r.gpu_hist, false)} />
                <polyline class="gpu-test" points={line(&r.gpu_hist, true)} />
                <polyline class="cpu-train" points={line(&r.cpu_hist, false)} />
            </svg>
            <figcaption>
                <span class="key gpu-train">{ ctx.t("train.curve.gpu_train") }</span>
                <span class="key gpu-test">{ ctx.t("train.curve.gpu_test") }</span>
                <span class="key cpu-train">{ ctx.t("train.curve.cpu_train") }</span>
                <span class="axis-note">{ ctx.t("train.curve.axes") }</span>
            </figcaption>
        </figure>
    }
}

fn network_svg(
    ctx: &Ctx,
    net: &gpu_runtime::mlp::Net,
    weights: &[f32],
    features: &[Feature],
    neurons: &[Vec<String>],
) -> Html {
    let cols = net.sizes.len();
    let (w, h) = (360.0, 220.0);
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
        <svg class="train-network" viewBox={format!("0 0 {w} {h}")} role="img"
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

fn kernel_source(ctx: &Ctx, id: Option<&'static str>) -> Html {
    let Some(k) = id.and_then(gpu_runtime::kernel) else {
        return html! {};
    };
    let src = k.wgsl();
    html! {
        <div class="source-view">
            <h4>{ ctx.t(k.title_key) }{ " — " }<code>{ k.source_path }</code></h4>
            <p>{ ctx.t(k.summary_key) }{ " " }{ super::editor_page::edit_link(ctx, k.id) }</p>
            <pre class="source" tabindex="0"><code>
                { for src.lines().enumerate().map(|(i, line)| html! {
                    <span class="line">
                        <span class="ln" aria-hidden="true">{ i + 1 }</span>
                        { for highlight_line(line).into_iter().map(|(tok, text)| html! {
                            <span class={tok.class()}>{ text }</span>
                        }) }
                        { NEWLINE }
                    </span>
                }) }
            </code></pre>
        </div>
    }
}

/// What the finished experiment showed, worded from its own rows, then why.
fn conclusion(ctx: &Ctx, rows: &[Row], software: bool) -> Html {
    let v = verdict(rows);
    let batch = |b: usize| format::count(b as u64);
    let lead = match &v {
        Verdict::NoGpu => ctx.t("train.exp.v.no_gpu").to_string(),
        Verdict::CpuEverywhere { largest } => {
            ctx.tf("train.exp.v.cpu_all", &[("batch", &batch(*largest))])
        }
        Verdict::GpuEverywhere { smallest } => {
            ctx.tf("train.exp.v.gpu_all", &[("batch", &batch(*smallest))])
        }
        Verdict::GpuFrom { from } => ctx.tf("train.exp.v.gpu_from", &[("batch", &batch(*from))]),
        Verdict::Mixed => ctx.t("train.exp.v.mixed").to_string(),
    };
    let grew = growth(rows).map(|(a, b, g, c)| {
        ctx.tf(
            "train.exp.v.growth",
            &[
                ("from", &batch(a)),
                ("to", &batch(b)),
                ("gpu", &format::rate(g)),
                ("cpu", &format::rate(c)),
            ],
        )
    });
    html! {
        <div class="lesson" data-verdict={v.code()}>
            <p>{ lead }{ grew.map(|g| html! { <>{ SPACE }{ g }</> }) }</p>
            { software.then(|| html! { <p>{ ctx.t("train.exp.v.software") }</p> }) }
            <p>{ ctx.t("train.exp.lesson") }</p>
        </div>
    }
}

fn experiment_view(ctx: &Ctx, rows: &[Row]) -> Html {
    let gpu_val = |r: &Row| match r.gpu {
        GpuCell::SamplesPerSecond(v) => Some(v),
        _ => None,
    };
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [gpu_val(r), Some(r.cpu)])
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor();
    let hi = values.iter().copied().fold(0.0, f64::max).log10().ceil();
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let f = Frame {
        x0: 56.0,
        y0: 10.0,
        w: 380.0,
        h: 160.0,
        x_min: 0.0,
        x_max: 12.0,
        y_min: lo,
        y_max: hi,
    };
    let series = |pick: &dyn Fn(&Row) -> Option<f64>| {
        f.path(rows.iter().filter_map(|r| {
            pick(r)
                .filter(|v| *v > 0.0)
                .map(|v| ((r.batch as f64).log2(), v.log10()))
        }))
    };
    let gpu_line = series(&gpu_val);
    let cpu_line = series(&|r: &Row| Some(r.cpu));
    html! {
        <>
            <svg class="train-exp-chart" viewBox="0 0 450 200" role="img" aria-label={ctx.t("train.exp.chart")}>
                <line class="axis" x1="56" y1="170" x2="436" y2="170" />
                <line class="axis" x1="56" y1="10" x2="56" y2="170" />
                { for (lo as i32..=hi as i32).map(|p| html! {
                    <>
                        <line class="grid" x1="56" x2="436" y1={format!("{:.1}", f.y(p as f64))} y2={format!("{:.1}", f.y(p as f64))} />
                        <text x="50" y={format!("{:.1}", f.y(p as f64) + 4.0)} text-anchor="end">{ format!("1e{p}") }</text>
                    </>
                }) }
                { for experiment::BATCHES.iter().map(|&b| html! {
                    <text x={format!("{:.1}", f.x((b as f64).log2()))} y="186" text-anchor="middle">{ b }</text>
                }) }
                <polyline class="gpu-train" points={gpu_line} />
                <polyline class="cpu-train" points={cpu_line} />
            </svg>
            <p class="hint">
                <span class="key gpu-train">{ ctx.t("train.exp.gpu") }</span>
                <span class="key cpu-train">{ ctx.t("train.exp.cpu") }</span>
                { ctx.t("train.exp.axes") }
            </p>
            <table class="train-exp-table">
                <thead><tr>
                    <th>{ ctx.t("train.exp.batch") }</th>
                    <th>{ ctx.t("train.exp.gpu") }</th>
                    <th>{ ctx.t("train.exp.cpu") }</th>
                </tr></thead>
                <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr>
                            <td>{ format::count(r.batch as u64) }</td>
                            <td>{ match &r.gpu {
                                GpuCell::SamplesPerSecond(v) => format::count(v.round() as u64),
                                GpuCell::TooLarge => ctx.t("train.exp.too_large").to_string(),
                                GpuCell::NoGpu => ctx.t("train.exp.no_gpu").to_string(),
                                GpuCell::Failed(e) => ctx.tf("train.exp.failed", &[("detail", e)]),
                            } }</td>
                            <td>{ format::count(r.cpu.round() as u64) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </>
    }
}
