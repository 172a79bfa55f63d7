//! Profile of a calibration along one parameter: the parameter is held at each value of a
//! grid and every other fitted parameter is refitted, so the in-sample error as a function
//! of that value shows whether the data identify it. A flat profile means they do not (seed
//! 002's runs at two depths fit equally well for any write batch size scale from 0.03 to
//! 1); a clear minimum means they do. This is how `models/prior.toml` documents the
//! values it could not fit.
//!
//! Not here: the fit itself ([`super::ceph::calibrate`], called once per grid value without
//! leave-one-out or the USL baseline), reading datasets, printing.

use serde::{Deserialize, Serialize};

use super::ceph::{
    calibrate, default_fit_names, CalibrateError, CalibrateOptions, Metric, PreparedRun,
};
use super::lm::Termination;
use crate::model::ModelParams;
use crate::progress::Progress;

/// Version of the JSON document (`cephplan profile --format json`).
pub const PROFILE_SCHEMA_VERSION: u32 = 1;

/// A throughput figure off by more than this counts as a miss (issue 3's bar).
pub const MISS_THRESHOLD_PCT: f64 = 15.0;

/// The fit with the profiled parameter held at one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfilePoint {
    pub value: f64,
    /// In-sample MAPE of the IOPS/bandwidth figures, percent.
    pub mape_in_sample: Option<f64>,
    pub max_abs_throughput_error_pct: Option<f64>,
    /// IOPS/bandwidth figures off by more than [`MISS_THRESHOLD_PCT`].
    pub throughput_misses: usize,
    pub termination: Termination,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    pub schema_version: u32,
    pub parameter: String,
    pub unit: String,
    /// The parameters refitted at every point.
    pub refitted: Vec<String>,
    /// In the order of the grid given.
    pub points: Vec<ProfilePoint>,
    /// The grid value with the lowest in-sample MAPE (the first of equals).
    pub best_value: Option<f64>,
    /// Largest minus smallest in-sample MAPE over the grid, percentage points: near zero
    /// when the data cannot tell the values apart.
    pub mape_spread_points: Option<f64>,
    /// True when the user cancelled: `points` holds the values done.
    pub cancelled: bool,
}

/// Errors of a profile beyond those of a calibration.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Calibrate(#[from] CalibrateError),
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error(
        "parameter \"{name}\" is neither in the model nor in the prior; the model has: {known}"
    )]
    UnknownParameter { name: String, known: String },
    #[error(
        "{name} = {value} lies outside its bounds [{lower}, {upper}]; give grid values inside them"
    )]
    OutOfBounds {
        name: String,
        value: f64,
        lower: f64,
        upper: f64,
    },
    #[error("{given} distinct grid value(s) for {name}; give at least two (one point cannot show whether the data identify it), e.g. --values 0.1,0.3,1")]
    EmptyGrid { name: String, given: usize },
}

/// Fits `runs` once per value in `values` with `name` held at that value (see the module
/// doc). `opts.fit` empty means the calibration's default set; `name` is removed from the
/// set either way. Leave-one-out and the USL baseline are skipped. Progress counts grid
/// values; a cancelled profile returns the values done with `cancelled` set.
pub fn profile(
    runs: &[PreparedRun],
    base: &ModelParams,
    prior: &ModelParams,
    opts: &CalibrateOptions,
    name: &str,
    values: &[f64],
    progress: &dyn Progress,
) -> Result<ProfileReport, ProfileError> {
    let distinct = {
        let mut v: Vec<u64> = values.iter().map(|x| x.to_bits()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    if distinct < 2 {
        return Err(ProfileError::EmptyGrid {
            name: name.into(),
            given: distinct,
        });
    }
    let mut base = base.clone();
    if !base.param.contains_key(name) {
        match prior.param.get(name) {
            Some(p) => {
                base.param.insert(name.to_string(), p.clone());
            }
            None => {
                return Err(ProfileError::UnknownParameter {
                    name: name.into(),
                    known: base.names().join(", "),
                })
            }
        }
    }
    let p = base.param[name].clone();
    for &v in values {
        if !(v.is_finite() && p.lower <= v && v <= p.upper) {
            return Err(ProfileError::OutOfBounds {
                name: name.into(),
                value: v,
                lower: p.lower,
                upper: p.upper,
            });
        }
    }
    let mut fit = if opts.fit.is_empty() {
        default_fit_names(&base, runs)
    } else {
        opts.fit.clone()
    };
    fit.retain(|n| n != name);
    let inner = CalibrateOptions {
        fit: fit.clone(),
        leave_one_out: false,
        usl: false,
        ..opts.clone()
    };
    progress.start(values.len() as u64, "profiling");
    let quiet = Quiet(progress);
    let mut points = Vec::new();
    let mut cancelled = false;
    for &v in values {
        if progress.is_cancelled() {
            cancelled = true;
            break;
        }
        progress.message(&format!("{name} = {v}"));
        let mut b = base.clone();
        b.set(name, v)?;
        let (report, _) = calibrate(runs, Vec::new(), &b, prior, &[], &inner, &quiet)?;
        if report.termination.cancelled {
            cancelled = true;
            break;
        }
        let throughput_misses = report
            .runs
            .iter()
            .filter(|r| matches!(r.metric, Metric::Iops | Metric::Bandwidth))
            .filter(|r| r.error_pct.abs() > MISS_THRESHOLD_PCT)
            .count();
        points.push(ProfilePoint {
            value: v,
            mape_in_sample: report.mape_in_sample,
            max_abs_throughput_error_pct: report.max_abs_throughput_error_pct,
            throughput_misses,
            termination: report.termination,
        });
        progress.advance(1);
    }
    progress.finish();
    let mapes: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| p.mape_in_sample.map(|m| (p.value, m)))
        .collect();
    let best_value = mapes
        .iter()
        .fold(None::<(f64, f64)>, |acc, &(v, m)| match acc {
            Some((_, am)) if am <= m => acc,
            _ => Some((v, m)),
        })
        .map(|(v, _)| v);
    let mape_spread_points = (!mapes.is_empty()).then(|| {
        let hi = mapes.iter().map(|m| m.1).fold(f64::MIN, f64::max);
        let lo = mapes.iter().map(|m| m.1).fold(f64::MAX, f64::min);
        hi - lo
    });
    Ok(ProfileReport {
        schema_version: PROFILE_SCHEMA_VERSION,
        parameter: name.to_string(),
        unit: p.unit,
        refitted: fit,
        points,
        best_value,
        mape_spread_points,
        cancelled,
    })
}

/// Passes cancellation through to each inner fit and keeps its own bar for the grid.
struct Quiet<'a>(&'a dyn Progress);

impl Progress for Quiet<'_> {
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}
