//! `cephplan sweep`: vary one axis of a scenario, print the curve and the knee under a
//! latency target — by MVA mean latency, or with `--percentile` by a simulated percentile
//! (every point simulated with the same seed; progress bar per point, Ctrl-C stops with
//! the points done).

use clap::Args;

use super::output::{table, Format};
use super::predict::{ms, rate, thousands, Inputs, TailArgs};
use super::progress::BarProgress;
use cephplan::predict::{sweep, SweepAxis, SweepReport, SweepSpec, TailFigures};
use cephplan::progress::NoProgress;
use cephplan::sim::Estimate;
use cephplan::units::{parse_latency_target_secs, Bytes};

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Axis and values: iodepth|images|jobs|nodes|devices_per_node|clients|block_size=V1,V2,...
    #[arg(long)]
    pub vary: String,
    /// Report the knee: the highest IOPS with mean latency (or the --percentile) at most
    /// this (e.g. 4ms).
    #[arg(long)]
    pub latency_target: Option<String>,
    /// Simulate every point and take the knee by this latency percentile: 50, 95, 99 or
    /// 99.9 (without it, the MVA mean latency).
    #[arg(long, allow_negative_numbers = true)]
    pub percentile: Option<f64>,
    #[command(flatten)]
    pub sim: TailArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: SweepArgs) -> anyhow::Result<()> {
    let target = a
        .latency_target
        .as_deref()
        .map(parse_latency_target_secs)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--latency-target: {e}"))?;
    let mut spec = SweepSpec::parse_vary(&a.vary, target)?;
    let (scn, model) = a.inputs.load()?;
    let r = match a.percentile {
        Some(q) => {
            spec = spec.with_tails(q, a.sim.options()?)?;
            sweep(&scn, &model, &spec, &BarProgress::with_ctrl_c())?
        }
        None if a.sim.given() => anyhow::bail!(
            "--seed, --precision, --max-events and --device-service set up the simulation; add --percentile 99"
        ),
        None => sweep(&scn, &model, &spec, &NoProgress)?,
    };
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        Format::Csv => print!("{}", csv_report(&r)?),
        Format::Table => print!("{}", table_report(&r)),
    }
    if r.points.is_empty() {
        anyhow::bail!(
            "--vary {:?}: none of its {} point(s) could be predicted (the reasons are listed as skipped); give values the scenario accepts",
            a.vary,
            r.skipped.len()
        );
    }
    Ok(())
}

fn value_text(axis: SweepAxis, v: u64) -> String {
    match axis {
        SweepAxis::BlockSize => Bytes(v).to_string(),
        _ => v.to_string(),
    }
}

fn table_report(r: &SweepReport) -> String {
    let mut o = format!(
        "scenario {} — model {} — varying {}\n\n",
        r.scenario,
        r.model.name,
        r.axis.key()
    );
    let percentile = r
        .knee
        .as_ref()
        .and_then(|k| k.percentile)
        .or_else(|| r.points.iter().any(|p| p.tails.is_some()).then_some(99.0));
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            let mut row = vec![
                value_text(r.axis, p.value),
                thousands(f64::from(p.in_flight)),
                thousands(p.iops),
                rate(p.bandwidth_bytes_per_sec),
                ms(p.latency_mean_secs),
                p.latency_read_mean_secs
                    .map(ms)
                    .unwrap_or_else(|| "-".into()),
                p.latency_write_mean_secs
                    .map(ms)
                    .unwrap_or_else(|| "-".into()),
                format!(
                    "{} {:.0}%",
                    p.bottleneck.resource,
                    p.bottleneck.utilization * 100.0
                ),
            ];
            if let (Some(q), Some(t)) = (percentile, &p.tails) {
                row.push(thousands(t.all.iops.mean));
                row.push(ms(t.all.latency_mean_secs.mean));
                row.push(
                    t.all
                        .quantile(q / 100.0)
                        .map(|e| ms(e.mean))
                        .unwrap_or_default(),
                );
            }
            row
        })
        .collect();
    let sim_p = percentile.map(|q| format!("sim p{q}"));
    let mut header = vec![
        r.axis.key(),
        "in flight",
        "IOPS",
        "bandwidth",
        "mean lat",
        "read lat",
        "write lat",
        "bottleneck",
    ];
    if let Some(p) = &sim_p {
        header.extend(["sim IOPS", "sim mean", p.as_str()]);
    }
    o.push_str(&table(&header, &rows));
    for s in &r.skipped {
        o.push_str(&format!(
            "skipped {}={}: {}\n",
            r.axis.key(),
            value_text(r.axis, s.value),
            s.reason
        ));
    }
    if let Some(k) = &r.knee {
        match (k.value, k.iops, k.latency_mean_secs) {
            (Some(v), Some(iops), Some(l)) => o.push_str(&format!(
                "\nknee ≤ {}{}: {}={} → {} IOPS at {} mean{}\n",
                ms(k.latency_target_secs),
                k.percentile
                    .map(|q| format!(" at simulated p{q}"))
                    .unwrap_or_default(),
                r.axis.key(),
                value_text(r.axis, v),
                thousands(iops),
                ms(l),
                k.latency_percentile_secs
                    .map(|p| format!(", p{} {}", k.percentile.unwrap_or(99.0), ms(p)))
                    .unwrap_or_default()
            )),
            _ => o.push_str(&format!("\nknee: {}\n", k.note)),
        }
    }
    if !r.complete {
        o.push_str("sweep cancelled: the table is partial\n");
    }
    for w in &r.warnings {
        o.push_str(&format!("warning: {w}\n"));
    }
    o
}

fn csv_report(r: &SweepReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    w.write_record([
        r.axis.key(),
        "in_flight",
        "iops",
        "read_iops",
        "write_iops",
        "bandwidth_bytes_per_sec",
        "latency_mean_secs",
        "latency_read_mean_secs",
        "latency_write_mean_secs",
        "bottleneck",
        "bottleneck_utilization",
        "max_iops",
        "sim_iops",
        "sim_latency_mean_secs",
        "sim_latency_p50_secs",
        "sim_latency_p95_secs",
        "sim_latency_p99_secs",
        "sim_latency_p999_secs",
    ])?;
    for p in &r.points {
        let sim = |f: &dyn Fn(&TailFigures) -> Estimate| {
            p.tails
                .as_ref()
                .map(|t| f(&t.all).mean.to_string())
                .unwrap_or_default()
        };
        w.write_record([
            p.value.to_string(),
            p.in_flight.to_string(),
            p.iops.to_string(),
            p.read_iops.to_string(),
            p.write_iops.to_string(),
            p.bandwidth_bytes_per_sec.to_string(),
            p.latency_mean_secs.to_string(),
            opt(p.latency_read_mean_secs),
            opt(p.latency_write_mean_secs),
            p.bottleneck.resource.clone(),
            p.bottleneck.utilization.to_string(),
            p.max_iops.to_string(),
            sim(&|t| t.iops),
            sim(&|t| t.latency_mean_secs),
            sim(&|t| t.latency_p50_secs),
            sim(&|t| t.latency_p95_secs),
            sim(&|t| t.latency_p99_secs),
            sim(&|t| t.latency_p999_secs),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
