//! The train area (placeholder until its issue lands).

use yew::prelude::*;

use super::Ctx;

#[function_component]
pub fn Train() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! {
        <section class="page">
            <h1>{ ctx.t("train.heading") }</h1>
            <p class="lead coming">{ ctx.t("train.soon") }</p>
        </section>
    }
}
