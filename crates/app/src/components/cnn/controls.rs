//! The CNN page's controls: Play / Pause, Step, Reset with the status line, and the settings,
//! each written to the URL (`page_models::cnn::settings`), from where the page restarts the
//! network or, for the learning rate, changes it live.

use yew::prelude::*;

use cnn::net::Optimiser;
use cnn::spec::MAX_KERNEL;
use cnn::Spec;
use page_models::cnn::board::{Action, CnnPage, Point};
use page_models::cnn::settings::{
    add_block, batch_param, block_params, lr_param, momentum_param, optimiser_param, remove_block,
    seed_param,
};
use page_models::train::run::{GpuState, Phase};

use super::{error_text, Page, SetQuery};
use crate::components::draft_input::DraftInput;
use crate::components::Ctx;

/// Play / Pause, Step and Reset, and what the page is doing. Train and Step wait for the
/// digits (`ready`): there is nothing to train on before them.
pub fn toolbar(ctx: &Ctx, page: &Page, dispatch: &Callback<Action>, ready: bool) -> Html {
    let playing = page.playing;
    let status = match page.phase() {
        Phase::Running => ctx.t("cnn.status.running").to_string(),
        Phase::Held => ctx.t("cnn.status.held").to_string(),
        Phase::Pausing { finishing } => {
            ctx.tf("cnn.status.finishing", &[("n", &numbers::count(finishing))])
        }
        Phase::Paused => ctx.t("cnn.status.paused").to_string(),
    };
    html! {
        <div class="train-toolbar">
            <button id="cnn-play" class="button primary" disabled={!ready && !playing}
                onclick={dispatch.reform(move |_| if playing { Action::Pause } else { Action::Play })}>
                { ctx.t(if playing { "cnn.pause" } else { "cnn.play" }) }
            </button>
            <button id="cnn-step" class="button" disabled={playing || !ready}
                onclick={dispatch.reform(|_| Action::Step)}>{ ctx.t("cnn.step") }</button>
            <button id="cnn-reset" class="button" onclick={dispatch.reform(|_| Action::Reset)}>
                { ctx.t("cnn.reset") }
            </button>
            <span id="cnn-status" class="train-status" role="status"
                data-phase={phase_code(page)} data-gpu={gpu_code(&page.gpu_state)}
                data-gpu-steps={page.gpu_steps().map(|n| n.to_string())}
                data-cpu-steps={page.cpu_steps.to_string()}
                data-gpu-test={last_test(&page.curves.gpu)} data-cpu-test={last_test(&page.curves.cpu)}
                data-gpu-first-test={first_test(&page.curves.gpu)}>{ status }</span>
        </div>
    }
}

/// For tests and embeds: the GPU side's state.
fn gpu_code(s: &GpuState) -> &'static str {
    match s {
        GpuState::Unavailable => "none",
        GpuState::Starting => "starting",
        GpuState::Ready => "ready",
        GpuState::Lost(_) => "lost",
        GpuState::Failed(_) => "failed",
    }
}

/// A side's last test evaluation as "step loss accuracy" (tests read it).
fn last_test(curve: &[Point]) -> Option<String> {
    curve.iter().rev().find_map(|p| {
        p.test
            .map(|s| format!("{} {} {}", p.step, s.loss, s.accuracy))
    })
}

fn first_test(curve: &[Point]) -> Option<String> {
    curve.iter().find_map(|p| {
        p.test
            .map(|s| format!("{} {} {}", p.step, s.loss, s.accuracy))
    })
}

fn phase_code(page: &CnnPage) -> &'static str {
    match page.phase() {
        Phase::Running => "running",
        Phase::Held => "held",
        Phase::Pausing { .. } => "pausing",
        Phase::Paused => "paused",
    }
}

#[derive(Properties, PartialEq)]
pub struct SettingsProps {
    pub spec: Spec,
    pub lr_text: String,
    pub batch_text: String,
    /// The largest batch this device holds for the network.
    pub max_batch: usize,
    pub set_query: SetQuery,
    pub dispatch: Callback<Action>,
}

fn typed_value(e: &InputEvent) -> String {
    let el: web_sys::HtmlInputElement = e.target_unchecked_into();
    el.value()
}

/// The network and the run's settings.
#[function_component]
pub fn SettingsPanel(p: &SettingsProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let set = p.set_query.clone();
    let write = move |r: Result<(&'static str, String), cnn::SpecError>| {
        if let Ok(pair) = r {
            set.emit(vec![pair]);
        }
    };
    let lr_error = cnn::spec::parse_lr(&p.lr_text).err();
    let batch_error = batch_param(&p.batch_text, p.max_batch).err();
    let on_lr = {
        let (dispatch, write) = (p.dispatch.clone(), write.clone());
        Callback::from(move |e: InputEvent| {
            let v = typed_value(&e);
            dispatch.emit(Action::TypeLr(v.clone()));
            write(lr_param(&v));
        })
    };
    let on_batch = {
        let (dispatch, write, max) = (p.dispatch.clone(), write.clone(), p.max_batch);
        Callback::from(move |e: InputEvent| {
            let v = typed_value(&e);
            dispatch.emit(Action::TypeBatch(v.clone()));
            write(batch_param(&v, max));
        })
    };
    let on_mom = {
        let write = write.clone();
        Callback::from(move |v: String| write(momentum_param(&v)))
    };
    let on_seed = {
        let write = write.clone();
        Callback::from(move |v: String| write(seed_param(&v)))
    };
    let on_opt = {
        let set = p.set_query.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(o) = Optimiser::from_code(&el.value()) {
                set.emit(vec![optimiser_param(o)]);
            }
        })
    };
    let sgd = p.spec.optimiser == Optimiser::Sgd;
    html! {
        <section class="cnn-settings" aria-labelledby="cnn-settings-h">
            <h2 id="cnn-settings-h">{ ctx.t("cnn.settings") }</h2>
            <p class="hint">{ ctx.t("cnn.settings.hint") }</p>
            { blocks(&ctx, &p.spec, &p.set_query) }
            <div class="field-row">
                <label for="cnn-opt">{ ctx.t("cnn.setting.optimiser") }</label>
                <select id="cnn-opt" onchange={on_opt}>
                    <option value="adam" selected={!sgd}>{ ctx.t("cnn.opt.adam") }</option>
                    <option value="sgd" selected={sgd}>{ ctx.t("cnn.opt.sgd") }</option>
                </select>
            </div>
            <div class="field-row">
                <label for="cnn-lr">{ ctx.t("cnn.setting.lr") }</label>
                <input id="cnn-lr" inputmode="decimal" value={p.lr_text.clone()} oninput={on_lr}
                    aria-invalid={lr_error.is_some().to_string()} />
                { field_error(&ctx, "cnn-lr-error", lr_error.as_ref()) }
            </div>
            { sgd.then(|| html! {
                <div class="field-row">
                    <label for="cnn-mom">{ ctx.t("cnn.setting.momentum") }</label>
                    <DraftInput id="cnn-mom" inputmode="decimal" value={p.spec.momentum.to_string()} on_commit={on_mom} />
                </div>
            }) }
            <div class="field-row">
                <label for="cnn-batch">{ ctx.t("cnn.setting.batch") }</label>
                <input id="cnn-batch" inputmode="numeric" value={p.batch_text.clone()} oninput={on_batch}
                    aria-invalid={batch_error.is_some().to_string()} />
                <span class="hint">{ ctx.tf("cnn.batch.range", &[("max", &numbers::count(p.max_batch as u64))]) }</span>
                { field_error(&ctx, "cnn-batch-error", batch_error.as_ref()) }
            </div>
            <div class="field-row">
                <label for="cnn-seed">{ ctx.t("cnn.setting.seed") }</label>
                <DraftInput id="cnn-seed" inputmode="numeric" value={p.spec.seed.to_string()} on_commit={on_seed} />
            </div>
        </section>
    }
}

/// One row per conv block: its channels and kernel side; a block can be added or removed.
fn blocks(ctx: &Ctx, spec: &Spec, set: &SetQuery) -> Html {
    let rows = spec.channels.iter().zip(&spec.kernels).enumerate().map(|(i, (&c, &k))| {
        let on_ch = {
            let (set, spec) = (set.clone(), spec.clone());
            Callback::from(move |v: String| {
                // A value the parser refuses still goes to the URL, which names it.
                let ch = v.trim().parse::<usize>().unwrap_or(0);
                match block_params(&spec, i, ch, k) {
                    Some([a, b]) if ch > 0 => set.emit(vec![a, b]),
                    _ => set.emit(vec![("ch", replace_at(&spec.channels, i, &v))]),
                }
            })
        };
        let on_k = {
            let (set, spec) = (set.clone(), spec.clone());
            Callback::from(move |e: Event| {
                let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
                let k = el.value().parse::<usize>().unwrap_or(k);
                if let Some([a, b]) = block_params(&spec, i, c, k) {
                    set.emit(vec![a, b]);
                }
            })
        };
        let n = (i + 1).to_string();
        html! {
            <div class="field-row cnn-block">
                <span class="cnn-block-name">{ ctx.tf("cnn.block", &[("n", &n)]) }</span>
                <label for={format!("cnn-ch-{i}")}>{ ctx.t("cnn.setting.channels") }</label>
                <DraftInput id={format!("cnn-ch-{i}")} inputmode="numeric" value={c.to_string()} on_commit={on_ch} />
                <label for={format!("cnn-k-{i}")}>{ ctx.t("cnn.setting.kernels") }</label>
                <select id={format!("cnn-k-{i}")} onchange={on_k}>
                    { for (1..=MAX_KERNEL).step_by(2).map(|s| html! {
                        <option value={s.to_string()} selected={s == k}>{ format!("{s}×{s}") }</option>
                    }) }
                </select>
            </div>
        }
    });
    let add = add_block(spec).map(|pairs| {
        let set = set.clone();
        html! {
            <button id="cnn-add-block" class="button small"
                onclick={Callback::from(move |_| set.emit(pairs.to_vec()))}>{ ctx.t("cnn.block.add") }</button>
        }
    });
    let remove = remove_block(spec).map(|pairs| {
        let set = set.clone();
        html! {
            <button id="cnn-remove-block" class="button small"
                onclick={Callback::from(move |_| set.emit(pairs.to_vec()))}>{ ctx.t("cnn.block.remove") }</button>
        }
    });
    html! {
        <div class="cnn-blocks">
            { for rows }
            <div class="field-row">{ add }{ remove }</div>
        </div>
    }
}

/// The `ch` list with entry `i` replaced by the text typed.
fn replace_at(v: &[usize], i: usize, text: &str) -> String {
    v.iter()
        .enumerate()
        .map(|(j, n)| {
            if j == i {
                text.trim().to_string()
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn field_error(ctx: &Ctx, id: &'static str, e: Option<&cnn::SpecError>) -> Html {
    let Some(e) = e else { return html! {} };
    html! { <span id={id} class="field-error" role="alert">{ error_text(ctx, e.key(), &e.args()) }</span> }
}
