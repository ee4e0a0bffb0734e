//! The training run inside an embed (`#/embed/gpt`): `getState`'s work on every render, and
//! `run-finished` once a Pause's run has been evaluated where it stopped
//! (`page_models::gpt_embed`). Outside an embed both calls do nothing.

use gpt::asset::Dataset;
use page_models::gpt_embed::{run_report, work, PauseWatch};
use page_models::gpt_train::GptTrain;
use yew::prelude::*;

/// The data set's `data=` value.
fn data_id(d: Dataset) -> &'static str {
    match d {
        Dataset::Names => "names",
        Dataset::Poems => "poems",
    }
}

#[hook]
pub fn use_embed_report(page: &GptTrain, data: Dataset) {
    let watch = use_mut_ref(PauseWatch::default);
    page_models::embed::note_work(work(page, data_id(data)));
    let report = watch.borrow_mut().see(page);
    let snapshot = report.then(|| run_report(page, data_id(data)));
    // Sent after the render, as the CNN's is.
    use_effect(move || {
        if let Some(r) = snapshot {
            page_models::embed::report(Ok(r));
        }
    });
}
