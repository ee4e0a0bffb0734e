//! One function per route; each area's page lives in its own component module.

use yew::prelude::*;

use super::embed_host::EmbedHost;
use super::{
    Cnn, Conv, Ctx, EmbedButton, Gpt, GpuPanel, KernelEditor, Ladder, Learn, Lesson, PuzzleList,
    PuzzlePage, Race, ScratchEditor, Train, Visualiser,
};
use crate::route::Route;
use page_models::embed::WIDGETS;

pub fn page(ctx: &Ctx) -> Html {
    match &ctx.route {
        Route::Home => home(ctx),
        Route::Learn => html! { <Learn /> },
        Route::Lesson { lesson } => html! { <Lesson id={lesson.clone()} /> },
        Route::Kernels => kernels(ctx),
        Route::Visualiser => html! { <Visualiser /> },
        Route::Race => html! { <Race /> },
        Route::Train => html! { <Train /> },
        Route::Editor if ctx.query.get("scratch").is_some() => html! { <ScratchEditor /> },
        Route::Editor => {
            // Keyed by stage, so another stage starts from its own source and draft.
            let key = ctx.query.get("stage").unwrap_or_default().to_string();
            html! { <KernelEditor {key} /> }
        }
        Route::Puzzles => html! { <PuzzleList /> },
        Route::Puzzle { id } => html! { <PuzzlePage key={id.clone()} id={id.clone()} /> },
        Route::Conv => html! { <Conv /> },
        Route::Cnn => html! { <Cnn /> },
        Route::Gpt => html! { <Gpt /> },
        Route::EmbedIndex => embed_index(ctx),
        Route::Embed { widget } => html! { <EmbedHost widget={widget.clone()} /> },
        Route::NotFound => not_found(ctx),
    }
}

fn link(ctx: &Ctx, route: Route) -> String {
    use yew_router::Routable;
    format!("#{}?lang={}", route.to_path(), ctx.lang.code())
}

/// The landing: the three strongest experiences (the matmul ladder, the race, the CNN) as
/// the first things under the introduction, so a phone shows all three without scrolling;
/// then every area as a card, those three first.
fn home(ctx: &Ctx) -> Html {
    let starts = [
        (Route::Kernels, "home.go.ladder", "button primary"),
        (Route::Race, "home.go.race", "button"),
        (Route::Cnn, "home.go.cnn", "button"),
    ];
    let cards = [
        (Route::Kernels, "nav.kernels", "home.card.kernels"),
        (Route::Race, "nav.race", "home.card.race"),
        (Route::Cnn, "nav.cnn", "home.card.cnn"),
        (Route::Gpt, "nav.gpt", "home.card.gpt"),
        (Route::Learn, "nav.learn", "home.card.learn"),
        (Route::Visualiser, "nav.visualiser", "home.card.visualiser"),
        (Route::Train, "nav.train", "home.card.train"),
        (Route::Conv, "nav.conv", "home.card.conv"),
        (Route::Puzzles, "nav.puzzles", "home.card.puzzles"),
    ];
    html! {
        <>
            <section class="hero">
                <h1>{ ctx.t("home.heading") }</h1>
                <p class="lead">{ ctx.t("home.intro") }</p>
                <nav class="home-starts" aria-label={ctx.t("home.go")}>
                    { for starts.iter().map(|(route, label, class)| html! {
                        <a class={*class} href={link(ctx, route.clone())}>{ ctx.t(label) }</a>
                    }) }
                </nav>
            </section>
            <div class="columns">
                <section class="cards">
                    { for cards.iter().map(|(route, title, body)| html! {
                        <a class="card" href={link(ctx, route.clone())}>
                            <h2>{ ctx.t(title) }</h2>
                            <p>{ ctx.t(body) }</p>
                        </a>
                    }) }
                </section>
                <GpuPanel />
            </div>
        </>
    }
}

fn kernels(ctx: &Ctx) -> Html {
    html! {
        <section class="page">
            <h1>{ ctx.t("kernels.heading") }</h1>
            <p class="lead">{ ctx.t(match page_models::run_family::family_from_query(&ctx.query) {
                Ok(page_models::run_family::RunFamily::Conv) => "convrun.intro",
                _ => "kernels.intro",
            }) }</p>
            <Ladder />
            <EmbedButton widget={match page_models::run_family::family_from_query(&ctx.query) {
                Ok(page_models::run_family::RunFamily::Conv) => "conv-ladder",
                _ => "ladder",
            }} />
            <details class="gpu-details" open=true>
                <summary>{ ctx.t("gpu.heading") }</summary>
                <GpuPanel />
            </details>
        </section>
    }
}

fn embed_index(ctx: &Ctx) -> Html {
    let base = gloo::utils::window()
        .location()
        .href()
        .ok()
        .map(|h| h.split('#').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    html! {
        <section class="page">
            <h1>{ ctx.t("embed.heading") }</h1>
            <p class="lead">{ ctx.t("embed.intro") }</p>
            <ul class="embeds">
                { for WIDGETS.iter().map(|w| {
                    let (name, key) = (w.id, w.title_key);
                    let href = format!("#/embed/{name}?lang={}", ctx.lang.code());
                    html! {
                        <li>
                            <a href={href.clone()}><code>{ format!("{base}{href}") }</code></a>
                            <span>{ ctx.t(key) }</span>
                            if !w.params.is_empty() {
                                { " " }<code class="embed-params">{ w.params.iter().map(|p| format!("{p}=")).collect::<Vec<_>>().join(" ") }</code>
                            }
                        </li>
                    }
                }) }
            </ul>
        </section>
    }
}

fn not_found(ctx: &Ctx) -> Html {
    html! {
        <section class="page">
            <h1>{ ctx.t("notfound.heading") }</h1>
            <p>{ ctx.t("notfound.body") }</p>
            <a href={link(ctx, Route::Home)}>{ ctx.t("notfound.back") }</a>
        </section>
    }
}
