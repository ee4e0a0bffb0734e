//! "Look inside": the first layer's filters, a test digit's maps at every layer (from the
//! GPU's readback of its activations, or the CPU trainer's network without a GPU), the
//! confusion matrix of the latest test evaluation and the digits it gets wrong.

use yew::prelude::*;

use cnn::net::{LayerKind, LayerView};
use page_models::cnn::inspect::{classify, feature_maps, first_filters, grey, mistakes, Confusion};
use page_models::train::run::Side;

use super::grey::GreyImage;
use super::DriverCell;
use crate::cnn_driver::Driver;
use crate::components::Ctx;

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
    html! {
        <section class="cnn-inside" aria-labelledby="cnn-inside-h">
            <h2 id="cnn-inside-h">{ ctx.t("cnn.inside") }</h2>
            { filters(ctx, d) }
            { layers(ctx, d) }
            { confusion(ctx, d) }
            { wrong(ctx, d, &pick) }
        </section>
    }
}

fn side_note(ctx: &Ctx, side: Side, step: u64) -> String {
    ctx.tf(
        if side == Side::Gpu {
            "cnn.from.gpu"
        } else {
            "cnn.from.cpu"
        },
        &[("step", &numbers::count(step))],
    )
}

fn filters(ctx: &Ctx, d: &Driver) -> Html {
    let (side, params) = d.params();
    let step = match side {
        Side::Gpu => d.gpu_params.as_ref().map_or(0, |p| p.0),
        Side::Cpu => d.cpu.step,
    };
    let images = first_filters(&d.net, params);
    html! {
        <div id="cnn-filters" class="cnn-panel" data-count={images.len().to_string()} data-step={step.to_string()}>
            <h3>{ ctx.t("cnn.filters") }</h3>
            <p class="hint">{ ctx.t("cnn.filters.hint") }{ " " }{ side_note(ctx, side, step) }</p>
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

/// The chosen test digit's way through the network.
fn layers(ctx: &Ctx, d: &Driver) -> Html {
    let index = d.inspect.unwrap_or(0);
    let (views, note, step): (Vec<LayerView>, String, u64) = match &d.gpu_layers {
        Some((i, step, l)) if *i == index => (l.clone(), side_note(ctx, Side::Gpu, *step), *step),
        _ if d.gpu.is_some() => (Vec::new(), ctx.t("cnn.layers.waiting").to_string(), 0),
        _ => {
            let image = page_models::cnn::evals::images(&d.data.test, index..index + 1).to_vec();
            match classify(&d.net, &d.cpu.params, Ok(image)) {
                Ok(ins) => (ins.layers, side_note(ctx, Side::Cpu, d.cpu.step), d.cpu.step),
                Err(_) => (Vec::new(), String::new(), 0),
            }
        }
    };
    let truth = d.data.test.y.get(index).copied().unwrap_or(0);
    html! {
        <div id="cnn-layers" class="cnn-panel" data-index={index.to_string()} data-label={truth.to_string()} data-layers={views.len().to_string()} data-step={step.to_string()}>
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

fn confusion(ctx: &Ctx, d: &Driver) -> Html {
    let Some(look) = &d.look else {
        return html! { <div id="cnn-confusion" class="cnn-panel"><h3>{ ctx.t("cnn.confusion") }</h3><p>{ ctx.t("cnn.confusion.none") }</p></div> };
    };
    let c = Confusion::new(&look.predicted, &d.data.test.y, d.net.classes);
    let per = c.per_class_accuracy();
    html! {
        <div id="cnn-confusion" class="cnn-panel" data-step={look.step.to_string()}>
            <h3>{ ctx.t("cnn.confusion") }</h3>
            <p class="hint">{ ctx.t("cnn.confusion.hint") }{ " " }{ side_note(ctx, look.side, look.step) }</p>
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

fn wrong(ctx: &Ctx, d: &Driver, pick: &Callback<usize>) -> Html {
    let Some(look) = &d.look else { return html! {} };
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
