//! The learn area (placeholder until its issue lands).

use yew::prelude::*;

use super::Ctx;

#[function_component]
pub fn Learn() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! {
        <section class="page">
            <h1>{ ctx.t("learn.heading") }</h1>
            <p class="lead coming">{ ctx.t("learn.soon") }</p>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct LessonProps {
    pub id: String,
}

#[function_component]
pub fn Lesson(_props: &LessonProps) -> Html {
    html! { <Learn /> }
}
