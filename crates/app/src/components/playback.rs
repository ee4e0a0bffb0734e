//! Timed playback shared by the SIMT view and its real-GPU replay.

use gloo::timers::callback::Interval;
use yew::prelude::*;

/// While `playing`, advances `position` by `stride` every `period_ms` up to `end`, then
/// stops playing. The interval lives only while playing.
#[hook]
pub fn use_autoplay(
    playing: UseStateHandle<bool>,
    position: UseStateHandle<usize>,
    end: usize,
    stride: usize,
    period_ms: u32,
) {
    use_effect_with(
        (*playing, end, stride, period_ms),
        move |&(on, end, stride, period_ms)| {
            let tick = on.then(|| {
                Interval::new(period_ms.max(1), move || {
                    if *position >= end {
                        playing.set(false);
                    } else {
                        position.set((*position + stride.max(1)).min(end));
                    }
                })
            });
            move || drop(tick)
        },
    );
}
