//! The RBD images validation creates, and the record of them in the output directory.
//!
//! Every image name is written to `images-<run id>.json` in the output directory
//! **before** `rbd create` runs, and dropped from it once `rbd rm` succeeded; the file is
//! removed when no image is left. So a `kill -9` of cephplan, at any moment, leaves a
//! record of every image that may exist, and `cephplan validate --cleanup --out DIR`
//! ([`cleanup`]) removes exactly those — and only those whose names still carry
//! cephplan's prefix for that run and that the pool lists.
//!
//! The cluster is reached through [`Cluster`] ([`CephCluster`] runs `ceph`/`rbd`), so that
//! this logic is tested without one. Not here: choosing image names and sizes (the sweep in
//! the parent module), fio.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::progress::Progress;
use crate::spec::Protection;

use serde::{Deserialize, Serialize};

use super::{ValidateError, IMAGE_PREFIX};
use crate::io::{write_atomic_owned, GENERATED_MARKER};
use crate::lab::{CephCli, LabError};
use crate::progress::NoProgress;

/// Format version of the image record (`images-<run id>.json`).
pub const IMAGES_SCHEMA_VERSION: u32 = 1;

/// What validation asks of a cluster. Implemented by [`CephCluster`]; tests use a fake.
pub trait Cluster {
    /// The pools (`ceph osd pool ls`); an error means the cluster is unreachable.
    fn pools(&self) -> Result<Vec<String>, LabError>;
    /// The images in `pool` (`rbd ls`).
    fn images(&self, pool: &str) -> Result<Vec<String>, LabError>;
    /// `rbd create` in `pool`, its data objects in `data_pool` when given (`rbd create
    /// --data-pool`: an erasure-coded pool holds the data, `pool` the image's metadata);
    /// fails when the name exists, so nothing foreign is ever reused.
    fn create_image(
        &self,
        pool: &str,
        data_pool: Option<&str>,
        name: &str,
        size_mib: u64,
    ) -> Result<(), LabError>;
    /// `rbd rm`; not cancellable (it runs during cleanup after a Ctrl-C).
    fn remove_image(&self, pool: &str, name: &str) -> Result<(), LabError>;
    /// The OSDs reported down, `None` if the cluster does not answer.
    fn osds_down(&self) -> Option<Vec<String>>;
    /// The number of placement groups of `pool` (`ceph osd pool get POOL pg_num`), `None`
    /// if the cluster does not say.
    fn pool_pg_num(&self, pool: &str) -> Option<u32>;
    /// How `pool` protects its data: its `size` (replicated) or its erasure-code profile's
    /// k and m (`ceph osd pool ls detail`, `ceph osd erasure-code-profile get`); `None` if
    /// the cluster does not say.
    fn pool_protection(&self, pool: &str) -> Option<Protection>;
    /// The number of OSDs up (`ceph osd dump`), `None` if the cluster does not answer.
    fn osds_up(&self) -> Option<u32>;
    /// The wait between two `rbd rm` attempts on an image a client still has open
    /// ([`WATCH_RETRY_DELAY`]; a cluster in memory answers at once).
    fn watch_retry_delay(&self) -> Duration {
        WATCH_RETRY_DELAY
    }
    /// Every OSD's `perf dump`, by OSD id (`ceph osd ls`, then `ceph tell osd.N perf dump`
    /// for each); refused beyond [`super::counters::MAX_COUNTER_OSDS`] OSDs.
    fn osd_perf_dumps(&self) -> Result<BTreeMap<u32, serde_json::Value>, LabError>;
    /// The CPU seconds each of the cluster's OSD processes on this machine has used since
    /// it started, by OSD id ([`super::osd_cpu::local_osd_cpu_secs`]); empty when none
    /// runs here.
    fn osd_cpu_secs(&self) -> Result<BTreeMap<u32, f64>, String>;
}

/// [`Cluster`] through the `ceph` and `rbd` command-line tools.
pub struct CephCluster<'a>(pub(crate) CephCli<'a>);

impl<'a> CephCluster<'a> {
    /// The cluster of `conf`; failed commands point at the logs its ceph.conf names
    /// ([`crate::lab::conf_log_dir`]), and the cancellable ones (all but `rbd rm`) stop
    /// when `progress` is cancelled.
    pub fn new(conf: &'a Path, progress: &'a dyn crate::progress::Progress) -> Self {
        CephCluster(CephCli {
            conf,
            log_dir: crate::lab::conf_log_dir(conf),
            progress,
        })
    }

    /// The same cluster, with commands that no Ctrl-C stops (short reads of its state).
    fn quiet(&self) -> CephCli<'_> {
        CephCli {
            conf: self.0.conf,
            log_dir: self.0.log_dir.clone(),
            progress: &NoProgress,
        }
    }

    /// `ceph osd dump -f json`.
    fn osd_dump(&self) -> Option<serde_json::Value> {
        let s = self.quiet().ceph(&["osd", "dump", "-f", "json"]).ok()?;
        serde_json::from_str(&s).ok()
    }
}

impl Cluster for CephCluster<'_> {
    fn pools(&self) -> Result<Vec<String>, LabError> {
        let s = self.0.ceph(&["osd", "pool", "ls", "-f", "json"])?;
        Ok(serde_json::from_str(&s).unwrap_or_default())
    }

    fn images(&self, pool: &str) -> Result<Vec<String>, LabError> {
        let s = self.0.run(
            "rbd",
            &["ls", "-p", pool, "--format", "json"],
            Duration::from_secs(60),
        )?;
        Ok(serde_json::from_str(&s).unwrap_or_default())
    }

    fn create_image(
        &self,
        pool: &str,
        data_pool: Option<&str>,
        name: &str,
        size_mib: u64,
    ) -> Result<(), LabError> {
        let size = format!("{size_mib}M");
        let path = format!("{pool}/{name}");
        let mut args = vec!["create", "--size", &size];
        if let Some(d) = data_pool {
            args.extend(["--data-pool", d]);
        }
        args.push(&path);
        self.0
            .run("rbd", &args, Duration::from_secs(60))
            .map(|_| ())
    }

    fn remove_image(&self, pool: &str, name: &str) -> Result<(), LabError> {
        let spec = format!("{pool}/{name}");
        self.0
            .run_with(
                "rbd",
                &["rm", "--no-progress", &spec],
                Duration::from_secs(120),
                &NoProgress,
            )
            .map(|_| ())
    }

    fn pool_pg_num(&self, pool: &str) -> Option<u32> {
        let s = self
            .quiet()
            .ceph(&["osd", "pool", "get", pool, "pg_num", "-f", "json"])
            .ok()?;
        let v: serde_json::Value = serde_json::from_str(&s).ok()?;
        v.get("pg_num")?.as_u64()?.try_into().ok()
    }

    fn pool_protection(&self, pool: &str) -> Option<Protection> {
        let s = self
            .quiet()
            .ceph(&["osd", "pool", "ls", "detail", "-f", "json"])
            .ok()?;
        let pools: Vec<serde_json::Value> = serde_json::from_str(&s).ok()?;
        let p = pools.iter().find(|p| p["pool_name"] == pool)?;
        // Ceph's pg_pool_t: type 1 replicated, 3 erasure.
        if p["type"].as_u64() == Some(3) {
            let profile = p["erasure_code_profile"].as_str()?;
            let s = self
                .quiet()
                .ceph(&["osd", "erasure-code-profile", "get", profile, "-f", "json"])
                .ok()?;
            let v: serde_json::Value = serde_json::from_str(&s).ok()?;
            // The profile's values are strings ("k": "2").
            let num = |key: &str| -> Option<u32> {
                let x = &v[key];
                x.as_str()
                    .and_then(|t| t.parse().ok())
                    .or_else(|| x.as_u64().and_then(|n| n.try_into().ok()))
            };
            Some(Protection::Erasure {
                k: num("k")?,
                m: num("m")?,
            })
        } else {
            Some(Protection::Replicated {
                size: p["size"].as_u64()?.try_into().ok()?,
            })
        }
    }

    fn osds_up(&self) -> Option<u32> {
        let v = self.osd_dump()?;
        let up = v["osds"]
            .as_array()?
            .iter()
            .filter(|o| o["up"].as_u64() == Some(1))
            .count();
        up.try_into().ok()
    }

    fn osds_down(&self) -> Option<Vec<String>> {
        let v = self.osd_dump()?;
        Some(
            v["osds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|o| o["up"].as_u64() == Some(0))
                .map(|o| format!("osd.{}", o["osd"]))
                .collect(),
        )
    }

    fn osd_perf_dumps(&self) -> Result<BTreeMap<u32, serde_json::Value>, LabError> {
        let bad = |detail: String| LabError::Step {
            step: "ceph osd ls / ceph tell osd.N perf dump".into(),
            detail,
            log_dir: self.0.log_dir.clone(),
        };
        let ids: Vec<u32> = serde_json::from_str(&self.0.ceph(&["osd", "ls", "-f", "json"])?)
            .map_err(|e| {
                bad(format!(
                    "`ceph osd ls` did not print a list of OSD ids: {e}"
                ))
            })?;
        if ids.len() > super::counters::MAX_COUNTER_OSDS {
            return Err(bad(format!(
                "{} OSDs: reading every OSD's counters around each point takes two `ceph \
                 tell` calls per OSD; leave out --osd-counters on clusters of more than {}",
                ids.len(),
                super::counters::MAX_COUNTER_OSDS
            )));
        }
        let mut dumps = BTreeMap::new();
        for id in ids {
            let name = format!("osd.{id}");
            let text = self
                .0
                .ceph(&["tell", &name, "perf", "dump", "-f", "json"])?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| bad(format!("`ceph tell {name} perf dump` is not JSON: {e}")))?;
            dumps.insert(id, v);
        }
        Ok(dumps)
    }

    fn osd_cpu_secs(&self) -> Result<BTreeMap<u32, f64>, String> {
        super::osd_cpu::local_osd_cpu_secs(self.0.conf)
    }
}

/// The record of the images one validation run created (`images-<run id>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageRecord {
    pub generator: String,
    pub schema_version: u32,
    pub run_id: String,
    pub pool: String,
    /// The pool holding the images' data (`rbd create --data-pool`), when not `pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// The cluster's ceph.conf (absolute when it could be resolved).
    pub ceph_conf: PathBuf,
    /// Images that may exist: recorded before `rbd create`, dropped after `rbd rm`.
    pub images: Vec<String>,
}

impl ImageRecord {
    /// The name every image of run `run_id` carries at its start.
    pub fn name_prefix(&self) -> String {
        format!("{IMAGE_PREFIX}{}-", self.run_id)
    }
}

/// Path of the record of run `run_id` in `out_dir`.
pub fn record_path(out_dir: &Path, run_id: &str) -> PathBuf {
    out_dir.join(format!("images-{run_id}.json"))
}

fn save_record(path: &Path, record: &ImageRecord) -> Result<(), ValidateError> {
    if record.images.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ValidateError::Write(crate::io::WriteError::Io {
                    path: path.to_path_buf(),
                    error: e,
                }))
            }
            _ => Ok(()),
        };
    }
    let json = serde_json::to_string_pretty(record).expect("record serialises");
    write_atomic_owned(path, json.as_bytes())?;
    Ok(())
}

/// The most RBD images one validation run creates (`--images`, `--vary images=`): one fio
/// job each, all created before the first point and removed one `rbd rm` at a time at the
/// end. A larger count is almost always a typo (`images=1,2,99999` would create 99,999
/// images); runs of more clients split across `--client` fio servers stay under it too.
pub const MAX_IMAGES: u32 = 64;

/// How often `rbd rm` is tried on an image a client still has open ("image still has
/// watchers"): a fio that was killed holds its image until the OSDs' watch timeout (about
/// 30 s), so [`WATCH_RETRY_DELAY`] apart the attempts outlast it.
pub const WATCH_ATTEMPTS: u32 = 4;
/// The wait between two `rbd rm` attempts on an image a client still has open.
pub const WATCH_RETRY_DELAY: Duration = Duration::from_secs(10);

/// True for the error `rbd rm` gives while a client still has the image open.
pub fn is_watched_error(detail: &str) -> bool {
    detail.contains("has watchers")
}

/// Why images could not be removed (see [`Removal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftCause {
    /// OSDs down: `rbd rm` would block on their placement groups; nothing was tried.
    OsdsDown(Vec<String>),
    /// A client still had them open after every attempt ("image still has watchers").
    Watched,
    /// `rbd rm` failed otherwise; its error.
    Failed(String),
}

impl LeftCause {
    /// Why, and what to do, for an error message (`out_dir` holds the record).
    pub fn explain(&self, out_dir: &Path) -> String {
        let cleanup = format!("`cephplan validate --cleanup --out {}`", out_dir.display());
        match self {
            LeftCause::OsdsDown(down) => format!(
                "{} down, where `rbd rm` would block on their placement groups. Bring the OSDs up, then run {cleanup}",
                down.join(", ")
            ),
            LeftCause::Watched => format!(
                "a client still has them open (\"image still has watchers\"; a fio that was killed holds its image for about 30 s, and so does an `rbd` command still running). Wait a minute, then run {cleanup}"
            ),
            LeftCause::Failed(e) => format!(
                "`rbd rm` failed: {e}. Once the cause is fixed, run {cleanup}"
            ),
        }
    }
}

/// What `Images::remove_all` left.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Removal {
    /// Images removed now.
    pub removed: usize,
    /// Images still there (kept in the record), with why.
    pub left: Vec<String>,
    pub cause: Option<LeftCause>,
}

/// The images a run created, kept in step with their record on disk. [`Images::remove_all`]
/// removes them; dropping the guard does the same (a panic must not leave images behind).
pub(super) struct Images<'a> {
    cluster: &'a dyn Cluster,
    progress: &'a dyn Progress,
    path: PathBuf,
    record: ImageRecord,
    /// Set by [`Images::remove_all`], so that dropping the guard does not try again.
    removal_tried: bool,
}

impl<'a> Images<'a> {
    pub(super) fn new(
        cluster: &'a dyn Cluster,
        progress: &'a dyn Progress,
        out_dir: &Path,
        run_id: &str,
        pool: &str,
        data_pool: Option<&str>,
        ceph_conf: &Path,
    ) -> Self {
        Images {
            cluster,
            progress,
            path: record_path(out_dir, run_id),
            record: ImageRecord {
                generator: format!("{GENERATED_MARKER} validate: RBD images of this run; `cephplan validate --cleanup --out DIR` removes them"),
                schema_version: IMAGES_SCHEMA_VERSION,
                run_id: run_id.to_string(),
                pool: pool.to_string(),
                data_pool: data_pool.map(str::to_string),
                ceph_conf: std::fs::canonicalize(ceph_conf)
                    .unwrap_or_else(|_| ceph_conf.to_path_buf()),
                images: Vec::new(),
            },
            removal_tried: false,
        }
    }

    pub(super) fn created(&self) -> &[String] {
        &self.record.images
    }

    /// Records `name`, then creates it. A failed `rbd create` (the name exists: not ours)
    /// drops it from the record again.
    pub(super) fn create(&mut self, name: &str, size_mib: u64) -> Result<(), ValidateError> {
        self.record.images.push(name.to_string());
        save_record(&self.path, &self.record)?;
        let data_pool = self.record.data_pool.as_deref();
        if let Err(e) = self
            .cluster
            .create_image(&self.record.pool, data_pool, name, size_mib)
        {
            self.record.images.pop();
            let _ = save_record(&self.path, &self.record);
            return Err(ValidateError::Ceph {
                what: "rbd create".into(),
                detail: e.to_string(),
            });
        }
        Ok(())
    }

    /// Removes every created image, saying so through the progress (after a Ctrl-C this
    /// is what the run is doing); returns what it removed and what it could not (those
    /// stay in the record). With an OSD down, `rbd rm` would block on its placement groups,
    /// so nothing is attempted then. An image a client still has open is tried again
    /// ([`WATCH_ATTEMPTS`], [`WATCH_RETRY_DELAY`] apart).
    pub(super) fn remove_all(&mut self) -> Removal {
        self.removal_tried = true;
        let n = self.record.images.len();
        if n == 0 {
            return Removal::default();
        }
        if let Some(down) = self.cluster.osds_down().filter(|d| !d.is_empty()) {
            return Removal {
                removed: 0,
                left: self.record.images.clone(),
                cause: Some(LeftCause::OsdsDown(down)),
            };
        }
        let pool = self.record.pool.clone();
        let mut left = Vec::new();
        let mut cause = None;
        for (k, img) in std::mem::take(&mut self.record.images)
            .into_iter()
            .enumerate()
        {
            let what = format!("removing image {} of {n} cephplan created: {img}", k + 1);
            self.progress.message(&what);
            let mut attempt = 1;
            let failed = loop {
                match self.cluster.remove_image(&pool, &img) {
                    Ok(()) => break None,
                    Err(e) => {
                        let detail = e.to_string();
                        if !is_watched_error(&detail) {
                            break Some(LeftCause::Failed(detail));
                        }
                        if attempt >= WATCH_ATTEMPTS {
                            break Some(LeftCause::Watched);
                        }
                        self.progress.message(&format!(
                            "{what}: a client still has it open (a stopped fio releases it within about 30 s); trying again in {:.0} s (attempt {} of {WATCH_ATTEMPTS})",
                            self.cluster.watch_retry_delay().as_secs_f64(),
                            attempt + 1
                        ));
                        std::thread::sleep(self.cluster.watch_retry_delay());
                        attempt += 1;
                    }
                }
            };
            if let Some(c) = failed {
                left.push(img);
                cause.get_or_insert(c);
            }
        }
        self.record.images = left.clone();
        // Best effort: a record that lists removed images is harmless (cleanup skips
        // names the pool no longer lists).
        let _ = save_record(&self.path, &self.record);
        Removal {
            removed: n - left.len(),
            left,
            cause,
        }
    }
}

impl Drop for Images<'_> {
    fn drop(&mut self) {
        if !self.removal_tried {
            let _ = self.remove_all();
        }
    }
}

/// The image records in `out_dir` (`images-*.json`), sorted by file name.
pub fn records(out_dir: &Path) -> Result<Vec<(PathBuf, ImageRecord)>, ValidateError> {
    let io = |source| ValidateError::Record {
        path: out_dir.to_path_buf(),
        detail: format!("{source}"),
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(out_dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("images-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bad = |detail: String| ValidateError::Record {
                path: p.clone(),
                detail,
            };
            let text = std::fs::read_to_string(&p).map_err(|e| bad(e.to_string()))?;
            if !crate::io::is_ours_or_absent(&p) {
                return Err(bad("it was not written by cephplan".into()));
            }
            let r: ImageRecord = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
            if r.schema_version != IMAGES_SCHEMA_VERSION {
                return Err(bad(format!(
                    "schema_version {} (this cephplan reads {IMAGES_SCHEMA_VERSION})",
                    r.schema_version
                )));
            }
            Ok((p, r))
        })
        .collect()
}

/// Removes the fio job files validate left in `out_dir` (`cephplan-job-XXXXXX.fio`, fio's
/// input, deleted after each run unless cephplan was killed): only files of that name whose
/// first line is cephplan's marker. Returns the files removed. Like [`cleanup`], this
/// assumes no validation is running into `out_dir`.
pub fn remove_stale_job_files(out_dir: &Path) -> Result<Vec<PathBuf>, ValidateError> {
    let io = |e: std::io::Error| ValidateError::Record {
        path: out_dir.to_path_buf(),
        detail: e.to_string(),
    };
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(out_dir).map_err(io)? {
        let p = entry.map_err(io)?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.starts_with("cephplan-job-") && name.ends_with(".fio") && p.is_file()) {
            continue;
        }
        let head = std::fs::read_to_string(&p).unwrap_or_default();
        if head.lines().next() == Some(&format!("; {GENERATED_MARKER}")) {
            std::fs::remove_file(&p).map_err(io)?;
            removed.push(p);
        }
    }
    removed.sort();
    Ok(removed)
}

/// What [`cleanup`] did with one record's images.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CleanupReport {
    pub record: PathBuf,
    pub pool: String,
    /// Removed now.
    pub removed: Vec<String>,
    /// Listed in the record but not in the pool (already removed, or never created).
    pub absent: Vec<String>,
    /// Not touched: the name does not carry this run's prefix (`cephplan-val-<run id>-`).
    pub refused: Vec<String>,
    /// `rbd rm` failed (name, error); they stay in the record.
    pub failed: Vec<(String, String)>,
    /// The names in `failed` that a client still has open ("image still has watchers"):
    /// a killed fio holds its image about 30 s; a later `--cleanup` removes them.
    pub watched: Vec<String>,
}

/// Removes the images of one record (see the module doc for the rules) and rewrites the
/// record with the images still left (removing it when none are). An unreachable cluster or
/// a down OSD (where `rbd rm` blocks) is an error and changes nothing.
pub fn cleanup(
    path: &Path,
    record: &ImageRecord,
    cluster: &dyn Cluster,
) -> Result<CleanupReport, ValidateError> {
    let unreachable = |detail: String| ValidateError::Unreachable {
        conf: record.ceph_conf.clone(),
        detail,
    };
    match cluster.osds_down() {
        None => return Err(unreachable("ceph osd dump failed".into())),
        Some(down) if !down.is_empty() => {
            return Err(ValidateError::Ceph {
                what: format!("cleanup of {}", path.display()),
                detail: format!(
                    "{} down: `rbd rm` would block on its placement groups; nothing was removed. Bring the OSDs up and run the cleanup again",
                    down.join(", ")
                ),
            })
        }
        Some(_) => {}
    }
    let listed = cluster
        .images(&record.pool)
        .map_err(|e| unreachable(e.to_string()))?;
    let prefix = record.name_prefix();
    let mut report = CleanupReport {
        record: path.to_path_buf(),
        pool: record.pool.clone(),
        ..CleanupReport::default()
    };
    for img in &record.images {
        let suffix = img.strip_prefix(&prefix).unwrap_or("");
        if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
            report.refused.push(img.clone());
        } else if !listed.contains(img) {
            report.absent.push(img.clone());
        } else {
            match cluster.remove_image(&record.pool, img) {
                Ok(()) => report.removed.push(img.clone()),
                Err(e) => {
                    let detail = e.to_string();
                    if is_watched_error(&detail) {
                        report.watched.push(img.clone());
                    }
                    report.failed.push((img.clone(), detail));
                }
            }
        }
    }
    let left = ImageRecord {
        images: report.failed.iter().map(|(i, _)| i.clone()).collect(),
        ..record.clone()
    };
    save_record(path, &left)?;
    Ok(report)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A cluster in memory: pools, the images of pool `rbd`, a log of every call.
    #[derive(Default)]
    pub(crate) struct FakeCluster {
        pub images: RefCell<Vec<String>>,
        pub calls: RefCell<Vec<String>>,
        pub osds_down: Vec<String>,
        /// Names whose `rbd rm` fails.
        pub stuck: Vec<String>,
        /// Perf dumps returned one set per call, in order (an error once they run out).
        pub perf_dumps: RefCell<Vec<BTreeMap<u32, serde_json::Value>>>,
        /// OSD CPU readings returned one per call, in order (none local once they run out).
        pub cpu_secs: RefCell<Vec<BTreeMap<u32, f64>>>,
        /// When set, every OSD CPU reading fails with it.
        pub cpu_error: Option<String>,
        /// Pools besides "rbd" (an erasure-coded data pool).
        pub more_pools: Vec<String>,
        /// What `pool_pg_num` answers for every pool.
        pub pg_num: Option<u32>,
        /// What `pool_protection` answers for every pool.
        pub protection: Option<Protection>,
        /// What `osds_up` answers.
        pub osds_up: Option<u32>,
        /// Names whose next `rbd rm` attempts fail with "image still has watchers", how
        /// many times each (a client that still has the image open).
        pub watched: RefCell<BTreeMap<String, u32>>,
    }

    /// The images of run "r1" in pool "rbd" (data there too), recorded in `dir`.
    fn images_of<'a>(cluster: &'a FakeCluster, dir: &Path) -> Images<'a> {
        Images::new(
            cluster,
            &crate::progress::NoProgress,
            dir,
            "r1",
            "rbd",
            None,
            Path::new("ceph.conf"),
        )
    }

    fn step(detail: &str) -> LabError {
        LabError::Step {
            step: "rbd".into(),
            detail: detail.into(),
            log_dir: PathBuf::from("."),
        }
    }

    impl Cluster for FakeCluster {
        fn pools(&self) -> Result<Vec<String>, LabError> {
            let mut pools = vec!["rbd".to_string()];
            pools.extend(self.more_pools.iter().cloned());
            Ok(pools)
        }
        fn images(&self, _pool: &str) -> Result<Vec<String>, LabError> {
            Ok(self.images.borrow().clone())
        }
        fn create_image(
            &self,
            pool: &str,
            data_pool: Option<&str>,
            name: &str,
            _: u64,
        ) -> Result<(), LabError> {
            let data = data_pool
                .map(|d| format!(" --data-pool {d}"))
                .unwrap_or_default();
            self.calls
                .borrow_mut()
                .push(format!("create {pool}/{name}{data}"));
            if self.images.borrow().iter().any(|i| i == name) {
                return Err(step("image already exists"));
            }
            self.images.borrow_mut().push(name.into());
            Ok(())
        }
        fn remove_image(&self, pool: &str, name: &str) -> Result<(), LabError> {
            self.calls.borrow_mut().push(format!("rm {pool}/{name}"));
            if self.stuck.iter().any(|s| s == name) {
                return Err(step("rbd rm timed out"));
            }
            if let Some(n) = self.watched.borrow_mut().get_mut(name).filter(|n| **n > 0) {
                *n -= 1;
                return Err(step("2026-01-01T00:00:00 librbd: error removing image\nrbd: error: image still has watchers\nThis means the image is still open or the client using it crashed. Try again after closing/unmapping it or waiting 30s for the crashed client to timeout."));
            }
            self.images.borrow_mut().retain(|i| i != name);
            Ok(())
        }
        fn osds_down(&self) -> Option<Vec<String>> {
            Some(self.osds_down.clone())
        }
        fn pool_pg_num(&self, _pool: &str) -> Option<u32> {
            self.pg_num
        }
        fn pool_protection(&self, _pool: &str) -> Option<Protection> {
            self.protection
        }
        fn osds_up(&self) -> Option<u32> {
            self.osds_up
        }
        fn watch_retry_delay(&self) -> Duration {
            Duration::ZERO
        }
        fn osd_perf_dumps(&self) -> Result<BTreeMap<u32, serde_json::Value>, LabError> {
            self.calls.borrow_mut().push("perf dump".into());
            let mut dumps = self.perf_dumps.borrow_mut();
            if dumps.is_empty() {
                return Err(step("ceph tell osd.0 perf dump timed out"));
            }
            Ok(dumps.remove(0))
        }
        fn osd_cpu_secs(&self) -> Result<BTreeMap<u32, f64>, String> {
            if let Some(e) = &self.cpu_error {
                return Err(e.clone());
            }
            let mut cpu = self.cpu_secs.borrow_mut();
            Ok(if cpu.is_empty() {
                BTreeMap::new()
            } else {
                cpu.remove(0)
            })
        }
    }

    fn read(path: &Path) -> ImageRecord {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn each_image_is_recorded_before_it_is_created_and_dropped_after_removal() {
        let d = tempfile::tempdir().unwrap();
        let cluster = FakeCluster::default();
        let path = record_path(d.path(), "r1");
        let mut images = images_of(&cluster, d.path());
        images.create("cephplan-val-r1-0", 1024).unwrap();
        images.create("cephplan-val-r1-1", 1024).unwrap();
        assert_eq!(
            read(&path).images,
            ["cephplan-val-r1-0", "cephplan-val-r1-1"]
        );
        assert!(crate::io::is_ours_or_absent(&path));
        // A name that exists already (not ours) is not kept in the record.
        cluster.images.borrow_mut().push("cephplan-val-r1-2".into());
        assert!(images.create("cephplan-val-r1-2", 1024).is_err());
        assert_eq!(read(&path).images.len(), 2);
        let r = images.remove_all();
        assert_eq!((r.removed, r.left.len(), r.cause), (2, 0, None));
        // Every image removed: no record left, the foreign one untouched.
        assert!(!path.exists());
        assert_eq!(*cluster.images.borrow(), ["cephplan-val-r1-2"]);
    }

    #[test]
    fn an_image_that_cannot_be_removed_stays_in_the_record() {
        let d = tempfile::tempdir().unwrap();
        let cluster = FakeCluster {
            stuck: vec!["cephplan-val-r1-1".into()],
            ..FakeCluster::default()
        };
        let mut images = images_of(&cluster, d.path());
        images.create("cephplan-val-r1-0", 64).unwrap();
        images.create("cephplan-val-r1-1", 64).unwrap();
        let r = images.remove_all();
        assert_eq!(r.left, ["cephplan-val-r1-1"]);
        assert!(matches!(r.cause, Some(LeftCause::Failed(_))), "{r:?}");
        assert_eq!(
            read(&record_path(d.path(), "r1")).images,
            ["cephplan-val-r1-1"]
        );
        std::mem::forget(images);
    }

    /// What a `kill -9` leaves (the record, the images), then `--cleanup`: exactly the
    /// recorded images of this run's name are removed; an edited record naming a foreign
    /// image, another run's image or a name with extra text is refused.
    #[test]
    fn cleanup_removes_exactly_the_recorded_images_that_carry_the_runs_name() {
        let d = tempfile::tempdir().unwrap();
        let cluster = FakeCluster::default();
        let mut images = images_of(&cluster, d.path());
        images.create("cephplan-val-r1-0", 64).unwrap();
        images.create("cephplan-val-r1-1", 64).unwrap();
        std::mem::forget(images); // killed: no Drop, no removal
        let path = record_path(d.path(), "r1");
        let mut rec = read(&path);
        // Edited by hand (or by someone else): names that must never be removed.
        for foreign in [
            "precious",
            "cephplan-val-r2-0",
            "cephplan-val-r1-0-mine",
            "cephplan-val-r1-",
        ] {
            cluster.images.borrow_mut().push(foreign.into());
            rec.images.push(foreign.into());
        }
        rec.images.push("cephplan-val-r1-7".into()); // recorded, never created
        std::fs::write(&path, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
        let found = records(d.path()).unwrap();
        assert_eq!(found.len(), 1);
        let report = cleanup(&found[0].0, &found[0].1, &cluster).unwrap();
        assert_eq!(report.removed, ["cephplan-val-r1-0", "cephplan-val-r1-1"]);
        assert_eq!(report.absent, ["cephplan-val-r1-7"]);
        assert_eq!(
            report.refused,
            [
                "precious",
                "cephplan-val-r2-0",
                "cephplan-val-r1-0-mine",
                "cephplan-val-r1-"
            ]
        );
        assert!(report.failed.is_empty());
        let rm: Vec<String> = cluster
            .calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with("rm"))
            .cloned()
            .collect();
        assert_eq!(rm, ["rm rbd/cephplan-val-r1-0", "rm rbd/cephplan-val-r1-1"]);
        assert!(!path.exists());
        assert_eq!(cluster.images.borrow().len(), 4);
    }

    /// Finding 1 of the lab audit: `rbd rm` of an image a client still has open (a killed
    /// fio's, until the watch times out) is tried again; one that stays open is left,
    /// recorded, with the cause ("a client still has them open") and the remedy (wait, then
    /// `--cleanup`), never "an OSD is down".
    #[test]
    fn a_watched_image_is_tried_again_and_named_as_open_if_it_stays_so() {
        let d = tempfile::tempdir().unwrap();
        let cluster = FakeCluster::default();
        cluster
            .watched
            .borrow_mut()
            .insert("cephplan-val-r1-0".into(), 2);
        cluster
            .watched
            .borrow_mut()
            .insert("cephplan-val-r1-1".into(), 99);
        let mut images = images_of(&cluster, d.path());
        images.create("cephplan-val-r1-0", 64).unwrap();
        images.create("cephplan-val-r1-1", 64).unwrap();
        let r = images.remove_all();
        // The first released after two refusals; the second never did.
        assert_eq!(r.removed, 1);
        assert_eq!(r.left, ["cephplan-val-r1-1"]);
        assert_eq!(r.cause, Some(LeftCause::Watched));
        let rm = |name: &str| {
            cluster
                .calls
                .borrow()
                .iter()
                .filter(|c| *c == &format!("rm rbd/{name}"))
                .count()
        };
        assert_eq!(rm("cephplan-val-r1-0"), 3);
        assert_eq!(rm("cephplan-val-r1-1"), WATCH_ATTEMPTS as usize);
        assert_eq!(
            read(&record_path(d.path(), "r1")).images,
            ["cephplan-val-r1-1"]
        );
        let why = LeftCause::Watched.explain(Path::new("/tmp/out"));
        assert!(why.contains("a client still has them open"), "{why}");
        assert!(
            why.contains("Wait a minute, then run `cephplan validate --cleanup --out /tmp/out`"),
            "{why}"
        );
        assert!(!why.contains("OSD"), "{why}");
        // `--cleanup` while it is still open: failed, and named as watched.
        let (p, rec) = records(d.path()).unwrap().remove(0);
        let report = cleanup(&p, &rec, &cluster).unwrap();
        assert_eq!(report.watched, ["cephplan-val-r1-1"]);
        assert_eq!(report.failed.len(), 1);
    }

    #[test]
    fn cleanup_with_an_osd_down_touches_nothing() {
        let d = tempfile::tempdir().unwrap();
        let up = FakeCluster::default();
        let mut images = images_of(&up, d.path());
        images.create("cephplan-val-r1-0", 64).unwrap();
        std::mem::forget(images);
        let down = FakeCluster {
            images: RefCell::new(vec!["cephplan-val-r1-0".into()]),
            osds_down: vec!["osd.1".into()],
            ..FakeCluster::default()
        };
        let (p, r) = records(d.path()).unwrap().remove(0);
        let e = cleanup(&p, &r, &down).unwrap_err();
        assert!(e.to_string().contains("osd.1 down"), "{e}");
        assert!(down.calls.borrow().is_empty());
        assert!(p.exists());
    }

    #[test]
    fn a_record_cephplan_did_not_write_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("images-x.json");
        std::fs::write(&p, r#"{"schema_version":1,"run_id":"x","pool":"rbd","ceph_conf":"c","images":["a"],"generator":"me"}"#).unwrap();
        let e = records(d.path()).unwrap_err();
        assert!(e.to_string().contains("images-x.json"), "{e}");
        assert!(e.to_string().contains("not written by cephplan"), "{e}");
    }
}
