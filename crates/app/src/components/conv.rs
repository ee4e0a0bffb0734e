//! The conv page (`#/conv`): a picture (bundled, or the learner's own, decoded in the browser)
//! filtered by a classic or hand-made filter through one conv stage on the GPU, or by the CPU
//! reference without WebGPU. Renders and dispatches only; the logic and the filter's state
//! (`Page`, one reducer) are `page_models::conv_page`, the layer view's `page_models::conv_layers`.

use std::rc::Rc;

use cpu_kernels::conv as cref;
use gpu_runtime::conv::{run_conv_with, verify_conv, ConvError};
use gpu_runtime::{GpuError, RunControl, RunOptions};
use wasm_bindgen::JsCast;
use yew::prelude::*;
use yew_router::prelude::*;

use super::run_lifecycle::use_run;
use super::{replace_query, Ctx};
use crate::probe::WebGpuStatus;
use page_models::conv_layers::LayerSettings;
use page_models::conv_page::{shape_error_args, Done, Page, PageAction, RgbImage, Settings};

mod controls;
mod io;
mod layers;
mod pictures;
mod small;

use crate::session;
use io::decode;

/// Seed of the verification's sample (only used above the full-check size).
const SEED: u64 = 7;

/// The page's state in a `use_reducer`.
struct PageState(Page);

impl Reducible for PageState {
    type Action = PageAction;
    fn reduce(self: Rc<Self>, action: PageAction) -> Rc<Self> {
        Rc::new(PageState(self.0.apply(action)))
    }
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
    let page = use_reducer(|| PageState(Page::new(first)));
    let runs = use_run::<()>(|| ());
    let input = page.0.input();
    // The URL follows every valid setting.
    {
        let (navigator, ctx) = (navigator.clone(), ctx.clone());
        use_effect_with((page.0.url_settings(), *layer), move |(s, layer)| {
            if let (Some(nav), Some(ctx)) = (navigator, ctx) {
                let mut q = ctx.query.clone();
                s.write(&mut q);
                layer.write(&mut q);
                replace_query(&nav, &ctx.route, &q);
            }
        });
    }

    let on_file = {
        let page = page.dispatcher();
        Callback::from(move |file: web_sys::File| {
            let page = page.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let name = file.name();
                page.dispatch(match decode(&file).await {
                    Some((img, scaled)) => PageAction::Own {
                        name,
                        image: Rc::new(img),
                        scaled,
                    },
                    None => PageAction::NotImage(name),
                });
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
    let settings = page.0.form.settings.clone();
    let gpu = match &ctx.webgpu {
        WebGpuStatus::Available(a) => Some(a.is_software),
        _ => None,
    };
    let checking = matches!(ctx.webgpu, WebGpuStatus::Checking);
    let can_run = page.0.can_run(&input, checking);

    let run = {
        let (page, runs, input) = (page.dispatcher(), runs.clone(), input.clone());
        let settings = settings.clone();
        let lang = ctx.lang;
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if !can_run {
                return;
            }
            page.dispatch(PageAction::Started);
            let run = runs.start(());
            let token = run.token().clone();
            let (page, input, settings) = (page.clone(), input.clone(), settings.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let result = filter(&settings, &input, gpu, token).await;
                // Left the page meanwhile: nothing is left to show it.
                if !run.finish() {
                    return;
                }
                page_models::embed::report(match &result {
                    Ok(d) => Ok(filter_report(d)),
                    Err(e) => Err(error_text(lang, e)),
                });
                page.dispatch(PageAction::Finished(
                    result.map(Rc::new).map_err(|e| error_text(lang, &e)),
                ));
            });
        })
    };
    let dispatch = page.dispatcher();
    let on_form = Callback::from(move |a| dispatch.dispatch(PageAction::Form(a)));
    let dispatch = page.dispatcher();
    let on_image = Callback::from(move |i| dispatch.dispatch(PageAction::Bundled(i)));
    let on_layer = {
        let layer = layer.clone();
        Callback::from(move |l: LayerSettings| layer.set(l))
    };
    let show_filter = props.views != Views::Field;
    let show_field = props.views != Views::Filter;

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
                <controls::PictureRow source={page.0.source.clone()} value={page.0.image_value()}
                    upload_error={page.0.upload_error.clone()} size={(input.width, input.height)}
                    {on_image} {on_file} />
                <controls::FilterControls form={page.0.form.clone()} on_form={on_form.clone()} />
                <controls::Arithmetic form={page.0.form.clone()} {on_form} size={(input.width, input.height)} />
                <p class="summary">{ ctx.t(&settings.stage.text_keys()[1]) }{ " " }{ super::edit_link::edit_link(&ctx, settings.stage.id()) }</p>
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
                <pictures::Pictures input={input.clone()} outcome={page.0.outcome.clone()} runs={page.0.runs} />
                if props.views == Views::All {
                    <super::EmbedButton widget="conv-filter" />
                }
            }
            if show_field {
                <layers::Layers input={input.clone()} settings={settings.clone()} layer={*layer}
                    on_layer={on_layer} valid={page.0.form.parsed().is_ok()} />
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

fn filter_report(d: &Done) -> page_models::embed::Report {
    use page_models::embed::Field;
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
