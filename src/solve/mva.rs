//! Exact multi-class MVA over the full population lattice (Reiser & Lavenberg 1980;
//! Lazowska et al., *Quantitative System Performance*, §7.4, algorithm in Table 7.2).
//!
//! Queues (single server per copy) and delays are exact. Multi-server stations are *not*
//! exact here: they are replaced by Seidmann's decomposition (single server with demand
//! D/c plus a delay D·(c−1)/c) and the result is labelled [`Method::SeidmannMultiClass`]
//! with a note. Not here: one class (see [`super::single`], which is exact for
//! multi-server stations), large populations (see [`super::approx`]).
//!
//! Cost: Π_c (N_c + 1) lattice points × stations × classes; memory: lattice × stations
//! (one total queue length per copy per point).

use super::{Flat, Method, Solution, SolveError};
use crate::qn::Network;

/// Number of population vectors Π_c (N_c + 1), saturating.
pub fn lattice_size(net: &Network) -> u64 {
    net.classes
        .iter()
        .fold(1u64, |a, c| a.saturating_mul(u64::from(c.population) + 1))
}

/// Exact multi-class MVA. Fails with [`SolveError::LatticeTooLarge`] when the lattice
/// exceeds `max_lattice`.
pub fn solve_exact_multi(net: &Network, max_lattice: u64) -> Result<Solution, SolveError> {
    let lattice = lattice_size(net);
    if lattice > max_lattice {
        return Err(SolveError::LatticeTooLarge {
            lattice,
            limit: max_lattice,
        });
    }
    let flat = Flat::new(net);
    let k = flat.stations.len();
    let nc = net.classes.len();
    let pops: Vec<usize> = net.classes.iter().map(|c| c.population as usize).collect();
    let z: Vec<f64> = net.classes.iter().map(|c| c.think_time_secs).collect();
    let mut strides = vec![1usize; nc];
    for r in 1..nc {
        strides[r] = strides[r - 1] * (pops[r - 1] + 1);
    }
    let size = lattice as usize;
    // Total per-copy queue length at every station for every lattice point.
    let mut q = vec![0.0; size * k];
    let mut x = vec![0.0; nc];
    let mut stretch = vec![vec![1.0; nc]; k];
    let mut speed = vec![vec![1.0; nc]; k];
    let mut n = vec![0usize; nc];
    // Per lattice point, batching group and class: the group's path residence.
    let ng = flat.batches.len();
    let mut group_r = vec![0.0; size * ng * nc];
    for idx in 1..size {
        for r in 0..nc {
            n[r] = (idx / strides[r]) % (pops[r] + 1);
        }
        for r in 0..nc {
            if n[r] == 0 {
                x[r] = 0.0;
                for st in stretch.iter_mut() {
                    st[r] = 1.0;
                }
                continue;
            }
            let prev = (idx - strides[r]) * k;
            // Batching: the speed of the queue an arriving class-r job finds (see `qn`).
            for (b, parts) in &flat.batches {
                let f = b.demand_factor(
                    1.0 + parts
                        .iter()
                        .filter(|&&i| !flat.stations[i].delay)
                        .map(|&i| q[prev + i])
                        .sum::<f64>(),
                );
                parts.iter().for_each(|&i| speed[i][r] = f);
            }
            // A batching station's path residence for class r never falls from the
            // lattice point with one class-r job fewer (as in the single-class solver).
            for (g, (_, parts)) in flat.batches.iter().enumerate() {
                let base: f64 = parts
                    .iter()
                    .map(|&i| {
                        let s = &flat.stations[i];
                        let queue = if s.delay { 1.0 } else { 1.0 + q[prev + i] };
                        s.copies * s.dp[r] * queue
                    })
                    .sum();
                let before = group_r[((idx - strides[r]) * ng + g) * nc + r];
                let f = speed[parts[0]][r];
                if base > 0.0 {
                    let f = if f * base < before {
                        (before / base).min(1.0)
                    } else {
                        f
                    };
                    parts.iter().for_each(|&i| speed[i][r] = f);
                    group_r[(idx * ng + g) * nc + r] = f * base;
                }
            }
            let mut r_path = 0.0;
            for (i, s) in flat.stations.iter().enumerate() {
                let queue = if s.delay { 1.0 } else { 1.0 + q[prev + i] };
                stretch[i][r] = queue * speed[i][r];
                r_path += s.copies * s.dp[r] * stretch[i][r];
            }
            x[r] = n[r] as f64 / (z[r] + r_path);
        }
        for (i, s) in flat.stations.iter().enumerate() {
            q[idx * k + i] = (0..nc).map(|r| x[r] * s.d[r] * stretch[i][r]).sum();
        }
    }
    let method = if flat.seidmann.is_empty() {
        Method::ExactMultiClass
    } else {
        Method::SeidmannMultiClass
    };
    Ok(flat.assemble(net, method, &x, &stretch, &speed, None, Vec::new()))
}
