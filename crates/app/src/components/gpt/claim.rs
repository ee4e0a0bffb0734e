//! The GPT page's "seed's claim, measured": one training step's FLOPs by class of kernel,
//! counted from the model's shape (`page_models::gpt_inside::Flops`), beside the GPU time of
//! each class alone on the learner's adapter (`crate::gpt_claim::measure`, on a session of
//! its own). Measure and Cancel go through the shared run hook; a software adapter is said
//! to be one.

use std::rc::Rc;

use gpu_runtime::engine::gpt::Settings;
use gpu_runtime::gpt::{Config, Corpus};
use gpu_runtime::GpuError;
use page_models::gpt_inside::{Claim, Class, Flops, REPS};
use yew::prelude::*;

use super::attention::DriverCell;
use crate::components::run_lifecycle::use_run;
use crate::components::{scroll_table, Ctx};
use crate::gpt_claim::measure;
use crate::session;

#[derive(Properties)]
pub struct Props {
    pub driver: DriverCell,
    pub corpus: Rc<Corpus>,
    /// None: no WebGPU here.
    pub software: Option<bool>,
    /// Whether the page's GPU session is up (its shape is then read from it).
    pub ready: bool,
    /// Whether the page is training: timing beside it would measure both.
    pub training: bool,
}

impl PartialEq for Props {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.driver, &o.driver)
            && Rc::ptr_eq(&self.corpus, &o.corpus)
            && self.software == o.software
            && self.ready == o.ready
            && self.training == o.training
    }
}

#[derive(Clone, PartialEq)]
enum Phase {
    Idle,
    Running(usize, usize),
    Done(Rc<Claim>),
    Cancelled,
    Failed(String),
}

#[function_component]
pub fn ClaimView(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let phase = use_state(|| Phase::Idle);
    let runs = use_run::<()>(|| ());
    let Some(ctx) = ctx else {
        return html! {};
    };
    // The model the page trains now (its shape and batch), if the GPU session is up.
    let shape: Option<(Config, Settings)> = props
        .driver
        .borrow()
        .as_ref()
        .and_then(|d| d.gpu.session.as_ref().map(|s| (*s.config(), *s.settings())));
    let running = matches!(*phase, Phase::Running(..));
    // Training shares the GPU: Cancel stays, a new measurement waits for Pause.
    let blocked = !running && (props.training || props.software.is_none());
    let on_click = {
        let (phase, runs, corpus, software) = (
            phase.clone(),
            runs.clone(),
            props.corpus.clone(),
            props.software,
        );
        Callback::from(move |_: MouseEvent| {
            if running {
                if runs.cancel() {
                    phase.set(Phase::Cancelled);
                }
                return;
            }
            let (Some((cfg, settings)), Some(sw)) = (shape, software) else {
                return;
            };
            let run = runs.start(());
            phase.set(Phase::Running(0, REPS * 4));
            let (phase, corpus) = (phase.clone(), corpus.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let p = phase.clone();
                let progress = |done, total| p.set(Phase::Running(done, total));
                let got = match session::gpu(sw).await {
                    Ok((gpu, _)) => {
                        measure(gpu, cfg, settings, &corpus, run.token(), progress).await
                    }
                    Err(e) => Err(e),
                };
                if !run.finish() {
                    return;
                }
                let flops = Flops::of(&cfg, settings.batch);
                phase.set(match got {
                    Ok(Some(s)) => Claim::new(flops, &s.class_ms, &s.step_ms, s.steps_per_run, sw)
                        .map_or(Phase::Failed(String::new()), |c| Phase::Done(Rc::new(c))),
                    Ok(None) | Err(GpuError::Cancelled) => Phase::Cancelled,
                    Err(e) => Phase::Failed(e.to_string()),
                });
            });
        })
    };
    let code = match &*phase {
        Phase::Idle => "idle",
        Phase::Running(..) => "running",
        Phase::Done(_) => "done",
        Phase::Cancelled => "cancelled",
        Phase::Failed(_) => "failed",
    };
    let claim = match &*phase {
        Phase::Done(c) => Some(c.clone()),
        _ => None,
    };
    html! {
        <section class="panel gpt-claim" id="gpt-claim" data-phase={code}>
            <h2>{ ctx.t("gpt.claim.heading") }</h2>
            <p>{ ctx.t("gpt.claim.intro") }</p>
            if let Some((cfg, settings)) = shape {
                <p class="hint">{ ctx.tf("gpt.claim.shape", &[
                    ("layers", &cfg.layers.to_string()), ("width", &cfg.width.to_string()),
                    ("heads", &cfg.heads.to_string()), ("context", &cfg.context.to_string()),
                    ("batch", &settings.batch.to_string()),
                ]) }</p>
                { table(&ctx, &Flops::of(&cfg, settings.batch), claim.as_deref()) }
                <div class="toolbar">
                    <button id="gpt-claim-run" class="button primary" onclick={on_click}
                        disabled={blocked}>
                        { ctx.t(if running { "gpt.claim.cancel" } else { "gpt.claim.measure" }) }
                    </button>
                </div>
                if props.training && !running {
                    <p class="hint" id="gpt-claim-training">{ ctx.t("gpt.claim.training") }</p>
                }
            } else {
                <p class="hint" id="gpt-claim-wait">{ ctx.t(if props.software.is_none() { "gpt.claim.no_gpu" } else { "gpt.claim.waiting" }) }</p>
            }
            { match &*phase {
                Phase::Running(done, total) => html! { <p class="status running">{ ctx.tf("gpt.claim.running", &[
                    ("done", &done.to_string()), ("total", &total.to_string())]) }</p> },
                Phase::Cancelled => html! { <p class="status" id="gpt-claim-cancelled">{ ctx.t("gpt.claim.cancelled") }</p> },
                Phase::Failed(e) => html! { <p class="message error" role="alert">{ ctx.tf("gpt.claim.failed", &[("detail", e)]) }</p> },
                Phase::Done(c) => verdict(&ctx, c),
                Phase::Idle => html! {},
            } }
            if props.software == Some(true) {
                <p class="hint" id="gpt-claim-software">{ ctx.t("gpt.claim.software") }</p>
            }
            <p class="hint">{ ctx.t("gpt.claim.flops_rule") }</p>
        </section>
    }
}

/// FLOPs by class, and once measured each class's time per step.
fn table(ctx: &Ctx, f: &Flops, c: Option<&Claim>) -> Html {
    let dash = || html! { <td>{ "–" }</td> };
    let t = html! {
        <table class="gpt-claim-table" id="gpt-claim-table">
            <thead><tr>
                <th>{ ctx.t("gpt.claim.col.class") }</th>
                <th>{ ctx.t("gpt.claim.col.flops") }</th>
                <th>{ ctx.t("gpt.claim.col.time") }</th>
                <th>{ ctx.t("gpt.claim.col.rate") }</th>
            </tr></thead>
            <tbody>
                { for Class::ALL.iter().map(|&k| html! {
                    <tr data-class={k.code()} data-flops-share={f.share(k).to_string()}
                        data-time-share={c.map(|c| c.time_share(k).to_string())}
                        data-ms={c.map(|c| c.ms(k).median.to_string())}>
                        <th scope="row">{ ctx.t(k.key()) }</th>
                        <td><span class="num">{ numbers::count(f.get(k)) }</span><br/>
                            <span class="hint">{ ctx.tf("gpt.claim.share", &[("p", &numbers::number(f.share(k)))]) }</span></td>
                        { c.map_or_else(dash, |c| { let s = c.ms(k); html! {
                            <td><span class="num">{ ctx.tf("gpt.claim.ms", &[("ms", &numbers::ms(s.median)),
                                ("lo", &numbers::ms(s.min)), ("hi", &numbers::ms(s.max))]) }</span><br/>
                                <span class="hint">{ ctx.tf("gpt.claim.share", &[("p", &numbers::number(c.time_share(k)))]) }</span></td>
                        } }) }
                        { c.map_or_else(dash, |c| html! { <td class="num">{ numbers::rate(c.gflops(k)) }</td> }) }
                    </tr>
                }) }
            </tbody>
        </table>
    };
    scroll_table(ctx, ctx.t("gpt.claim.heading"), t)
}

/// The claim's answer here, how it was timed and what running apart costs.
fn verdict(ctx: &Ctx, c: &Claim) -> Html {
    html! {
        <div id="gpt-claim-result" data-software={c.software.to_string()}
            data-method={c.method.key()} data-runs={c.ms(Class::Matmul).runs.to_string()}>
            <p><strong>{ ctx.tf("gpt.claim.verdict", &[
                ("flops", &numbers::number(c.flops.share(Class::Matmul))),
                ("time", &numbers::number(c.time_share(Class::Matmul))),
            ]) }</strong></p>
            <p class="hint">{ ctx.tf(c.method.key(), &[
                ("steps", &c.steps_per_run.to_string()), ("reps", &REPS.to_string()),
            ]) }</p>
            <p class="hint" id="gpt-claim-apart">{ ctx.tf(if c.apart_over_together() >= 1.0 { "gpt.claim.apart" } else { "gpt.claim.apart_less" }, &[
                ("ratio", &numbers::sig(c.apart_over_together(), 3)), ("step", &numbers::ms(c.step_ms.median)),
            ]) }</p>
        </div>
    }
}
