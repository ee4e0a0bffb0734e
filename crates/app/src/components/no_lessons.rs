//! The embed module (the app built without the `lessons` feature) has no lessons. boot.js
//! never starts it on a page that shows one (a Learn route, a lesson's embed), so these
//! stand-ins only run when such a page is reached from inside it (a link followed in the
//! iframe): they reload the page, and boot.js then starts the whole app.

use yew::prelude::*;

use super::Ctx;

#[derive(Properties, PartialEq)]
pub struct LessonProps {
    pub id: String,
}

#[function_component]
pub fn Learn() -> Html {
    html! { <Reload /> }
}

#[function_component]
pub fn Lesson(_props: &LessonProps) -> Html {
    html! { <Reload /> }
}

#[function_component]
fn Reload() -> Html {
    use_effect_with((), |_| {
        let _ = gloo::utils::window().location().reload();
    });
    let text = use_context::<Ctx>().map_or("", |ctx| ctx.t("app.loading"));
    html! { <p class="boot" aria-busy="true">{ text }</p> }
}
