//! `karpenter-sim` as a user runs it: exit statuses, what goes to standard output and
//! to standard error, and the commands, flags and output of `docs/cli.md`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Helpers

fn example(name: &str) -> String {
    format!("{}/examples/scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/bad/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn provision_basic() -> String {
    example("provision-basic.yaml")
}

/// Runs `karpenter-sim` with `args`, giving it `stdin` (none: an empty stdin).
fn sim_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_karpenter-sim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run karpenter-sim");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.unwrap_or_default().to_vec();
    // Write from another thread so that a large input cannot deadlock on full pipes.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for karpenter-sim");
    writer.join().expect("stdin writer");
    assert_no_panic(&output);
    output
}

fn sim(args: &[&str]) -> Output {
    sim_with_stdin(args, None)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

#[track_caller]
fn assert_no_panic(output: &Output) {
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        !text.contains("panicked"),
        "karpenter-sim panicked:\n{text}"
    );
    assert!(
        !text.contains("RUST_BACKTRACE"),
        "karpenter-sim panicked:\n{text}"
    );
}

#[track_caller]
fn assert_status(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[track_caller]
fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
}

/// Bad input: exit 2, nothing on stdout, and stderr says every part.
#[track_caller]
fn assert_bad_input(output: &Output, parts: &[&str]) {
    assert_status(output, 2);
    assert!(output.stdout.is_empty(), "stdout: {}", stdout(output));
    assert_contains(&stderr(output), parts);
}

/// A file in the temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, text: &str) -> TempFile {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "karpenter-cli-{}-{}-{tag}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, text).expect("write a temporary file");
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const EXTRA_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: extra-0, namespace: default}\n\
spec:\n  containers:\n  - name: app\n    resources: {requests: {cpu: '1', memory: 1Gi}}\n";

/// A kind karpenter-sim does not read.
const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: web, namespace: default}\n\
spec: {parallelism: 4}\n";

/// Read, silently, so that a CapacityBuffer's scalableRef finds it.
const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n\
spec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    \
spec:\n      containers: [{name: app, resources: {requests: {cpu: '1'}}}]\n";

/// A CapacityBuffer (behind the CapacityBuffer gate) naming a PodTemplate
/// the input does not have.
const BUFFER: &str = "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n\
metadata: {name: headroom, namespace: default}\nspec: {podTemplateRef: {name: chunk}, replicas: 2}\n";

fn summary_json(output: &Output) -> Value {
    assert_status(output, 0);
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON value")
}

// ---------------------------------------------------------------------------
// summary

#[test]
fn summary_table_names_the_node_pool_and_the_counts() {
    let output = sim(&["summary", "-f", &provision_basic()]);
    assert_status(&output, 0);
    let text = stdout(&output);
    assert_contains(
        &text,
        &[
            "pods: 5 pending, 0 bound, 0 daemon, 0 finished",
            "pending pods request: cpu 4, memory 6Gi, pods 5",
            "nodes: 0 (0 managed by Karpenter); node claims in flight: 0",
            "instance types: 3 with 8 offerings (8 available)",
            "provider: fake (3 instance types from the input)",
        ],
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for row in [
        vec!["NodePool", "1"],
        vec!["Pod", "5"],
        vec!["DaemonSet", "1"],
        vec!["InstanceType", "3"],
        vec!["default", "0", "1", "0", "WhenEmptyOrUnderutilized", "0"],
    ] {
        assert!(rows.contains(&row), "no row {row:?} in:\n{text}");
    }
    assert!(!text.contains("Node "), "no Node row expected:\n{text}");
    assert_eq!(stderr(&output), "", "a clean input warns of nothing");
}

#[test]
fn summary_json_has_the_documented_fields_and_counts() {
    let output = sim(&["summary", "-f", &provision_basic(), "-o", "json"]);
    let summary = summary_json(&output);
    let memory = summary["pendingRequests"]["memory"].clone();
    assert!(memory == "6Gi" || memory == "6442450944", "memory {memory}");
    let mut expected = json!({
        "objects": {"DaemonSet": 1, "InstanceType": 3, "NodePool": 1, "Pod": 5},
        "pendingPods": 5,
        "boundPods": 0,
        "daemonPods": 0,
        "finishedPods": 0,
        "pendingRequests": {"cpu": "4", "memory": memory, "pods": "5"},
        "nodes": 0,
        "managedNodes": 0,
        "inFlightNodeClaims": 0,
        "nodePools": [{
            "name": "default",
            "weight": 0,
            "requirements": 1,
            "taints": 0,
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "nodes": 0
        }],
        "instanceTypes": 3,
        "offerings": 8,
        "availableOfferings": 8,
        "warnings": []
    });
    // New fields may be added: compare the documented ones.
    let object = summary.as_object().expect("an object");
    for key in object.keys() {
        assert!(!key.contains('_'), "field {key:?} is not camelCase");
        if expected.get(key).is_none() {
            expected[key] = object[key].clone();
        }
    }
    assert_eq!(summary, expected);
}

#[test]
fn summary_json_counts_nodes_claims_and_bound_pods() {
    let summary = summary_json(&sim(&[
        "summary",
        "-f",
        &example("disrupt-basic.yaml"),
        "-o",
        "json",
    ]));
    assert_eq!(
        summary["objects"],
        json!({"InstanceType": 2, "Node": 2, "NodeClaim": 2, "NodePool": 1, "Pod": 1})
    );
    assert_eq!(summary["pendingPods"], 0);
    assert_eq!(summary["boundPods"], 1);
    assert_eq!(summary["nodes"], 2);
    assert_eq!(summary["managedNodes"], 2);
    assert_eq!(summary["inFlightNodeClaims"], 0);
    assert_eq!(summary["nodePools"][0]["nodes"], 2);
    assert_eq!(summary["pendingRequests"], json!({}));
}

#[test]
fn the_same_input_twice_gives_byte_identical_output() {
    for format in ["table", "json"] {
        let args = ["summary", "-f", &provision_basic(), "-o", format];
        let (first, second) = (sim(&args), sim(&args));
        assert_status(&first, 0);
        assert!(!first.stdout.is_empty());
        assert_eq!(first.stdout, second.stdout, "-o {format}");
    }
}

#[test]
fn two_files_are_read_together() {
    let extra = TempFile::new("extra.yaml", &format!("{EXTRA_POD}---\n{JOB}"));
    let output = sim(&[
        "summary",
        "-f",
        &provision_basic(),
        "-f",
        extra.path(),
        "-o",
        "json",
    ]);
    let summary = summary_json(&output);
    assert_eq!(summary["objects"]["Pod"], 6);
    assert_eq!(summary["pendingPods"], 6);
    assert_eq!(summary["pendingRequests"]["cpu"], "5");
    assert_eq!(summary["instanceTypes"], 3);
    // The warning names the second file and its document.
    let warnings = summary["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1);
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with(&format!("{}, document 2: ", extra.path())),
        "{warning}"
    );
}

#[test]
fn two_files_with_one_node_pool_name_are_bad_input_naming_both() {
    let (a, b) = (provision_basic(), example("disrupt-basic.yaml"));
    let output = sim(&["summary", "-f", &a, "-f", &b]);
    assert_bad_input(
        &output,
        &[
            &format!("{b}, document 3"),
            "NodePool default",
            "metadata.name",
            &format!("{a}, document 4"),
        ],
    );
}

#[test]
fn dash_reads_standard_input() {
    let text = std::fs::read(provision_basic()).unwrap();
    let from_stdin = sim_with_stdin(&["summary", "-f", "-", "-o", "json"], Some(&text));
    let from_file = sim(&["summary", "-f", &provision_basic(), "-o", "json"]);
    assert_status(&from_stdin, 0);
    assert_eq!(stdout(&from_stdin), stdout(&from_file));
    // Standard input and a file together.
    let output = sim_with_stdin(
        &["summary", "-f", &provision_basic(), "-f", "-", "-o", "json"],
        Some(EXTRA_POD.as_bytes()),
    );
    assert_eq!(summary_json(&output)["pendingPods"], 6);
}

#[test]
fn bad_standard_input_is_named_dash() {
    let output = sim_with_stdin(
        &["summary", "-f", "-"],
        Some(b"apiVersion: v1\nkind: Pod\nspec: {containers: 3}\n"),
    );
    assert_bad_input(&output, &["-, document 1", "spec.containers"]);
}

#[test]
fn timings_go_to_stderr_and_change_nothing_on_stdout() {
    let plain = sim(&["summary", "-f", &provision_basic()]);
    let timed = sim(&["summary", "-f", &provision_basic(), "--timings"]);
    assert_status(&timed, 0);
    assert_eq!(timed.stdout, plain.stdout);
    let err = stderr(&timed);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("timings:")).collect();
    assert_eq!(lines.len(), 1, "one timings line in:\n{err}");
    let line = lines[0];
    assert!(line.starts_with("timings: read "), "{line}");
    assert_contains(line, &[", validate ", "5 pods"]);
    assert!(
        line.find("read").unwrap() < line.find("validate").unwrap(),
        "{line}"
    );
    assert!(!stdout(&timed).contains("timings"));
    assert!(
        !stderr(&plain).contains("timings"),
        "no timings without --timings"
    );
}

#[test]
fn the_number_of_threads_changes_no_plan() {
    let disrupt = example("disrupt-basic.yaml");
    let plan = |extra: &[&str]| {
        let mut args = vec!["disrupt", "-f", &disrupt, "--now", "2026-06-01T00:00:00Z"];
        args.extend(["-o", "json"]);
        args.extend(extra);
        sim(&args)
    };
    let one = plan(&["--threads", "1"]);
    let three = plan(&["--threads", "3"]);
    let default = plan(&[]);
    assert_status(&one, 0);
    assert_eq!(one.stdout, three.stdout);
    assert_eq!(one.stdout, default.stdout);
    let provision = sim(&["provision", "-f", &provision_basic(), "--threads", "2"]);
    assert_eq!(
        provision.stdout,
        sim(&["provision", "-f", &provision_basic()]).stdout
    );
    let none = sim(&["summary", "-f", &provision_basic(), "--threads", "0"]);
    assert_status(&none, 2);
    assert_contains(&stderr(&none), &["--threads", "0"]);
}

#[test]
fn skipped_unknown_kind_warns_and_summary_still_succeeds() {
    let mut input = std::fs::read_to_string(provision_basic()).unwrap();
    input.push_str("\n---\n");
    input.push_str(JOB);
    let output = sim_with_stdin(&["summary", "-f", "-"], Some(input.as_bytes()));
    assert_status(&output, 0);
    let err = stderr(&output);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert_contains(
        warnings[0],
        &["-, document 11", "batch/v1", "Job", "default/web"],
    );
    assert!(stdout(&output).contains("pods: 5 pending"));
    assert!(
        !stdout(&output).contains("warning"),
        "warnings go to stderr only"
    );
}

// ---------------------------------------------------------------------------
// Bad input: exit 2, a message naming the file, the document and the field

#[test]
fn missing_file_is_bad_input_naming_it() {
    let path = format!("{}/no-such-scenario.yaml", env!("CARGO_MANIFEST_DIR"));
    assert_bad_input(&sim(&["summary", "-f", &path]), &[&path]);
    assert_bad_input(&sim(&["provision", "-f", &path]), &[&path]);
}

#[test]
fn bad_quantity_is_bad_input_naming_file_document_and_field() {
    let file = fixture("node-bad-quantity.yaml");
    for command in ["summary", "provision", "disrupt"] {
        let output = sim(&[command, "-f", &file]);
        assert_bad_input(
            &output,
            &[
                &format!("{file}, document 2"),
                "Node node-1",
                "field status.allocatable.memory",
                "huge",
            ],
        );
    }
}

#[test]
fn bad_pod_quantity_names_the_exact_field() {
    let file = fixture("pod-bad-quantity.yaml");
    let output = sim(&["summary", "-f", &file]);
    assert_bad_input(
        &output,
        &[
            &format!("{file}, document 2"),
            "Pod default/web-1",
            "field spec.containers[0].resources.requests.cpu",
        ],
    );
}

#[test]
fn wrong_type_is_bad_input_naming_file_document_and_field() {
    let file = fixture("wrong-type.yaml");
    let output = sim(&["summary", "-f", &file]);
    assert_bad_input(
        &output,
        &[
            &format!("{file}, document 2"),
            "line 17",
            "field spec.containers",
        ],
    );
}

#[test]
fn provider_fake_without_instance_types_is_bad_input() {
    let output = sim_with_stdin(
        &["summary", "--provider", "fake", "-f", "-"],
        Some(EXTRA_POD.as_bytes()),
    );
    assert_bad_input(&output, &["InstanceType"]);
}

#[test]
fn bad_now_is_a_usage_error() {
    let output = sim(&[
        "disrupt",
        "-f",
        &example("disrupt-basic.yaml"),
        "--now",
        "not-a-time",
    ]);
    assert_bad_input(&output, &["--now", "not-a-time"]);
}

#[test]
fn unknown_flag_is_a_usage_error() {
    assert_bad_input(
        &sim(&["summary", "-f", &provision_basic(), "--bogus"]),
        &["--bogus"],
    );
    assert_bad_input(&sim(&["summary"]), &["--filename"]);
    assert_bad_input(
        &sim(&["summary", "-f", &provision_basic(), "-o", "xml"]),
        &["xml"],
    );
    assert_bad_input(&sim(&["frobnicate"]), &["frobnicate"]);
}

#[test]
fn provision_on_a_valid_fake_scenario() {
    let table = sim(&["provision", "-f", &provision_basic()]);
    assert_status(&table, 0);
    assert_contains(
        &stdout(&table),
        &["NODEPOOL", "default", "total price per hour"],
    );
    let output = sim(&[
        "provision",
        "-f",
        &provision_basic(),
        "--provider",
        "fake",
        "-o",
        "json",
    ]);
    assert_status(&output, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    for field in [
        "nodeClaims",
        "existingNodes",
        "unschedulable",
        "totalPricePerHour",
    ] {
        assert!(plan.get(field).is_some(), "{field} missing: {plan}");
    }
    let claims = plan["nodeClaims"].as_array().expect("a list");
    let placed: usize = claims
        .iter()
        .map(|c| c["pods"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(
        placed, 5,
        "every pending pod of the example is placed: {plan}"
    );
    for claim in claims {
        for field in [
            "nodePool",
            "instanceTypes",
            "requirements",
            "launch",
            "pods",
        ] {
            assert!(claim.get(field).is_some(), "{field} missing: {claim}");
        }
    }
    // The cost mode: never dearer, and it always reports the bound.
    let cost = sim(&[
        "provision",
        "-f",
        &provision_basic(),
        "--packing",
        "cost",
        "-o",
        "json",
    ]);
    assert_status(&cost, 0);
    let cost: serde_json::Value = serde_json::from_str(&stdout(&cost)).expect("JSON");
    let cost_price = cost["totalPricePerHour"].as_f64().expect("a price");
    let upstream_price = plan["totalPricePerHour"].as_f64().expect("a price");
    assert!(cost_price <= upstream_price, "{cost} vs {plan}");
    let bound = cost["lowerBoundPerHour"].as_f64().expect("a bound");
    assert!(bound <= cost_price, "{cost}");
    // --bound adds a proven lower bound, never above the plan's price.
    let bounded = sim(&[
        "provision",
        "-f",
        &provision_basic(),
        "--bound",
        "-o",
        "json",
    ]);
    assert_status(&bounded, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&bounded)).expect("JSON");
    let bound = plan["lowerBoundPerHour"].as_f64().expect("a bound");
    let price = plan["totalPricePerHour"].as_f64().expect("a price");
    assert!(bound > 0.0 && bound <= price, "{bound} vs {price}");
    let without = sim(&["provision", "-f", &provision_basic(), "-o", "json"]);
    assert!(!stdout(&without).contains("lowerBoundPerHour"));
    let table = sim(&["provision", "-f", &provision_basic(), "--bound"]);
    assert_contains(&stdout(&table), &["lower bound per hour:"]);
}

/// A family label on every instance type, which the NodePool does not mention
/// (how users describe families), changes neither the plan nor its bound; and a
/// pod may select it, as upstream's fake provider registers its labels.
#[test]
fn a_label_of_the_types_leaves_the_plan_and_bound_alone_and_may_be_selected() {
    let scenario = |labels: &str, selector: &str| {
        let mut text = String::new();
        for (name, cpu, price) in [("cx-2", 2, 0.1), ("cx-8", 8, 0.35)] {
            text.push_str(&format!(
                "apiVersion: karpenter.fake/v1alpha1\nkind: InstanceType\nmetadata: {{name: {name}}}\n\
                 capacity: {{cpu: '{cpu}', memory: {cpu}Gi}}\n{labels}\
                 offerings: [{{zone: zone-a, capacityType: on-demand, price: {price}}}]\n---\n"
            ));
        }
        text.push_str(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  \
             template:\n    spec:\n      nodeClassRef: {group: karpenter.fake, kind: FakeNodeClass, name: default}\n",
        );
        for i in 0..6 {
            text.push_str(&format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: web-{i}, namespace: default}}\n\
                 spec:\n  {selector}containers: [{{name: app, resources: {{requests: {{cpu: 900m, memory: 512Mi}}}}}}]\n"
            ));
        }
        let output = sim_with_stdin(
            &["provision", "-f", "-", "--bound", "-o", "json"],
            Some(text.as_bytes()),
        );
        assert_status(&output, 0);
        let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
        plan
    };
    let plain = scenario("", "");
    let labelled = scenario("labels: {example.com/family: cx}\n", "");
    let bound = plain["lowerBoundPerHour"].as_f64().expect("a bound");
    assert!(bound > 0.0, "{plain}");
    assert_eq!(labelled, plain);
    let selected = scenario(
        "labels: {example.com/family: cx}\n",
        "nodeSelector: {example.com/family: cx}\n  ",
    );
    assert_eq!(
        selected["unschedulable"],
        serde_json::json!([]),
        "{selected}"
    );
    assert_eq!(selected["totalPricePerHour"], plain["totalPricePerHour"]);
}

#[test]
fn disrupt_on_a_valid_fake_scenario() {
    let basic = example("disrupt-basic.yaml");
    let now = "2026-06-01T00:00:00Z";
    let output = sim(&["disrupt", "-f", &basic, "--now", now, "-o", "json"]);
    assert_status(&output, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    // Five months old, past the default expireAfter of 720h: both nodes expire,
    // and the one pod needs the small type.
    let commands = plan["commands"].as_array().expect("a list");
    assert_eq!(commands.len(), 1, "{plan}");
    assert_eq!(commands[0]["reason"], "Expired");
    assert_eq!(
        commands[0]["candidates"],
        serde_json::json!(["node-1", "node-2"])
    );
    assert_eq!(
        commands[0]["replacements"][0]["launch"]["instanceType"],
        "small"
    );
    assert_eq!(commands[0]["savingsPerHour"], 0.4);
    assert_eq!(plan["blocked"], serde_json::json!([]));
    let table = sim(&["disrupt", "-f", &basic, "--now", now]);
    assert_status(&table, 0);
    assert_contains(
        &stdout(&table),
        &["Expired", "node-1, node-2", "saves 0.4000/h", "small"],
    );
    // Before expiry: the empty node goes, then the large one is replaced.
    let early = sim(&[
        "disrupt",
        "-f",
        &basic,
        "--now",
        "2026-01-20T00:00:00Z",
        "-o",
        "json",
    ]);
    assert_status(&early, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&early)).expect("JSON");
    let reasons: Vec<&str> = plan["commands"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["reason"].as_str())
        .collect();
    assert_eq!(reasons, ["Empty", "Underutilized"], "{plan}");
    // Twice the same.
    let again = sim(&["disrupt", "-f", &basic, "--now", now, "-o", "json"]);
    assert_eq!(stdout(&again), stdout(&output));
    // The options beyond upstream's defaults run.
    for flag in ["--m-to-n", "--spot-to-spot", "--packing=cost"] {
        let output = sim(&["disrupt", "-f", &basic, "--now", now, flag, "-o", "json"]);
        assert_status(&output, 0);
    }
}

/// A static NodePool (`spec.replicas`), for the StaticCapacity gate.
const STATIC_POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 2
  template:
    spec:
      nodeClassRef: {group: karpenter.fake, kind: FakeNodeClass, name: default}
      requirements: []
";

#[test]
fn feature_gates_read_as_upstream_writes_them() {
    let file = format!(
        "{}/tests/disruption-scenarios/spot-to-spot/spot-to-spot-launches-from-cheapest-fifteen.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "disrupt",
            "-f",
            &file,
            "--now",
            "2026-06-01T00:00:00Z",
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        let output = sim(&args);
        assert_status(&output, 0);
        stdout(&output)
    };
    let off = plan(&[]);
    let gate = plan(&["--feature-gates", "SpotToSpotConsolidation=true"]);
    assert_ne!(gate, off, "the gate changes this plan");
    // `--spot-to-spot` is the gate's alias, whatever --feature-gates says.
    assert_eq!(plan(&["--spot-to-spot"]), gate);
    assert_eq!(
        plan(&[
            "--spot-to-spot",
            "--feature-gates",
            "SpotToSpotConsolidation=false"
        ]),
        gate
    );
    // Upstream's syntax: spaces, Go's booleans, the last pair winning; and
    // repeated flags apply in order.
    assert_eq!(
        plan(&[
            "--feature-gates",
            " NodeRepair = t , SpotToSpotConsolidation=TRUE"
        ]),
        gate
    );
    assert_eq!(
        plan(&[
            "--feature-gates=SpotToSpotConsolidation=1",
            "--feature-gates=SpotToSpotConsolidation=0,NodeOverlay=true",
        ]),
        off
    );
    // A misspelt gate or a value that is no boolean is bad input.
    for bad in ["SpotToSpot=true", "NodeRepair=yes", "NodeRepair"] {
        let output = sim(&["disrupt", "-f", &file, "--feature-gates", bad]);
        assert_status(&output, 2);
        assert_no_panic(&output);
        assert_contains(
            &stderr(&output),
            &["--feature-gates", bad.split('=').next().unwrap()],
        );
    }
}

#[test]
fn the_min_values_policy_is_upstreams_option() {
    let file = format!(
        "{}/tests/scenarios/min-values-policy/best-effort-instance-types.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let plan = |extra: &[&str]| {
        let mut args = vec!["provision", "-f", &file, "-o", "json"];
        args.extend_from_slice(extra);
        let output = sim(&args);
        assert_status(&output, 0);
        stdout(&output)
    };
    // Strict is the default.
    let strict = plan(&[]);
    assert_eq!(plan(&["--min-values-policy", "Strict"]), strict);
    assert!(!strict.contains("minValuesRelaxed"));
    let relaxed = plan(&["--min-values-policy", "BestEffort"]);
    assert!(relaxed.contains("\"minValuesRelaxed\": true"), "{relaxed}");
    // Spelt as upstream spells it, or bad input naming the flag and both values.
    for bad in ["besteffort", "Lax", ""] {
        for command in ["provision", "disrupt"] {
            let output = sim(&[command, "-f", &file, "--min-values-policy", bad]);
            assert_status(&output, 2);
            assert_no_panic(&output);
            assert_contains(
                &stderr(&output),
                &["--min-values-policy", "Strict", "BestEffort"],
            );
        }
    }
}

#[test]
fn a_static_node_pool_is_read_only_with_the_static_capacity_gate() {
    let mut input = std::fs::read_to_string(provision_basic()).unwrap();
    input.push_str("\n---\n");
    input.push_str(STATIC_POOL);
    let summary = |extra: &[&str]| {
        let mut args = vec!["summary", "-f", "-", "-o", "json"];
        args.extend_from_slice(extra);
        let output = sim_with_stdin(&args, Some(input.as_bytes()));
        assert_status(&output, 0);
        let json: Value = serde_json::from_str(&stdout(&output)).expect("json");
        (json, stderr(&output))
    };
    let (off, err) = summary(&[]);
    assert_eq!(off["nodePools"].as_array().map(Vec::len), Some(1), "{off}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert_contains(
        warnings[0],
        &[
            "-, document 11",
            "NodePool fixed",
            "StaticCapacity feature gate is off",
        ],
    );
    let (on, err) = summary(&["--feature-gates", "StaticCapacity=true"]);
    assert_eq!(on["nodePools"].as_array().map(Vec::len), Some(2), "{on}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn a_capacity_buffer_is_read_only_with_its_gate_and_workloads_silently() {
    let mut input = std::fs::read_to_string(provision_basic()).unwrap();
    for document in [DEPLOYMENT, BUFFER] {
        input.push_str("\n---\n");
        input.push_str(document);
    }
    let run = |command: &str, extra: &[&str]| {
        let mut args = vec![command, "-f", "-", "-o", "json"];
        args.extend_from_slice(extra);
        let output = sim_with_stdin(&args, Some(input.as_bytes()));
        assert_status(&output, 0);
        let json: Value = serde_json::from_str(&stdout(&output)).expect("json");
        let err = stderr(&output);
        let warnings: Vec<String> = err
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .map(str::to_string)
            .collect();
        (json, warnings)
    };
    // Gate off: the buffer is skipped with the one line naming the gate; the
    // Deployment is read without a word, and makes no pod.
    let (off, warnings) = run("summary", &[]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_contains(
        &warnings[0],
        &[
            "-, document 12",
            "autoscaling.x-k8s.io/v1beta1 CapacityBuffer default/headroom",
            "the CapacityBuffer feature gate is off (--feature-gates CapacityBuffer=true)",
        ],
    );
    assert!(!warnings[0].contains("Deployment"), "{warnings:?}");
    assert_eq!(off["objects"]["Deployment"], 1, "{off}");
    assert!(off["objects"].get("CapacityBuffer").is_none(), "{off}");
    assert_eq!(off["pendingPods"], 5, "{off}");

    // Gate on: read and counted; `provision` says the template it names is
    // missing, naming the document.
    let gate = ["--feature-gates", "CapacityBuffer=true"];
    let (on, warnings) = run("summary", &gate);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(on["objects"]["CapacityBuffer"], 1, "{on}");
    let (_, warnings) = run("provision", &gate);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_contains(
        &warnings[0],
        &[
            "-, document 12: ",
            "capacity buffer default/headroom: PodTemplate \"chunk\" not found in its namespace; \
             it keeps no room",
        ],
    );
}

#[test]
fn an_invalid_capacity_buffer_is_bad_input_naming_it() {
    let mut input = std::fs::read_to_string(provision_basic()).unwrap();
    input.push_str("\n---\n");
    input.push_str(&BUFFER.replace("replicas: 2", "replicas: -2"));
    let output = sim_with_stdin(
        &[
            "provision",
            "-f",
            "-",
            "--feature-gates",
            "CapacityBuffer=true",
        ],
        Some(input.as_bytes()),
    );
    assert_bad_input(
        &output,
        &[
            "-, document 11",
            "CapacityBuffer default/headroom",
            "field spec.replicas",
            "negative",
        ],
    );
}

#[test]
fn an_invalid_node_overlay_is_reported_and_not_applied() {
    let file = format!(
        "{}/tests/scenarios/overlay/price-adjustment-changes-the-cheapest-launch.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut input = std::fs::read_to_string(&file).unwrap();
    input = input.replace(
        "priceAdjustment: \"-80%\"",
        "priceAdjustment: \"80%\"\n  weight: 0",
    );
    let output = sim_with_stdin(
        &[
            "provision",
            "-f",
            "-",
            "-o",
            "json",
            "--feature-gates",
            "NodeOverlay=true",
        ],
        Some(input.as_bytes()),
    );
    assert_status(&output, 0);
    let err = stderr(&output);
    let warning = err
        .lines()
        .find(|l| l.contains("NodeOverlay medium-discount"))
        .unwrap_or_else(|| panic!("no warning for the overlay: {err}"));
    assert_contains(
        warning,
        &[
            "-, document 6",
            "not applied",
            "spec.priceAdjustment \"80%\"",
            "spec.weight 0",
        ],
    );
    // Not applied: large, at its list price, is launched.
    let plan: Value = serde_json::from_str(&stdout(&output)).expect("json");
    assert_eq!(
        plan["nodeClaims"][0]["launch"]["instanceType"], "large",
        "{plan}"
    );

    // A field of the wrong type is bad input, named.
    let broken = input.replace("weight: 0", "weight: heavy");
    let output = sim_with_stdin(
        &[
            "provision",
            "-f",
            "-",
            "--feature-gates",
            "NodeOverlay=true",
        ],
        Some(broken.as_bytes()),
    );
    assert_status(&output, 2);
    assert_no_panic(&output);
    assert_contains(&stderr(&output), &["document 6", "spec.weight"]);
}

fn azure_basic() -> String {
    example("azure-basic.yaml")
}

#[test]
fn provider_azure_plans_in_every_region_with_prices() {
    let catalog = karpenter::azure::Catalog::embedded();
    let basic = azure_basic();
    for region in catalog.regions().filter(|r| r.has_prices) {
        check_azure_region_plan(catalog, &basic, &region.name);
    }
    check_azure_repeats_and_other_commands_run(&basic);
}

/// Plans the Azure example in `region`: every pod placed, every claim's
/// launch as `check_azure_launch` wants it.
fn check_azure_region_plan(catalog: &karpenter::azure::Catalog, basic: &str, region: &str) {
    let args = [
        "provision",
        "-f",
        basic,
        "--provider",
        "azure",
        "--region",
        region,
        "-o",
        "json",
    ];
    let output = sim(&args);
    assert_status(&output, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let claims = plan["nodeClaims"].as_array().expect("claims");
    assert!(!claims.is_empty(), "{region}");
    assert!(
        plan["unschedulable"].as_array().is_some_and(Vec::is_empty),
        "{region}"
    );
    for claim in claims {
        check_azure_launch(catalog, region, claim);
    }
}

/// One claim's launch: a D-family size at the region's price, in one of the
/// region's zones, regional only where no zonal offering matches.
fn check_azure_launch(catalog: &karpenter::azure::Catalog, region: &str, claim: &Value) {
    let launch = &claim["launch"];
    let size = launch["instanceType"].as_str().expect("a size");
    // The pool asks for D-family VMs; the price is the region's.
    assert!(size.starts_with("Standard_D"), "{region}: {size}");
    let sku = catalog.sku(size).expect("in the catalog");
    let price = karpenter::azure::instancetype::price(catalog, sku, region);
    assert_eq!(launch["price"].as_f64(), Some(price), "{region} {size}");
    let zone = launch["zone"].as_str().expect("a zone");
    assert!(
        zone == "0" || zone.starts_with(&format!("{region}-")),
        "{zone}"
    );
    // As the provider's create ranks them: never regional (zone 0)
    // where the claim allows a zonal offering of the size at the same
    // price (a zonal spread may pin a claim to the domain "0").
    let zones = claim["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .find(|r| r["key"] == "topology.kubernetes.io/zone")
        .map(|r| r["values"].clone());
    let allows = |z: &str| {
        zones
            .as_ref()
            .is_none_or(|v| v.as_array().is_some_and(|v| v.iter().any(|x| x == z)))
    };
    if zone == "0" {
        let settings = karpenter::azure::instancetype::Settings::for_region(region);
        let it = karpenter::azure::instancetype::instance_type(catalog, sku, &settings)
            .expect("offered");
        let capacity = launch["capacityType"].as_str().expect("a capacity type");
        assert!(
            !it.offerings.iter().any(|o| o.available
                && o.zone != "0"
                && allows(&o.zone)
                && o.capacity_type == capacity
                && o.price == price),
            "{region}: {size} launched regional beside a zonal offering"
        );
    }
}

/// The same input gives the same plan; disrupt and summary run on the
/// catalog too.
fn check_azure_repeats_and_other_commands_run(basic: &str) {
    let args = [
        "provision",
        "-f",
        basic,
        "--provider",
        "azure",
        "-o",
        "json",
    ];
    assert_eq!(stdout(&sim(&args)), stdout(&sim(&args)));
    let output = sim(&[
        "disrupt",
        "-f",
        basic,
        "--provider",
        "azure",
        "--now",
        "2026-06-01T00:00:00Z",
    ]);
    assert_status(&output, 0);
    let output = sim(&[
        "summary",
        "-f",
        &provision_basic(),
        "--provider",
        "azure",
        "--region",
        "westeurope",
    ]);
    assert_status(&output, 0);
    assert_contains(
        &stdout(&output),
        &["provider: azure, region westeurope (3 zones, its own prices)"],
    );
}

#[test]
fn disrupt_shows_why_a_node_drifted_in_the_table_and_the_json() {
    let file = format!(
        "{}/tests/disruption-scenarios/drift/instance-type-gone.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = ["disrupt", "-f", &file, "--now", "2026-06-01T00:00:00Z"];
    let table = sim(&args);
    assert_status(&table, 0);
    assert!(
        stdout(&table).contains(
            "   node-1 drifted: InstanceTypeNotFound (instance type small is no longer offered by the cloud provider)\n"
        ),
        "{}",
        stdout(&table)
    );
    let json_args: Vec<&str> = args.iter().copied().chain(["-o", "json"]).collect();
    let output = sim(&json_args);
    assert_status(&output, 0);
    let plan: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(
        plan["commands"][0]["drift"],
        json!([{
            "node": "node-1",
            "reason": "InstanceTypeNotFound",
            "detail": "instance type small is no longer offered by the cloud provider",
        }])
    );
}

#[test]
fn provider_azure_drift_replaces_a_node_on_an_image_its_node_class_dropped() {
    let file = format!(
        "{}/tests/fixtures/azure-image-drift.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let now = "2026-06-01T00:00:00Z";
    let output = sim(&[
        "disrupt",
        "-f",
        &file,
        "--provider",
        "azure",
        "--now",
        now,
        "-o",
        "json",
    ]);
    assert_status(&output, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(plan["commands"][0]["reason"], "Drifted");
    assert_eq!(
        plan["commands"][0]["candidates"],
        json!(["aks-default-abcde"])
    );
    // The provider's own reason, by upstream's name, is the cause shown.
    let cause = &plan["commands"][0]["drift"][0];
    assert_eq!(cause["node"], "aks-default-abcde");
    assert_eq!(cause["reason"], "ImageDrift");
    // With the image the class lists, nothing drifts.
    let text = std::fs::read_to_string(&file).expect("the fixture");
    let current = TempFile::new(
        "current-image.yaml",
        &text.replace("versions/202609.10.0", "versions/202611.02.0"),
    );
    let output = sim(&[
        "disrupt",
        "-f",
        current.path(),
        "--provider",
        "azure",
        "--now",
        now,
        "-o",
        "json",
    ]);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(plan["commands"], json!([]));
}

#[test]
fn a_region_on_a_fake_run_changes_nothing_and_says_so() {
    let basic = provision_basic();
    let plain = sim(&["provision", "-f", &basic, "-o", "json"]);
    assert_status(&plain, 0);
    assert!(!stderr(&plain).contains("--region"), "{}", stderr(&plain));
    let regional = sim(&[
        "provision",
        "-f",
        &basic,
        "--region",
        "westeurope",
        "-o",
        "json",
    ]);
    assert_status(&regional, 0);
    assert_eq!(stdout(&regional), stdout(&plain));
    assert_contains(
        &stderr(&regional),
        &[
            "warning: --region westeurope is for the cloud providers",
            "fake provider",
        ],
    );
}

#[test]
fn provider_azure_refuses_an_unknown_region_and_a_bad_node_class() {
    let output = sim(&[
        "provision",
        "-f",
        &azure_basic(),
        "--provider",
        "azure",
        "--region",
        "atlantis",
    ]);
    assert_status(&output, 2);
    assert_contains(
        &stderr(&output),
        &["--region atlantis", "eastus", "westeurope"],
    );
    let text = std::fs::read_to_string(azure_basic()).expect("the example");
    let bad = TempFile::new(
        "bad-class.yaml",
        &text.replace("osDiskSizeGB: 64", "osDiskSizeGB: 10"),
    );
    let output = sim(&["provision", "-f", bad.path(), "--provider", "azure"]);
    assert_status(&output, 2);
    assert_contains(
        &stderr(&output),
        &[
            "bad-class.yaml",
            "document 1",
            "AKSNodeClass default",
            "spec.osDiskSizeGB",
            "30 to 2048",
        ],
    );
    // A NodePool naming a node class the input lacks gets the default one.
    let renamed = text.replacen(
        "kind: AKSNodeClass\nmetadata:\n  name: default",
        "kind: AKSNodeClass\nmetadata:\n  name: other",
        1,
    );
    let missing = TempFile::new("missing-class.yaml", &renamed);
    let output = sim(&["provision", "-f", missing.path(), "--provider", "azure"]);
    assert_status(&output, 0);
    assert_contains(
        &stderr(&output),
        &["warning: NodePool default names AKSNodeClass default, which the input lacks"],
    );
}

/// On Azure the plan names the offering the provider's create would launch:
/// at equal prices a zone before regional `0` (and spot before on-demand).
#[test]
fn an_azure_plan_launches_in_a_zone_when_regional_ties() {
    let text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  \
        template:\n    spec:\n      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n      \
        requirements:\n      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}\n---\n\
        apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  \
        containers: [{name: app, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n";
    let output = sim_with_stdin(
        &[
            "provision",
            "-f",
            "-",
            "--provider",
            "azure",
            "--region",
            "eastus",
            "-o",
            "json",
        ],
        Some(text.as_bytes()),
    );
    assert_status(&output, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let launch = &plan["nodeClaims"][0]["launch"];
    let zone = launch["zone"].as_str().expect("a zone");
    assert!(zone.starts_with("eastus-"), "{launch}");
}
