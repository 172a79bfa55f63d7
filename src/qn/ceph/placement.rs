//! PG placement imbalance: how much more work than the average the busiest OSD (or data
//! device) of a pool is given, from the pool's placement-group count, its protection and
//! the release's default balancer.
//!
//! CRUSH maps each placement group onto its OSDs pseudo-randomly, so the number of PGs an
//! OSD holds (and leads, as primary) varies around the mean. Random I/O over an RBD image
//! spreads evenly over its objects and so over the PGs; an OSD's share of the work is its
//! PG count's share. In a closed benchmark the busiest OSD saturates first and bounds the
//! cluster ("Ultimately the overall cluster performance is limited by the performance of
//! the slowest OSD in the cluster", ceph.io 2022 "Ceph OSD CPU scaling", on why a single
//! OSD delivers several times the per-OSD IOPS of a 60-OSD cluster).
//!
//! The estimate: with `P` PGs each putting one piece of work on `w` distinct OSDs out of
//! `K`, an OSD's count is close to Binomial(P, w/K) (mean `μ = P·w/K`); taking the `K`
//! counts as independent, the busiest one's expected count is `E[max] = Σ_{x≥0} (1 −
//! F(x)^K)`, `F` the binomial CDF, and the busiest-to-mean ratio `E[max]/μ`: 1 for one OSD
//! or when every PG is on every OSD, growing as PGs per OSD fall (seed 002's 1024 PGs over
//! 72 OSDs: primaries 1.68, all three replicas 1.37).
//!
//! Balancing: from Pacific (16.2.0, "The balancer is now on by default in upmap mode") the
//! upmap balancer evens the PGs an OSD *holds* to "an equal number of PGs on each OSD
//! (+/-1 PG, since they might not divide evenly)" (docs.ceph.com, rados/operations/balancer);
//! it does not even out which OSD is *primary* (that is the separate `read` /
//! `upmap-read` balancer mode, not the default). So a read, all of whose work is at the
//! primary, sees the primaries' spread in every release; a replicated write spreads its
//! work over all its replicas (held PGs, balanced where the scenario's `[cluster] balancer`
//! is upmap: stated, or the default from 16.2) plus the primary's share.
//!
//! Not here: the stations this scales (`qn::ceph::build`), the PG count's validation
//! (`spec`), or any time-varying hot spot (the closed network's random routing already
//! carries the instantaneous imbalance of a uniform placement).

use statrs::distribution::{Binomial, Discrete, DiscreteCDF};

use crate::spec::{Protection, Scenario};

/// PGs per OSD (counting every replica or shard) Ceph's PG autoscaler aims for when a pool
/// states no `pg_count`: `mon_target_pg_per_osd` = 100.
pub const TARGET_PGS_PER_OSD: f64 = 100.0;

/// The expected ratio of the busiest unit's work to the mean, for `units` units and `pgs`
/// placement groups that each put one piece of work on `per_pg` distinct units chosen
/// pseudo-randomly; `even_within` PGs when a balancer evens the counts (the spread is then
/// at most that). 1 for a single unit or when every PG covers every unit.
pub fn busiest_to_mean(units: f64, pgs: f64, per_pg: f64, even_within: Option<f64>) -> f64 {
    if units <= 1.0 || pgs < 1.0 || per_pg >= units {
        return 1.0;
    }
    let q = per_pg / units;
    let mean = pgs * q;
    let expected_max = cached_expected_max(units, pgs.round() as u64, q);
    let spread = (expected_max - mean).max(0.0);
    let spread = even_within.map_or(spread, |e| spread.min(e));
    1.0 + spread / mean
}

thread_local! {
    /// [`expected_max_binomial`] by its arguments' bits: a fit builds the same few
    /// scenarios' networks thousands of times (measured: `cephplan evaluate` 13 s without
    /// the imbalance, 47 s computing it on every build, back to the former with this).
    static EXPECTED_MAX: std::cell::RefCell<std::collections::HashMap<(u64, u64, u64), f64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// [`expected_max_binomial`], remembered per thread (at most 4,096 entries, then cleared).
fn cached_expected_max(k: f64, n: u64, q: f64) -> f64 {
    let key = (k.to_bits(), n, q.to_bits());
    if let Some(v) = EXPECTED_MAX.with(|m| m.borrow().get(&key).copied()) {
        return v;
    }
    let v = expected_max_binomial(k, n, q);
    EXPECTED_MAX.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 4096 {
            m.clear();
        }
        m.insert(key, v);
    });
    v
}

/// `E[max]` of `k` independent Binomial(n, q) counts: `Σ_{x≥0} (1 − F(x)^k)`. Below
/// `μ − 12σ` every term is 1 to double precision (the left tail there is below 1e-30), so
/// the sum starts there with one CDF evaluation and walks the PMF by its recurrence
/// `p(x+1) = p(x)·(n−x)/(x+1)·q/(1−q)` until the right tail's terms fall below 1e-12: a
/// few hundred steps even for 65,536 PGs, so a network build stays cheap for the fitter.
fn expected_max_binomial(k: f64, n: u64, q: f64) -> f64 {
    let mean = n as f64 * q;
    let Ok(b) = Binomial::new(q, n) else {
        return mean;
    };
    let sd = (mean * (1.0 - q)).sqrt();
    let start = (mean - 12.0 * sd).floor().max(0.0) as u64;
    let mut sum = start as f64;
    let mut cdf = b.cdf(start);
    let mut pmf = b.pmf(start);
    let odds = q / (1.0 - q);
    for x in start..=n {
        let t = 1.0 - cdf.min(1.0).powf(k);
        if t < 1e-12 && x as f64 > mean {
            break;
        }
        sum += t;
        pmf *= (n - x) as f64 / (x + 1) as f64 * odds;
        cdf += pmf;
    }
    sum
}

/// The busiest-to-mean work ratios of the OSD CPU and of the data (and WAL) devices, for a
/// scenario's reads and writes (the pool's `pg_count`, or the autoscaler's when unstated).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Imbalance {
    pub cpu_read: f64,
    pub cpu_write: f64,
    pub device_read: f64,
    pub device_write: f64,
}

/// The PG count the autoscaler gives a lone pool on `osds` OSDs with `width` OSDs per PG:
/// `100 × OSDs / width`, to the nearest power of two (at least 1).
pub fn autoscaled_pg_count(osds: f64, width: f64) -> f64 {
    let target = (TARGET_PGS_PER_OSD * osds / width).max(1.0);
    2f64.powf(target.log2().round())
}

/// The imbalance of a scenario's pool. `share` scales each ratio's excess over 1 (the model
/// parameter `pg_placement_imbalance`: 1 = the estimate above, 0 = perfectly even).
///
/// The CPU ratio is the busiest OSD's against what it can take. An OSD's work runs on its
/// own threads (16 shard workers, 3 messenger threads), and with `n` cores per OSD it uses
/// `C·(1 − e^(−n/C))` of them (`osd_core_scale`, `qn::ceph`); `curve_use` is `1 − e^(−n/C)`,
/// the share of the curve's asymptote `C` an OSD reaches at an even share of the node's
/// cores. The busiest OSD can take the idle cores of the others up to that asymptote, so
/// its work bounds the node only beyond `1/curve_use` times the mean: the CPU ratio is
/// `max(1, ratio·curve_use)`. A node short of cores (small `n`) pools them and sees no
/// imbalance; a node with many cores per OSD (`curve_use` → 1) sees all of it. (Taken
/// whole, the busiest OSD held to its share of the cores, the leave-one-system-out IOPS
/// MAPE was 40.8 % against 42.8 %, but one more drive per node lowered the IOPS of 142 of
/// 10,000 generated scenarios against 78: a node short of cores lost capacity with every
/// OSD added.)
pub fn imbalance(s: &Scenario, share: f64, curve_use: f64) -> Imbalance {
    let osds = f64::from(s.total_osds());
    let devices = f64::from(s.data.count_per_node * s.nodes);
    let osds_per_device = f64::from(s.osds_per_device.max(1));
    // OSDs a read's work touches, and a write's.
    let (read_width, write_width) = match s.protection {
        Protection::Replicated { size } => (1.0, f64::from(size)),
        Protection::Erasure { k, m } => (f64::from(k), f64::from(k + m)),
    };
    let pgs = s
        .spec
        .pool
        .pg_count
        .map_or_else(|| autoscaled_pg_count(osds, write_width), f64::from);
    let balanced = s.balancer == crate::spec::Balancer::Upmap;
    let scale = |k: f64| 1.0 + share * (k - 1.0);
    // Work over `units` (OSDs or devices, `per_unit` OSDs each): the primary's part
    // (never balanced) and the held part (balanced to ±1 PG per OSD from 16.2).
    let primary = |units: f64| busiest_to_mean(units, pgs, 1.0, None);
    let held = |units: f64, width: f64, per_unit: f64| {
        if width <= 1.0 {
            primary(units)
        } else {
            busiest_to_mean(units, pgs, width, balanced.then_some(per_unit))
        }
    };
    // An op of width `w` does 1/w of its CPU work at the primary's share and the rest
    // over all its OSDs (a read of a replicated pool: all at the primary).
    let cpu = |width: f64| {
        let width = width.min(osds);
        primary(osds) / width + (1.0 - 1.0 / width) * held(osds, width, 1.0)
    };
    let device = |width: f64| held(devices, width.min(devices), osds_per_device);
    Imbalance {
        cpu_read: scale((cpu(read_width) * curve_use).max(1.0)),
        cpu_write: scale((cpu(write_width) * curve_use).max(1.0)),
        device_read: scale(device(read_width)),
        device_write: scale(device(write_width)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn one_unit_or_full_coverage_is_even() {
        assert_eq!(busiest_to_mean(1.0, 128.0, 1.0, None), 1.0);
        assert_eq!(busiest_to_mean(3.0, 128.0, 3.0, None), 1.0);
        assert_eq!(busiest_to_mean(8.0, 0.0, 1.0, None), 1.0);
    }

    #[test]
    fn hand_computed_ratio() {
        // Oracle, a reference computation (Python, exact binomial PMF from math.comb, the
        // sum Σ_x (1 − F(x)^72) over every x): seed 002's pool, 1024 PGs over 72 OSDs,
        // primaries: μ = 14.222, E[max] = 23.895, ratio 1.68014; all three replicas
        // (q = 3/72): 1.37449.
        let k = busiest_to_mean(72.0, 1024.0, 1.0, None);
        assert!((k - 1.68014).abs() < 1e-4, "{k}");
        let k3 = busiest_to_mean(72.0, 1024.0, 3.0, None);
        assert!((k3 - 1.37449).abs() < 1e-4, "{k3}");
        // Balanced to ±1 PG: all three replicas, μ = 42.667, spread capped at 1: 1.0234.
        let b = busiest_to_mean(72.0, 1024.0, 3.0, Some(1.0));
        assert!((b - (1.0 + 1.0 / 42.6667)).abs() < 1e-4, "{b}");
    }

    #[test]
    fn estimate_matches_a_simulated_pseudo_random_placement() {
        // Oracle: Monte Carlo of what the estimate stands for: every PG picks `w` distinct
        // OSDs uniformly (CRUSH's pseudo-random placement without failure-domain limits);
        // the mean over placements of the busiest OSD's count over the mean count. The
        // independent-binomial estimate ignores the multinomial's negative correlation
        // between OSDs; measured within 2 % of the simulation at these sizes.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (units, pgs, w) in [
            (72usize, 1024usize, 1usize),
            (60, 2048, 3),
            (24, 64, 1),
            (8, 256, 1),
        ] {
            let trials = 300;
            let mut sum = 0.0;
            for _ in 0..trials {
                let mut count = vec![0u32; units];
                for _ in 0..pgs {
                    let mut picked: Vec<usize> = Vec::with_capacity(w);
                    while picked.len() < w {
                        let o = rng.random_range(0..units);
                        if !picked.contains(&o) {
                            picked.push(o);
                        }
                    }
                    picked.iter().for_each(|&o| count[o] += 1);
                }
                let max = f64::from(*count.iter().max().unwrap());
                sum += max / (pgs as f64 * w as f64 / units as f64);
            }
            let simulated = sum / f64::from(trials);
            let estimate = busiest_to_mean(units as f64, pgs as f64, w as f64, None);
            let gap = (estimate - simulated).abs() / simulated;
            assert!(
                gap < 0.02,
                "{units} OSDs, {pgs} PGs × {w}: estimate {estimate:.4}, simulated {simulated:.4}"
            );
        }
    }

    #[test]
    fn autoscaler_target_is_a_power_of_two() {
        // 72 OSDs × 100 / 3 = 2400 → 2048; 8 OSDs × 100 / 3 = 266.7 → 256; 1 OSD → 32.
        assert_eq!(autoscaled_pg_count(72.0, 3.0), 2048.0);
        assert_eq!(autoscaled_pg_count(8.0, 3.0), 256.0);
        assert_eq!(autoscaled_pg_count(1.0, 3.0), 32.0);
    }

    #[test]
    fn more_pgs_spread_work_more_evenly() {
        let mut last = f64::INFINITY;
        for pgs in [64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0] {
            let k = busiest_to_mean(60.0, pgs, 1.0, None);
            assert!(k < last && k > 1.0, "{pgs}: {k}");
            last = k;
        }
    }
}
