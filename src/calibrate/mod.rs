//! Calibration: fitting model parameters to measured runs, with honest uncertainty.
//!
//! - [`lm`]: generic Levenberg-Marquardt behind the [`lm::FitProblem`] trait, standard
//!   errors from `s² (JᵀJ)⁻¹`, Student-t intervals.
//! - [`ceph`]: the Ceph model fitted to measured runs: residuals, priors, leave-one-out,
//!   per-system errors beside the USL baseline, the fitted model file.
//! - [`ratio`]: ratio rows (one system's figure over another's, seed 003), fitted after
//!   the main fit for the factors only they inform.
//! - [`usl`]: the Universal Scalability Law baseline fitted per measured series.
//! - [`profile`]: the fit's error along one parameter held at a grid of values (does the
//!   data identify it?).
//!
//! Not here: reading datasets (see `data`), building or solving queueing networks (see
//! `qn`, `solve`), printing.

pub mod ceph;
pub mod lm;
pub mod profile;
pub mod ratio;
pub mod usl;

#[cfg(test)]
mod tests;
