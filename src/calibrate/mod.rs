//! Calibration: fitting model parameters to measured runs, with honest uncertainty.
//!
//! - [`lm`]: generic Levenberg-Marquardt behind the [`lm::FitProblem`] trait, standard
//!   errors from `s² (JᵀJ)⁻¹`, Student-t intervals.
//! - [`usl`]: the Universal Scalability Law baseline fitted per measured series.
//!
//! Not here: reading datasets (see `data`), building or solving queueing networks (see
//! `qn`, `solve`), printing.

pub mod lm;
pub mod usl;
