//! The `cost` lesson's cloud-or-buy calculator.
//!
//! Renting costs `c` per GPU-hour used. Owning costs the purchase price `P` once, plus energy
//! while the GPU works: `e = W / 1000 · k` per hour (W watts, k per kWh; idle power and the rest
//! of the machine are left out, as the page says). So for `h` hours of work
//!
//! - cloud: `h · c`
//! - own:   `P + h · e`
//!
//! and they cost the same at the break-even `h* = P / (c − e)` hours (never, when `c ≤ e`).
//! Over a lifetime of `L` years kept busy a fraction `u` of the time, an owned GPU delivers
//! `U = 8760 · L · u` useful hours, so its cost per useful hour is `P / U + e`; break-even is
//! reached after `h* / (8760 · u)` years, which may be past the lifetime. Resale value, cooling,
//! space, staff and the cloud's storage and network charges are outside this model.

/// Hours in a (non-leap) year.
pub const HOURS_PER_YEAR: f64 = 8760.0;

/// What the visitor enters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostInput {
    /// Hours of GPU work needed (the project's total).
    pub hours: f64,
    /// Cloud price per GPU-hour.
    pub cloud_per_hour: f64,
    /// Price of buying one GPU (its share of the machine, if the visitor includes that).
    pub purchase: f64,
    /// Power drawn while working, watts.
    pub watts: f64,
    /// Electricity price per kWh.
    pub per_kwh: f64,
    /// Years the GPU is kept.
    pub lifetime_years: f64,
    /// Share of its lifetime the owned GPU does useful work, in percent (0, 100].
    pub utilisation_pct: f64,
}

/// A field outside the range the calculator accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostError {
    /// Hours: 0 to 10⁷.
    Hours,
    /// Cloud price: above 0 and at most 10⁴ per hour.
    CloudPrice,
    /// Purchase price: 0 to 10⁸.
    Purchase,
    /// Power: 0 to 10⁵ W.
    Watts,
    /// Electricity: 0 to 100 per kWh.
    PowerPrice,
    /// Lifetime: above 0 and at most 30 years.
    Lifetime,
    /// Utilisation: above 0 and at most 100 %.
    Utilisation,
}

/// The calculator's answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostResult {
    /// Energy cost per working hour when owned.
    pub energy_per_hour: f64,
    /// Renting `hours`.
    pub cloud_total: f64,
    /// Buying and running for `hours`.
    pub own_total: f64,
    /// Hours of work at which both cost the same; None when renting is never dearer per hour
    /// than the electricity alone.
    pub break_even_hours: Option<f64>,
    /// Calendar years to reach the break-even at this utilisation.
    pub break_even_years: Option<f64>,
    /// Useful hours one owned GPU gives over its lifetime: 8760 · L · u.
    pub lifetime_useful_hours: f64,
    /// Cost per useful hour of an owned GPU used that much: P / U + e.
    pub own_per_useful_hour: f64,
    /// `hours` is more than one owned GPU delivers in its lifetime at this utilisation.
    pub exceeds_lifetime: bool,
}

fn within(v: f64, lo: f64, hi: f64, open_low: bool) -> bool {
    v.is_finite() && v <= hi && if open_low { v > lo } else { v >= lo }
}

/// The comparison, or the first field out of range.
pub fn compare(i: &CostInput) -> Result<CostResult, CostError> {
    if !within(i.hours, 0.0, 1e7, false) {
        return Err(CostError::Hours);
    }
    if !within(i.cloud_per_hour, 0.0, 1e4, true) {
        return Err(CostError::CloudPrice);
    }
    if !within(i.purchase, 0.0, 1e8, false) {
        return Err(CostError::Purchase);
    }
    if !within(i.watts, 0.0, 1e5, false) {
        return Err(CostError::Watts);
    }
    if !within(i.per_kwh, 0.0, 100.0, false) {
        return Err(CostError::PowerPrice);
    }
    if !within(i.lifetime_years, 0.0, 30.0, true) {
        return Err(CostError::Lifetime);
    }
    if !within(i.utilisation_pct, 0.0, 100.0, true) {
        return Err(CostError::Utilisation);
    }
    let e = i.watts / 1000.0 * i.per_kwh;
    let u = i.utilisation_pct / 100.0;
    let margin = i.cloud_per_hour - e;
    let break_even_hours = (margin > 0.0).then(|| i.purchase / margin);
    let useful = HOURS_PER_YEAR * i.lifetime_years * u;
    Ok(CostResult {
        energy_per_hour: e,
        cloud_total: i.hours * i.cloud_per_hour,
        own_total: i.purchase + i.hours * e,
        break_even_hours,
        break_even_years: break_even_hours.map(|h| h / (HOURS_PER_YEAR * u)),
        lifetime_useful_hours: useful,
        own_per_useful_hour: i.purchase / useful + e,
        exceeds_lifetime: i.hours > useful,
    })
}

/// A dated, sourced example (every figure also in docs/fact-check.md under `fc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostPreset {
    pub id: &'static str,
    /// Its name and price in words, for the docs; the page shows the translated text
    /// `lesson.cost.preset.<id>` (locales/{en,zh}/lesson-cost.txt).
    pub name: &'static str,
    pub cloud_per_hour: f64,
    pub purchase: f64,
    pub watts: f64,
    pub per_kwh: f64,
    pub fc: &'static str,
}

/// One H100 SXM (700 W, NVIDIA datasheet) bought for about $30,000 (the $25,000–40,000 range
/// reported through 2024), powered at the US average residential price of $0.1545/kWh (EIA,
/// January 2024), against three cloud prices: AWS p5.48xlarge on demand in 2023, $98.32 for 8
/// GPUs = $12.29; AWS EC2 Capacity Blocks, $39.33 for 8 = $4.916 (AWS price list shown until
/// 1 January 2025); and $2.49, the low end of the on-demand range independent clouds listed in
/// early 2026.
pub const PRESETS: [CostPreset; 3] = [
    CostPreset {
        id: "aws-2023",
        name: "H100 · AWS p5 on demand (2023): $12.29/h",
        cloud_per_hour: 12.29,
        purchase: 30_000.0,
        watts: 700.0,
        per_kwh: 0.1545,
        fc: "FC-131",
    },
    CostPreset {
        id: "aws-blocks-2024",
        name: "H100 · AWS Capacity Blocks (2024): $4.916/h",
        cloud_per_hour: 4.916,
        purchase: 30_000.0,
        watts: 700.0,
        per_kwh: 0.1545,
        fc: "FC-131",
    },
    CostPreset {
        id: "neocloud-2026",
        name: "H100 · independent cloud (early 2026): $2.49/h",
        cloud_per_hour: 2.49,
        purchase: 30_000.0,
        watts: 700.0,
        per_kwh: 0.1545,
        fc: "FC-131",
    },
];

pub fn preset(id: &str) -> Option<&'static CostPreset> {
    PRESETS.iter().find(|p| p.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn base() -> CostInput {
        CostInput {
            hours: 5000.0,
            cloud_per_hour: 2.49,
            purchase: 30_000.0,
            watts: 700.0,
            per_kwh: 0.15,
            lifetime_years: 4.0,
            utilisation_pct: 50.0,
        }
    }

    /// By hand: e = 0.7 kW × 0.15 = 0.105 per hour; h* = 30000 / (2.49 − 0.105) =
    /// 30000 / 2.385 = 12578.616… hours; U = 8760 × 4 × 0.5 = 17520 hours; per useful hour
    /// 30000 / 17520 + 0.105 = 1.712328… + 0.105 = 1.817328…; years to break even
    /// 12578.616 / 4380 = 2.871830…; for 5000 hours cloud 12450, own 30000 + 525 = 30525.
    #[test]
    fn hand_computed_case() {
        let r = compare(&base()).unwrap();
        assert!(close(r.energy_per_hour, 0.105));
        assert!(close(r.break_even_hours.unwrap(), 30_000.0 / 2.385));
        assert!((r.break_even_hours.unwrap() - 12_578.616_352).abs() < 1e-5);
        assert!(close(r.lifetime_useful_hours, 17_520.0));
        assert!((r.own_per_useful_hour - 1.817_328_767).abs() < 1e-8);
        assert!((r.break_even_years.unwrap() - 2.871_830_217).abs() < 1e-8);
        assert!(close(r.cloud_total, 12_450.0));
        assert!(close(r.own_total, 30_525.0));
        assert!(!r.exceeds_lifetime);
        // At the break-even both totals agree.
        let at = compare(&CostInput {
            hours: r.break_even_hours.unwrap(),
            ..base()
        })
        .unwrap();
        assert!(close(at.cloud_total, at.own_total));
    }

    /// The AWS 2023 preset: e = 0.7 × 0.1545 = 0.10815; h* = 30000 / 12.18185 = 2462.68… h,
    /// about 103 days of round-the-clock work.
    #[test]
    fn presets_by_hand() {
        let p = preset("aws-2023").unwrap();
        let r = compare(&CostInput {
            hours: 1000.0,
            cloud_per_hour: p.cloud_per_hour,
            purchase: p.purchase,
            watts: p.watts,
            per_kwh: p.per_kwh,
            lifetime_years: 4.0,
            utilisation_pct: 100.0,
        })
        .unwrap();
        assert!(close(r.energy_per_hour, 0.10815));
        assert!((r.break_even_hours.unwrap() - 2_462.680_135).abs() < 1e-5);
        assert!(PRESETS.iter().all(|p| p.fc.starts_with("FC-")));
        assert!(preset("nope").is_none());
    }

    #[test]
    fn cloud_cheaper_than_power_never_breaks_even() {
        let r = compare(&CostInput {
            cloud_per_hour: 0.1,
            ..base()
        })
        .unwrap();
        assert_eq!(r.break_even_hours, None);
        assert_eq!(r.break_even_years, None);
        // Exactly equal: never either.
        let r = compare(&CostInput {
            cloud_per_hour: 0.105,
            ..base()
        })
        .unwrap();
        assert_eq!(r.break_even_hours, None);
    }

    #[test]
    fn more_work_than_one_gpu_gives_is_flagged() {
        let r = compare(&CostInput {
            hours: 20_000.0,
            ..base()
        })
        .unwrap();
        assert!(r.exceeds_lifetime);
    }

    #[test]
    fn bad_inputs_are_named() {
        let cases = [
            (
                CostInput {
                    hours: -1.0,
                    ..base()
                },
                CostError::Hours,
            ),
            (
                CostInput {
                    hours: f64::NAN,
                    ..base()
                },
                CostError::Hours,
            ),
            (
                CostInput {
                    cloud_per_hour: 0.0,
                    ..base()
                },
                CostError::CloudPrice,
            ),
            (
                CostInput {
                    purchase: f64::INFINITY,
                    ..base()
                },
                CostError::Purchase,
            ),
            (
                CostInput {
                    watts: -5.0,
                    ..base()
                },
                CostError::Watts,
            ),
            (
                CostInput {
                    per_kwh: 1e3,
                    ..base()
                },
                CostError::PowerPrice,
            ),
            (
                CostInput {
                    lifetime_years: 0.0,
                    ..base()
                },
                CostError::Lifetime,
            ),
            (
                CostInput {
                    utilisation_pct: 0.0,
                    ..base()
                },
                CostError::Utilisation,
            ),
            (
                CostInput {
                    utilisation_pct: 101.0,
                    ..base()
                },
                CostError::Utilisation,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(compare(&input), Err(want), "{input:?}");
        }
        // Zero purchase, zero power, zero hours are allowed (a gift, a solar roof, nothing to do).
        let r = compare(&CostInput {
            hours: 0.0,
            purchase: 0.0,
            watts: 0.0,
            ..base()
        })
        .unwrap();
        assert_eq!(r.break_even_hours, Some(0.0));
    }
}
