//! "Look inside": the first layer's filters, a test digit's maps at every layer, the
//! confusion matrix of the latest test evaluation and the digits it gets wrong, all of one
//! network (`page_models::cnn::snapshot`: the GPU's as read back at one step, or the CPU
//! trainer's without a GPU), labelled once with its step.

use yew::prelude::*;

use cnn::net::{LayerKind, LayerView};
use page_models::cnn::inspect::{feature_maps, first_filters, grey, mistakes, Confusion};
use page_models::cnn::snapshot::{MapsFrom, Snapshot};
use page_models::train::run::Side;

use super::grey::GreyImage;
use super::DriverCell;
use crate::components::Ctx;
use crate::train_driver::cnn::CnnDriver as Driver;

/// Most maps drawn per layer (a 64-channel layer would be a wall of squares).
const MAX_MAPS: usize = 16;
/// Most mistakes listed.
const MAX_MISTAKES: usize = 24;

pub fn view(
    ctx: &Ctx,
    d: Option<&Driver>,
    cell: &DriverCell,
    redraw: &UseForceUpdateHandle,
) -> Html {
    let Some(d) = d else {
        return html! {};
    };
    let pick = {
        let (cell, redraw) = (cell.clone(), redraw.clone());
        Callback::from(move |i: usize| {
            if let Some(d) = cell.borrow_mut().as_mut() {
                d.set_inspect(i);
            }
            redraw.force_update();
        })
    };
    let snap = d.inside.as_ref();
    html! {
        <section class="cnn-inside" aria-labelledby="cnn-inside-h">
            <h2 id="cnn-inside-h">{ ctx.t("cnn.inside") }</h2>
            { step_label(ctx, snap) }
            { filters(ctx, d, snap) }
            { layers(ctx, d, snap) }
            { confusion(ctx, d, snap) }
            { wrong(ctx, d, snap, &pick) }
        </section>
    }
}

/// The one label of every panel below: whose network, after how many steps.
fn step_label(ctx: &Ctx, snap: Option<&Snapshot>) -> Html {
    let Some(s) = snap else {
        return html! { <p id="cnn-inside-step" class="train-note">{ ctx.t("cnn.confusion.none") }</p> };
    };
    let key = match s.side {
        Side::Gpu => "cnn.inside.step.gpu",
        Side::Cpu => "cnn.inside.step.cpu",
    };
    html! {
        <p id="cnn-inside-step" class="train-note" data-step={s.step.to_string()} data-side={s.side.code()}>
            { ctx.tf(key, &[("step", &numbers::count(s.step))]) }
        </p>
    }
}

/// `data-step` of a panel: the snapshot's step, none without one.
fn step_of(snap: Option<&Snapshot>) -> Option<String> {
    snap.map(|s| s.step.to_string())
}

fn filters(ctx: &Ctx, d: &Driver, snap: Option<&Snapshot>) -> Html {
    let images = snap.map_or_else(Vec::new, |s| first_filters(&d.net, &s.params));
    html! {
        <div id="cnn-filters" class="cnn-panel" data-count={images.len().to_string()} data-step={step_of(snap)}>
            <h3>{ ctx.t("cnn.filters") }</h3>
            <p class="hint">{ ctx.t("cnn.filters.hint") }</p>
            <div class="cnn-maps">
                { for images.into_iter().enumerate().map(|(i, g)| html! {
                    <GreyImage grey={g} class="cnn-filter"
                        label={ctx.tf("cnn.filter.label", &[("n", &(i + 1).to_string())])} />
                }) }
            </div>
        </div>
    }
}

fn layer_name(ctx: &Ctx, l: &LayerView) -> String {
    let b = l.block.to_string();
    let key = match l.kind {
        LayerKind::Input => "cnn.layer.input",
        LayerKind::Conv => "cnn.layer.conv",
        LayerKind::Relu => "cnn.layer.relu",
        LayerKind::Pool => "cnn.layer.pool",
    };
    ctx.tf(
        key,
        &[
            ("block", &b),
            ("side", &l.side.to_string()),
            ("channels", &l.channels.to_string()),
        ],
    )
}

/// The chosen test digit's way through the snapshot's network.
fn layers(ctx: &Ctx, d: &Driver, snap: Option<&Snapshot>) -> Html {
    let index = d.inspect.unwrap_or(0);
    let image = page_models::cnn::evals::images(&d.data.test, index..index + 1);
    let (views, from) = snap
        .and_then(|s| s.layers_of(&d.net, index, image))
        .map_or((Vec::new(), None), |(v, f)| (v, Some(f)));
    let note = match (snap.map(|s| s.side), from) {
        (Some(Side::Gpu), Some(MapsFrom::Twin)) => ctx.t("cnn.layers.twin"),
        _ => "",
    };
    let truth = d.data.test.y.get(index).copied().unwrap_or(0);
    html! {
        <div id="cnn-layers" class="cnn-panel" data-index={index.to_string()} data-label={truth.to_string()}
            data-layers={views.len().to_string()} data-step={step_of(snap)}>
            <h3>{ ctx.tf("cnn.layers", &[("n", &(index + 1).to_string()), ("label", &truth.to_string())]) }</h3>
            <p class="hint">{ ctx.t("cnn.layers.hint") }{ " " }{ note }</p>
            { layer_maps(ctx, &views) }
        </div>
    }
}

/// Each layer's name and its maps (at most [`MAX_MAPS`] of them).
pub fn layer_maps(ctx: &Ctx, views: &[LayerView]) -> Html {
    html! {
        { for views.iter().map(|l| {
            let maps = feature_maps(l);
            let more = maps.len().saturating_sub(MAX_MAPS);
            html! {
                <div class="cnn-layer">
                    <h4>{ layer_name(ctx, l) }</h4>
                    <div class="cnn-maps">
                        { for maps.into_iter().take(MAX_MAPS).enumerate().map(|(c, g)| html! {
                            <GreyImage grey={g} class="cnn-map"
                                label={ctx.tf("cnn.map.label", &[("n", &(c + 1).to_string())])} />
                        }) }
                        { (more > 0).then(|| html! { <span class="hint">{ ctx.tf("cnn.maps.more", &[("n", &more.to_string())]) }</span> }) }
                    </div>
                </div>
            }
        }) }
    }
}

fn confusion(ctx: &Ctx, d: &Driver, snap: Option<&Snapshot>) -> Html {
    let Some(look) = snap else {
        return html! { <div id="cnn-confusion" class="cnn-panel"><h3>{ ctx.t("cnn.confusion") }</h3><p>{ ctx.t("cnn.confusion.none") }</p></div> };
    };
    let c = Confusion::new(&look.predicted, &d.data.test.y, d.net.classes);
    let per = c.per_class_accuracy();
    html! {
        <div id="cnn-confusion" class="cnn-panel" data-step={look.step.to_string()}>
            <h3>{ ctx.t("cnn.confusion") }</h3>
            <p class="hint">{ ctx.t("cnn.confusion.hint") }</p>
            <div class="table-scroll">
                <table class="cnn-confusion">
                    <thead><tr>
                        <th scope="col" class="corner"><span>{ ctx.t("cnn.confusion.corner.rows") }</span>{ " " }<span>{ ctx.t("cnn.confusion.corner.cols") }</span></th>
                        { for (0..c.classes).map(|p| html! { <th scope="col">{ p }</th> }) }
                        <th scope="col">{ ctx.t("cnn.confusion.right") }</th>
                    </tr></thead>
                    <tbody>
                        { for (0..c.classes).map(|t| html! {
                            <tr>
                                <th scope="row">{ t }</th>
                                { for (0..c.classes).map(|p| {
                                    let n = c.count(t, p);
                                    let class = if t == p { "hit" } else if n > 0 { "miss" } else { "" };
                                    html! { <td class={class}>{ n }</td> }
                                }) }
                                <td class="right">{ per[t].map_or("–".to_string(), |a| numbers::percent(f64::from(a))) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
        </div>
    }
}

fn wrong(ctx: &Ctx, d: &Driver, snap: Option<&Snapshot>, pick: &Callback<usize>) -> Html {
    let Some(look) = snap else { return html! {} };
    let list = mistakes(&look.logits, &d.data.test.y, d.net.classes, MAX_MISTAKES);
    let side = d.data.test.side;
    html! {
        <div id="cnn-mistakes" class="cnn-panel" data-count={list.len().to_string()}>
            <h3>{ ctx.t("cnn.mistakes") }</h3>
            <p class="hint">{ ctx.t("cnn.mistakes.hint") }</p>
            { list.is_empty().then(|| html! { <p>{ ctx.t("cnn.mistakes.none") }</p> }) }
            <ul class="cnn-mistakes">
                { for list.iter().map(|m| {
                    let image = page_models::cnn::evals::images(&d.data.test, m.index..m.index + 1);
                    let text = ctx.tf("cnn.mistake", &[
                        ("truth", &m.truth.to_string()),
                        ("predicted", &m.predicted.to_string()),
                        ("confidence", &numbers::percent(f64::from(m.confidence))),
                    ]);
                    let i = m.index;
                    html! {
                        <li>
                            <button class="cnn-mistake" data-index={i.to_string()} onclick={pick.reform(move |_| i)} title={text.clone()}>
                                <GreyImage grey={grey(image, side, side)} class="cnn-digit" label={text.clone()} />
                                <span>{ text }</span>
                            </button>
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}
