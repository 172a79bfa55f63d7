//! `cephplan sweep`: vary one axis of a scenario, print the curve and the knee under a
//! latency target.

use clap::Args;

use super::output::{table, Format};
use super::predict::{ms, rate, thousands, Inputs};
use cephplan::predict::{sweep, SweepAxis, SweepReport, SweepSpec};
use cephplan::progress::NoProgress;
use cephplan::units::{parse_duration_secs, Bytes};

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Axis and values: iodepth|images|jobs|nodes|devices_per_node|clients|block_size=V1,V2,...
    #[arg(long)]
    pub vary: String,
    /// Report the knee: the highest IOPS with mean latency at most this (e.g. 4ms).
    #[arg(long)]
    pub latency_target: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: SweepArgs) -> anyhow::Result<()> {
    let target = a
        .latency_target
        .as_deref()
        .map(parse_duration_secs)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--latency-target: {e}"))?;
    let spec = SweepSpec::parse_vary(&a.vary, target)?;
    let (scn, model) = a.inputs.load()?;
    let r = sweep(&scn, &model, &spec, &NoProgress)?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        Format::Csv => print!("{}", csv_report(&r)?),
        Format::Table => print!("{}", table_report(&r)),
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
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            vec![
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
            ]
        })
        .collect();
    o.push_str(&table(
        &[
            r.axis.key(),
            "in flight",
            "IOPS",
            "bandwidth",
            "mean lat",
            "read lat",
            "write lat",
            "bottleneck",
        ],
        &rows,
    ));
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
                "\nknee ≤ {}: {}={} → {} IOPS at {} mean\n",
                ms(k.latency_target_secs),
                r.axis.key(),
                value_text(r.axis, v),
                thousands(iops),
                ms(l)
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
    ])?;
    for p in &r.points {
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
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
