//! Turning one fio result (parsed by `fio::json`, already in SI units) into a
//! [`MeasuredRun`] row: the workload cells come from the job options fio echoes back
//! (`rw`, `bs`, `iodepth`, `numjobs`, `rbdname`, `rwmixread`), the figures from fio's
//! aggregate over all jobs and clients.
//!
//! A random-read result on hard disks is also checked against the disks' physics
//! ([`cache_served_reads`]): reads that complete faster than a disk can position were
//! served by a cache, which the model does not predict, and `cephplan import fio` says so.
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
    /// The fio JSON file (cited as the source), relative to the CSV's directory as the
    /// scenario is, so that the dataset moves with its files.
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
    let measured = Measured {
        iops: (s.total_iops > 0.0).then_some(s.total_iops),
        bandwidth_bytes_per_sec: (s.total_bytes_per_sec > 0.0).then_some(s.total_bytes_per_sec),
        latency_mean_secs: (s.latency_mean_secs > 0.0).then_some(s.latency_mean_secs),
        latency_p99_secs: s.latency_p99_secs.filter(|p| *p > 0.0),
        ratio: None,
    };
    // Only the figures fio gave are stated (a result without I/O in it has none).
    let mut stated: BTreeSet<String> = [
        ("iops", measured.iops.is_some()),
        ("bandwidth", measured.bandwidth_bytes_per_sec.is_some()),
        ("latency_mean", measured.latency_mean_secs.is_some()),
        ("latency_p99", measured.latency_p99_secs.is_some()),
    ]
    .into_iter()
    .filter(|(_, given)| *given)
    .map(|(name, _)| name.to_string())
    .collect();
    let pattern = single(out, "rw", &mut notes).and_then(|rw| {
        let p = Pattern::parse(rw);
        if p.is_none() {
            notes.push(format!("fio rw={rw} is not a pattern cephplan models"));
        }
        p
    });
    let block_size_bytes = single(out, "bs", &mut notes).and_then(|b| parse_bytes(b).ok());
    // Jobs of different depths (CBT's `total_iodepth` spreads one total over the volumes:
    // 16 over 3 is 6, 5, 5) have no one iodepth; the row states their sum as the I/Os in
    // flight (`concurrency`) rather than leave the depth to the scenario's.
    let depths: BTreeSet<&str> = option(out, "iodepth");
    let mut concurrency = None;
    let iodepth = if depths.len() > 1 {
        let each: Option<Vec<u32>> = out
            .job_entries()
            .iter()
            .map(|j| {
                // fio's default depth is 1.
                j.job_options
                    .get("iodepth")
                    .or_else(|| out.global_options.get("iodepth"))
                    .map_or(Some(1), |v| v.parse().ok())
            })
            .collect();
        let listed = depths.iter().copied().collect::<Vec<_>>().join(", ");
        match each {
            Some(each) => {
                let sum: u32 = each.iter().sum();
                concurrency = Some(sum);
                notes.push(format!(
                    "jobs' iodepths differ ({listed}); concurrency = their sum, {sum} I/Os in flight, and no iodepth (the model takes one per job: calibrate fits the row where {sum} divides evenly over its images × jobs, else leaves it out naming why)"
                ));
            }
            None => notes.push(format!(
                "jobs disagree on iodepth ({listed}), not all of them a number: left to the scenario"
            )),
        }
        None
    } else {
        single(out, "iodepth", &mut notes).and_then(|v| v.parse().ok())
    };
    let numjobs: Option<u32> = single(out, "numjobs", &mut notes).and_then(|v| v.parse().ok());
    let images = option(out, "rbdname").len() as u32;
    // fio's group_reporting merges the jobs into one entry, which names one job's options:
    // the images (distinct rbdname) and jobs counted from it may be fewer than ran.
    let grouped = option(out, "group_reporting")
        .iter()
        .any(|v| !matches!(v.trim(), "0" | "false" | ""));
    if grouped {
        notes.push("fio ran with group_reporting, which merges the jobs into one entry naming one job's options: the images and jobs counted here may be fewer than ran (Little's law on the row tells; rerun without group_reporting for a row cephplan can count)".into());
    }
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
        concurrency: concurrency.filter(|_| !grouped),
        read_percent,
        ceph_release: None,
        nodes: None,
    };
    for (name, set) in [
        ("pattern", workload.pattern.is_some()),
        ("block_size", workload.block_size_bytes.is_some()),
        ("iodepth", workload.iodepth.is_some()),
        ("concurrency", workload.concurrency.is_some()),
        ("images", workload.images.is_some() && !grouped),
        ("jobs_per_image", numjobs.is_some() && !grouped),
        ("read_percent", workload.read_percent.is_some()),
    ] {
        if set {
            stated.insert(name.to_string());
        }
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
        measured,
        source: ctx.source.display().to_string(),
        stated,
        inferred: format!(
            "fio {} aggregate over {} job(s) on {} client(s); p99 {:?}{}",
            s.fio_version,
            s.jobs,
            s.clients,
            s.p99_method,
            if s.read.ios > 0 && s.write.ios > 0 {
                " over reads and writes"
            } else {
                ""
            }
        ),
        assumptions: notes.join("; "),
        quote: format!(
            "fio {} JSON: jobs[].read/write iops, bw (KiB/s) × 1024, lat_ns.mean (submission to completion), clat_ns.percentile (completion)",
            s.fio_version
        ),
        reading: Reading::FioJson,
        reading_error_percent: None,
        origin: None,
    }
}

/// One revolution of the fastest hard disks in service (15,000 rpm): 4 ms.
pub const FASTEST_DISK_REVOLUTION_SECS: f64 = 0.004;

/// A data drive stated to read in less than this (1 ms) is not judged as a rotating disk
/// whatever its `kind`: no hard disk positions that fast (a 15,000 rpm disk's random read
/// averages its 2 ms half revolution plus a seek), while storage Ceph reports as
/// rotational but is not — the lab's file-backed OSDs, `kind = "hdd"` with their measured
/// 75 µs reads — is stated so.
pub const ROTATING_READ_LATENCY_MIN_SECS: f64 = 0.001;

/// How far the share of fast reads must exceed what a disk allows before a run is called
/// cache-served (5 percentage points: fio's percentile tables are coarse).
pub const CACHE_MARGIN: f64 = 0.05;

/// Random reads that a hard disk cannot have served: a share of the reads completing
/// within a time shorter than the disk could position for them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheServedReads {
    /// Share of the reads that completed within [`Self::within_secs`].
    pub share: f64,
    pub within_secs: f64,
    /// The most that uncached random reads on a hard disk can complete that fast:
    /// `within_secs / FASTEST_DISK_REVOLUTION_SECS`.
    pub uncached_bound: f64,
}

/// The words of a cache-served run's note ([`CacheServedReads::note`]) by which
/// calibration and evaluation know the row and leave it out.
pub const CACHE_SERVED_MARK: &str = "a cache served part of them, which the model does not predict";

impl CacheServedReads {
    /// The note a row or a report carries (it ends with [`CACHE_SERVED_MARK`]).
    pub fn note(&self) -> String {
        format!(
            "{:.0} % of the reads completed within {:.2} ms, where uncached random reads on hard disks allow at most {:.0} % (a disk waits for its sector up to a revolution, {:.0} ms at 15,000 rpm): {CACHE_SERVED_MARK}",
            self.share * 100.0,
            self.within_secs * 1e3,
            self.uncached_bound * 100.0,
            FASTEST_DISK_REVOLUTION_SECS * 1e3
        )
    }
}

/// Checks a random-read run on hard disks against the disks' physics. An uncached random
/// read waits for its sector to come under the head, uniformly over a revolution, after
/// any seek, so at most `t / revolution` of the reads complete within `t` (exact for one
/// I/O at a time; with a queue the disk serves the request its heads reach first, but a
/// newly queued request is that one only about once in as many as are queued, and it also
/// waits for the ones served before it, so at depth fast completions are rarer still). A
/// run whose
/// completion latencies (fio's `clat_ns` percentiles, every job) put more than that, plus
/// [`CACHE_MARGIN`], within some `t` was served in part by a cache (the OSDs' BlueStore
/// cache, or reads that never reached a disk). `None` for other drives (and for a drive of
/// kind `hdd` stated to read faster than [`ROTATING_READ_LATENCY_MIN_SECS`]), for sequential or
/// write-only patterns (a disk's track buffer and write cache answer those legitimately),
/// or without percentiles. Croit's 2020 HDD runs (`calibration-data/other-paths/`) are
/// the measured case: 15 of 18 read runs flagged, the 3 whose every read paid a disk
/// access not.
pub fn cache_served_reads(
    out: &FioOutput,
    pattern: Option<Pattern>,
    data_drive: &crate::spec::DriveEntry,
) -> Option<CacheServedReads> {
    if data_drive.kind != crate::spec::DriveKind::Hdd
        || data_drive.read_latency.0 < ROTATING_READ_LATENCY_MIN_SECS
        || !matches!(pattern, Some(Pattern::Randread | Pattern::Randrw))
    {
        return None;
    }
    out.read_completion_cdf()
        .into_iter()
        .map(|(within_secs, share)| CacheServedReads {
            share,
            within_secs,
            uncached_bound: (within_secs / FASTEST_DISK_REVOLUTION_SECS).min(1.0),
        })
        .filter(|c| c.share > c.uncached_bound + CACHE_MARGIN)
        .max_by(|a, b| (a.share - a.uncached_bound).total_cmp(&(b.share - b.uncached_bound)))
}

/// Adds a cache-served run's note ([`CacheServedReads::note`]) to its row's assumptions.
pub fn note_cache_served(row: &mut MeasuredRun, c: &CacheServedReads) {
    let note = c.note();
    row.assumptions = if row.assumptions.is_empty() {
        note
    } else {
        format!("{}; {note}", row.assumptions)
    };
}

/// The scenario as an imported dataset's rows refer to it, relative to the CSV's
/// directory `csv_dir`. A scenario below that directory is referred to where it is (the
/// dataset and it move together). One elsewhere (a `lab up` DIR that `lab down` deletes, a
/// file that may change) is copied beside the CSV, as `validate` copies its scenario:
/// `scenario-<its name>.toml`, with cephplan's marker and the original's path in a first
/// comment line. An earlier copy is reused when it is the same (the same file, the same
/// text); a copy that differs, or a file cephplan did not write, is never replaced: the
/// next free `scenario-<its name>-N.toml` is written instead, so rows appended earlier keep
/// the scenario they were measured with.
pub fn scenario_for_dataset(scenario: &Path, csv_dir: &Path) -> Result<PathBuf, super::DataError> {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if abs(scenario).starts_with(abs(csv_dir)) {
        return Ok(relative_to(scenario, csv_dir));
    }
    let text =
        std::fs::read_to_string(scenario).map_err(|error| super::DataError::ScenarioRead {
            path: scenario.to_path_buf(),
            error,
        })?;
    let body = format!(
        "# {} import: copy of {}, the scenario the dataset's rows beside it refer to\n{text}",
        crate::io::GENERATED_MARKER,
        abs(scenario).display()
    );
    let stem = scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    let stem = stem.strip_prefix("scenario-").unwrap_or(&stem);
    let stem = if stem == "scenario" { "" } else { stem };
    for n in 1u32.. {
        let name = match (stem, n) {
            ("", 1) => "scenario.toml".to_string(),
            ("", n) => format!("scenario-{n}.toml"),
            (s, 1) => format!("scenario-{s}.toml"),
            (s, n) => format!("scenario-{s}-{n}.toml"),
        };
        let target = csv_dir.join(&name);
        match std::fs::read_to_string(&target) {
            Ok(existing) if existing == body => return Ok(PathBuf::from(name)),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::io::write_atomic_owned(&target, body.as_bytes())?;
                return Ok(PathBuf::from(name));
            }
            // A directory or an unreadable file of that name: not ours to touch.
            Err(_) => continue,
        }
    }
    unreachable!("some scenario-<name>-N.toml is free")
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
