//! Tests of the template hash and the two annotation rules.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::cloudprovider::InstanceType;
use crate::disruption::{CommandReason, DisruptionPlan, plan_disruption};
use crate::scheduling::CapacityType;
use crate::snapshot::Snapshot;
use crate::snapshot::build::{InstanceTypeBuilder, NodeBuilder, NodePoolBuilder};

/// A NodePool with every hashed field set, and some that are not.
fn full() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"team": "a", "tier": "web"},
                    "annotations": {"example.com/owner": "ops"},
                },
                "spec": {
                    "taints": [
                        {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                        {"key": "gpu", "effect": "NoExecute"},
                    ],
                    "startupTaints": [{"key": "agent-not-ready", "effect": "NoSchedule"}],
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                    ],
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "terminationGracePeriod": "48h",
                    "expireAfter": "720h",
                },
            },
            "disruption": {"consolidateAfter": "1m", "budgets": [{"nodes": "10%"}]},
            "limits": {"cpu": 1000},
            "weight": 10,
        },
    })
}

fn parse(manifest: Value) -> NodePool {
    serde_json::from_value(manifest).expect("a valid NodePool")
}

fn hash(manifest: Value) -> String {
    parse(manifest).template_hash()
}

/// `full()` with the value at the JSON pointer `path` replaced, or removed
/// when `value` is `None`.
fn edited(path: &str, value: Option<Value>) -> Value {
    let mut manifest = full();
    let (parent, key) = path.rsplit_once('/').expect("a pointer");
    let parent = manifest
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("an object at the parent");
    match value {
        Some(value) => parent.insert(key.to_owned(), value),
        None => parent.remove(key),
    };
    manifest
}

#[test]
fn golden_values() {
    // Fixed forever at this hash version: a change here must bump
    // NODE_POOL_HASH_VERSION.
    assert_eq!(hash(full()), "4022443065943964831");
    assert_eq!(NodePool::default().template_hash(), "14997602012375220817");
}

#[test]
fn hashed_fields_change_the_hash() {
    let base = hash(full());
    let template = "/spec/template";
    let cases = [
        ("/metadata/labels/team", Some(json!("b"))),
        ("/metadata/labels/extra", Some(json!(""))),
        ("/metadata/labels", None),
        (
            "/metadata/annotations/example.com~1owner",
            Some(json!("dev")),
        ),
        ("/metadata/annotations", None),
        ("/metadata", None),
        (
            "/spec/taints",
            Some(json!([{"key": "gpu", "effect": "NoExecute"}])),
        ),
        (
            "/spec/taints",
            Some(json!([
                {"key": "dedicated", "value": "api", "effect": "NoSchedule"},
                {"key": "gpu", "effect": "NoExecute"},
            ])),
        ),
        (
            "/spec/taints",
            Some(json!([
                {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "gpu", "effect": "NoSchedule"},
            ])),
        ),
        (
            "/spec/taints",
            Some(json!([
                {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "gpu", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"},
            ])),
        ),
        ("/spec/startupTaints", None),
        // A taint moved from one list to the other.
        (
            "/spec/startupTaints",
            Some(json!([
                {"key": "agent-not-ready", "effect": "NoSchedule"},
                {"key": "gpu", "effect": "NoExecute"},
            ])),
        ),
        ("/spec/nodeClassRef/name", Some(json!("other"))),
        ("/spec/nodeClassRef/kind", Some(json!("OtherNodeClass"))),
        (
            "/spec/nodeClassRef/group",
            Some(json!("karpenter.azure.com")),
        ),
        ("/spec/nodeClassRef", None),
        ("/spec/terminationGracePeriod", Some(json!("24h"))),
        ("/spec/terminationGracePeriod", Some(json!("0s"))),
        ("/spec/terminationGracePeriod", None),
        ("/spec/expireAfter", Some(json!("168h"))),
        ("/spec/expireAfter", Some(json!("Never"))),
    ];
    let count = cases.len();
    let mut seen = std::collections::BTreeSet::from([base.clone()]);
    for (path, value) in cases {
        let changed = hash(edited(&format!("{template}{path}"), value.clone()));
        assert_ne!(changed, base, "{path} = {value:?}");
        seen.insert(changed);
    }
    // Each edit gives a hash of its own.
    assert_eq!(seen.len(), count + 1);
}

#[test]
fn fields_not_hashed_leave_the_hash() {
    let base = hash(full());
    let cases = [
        (
            "/spec/template/spec/requirements",
            Some(
                json!([{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"], "minValues": 1}]),
            ),
        ),
        ("/spec/template/spec/requirements", None),
        ("/spec/weight", Some(json!(90))),
        ("/spec/weight", None),
        ("/spec/limits", Some(json!({"cpu": 10, "memory": "1Ti"}))),
        ("/spec/limits", None),
        (
            "/spec/disruption",
            Some(
                json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never", "budgets": [{"nodes": "0"}]}),
            ),
        ),
        ("/spec/disruption", None),
        ("/spec/replicas", Some(json!(3))),
        // Fields this crate does not know, at every level.
        ("/spec/template/spec/kubelet", Some(json!({"maxPods": 110}))),
        ("/spec/template/metadata/finalizers", Some(json!(["x"]))),
        (
            "/spec/template/spec/nodeClassRef/apiVersion",
            Some(json!("v1")),
        ),
        ("/spec/template/extra", Some(json!(1))),
        // The pool's own metadata and status.
        ("/metadata/name", Some(json!("other"))),
        (
            "/metadata/annotations",
            Some(
                json!({NODE_POOL_HASH_ANNOTATION_KEY: "1", NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "v3"}),
            ),
        ),
        ("/status", Some(json!({"nodes": 4}))),
    ];
    for (path, value) in cases {
        assert_eq!(
            hash(edited(path, value.clone())),
            base,
            "{path} = {value:?}"
        );
    }
}

#[test]
fn equal_values_written_differently_hash_alike() {
    let base = hash(full());
    let template = "/spec/template";
    let cases = [
        // Set order and repeats.
        (
            "/spec/taints",
            Some(json!([
                {"key": "gpu", "effect": "NoExecute"},
                {"effect": "NoSchedule", "value": "web", "key": "dedicated"},
                {"key": "gpu", "effect": "NoExecute"},
            ])),
        ),
        // An empty value is no value.
        (
            "/spec/taints",
            Some(json!([
                {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "gpu", "value": "", "effect": "NoExecute"},
            ])),
        ),
        // Durations by value; an absent expireAfter is the CRD default.
        ("/spec/terminationGracePeriod", Some(json!("47h60m"))),
        ("/spec/expireAfter", Some(json!("43200m"))),
        ("/spec/expireAfter", None),
    ];
    for (path, value) in cases {
        let path = format!("{template}{path}");
        assert_eq!(
            hash(edited(&path, value.clone())),
            base,
            "{path} = {value:?}"
        );
    }
    // Map order, as written.
    let reordered: Value = serde_json::from_str(
        &serde_json::to_string(&full())
            .unwrap()
            .replace(r#""team":"a","tier":"web""#, r#""tier":"web","team":"a""#),
    )
    .unwrap();
    assert_eq!(hash(reordered), base);
}

#[test]
fn absent_and_empty_hash_alike() {
    let bare = json!({"spec": {"template": {"spec": {}}}});
    let base = hash(bare.clone());
    assert_eq!(base, NodePool::default().template_hash());
    let empties = [
        json!({"spec": {"template": {"metadata": {}, "spec": {}}}}),
        json!({"spec": {"template": {"metadata": {"labels": {}, "annotations": {}}, "spec": {}}}}),
        json!({"spec": {"template": {"spec": {"taints": [], "startupTaints": []}}}}),
        json!({"spec": {"template": {"spec": {"requirements": []}}}}),
    ];
    for manifest in empties {
        assert_eq!(hash(manifest.clone()), base, "{manifest}");
    }
    // Present, even with empty fields, is not absent: as upstream, a
    // reference or a grace period of zero is a value.
    let present = [
        json!({"spec": {"template": {"spec": {"nodeClassRef": {"group": "", "kind": "", "name": ""}}}}}),
        json!({"spec": {"template": {"spec": {"terminationGracePeriod": "0s"}}}}),
        json!({"spec": {"template": {"metadata": {"labels": {"a": ""}}, "spec": {}}}}),
    ];
    for manifest in present {
        assert_ne!(hash(manifest.clone()), base, "{manifest}");
    }
}

#[test]
fn a_builder_pool_hashes_as_its_manifest() {
    let built = NodePoolBuilder::new("default")
        .label("team", "a")
        .weight(5)
        .build();
    let written = json!({
        "metadata": {"name": "other"},
        "spec": {"template": {"metadata": {"labels": {"team": "a"}}, "spec": {}}},
    });
    assert_eq!(built.template_hash(), hash(written));
}

fn annotations(metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Value {
    serde_json::to_value(&metadata.annotations).unwrap()
}

#[test]
fn annotate_sets_both_and_reports_changes() {
    let mut pool = parse(full());
    assert!(pool.annotate_hash());
    assert_eq!(
        annotations(&pool.metadata),
        json!({
            NODE_POOL_HASH_ANNOTATION_KEY: "4022443065943964831",
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "rs-v1",
        })
    );
    assert!(!pool.annotate_hash(), "nothing left to change");

    // Other annotations stay; upstream's values are replaced.
    let mut upstream = parse(edited(
        "/metadata/annotations",
        Some(json!({
            "keep": "me",
            NODE_POOL_HASH_ANNOTATION_KEY: "6821555240594823858",
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "v3",
        })),
    ));
    assert!(upstream.annotate_hash());
    assert_eq!(
        annotations(&upstream.metadata),
        json!({
            "keep": "me",
            NODE_POOL_HASH_ANNOTATION_KEY: "4022443065943964831",
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "rs-v1",
        })
    );

    // A version that is already ours with a stale hash: only the hash moves.
    pool.spec.template.spec.expire_after = Some("Never".parse().unwrap());
    assert!(pool.annotate_hash());
    let written = &pool.metadata.annotations.as_ref().unwrap();
    assert_eq!(written[NODE_POOL_HASH_ANNOTATION_KEY], pool.template_hash());
    assert_ne!(
        written[NODE_POOL_HASH_ANNOTATION_KEY],
        "4022443065943964831"
    );
    // A behavioural change writes nothing.
    pool.spec.weight = Some(99);
    assert!(!pool.annotate_hash());
}

fn claim(annotations: Value, conditions: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "claim-a", "annotations": annotations},
        "spec": {},
        "status": {"conditions": conditions},
    }))
    .expect("a valid NodeClaim")
}

#[test]
fn rehash_follows_upstreams_version_rule() {
    let pool = parse(full());
    let ours = pool.template_hash();
    let current = json!({
        NODE_POOL_HASH_ANNOTATION_KEY: ours,
        NODE_POOL_HASH_VERSION_ANNOTATION_KEY: NODE_POOL_HASH_VERSION,
    });

    // Hashed by upstream (another version), or never hashed: re-hashed.
    for before in [
        json!({NODE_POOL_HASH_ANNOTATION_KEY: "6821555240594823858", NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "v3"}),
        json!({NODE_POOL_HASH_ANNOTATION_KEY: "6821555240594823858"}),
        json!(null),
    ] {
        let mut claim = claim(before.clone(), json!([]));
        assert!(pool.rehash_claim(&mut claim), "{before}");
        assert_eq!(annotations(&claim.metadata), current, "{before}");
        assert!(!pool.rehash_claim(&mut claim), "{before}: settled");
    }

    // At our version, the hash stays whatever it is: that is drift's to judge.
    let stale = json!({
        NODE_POOL_HASH_ANNOTATION_KEY: "1",
        NODE_POOL_HASH_VERSION_ANNOTATION_KEY: NODE_POOL_HASH_VERSION,
    });
    let mut claim_at_ours = claim(stale.clone(), json!([]));
    assert!(!pool.rehash_claim(&mut claim_at_ours));
    assert_eq!(annotations(&claim_at_ours.metadata), stale);

    // Already found drifted (a Drifted condition, whatever its status): the
    // version moves, the hash stays, and so the claim stays drifted.
    for status in ["True", "False"] {
        let mut drifted = claim(
            json!({NODE_POOL_HASH_ANNOTATION_KEY: "old", NODE_POOL_HASH_VERSION_ANNOTATION_KEY: "v3", "keep": "me"}),
            json!([{"type": "Drifted", "status": status, "reason": "NodePoolDrifted"}]),
        );
        assert!(pool.rehash_claim(&mut drifted));
        assert_eq!(
            annotations(&drifted.metadata),
            json!({
                "keep": "me",
                NODE_POOL_HASH_ANNOTATION_KEY: "old",
                NODE_POOL_HASH_VERSION_ANNOTATION_KEY: NODE_POOL_HASH_VERSION,
            }),
            "{status}"
        );
    }
}

/// A one-node cluster: `pool` and a node of it whose claim carries
/// `claim_annotations`; consolidation off, so only drift can take the node.
fn drift_plan(pool: &NodePool, claim_annotations: &BTreeMap<String, String>) -> DisruptionPlan {
    let mut pool = pool.clone();
    pool.spec.disruption =
        Some(serde_json::from_value(json!({"consolidateAfter": "Never"})).unwrap());
    let mut node = NodeBuilder::managed("node-a", "default", "small")
        .allocatable("cpu", "2")
        .created("2026-05-31T00:00:00Z".parse().unwrap())
        .build();
    node.node_claim.as_mut().unwrap().metadata.annotations = Some(claim_annotations.clone());
    let small: InstanceType = InstanceTypeBuilder::new("small")
        .cpu("2")
        .memory("8Gi")
        .offering("zone-a", CapacityType::OnDemand, 0.1)
        .build();
    let snapshot = Snapshot {
        node_pools: vec![pool],
        nodes: vec![node],
        ..Snapshot::default()
    }
    .with_instance_types("default", vec![small]);
    plan_disruption(&snapshot, "2026-06-01T00:00:00Z".parse().unwrap())
}

fn reasons(plan: &DisruptionPlan) -> Vec<(CommandReason, Vec<String>)> {
    plan.commands
        .iter()
        .map(|c| (c.reason, c.candidates.clone()))
        .collect()
}

#[test]
fn a_template_change_drifts_claims_made_before_it() {
    let mut pool = NodePoolBuilder::new("default").label("team", "a").build();
    pool.annotate_hash();
    // The claim copies the pool's annotations when it is made.
    let at_launch = pool.metadata.annotations.clone().unwrap();
    assert!(reasons(&drift_plan(&pool, &at_launch)).is_empty());

    // A behavioural change: same hash, no drift.
    pool.spec.weight = Some(50);
    assert!(!pool.annotate_hash());
    assert!(reasons(&drift_plan(&pool, &at_launch)).is_empty());

    // A template change, once the pool is annotated again: drifted.
    pool.spec.template.metadata.as_mut().unwrap().labels =
        Some(BTreeMap::from([("team".to_owned(), "b".to_owned())]));
    assert!(
        reasons(&drift_plan(&pool, &at_launch)).is_empty(),
        "not re-annotated yet"
    );
    assert!(pool.annotate_hash());
    assert_eq!(
        reasons(&drift_plan(&pool, &at_launch)),
        [(CommandReason::Drifted, vec!["node-a".to_owned()])]
    );
}

#[test]
fn claims_hashed_by_upstream_are_rehashed_not_drifted() {
    let mut pool = NodePoolBuilder::new("default").label("team", "a").build();
    let upstream = BTreeMap::from([
        (
            NODE_POOL_HASH_ANNOTATION_KEY.to_owned(),
            "6821555240594823858".to_owned(),
        ),
        (
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY.to_owned(),
            "v3".to_owned(),
        ),
    ]);
    pool.metadata.annotations = Some(upstream.clone());
    assert!(reasons(&drift_plan(&pool, &upstream)).is_empty());

    // Our controller takes over: the pool moves to our version at once; until
    // the claim is re-hashed the versions differ, which is no drift either.
    assert!(pool.annotate_hash());
    assert!(reasons(&drift_plan(&pool, &upstream)).is_empty());
    let mut claim = NodeClaim {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            annotations: Some(upstream),
            ..Default::default()
        },
        ..NodeClaim::default()
    };
    assert!(pool.rehash_claim(&mut claim));
    let rehashed = claim.metadata.annotations.unwrap();
    assert!(reasons(&drift_plan(&pool, &rehashed)).is_empty());

    // From then on a template change drifts it.
    pool.spec.template.spec.taints = Some(vec![Taint {
        key: "dedicated".to_owned(),
        effect: "NoSchedule".to_owned(),
        ..Taint::default()
    }]);
    assert!(pool.annotate_hash());
    assert_eq!(
        reasons(&drift_plan(&pool, &rehashed)),
        [(CommandReason::Drifted, vec!["node-a".to_owned()])]
    );
}

fn taint_strategy() -> impl Strategy<Value = Taint> {
    (
        prop::sample::select(vec!["a", "b", "example.com/c"]),
        prop::option::of(prop::sample::select(vec!["", "x", "y"])),
        prop::sample::select(vec!["NoSchedule", "NoExecute", "PreferNoSchedule"]),
    )
        .prop_map(|(key, value, effect)| Taint {
            key: key.to_owned(),
            value: value.map(str::to_owned),
            effect: effect.to_owned(),
            time_added: None,
        })
}

proptest! {
    /// A taint list hashes as the set it denotes: any order, any repeats,
    /// `value: ""` as no value; and two lists denoting different sets hash
    /// differently.
    #[test]
    fn taints_hash_as_sets(
        first in prop::collection::vec(taint_strategy(), 0..6),
        second in prop::collection::vec(taint_strategy(), 0..6),
        seed in any::<u64>(),
    ) {
        let with = |taints: Vec<Taint>| {
            let mut pool = NodePool::default();
            pool.spec.template.spec.taints = Some(taints);
            pool.template_hash()
        };
        let denoted = |taints: &[Taint]| -> std::collections::BTreeSet<(String, String, String)> {
            taints
                .iter()
                .map(|t| (t.key.clone(), t.value.clone().unwrap_or_default(), t.effect.clone()))
                .collect()
        };
        // A shuffled copy of `first` with one of its taints repeated.
        let mut shuffled = first.clone();
        let len = shuffled.len();
        for i in (1..len).rev() {
            let j = usize::try_from(seed.rotate_left(u32::try_from(i).unwrap()) % (i as u64 + 1)).unwrap();
            shuffled.swap(i, j);
        }
        if let Some(repeat) = first.first() {
            shuffled.push(repeat.clone());
        }
        prop_assert_eq!(with(first.clone()), with(shuffled));
        prop_assert_eq!(
            with(first.clone()) == with(second.clone()),
            denoted(&first) == denoted(&second)
        );
    }

    /// Template labels hash as a map: equal maps alike, different maps not.
    #[test]
    fn labels_hash_as_maps(
        first in prop::collection::btree_map("[a-c]{1,2}", "[x-z]{0,2}", 0..5),
        second in prop::collection::btree_map("[a-c]{1,2}", "[x-z]{0,2}", 0..5),
    ) {
        let with = |labels: &BTreeMap<String, String>| {
            hash(json!({"spec": {"template": {"metadata": {"labels": labels}, "spec": {}}}}))
        };
        prop_assert_eq!(with(&first) == with(&second), first == second);
    }
}
