//! `karpenter-sim replay`'s table and CSV: the totals of each run side by
//! side, and the timeline one row per step and run.

use std::fmt::Write as _;

use crate::replay::{Output, REASONS, Run};

/// One row of the totals: its label, a value per run, and how many
/// decimals to show.
pub(crate) type TotalsRow = (String, Vec<f64>, usize);

/// The totals of every run as rows, in the order the table and the report
/// show them.
pub(crate) fn totals_rows(runs: &[Run]) -> Vec<TotalsRow> {
    let column = |value: &dyn Fn(&Run) -> f64| runs.iter().map(value).collect::<Vec<f64>>();
    let mut rows: Vec<TotalsRow> = vec![
        ("cost".into(), column(&|r| r.totals.cost), 2),
        ("node-hours".into(), column(&|r| r.totals.node_hours), 1),
        ("launches".into(), column(&|r| r.totals.launches as f64), 0),
    ];
    for reason in REASONS {
        let count = |r: &Run| r.totals.disruptions.get(reason).copied().unwrap_or(0) as f64;
        rows.push((format!("disrupted: {reason}"), column(&count), 0));
    }
    rows.push((
        "pending pod-minutes".into(),
        column(&|r| r.totals.pod_minutes_pending),
        1,
    ));
    rows.push((
        "longest pending (s)".into(),
        column(&|r| r.totals.max_pending_seconds as f64),
        0,
    ));
    rows
}

/// The totals of every run, one column each, with the difference of the
/// second from the first when there are two.
pub fn replay_table(output: &Output) -> String {
    let runs = &output.runs;
    let rows = totals_rows(runs);
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
