//! Lesson `cost`: cloud or buy. The calculator is `lessons::cost` (break-even hours, cost per
//! useful hour); its inputs live in the URL; the presets are dated, sourced prices
//! (`lessons::cost::PRESETS`, docs/fact-check.md FC-131).

use lessons::cost::{self, CostError, CostInput, PRESETS};
use lessons::units::{duration, parse_number};
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
        crate::format::count(rounded as u64)
    } else {
        "–".into()
    }
}

fn cost_error(e: CostError) -> (&'static str, &'static str) {
    match e {
        CostError::Hours => ("h", "ld.cost.err.hours"),
        CostError::CloudPrice => ("c", "ld.cost.err.cloud"),
        CostError::Purchase => ("buy", "ld.cost.err.buy"),
        CostError::Watts => ("w", "ld.cost.err.watts"),
        CostError::PowerPrice => ("kwh", "ld.cost.err.kwh"),
        CostError::Lifetime => ("life", "ld.cost.err.life"),
        CostError::Utilisation => ("util", "ld.cost.err.util"),
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
            errors.push((key, ctx.t("lb.err.number").to_string()));
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
                ctx.t(&format!("ld.cost.preset.{}", p.id)).to_string(),
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
            <p class="message error" role="alert" data-cost="invalid">{ ctx.t("lb.err.fix_fields") }</p>
        },
        Some(r) => {
            let cheaper = if r.cloud_total <= r.own_total {
                "ld.cost.cheaper_cloud"
            } else {
                "ld.cost.cheaper_own"
            };
            let break_even = match (r.break_even_hours, r.break_even_years) {
                (Some(h), Some(y)) => ctx.tf(
                    if h > r.lifetime_useful_hours {
                        "ld.cost.break_even_late"
                    } else {
                        "ld.cost.break_even"
                    },
                    &[
                        ("hours", &hours(h)),
                        ("years", &format!("{y:.1}")),
                        ("days", &format!("{:.0}", h / 24.0)),
                    ],
                ),
                _ => ctx.t("ld.cost.never").to_string(),
            };
            html! {
                <div class="cost-result" data-cost="ok"
                    data-break-even={r.break_even_hours.map(|h| format!("{h:.3}")).unwrap_or_else(|| "never".into())}
                    data-per-hour={format!("{:.6}", r.own_per_useful_hour)}
                    data-cloud-total={format!("{:.2}", r.cloud_total)}
                    data-own-total={format!("{:.2}", r.own_total)}>
                    <p class="total" id="cost-break-even">{ break_even }</p>
                    <ul class="result-parts">
                        <li>{ ctx.tf("ld.cost.totals", &[
                            ("hours", &hours(fields[0].unwrap_or(0.0))),
                            ("cloud", &money(r.cloud_total, 0)),
                            ("own", &money(r.own_total, 0)),
                        ]) }</li>
                        <li>{ ctx.t(cheaper) }</li>
                        <li>{ ctx.tf("ld.cost.energy", &[("e", &money(r.energy_per_hour, 3))]) }</li>
                        <li id="cost-per-hour">{ ctx.tf("ld.cost.per_useful_hour", &[
                            ("useful", &hours(r.lifetime_useful_hours)),
                            ("per", &money(r.own_per_useful_hour, 2)),
                        ]) }</li>
                        if r.exceeds_lifetime {
                            <li class="warning" id="cost-exceeds">{ ctx.t("ld.cost.exceeds") }</li>
                        }
                    </ul>
                    <p class="note">{ ctx.tf("ld.cost.round_the_clock", &[
                        ("t", &duration(r.break_even_hours.unwrap_or(0.0) * 3600.0)),
                    ]) }</p>
                </div>
            }
        }
    };

    html! {
        <div class="lesson-body lb ld">
            <p class="lead">{ ctx.t("ld.cost.lead") }</p>
            <p>{ ctx.t("ld.cost.p1") }</p>
            <p class="formula"><code>{ FORMULA }</code></p>
            <p>{ ctx.t("ld.cost.p2") }</p>
            <section class="panel calc" id="cost-calc" aria-labelledby="cost-calc-h">
                <h2 id="cost-calc-h">{ ctx.t("ld.cost.calc") }</h2>
                { presets(&ctx, &nav, ctx.t("lb.presets"), preset_buttons) }
                <p class="note" id="cost-sources">{ ctx.linked("ld.cost.sources") }</p>
                <div class="fields">
                    { field("h", "ld.cost.f.hours") }
                    { field("c", "ld.cost.f.cloud") }
                    { field("buy", "ld.cost.f.buy") }
                </div>
                <div class="fields">
                    { field("w", "ld.cost.f.watts") }
                    { field("kwh", "ld.cost.f.kwh") }
                    { field("life", "ld.cost.f.life") }
                    { field("util", "ld.cost.f.util") }
                </div>
                <div class="calc-output" aria-live="polite">{ output }</div>
                <p class="note">{ ctx.t("ld.cost.left_out") }</p>
            </section>
            { form::corrections(&ctx, &["ld.cost.fc63", "ld.cost.fc64", "ld.cost.fc132", "ld.cost.fc134", "ld.cost.fc135"]) }
            { form::try_it(&ctx, "ld.cost.try") }
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
