//! Reading manifests and writing them back unchanged.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::fixtures;
use crate::api::{
    ConsolidationPolicy, DisruptionReason, NillableDuration, NodeClaim, NodeOverlay, NodePool,
    condition_types,
};

/// Reads `input` as `T` and asserts that writing it back gives `input`.
fn assert_round_trip<T: DeserializeOwned + Serialize>(input: &Value) -> T {
    let parsed: T = serde_json::from_value(input.clone()).expect("manifest parses");
    let written = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(&written, input);
    parsed
}

#[test]
fn full_nodepool_round_trips() {
    let pool: NodePool = assert_round_trip(&fixtures::full_nodepool());
    let spec = &pool.spec;
    assert_eq!(pool.name(), Some("default"));
    assert_eq!(spec.weight, Some(10));
    assert_eq!(
        spec.effective_consolidation_policy(),
        ConsolidationPolicy::Balanced
    );
    let template = &spec.template.spec;
    assert_eq!(template.requirements().len(), 10);
    assert_eq!(template.requirements()[0].min_values, Some(2));
    assert_eq!(template.requirements()[2].operator, "Gte");
    assert_eq!(template.requirements()[3].operator, "Lte");
    assert_eq!(template.startup_taints()[0].value.as_deref(), Some("true"));
    let budgets = spec.effective_budgets();
    assert_eq!(budgets.len(), 5);
    assert_eq!(budgets[2].schedule.as_deref(), Some("@daily"));
    assert_eq!(
        budgets[2].duration.as_ref().map(|d| d.as_std().as_secs()),
        Some(600)
    );
    assert_eq!(
        budgets[3].reasons,
        Some(vec![DisruptionReason::Empty, DisruptionReason::Drifted])
    );
    let limits = spec.limits.as_ref().expect("limits");
    assert_eq!(limits.get("cpu").map(|q| q.0.as_str()), Some("1000"));
    let status = pool.status.as_ref().expect("status");
    assert_eq!(status.nodes, Some(3));
    assert!(
        pool.condition(condition_types::READY)
            .is_some_and(|c| c.is_true())
    );
}

#[test]
fn static_nodepool_round_trips() {
    let pool: NodePool = assert_round_trip(&fixtures::static_nodepool());
    assert!(pool.spec.is_static());
    assert_eq!(pool.spec.replicas, Some(4));
    assert_eq!(
        pool.spec.template.spec.expire_after,
        Some(NillableDuration::Never)
    );
    assert_eq!(pool.spec.template.spec.effective_expire_after(), None);
}

#[test]
fn upstream_e2e_nodepool_round_trips_with_numeric_cpu() {
    let pool: NodePool = assert_round_trip(&fixtures::e2e_default_nodepool());
    assert_eq!(pool.spec.effective_consolidate_after(), None);
    assert_eq!(pool.spec.effective_budgets()[0].nodes(), "100%");
}

#[test]
fn full_nodeclaim_round_trips() {
    let claim: NodeClaim = assert_round_trip(&fixtures::full_nodeclaim());
    let status = claim.status.as_ref().expect("status");
    assert_eq!(
        status.provider_id.as_deref(),
        Some("aws:///us-west-2a/i-0123456789abcdef0")
    );
    assert_eq!(status.image_id.as_deref(), Some("ami-0a1b2c3d4e5f67890"));
    assert_eq!(
        status
            .allocatable
            .as_ref()
            .and_then(|a| a.get("cpu"))
            .map(|q| q.0.as_str()),
        Some("3920m")
    );
    assert!(status.last_pod_event_time.is_some());
    assert!(
        claim
            .condition(condition_types::INITIALIZED)
            .is_some_and(|c| c.is_true())
    );
    assert!(
        !claim
            .condition(condition_types::DRIFTED)
            .is_some_and(|c| c.is_true())
    );
    let requests = claim.spec.requests().expect("requests");
    assert_eq!(requests.get("memory").map(|q| q.0.as_str()), Some("6Gi"));
    assert_eq!(
        claim
            .spec
            .effective_termination_grace_period()
            .map(|d| d.as_secs()),
        Some(5400)
    );
}

#[test]
fn hand_written_nodeclaim_round_trips() {
    // Scenario files leave out most of what a cluster would add.
    claim_round_trip(json!({
        "metadata": {"name": "a"},
        "spec": {"requirements": []},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}
    }));
}

fn claim_round_trip(mut input: Value) {
    let claim: NodeClaim = serde_json::from_value(input.clone()).expect("parses");
    // The type fields are tolerated when absent but always written.
    input["apiVersion"] = json!("karpenter.sh/v1");
    input["kind"] = json!("NodeClaim");
    assert_eq!(serde_json::to_value(&claim).expect("serializes"), input);
}

#[test]
fn missing_type_fields_are_tolerated_and_written() {
    let mut input = fixtures::e2e_default_nodepool();
    let object = input.as_object_mut().expect("object");
    object.remove("apiVersion");
    object.remove("kind");
    let pool: NodePool = serde_json::from_value(input).expect("parses");
    let written = serde_json::to_value(&pool).expect("serializes");
    assert_eq!(written, fixtures::e2e_default_nodepool());
}

#[test]
fn wrong_api_version_is_rejected() {
    let mut input = fixtures::full_nodepool();
    input["apiVersion"] = json!("karpenter.sh/v1beta1");
    let err = serde_json::from_value::<NodePool>(input).expect_err("v1beta1 is not v1");
    let message = err.to_string();
    assert!(
        message.contains("apiVersion") && message.contains("karpenter.sh/v1beta1"),
        "{message}"
    );
}

#[test]
fn wrong_kind_is_rejected() {
    let err = serde_json::from_value::<NodePool>(fixtures::full_nodeclaim())
        .expect_err("a NodeClaim is not a NodePool");
    assert!(err.to_string().contains(r#"kind "NodeClaim""#), "{err}");
    let err = serde_json::from_value::<NodeClaim>(fixtures::static_nodepool())
        .expect_err("a NodePool is not a NodeClaim");
    assert!(err.to_string().contains(r#"kind "NodePool""#), "{err}");
}

#[test]
fn unknown_fields_are_kept_at_every_level() {
    let mut input = fixtures::full_nodepool();
    let future = json!({"nested": [1, "two", null]});
    for pointer in [
        "",
        "/spec",
        "/spec/template",
        "/spec/template/metadata",
        "/spec/template/spec",
        "/spec/template/spec/nodeClassRef",
        "/spec/template/spec/requirements/0",
        "/spec/disruption",
        "/spec/disruption/budgets/1",
        "/status",
        "/status/conditions/0",
    ] {
        input.pointer_mut(pointer).expect(pointer)["futureField"] = future.clone();
    }
    let pool: NodePool = assert_round_trip(&input);
    assert_eq!(pool.extra.get("futureField"), Some(&future));
    assert_eq!(
        pool.spec.template.spec.requirements()[0]
            .extra
            .get("futureField"),
        Some(&future)
    );

    let mut input = fixtures::full_nodeclaim();
    for pointer in [
        "",
        "/spec",
        "/spec/resources",
        "/status",
        "/status/conditions/5",
    ] {
        input.pointer_mut(pointer).expect(pointer)["futureField"] = future.clone();
    }
    let claim: NodeClaim = assert_round_trip(&input);
    assert_eq!(claim.spec.extra.get("futureField"), Some(&future));
}

#[test]
fn empty_and_absent_fields_stay_as_written() {
    let with_empties = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "empty", "labels": {}},
        "spec": {
            "template": {
                "metadata": {"labels": {}, "annotations": {}},
                "spec": {"requirements": [], "taints": [], "startupTaints": []}
            },
            "disruption": {"budgets": []},
            "limits": {}
        },
        "status": {"conditions": [], "resources": {}}
    });
    let pool: NodePool = assert_round_trip(&with_empties);
    // An explicit empty budget list is not defaulted: upstream then sets no limit.
    assert!(pool.spec.effective_budgets().is_empty());

    let with_absents = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {},
        "spec": {"template": {"spec": {}}}
    });
    let pool: NodePool = assert_round_trip(&with_absents);
    assert!(pool.spec.template.spec.requirements.is_none());
    assert!(pool.status.is_none());
    assert_eq!(pool.spec.effective_budgets().len(), 1);

    let claim_empties = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "c"},
        "spec": {"requirements": [], "resources": {"requests": {}}},
        "status": {"capacity": {}, "allocatable": {}, "conditions": []}
    });
    assert_round_trip::<NodeClaim>(&claim_empties);
    let claim_absents = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "c"},
        "spec": {"resources": {}},
        "status": {}
    });
    assert_round_trip::<NodeClaim>(&claim_absents);
}

#[test]
fn bad_values_fail_at_their_field() {
    let cases = [
        (
            "/spec/template/spec/expireAfter",
            json!("30d"),
            r#"invalid duration "30d""#,
        ),
        (
            "/spec/template/spec/expireAfter",
            json!(720),
            "invalid type: integer",
        ),
        (
            "/spec/template/spec/terminationGracePeriod",
            json!("Never"),
            "\"Never\" is not allowed",
        ),
        (
            "/spec/template/spec/terminationGracePeriod",
            json!("-1h"),
            "negative",
        ),
        (
            "/spec/disruption/consolidateAfter",
            json!("1h30"),
            "missing unit",
        ),
        (
            "/spec/disruption/budgets/2/duration",
            json!("Never"),
            "\"Never\" is not allowed",
        ),
        (
            "/spec/disruption/consolidationPolicy",
            json!("Sometimes"),
            "unknown variant `Sometimes`",
        ),
        (
            "/spec/disruption/budgets/3/reasons/0",
            json!("Expired"),
            "unknown variant `Expired`",
        ),
        (
            "/spec/template/spec/requirements/0/minValues",
            json!(-1),
            "invalid value",
        ),
        (
            "/status/conditions/0/status",
            json!("Maybe"),
            "unknown variant `Maybe`",
        ),
        ("/spec/limits/cpu", json!(null), "quantity"),
    ];
    for (pointer, value, expected) in cases {
        let mut input = fixtures::full_nodepool();
        *input.pointer_mut(pointer).expect(pointer) = value;
        let err = serde_json::from_value::<NodePool>(input).expect_err(pointer);
        assert!(err.to_string().contains(expected), "{pointer}: {err}");
    }
    // consolidateAfter and expireAfter take the Never sentinel.
    let mut input = fixtures::full_nodepool();
    input["spec"]["disruption"]["consolidateAfter"] = json!("Never");
    input["spec"]["template"]["spec"]["expireAfter"] = json!("Never");
    assert_round_trip::<NodePool>(&input);
}

#[test]
fn template_becomes_a_node_claim() {
    let pool: NodePool = serde_json::from_value(fixtures::full_nodepool()).expect("parses");
    let claim = pool.spec.template.to_node_claim();
    assert_eq!(
        claim
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("billing-team"))
            .map(String::as_str),
        Some("my-team")
    );
    assert_eq!(
        claim.spec.requirements(),
        pool.spec.template.spec.requirements()
    );
    assert_eq!(
        claim.spec.node_class_ref,
        pool.spec.template.spec.node_class_ref
    );
    assert_eq!(
        claim.spec.expire_after,
        pool.spec.template.spec.expire_after
    );
    assert!(claim.spec.resources.is_none() && claim.status.is_none());
}

#[test]
fn malformed_envelopes_are_rejected_or_tolerated() {
    let spec = json!({"template": {"spec": {}}});
    let ok =
        json!({"apiVersion": null, "kind": null, "metadata": null, "spec": spec, "status": null});
    let pool: NodePool = serde_json::from_value(ok).expect("nulls read as absent");
    assert!(pool.status.is_none() && pool.metadata.name.is_none());
    for bad in [
        json!({"metadata": {}}),
        json!({"spec": null}),
        json!({"kind": "NodePool", "spec": {"template": {}}}),
        json!({"apiVersion": 1, "spec": spec}),
        json!([]),
        json!("NodePool"),
    ] {
        assert!(
            serde_json::from_value::<NodePool>(bad.clone()).is_err(),
            "{bad}"
        );
    }
    let text = r#"{"kind": "NodePool", "kind": "NodePool", "spec": {"template": {"spec": {}}}}"#;
    let err = serde_json::from_str::<NodePool>(text).expect_err("duplicate");
    assert!(err.to_string().contains("duplicate field `kind`"), "{err}");
}

#[test]
fn full_nodeoverlay_round_trips() {
    let overlay: NodeOverlay = assert_round_trip(&fixtures::full_nodeoverlay());
    assert_eq!(overlay.name(), Some("gpu-discount"));
    assert_eq!(overlay.spec.requirements().len(), 4);
    assert_eq!(overlay.spec.requirements()[3].values(), [] as [String; 0]);
    assert_eq!(overlay.spec.price_adjustment.as_deref(), Some("-12.5%"));
    assert_eq!(overlay.spec.effective_weight(), 40);
    let capacity = overlay.spec.capacity.as_ref().expect("capacity");
    assert_eq!(
        capacity.get("smarter-devices/fuse").map(|q| q.0.as_str()),
        Some("2")
    );
    assert!(overlay.spec.extra.contains_key("futureField"));
    assert!(
        overlay
            .condition("ValidationSucceeded")
            .is_some_and(|c| c.is_true())
    );
    // Its apiVersion is v1alpha1; v1 is another object.
    let mut v1 = fixtures::full_nodeoverlay();
    v1["apiVersion"] = json!("karpenter.sh/v1");
    let error = serde_json::from_value::<NodeOverlay>(v1)
        .unwrap_err()
        .to_string();
    assert!(error.contains("karpenter.sh/v1alpha1"), "{error}");
    // A minimal one, as hand-written, writes back as read (with its kind).
    let minimal = json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "m"}, "spec": {"requirements": []}});
    let overlay: NodeOverlay = assert_round_trip(&minimal);
    assert_eq!(overlay.spec.effective_weight(), 0);
}
