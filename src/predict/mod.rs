//! Predictions for a validated scenario: [`predict`] (one point), [`sweep`] (one axis, a
//! list of values, with the knee under a latency target) and [`size`] (smallest node count
//! meeting an IOPS target under a latency target). Results are serde `*Report` types with a
//! stable JSON key contract; printing is the CLI's job.
//!
//! [`predict_tails`] simulates a scenario for tail latencies (the `tails` section and
//! `latency_p99_secs`); a sweep with a percentile finds the knee by simulated tails.
//!
//! Not here: the queueing model itself (`qn::ceph`), solving (`solve`), simulating (`sim`).
//!
//! Per-type latency: a read and a write see the same stations, so with the solved
//! per-station stretch `s_k = residence_k / demand_k`, `R_read = Σ_k Dpath_read,k · s_k`
//! and likewise for writes; `p·R_read + (1−p)·R_write` equals the mixed mean, and Little's
//! law `in_flight = iops × latency_mean` holds by construction of MVA. Each term
//! `Dpath_k · s_k` is resource `k`'s part of the mean ([`LatencyPart`], the report's
//! `latency_parts`): where an I/O's time goes, queueing included; at one I/O in flight no
//! queue forms and the parts are the path demands.
//!
//! Idle states: at a few I/Os in flight per OSD node the measured latency depends on how
//! deeply the nodes' cores sleep between I/Os, which no scenario input states and the model
//! does not take (`models/not-adopted.md`, session 31: a wake-up mechanism did not lower
//! the leave-one-system-out error). Sepia o01, with its idle states unstated, measures
//! 3× 16 KiB random writes at 1.72 ms alone and 0.58 ms at 4 in flight; ceph.io's reference
//! cluster runs TuneD's `network-latency` profile, which "primarily helps by avoiding latency
//! spikes associated with CPU C/P state transitions" (ceph.io 2022 "Ceph OSD CPU scaling").
//! [`predict`] says so where a scenario has fewer than [`IDLE_STATES_IN_FLIGHT_PER_NODE`]
//! I/Os in flight per node ([`idle_states_note`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{FittedOn, ModelParams};
use crate::qn::ceph::{build, BuildError, CephNetwork};
use crate::qn::StationKind;
use crate::solve::{self, Convergence, Method, SolveError, SolveOptions};
use crate::spec::{CapacityReport, Scenario};

mod degraded;
pub mod format;
mod sizing;
mod sweep;
mod tails;

pub use degraded::{
    default_ec_min_size, default_min_size, degraded_scenario, mclock_recovery_share, pg_loss,
    pg_loss_of, predict_degraded, recovery_estimate, undersized_copies, DegradedReport, PgLoss,
    RecoveryEstimate, DEGRADED_NOTE, MCLOCK_RECOVERY_SHARES, UNDERSIZED_NOTE,
};
pub use sizing::{
    size, sizing_table, DegradedStep, SizingReport, SizingSpec, SizingStep, MAX_SIZING_IN_FLIGHT,
};
pub use sweep::{sweep, KneeReport, SweepAxis, SweepPoint, SweepReport, SweepSpec, SweepTails};
pub(crate) use tails::CancelOnly;
pub use tails::{predict_tails, TailFigures, TailOptions, TailReport};

/// Version of the report formats.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// In-flight I/Os per OSD node below which [`predict`] notes that the latency depends on
/// the nodes' CPU idle states (module doc): o01's latencies fall as load rises up to 3-4 I/Os
/// in flight on its one node for 16 KiB writes and 4 KiB mixes, and up to 8 for 512 KiB
/// reads.
pub const IDLE_STATES_IN_FLIGHT_PER_NODE: f64 = 8.0;

/// What the light-load note says after its load ([`idle_states_note`]), with a measured
/// example of the pattern's direction: writes (and mixes, which write) quote Sepia o01's
/// 3× 16 KiB random writes (1.72 ms alone, 0.58 ms at 4, module doc), reads its 512 KiB
/// random reads (`calibration-data/public-xeon-8276m-nvme-sepia-o01-cbt.csv`, runs
/// `o01-cbt-jer42-512k-randread-t1` and `-t8`: 2.1215 ms alone, 1.5270 ms at 8).
pub fn idle_states_text(pattern: crate::spec::Pattern) -> String {
    use crate::spec::Pattern;
    let example = match pattern {
        Pattern::Randread | Pattern::Read => "512 KiB random reads 2.12 ms alone, 1.53 ms at 8",
        Pattern::Randwrite | Pattern::Randrw | Pattern::Write => {
            "3× 16 KiB random writes 1.72 ms alone, 0.58 ms at 4"
        }
    };
    format!(
        "at so light a load the measured latency depends on the nodes' CPU idle states, which \
         the model does not take; nodes left at the OS default (deep C-states) measure lone \
         I/Os up to 3× slower than at 4-8 in flight (Sepia o01: {example}). Set TuneD's \
         latency-performance or network-latency profile on the nodes (and clients) before \
         comparing lone-I/O latency with this prediction"
    )
}

/// I/Os in flight per OSD node of a scenario.
pub fn in_flight_per_node(s: &Scenario) -> f64 {
    f64::from(s.population()) / f64::from(s.nodes.max(1))
}

/// The note on CPU idle states for a scenario with few I/Os in flight per OSD node
/// ([`IDLE_STATES_IN_FLIGHT_PER_NODE`]); `None` at more.
pub fn idle_states_note(s: &Scenario) -> Option<String> {
    let per_node = in_flight_per_node(s);
    (per_node < IDLE_STATES_IN_FLIGHT_PER_NODE).then(|| {
        format!(
            "{per_node:.1} I/Os in flight per OSD node: {}",
            idle_states_text(s.pattern)
        )
    })
}

/// Notes on sequential writes, which the model takes as random writes of the same size
/// (`qn::ceph`, "Not modelled"), where a measured mechanism makes them differ
/// (`calibration-data/lab/README.md`, "ec-2plus1-2vcpu"; `models/not-adopted.md`, session
/// 35): on an erasure-coded pool before Tentacle's FastEC, appends that are not whole
/// stripes rewrite the stripe the previous one padded; from Octopus on, librbd merges
/// sequential writes queued behind one in flight to the same object. Worded without the
/// point's load so that a validation lists each once.
pub fn sequential_write_notes(s: &Scenario) -> Vec<String> {
    use crate::spec::{Engine, Pattern, Protection};
    let mut notes = Vec::new();
    if s.pattern != Pattern::Write || s.engine != Engine::FioRbd {
        return notes;
    }
    let version = crate::spec::release::CephVersion::parse(&s.ceph_release);
    if let Protection::Erasure { k, .. } = s.protection {
        let fast = s.ceph_config.ec_optimizations && version.is_none_or(|v| v.major >= 20);
        let width = u64::from(k) * s.ec_stripe_unit_bytes;
        if !fast && width > 0 && !s.block_size_bytes.is_multiple_of(width) {
            let (mut a, mut b) = (s.block_size_bytes, width);
            while b != 0 {
                (a, b) = (b, a % b);
            }
            let share = 1.0 - a as f64 / width as f64;
            notes.push(format!(
                "sequential {} KiB writes on this erasure-coded pool without FastEC: an object \
                 is padded to whole stripes of {} KiB, so {:.0} % of the appends start inside \
                 the stripe the previous one padded and rewrite it, reading its {k} data chunks \
                 first (the lab's 2+1 pool reads 1.0 chunk per 4 KiB append, 0 per 8 KiB one); \
                 the model reads nothing for a sequential write, so expect fewer IOPS than \
                 predicted (Sepia o01's Squid 6+2 4 KiB appends: 2.5× fewer than predicted at \
                 16 in flight, 1.35× at 128). Whole-stripe writes, or FastEC \
                 (allow_ec_optimizations, Tentacle), avoid it",
                s.block_size_bytes / 1024,
                width / 1024,
                100.0 * share
            ));
        }
    }
    // `bluestore_prefer_deferred_size_hdd`: smaller writes to a disk are deferred.
    const DISK_DEFERRED_BELOW_BYTES: u64 = 64 * 1024;
    if s.data.drive.kind == crate::spec::DriveKind::Hdd
        && s.block_size_bytes < DISK_DEFERRED_BELOW_BYTES
        && matches!(s.protection, Protection::Replicated { .. })
    {
        let wal = if s.wal.is_some() {
            "with the WAL on a device of its own"
        } else {
            "(with the WAL on the disk itself its appends come between them, so the gain is smaller)"
        };
        notes.push(format!(
            "sequential {} KiB writes on hard disks: BlueStore defers them (below \
             bluestore_prefer_deferred_size_hdd, 64 KiB) and applies them in batches \
             (bluestore_deferred_batch_ops_hdd = 64), each placement group's part sorted by \
             offset with contiguous extents merged, so a sequential stream reaches its disk as \
             long writes {wal}; the model charges every one of them a disk's positioning, as a \
             random write, so where the data devices bound this prediction expect more IOPS \
             than predicted (no run in the corpus measures by how much, and more streams at a \
             disk interleave and merge less)",
            s.block_size_bytes / 1024
        ));
    }
    if s.iodepth >= 2 && version.is_none_or(|v| v.major >= 15) {
        notes.push(
            "sequential writes with more than one in flight per fio job: librbd (Octopus and \
             later, rbd_io_scheduler = simple) holds a write to an object that has one in \
             flight and merges it with its neighbours, which the model does not take (it \
             predicts sequential writes as random ones): the lab measures 6.3-6.6 client \
             writes per OSD op at 16 in flight and 4-5× the random writes' IOPS, Sepia o01's \
             CBT sequential 4 KiB writes reach 152k IOPS where its random ones stop at 13k, \
             while the FastEC post's appends to fresh volumes show no gain. Set \
             rbd_io_scheduler = none on the clients to measure what the model predicts"
                .to_string(),
        );
    }
    notes
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PredictError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("solver: {0}")]
    Solve(#[from] SolveError),
    /// `input` names the flag and its value as the user gave them (`--vary "iodepth=0"`).
    #[error("{input}: {problem}; fix: {fix}")]
    BadSweep {
        input: String,
        problem: String,
        fix: String,
    },
    #[error("sizing: {problem}; fix: {fix}")]
    BadSizing { problem: String, fix: String },
    #[error("degraded: {problem}; fix: {fix}")]
    BadDegraded { problem: String, fix: String },
    #[error("simulation: {0}")]
    Sim(#[from] crate::sim::SimError),
    #[error("no simulated tails: {reason}; raise --max-events (or leave out --tails or --percentile, which ask for the simulation)")]
    NoTails { reason: String },
    /// The run was stopped (Ctrl-C, the app's Stop) before the simulation finished one
    /// replication: no flag would have helped, so none is named.
    #[error("no simulated tails: the run was stopped before the simulation finished its first replication; fix: run it again and let it finish")]
    TailsCancelled,
    #[error("model `{model}`: its covariance and transfer error give this scenario a log-scale half-width of {half_width_ln:.3e} (a factor of e^that), so the interval means nothing; fix: refit the model (`cephplan calibrate`) or remove its [covariance] and [transfer]")]
    DegenerateInterval { model: String, half_width_ln: f64 },
}

/// The widest interval reported, as a log-scale half-width (e^20 ≈ 5·10⁸ either way):
/// beyond it the model's uncertainty is not an interval but a broken covariance.
const MAX_INTERVAL_HALF_WIDTH_LN: f64 = 20.0;

/// Options for [`predict`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictOptions {
    pub solve: SolveOptions,
    /// Compute the 95 % interval when the model has a covariance.
    pub interval: bool,
}

impl Default for PredictOptions {
    fn default() -> Self {
        Self {
            solve: SolveOptions::default(),
            interval: true,
        }
    }
}

/// The most utilised resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    pub resource: String,
    /// Per-server utilisation of one copy, 0..1.
    pub utilization: f64,
}

/// One resource's part of the mean latency: the time a mean read and a mean write spend
/// at it on their critical path (queueing and service at a queue, the fixed time of a
/// delay). Over the resources the parts add up to the report's per-type means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyPart {
    /// None when the workload has no reads.
    pub read_secs: Option<f64>,
    /// None when the workload has no writes.
    pub write_secs: Option<f64>,
    /// Its share of the mean latency of all I/Os, 0..1 (reads and writes weighted by the
    /// mix).
    pub share: f64,
}

/// Asymptotic bounds: no closed network of this demand does better.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// min(N / min latency, min over stations of servers × copies / demand).
    pub max_iops: f64,
    /// Sum of critical-path demands (no queueing), seconds.
    pub min_latency_secs: f64,
}

/// Interval from the model's parameter covariance (delta method, finite differences).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Coverage, e.g. 0.95.
    pub level: f64,
    pub iops_low: f64,
    pub iops_high: f64,
    pub latency_mean_low_secs: f64,
    pub latency_mean_high_secs: f64,
    /// Parameters whose uncertainty is propagated.
    pub parameters: Vec<String>,
    /// What the interval covers.
    pub note: String,
    /// `parameter` (parameter uncertainty only), `leave-one-system-out` or
    /// `leave-one-run-out` (with the model's transfer error, [`crate::model::Transfer`]).
    #[serde(default)]
    pub kind: String,
}

/// Which model produced a prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    pub generator: String,
    pub fitted_on: Option<FittedOn>,
    /// Parameters the model file lacks, for which the builder used its built-in fallback
    /// ([`ModelParams::defaulted`]); empty for a complete model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defaulted_params: Vec<String>,
    /// Parameters the model file has that this build does not read
    /// ([`ModelParams::unread`]); they change nothing. Empty for a current model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread_params: Vec<String>,
}

impl ModelInfo {
    pub fn of(p: &ModelParams) -> Self {
        Self {
            name: p.name.clone(),
            generator: p.generator.clone(),
            fitted_on: p.fitted_on.clone(),
            defaulted_params: p.defaulted(),
            unread_params: p.unread().into_iter().map(|(n, _)| n).collect(),
        }
    }
}

/// How the network was solved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolverInfo {
    pub method: Method,
    pub convergence: Option<Convergence>,
}

/// One prediction. JSON keys are a contract for other tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionReport {
    pub schema_version: u32,
    pub scenario: String,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub bandwidth_bytes_per_sec: f64,
    pub latency_mean_secs: f64,
    /// None when the workload has no reads.
    pub latency_read_mean_secs: Option<f64>,
    /// None when the workload has no writes.
    pub latency_write_mean_secs: Option<f64>,
    /// None until the simulator fills it (`with_tails`): the simulated p99 of all I/Os.
    pub latency_p99_secs: Option<f64>,
    pub bottleneck: Bottleneck,
    /// Queueing resource → per-server utilisation of one copy (0..1).
    pub utilization: BTreeMap<String, f64>,
    /// Resource (queue or delay) → its part of the mean latency; resources no I/O waits
    /// at are left out. Absent in reports written before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub latency_parts: BTreeMap<String, LatencyPart>,
    /// Writes one OSD commits per RocksDB batch in the model's solution
    /// ([`write_batch_per_osd`]); null without writes or write batching (the key is always
    /// there: the JSON's keys are a contract).
    #[serde(default)]
    pub write_batch_per_osd: Option<f64>,
    /// A client op's OSD CPU time in the model's solution over a lone op's
    /// ([`osd_cpu_demand_factor`]): below 1 where write batches and messenger coalescing
    /// share costs. Absent without OSD CPU work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_cpu_demand_factor: Option<f64>,
    pub bounds: Bounds,
    /// I/Os in flight: images × jobs × iodepth.
    pub in_flight: u32,
    /// The 95 % interval (parameter uncertainty, plus the model's transfer error when the
    /// model states one; `Interval::kind` says which).
    pub interval: Option<Interval>,
    /// The same at 80 %.
    #[serde(default)]
    pub interval_80: Option<Interval>,
    pub capacity: CapacityReport,
    pub warnings: Vec<String>,
    pub model: ModelInfo,
    pub solver: SolverInfo,
    /// Simulated IOPS, mean and percentiles with confidence intervals; None (null) unless
    /// the scenario was simulated (`predict --tails`).
    #[serde(default)]
    pub tails: Option<TailReport>,
    /// The same workload with nodes down during recovery; absent unless asked for
    /// (`predict --down`, or the scenario's `[degraded]` table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Box<DegradedReport>>,
    /// The model's held-out record for the kinds of run this scenario is
    /// ([`crate::model::Transfer::by_kind`], in [`crate::spec::RunClass`] order): how far
    /// runs of the same kind were off on systems the model was not fitted to. Empty when
    /// the model carries none (a prior, a fit to one system, a model written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_by_kind: Vec<crate::model::TransferKind>,
}

/// The model's held-out record ([`crate::model::Transfer::by_kind`]) for the kinds of run
/// scenario `s` is, in [`crate::spec::RunClass`] order: the record of the error its interval
/// takes ([`crate::model::Transfer::for_workload`]: after a calibration that never measured
/// one of the workload's directions, the start model's).
pub fn held_out_by_kind(s: &Scenario, p: &ModelParams) -> Vec<crate::model::TransferKind> {
    let Some(t) = &p.transfer else {
        return Vec::new();
    };
    let (t, _) = t.for_workload(s.read_fraction);
    let mut v: Vec<crate::model::TransferKind> = t
        .by_kind
        .iter()
        .filter(|k| k.kind.contains(s))
        .cloned()
        .collect();
    v.sort_by_key(|k| k.kind);
    v
}

/// The performance figures of one solved population (shared by predict and sweeps).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figures {
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub bandwidth_bytes_per_sec: f64,
    pub latency_mean_secs: f64,
    pub latency_read_mean_secs: Option<f64>,
    pub latency_write_mean_secs: Option<f64>,
    pub bottleneck: Bottleneck,
    pub utilization: BTreeMap<String, f64>,
    /// Per station, residence over demand (1 at a delay): what [`latency_parts`] needs.
    pub stretch: Vec<f64>,
}

/// Figures from a throughput, per-station stretch factors and utilisations.
pub(crate) fn figures(
    cn: &CephNetwork,
    population: u32,
    x: f64,
    stretch: Vec<f64>,
    util: &[f64],
) -> Figures {
    let p = cn.read_fraction;
    let per_type = |v: &[crate::qn::Demand]| -> f64 {
        v.iter().zip(&stretch).map(|(d, s)| d.path_secs * s).sum()
    };
    let latency_read_mean_secs = (p > 0.0).then(|| per_type(&cn.read));
    let latency_write_mean_secs = (p < 1.0).then(|| per_type(&cn.write));
    let mut utilization = BTreeMap::new();
    let mut bottleneck = Bottleneck {
        resource: String::new(),
        utilization: -1.0,
    };
    let latency_mean_secs = if x > 0.0 {
        f64::from(population) / x
    } else {
        0.0
    };
    for (st, &u) in cn.network.stations.iter().zip(util) {
        if st.kind == StationKind::Queue {
            utilization.insert(st.name.clone(), u);
            if u > bottleneck.utilization {
                bottleneck = Bottleneck {
                    resource: st.name.clone(),
                    utilization: u,
                };
            }
        }
    }
    Figures {
        iops: x,
        read_iops: p * x,
        write_iops: (1.0 - p) * x,
        bandwidth_bytes_per_sec: x * cn.bytes_per_io,
        latency_mean_secs,
        latency_read_mean_secs,
        latency_write_mean_secs,
        bottleneck,
        utilization,
        stretch,
    }
}

/// Each station's part of the mean latency at a solution ([`LatencyPart`]): its path
/// demand times its stretch, per type; stations no I/O waits at are left out.
pub(crate) fn latency_parts(cn: &CephNetwork, f: &Figures) -> BTreeMap<String, LatencyPart> {
    let p = cn.read_fraction;
    let mut parts = BTreeMap::new();
    for (k, st) in cn.network.stations.iter().enumerate() {
        let read = (p > 0.0).then(|| cn.read[k].path_secs * f.stretch[k]);
        let write = (p < 1.0).then(|| cn.write[k].path_secs * f.stretch[k]);
        let mixed = p * read.unwrap_or(0.0) + (1.0 - p) * write.unwrap_or(0.0);
        if mixed > 0.0 {
            let share = if f.latency_mean_secs > 0.0 {
                mixed / f.latency_mean_secs
            } else {
                0.0
            };
            parts.insert(
                st.name.clone(),
                LatencyPart {
                    read_secs: read,
                    write_secs: write,
                    share,
                },
            );
        }
    }
    parts
}

/// Asymptotic bounds of a built network at a population.
pub(crate) fn bounds(cn: &CephNetwork, population: u32) -> Bounds {
    // Batching stations at their largest batch: the least any I/O can take.
    let min_latency_secs: f64 = cn
        .network
        .stations
        .iter()
        .map(|s| s.demands[0].path_secs * s.batching.map_or(1.0, |b| b.min_demand_factor()))
        .sum();
    let n = f64::from(population);
    let mut max_iops = if min_latency_secs > 0.0 {
        n / min_latency_secs
    } else {
        f64::INFINITY
    };
    for s in &cn.network.stations {
        max_iops = max_iops.min(s.capacity_per_sec(0));
    }
    Bounds {
        max_iops,
        min_latency_secs,
    }
}

/// A built network solved at one population.
pub(crate) struct Solved {
    pub figures: Figures,
    pub solver: SolverInfo,
    /// Solver notes (approximations) and non-convergence, for the report's warnings.
    pub warnings: Vec<String>,
}

/// Solves a built network at `population` I/Os in flight.
pub(crate) fn solve_at(
    cn: &CephNetwork,
    population: u32,
    opts: &SolveOptions,
) -> Result<Solved, PredictError> {
    let sol = if cn.network.classes[0].population == population {
        solve::solve(&cn.network, opts)?
    } else {
        let mut net = cn.network.clone();
        net.classes[0].population = population;
        solve::solve(&net, opts)?
    };
    Ok(solved(cn, population, &sol))
}

/// Solves a built network at several populations: one exact MVA pass up to the largest
/// (`solve::single::solve_curve`) when the exact single-class solver is what `opts`
/// selects, else one solve per population. Results in the order of `populations`.
pub(crate) fn solve_curve_at(
    cn: &CephNetwork,
    populations: &[u32],
    opts: &SolveOptions,
) -> Result<Vec<Solved>, PredictError> {
    let exact_single = cn.network.classes.len() == 1
        && matches!(
            opts.method,
            None | Some(solve::Method::ExactSingleClass | solve::Method::SelfComplementSingleClass)
        );
    if !exact_single {
        return populations.iter().map(|&n| solve_at(cn, n, opts)).collect();
    }
    Ok(solve::single::solve_curve(&cn.network, populations)
        .iter()
        .zip(populations)
        .map(|(sol, &n)| solved(cn, n, sol))
        .collect())
}

/// Smallest write batch per OSD in the calibration data of the shipped model: seed 002's
/// QD4 write runs (512 I/Os in flight) batch 4.0 writes per OSD at every release (from
/// the OSD CPU's demand factor, below); seeds 000 (5.2) and 001 (4.2) batch more.
pub const CALIBRATED_MIN_WRITE_BATCH: f64 = 4.0;

/// The write batch per OSD at a solution: writes one OSD's `kv_sync_thread` commits
/// together in the model (what `validate --osd-counters` measures as BlueStore
/// transactions per WAL sync). From the OSD CPU's demand factor `f = U·c·m / (X·D)` and
/// the batching's share `s`, `b = s / (f − 1 + s)` (the inverse of
/// `Batching::demand_factor` inside its clamp; with a coalescing term, the jobs at which
/// the factor is `f`, found by bisection). `osd_cpu_utilization` is the per-server
/// utilisation of one node's OSD CPU; None without write batching.
pub fn write_batch_per_osd(cn: &CephNetwork, x: f64, osd_cpu_utilization: f64) -> Option<f64> {
    let i = cn.network.station_index("osd_cpu")?;
    let bt = cn.network.stations[i].batching?;
    if bt.share <= 0.0 {
        return None;
    }
    let f = osd_cpu_demand_factor(cn, x, osd_cpu_utilization)?;
    Some(if f >= 1.0 {
        1.0
    } else if bt.coalesce_share > 0.0 {
        bt.batch_size_at_factor(f.max(bt.min_demand_factor()))?
    } else {
        bt.share / (f - 1.0 + bt.share).max(f64::MIN_POSITIVE)
    })
}

/// The OSD CPU's demand factor at a solution: the OSD CPU time a client op takes over a
/// lone op's (the demand at batch size 1), `f = U·c·m / (X·D)` from one node's OSD CPU
/// utilisation `U` (per server), its `c` servers and `m` copies, the throughput `X` and
/// the demand `D`. 1 without batching; below 1 where write batches and messenger
/// coalescing share costs. What `validate --osd-counters` measures as the OSDs' CPU time
/// per op, set against the same cluster's at one I/O in flight. None without an OSD CPU
/// station, demand or throughput.
pub fn osd_cpu_demand_factor(cn: &CephNetwork, x: f64, osd_cpu_utilization: f64) -> Option<f64> {
    let i = cn.network.station_index("osd_cpu")?;
    let st = &cn.network.stations[i];
    let d = st.demands[0].secs;
    (x > 0.0 && d > 0.0)
        .then(|| osd_cpu_utilization * st.server_count() * f64::from(st.multiplicity) / (x * d))
}

/// [`write_batch_per_osd`] when it is below [`CALIBRATED_MIN_WRITE_BATCH`].
fn write_batch_below_calibrated(cn: &CephNetwork, x: f64, util: &[f64]) -> Option<f64> {
    let i = cn.network.station_index("osd_cpu")?;
    write_batch_per_osd(cn, x, util[i]).filter(|b| *b < CALIBRATED_MIN_WRITE_BATCH * (1.0 - 1e-3))
}

/// Figures, solver information and warnings from one solution.
fn solved(cn: &CephNetwork, population: u32, sol: &solve::Solution) -> Solved {
    let x = sol.classes[0].throughput_per_sec;
    let stretch: Vec<f64> = cn
        .network
        .stations
        .iter()
        .zip(&sol.stations)
        .map(|(st, ss)| {
            let d = st.demands[0].secs;
            if st.kind == StationKind::Delay || d <= 0.0 {
                1.0
            } else {
                ss.per_class[0].residence_secs / d
            }
        })
        .collect();
    let util: Vec<f64> = sol.stations.iter().map(|s| s.utilization).collect();
    let mut warnings = sol.notes.clone();
    if let Some(b) = write_batch_below_calibrated(cn, x, &util) {
        warnings.push(format!(
            "writes batch {b:.1} per OSD at this depth; the per-batch write cost was fitted \
             on runs whose writes batch {CALIBRATED_MIN_WRITE_BATCH} or more per OSD (seed \
             002 at QD4), so below that it is extrapolated along the batch size scale set \
             on the lab cluster's depth sweep, and write latency is likely overestimated \
             (README, known gaps); `cephplan validate --refit` on runs at this depth fixes \
             it for your cluster"
        ));
    }
    if let Some(c) = &sol.convergence {
        if !c.converged {
            warnings.push(format!(
                "the solver did not converge after {} iterations (relative change {:.2e} > {:.0e}); treat the numbers as approximate",
                c.iterations, c.max_relative_change, c.tolerance
            ));
        }
    }
    Solved {
        figures: figures(cn, population, x, stretch, &util),
        solver: SolverInfo {
            method: sol.method,
            convergence: sol.convergence.clone(),
        },
        warnings,
    }
}

/// (iops, mean latency) of a scenario under a parameter set: used for gradients. `None`
/// when the parameters build the same network as `base` (the parameter does not enter
/// this scenario, e.g. the release factor of another release): no solve is needed.
fn iops_latency(
    s: &Scenario,
    p: &ModelParams,
    base: &CephNetwork,
    opts: &SolveOptions,
) -> Result<Option<(f64, f64)>, PredictError> {
    let cn = build(s, p)?;
    if cn == *base {
        return Ok(None);
    }
    let f = solve_at(&cn, s.population(), opts)?.figures;
    Ok(Some((f.iops, f.latency_mean_secs)))
}

/// Relative finite-difference step for the interval's gradients.
const FD_RELATIVE_STEP: f64 = 1e-2;

/// Two-sided standard normal quantile for a coverage `level`.
pub fn z_of(level: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(0.5 + level / 2.0)
}

/// The solver of the interval's sensitivities: the single-class Bard-Schweitzer root
/// (microseconds, where exact MVA takes up to seconds per solve on large clusters and the
/// interval needs two solves per fitted parameter). Only relative sensitivities
/// `∂ln(X)/∂θ` are taken from it; the interval is centred on the exact prediction.
/// Measured on the seed runs, the two solvers' levels differ by ≤ 2.4 % (see
/// `calibrate::ceph::APPROX_GAP_WARN_PCT`), which moves a ±factor-2 interval's width by a
/// few percent at most.
fn sensitivity_solve_options() -> SolveOptions {
    SolveOptions {
        method: Some(solve::Method::Schweitzer),
        tolerance: 1e-12,
        ..SolveOptions::default()
    }
}

/// Standard errors of `ln(IOPS)` and `ln(mean latency)` from the model's parameter
/// covariance (delta method, central differences, sensitivities by approximate MVA); None
/// when the model has no covariance.
pub fn ln_standard_errors(
    s: &Scenario,
    p: &ModelParams,
) -> Result<Option<(f64, f64)>, PredictError> {
    let Some(cov) = &p.covariance else {
        return Ok(None);
    };
    let opts = &sensitivity_solve_options();
    let n = cov.names.len();
    let base = build(s, p)?;
    let (iops_a, latency_a) = {
        let f = solve_at(&base, s.population(), opts)?.figures;
        (f.iops, f.latency_mean_secs)
    };
    let mut gx = vec![0.0; n];
    let mut gr = vec![0.0; n];
    for (i, name) in cov.names.iter().enumerate() {
        let param = p.param.get(name).ok_or_else(|| {
            BuildError::from(crate::model::ModelError::Missing { name: name.clone() })
        })?;
        let v = param.value;
        // A 1 % step (the second-order error of a central difference is then ~1e-4 of
        // the slope's own size).
        let h = FD_RELATIVE_STEP
            * if v != 0.0 {
                v.abs()
            } else {
                (param.upper - param.lower).abs().max(1e-12)
            };
        // Central difference, one-sided where a bound is in the way.
        let (lo, hi) = (
            if v - h >= param.lower { v - h } else { v },
            if v + h <= param.upper { v + h } else { v },
        );
        let mut up = p.clone();
        up.set(name, hi).map_err(BuildError::from)?;
        let mut dn = p.clone();
        dn.set(name, lo).map_err(BuildError::from)?;
        let at = |q: &ModelParams| -> Result<(f64, f64), PredictError> {
            Ok(iops_latency(s, q, &base, opts)?.unwrap_or((iops_a, latency_a)))
        };
        let (xu, ru) = at(&up)?;
        let (xd, rd) = at(&dn)?;
        // Gradients of ln(IOPS) and ln(latency) per unit of the parameter.
        if hi > lo && xu > 0.0 && xd > 0.0 && ru > 0.0 && rd > 0.0 {
            gx[i] = (xu.ln() - xd.ln()) / (hi - lo);
            gr[i] = (ru.ln() - rd.ln()) / (hi - lo);
        }
    }
    let quad = |g: &[f64]| -> f64 {
        let mut acc = 0.0;
        for i in 0..n {
            for j in 0..n {
                acc += g[i] * cov.matrix[i][j] * g[j];
            }
        }
        acc.max(0.0)
    };
    Ok(Some((quad(&gx).sqrt(), quad(&gr).sqrt())))
}

/// Interval at `level` on iops and mean latency, on the log scale, centred on the exact
/// prediction (`iops`, `latency`): the parameter uncertainty (delta method on the model
/// covariance) combined with the model's transfer error when the model states one,
/// `σ² = σ²_param + σ²_transfer`. None when the model has neither.
fn interval(
    s: &Scenario,
    p: &ModelParams,
    iops: f64,
    latency: f64,
    level: f64,
) -> Result<Option<Interval>, PredictError> {
    let se = ln_standard_errors(s, p)?;
    if se.is_none() && p.transfer.is_none() {
        return Ok(None);
    }
    let (se_x, se_r) = se.unwrap_or((0.0, 0.0));
    let names = p
        .covariance
        .as_ref()
        .map(|c| c.names.clone())
        .unwrap_or_default();
    let (tx, tr, kind, note) = match &p.transfer {
        Some(t) => {
            // A workload with I/O of a direction the calibration's runs never measured
            // takes the error of the model whose values that direction kept.
            let (t, unmeasured) = t.for_workload(s.read_fraction);
            // Workloads at iodepth 1 take the iodepth-1 runs' own error when the model
            // states one (the model transfers worse there); a workload of one direction
            // takes that direction's runs' own error where the record has one (a fit to
            // both directions' runs).
            let direction = match s.read_fraction {
                f if f >= 1.0 => Some(crate::model::Direction::Reads),
                f if f <= 0.0 => Some(crate::model::Direction::Writes),
                _ => None,
            };
            let own = direction.and_then(|d| t.by_direction.iter().find(|e| e.direction == d));
            let (tx, tr, which) = match (s.is_fio_iodepth_1(), t.iodepth1_throughput_ln_sigma, own) {
                (true, Some(x), _) => (
                    x,
                    t.iodepth1_latency_ln_sigma.unwrap_or(x),
                    ", the σ of its iodepth-1 runs",
                ),
                (_, _, Some(e)) => (
                    e.throughput_ln_sigma,
                    e.latency_ln_sigma,
                    match e.direction {
                        crate::model::Direction::Reads => ", the σ of its read runs",
                        crate::model::Direction::Writes => ", the σ of its write runs",
                    },
                ),
                _ => (t.throughput_ln_sigma, t.latency_ln_sigma, ""),
            };
            // A cluster unlike those the calibration measured (another node, or a node
            // count outside those measured) takes the start model's leave-one-system-out
            // error where that is larger: the runs' own error says nothing of it.
            let unlike = t.unlike.as_deref().filter(|_| {
                unmeasured.is_none()
                    && !t.measured(s.nodes, s.osds_per_node(), s.node_cpu.cores * s.sockets)
            });
            if let Some(u) = unlike {
                let shapes: Vec<String> = t
                    .measured_clusters
                    .iter()
                    .map(|c| {
                        format!(
                            "{} × {} OSDs, {} cores",
                            c.nodes, c.osds_per_node, c.cores_per_node
                        )
                    })
                    .collect();
                (
                    tx.max(u.throughput_ln_sigma),
                    tr.max(u.latency_ln_sigma),
                    u.kind.clone(),
                    format!(
                        "parameter uncertainty (delta method on the model covariance, log scale) and the larger of the calibration's leave-one-run-out error over {} runs{which} (σ_ln {tx:.2} throughput, {tr:.2} latency) and the start model's {} error over {} systems (σ_ln {:.2} throughput, {:.2} latency): a cluster unlike the {} the calibration measured ({}), so the range for a cluster the model was not calibrated on",
                        t.runs,
                        u.kind,
                        u.systems,
                        u.throughput_ln_sigma,
                        u.latency_ln_sigma,
                        shapes.len(),
                        shapes.join("; ")
                    ),
                )
            } else {
            (
                tx,
                tr,
                t.kind.clone(),
                format!(
                    "parameter uncertainty (delta method on the model covariance, log scale) and the model's {} error over {} systems / {} runs{which} (σ_ln {tx:.2} throughput, {tr:.2} latency){}",
                    t.kind, t.systems, t.runs,
                    match (unmeasured, t.kind == "leave-one-system-out") {
                        (Some(d), _) => format!(
                            ": the calibration had no {} runs, so this workload's {}s are predicted as on a cluster the model was not calibrated on",
                            d.as_str(),
                            d.as_str()
                        ),
                        (None, true) => {
                            ": the range for a cluster the model was not calibrated on".to_string()
                        }
                        (None, false) => {
                            ": the range for the system the model was calibrated on, its runs held out one at a time; a cluster of another size or other hardware carries the model's transfer error on top, which this range leaves out (`cephplan evaluate`: scale series, leave-one-system-out)".to_string()
                        }
                    }
                ),
            )
            }
        }
        None => (
            0.0,
            0.0,
            "parameter".to_string(),
            "parameter uncertainty only (delta method on the model covariance, log scale, sensitivities by approximate MVA); the model's error on a new system and run-to-run noise of ±5-10% come on top".to_string(),
        ),
    };
    let z = z_of(level);
    // The interval is taken on the log scale, `exp(ln v ± z·σ)`: it stays positive and is
    // asymmetric, as a ratio-scale quantity's should be.
    let hx = z * (se_x * se_x + tx * tx).sqrt();
    let hr = z * (se_r * se_r + tr * tr).sqrt();
    let widest = if hx.is_nan() || hr.is_nan() {
        f64::NAN
    } else {
        hx.max(hr)
    };
    if widest.is_nan() || widest > MAX_INTERVAL_HALF_WIDTH_LN {
        return Err(PredictError::DegenerateInterval {
            model: p.name.clone(),
            half_width_ln: widest,
        });
    }
    Ok(Some(Interval {
        level,
        iops_low: iops * (-hx).exp(),
        iops_high: iops * hx.exp(),
        latency_mean_low_secs: latency * (-hr).exp(),
        latency_mean_high_secs: latency * hr.exp(),
        parameters: names,
        note,
        kind,
    }))
}

/// Predicts one scenario.
pub fn predict(
    s: &Scenario,
    p: &ModelParams,
    opts: &PredictOptions,
) -> Result<PredictionReport, PredictError> {
    let cn = build(s, p)?;
    let n = s.population();
    let Solved {
        figures: f,
        solver,
        warnings: notes,
    } = solve_at(&cn, n, &opts.solve)?;
    let mut warnings = cn.warnings.clone();
    warnings.extend(notes);
    warnings.extend(idle_states_note(s));
    warnings.extend(sequential_write_notes(s));
    // The client processes' thread cap, where it is what holds the cluster back.
    if f.bottleneck.resource == "client_cpu" && f.bottleneck.utilization > 0.8 {
        warnings.extend(cn.client_threads_note.clone());
    }
    // The busy cores' contention, where it takes a tenth of the OSD cores that bound it.
    if f.bottleneck.resource == "osd_cpu" && f.bottleneck.utilization > 0.8 {
        warnings.extend(cn.contention_note.clone());
        // The OSDs taking turns on the cores, where they bound it too.
        warnings.extend(cn.turns_note.clone());
    }
    // The disks' command queueing, where the disks bound it.
    if f.bottleneck.resource == "data_device" && f.bottleneck.utilization > 0.8 {
        warnings.extend(cn.reorder_note.clone());
    }
    let (interval, interval_80) = if opts.interval {
        (
            interval(s, p, f.iops, f.latency_mean_secs, 0.95)?,
            interval(s, p, f.iops, f.latency_mean_secs, 0.80)?,
        )
    } else {
        (None, None)
    };
    let latency_parts = latency_parts(&cn, &f);
    let write_batch_per_osd = f
        .utilization
        .get("osd_cpu")
        .and_then(|&u| write_batch_per_osd(&cn, f.iops, u));
    let osd_cpu_demand_factor = f
        .utilization
        .get("osd_cpu")
        .and_then(|&u| osd_cpu_demand_factor(&cn, f.iops, u));
    Ok(PredictionReport {
        schema_version: REPORT_SCHEMA_VERSION,
        scenario: s.name.clone(),
        iops: f.iops,
        read_iops: f.read_iops,
        write_iops: f.write_iops,
        bandwidth_bytes_per_sec: f.bandwidth_bytes_per_sec,
        latency_mean_secs: f.latency_mean_secs,
        latency_read_mean_secs: f.latency_read_mean_secs,
        latency_write_mean_secs: f.latency_write_mean_secs,
        latency_p99_secs: None,
        bottleneck: f.bottleneck,
        utilization: f.utilization,
        latency_parts,
        write_batch_per_osd,
        osd_cpu_demand_factor,
        bounds: bounds(&cn, n),
        in_flight: n,
        interval,
        interval_80,
        capacity: s.capacity,
        warnings,
        model: ModelInfo::of(p),
        solver,
        tails: None,
        degraded: None,
        held_out_by_kind: held_out_by_kind(s, p),
    })
}

#[cfg(test)]
mod tests;
