//! Lesson `vram`: the memory wall and VRAM budgeting. A calculator (state in the URL query) built on
//! `lessons::vram`, a stacked SVG bar of the breakdown, and which GPUs it fits.
//!
//! This module also holds `form`, the small field helpers the calculator lessons share.

use lessons::gpus::GPUS;
use lessons::units::parse_number;
use lessons::vram::{self, Activations, Budget, BudgetError, Dtype, Optimiser};
use numbers::{binary_bytes, decimal_bytes};
use yew::prelude::*;
use yew_router::prelude::*;

use crate::components::Ctx;
use form::{checkbox, q, select, text_field};

/// Field helpers: every widget keeps its inputs in the URL query, so a teacher can link any
/// state; the field shows the raw text and its own error message.
pub(super) mod form {
    use yew::prelude::*;
    use yew_router::prelude::*;

    use crate::components::{replace_query, Ctx};

    /// The query value of `key`, or `default`.
    pub fn q(ctx: &Ctx, key: &str, default: &str) -> String {
        ctx.query.get(key).unwrap_or(default).to_string()
    }

    /// Writes `pairs` into the URL query (replacing, not adding a history entry).
    pub fn set(ctx: &Ctx, nav: &Option<Navigator>, pairs: &[(&str, &str)]) {
        if let Some(nav) = nav {
            let mut query = ctx.query.clone();
            for (k, v) in pairs {
                query.set(k, v);
            }
            replace_query(nav, &ctx.route, &query);
        }
    }

    /// A field's error text, shown under it.
    pub type FieldError = Option<String>;

    pub fn text_field(
        ctx: &Ctx,
        nav: &Option<Navigator>,
        key: &'static str,
        label: &str,
        value: String,
        error: FieldError,
    ) -> Html {
        let oninput = {
            let (ctx, nav) = (ctx.clone(), nav.clone());
            Callback::from(move |e: InputEvent| {
                let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                set(&ctx, &nav, &[(key, &input.value())]);
            })
        };
        let id = format!("f-{key}");
        let err_id = format!("f-{key}-error");
        html! {
            <div class={classes!("field", error.is_some().then_some("invalid"))}>
                <label for={id.clone()}>{ label.to_string() }</label>
                <input id={id} name={key} type="text" autocomplete="off" spellcheck="false"
                    {value} {oninput}
                    aria-invalid={error.is_some().to_string()}
                    aria-describedby={err_id.clone()} />
                <p id={err_id} class="field-error" role="alert">{ error.unwrap_or_default() }</p>
            </div>
        }
    }

    /// A drop-down of (code, label) options; an unknown current value selects nothing.
    pub fn select(
        ctx: &Ctx,
        nav: &Option<Navigator>,
        key: &'static str,
        label: &str,
        options: Vec<(String, String)>,
        current: &str,
    ) -> Html {
        let onchange = {
            let (ctx, nav) = (ctx.clone(), nav.clone());
            Callback::from(move |e: Event| {
                let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
                set(&ctx, &nav, &[(key, &el.value())]);
            })
        };
        let id = format!("f-{key}");
        html! {
            <div class="field">
                <label for={id.clone()}>{ label.to_string() }</label>
                <select id={id} name={key} {onchange}>
                    { for options.into_iter().map(|(code, text)| html! {
                        <option value={code.clone()} selected={code == current}>{ text }</option>
                    }) }
                </select>
            </div>
        }
    }

    pub fn checkbox(
        ctx: &Ctx,
        nav: &Option<Navigator>,
        key: &'static str,
        label: &str,
        checked: bool,
    ) -> Html {
        let onchange = {
            let (ctx, nav) = (ctx.clone(), nav.clone());
            Callback::from(move |e: Event| {
                let el: web_sys::HtmlInputElement = e.target_unchecked_into();
                set(&ctx, &nav, &[(key, if el.checked() { "1" } else { "0" })]);
            })
        };
        let id = format!("f-{key}");
        html! {
            <div class="field check">
                <input id={id.clone()} name={key} type="checkbox" {checked} {onchange} />
                <label for={id}>{ label.to_string() }</label>
            </div>
        }
    }

    /// A row of buttons that each set several query values at once.
    pub fn presets(
        ctx: &Ctx,
        nav: &Option<Navigator>,
        label: &str,
        items: Vec<(String, Vec<(&'static str, String)>)>,
    ) -> Html {
        html! {
            <div class="presets" role="group" aria-label={label.to_string()}>
                <span class="presets-label">{ label.to_string() }</span>
                { for items.into_iter().map(|(text, pairs)| {
                    let (ctx, nav) = (ctx.clone(), nav.clone());
                    let onclick = Callback::from(move |_: MouseEvent| {
                        let refs: Vec<(&str, &str)> =
                            pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
                        set(&ctx, &nav, &refs);
                    });
                    html! { <button type="button" class="button small" {onclick}>{ text }</button> }
                }) }
            </div>
        }
    }

    /// The closing "try it" paragraph (the lessons' shared one, without a link).
    pub fn try_it(ctx: &Ctx, key: &str) -> Html {
        super::super::kit::try_it(ctx, key, None)
    }

    /// The weight formats as (URL code, translated name), for a `select`.
    pub fn dtype_options(ctx: &Ctx) -> Vec<(String, String)> {
        lessons::vram::Dtype::ALL
            .iter()
            .map(|d| {
                let name = ctx.t(&format!("lesson.vram.dtype.{}", d.code()));
                (d.code().to_string(), name.to_string())
            })
            .collect()
    }

    /// The message for one field from a list of (field, message) pairs.
    pub fn field_error(errors: &[(&str, String)], key: &str) -> FieldError {
        errors
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, m)| m.clone())
    }

    /// A list of corrections to the source articles, each citing its fact-check id.
    pub fn corrections(ctx: &Ctx, keys: &[&str]) -> Html {
        html! {
            <section class="corrections">
                <h2>{ ctx.t("lesson.common.corrections") }</h2>
                <ul>
                    { for keys.iter().map(|k| html! { <li>{ ctx.linked(k) }</li> }) }
                </ul>
                <p class="note">{ ctx.linked("lesson.common.corrections_note") }</p>
            </section>
        }
    }
}

/// Korthikanti et al. (2022), bytes of activations per transformer layer (a formula, not prose).
const FORMULA: &str = "s·b·h·(34 + 5·a·s/h)";

/// Query keys and defaults: LLaMA-7B-sized training in FP16 with Adam (the hand-computed case).
const DEFAULTS: [(&str, &str); 14] = [
    ("p", "7e9"),
    ("w", "fp16"),
    ("mode", "train"),
    ("opt", "adam"),
    ("lora", "0"),
    ("lf", "0.01"),
    ("ckpt", "0"),
    ("act", "tf"),
    ("b", "1"),
    ("s", "2048"),
    ("l", "32"),
    ("h", "4096"),
    ("a", "32"),
    ("mb", "54"),
];

fn default(key: &str) -> &'static str {
    DEFAULTS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .unwrap_or("")
}

/// Colours of the breakdown parts (the same order as `Breakdown::parts`).
const PART_CLASSES: [&str; 7] = [
    "part-weights",
    "part-adapters",
    "part-master",
    "part-gradients",
    "part-optimiser",
    "part-activations",
    "part-kv",
];

/// 6.7e9 → "6.7B", 25.6e6 → "25.6M": what a person would type.
fn params_text(p: f64) -> String {
    if p >= 1e9 {
        format!("{}B", p / 1e9)
    } else if p >= 1e6 {
        format!("{}M", p / 1e6)
    } else {
        format!("{p}")
    }
}

/// "10 %", and "<1 %" for a part too small to round to one.
fn share_text(share: f64) -> String {
    let pct = share * 100.0;
    if pct > 0.0 && pct < 0.5 {
        "<1 %".into()
    } else {
        format!("{pct:.0} %")
    }
}

/// What the form says, parsed: the budget, or the errors per field.
struct Parsed {
    budget: Option<Budget>,
    errors: Vec<(&'static str, String)>,
}

fn parse(ctx: &Ctx) -> Parsed {
    let mut errors = Vec::new();
    let mut num = |key: &'static str| -> Option<f64> {
        let raw = q(ctx, key, default(key));
        match parse_number(&raw) {
            Some(v) if v > 0.0 => Some(v),
            Some(_) => {
                errors.push((key, ctx.t("lesson.common.err.positive").to_string()));
                None
            }
            None => {
                errors.push((key, ctx.t("lesson.common.err.number").to_string()));
                None
            }
        }
    };
    let params = num("p");
    let training = q(ctx, "mode", "train") != "infer";
    let lora_on = q(ctx, "lora", "0") == "1";
    let lora = if lora_on && training {
        num("lf").map(Some)
    } else {
        Some(None)
    };
    let per_sample = q(ctx, "act", "tf") == "sample";
    let activations = if per_sample {
        match (num("b"), num("mb")) {
            (Some(batch), Some(mb)) => Some(Activations::PerSample {
                batch,
                bytes_per_sample: mb * 1e6,
            }),
            _ => None,
        }
    } else {
        let dims = ["b", "s", "l", "h", "a"].map(&mut num);
        match dims {
            [Some(batch), Some(seq), Some(layers), Some(hidden), Some(heads)] => {
                Some(Activations::Transformer {
                    batch,
                    seq,
                    layers,
                    hidden,
                    heads,
                })
            }
            _ => None,
        }
    };
    let dtype = Dtype::from_code(&q(ctx, "w", "fp16"));
    let optimiser = Optimiser::from_code(&q(ctx, "opt", "adam"));
    if dtype.is_none() {
        errors.push(("w", ctx.t("lesson.common.err.choice").to_string()));
    }
    if optimiser.is_none() {
        errors.push(("opt", ctx.t("lesson.common.err.choice").to_string()));
    }
    let budget = match (params, lora, activations, dtype, optimiser) {
        (Some(params), Some(lora), Some(activations), Some(dtype), Some(optimiser)) => {
            Some(Budget {
                params,
                dtype,
                training,
                optimiser,
                lora,
                checkpointing: q(ctx, "ckpt", "0") == "1",
                activations,
            })
        }
        _ => None,
    };
    Parsed { budget, errors }
}

fn budget_error(ctx: &Ctx, e: BudgetError) -> (Option<&'static str>, String) {
    match e {
        BudgetError::OutOfRange(name) => {
            let key = match name {
                "params" => "p",
                "batch" => "b",
                "seq" => "s",
                "layers" => "l",
                "hidden" => "h",
                "heads" => "a",
                _ => "mb",
            };
            (Some(key), ctx.t("lesson.common.err.too_large").to_string())
        }
        BudgetError::LoraFraction => (Some("lf"), ctx.t("lesson.vram.err.lora").to_string()),
        BudgetError::QuantisedFullTraining => {
            (None, ctx.t("lesson.vram.err.quantised").to_string())
        }
        BudgetError::Heads => (Some("a"), ctx.t("lesson.vram.err.heads").to_string()),
    }
}

/// The stacked bar: one rectangle per non-zero part, widths proportional to bytes.
fn stacked_bar(ctx: &Ctx, parts: &[(&'static str, f64)]) -> Html {
    let total: f64 = parts.iter().map(|(_, b)| b).sum();
    if !(total.is_finite() && total > 0.0) {
        return Html::default();
    }
    const W: f64 = 640.0;
    let mut x = 0.0;
    let rects = parts
        .iter()
        .zip(PART_CLASSES)
        .filter(|((_, b), _)| *b > 0.0)
        .map(|((name, b), class)| {
            let w = b / total * W;
            let r = html! {
                <rect class={class} x={format!("{x:.2}")} y="0" width={format!("{w:.2}")} height="36">
                    <title>{ format!("{}: {}", ctx.t(&format!("lesson.vram.part.{name}")), decimal_bytes(*b)) }</title>
                </rect>
            };
            x += w;
            r
        });
    html! {
        <svg class="stacked-bar" viewBox="0 0 640 36" preserveAspectRatio="none" role="img"
            aria-label={ctx.t("lesson.vram.bar_label")}>
            { for rects }
        </svg>
    }
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let parsed = parse(&ctx);
    let mut errors = parsed.errors;
    let mut general: Option<String> = None;
    let result = parsed.budget.and_then(|b| match vram::estimate(&b) {
        Ok(r) => Some(r),
        Err(e) => {
            match budget_error(&ctx, e) {
                (Some(field), msg) => errors.push((field, msg)),
                (None, msg) => general = Some(msg),
            }
            None
        }
    });
    let err = |key: &str| form::field_error(&errors, key);
    let val = |key: &str| q(&ctx, key, default(key));
    let training = val("mode") != "infer";
    let lora_on = val("lora") == "1";
    let per_sample = val("act") == "sample";

    let preset_items = preset_links();

    let dtype_options = form::dtype_options(&ctx);
    let opt_options = Optimiser::ALL
        .iter()
        .map(|o| {
            (
                o.code().to_string(),
                ctx.t(&format!("lesson.vram.opt.{}", o.code())).to_string(),
            )
        })
        .collect();
    let mode_options = vec![
        (
            "train".to_string(),
            ctx.t("lesson.vram.mode.train").to_string(),
        ),
        (
            "infer".to_string(),
            ctx.t("lesson.vram.mode.infer").to_string(),
        ),
    ];
    let act_options = vec![
        ("tf".to_string(), ctx.t("lesson.vram.act.tf").to_string()),
        (
            "sample".to_string(),
            ctx.t("lesson.vram.act.sample").to_string(),
        ),
    ];

    let output = estimate_view(&ctx, result.as_ref(), general);

    html! {
        <div class="lesson-body lb">
            <p class="lead">{ ctx.t("lesson.vram.lead") }</p>
            <p>{ ctx.t("lesson.vram.p1") }</p>
            <ul class="bytes-list">
                <li>{ ctx.t("lesson.vram.li.weights") }</li>
                <li>{ ctx.t("lesson.vram.li.grads") }</li>
                <li>{ ctx.t("lesson.vram.li.optimiser") }</li>
                <li>{ ctx.t("lesson.vram.li.activations") }</li>
            </ul>
            <p>{ ctx.t("lesson.vram.p2") }</p>
            <p class="formula"><code>{ FORMULA }</code>{ ctx.t("lesson.vram.formula") }</p>

            <section class="panel calc" id="vram-calc" aria-labelledby="vram-calc-h">
                <h2 id="vram-calc-h">{ ctx.t("lesson.vram.calc") }</h2>
                { form::presets(&ctx, &nav, ctx.t("lesson.common.presets"), preset_items) }
                <div class="fields">
                    { text_field(&ctx, &nav, "p", ctx.t("lesson.vram.f.params"), val("p"), err("p")) }
                    { select(&ctx, &nav, "w", ctx.t("lesson.vram.f.dtype"), dtype_options, &val("w")) }
                    { select(&ctx, &nav, "mode", ctx.t("lesson.vram.f.mode"), mode_options, &val("mode")) }
                    if training {
                        { select(&ctx, &nav, "opt", ctx.t("lesson.vram.f.opt"), opt_options, &val("opt")) }
                    }
                </div>
                if training {
                    <div class="fields">
                        { checkbox(&ctx, &nav, "lora", ctx.t("lesson.vram.f.lora"), lora_on) }
                        if lora_on {
                            { text_field(&ctx, &nav, "lf", ctx.t("lesson.vram.f.lora_fraction"), val("lf"), err("lf")) }
                        }
                        { checkbox(&ctx, &nav, "ckpt", ctx.t("lesson.vram.f.ckpt"), val("ckpt") == "1") }
                    </div>
                }
                <div class="fields">
                    { select(&ctx, &nav, "act", ctx.t("lesson.vram.f.act"), act_options, &val("act")) }
                    { text_field(&ctx, &nav, "b", ctx.t("lesson.vram.f.batch"), val("b"), err("b")) }
                    if per_sample {
                        { text_field(&ctx, &nav, "mb", ctx.t("lesson.vram.f.mb"), val("mb"), err("mb")) }
                    } else {
                        { text_field(&ctx, &nav, "s", ctx.t("lesson.vram.f.seq"), val("s"), err("s")) }
                        { text_field(&ctx, &nav, "l", ctx.t("lesson.vram.f.layers"), val("l"), err("l")) }
                        { text_field(&ctx, &nav, "h", ctx.t("lesson.vram.f.hidden"), val("h"), err("h")) }
                        { text_field(&ctx, &nav, "a", ctx.t("lesson.vram.f.heads"), val("a"), err("a")) }
                    }
                </div>
                if per_sample && training && val("ckpt") == "1" {
                    <p class="note">{ ctx.t("lesson.vram.ckpt_sample_note") }</p>
                }
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("lesson.vram.units_note") }</p>
            </section>

            <h2>{ ctx.t("lesson.vram.tricks_heading") }</h2>
            <p>{ ctx.t("lesson.vram.tricks") }</p>
            { form::corrections(&ctx, &["lesson.vram.fc54", "lesson.vram.fc56", "lesson.vram.fc58", "lesson.vram.fc59", "lesson.vram.fc29", "lesson.vram.fc65"]) }
            { form::try_it(&ctx, "lesson.vram.try") }
        </div>
    }
}

/// Each preset as a link: the lesson's defaults, then the preset's parameters and activations
/// (so nothing ticked earlier survives into the preset's total).
fn preset_links() -> Vec<(String, Vec<(&'static str, String)>)> {
    vram::PRESETS
        .iter()
        .map(|p| {
            // Every field starts from the lesson's default (FP16, training, Adam, no LoRA, no
            // checkpointing), so nothing ticked earlier survives into the preset's total.
            let mut pairs: Vec<(&'static str, String)> =
                DEFAULTS.iter().map(|(k, v)| (*k, v.to_string())).collect();
            pairs.push(("p", params_text(p.params)));
            match p.activations {
                Activations::Transformer {
                    batch,
                    seq,
                    layers,
                    hidden,
                    heads,
                } => {
                    pairs.push(("act", "tf".into()));
                    for (k, v) in [
                        ("b", batch),
                        ("s", seq),
                        ("l", layers),
                        ("h", hidden),
                        ("a", heads),
                    ] {
                        pairs.push((k, v.to_string()));
                    }
                }
                Activations::PerSample {
                    batch,
                    bytes_per_sample,
                } => {
                    pairs.push(("act", "sample".into()));
                    pairs.push(("b", batch.to_string()));
                    pairs.push(("mb", (bytes_per_sample / 1e6).to_string()));
                }
            }
            (p.name.to_string(), pairs)
        })
        .collect()
}

/// The estimate: its total, the breakdown and which GPUs it fits; or why there is none.
fn estimate_view(ctx: &Ctx, result: Option<&vram::Breakdown>, general: Option<String>) -> Html {
    match result {
        None => html! {
            <p class="message error" role="alert" data-vram-total="invalid">
                { general.unwrap_or_else(|| ctx.t("lesson.common.err.fix_fields").to_string()) }
            </p>
        },
        Some(r) => {
            let total = r.total();
            let parts = r.parts();
            let rows = parts
            .iter()
            .zip(PART_CLASSES)
            .filter(|((_, b), _)| *b > 0.0)
            .map(|((name, b), class)| {
                html! {
                    <tr>
                        <th scope="row"><span class={classes!("swatch", class)}></span>{ ctx.t(&format!("lesson.vram.part.{name}")) }</th>
                        <td>{ decimal_bytes(*b) }</td>
                        <td>{ binary_bytes(*b) }</td>
                        <td>{ share_text(b / total) }</td>
                    </tr>
                }
            });
            let fits = GPUS
                .iter()
                .filter(|g| {
                    ["a100-40", "a100-80", "h100", "h200", "rtx3090", "rtx4090"].contains(&g.id)
                })
                .map(|g| {
                    let cap = g.memory_gb * 1e9;
                    let share = total / cap;
                    let (class, key) = if share <= 0.9 {
                        ("fits", "lesson.vram.fit.yes")
                    } else if share <= 1.0 {
                        ("tight", "lesson.vram.fit.tight")
                    } else {
                        ("no", "lesson.vram.fit.no")
                    };
                    let needed = vram::gpus_needed(total, cap)
                        .map(|n| n.to_string())
                        .unwrap_or_default();
                    html! {
                        <tr class={classes!("fit", class)} data-gpu={g.id} data-fit={class}>
                            <th scope="row">{ g.name }</th>
                            <td>{ format!("{} GB", g.memory_gb) }</td>
                            <td>{ ctx.t(key) }</td>
                            <td>{ needed }</td>
                        </tr>
                    }
                });
            html! {
                <>
                    <p class="total" data-vram-total={format!("{total:.0}")}>
                        { ctx.tf("lesson.vram.total", &[("gb", &decimal_bytes(total)), ("gib", &binary_bytes(total))]) }
                    </p>
                    { stacked_bar(ctx, &parts) }
                    <table class="data breakdown">
                        <thead><tr>
                            <th scope="col">{ ctx.t("lesson.vram.col.part") }</th>
                            <th scope="col">{ ctx.t("lesson.vram.col.gb") }</th>
                            <th scope="col">{ ctx.t("lesson.vram.col.gib") }</th>
                            <th scope="col">{ ctx.t("lesson.vram.col.share") }</th>
                        </tr></thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                    <h3>{ ctx.t("lesson.vram.fits_heading") }</h3>
                    <table class="data fits-table">
                        <thead><tr>
                            <th scope="col">{ ctx.t("lesson.common.col.gpu") }</th>
                            <th scope="col">{ ctx.t("lesson.common.col.memory") }</th>
                            <th scope="col">{ ctx.t("lesson.vram.col.fits") }</th>
                            <th scope="col">{ ctx.t("lesson.vram.col.needed") }</th>
                        </tr></thead>
                        <tbody>{ for fits }</tbody>
                    </table>
                    <p class="note">{ ctx.t("lesson.vram.fits_note") }</p>
                </>
            }
        }
    }
}
