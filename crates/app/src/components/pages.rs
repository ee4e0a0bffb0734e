//! One function per route; each area's page lives in its own component module.

use yew::prelude::*;

use super::{Conv, Ctx, GpuPanel, Ladder, Learn, Lesson, MatmulRun, Race, Train, Visualiser};
use crate::route::Route;

/// Widgets that can be embedded on their own, with their description keys.
pub const EMBEDDABLE: [(&str, &str); 2] = [
    ("matmul", "embed.widget.matmul"),
    ("gpu", "embed.widget.gpu"),
];

pub fn page(ctx: &Ctx) -> Html {
    match &ctx.route {
        Route::Home => home(ctx),
        Route::Learn => html! { <Learn /> },
        Route::Lesson { lesson } => html! { <Lesson id={lesson.clone()} /> },
        Route::Kernels => kernels(ctx),
        Route::Visualiser => html! { <Visualiser /> },
        Route::Race => html! { <Race /> },
        Route::Train => html! { <Train /> },
        Route::Conv => html! { <Conv /> },
        Route::EmbedIndex => embed_index(ctx),
        Route::Embed { widget } => embed(ctx, widget),
        Route::NotFound => not_found(ctx),
    }
}

fn link(ctx: &Ctx, route: Route) -> String {
    use yew_router::Routable;
    format!("#{}?lang={}", route.to_path(), ctx.lang.code())
}

fn home(ctx: &Ctx) -> Html {
    let cards = [
        (Route::Learn, "nav.learn", "home.card.learn"),
        (Route::Kernels, "nav.kernels", "home.card.kernels"),
        (Route::Race, "nav.race", "home.card.race"),
        (Route::Train, "nav.train", "home.card.train"),
        (Route::Conv, "nav.conv", "home.card.conv"),
    ];
    html! {
        <>
            <section class="hero">
                <h1>{ ctx.t("home.heading") }</h1>
                <p class="lead">{ ctx.t("home.intro") }</p>
                <a class="button primary" href={link(ctx, Route::Kernels)}>{ ctx.t("home.start") }</a>
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
            <p class="lead">{ ctx.t("kernels.intro") }</p>
            <Ladder />
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
                { for EMBEDDABLE.iter().map(|(name, key)| {
                    let href = format!("#/embed/{name}?lang={}", ctx.lang.code());
                    html! {
                        <li>
                            <a href={href.clone()}><code>{ format!("{base}{href}") }</code></a>
                            <span>{ ctx.t(key) }</span>
                        </li>
                    }
                }) }
            </ul>
        </section>
    }
}

fn embed(ctx: &Ctx, widget: &str) -> Html {
    let full = {
        let mut q = ctx.query.clone();
        q.set("lang", ctx.lang.code());
        match widget {
            "matmul" => format!("#/kernels?{}", q.encode()),
            _ => link(ctx, Route::Home),
        }
    };
    let body = match widget {
        "matmul" => {
            let id = ctx
                .query
                .get("stage")
                .and_then(gpu_runtime::kernel)
                .map(|k| k.id)
                .unwrap_or(super::matmul_run::DEFAULT_KERNEL);
            html! { <MatmulRun kernel_id={id} /> }
        }
        "gpu" => html! { <GpuPanel /> },
        other => {
            let list = EMBEDDABLE
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ");
            let name: String = other.chars().take(40).collect();
            html! {
                <p class="message error" role="alert">
                    { ctx.tf("embed.unknown", &[("name", &name), ("list", &list)]) }
                </p>
            }
        }
    };
    html! {
        <>
            { body }
            <p class="embed-open"><a href={full} target="_top">{ ctx.t("embed.open") }</a></p>
        </>
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
