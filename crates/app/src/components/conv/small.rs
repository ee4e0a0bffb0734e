//! The conv page's small example: the page's filter, stride, padding and dilation on a 6×6
//! input of digits. The filter window slides over the padded grid (play, pause, step, arrow
//! keys), one output pixel per step, beside the im2col matrix, the filter as a column and the
//! output as their product; pointing at an input pixel lights every matrix cell that holds it.
//! Logic: `page_models::conv_layers` (`small`, `step_pixel`, `padded_taps`, `arrow_step`).

use std::collections::BTreeSet;
use std::rc::Rc;

use cpu_kernels::conv::im2col_cells_of_input;
use yew::prelude::*;

use super::super::cssom::use_widths;
use super::super::playback::use_autoplay;
use super::super::Ctx;
use page_models::conv_layers::{
    arrow_step, padded_taps, small, small_now_args, step_pixel, trim, Small as Example, SMALL,
};
use page_models::conv_page::{format_weight, shape_error_args, Settings};

/// Most rings of padding the example draws (the grid stays readable on a phone).
pub const MAX_DRAWN_PAD: u32 = 4;
const PERIOD_MS: u32 = 700;
/// The operators between the matrix, the filter column and the output column (symbols).
const TIMES: &str = "×";
const EQUALS: &str = "=";

#[derive(Properties, PartialEq)]
pub struct Props {
    pub settings: Settings,
}

#[function_component]
pub fn Small(props: &Props) -> Html {
    let ctx = use_context::<Ctx>();
    let step = use_state(|| 0usize);
    let playing = use_state(|| false);
    let hover = use_state(|| None::<(u32, u32)>);
    let s = &props.settings;
    let example = (s.pad <= MAX_DRAWN_PAD).then(|| small(s));
    let steps = match &example {
        Some(Ok(ex)) => {
            let (p, q) = ex.shape.out_hw();
            (p * q) as usize
        }
        _ => 1,
    };
    use_autoplay(playing.clone(), step.clone(), steps - 1, 1, PERIOD_MS);
    // A new shape starts again from the first step.
    {
        let (step, playing) = (step.clone(), playing.clone());
        use_effect_with(props.settings.clone(), move |_| {
            step.set(0);
            playing.set(false);
        });
    }
    use_widths();
    let Some(ctx) = ctx else {
        return html! {};
    };
    let heading = html! {
        <>
            <h2>{ ctx.t("conv.small.heading") }</h2>
            <p>{ ctx.t("conv.small.intro") }</p>
        </>
    };
    let ex = match example {
        None => {
            return html! {
                <section class="panel conv-small" id="conv-small">
                    { heading }
                    <p class="message error" role="alert" id="conv-small-error">
                        { ctx.tf("conv.small.pad_error", &[("max", &MAX_DRAWN_PAD.to_string()), ("pad", &s.pad.to_string())]) }
                    </p>
                </section>
            };
        }
        Some(Err(e)) => {
            let (key, args) = shape_error_args(&e);
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            return html! {
                <section class="panel conv-small" id="conv-small">
                    { heading }
                    <p class="message error" role="alert" id="conv-small-error">{ ctx.tf(key, &args) }</p>
                </section>
            };
        }
        Some(Ok(ex)) => Rc::new(ex),
    };
    let shape = ex.shape;
    let (p_len, q_len) = shape.out_hw();
    let i = (*step).min(steps - 1);
    let (p, q) = step_pixel(&shape, i as u32);
    let taps: BTreeSet<(u32, u32)> = padded_taps(&shape, p, q).into_iter().collect();
    let side = SMALL + 2 * shape.pad;
    // What the pointed-at input pixel lights: its im2col cells, and the outputs that read it.
    let hover_cells: BTreeSet<(usize, usize)> = hover
        .map(|(r, c)| {
            im2col_cells_of_input(&shape, 0, r, c, 0)
                .into_iter()
                .collect()
        })
        .unwrap_or_default();
    let hover_rows: BTreeSet<usize> = hover_cells.iter().map(|&(r, _)| r).collect();
    let row = (p * q_len + q) as usize;

    let set_step = |to: usize| {
        let (step, playing) = (step.clone(), playing.clone());
        Callback::from(move |_: MouseEvent| {
            playing.set(false);
            step.set(to);
        })
    };
    let toggle = {
        let (playing, step) = (playing.clone(), step.clone());
        Callback::from(move |_: MouseEvent| {
            if !*playing && *step + 1 >= steps {
                step.set(0);
            }
            playing.set(!*playing);
        })
    };
    let onkeydown = {
        let (step, playing) = (step.clone(), playing.clone());
        Callback::from(move |e: KeyboardEvent| {
            let (dp, dq): (i64, i64) = match e.key().as_str() {
                "ArrowUp" => (-1, 0),
                "ArrowDown" => (1, 0),
                "ArrowLeft" => (0, -1),
                "ArrowRight" => (0, 1),
                _ => return,
            };
            e.prevent_default();
            playing.set(false);
            step.set(arrow_step(&shape, (p, q), dp, dq));
        })
    };
    let formula = {
        let args = [
            ("axis", "H".to_string()),
            ("in", SMALL.to_string()),
            ("pad", shape.pad.to_string()),
            ("dil", shape.dilation.to_string()),
            ("r", shape.r.to_string()),
            ("stride", shape.stride.to_string()),
            ("out", p_len.to_string()),
        ];
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ctx.tf("conv.formula", &args)
    };
    let now = small_now_args(&shape, i, steps, trim(ex.output[row]));
    let now: Vec<(&str, &str)> = now.iter().map(|(k, v)| (*k, v.as_str())).collect();

    let padded = html! {
        <div class="sgrid padded" data-css-w={side.to_string()} id="conv-padded" role="img"
            aria-label={ctx.t("conv.small.padded_label")}>
            { for (0..side).flat_map(|r| (0..side).map(move |c| (r, c))).map(|(r, c)| {
                let inside = r >= shape.pad && c >= shape.pad && r < shape.pad + SMALL && c < shape.pad + SMALL;
                let (ir, ic) = (r.wrapping_sub(shape.pad), c.wrapping_sub(shape.pad));
                let value = if inside { ex.input[(ir * SMALL + ic) as usize] } else { 0.0 };
                let onpointerenter = {
                    let hover = hover.clone();
                    Callback::from(move |_: PointerEvent| hover.set(inside.then_some((ir, ic))))
                };
                html! {
                    <span class={classes!("cell", (!inside).then_some("pad"), taps.contains(&(r, c)).then_some("tap"),
                            (inside && *hover == Some((ir, ic))).then_some("pointed"))}
                        data-r={r.to_string()} data-c={c.to_string()} {onpointerenter}>
                        { trim(value as f64) }
                    </span>
                }
            }) }
        </div>
    };
    let output = html! {
        <div class="sgrid output" data-css-w={q_len.to_string()} id="conv-small-out" tabindex="0" role="grid"
            aria-label={ctx.t("conv.small.output_label")} onkeydown={onkeydown}>
            { for (0..p_len * q_len).map(|j| {
                let onpointerenter = {
                    let (step, playing) = (step.clone(), playing.clone());
                    Callback::from(move |_: PointerEvent| {
                        playing.set(false);
                        step.set(j as usize);
                    })
                };
                let lit = j as usize == row;
                html! {
                    <span class={classes!("cell", lit.then_some("now"), hover_rows.contains(&(j as usize)).then_some("reads"))}
                        data-i={j.to_string()} onpointerenter={onpointerenter.clone()} onpointerdown={onpointerenter}>{ trim(ex.output[j as usize]) }</span>
                }
            }) }
        </div>
    };
    html! {
        <section class="panel conv-small" id="conv-small">
            { heading }
            <p class="conv-formula"><code>{ formula }</code></p>
            <div class="buttons conv-anim-controls">
                <button type="button" class="button" id="conv-anim-back" onclick={set_step(i.saturating_sub(1))} disabled={i == 0}>{ ctx.t("conv.small.back") }</button>
                <button type="button" class="button primary" id="conv-anim-play" onclick={toggle}>
                    { ctx.t(if *playing { "conv.small.pause" } else { "conv.small.play" }) }
                </button>
                <button type="button" class="button" id="conv-anim-step" onclick={set_step((i + 1).min(steps - 1))} disabled={i + 1 >= steps}>{ ctx.t("conv.small.step") }</button>
            </div>
            <p id="conv-anim-now" aria-live="polite" data-step={(i + 1).to_string()} data-steps={steps.to_string()}
                data-p={p.to_string()} data-q={q.to_string()}>{ ctx.tf("conv.small.now", &now) }</p>
            <div class="conv-small-grids">
                <figure>{ padded }<figcaption>{ ctx.tf("conv.small.padded", &[("side", &side.to_string()), ("pad", &shape.pad.to_string())]) }</figcaption></figure>
                <figure>{ output }<figcaption>{ ctx.tf("conv.small.output", &[("p", &p_len.to_string()), ("q", &q_len.to_string())]) }</figcaption></figure>
            </div>
            <Im2col example={ex.clone()} {row} lit={hover_cells} />
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct Im2colProps {
    example: Rc<Example>,
    /// The im2col row of the step shown.
    row: usize,
    /// The matrix cells holding the pointed-at input pixel.
    lit: BTreeSet<(usize, usize)>,
}

/// The im2col matrix times the filter as a column, equal to the output as a column.
#[function_component]
fn Im2col(props: &Im2colProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let (ex, row, hover_cells) = (&props.example, props.row, &props.lit);
    let (p_len, q_len) = ex.shape.out_hw();
    let cols = ex.shape.reduction_len() as usize;
    let matrix = html! {
        <div class="sgrid matrix" data-css-w={cols.to_string()} id="conv-im2col" role="img"
            aria-label={ctx.tf("conv.small.matrix_label", &[("rows", &(p_len * q_len).to_string()), ("cols", &cols.to_string())])}>
            { for (0..(p_len * q_len) as usize).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| {
                let v = ex.matrix[r * cols + c];
                html! {
                    <span class={classes!("cell", (r == row).then_some("now"), hover_cells.contains(&(r, c)).then_some("lit"))}
                        data-row={r.to_string()} data-col={c.to_string()}>{ trim(v as f64) }</span>
                }
            }) }
        </div>
    };
    let column = html! {
        <div class="sgrid column" data-css-w="1" id="conv-filter-column">
            { for ex.column.iter().map(|&w| html! { <span class="cell wide">{ format_weight(w) }</span> }) }
        </div>
    };
    let product = html! {
        <div class="sgrid column" data-css-w="1" id="conv-product">
            { for ex.output.iter().enumerate().map(|(j, &v)| html! {
                <span class={classes!("cell", "wide", (j == row).then_some("now"))}>{ trim(v) }</span>
            }) }
        </div>
    };

    html! {
        <>
            <h3>{ ctx.t("conv.small.im2col_heading") }</h3>
            <p class="hint">{ ctx.t("conv.small.im2col_hint") }</p>
            <div class="conv-matmul">
                <figure>{ matrix }<figcaption>{ ctx.tf("conv.small.matrix", &[("rows", &(p_len * q_len).to_string()), ("cols", &cols.to_string())]) }</figcaption></figure>
                <span class="op">{ TIMES }</span>
                <figure>{ column }<figcaption>{ ctx.t("conv.small.column") }</figcaption></figure>
                <span class="op">{ EQUALS }</span>
                <figure>{ product }<figcaption>{ ctx.t("conv.small.product") }</figcaption></figure>
            </div>
        </>
    }
}
