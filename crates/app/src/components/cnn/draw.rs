//! Draw a digit: a pad for a mouse or a finger, the drawing prepared like MNIST's digits
//! (`page_models::cnn::inspect::drawn_digit`: boxed to 20×20, centred by mass in 28×28) and
//! classified by the network the page is training (the GPU's last parameters, else the
//! CPU's), with its probabilities and every layer's maps. An empty pad says so.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use page_models::cnn::inspect::{classify, drawn_digit, DrawError, Pixels};

use super::inside::layer_maps;
use super::DriverCell;
use crate::components::Ctx;

/// The pad's pixels (drawn at this size, shown at the CSS width).
const PAD: u32 = 280;
/// The pen's width in pad pixels: MNIST's strokes are about a tenth of the image wide.
const PEN: f64 = 22.0;

#[derive(Properties)]
pub struct DrawProps {
    pub driver: DriverCell,
    /// The page's network number and its parameters' step: either changing classifies the
    /// drawing again with the network as it is now.
    pub network: u64,
    /// (a driver exists, its parameters are the GPU's, their step).
    pub version: (bool, bool, u64),
}

impl PartialEq for DrawProps {
    fn eq(&self, other: &Self) -> bool {
        std::rc::Rc::ptr_eq(&self.driver, &other.driver)
            && self.network == other.network
            && self.version == other.version
    }
}

fn context(
    canvas: &NodeRef,
) -> Option<(
    web_sys::HtmlCanvasElement,
    web_sys::CanvasRenderingContext2d,
)> {
    let el = canvas.cast::<web_sys::HtmlCanvasElement>()?;
    let c = el.get_context("2d").ok()??.dyn_into().ok()?;
    Some((el, c))
}

/// The pointer's position in pad pixels.
fn at(el: &web_sys::HtmlCanvasElement, e: &PointerEvent) -> (f64, f64) {
    let r = el.get_bounding_client_rect();
    let sx = f64::from(PAD) / r.width().max(1.0);
    let sy = f64::from(PAD) / r.height().max(1.0);
    (
        (f64::from(e.client_x()) - r.left()) * sx,
        (f64::from(e.client_y()) - r.top()) * sy,
    )
}

/// The pad's ink as the network's input.
fn read(canvas: &NodeRef) -> Result<Vec<f32>, DrawError> {
    let size = DrawError::Size {
        width: 0,
        height: 0,
        bytes: 0,
    };
    let (_, c) = context(canvas).ok_or(size.clone())?;
    let data = c
        .get_image_data(0.0, 0.0, f64::from(PAD), f64::from(PAD))
        .map_err(|_| size)?;
    drawn_digit(&data.data(), PAD as usize, PAD as usize, Pixels::Rgba)
}

#[function_component]
pub fn DrawPad(p: &DrawProps) -> Html {
    let ctx = use_context::<Ctx>();
    let canvas = use_node_ref();
    let drawing = use_mut_ref(|| false);
    let drawn = use_state(|| Err::<Vec<f32>, DrawError>(DrawError::NothingDrawn));
    let Some(ctx) = ctx else { return html! {} };
    let down = {
        let (canvas, drawing) = (canvas.clone(), drawing.clone());
        Callback::from(move |e: PointerEvent| {
            let Some((el, c)) = context(&canvas) else {
                return;
            };
            e.prevent_default();
            let _ = el.set_pointer_capture(e.pointer_id());
            *drawing.borrow_mut() = true;
            let (x, y) = at(&el, &e);
            c.set_line_width(PEN);
            c.set_line_cap("round");
            c.set_line_join("round");
            c.set_stroke_style_str("#000");
            c.begin_path();
            c.move_to(x, y);
            c.line_to(x + 0.01, y);
            c.stroke();
        })
    };
    let moved = {
        let (canvas, drawing) = (canvas.clone(), drawing.clone());
        Callback::from(move |e: PointerEvent| {
            if !*drawing.borrow() {
                return;
            }
            let Some((el, c)) = context(&canvas) else {
                return;
            };
            let (x, y) = at(&el, &e);
            c.line_to(x, y);
            c.stroke();
        })
    };
    let up = {
        let (canvas, drawing, drawn) = (canvas.clone(), drawing.clone(), drawn.clone());
        Callback::from(move |_: PointerEvent| {
            if std::mem::take(&mut *drawing.borrow_mut()) {
                drawn.set(read(&canvas));
            }
        })
    };
    let clear = {
        let (canvas, drawn) = (canvas.clone(), drawn.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some((_, c)) = context(&canvas) {
                c.clear_rect(0.0, 0.0, f64::from(PAD), f64::from(PAD));
            }
            drawn.set(Err(DrawError::NothingDrawn));
        })
    };
    let result = {
        let guard = p.driver.borrow();
        match guard.as_ref() {
            Some(d) => classify(&d.net, d.params().1, (*drawn).clone()),
            None => Err(DrawError::NoNetwork),
        }
    };
    let outcome = match &result {
        Ok(ins) => html! {
            <div class="cnn-drawn">
                <p id="cnn-draw-class" class="cnn-class" data-class={ins.class.to_string()}>
                    { ctx.tf("cnn.draw.class", &[("class", &ins.class.to_string())]) }
                </p>
                <ol class="cnn-probs" start="0">
                    { for ins.probs.iter().enumerate().map(|(c, &pr)| html! {
                        <li class={if c == ins.class { "best" } else { "" }}>
                            <span class="cnn-prob-label">{ c }</span>
                            // A bar drawn as SVG: the site's CSP allows no inline style.
                            <svg class="cnn-prob-bar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
                                <rect width={format!("{:.1}", pr * 100.0)} height="8" />
                            </svg>
                            <span class="cnn-prob-value">{ format!("{} %", numbers::percent(f64::from(pr))) }</span>
                        </li>
                    }) }
                </ol>
                { layer_maps(&ctx, &ins.layers) }
            </div>
        },
        Err(e) => {
            html! { <p id="cnn-draw-class" class="hint" data-error={e.key()}>{ ctx.t(e.key()) }</p> }
        }
    };
    html! {
        <section class="cnn-draw" aria-labelledby="cnn-draw-h">
            <h2 id="cnn-draw-h">{ ctx.t("cnn.draw") }</h2>
            <p class="hint">{ ctx.t("cnn.draw.hint") }</p>
            <div class="cnn-draw-row">
                <div>
                    <canvas id="cnn-pad" ref={canvas} width={PAD.to_string()} height={PAD.to_string()}
                        class="cnn-pad" aria-label={ctx.t("cnn.draw.pad")} role="img"
                        onpointerdown={down} onpointermove={moved} onpointerup={up.clone()}
                        onpointercancel={up} />
                    <button id="cnn-clear" class="button" onclick={clear}>{ ctx.t("cnn.draw.clear") }</button>
                </div>
                { outcome }
            </div>
        </section>
    }
}
