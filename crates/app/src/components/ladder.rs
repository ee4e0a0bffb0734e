//! Kernels → the matmul optimisation ladder: the stages, each with its explanation, its WGSL
//! (lines changed since the previous stage marked) and a Run widget; and "Run all" with
//! progress, Cancel and a GFLOP/s bar chart. Stage and sizes live in the URL.

use std::rc::Rc;

use yew::prelude::*;

use gpu_runtime::{GpuError, Progress, RunControl, RunOptions, VerifiedRun};

use super::kernel_run::{run_stage_verified, stage_unavailable, KernelRun, RunError};
use super::run_lifecycle::{use_run, Run};
use super::Ctx;
use crate::components::chart_width::use_chart_width;
use crate::probe::WebGpuStatus;
use crate::session;
use page_models::chart;
use page_models::run_family::{family_from_query, Problem, RunFamily, Stage};
use page_models::source_view::{changed_lines, highlight_line};

/// Ends each source line inside the <pre>, so copying the code keeps its line breaks.
const NEWLINE: &str = "\n";

/// `#/kernels?…` with `stage` set, other parameters kept.
fn stage_href(ctx: &Ctx, id: &str) -> String {
    format!("#/kernels?{}", ctx.query.clone().with("stage", id).encode())
}

/// `#/kernels?…` for another family: only the language is kept (the sizes mean other things).
fn family_href(ctx: &Ctx, family: RunFamily) -> String {
    let mut q = page_models::query::Query::default().with("lang", ctx.lang.code());
    if family != RunFamily::Matmul {
        q.set("family", family.id());
    }
    format!("#/kernels?{}", q.encode())
}

#[function_component]
pub fn Ladder() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let (family, bad_family) = match family_from_query(&ctx.query) {
        Ok(f) => (f, None),
        Err(name) => (RunFamily::Matmul, Some(name)),
    };
    let all = family.stages();
    let requested = ctx.query.get("stage");
    let found = requested.and_then(|id| family.stage(id));
    let Some(&first) = all.first() else {
        return html! {};
    };
    let (number, stage) = found.unwrap_or(first);
    let unknown = requested.filter(|_| found.is_none()).map(|name| {
        let name: String = name.chars().take(40).collect();
        html! {
            <p class="message error" role="alert">{ ctx.tf("ladder.unknown_stage", &[("name", &name)]) }</p>
        }
    });
    let unknown_family = bad_family.map(|name| {
        html! {
            <p class="message error" role="alert" data-bad-family="true">{ ctx.tf("ladder.unknown_family", &[("name", &name)]) }</p>
        }
    });

    let list = all.iter().map(|(n, k)| {
        let available = stage_unavailable(&ctx, k).is_none();
        html! {
            <li>
                <a href={stage_href(&ctx, k.id())} data-stage={k.id()}
                    aria-current={(k.id() == stage.id()).then_some("page")}>
                    <span class="stage-n">{ *n }</span>
                    <span class="stage-title">{ ctx.t(&k.title_key()) }</span>
                    <span class={classes!("badge", if available { "ok" } else { "off" })}>
                        { ctx.t(if available { "ladder.available" } else { "ladder.unavailable" }) }
                    </span>
                </a>
            </li>
        }
    });
    let families = RunFamily::ALL.iter().map(|&f| {
        html! {
            <a class={classes!("family-tab", (f == family).then_some("active"))} href={family_href(&ctx, f)}
                data-family={f.id()} aria-current={(f == family).then_some("page")}>
                { ctx.t(f.name_key()) }
            </a>
        }
    });

    html! {
        <section class="ladder" aria-labelledby="ladder-heading" data-family={family.id()}>
            <nav class="family-tabs" aria-label={ctx.t("ladder.families")}>{ for families }</nav>
            <h2 id="ladder-heading">{ ctx.t(family.heading_key()) }</h2>
            { for unknown_family }
            { for unknown }
            <div class="ladder-layout">
                <nav class="stage-list" aria-label={ctx.t("ladder.stages")}>
                    <ol>{ for list }</ol>
                </nav>
                <div class="stage-detail" data-current-stage={stage.id()}>
                    <h3>
                        { ctx.tf("ladder.stage_title", &[("n", &number.to_string()), ("title", ctx.t(&stage.title_key()))]) }
                    </h3>
                    <p class="summary">{ ctx.t(&stage.summary_key()) }</p>
                    <h4>{ ctx.t("ladder.why") }</h4>
                    <p class="why">{ ctx.linked(&stage.why_key()) }</p>
                    <KernelRun key={family.id()} family={family} stage_id={stage.id()} compact=true />
                    <SourceView family={family} stage_id={stage.id()} />
                </div>
            </div>
            <RunAll key={family.id()} family={family} />
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct SourceProps {
    family: RunFamily,
    stage_id: AttrValue,
}

/// One kernel's source, each line marked when it differs from the previous stage's.
type Listing = (&'static str, Vec<(String, bool)>);

#[function_component]
fn SourceView(props: &SourceProps) -> Html {
    let ctx = use_context::<Ctx>();
    // The diff is recomputed only when the stage changes.
    let listings = use_memo((props.family, props.stage_id.clone()), |(family, id)| {
        let Some((_, stage)) = family.stage(id) else {
            return (Vec::<Listing>::new(), false);
        };
        let previous = family.previous(&stage).and_then(|p| p.main_kernel());
        let listings = stage
            .kernels()
            .into_iter()
            .enumerate()
            .map(|(i, k)| {
                let src = k.wgsl();
                // The first kernel is compared with the previous stage's first kernel.
                let marks = match previous.filter(|_| i == 0) {
                    Some(p) => changed_lines(&p.wgsl(), &src),
                    None => vec![false; src.lines().count()],
                };
                let lines = src
                    .lines()
                    .zip(marks)
                    .map(|(l, c)| (l.to_string(), c))
                    .collect();
                (k.source_path, lines)
            })
            .collect();
        (listings, previous.is_some())
    });
    let Some(ctx) = ctx else {
        return html! {};
    };
    let (listings, has_previous) = (&listings.0, listings.1);
    let edit = (props.family == RunFamily::Matmul).then(|| html! {
        <p><a class="button" href={format!("#/editor?lang={}&stage={}", ctx.lang.code(), props.stage_id)}>{ ctx.t("editor.edit_this") }</a></p>
    });
    html! {
        <div class="source-view">
            { for listings.iter().enumerate().map(|(i, (path, lines))| html! {
                <>
                    <h4>{ ctx.t("ladder.source") }{ " — " }<code>{ *path }</code></h4>
                    if i == 0 {
                        { for edit.clone() }
                        <p class="legend">
                            { ctx.t(if has_previous { "ladder.changed_legend" } else { "ladder.first_legend" }) }
                            { " " }{ ctx.t("ladder.source_comments") }
                        </p>
                    }
                    <pre class="source" tabindex="0"><code>
                        { for lines.iter().enumerate().map(|(i, (line, changed))| html! {
                            <span class={classes!("line", changed.then_some("changed"))}>
                                <span class="ln" aria-hidden="true">{ i + 1 }</span>
                                { for highlight_line(line).into_iter().map(|(tok, text)| html! {
                                    <span class={tok.class()}>{ text }</span>
                                }) }
                                { NEWLINE }
                            </span>
                        }) }
                    </code></pre>
                </>
            }) }
        </div>
    }
}

/// One stage's line in "Run all".
#[derive(Clone, Debug, PartialEq)]
enum RowState {
    Pending,
    Skipped(String),
    Done(Box<VerifiedRun>),
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Notice {
    Cancelled,
    Lost(String),
}

#[derive(Properties, PartialEq)]
struct RunAllProps {
    family: RunFamily,
}

/// Why stage `k` cannot run at `size` here (a missing feature, a limit), in the page's
/// language; None when it can.
fn skip_reason(ctx: &Ctx, k: &Stage, size: &Problem) -> Option<String> {
    let refused = super::kernel_run::adapter_limits(ctx)
        .as_ref()
        .and_then(|l| page_models::run_family::check_limits(k, size, l))
        .map(|e| super::kernel_run::limit_message(ctx, &e));
    stage_unavailable(ctx, k).or(refused)
}

/// Each stage of `family` at `size`: pending, or skipped with why.
fn plan_rows(ctx: &Ctx, family: RunFamily, size: &Problem) -> Vec<(usize, Stage, RowState)> {
    family
        .stages()
        .into_iter()
        .map(|(n, k)| {
            let state = match skip_reason(ctx, &k, size) {
                Some(why) => RowState::Skipped(why),
                None => RowState::Pending,
            };
            (n, k, state)
        })
        .collect()
}

/// Where a Run all shows what it does: the table, the count done, the notice, the runs.
#[derive(Clone)]
struct RunAllView {
    rows: UseStateHandle<Vec<(usize, Stage, RowState)>>,
    progress: UseStateHandle<Option<(usize, usize)>>,
    notice: UseStateHandle<Option<Notice>>,
    finished: UseStateHandle<u32>,
    stage_progress: UseStateHandle<Option<Progress>>,
}

impl RunAllView {
    /// Runs each pending stage in turn (one warm-up, three timed repetitions) until the end, a
    /// cancel or a lost device, then tells an embed's host how it ended.
    async fn run(
        self,
        run: Run<Problem>,
        mut table: Vec<(usize, Stage, RowState)>,
        size: Problem,
        software: bool,
    ) {
        let RunAllView {
            rows,
            progress,
            notice,
            finished,
            stage_progress,
        } = self;
        let flag = run.token().clone();
        let ctl: RunControl = run.control(Some({
            let stage_progress = stage_progress.clone();
            Rc::new(move |p| stage_progress.set(Some(p)))
        }));
        let total = table.iter().filter(|r| r.2 == RowState::Pending).count();
        let opts = RunOptions {
            warmup: 1,
            repetitions: 3,
        };
        let mut done = 0;
        for i in 0..table.len() {
            if table[i].2 != RowState::Pending {
                continue;
            }
            if flag.is_cancelled() {
                notice.set(Some(Notice::Cancelled));
                break;
            }
            progress.set(Some((done + 1, total)));
            stage_progress.set(None);
            let kernel = table[i].1;
            let result = async {
                let (gpu, replaced_lost) = session::gpu(software).await?;
                if replaced_lost && done > 0 {
                    // The device went away between two stages: stop, as for a loss
                    // during a stage, rather than mixing two devices in one chart.
                    return Err(RunError::Gpu(GpuError::DeviceLost("between stages".into())));
                }
                run_stage_verified(&gpu, &kernel, &size, 1, &opts, &ctl).await
            }
            .await;
            match result {
                // Stages finished before the cancel stay in the table.
                Err(RunError::Gpu(GpuError::Cancelled)) => {
                    notice.set(Some(Notice::Cancelled));
                    break;
                }
                Ok(v) => table[i].2 = RowState::Done(Box::new(v)),
                Err(RunError::Gpu(GpuError::DeviceLost(e))) => {
                    session::forget();
                    notice.set(Some(Notice::Lost(e)));
                    break;
                }
                Err(RunError::Gpu(e)) => table[i].2 = RowState::Failed(e.to_string()),
                Err(RunError::Conv(e)) => table[i].2 = RowState::Failed(e.to_string()),
            }
            done += 1;
            rows.set(table.clone());
        }
        // An embed's host hears how the whole Run all ended, as after a single run.
        // A cancel or a lost device leaves the stage it stopped, and those after it,
        // pending.
        let ended_early = table.iter().any(|r| r.2 == RowState::Pending);
        let report: Vec<(&str, page_models::embed::RunAllRow)> = table
            .iter()
            .map(|(_, k, state)| {
                use page_models::embed::RunAllRow;
                let row = match state {
                    RowState::Done(v) => RunAllRow::Done(v),
                    RowState::Skipped(why) => RunAllRow::Skipped(why),
                    RowState::Failed(e) => RunAllRow::Failed(e),
                    RowState::Pending => RunAllRow::NotRun,
                };
                (k.id(), row)
            })
            .collect();
        page_models::embed::report(Ok(page_models::embed::run_all_report(
            &report,
            &size,
            ended_early,
        )));
        rows.set(table);
        progress.set(None);
        finished.set(*finished + 1);
        run.finish();
    }
}

/// The GFLOP/s chart of a Run all measured at `shape`, one bar per stage.
fn run_all_chart(
    ctx: &Ctx,
    rows: &[(usize, Stage, RowState)],
    shape: &str,
    runs: u32,
    (chart_ref, chart_w): (&NodeRef, Option<f64>),
) -> Html {
    let layout = chart::Layout::at(chart_w);
    let values: Vec<f64> = rows
        .iter()
        .map(|(_, _, st)| match st {
            RowState::Done(v) if v.verdict.ok => v.gflops(),
            _ => f64::NAN,
        })
        .collect();
    let bars = chart::bars(&values, &layout);
    let value_anchor = if layout.stacked { "end" } else { "start" };
    let chart_rows = rows.iter().zip(&bars).map(|((n, k, state), bar)| {
        let (value, class) = match state {
            RowState::Pending => (String::new(), "pending"),
            RowState::Skipped(_) => (ctx.t("ladder.skipped").to_string(), "skipped"),
            RowState::Failed(_) => (ctx.t("ladder.error_badge").to_string(), "failed"),
            RowState::Done(v) if v.verdict.ok => (
                format!("{} · {}", numbers::rate(v.gflops()), ctx.t("ladder.verified_badge")),
                "verified",
            ),
            RowState::Done(_) => (ctx.t("ladder.failed_badge").to_string(), "failed"),
        };
        html! {
            <g class={classes!("row", class)} data-stage={k.id()}>
                <text x="0" y={bar.label_y.to_string()} class="label">
                    { format!("{n}. {}", ctx.t(&k.title_key())) }
                </text>
                <rect x={bar.x.to_string()} y={bar.y.to_string()}
                    width={bar.width.to_string()} height={bar.height.to_string()} rx="3" />
                <text x={layout.value_x().to_string()} y={bar.value_y.to_string()} text-anchor={value_anchor} class="value">
                    { value }
                </text>
            </g>
        }
    });
    html! {
        <figure class="chart" data-runs={runs.to_string()}>
            <figcaption>{ ctx.tf("ladder.chart_title", &[("shape", shape)]) }</figcaption>
            <svg ref={chart_ref.clone()} viewBox={format!("0 0 {} {}", layout.width, layout.height(rows.len()))}
                role="img" aria-label={ctx.tf("ladder.chart_title", &[("shape", shape)])}>
                { for chart_rows }
            </svg>
        </figure>
    }
}

/// Why stages failed and why stages were skipped (the conv ladder's 1×1 stage at a 3×3 shape,
/// a missing feature). A skip's reason is said again in the page's language (the learner may
/// have switched since the run, at `size`, planned its rows).
fn run_all_reasons(ctx: &Ctx, rows: &[(usize, Stage, RowState)], size: Option<&Problem>) -> Html {
    let failures = rows.iter().filter_map(|(n, k, st)| match st {
        RowState::Failed(e) => Some(html! {
            <li>{ format!("{n}. {}: ", ctx.t(&k.title_key())) }{ e.clone() }</li>
        }),
        _ => None,
    });
    let mut skipped = rows
        .iter()
        .filter_map(|(n, k, st)| match st {
            RowState::Skipped(why) => Some(html! {
                <li data-stage={k.id()}>
                    { format!("{n}. {}: ", ctx.t(&k.title_key())) }
                    { size.and_then(|s| skip_reason(ctx, k, s)).unwrap_or_else(|| why.clone()) }
                </li>
            }),
            _ => None,
        })
        .peekable();
    html! {
        <>
            <ul class="failures">{ for failures }</ul>
            if skipped.peek().is_some() {
                <ul class="skipped-reasons" aria-label={ctx.t("ladder.skipped_title")}>{ for skipped }</ul>
            }
        </>
    }
}

#[function_component]
fn RunAll(props: &RunAllProps) -> Html {
    let ctx = use_context::<Ctx>();
    let family = props.family;
    let view = RunAllView {
        rows: use_state(Vec::<(usize, Stage, RowState)>::new),
        progress: use_state(|| None::<(usize, usize)>),
        notice: use_state(|| None::<Notice>),
        finished: use_state(|| 0u32),
        stage_progress: use_state(|| None::<Progress>),
    };
    // Leaving the page cancels the run; its last settings are the problem the chart was
    // measured at (the fields may have changed since).
    let runs = use_run::<Problem>(|| {});
    let chart_ref = use_node_ref();
    let chart_w = use_chart_width(chart_ref.clone());
    let Some(ctx) = ctx else {
        return html! {};
    };
    let size = family.problem_from_query(&ctx.query);
    let running = view.progress.is_some();
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);

    let start = {
        let (view, runs, ctx) = (view.clone(), runs.clone(), ctx.clone());
        Callback::from(move |_| {
            let Some(size) = size else { return };
            let run = runs.start(size);
            view.notice.set(None);
            let table = plan_rows(&ctx, family, &size);
            let total = table.iter().filter(|r| r.2 == RowState::Pending).count();
            view.rows.set(table.clone());
            view.progress.set(Some((0, total)));
            wasm_bindgen_futures::spawn_local(view.clone().run(run, table, size, software));
        })
    };
    // The run ends itself, with the Cancelled notice, before its next stage or submission.
    let stop = {
        let runs = runs.clone();
        Callback::from(move |_| runs.token().cancel())
    };

    let shape = runs
        .last_settings()
        .map(|p| p.chart_shape())
        .unwrap_or_default();
    let rows = &*view.rows;
    html! {
        <section class="panel run-all" aria-labelledby="run-all-heading">
            <h3 id="run-all-heading">{ ctx.t("ladder.run_all") }</h3>
            <p>{ ctx.t(family.run_all_intro_key()) }</p>
            <div class="run-all-controls">
                <button type="button" class="button primary" id="run-all-button"
                    disabled={running || size.is_none() || !has_gpu} onclick={start}>
                    { ctx.t("ladder.run_all") }
                </button>
                <button type="button" class="button" id="cancel-button" disabled={!running} onclick={stop}>
                    { ctx.t("ladder.cancel") }
                </button>
                if let Some((done, total)) = *view.progress {
                    <progress max={total.to_string()} value={done.to_string()}></progress>
                    <span class="progress-text">
                        { ctx.tf("ladder.progress", &[("done", &done.to_string()), ("total", &total.to_string())]) }
                    </span>
                    { super::kernel_run::progress_view(&ctx, *view.stage_progress) }
                }
            </div>
            if size.is_none() {
                <p class="message error">{ ctx.t("ladder.fix_sizes") }</p>
            }
            if let Some(n) = &*view.notice {
                <p class="message" role="status" data-notice={match n { Notice::Cancelled => "cancelled", Notice::Lost(_) => "lost" }}>
                    { match n {
                        Notice::Cancelled => ctx.t("ladder.cancelled").to_string(),
                        Notice::Lost(e) => ctx.tf("ladder.lost", &[("error", e)]),
                    } }
                </p>
            }
            if !rows.is_empty() {
                { run_all_chart(&ctx, rows, &shape, *view.finished, (&chart_ref, chart_w)) }
                { run_all_reasons(&ctx, rows, runs.last_settings().as_ref()) }
                if software {
                    <p class="note">{ ctx.t("ladder.software_note") }</p>
                }
                <p class="note">{ ctx.linked("ladder.peak_unknown") }</p>
            }
        </section>
    }
}
