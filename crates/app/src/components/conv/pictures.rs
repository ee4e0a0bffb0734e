//! The conv page's pictures: the input and the filtered output on canvases, the output's
//! caption (time, verdict, stage) and the status the tests and embeds read.

use std::rc::Rc;

use yew::prelude::*;

use super::super::Ctx;
use super::io::draw;
use page_models::conv_page::{to_rgba, Outcome, RgbImage};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub input: Rc<RgbImage>,
    pub outcome: Outcome,
    /// Finished runs (`data-runs`).
    pub runs: u32,
}

#[function_component]
pub fn Pictures(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let input_canvas = use_node_ref();
    let output_canvas = use_node_ref();
    {
        let canvas = input_canvas.clone();
        use_effect_with(props.input.clone(), move |img| {
            draw(&canvas, img.width, img.height, &img.to_rgba())
        });
    }
    {
        let canvas = output_canvas.clone();
        use_effect_with(props.outcome.clone(), move |o| {
            if let Outcome::Done(d) = o {
                draw(
                    &canvas,
                    d.image.width,
                    d.image.height,
                    &to_rgba(&d.image.data, d.offset),
                );
            }
        });
    }
    let Some(ctx) = ctx else {
        return html! {};
    };
    let input = &props.input;
    let outcome = &props.outcome;
    html! {
        <>
            <div class="conv-images">
                <figure>
                    <canvas ref={input_canvas} id="conv-input"></canvas>
                    <figcaption>{ ctx.tf("conv.input", &[("w", &input.width.to_string()), ("h", &input.height.to_string())]) }</figcaption>
                </figure>
                <figure>
                    <canvas ref={output_canvas} id="conv-output" class={classes!((!matches!(outcome, Outcome::Done(_))).then_some("empty"))}></canvas>
                    <figcaption>{ result(&ctx, outcome) }</figcaption>
                </figure>
            </div>
            <div class="conv-status" aria-live="polite" id="conv-result" data-runs={props.runs.to_string()}
                data-verified={outcome.verified_attr()}>
            </div>
        </>
    }
}

fn result(ctx: &Ctx, outcome: &Outcome) -> Html {
    match outcome {
        Outcome::Idle => html! { { ctx.t("conv.idle") } },
        Outcome::Running => html! { { ctx.t("conv.running") } },
        Outcome::Failed(m) => {
            html! { <span class="message error" role="alert">{ m.clone() }</span> }
        }
        Outcome::Done(d) => {
            let size = [
                ("w", d.image.width.to_string()),
                ("h", d.image.height.to_string()),
                ("ms", numbers::ms(d.ms)),
            ];
            let size: Vec<(&str, &str)> = size.iter().map(|(k, v)| (*k, v.as_str())).collect();
            html! {
                <>
                    <span>{ ctx.tf(if d.verified.is_some() { "conv.output_gpu" } else { "conv.output_cpu" }, &size) }</span>
                    { " " }
                    { match d.verified {
                        Some((true, n)) => html! { <span class="badge ok" id="conv-badge">{ ctx.tf("conv.verified", &[("n", &n.to_string())]) }</span> },
                        Some((false, _)) => html! { <span class="badge bad" id="conv-badge">{ ctx.t("conv.mismatch") }</span> },
                        None => html! {},
                    } }
                    if d.verified.is_some() {
                        <br />
                        <span class="hint">{ ctx.t(&d.stage.text_keys()[0]) }</span>
                    }
                </>
            }
        }
    }
}
