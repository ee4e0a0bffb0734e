//! The shell's visit count (the `n` of `data-route-ready`, which the browser tests wait on),
//! kept here so that it can go on across a reload: a page the embed module leaves out reloads
//! into the whole app (`components/elsewhere.rs`) and hands the count over in session storage.

use std::cell::Cell;

/// Session storage key: the visit number reached when a left-out page reloaded.
const HANDOFF: &str = "gpu-playground.visit-before-reload";

thread_local! {
    static VISITS: Cell<u32> = const { Cell::new(0) };
}

/// Records the visit number the shell shows now.
pub fn set(n: u32) {
    VISITS.with(|v| v.set(n));
}

/// Hands the visit number reached so far to the document the coming reload starts.
#[cfg(not(all(feature = "lessons", feature = "cnn-page", feature = "editor-pages")))]
pub fn hand_over() {
    if let Ok(Some(s)) = gloo::utils::window().session_storage() {
        let _ = s.set_item(HANDOFF, &VISITS.with(|v| v.get()).to_string());
    }
}

/// The visit number handed over by a reload from the embed module (0 on any other load); read
/// once.
pub fn before_reload() -> u32 {
    let Ok(Some(s)) = gloo::utils::window().session_storage() else {
        return 0;
    };
    let n = s
        .get_item(HANDOFF)
        .ok()
        .flatten()
        .and_then(|v| v.parse().ok());
    let _ = s.remove_item(HANDOFF);
    n.unwrap_or(0)
}
