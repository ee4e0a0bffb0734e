//! The visualiser's parameters from the URL (`#/visualiser?stage=tiled&size=32&wg=8&sg=32`),
//! validated into a trace configuration. Pure, unit-tested.

use simt_model::conv_trace::{ConvMapping, ConvTrace};
use simt_model::stage_trace::StageTrace;
use simt_model::trace::{Mapping, MatmulTrace};

use crate::query::Query;

/// The stages the visualiser can show, by URL name, with their text keys.
pub const STAGES: [(&str, &str); 6] = [
    ("naive", "vis.stage.naive"),
    ("coalesced", "vis.stage.coalesced"),
    ("tiled", "vis.stage.tiled"),
    ("tiled-transposed", "vis.stage.tiled-transposed"),
    ("conv-direct", "vis.stage.conv-direct"),
    ("conv-tiled", "vis.stage.conv-tiled"),
];
/// The conv stages' picture side is at most this (their launch is larger per output than a
/// matmul's: R·S·C steps), with 3 channels, 8 filters of 3×3 and "same" padding.
pub const CONV_MAX_SIDE: u32 = 24;
pub const CONV_C: u32 = 3;
pub const CONV_K: u32 = 8;
pub const CONV_RS: u32 = 3;
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
    /// Where the view starts: step, selected workgroup (x, y) and thread, as the URL gives them
    /// (the view keeps them inside the launch it draws).
    pub position: Position,
    /// Parameters that were present but invalid (name, as given): shown, then defaults used.
    pub rejected: Vec<(&'static str, String)>,
    /// Numbers outside their range, clamped to it: shown with the value used.
    pub clamped: Vec<Clamped>,
}

/// The view's position in the URL (`step`, `wgx`, `wgy`, `t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub step: u32,
    pub wg: [u32; 2],
    pub thread: u32,
}

/// A number the URL (or a field) gave outside its range, and the value used instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clamped {
    pub name: &'static str,
    pub given: String,
    pub used: u32,
    pub range: (u32, u32),
}

impl VisParams {
    pub fn from_query(q: &Query) -> Self {
        let mut rejected = Vec::new();
        let mut clamped = Vec::new();
        // A size outside its range is clamped (the nearest launch that can be drawn); text
        // that is not a number is refused.
        let mut ranged = |name: &'static str, default: u32, (lo, hi): (u32, u32)| -> u32 {
            let Some(text) = q.get(name) else {
                return default;
            };
            let given: String = text.chars().take(20).collect();
            match text.trim().parse::<i64>() {
                Ok(v) if (lo as i64..=hi as i64).contains(&v) => v as u32,
                Ok(v) => {
                    let used = v.clamp(lo as i64, hi as i64) as u32;
                    clamped.push(Clamped {
                        name,
                        given,
                        used,
                        range: (lo, hi),
                    });
                    used
                }
                Err(_) => {
                    rejected.push((name, given));
                    default
                }
            }
        };
        let size = ranged("size", 32, SIZE_RANGE);
        let wg = ranged("wg", 8, WG_RANGE);
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
        let sg = num("sg", 32, &|v| SUBGROUP_WIDTHS.contains(&v));
        let pad = num("pad", 0, &|v| v <= 4);
        let any = |_: u32| true;
        let position = Position {
            step: num("step", 0, &any),
            wg: [num("wgx", 0, &any), num("wgy", 0, &any)],
            thread: num("t", 0, &any),
        };
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
            position,
            rejected,
            clamped,
        }
    }

    /// The text a numeric settings field should show: the value in use.
    pub fn field_value(&self, name: &str) -> Option<String> {
        match name {
            "size" => Some(self.size.to_string()),
            "wg" => Some(self.wg.to_string()),
            _ => None,
        }
    }

    /// Whether the stage is a convolution's.
    pub fn is_conv(&self) -> bool {
        self.stage.starts_with("conv-")
    }

    /// The conv stages' picture side: the size, at most [`CONV_MAX_SIDE`].
    pub fn conv_side(&self) -> u32 {
        self.size.min(CONV_MAX_SIDE)
    }

    /// The trace of the stage: a matmul launch of size³, or a convolution of one
    /// side×side picture with [`CONV_C`] channels and [`CONV_K`] 3×3 filters, "same" padding.
    /// The conv stages keep their shaders' workgroups (16×16 direct, 8×8 tiled).
    pub fn trace(&self) -> StageTrace {
        if self.is_conv() {
            let side = self.conv_side();
            return StageTrace::Conv(ConvTrace {
                n: 1,
                c: CONV_C,
                h: side,
                w: side,
                k: CONV_K,
                r: CONV_RS,
                s: CONV_RS,
                stride: 1,
                pad: CONV_RS / 2,
                dil: 1,
                subgroup_width: self.sg,
                mapping: if self.stage == "conv-tiled" {
                    ConvMapping::Tiled
                } else {
                    ConvMapping::Direct
                },
            });
        }
        StageTrace::Matmul(self.matmul_trace())
    }

    fn matmul_trace(&self) -> MatmulTrace {
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
        let p = VisParams::from_query(&Query::parse(
            "stage=warp&size=x9&wg=abc&sg=33&pad=-1&step=two&wgx=1",
        ));
        assert_eq!(
            (p.stage, p.size, p.wg, p.sg, p.pad),
            ("naive", 32, 8, 32, 0)
        );
        let names: Vec<&str> = p.rejected.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, vec!["size", "wg", "sg", "pad", "step", "stage"]);
        assert_eq!(p.position.wg, [1, 0]);
        assert!(p.clamped.is_empty());
    }

    #[test]
    fn numbers_out_of_range_are_clamped_and_reported() {
        let p = VisParams::from_query(&Query::parse("size=1000&wg=3"));
        assert_eq!((p.size, p.wg), (64, 4));
        assert_eq!(
            p.clamped,
            vec![
                Clamped {
                    name: "size",
                    given: "1000".into(),
                    used: 64,
                    range: SIZE_RANGE
                },
                Clamped {
                    name: "wg",
                    given: "3".into(),
                    used: 4,
                    range: WG_RANGE
                },
            ]
        );
        let p = VisParams::from_query(&Query::parse("size=-5&wg=7"));
        assert_eq!((p.size, p.wg), (4, 7));
        assert!(p.rejected.is_empty());
    }

    #[test]
    fn conv_stages_trace_a_small_convolution() {
        let p = VisParams::from_query(&Query::parse("stage=conv-tiled&size=64&sg=16"));
        assert!(p.is_conv() && p.rejected.is_empty());
        let StageTrace::Conv(t) = p.trace() else {
            panic!("a conv trace")
        };
        assert_eq!((t.h, t.w, t.c, t.k), (24, 24, 3, 8));
        assert_eq!(
            (t.mapping, t.subgroup_width, t.pad),
            (ConvMapping::Tiled, 16, 1)
        );
        let p = VisParams::from_query(&Query::parse("stage=conv-direct&size=10"));
        assert!(
            matches!(p.trace(), StageTrace::Conv(t) if t.mapping == ConvMapping::Direct && t.h == 10)
        );
        assert!(matches!(
            VisParams::from_query(&Query::parse("stage=tiled")).trace(),
            StageTrace::Matmul(_)
        ));
    }

    /// The value a field shows after a change is the one used.
    #[test]
    fn field_value_is_the_value_used() {
        let p = VisParams::from_query(&Query::parse("size=1000"));
        assert_eq!(p.field_value("size").as_deref(), Some("64"));
        assert_eq!(p.field_value("wg").as_deref(), Some("8"));
        assert_eq!(p.field_value("stage"), None);
    }
}
