//! Approximate multi-class MVA for populations too large for the exact lattice:
//! Bard-Schweitzer (Schweitzer 1979; Lazowska et al., *Quantitative System Performance*,
//! §7.4.3) and Linearizer (Chandy & Neuse, CACM 25(2), 1982).
//!
//! Both are fixed points iterated until the largest relative change of a queue length is
//! below `SolveOptions::tolerance` or `max_iterations` is reached; how it ended is returned
//! as [`Convergence`] data, never as an error. Multi-server stations use Seidmann's
//! decomposition (see `super::Flat`); multiplicity is per copy (demand D/m each).
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
    speed: Vec<Vec<f64>>,
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
        let mut speed = vec![vec![1.0; nc]; k];
        let mut iterations = 0;
        let mut change = f64::INFINITY;
        // Jobs an arriving class-r job finds at part i (Schweitzer's estimate, with
        // Linearizer's deviations).
        let seen = |q: &Queues, i: usize, r: usize| -> f64 {
            (0..nc)
                .filter(|&c| n[c] > 0.0)
                .map(|c| {
                    let nr = n[c] - if c == r { 1.0 } else { 0.0 };
                    let dev = delta.map_or(0.0, |d| d[i][c][r]);
                    (nr * (q[i][c] / n[c] + dev)).max(0.0)
                })
                .sum()
        };
        while iterations < opts.max_iterations {
            iterations += 1;
            if !self.flat.batches.is_empty() {
                speed = self.flat.speeds(nc, |i, r| seen(q, i, r));
            }
            for r in 0..nc {
                if n[r] <= 0.0 {
                    x[r] = 0.0;
                    continue;
                }
                let mut r_path = 0.0;
                for (i, s) in self.flat.stations.iter().enumerate() {
                    let queue = if s.delay { 1.0 } else { 1.0 + seen(q, i, r) };
                    stretch[i][r] = queue * speed[i][r];
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
            speed,
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
/// `schweitzer_single`); several classes by the fixed-point iteration.
pub fn schweitzer(net: &Network, opts: &SolveOptions) -> Solution {
    let (flat, z, n) = setup(net);
    if n.len() == 1 {
        let (x, stretch, speed, conv) = schweitzer_single(&flat, z[0], n[0], opts);
        return flat.assemble(
            net,
            Method::Schweitzer,
            &[x],
            &stretch,
            &speed,
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
        &out.speed,
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
///
/// Batching (see `qn`): the parts of a batching station run at the demand factor `f(t)`
/// of the queue an arrival finds, `t = 1 + a·q_i` of its queue part, `q_i = X·d_i·f/(1 −
/// a·X·d_i·f)` (a Seidmann delay part, the jobs in service elsewhere, runs at `f` but is
/// not in the batch). For a given `X`, `t − 1 − a·q_i(f(t))`
/// is increasing in `t` (`f` falls with `t`), so its root is found by Newton's method in
/// a bisection bracket ([`batch_factor`]); `X_max` uses the smallest factor, and `g`'s
/// derivative is taken by a forward difference.
fn schweitzer_single(
    flat: &Flat,
    z: f64,
    n: f64,
    opts: &SolveOptions,
) -> (f64, Vec<Vec<f64>>, Vec<Vec<f64>>, Convergence) {
    let a = if n > 0.0 { (n - 1.0) / n } else { 0.0 };
    let parts = &flat.stations;
    // Demand factor per part at throughput x (None: x beyond a batching station's
    // capacity).
    let speeds_at = |x: f64| -> Option<Vec<f64>> {
        let mut f = vec![1.0; parts.len()];
        for (b, members) in &flat.batches {
            let (fb, _) = batch_factor(b, members, parts, a, x, 1.0)?;
            members.iter().for_each(|&i| f[i] = fb);
        }
        Some(f)
    };
    // A part's stretch at throughput x and demand factor f.
    let stretch = |s: &super::FlatStation, x: f64, f: f64| -> f64 {
        if s.delay {
            f
        } else {
            f / (1.0 - a * x * s.d[0] * f)
        }
    };
    let stretch_at = |x: f64, f: &[f64]| -> Vec<f64> {
        parts
            .iter()
            .zip(f)
            .map(|(s, &f)| stretch(s, x, f))
            .collect()
    };
    // Throughput without queueing: the scale of the forward difference's step.
    let x_scale = n / (z + parts.iter().map(|s| s.copies * s.dp[0]).sum::<f64>()).max(1e-300);
    // The batch each part belongs to (the last that lists it, as `speeds_at` applies
    // them), and a buffer for the batches' factors: the Newton loop evaluates `g` twice a
    // step without allocating.
    let batch_of: Vec<Option<usize>> = (0..parts.len())
        .map(|i| flat.batches.iter().rposition(|(_, m)| m.contains(&i)))
        .collect();
    let mut factors = vec![1.0; flat.batches.len()];
    // Each batch's last root `t`, where the next search starts: the Newton loop's steps,
    // and its forward difference, move `x` little.
    let mut roots = vec![1.0; flat.batches.len()];
    // g and its derivative.
    let mut eval = |x: f64| -> (f64, f64) {
        if flat.batches.is_empty() {
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
            return (x * r - n, r + x * dr);
        }
        let mut g = |x: f64| -> f64 {
            for (k, (b, members)) in flat.batches.iter().enumerate() {
                match batch_factor(b, members, parts, a, x, roots[k]) {
                    Some((f, t)) => (factors[k], roots[k]) = (f, t),
                    None => return f64::INFINITY,
                }
            }
            let r: f64 = parts
                .iter()
                .zip(&batch_of)
                .map(|(s, k)| s.copies * s.dp[0] * stretch(s, x, k.map_or(1.0, |k| factors[k])))
                .sum();
            x * (z + r) - n
        };
        let gx = g(x);
        let h = 1e-7 * (x + x_scale);
        (gx, (g(x + h) - gx) / h)
    };
    let d_max = parts
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.delay)
        .map(|(i, s)| {
            let f = flat
                .batches
                .iter()
                .find(|(_, m)| m.contains(&i))
                .map_or(1.0, |(b, _)| b.min_demand_factor());
            s.d[0] * f
        })
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
    let f = speeds_at(x).unwrap_or_else(|| vec![1.0; parts.len()]);
    let stretch = stretch_at(x, &f).into_iter().map(|s| vec![s]).collect();
    let speed = f.into_iter().map(|s| vec![s]).collect();
    let conv = Convergence {
        converged: change <= opts.tolerance,
        iterations,
        max_relative_change: change,
        tolerance: opts.tolerance,
    };
    (x, stretch, speed, conv)
}

/// Demand factor of one batching station at single-class throughput `x` under
/// Schweitzer's estimate (see [`schweitzer_single`]): the root `t` of
/// `h(t) = t − 1 − a·Σ_queue parts q_i(f(t))`, `f = b.demand_factor`, with the root: the
/// search starts from `guess` when it lies inside the bracket (`h` is increasing, so the
/// root is unique and the guess only saves steps). `None` when `x` exceeds the station's
/// capacity even at the largest batch.
fn batch_factor(
    b: &crate::qn::Batching,
    members: &[usize],
    parts: &[super::FlatStation],
    a: f64,
    x: f64,
    guess: f64,
) -> Option<(f64, f64)> {
    // Σ q_i of the queue parts at factor f, and its derivative in f; None where a queue
    // part would overflow.
    let queues = |f: f64| -> Option<(f64, f64)> {
        let (mut q, mut dq) = (0.0, 0.0);
        for &i in members.iter().filter(|&&i| !parts[i].delay) {
            let load = x * parts[i].d[0];
            let u = 1.0 - a * load * f;
            if u <= 0.0 {
                return None;
            }
            q += load * f / u;
            dq += load / (u * u);
        }
        Some((q, dq))
    };
    let (q_max, _) = queues(b.min_demand_factor())?;
    // h(lo) ≤ 0 (or undefined: the factor there overflows a queue). From t = g·B on the
    // batch is B and the factor smallest, so h(t) = t − 1 − a·q_max there: h(hi) ≥ 1.
    let (mut lo, mut hi) = (1.0_f64, b.saturating_jobs().max(1.0 + a * q_max) + 1.0);
    let mut t = if guess > lo && guess < hi { guess } else { lo };
    for _ in 0..200 {
        let f = b.demand_factor(t);
        let step = match queues(f) {
            None => {
                lo = t;
                None
            }
            Some((q, dq)) => {
                let h = t - 1.0 - a * q;
                if h < 0.0 {
                    lo = t;
                } else {
                    hi = t;
                }
                if h.abs() <= 1e-13 * t {
                    return Some((f, t));
                }
                let dh = 1.0 - a * dq * b.demand_factor_slope(t);
                Some(t - h / dh)
            }
        };
        t = match step {
            Some(next) if next > lo && next < hi => next,
            _ => 0.5 * (lo + hi),
        };
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    Some((b.demand_factor(t), t))
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
        &out.speed,
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

    #[test]
    fn a_batch_root_does_not_depend_on_where_its_search_starts() {
        // `h(t) = t − 1 − a·q(f(t))` is increasing, so its root is unique: a search started
        // from 1 (the bracket's left end), from inside, from beyond the root and from
        // outside the bracket must all find it (the Newton loop passes the previous root).
        let network = crate::solve::tests::batching_net(64, 2, 0.6);
        let (flat, _, pop) = setup(&network);
        let a = (pop[0] - 1.0) / pop[0];
        let (b, members) = &flat.batches[0];
        let mut formed = 0;
        for x in [10.0, 100.0, 300.0, 450.0, 700.0] {
            let (f1, t1) = batch_factor(b, members, &flat.stations, a, x, 1.0).unwrap();
            formed += usize::from(f1 < 0.9);
            for guess in [1.5, 0.5 * t1, 2.0 * t1, 1e6, -3.0, f64::NAN] {
                let (f, t) = batch_factor(b, members, &flat.stations, a, x, guess).unwrap();
                assert!(
                    (t - t1).abs() <= 1e-11 * t1 && (f - f1).abs() <= 1e-11,
                    "x={x}, guess {guess}: root {t} (factor {f}) against {t1} ({f1})"
                );
            }
        }
        assert!(formed >= 2, "the loads must reach batches that save work");
    }
}
