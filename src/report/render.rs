//! Text forms of a [`ComparisonReport`]: the table (rows = figures, columns = variants) in
//! Markdown with the plots as PNG files beside it, the same as one self-contained HTML page
//! (plots embedded as data URIs), and CSV (one row per variant) for tools. JSON is the
//! report's serde form.
//!
//! Every file begins with cephplan's marker (in an HTML comment) so that a later run may
//! replace it and no other file.

use super::plot::{hockey_png, utilisation_png, PlotError};
use super::{ComparisonReport, VariantReport};
use crate::io::GENERATED_MARKER;
use crate::predict::format::{eng, Quantity};

/// Why a report cannot be rendered for a path.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: name the report file .md (Markdown with PNG plots beside it) or .html (one self-contained page)")]
    Kind { path: std::path::PathBuf },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Every file of the report for `path` (`.md`: the text and its two PNG plots beside it;
/// `.html`: one page), as `(path, bytes)` with the main file last, for the caller to write
/// (atomically, never over a foreign file: `io::write_atomic_owned`).
pub fn files(
    r: &ComparisonReport,
    path: &std::path::Path,
) -> Result<Vec<(std::path::PathBuf, Vec<u8>)>, ReportError> {
    let rendered = match path.extension().and_then(|e| e.to_str()) {
        Some("md") => {
            let stem = path
                .file_stem()
                .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
            markdown(r, &stem)?
        }
        Some("html" | "htm") => html(r)?,
        _ => {
            return Err(ReportError::Kind {
                path: path.to_path_buf(),
            })
        }
    };
    let dir = path.parent().unwrap_or(std::path::Path::new(""));
    let mut out: Vec<(std::path::PathBuf, Vec<u8>)> = rendered
        .attachments
        .into_iter()
        .map(|(name, bytes)| (dir.join(name), bytes))
        .collect();
    out.push((path.to_path_buf(), rendered.text.into_bytes()));
    Ok(out)
}

/// Every file [`files`] writes for a report at `path`, the main file last: check them all
/// before the work (`io::check_writable_owned`), so that a foreign file beside the report
/// refuses the run before it starts, not after half the report is written.
pub fn output_paths(path: &std::path::Path) -> Result<Vec<std::path::PathBuf>, ReportError> {
    let dir = path.parent().unwrap_or(std::path::Path::new(""));
    let mut out: Vec<std::path::PathBuf> = match path.extension().and_then(|e| e.to_str()) {
        Some("md") => {
            let stem = path
                .file_stem()
                .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
            plot_names(&stem).iter().map(|n| dir.join(n)).collect()
        }
        Some("html" | "htm") => Vec::new(),
        _ => {
            return Err(ReportError::Kind {
                path: path.to_path_buf(),
            })
        }
    };
    out.push(path.to_path_buf());
    Ok(out)
}

/// A rendered report: the main text and the files it refers to.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    /// `(file name, bytes)` to write beside the main file (Markdown's plots; none for HTML).
    pub attachments: Vec<(String, Vec<u8>)>,
}

/// Pixel size of the hockey-stick plot and width of the utilisation plot.
pub const PLOT_WIDTH: u32 = 1000;
pub const PLOT_HEIGHT: u32 = 560;

/// The table's rows: label and the cell of one variant.
type Row = (
    &'static str,
    fn(&VariantReport, &ComparisonReport) -> String,
);

const ROWS: [Row; 24] = [
    ("scenario file", |v, _| v.origin.clone()),
    ("workload", |v, _| v.configuration.workload.clone()),
    ("protection", |v, _| v.configuration.protection.clone()),
    ("OSD nodes", |v, _| v.nodes.to_string()),
    ("CPU per OSD node", |v, _| v.configuration.node_cpu.clone()),
    ("drives per OSD node", |v, _| v.configuration.drives.clone()),
    ("network", |v, _| v.configuration.network.clone()),
    ("clients", |v, _| v.configuration.clients.clone()),
    ("OSDs", |v, _| v.osds.to_string()),
    ("OSD-node CPU cores", |v, _| v.cores.to_string()),
    ("raw capacity", |v, _| eng(v.raw_bytes, Quantity::Bytes)),
    ("usable capacity (before Ceph's full ratio)", |v, _| {
        eng(v.usable_bytes, Quantity::Bytes)
    }),
    ("load (I/Os in flight, iodepth)", |v, _| {
        format!("{} (iodepth {})", v.in_flight, v.iodepth)
    }),
    ("IOPS", |v, _| eng(v.iops, Quantity::Iops)),
    ("95 % range of IOPS", |v, _| match &v.interval {
        Some(i) => format!(
            "{} – {}",
            eng(i.iops_low, Quantity::Iops),
            eng(i.iops_high, Quantity::Iops)
        ),
        None => "– (the model has no covariance)".into(),
    }),
    ("bandwidth", |v, _| {
        eng(v.bandwidth_bytes_per_sec, Quantity::BytesPerSec)
    }),
    ("mean latency", |v, _| match &v.interval {
        Some(i) => format!(
            "{} ({} – {})",
            eng(v.latency_mean_secs, Quantity::Seconds),
            eng(i.latency_mean_low_secs, Quantity::Seconds),
            eng(i.latency_mean_high_secs, Quantity::Seconds)
        ),
        None => eng(v.latency_mean_secs, Quantity::Seconds),
    }),
    ("p99 latency (simulated)", |v, _| {
        match &v.latency_p99_secs {
            Some(e) => match e.half_width {
                Some(h) => format!(
                    "{} ± {}",
                    eng(e.mean, Quantity::Seconds),
                    eng(h, Quantity::Seconds)
                ),
                None => eng(e.mean, Quantity::Seconds),
            },
            None => "– (not simulated)".into(),
        }
    }),
    ("knee under the latency target", |v, r| {
        match (v.knee.value, v.knee.iops, v.knee.latency_mean_secs) {
            (Some(d), Some(x), Some(l)) => format!(
                "iodepth {d}: {} at {}",
                eng(x, Quantity::Iops),
                eng(l, Quantity::Seconds)
            ),
            _ => format!(
                "none within {}: {}",
                eng(r.latency_target_secs, Quantity::Seconds),
                v.knee.note
            ),
        }
    }),
    ("IOPS per OSD node", |v, _| {
        eng(v.iops_per_node, Quantity::Iops)
    }),
    ("IOPS per OSD-node core", |v, _| {
        eng(v.iops_per_core, Quantity::Iops)
    }),
    ("IOPS per watt of OSD-node CPU TDP", |v, _| {
        v.iops_per_cpu_watt.map_or_else(
            || "–".into(),
            |x| format!("{} IOPS/W", eng(x, Quantity::Plain)),
        )
    }),
    ("bottleneck", |v, _| {
        format!(
            "{} ({:.0} %)",
            v.bottleneck.resource,
            v.bottleneck.utilization * 100.0
        )
    }),
    ("where the mean latency goes", |v, _| {
        let parts = crate::predict::format::latency_parts_by_share(&v.latency_parts);
        if parts.is_empty() {
            return "–".into();
        }
        parts
            .iter()
            .take(LATENCY_PARTS_SHOWN)
            .map(|(name, p)| format!("{name} {:.0} %", p.share * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    }),
];

/// The largest latency parts a comparison's table names per variant (`cephplan predict`
/// lists them all).
const LATENCY_PARTS_SHOWN: usize = 3;

/// The rows of the variants' `[degraded]` tables, shown when any variant has one: the
/// state (nodes down, recovering or undersized), IOPS and mean latency in it, and the
/// recovery time (`cephplan predict`'s degraded lines, in the table's notation).
const DEGRADED_ROWS: [Row; 4] = [
    ("with nodes down ([degraded] table)", |v, _| {
        match (&v.degraded, &v.degraded_error) {
            (Some(d), _) => match d.undersized {
                Some(copies) => format!(
                    "{} of {} down: undersized, {copies} copies a PG, no recovery",
                    d.nodes_down,
                    d.nodes_down + d.surviving_nodes
                ),
                None => format!(
                    "{} of {} down, recovering at a {:.0} % share",
                    d.nodes_down,
                    d.nodes_down + d.surviving_nodes,
                    d.recovery_share * 100.0
                ),
            },
            (None, Some(e)) => format!("– ({e})"),
            (None, None) => "– (no [degraded] table)".into(),
        }
    }),
    ("IOPS with nodes down", |v, _| {
        v.degraded
            .as_ref()
            .map_or_else(|| "–".into(), |d| eng(d.prediction.iops, Quantity::Iops))
    }),
    ("mean latency with nodes down", |v, _| {
        v.degraded.as_ref().map_or_else(
            || "–".into(),
            |d| eng(d.prediction.latency_mean_secs, Quantity::Seconds),
        )
    }),
    ("recovery time (a lower bound)", |v, _| match &v.degraded {
        Some(d) => match &d.recovery {
            Some(r) => format!("{:.2} h ({})", r.time_secs / 3600.0, r.limited_by),
            None => "none: nowhere to rebuild the lost copies".into(),
        },
        None => "–".into(),
    }),
];

/// The figures as rows of text cells (label, then one cell per variant); the
/// `DEGRADED_ROWS` follow when any variant's file has a `[degraded]` table.
pub fn table_rows(r: &ComparisonReport) -> Vec<Vec<String>> {
    let any_degraded = r
        .variants
        .iter()
        .any(|v| v.degraded.is_some() || v.degraded_error.is_some());
    ROWS.iter()
        .chain(DEGRADED_ROWS.iter().filter(|_| any_degraded))
        .map(|(label, cell)| {
            std::iter::once((*label).to_owned())
                .chain(r.variants.iter().map(|v| cell(v, r)))
                .collect()
        })
        .collect()
}

/// The title of a variant's held-out record (the model's leave-one-system-out errors of
/// runs of the scenario's kinds).
const HELD_OUT_TITLE: &str =
    "How far runs of this kind were off on systems the model was not fitted to (leave-one-system-out)";

/// A variant's held-out record, a line per kind as `cephplan predict` lists it; none for a
/// model without the record (a prior, a fit to one system), whose report then says nothing
/// of it.
fn held_out_lines(v: &VariantReport) -> Vec<String> {
    v.held_out_by_kind
        .iter()
        .map(crate::predict::format::held_out_kind)
        .collect()
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Escaped text with Markdown's `code` spans as `<code>` (the intro and caveats are
/// written for both renderings).
fn html_text(s: &str) -> String {
    let e = html_escape(s);
    let parts: Vec<&str> = e.split('`').collect();
    if parts.len().is_multiple_of(2) {
        // An unpaired backtick: leave the text as it is.
        return e;
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{p}</code>")
            } else {
                (*p).to_string()
            }
        })
        .collect()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn intro(r: &ComparisonReport) -> Vec<String> {
    let mut v = vec![
        format!(
            "Model: {} (`{}`, {}).",
            r.model_label, r.model.name, r.model.generator
        ),
        format!(
            "Written by {}; model fingerprint {} (FNV-1a 64 of the model file as cephplan writes it){}.",
            r.generator.trim_start_matches("generated by "),
            r.model_fingerprint,
            r.model.fitted_on.as_ref().map_or(String::new(), |f| format!(
                ", fitted on {} measured runs from {} dataset file{}",
                f.runs,
                f.datasets.len(),
                if f.datasets.len() == 1 { "" } else { "s" }
            ))
        ),
        format!(
            "The knee is the highest IOPS of an iodepth sweep (doubling from 1, then to the \
             whole iodepth where the target is crossed) whose mean latency (exact MVA) meets \
             the target of {}; the curves are carried past it.",
            eng(r.latency_target_secs, Quantity::Seconds)
        ),
        "IOPS, bandwidth and mean latency are the model's prediction at each scenario's own \
         load; the 95 % range is the model's interval (the same `cephplan predict` prints). \
         Per watt counts only the OSD nodes' CPU TDP from the catalogue."
            .to_owned(),
    ];
    if let (Some(seed), Some(prec)) = (r.tails_seed, r.tails_relative_precision) {
        v.push(format!(
            "p99 is simulated at each scenario's own load (seed {seed}, until the mean and p99 \
             are known within ±{:.0} % at 95 % confidence); ± is its confidence interval.",
            prec * 100.0
        ));
    }
    v
}

/// Plot file names for a report written to `stem.md`: `stem-latency.png`, `stem-utilisation.png`.
pub fn plot_names(stem: &str) -> [String; 2] {
    [
        format!("{stem}-latency.png"),
        format!("{stem}-utilisation.png"),
    ]
}

fn plots(r: &ComparisonReport) -> Result<[Vec<u8>; 2], PlotError> {
    Ok([
        hockey_png(r, PLOT_WIDTH, PLOT_HEIGHT)?,
        utilisation_png(r, PLOT_WIDTH)?,
    ])
}

/// Markdown, with the two plots as attachments named after `stem` (the report's file
/// name without extension).
pub fn markdown(r: &ComparisonReport, stem: &str) -> Result<Rendered, PlotError> {
    let [hockey, util] = plots(r)?;
    let names = plot_names(stem);
    let mut o = format!("<!--\n# {GENERATED_MARKER} (comparison report)\n-->\n");
    o.push_str("# Comparison of ");
    o.push_str(
        &r.variants
            .iter()
            .map(|v| md_escape(&v.name))
            .collect::<Vec<_>>()
            .join(", "),
    );
    o.push_str("\n\n");
    for l in intro(r) {
        o.push_str(&format!("{l}\n\n"));
    }
    let rows = table_rows(r);
    o.push_str(&format!(
        "| | {} |\n|---|{}\n",
        r.variants
            .iter()
            .map(|v| md_escape(&v.name))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(r.variants.len())
    ));
    for row in &rows {
        o.push_str(&format!(
            "| {} |\n",
            row.iter()
                .map(|c| md_escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    o.push_str(&format!(
        "\n![mean latency against IOPS]({})\n\n![utilisation]({})\n",
        names[0], names[1]
    ));
    for v in &r.variants {
        o.push_str(&format!("\n## {}\n\n", md_escape(&v.name)));
        o.push_str(&format!("Solver: {}.\n\n", v.solver));
        section_md(&mut o, "Caveats", &v.warnings);
        let held_out = held_out_lines(v);
        if !held_out.is_empty() {
            section_md(&mut o, HELD_OUT_TITLE, &held_out);
        }
        section_md(
            &mut o,
            "Hardware and its catalogue sources",
            &v.sources
                .iter()
                .map(|s| format!("{} `{}`: {}", s.part, s.name, s.source))
                .collect::<Vec<_>>(),
        );
        section_md(
            &mut o,
            "Assumptions marked in the scenario file",
            &v.assumptions,
        );
    }
    Ok(Rendered {
        text: o,
        attachments: vec![(names[0].clone(), hockey), (names[1].clone(), util)],
    })
}

fn section_md(o: &mut String, title: &str, lines: &[String]) {
    o.push_str(&format!("**{title}**"));
    if lines.is_empty() {
        o.push_str(": none.\n\n");
        return;
    }
    o.push_str("\n\n");
    for l in lines {
        o.push_str(&format!("- {}\n", md_escape(l)));
    }
    o.push('\n');
}

/// One HTML page with the plots embedded: opens in any browser, nothing beside it.
pub fn html(r: &ComparisonReport) -> Result<Rendered, PlotError> {
    let [hockey, util] = plots(r)?;
    let names: Vec<String> = r.variants.iter().map(|v| html_escape(&v.name)).collect();
    let mut o = format!(
        "<!DOCTYPE html>\n<!--\n# {GENERATED_MARKER} (comparison report)\n-->\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Comparison of {}</title><style>\
         body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #bbb;padding:4px 8px;vertical-align:top}}\
         th{{background:#eef}}td:first-child{{font-weight:bold}}img{{max-width:100%}}li{{margin:.2em 0}}\
         </style></head><body>\n",
        names.join(", ")
    );
    o.push_str(&format!("<h1>Comparison of {}</h1>\n", names.join(", ")));
    for l in intro(r) {
        o.push_str(&format!("<p>{}</p>\n", html_text(&l)));
    }
    o.push_str("<table><tr><th></th>");
    for n in &names {
        o.push_str(&format!("<th>{n}</th>"));
    }
    o.push_str("</tr>\n");
    for row in table_rows(r) {
        o.push_str("<tr>");
        for c in row {
            o.push_str(&format!("<td>{}</td>", html_escape(&c)));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    for (alt, png) in [
        ("mean latency against IOPS", &hockey),
        ("utilisation", &util),
    ] {
        o.push_str(&format!(
            "<p><img alt=\"{alt}\" src=\"data:image/png;base64,{}\"></p>\n",
            base64(png)
        ));
    }
    for (v, n) in r.variants.iter().zip(&names) {
        o.push_str(&format!(
            "<h2>{n}</h2>\n<p>Solver: {}.</p>\n",
            html_escape(&v.solver)
        ));
        section_html(&mut o, "Caveats", &v.warnings);
        let held_out = held_out_lines(v);
        if !held_out.is_empty() {
            section_html(&mut o, HELD_OUT_TITLE, &held_out);
        }
        section_html(
            &mut o,
            "Hardware and its catalogue sources",
            &v.sources
                .iter()
                .map(|s| format!("{} {}: {}", s.part, s.name, s.source))
                .collect::<Vec<_>>(),
        );
        section_html(
            &mut o,
            "Assumptions marked in the scenario file",
            &v.assumptions,
        );
    }
    o.push_str("</body></html>\n");
    Ok(Rendered {
        text: o,
        attachments: vec![],
    })
}

fn section_html(o: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        o.push_str(&format!("<p><b>{title}</b>: none.</p>\n"));
        return;
    }
    o.push_str(&format!("<p><b>{title}</b></p><ul>\n"));
    for l in lines {
        o.push_str(&format!("<li>{}</li>\n", html_text(l)));
    }
    o.push_str("</ul>\n");
}

/// One row per variant, SI base units (for tools).
pub fn csv(r: &ComparisonReport) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "variant",
        "origin",
        "nodes",
        "osds",
        "cores",
        "raw_bytes",
        "usable_bytes",
        "in_flight",
        "iops",
        "iops_low_95",
        "iops_high_95",
        "bandwidth_bytes_per_sec",
        "latency_mean_secs",
        "latency_p99_secs",
        "knee_iodepth",
        "knee_iops",
        "knee_latency_mean_secs",
        "iops_per_node",
        "iops_per_core",
        "iops_per_cpu_watt",
        "bottleneck",
        "model",
        "degraded_state",
        "degraded_iops",
        "degraded_latency_mean_secs",
        "recovery_time_secs",
    ])?;
    let f = |v: Option<f64>| v.map_or_else(String::new, |x| format!("{x}"));
    for v in &r.variants {
        w.write_record([
            v.name.clone(),
            v.origin.clone(),
            v.nodes.to_string(),
            v.osds.to_string(),
            v.cores.to_string(),
            format!("{}", v.raw_bytes),
            format!("{}", v.usable_bytes),
            v.in_flight.to_string(),
            format!("{}", v.iops),
            f(v.interval.as_ref().map(|i| i.iops_low)),
            f(v.interval.as_ref().map(|i| i.iops_high)),
            format!("{}", v.bandwidth_bytes_per_sec),
            format!("{}", v.latency_mean_secs),
            f(v.latency_p99_secs.as_ref().map(|e| e.mean)),
            v.knee.value.map_or_else(String::new, |d| d.to_string()),
            f(v.knee.iops),
            f(v.knee.latency_mean_secs),
            format!("{}", v.iops_per_node),
            format!("{}", v.iops_per_core),
            f(v.iops_per_cpu_watt),
            v.bottleneck.resource.clone(),
            r.model.name.clone(),
            v.degraded
                .as_ref()
                .map_or_else(String::new, |d| match d.undersized {
                    Some(c) => format!("{} node(s) down, undersized: {c} copies", d.nodes_down),
                    None => format!("{} node(s) down, recovering", d.nodes_down),
                }),
            f(v.degraded.as_ref().map(|d| d.prediction.iops)),
            f(v.degraded.as_ref().map(|d| d.prediction.latency_mean_secs)),
            f(v.degraded
                .as_ref()
                .and_then(|d| d.recovery.as_ref().map(|x| x.time_secs))),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("csv of UTF-8 strings is UTF-8"))
}

/// Standard base64 (RFC 4648, with padding), for the HTML page's data URIs.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= c.len() {
                o.push(A[((n >> shift) & 63) as usize] as char);
            } else {
                o.push('=');
            }
        }
    }
    o
}
