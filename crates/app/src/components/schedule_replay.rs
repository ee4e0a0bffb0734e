//! Real-GPU mode of the SIMT view: run the schedule probe on the visitor's GPU and replay the
//! order in which it started the workgroups, wave by wave.

use yew::prelude::*;

use gpu_runtime::{record_schedule, GpuError, ScheduleSize};
use simt_model::schedule::{replay, Replay};

use super::playback::use_autoplay;
use super::Ctx;
use crate::probe::WebGpuStatus;
use crate::session;

/// The probe launch: 32×32 workgroups of 64, each busy long enough to overlap with others.
const PROBE: ScheduleSize = ScheduleSize {
    gx: 32,
    gy: 32,
    work: 2048,
};
const PALETTE: [&str; 6] = [
    "#4c6ef5", "#12b886", "#f59f00", "#e64980", "#7950f2", "#15aabf",
];
const CELL: u32 = 11;

/// `run-finished` of a recording (docs/embedding.md). `record_schedule` has already checked
/// that every workgroup ran exactly once, so a replay is a verified one.
fn schedule_report(r: &Replay) -> page_models::embed::Report {
    use page_models::embed::Field;
    vec![
        ("workgroups", Field::Num(r.start_order.len() as f64)),
        ("grid", Field::Str(format!("{}x{}", r.gx, r.gy))),
        ("maxResident", Field::Num(r.max_resident as f64)),
        ("waves", Field::Num(r.waves as f64)),
        ("rowMajorShare", Field::Num(r.row_major_share)),
        ("verified", Field::Bool(true)),
    ]
}

#[function_component]
pub fn ScheduleReplay() -> Html {
    let ctx = use_context::<Ctx>();
    let record = use_state(|| None::<Result<Replay, String>>);
    let busy = use_state(|| false);
    let shown = use_state(|| 0usize);
    let playing = use_state(|| false);
    let total = match &*record {
        Some(Ok(r)) => r.start_order.len(),
        _ => 0,
    };
    // One wave per tick, but never more than ~40 ticks for the whole replay (a software
    // adapter may run only a couple of workgroups at once).
    let step = match &*record {
        Some(Ok(r)) => (r.max_resident as usize).max(total.div_ceil(40)).max(1),
        _ => 1,
    };
    use_autoplay(playing.clone(), shown.clone(), total, step, 400);
    let Some(ctx) = ctx else {
        return html! {};
    };
    let software = matches!(&ctx.webgpu, WebGpuStatus::Available(a) if a.is_software);
    let has_gpu = matches!(ctx.webgpu, WebGpuStatus::Available(_));

    let start = {
        let (record, busy, shown, playing) =
            (record.clone(), busy.clone(), shown.clone(), playing.clone());
        Callback::from(move |_| {
            busy.set(true);
            playing.set(false);
            let (record, busy, shown, playing) =
                (record.clone(), busy.clone(), shown.clone(), playing.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let result = async {
                    let (gpu, _) = session::gpu(software).await?;
                    record_schedule(&gpu, PROBE).await
                }
                .await;
                if let Err(GpuError::DeviceLost(_)) = &result {
                    session::forget();
                }
                let result = result
                    .map(|r| replay(r.size.gx, r.size.gy, &r.events))
                    .map_err(|e| e.to_string());
                page_models::embed::report(
                    result.as_ref().map(schedule_report).map_err(Clone::clone),
                );
                record.set(Some(result));
                shown.set(0);
                playing.set(true);
                busy.set(false);
            });
        })
    };
    let toggle = {
        let (playing, shown) = (playing.clone(), shown.clone());
        Callback::from(move |_: MouseEvent| {
            if *shown >= total {
                shown.set(0);
            }
            playing.set(!*playing);
        })
    };
    let scrub = {
        let (shown, playing) = (shown.clone(), playing.clone());
        Callback::from(move |e: InputEvent| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlInputElement>()
                .value();
            playing.set(false);
            shown.set(v.parse::<usize>().unwrap_or(0).min(total));
        })
    };

    let body = match &*record {
        None => html! {},
        Some(Err(e)) => html! {
            <p class="message error" role="alert">{ ctx.tf("run.error", &[("error", e)]) }</p>
        },
        Some(Ok(r)) => {
            let mut rank_of = vec![0usize; r.start_order.len()];
            for (rank, &id) in r.start_order.iter().enumerate() {
                rank_of[id as usize] = rank;
            }
            let cells = (0..r.gx * r.gy).map(|id| {
                let (x, y) = (id % r.gx, id / r.gx);
                let started = rank_of[id as usize] < *shown;
                let wave = r.wave_of[id as usize];
                html! {
                    <rect x={(x * CELL).to_string()} y={(y * CELL).to_string()} width={(CELL - 1).to_string()} height={(CELL - 1).to_string()}
                        fill={if started { PALETTE[wave as usize % PALETTE.len()] } else { "#e9ecf5" }}>
                        <title>{ format!("({x}, {y}) · #{} · {}", rank_of[id as usize] + 1, wave + 1) }</title>
                    </rect>
                }
            });
            let pct = format!("{:.0}", r.row_major_share * 100.0);
            html! {
                <>
                    <p class="real-summary" data-recorded="true" data-workgroups={r.start_order.len().to_string()}
                        data-max-resident={r.max_resident.to_string()}>
                        { ctx.tf("vis.real.summary", &[
                            ("n", &r.start_order.len().to_string()),
                            ("resident", &r.max_resident.to_string()),
                            ("waves", &r.waves.to_string()),
                            ("pct", &pct),
                        ]) }
                    </p>
                    <div class="vis-controls">
                        <button type="button" class="button" id="real-play" onclick={toggle}>
                            { ctx.t(if *playing { "vis.pause" } else { "vis.play" }) }
                        </button>
                        <input type="range" id="real-scrub" min="0" max={total.to_string()} value={shown.to_string()}
                            oninput={scrub} aria-label={ctx.t("vis.real.scrub")} />
                        <span class="vis-step">{ ctx.tf("vis.real.shown", &[("i", &shown.to_string()), ("n", &total.to_string())]) }</span>
                    </div>
                    <svg class="real-grid" width={(r.gx * CELL).to_string()} height={(r.gy * CELL).to_string()}>{ for cells }</svg>
                    <p class="note">{ ctx.t(if software { "vis.real.software" } else { "vis.real.hardware" }) }</p>
                </>
            }
        }
    };

    html! {
        <section class="panel real-gpu" aria-labelledby="real-heading">
            <h2 id="real-heading">{ ctx.t("vis.real.heading") }</h2>
            <p>{ ctx.t("vis.real.intro") }</p>
            <super::EmbedButton widget="schedule" />
            <button type="button" class="button primary" id="real-record" disabled={!has_gpu || *busy} onclick={start}>
                { ctx.t(if *busy { "run.running" } else { "vis.real.record" }) }
            </button>
            { body }
        </section>
    }
}
