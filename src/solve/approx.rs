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

/// Bard-Schweitzer approximate MVA. A single class is solved as a scalar root (see
/// [`schweitzer_single`]); several classes by the fixed-point iteration.
pub fn schweitzer(net: &Network, opts: &SolveOptions) -> Solution {
    let (flat, z, n) = setup(net);
    if n.len() == 1 {
        let (x, stretch, conv) = schweitzer_single(&flat, z[0], n[0], opts);
        return flat.assemble(
            net,
            Method::Schweitzer,
            &[x],
            &stretch,
            Some(conv),
            Vec::new(),
        );
    }
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

/// The single-class Bard-Schweitzer fixed point solved directly for the throughput.
///
/// With one class of population `N`, `a = (N−1)/N`, per-copy demand `d_i` and path demand
/// `p_i` at part `i` with `m_i` copies, the fixed point `q_i = X·d_i·(1 + a·q_i)` gives
/// `stretch_i = 1/(1 − a·X·d_i)` at a queue (1 at a delay), and the throughput solves
/// `g(X) = X·(Z + Σ m_i·p_i·stretch_i(X)) − N = 0`. `g` is increasing and convex on
/// `[0, X_max)`, `X_max = 1/(a·max d_i)`, so Newton's method from the left, kept inside
/// a bisection bracket, converges monotonically. This is the same fixed point the
/// iteration in [`Core::run`] approaches, reached in tens of steps instead of up to
/// `max_iterations` near saturation (where the plain iteration crawls).
fn schweitzer_single(
    flat: &Flat,
    z: f64,
    n: f64,
    opts: &SolveOptions,
) -> (f64, Vec<Vec<f64>>, Convergence) {
    let a = if n > 0.0 { (n - 1.0) / n } else { 0.0 };
    let parts = &flat.stations;
    let stretch_at = |x: f64| -> Vec<f64> {
        parts
            .iter()
            .map(|s| {
                if s.delay {
                    1.0
                } else {
                    1.0 / (1.0 - a * x * s.d[0])
                }
            })
            .collect()
    };
    // g and its derivative.
    let eval = |x: f64| -> (f64, f64) {
        let mut r = z;
        let mut dr = 0.0;
        for s in parts {
            let w = s.copies * s.dp[0];
            if s.delay {
                r += w;
            } else {
                let u = 1.0 - a * x * s.d[0];
                r += w / u;
                dr += w * a * s.d[0] / (u * u);
            }
        }
        (x * r - n, r + x * dr)
    };
    let d_max = parts
        .iter()
        .filter(|s| !s.delay)
        .map(|s| s.d[0])
        .fold(0.0, f64::max);
    let mut hi = if a * d_max > 0.0 {
        1.0 / (a * d_max)
    } else {
        f64::INFINITY
    };
    let mut lo = 0.0_f64;
    let mut x = 0.0_f64;
    let mut iterations = 0;
    let mut change = f64::INFINITY;
    if n <= 0.0 {
        change = 0.0;
    }
    while change > opts.tolerance && iterations < opts.max_iterations {
        iterations += 1;
        let (g, dg) = eval(x);
        if g > 0.0 {
            hi = hi.min(x);
        } else {
            lo = lo.max(x);
        }
        let mut next = x - g / dg;
        if !(next.is_finite() && next > lo && next < hi) {
            next = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * lo.max(1e-300)
            };
        }
        change = if next > 0.0 {
            (next - x).abs() / next
        } else {
            0.0
        };
        x = next;
        if hi.is_finite() && (hi - lo) <= opts.tolerance * hi {
            change = change.min((hi - lo) / hi);
        }
    }
    let stretch = stretch_at(x).into_iter().map(|s| vec![s]).collect();
    let conv = Convergence {
        converged: change <= opts.tolerance,
        iterations,
        max_relative_change: change,
        tolerance: opts.tolerance,
    };
    (x, stretch, conv)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qn::StationKind;
    use crate::solve::tests::{check_invariants, class, station};

    /// A single-class network with a multi-server station (Seidmann parts), copies, a
    /// delay and a think time, at a population that drives it into saturation.
    fn net(n: u32) -> Network {
        Network {
            stations: vec![
                station("cpu", StationKind::Queue, 8, 3, &[0.004]),
                station("disk", StationKind::Queue, 1, 12, &[0.010]),
                station("nic", StationKind::Queue, 1, 3, &[0.0005]),
                station("lat", StationKind::Delay, 1, 1, &[0.002]),
            ],
            classes: vec![class("io", n, 0.001)],
        }
    }

    #[test]
    fn single_class_root_equals_the_fixed_point_iteration() {
        // Oracle: the plain Bard-Schweitzer iteration (Core::run) run to 1e-13, which the
        // scalar root must reproduce, from light load (N=1: exact, no queueing) to deep
        // saturation (disk bound 12/0.010 = 1200/s).
        let opts = SolveOptions {
            tolerance: 1e-13,
            max_iterations: 10_000_000,
            ..SolveOptions::default()
        };
        for n in [1, 2, 5, 20, 100, 1000, 20_000] {
            let network = net(n);
            let (flat, z, pop) = setup(&network);
            let mut q = initial_queues(&flat, &pop);
            let it = Core { flat: &flat, z }.run(&pop, &mut q, None, &opts);
            assert!(it.converged, "iteration N={n}: {}", it.change);
            let sol = schweitzer(&network, &opts);
            let conv = sol.convergence.as_ref().unwrap();
            assert!(conv.converged && conv.iterations < 200, "N={n}: {conv:?}");
            let x = sol.classes[0].throughput_per_sec;
            assert!(
                (x - it.x[0]).abs() / it.x[0] < 1e-9,
                "N={n}: root {x} vs iteration {}",
                it.x[0]
            );
            check_invariants(&network, &sol, 1e-9);
        }
        // N=1 has no queueing: X = 1 / (Z + Σ demands).
        let x1 = schweitzer(&net(1), &opts).classes[0].throughput_per_sec;
        assert!((x1 - 1.0 / (0.001 + 0.004 + 0.010 + 0.0005 + 0.002)).abs() < 1e-9);
    }
}
