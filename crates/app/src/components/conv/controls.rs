//! The conv page's filter controls: the picture row (bundled pictures, the learner's own by
//! choosing, dropping or pasting), the filter, size and stage, the weight grid, and the stride,
//! padding and dilation fields with the output-size formula. They render the page's `Form`
//! and dispatch its actions (`page_models::conv_page`).

use yew::prelude::*;

use super::super::Ctx;
use page_models::conv_page::{
    formula_args, shape_error_args, stage_param, Action, Form, FormError, Image, Preset, Source,
    FIELDS, STAGES,
};

/// A labelled drop-down: options are (value, text, selected); `on` gets the value picked.
pub fn select(
    ctx: &Ctx,
    id: &'static str,
    label: &str,
    options: Vec<(String, String, bool)>,
    on: Callback<String>,
) -> Html {
    let onchange = Callback::from(move |e: Event| {
        let s: web_sys::HtmlSelectElement = e.target_unchecked_into();
        on.emit(s.value());
    });
    html! {
        <div class="field">
            <label for={id}>{ ctx.t(label) }</label>
            <select {id} {onchange}>
                { for options.into_iter().map(|(value, text, selected)| html! {
                    <option {value} {selected}>{ text }</option>
                }) }
            </select>
        </div>
    }
}

/// A select's value to `on`, when `read` makes sense of it (a value no option has is ignored).
fn when_some<T: 'static>(
    on: &Callback<T>,
    read: impl Fn(&str) -> Option<T> + 'static,
) -> Callback<String> {
    let on = on.clone();
    Callback::from(move |v: String| {
        if let Some(t) = read(&v) {
            on.emit(t);
        }
    })
}

#[derive(Properties, PartialEq)]
pub struct PictureProps {
    pub source: Source,
    /// The picture select's value.
    pub value: &'static str,
    pub upload_error: Option<String>,
    /// The size the picture is filtered at (width, height).
    pub size: (u32, u32),
    pub on_image: Callback<Image>,
    pub on_file: Callback<web_sys::File>,
}

#[function_component]
pub fn PictureRow(props: &PictureProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let mut options: Vec<(String, String, bool)> = Image::ALL
        .iter()
        .map(|i| {
            (
                i.id().to_string(),
                ctx.t(&format!("conv.image.{}", i.id())).to_string(),
                props.value == i.id(),
            )
        })
        .collect();
    if let Source::Own { name, .. } = &props.source {
        options.push(("own".into(), name.clone(), true));
    }
    let on_image = when_some(&props.on_image, |v| {
        Image::ALL.into_iter().find(|i| i.id() == v)
    });
    let on_pick = {
        let on_file = props.on_file.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|f| f.get(0)) {
                on_file.emit(f);
            }
            input.set_value("");
        })
    };
    let on_drop = {
        let on_file = props.on_file.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(f) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                on_file.emit(f);
            }
        })
    };
    let on_dragover = Callback::from(|e: DragEvent| e.prevent_default());
    let (w, h) = props.size;
    html! {
        <>
            <div class="conv-row">
                { select(&ctx, "conv-image", "conv.image", options, on_image) }
                <div class="field conv-drop" ondrop={on_drop} ondragover={on_dragover}>
                    <span class="conv-own-title">{ ctx.t("conv.own") }</span>
                    // The native input's button text is the browser's, not translated: it is
                    // hidden (still focusable) behind a translated label.
                    <input id="conv-file" class="conv-file" type="file" accept="image/*" onchange={on_pick} />
                    <label for="conv-file" class="button">{ ctx.t("conv.choose") }</label>
                    <p class="hint">{ ctx.t("conv.own_hint") }</p>
                </div>
            </div>
            if let Some(name) = &props.upload_error {
                <p class="message error" role="alert" id="conv-upload-error">{ ctx.tf("conv.error.not_image", &[("name", name)]) }</p>
            }
            if let Source::Own { scaled: Some((ow, oh)), .. } = &props.source {
                <p class="message" id="conv-scaled">{ ctx.tf("conv.scaled", &[
                    ("w", &ow.to_string()), ("h", &oh.to_string()),
                    ("sw", &w.to_string()), ("sh", &h.to_string())]) }</p>
            }
        </>
    }
}

#[derive(Properties, PartialEq)]
pub struct FormProps {
    pub form: Form,
    pub on_form: Callback<Action>,
}

/// The filter, size and stage, and the weight grid.
#[function_component]
pub fn FilterControls(props: &FormProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let settings = &props.form.settings;
    let on = &props.on_form;
    let on_preset = when_some(on, |v| {
        Preset::ALL
            .into_iter()
            .find(|p| p.id() == v)
            .map(Action::Preset)
    });
    let on_side = when_some(on, |v| v.parse().ok().map(Action::Side));
    let on_stage = when_some(on, |v| {
        STAGES
            .into_iter()
            .find(|s| stage_param(*s) == v)
            .map(Action::Stage)
    });
    let errors = props.form.parsed().err().unwrap_or_default();
    let side = settings.side as usize;
    html! {
        <>
            <div class="conv-row">
                { select(&ctx, "conv-filter", "conv.filter", Preset::ALL.iter().map(|p|
                    (p.id().to_string(), ctx.t(&format!("conv.filter.{}", p.id())).to_string(), settings.preset == *p)).collect(), on_preset) }
                { select(&ctx, "conv-size", "conv.size", [3u32, 5].iter().map(|n|
                    (n.to_string(), format!("{n}×{n}"), settings.side == *n)).collect(), on_side) }
                { select(&ctx, "conv-stage", "conv.stage", STAGES.iter().map(|s|
                    (stage_param(*s).to_string(), ctx.t(&s.text_keys()[0]).to_string(), settings.stage == *s)).collect(), on_stage) }
            </div>
            <fieldset class={classes!("conv-grid", format!("side-{side}"))}>
                <legend>{ ctx.tf("conv.grid", &[("side", &side.to_string())]) }</legend>
                { for props.form.cells.iter().enumerate().map(|(i, cell)| {
                    let bad = errors.contains(&FormError::Cell(i));
                    let oninput = on.reform(move |e: InputEvent| {
                        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                        Action::Cell(i, input.value())
                    });
                    let label = ctx.tf("conv.cell", &[("row", &(i / side + 1).to_string()), ("col", &(i % side + 1).to_string())]);
                    html! {
                        <input type="text" inputmode="decimal" class={classes!(bad.then_some("invalid"))}
                            id={format!("conv-w{i}")} aria-label={label} aria-invalid={bad.to_string()}
                            value={cell.clone()} {oninput} />
                    }
                }) }
            </fieldset>
            if errors.iter().any(|e| matches!(e, FormError::Cell(_))) {
                <p class="message error" role="alert" id="conv-weight-error">{ ctx.t("conv.error.weight") }</p>
            }
        </>
    }
}

#[derive(Properties, PartialEq)]
pub struct ArithmeticProps {
    pub form: Form,
    pub on_form: Callback<Action>,
    /// The picture's size (width, height), for the formula and the shape's check.
    pub size: (u32, u32),
}

/// Stride, padding and dilation as typed, the output size along each axis and the shape's
/// error.
#[function_component]
pub fn Arithmetic(props: &ArithmeticProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let settings = &props.form.settings;
    let errors = props.form.parsed().err().unwrap_or_default();
    let fields = FIELDS.iter().enumerate().map(|(i, &(name, lo, hi))| {
        let bad = errors.contains(&FormError::Field(i));
        let oninput = props.on_form.reform(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            Action::Field(i, input.value())
        });
        let id = format!("conv-{name}");
        html! {
            <div class={classes!("field", bad.then_some("invalid"))}>
                <label for={id.clone()}>{ ctx.t(&format!("conv.field.{name}")) }</label>
                <input id={id} type="text" inputmode="numeric" value={props.form.fields[i].clone()} {oninput}
                    aria-invalid={bad.to_string()} />
                if bad {
                    <p class="field-error" role="alert">{ ctx.tf("conv.error.field", &[
                        ("name", ctx.t(&format!("conv.field.{name}"))), ("lo", &lo.to_string()), ("hi", &hi.to_string())]) }</p>
                }
            </div>
        }
    });
    let formula = |axis: &str, input_len: u32| {
        let args = formula_args(settings, axis, input_len);
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        html! { <p class="conv-formula"><code>{ ctx.tf("conv.formula", &args) }</code></p> }
    };
    let (w, h) = props.size;
    let shape_message = settings.shape(w, h).validate().err().map(|e| {
        let (key, args) = shape_error_args(&e);
        let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ctx.tf(key, &args)
    });
    html! {
        <>
            <div class="conv-row">{ for fields }</div>
            { formula("H", h) }
            { formula("W", w) }
            if let Some(m) = &shape_message {
                <p class="message error" role="alert" id="conv-shape-error">{ m.clone() }</p>
            }
        </>
    }
}
