//! Comparison reports: several scenarios predicted with one model, side by side, for a
//! reader who has to choose between them (`cephplan compare A.toml B.toml … --report
//! out.html`, and the desktop app's Compare page).
//!
//! [`compare`] computes a [`ComparisonReport`] from library calls only — `predict::predict`
//! for the headline, its 95 % interval and its caveats, `predict::predict_tails` for the
//! simulated p99, and an iodepth `predict::sweep` carried past each variant's knee under
//! the latency target — so every figure equals what `cephplan predict` and `cephplan
//! sweep` give for the same file and model. Per-node, per-core and per-watt figures divide
//! the predicted IOPS by the hardware the scenario names (watts: the OSD nodes' CPU TDP
//! from the catalogue, the only power figure it has). Each variant carries the catalogue
//! sources of its hardware and the assumptions its file marks (`ASSUMED`, `INFERRED`). A
//! variant whose file has a `[degraded]` table also carries `predict::predict_degraded`'s
//! figures for it (nodes down during recovery, or undersized), so that designs can be
//! compared with a node down too.
//!
//! [`render`] turns a report into Markdown or a self-contained HTML page (plots embedded),
//! CSV, and the plots as PNG bytes drawn by `plotters` ([`plot`]). Not here: writing files
//! (the caller does, atomically) or any modelling.

pub mod plot;
pub mod render;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::ModelParams;
use crate::predict::{
    predict, predict_degraded, predict_tails, sweep, Bottleneck, Interval, KneeReport, ModelInfo,
    PredictError, PredictOptions, SweepAxis, SweepPoint, SweepSpec, TailOptions,
};
use crate::progress::Progress;
use crate::sim::Estimate;
use crate::spec::Scenario;

/// Version of the report's JSON form. 1: first version.
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// Deepest iodepth the curve goes to when looking for the point past the knee.
pub const MAX_SWEPT_IODEPTH: u32 = 4096;

/// One scenario to compare.
#[derive(Debug, Clone)]
pub struct VariantInput {
    /// Name in the report (unique within a comparison).
    pub name: String,
    /// Where the scenario came from (its file).
    pub origin: String,
    /// The scenario's text (for the assumptions it marks).
    pub text: String,
    pub scenario: Scenario,
}

/// How to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// The knee is the highest IOPS whose mean latency meets this.
    pub latency_target_secs: f64,
    /// Simulate each variant at its own iodepth for the p99 (None: no p99 column).
    pub tails: Option<TailOptions>,
    /// How the report names the model ("shipped default model", a file path).
    pub model_label: String,
}

/// The comparison. JSON keys are a contract for other tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonReport {
    pub schema_version: u32,
    pub generator: String,
    pub model: ModelInfo,
    /// FNV-1a 64 of the model as written (`ModelParams::to_toml`): two reports with the
    /// same fingerprint used the same model.
    #[serde(default)]
    pub model_fingerprint: String,
    pub model_label: String,
    pub latency_target_secs: f64,
    /// The simulation's seed and relative precision, when p99 was simulated.
    pub tails_seed: Option<u64>,
    pub tails_relative_precision: Option<f64>,
    pub variants: Vec<VariantReport>,
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantReport {
    pub name: String,
    pub origin: String,
    /// What the variant is, in words (protection, hardware, networks, clients, workload).
    pub configuration: Configuration,
    pub nodes: u32,
    pub osds: u32,
    /// CPU cores of the OSD nodes (nodes × sockets × cores per socket).
    pub cores: u32,
    /// Sum of the OSD nodes' CPU TDP, when the catalogue has it.
    pub cpu_tdp_watts: Option<f64>,
    pub raw_bytes: f64,
    pub usable_bytes: f64,
    /// I/Os in flight at the scenario's own load (images × jobs × iodepth).
    pub in_flight: u32,
    pub iodepth: u32,
    pub iops: f64,
    pub bandwidth_bytes_per_sec: f64,
    pub latency_mean_secs: f64,
    /// Simulated p99 of all I/Os with its confidence interval (None without simulation).
    pub latency_p99_secs: Option<Estimate>,
    /// `predict`'s 95 % interval.
    pub interval: Option<Interval>,
    /// The knee of the iodepth sweep under the latency target (by the MVA mean).
    pub knee: KneeReport,
    pub iops_per_node: f64,
    pub iops_per_core: f64,
    /// IOPS per watt of OSD-node CPU TDP (drives, NICs and memory not counted).
    pub iops_per_cpu_watt: Option<f64>,
    pub bottleneck: Bottleneck,
    /// Per-server utilisation of each resource at the scenario's load.
    pub utilization: BTreeMap<String, f64>,
    /// Where the mean latency goes at the scenario's load (`cephplan predict`'s parts).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub latency_parts: BTreeMap<String, crate::predict::LatencyPart>,
    /// The iodepth sweep, ascending, carried past the knee.
    pub curve: Vec<SweepPoint>,
    /// What `cephplan predict` prints as warnings for this scenario and model.
    pub warnings: Vec<String>,
    /// The model's held-out record for this scenario's kinds of run (`cephplan predict`'s
    /// "held out" lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_by_kind: Vec<crate::model::TransferKind>,
    pub solver: String,
    /// Catalogue sources of the hardware: (what, catalogue name, source).
    pub sources: Vec<HardwareSource>,
    /// Lines of the scenario file marked ASSUMED or INFERRED.
    pub assumptions: Vec<String>,
    /// The scenario's `[degraded]` table predicted as `cephplan predict` does (nodes down
    /// during recovery, or undersized); absent without the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<crate::predict::DegradedReport>,
    /// Why the `[degraded]` table could not be predicted (e.g. fewer surviving hosts than
    /// `min_size`), when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded_error: Option<String>,
}

/// A variant's configuration in words, as the report's rows show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    /// "3× replicated, host failure domain", "EC 4+2, host failure domain".
    pub protection: String,
    /// Sockets × CPU per OSD node, cores, SMT and clock.
    pub node_cpu: String,
    /// Data drives per node (name, kind, capacity), OSDs per drive, WAL/DB device.
    pub drives: String,
    /// Public and cluster network line rates.
    pub network: String,
    /// Client nodes, or fio on the OSD nodes.
    pub clients: String,
    /// Pattern, block size, read share, images × jobs × iodepth, Ceph release.
    pub workload: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HardwareSource {
    pub part: String,
    pub name: String,
    pub source: String,
}

/// The lines of a scenario file whose comment marks the value as assumed or inferred,
/// as `table.key = value — ASSUMED: why`: the key under its table's path (`clients.nodes`,
/// not a bare `nodes` a reader takes for the cluster's), and the comment with the
/// comment-only lines that continue it.
pub fn marked_assumptions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut table = String::new();
    // Whether the last line was a marked one, whose comment a comment-only line continues.
    let mut continuing = false;
    for l in text.lines() {
        let t = l.trim();
        if let Some(h) = t
            .strip_prefix('[')
            .and_then(|h| h.split(']').next())
            .filter(|_| !t.starts_with("[["))
        {
            table = h.trim().to_string();
            continuing = false;
            continue;
        }
        if let Some(c) = t.strip_prefix('#') {
            if continuing && l.starts_with(char::is_whitespace) {
                if let Some(last) = out.last_mut() {
                    last.push(' ');
                    last.push_str(c.trim());
                }
            } else {
                continuing = false;
            }
            continue;
        }
        continuing = false;
        let Some((value, comment)) = l.split_once('#') else {
            continue;
        };
        let (comment, value) = (comment.trim(), value.trim());
        if value.is_empty() || !(comment.starts_with("ASSUMED") || comment.starts_with("INFERRED"))
        {
            continue;
        }
        let value = if table.is_empty() {
            value.to_string()
        } else {
            format!("{table}.{value}")
        };
        out.push(format!("{value} — {comment}"));
        continuing = true;
    }
    out
}

/// A part's name: its catalogue name, or for a part given inline its vendor and model
/// ("inline" when it states neither).
fn part_name(catalogue_name: &str, vendor: &str, model: &str) -> String {
    let stated = format!("{vendor} {model}").trim().to_string();
    if catalogue_name != "inline" || stated.is_empty() {
        catalogue_name.to_string()
    } else {
        stated
    }
}

/// What sets one variant apart, in words: the pool's protection, the OSD nodes' CPU and
/// drives, the networks, the clients and the workload (the report's configuration rows).
fn configuration(s: &Scenario) -> Configuration {
    use crate::spec::{FailureDomain, Protection};
    let cpu = |name: &str, e: &crate::spec::CpuEntry, sockets: u32| {
        format!(
            "{sockets} × {} ({} cores{} at {} GHz)",
            part_name(name, &e.vendor, &e.model),
            e.cores,
            if e.threads_per_core > 1 {
                format!(", {} threads each", e.threads_per_core)
            } else {
                String::new()
            },
            e.ghz
        )
    };
    let drive = |count: u32, name: &str, d: &crate::spec::DriveEntry| {
        format!(
            "{count} × {} ({}, {})",
            part_name(name, &d.vendor, &d.model),
            match d.kind {
                crate::spec::DriveKind::Nvme => "NVMe",
                crate::spec::DriveKind::SataSsd => "SATA SSD",
                crate::spec::DriveKind::SasSsd => "SAS SSD",
                crate::spec::DriveKind::Optane => "Optane",
                crate::spec::DriveKind::Hdd => "HDD",
            },
            crate::predict::format::eng(
                d.capacity.0 as f64,
                crate::predict::format::Quantity::Bytes
            )
        )
    };
    let gbps = |b: f64| format!("{} Gb/s", b / 1e9);
    Configuration {
        protection: format!(
            "{}, {} failure domain",
            match s.protection {
                Protection::Replicated { size } => format!("{size}× replicated"),
                Protection::Erasure { k, m } => format!("EC {k}+{m}"),
            },
            match s.failure_domain {
                FailureDomain::Host => "host",
                FailureDomain::Osd => "OSD",
            }
        ),
        node_cpu: cpu(&s.node_cpu_name, &s.node_cpu, s.sockets),
        drives: format!(
            "{}, {} OSD{} each{}",
            drive(s.data.count_per_node, &s.data.name, &s.data.drive),
            s.osds_per_device,
            if s.osds_per_device == 1 { "" } else { "s" },
            s.wal.as_ref().map_or(String::new(), |w| format!(
                "; WAL/DB on {}",
                drive(w.count_per_node, &w.name, &w.drive)
            ))
        ),
        network: match s.cluster_bits_per_sec {
            Some(c) => format!(
                "public {}, cluster {}",
                gbps(s.public_bits_per_sec),
                gbps(c)
            ),
            None => format!(
                "public {} (no cluster network)",
                gbps(s.public_bits_per_sec)
            ),
        },
        clients: if s.clients_colocated {
            format!("fio on the {} OSD nodes", s.client_nodes)
        } else {
            format!(
                "{} nodes of {}, {}",
                s.client_nodes,
                cpu(&s.client_cpu_name, &s.client_cpu, s.client_sockets),
                gbps(s.client_nic_bits_per_sec)
            )
        },
        workload: format!(
            "{} {}{}, {} images × {} jobs × iodepth {}; Ceph {}",
            match s.pattern {
                crate::spec::Pattern::Randread => "random read",
                crate::spec::Pattern::Randwrite => "random write",
                crate::spec::Pattern::Randrw => "random read/write",
                crate::spec::Pattern::Read => "sequential read",
                crate::spec::Pattern::Write => "sequential write",
            },
            crate::units::Bytes(s.block_size_bytes),
            if s.read_fraction > 0.0 && s.read_fraction < 1.0 {
                format!(" ({:.0} % reads)", s.read_fraction * 100.0)
            } else {
                String::new()
            },
            s.images,
            s.jobs_per_image,
            s.iodepth,
            s.ceph_release
        ),
    }
}

fn sources(s: &Scenario) -> Vec<HardwareSource> {
    let mut v = vec![HardwareSource {
        part: "OSD node CPU".into(),
        name: part_name(&s.node_cpu_name, &s.node_cpu.vendor, &s.node_cpu.model),
        source: s.node_cpu.source.clone(),
    }];
    v.push(HardwareSource {
        part: "data device".into(),
        name: part_name(&s.data.name, &s.data.drive.vendor, &s.data.drive.model),
        source: s.data.drive.source.clone(),
    });
    if let Some(w) = &s.wal {
        v.push(HardwareSource {
            part: "WAL/DB device".into(),
            name: part_name(&w.name, &w.drive.vendor, &w.drive.model),
            source: w.drive.source.clone(),
        });
    }
    v.push(HardwareSource {
        part: "client CPU".into(),
        name: part_name(
            &s.client_cpu_name,
            &s.client_cpu.vendor,
            &s.client_cpu.model,
        ),
        source: s.client_cpu.source.clone(),
    });
    for h in &mut v {
        if h.source.trim().is_empty() {
            h.source = "given inline in the scenario file (no catalogue source)".into();
        }
    }
    v
}

/// The iodepth curve: doubling from 1 (and the scenario's own iodepth) until a point's
/// mean latency exceeds twice the target past the scenario's own iodepth, or
/// [`MAX_SWEPT_IODEPTH`], then bisected to the whole iodepth between the deepest point
/// that meets the target and the next; returns the points and the knee under the target.
fn curve_past_knee(
    s: &Scenario,
    p: &ModelParams,
    target_secs: f64,
    progress: &dyn Progress,
) -> Result<(Vec<SweepPoint>, KneeReport, Vec<String>), PredictError> {
    let mut depths: Vec<u32> = std::iter::successors(Some(1u32), |d| d.checked_mul(2))
        .take_while(|&d| d <= MAX_SWEPT_IODEPTH)
        .collect();
    depths.push(s.iodepth);
    depths.sort_unstable();
    depths.dedup();
    let mut points: Vec<SweepPoint> = Vec::new();
    let mut warnings = Vec::new();
    let mut last = None;
    let at = |d: u32, warnings: &mut Vec<String>| -> Result<_, PredictError> {
        let r = sweep(
            s,
            p,
            &SweepSpec {
                axis: SweepAxis::Iodepth,
                values: vec![u64::from(d)],
                latency_target_secs: Some(target_secs),
                tails: None,
            },
            &crate::progress::NoProgress,
        )?;
        warnings.extend(r.warnings.iter().cloned());
        Ok(r)
    };
    for d in depths {
        if progress.is_cancelled() {
            break;
        }
        let r = at(d, &mut warnings)?;
        let past = r
            .points
            .first()
            .is_some_and(|pt| pt.latency_mean_secs > 2.0 * target_secs && d >= s.iodepth);
        points.extend(r.points.iter().cloned());
        last = Some(r);
        if past {
            break;
        }
    }
    // The knee to the whole iodepth: between the deepest point that meets the target and
    // the next, which does not, bisect (the mean latency grows with the iodepth).
    let meets = |pt: &SweepPoint| pt.latency_mean_secs <= target_secs;
    if let Some(i) = points.iter().rposition(&meets) {
        if let Some(next) = points.get(i + 1).map(|pt| pt.value) {
            let (mut lo, mut hi) = (points[i].value, next);
            while hi - lo > 1 && !progress.is_cancelled() {
                let mid = lo + (hi - lo) / 2;
                let r = at(u32::try_from(mid).unwrap_or(u32::MAX), &mut warnings)?;
                let ok = r.points.first().is_some_and(&meets);
                points.extend(r.points.iter().cloned());
                if ok {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            points.sort_by_key(|pt| pt.value);
        }
    }
    let mut all = last.expect("at least iodepth 1 is swept");
    all.points = points;
    let knee = all.knee_at(target_secs, None);
    warnings.sort();
    warnings.dedup();
    Ok((all.points, knee, warnings))
}

/// The knee of `s` under a mean-latency target as a comparison report states it: the
/// deepest whole iodepth whose mean latency (exact MVA) meets the target, found on the
/// doubling curve and bisected between its points. The app's Prediction page shows the
/// same knee. A cancelled search returns the knee of the points done.
pub fn mean_knee(
    s: &Scenario,
    params: &ModelParams,
    target_secs: f64,
    progress: &dyn Progress,
) -> Result<KneeReport, PredictError> {
    curve_past_knee(s, params, target_secs, progress).map(|(_, knee, _)| knee)
}

/// Predicts every variant with `params` (see the module docs). Progress counts variants;
/// a cancelled comparison returns `PredictError`'s cancellation from the step it was in.
pub fn compare(
    variants: &[VariantInput],
    params: &ModelParams,
    opts: &CompareOptions,
    progress: &dyn Progress,
) -> Result<ComparisonReport, PredictError> {
    progress.start(variants.len() as u64, "variants");
    let mut out = Vec::with_capacity(variants.len());
    for v in variants {
        progress.message(&format!("predicting {}", v.name));
        let s = &v.scenario;
        let r = predict(s, params, &PredictOptions::default())?;
        let p99 = match &opts.tails {
            Some(t) => Some(
                predict_tails(s, params, t, &CancelOnly(progress))?
                    .all
                    .latency_p99_secs,
            ),
            None => None,
        };
        let (curve, knee, _) = curve_past_knee(s, params, opts.latency_target_secs, progress)?;
        let (degraded, degraded_error) = match s.spec.degraded {
            Some(d) => match predict_degraded(s, params, &d, &PredictOptions::default()) {
                Ok(x) => (Some(x), None),
                Err(e) => (None, Some(e.to_string())),
            },
            None => (None, None),
        };
        let cores = s.nodes * s.sockets * s.node_cpu.cores;
        let cpu_tdp_watts = s
            .node_cpu
            .tdp_watts
            .map(|w| w * f64::from(s.nodes * s.sockets));
        out.push(VariantReport {
            name: v.name.clone(),
            origin: v.origin.clone(),
            configuration: configuration(s),
            nodes: s.nodes,
            osds: s.total_osds(),
            cores,
            cpu_tdp_watts,
            raw_bytes: s.capacity.raw_bytes,
            usable_bytes: s.capacity.usable_bytes,
            in_flight: r.in_flight,
            iodepth: s.iodepth,
            iops: r.iops,
            bandwidth_bytes_per_sec: r.bandwidth_bytes_per_sec,
            latency_mean_secs: r.latency_mean_secs,
            latency_p99_secs: p99,
            interval: r.interval.clone(),
            knee,
            iops_per_node: r.iops / f64::from(s.nodes.max(1)),
            iops_per_core: r.iops / f64::from(cores.max(1)),
            iops_per_cpu_watt: cpu_tdp_watts.filter(|w| *w > 0.0).map(|w| r.iops / w),
            bottleneck: r.bottleneck.clone(),
            utilization: r.utilization.clone(),
            latency_parts: r.latency_parts.clone(),
            curve,
            warnings: r.warnings.clone(),
            held_out_by_kind: r.held_out_by_kind.clone(),
            solver: crate::predict::format::solver_label(r.solver.method, r.warnings.len()),
            sources: sources(s),
            assumptions: marked_assumptions(&v.text),
            degraded,
            degraded_error,
        });
        progress.advance(1);
    }
    progress.finish();
    Ok(ComparisonReport {
        schema_version: COMPARE_SCHEMA_VERSION,
        generator: format!(
            "{} {}",
            crate::io::GENERATED_MARKER,
            env!("CARGO_PKG_VERSION")
        ),
        model: ModelInfo::of(params),
        model_fingerprint: format!(
            "{:016x}",
            crate::calibrate::ceph::fnv1a64(params.to_toml().as_bytes())
        ),
        model_label: opts.model_label.clone(),
        latency_target_secs: opts.latency_target_secs,
        tails_seed: opts.tails.as_ref().map(|t| t.sim.seed),
        tails_relative_precision: opts.tails.as_ref().map(|t| t.sim.relative_precision),
        variants: out,
    })
}

/// Forwards only cancellation (the simulation's own progress would reset the variant bar).
struct CancelOnly<'a>(&'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

#[cfg(test)]
mod tests;
