//! Text formats of report figures shared by the CLI tables, the desktop app and the
//! comparison reports, so that all show a number the same way (`123,456 IOPS`,
//! `1.234 ± 0.012 ms`, and in engineering notation with units: `69.6 k IOPS`, `3.50 ms`,
//! `8.71 GB/s`), and human names of the solver's and simulator's choices (never a Rust
//! enum name on screen).
//!
//! Not here: table layout (the CLI's `output`), plots (`gui::plot`).

use crate::model::TransferKind;
use crate::qn::ceph::{ServiceShape, SimBatching};
use crate::sim::{Estimate, StopReason};
use crate::solve::Method;

/// What a figure measures, for [`eng`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// I/O operations per second: `69.6 k IOPS`.
    Iops,
    /// Seconds: `3.50 ms`, `820 µs`.
    Seconds,
    /// Bytes per second, decimal prefixes: `8.71 GB/s`.
    BytesPerSec,
    /// Bytes, decimal prefixes: `368.6 TB` is written `369 TB`.
    Bytes,
    /// A plain count or ratio with an SI prefix: `1.23 M`.
    Plain,
}

/// Engineering notation: three significant digits, the exponent a multiple of three shown as
/// an SI prefix, the unit after it (`69_630.0` IOPS → `69.6 k IOPS`, `0.0035` s → `3.50 ms`,
/// `8.71e9` B/s → `8.71 GB/s`). Zero is `0` with the unit; non-finite values are spelled
/// out.
pub fn eng(v: f64, q: Quantity) -> String {
    let (unit, spaced) = match q {
        Quantity::Iops => ("IOPS", true),
        Quantity::Seconds => ("s", false),
        Quantity::BytesPerSec => ("B/s", false),
        Quantity::Bytes => ("B", false),
        Quantity::Plain => ("", true),
    };
    let join = |num: String, prefix: &str| -> String {
        match (spaced, prefix.is_empty(), unit.is_empty()) {
            (_, true, true) => num,
            (_, true, false) => format!("{num} {unit}"),
            (true, false, _) => format!("{num} {prefix} {unit}").trim_end().to_owned(),
            (false, false, _) => format!("{num} {prefix}{unit}"),
        }
    };
    if !v.is_finite() {
        return join(
            if v.is_nan() {
                "NaN".into()
            } else {
                "∞".into()
            },
            "",
        );
    }
    if v == 0.0 {
        return join("0".into(), "");
    }
    const PREFIXES: [(i32, &str); 11] = [
        (-15, "f"),
        (-12, "p"),
        (-9, "n"),
        (-6, "µ"),
        (-3, "m"),
        (0, ""),
        (3, "k"),
        (6, "M"),
        (9, "G"),
        (12, "T"),
        (15, "P"),
    ];
    // Round to three significant digits first, so 999.96 becomes 1.00 k, not 1000.
    let digits = v.abs().log10().floor() as i32;
    let rounded = {
        let scale = 10f64.powi(2 - digits);
        (v * scale).round() / scale
    };
    let digits = rounded.abs().log10().floor() as i32;
    let exp3 = (digits.div_euclid(3) * 3).clamp(-15, 15);
    let prefix = PREFIXES
        .iter()
        .find(|(e, _)| *e == exp3)
        .map_or("", |(_, p)| p);
    let m = rounded / 10f64.powi(exp3);
    let decimals = (2 - (digits - exp3)).clamp(0, 2) as usize;
    join(format!("{m:.decimals$}"), prefix)
}

/// The solver's method as a reader would name it, and whether its answer is exact for the
/// network (the caveat is in the words).
pub fn method_label(m: Method) -> &'static str {
    match m {
        Method::ExactSingleClass => "exact MVA (one class, exact multi-server stations)",
        Method::SelfComplementSingleClass => {
            "MVA, exact except for the largest multi-server stations (flow-equivalent estimate, \
             see the caveats)"
        }
        Method::ExactMultiClass => "exact multi-class MVA",
        Method::SeidmannMultiClass => {
            "multi-class MVA with Seidmann's decomposition of the multi-server stations \
             (approximate)"
        }
        Method::Schweitzer => "Bard-Schweitzer approximate MVA (Seidmann for multi-server)",
        Method::Linearizer => "Linearizer approximate MVA (Seidmann for multi-server)",
    }
}

/// [`method_label`], qualified when the solution carries caveats: a method that is exact
/// for the network it solved may have solved an approximated one (Seidmann's decomposition
/// of forked multi-server stations, the batching rule), which the caveats name.
pub fn solver_label(m: Method, caveats: usize) -> String {
    if m.is_exact() && caveats > 0 {
        format!(
            "{}, exact except where the {caveats} caveat{} below say otherwise",
            method_label(m),
            if caveats == 1 { "" } else { "s" }
        )
    } else {
        method_label(m).to_owned()
    }
}

/// Why a simulation stopped, in words.
pub fn stop_reason_label(r: StopReason) -> &'static str {
    match r {
        StopReason::PrecisionReached => "the precision asked for was reached",
        StopReason::MaxEvents => "the event budget ran out (precision not reached)",
        StopReason::MaxSimTime => "the simulated-time budget ran out (precision not reached)",
        StopReason::MaxReplications => "the replication limit was hit (precision not reached)",
        StopReason::Cancelled => "cancelled",
    }
}

/// The service-time shape of a simulation, in words.
pub fn service_shape_label(s: ServiceShape) -> String {
    match s {
        ServiceShape::Exponential => "exponential".into(),
        ServiceShape::Deterministic => "constant".into(),
        ServiceShape::TwoMoment { scv } => format!("two-moment, SCV {scv}"),
    }
}

/// How write batching is simulated, in words.
pub fn batching_label(b: SimBatching) -> &'static str {
    match b {
        SimBatching::MeanField => "at the batch size MVA finds (mean field)",
        SimBatching::Dynamic => "per service, from the queue present",
    }
}

/// A model parameter's value with four significant digits: plain between 0.01 and 10,000
/// ("0.1731", "2.896"), otherwise in e-notation ("2.604e-4").
pub fn significant(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() < 0.01 || v.abs() >= 1e4) {
        format!("{v:.3e}")
    } else {
        let digits = if v == 0.0 || !v.is_finite() {
            3
        } else {
            (3 - v.abs().log10().floor() as i32).clamp(0, 5) as usize
        };
        format!("{v:.digits$}")
    }
}

/// 1234567.8 → "1,234,568".
pub fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return "∞".into();
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < -0.5 {
        format!("-{out}")
    } else {
        out
    }
}

/// Seconds → "1.234 ms".
pub fn ms(secs: f64) -> String {
    format!("{:.3} ms", secs * 1e3)
}

/// Bytes per second → "1.23 GB/s" (decimal, as storage vendors quote bandwidth; MB/s
/// below 1 GB/s).
pub fn rate(bytes_per_sec: f64) -> String {
    let (v, u) = if bytes_per_sec >= 1e9 {
        (bytes_per_sec / 1e9, "GB/s")
    } else {
        (bytes_per_sec / 1e6, "MB/s")
    };
    format!("{v:.2} {u}")
}

/// Bytes → "1.11 PB", "40.80 TB", "512.00 GB" (decimal), or whole bytes below 1 GB.
pub fn bytes(bytes: f64) -> String {
    for (m, u) in [(1e15, "PB"), (1e12, "TB"), (1e9, "GB")] {
        if bytes >= m {
            return format!("{:.2} {u}", bytes / m);
        }
    }
    format!("{:.0} B", bytes)
}

/// A degraded prediction ([`super::DegradedReport`]) as `cephplan predict` prints it under
/// the headline and the app's Prediction page shows it: a heading (`with 1 node(s) down (2
/// surviving), undersized: …` or `…, during recovery at a 30 % share:`) and its lines as
/// (label, value): IOPS, bandwidth, latency, the 95 % range when the model states one,
/// bottleneck, recovery and the note.
pub fn degraded_lines(d: &super::DegradedReport) -> (String, Vec<(&'static str, String)>) {
    let p = &d.prediction;
    let heading = match d.undersized {
        Some(copies) => format!(
            "with {} node(s) down ({} surviving), undersized: {copies} copies a PG, no recovery:",
            d.nodes_down, d.surviving_nodes
        ),
        None => format!(
            "with {} node(s) down ({} surviving), during recovery at a {:.0} % share:",
            d.nodes_down,
            d.surviving_nodes,
            d.recovery_share * 100.0
        ),
    };
    let mut lines = vec![
        ("IOPS", thousands(p.iops)),
        ("bandwidth", rate(p.bandwidth_bytes_per_sec)),
        ("latency", format!("mean {}", ms(p.latency_mean_secs))),
    ];
    // Simulated (`predict --tails`): the p99 with its confidence half-width.
    if let Some(t) = &p.tails {
        let e = &t.all.latency_p99_secs;
        lines.push((
            "p99",
            match e.half_width {
                Some(h) => format!("{} ± {:.2} ms (simulated)", ms(e.mean), h * 1e3),
                None => format!("{} (simulated)", ms(e.mean)),
            },
        ));
    }
    if let Some(i) = &p.interval {
        lines.push((
            "95% range",
            format!(
                "IOPS {} – {}, mean latency {} – {}",
                thousands(i.iops_low),
                thousands(i.iops_high),
                ms(i.latency_mean_low_secs),
                ms(i.latency_mean_high_secs)
            ),
        ));
    }
    lines.push((
        "bottleneck",
        format!(
            "{} at {:.1}% utilisation",
            p.bottleneck.resource,
            p.bottleneck.utilization * 100.0
        ),
    ));
    lines.push((
        "recovery",
        match (&d.recovery, d.undersized) {
            (Some(r), _) => format!(
                "{} to move at {} ({}): at least {:.2} h",
                bytes(r.bytes_to_move),
                rate(r.rate_bytes_per_sec),
                r.limited_by,
                r.time_secs / 3600.0
            ),
            (None, Some(copies)) => format!(
                "none: each PG keeps the {copies} copies its surviving failure domains hold, with nowhere to rebuild the others, until a node returns or one is added"
            ),
            (None, None) => "none".to_string(),
        },
    ));
    lines.push(("note", d.note.clone()));
    (heading, lines)
}

/// A prediction's latency parts ([`super::LatencyPart`]), largest share first (ties by
/// name): the order in which the CLI's table and the app's Prediction page list them.
pub fn latency_parts_by_share(
    parts: &std::collections::BTreeMap<String, super::LatencyPart>,
) -> Vec<(&str, super::LatencyPart)> {
    let mut v: Vec<(&str, super::LatencyPart)> =
        parts.iter().map(|(k, p)| (k.as_str(), *p)).collect();
    v.sort_by(|a, b| b.1.share.total_cmp(&a.1.share).then(a.0.cmp(b.0)));
    v
}

/// "1.234 ± 0.012 ms" (the half-width of the estimate's confidence interval).
pub fn ms_ci(e: &Estimate) -> String {
    match e.half_width {
        Some(h) => format!("{:.3} ± {:.3} ms", e.mean * 1e3, h * 1e3),
        None => ms(e.mean),
    }
}

/// "123,456 ± 789".
pub fn count_ci(e: &Estimate) -> String {
    match e.half_width {
        Some(h) => format!("{} ± {}", thousands(e.mean), thousands(h)),
        None => thousands(e.mean),
    }
}

/// One kind's held-out record ([`TransferKind`]) as `cephplan predict`'s table and the
/// app's Prediction page show it: `reads only: IOPS off by 22.1 % on average (median
/// 18.5 %, bias +1.7 %), mean latency 21.5 %; 9 systems, 704 runs`. Below
/// [`crate::evaluate::MIN_SYSTEMS_FOR_OWN_SIGMA`] systems it says that so few systems are
/// their own errors rather than a transfer figure.
pub fn held_out_kind(k: &TransferKind) -> String {
    let latency = k
        .latency_mape_percent
        .map_or(String::new(), |l| format!(", mean latency {l:.1} %"));
    let few = if (k.systems as usize) < crate::evaluate::MIN_SYSTEMS_FOR_OWN_SIGMA {
        format!(
            " (only {} system{} of this kind held out: {}, not yet a transfer figure)",
            k.systems,
            if k.systems == 1 { "" } else { "s" },
            if k.systems == 1 {
                "its own error"
            } else {
                "their own errors"
            }
        )
    } else {
        String::new()
    };
    format!(
        "{}: IOPS off by {:.1} % on average (median {:.1} %, bias {:+.1} %){latency}; {} system{}, {} runs{few}",
        k.kind.label(),
        k.iops_mape_percent,
        k.iops_median_percent,
        k.iops_bias_percent,
        k.systems,
        if k.systems == 1 { "" } else { "s" },
        thousands(f64::from(k.runs)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_and_keeps_the_sign() {
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(f64::INFINITY), "∞");
        assert_eq!(ms(0.0012345), "1.234 ms");
    }

    #[test]
    fn a_parameter_value_keeps_four_significant_digits() {
        assert_eq!(significant(0.17348), "0.1735");
        assert_eq!(significant(2.8961), "2.896");
        assert_eq!(significant(0.68374), "0.6837");
        assert_eq!(significant(64.0), "64.00");
        assert_eq!(significant(0.000_260_8), "2.608e-4");
        assert_eq!(significant(0.010_335), "0.01034");
        assert_eq!(significant(62_500.0), "6.250e4");
        assert_eq!(significant(0.0), "0.000");
    }

    /// The issue's own examples, then rounding across a prefix and small times.
    #[test]
    fn engineering_notation_has_three_digits_a_prefix_and_the_unit() {
        assert_eq!(eng(69_630.0, Quantity::Iops), "69.6 k IOPS");
        assert_eq!(eng(0.0035, Quantity::Seconds), "3.50 ms");
        assert_eq!(eng(8.71e9, Quantity::BytesPerSec), "8.71 GB/s");
        assert_eq!(eng(999.96, Quantity::Iops), "1.00 k IOPS");
        assert_eq!(eng(0.000_82, Quantity::Seconds), "820 µs");
        assert_eq!(eng(368.64e12, Quantity::Bytes), "369 TB");
        assert_eq!(eng(12.0, Quantity::Iops), "12.0 IOPS");
        assert_eq!(eng(1_234_567.0, Quantity::Plain), "1.23 M");
        assert_eq!(eng(0.0, Quantity::Seconds), "0 s");
        assert_eq!(eng(-2500.0, Quantity::Iops), "-2.50 k IOPS");
        assert_eq!(eng(f64::INFINITY, Quantity::Iops), "∞ IOPS");
    }

    #[test]
    fn no_enum_names_in_the_labels() {
        for m in [
            Method::ExactSingleClass,
            Method::SelfComplementSingleClass,
            Method::ExactMultiClass,
            Method::SeidmannMultiClass,
            Method::Schweitzer,
            Method::Linearizer,
        ] {
            let l = method_label(m);
            // Compound enum names ("ExactSingleClass"); Schweitzer and Linearizer are the
            // methods' own names.
            let debug = format!("{m:?}");
            if debug.chars().filter(char::is_ascii_uppercase).count() > 1 {
                assert!(!l.contains(&debug), "{l}");
            }
            assert_eq!(l.starts_with("exact"), m.is_exact(), "{l}");
        }
        assert!(!stop_reason_label(StopReason::PrecisionReached).contains("Precision"));
        assert!(!batching_label(SimBatching::MeanField).contains("MeanField"));
    }

    #[test]
    fn confidence_intervals_read_mean_plus_minus_half_width() {
        let e = Estimate {
            mean: 0.000_834_2,
            half_width: Some(0.000_004_1),
        };
        assert_eq!(ms_ci(&e), "0.834 ± 0.004 ms");
        let n = Estimate {
            mean: 1_668_634.4,
            half_width: Some(6_007.2),
        };
        assert_eq!(count_ci(&n), "1,668,634 ± 6,007");
        let one = Estimate {
            mean: 0.0012345,
            half_width: None,
        };
        assert_eq!(ms_ci(&one), "1.234 ms");
    }
}
