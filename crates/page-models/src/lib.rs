//! Each page's state as a model with a reducer, without yew, the DOM or the GPU: the settings
//! read from the URL (with named errors), the run lifecycle (running, pausing while steps
//! already sent finish, paused, restarting) and what is shown (rates, "measuring…", notices).
//!
//! Why a crate of its own: the compiler then enforces that components only render and
//! dispatch. A component keeps its model in a `use_reducer`, sends it actions from its
//! callbacks and renders what the model says; everything here is unit-tested natively
//! (`cargo test -p page-models`). What needs a GPU handle (sessions, plans) stays in the app.
//!
//! - [`run_lifecycle`]: a view's one-shot runs (start, cancel, leave, stale results), used by
//!   the race's views and the Run widgets through the app's `use_run` hook.
//! - [`train`]: the train view (`#/train`).

pub mod run_lifecycle;
pub mod train;
