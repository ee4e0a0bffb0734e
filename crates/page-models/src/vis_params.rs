//! The visualiser's parameters from the URL (`#/visualiser?stage=tiled&size=32&wg=8&sg=32`),
//! validated into a trace configuration, and the view's position and playback as a state with
//! actions (`View`, the visualiser's one reducer). Pure, unit-tested.

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
/// Play speeds: steps per second.
pub const SPEEDS: [u32; 4] = [1, 2, 5, 10];
/// The speed a page starts at, and the one used for a value not in [`SPEEDS`].
pub const DEFAULT_SPEED: u32 = 2;

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

/// Where the view is and whether it plays: the step, the selected workgroup and thread as
/// picked (the view keeps them inside the launch drawn: [`View::clamped`]) and the speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub step: usize,
    pub playing: bool,
    /// Steps per second, one of [`SPEEDS`].
    pub speed: u32,
    pub wg: [u32; 2],
    pub thread: u32,
}

/// An edit of the view. `last` is the last step of the launch drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewAction {
    /// The URL's position (a link followed in the same tab).
    FromUrl(Position),
    /// Back (−1) or forward (+1) a step, pausing.
    Go {
        delta: i64,
        last: usize,
    },
    /// Play or pause; playing from the last step starts again.
    Toggle {
        last: usize,
    },
    /// The slider's value (text), pausing.
    Scrub {
        value: String,
        last: usize,
    },
    /// The speed select's value (text).
    Speed(String),
    PickWorkgroup([u32; 2]),
    PickThread(u32),
    /// A setting changed: paused at the first step.
    Restart,
    /// Playback's timer: the next step, or the end of playing at the last.
    Tick {
        last: usize,
    },
}

impl View {
    pub fn new(pos: Position) -> View {
        View {
            step: pos.step as usize,
            playing: false,
            speed: DEFAULT_SPEED,
            wg: pos.wg,
            thread: pos.thread,
        }
    }

    pub fn apply(self, action: ViewAction) -> View {
        let mut v = self;
        match action {
            ViewAction::FromUrl(pos) => {
                v.step = pos.step as usize;
                v.wg = pos.wg;
                v.thread = pos.thread;
            }
            ViewAction::Go { delta, last } => {
                v.playing = false;
                v.step = (self.step.min(last) as i64 + delta).clamp(0, last as i64) as usize;
            }
            ViewAction::Toggle { last } => {
                if self.step >= last {
                    v.step = 0;
                }
                v.playing = !self.playing;
            }
            ViewAction::Scrub { value, last } => {
                v.playing = false;
                v.step = value.parse::<usize>().unwrap_or(0).min(last);
            }
            ViewAction::Speed(text) => {
                v.speed = text
                    .parse()
                    .ok()
                    .filter(|s| SPEEDS.contains(s))
                    .unwrap_or(DEFAULT_SPEED);
            }
            ViewAction::PickWorkgroup(wg) => {
                v.wg = wg;
                v.thread = 0;
            }
            ViewAction::PickThread(t) => v.thread = t,
            ViewAction::Restart => {
                v.playing = false;
                v.step = 0;
            }
            ViewAction::Tick { last } => {
                if self.step >= last {
                    v.playing = false;
                } else {
                    v.step = (self.step + 1).min(last);
                }
            }
        }
        v
    }

    /// Step, workgroup and thread kept inside the launch drawn now (`last` step, `grid` of
    /// workgroups, `invocations` per workgroup): the grid shrinks when the workgroup side grows
    /// or the size falls, and the ids, lit cells and counters must agree.
    pub fn clamped(&self, last: usize, grid: [u32; 3], invocations: u32) -> (usize, [u32; 2], u32) {
        (
            self.step.min(last),
            [
                self.wg[0].min(grid[0].saturating_sub(1)),
                self.wg[1].min(grid[1].saturating_sub(1)),
            ],
            self.thread.min(invocations.saturating_sub(1)),
        )
    }

    /// Milliseconds between playback's steps.
    pub fn period_ms(&self) -> u32 {
        1000 / self.speed.max(1)
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;

    #[test]
    fn stepping_pauses_and_stays_inside_the_launch() {
        let v = View::new(Position {
            step: 40,
            wg: [3, 1],
            thread: 70,
        });
        assert_eq!((v.playing, v.speed, v.period_ms()), (false, 2, 500));
        let playing = View { playing: true, ..v };
        // A URL past the end: forward lands on the last step, back on the one before it.
        assert_eq!(playing.apply(ViewAction::Go { delta: 1, last: 9 }).step, 9);
        let back = playing.apply(ViewAction::Go { delta: -1, last: 9 });
        assert_eq!((back.step, back.playing), (8, false));
        assert_eq!(v.apply(ViewAction::Go { delta: -1, last: 0 }).step, 0);
        let s = v.apply(ViewAction::Scrub {
            value: "5".into(),
            last: 9,
        });
        assert_eq!(s.step, 5);
        let bad = v.apply(ViewAction::Scrub {
            value: "x".into(),
            last: 9,
        });
        assert_eq!(bad.step, 0);
        assert_eq!(v.clamped(9, [2, 2, 1], 64), (9, [1, 1], 63));
        assert_eq!(v.clamped(99, [4, 4, 1], 256), (40, [3, 1], 70));
    }

    #[test]
    fn playing_runs_to_the_end_and_starts_again_from_there() {
        let v = View::new(Position::default()).apply(ViewAction::Toggle { last: 2 });
        assert!(v.playing);
        let v = v
            .apply(ViewAction::Tick { last: 2 })
            .apply(ViewAction::Tick { last: 2 });
        assert_eq!((v.step, v.playing), (2, true));
        let v = v.apply(ViewAction::Tick { last: 2 });
        assert_eq!((v.step, v.playing), (2, false));
        let again = v.apply(ViewAction::Toggle { last: 2 });
        assert_eq!((again.step, again.playing), (0, true));
        let restarted = again
            .apply(ViewAction::Tick { last: 2 })
            .apply(ViewAction::Restart);
        assert_eq!((restarted.step, restarted.playing), (0, false));
    }

    #[test]
    fn picks_speed_and_links() {
        let v = View::new(Position::default());
        let w = v
            .apply(ViewAction::PickThread(5))
            .apply(ViewAction::PickWorkgroup([2, 3]));
        assert_eq!((w.wg, w.thread), ([2, 3], 0));
        assert_eq!(v.apply(ViewAction::Speed("10".into())).speed, 10);
        assert_eq!(v.apply(ViewAction::Speed("3".into())).speed, 2);
        let pos = Position {
            step: 4,
            wg: [1, 0],
            thread: 9,
        };
        let linked = View { playing: true, ..v }.apply(ViewAction::FromUrl(pos));
        assert_eq!(
            (linked.step, linked.wg, linked.thread, linked.playing),
            (4, [1, 0], 9, true)
        );
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
}
