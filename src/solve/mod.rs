//! Solvers for closed queueing networks ([`crate::qn::Network`]): exact and approximate
//! Mean Value Analysis and asymptotic bounds.
//!
//! Not here: anything about Ceph (see `qn::ceph`), tails and fork-join timing (see `sim`).
//!
//! [`solve`] picks a method per network; each method is also callable directly. Results are
//! a [`Solution`]; numerical outcomes such as non-convergence of an iterative method are
//! data in [`Convergence`], not errors.

use serde::{Deserialize, Serialize};

use crate::qn::Network;

pub mod single;

/// Which algorithm produced a solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Exact single-class MVA with exact multi-server (load-dependent) stations.
    ExactSingleClass,
    /// Exact multi-class MVA over the full population lattice.
    ExactMultiClass,
    /// Bard-Schweitzer approximate MVA (fixed point).
    Schweitzer,
    /// Linearizer approximate MVA.
    Linearizer,
}

/// Solver choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveOptions {
    /// Force a method; `None` lets [`solve`] choose.
    pub method: Option<Method>,
    /// Relative tolerance for iterative methods.
    pub tolerance: f64,
    /// Iteration cap for iterative methods.
    pub max_iterations: u32,
    /// Largest population lattice (Π (N_c+1)) exact multi-class MVA may walk.
    pub max_exact_lattice: u64,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            method: None,
            tolerance: 1e-9,
            max_iterations: 100_000,
            max_exact_lattice: 2_000_000,
        }
    }
}

/// How an iterative method ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub converged: bool,
    pub iterations: u32,
    /// Largest relative change of a queue length in the last iteration.
    pub max_relative_change: f64,
    pub tolerance: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSolution {
    pub name: String,
    pub population: u32,
    pub throughput_per_sec: f64,
    /// Time in the stations per cycle (excludes think time), seconds.
    pub response_time_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StationClassSolution {
    /// Residence time per cycle summed over all copies (uses the demand), seconds.
    pub residence_secs: f64,
    /// Residence on the critical path (uses the path demand), seconds.
    pub path_residence_secs: f64,
    /// Mean jobs of this class at the station, all copies together.
    pub queue_length: f64,
    /// Per-server utilisation of one copy due to this class, 0..1.
    pub utilization: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StationSolution {
    pub name: String,
    /// Per-server utilisation of one copy (all classes), 0..1.
    pub utilization: f64,
    /// Mean jobs at one copy (all classes).
    pub queue_length: f64,
    /// Mean jobs at all copies together.
    pub queue_length_total: f64,
    /// Per class, in the network's class order.
    pub per_class: Vec<StationClassSolution>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Solution {
    pub method: Method,
    pub classes: Vec<ClassSolution>,
    pub stations: Vec<StationSolution>,
    /// Present for iterative methods.
    pub convergence: Option<Convergence>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    #[error("{method:?} cannot solve this network: {reason}")]
    Unsupported { method: Method, reason: String },
    #[error("exact multi-class MVA would visit {lattice} population vectors (limit {limit}); use an approximate method (schweitzer or linearizer)")]
    LatticeTooLarge { lattice: u64, limit: u64 },
}

/// Solves a network, choosing the method when `opts.method` is `None`: exact single-class
/// MVA for one class; exact multi-class MVA when the population lattice is small enough;
/// otherwise Linearizer.
pub fn solve(net: &Network, opts: &SolveOptions) -> Result<Solution, SolveError> {
    match opts.method {
        Some(Method::ExactSingleClass) | None if net.classes.len() == 1 => {
            Ok(single::solve_exact(net))
        }
        Some(m) => Err(SolveError::Unsupported {
            method: m,
            reason: "not implemented yet".into(),
        }),
        None => Err(SolveError::Unsupported {
            method: Method::ExactMultiClass,
            reason: "not implemented yet".into(),
        }),
    }
}
