//! One exact single-class MVA pass that keeps the results at every population on the way.
//!
//! Exact MVA computes the network at n = 1, 2, …, N to reach N; a sweep over iodepth,
//! images or jobs only changes N, so its whole curve costs one pass. This is the same
//! recursion as `solve::single::solve_exact` (multi-server stations by the
//! marginal-probability recursion; Lazowska et al., *Quantitative System Performance*,
//! ch. 20); a test checks that both agree at every population. Not a general solver: one
//! class, zero think time.

use crate::qn::{Network, StationKind};

/// The solved network at one population.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    pub population: u32,
    pub throughput_per_sec: f64,
    /// Response time over the critical path, seconds.
    pub response_time_secs: f64,
    /// Per station: residence / demand (1 for delays).
    pub stretch: Vec<f64>,
    /// Per station: per-server utilisation of one copy.
    pub utilization: Vec<f64>,
}

/// Per-server utilisation of one copy of every station at throughput `x`.
pub fn utilization(net: &Network, x: f64) -> Vec<f64> {
    net.stations
        .iter()
        .map(|s| match s.kind {
            StationKind::Queue => {
                x * s.demands[0].secs / f64::from(s.multiplicity) / f64::from(s.servers)
            }
            StationKind::Delay => 0.0,
        })
        .collect()
}

/// Walks exact MVA from n = 1 to `n_max`, calling `visit(n, throughput, response, stretch)`
/// after each population; stops early when `visit` returns false.
pub fn mva_walk(net: &Network, n_max: u32, mut visit: impl FnMut(u32, f64, f64, &[f64]) -> bool) {
    assert_eq!(net.classes.len(), 1, "mva_walk takes one class");
    let z = net.classes[0].think_time_secs;
    let k = net.stations.len();
    let mult: Vec<f64> = net
        .stations
        .iter()
        .map(|s| f64::from(s.multiplicity))
        .collect();
    let d: Vec<f64> = net
        .stations
        .iter()
        .zip(&mult)
        .map(|(s, m)| s.demands[0].secs / m)
        .collect();
    let dp: Vec<f64> = net
        .stations
        .iter()
        .zip(&mult)
        .map(|(s, m)| s.demands[0].path_secs / m)
        .collect();
    let servers: Vec<usize> = net
        .stations
        .iter()
        .map(|s| match s.kind {
            StationKind::Queue => s.servers as usize,
            StationKind::Delay => 0,
        })
        .collect();
    let mut q = vec![0.0; k];
    let mut p: Vec<Vec<f64>> = servers
        .iter()
        .map(|&c| {
            if c > 1 {
                let mut v = vec![0.0; c];
                v[0] = 1.0;
                v
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut newp: Vec<f64> = Vec::new();
    let mut stretch = vec![1.0; k];
    for n in 1..=n_max {
        for i in 0..k {
            stretch[i] = match servers[i] {
                0 => 1.0,
                1 => 1.0 + q[i],
                c => {
                    let cf = c as f64;
                    let corr: f64 = p[i][..c - 1]
                        .iter()
                        .enumerate()
                        .map(|(j, pj)| (cf - 1.0 - j as f64) * pj)
                        .sum();
                    (1.0 + q[i] + corr) / cf
                }
            };
        }
        let r: f64 = (0..k).map(|i| mult[i] * dp[i] * stretch[i]).sum();
        let x = f64::from(n) / (z + r);
        for i in 0..k {
            q[i] = x * d[i] * stretch[i];
            let c = servers[i];
            if c > 1 {
                let xd = x * d[i];
                newp.clear();
                newp.resize(c, 0.0);
                for j in 1..c {
                    newp[j] = xd / j as f64 * p[i][j - 1];
                }
                let cf = c as f64;
                let s1: f64 = (1..c).map(|j| (cf - j as f64) * newp[j]).sum();
                newp[0] = (1.0 - (xd + s1) / cf).max(0.0);
                std::mem::swap(&mut p[i], &mut newp);
            }
        }
        if !visit(n, x, r, &stretch) {
            return;
        }
    }
}

/// Solves `net` (one class) at each population in `populations` (any order, duplicates
/// allowed) with one pass up to the largest. Results follow the input order.
pub fn mva_curve(net: &Network, populations: &[u32]) -> Vec<CurvePoint> {
    let mut wanted: Vec<(u32, usize)> = populations
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i))
        .collect();
    wanted.sort_unstable();
    let mut out: Vec<Option<CurvePoint>> = vec![None; populations.len()];
    let k = net.stations.len();
    let mut next = 0;
    while next < wanted.len() && wanted[next].0 == 0 {
        out[wanted[next].1] = Some(CurvePoint {
            population: 0,
            throughput_per_sec: 0.0,
            response_time_secs: 0.0,
            stretch: vec![1.0; k],
            utilization: vec![0.0; k],
        });
        next += 1;
    }
    let n_max = wanted.last().map_or(0, |w| w.0);
    mva_walk(net, n_max, |n, x, r, stretch| {
        while next < wanted.len() && wanted[next].0 == n {
            out[wanted[next].1] = Some(CurvePoint {
                population: n,
                throughput_per_sec: x,
                response_time_secs: r,
                stretch: stretch.to_vec(),
                utilization: utilization(net, x),
            });
            next += 1;
        }
        true
    });
    out.into_iter()
        .map(|p| p.expect("every requested population is recorded"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qn::{Class, Demand, Station};

    fn net(pop: u32) -> Network {
        let st = |name: &str, kind, servers, m, d: f64, pth: f64| Station {
            name: name.into(),
            kind,
            servers,
            multiplicity: m,
            demands: vec![Demand::forked(d, pth)],
        };
        Network::new(
            vec![
                st("cpu", StationKind::Queue, 4, 3, 6e-4, 4e-4),
                st("disk", StationKind::Queue, 1, 6, 1e-4, 0.5e-4),
                st("nic", StationKind::Queue, 1, 3, 3e-6, 3e-6),
                st("delay", StationKind::Delay, 1, 1, 2e-4, 2e-4),
            ],
            vec![Class {
                name: "io".into(),
                population: pop,
                think_time_secs: 0.0,
            }],
        )
        .unwrap()
    }

    #[test]
    fn one_pass_matches_the_exact_solver_at_every_population() {
        let pops = [64, 1, 7, 32, 7, 200];
        let curve = mva_curve(&net(1), &pops);
        for (pt, &n) in curve.iter().zip(&pops) {
            assert_eq!(pt.population, n);
            let sol = crate::solve::single::solve_exact(&net(n));
            let x = sol.classes[0].throughput_per_sec;
            assert!((pt.throughput_per_sec - x).abs() <= 1e-12 * x, "n = {n}");
            for (i, s) in sol.stations.iter().enumerate() {
                assert!((pt.utilization[i] - s.utilization).abs() < 1e-12);
            }
        }
    }
}
