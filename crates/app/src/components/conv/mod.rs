//! The conv page (`#/conv`): a picture (bundled, or the learner's own, decoded in the browser)
//! filtered by a classic or hand-made filter through one conv stage on the GPU, or by the CPU
//! reference without WebGPU. Renders and dispatches only; the logic is `crate::conv_page`.

use std::rc::Rc;

use cpu_kernels::conv as cref;
use gpu_runtime::conv::{run_conv_with, verify_conv, ConvError, ConvStage};
use gpu_runtime::{GpuError, RunControl, RunOptions};
use wasm_bindgen::JsCast;
use yew::prelude::*;
use yew_router::prelude::*;

use super::matmul_run::use_cancel_on_unmount;
use super::{replace_query, Ctx};
use crate::conv_layers::LayerSettings;
use crate::conv_page::{
    out_size, shape_error_args, stage_param, to_rgba, Action, Form, FormError, Image, Preset,
    RgbImage, Settings, FIELDS, STAGES,
};
use crate::probe::WebGpuStatus;

mod io;
mod layers;
mod small;

use crate::session;
use io::{decode, draw};

/// Seed of the verification's sample (only used above the full-check size).
const SEED: u64 = 7;

struct FormState(Form);

impl Reducible for FormState {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(FormState(self.0.apply(action)))
    }
}

/// Where the input picture came from.
#[derive(Clone, PartialEq)]
enum Source {
    Bundled(Image),
    /// The learner's file: its name, and its original size when it was scaled down.
    Own(String, Option<(u32, u32)>),
}

#[derive(Clone, PartialEq)]
enum Outcome {
    Idle,
    Running,
    Done(Rc<Done>),
    Failed(String),
}

#[derive(PartialEq)]
struct Done {
    image: RgbImage,
    offset: f32,
    ms: f64,
    /// `None` on the CPU path (the reference itself made the output).
    verified: Option<(bool, usize)>,
    stage: ConvStage,
}

/// Which of the page's views to show (an embed shows one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Views {
    /// The whole page.
    #[default]
    All,
    /// The picture filtered (embed `conv-filter`).
    Filter,
    /// The layers and their receptive field (embed `conv-field`).
    Field,
}

#[derive(Properties, PartialEq, Default)]
pub struct ConvProps {
    #[prop_or_default]
    pub views: Views,
}

#[function_component]
pub fn Conv(props: &ConvProps) -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let initial = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let (first, mut bad) = Settings::from_query(&initial);
    let (first_layer, bad_layer) = LayerSettings::from_query(&initial);
    bad.extend(bad_layer);
    let bad = use_state(|| bad);
    let layer = use_state(|| first_layer);
    let form = use_reducer(|| FormState(Form::new(first.clone())));
    let source = use_state(|| Source::Bundled(first.image));
    let own = use_state(|| None::<Rc<RgbImage>>);
    let upload_error = use_state(|| None::<String>);
    let outcome = use_state(|| Outcome::Idle);
    let runs = use_state(|| 0u32);
    let cancel = use_cancel_on_unmount();
    let input_canvas = use_node_ref();
    let output_canvas = use_node_ref();

    let input: Rc<RgbImage> = match (&*source, &*own) {
        (Source::Own(..), Some(img)) => img.clone(),
        _ => Rc::new(form.0.settings.image.pixels()),
    };
    {
        let (canvas, input) = (input_canvas.clone(), input.clone());
        use_effect_with(input, move |img| {
            draw(&canvas, img.width, img.height, &img.to_rgba())
        });
    }
    {
        let canvas = output_canvas.clone();
        use_effect_with((*outcome).clone(), move |o| {
            if let Outcome::Done(d) = o {
                draw(
                    &canvas,
                    d.image.width,
                    d.image.height,
                    &to_rgba(&d.image.data, d.offset),
                );
            }
        });
    }
    // An output made with other settings would be mislabelled.
    {
        let outcome = outcome.clone();
        use_effect_with(form.0.settings.clone(), move |_| outcome.set(Outcome::Idle));
    }
    // The URL follows every valid setting.
    {
        let (navigator, ctx, source) = (navigator.clone(), ctx.clone(), source.clone());
        use_effect_with((form.0.settings.clone(), *layer), move |(s, layer)| {
            if let (Some(nav), Some(ctx)) = (navigator, ctx) {
                let mut q = ctx.query.clone();
                let mut s = s.clone();
                if let Source::Bundled(i) = &*source {
                    s.image = *i;
                }
                s.write(&mut q);
                layer.write(&mut q);
                replace_query(&nav, &ctx.route, &q);
            }
        });
    }

    let on_file = {
        let (source, own, upload_error, outcome) = (
            source.clone(),
            own.clone(),
            upload_error.clone(),
            outcome.clone(),
        );
        Callback::from(move |file: web_sys::File| {
            let (source, own, upload_error, outcome) = (
                source.clone(),
                own.clone(),
                upload_error.clone(),
                outcome.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let name = file.name();
                match decode(&file).await {
                    Some((img, scaled)) => {
                        own.set(Some(Rc::new(img)));
                        source.set(Source::Own(name, scaled));
                        upload_error.set(None);
                        outcome.set(Outcome::Idle);
                    }
                    None => upload_error.set(Some(name)),
                }
            });
        })
    };
    // Paste anywhere on the page.
    {
        let on_file = on_file.clone();
        use_effect_with((), move |_| {
            let listener =
                gloo::events::EventListener::new(&gloo::utils::document(), "paste", move |e| {
                    let file = e
                        .dyn_ref::<web_sys::ClipboardEvent>()
                        .and_then(|e| e.clipboard_data())
                        .and_then(|d| d.files())
                        .and_then(|f| f.get(0));
                    if let Some(file) = file {
                        on_file.emit(file);
                    }
                });
            move || drop(listener)
        });
    }

    let Some(ctx) = ctx else {
        return html! {};
    };
    let settings = form.0.settings.clone();
    let parsed = form.0.parsed().cloned();
    let shape = settings.shape(input.width, input.height);
    let shape_error = shape.validate().err();
    let gpu = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let checking = matches!(ctx.webgpu, WebGpuStatus::Checking);
    let running = *outcome == Outcome::Running;
    let can_run = parsed.is_ok() && shape_error.is_none() && !checking && !running;

    let run = {
        let (outcome, runs, cancel, input) =
            (outcome.clone(), runs.clone(), cancel.clone(), input.clone());
        let settings = settings.clone();
        let lang = ctx.lang;
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if !can_run {
                return;
            }
            outcome.set(Outcome::Running);
            let token = gpu_runtime::CancelToken::new();
            *cancel.borrow_mut() = token.clone();
            let (outcome, runs, input, settings) = (
                outcome.clone(),
                runs.clone(),
                input.clone(),
                settings.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let result = filter(&settings, &input, gpu, token).await;
                crate::embed::report(match &result {
                    Ok(d) => Ok(filter_report(d)),
                    Err(e) => Err(error_text(lang, e)),
                });
                outcome.set(match result {
                    Ok(d) => Outcome::Done(Rc::new(d)),
                    Err(e) => Outcome::Failed(error_text(lang, &e)),
                });
                runs.set(*runs + 1);
            });
        })
    };

    let select = |id: &'static str,
                  label: &'static str,
                  options: Vec<(String, String, bool)>,
                  on: Callback<String>| {
        let onchange = Callback::from(move |e: Event| {
            let s: web_sys::HtmlSelectElement = e.target_unchecked_into();
            on.emit(s.value());
        });
        html! {
            <div class="field">
                <label for={id}>{ ctx.t(label) }</label>
                <select {id} {onchange}>
                    { for options.into_iter().map(|(value, text, selected)| html! {
                        <option {value} {selected}>{ text }</option>
                    }) }
                </select>
            </div>
        }
    };
    let image_value = match &*source {
        Source::Bundled(i) => i.id().to_string(),
        Source::Own(..) => "own".to_string(),
    };
    let mut image_options: Vec<(String, String, bool)> = Image::ALL
        .iter()
        .map(|i| {
            (
                i.id().to_string(),
                ctx.t(&format!("conv.image.{}", i.id())).to_string(),
                image_value == i.id(),
            )
        })
        .collect();
    if let Source::Own(name, _) = &*source {
        image_options.push(("own".into(), name.clone(), true));
    }
    let on_image = {
        let (form, source, outcome) = (form.dispatcher(), source.clone(), outcome.clone());
        Callback::from(move |v: String| {
            if let Some(i) = Image::ALL.into_iter().find(|i| i.id() == v) {
                source.set(Source::Bundled(i));
                outcome.set(Outcome::Idle);
                form.dispatch(Action::Image(i));
            }
        })
    };
    let on_preset = {
        let form = form.dispatcher();
        Callback::from(move |v: String| {
            if let Some(p) = Preset::ALL.into_iter().find(|p| p.id() == v) {
                form.dispatch(Action::Preset(p));
            }
        })
    };
    let on_side = {
        let form = form.dispatcher();
        Callback::from(move |v: String| {
            if let Ok(n) = v.parse() {
                form.dispatch(Action::Side(n));
            }
        })
    };
    let on_stage = {
        let form = form.dispatcher();
        Callback::from(move |v: String| {
            if let Some(s) = STAGES.into_iter().find(|s| stage_param(*s) == v) {
                form.dispatch(Action::Stage(s));
            }
        })
    };
    let on_pick = {
        let on_file = on_file.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|f| f.get(0)) {
                on_file.emit(f);
            }
            input.set_value("");
        })
    };
    let on_drop = {
        let on_file = on_file.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(f) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                on_file.emit(f);
            }
        })
    };
    let on_dragover = Callback::from(|e: DragEvent| e.prevent_default());

    let form_errors = parsed.as_ref().err().cloned().unwrap_or_default();
    let side = settings.side as usize;
    let grid = html! {
        <fieldset class={classes!("conv-grid", format!("side-{side}"))}>
            <legend>{ ctx.tf("conv.grid", &[("side", &side.to_string())]) }</legend>
            { for form.0.cells.iter().enumerate().map(|(i, cell)| {
                let bad = form_errors.contains(&FormError::Cell(i));
                let oninput = {
                    let form = form.dispatcher();
                    Callback::from(move |e: InputEvent| {
                        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                        form.dispatch(Action::Cell(i, input.value()));
                    })
                };
                let label = ctx.tf("conv.cell", &[("row", &(i / side + 1).to_string()), ("col", &(i % side + 1).to_string())]);
                html! {
                    <input type="text" inputmode="decimal" class={classes!(bad.then_some("invalid"))}
                        id={format!("conv-w{i}")} aria-label={label} aria-invalid={bad.to_string()}
                        value={cell.clone()} {oninput} />
                }
            }) }
        </fieldset>
    };
    let fields = FIELDS.iter().enumerate().map(|(i, &(name, lo, hi))| {
        let bad = form_errors.contains(&FormError::Field(i));
        let oninput = {
            let form = form.dispatcher();
            Callback::from(move |e: InputEvent| {
                let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                form.dispatch(Action::Field(i, input.value()));
            })
        };
        let id = format!("conv-{name}");
        html! {
            <div class={classes!("field", bad.then_some("invalid"))}>
                <label for={id.clone()}>{ ctx.t(&format!("conv.field.{name}")) }</label>
                <input id={id} type="text" inputmode="numeric" value={form.0.fields[i].clone()} {oninput}
                    aria-invalid={bad.to_string()} />
                if bad {
                    <p class="field-error" role="alert">{ ctx.tf("conv.error.field", &[
                        ("name", ctx.t(&format!("conv.field.{name}"))), ("lo", &lo.to_string()), ("hi", &hi.to_string())]) }</p>
                }
            </div>
        }
    });
    let formula = |axis: &str, input_len: u32| {
        let args = [
            ("axis", axis.to_string()),
            ("in", input_len.to_string()),
            ("pad", settings.pad.to_string()),
            ("dil", settings.dilation.to_string()),
            ("r", settings.side.to_string()),
            ("stride", settings.stride.to_string()),
            (
                "out",
                out_size(
                    input_len,
                    settings.pad,
                    settings.dilation,
                    settings.side,
                    settings.stride,
                )
                .map(|v| v.to_string())
                .unwrap_or_else(|| "—".into()),
            ),
        ];
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        html! { <p class="conv-formula"><code>{ ctx.tf("conv.formula", &args) }</code></p> }
    };
    let shape_message = shape_error.map(|e| {
        let (key, args) = shape_error_args(&e);
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ctx.tf(key, &args)
    });
    let stage_keys = settings.stage.text_keys();
    let show_filter = props.views != Views::Field;
    let show_field = props.views != Views::Filter;
    let on_layer = {
        let layer = layer.clone();
        Callback::from(move |l: LayerSettings| layer.set(l))
    };

    html! {
        <section class="page conv-page">
            <h1>{ ctx.t("conv.heading") }</h1>
            <p class="lead">{ ctx.t("conv.intro") }</p>
            if !bad.is_empty() {
                <div class="message error" role="alert" id="conv-url-errors">
                    { for bad.iter().map(|b| html! {
                        <p>{ ctx.tf("conv.error.url", &[("key", b.key), ("value", &b.value), ("default", &b.default)]) }</p>
                    }) }
                </div>
            }
            <form class="panel conv-controls" onsubmit={run} novalidate=true>
                <div class="conv-row">
                    { select("conv-image", "conv.image", image_options, on_image) }
                    <div class="field conv-drop" ondrop={on_drop} ondragover={on_dragover}>
                        <span class="conv-own-title">{ ctx.t("conv.own") }</span>
                        // The native input's button text is the browser's, not translated: it is
                        // hidden (still focusable) behind a translated label.
                        <input id="conv-file" class="conv-file" type="file" accept="image/*" onchange={on_pick} />
                        <label for="conv-file" class="button">{ ctx.t("conv.choose") }</label>
                        <p class="hint">{ ctx.t("conv.own_hint") }</p>
                    </div>
                </div>
                if let Some(name) = &*upload_error {
                    <p class="message error" role="alert" id="conv-upload-error">{ ctx.tf("conv.error.not_image", &[("name", name)]) }</p>
                }
                if let Source::Own(_, Some((w, h))) = &*source {
                    <p class="message" id="conv-scaled">{ ctx.tf("conv.scaled", &[
                        ("w", &w.to_string()), ("h", &h.to_string()),
                        ("sw", &input.width.to_string()), ("sh", &input.height.to_string())]) }</p>
                }
                <div class="conv-row">
                    { select("conv-filter", "conv.filter", Preset::ALL.iter().map(|p|
                        (p.id().to_string(), ctx.t(&format!("conv.filter.{}", p.id())).to_string(), settings.preset == *p)).collect(), on_preset) }
                    { select("conv-size", "conv.size", [3u32, 5].iter().map(|n|
                        (n.to_string(), format!("{n}×{n}"), settings.side == *n)).collect(), on_side) }
                    { select("conv-stage", "conv.stage", STAGES.iter().map(|s|
                        (stage_param(*s).to_string(), ctx.t(&s.text_keys()[0]).to_string(), settings.stage == *s)).collect(), on_stage) }
                </div>
                { grid }
                if form_errors.iter().any(|e| matches!(e, FormError::Cell(_))) {
                    <p class="message error" role="alert" id="conv-weight-error">{ ctx.t("conv.error.weight") }</p>
                }
                <div class="conv-row">{ for fields }</div>
                { formula("H", input.height) }
                { formula("W", input.width) }
                if let Some(m) = &shape_message {
                    <p class="message error" role="alert" id="conv-shape-error">{ m.clone() }</p>
                }
                <p class="summary">{ ctx.t(&stage_keys[1]) }{ " " }{ super::editor_page::edit_link(&ctx, settings.stage.id()) }</p>
                if gpu.is_none() && !checking {
                    <p class="message" id="conv-cpu-note">{ ctx.t("conv.cpu_note") }</p>
                }
                if show_filter {
                    <div class="buttons">
                        <button type="submit" class="button primary" id="conv-run" disabled={!can_run}>{ ctx.t("conv.run") }</button>
                    </div>
                }
            </form>
            if show_filter {
            <div class="conv-images">
                <figure>
                    <canvas ref={input_canvas} id="conv-input"></canvas>
                    <figcaption>{ ctx.tf("conv.input", &[("w", &input.width.to_string()), ("h", &input.height.to_string())]) }</figcaption>
                </figure>
                <figure>
                    <canvas ref={output_canvas} id="conv-output" class={classes!((!matches!(*outcome, Outcome::Done(_))).then_some("empty"))}></canvas>
                    <figcaption>{ result(&ctx, &outcome) }</figcaption>
                </figure>
            </div>
            <div class="conv-status" aria-live="polite" id="conv-result" data-runs={runs.to_string()}
                data-verified={match &*outcome { Outcome::Done(d) => match d.verified { Some((ok, _)) => ok.to_string(), None => "cpu".into() }, Outcome::Failed(_) => "error".into(), _ => String::new() }}>
            </div>
            if props.views == Views::All {
                <super::EmbedButton widget="conv-filter" />
            }
            }
            if show_field {
                <layers::Layers input={input.clone()} settings={settings.clone()} layer={*layer}
                    on_layer={on_layer} valid={parsed.is_ok()} />
                if props.views == Views::All {
                    <super::EmbedButton widget="conv-field" />
                }
            }
            if props.views == Views::All {
                <small::Small settings={settings.clone()} />
            }

        </section>
    }
}

fn result(ctx: &Ctx, outcome: &Outcome) -> Html {
    match outcome {
        Outcome::Idle => html! { { ctx.t("conv.idle") } },
        Outcome::Running => html! { { ctx.t("conv.running") } },
        Outcome::Failed(m) => {
            html! { <span class="message error" role="alert">{ m.clone() }</span> }
        }
        Outcome::Done(d) => {
            let size = [
                ("w", d.image.width.to_string()),
                ("h", d.image.height.to_string()),
                ("ms", format!("{:.2}", d.ms)),
            ];
            let size: Vec<(&str, &str)> = size.iter().map(|(k, v)| (*k, v.as_str())).collect();
            html! {
                <>
                    <span>{ ctx.tf(if d.verified.is_some() { "conv.output_gpu" } else { "conv.output_cpu" }, &size) }</span>
                    { " " }
                    { match d.verified {
                        Some((true, n)) => html! { <span class="badge ok" id="conv-badge">{ ctx.tf("conv.verified", &[("n", &n.to_string())]) }</span> },
                        Some((false, _)) => html! { <span class="badge bad" id="conv-badge">{ ctx.t("conv.mismatch") }</span> },
                        None => html! {},
                    } }
                    if d.verified.is_some() {
                        <br />
                        <span class="hint">{ ctx.t(&d.stage.text_keys()[0]) }</span>
                    }
                </>
            }
        }
    }
}

/// Filters on the GPU when there is one (then checks it against the CPU reference), else with
/// the CPU reference itself.
async fn filter(
    settings: &Settings,
    input: &RgbImage,
    gpu: Option<bool>,
    cancel: gpu_runtime::CancelToken,
) -> Result<Done, ConvError> {
    let shape = settings.shape(input.width, input.height);
    shape.validate().map_err(ConvError::Shape)?;
    let (p, q) = shape.out_hw();
    let f = settings.filter_tensor();
    let (data, ms, verified) = match gpu {
        Some(software) => {
            let (g, _) = session::gpu(software).await.map_err(ConvError::Gpu)?;
            let ctl = RunControl {
                cancel,
                ..Default::default()
            };
            let out = run_conv_with(
                &g,
                settings.stage,
                &[],
                &shape,
                &input.data,
                &f,
                &RunOptions::default(),
                &ctl,
            )
            .await;
            let out = match out {
                Err(ConvError::Gpu(GpuError::DeviceLost(e))) => {
                    session::forget();
                    return Err(ConvError::Gpu(GpuError::DeviceLost(e)));
                }
                other => other?,
            };
            let (verdict, checked) = verify_conv(&shape, &input.data, &f, &out.output, SEED);
            (
                out.output,
                out.timing.kernel_ms(),
                Some((verdict.ok, checked)),
            )
        }
        None => {
            let t0 = gpu_runtime::now_ms();
            let y = cref::reference(&shape, &input.data, &f).value;
            let ms = gpu_runtime::now_ms() - t0;
            (y.into_iter().map(|v| v as f32).collect(), ms, None)
        }
    };
    Ok(Done {
        image: RgbImage {
            width: q,
            height: p,
            data,
        },
        offset: settings.preset.offset(),
        ms,
        verified,
        stage: settings.stage,
    })
}

fn filter_report(d: &Done) -> crate::embed::Report {
    use crate::embed::Field;
    vec![
        ("stage", Field::Str(d.stage.id().into())),
        ("width", Field::Num(d.image.width as f64)),
        ("height", Field::Num(d.image.height as f64)),
        ("ms", Field::Num(d.ms)),
        (
            "verified",
            match d.verified {
                Some((ok, _)) => Field::Bool(ok),
                None => Field::Str("cpu".into()),
            },
        ),
        ("checked", Field::Num(d.verified.map_or(0, |v| v.1) as f64)),
    ]
}

fn error_text(lang: crate::i18n::Lang, e: &ConvError) -> String {
    let t = |k| crate::i18n::t(lang, k);
    match e {
        ConvError::Shape(s) => {
            let (key, args) = shape_error_args(s);
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            crate::i18n::tf(lang, key, &args)
        }
        ConvError::PatchTooLarge { .. } => t("conv.error.patch").into(),
        ConvError::BufferTooLarge { .. } | ConvError::TooManyWorkgroups { .. } => {
            t("conv.error.device").into()
        }
        ConvError::Gpu(GpuError::Cancelled) => t("conv.cancelled").into(),
        ConvError::Gpu(GpuError::DeviceLost(_)) => t("conv.error.lost").into(),
        _ => t("conv.error.gpu").into(),
    }
}
