//! Parser tests on real fio 3.33 JSON recorded from the local lab cluster
//! (tests/fixtures/fio/README.md says how each file was made). Reference numbers were
//! computed from the same files with Python's `json` module, independently of this parser.

use std::path::{Path, PathBuf};

use approx::assert_relative_eq;
use cephplan::fio::{
    parse_fio_output, read_fio_file, EngineCheck, FioParseError, PercentileMethod,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name)
}

#[test]
fn single_job_in_si_units() {
    let s = read_fio_file(&fixture("single-randwrite.json"), EngineCheck::RequireRbd)
        .unwrap()
        .summary();
    assert_eq!((s.jobs, s.clients), (1, 1));
    // fio fields: write.iops 1828.855721, bw 7315 KiB/s, lat_ns.mean 8741450.507436,
    // clat_ns.percentile["99.000000"] 29491200, io_bytes 22585344.
    assert_relative_eq!(s.write.iops, 1828.855721);
    assert_relative_eq!(s.write.bytes_per_sec, 7315.0 * 1024.0);
    assert_relative_eq!(
        s.write.latency_mean_secs,
        8.741450507436e-3,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        s.write.latency_p99_secs.unwrap(),
        29491200e-9,
        max_relative = 1e-12
    );
    assert_eq!(s.write.p99_method, PercentileMethod::Exact);
    assert_eq!(s.write.bytes, 22585344);
    assert_eq!(s.read.ios, 0);
    assert_eq!(s.read.p99_method, PercentileMethod::Unavailable);
    assert_relative_eq!(s.total_iops, 1828.855721);
}

#[test]
fn several_jobs_sum_iops_and_weight_latency_by_ios() {
    let s = read_fio_file(&fixture("multi-randwrite.json"), EngineCheck::RequireRbd)
        .unwrap()
        .summary();
    assert_eq!(s.jobs, 2);
    // Python: sum(iops) = 1378.886211; sum(bw*1024) = 5646336;
    // sum(mean*N)/sum(N) = 0.011589777833855392 s over 4147 I/Os.
    assert_relative_eq!(s.write.iops, 1378.886211, max_relative = 1e-12);
    assert_relative_eq!(s.write.bytes_per_sec, 5646336.0);
    assert_relative_eq!(
        s.write.latency_mean_secs,
        0.011589777833855392,
        max_relative = 1e-12
    );
    assert_eq!(s.write.ios, 4147);
    // Per-job p99 47972352 and 44302336 ns; the mixture bound (Python, same rule) is
    // 47972352 ns, and it can never be below the smallest per-job p99.
    assert_eq!(s.write.p99_method, PercentileMethod::MixtureUpperBound);
    assert_relative_eq!(
        s.write.latency_p99_secs.unwrap(),
        47972352e-9,
        max_relative = 1e-12
    );
}

#[test]
fn client_server_with_all_clients_and_leading_lines() {
    let path = fixture("clientserver-randwrite.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("<vm> "),
        "fixture keeps fio's leading lines"
    );
    let out = parse_fio_output(&text, &path, EngineCheck::RequireRbd).unwrap();
    assert!(out.all_clients().is_some());
    let s = out.summary();
    // Two servers on 127.0.0.1 (ports 18765, 18766), one job each; "All clients" excluded.
    assert_eq!((s.jobs, s.clients), (2, 2));
    // Python: sum(iops) = 1256.951806.
    assert_relative_eq!(s.write.iops, 1256.951806, max_relative = 1e-12);
    // fio's own "All clients" lat_ns.mean is 12703026.01686 ns: our I/O-weighted mean
    // must agree with fio's merged figure.
    assert_relative_eq!(
        s.write.latency_mean_secs,
        12703026.01686e-9,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        s.write.latency_p99_secs.unwrap(),
        44826624e-9,
        max_relative = 1e-12
    );
}

#[test]
fn one_server_client_run_has_no_all_clients_entry() {
    let out = read_fio_file(&fixture("clientserver-one.json"), EngineCheck::RequireRbd).unwrap();
    assert!(out.all_clients().is_none());
    let s = out.summary();
    assert_eq!((s.jobs, s.clients), (1, 1));
    assert!(s.write.iops > 0.0);
}

#[test]
fn mixed_read_write_weights_both_directions() {
    let s = read_fio_file(&fixture("single-randrw70.json"), EngineCheck::RequireRbd)
        .unwrap()
        .summary();
    // Python: read iops 1726.546906, mean 3108232.257611 ns over 5190 I/Os; write 772.45509,
    // 13723971.993971 ns over 2322. The run's p99 is over every I/O: the reads' p99 is
    // 20054016 ns and the writes' 39583744 ns; the mixture of the two tables (each
    // percentile a lower bound of its CDF, weighted 5190 / 2322) first reaches 0.99 at
    // 39583744 ns (0.99656), where 27.9 ms gives at most 0.69 × 0.999 + 0.31 × 0.95 = 0.984:
    // the reads' p99 alone understated it by at least 1.39×.
    assert_relative_eq!(s.total_iops, 1726.546906 + 772.45509, max_relative = 1e-12);
    let mean = (3108232.257611 * 5190.0 + 13723971.993971 * 2322.0) / 7512.0 * 1e-9;
    assert_relative_eq!(s.latency_mean_secs, mean, max_relative = 1e-12);
    assert_eq!(s.read.latency_p99_secs, Some(20054016e-9));
    assert_relative_eq!(
        s.write.latency_p99_secs.unwrap(),
        39583744e-9,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        s.latency_p99_secs.unwrap(),
        39583744e-9,
        max_relative = 1e-12
    );
    assert_eq!(s.p99_method, PercentileMethod::MixtureUpperBound);
}

#[test]
fn job_error_is_rejected_naming_the_file() {
    let path = fixture("job-error-enospc.json");
    let e = read_fio_file(&path, EngineCheck::Any).unwrap_err();
    assert!(matches!(e, FioParseError::JobError { code: 28, .. }), "{e}");
    assert!(e.to_string().contains("job-error-enospc.json"));
}

/// Audit F3: fio's rbd engine writes a result with error 0 for an image it could not open
/// (tests/fixtures/fio/README.md: `rbd-open-failed.json`, a missing image); it is refused
/// naming the file and the likely cause, not read as a job at 0 IOPS.
#[test]
fn a_job_that_did_no_io_is_refused_naming_the_file_and_the_cause() {
    let path = fixture("rbd-open-failed.json");
    let e = read_fio_file(&path, EngineCheck::RequireRbd).unwrap_err();
    assert!(matches!(&e, FioParseError::NoIo { .. }), "{e}");
    let m = e.to_string();
    for part in [
        "rbd-open-failed.json",
        "did no I/O",
        "the image could not be opened?",
        "\"cbt-librbdfio-vm-9\"",
    ] {
        assert!(m.contains(part), "{part:?} in {m}");
    }
}

#[test]
fn other_engine_is_rejected_when_rbd_expected() {
    let path = fixture("other-engine-psync.json");
    let e = read_fio_file(&path, EngineCheck::RequireRbd).unwrap_err();
    assert!(
        matches!(&e, FioParseError::WrongEngine { found, .. } if found == "psync"),
        "{e}"
    );
    assert!(e.to_string().contains("--ioengine=rbd"));
    read_fio_file(&path, EngineCheck::Any).unwrap();
}

#[test]
fn truncated_document_is_rejected() {
    let path = fixture("single-randwrite.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = &text[..text.len() / 2];
    let e = parse_fio_output(cut, &path, EngineCheck::RequireRbd).unwrap_err();
    assert!(matches!(e, FioParseError::Malformed { .. }), "{e}");
    assert!(e.to_string().contains("single-randwrite.json"));
    let e =
        parse_fio_output("fio: engine rbd not loadable\n", &path, EngineCheck::Any).unwrap_err();
    assert!(matches!(e, FioParseError::NoDocument { .. }), "{e}");
}

/// Well-formed JSON that is not fio's (another tool's output, or a hand edit) is not an
/// interrupted run: the message says which field is wrong and asks for fio's own output.
#[test]
fn json_that_is_not_fios_is_refused_as_such() {
    let path = fixture("single-randwrite.json");
    for (text, field) in [
        (
            r#"{"fio version": "fio-3.33", "jobs": [{"jobname": 5}]}"#,
            "integer `5`",
        ),
        (r#"{"jobs": [{"jobname": "a"}]}"#, "missing field `read`"),
    ] {
        let e = parse_fio_output(text, &path, EngineCheck::Any).unwrap_err();
        assert!(matches!(e, FioParseError::NotFioJson { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(field), "{msg}");
        assert!(msg.contains("line 1, column"), "{msg}");
        assert!(msg.contains("point at fio's own JSON output"), "{msg}");
        assert!(!msg.contains("interrupted"), "{msg}");
    }
}

/// Found by tests/robustness.rs: a count of 2^64-1 I/Os (or a negative or infinite IOPS)
/// in a damaged file overflowed the sums of `summary` (a panic in debug builds) or made a
/// dataset row of infinite IOPS. Refused at parse time, naming the job and the field.
#[test]
fn figures_no_run_produces_are_refused_naming_job_and_field() {
    let text = std::fs::read_to_string(fixture("multi-randwrite.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (field, value, named) in [
        (
            "lat_ns",
            serde_json::json!({"N": u64::MAX, "mean": 1.0}),
            "write.lat_ns.N",
        ),
        ("iops", serde_json::json!(-1.0), "write.iops"),
        ("iops", serde_json::json!(1e308), "write.iops"),
    ] {
        let mut d = doc.clone();
        d["jobs"][0]["write"][field] = value;
        let e = parse_fio_output(
            &serde_json::to_string(&d).unwrap(),
            Path::new("damaged.json"),
            EngineCheck::Any,
        )
        .unwrap_err();
        assert!(matches!(e, FioParseError::BadValue { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with("damaged.json: job \""), "{msg}");
        assert!(msg.contains(named), "{msg}");
    }
    // The unedited file passes.
    doc["jobs"][0]["write"]["iops"] = serde_json::json!(0.0);
    parse_fio_output(&doc.to_string(), Path::new("ok.json"), EngineCheck::Any).unwrap();
}

/// Session 55's input audit: a UTF-8 byte-order mark before the document is read past
/// (it was "no line starts with '{'"), a second document (fio run again with `>>` onto the
/// same file) is refused rather than dropped, and jobs of different workloads are refused
/// rather than summed as one.
#[test]
fn a_bom_is_read_past_and_a_second_document_or_mixed_jobs_are_refused() {
    let one = std::fs::read_to_string(fixture("single-randwrite.json")).unwrap();
    let path = Path::new("out.json");
    let with_bom = format!("\u{feff}{one}");
    let s = parse_fio_output(&with_bom, path, EngineCheck::RequireRbd)
        .unwrap()
        .summary();
    assert_relative_eq!(s.write.iops, 1828.855721);

    let twice = format!("{one}{one}");
    let e = parse_fio_output(&twice, path, EngineCheck::RequireRbd).unwrap_err();
    let second_line = one.lines().count() + 1;
    assert!(
        matches!(e, FioParseError::SeveralDocuments { documents: 2, second_line: l, .. } if l == second_line),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(
        m.starts_with("out.json: holds 2 fio JSON documents") && m.contains(">>"),
        "{m}"
    );
    // fio's own lines after the document are not a document.
    let trailing = format!("{one}fio: terminating on signal 2\n");
    assert!(parse_fio_output(&trailing, path, EngineCheck::RequireRbd).is_ok());

    // Parsed (a probe may run several workloads on purpose, as `lab up`'s does), but not
    // one measured run.
    let mixed = fixture("mixed-rw-psync.json");
    let e = read_fio_file(&mixed, EngineCheck::Any)
        .unwrap()
        .require_one_workload(&mixed)
        .unwrap_err();
    assert!(
        matches!(&e, FioParseError::MixedWorkloads { key, values, .. } if key == "rw" && values == "randread, randwrite"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("import each JSON output as its own run"),
        "{e}"
    );
}
