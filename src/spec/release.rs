//! What a Ceph release's packages and option defaults do to BlueStore's write path: the
//! facts `qn::ceph` turns into cost factors, inferred from `cluster.ceph_release` unless the
//! scenario states them.
//!
//! - **RocksDB build** ([`RocksdbBuild`]): the upstream Debian/Ubuntu packages of several
//!   releases compiled the bundled RocksDB without optimisation.
//! - **`bluefs_buffered_io`** ([`bluefs_buffered_io_default`]): when false, BlueFS writes
//!   RocksDB's files (the WAL the `kv_sync_thread` appends to once per batch of writes) and
//!   reads them with O_DIRECT, bypassing the page cache. The default flipped four times.
//! - **`bluestore_allocation_from_file`** ([`allocation_from_file_default`], "NCB"): from
//!   Quincy, BlueStore stops committing allocation metadata to RocksDB with every write.
//!
//! A scenario states the options it knows under `[cluster.ceph_config]` by their Ceph
//! names ([`CephConfigSpec`]); what it leaves out is the release's default.
//!
//! Not here: how large each effect is (model parameters, `qn::ceph`) or parsing the rest of
//! the scenario (`spec`).

use serde::{Deserialize, Serialize};

use super::DriveKind;
use crate::units::Bytes;

/// A release string's leading `X.Y.Z` and whether anything follows it (a packaging suffix
/// such as `-0ubuntu0.20.04.2` or `+ds-2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CephVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// True when the string continues after `X.Y.Z` (a distribution or self-built package).
    pub suffixed: bool,
}

impl CephVersion {
    /// Parses the leading `X.Y.Z` of `release`; `None` when it does not start with three
    /// dot-separated numbers (e.g. "squid", "16.2").
    pub fn parse(release: &str) -> Option<CephVersion> {
        let t = release.trim();
        let end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (head, rest) = t.split_at(end);
        let parts: Vec<u32> = head
            .split('.')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        match parts[..] {
            [major, minor, patch] => Some(CephVersion {
                major,
                minor,
                patch,
                suffixed: !rest.is_empty(),
            }),
            _ => None,
        }
    }
}

/// Ceph's release names and their major versions (`doc/releases/index.rst`), for the fix
/// of a `ceph_release` written as a name.
pub const RELEASE_NAMES: [(&str, u32); 11] = [
    ("jewel", 10),
    ("kraken", 11),
    ("luminous", 12),
    ("mimic", 13),
    ("nautilus", 14),
    ("octopus", 15),
    ("pacific", 16),
    ("quincy", 17),
    ("reef", 18),
    ("squid", 19),
    ("tentacle", 20),
];

/// Checks a `ceph_release` as a scenario or a requirements file gives it: the version
/// `ceph --version` prints (`X.Y.Z`, any packaging suffix after it). A release name or a
/// partial version is refused with the fix, since every release-dependent default (RocksDB
/// build, `bluefs_buffered_io`, allocation metadata, deferred-write size) is read from the
/// number. Returns the problem and the fix.
pub fn check_release(release: &str) -> Result<CephVersion, (String, String)> {
    if let Some(v) = CephVersion::parse(release) {
        if v.major < FIRST_BLUESTORE_MAJOR {
            return Err(too_old(release, v));
        }
        return Ok(v);
    }
    let lower = release.trim().to_ascii_lowercase();
    let named = RELEASE_NAMES
        .iter()
        .find(|(name, _)| lower.starts_with(name));
    let problem = format!(
        "ceph_release = {release:?} is not a version number (X.Y.Z, as `ceph --version` prints it)"
    );
    let fix = match named {
        Some((name, major)) => format!(
            "write the point release of {name} the cluster runs, e.g. \"{major}.2.0\": its defaults and packages differ between point releases"
        ),
        None => "write the version `ceph --version` prints, e.g. \"19.2.0\" (Squid) or \"18.2.4\" (Reef)".to_string(),
    };
    Err((problem, fix))
}

/// The first major release whose BlueStore is stable: Luminous, 12.2.0 (ceph.io "v12.2.0
/// Luminous released": "BlueStore ... is now stable and the default"). cephplan models
/// BlueStore OSDs only; FileStore-era releases (Jewel 10.x, Kraken 11.x and older) are refused.
pub const FIRST_BLUESTORE_MAJOR: u32 = 12;

/// The problem and fix of a release before Luminous; for a one-digit major that is a
/// modelled release with its leading "1" dropped ("9.2.0" for 19.2.0), the guess.
fn too_old(release: &str, v: CephVersion) -> (String, String) {
    let guess = (v.major < 10)
        .then(|| v.major + 10)
        .filter(|m| *m >= FIRST_BLUESTORE_MAJOR)
        .and_then(|m| RELEASE_NAMES.iter().find(|(_, major)| *major == m))
        .map(|(name, m)| {
            let mut name = name.to_string();
            name[..1].make_ascii_uppercase();
            format!("did you mean \"{m}.{}.{}\" ({name})? ", v.minor, v.patch)
        })
        .unwrap_or_default();
    (
        format!(
            "ceph_release = {release:?} is older than Luminous (12.x), the first release with a stable BlueStore"
        ),
        format!(
            "{guess}cephplan models BlueStore OSDs; FileStore-era releases (Jewel 10.x, Kraken 11.x and older) are out of scope: write the release the cluster runs, 12.2.0 or later, as `ceph --version` prints it"
        ),
    )
}

/// How the OSDs' RocksDB was compiled. The upstream Debian/Ubuntu packages of several
/// releases built the bundled RocksDB with `CMAKE_BUILD_TYPE=None`, i.e. without
/// optimisation: Mark Nelson measured 4K random writes doubling once it was fixed (ceph/ceph
/// PR #54891 on 17.2.7; fixed by PR #54918 and its backports), and seed 002 shows it
/// between the upstream and Canonical builds of 15.2.14. The model charges the per-op write
/// CPU of an unoptimised build `rocksdb_unoptimised_write_factor` times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RocksdbBuild {
    #[default]
    Optimised,
    Unoptimised,
}

impl RocksdbBuild {
    /// The build the upstream Debian/Ubuntu packages of `release` have, for a bare upstream
    /// version `X.Y.Z`: unoptimised for 15.2.x (Octopus, never fixed), 16.2.0-16.2.14 (fixed
    /// in 16.2.15, PR #55500), 17.2.0-17.2.7 (PR #54891 measured 17.2.7) and 18.2.0-18.2.2
    /// (fix milestone 18.2.3, PR #55502). Nautilus and older count as optimised: in seed
    /// 002, 14.2.22's writes match Canonical's optimised 15.2.14 build. A version with a
    /// packaging suffix (`15.2.14-0ubuntu0.20.04.2`) is a distribution build, optimised
    /// (Canonical fixed theirs in 2020, Launchpad #1894453). RPM and self-built packages
    /// were not affected: state `rocksdb_build = "optimised"` for them.
    pub fn infer(release: &str) -> RocksdbBuild {
        let Some(v) = CephVersion::parse(release).filter(|v| !v.suffixed) else {
            return RocksdbBuild::Optimised;
        };
        let unoptimised = match (v.major, v.minor, v.patch) {
            (15, 2, _) => true,
            (16, 2, z) => z <= 14,
            (17, 2, z) => z <= 7,
            (18, 2, z) => z <= 2,
            _ => false,
        };
        if unoptimised {
            RocksdbBuild::Unoptimised
        } else {
            RocksdbBuild::Optimised
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RocksdbBuild::Optimised => "optimised",
            RocksdbBuild::Unoptimised => "unoptimised",
        }
    }
}

/// The default of `bluefs_buffered_io` in `release` (a packaging suffix does not change an
/// option default; a release that does not parse is taken as current, true). From the
/// release notes:
///
/// | releases | default | source |
/// |---|---|---|
/// | before 13.2 (Luminous and older) | false | disabled in 2016 (ceph/ceph PR #10766) |
/// | 13.2.x, 14.2.0-14.2.9 | true | PR #20542 "bluefs_buffered_io=true by default" (2018) |
/// | 14.2.10-14.2.21 | false | 14.2.10: "Disable bluefs_buffered_io by default again" (PR #34297) |
/// | 14.2.22 | true | 14.2.22: "sets bluefs_buffered_io to true by default" (PR #40393) |
/// | 15.2.0-15.2.1 | true | the disable reached Octopus in 15.2.2 |
/// | 15.2.2-15.2.12 | false | 15.2.2: PR #34353 |
/// | 15.2.13 and later, 16.2.x and later | true | 15.2.13: PR #40392; Pacific: PR #40391; master: PR #38044 |
///
/// (16.2.0's changelog is not itemised; the Pacific backport passed QA before its release.)
pub fn bluefs_buffered_io_default(release: &str) -> bool {
    let Some(v) = CephVersion::parse(release) else {
        return true;
    };
    match (v.major, v.minor, v.patch) {
        (m, _, _) if m < 13 => false,
        (14, 2, z) => !(10..=21).contains(&z),
        (15, 2, z) => !(2..=12).contains(&z),
        _ => true,
    }
}

/// The effective `bluestore_allocation_from_file` ("NCB": allocation metadata kept in a
/// file written at shutdown instead of a RocksDB commit with every write; ceph/ceph PR
/// #39871, "an 25% increase in IOPS and reduced latency in small random-write workloads")
/// of `release` on a DB device of `db_kind`: true from Quincy (17.x), except on a rotational
/// DB device, where Quincy and later turn it off because crash recovery is about 20× slower
/// there (PR #45340). A release that does not parse is taken as current.
pub fn allocation_from_file_default(release: &str, db_kind: DriveKind) -> bool {
    let new_enough = CephVersion::parse(release).is_none_or(|v| v.major >= 17);
    new_enough && db_kind != DriveKind::Hdd
}

/// The mgr balancer's state (`ceph balancer mode upmap` / `ceph balancer off`), which
/// decides whether the PGs an OSD holds are evened out. A recorded fact of the cluster:
/// the model assumes an even placement (`qn::ceph`, "Not modelled").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Balancer {
    /// The upmap balancer: every OSD holds the mean PG count ±1.
    Upmap,
    /// No balancer: the PGs an OSD holds are CRUSH's pseudo-random draw.
    Off,
}

impl Balancer {
    /// The default of `release`: upmap from Pacific ("The balancer is now on by default in
    /// upmap mode", v16.2.0 release notes), off before. A release that does not parse is
    /// taken as current.
    pub fn default_for(release: &str) -> Self {
        if CephVersion::parse(release).is_none_or(|v| v.major >= 16) {
            Balancer::Upmap
        } else {
            Balancer::Off
        }
    }
}

/// Ceph options a scenario states because they change the model, by their Ceph names
/// (`[cluster.ceph_config]`). An option left out takes the release's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CephConfigSpec {
    /// BlueFS buffered (page-cache) I/O for RocksDB's files; false = O_DIRECT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bluefs_buffered_io: Option<bool>,
    /// Keep allocation metadata out of RocksDB (Quincy's "NCB").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bluestore_allocation_from_file: Option<bool>,
    /// Tentacle's optimised erasure-coding path (`allow_ec_optimizations`, "FastEC"):
    /// partial reads and writes touch only the shards they cover. Only meaningful on an
    /// erasure-coded pool of release 20 or later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_ec_optimizations: Option<bool>,
    /// The memory each OSD aims at (`osd_memory_target`); BlueStore's autotuned cache is
    /// what is left of it after the OSD's base use. 4 GiB when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_memory_target: Option<Bytes>,
    /// A fixed BlueStore cache (`bluestore_cache_size` with `bluestore_cache_autotune =
    /// false`): the cache is this size whatever the memory target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bluestore_cache_size: Option<Bytes>,
    /// Share of the BlueStore cache for onodes and their extent maps
    /// (`bluestore_cache_meta_ratio`), 0..1; 0.45 when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bluestore_cache_meta_ratio: Option<f64>,
    /// `mon_max_pg_per_osd`, when the cluster raised it: only checks `pool.pg_count`
    /// (250 when left out, [`crate::spec::MON_MAX_PG_PER_OSD_DEFAULT`]); no prediction reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mon_max_pg_per_osd: Option<u32>,
}

/// `osd_memory_target`'s default since its introduction (ceph/ceph PR #22970, backported to
/// Luminous in PR #24065: "the default osd memory target is 4GB").
pub const OSD_MEMORY_TARGET_DEFAULT_BYTES: u64 = 4 << 30;
/// `osd_memory_base`: memory the autotuner assumes the OSD uses outside its caches
/// (768 MiB, the option's default in the BlueStore configuration reference).
pub const OSD_MEMORY_BASE_BYTES: f64 = 768.0 * 1048576.0;
/// `osd_memory_expected_fragmentation`: share of the target lost to heap fragmentation
/// (0.15, the option's default in the same reference).
pub const OSD_MEMORY_FRAGMENTATION: f64 = 0.15;
/// `osd_memory_cache_min`: the autotuner never shrinks the caches below 128 MiB.
pub const OSD_MEMORY_CACHE_MIN_BYTES: f64 = 128.0 * 1048576.0;
/// `bluestore_cache_meta_ratio`'s default (0.45, Nautilus to Squid; unverified recall of
/// the option table, see models/prior.toml `onode_cache_bytes`).
pub const BLUESTORE_CACHE_META_RATIO_DEFAULT: f64 = 0.45;

/// `bluestore_cache_size_ssd` / `_hdd` before cache autotuning: the fixed BlueStore cache
/// of a flash / rotational main device (3 GiB / 1 GiB; the Luminous BlueStore configuration
/// reference).
pub const BLUESTORE_CACHE_SIZE_SSD_FIXED_BYTES: f64 = 3.0 * 1073741824.0;
pub const BLUESTORE_CACHE_SIZE_HDD_FIXED_BYTES: f64 = 1073741824.0;
/// `bluestore_cache_kv_max` before cache autotuning (512 MiB): RocksDB's share of the fixed
/// cache is capped there and the metadata share takes the rest.
pub const BLUESTORE_CACHE_KV_MAX_BYTES: f64 = 536870912.0;
/// `bluestore_cache_kv_ratio` before cache autotuning (0.99; `bluestore_cache_meta_ratio`
/// 0.01).
pub const BLUESTORE_CACHE_KV_RATIO_FIXED: f64 = 0.99;

/// True for releases whose BlueStore cache is a fixed size: before 12.2.10, where
/// `osd_memory_target` and cache autotuning replaced it (ceph.io "v12.2.10 Luminous
/// released": "The bluestore_cache_* options are no longer needed. They are replaced by
/// osd_memory_target, defaulting to 4GB"; the changelog's "os/bluestore: cache autotuning
/// and memory limit (pr#24065)"). A downstream build of an older version that carries the
/// backport (Red Hat Ceph Storage 3.2 on 12.2.8 has `bluestore_cache_autotune`) states
/// `osd_memory_target`.
pub fn fixed_bluestore_cache(release: &str) -> bool {
    CephVersion::parse(release)
        .is_some_and(|v| v.major < 12 || (v.major == 12 && (v.minor, v.patch) < (2, 10)))
}

/// Bytes of a fixed-size BlueStore cache (before 12.2.10) that hold onodes:
/// `bluestore_cache_size` (else 3 GiB on a flash main device, 1 GiB on a disk) times the
/// metadata share, which `BlueStore::_set_cache_sizes` raises by what `bluestore_cache_kv_max`
/// (512 MiB) takes from RocksDB's 0.99: `1 − min(0.99, 512 MiB / cache)` (0.83 of 3 GiB,
/// 0.5 of 1 GiB) unless `bluestore_cache_meta_ratio` is stated. A stated ratio is taken as
/// it is: Ceph also adds to it what the kv cap takes from `bluestore_cache_kv_ratio`, which
/// is not a scenario option (rhcs32's tuned 8 GiB at 0.8 / 0.2 would hold 0.94 of the cache
/// for metadata, not 0.8).
pub fn fixed_onode_cache_bytes(
    cache_size: Option<Bytes>,
    meta_ratio: Option<f64>,
    rotational: bool,
) -> f64 {
    let cache = cache_size.map_or(
        if rotational {
            BLUESTORE_CACHE_SIZE_HDD_FIXED_BYTES
        } else {
            BLUESTORE_CACHE_SIZE_SSD_FIXED_BYTES
        },
        |b| b.0 as f64,
    );
    let kv = (BLUESTORE_CACHE_KV_MAX_BYTES / cache.max(1.0)).min(BLUESTORE_CACHE_KV_RATIO_FIXED);
    cache * meta_ratio.unwrap_or(1.0 - kv)
}

/// Bytes of BlueStore cache that hold onodes: a fixed cache when `cache_size` is stated,
/// else what the autotuner leaves of the memory target (target × (1 − fragmentation) −
/// base, at least the cache minimum), times the metadata share.
pub fn onode_cache_bytes(
    memory_target: Option<Bytes>,
    cache_size: Option<Bytes>,
    meta_ratio: Option<f64>,
) -> f64 {
    let cache = match cache_size {
        Some(Bytes(c)) => c as f64,
        None => {
            let target = memory_target.map_or(OSD_MEMORY_TARGET_DEFAULT_BYTES, |b| b.0) as f64;
            (target * (1.0 - OSD_MEMORY_FRAGMENTATION) - OSD_MEMORY_BASE_BYTES)
                .max(OSD_MEMORY_CACHE_MIN_BYTES)
        }
    };
    cache * meta_ratio.unwrap_or(BLUESTORE_CACHE_META_RATIO_DEFAULT)
}

impl CephConfigSpec {
    /// True when no option is stated (the table is then left out when serialising).
    pub fn is_empty(&self) -> bool {
        self.bluefs_buffered_io.is_none()
            && self.bluestore_allocation_from_file.is_none()
            && self.allow_ec_optimizations.is_none()
            && self.osd_memory_target.is_none()
            && self.bluestore_cache_size.is_none()
            && self.bluestore_cache_meta_ratio.is_none()
            && self.mon_max_pg_per_osd.is_none()
    }

    /// The effective options for `release` with the DB on a device of `db_kind` and the
    /// main (data) device of `data_kind`.
    pub fn resolve(&self, release: &str, db_kind: DriveKind, data_kind: DriveKind) -> CephConfig {
        let fixed_cache = fixed_bluestore_cache(release) && self.osd_memory_target.is_none();
        CephConfig {
            bluefs_buffered_io: self
                .bluefs_buffered_io
                .unwrap_or_else(|| bluefs_buffered_io_default(release)),
            bluefs_buffered_io_stated: self.bluefs_buffered_io.is_some(),
            allocation_from_file: self
                .bluestore_allocation_from_file
                .unwrap_or_else(|| allocation_from_file_default(release, db_kind)),
            allocation_from_file_stated: self.bluestore_allocation_from_file.is_some(),
            ec_optimizations: self.allow_ec_optimizations.unwrap_or(false),
            onode_cache_bytes: if fixed_cache {
                fixed_onode_cache_bytes(
                    self.bluestore_cache_size,
                    self.bluestore_cache_meta_ratio,
                    data_kind == DriveKind::Hdd,
                )
            } else {
                onode_cache_bytes(
                    self.osd_memory_target,
                    self.bluestore_cache_size,
                    self.bluestore_cache_meta_ratio,
                )
            },
        }
    }
}

/// The options in effect on the OSDs (stated, or the release's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CephConfig {
    pub bluefs_buffered_io: bool,
    /// True when the scenario states `bluefs_buffered_io` (false: the release's default).
    pub bluefs_buffered_io_stated: bool,
    /// `bluestore_allocation_from_file`: allocation metadata is not committed to RocksDB.
    pub allocation_from_file: bool,
    /// True when the scenario states `bluestore_allocation_from_file`.
    pub allocation_from_file_stated: bool,
    /// `allow_ec_optimizations` (Tentacle's FastEC); off unless stated, as in Tentacle.
    #[serde(default)]
    pub ec_optimizations: bool,
    /// Bytes of each OSD's BlueStore cache that hold onodes ([`onode_cache_bytes`]).
    #[serde(default = "default_onode_cache_bytes")]
    pub onode_cache_bytes: f64,
}

fn default_onode_cache_bytes() -> f64 {
    onode_cache_bytes(None, None, None)
}

impl Default for CephConfig {
    /// Current releases' defaults on flash.
    fn default() -> Self {
        CephConfig {
            bluefs_buffered_io: true,
            bluefs_buffered_io_stated: false,
            allocation_from_file: true,
            allocation_from_file_stated: false,
            ec_optimizations: false,
            onode_cache_bytes: default_onode_cache_bytes(),
        }
    }
}
