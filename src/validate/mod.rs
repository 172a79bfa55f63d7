//! Validation mode: runs fio's rbd engine against a real cluster for a sweep of points,
//! compares each measurement with the model's prediction, and saves after **each** point
//! (atomically): the raw fio JSON, the measured run as a row of the measured-run dataset
//! format that `calibrate` reads (`calibration-data/README.md`), and the comparison.
//!
//! Safety: it writes only to RBD images it created (`cephplan-val-<run id>-<n>`) unless the
//! user names an existing image twice (`--image NAME --i-own-this-image NAME`), and removes
//! the images it created when done — also after an error or a cancellation. Each image is
//! recorded in the output directory before it is created ([`images`]), so that after a
//! `kill -9` `validate --cleanup` removes exactly those. A hung cluster is a timeout,
//! never a hang.
//!
//! `refit` fits the model to such a dataset and compares each point before and after
//! (`validate --refit`). With `--osd-counters` every OSD's latency counters are read just
//! before and just after each point's fio run, and their change over it kept with the
//! point ([`counters`]): where the measured time went inside the OSDs; with them, the CPU
//! time the cluster's OSD processes on this machine used over the point ([`osd_cpu`]).
//!
//! Not here: fio itself (`fio`), the prediction (`predict`, reached through [`Predictor`]),
//! printing (the CLI).

mod cbt_yaml;
pub mod counters;
pub mod images;
pub mod osd_cpu;
mod output;
pub mod refit;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::fio::{EngineCheck, Executor, FioError, MeasuredSummary, RbdJob, RwPattern};
use crate::lab::LabError;
use crate::progress::Progress;
use images::Images;
pub use images::{
    cleanup, records, remove_stale_job_files, CephCluster, CleanupReport, Cluster, ImageRecord,
    MAX_IMAGES,
};

pub use cbt_yaml::{cbt_yaml, CbtPool, CbtSweep, CBT_POOL};
pub use output::{comparison_csv, measured_run};
pub use refit::{
    refit, refit_csv, refit_options, validation_datasets, Refit, RefitReport, RefitSpec,
};

/// Format version of the validation report JSON.
pub const REPORT_SCHEMA_VERSION: u32 = 1;
/// Prefix of the RBD images validation creates.
pub const IMAGE_PREFIX: &str = "cephplan-val-";

#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{0}")]
    JobValue(#[from] crate::fio::job::JobValueError),
    #[error("cluster unreachable with {conf}: {detail}\nCheck that the cluster is up (`ceph -s` with CEPH_CONF={conf}) and that this ceph.conf and its keyring are the right ones")]
    Unreachable { conf: PathBuf, detail: String },
    #[error("pool \"{pool}\" does not exist; existing pools: {existing}. Pass one of them with --pool or create it (`ceph osd pool create {pool} 32 && rbd pool init {pool}`)")]
    PoolMissing { pool: String, existing: String },
    #[error("data pool \"{pool}\" does not exist; existing pools: {existing}. Pass one of them with --data-pool, or create an erasure-coded one (`ceph osd pool create {pool} 32 erasure && ceph osd pool set {pool} allow_ec_overwrites true && ceph osd pool application enable {pool} rbd`)")]
    DataPoolMissing { pool: String, existing: String },
    #[error("--fio-cpus {value}: {detail}")]
    FioCpus { value: String, detail: String },
    #[error("--data-pool applies to the images cephplan creates; an existing --image keeps the data pool it was created with: drop one of the two")]
    DataPoolWithImage,
    #[error("refusing to write to existing image \"{image}\": cephplan did not create it. If you own it and its data may be destroyed, pass --i-own-this-image {image} as well")]
    ForeignImage { image: String },
    #[error("image \"{pool}/{image}\" does not exist; drop --image to let cephplan create its own images")]
    ImageMissing { pool: String, image: String },
    #[error("invalid --vary \"{input}\": {hint}")]
    BadVary { input: String, hint: String },
    #[error("{what}: {detail}")]
    Ceph { what: String, detail: String },
    #[error("point {point} of {total} ({label}) failed: {source}{osd_note}\n{saved} earlier point(s) are saved in {out_dir}")]
    PointFailed {
        point: usize,
        total: usize,
        label: String,
        #[source]
        source: Box<FioError>,
        osd_note: String,
        saved: usize,
        out_dir: PathBuf,
    },
    /// `point` 0: during the pre-fill. `images_removed`: how many images cephplan created
    /// and removed after the cancel (set once they are; none left, else the error is
    /// [`ValidateError::ImagesLeft`]).
    #[error("cancelled during {}; {saved} completed point(s) are saved in {out_dir}{}", stage(*.point, *.total), removed_note(*.images_removed))]
    Cancelled {
        point: usize,
        total: usize,
        saved: usize,
        out_dir: PathBuf,
        images_removed: usize,
    },
    #[error("{0}")]
    Write(#[from] crate::io::WriteError),
    #[error("{0}")]
    Data(#[from] crate::data::DataError),
    /// `cause`: why, with the remedy ([`images::LeftCause::explain`]).
    #[error("{outcome}\nThese images cephplan created could not be removed: {}. Cause: {cause}. They stay recorded in {out_dir} until then (or remove one by hand: `rbd rm {pool}/NAME`)", images.join(", "))]
    ImagesLeft {
        outcome: String,
        pool: String,
        images: Vec<String>,
        cause: String,
        out_dir: PathBuf,
    },
    #[error("{what} asks for {requested} RBD images; validation creates at most {max} (one fio job each, all created before the first point). Use fewer images (e.g. --vary images=1,2,4,8), or spread more clients over --client fio servers")]
    TooManyImages {
        what: String,
        requested: u32,
        max: u32,
    },
    #[error("refusing to write the refitted model over {path}: it is a record of a validation run (its report, the scenario copy its dataset rows refer to, its comparison or its image record), which `validate --refit-only` and `calibrate` read back. Choose another --refit-out, e.g. {}", .path.with_file_name("refitted-model.toml").display())]
    RunRecord { path: PathBuf },
    #[error("{path}: cannot use this record of created images: {detail}; it is written by `cephplan validate`: restore it, or remove the images it lists by hand (`rbd rm POOL/NAME`) and delete it")]
    Record { path: PathBuf, detail: String },
    #[error("{scenario}: the scenario states no `pg_count` under [pool], and CBT creates its pool with as many PGs as it is told (1024 when not), another pool than the one the rows would describe; fix: state the PG count of the pool to measure, e.g. `pg_count = 32`, under [pool] in {scenario}")]
    CbtPgCount { scenario: PathBuf },
    #[error("{flag} {secs} s: CBT's `time` and `ramp` are whole seconds (fio's --runtime=%d), so this sweep cannot be written as it would run; give a whole number of seconds, e.g. {flag} {}s", secs.ceil().max(1.0))]
    CbtWholeSeconds { flag: &'static str, secs: f64 },
    #[error("cannot read the scenario {path}: {source}")]
    Scenario {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// "point K of N", or "the pre-fill" for point 0.
fn stage(point: usize, total: usize) -> String {
    if point == 0 {
        "the pre-fill (before point 1)".into()
    } else {
        format!("point {point} of {total}")
    }
}

/// The end of a cancel's message once the images are removed.
fn removed_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "; the image cephplan created was removed".into(),
        n => format!("; the {n} images cephplan created were removed"),
    }
}

/// Which workload dimension a sweep varies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vary {
    Iodepth(Vec<u32>),
    Images(Vec<u32>),
    BlockSizeBytes(Vec<u64>),
}

impl Vary {
    /// Parses `iodepth=1,4,16`, `images=1,2` or `bs=4k,64k`.
    pub fn parse(s: &str) -> Result<Self, ValidateError> {
        let bad = |hint: &str| ValidateError::BadVary {
            input: s.to_string(),
            hint: hint.to_string(),
        };
        let (key, vals) = s
            .split_once('=')
            .ok_or_else(|| bad("write KEY=V1,V2,... with KEY one of iodepth, images, bs"))?;
        let items: Vec<&str> = vals.split(',').map(str::trim).collect();
        if items.iter().any(|v| v.is_empty()) {
            return Err(bad("empty value in the list"));
        }
        let ints = || -> Result<Vec<u32>, ValidateError> {
            items
                .iter()
                .map(|v| {
                    v.parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| bad("values must be positive integers"))
                })
                .collect()
        };
        match key.trim() {
            "iodepth" => Ok(Vary::Iodepth(ints()?)),
            "images" => Ok(Vary::Images(ints()?)),
            "bs" | "block_size" => items
                .iter()
                .map(|v| {
                    crate::units::parse_bytes(v)
                        .ok()
                        .filter(|&b| b > 0)
                        .ok_or_else(|| bad("block sizes are sizes such as 4k, 64k, 4M"))
                })
                .collect::<Result<_, _>>()
                .map(Vary::BlockSizeBytes),
            _ => Err(bad("KEY must be iodepth, images or bs")),
        }
    }
}

/// The workload of one sweep point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointSetting {
    pub pattern: RwPattern,
    pub block_size_bytes: u64,
    pub iodepth: u32,
    pub images: u32,
    /// randrw only.
    pub read_percent: Option<u8>,
}

impl PointSetting {
    pub fn label(&self) -> String {
        format!(
            "{} bs={} iodepth={} images={}",
            self.pattern.as_fio(),
            crate::units::Bytes(self.block_size_bytes),
            self.iodepth,
            self.images
        )
    }
}

/// A prediction with its interval, in SI units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedPoint {
    pub iops: f64,
    pub iops_interval: Option<(f64, f64)>,
    pub bytes_per_sec: f64,
    pub latency_mean_secs: f64,
    pub latency_mean_interval_secs: Option<(f64, f64)>,
    pub latency_p99_secs: Option<f64>,
    /// What the comparison at this point should be read with (the light-load note on CPU
    /// idle states, [`crate::predict::idle_states_note`]; the notes on sequential writes,
    /// [`crate::predict::sequential_write_notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where the predicted mean latency goes (`predict`'s latency parts).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub latency_parts: std::collections::BTreeMap<String, crate::predict::LatencyPart>,
    /// Writes per OSD batch in the prediction (`predict`'s `write_batch_per_osd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_batch_per_osd: Option<f64>,
    /// A client op's OSD CPU time over a lone op's in the prediction (`predict`'s
    /// `osd_cpu_demand_factor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_cpu_demand_factor: Option<f64>,
}

/// Where predictions come from (the model, or nothing).
pub trait Predictor {
    /// `Ok(None)`: no prediction for this point (the comparison then shows only measured).
    fn predict(&self, point: &PointSetting) -> Result<Option<PredictedPoint>, String>;
}

/// A [`Predictor`] that predicts nothing: validation then records measurements only.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPredictor;

impl Predictor for NoPredictor {
    fn predict(&self, _: &PointSetting) -> Result<Option<PredictedPoint>, String> {
        Ok(None)
    }
}

/// One metric compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    pub predicted: Option<f64>,
    pub interval: Option<(f64, f64)>,
    pub measured: Option<f64>,
    /// (predicted − measured) / measured × 100.
    pub error_percent: Option<f64>,
    pub inside_interval: Option<bool>,
}

impl MetricComparison {
    pub fn new(
        predicted: Option<f64>,
        interval: Option<(f64, f64)>,
        measured: Option<f64>,
    ) -> Self {
        let error_percent = match (predicted, measured) {
            (Some(p), Some(m)) if m != 0.0 => Some((p - m) / m * 100.0),
            _ => None,
        };
        let inside_interval = match (interval, measured) {
            (Some((lo, hi)), Some(m)) => Some(lo <= m && m <= hi),
            _ => None,
        };
        Self {
            predicted,
            interval,
            measured,
            error_percent,
            inside_interval,
        }
    }
}

/// One completed sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub index: usize,
    pub run_id: String,
    pub setting: PointSetting,
    /// Relative to the output directory.
    pub raw_fio_json: String,
    pub measured: MeasuredSummary,
    pub prediction_error: Option<String>,
    pub iops: MetricComparison,
    pub bytes_per_sec: MetricComparison,
    pub latency_mean_secs: MetricComparison,
    pub latency_p99_secs: MetricComparison,
    /// The prediction's notes for this point ([`PredictedPoint::notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prediction_notes: Vec<String>,
    /// The OSDs' latency counters over the point (`--osd-counters`, [`counters`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_counters: Option<counters::OsdCounters>,
    /// Why the counters could not be read, when they were asked for and could not be (the
    /// point's fio figures stand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_counters_error: Option<String>,
    /// Why the cluster's OSD processes' CPU time could not be read on this machine, when
    /// the counters were asked for (their `cpu_secs` is then absent; the rest stands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_cpu_error: Option<String>,
    /// Where the predicted mean latency goes ([`PredictedPoint::latency_parts`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub predicted_latency_parts: std::collections::BTreeMap<String, crate::predict::LatencyPart>,
    /// Writes per OSD batch in the prediction ([`PredictedPoint::write_batch_per_osd`]),
    /// beside the counters' measured transactions per WAL sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_write_batch_per_osd: Option<f64>,
    /// A client op's OSD CPU time over a lone op's in the prediction
    /// ([`PredictedPoint::osd_cpu_demand_factor`]), beside the counters' measured OSD CPU
    /// time per op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_osd_cpu_demand_factor: Option<f64>,
}

/// The whole validation run (rewritten after each point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    pub schema_version: u32,
    pub generator: String,
    pub run_id: String,
    pub scenario: PathBuf,
    pub pool: String,
    pub clients: Vec<String>,
    pub runtime_secs: u64,
    pub ramp_time_secs: u64,
    pub image_size_bytes: u64,
    pub images_used: Vec<String>,
    pub prefilled: bool,
    /// The pool's placement groups when the run started (`ceph osd pool get`), what its
    /// points ran on; `None` where the cluster did not say (reports before session 44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_pg_num: Option<u32>,
    /// The `[pool] pg_count` the scenario states, the one the dataset rows refer to
    /// (`None`: not stated, or not a scenario validate could read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_pg_count: Option<u32>,
    /// How the pool holding the images' data (`--data-pool`, else `--pool`) protects it
    /// when the run started: its size, or its erasure-code profile's k and m; `None` where
    /// the cluster did not say (and in reports before session 55).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_protection: Option<crate::spec::Protection>,
    /// The protection the scenario states (`[pool] replicated` or `erasure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_protection: Option<crate::spec::Protection>,
    /// The OSDs up when the run started (`ceph osd dump`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osds_up: Option<u32>,
    /// The OSDs the scenario states (nodes × data devices × OSDs per device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_osds: Option<u32>,
    pub points: Vec<PointResult>,
    /// Files written (relative to the output directory).
    pub dataset_csv: String,
    pub comparison_csv: String,
    pub report_json: String,
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidateSpec {
    pub scenario: PathBuf,
    pub ceph_conf: PathBuf,
    pub pool: String,
    /// The pool holding the created images' data (`rbd create --data-pool`, an
    /// erasure-coded pool with `allow_ec_overwrites`); `pool` keeps their metadata. `None`:
    /// data and metadata in `pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// Ceph user without `client.` (fio `clientname`).
    pub clientname: String,
    /// fio servers (`host:port`); empty = fio runs locally.
    pub clients: Vec<String>,
    /// Settings of every point; `vary` overrides one dimension per point.
    pub base: PointSetting,
    pub vary: Option<Vary>,
    pub runtime_secs: u64,
    pub ramp_time_secs: u64,
    pub image_size_bytes: u64,
    pub out_dir: PathBuf,
    /// Use this existing image instead of creating images (only with a single image).
    pub existing_image: Option<String>,
    /// Must equal `existing_image` to allow writing to it.
    pub i_own_this_image: Option<String>,
    /// Unique per run; names images and files.
    pub run_id: String,
    /// Label of the system in the dataset's `system_id` column.
    pub system_id: String,
    /// Read every OSD's latency counters before and after each point ([`counters`]).
    #[serde(default)]
    pub osd_counters: bool,
    /// The CPUs fio runs on (its `cpus_allowed`; on each fio server with `clients`), e.g.
    /// the ones `lab up --osd-cpus` left free; `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_cpus: Option<crate::fio::CpuSet>,
}

impl ValidateSpec {
    /// The sweep points, in order.
    pub fn points(&self) -> Vec<PointSetting> {
        let b = &self.base;
        match &self.vary {
            None => vec![b.clone()],
            Some(Vary::Iodepth(v)) => v
                .iter()
                .map(|&d| PointSetting {
                    iodepth: d,
                    ..b.clone()
                })
                .collect(),
            Some(Vary::Images(v)) => v
                .iter()
                .map(|&n| PointSetting {
                    images: n,
                    ..b.clone()
                })
                .collect(),
            Some(Vary::BlockSizeBytes(v)) => v
                .iter()
                .map(|&s| PointSetting {
                    block_size_bytes: s,
                    ..b.clone()
                })
                .collect(),
        }
    }
}

/// Refuses a refitted model's path that would replace a validation run's records: its
/// report (`validation-<run id>.json`), the scenario copy its dataset rows refer to
/// (`scenario-<run id>.toml`), its comparison (`comparison-<run id>.csv`) or its image
/// record (`images-<run id>.json`) — and any other file validate wrote (its marker line
/// names `validate`). The dataset CSV is refused as measured runs
/// ([`crate::io::check_not_measured_runs`]); a file cephplan did not write, as not ours.
/// An absent path, or an earlier refitted model, passes.
pub fn check_refit_out(path: &Path) -> Result<(), ValidateError> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let written_by_validate = head.contains(&format!("{} validate", crate::io::GENERATED_MARKER))
        && !head.contains("--refit");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run_file = [
        ("validation-", ".json"),
        ("validation-", ".csv"),
        ("scenario-", ".toml"),
        ("comparison-", ".csv"),
        ("images-", ".json"),
    ]
    .iter()
    .any(|(pre, suf)| name.starts_with(pre) && name.ends_with(suf));
    if written_by_validate || (run_file && crate::io::is_ours_or_absent(path)) {
        return Err(ValidateError::RunRecord {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// A run identifier from the clock and the process id (unique on one machine).
pub fn new_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{secs}-{}", std::process::id())
}

fn ceph_err(what: &str) -> impl Fn(LabError) -> ValidateError + '_ {
    move |e| ValidateError::Ceph {
        what: what.to_string(),
        detail: e.to_string(),
    }
}

/// Runs the sweep. Files are (re)written in `spec.out_dir` after each point; the returned
/// report equals the last written one.
pub fn run(
    spec: &ValidateSpec,
    executor: &dyn Executor,
    predictor: &dyn Predictor,
    progress: &dyn Progress,
) -> Result<ValidationReport, ValidateError> {
    run_observed(spec, executor, predictor, progress, &mut |_| {})
}

/// [`run`], handing each point to `on_point` as soon as it is measured, compared and saved
/// (for callers that show results while the sweep goes on, such as the GUI).
pub fn run_observed(
    spec: &ValidateSpec,
    executor: &dyn Executor,
    predictor: &dyn Predictor,
    progress: &dyn Progress,
    on_point: &mut dyn FnMut(&PointResult),
) -> Result<ValidationReport, ValidateError> {
    let cluster = CephCluster::new(&spec.ceph_conf, progress);
    run_on(spec, executor, predictor, progress, &cluster, on_point)
}

/// [`run_observed`] on any [`Cluster`] (tests use one in memory).
pub fn run_on(
    spec: &ValidateSpec,
    executor: &dyn Executor,
    predictor: &dyn Predictor,
    progress: &dyn Progress,
    cluster: &dyn Cluster,
    on_point: &mut dyn FnMut(&PointResult),
) -> Result<ValidationReport, ValidateError> {
    // Everything that can be checked here is, before the cluster is touched and before
    // the output directory is made (a refused run leaves nothing behind).
    // Every value that reaches a fio job file.
    crate::fio::job::check_job_value("clientname", &spec.clientname)?;
    crate::fio::job::check_job_value("pool", &spec.pool)?;
    if let Some(d) = &spec.data_pool {
        crate::fio::job::check_job_value("data_pool", d)?;
    }
    check_image_counts(spec)?;
    std::fs::File::open(&spec.scenario).map_err(|source| ValidateError::Scenario {
        path: spec.scenario.clone(),
        source,
    })?;
    // fio's CPUs exist here when fio runs here (a fio server checks its own).
    if let (Some(cpus), true) = (&spec.fio_cpus, spec.clients.is_empty()) {
        cpus.check_within(&crate::fio::CpuSet::usable())
            .map_err(|detail| ValidateError::FioCpus {
                value: cpus.to_string(),
                detail,
            })?;
    }
    // Reachability (bounded by --connect-timeout) and the pool.
    let pools = cluster.pools().map_err(|e| ValidateError::Unreachable {
        conf: spec.ceph_conf.clone(),
        detail: e.to_string(),
    })?;
    let existing = || {
        if pools.is_empty() {
            "(none)".into()
        } else {
            pools.join(", ")
        }
    };
    if !pools.contains(&spec.pool) {
        return Err(ValidateError::PoolMissing {
            pool: spec.pool.clone(),
            existing: existing(),
        });
    }
    if let Some(data) = &spec.data_pool {
        if !pools.contains(data) {
            return Err(ValidateError::DataPoolMissing {
                pool: data.clone(),
                existing: existing(),
            });
        }
        if spec.existing_image.is_some() {
            return Err(ValidateError::DataPoolWithImage);
        }
    }
    if let Some(img) = &spec.existing_image {
        check_existing_image(spec, img, cluster)?;
    }
    std::fs::create_dir_all(&spec.out_dir).map_err(|error| {
        ValidateError::Write(crate::io::WriteError::Io {
            path: spec.out_dir.clone(),
            error,
        })
    })?;
    let points = spec.points();
    let prefill = points.iter().any(|p| p.pattern.reads());
    progress.start(points.len() as u64 + u64::from(prefill), "validate");
    let mut images = Images::new(
        cluster,
        progress,
        &spec.out_dir,
        &spec.run_id,
        &spec.pool,
        spec.data_pool.as_deref(),
        &spec.ceph_conf,
    );
    let result = run_points(
        spec,
        executor,
        predictor,
        progress,
        cluster,
        &mut images,
        on_point,
    );
    if !images.created().is_empty() && progress.is_cancelled() {
        progress.message(&format!(
            "cancelled: removing the {} image(s) cephplan created",
            images.created().len()
        ));
    }
    let removal = images.remove_all();
    progress.finish();
    match (result, removal.cause) {
        (result, Some(cause)) => {
            let outcome = match result {
                Ok(r) => format!("the run completed ({} points saved)", r.points.len()),
                Err(e) => e.to_string(),
            };
            Err(ValidateError::ImagesLeft {
                outcome,
                pool: spec.pool.clone(),
                images: removal.left,
                cause: cause.explain(&spec.out_dir),
                out_dir: spec.out_dir.clone(),
            })
        }
        (
            Err(ValidateError::Cancelled {
                point,
                total,
                saved,
                out_dir,
                ..
            }),
            None,
        ) => Err(ValidateError::Cancelled {
            point,
            total,
            saved,
            out_dir,
            images_removed: removal.removed,
        }),
        (r, None) => r,
    }
}

/// Refuses image counts beyond [`images::MAX_IMAGES`] (or zero) before anything is created.
fn check_image_counts(spec: &ValidateSpec) -> Result<(), ValidateError> {
    let (what, counts): (&str, Vec<u32>) = match &spec.vary {
        Some(Vary::Images(v)) => ("--vary images=", v.clone()),
        _ => ("--images", vec![spec.base.images]),
    };
    if counts.contains(&0) {
        return Err(ValidateError::BadVary {
            input: format!("{what}0"),
            hint: "at least one image is needed".into(),
        });
    }
    match counts.into_iter().max() {
        Some(n) if n > images::MAX_IMAGES => Err(ValidateError::TooManyImages {
            what: what.trim_end_matches('=').to_string(),
            requested: n,
            max: images::MAX_IMAGES,
        }),
        _ => Ok(()),
    }
}

/// `--image NAME`: allowed only with `--i-own-this-image NAME`, only if it exists and only
/// for one image.
fn check_existing_image(
    spec: &ValidateSpec,
    img: &str,
    cluster: &dyn Cluster,
) -> Result<(), ValidateError> {
    if spec.i_own_this_image.as_deref() != Some(img) {
        return Err(ValidateError::ForeignImage {
            image: img.to_string(),
        });
    }
    let listed = cluster.images(&spec.pool).map_err(ceph_err("rbd ls"))?;
    if !listed.iter().any(|i| i == img) {
        return Err(ValidateError::ImageMissing {
            pool: spec.pool.clone(),
            image: img.to_string(),
        });
    }
    let max_images = spec.points().iter().map(|p| p.images).max().unwrap_or(1);
    if max_images > 1 {
        return Err(ValidateError::BadVary {
            input: format!("images={max_images}"),
            hint: "with --image only one image is used; drop --image or use images=1".into(),
        });
    }
    Ok(())
}

fn run_points(
    spec: &ValidateSpec,
    executor: &dyn Executor,
    predictor: &dyn Predictor,
    progress: &dyn Progress,
    cluster: &dyn Cluster,
    images: &mut Images,
    on_point: &mut dyn FnMut(&PointResult),
) -> Result<ValidationReport, ValidateError> {
    let points = spec.points();
    let total = points.len();
    let max_images = points.iter().map(|p| p.images).max().unwrap_or(1) as usize;
    let names: Vec<String> = match &spec.existing_image {
        // Checked by `run_on` (`check_existing_image`).
        Some(img) => vec![img.clone()],
        None => {
            let size_mib = spec.image_size_bytes.div_ceil(1 << 20);
            for i in 0..max_images {
                if progress.is_cancelled() {
                    return Err(ValidateError::Cancelled {
                        point: 0,
                        total,
                        saved: 0,
                        out_dir: spec.out_dir.clone(),
                        images_removed: 0,
                    });
                }
                progress.message(&format!(
                    "creating RBD image {} of {max_images} in pool {}",
                    i + 1,
                    spec.pool
                ));
                // Recorded in the output directory before it exists (a kill -9 from here
                // on leaves a record for `validate --cleanup`); `rbd create` fails on an
                // existing name, so nothing foreign is reused.
                images.create(&format!("{IMAGE_PREFIX}{}-{i}", spec.run_id), size_mib)?;
            }
            images.created().to_vec()
        }
    };

    let prefill = points.iter().any(|p| p.pattern.reads());
    if prefill {
        progress.message(&format!(
            "pre-filling {} image(s) with 4M sequential writes",
            names.len()
        ));
        let job = RbdJob {
            clientname: spec.clientname.clone(),
            pool: spec.pool.clone(),
            images: names.clone(),
            rw: RwPattern::Write,
            block_size_bytes: 4 << 20,
            iodepth: 4,
            runtime_secs: 0,
            ramp_time_secs: 0,
            rwmixread: None,
            size_bytes: None,
            cpus: spec.fio_cpus.clone(),
        };
        executor.run(&job, progress).map_err(|e| match e {
            FioError::Process(crate::fio::process::ProcError::Cancelled { .. }) => {
                ValidateError::Cancelled {
                    point: 0,
                    total,
                    saved: 0,
                    out_dir: spec.out_dir.clone(),
                    images_removed: 0,
                }
            }
            source => ValidateError::PointFailed {
                point: 0,
                total,
                label: "pre-fill".into(),
                osd_note: osd_note(cluster),
                source: Box::new(source),
                saved: 0,
                out_dir: spec.out_dir.clone(),
            },
        })?;
        progress.advance(1);
    }

    // What the scenario states of the cluster (`None`: not a scenario cephplan reads).
    let scenario =
        crate::spec::load_scenario(&spec.scenario, &crate::spec::Catalogue::builtin()).ok();
    let mut report = ValidationReport {
        schema_version: REPORT_SCHEMA_VERSION,
        generator: crate::io::GENERATED_MARKER.to_string(),
        run_id: spec.run_id.clone(),
        scenario: spec.scenario.clone(),
        pool: spec.pool.clone(),
        clients: spec.clients.clone(),
        runtime_secs: spec.runtime_secs,
        ramp_time_secs: spec.ramp_time_secs,
        image_size_bytes: spec.image_size_bytes,
        images_used: names.clone(),
        prefilled: prefill,
        pool_pg_num: cluster.pool_pg_num(&spec.pool),
        scenario_pg_count: scenario_pg_count(&spec.scenario),
        pool_protection: cluster.pool_protection(spec.data_pool.as_deref().unwrap_or(&spec.pool)),
        scenario_protection: scenario.as_ref().map(|s| s.protection),
        osds_up: cluster.osds_up(),
        scenario_osds: scenario.as_ref().map(|s| s.total_osds()),
        points: Vec::new(),
        dataset_csv: format!("validation-{}.csv", spec.run_id),
        comparison_csv: format!("comparison-{}.csv", spec.run_id),
        report_json: format!("validation-{}.json", spec.run_id),
    };
    let scenario_copy = output::copy_scenario(spec)?;
    let t0 = Instant::now();
    for (k, point) in points.iter().enumerate() {
        if progress.is_cancelled() {
            return Err(ValidateError::Cancelled {
                point: k + 1,
                total,
                saved: report.points.len(),
                out_dir: spec.out_dir.clone(),
                images_removed: 0,
            });
        }
        let eta = if k == 0 {
            String::from("ETA unknown")
        } else {
            let per = t0.elapsed().as_secs_f64() / k as f64;
            format!("ETA {:.0} s", per * (total - k) as f64)
        };
        progress.message(&format!(
            "point {} of {total}: {} (elapsed {:.0} s, {eta})",
            k + 1,
            point.label(),
            t0.elapsed().as_secs_f64()
        ));
        let job = RbdJob {
            clientname: spec.clientname.clone(),
            pool: spec.pool.clone(),
            images: names[..point.images as usize].to_vec(),
            rw: point.pattern,
            block_size_bytes: point.block_size_bytes,
            iodepth: point.iodepth,
            runtime_secs: spec.runtime_secs,
            ramp_time_secs: spec.ramp_time_secs,
            rwmixread: point.read_percent,
            size_bytes: None,
            cpus: spec.fio_cpus.clone(),
        };
        let fail = |source: FioError, report: &ValidationReport| match source {
            FioError::Process(crate::fio::process::ProcError::Cancelled { .. }) => {
                ValidateError::Cancelled {
                    point: k + 1,
                    total,
                    saved: report.points.len(),
                    out_dir: spec.out_dir.clone(),
                    images_removed: 0,
                }
            }
            source => ValidateError::PointFailed {
                point: k + 1,
                total,
                label: point.label(),
                osd_note: osd_note(cluster),
                source: Box::new(source),
                saved: report.points.len(),
                out_dir: spec.out_dir.clone(),
            },
        };
        let before = spec.osd_counters.then(|| cluster.osd_perf_dumps());
        let cpu_before = spec.osd_counters.then(|| cluster.osd_cpu_secs());
        let out = executor.run(&job, progress).map_err(|e| fail(e, &report))?;
        let cpu_after = spec.osd_counters.then(|| cluster.osd_cpu_secs());
        let osd_cpu_error = [cpu_before.as_ref(), cpu_after.as_ref()]
            .into_iter()
            .flatten()
            .find_map(|r| r.as_ref().err().cloned());
        let (osd_counters, osd_counters_error) = match before {
            None => (None, None),
            Some(before) => match before.and_then(|b| Ok((b, cluster.osd_perf_dumps()?))) {
                Ok((b, a)) => {
                    let mut c = counters::counter_means(&b, &a);
                    if let (Some(Ok(b)), Some(Ok(a))) = (&cpu_before, &cpu_after) {
                        c.cpu_secs = osd_cpu::cpu_secs_between(b, a);
                    }
                    (Some(c), None)
                }
                Err(e) => (None, Some(e.to_string())),
            },
        };
        let raw_name = format!("raw/{}-point-{:02}.json", spec.run_id, k + 1);
        let raw_path = spec.out_dir.join(&raw_name);
        crate::io::write_atomic_owned(&raw_path, out.stdout.as_bytes())?;
        let parsed = crate::fio::parse_fio_output(&out.stdout, &raw_path, EngineCheck::RequireRbd)
            .map_err(|e| fail(FioError::Parse(e), &report))?;
        let measured = parsed.summary();
        let (pred, prediction_error) = match predictor.predict(point) {
            Ok(p) => (p, None),
            Err(e) => (None, Some(e)),
        };
        let p = pred.as_ref();
        let result = PointResult {
            index: k + 1,
            run_id: format!("{}-{:02}", spec.run_id, k + 1),
            setting: point.clone(),
            raw_fio_json: raw_name,
            iops: MetricComparison::new(
                p.map(|p| p.iops),
                p.and_then(|p| p.iops_interval),
                Some(measured.total_iops),
            ),
            bytes_per_sec: MetricComparison::new(
                p.map(|p| p.bytes_per_sec),
                None,
                Some(measured.total_bytes_per_sec),
            ),
            latency_mean_secs: MetricComparison::new(
                p.map(|p| p.latency_mean_secs),
                p.and_then(|p| p.latency_mean_interval_secs),
                Some(measured.latency_mean_secs),
            ),
            latency_p99_secs: MetricComparison::new(
                p.and_then(|p| p.latency_p99_secs),
                None,
                measured.latency_p99_secs,
            ),
            measured,
            prediction_error,
            prediction_notes: p.map(|p| p.notes.clone()).unwrap_or_default(),
            osd_counters,
            osd_counters_error,
            osd_cpu_error,
            predicted_latency_parts: p.map(|p| p.latency_parts.clone()).unwrap_or_default(),
            predicted_write_batch_per_osd: p.and_then(|p| p.write_batch_per_osd),
            predicted_osd_cpu_demand_factor: p.and_then(|p| p.osd_cpu_demand_factor),
        };
        report.points.push(result);
        output::save(spec, &report, &scenario_copy)?;
        on_point(report.points.last().expect("just pushed"));
        progress.advance(1);
    }
    Ok(report)
}

/// After a failure: say which OSDs are down, if any (the usual cause of a hung fio).
fn osd_note(cluster: &dyn Cluster) -> String {
    match cluster.osds_down() {
        Some(down) if down.is_empty() => String::new(),
        Some(down) => format!(
            "\nThe cluster reports {} down: I/O to its placement groups blocks until it returns; restart it or check its log",
            down.join(", ")
        ),
        None => "\nThe cluster no longer answers (ceph osd dump failed)".into(),
    }
}

/// A [`Predictor`] backed by the queueing model: the scenario's workload is replaced by the
/// point's (pattern, block size, iodepth, images; one fio job per image), then
/// [`crate::predict::predict`] runs with the given parameters.
pub struct ModelPredictor {
    pub scenario: crate::spec::Scenario,
    pub params: crate::model::ModelParams,
    pub options: crate::predict::PredictOptions,
}

impl Predictor for ModelPredictor {
    fn predict(&self, point: &PointSetting) -> Result<Option<PredictedPoint>, String> {
        use crate::spec::Pattern;
        let mut spec = self.scenario.inline_spec();
        let w = &mut spec.workload;
        w.pattern = match point.pattern {
            RwPattern::Randread => Pattern::Randread,
            RwPattern::Randwrite => Pattern::Randwrite,
            RwPattern::Randrw => Pattern::Randrw,
            RwPattern::Read => Pattern::Read,
            RwPattern::Write => Pattern::Write,
        };
        w.block_size = crate::units::Bytes(point.block_size_bytes);
        w.iodepth = point.iodepth;
        w.images = point.images;
        w.jobs_per_image = 1;
        w.read_percent = match point.pattern {
            RwPattern::Randrw => Some(f64::from(point.read_percent.unwrap_or(50))),
            _ => None,
        };
        let scenario = self
            .scenario
            .revalidate(&spec)
            .map_err(|e| format!("cannot describe this point as a scenario: {e}"))?;
        let r = crate::predict::predict(&scenario, &self.params, &self.options)
            .map_err(|e| format!("prediction failed: {e}"))?;
        Ok(Some(PredictedPoint {
            iops: r.iops,
            iops_interval: r.interval.as_ref().map(|i| (i.iops_low, i.iops_high)),
            bytes_per_sec: r.bandwidth_bytes_per_sec,
            latency_mean_secs: r.latency_mean_secs,
            latency_mean_interval_secs: r
                .interval
                .as_ref()
                .map(|i| (i.latency_mean_low_secs, i.latency_mean_high_secs)),
            latency_p99_secs: r.latency_p99_secs,
            notes: light_load_notes(&scenario)
                .into_iter()
                .chain(crate::predict::sequential_write_notes(&scenario))
                .collect(),
            latency_parts: r.latency_parts,
            write_batch_per_osd: r.write_batch_per_osd,
            osd_cpu_demand_factor: r.osd_cpu_demand_factor,
        }))
    }
}

/// The light-load note of a point ([`crate::predict::idle_states_text`], its example of
/// the sweep's direction), worded for every point below the threshold alike so that a
/// report lists it once.
fn light_load_notes(s: &crate::spec::Scenario) -> Vec<String> {
    use crate::predict::{idle_states_text, in_flight_per_node, IDLE_STATES_IN_FLIGHT_PER_NODE};
    if in_flight_per_node(s) < IDLE_STATES_IN_FLIGHT_PER_NODE {
        vec![format!(
            "fewer than {IDLE_STATES_IN_FLIGHT_PER_NODE} I/Os in flight per OSD node: {}",
            idle_states_text(s.pattern)
        )]
    } else {
        Vec::new()
    }
}

/// The distinct prediction notes of a validation's points with the points (1-based) each
/// applies to, in the order they first appear.
pub fn prediction_notes(points: &[PointResult]) -> Vec<(Vec<usize>, String)> {
    let mut out: Vec<(Vec<usize>, String)> = Vec::new();
    for p in points {
        for n in &p.prediction_notes {
            match out.iter_mut().find(|(_, m)| m == n) {
                Some((points, _)) => points.push(p.index),
                None => out.push((vec![p.index], n.clone())),
            }
        }
    }
    out
}

/// [`prediction_notes`] as lines, `note (points 1, 2): …`, as the CLI and the app show them.
pub fn prediction_note_lines(points: &[PointResult]) -> Vec<String> {
    prediction_notes(points)
        .into_iter()
        .map(|(at, note)| {
            let list: Vec<String> = at.iter().map(usize::to_string).collect();
            let s = if at.len() > 1 { "s" } else { "" };
            format!("note (point{s} {}): {note}", list.join(", "))
        })
        .collect()
}

/// The largest parts of a point's predicted mean latency, for its counters' line:
/// `; predicted 0.469 ms, of which osd_cpu 0.349 ms, data_device 0.118 ms` (empty without a
/// prediction).
fn predicted_parts_text(p: &PointResult) -> String {
    let Some(mean) = p.latency_mean_secs.predicted else {
        return String::new();
    };
    let ms = crate::predict::format::ms;
    let parts: Vec<String> =
        crate::predict::format::latency_parts_by_share(&p.predicted_latency_parts)
            .into_iter()
            .take(PREDICTED_PARTS_SHOWN)
            .map(|(name, part)| format!("{name} {}", ms(part.share * mean)))
            .collect();
    let batch = match (
        p.predicted_write_batch_per_osd,
        p.osd_counters.and_then(|c| c.transactions_per_sync()),
    ) {
        (Some(b), Some(_)) => format!("; {b:.1} writes per OSD batch"),
        _ => String::new(),
    };
    let cpu = match (
        p.predicted_osd_cpu_demand_factor,
        p.osd_counters.and_then(|c| c.cpu_secs_per_op()),
    ) {
        (Some(f), Some(_)) => format!("; OSD CPU per op {f:.2}× a lone op's"),
        _ => String::new(),
    };
    if parts.is_empty() {
        format!("; predicted {}{batch}{cpu}", ms(mean))
    } else {
        format!(
            "; predicted {}, of which {}{batch}{cpu}",
            ms(mean),
            parts.join(", ")
        )
    }
}

/// The predicted latency parts a point's counters line names, largest first.
const PREDICTED_PARTS_SHOWN: usize = 2;

/// The `[pool] pg_count` a scenario file states, if it states one (a file that is not
/// TOML, or has no such key, states none: validate copies the scenario as it is).
fn scenario_pg_count(path: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: toml::Value = toml::from_str(&text).ok()?;
    v.get("pool")?
        .get("pg_count")?
        .as_integer()?
        .try_into()
        .ok()
}

/// A line when the pool the points ran on has another PG count than the scenario the
/// dataset rows refer to: a pool of few PGs serialises reads (a replicated read holds its
/// PG while BlueStore reads it; `calibration-data/lab/README.md`, "pg-count-2vcpu"), so the
/// rows would describe a different cluster. The CLI prints it under its table and the app
/// shows it on its Validation page.
///
/// Likewise when the pool's protection (replica count, or erasure-code k+m) or the
/// cluster's number of OSDs up differs from the scenario's.
pub fn pool_note_lines(report: &ValidationReport) -> Vec<String> {
    use crate::spec::Protection;
    let mut lines = Vec::new();
    let copy = format!("scenario-{}.toml", report.run_id);
    if let (Some(pool), Some(stated)) = (report.pool_pg_num, report.scenario_pg_count) {
        if pool != stated {
            lines.push(format!(
                "pool {} has {pool} placement groups, but the scenario {} states pg_count = {stated}: its dataset rows describe a pool of {stated}; fix: state pg_count = {pool} in {copy}, the copy beside them, before feeding these runs back, or validate against a pool of {stated} PGs",
                report.pool,
                report.scenario.display(),
            ));
        }
    }
    let describe = |p: Protection| match p {
        Protection::Replicated { size } => format!("replicated with size {size}"),
        Protection::Erasure { k, m } => format!("erasure-coded {k}+{m}"),
    };
    let stated_as = |p: Protection| match p {
        Protection::Replicated { size } => format!("replicated = {size}"),
        Protection::Erasure { k, m } => format!("erasure = {{ k = {k}, m = {m} }}"),
    };
    if let (Some(pool), Some(stated)) = (report.pool_protection, report.scenario_protection) {
        if pool != stated {
            lines.push(format!(
                "the images' data pool is {}, but the scenario {} states {} ([pool] {}): its dataset rows describe another cluster; fix: state {} under [pool] in {copy}, the copy beside them, before feeding these runs back, or validate against a pool that is {}",
                describe(pool),
                report.scenario.display(),
                describe(stated),
                stated_as(stated),
                stated_as(pool),
                describe(stated),
            ));
        }
    }
    if let (Some(up), Some(stated)) = (report.osds_up, report.scenario_osds) {
        if up != stated {
            lines.push(format!(
                "the cluster has {up} OSDs up, but the scenario {} states {stated} (nodes × data devices × osds_per_device): its dataset rows describe another cluster; fix: make {copy}, the copy beside them, state {up} OSDs before feeding these runs back, or bring the cluster to {stated} OSDs up",
                report.scenario.display(),
            ));
        }
    }
    lines
}

/// One line per point whose OSD counters were asked for: where the measured time went
/// inside the OSDs ([`counters::counters_line`]), or why the counters could not be read.
/// The CLI prints them under its table and the app shows them on its Validation page.
pub fn osd_counter_lines(points: &[PointResult]) -> Vec<String> {
    points
        .iter()
        .filter_map(|p| match (&p.osd_counters, &p.osd_counters_error) {
            (Some(c), _) => Some(format!(
                "point {} (fio mean {}{}): {}{}",
                p.index,
                crate::predict::format::ms(p.measured.latency_mean_secs),
                predicted_parts_text(p),
                counters::counters_line(c, p.setting.pattern),
                p.osd_cpu_error
                    .as_ref()
                    .map(|e| format!("; no OSD CPU time ({e})"))
                    .unwrap_or_default()
            )),
            (None, Some(e)) => Some(format!(
                "point {}: no OSD counters ({e}); the point's fio figures stand",
                p.index
            )),
            (None, None) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::{read_fio_file, EngineCheck};
    use std::collections::BTreeMap;
    use std::path::Path;

    #[test]
    fn vary_parses_the_three_dimensions_and_rejects_nonsense() {
        assert_eq!(
            Vary::parse("iodepth=1,4,16,64").unwrap(),
            Vary::Iodepth(vec![1, 4, 16, 64])
        );
        assert_eq!(
            Vary::parse("images=1, 2").unwrap(),
            Vary::Images(vec![1, 2])
        );
        assert_eq!(
            Vary::parse("bs=4k,64k").unwrap(),
            Vary::BlockSizeBytes(vec![4096, 65536])
        );
        for bad in ["iodepth", "iodepth=0", "iodepth=1,,2", "qd=1", "bs=4q"] {
            assert!(Vary::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comparison_error_and_interval_membership() {
        // predicted 110 vs measured 100: +10 %; 100 inside [90, 120], 130 outside.
        let c = MetricComparison::new(Some(110.0), Some((90.0, 120.0)), Some(100.0));
        assert!((c.error_percent.unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(c.inside_interval, Some(true));
        let c = MetricComparison::new(Some(110.0), Some((90.0, 120.0)), Some(130.0));
        assert_eq!(c.inside_interval, Some(false));
        let c = MetricComparison::new(None, None, Some(1.0));
        assert_eq!((c.error_percent, c.inside_interval), (None, None));
    }

    /// Point `index` of a validation, measured as the recorded fio fixture
    /// `tests/fixtures/fio/multi-randwrite.json` (16 I/Os in flight), with no prediction.
    fn fixture_point(index: usize, setting: PointSetting, notes: Vec<String>) -> PointResult {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/multi-randwrite.json");
        let measured = read_fio_file(&fixture, EngineCheck::RequireRbd)
            .unwrap()
            .summary();
        PointResult {
            index,
            run_id: format!("r1-{index:02}"),
            setting,
            raw_fio_json: format!("raw/r1-point-{index:02}.json"),
            iops: MetricComparison::new(None, None, Some(measured.total_iops)),
            bytes_per_sec: MetricComparison::new(None, None, Some(measured.total_bytes_per_sec)),
            latency_mean_secs: MetricComparison::new(None, None, Some(measured.latency_mean_secs)),
            latency_p99_secs: MetricComparison::new(None, None, measured.latency_p99_secs),
            measured,
            prediction_error: None,
            prediction_notes: notes,
            osd_counters: None,
            osd_counters_error: None,
            osd_cpu_error: None,
            predicted_latency_parts: Default::default(),
            predicted_write_batch_per_osd: None,
            predicted_osd_cpu_demand_factor: None,
        }
    }

    /// The report of `points` for `spec`, as `run_points` writes it.
    fn report_of(spec: &ValidateSpec, points: Vec<PointResult>) -> ValidationReport {
        ValidationReport {
            schema_version: REPORT_SCHEMA_VERSION,
            generator: crate::io::GENERATED_MARKER.into(),
            run_id: "r1".into(),
            scenario: spec.scenario.clone(),
            pool: "rbd".into(),
            clients: vec![],
            runtime_secs: 3,
            ramp_time_secs: 0,
            image_size_bytes: 1 << 30,
            images_used: vec![],
            prefilled: false,
            pool_pg_num: None,
            scenario_pg_count: None,
            pool_protection: None,
            scenario_protection: None,
            osds_up: None,
            scenario_osds: None,
            points,
            dataset_csv: "d.csv".into(),
            comparison_csv: "c.csv".into(),
            report_json: "r.json".into(),
        }
    }

    fn spec_for(dir: &Path) -> ValidateSpec {
        ValidateSpec {
            scenario: dir.join("s.toml"),
            ceph_conf: dir.join("ceph.conf"),
            pool: "rbd".into(),
            data_pool: None,
            clientname: "admin".into(),
            clients: vec![],
            base: PointSetting {
                pattern: RwPattern::Randwrite,
                block_size_bytes: 4096,
                iodepth: 16,
                images: 2,
                read_percent: None,
            },
            vary: Some(Vary::Iodepth(vec![8, 16])),
            runtime_secs: 3,
            ramp_time_secs: 0,
            image_size_bytes: 1 << 30,
            out_dir: dir.to_path_buf(),
            existing_image: None,
            i_own_this_image: None,
            run_id: "r1".into(),
            system_id: "lab".into(),
            osd_counters: false,
            fio_cpus: None,
        }
    }

    /// The recorded two-job fio output `tests/fixtures/fio/multi-randwrite.json`.
    fn multi_randwrite_output() -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/multi-randwrite.json"),
        )
        .unwrap()
    }

    /// [`run_on`] without predictions, progress or a point observer.
    fn run_quiet(
        spec: &ValidateSpec,
        exec: &dyn Executor,
        cluster: &dyn Cluster,
    ) -> Result<ValidationReport, ValidateError> {
        run_on(
            spec,
            exec,
            &NoPredictor,
            &crate::progress::NoProgress,
            cluster,
            &mut |_| {},
        )
    }

    #[test]
    fn a_clientname_that_would_inject_a_job_is_refused_before_the_cluster_is_touched() {
        // Regression: the value went into the job file unescaped, so a newline added a job
        // writing to any image. Refused before `ceph` runs (the ceph.conf here does not
        // even exist: an Unreachable error would mean the check came too late).
        let d = tempfile::tempdir().unwrap();
        let mut spec = spec_for(d.path());
        spec.clientname = "admin\n[evil]\nrbdname=foreign".into();
        let exec = crate::fio::ReplayExecutor::new(Vec::<String>::new());
        let e = run(&spec, &exec, &NoPredictor, &crate::progress::NoProgress).unwrap_err();
        assert!(matches!(e, ValidateError::JobValue(_)), "{e}");
        assert!(e.to_string().contains("clientname"), "{e}");
    }

    #[test]
    fn points_follow_vary() {
        let d = tempfile::tempdir().unwrap();
        let pts = spec_for(d.path()).points();
        assert_eq!(pts.iter().map(|p| p.iodepth).collect::<Vec<_>>(), [8, 16]);
        assert!(pts.iter().all(|p| p.images == 2));
    }

    #[test]
    fn dataset_rows_load_through_data_and_pass_littles_law() {
        // The two-job fixture (2 images × iodepth 8, recorded on the lab): IOPS × mean
        // latency must equal the 16 I/Os in flight within the 10 % that calibrate's loader
        // accepts without a warning.
        let d = tempfile::tempdir().unwrap();
        let spec = spec_for(d.path());
        let setting = PointSetting {
            iodepth: 8,
            ..spec.base.clone()
        };
        let report = report_of(&spec, vec![fixture_point(1, setting, Vec::new())]);
        // Written and read back through `data`, exactly as `calibrate` loads it; its loader
        // errors beyond 25 % Little's-law mismatch and warns beyond 10 %.
        let csv_path = d.path().join("d.csv");
        std::fs::write(d.path().join("scenario-r1.toml"), "# placeholder\n").unwrap();
        let run = measured_run(&spec, &report, &report.points[0], "scenario-r1.toml");
        crate::data::append_runs(&csv_path, &[run]).unwrap();
        let (runs, warnings) = crate::data::load_runs(&csv_path).unwrap();
        assert_eq!(runs.len(), 1);
        assert!(warnings.is_empty(), "{warnings:?}");
        let r = &runs[0];
        let in_flight = 2.0 * 8.0;
        let little = r.measured.iops.unwrap() * r.measured.latency_mean_secs.unwrap();
        assert!((little - in_flight).abs() / in_flight < 0.10, "{little}");
        assert_eq!(r.workload.in_flight(), Some(in_flight));
        // The p99 of two jobs is the mixture bound: recorded as inferred, not stated.
        assert!(!r.stated.contains("latency_p99"));
        assert!(r.inferred.contains("upper bound"));
        assert_eq!(r.source, "raw/r1-point-01.json");
        let cmp = comparison_csv(&report);
        assert!(cmp.lines().nth(1).unwrap().starts_with("point,run_id"));
    }

    /// fio stand-in that replays a recorded output and, each time it is started, notes
    /// which images the record in the output directory lists at that moment.
    struct RecordWatchingExecutor {
        record: PathBuf,
        replay: crate::fio::ReplayExecutor,
        seen: std::sync::Mutex<Vec<Vec<String>>>,
    }

    impl Executor for RecordWatchingExecutor {
        fn run(
            &self,
            job: &RbdJob,
            progress: &dyn Progress,
        ) -> Result<crate::fio::FioRunOutput, FioError> {
            let listed = std::fs::read_to_string(&self.record)
                .ok()
                .and_then(|t| serde_json::from_str::<ImageRecord>(&t).ok())
                .map(|r| r.images)
                .unwrap_or_default();
            self.seen.lock().unwrap().push(listed);
            self.replay.run(job, progress)
        }
    }

    /// The report records the PG count of the pool the points ran on and the one the
    /// scenario states, and says so when they differ (the lab's one-PG pool reads 2.2×
    /// slower than its 32-PG pool: `calibration-data/lab/README.md`, "pg-count-2vcpu").
    #[test]
    fn a_pool_whose_pg_count_differs_from_the_scenarios_is_recorded_and_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("s.toml"),
            "# scenario\nschema_version = 1\n[pool]\nreplicated = 1\npg_count = 32 # stated\n",
        )
        .unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        // Each run in an output directory of its own (a run never writes over another's).
        let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let next = std::cell::Cell::new(0);
        let run_with = |pg_num: Option<u32>| {
            let mut spec = spec.clone();
            spec.out_dir = outs[next.replace(next.get() + 1)].path().to_path_buf();
            let exec = crate::fio::ReplayExecutor::new(vec![multi_randwrite_output()]);
            let cluster = images::tests::FakeCluster {
                pg_num,
                ..Default::default()
            };
            run_quiet(&spec, &exec, &cluster).unwrap()
        };
        let one = run_with(Some(1));
        assert_eq!(
            (one.pool_pg_num, one.scenario_pg_count),
            (Some(1), Some(32))
        );
        let lines = pool_note_lines(&one);
        assert_eq!(lines.len(), 1, "{lines:?}");
        for part in [
            "pool rbd has 1 placement groups",
            "pg_count = 32",
            "fix: state pg_count = 1 in scenario-r1.toml",
        ] {
            assert!(lines[0].contains(part), "{part}: {}", lines[0]);
        }
        // Written to the JSON report and read back.
        let json = serde_json::to_string(&one).unwrap();
        let back: ValidationReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back.pool_pg_num, Some(1));
        // The same count, or a cluster that does not say, gives no line; an older report
        // without the fields still loads.
        assert!(pool_note_lines(&run_with(Some(32))).is_empty());
        let silent = run_with(None);
        assert_eq!(silent.pool_pg_num, None);
        assert!(pool_note_lines(&silent).is_empty());
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("pool_pg_num");
        o.remove("scenario_pg_count");
        let old: ValidationReport = serde_json::from_value(old).unwrap();
        assert_eq!((old.pool_pg_num, old.scenario_pg_count), (None, None));
    }

    /// Issue 17 item 7: the images are recorded in the output directory before fio first
    /// starts (so a kill -9 during any point leaves the record), and the record goes when
    /// the images do.
    #[test]
    fn the_image_record_exists_before_fio_starts_and_goes_with_the_images() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        // One point as the fixture was recorded: 2 images × iodepth 8.
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        let fixture = multi_randwrite_output();
        let exec = RecordWatchingExecutor {
            record: images::record_path(d.path(), "r1"),
            replay: crate::fio::ReplayExecutor::new(vec![fixture]),
            seen: Default::default(),
        };
        let cluster = images::tests::FakeCluster::default();
        let report = run_quiet(&spec, &exec, &cluster).unwrap();
        assert_eq!(report.points.len(), 1);
        let both = vec!["cephplan-val-r1-0".to_string(), "cephplan-val-r1-1".into()];
        assert_eq!(*exec.seen.lock().unwrap(), vec![both]);
        assert!(cluster.images.borrow().is_empty());
        assert!(!images::record_path(d.path(), "r1").exists());
    }

    /// `--data-pool`: every image the run creates puts its data in the named pool (`rbd
    /// create --data-pool`), and the record says so; a data pool the cluster lacks, or one
    /// given with an existing image, is refused before anything is created.
    #[test]
    fn a_data_pool_holds_the_created_images_data_and_must_exist() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        spec.data_pool = Some("rbd-ec".into());
        let exec = RecordWatchingExecutor {
            record: images::record_path(d.path(), "r1"),
            replay: crate::fio::ReplayExecutor::new(vec![multi_randwrite_output()]),
            seen: Default::default(),
        };
        let cluster = images::tests::FakeCluster {
            more_pools: vec!["rbd-ec".into()],
            ..Default::default()
        };
        let report = run_quiet(&spec, &exec, &cluster).unwrap();
        assert_eq!(report.points.len(), 1);
        let calls = cluster.calls.borrow().clone();
        let creates: Vec<&String> = calls.iter().filter(|c| c.starts_with("create")).collect();
        assert_eq!(
            creates,
            [
                "create rbd/cephplan-val-r1-0 --data-pool rbd-ec",
                "create rbd/cephplan-val-r1-1 --data-pool rbd-ec"
            ]
        );
        // Removal goes through the image's own pool, which removes its data too.
        assert!(
            calls.contains(&"rm rbd/cephplan-val-r1-0".to_string()),
            "{calls:?}"
        );
        assert!(cluster.images.borrow().is_empty());

        // A data pool the cluster does not have: refused with the pools it has and how to
        // make one; nothing created.
        let none = images::tests::FakeCluster::default();
        let e = run_quiet(&spec, &exec, &none).unwrap_err();
        assert!(matches!(e, ValidateError::DataPoolMissing { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("\"rbd-ec\"") && msg.contains("existing pools: rbd"),
            "{msg}"
        );
        assert!(msg.contains("allow_ec_overwrites true"), "{msg}");
        assert!(none.calls.borrow().is_empty());

        // An existing image keeps the data pool it was made with.
        spec.existing_image = Some("mine".into());
        let e = run_quiet(&spec, &exec, &cluster).unwrap_err();
        assert!(matches!(e, ValidateError::DataPoolWithImage), "{e}");
    }

    /// `--fio-cpus`: the fio job carries `cpus_allowed`, and a CPU this machine does not
    /// have is refused before the cluster is touched.
    #[test]
    fn fio_cpus_reach_the_job_and_a_missing_cpu_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        spec.fio_cpus = Some("0".parse().unwrap());
        let exec = crate::fio::ReplayExecutor::new(vec![multi_randwrite_output()]);
        let cluster = images::tests::FakeCluster::default();
        run_quiet(&spec, &exec, &cluster).unwrap();
        let jobs = exec.jobs_seen();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].cpus, spec.fio_cpus);
        assert!(jobs[0].to_job_file().unwrap().contains("cpus_allowed=0\n"));
        let beyond = crate::fio::CpuSet::usable().highest() + 1;
        spec.fio_cpus = Some(beyond.to_string().parse().unwrap());
        let untouched = images::tests::FakeCluster::default();
        let e = run_quiet(&spec, &exec, &untouched).unwrap_err();
        assert!(
            matches!(&e, ValidateError::FioCpus { .. })
                && e.to_string().contains("is not one this machine"),
            "{e}"
        );
        assert!(untouched.calls.borrow().is_empty());
    }

    /// `--osd-counters`: every point carries the change of the OSDs' counters over its fio
    /// run (a dump just before and just after it), and a cluster whose counters cannot be
    /// read leaves the point's fio figures standing with the reason.
    #[test]
    fn osd_counters_are_read_around_each_point_and_a_failure_is_noted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        spec.osd_counters = true;
        let fixture = multi_randwrite_output();
        let dump = |osd: u32, ops: f64, secs: f64| {
            (
                osd,
                serde_json::json!({"osd": {"op_w": ops, "op_w_latency": {"avgcount": ops, "sum": secs}}}),
            )
        };
        // Two OSDs: 1,000 and 3,000 writes during the point, taking 1.5 s and 2.5 s in all.
        let cluster = images::tests::FakeCluster {
            perf_dumps: std::cell::RefCell::new(vec![
                BTreeMap::from([dump(0, 10.0, 0.5), dump(1, 20.0, 0.5)]),
                BTreeMap::from([dump(0, 1010.0, 2.0), dump(1, 3020.0, 3.0)]),
            ]),
            // Both OSDs run on this machine: 0.6 s and 0.2 s of CPU during the point.
            cpu_secs: std::cell::RefCell::new(vec![
                BTreeMap::from([(0, 100.0), (1, 50.0)]),
                BTreeMap::from([(0, 100.6), (1, 50.2)]),
            ]),
            ..Default::default()
        };
        let exec = crate::fio::ReplayExecutor::new(vec![fixture.clone()]);
        let report = run_quiet(&spec, &exec, &cluster).unwrap();
        let c = report.points[0].osd_counters.unwrap();
        assert_eq!((c.osds, c.write_ops), (2, 4000.0));
        assert!((c.op_write_secs.unwrap() - 4.0 / 4000.0).abs() < 1e-15);
        // Dumped just around fio: before it, after it, and nothing else.
        let calls = cluster.calls.borrow();
        assert_eq!(calls.iter().filter(|c| *c == "perf dump").count(), 2);
        let lines = osd_counter_lines(&report.points);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("point 1 (fio mean "), "{}", lines[0]);
        assert!(lines[0].contains("write op 1.000 ms"), "{}", lines[0]);
        // 0.8 s of OSD CPU over 4,000 ops.
        assert!((c.cpu_secs.unwrap() - 0.8).abs() < 1e-12, "{c:?}");
        assert!(
            lines[0].ends_with("; OSD CPU 200.0 µs per op"),
            "{}",
            lines[0]
        );
        // Saved in the report JSON and read back.
        let text = std::fs::read_to_string(d.path().join(&report.report_json)).unwrap();
        let back: ValidationReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back.points[0].osd_counters, Some(c));
        // A cluster that does not answer `ceph tell`: the point stands, the reason is kept.
        let spec2 = ValidateSpec {
            run_id: "r2".into(),
            ..spec.clone()
        };
        let exec = crate::fio::ReplayExecutor::new(vec![fixture.clone()]);
        let report = run_quiet(&spec2, &exec, &images::tests::FakeCluster::default()).unwrap();
        let p = &report.points[0];
        assert!(p.osd_counters.is_none() && p.measured.total_iops > 0.0);
        assert!(!serde_json::to_string(p).unwrap().contains("cpu_secs"));
        // Counters read, but the OSDs' CPU time not: the line says why.
        let spec3 = ValidateSpec {
            run_id: "r3".into(),
            ..spec.clone()
        };
        let cluster = images::tests::FakeCluster {
            perf_dumps: std::cell::RefCell::new(vec![
                BTreeMap::from([dump(0, 10.0, 0.5)]),
                BTreeMap::from([dump(0, 1010.0, 2.0)]),
            ]),
            cpu_error: Some("/proc unreadable: permission denied".into()),
            ..Default::default()
        };
        let exec = crate::fio::ReplayExecutor::new(vec![fixture.clone()]);
        let report3 = run_quiet(&spec3, &exec, &cluster).unwrap();
        let c3 = report3.points[0].osd_counters.unwrap();
        assert_eq!(c3.cpu_secs, None);
        let line = &osd_counter_lines(&report3.points)[0];
        assert!(
            line.ends_with("; no OSD CPU time (/proc unreadable: permission denied)"),
            "{line}"
        );
        let lines = osd_counter_lines(&report.points);
        assert!(lines[0].contains("no OSD counters") && lines[0].contains("timed out"));
        // With a prediction, the line names its mean and its two largest parts beside the
        // counters, so the two compositions read side by side.
        let mut predicted = fixture_point(1, spec.base.clone(), Vec::new());
        predicted.latency_mean_secs.predicted = Some(0.5e-3);
        let part = |share: f64| crate::predict::LatencyPart {
            read_secs: None,
            write_secs: Some(share * 0.5e-3),
            share,
        };
        predicted.predicted_latency_parts = BTreeMap::from([
            ("osd_cpu".to_string(), part(0.7)),
            ("data_device".to_string(), part(0.2)),
            ("client_cpu".to_string(), part(0.1)),
        ]);
        predicted.osd_counters = Some(c);
        let line = &osd_counter_lines(std::slice::from_ref(&predicted))[0];
        assert!(
            line.contains("; predicted 0.500 ms, of which osd_cpu 0.350 ms, data_device 0.100 ms): OSD counters"),
            "{line}"
        );
        assert!(!line.contains("client_cpu"), "{line}");
        // With the commits counted, the line sets the prediction's writes per OSD batch
        // beside the measured transactions per WAL sync (4,000 over 2,000 syncs).
        let mut batched = predicted.clone();
        batched.predicted_write_batch_per_osd = Some(2.5);
        batched.osd_counters = Some(counters::OsdCounters {
            bluestore_commit_secs: Some(0.4e-3),
            transactions: 4000.0,
            kv_syncs: 2000.0,
            ..c
        });
        let line = &osd_counter_lines(&[batched])[0];
        assert!(
            line.contains("data_device 0.100 ms; 2.5 writes per OSD batch): OSD counters")
                && line.contains("BlueStore commit 0.400 ms; 2.0 transactions per WAL sync)"),
            "{line}"
        );
        // Not asked for: no line, no field in the JSON.
        spec.osd_counters = false;
        let plain = report_of(&spec, vec![fixture_point(1, spec.base.clone(), Vec::new())]);
        assert!(osd_counter_lines(&plain.points).is_empty());
        assert!(!serde_json::to_string(&plain)
            .unwrap()
            .contains("osd_counters"));
    }

    /// An image that cannot be removed at the end stays recorded, and the error says so.
    #[test]
    fn an_image_left_behind_stays_in_the_record() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        let fixture = multi_randwrite_output();
        let exec = crate::fio::ReplayExecutor::new(vec![fixture]);
        let cluster = images::tests::FakeCluster {
            stuck: vec!["cephplan-val-r1-1".into()],
            ..Default::default()
        };
        let e = run_quiet(&spec, &exec, &cluster).unwrap_err();
        match &e {
            ValidateError::ImagesLeft { outcome, .. } => {
                assert!(
                    outcome.contains("the run completed (1 points saved)"),
                    "{e}"
                )
            }
            _ => panic!("{e}"),
        }
        let (_, rec) = records(d.path()).unwrap().remove(0);
        assert_eq!(rec.images, ["cephplan-val-r1-1"]);
    }

    /// Progress that records every message and can be cancelled.
    #[derive(Default)]
    struct Recorder {
        messages: std::sync::Mutex<Vec<String>>,
        cancel: crate::progress::CancelToken,
    }

    impl Progress for Recorder {
        fn message(&self, msg: &str) {
            self.messages.lock().unwrap().push(msg.to_string());
        }
        fn is_cancelled(&self) -> bool {
            self.cancel.is_cancelled()
        }
    }

    /// fio stand-in: replays recorded output, except that its run number `cancel_on`
    /// (1-based) is "cut short by Ctrl-C": it cancels the token and fails as a cancelled
    /// fio does.
    struct CancellingExecutor {
        replay: crate::fio::ReplayExecutor,
        runs: std::sync::atomic::AtomicUsize,
        cancel_on: usize,
        cancel: crate::progress::CancelToken,
    }

    impl Executor for CancellingExecutor {
        fn run(
            &self,
            job: &RbdJob,
            progress: &dyn Progress,
        ) -> Result<crate::fio::FioRunOutput, FioError> {
            let n = self.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if n == self.cancel_on {
                self.cancel.cancel();
                return Err(FioError::Process(
                    crate::fio::process::ProcError::Cancelled {
                        program: "fio".into(),
                    },
                ));
            }
            self.replay.run(job, progress)
        }
    }

    fn cancelling(cancel_on: usize, progress: &Recorder) -> CancellingExecutor {
        CancellingExecutor {
            replay: crate::fio::ReplayExecutor::new(vec![
                multi_randwrite_output(),
                multi_randwrite_output(),
            ]),
            runs: Default::default(),
            cancel_on,
            cancel: progress.cancel.clone(),
        }
    }

    /// Finding 1 of the lab audit: after a Ctrl-C the run says (through the progress) that
    /// it removes its images; the error says they were removed only when they were, and an
    /// image a client still holds open is named as such, never "were removed" beside
    /// "could not be removed", never "an OSD is down".
    #[test]
    fn a_cancel_reports_the_removal_and_never_contradicts_itself() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        // As the fixture was recorded: 2 images × iodepth 8.
        spec.vary = Some(Vary::Iodepth(vec![8, 8]));
        // Cancelled during point 2 of 2; the images are released: removed, and said so.
        let progress = Recorder::default();
        let cluster = images::tests::FakeCluster::default();
        let e = run_on(
            &spec,
            &cancelling(2, &progress),
            &NoPredictor,
            &progress,
            &cluster,
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cancelled during point 2 of 2; 1 completed point(s) are saved in {}; the 2 images cephplan created were removed",
                d.path().display()
            )
        );
        assert!(cluster.images.borrow().is_empty());
        let messages = progress.messages.lock().unwrap().clone();
        for m in [
            "creating RBD image 2 of 2 in pool rbd",
            "cancelled: removing the 2 image(s) cephplan created",
            "removing image 2 of 2 cephplan created: cephplan-val-r1-1",
        ] {
            assert!(messages.iter().any(|x| x == m), "{m}: {messages:?}");
        }

        // The image stays watched (a fio that could not close it): tried again, then left,
        // recorded, and the error says why and what to do.
        let out2 = tempfile::tempdir().unwrap();
        let spec2 = ValidateSpec {
            run_id: "r2".into(),
            out_dir: out2.path().to_path_buf(),
            ..spec.clone()
        };
        let progress = Recorder::default();
        let cluster = images::tests::FakeCluster::default();
        cluster
            .watched
            .borrow_mut()
            .insert("cephplan-val-r2-0".into(), 99);
        let e = run_on(
            &spec2,
            &cancelling(2, &progress),
            &NoPredictor,
            &progress,
            &cluster,
            &mut |_| {},
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ValidateError::ImagesLeft { .. }), "{msg}");
        assert!(
            msg.starts_with("cancelled during point 2 of 2; 1 completed point(s) are saved in"),
            "{msg}"
        );
        assert!(
            !msg.contains("were removed") && !msg.contains("was removed"),
            "{msg}"
        );
        assert!(!msg.contains("OSD"), "{msg}");
        assert!(
            msg.contains("could not be removed: cephplan-val-r2-0"),
            "{msg}"
        );
        assert!(msg.contains("a client still has them open"), "{msg}");
        assert!(
            msg.contains(&format!(
                "Wait a minute, then run `cephplan validate --cleanup --out {}`",
                out2.path().display()
            )),
            "{msg}"
        );
        assert!(!msg.contains("Logs are in"), "{msg}");
        let messages = progress.messages.lock().unwrap().clone();
        assert!(
            messages
                .iter()
                .any(|m| m.contains("a client still has it open") && m.contains("attempt 2 of 4")),
            "{messages:?}"
        );
        let (_, rec) = records(out2.path()).unwrap().remove(0);
        assert_eq!(rec.images, ["cephplan-val-r2-0"]);
    }

    /// Finding 10: a cancel during the pre-fill says so, not "point 0 of N".
    #[test]
    fn a_cancel_during_the_prefill_is_named_so() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.base.pattern = RwPattern::Randread;
        let progress = Recorder::default();
        let cluster = images::tests::FakeCluster::default();
        let e = run_on(
            &spec,
            &cancelling(1, &progress),
            &NoPredictor,
            &progress,
            &cluster,
            &mut |_| {},
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("cancelled during the pre-fill (before point 1); 0 completed point(s)"),
            "{msg}"
        );
        assert!(
            msg.ends_with("the 2 images cephplan created were removed"),
            "{msg}"
        );
        assert!(!msg.contains("point 0"), "{msg}");
    }

    /// Finding 2: `--vary images=1,2,99999` (and `--images` beyond the cap) is refused
    /// before the cluster is touched and before the output directory is made, with the
    /// cap and a remedy; zero images likewise.
    #[test]
    fn an_absurd_image_count_is_refused_before_anything_is_created() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.out_dir = d.path().join("out");
        spec.vary = Some(Vary::parse("images=1,2,99999").unwrap());
        let exec = crate::fio::ReplayExecutor::new(Vec::<String>::new());
        let cluster = images::tests::FakeCluster::default();
        let e = run_quiet(&spec, &exec, &cluster).unwrap_err();
        assert!(
            matches!(
                e,
                ValidateError::TooManyImages {
                    requested: 99999,
                    ..
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "--vary images asks for 99999 RBD images; validation creates at most 64"
            ),
            "{msg}"
        );
        assert!(msg.contains("Use fewer images"), "{msg}");
        assert!(cluster.calls.borrow().is_empty());
        assert!(!spec.out_dir.exists());
        spec.vary = None;
        spec.base.images = MAX_IMAGES + 1;
        let e = run_quiet(&spec, &exec, &cluster).unwrap_err();
        assert!(
            e.to_string().starts_with("--images asks for 65 RBD images"),
            "{e}"
        );
        spec.base.images = 0;
        assert!(matches!(
            run_quiet(&spec, &exec, &cluster).unwrap_err(),
            ValidateError::BadVary { .. }
        ));
        assert!(cluster.calls.borrow().is_empty());
        // At the cap: allowed (each image created, then removed).
        spec.base.images = MAX_IMAGES;
        spec.base.iodepth = 1;
        let _ = run_quiet(&spec, &exec, &cluster);
        let creates = cluster
            .calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with("create"))
            .count();
        assert_eq!(creates, MAX_IMAGES as usize);
        assert!(cluster.images.borrow().is_empty());
    }

    /// Finding 11: a run refused for its inputs or its cluster leaves no output directory.
    #[test]
    fn a_refused_run_leaves_no_output_directory() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let exec = crate::fio::ReplayExecutor::new(Vec::<String>::new());
        let cluster = images::tests::FakeCluster::default();
        let out = d.path().join("out");
        let base = ValidateSpec {
            out_dir: out.clone(),
            ..spec_for(d.path())
        };
        let mut missing_scenario = base.clone();
        missing_scenario.scenario = d.path().join("nope.toml");
        let mut no_pool = base.clone();
        no_pool.pool = "nosuch".into();
        let mut no_cpu = base.clone();
        no_cpu.fio_cpus = Some(
            (crate::fio::CpuSet::usable().highest() + 1)
                .to_string()
                .parse()
                .unwrap(),
        );
        let mut foreign = base.clone();
        foreign.existing_image = Some("theirs".into());
        for (spec, what) in [
            (missing_scenario, "cannot read the scenario"),
            (no_pool, "pool \"nosuch\" does not exist"),
            (no_cpu, "--fio-cpus"),
            (foreign, "refusing to write to existing image"),
        ] {
            let e = run_quiet(&spec, &exec, &cluster).unwrap_err();
            assert!(e.to_string().contains(what), "{what}: {e}");
            assert!(!out.exists(), "{what}: {} was made", out.display());
        }
    }

    /// Finding 5: the report records the data pool's protection and the OSDs up beside
    /// the scenario's, and says so when they differ (a size-1 pool on 3 OSDs measured
    /// against a scenario of size 3 on 8).
    #[test]
    fn a_pool_or_cluster_unlike_the_scenarios_is_recorded_and_named() {
        use crate::spec::Protection;
        let d = tempfile::tempdir().unwrap();
        let scenario =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/examples/seed-002-epyc-7402.toml");
        let stated =
            crate::spec::load_scenario(&scenario, &crate::spec::Catalogue::builtin()).unwrap();
        let mut spec = spec_for(d.path());
        spec.scenario = scenario.clone();
        spec.vary = None;
        spec.base.iodepth = 8;
        let run_with = |protection: Protection, up: u32, run_id: &str| {
            let mut spec = spec.clone();
            spec.run_id = run_id.into();
            let exec = crate::fio::ReplayExecutor::new(vec![multi_randwrite_output()]);
            let cluster = images::tests::FakeCluster {
                protection: Some(protection),
                osds_up: Some(up),
                ..Default::default()
            };
            run_quiet(&spec, &exec, &cluster).unwrap()
        };
        let lab = run_with(Protection::Replicated { size: 1 }, 3, "r1");
        assert_eq!(lab.scenario_protection, Some(stated.protection));
        assert_eq!(lab.scenario_osds, Some(stated.total_osds()));
        assert_eq!(
            lab.pool_protection,
            Some(Protection::Replicated { size: 1 })
        );
        assert_eq!(lab.osds_up, Some(3));
        let lines = pool_note_lines(&lab);
        let text = lines.join("\n");
        assert!(
            text.contains("the images' data pool is replicated with size 1, but the scenario"),
            "{text}"
        );
        assert!(
            text.contains("fix: state replicated = 1 under [pool] in scenario-r1.toml"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "the cluster has 3 OSDs up, but the scenario {} states {}",
                scenario.display(),
                stated.total_osds()
            )),
            "{text}"
        );
        // Written to the report JSON and read back.
        let back: ValidationReport = serde_json::from_str(
            &std::fs::read_to_string(d.path().join(&lab.report_json)).unwrap(),
        )
        .unwrap();
        assert_eq!(back.pool_protection, lab.pool_protection);
        assert_eq!(back.osds_up, Some(3));
        // The cluster the scenario describes: no line about it.
        let same = run_with(stated.protection, stated.total_osds(), "r2");
        let text = pool_note_lines(&same).join("\n");
        assert!(
            !text.contains("data pool is") && !text.contains("OSDs up"),
            "{text}"
        );
        // An erasure-coded pool against a replicated scenario names k+m.
        let ec = run_with(
            Protection::Erasure { k: 2, m: 1 },
            stated.total_osds(),
            "r3",
        );
        let text = pool_note_lines(&ec).join("\n");
        assert!(
            text.contains("is erasure-coded 2+1") && text.contains("erasure = { k = 2, m = 1 }"),
            "{text}"
        );
    }

    /// Finding 3: a refit output may not replace the files a validation run wrote (its
    /// report, its scenario copy, its comparison, its image record); an earlier refitted
    /// model, or a new path, may be written.
    #[test]
    fn a_refit_output_never_replaces_a_runs_records() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), "# scenario\n").unwrap();
        let mut spec = spec_for(d.path());
        spec.vary = None;
        spec.base.iodepth = 8;
        let exec = crate::fio::ReplayExecutor::new(vec![multi_randwrite_output()]);
        let cluster = images::tests::FakeCluster {
            stuck: vec!["cephplan-val-r1-1".into()],
            ..Default::default()
        };
        // Leaves an image record too.
        let _ = run_quiet(&spec, &exec, &cluster);
        for name in [
            "validation-r1.json",
            "scenario-r1.toml",
            "comparison-r1.csv",
            "images-r1.json",
        ] {
            let p = d.path().join(name);
            assert!(p.exists(), "{name}");
            let e = check_refit_out(&p).unwrap_err();
            assert!(matches!(e, ValidateError::RunRecord { .. }), "{name}: {e}");
            assert!(e.to_string().contains("refitted-model.toml"), "{e}");
        }
        // The dataset CSV: refused as measured runs.
        assert!(crate::io::check_not_measured_runs(&d.path().join("validation-r1.csv")).is_err());
        // A previous refitted model and a new file pass.
        let model = d.path().join("refitted-model.toml");
        let mut m = crate::model::ModelParams::shipped_default();
        m.generator = format!(
            "{} (cephplan validate --refit)",
            crate::io::GENERATED_MARKER
        );
        std::fs::write(&model, m.to_toml()).unwrap();
        check_refit_out(&model).unwrap();
        check_refit_out(&d.path().join("new.toml")).unwrap();
    }

    /// Finding 12: `--cleanup` removes the fio job files a killed run left in OUT, and
    /// nothing else of a similar name.
    #[test]
    fn stale_fio_job_files_are_removed_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let job = RbdJob {
            clientname: "admin".into(),
            pool: "rbd".into(),
            images: vec!["cephplan-val-r1-0".into()],
            rw: RwPattern::Randwrite,
            block_size_bytes: 4096,
            iodepth: 1,
            runtime_secs: 3,
            ramp_time_secs: 0,
            rwmixread: None,
            size_bytes: None,
            cpus: None,
        };
        let ours = d.path().join("cephplan-job-AbC123.fio");
        std::fs::write(&ours, job.to_job_file().unwrap()).unwrap();
        let theirs = d.path().join("cephplan-job-mine.fio");
        std::fs::write(&theirs, "[global]\nioengine=libaio\n").unwrap();
        let other = d.path().join("notes.fio");
        std::fs::write(&other, job.to_job_file().unwrap()).unwrap();
        let removed = remove_stale_job_files(d.path()).unwrap();
        assert_eq!(removed, std::slice::from_ref(&ours));
        assert!(!ours.exists() && theirs.exists() && other.exists());
    }

    #[test]
    fn light_load_points_carry_the_idle_states_note_once_per_report() {
        // The hand-checked tiny cluster (3 nodes): 2 images at iodepth 1 is 0.7 I/Os in
        // flight per node, below the threshold; at iodepth 16, 10.7 per node, above it.
        let predictor = ModelPredictor {
            scenario: crate::qn::ceph::tests::tiny(|t| t.to_string()),
            params: crate::qn::ceph::tests::params(),
            options: crate::predict::PredictOptions::default(),
        };
        let at = |iodepth| {
            let point = PointSetting {
                pattern: RwPattern::Randread,
                block_size_bytes: 4096,
                iodepth,
                images: 2,
                read_percent: None,
            };
            predictor.predict(&point).unwrap().unwrap().notes
        };
        let light = at(1);
        assert_eq!(light.len(), 1, "{light:?}");
        assert!(light[0].starts_with("fewer than 8 I/Os in flight per OSD node: "));
        assert!(light[0].ends_with(&crate::predict::idle_states_text(
            crate::spec::Pattern::Randread
        )));
        // Audit F7: a read point quotes reads, not the writes' example.
        assert!(light[0].contains("512 KiB random reads"), "{}", light[0]);
        assert!(!light[0].contains("random writes"), "{}", light[0]);
        assert!(at(16).is_empty());

        // A report lists the note once, with the points it applies to.
        let d = tempfile::tempdir().unwrap();
        let spec = spec_for(d.path());
        let report = report_of(
            &spec,
            vec![
                fixture_point(1, spec.base.clone(), light.clone()),
                fixture_point(2, spec.base.clone(), light.clone()),
                fixture_point(3, spec.base.clone(), Vec::new()),
            ],
        );
        assert_eq!(
            prediction_notes(&report.points),
            vec![(vec![1, 2], light[0].clone())]
        );
        assert_eq!(
            prediction_note_lines(&report.points),
            vec![format!("note (points 1, 2): {}", light[0])]
        );
        // The JSON carries the notes of the points that have them, and reads back.
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(json.matches("prediction_notes").count(), 2);
        let back: ValidationReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
    }
}
