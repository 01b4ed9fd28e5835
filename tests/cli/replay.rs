//! `karpenter-sim replay` as a user runs it: the JSON and CSV of the
//! contract, `--compare`, byte-for-byte determinism, and bad input (exit 2,
//! naming the file, the document and the field).

use std::process::{Command, Output};

use serde_json::Value;

fn path(relative: &str) -> String {
    format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"))
}

const CLUSTER: &str = "examples/replay/cluster.yaml";
const WORKDAY: &str = "examples/replay/workday.yaml";

fn sim(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_karpenter-sim"))
        .args(args)
        .output()
        .expect("run karpenter-sim");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    output
}

/// Three busy hours (07:00 to 10:00) on the example cluster: a scale-up,
/// an interruption, a failure, a drift roll, random batch jobs.
fn morning(extra: &[&str]) -> Output {
    let cluster = path(CLUSTER);
    let trace = path("tests/fixtures/replay/morning.yaml");
    let mut args = vec![
        "replay",
        "-f",
        &cluster,
        "--trace",
        &trace,
        "--duration",
        "3h",
        "--step",
        "2m",
    ];
    args.extend_from_slice(extra);
    sim(&args)
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

#[test]
fn json_has_every_field_of_the_contract() {
    let out = json_of(&morning(&[
        "-o",
        "json",
        "--feature-gates",
        "NodeRepair=true",
    ]));
    let runs = out["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        run["flags"],
        "--packing upstream --feature-gates NodeRepair=true --step 2m0s"
    );
    let timeline = run["timeline"].as_array().expect("timeline");
    assert_eq!(timeline.len(), 90, "3 hours of 2-minute steps");
    assert_eq!(timeline[0]["time"], "2026-01-05T07:02:00Z");
    for key in [
        "pricePerHour",
        "nodes",
        "nodesByCapacityType",
        "pendingPods",
        "podsRunning",
        "launched",
        "disrupted",
    ] {
        assert!(timeline[0].get(key).is_some(), "timeline lacks {key}");
    }
    let events = run["events"].as_array().expect("events");
    let launch = events
        .iter()
        .find(|e| e["kind"] == "launch")
        .expect("a launch");
    for key in [
        "time",
        "nodePool",
        "instanceType",
        "zone",
        "capacityType",
        "price",
    ] {
        assert!(launch.get(key).is_some(), "launch lacks {key}");
    }
    let interrupted = events
        .iter()
        .find(|e| e["kind"] == "disrupt" && e["reason"] == "Interrupted")
        .expect("the 09:30 interruption");
    for key in ["candidates", "replacements", "savingsPerHour"] {
        assert!(interrupted.get(key).is_some(), "disrupt lacks {key}");
    }
    let totals = &run["totals"];
    let reasons = totals["disruptions"].as_object().expect("disruptions");
    let mut keys: Vec<&str> = reasons.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "Drifted",
            "Empty",
            "Expired",
            "Interrupted",
            "Underutilized",
            "Unhealthy"
        ]
    );
    assert_eq!(totals["disruptions"]["Interrupted"], 2);
    let cost: f64 = timeline
        .iter()
        .map(|s| s["pricePerHour"].as_f64().expect("a price") / 30.0)
        .sum();
    assert!((totals["cost"].as_f64().expect("cost") - cost).abs() < 1e-3);
    for key in [
        "nodeHours",
        "launches",
        "podMinutesPending",
        "maxPendingSeconds",
    ] {
        assert!(totals.get(key).is_some(), "totals lack {key}");
    }
}

#[test]
fn compare_replays_with_the_flags_added_and_shows_both() {
    let out = json_of(&morning(&[
        "-o",
        "json",
        "--compare",
        "--packing cost --m-to-n",
    ]));
    let runs = out["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["flags"], "--packing upstream --step 2m0s");
    assert_eq!(runs[1]["flags"], "--packing cost --m-to-n --step 2m0s");
    let table = morning(&["--compare", "--packing cost"]);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout);
    let header = text.lines().next().expect("a header");
    assert!(header.contains("--packing upstream"), "{text}");
    assert!(header.contains("--packing cost"), "{text}");
    assert!(header.contains("difference"), "{text}");
    for row in [
        "cost",
        "node-hours",
        "disrupted: Interrupted",
        "pending pod-minutes",
    ] {
        assert!(text.lines().any(|l| l.starts_with(row)), "{row}: {text}");
    }
    let refused = morning(&["--compare", "-f other.yaml"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("-f cannot be compared"));
}

#[test]
fn the_same_inputs_give_the_same_bytes_and_the_csv_has_a_row_per_step_and_run() {
    let dir = std::env::temp_dir().join(format!("replay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let csv = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (a, b) = (csv("a.csv"), csv("b.csv"));
    let first = morning(&["-o", "json", "--compare", "--seed 7", "--csv", &a]);
    let second = morning(&["-o", "json", "--compare", "--seed 7", "--csv", &b]);
    assert!(first.status.success());
    assert_eq!(first.stdout, second.stdout);
    let (a, b) = (
        std::fs::read_to_string(&a).expect("csv"),
        std::fs::read_to_string(&b).expect("csv"),
    );
    assert_eq!(a, b);
    let lines: Vec<&str> = a.lines().collect();
    assert_eq!(lines.len(), 1 + 90 * 2);
    assert!(lines[0].starts_with("run,time,pricePerHour,nodes,"));
    assert!(lines[1].starts_with("--packing upstream --step 2m0s,2026-01-05T07:02:00Z,"));
    assert!(lines[91].starts_with("--packing upstream --step 2m0s --seed 7,"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_exit_2_naming_the_file_document_and_field() {
    let cluster = path(CLUSTER);
    let cases = [
        (
            "replay-unknown-deployment.yaml",
            "events[0].scale.deployment: no Deployment default/shop",
        ),
        (
            "replay-negative-replicas.yaml",
            "events[0].scale.replicas: -3 is negative",
        ),
        (
            "replay-before-start.yaml",
            "events[0].at: 2026-01-04T23:00:00Z is before the start",
        ),
        ("replay-bad-at.yaml", "events[0].at: neither a duration"),
        (
            "replay-bad-launch-delay.yaml",
            "launchDelay: invalid duration",
        ),
        ("replay-two-actions.yaml", "events[0]: names two actions"),
        (
            "replay-min-over-max.yaml",
            "events[0].random.min: 9 is more than max (2)",
        ),
    ];
    for (file, expected) in cases {
        let trace = path(&format!("tests/fixtures/bad/{file}"));
        let out = sim(&["replay", "-f", &cluster, "--trace", &trace]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{file}, document 1: Trace: field {expected}")),
            "{file}: {stderr}"
        );
    }
    let types = path("tests/fixtures/replay/types.yaml");
    let negative = path("tests/fixtures/bad/replay-deployment-negative-replicas.yaml");
    let trace = path(WORKDAY);
    let out = sim(&["replay", "-f", &types, "-f", &negative, "--trace", &trace]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "replay-deployment-negative-replicas.yaml, document 1: Deployment default/web: field spec.replicas: -3 is negative"
        ),
        "{stderr}"
    );
    let out = sim(&[
        "replay", "-f", &cluster, "--trace", &trace, "--step", "soon",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = sim(&[
        "replay",
        "-f",
        &cluster,
        "--trace",
        &trace,
        "--step",
        "1h",
        "--duration",
        "10m",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("duration: "));
}

#[test]
fn the_workday_example_runs_its_day() {
    let cluster = path(CLUSTER);
    let trace = path(WORKDAY);
    let out = json_of(&sim(&[
        "replay",
        "-f",
        &cluster,
        "--trace",
        &trace,
        "--step",
        "10m",
        "--feature-gates",
        "NodeRepair=true",
        "-o",
        "json",
    ]));
    let run = &out["runs"][0];
    let timeline = run["timeline"].as_array().expect("timeline");
    assert_eq!(
        timeline.len(),
        144,
        "the trace's last event plus an hour: 24h"
    );
    let most = timeline
        .iter()
        .map(|s| s["podsRunning"].as_u64().expect("a count"))
        .max();
    assert_eq!(most, Some(240), "200 web and 40 api at the morning's peak");
    let disruptions = &run["totals"]["disruptions"];
    assert_eq!(disruptions["Interrupted"], 2);
    assert_eq!(disruptions["Unhealthy"], 1);
    assert!(disruptions["Drifted"].as_u64() > Some(0));
}

#[test]
fn svg_and_html_are_written_self_contained_and_the_same_every_time() {
    let dir = std::env::temp_dir().join(format!("replay-pictures-{}", std::process::id()));
    let run = |name: &str| {
        let svg = dir.join(name).to_string_lossy().into_owned();
        let html = dir
            .join(format!("{name}.html"))
            .to_string_lossy()
            .into_owned();
        let out = morning(&[
            "--compare",
            "--packing cost",
            "--svg",
            &svg,
            "--html",
            &html,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (svg, html)
    };
    let (svg_a, html_a) = run("a");
    let (svg_b, html_b) = run("b");
    for file in ["price.svg", "nodes.svg", "pending.svg", "disruptions.svg"] {
        let a = std::fs::read_to_string(format!("{svg_a}/{file}")).expect("a chart");
        let b = std::fs::read_to_string(format!("{svg_b}/{file}")).expect("a chart");
        assert_eq!(a, b, "{file} is the same every time");
        assert_eq!(a.matches("<svg").count(), 1, "{file}: one SVG document");
        assert!(a.trim_end().ends_with("</svg>"), "{file}");
        // One line per run, named in the legend; the axes labelled.
        assert!(a.contains("--packing upstream --step 2m0s"), "{file}");
        assert!(a.contains("--packing cost --step 2m0s"), "{file}");
        assert!(a.contains("hours since the start"), "{file}");
        assert!(
            a.matches("<polyline").count() >= 2,
            "{file}: a line per run"
        );
    }
    let html = std::fs::read_to_string(&html_a).expect("the report");
    assert_eq!(html, std::fs::read_to_string(&html_b).expect("the report"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 4, "the four charts inline");
    // (The inline SVGs name their XML namespace, which is no request.)
    for banned in [
        "<script", "<link", "src=", "href=", "url(", "@import", "<?xml",
    ] {
        assert!(
            !html.contains(banned),
            "the page must open offline: {banned}"
        );
    }
    for expected in [
        "Totals",
        "disrupted: Interrupted",
        "difference",
        "Events",
        "launch ",
    ] {
        assert!(html.contains(expected), "the page lacks {expected}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_azure_example_replays_on_azure_and_compares_regions() {
    let cluster = path("examples/replay/azure.yaml");
    let trace = path("tests/fixtures/replay/morning.yaml");
    // No InstanceType documents: the provider is Azure without being asked
    // (as `provision` picks it), in the region asked, compared with
    // another region's prices.
    let out = json_of(&sim(&[
        "replay",
        "-f",
        &cluster,
        "--trace",
        &trace,
        "--duration",
        "3h",
        "--step",
        "5m",
        "--region",
        "eastus",
        "--compare",
        "--provider azure --region westeurope",
        "-o",
        "json",
    ]));
    let runs = out["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs[0]["flags"],
        "--packing upstream --step 5m0s --provider azure --region eastus"
    );
    assert_eq!(
        runs[1]["flags"],
        "--packing upstream --step 5m0s --provider azure --region westeurope"
    );
    for run in runs {
        let launched: Vec<&Value> = run["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["kind"] == "launch")
            .collect();
        assert!(!launched.is_empty(), "{run}");
        for launch in launched {
            let size = launch["instanceType"].as_str().expect("a size");
            assert!(
                size.starts_with("Standard_D") && size.ends_with("_v5"),
                "{size}"
            );
        }
    }
    let zone = |run: &Value| {
        run["events"]
            .as_array()
            .and_then(|e| e.iter().find(|e| e["kind"] == "launch"))
            .and_then(|e| e["zone"].as_str())
            .map(str::to_owned)
            .expect("a launch")
    };
    assert!(zone(&runs[0]).starts_with("eastus-"));
    assert!(zone(&runs[1]).starts_with("westeurope-"));
    // The fake provider cannot run it: it has no InstanceType documents.
    let refused = sim(&[
        "replay",
        "-f",
        &cluster,
        "--trace",
        &trace,
        "--provider",
        "fake",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("InstanceType"));
}
