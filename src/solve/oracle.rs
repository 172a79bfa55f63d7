//! Test-only reference solvers, independent of MVA:
//! - the convolution algorithm (Buzen 1973; load-dependent form in Lazowska et al., QSP
//!   §20.3) for one class, with every copy of every station as its own load-dependent
//!   factor `f(j) = d^j / Π_{i≤j} min(i, c)` (delay: `d^j / j!`), in log space so that no
//!   term over- or underflows and every sum has positive terms only (no cancellation).
//!   Exact but slow: O(N²) per copy. A batching station (see `qn`) is solved as the
//!   load-dependent server it stands for: with `j` jobs at a copy every job is served at
//!   speed `1/f(q)`, `f` = the batching's demand factor and `q = max(1, j − c + 1)` its
//!   queue (the jobs waiting plus one), so `α(j) = min(j, c)/f(q)` — the exact counterpart
//!   of the solvers' mean-value rule.
//! - the finite-source M/M/c//N (machine-repairman) closed form.
//!
//! Not for production use: it exists to check `single` and the other solvers.

use crate::qn::{Network, StationKind};

/// ln(e^a + e^b) without overflow.
fn ln_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// ln f(j), j = 0..=n, for one copy with per-copy demand `d` and `c` servers, possibly a
/// fractional count (speed `min(j, c)`; `c = None`: delay).
fn ln_factor(d: f64, c: Option<f64>, n: usize) -> Vec<f64> {
    ln_factor_batched(d, c, None, n)
}

/// [`ln_factor`] with the load-dependent speed of a batching station.
fn ln_factor_batched(
    d: f64,
    c: Option<f64>,
    batching: Option<&crate::qn::Batching>,
    n: usize,
) -> Vec<f64> {
    let mut f = vec![0.0; n + 1];
    for j in 1..=n {
        f[j] = if d == 0.0 {
            f64::NEG_INFINITY
        } else {
            let alpha = match c {
                None => j as f64,
                Some(c) => (j as f64).min(c),
            };
            // The batch is the queue: the jobs beyond the other busy servers.
            let queue = c.map_or(j, |c| (j + 1).saturating_sub(c.ceil() as usize).max(1));
            let speed = batching.map_or(1.0, |b| 1.0 / b.demand_factor(queue as f64));
            f[j - 1] + d.ln() - (alpha * speed).ln()
        };
    }
    f
}

fn ln_conv(a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = a.len().min(b.len());
    (0..n)
        .map(|k| {
            (0..=k).fold(f64::NEG_INFINITY, |acc, j| {
                let t = a[j] + b[k - j];
                if t == f64::NEG_INFINITY {
                    acc
                } else {
                    ln_add(acc, t)
                }
            })
        })
        .collect()
}

pub(crate) struct OracleSolution {
    pub throughput_per_sec: f64,
    /// Per network station: mean jobs at one copy.
    pub queue_length_per_copy: Vec<f64>,
    /// Per network station: p(j | N) of one copy for j = 0..=N.
    pub marginal: Vec<Vec<f64>>,
}

/// Exact single-class solution by convolution (path demands are ignored: product form).
pub(crate) fn convolution(net: &Network) -> OracleSolution {
    assert_eq!(net.classes.len(), 1);
    let n = net.classes[0].population as usize;
    let z = net.classes[0].think_time_secs;
    let station_factor: Vec<Vec<f64>> = net
        .stations
        .iter()
        .map(|s| {
            let d = s.demands[0].secs / f64::from(s.multiplicity);
            let c = (s.kind == StationKind::Queue).then(|| s.server_count());
            ln_factor_batched(d, c, s.batching.as_ref(), n)
        })
        .collect();
    // ln G of everything except the stations at index ≥ k: prefix; and of the stations
    // after k: suffix. Think time is folded into the prefix.
    let think = ln_factor(z, None, n);
    let k = net.stations.len();
    let power =
        |f: &[f64], times: u32, start: Vec<f64>| (0..times).fold(start, |acc, _| ln_conv(&acc, f));
    let mut prefix = vec![think];
    for (i, s) in net.stations.iter().enumerate() {
        let next = power(&station_factor[i], s.multiplicity, prefix[i].clone());
        prefix.push(next);
    }
    let mut unit = vec![f64::NEG_INFINITY; n + 1];
    unit[0] = 0.0;
    let mut suffix = vec![unit; k + 1];
    for i in (0..k).rev() {
        suffix[i] = power(
            &station_factor[i],
            net.stations[i].multiplicity,
            suffix[i + 1].clone(),
        );
    }
    let g = &prefix[k];
    let throughput_per_sec = if n == 0 { 0.0 } else { (g[n - 1] - g[n]).exp() };
    let mut queue_length_per_copy = Vec::new();
    let mut marginal = Vec::new();
    for (i, s) in net.stations.iter().enumerate() {
        let others = power(
            &station_factor[i],
            s.multiplicity - 1,
            ln_conv(&prefix[i], &suffix[i + 1]),
        );
        let p: Vec<f64> = (0..=n)
            .map(|j| (station_factor[i][j] + others[n - j] - g[n]).exp())
            .collect();
        queue_length_per_copy.push(p.iter().enumerate().map(|(j, pj)| j as f64 * pj).sum());
        marginal.push(p);
    }
    OracleSolution {
        throughput_per_sec,
        queue_length_per_copy,
        marginal,
    }
}

/// Finite-source M/M/c//N (machine repairman): `n` sources thinking `z` seconds, one
/// station with `c` servers and demand `d`. Returns (throughput, mean jobs at the
/// station). p(j) ∝ C(N,j)·ρ^j for j ≤ c and C(N,j)·j!/(c!·c^(j−c))·ρ^j above, ρ = d/z
/// (Kleinrock, *Queueing Systems* vol. 1, §3.9; Gross & Harris, *Fundamentals of Queueing
/// Theory*, §2.8); X = (N − L)/Z.
pub(crate) fn machine_repairman(n: u32, z: f64, c: u32, d: f64) -> (f64, f64) {
    let rho = d / z;
    let ln_fact = |k: u32| (1..=k).map(|i| f64::from(i).ln()).sum::<f64>();
    let ln_w: Vec<f64> = (0..=n)
        .map(|j| {
            let binom = ln_fact(n) - ln_fact(j) - ln_fact(n - j);
            let tail = if j <= c {
                0.0
            } else {
                ln_fact(j) - ln_fact(c) - f64::from(j - c) * f64::from(c).ln()
            };
            binom + tail + f64::from(j) * rho.ln()
        })
        .collect();
    let max = ln_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = ln_w.iter().map(|w| (w - max).exp()).sum();
    let l: f64 = ln_w
        .iter()
        .enumerate()
        .map(|(j, w)| j as f64 * (w - max).exp() / total)
        .sum();
    ((f64::from(n) - l) / z, l)
}

/// Throughput only, by the same log-space convolution but in O(N·c) per copy: for a copy
/// with `c` servers `f(j) = f(j−1)·d/c` for `j > c`, so the tail of the convolution sum
/// `T(n) = Σ_{j≥c} f(j)·g(n−j)` obeys `T(n) = f(c)·g(n−c) + (d/c)·T(n−1)` (all terms
/// positive; for a fractional `c` the index is `⌈c⌉` and the ratio `d/c`). Fast enough (minutes) for the 630-OSD network once, offline.
pub(crate) fn convolution_throughput(net: &Network) -> f64 {
    assert_eq!(net.classes.len(), 1);
    assert!(
        net.stations.iter().all(|s| s.batching.is_none()),
        "convolution_throughput has no batching; use convolution"
    );
    let n = net.classes[0].population as usize;
    let z = net.classes[0].think_time_secs;
    let mut g = ln_factor(z, None, n);
    for s in &net.stations {
        let d = s.demands[0].secs / f64::from(s.multiplicity);
        if d == 0.0 {
            continue;
        }
        let (c, c_real) = match s.kind {
            StationKind::Queue => (s.servers as usize, s.server_count()),
            // A delay is a station with as many servers as jobs.
            StationKind::Delay => (n + 1, (n + 1) as f64),
        };
        let f = ln_factor(d, (c <= n).then_some(c_real), n);
        let ln_ratio = (d / c_real).ln();
        for _ in 0..s.multiplicity {
            let mut h = vec![f64::NEG_INFINITY; n + 1];
            let mut tail = f64::NEG_INFINITY;
            for k in 0..=n {
                let mut acc = f64::NEG_INFINITY;
                for j in 0..c.min(k + 1) {
                    acc = ln_add(acc, f[j] + g[k - j]);
                }
                if k >= c {
                    tail = ln_add(f[c] + g[k - c], ln_ratio + tail);
                    acc = ln_add(acc, tail);
                }
                h[k] = acc;
            }
            g = h;
        }
    }
    if n == 0 {
        0.0
    } else {
        (g[n - 1] - g[n]).exp()
    }
}
