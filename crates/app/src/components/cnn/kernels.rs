//! The step's kernels, in the order the step runs them, by phase: what each computes, how its
//! threads map to the indices it reads and writes (the backward convolutions as implicit
//! GEMMs, as the ladder explains its stages), and "Edit this kernel", which opens it in the
//! editor, where an edited kernel runs in a real training step checked against the twin.

use yew::prelude::*;

use cnn::net::Optimiser;
use page_models::cnn::kernels::by_phase;

use crate::components::Ctx;

pub fn view(ctx: &Ctx, optimiser: Optimiser) -> Html {
    let lang = ctx.lang.code();
    html! {
        <section id="cnn-kernels" class="cnn-kernels" aria-labelledby="cnn-kernels-h">
            <h2 id="cnn-kernels-h">{ ctx.t("cnn.kernels") }</h2>
            <p class="hint">{ ctx.t("cnn.kernels.hint") }</p>
            { for by_phase(Some(optimiser)).into_iter().map(|(phase, kernels)| html! {
                <div class="cnn-phase">
                    <h3>{ ctx.t(phase.key()) }</h3>
                    { for kernels.into_iter().map(|k| html! {
                        <details class="cnn-kernel" data-kernel={k.id}>
                            <summary>
                                <strong>{ ctx.t(&k.title_key()) }</strong>
                                { " · " }{ ctx.t(k.layer.key()) }
                                { k.per_block.then(|| html! { <span class="hint">{ " · " }{ ctx.t("cnn.kernel.per_block") }</span> }) }
                            </summary>
                            <p>{ ctx.t(&k.summary_key()) }</p>
                            <h4>{ ctx.t("cnn.kernel.what") }</h4>
                            <p>{ ctx.t(&k.what_key()) }</p>
                            <h4>{ ctx.t("cnn.kernel.mapping") }</h4>
                            <p>{ ctx.t(&k.mapping_key()) }</p>
                            <p>
                                <a class="button edit-kernel" data-edit={k.id}
                                    href={format!("#/editor?stage={}&lang={lang}", k.edit_stage())}>
                                    { ctx.t("cnn.kernel.edit") }
                                </a>
                                { k.source_path().map(|p| html! { <code class="hint">{ format!(" {p}") }</code> }) }
                            </p>
                        </details>
                    }) }
                </div>
            }) }
        </section>
    }
}
