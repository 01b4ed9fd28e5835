//! Unit tests of [`drift_with`]: each check, their order, and the reasons'
//! names.

use serde_json::{Value, json};

use super::*;
use crate::cloudprovider::{Offering, Reservation};
use crate::resources::ResourceList;

/// Older than the instance type check waits for.
const OLD: Duration = Duration::from_secs(2 * 60 * 60);

/// The provider's list: `small`, on-demand and spot in zone-a, and a
/// reservation `cr-1` in zone-a.
fn types() -> Vec<InstanceType> {
    vec![small(vec![
        Offering::new("zone-a", "on-demand", 0.10),
        Offering::new("zone-a", "spot", 0.03),
        Offering::reserved("zone-a", 0.01, reservation("cr-1")),
    ])]
}

fn reservation(id: &str) -> Reservation {
    Reservation {
        label: "karpenter.fake/reservation-id".into(),
        id: id.into(),
        capacity: 1,
    }
}

fn small(offerings: Vec<Offering>) -> InstanceType {
    InstanceType::new(
        "small",
        [("kubernetes.io/arch", "amd64")],
        offerings,
        ResourceList::new(),
        ResourceList::new(),
    )
}

/// Drift of an old claim without a verdict from the cloud provider.
fn drift(claim: &NodeClaim, pool: &NodePool) -> Option<DriftReason> {
    drift_aged(claim, pool, &types(), OLD)
}

fn drift_aged(
    claim: &NodeClaim,
    pool: &NodePool,
    types: &[InstanceType],
    age: Duration,
) -> Option<DriftReason> {
    let inputs = DriftInputs {
        instance_types: types,
        by_name: None,
        age,
        provider: None,
    };
    drift_with(claim, pool, &inputs)
}

fn pool(annotations: Value, requirements: Value) -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": "default", "annotations": annotations},
        "spec": {"template": {"spec": {"requirements": requirements}}},
    }))
    .expect("a valid NodePool")
}

/// A launched claim with `labels`, `annotations` and `conditions` besides
/// `Launched`.
fn claim(labels: Value, annotations: Value, conditions: Value) -> NodeClaim {
    let mut all = vec![json!({"type": "Launched", "status": "True"})];
    all.extend(conditions.as_array().into_iter().flatten().cloned());
    serde_json::from_value(json!({
        "metadata": {"name": "claim-a", "labels": labels, "annotations": annotations},
        "spec": {},
        "status": {"nodeName": "node-a", "conditions": all},
    }))
    .expect("a valid NodeClaim")
}

fn hashes(hash: &str, version: &str) -> Value {
    json!({
        NODE_POOL_HASH_ANNOTATION_KEY: hash,
        NODE_POOL_HASH_VERSION_ANNOTATION_KEY: version,
    })
}

const CAPACITY: &str = "karpenter.sh/capacity-type";

fn spot_only() -> Value {
    json!([{"key": CAPACITY, "operator": "In", "values": ["spot"]}])
}

/// The labels Karpenter writes on a `small` claim in zone-a of `capacity`.
fn launched_labels(capacity: &str) -> Value {
    json!({
        "karpenter.sh/nodepool": "default",
        "node.kubernetes.io/instance-type": "small",
        "topology.kubernetes.io/zone": "zone-a",
        CAPACITY: capacity,
    })
}

fn spot_labels() -> Value {
    launched_labels("spot")
}

#[test]
fn not_drifted_when_everything_matches() {
    let pool = pool(hashes("h1", "v3"), spot_only());
    let claim = claim(spot_labels(), hashes("h1", "v3"), json!([]));
    assert_eq!(drift(&claim, &pool), None);
}

#[test]
fn drifted_by_condition() {
    let pool = pool(json!({}), json!([]));
    let with_reason = claim(
        spot_labels(),
        json!({}),
        json!([{"type": "Drifted", "status": "True", "reason": "ImageDrift"}]),
    );
    let reason = drift(&with_reason, &pool).expect("drifted");
    assert_eq!(
        reason,
        DriftReason::Condition {
            reason: Some("ImageDrift".into())
        }
    );
    assert_eq!(reason.name(), "ImageDrift");
    assert_eq!(
        reason.to_string(),
        "NodeClaim has condition Drifted=True (ImageDrift)"
    );
    let bare = claim(
        spot_labels(),
        json!({}),
        json!([{"type": "Drifted", "status": "True"}]),
    );
    let reason = drift(&bare, &pool).expect("drifted");
    assert_eq!(reason, DriftReason::Condition { reason: None });
    assert_eq!(reason.name(), "Drifted");
    // False or Unknown is not drifted.
    for status in ["False", "Unknown"] {
        let claim = claim(
            spot_labels(),
            json!({}),
            json!([{"type": "Drifted", "status": status}]),
        );
        assert_eq!(drift(&claim, &pool), None, "{status}");
    }
}

#[test]
fn a_claim_not_launched_has_no_drift() {
    // Upstream's Reconcile clears the condition of a claim that is not
    // Launched, whatever the checks would find.
    let pool = pool(hashes("new", "v3"), spot_only());
    let not_launched: NodeClaim = serde_json::from_value(json!({
        "metadata": {"name": "claim-a", "labels": {"karpenter.sh/nodepool": "default"},
                     "annotations": hashes("old", "v3")},
        "spec": {},
        "status": {"conditions": [
            {"type": "Launched", "status": "False"},
            {"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"},
        ]},
    }))
    .expect("a valid NodeClaim");
    assert_eq!(drift(&not_launched, &pool), None);
}

#[test]
fn drifted_by_hash() {
    let pool = pool(hashes("new", "v3"), json!([]));
    let claim = claim(spot_labels(), hashes("old", "v3"), json!([]));
    let reason = drift(&claim, &pool).expect("drifted");
    assert_eq!(
        reason,
        DriftReason::NodePoolHash {
            pool: "new".into(),
            claim: "old".into()
        }
    );
    assert_eq!(reason.name(), "NodePoolDrifted");
    assert_eq!(
        reason.to_string(),
        "NodePool template changed: karpenter.sh/nodepool-hash is \"new\" on the NodePool, \"old\" on the NodeClaim"
    );
}

#[test]
fn hash_needs_both_annotations_on_both_sides_and_one_version() {
    let cases = [
        // Different hash versions: upstream changed how it hashes.
        (hashes("new", "v3"), hashes("old", "v2")),
        // Something missing on either side.
        (
            json!({NODE_POOL_HASH_ANNOTATION_KEY: "new"}),
            hashes("old", "v3"),
        ),
        (
            hashes("new", "v3"),
            json!({NODE_POOL_HASH_ANNOTATION_KEY: "old"}),
        ),
        (json!({}), hashes("old", "v3")),
        (hashes("new", "v3"), json!({})),
    ];
    for (pool_annotations, claim_annotations) in cases {
        let pool = pool(pool_annotations.clone(), json!([]));
        let claim = claim(spot_labels(), claim_annotations.clone(), json!([]));
        assert_eq!(
            drift(&claim, &pool),
            None,
            "{pool_annotations} / {claim_annotations}"
        );
    }
}

#[test]
fn drifted_by_requirements_of_the_claims_labels() {
    let pool = pool(json!({}), spot_only());
    let on_demand = claim(launched_labels("on-demand"), json!({}), json!([]));
    let reason = drift(&on_demand, &pool).expect("drifted");
    assert!(matches!(reason, DriftReason::Requirements { .. }));
    assert_eq!(reason.name(), "RequirementsDrifted");
    assert!(
        reason
            .to_string()
            .starts_with("NodeClaim labels no longer meet the NodePool's requirements: key karpenter.sh/capacity-type"),
        "{reason}"
    );
    // Strict, as upstream: a required key the claim lacks is drift too.
    let mut labels = spot_labels();
    labels
        .as_object_mut()
        .expect("labels")
        .remove(CAPACITY)
        .expect("a capacity type");
    let unlabelled = claim(labels, json!({}), json!([]));
    assert_eq!(
        drift(&unlabelled, &pool),
        Some(DriftReason::Requirements {
            detail: "label \"karpenter.sh/capacity-type\" does not have known values".into()
        })
    );
    // Only excluding a value needs no label.
    let exclude = self::pool(
        json!({}),
        json!([{"key": "example.com/team", "operator": "NotIn", "values": ["a"]}]),
    );
    assert_eq!(drift(&unlabelled, &exclude), None);
}

#[test]
fn re_derived_reasons_come_first_hash_before_requirements() {
    let pool = pool(hashes("new", "v3"), spot_only());
    let claim = claim(
        launched_labels("on-demand"),
        hashes("old", "v3"),
        json!([{"type": "Drifted", "status": "True", "reason": "RequirementsDrifted"}]),
    );
    assert!(matches!(
        drift(&claim, &pool),
        Some(DriftReason::NodePoolHash { .. })
    ));
    let same_hash = self::claim(
        launched_labels("on-demand"),
        hashes("new", "v3"),
        json!([{"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"}]),
    );
    assert!(matches!(
        drift(&same_hash, &pool),
        Some(DriftReason::Requirements { .. })
    ));
}

#[test]
fn instance_type_gone_from_the_provider() {
    let pool = pool(json!({}), json!([]));
    let mut labels = spot_labels();
    labels["node.kubernetes.io/instance-type"] = json!("large");
    let claim = claim(labels, json!({}), json!([]));
    let reason = drift(&claim, &pool).expect("drifted");
    assert_eq!(reason.name(), "InstanceTypeNotFound");
    assert_eq!(
        reason.to_string(),
        "instance type large is no longer offered by the cloud provider"
    );
    // An empty list has no type either.
    assert!(drift_aged(&claim, &pool, &[], OLD).is_some());
}

#[test]
fn instance_type_label_missing() {
    let pool = pool(json!({}), json!([]));
    let mut labels = spot_labels();
    labels
        .as_object_mut()
        .expect("labels")
        .remove("node.kubernetes.io/instance-type");
    let claim = claim(labels, json!({}), json!([]));
    let reason = drift(&claim, &pool).expect("drifted");
    assert_eq!(
        reason,
        DriftReason::InstanceTypeNotFound {
            detail: "NodeClaim has no node.kubernetes.io/instance-type label".into()
        }
    );
}

#[test]
fn offering_for_the_claims_zone_or_capacity_type_gone() {
    let pool = pool(json!({}), json!([]));
    let mut elsewhere = spot_labels();
    elsewhere["topology.kubernetes.io/zone"] = json!("zone-b");
    let claim_b = claim(elsewhere, json!({}), json!([]));
    let reason = drift(&claim_b, &pool).expect("drifted");
    assert_eq!(
        reason.to_string(),
        "instance type small has no offering in zone-b for spot any more"
    );
    // Only on-demand left in zone-a: the spot claim drifts, an on-demand
    // one does not.
    let on_demand_only = vec![small(vec![Offering::new("zone-a", "on-demand", 0.1)])];
    let spot = claim(spot_labels(), json!({}), json!([]));
    assert!(drift_aged(&spot, &pool, &on_demand_only, OLD).is_some());
    let on_demand = claim(launched_labels("on-demand"), json!({}), json!([]));
    assert_eq!(drift_aged(&on_demand, &pool, &on_demand_only, OLD), None);
}

#[test]
fn unavailable_offerings_still_count() {
    // The provider's list keeps offerings it cannot launch now: such an
    // offering still names the claim's kind.
    let pool = pool(json!({}), json!([]));
    let unavailable = vec![small(vec![
        Offering::new("zone-a", "spot", 0.03).unavailable(),
    ])];
    let claim = claim(spot_labels(), json!({}), json!([]));
    assert_eq!(drift_aged(&claim, &pool, &unavailable, OLD), None);
}

#[test]
fn instance_type_is_checked_only_after_an_hour() {
    let pool = pool(json!({}), json!([]));
    let claim = claim(spot_labels(), json!({}), json!([]));
    for age in [Duration::ZERO, INSTANCE_TYPE_CHECK_AGE] {
        assert_eq!(drift_aged(&claim, &pool, &[], age), None, "{age:?}");
    }
    let just_over = INSTANCE_TYPE_CHECK_AGE + Duration::from_nanos(1);
    assert!(drift_aged(&claim, &pool, &[], just_over).is_some());
}

#[test]
fn a_reserved_claim_also_fits_on_demand_and_any_reservation() {
    let pool = pool(json!({}), json!([]));
    let mut labels = launched_labels("reserved");
    labels["karpenter.fake/reservation-id"] = json!("cr-9");
    let reserved = claim(labels, json!({}), json!([]));
    // Its reservation cr-9 is gone, but the type has a reservation cr-1 and
    // on-demand in its zone.
    assert_eq!(drift(&reserved, &pool), None);
    // Reserved gone, on-demand left.
    let on_demand_only = vec![small(vec![Offering::new("zone-a", "on-demand", 0.1)])];
    assert_eq!(drift_aged(&reserved, &pool, &on_demand_only, OLD), None);
    // Only spot left: drifted.
    let spot_only = vec![small(vec![Offering::new("zone-a", "spot", 0.03)])];
    assert!(drift_aged(&reserved, &pool, &spot_only, OLD).is_some());
    // An on-demand claim does not fit a reserved offering.
    let reserved_only = vec![small(vec![Offering::reserved(
        "zone-a",
        0.01,
        reservation("cr-1"),
    )])];
    let on_demand = claim(launched_labels("on-demand"), json!({}), json!([]));
    assert!(drift_aged(&on_demand, &pool, &reserved_only, OLD).is_some());
}

#[test]
fn the_provider_comes_after_the_instance_type_and_before_the_condition() {
    let pool = pool(json!({}), json!([]));
    let claim = claim(
        spot_labels(),
        json!({}),
        json!([{"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"}]),
    );
    let reported = "ImageDrift: image img-1 is no longer the AKSNodeClass's";
    let inputs = |instance_types| DriftInputs {
        instance_types,
        by_name: None,
        age: OLD,
        provider: Some(reported),
    };
    let listed = types();
    let reason = drift_with(&claim, &pool, &inputs(&listed)).expect("drifted");
    assert_eq!(reason, DriftReason::Provider(reported.into()));
    assert_eq!(reason.name(), "ImageDrift");
    let gone = drift_with(&claim, &pool, &inputs(&[])).expect("drifted");
    assert_eq!(gone.name(), "InstanceTypeNotFound");
    // A provider's bare reason is its own name.
    assert_eq!(
        DriftReason::Provider("ImageDrift".into()).name(),
        "ImageDrift"
    );
    assert_eq!(
        DriftReason::Provider("the image changed: img-2".into()).name(),
        "the image changed: img-2"
    );
}
