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
//! That update is O(c) per copy per step and was most of the cost of a sweep. The
//! marginal is kept on a window of `j` whose values, and everything they become, stay
//! above 1e-18 ([`WINDOW_CUTOFF`]; the bounds and the checks that back them are in the doc
//! of `Marginal`). It is not O(√load): the mass below the mode is the seed of the later
//! mode (`p(0|n)` becomes `p(k|n+k)`), so only the part above the mode goes while the load
//! grows, and the part below only once the station is saturated. Work left (counted with
//! a temporary counter on the networks of
//! `windowed_marginals_agree_with_the_full_recursion`): 74 % on the sweep benchmark's
//! network (OSD CPU at 99.8 % at N = 2,048), 43 % on the shipped seed-000 example
//! (N = 3,072; measured while its forked OSD CPU still used the recursion, see below),
//! 5-10 % on lightly loaded c = 128-256; the results agree with the full recursion to
//! ≤ 1.5e-13.
//!
//! Cost of a step besides that update: straight-line arithmetic over all stations (no
//! per-kind branches) and `p(0)` as a product rather than ln/exp. Measured on
//! `cephplan sweep --vary iodepth=1,...,64` (callgrind, whole process): 138 M → 59 M
//! instructions on the benchmark's `tests/fixtures/seed-000.toml`, 298 M → 94 M on
//! `models/examples/seed-000-ampere-altra-max.toml` (before its forked OSD CPU moved to
//! Seidmann's decomposition); `cargo bench --bench predict`
//! (`seed000_iodepth_1_to_64`, shared 2-core machine): 12.0 ms → 5.2-6.0 ms (10,700-12,400
//! predictions/s) at load average 1.5, 16.2 ms → 6.1 ms at load average 5.
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
//! (they are not amplified). `p(0)` is carried as a product while it is above 1e-150 and as
//! a logarithm below (where the product could underflow), so it may underflow
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
//! - any remaining group (typically hundreds of OSDs) is *approximated*: the throughput of
//!   the network with one copy fewer, `X'(n)`, is estimated by flow equivalence,
//!   `X'(n) ≈ X(n + Q_copy(n))` (the rest of the network at population n behaves like the
//!   whole network holding n plus the jobs one copy holds), iterated to a fixed point from
//!   `X' = X` ([`REFINE_TOLERANCE`], at most [`MAX_REFINE_PASSES`] passes, each one MVA run
//!   over N + N/m populations); the per-copy marginal is then
//!   `u(j) = X'·d/α(j)·p(j−1|n−1)` normalised by its all-positive sum (exact when `X'` is
//!   exact). Stable. Measured relative error of X against the exact lattice ≈ 0.5/m²
//!   (7e-3 at m = 8, 5.6e-4 at m = 32; test `self_complement_error_shrinks_with_multiplicity`)
//!   and 1.4e-8 on the 63-node / 630-OSD network against the convolution oracle (test
//!   `ceph_63_nodes_against_convolution`). Without the iteration (`X' = X`) the error is
//!   ≈ 0.6/m; Seidmann's decomposition gave 4-8% on the same networks. Intermediate
//!   lattice depths do not help (an approximate complement's error passes an exact step
//!   almost unchanged: 2.05e-2 at depth 0, 2.03e-2 at depth 2, m = 32). The solution is
//!   labelled [`Method::SelfComplementSingleClass`] with a note naming the stations.
//!
//! With path demands different from demands (forks) the recursion is the documented
//! fork heuristic of [`crate::qn`] (queues use the demand, response uses the path demand);
//! it is exact only when the two are equal. A *multi-server* station with forked work (or
//! work partly off the path, as the OSD CPU's `osd_cpu_path_share` makes it) is
//! solved by Seidmann's decomposition (single server `d/c` + delay `d(c−1)/c`), as in the
//! approximate solvers, and named in the solution's notes: the multi-server recursion's
//! `p(0)` (complement ratio or textbook) rests on product-form identities that forks break.
//! Measured on a 64-server, 3-copy station at 39 % load, where no job can wait (test
//! `forked_multi_server_at_low_load_does_not_queue`), the recursion gave R = 5.00 ms
//! against the no-wait 4 ms, Seidmann 4.02 ms. Against the simulator's real fork-join
//! (seed-000 write, 3 × 128-core nodes, iodepth 4 / 8 / 16 / 32): recursion −7.8 / −7.7 /
//! −5.3 / 0.0 % in IOPS, Seidmann +8.8 / +8.7 / +1.8 / +0.1 %. Below the knee Seidmann is
//! high by about the fork-join synchronisation that the path demand leaves out (the
//! client waits for the slower of two replicas, ≈ 1.5 × one for exponential service);
//! at and past the knee it agrees with the simulation.
//!
//! A *batching* station ([`crate::qn::Batching`]) is a single server, or a multi-server
//! station in Seidmann's decomposition, whose parts run at the demand factor of the queue
//! an arrival finds, `f(1 + Q(n−1))` of the single-server part (the mean-value rule of
//! `qn`): one multiplication per part and step, so a population sweep stays one pass. The
//! rule is not exact (measured against the exact load-dependent solution in
//! `tests::batching_mean_value_rule_against_exact_load_dependence`), and the solution says
//! so in its notes. One guard keeps it physical: a batching station's path residence
//! (its parts' path-weighted stretch) never falls from one population to the next; where
//! the factor the queue would give makes it fall, the factor is raised until it does not.
//! Without the guard, Seidmann's delay part, which runs at the speed of the single-server
//! part's queue while its own residence does not grow, let the response time fall with
//! more load (six of 10,000 generated Ceph scenarios, by up to 6.6 %,
//! `tests/physical_sanity.rs`; `tests::batching_never_lowers_the_mean_response_time_as_the_population_grows`
//! fails without it). It changes the rule's error against the exact solution at one point
//! of that test (4 servers, N = 13: −1.2 → −2.8 %) and the leave-one-system-out figures not
//! at two decimals. The multi-class recursion (`mva`) applies the same guard per class on
//! its lattice; the approximate solvers, which solve for `X` rather than step through the
//! populations, do not.

use super::{
    batching_note, ClassSolution, Method, Solution, StationClassSolution, StationSolution,
};
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
    /// The batching of the station this part belongs to, with the index of its group in
    /// [`Planned::batched`].
    batch: Option<(usize, crate::qn::Batching)>,
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

/// Where a lattice group's complement throughput comes from in one run.
#[derive(Debug, Clone, Copy)]
enum Comp<'a> {
    /// The exact complement network's curve X_{−k}(n), n = 1..: ratio update of p(0).
    Exact(&'a [f64]),
    /// An estimate of it: the marginal is normalised by its all-positive sum.
    Estimate(&'a [f64]),
    /// No complement: the network's own X stands in (normalised by the sum).
    Own,
}

/// The state of a run at one requested population.
#[derive(Debug, Clone)]
struct Snap {
    population: usize,
    x: f64,
    /// Per station: per-copy queue length and stretch factor (R = d · stretch).
    q: Vec<f64>,
    stretch: Vec<f64>,
    /// Per station: demand factor of batching at this population (1 without).
    speed: Vec<f64>,
}

/// What one MVA run returns.
struct Run {
    /// X(n) for n = 1..=N (index n−1).
    x: Vec<f64>,
    /// The requested populations, in increasing order.
    snaps: Vec<Snap>,
    /// Per station: largest per-copy load X·d seen in textbook-p(0) mode.
    naive_load: Vec<f64>,
    /// Per station: per-copy queue length Q(n), n = 1..=N (only for stations whose
    /// complement was not exact; empty otherwise).
    q_curve: Vec<Vec<f64>>,
}

/// Solves a single-class network exactly. Panics if the network has more than one class
/// (callers go through [`super::solve`]).
pub fn solve_exact(net: &Network) -> Solution {
    solve_with(net, NAIVE_SAFE_LOAD, LATTICE_WORK_BUDGET, REFINE_TOLERANCE)
}

/// Solves a single-class network exactly at several populations in one MVA pass (MVA
/// computes every population 1..N on its way to N, so a population sweep costs one solve
/// at its largest value). The class's own population is ignored; the solutions come back
/// in the order of `populations`, each as [`solve_exact`] would return it at that
/// population (the stable-`p(0)` plan is chosen for the largest one). Panics if the network
/// has more than one class.
pub fn solve_curve(net: &Network, populations: &[u32]) -> Vec<Solution> {
    solve_curve_with(net, populations, Window::On)
}

/// [`solve_curve`] with or without the windowed marginals.
pub(crate) fn solve_curve_with(
    net: &Network,
    populations: &[u32],
    window: Window,
) -> Vec<Solution> {
    let mut want: Vec<usize> = populations.iter().map(|&n| n as usize).collect();
    want.sort_unstable();
    want.dedup();
    let mut top = net.clone();
    top.classes[0].population = want.last().copied().unwrap_or(0) as u32;
    let sols = solve_many(
        &top,
        &want,
        NAIVE_SAFE_LOAD,
        LATTICE_WORK_BUDGET,
        REFINE_TOLERANCE,
        window,
    );
    populations
        .iter()
        .map(|&n| {
            let i = want.binary_search(&(n as usize)).expect("requested");
            sols[i].clone()
        })
        .collect()
}

/// [`solve_exact`] with the load up to which the textbook `p(0)` is trusted.
pub(crate) fn solve_with(net: &Network, safe_load: f64, budget: f64, refine_tol: f64) -> Solution {
    let n = net.classes[0].population as usize;
    solve_many(net, &[n], safe_load, budget, refine_tol, Window::On)
        .pop()
        .expect("one population requested")
}

/// Solves at every population in `want` (sorted, unique, largest = the class population).
fn solve_many(
    net: &Network,
    want: &[usize],
    safe_load: f64,
    budget: f64,
    refine_tol: f64,
    window: Window,
) -> Vec<Solution> {
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
            is_multi(s)
                && !is_seidmann_multi(s)
                && d > 0.0
                && (x_bound * d).min(f64::from(s.servers - 1)) > safe_load
        })
        .collect();
    loop {
        let planned = plan(net, &risky, n_pop, budget);
        let sts = &planned.sts;
        let (runs, refined) = refine(sts, &planned.groups, z, n_pop, want, refine_tol, window);
        // A station in textbook mode whose load exceeded the safe bound is promoted.
        let mut promoted = false;
        for (st, load) in sts.iter().zip(&runs.naive_load) {
            if *load > safe_load && !risky[st.origin] {
                risky[st.origin] = true;
                promoted = true;
            }
        }
        if !promoted {
            return runs
                .snaps
                .iter()
                .map(|snap| assemble(net, &planned, snap, refined))
                .collect();
        }
    }
}

/// Lattice walks a solve with approximated groups typically makes: measured 5 refinement
/// passes at [`REFINE_TOLERANCE`] on the 630-OSD network, plus the final run. Without this
/// share the 63-node Ceph fixture walked a 33-network client-CPU lattice six times (9 s).
pub const EXPECTED_LATTICE_WALKS: f64 = 6.0;

/// Largest number of passes re-estimating the complement of approximated groups.
pub const MAX_REFINE_PASSES: u32 = 30;

/// Passes stop once the estimated complement curves change by less than this (relative).
/// On the 630-OSD network 1e-4 (5 passes) gives X within 1.42e-8 of the convolution
/// oracle, 1e-9 (23 passes) within 1.39e-8; on `m = 32` groups 5.6e-4 vs 5.2e-4.
pub const REFINE_TOLERANCE: f64 = 1e-4;

/// Solves the lattice; for approximated groups, iterates the flow-equivalence estimate of
/// the complement throughput `X'(n) ≈ X(n + Q_copy(n))` (the rest of the network at
/// population n behaves like the whole network at n plus the jobs a copy holds) to a fixed
/// point. Returns the run and (passes, last relative change) when groups were approximated.
fn refine(
    sts: &[St],
    groups: &[Group],
    z: f64,
    n_pop: usize,
    want: &[usize],
    tol: f64,
    window: Window,
) -> (Run, Option<(u32, f64)>) {
    let none: Vec<Option<Vec<f64>>> = vec![None; groups.len()];
    let approx: Vec<usize> = (0..groups.len())
        .filter(|&g| groups[g].depth < groups[g].m)
        .collect();
    if approx.is_empty() || n_pop == 0 {
        return (
            run_lattice(sts, groups, &none, z, n_pop, want, window),
            None,
        );
    }
    // Populations beyond N are needed because X'(n) looks at X(n + Q_copy(n)).
    let m_min = approx
        .iter()
        .map(|&g| groups[g].m as usize)
        .min()
        .unwrap_or(1);
    let n_ext = n_pop + n_pop / m_min + 2;
    let mut est = none;
    let mut passes = 0;
    let mut change = f64::INFINITY;
    while passes < MAX_REFINE_PASSES && change > tol {
        passes += 1;
        let run = run_lattice(sts, groups, &est, z, n_ext, &[], window);
        change = 0.0;
        for &g in &approx {
            let qc = &run.q_curve[groups[g].station];
            let xs = &run.x;
            let new: Vec<f64> = (1..=n_ext)
                .map(|n| {
                    let t = n as f64 + qc[n - 1];
                    let lo = t.floor() as usize;
                    if lo >= n_ext {
                        xs[n_ext - 1]
                    } else {
                        let w = t - lo as f64;
                        xs[lo - 1] * (1.0 - w) + xs[lo] * w
                    }
                })
                .collect();
            if let Some(old) = &est[g] {
                for (a, b) in new.iter().zip(old) {
                    change = f64::max(change, (a - b).abs() / a.abs().max(f64::MIN_POSITIVE));
                }
            } else {
                change = f64::INFINITY;
            }
            est[g] = Some(new);
        }
    }
    (
        run_lattice(sts, groups, &est, z, n_pop, want, window),
        Some((passes, change)),
    )
}

fn is_multi(s: &crate::qn::Station) -> bool {
    s.kind == StationKind::Queue && s.servers > 1
}

/// A multi-server station solved by Seidmann's decomposition, not by the multi-server
/// recursion (see the module doc): its class forks at it (path demand below demand), it
/// batches (a load-dependent speed the recursion does not have), or its server count is
/// fractional (the recursion's marginals are indexed by whole servers).
fn is_seidmann_multi(s: &crate::qn::Station) -> bool {
    is_multi(s)
        && (s.demands[0].path_secs < s.demands[0].secs
            || s.batching.is_some()
            || s.fractional_servers.is_some())
}

/// Optimistic throughput bound min(N/(Z+D_path), min_k capacity_k) (batching at its
/// largest batch).
fn throughput_bound(net: &Network) -> f64 {
    let c = &net.classes[0];
    let dp: f64 = net.stations.iter().map(|s| s.demands[0].path_secs).sum();
    let x = f64::from(c.population) / (c.think_time_secs + dp);
    net.stations
        .iter()
        .map(|s| s.capacity_per_sec(0))
        .fold(x, f64::min)
}

/// The recursion's view of a network.
struct Planned {
    sts: Vec<St>,
    groups: Vec<Group>,
    /// Stations whose lattice had to be cut short (approximate complement).
    approximated: Vec<String>,
    /// Forked multi-server stations solved by Seidmann's decomposition.
    seidmann: Vec<String>,
    /// Stations with a fractional server count (Seidmann's decomposition with real `c`).
    fractional: Vec<String>,
    /// Batching stations (solved with the mean-value rule of `qn`).
    batched: Vec<String>,
}

/// Internal stations, the lattice groups and the stations solved approximately.
fn plan(net: &Network, risky: &[bool], n_pop: usize, budget: f64) -> Planned {
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
    let greedy = |budget: f64| -> Vec<bool> {
        let mut exact = vec![false; net.stations.len()];
        let mut size = 1.0_f64;
        for &i in &order {
            let next = size * (f64::from(net.stations[i].multiplicity) + 1.0);
            if next * n_pop as f64 * step_cost <= budget {
                size = next;
                exact[i] = true;
            }
        }
        exact
    };
    let mut exact = greedy(budget);
    // With an approximated group the whole lattice is walked once per refinement pass
    // (over N + N/m populations), so the budget is shared by the expected passes.
    if order.iter().any(|&i| !exact[i]) {
        exact = greedy(budget / EXPECTED_LATTICE_WALKS);
    }
    let mut sts = Vec::new();
    let mut groups = Vec::new();
    let mut approximated = Vec::new();
    let mut seidmann = Vec::new();
    let mut fractional = Vec::new();
    let mut batched: Vec<String> = Vec::new();
    for (i, s) in net.stations.iter().enumerate() {
        let m = f64::from(s.multiplicity);
        let d = s.demands[0].secs / m;
        let dp = s.demands[0].path_secs / m;
        let batch = s.batching.map(|b| (batched.len(), b));
        let st = |kind, d, dp| St {
            origin: i,
            kind,
            copies: s.multiplicity,
            d,
            dp,
            batch,
        };
        let c = s.servers as usize;
        match s.kind {
            StationKind::Delay => sts.push(st(Kind::Delay, d, dp)),
            StationKind::Queue if s.servers == 1 => sts.push(st(Kind::Single, d, dp)),
            StationKind::Queue if is_seidmann_multi(s) => {
                let cf = s.server_count();
                sts.push(st(Kind::Single, d / cf, dp / cf));
                sts.push(st(Kind::Delay, d * (cf - 1.0) / cf, dp * (cf - 1.0) / cf));
                if dp < d {
                    seidmann.push(s.name.clone());
                }
                if s.fractional_servers.is_some() {
                    fractional.push(s.name.clone());
                }
            }
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
        if s.batching.is_some() {
            batched.push(s.name.clone());
        }
    }
    Planned {
        sts,
        groups,
        approximated,
        seidmann,
        fractional,
        batched,
    }
}

/// Solves every network of the complement lattice bottom-up (mixed radix, first group
/// fastest, so `a − e_g` is always solved before `a`) and returns the full network's run,
/// with snapshots at the populations in `want`.
fn run_lattice(
    sts: &[St],
    groups: &[Group],
    estimates: &[Option<Vec<f64>>],
    z: f64,
    n_pop: usize,
    want: &[usize],
    window: Window,
) -> Run {
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
            let mut comps: Vec<Comp> = vec![Comp::Own; groups.len()];
            for (g, grp) in groups.iter().enumerate() {
                let digit = (idx / strides[g]) % radix[g];
                copies[grp.station] = grp.m - grp.depth + digit as u32;
                if digit > 0 {
                    comps[g] = Comp::Exact(&xs[idx - strides[g]]);
                } else if let Some(e) = &estimates[g] {
                    comps[g] = Comp::Estimate(e);
                }
            }
            let last = idx + 1 == size;
            let want = if last { want } else { &[] };
            // The windowed recursion gives up (None) when its cut-off could not be
            // justified; the full recursion is then run instead.
            (window == Window::On)
                .then(|| mva(sts, &copies, &comps, z, n_pop, want, Window::On))
                .flatten()
                .unwrap_or_else(|| {
                    mva(sts, &copies, &comps, z, n_pop, want, Window::Off)
                        .expect("the full recursion always completes")
                })
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

/// Whether the marginals of multi-server stations are kept on a window of significant
/// `j` ([`Window::On`], the default) or on all `j < c` ([`Window::Off`], the reference the
/// window is tested against and the fallback when its cut-off cannot be justified).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    On,
    Off,
}

/// Smallest `p(0)` (and ratio `X/X_{−k}`) for which `p(0)` is updated as a product; below,
/// as a logarithm, so that it may underflow harmlessly.
const P0_DIRECT_MIN: f64 = 1e-150;

/// Marginal probabilities whose whole future stays below this are dropped from a window
/// (absolute: the marginals are probabilities, at most 1); see `Marginal`.
pub const WINDOW_CUTOFF: f64 = 1e-18;

/// The marginal `p(j | n)`, `j < c`, of one copy of a multi-server station, with the window
/// `lo..=hi` of `j` on which it is kept (empty when `lo > hi`; values outside count as 0).
///
/// `p(j | n) = X(n)·d/j · p(j−1 | n−1)` moves every value up one place per step, so a
/// value dropped at `(n, j)` stands for its whole chain `(n+k, j+k)` until it leaves at
/// `c`; it may be dropped only if that chain stays below [`WINDOW_CUTOFF`]. The mass below
/// the mode is the seed of the later mode (`p(0|n)` becomes `p(k|n+k)`), so while the
/// load grows nothing below the mode may go: the window is `[0, top of the tail ≥ 1e-18]`
/// (measured: j ≤ 29 at load 3, 39 at load 6, 47 at load 9) while the station is not
/// saturated, and shrinks from below only once it is (its marginal below `c` then fades
/// away for good). Two cut-offs:
/// - top: `j ≥ X(n)·d` and `p(j|n) <` the cut-off. Later factors `X(n+k)·d/(j+k)` are
///   ≤ 1 when the response time does not fall with the population (then
///   `X(n+1) ≤ X(n)·(n+1)/n`);
/// - bottom: `p(j|n)·G(j) <` the cut-off, where `G(j) = max_k Π_{i=1..k} λ̄/(j+i)` is the
///   largest growth of the chain while `X·d ≤ λ̄`, and `λ̄ = d · min_k c_k/d_k` (the
///   utilisation of every queue is at most 1; +0.1 %, because the fork heuristic of
///   [`crate::qn`] may exceed it by ~1e-4).
///
/// Neither assumption is trusted: bounds on the dropped values (`above`: the largest
/// value above the window; `below`: the largest `p·G` below it) are carried with the real
/// factors, and the run is repeated without windows if either exceeds twice the cut-off.
/// Values in the window are computed exactly as without it, so the marginal is off by at
/// most `c` dropped values ≤ 2e-18 each: `Σ (c−1−j) p(j)` by ≤ c²·2e-18 (1.3e-13 at
/// c = 256), against `1 + Q ≥ 1` in the stretch factor. Only the marginals that are not
/// renormalised ([`Comp::Exact`] and the textbook `p(0)`) are windowed.
#[derive(Debug, Clone)]
struct Marginal {
    p: Vec<f64>,
    /// The buffer the next step writes into (then swapped with `p`).
    next: Vec<f64>,
    /// `c − 1 − j`, the weight of `p(j)` in `Σ (c−1−j) p(j)`.
    weight: Vec<f64>,
    lo: usize,
    hi: usize,
    /// Bound on every value dropped above `hi`.
    above: f64,
    /// Bound on `p·G` of every value dropped below `lo`.
    below: f64,
    /// Bottom cut-off per `j`: `WINDOW_CUTOFF / G(j)` (empty: the window is off).
    floor: Vec<f64>,
    /// The λ̄ that `floor` assumed.
    lambda_max: f64,
}

impl Marginal {
    /// `p(0 | 0) = 1`; `lambda_max`: λ̄ (`None`: no window).
    fn new(c: usize, lambda_max: Option<f64>) -> Self {
        let mut p = vec![0.0; c];
        p[0] = 1.0;
        let mut m = Self {
            p,
            next: vec![0.0; c],
            weight: (0..c).map(|j| (c - 1 - j) as f64).collect(),
            lo: 0,
            hi: c - 1,
            above: 0.0,
            below: 0.0,
            floor: Vec::new(),
            lambda_max: f64::INFINITY,
        };
        let Some(lambda) = lambda_max else {
            return m;
        };
        // ln G(j) = Σ_{i=j+1}^{top} ln(λ̄/i), top = min(c−1, ⌊λ̄⌋) (the factors > 1);
        // G = ∞ (λ̄ = ∞, or G beyond f64) gives floor 0: never dropped.
        let top = if lambda.is_finite() {
            (lambda.floor() as usize).min(c - 1)
        } else {
            c - 1
        };
        m.floor = vec![WINDOW_CUTOFF; c];
        let mut ln_g = 0.0;
        for j in (0..top).rev() {
            ln_g += (lambda / (j + 1) as f64).ln();
            m.floor[j] = (WINDOW_CUTOFF.ln() - ln_g).exp();
        }
        m.hi = 0;
        m.lambda_max = lambda;
        m
    }

    fn windowed(&self) -> bool {
        !self.floor.is_empty()
    }

    /// `p(j | n) = xcd/j · p(j−1 | n−1)` for `j ≥ 1` on the shifted window; returns
    /// `(Σ p(j), Σ (c−1−j) p(j))` over it.
    fn advance(&mut self, xcd: f64, inv: &[f64]) -> (f64, f64) {
        let c = self.p.len();
        if self.windowed() {
            // A dropped value at j > hi moves to j+1 ≥ hi+2 (factor ≤ xcd/(hi+2)), or
            // leaves; p·G of one below changes by xcd/λ̄ (G(j)/G(j+1) = λ̄/(j+1) up to
            // ⌊λ̄⌋, and xcd/(j+1) < xcd/λ̄ beyond).
            self.above = if self.hi + 1 >= c - 1 {
                0.0
            } else {
                self.above * xcd / (self.hi + 2) as f64
            };
            self.below *= xcd / self.lambda_max;
        }
        // (An empty window stays at most at lo = c.)
        let (lo, hi) = ((self.lo + 1).min(c), (self.hi + 1).min(c - 1));
        self.lo = lo;
        self.hi = hi;
        if lo > hi {
            return (0.0, 0.0);
        }
        // Into the other buffer (so the loop is a plain map over equal-length slices), with
        // four partial sums each so the additions do not wait for one another.
        let old = &self.p[lo - 1..hi];
        let new = &mut self.next[lo..=hi];
        let (inv, weight) = (&inv[lo..=hi], &self.weight[lo..=hi]);
        let (mut sum, mut wsum) = ([0.0; 4], [0.0; 4]);
        let mut chunks = new.chunks_exact_mut(4);
        let mut rest = (
            old.chunks_exact(4),
            inv.chunks_exact(4),
            weight.chunks_exact(4),
        );
        for (((n, o), f), w) in (&mut chunks)
            .zip(&mut rest.0)
            .zip(&mut rest.1)
            .zip(&mut rest.2)
        {
            let v: [f64; 4] = std::array::from_fn(|k| xcd * f[k] * o[k]);
            n.copy_from_slice(&v);
            for k in 0..4 {
                sum[k] += v[k];
                wsum[k] += w[k] * v[k];
            }
        }
        let tail = chunks.into_remainder();
        let (o, f, w) = (rest.0.remainder(), rest.1.remainder(), rest.2.remainder());
        for k in 0..tail.len() {
            let v = xcd * f[k] * o[k];
            tail[k] = v;
            sum[k] += v;
            wsum[k] += w[k] * v;
        }
        // p(0) stays p(0 | n−1) until `settle`.
        self.next[0] = self.p[0];
        std::mem::swap(&mut self.p, &mut self.next);
        (
            (sum[0] + sum[1]) + (sum[2] + sum[3]),
            (wsum[0] + wsum[1]) + (wsum[2] + wsum[3]),
        )
    }

    /// Sets `p(0 | n)` and narrows the window (see the type's doc); `false` if a bound on
    /// the dropped values exceeds twice the cut-off.
    fn settle(&mut self, p0: f64, xcd: f64) -> bool {
        self.p[0] = p0;
        if !self.windowed() {
            self.lo = 0;
            return true;
        }
        if p0 >= self.floor[0] {
            // Between 0 and the window there are only dropped values (all counted as 0).
            if self.lo > 1 {
                self.p[1..self.lo].fill(0.0);
            }
            self.lo = 0;
        } else {
            self.below = self.below.max(p0 * WINDOW_CUTOFF / self.floor[0]);
        }
        while self.hi >= self.lo.max(1) && self.hi as f64 >= xcd && self.p[self.hi] < WINDOW_CUTOFF
        {
            self.above = self.above.max(self.p[self.hi]);
            self.hi -= 1;
        }
        while self.lo <= self.hi && self.p[self.lo] < self.floor[self.lo] {
            let g = WINDOW_CUTOFF / self.floor[self.lo];
            self.below = self.below.max(self.p[self.lo] * g);
            self.lo += 1;
        }
        self.above.max(self.below) <= 2.0 * WINDOW_CUTOFF
    }
}

/// One exact MVA run of the network with `copies[i]` copies of internal station `i`;
/// `comps[g]` is the throughput curve of the complement of lattice group `g`. The state at
/// each population in `want` (sorted) is kept as a [`Snap`]. `None` when a window
/// ([`Marginal`]) could not justify its cut-off (never with [`Window::Off`]).
fn mva(
    sts: &[St],
    copies: &[u32],
    comps: &[Comp],
    z: f64,
    n_pop: usize,
    want: &[usize],
    window: Window,
) -> Option<Run> {
    let k = sts.len();
    let mut q = vec![0.0; k];
    let mut stretch = vec![1.0; k];
    // Demand factor of batching per station (1 without), and the batching groups: the
    // parts of one station share its speed, set by the queue an arrival finds (its
    // single-server part; see `qn`).
    let mut speed = vec![1.0; k];
    let mut batches: Vec<(crate::qn::Batching, Vec<usize>)> = Vec::new();
    for (i, s) in sts.iter().enumerate() {
        if let Some((g, b)) = s.batch {
            if g >= batches.len() {
                batches.push((b, Vec::new()));
            }
            batches[g].1.push(i);
        }
    }
    // Per batching group: its path residence at the previous population.
    let mut group_r = vec![0.0; batches.len()];
    let mut snaps = Vec::with_capacity(want.len());
    let mut next_want = want.iter().copied().peekable();
    while next_want.peek() == Some(&0) {
        next_want.next();
        snaps.push(Snap {
            population: 0,
            x: 0.0,
            q: q.clone(),
            stretch: stretch.clone(),
            speed: speed.clone(),
        });
    }
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
        snaps.extend(next_want.map(|n| Snap {
            population: n,
            x: f64::INFINITY,
            q: q.clone(),
            stretch: stretch.clone(),
            speed: speed.clone(),
        }));
        return Some(Run {
            x: vec![f64::INFINITY; n_pop],
            snaps,
            naive_load,
            q_curve: vec![Vec::new(); k],
        });
    }
    // Capacity bound on X: every queue's utilisation is at most 1 (X·d ≤ c per copy).
    let x_cap = sts
        .iter()
        .zip(copies)
        .filter(|&(s, &a)| a > 0 && s.d > 0.0)
        .filter_map(|(s, _)| {
            let f = s.batch.map_or(1.0, |(_, b)| b.min_demand_factor());
            match s.kind {
                Kind::Delay => None,
                Kind::Single => Some(1.0 / (s.d * f)),
                Kind::Multi { c, .. } => Some(c as f64 / (s.d * f)),
            }
        })
        .fold(f64::INFINITY, f64::min);
    // Marginal probabilities p(j | n), j < c, and ln p(0 | n) per multi-server station;
    // windowed unless renormalised (see `Marginal`).
    let mut p: Vec<Marginal> = sts
        .iter()
        .map(|s| match s.kind {
            Kind::Multi { c, p0 } => {
                let renormalised = match p0 {
                    P0::Lattice(g) => !matches!(comps[g], Comp::Exact(_)),
                    P0::Textbook => false,
                };
                // (x_cap is finite: this station bounds it when d > 0.)
                let lambda = (window == Window::On && !renormalised && s.d > 0.0)
                    .then_some(x_cap * s.d * 1.001);
                Marginal::new(c, lambda)
            }
            _ => Marginal::new(1, None),
        })
        .collect();
    let mut ln_p0 = vec![0.0_f64; k];
    let mut tail = vec![0.0_f64; k];
    // Σ_{j<c−1} (c−1−j)·p(j | n−1) per multi-server station (p(0 | 0) = 1).
    let mut corr: Vec<f64> = sts
        .iter()
        .map(|s| match s.kind {
            Kind::Multi { c, .. } => (c - 1) as f64,
            _ => 0.0,
        })
        .collect();
    let max_c = p.iter().map(|m| m.p.len()).max().unwrap_or(0);
    let inv: Vec<f64> = (0..max_c).map(|j| 1.0 / j.max(1) as f64).collect();
    let mut q_curve: Vec<Vec<f64>> = sts
        .iter()
        .map(|s| match s.kind {
            Kind::Multi {
                p0: P0::Lattice(g), ..
            } if !matches!(comps[g], Comp::Exact(_)) => Vec::with_capacity(n_pop),
            _ => Vec::new(),
        })
        .collect();
    // The step as straight-line arithmetic over all internal stations: stretch
    // = (1 + [queue]·Q + corr)/c (delays: 1; single servers: 1 + Q), R_path += a·dp·stretch,
    // Q = X·d·stretch; an absent station (a = 0) has weight 0 and d 0 (so Q = 0). Only
    // the multi-server stations then take the per-kind path.
    let path_w: Vec<f64> = sts
        .iter()
        .zip(copies)
        .map(|(s, &a)| f64::from(a) * s.dp)
        .collect();
    let d_eff: Vec<f64> = sts
        .iter()
        .zip(copies)
        .map(|(s, &a)| if a > 0 { s.d } else { 0.0 })
        .collect();
    let queue_w: Vec<f64> = sts
        .iter()
        .map(|s| if s.kind == Kind::Delay { 0.0 } else { 1.0 })
        .collect();
    let inv_c: Vec<f64> = sts
        .iter()
        .map(|s| match s.kind {
            Kind::Multi { c, .. } => 1.0 / c as f64,
            _ => 1.0,
        })
        .collect();
    let multi: Vec<usize> = (0..k)
        .filter(|&i| copies[i] > 0 && matches!(sts[i].kind, Kind::Multi { .. }))
        .collect();
    for n in 1..=n_pop {
        // Mean-value rule of batching (see `qn`): the speed of the queue an arrival finds,
        // 1 + Q(n−1) of the station's single-server part (Seidmann's delay part stands for
        // the jobs in service on the other servers, which are not in the batch).
        for (b, parts) in &batches {
            let seen = 1.0
                + parts
                    .iter()
                    .filter(|&&i| sts[i].kind != Kind::Delay)
                    .map(|&i| q[i])
                    .sum::<f64>();
            let f = b.demand_factor(seen);
            parts.iter().for_each(|&i| speed[i] = f);
        }
        // A batching station's path residence never falls as the population grows: its
        // demand factor drops no faster than its queue grows (the mean-value rule alone lets
        // the Seidmann delay part, whose queue does not grow, speed up; see `qn`).
        for (g, (_, parts)) in batches.iter().enumerate() {
            let base: f64 = parts
                .iter()
                .map(|&i| path_w[i] * (1.0 + queue_w[i] * q[i] + corr[i]) * inv_c[i])
                .sum();
            let f = speed[parts[0]];
            if base > 0.0 {
                let f = if f * base < group_r[g] {
                    (group_r[g] / base).min(1.0)
                } else {
                    f
                };
                parts.iter().for_each(|&i| speed[i] = f);
                group_r[g] = f * base;
            }
        }
        let mut r_path = 0.0;
        for (((((st, &qi), &ci), &wq), (&ic, &pw)), &sp) in stretch
            .iter_mut()
            .zip(&q)
            .zip(&corr)
            .zip(&queue_w)
            .zip(inv_c.iter().zip(&path_w))
            .zip(&speed)
        {
            *st = (1.0 + wq * qi + ci) * ic * sp;
            r_path += pw * *st;
        }
        let mut x = n as f64 / (z + r_path);
        // The fork heuristic's throughput can pass a queue's capacity: with path demand
        // below demand, the response counts less time than the queue holds (a single
        // server with path p < d gives X(n) = n/(p + d(n−1)) > 1/d). Cap X at the
        // capacity at this step's speeds; the time the cap adds is queueing at that
        // bottleneck (at the queue with the most path work when the bottleneck has none),
        // so that Little's law holds for the path (product-form networks never reach it).
        let mut bottleneck: Option<(usize, f64)> = None;
        for i in 0..k {
            if queue_w[i] == 0.0 || d_eff[i] <= 0.0 {
                continue;
            }
            let cap = 1.0 / (d_eff[i] * speed[i] * inv_c[i]);
            if bottleneck.is_none_or(|(_, c)| cap < c) {
                bottleneck = Some((i, cap));
            }
        }
        if let Some((b, cap)) = bottleneck.filter(|&(_, cap)| x > cap) {
            let at = if path_w[b] > 0.0 {
                Some(b)
            } else {
                (0..k)
                    .filter(|&i| queue_w[i] > 0.0 && path_w[i] > 0.0)
                    .max_by(|&i, &j| path_w[i].total_cmp(&path_w[j]))
            };
            if let Some(at) = at {
                let extra = n as f64 / cap - z - r_path;
                stretch[at] += extra / path_w[at];
                x = cap;
            }
        }
        x_curve.push(x);
        for ((qi, &st), &d) in q.iter_mut().zip(&stretch).zip(&d_eff) {
            *qi = x * d * st;
        }
        for &i in &multi {
            let s = &sts[i];
            if let Kind::Multi { c, p0 } = s.kind {
                let xd = x * s.d;
                let m = &mut p[i];
                let comp = match p0 {
                    P0::Lattice(g) => Some(comps[g]),
                    P0::Textbook => None,
                };
                // Throughput driving the marginal of a copy: the complement's.
                let xcd = match comp {
                    Some(Comp::Estimate(xc)) => xc[n - 1] * s.d,
                    _ => xd,
                };
                if matches!(comp, Some(Comp::Estimate(_) | Comp::Own)) {
                    // Unnormalised marginal of a copy given the complement's throughput X':
                    // u(0) = p(0|n−1), u(j) = X'·d/j·p(j−1|n−1), tail = X'·d/c·(p(c−1|n−1)
                    // + tail(n−1)); all positive, then normalised by the sum.
                    tail[i] = xcd / c as f64 * (m.p[c - 1] + tail[i]);
                }
                // New p(j | n), j ≥ 1, with Σ p(j) and Σ (c−1−j)·p(j) on the way.
                let (sum, wsum) = m.advance(xcd, &inv[..c]);
                let cm1 = (c - 1) as f64;
                let p0_new = match (p0, comp) {
                    (_, Some(Comp::Exact(xc))) => {
                        let (xc, prev) = (xc[n - 1], m.p[0]);
                        let ratio = x / xc;
                        // While p(0) and the ratio are far from underflow, a product (no
                        // ln/exp per step); beyond, the logarithm (NaN: not yet carried).
                        let p0 = if xc.is_infinite() {
                            ln_p0[i] = f64::NEG_INFINITY;
                            0.0
                        } else if prev > P0_DIRECT_MIN && ratio > P0_DIRECT_MIN {
                            ln_p0[i] = f64::NAN;
                            prev * ratio
                        } else {
                            let ln_prev = if ln_p0[i].is_nan() {
                                prev.ln()
                            } else {
                                ln_p0[i]
                            };
                            ln_p0[i] = ln_prev + ratio.ln();
                            ln_p0[i].exp()
                        };
                        corr[i] = wsum + cm1 * p0;
                        p0
                    }
                    (P0::Lattice(_), _) => {
                        let scale = 1.0 / (m.p[0] + sum + tail[i]);
                        m.p.iter_mut().for_each(|v| *v *= scale);
                        tail[i] *= scale;
                        corr[i] = wsum * scale + cm1 * m.p[0];
                        q_curve[i].push(q[i]);
                        m.p[0]
                    }
                    (P0::Textbook, _) => {
                        naive_load[i] = f64::max(naive_load[i], xd);
                        // Σ_{j≥1} (c−j)·p(j) = wsum + sum.
                        let p0 = (1.0 - (xd + wsum + sum) / c as f64).clamp(0.0, 1.0);
                        corr[i] = wsum + cm1 * p0;
                        p0
                    }
                };
                if !m.settle(p0_new, xcd) {
                    return None;
                }
            }
        }
        if next_want.peek() == Some(&n) {
            next_want.next();
            snaps.push(Snap {
                population: n,
                x,
                q: q.clone(),
                stretch: stretch.clone(),
                speed: speed.clone(),
            });
        }
    }
    Some(Run {
        x: x_curve,
        snaps,
        naive_load,
        q_curve,
    })
}

fn assemble(net: &Network, planned: &Planned, run: &Snap, refined: Option<(u32, f64)>) -> Solution {
    let (sts, approximated) = (&planned.sts, &planned.approximated);
    let class = &net.classes[0];
    let population = run.population as u32;
    let x = run.x;
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
    // Demand factor per network station (the speed its parts ran at).
    let mut factor = vec![1.0; net.stations.len()];
    for (i, st) in sts.iter().enumerate() {
        factor[st.origin] = run.speed[i];
        let out = &mut stations[st.origin];
        let m = f64::from(st.copies);
        let stretch = if population == 0 { 1.0 } else { run.stretch[i] };
        out.queue_length += run.q[i];
        out.queue_length_total += run.q[i] * m;
        let pc = &mut out.per_class[0];
        pc.residence_secs += m * st.d * stretch;
        pc.path_residence_secs += m * st.dp * stretch;
        pc.queue_length += run.q[i] * m;
    }
    for ((out, s), f) in stations.iter_mut().zip(&net.stations).zip(&factor) {
        if s.kind == StationKind::Queue {
            let u = x * s.demands[0].secs * f / (f64::from(s.multiplicity) * s.server_count());
            out.utilization = u;
            out.per_class[0].utilization = u;
        }
    }
    let r: f64 = stations
        .iter()
        .map(|s| s.per_class[0].path_residence_secs)
        .sum();
    let (method, mut notes) = if approximated.is_empty() {
        (Method::ExactSingleClass, Vec::new())
    } else {
        let (passes, change) = refined.unwrap_or((0, 0.0));
        (
            Method::SelfComplementSingleClass,
            vec![format!(
                "multi-server stations {} have too many copies for the exact complement \
                 lattice; the throughput of the network with one copy fewer is estimated by \
                 flow equivalence, X'(n) = X(n + Q_copy(n)), iterated {passes} times (last \
                 relative change {change:.1e}); measured error of X ≈ 0.5/m² \
                 (6e-4 at m = 32, 1.4e-8 on a 630-OSD network)",
                approximated.join(", ")
            )],
        )
    };
    if !planned.seidmann.is_empty() {
        notes.push(format!(
            "multi-server stations {} carry forked or off-path work (path demand below \
             demand), for which the exact multi-server recursion is not defined; they use Seidmann's \
             decomposition (single server D/c + delay D(c-1)/c), as the approximate \
             solvers do",
            planned.seidmann.join(", ")
        ));
    }
    if !planned.fractional.is_empty() {
        notes.push(format!(
            "stations {} have a fractional server count (effective cores); they use \
             Seidmann's decomposition with real c (single server D/c + delay D(c-1)/c), \
             as the approximate solvers do",
            planned.fractional.join(", ")
        ));
    }
    if !planned.batched.is_empty() {
        notes.push(batching_note(&planned.batched));
    }
    Solution {
        method,
        classes: vec![ClassSolution {
            name: class.name.clone(),
            population,
            throughput_per_sec: x,
            response_time_secs: if population == 0 { 0.0 } else { r },
        }],
        stations,
        convergence: None,
        notes,
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    fn inv(c: usize) -> Vec<f64> {
        (0..c).map(|j| 1.0 / j.max(1) as f64).collect()
    }

    /// Step at which `settle` gives up, if it does within 100 steps.
    fn gives_up(m: &mut Marginal, xcd: impl Fn(usize) -> f64, p0: f64) -> Option<usize> {
        let inv = inv(m.p.len());
        (1..=100).find(|&n| {
            m.advance(xcd(n), &inv);
            !m.settle(p0, xcd(n))
        })
    }

    #[test]
    fn bottom_bound_follows_a_load_beyond_the_assumed_one() {
        // c = 16, λ̄ = 4: G(0) = 4·4/2·4/3·4/4 = 10.67, so p(0) = 1e-60 is dropped with
        // p·G = 1.07e-59. At X·d = λ̄ the bound stays there; at 10·λ̄ it grows ×10 per
        // step from step 2 and passes 2e-18 when 10^(k−1) > 1.9e41: k = 43.
        let mut m = Marginal::new(16, Some(4.0));
        assert_eq!(gives_up(&mut m, |_| 4.0, 1e-60), None);
        assert!(m.below > 1e-59 && m.below < 1.1e-59, "{}", m.below);
        let mut m = Marginal::new(16, Some(4.0));
        assert_eq!(gives_up(&mut m, |_| 40.0, 1e-60), Some(43));
    }

    #[test]
    fn an_emptied_window_reopens_when_p0_comes_back() {
        // Found by validate::refit's tests (c = 2): p(0) below the bottom cut-off for more
        // than c steps, then back (p(0) need not fall monotonically under the fork
        // heuristic). The window must stay within 0..c while empty and reopen at 0, the
        // values between counted as 0.
        let inv = inv(2);
        let mut m = Marginal::new(2, Some(1.0));
        for _ in 0..5 {
            m.advance(1.0, &inv);
            assert!(m.settle(1e-30, 1.0));
        }
        assert!(m.lo > m.hi && m.lo <= 2);
        m.advance(1.0, &inv);
        assert!(m.settle(0.5, 1.0));
        assert_eq!((m.lo, m.p[0], m.p[1]), (0, 0.5, 0.0));
    }

    #[test]
    fn top_bound_follows_a_load_that_jumps_past_the_window() {
        // c = 64, p(0) = 1, X·d = 0.01: p(j) = 0.01^j/j! falls below 1e-18 at j = 8
        // (2.5e-21), which is dropped. Constant load: the dropped values only shrink. A jump
        // to X·d = 60 at step 21 multiplies them by 60/(hi+2) = 60/9, 60/10, ... per
        // step: 2.5e-21 passes 2e-18 (×800) at step 24.
        let mut m = Marginal::new(64, Some(64.0));
        assert_eq!(gives_up(&mut m, |_| 0.01, 1.0), None);
        assert!(m.above > 0.0 && m.above < WINDOW_CUTOFF);
        let mut m = Marginal::new(64, Some(64.0));
        let k = gives_up(&mut m, |n| if n <= 20 { 0.01 } else { 60.0 }, 1.0);
        assert_eq!(k, Some(24));
    }
}
