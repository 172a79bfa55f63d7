//! Sweeps: one axis of a scenario over a list of values, and the knee under a latency
//! target. A population axis (iodepth, images, jobs) only changes the number of I/Os in
//! flight, so the network is built once and solved per value; other axes rebuild the
//! scenario (re-validated, so e.g. fewer nodes than replicas is reported as skipped).
//!
//! Exact MVA computes every population 1..N on the way to N, so a population sweep is one
//! MVA pass at its largest value (`solve::single::solve_curve`; see `benches/predict.rs`
//! for the cost).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{bounds, predict, solve_curve_at, Bottleneck, ModelInfo, PredictError, PredictOptions};
use super::{SolverInfo, REPORT_SCHEMA_VERSION};
use crate::model::ModelParams;
use crate::progress::Progress;
use crate::qn::ceph::build;
use crate::solve::Method;
use crate::spec::Scenario;

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    Iodepth,
    Images,
    Jobs,
    Nodes,
    DevicesPerNode,
    Clients,
    BlockSize,
}

impl SweepAxis {
    pub const ALL: [SweepAxis; 7] = [
        SweepAxis::Iodepth,
        SweepAxis::Images,
        SweepAxis::Jobs,
        SweepAxis::Nodes,
        SweepAxis::DevicesPerNode,
        SweepAxis::Clients,
        SweepAxis::BlockSize,
    ];

    /// The name used on the command line and in reports.
    pub fn key(self) -> &'static str {
        match self {
            SweepAxis::Iodepth => "iodepth",
            SweepAxis::Images => "images",
            SweepAxis::Jobs => "jobs",
            SweepAxis::Nodes => "nodes",
            SweepAxis::DevicesPerNode => "devices_per_node",
            SweepAxis::Clients => "clients",
            SweepAxis::BlockSize => "block_size",
        }
    }

    /// True when the axis only changes the number of I/Os in flight.
    pub fn is_population(self) -> bool {
        matches!(
            self,
            SweepAxis::Iodepth | SweepAxis::Images | SweepAxis::Jobs
        )
    }
}

/// A sweep request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub axis: SweepAxis,
    /// Values in the axis unit (block size in bytes), in the order to report.
    pub values: Vec<u64>,
    /// Report the knee: the highest IOPS whose mean latency is at most this.
    pub latency_target_secs: Option<f64>,
}

impl SweepSpec {
    /// Parses `axis=v1,v2,...` (block sizes accept units: `block_size=4k,64k`).
    pub fn parse_vary(vary: &str, latency_target_secs: Option<f64>) -> Result<Self, PredictError> {
        let bad = |problem: String, fix: &str| PredictError::BadSweep {
            input: vary.to_string(),
            problem,
            fix: fix.to_string(),
        };
        let axes: Vec<&str> = SweepAxis::ALL.iter().map(|a| a.key()).collect();
        let (name, list) = vary.split_once('=').ok_or_else(|| {
            bad(
                "no `=`".into(),
                "write AXIS=V1,V2,..., e.g. iodepth=1,2,4,8",
            )
        })?;
        let axis = SweepAxis::ALL
            .into_iter()
            .find(|a| a.key() == name.trim())
            .ok_or_else(|| {
                bad(
                    format!("unknown axis `{}`", name.trim()),
                    &format!("use one of: {}", axes.join(", ")),
                )
            })?;
        let mut values = Vec::new();
        for v in list.split(',').map(str::trim).filter(|v| !v.is_empty()) {
            let parsed = if axis == SweepAxis::BlockSize {
                crate::units::parse_bytes(v)
                    .map_err(|e| bad(e.to_string(), "e.g. block_size=4k,64k,1M"))?
            } else {
                v.parse::<u64>().map_err(|_| {
                    bad(
                        format!("`{v}` is not a whole number"),
                        "give whole numbers ≥ 1",
                    )
                })?
            };
            if parsed == 0 {
                return Err(bad(format!("value `{v}` is 0"), "give values ≥ 1"));
            }
            values.push(parsed);
        }
        if values.is_empty() {
            return Err(bad("no values".into(), "list at least one value after `=`"));
        }
        if let Some(t) = latency_target_secs {
            if !(t.is_finite() && t > 0.0) {
                return Err(bad(
                    format!("latency target {t} s"),
                    "give a positive latency target, e.g. 4ms",
                ));
            }
        }
        Ok(Self {
            axis,
            values,
            latency_target_secs,
        })
    }
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The axis value (bytes for block_size).
    pub value: u64,
    pub in_flight: u32,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub bandwidth_bytes_per_sec: f64,
    pub latency_mean_secs: f64,
    pub latency_read_mean_secs: Option<f64>,
    pub latency_write_mean_secs: Option<f64>,
    pub bottleneck: Bottleneck,
    pub utilization: BTreeMap<String, f64>,
    pub max_iops: f64,
}

/// A value that could not be evaluated (e.g. fewer nodes than replicas).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedPoint {
    pub value: u64,
    pub reason: String,
}

/// The knee under a latency target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KneeReport {
    pub latency_target_secs: f64,
    /// Axis value reaching the highest IOPS within the target; None when no point does.
    pub value: Option<u64>,
    pub iops: Option<f64>,
    pub latency_mean_secs: Option<f64>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub schema_version: u32,
    pub scenario: String,
    pub axis: SweepAxis,
    pub points: Vec<SweepPoint>,
    pub skipped: Vec<SkippedPoint>,
    pub knee: Option<KneeReport>,
    /// False when the sweep was cancelled; `points` then holds what was done.
    pub complete: bool,
    pub warnings: Vec<String>,
    pub model: ModelInfo,
    pub solver: SolverInfo,
}

/// The knee among sweep points: the highest IOPS whose mean latency ≤ target.
pub fn knee(points: &[SweepPoint], target_secs: f64, axis: SweepAxis) -> KneeReport {
    let best = points
        .iter()
        .filter(|p| p.latency_mean_secs <= target_secs)
        .max_by(|a, b| a.iops.total_cmp(&b.iops));
    match best {
        Some(p) => KneeReport {
            latency_target_secs: target_secs,
            value: Some(p.value),
            iops: Some(p.iops),
            latency_mean_secs: Some(p.latency_mean_secs),
            note: format!(
                "{}={} gives the highest IOPS with mean latency ≤ {:.3} ms",
                axis.key(),
                p.value,
                target_secs * 1e3
            ),
        },
        None => {
            let low = points
                .iter()
                .min_by(|a, b| a.latency_mean_secs.total_cmp(&b.latency_mean_secs));
            KneeReport {
                latency_target_secs: target_secs,
                value: None,
                iops: None,
                latency_mean_secs: None,
                note: match low {
                    Some(p) => format!(
                        "no point meets {:.3} ms; the lowest mean latency is {:.3} ms at {}={}",
                        target_secs * 1e3,
                        p.latency_mean_secs * 1e3,
                        axis.key(),
                        p.value
                    ),
                    None => "no points were evaluated".into(),
                },
            }
        }
    }
}

/// Runs a sweep. Population axes cost one MVA pass; other axes one solve per value.
/// Values that make the scenario invalid are reported in `skipped`.
pub fn sweep(
    s: &Scenario,
    p: &ModelParams,
    spec: &SweepSpec,
    progress: &dyn Progress,
) -> Result<SweepReport, PredictError> {
    let mut points = Vec::with_capacity(spec.values.len());
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    let mut complete = true;
    let mut solver = SolverInfo {
        method: Method::ExactSingleClass,
        convergence: None,
    };
    progress.start(
        spec.values.len() as u64,
        &format!("sweep {}", spec.axis.key()),
    );
    if spec.axis.is_population() {
        let cn = build(s, p)?;
        warnings.extend(cn.warnings.iter().cloned());
        // I/Os in flight per unit of the axis value.
        let other = match spec.axis {
            SweepAxis::Iodepth => s.images * s.jobs_per_image,
            SweepAxis::Images => s.iodepth * s.jobs_per_image,
            _ => s.images * s.iodepth,
        };
        let opts = crate::solve::SolveOptions::default();
        let mut wanted = Vec::new();
        for &v in &spec.values {
            match v.checked_mul(u64::from(other)).filter(|&n| n <= 10_000_000) {
                Some(n) => wanted.push((v, n as u32)),
                None => skipped.push(SkippedPoint {
                    value: v,
                    reason: "more than 10,000,000 I/Os in flight".into(),
                }),
            }
        }
        progress.advance((spec.values.len() - wanted.len()) as u64);
        // One MVA pass serves every population; it is the whole cost of the sweep.
        let populations: Vec<u32> = wanted.iter().map(|&(_, n)| n).collect();
        if progress.is_cancelled() {
            complete = false;
        } else {
            for ((v, n), solved) in wanted.iter().zip(solve_curve_at(&cn, &populations, &opts)?) {
                for w in solved.warnings {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                solver = solved.solver;
                points.push(point(*v, *n, solved.figures, bounds(&cn, *n).max_iops));
                progress.advance(1);
            }
        }
    } else {
        let opts = PredictOptions {
            interval: false,
            ..PredictOptions::default()
        };
        for &v in &spec.values {
            if progress.is_cancelled() {
                complete = false;
                break;
            }
            progress.message(&format!("{}={v}", spec.axis.key()));
            let mut sp = s.inline_spec();
            let v32 = u32::try_from(v).unwrap_or(u32::MAX);
            match spec.axis {
                SweepAxis::Nodes => sp.cluster.nodes = v32,
                SweepAxis::DevicesPerNode => sp.cluster.node.data_devices.count = v32,
                SweepAxis::Clients => sp.clients.nodes = v32,
                SweepAxis::BlockSize => sp.workload.block_size = crate::units::Bytes(v),
                _ => unreachable!("population axes are handled above"),
            }
            match s.revalidate(&sp) {
                Err(e) => skipped.push(SkippedPoint {
                    value: v,
                    reason: e.to_string().trim_start_matches("scenario: ").to_string(),
                }),
                Ok(sv) => {
                    let r = predict(&sv, p, &opts)?;
                    for w in r.warnings {
                        if !warnings.contains(&w) {
                            warnings.push(w);
                        }
                    }
                    solver = r.solver.clone();
                    points.push(SweepPoint {
                        value: v,
                        in_flight: r.in_flight,
                        iops: r.iops,
                        read_iops: r.read_iops,
                        write_iops: r.write_iops,
                        bandwidth_bytes_per_sec: r.bandwidth_bytes_per_sec,
                        latency_mean_secs: r.latency_mean_secs,
                        latency_read_mean_secs: r.latency_read_mean_secs,
                        latency_write_mean_secs: r.latency_write_mean_secs,
                        bottleneck: r.bottleneck,
                        utilization: r.utilization,
                        max_iops: r.bounds.max_iops,
                    });
                }
            }
            progress.advance(1);
        }
    }
    progress.finish();
    let knee = spec
        .latency_target_secs
        .map(|t| knee(&points, t, spec.axis));
    Ok(SweepReport {
        schema_version: REPORT_SCHEMA_VERSION,
        scenario: s.name.clone(),
        axis: spec.axis,
        points,
        skipped,
        knee,
        complete,
        warnings,
        model: ModelInfo::of(p),
        solver,
    })
}

fn point(value: u64, in_flight: u32, f: super::Figures, max_iops: f64) -> SweepPoint {
    SweepPoint {
        value,
        in_flight,
        iops: f.iops,
        read_iops: f.read_iops,
        write_iops: f.write_iops,
        bandwidth_bytes_per_sec: f.bandwidth_bytes_per_sec,
        latency_mean_secs: f.latency_mean_secs,
        latency_read_mean_secs: f.latency_read_mean_secs,
        latency_write_mean_secs: f.latency_write_mean_secs,
        bottleneck: f.bottleneck,
        utilization: f.utilization,
        max_iops,
    }
}
