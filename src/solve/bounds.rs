//! Asymptotic bounds on throughput and response time per class (Lazowska et al.,
//! *Quantitative System Performance*, ch. 5, Table 5.1; Denning & Buzen 1978): cheap
//! sanity checks that every solution must fall within.
//!
//! For class `r` with population `N_r`, think time `Z_r`, path demand `D_r = Σ_k Dp_kr`
//! and largest per-server demand `D_max,r = max_k D_kr·f_k / (m_k·c_k)` over queues (`f_k`:
//! the smallest demand factor of a batching station, 1 otherwise):
//! - optimistic: `X_r ≤ min(N_r / (D_r + Z_r), 1 / D_max,r)` (batching stations' path
//!   demand taken at their smallest factor),
//!   `R_r ≥ max(D_r, N_r·D_max,r − Z_r)` (the class in isolation: other classes only slow
//!   it down, so these hold in multi-class networks too);
//! - pessimistic: `R_r ≤ N·D_r` with `N` the total population of all classes (an arriving
//!   job finds at most `N − 1` others ahead at every station), `X_r ≥ N_r / (N·D_r + Z_r)`.
//!
//! Not here: balanced-job bounds (tighter, single class only; not implemented).

use serde::{Deserialize, Serialize};

use crate::qn::{Network, StationKind};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassBounds {
    pub name: String,
    pub population: u32,
    pub throughput_upper_per_sec: f64,
    pub throughput_lower_per_sec: f64,
    pub response_time_lower_secs: f64,
    pub response_time_upper_secs: f64,
    /// The station with the largest per-server demand (the asymptotic bottleneck).
    pub bottleneck: Option<String>,
}

/// Asymptotic bounds for every class, in the network's class order.
pub fn bounds(net: &Network) -> Vec<ClassBounds> {
    let n_total = net.total_population() as f64;
    net.classes
        .iter()
        .enumerate()
        .map(|(r, c)| {
            let n = f64::from(c.population);
            let z = c.think_time_secs;
            let d: f64 = net.stations.iter().map(|s| s.demands[r].path_secs).sum();
            // The path demand at the smallest demand factors (batching), for the optimistic
            // bounds.
            let d_low: f64 = net
                .stations
                .iter()
                .map(|s| s.demands[r].path_secs * s.batching.map_or(1.0, |b| b.min_demand_factor()))
                .sum();
            let mut d_max = 0.0;
            let mut bottleneck = None;
            for s in &net.stations {
                if s.kind == StationKind::Queue {
                    // Batching: at its largest batch (the most a station can do).
                    let per_server = 1.0 / s.capacity_per_sec(r);
                    if per_server > d_max {
                        d_max = per_server;
                        bottleneck = Some(s.name.clone());
                    }
                }
            }
            let x_up = if d_max > 0.0 {
                (n / (d_low + z)).min(1.0 / d_max)
            } else {
                n / (d_low + z)
            };
            ClassBounds {
                name: c.name.clone(),
                population: c.population,
                throughput_upper_per_sec: if n == 0.0 { 0.0 } else { x_up },
                throughput_lower_per_sec: if n == 0.0 { 0.0 } else { n / (n_total * d + z) },
                response_time_lower_secs: d_low.max(n * d_max - z),
                response_time_upper_secs: n_total.max(1.0) * d,
                bottleneck,
            }
        })
        .collect()
}
