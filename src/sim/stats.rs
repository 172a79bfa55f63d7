//! Output analysis: warm-up detection (MSER-5) on a bounded series of batch means, and
//! confidence intervals across independent replications (Student t).
//!
//! MSER-5 (White 1997; White, Cobb & Spratt 2000, "A comparison of five steady-state
//! truncation heuristics", Proc. Winter Simulation Conference): form batch means of 5
//! observations, z₁…z_k, and truncate the first d* batches where d* minimises
//! Σ_{j>d}(z_j − z̄_d)² / (k−d)²; the rule is trusted only if d* ≤ k/2. To keep memory flat,
//! [`BatchSeries`] holds at most [`BatchSeries::CAP`] batches and merges neighbours (doubling
//! the batch size) when full, so long pilots become MSER-5·2ʲ, the same statistic on
//! coarser batches.
//!
//! Not here: the event loop (`sim::engine`), the stopping rule (`sim`).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Bounded series of batch sums of a response-time sequence, with the simulated time at
/// which each batch ended.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSeries {
    batch_len: u64,
    cur_sum: f64,
    cur_n: u64,
    sums: Vec<f64>,
    end_times: Vec<f64>,
}

impl Default for BatchSeries {
    fn default() -> Self {
        Self::new()
    }
}

/// Result of MSER-5 on one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truncation {
    /// Simulated time at which the truncated prefix ends (0 if none).
    pub time_secs: f64,
    /// Observations removed.
    pub observations: u64,
    /// Batches in the series.
    pub batches: usize,
    /// False if d* > k/2: the series is too short to trust the rule.
    pub reliable: bool,
}

impl BatchSeries {
    /// Most batches kept before neighbours are merged.
    pub const CAP: usize = 4096;

    pub fn new() -> Self {
        Self {
            batch_len: 5,
            cur_sum: 0.0,
            cur_n: 0,
            sums: Vec::with_capacity(Self::CAP),
            end_times: Vec::with_capacity(Self::CAP),
        }
    }

    #[inline]
    pub fn push(&mut self, value: f64, now: f64) {
        self.cur_sum += value;
        self.cur_n += 1;
        if self.cur_n == self.batch_len {
            if self.sums.len() == Self::CAP {
                for i in 0..Self::CAP / 2 {
                    self.sums[i] = self.sums[2 * i] + self.sums[2 * i + 1];
                    self.end_times[i] = self.end_times[2 * i + 1];
                }
                self.sums.truncate(Self::CAP / 2);
                self.end_times.truncate(Self::CAP / 2);
                self.batch_len *= 2;
                // The batch just completed has the old length; fold it into a half-filled
                // new batch.
                self.cur_n = self.batch_len / 2;
                return;
            }
            self.sums.push(self.cur_sum);
            self.end_times.push(now);
            self.cur_sum = 0.0;
            self.cur_n = 0;
        }
    }

    pub fn batches(&self) -> usize {
        self.sums.len()
    }

    /// MSER on the batch means. `None` with fewer than 4 batches.
    pub fn mser(&self) -> Option<Truncation> {
        let k = self.sums.len();
        if k < 4 {
            return None;
        }
        let b = self.batch_len as f64;
        let z: Vec<f64> = self.sums.iter().map(|s| s / b).collect();
        // Suffix sums of z and z² give each candidate's statistic in O(1).
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut best = (f64::INFINITY, 0usize);
        let mut stats = vec![0.0; k];
        for d in (0..k).rev() {
            s1 += z[d];
            s2 += z[d] * z[d];
            let n = (k - d) as f64;
            let ss = (s2 - s1 * s1 / n).max(0.0);
            stats[d] = ss / (n * n);
        }
        // Candidates d = 0 ..= k−2 (at least two batches remain).
        for (d, &v) in stats.iter().enumerate().take(k - 1) {
            if v < best.0 {
                best = (v, d);
            }
        }
        let d = best.1;
        Some(Truncation {
            time_secs: if d == 0 { 0.0 } else { self.end_times[d - 1] },
            observations: d as u64 * self.batch_len,
            batches: k,
            reliable: d <= k / 2,
        })
    }
}

/// A point estimate with a two-sided confidence interval from independent replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    /// Half-width of the confidence interval; `None` with fewer than 2 replications.
    pub half_width: Option<f64>,
}

impl Estimate {
    /// Mean and t-based half-width `t_{1−α/2, n−1} · s / √n` at `confidence`.
    pub fn from_replications(xs: &[f64], confidence: f64) -> Self {
        let n = xs.len();
        if n == 0 {
            return Self {
                mean: f64::NAN,
                half_width: None,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Self {
                mean,
                half_width: None,
            };
        }
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .expect("n ≥ 2 gives a valid t distribution")
            .inverse_cdf(0.5 + 0.5 * confidence);
        Self {
            mean,
            half_width: Some(t * (var / n as f64).sqrt()),
        }
    }

    /// Half-width relative to |mean| (∞ when unknown or the mean is zero).
    pub fn relative_half_width(&self) -> f64 {
        match self.half_width {
            Some(h) if self.mean != 0.0 => h / self.mean.abs(),
            Some(0.0) => 0.0,
            _ => f64::INFINITY,
        }
    }

    /// True if `x` lies within the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.half_width.is_some_and(|h| (x - self.mean).abs() <= h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval_matches_tables() {
        // t_{0.975, 9} = 2.262 (any Student-t table, e.g. Montgomery & Runger, Table V).
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = Estimate::from_replications(&xs, 0.95);
        let s = (xs.iter().map(|x| (x - 5.5) * (x - 5.5)).sum::<f64>() / 9.0).sqrt();
        assert_eq!(e.mean, 5.5);
        let h = e.half_width.unwrap();
        assert!((h / (s / 10f64.sqrt()) - 2.262).abs() < 1e-3, "{h}");
        assert!(e.contains(7.0) && !e.contains(8.0));
        assert_eq!(Estimate::from_replications(&[3.0], 0.95).half_width, None);
    }

    #[test]
    fn mser_finds_an_initial_transient() {
        // 200 observations at 10 then 2,000 at 1 (± a deterministic ripple): the transient
        // is the first 40 batches.
        let mut s = BatchSeries::new();
        for i in 0..2200u32 {
            let v = if i < 200 { 10.0 } else { 1.0 } + 0.1 * f64::from(i % 7);
            s.push(v, f64::from(i));
        }
        let t = s.mser().unwrap();
        assert!(t.reliable);
        assert_eq!(t.observations, 200);
        assert_eq!(t.time_secs, 199.0);
    }

    #[test]
    fn series_memory_is_bounded() {
        let mut s = BatchSeries::new();
        for i in 0..1_000_000u32 {
            s.push(1.0 + f64::from(i % 3), f64::from(i));
        }
        assert!(s.batches() <= BatchSeries::CAP);
        assert!(s.batches() >= BatchSeries::CAP / 2);
        // Merged batch sums keep the total: every batch mean of a 0,1,2 cycle is ≈ 2.
        let t = s.mser().unwrap();
        assert!(t.reliable);
    }
}
