//! Solvers for closed queueing networks ([`crate::qn::Network`]): exact and approximate
//! Mean Value Analysis and asymptotic bounds.
//!
//! Not here: anything about Ceph (see `qn::ceph`), tails and fork-join timing (see `sim`).
//!
//! [`solve`] picks a method per network; each method is also callable directly. Results are
//! a [`Solution`]; numerical outcomes such as non-convergence of an iterative method are
//! data in [`Convergence`], not errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::qn::{Network, StationKind};

pub mod approx;
pub mod bounds;
pub mod mva;
pub mod single;

#[cfg(test)]
pub(crate) mod oracle;
#[cfg(test)]
pub(crate) mod tests;

/// Which algorithm produced a solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Exact single-class MVA with exact multi-server (load-dependent) stations.
    ExactSingleClass,
    /// Exact single-class MVA except for the multi-server stations named in
    /// [`Solution::notes`]: too many copies for the exact complement lattice, the
    /// throughput of the network with one copy fewer is estimated by flow equivalence
    /// (stable; measured error of X ≈ 0.5/m², see `single`).
    SelfComplementSingleClass,
    /// Exact multi-class MVA over the full population lattice (single-server queues and
    /// delays only: exact).
    ExactMultiClass,
    /// Exact multi-class MVA of the network in which every multi-server station is
    /// replaced by Seidmann's approximation (single server D/c plus delay D·(c−1)/c).
    SeidmannMultiClass,
    /// Bard-Schweitzer approximate MVA (fixed point); multi-server stations via Seidmann.
    Schweitzer,
    /// Linearizer approximate MVA (Chandy & Neuse); multi-server stations via Seidmann.
    Linearizer,
}

impl Method {
    /// True for methods whose answer is exact for the network as given.
    pub fn is_exact(self) -> bool {
        matches!(self, Method::ExactSingleClass | Method::ExactMultiClass)
    }
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
    /// Approximations the solver had to make (empty for an exact answer).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    #[error("{method:?} cannot solve this network: {reason}")]
    Unsupported { method: Method, reason: String },
    #[error("exact multi-class MVA would visit {lattice} population vectors (limit {limit}); use an approximate method (schweitzer or linearizer)")]
    LatticeTooLarge { lattice: u64, limit: u64 },
    #[error("solver option {option} = {value} is invalid; {fix}")]
    BadOption {
        option: &'static str,
        value: String,
        fix: &'static str,
    },
}

/// Solves a network, choosing the method when `opts.method` is `None`: exact single-class
/// MVA for one class; exact multi-class MVA when the population lattice is small enough;
/// otherwise Linearizer.
pub fn solve(net: &Network, opts: &SolveOptions) -> Result<Solution, SolveError> {
    if !(opts.tolerance.is_finite() && opts.tolerance > 0.0 && opts.tolerance < 1.0) {
        return Err(SolveError::BadOption {
            option: "tolerance",
            value: opts.tolerance.to_string(),
            fix: "give a relative tolerance between 0 and 1, e.g. 1e-9",
        });
    }
    let single = net.classes.len() == 1;
    match opts.method {
        None if single => Ok(single::solve_exact(net)),
        None => match mva::solve_exact_multi(net, opts.max_exact_lattice) {
            Err(SolveError::LatticeTooLarge { .. }) => Ok(approx::linearizer(net, opts)),
            other => other,
        },
        Some(Method::ExactSingleClass | Method::SelfComplementSingleClass) if single => {
            Ok(single::solve_exact(net))
        }
        Some(m @ (Method::ExactSingleClass | Method::SelfComplementSingleClass)) => {
            Err(SolveError::Unsupported {
                method: m,
                reason: format!(
                    "the network has {} classes; use exact_multi_class, schweitzer or linearizer",
                    net.classes.len()
                ),
            })
        }
        Some(Method::ExactMultiClass | Method::SeidmannMultiClass) => {
            mva::solve_exact_multi(net, opts.max_exact_lattice)
        }
        Some(Method::Schweitzer) => Ok(approx::schweitzer(net, opts)),
        Some(Method::Linearizer) => Ok(approx::linearizer(net, opts)),
    }
}

/// The solution note of networks with batching stations (named).
pub(crate) fn batching_note(names: &[String]) -> String {
    format!(
        "stations {} batch (a load-dependent speed); solved with the mean-value rule: a job \
         is served at the speed of the queue it finds on arrival (not product form; \
         measured against the exact load-dependent solution in the solver tests)",
        names.join(", ")
    )
}

/// A network flattened for the multi-class and approximate solvers: per-copy demands,
/// multi-server stations replaced by Seidmann's decomposition (a single server with
/// demand D/c followed by a delay D·(c−1)/c; Seidmann, Schwetman & Shooman 1987).
#[derive(Debug, Clone)]
pub(crate) struct Flat {
    pub stations: Vec<FlatStation>,
    /// Names of the stations that were approximated.
    pub seidmann: Vec<String>,
    /// Batching stations: their batching and their parts (one, or Seidmann's two), which
    /// run at one speed set by the queue an arrival finds (the queue part's jobs).
    pub batches: Vec<(crate::qn::Batching, Vec<usize>)>,
    /// Names of the batching stations.
    pub batched: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct FlatStation {
    /// Index of the network station this part belongs to.
    pub origin: usize,
    pub delay: bool,
    pub copies: f64,
    /// Per-copy demand and path demand per class, seconds.
    pub d: Vec<f64>,
    pub dp: Vec<f64>,
}

impl Flat {
    pub fn new(net: &Network) -> Self {
        let mut stations = Vec::new();
        let mut seidmann = Vec::new();
        let mut batches = Vec::new();
        let mut batched = Vec::new();
        for (i, s) in net.stations.iter().enumerate() {
            let first = stations.len();
            let m = f64::from(s.multiplicity);
            let d: Vec<f64> = s.demands.iter().map(|d| d.secs / m).collect();
            let dp: Vec<f64> = s.demands.iter().map(|d| d.path_secs / m).collect();
            let part = |delay, scale: f64| FlatStation {
                origin: i,
                delay,
                copies: m,
                d: d.iter().map(|v| v * scale).collect(),
                dp: dp.iter().map(|v| v * scale).collect(),
            };
            match s.kind {
                StationKind::Delay => stations.push(part(true, 1.0)),
                StationKind::Queue if s.servers == 1 => stations.push(part(false, 1.0)),
                StationKind::Queue => {
                    let c = s.server_count();
                    stations.push(part(false, 1.0 / c));
                    stations.push(part(true, (c - 1.0) / c));
                    seidmann.push(s.name.clone());
                }
            }
            if let Some(b) = s.batching {
                batches.push((b, (first..stations.len()).collect()));
                batched.push(s.name.clone());
            }
        }
        Flat {
            stations,
            seidmann,
            batches,
            batched,
        }
    }

    /// Demand factors per part and class (1 without batching) from the jobs each class
    /// finds at each part on arrival, `seen(part, class)`, summed over a station's queue
    /// parts (not its Seidmann delay part).
    pub fn speeds(&self, nc: usize, seen: impl Fn(usize, usize) -> f64) -> Vec<Vec<f64>> {
        let mut speed = vec![vec![1.0; nc]; self.stations.len()];
        for (b, parts) in &self.batches {
            let f: Vec<f64> = (0..nc)
                .map(|r| {
                    b.demand_factor(
                        1.0 + parts
                            .iter()
                            .filter(|&&i| !self.stations[i].delay)
                            .map(|&i| seen(i, r))
                            .sum::<f64>(),
                    )
                })
                .collect();
            for &i in parts {
                speed[i].clone_from(&f);
            }
        }
        speed
    }

    /// Builds a [`Solution`] from per-part stretch factors (`R = d · stretch` per copy,
    /// batching's demand factor included), the demand factors `speed` (per part and class)
    /// and class throughputs.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &self,
        net: &Network,
        method: Method,
        x: &[f64],
        stretch: &[Vec<f64>],
        speed: &[Vec<f64>],
        convergence: Option<Convergence>,
        mut notes: Vec<String>,
    ) -> Solution {
        let nc = net.classes.len();
        let mut stations: Vec<StationSolution> = net
            .stations
            .iter()
            .map(|s| StationSolution {
                name: s.name.clone(),
                utilization: 0.0,
                queue_length: 0.0,
                queue_length_total: 0.0,
                per_class: (0..nc)
                    .map(|_| StationClassSolution {
                        residence_secs: 0.0,
                        path_residence_secs: 0.0,
                        queue_length: 0.0,
                        utilization: 0.0,
                    })
                    .collect(),
            })
            .collect();
        for (part, st) in self.stations.iter().zip(stretch) {
            let out = &mut stations[part.origin];
            for r in 0..nc {
                let pc = &mut out.per_class[r];
                let res = part.copies * part.d[r] * st[r];
                pc.residence_secs += res;
                pc.path_residence_secs += part.copies * part.dp[r] * st[r];
                pc.queue_length += x[r] * res;
                out.queue_length_total += x[r] * res;
                out.queue_length += x[r] * res / part.copies;
            }
        }
        // Demand factor per network station and class (the speed its parts ran at).
        let mut factor = vec![vec![1.0; nc]; net.stations.len()];
        for (part, sp) in self.stations.iter().zip(speed) {
            factor[part.origin].clone_from(sp);
        }
        for ((out, s), f) in stations.iter_mut().zip(&net.stations).zip(&factor) {
            if s.kind == StationKind::Queue {
                let cap = f64::from(s.multiplicity) * s.server_count();
                for (((pc, d), xr), fr) in out.per_class.iter_mut().zip(&s.demands).zip(x).zip(f) {
                    pc.utilization = xr * d.secs * fr / cap;
                    out.utilization += pc.utilization;
                }
            }
        }
        let classes = net
            .classes
            .iter()
            .enumerate()
            .map(|(r, c)| ClassSolution {
                name: c.name.clone(),
                population: c.population,
                throughput_per_sec: x[r],
                response_time_secs: if c.population == 0 {
                    0.0
                } else {
                    stations
                        .iter()
                        .map(|s| s.per_class[r].path_residence_secs)
                        .sum()
                },
            })
            .collect();
        if !self.batched.is_empty() {
            notes.push(batching_note(&self.batched));
        }
        if !self.seidmann.is_empty() {
            notes.push(format!(
                "multi-server stations {} use Seidmann's approximation (single server D/c + delay D(c-1)/c)",
                self.seidmann.join(", ")
            ));
        }
        let mixed = class_dependent_queues(net);
        if !mixed.is_empty() {
            notes.push(format!(
                "queue stations {} serve classes with different demands: MVA solves them as product-form (processor sharing, BCMP); a first-come-first-served queue, as `cephplan simulate --network` runs it, is not product-form there, so its figures differ",
                mixed.join(", ")
            ));
        }
        Solution {
            method,
            classes,
            stations,
            convergence,
            notes,
        }
    }
}

/// Queue stations where classes with jobs have different non-zero demands: product-form
/// only under processor sharing (BCMP), not first-come-first-served.
pub fn class_dependent_queues(net: &Network) -> Vec<String> {
    net.stations
        .iter()
        .filter(|s| s.kind == StationKind::Queue)
        .filter(|s| {
            let d: Vec<f64> = s
                .demands
                .iter()
                .zip(&net.classes)
                .filter(|(d, c)| c.population > 0 && d.secs > 0.0)
                .map(|(d, _)| d.secs)
                .collect();
            d.iter().any(|&a| (a - d[0]).abs() > 1e-12 * a.max(d[0]))
        })
        .map(|s| s.name.clone())
        .collect()
}

/// A class in a [`SolveReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassReport {
    pub population: u32,
    pub think_time_secs: f64,
    pub throughput_per_sec: f64,
    pub response_time_secs: f64,
}

/// A station in a [`SolveReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StationReport {
    pub kind: crate::qn::StationKind,
    pub servers: u32,
    /// The real server count when it is fractional (see [`crate::qn::Station`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fractional_servers: Option<f64>,
    pub multiplicity: u32,
    /// Per-server utilisation of one copy, 0..1.
    pub utilization: f64,
    /// Mean jobs at one copy.
    pub queue_length: f64,
    /// Mean jobs at all copies together.
    pub queue_length_total: f64,
    /// Per class name.
    pub per_class: BTreeMap<String, StationClassSolution>,
}

/// A solution keyed by names, with the asymptotic bounds: the JSON contract of
/// `cephplan solve` (`classes.<name>.throughput_per_sec`, `stations.<name>.utilization`,
/// …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveReport {
    pub method: Method,
    /// True when the method is exact for the network as given (never with batching).
    pub exact: bool,
    pub convergence: Option<Convergence>,
    pub notes: Vec<String>,
    pub classes: BTreeMap<String, ClassReport>,
    pub stations: BTreeMap<String, StationReport>,
    pub bounds: BTreeMap<String, bounds::ClassBounds>,
}

impl SolveReport {
    pub fn new(net: &Network, sol: &Solution) -> Self {
        let classes = net
            .classes
            .iter()
            .zip(&sol.classes)
            .map(|(c, s)| {
                (
                    c.name.clone(),
                    ClassReport {
                        population: c.population,
                        think_time_secs: c.think_time_secs,
                        throughput_per_sec: s.throughput_per_sec,
                        response_time_secs: s.response_time_secs,
                    },
                )
            })
            .collect();
        let stations = net
            .stations
            .iter()
            .zip(&sol.stations)
            .map(|(st, s)| {
                (
                    st.name.clone(),
                    StationReport {
                        kind: st.kind,
                        servers: st.servers,
                        fractional_servers: st.fractional_servers,
                        multiplicity: st.multiplicity,
                        utilization: s.utilization,
                        queue_length: s.queue_length,
                        queue_length_total: s.queue_length_total,
                        per_class: net
                            .classes
                            .iter()
                            .zip(&s.per_class)
                            .map(|(c, pc)| (c.name.clone(), pc.clone()))
                            .collect(),
                    },
                )
            })
            .collect();
        let bounds = bounds::bounds(net)
            .into_iter()
            .map(|b| (b.name.clone(), b))
            .collect();
        SolveReport {
            method: sol.method,
            // Batching is solved by the mean-value rule, never exactly.
            exact: sol.method.is_exact()
                && net
                    .stations
                    .iter()
                    .all(|s| s.batching.is_none() && s.fractional_servers.is_none()),
            convergence: sol.convergence.clone(),
            notes: sol.notes.clone(),
            classes,
            stations,
            bounds,
        }
    }
}
