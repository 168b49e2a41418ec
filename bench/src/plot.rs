//! Line charts as one SVG document: a grid of panels, each a cartesian chart of a few named
//! series, with a footer line under them (`chart.svg` is one; drawn with plotters).
//!
//! ```text
//! let panel = Panel {
//!     title: "latency vs gap".into(),
//!     x_label: "gap".into(),
//!     y_label: "latency (us)".into(),
//!     y_log: true,
//!     x_names: vec!["0".into(), "50us".into(), "1ms".into()], // a categorical x axis
//!     series: vec![Series {
//!         name: "spinpark p50".into(),
//!         color: SPINPARK,
//!         dashed: false,
//!         points: vec![(0.0, 31.0), (1.0, 33.5), (2.0, 40.2)],
//!     }],
//!     ..Panel::default()
//! };
//! std::fs::write("chart.svg", plot::svg(&[panel], 2, "machine | settings"))?;
//! ```
//!
//! Each panel gets a `PANEL_W` x `PANEL_H` cell, filled row by row. Its axes span the data with
//! a margin (5% of the span on a linear axis; on a log one, 5% of the decades, then out to the
//! 1-2-5 steps around, which are its labelled ticks), leaving out points that cannot be drawn:
//! non-finite ones, and on a log axis the ones at or below zero (a line breaks there). A panel
//! with nothing left shows its title and "no data". Every series is a line with a dot per
//! point, dashed if asked, and has its name in the legend. A panel with `x_names` has a
//! categorical x axis, its names written downwards when they would not fit side by side.

use std::error::Error;
use std::ops::Range;

use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The colour of spinpark's series.
pub const SPINPARK: RGBColor = RGBColor(0xd9, 0x48, 0x0f);
/// The colour of tokio's series.
pub const TOKIO: RGBColor = RGBColor(0x1c, 0x7e, 0xd6);

const PANEL_W: u32 = 540;
const PANEL_H: u32 = 400;
const FOOTER_H: u32 = 30;
const FONT: &str = "sans-serif";
/// About the width of a character of a 14-pixel label (drawn 11 pixels high in the SVG).
const LABEL_CHAR_W: usize = 6;

/// One line of a panel: `points` are `(x, y)`, drawn in order.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// One chart of the grid.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    pub series: Vec<Series>,
    /// A categorical x axis when not empty: x values are indices into it (0, 1, ...), the axis
    /// is linear from -0.5 to `len - 0.5` (`x_log` is ignored) and shows these names.
    pub x_names: Vec<String>,
}

impl Panel {
    /// Whether the x axis is logarithmic (never for a categorical one).
    fn x_log(&self) -> bool {
        self.x_log && self.x_names.is_empty()
    }

    /// The stretches of `s` that can be drawn: split at the points that cannot (see the
    /// module docs).
    fn segments<'a>(&self, s: &'a Series) -> impl Iterator<Item = &'a [(f64, f64)]> {
        let (lx, ly) = (self.x_log(), self.y_log);
        s.points
            .split(move |&(x, y)| !(drawable(x, lx) && drawable(y, ly)))
            .filter(|seg| !seg.is_empty())
    }

    /// The x and y ranges of the drawable points, `None` if there are none.
    fn ranges(&self) -> Option<(Range<f64>, Range<f64>)> {
        let points = || self.series.iter().flat_map(|s| self.segments(s)).flatten();
        let y = span(points().map(|p| p.1), self.y_log)?;
        let x = if self.x_names.is_empty() {
            span(points().map(|p| p.0), self.x_log())?
        } else {
            // Every category, half a step either side, and any point beyond them.
            let last = self.x_names.len() as f64 - 1.0;
            let (lo, hi) = points().fold((0.0f64, last), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
            lo - 0.5..hi + 0.5
        };
        Some((x, y))
    }
}

fn drawable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// The range of `values` (all drawable) with a margin; `None` if empty.
fn span(values: impl Iterator<Item = f64>, log: bool) -> Option<Range<f64>> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (start, end) = if lo > hi {
        return None;
    } else if log {
        // Out to the 1-2-5 steps around, so that the axis has labelled ticks at both ends.
        let m = ((hi / lo).log10() * 0.05).max(0.02);
        let (lo, hi) = (lo / 10f64.powf(m), hi * 10f64.powf(m));
        let steps = || log_steps(lo, hi, &[1.0, 2.0, 5.0]);
        let start = steps().take_while(|&v| v <= lo).last().unwrap_or(lo);
        (start, steps().find(|&v| v >= hi).unwrap_or(hi))
    } else if hi > lo {
        let m = (hi - lo) * 0.05;
        (lo - m, hi + m)
    } else {
        let m = (lo.abs() * 0.1).max(1.0);
        (lo - m, hi + m)
    };
    (start.is_finite() && end.is_finite() && start < end).then_some(start..end)
}

/// `m x 10^k` for each `m` of `mantissas` and every `k` from a decade under `lo` to a decade
/// over `hi`, ascending.
fn log_steps(lo: f64, hi: f64, mantissas: &[f64]) -> impl Iterator<Item = f64> + '_ {
    let (a, b) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    (a..=b).flat_map(move |k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
}

/// A log axis over `r` (see [`span`]) with a labelled tick at each 1-2-5 step (each power of
/// ten over more than 5 decades) and a mesh line at each 1-9 step (up to 3 decades).
fn log_axis(r: Range<f64>) -> WithKeyPoints<LogCoord<f64>> {
    let decades = (r.end / r.start).log10();
    let within = |m: &[f64]| -> Vec<f64> {
        let (lo, hi) = (r.start * (1.0 - 1e-9), r.end * (1.0 + 1e-9));
        log_steps(r.start, r.end, m)
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let bold = within(if decades > 5.0 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    });
    let light = if decades > 3.0 {
        bold.clone()
    } else {
        within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    };
    r.log_scale().with_key_points(bold).with_light_points(light)
}

/// Draws `panels` in a grid of `columns` columns (fewer if there are fewer panels), with
/// `footer` under them, and returns the SVG document.
pub fn svg(panels: &[Panel], columns: usize, footer: &str) -> String {
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let mut out = String::new();
    if let Err(e) = draw(&mut out, panels, (rows, columns), footer) {
        // Writing to a String does not fail, but a chart is not worth a panic.
        eprintln!("plot: drawing the chart failed: {e}");
    }
    out
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn draw(
    out: &mut String,
    panels: &[Panel],
    (rows, columns): (usize, usize),
    footer: &str,
) -> Result<(), Box<dyn Error>> {
    let grid_h = PANEL_H * rows as u32;
    let root = SVGBackend::with_string(out, (PANEL_W * columns as u32, grid_h + FOOTER_H))
        .into_drawing_area();
    root.fill(&WHITE)?;
    let (grid, foot) = root.split_vertically(grid_h);
    for (area, p) in grid.split_evenly((rows, columns)).iter().zip(panels) {
        panel(area, p)?;
    }
    let grey = RGBColor(0x55, 0x55, 0x55);
    foot.draw_text(footer, &(FONT, 14).into_font().color(&grey), (10, 8))?;
    root.present()?;
    Ok(())
}

/// One panel, with the coordinate types its axes ask for.
fn panel(area: &Area, p: &Panel) -> Result<(), Box<dyn Error>> {
    let Some((x, y)) = p.ranges() else {
        let (w, h) = area.dim_in_pixel();
        let centre = |size| {
            TextStyle::from((FONT, size).into_font()).pos(Pos::new(HPos::Center, VPos::Center))
        };
        area.draw_text(&p.title, &centre(16), (w as i32 / 2, 20))?;
        area.draw_text("no data", &centre(14), (w as i32 / 2, h as i32 / 2))?;
        return Ok(());
    };
    match (p.x_log(), p.y_log) {
        (false, false) => chart(area, p, x, y),
        (false, true) => chart(area, p, x, log_axis(y)),
        (true, false) => chart(area, p, log_axis(x), y),
        (true, true) => chart(area, p, log_axis(x), log_axis(y)),
    }
}

fn chart<X, Y>(area: &Area, p: &Panel, x: X, y: Y) -> Result<(), Box<dyn Error>>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    // Category names too long to sit side by side are drawn downwards, below the axis.
    let longest = p
        .x_names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0);
    let vertical = longest * LABEL_CHAR_W * p.x_names.len() > PANEL_W as usize - 120;
    let label_h = if vertical {
        50 + longest * LABEL_CHAR_W
    } else {
        45
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 18))
        .margin(10)
        .margin_right(20)
        .x_label_area_size(label_h as u32)
        .y_label_area_size(65)
        .build_cartesian_2d(x, y)?;
    let x_label = |v: &f64| match p.x_names.as_slice() {
        [] => number(*v),
        _ if vertical => String::new(),
        names => category(names, *v),
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| number(*v));
    if !p.x_names.is_empty() {
        // One label per category, and not the halves between them.
        mesh.x_labels(p.x_names.len()).disable_x_mesh();
    }
    mesh.draw()?;
    if vertical {
        let (x0, y0) = area.get_base_pixel();
        let y = chart.y_range().start;
        let style = TextStyle::from((FONT, 14).into_font())
            .transform(FontTransform::Rotate90)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, name) in p.x_names.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, y));
            area.draw_text(name, &style, (px - x0, py - y0 + 8))?;
        }
    }
    for s in &p.series {
        let style = ShapeStyle::from(s.color).stroke_width(2);
        for seg in p.segments(s) {
            let points = seg.iter().copied();
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(points, 6, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(points, style))?;
            }
        }
        let dots = p.segments(s).flatten();
        let dashed = s.dashed;
        chart
            .draw_series(dots.map(|&xy| Circle::new(xy, 3, s.color.filled())))?
            .label(s.name.as_str())
            .legend(move |(x, y)| {
                let line = vec![(x, y), (x + 20, y)];
                if dashed {
                    DashedPathElement::new(line, 6, 4, style).into_dyn()
                } else {
                    PathElement::new(line, style).into_dyn()
                }
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// `v` with about 3 significant digits, without trailing zeros.
fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    } else if !v.is_finite() || !(1e-6..1e9).contains(&v.abs()) {
        return format!("{v:e}");
    }
    let decimals = (2.0 - v.abs().log10().floor()).clamp(0.0, 9.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').into()
    } else {
        s
    }
}

/// The name of category `v` if it is (close to) one, else nothing.
fn category(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len() {
        names[i as usize].clone()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color: SPINPARK,
            dashed: false,
            points,
        }
    }

    fn panel(title: &str, y_log: bool, series: Vec<Series>) -> Panel {
        Panel {
            title: title.into(),
            x_label: "x".into(),
            y_label: "y".into(),
            y_log,
            series,
            ..Panel::default()
        }
    }

    #[test]
    fn plot_names_every_series_and_panel() {
        let mut dashed = series("tokio p99", vec![(1.0, 40.0), (2.0, 80.0), (3.0, 70.0)]);
        dashed.color = TOKIO;
        dashed.dashed = true;
        let mut names = panel(
            "by mode",
            false,
            vec![series("ctx switches", vec![(0.0, 1.0)])],
        );
        names.x_names = vec!["sync T=1".into(), "gap 50us".into()];
        let panels = [
            panel(
                "latency",
                true,
                vec![
                    series("spinpark p50", vec![(1.0, 30.0), (2.0, 35.0)]),
                    dashed,
                ],
            ),
            names,
            panel(
                "third",
                false,
                vec![series("third series", vec![(0.5, -2.0)])],
            ),
        ];
        let svg = svg(&panels, 2, "a footer & more");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for name in [
            "latency",
            "by mode",
            "third",
            "spinpark p50",
            "tokio p99",
            "ctx switches",
        ] {
            assert!(svg.contains(name), "{name} missing");
        }
        assert!(svg.contains("third series") && svg.contains("gap 50us"));
        assert!(svg.contains("a footer &amp; more"));
        assert!(!svg.contains("no data"));
    }

    #[test]
    fn plot_nan_only_panel_says_no_data() {
        let nan = series(
            "nan",
            vec![(f64::NAN, 1.0), (2.0, f64::NAN), (f64::INFINITY, 3.0)],
        );
        let panels = [
            panel("all NaN", false, vec![nan]),
            panel("no series", true, vec![]),
            panel("empty series", false, vec![series("empty", vec![])]),
        ];
        let svg = svg(&panels, 3, "");
        assert_eq!(svg.matches("no data").count(), 3);
        assert!(svg.contains("all NaN") && svg.contains("no series"));
        assert!(svg.starts_with("<svg"));
        assert!(super::svg(&[], 2, "nothing").contains("nothing"));
    }

    #[test]
    fn plot_log_axis_skips_zero() {
        let mut p = panel("log with zero", true, vec![]);
        p.x_log = true;
        p.series = vec![series(
            "zeros",
            vec![
                (0.0, 5.0),
                (1.0, 0.0),
                (10.0, 50.0),
                (100.0, -1.0),
                (1000.0, 500.0),
            ],
        )];
        let only_zero = panel("only zero", true, vec![series("z", vec![(1.0, 0.0)])]);
        let svg = svg(&[p, only_zero], 2, "");
        assert!(svg.contains("log with zero") && svg.contains("zeros"));
        assert_eq!(svg.matches("no data").count(), 1);
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn plot_numbers_and_spans() {
        assert_eq!(number(25.0), "25");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(12345.0), "12345");
        assert_eq!(number(-0.0), "0");
        assert_eq!(span([30.0, 80.0].into_iter(), true), Some(20.0..100.0));
        assert_eq!(span([31.0, 34.0].into_iter(), true), Some(20.0..50.0));
        assert_eq!(span([2.0, 2.0].into_iter(), false), Some(1.0..3.0));
        assert_eq!(span(std::iter::empty(), false), None);
    }
}
