//! The CNN page (`#/cnn`, issue 24) as models, without yew, the DOM or a GPU session: the app's
//! component and its training driver keep a [`board::CnnPage`] in a reducer, hand it what the
//! GPU session and the tuned CPU trainer report, and render what it says.
//!
//! - `settings`: the URL's settings (through `cnn::spec`) with named errors, the pairs each
//!   control writes, what restarts and what applies live, the device-limit check.
//! - `board`: the page's state as a reducer: Play, Pause, Step, Reset, settings changes,
//!   both sides' step counts and evaluations, the curves, the rates and their ratio, restarts,
//!   a lost device and the run report an embed gets.
//! - `inspect`: the confusion matrix, the digits it gets wrong, first-layer filters and
//!   feature maps as grey images, and a drawn digit prepared like MNIST's.

pub mod board;
pub mod inspect;
pub mod settings;
