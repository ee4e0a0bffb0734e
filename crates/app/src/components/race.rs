//! Race → CPU vs GPU on the same work: the live race (`duel`), the scaling sweep (`sweep`) and
//! the check of an article's claim (`claim`). Settings (in the URL), the GPU runs and the checks
//! live in `page_models::race`; the CPU workers in `crate::race_workers`.

mod claim;
mod duel;
mod duel_view;
mod sweep;

use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use cpu_kernels::matmul::MatmulSize;
use cpu_kernels::matmul_variants::CpuVariant;
use cpu_kernels::verify::Precision;
use gpu_runtime::{Family, GpuError, KernelSpec, Progress};

use super::matmul_run::unavailable_reason;
use super::{replace_query, Ctx};
use crate::probe::WebGpuStatus;
use crate::race_workers::pool::{self, CpuError};
use crate::session;
use page_models::progress::{minutes_seconds, Left, ProgressClock};
use page_models::race::measure;
use page_models::race::params::{default_workers, ParamIssue, RaceParams, View};

/// Logical cores the browser reports (1 when it does not say).
pub(crate) fn hardware_concurrency() -> u32 {
    web_sys::window()
        .map(|w| w.navigator().hardware_concurrency() as u32)
        .unwrap_or(1)
        .max(1)
}

/// What the page settled on: the settings, the GPU stage that will really run (if any) and
/// what to tell the visitor about that choice.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub params: RaceParams,
    pub issues: Vec<ParamIssue>,
    pub kernel: Option<&'static KernelSpec>,
    /// Why the requested stage is not the one raced (or why there is no GPU side).
    pub gpu_note: Option<String>,
    pub software: bool,
    pub cores: u32,
}

impl PartialEq for Setup {
    fn eq(&self, o: &Self) -> bool {
        self.params == o.params
            && self.issues == o.issues
            && self.kernel.map(|k| k.id) == o.kernel.map(|k| k.id)
            && self.gpu_note == o.gpu_note
            && self.software == o.software
            && self.cores == o.cores
    }
}

impl Setup {
    /// Who a sweep or claim measurement runs: each of `single` on one worker, the SIMD kernel
    /// on every worker when there are several, and the GPU stage when there is one.
    pub(crate) fn contenders(&self, single: &[CpuVariant]) -> Vec<Contender> {
        let mut v: Vec<Contender> = single
            .iter()
            .map(|&variant| Contender::Cpu {
                variant,
                workers: 1,
            })
            .collect();
        if self.params.workers > 1 {
            v.push(Contender::Cpu {
                variant: CpuVariant::Simd,
                workers: self.params.workers,
            });
        }
        v.extend(self.kernel.map(Contender::Gpu));
        v
    }
}

/// Ladder stages this browser can run, in ladder order.
pub(crate) fn browser_stages(ctx: &Ctx) -> Vec<&'static KernelSpec> {
    KernelSpec::ladder(Family::Matmul)
        .map(|(_, k)| k)
        .filter(|k| unavailable_reason(ctx, k).is_none())
        .collect()
}

fn setup(ctx: &Ctx) -> Setup {
    let cores = hardware_concurrency();
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);
    let (params, issues) = RaceParams::parse(&ctx.query, default_workers(cores), software);
    let (kernel, gpu_note) = match &ctx.webgpu {
        WebGpuStatus::Available(_) => {
            let wanted = gpu_runtime::kernel(&params.gpu);
            match wanted.map(|k| (k, unavailable_reason(ctx, k))) {
                Some((k, None)) => (Some(k), None),
                other => {
                    // The fastest f32 stage that runs here instead.
                    let fallback = browser_stages(ctx)
                        .into_iter()
                        .rev()
                        .find(|k| k.precision == Precision::F32);
                    let why = other
                        .and_then(|(_, why)| why)
                        .unwrap_or_else(|| ctx.t("race.gpu.native_only").to_string());
                    let note = fallback.map(|f| {
                        ctx.tf(
                            "race.gpu.fallback",
                            &[("wanted", &params.gpu), ("why", &why), ("used", f.id)],
                        )
                    });
                    (fallback, note)
                }
            }
        }
        WebGpuStatus::Checking => (None, None),
        WebGpuStatus::Unavailable(_) => (None, Some(ctx.t("race.gpu.none").to_string())),
    };
    Setup {
        params,
        issues,
        kernel,
        gpu_note,
        software,
        cores,
    }
}

/// The embed widget of a view of the race page.
fn embed_widget(view: View) -> &'static str {
    match view {
        View::Conv => "conv-race",
        other => other.id(),
    }
}

/// Writes new settings into the URL.
pub(crate) fn write_params(ctx: &Ctx, navigator: &Option<Navigator>, params: &RaceParams) {
    if let Some(nav) = navigator {
        replace_query(nav, &ctx.route, &params.write(ctx.query.clone()));
    }
}

#[function_component]
pub fn Race() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let s = setup(&ctx);
    // The conv view's own settings (CPU variant, GPU stage) are named like the others.
    let conv_issues = if s.params.view == View::Conv {
        page_models::race::conv_params::parse(&ctx.query).1
    } else {
        Vec::new()
    };
    let s = Setup {
        issues: s.issues.iter().cloned().chain(conv_issues).collect(),
        ..s
    };
    let tabs = View::ALL.iter().map(|&v| {
        let mut p = s.params.clone();
        p.view = v;
        let href = format!("#/race?{}", p.write(ctx.query.clone()).encode());
        let label = ctx.t(&format!("race.view.{}", v.id()));
        html! {
            <li>
                <a href={href} data-view={v.id()}
                    aria-current={(v == s.params.view).then_some("page")}>{ label }</a>
            </li>
        }
    });
    let issues = s.issues.iter().map(|i| {
        html! {
            <li>{ ctx.tf("race.bad_param", &[("name", i.name), ("value", &i.value), ("used", &i.used)]) }</li>
        }
    });
    let probed = match &ctx.webgpu {
        WebGpuStatus::Checking => None,
        WebGpuStatus::Available(_) => Some("available"),
        WebGpuStatus::Unavailable(_) => Some("unavailable"),
    };
    html! {
        <section class="page race-page" data-webgpu={probed}>
            <h1>{ ctx.t("race.heading") }</h1>
            <p class="lead">{ ctx.t("race.intro") }</p>
            if !s.issues.is_empty() {
                <ul class="message error race-issues" role="alert" data-param-issues={s.issues.len().to_string()}>
                    { for issues }
                </ul>
            }
            <nav class="race-tabs" aria-label={ctx.t("race.views")}>
                <ul>{ for tabs }</ul>
            </nav>
            <super::EmbedButton widget={embed_widget(s.params.view)} />
            if let Some(note) = &s.gpu_note {
                <p class="message race-gpu-note" data-gpu-note="true">{ note.clone() }</p>
            }
            if s.software {
                <p class="note race-software">{ ctx.t("race.software_note") }</p>
            }
            { match s.params.view {
                View::Race => html! { <duel::Duel setup={Rc::new(s.clone())} /> },
                View::Sweep => html! { <sweep::Sweep setup={Rc::new(s.clone())} /> },
                View::Claim => html! { <claim::Claim setup={Rc::new(s.clone())} /> },
                View::Conv => html! { <duel::Duel setup={Rc::new(s.clone())} conv=true /> },
            } }
        </section>
    }
}

/// One contender of a sweep or claim measurement.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Contender {
    Cpu { variant: CpuVariant, workers: u32 },
    Gpu(&'static KernelSpec),
}

impl PartialEq for Contender {
    fn eq(&self, o: &Self) -> bool {
        match (self, o) {
            (Contender::Gpu(a), Contender::Gpu(b)) => a.id == b.id,
            _ => self.key() == o.key(),
        }
    }
}

impl Contender {
    pub fn label(&self, ctx: &Ctx) -> String {
        match self {
            Contender::Cpu { variant, workers } => ctx.tf(
                "race.contender.cpu",
                &[
                    ("variant", ctx.t(&format!("race.cpu.{}", variant.id()))),
                    ("workers", &workers.to_string()),
                ],
            ),
            Contender::Gpu(k) => ctx.tf("race.contender.gpu", &[("stage", ctx.t(k.title_key))]),
        }
    }

    /// A stable id for data attributes and CSS: `cpu-simd-4`, `gpu`.
    pub fn key(&self) -> String {
        match self {
            Contender::Cpu { variant, workers } => format!("cpu-{}-{workers}", variant.id()),
            Contender::Gpu(_) => "gpu".into(),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Contender::Gpu(_))
    }
}

/// How a measurement went wrong, for the visitor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MeasureError {
    Cancelled,
    Lost(String),
    Failed(String),
}

/// Runs one contender once on the given inputs (end-to-end time, as the visitor waits for it)
/// and verifies its result. Returns the time in ms and whether it verified. `progress` hears
/// 0 when the measured part starts (after the GPU's pipeline is compiled), then the fraction
/// done as chunks finish.
pub(crate) async fn measure_one(
    contender: Contender,
    size: MatmulSize,
    a: &[f32],
    b: &[f32],
    software: bool,
    cancel: &gpu_runtime::CancelToken,
    progress: Rc<dyn Fn(f64)>,
) -> Result<(f64, bool), MeasureError> {
    match contender {
        Contender::Cpu { variant, workers } => {
            progress(0.0);
            let run = pool::run_matmul(variant, workers, size, a, b, progress)
                .await
                .map_err(cpu_error)?;
            let verdict = measure::verify_one(size, a, b, &run.c, Precision::F32);
            Ok((run.total_ms, verdict.ok))
        }
        Contender::Gpu(kernel) => {
            let result = async {
                let (gpu, _) = session::gpu(software).await?;
                measure::prepare(&gpu, kernel).await?;
                let ctl = gpu_runtime::RunControl {
                    cancel: cancel.clone(),
                    progress: Some(Rc::new(move |p| match p {
                        // The run proper starts by waiting for earlier work (none here).
                        Progress::WaitingForQueue => progress(0.0),
                        Progress::Running { done, total } if total > 0.0 => progress(done / total),
                        Progress::Running { .. } => {}
                    })),
                    ..Default::default()
                };
                measure::run_gpu(&gpu, kernel, size, a, b, &ctl).await
            }
            .await;
            let run = result.map_err(gpu_error)?;
            let verdict = measure::verify_one(size, a, b, &run.c, kernel.precision);
            Ok((run.total_ms, verdict.ok))
        }
    }
}

pub(crate) fn cpu_error(e: CpuError) -> MeasureError {
    match e {
        CpuError::Cancelled => MeasureError::Cancelled,
        CpuError::Worker(m) => MeasureError::Failed(m),
    }
}

pub(crate) fn gpu_error(e: GpuError) -> MeasureError {
    match e {
        GpuError::Cancelled => MeasureError::Cancelled,
        GpuError::DeviceLost(m) => {
            session::forget();
            MeasureError::Lost(m)
        }
        other => MeasureError::Failed(other.to_string()),
    }
}

/// A time in ms as "1.23 ms" / "12.3 s" / "2.50 min".
pub(crate) fn duration(ms: f64) -> String {
    numbers::duration(ms / 1000.0)
}

/// A running measurement's "43 % · about 12 s left" (or estimating, or finishing).
pub(crate) fn progress_text(ctx: &Ctx, clock: &ProgressClock) -> String {
    let left = match clock.left() {
        Left::Estimating => ctx.t("race.left.estimating").to_string(),
        Left::Finishing => ctx.t("race.left.finishing").to_string(),
        Left::Ms(ms) => match minutes_seconds(ms) {
            (0, s) => ctx.tf("race.left.s", &[("s", &s.to_string())]),
            (min, s) => ctx.tf(
                "race.left.min",
                &[("min", &min.to_string()), ("s", &s.to_string())],
            ),
        },
    };
    ctx.tf(
        "race.progress_left",
        &[("pct", &clock.pct().to_string()), ("left", &left)],
    )
}

/// GFLOP/s of `flops` done in `ms`.
pub(crate) fn gflops(flops: f64, ms: f64) -> f64 {
    flops / (ms * 1e6)
}

/// The select options of a small integer setting.
pub(crate) fn worker_choices(cores: u32) -> Vec<u32> {
    let mut v: Vec<u32> = [1, 2, 4, 8, 16]
        .into_iter()
        .chain([cores.min(page_models::race::params::MAX_WORKERS)])
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
