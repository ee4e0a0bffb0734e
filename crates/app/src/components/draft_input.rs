//! A text field that keeps what the learner is typing until they commit it (the `change`
//! event: Enter, or leaving the field). Pages redraw while someone types — training ticks
//! many times a second, the editor's check answers after each change — and a field bound
//! straight to the committed value is set back to it by every redraw (yew writes `value`
//! whenever the element's differs), wiping half-typed text. Here the field shows its own
//! draft; a new committed value from elsewhere (another control, Reset) replaces it, and after
//! a commit it shows the value the page took.

use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DraftInputProps {
    /// The committed value.
    pub value: AttrValue,
    /// Called with the field's text on `change`.
    pub on_commit: Callback<String>,
    #[prop_or_default]
    pub class: Classes,
    #[prop_or_default]
    pub id: Option<AttrValue>,
    /// The input's `type` (text when absent).
    #[prop_or_default]
    pub kind: Option<AttrValue>,
    #[prop_or_default]
    pub inputmode: Option<AttrValue>,
    #[prop_or_default]
    pub min: Option<AttrValue>,
    #[prop_or_default]
    pub max: Option<AttrValue>,
    #[prop_or_default]
    pub label: Option<AttrValue>,
    #[prop_or_default]
    pub placeholder: Option<AttrValue>,
    /// `data-axis`, for the fields of one triple.
    #[prop_or_default]
    pub axis: Option<AttrValue>,
}

fn text_of(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

#[function_component]
pub fn DraftInput(p: &DraftInputProps) -> Html {
    let draft = use_state(|| p.value.to_string());
    {
        let draft = draft.clone();
        use_effect_with(p.value.clone(), move |v| draft.set(v.to_string()));
    }
    let oninput = {
        let draft = draft.clone();
        Callback::from(move |e: InputEvent| draft.set(text_of(&e)))
    };
    let onchange = {
        let (commit, draft, value) = (p.on_commit.clone(), draft.clone(), p.value.clone());
        Callback::from(move |e: Event| {
            commit.emit(text_of(&e));
            // Show the committed value again: a new one from the page replaces it (the
            // effect above), and a commit the page did not take (1000 clamped to the 64
            // already in use) leaves the value in use, not the text typed.
            draft.set(value.to_string());
        })
    };
    html! {
        <input class={p.class.clone()} id={p.id.clone()} type={p.kind.clone()} inputmode={p.inputmode.clone()}
            min={p.min.clone()} max={p.max.clone()} aria-label={p.label.clone()} placeholder={p.placeholder.clone()}
            data-axis={p.axis.clone()} value={(*draft).clone()} {oninput} {onchange} />
    }
}
