use super::*;
use approx::assert_relative_eq;

const HEADER: &str = "run_id,system_id,kind,scenario,pattern,block_size,iodepth,images,jobs_per_image,concurrency,read_percent,ceph_release,nodes,iops,bandwidth,latency_mean,latency_p99,ratio,ratio_metric,ratio_reference,source,stated,inferred,assumptions,quote,reading,reading_error";

// The row is seed 000's write headline: 230k IOPS at 3.5 ms, 48 images at QD 16 (the
// queue depth inferred by Little's law: 768 in flight vs 230,000 × 3.5 ms = 805, 5 % off).
const GOOD: &str = "s000-w,seed-000,absolute,../models/examples/seed-000-ampere-altra-max.toml,randwrite,4k,16,48,1,,,19.2.0,3,230000,,3.5ms,,,,,000.txt,iops;latency_mean;images,iodepth from Little's law,4k assumed,4k random write ... 230k IOPS at 3.5 ms,text,";

fn parse(body: &str) -> Result<(Vec<MeasuredRun>, Vec<DataWarning>), DataError> {
    parse_csv(Path::new("data/x.csv"), &format!("{HEADER}\n{body}\n"))
}

fn field_err(body: &str) -> (u64, String, String) {
    match parse(body).unwrap_err() {
        DataError::Field {
            line,
            column,
            message,
            ..
        } => (line, column, message),
        e => panic!("expected a field error, got {e}"),
    }
}

#[test]
fn good_row_parses_with_units_and_resolved_scenario() {
    let (runs, warnings) = parse(GOOD).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let r = &runs[0];
    assert_eq!(r.workload.block_size_bytes, Some(4096));
    assert_eq!(r.measured.latency_mean_secs, Some(0.0035));
    assert_eq!(r.workload.in_flight(), Some(768.0));
    assert_eq!(
        r.scenario_resolved.as_deref(),
        Some(Path::new(
            "data/../models/examples/seed-000-ampere-altra-max.toml"
        ))
    );
    assert_eq!(r.origin.as_ref().unwrap().1, 2);
    assert!(r.stated.contains("images") && !r.stated.contains("iodepth"));
}

#[test]
fn missing_column_is_named() {
    let header = HEADER.replace(",latency_p99", "");
    let body = GOOD.replacen(",,,,,000.txt", ",,,,000.txt", 1);
    let e = parse_csv(Path::new("x.csv"), &format!("{header}\n{body}\n")).unwrap_err();
    assert!(
        matches!(&e, DataError::MissingColumn { column, .. } if column == "latency_p99"),
        "{e}"
    );
}

#[test]
fn misspelt_column_gets_a_suggestion() {
    let header = HEADER.replace("latency_mean", "latency_maen");
    let e = parse_csv(Path::new("x.csv"), &format!("{header}\n{GOOD}\n")).unwrap_err();
    assert!(
        e.to_string().contains("did you mean \"latency_mean\""),
        "{e}"
    );
}

#[test]
fn unit_typo_names_line_and_column() {
    let (line, column, msg) = field_err(&GOOD.replace("3.5ms", "3.5msec"));
    assert_eq!((line, column.as_str()), (2, "latency_mean"));
    assert!(msg.contains("3.5msec") && msg.contains("ms"), "{msg}");
    let (_, column, msg) = field_err(
        &GOOD
            .replace("230000,,", "230000,900MBps,")
            .replace("3.5ms", ""),
    );
    assert_eq!(column, "bandwidth");
    assert!(msg.contains("MB/s"), "{msg}");
}

#[test]
fn negative_iops_is_an_error() {
    let (line, column, msg) = field_err(&GOOD.replace("230000", "-230000"));
    assert_eq!((line, column.as_str()), (2, "iops"));
    assert!(msg.contains("greater than zero"), "{msg}");
    assert!(msg.contains("leave the cell empty"), "{msg}");
}

#[test]
fn a_count_that_is_not_a_whole_number_says_what_to_write() {
    for bad in ["abc", "0", "2.5"] {
        let (line, column, msg) = field_err(&GOOD.replace(",16,48,1,", &format!(",16,48,{bad},")));
        assert_eq!((line, column.as_str()), (2, "jobs_per_image"), "{bad}");
        assert!(msg.contains("write one from 1 to 4294967295"), "{msg}");
        assert!(msg.contains("leave the cell empty"), "{msg}");
    }
}

#[test]
fn littles_law_error_and_warning() {
    // 230k × 35 ms = 8050 in flight vs 768: a unit slip, far beyond 25 %.
    let (line, column, msg) = field_err(&GOOD.replace("3.5ms", "35ms"));
    assert_eq!((line, column.as_str()), (2, "latency_mean"));
    assert!(msg.contains("Little's law"), "{msg}");
    // 230k × 4.0 ms = 920 vs 768: 20 % off, kept with a warning.
    let (runs, warnings) = parse(&GOOD.replace("3.5ms", "4.0ms")).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].line, 2);
    assert!(
        warnings[0].message.contains("20 %"),
        "{}",
        warnings[0].message
    );
}

#[test]
fn bad_row_in_middle_fails_the_whole_file_naming_its_line() {
    let bad = GOOD
        .replace("s000-w", "b")
        .replace("randwrite", "randwirte");
    let good2 = GOOD.replace("s000-w", "c");
    let (line, column, msg) = field_err(&format!("{GOOD}\n{bad}\n{good2}"));
    assert_eq!((line, column.as_str()), (3, "pattern"));
    assert!(msg.contains("randwrite"), "{msg}");
}

#[test]
fn stated_must_name_filled_columns() {
    let (_, column, msg) = field_err(&GOOD.replace("iops;latency_mean;images", "iops;latency_p99"));
    assert_eq!(column, "stated");
    assert!(msg.contains("latency_p99"), "{msg}");
}

#[test]
fn ratio_rows_need_metric_and_reference() {
    let ratio = "r1,seed-003,ratio,,write,64k,,,,32,,12.2.5,,,,,,14,bandwidth,ARM cluster,003.txt,ratio;concurrency,,,x86 is 14 times ARM,text,";
    let (runs, _) = parse(ratio).unwrap();
    assert_eq!(runs[0].measured.ratio.as_ref().unwrap().value, 14.0);
    let (_, column, _) = field_err(&ratio.replace(",bandwidth,", ",,"));
    assert_eq!(column, "ratio_metric");
}

#[test]
fn duplicate_run_ids_across_files_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.csv"), format!("{HEADER}\n{GOOD}\n")).unwrap();
    std::fs::write(dir.path().join("b.csv"), format!("{HEADER}\n{GOOD}\n")).unwrap();
    let e = load_runs(dir.path()).unwrap_err();
    assert!(matches!(e, DataError::DuplicateRun { .. }), "{e}");
}

#[test]
fn append_round_trips_and_never_drops_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("runs.csv");
    let (runs, _) = parse(GOOD).unwrap();
    append_runs(&p, &runs).unwrap();
    let mut second = runs[0].clone();
    second.run_id = "s000-w-repeat".into();
    second.measured.iops = Some(231_234.5);
    second.assumptions = "a, \"quoted\" note".into();
    append_runs(&p, std::slice::from_ref(&second)).unwrap();
    let (back, _) = load_runs(&p).unwrap();
    assert_eq!(back.len(), 2);
    let strip = |r: &MeasuredRun| MeasuredRun {
        origin: None,
        scenario_resolved: None,
        ..r.clone()
    };
    assert_eq!(strip(&back[0]), strip(&runs[0]));
    assert_eq!(strip(&back[1]), strip(&second));
    // A duplicate id is refused and the file is untouched.
    let before = std::fs::read_to_string(&p).unwrap();
    assert!(append_runs(&p, &[second]).is_err());
    assert_eq!(std::fs::read_to_string(&p).unwrap(), before);
}

#[test]
fn append_refuses_hand_written_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("seed.csv");
    std::fs::write(&p, format!("{HEADER}\n{GOOD}\n")).unwrap();
    let (runs, _) = parse(&GOOD.replace("s000-w", "new")).unwrap();
    assert!(matches!(
        append_runs(&p, &runs).unwrap_err(),
        DataError::Write(WriteError::NotOurs { .. })
    ));
}

#[test]
fn byte_rates() {
    assert_eq!(parse_bytes_per_sec("21949MB/s").unwrap(), 21_949e6);
    assert_eq!(parse_bytes_per_sec("4.2GB/s").unwrap(), 4.2e9);
    assert_eq!(parse_bytes_per_sec("1MiB/s").unwrap(), 1_048_576.0);
    assert_eq!(parse_bytes_per_sec("1000").unwrap(), 1000.0);
    assert!(parse_bytes_per_sec("4.2 GBit").is_err());
}

#[test]
fn shipped_seed_datasets_load_and_reference_existing_scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let (runs, warnings) = load_runs(&dir).unwrap();
    // The seed files are exact text; only corpus rows read off charts (or with an inferred
    // queue depth) may miss Little's law by 10-25 %.
    let seed_warnings: Vec<_> = warnings
        .iter()
        .filter(|w| {
            w.file
                .file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with("seed-"))
        })
        .collect();
    assert!(seed_warnings.is_empty(), "{seed_warnings:?}");
    let systems: BTreeSet<&str> = runs.iter().map(|r| r.system_id.as_str()).collect();
    for s in [
        "seed-000",
        "seed-001",
        "seed-002",
        "seed-003-radosbench",
        "seed-004",
    ] {
        assert!(systems.contains(s), "{s} missing from {systems:?}");
    }
    for r in &runs {
        if let Some(p) = &r.scenario_resolved {
            assert!(
                p.is_file(),
                "{}: scenario {} not found",
                r.run_id,
                p.display()
            );
        }
        assert!(!r.source.is_empty());
    }
}

#[test]
fn a_row_without_a_quote_or_reading_method_is_refused_with_the_fix() {
    let no_quote = GOOD.replace("4k random write ... 230k IOPS at 3.5 ms", "");
    let (line, column, message) = field_err(&no_quote);
    assert_eq!((line, column.as_str()), (2, "quote"));
    assert!(message.contains("copy them from the source"), "{message}");

    let no_method = GOOD.replace(",text,", ",,");
    let (_, column, message) = field_err(&no_method);
    assert_eq!(column, "reading");
    assert!(message.contains("chart-svg"), "{message}");

    let typo = GOOD.replace(",text,", ",chart,");
    let (_, column, message) = field_err(&typo);
    assert_eq!(column, "reading");
    assert!(
        message.contains("\"chart\" is not a reading method"),
        "{message}"
    );
}

#[test]
fn a_chart_reading_needs_its_reading_error_and_an_exact_one_has_none() {
    let (_, column, message) = field_err(&GOOD.replace(",text,", ",chart-png,"));
    assert_eq!(column, "reading_error");
    assert!(message.contains("2-3 for PNG pixels"), "{message}");

    let ok = GOOD.replace(",text,", ",chart-png,2.5");
    let (runs, _) = parse(&ok).unwrap();
    assert_eq!(runs[0].reading, Reading::ChartPng);
    assert_eq!(runs[0].reading_error_percent, Some(2.5));

    let (_, column, message) = field_err(&GOOD.replace(",text,", ",table,2"));
    assert_eq!(column, "reading_error");
    assert!(message.contains("is exact"), "{message}");
}

#[test]
fn a_file_cephplan_wrote_before_the_provenance_columns_reads_as_fio_json() {
    let header = HEADER.replace(",quote,reading,reading_error", "");
    let body = GOOD.replace(",4k random write ... 230k IOPS at 3.5 ms,text,", "");
    let text =
        format!("# {GENERATED_MARKER}; measured runs, schema_version = 1\n{header}\n{body}\n");
    let (runs, _) = parse_csv(Path::new("x.csv"), &text).unwrap();
    assert_eq!(runs[0].reading, Reading::FioJson);
    assert_eq!(runs[0].quote, "000.txt");
    // A hand-written file may not leave them out.
    let e = parse_csv(Path::new("x.csv"), &format!("{header}\n{body}\n")).unwrap_err();
    assert!(
        matches!(&e, DataError::MissingColumn { column, .. } if column == "quote"),
        "{e}"
    );
}

#[test]
fn the_same_measurement_in_two_files_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let other = GOOD.replacen("s000-w", "s000-w-copy", 1);
    std::fs::write(dir.path().join("a.csv"), format!("{HEADER}\n{GOOD}\n")).unwrap();
    std::fs::write(dir.path().join("b.csv"), format!("{HEADER}\n{other}\n")).unwrap();
    let e = load_runs(dir.path()).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(&e, DataError::DuplicateFigures(d) if d.run_id == "s000-w-copy" && d.other == "s000-w"),
        "{msg}"
    );
    assert!(msg.contains("a.csv:2") && msg.contains("b.csv"), "{msg}");
    assert!(msg.contains("delete one of the two rows"), "{msg}");
}

#[test]
fn concurrent_appends_keep_every_row_and_the_users_comments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.csv");
    let (proto, _) = parse(GOOD).unwrap();
    let run = |i: usize| MeasuredRun {
        run_id: format!("r{i}"),
        measured: Measured {
            iops: Some(230_000.0 + i as f64),
            ..proto[0].measured.clone()
        },
        origin: None,
        ..proto[0].clone()
    };
    append_runs(&path, &[run(0)]).unwrap();
    // A comment the user added by hand.
    let text = std::fs::read_to_string(&path).unwrap() + "# measured after the firmware update\n";
    std::fs::write(&path, text).unwrap();
    // Eight appends at once (each its own file handle and lock, as separate processes).
    std::thread::scope(|s| {
        for i in 1..=8 {
            let p = path.clone();
            let r = run(i);
            s.spawn(move || append_runs(&p, &[r]).unwrap());
        }
    });
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("# measured after the firmware update"),
        "{text}"
    );
    let (runs, _) = parse_csv(&path, &text).unwrap();
    let ids: BTreeSet<String> = runs.iter().map(|r| r.run_id.clone()).collect();
    assert_eq!(ids.len(), 9, "{ids:?}");
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["runs.csv"]);
    // The same run id again is refused and the file is unchanged.
    let e = append_runs(&path, &[run(3)]).unwrap_err();
    assert!(matches!(e, DataError::DuplicateImport { .. }), "{e}");
    // It names the earlier row and the fix, not a line of its own (it has none yet).
    assert!(e.to_string().contains("--run-id NAME"), "{e}");
    assert!(!e.to_string().contains("line 0"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

/// Issue 17 item 4: a `validate --out DIR` directory (here the unedited one recorded on the
/// lab, tests/fixtures/validation-lab: two dataset CSVs, two comparison CSVs, report JSONs,
/// scenario copies, raw/) loads as calibration data. Before, the comparison CSV failed the
/// load with `unknown column "point"`.
#[test]
fn a_validate_output_directory_loads_as_data_and_says_what_it_skipped() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validation-lab");
    let (runs, warnings) = load_runs(&dir).unwrap();
    // Rows of the two dataset CSVs: 4 randwrite points + 3 randread points (README table).
    assert_eq!(runs.len(), 7);
    assert!(runs.iter().all(|r| r.system_id == "lab"));
    let skipped: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    for (w, run) in skipped.iter().zip(["1796124266-19556", "1796124302-19937"]) {
        assert!(w.contains(&format!("comparison-{run}.csv")), "{w}");
        assert!(
            w.contains("skipped: the comparison CSV of `cephplan validate`"),
            "{w}"
        );
    }
    let files = dataset_files(&dir).unwrap();
    assert_eq!(files.datasets.len(), 2);
    assert!(files.datasets.iter().all(|f| f
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("validation-")));
}

#[test]
fn only_generated_non_dataset_csvs_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.csv"), format!("{HEADER}\n{GOOD}\n")).unwrap();
    // A hand-written CSV with a wrong column is an error, never silently skipped.
    std::fs::write(dir.path().join("b.csv"), "point,run_id\n1,x\n").unwrap();
    let e = load_runs(dir.path()).unwrap_err();
    assert!(matches!(e, DataError::UnknownColumn { .. }), "{e}");
    // The same file with cephplan's marker as its first line is skipped.
    std::fs::write(
        dir.path().join("b.csv"),
        "# generated by cephplan validate run r\npoint,run_id\n1,x\n",
    )
    .unwrap();
    let (runs, warnings) = load_runs(dir.path()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(warnings.len(), 1);
    // Named directly, a file is never skipped.
    let e = load_runs(&dir.path().join("b.csv")).unwrap_err();
    assert!(matches!(e, DataError::UnknownColumn { .. }), "{e}");
    // A directory of nothing but skipped files says so.
    std::fs::remove_file(dir.path().join("a.csv")).unwrap();
    let e = load_runs(dir.path()).unwrap_err();
    assert!(e.to_string().contains("comparison CSV, are skipped"), "{e}");
}

/// Issue 17 item 12: a new row's own problem (here Little's law: 100 IOPS × 1 ms = 0.1 in
/// flight where the workload says 768) was reported as "line 3" of the dataset it was
/// being appended to; it now names the run and its source, and nothing is written.
#[test]
fn a_bad_new_row_is_reported_as_the_imported_results_not_the_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("d.csv");
    let (runs, _) = parse(GOOD).unwrap();
    append_runs(&csv, &runs).unwrap();
    let before = std::fs::read_to_string(&csv).unwrap();
    let mut bad = runs[0].clone();
    bad.run_id = "imported".into();
    bad.source = "result.json".into();
    bad.measured.iops = Some(100.0);
    bad.measured.latency_mean_secs = Some(1e-3);
    let e = append_runs(&csv, &[bad]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, DataError::NewRow(_)), "{msg}");
    assert!(
        msg.starts_with("run imported from result.json: column \"latency_mean\""),
        "{msg}"
    );
    assert!(msg.contains("nothing was appended"), "{msg}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), before);
}

/// A one-job fio 3.12 document (no `N` in its latency summaries, as fio 3.12 prints them)
/// of a 4 KiB run with the given pattern and read completion percentiles (ns).
fn fio_312(rw: &str, total_ios: u64, percentiles: &[(&str, u64)]) -> crate::fio::FioOutput {
    fio_312_parsed(rw, total_ios, percentiles).unwrap()
}

fn fio_312_parsed(
    rw: &str,
    total_ios: u64,
    percentiles: &[(&str, u64)],
) -> Result<crate::fio::FioOutput, crate::fio::json::FioParseError> {
    let table: Vec<String> = percentiles
        .iter()
        .map(|(p, v)| format!("\"{p}\": {v}"))
        .collect();
    let read = format!(
        r#"{{"io_bytes": {b}, "bw": 1000.0, "iops": 250.0, "runtime": 900000, "total_ios": {total_ios},
            "lat_ns": {{"min": 1, "max": 2, "mean": 5838878.2}},
            "clat_ns": {{"min": 1, "max": 2, "mean": 5829508.5, "percentile": {{{}}}}}}}"#,
        table.join(", "),
        b = total_ios * 4096
    );
    let idle = r#"{"io_bytes": 0, "bw": 0, "iops": 0, "total_ios": 0,
        "lat_ns": {"min": 0, "max": 0, "mean": 0}, "clat_ns": {"min": 0, "max": 0, "mean": 0}}"#;
    let doc = format!(
        r#"{{"fio version": "fio-3.12", "jobs": [{{"jobname": "test", "error": 0,
            "job options": {{"ioengine": "rbd", "rw": "{rw}", "bs": "4k", "iodepth": "8"}},
            "read": {read}, "write": {idle}}}]}}"#
    );
    crate::fio::parse_fio_output(
        &doc,
        Path::new("x.json"),
        crate::fio::EngineCheck::RequireRbd,
    )
}

/// croit's 2020 MG06 read runs (croit/benchmarks mach2-disks/results, fio 3.12): the
/// percentile tables of read-normal-8.json (a cache served 70 % of its reads within
/// 0.85 ms) and read-normal-1.json (every read paid a disk access), in ns.
const CROIT_CACHED: [(&str, u64); 11] = [
    ("1.000000", 411648),
    ("5.000000", 481280),
    ("10.000000", 528384),
    ("20.000000", 585728),
    ("30.000000", 634880),
    ("40.000000", 684032),
    ("50.000000", 733184),
    ("60.000000", 774144),
    ("70.000000", 847872),
    ("80.000000", 8847360),
    ("90.000000", 18481152),
];
const CROIT_DISK: [(&str, u64); 6] = [
    ("1.000000", 3751936),
    ("5.000000", 4685824),
    ("10.000000", 5603328),
    ("50.000000", 11730944),
    ("90.000000", 17956864),
    ("99.000000", 19791872),
];

#[test]
fn fio_312_results_without_n_count_their_total_ios() {
    // fio 3.12 prints no `N`; the mean latency is then weighted by `total_ios` (before,
    // such a result had no mean latency and its import was refused).
    let out = fio_312("randread", 1232396, &CROIT_CACHED);
    let s = out.summary();
    assert_eq!(s.read.ios, 1232396);
    assert_relative_eq!(s.latency_mean_secs, 5838878.2e-9, max_relative = 1e-12);
    let row = import::run_from_fio(
        &out,
        &import::ImportContext {
            run_id: "r".into(),
            system_id: "s".into(),
            scenario: "s.toml".into(),
            source: "x.json".into(),
        },
    );
    assert_relative_eq!(
        row.measured.latency_mean_secs.unwrap(),
        5838878.2e-9,
        max_relative = 1e-12
    );
    // The table above stops at the 90th percentile: no p99, so none is stated.
    assert!(row.stated.contains("latency_mean") && !row.stated.contains("latency_p99"));
    // A job without I/O in either direction is no result (audit F3: fio's rbd engine
    // writes one, error 0, for an image it could not open): refused, not a row.
    let e = fio_312_parsed("randread", 0, &[]).unwrap_err();
    assert!(
        matches!(e, crate::fio::json::FioParseError::NoIo { .. }),
        "{e}"
    );
}

/// fio's `group_reporting` merges the jobs into one entry that names one job's options, so
/// the images and jobs cannot be counted from it (session 53's audit: two images ran, one
/// was counted): the row says so and does not state the counts. Oracle: a real rbd-engine
/// result (`tests/fixtures/fio/single-randwrite.json`) with the option added, as fio writes
/// it in "global options".
#[test]
fn group_reporting_is_named_and_its_counts_not_stated() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fio/single-randwrite.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let ctx = import::ImportContext {
        run_id: "r".into(),
        system_id: "s".into(),
        scenario: "s.toml".into(),
        source: "x.json".into(),
    };
    let plain =
        crate::fio::parse_fio_output(&text, path.as_ref(), crate::fio::EngineCheck::RequireRbd)
            .unwrap();
    let row = import::run_from_fio(&plain, &ctx);
    assert!(row.stated.contains("images"), "{:?}", row.stated);
    assert!(!row.assumptions.contains("group_reporting"));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["global options"]["group_reporting"] = serde_json::Value::from("1");
    let grouped = crate::fio::parse_fio_output(
        &v.to_string(),
        path.as_ref(),
        crate::fio::EngineCheck::RequireRbd,
    )
    .unwrap();
    let row = import::run_from_fio(&grouped, &ctx);
    assert!(
        row.assumptions.contains("group_reporting"),
        "{}",
        row.assumptions
    );
    assert!(
        !row.stated.contains("images") && !row.stated.contains("jobs_per_image"),
        "{:?}",
        row.stated
    );
}

/// A data drive of `kind` stated to read 4 KiB in `read_latency_secs` (the other figures do
/// not enter the cache check).
pub(crate) fn drive(
    kind: crate::spec::DriveKind,
    read_latency_secs: f64,
) -> crate::spec::DriveEntry {
    crate::spec::DriveEntry {
        vendor: String::new(),
        model: String::new(),
        kind,
        capacity: crate::units::Bytes(4_000_000_000_000),
        read_4k_iops: 200.0,
        write_4k_iops: 200.0,
        read_bytes_per_sec: 2e8,
        write_bytes_per_sec: 2e8,
        read_latency: crate::units::Secs(read_latency_secs),
        write_latency: crate::units::Secs(read_latency_secs),
        sync_write_4k_iops: None,
        iops_queue_depth: None,
        power_watts: None,
        source: String::new(),
    }
}

#[test]
fn random_reads_faster_than_a_disk_turns_are_called_cache_served() {
    use crate::spec::DriveKind;
    use import::{cache_served_reads, FASTEST_DISK_REVOLUTION_SECS};
    // A 7,200 rpm disk: 12.5 ms a random 4 KiB read (seek and half a revolution).
    let hdd = &drive(DriveKind::Hdd, 0.0125);
    // Oracle: an uncached random read waits uniformly over a revolution (4 ms at 15,000
    // rpm, the fastest disks), so at most t / 4 ms of them complete within t. The cached
    // run's largest excess is at its 70th percentile: 0.70 within 0.847872 ms, against
    // 0.847872 / 4 = 0.211968.
    let c = cache_served_reads(
        &fio_312("randread", 1232396, &CROIT_CACHED),
        Some(Pattern::Randread),
        hdd,
    )
    .unwrap();
    assert_relative_eq!(c.share, 0.70, max_relative = 1e-12);
    assert_relative_eq!(c.within_secs, 847872e-9, max_relative = 1e-12);
    assert_relative_eq!(
        c.uncached_bound,
        847872e-9 / FASTEST_DISK_REVOLUTION_SECS,
        max_relative = 1e-12
    );
    assert!(
        c.note()
            .contains("70 % of the reads completed within 0.85 ms"),
        "{}",
        c.note()
    );
    // The disk-bound run: its 1 % point (3.75 ms) already exceeds what the bound allows.
    assert_eq!(
        cache_served_reads(
            &fio_312("randread", 75409, &CROIT_DISK),
            Some(Pattern::Randread),
            hdd
        ),
        None
    );
    // The fast run is not judged on flash, nor where a disk's buffers answer fast
    // legitimately (sequential reads from its track buffer, writes into its cache), nor
    // without a pattern.
    let fast = fio_312("randread", 1232396, &CROIT_CACHED);
    // Nor on storage Ceph calls rotational that is stated to read faster than any disk
    // positions (the lab's file-backed OSDs: `kind = "hdd"`, 75.5 µs measured reads;
    // session 54's audit found `import fio` flagging every lab read run).
    let lab = drive(DriveKind::Hdd, 75.5e-6);
    for (pattern, d) in [
        (Some(Pattern::Randread), &drive(DriveKind::Nvme, 90e-6)),
        (Some(Pattern::Randread), &drive(DriveKind::SataSsd, 150e-6)),
        (Some(Pattern::Randread), &lab),
        (Some(Pattern::Read), hdd),
        (Some(Pattern::Randwrite), hdd),
        (None, hdd),
    ] {
        assert_eq!(
            cache_served_reads(&fast, pattern, d),
            None,
            "{pattern:?} {:?} {:?}",
            d.kind,
            d.read_latency
        );
    }
    // A random mix's reads are judged like random reads.
    assert!(cache_served_reads(&fast, Some(Pattern::Randrw), hdd).is_some());
}

/// Session 55's audit: a Latin-1 CSV was told to "check the path".
#[test]
fn a_dataset_that_is_not_utf8_is_told_to_be_saved_as_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("latin1.csv");
    std::fs::write(&f, b"run_id,system_id\nr1,caf\xe9\n").unwrap();
    let e = load_runs(&f).unwrap_err().to_string();
    assert!(
        e.contains("latin1.csv") && e.contains("save it as UTF-8") && !e.contains("check the path"),
        "{e}"
    );
}
