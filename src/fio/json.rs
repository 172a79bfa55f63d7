//! Typed view of fio 3.x `--output-format=json` and its reduction to a measured summary in
//! SI units (seconds, bytes, bytes per second).
//!
//! fio reports latencies in nanoseconds (`lat_ns`, `clat_ns`) and bandwidth in KiB/s
//! (`bw`); this file is the only place in cephplan that converts them. Only the fields
//! cephplan uses are modelled; unknown fields are ignored so newer fio versions still parse.
//!
//! Several jobs are aggregated as follows: IOPS, bandwidth and bytes are summed; mean
//! latencies are weighted by each job's completed I/O count (exact; fio's `N`, or
//! `total_ios` from fio 3.12 and earlier, which print no `N`); the p99 is fio's own
//! for a single job of one direction and otherwise (several jobs, or a job that reads and
//! writes) an upper-bound approximation from the percentile tables of every job and
//! direction (see [`mixture_percentile_secs`]). fio 3.33's "All clients" entry of a
//! client/server run carries no percentile table, so it is not used for the aggregate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Name fio gives the aggregate entry of `client_stats` when several servers report.
pub const ALL_CLIENTS: &str = "All clients";

/// Key of the 99th percentile in fio's `percentile` maps.
pub const P99_KEY: &str = "99.000000";

#[derive(Debug, thiserror::Error)]
pub enum FioParseError {
    #[error("{file}: no JSON document found in fio's output ({detail}); fio probably failed before writing results or the run was cut short: run fio again with --output-format=json and check its stderr")]
    NoDocument { file: PathBuf, detail: String },
    #[error("{file}: fio's JSON document is truncated or malformed at line {line}, column {column}: {detail}; the run was probably interrupted: repeat it")]
    Malformed {
        file: PathBuf,
        line: usize,
        column: usize,
        detail: String,
    },
    /// Well-formed JSON whose fields are not fio's (a missing section or a value of
    /// another type): not an interrupted run but another file, or one edited by hand.
    #[error("{file}: line {line}, column {column}: {detail}, where fio's JSON output (fio 3.x, --output-format=json) holds its own fields; this is not a file fio wrote, or it was edited: point at fio's own JSON output")]
    NotFioJson {
        file: PathBuf,
        line: usize,
        column: usize,
        detail: String,
    },
    #[error("{file}: job \"{job}\"{host} reports error {code}; fix the cause (fio's stderr says which) and repeat the run")]
    JobError {
        file: PathBuf,
        job: String,
        host: String,
        code: i64,
    },
    #[error("{file}: job \"{job}\" used ioengine \"{found}\" but an rbd run was expected; run fio with --ioengine=rbd (cephplan validate does this for you)")]
    WrongEngine {
        file: PathBuf,
        job: String,
        found: String,
    },
    #[error("{file}: fio's output contains no jobs (neither `jobs` nor `client_stats`); the run did not start any job: check the job file and fio's stderr")]
    NoJobs { file: PathBuf },
    /// Jobs of different workloads (fio's `rw` or `bs`): one measured run cannot describe
    /// them, and their figures would be summed as one workload's.
    #[error("{file}: its jobs ran different workloads ({key} = {values}); one measured run describes one workload: run each workload as its own fio run (or split the job file), and import each JSON output as its own run")]
    MixedWorkloads {
        file: PathBuf,
        key: String,
        values: String,
    },
    /// More than one JSON document (fio run again with `>>` onto the same file).
    #[error("{file}: holds {documents} fio JSON documents (line {second_line} starts another; fio appends one per run when its output is redirected with `>>`); one file is one run: keep one document per file (fio --output=FILE writes one) and import each file as its own run")]
    SeveralDocuments {
        file: PathBuf,
        documents: usize,
        second_line: usize,
    },
    /// A job that completed no I/O: with the rbd engine, the image could not be opened
    /// (fio prints `rbd_open failed` on stderr and still writes its JSON, error 0).
    #[error("{file}: job \"{job}\"{host} did no I/O (0 I/Os, 0 bytes in either direction): fio did no I/O: the image could not be opened? (for a missing RBD image fio prints `rbd_open failed` on its stderr and still writes this result with error 0); check that the image{image} exists and is reachable, and repeat the run")]
    NoIo {
        file: PathBuf,
        job: String,
        host: String,
        /// ` "NAME"` from the job's `rbdname`, or empty.
        image: String,
    },
    #[error("{file}: job \"{job}\": {field} = {value} is not a figure fio writes (finite, ≥ 0 and at most {max:e}); the file is damaged or was edited: repeat the run")]
    BadValue {
        file: PathBuf,
        job: String,
        field: String,
        value: String,
        max: f64,
    },
    // The I/O error is in the message, not chained as a source: the CLI prints an error's
    // chain, which would say it twice.
    #[error("cannot read {file}: {error}; {}", match error.kind() {
        std::io::ErrorKind::NotFound => "check the path of fio's JSON output",
        _ => crate::io::read_remedy(error),
    })]
    Io {
        file: PathBuf,
        error: std::io::Error,
    },
}

/// The whole fio JSON document.
#[derive(Debug, Clone, Deserialize)]
pub struct FioOutput {
    #[serde(rename = "fio version", default)]
    pub fio_version: String,
    #[serde(default)]
    pub timestamp: u64,
    #[serde(rename = "global options", default)]
    pub global_options: BTreeMap<String, String>,
    /// Local runs.
    #[serde(default)]
    pub jobs: Vec<FioJobResult>,
    /// Client/server runs (`fio --client=...`): one entry per job per server, plus
    /// [`ALL_CLIENTS`] when several servers report.
    #[serde(default)]
    pub client_stats: Vec<FioJobResult>,
}

/// One job's results (an element of `jobs` or `client_stats`).
#[derive(Debug, Clone, Deserialize)]
pub struct FioJobResult {
    pub jobname: String,
    #[serde(default)]
    pub hostname: Option<String>,
    /// fio server port (client/server runs only).
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub error: i64,
    #[serde(rename = "job options", default)]
    pub job_options: BTreeMap<String, String>,
    pub read: FioDirection,
    pub write: FioDirection,
}

/// Statistics of one direction (read or write) of a job.
#[derive(Debug, Clone, Deserialize)]
pub struct FioDirection {
    pub io_bytes: u64,
    /// KiB/s.
    pub bw: f64,
    pub iops: f64,
    /// Milliseconds.
    #[serde(default)]
    pub runtime: u64,
    #[serde(default)]
    pub total_ios: u64,
    /// Submission to completion, ns.
    pub lat_ns: FioLatency,
    /// Completion latency, ns; carries the percentile table by default.
    pub clat_ns: FioLatency,
}

impl FioDirection {
    /// The I/Os its latencies summarise: fio's `N` (fio 3.13 and later), else the
    /// direction's `total_ios` (fio 3.12 and earlier print no `N`).
    pub fn completed_ios(&self) -> u64 {
        match self.lat_ns.n.max(self.clat_ns.n) {
            0 => self.total_ios,
            n => n,
        }
    }
}

/// A latency distribution summary in nanoseconds.
#[derive(Debug, Clone, Deserialize)]
pub struct FioLatency {
    #[serde(default)]
    pub min: u64,
    #[serde(default)]
    pub max: u64,
    #[serde(default)]
    pub mean: f64,
    #[serde(rename = "N", default)]
    pub n: u64,
    /// Percentile ("99.000000") → ns.
    #[serde(default)]
    pub percentile: BTreeMap<String, u64>,
}

/// How the aggregate p99 was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PercentileMethod {
    /// fio's own value (a single job).
    Exact,
    /// Upper bound from the per-job percentile tables (see [`mixture_percentile_secs`]).
    MixtureUpperBound,
    /// No I/O in this direction, or fio reported no percentiles.
    Unavailable,
}

/// One direction of a measured run, in SI units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredDirection {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// Mean submission-to-completion latency (fio `lat_ns`), I/O-weighted over jobs.
    pub latency_mean_secs: f64,
    /// 99th percentile of completion latency (fio `clat_ns`, the table fio records).
    pub latency_p99_secs: Option<f64>,
    pub p99_method: PercentileMethod,
}

/// A fio run reduced to what cephplan compares with predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSummary {
    pub fio_version: String,
    /// Jobs aggregated (the "All clients" entry excluded).
    pub jobs: usize,
    /// Distinct fio clients (host and port; 1 for a local run).
    pub clients: usize,
    pub read: MeasuredDirection,
    pub write: MeasuredDirection,
    /// read + write.
    pub total_iops: f64,
    pub total_bytes_per_sec: f64,
    /// I/O-weighted over both directions.
    pub latency_mean_secs: f64,
    /// Of every I/O, reads and writes: a run of one direction keeps that direction's p99
    /// (and its method); a mix takes the upper bound of the mixture of every job's read
    /// and write tables ([`mixture_percentile_secs`]), as the p99 of a mix cannot be
    /// rebuilt exactly from two tables without the histograms.
    pub latency_p99_secs: Option<f64>,
    /// How `latency_p99_secs` was obtained.
    #[serde(default = "unavailable")]
    pub p99_method: PercentileMethod,
}

fn unavailable() -> PercentileMethod {
    PercentileMethod::Unavailable
}

/// What the parser should insist on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineCheck {
    /// Every job must show `ioengine=rbd` (in its options or the global options).
    RequireRbd,
    /// Accept any engine.
    Any,
}

/// Parses fio's stdout (`source` names it in errors). Lines before the JSON document
/// (e.g. `fio: pid=..., err=...`) are skipped.
pub fn parse_fio_output(
    text: &str,
    source: &Path,
    engine: EngineCheck,
) -> Result<FioOutput, FioParseError> {
    // A byte-order mark (an editor's UTF-8 save) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n'))
        .ok_or_else(|| FioParseError::NoDocument {
            file: source.to_path_buf(),
            detail: "no line starts with '{'".into(),
        })?;
    let skipped_lines = text[..start].lines().count();
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<FioOutput>();
    let first = stream.next().ok_or_else(|| FioParseError::NoDocument {
        file: source.to_path_buf(),
        detail: "no line starts with '{'".into(),
    })?;
    let end = start + stream.byte_offset();
    let out: FioOutput = first.map_err(|e| {
        let (file, line, column) = (source.to_path_buf(), e.line() + skipped_lines, e.column());
        // serde_json appends " at line L column C" to the message; the variant says where.
        let detail = e.to_string();
        let detail = match detail.rfind(" at line ") {
            Some(i) => detail[..i].to_string(),
            None => detail,
        };
        if e.classify() == serde_json::error::Category::Data {
            FioParseError::NotFioJson {
                file,
                line,
                column,
                detail,
            }
        } else {
            FioParseError::Malformed {
                file,
                line,
                column,
                detail,
            }
        }
    })?;
    // fio's own lines may follow the document; another document may not.
    let rest = &text[end..];
    let starts: Vec<usize> = rest
        .match_indices('{')
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || rest[..i].ends_with('\n'))
        .collect();
    if let Some(&i) = starts.first() {
        return Err(FioParseError::SeveralDocuments {
            file: source.to_path_buf(),
            documents: 1 + starts.len(),
            second_line: text[..end + i].matches('\n').count() + 1,
        });
    }
    check(&out, source, engine)?;
    Ok(out)
}

/// Reads and parses a file written by fio.
pub fn read_fio_file(path: &Path, engine: EngineCheck) -> Result<FioOutput, FioParseError> {
    let text = std::fs::read_to_string(path).map_err(|error| FioParseError::Io {
        file: path.to_path_buf(),
        error,
    })?;
    parse_fio_output(&text, path, engine)
}

/// " on HOST" for a job of a client/server run, empty for a local one (error messages).
fn host_suffix(j: &FioJobResult) -> String {
    j.hostname
        .as_ref()
        .map(|h| format!(" on {h}"))
        .unwrap_or_default()
}

fn check(out: &FioOutput, source: &Path, engine: EngineCheck) -> Result<(), FioParseError> {
    let entries = out.job_entries();
    if entries.is_empty() {
        return Err(FioParseError::NoJobs {
            file: source.to_path_buf(),
        });
    }
    for j in out.jobs.iter().chain(out.client_stats.iter()) {
        if j.error != 0 {
            return Err(FioParseError::JobError {
                file: source.to_path_buf(),
                job: j.jobname.clone(),
                host: host_suffix(j),
                code: j.error,
            });
        }
    }
    // Figures outside what any run produces (a damaged or edited file) are refused here,
    // so that the sums of `summary` stay finite: 1e12 IOPS or I/Os, 1e15 KiB/s, 1e15 ns
    // (11.6 days), 1e18 bytes.
    for j in &entries {
        for (dir, d) in [("read", &j.read), ("write", &j.write)] {
            let floats = [
                ("iops", d.iops, 1e12),
                ("bw", d.bw, 1e15),
                ("lat_ns.mean", d.lat_ns.mean, 1e15),
                ("clat_ns.mean", d.clat_ns.mean, 1e15),
            ];
            let ints = [
                ("io_bytes", d.io_bytes, 1e18),
                ("total_ios", d.total_ios, 1e12),
                ("lat_ns.N", d.lat_ns.n, 1e12),
                ("clat_ns.N", d.clat_ns.n, 1e12),
            ];
            let bad = floats
                .into_iter()
                .find(|(_, v, max)| !(0.0..=*max).contains(v))
                .map(|(f, v, max)| (f, v.to_string(), max))
                .or_else(|| {
                    ints.into_iter()
                        .chain(
                            d.clat_ns
                                .percentile
                                .values()
                                .map(|v| ("clat_ns.percentile", *v, 1e15)),
                        )
                        .find(|(_, v, max)| *v as f64 > *max)
                        .map(|(f, v, max)| (f, v.to_string(), max))
                });
            if let Some((field, value, max)) = bad {
                return Err(FioParseError::BadValue {
                    file: source.to_path_buf(),
                    job: j.jobname.clone(),
                    field: format!("{dir}.{field}"),
                    value,
                    max,
                });
            }
        }
    }
    if engine == EngineCheck::RequireRbd {
        for j in &entries {
            let found = j
                .job_options
                .get("ioengine")
                .or_else(|| out.global_options.get("ioengine"))
                .map(String::as_str)
                .unwrap_or("(not stated; fio's default psync)");
            if found != "rbd" {
                return Err(FioParseError::WrongEngine {
                    file: source.to_path_buf(),
                    job: j.jobname.clone(),
                    found: found.to_string(),
                });
            }
        }
    }
    // A job that did nothing would count as an image running at 0 IOPS in every sum.
    let idle = |d: &FioDirection| d.io_bytes == 0 && d.completed_ios() == 0;
    if let Some(j) = entries.iter().find(|j| idle(&j.read) && idle(&j.write)) {
        return Err(FioParseError::NoIo {
            file: source.to_path_buf(),
            job: j.jobname.clone(),
            host: host_suffix(j),
            image: j
                .job_options
                .get("rbdname")
                .or_else(|| out.global_options.get("rbdname"))
                .map(|n| format!(" \"{n}\""))
                .unwrap_or_default(),
        });
    }
    Ok(())
}

impl FioOutput {
    /// The per-job entries (local `jobs`, else `client_stats` without "All clients").
    pub fn job_entries(&self) -> Vec<&FioJobResult> {
        if !self.jobs.is_empty() {
            self.jobs.iter().collect()
        } else {
            self.client_stats
                .iter()
                .filter(|j| j.jobname != ALL_CLIENTS)
                .collect()
        }
    }

    /// fio's own aggregate over several servers, if present (no percentiles in fio 3.33).
    pub fn all_clients(&self) -> Option<&FioJobResult> {
        self.client_stats.iter().find(|j| j.jobname == ALL_CLIENTS)
    }

    /// The reads' completion latency (fio `clat_ns`) as `(secs, share of the reads at or
    /// below it)` at every value the jobs' percentile tables list, ascending: a lower bound
    /// of the CDF over all jobs, each weighted by its reads (see
    /// [`mixture_percentile_secs`]). Empty without reads or tables.
    pub fn read_completion_cdf(&self) -> Vec<(f64, f64)> {
        let entries = self.job_entries();
        let tables: Vec<(u64, &BTreeMap<String, u64>)> = entries
            .iter()
            .map(|j| (j.read.completed_ios(), &j.read.clat_ns.percentile))
            .filter(|(n, t)| *n > 0 && !t.is_empty())
            .collect();
        mixture_cdf_lower_bound(&tables)
            .into_iter()
            .map(|(v, f)| (ns(v as f64), f))
            .collect()
    }

    /// Refuses jobs of different workloads (fio's `rw` or `bs`, or their aliases
    /// `readwrite`, `blocksize`): one measured run describes one workload, and
    /// [`Self::summary`] would sum theirs as one. `source` names the file in the error.
    /// (A probe that runs several workloads on purpose, as `lab up` does, does not ask.)
    pub fn require_one_workload(&self, source: &Path) -> Result<(), FioParseError> {
        let entries = self.job_entries();
        for keys in [["rw", "readwrite"], ["bs", "blocksize"]] {
            let values: std::collections::BTreeSet<&str> = entries
                .iter()
                .filter_map(|j| {
                    keys.iter().find_map(|k| {
                        j.job_options
                            .get(*k)
                            .or_else(|| self.global_options.get(*k))
                            .map(|v| v.trim())
                    })
                })
                .collect();
            if values.len() > 1 {
                return Err(FioParseError::MixedWorkloads {
                    file: source.to_path_buf(),
                    key: keys[0].to_string(),
                    values: values.into_iter().collect::<Vec<_>>().join(", "),
                });
            }
        }
        Ok(())
    }

    /// Aggregates all jobs into SI units (see the module docs for the method).
    pub fn summary(&self) -> MeasuredSummary {
        let entries = self.job_entries();
        let mut hosts: Vec<(&str, Option<u16>)> = entries
            .iter()
            .map(|j| (j.hostname.as_deref().unwrap_or("local"), j.port))
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        let read = aggregate(entries.iter().map(|j| &j.read));
        let write = aggregate(entries.iter().map(|j| &j.write));
        let ios = read.ios + write.ios;
        let latency_mean_secs = if ios == 0 {
            0.0
        } else {
            (read.latency_mean_secs * read.ios as f64 + write.latency_mean_secs * write.ios as f64)
                / ios as f64
        };
        let (latency_p99_secs, p99_method) = match (read.ios, write.ios) {
            (_, 0) => (read.latency_p99_secs, read.p99_method),
            (0, _) => (write.latency_p99_secs, write.p99_method),
            _ => {
                let tables: Vec<(u64, &BTreeMap<String, u64>)> = entries
                    .iter()
                    .flat_map(|j| [&j.read, &j.write])
                    .filter(|d| d.completed_ios() > 0)
                    .map(|d| (d.completed_ios(), &d.clat_ns.percentile))
                    .collect();
                match mixture_percentile_secs(&tables, 99.0) {
                    Some(v) => (Some(v), PercentileMethod::MixtureUpperBound),
                    None => (None, PercentileMethod::Unavailable),
                }
            }
        };
        MeasuredSummary {
            fio_version: self.fio_version.clone(),
            jobs: entries.len(),
            clients: hosts.len(),
            total_iops: read.iops + write.iops,
            total_bytes_per_sec: read.bytes_per_sec + write.bytes_per_sec,
            read,
            write,
            latency_mean_secs,
            latency_p99_secs,
            p99_method,
        }
    }
}

fn ns(v: f64) -> f64 {
    v * 1e-9
}

fn aggregate<'a>(dirs: impl Iterator<Item = &'a FioDirection>) -> MeasuredDirection {
    let dirs: Vec<&FioDirection> = dirs.collect();
    let count = |d: &FioDirection| d.completed_ios();
    let ios: u64 = dirs.iter().map(|d| count(d)).sum();
    let bytes: u64 = dirs.iter().map(|d| d.io_bytes).sum();
    let iops: f64 = dirs.iter().map(|d| d.iops).sum();
    let bytes_per_sec: f64 = dirs.iter().map(|d| d.bw * 1024.0).sum();
    let latency_mean_secs = if ios == 0 {
        0.0
    } else {
        ns(dirs
            .iter()
            .map(|d| d.lat_ns.mean * count(d) as f64)
            .sum::<f64>()
            / ios as f64)
    };
    let (latency_p99_secs, p99_method) = if ios == 0 {
        (None, PercentileMethod::Unavailable)
    } else if let [d] = dirs.as_slice() {
        match d.clat_ns.percentile.get(P99_KEY) {
            Some(&v) => (Some(ns(v as f64)), PercentileMethod::Exact),
            None => (None, PercentileMethod::Unavailable),
        }
    } else {
        let tables: Vec<(u64, &BTreeMap<String, u64>)> = dirs
            .iter()
            .filter(|d| count(d) > 0)
            .map(|d| (count(d), &d.clat_ns.percentile))
            .collect();
        match mixture_percentile_secs(&tables, 99.0) {
            Some(v) => (Some(v), PercentileMethod::MixtureUpperBound),
            None => (None, PercentileMethod::Unavailable),
        }
    };
    MeasuredDirection {
        ios,
        bytes,
        iops,
        bytes_per_sec,
        latency_mean_secs,
        latency_p99_secs,
        p99_method,
    }
}

/// The `q`-th percentile (0-100, seconds) of a mixture of jobs, each given by its I/O
/// count and fio percentile table (key "99.000000" → ns).
///
/// Each job's CDF is known only at its table points; between them it is bounded below by
/// the last listed percentile at or below a value (a step function). The mixture CDF
/// `F(v) = Σ wⱼ Fⱼ(v)` built from those lower bounds is itself a lower bound, so the
/// smallest table value where it reaches `q` is an **upper bound** of the true mixture
/// percentile (tight to within one table step). Returns `None` if no table has entries.
pub fn mixture_percentile_secs(tables: &[(u64, &BTreeMap<String, u64>)], q: f64) -> Option<f64> {
    mixture_cdf_lower_bound(tables)
        .into_iter()
        .find_map(|(v, f)| (f + 1e-9 >= q / 100.0).then_some(ns(v as f64)))
}

/// The mixture CDF's lower bound (see [`mixture_percentile_secs`]) at every value the
/// tables list: `(value in ns, share of I/Os at or below it)`, ascending. Empty when no
/// job has I/Os or a table.
fn mixture_cdf_lower_bound(tables: &[(u64, &BTreeMap<String, u64>)]) -> Vec<(u64, f64)> {
    let total: u64 = tables.iter().map(|(n, _)| *n).sum();
    if total == 0 {
        return Vec::new();
    }
    let parsed: Vec<(f64, Vec<(f64, u64)>)> = tables
        .iter()
        .map(|(n, t)| {
            let mut pts: Vec<(f64, u64)> = t
                .iter()
                .filter_map(|(k, v)| k.parse::<f64>().ok().map(|p| (p, *v)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (*n as f64 / total as f64, pts)
        })
        .collect();
    let mut candidates: Vec<u64> = parsed
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .into_iter()
        .map(|v| {
            let f: f64 = parsed
                .iter()
                .map(|(w, pts)| {
                    w * pts
                        .iter()
                        .filter(|(_, val)| *val <= v)
                        .map(|(p, _)| *p)
                        .fold(0.0, f64::max)
                })
                .sum();
            (v, f / 100.0)
        })
        .collect()
}
