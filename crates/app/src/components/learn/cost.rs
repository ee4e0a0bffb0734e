//! Lesson `cost`: cloud or buy. The calculator is `lessons::cost` (break-even hours, cost per
//! useful hour); its inputs live in the URL; the presets are dated, sourced prices
//! (`lessons::cost::PRESETS`, docs/fact-check.md FC-131).

use lessons::cost::{self, CostError, CostInput, PRESETS};
use lessons::units::parse_number;
use numbers::duration;
use yew::prelude::*;
use yew_router::prelude::*;

use super::vram::form::{self, presets, q, text_field};
use crate::components::Ctx;

/// The break-even (maths, not prose).
const FORMULA: &str = "h* = P / (c − W/1000 · k)";

/// Query keys and defaults: the independent-cloud H100 preset, 5,000 hours, 4 years at 50 %.
const DEFAULTS: [(&str, &str); 7] = [
    ("h", "5000"),
    ("c", "2.49"),
    ("buy", "30000"),
    ("w", "700"),
    ("kwh", "0.1545"),
    ("life", "4"),
    ("util", "50"),
];

fn default(key: &str) -> &'static str {
    DEFAULTS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .unwrap_or("")
}

/// "$1,234.56"-style money with `places` decimals and thousands separators (the dollar sign is
/// a currency symbol, the same in both languages).
fn money(v: f64, places: usize) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let text = format!("{:.*}", places, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if v < 0.0 { "−" } else { "" };
    if frac.is_empty() {
        format!("{sign}${grouped}")
    } else {
        format!("{sign}${grouped}.{frac}")
    }
}

fn hours(v: f64) -> String {
    let rounded = v.round();
    if rounded.is_finite() && rounded >= 0.0 {
        numbers::count(rounded as u64)
    } else {
        "–".into()
    }
}

fn cost_error(e: CostError) -> (&'static str, &'static str) {
    match e {
        CostError::Hours => ("h", "lesson.cost.err.hours"),
        CostError::CloudPrice => ("c", "lesson.cost.err.cloud"),
        CostError::Purchase => ("buy", "lesson.cost.err.buy"),
        CostError::Watts => ("w", "lesson.cost.err.watts"),
        CostError::PowerPrice => ("kwh", "lesson.cost.err.kwh"),
        CostError::Lifetime => ("life", "lesson.cost.err.life"),
        CostError::Utilisation => ("util", "lesson.cost.err.util"),
    }
}

#[function_component]
pub fn Body() -> Html {
    let nav = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let val = |key: &str| q(&ctx, key, default(key));
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let mut num = |key: &'static str| match parse_number(&val(key)) {
        Some(v) => Some(v),
        None => {
            errors.push((key, ctx.t("lesson.common.err.number").to_string()));
            None
        }
    };
    let fields = ["h", "c", "buy", "w", "kwh", "life", "util"].map(&mut num);
    let result = match fields {
        [Some(h), Some(c), Some(buy), Some(w), Some(kwh), Some(life), Some(util)] => {
            let input = CostInput {
                hours: h,
                cloud_per_hour: c,
                purchase: buy,
                watts: w,
                per_kwh: kwh,
                lifetime_years: life,
                utilisation_pct: util,
            };
            match cost::compare(&input) {
                Ok(r) => Some(r),
                Err(e) => {
                    let (key, msg) = cost_error(e);
                    errors.push((key, ctx.t(msg).to_string()));
                    None
                }
            }
        }
        _ => None,
    };
    let err = |key: &str| form::field_error(&errors, key);
    let field = |key: &'static str, label: &str| {
        text_field(&ctx, &nav, key, ctx.t(label), val(key), err(key))
    };

    let preset_buttons = PRESETS
        .iter()
        .map(|p| {
            (
                ctx.t(&format!("lesson.cost.preset.{}", p.id)).to_string(),
                vec![
                    ("c", p.cloud_per_hour.to_string()),
                    ("buy", p.purchase.to_string()),
                    ("w", p.watts.to_string()),
                    ("kwh", p.per_kwh.to_string()),
                ],
            )
        })
        .collect();

    let output = match result {
        None => html! {
            <p class="message error" role="alert" data-cost="invalid">{ ctx.t("lesson.common.err.fix_fields") }</p>
        },
        Some(r) => {
            let cheaper = if r.cloud_total <= r.own_total {
                "lesson.cost.cheaper_cloud"
            } else {
                "lesson.cost.cheaper_own"
            };
            let break_even = match (r.break_even_hours, r.break_even_years) {
                (Some(h), Some(y)) => ctx.tf(
                    if h > r.lifetime_useful_hours {
                        "lesson.cost.break_even_late"
                    } else {
                        "lesson.cost.break_even"
                    },
                    &[
                        ("hours", &hours(h)),
                        ("years", &numbers::number(y)),
                        ("days", &numbers::number(h / 24.0)),
                    ],
                ),
                _ => ctx.t("lesson.cost.never").to_string(),
            };
            html! {
                <div class="cost-result" data-cost="ok"
                    data-break-even={r.break_even_hours.map(|h| format!("{h:.3}")).unwrap_or_else(|| "never".into())}
                    data-per-hour={format!("{:.6}", r.own_per_useful_hour)}
                    data-cloud-total={format!("{:.2}", r.cloud_total)}
                    data-own-total={format!("{:.2}", r.own_total)}>
                    <p class="total" id="cost-break-even">{ break_even }</p>
                    <ul class="result-parts">
                        <li>{ ctx.tf("lesson.cost.totals", &[
                            ("hours", &hours(fields[0].unwrap_or(0.0))),
                            ("cloud", &money(r.cloud_total, 0)),
                            ("own", &money(r.own_total, 0)),
                        ]) }</li>
                        <li>{ ctx.t(cheaper) }</li>
                        <li>{ ctx.tf("lesson.cost.energy", &[("e", &money(r.energy_per_hour, 3))]) }</li>
                        <li id="cost-per-hour">{ ctx.tf("lesson.cost.per_useful_hour", &[
                            ("useful", &hours(r.lifetime_useful_hours)),
                            ("per", &money(r.own_per_useful_hour, 2)),
                        ]) }</li>
                        if r.exceeds_lifetime {
                            <li class="warning" id="cost-exceeds">{ ctx.t("lesson.cost.exceeds") }</li>
                        }
                    </ul>
                    <p class="note">{ ctx.tf("lesson.cost.round_the_clock", &[
                        ("t", &duration(r.break_even_hours.unwrap_or(0.0) * 3600.0)),
                    ]) }</p>
                </div>
            }
        }
    };

    html! {
        <div class="lesson-body lb ld">
            <p class="lead">{ ctx.t("lesson.cost.lead") }</p>
            <p>{ ctx.t("lesson.cost.p1") }</p>
            <p class="formula"><code>{ FORMULA }</code></p>
            <p>{ ctx.t("lesson.cost.p2") }</p>
            <section class="panel calc" id="cost-calc" aria-labelledby="cost-calc-h">
                <h2 id="cost-calc-h">{ ctx.t("lesson.cost.calc") }</h2>
                { presets(&ctx, &nav, ctx.t("lesson.common.presets"), preset_buttons) }
                <p class="note" id="cost-sources">{ ctx.linked("lesson.cost.sources") }</p>
                <div class="fields">
                    { field("h", "lesson.cost.f.hours") }
                    { field("c", "lesson.cost.f.cloud") }
                    { field("buy", "lesson.cost.f.buy") }
                </div>
                <div class="fields">
                    { field("w", "lesson.cost.f.watts") }
                    { field("kwh", "lesson.cost.f.kwh") }
                    { field("life", "lesson.cost.f.life") }
                    { field("util", "lesson.cost.f.util") }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("lesson.cost.left_out") }</p>
            </section>
            { form::corrections(&ctx, &["lesson.cost.fc63", "lesson.cost.fc64", "lesson.cost.fc132", "lesson.cost.fc134", "lesson.cost.fc135"]) }
            { form::try_it(&ctx, "lesson.cost.try") }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::money;

    #[test]
    fn money_groups_thousands() {
        assert_eq!(money(30_525.0, 0), "$30,525");
        assert_eq!(money(1.817_328, 2), "$1.82");
        assert_eq!(money(0.105, 3), "$0.105");
        assert_eq!(money(1_234_567.891, 2), "$1,234,567.89");
        assert_eq!(money(f64::NAN, 2), "–");
    }
}
