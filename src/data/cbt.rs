//! Importing a CBT (Ceph Benchmarking Tool) `librbdfio` results tree as dataset rows.
//!
//! CBT (ceph/cbt since commit 55cb681, 2017, "benchmark: remove dir hierarchy for storing
//! results") archives each benchmark of a sweep, per iteration, flat in
//! `ARCHIVE/results/<iteration, 8 digits>/id-<sha1 of its settings, 8 hex>/`
//! (`benchmark/benchmark.py`), with one fio output per volume and client:
//! `output.<volume>.<client>` (fio's `--output-format=json,normal`) and, after CBT's own
//! parsing, `json_output.<volume>.<client>`
//! (the JSON part). As the id differs per iteration, the point is named from the files' fio
//! options the way CBT names its run directory (`op_size-<bytes:08>/concurrent_procs-<n:03>/
//! iodepth-<n:03>/<mode>`, `benchmark/librbdfio.py`); older archives that nest that path
//! below `id-<hash>/` are read by the path. One point's files ran concurrently on
//! different clients, so a point's IOPS and bandwidth are the **sums** over its files and
//! its mean latency the I/O-weighted mean (fio's own aggregation, through
//! [`crate::fio::json::FioOutput::summary`] on the merged jobs). Iterations (the same point
//! under `results/00000000`, `results/00000001`, ...) are repeats: a row's IOPS and
//! bandwidth are their mean, its mean latency the I/O-weighted mean over all of them, its
//! p99 the largest iteration's. This is the aggregation of CBT's own
//! `post_processing/formatter/test_run_result.py` (IOPS and bandwidth summed over a run's
//! files, mean latency weighted by I/O count), except that cephplan's latency is fio's
//! `lat_ns` (submission to completion) where CBT's formatter reports `clat_ns`.
//!
//! Not here: reading fio's JSON (`fio::json`), writing the dataset (`append_runs`), CBT's
//! YAML (`validate`'s `--emit-cbt`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::import::{run_from_fio, ImportContext};
use super::MeasuredRun;
use crate::fio::json::{parse_fio_output, EngineCheck, FioOutput, FioParseError};

#[derive(Debug, thiserror::Error)]
pub enum CbtError {
    #[error("{root}: no CBT librbdfio results found (files named json_output.N.HOST or output.N.HOST below results/<iteration>/id-<hash>/...); give the archive directory CBT was run with")]
    NoResults { root: PathBuf },
    // The I/O error is in the message, not chained as a source: the CLI prints an error's
    // chain, which would say it twice.
    #[error("cannot read {path}: {error}; check the path of the CBT archive")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{0}")]
    Fio(#[from] FioParseError),
    /// A file of the tree whose job did no I/O ([`FioParseError::NoIo`]), with what in a
    /// CBT run leaves an image unopened.
    #[error("{0}. In a CBT archive this is a volume that did not exist: CBT creates and pre-fills the volumes of a sweep's first benchmark only, so a later point with more volumes_per_client ran on missing images; rerun with the largest count first (`cephplan validate --emit-cbt` lists it so), or import the points that ran from their own directories")]
    NoIo(FioParseError),
    #[error("{root}: every iteration directory lacks fio outputs, e.g. {dir} lacks {missing}; CBT did not finish (or copy back) these runs: import an archive whose runs completed")]
    AllIncomplete {
        root: PathBuf,
        dir: PathBuf,
        missing: String,
    },
    #[error("{first} and {second} are both CBT point {point} in one iteration (their benchmarks differ in a setting other than mode, op_size, iodepth and process count); import them from separate archive directories")]
    DuplicatePoint {
        point: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// What the caller knows besides the tree.
#[derive(Debug, Clone)]
pub struct CbtContext {
    pub system_id: String,
    /// The scenario as written in the dataset (relative to the CSV).
    pub scenario: PathBuf,
    /// Run ids are `<prefix>-<point>`, e.g. `cbt-op_size-00004096-...-iodepth-008-randwrite`.
    pub run_id_prefix: String,
    /// The measured cluster's data devices, for the hard-disk cache check
    /// ([`super::import::cache_served_reads`]); `None`: not checked.
    pub data_drive: Option<crate::spec::DriveEntry>,
}

/// One point of the tree, as imported.
#[derive(Debug, Clone, PartialEq)]
pub struct CbtPoint {
    /// The point's directory below `id-<hash>/` (the same in every iteration).
    pub point: String,
    pub iterations: usize,
    /// fio outputs read (volumes × clients × iterations).
    pub files: usize,
    pub clients: usize,
    /// Its random reads on hard disks completed faster than a disk can position in some
    /// iteration (the row's assumptions carry the note).
    pub cache_served: Option<super::import::CacheServedReads>,
}

/// The rows of a tree, one per point, and what each was made of.
#[derive(Debug, Clone)]
pub struct CbtImport {
    pub runs: Vec<MeasuredRun>,
    pub points: Vec<CbtPoint>,
    /// Iteration directories left out because files of theirs are missing (the caller
    /// says so: an iteration CBT did not finish, or did not copy back).
    pub incomplete: Vec<IncompleteIteration>,
}

/// An iteration directory of a tree that lacks fio outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct IncompleteIteration {
    pub dir: PathBuf,
    /// The files a complete point would have (`json_output.<volume>.<client>`).
    pub missing: Vec<PathBuf>,
}

/// `output.N[.HOST]` or `json_output.N[.HOST]`: (is the JSON-only file, volume, client).
fn result_file(name: &str) -> Option<(bool, u32, String)> {
    let (json, rest) = if let Some(r) = name.strip_prefix("json_output.") {
        (true, r)
    } else {
        (false, name.strip_prefix("output.")?)
    };
    let (volume, host) = rest.split_once('.').unwrap_or((rest, ""));
    if volume.is_empty() || !volume.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((json, volume.parse().ok()?, host.to_string()))
}

/// Every file below `dir` (not following symbolic links), depth-limited.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), CbtError> {
    let io = |error| CbtError::Io {
        path: dir.to_path_buf(),
        error,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() && depth > 0 {
            walk(&e.path(), depth - 1, out)?;
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    Ok(())
}

/// (iteration, point) of a result file's directory relative to the tree's root: after
/// `results/<8 digits>/id-<hash>/` in CBT's layout, else iteration "" and the whole path.
fn locate(rel_dir: &Path) -> (String, String) {
    let parts: Vec<String> = rel_dir
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for i in 0..parts.len() {
        let it = parts.get(i + 1);
        let id = parts.get(i + 2);
        if parts[i] == "results"
            && it.is_some_and(|s| s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()))
            && id.is_some_and(|s| s.starts_with("id-"))
        {
            return (it.cloned().unwrap_or_default(), parts[i + 3..].join("/"));
        }
    }
    (String::new(), parts.join("/"))
}

/// The fio outputs of one directory by (client host, volume number): the
/// `json_output.*` CBT parsed out, else the raw `output.*`.
type Files = BTreeMap<(String, u32), PathBuf>;

/// The files a directory lacks for a complete point: every client of the tree (`hosts`:
/// CBT runs every benchmark on all its clients) has volumes `0..n` (n the most any client
/// has, or `volumes_per_client` of the directory's `benchmark_config.yaml` when it states
/// it), as CBT runs each client's volumes alike. A directory lacking some is an iteration
/// CBT did not finish (or copy back).
fn missing_files(
    dir: &Path,
    files: &Files,
    hosts: &std::collections::BTreeSet<&str>,
) -> Vec<PathBuf> {
    let mut per_host: BTreeMap<&str, Vec<u32>> = hosts.iter().map(|h| (*h, Vec::new())).collect();
    for (host, volume) in files.keys() {
        per_host.entry(host).or_default().push(*volume);
    }
    let most = per_host
        .values()
        .filter_map(|v| v.iter().max())
        .max()
        .map_or(0, |m| m + 1);
    let n = std::fs::read_to_string(dir.join("benchmark_config.yaml"))
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("volumes_per_client:")?
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
        })
        .unwrap_or(most);
    let mut missing = Vec::new();
    for (host, volumes) in per_host {
        for v in 0..n {
            if !volumes.contains(&v) {
                let suffix = if host.is_empty() {
                    String::new()
                } else {
                    format!(".{host}")
                };
                missing.push(dir.join(format!("json_output.{v}{suffix}")));
            }
        }
    }
    missing
}

/// Reads a directory's fio outputs into one output whose jobs are every file's jobs,
/// each job carrying its file's global options (fio's own precedence: a job option
/// overrides a global one) and its client as hostname. Returns the output, the files
/// read and their clients.
fn merge_dir(files: &Files) -> Result<(FioOutput, usize, Vec<String>), CbtError> {
    let mut merged: Option<FioOutput> = None;
    let mut clients = Vec::new();
    for ((host, _volume), path) in files {
        let text = std::fs::read_to_string(path).map_err(|error| CbtError::Io {
            path: path.clone(),
            error,
        })?;
        let parsed =
            parse_fio_output(&text, path, EngineCheck::RequireRbd).map_err(|e| match e {
                FioParseError::NoIo { .. } => CbtError::NoIo(e),
                e => CbtError::Fio(e),
            })?;
        parsed.require_one_workload(path).map_err(CbtError::Fio)?;
        // A client is the file's host suffix (or the file, without one).
        let client = if host.is_empty() {
            path.display().to_string()
        } else {
            host.clone()
        };
        clients.push(client.clone());
        let mut jobs: Vec<_> = parsed.job_entries().into_iter().cloned().collect();
        for j in &mut jobs {
            j.hostname = Some(client.clone());
            j.port = None;
            for (k, v) in &parsed.global_options {
                j.job_options.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        match &mut merged {
            None => {
                merged = Some(FioOutput {
                    jobs,
                    client_stats: Vec::new(),
                    global_options: BTreeMap::new(),
                    ..parsed
                })
            }
            Some(m) => m.jobs.extend(jobs),
        }
    }
    Ok((merged.expect("at least one file"), files.len(), clients))
}

/// The name CBT's `LibrbdFio.__init__` gives a point's run directory,
/// `op_size-<bytes:08>/concurrent_procs-<n:03>/iodepth-<n:03>/<mode>`, from the fio options
/// of its files: `bs`, `iodepth`, `rw`, and `concurrent_procs` = its jobs / `numjobs`
/// (CBT's total_procs = procs_per_volume × volumes_per_client × clients). Where the jobs'
/// depths differ (`total_iodepth`), `total_iodepth-<their sum:03>` stands for `iodepth-…`.
/// `None` when the jobs disagree on another option or lack one.
fn cbt_point_name(out: &FioOutput) -> Option<String> {
    let one = |key: &str| -> Option<String> {
        let v: std::collections::BTreeSet<&String> = out
            .jobs
            .iter()
            .filter_map(|j| j.job_options.get(key))
            .collect();
        (v.len() == 1 && out.jobs.iter().all(|j| j.job_options.contains_key(key)))
            .then(|| v.into_iter().next().cloned())
            .flatten()
    };
    let bs = crate::units::parse_bytes(&one("bs")?).ok()?;
    // Jobs of different depths (CBT's `total_iodepth` over the volumes) are named by
    // their sum, the same in every iteration.
    let iodepth = match one("iodepth") {
        Some(d) => format!("iodepth-{:03}", d.parse::<u32>().ok()?),
        None => {
            let sum = out
                .jobs
                .iter()
                .map(|j| j.job_options.get("iodepth")?.parse::<u32>().ok())
                .sum::<Option<u32>>()?;
            format!("total_iodepth-{sum:03}")
        }
    };
    let rw = one("rw")?;
    let numjobs: usize = one("numjobs").map_or(Some(1), |n| n.parse().ok())?;
    let procs = out.jobs.len() / numjobs.max(1);
    Some(format!(
        "op_size-{bs:08}/concurrent_procs-{procs:03}/{iodepth}/{rw}"
    ))
}

/// Reads a CBT librbdfio results tree into one dataset row per point (see the module doc).
/// Every fio output must come from the rbd engine.
pub fn import_cbt(root: &Path, ctx: &CbtContext) -> Result<CbtImport, CbtError> {
    let mut files = Vec::new();
    walk(root, 16, &mut files)?;
    // (iteration, directory, path below id-<hash>/) → (client, volume) → (is the JSON
    // CBT parsed out, file).
    type Found = BTreeMap<(String, u32), (bool, PathBuf)>;
    let mut dirs: BTreeMap<(String, PathBuf, String), Found> = BTreeMap::new();
    for f in files {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((json, volume, host)) = result_file(name) else {
            continue;
        };
        let rel = f
            .parent()
            .and_then(|p| p.strip_prefix(root).ok())
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let (iteration, below) = locate(&rel);
        let slot = dirs
            .entry((iteration, rel, below))
            .or_default()
            .entry((host, volume));
        // CBT's parsed-out JSON over its raw output (`walk` sorts `json_output.*` after
        // `output.*`, and either order ends with the JSON).
        match slot {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert((json, f.clone()));
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                if json && !o.get().0 {
                    o.insert((json, f.clone()));
                }
            }
        }
    }
    if dirs.is_empty() {
        return Err(CbtError::NoResults {
            root: root.to_path_buf(),
        });
    }
    struct Dir {
        rel: PathBuf,
        output: FioOutput,
        files: usize,
        clients: Vec<String>,
    }
    // point → iteration → its directory, merged.
    let mut tree: BTreeMap<String, BTreeMap<String, Dir>> = BTreeMap::new();
    let hosts: std::collections::BTreeSet<&str> = dirs
        .values()
        .flat_map(|found| found.keys().map(|(h, _)| h.as_str()))
        .collect();
    let mut incomplete = Vec::new();
    for ((iteration, rel, below), found) in &dirs {
        let files: Files = found
            .iter()
            .map(|(k, (_, path))| (k.clone(), path.clone()))
            .collect();
        let missing = missing_files(&root.join(rel), &files, &hosts);
        if !missing.is_empty() {
            incomplete.push(IncompleteIteration {
                dir: root.join(rel),
                missing,
            });
            continue;
        }
        let (output, n_files, clients) = merge_dir(&files)?;
        // Pre-2017 CBT nested the point below id-<hash>/; since ceph/cbt 55cb681 the files
        // sit in id-<hash>/ itself and the fio options name the point.
        let point = if below.is_empty() {
            cbt_point_name(&output).unwrap_or_else(|| rel.display().to_string())
        } else {
            below.clone()
        };
        let slot = tree.entry(point.clone()).or_default();
        if let Some(other) = slot.get(iteration) {
            return Err(CbtError::DuplicatePoint {
                point,
                first: root.join(&other.rel),
                second: root.join(rel),
            });
        }
        slot.insert(
            iteration.clone(),
            Dir {
                rel: rel.clone(),
                output,
                files: n_files,
                clients,
            },
        );
    }
    let mut out = CbtImport {
        runs: Vec::new(),
        points: Vec::new(),
        incomplete,
    };
    for (point, iterations) in tree {
        let hosts: std::collections::BTreeSet<&String> =
            iterations.values().flat_map(|d| &d.clients).collect();
        let n_files = iterations.values().map(|d| d.files).sum();
        let n_clients = hosts.len();
        let dirs: Vec<String> = iterations
            .values()
            .map(|d| root.join(&d.rel).display().to_string())
            .collect();
        let per_iteration: Vec<FioOutput> = iterations.into_values().map(|d| d.output).collect();
        let run_id = format!("{}-{}", ctx.run_id_prefix, point.replace('/', "-"));
        let source = match dirs.as_slice() {
            [one] => one.clone(),
            all => format!("averaged over {} iterations: {}", all.len(), all.join("; ")),
        };
        let mut row = combine(&per_iteration, ctx, &run_id, &source);
        let cache_served = ctx.data_drive.as_ref().and_then(|drive| {
            per_iteration
                .iter()
                .find_map(|o| super::import::cache_served_reads(o, row.workload.pattern, drive))
        });
        if let Some(c) = &cache_served {
            super::import::note_cache_served(&mut row, c);
        }
        out.points.push(CbtPoint {
            point,
            iterations: per_iteration.len(),
            files: n_files,
            clients: n_clients,
            cache_served,
        });
        out.runs.push(row);
    }
    if out.runs.is_empty() {
        if let Some(first) = out.incomplete.first() {
            return Err(CbtError::AllIncomplete {
                root: root.to_path_buf(),
                dir: first.dir.clone(),
                missing: first
                    .missing
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(out)
}

/// One row from a point's iterations (each the merged jobs of its files).
fn combine(iterations: &[FioOutput], ctx: &CbtContext, run_id: &str, source: &str) -> MeasuredRun {
    let ictx = ImportContext {
        run_id: run_id.to_string(),
        system_id: ctx.system_id.clone(),
        scenario: ctx.scenario.clone(),
        source: PathBuf::from(source),
    };
    let mut row = run_from_fio(&iterations[0], &ictx);
    let sums: Vec<_> = iterations.iter().map(|o| o.summary()).collect();
    let n = sums.len() as f64;
    let mean =
        |f: &dyn Fn(&crate::fio::json::MeasuredSummary) -> f64| sums.iter().map(f).sum::<f64>() / n;
    let ios: Vec<f64> = sums
        .iter()
        .map(|s| (s.read.ios + s.write.ios) as f64)
        .collect();
    let all_ios: f64 = ios.iter().sum();
    let iops = mean(&|s| s.total_iops);
    let bw = mean(&|s| s.total_bytes_per_sec);
    let latency = if all_ios > 0.0 {
        sums.iter()
            .zip(&ios)
            .map(|(s, w)| s.latency_mean_secs * w)
            .sum::<f64>()
            / all_ios
    } else {
        0.0
    };
    let p99 = sums
        .iter()
        .filter_map(|s| s.latency_p99_secs)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    // Jobs per image from the jobs fio reported (CBT's procs_per_volume runs several jobs
    // on one image with numjobs = 1).
    if let (Some(images), jobs) = (row.workload.images, iterations[0].jobs.len() as u32) {
        if images > 0 && jobs % images == 0 {
            row.workload.jobs_per_image = Some(jobs / images);
        }
    }
    row.measured.iops = (iops > 0.0).then_some(iops);
    row.measured.bandwidth_bytes_per_sec = (bw > 0.0).then_some(bw);
    row.measured.latency_mean_secs = (latency > 0.0).then_some(latency);
    row.measured.latency_p99_secs = p99.filter(|p| *p > 0.0);
    if row.measured.latency_p99_secs.is_none() {
        row.stated.remove("latency_p99");
    }
    row.inferred = format!(
        "CBT librbdfio point: IOPS and bandwidth summed over {} fio output(s) per iteration and averaged over {} iteration(s); latency_mean I/O-weighted over all; latency_p99 the largest iteration's ({})",
        iterations[0].jobs.len(),
        iterations.len(),
        row.inferred
    );
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_files_and_layout_are_recognised() {
        assert_eq!(
            result_file("json_output.0.client-a"),
            Some((true, 0, "client-a".into()))
        );
        assert_eq!(result_file("output.12"), Some((false, 12, String::new())));
        for other in [
            "output.x",
            "output.",
            "json_output",
            "output_0",
            "collectl.0",
        ] {
            assert_eq!(result_file(other), None, "{other}");
        }
        let (it, point) = locate(Path::new(
            "results/00000001/id-3f2a1b4c/op_size-00004096/concurrent_procs-002/iodepth-008/randwrite",
        ));
        assert_eq!(it, "00000001");
        assert_eq!(
            point,
            "op_size-00004096/concurrent_procs-002/iodepth-008/randwrite"
        );
        assert_eq!(locate(Path::new("a/b")), (String::new(), "a/b".into()));
    }

    fn fixture_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cbt/archive")
    }

    fn ctx() -> CbtContext {
        CbtContext {
            system_id: "lab".into(),
            scenario: PathBuf::from("scenario.toml"),
            run_id_prefix: "cbt".into(),
            data_drive: None,
        }
    }

    /// The oracle, read from the recorded files with serde_json alone: for each fio mode
    /// (`global options`.rw), per iteration directory the sum over its `json_output.*`
    /// files' jobs of `iops` and of `bw` (KiB/s) × 1024, and Σ `lat_ns.mean` × `lat_ns.N`
    /// and Σ `lat_ns.N`; the row is the mean of the per-iteration sums of IOPS and
    /// bandwidth and Σ(mean × N) / Σ N over all iterations. Also the largest job p99
    /// (`clat_ns.percentile."99.000000"`), which the row's p99 bound cannot be below.
    /// One iteration's sums: IOPS, bytes/s, Σ mean latency × N, Σ N, largest p99.
    type IterationSums = (f64, f64, f64, f64, f64);

    fn oracle() -> BTreeMap<String, (f64, f64, f64, f64)> {
        let mut per: BTreeMap<String, Vec<IterationSums>> = BTreeMap::new();
        for it in std::fs::read_dir(fixture_root().join("results")).unwrap() {
            for id in std::fs::read_dir(it.unwrap().path()).unwrap() {
                let (mut rw, mut iops, mut bw, mut lat_n, mut n, mut p99) =
                    (String::new(), 0.0, 0.0, 0.0, 0.0, 0.0_f64);
                for f in std::fs::read_dir(id.unwrap().path()).unwrap() {
                    let f = f.unwrap().path();
                    if !f
                        .file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .starts_with("json_output.")
                    {
                        continue;
                    }
                    let v: serde_json::Value =
                        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
                    rw = v["global options"]["rw"].as_str().unwrap().to_string();
                    let dir = if rw.contains("write") {
                        "write"
                    } else {
                        "read"
                    };
                    for j in v["jobs"].as_array().unwrap() {
                        let d = &j[dir];
                        iops += d["iops"].as_f64().unwrap();
                        bw += d["bw"].as_f64().unwrap() * 1024.0;
                        let jn = d["lat_ns"]["N"].as_f64().unwrap();
                        lat_n += d["lat_ns"]["mean"].as_f64().unwrap() * 1e-9 * jn;
                        n += jn;
                        p99 = p99
                            .max(d["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() * 1e-9);
                    }
                }
                per.entry(rw).or_default().push((iops, bw, lat_n, n, p99));
            }
        }
        per.into_iter()
            .map(|(rw, its)| {
                let k = its.len() as f64;
                let sum = |f: fn(&(f64, f64, f64, f64, f64)) -> f64| its.iter().map(f).sum::<f64>();
                let p99 = its.iter().map(|t| t.4).fold(0.0, f64::max);
                (
                    rw,
                    (
                        sum(|t| t.0) / k,
                        sum(|t| t.1) / k,
                        sum(|t| t.2) / sum(|t| t.3),
                        p99,
                    ),
                )
            })
            .collect()
    }

    /// The fixture (tests/fixtures/cbt/README.md): a CBT archive recorded on the local lab,
    /// 2 clients × 1 volume, 2 iterations of 4k randwrite and 4k randread at iodepth 8,
    /// each benchmark flat in its own `id-<hash>/`.
    #[test]
    fn the_recorded_tree_sums_clients_and_averages_iterations() {
        let imp = import_cbt(&fixture_root(), &ctx()).unwrap();
        let want = oracle();
        assert_eq!(want.len(), 2, "{want:?}");
        let names: Vec<&str> = imp.points.iter().map(|p| p.point.as_str()).collect();
        assert_eq!(
            names,
            [
                "op_size-00004096/concurrent_procs-002/iodepth-008/randread",
                "op_size-00004096/concurrent_procs-002/iodepth-008/randwrite",
            ]
        );
        for (p, r) in imp.points.iter().zip(&imp.runs) {
            assert_eq!((p.iterations, p.files, p.clients), (2, 4, 2), "{p:?}");
            let rw = p.point.rsplit('/').next().unwrap();
            let (iops, bw, lat, p99) = want[rw];
            assert_eq!(r.run_id, format!("cbt-{}", p.point.replace('/', "-")));
            let m = &r.measured;
            approx::assert_relative_eq!(m.iops.unwrap(), iops, max_relative = 1e-12);
            approx::assert_relative_eq!(
                m.bandwidth_bytes_per_sec.unwrap(),
                bw,
                max_relative = 1e-12
            );
            approx::assert_relative_eq!(m.latency_mean_secs.unwrap(), lat, max_relative = 1e-9);
            assert!(m.latency_p99_secs.unwrap() >= p99 * (1.0 - 1e-12));
            let w = &r.workload;
            assert_eq!(w.pattern.map(|p| p.to_string()), Some(rw.to_string()));
            assert_eq!(
                (w.block_size_bytes, w.iodepth, w.images, w.jobs_per_image),
                (Some(4096), Some(8), Some(2), Some(1))
            );
            // Little's law: 2 images × iodepth 8 = 16 in flight.
            let in_flight = m.iops.unwrap() * m.latency_mean_secs.unwrap();
            assert!((in_flight - 16.0).abs() < 0.3, "{rw}: {in_flight}");
        }
    }

    /// Audit F4: CBT's `total_iodepth: 16` over 3 volumes ran fio at `--iodepth` 6, 5, 5
    /// (tests/fixtures/cbt/README.md, `total-iodepth/`, real output, unedited). The row
    /// states the 16 in flight as `concurrency` and no iodepth (never the scenario's per-job
    /// depth), the point is named by that sum, and Little's law holds on it: Σ IOPS (the
    /// files' `write.iops`: 813.64 + 709.29 + 741.59) × the I/O-weighted mean latency
    /// (7.36, 7.04, 6.72 ms) ≈ 16.
    #[test]
    fn jobs_of_different_depths_state_their_sum_as_concurrency() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cbt/total-iodepth");
        let imp = import_cbt(&root, &ctx()).unwrap();
        assert_eq!(imp.points.len(), 1);
        assert_eq!(
            imp.points[0].point,
            "op_size-00004096/concurrent_procs-003/total_iodepth-016/randwrite"
        );
        let r = &imp.runs[0];
        let w = &r.workload;
        assert_eq!(
            (w.iodepth, w.concurrency, w.images),
            (None, Some(16), Some(3))
        );
        assert!(r.stated.contains("concurrency") && !r.stated.contains("iodepth"));
        assert!(
            r.assumptions.contains("iodepths differ (5, 6)"),
            "{}",
            r.assumptions
        );
        approx::assert_relative_eq!(
            r.measured.iops.unwrap(),
            813.643927 + 709.290709 + 741.591742,
            max_relative = 1e-9
        );
        let in_flight = r.measured.iops.unwrap() * r.measured.latency_mean_secs.unwrap();
        assert!((in_flight - 16.0).abs() < 0.5, "{in_flight}");
        assert_eq!(w.in_flight(), Some(16.0));
    }

    /// Audit F7: an iteration that lacks a client's file is left out and named with the
    /// file it lacks (it was read as another point of fewer processes before), and a row
    /// averaged over iterations names every iteration's directory as its source.
    #[test]
    fn an_incomplete_iteration_is_left_out_naming_the_missing_file() {
        let d = tempfile::tempdir().unwrap();
        for id in ["00000000/id-51e86b00", "00000001/id-a7d5c882"] {
            let to = d.path().join("results").join(id);
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(fixture_root().join("results").join(id)).unwrap() {
                let f = f.unwrap().path();
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        }
        let full = import_cbt(d.path(), &ctx()).unwrap();
        assert!(full.incomplete.is_empty());
        let it0 = d.path().join("results/00000000/id-51e86b00");
        let it1 = d.path().join("results/00000001/id-a7d5c882");
        assert_eq!(
            full.runs[0].source,
            format!(
                "averaged over 2 iterations: {}; {}",
                it0.display(),
                it1.display()
            )
        );
        for f in ["json_output.0.client-b", "output.0.client-b"] {
            std::fs::remove_file(it1.join(f)).unwrap();
        }
        let part = import_cbt(d.path(), &ctx()).unwrap();
        assert_eq!(
            part.incomplete,
            vec![IncompleteIteration {
                dir: it1.clone(),
                missing: vec![it1.join("json_output.0.client-b")],
            }]
        );
        assert_eq!(part.points.len(), 1);
        assert_eq!(part.points[0].iterations, 1);
        assert_eq!(part.runs[0].source, it0.display().to_string());
    }

    #[test]
    fn two_benchmarks_with_one_name_in_an_iteration_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let src = fixture_root().join("results/00000000");
        let id = std::fs::read_dir(&src)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        for copy in ["id-00000001", "id-00000002"] {
            let to = d.path().join("results/00000000").join(copy);
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(&id).unwrap() {
                let f = f.unwrap().path();
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        }
        let e = import_cbt(d.path(), &ctx()).unwrap_err().to_string();
        assert!(
            e.contains("id-00000001") && e.contains("id-00000002"),
            "{e}"
        );
    }

    /// The hard-disk cache check runs on every point of a tree: croit's cache-served MG06
    /// read (tests/fixtures/fio/README.md) laid out as a CBT point is flagged on hard disks
    /// and not on flash; the lab's recorded reads (p1 0.80 ms, p50 2.47 ms: within what a
    /// disk allows) are not flagged even as if on hard disks.
    #[test]
    fn points_whose_reads_a_cache_served_on_hard_disks_carry_a_note() {
        use crate::spec::DriveKind;
        let d = tempfile::tempdir().unwrap();
        let point = d.path().join("results/00000000/id-00000001");
        std::fs::create_dir_all(&point).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/fio/hdd-randread-cache-served-fio312.json"),
            point.join("json_output.0.client-a"),
        )
        .unwrap();
        let with = |root: &Path, kind| {
            import_cbt(
                root,
                &CbtContext {
                    data_drive: Some(crate::data::tests::drive(kind, 0.0125)),
                    ..ctx()
                },
            )
            .unwrap()
        };
        let hdd = with(d.path(), DriveKind::Hdd);
        let c = hdd.points[0].cache_served.expect("flagged");
        assert_eq!(c.share, 0.70);
        assert!(hdd.runs[0].assumptions.contains(&c.note()));
        let flash = with(d.path(), DriveKind::Nvme);
        assert_eq!(flash.points[0].cache_served, None);
        assert!(!flash.runs[0].assumptions.contains("a cache served"));
        let lab = with(&fixture_root(), DriveKind::Hdd);
        assert!(lab.points.iter().all(|p| p.cache_served.is_none()));
    }

    /// Audit F3: a point where one volume's fio could not open its image (a real fio
    /// result for a missing image, tests/fixtures/fio/README.md `rbd-open-failed.json`,
    /// laid out as a third volume of the lab point) is refused naming that file, not
    /// summed in as an image at 0 IOPS.
    #[test]
    fn a_volume_that_did_no_io_is_refused_naming_its_file() {
        let d = tempfile::tempdir().unwrap();
        let src = fixture_root().join("results/00000000/id-51e86b00");
        let to = d.path().join("results/00000000/id-51e86b00");
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&src).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
        let bad = to.join("json_output.1.client-a");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/rbd-open-failed.json"),
            &bad,
        )
        .unwrap();
        let e = import_cbt(d.path(), &ctx()).unwrap_err();
        assert!(matches!(e, CbtError::NoIo(_)), "{e}");
        let m = e.to_string();
        assert!(m.contains(&bad.display().to_string()), "{m}");
        assert!(m.contains("the image could not be opened?"), "{m}");
        assert!(m.contains("largest count first"), "{m}");
    }

    #[test]
    fn a_tree_without_results_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("notes.txt"), "x").unwrap();
        let ctx = CbtContext {
            system_id: "s".into(),
            scenario: PathBuf::from("s.toml"),
            run_id_prefix: "cbt".into(),
            data_drive: None,
        };
        let e = import_cbt(d.path(), &ctx).unwrap_err();
        assert!(e.to_string().contains("no CBT librbdfio results"), "{e}");
    }
}
