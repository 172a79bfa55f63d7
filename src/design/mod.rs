//! Designing a bill of materials from requirements (`cephplan design`): search chassis ×
//! CPU × sockets × drive × drives per node × NIC × protection × node count for the designs
//! that meet every workload target (and, with `[resilience]`, the same with nodes down
//! during recovery), and return the Pareto front over cost, power and rack units plus the
//! cheapest design per protection scheme.
//!
//! **How the search is exact and fast.** Every candidate's objectives (cost from the
//! user's prices, power, rack units) are computed up front and the candidates are visited
//! in order of the primary objective (cost, else power, else rack units; then node count).
//! Each is checked, cheapest check first:
//! 1. constraints (failure-domain width, rack units, power budget, recovery time) and
//!    capacity (usable × fill limit ≥ the need; with nodes down the data must fit under
//!    Ceph's full ratio, 0.95, on the survivors);
//! 2. **dominance**: a candidate no better in any objective than a design already found
//!    with the same protection can be neither on the Pareto front nor the cheapest of its
//!    protection, so it is skipped unevaluated (this also skips every larger node count of
//!    a configuration that already meets the targets);
//! 3. the **asymptotic bounds** of its network (`X ≤ min(N / ΣD, min_k c_k·m_k / D_k)`,
//!    `R ≥ max(ΣD, N / X_max)`): a candidate whose bound misses a target cannot meet it;
//! 4. the exact prediction, by the same [`crate::predict::predict`] the `predict` command
//!    runs (so the numbers agree), and the simulated p99 ([`crate::predict::predict_tails`])
//!    only when a p99 target is set and everything else holds.
//!
//! A candidate's load is fixed (each workload's `images × jobs × iodepth` in flight), so
//! each of its scenarios is one solver pass: exact MVA reaches that population through
//! every smaller one in the same pass (the load curve `solve::single::solve_curve`
//! returns), and nothing is re-solved per population. Node counts are not points on a
//! load curve (each is a different network) and are separate candidates.
//!
//! Each workload is evaluated on its own (the model has one class per scenario): the
//! targets must hold when that workload runs alone. With resilience, each is also
//! predicted by [`crate::predict::degraded_scenario`] (survivors, recovery share).
//!
//! Not here: parsing (`requirements`, `prices`), printing (the CLI), the model (`qn::ceph`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::ModelParams;
use crate::predict::{
    degraded_scenario, predict, predict_tails, recovery_estimate, ModelInfo, PredictError,
    PredictOptions, PredictionReport, RecoveryEstimate, TailOptions, REPORT_SCHEMA_VERSION,
};
use crate::progress::Progress;
use crate::spec::{
    ClusterSpec, DegradedSpec, DevicesSpec, ErasureSpec, FailureDomain, HwRef, NetworkSpec,
    NodeSpec, PoolSpec, Protection, Scenario, ScenarioSpec, SpecError, SCENARIO_SCHEMA_VERSION,
};
use crate::units::BitsPerSec;

mod prices;
mod requirements;
pub mod tables;

pub use prices::{
    PriceEntryAt, PriceList, PriceListSpec, PriceSpec, MAX_UNIT_PRICE, PRICES_SCHEMA_VERSION,
};
pub use requirements::{
    load_requirements, parse_requirements, width, CapacitySpec, Chassis, ChassisSpec, CheckAt,
    ConstraintsSpec, ErasureOption, PartsSpec, ProtectionSpec, RangeSpec, Requirements,
    RequirementsSpec, Resilience, ResilienceSpec, Target, TargetSpec, WorkloadRequirement,
    WorkloadRequirementSpec, FULL_RATIO, REQUIREMENTS_SCHEMA_VERSION,
};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DesignError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Predict(#[from] PredictError),
    #[error("{part} has no price in {prices}; fix: add a [[price]] for \"{part}\" there, or remove the part from the constraints")]
    Unpriced { part: String, prices: String },
}

/// One choice of parts and node count (what a candidate is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartChoice {
    pub cpu: String,
    pub sockets: u32,
    pub drive: String,
    pub drives_per_node: u32,
    pub nic: String,
    /// The NIC's rate per port (the public network; a second port is the cluster one).
    pub nic_speed: BitsPerSec,
    pub nic_ports: u32,
    pub nodes: u32,
    pub protection: Protection,
    pub failure_domain: FailureDomain,
}

/// The scenario of one workload on one choice of parts: catalogue names, a pool of the
/// chosen protection, the NIC's rate as the public network (a second port, if the NIC has
/// one, as the cluster network), and `[degraded]` when given.
pub fn scenario_spec_of(
    name: &str,
    ceph_release: &str,
    osds_per_device: u32,
    osd_memory_target: Option<crate::units::Bytes>,
    c: &PartChoice,
    w: &WorkloadRequirement,
    degraded: Option<DegradedSpec>,
) -> ScenarioSpec {
    let rate = c.nic_speed;
    let (replicated, erasure) = match c.protection {
        Protection::Replicated { size } => (Some(size), None),
        Protection::Erasure { k, m } => (
            None,
            Some(ErasureSpec {
                k,
                m,
                stripe_unit: None,
            }),
        ),
    };
    ScenarioSpec {
        schema_version: SCENARIO_SCHEMA_VERSION,
        name: format!("{name}: {}", w.name),
        description: format!(
            "{} nodes × ({} × {}, {} × {}, {}), {}",
            c.nodes,
            c.sockets,
            c.cpu,
            c.drives_per_node,
            c.drive,
            c.nic,
            protection_label(c.protection)
        ),
        cluster: ClusterSpec {
            nodes: c.nodes,
            ceph_release: ceph_release.to_string(),
            rocksdb_build: None,
            ceph_config: crate::spec::CephConfigSpec {
                osd_memory_target,
                ..Default::default()
            },
            balancer: None,
            node: NodeSpec {
                cpu: HwRef::Name(c.cpu.clone()),
                sockets: c.sockets,
                memory_gib: None,
                osds_per_device,
                data_devices: DevicesSpec {
                    count: c.drives_per_node,
                    model: HwRef::Name(c.drive.clone()),
                },
                wal_device: None,
                network: NetworkSpec {
                    public: rate,
                    cluster: (c.nic_ports >= 2).then_some(rate),
                },
            },
        },
        pool: PoolSpec {
            replicated,
            erasure,
            pg_count: None,
            failure_domain: c.failure_domain,
        },
        clients: w.clients.clone(),
        workload: w.workload.clone(),
        degraded,
    }
}

/// What the predictions assume about the data set: with an image size, the onodes the
/// BlueStore cache cannot hold cost every OSD op a load from RocksDB (`qn::ceph`, "The
/// onode cache"), so more OSDs or memory per OSD raise small-I/O IOPS; without one the
/// data set counts as cached.
pub fn working_set_note(req: &Requirements) -> String {
    let gib = |b: u64| format!("{} GiB", b as f64 / f64::from(1u32 << 30));
    let target = req.osd_memory_target.map_or_else(
        || {
            format!(
                "{}, Ceph's default",
                gib(crate::spec::OSD_MEMORY_TARGET_DEFAULT_BYTES)
            )
        },
        |t| gib(t.0),
    );
    let sized: Vec<&str> = req
        .workloads
        .iter()
        .filter(|w| w.workload.image_size.is_some())
        .map(|w| w.name.as_str())
        .collect();
    if sized.is_empty() {
        format!(
            "no workload states image_size: the data set counts as cached in BlueStore, which is optimistic for a working set larger than the OSDs' caches (osd_memory_target {target}); give each workload's image_size to count the onode misses"
        )
    } else {
        format!(
            "{} state{} image_size: each OSD caches the onodes its osd_memory_target ({target}) allows and the rest cost a RocksDB load per op, so more OSDs or memory per OSD raise small-I/O IOPS; each design states the memory its nodes' OSDs aim at (OSDs per node × the target)",
            sized.join(", "),
            if sized.len() == 1 { "s" } else { "" }
        )
    }
}

/// By Little's law a closed load of `N` I/Os in flight delivers `X` IOPS only at a mean
/// latency of `N / X`: where a workload's in-flight count is below its IOPS (or bandwidth)
/// target × its mean-latency target, the designs must reach that stricter latency, which
/// the requirements do not say. One note per such workload, with the in-flight count that
/// lets the latency target decide (`cephplan size --max-in-flight` does the same for one
/// scenario).
pub fn littles_law_notes(req: &Requirements) -> Vec<String> {
    req.workloads
        .iter()
        .filter_map(|w| {
            let latency_max = w.target.latency_mean_max_secs?;
            let block = w.workload.block_size.0 as f64;
            let iops = w
                .target
                .iops_min
                .into_iter()
                .chain(w.target.bandwidth_bytes_per_sec_min.map(|b| b / block))
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
            let n = f64::from(w.population());
            let needed = n / iops;
            (needed < latency_max).then(|| {
                format!(
                    "workload {}: by Little's law its {n:.0} I/Os in flight deliver {iops:.0} IOPS only at a mean latency of {:.3} ms or less, below its {:.3} ms target, so the designs must reach that latency; clients keeping at least {:.0} I/Os in flight (more images, jobs or iodepth) let the target decide",
                    w.name,
                    needed * 1e3,
                    latency_max * 1e3,
                    (iops * latency_max).ceil()
                )
            })
        })
        .collect()
}

/// "3× replicated" or "EC 4+2".
pub fn protection_label(p: Protection) -> String {
    match p {
        Protection::Replicated { size } => format!("{size}× replicated"),
        Protection::Erasure { k, m } => format!("EC {k}+{m}"),
    }
}

/// Options of [`design`].
#[derive(Debug, Clone, PartialEq)]
pub struct DesignOptions {
    /// How p99 targets are simulated.
    pub tails: TailOptions,
    /// How many of the next cheaper failing candidates to explain.
    pub explain: usize,
    /// Most simulations (p99 targets) one search may run; candidates that would need more
    /// are left unchecked and the report says so.
    pub max_simulations: u64,
}

impl Default for DesignOptions {
    fn default() -> Self {
        let mut tails = TailOptions::default();
        tails.sim.relative_precision = 0.05;
        tails.sim.threads = 1;
        Self {
            tails,
            explain: 5,
            max_simulations: 200,
        }
    }
}

/// A line of the bill of materials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BomLine {
    /// `chassis.<name>`, `cpu.<name>`, `drive.<name>`, `nic.<name>`.
    pub part: String,
    pub count: u32,
    pub unit_price: Option<f64>,
    pub unit_power_watts: Option<f64>,
}

/// One target checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headroom {
    /// `iops ≥`, `bandwidth ≥`, `mean latency ≤`, `p99 latency ≤`, `usable capacity ≥`,
    /// `recovery time ≤`, `rack units ≤`, `power ≤`.
    pub target: String,
    pub required: f64,
    pub predicted: f64,
    /// Relative margin: predicted/required − 1 for "≥", required/predicted − 1 for "≤";
    /// negative = missed by that fraction.
    pub headroom: f64,
}

impl Headroom {
    fn at_least(target: &str, required: f64, predicted: f64) -> Self {
        Self {
            target: target.into(),
            required,
            predicted,
            headroom: predicted / required - 1.0,
        }
    }
    fn at_most(target: &str, required: f64, predicted: f64) -> Self {
        Self {
            target: target.into(),
            required,
            predicted,
            headroom: if predicted > 0.0 {
                required / predicted - 1.0
            } else {
                f64::INFINITY
            },
        }
    }
    pub fn met(&self) -> bool {
        self.headroom >= 0.0
    }
}

/// A workload predicted on a design in one state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub workload: String,
    /// `all nodes up` or `N node(s) down, recovering`.
    pub state: String,
    /// The full prediction (with interval), as `cephplan predict` gives it.
    pub prediction: PredictionReport,
    pub headroom: Vec<Headroom>,
}

/// A design that meets every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// `d1`, `d2`, … in report order.
    pub id: String,
    pub parts: PartChoice,
    pub chassis: String,
    pub protection_label: String,
    pub bom: Vec<BomLine>,
    pub cost: Option<f64>,
    pub power_watts: Option<f64>,
    pub rack_units: u32,
    pub raw_bytes: f64,
    pub usable_bytes: f64,
    /// Memory the OSDs of one node aim at: OSDs per node × `osd_memory_target` (the
    /// operating system, monitors and co-located clients need theirs on top).
    pub osd_memory_bytes_per_node: f64,
    pub results: Vec<WorkloadResult>,
    pub recovery: Option<RecoveryEstimate>,
    pub pareto: bool,
    pub cheapest_of_protection: bool,
}

/// Why a candidate fails: its worst miss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// One-line description of the candidate.
    pub candidate: String,
    pub cost: Option<f64>,
    pub power_watts: Option<f64>,
    pub rack_units: u32,
    /// Workload name, or empty for capacity and constraints.
    pub workload: String,
    pub state: String,
    pub miss: Headroom,
    /// True when the miss is from the asymptotic bound (the exact miss is at least this).
    pub by_bound: bool,
}

/// Counts of the search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchStats {
    /// Candidates in the space (chassis × CPU × sockets × drive × drives/node × NIC ×
    /// protection × nodes, within the chassis limits).
    pub candidates: u64,
    pub rejected_by_constraints: u64,
    pub rejected_by_capacity: u64,
    pub skipped_as_dominated: u64,
    pub pruned_by_bounds: u64,
    /// Candidates predicted exactly (each workload, each state).
    pub predicted: u64,
    /// Exact predictions (solves) made.
    pub predictions: u64,
    pub simulations: u64,
    /// Candidates that met every mean target but whose p99 was not simulated because the
    /// simulation budget (`DesignOptions::max_simulations`) was spent.
    pub unchecked_p99: u64,
    pub feasible: u64,
    /// False when cancelled: the designs are the best found so far.
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignReport {
    pub schema_version: u32,
    pub requirements: String,
    /// Objectives in order: `cost`, `power`, `rack units` (those available).
    pub objectives: Vec<String>,
    pub currency: Option<String>,
    /// What the ranking rests on, and what was refused (power without figures).
    pub notes: Vec<String>,
    /// The Pareto front and the cheapest per protection, cheapest first.
    pub designs: Vec<Design>,
    /// For the cheapest design: why the next cheaper candidates fail.
    pub cheaper_failures: Vec<Failure>,
    /// When no design meets everything: "no design meets X; the closest misses by Y".
    pub no_design: Option<String>,
    /// The candidate that came closest, when nothing met every target.
    pub closest: Option<Failure>,
    pub stats: SearchStats,
    pub model: ModelInfo,
    /// What the targets were checked against (the range the table shows).
    #[serde(default)]
    pub check_at: CheckAt,
}

/// A candidate in the sorted list.
#[derive(Debug, Clone, Copy)]
struct Cand {
    chassis: u16,
    cpu: u16,
    drive: u16,
    nic: u16,
    prot: u16,
    sockets: u32,
    dpn: u32,
    nodes: u32,
    cost: f64,
    power: f64,
    ru: u32,
}

/// Per-node figures of a node configuration.
fn node_cost_power(
    req: &Requirements,
    prices: Option<&PriceList>,
    c: &Cand,
) -> (Option<f64>, Option<f64>) {
    let ch = &req.chassis[c.chassis as usize];
    let (cn, cpu) = &req.cpus[c.cpu as usize];
    let (dn, d) = &req.drives[c.drive as usize];
    let (nn, n) = &req.nics[c.nic as usize];
    let s = f64::from(c.sockets);
    let k = f64::from(c.dpn);
    let cost = prices.map(|p| {
        p.get(&format!("chassis.{}", ch.name)).unwrap_or(f64::NAN)
            + s * p.get(&format!("cpu.{cn}")).unwrap_or(f64::NAN)
            + k * p.get(&format!("drive.{dn}")).unwrap_or(f64::NAN)
            + p.get(&format!("nic.{nn}")).unwrap_or(f64::NAN)
    });
    let power = match (
        ch.base_power_watts,
        cpu.tdp_watts,
        d.power_watts,
        n.power_watts,
    ) {
        (Some(b), Some(t), Some(dw), Some(nw)) => Some(b + s * t + k * dw + nw),
        _ => None,
    };
    (cost, power)
}

/// The evaluated outcome of one candidate.
enum Outcome {
    Meets,
    Fails(Failure),
    /// Met the mean targets; the p99 was not simulated (budget spent).
    Unchecked,
}

/// The search. See the module doc.
pub fn design(
    req: &Requirements,
    prices: Option<&PriceList>,
    model: &ModelParams,
    opts: &DesignOptions,
    progress: &dyn Progress,
) -> Result<DesignReport, DesignError> {
    // Prices for every allowed part, or none at all.
    if let Some(p) = prices {
        let chassis: Vec<String> = req.chassis.iter().map(|c| c.name.clone()).collect();
        p.check_parts(&req.catalogue, &chassis)?;
        let parts = req
            .chassis
            .iter()
            .map(|c| format!("chassis.{}", c.name))
            .chain(req.cpus.iter().map(|(n, _)| format!("cpu.{n}")))
            .chain(req.drives.iter().map(|(n, _)| format!("drive.{n}")))
            .chain(req.nics.iter().map(|(n, _)| format!("nic.{n}")));
        for part in parts {
            if p.get(&part).is_none() {
                return Err(DesignError::Unpriced {
                    part,
                    prices: if p.origin.is_empty() {
                        "the price list".to_string()
                    } else {
                        p.origin.clone()
                    },
                });
            }
        }
    }
    let mut notes = Vec::new();
    let unpowered: Vec<String> = req
        .chassis
        .iter()
        .filter(|c| c.base_power_watts.is_none())
        .map(|c| format!("chassis.{}", c.name))
        .chain(
            req.cpus
                .iter()
                .filter(|(_, c)| c.tdp_watts.is_none())
                .map(|(n, _)| format!("cpu.{n}")),
        )
        .chain(
            req.drives
                .iter()
                .filter(|(_, d)| d.power_watts.is_none())
                .map(|(n, _)| format!("drive.{n}")),
        )
        .chain(
            req.nics
                .iter()
                .filter(|(_, d)| d.power_watts.is_none())
                .map(|(n, _)| format!("nic.{n}")),
        )
        .collect();
    let power_known = unpowered.is_empty();
    if !power_known {
        notes.push(format!(
            "power objective refused: no power figure for {} (cephplan invents none: add power_watts with its datasheet source to the catalogue, base_power_watts to the chassis, or restrict the constraints to parts with figures)",
            unpowered.join(", ")
        ));
    }
    let mut objectives = Vec::new();
    if prices.is_some() {
        objectives.push("cost".to_string());
    }
    if power_known {
        objectives.push("power".to_string());
    }
    objectives.push("rack units".to_string());
    notes.push(match (prices.is_some(), power_known) {
        (true, _) => "ranked by cost (your prices), then node count".to_string(),
        (false, true) => "no prices given: ranked by power, then node count".to_string(),
        (false, false) => {
            "no prices and no power figures: ranked by rack units, then node count".to_string()
        }
    });

    // Enumerate.
    let mut cands: Vec<Cand> = Vec::new();
    for (ci, ch) in req.chassis.iter().enumerate() {
        let dpn_lo = req.drives_per_node.map_or(1, |r| r.min);
        let dpn_hi = req
            .drives_per_node
            .map_or(ch.drive_slots, |r| r.max.min(ch.drive_slots));
        for cpu in 0..req.cpus.len() {
            for &sockets in req.sockets.iter().filter(|&&s| s <= ch.max_sockets) {
                for drive in 0..req.drives.len() {
                    for dpn in dpn_lo..=dpn_hi {
                        for nic in 0..req.nics.len() {
                            for prot in 0..req.protections.len() {
                                let base = Cand {
                                    chassis: ci as u16,
                                    cpu: cpu as u16,
                                    drive: drive as u16,
                                    nic: nic as u16,
                                    prot: prot as u16,
                                    sockets,
                                    dpn,
                                    nodes: 0,
                                    cost: 0.0,
                                    power: 0.0,
                                    ru: 0,
                                };
                                let (cost, power) = node_cost_power(req, prices, &base);
                                for nodes in req.nodes.min..=req.nodes.max {
                                    let n = f64::from(nodes);
                                    cands.push(Cand {
                                        nodes,
                                        cost: cost.map_or(f64::NAN, |c| c * n),
                                        power: power.map_or(f64::NAN, |p| p * n),
                                        ru: ch.rack_units * nodes,
                                        ..base
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    let primary = |c: &Cand| -> f64 {
        if prices.is_some() {
            c.cost
        } else if power_known {
            c.power
        } else {
            f64::from(c.ru)
        }
    };
    cands.sort_by(|a, b| {
        primary(a)
            .total_cmp(&primary(b))
            .then(a.nodes.cmp(&b.nodes))
            .then(a.ru.cmp(&b.ru))
            .then(a.power.total_cmp(&b.power))
            .then(
                (a.chassis, a.cpu, a.sockets, a.drive, a.dpn, a.nic, a.prot)
                    .cmp(&(b.chassis, b.cpu, b.sockets, b.drive, b.dpn, b.nic, b.prot)),
            )
    });

    let mut stats = SearchStats {
        candidates: cands.len() as u64,
        complete: true,
        ..SearchStats::default()
    };
    progress.start(stats.candidates, "design search");
    // Intervals only when the targets are checked against them.
    let pred_opts = PredictOptions {
        interval: req.check_at != CheckAt::Point,
        ..PredictOptions::default()
    };
    if req.check_at != CheckAt::Point && model.covariance.is_none() && model.transfer.is_none() {
        notes.push(
            "the model states no uncertainty: targets are checked against the point prediction"
                .into(),
        );
    }
    notes.push(match req.check_at {
        CheckAt::Point => "targets are checked against the point prediction (the 95 % range shows how far a system the model was not calibrated on may land)".to_string(),
        CheckAt::Interval80 => "targets are checked against the pessimistic end of the 80 % range (low IOPS and bandwidth, high mean latency)".to_string(),
        CheckAt::Interval95 => "targets are checked against the pessimistic end of the 95 % range (low IOPS and bandwidth, high mean latency)".to_string(),
    });
    notes.push(working_set_note(req));
    notes.extend(littles_law_notes(req));
    if req
        .workloads
        .iter()
        .any(|w| w.target.latency_p99_max_secs.is_some())
    {
        let sim = &opts.tails.sim;
        notes.push(format!(
            "p99 targets are checked by simulation (seed {}, until the mean and p99 are known within ±{:.0} % at 95 % confidence; the ± beside each p99 is its confidence half-width): `cephplan predict --tails --seed {} --precision {}` on the written scenarios gives the same figures, with the nodes down too",
            sim.seed,
            sim.relative_precision * 100.0,
            sim.seed,
            sim.relative_precision
        ));
    }
    let mut found: Vec<Cand> = Vec::new();
    let mut recent_failures: std::collections::VecDeque<Failure> = Default::default();
    let mut closest: Option<Failure> = None;
    let mut pending = 0u64;
    for c in &cands {
        pending += 1;
        if pending == 1024 {
            progress.advance(pending);
            pending = 0;
            if progress.is_cancelled() {
                stats.complete = false;
                break;
            }
        }
        // Dominance by a design found with the same protection.
        let dominated = found.iter().any(|f| {
            f.prot == c.prot
                && (prices.is_none() || f.cost <= c.cost)
                && (!power_known || f.power <= c.power)
                && f.ru <= c.ru
        });
        if dominated {
            stats.skipped_as_dominated += 1;
            continue;
        }
        let outcome = evaluate(req, model, &pred_opts, opts, c, &mut stats, progress)?;
        match outcome {
            Outcome::Unchecked => {}
            Outcome::Meets => {
                stats.feasible += 1;
                found.push(*c);
            }
            Outcome::Fails(f) => {
                if found.is_empty() {
                    recent_failures.push_back(f.clone());
                    if recent_failures.len() > opts.explain {
                        recent_failures.pop_front();
                    }
                }
                if closest.as_ref().is_none_or(|b| closer(&f, b)) {
                    closest = Some(f);
                }
            }
        }
    }
    progress.advance(pending);
    progress.finish();
    if stats.unchecked_p99 > 0 {
        notes.push(format!(
            "{} candidates met every mean target but were not simulated for their p99: the budget of {} simulations was spent (cheaper candidates were simulated first); a cheaper design among them is possible",
            stats.unchecked_p99, opts.max_simulations
        ));
    }

    // The Pareto front over the objectives, and the cheapest per protection.
    let objective = |c: &Cand| -> Vec<f64> {
        let mut v = Vec::new();
        if prices.is_some() {
            v.push(c.cost);
        }
        if power_known {
            v.push(c.power);
        }
        v.push(f64::from(c.ru));
        v
    };
    let dominates = |a: &Cand, b: &Cand| {
        let (x, y) = (objective(a), objective(b));
        x.iter().zip(&y).all(|(p, q)| p <= q) && x.iter().zip(&y).any(|(p, q)| p < q)
    };
    let mut chosen: BTreeMap<usize, (bool, bool)> = BTreeMap::new();
    for (i, c) in found.iter().enumerate() {
        if !found.iter().any(|o| dominates(o, c)) {
            chosen.entry(i).or_default().0 = true;
        }
    }
    for prot in 0..req.protections.len() {
        // `found` is in primary-objective order: the first of a protection is its cheapest.
        if let Some(i) = found.iter().position(|c| usize::from(c.prot) == prot) {
            chosen.entry(i).or_default().1 = true;
        }
    }
    let mut designs = Vec::new();
    for (i, (pareto, cheapest)) in chosen {
        let mut d = full_design(req, prices, model, opts, &found[i])?;
        d.pareto = pareto;
        d.cheapest_of_protection = cheapest;
        designs.push(d);
    }
    for (i, d) in designs.iter_mut().enumerate() {
        d.id = format!("d{}", i + 1);
    }
    let no_design = if found.is_empty() {
        Some(closest.as_ref().map_or_else(
            || "no candidate was evaluated: the search was cancelled before the first".into(),
            no_design_message,
        ))
    } else {
        None
    };
    Ok(DesignReport {
        schema_version: REPORT_SCHEMA_VERSION,
        requirements: req.name.clone(),
        objectives,
        currency: prices.map(|p| p.currency.clone()),
        notes,
        designs,
        cheaper_failures: if found.is_empty() {
            Vec::new()
        } else {
            recent_failures.into_iter().rev().collect()
        },
        no_design,
        closest: if found.is_empty() { closest } else { None },
        stats,
        model: ModelInfo::of(model),
        check_at: req.check_at,
    })
}

/// Whether failure `a` came closer to the requirements than `b`. A workload target missed
/// outranks capacity and constraints: it says what the hardware cannot do. An exact miss
/// outranks one from the asymptotic bound, which is only a floor on the miss (session 53's
/// audit: a candidate the bound put 0.1 % short was 24-65 % short by `predict`, where one
/// evaluated exactly missed by 7 %). Then the smaller miss.
fn closer(a: &Failure, b: &Failure) -> bool {
    let rank = |x: &Failure| (!x.workload.is_empty(), !x.by_bound);
    match rank(a).cmp(&rank(b)) {
        std::cmp::Ordering::Equal => a.miss.headroom > b.miss.headroom,
        o => o.is_gt(),
    }
}

/// "no design meets X; the closest misses by Y".
fn no_design_message(f: &Failure) -> String {
    let workload = if f.workload.is_empty() {
        String::new()
    } else {
        format!(" for workload \"{}\"", f.workload)
    };
    let state = if f.state.is_empty() {
        String::new()
    } else {
        format!(" ({})", f.state)
    };
    let bound = if f.by_bound {
        " (by the asymptotic bound: at least that)"
    } else {
        ""
    };
    format!(
        "no design meets {} {}{workload}{state}; the closest ({}) reaches {} against {} and misses by {:.1} %{bound}",
        f.miss.target,
        format_value(&f.miss.target, f.miss.required),
        f.candidate,
        format_value(&f.miss.target, f.miss.predicted),
        format_value(&f.miss.target, f.miss.required),
        -f.miss.headroom * 100.0,
    )
}

/// A figure with its unit, for messages.
pub fn format_value(target: &str, v: f64) -> String {
    if target.starts_with("iops") {
        format!("{v:.0} IOPS")
    } else if target.starts_with("bandwidth") {
        format!("{:.2} GB/s", v / 1e9)
    } else if target.contains("latency") {
        format!("{:.3} ms", v * 1e3)
    } else if target.starts_with("usable") {
        format!("{:.1} TB", v / 1e12)
    } else if target.starts_with("recovery") {
        format!("{:.2} h", v / 3600.0)
    } else if target.starts_with("power") {
        format!("{v:.0} W")
    } else {
        format!("{v:.0}")
    }
}

fn choice(req: &Requirements, c: &Cand) -> PartChoice {
    PartChoice {
        cpu: req.cpus[c.cpu as usize].0.clone(),
        sockets: c.sockets,
        drive: req.drives[c.drive as usize].0.clone(),
        drives_per_node: c.dpn,
        nic: req.nics[c.nic as usize].0.clone(),
        nic_speed: req.nics[c.nic as usize].1.speed,
        nic_ports: req.nics[c.nic as usize].1.ports,
        nodes: c.nodes,
        protection: req.protections[c.prot as usize],
        failure_domain: req.failure_domain,
    }
}

fn describe(req: &Requirements, c: &Cand) -> String {
    format!(
        "{} × {} [{} × {}, {} × {}, {}], {}",
        c.nodes,
        req.chassis[c.chassis as usize].name,
        c.sockets,
        req.cpus[c.cpu as usize].0,
        c.dpn,
        req.drives[c.drive as usize].0,
        req.nics[c.nic as usize].0,
        protection_label(req.protections[c.prot as usize])
    )
}

fn degraded_of(req: &Requirements) -> Option<DegradedSpec> {
    req.resilience.map(|r| DegradedSpec {
        nodes_down: r.nodes_down,
        recovery_share: r.recovery_share,
        fill: req.fill_limit,
    })
}

/// The state label of a degraded prediction.
fn down_label(d: &DegradedSpec) -> String {
    format!("{} node(s) down, recovering", d.nodes_down)
}

/// The (IOPS, bandwidth, mean latency) a prediction is checked with: the point
/// prediction, or the pessimistic end of its interval (low IOPS and bandwidth, high mean).
pub fn checked(r: &PredictionReport, at: CheckAt) -> (f64, f64, f64) {
    let interval = match at {
        CheckAt::Point => None,
        CheckAt::Interval80 => r.interval_80.as_ref(),
        CheckAt::Interval95 => r.interval.as_ref(),
    };
    match interval {
        Some(i) if r.iops > 0.0 => (
            i.iops_low,
            r.bandwidth_bytes_per_sec * i.iops_low / r.iops,
            i.latency_mean_high_secs,
        ),
        _ => (r.iops, r.bandwidth_bytes_per_sec, r.latency_mean_secs),
    }
}

/// Headroom of a prediction against a workload's targets (p99 only when simulated).
fn headrooms(t: &Target, iops: f64, bw: f64, mean: f64, p99: Option<f64>) -> Vec<Headroom> {
    let mut h = Vec::new();
    if let Some(x) = t.iops_min {
        h.push(Headroom::at_least("iops ≥", x, iops));
    }
    if let Some(x) = t.bandwidth_bytes_per_sec_min {
        h.push(Headroom::at_least("bandwidth ≥", x, bw));
    }
    if let Some(x) = t.latency_mean_max_secs {
        h.push(Headroom::at_most("mean latency ≤", x, mean));
    }
    if let (Some(x), Some(p)) = (t.latency_p99_max_secs, p99) {
        h.push(Headroom::at_most("p99 latency ≤", x, p));
    }
    h
}

fn worst(h: Vec<Headroom>) -> Option<Headroom> {
    h.into_iter()
        .filter(|x| !x.met())
        .min_by(|a, b| a.headroom.total_cmp(&b.headroom))
}

/// Checks one candidate, cheapest check first (module doc).
fn evaluate(
    req: &Requirements,
    model: &ModelParams,
    pred_opts: &PredictOptions,
    opts: &DesignOptions,
    c: &Cand,
    stats: &mut SearchStats,
    progress: &dyn Progress,
) -> Result<Outcome, DesignError> {
    let prot = req.protections[c.prot as usize];
    let fail = |workload: &str, state: &str, miss: Headroom, by_bound: bool| {
        Outcome::Fails(Failure {
            candidate: describe(req, c),
            cost: (!c.cost.is_nan()).then_some(c.cost),
            power_watts: (!c.power.is_nan()).then_some(c.power),
            rack_units: c.ru,
            workload: workload.to_string(),
            state: state.to_string(),
            miss,
            by_bound,
        })
    };
    // 1. Constraints and capacity.
    let down = req.resilience.map_or(0, |r| r.nodes_down);
    // Failure domains that survive `down` nodes must still hold the pool's width.
    let per_node = match req.failure_domain {
        FailureDomain::Host => 1,
        FailureDomain::Osd => c.dpn * req.osds_per_device,
    };
    let need = width(prot);
    let domains = c.nodes.saturating_sub(down) * per_node;
    if domains < need {
        stats.rejected_by_constraints += 1;
        return Ok(fail(
            "",
            "",
            Headroom::at_least("failure domains ≥", f64::from(need), f64::from(domains)),
            false,
        ));
    }
    // Every PG must keep min_size members with `down` nodes down together, or its I/O
    // blocks (a pool of 1 copy, EC with m = 1 below Ceph's min_size, OSD failure domains).
    if down > 0 {
        let loss = crate::predict::pg_loss_of(prot, per_node, c.nodes, down);
        if loss.worst_kept < loss.min_size {
            stats.rejected_by_constraints += 1;
            return Ok(fail(
                "",
                &format!("{down} node(s) down"),
                Headroom::at_least(
                    "copies a PG keeps ≥ min_size",
                    f64::from(loss.min_size),
                    f64::from(loss.worst_kept),
                ),
                false,
            ));
        }
    }
    if let Some(ru) = req.max_rack_units {
        if c.ru > ru {
            stats.rejected_by_constraints += 1;
            return Ok(fail(
                "",
                "",
                Headroom::at_most("rack units ≤", f64::from(ru), f64::from(c.ru)),
                false,
            ));
        }
    }
    if let Some(w) = req.max_power_watts {
        if c.power > w {
            stats.rejected_by_constraints += 1;
            return Ok(fail(
                "",
                "",
                Headroom::at_most("power ≤", w, c.power),
                false,
            ));
        }
    }
    let drive = &req.drives[c.drive as usize].1;
    let per_node_raw = f64::from(c.dpn) * drive.capacity.0 as f64;
    let usable = per_node_raw * f64::from(c.nodes) * prot.efficiency();
    if usable * req.fill_limit < req.usable_needed_bytes {
        stats.rejected_by_capacity += 1;
        return Ok(fail(
            "",
            "",
            Headroom::at_least(
                "usable capacity ≥",
                req.usable_needed_bytes,
                usable * req.fill_limit,
            ),
            false,
        ));
    }
    if down > 0 {
        let survivors = per_node_raw * f64::from(c.nodes - down) * prot.efficiency();
        if survivors * FULL_RATIO < req.usable_needed_bytes {
            stats.rejected_by_capacity += 1;
            return Ok(fail(
                "",
                &format!("{down} node(s) down"),
                Headroom::at_least(
                    "usable capacity ≥",
                    req.usable_needed_bytes,
                    survivors * FULL_RATIO,
                ),
                false,
            ));
        }
    }
    let pc = choice(req, c);
    let degraded = degraded_of(req);
    // Scenarios: (workload index, state, scenario).
    let mut scenarios: Vec<(usize, String, Scenario)> = Vec::new();
    for (wi, w) in req.workloads.iter().enumerate() {
        let sp = scenario_spec_of(
            &req.name,
            &req.ceph_release,
            req.osds_per_device,
            req.osd_memory_target,
            &pc,
            w,
            None,
        );
        let s = match sp.validate(&req.catalogue) {
            Ok(s) => s,
            Err(e) => {
                stats.rejected_by_constraints += 1;
                return Ok(fail(
                    &w.name,
                    "",
                    Headroom {
                        target: format!("a valid scenario ({e})"),
                        required: 1.0,
                        predicted: 0.0,
                        headroom: -1.0,
                    },
                    false,
                ));
            }
        };
        if let Some(d) = &degraded {
            if wi == 0 {
                if let Some(max) = req.resilience.and_then(|r| r.max_recovery_secs) {
                    let r = recovery_estimate(&s, d);
                    if r.time_secs > max {
                        stats.rejected_by_constraints += 1;
                        return Ok(fail(
                            "",
                            &down_label(d),
                            Headroom::at_most("recovery time ≤", max, r.time_secs),
                            false,
                        ));
                    }
                }
            }
            let ds = degraded_scenario(&s, d)?;
            scenarios.push((wi, String::new(), s));
            scenarios.push((wi, down_label(d), ds));
        } else {
            scenarios.push((wi, String::new(), s));
        }
    }
    // 3. Bounds.
    for (wi, state, s) in &scenarios {
        let w = &req.workloads[*wi];
        let cn = crate::qn::ceph::build(s, model).map_err(PredictError::from)?;
        let n = s.population();
        let b = crate::predict::bounds(&cn, n);
        let x_max = b.max_iops;
        let r_min = b.min_latency_secs.max(f64::from(n) / x_max);
        let bw_max = x_max * cn.bytes_per_io;
        if let Some(m) = worst(headrooms(&w.target, x_max, bw_max, r_min, None)) {
            stats.pruned_by_bounds += 1;
            return Ok(fail(&w.name, state_or_up(state), m, true));
        }
    }
    // 4. Exact prediction, every workload and state, worst miss.
    stats.predicted += 1;
    let mut worst_fail: Option<(usize, String, Headroom)> = None;
    for (wi, state, s) in &scenarios {
        let w = &req.workloads[*wi];
        let r = predict(s, model, pred_opts)?;
        stats.predictions += 1;
        let (iops, bw, mean) = checked(&r, req.check_at);
        let m = worst(headrooms(&w.target, iops, bw, mean, None));
        if let Some(m) = m {
            if worst_fail
                .as_ref()
                .is_none_or(|(_, _, o)| m.headroom < o.headroom)
            {
                worst_fail = Some((*wi, state.clone(), m));
            }
        }
    }
    if let Some((wi, state, m)) = worst_fail {
        return Ok(fail(&req.workloads[wi].name, state_or_up(&state), m, false));
    }
    // p99 by simulation, only now.
    let needs = scenarios
        .iter()
        .filter(|(wi, _, _)| req.workloads[*wi].target.latency_p99_max_secs.is_some())
        .count() as u64;
    if needs > 0 && stats.simulations + needs > opts.max_simulations {
        stats.unchecked_p99 += 1;
        return Ok(Outcome::Unchecked);
    }
    for (wi, state, s) in &scenarios {
        let w = &req.workloads[*wi];
        if let Some(max) = w.target.latency_p99_max_secs {
            let t = predict_tails(s, model, &opts.tails, &crate::predict::CancelOnly(progress))?;
            stats.simulations += 1;
            let p99 = t.all.latency_p99_secs.mean;
            if p99 > max {
                return Ok(fail(
                    &w.name,
                    state_or_up(state),
                    Headroom::at_most("p99 latency ≤", max, p99),
                    false,
                ));
            }
        }
    }
    Ok(Outcome::Meets)
}

/// The state of a workload's prediction with every node up.
pub const ALL_UP: &str = "all nodes up";

fn state_or_up(state: &str) -> &str {
    if state.is_empty() {
        ALL_UP
    } else {
        state
    }
}

/// The model's held-out record ([`crate::predict::PredictionReport::held_out_by_kind`])
/// over a report's designs: each kind of run any design's workload is, once, with the
/// `design workload` pairs it applies to (all nodes up; the kinds do not change with nodes
/// down), in kind order. Empty when the model carries no record.
pub fn held_out_records(r: &DesignReport) -> Vec<(crate::model::TransferKind, Vec<String>)> {
    let mut by_kind: std::collections::BTreeMap<
        crate::spec::RunClass,
        (crate::model::TransferKind, Vec<String>),
    > = std::collections::BTreeMap::new();
    for d in &r.designs {
        for w in d.results.iter().filter(|w| w.state == ALL_UP) {
            for k in &w.prediction.held_out_by_kind {
                by_kind
                    .entry(k.kind)
                    .or_insert_with(|| (k.clone(), Vec::new()))
                    .1
                    .push(format!("{} {}", d.id, w.workload));
            }
        }
    }
    by_kind.into_values().collect()
}

/// The full report of a found design: BOM, capacity, predictions with intervals.
fn full_design(
    req: &Requirements,
    prices: Option<&PriceList>,
    model: &ModelParams,
    opts: &DesignOptions,
    c: &Cand,
) -> Result<Design, DesignError> {
    let pc = choice(req, c);
    let ch = &req.chassis[c.chassis as usize];
    let (cpu_name, cpu) = &req.cpus[c.cpu as usize];
    let (drive_name, drive) = &req.drives[c.drive as usize];
    let (nic_name, nic) = &req.nics[c.nic as usize];
    let price = |k: &str| prices.and_then(|p| p.get(k));
    let bom = vec![
        BomLine {
            part: format!("chassis.{}", ch.name),
            count: c.nodes,
            unit_price: price(&format!("chassis.{}", ch.name)),
            unit_power_watts: ch.base_power_watts,
        },
        BomLine {
            part: format!("cpu.{cpu_name}"),
            count: c.nodes * c.sockets,
            unit_price: price(&format!("cpu.{cpu_name}")),
            unit_power_watts: cpu.tdp_watts,
        },
        BomLine {
            part: format!("drive.{drive_name}"),
            count: c.nodes * c.dpn,
            unit_price: price(&format!("drive.{drive_name}")),
            unit_power_watts: drive.power_watts,
        },
        BomLine {
            part: format!("nic.{nic_name}"),
            count: c.nodes,
            unit_price: price(&format!("nic.{nic_name}")),
            unit_power_watts: nic.power_watts,
        },
    ];
    let degraded = degraded_of(req);
    let full = PredictOptions::default();
    let mut results = Vec::new();
    let mut recovery = None;
    let mut capacity = None;
    for w in &req.workloads {
        let sp = scenario_spec_of(
            &req.name,
            &req.ceph_release,
            req.osds_per_device,
            req.osd_memory_target,
            &pc,
            w,
            None,
        );
        let s = sp.validate(&req.catalogue)?;
        capacity = Some(s.capacity);
        let mut states = vec![(String::from(ALL_UP), s.clone())];
        if let Some(d) = &degraded {
            states.push((down_label(d), degraded_scenario(&s, d)?));
            recovery = Some(recovery_estimate(&s, d));
        }
        for (state, sc) in states {
            let mut r = predict(&sc, model, &full)?;
            if w.target.latency_p99_max_secs.is_some() {
                r = r.with_tails(predict_tails(
                    &sc,
                    model,
                    &opts.tails,
                    &crate::progress::NoProgress,
                )?);
            }
            let (iops, bw, mean) = checked(&r, req.check_at);
            let headroom = headrooms(&w.target, iops, bw, mean, r.latency_p99_secs);
            results.push(WorkloadResult {
                workload: w.name.clone(),
                state,
                prediction: r,
                headroom,
            });
        }
    }
    let cap = capacity.expect("at least one workload");
    let osd_memory_bytes_per_node = f64::from(pc.drives_per_node * req.osds_per_device)
        * req
            .osd_memory_target
            .map_or(crate::spec::OSD_MEMORY_TARGET_DEFAULT_BYTES, |t| t.0) as f64;
    Ok(Design {
        id: String::new(),
        parts: pc,
        chassis: ch.name.clone(),
        protection_label: protection_label(req.protections[c.prot as usize]),
        bom,
        cost: (!c.cost.is_nan()).then_some(c.cost),
        power_watts: (!c.power.is_nan()).then_some(c.power),
        rack_units: c.ru,
        raw_bytes: cap.raw_bytes,
        usable_bytes: cap.usable_bytes,
        osd_memory_bytes_per_node,
        results,
        recovery,
        pareto: false,
        cheapest_of_protection: false,
    })
}

/// The scenario files of a design, one per workload (with the `[degraded]` table when the
/// requirements ask for resilience): `(workload name, scenario)`. `cephplan predict` on
/// them reproduces the design's figures.
pub fn design_scenarios(req: &Requirements, d: &Design) -> Vec<(String, ScenarioSpec)> {
    let degraded = degraded_of(req);
    let inline = |mut sp: ScenarioSpec| {
        // Inline parts are not in any catalogue file: describe them in the scenario.
        // An unnamed one keeps its part name as its model, so reports can tell it apart.
        let n = &mut sp.cluster.node;
        let named_cpu = |c: &crate::spec::CpuEntry, name: &str| {
            let mut c = c.clone();
            if c.model.is_empty() {
                c.model = name.to_string();
            }
            c
        };
        if let Some(c) = req.inline_parts.cpu.get(&d.parts.cpu) {
            n.cpu = HwRef::Inline(named_cpu(c, &d.parts.cpu));
        }
        if let Some(x) = req.inline_parts.drive.get(&d.parts.drive) {
            let mut x = x.clone();
            if x.model.is_empty() {
                x.model = d.parts.drive.clone();
            }
            n.data_devices.model = HwRef::Inline(x);
        }
        if let Some(HwRef::Name(c)) = &sp.clients.cpu {
            if let Some(e) = req.inline_parts.cpu.get(c) {
                sp.clients.cpu = Some(HwRef::Inline(named_cpu(e, c)));
            }
        }
        sp
    };
    // The design's id in the scenario's name ("r1-vm-1pb d6: vm"), so that the scenarios of
    // several designs keep apart in reports.
    let name = if d.id.is_empty() {
        req.name.clone()
    } else {
        format!("{} {}", req.name, d.id)
    };
    req.workloads
        .iter()
        .map(|w| {
            (
                w.name.clone(),
                inline(scenario_spec_of(
                    &name,
                    &req.ceph_release,
                    req.osds_per_device,
                    req.osd_memory_target,
                    &d.parts,
                    w,
                    degraded,
                )),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
