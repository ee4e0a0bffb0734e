//! The SIMT visualiser: step through a scaled-down matmul or convolution launch and see which cells each
//! subgroup (warp) and thread touches, what that costs in memory transactions and bank
//! conflicts, and how the ids of a thread read in WGSL and in CUDA. The model is
//! `simt_model::trace`, the URL's parameters and the view's state (`View`, one reducer)
//! `page_models::vis_params`; these components only draw them and dispatch.

use std::collections::HashMap;
use std::rc::Rc;

use gloo::timers::callback::Interval;

use yew::prelude::*;
use yew_router::prelude::*;

use simt_model::stage_trace::StageTrace;
use simt_model::trace::{Array, Step, StepCost, Traced};

use super::draft_input::DraftInput;
use super::schedule_replay::ScheduleReplay;
use super::{replace_query, Ctx};
use page_models::vis_params::{View, ViewAction, VisParams, SPEEDS, STAGES, SUBGROUP_WIDTHS};

/// Subgroup colours, cycled.
const PALETTE: [&str; 8] = [
    "#4c6ef5", "#12b886", "#f59f00", "#e64980", "#7950f2", "#15aabf", "#82c91e", "#fd7e14",
];
const CELL: f64 = 8.0;
/// Built-in ids as WGSL names them, with their CUDA counterparts (code names: not translated).
const ID_NAMES: [(&str, &str); 3] = [
    ("global_invocation_id", "blockIdx·blockDim + threadIdx"),
    ("local_invocation_id", "threadIdx"),
    ("workgroup_id", "blockIdx"),
];

fn step_label(ctx: &Ctx, step: Step, tile: u32) -> String {
    match step {
        Step::Multiply { p } => ctx.tf("vis.step.multiply", &[("p", &p.to_string())]),
        Step::LoadTile { t } => ctx.tf("vis.step.load", &[("t", &t.to_string())]),
        Step::ComputeTile { t, p } => {
            let mut s = ctx.tf(
                "vis.step.compute",
                &[("t", &t.to_string()), ("p", &p.to_string())],
            );
            if step.ends_with_barrier(tile) {
                s.push_str(ctx.t("vis.step.barrier"));
            }
            s
        }
        Step::Store => ctx.t("vis.step.store").to_string(),
        Step::ConvTap { r, s, c } => ctx.tf(
            "vis.step.conv_tap",
            &[
                ("r", &r.to_string()),
                ("s", &s.to_string()),
                ("c", &c.to_string()),
            ],
        ),
        Step::ConvStage { c0, pass, .. } => {
            let mut t = ctx.tf(
                "vis.step.conv_stage",
                &[("c", &c0.to_string()), ("pass", &(pass + 1).to_string())],
            );
            if step.ends_with_barrier(tile) {
                t.push_str(ctx.t("vis.step.barrier"));
            }
            t
        }
        Step::ConvTileTap { c0, r, s, cc, .. } => {
            let mut t = ctx.tf(
                "vis.step.conv_tile_tap",
                &[
                    ("r", &r.to_string()),
                    ("s", &s.to_string()),
                    ("c", &(c0 + cc).to_string()),
                ],
            );
            if step.ends_with_barrier(tile) {
                t.push_str(ctx.t("vis.step.barrier"));
            }
            t
        }
    }
}

/// The arrays of the stage's problem, drawn as grids with the selected subgroup's cells lit:
/// A, B, C (and the shared tiles) for a matmul; for a convolution the input (rows × W·C),
/// the filter (R·S·C × K), the output (rows × Q·K) and, for the tiled stage, the patch in
/// workgroup memory (th rows × tw·chunk).
fn arrays(
    ctx: &Ctx,
    trace: &StageTrace,
    params: &VisParams,
    lit: &HashMap<Array, HashMap<u32, bool>>,
    color: &'static str,
    contents: &[(Array, Vec<Option<u32>>)],
    tiles: bool,
) -> Html {
    match trace {
        StageTrace::Matmul(_) => {
            let (n, tile) = (params.size, params.wg);
            let is_tiled = tiles && params.stage.starts_with("tiled");
            html! {
                <>
                    { matrix(ctx.tf("vis.matrix_a", &[("n", &n.to_string())]), n, n, lit.get(&Array::A), color) }
                    { matrix(ctx.tf("vis.matrix_b", &[("n", &n.to_string())]), n, n, lit.get(&Array::B), color) }
                    if tiles {
                        { matrix(ctx.tf("vis.matrix_c", &[("n", &n.to_string())]), n, n, lit.get(&Array::C), color) }
                    }
                    if is_tiled {
                        { matrix_with_contents(ctx.t("vis.tile_a").to_string(), tile, tile + params.pad, lit.get(&Array::TileA), color,
                            contents.first().map(|(_, w)| ("A", n, w.as_slice()))) }
                        { matrix_with_contents(ctx.t("vis.tile_b").to_string(), tile, tile, lit.get(&Array::TileB), color,
                            contents.get(1).map(|(_, w)| ("B", n, w.as_slice()))) }
                    }
                </>
            }
        }
        StageTrace::Conv(t) => {
            let (p, q) = t.out_hw();
            let (th, tw, chunk) = t.patch();
            let x_cols = t.w * t.c;
            let is_tiled = tiles && t.mapping == simt_model::conv_trace::ConvMapping::Tiled;
            html! {
                <>
                    { matrix(ctx.tf("vis.conv.x", &[("h", &t.h.to_string()), ("w", &t.w.to_string()), ("c", &t.c.to_string())]),
                        t.n * t.h, x_cols, lit.get(&Array::X), color) }
                    { matrix(ctx.tf("vis.conv.f", &[("r", &t.r.to_string()), ("s", &t.s.to_string()), ("c", &t.c.to_string()), ("k", &t.k.to_string())]),
                        t.r * t.s * t.c, t.k, lit.get(&Array::F), color) }
                    if tiles {
                        { matrix(ctx.tf("vis.conv.y", &[("p", &p.to_string()), ("q", &q.to_string()), ("k", &t.k.to_string())]),
                            t.n * p, q * t.k, lit.get(&Array::Y), color) }
                    }
                    if is_tiled {
                        { matrix_with_contents(ctx.tf("vis.conv.tile", &[("h", &th.to_string()), ("w", &tw.to_string()), ("c", &chunk.to_string())]),
                            th, tw * chunk, lit.get(&Array::TileX), color,
                            contents.first().map(|(_, w)| ("x", x_cols, w.as_slice()))) }
                    }
                </>
            }
        }
    }
}

/// Which cells of each array the selected subgroup touches at a step: index → (touched by the
/// selected thread?).
fn touched(
    trace: &StageTrace,
    step: Step,
    wg: [u32; 3],
    sg: u32,
    thread_lane: Option<u32>,
) -> HashMap<Array, HashMap<u32, bool>> {
    let mut out: HashMap<Array, HashMap<u32, bool>> = HashMap::new();
    for lane in trace.lanes(step, wg, sg) {
        let mine = Some(lane.ids.lane) == thread_lane;
        for (arr, idx) in lane
            .global_reads
            .iter()
            .chain(&lane.global_writes)
            .chain(&lane.shared_reads)
            .chain(&lane.shared_writes)
        {
            let e = out.entry(*arr).or_default().entry(*idx).or_insert(false);
            *e |= mine;
        }
    }
    out
}

/// A rows×cols grid with the given cells lit.
fn matrix(
    title: String,
    rows: u32,
    cols: u32,
    lit: Option<&HashMap<u32, bool>>,
    color: &'static str,
) -> Html {
    matrix_with_contents(title, rows, cols, lit, color, None)
}

/// The shared tiles also shade the cells holding data and name the element each holds:
/// `contents` = (source matrix name, its row length, element index per tile word).
fn matrix_with_contents(
    title: String,
    rows: u32,
    cols: u32,
    lit: Option<&HashMap<u32, bool>>,
    color: &'static str,
    contents: Option<(&str, u32, &[Option<u32>])>,
) -> Html {
    let held = contents.into_iter().flat_map(|(name, src_cols, words)| {
        words.iter().enumerate().filter_map(move |(i, e)| {
            let e = (*e)?;
            let (r, c) = (i as u32 / cols.max(1), i as u32 % cols.max(1));
            Some(html! {
                <rect x={(c as f64 * CELL).to_string()} y={(r as f64 * CELL).to_string()}
                    width={CELL.to_string()} height={CELL.to_string()} class="held">
                    <title>{ format!("{name}[{}][{}]", e / src_cols.max(1), e % src_cols.max(1)) }</title>
                </rect>
            })
        })
    });
    let (w, h) = (cols as f64 * CELL, rows as f64 * CELL);
    let cells = lit.into_iter().flatten().map(|(&i, &mine)| {
        let (r, c) = (i / cols.max(1), i % cols.max(1));
        html! {
            <rect x={(c as f64 * CELL).to_string()} y={(r as f64 * CELL).to_string()}
                width={CELL.to_string()} height={CELL.to_string()}
                fill={if mine { "#e03131" } else { color }} class={if mine { "cell mine" } else { "cell" }} />
        }
    });
    html! {
        <figure class="vis-matrix">
            <figcaption>{ title }</figcaption>
            <svg viewBox={format!("-1 -1 {} {}", w + 2.0, h + 2.0)} width={(w + 2.0).to_string()} height={(h + 2.0).to_string()}
                data-css-w={scaled_width(w + 2.0)}>
                <rect x="0" y="0" width={w.to_string()} height={h.to_string()} class="grid-bg" />
                { for held }
                { for cells }
            </svg>
        </figure>
    }
}

/// The drawing's natural width, for the stylesheet to scale (larger on wide screens, never
/// wider than its column on a phone). Set as `--w` through the CSSOM (`cssom::use_widths`):
/// a `style` attribute would break the Content Security Policy.
fn scaled_width(px: f64) -> String {
    px.to_string()
}

fn counters(ctx: &Ctx, title_key: &str, c: &StepCost) -> Html {
    let rows = [
        ("vis.count.global", c.global_accesses),
        ("vis.count.sectors", c.sectors),
        ("vis.count.lines", c.lines),
        ("vis.count.shared", c.shared_accesses),
        ("vis.count.conflicts", c.bank_conflicts),
        ("vis.count.inactive", c.inactive_lanes),
    ];
    html! {
        <table class="facts vis-counters" data-counters={title_key.to_string()}>
            <caption>{ ctx.t(title_key) }</caption>
            { for rows.iter().map(|(k, v)| html! {
                <tr><th scope="row">{ ctx.t(k) }</th><td data-key={k.to_string()}>{ numbers::count(*v as u64) }</td></tr>
            }) }
        </table>
    }
}

fn stage_title(ctx: &Ctx, stage: &str) -> &'static str {
    STAGES
        .iter()
        .find(|(n, _)| *n == stage)
        .map(|(_, k)| ctx.t(k))
        .unwrap_or_default()
}

/// Two stages on the same problem: whole-run counters side by side with their ratio, and the
/// second stage's matrices at the same step (clamped to its own length).
/// `wa`/`wb` are the two stages' whole-run costs (memoised by the caller: they cover every
/// step of the launch and must not be recomputed on each playback tick).
#[allow(clippy::too_many_arguments)]
fn compare_section(
    ctx: &Ctx,
    a: &VisParams,
    b: &VisParams,
    wa: StepCost,
    wb: StepCost,
    step: usize,
    wg: [u32; 3],
    thread: u32,
) -> Html {
    let tb = b.trace();
    let rows = [
        ("vis.count.global", wa.global_accesses, wb.global_accesses),
        ("vis.count.sectors", wa.sectors, wb.sectors),
        ("vis.count.lines", wa.lines, wb.lines),
        ("vis.count.shared", wa.shared_accesses, wb.shared_accesses),
        ("vis.count.conflicts", wa.bank_conflicts, wb.bank_conflicts),
        ("vis.count.inactive", wa.inactive_lanes, wb.inactive_lanes),
    ];
    let steps_b = tb.steps();
    let sb = steps_b
        .get(step.min(steps_b.len().saturating_sub(1)))
        .copied()
        .unwrap_or(Step::Store);
    let lb = tb.launch();
    let wg_b = [wg[0].min(lb.grid[0] - 1), wg[1].min(lb.grid[1] - 1), 0];
    let ids_b = lb.ids(wg_b, thread.min(lb.invocations_per_workgroup() - 1));
    let lit = touched(&tb, sb, wg_b, ids_b.subgroup, Some(ids_b.lane));
    let color = PALETTE[ids_b.subgroup as usize % PALETTE.len()];
    html! {
        <section class="panel vis-compare" aria-labelledby="compare-heading">
            <h2 id="compare-heading">
                { ctx.tf("vis.compare.heading", &[("a", stage_title(ctx, a.stage)), ("b", stage_title(ctx, b.stage))]) }
            </h2>
            <div class="table-scroll"><table class="facts compare-table">
                <tr>
                    <th></th>
                    <th scope="col">{ stage_title(ctx, a.stage) }</th>
                    <th scope="col">{ stage_title(ctx, b.stage) }</th>
                    <th scope="col">{ ctx.t("vis.compare.ratio") }</th>
                </tr>
                { for rows.iter().map(|(k, x, y)| html! {
                    <tr data-key={k.to_string()}>
                        <th scope="row">{ ctx.t(k) }</th>
                        <td class="a">{ numbers::count(*x as u64) }</td>
                        <td class="b">{ numbers::count(*y as u64) }</td>
                        <td>{ numbers::ratio(*x as u64, *y as u64) }</td>
                    </tr>
                }) }
            </table></div>
            <p class="note">{ ctx.t("vis.compare.note") }</p>
            <h3>{ ctx.tf("vis.compare.same_step", &[("stage", stage_title(ctx, b.stage))]) }</h3>
            <div class="vis-matrices">
                { arrays(ctx, &tb, b, &lit, color, &[], false) }
            </div>
        </section>
    }
}

/// One stage's totals over the whole launch, as `run-finished` carries them.
fn stage_report(stage: &str, total: Option<&StepCost>) -> page_models::embed::Report {
    use page_models::embed::Field;
    let t = total.copied().unwrap_or_default();
    let n = |v: u32| Field::Num(v as f64);
    vec![
        ("stage", Field::Str(stage.into())),
        ("globalAccesses", n(t.global_accesses)),
        ("sectors", n(t.sectors)),
        ("lines", n(t.lines)),
        ("sharedAccesses", n(t.shared_accesses)),
        ("bankConflicts", n(t.bank_conflicts)),
        ("inactiveLanes", n(t.inactive_lanes)),
    ]
}

/// The view's state in a `use_reducer`.
#[derive(PartialEq)]
struct ViewState(View);

impl Reducible for ViewState {
    type Action = ViewAction;
    fn reduce(self: Rc<Self>, action: ViewAction) -> Rc<Self> {
        let next = self.0.apply(action);
        if next == self.0 {
            self
        } else {
            Rc::new(ViewState(next))
        }
    }
}

type Dispatch = UseReducerDispatcher<ViewState>;

/// While playing, one step per tick until the last, where playing stops. The interval lives
/// only while playing.
#[hook]
fn use_playback(view: &UseReducerHandle<ViewState>, last: usize) {
    let dispatch = view.dispatcher();
    use_effect_with(
        (view.0.playing, last, view.0.period_ms()),
        move |&(on, last, period_ms)| {
            let tick = on.then(|| {
                Interval::new(period_ms.max(1), move || {
                    dispatch.dispatch(ViewAction::Tick { last })
                })
            });
            move || drop(tick)
        },
    );
}

/// A playback that reached the last step is a finished run: an embed reports the whole
/// launch's totals (docs/embedding.md). Stepping by hand or pausing early reports nothing.
#[hook]
fn use_report_finished(
    params: &VisParams,
    totals: &Rc<Vec<StepCost>>,
    compare_totals: &Rc<Vec<StepCost>>,
    playing: bool,
    at_end: bool,
) {
    let was_playing = use_mut_ref(|| false);
    let (params, totals, compare_totals) = (params.clone(), totals.clone(), compare_totals.clone());
    use_effect_with((playing, at_end), move |&(on, at_end)| {
        let before = std::mem::replace(&mut *was_playing.borrow_mut(), on);
        if before && !on && at_end {
            let mut stages = vec![stage_report(params.stage, totals.last())];
            if let Some(b) = params.compare {
                stages.push(stage_report(b, compare_totals.last()));
            }
            page_models::embed::report(Ok(vec![
                ("size", page_models::embed::Field::Num(params.size as f64)),
                ("steps", page_models::embed::Field::Num(totals.len() as f64)),
                ("stages", page_models::embed::Field::List(stages)),
            ]));
        }
    });
}

#[function_component]
pub fn Visualiser() -> Html {
    let ctx = use_context::<Ctx>();
    super::cssom::use_widths();
    let navigator = use_navigator();
    let query = ctx.as_ref().map(|c| c.query.clone()).unwrap_or_default();
    let params = VisParams::from_query(&query);
    let trace = params.trace();
    let steps = use_memo(trace, |t| t.steps());
    let totals = use_memo(trace, |t| t.running_totals());
    // How often the conv stages fetch each input value (the whole launch, so memoised).
    let reuse = use_memo(trace, |t| match t {
        StageTrace::Conv(c) => Some(c.x_reuse()),
        StageTrace::Matmul(_) => None,
    });
    let compare_trace = params.compare.map(|stage| {
        VisParams {
            stage,
            ..params.clone()
        }
        .trace()
    });
    let compare_totals = use_memo(compare_trace, |t| {
        t.map(|t| t.running_totals()).unwrap_or_default()
    });
    let last = steps.len().saturating_sub(1);
    let pos = params.position;
    let view = use_reducer(|| ViewState(View::new(pos)));
    let launch = trace.launch();
    // A link followed in the same tab changes the URL, not this component's state: take it.
    {
        let view = view.dispatcher();
        use_effect_with(pos, move |pos| view.dispatch(ViewAction::FromUrl(*pos)));
    }
    let (cur_step, cur_wg, cur_thread) =
        view.0
            .clamped(last, launch.grid, launch.invocations_per_workgroup());
    use_playback(&view, last);
    use_report_finished(
        &params,
        &totals,
        &compare_totals,
        view.0.playing,
        cur_step == last,
    );
    // Keep step, workgroup and thread in the URL.
    {
        let (nav, route, q) = (
            navigator.clone(),
            ctx.as_ref().map(|c| c.route.clone()),
            query.clone(),
        );
        use_effect_with(
            (cur_step, cur_wg, cur_thread, view.0.playing),
            move |(s, wg, t, playing)| {
                if !*playing {
                    if let (Some(nav), Some(route)) = (nav, route) {
                        let q = q
                            .with("step", &s.to_string())
                            .with("wgx", &wg[0].to_string())
                            .with("wgy", &wg[1].to_string())
                            .with("t", &t.to_string());
                        replace_query(&nav, &route, &q);
                    }
                }
            },
        );
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let current = steps.get(cur_step).copied().unwrap_or(Step::Store);
    let wg3 = [cur_wg[0], cur_wg[1], 0];
    let ids = launch.ids(wg3, cur_thread);
    let sg = ids.subgroup;
    let lit = touched(&trace, current, wg3, sg, Some(ids.lane));
    let contents = trace.tile_contents(current, wg3);
    let sg_color = PALETTE[sg as usize % PALETTE.len()];
    let compare = params.compare.map(|other| {
        let other_params = VisParams {
            stage: other,
            ..params.clone()
        };
        let whole = |t: &[StepCost]| t.last().copied().unwrap_or_default();
        compare_section(
            &ctx,
            &params,
            &other_params,
            whole(&totals),
            whole(&compare_totals),
            cur_step,
            wg3,
            cur_thread,
        )
    });
    let d = view.dispatcher();
    let onkeydown = Callback::from(move |e: KeyboardEvent| {
        // Fields, the slider and drop-downs keep their own keys; a button keeps space
        // (it clicks itself).
        let tag = e
            .target_dyn_into::<web_sys::Element>()
            .map(|el| el.tag_name().to_ascii_lowercase())
            .unwrap_or_default();
        if matches!(tag.as_str(), "input" | "select" | "textarea")
            || (tag == "button" && e.key() == " ")
        {
            return;
        }
        let action = match e.key().as_str() {
            "ArrowRight" => ViewAction::Go { delta: 1, last },
            "ArrowLeft" => ViewAction::Go { delta: -1, last },
            " " => ViewAction::Toggle { last },
            _ => return,
        };
        e.prevent_default();
        d.dispatch(action);
    });
    let d = view.dispatcher();
    let on_restart = Callback::from(move |()| d.dispatch(ViewAction::Restart));

    html! {
        <section class="page visualiser">
            <h1>{ ctx.t("vis.heading") }</h1>
            <p class="lead">{ ctx.t("vis.intro") }</p>
            <super::EmbedButton widget="simt" />
            <SettingsPanel params={params.clone()} {on_restart} />
            <div class="vis-view" tabindex="0" {onkeydown} aria-label={ctx.t("vis.view")}
                aria-describedby="vis-keys">
            <PlayControls view={view.0} step={cur_step} {last} count={steps.len()} label={step_label(&ctx, current, params.wg)}
                on={view.dispatcher()} />
            <p class="note vis-keys" id="vis-keys">{ ctx.t("vis.keys") }</p>
            <p class="note vis-touch" id="vis-touch">{ ctx.t("vis.touch") }</p>
            <div class="vis-layout">
                <LaunchPanel {trace} step={current} wg={cur_wg} thread={cur_thread} on={view.dispatcher()} />
                <div class="vis-matrices">
                    { arrays(&ctx, &trace, &params, &lit, sg_color, &contents, true) }
                </div>
                <div class="vis-counts">
                    { counters(&ctx, "vis.counters.subgroup", &trace.subgroup_cost(current, wg3, sg)) }
                    { counters(&ctx, "vis.counters.step", &trace.step_cost(current)) }
                    { counters(&ctx, "vis.counters.total", &totals.get(cur_step).copied().unwrap_or_default()) }
                    if let Some((reads, distinct)) = *reuse {
                        <p class="vis-reuse" data-reads={reads.to_string()} data-distinct={distinct.to_string()}>
                            { ctx.tf("vis.conv.reuse", &[
                                ("reads", &numbers::count(reads)),
                                ("distinct", &numbers::count(distinct)),
                                ("times", &numbers::number(reads as f64 / distinct.max(1) as f64)),
                            ]) }
                        </p>
                    }
                    <p class="note">{ ctx.t("vis.explain") }</p>
                </div>
            </div>
            </div>
            { for compare }
            <ScheduleReplay />
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct SettingsProps {
    params: VisParams,
    /// A setting changed: the view goes back to its first step.
    on_restart: Callback<()>,
}

/// The URL's adjusted values, the stage, size, workgroup, subgroup and comparison fields
/// (each writes the URL) and what the drawing is scaled to.
#[function_component]
fn SettingsPanel(props: &SettingsProps) -> Html {
    let navigator = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let params = &props.params;
    let set_param = |key: &'static str| {
        let (nav, route, q) = (navigator.clone(), ctx.route.clone(), ctx.query.clone());
        let on_restart = props.on_restart.clone();
        // The number fields keep their draft while the view redraws (Play) and, once
        // committed, show the value in use (64 stays 64 after typing 1000).
        Callback::from(move |text: String| {
            let next = q.clone().with(key, &text).with("step", "0");
            on_restart.emit(());
            if let Some(nav) = &nav {
                replace_query(nav, &route, &next);
            }
        })
    };
    let select_param = |key: &'static str| {
        set_param(key).reform(|e: Event| {
            e.target_unchecked_into::<web_sys::HtmlSelectElement>()
                .value()
        })
    };
    let stage_options = STAGES.iter().map(|(name, key)| {
        html! { <option value={*name} selected={*name == params.stage}>{ ctx.t(key) }</option> }
    });
    let sg_options = SUBGROUP_WIDTHS.iter().map(|w| {
        html! { <option value={w.to_string()} selected={*w == params.sg}>{ w.to_string() }</option> }
    });
    let compare_options = std::iter::once(("", "vis.compare.none"))
        .chain(STAGES.iter().copied())
        .map(|(name, key)| {
            let selected = params.compare.unwrap_or("") == name;
            html! { <option value={name} selected={selected}>{ ctx.t(key) }</option> }
        });
    let rejected = params.rejected.iter().map(|(name, value)| {
        // The field's name in the page's words, the URL key in brackets (not "size =" alone).
        let label = ctx.t(&format!("vis.param.{name}"));
        html! { <li>{ ctx.tf("vis.bad_param", &[("name", label), ("value", value)]) }</li> }
    });
    let clamped = params.clamped.iter().map(|c| {
        let label = ctx.t(&format!("vis.param.{}", c.name));
        html! { <li>{ ctx.tf("vis.clamped", &[
            ("name", label),
            ("value", &c.given),
            ("min", &c.range.0.to_string()),
            ("max", &c.range.1.to_string()),
            ("used", &c.used.to_string()),
        ]) }</li> }
    });
    let n = if params.is_conv() {
        params.conv_side()
    } else {
        params.size
    };
    html! {
        <>
            if !params.rejected.is_empty() || !params.clamped.is_empty() {
                <ul class="message error vis-adjusted" role="alert">{ for rejected }{ for clamped }</ul>
            }
            <div class="vis-settings">
                <label>{ ctx.t("vis.stage") }
                    <select id="vis-stage" onchange={select_param("stage")}>{ for stage_options }</select>
                </label>
                <label>{ ctx.t("vis.size") }
                    <DraftInput id="vis-size" kind="number" min="4" max="64" value={params.size.to_string()} on_commit={set_param("size")} />
                </label>
                <label>{ ctx.t("vis.wg") }
                    <DraftInput id="vis-wg" kind="number" min="4" max="16" value={params.wg.to_string()} on_commit={set_param("wg")} />
                </label>
                <label>{ ctx.t("vis.sg") }
                    <select id="vis-sg" onchange={select_param("sg")}>{ for sg_options }</select>
                </label>
                <label>{ ctx.t("vis.compare") }
                    <select id="vis-compare" onchange={select_param("compare")}>{ for compare_options }</select>
                </label>
            </div>
            if params.is_conv() {
                <p class="note">{ ctx.tf("vis.conv.scaled", &[("n", &n.to_string()), ("max", &page_models::vis_params::CONV_MAX_SIDE.to_string())]) }</p>
            } else {
                <p class="note">{ ctx.tf("vis.scaled", &[("n", &n.to_string())]) }</p>
            }
        </>
    }
}

#[derive(Properties, PartialEq)]
struct PlayProps {
    view: View,
    /// The step shown (the view's, kept inside the launch), the last one and how many.
    step: usize,
    last: usize,
    count: usize,
    /// What happens at the step shown.
    label: String,
    on: Dispatch,
}

/// Back, play or pause, forward, the slider, the speed and which step is shown.
#[function_component]
fn PlayControls(props: &PlayProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let (last, step) = (props.last, props.step);
    let send = |action: ViewAction| {
        let on = props.on.clone();
        Callback::from(move |_: MouseEvent| on.dispatch(action.clone()))
    };
    let on = props.on.clone();
    let scrub = Callback::from(move |e: InputEvent| {
        let value = e
            .target_unchecked_into::<web_sys::HtmlInputElement>()
            .value();
        on.dispatch(ViewAction::Scrub { value, last });
    });
    let on = props.on.clone();
    let on_speed = Callback::from(move |e: Event| {
        let v = e
            .target_unchecked_into::<web_sys::HtmlInputElement>()
            .value();
        on.dispatch(ViewAction::Speed(v));
    });
    let speed_options = SPEEDS.iter().map(|s| {
        html! { <option value={s.to_string()} selected={*s == props.view.speed}>{ ctx.tf("vis.speed_value", &[("n", &s.to_string())]) }</option> }
    });
    html! {
        <div class="vis-controls" role="group" aria-label={ctx.t("vis.controls")}>
            <button type="button" class="button" id="vis-back" onclick={send(ViewAction::Go { delta: -1, last })}>{ ctx.t("vis.back") }</button>
            <button type="button" class="button primary" id="vis-play" onclick={send(ViewAction::Toggle { last })}>
                { ctx.t(if props.view.playing { "vis.pause" } else { "vis.play" }) }
            </button>
            <button type="button" class="button" id="vis-forward" onclick={send(ViewAction::Go { delta: 1, last })}>{ ctx.t("vis.forward") }</button>
            <input type="range" id="vis-scrub" min="0" max={last.to_string()} value={step.to_string()} oninput={scrub}
                aria-label={ctx.t("vis.scrub")} />
            <select id="vis-speed" onchange={on_speed} aria-label={ctx.t("vis.speed")}>{ for speed_options }</select>
            <span class="vis-step" id="vis-step" data-step={step.to_string()}>
                { ctx.tf("vis.step_of", &[("i", &(step + 1).to_string()), ("n", &props.count.to_string())]) }
                { " · " }
                { props.label.clone() }
            </span>
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct LaunchProps {
    trace: StageTrace,
    step: Step,
    /// The selected workgroup and thread, inside the launch.
    wg: [u32; 2],
    thread: u32,
    on: Dispatch,
}

/// The launch's workgroups, the selected one's threads coloured by subgroup, and the selected
/// thread's ids in WGSL and CUDA.
#[function_component]
fn LaunchPanel(props: &LaunchProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let launch = props.trace.launch();
    let (cur_wg, cur_thread) = (props.wg, props.thread);
    let wg3 = [cur_wg[0], cur_wg[1], 0];
    let ids = launch.ids(wg3, cur_thread);
    let sg = ids.subgroup;
    let lane_active: HashMap<u32, bool> = props
        .trace
        .lanes(props.step, wg3, sg)
        .iter()
        .map(|l| (l.ids.local_index, l.active))
        .collect();
    let wg_cells = (0..launch.grid[1]).flat_map(|y| (0..launch.grid[0]).map(move |x| (x, y))).map(|(x, y)| {
        let selected = [x, y] == cur_wg;
        let on = props.on.clone();
        let onclick = Callback::from(move |_| on.dispatch(ViewAction::PickWorkgroup([x, y])));
        html! {
            <rect x={(x * 22).to_string()} y={(y * 22).to_string()} width="20" height="20" rx="3"
                class={classes!("wg", selected.then_some("selected"))} data-wg={format!("{x},{y}")} {onclick}>
                <title>{ format!("workgroup_id ({x}, {y}) · blockIdx ({x}, {y})") }</title>
            </rect>
        }
    });
    let [wx, wy, _] = launch.workgroup;
    let thread_cells = (0..wx * wy).map(|i| {
        let (x, y) = (i % wx, i / wx);
        let sgi = i / launch.subgroup_width;
        let active = lane_active.get(&i).copied().unwrap_or(true) || sgi != sg;
        let on = props.on.clone();
        let onclick = Callback::from(move |_| on.dispatch(ViewAction::PickThread(i)));
        html! {
            <rect x={(x * 18).to_string()} y={(y * 18).to_string()} width="16" height="16" rx="2"
                fill={PALETTE[sgi as usize % PALETTE.len()]}
                class={classes!("thread", (i == cur_thread).then_some("selected"), (sgi == sg).then_some("in-subgroup"), (!active).then_some("inactive"))}
                data-thread={i.to_string()} {onclick}>
                <title>{ format!("local_invocation_id ({x}, {y}) · subgroup {sgi} · lane {}", i % launch.subgroup_width) }</title>
            </rect>
        }
    });
    html! {
        <div class="vis-launch">
            <h3>{ ctx.tf("vis.grid", &[("x", &launch.grid[0].to_string()), ("y", &launch.grid[1].to_string())]) }</h3>
            <svg class="vis-wgs" width={(launch.grid[0] * 22).to_string()} height={(launch.grid[1] * 22).to_string()}
                viewBox={format!("0 0 {} {}", launch.grid[0] * 22, launch.grid[1] * 22)} data-css-w={scaled_width(f64::from(launch.grid[0] * 22))}>{ for wg_cells }</svg>
            <h3>{ ctx.tf("vis.threads", &[("x", &wx.to_string()), ("y", &wy.to_string()), ("sg", &launch.subgroup_width.to_string())]) }</h3>
            <svg class="vis-threads" width={(wx * 18).to_string()} height={(wy * 18).to_string()}
                viewBox={format!("0 0 {} {}", wx * 18, wy * 18)} data-css-w={scaled_width(f64::from(wx * 18))}>{ for thread_cells }</svg>
            <table class="facts vis-ids" id="vis-ids">
                { for ID_NAMES.iter().zip([ids.global, ids.local, ids.workgroup]).map(|((wgsl, cuda), v)| html! {
                    <tr><th scope="row"><code>{ *wgsl }</code></th><td>{ format!("({}, {})", v[0], v[1]) }</td><td><code>{ *cuda }</code></td></tr>
                }) }
                <tr><th scope="row">{ ctx.t("vis.subgroup_lane") }</th><td>{ format!("{} / {}", ids.subgroup, ids.lane) }</td><td>{ ctx.t("vis.warp_lane") }</td></tr>
            </table>
        </div>
    }
}
