//! The files validation writes in its output directory, each rewritten atomically after
//! every point: the measured-run dataset CSV (`calibration-data/README.md` format,
//! `schema_version = 1`, readable by `calibrate`), the comparison CSV, the report JSON, and a
//! copy of the scenario the dataset rows refer to.

use super::{MetricComparison, ValidateError, ValidateSpec, ValidationReport};
use crate::fio::PercentileMethod;
use crate::io::{write_atomic_owned, GENERATED_MARKER};

/// The 24 columns of the measured-run dataset format, in its documented order.
pub const DATASET_COLUMNS: [&str; 24] = [
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
];

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

/// The dataset CSV text for the points so far.
pub fn dataset_csv(spec: &ValidateSpec, report: &ValidationReport, scenario_file: &str) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(DATASET_COLUMNS).expect("in-memory csv");
    for p in &report.points {
        let s = &p.setting;
        let m = &p.measured;
        let mut stated = vec![
            "pattern",
            "block_size",
            "iodepth",
            "images",
            "jobs_per_image",
            "iops",
            "bandwidth",
            "latency_mean",
        ];
        if s.read_percent.is_some() {
            stated.push("read_percent");
        }
        let mut inferred = String::new();
        let exact_p99 = [m.read.p99_method, m.write.p99_method]
            .iter()
            .all(|x| *x != PercentileMethod::MixtureUpperBound);
        if m.latency_p99_secs.is_some() {
            if exact_p99 {
                stated.push("latency_p99");
            } else {
                inferred = "latency_p99: upper bound of the jobs' mixture from their fio percentile tables".into();
            }
        }
        let rec: Vec<String> = vec![
            p.run_id.clone(),
            spec.system_id.clone(),
            "absolute".into(),
            scenario_file.to_string(),
            s.pattern.as_fio().into(),
            s.block_size_bytes.to_string(),
            s.iodepth.to_string(),
            s.images.to_string(),
            "1".into(),
            String::new(),
            s.read_percent.map(|r| r.to_string()).unwrap_or_default(),
            String::new(),
            String::new(),
            num(m.total_iops),
            num(m.total_bytes_per_sec),
            num(m.latency_mean_secs),
            m.latency_p99_secs.map(num).unwrap_or_default(),
            String::new(),
            String::new(),
            String::new(),
            p.raw_fio_json.clone(),
            stated.join(";"),
            inferred,
            format!(
                "measured by cephplan validate, fio {} rbd engine, {} s runtime, {} s ramp; latency_mean = fio lat_ns mean (submission to completion), latency_p99 = fio clat_ns p99 of the busier direction; seconds and bytes/s as plain numbers",
                m.fio_version, report.runtime_secs, report.ramp_time_secs
            ),
        ];
        w.write_record(&rec).expect("in-memory csv");
    }
    let body = String::from_utf8(w.into_inner().expect("in-memory csv")).expect("utf-8");
    format!(
        "# {GENERATED_MARKER} validate run {} (measured-run dataset, schema_version = 1)\n{body}",
        report.run_id
    )
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
    write_atomic_owned(
        &dir.join(&report.dataset_csv),
        dataset_csv(spec, report, scenario_file).as_bytes(),
    )?;
    write_atomic_owned(
        &dir.join(&report.comparison_csv),
        comparison_csv(report).as_bytes(),
    )?;
    let json = serde_json::to_string_pretty(report).expect("report serialises");
    write_atomic_owned(&dir.join(&report.report_json), json.as_bytes())?;
    Ok(())
}
