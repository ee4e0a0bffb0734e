//! Each page's logic without yew or the DOM: its settings read from the URL (with named
//! errors), its state as a model with a reducer, the run lifecycle, what is shown, and the
//! plans it asks the GPU to run (as `gpu_runtime::plan` data; the app submits them).
//!
//! Why a crate of its own: the compiler then enforces that components only render and
//! dispatch. A component keeps its model in a `use_reducer`, sends it actions from its
//! callbacks and renders what the model says; everything here is unit-tested natively
//! (`cargo test -p page-models`). What holds the device or the DOM (the session, the
//! training driver, workers, storage) stays in the app.
//!
//! - Shared: [`query`] (URL state), [`diagram`] (text widths, line
//!   breaks and tick thinning for charts drawn at their rendered width), [`run_lifecycle`] (a view's
//!   one-shot runs), [`progress`] (a long run's percentage and time left), [`doc_links`], [`source_view`] (WGSL diff and highlighting), [`route_alias`] (other names
//!   for pages: `#/simt` is the visualiser).
//! - Kernel pages: [`run_family`] (matmul and conv Run widgets), [`run_status`] (a run's
//!   estimate before it starts, its own pieces, cancelling), [`chart`] (the ladder's
//!   bars), [`vis_params`] (the SIMT visualiser), [`conv_page`] and [`conv_layers`].
//! - The race: [`race`]. Training: [`train`]. The CNN page: [`cnn`].
//! - Progress carried to another device: [`learner_file`].
//! - The editor: [`edit_target`] (what it can open), [`edit_cnn`] (an edited CNN kernel's
//!   steps against the twin), [`kernel_edit`] (share links, drafts),
//!   [`timing`] (yours against the original), [`loop_budget`], [`scratch`] and
//!   [`scratch_run`], [`puzzle_run`].
//! - Embedding: [`embed`] (its URL, origin check and message API), [`outcome`] (xAPI
//!   statements of what the learner did), [`embed_loader`] (the
//!   one-line loader's widget list and snippet), [`instructor`] (whether
//!   the Embed buttons show).

pub mod chart;
pub mod cnn;
pub mod conv_layers;
pub mod conv_page;
pub mod diagram;
pub mod doc_links;
pub mod edit_cnn;
pub mod edit_target;
pub mod embed;
pub mod embed_loader;
pub mod gpt_batching;
pub mod gpt_embed;
pub mod gpt_inside;
pub mod gpt_train;
pub mod gpt_wall;
pub mod instructor;
pub mod kernel_edit;
pub mod learner_file;
pub mod loop_budget;
pub mod outcome;
pub mod progress;
pub mod puzzle_run;
pub mod query;
pub mod race;
pub mod route_alias;
pub mod run_family;
pub mod run_lifecycle;
pub mod run_status;
pub mod scratch;
pub mod scratch_run;
pub mod source_view;
pub mod timing;
pub mod train;
pub mod vis_params;
