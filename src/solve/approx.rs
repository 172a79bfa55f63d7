//! Approximate multi-class MVA for populations too large for the exact lattice:
//! Bard-Schweitzer (Schweitzer 1979; Lazowska et al., *Quantitative System Performance*,
//! §7.4.3) and Linearizer (Chandy & Neuse, CACM 25(2), 1982).
//!
//! Both are fixed points iterated until the largest relative change of a queue length is
//! below `SolveOptions::tolerance` or `max_iterations` is reached; how it ended is returned
//! as [`Convergence`] data, never as an error. Multi-server stations use Seidmann's
//! decomposition (see [`super::Flat`]); multiplicity is per copy (demand D/m each).
//! Not here: exact solutions (see [`super::single`], [`super::mva`]).

use super::{Convergence, Flat, Method, Solution, SolveOptions};
use crate::qn::Network;

/// Per-copy queue lengths `q[k][r]` (station part × class).
type Queues = Vec<Vec<f64>>;

struct Core<'a> {
    flat: &'a Flat,
    z: Vec<f64>,
}

struct CoreOut {
    x: Vec<f64>,
    stretch: Vec<Vec<f64>>,
    iterations: u32,
    change: f64,
    converged: bool,
}

impl Core<'_> {
    /// The fixed point at population `n`: an arriving class-r job sees, at a queue,
    /// `Σ_c (n_c − δ_cr)·(q_kc/n_c + delta[k][c][r])` jobs (delta = 0: Bard-Schweitzer).
    fn run(
        &self,
        n: &[f64],
        q: &mut Queues,
        delta: Option<&[Vec<Vec<f64>>]>,
        opts: &SolveOptions,
    ) -> CoreOut {
        let nc = n.len();
        let k = self.flat.stations.len();
        let mut x = vec![0.0; nc];
        let mut stretch = vec![vec![1.0; nc]; k];
        let mut iterations = 0;
        let mut change = f64::INFINITY;
        while iterations < opts.max_iterations {
            iterations += 1;
            for r in 0..nc {
                if n[r] <= 0.0 {
                    x[r] = 0.0;
                    continue;
                }
                let mut r_path = 0.0;
                for (i, s) in self.flat.stations.iter().enumerate() {
                    stretch[i][r] = if s.delay {
                        1.0
                    } else {
                        let seen: f64 = (0..nc)
                            .filter(|&c| n[c] > 0.0)
                            .map(|c| {
                                let nr = n[c] - if c == r { 1.0 } else { 0.0 };
                                let dev = delta.map_or(0.0, |d| d[i][c][r]);
                                (nr * (q[i][c] / n[c] + dev)).max(0.0)
                            })
                            .sum();
                        1.0 + seen
                    };
                    r_path += s.copies * s.dp[r] * stretch[i][r];
                }
                x[r] = n[r] / (self.z[r] + r_path);
            }
            change = 0.0;
            for (i, s) in self.flat.stations.iter().enumerate() {
                for r in 0..nc {
                    let new = x[r] * s.d[r] * stretch[i][r];
                    let old = q[i][r];
                    let scale = new.abs().max(old.abs());
                    if scale > 0.0 {
                        change = f64::max(change, (new - old).abs() / scale);
                    }
                    q[i][r] = new;
                }
            }
            if change <= opts.tolerance {
                break;
            }
        }
        CoreOut {
            x,
            stretch,
            iterations,
            change,
            converged: change <= opts.tolerance,
        }
    }
}

fn setup(net: &Network) -> (Flat, Vec<f64>, Vec<f64>) {
    let flat = Flat::new(net);
    let z = net.classes.iter().map(|c| c.think_time_secs).collect();
    let n = net
        .classes
        .iter()
        .map(|c| f64::from(c.population))
        .collect();
    (flat, z, n)
}

/// Initial guess: each class's population spread evenly over the queue copies.
fn initial_queues(flat: &Flat, n: &[f64]) -> Queues {
    let queues: f64 = flat
        .stations
        .iter()
        .filter(|s| !s.delay)
        .map(|s| s.copies)
        .sum::<f64>()
        .max(1.0);
    flat.stations
        .iter()
        .map(|s| {
            n.iter()
                .enumerate()
                .map(|(r, &nr)| if s.d[r] > 0.0 { nr / queues } else { 0.0 })
                .collect()
        })
        .collect()
}

fn convergence(out: &CoreOut, iterations: u32, opts: &SolveOptions) -> Convergence {
    Convergence {
        converged: out.converged,
        iterations,
        max_relative_change: out.change,
        tolerance: opts.tolerance,
    }
}

/// Bard-Schweitzer approximate MVA.
pub fn schweitzer(net: &Network, opts: &SolveOptions) -> Solution {
    let (flat, z, n) = setup(net);
    let core = Core { flat: &flat, z };
    let mut q = initial_queues(&flat, &n);
    let out = core.run(&n, &mut q, None, opts);
    let conv = convergence(&out, out.iterations, opts);
    flat.assemble(
        net,
        Method::Schweitzer,
        &out.x,
        &out.stretch,
        Some(conv),
        Vec::new(),
    )
}

/// Linearizer: three rounds of (core at N and at N − e_s for every class s, then update
/// of the fractional deviations), then a final core at N (Chandy & Neuse 1982).
pub fn linearizer(net: &Network, opts: &SolveOptions) -> Solution {
    let (flat, z, n) = setup(net);
    let core = Core { flat: &flat, z };
    let k = flat.stations.len();
    let nc = n.len();
    let mut delta = vec![vec![vec![0.0; nc]; nc]; k];
    let mut q_full = initial_queues(&flat, &n);
    let reduced: Vec<Vec<f64>> = (0..nc)
        .map(|s| {
            let mut m = n.clone();
            m[s] = (m[s] - 1.0).max(0.0);
            m
        })
        .collect();
    let mut q_red: Vec<Queues> = reduced.iter().map(|m| initial_queues(&flat, m)).collect();
    let mut iterations = 0;
    for _ in 0..3 {
        iterations += core.run(&n, &mut q_full, Some(&delta), opts).iterations;
        for s in 0..nc {
            iterations += core
                .run(&reduced[s], &mut q_red[s], Some(&delta), opts)
                .iterations;
        }
        for i in 0..k {
            for c in 0..nc {
                for s in 0..nc {
                    let f_red = if reduced[s][c] > 0.0 {
                        q_red[s][i][c] / reduced[s][c]
                    } else {
                        0.0
                    };
                    let f_full = if n[c] > 0.0 { q_full[i][c] / n[c] } else { 0.0 };
                    delta[i][c][s] = f_red - f_full;
                }
            }
        }
    }
    let out = core.run(&n, &mut q_full, Some(&delta), opts);
    iterations += out.iterations;
    let conv = convergence(&out, iterations, opts);
    flat.assemble(
        net,
        Method::Linearizer,
        &out.x,
        &out.stretch,
        Some(conv),
        Vec::new(),
    )
}
