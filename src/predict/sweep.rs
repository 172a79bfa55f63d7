//! Sweeps: one axis of a scenario over a list of values, and the knee under a latency
//! target. The iodepth axis only changes the number of I/Os in flight, so the network is
//! built once and solved per value; every other axis rebuilds the scenario (re-validated,
//! so e.g. fewer nodes than replicas is reported as skipped). Images and jobs are not
//! population axes: each fio job is a client with its own connections and threads, and
//! each image adds objects to the data set, so the network itself changes with them
//! (`qn::ceph`: messenger coalescing per connection, the client-thread cap, the active
//! client nodes, the onode cache); a sweep over them gives what `predict` gives on a
//! file with that many images or jobs.
//!
//! With [`SweepTails`] every point is also simulated (`qn::ceph::build_sim`, the same seed at
//! every point so that points differ only by the axis value: common random numbers) and
//! the knee is the highest simulated IOPS whose simulated percentile (e.g. p99) meets the
//! target.
//!
//! Exact MVA computes every population 1..N on the way to N, so a population sweep is one
//! MVA pass at its largest value (`solve::single::solve_curve`; see `benches/predict.rs`
//! for the cost).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::tails::{simulate_model, CancelOnly, TailOptions, TailReport};
use super::{bounds, predict, solve_curve_at, Bottleneck, ModelInfo, PredictError, PredictOptions};
use super::{SolverInfo, REPORT_SCHEMA_VERSION};
use crate::model::ModelParams;
use crate::progress::Progress;
use crate::qn::ceph::{build, build_sim};
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

    /// True when the axis only changes the number of I/Os in flight (iodepth: the
    /// network is the same at every value; see the module doc for images and jobs).
    pub fn is_population(self) -> bool {
        matches!(self, SweepAxis::Iodepth)
    }
}

/// A sweep request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub axis: SweepAxis,
    /// Values in the axis unit (block size in bytes), in the order to report.
    pub values: Vec<u64>,
    /// Report the knee: the highest IOPS whose mean latency (or simulated percentile, with
    /// `tails`) is at most this.
    pub latency_target_secs: Option<f64>,
    /// Simulate every point; the knee then uses the simulated percentile.
    #[serde(default)]
    pub tails: Option<SweepTails>,
}

/// Simulation of every sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTails {
    /// Latency percentile of the knee, in percent: 50, 95, 99 or 99.9.
    pub percentile: f64,
    /// Simulation options; the same seed is used at every point.
    pub options: TailOptions,
}

impl SweepSpec {
    /// Parses `axis=v1,v2,...` (block sizes accept units: `block_size=4k,64k`).
    pub fn parse_vary(vary: &str, latency_target_secs: Option<f64>) -> Result<Self, PredictError> {
        let bad = |problem: String, fix: &str| PredictError::BadSweep {
            input: format!("--vary {vary:?}"),
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
            // A value no scenario takes is a typo in what the user asked for: refused
            // here, not skipped as a point the scenario happens not to allow.
            if axis == SweepAxis::BlockSize
                && (parsed < 512
                    || !parsed.is_multiple_of(512)
                    || parsed > crate::spec::MAX_BLOCK_SIZE_BYTES)
            {
                return Err(bad(
                    format!("block size `{v}` = {parsed} bytes"),
                    "a block size is a multiple of 512 bytes from 512 to 1G, e.g. block_size=4k,64k,1M",
                ));
            }
            if axis != SweepAxis::BlockSize && parsed > 10_000_000 {
                return Err(bad(
                    format!("value `{v}`"),
                    "a scenario takes at most 10,000,000 I/Os in flight, nodes or clients; give smaller values",
                ));
            }
            values.push(parsed);
        }
        if values.is_empty() {
            return Err(bad("no values".into(), "list at least one value after `=`"));
        }
        // Ascending, each once: the curve and its table read left to right, and a value
        // given twice is one point.
        values.sort_unstable();
        values.dedup();
        if let Some(t) = latency_target_secs {
            if !(t.is_finite() && t > 0.0) {
                return Err(PredictError::BadSweep {
                    input: "--latency-target".into(),
                    problem: format!("latency target {t} s"),
                    fix: "give a positive latency target, e.g. 4ms".into(),
                });
            }
        }
        Ok(Self {
            axis,
            values,
            latency_target_secs,
            tails: None,
        })
    }

    /// Simulates every point with `options` and takes the knee by the simulated
    /// `percentile` (50, 95, 99 or 99.9, the percentiles the simulator reports).
    pub fn with_tails(
        mut self,
        percentile: f64,
        options: TailOptions,
    ) -> Result<Self, PredictError> {
        if !crate::sim::QUANTILES.contains(&(percentile / 100.0)) {
            return Err(PredictError::BadSweep {
                input: format!("--percentile {percentile}"),
                problem: "the simulator reports only p50, p95, p99 and p99.9".into(),
                fix: "use --percentile 50, 95, 99 or 99.9".into(),
            });
        }
        self.tails = Some(SweepTails {
            percentile,
            options,
        });
        Ok(self)
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
    /// Simulated figures, when the sweep simulates (`SweepSpec::tails`).
    #[serde(default)]
    pub tails: Option<TailReport>,
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
    /// Percentile (in percent) the target applies to; None: the MVA mean latency.
    #[serde(default)]
    pub percentile: Option<f64>,
    /// Axis value reaching the highest IOPS within the target; None when no point does.
    pub value: Option<u64>,
    /// IOPS at the knee (simulated when `percentile` is set).
    pub iops: Option<f64>,
    /// Mean latency at the knee (simulated when `percentile` is set).
    pub latency_mean_secs: Option<f64>,
    /// The simulated percentile at the knee (with `percentile`).
    #[serde(default)]
    pub latency_percentile_secs: Option<f64>,
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

impl SweepReport {
    /// The knee of these points under another latency target (`percentile` None: by the MVA
    /// mean; else by that simulated percentile), without recomputing them: what the sweep
    /// would have reported with `latency_target_secs` set to `target_secs`.
    pub fn knee_at(&self, target_secs: f64, percentile: Option<f64>) -> KneeReport {
        knee(&self.points, target_secs, self.axis, percentile)
    }
}

/// The knee among sweep points: the highest IOPS whose MVA mean latency (`percentile`
/// None) or simulated percentile is at most the target; points without simulated tails are
/// left out of a percentile knee.
fn knee(
    points: &[SweepPoint],
    target_secs: f64,
    axis: SweepAxis,
    percentile: Option<f64>,
) -> KneeReport {
    // (point, iops, mean, measure compared with the target)
    let measured: Vec<(&SweepPoint, f64, f64, f64)> = points
        .iter()
        .filter_map(|p| match percentile {
            None => Some((p, p.iops, p.latency_mean_secs, p.latency_mean_secs)),
            Some(q) => {
                let t = p.tails.as_ref()?;
                let lat = t.all.quantile(q / 100.0)?.mean;
                Some((p, t.all.iops.mean, t.all.latency_mean_secs.mean, lat))
            }
        })
        .collect();
    let what = match percentile {
        None => "mean latency".to_string(),
        Some(q) => format!("simulated p{q}"),
    };
    // Points within a millionth of the best IOPS tie (the solvers' rounding), and the tie
    // goes to the smallest value: on a hardware axis, the least hardware.
    let top = measured
        .iter()
        .filter(|m| m.3 <= target_secs)
        .map(|m| m.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let best = measured
        .iter()
        .filter(|m| m.3 <= target_secs && m.1 >= top * (1.0 - 1e-6))
        .min_by_key(|m| m.0.value);
    match best {
        Some(&(p, iops, mean, lat)) => KneeReport {
            latency_target_secs: target_secs,
            percentile,
            value: Some(p.value),
            iops: Some(iops),
            latency_mean_secs: Some(mean),
            latency_percentile_secs: percentile.map(|_| lat),
            note: format!(
                "{}={} gives the highest {}IOPS with {what} ≤ {:.3} ms",
                axis.key(),
                p.value,
                if percentile.is_some() {
                    "simulated "
                } else {
                    ""
                },
                target_secs * 1e3
            ),
        },
        None => {
            let low = measured.iter().min_by(|a, b| a.3.total_cmp(&b.3));
            KneeReport {
                latency_target_secs: target_secs,
                percentile,
                value: None,
                iops: None,
                latency_mean_secs: None,
                latency_percentile_secs: None,
                note: match low {
                    Some(m) => format!(
                        "no point meets {:.3} ms; the lowest {what} is {:.3} ms at {}={}",
                        target_secs * 1e3,
                        m.3 * 1e3,
                        axis.key(),
                        m.0.value
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
    if s.engine == crate::spec::Engine::Rados
        && matches!(spec.axis, SweepAxis::Images | SweepAxis::Jobs)
    {
        return Err(PredictError::BadSweep {
            input: format!("--vary {}=…", spec.axis.key()),
            problem: format!(
                "scenario \"{}\" is a rados bench workload, which has no images or fio jobs",
                s.name
            ),
            fix: "vary clients (one rados bench process per client node) or iodepth (its concurrency, ops in flight per process)".into(),
        });
    }
    let mut points = Vec::with_capacity(spec.values.len());
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    // A point's warnings with the values they were given at, in the order first seen: one
    // that holds at some points only names them (session 53's audit: "writes batch 1.6
    // per OSD at this depth" named no depth).
    let mut per_point: Vec<(String, Vec<u64>)> = Vec::new();
    let mut note = |w: String, v: u64| match per_point.iter_mut().find(|(x, _)| *x == w) {
        Some((_, vs)) => vs.push(v),
        None => per_point.push((w, vec![v])),
    };
    let mut complete = true;
    let mut solver = SolverInfo {
        method: Method::ExactSingleClass,
        convergence: None,
    };
    progress.start(
        spec.values.len() as u64,
        &format!("sweep {}", spec.axis.key()),
    );
    // Simulates one point; None when the sweep was cancelled meanwhile.
    let simulate_point =
        |model: &crate::sim::SimModel, label: String| -> Result<Option<TailReport>, PredictError> {
            let Some(t) = &spec.tails else {
                return Ok(None);
            };
            progress.message(&format!("{label}: simulating"));
            let r = simulate_model(model, &t.options, &CancelOnly(progress));
            if progress.is_cancelled() {
                return Ok(None);
            }
            r.map(Some)
        };
    if spec.axis.is_population() {
        let cn = build(s, p)?;
        warnings.extend(cn.warnings.iter().cloned());
        let cs = match &spec.tails {
            Some(t) => Some(build_sim(s, p, &t.options.service)?),
            None => None,
        };
        // I/Os in flight per unit of the iodepth.
        let other = s.images * s.jobs_per_image;
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
                    note(w, *v);
                }
                solver = solved.solver;
                let mut pt = point(*v, *n, solved.figures, bounds(&cn, *n).max_iops);
                if let Some(cs) = &cs {
                    match simulate_point(
                        &cs.with_population(*n),
                        format!("{}={v}", spec.axis.key()),
                    )? {
                        Some(t) => pt.tails = Some(t),
                        None => {
                            complete = false;
                            break;
                        }
                    }
                }
                points.push(pt);
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
                SweepAxis::Images => sp.workload.images = v32,
                SweepAxis::Jobs => sp.workload.jobs_per_image = v32,
                SweepAxis::Iodepth => unreachable!("the iodepth axis is handled above"),
            }
            match s.revalidate(&sp) {
                Err(e) => skipped.push(SkippedPoint {
                    value: v,
                    reason: e.to_string().trim_start_matches("scenario: ").to_string(),
                }),
                Ok(sv) => {
                    let r = predict(&sv, p, &opts)?;
                    let tails = match &spec.tails {
                        Some(t) => {
                            let cs = build_sim(&sv, p, &t.options.service)?;
                            match simulate_point(&cs.model, format!("{}={v}", spec.axis.key()))? {
                                Some(t) => Some(t),
                                None => {
                                    complete = false;
                                    break;
                                }
                            }
                        }
                        None => None,
                    };
                    for w in r.warnings {
                        note(w, v);
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
                        tails,
                    });
                }
            }
            progress.advance(1);
        }
    }
    progress.finish();
    for (w, vs) in per_point {
        let w = if vs.len() == points.len() {
            w
        } else {
            let list: Vec<String> = vs.iter().map(u64::to_string).collect();
            format!("{}={}: {w}", spec.axis.key(), list.join(","))
        };
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    let knee = spec.latency_target_secs.map(|t| {
        knee(
            &points,
            t,
            spec.axis,
            spec.tails.as_ref().map(|t| t.percentile),
        )
    });
    warnings.extend(hardware_drops(
        &points,
        spec.axis,
        s.read_fraction < 1.0,
        s.clients_colocated,
    ));
    for pt in &points {
        for w in pt.tails.iter().flat_map(|t| &t.warnings) {
            let w = format!("{}={}: {w}", spec.axis.key(), pt.value);
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
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

/// A drop smaller than this share is not reported (the solvers converge far tighter).
const HARDWARE_DROP_SLACK: f64 = 1e-3;

/// Where more hardware at the same load (more OSD nodes, more devices per node, more
/// client nodes) gives fewer IOPS between two neighbouring values of the axis, a warning
/// that says by how much and what is measured of it, so that a dip in a sweep is never
/// read as a measured effect. The points are taken in axis order, whatever order the user
/// gave.
fn hardware_drops(
    points: &[SweepPoint],
    axis: SweepAxis,
    writes: bool,
    colocated: bool,
) -> Vec<String> {
    // The model's economies that thin as the same load spreads: write batches only where
    // the workload writes (a read-only sweep was told of them, session 52's audit).
    let economies = if writes {
        "per-OSD write batches and messenger coalescing groups (qn::ceph, \"Write \
         batching\", \"Messenger coalescing\")"
    } else {
        "messenger coalescing groups (qn::ceph, \"Messenger coalescing\")"
    };
    let why = match axis {
        SweepAxis::DevicesPerNode => format!(
            "one more OSD on the same cores thins the model's {economies}. Measured, \
             doubling the OSDs on the same cores cost 3 % of the reads and 8 % of the \
             writes with the clients apart (ceph.io 2023 \"Ceph Reef - 1 or 2 OSDs per \
             NVMe?\", 2 CPU threads per NVMe) and 10-14 % with fio on the same two cores \
             (calibration-data/lab/osd-count-2vcpu/); a larger drop is the model's, not a \
             measurement (README, \"Physical sanity\")"
        ),
        SweepAxis::Nodes => format!(
            "{}the same load spread over more nodes thins the model's {economies}; no \
             measurement in the corpus shows more nodes costing IOPS at the same load, so \
             read the drop as the model's, not a measurement (README, \"Physical sanity\")",
            if colocated {
                "with fio on the OSD nodes one I/O in `nodes` is served on its own node, so \
                 with more nodes more of the data crosses a link; and "
            } else {
                ""
            }
        ),
        SweepAxis::Clients => format!(
            "the same fio processes spread over more client nodes change the model's client \
             CPU (each process runs on at most `client_threads_per_process` threads of its \
             node) and thin its {economies}; no measurement in the corpus shows more client \
             nodes costing IOPS at the same load, so read the drop as the model's, not a \
             measurement (README, \"Physical sanity\")"
        ),
        _ => return Vec::new(),
    };
    let mut sorted: Vec<&SweepPoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.value);
    let drops: Vec<String> = sorted
        .windows(2)
        .filter(|w| w[1].iops < w[0].iops * (1.0 - HARDWARE_DROP_SLACK))
        .map(|w| {
            format!(
                "{} → {}: {} → {} ({:+.1} %)",
                w[0].value,
                w[1].value,
                super::format::thousands(w[0].iops),
                super::format::thousands(w[1].iops),
                100.0 * (w[1].iops / w[0].iops - 1.0),
            )
        })
        .collect();
    if drops.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "IOPS fall with more hardware at the same load ({} {}): {why}",
        axis.key(),
        drops.join(", ")
    )]
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
        tails: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(value: u64, iops: f64) -> SweepPoint {
        SweepPoint {
            value,
            in_flight: 512,
            iops,
            read_iops: iops,
            write_iops: 0.0,
            bandwidth_bytes_per_sec: iops * 4096.0,
            latency_mean_secs: 512.0 / iops,
            latency_read_mean_secs: Some(512.0 / iops),
            latency_write_mean_secs: None,
            bottleneck: Bottleneck {
                resource: "osd_cpu".into(),
                utilization: 0.99,
            },
            utilization: BTreeMap::new(),
            max_iops: 2e6,
            tails: None,
        }
    }

    #[test]
    fn a_hardware_sweep_names_each_drop_in_axis_order_and_what_is_measured_of_it() {
        // Given in the user's order 3, 1, 2, 4, 6: in axis order 1 → 2 falls 12.5 %, 2 → 3
        // falls 15.8 %, 3 → 4 rises, 4 → 6 falls 0.05 % (under the slack) — hand-made
        // figures, the shape of a 6-core node's reads with 1 to 6 NVMe OSDs.
        let points = [
            pt(3, 542_618.0),
            pt(1, 736_676.0),
            pt(2, 644_504.0),
            pt(4, 564_830.0),
            pt(6, 564_830.0 * (1.0 - 5e-4)),
        ];
        let w = hardware_drops(&points, SweepAxis::DevicesPerNode, true, false);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "IOPS fall with more hardware at the same load (devices_per_node 1 → 2: \
                 736,676 → 644,504 (-12.5 %), 2 → 3: 644,504 → 542,618 (-15.8 %)): "
            ),
            "{}",
            w[0]
        );
        assert!(
            !w[0].contains("3 → 4") && !w[0].contains("4 → 6"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("1 or 2 OSDs per NVMe?") && w[0].contains("osd-count-2vcpu"));
        // More nodes: the same check, its own explanation.
        let n = hardware_drops(&points, SweepAxis::Nodes, true, false);
        assert!(n[0].contains("(nodes 1 → 2: ") && n[0].contains("no measurement"));
        // A read-only sweep is not told of write batches; fio on the OSD nodes is told
        // of the reads served on their own node.
        let r = hardware_drops(&points, SweepAxis::Nodes, false, true);
        assert!(
            !r[0].contains("write batches") && r[0].contains("its own node"),
            "{}",
            r[0]
        );
        assert!(hardware_drops(&points, SweepAxis::Clients, false, false)[0]
            .contains("client_threads_per_process"));
        // Axes that are not more hardware at the same load say nothing of it.
        for axis in [SweepAxis::Iodepth, SweepAxis::Images, SweepAxis::BlockSize] {
            assert!(
                hardware_drops(&points, axis, true, false).is_empty(),
                "{axis:?}"
            );
        }
        // Nor does a sweep whose IOPS never fall.
        let rising = [pt(1, 1e5), pt(2, 2e5), pt(3, 2e5)];
        assert!(hardware_drops(&rising, SweepAxis::DevicesPerNode, true, false).is_empty());
    }
}
