//! Figures as SVG, drawn with plotters (its SVG backend writes text as SVG
//! `<text>`, so no font files are needed on the machine).
//!
//! One layout so far: a grid of panels, each a set of labelled series over
//! a shared kind of x axis, with one series drawn emphasized (the policy a
//! figure is about). Invariants: a panel with no points is drawn empty with
//! its title (never skipped, so the grid keeps its shape); the y range
//! covers every point of the figure with a margin, the same for all panels
//! so they compare at a glance.

use std::path::Path;

use plotters::prelude::*;

/// One line of a panel.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn thick and first in the legend.
    pub emphasized: bool,
}

/// One panel of a grid.
#[derive(Clone, Debug)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub series: Vec<Series>,
}

/// A palette that stays apart on white for a dozen series.
const PALETTE: [RGBColor; 11] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(152, 223, 138),
];
const EMPHASIS: RGBColor = RGBColor(214, 39, 40);

fn plot_err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot draw {}: {e}", path.display())
}

/// Draws a panel's lines and points (generic over the x axis: linear or
/// logarithmic).
fn draw_series<X>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    series: &[Series],
    color_of: &dyn Fn(&str) -> RGBColor,
    path: &Path,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
{
    for s in series {
        let color = color_of(&s.label);
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: true,
            stroke_width: if s.emphasized { 3 } else { 1 },
        };
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| plot_err(path, e))?;
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, if s.emphasized { 4 } else { 2 }, color.filled())),
            )
            .map_err(|e| plot_err(path, e))?;
    }
    Ok(())
}

/// One panel on `builder`'s area: axes over `x` and `y`, then its series
/// (generic over a linear or logarithmic x axis).
fn draw_panel<X>(
    mut builder: ChartBuilder<'_, '_, SVGBackend<'_>>,
    x: X,
    y: std::ops::Range<f64>,
    panel: &Panel,
    y_label: &str,
    color_of: &dyn Fn(&str) -> RGBColor,
    path: &Path,
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    X::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut chart = builder.build_cartesian_2d(x, y).map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(&panel.x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    draw_series(&mut chart, &panel.series, color_of, path)
}

/// Draws `panels` in a grid of three columns into an SVG file at `path`,
/// with one legend (series labels in first-seen order) under the grid.
pub fn panels_svg(path: &Path, panels: &[Panel], y_label: &str) -> Result<(), String> {
    const COLUMNS: usize = 3;
    const PANEL_W: u32 = 420;
    const PANEL_H: u32 = 300;
    const LEGEND_H: u32 = 90;
    let rows = panels.len().div_ceil(COLUMNS).max(1);
    let width = PANEL_W * COLUMNS as u32;
    let height = PANEL_H * rows as u32 + LEGEND_H;

    let mut labels: Vec<(String, bool)> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.series) {
        if !labels.iter().any(|(l, _)| *l == s.label) {
            labels.push((s.label.clone(), s.emphasized));
        }
    }
    let color_of = |label: &str| -> RGBColor {
        match labels.iter().position(|(l, _)| l == label) {
            Some(_) if labels.iter().any(|(l, e)| l == label && *e) => EMPHASIS,
            Some(i) => PALETTE[i % PALETTE.len()],
            None => PALETTE[0],
        }
    };
    let all = || panels.iter().flat_map(|p| &p.series).flat_map(|s| &s.points);
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all() {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if x_min > x_max {
        (x_min, x_max, y_min, y_max) = (0.0, 1.0, 0.0, 1.0);
    }
    let y_pad = ((y_max - y_min) * 0.08).max(0.02);
    let (y_lo, y_hi) = ((y_min - y_pad).max(0.0), y_max + y_pad);
    // Sizes doubling (1, 2, 4, 8 %) read best on a log axis.
    let log_x = x_min > 0.0 && x_max / x_min >= 4.0;
    let (x_lo, x_hi) = if log_x {
        (x_min / 1.25, x_max * 1.25)
    } else {
        let pad = ((x_max - x_min) * 0.05).max(0.5);
        (x_min - pad, x_max + pad)
    };

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (grid, legend) = root.split_vertically(PANEL_H * rows as u32);
    let areas = grid.split_evenly((rows, COLUMNS));
    for (area, panel) in areas.iter().zip(panels) {
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(&panel.title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(48);
        if log_x {
            draw_panel(
                builder,
                (x_lo..x_hi).log_scale(),
                y_lo..y_hi,
                panel,
                y_label,
                &color_of,
                path,
            )?;
        } else {
            draw_panel(builder, x_lo..x_hi, y_lo..y_hi, panel, y_label, &color_of, path)?;
        }
    }
    // The legend: emphasized series first, then in first-seen order.
    let mut ordered: Vec<&(String, bool)> = labels.iter().filter(|(_, e)| *e).collect();
    ordered.extend(labels.iter().filter(|(_, e)| !*e));
    let per_row = 6;
    for (i, (label, emphasized)) in ordered.iter().enumerate() {
        let x = 20 + (i % per_row) as i32 * (width as i32 - 40) / per_row as i32;
        let y = 15 + (i / per_row) as i32 * 22;
        let color = color_of(label);
        legend
            .draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                ShapeStyle {
                    color: color.to_rgba(),
                    filled: true,
                    stroke_width: if *emphasized { 3 } else { 1 },
                },
            ))
            .map_err(|e| plot_err(path, e))?;
        legend
            .draw(&Text::new(label.clone(), (x + 30, y - 7), ("sans-serif", 13)))
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_of_panels_is_an_svg_with_every_title_and_label() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grid.svg");
        let panel = |title: &str, k: f64| Panel {
            title: title.into(),
            x_label: "pool (% of data)".into(),
            series: vec![
                Series {
                    label: "flushwise".into(),
                    points: vec![(1.0, 1.0 * k), (2.0, 0.99), (4.0, 1.01), (8.0, 1.0)],
                    emphasized: true,
                },
                Series {
                    label: "mysql56".into(),
                    points: vec![(1.0, 0.4), (8.0, 0.6)],
                    emphasized: false,
                },
            ],
        };
        let panels = vec![
            panel("ssd · io", 1.0),
            panel("hdd · io", 0.9),
            Panel {
                title: "empty".into(),
                x_label: "x".into(),
                series: vec![],
            },
        ];
        panels_svg(&path, &panels, "NOPM / oracle").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        for text in ["ssd · io", "hdd · io", "empty", "flushwise", "mysql56", "NOPM / oracle"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn an_unwritable_path_is_an_error_naming_it() {
        let err = panels_svg(Path::new("/nonexistent-dir/x.svg"), &[], "y").unwrap_err();
        assert!(err.contains("/nonexistent-dir/x.svg"), "{err}");
    }
}
