//! The CNN page (`#/cnn`, issue 24): a LeNet-style network learns the MNIST digits on the
//! visitor's GPU (`gpu_runtime::cnn_training`) while the tuned CPU trainer trains the same
//! network beside it. Every setting lives in the URL (`cnn::spec`); a bad one is named on the
//! page and replaced by its default.
//!
//! The page's state is `page_models::cnn::board::CnnPage` in a `use_reducer`; the engine is
//! `crate::train_driver::cnn`, driven by one timer ([`use_driver`]). These components only
//! render and dispatch.
//!
//! - `controls`: the settings (to the URL) and Play / Step / Reset.
//! - `output`: the notices, the rates and their ratio, the curves.
//! - `inside`: filters, a test digit's layers, the confusion matrix, the mistakes.
//! - `draw`: the drawing pad and its classification.
//! - `grey`: a grey image on a canvas.
//! - `kernels`: the step's kernels, what each computes and how its threads map, with
//!   "Edit this kernel".

mod controls;
mod draw;
mod grey;
mod inside;
mod kernels;
mod output;

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Interval;
use yew::prelude::*;

use crate::components::page_state::{PageModel, PageState};
use yew_router::prelude::*;

use cnn::data::Digits;
use page_models::cnn::board::{run_report, Action, CnnPage};
use page_models::cnn::evals::eval_data;
use page_models::cnn::settings::{check_limits, largest_batch, DeviceLimits, LimitError, Settings};

use super::keep::use_kept;
use super::{replace_query, Ctx};
use crate::digits_asset::{self, AssetError};
use crate::probe::WebGpuStatus;
use crate::train_driver::cnn::CnnDriver;
use crate::train_driver::start_session;

/// Milliseconds between engine ticks, and between the counts' reports to the page.
const TICK_MS: u32 = 16;
const REPORT_MS: f64 = 100.0;

pub type Page = PageState<CnnPage>;

impl PageModel for CnnPage {
    type Action = Action;
    fn next(&self, action: Action) -> Self {
        self.reduce(action)
    }
}

pub type DriverCell = Rc<RefCell<Option<CnnDriver>>>;

/// The page's network to keep for its return (the page's state, held, and its driver), if
/// worth keeping.
fn keep((driver, latest): &(DriverCell, Rc<RefCell<CnnPage>>)) -> Option<(CnnPage, DriverCell)> {
    let page = latest.borrow();
    let ours = driver
        .borrow()
        .as_ref()
        .is_some_and(|d| d.network == page.network);
    (ours && page.worth_keeping()).then(|| (page.left(), driver.clone()))
}

/// The engine's cells: the driver, the page as last rendered (the timer reads it) and the
/// redraw handle (for what the driver shows outside the page's model).
#[derive(Clone)]
struct Cells {
    driver: DriverCell,
    latest: Rc<RefCell<CnnPage>>,
    redraw: UseForceUpdateHandle,
}
/// Writes settings to the URL, from where they reach the page and both trainers.
pub type SetQuery = Callback<Vec<(&'static str, String)>>;

/// The digits: loading, loaded, or why not.
#[derive(Clone, PartialEq)]
pub enum Data {
    Loading,
    Ready(Rc<Digits>),
    Failed(AssetError),
}

/// What the page knows of WebGPU here: still probing, none, or an adapter (software or not)
/// with the limits that bound a network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Adapter {
    Checking,
    None,
    Some {
        software: bool,
        limits: DeviceLimits,
    },
}

impl Adapter {
    fn of(ctx: &Ctx) -> Self {
        match &ctx.webgpu {
            WebGpuStatus::Checking => Adapter::Checking,
            WebGpuStatus::Available(a) => {
                let limit = |name: &str| {
                    a.limits
                        .iter()
                        .find(|(n, _)| *n == name)
                        .and_then(|(_, v)| *v)
                };
                let d = DeviceLimits::DEFAULT;
                Adapter::Some {
                    software: a.is_software,
                    limits: DeviceLimits {
                        max_storage_buffer_binding_size: limit("maxStorageBufferBindingSize")
                            .map_or(d.max_storage_buffer_binding_size, |v| v as u64),
                        max_workgroups_per_dimension: limit("maxComputeWorkgroupsPerDimension")
                            .map_or(d.max_workgroups_per_dimension, |v| v as u32),
                    },
                }
            }
            _ => Adapter::None,
        }
    }

    fn limits(&self) -> Option<DeviceLimits> {
        match self {
            Adapter::Some { limits, .. } => Some(*limits),
            _ => None,
        }
    }
}

/// Fetches the digits once per page visit (the loader memoises across visits).
#[hook]
fn use_digits() -> Data {
    let data = use_state(|| Data::Loading);
    {
        let data = data.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                data.set(match digits_asset::load().await {
                    Ok(d) => Data::Ready(d),
                    Err(e) => Data::Failed(e),
                });
            });
        });
    }
    (*data).clone()
}

#[function_component]
pub fn Cnn() -> Html {
    let ctx = use_context::<Ctx>();
    let navigator = use_navigator();
    let redraw = use_force_update();
    // A network kept when the learner left (taken once per visit of the page).
    let (kept, (driver, latest)) = use_kept(
        |kept: Option<&(CnnPage, DriverCell)>| {
            let driver = kept.map_or_else(Default::default, |(_, d)| d.clone());
            (
                driver,
                Rc::new(RefCell::new(CnnPage::new(Default::default()))),
            )
        },
        keep,
    );
    let url_has_settings = ctx
        .as_ref()
        .is_some_and(|c| cnn::spec::PARAMS.iter().any(|k| c.query.get(k).is_some()));
    // Back by a link without settings (the navigation): the kept network's settings.
    let Settings { spec, errors } = match kept.as_ref() {
        Some((p, _)) if !url_has_settings => Settings {
            spec: p.spec.clone(),
            errors: Vec::new(),
        },
        _ => Settings::from_query(ctx.as_ref().map(|c| |k: &str| c.query.get(k))),
    };
    let page = {
        let (spec, kept) = (spec.clone(), kept.clone());
        use_reducer(move || match kept.as_ref() {
            Some((p, _)) => PageState(p.clone()),
            None => PageState(CnnPage::new(spec)),
        })
    };
    let data = use_digits();
    let adapter = ctx.as_ref().map_or(Adapter::Checking, Adapter::of);
    let limit = adapter.limits().and_then(|l| check_limits(&spec, &l).err());
    {
        let page = page.dispatcher();
        use_effect_with(spec.clone(), move |spec| {
            page.dispatch(Action::SettingsChanged(spec.clone()))
        });
    }
    *latest.borrow_mut() = page.0.clone();
    // Inside an embed, `getState` answers with how far training got.
    page_models::embed::note_work(page.0.work());
    let cells = Cells {
        driver: driver.clone(),
        latest: latest.clone(),
        redraw: redraw.clone(),
    };
    use_driver(&cells, &page, &data, adapter, limit.is_none());
    use_run_report(&page);
    {
        // Back by a link without settings: the address gets the kept network's settings.
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        let adopted = (kept.is_some() && !url_has_settings).then(|| spec.to_params());
        use_effect_with((), move |_| {
            if let (Some(pairs), Some(ctx), Some(nav)) = (adopted, ctx, nav) {
                let mut q = ctx.query.clone();
                for (k, v) in pairs {
                    q.set(k, &v);
                }
                replace_query(&nav, &ctx.route, &q);
            }
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let set_query: SetQuery = {
        let (ctx, nav) = (ctx.clone(), navigator.clone());
        Callback::from(move |pairs: Vec<(&'static str, String)>| {
            let mut q = ctx.query.clone();
            for (k, v) in pairs {
                q.set(k, &v);
            }
            if let Some(nav) = &nav {
                replace_query(nav, &ctx.route, &q);
            }
        })
    };
    let dispatch: Callback<Action> = {
        let page = page.dispatcher();
        Callback::from(move |a| page.dispatch(a))
    };
    let max_batch = spec
        .net()
        .ok()
        .and_then(|n| largest_batch(&n, &adapter.limits().unwrap_or(DeviceLimits::DEFAULT)))
        .unwrap_or(cnn::spec::MAX_BATCH);
    let guard = driver.borrow();
    let d = guard.as_ref().filter(|d| d.network == page.network);
    let version = d.map_or((false, false, 0), |d| match &d.gpu_params {
        Some(p) => (true, true, p.0),
        None => (true, false, d.cpu.step),
    });
    html! {
        <section class="page cnn">
            <h1>{ ctx.t("cnn.heading") }</h1>
            <p class="lead">{ ctx.t("cnn.lead") }</p>
            <p class="hint cnn-credit">{ ctx.linked("cnn.credit") }</p>
            <super::EmbedButton widget="cnn" />
            { output::notices(&ctx, &errors, &data, limit.as_ref(), &page) }
            { controls::toolbar(&ctx, &page, &dispatch, matches!(data, Data::Ready(_))) }
            <div class="cnn-grid">
                <controls::SettingsPanel spec={spec.clone()} lr_text={page.lr_text.clone()}
                    batch_text={page.batch_text.clone()} max_batch={max_batch}
                    set_query={set_query.clone()} dispatch={dispatch.clone()} />
                <output::Progress page={Rc::new(page.0.clone())} />
            </div>
            { inside::view(&ctx, d, &driver, &redraw) }
            <draw::DrawPad driver={driver.clone()} network={page.network} version={version} />
            { kernels::view(&ctx, spec.optimiser) }
        </section>
    }
}

/// Sends `run-finished` once Pause's steps have finished (an embed's report).
#[hook]
fn use_run_report(page: &UseReducerHandle<Page>) {
    let finished = page.finished.clone();
    let dispatcher = page.dispatcher();
    use_effect_with(finished, move |f| {
        if let Some(f) = f {
            page_models::embed::report(Ok(run_report(f)));
            dispatcher.dispatch(Action::ReportSent);
        }
    });
}

/// A new driver whenever the page starts a new network (a setting that restarts, Reset) and
/// the digits are in, its GPU session when WebGPU is here and the network fits, and the timer
/// that drives it; none while WebGPU is still being probed.
#[hook]
fn use_driver(
    cells: &Cells,
    page: &UseReducerHandle<Page>,
    data: &Data,
    adapter: Adapter,
    fits: bool,
) {
    let (cells, dispatcher) = (cells.clone(), page.dispatcher());
    let digits = match data {
        Data::Ready(d) => Some(d.clone()),
        _ => None,
    };
    use_effect_with(
        (page.network, digits, adapter, fits),
        move |(network, digits, adapter, fits)| {
            let interval = match (digits, adapter) {
                (Some(digits), a) if *a != Adapter::Checking => {
                    Some(start(&cells, &dispatcher, digits, *a, *fits, *network))
                }
                _ => None,
            };
            move || drop(interval)
        },
    );
}

/// Builds the driver of network `network`, asks for its GPU session and returns its timer.
fn start(
    cells: &Cells,
    page: &UseReducerDispatcher<Page>,
    digits: &Rc<Digits>,
    adapter: Adapter,
    fits: bool,
    network: u64,
) -> Interval {
    let Cells {
        driver,
        latest,
        redraw,
    } = cells;
    let now_page = latest.borrow().clone();
    let kept = driver
        .borrow()
        .as_ref()
        .is_some_and(|d| d.network == network);
    if !kept {
        let built = CnnDriver::cnn(&now_page, eval_data(digits, now_page.spec.seed));
        *driver.borrow_mut() = built.ok();
    }
    match adapter {
        _ if kept => {}
        Adapter::Some { software, .. } if fits && now_page.gpu_live() => {
            // The page hears of it at the driver's next tick (it may be away now).
            start_session(driver, software, move |d| d.network == network, || {});
        }
        Adapter::Some { .. } if !fits => page.dispatch(Action::GpuFailed {
            network,
            error: String::new(),
        }),
        Adapter::None => page.dispatch(Action::GpuUnavailable),
        _ => {}
    }
    let (driver, latest, redraw, page) =
        (driver.clone(), latest.clone(), redraw.clone(), page.clone());
    let last_report = Rc::new(RefCell::new(f64::NEG_INFINITY));
    // A kept page comes back held: the first tick shows it again and training resumes.
    let hidden = Rc::new(RefCell::new(latest.borrow().hidden));
    Interval::new(TICK_MS, move || {
        let now = gpu_runtime::now_ms();
        let h = crate::visibility::page_hidden();
        if *hidden.borrow() != h {
            *hidden.borrow_mut() = h;
            page.dispatch(Action::Hidden(h));
        }
        let tick = {
            let Ok(mut guard) = driver.try_borrow_mut() else {
                return;
            };
            let Some(d) = guard.as_mut() else { return };
            let Ok(p) = latest.try_borrow() else { return };
            // The learning rate changes live: both trainers take it at their next step.
            if d.spec.lr != p.spec.lr {
                d.set_lr(p.spec.lr);
            }
            (d.tick(&p, now), p.running())
        };
        let (tick, running) = tick;
        // Counts a few times a second while training; every tick otherwise, so a Pause
        // settles on the final counts as soon as the driver has seen it.
        let report = !running || now - *last_report.borrow() >= REPORT_MS;
        for a in tick.actions {
            let counts = matches!(a, Action::GpuSteps { .. } | Action::CpuSteps { .. });
            if report || !counts {
                page.dispatch(a);
            }
        }
        if report {
            *last_report.borrow_mut() = now;
        }
        if tick.changed {
            redraw.force_update();
        }
    })
}

/// A named error's text.
pub fn error_text(ctx: &Ctx, key: &str, args: &[(&'static str, String)]) -> String {
    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ctx.tf(key, &args)
}

/// A device-limit error's text, its buffer named in words.
pub fn limit_text(ctx: &Ctx, e: &LimitError) -> String {
    let mut args = e.args();
    for (k, v) in args.iter_mut() {
        if *k == "buffer" {
            *v = ctx.t(v).to_string();
        }
    }
    error_text(ctx, e.key(), &args)
}
