//! The race area (placeholder until its issue lands).

use yew::prelude::*;

use super::Ctx;

#[function_component]
pub fn Race() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! {
        <section class="page">
            <h1>{ ctx.t("race.heading") }</h1>
            <p class="lead coming">{ ctx.t("race.soon") }</p>
        </section>
    }
}
