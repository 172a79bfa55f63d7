//! What users write: the scenario file (cluster, hardware, pool, clients, workload) and the
//! hardware catalogue, parsed with serde and validated into a [`Scenario`] whose hardware is
//! resolved into concrete datasheet numbers.
//!
//! Errors ([`SpecError`]) name the file, the line and column, the field path
//! (`cluster.node.data_devices.count`) and the fix. This module does no modelling: how the
//! hardware behaves under Ceph is `model` + `qn::ceph`.
//!
//! Flow: text ──serde──► [`ScenarioSpec`] (editable, serialisable: the GUI edits it and
//! re-validates; calibration overrides its workload) ──[`ScenarioSpec::validate`]──►
//! [`Scenario`].

use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use crate::units::{BitsPerSec, Bytes};

pub mod catalogue;
pub mod class;
pub mod release;

pub use catalogue::{Arch, Catalogue, CpuEntry, DriveEntry, DriveKind, NicEntry, Uarch};
pub use class::RunClass;
pub use release::{
    Balancer, CephConfig, CephConfigSpec, CephVersion, RocksdbBuild,
    OSD_MEMORY_TARGET_DEFAULT_BYTES,
};

/// The scenario format version this build reads.
pub const SCENARIO_SCHEMA_VERSION: u32 = 1;

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// What went wrong, with the remedy.
/// The largest cluster cephplan models (OSDs in all nodes).
pub const MAX_OSDS: u64 = 100_000;
/// The most client nodes a scenario takes (beyond, most would run nothing: a slip).
pub const MAX_CLIENT_NODES: u32 = 100_000;
/// The most memory an OSD node is described with, GiB (64 TiB).
pub const MAX_MEMORY_GIB: f64 = 65_536.0;
/// `mon_max_pg_per_osd`'s default: 250 since ceph/ceph PR #23251 (backported to Mimic
/// 13.2.2 and Luminous, PRs #23861, #23862); 200 when Luminous 12.2.1 introduced the limit.
/// `ceph osd pool create` refuses a pool whose PG copies per OSD exceed it.
pub const MON_MAX_PG_PER_OSD_DEFAULT: u32 = 250;

/// A byte count in decimal units ("368 TB"), as capacities are quoted.
fn decimal_bytes(b: f64) -> String {
    let (d, u) = [
        (1e15, "PB"),
        (1e12, "TB"),
        (1e9, "GB"),
        (1e6, "MB"),
        (1e3, "kB"),
    ]
    .into_iter()
    .find(|&(d, _)| b >= d)
    .unwrap_or((1.0, "B"));
    format!("{} {u}", round3(b / d))
}

/// Three significant decimals at most, for figures in messages.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
/// The largest block size (1 GiB; fio and RBD take larger ones, but no RBD workload that
/// this model describes does).
pub const MAX_BLOCK_SIZE_BYTES: u64 = 1 << 30;
/// Link rates a scenario may give (1 Mb/s to 100 Tb/s): outside, the value is a unit typo.
pub const LINK_BITS_PER_SEC_RANGE: std::ops::RangeInclusive<f64> = 1e6..=1e14;

#[derive(Debug, Clone, PartialEq)]
pub enum SpecErrorKind {
    /// The file could not be read.
    Io(String),
    /// TOML syntax or type error (message from the parser, fix from us).
    Syntax { message: String, fix: String },
    /// A value that parses but is impossible or inconsistent.
    Invalid { problem: String, fix: String },
    /// A catalogue name that does not exist.
    UnknownName {
        section: &'static str,
        name: String,
        closest: Vec<String>,
    },
}

/// A scenario or catalogue error located in its file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct SpecError {
    /// File path (or a description such as "GUI editor").
    pub origin: String,
    /// 1-based line, when the text is known.
    pub line: Option<usize>,
    /// 1-based column (in characters), when the text is known.
    pub column: Option<usize>,
    /// Dotted field path, e.g. `cluster.node.data_devices.count` (empty for file errors).
    pub field: String,
    /// Boxed to keep `Result<_, SpecError>` small.
    pub kind: Box<SpecErrorKind>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        match self.kind.as_ref() {
            SpecErrorKind::Io(e) => write!(f, ": cannot read the file: {e}"),
            SpecErrorKind::Syntax { message, fix } => write!(f, ": {message}; fix: {fix}"),
            SpecErrorKind::Invalid { problem, fix } => write!(f, ": {problem}; fix: {fix}"),
            SpecErrorKind::UnknownName {
                section,
                name,
                closest,
            } => {
                write!(f, ": unknown {section} \"{name}\" in the catalogue; fix: ")?;
                if closest.is_empty() {
                    write!(
                        f,
                        "the catalogue has no {section} entries; describe the hardware inline"
                    )
                } else {
                    write!(
                        f,
                        "use a catalogue name (closest: {}) or describe the hardware inline",
                        closest.join(", ")
                    )
                }
            }
        }
    }
}

/// 1-based (line, column) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// Splits a dotted TOML key (`a."b.c".d`) into its parts.
fn split_dotted(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in key.chars() {
        match ch {
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(ch),
        }
    }
    parts.push(cur.trim().to_string());
    parts
}

/// The dotted path of the key at byte `offset`: the enclosing `[section]` or
/// `[[array]]` header found by scanning back, then the innermost key (inline tables
/// included) covering the offset. An element of an array of tables is named with its index
/// (`workload[1].target.iops_min`): the count of its `[[header]]` lines up to the offset.
pub(crate) fn path_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let header = |line: &str| -> Option<Vec<String>> {
        let t = line.trim();
        let inner = t.strip_prefix("[[").or_else(|| t.strip_prefix('['))?;
        inner.split(']').next().map(split_dotted)
    };
    let keys: Vec<String> = text[..offset]
        .lines()
        .rev()
        .find_map(header)
        .unwrap_or_default();
    // `[[a.b]]` lines before the offset: the index of the element of array `a.b` it is in.
    let element = |prefix: &[String]| -> usize {
        text[..offset]
            .lines()
            .filter(|l| {
                let t = l.trim();
                t.starts_with("[[")
                    && t.strip_prefix("[[")
                        .and_then(|r| r.split(']').next())
                        .is_some_and(|h| split_dotted(h) == prefix)
            })
            .count()
            .saturating_sub(1)
    };
    let mut shown: Vec<String> = keys.clone();
    let Ok(root) = toml::de::DeTable::parse(text) else {
        return shown.join(".");
    };
    let mut table = root.get_ref();
    for (i, key) in keys.iter().enumerate() {
        let Some(v) = table
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == key.as_str())
            .map(|(_, v)| v.get_ref())
        else {
            return shown.join(".");
        };
        if let Some(t) = v.as_table() {
            table = t;
        } else if let Some(items) = v.as_array() {
            let at = element(&keys[..=i]);
            match items.get(at).and_then(|e| e.get_ref().as_table()) {
                Some(t) => {
                    shown[i] = format!("{key}[{at}]");
                    table = t;
                }
                None => return shown.join("."),
            }
        } else {
            return shown.join(".");
        }
    }
    let covers = |r: Range<usize>| r.start <= offset && offset < r.end.max(r.start + 1);
    let mut found = false;
    'walk: loop {
        for (k, v) in table.iter() {
            if covers(k.span()) || covers(v.span()) {
                shown.push(k.get_ref().to_string());
                found = true;
                if let Some(t) = v.get_ref().as_table() {
                    table = t;
                    continue 'walk;
                }
                break 'walk;
            }
        }
        break;
    }
    if !found {
        // An unknown key is not in any table span we walked: take it from the line itself.
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..];
        let line = line.lines().next().unwrap_or("");
        if let Some((k, _)) = line.split_once('=') {
            shown.extend(split_dotted(k.trim()));
        }
    }
    shown.join(".")
}

/// The dotted path of the table that starts at `offset`: a `[header]` (or `[[header]]`)
/// line there, else the key whose (inline) table value covers it ([`path_at`]).
fn table_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let line = text[offset..].lines().next().unwrap_or("").trim();
    if let Some(inner) = line.strip_prefix('[') {
        let inner = inner.trim_start_matches('[');
        if let Some(h) = inner.split(']').next() {
            return split_dotted(h).join(".");
        }
    }
    path_at(text, offset)
}

/// Span of the value at a dotted path, or of the deepest existing prefix.
fn span_of(text: &str, path: &[&str]) -> Option<Range<usize>> {
    let root = toml::de::DeTable::parse(text).ok()?;
    let mut table = root.get_ref();
    let mut best = None;
    for (i, key) in path.iter().enumerate() {
        // `workload[1]`: the second element of an array (of tables, or of values).
        let (name, index) = match key.strip_suffix(']').and_then(|k| k.split_once('[')) {
            Some((n, ix)) => (n, ix.parse::<usize>().ok()),
            None => (*key, None),
        };
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        let (k_span, v) = match (index, v.get_ref().as_array()) {
            (Some(ix), Some(items)) => match items.get(ix) {
                Some(item) => (item.span(), item),
                None => (k.span(), v),
            },
            _ => (k.span(), v),
        };
        // Tables declared with a [header] have the header as the key span; prefer it.
        best = Some(if v.get_ref().is_table() {
            k_span
        } else {
            v.span()
        });
        match v.get_ref().as_table() {
            Some(t) if i + 1 < path.len() => table = t,
            _ => break,
        }
    }
    best
}

pub(crate) fn error_at(
    text: &str,
    origin: &str,
    path: &[&str],
    field: String,
    kind: SpecErrorKind,
) -> SpecError {
    let (line, column) = match span_of(text, path) {
        Some(r) => {
            let (l, c) = line_col(text, r.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    SpecError {
        origin: origin.to_string(),
        line,
        column,
        field,
        kind: Box::new(kind),
    }
}

/// "field `a.b[1].c`: " for a TOML error located in a value of `text` (the key path at its
/// span, [`path_at`]), empty when it has no span or no path: the prefix that model and
/// network files put before TOML's message.
pub(crate) fn field_prefix(text: &str, e: &toml::de::Error) -> String {
    e.span()
        .map(|r| path_at(text, r.start))
        .filter(|f| !f.is_empty())
        .map_or(String::new(), |f| format!("field `{f}`: "))
}

/// The remedy for a value of the wrong type or range, from serde's "expected …" (None for
/// other messages): what to write instead, with the range of a whole number.
pub(crate) fn value_type_fix(message: &str) -> Option<String> {
    let expected = message.rsplit_once("expected ")?.1.trim_end_matches('.');
    let whole = |max: &str| {
        format!(
            "write a whole number of at most {max}, without a minus sign, quotes or a decimal point"
        )
    };
    Some(match expected {
        "u8" => whole("255"),
        "u16" => whole("65,535"),
        "u32" => whole("4,294,967,295"),
        "u64" | "usize" => whole("18,446,744,073,709,551,615"),
        "i8" | "i16" | "i32" | "i64" | "isize" => {
            "write a whole number without quotes or a decimal point".to_string()
        }
        "f64" | "f32" => "write a number without quotes (e.g. 2.5)".to_string(),
        "a boolean" => "write true or false, without quotes".to_string(),
        "a string" => "write the value in double quotes (e.g. \"4k\")".to_string(),
        "a sequence" => "write a list in brackets (e.g. [1, 2])".to_string(),
        _ => return None,
    })
}

pub(crate) fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> SpecError {
    toml_error_in(text, origin, e, FileKind::Scenario)
}

/// The kind of file a TOML error is in: it names the complete examples a fix points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Scenario,
    Catalogue,
    Requirements,
    Prices,
}

impl FileKind {
    /// Where a complete, valid file of this kind is.
    fn examples(self) -> &'static str {
        match self {
            FileKind::Scenario => "see models/examples/ for complete scenarios",
            FileKind::Catalogue => "see models/catalogue.toml for the catalogue's format",
            FileKind::Requirements => {
                "see models/requirements/ for complete requirements files"
            }
            FileKind::Prices => {
                "a price list is schema_version = 1 and [[price]] tables of part, unit_price, currency, date and source (README.md, \"cephplan design\")"
            }
        }
    }
}

/// The remedy for a TOML syntax error (the text does not parse as TOML at all), by
/// toml's message.
fn syntax_fix(message: &str) -> String {
    if message.contains("string values must be quoted") {
        "write one value after `=`: text in double quotes (\"4k\"), a number without spaces, a list in brackets ([1, 2]); one key = value per line".into()
    } else if message.contains("invalid basic string") || message.contains("expected `\"`") {
        "close the string with a double quote on the same line".into()
    } else if message.contains("key with no value") {
        "write `key = value` on one line".into()
    } else if message.contains("keys cannot be empty") {
        "name the table or key in full, e.g. [cpu.my-cpu] rather than [cpu.]".into()
    } else {
        "correct the TOML syntax at this line and column: key = value lines, text in double quotes, [table] headers (https://toml.io)".into()
    }
}

pub(crate) fn toml_error_in(
    text: &str,
    origin: &str,
    e: &toml::de::Error,
    kind: FileKind,
) -> SpecError {
    let mut message = e.message().trim().to_string();
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next())
        .map(str::to_string);
    let duplicate = message.starts_with("duplicate key");
    let (line, column, mut field) = match e.span() {
        Some(r) => {
            let (l, c) = line_col(text, r.start);
            let field = match &missing {
                // The span is the table that lacks the field: name the field itself.
                Some(name) => {
                    let table = table_at(text, r.start);
                    if table.is_empty() {
                        name.clone()
                    } else {
                        format!("{table}.{name}")
                    }
                }
                None => path_at(text, r.start),
            };
            (Some(l), Some(c), field)
        }
        None => (None, None, missing.clone().unwrap_or_default()),
    };
    let syntax = toml::de::DeTable::parse(text).is_err();
    let fix = if duplicate {
        // toml's span is the repeated key (or table name): name it.
        let r = e.span().unwrap_or(0..0);
        let line_start = text[..r.start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line_text = text[line_start..].lines().next().unwrap_or("").trim();
        if line_text.starts_with('[') {
            let header = line_text
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            message = format!("duplicate table [{header}]");
            field = split_dotted(&header).join(".");
            format!("merge the two [{header}] tables into one: a table is given once")
        } else {
            let key = text
                .get(r.clone())
                .unwrap_or("")
                .trim()
                .trim_matches('"')
                .to_string();
            message = format!("duplicate key `{key}`");
            if !key.is_empty() && !field.ends_with(&key) {
                field = if field.is_empty() {
                    key.clone()
                } else {
                    format!("{field}.{key}")
                };
            }
            format!("keep one `{key} = …` line in this table: a key is given once")
        }
    } else if syntax {
        syntax_fix(&message)
    } else if message.contains("unknown field") {
        "remove or rename this field (the allowed names are listed above)".to_string()
    } else if message.contains("missing field") {
        format!("add the missing field ({})", kind.examples())
    } else if message.contains("unknown variant") {
        "use one of the listed values".to_string()
    } else if message.contains(" is not understood: ") || message.starts_with("expected a ") {
        // A size, duration or rate (`units`): the message already says how to write it.
        "write the value in one of those forms".to_string()
    } else if message.contains(" is out of range: ") || message.contains(" must be ") {
        "write a value in that range".to_string()
    } else if message.contains(" has no unit") {
        "write the value with its unit, as a string (e.g. \"4ms\")".to_string()
    } else if message.contains(" is minutes or hours: ") {
        "write the latency target in ms, us or s (e.g. \"4ms\")".to_string()
    } else if message.contains(" is in bytes per second: ") {
        "write the link speed in bits per second, as the message shows".to_string()
    } else if message.contains(" is ambiguous: ") {
        "write the unit in full, as the message shows".to_string()
    } else {
        value_type_fix(&message).unwrap_or_else(|| {
            format!(
                "write the value as the message describes ({})",
                kind.examples()
            )
        })
    };
    SpecError {
        origin: origin.to_string(),
        line,
        column,
        field,
        kind: Box::new(SpecErrorKind::Syntax { message, fix }),
    }
}

// ---------------------------------------------------------------------------------------
// The scenario file (serde)
// ---------------------------------------------------------------------------------------

/// A hardware reference: a catalogue name or an inline description.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum HwRef<T> {
    Name(String),
    Inline(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for HwRef<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = HwRef<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a catalogue name (string) or an inline table")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(HwRef::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(a)).map(HwRef::Inline)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub schema_version: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub cluster: ClusterSpec,
    pub pool: PoolSpec,
    pub clients: ClientsSpec,
    pub workload: WorkloadSpec,
    /// Also predict the cluster with nodes down, during recovery (`predict` prints both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<DegradedSpec>,
}

/// The `[degraded]` table: nodes down and the share of the survivors' resources recovery
/// takes while it rebuilds the lost copies (`predict::degraded` says how this is modelled).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DegradedSpec {
    /// OSD nodes down (≥ 1, fewer than `cluster.nodes`).
    #[serde(default = "one")]
    pub nodes_down: u32,
    /// Share of every OSD-side resource (CPU, devices, OSD links) recovery holds, 0 ≤ s ≤ 0.9:
    /// the recovery reservation of your mClock profile (`osd_mclock_profile`), or what your
    /// `osd_max_backfills` / `osd_recovery_max_active` let recovery take.
    pub recovery_share: f64,
    /// How full the cluster is when the nodes fail (raw used / raw), for the data to move;
    /// default 0.85, Ceph's `mon_osd_nearfull_ratio` (the fullest a healthy plan runs).
    #[serde(default = "nearfull")]
    pub fill: f64,
}

/// The largest recovery share a degraded prediction takes: mClock's largest built-in
/// reservation is 0.7 (`high_recovery_ops`), and a share near 1 leaves the clients a
/// sliver of every resource, link rates below what a scenario describes.
pub const MAX_RECOVERY_SHARE: f64 = 0.9;

/// The most OSDs a scenario puts on one data device (`cluster.node.osds_per_device`).
pub const MAX_OSDS_PER_DEVICE: u32 = 8;

/// Ceph's default `mon_osd_nearfull_ratio`.
pub const NEARFULL_RATIO: f64 = 0.85;

fn nearfull() -> f64 {
    NEARFULL_RATIO
}

impl DegradedSpec {
    /// Checks the figures (not against a cluster: `predict::degraded_scenario` does that).
    pub fn check(&self, at: &str) -> Result<(), (String, SpecErrorKind)> {
        let inv = |f: &str, problem: String, fix: &str| {
            Err((
                format!("{at}.{f}"),
                SpecErrorKind::Invalid {
                    problem,
                    fix: fix.to_string(),
                },
            ))
        };
        if self.nodes_down == 0 {
            return inv(
                "nodes_down",
                "nodes_down = 0".into(),
                "give at least 1 node down, or remove the degraded table",
            );
        }
        if !(self.recovery_share.is_finite()
            && (0.0..=MAX_RECOVERY_SHARE).contains(&self.recovery_share))
        {
            return inv(
                "recovery_share",
                format!("recovery_share = {}", self.recovery_share),
                "give the share of the OSDs' resources recovery takes, 0 ≤ share ≤ 0.9 (e.g. 0.3; mClock's high_recovery_ops reserves 0.7)",
            );
        }
        if !(self.fill.is_finite() && self.fill > 0.0 && self.fill <= 1.0) {
            return inv(
                "fill",
                format!("fill = {}", self.fill),
                "give the used share of raw capacity, 0 < fill ≤ 1 (default 0.85)",
            );
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// OSD nodes.
    pub nodes: u32,
    /// Ceph release, e.g. "19.2.0"; the model looks up a release factor.
    pub ceph_release: String,
    /// How the OSDs' RocksDB was compiled; absent = inferred from `ceph_release`
    /// ([`RocksdbBuild::infer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rocksdb_build: Option<RocksdbBuild>,
    /// Ceph options that change the model, by their Ceph names; an option left out takes
    /// the release's default ([`CephConfigSpec`]).
    #[serde(default, skip_serializing_if = "CephConfigSpec::is_empty")]
    pub ceph_config: CephConfigSpec,
    /// The mgr balancer: `"upmap"` or `"off"`; absent = the release's default (upmap from
    /// 16.2.0, off before). Recorded with the cluster; no prediction reads it since the PG
    /// placement imbalance left the model (`qn::ceph`, "Not modelled").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balancer: Option<Balancer>,
    pub node: NodeSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub cpu: HwRef<CpuEntry>,
    #[serde(default = "one")]
    pub sockets: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<f64>,
    #[serde(default = "one")]
    pub osds_per_device: u32,
    pub data_devices: DevicesSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_device: Option<DevicesSpec>,
    pub network: NetworkSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicesSpec {
    pub count: u32,
    pub model: HwRef<DriveEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub public: BitsPerSec,
    /// Separate cluster (replication) network; absent = shared with public.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<BitsPerSec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureDomain {
    Host,
    Osd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErasureSpec {
    pub k: u32,
    pub m: u32,
    /// Bytes per shard per stripe (`stripe_unit` of the EC profile); absent = Ceph's
    /// default `osd_pool_erasure_code_stripe_unit`, 4 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_unit: Option<Bytes>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicated: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erasure: Option<ErasureSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_count: Option<u32>,
    #[serde(default = "host")]
    pub failure_domain: FailureDomain,
}

fn host() -> FailureDomain {
    FailureDomain::Host
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsSpec {
    pub nodes: u32,
    /// The client nodes' CPU. With `colocated`, leave it out when fio shares the OSDs'
    /// cores, or give the cores fio is pinned to (apart from the OSDs').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<HwRef<CpuEntry>>,
    #[serde(default = "one")]
    pub sockets: u32,
    /// The client NIC; may be left out when `colocated` (the OSD node's public link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<BitsPerSec>,
    /// fio runs on the OSD nodes (hyper-converged, as in most published benchmarks):
    /// `nodes` is how many OSD nodes run it, and its CPU and network are the OSD node's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub colocated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Randread,
    Randwrite,
    Randrw,
    Read,
    Write,
}

/// What generates the load, and so which client library the client's CPU runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// fio's rbd engine: images, jobs and iodepth; the client runs fio + librbd + librados.
    #[default]
    FioRbd,
    /// `rados bench`: objects of `object_size` written or read through librados alone (no
    /// librbd, no images), `concurrency` operations in flight per client node (`-t`).
    Rados,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::FioRbd => "fio-rbd",
            Engine::Rados => "rados",
        }
    }
    fn is_fio_rbd(&self) -> bool {
        *self == Engine::FioRbd
    }
}

/// The `[workload]` table. With `engine = "fio-rbd"` (the default) it takes `images`,
/// `jobs_per_image`, `iodepth` and `block_size`; with `engine = "rados"` (`rados bench`)
/// `object_size` and `concurrency` instead. `images`, `iodepth` and `block_size` read as 0
/// when absent, which validation reports as missing for fio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    #[serde(default, skip_serializing_if = "Engine::is_fio_rbd")]
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub images: u32,
    #[serde(default = "one")]
    pub jobs_per_image: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub iodepth: u32,
    #[serde(default = "zero_bytes", skip_serializing_if = "is_zero_bytes")]
    pub block_size: Bytes,
    pub pattern: Pattern,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<f64>,
    /// The span of each image the I/O covers: "200G" = 200 GiB (as `rbd create --size`
    /// reads it), "200GB" = 200×10⁹ bytes, "2TiB" binary ([`crate::units::parse_capacity_bytes`]).
    #[serde(
        default,
        deserialize_with = "crate::units::image_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_size: Option<Bytes>,
    /// `engine = "rados"`: the object size (`rados bench -b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_size: Option<Bytes>,
    /// `engine = "rados"`: operations in flight per client node (`rados bench -t`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
}

/// The balancer of a serialised scenario that predates the field (current releases' default).
fn upmap() -> Balancer {
    Balancer::Upmap
}

fn one() -> u32 {
    1
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn zero_bytes() -> Bytes {
    Bytes(0)
}

fn is_zero_bytes(b: &Bytes) -> bool {
    b.0 == 0
}

impl ScenarioSpec {
    /// Parses scenario text without validating it.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SpecError> {
        toml::from_str(text).map_err(|e| toml_error(text, origin, &e))
    }

    /// The spec as TOML text (round-trips through [`ScenarioSpec::parse`]).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a ScenarioSpec always serialises to TOML")
    }

    /// Validates the spec and resolves catalogue names. Errors carry the field path but no
    /// line (use [`parse_scenario`] to get lines).
    pub fn validate(&self, cat: &Catalogue) -> Result<Scenario, SpecError> {
        self.validate_inner(cat).map_err(|(field, kind)| SpecError {
            origin: "scenario".into(),
            line: None,
            column: None,
            field,
            kind: Box::new(kind),
        })
    }

    fn validate_inner(&self, cat: &Catalogue) -> Result<Scenario, (String, SpecErrorKind)> {
        let inv = |field: &str, problem: String, fix: &str| {
            Err((
                field.to_string(),
                SpecErrorKind::Invalid {
                    problem,
                    fix: fix.to_string(),
                },
            ))
        };
        if self.schema_version != SCENARIO_SCHEMA_VERSION {
            return inv(
                "schema_version",
                format!("schema_version {} is not supported", self.schema_version),
                "set schema_version = 1",
            );
        }
        let c = &self.cluster;
        if c.nodes == 0 {
            return inv(
                "cluster.nodes",
                "nodes = 0".into(),
                "a cluster needs at least 1 OSD node",
            );
        }
        if c.ceph_release.trim().is_empty() {
            return inv(
                "cluster.ceph_release",
                "ceph_release = \"\"".into(),
                "write the Ceph release the cluster runs, e.g. \"19.2.0\" (its defaults and packages depend on it)",
            );
        }
        if let Err((problem, fix)) = release::check_release(&c.ceph_release) {
            return inv("cluster.ceph_release", problem, &fix);
        }
        let n = &c.node;
        if n.sockets == 0 || n.sockets > 16 {
            return inv(
                "cluster.node.sockets",
                format!("sockets = {}", n.sockets),
                "give the CPU sockets per node, 1 to 16",
            );
        }
        let (node_cpu_name, node_cpu) = resolve_cpu(&n.cpu, cat, "cluster.node.cpu")?;
        if let Some(m) = n.memory_gib {
            if !(m.is_finite() && m > 0.0 && m <= MAX_MEMORY_GIB) {
                return inv(
                    "cluster.node.memory_gib",
                    format!("memory_gib = {m}"),
                    "give the node memory in GiB, above 0 and at most 65,536 (64 TiB), e.g. 256; or leave it out",
                );
            }
        }
        if n.osds_per_device == 0 || n.osds_per_device > MAX_OSDS_PER_DEVICE {
            return inv(
                "cluster.node.osds_per_device",
                format!("osds_per_device = {}", n.osds_per_device),
                "use 1 to 8 OSDs per device (1 is usual; 2-4 only on very fast NVMe)",
            );
        }
        if n.data_devices.count == 0 {
            return inv(
                "cluster.node.data_devices.count",
                "count = 0".into(),
                "an OSD node needs at least 1 data device",
            );
        }
        let (data_name, data_drive) = resolve_drive(
            &n.data_devices.model,
            cat,
            "cluster.node.data_devices.model",
        )?;
        let wal = match &n.wal_device {
            None => None,
            Some(w) => {
                if w.count == 0 {
                    return inv(
                        "cluster.node.wal_device.count",
                        "count = 0".into(),
                        "give at least 1 WAL device, or remove [cluster.node.wal_device]",
                    );
                }
                if w.count > n.data_devices.count {
                    return inv(
                        "cluster.node.wal_device.count",
                        format!(
                            "count = {} WAL devices for {} data devices",
                            w.count, n.data_devices.count
                        ),
                        "give at most one WAL/DB device per data device (several OSDs usually share one)",
                    );
                }
                let (name, drive) = resolve_drive(&w.model, cat, "cluster.node.wal_device.model")?;
                Some(DeviceGroup {
                    count_per_node: w.count,
                    name,
                    drive,
                })
            }
        };
        let osds_per_node = u64::from(n.data_devices.count) * u64::from(n.osds_per_device);
        let total_osds = osds_per_node * u64::from(c.nodes);
        if total_osds > MAX_OSDS {
            // Name the factor that is out of scale: a node alone beyond the limit is its
            // devices' doing, else the node count.
            let field = if osds_per_node > MAX_OSDS {
                "cluster.node.data_devices.count"
            } else {
                "cluster.nodes"
            };
            return inv(
                field,
                format!(
                    "{} nodes × {} devices × {} OSDs each = {total_osds} OSDs",
                    c.nodes, n.data_devices.count, n.osds_per_device
                ),
                "cephplan models clusters of up to 100,000 OSDs: lower the node or device count",
            );
        }
        let domains = match self.pool.failure_domain {
            FailureDomain::Host => u64::from(c.nodes),
            FailureDomain::Osd => total_osds,
        };
        let domain_word = match self.pool.failure_domain {
            FailureDomain::Host => "nodes (failure_domain = \"host\")",
            FailureDomain::Osd => "OSDs (failure_domain = \"osd\")",
        };
        let protection = match (self.pool.replicated, self.pool.erasure) {
            (Some(_), Some(_)) | (None, None) => {
                return inv(
                    "pool",
                    "the pool must be either replicated or erasure-coded".into(),
                    "set exactly one of `replicated = 3` or `erasure = { k = 4, m = 2 }`",
                )
            }
            (Some(r), None) => {
                if r == 0 || u64::from(r) > domains {
                    return inv(
                        "pool.replicated",
                        format!("replicated = {r} but there are {domains} {domain_word}"),
                        "use 1 ≤ replicas ≤ failure domains: lower `replicated` or add nodes",
                    );
                }
                Protection::Replicated { size: r }
            }
            (None, Some(ErasureSpec { k, m, .. })) => {
                // Ceph's erasure-code plugins refuse fewer (`ErasureCode::sanity_check_k_m`
                // in ceph/ceph src/erasure-code/ErasureCode.cc: k ≥ 2, m ≥ 1).
                if k < 2 {
                    return inv(
                        "pool.erasure.k",
                        format!("k = {k}, which Ceph's erasure-code plugins refuse"),
                        "use k ≥ 2 data chunks (for one chunk of data, a replicated pool: `replicated = 2` stores what k = 1, m = 1 would)",
                    );
                }
                if m == 0 {
                    return inv(
                        "pool.erasure.m",
                        "m = 0: no coding chunk, which Ceph's erasure-code plugins refuse (and a lost drive would lose data)".into(),
                        "use m ≥ 1 coding chunks (m = 2 survives two failures)",
                    );
                }
                let width = u64::from(k) + u64::from(m);
                if width > domains {
                    return inv(
                        "pool.erasure",
                        format!("k + m = {width} but there are {domains} {domain_word}"),
                        "use k + m ≤ failure domains: a smaller profile or more nodes",
                    );
                }
                Protection::Erasure { k, m }
            }
        };
        let ec_stripe_unit_bytes = match self.pool.erasure.and_then(|e| e.stripe_unit) {
            None => EC_DEFAULT_STRIPE_UNIT_BYTES,
            Some(Bytes(su)) if (512..=(64 << 20)).contains(&su) && su.is_multiple_of(512) => su,
            Some(Bytes(su)) => {
                return inv(
                    "pool.erasure.stripe_unit",
                    format!("stripe_unit = {su} bytes"),
                    "give the EC profile's stripe unit, a multiple of 512 bytes from 512 to 64 MiB (Ceph's default \"4k\"), or leave it out",
                )
            }
        };
        if c.ceph_config.allow_ec_optimizations == Some(true) && self.pool.erasure.is_none() {
            return inv(
                "cluster.ceph_config.allow_ec_optimizations",
                "allow_ec_optimizations = true on a replicated pool".into(),
                "the option applies to erasure-coded pools: remove it, or give [pool.erasure]",
            );
        }
        if let Some(r) = c.ceph_config.bluestore_cache_meta_ratio {
            if !(r > 0.0 && r <= 1.0) {
                return inv(
                    "cluster.ceph_config.bluestore_cache_meta_ratio",
                    format!("bluestore_cache_meta_ratio = {r}"),
                    "give the share of the BlueStore cache for metadata, above 0 and at most 1 (Ceph's default 0.45), or leave it out",
                );
            }
        }
        for (field, v) in [
            ("osd_memory_target", c.ceph_config.osd_memory_target),
            ("bluestore_cache_size", c.ceph_config.bluestore_cache_size),
        ] {
            if let Some(Bytes(b)) = v {
                if b < 128 << 20 {
                    return inv(
                        &format!("cluster.ceph_config.{field}"),
                        format!("{field} = {b} bytes"),
                        "give at least 128 MiB per OSD (e.g. \"4G\", Ceph's default memory target), or leave it out",
                    );
                }
            }
        }
        if let Some(pgs) = self.pool.pg_count {
            // What `ceph osd pool create` refuses (`OSDMonitor::check_pg_num`): PG copies
            // per OSD above `mon_max_pg_per_osd`. No prediction reads pg_count (`qn::ceph`,
            // "Not modelled"), so the check is all it gets.
            let copies = match protection {
                Protection::Replicated { size } => u64::from(size),
                Protection::Erasure { k, m } => u64::from(k) + u64::from(m),
            };
            let limit = c
                .ceph_config
                .mon_max_pg_per_osd
                .unwrap_or(MON_MAX_PG_PER_OSD_DEFAULT);
            let per_osd = (u64::from(pgs) * copies) as f64 / total_osds.max(1) as f64;
            if pgs == 0 {
                return inv(
                    "pool.pg_count",
                    "pg_count = 0".into(),
                    "give the pool's placement-group count (`ceph osd pool get POOL pg_num`, e.g. 1024) or leave it out; cephplan records it but no prediction uses it",
                );
            }
            if u64::from(pgs) * copies > u64::from(limit) * total_osds {
                return inv(
                    "pool.pg_count",
                    format!(
                        "pg_count = {pgs} × {copies} copies on {total_osds} OSDs = {:.1} PGs per OSD, above mon_max_pg_per_osd = {limit}{}, so Ceph would refuse to create the pool",
                        per_osd,
                        if c.ceph_config.mon_max_pg_per_osd.is_none() { " (its default)" } else { "" }
                    ),
                    &format!(
                        "give the pool's real pg_num (about 100 PGs per OSD is usual: {} here), or, if the cluster raised the limit, state it under [cluster.ceph_config] as mon_max_pg_per_osd; cephplan records pg_count but no prediction uses it",
                        (100 * total_osds / copies).max(1)
                    ),
                );
            }
        }
        let cl = &self.clients;
        if cl.nodes == 0 {
            return inv(
                "clients.nodes",
                "nodes = 0".into(),
                "at least 1 client node runs the workload",
            );
        }
        if cl.nodes > MAX_CLIENT_NODES {
            return inv(
                "clients.nodes",
                format!("nodes = {}", cl.nodes),
                "cephplan models up to 100,000 client nodes: give the nodes that run the workload (each runs at least one fio job or rados bench)",
            );
        }
        if cl.sockets == 0 || cl.sockets > 16 {
            return inv(
                "clients.sockets",
                format!("sockets = {}", cl.sockets),
                "give the CPU sockets per client node, 1 to 16",
            );
        }
        if cl.colocated && cl.nodes > c.nodes {
            return inv(
                "clients.nodes",
                format!(
                    "{} client nodes co-located on {} OSD nodes",
                    cl.nodes, c.nodes
                ),
                "with colocated = true, clients.nodes counts the OSD nodes that run fio: at most cluster.nodes",
            );
        }
        let (client_cpu_name, client_cpu, client_sockets) = match (&cl.cpu, cl.colocated) {
            (Some(cpu), _) => {
                let (name, entry) = resolve_cpu(cpu, cat, "clients.cpu")?;
                (name, entry, cl.sockets)
            }
            (None, true) => (node_cpu_name.clone(), node_cpu.clone(), n.sockets),
            (None, false) => {
                return Err((
                    "clients.cpu".to_string(),
                    SpecErrorKind::Invalid {
                        problem: "no client CPU".into(),
                        fix: "give clients.cpu (a catalogue name or an inline table), or set clients.colocated = true when fio runs on the OSD nodes".into(),
                    },
                ))
            }
        };
        let client_nic_bits_per_sec = match (cl.nic, cl.colocated) {
            (Some(b), _) => b.0,
            (None, true) => n.network.public.0,
            (None, false) => {
                return inv(
                    "clients.nic",
                    "no client NIC".into(),
                    "give clients.nic, e.g. \"25Gb/s\", or set clients.colocated = true",
                )
            }
        };
        for (field, rate) in [
            ("cluster.node.network.public", Some(n.network.public.0)),
            (
                "cluster.node.network.cluster",
                n.network.cluster.map(|b| b.0),
            ),
            ("clients.nic", cl.nic.map(|b| b.0)),
        ] {
            if let Some(r) = rate {
                if !(LINK_BITS_PER_SEC_RANGE.contains(&r)) {
                    return inv(
                        field,
                        format!("a link of {r:e} bit/s"),
                        "give a link rate from 1Mb/s to 100Tb/s, e.g. \"25Gb/s\"",
                    );
                }
            }
        }
        let w = &self.workload;
        let (images, jobs_per_image, iodepth, bs) = match w.engine {
            Engine::FioRbd => {
                for (field, set) in [
                    ("workload.object_size", w.object_size.is_some()),
                    ("workload.concurrency", w.concurrency.is_some()),
                ] {
                    if set {
                        return inv(
                            field,
                            format!(
                                "{} is a rados bench field, but engine is \"fio-rbd\"",
                                field.rsplit('.').next().unwrap_or(field)
                            ),
                            "set engine = \"rados\" for a rados bench workload, or use block_size and iodepth for fio",
                        );
                    }
                }
                for (field, v) in [
                    ("workload.images", w.images),
                    ("workload.jobs_per_image", w.jobs_per_image),
                    ("workload.iodepth", w.iodepth),
                ] {
                    if v == 0 {
                        return inv(
                            field,
                            format!(
                                "{} = 0 (or missing field `{}`)",
                                field.rsplit('.').next().unwrap_or(field),
                                field.rsplit('.').next().unwrap_or(field)
                            ),
                            "must be ≥ 1",
                        );
                    }
                }
                if w.block_size.0 == 0 {
                    return inv(
                        "workload.block_size",
                        "missing field `block_size` (or 0 bytes)".into(),
                        "add block_size = \"4k\" (a multiple of 512 bytes from 512 to 1G) to [workload]",
                    );
                }
                (w.images, w.jobs_per_image, w.iodepth, w.block_size.0)
            }
            Engine::Rados => {
                // rados bench has no images, jobs or iodepth: a value there is a fio
                // workload's, and would be silently ignored.
                for (field, set) in [
                    ("workload.images", w.images != 0),
                    ("workload.jobs_per_image", w.jobs_per_image != 1),
                    ("workload.iodepth", w.iodepth != 0),
                    ("workload.block_size", w.block_size.0 != 0),
                    ("workload.image_size", w.image_size.is_some()),
                ] {
                    if set {
                        return inv(
                            field,
                            format!(
                                "{} is a fio rbd field, but engine is \"rados\" (rados bench writes objects through librados: no images)",
                                field.rsplit('.').next().unwrap_or(field)
                            ),
                            "remove it; a rados workload takes object_size (rados bench -b) and concurrency (-t, ops in flight per client node)",
                        );
                    }
                }
                let Some(obj) = w.object_size else {
                    return inv(
                        "workload.object_size",
                        "missing field `object_size` (engine = \"rados\")".into(),
                        "add object_size = \"4M\" (rados bench -b; a multiple of 512 bytes from 512 to 1G)",
                    );
                };
                let c = match w.concurrency {
                    Some(c) if c >= 1 => c,
                    Some(_) => {
                        return inv(
                            "workload.concurrency",
                            "concurrency = 0".into(),
                            "must be ≥ 1 (rados bench -t, ops in flight per client node; its default is 16)",
                        )
                    }
                    None => {
                        return inv(
                            "workload.concurrency",
                            "missing field `concurrency` (engine = \"rados\")".into(),
                            "add concurrency = 16 (rados bench -t, ops in flight per client node)",
                        )
                    }
                };
                if matches!(w.pattern, Pattern::Randwrite | Pattern::Randrw) {
                    return inv(
                        "workload.pattern",
                        format!("rados bench has no {:?} mode", w.pattern).to_lowercase(),
                        "use pattern = \"write\" (rados bench write), \"read\" (seq) or \"randread\" (rand)",
                    );
                }
                // One rados bench process per client node, each with `concurrency` ops.
                (cl.nodes, 1, c, obj.0)
            }
        };
        let population = u64::from(images) * u64::from(jobs_per_image) * u64::from(iodepth);
        if population > 10_000_000 {
            return inv(
                match w.engine {
                    Engine::FioRbd => "workload.iodepth",
                    Engine::Rados => "workload.concurrency",
                },
                format!("{population} I/Os in flight"),
                "keep the in-flight count at or below 10,000,000",
            );
        }
        let size_field = match w.engine {
            Engine::FioRbd => "workload.block_size",
            Engine::Rados => "workload.object_size",
        };
        if bs < 512 || !bs.is_multiple_of(512) || bs > MAX_BLOCK_SIZE_BYTES {
            return inv(
                size_field,
                format!(
                    "{} = {bs} bytes",
                    size_field.rsplit('.').next().unwrap_or(size_field)
                ),
                "use a multiple of 512 bytes from 512 to 1G (e.g. \"4k\", \"64k\", \"4M\")",
            );
        }
        let read_fraction = match (w.pattern, w.read_percent) {
            (Pattern::Randrw, Some(p)) if (0.0..=100.0).contains(&p) => p / 100.0,
            (Pattern::Randrw, Some(p)) => {
                return inv(
                    "workload.read_percent",
                    format!("read_percent = {p}"),
                    "give a percentage from 0 to 100",
                )
            }
            (Pattern::Randrw, None) => {
                return inv(
                    "workload.pattern",
                    "pattern = \"randrw\" needs a read share".into(),
                    "add `read_percent = 70` (0..100) to [workload]",
                )
            }
            (_, Some(_)) => {
                return inv(
                    "workload.read_percent",
                    "read_percent is only meaningful with pattern = \"randrw\"".into(),
                    "remove read_percent, or set pattern = \"randrw\"",
                )
            }
            (Pattern::Randread | Pattern::Read, None) => 1.0,
            (Pattern::Randwrite | Pattern::Write, None) => 0.0,
        };
        let raw_bytes =
            data_drive.capacity.0 as f64 * f64::from(n.data_devices.count) * f64::from(c.nodes);
        if let Some(sz) = w.image_size {
            if sz.0 < bs {
                return inv(
                    "workload.image_size",
                    format!("image_size {sz} is smaller than the block size"),
                    "give an image size larger than block_size, or leave it out",
                );
            }
        }

        if let Some(d) = &self.degraded {
            d.check("degraded")?;
            if d.nodes_down >= c.nodes {
                return inv(
                    "degraded.nodes_down",
                    format!("nodes_down = {} of {} nodes", d.nodes_down, c.nodes),
                    "leave at least one node up: lower nodes_down",
                );
            }
        }

        let efficiency = protection.efficiency();
        // RocksDB lives on the WAL/DB device when there is one, else on the data device.
        let db_kind = wal.as_ref().map_or(data_drive.kind, |w| w.drive.kind);
        let ceph_config = c
            .ceph_config
            .resolve(&c.ceph_release, db_kind, data_drive.kind);
        Ok(Scenario {
            name: self.name.clone(),
            ceph_release: c.ceph_release.clone(),
            rocksdb_build: c
                .rocksdb_build
                .unwrap_or_else(|| RocksdbBuild::infer(&c.ceph_release)),
            rocksdb_build_stated: c.rocksdb_build.is_some(),
            ceph_config,
            balancer: c
                .balancer
                .unwrap_or_else(|| Balancer::default_for(&c.ceph_release)),
            nodes: c.nodes,
            node_cpu_name,
            node_cpu,
            sockets: n.sockets,
            osds_per_device: n.osds_per_device,
            data: DeviceGroup {
                count_per_node: n.data_devices.count,
                name: data_name,
                drive: data_drive,
            },
            wal,
            public_bits_per_sec: n.network.public.0,
            cluster_bits_per_sec: n.network.cluster.map(|b| b.0),
            protection,
            ec_stripe_unit_bytes,
            failure_domain: self.pool.failure_domain,
            client_nodes: cl.nodes,
            clients_colocated: cl.colocated,
            client_cpu_name,
            client_cpu,
            client_sockets,
            client_nic_bits_per_sec,
            engine: w.engine,
            images,
            jobs_per_image,
            iodepth,
            block_size_bytes: bs,
            pattern: w.pattern,
            read_fraction,
            capacity: CapacityReport {
                raw_bytes,
                usable_bytes: raw_bytes * efficiency,
                efficiency,
            },
            spec: self.clone(),
        })
    }
}

fn resolve_cpu(
    r: &HwRef<CpuEntry>,
    cat: &Catalogue,
    field: &str,
) -> Result<(String, CpuEntry), (String, SpecErrorKind)> {
    match r {
        HwRef::Name(n) => match cat.cpu(n) {
            Some(c) => Ok((n.clone(), c.clone())),
            None => Err((
                field.to_string(),
                SpecErrorKind::UnknownName {
                    section: "cpu",
                    name: n.clone(),
                    closest: catalogue::closest(n, cat.cpu.keys()),
                },
            )),
        },
        HwRef::Inline(c) => {
            c.check(field)?;
            Ok(("inline".into(), c.clone()))
        }
    }
}

fn resolve_drive(
    r: &HwRef<DriveEntry>,
    cat: &Catalogue,
    field: &str,
) -> Result<(String, DriveEntry), (String, SpecErrorKind)> {
    match r {
        HwRef::Name(n) => match cat.drive(n) {
            Some(d) => Ok((n.clone(), d.clone())),
            None => Err((
                field.to_string(),
                SpecErrorKind::UnknownName {
                    section: "drive",
                    name: n.clone(),
                    closest: catalogue::closest(n, cat.drive.keys()),
                },
            )),
        },
        HwRef::Inline(d) => {
            d.check(field)?;
            Ok(("inline".into(), d.clone()))
        }
    }
}

// ---------------------------------------------------------------------------------------
// The validated scenario
// ---------------------------------------------------------------------------------------

/// Ceph's default erasure-code stripe unit (`osd_pool_erasure_code_stripe_unit`), bytes.
pub const EC_DEFAULT_STRIPE_UNIT_BYTES: u64 = 4096;

/// How the pool protects data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Protection {
    Replicated { size: u32 },
    Erasure { k: u32, m: u32 },
}

impl Protection {
    /// Usable / raw capacity.
    pub fn efficiency(self) -> f64 {
        match self {
            Protection::Replicated { size } => 1.0 / f64::from(size),
            Protection::Erasure { k, m } => f64::from(k) / f64::from(k + m),
        }
    }
}

/// Raw and usable capacity (before Ceph's full ratios).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapacityReport {
    pub raw_bytes: f64,
    /// raw × efficiency (1/replicas or k/(k+m)); Ceph stops writes at the full ratio
    /// (0.95 by default), so plan to fill less.
    pub usable_bytes: f64,
    pub efficiency: f64,
}

/// A group of identical drives in every OSD node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceGroup {
    pub count_per_node: u32,
    /// Catalogue name, or "inline".
    pub name: String,
    pub drive: DriveEntry,
}

/// A validated scenario with all hardware resolved to numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    pub name: String,
    pub ceph_release: String,
    /// The RocksDB build: as stated, or inferred from the release.
    #[serde(default)]
    pub rocksdb_build: RocksdbBuild,
    /// True when the scenario states `rocksdb_build` (false: inferred).
    #[serde(default)]
    pub rocksdb_build_stated: bool,
    /// The Ceph options the model reads: as stated, or the release's defaults.
    #[serde(default)]
    pub ceph_config: CephConfig,
    /// The mgr balancer: as stated, or the release's default.
    #[serde(default = "upmap")]
    pub balancer: Balancer,
    pub nodes: u32,
    pub node_cpu_name: String,
    pub node_cpu: CpuEntry,
    pub sockets: u32,
    pub osds_per_device: u32,
    pub data: DeviceGroup,
    pub wal: Option<DeviceGroup>,
    pub public_bits_per_sec: f64,
    pub cluster_bits_per_sec: Option<f64>,
    pub protection: Protection,
    /// EC stripe unit, bytes per shard per stripe (4 KiB unless the profile says).
    pub ec_stripe_unit_bytes: u64,
    pub failure_domain: FailureDomain,
    pub client_nodes: u32,
    /// fio runs on the OSD nodes (`[clients] colocated`).
    pub clients_colocated: bool,
    pub client_cpu_name: String,
    pub client_cpu: CpuEntry,
    pub client_sockets: u32,
    pub client_nic_bits_per_sec: f64,
    /// fio rbd or rados bench (the client library the client CPU runs).
    pub engine: Engine,
    /// fio: images; rados: client nodes (one rados bench process each).
    pub images: u32,
    /// fio: jobs per image; rados: 1.
    pub jobs_per_image: u32,
    /// fio: iodepth; rados: `concurrency` (ops in flight per client node).
    pub iodepth: u32,
    /// fio: block size; rados: object size.
    pub block_size_bytes: u64,
    pub pattern: Pattern,
    /// Share of I/Os that are reads, 0..1 (1 for read patterns, 0 for write patterns).
    pub read_fraction: f64,
    pub capacity: CapacityReport,
    /// The spec this scenario was validated from (for sweeps and editors).
    pub spec: ScenarioSpec,
}

impl Scenario {
    /// A note when the images with their copies (replicas, or (k+m)/k for EC) are larger
    /// than the cluster's raw capacity. RBD images are thin, so a benchmark or an
    /// overcommitted cloud may provision more than the drives hold, but the model takes
    /// `image_size` as data written (the onodes it counts, the flash fill): not a refusal,
    /// a warning with the figures (session 55's input audit).
    pub fn thin_images_note(&self) -> Option<String> {
        let sz = self.spec.workload.image_size?;
        let copies = 1.0 / self.protection.efficiency();
        let stored = f64::from(self.images) * sz.0 as f64 * copies;
        let raw = self.capacity.raw_bytes;
        (stored > raw).then(|| {
            format!(
                "images: {} images × {sz} × {} copies = {} is more than the cluster's raw {}; RBD images are thin, so they may be provisioned beyond it, but the model takes image_size as data written (the onodes it counts, the drives' fill): give image_size as the span of each image the workload has written, or more or larger drives",
                self.images,
                round3(copies),
                decimal_bytes(stored),
                decimal_bytes(raw),
            )
        })
    }

    pub fn osds_per_node(&self) -> u32 {
        self.data.count_per_node * self.osds_per_device
    }
    pub fn total_osds(&self) -> u32 {
        self.osds_per_node() * self.nodes
    }
    /// I/Os in flight: images × jobs per image × iodepth.
    pub fn population(&self) -> u32 {
        self.images * self.jobs_per_image * self.iodepth
    }

    /// fio at iodepth 1: each job keeps one I/O in flight (the kind of workload whose
    /// transfer error a model may state apart, `model::Transfer`).
    pub fn is_fio_iodepth_1(&self) -> bool {
        self.engine == Engine::FioRbd && self.iodepth == 1
    }

    /// The spec with every catalogue reference replaced by the resolved figures, so that an
    /// edited copy validates without the catalogue (sweeps and sizing use this).
    pub fn inline_spec(&self) -> ScenarioSpec {
        let mut sp = self.spec.clone();
        sp.cluster.node.cpu = HwRef::Inline(self.node_cpu.clone());
        sp.cluster.node.data_devices.model = HwRef::Inline(self.data.drive.clone());
        if let (Some(w), Some(g)) = (&mut sp.cluster.node.wal_device, &self.wal) {
            w.model = HwRef::Inline(g.drive.clone());
        }
        if sp.clients.cpu.is_some() {
            sp.clients.cpu = Some(HwRef::Inline(self.client_cpu.clone()));
        }
        sp
    }

    /// Validates an edited [`Scenario::inline_spec`], keeping this scenario's hardware
    /// names.
    pub fn revalidate(&self, spec: &ScenarioSpec) -> Result<Scenario, SpecError> {
        let mut s = spec.validate(&Catalogue::default())?;
        s.node_cpu_name = self.node_cpu_name.clone();
        s.client_cpu_name = self.client_cpu_name.clone();
        s.data.name = self.data.name.clone();
        if let (Some(w), Some(g)) = (&mut s.wal, &self.wal) {
            w.name = g.name.clone();
        }
        s.spec = self.spec.clone();
        s.spec.cluster = spec.cluster.clone();
        s.spec.clients = spec.clients.clone();
        s.spec.workload = spec.workload.clone();
        s.spec.pool = spec.pool.clone();
        s.spec.cluster.node.cpu = self.spec.cluster.node.cpu.clone();
        s.spec.cluster.node.data_devices.model = self.spec.cluster.node.data_devices.model.clone();
        s.spec.cluster.node.wal_device = self.spec.cluster.node.wal_device.clone();
        s.spec.clients.cpu = self.spec.clients.cpu.clone();
        Ok(s)
    }
}

/// Parses and validates scenario text; errors carry `origin`, line, column and field.
pub fn parse_scenario(text: &str, origin: &str, cat: &Catalogue) -> Result<Scenario, SpecError> {
    let spec = ScenarioSpec::parse(text, origin)?;
    spec.validate(cat).map_err(|e| {
        let path: Vec<&str> = e.field.split('.').collect();
        error_at(text, origin, &path, e.field.clone(), *e.kind)
    })
}

/// Reads, parses and validates a scenario file.
pub fn load_scenario(path: &Path, cat: &Catalogue) -> Result<Scenario, SpecError> {
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
    parse_scenario(&text, &origin, cat)
}

#[cfg(test)]
mod tests;
