//! Yew components. They read state, render translated text and dispatch work to the plain
//! crates; they hold no user-visible strings and no kernel logic.

mod chart_width;
#[cfg(feature = "cnn-page")]
mod cnn;
#[cfg(feature = "editor-pages")]
mod code_editor;
#[cfg(feature = "editor-pages")]
mod code_work;
mod conv;
mod cssom;
mod draft_input;
mod edit_link;
#[cfg(feature = "editor-pages")]
mod edit_run;
#[cfg(feature = "editor-pages")]
mod editor_page;
/// Stand-ins for the pages a build leaves out (the embed module's): they reload into the
/// whole app.
#[cfg(not(all(feature = "lessons", feature = "cnn-page", feature = "editor-pages")))]
mod elsewhere;
mod embed_button;
pub mod embed_host;
#[cfg(feature = "cnn-page")]
mod gpt;
mod gpu_panel;
mod keep;
mod kernel_run;
mod ladder;
#[cfg(feature = "lessons")]
mod learn;
mod page_state;
mod pages;
mod playback;
#[cfg(feature = "editor-pages")]
mod progress_transfer;
#[cfg(feature = "editor-pages")]
mod puzzle_page;
mod race;
mod run_lifecycle;
mod schedule_replay;
#[cfg(feature = "editor-pages")]
mod scratch_page;
mod shell;
mod train;
mod update_notice;
mod visualiser;

#[cfg(feature = "cnn-page")]
pub use cnn::Cnn;
pub use conv::Conv;
#[cfg(feature = "editor-pages")]
pub use editor_page::KernelEditor;
#[cfg(not(feature = "cnn-page"))]
pub use elsewhere::{Cnn, Gpt};
#[cfg(not(feature = "editor-pages"))]
pub use elsewhere::{KernelEditor, PuzzleList, PuzzlePage, ScratchEditor};
#[cfg(not(feature = "lessons"))]
pub use elsewhere::{Learn, Lesson};
pub use embed_button::EmbedButton;
#[cfg(feature = "cnn-page")]
pub use gpt::Gpt;
pub use gpu_panel::GpuPanel;
/// The Run widget's former module name, kept for the pages that import its helpers by it.
use kernel_run as matmul_run;
pub use kernel_run::KernelRun;
pub use ladder::Ladder;
#[cfg(feature = "lessons")]
pub use learn::{Learn, Lesson};
#[cfg(feature = "editor-pages")]
pub use puzzle_page::{PuzzleList, PuzzlePage};
pub use race::Race;
#[cfg(feature = "editor-pages")]
pub use scratch_page::ScratchEditor;
pub use shell::{initial_text, App};
pub use train::Train;
pub use visualiser::Visualiser;

use crate::i18n::Lang;
use crate::probe::WebGpuStatus;
use crate::route::Route;
use page_models::query::Query;

/// What every component may read: the language, what the browser said about WebGPU, and the
/// current route and query (the URL state).
#[derive(Clone, Debug, PartialEq)]
pub struct Ctx {
    pub lang: Lang,
    pub webgpu: WebGpuStatus,
    pub route: Route,
    pub query: Query,
    /// Instructor mode: the widgets show their Embed buttons (`page_models::instructor`).
    pub instructor: bool,
}

impl Ctx {
    pub fn t(&self, key: &str) -> &'static str {
        crate::i18n::t(self.lang, key)
    }

    pub fn tf(&self, key: &str, args: &[(&str, &str)]) -> String {
        crate::i18n::tf(self.lang, key, args)
    }

    /// `t`, with its document references (`docs/….md`, `FC-…`) linked (`page_models::doc_links`).
    pub fn linked(&self, key: &str) -> yew::Html {
        linked(self.t(key))
    }

    /// `tf`, linked like [`Ctx::linked`].
    pub fn linked_f(&self, key: &str, args: &[(&str, &str)]) -> yew::Html {
        linked(&self.tf(key, args))
    }
}

/// A text with its document references as links to the documents the site carries (they open
/// in a new tab, so a lesson or an embed stays where it is).
pub fn linked(text: &str) -> yew::Html {
    use page_models::doc_links::{pieces, Piece};
    yew::html! {
        <>{ for pieces(text).into_iter().map(|p| match p {
            Piece::Text(t) => yew::html! { { t.to_string() } },
            Piece::Link { text, href } => yew::html! {
                <a class="doc-link" href={href} target="_blank" rel="noopener">{ text.to_string() }</a>
            },
        }) }</>
    }
}

/// A results table that may be wider than a phone: it scrolls sideways inside its own box, never
/// the page. The box takes keyboard focus (so arrow keys scroll it) and is a region named `name`.
pub fn scroll_table(ctx: &Ctx, name: &str, table: yew::Html) -> yew::Html {
    yew::html! {
        <div class="table-scroll" tabindex="0" role="region"
            aria-label={ctx.tf("app.table_scroll", &[("name", name)])}>{ table }</div>
    }
}

/// Replaces the URL's query for the current route (no new history entry), so the state of a
/// view can be linked.
pub fn replace_query(navigator: &yew_router::prelude::Navigator, route: &Route, query: &Query) {
    let _ = navigator.replace_with_query(route, yew_router::query::Raw(query.encode()));
}
