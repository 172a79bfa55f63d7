//! The Universal Scalability Law (Gunther) as the black-box baseline the queueing model
//! must beat: `X(N) = λN / (1 + σ(N−1) + κN(N−1))`, with N the I/Os in flight.
//!
//! A *series* is the absolute runs of one system with one pattern and block size. Runs of
//! different Ceph releases in a series get their own λ (the release scales throughput)
//! and share σ (contention) and κ (coherency), so seed 002's ten releases × two queue
//! depths form one identifiable series per direction. Fitting minimises relative errors
//! of throughput (IOPS, or bandwidth / block size). A series with no more points than
//! parameters is reported as not identifiable rather than fitted.
//!
//! Not here: anything about the Ceph model; the data module's row validation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::lm::{fit, FitOptions, FitOutcome, FitProblem};
use crate::data::{MeasuredRun, RunKind};
use crate::progress::Progress;

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslPoint {
    pub run_id: String,
    /// The λ group (Ceph release, or "" when the runs do not say).
    pub group: String,
    pub in_flight: f64,
    pub throughput_per_sec: f64,
}

/// Predicted vs measured throughput of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslRun {
    pub run_id: String,
    pub in_flight: f64,
    pub measured: f64,
    /// `None` where the fitted law has no positive throughput at this run's load (its
    /// denominator `1 + σ(N−1) + κN(N−1)` is not positive).
    pub predicted: Option<f64>,
    pub error_pct: Option<f64>,
    /// Leave-one-out prediction (refit without this run), when the rest identifies it.
    pub predicted_loo: Option<f64>,
    pub error_pct_loo: Option<f64>,
}

/// The USL fit of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslSeries {
    pub system_id: String,
    pub pattern: String,
    pub block_size_bytes: Option<u64>,
    /// `None` when the series has too few points to identify its parameters.
    pub fit: Option<FitOutcome>,
    pub runs: Vec<UslRun>,
    pub mape_in_sample: Option<f64>,
    pub mape_loo: Option<f64>,
    /// Runs whose leave-one-out prediction was possible (the others were the only run of
    /// their λ group).
    pub loo_runs: usize,
    pub note: String,
}

impl UslSeries {
    /// What a report calls the series: system, pattern and block size (`seed-002 read 64k`).
    pub fn label(&self) -> String {
        match self.block_size_bytes {
            Some(b) if b % 1024 == 0 => {
                format!("{} {} {}k", self.system_id, self.pattern, b / 1024)
            }
            Some(b) => format!("{} {} {b} B", self.system_id, self.pattern),
            None => format!("{} {}", self.system_id, self.pattern),
        }
    }
}

/// Runs that could not join any series, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslSkipped {
    pub run_id: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslReport {
    pub series: Vec<UslSeries>,
    pub skipped: Vec<UslSkipped>,
}

/// `λN / (1 + σ(N−1) + κN(N−1))`.
pub fn usl_throughput(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Least squares over `[ln λ_g…, σ, κ]` with relative-error residuals.
struct Problem {
    groups: Vec<String>,
    points: Vec<UslPoint>,
}

impl Problem {
    fn predict(&self, x: &[f64], p: &UslPoint) -> Option<f64> {
        let g = self.groups.iter().position(|g| *g == p.group)?;
        let (sigma, kappa) = (x[self.groups.len()], x[self.groups.len() + 1]);
        let den = 1.0 + sigma * (p.in_flight - 1.0) + kappa * p.in_flight * (p.in_flight - 1.0);
        (den > 0.0).then(|| x[g].exp() * p.in_flight / den)
    }
}

impl FitProblem for Problem {
    fn parameter_names(&self) -> Vec<String> {
        let mut n: Vec<String> = self
            .groups
            .iter()
            .map(|g| {
                if g.is_empty() {
                    "ln_lambda".to_string()
                } else {
                    format!("ln_lambda[{g}]")
                }
            })
            .collect();
        n.push("sigma".into());
        n.push("kappa".into());
        n
    }
    fn residual_count(&self) -> usize {
        self.points.len()
    }
    fn residuals(&self, x: &[f64]) -> Option<Vec<f64>> {
        self.points
            .iter()
            .map(|p| Some(self.predict(x, p)? / p.throughput_per_sec - 1.0))
            .collect()
    }
}

fn start(groups: &[String], points: &[UslPoint]) -> Vec<f64> {
    let mut x: Vec<f64> = groups
        .iter()
        .map(|g| {
            // λ ≈ throughput per in-flight I/O at the group's lightest load.
            let p = points
                .iter()
                .filter(|p| p.group == *g)
                .min_by(|a, b| a.in_flight.total_cmp(&b.in_flight))
                .expect("group has points");
            (p.throughput_per_sec / p.in_flight).ln()
        })
        .collect();
    x.push(1e-3);
    x.push(1e-7);
    x
}

fn fit_points(
    points: &[&UslPoint],
    opts: &FitOptions,
    progress: &dyn Progress,
) -> Option<(Problem, FitOutcome)> {
    let groups: Vec<String> = points
        .iter()
        .map(|p| p.group.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if points.len() <= groups.len() + 2 {
        return None;
    }
    let problem = Problem {
        groups: groups.clone(),
        points: points.iter().map(|p| (*p).clone()).collect(),
    };
    let x0 = start(&groups, &problem.points);
    let out = fit(&problem, &x0, opts, progress);
    Some((problem, out))
}

/// Builds the series from the runs (absolute runs that state their in-flight count) and
/// fits each, with leave-one-out cross-validation.
pub fn fit_usl(runs: &[MeasuredRun], opts: &FitOptions, progress: &dyn Progress) -> UslReport {
    let mut series: BTreeMap<(String, String, Option<u64>), Vec<UslPoint>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for r in runs.iter().filter(|r| r.kind == RunKind::Absolute) {
        let Some(n) = r.workload.in_flight() else {
            skipped.push(UslSkipped {
                run_id: r.run_id.clone(),
                reason: "the row does not state images × jobs × iodepth (or concurrency)".into(),
            });
            continue;
        };
        let bs = r.workload.block_size_bytes;
        let x = match (r.measured.iops, r.measured.bandwidth_bytes_per_sec, bs) {
            (Some(i), _, _) => i,
            (None, Some(b), Some(bs)) => b / bs as f64,
            _ => {
                skipped.push(UslSkipped {
                    run_id: r.run_id.clone(),
                    reason: "no iops, and no bandwidth with a block size".into(),
                });
                continue;
            }
        };
        let pattern = r
            .workload
            .pattern
            .map(|p| p.to_string())
            .unwrap_or_default();
        series
            .entry((r.system_id.clone(), pattern, bs))
            .or_default()
            .push(UslPoint {
                run_id: r.run_id.clone(),
                group: r.workload.ceph_release.clone().unwrap_or_default(),
                in_flight: n,
                throughput_per_sec: x,
            });
    }
    progress.start(series.len() as u64, "USL baseline");
    let mut out = Vec::new();
    for ((system_id, pattern, bs), points) in series {
        if progress.is_cancelled() {
            break;
        }
        out.push(fit_series(system_id, pattern, bs, &points, opts, progress));
        progress.advance(1);
    }
    UslReport {
        series: out,
        skipped,
    }
}

fn mape(errors: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = errors.map(f64::abs).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn fit_series(
    system_id: String,
    pattern: String,
    block_size_bytes: Option<u64>,
    points: &[UslPoint],
    opts: &FitOptions,
    progress: &dyn Progress,
) -> UslSeries {
    let refs: Vec<&UslPoint> = points.iter().collect();
    let Some((problem, fitted)) = fit_points(&refs, opts, progress) else {
        let groups = points
            .iter()
            .map(|p| &p.group)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        return UslSeries {
            system_id,
            pattern,
            block_size_bytes,
            fit: None,
            runs: Vec::new(),
            mape_in_sample: None,
            mape_loo: None,
            loo_runs: 0,
            note: format!(
                "not identifiable: {} run(s) for {} parameters (λ per release × {groups}, σ, κ); the USL needs more runs than parameters",
                points.len(),
                groups + 2
            ),
        };
    };
    let x = fitted.values();
    let mut runs = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let predicted = problem.predict(&x, p);
        let rest: Vec<&UslPoint> = points
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, q)| q)
            .collect();
        let loo = rest
            .iter()
            .any(|q| q.group == p.group)
            .then(|| fit_points(&rest, opts, progress))
            .flatten()
            .and_then(|(pr, o)| pr.predict(&o.values(), p));
        runs.push(UslRun {
            run_id: p.run_id.clone(),
            in_flight: p.in_flight,
            measured: p.throughput_per_sec,
            predicted,
            error_pct: predicted.map(|v| 100.0 * (v / p.throughput_per_sec - 1.0)),
            predicted_loo: loo,
            error_pct_loo: loo.map(|l| 100.0 * (l / p.throughput_per_sec - 1.0)),
        });
    }
    let loo_runs = runs.iter().filter(|r| r.error_pct_loo.is_some()).count();
    let unpredicted = runs.iter().filter(|r| r.predicted.is_none()).count();
    let note = if unpredicted > 0 {
        format!(
            "{unpredicted} of {} run(s) not predicted: the law the fit stopped at ({}) has no positive throughput at their load",
            runs.len(),
            fitted.termination.reason
        )
    } else {
        String::new()
    };
    UslSeries {
        system_id,
        pattern,
        block_size_bytes,
        mape_in_sample: mape(runs.iter().filter_map(|r| r.error_pct)),
        mape_loo: mape(runs.iter().filter_map(|r| r.error_pct_loo)),
        loo_runs,
        fit: Some(fitted),
        runs,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn pts(lambda: f64, sigma: f64, kappa: f64, ns: &[f64], group: &str) -> Vec<UslPoint> {
        ns.iter()
            .map(|&n| UslPoint {
                run_id: format!("{group}-{n}"),
                group: group.into(),
                in_flight: n,
                throughput_per_sec: usl_throughput(lambda, sigma, kappa, n),
            })
            .collect()
    }

    /// Seed 002's series (calibration-data/seed-002-epyc-7402-releases.csv: four releases,
    /// two depths each) do not identify their laws everywhere; a run the fitted law cannot
    /// predict is `null` in the JSON and reads back as such (it was NaN, which JSON writes
    /// as `null` and could not read back as a number).
    #[test]
    fn a_report_reads_back_from_its_json() {
        let (runs, _) = crate::data::load_runs(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/calibration-data/seed-002-epyc-7402-releases.csv"
        )))
        .unwrap();
        let r = fit_usl(&runs, &FitOptions::default(), &NoProgress);
        assert!(!r.series.is_empty());
        for run in r.series.iter().flat_map(|s| &s.runs) {
            assert_eq!(run.predicted.is_some(), run.error_pct.is_some());
            assert!(run.predicted.is_none_or(f64::is_finite), "{run:?}");
        }
        let back: UslReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn recovers_exact_usl_parameters_with_shared_contention() {
        // Two releases with different λ, shared σ = 0.02, κ = 1e-4 (values chosen for the
        // test; noise-free, so the fit must return them to solver precision).
        let mut p = pts(1000.0, 0.02, 1e-4, &[1.0, 4.0, 16.0, 64.0], "a");
        p.extend(pts(1500.0, 0.02, 1e-4, &[2.0, 8.0, 32.0], "b"));
        let s = fit_series(
            "s".into(),
            "randread".into(),
            None,
            &p,
            &FitOptions::default(),
            &NoProgress,
        );
        let f = s.fit.unwrap();
        let v = f.values();
        assert!((v[0].exp() / 1000.0 - 1.0).abs() < 1e-7, "{v:?}");
        assert!((v[1].exp() / 1500.0 - 1.0).abs() < 1e-7);
        assert!((v[2] / 0.02 - 1.0).abs() < 1e-6);
        assert!((v[3] / 1e-4 - 1.0).abs() < 1e-6);
        assert!(s.mape_in_sample.unwrap() < 1e-6);
        assert!(s.mape_loo.unwrap() < 1e-4);
        assert_eq!(s.loo_runs, 7);
    }

    #[test]
    fn too_few_points_is_reported_not_fitted() {
        let p = pts(1000.0, 0.02, 1e-4, &[4.0, 64.0], "a");
        let s = fit_series(
            "s".into(),
            "randread".into(),
            None,
            &p,
            &FitOptions::default(),
            &NoProgress,
        );
        assert!(s.fit.is_none());
        assert!(s.note.contains("not identifiable"), "{}", s.note);
    }
}
