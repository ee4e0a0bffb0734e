//! The live race's state as shown ([`Model`], [`Reading`]) and its panels: the settings fields
//! (N or the conv shape, CPU variant, workers, GPU stage), the two lanes and the results with
//! their breakdowns. Plain functions of the view's state; the decisions are
//! `page_models::race::duel`'s, the component and its race task `duel.rs`'s.

use gloo::timers::callback::Interval;
use yew::prelude::*;

use cpu_kernels::conv_variants::CpuConvVariant;
use cpu_kernels::matmul_variants::CpuVariant;
use gpu_runtime::conv::ConvStage;
use gpu_runtime::SizeError;

use super::{browser_stages, duration, gflops, worker_choices, Setup};
use crate::components::kernel_run::{field_message, limit_message, shape_message};
use crate::components::Ctx;
use crate::race_workers::pool::CpuRun;
use page_models::race::conv_params::{self, ConvRaceParams};
use page_models::race::duel::{lesson_key, winner, Job, Lane, LaneShown, Phase};
use page_models::race::measure::{Checks, GpuRun};
use page_models::race::params::{Workload, MAX_RACE_N};
use page_models::run_family::{LimitError, Parsed};

/// Everything the race view shows; mutated by the race task and the workers' messages. Which
/// race is current, and whether one runs, is the view's [`RunHandle`]'s.
#[derive(Default)]
pub(super) struct Model {
    pub phase: Phase,
    pub work: Option<Workload>,
    pub started_at: f64,
    pub cpu: Lane,
    pub gpu: Lane,
    pub cpu_run: Option<CpuRun>,
    pub gpu_run: Option<GpuRun>,
    /// Worker start-up and pipeline compilation before the start (not part of the race).
    pub cpu_setup_ms: f64,
    pub gpu_setup_ms: Option<f64>,
    pub gpu_lost: bool,
    /// The device had been lost before this race and was replaced during set-up.
    pub gpu_recovered: bool,
    pub checks: Option<Checks>,
    /// Races finished (for tests and screen readers).
    pub finished: u32,
    /// GPU sides still running, this race's or a cancelled one's (they stop at their next
    /// submission boundary); shown as `data-gpu-idle` so a test can tell when a cancelled
    /// race has really stopped submitting work.
    pub gpu_sides: u32,
    /// How long the start waited for earlier GPU work to drain.
    pub gpu_waited_ms: Option<f64>,
    pub ticker: Option<Interval>,
    /// Whether the page was hidden while the race ran: its times are then unreliable.
    pub hidden: crate::visibility::HiddenWatch,
}

/// What the fields say now: N, the conv settings and shape, the conv stage that would run and
/// what stops it, and the race a Start would run (None: the fields must be fixed first).
pub(super) struct Reading {
    pub parsed_n: Result<u32, SizeError>,
    pub conv_p: ConvRaceParams,
    pub conv_parsed: Parsed,
    pub conv_stage: Option<ConvStage>,
    pub conv_limit: Option<LimitError>,
    pub job: Option<Job>,
}

/// What the settings form and the lanes are drawn from.
pub(super) struct Controls<'a> {
    pub ctx: &'a Ctx,
    pub setup: &'a Setup,
    pub conv: bool,
    pub busy: bool,
    pub reading: &'a Reading,
    pub n_text: &'a str,
    pub conv_text: &'a [String],
    pub on_n: Callback<InputEvent>,
    pub on_select: &'a dyn Fn(&'static str) -> Callback<Event>,
    pub on_conv_field: &'a dyn Fn(usize) -> Callback<InputEvent>,
}

impl Controls<'_> {
    /// N's error as text, when it does not parse.
    fn n_error(&self) -> Option<String> {
        self.reading.parsed_n.as_ref().err().map(|_| {
            self.ctx
                .tf("race.n_error", &[("max", &MAX_RACE_N.to_string())])
        })
    }

    /// Start stays disabled until the fields can be raced.
    pub fn start_blocked(&self) -> bool {
        if self.conv {
            self.reading.job.is_none()
        } else {
            self.reading.parsed_n.is_err()
        }
    }

    /// Whether the GPU lane races anything.
    fn gpu_present(&self) -> bool {
        if self.conv {
            self.reading.conv_stage.is_some()
        } else {
            self.setup.kernel.is_some()
        }
    }
}

/// The conv race's shape fields, with each field's error, the shape's and the device's.
fn conv_fields(c: &Controls) -> Html {
    let ctx = c.ctx;
    let parsed = &c.reading.conv_parsed;
    let fields = conv_params::FIELDS.iter().enumerate().map(|(i, f)| {
        let error = parsed
            .fields
            .get(i)
            .and_then(|e| e.as_ref())
            .map(|e| field_message(ctx, e));
        let id = format!("race-conv-{}", f.key);
        let err_id = format!("{id}-error");
        html! {
            <div class={classes!("field", error.is_some().then_some("invalid"))}>
                <label for={id.clone()}>{ ctx.t(f.label_key) }</label>
                <input id={id} type="text" inputmode="numeric" autocomplete="off"
                    value={c.conv_text.get(i).cloned().unwrap_or_default()} oninput={(c.on_conv_field)(i)}
                    disabled={c.busy} aria-invalid={error.is_some().to_string()} aria-describedby={err_id.clone()} />
                <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
            </div>
        }
    });
    html! {
        <>
            <div class="conv-race-fields">{ for fields }</div>
            if let Some(e) = &parsed.shape_error {
                <p class="message error" role="alert" data-shape-error="true">{ shape_message(ctx, e) }</p>
            }
            if let Some(e) = &c.reading.conv_limit {
                <p class="message error" role="alert" data-limit-error="true">{ limit_message(ctx, e) }</p>
            }
        </>
    }
}

/// The GPU stage select: the conv stages, or the matmul stages this browser runs.
fn gpu_select(c: &Controls) -> Html {
    let (ctx, s) = (c.ctx, c.setup);
    if c.conv {
        if s.kernel.is_none() {
            return html! {};
        }
        let options = ConvStage::ALL.iter().map(|st| {
            html! { <option value={st.id()} selected={*st == c.reading.conv_p.gpu}>{ ctx.t(&format!("kernel.{}.title", st.id())) }</option> }
        });
        return html! {
            <div class="field">
                <label for="race-conv-gpu">{ ctx.t("race.gpu_stage") }</label>
                <select id="race-conv-gpu" onchange={(c.on_select)("cgpu")} disabled={c.busy}>{ for options }</select>
            </div>
        };
    }
    let Some(k) = s.kernel else {
        return html! {};
    };
    let options = browser_stages(ctx).into_iter().map(|st| {
        html! { <option value={st.id} selected={st.id == k.id}>{ ctx.t(st.title_key) }</option> }
    });
    html! {
        <div class="field">
            <label for="race-gpu">{ ctx.t("race.gpu_stage") }</label>
            <select id="race-gpu" onchange={(c.on_select)("gpu")} disabled={c.busy}>{ for options }</select>
        </div>
    }
}

/// The settings fields of the race form (its buttons are the component's).
pub(super) fn fields(c: &Controls) -> Html {
    let (ctx, s, p) = (c.ctx, c.setup, &c.setup.params);
    let n_error = c.n_error();
    let cpu_options: Vec<Html> = if c.conv {
        CpuConvVariant::ALL
            .iter()
            .map(|v| html! {
                <option value={v.id()} selected={*v == c.reading.conv_p.cpu}>{ ctx.t(&format!("race.conv.cpu.{}", v.id())) }</option>
            })
            .collect()
    } else {
        CpuVariant::ALL
            .iter()
            .map(|v| html! {
                <option value={v.id()} selected={*v == p.cpu}>{ ctx.t(&format!("race.cpu.{}", v.id())) }</option>
            })
            .collect()
    };
    let worker_options = worker_choices(s.cores).into_iter().map(|w| {
        let label = if w == s.cores {
            ctx.tf("race.workers.cores", &[("n", &w.to_string())])
        } else {
            w.to_string()
        };
        html! { <option value={w.to_string()} selected={w == p.workers}>{ label }</option> }
    });
    html! {
        <>
            if c.conv {
                { conv_fields(c) }
            } else {
                <div class={classes!("field", n_error.is_some().then_some("invalid"))}>
                    <label for="race-n">{ ctx.t("race.n") }</label>
                    <input id="race-n" type="text" inputmode="numeric" autocomplete="off"
                        value={c.n_text.to_string()} oninput={c.on_n.clone()} disabled={c.busy}
                        aria-invalid={n_error.is_some().to_string()} aria-describedby="race-n-error" />
                    <p id="race-n-error" class="field-error" role="alert">{ n_error.clone().unwrap_or_default() }</p>
                </div>
            }
            <div class="field">
                <label for="race-cpu">{ ctx.t("race.cpu_variant") }</label>
                <select id="race-cpu" onchange={(c.on_select)(if c.conv { "ccpu" } else { "cpu" })} disabled={c.busy}>{ for cpu_options }</select>
            </div>
            <div class="field">
                <label for="race-workers">{ ctx.t("race.workers") }</label>
                <select id="race-workers" onchange={(c.on_select)("workers")} disabled={c.busy}>{ for worker_options }</select>
            </div>
            { gpu_select(c) }
        </>
    }
}

/// The lanes' titles: the CPU variant on its workers, and the GPU stage (or none).
fn titles(c: &Controls) -> (String, String) {
    let (ctx, s, p) = (c.ctx, c.setup, &c.setup.params);
    let variant = if c.conv {
        format!("race.conv.cpu.{}", c.reading.conv_p.cpu.id())
    } else {
        format!("race.cpu.{}", p.cpu.id())
    };
    let cpu = ctx.tf(
        "race.contender.cpu",
        &[
            ("variant", ctx.t(&variant)),
            ("workers", &p.workers.to_string()),
        ],
    );
    let gpu = match (c.conv, s.kernel, c.reading.conv_stage) {
        (true, _, Some(st)) => ctx.tf(
            "race.contender.gpu",
            &[("stage", ctx.t(&format!("kernel.{}.title", st.id())))],
        ),
        (false, Some(k), _) => ctx.tf("race.contender.gpu", &[("stage", ctx.t(k.title_key))]),
        _ => ctx.t("race.gpu.absent").to_string(),
    };
    (cpu, gpu)
}

/// One side's lane: `present` when that side races, `indeterminate` when its runner may move
/// without a known fraction (the GPU's: a run not cut into pieces reports only its end), which
/// is drawn striped until a fraction arrives.
fn lane(
    ctx: &Ctx,
    key: &str,
    title: String,
    lane: &Lane,
    shown: LaneShown,
    present: bool,
    indeterminate: bool,
) -> Html {
    let (pct, state) = (shown.pct, shown.state);
    html! {
        <div class={classes!("lane", key.to_string(), state)} data-lane={key.to_string()} data-state={state}>
            <div class="lane-head">
                <span class="lane-title">{ title }</span>
                <span class="lane-time" aria-live="off">
                    { shown.elapsed_ms.map(duration).unwrap_or_default() }
                </span>
            </div>
            if let (true, Some(left)) = (present, shown.left) {
                <p class="lane-left progress-text" data-progress={pct.to_string()} data-left={left.id()}>
                    { super::progress_text(ctx, &lane.progress) }
                </p>
            }
            <div class="track" role="progressbar" aria-valuemin="0" aria-valuemax="100"
                aria-valuenow={pct.to_string()} aria-label={ctx.t("race.progress")}>
                if present {
                    <div class={classes!("runner", (indeterminate && state == "running" && pct == 0.0).then_some("indeterminate"))}
                        data-width-pct={pct.to_string()}></div>
                }
                <div class="finish-line" aria-hidden="true"></div>
            </div>
            if let Some(e) = &lane.error {
                <p class="lane-error" role="alert">{ e.clone() }</p>
            }
        </div>
    }
}

/// Both lanes at `now`, with the race's phase, count and whether its GPU side is idle.
pub(super) fn lanes(c: &Controls, m: &Model, now: f64) -> Html {
    let (cpu_title, gpu_title) = titles(c);
    html! {
        <div class="lanes" data-phase={m.phase.id()}
            data-races={m.finished.to_string()} data-gpu-idle={(m.gpu_sides == 0).to_string()}>
            { lane(c.ctx, "cpu", cpu_title, &m.cpu, m.cpu.shown(m.phase, m.started_at, now), true, false) }
            { lane(c.ctx, "gpu", gpu_title, &m.gpu, m.gpu.shown(m.phase, m.started_at, now), c.gpu_present(), true) }
        </div>
    }
}

/// A finished race's verdict, breakdowns and lesson.
pub(super) fn results(ctx: &Ctx, m: &Model, s: &Setup) -> Html {
    let Some(work) = m.work else {
        return html! {};
    };
    let flops = work.flops();
    let cpu_ms = m.cpu_run.as_ref().map(|c| c.total_ms);
    let gpu_ms = m.gpu_run.as_ref().map(|g| g.total_ms);
    let verdict = match (&m.checks, cpu_ms, gpu_ms) {
        (Some(ch), Some(c), Some(g)) => {
            let (winner, ratio) = winner(c, g);
            let text = ctx.tf(
                &format!("race.winner.{winner}"),
                &[("x", &numbers::number(ratio))],
            );
            let agree = match (ch.all_ok(), ch.max_rel_diff) {
                (true, Some(d)) => html! {
                    <p class="verdict ok" data-agree="true">
                        { ctx.tf("race.agree", &[("diff", &numbers::sci(d)), ("cpu_err", &numbers::sci(ch.cpu.max_rel_error)),
                            ("gpu_err", &numbers::sci(ch.gpu.as_ref().map(|g| g.max_rel_error).unwrap_or(0.0)))]) }
                    </p>
                },
                _ => html! {
                    <p class="verdict bad" data-agree="false" role="alert">
                        { ctx.tf("race.disagree", &[
                            ("cpu", ctx.t(if ch.cpu.ok { "race.ok" } else { "race.wrong" })),
                            ("gpu", ctx.t(if ch.gpu.as_ref().is_some_and(|g| g.ok) { "race.ok" } else { "race.wrong" })),
                        ]) }
                    </p>
                },
            };
            html! {
                <>
                    <p class={classes!("winner", winner)} data-winner={winner}>{ text }</p>
                    { agree }
                </>
            }
        }
        (Some(ch), Some(_), None) => html! {
            <p class={classes!("verdict", if ch.cpu.ok { "ok" } else { "bad" })} data-agree="cpu-only">
                { ctx.tf("race.cpu_only", &[("err", &numbers::sci(ch.cpu.max_rel_error)),
                    ("state", ctx.t(if ch.cpu.ok { "race.ok" } else { "race.wrong" }))]) }
            </p>
        },
        _ => html! {},
    };
    let checked = m.checks.as_ref().map(|ch| {
        if ch.checked == ch.total {
            ctx.tf(
                "run.checked_all",
                &[("count", &numbers::count(ch.total as u64))],
            )
        } else {
            ctx.tf(
                "run.checked_some",
                &[
                    ("checked", &numbers::count(ch.checked as u64)),
                    ("total", &numbers::count(ch.total as u64)),
                ],
            )
        }
    });
    let row = |label: &str, value: String| {
        html! { <tr><th scope="row">{ label.to_string() }</th><td>{ value }</td></tr> }
    };
    let cpu_table = m.cpu_run.as_ref().map(|c| {
        html! {
            <table class="facts breakdown cpu-breakdown">
                <caption>{ ctx.t("race.breakdown.cpu") }</caption>
                { row(ctx.t("race.b.total"), duration(c.total_ms)) }
                { row(ctx.t("race.b.copy_in"), duration(c.copy_in_ms)) }
                { row(ctx.t("race.b.compute"), duration(c.compute_ms)) }
                { row(ctx.t("race.b.copy_out"), duration(c.copy_out_ms)) }
                { row(ctx.t("race.b.wait"), duration(c.wait_ms)) }
                { row(ctx.t("race.b.rate"), ctx.tf("run.gflops", &[("value", &numbers::rate(gflops(flops, c.total_ms)))])) }
                { row(ctx.t("race.b.workers"), c.workers.to_string()) }
                <tr data-cpu-kernel={c.kernel.id()}>
                    <th scope="row">{ ctx.t("race.b.cpu_kernel") }</th>
                    <td>{ ctx.t(&format!("race.kernel.{}", c.kernel.id())) }</td>
                </tr>
                { row(ctx.t("race.b.setup"), duration(m.cpu_setup_ms)) }
            </table>
        }
    });
    let gpu_table = m.gpu_run.as_ref().map(|g| {
        let t = &g.timing;
        let kernel = match g.kernel_ms() {
            Some(k) => duration(k),
            None => ctx.t("race.b.not_separable").to_string(),
        };
        let launch = match g.launch_ms() {
            Some(l) => duration(l),
            None => ctx.tf("race.b.wall", &[("ms", &duration(t.submit_to_result_ms - t.readback_ms))]),
        };
        html! {
            <table class="facts breakdown gpu-breakdown">
                <caption>{ ctx.t("race.breakdown.gpu") }</caption>
                { row(ctx.t("race.b.total"), duration(g.total_ms)) }
                { row(ctx.t("race.b.upload"), duration(t.upload_ms)) }
                { row(ctx.t("race.b.launch"), launch) }
                { row(ctx.t("race.b.kernel"), kernel) }
                { row(ctx.t("race.b.readback"), duration(t.readback_ms)) }
                { row(ctx.t("race.b.rate"), ctx.tf("run.gflops", &[("value", &numbers::rate(gflops(flops, g.total_ms)))])) }
                { row(ctx.t("race.b.setup"), m.gpu_setup_ms.map(duration).unwrap_or_default()) }
            </table>
        }
    });
    let conv = matches!(work, Workload::Conv(_));
    let lesson = ctx.t(lesson_key(cpu_ms, gpu_ms, conv));
    html! {
        <div class="race-results" data-verified={m.checks.as_ref().is_some_and(|c| c.all_ok()).to_string()}
            data-gpu-submissions={m.gpu_run.as_ref().map(|g| g.timing.submissions.to_string())}>
            { verdict }
            if m.hidden.was_hidden() {
                <p class="note hidden-note" role="note" data-hidden-note="true">{ ctx.t("race.hidden_note") }</p>
            }
            if let Some(c) = checked {
                <p class="checked">{ c }</p>
            }
            <div class="breakdowns">
                { for cpu_table }
                { for gpu_table }
            </div>
            <p class="lesson">{ lesson }</p>
            if s.software && m.gpu_run.is_some() {
                <p class="note">{ ctx.t("race.b.software_timestamps") }</p>
            }
            if m.gpu_recovered {
                <p class="message" data-recovered="true">{ ctx.t("run.recovered") }</p>
            }
            if m.gpu_lost {
                <p class="message" data-lost="true">{ ctx.t("race.gpu.lost") }</p>
            }
            if let Some(w) = m.gpu_waited_ms.filter(|w| *w >= 1.0) {
                <p class="note" data-waited={format!("{w:.0}")}>{ ctx.tf("run.waited", &[("ms", &numbers::ms(w))]) }</p>
            }
            <p class="note">{ ctx.t("race.b.note") }</p>
            <p class="note">{ ctx.t("race.b.parts") }</p>
            <p class="note" data-vs-sweep="true">{ ctx.t("race.b.vs_sweep") }</p>
            if matches!(work, Workload::Matmul(_)) && m.cpu_run.is_some() {
                <p class="note" data-vs-lesson="true">
                    { ctx.t("race.b.vs_lesson") }{ " " }
                    <a href={format!("#/learn/latency-throughput?lang={}", ctx.lang.code())}>{ ctx.t("race.b.vs_lesson_link") }</a>
                </p>
            }
        </div>
    }
}
