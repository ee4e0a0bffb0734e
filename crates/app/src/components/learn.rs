//! The Learn area: the lesson index and one page per lesson (`#/learn/<id>`). The list of
//! lessons lives in the `lessons` crate; each lesson's body is its own module here.

mod choosing;
mod claims;
mod conv;
mod cost;
mod data_movement;
mod fp64;
mod glossary;
mod grad_accum;
mod int8;
mod kit;
mod latency_throughput;
mod memory;
mod multi_gpu;
mod occupancy;
mod precision;
mod quiz;
mod roofline;
mod simt;
mod stack;
mod systolic;
mod thermal;
mod utilisation;
mod vram;

use lessons::{LessonInfo, GLOSSARY_ID, LESSONS};
use yew::prelude::*;

use super::Ctx;

fn glossary_href(ctx: &Ctx) -> String {
    format!("#/learn/{GLOSSARY_ID}?lang={}", ctx.lang.code())
}

fn href(ctx: &Ctx, lesson: &LessonInfo) -> String {
    format!("#/learn/{}?lang={}", lesson.id, ctx.lang.code())
}

/// The index: every lesson with its one-line summary.
#[function_component]
pub fn Learn() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    html! {
        <section class="page learn">
            <h1>{ ctx.t("learn.heading") }</h1>
            <p class="lead">{ ctx.t("learn.intro") }</p>
            <p class="glossary-link"><a href={glossary_href(&ctx)}>{ ctx.t("gloss.link") }</a></p>
            <ol class="lesson-list">
                { for LESSONS.iter().map(|l| html! {
                    <li>
                        <a href={href(&ctx, l)}>{ ctx.t(l.title_key) }</a>
                        <span>{ ctx.t(l.summary_key) }</span>
                    </li>
                }) }
            </ol>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct LessonProps {
    pub id: String,
}

/// One lesson page: its title, body, its self-check questions, and links to the lessons before
/// and after it.
#[function_component]
pub fn Lesson(props: &LessonProps) -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    if props.id == GLOSSARY_ID {
        return html! { <glossary::Glossary /> };
    }
    let Some((index, info)) = lessons::lesson(&props.id) else {
        let name: String = props.id.chars().take(40).collect();
        return html! {
            <section class="page learn">
                <h1>{ ctx.t("learn.heading") }</h1>
                <p class="message error" role="alert">
                    { ctx.tf("learn.unknown", &[("name", &name)]) }
                </p>
                <Learn />
            </section>
        };
    };
    let body = match info.id {
        "latency-throughput" => html! { <latency_throughput::Body /> },
        "simt" => html! { <simt::Body /> },
        "occupancy" => html! { <occupancy::Body /> },
        "memory" => html! { <memory::Body /> },
        "roofline" => html! { <roofline::Body /> },
        "precision" => html! { <precision::Body /> },
        "vram" => html! { <vram::Body /> },
        "utilisation" => html! { <utilisation::Body /> },
        "multi-gpu" => html! { <multi_gpu::Body /> },
        "stack" => html! { <stack::Body /> },
        "choosing" => html! { <choosing::Body /> },
        "claims" => html! { <claims::Body /> },
        "conv" => html! { <conv::Body /> },
        "grad-accum" => html! { <grad_accum::Body /> },
        "cost" => html! { <cost::Body /> },
        "data-movement" => html! { <data_movement::Body /> },
        "systolic" => html! { <systolic::Body /> },
        "int8" => html! { <int8::Body /> },
        "fp64" => html! { <fp64::Body /> },
        "thermal" => html! { <thermal::Body /> },
        _ => Html::default(),
    };
    let number = (index + 1).to_string();
    let prev = index.checked_sub(1).and_then(|i| LESSONS.get(i));
    let next = LESSONS.get(index + 1);
    html! {
        <article class="page lesson" data-lesson={info.id}>
            <p class="lesson-number">{ ctx.tf("learn.number", &[("n", &number)]) }</p>
            <h1>{ ctx.t(info.title_key) }</h1>
            <super::EmbedButton widget="lesson" extra={vec![("lesson", info.id.to_string())]} />
            <p class="glossary-link"><a href={glossary_href(&ctx)}>{ ctx.t("gloss.link") }</a></p>
            { body }
            <quiz::Quiz key={info.id} lesson={info.id} />
            <nav class="lesson-nav">
                { for prev.map(|l| html! {
                    <a class="prev" href={href(&ctx, l)}>{ ctx.tf("learn.prev", &[("title", ctx.t(l.title_key))]) }</a>
                }) }
                <a class="index" href={format!("#/learn?lang={}", ctx.lang.code())}>{ ctx.t("learn.all") }</a>
                { for next.map(|l| html! {
                    <a class="next" href={href(&ctx, l)}>{ ctx.tf("learn.next", &[("title", ctx.t(l.title_key))]) }</a>
                }) }
            </nav>
        </article>
    }
}
