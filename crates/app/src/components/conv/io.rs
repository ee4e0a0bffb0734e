//! The conv page's browser side: decoding a learner's picture and drawing pixels on a canvas,
//! optionally with cells lit over them.

use wasm_bindgen::{Clamped, JsCast};
use yew::prelude::*;

use page_models::conv_page::{fit_size, RgbImage};

/// Decodes a picture in the browser (never uploaded), drawn on white and scaled down to at most
/// `MAX_SIDE`; also the original size when it was scaled. `None` when it is not an image.
pub async fn decode(file: &web_sys::File) -> Option<(RgbImage, Option<(u32, u32)>)> {
    let window = gloo::utils::window();
    let promise = window.create_image_bitmap_with_blob(file).ok()?;
    let bitmap: web_sys::ImageBitmap = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .ok()?
        .dyn_into()
        .ok()?;
    let (w, h) = (bitmap.width(), bitmap.height());
    let (dw, dh) = fit_size(w, h)?;
    let canvas: web_sys::HtmlCanvasElement = gloo::utils::document()
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    canvas.set_width(dw);
    canvas.set_height(dh);
    let c2d: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    c2d.set_fill_style_str("#fff");
    c2d.fill_rect(0.0, 0.0, dw as f64, dh as f64);
    c2d.draw_image_with_image_bitmap_and_dw_and_dh(&bitmap, 0.0, 0.0, dw as f64, dh as f64)
        .ok()?;
    bitmap.close();
    let data = c2d.get_image_data(0.0, 0.0, dw as f64, dh as f64).ok()?;
    let img = RgbImage::from_rgba(dw, dh, &data.data().0)?;
    Some((img, ((dw, dh) != (w, h)).then_some((w, h))))
}

pub fn draw(canvas: &NodeRef, width: u32, height: u32, rgba: &[u8]) {
    let Some(canvas) = canvas.cast::<web_sys::HtmlCanvasElement>() else {
        return;
    };
    canvas.set_width(width);
    canvas.set_height(height);
    let Ok(Some(ctx)) = canvas.get_context("2d") else {
        return;
    };
    let Ok(c2d) = ctx.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
        return;
    };
    if let Ok(img) =
        web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(rgba), width, height)
    {
        let _ = c2d.put_image_data(&img, 0.0, 0.0);
    }
}

/// Canvas pixels per picture pixel for a picture whose longest side is `longest`: lit cells
/// need a few canvas pixels to be seen (a 128-pixel map is drawn at 3×).
pub fn zoom(longest: u32) -> u32 {
    (384 / longest.max(1)).clamp(1, 8)
}

/// What to light over a drawn picture: cells (row, column) in picture pixels, the picked cell,
/// and a bounding box (inclusive rows, columns) to outline.
#[derive(Clone, Default, PartialEq)]
pub struct Overlay {
    pub cells: Vec<(u32, u32)>,
    pub picked: Option<(u32, u32)>,
    pub bbox: Option<((u32, u32), (u32, u32))>,
}

/// Draws RGBA pixels enlarged `scale` times (nearest neighbour), then the overlay.
pub fn draw_lit(canvas: &NodeRef, width: u32, height: u32, rgba: &[u8], scale: u32, lit: &Overlay) {
    let scale = scale.max(1) as usize;
    let (w, h) = (width as usize, height as usize);
    if rgba.len() != w * h * 4 {
        return;
    }
    let mut big = vec![0u8; w * h * 4 * scale * scale];
    for y in 0..h * scale {
        for x in 0..w * scale {
            let src = ((y / scale) * w + x / scale) * 4;
            let dst = (y * w * scale + x) * 4;
            big[dst..dst + 4].copy_from_slice(&rgba[src..src + 4]);
        }
    }
    let (bw, bh) = ((w * scale) as u32, (h * scale) as u32);
    draw(canvas, bw, bh, &big);
    let Some(c2d) = canvas
        .cast::<web_sys::HtmlCanvasElement>()
        .and_then(|c| c.get_context("2d").ok().flatten())
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let s = scale as f64;
    c2d.set_fill_style_str("rgba(255, 140, 0, 0.6)");
    for &(r, c) in &lit.cells {
        c2d.fill_rect(c as f64 * s, r as f64 * s, s, s);
    }
    if let Some(((r0, r1), (c0, c1))) = lit.bbox {
        c2d.set_stroke_style_str("#ff3d00");
        c2d.set_line_width(2.0);
        c2d.stroke_rect(
            c0 as f64 * s - 1.0,
            r0 as f64 * s - 1.0,
            (c1 - c0 + 1) as f64 * s + 2.0,
            (r1 - r0 + 1) as f64 * s + 2.0,
        );
    }
    if let Some((r, c)) = lit.picked {
        c2d.set_fill_style_str("rgba(220, 0, 90, 0.9)");
        c2d.fill_rect(c as f64 * s, r as f64 * s, s, s);
        c2d.set_stroke_style_str("#fff");
        c2d.set_line_width(1.0);
        c2d.stroke_rect(c as f64 * s - 1.5, r as f64 * s - 1.5, s + 3.0, s + 3.0);
    }
}

/// The picture cell (row, column) under a pointer event on a canvas showing `rows`×`cols`
/// cells at any CSS size.
pub fn cell_at(e: &MouseEvent, rows: u32, cols: u32) -> Option<(u32, u32)> {
    // The target, not the current target: Yew delegates events to its root element.
    let canvas: web_sys::Element = e.target()?.dyn_into().ok()?;
    let rect = canvas.get_bounding_client_rect();
    if rect.width() <= 0.0 || rect.height() <= 0.0 {
        return None;
    }
    let fx = (e.client_x() as f64 - rect.left()) / rect.width();
    let fy = (e.client_y() as f64 - rect.top()) / rect.height();
    if !(0.0..1.0).contains(&fx) || !(0.0..1.0).contains(&fy) {
        return None;
    }
    Some(((fy * rows as f64) as u32, (fx * cols as f64) as u32))
}
