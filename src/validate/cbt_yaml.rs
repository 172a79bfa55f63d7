//! `validate --emit-cbt`: the sweep as a CBT (Ceph Benchmarking Tool) `librbdfio`
//! configuration, whose results tree `import cbt` reads.
//!
//! What CBT does with it decides what is written here (ceph/cbt 9d6480fc):
//! - `cbt.py` 58-73 initialises each benchmark class once, for the first combination of
//!   the lists (`itertools.product` in `benchmarkfactory.py`, list order kept):
//!   `LibrbdFio.mkimages` (`benchmark/librbdfio.py` 347-365) deletes and re-creates
//!   `poolname` (`rmpool`, `mkpool`), creates that combination's `volumes_per_client`
//!   images and pre-fills them. So the pool is cephplan's own ([`CBT_POOL`]), never the
//!   user's, and a list of image counts runs largest first: every later point's images
//!   then exist.
//! - `cluster/ceph.py` 759-824 (`mkpool`) creates the pool from `pool_profiles[pool_profile]`
//!   (`pg_size`, `pgp_size`, `replication`: a size, or `erasure` with `erasure_profile`
//!   and `ec_overwrites`); without a profile it makes 1024 PGs of the cluster's default
//!   size, another pool than the scenario's. The profile here is the scenario's `[pool]`.
//!   An erasure-coded scenario's images keep their metadata in a replicated pool and
//!   their data in `CBT_POOL-data` (`data_pool_profile`, `librbdfio.py` 355-358).
//! - `cluster/ceph.py` 130-133: with `use_existing: true` CBT's `ceph`/`rbd` commands use
//!   `conf_file`; `make_profiles` (which would create `erasure_profiles`) runs only for a
//!   cluster CBT builds, so the erasure-code profile is created by hand (the header says how).
//! - `time` and `ramp` are whole seconds (`--runtime=%d` in `mkfiocmd`): a sub-second
//!   runtime is refused rather than rounded into another sweep.

use std::path::Path;

use super::{PointSetting, ValidateError, Vary};
use crate::io::GENERATED_MARKER;
use crate::spec::{FailureDomain, Protection, Scenario};

/// The pool CBT deletes, re-creates and runs in: CBT's own default `poolname`.
pub const CBT_POOL: &str = "cbt-librbdfio";

/// The pool CBT creates, as the scenario's `[pool]` states it.
#[derive(Debug, Clone, PartialEq)]
pub struct CbtPool {
    pub pg_count: u32,
    pub protection: Protection,
    pub failure_domain: FailureDomain,
    /// `[pool] erasure.stripe_unit` when stated.
    pub stripe_unit_bytes: Option<u64>,
}

impl CbtPool {
    /// The scenario's pool; refuses one without `pg_count` (CBT would make 1024 PGs).
    pub fn of(scenario: &Scenario, path: &Path) -> Result<Self, ValidateError> {
        let pool = &scenario.spec.pool;
        let pg_count = pool.pg_count.ok_or_else(|| ValidateError::CbtPgCount {
            scenario: path.to_path_buf(),
        })?;
        Ok(CbtPool {
            pg_count,
            protection: scenario.protection,
            failure_domain: scenario.failure_domain,
            stripe_unit_bytes: pool.erasure.and_then(|e| e.stripe_unit).map(|b| b.0),
        })
    }

    /// The erasure-code profile's name, `cephplan-k<K>m<M>` (as `lab up --ec` names it).
    fn ec_profile(&self) -> Option<String> {
        match self.protection {
            Protection::Erasure { k, m } => Some(format!("cephplan-k{k}m{m}")),
            Protection::Replicated { .. } => None,
        }
    }
}

/// What `validate --emit-cbt` turns into a CBT configuration.
#[derive(Debug, Clone)]
pub struct CbtSweep<'a> {
    pub base: &'a PointSetting,
    pub vary: Option<&'a Vary>,
    pub runtime_secs: f64,
    pub ramp_time_secs: f64,
    pub image_size_bytes: u64,
    pub pool: CbtPool,
    /// `--ceph-conf`, written as the cluster's `conf_file`.
    pub conf_file: &'a Path,
}

/// Whole seconds, or the error naming the flag.
fn whole_secs(flag: &'static str, secs: f64) -> Result<u64, ValidateError> {
    if secs.fract() != 0.0 || !secs.is_finite() || secs < 0.0 {
        return Err(ValidateError::CbtWholeSeconds { flag, secs });
    }
    Ok(secs as u64)
}

/// A YAML double-quoted scalar (JSON's string syntax is YAML's).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The CBT configuration that runs the same sweep as `validate` with CBT's `librbdfio`
/// benchmark: one volume per image on one client, one fio job per volume, the swept
/// dimension as a list (CBT runs every combination of its list-valued settings), in pool
/// [`CBT_POOL`] made as the scenario's `[pool]` (see the module doc). The `cluster`
/// section names no hosts of yours: it is a stub to fill in.
pub fn cbt_yaml(sweep: &CbtSweep) -> Result<String, ValidateError> {
    let base = sweep.base;
    let runtime = whole_secs("--runtime", sweep.runtime_secs)?;
    let ramp = whole_secs("--ramp-time", sweep.ramp_time_secs)?;
    let list = |v: Vec<String>| format!("[{}]", v.join(", "));
    let one = |v: String| list(vec![v]);
    let (op_size, iodepth, volumes) = match sweep.vary {
        Some(Vary::BlockSizeBytes(b)) => (
            list(b.iter().map(u64::to_string).collect()),
            one(base.iodepth.to_string()),
            one(base.images.to_string()),
        ),
        Some(Vary::Iodepth(d)) => (
            one(base.block_size_bytes.to_string()),
            list(d.iter().map(u32::to_string).collect()),
            one(base.images.to_string()),
        ),
        Some(Vary::Images(n)) => {
            // Largest first: CBT creates and pre-fills the images of the first combination
            // only.
            let mut n = n.clone();
            n.sort_unstable_by(|a, b| b.cmp(a));
            n.dedup();
            (
                one(base.block_size_bytes.to_string()),
                one(base.iodepth.to_string()),
                list(n.iter().map(u32::to_string).collect()),
            )
        }
        None => (
            one(base.block_size_bytes.to_string()),
            one(base.iodepth.to_string()),
            one(base.images.to_string()),
        ),
    };
    let pool = &sweep.pool;
    let conf = sweep.conf_file.display().to_string();
    let mut y = format!(
        "# {GENERATED_MARKER} validate --emit-cbt: the same sweep as a CBT librbdfio benchmark.\n\
         # Fill in `cluster` for your hosts (CBT's own documentation lists its keys); run it with\n\
         # `cbt.py --archive=DIR THIS.yaml`, then `cephplan import cbt DIR --scenario ... --out ...`.\n\
         # CBT runs every combination of the lists below, one point each.\n\
         # CBT DELETES and re-creates pool \"{CBT_POOL}\"{data} before the run (use_existing_volumes:\n\
         # false), as the scenario's [pool] states it (pool_profiles below); no other pool is touched.\n\
         # CBT's ceph and rbd commands read conf_file; its fio (rbd engine) reads /etc/ceph/ceph.conf\n\
         # (or CEPH_CONF) on each client, which must describe this cluster too.\n",
        data = if pool.ec_profile().is_some() {
            format!(" and its data pool \"{CBT_POOL}-data\"")
        } else {
            String::new()
        },
    );
    if let (Some(profile), Protection::Erasure { k, m }) = (pool.ec_profile(), pool.protection) {
        let domain = match pool.failure_domain {
            FailureDomain::Host => "host",
            FailureDomain::Osd => "osd",
        };
        let su = pool
            .stripe_unit_bytes
            .map(|b| format!(" stripe_unit={b}"))
            .unwrap_or_default();
        y.push_str(&format!(
            "# Before the run, create the erasure-code profile the data pool uses (CBT creates\n\
             # profiles only for a cluster it builds itself):\n\
             #   ceph -c {conf} osd erasure-code-profile set {profile} k={k} m={m} crush-failure-domain={domain}{su}\n"
        ));
    }
    y.push_str(&format!(
        "cluster:\n  user: \"ceph\"\n  head: \"localhost\"\n  clients: [\"localhost\"]\n  osds: []\n  mons: {{}}\n  use_existing: true\n  conf_file: {}\n  iterations: 1\n  tmp_dir: \"/tmp/cbt\"\n  clusterid: \"ceph\"\n  pool_profiles:\n",
        quoted(&conf)
    ));
    let pgs = pool.pg_count;
    match pool.protection {
        Protection::Erasure { k, m } => {
            // The images' metadata (headers, omap) in a small replicated pool of the
            // cluster's default size; their data in the erasure-coded pool the scenario
            // describes.
            y.push_str(&format!(
                "    cephplan-metadata:\n      pg_size: 8\n      pgp_size: 8\n    cephplan:\n      pg_size: {pgs}\n      pgp_size: {pgs}\n      replication: \"erasure\"\n      erasure_profile: {}\n      ec_overwrites: true\n",
                quoted(&format!("cephplan-k{k}m{m}"))
            ));
        }
        Protection::Replicated { size } => {
            y.push_str(&format!(
                "    cephplan:\n      pg_size: {pgs}\n      pgp_size: {pgs}\n      replication: {size}\n"
            ));
        }
    }
    y.push_str("benchmarks:\n  librbdfio:\n");
    let mut kv = |k: &str, v: String| y.push_str(&format!("    {k}: {v}\n"));
    kv("time", runtime.to_string());
    kv("time_based", "true".into());
    kv("ramp", ramp.to_string());
    kv(
        "vol_size",
        sweep.image_size_bytes.div_ceil(1 << 20).to_string(),
    );
    kv("mode", one(format!("\"{}\"", base.pattern.as_fio())));
    kv("op_size", op_size);
    kv("iodepth", iodepth);
    kv("volumes_per_client", volumes);
    kv("procs_per_volume", "1".into());
    kv("numjobs", "1".into());
    if let Some(r) = base.read_percent {
        kv("rwmixread", r.to_string());
    }
    kv("poolname", quoted(CBT_POOL));
    if pool.ec_profile().is_some() {
        kv("pool_profile", quoted("cephplan-metadata"));
        kv("data_pool_profile", quoted("cephplan"));
    } else {
        kv("pool_profile", quoted("cephplan"));
    }
    kv("use_existing_volumes", "false".into());
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::RwPattern;

    fn base() -> PointSetting {
        PointSetting {
            pattern: RwPattern::Randwrite,
            block_size_bytes: 4096,
            iodepth: 16,
            images: 1,
            read_percent: None,
        }
    }

    fn sweep<'a>(base: &'a PointSetting, vary: Option<&'a Vary>, pool: CbtPool) -> CbtSweep<'a> {
        CbtSweep {
            base,
            vary,
            runtime_secs: 20.0,
            ramp_time_secs: 0.0,
            image_size_bytes: 1 << 30,
            pool,
            conf_file: Path::new("/tmp/lab/ceph.conf"),
        }
    }

    fn replicated(size: u32, pg_count: u32) -> CbtPool {
        CbtPool {
            pg_count,
            protection: Protection::Replicated { size },
            failure_domain: FailureDomain::Osd,
            stripe_unit_bytes: None,
        }
    }

    /// A line of `key: value` under `section` (indentation included), from the YAML.
    fn has(y: &str, line: &str) -> bool {
        y.lines().any(|l| l == line)
    }

    /// Audit F1: the pool CBT deletes and re-creates is cephplan's own, made from the
    /// scenario's `[pool]` (`cluster/ceph.py` `mkpool` reads `pg_size`, `pgp_size`,
    /// `replication` from `pool_profiles[pool_profile]`); `conf_file` is `--ceph-conf`.
    #[test]
    fn the_pool_is_cephplans_own_made_as_the_scenario_states() {
        let b = base();
        let y = cbt_yaml(&sweep(&b, None, replicated(1, 32))).unwrap();
        for line in [
            "  conf_file: \"/tmp/lab/ceph.conf\"",
            "  pool_profiles:",
            "    cephplan:",
            "      pg_size: 32",
            "      pgp_size: 32",
            "      replication: 1",
            "    poolname: \"cbt-librbdfio\"",
            "    pool_profile: \"cephplan\"",
            "    use_existing_volumes: false",
        ] {
            assert!(has(&y, line), "{line:?} in\n{y}");
        }
        assert!(!y.contains("poolname: \"rbd\""), "{y}");
        assert!(!y.contains("data_pool_profile"), "{y}");
        assert!(
            y.contains("CBT DELETES and re-creates pool \"cbt-librbdfio\""),
            "{y}"
        );
        // F7: the file ends with a newline.
        assert!(y.ends_with("use_existing_volumes: false\n"), "{y:?}");
    }

    /// Audit F1, erasure coding: metadata in a replicated pool, data in
    /// `cbt-librbdfio-data` made `erasure` with the profile and `ec_overwrites`
    /// (`mkpool`'s keys); the header gives the command that creates the profile.
    #[test]
    fn an_erasure_coded_scenario_gets_a_data_pool_profile() {
        let b = base();
        let pool = CbtPool {
            pg_count: 16,
            protection: Protection::Erasure { k: 2, m: 1 },
            failure_domain: FailureDomain::Osd,
            stripe_unit_bytes: Some(4096),
        };
        let y = cbt_yaml(&sweep(&b, None, pool)).unwrap();
        for line in [
            "    cephplan-metadata:",
            "    cephplan:",
            "      pg_size: 16",
            "      replication: \"erasure\"",
            "      erasure_profile: \"cephplan-k2m1\"",
            "      ec_overwrites: true",
            "    pool_profile: \"cephplan-metadata\"",
            "    data_pool_profile: \"cephplan\"",
            "#   ceph -c /tmp/lab/ceph.conf osd erasure-code-profile set cephplan-k2m1 k=2 m=1 crush-failure-domain=osd stripe_unit=4096",
        ] {
            assert!(has(&y, line), "{line:?} in\n{y}");
        }
        assert!(y.contains("its data pool \"cbt-librbdfio-data\""), "{y}");
    }

    /// Audit F2: CBT creates the images of the first combination only, so the image
    /// counts run largest first.
    #[test]
    fn image_counts_run_largest_first() {
        let b = base();
        let vary = Vary::Images(vec![1, 2, 4]);
        let y = cbt_yaml(&sweep(&b, Some(&vary), replicated(1, 32))).unwrap();
        assert!(has(&y, "    volumes_per_client: [4, 2, 1]"), "{y}");
    }

    /// Audit F7: CBT's `time` and `ramp` are whole seconds; 500 ms is refused, naming the
    /// flag, not rounded to 1 s.
    #[test]
    fn sub_second_runtimes_are_refused() {
        let b = base();
        let mut s = sweep(&b, None, replicated(1, 32));
        s.runtime_secs = 0.5;
        let e = cbt_yaml(&s).unwrap_err().to_string();
        assert!(
            e.contains("--runtime") && e.contains("whole seconds"),
            "{e}"
        );
        s.runtime_secs = 20.0;
        s.ramp_time_secs = 1.5;
        let e = cbt_yaml(&s).unwrap_err().to_string();
        assert!(e.contains("--ramp-time"), "{e}");
    }
}
