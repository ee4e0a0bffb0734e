//! Routes and the hash URL they live in (`#/kernels?lang=zh&m=256`). Hash routing keeps the
//! site working from any sub-path of any static host, with no server rewrites.

use yew_router::prelude::*;

use crate::i18n::Part;

#[derive(Clone, Debug, PartialEq, Eq, Routable)]
pub enum Route {
    #[at("/")]
    Home,
    #[at("/learn")]
    Learn,
    #[at("/learn/:lesson")]
    Lesson { lesson: String },
    #[at("/kernels")]
    Kernels,
    #[at("/visualiser")]
    Visualiser,
    #[at("/race")]
    Race,
    #[at("/train")]
    Train,
    #[at("/editor")]
    Editor,
    #[at("/puzzles")]
    Puzzles,
    #[at("/puzzles/:id")]
    Puzzle { id: String },
    #[at("/conv")]
    Conv,
    #[at("/cnn")]
    Cnn,
    #[at("/gpt")]
    Gpt,
    #[at("/embed")]
    EmbedIndex,
    #[at("/embed/:widget")]
    Embed { widget: String },
    #[not_found]
    #[at("/404")]
    NotFound,
}

impl Route {
    /// The areas in the main navigation, with their label keys.
    pub const NAV: [(Route, &'static str); 11] = [
        (Route::Home, "nav.home"),
        (Route::Learn, "nav.learn"),
        (Route::Kernels, "nav.kernels"),
        (Route::Visualiser, "nav.visualiser"),
        (Route::Race, "nav.race"),
        (Route::Train, "nav.train"),
        (Route::Puzzles, "nav.puzzles"),
        (Route::Conv, "nav.conv"),
        (Route::Cnn, "nav.cnn"),
        (Route::Gpt, "nav.gpt"),
        (Route::EmbedIndex, "nav.embed"),
    ];

    /// The parts of the text this page shows besides the core (`i18n::Part`), fetched before
    /// it renders. A key outside them is reported in the console (the browser tests fail on
    /// it) and fetched late.
    pub fn text_parts(&self) -> &'static [Part] {
        match self {
            Route::Home | Route::EmbedIndex | Route::NotFound => &[],
            // The kernel pages, the SIMT view and the race carry the conv stages too.
            Route::Kernels | Route::Visualiser | Route::Conv => &[Part::Conv],
            Route::Race => &[Part::Race, Part::Conv],
            Route::Train => &[Part::Train],
            Route::Cnn => &[Part::Cnn, Part::CnnKernels],
            Route::Gpt => &[Part::Gpt],
            // The editor explains a CNN kernel as the CNN page does.
            Route::Editor => &[Part::Editor, Part::CnnKernels],
            Route::Puzzles | Route::Puzzle { .. } => &[Part::Editor],
            // Lessons embed widgets of every area (the GPT's data credit is its page's own).
            Route::Learn | Route::Lesson { .. } => &[
                Part::Race,
                Part::Conv,
                Part::Editor,
                Part::Train,
                Part::Lessons,
                Part::Cnn,
                Part::CnnKernels,
            ],
            Route::Embed { widget } => embed_text_parts(widget),
        }
    }

    /// Whether this build has the route's page. The embed module (the app built without its
    /// default features, which boot.js starts for the landing page and most embeds) leaves out
    /// the lessons, the CNN page and the editor's pages; there they are stand-ins that reload
    /// into the whole app (`components/elsewhere.rs`).
    pub fn in_this_build(&self) -> bool {
        let lessons = cfg!(feature = "lessons");
        let cnn = cfg!(feature = "cnn-page");
        let editor = cfg!(feature = "editor-pages");
        match self {
            Route::Learn | Route::Lesson { .. } => lessons,
            Route::Cnn | Route::Gpt => cnn,
            Route::Editor | Route::Puzzles | Route::Puzzle { .. } => editor,
            Route::Embed { widget } => match widget.as_str() {
                "lesson" => lessons,
                "cnn" | "gpt" => cnn,
                "editor" | "puzzle" => editor,
                _ => true,
            },
            _ => true,
        }
    }

    /// Embedded widgets are shown without the header and navigation.
    pub fn is_embedded(&self) -> bool {
        matches!(self, Route::Embed { .. })
    }
}

/// A hash that does not start with `#/` (typed by hand, or a stale link) would make the
/// router's history panic, and an alias of a page (`#/simt`) would be "not found"; rewrite
/// either before the router reads it, on load and on every navigation. Registered before the router exists, so this listener runs first.
pub fn guard_hash() {
    fn fix() {
        let window = gloo::utils::window();
        let Ok(hash) = window.location().hash() else {
            return;
        };
        // Another name for a page (`#/simt`) becomes the page's own, query kept.
        let fixed = if hash.starts_with("#/") {
            match page_models::route_alias::canonical_hash(&hash) {
                Some(h) => h,
                None => return,
            }
        } else {
            format!("#/{}", hash.trim_start_matches('#'))
        };
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&fixed));
        }
    }
    fix();
    let listener = gloo::events::EventListener::new(&gloo::utils::window(), "popstate", |_| fix());
    listener.forget();
}

/// The text parts (besides the core) a widget's embed shows: only its own area's, which is
/// less than its page's (the matmul Run widget has none of the kernel page's conv text).
fn embed_text_parts(id: &str) -> &'static [Part] {
    match id {
        "race" | "sweep" | "claim" => &[Part::Race],
        "conv-race" => &[Part::Race, Part::Conv],
        "train" | "batch" => &[Part::Train],
        "cnn" => &[Part::Cnn, Part::CnnKernels],
        "gpt" => &[Part::Gpt],
        "editor" => &[Part::Editor, Part::CnnKernels],
        "puzzle" => &[Part::Editor],
        // The SIMT view and the scheduling replay name the conv stages they can show.
        "simt" | "simt-compare" | "schedule" => &[Part::Conv],
        "lesson" => &Part::ALL,
        id if id.starts_with("conv-") => &[Part::Conv],
        _ => &[],
    }
}
