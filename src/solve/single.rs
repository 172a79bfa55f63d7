//! Exact single-class MVA with delay stations, multi-server (load-dependent) stations and
//! multiplicity, with a numerically stable treatment of multi-server stations.
//!
//! Not here: several classes (see [`super::mva`]), approximate MVA (see [`super::approx`]).
//!
//! # Algorithm
//! MVA over the population `n = 1..N` (Reiser & Lavenberg 1980; Lazowska et al.,
//! *Quantitative System Performance* (QSP) §6.4 and ch. 20; Menascé, Almeida & Dowdy,
//! *Performance by Design*, ch. 14). Per copy of a station with per-copy demand `d`:
//! - delay: `R = d`;
//! - single server: `R(n) = d · (1 + Q(n−1))`;
//! - `c` servers: `R(n) = d/c · [1 + Q(n−1) + Σ_{j=0}^{c−2} (c−1−j) p(j | n−1)]`, with the
//!   marginal probabilities of the copy holding `j < c` jobs updated by
//!   `p(j | n) = X(n)·d/j · p(j−1 | n−1)` for `1 ≤ j < c`.
//!
//! The hard part is `p(0 | n)`. The textbook complement
//! `p(0|n) = 1 − [X·d + Σ_{j≥1} (c−j) p(j|n)] / c` loses all relative accuracy once `p(0|n)`
//! is tiny, and the recursion above then multiplies that error by up to `(X·d)^j / j!`
//! (≈ e^{X·d}); for `c` = 128 busy cores that is ~1e55. Given only the throughputs the
//! problem is ill-conditioned (recovering `p(0)` from `X` is a deconvolution), so stability
//! needs independent information. We use the product-form identity
//! `p_k(0 | n) = G_{−k}(n) / G(n)`, which in MVA terms is
//! `p_k(0 | n) = p_k(0 | n−1) · X(n) / X_{−k}(n)`, where `X_{−k}` is the throughput of the
//! *complement network* without (one copy of) station `k` (derived here from the
//! normalising-constant definitions `X(n) = G(n−1)/G(n)`; the brief pointed at Casale's
//! work on stable load-dependent MVA, which we could not consult). It is a product of
//! positive ratios: no cancellation, and relative errors of `X_{−k}` add up
//! (they are not amplified). `p(0)` is carried as a logarithm, so it may underflow
//! harmlessly.
//!
//! The complement of a network with `a_g` copies of multi-server group `g` is the same
//! network with `a_g − 1` copies, which needs its own complements: the networks form a
//! lattice `Π_g (a_g + 1)` that we walk bottom-up. Because that lattice explodes with
//! multiplicity, we use it only for the groups that need it:
//! - a multi-server group whose per-copy load `X·d` stays ≤ [`NAIVE_SAFE_LOAD`] keeps the
//!   textbook complement (checked after the run; the group is promoted if the load bound
//!   was exceeded);
//! - the others go into the complement lattice while its cost fits
//!   [`LATTICE_WORK_BUDGET`] (smallest multiplicity first);
//! - any remaining group is *approximated*: its per-copy marginal is computed from the
//!   network's own throughput instead of the complement's (`u(j) = X·d/α(j)·p(j−1|n−1)`,
//!   normalised by the positive sum, i.e. the marginal a copy would have if the group had
//!   one more copy). Stable, as cheap as MVA; the relative error of X measured against
//!   the exact lattice is ≈ 0.6/m (2% at m = 32; Seidmann's decomposition stays at 4-8%
//!   on the same networks). The solution is labelled
//!   [`Method::SelfComplementSingleClass`] with a note naming the stations.
//!
//! With path demands different from demands (forks) the recursion is the documented
//! fork heuristic of [`crate::qn`] (queues use the demand, response uses the path demand);
//! it is exact only when the two are equal.

use super::{ClassSolution, Method, Solution, StationClassSolution, StationSolution};
use crate::qn::{Network, StationKind};

/// Largest per-copy load `X·d` (busy servers) up to which the textbook complement for
/// `p(0)` is trusted. Measured: at load ≈ 8 it still agrees with the complement method to
/// 1e-13, at load ≈ 10 (c = 16) it is already off by 2e-8 (test
/// `naive_p0_error_grows_with_load`), so we keep a wide margin.
pub const NAIVE_SAFE_LOAD: f64 = 5.0;

/// Largest work (lattice networks × N × per-step cost) spent on the complement lattice;
/// ≈ 0.3 s in a release build.
pub const LATTICE_WORK_BUDGET: f64 = 3.0e8;

/// One station as the recursion sees it.
#[derive(Debug, Clone)]
struct St {
    origin: usize,
    kind: Kind,
    copies: u32,
    /// Per-copy demand and path demand, seconds.
    d: f64,
    dp: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Delay,
    Single,
    /// `c` servers and how `p(0 | n)` is obtained.
    Multi {
        c: usize,
        p0: P0,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum P0 {
    /// Textbook complement `1 − Σ…` (only at small per-copy load).
    Textbook,
    /// Complement lattice group `g`: exact from the complement network's throughput when
    /// the lattice has it; at the bottom of a depth-limited lattice, approximate (the
    /// network itself stands in for its complement, and the marginal is normalised by its
    /// all-positive sum).
    Lattice(usize),
}

/// A complement-lattice group: internal station, multiplicity and lattice depth (m: exact;
/// 0: approximate, the network stands in for its complement).
#[derive(Debug, Clone, Copy)]
struct Group {
    station: usize,
    m: u32,
    depth: u32,
}

/// What one MVA run returns.
struct Run {
    /// X(n) for n = 1..=N (index n−1).
    x: Vec<f64>,
    /// Per station at N: per-copy queue length and stretch factor (R = d · stretch).
    q: Vec<f64>,
    stretch: Vec<f64>,
    /// Per station: largest per-copy load X·d seen in textbook-p(0) mode.
    naive_load: Vec<f64>,
}

/// Solves a single-class network exactly. Panics if the network has more than one class
/// (callers go through [`super::solve`]).
pub fn solve_exact(net: &Network) -> Solution {
    solve_with(net, NAIVE_SAFE_LOAD, LATTICE_WORK_BUDGET)
}

/// [`solve_exact`] with the load up to which the textbook `p(0)` is trusted.
pub(crate) fn solve_with(net: &Network, safe_load: f64, budget: f64) -> Solution {
    assert_eq!(net.classes.len(), 1, "solve_exact takes one class");
    let n_pop = net.classes[0].population as usize;
    let z = net.classes[0].think_time_secs;

    // Per-copy demand; which multi-server stations are risky for the textbook p(0).
    let x_bound = throughput_bound(net);
    let mut risky: Vec<bool> = net
        .stations
        .iter()
        .map(|s| {
            let d = s.demands[0].secs / f64::from(s.multiplicity);
            is_multi(s) && d > 0.0 && (x_bound * d).min(f64::from(s.servers - 1)) > safe_load
        })
        .collect();
    loop {
        let (sts, lattice_groups, approximated) = plan(net, &risky, n_pop, budget);
        let runs = run_lattice(&sts, &lattice_groups, z, n_pop);
        // A station in textbook mode whose load exceeded the safe bound is promoted.
        let mut promoted = false;
        for (st, load) in sts.iter().zip(&runs.naive_load) {
            if *load > safe_load && !risky[st.origin] {
                risky[st.origin] = true;
                promoted = true;
            }
        }
        if !promoted {
            return assemble(net, &sts, &runs, &approximated);
        }
    }
}

fn is_multi(s: &crate::qn::Station) -> bool {
    s.kind == StationKind::Queue && s.servers > 1
}

/// Optimistic throughput bound min(N/(Z+D_path), min_k c_k·m_k/D_k).
fn throughput_bound(net: &Network) -> f64 {
    let c = &net.classes[0];
    let dp: f64 = net.stations.iter().map(|s| s.demands[0].path_secs).sum();
    let mut x = f64::from(c.population) / (c.think_time_secs + dp);
    for s in &net.stations {
        if s.kind == StationKind::Queue && s.demands[0].secs > 0.0 {
            x = x.min(f64::from(s.servers) * f64::from(s.multiplicity) / s.demands[0].secs);
        }
    }
    x
}

/// Internal stations, the lattice groups and the names of the stations whose lattice had
/// to be cut short (approximate).
fn plan(
    net: &Network,
    risky: &[bool],
    n_pop: usize,
    budget: f64,
) -> (Vec<St>, Vec<Group>, Vec<String>) {
    let step_cost: f64 = net
        .stations
        .iter()
        .map(|s| {
            if is_multi(s) {
                f64::from(s.servers)
            } else {
                1.0
            }
        })
        .sum::<f64>()
        + 1.0;
    // Exact lattice for the risky stations with the fewest copies while it fits the budget
    // (ties by index, for determinism); the rest stay at depth 0 (approximate). Depths
    // between 0 and m were measured not to help: the error of an approximate complement
    // passes through an exact step almost unchanged (error 2.05e-2 at depth 0, 2.03e-2 at
    // depth 2 for m = 32), as expected of an ill-conditioned deconvolution.
    let mut order: Vec<usize> = (0..net.stations.len()).filter(|&i| risky[i]).collect();
    order.sort_by_key(|&i| (net.stations[i].multiplicity, i));
    let mut exact = vec![false; net.stations.len()];
    let mut size = 1.0_f64;
    for &i in &order {
        let next = size * (f64::from(net.stations[i].multiplicity) + 1.0);
        if next * n_pop as f64 * step_cost <= budget {
            size = next;
            exact[i] = true;
        }
    }
    let mut sts = Vec::new();
    let mut groups = Vec::new();
    let mut approximated = Vec::new();
    for (i, s) in net.stations.iter().enumerate() {
        let m = f64::from(s.multiplicity);
        let d = s.demands[0].secs / m;
        let dp = s.demands[0].path_secs / m;
        let st = |kind, d, dp| St {
            origin: i,
            kind,
            copies: s.multiplicity,
            d,
            dp,
        };
        let c = s.servers as usize;
        match s.kind {
            StationKind::Delay => sts.push(st(Kind::Delay, d, dp)),
            StationKind::Queue if s.servers == 1 => sts.push(st(Kind::Single, d, dp)),
            StationKind::Queue if !risky[i] => {
                sts.push(st(
                    Kind::Multi {
                        c,
                        p0: P0::Textbook,
                    },
                    d,
                    dp,
                ));
            }
            StationKind::Queue => {
                let g = Group {
                    station: sts.len(),
                    m: s.multiplicity,
                    depth: if exact[i] { s.multiplicity } else { 0 },
                };
                if !exact[i] {
                    approximated.push(s.name.clone());
                }
                groups.push(g);
                let p0 = P0::Lattice(groups.len() - 1);
                sts.push(st(Kind::Multi { c, p0 }, d, dp));
            }
        }
    }
    (sts, groups, approximated)
}

/// Solves every network of the complement lattice bottom-up (mixed radix, first group
/// fastest, so `a − e_g` is always solved before `a`) and returns the full network's run.
fn run_lattice(sts: &[St], groups: &[Group], z: f64, n_pop: usize) -> Run {
    let radix: Vec<usize> = groups.iter().map(|g| g.depth as usize + 1).collect();
    let size: usize = radix.iter().product();
    let mut strides = vec![1usize; groups.len()];
    for g in 1..groups.len() {
        strides[g] = strides[g - 1] * radix[g - 1];
    }
    let mut xs: Vec<Vec<f64>> = Vec::with_capacity(size);
    let mut naive_load = vec![0.0; sts.len()];
    let mut copies: Vec<u32> = sts.iter().map(|s| s.copies).collect();
    for idx in 0..size {
        let run = {
            let mut comps: Vec<Option<&[f64]>> = vec![None; groups.len()];
            for (g, grp) in groups.iter().enumerate() {
                let digit = (idx / strides[g]) % radix[g];
                copies[grp.station] = grp.m - grp.depth + digit as u32;
                if digit > 0 {
                    comps[g] = Some(&xs[idx - strides[g]]);
                }
            }
            mva(sts, &copies, &comps, z, n_pop)
        };
        for (l, r) in naive_load.iter_mut().zip(&run.naive_load) {
            *l = f64::max(*l, *r);
        }
        if idx + 1 == size {
            return Run { naive_load, ..run };
        }
        xs.push(run.x);
    }
    unreachable!("the lattice has at least one network")
}

/// One exact MVA run of the network with `copies[i]` copies of internal station `i`;
/// `comps[g]` is the throughput curve of the complement of lattice group `g`.
fn mva(sts: &[St], copies: &[u32], comps: &[Option<&[f64]>], z: f64, n_pop: usize) -> Run {
    let k = sts.len();
    let mut q = vec![0.0; k];
    let mut stretch = vec![1.0; k];
    let mut naive_load = vec![0.0; k];
    let mut x_curve = Vec::with_capacity(n_pop);
    let total_path: f64 = sts
        .iter()
        .zip(copies)
        .map(|(s, &a)| f64::from(a) * s.dp)
        .sum();
    if z == 0.0 && total_path == 0.0 {
        // No work at all (a complement of a network with one station): every job is
        // served instantly, G(n) = 0 for n ≥ 1, so X = ∞ and p(0 | n ≥ 1) of the removed
        // station is 0.
        return Run {
            x: vec![f64::INFINITY; n_pop],
            q,
            stretch,
            naive_load,
        };
    }
    // Marginal probabilities p(j | n), j < c, and ln p(0 | n) per multi-server station.
    let mut p: Vec<Vec<f64>> = sts
        .iter()
        .map(|s| match s.kind {
            Kind::Multi { c, .. } => {
                let mut v = vec![0.0; c];
                v[0] = 1.0;
                v
            }
            _ => Vec::new(),
        })
        .collect();
    let mut ln_p0 = vec![0.0_f64; k];
    let mut tail = vec![0.0_f64; k];
    for n in 1..=n_pop {
        let mut r_path = 0.0;
        for i in 0..k {
            if copies[i] == 0 {
                continue;
            }
            stretch[i] = match sts[i].kind {
                Kind::Delay => 1.0,
                Kind::Single => 1.0 + q[i],
                Kind::Multi { c, .. } => {
                    let corr: f64 = p[i][..c - 1]
                        .iter()
                        .enumerate()
                        .map(|(j, pj)| (c - 1 - j) as f64 * pj)
                        .sum();
                    (1.0 + q[i] + corr) / c as f64
                }
            };
            r_path += f64::from(copies[i]) * sts[i].dp * stretch[i];
        }
        let x = n as f64 / (z + r_path);
        x_curve.push(x);
        for i in 0..k {
            if copies[i] == 0 {
                continue;
            }
            let s = &sts[i];
            q[i] = x * s.d * stretch[i];
            if let Kind::Multi { c, p0 } = s.kind {
                let xd = x * s.d;
                let pi = &mut p[i];
                let exact = match p0 {
                    P0::Lattice(g) => comps[g],
                    P0::Textbook => None,
                };
                let self_complement = matches!(p0, P0::Lattice(_)) && exact.is_none();
                if self_complement {
                    // Unnormalised marginal of a copy given the network's own throughput:
                    // u(0) = p(0|n−1), u(j) = X·d/j·p(j−1|n−1), tail = X·d/c·(p(c−1|n−1)
                    // + tail(n−1)); all positive, then normalised by the sum.
                    tail[i] = xd / c as f64 * (pi[c - 1] + tail[i]);
                }
                for j in (1..c).rev() {
                    pi[j] = xd / j as f64 * pi[j - 1];
                }
                match p0 {
                    P0::Lattice(_) => match exact {
                        Some(xc) => {
                            let xc = xc[n - 1];
                            ln_p0[i] = if xc.is_infinite() {
                                f64::NEG_INFINITY
                            } else {
                                ln_p0[i] + x.ln() - xc.ln()
                            };
                            pi[0] = ln_p0[i].exp();
                        }
                        None => {
                            let total = pi.iter().sum::<f64>() + tail[i];
                            pi.iter_mut().for_each(|v| *v /= total);
                            tail[i] /= total;
                        }
                    },
                    P0::Textbook => {
                        naive_load[i] = f64::max(naive_load[i], xd);
                        let cf = c as f64;
                        let busy: f64 = (1..c).map(|j| (cf - j as f64) * pi[j]).sum();
                        pi[0] = (1.0 - (xd + busy) / cf).clamp(0.0, 1.0);
                    }
                }
            }
        }
    }
    Run {
        x: x_curve,
        q,
        stretch,
        naive_load,
    }
}

fn assemble(net: &Network, sts: &[St], run: &Run, approximated: &[String]) -> Solution {
    let class = &net.classes[0];
    let x = run.x.last().copied().unwrap_or(0.0);
    let mut stations: Vec<StationSolution> = net
        .stations
        .iter()
        .map(|s| StationSolution {
            name: s.name.clone(),
            utilization: 0.0,
            queue_length: 0.0,
            queue_length_total: 0.0,
            per_class: vec![StationClassSolution {
                residence_secs: 0.0,
                path_residence_secs: 0.0,
                queue_length: 0.0,
                utilization: 0.0,
            }],
        })
        .collect();
    for (i, st) in sts.iter().enumerate() {
        let out = &mut stations[st.origin];
        let m = f64::from(st.copies);
        let stretch = if class.population == 0 {
            1.0
        } else {
            run.stretch[i]
        };
        out.queue_length += run.q[i];
        out.queue_length_total += run.q[i] * m;
        let pc = &mut out.per_class[0];
        pc.residence_secs += m * st.d * stretch;
        pc.path_residence_secs += m * st.dp * stretch;
        pc.queue_length += run.q[i] * m;
    }
    for (out, s) in stations.iter_mut().zip(&net.stations) {
        if s.kind == StationKind::Queue {
            let u = x * s.demands[0].secs / (f64::from(s.multiplicity) * f64::from(s.servers));
            out.utilization = u;
            out.per_class[0].utilization = u;
        }
    }
    let r: f64 = stations
        .iter()
        .map(|s| s.per_class[0].path_residence_secs)
        .sum();
    let (method, notes) = if approximated.is_empty() {
        (Method::ExactSingleClass, Vec::new())
    } else {
        (
            Method::SelfComplementSingleClass,
            vec![format!(
                "multi-server stations {} are too large for the exact complement lattice; \
                 their per-copy marginal probabilities use the network itself in place of \
                 the network with one copy fewer (relative error of X measured ≈ 0.6/m)",
                approximated.join(", ")
            )],
        )
    };
    Solution {
        method,
        classes: vec![ClassSolution {
            name: class.name.clone(),
            population: class.population,
            throughput_per_sec: x,
            response_time_secs: if class.population == 0 { 0.0 } else { r },
        }],
        stations,
        convergence: None,
        notes,
    }
}
