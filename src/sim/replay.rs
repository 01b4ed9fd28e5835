//! `karpenter-sim replay`'s table and CSV: the totals of each run side by
//! side, and the timeline one row per step and run.

use std::fmt::Write as _;

use crate::replay::{Output, REASONS, Run};

/// The totals of every run, one column each, with the difference of the
/// second from the first when there are two.
pub fn replay_table(output: &Output) -> String {
    let runs = &output.runs;
    let mut rows: Vec<(String, Vec<f64>, usize)> = vec![
        (
            "cost".into(),
            runs.iter().map(|r| r.totals.cost).collect(),
            2,
        ),
        (
            "node-hours".into(),
            runs.iter().map(|r| r.totals.node_hours).collect(),
            1,
        ),
        (
            "launches".into(),
            runs.iter().map(|r| r.totals.launches as f64).collect(),
            0,
        ),
    ];
    for reason in REASONS {
        rows.push((
            format!("disrupted: {reason}"),
            runs.iter()
                .map(|r| r.totals.disruptions.get(reason).copied().unwrap_or(0) as f64)
                .collect(),
            0,
        ));
    }
    rows.push((
        "pending pod-minutes".into(),
        runs.iter().map(|r| r.totals.pod_minutes_pending).collect(),
        1,
    ));
    rows.push((
        "longest pending (s)".into(),
        runs.iter()
            .map(|r| r.totals.max_pending_seconds as f64)
            .collect(),
        0,
    ));
    let mut header: Vec<String> = runs.iter().map(|r| r.flags.clone()).collect();
    let compare = runs.len() == 2;
    if compare {
        header.push("difference".into());
    }
    let label_width = rows.iter().map(|(l, _, _)| l.len()).max().unwrap_or(0);
    // Each column as wide as its header, and at least 10.
    let widths: Vec<usize> = header.iter().map(|h| h.len().max(10)).collect();
    let mut out = String::new();
    let _ = write!(out, "{:label_width$}", "");
    for (h, width) in header.iter().zip(&widths) {
        let _ = write!(out, "  {h:>width$}");
    }
    out.push('\n');
    for (label, values, decimals) in &rows {
        let _ = write!(out, "{label:label_width$}");
        for (v, width) in values.iter().zip(&widths) {
            let _ = write!(out, "  {v:>width$.decimals$}");
        }
        if compare {
            let delta = values[1] - values[0];
            let width = widths[2];
            let _ = write!(out, "  {delta:>+width$.decimals$}");
        }
        out.push('\n');
    }
    for run in runs {
        for warning in &run.warnings {
            let _ = writeln!(out, "warning ({}): {warning}", run.flags);
        }
    }
    out
}

/// Quotes a CSV field when it needs it.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The timeline of every run as CSV: a header, then one row per step and
/// run (the runs one after the other).
pub fn replay_csv(output: &Output) -> String {
    let mut out = String::from(
        "run,time,pricePerHour,nodes,onDemandNodes,spotNodes,reservedNodes,pendingPods,podsRunning,launched,disrupted\n",
    );
    for run in &output.runs {
        write_rows(&mut out, run);
    }
    out
}

fn write_rows(out: &mut String, run: &Run) {
    let flags = field(&run.flags);
    for sample in &run.timeline {
        let by = |ct: &str| sample.nodes_by_capacity_type.get(ct).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{flags},{},{},{},{},{},{},{},{},{},{}",
            sample.time,
            sample.price_per_hour,
            sample.nodes,
            by("on-demand"),
            by("spot"),
            by("reserved"),
            sample.pending_pods,
            sample.pods_running,
            sample.launched,
            sample.disrupted
        );
    }
}
