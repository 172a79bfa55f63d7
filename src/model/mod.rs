//! The parameter set of the Ceph performance model: named numbers with unit, source,
//! bounds and (after calibration) standard errors and a covariance matrix.
//!
//! [`ModelParams::shipped_default`] is `models/default.toml`, embedded in the binary;
//! `models/prior.toml` holds the values taken from hardware specifications and public rules
//! of thumb, each with its source. Calibration fits any subset of the parameters as a
//! vector through [`ModelParams::names`], [`ModelParams::get`] and [`ModelParams::set`]
//! and writes a file of the same format.
//!
//! Not here: what the parameters mean physically (see `qn::ceph`, which documents every
//! equation) or how they are fitted (`calibrate`).
//!
//! Parameter names used by `qn::ceph` (see [`names`] for the constants):
//! per-op OSD and client CPU in gigacycles of a reference x86_64 core, CPU per byte,
//! `arch_efficiency.<arch>`, `smt_gain`, `release_factor.<release>`, BlueStore
//! `write_amplification` and `wal_share`, `network_efficiency`,
//! `fixed_latency_read_secs` / `fixed_latency_write_secs`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The model file format version this build reads and writes.
pub const MODEL_SCHEMA_VERSION: u32 = 1;

const DEFAULT_TOML: &str = include_str!("../../models/default.toml");
const PRIOR_TOML: &str = include_str!("../../models/prior.toml");

/// The parameters the Ceph model builder cannot do without (`qn::ceph` requires them);
/// a model file without one is refused when it is read, naming the file.
pub const REQUIRED: [&str; 10] = [
    names::OSD_CPU_READ,
    names::OSD_CPU_WRITE,
    names::CPU_PER_BYTE,
    names::CLIENT_CPU,
    names::SMT_GAIN,
    names::WRITE_AMP,
    names::WAL_SHARE,
    names::NET_EFF,
    names::FIXED_READ,
    names::FIXED_WRITE,
];

/// Parameters earlier builds read and this one does not, with the reason they went (the
/// README's change log has the figures).
pub const REMOVED: [(&str, &str); 1] = [(
    "pg_placement_imbalance",
    "removed in session 22: the PG placement imbalance no longer lowered the leave-one-system-out error",
)];

pub mod names {
    pub const OSD_CPU_READ: &str = "osd_cpu_read_gcycles";
    pub const OSD_CPU_WRITE: &str = "osd_cpu_write_gcycles";
    pub const CPU_PER_BYTE: &str = "cpu_gcycles_per_byte";
    pub const CLIENT_CPU: &str = "client_cpu_gcycles_per_io";
    /// Share of `client_cpu_gcycles_per_io` (fio + librbd) a `rados bench` client pays:
    /// librados alone, no fio and no librbd.
    pub const CLIENT_LIBRADOS_SHARE: &str = "client_cpu_librados_share";
    pub const SMT_GAIN: &str = "smt_gain";
    pub const WRITE_AMP: &str = "write_amplification";
    pub const WAL_SHARE: &str = "wal_share";
    /// Cores at which one OSD's CPU use saturates: an OSD with `n` effective cores uses
    /// `C·(1 − e^(−n/C))` of them (optional; absent = every core).
    pub const OSD_CORE_SCALE: &str = "osd_core_scale";
    /// The same scale for writes (optional; absent = `osd_core_scale`): a write's work runs
    /// on more of an OSD's threads (the key/value sync and finisher threads, RocksDB's
    /// flushes), so an OSD's write work spreads over more cores. A mix blends the two by its
    /// share of reads.
    pub const OSD_CORE_SCALE_WRITE: &str = "osd_core_scale_write";
    /// Threads one client process (a fio job with librbd, a `rados bench`) runs its I/O
    /// on: its client CPU station uses at most this many cores per process (optional;
    /// absent = every client core).
    pub const CLIENT_THREADS: &str = "client_threads_per_process";
    pub const NET_EFF: &str = "network_efficiency";
    pub const FIXED_READ: &str = "fixed_latency_read_secs";
    pub const FIXED_WRITE: &str = "fixed_latency_write_secs";
    /// CPU cost BlueStore pays once per batch of writes queued at an OSD, shared by the
    /// writes of the batch (optional: absent = no batching).
    pub const OSD_CPU_WRITE_BATCH: &str = "osd_cpu_write_batch_gcycles";
    /// Largest batch of writes per OSD (optional, with the share).
    pub const WRITE_MAX_BATCH: &str = "osd_write_max_batch";
    /// Writes per batch per write queued at the OSD (optional, 1 when absent).
    pub const WRITE_BATCH_SCALE: &str = "osd_write_batch_scale";
    /// Share of an OSD op's per-op CPU cost (not the per-byte or per-batch parts) that the
    /// messenger pays once per read of a client connection, shared by the messages queued
    /// on it (optional: absent = no coalescing).
    pub const MSG_COALESCE_SHARE: &str = "osd_msg_coalesce_share";
    /// Most messages one connection read takes (optional, with the share; 1 when absent).
    pub const MSG_COALESCE_MAX: &str = "osd_msg_coalesce_max";
    /// A write's coalescing share as a fraction of a read's (optional, 1 when absent: the
    /// same share for both).
    pub const MSG_COALESCE_WRITE_FACTOR: &str = "osd_msg_coalesce_write_factor";
    /// Share of an OSD op's CPU demand on that op's own response-time path (optional, 1
    /// when absent): the rest loads the OSD cores but runs off the op's path (`qn::ceph`,
    /// "Lone-op path share").
    pub const OSD_CPU_PATH_SHARE: &str = "osd_cpu_path_share";
    /// Contention between a node's busy cores (the Universal Scalability Law's `σ`): a CPU
    /// station of `n` effective cores serves as `n / (1 + σ·(n − 1))` (optional, 0 when
    /// absent; `qn::ceph`, "Core contention").
    pub const CPU_CONTENTION: &str = "cpu_core_contention";
    /// Threads of one OSD busy on an op's path at once (its messenger worker and its op
    /// shard's thread): a node's OSDs time-share its cores once they outnumber `cores /
    /// threads`, and the messenger's per-connection coalescing groups are then those of
    /// that many OSDs (optional: absent = every OSD runs at once; `qn::ceph`, "Time-shared
    /// cores").
    pub const OSD_BUSY_THREADS: &str = "osd_busy_threads";
    /// Share of a hard disk's per-op (positioning) time that command queueing saves once
    /// per group of the ops queued at the disk, for a disk whose IOPS figures hold at
    /// queue depth 1 (optional: absent = no reordering; `qn::ceph`, "Disk reordering").
    pub const HDD_REORDER_SHARE: &str = "hdd_reorder_share";
    /// Per-op write CPU multiplier of a RocksDB built without optimisation
    /// ([`crate::spec::RocksdbBuild`]); needed only by scenarios with such a build.
    pub const ROCKSDB_UNOPT_WRITE: &str = "rocksdb_unoptimised_write_factor";
    /// Per-op write CPU multiplier when BlueStore commits allocation metadata to RocksDB
    /// with every write (`bluestore_allocation_from_file` off: releases before Quincy, or a
    /// rotational DB device; [`crate::spec::CephConfig`]); 1 when absent.
    pub const ALLOC_IN_ROCKSDB_WRITE: &str = "rocksdb_allocation_write_factor";
    /// Per-batch write CPU multiplier when `bluefs_buffered_io` is off (BlueFS writes
    /// RocksDB's WAL, appended once per batch, with O_DIRECT); 1 when absent.
    pub const BLUEFS_DIRECT_BATCH: &str = "bluefs_direct_io_batch_factor";
    /// Bytes of BlueStore cache one cached onode takes with its extent map and blobs
    /// (optional, with [`ONODE_MISS_COST`]: absent = every onode is taken as cached).
    pub const ONODE_BYTES: &str = "onode_cache_bytes";
    /// CPU of loading an onode that is not in the cache (from RocksDB), in OSD read ops
    /// (`osd_cpu_read_gcycles`); optional: absent = no onode-cache model.
    pub const ONODE_MISS_COST: &str = "onode_miss_read_ops";
    /// Prefix of per-architecture CPU efficiency factors (x86_64 is the reference, 1.0).
    pub const ARCH_PREFIX: &str = "arch_efficiency.";
    /// Prefix of per-release CPU efficiency factors.
    pub const RELEASE_PREFIX: &str = "release_factor.";
    /// Prefix of per-microarchitecture CPU efficiency factors (per GHz·core, relative to
    /// the reference generation Zen 2, whose cluster the per-core rules were measured on).
    pub const UARCH_PREFIX: &str = "uarch_efficiency.";
}

/// One named parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub value: f64,
    /// Unit, e.g. "gigacycles", "secs", "ratio".
    pub unit: String,
    /// Where the value comes from (document, rule of thumb, or "fitted").
    pub source: String,
    /// Smallest physically meaningful value (calibration bound).
    pub lower: f64,
    /// Largest physically meaningful value (calibration bound).
    pub upper: f64,
    /// Standard error of a fitted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_error: Option<f64>,
}

/// Covariance of the fitted subset of parameters (row/column order = `names`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Covariance {
    pub names: Vec<String>,
    pub matrix: Vec<Vec<f64>>,
}

/// Where a fitted parameter set came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedOn {
    /// Dataset files or descriptions.
    #[serde(default)]
    pub datasets: Vec<String>,
    /// Number of measured runs used.
    #[serde(default)]
    pub runs: u32,
    /// Free text (method, date, fit quality).
    #[serde(default)]
    pub note: String,
}

/// The model's error on systems it was not fitted to, as a log-scale standard deviation
/// per metric: what a prediction's interval adds to the parameter uncertainty. Written
/// by `cephplan calibrate` from its leave-one-system-out evaluation (`--transfer`) or,
/// for a fit to one or two systems, from its leave-one-run-out residuals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// `leave-one-system-out` (the interval of a system the model has not seen) or
    /// `leave-one-run-out` (a system the model was calibrated on).
    pub kind: String,
    /// σ of `ln(predicted / measured)` for IOPS and bandwidth.
    pub throughput_ln_sigma: f64,
    /// σ of `ln(predicted / measured)` for mean latency.
    pub latency_ln_sigma: f64,
    /// The same for workloads at iodepth 1 (each fio job one I/O in flight), where the
    /// model transfers worse; absent when the evaluation had too few systems with such
    /// runs, and then the two above apply to every workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth1_throughput_ln_sigma: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth1_latency_ln_sigma: Option<f64>,
    /// Systems and runs the residuals came from.
    pub systems: u32,
    pub runs: u32,
    #[serde(default)]
    pub note: String,
    /// The held-out errors of each kind of run (`evaluate`'s `classes`), so that a
    /// prediction can say how far runs of its own kind were off on systems the model was
    /// not fitted to; empty for a leave-one-run-out transfer and for models written
    /// before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_kind: Vec<TransferKind>,
    /// The directions of I/O the runs behind a leave-one-run-out error measured (reads,
    /// writes). A workload with I/O of a direction not listed is one these runs say nothing
    /// of (the calibration held that direction's parameters at its start model's values),
    /// so its interval takes `unmeasured`. Empty: every direction (a leave-one-system-out
    /// error, or a model written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_directions: Vec<Direction>,
    /// For a workload of a direction not in `measured_directions`: the leave-one-system-out
    /// error of the model whose values that direction kept, with its per-kind record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<Box<Transfer>>,
    /// For a leave-one-run-out error over runs of both directions: the error of the runs
    /// of one direction alone (reads only, writes only; at least
    /// [`MIN_RUNS_PER_DIRECTION`] runs each), which a workload of that direction takes; a
    /// mix takes the pooled σ above. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_direction: Vec<DirectionError>,
    /// For a leave-one-run-out error: the clusters its runs measured. A scenario unlike
    /// them (other OSDs per node or cores per node, or a node count outside those measured
    /// with that node) takes [`Transfer::unlike`] where it is larger.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_clusters: Vec<MeasuredCluster>,
    /// The start model's leave-one-system-out error, for a scenario unlike
    /// `measured_clusters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlike: Option<Box<Transfer>>,
}

/// A cluster the runs behind a leave-one-run-out error measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredCluster {
    pub nodes: u32,
    pub osds_per_node: u32,
    /// Physical cores per OSD node (sockets × cores).
    pub cores_per_node: u32,
}

/// The fewest runs of one direction whose leave-one-run-out residuals give that direction
/// an error of its own ([`Transfer::by_direction`]).
pub const MIN_RUNS_PER_DIRECTION: usize = 3;

/// The leave-one-run-out error of one direction's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionError {
    pub direction: Direction,
    pub throughput_ln_sigma: f64,
    pub latency_ln_sigma: f64,
    pub runs: u32,
}

/// A direction of I/O, for what a calibration's runs measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Reads,
    Writes,
}

impl Direction {
    /// Whether a workload with this share of reads has I/O of this direction.
    pub fn in_workload(self, read_fraction: f64) -> bool {
        match self {
            Direction::Reads => read_fraction > 0.0,
            Direction::Writes => read_fraction < 1.0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Reads => "read",
            Direction::Writes => "write",
        }
    }
}

impl Transfer {
    /// Whether a cluster of `nodes` nodes of `osds_per_node` OSDs and `cores_per_node`
    /// cores is one the runs behind this error measured: the same node, at a node count
    /// within those measured with it. True when the record lists none.
    pub fn measured(&self, nodes: u32, osds_per_node: u32, cores_per_node: u32) -> bool {
        if self.measured_clusters.is_empty() {
            return true;
        }
        let counts: Vec<u32> = self
            .measured_clusters
            .iter()
            .filter(|c| c.osds_per_node == osds_per_node && c.cores_per_node == cores_per_node)
            .map(|c| c.nodes)
            .collect();
        match (counts.iter().min(), counts.iter().max()) {
            (Some(&lo), Some(&hi)) => lo <= nodes && nodes <= hi,
            _ => false,
        }
    }

    /// The error an interval for a workload with `read_fraction` reads takes: this one, or
    /// [`Transfer::unmeasured`] when the workload has I/O of a direction the runs behind
    /// this one never measured (and the model states it). The second value is that
    /// direction.
    pub fn for_workload(&self, read_fraction: f64) -> (&Transfer, Option<Direction>) {
        if self.measured_directions.is_empty() {
            return (self, None);
        }
        let missing = [Direction::Reads, Direction::Writes]
            .into_iter()
            .find(|d| d.in_workload(read_fraction) && !self.measured_directions.contains(d));
        match (missing, self.unmeasured.as_deref()) {
            (Some(d), Some(u)) => (u, Some(d)),
            _ => (self, None),
        }
    }
}

/// The leave-one-system-out errors of the runs of one kind ([`crate::spec::RunClass`]),
/// percent, systems weighted equally, as `cephplan evaluate` prints them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferKind {
    pub kind: crate::spec::RunClass,
    /// Systems and runs of this kind the errors came from.
    pub systems: u32,
    pub runs: u32,
    /// Mean absolute error of IOPS (bandwidth for sequential runs), its median and the
    /// mean signed error (negative: predicted low).
    pub iops_mape_percent: f64,
    pub iops_median_percent: f64,
    pub iops_bias_percent: f64,
    /// Mean absolute error of the mean latency, where the runs measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_mape_percent: Option<f64>,
}

/// The model's parameter set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    pub schema_version: u32,
    /// Who produced the file; files written by cephplan contain
    /// [`crate::io::GENERATED_MARKER`].
    pub generator: String,
    /// Short name shown in reports ("prior", "default", "fit-2026-12-01").
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted_on: Option<FittedOn>,
    pub param: BTreeMap<String, Param>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covariance: Option<Covariance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("{origin}: cannot read the model file ({message}); check the path")]
    Io { origin: String, message: String },
    #[error("{origin}:{line}:{column}: {field}{message}; fix: {fix}")]
    Parse {
        origin: String,
        line: usize,
        column: usize,
        /// "field `param.x.value`: " where the error is in a value, else empty.
        field: String,
        message: String,
        fix: String,
    },
    #[error("{origin}: schema_version {found} is not supported; fix: use schema_version = {MODEL_SCHEMA_VERSION}")]
    Schema { origin: String, found: u32 },
    #[error("{origin}: field `param.{name}`: {problem}; fix: {fix}")]
    Invalid {
        origin: String,
        name: String,
        problem: String,
        fix: String,
    },
    #[error("the model has no parameter `{name}`; fix: add [param.\"{name}\"] to the model file (models/prior.toml has every parameter with its source)")]
    Missing { name: String },
    #[error("{origin}: field `{field}`: {problem}; fix: {fix}")]
    InvalidField {
        origin: String,
        field: String,
        problem: String,
        fix: String,
    },
    #[error("{origin}: field `param.{name}`: missing (the model cannot predict without it); fix: add [param.{name}] to the model file (models/prior.toml has every parameter with its source)")]
    MissingIn { origin: String, name: String },
    #[error(
        "{origin}: covariance: {problem}; fix: give a square matrix over parameters that exist"
    )]
    BadCovariance { origin: String, problem: String },
}

impl ModelParams {
    /// `models/default.toml` as shipped in the binary.
    pub fn shipped_default() -> Self {
        Self::parse(DEFAULT_TOML, "models/default.toml (built in)")
            .expect("the shipped default model is valid (checked by a unit test)")
    }

    /// `models/prior.toml` as shipped in the binary.
    pub fn prior() -> Self {
        Self::parse(PRIOR_TOML, "models/prior.toml (built in)")
            .expect("the shipped prior model is valid (checked by a unit test)")
    }

    /// Loads a model file.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::Io {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &origin)
    }

    /// Parses and validates model text.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ModelError> {
        let m: ModelParams = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|r| {
                    let before = &text[..r.start.min(text.len())];
                    (
                        before.matches('\n').count() + 1,
                        before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
                    )
                })
                .unwrap_or((0, 0));
            let message = e.message().trim().to_string();
            let field = crate::spec::field_prefix(text, &e);
            let fix = crate::spec::value_type_fix(&message).unwrap_or_else(|| {
                "correct the model file (see models/prior.toml for the format)".to_string()
            });
            ModelError::Parse {
                origin: origin.to_string(),
                line,
                column,
                field,
                message,
                fix,
            }
        })?;
        m.validate(origin)?;
        if let Some(name) = REQUIRED.iter().find(|n| !m.param.contains_key(**n)) {
            return Err(ModelError::MissingIn {
                origin: origin.to_string(),
                name: name.to_string(),
            });
        }
        for (i, row) in m
            .covariance
            .iter()
            .flat_map(|c| c.matrix.iter().enumerate())
        {
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                let c = m.covariance.as_ref().expect("iterating it");
                return Err(ModelError::BadCovariance {
                    origin: origin.to_string(),
                    problem: format!(
                        "entry ({}, {}) is {}, not a finite number",
                        c.names[i], c.names[j], row[j]
                    ),
                });
            }
        }
        Ok(m)
    }

    /// Parameters the shipped prior has and this model lacks: the model builder uses its
    /// built-in fallback for each (a factor of 1, or the mechanism left out), not a fitted
    /// or sourced value. Reports list them (`ModelInfo::defaulted_params`).
    pub fn defaulted(&self) -> Vec<String> {
        static PRIOR_NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        PRIOR_NAMES
            .get_or_init(|| Self::prior().names())
            .iter()
            .filter(|n| !self.param.contains_key(*n))
            .cloned()
            .collect()
    }

    /// Parameters this model file has that no part of this build reads: neither a name of
    /// the shipped prior nor a per-architecture, per-release or per-generation factor
    /// (`arch_efficiency.*`, `release_factor.*`, `uarch_efficiency.*`). Each comes with why:
    /// a mechanism since removed, or an unknown name (a typo, or a file from another tool).
    /// They change no prediction; reports list them (`ModelInfo::unread_params`).
    pub fn unread(&self) -> Vec<(String, &'static str)> {
        static PRIOR_NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let prior = PRIOR_NAMES.get_or_init(|| Self::prior().names());
        self.param
            .keys()
            .filter(|n| {
                !prior.contains(n)
                    && ![
                        names::ARCH_PREFIX,
                        names::RELEASE_PREFIX,
                        names::UARCH_PREFIX,
                    ]
                    .iter()
                    .any(|prefix| n.starts_with(prefix))
            })
            .map(|n| {
                let why = REMOVED
                    .iter()
                    .find(|(name, _)| *name == n.as_str())
                    .map_or("not a parameter of this model", |(_, why)| *why);
                (n.clone(), why)
            })
            .collect()
    }

    /// Checks versions, bounds and the covariance shape.
    pub fn validate(&self, origin: &str) -> Result<(), ModelError> {
        if self.schema_version != MODEL_SCHEMA_VERSION {
            return Err(ModelError::Schema {
                origin: origin.to_string(),
                found: self.schema_version,
            });
        }
        for (name, p) in &self.param {
            let bad = |problem: String, fix: &str| ModelError::Invalid {
                origin: origin.to_string(),
                name: name.clone(),
                problem,
                fix: fix.to_string(),
            };
            if !(p.lower.is_finite() && p.upper.is_finite() && p.lower <= p.upper) {
                return Err(bad(
                    format!("bounds [{}, {}] are not an interval", p.lower, p.upper),
                    "give finite lower ≤ upper",
                ));
            }
            if !(p.value.is_finite() && p.lower <= p.value && p.value <= p.upper) {
                return Err(bad(
                    format!("value {} lies outside [{}, {}]", p.value, p.lower, p.upper),
                    "move the value inside its bounds or widen them",
                ));
            }
            if p.source.trim().is_empty() {
                return Err(bad(
                    "no source".into(),
                    "say where the value comes from (datasheet, rule of thumb, fit)",
                ));
            }
        }
        if let Some(t) = &self.transfer {
            for (field, v) in [
                ("throughput_ln_sigma", Some(t.throughput_ln_sigma)),
                ("latency_ln_sigma", Some(t.latency_ln_sigma)),
                (
                    "iodepth1_throughput_ln_sigma",
                    t.iodepth1_throughput_ln_sigma,
                ),
                ("iodepth1_latency_ln_sigma", t.iodepth1_latency_ln_sigma),
            ] {
                if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(ModelError::Invalid {
                        origin: origin.to_string(),
                        name: format!("transfer.{field}"),
                        problem: format!("{v} is not a standard deviation (finite, ≥ 0)"),
                        fix: "give the log-scale σ `cephplan calibrate --transfer` writes, or remove the [transfer] table".to_string(),
                    });
                }
            }
            for (i, k) in t.by_kind.iter().enumerate() {
                let percent = |v: f64, signed: bool| v.is_finite() && (signed || v >= 0.0);
                let problem = if k.systems == 0 || k.runs < k.systems {
                    Some(format!(
                        "{} systems and {} runs: a held-out record needs one system at least and a run per system",
                        k.systems, k.runs
                    ))
                } else if !(percent(k.iops_mape_percent, false)
                    && percent(k.iops_median_percent, false)
                    && percent(k.iops_bias_percent, true)
                    && k.latency_mape_percent.is_none_or(|l| percent(l, false)))
                {
                    Some(
                        "an error that is not a finite percentage (absolute errors ≥ 0)"
                            .to_string(),
                    )
                } else {
                    None
                };
                if let Some(problem) = problem {
                    return Err(ModelError::InvalidField {
                        origin: origin.to_string(),
                        field: format!("transfer.by_kind[{i}] ({})", k.kind.label()),
                        problem,
                        fix: "write the record `cephplan calibrate --transfer` writes, or remove the [[transfer.by_kind]] table".to_string(),
                    });
                }
            }
        }
        if let Some(c) = &self.covariance {
            let bad = |problem: String| ModelError::BadCovariance {
                origin: origin.to_string(),
                problem,
            };
            let n = c.names.len();
            if c.matrix.len() != n || c.matrix.iter().any(|r| r.len() != n) {
                return Err(bad(format!("{n} names but the matrix is not {n}×{n}")));
            }
            if let Some(missing) = c.names.iter().find(|x| !self.param.contains_key(*x)) {
                return Err(bad(format!("names unknown parameter `{missing}`")));
            }
            for i in 0..n {
                if !(c.matrix[i][i].is_finite() && c.matrix[i][i] >= 0.0) {
                    return Err(bad(format!("variance of `{}` is negative", c.names[i])));
                }
            }
        }
        Ok(())
    }

    /// Parameter names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.param.keys().cloned().collect()
    }

    /// A parameter's value.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.param.get(name).map(|p| p.value)
    }

    /// A parameter's value, or a [`ModelError::Missing`] naming it.
    pub fn require(&self, name: &str) -> Result<f64, ModelError> {
        self.get(name).ok_or_else(|| ModelError::Missing {
            name: name.to_string(),
        })
    }

    /// Sets a parameter's value (bounds are not enforced here, so that finite-difference
    /// steps may touch them; [`ModelParams::validate`] checks them).
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), ModelError> {
        match self.param.get_mut(name) {
            Some(p) => {
                p.value = value;
                Ok(())
            }
            None => Err(ModelError::Missing {
                name: name.to_string(),
            }),
        }
    }

    /// CPU efficiency of an architecture relative to x86_64 (the reference, 1.0 when the
    /// file has no entry for it).
    pub fn arch_efficiency(&self, arch: &str) -> Result<f64, ModelError> {
        match self.get(&format!("{}{arch}", names::ARCH_PREFIX)) {
            Some(v) => Ok(v),
            None if arch == "x86_64" => Ok(1.0),
            None => self.require(&format!("{}{arch}", names::ARCH_PREFIX)),
        }
    }

    /// Per-GHz·core efficiency of a CPU: its generation's `uarch_efficiency.<uarch>` when
    /// the CPU names one the model has, else its instruction set's (`arch_efficiency`),
    /// with a note for the report saying so (a CPU whose generation the model does not
    /// know is never silently given the reference speed).
    pub fn cpu_efficiency(
        &self,
        cpu: &crate::spec::CpuEntry,
    ) -> Result<(f64, Option<String>), ModelError> {
        use crate::spec::Uarch;
        let arch = cpu.arch.as_str();
        let fallback = self.arch_efficiency(arch)?;
        // The note's texts are built only when there is a note (a fit asks this of every
        // run at every step).
        let name = || {
            let name = format!("{} {}", cpu.vendor, cpu.model).trim().to_string();
            if name.is_empty() {
                "the CPU".to_string()
            } else {
                format!("CPU \"{name}\"")
            }
        };
        match cpu.uarch {
            Some(u) if u != Uarch::Other => {
                let key = format!("{}{}", names::UARCH_PREFIX, u.as_str());
                match self.get(&key) {
                    Some(v) => Ok((v, None)),
                    None => Ok((
                        fallback,
                        Some(format!(
                            "model \"{}\" has no {key} for {}: its per-GHz·core speed is the {arch} default ({fallback}, relative to Zen 2); add the factor from models/prior.toml, or calibrate on runs of this CPU",
                            self.name,
                            name()
                        )),
                    )),
                }
            }
            // An instruction set without generations in the list (32-bit ARM) takes its
            // own factor by design.
            _ if arch == "armv7" => Ok((fallback, None)),
            _ => {
                let known = Uarch::ALL
                    .iter()
                    .filter(|u| **u != Uarch::Other)
                    .map(|u| u.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                Ok((
                    fallback,
                    Some(format!(
                        "{} names no core generation the model knows (uarch {}): its per-GHz·core speed is the {arch} default ({fallback}, relative to Zen 2), not a sourced generation factor; set its uarch to one of {known} when it is one of them, or calibrate on runs of this CPU",
                        name(),
                        cpu.uarch.map_or("not given", |u| u.as_str())
                    )),
                ))
            }
        }
    }

    /// The CPU factor of a Ceph release: exact match (`release_factor.19.2.0`), then
    /// major.minor, then major; otherwise 1.0 with a warning for the report.
    pub fn release_factor(&self, release: &str) -> (f64, Option<String>) {
        // The release itself, then each prefix that ends before one of its dots.
        let r = release.trim();
        let ends = std::iter::once(r.len()).chain(r.rmatch_indices('.').map(|(i, _)| i));
        let mut key = String::with_capacity(names::RELEASE_PREFIX.len() + r.len());
        for end in ends {
            key.clear();
            key.push_str(names::RELEASE_PREFIX);
            key.push_str(&r[..end]);
            if let Some(v) = self.get(&key) {
                return (v, None);
            }
        }
        (
            1.0,
            Some(format!(
                "model \"{}\" has no release factor for Ceph {release:?}; using 1.0 (calibrate on runs of this release to add one)",
                self.name
            )),
        )
    }

    /// The model as TOML text carrying the generated-by marker.
    pub fn to_toml(&self) -> String {
        format!(
            "# {}\n{}",
            crate::io::GENERATED_MARKER,
            toml::to_string_pretty(self).expect("ModelParams always serialises")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_models_parse_and_default_has_every_prior_parameter() {
        let d = ModelParams::shipped_default();
        let p = ModelParams::prior();
        // default.toml is the calibration of the prior to calibration-data/ (cephplan
        // calibrate); it keeps every parameter of the prior and may add fitted factors.
        for name in p.param.keys() {
            assert!(d.param.contains_key(name), "default.toml lacks {name}");
        }
        assert!(d.generator.contains(crate::io::GENERATED_MARKER));
        for n in REQUIRED {
            assert!(d.get(n).is_some(), "default model lacks {n}");
        }
    }

    /// Every prior parameter says where its value comes from, and the shipped model keeps
    /// that source for what it holds (or says it fitted the value): a placeholder left in
    /// the prior while a refit copied it would otherwise ship.
    #[test]
    fn the_shipped_default_carries_the_priors_sources() {
        let d = ModelParams::shipped_default();
        for (name, prior) in &ModelParams::prior().param {
            assert!(
                prior.source.split_whitespace().count() >= 5,
                "{name}: prior.toml's source is a placeholder: {:?}",
                prior.source
            );
            let shipped = &d.param[name].source;
            assert!(
                *shipped == prior.source || shipped.starts_with("fitted by cephplan calibrate"),
                "{name}: default.toml's source is neither prior.toml's nor a fit's; refit with `cephplan calibrate --data calibration-data --out models/default.toml --no-loo --transfer`"
            );
        }
    }

    /// Every core generation a CPU can name has a factor with a source in the prior and in
    /// the shipped model, inside its bounds (so no generation falls back to the x86_64
    /// reference speed unannounced); the catalogue's CPUs each name one.
    #[test]
    fn every_cpu_generation_has_a_sourced_prior() {
        use crate::spec::Uarch;
        for m in [ModelParams::prior(), ModelParams::shipped_default()] {
            for u in Uarch::ALL.iter().filter(|u| **u != Uarch::Other) {
                let key = format!("{}{}", names::UARCH_PREFIX, u.as_str());
                let p = m
                    .param
                    .get(&key)
                    .unwrap_or_else(|| panic!("{} lacks {key}", m.name));
                assert!(!p.source.trim().is_empty(), "{key} has no source");
                assert!(p.lower <= p.value && p.value <= p.upper, "{key}");
            }
        }
        let cat = crate::spec::Catalogue::builtin();
        for (name, cpu) in &cat.cpu {
            assert!(
                cpu.uarch.is_some_and(|u| u != Uarch::Other),
                "catalogue CPU {name} names no generation"
            );
            let (_, note) = ModelParams::shipped_default().cpu_efficiency(cpu).unwrap();
            assert!(note.is_none(), "{name}: {note:?}");
        }
    }

    #[test]
    fn get_set_and_names_round_trip() {
        let mut m = ModelParams::prior();
        let names = m.names();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        m.set(names::SMT_GAIN, 0.3).unwrap();
        assert_eq!(m.get(names::SMT_GAIN), Some(0.3));
        assert!(matches!(
            m.set("no_such", 1.0),
            Err(ModelError::Missing { .. })
        ));
        let again = ModelParams::parse(&m.to_toml(), "x").unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn release_lookup_falls_back_exact_then_major_then_one() {
        let mut m = ModelParams::prior();
        m.param.insert(
            "release_factor.16".into(),
            Param {
                value: 0.8,
                unit: "ratio".into(),
                source: "test".into(),
                lower: 0.1,
                upper: 10.0,
                std_error: None,
            },
        );
        let mut exact = m.param["release_factor.16"].clone();
        exact.value = 0.7;
        m.param.insert("release_factor.16.2.7".into(), exact);
        assert_eq!(m.release_factor("16.2.7"), (0.7, None));
        assert_eq!(m.release_factor("16.2.0"), (0.8, None));
        let (v, w) = m.release_factor("9.2.1");
        assert_eq!(v, 1.0);
        assert!(w.unwrap().contains("9.2.1"));
    }

    #[test]
    fn out_of_bounds_value_is_rejected_with_the_field() {
        let text = PRIOR_TOML.replacen("value = ", "value = -1e9 # ", 1);
        let e = ModelParams::parse(&text, "m.toml").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("m.toml") && msg.contains("param.") && msg.contains("fix"),
            "{msg}"
        );
    }

    #[test]
    fn a_transfer_sigma_that_is_not_a_standard_deviation_is_refused_with_the_field() {
        for (name, bad) in [
            ("iodepth1_throughput_ln_sigma", "-0.74"),
            ("latency_ln_sigma", "nan"),
        ] {
            let line = DEFAULT_TOML
                .lines()
                .find(|l| l.starts_with(&format!("{name} = ")))
                .unwrap_or_else(|| panic!("the default states {name}"));
            let text = DEFAULT_TOML.replacen(line, &format!("{name} = {bad}"), 1);
            let msg = ModelParams::parse(&text, "m.toml").unwrap_err().to_string();
            assert!(
                msg.contains("m.toml")
                    && msg.contains(&format!("transfer.{name}"))
                    && msg.contains("calibrate --transfer"),
                "{msg}"
            );
        }
        // The shipped default states both iodepth-1 σs and parses.
        let p = ModelParams::parse(DEFAULT_TOML, "default").unwrap();
        let t = p.transfer.unwrap();
        assert!(t.iodepth1_throughput_ln_sigma.is_some() && t.iodepth1_latency_ln_sigma.is_some());
    }

    #[test]
    fn the_held_out_record_by_kind_round_trips_and_older_models_read_without_it() {
        // The shipped default carries a record for every kind of run the corpus has
        // (`calibrate --transfer`), in the classes' order.
        let p = ModelParams::parse(DEFAULT_TOML, "default").unwrap();
        let t = p.transfer.as_ref().unwrap();
        assert_eq!(
            t.by_kind.iter().map(|k| k.kind).collect::<Vec<_>>(),
            crate::spec::RunClass::ALL
        );
        let back = ModelParams::parse(&p.to_toml(), "again").unwrap();
        assert_eq!(back.transfer, p.transfer);
        // A model written before the record existed reads with none.
        let old = &DEFAULT_TOML[..DEFAULT_TOML.find("[[transfer.by_kind]]").unwrap()];
        let q = ModelParams::parse(old, "old.toml").unwrap();
        assert!(q.transfer.unwrap().by_kind.is_empty());
    }

    #[test]
    fn a_held_out_record_that_is_not_a_percentage_is_refused_with_its_kind_and_the_fix() {
        let first = DEFAULT_TOML.find("[[transfer.by_kind]]").unwrap();
        let line = DEFAULT_TOML[first..]
            .lines()
            .find(|l| l.starts_with("iops_mape_percent = "))
            .unwrap();
        for bad in ["iops_mape_percent = -3.0", "iops_mape_percent = nan"] {
            let text = format!(
                "{}{}",
                &DEFAULT_TOML[..first],
                DEFAULT_TOML[first..].replacen(line, bad, 1)
            );
            let msg = ModelParams::parse(&text, "m.toml").unwrap_err().to_string();
            assert!(
                msg.starts_with("m.toml: field `transfer.by_kind[0] (erasure-coded pool)`")
                    && msg.contains("not a finite percentage")
                    && msg.contains("calibrate --transfer"),
                "{msg}"
            );
        }
        let text = format!(
            "{}{}",
            &DEFAULT_TOML[..first],
            DEFAULT_TOML[first..].replacen("systems = 1\n", "systems = 0\n", 1)
        );
        let msg = ModelParams::parse(&text, "m.toml").unwrap_err().to_string();
        assert!(msg.contains("0 systems"), "{msg}");
    }

    /// Text of the shipped default without the `[param.NAME]` table (and without the
    /// covariance, which names every parameter).
    fn default_without(name: &str) -> String {
        let text = DEFAULT_TOML;
        let text = &text[..text.find("[covariance]").unwrap_or(text.len())];
        let start = text.find(&format!("[param.{name}]\n")).unwrap();
        let end = text[start + 1..]
            .find("\n[")
            .map_or(text.len(), |i| start + 2 + i);
        format!("{}{}", &text[..start], &text[end..])
    }

    /// Issue 17 item 12: a model without a parameter the builder needs is refused when
    /// read, naming the model file and the field (before, the error surfaced at prediction
    /// time as "predicting SCENARIO: the model has no parameter").
    #[test]
    fn a_missing_required_parameter_names_the_model_file() {
        let e = ModelParams::parse(&default_without(names::WAL_SHARE), "m.toml").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ModelError::MissingIn { .. }), "{msg}");
        assert!(msg.starts_with("m.toml: field `param.wal_share`"), "{msg}");
    }

    /// A parameter no part of the build reads (one since removed, or a misspelt name) is
    /// listed with why; factors read by their prefix are not; the shipped models list none.
    #[test]
    fn parameters_no_part_of_the_build_reads_are_listed_with_why() {
        let mut m = ModelParams::prior();
        assert!(m.unread().is_empty());
        assert!(ModelParams::shipped_default().unread().is_empty());
        let template = m.param[names::SMT_GAIN].clone();
        for name in [
            "pg_placement_imbalance",
            "osd_cpu_reed_gcycles",
            "release_factor.21",
            "uarch_efficiency.zen5",
            "arch_efficiency.riscv64",
        ] {
            m.param.insert(name.to_string(), template.clone());
        }
        let unread = m.unread();
        assert_eq!(
            unread.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["osd_cpu_reed_gcycles", "pg_placement_imbalance"],
            "per-release, per-generation and per-architecture factors are read by their prefix"
        );
        assert_eq!(unread[0].1, "not a parameter of this model");
        assert!(
            unread[1].1.contains("removed in session 22"),
            "{}",
            unread[1].1
        );
    }

    /// Issue 17 item 13: an optional parameter left out is listed as defaulted; the shipped
    /// models list none.
    #[test]
    fn parameters_the_model_lacks_are_listed_as_defaulted() {
        let m = ModelParams::parse(&default_without(names::WRITE_BATCH_SCALE), "m.toml").unwrap();
        assert_eq!(m.defaulted(), [names::WRITE_BATCH_SCALE]);
        assert!(ModelParams::shipped_default().defaulted().is_empty());
        assert!(ModelParams::prior().defaulted().is_empty());
    }

    /// Issue 17 item 12: a NaN anywhere in the covariance (not only on its diagonal) is
    /// refused; before, it reached the prediction intervals.
    #[test]
    fn a_nan_in_the_covariance_is_refused() {
        // Entry (0, 1): the second number line after `matrix = [`.
        let at = DEFAULT_TOML.find("matrix = [").unwrap();
        let mut lines: Vec<&str> = DEFAULT_TOML[at..].lines().collect();
        let k = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim().starts_with(|c: char| c.is_ascii_digit()))
            .nth(1)
            .unwrap()
            .0;
        lines[k] = "nan,";
        let text = format!("{}{}\n", &DEFAULT_TOML[..at], lines.join("\n"));
        let e = ModelParams::parse(&text, "m.toml").unwrap_err();
        assert!(matches!(e, ModelError::BadCovariance { .. }), "{e}");
        assert!(e.to_string().contains("is NaN"), "{e}");
    }

    /// A value of the wrong type names the parameter and what to write, at its line.
    #[test]
    fn a_value_of_the_wrong_type_names_the_parameter_and_the_fix() {
        let at = DEFAULT_TOML.find("[param.cpu_core_contention]").unwrap();
        let v = at + DEFAULT_TOML[at..].find("value = ").unwrap();
        let end = v + DEFAULT_TOML[v..].find('\n').unwrap();
        let text = format!(
            "{}value = \"fast\"{}",
            &DEFAULT_TOML[..v],
            &DEFAULT_TOML[end..]
        );
        let e = ModelParams::parse(&text, "m.toml").unwrap_err();
        let line = DEFAULT_TOML[..v].matches('\n').count() + 1;
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("m.toml:{line}:")), "{msg}");
        assert!(
            msg.contains("field `param.cpu_core_contention.value`"),
            "{msg}"
        );
        assert!(msg.contains("fix: write a number without quotes"), "{msg}");
    }
}
