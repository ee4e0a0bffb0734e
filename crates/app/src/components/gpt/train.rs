//! The GPT page's "Train" section: the tiny GPT trained live on the GPU with its CPU twin
//! beside it, the loss curves in nats per character against the bigram, and samples at the
//! learner's temperature. The state is `page_models::gpt_train::GptTrain` in a reducer; the
//! engine is `crate::train_driver::gpt` on one timer. These components only render and
//! dispatch. Leaving the page keeps the run (held) for the return, as `#/cnn` does.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use gpt::asset::Dataset;
use gpt::Corpus;
use page_models::diagram::drawn_width;
use page_models::gpt_train::{
    extent, Action, GptTrain, GpuState, Point, Setting, TrainSettings, Writer, BATCHES, CONTEXTS,
    HEADS, LAYERS, WIDTHS,
};
use page_models::train::picture::{nice_ceiling, Frame};
use yew::prelude::*;

use crate::components::page_state::{PageModel, PageState};

use crate::components::chart_width::use_chart_width;
use crate::components::keep::use_kept;
use crate::components::Ctx;
use crate::gpt_data_asset;
use crate::probe::WebGpuStatus;
use crate::train_driver::gpt::{page_corpus, GptDriver, VAL_DOCS};
use crate::train_driver::start_session;

const TICK_MS: u32 = 16;
/// Milliseconds between the step counts' reports to the page while training.
const REPORT_MS: f64 = 100.0;

type Page = PageState<GptTrain>;

impl PageModel for GptTrain {
    type Action = Action;
    fn next(&self, action: Action) -> Self {
        self.reduce(action)
    }
}

type DriverCell = Rc<RefCell<Option<GptDriver>>>;

/// What the page keeps when the learner leaves: the run, per data set (held).
type Kept = (Dataset, GptTrain, DriverCell);

/// The page's cells: the driver and the page as last rendered (the timer reads it).
type Cells = (DriverCell, Rc<RefCell<GptTrain>>);

fn keep(data: Dataset, (driver, latest): &Cells) -> Option<Kept> {
    let page = latest.borrow();
    let ours = driver.borrow().as_ref().is_some_and(|d| d.run == page.run);
    (ours && page.worth_keeping()).then(|| (data, page.left(), driver.clone()))
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub data: Dataset,
}

/// Waits for the text and for the WebGPU probe (the defaults depend on the adapter), then
/// shows the section.
#[function_component]
pub fn TrainSection(props: &Props) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let corpus = use_state(|| None::<(Dataset, Rc<Corpus>, usize)>);
    {
        let corpus = corpus.clone();
        use_effect_with(props.data, move |d| {
            let d = *d;
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(l) = gpt_data_asset::load(d).await {
                    let longest = l.asset.docs.iter().map(|s| s.chars().count()).max();
                    let c = Rc::new(page_corpus(&l.corpus));
                    corpus.set(Some((d, c, longest.unwrap_or(0))));
                }
            });
        });
    }
    let software = match &ctx.webgpu {
        WebGpuStatus::Checking => return html! {},
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    match &*corpus {
        Some((d, c, longest)) if *d == props.data => html! {
            <Trainer key={d.key()} data={*d} corpus={c.clone()} longest={*longest} software={software} />
        },
        _ => html! {},
    }
}

#[derive(Properties)]
struct TrainerProps {
    data: Dataset,
    corpus: Rc<Corpus>,
    longest: usize,
    /// None: no WebGPU here.
    software: Option<bool>,
}

impl PartialEq for TrainerProps {
    fn eq(&self, o: &Self) -> bool {
        self.data == o.data
            && Rc::ptr_eq(&self.corpus, &o.corpus)
            && self.longest == o.longest
            && self.software == o.software
    }
}

#[function_component]
fn Trainer(props: &TrainerProps) -> Html {
    let ctx = use_context::<Ctx>();
    let data = props.data;
    let software = props.software;
    let fresh = move || {
        GptTrain::new(TrainSettings::default_for(
            software.unwrap_or(true),
            data == Dataset::Poems,
        ))
    };
    // The run kept when the learner left, if of this data set.
    let (kept, (driver, latest)) = use_kept(
        |kept: Option<&Kept>| match kept.filter(|(d, _, _)| *d == data) {
            Some((_, p, d)) => (d.clone(), Rc::new(RefCell::new(p.clone()))),
            None => (Default::default(), Rc::new(RefCell::new(fresh()))),
        },
        move |cells: &Cells| keep(data, cells),
    );
    let page = {
        let kept = kept.clone();
        use_reducer(move || match kept.as_ref() {
            Some((d, p, _)) if *d == data => PageState(p.clone()),
            _ => PageState(fresh()),
        })
    };
    *latest.borrow_mut() = page.0.clone();
    use_driver(&driver, &latest, &page, props);
    super::embed::use_embed_report(&page.0, data);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let dispatch: Callback<Action> = {
        let page = page.dispatcher();
        Callback::from(move |a| page.dispatch(a))
    };
    let p = &page.0;
    let ready = matches!(p.gpu, GpuState::Ready { .. });
    html! {
        <>
        <section class="panel gpt-train" id="gpt-train" data-run={p.run.to_string()}
            data-running={p.running().to_string()}>
            <h2>{ ctx.t("gpt.train.heading") }</h2>
            <p>{ ctx.tf("gpt.train.intro", &[
                ("train", &numbers::count(props.corpus.train.len() as u64)),
                ("val", &numbers::count(props.corpus.val.len() as u64)),
                ("max", &VAL_DOCS.to_string()),
            ]) }</p>
            { adapter_note(&ctx, p) }
            { toolbar(&ctx, p, &dispatch) }
            { settings(&ctx, p, props.longest, &dispatch) }
            { progress(&ctx, p) }
            <LossChart page={Rc::new(p.clone())} />
            { samples(&ctx, p, &dispatch) }
        </section>
        <super::attention::AttentionView driver={driver.clone()} corpus={props.corpus.clone()} />
        <super::claim::ClaimView driver={driver.clone()} corpus={props.corpus.clone()}
            software={props.software} {ready} training={p.running()} />
        </>
    }
}

/// A driver for each new run once its settings can train, its GPU session if WebGPU is
/// here, and the timer that drives it.
#[hook]
fn use_driver(
    driver: &DriverCell,
    latest: &Rc<RefCell<GptTrain>>,
    page: &UseReducerHandle<Page>,
    props: &TrainerProps,
) {
    let (driver, latest, dispatcher) = (driver.clone(), latest.clone(), page.dispatcher());
    let (corpus, software) = (props.corpus.clone(), props.software);
    use_effect_with(
        (page.run, page.settings.trainable()),
        move |(run, trainable)| {
            let run = *run;
            let same = driver.borrow().as_ref().is_some_and(|d| d.run == run);
            if !same && *trainable {
                *driver.borrow_mut() = GptDriver::gpt(&latest.borrow(), corpus);
                start_gpu(&driver, software, run, &dispatcher);
            }
            let timer = ticker(driver, latest, dispatcher);
            move || drop(timer)
        },
    );
}

fn start_gpu(
    driver: &DriverCell,
    software: Option<bool>,
    run: u64,
    page: &UseReducerDispatcher<Page>,
) {
    match software {
        Some(software) => start_session(driver, software, move |d| d.run == run, || {}),
        None => page.dispatch(Action::NoGpu),
    }
}

fn ticker(
    driver: DriverCell,
    latest: Rc<RefCell<GptTrain>>,
    page: UseReducerDispatcher<Page>,
) -> Interval {
    let last_report = Rc::new(RefCell::new(f64::NEG_INFINITY));
    let hidden = Rc::new(RefCell::new(latest.borrow().hidden));
    Interval::new(TICK_MS, move || {
        let now = gpu_runtime::now_ms();
        let h = crate::visibility::page_hidden();
        if *hidden.borrow() != h {
            *hidden.borrow_mut() = h;
            page.dispatch(Action::Hidden(h));
        }
        let (actions, running) = {
            let Ok(mut guard) = driver.try_borrow_mut() else {
                return;
            };
            let Some(d) = guard.as_mut() else { return };
            let Ok(p) = latest.try_borrow() else { return };
            (d.tick(&p, now), p.running())
        };
        let report = !running || now - *last_report.borrow() >= REPORT_MS;
        for a in actions {
            if report || !matches!(a, Action::Steps { .. }) {
                page.dispatch(a);
            }
        }
        if report {
            *last_report.borrow_mut() = now;
        }
    })
}

/// What runs where: a software adapter or no WebGPU said plainly, or the GPU's failure.
fn adapter_note(ctx: &Ctx, p: &GptTrain) -> Html {
    let (key, class) = match &p.gpu {
        GpuState::Ready { software: true } => ("gpt.train.software", "hint"),
        GpuState::None => ("gpt.train.no_gpu", "message"),
        GpuState::Failed(_) => ("gpt.train.gpu_failed", "message error"),
        _ => return html! {},
    };
    let detail = match &p.gpu {
        GpuState::Failed(e) => e.as_str(),
        _ => "",
    };
    html! {
        <p id="gpt-train-adapter" class={class} data-gpu={key}>{ ctx.tf(key, &[("detail", detail)]) }</p>
    }
}

fn toolbar(ctx: &Ctx, p: &GptTrain, dispatch: &Callback<Action>) -> Html {
    let (label, action) = if p.playing {
        ("gpt.train.pause", Action::Pause)
    } else {
        ("gpt.train.train", Action::Train)
    };
    let toggle = dispatch.reform(move |_: MouseEvent| action.clone());
    let reset = dispatch.reform(|_: MouseEvent| Action::Reset);
    html! {
        <div class="toolbar gpt-train-toolbar">
            <button id="gpt-train-toggle" class="button primary" onclick={toggle}
                disabled={!p.settings.trainable()}>{ ctx.t(label) }</button>
            <button id="gpt-train-reset" class="button" onclick={reset}>{ ctx.t("gpt.train.reset") }</button>
        </div>
    }
}

/// One select of the offered values.
fn select(
    ctx: &Ctx,
    id: &str,
    label: &str,
    value: usize,
    options: &[usize],
    which: Setting,
    dispatch: &Callback<Action>,
) -> Html {
    let onchange = dispatch.reform(move |e: Event| {
        let v = e
            .target_dyn_into::<web_sys::HtmlSelectElement>()
            .map(|s| s.value())
            .unwrap_or_default();
        Action::Set(which, v)
    });
    html! {
        <label class="field">
            <span>{ ctx.t(label) }</span>
            <select id={id.to_string()} {onchange}>
                { for options.iter().map(|&o| html! {
                    <option value={o.to_string()} selected={o == value}>{ o.to_string() }</option>
                }) }
            </select>
        </label>
    }
}

fn settings(ctx: &Ctx, p: &GptTrain, longest: usize, dispatch: &Callback<Action>) -> Html {
    let s = &p.settings;
    let on_lr = dispatch.reform(|e: InputEvent| {
        let v = e
            .target_dyn_into::<web_sys::HtmlInputElement>()
            .map(|i| i.value())
            .unwrap_or_default();
        Action::Set(Setting::Lr, v)
    });
    let notes = s.notes(longest);
    html! {
        <>
            <div class="gpt-train-settings" id="gpt-train-settings">
                { select(ctx, "gpt-train-layers", "gpt.train.layers", s.layers, &LAYERS, Setting::Layers, dispatch) }
                { select(ctx, "gpt-train-heads", "gpt.train.heads", s.heads, &HEADS, Setting::Heads, dispatch) }
                { select(ctx, "gpt-train-width", "gpt.train.width", s.width, &WIDTHS, Setting::Width, dispatch) }
                { select(ctx, "gpt-train-context", "gpt.train.context", s.context, &CONTEXTS, Setting::Context, dispatch) }
                { select(ctx, "gpt-train-batch", "gpt.train.batch", s.batch, &BATCHES, Setting::Batch, dispatch) }
                <label class="field">
                    <span>{ ctx.t("gpt.train.lr") }</span>
                    <input id="gpt-train-lr" type="text" inputmode="decimal" size="7"
                        value={s.lr_text.clone()} oninput={on_lr} />
                </label>
            </div>
            <p class="hint">{ ctx.t("gpt.train.settings_hint") }</p>
            { for notes.iter().map(|n| {
                let args = n.args();
                let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let class = if n.blocks() { "message error" } else { "message" };
                html! {
                    <p class={class} role="alert" data-note={n.field()}>{ ctx.tf(n.key(), &args) }</p>
                }
            }) }
        </>
    }
}

/// Each side's step count and time a step, and where the losses stand.
fn progress(ctx: &Ctx, p: &GptTrain) -> Html {
    let gpu = match (&p.gpu, p.gpu_curve.is_empty() && p.gpu_steps == 0) {
        (GpuState::Ready { .. }, _) => ctx.tf(
            "gpt.train.gpu_steps",
            &[
                ("n", &numbers::count(p.gpu_steps)),
                ("ms", &p.gpu_ms.map_or_else(|| "–".to_string(), numbers::ms)),
            ],
        ),
        (GpuState::Starting, _) => ctx.t("gpt.train.gpu_starting").to_string(),
        _ => ctx.t("gpt.train.gpu_none").to_string(),
    };
    let cpu_ms = p.cpu_ms.map_or_else(|| "–".to_string(), numbers::ms);
    let cpu = ctx.tf(
        "gpt.train.cpu_steps",
        &[("n", &numbers::count(p.cpu_steps)), ("ms", &cpu_ms)],
    );
    let last = |c: &[Point]| c.last().map(|q| q.val.to_string());
    let first = |c: &[Point]| c.first().filter(|q| q.step == 0).map(|q| q.val.to_string());
    let at = |c: &[Point]| c.last().map(|q| q.step.to_string());
    let summary = match (p.untrained(), p.best(), p.baseline) {
        (Some(u), Some((b, _)), Some(base)) => Some(ctx.tf(
            "gpt.train.summary",
            &[
                ("untrained", &format!("{u:.3}")),
                ("best", &format!("{b:.3}")),
                ("bigram", &format!("{base:.3}")),
                ("share", &format!("{:.0}", 100.0 * b / base)),
            ],
        )),
        _ => None,
    };
    html! {
        <div class="gpt-train-progress">
            <p id="gpt-train-gpu" data-steps={p.gpu_steps.to_string()} data-val={last(&p.gpu_curve)}
                data-first={first(&p.gpu_curve)} data-val-step={at(&p.gpu_curve)}>{ gpu }</p>
            <p id="gpt-train-cpu" data-steps={p.cpu_steps.to_string()} data-val={last(&p.cpu_curve)}
                data-first={first(&p.cpu_curve)} data-val-step={at(&p.cpu_curve)}>{ cpu }</p>
            if let Some(s) = summary {
                <p id="gpt-train-summary" data-untrained={p.untrained().map(|u| u.to_string())}
                    data-baseline={p.baseline.map(|b| b.to_string())}>{ s }</p>
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct ChartProps {
    page: Rc<GptTrain>,
}

/// Training and validation loss of both sides, and the bigram's line.
#[function_component]
fn LossChart(props: &ChartProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let svg_ref = use_node_ref();
    let w = drawn_width(use_chart_width(svg_ref.clone()), 320.0, 200.0);
    let p = &props.page;
    let (steps, top) = extent(p);
    let top = nice_ceiling(top.max(1.0));
    let f = Frame {
        x0: 40.0,
        y0: 8.0,
        w: w - 48.0,
        h: 120.0,
        x_min: 0.0,
        x_max: steps as f64,
        y_min: 0.0,
        y_max: top,
    };
    let line = |c: &[Point], train: bool| {
        f.path(
            c.iter()
                .filter_map(|q| Some((q.step as f64, if train { q.train? } else { q.val }))),
        )
    };
    let base = p.baseline.map(|b| f.y(b));
    html! {
        <figure class="train-loss gpt-train-chart" id="gpt-train-chart"
            data-points={(p.gpu_curve.len() + p.cpu_curve.len()).to_string()}
            data-max-step={p.gpu_curve.iter().chain(&p.cpu_curve).map(|q| q.step).max().unwrap_or(0).to_string()}>
            <figcaption>
                <strong>{ ctx.t("gpt.train.chart") }</strong>{ " " }
                <span class="key gpu-train">{ ctx.t("gpt.train.key.gpu_train") }</span>
                <span class="key gpu-test">{ ctx.t("gpt.train.key.gpu_val") }</span>
                <span class="key cpu-train">{ ctx.t("gpt.train.key.cpu_train") }</span>
                <span class="key cpu-test">{ ctx.t("gpt.train.key.cpu_val") }</span>
                <span class="key bigram">{ ctx.t("gpt.train.key.bigram") }</span>
            </figcaption>
            <svg ref={svg_ref} viewBox={format!("0 0 {w} 150")} role="img" aria-label={ctx.t("gpt.train.chart")}>
                <line class="axis" x1="40" y1="128" x2={(w - 8.0).to_string()} y2="128" />
                <line class="axis" x1="40" y1="8" x2="40" y2="128" />
                <text x="36" y="16" text-anchor="end">{ format!("{top}") }</text>
                <text x="36" y="128" text-anchor="end">{ "0" }</text>
                <text x={(40.0 + (w - 48.0) / 2.0).to_string()} y="144" text-anchor="middle">{ ctx.t("gpt.train.steps") }</text>
                <text x={(w - 8.0).to_string()} y="144" text-anchor="end">{ numbers::count(steps) }</text>
                { base.map(|y| html! {
                    <line class="bigram" x1="40" y1={y.to_string()} x2={(w - 8.0).to_string()} y2={y.to_string()} />
                }) }
                <polyline class="gpu-train" points={line(&p.gpu_curve, true)} />
                <polyline class="gpu-test" points={line(&p.gpu_curve, false)} />
                <polyline class="cpu-train" points={line(&p.cpu_curve, true)} />
                <polyline class="cpu-test" points={line(&p.cpu_curve, false)} />
            </svg>
        </figure>
    }
}

/// The samples and the temperature slider.
fn samples(ctx: &Ctx, p: &GptTrain, dispatch: &Callback<Action>) -> Html {
    let on_t = dispatch.reform(|e: InputEvent| {
        let v = e
            .target_dyn_into::<web_sys::HtmlInputElement>()
            .and_then(|i| i.value().parse::<f32>().ok())
            .unwrap_or(0.8);
        Action::Temperature(v)
    });
    let t = format!("{:.1}", p.temperature);
    html! {
        <div class="gpt-train-samples">
            <h3>{ ctx.t("gpt.train.samples") }</h3>
            <label class="field gpt-train-temp">
                <span>{ ctx.tf("gpt.train.temperature", &[("t", &t)]) }</span>
                <input id="gpt-train-temp" type="range" min="0" max="2" step="0.1"
                    value={t.clone()} oninput={on_t} />
            </label>
            <p class="hint">{ ctx.t("gpt.train.temperature_hint") }</p>
            { match &p.samples {
                Some(s) => html! {
                    <div id="gpt-train-sampled" data-step={s.step.to_string()}
                        data-temperature={format!("{:.1}", s.temperature)}
                        data-decoder={s.writer.name()}>
                        <p class="hint">{ ctx.tf("gpt.train.sampled_at", &[
                            ("step", &numbers::count(s.step)), ("t", &format!("{:.1}", s.temperature)),
                        ]) }</p>
                        <ol class="gpt-train-texts">
                            { for s.texts.iter().map(|x| html! { <li>{ x.clone() }</li> }) }
                        </ol>
                        <p class="hint" id="gpt-train-writer">{ ctx.t(match s.writer {
                            Writer::KvCache => "gpt.train.writer.kv_cache",
                            Writer::FullForward => "gpt.train.writer.full_forward",
                            Writer::Cpu => "gpt.train.writer.cpu",
                        }) }</p>
                    </div>
                },
                None => html! { <p class="hint" id="gpt-train-no-samples">{ ctx.t("gpt.train.no_samples") }</p> },
            } }
        </div>
    }
}
