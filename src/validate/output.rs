//! The files validation writes in its output directory, each rewritten atomically after
//! every point: the measured-run dataset CSV (through `data`, so `calibrate` reads it), the comparison CSV, the report JSON, and a
//! copy of the scenario the dataset rows refer to.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{MetricComparison, PointResult, ValidateError, ValidateSpec, ValidationReport};
use crate::data::{Measured, MeasuredRun, Pattern, Reading, RunKind, WorkloadOverrides};
use crate::fio::PercentileMethod;
use crate::io::{write_atomic_owned, GENERATED_MARKER};

/// Copies the scenario into the output directory (the dataset's `scenario` column points
/// to the copy, so the dataset stays valid if the original moves). Returns its file name.
pub(super) fn copy_scenario(spec: &ValidateSpec) -> Result<String, ValidateError> {
    let text =
        std::fs::read_to_string(&spec.scenario).map_err(|source| ValidateError::Scenario {
            path: spec.scenario.clone(),
            source,
        })?;
    let name = format!("scenario-{}.toml", spec.run_id);
    let body = format!(
        "# {GENERATED_MARKER} validate: copy of {} as measured in run {}\n{text}",
        spec.scenario.display(),
        spec.run_id
    );
    write_atomic_owned(&spec.out_dir.join(&name), body.as_bytes())?;
    Ok(name)
}

fn num(v: f64) -> String {
    format!("{v}")
}

/// A completed point as a measured run of the dataset format (`data`), which `calibrate`
/// reads. `scenario_file` is relative to the dataset CSV (both sit in the output directory).
pub fn measured_run(
    spec: &ValidateSpec,
    report: &ValidationReport,
    p: &PointResult,
    scenario_file: &str,
) -> MeasuredRun {
    let s = &p.setting;
    let m = &p.measured;
    let mut stated: BTreeSet<String> = [
        "pattern",
        "block_size",
        "iodepth",
        "images",
        "jobs_per_image",
        "iops",
        "bandwidth",
        "latency_mean",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    if s.read_percent.is_some() {
        stated.insert("read_percent".into());
    }
    let mut inferred = String::new();
    let mixture =
        [m.read.p99_method, m.write.p99_method].contains(&PercentileMethod::MixtureUpperBound);
    if m.latency_p99_secs.is_some() {
        if mixture {
            inferred =
                "latency_p99: upper bound of the jobs' mixture from their fio percentile tables"
                    .into();
        } else {
            stated.insert("latency_p99".into());
        }
    }
    MeasuredRun {
        run_id: p.run_id.clone(),
        system_id: spec.system_id.clone(),
        kind: RunKind::Absolute,
        scenario: Some(PathBuf::from(scenario_file)),
        scenario_resolved: None,
        workload: WorkloadOverrides {
            pattern: Pattern::parse(s.pattern.as_fio()),
            block_size_bytes: Some(s.block_size_bytes),
            iodepth: Some(s.iodepth),
            images: Some(s.images),
            jobs_per_image: Some(1),
            concurrency: None,
            read_percent: s.read_percent.map(f64::from),
            ceph_release: None,
            nodes: None,
        },
        measured: Measured {
            iops: Some(m.total_iops),
            bandwidth_bytes_per_sec: Some(m.total_bytes_per_sec),
            latency_mean_secs: Some(m.latency_mean_secs),
            latency_p99_secs: m.latency_p99_secs,
            ratio: None,
        },
        source: p.raw_fio_json.clone(),
        stated,
        inferred,
        assumptions: format!(
            "measured by cephplan validate, {} rbd engine, {} s runtime, {} s ramp; latency_mean = fio lat_ns mean (submission to completion), latency_p99 = fio clat_ns p99 over every I/O (a mix of reads and writes: the upper bound of the mixture of their percentile tables)",
            m.fio_version, report.runtime_secs, report.ramp_time_secs
        ),
        quote: format!(
            "fio {} JSON: jobs[].read/write iops, bw (KiB/s) × 1024, lat_ns.mean (submission to completion), clat_ns.percentile (completion)",
            m.fio_version
        ),
        reading: Reading::FioJson,
        reading_error_percent: None,
        origin: None,
    }
}

fn cells(m: &MetricComparison) -> [String; 6] {
    let o = |v: Option<f64>| v.map(num).unwrap_or_default();
    [
        o(m.predicted),
        o(m.interval.map(|i| i.0)),
        o(m.interval.map(|i| i.1)),
        o(m.measured),
        o(m.error_percent),
        m.inside_interval.map(|b| b.to_string()).unwrap_or_default(),
    ]
}

/// The comparison CSV text (predicted with interval vs measured, per metric).
pub fn comparison_csv(report: &ValidationReport) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut header = vec![
        "point".to_string(),
        "run_id".into(),
        "pattern".into(),
        "block_size_bytes".into(),
        "iodepth".into(),
        "images".into(),
    ];
    for m in [
        "iops",
        "bytes_per_sec",
        "latency_mean_secs",
        "latency_p99_secs",
    ] {
        for c in [
            "predicted",
            "low",
            "high",
            "measured",
            "error_percent",
            "inside",
        ] {
            header.push(format!("{m}_{c}"));
        }
    }
    header.push("prediction_error".into());
    w.write_record(&header).expect("in-memory csv");
    for p in &report.points {
        let mut rec = vec![
            p.index.to_string(),
            p.run_id.clone(),
            p.setting.pattern.as_fio().into(),
            p.setting.block_size_bytes.to_string(),
            p.setting.iodepth.to_string(),
            p.setting.images.to_string(),
        ];
        for m in [
            &p.iops,
            &p.bytes_per_sec,
            &p.latency_mean_secs,
            &p.latency_p99_secs,
        ] {
            rec.extend(cells(m));
        }
        rec.push(p.prediction_error.clone().unwrap_or_default());
        w.write_record(&rec).expect("in-memory csv");
    }
    let body = String::from_utf8(w.into_inner().expect("in-memory csv")).expect("utf-8");
    format!(
        "# {GENERATED_MARKER} validate run {}\n{body}",
        report.run_id
    )
}

/// Writes the dataset, comparison and report files for the points so far.
pub(super) fn save(
    spec: &ValidateSpec,
    report: &ValidationReport,
    scenario_file: &str,
) -> Result<(), ValidateError> {
    let dir = &spec.out_dir;
    if let Some(p) = report.points.last() {
        crate::data::append_runs(
            &dir.join(&report.dataset_csv),
            &[measured_run(spec, report, p, scenario_file)],
        )?;
    }
    write_atomic_owned(
        &dir.join(&report.comparison_csv),
        comparison_csv(report).as_bytes(),
    )?;
    let json = serde_json::to_string_pretty(report).expect("report serialises");
    write_atomic_owned(&dir.join(&report.report_json), json.as_bytes())?;
    Ok(())
}
