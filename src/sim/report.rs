//! `karpenter-sim replay --html`: one self-contained page (the charts
//! inline, the totals side by side, every event), with no script and no
//! link, so it opens in any browser without a network.

use std::fmt::Write as _;

use super::charts::Chart;
use super::replay::totals_rows;
use crate::replay::{Output, ReplayEvent, Run};

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1000px;color:#222;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#555;margin-top:0}table{border-collapse:collapse;font-size:.9rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right}th:first-child,td:first-child{text-align:left}
thead th{background:#f6f6f6}.chart svg{max-width:100%;height:auto}details{margin:.6rem 0}
summary{cursor:pointer;font-weight:600}.events td{text-align:left;font-family:ui-monospace,monospace;font-size:.8rem}";

/// The totals of every run, as rows of a table.
fn totals(out: &mut String, runs: &[Run]) {
    out.push_str("<table class=\"totals\"><thead><tr><th></th>");
    for run in runs {
        let _ = write!(out, "<th>{}</th>", escape(&run.flags));
    }
    if runs.len() == 2 {
        out.push_str("<th>difference</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for (label, values, decimals) in totals_rows(runs) {
        let _ = write!(out, "<tr><td>{}</td>", escape(&label));
        for v in &values {
            let _ = write!(out, "<td>{v:.decimals$}</td>");
        }
        if values.len() == 2 {
            let _ = write!(out, "<td>{:+.decimals$}</td>", values[1] - values[0]);
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
}

/// One run's events, as a table in a `<details>`.
fn events(out: &mut String, run: &Run) {
    let _ = write!(
        out,
        "<details><summary>{} ({} events)</summary><table class=\"events\"><thead><tr><th>time</th><th>event</th></tr></thead><tbody>",
        escape(&run.flags),
        run.events.len()
    );
    for event in &run.events {
        let (time, text) = match event {
            ReplayEvent::Launch {
                time,
                node_claim,
                node_pool,
                instance_type,
                zone,
                capacity_type,
                price,
            } => (
                time,
                format!(
                    "launch {node_claim} ({node_pool}): {instance_type} {zone} {capacity_type} {price}/h"
                ),
            ),
            ReplayEvent::Disrupt {
                time,
                reason,
                candidates,
                replacements,
                savings_per_hour,
                by,
                held_since,
            } => {
                let held = held_since
                    .map(|since| format!(" (held since {since})"))
                    .unwrap_or_default();
                (
                    time,
                    format!(
                        "{reason} by {by}: {} replaced by {replacements}, saving {savings_per_hour}/h{held}",
                        candidates.join(", ")
                    ),
                )
            }
        };
        let _ = write!(out, "<tr><td>{time}</td><td>{}</td></tr>", escape(&text));
    }
    out.push_str("</tbody></table></details>\n");
    if !run.dropped.is_empty() {
        let _ = write!(
            out,
            "<details><summary>{} ({} commands dropped at their check)</summary><table class=\"events\"><thead><tr><th>time</th><th>command</th></tr></thead><tbody>",
            escape(&run.flags),
            run.dropped.len()
        );
        for dropped in &run.dropped {
            let text = format!(
                "{} command dropped at its check ({}): {}; held since {}: {}",
                dropped.reason,
                dropped.failure,
                dropped.candidates.join(", "),
                dropped.held_since,
                dropped.why
            );
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td></tr>",
                dropped.time,
                escape(&text)
            );
        }
        out.push_str("</tbody></table></details>\n");
    }
    for warning in &run.warnings {
        let _ = writeln!(out, "<p>warning: {}</p>", escape(warning));
    }
}

/// The replay's report: a page with the totals, `charts` inline and the
/// events of every run.
pub fn replay_html(output: &Output, charts: &[Chart]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>karpenter-sim replay</title>\n<style>\n",
    );
    out.push_str(STYLE);
    out.push_str("\n</style>\n</head>\n<body>\n<h1>karpenter-sim replay</h1>\n");
    if let Some(first) = output.runs.first() {
        let _ = writeln!(
            out,
            "<p class=\"meta\">From {} for {} steps of {} s; {} run(s).</p>",
            first.start,
            first.timeline.len(),
            first.step_seconds,
            output.runs.len()
        );
    }
    out.push_str("<h2>Totals</h2>\n");
    totals(&mut out, &output.runs);
    out.push_str("<h2>Over time</h2>\n");
    for chart in charts {
        // The SVG's own XML declaration has no place inside HTML.
        let svg = chart
            .svg
            .trim_start()
            .strip_prefix("<?xml")
            .and_then(|rest| rest.split_once("?>").map(|(_, svg)| svg))
            .unwrap_or(&chart.svg);
        let _ = writeln!(
            out,
            "<figure class=\"chart\" aria-label=\"{}\">{}</figure>",
            escape(chart.title),
            svg.trim()
        );
    }
    out.push_str("<h2>Events</h2>\n");
    for run in &output.runs {
        events(&mut out, run);
    }
    out.push_str("</body>\n</html>\n");
    out
}
