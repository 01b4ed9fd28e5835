//! Disruption scenarios: each file under `tests/disruption-scenarios/` (but
//! `PENDING/`, cases the engine does not meet yet) is a small cluster and the
//! commands upstream Karpenter gives for it. See that folder's README for the
//! `Expect` document. For each file, `karpenter-sim disrupt -f FILE -o json
//! ARGS` must exit 0, print the same bytes twice, and list exactly the expected
//! commands (in order) and blocked nodes.

use crate::common::sim;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

const EXPECT_KIND: &str = "Expect";
/// Fewer scenarios than this means files went missing.
const MIN_SCENARIOS: usize = 50;
const PRICE_TOLERANCE: f64 = 1e-9;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectDoc {
    api_version: String,
    kind: String,
    metadata: Metadata,
    upstream: String,
    args: Vec<String>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    commands: Vec<CommandCheck>,
    blocked: Option<Vec<BlockedCheck>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CommandCheck {
    reason: String,
    candidates: Vec<String>,
    replacements: Option<usize>,
    launch: Option<String>,
    /// How many instance types the first replacement lists.
    instance_types: Option<usize>,
    /// The first replacement's launch capacity type.
    launch_capacity_type: Option<String>,
    savings_per_hour: Option<f64>,
    /// Exactly these drift causes (`node` and `reason`), in order.
    drift: Option<Vec<DriftCheck>>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct DriftCheck {
    node: String,
    reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BlockedCheck {
    node: String,
    reason_contains: String,
}

fn scenario_files() -> Vec<PathBuf> {
    crate::common::yaml_files("tests/disruption-scenarios", &["PENDING"])
}

/// The file's one Expect document.
fn expectation(path: &Path) -> Result<ExpectDoc, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading: {e}"))?;
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).map_err(|e| format!("not YAML: {e}"))?;
    let mut expects = docs
        .into_iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some(EXPECT_KIND));
    let (Some(doc), None) = (expects.next(), expects.next()) else {
        return Err("needs exactly one Expect document".to_string());
    };
    let doc: ExpectDoc = serde_json::from_value(doc).map_err(|e| format!("Expect: {e}"))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if doc.api_version != "karpenter.test/v1" || doc.kind != EXPECT_KIND {
        return Err("Expect must be karpenter.test/v1 Expect".to_string());
    }
    if doc.metadata.name != stem {
        return Err(format!(
            "Expect is named {:?}, the file {stem:?}",
            doc.metadata.name
        ));
    }
    if doc.upstream.trim().is_empty() {
        return Err("Expect names no upstream source".to_string());
    }
    if !doc.args.iter().any(|a| a == "--now") {
        return Err("args must fix the clock with --now".to_string());
    }
    Ok(doc)
}

/// What is wrong with the plan for one file.
fn check(path: &Path) -> Vec<String> {
    let doc = match expectation(path) {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    let (plan, mut problems) = match plan_twice(path, &doc) {
        Ok(planned) => planned,
        Err(problem) => return vec![problem],
    };
    check_commands(&plan, &doc.expect.commands, &mut problems);
    if let Some(want) = &doc.expect.blocked {
        check_blocked(&plan, want, &mut problems);
    }
    if !problems.is_empty() {
        problems.push(format!("plan: {plan}"));
    }
    problems
}

/// Plans the file twice: the first plan, and a problem if the second differs.
fn plan_twice(path: &Path, doc: &ExpectDoc) -> Result<(Value, Vec<String>), String> {
    let file = path.to_string_lossy();
    let mut args = vec!["disrupt", "-f", &*file, "-o", "json"];
    args.extend(doc.args.iter().map(String::as_str));
    let (first, second) = (sim(&args), sim(&args));
    if !first.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            first.status.code(),
            String::from_utf8_lossy(&first.stderr).trim()
        ));
    }
    let mut problems = Vec::new();
    if first.stdout != second.stdout {
        problems.push("two runs printed different plans".to_string());
    }
    let plan: Value =
        serde_json::from_slice(&first.stdout).map_err(|e| format!("output is not JSON: {e}"))?;
    Ok((plan, problems))
}

/// How many commands the plan gives, and each one against its expectation.
fn check_commands(plan: &Value, wanted: &[CommandCheck], problems: &mut Vec<String>) {
    let commands = plan["commands"].as_array().cloned().unwrap_or_default();
    if commands.len() != wanted.len() {
        problems.push(format!(
            "{} commands, want {}",
            commands.len(),
            wanted.len()
        ));
    }
    for (i, (got, want)) in commands.iter().zip(wanted).enumerate() {
        check_reason_and_candidates(i, got, want, problems);
        check_replacements(i, got, want, problems);
        check_savings(i, got, want, problems);
        check_drift(i, got, want, problems);
    }
}

/// Command `i`'s reason and the nodes it disrupts.
fn check_reason_and_candidates(
    i: usize,
    got: &Value,
    want: &CommandCheck,
    problems: &mut Vec<String>,
) {
    if got["reason"] != want.reason.as_str() {
        problems.push(format!(
            "command {i}: reason {}, want {}",
            got["reason"], want.reason
        ));
    }
    let candidates: Vec<&str> = got["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if candidates != want.candidates {
        problems.push(format!(
            "command {i}: candidates {candidates:?}, want {:?}",
            want.candidates
        ));
    }
}

/// Command `i`'s replacements: how many, and what the first one launches.
fn check_replacements(i: usize, got: &Value, want: &CommandCheck, problems: &mut Vec<String>) {
    let replacements = got["replacements"].as_array().map_or(0, Vec::len);
    if want.replacements.is_some_and(|n| n != replacements) {
        problems.push(format!(
            "command {i}: {replacements} replacements, want {:?}",
            want.replacements
        ));
    }
    let launch = got["replacements"][0]["launch"]["instanceType"].as_str();
    if want.launch.as_deref().is_some_and(|l| Some(l) != launch) {
        problems.push(format!(
            "command {i}: launches {launch:?}, want {:?}",
            want.launch
        ));
    }
    let types = got["replacements"][0]["instanceTypes"]
        .as_array()
        .map(Vec::len);
    if want.instance_types.is_some_and(|n| Some(n) != types) {
        problems.push(format!(
            "command {i}: first replacement lists {types:?} instance types, want {:?}",
            want.instance_types
        ));
    }
    let capacity = got["replacements"][0]["launch"]["capacityType"].as_str();
    if want
        .launch_capacity_type
        .as_deref()
        .is_some_and(|c| Some(c) != capacity)
    {
        problems.push(format!(
            "command {i}: launches {capacity:?} capacity, want {:?}",
            want.launch_capacity_type
        ));
    }
}

/// Command `i`'s savings per hour.
fn check_savings(i: usize, got: &Value, want: &CommandCheck, problems: &mut Vec<String>) {
    let savings = got["savingsPerHour"].as_f64();
    if let Some(want_savings) = want.savings_per_hour
        && savings.is_none_or(|s| (s - want_savings).abs() > PRICE_TOLERANCE)
    {
        problems.push(format!(
            "command {i}: saves {savings:?}, want {want_savings}"
        ));
    }
}

/// Command `i`'s drift causes, in order.
fn check_drift(i: usize, got: &Value, want: &CommandCheck, problems: &mut Vec<String>) {
    if let Some(want_drift) = &want.drift {
        let drift: Vec<DriftCheck> = got["drift"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|cause| DriftCheck {
                node: cause["node"].as_str().unwrap_or_default().to_owned(),
                reason: cause["reason"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        if &drift != want_drift {
            problems.push(format!(
                "command {i}: drift causes {drift:?}, want {want_drift:?}"
            ));
        }
    }
}

/// The nodes the plan blocks, and why.
fn check_blocked(plan: &Value, want: &[BlockedCheck], problems: &mut Vec<String>) {
    let got: BTreeMap<&str, &str> = plan["blocked"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| Some((b["node"].as_str()?, b["reason"].as_str()?)))
        .collect();
    let want_nodes: Vec<&str> = want.iter().map(|b| b.node.as_str()).collect();
    let got_nodes: Vec<&str> = got.keys().copied().collect();
    let mut sorted = want_nodes.clone();
    sorted.sort_unstable();
    if got_nodes != sorted {
        problems.push(format!("blocked {got_nodes:?}, want {sorted:?}"));
    }
    for b in want {
        if let Some(reason) = got.get(b.node.as_str())
            && !reason
                .to_lowercase()
                .contains(&b.reason_contains.to_lowercase())
        {
            problems.push(format!(
                "{} blocked for {reason:?}, want {:?}",
                b.node, b.reason_contains
            ));
        }
    }
}

#[test]
fn disruption_matches_upstream_behaviour() {
    let files = scenario_files();
    assert!(
        files.len() >= MIN_SCENARIOS,
        "only {} scenario files",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let problems = check(path);
        if !problems.is_empty() {
            failures.push(format!("{}:\n  {}", path.display(), problems.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
