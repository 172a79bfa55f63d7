//! The requirements file (`cephplan design --requirements FILE`): what the cluster must
//! hold and deliver, which protection schemes and parts to consider, and the limits of the
//! search. Text ──serde──► [`RequirementsSpec`] ──[`RequirementsSpec::validate`]──►
//! [`Requirements`] (parts resolved against the catalogue, ranges checked against each
//! other). Errors are [`SpecError`]s: file, line, field and fix.
//!
//! Format version 1 (`schema_version = 1`); `models/requirements/` has two commented
//! examples.

use serde::{Deserialize, Serialize};

use crate::spec::catalogue::closest;
use crate::spec::{
    error_at, toml_error_in, Catalogue, CpuEntry, DriveEntry, FailureDomain, FileKind, NicEntry,
    Pattern, Protection, SpecError, SpecErrorKind, NEARFULL_RATIO,
};
use crate::units::{BitsPerSec, Bytes, LatencyTarget};

/// The requirements format version this build reads.
pub const REQUIREMENTS_SCHEMA_VERSION: u32 = 1;

/// Ceph's default `mon_osd_full_ratio`: with nodes down, the data must still fit under it.
pub const FULL_RATIO: f64 = 0.95;

fn one() -> u32 {
    1
}
fn nearfull() -> f64 {
    NEARFULL_RATIO
}
fn host() -> FailureDomain {
    FailureDomain::Host
}
fn default_sockets() -> Vec<u32> {
    vec![1, 2]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementsSpec {
    pub schema_version: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Ceph release the cluster will run, e.g. "19.2.0".
    pub ceph_release: String,
    #[serde(default = "one")]
    pub osds_per_device: u32,
    /// What a target is checked against: `"point"` (default), `"interval-80"` or
    /// `"interval-95"` (the pessimistic end of the prediction's range).
    #[serde(default)]
    pub check_at: CheckAt,
    /// The memory each OSD will aim at (`osd_memory_target`, e.g. "8GiB"); Ceph's 4 GiB
    /// when left out. With a workload's `image_size` it sets how many onodes BlueStore's
    /// cache holds (models/README.md, "The onode cache").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_memory_target: Option<Bytes>,
    pub capacity: CapacitySpec,
    /// One or more `[[workload]]` tables; each must meet its targets on its own.
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadRequirementSpec>,
    pub protection: ProtectionSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resilience: Option<ResilienceSpec>,
    pub constraints: ConstraintsSpec,
    /// Parts described inline (`[parts.drive.my-drive]`, the catalogue's fields), usable
    /// by name in the constraints alongside the catalogue's.
    #[serde(default, skip_serializing_if = "PartsSpec::is_empty")]
    pub parts: PartsSpec,
}

/// Inline parts, in the catalogue's format.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartsSpec {
    #[serde(default)]
    pub cpu: std::collections::BTreeMap<String, CpuEntry>,
    #[serde(default)]
    pub drive: std::collections::BTreeMap<String, DriveEntry>,
    #[serde(default)]
    pub nic: std::collections::BTreeMap<String, NicEntry>,
}

impl PartsSpec {
    pub fn is_empty(&self) -> bool {
        self.cpu.is_empty() && self.drive.is_empty() && self.nic.is_empty()
    }
}

/// What the targets are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CheckAt {
    /// The point prediction.
    #[default]
    #[serde(rename = "point")]
    Point,
    /// The pessimistic end of the 80 % range.
    #[serde(rename = "interval-80")]
    Interval80,
    /// The pessimistic end of the 95 % range.
    #[serde(rename = "interval-95")]
    Interval95,
}

/// Usable capacity: give exactly one of `usable_tb` (10¹² B) and `usable_tib` (2⁴⁰ B).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_tb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_tib: Option<f64>,
    /// The fullest the pool may run (raw used / raw); default 0.85, Ceph's nearfull ratio.
    #[serde(default = "nearfull")]
    pub fill_limit: f64,
    /// Growth to plan for on top of `usable_*`, as a fraction (0.3 = 30 % more data).
    #[serde(default)]
    pub growth_headroom: f64,
}

/// A workload and its targets. The load is closed, as fio's: `images × jobs_per_image ×
/// iodepth` I/Os in flight from `clients` client nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRequirementSpec {
    pub name: String,
    pub pattern: Pattern,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<f64>,
    pub block_size: Bytes,
    pub images: u32,
    /// The span of each image the workload's I/O covers, uniformly (e.g. "2TiB"): the
    /// working set is `images × image_size`. With it the model counts the onodes the
    /// BlueStore cache cannot hold; left out, the data set counts as cached.
    #[serde(
        default,
        deserialize_with = "crate::units::image_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_size: Option<Bytes>,
    #[serde(default = "one")]
    pub jobs_per_image: u32,
    pub iodepth: u32,
    /// Client nodes (with `colocated`, OSD nodes that run the clients: at most the nodes).
    pub clients: u32,
    #[serde(default)]
    pub colocated: bool,
    /// Client CPU (catalogue name), needed unless `colocated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu: Option<String>,
    #[serde(default = "one")]
    pub client_sockets: u32,
    /// Client NIC rate, needed unless `colocated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_nic: Option<BitsPerSec>,
    pub target: TargetSpec,
}

/// What a workload must reach; at least one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// IOPS ≥.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_min: Option<f64>,
    /// Bandwidth ≥, GB/s (10⁹ bytes per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gb_per_sec_min: Option<f64>,
    /// Mean latency ≤ (e.g. "2ms"; a unit is required, [`LatencyTarget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_mean_max: Option<LatencyTarget>,
    /// Simulated 99th-percentile latency ≤ (e.g. "10ms"); costs a simulation per checked
    /// design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p99_max: Option<LatencyTarget>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErasureOption {
    pub k: u32,
    pub m: u32,
}

/// Protection schemes to consider (at least one) and the failure domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectionSpec {
    /// Replica counts, e.g. `[3]`.
    #[serde(default)]
    pub replicated: Vec<u32>,
    /// EC profiles, e.g. `[{ k = 4, m = 2 }]`.
    #[serde(default)]
    pub erasure: Vec<ErasureOption>,
    #[serde(default = "host")]
    pub failure_domain: FailureDomain,
}

/// Targets must also hold with `nodes_down` nodes down while recovery runs at
/// `recovery_share`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResilienceSpec {
    #[serde(default = "one")]
    pub nodes_down: u32,
    /// Share of every OSD-side resource recovery takes (0 ≤ s ≤ 0.9): your mClock profile's
    /// recovery reservation, or what `osd_max_backfills` lets recovery take. Give this or
    /// `mclock_profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_share: Option<f64>,
    /// A built-in mClock profile (`balanced`, `high_client_ops`, `high_recovery_ops`): its
    /// recovery reservation is the share (`predict::MCLOCK_RECOVERY_SHARES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mclock_profile: Option<String>,
    /// Longest acceptable time to rebuild the lost copies, hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_recovery_hours: Option<f64>,
}

/// An inclusive range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    pub min: u32,
    pub max: u32,
}

/// A server chassis the nodes may be built on: its size, drive slots and sockets are the
/// user's (no chassis is in the catalogue).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChassisSpec {
    pub name: String,
    pub rack_units: u32,
    pub drive_slots: u32,
    pub max_sockets: u32,
    /// Power of the chassis without CPUs, data drives and NICs (fans, memory, boot drives,
    /// BMC, PSU losses), watts: your assumption or measurement; absent = power unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_power_watts: Option<f64>,
}

/// Limits of the search. Empty part lists allow every catalogue entry of that kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintsSpec {
    #[serde(default)]
    pub cpus: Vec<String>,
    #[serde(default)]
    pub drives: Vec<String>,
    #[serde(default)]
    pub nics: Vec<String>,
    /// CPU sockets per node to consider; default `[1, 2]` (capped by each chassis).
    #[serde(default = "default_sockets")]
    pub sockets: Vec<u32>,
    /// Data drives per node; default 1 to the chassis's slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drives_per_node: Option<RangeSpec>,
    pub nodes: RangeSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rack_units: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_power_watts: Option<f64>,
    /// At least one `[[constraints.chassis]]`.
    #[serde(default)]
    pub chassis: Vec<ChassisSpec>,
}

// ---------------------------------------------------------------------------------------
// Validated
// ---------------------------------------------------------------------------------------

/// A workload's targets, in SI units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub iops_min: Option<f64>,
    pub bandwidth_bytes_per_sec_min: Option<f64>,
    pub latency_mean_max_secs: Option<f64>,
    pub latency_p99_max_secs: Option<f64>,
}

/// A validated workload requirement (the scenario's workload and clients, plus targets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRequirement {
    pub name: String,
    pub workload: crate::spec::WorkloadSpec,
    pub clients: crate::spec::ClientsSpec,
    pub target: Target,
}

impl WorkloadRequirement {
    /// I/Os in flight.
    pub fn population(&self) -> u32 {
        self.workload.images * self.workload.jobs_per_image * self.workload.iodepth
    }
}

/// Resilience in SI units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Resilience {
    pub nodes_down: u32,
    pub recovery_share: f64,
    pub max_recovery_secs: Option<f64>,
}

/// A validated chassis.
pub type Chassis = ChassisSpec;

/// Validated requirements: parts resolved, ranges consistent, capacity reachable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirements {
    pub name: String,
    pub ceph_release: String,
    pub osds_per_device: u32,
    pub check_at: CheckAt,
    /// `osd_memory_target` of every OSD (None: Ceph's default).
    pub osd_memory_target: Option<Bytes>,
    /// Usable bytes to hold, growth included.
    pub usable_needed_bytes: f64,
    pub fill_limit: f64,
    pub workloads: Vec<WorkloadRequirement>,
    pub protections: Vec<Protection>,
    pub failure_domain: FailureDomain,
    pub resilience: Option<Resilience>,
    pub cpus: Vec<(String, CpuEntry)>,
    pub drives: Vec<(String, DriveEntry)>,
    pub nics: Vec<(String, NicEntry)>,
    pub sockets: Vec<u32>,
    pub drives_per_node: Option<RangeSpec>,
    pub nodes: RangeSpec,
    pub max_rack_units: Option<u32>,
    pub max_power_watts: Option<f64>,
    pub chassis: Vec<Chassis>,
    /// The catalogue the parts came from, with the inline parts added (scenarios are
    /// validated against it).
    pub catalogue: Catalogue,
    /// The inline parts (`[parts]`): written scenarios describe these inline.
    pub inline_parts: PartsSpec,
}

/// The width of a protection scheme in failure domains.
pub fn width(p: Protection) -> u32 {
    match p {
        Protection::Replicated { size } => size,
        Protection::Erasure { k, m } => k + m,
    }
}

type Fail = (String, SpecErrorKind);

/// Seconds as milliseconds for a message, to 4 significant decimals.
fn ms4(secs: f64) -> f64 {
    (secs * 1e7).round() / 1e4
}

fn inv<T>(field: impl Into<String>, problem: String, fix: impl Into<String>) -> Result<T, Fail> {
    Err((
        field.into(),
        SpecErrorKind::Invalid {
            problem,
            fix: fix.into(),
        },
    ))
}

fn resolve<T: Clone>(
    names: &[String],
    all: &std::collections::BTreeMap<String, T>,
    field: &str,
    section: &'static str,
) -> Result<Vec<(String, T)>, Fail> {
    if names.is_empty() {
        if all.is_empty() {
            return inv(
                field,
                format!("the catalogue has no {section} entries"),
                format!(
                    "list {section}s in {field} and give a catalogue that has them (--catalogue)"
                ),
            );
        }
        return Ok(all.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    }
    let mut out: Vec<(String, T)> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        match all.get(n) {
            Some(v) => {
                if out.iter().any(|(k, _)| k == n) {
                    return inv(
                        format!("{field}[{i}]"),
                        format!("\"{n}\" is listed twice"),
                        "list each part once",
                    );
                }
                out.push((n.clone(), v.clone()));
            }
            None => {
                return Err((
                    format!("{field}[{i}]"),
                    SpecErrorKind::UnknownName {
                        section,
                        name: n.clone(),
                        closest: closest(n, all.keys()),
                    },
                ))
            }
        }
    }
    Ok(out)
}

impl RequirementsSpec {
    /// Parses requirements text without validating it.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SpecError> {
        toml::from_str(text).map_err(|e| toml_error_in(text, origin, &e, FileKind::Requirements))
    }

    /// Validates against a catalogue. Errors carry the field path (no line; use
    /// [`parse_requirements`]).
    pub fn validate(&self, cat: &Catalogue) -> Result<Requirements, SpecError> {
        self.validate_inner(cat).map_err(|(field, kind)| SpecError {
            origin: "requirements".into(),
            line: None,
            column: None,
            field,
            kind: Box::new(kind),
        })
    }

    fn validate_inner(&self, cat: &Catalogue) -> Result<Requirements, Fail> {
        if self.schema_version != REQUIREMENTS_SCHEMA_VERSION {
            return inv(
                "schema_version",
                format!("schema_version {} is not supported", self.schema_version),
                format!("set schema_version = {REQUIREMENTS_SCHEMA_VERSION}"),
            );
        }
        if self.ceph_release.trim().is_empty() {
            return inv(
                "ceph_release",
                "ceph_release is empty".into(),
                "give the release the cluster will run, e.g. \"19.2.0\"",
            );
        }
        if let Err((problem, fix)) = crate::spec::release::check_release(&self.ceph_release) {
            return inv("ceph_release", problem, fix);
        }
        if self.osds_per_device == 0 || self.osds_per_device > 8 {
            return inv(
                "osds_per_device",
                format!("osds_per_device = {}", self.osds_per_device),
                "use 1 to 8 OSDs per device",
            );
        }
        // Capacity.
        let c = &self.capacity;
        let usable =
            match (c.usable_tb, c.usable_tib) {
                (Some(tb), None) => tb * 1e12,
                (None, Some(tib)) => tib * (1u64 << 40) as f64,
                _ => return inv(
                    "capacity",
                    "give the usable capacity once".into(),
                    "set exactly one of `usable_tb = 500` (10¹² B) or `usable_tib = 450` (2⁴⁰ B)",
                ),
            };
        if !(usable.is_finite() && usable > 0.0) {
            return inv(
                if c.usable_tb.is_some() {
                    "capacity.usable_tb"
                } else {
                    "capacity.usable_tib"
                },
                match (c.usable_tb, c.usable_tib) {
                    (Some(v), _) => format!("usable_tb = {v}"),
                    (_, Some(v)) => format!("usable_tib = {v}"),
                    _ => format!("usable capacity {usable} B"),
                },
                "give a positive capacity, e.g. usable_tb = 500",
            );
        }
        if !(c.fill_limit.is_finite() && c.fill_limit > 0.0 && c.fill_limit <= FULL_RATIO) {
            return inv(
                "capacity.fill_limit",
                format!("fill_limit = {}", c.fill_limit),
                format!("give the fullest the pool may run, 0 < fill_limit ≤ {FULL_RATIO} (Ceph's full ratio); default {NEARFULL_RATIO}"),
            );
        }
        if !(c.growth_headroom.is_finite() && c.growth_headroom >= 0.0) {
            return inv(
                "capacity.growth_headroom",
                format!("growth_headroom = {}", c.growth_headroom),
                "give the growth as a fraction ≥ 0 (0.3 = 30 % more data)",
            );
        }
        let usable_needed_bytes = usable * (1.0 + c.growth_headroom);

        // Parts: the catalogue plus the inline ones.
        let mut merged = cat.clone();
        let clash = |kind: &str, n: &str| {
            inv::<()>(
                format!("parts.{kind}.{n}"),
                format!("\"{n}\" is also a catalogue {kind}"),
                "give the inline part a name of its own",
            )
        };
        for (n, c) in &self.parts.cpu {
            c.check(&format!("parts.cpu.{n}"))?;
            if merged.cpu.insert(n.clone(), c.clone()).is_some() {
                clash("cpu", n)?;
            }
        }
        for (n, d) in &self.parts.drive {
            d.check(&format!("parts.drive.{n}"))?;
            if merged.drive.insert(n.clone(), d.clone()).is_some() {
                clash("drive", n)?;
            }
        }
        for (n, x) in &self.parts.nic {
            if x.ports == 0 || !crate::spec::LINK_BITS_PER_SEC_RANGE.contains(&x.speed.0) {
                return inv(
                    format!("parts.nic.{n}"),
                    format!("ports = {}, speed = {} b/s", x.ports, x.speed.0),
                    "give at least one port and the port's speed from 1Mb/s to 100Tb/s, in bits, e.g. \"25Gb/s\"",
                );
            }
            if merged.nic.insert(n.clone(), x.clone()).is_some() {
                clash("nic", n)?;
            }
        }
        let cat = &merged;
        // Parts.
        let cn = &self.constraints;
        let cpus = resolve(&cn.cpus, &cat.cpu, "constraints.cpus", "cpu")?;
        let drives = resolve(&cn.drives, &cat.drive, "constraints.drives", "drive")?;
        let nics = resolve(&cn.nics, &cat.nic, "constraints.nics", "nic")?;
        if cn.sockets.is_empty() {
            return inv(
                "constraints.sockets",
                "no socket counts".into(),
                "list the sockets per node to consider, e.g. [1, 2]",
            );
        }
        for (i, &s) in cn.sockets.iter().enumerate() {
            if s == 0 || s > 16 {
                return inv(
                    format!("constraints.sockets[{i}]"),
                    format!("{s} sockets"),
                    "use 1 to 16 sockets per node",
                );
            }
        }
        let mut sockets = cn.sockets.clone();
        sockets.sort_unstable();
        sockets.dedup();
        if cn.chassis.is_empty() {
            return inv(
                "constraints.chassis",
                "no chassis".into(),
                "add at least one [[constraints.chassis]] with name, rack_units, drive_slots and max_sockets",
            );
        }
        for (i, ch) in cn.chassis.iter().enumerate() {
            let at = format!("constraints.chassis[{i}]");
            if ch.name.trim().is_empty() {
                return inv(
                    format!("{at}.name"),
                    "empty name".into(),
                    "name the chassis",
                );
            }
            if cn.chassis[..i].iter().any(|o| o.name == ch.name) {
                return inv(
                    format!("{at}.name"),
                    format!("chassis \"{}\" is listed twice", ch.name),
                    "give each chassis its own name",
                );
            }
            for (f, v) in [
                ("rack_units", ch.rack_units),
                ("drive_slots", ch.drive_slots),
                ("max_sockets", ch.max_sockets),
            ] {
                if v == 0 {
                    return inv(format!("{at}.{f}"), format!("{f} = 0"), "must be ≥ 1");
                }
            }
            if let Some(w) = ch.base_power_watts {
                if !(w.is_finite() && w >= 0.0) {
                    return inv(
                        format!("{at}.base_power_watts"),
                        format!("base_power_watts = {w}"),
                        "give watts ≥ 0, or leave it out",
                    );
                }
            }
        }
        let max_slots = cn.chassis.iter().map(|c| c.drive_slots).max().unwrap_or(0);
        let max_chassis_sockets = cn.chassis.iter().map(|c| c.max_sockets).max().unwrap_or(0);
        if sockets[0] > max_chassis_sockets {
            return inv(
                "constraints.sockets",
                format!(
                    "every socket count ({:?}) is above every chassis's max_sockets (at most {max_chassis_sockets})",
                    sockets
                ),
                "allow fewer sockets or a chassis with more",
            );
        }
        if let Some(r) = cn.drives_per_node {
            if r.min == 0 || r.min > r.max {
                return inv(
                    "constraints.drives_per_node",
                    format!("min = {}, max = {}", r.min, r.max),
                    "give 1 ≤ min ≤ max",
                );
            }
            if r.min > max_slots {
                return inv(
                    "constraints.drives_per_node.min",
                    format!(
                        "min = {} but no chassis has more than {max_slots} drive slots",
                        r.min
                    ),
                    "lower drives_per_node.min or add a chassis with more slots",
                );
            }
        }
        let nr = cn.nodes;
        if nr.min == 0 || nr.min > nr.max || nr.max > 1000 {
            return inv(
                "constraints.nodes",
                format!("min = {}, max = {}", nr.min, nr.max),
                "give 1 ≤ min ≤ max ≤ 1000",
            );
        }
        if let Some(ru) = cn.max_rack_units {
            let least = cn.chassis.iter().map(|c| c.rack_units).min().unwrap_or(0) * nr.min;
            if least > ru {
                return inv(
                    "constraints.max_rack_units",
                    format!(
                        "{ru} rack units, but {} nodes in the smallest chassis take {least}",
                        nr.min
                    ),
                    "raise max_rack_units, lower constraints.nodes.min, or add a smaller chassis",
                );
            }
        }
        if let Some(w) = cn.max_power_watts {
            if !(w.is_finite() && w > 0.0) {
                return inv(
                    "constraints.max_power_watts",
                    format!("max_power_watts = {w}"),
                    "give a positive power budget in watts, or leave it out",
                );
            }
            let mut missing = Vec::new();
            missing.extend(
                cpus.iter()
                    .filter(|(_, c)| c.tdp_watts.is_none())
                    .map(|(n, _)| format!("cpu.{n}")),
            );
            missing.extend(
                drives
                    .iter()
                    .filter(|(_, d)| d.power_watts.is_none())
                    .map(|(n, _)| format!("drive.{n}")),
            );
            missing.extend(
                nics.iter()
                    .filter(|(_, d)| d.power_watts.is_none())
                    .map(|(n, _)| format!("nic.{n}")),
            );
            missing.extend(
                cn.chassis
                    .iter()
                    .filter(|c| c.base_power_watts.is_none())
                    .map(|c| format!("chassis \"{}\" (base_power_watts)", c.name)),
            );
            if !missing.is_empty() {
                return inv(
                    "constraints.max_power_watts",
                    format!("a power budget needs the power of every allowed part; none is known for {}", missing.join(", ")),
                    "add power_watts with its datasheet source to those catalogue entries (--catalogue), give the chassis base_power_watts, remove those parts from the constraints, or drop the budget",
                );
            }
        }

        // Protection.
        let p = &self.protection;
        if p.replicated.is_empty() && p.erasure.is_empty() {
            return inv(
                "protection",
                "no protection scheme".into(),
                "give `replicated = [3]` and/or `erasure = [{ k = 4, m = 2 }]`",
            );
        }
        let mut protections = Vec::new();
        for (i, &r) in p.replicated.iter().enumerate() {
            if r == 0 || r > 10 {
                return inv(
                    format!("protection.replicated[{i}]"),
                    format!("{r} replicas"),
                    "use 1 to 10 replicas (3 is usual)",
                );
            }
            protections.push(Protection::Replicated { size: r });
        }
        for (i, e) in p.erasure.iter().enumerate() {
            if e.k == 0 || e.m == 0 || e.k + e.m > 32 {
                return inv(
                    format!("protection.erasure[{i}]"),
                    format!("k = {}, m = {}", e.k, e.m),
                    "use k ≥ 1, m ≥ 1 and k + m ≤ 32 (e.g. k = 4, m = 2)",
                );
            }
            protections.push(Protection::Erasure { k: e.k, m: e.m });
        }
        protections.dedup();
        let resilience = match &self.resilience {
            None => None,
            Some(r) => {
                if r.nodes_down == 0 {
                    return inv(
                        "resilience.nodes_down",
                        "nodes_down = 0".into(),
                        "give at least 1, or remove [resilience]",
                    );
                }
                let profiles = crate::predict::MCLOCK_RECOVERY_SHARES
                    .iter()
                    .map(|(p, _)| format!("\"{p}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                let share = match (r.recovery_share, &r.mclock_profile) {
                    (Some(s), None) => s,
                    (None, Some(p)) => match crate::predict::mclock_recovery_share(p) {
                        Some(s) => s,
                        None => {
                            return inv(
                                "resilience.mclock_profile",
                                format!("unknown mClock profile \"{p}\""),
                                format!("use one of {profiles}, or give recovery_share"),
                            )
                        }
                    },
                    _ => {
                        return inv(
                            "resilience",
                            "give the recovery share once".into(),
                            format!("set exactly one of `recovery_share = 0.3` or `mclock_profile` ({profiles})"),
                        )
                    }
                };
                if !(share.is_finite() && (0.0..=crate::spec::MAX_RECOVERY_SHARE).contains(&share))
                {
                    return inv(
                        "resilience.recovery_share",
                        format!("recovery_share = {share}"),
                        "give 0 ≤ share ≤ 0.9, e.g. 0.3",
                    );
                }
                if let Some(h) = r.max_recovery_hours {
                    if !(h.is_finite() && h > 0.0) {
                        return inv(
                            "resilience.max_recovery_hours",
                            format!("max_recovery_hours = {h}"),
                            "give a positive number of hours, or leave it out",
                        );
                    }
                }
                if r.nodes_down >= nr.max {
                    return inv(
                        "resilience.nodes_down",
                        format!("{} nodes down with at most {} nodes", r.nodes_down, nr.max),
                        "raise constraints.nodes.max or lower nodes_down",
                    );
                }
                Some(Resilience {
                    nodes_down: r.nodes_down,
                    recovery_share: share,
                    max_recovery_secs: r.max_recovery_hours.map(|h| h * 3600.0),
                })
            }
        };
        if p.failure_domain == FailureDomain::Host {
            let down = resilience.map_or(0, |r| r.nodes_down);
            let narrowest = protections.iter().map(|&x| width(x)).min().unwrap_or(1);
            if nr.max < narrowest + down {
                return inv(
                    "constraints.nodes.max",
                    format!(
                        "max = {} nodes, but the narrowest protection needs {narrowest} hosts{}",
                        nr.max,
                        if down > 0 {
                            format!(" plus {down} down")
                        } else {
                            String::new()
                        }
                    ),
                    "raise constraints.nodes.max or choose a narrower protection scheme",
                );
            }
        }

        // Capacity reachable at all?
        let best_eff = protections
            .iter()
            .map(|x| x.efficiency())
            .fold(0.0, f64::max);
        let biggest = drives
            .iter()
            .map(|(_, d)| d.capacity.0 as f64)
            .fold(0.0, f64::max);
        let slots = cn
            .drives_per_node
            .map_or(max_slots, |r| r.max.min(max_slots));
        let most = f64::from(nr.max) * f64::from(slots) * biggest * best_eff * c.fill_limit;
        if most < usable_needed_bytes {
            return inv(
                "capacity",
                format!(
                    "impossible capacity: {:.1} TB usable (growth included) needed, but at most {:.1} TB fits ({} nodes × {slots} drives × {:.2} TB, efficiency {:.2}, fill {:.2})",
                    usable_needed_bytes / 1e12,
                    most / 1e12,
                    nr.max,
                    biggest / 1e12,
                    best_eff,
                    c.fill_limit
                ),
                "raise constraints.nodes.max, allow larger drives or more drive slots, choose a more efficient protection, or lower the capacity",
            );
        }

        // Workloads.
        if self.workloads.is_empty() {
            return inv(
                "workload",
                "no workload".into(),
                "add at least one [[workload]] with its target",
            );
        }
        let mut workloads = Vec::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let at = format!("workload[{i}]");
            if self.workloads[..i].iter().any(|o| o.name == w.name) {
                return inv(
                    format!("{at}.name"),
                    format!("workload \"{}\" is listed twice", w.name),
                    "give each workload its own name",
                );
            }
            if w.name.trim().is_empty() {
                return inv(
                    format!("{at}.name"),
                    "empty name".into(),
                    "name the workload",
                );
            }
            for (f, v) in [
                ("images", w.images),
                ("jobs_per_image", w.jobs_per_image),
                ("iodepth", w.iodepth),
                ("clients", w.clients),
            ] {
                if v == 0 {
                    return inv(format!("{at}.{f}"), format!("{f} = 0"), "must be ≥ 1");
                }
            }
            if let Some(size) = w.image_size {
                let span = f64::from(w.images) * size.0 as f64;
                if span > usable_needed_bytes {
                    return inv(
                        format!("{at}.image_size"),
                        format!(
                            "{} images × {size} span {:.1} TB, more than the {:.1} TB the cluster holds (capacity, growth included)",
                            w.images,
                            span / 1e12,
                            usable_needed_bytes / 1e12
                        ),
                        "give the span of each image the workload covers (its working set), or raise capacity.usable_tb",
                    );
                }
            }
            if w.colocated && w.clients > nr.max {
                return inv(
                    format!("{at}.clients"),
                    format!(
                        "{} co-located clients but at most {} nodes",
                        w.clients, nr.max
                    ),
                    "co-located clients run on OSD nodes: at most constraints.nodes.max",
                );
            }
            let client_cpu = match (&w.client_cpu, w.colocated) {
                (Some(n), _) => {
                    if cat.cpu(n).is_none() {
                        return Err((
                            format!("{at}.client_cpu"),
                            SpecErrorKind::UnknownName {
                                section: "cpu",
                                name: n.clone(),
                                closest: closest(n, cat.cpu.keys()),
                            },
                        ));
                    }
                    Some(crate::spec::HwRef::Name(n.clone()))
                }
                (None, true) => None,
                (None, false) => {
                    return inv(
                        format!("{at}.client_cpu"),
                        "no client CPU".into(),
                        "give client_cpu (a catalogue name), or set colocated = true",
                    )
                }
            };
            if !w.colocated && w.client_nic.is_none() {
                return inv(
                    format!("{at}.client_nic"),
                    "no client NIC".into(),
                    "give client_nic, e.g. \"25Gb/s\", or set colocated = true",
                );
            }
            let t = &w.target;
            let target = Target {
                iops_min: t.iops_min,
                bandwidth_bytes_per_sec_min: t.bandwidth_gb_per_sec_min.map(|g| g * 1e9),
                latency_mean_max_secs: t.latency_mean_max.map(|s| s.0),
                latency_p99_max_secs: t.latency_p99_max.map(|s| s.0),
            };
            if target.iops_min.is_none()
                && target.bandwidth_bytes_per_sec_min.is_none()
                && target.latency_mean_max_secs.is_none()
                && target.latency_p99_max_secs.is_none()
            {
                return inv(
                    format!("{at}.target"),
                    "no target".into(),
                    "give at least one of iops_min, bandwidth_gb_per_sec_min, latency_mean_max, latency_p99_max",
                );
            }
            for (f, v) in [
                ("iops_min", target.iops_min),
                ("bandwidth_gb_per_sec_min", t.bandwidth_gb_per_sec_min),
                ("latency_mean_max", target.latency_mean_max_secs),
                ("latency_p99_max", target.latency_p99_max_secs),
            ] {
                if let Some(v) = v {
                    if !(v.is_finite() && v > 0.0) {
                        return inv(
                            format!("{at}.target.{f}"),
                            format!("{f} = {v}"),
                            "give a positive target, or leave it out",
                        );
                    }
                }
            }
            if let (Some(mean), Some(p99)) =
                (target.latency_mean_max_secs, target.latency_p99_max_secs)
            {
                if p99 < mean {
                    return inv(
                        format!("{at}.target.latency_p99_max"),
                        format!(
                            "latency_p99_max = {} ms is below latency_mean_max = {} ms, but a p99 is never below the mean it comes with",
                            ms4(p99),
                            ms4(mean)
                        ),
                        "raise latency_p99_max above the mean target (a p99 is usually 2-10× the mean), lower latency_mean_max, or give only one of them",
                    );
                }
            }
            let req = WorkloadRequirement {
                name: w.name.clone(),
                workload: crate::spec::WorkloadSpec {
                    images: w.images,
                    jobs_per_image: w.jobs_per_image,
                    iodepth: w.iodepth,
                    block_size: w.block_size,
                    pattern: w.pattern,
                    read_percent: w.read_percent,
                    image_size: w.image_size,
                    engine: crate::spec::Engine::FioRbd,
                    object_size: None,
                    concurrency: None,
                },
                clients: crate::spec::ClientsSpec {
                    nodes: w.clients,
                    cpu: client_cpu,
                    sockets: w.client_sockets,
                    nic: w.client_nic,
                    colocated: w.colocated,
                },
                target,
            };
            // The workload and client fields as a scenario checks them (read share, block
            // size, in-flight limit), on the first allowed hardware at the most nodes.
            let probe = crate::design::scenario_spec_of(
                &self.name,
                &self.ceph_release,
                self.osds_per_device,
                self.osd_memory_target,
                &crate::design::PartChoice {
                    cpu: cpus[0].0.clone(),
                    sockets: sockets[0].min(max_chassis_sockets),
                    drive: drives[0].0.clone(),
                    drives_per_node: 1,
                    nic: nics[0].0.clone(),
                    nic_speed: nics[0].1.speed,
                    nic_ports: nics[0].1.ports,
                    nodes: nr.max,
                    protection: Protection::Replicated { size: 1 },
                    failure_domain: p.failure_domain,
                },
                &req,
                None,
            );
            if let Err(e) = probe.validate(cat) {
                let field = e
                    .field
                    .strip_prefix("workload.")
                    .or_else(|| e.field.strip_prefix("clients."))
                    .map_or(at.clone(), |f| format!("{at}.{f}"));
                return Err((field, *e.kind));
            }
            workloads.push(req);
        }

        Ok(Requirements {
            name: self.name.clone(),
            ceph_release: self.ceph_release.clone(),
            osds_per_device: self.osds_per_device,
            check_at: self.check_at,
            osd_memory_target: self.osd_memory_target,
            usable_needed_bytes,
            fill_limit: c.fill_limit,
            workloads,
            protections,
            failure_domain: p.failure_domain,
            resilience,
            cpus,
            drives,
            nics,
            sockets,
            drives_per_node: cn.drives_per_node,
            nodes: nr,
            max_rack_units: cn.max_rack_units,
            max_power_watts: cn.max_power_watts,
            chassis: cn.chassis.clone(),
            catalogue: cat.clone(),
            inline_parts: self.parts.clone(),
        })
    }
}

/// Parses and validates requirements text; errors carry `origin`, line, column and field.
pub fn parse_requirements(
    text: &str,
    origin: &str,
    cat: &Catalogue,
) -> Result<Requirements, SpecError> {
    let spec = RequirementsSpec::parse(text, origin)?;
    spec.validate(cat).map_err(|e| {
        // `workload[1].image_size` is located in the second [[workload]] table,
        // `constraints.cpus[2]` at the third name of the list.
        let path: Vec<&str> = e.field.split('.').collect();
        let mut err = error_at(text, origin, &path, e.field.clone(), *e.kind);
        if err.line.is_none() {
            err.origin = origin.to_string();
        }
        err
    })
}

/// Reads, parses and validates a requirements file.
pub fn load_requirements(
    path: &std::path::Path,
    cat: &Catalogue,
) -> Result<Requirements, SpecError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError {
        origin: origin.clone(),
        line: None,
        column: None,
        field: String::new(),
        kind: Box::new(SpecErrorKind::Io(format!(
            "{e}; {}",
            crate::io::read_remedy(&e)
        ))),
    })?;
    parse_requirements(&text, &origin, cat)
}
