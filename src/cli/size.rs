//! `cephplan size`: the smallest OSD node count reaching an IOPS target within a latency
//! target, for the scenario's hardware and workload shape.

use clap::Args;

use super::output::{table, Format};
use super::predict::{ms, size as bytes, thousands, Inputs};
use cephplan::predict::{size, SizingReport, SizingSpec};
use cephplan::units::parse_latency_target_secs;

#[derive(Debug, Args)]
pub struct SizeArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// IOPS the cluster must deliver.
    #[arg(long, allow_negative_numbers = true)]
    pub iops: f64,
    /// Mean latency limit, e.g. 4ms.
    #[arg(long, allow_hyphen_values = true)]
    pub latency_target: String,
    /// Largest node count to try.
    #[arg(long, allow_negative_numbers = true, default_value_t = 64)]
    pub max_nodes: u32,
    /// The most I/Os in flight the clients may keep (the same clients with deeper queues);
    /// default: the scenario's images × jobs × iodepth. By Little's law N I/Os in flight
    /// deliver X IOPS only at a mean latency of N / X, so an in-flight count below
    /// IOPS × latency target makes the search size for a stricter latency (the report
    /// says so).
    #[arg(long, allow_negative_numbers = true)]
    pub max_in_flight: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: SizeArgs) -> anyhow::Result<bool> {
    let latency = parse_latency_target_secs(&a.latency_target)
        .map_err(|e| anyhow::anyhow!("--latency-target: {e}"))?;
    let (scn, model) = a.inputs.load()?;
    let spec = SizingSpec {
        iops_target: a.iops,
        latency_target_secs: latency,
        max_nodes: a.max_nodes,
        max_in_flight: a.max_in_flight,
    };
    // Ctrl-C stops the search after the node count being solved (the report says so).
    let progress = super::progress::BarProgress::with_ctrl_c();
    let r = size(&scn, &model, &spec, &progress)?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        Format::Csv => print!("{}", csv_report(&r)?),
        Format::Table => print!("{}", table_report(&r)),
    }
    Ok(r.nodes.is_some())
}

fn table_report(r: &SizingReport) -> String {
    let (header, rows) = cephplan::predict::sizing_table(r);
    let mut o = format!(
        "scenario {} — target {} IOPS at ≤ {} mean latency\n\n",
        r.scenario,
        thousands(r.iops_target),
        ms(r.latency_target_secs)
    );
    o.push_str(&table(&header, &rows));
    o.push('\n');
    o.push_str(&r.note);
    o.push('\n');
    for (i, k) in r.held_out_by_kind.iter().enumerate() {
        o.push_str(&format!(
            "{:<10}{}\n",
            if i == 0 { "held out" } else { "" },
            cephplan::predict::format::held_out_kind(k)
        ));
    }
    if let (Some(raw), Some(usable)) = (r.raw_bytes, r.usable_bytes) {
        o.push_str(&format!(
            "capacity: raw {}, usable {}\n",
            bytes(raw),
            bytes(usable)
        ));
    }
    o
}

fn csv_report(r: &SizingReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "nodes",
        "best_iops",
        "in_flight",
        "latency_mean_secs",
        "meets_target",
        "skipped",
        "degraded_best_iops",
        "degraded_in_flight",
        "degraded_latency_mean_secs",
        "degraded_error",
    ])?;
    for s in &r.steps {
        let d = s.degraded.as_ref();
        let dn = |f: &dyn Fn(&cephplan::predict::DegradedStep) -> String| {
            d.filter(|d| d.error.is_none()).map(f).unwrap_or_default()
        };
        w.write_record([
            s.nodes.to_string(),
            s.best_iops.to_string(),
            s.in_flight.to_string(),
            s.latency_mean_secs.to_string(),
            s.meets_target.to_string(),
            s.skipped.clone().unwrap_or_default(),
            dn(&|d| d.best_iops.to_string()),
            dn(&|d| d.in_flight.to_string()),
            dn(&|d| d.latency_mean_secs.to_string()),
            d.and_then(|d| d.error.clone()).unwrap_or_default(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
