//! Plot and chart helpers shared by the pages: the latency-vs-IOPS "hockey stick" with a
//! latency-target line and the knee, scaling curves, measured-vs-predicted scatter with
//! y = x (one metric per plot in its unit, with a ±band and the run id on hover), bars per
//! labelled value, and utilisation bars with the bottleneck highlighted.
//!
//! These only draw what they are given: no model or solver is called from here. Axis
//! units are fixed per helper (IOPS, milliseconds, percent) and written on the axes. The
//! mouse wheel over a plot scrolls the page, as everywhere else on it (the plots sit on
//! scrolling pages); Ctrl + wheel zooms, a drag pans, a double-click restores the view.

use egui::{Color32, RichText};
use egui_plot::{Corner, HLine, Legend, Line, MarkerShape, Plot, Points};

/// One named curve, points as `[x, y]` in the helper's axis units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<[f64; 2]>,
    /// Drawn dashed and grey: a bound or reference, not a result.
    pub reference: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<[f64; 2]>) -> Self {
        Self {
            name: name.into(),
            points,
            reference: false,
        }
    }

    /// Marks the series as a bound or reference curve.
    pub fn reference(mut self) -> Self {
        self.reference = true;
        self
    }
}

/// Series colours, in order (distinct from [`TARGET`] and [`WARN`]).
pub const PALETTE: [Color32; 4] = [
    Color32::from_rgb(80, 150, 230),
    Color32::from_rgb(90, 190, 110),
    Color32::from_rgb(190, 120, 220),
    Color32::from_rgb(230, 200, 80),
];

/// A line for a series: no band aggregation (bounds have many equal x values), reference
/// curves dashed and grey.
fn line(s: &Series, i: usize) -> Line<'static> {
    let l = Line::new(s.name.clone(), s.points.clone()).allow_band(false);
    if s.reference {
        l.color(Color32::GRAY)
            .width(1.5)
            .style(egui_plot::LineStyle::dashed_dense())
    } else {
        l.width(2.0).color(PALETTE[i % PALETTE.len()])
    }
}

/// Colour of latency-target lines.
pub const TARGET: Color32 = Color32::from_rgb(220, 50, 50);

/// Colour for the highlighted bottleneck and for points past a latency target.
pub const WARN: Color32 = Color32::from_rgb(230, 120, 40);

/// What a hockey-stick plot marks besides its curves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HockeyMarks {
    /// Drawn as a horizontal line.
    pub latency_target_ms: Option<f64>,
    /// The knee `[iops, latency_ms]` under its legend name, which says the latency the
    /// target applies to ("knee: mean ≤ 4 ms", "knee: simulated p99 ≤ 4 ms").
    pub knee: Option<(String, [f64; 2])>,
    /// Top of the latency axis in the initial view, to show the knee region rather than
    /// the saturated tail (zoom out or double-click to see everything); None fits all.
    pub view_top_ms: Option<f64>,
}

/// Latency (ms, y, axis named `y_label`) against throughput (IOPS, x): one line per
/// series, diamonds for `points`, and the [`HockeyMarks`].
/// Returns the bounds it shows.
pub fn hockey_stick_ui(
    ui: &mut egui::Ui,
    id: &str,
    y_label: &str,
    series: &[Series],
    points: &[Series],
    marks: &HockeyMarks,
    height: f32,
) -> egui_plot::PlotBounds {
    let top = marks.view_top_ms.filter(|t| t.is_finite() && *t > 0.0);
    // A plot keeps its bounds in memory under its id: a new top needs a new id.
    let mut plot = Plot::new((id, top.map(f64::to_bits))).allow_scroll(false);
    if let Some(top) = top {
        plot = plot.default_y_bounds(0.0, top);
    }
    // Bottom right is the empty corner of a hockey stick (no throughput is reached at
    // less than the curve's latency), so the legend covers no curve there.
    plot.legend(Legend::default().position(Corner::RightBottom))
        .x_axis_label("throughput (IOPS)")
        .y_axis_label(y_label)
        .x_axis_formatter(eng_tick)
        .y_axis_min_width(40.0)
        .height(height)
        .include_y(0.0)
        .include_x(0.0)
        .show(ui, |p| {
            for (i, s) in series.iter().enumerate() {
                p.line(line(s, i));
            }
            for (i, s) in points.iter().enumerate() {
                p.points(
                    Points::new(s.name.clone(), s.points.clone())
                        .color(PALETTE[(series.len() + i) % PALETTE.len()])
                        .radius(5.0)
                        .shape(MarkerShape::Diamond)
                        .filled(true),
                );
            }
            if let Some(t) = marks.latency_target_ms {
                p.hline(
                    HLine::new(format!("latency target {t} ms"), t)
                        .color(TARGET)
                        .width(1.5)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
            if let Some((name, k)) = &marks.knee {
                p.points(
                    Points::new(name.clone(), vec![*k])
                        .radius(7.0)
                        .shape(MarkerShape::Circle)
                        .color(WARN)
                        .filled(true),
                );
            }
        })
        .transform
        .bounds()
        .to_owned()
}

/// Any y against any x, one line per series, with axis labels.
pub fn curves_ui(
    ui: &mut egui::Ui,
    id: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    height: f32,
) {
    Plot::new(id)
        .allow_scroll(false)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .x_axis_formatter(count_tick)
        .y_axis_formatter(eng_tick)
        .y_axis_min_width(48.0)
        .height(height)
        .include_y(0.0)
        .show(ui, |p| {
            for (i, s) in series.iter().enumerate() {
                p.line(line(s, i));
                p.points(
                    Points::new(s.name.clone(), s.points.clone())
                        .radius(3.0)
                        .color(PALETTE[i % PALETTE.len()]),
                );
            }
        });
}

/// Measured (x) against predicted (y) with the y = x line: points on the line are perfect
/// predictions.
pub fn measured_vs_predicted_ui(
    ui: &mut egui::Ui,
    id: &str,
    unit: &str,
    series: &[Series],
    height: f32,
) {
    let max = series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p[0], p[1]])
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        * 1.05;
    Plot::new(id)
        .allow_scroll(false)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label(format!("measured ({unit})"))
        .y_axis_label(format!("predicted ({unit})"))
        .height(height)
        .data_aspect(1.0)
        .show(ui, |p| {
            p.line(
                Line::new("y = x", vec![[0.0, 0.0], [max, max]])
                    .color(Color32::GRAY)
                    .style(egui_plot::LineStyle::dashed_dense()),
            );
            for (i, s) in series.iter().enumerate() {
                p.points(
                    Points::new(s.name.clone(), s.points.clone())
                        .radius(4.0)
                        .color(PALETTE[i % PALETTE.len()]),
                );
            }
        });
}

/// One measured-vs-predicted point of a metric, with the run it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPoint {
    pub run_id: String,
    pub measured: f64,
    pub predicted: f64,
}

/// Measured (x) against predicted (y) of one metric on linear axes in its unit
/// (engineering notation: `250 k IOPS`, `3.50 ms`), with y = x and a shaded band of
/// ±`band_rel` (0.15 = ±15 %) around it; hovering a point shows its run id and both values.
pub fn metric_measured_vs_predicted_ui(
    ui: &mut egui::Ui,
    id: &str,
    quantity: crate::predict::format::Quantity,
    points: &[RunPoint],
    band_rel: f64,
    height: f32,
) {
    use crate::predict::format::eng;
    let max = points
        .iter()
        .flat_map(|p| [p.measured, p.predicted])
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        * 1.1;
    let max = if max > 0.0 { max } else { 1.0 };
    let name = "runs";
    let tick = move |m: egui_plot::GridMark, _: &std::ops::RangeInclusive<f64>| {
        if m.value < 0.0 {
            String::new()
        } else {
            eng(m.value, quantity)
        }
    };
    let runs: Vec<RunPoint> = points.to_vec();
    Plot::new(id)
        .allow_scroll(false)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label("measured")
        .y_axis_label("predicted")
        .x_axis_formatter(tick)
        .y_axis_formatter(tick)
        .y_axis_min_width(64.0)
        .include_x(0.0)
        .include_y(0.0)
        .include_x(max)
        .include_y(max)
        .height(height)
        .label_formatter(move |pos| match pos {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name, index, ..
            } if *plot_name == name => runs.get(*index).map(|r| {
                format!(
                    "{}\nmeasured {}\npredicted {} ({:+.1} %)",
                    r.run_id,
                    eng(r.measured, quantity),
                    eng(r.predicted, quantity),
                    (r.predicted / r.measured - 1.0) * 100.0
                )
            }),
            _ => None,
        })
        .show(ui, |p| {
            p.add(
                egui_plot::FilledArea::new(
                    format!("±{:.0} %", band_rel * 100.0),
                    &[0.0, max],
                    &[0.0, max * (1.0 - band_rel)],
                    &[0.0, max * (1.0 + band_rel)],
                )
                .fill_color(Color32::from_gray(128).linear_multiply(0.25)),
            );
            p.line(
                Line::new("y = x", vec![[0.0, 0.0], [max, max]])
                    .color(Color32::GRAY)
                    .style(egui_plot::LineStyle::dashed_dense()),
            );
            p.points(
                Points::new(
                    name,
                    points
                        .iter()
                        .map(|r| [r.measured, r.predicted])
                        .collect::<Vec<_>>(),
                )
                .radius(4.0)
                .color(PALETTE[0]),
            );
        });
}

/// Vertical bars, one per labelled value (e.g. the error per run), with a y-axis label;
/// bars beyond ±`warn_abs` are drawn in [`WARN`].
pub fn labelled_bars_ui(
    ui: &mut egui::Ui,
    id: &str,
    y_label: &str,
    values: &[(String, f64)],
    warn_abs: f64,
    height: f32,
) {
    let bars: Vec<egui_plot::Bar> = values
        .iter()
        .enumerate()
        .map(|(i, (name, v))| {
            let b = egui_plot::Bar::new(i as f64, *v).name(name).width(0.7);
            if v.abs() > warn_abs {
                b.fill(WARN)
            } else {
                b.fill(PALETTE[0])
            }
        })
        .collect();
    let names: Vec<String> = values.iter().map(|(n, _)| n.clone()).collect();
    let unit = y_label.to_owned();
    Plot::new(id)
        .allow_scroll(false)
        .y_axis_label(y_label)
        .x_axis_label("run number (hover a bar for its run id)")
        .x_axis_formatter(|m, _| {
            if (m.value - m.value.round()).abs() < 1e-9 && m.value >= 0.0 {
                format!("{}", m.value.round() as i64 + 1)
            } else {
                String::new()
            }
        })
        .y_axis_formatter(|m, _| format!("{:+.0}", m.value))
        .y_axis_min_width(40.0)
        .label_formatter(move |pos| {
            let (egui_plot::HoverPosition::NearDataPoint { position, .. }
            | egui_plot::HoverPosition::Elsewhere { position }) = pos;
            let i = position.x.round();
            (i >= 0.0)
                .then(|| names.get(i as usize))
                .flatten()
                .map(|n| format!("run {}: {n}\n{unit} {:+.1}", i as usize + 1, position.y))
        })
        .height(height)
        .include_y(warn_abs)
        .include_y(-warn_abs)
        .show(ui, |p| {
            p.bar_chart(egui_plot::BarChart::new(y_label.to_owned(), bars));
            p.hline(
                HLine::new(format!("+{warn_abs}"), warn_abs)
                    .color(Color32::GRAY)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            p.hline(
                HLine::new(format!("-{warn_abs}"), -warn_abs)
                    .color(Color32::GRAY)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
        });
}

/// One row per resource: name, a bar of its utilisation (0..1) and the percentage. The
/// bottleneck row is drawn in [`WARN`] and labelled.
pub fn utilisation_bars_ui(ui: &mut egui::Ui, rows: &[(String, f64)], bottleneck: Option<&str>) {
    egui::Grid::new("utilisation")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            for (name, u) in rows {
                let is_bottleneck = bottleneck == Some(name.as_str());
                let label = if is_bottleneck {
                    RichText::new(format!("{name} (bottleneck)"))
                        .color(WARN)
                        .strong()
                } else {
                    RichText::new(name)
                };
                ui.label(label);
                let frac = u.clamp(0.0, 1.0) as f32;
                let mut bar = egui::ProgressBar::new(frac).desired_width(220.0);
                if is_bottleneck {
                    bar = bar.fill(WARN);
                }
                ui.add(bar);
                ui.label(format!("{:.1} %", u * 100.0));
                ui.end_row();
            }
        });
}

/// Height of a page's plots: about half of the visible area, so that at 1024×640 a plot
/// and its heading fit without the page clipping them (the page scrolls for the rest).
pub fn plot_height(ui: &egui::Ui) -> f32 {
    (ui.clip_rect().height() * 0.5).clamp(200.0, 460.0)
}

/// Tick label in engineering notation (`250 k`, `1.5 M`), for axes whose values span
/// thousands to millions (IOPS, bytes per second).
pub fn eng_tick(m: egui_plot::GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    crate::predict::format::eng(m.value, crate::predict::format::Quantity::Plain)
}

/// Tick label of a count axis (nodes, populations): whole numbers only.
pub fn count_tick(m: egui_plot::GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    if (m.value - m.value.round()).abs() < 1e-9 && m.value >= 0.0 {
        format!("{}", m.value.round() as i64)
    } else {
        String::new()
    }
}

/// Formats a rate with a thousands suffix: 1_234_567 → "1.23 M".
pub fn si(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        format!("{v}")
    } else if a >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui_kittest::kittest::Queryable;

    /// The wheel over a plot scrolls the page it sits on (session 54's audit: it panned
    /// the plot into negative latency instead, and the page stopped scrolling under it).
    #[test]
    fn the_wheel_over_a_plot_scrolls_the_page() {
        let bounds = std::rc::Rc::new(std::cell::Cell::new(None));
        let seen = bounds.clone();
        let mut h = egui_kittest::Harness::builder()
            .with_size(egui::vec2(600.0, 400.0))
            .build_ui(move |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    ui.label("above the plot");
                    let curve = Series::new("mean", vec![[1e3, 1.0], [2e3, 2.0], [2.5e3, 4.0]]);
                    let b = hockey_stick_ui(
                        ui,
                        "wheel",
                        "mean latency (ms)",
                        &[curve],
                        &[],
                        &HockeyMarks::default(),
                        250.0,
                    );
                    seen.set(Some((b.min(), b.max())));
                    ui.add_space(2000.0);
                    ui.label("below the plot");
                });
            });
        h.run();
        let before = bounds.get().unwrap();
        let above = h.get_by_label("above the plot").rect();
        h.hover_at(above.center() + egui::vec2(250.0, 120.0));
        h.run();
        for _ in 0..5 {
            h.event(egui::Event::MouseWheel {
                unit: egui::MouseWheelUnit::Point,
                delta: egui::vec2(0.0, -60.0),
                phase: egui::TouchPhase::Move,
                source: egui::MouseWheelSource::Wheel,
                modifiers: egui::Modifiers::NONE,
            });
            h.run();
        }
        let moved = above.top() - h.get_by_label("above the plot").rect().top();
        assert!(moved > 100.0, "the page scrolled by {moved} points");
        assert_eq!(
            bounds.get().unwrap(),
            before,
            "the wheel moved the plot's bounds"
        );
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(1_234_567.0), "1.23 M");
        assert_eq!(si(230_000.0), "230.0 k");
        assert_eq!(si(12.0), "12.0");
        assert_eq!(si(2.5e9), "2.50 G");
    }
}
