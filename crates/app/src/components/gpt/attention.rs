//! The GPT page's attention maps: a prompt the learner types, run through the model the page
//! is training as it stands (`GptSession::request_attention`, between the driver's chunks
//! on the same session), every layer's and head's probabilities drawn as a map, and the CPU
//! twin's recomputation from the same parameters (`Maps::check`) said beside them. Hovering,
//! tapping or focusing a character shows where it looks in every head. The prompt's rules
//! and the shades are `page_models::gpt_inside`'s.

use std::cell::RefCell;
use std::rc::Rc;

use gpu_runtime::engine::gpt::{Check, Maps};
use gpu_runtime::gpt::Corpus;
use page_models::gpt_inside::{labels, level, prompt_tokens};
use yew::prelude::*;

use crate::components::Ctx;
use crate::train_driver::gpt::GptDriver as Driver;

pub type DriverCell = Rc<RefCell<Option<Driver>>>;

/// Ticks of 16 ms to wait for the maps (a software adapter's chunk can take seconds).
const MAX_TICKS: u32 = 4000;
/// The default prompt's characters at most.
const DEFAULT_CHARS: usize = 8;

#[derive(Properties)]
pub struct Props {
    pub driver: DriverCell,
    pub corpus: Rc<Corpus>,
}

impl PartialEq for Props {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.driver, &o.driver) && Rc::ptr_eq(&self.corpus, &o.corpus)
    }
}

/// What the section shows.
#[derive(Clone, PartialEq)]
enum View {
    Idle,
    Pending,
    Ready(Rc<(Maps, Result<Check, String>, Vec<String>)>),
    /// A note's key and arguments.
    Note(&'static str, Vec<(&'static str, String)>),
}

/// Waits for the session between its chunks, asks for the maps and collects them; keeps
/// polling after the section is gone, so the readback never stays pending.
async fn fetch(driver: DriverCell, tokens: Vec<u32>) -> Result<Maps, View> {
    let run = driver.borrow().as_ref().map(|d| d.run);
    let mut requested = false;
    for _ in 0..MAX_TICKS {
        gloo::timers::future::TimeoutFuture::new(16).await;
        let Ok(mut guard) = driver.try_borrow_mut() else {
            continue;
        };
        let Some(d) = guard.as_mut().filter(|d| Some(d.run) == run) else {
            return Err(View::Note("gpt.attn.reset", vec![]));
        };
        let Some(s) = d.gpu.session.as_mut() else {
            return Err(View::Note("gpt.attn.no_gpu", vec![]));
        };
        let failed = |e: gpu_runtime::GpuError| {
            View::Note("gpt.attn.failed", vec![("detail", e.to_string())])
        };
        if !requested {
            requested = s.request_attention(&tokens).map_err(failed)?;
        } else if let Some(m) = s.poll_attention().map_err(failed)? {
            return Ok(m);
        }
    }
    Err(View::Note("gpt.attn.timeout", vec![]))
}

#[function_component]
pub fn AttentionView(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let corpus = props.corpus.clone();
    let text = use_state(move || {
        let first = corpus.val.first().or(corpus.train.first());
        let s = first.map(|d| corpus.vocab.decode(d)).unwrap_or_default();
        s.chars().take(DEFAULT_CHARS).collect::<String>()
    });
    let view = use_state(|| View::Idle);
    let selected = use_state(|| None::<usize>);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let on_input = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                text.set(i.value());
            }
        })
    };
    let on_submit = {
        let (text, view, selected) = (text.clone(), view.clone(), selected.clone());
        let (driver, corpus) = (props.driver.clone(), props.corpus.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if *view == View::Pending {
                return;
            }
            let context = driver
                .borrow()
                .as_ref()
                .and_then(|d| d.gpu.session.as_ref().map(|s| s.config().context));
            let Some(context) = context else {
                view.set(View::Note("gpt.attn.no_gpu", vec![]));
                return;
            };
            let prompt = (*text).clone();
            let tokens = match prompt_tokens(&prompt, &corpus.vocab, context) {
                Ok(t) => t,
                Err(err) => {
                    let (key, args) = err.message();
                    view.set(View::Note(key, args));
                    return;
                }
            };
            view.set(View::Pending);
            selected.set(None);
            let (driver, view) = (driver.clone(), view.clone());
            wasm_bindgen_futures::spawn_local(async move {
                view.set(match fetch(driver, tokens).await {
                    Ok(m) => {
                        let check = m.check();
                        View::Ready(Rc::new((m, check, labels(&prompt))))
                    }
                    Err(v) => v,
                });
            });
        })
    };
    let state = match &*view {
        View::Idle => "idle",
        View::Pending => "pending",
        View::Ready(_) => "ready",
        View::Note(..) => "note",
    };
    html! {
        <section class="panel gpt-attn" id="gpt-attn" data-state={state}>
            <h2>{ ctx.t("gpt.attn.heading") }</h2>
            <p>{ ctx.t("gpt.attn.intro") }</p>
            <form class="gpt-attn-form" onsubmit={on_submit}>
                <label class="field">
                    <span>{ ctx.t("gpt.attn.prompt") }</span>
                    <input id="gpt-attn-prompt" type="text" value={(*text).clone()} oninput={on_input}
                        autocomplete="off" spellcheck="false" />
                </label>
                <button id="gpt-attn-show" class="button primary" type="submit"
                    disabled={*view == View::Pending}>{ ctx.t("gpt.attn.show") }</button>
            </form>
            { match &*view {
                View::Idle => html! {},
                View::Pending => html! { <p class="status running">{ ctx.t("gpt.attn.pending") }</p> },
                View::Note(key, args) => {
                    let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    html! { <p class="message error" role="alert" id="gpt-attn-note" data-note={*key}>{ ctx.tf(key, &args) }</p> }
                }
                View::Ready(r) => maps_view(&ctx, r, *selected, &selected),
            } }
        </section>
    }
}

/// The maps, the character strip that picks a position, and the twin's word on them.
fn maps_view(
    ctx: &Ctx,
    r: &(Maps, Result<Check, String>, Vec<String>),
    sel: Option<usize>,
    selected: &UseStateHandle<Option<usize>>,
) -> Html {
    let (m, check, labels) = r;
    let n = m.tokens.len();
    // Without a pick: the last character, whose row predicts the next.
    let at = sel.unwrap_or(n - 1).min(n - 1);
    let pick = |i: usize| {
        let s = selected.clone();
        Callback::from(move |_: ()| s.set(Some(i)))
    };
    let chars = html! {
        <div class="gpt-attn-chars" role="group" aria-label={ctx.t("gpt.attn.pick")}>
            { for labels.iter().enumerate().map(|(i, l)| {
                let p = pick(i);
                let (on_enter, on_focus, on_click) = (p.reform(|_: MouseEvent| ()),
                    p.reform(|_: FocusEvent| ()), p.reform(|_: MouseEvent| ()));
                html! {
                    <button type="button" class={classes!("gpt-attn-char", (i == at).then_some("on"))}
                        data-pos={i.to_string()} aria-pressed={(i == at).to_string()}
                        onmouseenter={on_enter} onfocus={on_focus} onclick={on_click}>{ l.clone() }</button>
                }
            }) }
        </div>
    };
    let (l_count, heads) = (m.probs.len(), m.cfg.heads);
    let note = match check {
        Ok(c) if c.within => html! {
            <p class="hint" id="gpt-attn-check" data-within="true">{ ctx.tf("gpt.attn.agree", &[
                ("diff", &numbers::sci(c.max_diff)), ("bound", &numbers::sci(c.max_bound)),
            ]) }</p>
        },
        Ok(c) => html! {
            <p class="message error" id="gpt-attn-check" data-within="false">{ ctx.tf("gpt.attn.disagree", &[
                ("diff", &numbers::sci(c.max_diff)), ("bound", &numbers::sci(c.max_bound)),
            ]) }</p>
        },
        Err(e) => {
            html! { <p class="message error" id="gpt-attn-check">{ ctx.tf("gpt.attn.failed", &[("detail", e)]) }</p> }
        }
    };
    let key = if m.steps == 0 {
        "gpt.attn.untrained"
    } else {
        "gpt.attn.trained"
    };
    html! {
        <div class="gpt-attn-result" id="gpt-attn-result" data-layers={l_count.to_string()}
            data-heads={heads.to_string()} data-n={n.to_string()} data-at={at.to_string()}
            data-steps={m.steps.to_string()}>
            <p>{ ctx.tf(key, &[("steps", &numbers::count(m.steps))]) }</p>
            <p class="hint">{ ctx.t("gpt.attn.pick") }</p>
            { chars }
            <div class="gpt-attn-grid">
                { for (0..l_count).flat_map(|l| (0..heads).map(move |h| (l, h))).map(|(l, h)| {
                    head_view(ctx, m, labels, l, h, at)
                }) }
            </div>
            { note }
        </div>
    }
}

/// One head's map (rows: positions, columns: where each looks; the picked row outlined) and
/// the prompt shaded by where the picked position looks.
fn head_view(ctx: &Ctx, m: &Maps, labels: &[String], l: usize, h: usize, at: usize) -> Html {
    let n = m.tokens.len();
    let title = ctx.tf(
        "gpt.attn.head",
        &[
            ("layer", &(l + 1).to_string()),
            ("head", &(h + 1).to_string()),
        ],
    );
    html! {
        <figure class="gpt-attn-head" data-layer={l.to_string()} data-head={h.to_string()}>
            <figcaption>{ title.clone() }</figcaption>
            <svg class="gpt-attn-map" viewBox={format!("0 0 {n} {n}")} role="img" aria-label={title}>
                { for (0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).map(|(i, j)| html! {
                    <rect x={j.to_string()} y={i.to_string()} width="1" height="1"
                        class={format!("attn-s{}", level(m.prob(l, h, i, j)))} />
                }) }
                <rect class="attn-row" x="0" y={at.to_string()} width={n.to_string()} height="1" />
            </svg>
            <p class="gpt-attn-looks">
                { for labels.iter().enumerate().map(|(j, c)| {
                    let s = level(m.prob(l, h, at, j));
                    html! { <span class={format!("attn-s{s}")} data-level={s.to_string()}>{ c.clone() }</span> }
                }) }
            </p>
        </figure>
    }
}
