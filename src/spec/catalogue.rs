//! The hardware catalogue: named CPUs, drives and NICs with their spec-sheet figures and
//! the source of every figure (`models/catalogue.toml`, embedded in the binary, or a user
//! file of the same format).
//!
//! Not here: how hardware behaves under Ceph (that is `model` and `qn::ceph`); this module
//! only stores what datasheets say.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{SpecError, SpecErrorKind};
use crate::units::{BitsPerSec, Bytes, Secs};

/// The catalogue shipped in the binary.
const BUILTIN: &str = include_str!("../../models/catalogue.toml");

/// Processor architecture; the model carries a per-architecture efficiency factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    X86_64,
    Aarch64,
    /// 32-bit Arm (ARMv7-A, e.g. Cortex-A9 microservers).
    Armv7,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
            Arch::Armv7 => "armv7",
        }
    }
}

/// Kind of storage device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriveKind {
    Nvme,
    SataSsd,
    SasSsd,
    Optane,
    Hdd,
}

/// A CPU microarchitecture (core generation). The model carries a per-core efficiency per
/// generation (`uarch_efficiency.<name>`, [`Uarch::as_str`]); a CPU without one takes its
/// instruction set's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Uarch {
    Sandybridge,
    Ivybridge,
    Haswell,
    Broadwell,
    SkylakeSp,
    Cascadelake,
    IcelakeSp,
    Sapphirerapids,
    Zen,
    Zen2,
    Zen3,
    Zen4,
    Zen5,
    Emeraldrapids,
    Graniterapids,
    NeoverseN1,
    NeoverseN2,
    NeoverseV1,
    NeoverseV2,
    Other,
}

impl Uarch {
    pub const ALL: [Uarch; 20] = [
        Uarch::Sandybridge,
        Uarch::Ivybridge,
        Uarch::Haswell,
        Uarch::Broadwell,
        Uarch::SkylakeSp,
        Uarch::Cascadelake,
        Uarch::IcelakeSp,
        Uarch::Sapphirerapids,
        Uarch::Zen,
        Uarch::Zen2,
        Uarch::Zen3,
        Uarch::Zen4,
        Uarch::Zen5,
        Uarch::Emeraldrapids,
        Uarch::Graniterapids,
        Uarch::NeoverseN1,
        Uarch::NeoverseN2,
        Uarch::NeoverseV1,
        Uarch::NeoverseV2,
        Uarch::Other,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Uarch::Sandybridge => "sandybridge",
            Uarch::Ivybridge => "ivybridge",
            Uarch::Haswell => "haswell",
            Uarch::Broadwell => "broadwell",
            Uarch::SkylakeSp => "skylake-sp",
            Uarch::Cascadelake => "cascadelake",
            Uarch::IcelakeSp => "icelake-sp",
            Uarch::Sapphirerapids => "sapphirerapids",
            Uarch::Zen => "zen",
            Uarch::Zen2 => "zen2",
            Uarch::Zen3 => "zen3",
            Uarch::Zen4 => "zen4",
            Uarch::Zen5 => "zen5",
            Uarch::Emeraldrapids => "emeraldrapids",
            Uarch::Graniterapids => "graniterapids",
            Uarch::NeoverseN1 => "neoverse-n1",
            Uarch::NeoverseN2 => "neoverse-n2",
            Uarch::NeoverseV1 => "neoverse-v1",
            Uarch::NeoverseV2 => "neoverse-v2",
            Uarch::Other => "other",
        }
    }

    /// The instruction set a core of this generation runs; `None` for `Other`. Intel's
    /// and AMD's generations are x86-64 cores; Arm's Neoverse cores are Armv8-A (N1, V1)
    /// and Armv9-A (N2, V2) server cores, which run a 64-bit (AArch64) operating system.
    pub fn arch(self) -> Option<Arch> {
        match self {
            Uarch::NeoverseN1 | Uarch::NeoverseN2 | Uarch::NeoverseV1 | Uarch::NeoverseV2 => {
                Some(Arch::Aarch64)
            }
            Uarch::Other => None,
            _ => Some(Arch::X86_64),
        }
    }
}

/// A CPU model (figures per socket).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuEntry {
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub model: String,
    pub arch: Arch,
    /// Core microarchitecture; absent = unknown (the model uses the instruction set's
    /// efficiency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uarch: Option<Uarch>,
    pub cores: u32,
    pub threads_per_core: u32,
    pub ghz: f64,
    #[serde(default)]
    pub tdp_watts: Option<f64>,
    #[serde(default)]
    pub source: String,
}

/// A drive model: spec-sheet 4k IOPS, sequential bandwidth and latencies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveEntry {
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub model: String,
    pub kind: DriveKind,
    /// Bytes: a count, or "3.84TB" (decimal, as datasheets write it) or "3.5TiB" (binary);
    /// a one-letter suffix ("2T") is refused as ambiguous. Written back as a byte count.
    #[serde(
        deserialize_with = "crate::units::drive_capacity",
        serialize_with = "crate::units::bytes_as_integer"
    )]
    pub capacity: Bytes,
    pub read_4k_iops: f64,
    pub write_4k_iops: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    pub read_latency: Secs,
    pub write_latency: Secs,
    #[serde(default)]
    pub sync_write_4k_iops: Option<f64>,
    /// Queue depth at which the 4k IOPS figures hold: 1 for a figure derived from one
    /// I/O's seek and rotation (a disk with no random-IOPS datasheet figure), absent for a
    /// datasheet rate, taken as the drive's rate at every depth. A hard disk's figure at
    /// depth 1 is raised at depth by command queueing (`qn::ceph`, "Disk reordering").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_queue_depth: Option<u32>,
    /// Active power from the datasheet (typical or maximum, as the source says), watts;
    /// absent = no figure was read, and `design` refuses power objectives for the drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_watts: Option<f64>,
    #[serde(default)]
    pub source: String,
}

/// A network interface model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicEntry {
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub model: String,
    pub speed: BitsPerSec,
    #[serde(default = "one")]
    pub ports: u32,
    /// Typical power of the card from its datasheet, watts; absent = no figure was read
    /// (`design` then refuses power objectives for it). The IEEE rate entries name no card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_watts: Option<f64>,
    #[serde(default)]
    pub source: String,
}

fn one() -> u32 {
    1
}

/// The catalogue file format.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub schema_version: u32,
    #[serde(default)]
    pub cpu: BTreeMap<String, CpuEntry>,
    #[serde(default)]
    pub drive: BTreeMap<String, DriveEntry>,
    #[serde(default)]
    pub nic: BTreeMap<String, NicEntry>,
}

/// The catalogue format version this build reads.
pub const CATALOGUE_SCHEMA_VERSION: u32 = 1;

impl Catalogue {
    /// The catalogue embedded in the binary (`models/catalogue.toml`).
    pub fn builtin() -> Self {
        Self::parse(BUILTIN, "models/catalogue.toml (built in)")
            .expect("the built-in catalogue is valid (checked by a unit test)")
    }

    /// Loads a catalogue file.
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            origin: path.display().to_string(),
            line: None,
            column: None,
            field: String::new(),
            kind: Box::new(SpecErrorKind::Io(format!(
                "{e}; {}",
                crate::io::read_remedy(&e)
            ))),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates catalogue text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SpecError> {
        let cat: Catalogue = toml::from_str(text)
            .map_err(|e| super::toml_error_in(text, origin, &e, super::FileKind::Catalogue))?;
        let at = |field: String, kind: SpecErrorKind| {
            let path: Vec<&str> = field.split('.').collect();
            super::error_at(text, origin, &path, field.clone(), kind)
        };
        if cat.schema_version != CATALOGUE_SCHEMA_VERSION {
            return Err(at(
                "schema_version".into(),
                SpecErrorKind::Invalid {
                    problem: format!("schema_version {} is not supported", cat.schema_version),
                    fix: format!("set schema_version = {CATALOGUE_SCHEMA_VERSION}"),
                },
            ));
        }
        for (name, c) in &cat.cpu {
            c.check(&format!("cpu.{name}")).map_err(|(f, k)| at(f, k))?;
        }
        for (name, d) in &cat.drive {
            d.check(&format!("drive.{name}"))
                .map_err(|(f, k)| at(f, k))?;
        }
        for (name, n) in &cat.nic {
            if let Some(w) = n.power_watts {
                positive(format!("nic.{name}.power_watts"), w, "power_watts")
                    .map_err(|(f, k)| at(f, k))?;
            }
            if !super::LINK_BITS_PER_SEC_RANGE.contains(&n.speed.0) {
                return Err(at(
                    format!("nic.{name}.speed"),
                    SpecErrorKind::Invalid {
                        problem: format!("a link of {:e} bit/s", n.speed.0),
                        fix:
                            "give the port's speed from 1Mb/s to 100Tb/s, in bits, e.g. \"25Gb/s\""
                                .into(),
                    },
                ));
            }
            if n.ports == 0 {
                return Err(at(
                    format!("nic.{name}.ports"),
                    SpecErrorKind::Invalid {
                        problem: "ports = 0".into(),
                        fix: "a NIC has at least one port".into(),
                    },
                ));
            }
        }
        Ok(cat)
    }

    pub fn cpu(&self, name: &str) -> Option<&CpuEntry> {
        self.cpu.get(name)
    }
    pub fn drive(&self, name: &str) -> Option<&DriveEntry> {
        self.drive.get(name)
    }
    pub fn nic(&self, name: &str) -> Option<&NicEntry> {
        self.nic.get(name)
    }
}

type CheckError = (String, SpecErrorKind);

fn positive(field: String, v: f64, what: &str) -> Result<(), CheckError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err((
            field,
            SpecErrorKind::Invalid {
                problem: format!("{what} is {v}"),
                fix: format!("{what} must be a positive number from the datasheet"),
            },
        ))
    }
}

/// A drive figure within the span of real devices: at least `lo`, at most `hi` (a figure
/// outside is a unit slip, e.g. bytes for megabytes, or hours for milliseconds, whose
/// prediction would be IOPS 0 or a solver failure that names no field).
fn within(
    field: String,
    v: f64,
    lo: f64,
    hi: f64,
    what: &str,
    span: &str,
) -> Result<(), CheckError> {
    positive(field.clone(), v, what)?;
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err((
            field,
            SpecErrorKind::Invalid {
                problem: format!("{what} is {v}, outside what any storage device does"),
                fix: format!("give the datasheet's {what} ({span}); check its unit"),
            },
        ))
    }
}

/// The most cores per socket a CPU entry takes (server CPUs have under 300; beyond 1,024 the
/// figure is a slip, and the prediction would be of a machine that does not exist).
pub const MAX_CORES_PER_SOCKET: u32 = 1024;
/// The span of drive capacities taken, bytes: 1 GB to 1 PB (the largest drives hold ~0.1 PB).
pub const DRIVE_CAPACITY_RANGE: std::ops::RangeInclusive<f64> = 1e9..=1e15;
/// The most 4k IOPS a drive entry takes (10⁸: 30× the fastest NVMe devices).
pub const MAX_DRIVE_IOPS: f64 = 1e8;
/// The most bytes per second a drive entry takes (10¹² B/s = 1 TB/s, 50× the fastest NVMe
/// devices; room for an idealised device in a what-if).
pub const MAX_DRIVE_BYTES_PER_SEC: f64 = 1e12;

/// The slowest clock a CPU entry takes, GHz (10 MHz: a slower one is a unit slip, whose
/// prediction would be IOPS 0 or a solver failure).
pub const MIN_CPU_GHZ: f64 = 0.01;

impl CpuEntry {
    /// Checks that the figures describe possible hardware; `at` is the field path prefix.
    pub(crate) fn check(&self, at: &str) -> Result<(), CheckError> {
        if self.cores == 0 || self.cores > MAX_CORES_PER_SOCKET {
            return Err((
                format!("{at}.cores"),
                SpecErrorKind::Invalid {
                    problem: format!("cores = {}", self.cores),
                    fix: "give the physical core count per socket, 1 to 1,024 (the largest server CPUs have under 300)".into(),
                },
            ));
        }
        if self.threads_per_core == 0 || self.threads_per_core > 8 {
            return Err((
                format!("{at}.threads_per_core"),
                SpecErrorKind::Invalid {
                    problem: format!("threads_per_core = {}", self.threads_per_core),
                    fix: "use 1 (no SMT) or 2 (SMT/Hyper-Threading); at most 8".into(),
                },
            ));
        }
        if let Some(core_arch) = self.uarch.and_then(Uarch::arch) {
            if core_arch != self.arch {
                let uarch = self.uarch.map_or("", |u| u.as_str());
                let same: Vec<&str> = Uarch::ALL
                    .iter()
                    .filter(|u| u.arch() == Some(self.arch))
                    .map(|u| u.as_str())
                    .collect();
                return Err((
                    format!("{at}.uarch"),
                    SpecErrorKind::Invalid {
                        problem: format!(
                            "uarch = \"{uarch}\" is an {} core but arch = \"{}\"",
                            core_arch.as_str(),
                            self.arch.as_str()
                        ),
                        fix: format!(
                            "set arch = \"{}\" for a {uarch} CPU, or a uarch of the {} generations ({}), or \"other\"",
                            core_arch.as_str(),
                            self.arch.as_str(),
                            if same.is_empty() { "none known".to_string() } else { same.join(", ") }
                        ),
                    },
                ));
            }
        }
        if !(self.ghz.is_finite() && self.ghz >= MIN_CPU_GHZ && self.ghz <= 10.0) {
            return Err((
                format!("{at}.ghz"),
                SpecErrorKind::Invalid {
                    problem: format!("ghz = {}", self.ghz),
                    fix: "give the clock in GHz, from 0.01 to 10 (e.g. 3.0)".into(),
                },
            ));
        }
        Ok(())
    }
}

impl DriveEntry {
    pub(crate) fn check(&self, at: &str) -> Result<(), CheckError> {
        for (f, v) in [
            ("read_4k_iops", Some(self.read_4k_iops)),
            ("write_4k_iops", Some(self.write_4k_iops)),
            ("sync_write_4k_iops", self.sync_write_4k_iops),
        ] {
            if let Some(v) = v {
                within(
                    format!("{at}.{f}"),
                    v,
                    0.0,
                    MAX_DRIVE_IOPS,
                    f,
                    "4k operations per second, above 0 and at most 10⁸ (the fastest NVMe devices do about 3×10⁶)",
                )?;
            }
        }
        // Bandwidth from 100 kB/s, latency up to 10 s: the span of real devices, with
        // room for a degraded prediction's scaling (at most a tenth of each kept); up to
        // 10¹² B/s for an idealised device in a what-if.
        for (f, v) in [
            ("read_bytes_per_sec", self.read_bytes_per_sec),
            ("write_bytes_per_sec", self.write_bytes_per_sec),
        ] {
            within(
                format!("{at}.{f}"),
                v,
                1e5,
                MAX_DRIVE_BYTES_PER_SEC,
                f,
                "bytes per second, from 100,000 to 10¹² (an idealised device); a datasheet's MB/s × 1,000,000",
            )?;
        }
        for (f, v) in [
            ("read_latency", self.read_latency.0),
            ("write_latency", self.write_latency.0),
        ] {
            within(
                format!("{at}.{f}"),
                v,
                0.0,
                10.0,
                f,
                "a duration up to 10 s, e.g. \"80us\" or \"4ms\"",
            )?;
        }
        if !DRIVE_CAPACITY_RANGE.contains(&(self.capacity.0 as f64)) {
            return Err((
                format!("{at}.capacity"),
                SpecErrorKind::Invalid {
                    problem: format!("capacity is {} bytes, outside what any storage device holds", self.capacity.0),
                    fix: "give the datasheet's capacity, from 1 GB to 1 PB: e.g. \"3.84TB\" (decimal, as datasheets write it), \"960GB\" or 3840000000000 bytes".into(),
                },
            ));
        }
        if self.iops_queue_depth == Some(0) {
            return Err((
                format!("{at}.iops_queue_depth"),
                SpecErrorKind::Invalid {
                    problem: "iops_queue_depth is 0".into(),
                    fix: "write 1 when the IOPS figures are derived from one I/O's latency, or leave iops_queue_depth out for a datasheet rate".into(),
                },
            ));
        }
        if let Some(w) = self.power_watts {
            positive(format!("{at}.power_watts"), w, "power_watts")?;
        }
        Ok(())
    }
}

/// Up to three names closest to `wanted` (edit distance), for "did you mean" hints.
pub fn closest<'a>(wanted: &str, names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut scored: Vec<(usize, &String)> = names
        .map(|n| {
            let d = levenshtein(wanted, n);
            // Substring matches ("7500" in "micron-7500-pro-15.36tb") rank first.
            let d = if n.contains(wanted) || wanted.contains(n.as_str()) {
                0
            } else {
                d
            };
            (d, n)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures outside what any device or CPU does are refused naming the field (session
    /// 52's audit: 1 B/s, a 15 h write latency and 10⁻⁹ GHz were predicted as IOPS 0 or
    /// failed in the solver naming no field); the built-in catalogue's own entries pass.
    #[test]
    fn figures_beyond_any_device_are_refused_naming_the_field() {
        let cat = Catalogue::builtin();
        let (name, d) = cat.drive.iter().next().unwrap();
        for (field, edit) in [
            (
                "write_bytes_per_sec",
                (|d: &mut DriveEntry| d.write_bytes_per_sec = 1.0) as fn(&mut DriveEntry),
            ),
            ("read_latency", |d: &mut DriveEntry| {
                d.read_latency = crate::units::Secs(54_000.0)
            }),
        ] {
            let mut bad = d.clone();
            edit(&mut bad);
            let (f, _) = bad.check(&format!("drive.{name}")).unwrap_err();
            assert_eq!(f, format!("drive.{name}.{field}"));
        }
        let (cname, c) = cat.cpu.iter().next().unwrap();
        let mut slow = c.clone();
        slow.ghz = 1e-9;
        assert_eq!(
            slow.check(&format!("cpu.{cname}")).unwrap_err().0,
            format!("cpu.{cname}.ghz")
        );
        for (n, d) in &cat.drive {
            d.check(n).unwrap();
        }
    }

    #[test]
    fn builtin_catalogue_parses_and_every_entry_has_a_source() {
        let c = Catalogue::builtin();
        assert!(!c.cpu.is_empty() && !c.drive.is_empty());
        for (n, e) in &c.cpu {
            assert!(!e.source.is_empty(), "cpu {n} has no source");
        }
        for (n, e) in &c.drive {
            assert!(!e.source.is_empty(), "drive {n} has no source");
        }
    }

    /// Every power figure `design` adds up is traceable: a drive or NIC `power_watts`
    /// appears in its entry's `source` as "power_watts = <value>" next to the cited
    /// document, and a CPU `tdp_watts` appears there as "<value> W".
    #[test]
    fn every_power_figure_names_its_source() {
        let c = Catalogue::builtin();
        // A cited document: a web address, or a named repository's file ("…, file <path>").
        let cited = |source: &str| source.contains("://") || source.contains(", file ");
        let mut figures = 0;
        for (n, e) in &c.drive {
            if let Some(w) = e.power_watts {
                figures += 1;
                assert!(
                    e.source.contains(&format!("power_watts = {w}")) && cited(&e.source),
                    "drive {n}: power_watts = {w} is not quoted with a document in its source"
                );
            }
        }
        for (n, e) in &c.nic {
            if let Some(w) = e.power_watts {
                figures += 1;
                assert!(
                    e.source.contains(&format!("power_watts = {w}")) && cited(&e.source),
                    "nic {n}: power_watts = {w} is not quoted with a document in its source"
                );
            }
        }
        for (n, e) in &c.cpu {
            if let Some(w) = e.tdp_watts {
                figures += 1;
                assert!(
                    e.source.contains(&format!("{w} W")) && cited(&e.source),
                    "cpu {n}: tdp_watts = {w} does not appear as \"{w} W\" in its source"
                );
            }
        }
        // The test checks something: the catalogue carries power figures.
        assert!(figures > 0);
    }

    /// Every generation's instruction set matches the catalogue's CPUs of that generation,
    /// and a CPU whose `uarch` runs another instruction set than its `arch` is refused,
    /// naming the field and the generations that fit.
    #[test]
    fn a_cpu_whose_generation_runs_another_instruction_set_is_refused() {
        for (n, e) in &Catalogue::builtin().cpu {
            assert!(e.check(n).is_ok(), "catalogue cpu {n} fails its own check");
        }
        let cpu = |arch, uarch| CpuEntry {
            vendor: String::new(),
            model: String::new(),
            arch,
            uarch: Some(uarch),
            cores: 64,
            threads_per_core: 1,
            ghz: 3.0,
            tdp_watts: None,
            source: String::new(),
        };
        let (field, kind) = cpu(Arch::X86_64, Uarch::NeoverseV2)
            .check("cluster.node.cpu")
            .unwrap_err();
        assert_eq!(field, "cluster.node.cpu.uarch");
        let text = format!("{kind:?}");
        assert!(
            text.contains("aarch64 core")
                && text.contains("set arch = \\\"aarch64\\\"")
                && text.contains("zen5"),
            "{text}"
        );
        assert!(cpu(Arch::Aarch64, Uarch::Zen4).check("c").is_err());
        assert!(cpu(Arch::Armv7, Uarch::NeoverseN1).check("c").is_err());
        assert!(cpu(Arch::Aarch64, Uarch::NeoverseN1).check("c").is_ok());
        assert!(cpu(Arch::Armv7, Uarch::Other).check("c").is_ok());
        assert!(cpu(Arch::X86_64, Uarch::Zen5).check("c").is_ok());
    }

    #[test]
    fn closest_names_rank_substrings_and_small_edits_first() {
        let names: Vec<String> = [
            "amd-epyc-7402",
            "micron-7500-pro-15.36tb",
            "intel-xeon-8180",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(closest("amd-epyc-7420", names.iter())[0], "amd-epyc-7402");
        assert_eq!(
            closest("micron-7500", names.iter())[0],
            "micron-7500-pro-15.36tb"
        );
    }
}
