//! One module per page. Each page owns its persisted inputs (serde) and its runtime-only
//! jobs and results (`#[serde(skip)]`), and draws itself with a `ui` method.

pub mod calibration;
pub mod compare;
pub mod designer;
pub mod network;
pub mod prediction;
pub mod sizing;
pub mod validation;
