//! How much a transfer figure owes to which systems happen to be in the corpus, and whether
//! one evaluation's figures are lower than another's by more than that.
//!
//! The headline figures of [`super::evaluate`] weigh every system the same, and the corpus
//! holds about a dozen systems: one system more or less moves the mean by points, and a
//! model change that lowers it by a few tenths may only have traded one system's error
//! for another's. The **system bootstrap** answers both questions with the same draws:
//!
//! - it draws the corpus's `n` systems `n` times with replacement ([`SYSTEM_RESAMPLES`]
//!   draws from a ChaCha8 stream of fixed seed [`RESAMPLE_SEED`], so a report reproduces),
//!   recomputes a figure over each draw (a system drawn twice weighs twice), and states the
//!   2.5th and 97.5th percentiles of the draws as the figure's 95 % range
//!   ([`system_range`]): the percentile interval of Efron & Tibshirani, *An Introduction to
//!   the Bootstrap* (1993), ch. 13, resampling the top level of grouped data (systems, not
//!   runs) as Davison & Hinkley, *Bootstrap Methods and their Application* (1997), §3.8
//!   advise when the groups are what varies;
//! - paired over the same held-out figures of two evaluations, each draw gives the change
//!   of the figure ([`compare`]); a change whose 95 % range holds zero is not told apart
//!   from which systems happen to be measured, whatever its sign
//!   ([`Verdict::Indistinguishable`]).
//!
//! Below [`MIN_SYSTEMS_FOR_RANGE`] systems no range is stated: a handful of values
//! resampled gives a range narrower than the truth (the percentile interval's known
//! small-sample undercoverage).
//!
//! It also reads and saves evaluation reports (`evaluate --against`, the app's "Save
//! evaluation") and gives the comparison's rows as text, so that the CLI's tables and the
//! app's grids show the same cells. Not here: the held-out predictions themselves
//! ([`super::evaluate`]), the tables' layout and printing (`cli`, `gui`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{EvaluationReport, HeldOut, SplitKind};
use crate::calibrate::ceph::Metric;

/// Draws of the systems per range.
pub const SYSTEM_RESAMPLES: u32 = 4000;
/// Seed of the draws' ChaCha8 stream.
pub const RESAMPLE_SEED: u64 = 20_261_206;
/// Systems a figure needs before its range is stated.
pub const MIN_SYSTEMS_FOR_RANGE: usize = 5;
/// A change smaller than this (percentage points) counts as none: two evaluations of the
/// same model differ in the last bits of their fits.
pub const CHANGE_TOLERANCE: f64 = 1e-9;
/// Version of [`TransferComparison`]'s JSON.
pub const COMPARISON_SCHEMA_VERSION: u32 = 1;

/// A 95 % range `(low, high)`, percent or percentage points.
pub type Range95 = (f64, f64);

/// The held-out figures of one system: absolute errors (percent) of its throughput and
/// mean-latency figures.
#[derive(Debug, Clone, Default)]
struct SystemErrors {
    throughput: Vec<f64>,
    latency: Vec<f64>,
}

/// Groups figures by system (sorted by system id).
fn by_system<'a>(figs: impl Iterator<Item = &'a HeldOut>) -> BTreeMap<&'a str, SystemErrors> {
    let mut per: BTreeMap<&str, SystemErrors> = BTreeMap::new();
    for h in figs {
        let e = per.entry(h.system_id.as_str()).or_default();
        if h.is_throughput() {
            e.throughput.push(h.error_pct.abs());
        } else {
            e.latency.push(h.error_pct.abs());
        }
    }
    per
}

/// `count` draws of `n` systems with replacement, each as how often every system was drawn.
fn draws(n: usize, count: u32) -> Vec<Vec<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(RESAMPLE_SEED);
    (0..count)
        .map(|_| {
            let mut times = vec![0u32; n];
            for _ in 0..n {
                times[rng.random_range(0..n)] += 1;
            }
            times
        })
        .collect()
}

/// Mean over systems of `value`, each system counted `times` (systems without a value
/// left out); None when no drawn system has one.
fn weighted_mean(values: &[Option<f64>], times: &[u32]) -> Option<f64> {
    let (sum, weight) = values
        .iter()
        .zip(times)
        .filter_map(|(v, &t)| v.map(|v| (v * f64::from(t), f64::from(t))))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    (weight > 0.0).then(|| sum / weight)
}

/// Median of the errors with each figure weighted `times / (its system's figure count)`:
/// [`super::ErrorSummary::iops_median`]'s rule, a system drawn twice weighing twice.
pub(super) fn weighted_median(errors: &[&[f64]], times: &[u32]) -> Option<f64> {
    let mut v: Vec<(f64, f64)> = errors
        .iter()
        .zip(times)
        .filter(|(e, &t)| t > 0 && !e.is_empty())
        .flat_map(|(e, &t)| {
            let w = f64::from(t) / e.len() as f64;
            e.iter().map(move |&x| (x, w))
        })
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = v.iter().map(|x| x.1).sum::<f64>() / 2.0;
    let mut acc = 0.0;
    for (e, w) in &v {
        acc += w;
        if acc >= half - 1e-12 {
            return Some(*e);
        }
    }
    v.last().map(|x| x.0)
}

/// The 2.5th and 97.5th percentiles (linear between order statistics) of `stats`.
fn percentile_range(mut stats: Vec<f64>) -> Option<Range95> {
    if stats.is_empty() {
        return None;
    }
    stats.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let x = p * (stats.len() - 1) as f64;
        let (i, f) = (x.floor() as usize, x.fract());
        let next = stats[(i + 1).min(stats.len() - 1)];
        stats[i] + f * (next - stats[i])
    };
    Some((q(0.025), q(0.975)))
}

/// Which figure of a set of held-out figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Figure {
    /// Mean over systems of the systems' throughput MAPE.
    IopsMape,
    /// The system-weighted median of the throughput errors.
    IopsMedian,
    /// Mean over systems of the systems' mean-latency MAPE.
    LatencyMape,
}

/// The figure over one draw of `systems`.
fn figure_of(systems: &[SystemErrors], times: &[u32], f: Figure) -> Option<f64> {
    let mape = |of: fn(&SystemErrors) -> &Vec<f64>| -> Vec<Option<f64>> {
        systems
            .iter()
            .map(|s| {
                let v = of(s);
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            })
            .collect()
    };
    match f {
        Figure::IopsMape => weighted_mean(&mape(|s| &s.throughput), times),
        Figure::LatencyMape => weighted_mean(&mape(|s| &s.latency), times),
        Figure::IopsMedian => {
            let errors: Vec<&[f64]> = systems.iter().map(|s| s.throughput.as_slice()).collect();
            weighted_median(&errors, times)
        }
    }
}

/// Systems with figures of the kind `f` needs.
fn systems_with(systems: &[SystemErrors], f: Figure) -> usize {
    systems
        .iter()
        .filter(|s| match f {
            Figure::IopsMape | Figure::IopsMedian => !s.throughput.is_empty(),
            Figure::LatencyMape => !s.latency.is_empty(),
        })
        .count()
}

/// The 95 % range of the systems-weighted IOPS MAPE and mean-latency MAPE of `figs` over
/// resampled systems: `(iops, latency)`, each None below [`MIN_SYSTEMS_FOR_RANGE`]
/// systems with such figures.
pub fn system_range<'a>(
    figs: impl Iterator<Item = &'a HeldOut>,
) -> (Option<Range95>, Option<Range95>) {
    let systems: Vec<SystemErrors> = by_system(figs).into_values().collect();
    if systems.len() < MIN_SYSTEMS_FOR_RANGE {
        return (None, None);
    }
    let all = draws(systems.len(), SYSTEM_RESAMPLES);
    let range = |f: Figure| {
        if systems_with(&systems, f) < MIN_SYSTEMS_FOR_RANGE {
            return None;
        }
        percentile_range(
            all.iter()
                .filter_map(|t| figure_of(&systems, t, f))
                .collect(),
        )
    };
    (range(Figure::IopsMape), range(Figure::LatencyMape))
}

/// One sentence for a summary's ranges, as `evaluate` and the app print it; None when
/// neither is stated.
pub fn range_text(iops: Option<Range95>, latency: Option<Range95>) -> Option<String> {
    let r = |v: Option<Range95>| v.map_or("-".into(), |(lo, hi)| format!("{lo:.1}-{hi:.1}"));
    (iops.is_some() || latency.is_some()).then(|| {
        format!(
            "95 % range with the systems drawn again ({SYSTEM_RESAMPLES} draws with replacement): IOPS/bandwidth MAPE {} %, mean latency MAPE {} %",
            r(iops),
            r(latency)
        )
    })
}

/// What the change of a figure between two evaluations says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Lower in every but 2.5 % of the draws: the 95 % range of the change is below zero.
    Lower,
    /// Higher: the range is above zero.
    Higher,
    /// The range holds zero: not told apart from which systems happen to be measured.
    Indistinguishable,
    /// Fewer than [`MIN_SYSTEMS_FOR_RANGE`] systems: no range is stated.
    TooFewSystems,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Lower => "lower",
            Verdict::Higher => "higher",
            Verdict::Indistinguishable => "not told apart from the systems' spread",
            Verdict::TooFewSystems => "too few systems for a range",
        }
    }
}

/// The change of one figure from the earlier evaluation to the later one (percentage
/// points; negative = lower, better).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureChange {
    pub before: Option<f64>,
    pub after: Option<f64>,
    pub change: Option<f64>,
    /// 95 % range of the change over the same draws of systems for both.
    pub range95: Option<Range95>,
    /// Share of the draws in which the figure is lower after than before (percent).
    pub lower_share: Option<f64>,
    pub verdict: Verdict,
}

/// One system's errors in both evaluations (percent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemChange {
    pub system_id: String,
    pub before_iops_mape: Option<f64>,
    pub after_iops_mape: Option<f64>,
    pub before_latency_mape: Option<f64>,
    pub after_latency_mape: Option<f64>,
}

/// How the leave-one-system-out figures changed between two evaluations of the same runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferComparison {
    pub schema_version: u32,
    /// Held-out figures matched between the two (every one: the sets must be equal).
    pub figures: usize,
    pub systems: Vec<SystemChange>,
    pub iops_mape: FigureChange,
    pub iops_median: FigureChange,
    pub latency_mape: FigureChange,
    pub resamples: u32,
    pub seed: u64,
}

/// Why two evaluations cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error(
        "the two evaluations hold different held-out figures ({only_before} only in the earlier one, {only_after} only in the later one, e.g. {example}): they were run on different runs or systems; evaluate both models on the same --data and compare again"
    )]
    DifferentFigures {
        only_before: usize,
        only_after: usize,
        example: String,
    },
    #[error(
        "the earlier evaluation holds no leave-one-system-out figures (cancelled, or run without --data runs): run `cephplan evaluate --data ... --format json` to completion and save its output"
    )]
    NoFigures,
    #[error(
        "the earlier evaluation was cancelled, so its figures cover only the systems finished before it stopped: run `cephplan evaluate --data ... --format json` to completion and save its output"
    )]
    Cancelled,
}

/// The leave-one-system-out figures keyed by (run, metric), with their system.
fn loso_keys(r: &EvaluationReport) -> BTreeMap<(&str, Metric), &HeldOut> {
    r.figures
        .iter()
        .filter(|h| h.kind == SplitKind::LeaveOneSystemOut)
        .map(|h| ((h.run_id.as_str(), h.metric), h))
        .collect()
}

/// Compares the leave-one-system-out figures of `after` with those of `before` (the same
/// held-out runs, metrics and systems), each change with its 95 % range over the same
/// draws of systems for both ([`SYSTEM_RESAMPLES`], seed [`RESAMPLE_SEED`]).
pub fn compare(
    before: &EvaluationReport,
    after: &EvaluationReport,
) -> Result<TransferComparison, CompareError> {
    if before.cancelled {
        return Err(CompareError::Cancelled);
    }
    let (b, a) = (loso_keys(before), loso_keys(after));
    if b.is_empty() {
        return Err(CompareError::NoFigures);
    }
    let same = |k: &(&str, Metric)| matches!((b.get(k), a.get(k)), (Some(x), Some(y)) if x.system_id == y.system_id);
    let keys: BTreeSet<(&str, Metric)> = b.keys().chain(a.keys()).copied().collect();
    let differ: Vec<&(&str, Metric)> = keys.iter().filter(|k| !same(k)).collect();
    if let Some(first) = differ.first() {
        return Err(CompareError::DifferentFigures {
            only_before: differ.iter().filter(|k| !a.contains_key(**k)).count(),
            only_after: differ.iter().filter(|k| !b.contains_key(**k)).count(),
            example: format!("run {} ({:?})", first.0, first.1),
        });
    }
    let sys_b = by_system(b.values().copied());
    let sys_a = by_system(a.values().copied());
    let ids: Vec<&str> = sys_b.keys().copied().collect();
    let before_s: Vec<SystemErrors> = sys_b.into_values().collect();
    let after_s: Vec<SystemErrors> = sys_a.into_values().collect();
    let all = draws(ids.len(), SYSTEM_RESAMPLES);
    let change = |f: Figure| -> FigureChange {
        let full = vec![1u32; ids.len()];
        let before = figure_of(&before_s, &full, f);
        let after = figure_of(&after_s, &full, f);
        let enough = systems_with(&before_s, f) >= MIN_SYSTEMS_FOR_RANGE;
        let deltas: Vec<f64> = if enough {
            all.iter()
                .filter_map(|t| Some(figure_of(&after_s, t, f)? - figure_of(&before_s, t, f)?))
                .collect()
        } else {
            Vec::new()
        };
        let lower_share = (!deltas.is_empty()).then(|| {
            100.0 * deltas.iter().filter(|d| **d < -CHANGE_TOLERANCE).count() as f64
                / deltas.len() as f64
        });
        let range95 = percentile_range(deltas);
        let verdict = match range95 {
            None => Verdict::TooFewSystems,
            Some((_, hi)) if hi < -CHANGE_TOLERANCE => Verdict::Lower,
            Some((lo, _)) if lo > CHANGE_TOLERANCE => Verdict::Higher,
            Some(_) => Verdict::Indistinguishable,
        };
        FigureChange {
            before,
            after,
            change: before.zip(after).map(|(x, y)| y - x),
            range95,
            lower_share,
            verdict,
        }
    };
    let one = |v: &Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let systems = ids
        .iter()
        .zip(before_s.iter().zip(&after_s))
        .map(|(id, (x, y))| SystemChange {
            system_id: id.to_string(),
            before_iops_mape: one(&x.throughput),
            after_iops_mape: one(&y.throughput),
            before_latency_mape: one(&x.latency),
            after_latency_mape: one(&y.latency),
        })
        .collect();
    Ok(TransferComparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        figures: b.len(),
        systems,
        iops_mape: change(Figure::IopsMape),
        iops_median: change(Figure::IopsMedian),
        latency_mape: change(Figure::LatencyMape),
        resamples: SYSTEM_RESAMPLES,
        seed: RESAMPLE_SEED,
    })
}

/// Why an earlier evaluation report cannot be read or a report saved.
#[derive(Debug, thiserror::Error)]
pub enum ReportFileError {
    #[error("cannot read {path}: {cause}; check the path")]
    Read { path: PathBuf, cause: String },
    #[error(
        "{path} (line {line}, column {column}) is not a `cephplan evaluate` JSON report: {cause}; write one with `cephplan evaluate --data ... --format json > {path}` or the app's \"Save evaluation\""
    )]
    NotAReport {
        path: PathBuf,
        line: usize,
        column: usize,
        cause: String,
    },
    #[error(
        "{path}: schema_version {found} is not the {expected} this cephplan reads; evaluate the earlier model again with this cephplan"
    )]
    Version {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("type a file name to save the evaluation to")]
    NoPath,
    #[error(transparent)]
    Write(#[from] crate::io::WriteError),
}

/// Reads an earlier `evaluate --format json` report (the key `against` an evaluation with
/// `--against` adds is ignored).
pub fn read_report(path: &Path) -> Result<EvaluationReport, ReportFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportFileError::Read {
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    let report: EvaluationReport =
        serde_json::from_str(&text).map_err(|e| ReportFileError::NotAReport {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            cause: e.to_string(),
        })?;
    if report.schema_version != super::REPORT_SCHEMA_VERSION {
        return Err(ReportFileError::Version {
            path: path.to_path_buf(),
            found: report.schema_version,
            expected: super::REPORT_SCHEMA_VERSION,
        });
    }
    Ok(report)
}

/// Writes `report` as `evaluate --format json` prints it, atomically, refusing to replace a
/// file cephplan did not write.
pub fn save_report(report: &EvaluationReport, path: &Path) -> Result<(), ReportFileError> {
    if path.as_os_str().is_empty() {
        return Err(ReportFileError::NoPath);
    }
    let mut text = serde_json::to_string_pretty(report).expect("a report serialises");
    text.push('\n');
    crate::io::write_atomic_owned(path, text.as_bytes())?;
    Ok(())
}

/// Column names of [`comparison_rows`].
pub const CHANGE_HEADER: [&str; 7] = [
    "figure (%)",
    "before",
    "after",
    "change",
    "95 % range of the change",
    "lower in % of draws",
    "verdict",
];

/// Column names of [`system_change_rows`].
pub const SYSTEM_CHANGE_HEADER: [&str; 7] = [
    "system",
    "IOPS MAPE before",
    "after",
    "change",
    "latency MAPE before",
    "after",
    "change",
];

fn cell(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("-".into(), f)
}

/// The three figures' changes as text cells (the CLI's table and the app's grid).
pub fn comparison_rows(c: &TransferComparison) -> Vec<Vec<String>> {
    let row = |name: &str, f: &FigureChange| {
        vec![
            name.to_string(),
            cell(f.before, |v| format!("{v:.2}")),
            cell(f.after, |v| format!("{v:.2}")),
            cell(f.change, |v| format!("{v:+.2}")),
            f.range95
                .map_or("-".into(), |(lo, hi)| format!("{lo:+.2} .. {hi:+.2}")),
            cell(f.lower_share, |v| format!("{v:.1}")),
            f.verdict.label().to_string(),
        ]
    };
    vec![
        row("IOPS/bandwidth MAPE", &c.iops_mape),
        row("IOPS/bandwidth median", &c.iops_median),
        row("mean latency MAPE", &c.latency_mape),
    ]
}

/// Each system's errors before and after as text cells.
pub fn system_change_rows(c: &TransferComparison) -> Vec<Vec<String>> {
    let p = |v: Option<f64>| cell(v, |v| format!("{v:.1}"));
    let diff =
        |a: Option<f64>, b: Option<f64>| cell(a.zip(b).map(|(a, b)| b - a), |v| format!("{v:+.1}"));
    c.systems
        .iter()
        .map(|s| {
            vec![
                s.system_id.clone(),
                p(s.before_iops_mape),
                p(s.after_iops_mape),
                diff(s.before_iops_mape, s.after_iops_mape),
                p(s.before_latency_mape),
                p(s.after_latency_mape),
                diff(s.before_latency_mape, s.after_latency_mape),
            ]
        })
        .collect()
}

/// The sentence above the comparison's tables.
pub fn comparison_heading(c: &TransferComparison) -> String {
    format!(
        "Against the earlier evaluation ({} held-out figures, the same in both; the range of each change over {} draws of the systems with replacement, the same draws for both, seed {}):",
        c.figures, c.resamples, c.seed
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn fig(system: &str, run: &str, metric: Metric, error_pct: f64) -> HeldOut {
        HeldOut {
            run_id: run.into(),
            metric,
            error_pct,
            ..super::super::tests::figure(system, 100.0, 100.0 + error_pct, 0.0)
        }
    }

    /// `n` systems, system `i` with two throughput figures of error `±e_i` around the
    /// same size and one latency figure.
    fn figures(errors: &[f64]) -> Vec<HeldOut> {
        errors
            .iter()
            .enumerate()
            .flat_map(|(i, &e)| {
                let s = format!("sys{i:02}");
                vec![
                    fig(&s, &format!("{s}-a"), Metric::Iops, e),
                    fig(&s, &format!("{s}-b"), Metric::Iops, -e),
                    fig(&s, &format!("{s}-a"), Metric::LatencyMean, 2.0 * e),
                ]
            })
            .collect()
    }

    fn report(figures: Vec<HeldOut>) -> EvaluationReport {
        EvaluationReport {
            schema_version: super::super::REPORT_SCHEMA_VERSION,
            generator: String::new(),
            systems: Vec::new(),
            classes: Vec::new(),
            loso: Default::default(),
            scale: Default::default(),
            coverage: Default::default(),
            baselines: Default::default(),
            figures,
            folds: Vec::new(),
            parameter_spread: Vec::new(),
            not_modelled: Vec::new(),
            warnings: Vec::new(),
            cancelled: false,
        }
    }

    /// Oracle: the bootstrap distribution of a mean of `n` values has the plug-in standard
    /// error `σ̂/√n` (σ̂ with divisor n; Efron & Tibshirani 1993, eq. 6.8–6.9), and for
    /// values this even its percentile range is near `mean ± 1.96·σ̂/√n`.
    #[test]
    fn a_mean_s_range_is_its_plug_in_standard_error_wide() {
        let errors: Vec<f64> = (1..=20).map(f64::from).collect();
        let n = errors.len() as f64;
        let mean = errors.iter().sum::<f64>() / n;
        let sd = (errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n).sqrt();
        let (iops, latency) = system_range(figures(&errors).iter());
        let (lo, hi) = iops.expect("20 systems");
        assert_relative_eq!(0.5 * (lo + hi), mean, max_relative = 0.02);
        assert_relative_eq!(hi - lo, 2.0 * 1.96 * sd / n.sqrt(), max_relative = 0.06);
        // Latency errors are twice the throughput errors: so is their range.
        let (llo, lhi) = latency.expect("20 systems");
        assert_relative_eq!(llo, 2.0 * lo, max_relative = 1e-9);
        assert_relative_eq!(lhi, 2.0 * hi, max_relative = 1e-9);
    }

    #[test]
    fn no_range_below_five_systems_and_the_same_range_every_time() {
        assert_eq!(
            system_range(figures(&[1.0, 2.0, 3.0, 4.0]).iter()),
            (None, None)
        );
        let f = figures(&[1.0, 5.0, 2.0, 8.0, 3.0, 13.0]);
        assert_eq!(system_range(f.iter()), system_range(f.iter()));
        let text = range_text(system_range(f.iter()).0, None).expect("a range");
        assert!(text.contains("IOPS/bandwidth MAPE") && text.contains("mean latency MAPE - %"));
    }

    /// The weighted median of the figures: each system's figures weigh 1/(their count),
    /// and a system drawn twice weighs twice.
    #[test]
    fn weighted_median_counts_a_system_drawn_twice_twice() {
        let a = [1.0, 2.0];
        let b = [10.0];
        // Once each: weights 0.5, 0.5, 1 → half of 2 is reached at 2.0.
        assert_eq!(weighted_median(&[&a, &b], &[1, 1]), Some(2.0));
        // b twice: weights 0.5, 0.5, 2 → half of 3 is reached at 10.
        assert_eq!(weighted_median(&[&a, &b], &[1, 2]), Some(10.0));
        assert_eq!(weighted_median(&[&a, &b], &[0, 0]), None);
    }

    #[test]
    fn a_change_in_every_system_is_lower_and_none_is_indistinguishable() {
        let errs: Vec<f64> = (1..=11).map(|i| f64::from(i) * 3.0).collect();
        let before = report(figures(&errs));
        let same = compare(&before, &before).expect("same figures");
        assert_eq!(same.iops_mape.change, Some(0.0));
        assert_eq!(same.iops_mape.range95, Some((0.0, 0.0)));
        assert_eq!(same.iops_mape.verdict, Verdict::Indistinguishable);
        assert_eq!(same.figures, 33);
        // Every system 1 point lower: the change is −1 in every draw.
        let lower: Vec<f64> = errs.iter().map(|e| e - 1.0).collect();
        let c = compare(&before, &report(figures(&lower))).expect("same runs");
        assert_relative_eq!(c.iops_mape.change.unwrap(), -1.0, epsilon = 1e-9);
        let (lo, hi) = c.iops_mape.range95.unwrap();
        assert_relative_eq!(lo, -1.0, epsilon = 1e-9);
        assert_relative_eq!(hi, -1.0, epsilon = 1e-9);
        assert_eq!(c.iops_mape.verdict, Verdict::Lower);
        assert_eq!(c.iops_mape.lower_share, Some(100.0));
        assert_eq!(c.latency_mape.verdict, Verdict::Lower);
        assert_eq!(c.systems[0].before_iops_mape, Some(3.0));
        assert_eq!(c.systems[0].after_iops_mape, Some(2.0));
    }

    /// One system much better, another as much worse: the mean does not move beyond what
    /// the draws of systems give.
    #[test]
    fn a_trade_between_two_systems_is_not_told_apart() {
        let errs: Vec<f64> = (1..=11).map(|i| 10.0 + f64::from(i)).collect();
        let mut traded = errs.clone();
        traded[0] -= 8.0;
        traded[1] += 7.0;
        let c = compare(&report(figures(&errs)), &report(figures(&traded))).unwrap();
        assert_relative_eq!(c.iops_mape.change.unwrap(), -1.0 / 11.0, epsilon = 1e-9);
        assert_eq!(c.iops_mape.verdict, Verdict::Indistinguishable);
        let share = c.iops_mape.lower_share.unwrap();
        assert!((20.0..80.0).contains(&share), "{share}");
    }

    /// Saved and read back bit for bit (serde_json's `float_roundtrip`: its default parser
    /// can miss the last bit of a float, and a comparison with a saved report would then
    /// show changes where there are none); a file a user wrote is not replaced, and one
    /// that is not a report is named with the fix.
    #[test]
    fn a_saved_report_reads_back_exactly_and_a_foreign_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = report(figures(&[
            1.0 / 3.0,
            2.0 / 7.0,
            104.919_702_054_689_37,
            5.0,
            6.0,
        ]));
        r.generator = format!("{} (cephplan evaluate)", crate::io::GENERATED_MARKER);
        let path = dir.path().join("e.json");
        save_report(&r, &path).unwrap();
        assert_eq!(read_report(&path).unwrap(), r);
        save_report(&r, &path).unwrap();
        let mine = dir.path().join("mine.json");
        std::fs::write(&mine, "{}").unwrap();
        assert!(matches!(
            save_report(&r, &mine),
            Err(ReportFileError::Write(_))
        ));
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "{}");
        let e = read_report(&mine).unwrap_err().to_string();
        assert!(
            e.contains("is not a `cephplan evaluate` JSON report") && e.contains("(line 1"),
            "{e}"
        );
        assert!(matches!(
            save_report(&r, Path::new("")),
            Err(ReportFileError::NoPath)
        ));
    }

    /// A report saved before the folds' parameters existed (no `folds`, no
    /// `parameter_spread`) still reads, with both empty, so `--against` takes it.
    #[test]
    fn a_report_saved_before_the_folds_parameters_reads_with_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = report(figures(&[1.0, 2.0, 3.0]));
        r.folds = vec![super::super::FoldFit {
            kind: SplitKind::LeaveOneSystemOut,
            system_id: "s0".into(),
            parameters: [("x".to_string(), 1.0)].into_iter().collect(),
            termination: "converged (ftol)".into(),
            converged: true,
        }];
        r.parameter_spread = super::super::parameter_spread(&r.folds);
        let mut v = serde_json::to_value(&r).unwrap();
        let map = v.as_object_mut().unwrap();
        assert!(map.remove("folds").is_some() && map.remove("parameter_spread").is_some());
        let path = dir.path().join("old.json");
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let old = read_report(&path).unwrap();
        assert!(old.folds.is_empty() && old.parameter_spread.is_empty());
        assert_eq!(old.figures, r.figures);
    }

    #[test]
    fn different_runs_are_refused_with_what_differs() {
        let errs = [1.0, 2.0, 3.0, 4.0, 5.0];
        let before = report(figures(&errs));
        let mut fewer = figures(&errs);
        fewer.pop();
        let e = compare(&before, &report(fewer)).unwrap_err();
        assert_eq!(
            e,
            CompareError::DifferentFigures {
                only_before: 1,
                only_after: 0,
                example: "run sys04-a (LatencyMean)".into()
            }
        );
        assert!(e
            .to_string()
            .contains("evaluate both models on the same --data"));
        // The same run filed under another system is a different figure too.
        let mut moved = figures(&errs);
        moved[0].system_id = "elsewhere".into();
        assert!(matches!(
            compare(&before, &report(moved)),
            Err(CompareError::DifferentFigures { .. })
        ));
        assert_eq!(
            compare(&report(Vec::new()), &before).unwrap_err(),
            CompareError::NoFigures
        );
        let mut cancelled = report(figures(&errs));
        cancelled.cancelled = true;
        let e = compare(&cancelled, &before).unwrap_err();
        assert_eq!(e, CompareError::Cancelled);
        assert!(e.to_string().contains("to completion"), "{e}");
    }
}
