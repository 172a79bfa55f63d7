//! Plot and chart helpers shared by the pages: the latency-vs-IOPS "hockey stick" with a
//! latency-target line and the knee, scaling curves, measured-vs-predicted scatter with
//! y = x, and utilisation bars with the bottleneck highlighted.
//!
//! These only draw what they are given: no model or solver is called from here. Axis
//! units are fixed per helper (IOPS, milliseconds, percent) and written on the axes.

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

/// Latency (ms, y) against throughput (IOPS, x): one line per series, an optional
/// horizontal latency-target line and an optional marked knee `[iops, latency_ms]`.
pub fn hockey_stick_ui(
    ui: &mut egui::Ui,
    id: &str,
    series: &[Series],
    points: &[Series],
    latency_target_ms: Option<f64>,
    knee: Option<[f64; 2]>,
    height: f32,
) {
    Plot::new(id)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label("throughput (IOPS)")
        .y_axis_label("mean latency (ms)")
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
            if let Some(t) = latency_target_ms {
                p.hline(
                    HLine::new(format!("latency target {t} ms"), t)
                        .color(TARGET)
                        .width(1.5)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
            if let Some(k) = knee {
                p.points(
                    Points::new("knee", vec![k])
                        .radius(7.0)
                        .shape(MarkerShape::Circle)
                        .color(WARN)
                        .filled(true),
                );
            }
        });
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
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label(x_label)
        .y_axis_label(y_label)
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
    use super::si;

    #[test]
    fn si_suffixes() {
        assert_eq!(si(1_234_567.0), "1.23 M");
        assert_eq!(si(230_000.0), "230.0 k");
        assert_eq!(si(12.0), "12.0");
        assert_eq!(si(2.5e9), "2.50 G");
    }
}
