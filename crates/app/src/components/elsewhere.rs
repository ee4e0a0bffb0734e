//! The embed module (the app built without its default features) leaves out the lessons, the
//! CNN and GPT pages and the editor's pages (the editor, scratch mode and the puzzles), each a large part
//! of the code. boot.js never starts it on a page that shows one (docs/benchmarks.md "First
//! load"), so these stand-ins only run when such a page is reached from inside it (a link
//! followed from the landing page or in an embed's iframe): they reload the page, and boot.js
//! then starts the whole app. The shell gives their page no ready signal, and the visit count
//! goes on across the reload (`crate::visits`), so a test that waits for the next visit's page
//! waits for the whole app's.

use yew::prelude::*;

use super::Ctx;

#[cfg(not(feature = "lessons"))]
#[derive(Properties, PartialEq)]
pub struct LessonProps {
    pub id: String,
}

#[cfg(not(feature = "editor-pages"))]
#[derive(Properties, PartialEq)]
pub struct PuzzleProps {
    pub id: AttrValue,
}

#[cfg(not(feature = "lessons"))]
#[function_component]
pub fn Learn() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "lessons"))]
#[function_component]
pub fn Lesson(_props: &LessonProps) -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "cnn-page"))]
#[function_component]
pub fn Cnn() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "cnn-page"))]
#[function_component]
pub fn Gpt() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "editor-pages"))]
#[function_component]
pub fn KernelEditor() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "editor-pages"))]
#[function_component]
pub fn ScratchEditor() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "editor-pages"))]
#[function_component]
pub fn PuzzleList() -> Html {
    html! { <Reload /> }
}

#[cfg(not(feature = "editor-pages"))]
#[function_component]
pub fn PuzzlePage(_props: &PuzzleProps) -> Html {
    html! { <Reload /> }
}

#[function_component]
fn Reload() -> Html {
    use_effect_with((), |_| {
        crate::visits::hand_over();
        let _ = gloo::utils::window().location().reload();
    });
    let text = use_context::<Ctx>().map_or("", |ctx| ctx.t("app.loading"));
    html! { <p class="boot" aria-busy="true">{ text }</p> }
}
