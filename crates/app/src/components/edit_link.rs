//! "Edit this kernel" links. Apart from the editor's page so that the pages that link to it
//! carry them in the embed module too, which is built without the editor (`editor-pages`).

use yew::prelude::*;

use super::Ctx;
use page_models::edit_target::Target;

/// The editor's address for kernel (or conv stage) `id`.
pub fn href(ctx: &Ctx, id: &str) -> String {
    format!("#/editor?lang={}&stage={id}", ctx.lang.code())
}

/// "Edit this kernel": the link every page that shows a kernel puts beside it (`id` is a
/// kernel's id, or a conv stage's).
pub fn edit_link(ctx: &Ctx, id: &str) -> Html {
    let title = Target::from_id(id)
        .map(|t| ctx.tf("editor.edit_named", &[("title", ctx.t(&t.title_key()))]))
        .unwrap_or_default();
    html! {
        <a class="button edit-kernel" href={href(ctx, id)} data-edit={id.to_string()} title={title.clone()} aria-label={title}>{ ctx.t("editor.edit_this") }</a>
    }
}

/// Like [`edit_link`], but the button's text names the kernel: for a place that offers more
/// than one kernel to edit, so the buttons do not read the same. Only lessons use it (the
/// embed module is built without them).
#[cfg(feature = "lessons")]
pub fn edit_link_named(ctx: &Ctx, id: &str) -> Html {
    let title = Target::from_id(id)
        .map(|t| ctx.tf("editor.edit_named", &[("title", ctx.t(&t.title_key()))]))
        .unwrap_or_else(|| ctx.t("editor.edit_this").to_string());
    html! {
        <a class="button edit-kernel" href={href(ctx, id)} data-edit={id.to_string()}>{ title }</a>
    }
}
