//! Ratio rows: measurements that compare two systems (seed 003's x86/ARM ratios of
//! `rados bench` throughput), fitted after the main calibration.
//!
//! A ratio row names the numerator's scenario (`scenario`) and the denominator's
//! (`ratio_reference`, a `.toml` path relative to the CSV); the row's workload cells apply
//! to both. Its prediction is `metric(numerator) / metric(reference)` under the same
//! workload, and its residual `ln(predicted / measured)`, in measurement-noise units as
//! for absolute rows.
//!
//! A ratio says nothing about absolute cost (a model twice as slow everywhere predicts the
//! same ratio), and the seed-003 hardware is mostly assumed, so ratio rows do not enter
//! the main fit nor the leave-one-system-out evaluation. They fit only the factors no
//! absolute run informs — the CPU efficiency of an instruction set or generation that
//! appears in a ratio scenario and in no absolute one (`arch_efficiency.armv7` for seed
//! 003's 32-bit ARM) — with every other parameter held at the main fit, and the report
//! lists each row with its error ([`RatioFit`]).
//!
//! Not here: the main fit (`calibrate::ceph`), the CSV format (`data`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ceph::{
    apply_overrides, calibration_solve_options, prior_terms, CalibrateError, CalibrationReport,
    NotModelled, ParameterEstimate, PreparedRun, MEASUREMENT_NOISE_REL,
};
use super::lm::{fit, FitOptions, FitProblem, Termination};
use crate::data::{MeasuredRun, RatioMetric, RunKind};
use crate::model::{names, ModelParams};
use crate::progress::Progress;
use crate::solve::{solve, SolveOptions};
use crate::spec::{Catalogue, CpuEntry, Scenario, ScenarioSpec};

/// A ratio row ready for prediction: both systems' scenarios with the row's workload.
#[derive(Debug, Clone)]
pub struct PreparedRatio {
    pub run: MeasuredRun,
    /// The numerator system (`scenario`).
    pub scenario: Scenario,
    /// The denominator system (`ratio_reference`).
    pub reference: Scenario,
}

/// The reference of a ratio row as a scenario path, when it is one (`*.toml`), resolved
/// against the CSV's directory.
fn reference_path(run: &MeasuredRun) -> Option<PathBuf> {
    let r = run.measured.ratio.as_ref()?;
    let rel = r.reference.trim();
    if !rel.ends_with(".toml") {
        return None;
    }
    let dir = run
        .origin
        .as_ref()
        .and_then(|(p, _)| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    Some(dir.join(rel))
}

/// Loads `path` (cached), applies the row's workload cells and validates.
fn load(
    path: &Path,
    run: &MeasuredRun,
    cat: &Catalogue,
    cache: &mut BTreeMap<PathBuf, ScenarioSpec>,
) -> Result<Scenario, CalibrateError> {
    let err = |message: String| CalibrateError::Scenario {
        run_id: run.run_id.clone(),
        origin: run
            .origin
            .as_ref()
            .map(|(p, l)| format!("{}:{}", p.display(), l))
            .unwrap_or_default(),
        path: path.to_path_buf(),
        message,
    };
    let mut spec = match cache.get(path) {
        Some(s) => s.clone(),
        None => {
            let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
            let s = ScenarioSpec::parse(&text, &path.display().to_string())
                .map_err(|e| err(e.to_string()))?;
            cache.insert(path.to_path_buf(), s.clone());
            s
        }
    };
    apply_overrides(&mut spec, run);
    spec.validate(cat).map_err(|e| {
        err(format!(
            "{e} (after applying the row's workload cells; check them)"
        ))
    })
}

/// The ratio rows with scenario files for both systems, prepared; the other ratio rows
/// with the reason. Non-ratio rows are ignored (see `ceph::prepare_runs`).
pub fn prepare_ratios(
    runs: &[MeasuredRun],
    cat: &Catalogue,
) -> Result<(Vec<PreparedRatio>, Vec<NotModelled>), CalibrateError> {
    let mut cache = BTreeMap::new();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for r in runs.iter().filter(|r| r.kind == RunKind::Ratio) {
        match (&r.scenario_resolved, reference_path(r)) {
            (Some(num), Some(den)) => out.push(PreparedRatio {
                run: r.clone(),
                scenario: load(num, r, cat, &mut cache)?,
                reference: load(&den, r, cat, &mut cache)?,
            }),
            _ => skipped.push(NotModelled {
                run_id: r.run_id.clone(),
                system_id: r.system_id.clone(),
                reason: ratio_unfitted_reason(),
            }),
        }
    }
    Ok((out, skipped))
}

/// Why a ratio row without two scenario files is not fitted.
pub fn ratio_unfitted_reason() -> String {
    "ratio row without scenario files for both systems (scenario and a .toml ratio_reference): recorded, not fitted".into()
}

/// Why `prepare_runs` leaves a ratio row with two scenarios out of the absolute fit.
pub fn ratio_stage_reason() -> String {
    "ratio row: not in the absolute fit nor in leave-one-system-out; `cephplan calibrate` fits the factors only ratio rows inform from it (calibrate::ratio)".into()
}

fn metric_of(p: &super::ceph::Predicted, m: RatioMetric) -> f64 {
    match m {
        RatioMetric::Iops => p.iops,
        RatioMetric::Bandwidth => p.bandwidth_bytes_per_sec,
        RatioMetric::LatencyMean => p.latency_mean_secs,
    }
}

/// The two systems' predictions and their ratio for a row, `(numerator, reference,
/// ratio)` in the row's metric.
pub fn predicted_ratio(
    r: &PreparedRatio,
    p: &ModelParams,
    opts: &SolveOptions,
) -> Result<(f64, f64, f64), String> {
    let metric = r
        .run
        .measured
        .ratio
        .as_ref()
        .map_or(RatioMetric::Iops, |x| x.metric);
    let one = |s: &Scenario| -> Result<f64, String> {
        let net = crate::qn::ceph::build_with(s, p, crate::qn::ceph::Notes::Skip)
            .map_err(|e| e.to_string())?;
        let sol = solve(&net.network, opts).map_err(|e| e.to_string())?;
        let c = &sol.classes[0];
        let iops = c.throughput_per_sec;
        if !(iops.is_finite() && iops > 0.0 && c.response_time_secs.is_finite()) {
            return Err(format!("the solver returned throughput {iops}"));
        }
        let pred = super::ceph::Predicted {
            iops,
            bandwidth_bytes_per_sec: iops * s.block_size_bytes as f64,
            latency_mean_secs: c.response_time_secs,
        };
        Ok(metric_of(&pred, metric))
    };
    let a = one(&r.scenario)?;
    let b = one(&r.reference)?;
    Ok((a, b, a / b))
}

/// The CPU-efficiency factor a CPU uses: its generation's when the model has one, else
/// its instruction set's; None for x86_64 without a generation (the reference).
fn cpu_factor(base: &ModelParams, cpu: &CpuEntry) -> Option<String> {
    if let Some(u) = cpu.uarch {
        let k = format!("{}{}", names::UARCH_PREFIX, u.as_str());
        if base.param.contains_key(&k) {
            return Some(k);
        }
    }
    (cpu.arch.as_str() != "x86_64").then(|| format!("{}{}", names::ARCH_PREFIX, cpu.arch.as_str()))
}

/// The factors ratio rows fit: CPU factors of a ratio scenario's OSD or client CPU that
/// no absolute run's scenario uses (the absolute fit and the sourced priors decide the
/// others), present in `base` or `prior`. Sorted.
pub fn ratio_fit_names(
    ratios: &[PreparedRatio],
    absolute: &[PreparedRun],
    base: &ModelParams,
    prior: &ModelParams,
) -> Vec<String> {
    let cpus = |s: &Scenario| [s.node_cpu.clone(), s.client_cpu.clone()];
    let used: BTreeSet<String> = absolute
        .iter()
        .flat_map(|r| cpus(&r.scenario))
        .filter_map(|c| cpu_factor(base, &c))
        .collect();
    ratios
        .iter()
        .flat_map(|r| cpus(&r.scenario).into_iter().chain(cpus(&r.reference)))
        .filter_map(|c| cpu_factor(base, &c))
        .filter(|k| !used.contains(k))
        .filter(|k| base.param.contains_key(k) || prior.param.contains_key(k))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One ratio row: measured against predicted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioComparison {
    pub run_id: String,
    pub system_id: String,
    pub metric: RatioMetric,
    pub measured: f64,
    pub predicted: f64,
    pub error_pct: f64,
    /// The numerator system's and the reference system's predicted figure.
    pub predicted_numerator: f64,
    pub predicted_reference: f64,
}

/// What the ratio stage fitted and how well its rows are reproduced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatioFit {
    pub parameters: Vec<ParameterEstimate>,
    pub runs: Vec<RatioComparison>,
    /// Mean absolute error of the ratio rows, %.
    pub mape: Option<f64>,
    pub termination: Option<Termination>,
    pub warnings: Vec<String>,
}

impl RatioFit {
    /// Each ratio row with its error and both systems' predicted figures, as `cephplan
    /// calibrate` prints them and the app's Calibration page shows them: header and rows.
    pub fn table(&self) -> ([&'static str; 7], Vec<Vec<String>>) {
        let rows = self
            .runs
            .iter()
            .map(|c| {
                vec![
                    c.run_id.clone(),
                    format!("{:?}", c.metric).to_lowercase(),
                    format!("{:.3}", c.measured),
                    format!("{:.3}", c.predicted),
                    format!("{:+.1}", c.error_pct),
                    format!("{:.4e}", c.predicted_numerator),
                    format!("{:.4e}", c.predicted_reference),
                ]
            })
            .collect();
        (
            [
                "ratio run",
                "metric",
                "measured",
                "predicted",
                "error %",
                "numerator",
                "reference",
            ],
            rows,
        )
    }
}

struct RatioProblem<'a> {
    ratios: &'a [PreparedRatio],
    base: ModelParams,
    names: Vec<String>,
    priors: Vec<(f64, f64)>,
    solve: SolveOptions,
}

impl RatioProblem<'_> {
    fn params_at(&self, x: &[f64]) -> ModelParams {
        super::ceph::with_log_values(&self.base, &self.names, x)
    }
}

impl FitProblem for RatioProblem<'_> {
    fn parameter_names(&self) -> Vec<String> {
        self.names.iter().map(|n| format!("ln({n})")).collect()
    }
    fn residual_count(&self) -> usize {
        self.ratios.len() + self.priors.len()
    }
    fn residuals(&self, x: &[f64]) -> Option<Vec<f64>> {
        let p = self.params_at(x);
        let mut out = Vec::with_capacity(self.residual_count());
        for r in self.ratios {
            let (_, _, pred) = predicted_ratio(r, &p, &self.solve).ok()?;
            let meas = r.run.measured.ratio.as_ref()?.value;
            out.push((pred / meas).ln() / MEASUREMENT_NOISE_REL);
        }
        for (xi, (mu, w)) in x.iter().zip(&self.priors) {
            out.push((xi - mu) / w);
        }
        Some(out)
    }
}

/// Fits `names` (see [`ratio_fit_names`]) to the ratio rows with every other parameter of
/// `model` held, and compares every row (exact MVA, as `predict`). Returns the fit and
/// `model` with the fitted factors (source noting the fit).
pub fn fit_ratios(
    ratios: &[PreparedRatio],
    model: &ModelParams,
    prior: &ModelParams,
    names: &[String],
    lm: &FitOptions,
    progress: &dyn Progress,
) -> (RatioFit, ModelParams) {
    let mut base = model.clone();
    for n in names {
        if !base.param.contains_key(n) {
            if let Some(p) = prior.param.get(n) {
                base.param.insert(n.clone(), p.clone());
            }
        }
    }
    let names: Vec<String> = names
        .iter()
        .filter(|n| base.param.contains_key(*n))
        .cloned()
        .collect();
    let mut warnings = Vec::new();
    let (fitted, parameters, termination) = if names.is_empty() || ratios.is_empty() {
        (base.clone(), Vec::new(), None)
    } else {
        let priors = prior_terms(&base, prior, &names);
        let problem = RatioProblem {
            ratios,
            base: base.clone(),
            names: names.clone(),
            priors: priors.clone(),
            solve: calibration_solve_options(),
        };
        let x0: Vec<f64> = names
            .iter()
            .map(|n| base.param[n].value.max(1e-300).ln())
            .collect();
        let outcome = fit(&problem, &x0, lm, progress);
        let p = problem.params_at(&outcome.values());
        let params = names
            .iter()
            .zip(&outcome.parameters)
            .zip(&priors)
            .map(|((n, lp), (mu, _))| {
                let q = &p.param[n];
                ParameterEstimate {
                    name: n.clone(),
                    unit: q.unit.clone(),
                    prior: mu.exp(),
                    value: q.value,
                    std_error: lp.std_error.map(|s| s * q.value),
                    interval_low: lp.interval_low.map(f64::exp),
                    interval_high: lp.interval_high.map(f64::exp),
                    at_bound: q.value <= q.lower || q.value >= q.upper,
                }
            })
            .collect::<Vec<_>>();
        for e in params.iter().filter(|e| e.at_bound) {
            warnings.push(format!(
                "{} = {} (ratio stage) sits on a bound of the model file: the ratio rows push it beyond its assumed range, a sign the assumed hardware or the model misses an effect",
                e.name, e.value
            ));
        }
        (p, params, Some(outcome.termination))
    };
    let mut model = fitted;
    for e in &parameters {
        let q = model.param.get_mut(&e.name).expect("fitted");
        q.std_error = e.std_error;
        q.source = format!(
            "fitted by cephplan calibrate to {} ratio rows, every other parameter held at the main fit (prior {}); {}",
            ratios.len(),
            e.prior,
            prior.param.get(&e.name).map_or("", |p| p.source.as_str())
        );
    }
    let exact = SolveOptions::default();
    let mut runs = Vec::new();
    for r in ratios {
        let Some(m) = r.run.measured.ratio.as_ref() else {
            continue;
        };
        match predicted_ratio(r, &model, &exact) {
            Ok((a, b, pred)) => runs.push(RatioComparison {
                run_id: r.run.run_id.clone(),
                system_id: r.run.system_id.clone(),
                metric: m.metric,
                measured: m.value,
                predicted: pred,
                error_pct: 100.0 * (pred / m.value - 1.0),
                predicted_numerator: a,
                predicted_reference: b,
            }),
            Err(e) => warnings.push(format!("ratio run {}: {e}", r.run.run_id)),
        }
    }
    let mape = (!runs.is_empty())
        .then(|| runs.iter().map(|c| c.error_pct.abs()).sum::<f64>() / runs.len() as f64);
    (
        RatioFit {
            parameters,
            runs,
            mape,
            termination,
            warnings,
        },
        model,
    )
}

/// The whole calibration `cephplan calibrate` and the app's Calibration page run: the main
/// fit of the absolute runs ([`super::ceph::calibrate`]), then the ratio rows' factors
/// with every other parameter held at it ([`fit_ratios`]), put into the one report.
#[allow(clippy::too_many_arguments)]
pub fn calibrate_with_ratios(
    prepared: &[PreparedRun],
    not_modelled: Vec<NotModelled>,
    ratios: &[PreparedRatio],
    start: &ModelParams,
    prior: &ModelParams,
    datasets: &[PathBuf],
    opts: &super::ceph::CalibrateOptions,
    progress: &dyn Progress,
) -> Result<(CalibrationReport, ModelParams), CalibrateError> {
    let (mut report, model) = super::ceph::calibrate(
        prepared,
        not_modelled,
        start,
        prior,
        datasets,
        opts,
        progress,
    )?;
    let names = ratio_fit_names(ratios, prepared, &model, prior);
    let (ratio_fit, model) = fit_ratios(ratios, &model, prior, &names, &opts.lm, progress);
    apply_ratio_fit(&mut report, ratio_fit);
    Ok((report, model))
}

/// Puts a ratio fit into a calibration report: its rows leave `not_modelled`.
pub fn apply_ratio_fit(report: &mut CalibrationReport, fit: RatioFit) {
    let fitted: BTreeSet<&str> = fit.runs.iter().map(|c| c.run_id.as_str()).collect();
    report
        .not_modelled
        .retain(|n| !fitted.contains(n.run_id.as_str()));
    report.warnings.extend(fit.warnings.iter().cloned());
    report.ratios = Some(fit);
}

#[cfg(test)]
#[path = "ratio_tests.rs"]
mod tests;
