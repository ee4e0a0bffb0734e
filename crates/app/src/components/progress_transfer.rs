//! "Your progress" on the puzzles page: the solved puzzles and their drafts saved to a file or
//! shown as a share code, and read back on another device. The format, its checks and the
//! merge are `page_models::learner_file`'s; this only reads local storage, renders and
//! writes what the merge says (it only ever adds).

use page_models::learner_file::{self, ImportError};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::Ctx;

/// Every saved entry (the file keeps only the progress ones): local storage, or memory where
/// the browser keeps none for this page (an embed on another site, `crate::store`).
fn entries() -> Vec<(String, String)> {
    crate::store::entries()
}

/// Imports checked entries (or says why not) and returns the sentence to show.
fn apply(ctx: &Ctx, r: Result<Vec<(String, String)>, ImportError>) -> (bool, String) {
    match r {
        Err(e) => {
            let text = match e {
                ImportError::Version(v) => {
                    ctx.tf(e.key(), &[("version", numbers::count(v).as_str())])
                }
                _ => ctx.t(e.key()).to_string(),
            };
            (false, text)
        }
        Ok(items) => {
            let Ok(m) = crate::store::import(&items) else {
                return (false, ctx.t("progress.error.storage").to_string());
            };
            let (solved, drafts, kept) = (
                numbers::count(m.solved as u64),
                numbers::count(m.drafts as u64),
                numbers::count(m.kept as u64),
            );
            let text = ctx.tf(
                "progress.imported",
                &[
                    ("solved", solved.as_str()),
                    ("drafts", drafts.as_str()),
                    ("kept", kept.as_str()),
                ],
            );
            (true, text)
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct ProgressTransferProps {
    /// Called after an import wrote something (the list re-reads what is solved).
    pub on_change: Callback<()>,
    /// Inside an embed: the words say the progress is this course page's.
    #[prop_or_default]
    pub embedded: bool,
}

/// The progress file as a `data:` address, from what storage holds now.
fn file_href() -> String {
    let file = learner_file::export(&entries());
    format!(
        "data:application/json;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(&file))
    )
}

#[function_component]
pub fn ProgressTransfer(props: &ProgressTransferProps) -> Html {
    let code = use_state(|| None::<String>);
    let pasted = use_state(String::new);
    let status = use_state(|| None::<(bool, String)>);
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let file = learner_file::export(&entries());
    // Read again at the click: a puzzle solved since this box last rendered is in the file.
    // (Yew delegates events: `current_target` is not the link, so the link is found from
    // what was clicked.)
    let refresh = Callback::from(|e: MouseEvent| {
        if let Some(a) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a.progress-export").ok().flatten())
        {
            let _ = a.set_attribute("href", &file_href());
        }
    });
    let (heading, intro) = if props.embedded {
        ("progress.embed.heading", "progress.embed.intro")
    } else {
        ("progress.heading", "progress.intro")
    };
    let on_file = {
        let (ctx, status, on_change) = (ctx.clone(), status.clone(), props.on_change.clone());
        Callback::from(move |e: Event| {
            let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            let Some(f) = input.files().and_then(|l| l.get(0)) else {
                return;
            };
            // Cleared, so choosing the same file again reads it again.
            input.set_value("");
            let promise = f.text();
            let (ctx, status, on_change) = (ctx.clone(), status.clone(), on_change.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(promise)
                    .await
                    .ok()
                    .and_then(|v| v.as_string());
                let r = match text {
                    Some(t) => learner_file::parse(&t),
                    None => Err(ImportError::NotJson),
                };
                status.set(Some(apply(&ctx, r)));
                on_change.emit(());
            });
        })
    };
    let show_code = {
        let (code, file) = (code.clone(), file.clone());
        Callback::from(move |_: MouseEvent| code.set(Some(learner_file::share_code(&file))))
    };
    let copy = {
        let (code, ctx, status) = (code.clone(), ctx.clone(), status.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(c) = code.as_ref() {
                let ok = super::embed_button::copy_text(c);
                let key = if ok {
                    "progress.copied"
                } else {
                    "progress.copy-failed"
                };
                status.set(Some((ok, ctx.t(key).to_string())));
            }
        })
    };
    let on_paste = {
        let pasted = pasted.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(t) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            {
                pasted.set(t.value());
            }
        })
    };
    let import_code = {
        let (ctx, status, pasted, on_change) = (
            ctx.clone(),
            status.clone(),
            pasted.clone(),
            props.on_change.clone(),
        );
        Callback::from(move |_: MouseEvent| {
            status.set(Some(apply(&ctx, learner_file::parse_code(&pasted))));
            on_change.emit(());
        })
    };
    html! {
        <section class="progress-transfer" aria-labelledby="progress-heading">
            <h2 id="progress-heading">{ ctx.t(heading) }</h2>
            <p>{ ctx.t(intro) }</p>
            // The browser refuses this page storage: the file is the only way to keep it.
            if !crate::store::persistent() {
                <p class="note progress-memory" role="note">{ ctx.t("progress.memory") }</p>
            }
            <div class="progress-actions">
                <a class="button progress-export" href={file_href()} onclick={refresh}
                    download="gpu-playground-progress.json">
                    { ctx.t("progress.export") }
                </a>
                <label class="button progress-import">
                    { ctx.t("progress.import") }
                    <input type="file" class="progress-file" accept=".json,application/json"
                        onchange={on_file} />
                </label>
                <button type="button" class="button progress-show-code" onclick={show_code}>
                    { ctx.t("progress.show-code") }
                </button>
            </div>
            { match code.as_ref() {
                Some(c) => html! {
                    <div class="progress-code">
                        <label for="progress-code-out">{ ctx.t("progress.code-label") }</label>
                        <textarea id="progress-code-out" class="progress-code-out" readonly=true rows="3"
                            value={c.clone()} />
                        <button type="button" class="button progress-copy" onclick={copy}>{ ctx.t("progress.copy") }</button>
                    </div>
                },
                None => html! {},
            } }
            <div class="progress-paste">
                <label for="progress-code-in">{ ctx.t("progress.paste-label") }</label>
                <input id="progress-code-in" class="progress-code-in" type="text" spellcheck="false"
                    autocomplete="off" value={(*pasted).clone()} oninput={on_paste} />
                <button type="button" class="button progress-import-code" onclick={import_code}
                    disabled={pasted.trim().is_empty()}>
                    { ctx.t("progress.import-code") }
                </button>
            </div>
            <p class="progress-status" role="status">
                { match status.as_ref() {
                    Some((ok, text)) => html! {
                        <span class={if *ok { "ok" } else { "bad" }} data-ok={ok.to_string()}>{ text.clone() }</span>
                    },
                    None => html! {},
                } }
            </p>
        </section>
    }
}
