//! The CPU-vs-GPU race's page logic: its settings in the URL (`params`, `conv_params`), the
//! live race (`duel`), the sweep chart's geometry (`plot`), the sweep's times that make no
//! sense (`doubt`) and the measured, verified runs of each side (`measure`). The workers that run the CPU side are the app's (`race::pool`).

pub mod conv_params;
pub mod doubt;
pub mod duel;
pub mod measure;
pub mod params;
pub mod plot;
