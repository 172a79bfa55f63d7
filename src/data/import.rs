//! Turning one fio result (parsed by `fio::json`, already in SI units) into a
//! [`MeasuredRun`] row: the workload cells come from the job options fio echoes back
//! (`rw`, `bs`, `iodepth`, `numjobs`, `rbdname`, `rwmixread`), the figures from fio's
//! aggregate over all jobs and clients.
//!
//! Not here: JSON parsing and unit conversion (`fio::json`), writing (`append_runs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Measured, MeasuredRun, Pattern, Reading, RunKind, WorkloadOverrides};
use crate::fio::json::FioOutput;
use crate::units::parse_bytes;

/// What the caller knows about the run besides fio's output.
#[derive(Debug, Clone)]
pub struct ImportContext {
    pub run_id: String,
    pub system_id: String,
    /// Scenario path as it should be written in the CSV (relative to the CSV's directory).
    pub scenario: PathBuf,
    /// The fio JSON file (cited as the source).
    pub source: PathBuf,
}

fn option<'a>(out: &'a FioOutput, key: &str) -> BTreeSet<&'a str> {
    out.job_entries()
        .iter()
        .filter_map(|j| {
            j.job_options
                .get(key)
                .or_else(|| out.global_options.get(key))
                .map(String::as_str)
        })
        .collect()
}

/// The single value of a job option, when all jobs agree.
fn single<'a>(out: &'a FioOutput, key: &str, notes: &mut Vec<String>) -> Option<&'a str> {
    let v = option(out, key);
    match v.len() {
        0 => None,
        1 => v.into_iter().next(),
        _ => {
            notes.push(format!(
                "jobs disagree on {key} ({}); left to the scenario",
                v.into_iter().collect::<Vec<_>>().join(", ")
            ));
            None
        }
    }
}

/// Builds the row for one fio result.
pub fn run_from_fio(out: &FioOutput, ctx: &ImportContext) -> MeasuredRun {
    let s = out.summary();
    let mut notes = Vec::new();
    let mut stated: BTreeSet<String> = ["iops", "bandwidth", "latency_mean"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let pattern = single(out, "rw", &mut notes).and_then(|rw| {
        let p = Pattern::parse(rw);
        if p.is_none() {
            notes.push(format!("fio rw={rw} is not a pattern cephplan models"));
        }
        p
    });
    let block_size_bytes = single(out, "bs", &mut notes).and_then(|b| parse_bytes(b).ok());
    let iodepth = single(out, "iodepth", &mut notes).and_then(|v| v.parse().ok());
    let numjobs: Option<u32> = single(out, "numjobs", &mut notes).and_then(|v| v.parse().ok());
    let images = option(out, "rbdname").len() as u32;
    let read_percent = if pattern == Some(Pattern::Randrw) {
        single(out, "rwmixread", &mut notes).and_then(|v| v.parse().ok())
    } else {
        None
    };
    let workload = WorkloadOverrides {
        pattern,
        block_size_bytes,
        iodepth,
        images: (images > 0).then_some(images),
        jobs_per_image: numjobs.or((images > 0).then_some(1)),
        concurrency: None,
        read_percent,
        ceph_release: None,
        nodes: None,
    };
    for (name, set) in [
        ("pattern", workload.pattern.is_some()),
        ("block_size", workload.block_size_bytes.is_some()),
        ("iodepth", workload.iodepth.is_some()),
        ("images", workload.images.is_some()),
        ("jobs_per_image", numjobs.is_some()),
        ("read_percent", workload.read_percent.is_some()),
    ] {
        if set {
            stated.insert(name.to_string());
        }
    }
    let latency_p99_secs = s.latency_p99_secs.filter(|p| *p > 0.0);
    if latency_p99_secs.is_some() {
        stated.insert("latency_p99".into());
    }
    if workload.images.is_some() && numjobs.is_none() {
        notes.push("numjobs not in fio's options: 1 job per image assumed".into());
    }
    MeasuredRun {
        run_id: ctx.run_id.clone(),
        system_id: ctx.system_id.clone(),
        kind: RunKind::Absolute,
        scenario: Some(ctx.scenario.clone()),
        scenario_resolved: None,
        workload,
        measured: Measured {
            iops: (s.total_iops > 0.0).then_some(s.total_iops),
            bandwidth_bytes_per_sec: (s.total_bytes_per_sec > 0.0).then_some(s.total_bytes_per_sec),
            latency_mean_secs: (s.latency_mean_secs > 0.0).then_some(s.latency_mean_secs),
            latency_p99_secs,
            ratio: None,
        },
        source: ctx.source.display().to_string(),
        stated,
        inferred: format!(
            "fio {} aggregate over {} job(s) on {} client(s); p99 {:?}",
            s.fio_version,
            s.jobs,
            s.clients,
            if s.read.ios >= s.write.ios {
                s.read.p99_method
            } else {
                s.write.p99_method
            }
        ),
        assumptions: notes.join("; "),
        quote: format!(
            "fio {} JSON: jobs[].read/write iops, bw_bytes, lat_ns.mean, clat_ns.percentile",
            s.fio_version
        ),
        reading: Reading::FioJson,
        reading_error_percent: None,
        origin: None,
    }
}

/// `path` written relative to `base` when it lies below it, else as given.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return path.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..bc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}
