//! Unit tests: upstream's topology scenarios (`topology_test.go`) replayed
//! against [`Topology`] directly, with a small stand-in for the scheduler
//! (`place`) that asks for the topology's requirements, merges them into a
//! node's and records the pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodAffinity, PodAffinityTerm, PodAntiAffinity, PodSpec, PodStatus, Taint,
    TopologySpreadConstraint, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, Time,
};

use super::*;
use crate::cloudprovider::{InstanceType, Offering};
use crate::resources::ResourceList;
use crate::scheduling::{
    LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Requirement, Requirements, WellKnownLabels,
};

const ZONE: &str = LABEL_TOPOLOGY_ZONE;
const HOST: &str = LABEL_HOSTNAME;

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

/// An owned pod to lend as a [`PodView`].
#[derive(Clone, Debug)]
struct TestPod {
    uid: String,
    namespace: String,
    labels: BTreeMap<String, String>,
    spec: PodSpec,
}

impl TestPod {
    fn new(uid: &str, labels: &[(&str, &str)], spec: PodSpec) -> TestPod {
        TestPod {
            uid: uid.to_owned(),
            namespace: "default".to_owned(),
            labels: map(labels),
            spec,
        }
    }

    fn in_namespace(mut self, namespace: &str) -> TestPod {
        self.namespace = namespace.to_owned();
        self
    }

    fn view(&self) -> PodView<'_> {
        PodView {
            uid: &self.uid,
            namespace: &self.namespace,
            labels: &self.labels,
            spec: &self.spec,
        }
    }

    fn strict(&self) -> Requirements {
        Requirements::from_pod_spec_strict(&self.spec).expect("valid pod")
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn selector(labels: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: Some(map(labels)),
        match_expressions: None,
    }
}

fn spread(key: &str, max_skew: i32, labels: &[(&str, &str)]) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        topology_key: key.to_owned(),
        max_skew,
        when_unsatisfiable: "DoNotSchedule".to_owned(),
        label_selector: Some(selector(labels)),
        ..TopologySpreadConstraint::default()
    }
}

fn spread_spec(constraints: Vec<TopologySpreadConstraint>) -> PodSpec {
    PodSpec {
        topology_spread_constraints: Some(constraints),
        ..PodSpec::default()
    }
}

fn term(key: &str, labels: &[(&str, &str)]) -> PodAffinityTerm {
    PodAffinityTerm {
        topology_key: key.to_owned(),
        label_selector: Some(selector(labels)),
        ..PodAffinityTerm::default()
    }
}

fn affinity_spec(required: Vec<PodAffinityTerm>) -> PodSpec {
    PodSpec {
        affinity: Some(Affinity {
            pod_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: Some(required),
                ..PodAffinity::default()
            }),
            ..Affinity::default()
        }),
        ..PodSpec::default()
    }
}

fn anti_spec(required: Vec<PodAffinityTerm>) -> PodSpec {
    PodSpec {
        affinity: Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(required),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        }),
        ..PodSpec::default()
    }
}

fn preferred_anti_spec(preferred: Vec<PodAffinityTerm>) -> PodSpec {
    let weighted = preferred
        .into_iter()
        .map(|pod_affinity_term| WeightedPodAffinityTerm {
            pod_affinity_term,
            weight: 10,
        })
        .collect();
    PodSpec {
        affinity: Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(weighted),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        }),
        ..PodSpec::default()
    }
}

fn taint(key: &str, value: &str) -> Taint {
    Taint {
        key: key.to_owned(),
        value: Some(value.to_owned()),
        effect: "NoSchedule".to_owned(),
        time_added: None,
    }
}

fn reqs(items: &[(&str, &[&str])]) -> Requirements {
    items
        .iter()
        .map(|(key, values)| Requirement::in_values(key, values.iter()))
        .collect()
}

/// A new claim's requirements: its zones and its placeholder hostname.
fn claim(zones: &[&str], host: &str) -> Requirements {
    reqs(&[(ZONE, zones), (HOST, &[host])])
}

/// A cluster: NodePools, existing nodes and the pods on them.
#[derive(Default)]
struct World {
    pools: Vec<(Requirements, Vec<InstanceType>, Vec<Taint>)>,
    nodes: Vec<(BTreeMap<String, String>, Vec<Taint>)>,
    /// Placed pods and the index of their node.
    placed: Vec<(TestPod, usize)>,
    /// The cluster's Namespaces.
    namespaces: Vec<k8s_openapi::api::core::v1::Namespace>,
}

impl World {
    /// One NodePool whose single instance type is offered in `zones`.
    fn zonal(zones: &[&str]) -> World {
        let mut world = World::default();
        world.pool(Requirements::new(), zones, Vec::new());
        world
    }

    /// Adds a Namespace with these labels.
    fn namespace(&mut self, name: &str, labels: &[(&str, &str)]) {
        let mut namespace = k8s_openapi::api::core::v1::Namespace::default();
        namespace.metadata.name = Some(name.to_owned());
        namespace.metadata.labels = Some(map(labels));
        self.namespaces.push(namespace);
    }

    fn pool(&mut self, requirements: Requirements, zones: &[&str], taints: Vec<Taint>) {
        let offerings = zones
            .iter()
            .map(|zone| Offering::new(*zone, "on-demand", 1.0))
            .collect();
        let name = format!("type-{}", self.pools.len());
        let labels: [(&str, &str); 0] = [];
        let instance_type = InstanceType::new(
            name,
            labels,
            offerings,
            ResourceList::new(),
            ResourceList::new(),
        );
        self.pools.push((requirements, vec![instance_type], taints));
    }

    fn node(&mut self, labels: &[(&str, &str)], taints: Vec<Taint>) -> usize {
        self.nodes.push((map(labels), taints));
        self.nodes.len() - 1
    }

    fn place(&mut self, pod: TestPod, node: usize) {
        self.placed.push((pod, node));
    }

    fn topology(&self, pending: &[TestPod]) -> Topology {
        let sources: Vec<DomainSource<'_>> = self
            .pools
            .iter()
            .map(|(requirements, types, taints)| DomainSource {
                pool_requirements: requirements,
                instance_types: types,
                taints,
            })
            .collect();
        let nodes: Vec<ExistingView<'_>> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(id, (labels, taints))| ExistingView {
                id,
                labels,
                taints,
                requirements: None,
            })
            .collect();
        let placed: Vec<PlacedPod<'_>> = self
            .placed
            .iter()
            .enumerate()
            .map(|(pod_id, (pod, node))| PlacedPod {
                node_id: *node,
                pod_id: Some(pod_id),
                pod: pod.view(),
                node_labels: &self.nodes[*node].0,
                node_requirements: None,
                node_taints: &self.nodes[*node].1,
                source: None,
            })
            .collect();
        let pending: Vec<PodView<'_>> = pending.iter().map(TestPod::view).collect();
        Topology::new(
            &sources,
            &nodes,
            &placed,
            &pending,
            WellKnownLabels::core(),
            NamespaceLabels::new(&self.namespaces),
        )
    }
}

/// What the scheduler does with a new claim: the pod's requirements and the
/// topology's narrow the claim's, then the pod is recorded there. Returns the
/// claim's final requirements.
fn place(
    topology: &mut Topology,
    pod: &TestPod,
    node: Requirements,
) -> Result<Requirements, TopologyError> {
    let mut node = node;
    node.add_all(&Requirements::from_pod_spec(&pod.spec).expect("valid pod"));
    let added = topology.add_requirements(&pod.view(), &pod.strict(), &node)?;
    node.add_all(&added);
    if let Some(host) = node.get_defined(HOST).and_then(|r| r.values().next()) {
        let host = host.to_owned();
        topology.register(HOST, &host);
    }
    topology.record(&pod.view(), &node);
    Ok(node)
}

/// The single value of `key`, or all of them joined with `|`.
fn value(requirements: &Requirements, key: &str) -> String {
    requirements
        .get_defined(key)
        .map(|r| r.values().collect::<Vec<_>>().join("|"))
        .unwrap_or_default()
}

/// Places each pod on its own new claim over `zones` and returns the zone
/// each landed in ("" for a pod that could not be placed).
fn place_each(topology: &mut Topology, pods: &[TestPod], zones: &[&str]) -> Vec<String> {
    pods.iter()
        .enumerate()
        .map(|(i, pod)| {
            let host = format!("hostname-placeholder-{i:04}");
            place(topology, pod, claim(zones, &host))
                .map(|node| value(&node, ZONE))
                .unwrap_or_default()
        })
        .collect()
}

fn replicas(count: usize, labels: &[(&str, &str)], spec: &PodSpec) -> Vec<TestPod> {
    (0..count)
        .map(|i| TestPod::new(&format!("pod-{i}"), labels, spec.clone()))
        .collect()
}

fn tally(zones: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for zone in zones {
        *counts.entry(zone.clone()).or_default() += 1;
    }
    counts
}

const WEB: &[(&str, &str)] = &[("app", "web")];

// ---------------------------------------------------------------------------
// Spread
// ---------------------------------------------------------------------------

#[test]
fn zonal_spread_balances_three_zones() {
    let world = World::zonal(&["a", "b", "c"]);
    let pods = replicas(9, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    assert_eq!(zones, ["a", "b", "c", "a", "b", "c", "a", "b", "c"]);
}

#[test]
fn zonal_spread_balances_two_zones() {
    let world = World::zonal(&["a", "b"]);
    let pods = replicas(5, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b"]);
    assert_eq!(zones, ["a", "b", "a", "b", "a"]);
}

#[test]
fn replicas_share_one_group() {
    let world = World::zonal(&["a", "b", "c"]);
    let pods = replicas(100, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let topology = world.topology(&pods);
    assert_eq!(topology.group_count(), 1);
}

#[test]
fn max_skew_bounds_a_pinned_zone() {
    for (max_skew, fits) in [(1, 1), (2, 2), (3, 3)] {
        let world = World::zonal(&["a", "b", "c"]);
        let pods = replicas(5, WEB, &spread_spec(vec![spread(ZONE, max_skew, WEB)]));
        let mut topology = world.topology(&pods);
        let zones = place_each(&mut topology, &pods, &["a"]);
        let placed = zones.iter().filter(|z| !z.is_empty()).count();
        assert_eq!(placed, fits, "maxSkew {max_skew}: {zones:?}");
    }
}

#[test]
fn spread_error_names_the_constraint() {
    let world = World::zonal(&["a", "b"]);
    let pods = replicas(2, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    place(&mut topology, &pods[0], claim(&["a"], "h0")).expect("first fits");
    let error = place(&mut topology, &pods[1], claim(&["a"], "h1")).unwrap_err();
    assert_eq!(error.kind(), ConstraintKind::Spread { max_skew: 1 });
    assert_eq!(error.key(), ZONE);
    assert_eq!(
        error.to_string(),
        "topology spread constraint topology.kubernetes.io/zone maxSkew 1 cannot be satisfied: \
         no eligible domain (2 domains known; the node allows topology.kubernetes.io/zone In [a])"
    );
}

#[test]
fn hostname_spread_wants_a_new_host_every_time() {
    let world = World::zonal(&["a"]);
    let pods = replicas(3, WEB, &spread_spec(vec![spread(HOST, 1, WEB)]));
    let mut topology = world.topology(&pods);
    let first = place(&mut topology, &pods[0], claim(&["a"], "host-0")).expect("fits");
    assert_eq!(value(&first, HOST), "host-0");
    // The same host again would put two pods on it.
    let error = place(&mut topology, &pods[1], claim(&["a"], "host-0")).unwrap_err();
    assert_eq!(error.key(), HOST);
    // Any new host will do, however many hosts are known.
    for (i, pod) in pods.iter().enumerate().skip(1) {
        let host = format!("host-{i}");
        let node = place(&mut topology, pod, claim(&["a"], &host)).expect("new host");
        assert_eq!(value(&node, HOST), host);
    }
}

#[test]
fn hostname_spread_allows_max_skew_per_host() {
    let world = World::zonal(&["a"]);
    let pods = replicas(3, WEB, &spread_spec(vec![spread(HOST, 2, WEB)]));
    let mut topology = world.topology(&pods);
    assert!(place(&mut topology, &pods[0], claim(&["a"], "h")).is_ok());
    assert!(place(&mut topology, &pods[1], claim(&["a"], "h")).is_ok());
    assert!(place(&mut topology, &pods[2], claim(&["a"], "h")).is_err());
}

#[test]
fn min_domains_holds_the_minimum_at_zero() {
    let mut with = spread(ZONE, 1, WEB);
    with.min_domains = Some(5);
    let world = World::zonal(&["a", "b", "c"]);
    let pods = replicas(5, WEB, &spread_spec(vec![with]));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    // Three domains are fewer than five: each may only reach maxSkew above 0.
    assert_eq!(zones, ["a", "b", "c", "", ""]);

    let mut satisfied = spread(ZONE, 1, WEB);
    satisfied.min_domains = Some(3);
    let pods = replicas(5, WEB, &spread_spec(vec![satisfied]));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    assert_eq!(zones, ["a", "b", "c", "a", "b"]);
}

#[test]
fn placed_pods_count() {
    let mut world = World::zonal(&["a", "b", "c"]);
    let node = world.node(&[(ZONE, "a"), (HOST, "node-a")], Vec::new());
    world.place(TestPod::new("old-0", WEB, PodSpec::default()), node);
    world.place(TestPod::new("old-1", WEB, PodSpec::default()), node);
    // Other labels and other namespaces do not count.
    world.place(
        TestPod::new("other", &[("app", "db")], PodSpec::default()),
        node,
    );
    let elsewhere = TestPod::new("ns", WEB, PodSpec::default()).in_namespace("other");
    world.place(elsewhere, node);
    let pods = replicas(4, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    assert_eq!(zones, ["b", "c", "b", "c"]);
}

#[test]
fn pending_pods_are_not_counted_where_they_were() {
    let mut world = World::zonal(&["a", "b"]);
    let node = world.node(&[(ZONE, "a")], Vec::new());
    let pods = replicas(1, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    // The pending pod is being moved off a node in zone a.
    world.place(pods[0].clone(), node);
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["a"]);
}

#[test]
fn pods_on_nodes_without_the_key_do_not_count() {
    let mut world = World::zonal(&["a", "b"]);
    let node = world.node(&[(HOST, "no-zone")], Vec::new());
    world.place(TestPod::new("old", WEB, PodSpec::default()), node);
    let pods = replicas(1, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["a"]);
}

#[test]
fn unknown_topology_key_cannot_be_met() {
    let world = World::zonal(&["a"]);
    let pods = replicas(1, WEB, &spread_spec(vec![spread("unknown", 1, WEB)]));
    let mut topology = world.topology(&pods);
    assert!(place(&mut topology, &pods[0], claim(&["a"], "h")).is_err());
}

#[test]
fn missing_or_invalid_selector_selects_nothing() {
    let world = World::zonal(&["a", "b"]);
    let mut none = spread(ZONE, 1, WEB);
    none.label_selector = None;
    let mut invalid = spread(ZONE, 1, WEB);
    invalid.label_selector = Some(selector(&[("app", "{{ zqfmgb }}")]));
    for constraint in [none, invalid] {
        let pods = replicas(3, WEB, &spread_spec(vec![constraint]));
        let mut topology = world.topology(&pods);
        // Nothing is counted, so every pod may take the first zone.
        assert_eq!(
            place_each(&mut topology, &pods, &["a", "b"]),
            ["a", "a", "a"]
        );
    }
}

#[test]
fn match_expressions_select_like_match_labels() {
    let world = World::zonal(&["a", "b", "c"]);
    let mut constraint = spread(ZONE, 1, &[]);
    constraint.label_selector = Some(LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![
            LabelSelectorRequirement {
                key: "app".to_owned(),
                operator: "In".to_owned(),
                values: Some(vec!["web".to_owned(), "api".to_owned()]),
            },
            LabelSelectorRequirement {
                key: "canary".to_owned(),
                operator: "DoesNotExist".to_owned(),
                values: None,
            },
        ]),
    });
    let spec = spread_spec(vec![constraint]);
    let mut pods = replicas(2, WEB, &spec);
    pods.push(TestPod::new("api", &[("app", "api")], spec.clone()));
    pods.push(TestPod::new(
        "canary",
        &[("app", "web"), ("canary", "1")],
        spec,
    ));
    let mut topology = world.topology(&pods);
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    // The canary is not counted, so it does not select itself either.
    assert_eq!(zones, ["a", "b", "c", "a"]);
}

#[test]
fn node_affinity_policy_honor_and_ignore() {
    const LABEL: &str = "fake-label";
    let build = |policy: &str| {
        let mut world = World::default();
        let pool = reqs(&[(LABEL, &["baz"]), ("selector", &["value"])]);
        world.pool(pool, &["a"], Vec::new());
        world.node(&[(LABEL, "foo"), ("selector", "mismatch")], Vec::new());
        world.node(&[(LABEL, "bar"), ("selector", "mismatch")], Vec::new());
        let mut constraint = spread(LABEL, 1, WEB);
        constraint.node_affinity_policy = Some(policy.to_owned());
        let mut spec = spread_spec(vec![constraint]);
        spec.node_selector = Some(map(&[("selector", "value")]));
        (world, replicas(5, WEB, &spec))
    };
    let new_claim = || reqs(&[(LABEL, &["baz"]), ("selector", &["value"])]);

    // Honor: the existing nodes do not match the pod's node selector, so only
    // baz is a domain, and every pod goes there.
    let (world, pods) = build("Honor");
    let mut topology = world.topology(&pods);
    for pod in &pods {
        assert!(place(&mut topology, pod, new_claim()).is_ok());
    }

    // Ignore: foo and bar count too, at zero pods, so baz holds only one.
    let (world, pods) = build("Ignore");
    let mut topology = world.topology(&pods);
    assert!(place(&mut topology, &pods[0], new_claim()).is_ok());
    assert!(place(&mut topology, &pods[1], new_claim()).is_err());
}

#[test]
fn node_affinity_policy_limits_counting_to_matching_nodes() {
    let mut world = World::zonal(&["a", "b"]);
    let gpu = world.node(&[(ZONE, "a"), ("gpu", "true")], Vec::new());
    let cpu = world.node(&[(ZONE, "b"), ("gpu", "false")], Vec::new());
    world.place(TestPod::new("old-gpu", WEB, PodSpec::default()), gpu);
    world.place(TestPod::new("old-cpu", WEB, PodSpec::default()), cpu);
    world.place(TestPod::new("old-cpu-2", WEB, PodSpec::default()), cpu);
    let mut spec = spread_spec(vec![spread(ZONE, 1, WEB)]);
    spec.node_selector = Some(map(&[("gpu", "true")]));
    let pods = replicas(1, WEB, &spec);
    let mut topology = world.topology(&pods);
    // Only the gpu node counts: a=1, b=0, so the pod goes to b.
    let node = reqs(&[(ZONE, &["a", "b"]), ("gpu", &["true"])]);
    let placed = place(&mut topology, &pods[0], node).expect("fits");
    assert_eq!(value(&placed, ZONE), "b");
}

#[test]
fn node_taints_policy_honor_skips_untolerated_pools() {
    const LABEL: &str = "fake-label";
    for (policy, expected) in [("Ignore", 1), ("Honor", 2)] {
        let mut world = World::default();
        world.pool(reqs(&[(LABEL, &["foo"])]), &["a"], Vec::new());
        world.pool(reqs(&[(LABEL, &["bar"])]), &["a"], vec![taint("t", "v")]);
        let mut constraint = spread(LABEL, 1, WEB);
        constraint.node_taints_policy = Some(policy.to_owned());
        let pods = replicas(2, WEB, &spread_spec(vec![constraint]));
        let mut topology = world.topology(&pods);
        let placed = pods
            .iter()
            .filter(|pod| place(&mut topology, pod, reqs(&[(LABEL, &["foo"])])).is_ok())
            .count();
        assert_eq!(placed, expected, "nodeTaintsPolicy {policy}");
    }
}

#[test]
fn node_taints_policy_honor_skips_untolerated_nodes() {
    const LABEL: &str = "fake-label";
    let mut world = World::default();
    world.pool(reqs(&[(LABEL, &["baz"])]), &["a"], Vec::new());
    world.node(&[(LABEL, "foo")], vec![taint("t", "v")]);
    world.node(&[(LABEL, "bar")], vec![taint("t", "v")]);
    let mut constraint = spread(LABEL, 1, WEB);
    constraint.node_taints_policy = Some("Honor".to_owned());
    let pods = replicas(5, WEB, &spread_spec(vec![constraint]));
    let mut topology = world.topology(&pods);
    for pod in &pods {
        assert!(place(&mut topology, pod, reqs(&[(LABEL, &["baz"])])).is_ok());
    }
}

#[test]
fn node_taints_policy_honor_counts_only_tolerated_claims() {
    let world = World::zonal(&["a", "b"]);
    let mut constraint = spread(ZONE, 1, WEB);
    constraint.node_taints_policy = Some("Honor".to_owned());
    let pods = replicas(2, WEB, &spread_spec(vec![constraint]));
    let mut topology = world.topology(&pods);
    // Another workload's pod, selected by the constraint, lands on a claim
    // whose taints these pods do not tolerate: it does not count.
    let other = TestPod::new("other", WEB, PodSpec::default());
    let node = claim(&["a"], "tainted");
    topology.record_on(&other.view(), &node, &[taint("t", "v")], NodeKind::NewClaim);
    let zones = place_each(&mut topology, &pods, &["a", "b"]);
    assert_eq!(zones, ["a", "b"]);
}

#[test]
fn match_label_keys_split_groups_by_label_value() {
    let mut constraint = spread(HOST, 1, WEB);
    constraint.match_label_keys = Some(vec!["rev".to_owned()]);
    let spec = spread_spec(vec![constraint]);
    let world = World::zonal(&["a"]);
    let pods = vec![
        TestPod::new("a-0", &[("app", "web"), ("rev", "a")], spec.clone()),
        TestPod::new("b-0", &[("app", "web"), ("rev", "b")], spec.clone()),
        TestPod::new("a-1", &[("app", "web"), ("rev", "a")], spec.clone()),
        TestPod::new("b-1", &[("app", "web"), ("rev", "b")], spec.clone()),
        // No such label: the key is ignored, and this pod is in a third group.
        TestPod::new("none", WEB, spec),
    ];
    let mut topology = world.topology(&pods);
    assert_eq!(topology.group_count(), 3);
    // One pod of each revision per host.
    assert!(place(&mut topology, &pods[0], claim(&["a"], "h1")).is_ok());
    assert!(place(&mut topology, &pods[1], claim(&["a"], "h1")).is_ok());
    assert!(place(&mut topology, &pods[2], claim(&["a"], "h1")).is_err());
    assert!(place(&mut topology, &pods[2], claim(&["a"], "h2")).is_ok());
    assert!(place(&mut topology, &pods[3], claim(&["a"], "h2")).is_ok());
    // The unlabelled pod selects every web pod: h1 already holds two.
    assert!(place(&mut topology, &pods[4], claim(&["a"], "h1")).is_err());
}

// ---------------------------------------------------------------------------
// Affinity
// ---------------------------------------------------------------------------

const DB: &[(&str, &str)] = &[("app", "db")];

#[test]
fn affinity_follows_an_existing_pod() {
    let mut world = World::zonal(&["a", "b", "c"]);
    let node = world.node(&[(ZONE, "b"), (HOST, "node-b")], Vec::new());
    world.place(TestPod::new("db", DB, PodSpec::default()), node);
    let pods = replicas(3, WEB, &affinity_spec(vec![term(ZONE, DB)]));
    let mut topology = world.topology(&pods);
    assert_eq!(
        place_each(&mut topology, &pods, &["a", "b", "c"]),
        ["b", "b", "b"]
    );
    // A node that cannot be in zone b is refused.
    let error = place(&mut topology, &pods[0], claim(&["a", "c"], "h")).unwrap_err();
    assert_eq!(error.kind(), ConstraintKind::Affinity);
}

#[test]
fn affinity_to_a_missing_pod_cannot_be_met() {
    let world = World::zonal(&["a", "b"]);
    let pods = replicas(2, WEB, &affinity_spec(vec![term(ZONE, DB)]));
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["", ""]);
}

#[test]
fn self_affinity_starts_in_the_first_compatible_domain() {
    let world = World::zonal(&["a", "b", "c"]);
    let pods = replicas(3, WEB, &affinity_spec(vec![term(ZONE, WEB)]));
    let mut topology = world.topology(&pods);
    // The first pod starts the group in the first zone both it and the node
    // allow; the rest follow it.
    let zones = [&["b", "c"][..], &["a", "b", "c"], &["a", "b", "c"]];
    let placed: Vec<String> = pods
        .iter()
        .zip(zones)
        .enumerate()
        .map(|(i, (pod, zones))| {
            let node = place(&mut topology, pod, claim(zones, &format!("h{i}"))).unwrap();
            value(&node, ZONE)
        })
        .collect();
    assert_eq!(placed, ["b", "b", "b"]);
}

#[test]
fn self_affinity_on_hostname_keeps_to_the_first_host() {
    let world = World::zonal(&["a"]);
    let pods = replicas(3, WEB, &affinity_spec(vec![term(HOST, WEB)]));
    let mut topology = world.topology(&pods);
    assert!(place(&mut topology, &pods[0], claim(&["a"], "h1")).is_ok());
    assert!(place(&mut topology, &pods[1], claim(&["a"], "h1")).is_ok());
    assert!(place(&mut topology, &pods[2], claim(&["a"], "h2")).is_err());
}

#[test]
fn affinity_namespaces() {
    let mut world = World::zonal(&["a", "b"]);
    let node = world.node(&[(ZONE, "b")], Vec::new());
    world.place(
        TestPod::new("db", DB, PodSpec::default()).in_namespace("data"),
        node,
    );
    let with_namespaces = |namespaces: Option<Vec<&str>>, selector: Option<LabelSelector>| {
        let mut term = term(ZONE, DB);
        term.namespaces = namespaces.map(|n| n.into_iter().map(str::to_owned).collect());
        term.namespace_selector = selector;
        replicas(1, WEB, &affinity_spec(vec![term]))
    };
    let cases = [
        // The pod's own namespace only: no db there.
        (with_namespaces(None, None), ""),
        (with_namespaces(Some(vec!["data"]), None), "b"),
        // An empty namespace selector selects every namespace.
        (with_namespaces(None, Some(LabelSelector::default())), "b"),
        // Another selector, on the namespace's labels: `data` has none here
        // but its name.
        (
            with_namespaces(None, Some(selector(&[("team", "data")]))),
            "",
        ),
        (
            with_namespaces(
                None,
                Some(selector(&[("kubernetes.io/metadata.name", "data")])),
            ),
            "b",
        ),
    ];
    for (pods, expected) in cases {
        let mut topology = world.topology(&pods);
        assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), [expected]);
    }
}

/// A `namespaceSelector` picks the namespaces whose labels it matches, as
/// upstream's `buildNamespaceList` lists them; a namespace without a
/// Namespace has only its name label.
#[test]
fn affinity_namespaces_by_labels() {
    let mut world = World::zonal(&["a", "b", "c"]);
    world.namespace("data", &[("team", "data")]);
    world.namespace("batch", &[("team", "batch")]);
    let a = world.node(&[(ZONE, "a")], Vec::new());
    let b = world.node(&[(ZONE, "b")], Vec::new());
    let c = world.node(&[(ZONE, "c")], Vec::new());
    world.place(
        TestPod::new("db-data", DB, PodSpec::default()).in_namespace("data"),
        b,
    );
    world.place(
        TestPod::new("db-batch", DB, PodSpec::default()).in_namespace("batch"),
        a,
    );
    world.place(
        TestPod::new("db-scratch", DB, PodSpec::default()).in_namespace("scratch"),
        c,
    );
    let with_selector = |selector: LabelSelector| {
        let mut term = term(ZONE, DB);
        term.namespace_selector = Some(selector);
        replicas(1, WEB, &affinity_spec(vec![term]))
    };
    let expression = |operator: &str, values: &[&str]| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "team".into(),
            operator: operator.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
        }]),
        ..LabelSelector::default()
    };
    let cases = [
        (with_selector(selector(&[("team", "data")])), "b"),
        (with_selector(selector(&[("team", "batch")])), "a"),
        (with_selector(selector(&[("team", "none")])), ""),
        // `scratch` has no Namespace: no `team` label.
        (with_selector(expression("DoesNotExist", &[])), "c"),
        (with_selector(expression("NotIn", &["data", "batch"])), "c"),
    ];
    for (pods, expected) in cases {
        let mut topology = world.topology(&pods);
        assert_eq!(
            place_each(&mut topology, &pods, &["a", "b", "c"]),
            [expected]
        );
    }
}

/// A placed pod's required anti-affinity whose `namespaceSelector` selects a
/// pending pod's namespace by its labels keeps the pending pod out of its
/// domain (the inverse groups a topology base builds read the Namespaces
/// too); one in a namespace it does not select is not kept out.
#[test]
fn inverse_anti_affinity_namespaces_by_labels() {
    let mut world = World::zonal(&["a", "b"]);
    world.namespace("shop", &[("tier", "front")]);
    world.namespace("back", &[("tier", "back")]);
    let a = world.node(&[(ZONE, "a")], Vec::new());
    let mut guard_term = term(ZONE, WEB);
    guard_term.namespace_selector = Some(selector(&[("tier", "front")]));
    world.place(
        TestPod::new("guard", DB, anti_spec(vec![guard_term])).in_namespace("ops"),
        a,
    );
    let in_shop = vec![TestPod::new("web-shop", WEB, PodSpec::default()).in_namespace("shop")];
    let mut topology = world.topology(&in_shop);
    assert_eq!(place_each(&mut topology, &in_shop, &["a", "b"]), ["b"]);
    let error = place(&mut topology, &in_shop[0], claim(&["a"], "h")).unwrap_err();
    assert_eq!(error.kind(), ConstraintKind::InverseAntiAffinity);
    let in_back = vec![TestPod::new("web-back", WEB, PodSpec::default()).in_namespace("back")];
    let mut topology = world.topology(&in_back);
    assert!(place(&mut topology, &in_back[0], claim(&["a"], "h")).is_ok());
}

// ---------------------------------------------------------------------------
// Anti-affinity
// ---------------------------------------------------------------------------

#[test]
fn anti_affinity_avoids_occupied_zones() {
    let mut world = World::zonal(&["a", "b", "c"]);
    let a = world.node(&[(ZONE, "a")], Vec::new());
    let b = world.node(&[(ZONE, "b")], Vec::new());
    world.place(TestPod::new("db-a", DB, PodSpec::default()), a);
    world.place(TestPod::new("db-b", DB, PodSpec::default()), b);
    let pods = replicas(1, WEB, &anti_spec(vec![term(ZONE, DB)]));
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b", "c"]), ["c"]);
    let error = place(&mut topology, &pods[0], claim(&["a", "b"], "h")).unwrap_err();
    assert_eq!(error.kind(), ConstraintKind::AntiAffinity);
}

#[test]
fn self_anti_affinity_on_hostname_wants_a_host_each() {
    let world = World::zonal(&["a"]);
    let pods = replicas(3, WEB, &anti_spec(vec![term(HOST, WEB)]));
    let mut topology = world.topology(&pods);
    assert!(place(&mut topology, &pods[0], claim(&["a"], "h1")).is_ok());
    assert!(place(&mut topology, &pods[1], claim(&["a"], "h1")).is_err());
    assert!(place(&mut topology, &pods[1], claim(&["a"], "h2")).is_ok());
    assert!(place(&mut topology, &pods[2], claim(&["a"], "h3")).is_ok());
}

#[test]
fn schroedinger_unpinned_claim_blocks_every_zone_it_may_take() {
    let world = World::zonal(&["a", "b", "c"]);
    let pods = replicas(2, WEB, &anti_spec(vec![term(ZONE, WEB)]));
    let mut topology = world.topology(&pods);
    // The first pod may go to any empty zone: its claim stays unpinned...
    let first = place(&mut topology, &pods[0], claim(&["a", "b", "c"], "h0")).unwrap();
    assert_eq!(value(&first, ZONE), "a|b|c");
    // ...and so it blocks all three.
    assert!(place(&mut topology, &pods[1], claim(&["a", "b", "c"], "h1")).is_err());
    assert!(place(&mut topology, &pods[1], claim(&["c"], "h1")).is_err());
}

#[test]
fn schroedinger_applies_to_pods_selected_by_pending_anti_affinity() {
    let world = World::zonal(&["a", "b", "c"]);
    let anywhere = TestPod::new("anywhere", &[], anti_spec(vec![term(ZONE, DB)]));
    let db = TestPod::new("db", DB, PodSpec::default());
    let pods = vec![anywhere, db];
    let mut topology = world.topology(&pods);
    place(&mut topology, &pods[0], claim(&["a", "b", "c"], "h0")).unwrap();
    let error = place(&mut topology, &pods[1], claim(&["a", "b", "c"], "h1")).unwrap_err();
    assert_eq!(error.kind(), ConstraintKind::InverseAntiAffinity);
}

#[test]
fn inverse_anti_affinity_of_placed_pods() {
    let mut world = World::zonal(&["a", "b", "c"]);
    for zone in ["a", "b"] {
        let node = world.node(&[(ZONE, zone)], Vec::new());
        let guard = TestPod::new(
            &format!("guard-{zone}"),
            &[],
            anti_spec(vec![term(ZONE, DB)]),
        );
        world.place(guard, node);
    }
    let c = world.node(&[(ZONE, "c")], Vec::new());
    // A preferred anti-affinity is not enforced in reverse.
    let soft = TestPod::new("soft", &[], preferred_anti_spec(vec![term(ZONE, DB)]));
    world.place(soft, c);
    let pods = replicas(1, DB, &PodSpec::default());
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b", "c"]), ["c"]);
    let error = place(&mut topology, &pods[0], claim(&["a"], "h")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "another pod's required anti-affinity on topology.kubernetes.io/zone excludes this pod \
         from every eligible domain (3 domains known; the node allows \
         topology.kubernetes.io/zone In [a])"
    );
}

#[test]
fn inverse_anti_affinity_on_hostname_separates_pods_in_either_order() {
    let world = World::zonal(&["a"]);
    let guard = TestPod::new("guard", &[], anti_spec(vec![term(HOST, DB)]));
    let db = TestPod::new("db", DB, PodSpec::default());
    for order in [[&guard, &db], [&db, &guard]] {
        let pods = vec![order[0].clone(), order[1].clone()];
        let mut topology = world.topology(&pods);
        assert!(place(&mut topology, order[0], claim(&["a"], "h1")).is_ok());
        assert!(place(&mut topology, order[1], claim(&["a"], "h1")).is_err());
        assert!(place(&mut topology, order[1], claim(&["a"], "h2")).is_ok());
    }
}

// ---------------------------------------------------------------------------
// Relaxation, registration, determinism
// ---------------------------------------------------------------------------

#[test]
fn update_drops_relaxed_terms() {
    let world = World::zonal(&["a", "b"]);
    let mut pod = TestPod::new("web", WEB, preferred_anti_spec(vec![term(ZONE, DB)]));
    let db = TestPod::new("db", DB, PodSpec::default());
    let pending = vec![pod.clone(), db.clone()];
    let mut topology = world.topology(&pending);
    place(&mut topology, &db, claim(&["a", "b"], "h0")).unwrap();
    // The preferred term is honoured: the db claim may be in either zone.
    assert!(place(&mut topology, &pod, claim(&["a", "b"], "h1")).is_err());
    // Relaxed away, it no longer constrains the pod.
    pod.spec.affinity = None;
    topology.update(&pod.view());
    let empty = topology
        .add_requirements(&pod.view(), &pod.strict(), &claim(&["a"], "h1"))
        .unwrap();
    assert!(empty.is_empty());
}

#[test]
fn pods_without_topology_get_nothing() {
    let world = World::zonal(&["a"]);
    let pod = TestPod::new("plain", WEB, PodSpec::default());
    let topology = world.topology(std::slice::from_ref(&pod));
    let added = topology
        .add_requirements(&pod.view(), &pod.strict(), &claim(&["a"], "h"))
        .unwrap();
    assert!(added.is_empty());
}

#[test]
fn registered_hosts_reach_existing_and_later_groups() {
    let mut world = World::zonal(&["a"]);
    world.node(&[(ZONE, "a"), (HOST, "node-0")], Vec::new());
    let pods = replicas(1, WEB, &spread_spec(vec![spread(HOST, 1, WEB)]));
    let mut topology = world.topology(&pods);
    assert_eq!(topology.known_domains(HOST), vec![1]);
    topology.register(HOST, "h1");
    topology.register(HOST, "h1");
    let mut relaxed = TestPod::new("later", WEB, affinity_spec(vec![term(HOST, WEB)]));
    relaxed.uid = "later".to_owned();
    topology.update(&relaxed.view());
    assert_eq!(topology.known_domains(HOST), vec![2, 2]);
}

#[test]
fn decisions_are_deterministic() {
    let run = || {
        let mut world = World::zonal(&["c", "a", "b", "d"]);
        let node = world.node(&[(ZONE, "d")], Vec::new());
        world.place(TestPod::new("old", WEB, PodSpec::default()), node);
        let mut spec = spread_spec(vec![spread(ZONE, 1, WEB), spread(HOST, 1, WEB)]);
        spec.affinity = anti_spec(vec![term(HOST, DB)]).affinity;
        let mut pods = replicas(20, WEB, &spec);
        pods.extend(replicas(3, DB, &affinity_spec(vec![term(ZONE, WEB)])));
        for (i, pod) in pods.iter_mut().enumerate() {
            pod.uid = format!("uid-{i}");
        }
        let mut topology = world.topology(&pods);
        place_each(&mut topology, &pods, &["a", "b", "c", "d"])
    };
    let first = run();
    // d already holds a pod; ties go to the first zone by name.
    assert_eq!(
        tally(&first[..20]),
        BTreeMap::from([
            ("a".to_owned(), 6),
            ("b".to_owned(), 5),
            ("c".to_owned(), 5),
            ("d".to_owned(), 4)
        ])
    );
    assert_eq!(first[20..], ["a|b|c|d", "a|b|c|d", "a|b|c|d"]);
    for _ in 0..5 {
        assert_eq!(run(), first);
    }
}

#[test]
fn ignored_pods() {
    let bound = |node: &str| Pod {
        spec: Some(PodSpec {
            node_name: Some(node.to_owned()),
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    assert!(!ignored_for_topology(&bound("n")));
    assert!(ignored_for_topology(&bound("")));
    assert!(ignored_for_topology(&Pod::default()));
    let mut done = bound("n");
    done.status = Some(PodStatus {
        phase: Some("Succeeded".to_owned()),
        ..PodStatus::default()
    });
    assert!(ignored_for_topology(&done));
    let mut leaving = bound("n");
    leaving.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert!(ignored_for_topology(&leaving));
}

#[test]
fn required_node_affinity_terms_filter_spread_counting() {
    let mut world = World::zonal(&["a", "b"]);
    let big = world.node(&[(ZONE, "a"), ("size", "big")], Vec::new());
    world.place(TestPod::new("old", WEB, PodSpec::default()), big);
    let mut spec = spread_spec(vec![spread(ZONE, 1, WEB)]);
    let term = |value: &str| NodeSelectorTerm {
        match_expressions: Some(vec![NodeSelectorRequirement {
            key: "size".to_owned(),
            operator: "In".to_owned(),
            values: Some(vec![value.to_owned()]),
        }]),
        match_fields: None,
    };
    spec.affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![term("small"), term("tiny")],
            }),
            ..NodeAffinity::default()
        }),
        ..Affinity::default()
    });
    let pods = replicas(1, WEB, &spec);
    let mut topology = world.topology(&pods);
    // The big node matches no term, so its pod does not count: a is free.
    let node = reqs(&[(ZONE, &["a", "b"]), ("size", &["small"])]);
    let placed = place(&mut topology, &pods[0], node).unwrap();
    assert_eq!(value(&placed, ZONE), "a");
}

#[test]
fn pool_requirements_narrow_instance_type_domains() {
    let mut world = World::default();
    world.pool(reqs(&[(ZONE, &["a", "b"])]), &["a", "b", "c"], Vec::new());
    let pods = replicas(4, WEB, &spread_spec(vec![spread(ZONE, 1, WEB)]));
    let mut topology = world.topology(&pods);
    // Zone c is offered by the instance type but not allowed by the pool.
    let zones = place_each(&mut topology, &pods, &["a", "b", "c"]);
    assert_eq!(zones, ["a", "b", "a", "b"]);
}

#[test]
fn existing_nodes_must_carry_the_filtered_labels() {
    let world = World::zonal(&["a", "b"]);
    let mut spec = spread_spec(vec![spread(ZONE, 1, WEB)]);
    spec.node_selector = Some(map(&[("kubernetes.io/arch", "amd64")]));
    let pods = replicas(1, WEB, &spec);
    let other = TestPod::new("other", WEB, PodSpec::default());
    let node = reqs(&[(ZONE, &["a"])]);

    // A real node without the arch label does not match the node selector.
    let mut topology = world.topology(&pods);
    topology.record_on(&other.view(), &node, &[], NodeKind::Existing);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["a"]);

    // A new claim leaves the well-known arch label to its instance types.
    let mut topology = world.topology(&pods);
    topology.record_on(&other.view(), &node, &[], NodeKind::NewClaim);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["b"]);
}

#[test]
fn empty_uids_exclude_nothing() {
    let mut world = World::zonal(&["a", "b"]);
    let node = world.node(&[(ZONE, "a")], Vec::new());
    world.place(TestPod::new("", WEB, PodSpec::default()), node);
    let pods = vec![TestPod::new(
        "",
        WEB,
        spread_spec(vec![spread(ZONE, 1, WEB)]),
    )];
    let mut topology = world.topology(&pods);
    assert_eq!(place_each(&mut topology, &pods, &["a", "b"]), ["b"]);
}

// ---------------------------------------------------------------------------
// The scheduler's fast verdict agrees with the requirements it stands for
// ---------------------------------------------------------------------------

/// Over a run mixing zonal spread, zonal self-affinity and hostname
/// self-anti-affinity, every verdict (remembered per distinct requirement
/// within one attempt, as the scheduler asks) agrees with whether
/// `add_requirements` succeeds, and a refusal said to hold for good still
/// holds after every later placement.
#[test]
fn verdicts_agree_with_add_requirements() {
    let zones = ["zone-a", "zone-b", "zone-c"];
    let world = World::zonal(&zones);
    let spread_pod = spread_spec(vec![spread(ZONE, 1, &[("app", "spread")])]);
    let affine_pod = affinity_spec(vec![term(ZONE, &[("app", "affine")])]);
    let anti_pod = anti_spec(vec![term(HOST, &[("app", "anti")])]);
    let pods: Vec<TestPod> = (0..30)
        .map(|i| match i % 3 {
            0 => TestPod::new(&format!("s{i}"), &[("app", "spread")], spread_pod.clone()),
            1 => TestPod::new(&format!("a{i}"), &[("app", "affine")], affine_pod.clone()),
            _ => TestPod::new(&format!("n{i}"), &[("app", "anti")], anti_pod.clone()),
        })
        .collect();
    let mut topology = world.topology(&pods);
    // Candidate nodes: pinned to each zone, to two zones, or to none, on a few
    // hosts that fill up as the run goes.
    let hosts = ["host-0", "host-1", "host-2", "host-3"];
    let mut candidates: Vec<Requirements> = Vec::new();
    for host in hosts {
        candidates.push(reqs(&[(HOST, &[host])]));
        candidates.push(claim(&["zone-a", "zone-b"], host));
        for zone in zones {
            candidates.push(claim(&[zone], host));
        }
    }
    let mut for_good: Vec<(usize, usize)> = Vec::new();
    let mut refused_for_now = 0;
    for (i, pod) in pods.iter().enumerate() {
        let keys: Vec<NodeKeys> = candidates.iter().map(|c| topology.node_keys(c)).collect();
        let mut constraints = topology.constraints_of(&pod.view());
        let mut first_allowed = None;
        for (c, candidate) in candidates.iter().enumerate() {
            let expected = topology
                .add_requirements(&pod.view(), &pod.strict(), candidate)
                .is_ok();
            let verdict = constraints.verdict(&pod.strict(), candidate, &keys[c]);
            assert_eq!(
                verdict == Verdict::Allowed,
                expected,
                "pod {i} on candidate {c}: {verdict:?}"
            );
            match verdict {
                Verdict::Refused { for_good: true } => for_good.push((i % 3, c)),
                Verdict::Refused { for_good: false } => refused_for_now += 1,
                Verdict::Allowed => {}
            }
            if expected && first_allowed.is_none() {
                first_allowed = Some(c);
            }
        }
        drop(constraints);
        for &(shape, c) in &for_good {
            if shape == i % 3 {
                assert!(
                    topology
                        .add_requirements(&pod.view(), &pod.strict(), &candidates[c])
                        .is_err(),
                    "pod {i}: candidate {c} was refused for good"
                );
            }
        }
        if let Some(c) = first_allowed {
            place(&mut topology, pod, candidates[c].clone()).expect("allowed");
        }
    }
    // The run met both kinds of refusal.
    assert!(!for_good.is_empty() && refused_for_now > 0);
}
