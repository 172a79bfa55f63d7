//! Sizing: the smallest OSD node count whose best IOPS under a latency target reaches an
//! IOPS target. For each node count the in-flight count is walked from 1 up to the
//! scenario's own (images × jobs × iodepth, the most the user's clients issue), or up to
//! [`SizingSpec::max_in_flight`] when the clients may issue more, in one MVA pass, keeping
//! the highest IOPS whose mean latency stays within the target (every count up to 4,096,
//! log-spaced ones beyond: [`walked_populations`]).
//!
//! The in-flight ceiling matters as much as the hardware: by Little's law a closed load of
//! `N` I/Os in flight delivers `X` IOPS only at a mean latency of `N / X`, so with
//! `N < X · T` the target `X` can be met only below the latency target `T`, at `N / X`, and
//! the search sizes for that stricter latency. The report says so ([`SizingReport::
//! littles_law_latency_secs`]) and names the in-flight count that lets `T` decide.
//! What this is not: an open-loop (arrival-rate) sizing; the load is always fio's closed one.

use serde::{Deserialize, Serialize};

use super::{ModelInfo, PredictError, REPORT_SCHEMA_VERSION};
use crate::model::ModelParams;
use crate::progress::Progress;
use crate::qn::ceph::build;
use crate::spec::Scenario;

/// A sizing request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizingSpec {
    pub iops_target: f64,
    pub latency_target_secs: f64,
    /// Largest node count to try.
    pub max_nodes: u32,
    /// The most I/Os in flight the clients may keep (the same clients with deeper queues);
    /// `None`: the scenario's own images × jobs × iodepth.
    #[serde(default)]
    pub max_in_flight: Option<u32>,
}

/// The most I/Os in flight a sizing may walk to: the scenario's own limit
/// (`spec::Workload` validation).
pub const MAX_SIZING_IN_FLIGHT: u32 = 10_000_000;

/// One node count tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizingStep {
    pub nodes: u32,
    /// Highest IOPS with mean latency ≤ target (0 when even one I/O in flight misses it).
    pub best_iops: f64,
    /// I/Os in flight at that point.
    pub in_flight: u32,
    pub latency_mean_secs: f64,
    pub meets_target: bool,
    /// Why this node count could not be evaluated, if so.
    pub skipped: Option<String>,
    /// With the scenario's `[degraded]` table: the same search in that state (its nodes
    /// down during recovery, or undersized), which the node count must also pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<DegradedStep>,
}

/// The degraded state's best point at one node count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DegradedStep {
    pub best_iops: f64,
    pub in_flight: u32,
    pub latency_mean_secs: f64,
    /// Why the state could not be predicted (e.g. fewer surviving hosts than the pool's
    /// width): the node count then does not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizingReport {
    pub schema_version: u32,
    pub scenario: String,
    pub iops_target: f64,
    pub latency_target_secs: f64,
    /// The smallest node count meeting both targets, if any up to `max_nodes`.
    pub nodes: Option<u32>,
    pub steps: Vec<SizingStep>,
    pub raw_bytes: Option<f64>,
    pub usable_bytes: Option<f64>,
    pub note: String,
    /// The in-flight count each node count was walked up to.
    #[serde(default)]
    pub in_flight_limit: u32,
    /// When `in_flight_limit / iops_target` is below the latency target, the mean latency
    /// the IOPS target needs by Little's law (`in_flight_limit / iops_target`): the search
    /// could meet the target only at or below it. `None` when the latency target decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub littles_law_latency_secs: Option<f64>,
    pub complete: bool,
    pub model: ModelInfo,
    /// The model's held-out record for the kinds of run the scenario's workload is, as
    /// written ([`super::held_out_by_kind`]): what `predict` lists under "held out".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_by_kind: Vec<crate::model::TransferKind>,
}

/// Every in-flight count up to this one is walked; beyond it, [`WALK_SPARSE_POINTS`]
/// counts spaced evenly on the log scale.
pub const WALK_DENSE_UP_TO: u32 = 4096;

/// In-flight counts walked above [`WALK_DENSE_UP_TO`]: up to 10,000,000 in flight they are
/// at most 0.22 % apart ((10⁷ / 4096)^(1/4096) = 1.0019 on the log scale, a little more
/// where whole counts round apart), so the best IOPS found is within that of the best over
/// every count, while the solutions kept stay a few thousand (one per count walked:
/// keeping all 200,000 of a deep walk took 1.2 GB).
pub const WALK_SPARSE_POINTS: u32 = 4096;

/// The in-flight counts a sizing walks up to `limit` (sorted, unique, `limit` last):
/// every count to [`WALK_DENSE_UP_TO`], then [`WALK_SPARSE_POINTS`] log-spaced ones.
pub fn walked_populations(limit: u32) -> Vec<u32> {
    let dense = limit.min(WALK_DENSE_UP_TO);
    let mut out: Vec<u32> = (1..=dense).collect();
    if limit > dense {
        let (lo, hi) = (f64::from(dense).ln(), f64::from(limit).ln());
        for i in 1..=WALK_SPARSE_POINTS {
            let n = (lo + (hi - lo) * f64::from(i) / f64::from(WALK_SPARSE_POINTS))
                .exp()
                .round() as u32;
            let n = n.clamp(dense + 1, limit);
            if out.last() != Some(&n) {
                out.push(n);
            }
        }
        if out.last() != Some(&limit) {
            out.push(limit);
        }
    }
    out
}

/// The node counts tried as `cephplan size` prints them and the app shows them: header and
/// rows (a "nodes down" column when the scenario has a `[degraded]` table).
pub fn sizing_table(r: &SizingReport) -> (Vec<&'static str>, Vec<Vec<String>>) {
    use super::format::{ms, thousands};
    let degraded = r.steps.iter().any(|s| s.degraded.is_some());
    let rows = r
        .steps
        .iter()
        .map(|s| {
            let mut row = match &s.skipped {
                Some(why) => vec![
                    s.nodes.to_string(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    why.clone(),
                ],
                None => vec![
                    s.nodes.to_string(),
                    thousands(s.best_iops),
                    thousands(f64::from(s.in_flight)),
                    ms(s.latency_mean_secs),
                    if s.meets_target { "meets target" } else { "" }.into(),
                ],
            };
            if degraded {
                let down = match (&s.skipped, &s.degraded) {
                    (None, Some(d)) => match &d.error {
                        Some(e) => e.clone(),
                        None => format!(
                            "{} at {} in flight, {}",
                            thousands(d.best_iops),
                            thousands(f64::from(d.in_flight)),
                            ms(d.latency_mean_secs)
                        ),
                    },
                    _ => "-".into(),
                };
                row.insert(4, down);
            }
            row
        })
        .collect();
    let header = if degraded {
        vec![
            "nodes",
            "best IOPS",
            "in flight",
            "mean lat",
            "nodes down ([degraded])",
            "",
        ]
    } else {
        vec!["nodes", "best IOPS", "in flight", "mean lat", ""]
    };
    (header, rows)
}

/// Finds the smallest node count (1..=max_nodes, skipping counts that cannot hold the
/// pool) that meets the IOPS target within the latency target.
pub fn size(
    s: &Scenario,
    p: &ModelParams,
    spec: &SizingSpec,
    progress: &dyn Progress,
) -> Result<SizingReport, PredictError> {
    if !(spec.iops_target.is_finite() && spec.iops_target > 0.0) {
        return Err(PredictError::BadSizing {
            problem: format!("IOPS target {}", spec.iops_target),
            fix: "give a positive IOPS target".into(),
        });
    }
    if !(spec.latency_target_secs.is_finite() && spec.latency_target_secs > 0.0) {
        return Err(PredictError::BadSizing {
            problem: format!("latency target {} s", spec.latency_target_secs),
            fix: "give a positive latency target, e.g. 4ms".into(),
        });
    }
    if spec.max_nodes == 0 {
        return Err(PredictError::BadSizing {
            problem: "max nodes = 0".into(),
            fix: "allow at least 1 node".into(),
        });
    }
    if let Some(n) = spec.max_in_flight {
        if n == 0 || n > MAX_SIZING_IN_FLIGHT {
            return Err(PredictError::BadSizing {
                problem: format!("max in flight = {n}"),
                fix: format!(
                    "allow from 1 to {} I/Os in flight",
                    super::format::thousands(f64::from(MAX_SIZING_IN_FLIGHT))
                ),
            });
        }
    }
    let in_flight_limit = spec.max_in_flight.unwrap_or_else(|| s.population());
    let littles_law_latency_secs = {
        let needed = f64::from(in_flight_limit) / spec.iops_target;
        (needed < spec.latency_target_secs).then_some(needed)
    };
    // No larger cluster passes validation (`spec::MAX_OSDS`): stop there, instead of
    // trying (and listing) every count up to a `max_nodes` of billions.
    let allowed = (crate::spec::MAX_OSDS / u64::from(s.osds_per_node().max(1))).max(1) as u32;
    let last = spec.max_nodes.min(allowed);
    progress.start(u64::from(last), "sizing");
    let mut steps = Vec::new();
    let mut found = None;
    let mut complete = true;
    for nodes in 1..=last {
        if progress.is_cancelled() {
            complete = false;
            break;
        }
        progress.message(&format!("{nodes} nodes"));
        let mut sp = s.inline_spec();
        sp.cluster.nodes = nodes;
        let sv = match s.revalidate(&sp) {
            Ok(sv) => sv,
            Err(e) => {
                steps.push(SizingStep {
                    nodes,
                    best_iops: 0.0,
                    in_flight: 0,
                    latency_mean_secs: 0.0,
                    meets_target: false,
                    skipped: Some(e.to_string().trim_start_matches("scenario: ").to_string()),
                    degraded: None,
                });
                progress.advance(1);
                continue;
            }
        };
        // The in-flight counts of `walked_populations` in one MVA pass; the latency need not
        // grow with n (write batching can make a deeper queue faster), so no bisection.
        let populations = walked_populations(in_flight_limit);
        let best_of = |sc: &Scenario| -> Result<(f64, u32, f64), PredictError> {
            let cn = build(sc, p)?;
            let opts = crate::solve::SolveOptions::default();
            let mut best = (0.0, 0u32, 0.0);
            for (n, point) in
                populations
                    .iter()
                    .zip(super::solve_curve_at(&cn, &populations, &opts)?)
            {
                let f = point.figures;
                if f.latency_mean_secs <= spec.latency_target_secs && f.iops > best.0 {
                    best = (f.iops, *n, f.latency_mean_secs);
                }
            }
            Ok(best)
        };
        let best = best_of(&sv)?;
        // A `[degraded]` table asks for its state too (as `design` checks resilience).
        let degraded = match &sv.spec.degraded {
            Some(d) if best.0 >= spec.iops_target => Some(
                match super::degraded::degraded_scenario(&sv, d).and_then(|ds| best_of(&ds)) {
                    Ok(b) => DegradedStep {
                        best_iops: b.0,
                        in_flight: b.1,
                        latency_mean_secs: b.2,
                        error: None,
                    },
                    Err(e) => DegradedStep {
                        best_iops: 0.0,
                        in_flight: 0,
                        latency_mean_secs: 0.0,
                        error: Some(e.to_string()),
                    },
                },
            ),
            _ => None,
        };
        let meets = best.0 >= spec.iops_target
            && degraded
                .as_ref()
                .is_none_or(|d| d.error.is_none() && d.best_iops >= spec.iops_target);
        steps.push(SizingStep {
            nodes,
            best_iops: best.0,
            in_flight: best.1,
            latency_mean_secs: best.2,
            meets_target: meets,
            skipped: None,
            degraded,
        });
        progress.advance(1);
        if meets {
            found = Some(sv);
            break;
        }
    }
    progress.finish();
    let tried = steps.last().map_or(0, |st: &SizingStep| st.nodes);
    let whose = if spec.max_in_flight.is_some() {
        "--max-in-flight"
    } else {
        "as in the scenario"
    };
    let mut note = match &found {
        _ if !complete => format!(
            "cancelled after {tried} node count(s); none of them reaches {:.0} IOPS within {:.3} ms",
            spec.iops_target,
            spec.latency_target_secs * 1e3
        ),
        None if last < spec.max_nodes => format!(
            "no node count up to {last} reaches {:.0} IOPS within {:.3} ms with at most {in_flight_limit} I/Os in flight; {last} nodes × {} OSDs is the largest cluster cephplan models ({} OSDs), so larger counts up to --max-nodes {} were not tried; raise the in-flight count (--max-in-flight, or images, jobs, iodepth) or change the hardware",
            spec.iops_target,
            spec.latency_target_secs * 1e3,
            s.osds_per_node(),
            crate::spec::MAX_OSDS,
            spec.max_nodes
        ),
        Some(sv) => format!(
            "{} nodes reach {:.0} IOPS within {:.3} ms mean latency (in flight ≤ {in_flight_limit}, {whose}){}",
            sv.nodes,
            spec.iops_target,
            spec.latency_target_secs * 1e3,
            sv.spec.degraded.as_ref().map_or(String::new(), |d| format!(
                ", also with {} node(s) down as the scenario's [degraded] table asks",
                d.nodes_down
            ))
        ),
        None => format!(
            "no node count up to {} reaches {:.0} IOPS within {:.3} ms with at most {in_flight_limit} I/Os in flight; raise the in-flight count (--max-in-flight, or images, jobs, iodepth), --max-nodes, or change the hardware",
            spec.max_nodes,
            spec.iops_target,
            spec.latency_target_secs * 1e3,
        ),
    };
    if let Some(needed) = littles_law_latency_secs {
        note.push_str(&format!(
            "\nby Little's law {in_flight_limit} I/Os in flight deliver {:.0} IOPS only at a mean latency of {:.3} ms or less, below the {:.3} ms target, so the clients' in-flight count, not the target, sets the latency these node counts must reach; clients keeping at least {:.0} I/Os in flight let the {:.3} ms target decide (--max-in-flight, or more images, jobs or iodepth)",
            spec.iops_target,
            needed * 1e3,
            spec.latency_target_secs * 1e3,
            (spec.iops_target * spec.latency_target_secs).ceil(),
            spec.latency_target_secs * 1e3,
        ));
    }
    Ok(SizingReport {
        schema_version: REPORT_SCHEMA_VERSION,
        scenario: s.name.clone(),
        iops_target: spec.iops_target,
        latency_target_secs: spec.latency_target_secs,
        nodes: found.as_ref().map(|sv| sv.nodes),
        steps,
        raw_bytes: found.as_ref().map(|sv| sv.capacity.raw_bytes),
        usable_bytes: found.as_ref().map(|sv| sv.capacity.usable_bytes),
        note,
        in_flight_limit,
        littles_law_latency_secs,
        complete,
        model: ModelInfo::of(p),
        held_out_by_kind: super::held_out_by_kind(s, p),
    })
}
