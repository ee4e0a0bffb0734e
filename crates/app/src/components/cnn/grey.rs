//! A grey image (`page_models::cnn::inspect::Grey`) drawn on a canvas of its own pixel size,
//! scaled up by CSS without smoothing, so a 5×5 filter shows as 25 squares.

use wasm_bindgen::{Clamped, JsCast};
use yew::prelude::*;

use page_models::cnn::inspect::Grey;

#[derive(Properties, PartialEq)]
pub struct GreyProps {
    pub grey: Grey,
    /// What the image shows, for a screen reader.
    pub label: AttrValue,
    #[prop_or_default]
    pub class: Classes,
}

#[function_component]
pub fn GreyImage(p: &GreyProps) -> Html {
    let canvas = use_node_ref();
    {
        let canvas = canvas.clone();
        use_effect_with(p.grey.clone(), move |g| draw(&canvas, g));
    }
    html! {
        <canvas ref={canvas} class={classes!("grey", p.class.clone())} role="img"
            aria-label={p.label.clone()} width={p.grey.width.to_string()} height={p.grey.height.to_string()} />
    }
}

fn draw(canvas: &NodeRef, g: &Grey) {
    let Some(el) = canvas.cast::<web_sys::HtmlCanvasElement>() else {
        return;
    };
    let Some(ctx) = el
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    if g.width == 0 || g.height == 0 {
        return;
    }
    let mut rgba = Vec::with_capacity(g.width * g.height * 4);
    for row in &g.rows {
        for &v in row {
            rgba.extend_from_slice(&[v, v, v, 255]);
        }
    }
    if let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        Clamped(&rgba),
        g.width as u32,
        g.height as u32,
    ) {
        let _ = ctx.put_image_data(&img, 0.0, 0.0);
    }
}
