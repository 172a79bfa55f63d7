//! `cephplan evaluate`: the model's transfer error (leave-one-system-out, scale series,
//! interval coverage, baselines) over measured runs; prints the library's
//! [`EvaluationReport`] as tables, JSON, CSV or the README's Markdown tables.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::calibrate::{load_inputs, DataArgs, FitInputArgs, FitInputs};
use super::output::table;
use super::progress::BarProgress;
use cephplan::evaluate::spread::{
    compare, comparison_heading, comparison_rows, range_text, read_report, system_change_rows,
    TransferComparison, CHANGE_HEADER, SYSTEM_CHANGE_HEADER,
};
use cephplan::evaluate::{
    evaluate, EvaluateOptions, EvaluationReport, FoldFit, ParameterSpread, SplitKind,
    SystemEvaluation,
};
use cephplan::predict::format::thousands;

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// The runs, the prior every split is fitted from, and the catalogue.
    #[command(flatten)]
    pub sources: DataArgs,
    /// Skip the scale-series splits (faster).
    #[arg(long)]
    pub no_scale: bool,
    /// table: per-system and overall figures, and the fitted parameters' range over the
    /// folds; json: the whole report (a contract: keys systems, classes, loso, scale,
    /// coverage, baselines, figures, folds, parameter_spread); csv: one row per held-out
    /// figure; md: the per-system and by-kind tables as Markdown (the README's).
    #[arg(long, value_enum, default_value_t = EvaluateFormat::Table)]
    pub format: EvaluateFormat,
    /// An earlier `evaluate --format json` report on the same runs: also print how each
    /// leave-one-system-out figure changed against it, with the 95 % range of the change
    /// when the systems are drawn again (is a model change better than which systems
    /// happen to be measured?). JSON: the report gains a key `against`.
    #[arg(long, value_name = "FILE")]
    pub against: Option<std::path::PathBuf>,
}

/// Output formats of `evaluate`: the shared three and the README's Markdown tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum EvaluateFormat {
    /// Human-readable aligned tables.
    #[default]
    Table,
    /// JSON document (stable keys; a contract for other tools).
    Json,
    /// CSV rows with a header, one per held-out figure.
    Csv,
    /// Markdown tables: per system with the overall rows, then by kind of run.
    Md,
}

pub fn run(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    if args.against.is_some() && args.format == EvaluateFormat::Csv {
        anyhow::bail!(
            "--against prints a comparison, which the per-figure CSV has no place for; use --format table, json or md"
        );
    }
    // Read the earlier report before the minutes of evaluation, so a bad file fails first.
    let before = args.against.as_deref().map(read_report).transpose()?;
    let FitInputs {
        prepared,
        not_modelled,
        prior,
        ..
    } = load_inputs(&FitInputArgs {
        sources: args.sources.clone(),
        start: None,
    })?;
    let opts = EvaluateOptions {
        scale: !args.no_scale,
        ..EvaluateOptions::default()
    };
    let bar = BarProgress::with_ctrl_c();
    let report = evaluate(&prepared, not_modelled, &prior, &opts, &bar);
    let against = match (&before, &args.against, report.cancelled) {
        (Some(b), Some(path), false) => Some(
            compare(b, &report)
                .map_err(|e| anyhow::anyhow!("cannot compare with {}: {e}", path.display()))?,
        ),
        _ => None,
    };
    match args.format {
        EvaluateFormat::Json => {
            let mut v = serde_json::to_value(&report)?;
            if let (Some(c), Some(map)) = (&against, v.as_object_mut()) {
                map.insert("against".into(), serde_json::to_value(c)?);
            }
            println!("{}", serde_json::to_string_pretty(&v)?)
        }
        EvaluateFormat::Csv => print!("{}", csv_rows(&report)?),
        EvaluateFormat::Table => {
            print!("{}", render(&report));
            if let Some(c) = &against {
                print!("\n{}", render_comparison(c));
            }
        }
        EvaluateFormat::Md => {
            print!("{}", markdown(&report));
            if let Some(c) = &against {
                print!("\n{}", markdown_comparison(c));
            }
        }
    }
    if report.cancelled {
        if let Some(path) = &args.against {
            eprintln!(
                "the comparison with {} is left out: a cancelled evaluation covers only some systems",
                path.display()
            );
        }
        eprintln!("cancelled: the figures cover the splits finished before Ctrl-C");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

fn p(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

fn signed(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.1}"))
}

/// One system's figures as table cells: id, runs, IOPS MAPE, median, bias, latency MAPE,
/// scale-series MAPE, inside 80 %, inside 95 %, per-core rule, disk rule.
fn system_cells(s: &SystemEvaluation) -> Vec<String> {
    vec![
        s.system_id.clone(),
        s.runs.to_string(),
        p(s.iops_mape),
        p(s.iops_median),
        signed(s.iops_bias),
        p(s.latency_mape),
        p(s.scale_iops_mape),
        p(s.coverage_p80),
        p(s.coverage_p95),
        p(s.core_rule_iops_mape),
        p(s.disk_rule_iops_mape),
    ]
}

/// The tables: per system, then overall, baselines and coverage.
pub fn render(r: &EvaluationReport) -> String {
    let rows: Vec<Vec<String>> = r.systems.iter().map(system_cells).collect();
    let mut out = String::from(
        "Leave-one-system-out: each system predicted by the prior fitted to all the others (errors in %)\n",
    );
    out += &table(
        &[
            "system",
            "runs",
            "IOPS MAPE",
            "median",
            "bias",
            "latency MAPE",
            "scale MAPE",
            "in 80 %",
            "in 95 %",
            "core rule",
            "disk rule",
        ],
        &rows,
    );
    let l = &r.loso;
    let s = &r.scale;
    out += &format!(
        "\nall {} systems, each weighing the same ({} runs): IOPS/bandwidth MAPE {} %, median {} %, bias {} %; mean latency MAPE {} %, median {} %\nevery run weighing the same: IOPS/bandwidth MAPE {} %, median {} %; mean latency MAPE {} % ({} runs also measured p99: not evaluated, p99 needs the simulator)\n",
        l.systems,
        l.runs,
        p(l.iops_mape),
        p(l.iops_median),
        signed(l.iops_bias),
        p(l.latency_mape),
        p(l.latency_median),
        p(l.iops_mape_runs),
        p(l.iops_median_runs),
        p(l.latency_mape_runs),
        l.p99_measured
    );
    match range_text(l.iops_mape_range95, l.latency_mape_range95) {
        Some(line) => out += &format!("{line}\n"),
        None => {
            out += &format!(
                "no 95 % range with the systems drawn again: it needs {} systems or more\n",
                cephplan::evaluate::spread::MIN_SYSTEMS_FOR_RANGE
            )
        }
    }
    if let Some(line) = cephplan::evaluate::level_text(l) {
        out += &format!("{line}\n");
    }
    out += &format!(
        "scale series ({} runs at larger sizes, fitted on the smallest size plus the other systems): IOPS MAPE {} %, median {} %\n",
        s.runs,
        p(s.iops_mape),
        p(s.iops_median)
    );
    out += "\nleave-one-system-out by kind of run (a run may be of several kinds; systems weighing the same):\n";
    let crow: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            let e = &c.errors;
            vec![
                c.label.clone(),
                e.runs.to_string(),
                e.systems.to_string(),
                p(e.iops_mape),
                p(e.iops_median),
                signed(e.iops_bias),
                p(e.latency_mape),
                format!("{} / {}", p(c.coverage_p80), p(c.coverage_p95)),
            ]
        })
        .collect();
    out += &table(
        &[
            "runs of kind",
            "runs",
            "systems",
            "IOPS MAPE",
            "median",
            "bias",
            "latency MAPE",
            "inside 80 / 95 %",
        ],
        &crow,
    );
    let c = &r.coverage;
    let sigma = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let iodepth1 = match (c.iodepth1_throughput_ln_sigma, c.iodepth1_latency_ln_sigma) {
        (None, None) => String::new(),
        (t, l) => format!(
            "; runs at iodepth 1 apart: throughput {}, latency {}",
            sigma(t),
            sigma(l)
        ),
    };
    out += &format!(
        "interval coverage over {} held-out figures, systems weighted equally: {} % inside the 80 % interval, {} % inside the 95 % interval (every figure weighing the same: {} % / {} %; transfer discrepancy σ_ln: throughput {}, latency {}{iodepth1})\n",
        c.figures,
        p(c.p80),
        p(c.p95),
        p(c.p80_figures),
        p(c.p95_figures),
        sigma(c.throughput_ln_sigma),
        sigma(c.latency_ln_sigma),
    );
    out += "\nbaselines on the same runs (IOPS errors in %):\n";
    let b = &r.baselines;
    let brow = |name: &str, x: &cephplan::evaluate::BaselineSummary| {
        vec![
            name.to_string(),
            x.runs.to_string(),
            p(x.iops_mape),
            p(x.iops_median),
            p(x.cephplan_iops_mape),
            p(x.cephplan_iops_median),
            x.note.clone(),
        ]
    };
    out += &table(
        &[
            "baseline",
            "runs",
            "MAPE",
            "median",
            "cephplan MAPE",
            "cephplan median",
            "what",
        ],
        &[
            brow("per-core rule", &b.core_rule),
            brow("disk rule", &b.disk_rule),
            brow("USL per series", &b.usl),
        ],
    );
    out += &parameter_table(r);
    for w in &r.warnings {
        out += &format!("warning: {w}\n");
    }
    for n in &r.not_modelled {
        out += &format!(
            "not evaluated: {} ({}): {}\n",
            n.run_id, n.system_id, n.reason
        );
    }
    out
}

/// Each fitted parameter's range over the leave-one-system-out folds, with the system whose
/// leaving out gave each extreme, and the folds whose fit did not converge.
fn parameter_table(r: &EvaluationReport) -> String {
    if r.parameter_spread.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = r
        .parameter_spread
        .iter()
        .map(|q| q.cells().to_vec())
        .collect();
    let mut out = String::from(
        "\nfitted parameters over the leave-one-system-out folds (what holding one system out moves; a wide max/min is decided by which system is left out):\n",
    );
    out += &table(&ParameterSpread::HEADER, &rows);
    for note in r.folds.iter().filter_map(FoldFit::non_convergence_note) {
        out += &format!("note: {note}\n");
    }
    out
}

/// The per-system table (with the overall and run-weighted rows) and the by-kind table as
/// Markdown, the columns the README's status section shows.
pub fn markdown(r: &EvaluationReport) -> String {
    let mut out = String::from(
        "| system | runs | IOPS MAPE | median | bias | mean-latency MAPE | scale-series MAPE | inside 80 % / 95 % | per-core rule MAPE |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in &r.systems {
        // The text table's cells, the two coverages in one column and no disk rule.
        let c = system_cells(s);
        out += &format!(
            "| {} | {} / {} | {} |\n",
            c[..7].join(" | "),
            c[7],
            c[8],
            c[9]
        );
    }
    let (l, sc, c, rule) = (&r.loso, &r.scale, &r.coverage, &r.baselines.core_rule);
    let rule_figure = match (rule.iops_mape, rule.iops_median) {
        (Some(m), Some(med)) => format!("{} (median {med:.1})", thousands(m)),
        (m, _) => p(m),
    };
    // Without scale series (`--no-scale`, or no system measured at several sizes): "-".
    let scale_figure = match sc.iops_mape {
        Some(m) => format!("**{m:.1}** ({} systems)", sc.systems),
        None => "-".into(),
    };
    out += &format!(
        "| **all {} systems** | {} | **{}** | **{}** | {} | **{}** | {scale_figure} | **{} / {}** | {} |\n",
        l.systems,
        thousands(l.runs as f64),
        p(l.iops_mape),
        p(l.iops_median),
        signed(l.iops_bias),
        p(l.latency_mape),
        p(c.p80),
        p(c.p95),
        rule_figure,
    );
    out += &format!(
        "| every run weighing the same | | {} | {} | | {} | | | |\n",
        p(l.iops_mape_runs),
        p(l.iops_median_runs),
        p(l.latency_mape_runs),
    );
    if let Some(line) = range_text(l.iops_mape_range95, l.latency_mape_range95) {
        out += &format!("\n{line} (all systems).\n");
    }
    if let Some(line) = cephplan::evaluate::level_text(l) {
        out += &format!("\n{line}.\n");
    }
    out += "\n| runs of kind | runs | systems | IOPS MAPE | median | bias | mean-latency MAPE | inside 80 % / 95 % |\n|---|---|---|---|---|---|---|---|\n";
    for k in &r.classes {
        let e = &k.errors;
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} / {} |\n",
            k.label,
            e.runs,
            e.systems,
            p(e.iops_mape),
            p(e.iops_median),
            signed(e.iops_bias),
            p(e.latency_mape),
            p(k.coverage_p80),
            p(k.coverage_p95),
        );
    }
    out
}

/// The comparison with an earlier evaluation as text tables.
pub fn render_comparison(c: &TransferComparison) -> String {
    let mut out = format!("{}\n", comparison_heading(c));
    out += &table(&CHANGE_HEADER, &comparison_rows(c));
    out += "\n";
    out += &table(&SYSTEM_CHANGE_HEADER, &system_change_rows(c));
    out
}

/// The comparison as Markdown tables (for a commit message or a closing note).
pub fn markdown_comparison(c: &TransferComparison) -> String {
    let md = |header: &[&str], rows: Vec<Vec<String>>| {
        let mut s = format!(
            "| {} |\n|{}\n",
            header.join(" | "),
            "---|".repeat(header.len())
        );
        for r in rows {
            s += &format!("| {} |\n", r.join(" | "));
        }
        s
    };
    format!(
        "Against the earlier evaluation ({} held-out figures; 95 % ranges over {} draws of the systems, seed {}):\n\n{}\n{}",
        c.figures,
        c.resamples,
        c.seed,
        md(&CHANGE_HEADER, comparison_rows(c)),
        md(&SYSTEM_CHANGE_HEADER, system_change_rows(c))
    )
}

/// One CSV row per held-out figure.
fn csv_rows(r: &EvaluationReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "split",
        "system_id",
        "run_id",
        "metric",
        "measured",
        "predicted",
        "error_pct",
        "low_80",
        "high_80",
        "low_95",
        "high_95",
        "core_rule",
        "disk_rule",
        "classes",
    ])?;
    let o = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    for h in &r.figures {
        w.write_record([
            match h.kind {
                SplitKind::LeaveOneSystemOut => "loso".to_string(),
                SplitKind::Scale => "scale".to_string(),
            },
            h.system_id.clone(),
            h.run_id.clone(),
            serde_json::to_value(h.metric)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            format!("{}", h.measured),
            format!("{}", h.predicted),
            format!("{:.3}", h.error_pct),
            o(h.interval_80.map(|i| i.0)),
            o(h.interval_80.map(|i| i.1)),
            o(h.interval_95.map(|i| i.0)),
            o(h.interval_95.map(|i| i.1)),
            o(h.core_rule),
            o(h.disk_rule),
            h.classes
                .iter()
                .map(|c| {
                    serde_json::to_value(c).map(|v| v.as_str().unwrap_or_default().to_string())
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(";"),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
