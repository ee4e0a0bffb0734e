//! The CNN page (`#/cnn`, issue 24): a LeNet-style network trained on the MNIST digits by the
//! GPU session (`gpu_runtime::cnn_training`) beside the tuned CPU trainer; its state is
//! `page_models::cnn`.

use yew::prelude::*;

use super::Ctx;

#[function_component]
pub fn Cnn() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    html! {
        <section class="page cnn">
            <h1>{ ctx.t("cnn.heading") }</h1>
        </section>
    }
}
