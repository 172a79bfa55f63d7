//! Importing a CBT (Ceph Benchmarking Tool) `librbdfio` results tree as dataset rows.
//!
//! CBT archives each run under
//! `ARCHIVE/results/<iteration, 8 digits>/id-<hash>/[osd_ra-N/]op_size-<bytes>/concurrent_procs-<n>/iodepth-<n>/<mode>/`,
//! one fio output per volume and client: `output.<volume>.<client>` (fio's
//! `--output-format=json,normal`) and, after CBT's own parsing, `json_output.<volume>.<client>`
//! (the JSON part). One directory is one point of the sweep; its files ran concurrently on
//! different clients, so a point's IOPS and bandwidth are the **sums** over its files and
//! its mean latency the I/O-weighted mean (fio's own aggregation, through
//! [`crate::fio::json::FioOutput::summary`] on the merged jobs). Iterations (the same point
//! under `results/00000000`, `results/00000001`, ...) are repeats: a row's IOPS and
//! bandwidth are their mean, its mean latency the I/O-weighted mean over all of them, its
//! p99 the largest iteration's.
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
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Fio(#[from] FioParseError),
}

/// What the caller knows besides the tree.
#[derive(Debug, Clone)]
pub struct CbtContext {
    pub system_id: String,
    /// The scenario as written in the dataset (relative to the CSV).
    pub scenario: PathBuf,
    /// Run ids are `<prefix>-<point>`, e.g. `cbt-op_size-00004096-...-iodepth-008-randwrite`.
    pub run_id_prefix: String,
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
}

/// The rows of a tree, one per point, and what each was made of.
#[derive(Debug, Clone)]
pub struct CbtImport {
    pub runs: Vec<MeasuredRun>,
    pub points: Vec<CbtPoint>,
}

/// `output.N[.HOST]` or `json_output.N[.HOST]`: (is the JSON-only file, volume, client).
fn result_file(name: &str) -> Option<(bool, String, String)> {
    let (json, rest) = if let Some(r) = name.strip_prefix("json_output.") {
        (true, r)
    } else {
        (false, name.strip_prefix("output.")?)
    };
    let (volume, host) = rest.split_once('.').unwrap_or((rest, ""));
    (!volume.is_empty() && volume.bytes().all(|b| b.is_ascii_digit()))
        .then(|| (json, volume.to_string(), host.to_string()))
}

/// Every file below `dir` (not following symbolic links), depth-limited.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), CbtError> {
    let io = |source| CbtError::Io {
        path: dir.to_path_buf(),
        source,
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

/// Reads a CBT librbdfio results tree into one dataset row per point (see the module doc).
/// Every fio output must come from the rbd engine.
pub fn import_cbt(root: &Path, ctx: &CbtContext) -> Result<CbtImport, CbtError> {
    let mut files = Vec::new();
    walk(root, 16, &mut files)?;
    // point → iteration → directory's files (json_output.* preferred over output.*).
    type Files = BTreeMap<bool, Vec<(PathBuf, String)>>;
    let mut tree: BTreeMap<String, BTreeMap<String, Files>> = BTreeMap::new();
    for f in files {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((json, _volume, host)) = result_file(name) else {
            continue;
        };
        let rel = f
            .parent()
            .and_then(|p| p.strip_prefix(root).ok())
            .unwrap_or(Path::new(""));
        let (iteration, point) = locate(rel);
        tree.entry(point)
            .or_default()
            .entry(iteration)
            .or_default()
            .entry(json)
            .or_default()
            .push((f.clone(), host));
    }
    if tree.is_empty() {
        return Err(CbtError::NoResults {
            root: root.to_path_buf(),
        });
    }
    let mut out = CbtImport {
        runs: Vec::new(),
        points: Vec::new(),
    };
    for (point, iterations) in &tree {
        let mut per_iteration = Vec::new();
        let mut n_files = 0;
        let mut hosts = std::collections::BTreeSet::new();
        for by_kind in iterations.values() {
            // The JSON-only files when CBT wrote them, else its raw outputs.
            let chosen = by_kind
                .get(&true)
                .or_else(|| by_kind.get(&false))
                .expect("a group has files");
            let mut merged: Option<FioOutput> = None;
            for (path, host) in chosen {
                let text = std::fs::read_to_string(path).map_err(|source| CbtError::Io {
                    path: path.clone(),
                    source,
                })?;
                let parsed = parse_fio_output(&text, path, EngineCheck::RequireRbd)?;
                n_files += 1;
                // A client is the file's host suffix (or the file, without one).
                let client = if host.is_empty() {
                    path.display().to_string()
                } else {
                    host.clone()
                };
                hosts.insert(client.clone());
                let mut jobs: Vec<_> = parsed.job_entries().into_iter().cloned().collect();
                for j in &mut jobs {
                    j.hostname = Some(client.clone());
                    j.port = None;
                }
                match &mut merged {
                    None => {
                        merged = Some(FioOutput {
                            jobs,
                            client_stats: Vec::new(),
                            ..parsed
                        })
                    }
                    Some(m) => m.jobs.extend(jobs),
                }
            }
            per_iteration.push(merged.expect("at least one file"));
        }
        let run_id = format!("{}-{}", ctx.run_id_prefix, point.replace('/', "-"));
        let source = format!("{}/{point}", root.display());
        let row = combine(&per_iteration, ctx, &run_id, &source);
        out.points.push(CbtPoint {
            point: point.clone(),
            iterations: per_iteration.len(),
            files: n_files,
            clients: hosts.len(),
        });
        out.runs.push(row);
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
            Some((true, "0".into(), "client-a".into()))
        );
        assert_eq!(
            result_file("output.12"),
            Some((false, "12".into(), String::new()))
        );
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

    /// The fixture tree (tests/fixtures/cbt/README.md): 2 clients × 1 volume, 2
    /// iterations of one point. Oracles from the fixture's fio fields (write section):
    /// iteration 0 IOPS 689.723977 + 689.162234 = 1378.886211, bw (2758 + 2756) KiB/s;
    /// iteration 1 IOPS 631.247931 + 625.703875 = 1256.951806, bw (2524 + 2502) KiB/s;
    /// mean IOPS 1317.9190085, mean bw 5,396,480 B/s; latency_mean = Σ lat_ns.mean × N / Σ N
    /// over the four jobs (N 2074, 2073, 1907, 1889) = 12.121804788744545 ms (Python).
    #[test]
    fn the_fixture_tree_sums_clients_and_averages_iterations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cbt/archive");
        let ctx = CbtContext {
            system_id: "lab".into(),
            scenario: PathBuf::from("scenario.toml"),
            run_id_prefix: "cbt".into(),
        };
        let imp = import_cbt(&root, &ctx).unwrap();
        assert_eq!(
            imp.points,
            [CbtPoint {
                point: "op_size-00004096/concurrent_procs-002/iodepth-008/randwrite".into(),
                iterations: 2,
                files: 4,
                clients: 2,
            }]
        );
        let r = &imp.runs[0];
        assert_eq!(
            r.run_id,
            "cbt-op_size-00004096-concurrent_procs-002-iodepth-008-randwrite"
        );
        let m = &r.measured;
        approx::assert_relative_eq!(m.iops.unwrap(), 1317.9190085, max_relative = 1e-12);
        approx::assert_relative_eq!(
            m.bandwidth_bytes_per_sec.unwrap(),
            5_396_480.0,
            max_relative = 1e-12
        );
        approx::assert_relative_eq!(
            m.latency_mean_secs.unwrap(),
            12.121804788744545e-3,
            max_relative = 1e-9
        );
        // The mixture bound of each iteration is at least its larger job's own p99
        // (47.972352 ms, client-a of iteration 0).
        assert!(m.latency_p99_secs.unwrap() >= 47.972352e-3);
        let w = &r.workload;
        assert_eq!(w.pattern, Some(super::super::Pattern::Randwrite));
        assert_eq!(
            (w.block_size_bytes, w.iodepth, w.images, w.jobs_per_image),
            (Some(4096), Some(8), Some(2), Some(1))
        );
        // Little's law on the row: 16 in flight vs 1317.9 × 12.12 ms = 15.98.
        assert!((m.iops.unwrap() * m.latency_mean_secs.unwrap() - 16.0).abs() < 0.1);
    }

    #[test]
    fn a_tree_without_results_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("notes.txt"), "x").unwrap();
        let ctx = CbtContext {
            system_id: "s".into(),
            scenario: PathBuf::from("s.toml"),
            run_id_prefix: "cbt".into(),
        };
        let e = import_cbt(d.path(), &ctx).unwrap_err();
        assert!(e.to_string().contains("no CBT librbdfio results"), "{e}");
    }
}
