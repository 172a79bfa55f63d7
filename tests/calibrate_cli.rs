//! `cephplan import fio` and `cephplan calibrate` end to end: real fio JSON fixtures
//! (tests/fixtures/fio/README.md says how each was recorded) and bad inputs that must be
//! refused with the file, line/row and field named.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cephplan::data::{load_runs, Pattern};
use cephplan::fio::json::{read_fio_file, EngineCheck};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn cephplan() -> Command {
    Command::cargo_bin("cephplan").unwrap()
}

fn import(json: &str, csv: &Path) -> assert_cmd::assert::Assert {
    cephplan()
        .args(["import", "fio"])
        .arg(fixture(&format!("fio/{json}")))
        .arg("--scenario")
        .arg(fixture("seed-000.toml"))
        .arg("--out")
        .arg(csv)
        .assert()
}

#[test]
fn import_plain_multi_job_and_client_server_results() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("lab.csv");
    for json in [
        "single-randwrite.json",
        "multi-randwrite.json",
        "clientserver-randwrite.json",
    ] {
        import(json, &csv).success();
    }
    let (runs, _warnings) = load_runs(&csv).unwrap();
    assert_eq!(runs.len(), 3);
    for (run, json) in runs.iter().zip([
        "single-randwrite",
        "multi-randwrite",
        "clientserver-randwrite",
    ]) {
        let s = read_fio_file(
            &fixture(&format!("fio/{json}.json")),
            EngineCheck::RequireRbd,
        )
        .unwrap()
        .summary();
        assert_eq!(run.run_id, json);
        assert_eq!(run.measured.iops, Some(s.total_iops));
        assert_eq!(run.measured.latency_mean_secs, Some(s.latency_mean_secs));
        assert_eq!(run.workload.pattern, Some(Pattern::Randwrite));
        assert_eq!(run.workload.block_size_bytes, Some(4096));
        assert!(run.scenario_resolved.as_ref().unwrap().is_file());
    }
    // single: one image at iodepth 16; multi.fio: two jobs on fx1 and fx2 at iodepth 8.
    assert_eq!(
        (runs[0].workload.images, runs[0].workload.iodepth),
        (Some(1), Some(16))
    );
    assert_eq!(
        (runs[1].workload.images, runs[1].workload.iodepth),
        (Some(2), Some(8))
    );
    // Importing the same result twice is refused (duplicate run id), nothing written.
    let before = std::fs::read_to_string(&csv).unwrap();
    import("single-randwrite.json", &csv)
        .failure()
        .stderr(contains("already used"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), before);
}

#[test]
fn import_refuses_another_engine_and_truncated_json() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("lab.csv");
    import("other-engine-psync.json", &csv)
        .code(2)
        .stderr(contains("psync"))
        .stderr(contains("--ioengine=rbd"));
    let text = std::fs::read_to_string(fixture("fio/single-randwrite.json")).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    cephplan()
        .args(["import", "fio"])
        .arg(&cut)
        .arg("--scenario")
        .arg(fixture("seed-000.toml"))
        .arg("--out")
        .arg(&csv)
        .assert()
        .code(2)
        .stderr(contains("truncated"))
        .stderr(contains("line"));
    assert!(!csv.exists());
}

#[test]
fn calibrate_names_row_and_field_of_bad_data() {
    let dir = tempfile::tempdir().unwrap();
    let header = "run_id,system_id,kind,scenario,pattern,block_size,iodepth,images,jobs_per_image,concurrency,read_percent,ceph_release,nodes,iops,bandwidth,latency_mean,latency_p99,ratio,ratio_metric,ratio_reference,source,stated,inferred,assumptions,quote,reading,reading_error";
    let scen = fixture("seed-000.toml");
    let row = format!(
        "r1,s,absolute,{},randwrite,4k,16,48,1,,,,,230000,,3.5 millis,,,,,test,,,,q,text,",
        scen.display()
    );
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, format!("{header}\n{row}\n")).unwrap();
    cephplan()
        .args(["calibrate", "--data"])
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("m.toml"))
        .assert()
        .code(2)
        .stderr(contains("line 2"))
        .stderr(contains("latency_mean"));
    let missing = dir.path().join("missing.csv");
    std::fs::write(&missing, format!("{}\n", header.replace(",iops", ""))).unwrap();
    cephplan()
        .args(["calibrate", "--data"])
        .arg(&missing)
        .arg("--out")
        .arg(dir.path().join("m.toml"))
        .assert()
        .code(2)
        .stderr(contains("missing column \"iops\""));
    assert!(!dir.path().join("m.toml").exists());
}

#[test]
fn profile_prints_a_grid_and_refuses_values_outside_the_bounds() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/seed-001-xeon-8180-optane.csv");
    let out = cephplan()
        .args(["profile", "--data"])
        .arg(&data)
        .args([
            "--param",
            "wal_share",
            "--values",
            "0.3,0.8",
            "--fit",
            "osd_cpu_write_gcycles,osd_cpu_read_gcycles",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["parameter"], "wal_share");
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    for p in v["points"].as_array().unwrap() {
        assert!(p["mape_in_sample"].as_f64().unwrap().is_finite(), "{p}");
        assert!(p["termination"]["evaluations"].as_u64().unwrap() > 0, "{p}");
    }
    assert!(v["mape_spread_points"].as_f64().is_some());
    // The CSV names its columns as the JSON does and carries the same figures.
    let csv_out = cephplan()
        .args(["profile", "--data"])
        .arg(&data)
        .args([
            "--param",
            "wal_share",
            "--values",
            "0.3,0.8",
            "--fit",
            "osd_cpu_write_gcycles,osd_cpu_read_gcycles",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut reader = csv::Reader::from_reader(csv_out.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "value",
            "mape_in_sample",
            "max_abs_throughput_error_pct",
            "throughput_misses",
            "termination_evaluations",
            "termination_reason"
        ]
    );
    for (row, p) in reader.records().zip(v["points"].as_array().unwrap()) {
        let row = row.unwrap();
        let mape: f64 = row[1].parse().unwrap();
        assert_eq!(mape, p["mape_in_sample"].as_f64().unwrap(), "{p}");
        assert_eq!(row[3], p["throughput_misses"].to_string());
        assert_eq!(row[4], p["termination"]["evaluations"].to_string());
        assert_eq!(&row[5], p["termination"]["reason"].as_str().unwrap());
    }
    cephplan()
        .args(["profile", "--data"])
        .arg(&data)
        .args(["--param", "wal_share", "--values", "0.5,7"])
        .assert()
        .code(2)
        .stderr(contains("wal_share = 7 lies outside its bounds"));
}

/// `cephplan evaluate --no-scale --format FORMAT` over three small systems of the corpus
/// (seed 001 and the two mClock nodes: every split fits in seconds in a debug build); its
/// standard output, the command having succeeded.
fn evaluate_small(format: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let out = cephplan()
        .args(["evaluate", "--no-scale", "--format", format, "--data"])
        .arg(root.join("seed-001-xeon-8180-optane.csv"))
        .arg(root.join("public-mclock-qos.csv"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn evaluate_prints_the_json_contract_over_held_out_systems() {
    let v: serde_json::Value = serde_json::from_str(&evaluate_small("json")).unwrap();
    let systems = v["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 3);
    for s in systems {
        assert!(s["system_id"].is_string());
        assert!(s["runs"].as_u64().unwrap() > 0);
        assert!(s["iops_mape"].is_number(), "{s}");
        assert!(s.get("latency_mape").is_some());
    }
    for path in [
        "/loso/iops_mape",
        "/loso/iops_median",
        "/loso/latency_mape",
        "/coverage/p80",
        "/coverage/p95",
        "/baselines/core_rule/iops_mape",
        "/baselines/core_rule/iops_median",
        "/baselines/disk_rule/iops_mape",
    ] {
        assert!(
            v.pointer(path).is_some_and(|x| x.is_number()),
            "{path}: {v}"
        );
    }
    // The scale key is there (null figures without a series).
    assert!(v.pointer("/scale/iops_mape").is_some());
    // The errors by kind of run: the mClock runs are co-located, seed 001's are not, and
    // none of these runs is erasure-coded.
    let classes = v["classes"].as_array().unwrap();
    let class = |name: &str| classes.iter().find(|c| c["class"] == name).unwrap();
    assert_eq!(class("colocated")["runs"], 6, "{v}");
    assert!(class("colocated")["iops_mape"].is_number());
    assert_eq!(class("erasure-coded")["runs"], 0);
    // Every run has one direction: seed 001's two reads, its two writes and the six
    // mClock writes.
    assert_eq!(class("reads")["runs"], 2, "{v}");
    assert_eq!(class("writes")["runs"], 8, "{v}");
    assert_eq!(class("mixed")["runs"], 0);
    assert!(class("erasure-coded")["iops_mape"].is_null());
    for name in ["qd1", "large-blocks"] {
        assert!(class(name).get("latency_mape").is_some());
    }
    // Every held-out figure names its split and is predicted without its own system, and
    // names its run's kinds: the six co-located mClock figures' runs and none of seed 001's.
    let mut colocated_runs = std::collections::BTreeSet::new();
    for f in v["figures"].as_array().unwrap() {
        assert_eq!(f["kind"], "leave_one_system_out");
        assert!(f["predicted"].as_f64().unwrap() > 0.0);
        let kinds = f["classes"].as_array().unwrap();
        let colocated = kinds.iter().any(|c| c == "colocated");
        assert_eq!(colocated, f["system_id"] != "seed-001", "{f}");
        if colocated {
            colocated_runs.insert(f["run_id"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(colocated_runs.len(), 6);
    // What each fold's fit chose, and each fitted parameter's range over the folds, its
    // extremes named by the system left out.
    let ids: Vec<&str> = systems
        .iter()
        .map(|s| s["system_id"].as_str().unwrap())
        .collect();
    let folds = v["folds"].as_array().unwrap();
    assert_eq!(
        folds
            .iter()
            .map(|f| f["system_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ids
    );
    for f in folds {
        assert_eq!(f["kind"], "leave_one_system_out");
        assert!(!f["parameters"].as_object().unwrap().is_empty(), "{f}");
        assert!(f["converged"].is_boolean() && f["termination"].is_string());
    }
    let spread = v["parameter_spread"].as_array().unwrap();
    assert!(!spread.is_empty());
    for q in spread {
        let x = |k: &str| q[k].as_f64().unwrap();
        assert!(x("min") <= x("median") && x("median") <= x("max"), "{q}");
        assert_eq!(q["folds"], 3);
        for k in ["min_without", "max_without"] {
            assert!(ids.contains(&q[k].as_str().unwrap()), "{q}");
        }
    }
}

#[test]
fn evaluate_table_shows_how_far_each_fitted_parameter_moves_between_folds() {
    let text = evaluate_small("table");
    let v: serde_json::Value = serde_json::from_str(&evaluate_small("json")).unwrap();
    let section = text
        .split("fitted parameters over the leave-one-system-out folds")
        .nth(1)
        .unwrap_or_else(|| panic!("no parameter section in:\n{text}"));
    for q in v["parameter_spread"].as_array().unwrap() {
        let name = q["name"].as_str().unwrap();
        let line = section
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{section}"));
        let without = format!("(without {})", q["max_without"].as_str().unwrap());
        assert!(line.contains(&without), "{line}");
        let ratio = q["max"].as_f64().unwrap() / q["min"].as_f64().unwrap();
        assert!(line.trim_end().ends_with(&format!("{ratio:.2}")), "{line}");
    }
}

#[test]
fn evaluate_csv_names_each_figures_kinds_of_run() {
    let csv = evaluate_small("csv");
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    assert_eq!(header.iter().next_back(), Some("classes"));
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    // The mClock runs are co-located 4k random writes; seed 001's are separate-client
    // reads or writes.
    for r in &rows {
        let expect = if &r[1] != "seed-001" {
            "colocated;writes"
        } else if r[2].contains("read") {
            "reads"
        } else {
            "writes"
        };
        assert_eq!(&r[13], expect, "{r:?}");
    }
}

#[test]
fn evaluate_markdown_shows_the_json_figures_as_the_readme_tables() {
    // `--format md` prints the README's two tables, and its overall row carries the JSON's
    // figures at one decimal.
    let md = evaluate_small("md");
    let v: serde_json::Value = serde_json::from_str(&evaluate_small("json")).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| system | runs | IOPS MAPE | median | bias | mean-latency MAPE | scale-series MAPE | inside 80 % / 95 % | per-core rule MAPE |"
    );
    assert_eq!(lines[1], "|---|---|---|---|---|---|---|---|---|");
    // One row per system, in the JSON's order, with its runs and IOPS MAPE.
    for (i, s) in v["systems"].as_array().unwrap().iter().enumerate() {
        let cells: Vec<&str> = lines[2 + i].split(" | ").collect();
        assert_eq!(cells[0], format!("| {}", s["system_id"].as_str().unwrap()));
        assert_eq!(cells[1], s["runs"].to_string());
        assert_eq!(cells[2], format!("{:.1}", s["iops_mape"].as_f64().unwrap()));
    }
    let f = |path: &str| format!("{:.1}", v.pointer(path).unwrap().as_f64().unwrap());
    let all = lines[5];
    assert!(all.starts_with("| **all 3 systems** |"), "{all}");
    for (path, shown) in [
        ("/loso/iops_mape", format!("**{}**", f("/loso/iops_mape"))),
        (
            "/loso/iops_median",
            format!("**{}**", f("/loso/iops_median")),
        ),
        (
            "/loso/latency_mape",
            format!("**{}**", f("/loso/latency_mape")),
        ),
        (
            "/coverage/p80",
            format!("**{} / {}**", f("/coverage/p80"), f("/coverage/p95")),
        ),
    ] {
        assert!(all.contains(&format!("| {shown} |")), "{path}: {all}");
    }
    // `--no-scale`: no scale-series figure.
    assert!(all.contains("| - | **"), "{all}");
    assert!(lines[6].starts_with("| every run weighing the same | |"));
    // Then how much of the error is the systems' offsets, with the JSON's figures.
    assert_eq!(lines[7], "");
    let f2 = |path: &str| format!("{:.2}", v.pointer(path).unwrap().as_f64().unwrap());
    assert!(
        lines[8].starts_with("with each system's offset learned from its other runs")
            && lines[8].contains(&format!(
                "IOPS MAPE {} % would be {} %, {} % with an offset per system and direction",
                f2("/loso/iops_mape"),
                f2("/loso/iops_mape_level_known"),
                f2("/loso/iops_mape_level_known_by_direction")
            )),
        "{}",
        lines[8]
    );
    // The by-kind table follows after a blank line, one row per class.
    assert_eq!(lines[9], "");
    assert_eq!(
        lines[10],
        "| runs of kind | runs | systems | IOPS MAPE | median | bias | mean-latency MAPE | inside 80 % / 95 % |"
    );
    assert_eq!(lines.len(), 12 + v["classes"].as_array().unwrap().len());
    assert!(md.contains("| co-located clients | 6 | 2 |"), "{md}");
}

/// `--against` an earlier report of the same runs: the table gains the comparison (no
/// change, and no range over three systems), the JSON a key `against`.
#[test]
fn evaluate_against_an_earlier_report_prints_each_change() {
    let dir = tempfile::tempdir().unwrap();
    let earlier = dir.path().join("before.json");
    std::fs::write(&earlier, evaluate_small("json")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let run = |format: &str| {
        cephplan()
            .args(["evaluate", "--no-scale", "--format", format, "--against"])
            .arg(&earlier)
            .arg("--data")
            .arg(root.join("seed-001-xeon-8180-optane.csv"))
            .arg(root.join("public-mclock-qos.csv"))
            .output()
            .unwrap()
    };
    let out = run("table");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Against the earlier evaluation (18 held-out figures"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS/bandwidth MAPE "))
        .unwrap();
    assert!(
        row.contains("+0.00") && row.ends_with("too few systems for a range"),
        "{row}"
    );
    assert!(text.contains("xeon8276m-1n-mclock"), "{text}");
    let out = run("json");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["against"]["iops_mape"]["change"], 0.0, "{}", v["against"]);
    assert_eq!(v["against"]["iops_mape"]["verdict"], "too_few_systems");
    assert_eq!(v["against"]["systems"].as_array().unwrap().len(), 3);
    // The report's own keys are where they were.
    assert!(v.pointer("/loso/iops_mape").is_some_and(|x| x.is_number()));
    // CSV has no place for it: refused before any fit.
    let out = run("csv");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use --format table, json or md"));
}

/// An earlier report that is not one, or of other runs, is refused naming the file and
/// the fix; a file that is not JSON is refused before the evaluation runs.
#[test]
fn evaluate_against_a_wrong_report_names_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("notes.json");
    std::fs::write(&bad, "{\n  \"loso\": 3,\n").unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let out = cephplan()
        .args(["evaluate", "--no-scale", "--against"])
        .arg(&bad)
        .arg("--data")
        .arg(root.join("seed-001-xeon-8180-optane.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{} (line", bad.display()))
            && err.contains("is not a `cephplan evaluate` JSON report")
            && err.contains("--format json >"),
        "{err}"
    );
    // A report of other runs: the comparison names what differs.
    let other = dir.path().join("other.json");
    std::fs::write(&other, evaluate_small("json")).unwrap();
    let out = cephplan()
        .args(["evaluate", "--no-scale", "--against"])
        .arg(&other)
        .arg("--data")
        .arg(root.join("seed-001-xeon-8180-optane.csv"))
        .arg(root.join("seed-000-ampere-altra-max.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot compare with {}", other.display()))
            && err.contains("evaluate both models on the same --data"),
        "{err}"
    );
}

#[test]
fn a_missing_data_path_is_named_once_with_its_cause_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-runs.csv");
    let out = cephplan()
        .args(["evaluate", "--no-scale", "--data"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot read {}", missing.display())),
        "{err}"
    );
    assert!(err.contains("check the path"), "{err}");
    // The OS's cause (Linux's ENOENT text) once, not repeated by the error chain.
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// Every command reading a user's file names a missing one once with its cause and the fix
/// (the fio JSON, CBT archive and network file errors carried their cause both in their
/// message and as the chain's source, so the CLI said it twice).
#[test]
fn missing_input_files_are_named_once_with_their_cause_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/examples/seed-000-ampere-altra-max.toml"
    );
    let missing = dir.path().join("missing");
    let out_csv = dir.path().join("runs.csv");
    let import = |kind: &str| -> Vec<std::ffi::OsString> {
        vec![
            "import".into(),
            kind.into(),
            missing.clone().into(),
            "--scenario".into(),
            scenario.into(),
            "--out".into(),
            out_csv.clone().into(),
        ]
    };
    let cases = [
        (import("fio"), "check the path of fio's JSON output"),
        (import("cbt"), "check the path of the CBT archive"),
        (
            vec!["solve".into(), "--network".into(), missing.clone().into()],
            "check the path",
        ),
    ];
    for (args, fix) in cases {
        let out = cephplan().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&missing.display().to_string()), "{err}");
        assert!(err.contains(fix), "{err}");
        assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    }
    assert!(!out_csv.exists(), "nothing is written for a missing input");
}

/// A row whose `scenario` cell names no file: the run, the CSV and its line, the path
/// tried, the OS's cause once, and where the path is resolved from.
#[test]
fn a_rows_missing_scenario_file_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/calibration-data/public-mclock-qos.csv"
    ))
    .unwrap();
    // The header and the first run, copied away from their scenario files.
    let rows: Vec<&str> = source
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(2)
        .collect();
    let csv = dir.path().join("runs.csv");
    std::fs::write(&csv, rows.join("\n") + "\n").unwrap();
    let out = cephplan()
        .args(["calibrate", "--no-loo", "--data"])
        .arg(&csv)
        .arg("--out")
        .arg(dir.path().join("model.toml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("runs.csv:2"), "{err}");
    assert!(err.contains("mclock-e5-2650v3-1n.toml"), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("relative to the CSV file's folder"), "{err}");
    assert!(
        !dir.path().join("model.toml").exists(),
        "no model is written"
    );
}

#[test]
fn evaluate_refuses_a_row_without_its_quote_naming_file_line_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data/public-mclock-qos.csv");
    let text = std::fs::read_to_string(&src).unwrap();
    // Blank the quote of the first data row (header first, then rows after comments).
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = lines.iter().position(|l| !l.starts_with('#')).unwrap();
    let row = (header + 1..lines.len())
        .find(|&i| !lines[i].starts_with('#'))
        .unwrap();
    let mut rec: Vec<String> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(lines[row].as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let qi = lines[header].split(',').position(|c| c == "quote").unwrap();
    rec[qi].clear();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&rec).unwrap();
    lines[row] = String::from_utf8(w.into_inner().unwrap())
        .unwrap()
        .trim_end()
        .to_string();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let scen = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data/scenarios");
    std::os::unix::fs::symlink(scen, dir.path().join("scenarios")).unwrap();
    cephplan()
        .args(["evaluate", "--data"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(contains("bad.csv"))
        .stderr(contains(format!("line {}", row + 1)))
        .stderr(contains("\"quote\""))
        .stderr(contains("copy them from the source"));
}

#[test]
fn calibrate_refuses_unknown_parameter_names_with_the_closest_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.toml");
    let fit = |names: &str| {
        cephplan()
            .args(["calibrate", "--no-loo", "--fit", names, "--data"])
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("calibration-data/seed-001-xeon-8180-optane.csv"),
            )
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
    };
    fit("nope,osd_cpu_raed_gcycles")
        .stderr(contains("\"nope\""))
        .stderr(contains("closest"));
    assert!(!out.exists());
    fit("osd_cpu_raed_gcycles").stderr(contains("closest: osd_cpu_read_gcycles"));
}

/// Issue 17 item 4: `calibrate --data DIR` accepts a `validate --out DIR` directory as it
/// stands (the unedited lab recording in tests/fixtures/validation-lab), fits its 7 dataset
/// rows, names the comparison CSVs it skipped, and records only the datasets as inputs.
#[test]
fn calibrate_accepts_a_validate_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.toml");
    cephplan()
        .args(["calibrate", "--no-loo", "--data"])
        .arg(fixture("validation-lab"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains(
            "comparison-1796124266-19556.csv: skipped: the comparison CSV of `cephplan validate`",
        ))
        .stderr(contains("comparison-1796124302-19937.csv: skipped"))
        .stdout(contains("lab     7"));
    let model = std::fs::read_to_string(&out).unwrap();
    assert!(model.contains("validation-1796124266-19556.csv fnv1a64="));
    assert!(!model.contains("comparison-"));
}

/// `import cbt` on the fixture CBT tree (tests/fixtures/cbt/README.md: a CBT archive
/// recorded on the local lab, 2 clients × 2 iterations of 4k randwrite and 4k randread at
/// iodepth 8) appends one row per point that the loader accepts, with the CBT point as its
/// run id; 2 images × iodepth 8 = 16 in flight. (The figures themselves are checked against
/// the recorded JSON in `data::cbt`'s tests.)
#[test]
fn import_cbt_appends_one_row_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("cbt.csv");
    let mut assert = cephplan()
        .args(["import", "cbt"])
        .arg(fixture("cbt/archive"))
        .arg("--scenario")
        .arg(fixture("seed-000.toml"))
        .arg("--out")
        .arg(&csv)
        .assert()
        .success();
    for mode in ["randread", "randwrite"] {
        assert = assert.stderr(contains(format!(
            "appended run archive-op_size-00004096-concurrent_procs-002-iodepth-008-{mode} ("
        )));
    }
    assert.stderr(contains("IOPS; 4 file(s), 2 client(s), 2 iteration(s))"));
    let (runs, warnings) = load_runs(&csv).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.workload.in_flight(), Some(16.0), "{}", r.run_id);
    }
    // A second import of the same tree is refused as the same runs, not duplicated.
    cephplan()
        .args(["import", "cbt"])
        .arg(fixture("cbt/archive"))
        .arg("--scenario")
        .arg(fixture("seed-000.toml"))
        .arg("--out")
        .arg(&csv)
        .assert()
        .failure();
    assert_eq!(load_runs(&csv).unwrap().0.len(), 2);
}

/// A random-read result on hard disks whose reads complete faster than a disk can position
/// is imported with a warning and a note in its row; the same result against a flash
/// cluster is not judged (tests/fixtures/fio/README.md: an excerpt of croit's fio 3.12
/// output, which prints no `N`).
#[test]
fn import_warns_of_random_reads_a_cache_served_on_hard_disks() {
    let dir = tempfile::tempdir().unwrap();
    let hdd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/scenarios/e5-2430l-hdd-croit-mg06.toml");
    let json = fixture("fio/hdd-randread-cache-served-fio312.json");
    let run = |scenario: &Path, csv: &Path| {
        cephplan()
            .args(["import", "fio"])
            .arg(&json)
            .arg("--scenario")
            .arg(scenario)
            .arg("--out")
            .arg(csv)
            .assert()
            .success()
    };
    let csv = dir.path().join("hdd.csv");
    run(&hdd, &csv).stderr(contains(
        "70 % of the reads completed within 0.85 ms, where uncached random reads on hard disks allow at most 21 %",
    ))
    .stderr(contains("calibrate and evaluate leave it out"));
    let (runs, _) = load_runs(&csv).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(
        runs[0].assumptions.contains("a cache served part of them"),
        "{}",
        runs[0].assumptions
    );
    // Calibrating on it leaves the row out and says why (it was the only run).
    cephplan()
        .args(["calibrate", "--no-loo", "--data"])
        .arg(&csv)
        .arg("--out")
        .arg(dir.path().join("cached.toml"))
        .assert()
        .failure()
        .stderr(contains("1 left out as cache-served reads"));
    // fio 3.12's mean latency (lat_ns.mean 5,838,878.207181 ns, weighted by total_ios).
    assert_eq!(runs[0].measured.latency_mean_secs, Some(5838878.207181e-9));
    let flash = dir.path().join("flash.csv");
    run(&fixture("seed-000.toml"), &flash).stderr(contains("a cache served").not());
    let (runs, _) = load_runs(&flash).unwrap();
    assert!(
        !runs[0].assumptions.contains("cache"),
        "{}",
        runs[0].assumptions
    );
    // A scenario that does not load: the check is skipped, said so, and the row appended;
    // calibrating on the dataset then names the scenario's error (file, line and field)
    // and writes no model.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "schema_version = 1\n[cluster]\nnodes = \"x\"\n").unwrap();
    let csv = dir.path().join("bad.csv");
    run(&bad, &csv).stderr(contains("the hard-disk cache check was skipped"));
    let model = dir.path().join("m.toml");
    cephplan()
        .args(["calibrate", "--no-loo", "--data"])
        .arg(&csv)
        .arg("--out")
        .arg(&model)
        .assert()
        .failure()
        .stderr(contains("bad.toml:3").and(contains("cluster.nodes")));
    assert!(!model.exists());
}

/// A user's write-only fio runs (two real randwrite fixtures imported onto the seed-000
/// scenario, one system): `calibrate` without --start starts from the shipped default and
/// says so, holds the read parameters (the report's note), and the written model sends a
/// read workload to the default's leave-one-system-out interval, which `predict` states.
#[test]
fn a_write_only_calibration_predicts_reads_with_the_defaults_error() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("lab.csv");
    for json in ["single-randwrite.json", "multi-randwrite.json"] {
        import(json, &csv).success();
    }
    let out = dir.path().join("mine.toml");
    cephplan()
        .args(["calibrate", "--data"])
        .arg(&csv)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains(
            "the fit starts from model \"default\" (the shipped default)",
        ))
        .stdout(contains(
            "no read runs: osd_cpu_read_gcycles, fixed_latency_read_secs keep model \"default\"'s values",
        ))
        .stdout(contains("degrees of freedom, from model \"default\""));
    let model = std::fs::read_to_string(&out).unwrap();
    assert!(
        model.contains("measured_directions = [\"writes\"]"),
        "{model}"
    );
    assert!(model.contains("[transfer.unmeasured]"), "{model}");
    let shipped = cephplan::model::ModelParams::shipped_default();
    let mine = cephplan::model::ModelParams::parse(&model, "mine.toml").unwrap();
    assert_eq!(
        mine.get("osd_cpu_read_gcycles"),
        shipped.get("osd_cpu_read_gcycles")
    );
    // The fixture scenario is a 4k random read.
    cephplan()
        .args(["predict", "--scenario"])
        .arg(fixture("seed-000.toml"))
        .arg("--model")
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("leave-one-system-out error over 11 systems"))
        .stdout(contains("the calibration had no read runs"))
        // The start model's held-out record of reads, as the shipped default prints it.
        .stdout(contains("held out    reads only: IOPS off by"));
    // A prior the user names is the start too, as before: it states no leave-one-system-out
    // error, so the read parameters are fitted at its width and the report says why.
    cephplan()
        .args(["calibrate", "--no-loo", "--data"])
        .arg(&csv)
        .arg("--prior")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/prior.toml"))
        .arg("--out")
        .arg(dir.path().join("from-prior.toml"))
        .assert()
        .success()
        .stderr(contains("the shipped default").not())
        .stdout(contains(
            "are fitted (the fit has no leave-one-system-out error to give them",
        ))
        .stdout(contains("degrees of freedom, from model \"prior\""));
}

/// `calibrate --format csv` writes one row per fitted figure of a run, in SI units, as its
/// help says (session 53's audit: it printed the text table).
#[test]
fn calibrate_writes_its_run_table_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("lab.csv");
    for json in ["single-randwrite.json", "multi-randwrite.json"] {
        import(json, &csv).success();
    }
    let out = cephplan()
        .args(["calibrate", "--no-loo", "--format", "csv", "--data"])
        .arg(&csv)
        .arg("--out")
        .arg(dir.path().join("mine.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        rows.headers().unwrap(),
        vec![
            "system_id",
            "run_id",
            "metric",
            "measured",
            "predicted",
            "error_pct",
            "predicted_loo",
            "error_pct_loo"
        ]
    );
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    // Two runs, each with IOPS and mean latency; no leave-one-out column values.
    assert_eq!(records.len(), 4, "{text}");
    for r in &records {
        let measured: f64 = r[3].parse().unwrap();
        let predicted: f64 = r[4].parse().unwrap();
        let error: f64 = r[5].parse().unwrap();
        assert!(
            (100.0 * (predicted / measured - 1.0) - error).abs() < 1e-3,
            "{r:?}"
        );
        assert!(r[6].is_empty() && r[7].is_empty(), "{r:?}");
    }
    assert!(records.iter().any(|r| &r[2] == "latency_mean_secs"));
}
