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

#[test]
fn an_invalid_model_is_named_once_with_the_fix() {
    // A detached step without steps: the message names the file, the class and the fix,
    // and says it once (the error chain used to repeat the inner error).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty-detach.toml");
    let text = std::fs::read_to_string(MODEL).unwrap();
    let text = text.replacen(
        "route = [",
        "route = [\n  { step = \"detach\", steps = [] },",
        1,
    );
    assert!(text.contains("\"detach\""), "the fixture has a route");
    std::fs::write(&p, text).unwrap();
    let out = cmd()
        .args(["simulate", "--model"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("empty-detach.toml"), "{err}");
    let fix = "a detached step has no steps; give it at least one visit or remove it";
    assert_eq!(err.matches(fix).count(), 1, "{err}");
}

#[test]
fn network_file_is_simulated_like_mva_describes_it() {
    // Machine repairman: 5 jobs, think 10 ms, one 2 ms server. Exact throughput from the
    // finite-source formula (Gross & Harris §2.7) as solved by `cephplan solve`: the
    // simulated interval must contain it at 99 % (one check).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mr.toml");
    std::fs::write(
        &p,
        "schema_version = 1\n[[class]]\nname = \"c\"\npopulation = 5\nthink_time = \"10ms\"\n\
         [[station]]\nname = \"srv\"\ndemand = { c = \"2ms\" }\n",
    )
    .unwrap();
    let net = cephplan::qn::file::load_network(&p).unwrap();
    let exact = cephplan::solve::solve(&net, &Default::default())
        .unwrap()
        .classes[0]
        .throughput_per_sec;
    let out = cmd()
        .args(["simulate", "--network"])
        .arg(&p)
        .args(["--format", "json", "--seed", "4"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let x = &v["classes"][0]["throughput_per_sec"];
    let (mean, hw) = (
        x["mean"].as_f64().unwrap(),
        x["half_width"].as_f64().unwrap(),
    );
    // The CLI reports 95 % intervals; widen to 99 % with the t ratio for 9 d.o.f.
    // (t₀.₉₉₅,₉ / t₀.₉₇₅,₉ = 3.250 / 2.262) — any Student-t table.
    assert!(
        (mean - exact).abs() <= hw * 3.250 / 2.262,
        "{mean} ± {hw} vs {exact}"
    );
}

#[test]
fn network_with_fork_path_demand_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fork.toml");
    std::fs::write(
        &p,
        "schema_version = 1\n[[class]]\nname = \"w\"\npopulation = 2\n\
         [[station]]\nname = \"osd\"\ndemand = { w = \"3ms\" }\npath_demand = { w = \"1ms\" }\n",
    )
    .unwrap();
    cmd()
        .args(["simulate", "--network"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Route::fork"));
}

#[test]
fn labelled_choices_get_their_own_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mix.toml");
    std::fs::write(
        &p,
        r#"schema_version = 1
[[stations]]
name = "osd"
kind = "queue"
servers = 1
multiplicity = 2
placement = "random"
[[classes]]
name = "mix"
arrivals = { kind = "closed", population = 4, think = { kind = "deterministic", secs = 0.0 } }
route = [
  { step = "choice", branches = [
    { label = "read", probability = 0.7, steps = [ { step = "visit", station = 0, service = { kind = "exponential", mean_secs = 0.0002 } } ] },
    { label = "write", probability = 0.3, steps = [ { step = "visit", station = 0, service = { kind = "exponential", mean_secs = 0.0006 } } ] },
  ] },
]
"#,
    )
    .unwrap();
    cmd()
        .args(["simulate", "--model"])
        .arg(&p)
        .args(["--precision", "0.1", "--format", "csv"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\nmix/read,"))
        .stdout(predicate::str::contains("\nmix/write,"));
}

#[test]
fn a_ceph_scenario_is_simulated_with_its_replica_fork_join() {
    let out = cmd()
        .args([
            "simulate",
            "--scenario",
            "models/examples/seed-000-ampere-altra-max.toml",
            "--precision",
            "0.05",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["classes"][0]["name"], "io");
    // 4k randwrite: every I/O takes the write branch.
    assert_eq!(v["labels"][0]["label"], "write");
    assert_eq!(
        v["labels"][0]["completions"],
        v["classes"][0]["completions"]
    );
    let names: Vec<&str> = v["stations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"data_device") && names.contains(&"osd_cluster_rx"));
    // --network and --scenario are different inputs.
    cmd()
        .args(["simulate", "--scenario", "x.toml", "--network", "y.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

#[test]
fn scenario_only_flags_without_a_scenario_are_refused_with_the_fix() {
    // A network file carries its own service times and batching; the Ceph service flags
    // would be silently ignored, so they are an error naming every flag given.
    cmd()
        .args([
            "simulate",
            "--network",
            "models/networks/batching.toml",
            "--batching",
            "dynamic",
            "--device-service",
            "deterministic",
        ])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("--device-service, --batching")
                .and(predicate::str::contains("add --scenario FILE")),
        );
}

/// Session 52's audit: `simulate` printed NaN for every figure and exited 0 when nothing
/// could be measured. A budget too small for one replication is an error with the fix,
/// as `predict --tails` has it; a time of 10³⁰⁰ s is refused when the model loads, the
/// number shown in exponent form; a class of no jobs shows "–" where it measured nothing.
#[test]
fn nothing_measured_is_an_error_not_nan() {
    cmd()
        .args(["simulate", "--model", MODEL, "--max-events", "10"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("NaN").not())
        .stderr(
            predicate::str::contains("no replication finished")
                .and(predicate::str::contains("raise --max-events")),
        );
    let text = std::fs::read_to_string(MODEL).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.toml");
    std::fs::write(
        &p,
        text.replacen("mean_secs = 0.00002", "mean_secs = 1e300", 1),
    )
    .unwrap();
    cmd()
        .args(["simulate", "--model"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mean_secs = 1e300 is invalid"));
    // A class of no jobs (the library runs the others) shows "–" where it measured
    // nothing, not NaN.
    assert!(text.contains("population = 8"), "the fixture changed");
    std::fs::write(&p, text.replacen("population = 8", "population = 0", 1)).unwrap();
    let out = cmd()
        .args(["simulate", "--model"])
        .arg(&p)
        .args(["--max-events", "200000"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("NaN"), "{stdout}");
}

/// A run stopped by its event budget says so and what it means (session 54's audit: only
/// "stop: MaxEvents" in the footer, beside a p99.9 interval that missed the long-run value);
/// fewer than two replications are refused with the minimum.
#[test]
fn a_run_short_of_its_precision_warns_and_too_few_replications_are_refused() {
    cmd()
        .args(["simulate", "--model", MODEL, "--max-events", "20000"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: the event budget ran out before the precision was reached",
        ));
    cmd()
        .args(["simulate", "--model", MODEL, "--replications", "0"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("at least 2"));
}

/// A network file given as a simulation model is pointed at `--network` (session 54's
/// audit: "is not valid TOML … missing field `stations`", for a valid TOML file).
#[test]
fn a_network_file_given_as_a_model_points_at_network() {
    cmd()
        .args(["simulate", "--model", "models/networks/two_class.toml"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cephplan simulate --network"));
}

/// An invalid simulation option is named by its flag, alone (session 54's audit: "--threads
/// 0" was reported as `samples_per_replication/max_events/threads`).
#[test]
fn an_invalid_option_is_named_by_its_flag() {
    for (flag, value) in [("--threads", "0"), ("--max-events", "0")] {
        cmd()
            .args(["simulate", "--model", MODEL, flag, value])
            .assert()
            .failure()
            .stderr(
                predicate::str::contains(format!("({flag}) = 0 is invalid"))
                    .and(predicate::str::contains("samples_per_replication").not()),
            );
    }
}
