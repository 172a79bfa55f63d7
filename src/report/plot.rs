//! The comparison report's plots as PNG bytes, drawn by `plotters` on its bitmap backend
//! with the ab_glyph rasteriser and the font shipped in `assets/fonts/` (Ubuntu Light,
//! Ubuntu Font Licence in `assets/fonts/UFL.txt`), so no system font library is needed.
//!
//! Each PNG carries cephplan's marker in a text chunk ahead of the image data, so that a
//! later run may replace a file it wrote (`io::write_atomic_owned`) and no other.

use plotters::prelude::*;

use super::ComparisonReport;
use crate::predict::format::{eng, Quantity};

/// Why a plot could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {plot} plot: {message} (a bug in cephplan: please report it with the scenario files)")]
pub struct PlotError {
    pub plot: &'static str,
    pub message: String,
}

const FONT: &[u8] = include_bytes!("../../assets/fonts/Ubuntu-Light.ttf");

/// Series colours (the desktop app's palette, then more).
const COLOURS: [RGBColor; 6] = [
    RGBColor(40, 110, 200),
    RGBColor(50, 160, 80),
    RGBColor(160, 80, 200),
    RGBColor(220, 150, 20),
    RGBColor(20, 160, 170),
    RGBColor(200, 60, 120),
];
const TARGET: RGBColor = RGBColor(220, 50, 50);

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is compiled in; a failure would be caught by the unit tests.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

fn err(plot: &'static str) -> impl Fn(String) -> PlotError {
    move |message| PlotError { plot, message }
}

/// Encodes an RGB buffer as PNG with the marker chunk.
fn encode(rgb: &[u8], w: u32, h: u32, plot: &'static str) -> Result<Vec<u8>, PlotError> {
    let e = err(plot);
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.add_text_chunk(
        "Software".into(),
        format!(
            "\n# {} (comparison report plot)\n",
            crate::io::GENERATED_MARKER
        ),
    )
    .map_err(|x| e(x.to_string()))?;
    let mut writer = enc.write_header().map_err(|x| e(x.to_string()))?;
    writer.write_image_data(rgb).map_err(|x| e(x.to_string()))?;
    writer.finish().map_err(|x| e(x.to_string()))?;
    Ok(out)
}

/// Mean latency against IOPS as iodepth grows, one curve per variant, the latency target
/// as a dashed line and each knee as a circle. The latency axis stops at four times the
/// target (the knee region; the saturated tails go off the top).
pub fn hockey_png(r: &ComparisonReport, w: u32, h: u32) -> Result<Vec<u8>, PlotError> {
    register_font();
    let e = err("latency against IOPS");
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let target_ms = r.latency_target_secs * 1e3;
        let x_max = r
            .variants
            .iter()
            .flat_map(|v| &v.curve)
            .filter(|p| p.latency_mean_secs * 1e3 <= 4.0 * target_ms)
            .map(|p| p.iops)
            .fold(0.0_f64, f64::max)
            .max(1.0)
            * 1.1;
        let y_max = 4.0 * target_ms;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Mean latency against IOPS as iodepth grows (target {})",
                    eng(r.latency_target_secs, Quantity::Seconds)
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(|x| e(x.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("throughput (IOPS)")
            .y_desc("mean latency (ms)")
            .x_label_formatter(&|v| eng(*v, Quantity::Plain))
            .y_label_formatter(&|v| format!("{v:.1}"))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, target_ms), (x_max, target_ms)],
                8,
                5,
                TARGET.stroke_width(2),
            ))
            .map_err(|x| e(x.to_string()))?
            .label(format!(
                "latency target {}",
                eng(r.latency_target_secs, Quantity::Seconds)
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], TARGET.stroke_width(2)));
        for (i, v) in r.variants.iter().enumerate() {
            let c = COLOURS[i % COLOURS.len()];
            let pts: Vec<(f64, f64)> = v
                .curve
                .iter()
                .map(|p| (p.iops, p.latency_mean_secs * 1e3))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(|x| e(x.to_string()))?
                .label(v.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(|x| e(x.to_string()))?;
            if let (Some(kx), Some(kr)) = (v.knee.iops, v.knee.latency_mean_secs) {
                chart
                    .draw_series(std::iter::once(Circle::new(
                        (kx, kr * 1e3),
                        7,
                        c.stroke_width(3),
                    )))
                    .map_err(|x| e(x.to_string()))?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    encode(&buf, w, h, "latency against IOPS")
}

/// Most resources shown per variant in the utilisation plot.
pub const TOP_RESOURCES: usize = 6;

/// Utilisation of each variant's busiest resources at its own load: per variant a heading
/// row and one horizontal bar (0–100 %) per resource, the bottleneck first.
pub fn utilisation_png(r: &ComparisonReport, w: u32) -> Result<Vec<u8>, PlotError> {
    register_font();
    let e = err("utilisation");
    // (label, utilisation or None for a heading, colour index)
    let mut rows: Vec<(String, Option<f64>, usize)> = Vec::new();
    for (i, v) in r.variants.iter().enumerate() {
        rows.push((v.name.clone(), None, i));
        let mut u: Vec<(&String, &f64)> = v.utilization.iter().collect();
        u.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        rows.extend(
            u.into_iter()
                .take(TOP_RESOURCES)
                .map(|(k, x)| (k.clone(), Some(*x), i)),
        );
    }
    let h = (90 + 24 * rows.len() as u32).max(160);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let n = rows.len().max(1) as f64;
        // Names are drawn left of 0 %, in the chart's own coordinates.
        let left = -45.0;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Utilisation at each variant's own load (busiest resources)",
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .build_cartesian_2d(left..105.0, 0.0..n)
            .map_err(|x| e(x.to_string()))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc("utilisation (%)")
            .x_label_formatter(&|v| {
                if *v < 0.0 {
                    String::new()
                } else {
                    format!("{v:.0}")
                }
            })
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        for (k, (label, u, i)) in rows.iter().enumerate() {
            let top = n - k as f64;
            let c = COLOURS[i % COLOURS.len()];
            match u {
                None => {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            label.clone(),
                            (left + 1.0, top - 0.2),
                            ("sans-serif", 15).into_font().color(&c),
                        )))
                        .map_err(|x| e(x.to_string()))?;
                }
                Some(u) => {
                    let pct = u * 100.0;
                    chart
                        .draw_series([Rectangle::new(
                            [(0.0, top - 0.8), (pct, top - 0.15)],
                            c.filled(),
                        )])
                        .map_err(|x| e(x.to_string()))?;
                    chart
                        .draw_series([
                            Text::new(
                                label.clone(),
                                (left + 4.0, top - 0.25),
                                ("sans-serif", 13).into_font(),
                            ),
                            Text::new(
                                format!("{pct:.0} %"),
                                ((pct + 1.0).min(96.0), top - 0.25),
                                ("sans-serif", 13).into_font(),
                            ),
                        ])
                        .map_err(|x| e(x.to_string()))?;
                }
            }
        }
        root.present().map_err(|x| e(x.to_string()))?;
    }
    encode(&buf, w, h, "utilisation")
}
