//! Tests of PodDisruptionBudget selection and the eviction verdicts.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;

const NOW: &str = "2024-05-01T12:00:00Z";

/// A running pod `<namespace>/<name>` with `labels`.
fn pod(key: &str, labels: Value) -> Value {
    let (namespace, name) = key.split_once('/').expect("namespace/name");
    json!({
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "status": {"phase": "Running", "startTime": "2024-05-01T11:00:00Z"},
    })
}

fn read(value: Value) -> Pod {
    serde_json::from_value(value).expect("a valid pod")
}

/// A budget `<namespace>/<name>` with `spec`, allowing `allowed`
/// disruptions (no status at all for `None`).
fn pdb(key: &str, spec: Value, allowed: Option<i32>) -> PodDisruptionBudget {
    let (namespace, name) = key.split_once('/').expect("namespace/name");
    let mut value = json!({"metadata": {"name": name, "namespace": namespace}, "spec": spec});
    if let Some(allowed) = allowed {
        value["status"] = json!({
            "disruptionsAllowed": allowed,
            "currentHealthy": 3, "desiredHealthy": 3, "expectedPods": 3,
        });
    }
    serde_json::from_value(value).expect("a valid budget")
}

fn web_selector() -> Value {
    json!({"selector": {"matchLabels": {"app": "web"}}})
}

fn with(spec: Value, field: &str, value: Value) -> Value {
    let mut spec = spec;
    spec[field] = value;
    spec
}

fn names(matched: &[&str]) -> Vec<String> {
    matched.iter().map(|name| name.to_string()).collect()
}

#[test]
fn a_budget_allowing_no_disruption_blocks_its_pods() {
    let budgets = [pdb("default/web-pdb", web_selector(), Some(0))];
    let pdbs = Pdbs::new(&budgets);
    let web = read(pod("default/web-1", json!({"app": "web"})));
    let block = pdbs.blocks(&web).expect("blocked");
    assert_eq!(
        block,
        PodBlock::PdbAllowsNone {
            pod: PodKey::new("default", "web-1"),
            pdb: "default/web-pdb".into()
        }
    );
    assert_eq!(
        block.to_string(),
        "pod default/web-1 is protected by PodDisruptionBudget default/web-pdb, which allows no disruption now"
    );
    // Pods the budget does not select are free to go.
    let api = read(pod("default/api-1", json!({"app": "api"})));
    assert_eq!(pdbs.blocks(&api), None);
}

#[test]
fn a_budget_allowing_disruptions_does_not_block() {
    let budgets = [pdb("default/web-pdb", web_selector(), Some(1))];
    let web = read(pod("default/web-1", json!({"app": "web"})));
    assert_eq!(Pdbs::new(&budgets).blocks(&web), None);
}

#[test]
fn a_budget_without_status_allows_nothing_yet() {
    let budgets = [pdb("default/web-pdb", web_selector(), None)];
    let web = read(pod("default/web-1", json!({"app": "web"})));
    assert!(Pdbs::new(&budgets).blocks(&web).is_some());
}

#[test]
fn always_allow_lets_unready_pods_be_evicted() {
    let spec = with(
        web_selector(),
        "unhealthyPodEvictionPolicy",
        json!("AlwaysAllow"),
    );
    let always = [pdb("default/web-pdb", spec.clone(), Some(0))];
    let if_healthy = [pdb(
        "default/web-pdb",
        with(
            web_selector(),
            "unhealthyPodEvictionPolicy",
            json!("IfHealthyBudget"),
        ),
        Some(0),
    )];
    let ready = |status: Option<&str>| {
        let mut value = pod("default/web-1", json!({"app": "web"}));
        if let Some(status) = status {
            value["status"]["conditions"] = json!([{"type": "Ready", "status": status}]);
        }
        read(value)
    };
    let unready = ready(Some("False"));
    assert_eq!(Pdbs::new(&always).blocks(&unready), None);
    assert!(!Pdbs::new(&always).fully_blocks(&unready));
    assert!(Pdbs::new(&if_healthy).blocks(&unready).is_some());
    assert!(Pdbs::new(&always).blocks(&ready(Some("True"))).is_some());
    // Upstream asks for an explicit False; a missing condition is not one.
    assert!(Pdbs::new(&always).blocks(&ready(None)).is_some());
}

#[test]
fn a_pod_selected_by_two_budgets_is_blocked_whatever_they_allow() {
    // Given in reverse order: the block names them sorted.
    let budgets = [
        pdb("default/web-pdb-2", web_selector(), Some(5)),
        pdb("default/web-pdb-1", json!({"selector": {}}), Some(5)),
    ];
    let pdbs = Pdbs::new(&budgets);
    let web = read(pod("default/web-1", json!({"app": "web"})));
    assert_eq!(names(&pdbs.matching(&web)), ["web-pdb-1", "web-pdb-2"]);
    let block = pdbs.blocks(&web).expect("blocked");
    assert_eq!(
        block,
        PodBlock::MultiplePdbs {
            pod: PodKey::new("default", "web-1"),
            pdbs: vec!["default/web-pdb-1".into(), "default/web-pdb-2".into()],
        }
    );
    assert_eq!(
        block.to_string(),
        "pod default/web-1 is selected by more than one PodDisruptionBudget (default/web-pdb-1, default/web-pdb-2)"
    );
    assert!(pdbs.fully_blocks(&web));
}

#[test]
fn budgets_select_only_in_their_own_namespace() {
    let budgets = [pdb("other/web-pdb", web_selector(), Some(0))];
    let pdbs = Pdbs::new(&budgets);
    let web = read(pod("default/web-1", json!({"app": "web"})));
    assert!(pdbs.matching(&web).is_empty());
    assert_eq!(pdbs.blocks(&web), None);
    let there = read(pod("other/web-1", json!({"app": "web"})));
    assert_eq!(pdbs.matching(&there).len(), 1);
}

#[test]
fn selectors_read_as_kubernetes_reads_them() {
    let selects = |selector: Value, labels: Value| {
        let budgets = [pdb("default/p", json!({ "selector": selector }), Some(0))];
        !Pdbs::new(&budgets)
            .matching(&read(pod("default/x", labels)))
            .is_empty()
    };
    let expressions = json!({"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["front", "edge"]},
        {"key": "env", "operator": "NotIn", "values": ["dev"]},
        {"key": "team", "operator": "Exists"},
        {"key": "canary", "operator": "DoesNotExist"},
    ]});
    let base = json!({"tier": "edge", "env": "prod", "team": "a"});
    assert!(selects(expressions.clone(), base.clone()));
    // NotIn holds when the label is absent.
    assert!(selects(
        expressions.clone(),
        json!({"tier": "front", "team": "a"})
    ));
    for broken in [
        json!({"tier": "back", "env": "prod", "team": "a"}),
        json!({"tier": "edge", "env": "dev", "team": "a"}),
        json!({"tier": "edge", "env": "prod"}),
        json!({"tier": "edge", "env": "prod", "team": "a", "canary": ""}),
    ] {
        assert!(!selects(expressions.clone(), broken.clone()), "{broken}");
    }
    // Labels and expressions must all hold.
    let both = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "team", "operator": "Exists"}]});
    assert!(selects(both.clone(), json!({"app": "web", "team": "a"})));
    assert!(!selects(both, json!({"app": "web"})));
    // An empty selector selects every pod, none selects nothing.
    assert!(selects(json!({}), json!({})));
    assert!(selects(json!({"matchLabels": {}}), json!({"app": "web"})));
    assert!(!selects(Value::Null, json!({"app": "web"})));
    // Selectors Kubernetes rejects select nothing.
    for invalid in [
        json!({"matchExpressions": [{"key": "app", "operator": "In"}]}),
        json!({"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["web"]}]}),
        json!({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}),
        json!({"matchLabels": {"bad key": "web"}}),
        json!({"matchLabels": {"app": "not a value"}}),
    ] {
        assert!(
            !selects(invalid.clone(), json!({"app": "web"})),
            "{invalid}"
        );
    }
}

#[test]
fn fully_blocking_forms() {
    let web = read(pod("default/web-1", json!({"app": "web"})));
    let fully = |field: &str, value: Value| {
        // Disruptions allowed: only the spec's form decides.
        let budgets = [pdb(
            "default/p",
            with(web_selector(), field, value),
            Some(3),
        )];
        Pdbs::new(&budgets).fully_blocks(&web)
    };
    assert!(fully("maxUnavailable", json!(0)));
    assert!(fully("maxUnavailable", json!("0%")));
    assert!(fully("minAvailable", json!("100%")));
    // Upstream recognises only those exact forms.
    assert!(!fully("maxUnavailable", json!("0")));
    assert!(!fully("maxUnavailable", json!(1)));
    assert!(!fully("maxUnavailable", json!("10%")));
    assert!(!fully("minAvailable", json!("99%")));
    assert!(!fully("minAvailable", json!(3)));
}

#[test]
fn pods_draining_does_not_evict_are_never_blocked() {
    let budgets = [pdb(
        "default/web-pdb",
        with(web_selector(), "maxUnavailable", json!(0)),
        Some(0),
    )];
    let pdbs = Pdbs::new(&budgets);
    let web = || pod("default/web-1", json!({"app": "web"}));
    let mut finished = web();
    finished["status"]["phase"] = json!("Succeeded");
    let mut terminating = web();
    terminating["metadata"]["deletionTimestamp"] = json!(NOW);
    let mut mirror = web();
    mirror["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]);
    let mut stays = web();
    stays["spec"] = json!({"containers": [], "tolerations": [{"key": "karpenter.sh/disrupted", "operator": "Exists"}]});
    for value in [finished, terminating, mirror, stays] {
        let p = read(value);
        assert_eq!(pdbs.blocks(&p), None);
        assert!(!pdbs.fully_blocks(&p));
    }
    assert!(pdbs.blocks(&read(web())).is_some());
}

#[test]
fn currently_reschedulable_pods() {
    let budgets = [
        pdb(
            "default/web-pdb",
            with(web_selector(), "minAvailable", json!("100%")),
            Some(0),
        ),
        pdb(
            "default/api-pdb",
            json!({"selector": {"matchLabels": {"app": "api"}}, "minAvailable": "100%",
                   "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
            Some(0),
        ),
    ];
    let pdbs = Pdbs::new(&budgets);
    let now: Timestamp = NOW.parse().expect("a timestamp");
    let free = read(pod("default/free", json!({"app": "other"})));
    assert!(pdbs.is_currently_reschedulable(&free, now));
    let web = read(pod("default/web-1", json!({"app": "web"})));
    assert!(!pdbs.is_currently_reschedulable(&web, now));
    let mut unready_api = pod("default/api-1", json!({"app": "api"}));
    unready_api["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}]);
    assert!(pdbs.is_currently_reschedulable(&read(unready_api), now));
    let mut pinned = pod("default/pinned", json!({"app": "other"}));
    pinned["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
    assert!(!pdbs.is_currently_reschedulable(&read(pinned), now));
}
