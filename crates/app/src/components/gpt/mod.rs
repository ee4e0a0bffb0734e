//! The GPT page (`#/gpt`): the articles' large-model chapter on the learner's GPU. Today it
//! holds the text a tiny GPT trains on (`gpt_data_asset`, with its credit), the memory tally
//! of that model and of GPT-3 (`gpt::memory`), and the memory-wall experiment ([`wall`]).
//! Training joins it on the one training engine (issue 44).

mod attention;
mod batching;
mod claim;
mod embed;
mod train;
mod wall;

use std::rc::Rc;

use gpt::asset::Dataset;
use gpt::memory::{tally, Tally, GPT3};
use gpt::model::Config;
use yew::prelude::*;

use super::{scroll_table, Ctx};
use crate::gpt_data_asset::{self, credit_args, credit_key, name_key, AssetError, Loaded};
use crate::i18n::Lang;

/// A tally row: its label's key and what it counts.
type TallyRow = (&'static str, fn(&Tally) -> u64);

/// Windows of the full context per training step, for the tally (the page's default batch).
const TALLY_BATCH: u64 = 32;

/// The data set the page shows: `data=names|poems`, else the language's (names in English,
/// the quatrains in Chinese).
fn dataset(ctx: &Ctx) -> Dataset {
    match ctx.query.get("data") {
        Some("names") => Dataset::Names,
        Some("poems") => Dataset::Poems,
        _ if ctx.lang == Lang::Zh => Dataset::Poems,
        _ => Dataset::Names,
    }
}

#[function_component]
pub fn Gpt() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let data = dataset(&ctx);
    let loaded = use_state(|| None::<Result<Rc<Loaded>, AssetError>>);
    {
        let loaded = loaded.clone();
        use_effect_with(data, move |d| {
            loaded.set(None);
            let d = *d;
            wasm_bindgen_futures::spawn_local(async move {
                loaded.set(Some(gpt_data_asset::load(d).await));
            });
        });
    }
    let bad_data = ctx
        .query
        .get("data")
        .filter(|v| !["names", "poems"].contains(v));
    html! {
        <section class="page gpt-page" id="gpt-page">
            <h1>{ ctx.t("gpt.heading") }</h1>
            <p class="lead">{ ctx.t("gpt.intro") }</p>
            <super::EmbedButton widget="gpt" />
            if let Some(v) = bad_data {
                <div class="message error" role="alert" id="gpt-url-errors">
                    <p>{ ctx.tf("gpt.error.url", &[("key", "data"), ("value", v), ("default", dataset_id(data))]) }</p>
                </div>
            }
            { data_section(&ctx, data, (*loaded).as_ref()) }
            { (*loaded).as_ref().and_then(|l| l.as_ref().ok()).map(|l| tally_section(&ctx, l)) }
            <train::TrainSection data={data} />
            <wall::WallView />
            <batching::BatchingView />
        </section>
    }
}

fn dataset_id(d: Dataset) -> &'static str {
    match d {
        Dataset::Names => "names",
        Dataset::Poems => "poems",
    }
}

/// The text the model trains on: loading, its credit and licence, or why it failed.
fn data_section(ctx: &Ctx, d: Dataset, loaded: Option<&Result<Rc<Loaded>, AssetError>>) -> Html {
    let name = ctx.t(name_key(d));
    let body = match loaded {
        None => html! {
            <p class="status running" id="gpt-data-loading">
                { ctx.tf("gpt.data.loading", &[("name", name), ("size", size_text(d))]) }
            </p>
        },
        Some(Ok(l)) => {
            let args = credit_args(l);
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            html! {
                <>
                    <p id="gpt-data" data-docs={l.asset.docs.len().to_string()}
                        data-vocab={l.asset.vocab.len().to_string()}>
                        { ctx.tf("gpt.data.ready", &[
                            ("n", &numbers::count(l.asset.docs.len() as u64)),
                            ("vocab", &numbers::count(l.asset.vocab.len() as u64)),
                        ]) }
                    </p>
                    <p class="hint" id="gpt-credit">{ ctx.tf(credit_key(d), &args) }</p>
                </>
            }
        }
        Some(Err(e)) => {
            let mut args = e.args();
            args.push(("name", name.to_string()));
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            html! {
                <p class="message error" role="alert" id="gpt-data-error" data-error={e.key()}>
                    { ctx.tf(e.key(), &args) }
                </p>
            }
        }
    };
    html! {
        <section class="panel gpt-data">
            <h2>{ ctx.t("gpt.data.heading") }</h2>
            { body }
        </section>
    }
}

/// The download's size in words (gzip, as the build reports it in docs/data.md).
fn size_text(d: Dataset) -> &'static str {
    match d {
        Dataset::Names => "21 kB",
        Dataset::Poems => "152 kB",
    }
}

/// What training keeps, for the page's model on this text and for GPT-3, in numbers and in
/// bytes of f32.
fn tally_section(ctx: &Ctx, l: &Loaded) -> Html {
    let ours = Config::default_for(l.asset.vocab.len());
    let small = tally(&ours, TALLY_BATCH);
    let big = tally(&GPT3, 1);
    let rows: [TallyRow; 6] = [
        ("gpt.tally.params", |t| t.params),
        ("gpt.tally.grads", |t| t.grads),
        ("gpt.tally.adam", |t| t.adam),
        ("gpt.tally.acts", |t| t.activations),
        ("gpt.tally.total", Tally::total_training),
        ("gpt.tally.kv", |t| t.kv_cache),
    ];
    let cell = |n: u64| {
        html! {
            <td><span class="num">{ numbers::count(n) }</span><br/>
                <span class="hint">{ numbers::bytes(4 * n) }</span></td>
        }
    };
    let table = html! {
        <table class="gpt-tally" id="gpt-tally" data-params={small.params.to_string()}
            data-gpt3-params={big.params.to_string()}>
            <thead><tr>
                <th></th>
                <th>{ ctx.tf("gpt.tally.ours", &[
                    ("layers", &ours.layers.to_string()), ("width", &ours.width.to_string()),
                    ("heads", &ours.heads.to_string()), ("context", &ours.context.to_string()),
                    ("batch", &TALLY_BATCH.to_string()),
                ]) }</th>
                <th>{ ctx.t("gpt.tally.gpt3") }</th>
            </tr></thead>
            <tbody>
                { for rows.iter().map(|(key, f)| html! {
                    <tr data-row={*key}><th scope="row">{ ctx.t(key) }</th>{ cell(f(&small)) }{ cell(f(&big)) }</tr>
                }) }
            </tbody>
        </table>
    };
    html! {
        <section class="panel gpt-tally-panel">
            <h2>{ ctx.t("gpt.tally.heading") }</h2>
            <p>{ ctx.t("gpt.tally.intro") }</p>
            { scroll_table(ctx, ctx.t("gpt.tally.heading"), table) }
            <p class="hint">{ ctx.tf("gpt.tally.note", &[
                // Decimal, as the H100's 80 GB it is compared with.
                ("size", &numbers::decimal_bytes(4.0 * (big.params + big.grads + big.adam) as f64)),
            ]) }</p>
        </section>
    }
}
