//! # cephplan — capacity and performance planning for Ceph RBD
//!
//! cephplan predicts what a Ceph block-storage (RBD) cluster will deliver — IOPS,
//! bandwidth, mean and tail latency, per-resource utilisation and the bottleneck — by
//! building a closed queueing network of the RBD I/O path and solving it. Its parameters
//! are calibrated against measured benchmark runs, and validation mode checks predictions
//! against the real fio RBD engine on a real cluster.
//!
//! ```text
//!  scenario TOML ──► spec::ScenarioSpec ──validate──► spec::Scenario
//!                                                         │  + model::ModelParams (models/*.toml)
//!                                                         ▼
//!                                     qn::ceph::build ──► qn::Network (stations × classes)
//!                                                         │
//!                         solve::{mva, multiserver, approx, bounds}   sim (discrete-event)
//!                                                         ▼
//!                                   predict::PredictionReport / SweepReport / SizingReport
//!  measured runs (calibration-data/*.csv, fio JSON) ──► data ──► calibrate ──► fitted model
//!  fio + a real cluster ──► fio, lab ──► validate ──► dataset + comparison report
//! ```
//!
//! The library never prints and never depends on a UI toolkit or argument parser; the CLI
//! (`src/main.rs`, `src/cli/`) and the desktop app (`gui`, behind the `gui` feature) are thin
//! layers that call the same functions and therefore show the same numbers.
//!
//! Only two modules know about Ceph: [`spec`] (what the user writes) and [`qn::ceph`] (the one
//! builder that maps a Ceph cluster onto stations and classes). The solvers and the
//! simulator see only a generic [`qn::Network`].

pub mod calibrate;
pub mod data;
pub mod design;
pub mod evaluate;
pub mod fio;
#[cfg(feature = "gui")]
pub mod gui;
pub mod io;
pub mod lab;
pub mod model;
pub mod predict;
pub mod progress;
pub mod qn;
pub mod report;
pub mod sim;
pub mod solve;
pub mod spec;
pub mod units;
pub mod validate;
