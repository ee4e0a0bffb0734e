//! The CNN page (`#/cnn`, issue 24) as models, without yew, the DOM or a GPU session: the app's
//! component and its training driver keep its models, hand it what the
//! GPU session and the tuned CPU trainer report, and render what it says.
//!
//! - `settings`: the URL's settings (through `cnn::spec`) with named errors, the pairs each
//!   control writes, what restarts and what applies live, the device-limit check.

pub mod settings;
