//! `#/puzzles` (the list, with what this browser has solved) and `#/puzzles/<id>` (one
//! puzzle: goal, buffers, the editor on the starter or the learner's draft, hints, Run,
//! Show solution). A run binds the puzzle's buffers by the crate's convention (the plan is
//! `page_models::puzzle_run`'s), checks the whole output buffer on the CPU and draws each element:
//! right, wrong, never written.
//! "Show accesses" asks the editor module's `instrument` (naga, never in the app's wasm) for a
//! logging copy of the kernel, runs it with a `log` buffer bound after `out`, and draws what
//! `puzzles::access::summarize` counts per thread and per array.

use std::rc::Rc;

use yew::prelude::*;

use gpu_runtime::{GpuError, RunControl, RunOptions};
use puzzles::access::{self, ArrayInfo, Summary};
use puzzles::{Puzzle, Verdict, PUZZLES};

use super::code_editor::CodeEditor;
use super::editor_page::{
    browser_messages_view, browser_placed, error_text, load_draft, rejected, run_with_timeout,
    save_draft, RUN_TIMEOUT_MS,
};
use super::Ctx;
use crate::probe::WebGpuStatus;
use crate::session;
use page_models::kernel_edit::draft_key;
use page_models::kernel_edit::{BindingProblem, PlacedMessage};
use page_models::puzzle_run::{self, After};

use page_models::learner_file::SOLVED_KEY;

fn solved() -> Vec<String> {
    load_draft(SOLVED_KEY)
        .map(|s| {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn mark_solved(id: &str) {
    let mut all = solved();
    if !all.iter().any(|x| x == id) {
        all.push(id.to_string());
        save_draft(SOLVED_KEY, Some(&all.join(",")));
    }
}

fn href(ctx: &Ctx, id: &str) -> String {
    format!("#/puzzles/{id}?lang={}", ctx.lang.code())
}

#[function_component]
pub fn PuzzleList() -> Html {
    // Bumped by an import, so the list re-reads what is solved.
    let imports = use_state(|| 0u32);
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let on_change = {
        let imports = imports.clone();
        Callback::from(move |()| imports.set(imports.wrapping_add(1)))
    };
    let done = solved();
    html! {
        <section class="page puzzles-page">
            <h1>{ ctx.t("puzzles.heading") }</h1>
            <p class="lead">{ ctx.t("puzzles.intro") }</p>
            <ol class="puzzle-list">
                { for PUZZLES.iter().map(|p| {
                    let is_done = done.iter().any(|d| d == p.id);
                    html! {
                        <li>
                            <a href={href(&ctx, p.id)} data-puzzle={p.id}>{ ctx.t(&format!("puzzle.{}.title", p.id)) }</a>
                            { if is_done { html!{ <span class="badge ok">{ ctx.t("puzzles.solved") }</span> } } else { html!{} } }
                        </li>
                    }
                }) }
            </ol>
            <super::progress_transfer::ProgressTransfer {on_change} />
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct PuzzleProps {
    pub id: AttrValue,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Idle,
    Running,
    Checked {
        verdict: Verdict,
        output: Vec<f32>,
        inputs: Vec<Vec<f32>>,
        /// The puzzle's own size's label ("" for an unsized puzzle).
        own_size: String,
        /// The other sizes: every label checked, and the first that failed with its verdict.
        sizes: Vec<String>,
        // Boxed: a second Verdict inline would make every Outcome twice its size.
        failed_at: Option<Box<(String, Verdict)>>,
    },
    Failed(String),
    /// The browser's compiler refused the kernel: its placed messages (listed, underlined).
    Rejected(Rc<Vec<PlacedMessage>>),
    TimedOut,
}

/// `run-finished` of a puzzle (docs/embedding.md): the checker's verdict.
fn puzzle_report(id: &str, v: &Verdict, all_sizes: bool) -> page_models::embed::Report {
    use page_models::embed::Field;
    vec![
        ("puzzle", Field::Str(id.into())),
        ("passed", Field::Bool(v.passed() && all_sizes)),
        ("wrong", Field::Num(v.wrong as f64)),
        ("writtenPastEnd", Field::Num(v.written_past_end as f64)),
        ("wrongLength", Field::Bool(v.wrong_length)),
    ]
}

/// `run-finished` of a run the learner's code kept from a verdict (docs/embedding.md).
fn failed_report(id: &str, reason: String) -> page_models::embed::Report {
    use page_models::embed::Field;
    vec![
        ("puzzle", Field::Str(id.into())),
        ("passed", Field::Bool(false)),
        ("reason", Field::Str(reason)),
    ]
}

/// Why a run gave no verdict.
enum RunFail {
    /// naga found a binding the puzzle provides that the kernel leaves unused (or another
    /// mismatch): nothing reached the GPU, where the derived layout would drop it.
    Bindings(Vec<BindingProblem>),
    /// A loop ran out of its iteration budget (the loops' rewrite): not verified.
    LoopStopped {
        line: u32,
        budget: u32,
    },
    /// The loop budget could not be added (naga's reason).
    Budget(String),
    /// The browser's compiler refused the kernel (naga had accepted it): its messages,
    /// placed in the learner's text.
    Compiler(Vec<PlacedMessage>),
    /// A puzzle about waiting at a barrier, answered without one (right values would be luck).
    NoBarrier,
    Gpu(GpuError),
}

/// A run's answer: the verdict at the puzzle's own size (with its output and inputs, for
/// the table), the labels of the other sizes checked, and the first of them that failed.
struct Answer {
    verdict: Verdict,
    output: Vec<f32>,
    inputs: Vec<Vec<f32>>,
    own_size: String,
    sizes: Vec<String>,
    failed_at: Option<(String, Verdict)>,
}

async fn run_case(
    gpu: &gpu_runtime::Gpu,
    p: &'static Puzzle,
    source: String,
    case: &puzzles::Case,
    ctl: &RunControl,
) -> Result<(Verdict, Vec<f32>), RunFail> {
    // Every loop gets an iteration budget (code_editor::budget_loops), so an endless loop
    // ends with the line it is on instead of the watchdog; the flag buffer follows `out`.
    let budget = puzzle_run::loop_budget(case);
    let budgeted = super::code_editor::budget_loops(&source, budget)
        .await
        .map_err(RunFail::Budget)?;
    let flagged = budgeted.flag_binding as usize == puzzle_run::after_out(p);
    let source_of_run = source.clone();
    let text = if flagged {
        budgeted.source.clone()
    } else {
        source
    };
    let spec = puzzle_run::spec(text)
        .ok_or_else(|| RunFail::Gpu(GpuError::Shader("no base spec".into())))?;
    let after = if flagged {
        After::LoopFlag {
            words: budgeted.flag_words,
        }
    } else {
        After::Nothing
    };
    let plan = puzzle_run::plan(
        p,
        &spec,
        &case.inputs,
        &case.initial_output(),
        case.workgroups,
        after,
    );
    let out = gpu
        .run_plan(&plan, &RunOptions::default(), ctl)
        .await
        .map_err(RunFail::Gpu)?;
    if flagged {
        let words = out.words(gpu_runtime::LOOP_FLAG);
        if let Some(line) = budgeted.stopped_line(&words) {
            return Err(RunFail::LoopStopped {
                line,
                budget: budgeted.budget,
            });
        }
    }
    let output = puzzle_run::floats(out.bytes(puzzle_run::OUT));
    let mut verdict = case.check(&output);
    if verdict.passed() || verdict.wrong > 0 {
        // Right values can still come from a race (two threads writing one element the same
        // value), and wrong ones often do (a read-add-write from several threads loses
        // parts): the access log names it. A kernel the instrumenter cannot log keeps the
        // value verdict; a device failure is the run's.
        verdict.race = match run_logged(gpu, p, &source_of_run, case, ctl).await {
            Ok(l) => l.out.and_then(|out| access::race(&l.summary, out)),
            Err(LogFail::Gpu(e)) => return Err(RunFail::Gpu(e)),
            Err(LogFail::Instrument(_) | LogFail::Layout) => None,
        };
    }
    Ok((verdict, output))
}

/// Checks the bindings (naga, in the editor module), then runs at the puzzle's own size and,
/// when that passes, at each of its other sizes until one fails.
async fn run_puzzle(
    p: &'static Puzzle,
    source: String,
    software: bool,
    ctl: RunControl,
) -> Result<Answer, RunFail> {
    if let Ok(problems) =
        super::code_editor::binding_check(&puzzles::solution(p), &source, "main").await
    {
        if !problems.is_empty() {
            return Err(RunFail::Bindings(problems));
        }
    }
    let (gpu, _) = session::gpu(software).await.map_err(RunFail::Gpu)?;
    // The browser may refuse what naga accepted (a barrier in non-uniform control flow):
    // its own words, placed in the learner's text, instead of a failed pipeline's error.
    let kernel = puzzle_run::spec(source.clone())
        .ok_or_else(|| RunFail::Gpu(GpuError::Shader("no base spec".into())))?;
    let said = browser_placed(&gpu, &kernel, &source).await;
    if rejected(&said) {
        return Err(RunFail::Compiler(said));
    }
    if puzzles::NEEDS_BARRIER.contains(&p.id) && !puzzles::calls_barrier(&source) {
        return Err(RunFail::NoBarrier);
    }
    let mut all = puzzles::cases(p).into_iter();
    let Some(own) = all.next() else {
        return Err(RunFail::Gpu(GpuError::WrongJob));
    };
    let (verdict, output) = run_case(&gpu, p, source.clone(), &own, &ctl).await?;
    let mut answer = Answer {
        verdict,
        output,
        own_size: own.label(),
        inputs: own.inputs,
        sizes: Vec::new(),
        failed_at: None,
    };
    if !answer.verdict.passed() {
        return Ok(answer);
    }
    for case in all {
        // A kernel that no longer declares its size constants is checked at its own size only.
        let Some(text) = puzzles::at_size(p, &source, &case) else {
            continue;
        };
        let (v, _) = run_case(&gpu, p, text, &case, &ctl).await?;
        answer.sizes.push(case.label());
        if !v.passed() {
            answer.failed_at = Some((case.label(), v));
            break;
        }
    }
    Ok(answer)
}

/// The binding problems as sentences: a buffer the answer needs but the kernel never uses is
/// named as such; anything else in the editor's words.
fn bindings_text(ctx: &Ctx, p: &Puzzle, problems: &[BindingProblem]) -> String {
    problems
        .iter()
        .map(|b| {
            let name = b
                .fields
                .iter()
                .find(|(k, _)| *k == "name")
                .map(|(_, v)| v.as_str())
                .unwrap_or_default();
            match b.kind.as_str() {
                "missing" if p.inputs.contains(&name) => {
                    ctx.tf("puzzles.unused_input", &[("name", name)])
                }
                "missing" => ctx.tf("puzzles.unused_output", &[("name", name)]),
                _ => ctx.tf(b.key(), &b.args()),
            }
        })
        .chain(std::iter::once(ctx.t("puzzles.not_sent").to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The access view's state.
#[derive(Clone, Debug, PartialEq)]
enum Accesses {
    Hidden,
    Running,
    Ready {
        summary: Summary,
        arrays: Vec<ArrayInfo>,
        unlogged: u32,
    },
    Failed(String),
}

/// A logged run's decoded log: the counts, the arrays as logged, the accesses the
/// instrumenter could not log, and the number it gave `out`.
struct Logged {
    summary: Summary,
    arrays: Vec<ArrayInfo>,
    unlogged: u32,
    out: Option<u32>,
}

/// Why a logged run gave no log.
enum LogFail {
    /// The instrumenter's reason.
    Instrument(String),
    /// The log would not sit just after `out` (the kernel declares other bindings).
    Layout,
    Gpu(GpuError),
}

/// Runs `source` instrumented (by the editor's naga module) on `case`'s data and launch, with
/// the log bound after `out`: one path for the access view and for Run's race check.
async fn run_logged(
    gpu: &gpu_runtime::Gpu,
    p: &'static Puzzle,
    source: &str,
    case: &puzzles::Case,
    ctl: &RunControl,
) -> Result<Logged, LogFail> {
    let inst = super::code_editor::instrument(source, "main")
        .await
        .map_err(LogFail::Instrument)?;
    if inst.log_binding as usize != puzzle_run::after_out(p) {
        return Err(LogFail::Layout);
    }
    let spec = puzzle_run::spec(inst.source)
        .ok_or_else(|| LogFail::Gpu(GpuError::Shader("no base spec".into())))?;
    let initial = case.initial_output();
    let plan = puzzle_run::plan(
        p,
        &spec,
        &case.inputs,
        &initial,
        case.workgroups,
        After::Log,
    );
    let out = gpu
        .run_plan(&plan, &RunOptions::default(), ctl)
        .await
        .map_err(LogFail::Gpu)?;
    let words = out.words(puzzle_run::LOG);
    let arrays: Vec<ArrayInfo> = inst
        .arrays
        .iter()
        .map(|(name, binding, len)| ArrayInfo {
            name: name.clone(),
            len: access::logical_len(p, &case.inputs, *binding, *len),
            shared: binding.is_none(),
        })
        .collect();
    Ok(Logged {
        summary: access::summarize(
            &words,
            &arrays,
            access::invocations_over(p, case.workgroups),
        ),
        arrays,
        unlogged: inst.unlogged,
        out: access::out_array(p, inst.arrays.iter().map(|(_, b, _)| *b)),
    })
}

/// Runs the learner's kernel again, instrumented, at the puzzle's own size; the decoded counts.
async fn run_accesses(
    ctx: &Ctx,
    p: &'static Puzzle,
    source: String,
    software: bool,
    ctl: RunControl,
) -> Result<Accesses, String> {
    let err = |e: GpuError| error_text(ctx, &e);
    let (gpu, _) = session::gpu(software).await.map_err(err)?;
    let own = puzzles::cases(p).swap_remove(0);
    match run_logged(&gpu, p, &source, &own, &ctl).await {
        Ok(l) => Ok(Accesses::Ready {
            summary: l.summary,
            arrays: l.arrays,
            unlogged: l.unlogged,
        }),
        Err(LogFail::Instrument(e)) => Err(ctx.tf("puzzles.access_failed", &[("why", &e)])),
        Err(LogFail::Layout) => Err(ctx.tf(
            "puzzles.access_layout",
            &[("n", &p.inputs.len().to_string())],
        )),
        Err(LogFail::Gpu(e)) => Err(err(e)),
    }
}

#[function_component]
pub fn PuzzlePage(props: &PuzzleProps) -> Html {
    let ctx = use_context::<Ctx>();
    let puzzle = puzzles::find(&props.id);
    let key = draft_key("puzzle", &props.id);
    let source = {
        let (key, ctx) = (key.clone(), ctx.clone());
        use_state(move || {
            load_draft(&key)
                .or_else(|| Some(starter_text(ctx.as_ref()?, puzzle?)))
                .unwrap_or_default()
        })
    };
    let revision = use_state(|| 0u32);
    let errors = use_state(|| 0usize);
    let outcome = use_state(|| Outcome::Idle);
    // How many times Run has been answered (`data-runs`: a test waits for this run's answer).
    let runs = use_mut_ref(|| 0u32);
    let show_solution = use_state(|| false);
    // The draft that Start over or Use the solution replaced, until the next edit: one click
    // brings it back (a learner's work is never lost to a stray click).
    // (the replaced draft, the text that replaced it)
    let replaced = use_state(|| None::<(String, String)>);
    let accesses = use_state(|| Accesses::Hidden);
    let selected = use_state(|| 0u32);
    // One lifecycle for Run and Show accesses: pressing Run makes an access run in progress
    // stale, so its late result cannot reappear beside the new answer.
    let lifecycle = super::run_lifecycle::use_run::<()>(|| ());
    super::code_work::use_code_work("puzzle", &props.id, &source);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let Some(p) = puzzle else {
        let id: String = props.id.chars().take(40).collect();
        return html! {
            <section class="page">
                <p class="message error" role="alert">{ ctx.tf("puzzles.unknown", &[("id", &id)]) }</p>
                <a href={format!("#/puzzles?lang={}", ctx.lang.code())}>{ ctx.t("puzzles.back") }</a>
            </section>
        };
    };
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);
    let on_change = {
        let (source, key, replaced) = (source.clone(), key.clone(), replaced.clone());
        Callback::from(move |t: String| {
            // The editor reports the replacing text itself too: only another text is an edit.
            if replaced.as_ref().is_some_and(|(_, new)| *new != t) {
                replaced.set(None);
            }
            save_draft(&key, Some(&t));
            source.set(t);
        })
    };
    let on_errors = {
        let errors = errors.clone();
        Callback::from(move |n| errors.set(n))
    };
    let replace = |text: String| {
        let (source, revision, key, outcome, accesses, replaced) = (
            source.clone(),
            revision.clone(),
            key.clone(),
            outcome.clone(),
            accesses.clone(),
            replaced.clone(),
        );
        Callback::from(move |_| {
            if *source != text {
                replaced.set(Some(((*source).clone(), text.clone())));
            }
            save_draft(&key, Some(&text));
            source.set(text.clone());
            revision.set(*revision + 1);
            outcome.set(Outcome::Idle);
            accesses.set(Accesses::Hidden);
        })
    };
    let reset = replace(starter_text(&ctx, p));
    let undo = undo_note(&ctx, &replaced, &source, &revision, &key, &outcome);
    let reveal = {
        let show = show_solution.clone();
        let id = p.id;
        Callback::from(move |_| {
            // In an embed, every later run of this puzzle is reported without credit.
            page_models::outcome::solution_shown(id);
            show.set(true)
        })
    };
    let use_solution = replace(localised(&ctx, p, &puzzles::solution(p)));
    let show_accesses =
        show_accesses_callback(&ctx, p, &source, &accesses, &selected, &lifecycle, software);
    let select = {
        let selected = selected.clone();
        Callback::from(move |i: u32| selected.set(i))
    };
    let run = {
        let (source, outcome, errors, lifecycle, ctx, accesses, runs) = (
            source.clone(),
            outcome.clone(),
            errors.clone(),
            lifecycle.clone(),
            ctx.clone(),
            accesses.clone(),
            runs.clone(),
        );
        Callback::from(move |_| {
            accesses.set(Accesses::Hidden);
            if *errors > 0 {
                *runs.borrow_mut() += 1;
                outcome.set(Outcome::Failed(
                    ctx.tf("editor.has_errors", &[("n", &errors.to_string())]),
                ));
                return;
            }
            let run = lifecycle.start(());
            let (flag, ctl) = (run.token().clone(), run.control(None));
            outcome.set(Outcome::Running);
            let (outcome, ctx, runs) = (outcome.clone(), ctx.clone(), runs.clone());
            let response = (*source).clone();
            run_with_timeout(
                run_puzzle(p, (*source).clone(), software, ctl),
                flag,
                RUN_TIMEOUT_MS,
                move |r| {
                    if !run.finish() {
                        return;
                    }
                    // The code that ran: the learner's response in an embed's outcome.
                    page_models::outcome::set_response(response.clone());
                    page_models::embed::report(answer_report(&ctx, p, &r));
                    *runs.borrow_mut() += 1;
                    outcome.set(answer_outcome(&ctx, p, r));
                },
            );
        })
    };
    let t = |part: &str| ctx.t(&format!("puzzle.{}.{part}", p.id));
    let index = PUZZLES.iter().position(|q| q.id == p.id).unwrap_or(0);
    let next = PUZZLES.get(index + 1);
    let geometry = geometry_text(&ctx, p);
    let external = match &*outcome {
        Outcome::Rejected(list) => list.clone(),
        _ => Rc::default(),
    };
    html! {
        <section class="page puzzle-page" data-puzzle={p.id}>
            <p class="puzzle-nav"><a href={format!("#/puzzles?lang={}", ctx.lang.code())}>{ ctx.t("puzzles.back") }</a></p>
            <h1>{ ctx.tf("puzzles.title", &[("n", &(index + 1).to_string()), ("title", t("title"))]) }</h1>
            <p class="lead">{ t("goal") }</p>
            <super::EmbedButton widget="puzzle" extra={vec![("id", p.id.to_string())]} />
            <p class="puzzle-geometry">{ geometry }</p>
            <CodeEditor doc={AttrValue::from((*source).clone())} revision={*revision}
                on_change={on_change} on_errors={on_errors} external={external} />
            <div class="editor-actions">
                <button id="puzzle-run" class="button primary" onclick={run} disabled={*outcome == Outcome::Running || !has_gpu}>{ ctx.t("editor.run") }</button>
                <button id="puzzle-restart" class="button" onclick={reset}>{ ctx.t("puzzles.restart") }</button>
            </div>
            { undo }
            { if !has_gpu { html!{ <p class="message">{ ctx.t("editor.no_webgpu") }</p> } } else { html!{} } }
            <div class="editor-result" aria-live="polite" data-runs={runs.borrow().to_string()}>{ outcome_view(&ctx, p, &outcome) }</div>
            { if matches!(*outcome, Outcome::Checked { .. }) { html! {
                <div class="access-block">
                    <p class="note">{ ctx.t("puzzles.access_intro") }</p>
                    <button id="puzzle-accesses" class="button" onclick={show_accesses}
                        disabled={*accesses == Accesses::Running}>{ ctx.t("puzzles.show_accesses") }</button>
                    { access_view(&ctx, p, &accesses, *selected, &select) }
                </div>
            } } else { html!{} } }
            <details class="hint"><summary>{ ctx.t("puzzles.hint1") }</summary><p>{ t("hint1") }</p></details>
            <details class="hint"><summary>{ ctx.t("puzzles.hint2") }</summary><p>{ t("hint2") }</p></details>
            <div class="solution">
                if *show_solution {
                    <p class="note solution-credit" role="status">{ ctx.t("puzzles.solution_no_credit") }</p>
                    <pre class="source"><code>{ puzzles::solution_body(p) }</code></pre>
                    <button class="button" onclick={use_solution}>{ ctx.t("puzzles.use_solution") }</button>
                } else {
                    <button class="button" onclick={reveal}>{ ctx.t("puzzles.reveal") }</button>
                }
            </div>
            { for next.map(|q| html! { <p class="puzzle-nav"><a href={href(&ctx, q.id)}>{ ctx.tf("puzzles.next", &[("title", ctx.t(&format!("puzzle.{}.title", q.id)))]) }</a></p> }) }
        </section>
    }
}

/// A size as the message names it: "N = 5" for one size constant, "37×29" for several.
fn size_name(p: &Puzzle, label: &str) -> String {
    match p.sizing.map(|s| s.consts) {
        Some([one]) => format!("{one} = {label}"),
        _ => label.to_string(),
    }
}

fn outcome_view(ctx: &Ctx, p: &Puzzle, outcome: &Outcome) -> Html {
    match outcome {
        Outcome::Idle => html! {},
        Outcome::Running => {
            html! { <p class="message" role="status">{ ctx.t("editor.running") }</p> }
        }
        Outcome::Failed(m) => html! { <p class="message error" role="alert">{ m.clone() }</p> },
        Outcome::Rejected(list) => html! {
            <>
                { browser_messages_view(ctx, list) }
                <p class="message error" role="alert">{ ctx.t("editor.browser.rejected") }</p>
            </>
        },
        Outcome::TimedOut => html! {
            <p class="message error" role="alert">{ ctx.tf("editor.timed_out", &[("s", &(RUN_TIMEOUT_MS / 1000).to_string())]) }</p>
        },
        Outcome::Checked {
            verdict,
            output,
            inputs,
            own_size,
            sizes,
            failed_at,
        } => {
            let expected = (p.reference)(inputs);
            let cell = |i: usize| {
                let got = output.get(i).copied().unwrap_or(puzzles::SENTINEL);
                let unwritten = got.to_bits() == puzzles::SENTINEL.to_bits();
                let ok = expected
                    .get(i)
                    .is_some_and(|e| (got - e).abs() <= 1e-6 * e.abs().max(1.0));
                let class = if unwritten {
                    "unwritten"
                } else if ok {
                    "ok"
                } else {
                    "wrong"
                };
                html! { <td class={class}>{ if unwritten { "·".to_string() } else { format!("{got}") } }</td> }
            };
            // One wrong or unwritten element, as both verdicts list them.
            let mismatch = |m: &puzzles::Mismatch| {
                html! {
                    <li>{ match m.got {
                        Some(g) => ctx.tf("puzzles.mismatch", &[("i", &m.index.to_string()), ("expected", &m.expected.to_string()), ("got", &g.to_string())]),
                        None => ctx.tf("puzzles.unwritten", &[("i", &m.index.to_string()), ("expected", &m.expected.to_string())]),
                    } }</li>
                }
            };
            // A race fails the answer whatever its values: at the own size or the first other.
            // Right values with a race: the race is the verdict. Wrong values with a race:
            // the wrong values are, with the race said as why (below).
            let race = verdict
                .race
                .as_ref()
                .filter(|_| verdict.values_right())
                .map(|r| (own_size, r))
                .or_else(|| {
                    failed_at
                        .as_deref()
                        .and_then(|(size, v)| v.race.as_ref().map(|r| (size, r)))
                });
            let summary = if let Some((size, r)) = race {
                race_view(ctx, p, size, r)
            } else if let (true, Some((size, v))) = (verdict.passed(), failed_at.as_deref()) {
                let n = v.first.len().max(v.wrong);
                let named = size_name(p, size);
                html! {
                    <div class="verdict wrong" role="alert" data-failed-size={size.clone()}>
                        <p>{ if v.wrong > 0 {
                            ctx.tf("puzzles.wrong_at", &[("size", &named), ("wrong", &v.wrong.to_string())])
                        } else {
                            ctx.tf("puzzles.past_end_at", &[("size", &named), ("n", &v.written_past_end.to_string())])
                        } }</p>
                        <p>{ ctx.t("puzzles.sizes_why") }</p>
                        <ul class="mismatches">
                            { for v.first.iter().take(n.min(3)).map(mismatch) }
                        </ul>
                    </div>
                }
            } else if verdict.passed() {
                html! {
                    <div class="verdict ok" role="status">
                        <p>{ ctx.t("puzzles.passed") }</p>
                        { if sizes.is_empty() { html!{} } else { html!{ <p>{ ctx.tf("puzzles.sizes_passed", &[("sizes", &sizes.join(", "))]) }</p> } } }
                    </div>
                }
            } else {
                html! {
                    <div class="verdict wrong" role="alert">
                        // "0 of 4 wrong" beside "4 written past the end" reads as a contradiction:
                        // a count of wrong elements only when there are some.
                        { if verdict.wrong > 0 || verdict.written_past_end == 0 { html!{ <p>{ ctx.tf("puzzles.failed", &[("wrong", &verdict.wrong.to_string()), ("n", &p.output_len.to_string())]) }</p> } } else { html!{} } }
                        { if verdict.written_past_end > 0 { html!{ <p>{ ctx.tf("puzzles.past_end", &[("n", &verdict.written_past_end.to_string())]) }</p> } } else { html!{} } }
                        // The wrong values come from a race: say why, before the values.
                        { for verdict.race.as_ref().map(|r| html! {
                            <p id="puzzle-race" data-index={r.index.to_string()}>{ ctx.tf("puzzles.race_wrong", &[
                                ("array", puzzle_run::OUT),
                                ("i", &r.index.to_string()),
                                ("threads", &writers_text(ctx, p, r)),
                                ("sentinel", &numbers::number(f64::from(puzzles::SENTINEL))),
                            ]) }</p>
                        }) }
                        <ul class="mismatches">
                            { for verdict.first.iter().map(mismatch) }
                        </ul>
                    </div>
                }
            };
            html! {
                <>
                    { summary }
                    <div class="table-scroll">
                        <table class="puzzle-out">
                            // The table is the puzzle's own size, where a size-only answer is
                            // all green: say so, or it contradicts the failure above it.
                            { if failed_at.is_some() {
                                html! { <caption>{ ctx.tf("puzzles.table_own_size", &[("n", &p.output_len.to_string())]) }</caption> }
                            } else { html! {} } }
                            <tr><th>{ ctx.t("puzzles.expected") }</th>{ for expected.iter().map(|e| html!{ <td>{ format!("{e}") }</td> }) }</tr>
                            <tr><th>{ ctx.t("puzzles.got") }</th>{ for (0..p.output_len).map(cell) }</tr>
                        </table>
                    </div>
                </>
            }
        }
    }
}

/// The race verdict: the element of `out` several threads wrote, the threads, and the size.
fn race_view(ctx: &Ctx, p: &Puzzle, size: &str, r: &access::Overwrite) -> Html {
    let mut args = vec![
        ("array", puzzle_run::OUT.to_string()),
        ("i", r.index.to_string()),
        ("threads", writers_text(ctx, p, r)),
    ];
    let key = if size.is_empty() {
        "puzzles.race"
    } else {
        args.push(("size", size_name(p, size)));
        "puzzles.race_at"
    };
    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
    html! {
        <div class="verdict wrong" role="alert" id="puzzle-race" data-index={r.index.to_string()} data-size={size.to_string()}>
            <p>{ ctx.tf(key, &args) }</p>
        </div>
    }
}

/// The threads that wrote one element, as a sentence lists them ("0, 1, 2 and 3").
fn writers_text(ctx: &Ctx, p: &Puzzle, r: &access::Overwrite) -> String {
    // Up to four named; past that, three and a count of the others.
    let shown = if r.writers.len() > 4 { 3 } else { 4 };
    let mut names: Vec<String> = r
        .writers
        .iter()
        .take(shown)
        .map(|w| thread_name(p, *w))
        .collect();
    if r.writers.len() > shown {
        names.push(ctx.tf(
            "puzzles.race_more",
            &[("n", &(r.writers.len() - shown).to_string())],
        ));
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => ctx.tf(
            "puzzles.race_and",
            &[("rest", &rest.join(", ")), ("last", last)],
        ),
        _ => names.join(""),
    }
}

/// The access view: per-invocation counters (each invocation a button: hover, focus or click
/// selects it) and, per logged array, a strip of its elements coloured by what the selected
/// invocation did to them.
/// A thread as the access view names it: its index in a 1-D launch, its local (x, y) in a
/// 2-D workgroup.
fn thread_name(p: &Puzzle, inv: u32) -> String {
    if p.workgroup_size[1] * p.workgroup_size[2] > 1 {
        access::thread_label(p.workgroup_size, inv)
    } else {
        inv.to_string()
    }
}

fn access_view(ctx: &Ctx, p: &Puzzle, a: &Accesses, selected: u32, select: &Callback<u32>) -> Html {
    let (summary, arrays, unlogged) = match a {
        Accesses::Hidden => return html! {},
        Accesses::Running => {
            return html! { <p class="message" role="status">{ ctx.t("puzzles.access_running") }</p> }
        }
        Accesses::Failed(m) => {
            return html! { <p class="message error" role="alert" id="access-error">{ m.clone() }</p> }
        }
        Accesses::Ready {
            summary,
            arrays,
            unlogged,
        } => (summary, arrays, *unlogged),
    };
    let n = summary.reads.len() as u32;
    let oob = summary.total_out_of_bounds();
    let row = |label: &str, v: &[u32], warn: bool| {
        html! {
            <tr><th scope="row">{ label.to_string() }</th>
                { for v.iter().map(|c| html!{ <td class={classes!((warn && *c > 0).then_some("bad"))}>{ c }</td> }) }
            </tr>
        }
    };
    let mine: Vec<_> = summary.of(selected).collect();
    let strip = |num: usize, info: &ArrayInfo| {
        let touched = summary
            .records
            .iter()
            .filter(|r| r.array as usize == num)
            .map(|r| r.index as usize + 1)
            .max()
            .unwrap_or(0);
        let shown = info
            .len
            .max(touched)
            .min(info.len + puzzles::GUARD)
            .min(256);
        let name = if info.shared {
            format!("{} {}", info.name, ctx.t("puzzles.access_workgroup"))
        } else {
            info.name.clone()
        };
        html! {
            <div class="table-scroll">
                <table class="access-strip" data-array={info.name.clone()}>
                    <tr><th scope="row">{ name }</th>
                    { for (0..shown).map(|i| {
                        let k = mine
                            .iter()
                            .filter(|r| r.array as usize == num && r.index as usize == i)
                            .fold(0, |k, r| k | r.kind);
                        let kind = match k {
                            1 => "r",
                            2 => "w",
                            3 => "rw",
                            _ => "",
                        };
                        html! {
                            <td class={classes!(
                                (k & access::READ != 0).then_some("acc-read"),
                                (k & access::WRITE != 0).then_some("acc-write"),
                                (i >= info.len).then_some("acc-past"),
                            )} data-index={i.to_string()} data-kind={kind}>{ i }</td>
                        }
                    }) }
                    </tr>
                </table>
            </div>
        }
    };
    let inv = |i: u32| {
        let (a, b, c) = (select.clone(), select.clone(), select.clone());
        html! {
            <th scope="col">
                <button class={classes!("inv", (i == selected).then_some("selected"))}
                    data-inv={i.to_string()} aria-pressed={(i == selected).to_string()}
                    onmouseenter={Callback::from(move |_| a.emit(i))}
                    onfocus={Callback::from(move |_| b.emit(i))}
                    onclick={Callback::from(move |_: MouseEvent| c.emit(i))}>{ thread_name(p, i) }</button>
            </th>
        }
    };
    let s = selected as usize;
    let at = |v: &Vec<u32>| v.get(s).copied().unwrap_or(0).to_string();
    html! {
        <div class="access-view" id="puzzle-access-view" data-oob={oob.to_string()} data-selected={selected.to_string()}>
            <p class="access-totals">{ ctx.tf("puzzles.access_totals", &[
                ("n", &summary.attempted.to_string()),
                ("oob", &oob.to_string()),
                ("shared", &summary.total_shared().to_string()),
            ]) }</p>
            { for summary.overwritten.first().map(|o| {
                let array = arrays.get(o.array as usize).map(|a| a.name.clone()).unwrap_or_default();
                html! {
                    <p class="message error" id="access-overwritten" data-count={summary.overwritten.len().to_string()}>{ ctx.tf("puzzles.access_overwritten", &[
                        ("n", &summary.overwritten.len().to_string()),
                        ("array", &array),
                        ("i", &o.index.to_string()),
                        ("threads", &writers_text(ctx, p, o)),
                    ]) }</p>
                }
            }) }
            { if summary.dropped > 0 { html!{ <p class="message">{ ctx.tf("puzzles.access_dropped", &[("n", &summary.dropped.to_string())]) }</p> } } else { html!{} } }
            { if unlogged > 0 { html!{ <p class="message">{ ctx.tf("puzzles.access_unlogged", &[("n", &unlogged.to_string())]) }</p> } } else { html!{} } }
            <div class="table-scroll">
                <table class="access-counts">
                    <tr><th scope="col">{ ctx.t("puzzles.access_invocation") }</th>{ for (0..n.min(256)).map(inv) }</tr>
                    { row(ctx.t("puzzles.access_reads"), &summary.reads, false) }
                    { row(ctx.t("puzzles.access_writes"), &summary.writes, false) }
                    { row(ctx.t("puzzles.access_shared"), &summary.shared, false) }
                    { row(ctx.t("puzzles.access_oob"), &summary.out_of_bounds, true) }
                </table>
            </div>
            <p class="access-selected" aria-live="polite">{ ctx.tf("puzzles.access_selected", &[
                ("i", &thread_name(p, selected)),
                ("r", &at(&summary.reads)),
                ("w", &at(&summary.writes)),
                ("s", &at(&summary.shared)),
                ("o", &at(&summary.out_of_bounds)),
            ]) }</p>
            { for arrays.iter().enumerate().map(|(num, info)| strip(num, info)) }
            <p class="access-legend">
                <span class="acc-key acc-read">{ ctx.t("puzzles.access_read") }</span>
                <span class="acc-key acc-write">{ ctx.t("puzzles.access_written") }</span>
                <span class="acc-key acc-read acc-write">{ ctx.t("puzzles.access_both") }</span>
                <span class="acc-key acc-past">{ ctx.t("puzzles.access_past") }</span>
            </p>
        </div>
    }
}

/// Show accesses: runs the logging copy of the kernel under the page's one run lifecycle.
fn show_accesses_callback(
    ctx: &Ctx,
    p: &'static Puzzle,
    source: &UseStateHandle<String>,
    accesses: &UseStateHandle<Accesses>,
    selected: &UseStateHandle<u32>,
    lifecycle: &super::run_lifecycle::RunHandle<()>,
    software: bool,
) -> Callback<MouseEvent> {
    let (source, accesses, selected, lifecycle, ctx) = (
        source.clone(),
        accesses.clone(),
        selected.clone(),
        lifecycle.clone(),
        ctx.clone(),
    );
    Callback::from(move |_| {
        let run = lifecycle.start(());
        let (flag, ctl) = (run.token().clone(), run.control(None));
        accesses.set(Accesses::Running);
        selected.set(0);
        let (accesses, ctx2, source) = (accesses.clone(), ctx.clone(), (*source).clone());
        let ctx = ctx.clone();
        run_with_timeout(
            async move { run_accesses(&ctx2, p, source, software, ctl).await },
            flag,
            RUN_TIMEOUT_MS,
            move |r| {
                if !run.finish() {
                    return;
                }
                accesses.set(match r {
                    None => Accesses::Failed(ctx.tf(
                        "editor.timed_out",
                        &[("s", &(RUN_TIMEOUT_MS / 1000).to_string())],
                    )),
                    Some(Ok(a)) => a,
                    Some(Err(m)) => Accesses::Failed(m),
                });
            },
        );
    })
}

/// "Your draft was replaced" with a button that brings it back, while there is one.
fn undo_note(
    ctx: &Ctx,
    replaced: &UseStateHandle<Option<(String, String)>>,
    source: &UseStateHandle<String>,
    revision: &UseStateHandle<u32>,
    key: &str,
    outcome: &UseStateHandle<Outcome>,
) -> Html {
    let Some((old, _)) = replaced.as_ref() else {
        return html! {};
    };
    let restore = {
        let (source, revision, key, outcome, replaced, old) = (
            source.clone(),
            revision.clone(),
            key.to_string(),
            outcome.clone(),
            replaced.clone(),
            old.clone(),
        );
        Callback::from(move |_| {
            save_draft(&key, Some(&old));
            source.set(old.clone());
            revision.set(*revision + 1);
            outcome.set(Outcome::Idle);
            replaced.set(None);
        })
    };
    html! {
        <p class="note puzzle-replaced" role="status">
            { ctx.t("puzzles.replaced") }{ " " }
            <button id="puzzle-undo" class="button" onclick={restore}>{ ctx.t("puzzles.undo") }</button>
        </p>
    }
}

/// What a run's answer reports to an embedding page. A run that fails because of the
/// learner's code (bindings, a loop, WGSL that does not compile) is a normal outcome:
/// `passed: false` with the page's own words as `reason`, in the page's language. Only a
/// failure of the machinery (timeout, device) is an `error`.
fn answer_report(
    ctx: &Ctx,
    p: &Puzzle,
    r: &Option<Result<Answer, RunFail>>,
) -> Result<page_models::embed::Report, String> {
    let failed = |reason: String| Ok(failed_report(p.id, reason));
    match r {
        Some(Ok(a)) => Ok(puzzle_report(p.id, &a.verdict, a.failed_at.is_none())),
        None => Err("timed out".into()),
        Some(Err(RunFail::Gpu(e @ GpuError::Shader(_)))) => failed(error_text(ctx, e)),
        Some(Err(RunFail::Gpu(e))) => Err(e.to_string()),
        Some(Err(RunFail::Bindings(b))) => failed(bindings_text(ctx, p, b)),
        Some(Err(RunFail::Compiler(list))) => failed(rejected_text(ctx, list)),
        Some(Err(RunFail::NoBarrier)) => failed(ctx.t("puzzles.no_barrier").to_string()),
        Some(Err(RunFail::LoopStopped { line, budget })) => {
            failed(super::editor_page::loop_stopped_text(ctx, *line, *budget))
        }
        Some(Err(RunFail::Budget(e))) => failed(ctx.tf(
            "editor.loop_budget_failed",
            &[("why", &super::code_editor::editor_error(ctx, e))],
        )),
    }
}

/// The page's words for a kernel the browser's compiler refused, with its messages (what an
/// embedding page gets as `reason`).
fn rejected_text(ctx: &Ctx, list: &[PlacedMessage]) -> String {
    let mut out = ctx.t("editor.browser.rejected").to_string();
    for m in list.iter().filter(|m| !m.warning) {
        out.push(' ');
        if m.line > 0 {
            out.push_str(&ctx.tf(
                "editor.browser.place",
                &[
                    ("line", &m.line.to_string()),
                    ("column", &m.column.to_string()),
                ],
            ));
            out.push(' ');
        }
        out.push_str(&m.message);
    }
    out
}

/// What a run's answer shows (`None`: it timed out); a passed check marks the puzzle solved.
fn answer_outcome(ctx: &Ctx, p: &Puzzle, r: Option<Result<Answer, RunFail>>) -> Outcome {
    match r {
        None => Outcome::TimedOut,
        Some(Ok(a)) => {
            if a.verdict.passed() && a.failed_at.is_none() {
                mark_solved(p.id);
            }
            Outcome::Checked {
                verdict: a.verdict,
                output: a.output,
                inputs: a.inputs,
                own_size: a.own_size,
                sizes: a.sizes,
                failed_at: a.failed_at.map(Box::new),
            }
        }
        Some(Err(RunFail::Gpu(GpuError::Cancelled))) => Outcome::Idle,
        Some(Err(RunFail::Gpu(e))) => Outcome::Failed(error_text(ctx, &e)),
        Some(Err(RunFail::Bindings(b))) => Outcome::Failed(bindings_text(ctx, p, &b)),
        Some(Err(RunFail::Compiler(list))) => Outcome::Rejected(Rc::new(list)),
        Some(Err(RunFail::NoBarrier)) => Outcome::Failed(ctx.t("puzzles.no_barrier").to_string()),
        Some(Err(RunFail::LoopStopped { line, budget })) => {
            Outcome::Failed(super::editor_page::loop_stopped_text(ctx, line, budget))
        }
        Some(Err(RunFail::Budget(e))) => Outcome::Failed(ctx.tf(
            "editor.loop_budget_failed",
            &[("why", &super::code_editor::editor_error(ctx, &e))],
        )),
    }
}

/// The launch in words: workgroups, their size, the inputs and the output's length.
/// The puzzle's starter with its comments in the page's language.
fn starter_text(ctx: &Ctx, p: &Puzzle) -> String {
    localised(ctx, p, &puzzles::starter(p))
}

/// A starter or solution with the puzzle's title and goal as its header comment and the
/// hole's TODO explained, from the translation files (the shader's own header is English).
fn localised(ctx: &Ctx, p: &Puzzle, source: &str) -> String {
    let header = ctx.tf(
        "puzzles.starter.header",
        &[
            ("title", ctx.t(&format!("puzzle.{}.title", p.id))),
            ("goal", ctx.t(&format!("puzzle.{}.goal", p.id))),
        ],
    );
    puzzles::localised(source, &header, ctx.t("puzzles.starter.todo"))
}

fn geometry_text(ctx: &Ctx, p: &Puzzle) -> String {
    ctx.tf(
        "puzzles.geometry",
        &[
            (
                "groups",
                &format!(
                    "{}×{}×{}",
                    p.workgroups[0], p.workgroups[1], p.workgroups[2]
                ),
            ),
            (
                "size",
                &format!(
                    "{}×{}×{}",
                    p.workgroup_size[0], p.workgroup_size[1], p.workgroup_size[2]
                ),
            ),
            ("inputs", &p.inputs.join(", ")),
            ("n", &p.output_len.to_string()),
        ],
    )
}
