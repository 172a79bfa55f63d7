//! Property-based robustness of every input format's library entry point (issue 17): valid
//! inputs shipped with cephplan (scenarios in models/examples/, networks in models/networks/,
//! the model files, calibration-data/ rows, the real fio JSON in tests/fixtures/fio/) are
//! mutated — truncated, lines deleted or repeated, values removed or replaced by wrong
//! types, extremes, unicode, huge numbers — and each entry point must answer with a finite
//! result or an error that names the file it was given. A panic, an abort or a NaN is a
//! failure.
//!
//! Cases: 5,500 in a normal run (1,500 scenarios, 1,000 of each other format), from fixed
//! seeds, so a run is repeatable. `CEPHPLAN_PROPTEST_CASES=N` runs N cases per format
//! instead (e.g. 100000 before a release).
//!
//! Predictions and solutions are computed for inputs that parse, up to 20,000 jobs in
//! flight: larger populations are valid but take seconds each in a debug build (their
//! limits have their own tests in `qn::file` and `spec`).

use std::path::Path;

use cephplan::data::parse_csv;
use cephplan::fio::{parse_fio_output, EngineCheck};
use cephplan::model::ModelParams;
use cephplan::predict::{predict, PredictOptions};
use cephplan::qn::file::parse_network;
use cephplan::solve::{solve, SolveOptions};
use cephplan::spec::{parse_scenario, Catalogue};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const SCENARIOS: &[&str] = &[
    include_str!("../models/examples/seed-000-ampere-altra-max.toml"),
    include_str!("../models/examples/seed-000-ampere-altra-max-randread.toml"),
    include_str!("../models/examples/seed-001-xeon-8180-optane.toml"),
    include_str!("../models/examples/seed-001-xeon-8180-optane-randwrite.toml"),
    include_str!("../models/examples/seed-002-epyc-7402.toml"),
    include_str!("../models/examples/seed-004-journal-ssd.toml"),
    include_str!("fixtures/small-3x2.toml"),
    include_str!("fixtures/seed-000.toml"),
];

const NETWORKS: &[&str] = &[
    include_str!("../models/networks/batching.toml"),
    include_str!("../models/networks/multiserver.toml"),
    include_str!("../models/networks/two_class.toml"),
];

const MODELS: &[&str] = &[
    include_str!("../models/default.toml"),
    include_str!("../models/prior.toml"),
];

/// (file name inside calibration-data/, text): the rows' `scenario` paths resolve from there.
const DATASETS: &[(&str, &str)] = &[
    (
        "seed-000-ampere-altra-max.csv",
        include_str!("../calibration-data/seed-000-ampere-altra-max.csv"),
    ),
    (
        "seed-002-epyc-7402-releases.csv",
        include_str!("../calibration-data/seed-002-epyc-7402-releases.csv"),
    ),
    (
        "seed-003-arm-vs-x86-ratios.csv",
        include_str!("../calibration-data/seed-003-arm-vs-x86-ratios.csv"),
    ),
    (
        "public-mclock-qos.csv",
        include_str!("../calibration-data/public-mclock-qos.csv"),
    ),
];

const FIO: &[&str] = &[
    include_str!("fixtures/fio/single-randwrite.json"),
    include_str!("fixtures/fio/single-randrw70.json"),
    include_str!("fixtures/fio/multi-randwrite.json"),
    include_str!("fixtures/fio/clientserver-one.json"),
    include_str!("fixtures/fio/clientserver-randwrite.json"),
    include_str!("fixtures/fio/job-error-enospc.json"),
    include_str!("fixtures/fio/other-engine-psync.json"),
];

/// The largest population predicted or solved here (see the module doc).
const MAX_SOLVED_POPULATION: u64 = 20_000;

fn config(default_cases: u32, seed: u64) -> Config {
    let cases = std::env::var("CEPHPLAN_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        // A failing input is shown as generated; shrinking mutated text is slow and rarely
        // clearer.
        max_shrink_iters: 200,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------

/// Values that replace a TOML value: wrong types, extremes, unicode, unit typos.
fn toml_values() -> Vec<toml::Value> {
    use toml::Value as V;
    vec![
        V::Integer(0),
        V::Integer(-1),
        V::Integer(1),
        V::Integer(i64::MAX),
        V::Integer(i64::MIN),
        V::Integer(4_294_967_295),
        V::Integer(4_294_967_296),
        V::Integer(4_000_000_000),
        V::Float(f64::NAN),
        V::Float(f64::INFINITY),
        V::Float(f64::NEG_INFINITY),
        V::Float(1e308),
        V::Float(-1e308),
        V::Float(1e-300),
        V::Float(-0.0),
        V::Float(0.5),
        V::String(String::new()),
        V::String(" ".into()),
        V::String("ünï©ødé 🚀 \u{202e}".into()),
        V::String("8192P".into()),
        V::String("1e-300Gb/s".into()),
        V::String("4k".into()),
        V::String("-4k".into()),
        V::String("4 millis".into()),
        V::String("NaN".into()),
        V::String("x".repeat(300)),
        V::Boolean(true),
        V::Array(vec![]),
        V::Array(vec![V::Integer(1), V::String("a".into())]),
        V::Table(toml::Table::new()),
    ]
}

/// Values that replace a JSON value in fio output.
fn json_values() -> Vec<serde_json::Value> {
    use serde_json::json;
    vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1e308),
        json!(-1e308),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e-300),
        json!(""),
        json!("ünï©ødé 🚀"),
        json!("NaN"),
        json!("12345"),
        json!([]),
        json!([1, "a"]),
        json!({}),
    ]
}

/// One mutation; indices are taken modulo the size of what they index.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the text after this many thousandths of its length.
    Truncate(u16),
    DeleteLine(u16),
    RepeatLine(u16),
    /// Insert text at this many thousandths of the length.
    Insert(u16, String),
    /// Remove the n-th leaf of the parsed document.
    RemoveLeaf(u16),
    /// Replace the n-th leaf by the k-th value of the pool.
    ReplaceLeaf(u16, u16),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<u16>().prop_map(|f| Mutation::Truncate(f % 1001)),
        any::<u16>().prop_map(Mutation::DeleteLine),
        any::<u16>().prop_map(Mutation::RepeatLine),
        (any::<u16>(), "\\PC{0,6}|[\\[\\]{}=\",#\\n]{1,3}")
            .prop_map(|(f, s)| Mutation::Insert(f % 1001, s)),
        any::<u16>().prop_map(Mutation::RemoveLeaf),
        (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Mutation::ReplaceLeaf(a, b)),
        (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Mutation::ReplaceLeaf(a, b)),
    ]
}

fn char_boundary(text: &str, thousandths: u16) -> usize {
    let mut at = text.len() * usize::from(thousandths) / 1000;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Applies a text-level mutation; `None` for the structural ones.
fn mutate_text(text: &str, m: &Mutation) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let line = |i: u16| usize::from(i) % lines.len().max(1);
    match m {
        Mutation::Truncate(f) => Some(text[..char_boundary(text, *f)].to_string()),
        Mutation::DeleteLine(i) => {
            let k = line(*i);
            Some(
                lines
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .map(|(_, l)| *l)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        }
        Mutation::RepeatLine(i) => {
            let k = line(*i);
            let mut out: Vec<&str> = lines.clone();
            if let Some(l) = lines.get(k) {
                out.insert(k, l);
            }
            Some(out.join("\n"))
        }
        Mutation::Insert(f, s) => {
            let at = char_boundary(text, *f);
            Some(format!("{}{s}{}", &text[..at], &text[at..]))
        }
        Mutation::RemoveLeaf(_) | Mutation::ReplaceLeaf(..) => None,
    }
}

/// Paths (keys and indices) of every leaf of a TOML document.
fn toml_leaves(v: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        toml::Value::Table(t) if !t.is_empty() => {
            for (k, v) in t {
                path.push(k.clone());
                toml_leaves(v, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) if !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                path.push(i.to_string());
                toml_leaves(v, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn toml_at<'a>(v: &'a mut toml::Value, path: &[String]) -> Option<&'a mut toml::Value> {
    path.iter().try_fold(v, |v, k| match v {
        toml::Value::Table(t) => t.get_mut(k),
        toml::Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?),
        _ => None,
    })
}

/// A TOML text mutated once; structural mutations go through `toml` (so they change
/// values, not syntax).
fn mutate_toml(text: &str, m: &Mutation) -> String {
    if let Some(t) = mutate_text(text, m) {
        return t;
    }
    let Ok(mut doc) = text.parse::<toml::Table>().map(toml::Value::Table) else {
        return text.to_string();
    };
    let mut leaves = Vec::new();
    toml_leaves(&doc, &mut Vec::new(), &mut leaves);
    if leaves.is_empty() {
        return text.to_string();
    }
    match m {
        Mutation::RemoveLeaf(i) => {
            let path = &leaves[usize::from(*i) % leaves.len()];
            let Some((last, parent)) = path.split_last() else {
                return text.to_string();
            };
            match toml_at(&mut doc, parent) {
                Some(toml::Value::Table(t)) => {
                    t.remove(last);
                }
                Some(toml::Value::Array(a)) => {
                    if let Ok(k) = last.parse::<usize>() {
                        if k < a.len() {
                            a.remove(k);
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::ReplaceLeaf(i, k) => {
            let pool = toml_values();
            let path = &leaves[usize::from(*i) % leaves.len()];
            if let Some(v) = toml_at(&mut doc, path) {
                *v = pool[usize::from(*k) % pool.len()].clone();
            }
        }
        _ => unreachable!("text mutations are applied above"),
    }
    toml::to_string(&doc).unwrap_or_else(|_| text.to_string())
}

fn json_leaves(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        serde_json::Value::Object(o) if !o.is_empty() => {
            for (k, v) in o {
                path.push(k.clone());
                json_leaves(v, path, out);
                path.pop();
            }
        }
        serde_json::Value::Array(a) if !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                path.push(i.to_string());
                json_leaves(v, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn json_at<'a>(v: &'a mut serde_json::Value, path: &[String]) -> Option<&'a mut serde_json::Value> {
    path.iter().try_fold(v, |v, k| match v {
        serde_json::Value::Object(o) => o.get_mut(k),
        serde_json::Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?),
        _ => None,
    })
}

/// fio output mutated once. Structural mutations pick a leaf, or (every fourth index) a
/// whole object or array such as a job or its `read` section.
fn mutate_json(text: &str, m: &Mutation) -> String {
    if let Some(t) = mutate_text(text, m) {
        return t;
    }
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return text.to_string();
    };
    let mut leaves = Vec::new();
    json_leaves(&doc, &mut Vec::new(), &mut leaves);
    let (i, k) = match m {
        Mutation::RemoveLeaf(i) => (*i, None),
        Mutation::ReplaceLeaf(i, k) => (*i, Some(*k)),
        _ => unreachable!("text mutations are applied above"),
    };
    let mut path = leaves[usize::from(i) % leaves.len()].clone();
    if i % 4 == 0 && path.len() > 1 {
        path.truncate(1 + usize::from(i / 4) % (path.len() - 1));
    }
    match k {
        None => {
            let Some((last, parent)) = path.split_last() else {
                return text.to_string();
            };
            match json_at(&mut doc, parent) {
                Some(serde_json::Value::Object(o)) => {
                    o.remove(last);
                }
                Some(serde_json::Value::Array(a)) => {
                    if let Ok(n) = last.parse::<usize>() {
                        if n < a.len() {
                            a.remove(n);
                        }
                    }
                }
                _ => {}
            }
        }
        Some(k) => {
            let pool = json_values();
            if let Some(v) = json_at(&mut doc, &path) {
                *v = pool[usize::from(k) % pool.len()].clone();
            }
        }
    }
    serde_json::to_string_pretty(&doc).expect("a Value serialises")
}

/// A dataset text mutated once: text mutations, or a cell of a data row (or of the
/// header) replaced, or a column removed from every line.
fn mutate_csv(text: &str, m: &Mutation) -> String {
    if let Some(t) = mutate_text(text, m) {
        return t;
    }
    const CELLS: &[&str] = &[
        "",
        "-1",
        "0",
        "NaN",
        "inf",
        "1e308",
        "1e-300",
        "18446744073709551616",
        "4294967296",
        "8192P",
        "4 millis",
        "ünï©ødé 🚀",
        "\"a,b\"",
        "absolute",
        "ratio",
        "randrw",
        "../../../../etc/passwd",
        "/nonexistent.toml",
    ];
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let rows: Vec<usize> = (0..lines.len())
        .filter(|i| !lines[*i].starts_with('#'))
        .collect();
    if rows.is_empty() {
        return text.to_string();
    }
    match m {
        Mutation::ReplaceLeaf(i, k) => {
            let r = rows[usize::from(*i) % rows.len()];
            let mut cells = split_csv_line(&lines[r]);
            let c = usize::from(*i / 7) % cells.len().max(1);
            if let Some(cell) = cells.get_mut(c) {
                *cell = CELLS[usize::from(*k) % CELLS.len()].to_string();
            }
            lines[r] = cells.join(",");
        }
        Mutation::RemoveLeaf(i) => {
            let c = usize::from(*i) % split_csv_line(&lines[rows[0]]).len().max(1);
            for r in &rows {
                let mut cells = split_csv_line(&lines[*r]);
                if c < cells.len() {
                    cells.remove(c);
                }
                lines[*r] = cells.join(",");
            }
        }
        _ => unreachable!("text mutations are applied above"),
    }
    lines.join("\n") + "\n"
}

/// Splits a CSV line on commas outside double quotes, keeping the quotes.
fn split_csv_line(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                cells.last_mut().expect("one cell").push(ch);
            }
            ',' if !quoted => cells.push(String::new()),
            _ => cells.last_mut().expect("one cell").push(ch),
        }
    }
    cells
}

/// The first rows of a dataset (its comment lines and header, then `rows` data rows):
/// small inputs keep the cases fast.
fn head_rows(text: &str, rows: usize) -> String {
    let mut out = String::new();
    let mut data = 0;
    for l in text.lines() {
        let is_data = !l.starts_with('#') && !l.starts_with("run_id,");
        if is_data {
            if data == rows {
                break;
            }
            data += 1;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// With `CEPHPLAN_PROPTEST_DUMP` set, prints each generated input (to see a failing one).
fn dump(text: &str) {
    if std::env::var_os("CEPHPLAN_PROPTEST_DUMP").is_some() {
        eprintln!("----- input -----\n{text}\n-----------------");
    }
}

fn finite_nonneg(what: &str, v: f64) -> Result<(), TestCaseError> {
    prop_assert!(v.is_finite() && v >= 0.0, "{what} = {v}");
    Ok(())
}

fn check_prediction(s: &cephplan::spec::Scenario, m: &ModelParams) -> Result<(), TestCaseError> {
    if u64::from(s.population()) > MAX_SOLVED_POPULATION {
        return Ok(());
    }
    match predict(s, m, &PredictOptions::default()) {
        Ok(r) => {
            finite_nonneg("iops", r.iops)?;
            finite_nonneg("bandwidth", r.bandwidth_bytes_per_sec)?;
            prop_assert!(
                r.latency_mean_secs.is_finite() && r.latency_mean_secs > 0.0,
                "latency {}",
                r.latency_mean_secs
            );
            for (k, u) in &r.utilization {
                finite_nonneg(k, *u)?;
            }
            if let Some(i) = &r.interval {
                let v = serde_json::to_value(i).expect("an interval serialises");
                prop_assert!(!v.to_string().contains("null"), "interval {v}");
            }
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1500, 0x5ce7_a110))]

    /// Scenario files: `spec::parse_scenario`, then `predict` with the shipped model.
    #[test]
    fn mutated_scenarios_parse_and_predict_or_name_the_file(
        seed in 0..SCENARIOS.len(),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut text = SCENARIOS[seed].to_string();
        for m in &muts {
            text = mutate_toml(&text, m);
        }
        dump(&text);
        match parse_scenario(&text, "mutated.toml", &Catalogue::builtin()) {
            Ok(s) => check_prediction(&s, &ModelParams::shipped_default())?,
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("mutated.toml"), "{msg}");
                prop_assert!(msg.contains("fix"), "no remedy: {msg}");
                // A validation error names its field (a syntax error, such as a truncated
                // line, may have none to name).
                if matches!(*e.kind, cephplan::spec::SpecErrorKind::Invalid { .. }) {
                    prop_assert!(!e.field.is_empty(), "no field: {msg}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config(1000, 0x0e70_0001))]

    /// Network files: `qn::file::parse_network`, then `solve`.
    #[test]
    fn mutated_networks_parse_and_solve_or_name_the_file(
        seed in 0..NETWORKS.len(),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut text = NETWORKS[seed].to_string();
        for m in &muts {
            text = mutate_toml(&text, m);
        }
        dump(&text);
        match parse_network(&text, "mutated-net.toml") {
            Ok(net) => {
                let population: u64 = net.classes.iter().map(|c| u64::from(c.population)).sum();
                let lattice: u64 = net
                    .classes
                    .iter()
                    .map(|c| u64::from(c.population) + 1)
                    .product();
                if population <= MAX_SOLVED_POPULATION && lattice <= 1_000_000 {
                    if let Ok(sol) = solve(&net, &SolveOptions::default()) {
                        for c in &sol.classes {
                            finite_nonneg("throughput", c.throughput_per_sec)?;
                            finite_nonneg("response", c.response_time_secs)?;
                        }
                    }
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("mutated-net.toml"), "{msg}");
            }
        }
    }
}

proptest! {
    #![proptest_config(config(1000, 0x30de_1000))]

    /// Model files: `ModelParams::parse`, then `predict` of a small scenario with it.
    #[test]
    fn mutated_models_parse_and_predict_or_name_the_file(
        seed in 0..MODELS.len(),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut text = MODELS[seed].to_string();
        for m in &muts {
            text = mutate_toml(&text, m);
        }
        dump(&text);
        match ModelParams::parse(&text, "mutated-model.toml") {
            Ok(m) => {
                let s = parse_scenario(SCENARIOS[6], "small-3x2.toml", &Catalogue::builtin())
                    .expect("the fixture is valid");
                check_prediction(&s, &m)?;
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("mutated-model.toml"), "{msg}");
            }
        }
    }
}

proptest! {
    #![proptest_config(config(1000, 0xda7a_5e75))]

    /// Dataset CSV: `data::parse_csv` (rows validated, scenarios resolved and loaded).
    #[test]
    fn mutated_datasets_parse_or_name_the_file(
        seed in 0..DATASETS.len(),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let (name, full) = DATASETS[seed];
        let mut text = head_rows(full, 3);
        for m in &muts {
            text = mutate_csv(&text, m);
        }
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("calibration-data")
            .join(format!("mutated-{name}"));
        dump(&text);
        match parse_csv(&path, &text) {
            Ok((runs, _)) => {
                for r in runs {
                    let m = &r.measured;
                    for (what, v) in [
                        ("iops", m.iops),
                        ("bandwidth", m.bandwidth_bytes_per_sec),
                        ("latency_mean", m.latency_mean_secs),
                        ("latency_p99", m.latency_p99_secs),
                    ] {
                        if let Some(v) = v {
                            finite_nonneg(what, v)?;
                        }
                    }
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains(&format!("mutated-{name}")), "{msg}");
            }
        }
    }
}

proptest! {
    #![proptest_config(config(1000, 0xf10_0000))]

    /// fio JSON: `fio::parse_fio_output`, then the summary a dataset row is made from.
    #[test]
    fn mutated_fio_output_parses_or_names_the_file(
        seed in 0..FIO.len(),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut text = FIO[seed].to_string();
        for m in &muts {
            text = mutate_json(&text, m);
        }
        dump(&text);
        match parse_fio_output(&text, Path::new("mutated.json"), EngineCheck::Any) {
            Ok(out) => {
                let s = out.summary();
                finite_nonneg("total_iops", s.total_iops)?;
                finite_nonneg("total_bytes_per_sec", s.total_bytes_per_sec)?;
                finite_nonneg("latency_mean_secs", s.latency_mean_secs)?;
                if let Some(p) = s.latency_p99_secs {
                    finite_nonneg("latency_p99_secs", p)?;
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("mutated.json"), "{msg}");
            }
        }
    }
}
