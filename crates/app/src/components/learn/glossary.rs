//! The glossary (`#/learn/glossary`): CUDA ↔ WebGPU/WGSL ↔ Chinese, one row per idea, from
//! `lessons::glossary::TERMS`; each row's explanation is translated (`gloss.<id>`). Every lesson
//! page links here (`mod.rs`, the lesson shell).

use lessons::glossary::TERMS;
use yew::prelude::*;

use crate::components::Ctx;

/// Column heads that are API names (the same in every language).
const CUDA: &str = "CUDA";
const WGSL: &str = "WebGPU / WGSL";

#[function_component]
pub fn Glossary() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! {
        <article class="page lesson glossary" data-lesson="glossary">
            <h1>{ ctx.t("gloss.heading") }</h1>
            <p class="lead">{ ctx.t("gloss.intro") }</p>
            <div class="table-scroll">
                <table class="facts glossary-table" id="glossary-table">
                    <thead><tr>
                        <th scope="col">{ CUDA }</th>
                        <th scope="col">{ WGSL }</th>
                        <th scope="col">{ ctx.t("gloss.col.zh") }</th>
                        <th scope="col">{ ctx.t("gloss.col.meaning") }</th>
                    </tr></thead>
                    <tbody>
                        { for TERMS.iter().map(|t| html! {
                            <tr id={format!("g-{}", t.id)} data-term={t.id}>
                                // data-label: the column's name, shown beside each cell where
                                // a phone's narrow screen stacks a row (www/css/learn.css).
                                <td data-label={CUDA}><code>{ t.cuda }</code></td>
                                <td data-label={WGSL}><code>{ t.wgsl }</code></td>
                                <td data-label={ctx.t("gloss.col.zh")}><span lang="zh" class="zh-term">{ t.zh }</span></td>
                                <td data-label={ctx.t("gloss.col.meaning")}>{ ctx.t(&format!("gloss.{}", t.id)) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            <p class="note">{ ctx.t("gloss.note") }</p>
            <nav class="lesson-nav">
                <a class="index" href={format!("#/learn?lang={}", ctx.lang.code())}>{ ctx.t("learn.all") }</a>
            </nav>
        </article>
    }
}
