//! Measured runs: the calibration datasets (`calibration-data/*.csv`) with their provenance.
//!
//! One CSV row is one measured benchmark run: which system (a scenario file, relative to
//! the CSV) under which workload (cells that override the scenario's `[workload]`), what
//! was measured (IOPS, bandwidth, mean and p99 latency, or a ratio between two systems),
//! and where every figure came from (`source`, `stated`, `inferred`, `assumptions`). The
//! format is documented in `calibration-data/README.md`; [`COLUMNS`] is its header.
//!
//! This module reads, validates and writes that format. It is not for fitting (see
//! `calibrate`) nor for fio's JSON (see `fio`); it knows nothing of the Ceph model.
//!
//! Validation policy: a row that cannot be read (missing or unknown column, unit typo,
//! negative or non-finite figure, Little's-law violation beyond
//! [`LITTLE_ERROR_FRACTION`]) is an error naming the file, line, column and the fix; the
//! whole load fails, so a partially bad file never silently loses rows. Doubtful but
//! usable rows (Little's law off by more than [`LITTLE_WARN_FRACTION`], or not checkable)
//! are kept and listed as [`DataWarning`]s.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::io::{write_atomic_owned, WriteError, GENERATED_MARKER, MEASURED_RUNS_MARK};
use crate::units::{parse_bytes, parse_duration_secs};

pub mod cbt;
pub mod import;

#[cfg(test)]
pub(crate) mod tests;

/// Version of the CSV format, written in the header comment of generated files.
/// 2 added `quote`, `reading` and `reading_error` (how each figure was read from its
/// source); files cephplan wrote as version 1 (fio imports, validation output) lack them
/// and read as `reading = fio-json`, quoting their source.
pub const SCHEMA_VERSION: u32 = 2;

/// Little's law `N = IOPS × mean latency`: a relative mismatch above this is an error
/// (wrong unit, wrong queue depth or a typo; the row cannot be trusted as written).
pub const LITTLE_ERROR_FRACTION: f64 = 0.25;
/// A relative mismatch above this (but within [`LITTLE_ERROR_FRACTION`]) is a warning:
/// ramp-up, client-side queueing or an inferred queue depth can explain it.
pub const LITTLE_WARN_FRACTION: f64 = 0.10;

/// The CSV header, in the order files are written. Every column must be present when a
/// file is read (cells may be empty where the column is optional).
pub const COLUMNS: &[&str] = &[
    "run_id",
    "system_id",
    "kind",
    "scenario",
    "pattern",
    "block_size",
    "iodepth",
    "images",
    "jobs_per_image",
    "concurrency",
    "read_percent",
    "ceph_release",
    "nodes",
    "iops",
    "bandwidth",
    "latency_mean",
    "latency_p99",
    "ratio",
    "ratio_metric",
    "ratio_reference",
    "source",
    "stated",
    "inferred",
    "assumptions",
    "quote",
    "reading",
    "reading_error",
];

/// The provenance columns added in schema version 2; a file cephplan generated before
/// them may leave them out.
const PROVENANCE_COLUMNS: &[&str] = &["quote", "reading", "reading_error"];

/// How a figure was read from its source. Chart readings carry a reading error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// A number printed in prose.
    Text,
    /// A number in a table.
    Table,
    /// A data label printed on a chart.
    ChartLabel,
    /// SVG chart geometry against the gridlines (about ±1-2 %).
    ChartSvg,
    /// PNG pixels against the gridlines (about ±2-3 %).
    ChartPng,
    /// By eye from a curve (about ±5 %).
    ChartEye,
    /// Computed from other stated figures (the `inferred` cell says how).
    Derived,
    /// fio's JSON output, read by cephplan (`import fio`, validation mode).
    FioJson,
}

impl Reading {
    pub const ALL: [Reading; 8] = [
        Reading::Text,
        Reading::Table,
        Reading::ChartLabel,
        Reading::ChartSvg,
        Reading::ChartPng,
        Reading::ChartEye,
        Reading::Derived,
        Reading::FioJson,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Text => "text",
            Reading::Table => "table",
            Reading::ChartLabel => "chart-label",
            Reading::ChartSvg => "chart-svg",
            Reading::ChartPng => "chart-png",
            Reading::ChartEye => "chart-eye",
            Reading::Derived => "derived",
            Reading::FioJson => "fio-json",
        }
    }
    pub fn parse(s: &str) -> Option<Reading> {
        Reading::ALL.into_iter().find(|r| r.as_str() == s)
    }
    /// True for readings off a chart's geometry, which must state their reading error.
    pub fn is_chart_geometry(self) -> bool {
        matches!(
            self,
            Reading::ChartSvg | Reading::ChartPng | Reading::ChartEye
        )
    }
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Workload columns and the measured figures: the names `stated` may list.
const STATABLE: &[&str] = &[
    "pattern",
    "block_size",
    "iodepth",
    "images",
    "jobs_per_image",
    "concurrency",
    "read_percent",
    "ceph_release",
    "nodes",
    "iops",
    "bandwidth",
    "latency_mean",
    "latency_p99",
    "ratio",
];

/// Absolute measurements, or a ratio between two systems (relative data such as seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    Absolute,
    Ratio,
    /// A device-level measurement (fio on a raw drive, not through Ceph): kept as data,
    /// checks the catalogue's drive figures, never fitted as a cluster run.
    Device,
}

/// fio's `rw` patterns that cephplan models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Randread,
    Randwrite,
    Randrw,
    Read,
    Write,
}

impl Pattern {
    pub const ALL: [Pattern; 5] = [
        Pattern::Randread,
        Pattern::Randwrite,
        Pattern::Randrw,
        Pattern::Read,
        Pattern::Write,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Randread => "randread",
            Pattern::Randwrite => "randwrite",
            Pattern::Randrw => "randrw",
            Pattern::Read => "read",
            Pattern::Write => "write",
        }
    }
    /// True for the sequential patterns, whose natural figure is bandwidth.
    pub fn is_sequential(self) -> bool {
        matches!(self, Pattern::Read | Pattern::Write)
    }
    pub fn parse(s: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Workload cells of a row. `None` = take the value from the scenario file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOverrides {
    pub pattern: Option<Pattern>,
    pub block_size_bytes: Option<u64>,
    pub iodepth: Option<u32>,
    pub images: Option<u32>,
    pub jobs_per_image: Option<u32>,
    /// Total operations in flight when the load generator is not fio-per-image (e.g.
    /// `rados bench -t`); when set it is the population N for Little's law.
    pub concurrency: Option<u32>,
    pub read_percent: Option<f64>,
    pub ceph_release: Option<String>,
    /// OSD node count.
    pub nodes: Option<u32>,
}

impl WorkloadOverrides {
    /// I/Os in flight (`concurrency`, else images × jobs × iodepth) when the row says.
    pub fn in_flight(&self) -> Option<f64> {
        if let Some(c) = self.concurrency {
            return Some(c as f64);
        }
        Some(self.images? as f64 * self.jobs_per_image? as f64 * self.iodepth? as f64)
    }
}

/// Which figure a ratio row compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatioMetric {
    Iops,
    Bandwidth,
    LatencyMean,
}

impl RatioMetric {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "iops" => Some(Self::Iops),
            "bandwidth" => Some(Self::Bandwidth),
            "latency_mean" => Some(Self::LatencyMean),
            _ => None,
        }
    }
    fn as_str(self) -> &'static str {
        match self {
            Self::Iops => "iops",
            Self::Bandwidth => "bandwidth",
            Self::LatencyMean => "latency_mean",
        }
    }
}

/// `metric(this run's system) / metric(reference system)` under the same workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioMeasurement {
    pub value: f64,
    pub metric: RatioMetric,
    /// What the denominator is: a scenario path (relative to the CSV) or, when the source
    /// names no reproducible system, a description.
    pub reference: String,
}

/// What was measured. Absolute rows carry at least IOPS or bandwidth; ratio rows carry a
/// [`RatioMeasurement`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub iops: Option<f64>,
    pub bandwidth_bytes_per_sec: Option<f64>,
    pub latency_mean_secs: Option<f64>,
    pub latency_p99_secs: Option<f64>,
    pub ratio: Option<RatioMeasurement>,
}

/// One measured benchmark run with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRun {
    pub run_id: String,
    /// Runs on the same hardware share a system id (used for per-system cross-validation).
    pub system_id: String,
    pub kind: RunKind,
    /// Scenario file as written in the CSV (relative to the CSV's directory).
    pub scenario: Option<PathBuf>,
    /// `scenario` resolved against the CSV's directory (not written back).
    #[serde(skip)]
    pub scenario_resolved: Option<PathBuf>,
    pub workload: WorkloadOverrides,
    pub measured: Measured,
    /// Seed file name, fio JSON path, or other citation.
    pub source: String,
    /// Columns whose values the source states (the rest are inferred or assumed).
    pub stated: BTreeSet<String>,
    /// How the non-stated values were obtained, e.g. "iodepth 16 from Little's law".
    pub inferred: String,
    pub assumptions: String,
    /// The exact words, table cells or chart title and label the figures came from.
    pub quote: String,
    /// How the figures were read from the source.
    pub reading: Reading,
    /// Relative reading error of a chart reading, percent (± one reading).
    pub reading_error_percent: Option<f64>,
    /// The file and line the run was read from (not written back).
    #[serde(skip)]
    pub origin: Option<(PathBuf, u64)>,
}

/// A usable row with a doubt worth showing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataWarning {
    pub file: PathBuf,
    pub line: u64,
    pub run_id: String,
    pub message: String,
}

impl fmt::Display for DataWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.run_id.is_empty() {
            return write!(f, "{}: {}", self.file.display(), self.message);
        }
        write!(
            f,
            "{}:{} (run {}): {}",
            self.file.display(),
            self.line,
            self.run_id,
            self.message
        )
    }
}

/// The remedy for a dataset that cannot be read, by why: a file that is not UTF-8 (a
/// spreadsheet's Latin-1 export) is to be saved again, not looked for elsewhere.
fn data_read_remedy(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::InvalidData => {
            "the file is not UTF-8 text (a Latin-1 or Windows-1252 export?): save it as UTF-8 (a spreadsheet's \"CSV UTF-8\", or `iconv -f latin1 -t utf-8`)"
        }
        std::io::ErrorKind::NotFound => {
            "check the path: a dataset CSV file or a directory of them"
        }
        _ => crate::io::read_remedy(e),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DataError {
    // The I/O error is in the message, not a `source`: an error chain (`{:#}`) would
    // print it twice, and the GUI shows the message alone.
    #[error("cannot read {path}: {error}; {}", data_read_remedy(.error))]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "cannot read the scenario {path}: {error}; pass the scenario file of the measured cluster"
    )]
    ScenarioRead {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: no dataset CSV files found (files cephplan generated that are not datasets, such as validate's comparison CSV, are skipped); pass a .csv dataset or a directory containing some")]
    NoFiles { path: PathBuf },
    #[error("{path}: line {line}: {message}")]
    Csv {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: missing column \"{column}\" in the header; every file needs all of: {}", COLUMNS.join(","))]
    MissingColumn { path: PathBuf, column: String },
    #[error("{path}: unknown column \"{column}\" in the header{}; the columns are: {}", suggest(column), COLUMNS.join(","))]
    UnknownColumn { path: PathBuf, column: String },
    #[error("run {} from {}: column \"{}\": {}; nothing was appended to {}", .0.run_id, .0.from, .0.column, .0.message, .0.path.display())]
    NewRow(Box<NewRow>),
    #[error("{path}: line {line}, column \"{column}\": {message}")]
    Field {
        path: PathBuf,
        line: u64,
        column: String,
        message: String,
    },
    #[error("{path}: run id \"{run_id}\" is already used at {first}; run ids must be unique across the dataset: import it under another id (`import fio --run-id NAME`, `import cbt --run-id-prefix PREFIX`) or into another dataset")]
    DuplicateImport {
        path: PathBuf,
        run_id: String,
        first: String,
    },
    #[error("{path}: line {line}: run id \"{run_id}\" already used at {first}; run ids must be unique across the dataset")]
    DuplicateRun {
        path: PathBuf,
        line: u64,
        run_id: String,
        first: String,
    },
    #[error("{}: line {}: run \"{}\" repeats run \"{}\" at {} (same system, scenario, workload and figures); a figure enters the dataset once: delete one of the two rows, or give them the workload cells that tell them apart", .0.path.display(), .0.line, .0.run_id, .0.other, .0.first)]
    DuplicateFigures(Box<DuplicateFigures>),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A row being appended that fails validation on its own ([`DataError::NewRow`]).
#[derive(Debug)]
pub struct NewRow {
    pub path: PathBuf,
    pub run_id: String,
    /// The row's `source` (the imported file).
    pub from: String,
    pub column: String,
    pub message: String,
}

/// Where a row repeats another's measurement ([`DataError::DuplicateFigures`]).
#[derive(Debug)]
pub struct DuplicateFigures {
    pub path: PathBuf,
    pub line: u64,
    pub run_id: String,
    /// The run it repeats, and where that run is (`file:line`).
    pub other: String,
    pub first: String,
}

fn suggest(column: &str) -> String {
    let best = COLUMNS
        .iter()
        .map(|c| (edit_distance(c, column), *c))
        .min()
        .filter(|(d, _)| *d <= 3);
    match best {
        Some((_, c)) => format!(" (did you mean \"{c}\"?)"),
        None => String::new(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

const RATE_HINT: &str = "write bytes per second as a number, or with a unit: \"21949MB/s\" (decimal, 1 MB/s = 1e6 B/s, as vendors and Ceph write), \"4.2GB/s\", \"512MiB/s\" (binary, as fio writes)";

/// Parses a byte rate: a bare number is bytes/s; `kB/s MB/s GB/s` are decimal,
/// `KiB/s MiB/s GiB/s` binary.
pub fn parse_bytes_per_sec(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-'))
        .unwrap_or(s.len());
    let n: f64 = s[..split]
        .parse()
        .map_err(|_| format!("\"{s}\" is not a byte rate: {RATE_HINT}"))?;
    let mult = match s[split..].trim() {
        "" | "B/s" => 1.0,
        "kB/s" | "KB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "KiB/s" => 1024.0,
        "MiB/s" => 1024.0 * 1024.0,
        "GiB/s" => 1024.0_f64.powi(3),
        u => return Err(format!("unknown unit \"{u}\" in \"{s}\": {RATE_HINT}")),
    };
    Ok(n * mult)
}

/// Loads a CSV file, or every `*.csv` in a directory (sorted by name, not recursive), and
/// validates every row. In a directory, files cephplan generated that are not datasets
/// (validate's comparison CSV) are skipped, each with a warning saying so. Run ids must be unique across everything loaded.
pub fn load_runs(path: &Path) -> Result<(Vec<MeasuredRun>, Vec<DataWarning>), DataError> {
    let DatasetFiles {
        datasets: files,
        skipped,
    } = dataset_files(path)?;
    let mut runs: Vec<MeasuredRun> = Vec::new();
    let mut warnings: Vec<DataWarning> = skipped
        .into_iter()
        .map(|(file, message)| DataWarning {
            file,
            line: 1,
            run_id: String::new(),
            message,
        })
        .collect();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|error| DataError::Io {
            path: f.clone(),
            error,
        })?;
        let (r, w) = parse_csv(&f, &text)?;
        for run in r {
            if let Some(first) = runs.iter().find(|x| x.run_id == run.run_id) {
                let (p, l) = run.origin.clone().unwrap_or_default();
                let (fp, fl) = first.origin.clone().unwrap_or_default();
                return Err(DataError::DuplicateRun {
                    path: p,
                    line: l,
                    run_id: run.run_id,
                    first: format!("{}:{}", fp.display(), fl),
                });
            }
            if let Some(first) = runs.iter().find(|x| same_measurement(x, &run)) {
                let (p, l) = run.origin.clone().unwrap_or_default();
                let (fp, fl) = first.origin.clone().unwrap_or_default();
                return Err(DataError::DuplicateFigures(Box::new(DuplicateFigures {
                    path: p,
                    line: l,
                    run_id: run.run_id,
                    other: first.run_id.clone(),
                    first: format!("{}:{}", fp.display(), fl),
                })));
            }
            runs.push(run);
        }
        warnings.extend(w);
    }
    Ok((runs, warnings))
}

/// True when two rows record the same measurement: the same system, scenario, kind and
/// workload cells and the same figures (a lead entered twice, or a file copied into
/// another). Two configurations of one system (scenarios) may measure the same figure.
fn same_measurement(a: &MeasuredRun, b: &MeasuredRun) -> bool {
    a.system_id == b.system_id
        && a.kind == b.kind
        && a.scenario_resolved == b.scenario_resolved
        && a.workload == b.workload
        && a.measured == b.measured
}

/// The dataset files a `--data` path names: `datasets` to load, and the CSV files of a
/// directory that were `skipped` because they are not datasets, each with the reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatasetFiles {
    pub datasets: Vec<PathBuf>,
    pub skipped: Vec<(PathBuf, String)>,
}

/// The columns every measured-run dataset has had since its first schema version.
const DATASET_KEY_COLUMNS: [&str; 3] = ["run_id", "system_id", "kind"];

/// Why a `*.csv` in a `--data` directory is not a dataset, or `None` when it should be
/// loaded. Only a file cephplan generated (its first line is cephplan's marker) whose
/// header lacks the dataset's key columns is skipped, e.g. the comparison CSV that
/// `validate` writes beside its dataset; a hand-written CSV is always loaded, so that a
/// typo in a column name is reported rather than the file silently ignored.
fn not_a_dataset(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let first = lines.next()?;
    if !crate::io::is_marker_line(first) {
        return None;
    }
    let header = std::iter::once(first)
        .chain(lines)
        .find(|l| !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let missing: Vec<&str> = DATASET_KEY_COLUMNS
        .into_iter()
        .filter(|c| !columns.contains(c))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let what = if columns.first() == Some(&"point") {
        "the comparison CSV of `cephplan validate`"
    } else {
        "a file cephplan generated"
    };
    Some(format!(
        "skipped: {what}, not a measured-run dataset (no {} column); give the dataset CSV itself to load it",
        missing.join("/")
    ))
}

/// The CSV files `path` names: itself, or the `*.csv` in it (sorted), less the files
/// cephplan generated that are not datasets (`not_a_dataset`). A file given by name is
/// never skipped.
pub fn dataset_files(path: &Path) -> Result<DatasetFiles, DataError> {
    let io = |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_file() {
        return Ok(DatasetFiles {
            datasets: vec![path.to_path_buf()],
            skipped: Vec::new(),
        });
    }
    let mut files = Vec::new();
    for e in std::fs::read_dir(path).map_err(io)? {
        let p = e.map_err(io)?.path();
        if p.is_file() && p.extension().is_some_and(|x| x == "csv") {
            files.push(p);
        }
    }
    files.sort();
    let mut out = DatasetFiles::default();
    for f in files {
        match not_a_dataset(&f) {
            Some(reason) => out.skipped.push((f, reason)),
            None => out.datasets.push(f),
        }
    }
    if out.datasets.is_empty() {
        return Err(DataError::NoFiles {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// The dataset CSV files `path` names ([`dataset_files`] without the skipped ones).
pub fn csv_files(path: &Path) -> Result<Vec<PathBuf>, DataError> {
    dataset_files(path).map(|f| f.datasets)
}

/// Parses one CSV text (`path` is used for messages and to resolve scenario paths).
/// Lines starting with `#` are comments.
pub fn parse_csv(
    path: &Path,
    text: &str,
) -> Result<(Vec<MeasuredRun>, Vec<DataWarning>), DataError> {
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| DataError::Csv {
            path: path.to_path_buf(),
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        })?
        .clone();
    let names: Vec<&str> = headers.iter().collect();
    if let Some(unknown) = names.iter().find(|h| !COLUMNS.contains(h)) {
        return Err(DataError::UnknownColumn {
            path: path.to_path_buf(),
            column: unknown.to_string(),
        });
    }
    // Files cephplan generated before schema version 2 have no provenance columns: their
    // figures are fio's JSON, quoted by their source.
    let generated = text
        .lines()
        .next()
        .is_some_and(|l| l.starts_with('#') && l.contains(GENERATED_MARKER));
    for c in COLUMNS {
        if !(names.contains(c) || generated && PROVENANCE_COLUMNS.contains(c)) {
            return Err(DataError::MissingColumn {
                path: path.to_path_buf(),
                column: c.to_string(),
            });
        }
    }
    let cols: Vec<Option<usize>> = COLUMNS
        .iter()
        .map(|c| names.iter().position(|h| h == c))
        .collect();
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| DataError::Csv {
            path: path.to_path_buf(),
            line: e.position().map_or(0, |p| p.line()),
            message: format!("{e}; every row needs {} cells", COLUMNS.len()),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let cell = |c: &str| -> &str {
            let i = COLUMNS.iter().position(|x| *x == c).expect("known column");
            cols[i].and_then(|j| rec.get(j)).unwrap_or("")
        };
        let row = RowReader {
            path,
            line,
            cell: &cell,
            generated_v1: generated && !names.contains(&"reading"),
        };
        let run = row.run(&base)?;
        if let Some(w) = check_little(&run).map_err(|message| DataError::Field {
            path: path.to_path_buf(),
            line,
            column: "latency_mean".into(),
            message,
        })? {
            warnings.push(DataWarning {
                file: path.to_path_buf(),
                line,
                run_id: run.run_id.clone(),
                message: w,
            });
        }
        runs.push(run);
    }
    Ok((runs, warnings))
}

struct RowReader<'a> {
    path: &'a Path,
    line: u64,
    cell: &'a dyn Fn(&str) -> &'a str,
    /// A file cephplan wrote before the provenance columns: read as fio JSON.
    generated_v1: bool,
}

impl RowReader<'_> {
    fn err(&self, column: &str, message: impl Into<String>) -> DataError {
        DataError::Field {
            path: self.path.to_path_buf(),
            line: self.line,
            column: column.to_string(),
            message: message.into(),
        }
    }
    fn opt(&self, c: &str) -> Option<&str> {
        Some((self.cell)(c)).filter(|s| !s.is_empty())
    }
    fn count(&self, c: &str) -> Result<Option<u32>, DataError> {
        self.opt(c)
            .map(|s| {
                s.parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        self.err(
                            c,
                            format!(
                                "\"{s}\" is not a positive whole number; write one from 1 to 4294967295, or leave the cell empty for the scenario's value"
                            ),
                        )
                    })
            })
            .transpose()
    }
    fn positive(&self, c: &str, v: f64, raw: &str) -> Result<f64, DataError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(
                c,
                format!("\"{raw}\" must be a finite number greater than zero; write the measured figure, or leave the cell empty where the source gives none"),
            ))
        }
    }
    fn number(&self, c: &str) -> Result<Option<f64>, DataError> {
        self.opt(c)
            .map(|s| {
                let v: f64 = s.parse().map_err(|_| {
                    self.err(
                        c,
                        format!(
                            "\"{s}\" is not a plain number (no units or thousands separators here)"
                        ),
                    )
                })?;
                self.positive(c, v, s)
            })
            .transpose()
    }
    fn duration(&self, c: &str) -> Result<Option<f64>, DataError> {
        self.opt(c)
            .map(|s| {
                let v = parse_duration_secs(s).map_err(|e| self.err(c, e.to_string()))?;
                self.positive(c, v, s)
            })
            .transpose()
    }

    fn run(&self, base: &Path) -> Result<MeasuredRun, DataError> {
        let run_id = self
            .opt("run_id")
            .ok_or_else(|| self.err("run_id", "every row needs a run id"))?
            .to_string();
        let system_id = self
            .opt("system_id")
            .ok_or_else(|| self.err("system_id", "every row needs a system id"))?
            .to_string();
        let kind = match self.opt("kind") {
            Some("absolute") => RunKind::Absolute,
            Some("ratio") => RunKind::Ratio,
            Some("device") => RunKind::Device,
            other => {
                return Err(self.err(
                    "kind",
                    format!(
                        "\"{}\" is not a kind; write \"absolute\", \"ratio\" or \"device\"",
                        other.unwrap_or("")
                    ),
                ))
            }
        };
        let scenario = self.opt("scenario").map(PathBuf::from);
        let pattern = self
            .opt("pattern")
            .map(|s| {
                Pattern::parse(s).ok_or_else(|| {
                    self.err(
                        "pattern",
                        format!(
                            "\"{s}\" is not a pattern; write one of {}",
                            Pattern::ALL.map(Pattern::as_str).join(", ")
                        ),
                    )
                })
            })
            .transpose()?;
        let block_size_bytes = self
            .opt("block_size")
            .map(|s| match parse_bytes(s) {
                Ok(0) => Err(self.err("block_size", "the block size must be positive")),
                Ok(b) => Ok(b),
                Err(e) => Err(self.err("block_size", e.to_string())),
            })
            .transpose()?;
        let read_percent = self
            .opt("read_percent")
            .map(|s| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| (0.0..=100.0).contains(v))
                    .ok_or_else(|| {
                        self.err("read_percent", format!("\"{s}\" must be a number 0..100"))
                    })
            })
            .transpose()?;
        let workload = WorkloadOverrides {
            pattern,
            block_size_bytes,
            iodepth: self.count("iodepth")?,
            images: self.count("images")?,
            jobs_per_image: self.count("jobs_per_image")?,
            concurrency: self.count("concurrency")?,
            read_percent,
            ceph_release: self.opt("ceph_release").map(str::to_string),
            nodes: self.count("nodes")?,
        };
        let bandwidth_bytes_per_sec = self
            .opt("bandwidth")
            .map(|s| {
                let v = parse_bytes_per_sec(s).map_err(|m| self.err("bandwidth", m))?;
                self.positive("bandwidth", v, s)
            })
            .transpose()?;
        let ratio = match (self.opt("ratio"), self.opt("ratio_metric")) {
            (None, None) => None,
            (Some(_), None) => {
                return Err(self.err(
                    "ratio_metric",
                    "a ratio needs its metric: iops, bandwidth or latency_mean",
                ))
            }
            (None, Some(_)) => {
                return Err(self.err("ratio", "ratio_metric is set but the ratio is empty"))
            }
            (Some(_), Some(m)) => Some(RatioMeasurement {
                value: self.number("ratio")?.expect("non-empty"),
                metric: RatioMetric::parse(m).ok_or_else(|| {
                    self.err(
                        "ratio_metric",
                        format!("\"{m}\" is not a metric; write iops, bandwidth or latency_mean"),
                    )
                })?,
                reference: self
                    .opt("ratio_reference")
                    .ok_or_else(|| {
                        self.err(
                            "ratio_reference",
                            "a ratio needs its reference (the denominator's scenario or description)",
                        )
                    })?
                    .to_string(),
            }),
        };
        let measured = Measured {
            iops: self.number("iops")?,
            bandwidth_bytes_per_sec,
            latency_mean_secs: self.duration("latency_mean")?,
            latency_p99_secs: self.duration("latency_p99")?,
            ratio,
        };
        match kind {
            RunKind::Absolute => {
                if measured.iops.is_none() && measured.bandwidth_bytes_per_sec.is_none() {
                    return Err(
                        self.err("iops", "an absolute run needs iops or bandwidth (or both)")
                    );
                }
                if measured.ratio.is_some() {
                    return Err(self.err(
                        "ratio",
                        "an absolute run has no ratio; set kind = ratio or clear the ratio cells",
                    ));
                }
                if scenario.is_none() {
                    return Err(self.err(
                        "scenario",
                        "an absolute run needs the scenario file of the measured system",
                    ));
                }
            }
            RunKind::Ratio => {
                if measured.ratio.is_none() {
                    return Err(self.err("ratio", "a ratio run needs ratio and ratio_metric"));
                }
            }
            RunKind::Device => {
                if measured.iops.is_none() && measured.bandwidth_bytes_per_sec.is_none() {
                    return Err(self.err("iops", "a device run needs iops or bandwidth (or both)"));
                }
            }
        }
        if let (Some(m), Some(p)) = (measured.latency_mean_secs, measured.latency_p99_secs) {
            if p < m {
                return Err(self.err(
                    "latency_p99",
                    format!("p99 {p} s is below the mean {m} s; check the units"),
                ));
            }
        }
        let source = self
            .opt("source")
            .ok_or_else(|| {
                self.err(
                    "source",
                    "every row must cite its source (seed file, fio JSON path)",
                )
            })?
            .to_string();
        let mut stated = BTreeSet::new();
        for s in self.opt("stated").unwrap_or("").split(';') {
            let s = s.trim();
            if s.is_empty() {
                continue;
            }
            if !STATABLE.contains(&s) {
                return Err(self.err(
                    "stated",
                    format!(
                        "\"{s}\" is not a column that can be stated; list among {} separated by ';'",
                        STATABLE.join(", ")
                    ),
                ));
            }
            if self.opt(s).is_none() {
                return Err(self.err(
                    "stated",
                    format!("\"{s}\" is listed as stated but its cell is empty"),
                ));
            }
            stated.insert(s.to_string());
        }
        let (quote, reading, reading_error_percent) = self.provenance(&source)?;
        Ok(MeasuredRun {
            run_id,
            system_id,
            kind,
            scenario_resolved: scenario.as_ref().map(|s| base.join(s)),
            scenario,
            workload,
            measured,
            source,
            stated,
            inferred: self.opt("inferred").unwrap_or("").to_string(),
            assumptions: self.opt("assumptions").unwrap_or("").to_string(),
            quote,
            reading,
            reading_error_percent,
            origin: Some((self.path.to_path_buf(), self.line)),
        })
    }

    /// `quote`, `reading` and `reading_error`: every figure quotes its source and says how
    /// it was read; a chart reading states its reading error.
    fn provenance(&self, source: &str) -> Result<(String, Reading, Option<f64>), DataError> {
        if self.generated_v1 {
            return Ok((source.to_string(), Reading::FioJson, None));
        }
        let quote = self
            .opt("quote")
            .ok_or_else(|| {
                self.err(
                    "quote",
                    "every row must quote the words, table cells or chart (title, series, label) its figures come from; copy them from the source",
                )
            })?
            .to_string();
        let all = Reading::ALL.map(Reading::as_str).join(", ");
        let reading = match self.opt("reading") {
            None => {
                return Err(self.err(
                    "reading",
                    format!("say how the figures were read from the source: one of {all}"),
                ))
            }
            Some(s) => Reading::parse(s).ok_or_else(|| {
                self.err(
                    "reading",
                    format!("\"{s}\" is not a reading method; write one of {all}"),
                )
            })?,
        };
        let error = self
            .opt("reading_error")
            .map(|s| {
                s.trim_end_matches('%')
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v > 0.0 && *v < 100.0)
                    .ok_or_else(|| {
                        self.err(
                            "reading_error",
                            format!("\"{s}\" is not a reading error; write the relative error in percent, e.g. 2"),
                        )
                    })
            })
            .transpose()?;
        match (reading.is_chart_geometry(), error) {
            (true, None) => Err(self.err(
                "reading_error",
                format!(
                    "a {reading} reading needs its reading error in percent (about 1-2 for SVG geometry, 2-3 for PNG pixels, 5 by eye) and a comment on the method (gridlines, pixel rows)"
                ),
            )),
            (false, Some(_)) => Err(self.err(
                "reading_error",
                format!("a {reading} reading is exact: leave reading_error empty, or change reading to chart-svg, chart-png or chart-eye"),
            )),
            _ => Ok((quote, reading, error)),
        }
    }
}

/// Little's law check: `Err` beyond [`LITTLE_ERROR_FRACTION`], a warning beyond
/// [`LITTLE_WARN_FRACTION`] or when the row lacks what the check needs.
fn check_little(run: &MeasuredRun) -> Result<Option<String>, String> {
    let (Some(lat), Some(n)) = (run.measured.latency_mean_secs, run.workload.in_flight()) else {
        return Ok(None);
    };
    let iops = match (
        run.measured.iops,
        run.measured.bandwidth_bytes_per_sec,
        run.workload.block_size_bytes,
    ) {
        (Some(i), _, _) => i,
        (None, Some(bw), Some(bs)) => bw / bs as f64,
        _ => {
            return Ok(Some(
                "Little's law not checked: neither iops nor bandwidth with block_size".into(),
            ))
        }
    };
    let little = iops * lat;
    let dev = (little - n).abs() / n;
    let msg = format!(
        "Little's law: iops × latency_mean = {iops} × {lat} s = {little:.1} I/Os in flight, but the row's workload puts {n} in flight ({:.0} % off)",
        dev * 100.0
    );
    if dev > LITTLE_ERROR_FRACTION {
        Err(format!(
            "{msg}; beyond the {:.0} % tolerance: check the latency unit, the queue depth and the image/job counts",
            LITTLE_ERROR_FRACTION * 100.0
        ))
    } else if dev > LITTLE_WARN_FRACTION {
        Ok(Some(msg))
    } else {
        Ok(None)
    }
}

fn fmt_opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// Renders runs as CSV text (header comment with the marker and schema version first).
pub fn to_csv(runs: &[MeasuredRun]) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(COLUMNS).expect("in-memory write");
    for r in runs {
        let wl = &r.workload;
        let m = &r.measured;
        let rec: Vec<String> = vec![
            r.run_id.clone(),
            r.system_id.clone(),
            match r.kind {
                RunKind::Absolute => "absolute".into(),
                RunKind::Ratio => "ratio".into(),
                RunKind::Device => "device".into(),
            },
            r.scenario
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            fmt_opt(&wl.pattern),
            fmt_opt(&wl.block_size_bytes),
            fmt_opt(&wl.iodepth),
            fmt_opt(&wl.images),
            fmt_opt(&wl.jobs_per_image),
            fmt_opt(&wl.concurrency),
            fmt_opt(&wl.read_percent),
            fmt_opt(&wl.ceph_release),
            fmt_opt(&wl.nodes),
            fmt_opt(&m.iops),
            fmt_opt(&m.bandwidth_bytes_per_sec),
            fmt_opt(&m.latency_mean_secs),
            fmt_opt(&m.latency_p99_secs),
            fmt_opt(&m.ratio.as_ref().map(|r| r.value)),
            fmt_opt(&m.ratio.as_ref().map(|r| r.metric.as_str())),
            fmt_opt(&m.ratio.as_ref().map(|r| r.reference.clone())),
            r.source.clone(),
            r.stated.iter().cloned().collect::<Vec<_>>().join(";"),
            r.inferred.clone(),
            r.assumptions.clone(),
            r.quote.clone(),
            r.reading.to_string(),
            fmt_opt(&r.reading_error_percent),
        ];
        w.write_record(&rec).expect("in-memory write");
    }
    let body = String::from_utf8(w.into_inner().expect("in-memory")).expect("utf-8 in, utf-8 out");
    format!(
        "# {GENERATED_MARKER}; {MEASURED_RUNS_MARK}, schema_version = {SCHEMA_VERSION}; format: calibration-data/README.md\n{body}"
    )
}

/// Appends `new` to the CSV file at `path` (creating it), rewriting the whole file
/// atomically. The read-modify-rename runs under an exclusive advisory lock on the file's
/// directory (`flock`, released when the handle closes), so concurrent appends (several
/// `cephplan import fio` at once) queue instead of losing rows. A file in the current
/// format gets the new rows appended to its text, so comment lines a user added stay; an
/// older file is rewritten in the current format with its comment lines kept at the top.
/// A run id already present is an error (nothing is written). Refuses to touch a file
/// cephplan did not create (hand-curated seed files stay raw).
pub fn append_runs(path: &Path, new: &[MeasuredRun]) -> Result<(), DataError> {
    let io = |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    // Before reading: a file that is not ours is refused with nothing read or written.
    crate::io::check_writable_file(path, "runs.csv")?;
    let lock = std::fs::File::open(&dir).map_err(io)?;
    lock.lock().map_err(io)?;
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let runs = match &existing {
        Some(text) => parse_csv(path, text)?.0,
        None => Vec::new(),
    };
    for r in new {
        let dup = runs
            .iter()
            .find(|x| x.run_id == r.run_id)
            .map(|f| {
                f.origin
                    .as_ref()
                    .map(|(p, l)| format!("{}:{}", p.display(), l))
                    .unwrap_or_default()
            })
            .or_else(|| {
                new.iter()
                    .filter(|x| x.run_id == r.run_id)
                    .nth(1)
                    .map(|_| "this batch".to_string())
            });
        if let Some(first) = dup {
            return Err(DataError::DuplicateImport {
                path: path.to_path_buf(),
                run_id: r.run_id.clone(),
                first,
            });
        }
    }
    let rendered = to_csv(new);
    // The new rows alone first, so that a problem of theirs (a unit, Little's law) is
    // reported as the imported result's, not as a line of the dataset file.
    if let Err(e) = parse_csv(path, &rendered) {
        return Err(match e {
            DataError::Field {
                line,
                column,
                message,
                ..
            } if !new.is_empty() => {
                // Line 1 is the marker, line 2 the header, line 3 the first new row.
                let r = &new[(line as usize).saturating_sub(3).min(new.len() - 1)];
                DataError::NewRow(Box::new(NewRow {
                    path: path.to_path_buf(),
                    run_id: r.run_id.clone(),
                    from: r.source.clone(),
                    column,
                    message,
                }))
            }
            other => other,
        });
    }
    let text = match &existing {
        // Same header: append the new rows (the rendered text without its marker line
        // and header) to the file as it is.
        Some(t) if csv_header(t).as_deref() == Some(&COLUMNS.join(",")[..]) => {
            let rows: String = rendered.lines().skip(2).map(|l| format!("{l}\n")).collect();
            let mut t = t.clone();
            if !t.ends_with('\n') {
                t.push('\n');
            }
            t + &rows
        }
        // An older format: rewrite it in the current one, its comments first.
        Some(t) => {
            let mut all = runs.clone();
            all.extend(new.iter().cloned());
            let body = to_csv(&all);
            let comments: String = t
                .lines()
                .filter(|l| l.starts_with('#') && !l.contains(GENERATED_MARKER))
                .map(|l| format!("{l}\n"))
                .collect();
            let (marker, rest) = body.split_once('\n').unwrap_or((&body, ""));
            format!("{marker}\n{comments}{rest}")
        }
        None => rendered,
    };
    // Validate what will be written (units, Little's law) before touching the file.
    parse_csv(path, &text)?;
    write_atomic_owned(path, text.as_bytes())?;
    drop(lock);
    Ok(())
}

/// The header line of a CSV text: its first line that is not a comment.
fn csv_header(text: &str) -> Option<String> {
    text.lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}
