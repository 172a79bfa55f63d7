//! `cephplan simulate` end to end: table and JSON output, determinism, file errors.

use assert_cmd::Command;
use predicates::prelude::*;

fn cmd() -> Command {
    Command::cargo_bin("cephplan").unwrap()
}

const MODEL: &str = "tests/fixtures/sim_fork_join.toml";

#[test]
fn json_report_is_deterministic_and_complete() {
    let run = || {
        let out = cmd()
            .args([
                "simulate",
                "--model",
                MODEL,
                "--seed",
                "3",
                "--precision",
                "0.05",
            ])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let a = run();
    assert_eq!(a, run(), "same seed, same bytes");
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["classes"][0]["name"], "randwrite");
    assert!(
        v["classes"][0]["percentiles"]["p99_secs"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0004
    );
    assert!(v["stations"][1]["utilization"]["mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn table_shows_classes_stations_and_stop_reason() {
    cmd()
        .args([
            "simulate",
            "--model",
            MODEL,
            "--precision",
            "0.1",
            "--replications",
            "4",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("randread"))
        .stdout(predicate::str::contains("p99 ms"))
        .stdout(predicate::str::contains("osd"))
        .stdout(predicate::str::contains("stop: PrecisionReached"));
}

#[test]
fn bad_model_file_is_reported_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.toml");
    std::fs::write(&p, "schema_version = 1\n[[stations]]\nname = 3\n").unwrap();
    cmd()
        .args(["simulate", "--model"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.toml"));
}
