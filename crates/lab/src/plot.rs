//! Figures as SVG, drawn with plotters (its SVG backend writes text as SVG
//! `<text>`, so no font files are needed to draw), and their PNG copies,
//! rasterized from the SVG with resvg (which needs one sans-serif font on
//! the machine: DejaVu, Liberation, Noto or Arial).
//!
//! Two layouts: a grid of panels, each a set of labelled series over a
//! shared kind of x axis, with one series drawn emphasized (the policy a
//! figure is about) and the paper's own values drawn as hollow squares
//! without lines; and horizontal bars (a table's averages). Invariants: a
//! panel with no points is drawn empty with its title (never skipped, so
//! the grid keeps its shape); the y range covers every point of the
//! figure with a margin, the same for all panels so they compare at a
//! glance, unless the figure asks for one y range per panel (panels of
//! different quantities).

use std::path::Path;

use plotters::prelude::*;

/// One line of a panel.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn thick and first in the legend.
    pub emphasized: bool,
    /// The paper's values: hollow squares, no line.
    pub paper: bool,
}

impl Series {
    /// A line of our own results.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>, emphasized: bool) -> Series {
        Series {
            label: label.into(),
            points,
            emphasized,
            paper: false,
        }
    }

    /// The paper's values, as points.
    pub fn paper(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
            emphasized: false,
            paper: true,
        }
    }
}

/// One panel of a grid.
#[derive(Clone, Debug)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    /// The panel's own y label; `None`: the figure's.
    pub y_label: Option<String>,
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
        if s.paper {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| EmptyElement::at(p) + Rectangle::new([(-5, -5), (5, 5)], color.stroke_width(2))),
                )
                .map_err(|e| plot_err(path, e))?;
            continue;
        }
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
        .x_label_formatter(&|v: &f64| format_value(*v))
        .y_label_formatter(&|v: &f64| format_value(*v))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    draw_series(&mut chart, &panel.series, color_of, path)
}

/// How a figure of panels is laid out.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Panels per row (at most the number of panels).
    pub columns: usize,
    /// One y range for the whole figure (panels of one quantity) or one
    /// per panel.
    pub shared_y: bool,
    /// A logarithmic x axis when the x values span a factor of 4 or more
    /// and are all positive (sizes doubling); off for time.
    pub log_x_if_wide: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            columns: 3,
            shared_y: true,
            log_x_if_wide: true,
        }
    }
}

/// The (x, y) extent of `points`, or the unit square when there are none.
fn extent<'a>(points: impl Iterator<Item = &'a (f64, f64)>) -> (f64, f64, f64, f64) {
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if x_min > x_max {
        (0.0, 1.0, 0.0, 1.0)
    } else {
        (x_min, x_max, y_min, y_max)
    }
}

/// The y range drawn for values from `y_min` to `y_max`: a margin, and
/// zero kept as the floor of non-negative quantities.
fn y_range(y_min: f64, y_max: f64) -> (f64, f64) {
    let pad = ((y_max - y_min) * 0.08).max(y_max.abs() * 0.05).max(0.02);
    let lo = if y_min >= 0.0 { 0.0 } else { y_min - pad };
    (lo, y_max + pad)
}

/// Draws `panels` in a grid of three columns into an SVG file at `path`,
/// with one legend (series labels in first-seen order) under the grid.
pub fn panels_svg(path: &Path, panels: &[Panel], y_label: &str) -> Result<(), String> {
    panels_svg_with(path, panels, y_label, Layout::default())
}

/// [`panels_svg`] with a chosen layout.
pub fn panels_svg_with(path: &Path, panels: &[Panel], y_label: &str, layout: Layout) -> Result<(), String> {
    const PANEL_W: u32 = 420;
    const PANEL_H: u32 = 300;
    let columns = layout.columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let width = (PANEL_W * columns as u32).max(760);
    let panel_w = width / columns as u32;

    let mut labels: Vec<(String, bool, bool)> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.series) {
        if !labels.iter().any(|(l, _, _)| *l == s.label) {
            labels.push((s.label.clone(), s.emphasized, s.paper));
        }
    }
    // Legend entries side by side, each as wide as the longest label
    // (about 7 px a character at 13 px, plus the swatch).
    let longest = labels.iter().map(|(l, _, _)| l.chars().count()).max().unwrap_or(8);
    let per_row = ((width as usize - 40) / (longest * 7 + 50)).max(1);
    let legend_h = 20 + 22 * labels.len().div_ceil(per_row).max(1) as u32;
    let height = PANEL_H * rows as u32 + legend_h;
    // A paper series takes the colour of our series of the same policy
    // ("mysql56 (paper)" beside "mysql56"), so the two read as one.
    let base_of = |label: &str| -> String { label.trim_end_matches(" (paper)").to_string() };
    let lines: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for (l, _, _) in &labels {
            let b = base_of(l);
            if !v.contains(&b) {
                v.push(b);
            }
        }
        v
    };
    let emphasized: Vec<String> = labels
        .iter()
        .filter(|(_, e, _)| *e)
        .map(|(l, _, _)| base_of(l))
        .collect();
    let color_of = |label: &str| -> RGBColor {
        let base = base_of(label);
        if emphasized.contains(&base) {
            return EMPHASIS;
        }
        match lines.iter().position(|l| *l == base) {
            Some(i) => PALETTE[i % PALETTE.len()],
            None => PALETTE[0],
        }
    };
    let figure_extent = extent(panels.iter().flat_map(|p| &p.series).flat_map(|s| &s.points));
    let (x_min, x_max, _, _) = figure_extent;
    // Sizes doubling (1, 2, 4, 8 %) read best on a log axis.
    let log_x = layout.log_x_if_wide && x_min > 0.0 && x_max / x_min >= 4.0;
    let (x_lo, x_hi) = if log_x {
        (x_min / 1.25, x_max * 1.25)
    } else {
        let pad = ((x_max - x_min) * 0.05).max(0.5);
        (x_min - pad, x_max + pad)
    };

    let mut x_ticks: Vec<f64> = panels
        .iter()
        .flat_map(|p| &p.series)
        .flat_map(|s| &s.points)
        .map(|&(x, _)| x)
        .filter(|x| x.is_finite())
        .collect();
    x_ticks.sort_by(f64::total_cmp);
    x_ticks.dedup();

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (grid, legend) = root.split_vertically(PANEL_H * rows as u32);
    let areas = grid.split_evenly((rows, columns));
    for (area, panel) in areas.iter().zip(panels) {
        let (_, _, y_min, y_max) = if layout.shared_y {
            figure_extent
        } else {
            extent(panel.series.iter().flat_map(|s| &s.points))
        };
        let (y_lo, y_hi) = y_range(y_min, y_max);
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(&panel.title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(if panel_w < 400 { 52 } else { 60 });
        let y_text = panel.y_label.as_deref().unwrap_or(y_label);
        if log_x {
            draw_panel(
                builder,
                // Ticks at the data's x values: a log axis over less
                // than a decade would otherwise have no labelled tick.
                (x_lo..x_hi).log_scale().with_key_points(x_ticks.clone()),
                y_lo..y_hi,
                panel,
                y_text,
                &color_of,
                path,
            )?;
        } else {
            draw_panel(builder, x_lo..x_hi, y_lo..y_hi, panel, y_text, &color_of, path)?;
        }
    }
    // The legend: emphasized series first, then in first-seen order.
    let mut ordered: Vec<&(String, bool, bool)> = labels.iter().filter(|(_, e, _)| *e).collect();
    ordered.extend(labels.iter().filter(|(_, e, _)| !*e));
    for (i, (label, emphasized, paper)) in ordered.iter().enumerate() {
        let x = 20 + (i % per_row) as i32 * (width as i32 - 40) / per_row as i32;
        let y = 15 + (i / per_row) as i32 * 22;
        let color = color_of(label);
        if *paper {
            legend
                .draw(&Rectangle::new(
                    [(x + 7, y - 5), (x + 17, y + 5)],
                    color.stroke_width(2),
                ))
                .map_err(|e| plot_err(path, e))?;
        } else {
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
        }
        legend
            .draw(&Text::new(label.clone(), (x + 30, y - 7), ("sans-serif", 13)))
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))
}

/// One bar of [`bars_svg`]: a label and its value; `paper` bars are drawn
/// hollow.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub paper: bool,
}

/// Horizontal bars (a table's values by row) into an SVG file at `path`.
pub fn bars_svg(path: &Path, title: &str, x_label: &str, bars: &[Bar]) -> Result<(), String> {
    const WIDTH: u32 = 760;
    let height = 90 + 30 * bars.len().max(1) as u32;
    let max = bars
        .iter()
        .map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let x_hi = if max > 0.0 { max * 1.12 } else { 1.0 };
    let n = bars.len().max(1);
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let names: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(230)
        .build_cartesian_2d(0.0..x_hi, -0.5..(n as f64 - 0.5))
        .map_err(|e| plot_err(path, e))?;
    let label_of = |y: &f64| -> String {
        let i = y.round();
        if (y - i).abs() < 1e-6 && i >= 0.0 {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n * 2 + 1)
        .y_label_formatter(&label_of)
        .x_desc(x_label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    for (i, bar) in bars.iter().enumerate() {
        let y = i as f64;
        let color = if bar.paper { PALETTE[6] } else { PALETTE[0] };
        let style = if bar.paper {
            color.stroke_width(2)
        } else {
            color.filled()
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.35), (bar.value.max(0.0), y + 0.35)],
                style,
            )))
            .map_err(|e| plot_err(path, e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                format_value(bar.value),
                (bar.value.max(0.0) + x_hi * 0.01, y + 0.15),
                ("sans-serif", 12),
            )))
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))
}

/// A value for a label: no exponent, no trailing zeros, at most two
/// decimals below 10.
fn format_value(v: f64) -> String {
    let text = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Writes a PNG copy of the SVG at `svg`, beside it at `png`.
///
/// Text needs a sans-serif font: the first of DejaVu Sans, Liberation
/// Sans, Noto Sans and Arial the machine has (an error naming the fix
/// if it has none).
pub fn png_from_svg(svg: &Path, png: &Path) -> Result<(), String> {
    use resvg::{tiny_skia, usvg};
    let data = std::fs::read(svg).map_err(|e| format!("cannot read {}: {e}", svg.display()))?;
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    let family = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"]
        .into_iter()
        .find(|name| fonts.faces().any(|f| f.families.iter().any(|(fam, _)| fam == name)))
        .ok_or_else(|| {
            format!(
                "cannot draw {}: no sans-serif font on this machine (DejaVu, Liberation, Noto or Arial); \
                 install one (`apt-get install fonts-dejavu-core`); the SVG {} is complete",
                png.display(),
                svg.display()
            )
        })?;
    fonts.set_sans_serif_family(family);
    let tree = usvg::Tree::from_data(&data, &options).map_err(|e| format!("cannot parse {}: {e}", svg.display()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| format!("cannot draw {}: empty image {size:?}", png.display()))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.save_png(png).map_err(|e| plot_err(png, e))
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
            y_label: None,
            series: vec![
                Series::line(
                    "flushwise",
                    vec![(1.0, 1.0 * k), (2.0, 0.99), (4.0, 1.01), (8.0, 1.0)],
                    true,
                ),
                Series::line("mysql56", vec![(1.0, 0.4), (8.0, 0.6)], false),
                Series::paper("mysql56 (paper)", vec![(1.0, 0.5)]),
            ],
        };
        let panels = vec![
            panel("ssd · io", 1.0),
            panel("hdd · io", 0.9),
            Panel {
                title: "empty".into(),
                x_label: "x".into(),
                y_label: None,
                series: vec![],
            },
        ];
        panels_svg(&path, &panels, "NOPM / oracle").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        for text in [
            "ssd · io",
            "hdd · io",
            "empty",
            "flushwise",
            "mysql56",
            "mysql56 (paper)",
            "NOPM / oracle",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
        let png = dir.path().join("grid.png");
        png_from_svg(&path, &png).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // 1260 x (300 + legend) pixels: the width is in the IHDR chunk.
        assert_eq!(u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]), 1260);
    }

    #[test]
    fn bars_are_an_svg_naming_every_row_and_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bars.svg");
        let bars = vec![
            Bar {
                label: "db2 (2 cleaners)".into(),
                value: 1000.0,
                paper: false,
            },
            Bar {
                label: "db2 (2 cleaners), paper".into(),
                value: 1.15,
                paper: true,
            },
        ];
        bars_svg(&path, "Table 4", "NOPM", &bars).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in [
            "Table 4",
            "NOPM",
            "db2 (2 cleaners)",
            "db2 (2 cleaners), paper",
            "1000",
            "1.15",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn an_unwritable_path_is_an_error_naming_it() {
        let err = panels_svg(Path::new("/nonexistent-dir/x.svg"), &[], "y").unwrap_err();
        assert!(err.contains("/nonexistent-dir/x.svg"), "{err}");
    }
}
