//! Service- and think-time distributions of the simulator and their samplers.
//!
//! A [`Dist`] is what a model states (serde, validated); a `Sampler` is its compiled,
//! `Copy` form used in the event loop (an enum, no dynamic dispatch). Every sample is a
//! standard variate (uniform, or unit exponential by the ziggurat method of `rand_distr`)
//! from one explicit random stream times the distribution's scale, so a change of a mean
//! scales the samples of that stream exactly and leaves every other stream untouched
//! (common random numbers).
//!
//! The two-moment family [`Dist::TwoMoment`] matches a mean and a squared coefficient of
//! variation (SCV = variance / mean²):
//! - SCV = 0: deterministic; SCV = 1: exponential;
//! - SCV > 1: two-phase hyper-exponential with *balanced means* (each phase contributes
//!   half of the mean): p₁ = ½(1 + √((c²−1)/(c²+1))), μ₁ = 2p₁/m, μ₂ = 2(1−p₁)/m
//!   (Whitt 1982, "Approximating a point process by a renewal process, I: two basic
//!   methods", Operations Research 30(1));
//! - 0 < SCV < 1: mixture of Erlang(k−1) and Erlang(k) with a common rate, k = ⌈1/c²⌉,
//!   p = [k c² − √(k(1+c²) − k²c²)] / (1+c²), μ = (k−p)/m (Tijms 2003, *A First Course in
//!   Stochastic Models*, two-moment fits). It matches mean and SCV exactly and, unlike a
//!   lognormal, keeps the support bounded below by 0 with a light tail.
//!
//! Not here: fitting distributions to data.

use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// A non-negative random duration, stated by its mean (seconds) and shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dist {
    /// Exponential with the given mean.
    Exponential { mean_secs: f64 },
    /// Always exactly `secs`.
    Deterministic { secs: f64 },
    /// Mean and squared coefficient of variation; see the module docs for the family.
    TwoMoment { mean_secs: f64, scv: f64 },
}

/// The longest service or think time a simulation takes, seconds (10⁶ s, 11.6 days): any
/// longer is a unit slip (milliseconds written as seconds, or worse), whose simulation
/// would run its whole event budget and measure nothing.
pub const MAX_DIST_SECS: f64 = 1e6;

/// The largest squared coefficient of variation a two-moment distribution takes (100).
/// Its hyperexponential puts probability about 1 / (4·scv) on a long phase that carries
/// half the mean: beyond this the long services are too rare to be drawn often enough in a
/// run, the sampled mean falls short of the distribution's (at scv 10⁸ a disk-bound
/// scenario simulated at twice its IOPS, session 54's audit), and at scv 10⁴ no latency
/// could be estimated at all.
pub const MAX_SCV: f64 = 100.0;

impl Dist {
    pub fn exponential(mean_secs: f64) -> Self {
        Dist::Exponential { mean_secs }
    }
    pub fn deterministic(secs: f64) -> Self {
        Dist::Deterministic { secs }
    }
    pub fn two_moment(mean_secs: f64, scv: f64) -> Self {
        Dist::TwoMoment { mean_secs, scv }
    }

    pub fn mean_secs(&self) -> f64 {
        match *self {
            Dist::Exponential { mean_secs } | Dist::TwoMoment { mean_secs, .. } => mean_secs,
            Dist::Deterministic { secs } => secs,
        }
    }

    /// The same shape with its mean (every duration) multiplied by `factor`.
    pub fn scaled(&self, factor: f64) -> Self {
        match *self {
            Dist::Exponential { mean_secs } => Dist::Exponential {
                mean_secs: mean_secs * factor,
            },
            Dist::Deterministic { secs } => Dist::Deterministic {
                secs: secs * factor,
            },
            Dist::TwoMoment { mean_secs, scv } => Dist::TwoMoment {
                mean_secs: mean_secs * factor,
                scv,
            },
        }
    }

    /// Squared coefficient of variation.
    pub fn scv(&self) -> f64 {
        match *self {
            Dist::Exponential { .. } => 1.0,
            Dist::Deterministic { .. } => 0.0,
            Dist::TwoMoment { scv, .. } => scv,
        }
    }

    /// `Err((field, value))` if a parameter is not finite and ≥ 0, or a time is longer than
    /// [`MAX_DIST_SECS`] (a unit slip: the clock's resolution and the run length are lost).
    pub(crate) fn check(&self) -> Result<(), (&'static str, f64)> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        let time = |v: f64| ok(v) && v <= MAX_DIST_SECS;
        match *self {
            Dist::Exponential { mean_secs } if !time(mean_secs) => Err(("mean_secs", mean_secs)),
            Dist::Deterministic { secs } if !time(secs) => Err(("secs", secs)),
            Dist::TwoMoment { mean_secs, .. } if !time(mean_secs) => Err(("mean_secs", mean_secs)),
            Dist::TwoMoment { scv, .. } if !(ok(scv) && scv <= MAX_SCV) => Err(("scv", scv)),
            _ => Ok(()),
        }
    }

    /// Compiles to a sampler. The parameters must have passed [`Dist::check`].
    pub(crate) fn sampler(&self) -> Sampler {
        let m = self.mean_secs();
        let c2 = self.scv();
        if m == 0.0 || c2 == 0.0 {
            return Sampler::Deterministic { secs: m };
        }
        if c2 == 1.0 {
            return Sampler::Exponential { mean_secs: m };
        }
        if c2 > 1.0 {
            let p1 = 0.5 * (1.0 + ((c2 - 1.0) / (c2 + 1.0)).sqrt());
            return Sampler::HyperExp2 {
                p1,
                mean1_secs: m / (2.0 * p1),
                mean2_secs: m / (2.0 * (1.0 - p1)),
            };
        }
        let k = (1.0 / c2).ceil();
        let p = (k * c2 - (k * (1.0 + c2) - k * k * c2).max(0.0).sqrt()) / (1.0 + c2);
        let rate = (k - p) / m;
        Sampler::ErlangMix {
            p_short: p,
            k: k as u32,
            phase_mean_secs: 1.0 / rate,
        }
    }
}

/// Compiled form of a [`Dist`], cheap to copy and to sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sampler {
    Deterministic {
        secs: f64,
    },
    Exponential {
        mean_secs: f64,
    },
    HyperExp2 {
        p1: f64,
        mean1_secs: f64,
        mean2_secs: f64,
    },
    /// With probability `p_short` Erlang(k−1), else Erlang(k), phases of mean
    /// `phase_mean_secs`.
    ErlangMix {
        p_short: f64,
        k: u32,
        phase_mean_secs: f64,
    },
}

/// The generator of one random stream of the simulator: xoshiro256++ (Blackman & Vigna
/// 2021, "Scrambled linear pseudorandom number generators", ACM TOMS 47(4)), period
/// 2²⁵⁶ − 1, one 64-bit output in a few instructions; how streams are seeded is in
/// `engine`.
pub(crate) type SimRng = Xoshiro256PlusPlus;

/// A uniform in the open interval (0, 1) from the top 53 bits of one 64-bit draw.
#[inline]
pub(crate) fn uniform_open(rng: &mut SimRng) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// A unit-mean exponential variate (ziggurat; one 64-bit draw in most calls).
#[inline]
fn unit_exp(rng: &mut SimRng) -> f64 {
    Exp1.sample(rng)
}

impl Sampler {
    #[inline(always)]
    pub(crate) fn sample(&self, rng: &mut SimRng) -> f64 {
        match *self {
            Sampler::Deterministic { secs } => secs,
            Sampler::Exponential { mean_secs } => mean_secs * unit_exp(rng),
            Sampler::HyperExp2 {
                p1,
                mean1_secs,
                mean2_secs,
            } => {
                let mean = if uniform_open(rng) < p1 {
                    mean1_secs
                } else {
                    mean2_secs
                };
                mean * unit_exp(rng)
            }
            Sampler::ErlangMix {
                p_short,
                k,
                phase_mean_secs,
            } => {
                let n = if uniform_open(rng) < p_short {
                    k - 1
                } else {
                    k
                };
                let mut s = 0.0;
                for _ in 0..n {
                    s += unit_exp(rng);
                }
                phase_mean_secs * s
            }
        }
    }

    /// Exact first and second moments of the compiled distribution (used by tests and as a
    /// check that compilation preserved the stated mean and SCV).
    #[cfg(test)]
    fn moments(&self) -> (f64, f64) {
        match *self {
            Sampler::Deterministic { secs } => (secs, secs * secs),
            Sampler::Exponential { mean_secs } => (mean_secs, 2.0 * mean_secs * mean_secs),
            Sampler::HyperExp2 {
                p1,
                mean1_secs,
                mean2_secs,
            } => (
                p1 * mean1_secs + (1.0 - p1) * mean2_secs,
                2.0 * (p1 * mean1_secs * mean1_secs + (1.0 - p1) * mean2_secs * mean2_secs),
            ),
            Sampler::ErlangMix {
                p_short,
                k,
                phase_mean_secs: t,
            } => {
                let k = f64::from(k);
                // Erlang(n) with phase mean t: E = n t, E[S²] = n (n+1) t².
                (
                    (p_short * (k - 1.0) + (1.0 - p_short) * k) * t,
                    (p_short * (k - 1.0) * k + (1.0 - p_short) * k * (k + 1.0)) * t * t,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn scv_of(s: &Sampler) -> (f64, f64) {
        let (m1, m2) = s.moments();
        (m1, (m2 - m1 * m1) / (m1 * m1))
    }

    #[test]
    fn compiled_family_matches_mean_and_scv_exactly() {
        for &c2 in &[
            0.01, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.99, 1.0, 1.5, 2.0, 4.0, 10.0,
        ] {
            let s = Dist::two_moment(2e-3, c2).sampler();
            let (m, got) = scv_of(&s);
            assert!((m - 2e-3).abs() < 1e-15, "mean {m} for scv {c2}");
            assert!((got - c2).abs() < 1e-9, "scv {got} for {c2} ({s:?})");
        }
        assert_eq!(
            Dist::two_moment(1.0, 0.0).sampler(),
            Sampler::Deterministic { secs: 1.0 }
        );
    }

    #[test]
    fn sampled_moments_agree_with_exact_ones() {
        // 400k draws: the standard error of the sample mean is ≤ √(c²/n) ≈ 0.5 % for c² = 10.
        let mut rng = SimRng::seed_from_u64(7);
        for &c2 in &[0.3, 1.0, 4.0] {
            let s = Dist::two_moment(1.0, c2).sampler();
            let n = 400_000;
            let (mut a, mut b) = (0.0, 0.0);
            for _ in 0..n {
                let x = s.sample(&mut rng);
                a += x;
                b += x * x;
            }
            let mean = a / n as f64;
            let var = b / n as f64 - mean * mean;
            assert!(
                (mean - 1.0).abs() < 4.0 * (c2 / n as f64).sqrt(),
                "{c2}: {mean}"
            );
            assert!(
                (var / (mean * mean) - c2).abs() < 0.05 * c2.max(1.0),
                "{c2}: {var}"
            );
        }
    }

    #[test]
    fn check_rejects_bad_parameters() {
        assert_eq!(
            Dist::exponential(-1.0).check(),
            Err(("mean_secs", -1.0_f64))
        );
        assert!(Dist::two_moment(1.0, f64::NAN).check().is_err());
        assert!(Dist::two_moment(1.0, MAX_SCV).check().is_ok());
        assert!(Dist::two_moment(1.0, 1e8).check().is_err());
        assert!(Dist::deterministic(0.0).check().is_ok());
    }
}
