//! The tables of a design report as text cells: what `cephplan design` prints (aligned or
//! as Markdown) and what the app's Sizing page shows, from one place so that both state
//! the same figures in the same words — the designs, the prediction per workload and
//! state with its range and headroom, the held-out records that apply, recovery, the
//! bill of materials, and why the candidates ranked just before the first design fail.
//!
//! Not here: the search ([`super::design`]), the CSV and JSON forms (the CLI's).

use super::{format_value, CheckAt, Design, DesignReport, Failure, Headroom};
use crate::predict::format::{bytes, held_out_kind, ms, rate, thousands};

/// One titled table: a header and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportTable {
    pub title: String,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// The report's tables in the order `cephplan design` prints them; only those with
/// something to say (the designs' tables when a design was found, the failures when a
/// cheaper candidate failed).
pub fn report_tables(r: &DesignReport) -> Vec<ReportTable> {
    let mut out = Vec::new();
    if !r.designs.is_empty() {
        out.push(designs_table(r));
        out.push(workloads_table(r));
        let held = super::held_out_records(r);
        if !held.is_empty() {
            out.push(ReportTable {
                title: "held out: how far runs of these kinds were off on systems the model was not fitted to".into(),
                header: vec!["leave-one-system-out record", "applies to"],
                rows: held
                    .iter()
                    .map(|(k, to)| vec![held_out_kind(k), to.join(", ")])
                    .collect(),
            });
        }
        let recovery: Vec<Vec<String>> = r
            .designs
            .iter()
            .filter_map(|d| {
                d.recovery.as_ref().map(|x| {
                    vec![
                        d.id.clone(),
                        bytes(x.bytes_to_move),
                        rate(x.rate_bytes_per_sec),
                        x.limited_by.clone(),
                        format!("{:.2} h", x.time_secs / 3600.0),
                    ]
                })
            })
            .collect();
        if !recovery.is_empty() {
            out.push(ReportTable {
                title: "recovery (a lower bound: see predict::degraded)".into(),
                header: vec!["id", "to move", "rate", "limited by", "time ≥"],
                rows: recovery,
            });
        }
        out.push(ReportTable {
            title: "bill of materials".into(),
            header: vec!["id", "part", "count", "unit price", "unit power"],
            rows: r
                .designs
                .iter()
                .flat_map(|d| {
                    d.bom.iter().map(|b| {
                        vec![
                            d.id.clone(),
                            b.part.clone(),
                            b.count.to_string(),
                            money(b.unit_price, &r.currency),
                            unit_watts(b.unit_power_watts),
                        ]
                    })
                })
                .collect(),
        });
    }
    if !r.cheaper_failures.is_empty() {
        out.push(ReportTable {
            title: "why the candidates ranked just before the first design fail".into(),
            header: vec!["candidate", "fails"],
            rows: r
                .cheaper_failures
                .iter()
                .map(|f| vec![f.candidate.clone(), failure_text(f)])
                .collect(),
        });
    }
    out
}

fn designs_table(r: &DesignReport) -> ReportTable {
    ReportTable {
        title: "designs".into(),
        header: vec![
            "id",
            "protection",
            "nodes",
            "chassis",
            "cpu/node",
            "drives/node",
            "nic",
            "cost",
            "power",
            "RU",
            "raw",
            "usable",
            "OSD memory/node",
            "",
        ],
        rows: r
            .designs
            .iter()
            .map(|d| {
                vec![
                    d.id.clone(),
                    d.protection_label.clone(),
                    d.parts.nodes.to_string(),
                    d.chassis.clone(),
                    format!("{} × {}", d.parts.sockets, d.parts.cpu),
                    format!("{} × {}", d.parts.drives_per_node, d.parts.drive),
                    d.parts.nic.clone(),
                    money(d.cost, &r.currency),
                    watts(d.power_watts),
                    d.rack_units.to_string(),
                    bytes(d.raw_bytes),
                    bytes(d.usable_bytes),
                    gib(d.osd_memory_bytes_per_node),
                    flags(d),
                ]
            })
            .collect(),
    }
}

/// Each design's prediction per workload and state, with the range the targets were
/// checked against (the 95 % one when they were checked at the point).
fn workloads_table(r: &DesignReport) -> ReportTable {
    let eighty = r.check_at == CheckAt::Interval80;
    let title = match r.check_at {
        CheckAt::Interval80 => "predicted per workload (80 % range, whose pessimistic end the targets were checked against)",
        CheckAt::Interval95 => "predicted per workload (95 % range, whose pessimistic end the targets were checked against)",
        CheckAt::Point => "predicted per workload (95 % range)",
    };
    let mut rows = Vec::new();
    for d in &r.designs {
        for w in &d.results {
            let p = &w.prediction;
            let range = if eighty {
                p.interval_80.as_ref()
            } else {
                p.interval.as_ref()
            };
            let (iops_rng, lat_rng) = range.map_or((String::new(), String::new()), |i| {
                (
                    format!(" ({}–{})", thousands(i.iops_low), thousands(i.iops_high)),
                    format!(
                        " ({}–{})",
                        ms(i.latency_mean_low_secs),
                        ms(i.latency_mean_high_secs)
                    ),
                )
            });
            rows.push(vec![
                d.id.clone(),
                w.workload.clone(),
                w.state.clone(),
                format!("{}{iops_rng}", thousands(p.iops)),
                rate(p.bandwidth_bytes_per_sec),
                format!("{}{lat_rng}", ms(p.latency_mean_secs)),
                p99_text(
                    p.latency_p99_secs,
                    p.tails
                        .as_ref()
                        .and_then(|t| t.all.latency_p99_secs.half_width),
                ),
                format!(
                    "{} {:.0} %",
                    p.bottleneck.resource,
                    p.bottleneck.utilization * 100.0
                ),
                w.headroom
                    .iter()
                    .map(headroom_text)
                    .collect::<Vec<_>>()
                    .join("; "),
            ]);
        }
    }
    ReportTable {
        title: title.into(),
        header: vec![
            "id",
            "workload",
            "state",
            "IOPS",
            "bandwidth",
            "mean",
            "p99",
            "bottleneck",
            "headroom",
        ],
        rows,
    }
}

/// The search's counts in one line, as `cephplan design` ends its report.
pub fn search_summary(r: &DesignReport) -> String {
    let s = &r.stats;
    format!(
        "search: {} candidates — {} rejected by constraints, {} by capacity, {} skipped as dominated, {} pruned by the asymptotic bounds, {} predicted exactly ({} solves, {} simulations, {} left unsimulated), {} meet every target{}",
        s.candidates,
        s.rejected_by_constraints,
        s.rejected_by_capacity,
        s.skipped_as_dominated,
        s.pruned_by_bounds,
        s.predicted,
        s.predictions,
        s.simulations,
        s.unchecked_p99,
        s.feasible,
        if s.complete { "" } else { " (cancelled: best found so far)" }
    )
}

/// A price in the price list's currency, grouped ("12,400 EUR"); "-" without one.
pub fn money(v: Option<f64>, currency: &Option<String>) -> String {
    match (v, currency) {
        (Some(v), Some(c)) => format!("{} {c}", thousands(v)),
        (Some(v), None) => thousands(v),
        _ => "-".into(),
    }
}

/// Memory in binary units, as `osd_memory_target` is given ("96 GiB").
fn gib(bytes: f64) -> String {
    format!("{} GiB", thousands(bytes / f64::from(1u32 << 30)))
}

/// Watts grouped ("1,200 W"); "-" without a figure.
pub fn watts(v: Option<f64>) -> String {
    v.map_or("-".into(), |w| format!("{} W", thousands(w)))
}

/// A part's unit power as its datasheet states it: whole watts grouped ("1,200 W"), a
/// fractional figure to at most two decimals ("15.95 W", "3.1 W") rather than rounded
/// to a whole watt that no document gives.
pub fn unit_watts(v: Option<f64>) -> String {
    match v {
        Some(w) if w.is_finite() && w.fract() != 0.0 => {
            let s = format!("{w:.2}");
            format!("{} W", s.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => watts(v),
    }
}

fn flags(d: &Design) -> String {
    let mut f = Vec::new();
    if d.pareto {
        f.push("pareto");
    }
    if d.cheapest_of_protection {
        f.push("cheapest of its protection");
    }
    f.join(", ")
}

/// A margin to whole percent, or to a tenth where it is under 1 % (a 0.2 % margin is
/// not "+0 %", which a reader cannot tell from a miss).
pub fn percent(x: f64) -> String {
    if x.abs() < 0.01 {
        format!("{:+.1} %", x * 100.0)
    } else {
        format!("{:+.0} %", x * 100.0)
    }
}

fn headroom_text(d: &Headroom) -> String {
    format!(
        "{} {}: {}",
        d.target,
        format_value(&d.target, d.required),
        percent(d.headroom)
    )
}

/// A simulated p99 with its confidence half-width, to the digits the simulation's
/// precision supports.
pub fn p99_text(p99: Option<f64>, half_width: Option<f64>) -> String {
    match (p99, half_width) {
        (Some(v), Some(h)) => format!("{} ± {:.2} ms", ms(v), h * 1e3),
        (Some(v), None) => ms(v),
        _ => "-".into(),
    }
}

fn failure_text(f: &Failure) -> String {
    let what = if f.workload.is_empty() {
        f.miss.target.clone()
    } else {
        format!("{} {}", f.workload, f.miss.target)
    };
    format!(
        "{}{}: {} {} against {} (misses by {:.1} %{})",
        what,
        if f.state.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.state)
        },
        match (f.by_bound, f.miss.target.contains('≤')) {
            (false, _) => "reaches",
            (true, false) => "at most",
            (true, true) => "at least",
        },
        format_value(&f.miss.target, f.miss.predicted),
        format_value(&f.miss.target, f.miss.required),
        -f.miss.headroom * 100.0,
        if f.by_bound { ", asymptotic bound" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thin margin keeps a decimal (session 53's audit: a 0.2 % margin printed "+0 %"),
    /// wider ones whole percent; a simulated p99 shows its confidence half-width.
    #[test]
    fn margins_and_p99_keep_the_digits_that_matter() {
        assert_eq!(percent(0.0023), "+0.2 %");
        assert_eq!(percent(-0.004), "-0.4 %");
        assert_eq!(percent(0.384), "+38 %");
        assert_eq!(percent(-0.07), "-7 %");
        assert_eq!(
            p99_text(Some(4.438e-3), Some(0.207e-3)),
            "4.438 ms ± 0.21 ms"
        );
        assert_eq!(p99_text(Some(4.438e-3), None), "4.438 ms");
        assert_eq!(p99_text(None, None), "-");
    }

    /// Unit powers print as the catalogue quotes them: the 25 GbE NIC's "15.95W", the
    /// 845DC PRO's "3.1W", the EPYC 9454's 290 W TDP (models/catalogue.toml).
    #[test]
    fn unit_power_keeps_the_datasheet_decimals() {
        assert_eq!(unit_watts(Some(15.95)), "15.95 W");
        assert_eq!(unit_watts(Some(3.1)), "3.1 W");
        assert_eq!(unit_watts(Some(290.0)), "290 W");
        assert_eq!(unit_watts(None), "-");
    }
}
