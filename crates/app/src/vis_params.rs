//! The visualiser's parameters from the URL (`#/visualiser?stage=tiled&size=32&wg=8&sg=32`),
//! validated into a trace configuration. Pure, unit-tested.

use simt_model::trace::{Mapping, MatmulTrace};

use crate::query::Query;

/// The stages the visualiser can show, by URL name, with their text keys.
pub const STAGES: [(&str, &str); 4] = [
    ("naive", "vis.stage.naive"),
    ("coalesced", "vis.stage.coalesced"),
    ("tiled", "vis.stage.tiled"),
    ("tiled-transposed", "vis.stage.tiled-transposed"),
];
pub const SUBGROUP_WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];
pub const SIZE_RANGE: (u32, u32) = (4, 64);
pub const WG_RANGE: (u32, u32) = (4, 16);

/// What the URL asks for, after validation.
#[derive(Clone, Debug, PartialEq)]
pub struct VisParams {
    pub stage: &'static str,
    pub size: u32,
    pub wg: u32,
    pub sg: u32,
    pub pad: u32,
    /// A second stage to compare with, if any.
    pub compare: Option<&'static str>,
    /// Parameters that were present but invalid (name, as given): shown, then defaults used.
    pub rejected: Vec<(&'static str, String)>,
}

impl VisParams {
    pub fn from_query(q: &Query) -> Self {
        let mut rejected = Vec::new();
        let mut num = |name: &'static str, default: u32, ok: &dyn Fn(u32) -> bool| -> u32 {
            match q.get(name) {
                None => default,
                Some(text) => match text.trim().parse::<u32>() {
                    Ok(v) if ok(v) => v,
                    _ => {
                        rejected.push((name, text.chars().take(20).collect()));
                        default
                    }
                },
            }
        };
        let size = num("size", 32, &|v| (SIZE_RANGE.0..=SIZE_RANGE.1).contains(&v));
        let wg = num("wg", 8, &|v| (WG_RANGE.0..=WG_RANGE.1).contains(&v));
        let sg = num("sg", 32, &|v| SUBGROUP_WIDTHS.contains(&v));
        let pad = num("pad", 0, &|v| v <= 4);
        let mut stage_param = |name: &'static str| -> Option<&'static str> {
            let s = q.get(name).filter(|s| !s.is_empty())?;
            match STAGES.iter().find(|(stage, _)| *stage == s) {
                Some((stage, _)) => Some(stage),
                None => {
                    rejected.push((name, s.chars().take(20).collect()));
                    None
                }
            }
        };
        let stage = stage_param("stage").unwrap_or(STAGES[0].0);
        let compare = stage_param("compare");
        Self {
            stage,
            size,
            wg,
            sg,
            pad,
            compare,
            rejected,
        }
    }

    pub fn trace(&self) -> MatmulTrace {
        let mapping = match self.stage {
            "coalesced" => Mapping::ColumnPerLane,
            "tiled" => Mapping::Tiled {
                transpose_a: false,
                pad: self.pad,
            },
            "tiled-transposed" => Mapping::Tiled {
                transpose_a: true,
                pad: self.pad,
            },
            _ => Mapping::RowPerLane,
        };
        MatmulTrace {
            m: self.size,
            n: self.size,
            k: self.size,
            workgroup: [self.wg, self.wg],
            subgroup_width: self.sg,
            mapping,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_valid_values() {
        let p = VisParams::from_query(&Query::parse(""));
        assert_eq!(
            (p.stage, p.size, p.wg, p.sg, p.pad),
            ("naive", 32, 8, 32, 0)
        );
        let p = VisParams::from_query(&Query::parse("stage=tiled&size=64&wg=16&sg=4&pad=1"));
        assert_eq!(
            (p.stage, p.size, p.wg, p.sg, p.pad),
            ("tiled", 64, 16, 4, 1)
        );
        assert!(p.rejected.is_empty());
    }

    #[test]
    fn bad_values_are_reported_and_replaced() {
        let p = VisParams::from_query(&Query::parse("stage=warp&size=9999&wg=abc&sg=33&pad=-1"));
        assert_eq!(
            (p.stage, p.size, p.wg, p.sg, p.pad),
            ("naive", 32, 8, 32, 0)
        );
        let names: Vec<&str> = p.rejected.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, vec!["size", "wg", "sg", "pad", "stage"]);
    }
}
