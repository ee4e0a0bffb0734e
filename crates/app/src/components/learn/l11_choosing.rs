//! Lesson 11: `choosing` (placeholder body until written).

use yew::prelude::*;

use crate::components::Ctx;

#[function_component]
pub fn Body() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! { <p class="lead">{ ctx.t("lesson.choosing.summary") }</p> }
}
