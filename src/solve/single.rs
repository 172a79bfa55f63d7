//! Exact single-class MVA with multi-server stations and multiplicity.
//!
//! Multi-server stations use the marginal-probability recursion (Reiser & Lavenberg; see
//! Menascé, Almeida & Dowdy, *Performance by Design*, ch. 14 / Lazowska et al.,
//! *Quantitative System Performance*, ch. 20):
//! `R(n) = D/c · [1 + Q(n−1) + Σ_{j=1}^{c−1} (c−j) p(j−1 | n−1)]`.

use super::{ClassSolution, Method, Solution, StationClassSolution, StationSolution};
use crate::qn::{Network, StationKind};

/// Solves a single-class network exactly. Panics if the network has more than one class
/// (callers go through [`super::solve`]).
pub fn solve_exact(net: &Network) -> Solution {
    assert_eq!(net.classes.len(), 1, "solve_exact takes one class");
    let class = &net.classes[0];
    let n_pop = class.population as usize;
    let z = class.think_time_secs;
    let k = net.stations.len();
    // Per-copy demand and path demand.
    let d: Vec<f64> = net
        .stations
        .iter()
        .map(|s| s.demands[0].secs / f64::from(s.multiplicity))
        .collect();
    let dp: Vec<f64> = net
        .stations
        .iter()
        .map(|s| s.demands[0].path_secs / f64::from(s.multiplicity))
        .collect();
    // Queue length per copy.
    let mut q = vec![0.0; k];
    // Marginal probabilities p(j | n) for j < c, per multi-server station.
    let mut p: Vec<Vec<f64>> = net
        .stations
        .iter()
        .map(|s| {
            if s.kind == StationKind::Queue && s.servers > 1 {
                let mut v = vec![0.0; s.servers as usize];
                v[0] = 1.0;
                v
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut stretch = vec![1.0; k];
    let mut x = 0.0;
    for n in 1..=n_pop {
        for (i, s) in net.stations.iter().enumerate() {
            stretch[i] = match s.kind {
                StationKind::Delay => 1.0,
                StationKind::Queue if s.servers == 1 => 1.0 + q[i],
                StationKind::Queue => {
                    let c = f64::from(s.servers);
                    let corr: f64 = p[i]
                        .iter()
                        .enumerate()
                        .take(s.servers as usize - 1)
                        .map(|(j, pj)| (c - 1.0 - j as f64) * pj)
                        .sum();
                    (1.0 + q[i] + corr) / c
                }
            };
        }
        let r_path: f64 = (0..k)
            .map(|i| f64::from(net.stations[i].multiplicity) * dp[i] * stretch[i])
            .sum();
        x = n as f64 / (z + r_path);
        for (i, s) in net.stations.iter().enumerate() {
            q[i] = x * d[i] * stretch[i];
            if !p[i].is_empty() {
                let c = s.servers as usize;
                let xd = x * d[i];
                let mut newp = vec![0.0; c];
                for j in 1..c {
                    newp[j] = xd / j as f64 * p[i][j - 1];
                }
                let cf = c as f64;
                let s1: f64 = (1..c).map(|j| (cf - j as f64) * newp[j]).sum();
                newp[0] = (1.0 - (xd + s1) / cf).max(0.0);
                p[i] = newp;
            }
        }
    }
    let stations = net
        .stations
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let m = f64::from(s.multiplicity);
            let servers = match s.kind {
                StationKind::Queue => f64::from(s.servers),
                StationKind::Delay => 1.0,
            };
            let util = match s.kind {
                StationKind::Queue => x * d[i] / servers,
                StationKind::Delay => 0.0,
            };
            StationSolution {
                name: s.name.clone(),
                utilization: util,
                queue_length: q[i],
                queue_length_total: q[i] * m,
                per_class: vec![StationClassSolution {
                    residence_secs: m * d[i] * stretch[i],
                    path_residence_secs: m * dp[i] * stretch[i],
                    queue_length: q[i] * m,
                    utilization: util,
                }],
            }
        })
        .collect();
    let r: f64 = if x > 0.0 { n_pop as f64 / x - z } else { 0.0 };
    Solution {
        method: Method::ExactSingleClass,
        classes: vec![ClassSolution {
            name: class.name.clone(),
            population: class.population,
            throughput_per_sec: x,
            response_time_secs: r,
        }],
        stations,
        convergence: None,
    }
}
