//! `karpenter-sim replay --svg`: the replay's charts (price per hour, nodes
//! by capacity type, pending pods, disruptions over time), one line per run
//! on shared axes, drawn as SVG text.

use plotters::prelude::*;

use crate::replay::{Output, Run, Sample};

/// One chart of a replay: its file name and its SVG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chart {
    /// The file it is written to under `--svg DIR` (`price.svg`, ...).
    pub file: &'static str,
    /// What it shows.
    pub title: &'static str,
    /// The SVG document.
    pub svg: String,
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing the {chart} chart: {message}")]
pub struct ChartError {
    /// Which chart.
    pub chart: &'static str,
    /// What went wrong.
    pub message: String,
}

/// The width and height of each chart, in pixels.
const SIZE: (u32, u32) = (960, 380);

/// Line colours, one per series in turn (Tableau's ten, distinct for most
/// eyes).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// A line: its legend label and its points (hours since the start, value).
struct Series {
    label: String,
    points: Vec<(f64, f64)>,
}

/// Hours since the run's start of each sample.
fn hours(run: &Run, sample: &Sample) -> f64 {
    sample.time.duration_since(run.start).as_secs_f64() / 3600.0
}

fn series_of(
    output: &Output,
    label: impl Fn(&Run) -> String,
    value: impl Fn(&Sample) -> f64,
) -> Vec<Series> {
    output
        .runs
        .iter()
        .map(|run| Series {
            label: label(run),
            points: run
                .timeline
                .iter()
                .map(|s| (hours(run, s), value(s)))
                .collect(),
        })
        .collect()
}

/// Draws a line chart of `series` on shared axes, the y axis labelled with
/// `decimals` decimals.
fn draw(
    file: &'static str,
    title: &'static str,
    y_label: &str,
    decimals: usize,
    series: &[Series],
) -> Result<Chart, ChartError> {
    let error = |e: &dyn std::fmt::Display| ChartError {
        chart: title,
        message: e.to_string(),
    };
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1.0 / 60.0);
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    // Room above the highest point for the legend, and an axis even for
    // an all-zero line.
    let y_top = if y_max > 0.0 { y_max * 1.35 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_max, 0.0..y_top)
            .map_err(|e| error(&e))?;
        chart
            .configure_mesh()
            .x_desc("hours since the start")
            .y_desc(y_label)
            .x_label_formatter(&|h| format!("{h:.0}h"))
            .y_label_formatter(&|v| format!("{v:.decimals$}"))
            .light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(|e| error(&e))?;
        for (i, line) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| error(&e))?
                .label(line.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| error(&e))?;
        root.present().map_err(|e| error(&e))?;
    }
    Ok(Chart { file, title, svg })
}

/// The four charts of a replay, every run a line (or, for nodes, a line
/// per run and capacity type) on shared axes.
pub fn replay_charts(output: &Output) -> Result<Vec<Chart>, ChartError> {
    let flags = |run: &Run| run.flags.clone();
    let price = series_of(output, flags, |s| s.price_per_hour);
    let pending = series_of(output, flags, |s| s.pending_pods as f64);
    let mut disruptions = Vec::new();
    for run in &output.runs {
        let mut total = 0.0;
        disruptions.push(Series {
            label: run.flags.clone(),
            points: run
                .timeline
                .iter()
                .map(|s| {
                    total += s.disrupted as f64;
                    (hours(run, s), total)
                })
                .collect(),
        });
    }
    let mut nodes = Vec::new();
    for run in &output.runs {
        let mut kinds: Vec<&str> = run
            .timeline
            .iter()
            .flat_map(|s| s.nodes_by_capacity_type.keys().map(String::as_str))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in kinds {
            nodes.push(Series {
                label: format!("{} ({kind})", run.flags),
                points: run
                    .timeline
                    .iter()
                    .map(|s| {
                        let count = s.nodes_by_capacity_type.get(kind).copied().unwrap_or(0);
                        (hours(run, s), count as f64)
                    })
                    .collect(),
            });
        }
    }
    Ok(vec![
        draw("price.svg", "Price per hour", "price per hour", 2, &price)?,
        draw("nodes.svg", "Nodes by capacity type", "nodes", 0, &nodes)?,
        draw("pending.svg", "Pending pods", "pending pods", 0, &pending)?,
        draw(
            "disruptions.svg",
            "Nodes disrupted, cumulative",
            "nodes disrupted",
            0,
            &disruptions,
        )?,
    ])
}
