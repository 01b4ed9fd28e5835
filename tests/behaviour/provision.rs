//! Provisioning behaviour, derived from upstream Karpenter's scheduling tests.
//!
//! Every `tests/scenarios/**/*.yaml` is a cluster (the documents `karpenter-sim` reads)
//! plus one `karpenter.test/v1` `Expect` document: what upstream Karpenter does with that
//! cluster. `tests/scenarios/README.md` describes the `Expect` schema.
//!
//! - `every_scenario_file_loads_and_has_a_valid_expectation` checks the files themselves:
//!   `karpenter-sim summary` reads each one, its expectation is well formed, and every pod,
//!   node, NodePool and instance type it names exists in the file.
//! - `provisioning_matches_upstream_behaviour` runs `karpenter-sim provision -o json` on
//!   each file (twice, for determinism) and checks every assertion, reporting all failures
//!   of all scenarios at once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{crate_dir, sim};

use serde::Deserialize;
use serde_json::Value;

/// Fewer scenarios than this means files went missing.
const MIN_SCENARIOS: usize = 60;
const EXPECT_API_VERSION: &str = "karpenter.test/v1";
const EXPECT_KIND: &str = "Expect";
const ZONE: &str = "topology.kubernetes.io/zone";
const HOSTNAME: &str = "kubernetes.io/hostname";
const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
const PRICE_TOLERANCE: f64 = 1e-9;

// ---------------------------------------------------------------------------
// The Expect document

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectDoc {
    api_version: String,
    kind: String,
    metadata: ExpectMetadata,
    upstream: String,
    #[serde(default)]
    args: Vec<String>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectMetadata {
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expect {
    new_claims: Option<usize>,
    #[serde(default)]
    scheduled: Vec<String>,
    #[serde(default)]
    unschedulable: Vec<String>,
    #[serde(default)]
    ignored: Vec<String>,
    all_scheduled: Option<bool>,
    #[serde(default)]
    reason_contains: BTreeMap<String, String>,
    #[serde(default)]
    same_claim: Vec<Vec<String>>,
    #[serde(default)]
    different_claims: Vec<Vec<String>>,
    #[serde(default)]
    on_existing_node: BTreeMap<String, Vec<String>>,
    pods_per_zone: Option<PodsPerZone>,
    max_skew: Option<MaxSkew>,
    #[serde(default)]
    claims: Vec<ClaimCheck>,
    total_price_per_hour: Option<f64>,
    /// Static NodePools: how many claims each launches (exactly).
    #[serde(default)]
    static_launches: BTreeMap<String, usize>,
    /// The NodeClaims static NodePools remove, in order (exactly).
    static_removals: Option<Vec<String>>,
    /// CapacityBuffers by `namespace/name`: the fields given of the
    /// buffer's entry in the output's `capacityBuffers` (`replicas`,
    /// `ready`, `existingNodes`, `newClaims`, `unschedulable`,
    /// `provisioning`), each compared exactly; `absent: true` says the
    /// output has no entry for it.
    #[serde(default)]
    capacity_buffers: BTreeMap<String, serde_json::Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PodsPerZone {
    #[serde(default)]
    selector: BTreeMap<String, String>,
    namespace: Option<String>,
    counts: BTreeMap<String, usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaxSkew {
    #[serde(default)]
    selector: BTreeMap<String, String>,
    namespace: Option<String>,
    key: String,
    skew: usize,
    #[serde(default)]
    domains: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClaimCheck {
    pod: String,
    node_pool: Option<String>,
    #[serde(default)]
    instance_types_include: Vec<String>,
    #[serde(default)]
    instance_types_exclude: Vec<String>,
    instance_types_exactly: Option<Vec<String>>,
    launch: Option<LaunchCheck>,
    #[serde(default)]
    requirements_include: Vec<RequirementCheck>,
    /// Whether the plan says the claim's `minValues` were lowered.
    min_values_relaxed: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LaunchCheck {
    instance_type: Option<String>,
    zone: Option<String>,
    capacity_type: Option<String>,
    price: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RequirementCheck {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
    min_values: Option<u64>,
}

impl Expect {
    /// Every pod reference, with where it appears.
    fn pod_refs(&self) -> Vec<(&str, &str)> {
        let mut refs = Vec::new();
        refs.extend(self.scheduled.iter().map(|p| ("scheduled", p.as_str())));
        refs.extend(
            self.unschedulable
                .iter()
                .map(|p| ("unschedulable", p.as_str())),
        );
        refs.extend(self.ignored.iter().map(|p| ("ignored", p.as_str())));
        refs.extend(
            self.reason_contains
                .keys()
                .map(|p| ("reasonContains", p.as_str())),
        );
        for group in &self.same_claim {
            refs.extend(group.iter().map(|p| ("sameClaim", p.as_str())));
        }
        for group in &self.different_claims {
            refs.extend(group.iter().map(|p| ("differentClaims", p.as_str())));
        }
        for pods in self.on_existing_node.values() {
            refs.extend(pods.iter().map(|p| ("onExistingNode", p.as_str())));
        }
        refs.extend(self.claims.iter().map(|c| ("claims", c.pod.as_str())));
        refs
    }

    fn is_empty(&self) -> bool {
        self.new_claims.is_none()
            && self.pod_refs().is_empty()
            && self.all_scheduled.is_none()
            && self.pods_per_zone.is_none()
            && self.max_skew.is_none()
            && self.total_price_per_hour.is_none()
            && self.static_launches.is_empty()
            && self.static_removals.is_none()
            && self.capacity_buffers.is_empty()
    }
}

// ---------------------------------------------------------------------------
// A scenario file: its cluster documents and its expectation

struct PodInfo {
    labels: BTreeMap<String, String>,
    node_name: Option<String>,
    /// Running (or pending) and not being deleted: counts for topology.
    active: bool,
}

struct Scenario {
    /// The path relative to the crate, for messages.
    rel: String,
    path: PathBuf,
    expect_doc: ExpectDoc,
    /// `namespace/name` of every pod in the file.
    pods: BTreeMap<String, PodInfo>,
    /// Labels of every Node, by name.
    nodes: BTreeMap<String, BTreeMap<String, String>>,
    /// Labels of every NodeClaim, by name.
    node_claims: BTreeMap<String, BTreeMap<String, String>>,
    node_pools: BTreeSet<String>,
    /// The NodePools with `spec.replicas`, whose claims hold no pods.
    static_pools: BTreeSet<String>,
    instance_types: BTreeSet<String>,
}

impl Scenario {
    fn name(&self) -> &str {
        &self.expect_doc.metadata.name
    }

    fn expect(&self) -> &Expect {
        &self.expect_doc.expect
    }

    /// Labels of an existing node or in-flight claim named in the output.
    fn existing_labels(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.nodes.get(name).or_else(|| self.node_claims.get(name))
    }
}

fn scenario_files() -> Vec<PathBuf> {
    crate::common::yaml_files("tests/scenarios", &[])
}

fn relative(path: &Path) -> String {
    path.strip_prefix(crate_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_str)
}

fn labels_at(value: &Value, path: &[&str]) -> BTreeMap<String, String> {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a scenario file: its documents (a `kind: List`'s items count as documents) and
/// its one Expect document.
fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading: {e}"))?;
    let raw: Vec<Value> =
        serde_saphyr::from_multiple(&text).map_err(|e| format!("not YAML: {e}"))?;
    let mut docs = Vec::new();
    for doc in raw {
        match doc.get("items").and_then(Value::as_array) {
            Some(items) if doc.get("kind").and_then(Value::as_str) == Some("List") => {
                docs.extend(items.iter().cloned())
            }
            _ => docs.push(doc),
        }
    }
    let mut expect_docs = Vec::new();
    let mut pods = BTreeMap::new();
    let mut nodes = BTreeMap::new();
    let mut node_claims = BTreeMap::new();
    let mut node_pools = BTreeSet::new();
    let mut static_pools = BTreeSet::new();
    let mut instance_types = BTreeSet::new();
    for doc in docs {
        let name = str_at(&doc, &["metadata", "name"])
            .unwrap_or_default()
            .to_string();
        match str_at(&doc, &["kind"]).unwrap_or_default() {
            EXPECT_KIND => expect_docs.push(doc),
            "Pod" => {
                let namespace = str_at(&doc, &["metadata", "namespace"]).unwrap_or("default");
                let phase = str_at(&doc, &["status", "phase"]).unwrap_or_default();
                let deleting = str_at(&doc, &["metadata", "deletionTimestamp"]).is_some();
                let info = PodInfo {
                    labels: labels_at(&doc, &["metadata", "labels"]),
                    node_name: str_at(&doc, &["spec", "nodeName"]).map(str::to_string),
                    active: !deleting && phase != "Succeeded" && phase != "Failed",
                };
                pods.insert(format!("{namespace}/{name}"), info);
            }
            "Node" => {
                nodes.insert(name, labels_at(&doc, &["metadata", "labels"]));
            }
            "NodeClaim" => {
                node_claims.insert(name, labels_at(&doc, &["metadata", "labels"]));
            }
            "NodePool" => {
                if doc.pointer("/spec/replicas").is_some() {
                    static_pools.insert(name.clone());
                }
                node_pools.insert(name);
            }
            "InstanceType" => {
                instance_types.insert(name);
            }
            _ => {}
        }
    }
    let [expect] = <[Value; 1]>::try_from(expect_docs).map_err(|docs| {
        format!(
            "needs exactly one {EXPECT_API_VERSION} {EXPECT_KIND} document, has {}",
            docs.len()
        )
    })?;
    let expect_doc: ExpectDoc = serde_path_to_error::deserialize(expect)
        .map_err(|e| format!("the Expect document: {}: {}", e.path(), e.inner()))?;
    Ok(Scenario {
        rel: relative(path),
        path: path.to_path_buf(),
        expect_doc,
        pods,
        nodes,
        node_claims,
        node_pools,
        static_pools,
        instance_types,
    })
}

/// The checks of the Expect document against its own file.
fn validate(scenario: &Scenario) -> Vec<String> {
    let mut problems = Vec::new();
    validate_header(&scenario.expect_doc, &mut problems);
    validate_names(scenario, &mut problems);
    validate_pod_lists(scenario.expect(), &mut problems);
    validate_selectors(scenario, &mut problems);
    validate_claim_names(scenario, &mut problems);
    problems
}

/// The document's kind, name, `upstream` and `args`, and that it asserts something.
fn validate_header(doc: &ExpectDoc, problems: &mut Vec<String>) {
    if doc.api_version != EXPECT_API_VERSION || doc.kind != EXPECT_KIND {
        problems.push(format!(
            "the expectation is {} {}, not {EXPECT_API_VERSION} {EXPECT_KIND}",
            doc.api_version, doc.kind
        ));
    }
    if doc.metadata.name.trim().is_empty() {
        problems.push("metadata.name is empty".to_string());
    }
    if doc.upstream.trim().is_empty() {
        problems.push("`upstream` must say where the behaviour comes from".to_string());
    }
    for arg in &doc.args {
        if ["-o", "--output"].contains(&arg.as_str()) || arg.starts_with("--output=") {
            problems.push(format!("args: {arg} is set by the harness"));
        }
    }
    if doc.expect.is_empty() {
        problems.push("`expect` asserts nothing".to_string());
    }
}

/// The pods, static NodePools and existing nodes named are in the file.
fn validate_names(scenario: &Scenario, problems: &mut Vec<String>) {
    let expect = scenario.expect();
    for (key, pod) in expect.pod_refs() {
        if !scenario.pods.contains_key(pod) {
            problems.push(format!(
                "expect.{key}: no pod {pod} in the file (write namespace/name)"
            ));
        }
    }
    for pool in expect.static_launches.keys() {
        if !scenario.static_pools.contains(pool) {
            problems.push(format!(
                "expect.staticLaunches: no static NodePool {pool} (one with spec.replicas) in the file"
            ));
        }
    }
    for node in expect.on_existing_node.keys() {
        if scenario.existing_labels(node).is_none() {
            problems.push(format!(
                "expect.onExistingNode: no Node or NodeClaim {node} in the file"
            ));
        }
    }
}

/// The pod lists and groups do not contradict one another.
fn validate_pod_lists(expect: &Expect, problems: &mut Vec<String>) {
    let scheduled: BTreeSet<_> = expect.scheduled.iter().collect();
    let unschedulable: BTreeSet<_> = expect.unschedulable.iter().collect();
    let ignored: BTreeSet<_> = expect.ignored.iter().collect();
    for pod in scheduled.intersection(&unschedulable) {
        problems.push(format!("{pod} is both scheduled and unschedulable"));
    }
    for pod in ignored.intersection(&scheduled.union(&unschedulable).copied().collect()) {
        problems.push(format!("{pod} is ignored and also expected in the plan"));
    }
    if expect.all_scheduled == Some(true) && !expect.unschedulable.is_empty() {
        problems.push("allScheduled: true, yet some pods are expected unschedulable".into());
    }
    for pod in expect.reason_contains.keys() {
        if scheduled.contains(pod) {
            problems.push(format!(
                "reasonContains names {pod}, which is expected scheduled"
            ));
        }
    }
    for group in expect.same_claim.iter().chain(&expect.different_claims) {
        if group.len() < 2 {
            problems.push(format!(
                "a sameClaim/differentClaims group needs 2 pods: {group:?}"
            ));
        }
    }
}

/// The `podsPerZone` and `maxSkew` selectors each match a pod of the file.
fn validate_selectors(scenario: &Scenario, problems: &mut Vec<String>) {
    let expect = scenario.expect();
    for (what, selector) in [
        (
            "podsPerZone",
            expect.pods_per_zone.as_ref().map(|p| &p.selector),
        ),
        ("maxSkew", expect.max_skew.as_ref().map(|m| &m.selector)),
    ] {
        if let Some(selector) = selector
            && !scenario.pods.values().any(|p| selects(selector, &p.labels))
        {
            problems.push(format!("expect.{what}.selector matches no pod in the file"));
        }
    }
}

/// The NodePools and instance types `claims` names are in the file.
fn validate_claim_names(scenario: &Scenario, problems: &mut Vec<String>) {
    for claim in &scenario.expect().claims {
        if let Some(pool) = &claim.node_pool
            && !scenario.node_pools.contains(pool)
        {
            problems.push(format!("expect.claims: no NodePool {pool} in the file"));
        }
        let launch_type = claim.launch.as_ref().and_then(|l| l.instance_type.as_ref());
        let named = claim
            .instance_types_include
            .iter()
            .chain(&claim.instance_types_exclude)
            .chain(claim.instance_types_exactly.iter().flatten())
            .chain(launch_type);
        for it in named {
            if !scenario.instance_types.contains(it) {
                problems.push(format!("expect.claims: no InstanceType {it} in the file"));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Running karpenter-sim

fn describe_run(output: &Output) -> String {
    format!(
        "exit {:?}; stderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).trim()
    )
}

/// Runs `check` on every scenario over a few threads; the failures, in file order.
fn for_each_scenario(check: impl Fn(&Path) -> Vec<String> + Sync) -> Vec<String> {
    let files = scenario_files();
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get().min(8));
    let chunk = files.len().div_ceil(threads).max(1);
    let check = &check;
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|files| {
                scope.spawn(move || files.iter().flat_map(|f| check(f)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a checking thread panicked"))
            .collect()
    })
}

fn report(what: &str, failures: &[String]) {
    if failures.is_empty() {
        return;
    }
    let mut text = format!("{what} ({}):\n", failures.len());
    for failure in failures {
        let _ = writeln!(text, "- {failure}");
    }
    panic!("{text}");
}

// ---------------------------------------------------------------------------
// The plan, as `karpenter-sim provision -o json` prints it

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    /// A new claim, by its index in `nodeClaims`.
    Claim(usize),
    /// An existing node or in-flight claim, by name.
    Existing(String),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Claim(i) => write!(f, "new claim #{i}"),
            Place::Existing(name) => write!(f, "existing node {name}"),
        }
    }
}

struct Claim {
    node_pool: Option<String>,
    instance_types: Vec<String>,
    requirements: Vec<Value>,
    launch: Value,
    min_values_relaxed: bool,
}

struct Plan {
    claims: Vec<Claim>,
    /// The NodeClaims static NodePools remove.
    static_removals: Vec<String>,
    placement: BTreeMap<String, Place>,
    unschedulable: BTreeMap<String, String>,
    total_price: Option<f64>,
    /// The output's `capacityBuffers` entries, by buffer.
    buffers: BTreeMap<String, Value>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the output; inconsistencies (a pod placed twice, ...) are failures too.
fn read_plan(output: &Value, static_pools: &BTreeSet<String>, failures: &mut Vec<String>) -> Plan {
    let mut placement = BTreeMap::new();
    let claims = read_claims(output, static_pools, &mut placement, failures);
    read_existing_placements(output, &mut placement, failures);
    let unschedulable = read_unschedulable(output, &placement, failures);
    Plan {
        claims,
        static_removals: read_static_removals(output),
        placement,
        unschedulable,
        total_price: output.get("totalPricePerHour").and_then(Value::as_f64),
        buffers: read_buffers(output),
    }
}

/// Records that `pod` is placed `at`; a pod placed twice is a failure.
fn place(
    placement: &mut BTreeMap<String, Place>,
    pod: String,
    at: Place,
    failures: &mut Vec<String>,
) {
    if let Some(before) = placement.insert(pod.clone(), at.clone()) {
        failures.push(format!("output: {pod} is placed twice ({before} and {at})"));
    }
}

/// The output's `nodeClaims`, their pods placed on them.
fn read_claims(
    output: &Value,
    static_pools: &BTreeSet<String>,
    placement: &mut BTreeMap<String, Place>,
    failures: &mut Vec<String>,
) -> Vec<Claim> {
    let mut claims = Vec::new();
    match output.get("nodeClaims").and_then(Value::as_array) {
        Some(items) => {
            for (i, item) in items.iter().enumerate() {
                let pods = strings(item.get("pods"));
                let pool = item
                    .get("nodePool")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // A static pool's claims hold no pods; a claim made for
                // CapacityBuffer headroom lists its virtual pods by buffer.
                let buffered = item
                    .get("capacityBuffers")
                    .and_then(Value::as_object)
                    .is_some_and(|b| !b.is_empty());
                if pods.is_empty() && !static_pools.contains(pool) && !buffered {
                    failures.push(format!("output: new claim #{i} holds no pods"));
                }
                for pod in pods {
                    place(placement, pod, Place::Claim(i), failures);
                }
                claims.push(read_claim(item));
            }
        }
        None => failures.push("output: no nodeClaims array".to_string()),
    }
    claims
}

/// One entry of `nodeClaims`, as the checks read it.
fn read_claim(item: &Value) -> Claim {
    Claim {
        node_pool: item
            .get("nodePool")
            .and_then(Value::as_str)
            .map(str::to_string),
        instance_types: strings(item.get("instanceTypes")),
        requirements: item
            .get("requirements")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        launch: item.get("launch").cloned().unwrap_or(Value::Null),
        min_values_relaxed: item
            .get("minValuesRelaxed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

/// The output's `existingNodes`: their pods placed on them.
fn read_existing_placements(
    output: &Value,
    placement: &mut BTreeMap<String, Place>,
    failures: &mut Vec<String>,
) {
    for item in output
        .get("existingNodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        for pod in strings(item.get("pods")) {
            place(placement, pod, Place::Existing(name.to_string()), failures);
        }
    }
}

/// The output's `unschedulable` pods and their reasons; one also placed is a failure.
fn read_unschedulable(
    output: &Value,
    placement: &BTreeMap<String, Place>,
    failures: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let mut unschedulable = BTreeMap::new();
    for item in output
        .get("unschedulable")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let pod = item.get("pod").and_then(Value::as_str).unwrap_or_default();
        let reason = item
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(at) = placement.get(pod) {
            failures.push(format!(
                "output: {pod} is both placed ({at}) and unschedulable"
            ));
        }
        unschedulable.insert(pod.to_string(), reason.to_string());
    }
    unschedulable
}

/// The NodeClaims the output's `staticRemovals` remove, in order.
fn read_static_removals(output: &Value) -> Vec<String> {
    output
        .get("staticRemovals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            r.get("nodeClaim")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

/// The output's `capacityBuffers` entries, by buffer.
fn read_buffers(output: &Value) -> BTreeMap<String, Value> {
    output
        .get("capacityBuffers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| Some((b.get("buffer")?.as_str()?.to_string(), b.clone())))
        .collect()
}

fn selects(selector: &BTreeMap<String, String>, labels: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

fn launch_str<'a>(claim: &'a Claim, field: &str) -> Option<&'a str> {
    claim.launch.get(field).and_then(Value::as_str)
}

/// The claim's single `In` value of a requirement on `key`.
fn pinned(claim: &Claim, key: &str) -> Option<String> {
    claim.requirements.iter().find_map(|r| {
        let values = strings(r.get("values"));
        (r.get("key").and_then(Value::as_str) == Some(key)
            && r.get("operator").and_then(Value::as_str) == Some("In")
            && values.len() == 1)
            .then(|| values[0].clone())
    })
}

/// The topology domain a place is in, for `key`.
fn domain(scenario: &Scenario, plan: &Plan, place: &Place, key: &str) -> Option<String> {
    match place {
        Place::Claim(i) => {
            let claim = &plan.claims[*i];
            let from_launch = match key {
                ZONE => launch_str(claim, "zone"),
                CAPACITY_TYPE => launch_str(claim, "capacityType"),
                INSTANCE_TYPE => launch_str(claim, "instanceType"),
                HOSTNAME => return Some(format!("new-claim-{i}")),
                _ => None,
            };
            from_launch
                .map(str::to_string)
                .or_else(|| pinned(claim, key))
        }
        Place::Existing(name) => {
            let labels = scenario.existing_labels(name);
            labels
                .and_then(|l| l.get(key))
                .cloned()
                .or_else(|| (key == HOSTNAME).then(|| name.clone()))
        }
    }
}

/// Counts per domain of `key` of the pods with these labels after the plan: the pods it
/// places and the pods already bound to a node, running and not being deleted.
fn count_domains(
    scenario: &Scenario,
    plan: &Plan,
    selector: &BTreeMap<String, String>,
    namespace: Option<&str>,
    key: &str,
    problems: &mut Vec<String>,
) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (pod, info) in &scenario.pods {
        let in_namespace = namespace.is_none_or(|ns| pod.split('/').next() == Some(ns));
        if !in_namespace || !selects(selector, &info.labels) {
            continue;
        }
        let place = match (&info.node_name, plan.placement.get(pod)) {
            (_, Some(place)) => place.clone(),
            (Some(node), None) if info.active => Place::Existing(node.clone()),
            _ => continue,
        };
        match domain(scenario, plan, &place, key) {
            Some(d) => *counts.entry(d).or_insert(0) += 1,
            // A bound pod on a node without the key is in no domain; a placed pod must be.
            None if info.node_name.is_none() => {
                problems.push(format!("cannot tell the {key} of {place} (holding {pod})"))
            }
            None => {}
        }
    }
    counts
}

fn pods_of(plan: &Plan, place: &Place) -> Vec<String> {
    plan.placement
        .iter()
        .filter(|(_, p)| *p == place)
        .map(|(pod, _)| pod.clone())
        .collect()
}

fn requirement_matches(actual: &Value, want: &RequirementCheck) -> bool {
    let values: BTreeSet<String> = strings(actual.get("values")).into_iter().collect();
    let want_values: BTreeSet<String> = want.values.iter().cloned().collect();
    actual.get("key").and_then(Value::as_str) == Some(&want.key)
        && actual.get("operator").and_then(Value::as_str) == Some(&want.operator)
        && values == want_values
        && want
            .min_values
            .is_none_or(|m| actual.get("minValues").and_then(Value::as_u64) == Some(m))
}

fn price_differs(actual: Option<f64>, want: f64) -> bool {
    actual.is_none_or(|a| (a - want).abs() > PRICE_TOLERANCE)
}

/// Every assertion of the scenario against the plan; the failures, in the
/// order of the checks listed here.
fn check(scenario: &Scenario, plan: &Plan) -> Vec<String> {
    let expect = scenario.expect();
    let mut f = Vec::new();
    check_pods_named(scenario, plan, &mut f);
    check_claim_counts(expect, plan, &mut f);
    check_capacity_buffers(expect, plan, &mut f);
    check_static_removals(expect, plan, &mut f);
    check_scheduled(expect, plan, &mut f);
    check_unschedulable(expect, plan, &mut f);
    check_ignored(expect, plan, &mut f);
    check_all_scheduled(expect, plan, &mut f);
    check_reasons(expect, plan, &mut f);
    check_same_claim(expect, plan, &mut f);
    check_different_claims(expect, plan, &mut f);
    check_existing_placements(expect, plan, &mut f);
    check_pods_per_zone(scenario, plan, &mut f);
    check_max_skew(scenario, plan, &mut f);
    for want in &expect.claims {
        check_claim(want, plan, &mut f);
    }
    check_total_price(expect, plan, &mut f);
    f
}

/// Every pod the output names is one of the file's.
fn check_pods_named(scenario: &Scenario, plan: &Plan, f: &mut Vec<String>) {
    for pod in plan.placement.keys().chain(plan.unschedulable.keys()) {
        if !scenario.pods.contains_key(pod) {
            f.push(format!("output names pod {pod}, which is not in the file"));
        }
    }
}

/// `newClaims` and `staticLaunches`: how many claims the plan launches.
fn check_claim_counts(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    if let Some(want) = expect.new_claims
        && plan.claims.len() != want
    {
        f.push(format!("newClaims: want {want}, got {}", plan.claims.len()));
    }
    for (pool, want) in &expect.static_launches {
        let got = (plan.claims.iter())
            .filter(|c| c.node_pool.as_deref() == Some(pool.as_str()))
            .count();
        if got != *want {
            f.push(format!("staticLaunches: {pool}: want {want}, got {got}"));
        }
    }
}

/// `capacityBuffers`: each buffer's entry in the output, field by field.
fn check_capacity_buffers(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for (buffer, fields) in &expect.capacity_buffers {
        let entry = plan.buffers.get(buffer);
        for (field, want) in fields {
            if field == "absent" {
                if (want == &Value::Bool(true)) != entry.is_none() {
                    f.push(format!("capacityBuffers: {buffer}: absent: want {want}"));
                }
                continue;
            }
            // Fields the output leaves out when empty read as empty.
            let got = match (entry.and_then(|e| e.get(field)), field.as_str()) {
                (Some(v), _) => v.clone(),
                (None, "existingNodes") => Value::Object(serde_json::Map::new()),
                (None, _) => Value::Null,
            };
            if entry.is_none() || got != *want {
                f.push(format!(
                    "capacityBuffers: {buffer}: {field}: want {want}, got {got}"
                ));
            }
        }
    }
}

/// `staticRemovals`: the claims static NodePools remove, in order.
fn check_static_removals(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    if let Some(want) = &expect.static_removals
        && *want != plan.static_removals
    {
        f.push(format!(
            "staticRemovals: want {want:?}, got {:?}",
            plan.static_removals
        ));
    }
}

/// `scheduled`: these pods are placed.
fn check_scheduled(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for pod in &expect.scheduled {
        if !plan.placement.contains_key(pod) {
            let why = plan
                .unschedulable
                .get(pod)
                .map_or("absent from the plan".to_string(), |r| {
                    format!("unschedulable: {r}")
                });
            f.push(format!("scheduled: {pod} is not placed ({why})"));
        }
    }
}

/// `unschedulable`: these pods are listed as unschedulable, not placed.
fn check_unschedulable(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for pod in &expect.unschedulable {
        if let Some(at) = plan.placement.get(pod) {
            f.push(format!("unschedulable: {pod} is placed on {at}"));
        } else if !plan.unschedulable.contains_key(pod) {
            f.push(format!("unschedulable: {pod} is not in `unschedulable`"));
        }
    }
}

/// `ignored`: these pods are neither placed nor unschedulable.
fn check_ignored(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for pod in &expect.ignored {
        if let Some(at) = plan.placement.get(pod) {
            f.push(format!("ignored: {pod} is placed on {at}"));
        }
        if plan.unschedulable.contains_key(pod) {
            f.push(format!("ignored: {pod} is listed as unschedulable"));
        }
    }
}

/// `allScheduled`: whether no pod at all is unschedulable.
fn check_all_scheduled(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    match expect.all_scheduled {
        Some(true) if !plan.unschedulable.is_empty() => f.push(format!(
            "allScheduled: true, but unschedulable: {:?}",
            plan.unschedulable
        )),
        Some(false) if plan.unschedulable.is_empty() => {
            f.push("allScheduled: false, but no pod is unschedulable".to_string())
        }
        _ => {}
    }
}

/// `reasonContains`: an unschedulable pod's reason holds the text.
fn check_reasons(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for (pod, text) in &expect.reason_contains {
        match plan.unschedulable.get(pod) {
            Some(reason) if reason.to_lowercase().contains(&text.to_lowercase()) => {}
            Some(reason) => f.push(format!(
                "reasonContains: the reason for {pod} lacks {text:?}: {reason:?}"
            )),
            None => f.push(format!("reasonContains: {pod} is not unschedulable")),
        }
    }
}

/// `sameClaim`: each group's pods are placed together.
fn check_same_claim(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for group in &expect.same_claim {
        let places: Vec<_> = group.iter().map(|p| plan.placement.get(p)).collect();
        let all_same = places.iter().all(|p| p.is_some() && *p == places[0]);
        if !all_same {
            let shown: Vec<_> = group
                .iter()
                .zip(&places)
                .map(|(pod, at)| {
                    format!(
                        "{pod} on {}",
                        at.map_or("nothing".into(), |a| a.to_string())
                    )
                })
                .collect();
            f.push(format!("sameClaim: not together: {}", shown.join(", ")));
        }
    }
}

/// `differentClaims`: each group's pods are placed, no two together.
fn check_different_claims(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for group in &expect.different_claims {
        for (i, a) in group.iter().enumerate() {
            for b in &group[i + 1..] {
                match (plan.placement.get(a), plan.placement.get(b)) {
                    (Some(pa), Some(pb)) if pa == pb => {
                        f.push(format!("differentClaims: {a} and {b} are both on {pa}"))
                    }
                    (Some(_), Some(_)) => {}
                    _ => f.push(format!("differentClaims: {a} or {b} is not placed")),
                }
            }
        }
    }
}

/// `onExistingNode`: these pods are placed on that existing node or claim.
fn check_existing_placements(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    for (node, pods) in &expect.on_existing_node {
        let want = Place::Existing(node.clone());
        for pod in pods {
            match plan.placement.get(pod) {
                Some(at) if *at == want => {}
                Some(at) => f.push(format!("onExistingNode: {pod} is on {at}, not {node}")),
                None => f.push(format!("onExistingNode: {pod} is not placed")),
            }
        }
    }
}

/// `podsPerZone`: the selected pods' count in each zone, after the plan.
fn check_pods_per_zone(scenario: &Scenario, plan: &Plan, f: &mut Vec<String>) {
    let Some(ppz) = &scenario.expect().pods_per_zone else {
        return;
    };
    let mut problems = Vec::new();
    let mut got = count_domains(
        scenario,
        plan,
        &ppz.selector,
        ppz.namespace.as_deref(),
        ZONE,
        &mut problems,
    );
    f.extend(problems.into_iter().map(|p| format!("podsPerZone: {p}")));
    got.retain(|_, n| *n > 0);
    let mut want = ppz.counts.clone();
    want.retain(|_, n| *n > 0);
    if got != want {
        f.push(format!("podsPerZone: want {want:?}, got {got:?}"));
    }
}

/// `maxSkew`: the selected pods' spread over a key's domains, after the plan.
fn check_max_skew(scenario: &Scenario, plan: &Plan, f: &mut Vec<String>) {
    let Some(ms) = &scenario.expect().max_skew else {
        return;
    };
    let mut problems = Vec::new();
    let mut got = count_domains(
        scenario,
        plan,
        &ms.selector,
        ms.namespace.as_deref(),
        &ms.key,
        &mut problems,
    );
    f.extend(problems.into_iter().map(|p| format!("maxSkew: {p}")));
    for d in &ms.domains {
        got.entry(d.clone()).or_insert(0);
    }
    let max = got.values().max().copied().unwrap_or(0);
    let min = got.values().min().copied().unwrap_or(0);
    if max - min > ms.skew {
        f.push(format!(
            "maxSkew: {} skew is {} (over {got:?}), more than {}",
            ms.key,
            max - min,
            ms.skew
        ));
    }
}

/// `claims`: the new claim holding the pod is as described.
fn check_claim(want: &ClaimCheck, plan: &Plan, f: &mut Vec<String>) {
    let claim = match plan.placement.get(&want.pod) {
        Some(Place::Claim(i)) => &plan.claims[*i],
        Some(at) => {
            f.push(format!(
                "claims: {} is on {at}, not on a new claim",
                want.pod
            ));
            return;
        }
        None => {
            f.push(format!("claims: {} is not placed", want.pod));
            return;
        }
    };
    let who = format!("claims[{}]", want.pod);
    check_claim_pool(&who, want, claim, f);
    check_claim_instance_types(&who, want, claim, f);
    if let Some(launch) = &want.launch {
        check_claim_launch(&who, launch, claim, f);
    }
    check_claim_min_values_relaxed(&who, want, claim, f);
    check_claim_requirements(&who, want, claim, f);
}

/// `claims[].nodePool`: the NodePool the claim comes from.
fn check_claim_pool(who: &str, want: &ClaimCheck, claim: &Claim, f: &mut Vec<String>) {
    if let Some(pool) = &want.node_pool
        && claim.node_pool.as_ref() != Some(pool)
    {
        f.push(format!(
            "{who}: nodePool is {:?}, want {pool}",
            claim.node_pool
        ));
    }
}

/// `claims[].instanceTypes*`: the instance types the claim lists.
fn check_claim_instance_types(who: &str, want: &ClaimCheck, claim: &Claim, f: &mut Vec<String>) {
    for it in &want.instance_types_include {
        if !claim.instance_types.contains(it) {
            f.push(format!(
                "{who}: instanceTypes lack {it}: {:?}",
                claim.instance_types
            ));
        }
    }
    for it in &want.instance_types_exclude {
        if claim.instance_types.contains(it) {
            f.push(format!(
                "{who}: instanceTypes include {it}: {:?}",
                claim.instance_types
            ));
        }
    }
    if let Some(exactly) = &want.instance_types_exactly
        && &claim.instance_types != exactly
    {
        f.push(format!(
            "{who}: instanceTypes are {:?}, want exactly {exactly:?}",
            claim.instance_types
        ));
    }
}

/// `claims[].launch`: what the claim launches, and at what price.
fn check_claim_launch(who: &str, launch: &LaunchCheck, claim: &Claim, f: &mut Vec<String>) {
    for (field, value) in [
        ("instanceType", &launch.instance_type),
        ("zone", &launch.zone),
        ("capacityType", &launch.capacity_type),
    ] {
        if let Some(value) = value
            && launch_str(claim, field) != Some(value.as_str())
        {
            f.push(format!(
                "{who}: launch.{field} is {:?}, want {value}",
                launch_str(claim, field)
            ));
        }
    }
    if let Some(price) = launch.price {
        let actual = claim.launch.get("price").and_then(Value::as_f64);
        if price_differs(actual, price) {
            f.push(format!("{who}: launch.price is {actual:?}, want {price}"));
        }
    }
}

/// `claims[].minValuesRelaxed`: whether the claim's `minValues` were lowered.
fn check_claim_min_values_relaxed(
    who: &str,
    want: &ClaimCheck,
    claim: &Claim,
    f: &mut Vec<String>,
) {
    if let Some(relaxed) = want.min_values_relaxed
        && claim.min_values_relaxed != relaxed
    {
        f.push(format!(
            "{who}: minValuesRelaxed is {}, want {relaxed}",
            claim.min_values_relaxed
        ));
    }
}

/// `claims[].requirementsInclude`: requirements the claim carries.
fn check_claim_requirements(who: &str, want: &ClaimCheck, claim: &Claim, f: &mut Vec<String>) {
    for req in &want.requirements_include {
        if !claim
            .requirements
            .iter()
            .any(|r| requirement_matches(r, req))
        {
            f.push(format!(
                "{who}: no requirement {} {} {:?}{} in {}",
                req.key,
                req.operator,
                req.values,
                req.min_values
                    .map_or(String::new(), |m| format!(" minValues {m}")),
                Value::Array(claim.requirements.clone())
            ));
        }
    }
}

/// `totalPricePerHour`: the plan's price.
fn check_total_price(expect: &Expect, plan: &Plan, f: &mut Vec<String>) {
    if let Some(want) = expect.total_price_per_hour
        && price_differs(plan.total_price, want)
    {
        f.push(format!(
            "totalPricePerHour is {:?}, want {want}",
            plan.total_price
        ));
    }
}

/// A short picture of the plan, printed with a failing scenario's failures.
fn summarise(plan: &Plan) -> String {
    let mut text = String::new();
    for (i, claim) in plan.claims.iter().enumerate() {
        let _ = write!(
            text,
            "\n    claim #{i} pool={} launch={} pods={:?}",
            claim.node_pool.as_deref().unwrap_or("?"),
            claim.launch,
            pods_of(plan, &Place::Claim(i))
        );
    }
    let existing: BTreeSet<_> = plan
        .placement
        .values()
        .filter(|p| matches!(p, Place::Existing(_)))
        .collect();
    for place in existing {
        let _ = write!(text, "\n    {place}: {:?}", pods_of(plan, place));
    }
    for (pod, reason) in &plan.unschedulable {
        let _ = write!(text, "\n    unschedulable {pod}: {reason}");
    }
    text
}

// ---------------------------------------------------------------------------
// The tests

#[test]
fn every_scenario_file_loads_and_has_a_valid_expectation() {
    let files = scenario_files();
    let mut failures = Vec::new();
    if files.len() < MIN_SCENARIOS {
        failures.push(format!(
            "only {} scenario files under tests/scenarios (at least {MIN_SCENARIOS} expected)",
            files.len()
        ));
    }
    let names: std::sync::Mutex<BTreeMap<String, String>> = Default::default();
    failures.extend(for_each_scenario(|path| {
        let rel = relative(path);
        let mut problems = Vec::new();
        let file = path.to_str().expect("UTF-8 path");
        let output = sim(&["summary", "-f", file]);
        if !output.status.success() {
            problems.push(format!("karpenter-sim summary: {}", describe_run(&output)));
        }
        match load(path) {
            Ok(scenario) => {
                problems.extend(validate(&scenario));
                let mut names = names.lock().expect("names");
                if let Some(other) = names.insert(scenario.name().to_string(), rel.clone()) {
                    problems.push(format!(
                        "the expectation name {} is also used by {other}",
                        scenario.name()
                    ));
                }
            }
            Err(e) => problems.push(e),
        }
        problems
            .into_iter()
            .map(|p| format!("{rel}: {p}"))
            .collect()
    }));
    report("problems with the scenario files", &failures);
}

#[test]
fn provisioning_matches_upstream_behaviour() {
    let files = scenario_files();
    assert!(
        files.len() >= MIN_SCENARIOS,
        "only {} scenario files under tests/scenarios",
        files.len()
    );
    let failures = for_each_scenario(|path| {
        let scenario = match load(path) {
            Ok(scenario) => scenario,
            Err(e) => return vec![format!("{}: {e}", relative(path))],
        };
        let at = format!("{} ({})", scenario.rel, scenario.name());
        let file = scenario.path.to_str().expect("UTF-8 path");
        let mut args = vec!["provision", "-f", file, "-o", "json"];
        args.extend(scenario.expect_doc.args.iter().map(String::as_str));
        let first = sim(&args);
        if !first.status.success() {
            return vec![format!(
                "{at}: karpenter-sim provision: {}",
                describe_run(&first)
            )];
        }
        let mut failures = Vec::new();
        let second = sim(&args);
        if second.stdout != first.stdout {
            failures.push("a second run printed a different plan (not deterministic)".to_string());
        }
        let output: Value = match serde_json::from_slice(&first.stdout) {
            Ok(v) => v,
            Err(e) => return vec![format!("{at}: the output is not JSON: {e}")],
        };
        let plan = read_plan(&output, &scenario.static_pools, &mut failures);
        failures.extend(check(&scenario, &plan));
        if failures.is_empty() {
            return Vec::new();
        }
        let mut text = format!("{at}:");
        for failure in &failures {
            let _ = write!(text, "\n    {failure}");
        }
        let _ = write!(text, "\n  the plan:{}", summarise(&plan));
        vec![text]
    });
    report(
        "scenarios whose plan differs from upstream's behaviour",
        &failures,
    );
}

/// `--bound` on every scenario: a bound is given, and it is never above the
/// plan's price (the plan is a valid one).
#[test]
fn the_lower_bound_never_exceeds_the_plans_price() {
    let failures = for_each_scenario(|path| {
        let file = path.display().to_string();
        let output = sim(&["provision", "-f", &file, "--bound", "-o", "json"]);
        if !output.status.success() {
            return Vec::new(); // scenarios of bad input are checked elsewhere
        }
        let plan: Value = match serde_json::from_slice(&output.stdout) {
            Ok(plan) => plan,
            Err(e) => return vec![format!("{}: not JSON: {e}", relative(path))],
        };
        let price = plan["totalPricePerHour"].as_f64().unwrap_or(f64::NAN);
        match plan["lowerBoundPerHour"].as_f64() {
            Some(bound) if bound <= price + 1e-9 => Vec::new(),
            Some(bound) => vec![format!(
                "{}: bound {bound} above the plan's {price}",
                relative(path)
            )],
            None => vec![format!("{}: no bound", relative(path))],
        }
    });
    report("bounds", &failures);
}
