//! CLI behaviour of `lab` and `validate` that needs no cluster: refusals and error texts.

use assert_cmd::Command;
use predicates::str::contains;

#[test]
fn lab_down_refuses_a_directory_it_did_not_create() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("keep-me"), "x").unwrap();
    Command::cargo_bin("cephplan")
        .unwrap()
        .args(["lab", "down", "--dir"])
        .arg(d.path())
        .assert()
        .failure()
        .stderr(contains("no lab.json written by cephplan"));
    assert!(d.path().join("keep-me").exists());
}

#[test]
fn validate_without_fio_says_what_to_install() {
    let d = tempfile::tempdir().unwrap();
    Command::cargo_bin("cephplan")
        .unwrap()
        .args([
            "validate",
            "--scenario",
            "s.toml",
            "--ceph-conf",
            "c.conf",
            "--pool",
            "rbd",
        ])
        .args(["--fio", "/nonexistent/fio", "--out"])
        .arg(d.path())
        .assert()
        .failure()
        .stderr(contains("apt-get install -y --no-install-recommends fio"));
}

#[test]
fn validate_rejects_a_bad_pattern_before_touching_the_cluster() {
    Command::cargo_bin("cephplan")
        .unwrap()
        .args([
            "validate",
            "--scenario",
            "s.toml",
            "--ceph-conf",
            "c.conf",
            "--pool",
            "rbd",
        ])
        .args(["--pattern", "sideways"])
        .assert()
        .failure()
        .stderr(contains("use randread, randwrite, randrw, read or write"));
}
