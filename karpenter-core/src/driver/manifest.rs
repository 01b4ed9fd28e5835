//! A planned claim written as the NodeClaim the driver creates: the pool's
//! template (labels, annotations, taints, node class), the plan's
//! requirements, the pods' requests, and the pool's hash so that drift can
//! tell later whether the template changed.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::pods::PodInfo;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{
    NodeClaim, NodePool, NodeSelectorRequirementWithMinValues, Quantities, ResourceRequirements,
};
use crate::pods::{PodKey, pod_key};
use crate::provisioning::PlannedClaim;
use crate::resources::{ResourceList, pod_requests};
use crate::scheduling::{
    NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY, NODE_POOL_HASH_ANNOTATION_KEY,
    NODE_POOL_HASH_VERSION_ANNOTATION_KEY, NODE_POOL_LABEL_KEY, WellKnownLabels,
};

/// The NodeClaim `name` for `planned`, launched from `pool` at `now`; `pods`
/// are the snapshot's pods (the claim requests the sum of its own).
pub(super) fn node_claim(
    planned: &PlannedClaim,
    pool: &NodePool,
    name: &str,
    pods: &BTreeMap<PodKey, &PodInfo>,
    well_known: &WellKnownLabels,
    now: Timestamp,
) -> NodeClaim {
    let mut claim = pool.spec.template.to_node_claim();
    claim.metadata.name = Some(name.to_owned());
    claim.metadata.creation_timestamp = Some(Time(now));
    let labels = claim.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(NODE_POOL_LABEL_KEY.to_owned(), planned.node_pool.clone());
    labels.extend(planned.node_labels(well_known));
    let pool_annotations = pool.metadata.annotations.as_ref();
    for key in [
        NODE_POOL_HASH_ANNOTATION_KEY,
        NODE_POOL_HASH_VERSION_ANNOTATION_KEY,
    ] {
        if let Some(value) = pool_annotations.and_then(|a| a.get(key)) {
            claim
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(key.to_owned(), value.clone());
        }
    }
    // Upstream's scheduler marks every claim it makes with whether its
    // minValues were lowered (`--min-values-policy BestEffort`); a static
    // pool's claims do not come from it.
    if !pool.spec.is_static() {
        claim
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(
                NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY.to_owned(),
                planned.min_values_relaxed.to_string(),
            );
    }
    claim.spec.requirements = Some(
        planned
            .requirements
            .iter()
            .map(|r| NodeSelectorRequirementWithMinValues {
                key: r.key.clone(),
                operator: r.operator.clone(),
                values: (!r.values.is_empty()).then(|| r.values.to_vec()),
                min_values: r.min_values,
                ..NodeSelectorRequirementWithMinValues::default()
            })
            .collect(),
    );
    let mut requests = ResourceList::new();
    for pod in planned.pods.iter().filter_map(|key| pods.get(key)) {
        let asks = pod.spec.as_ref().and_then(|s| pod_requests(s).ok());
        if let Some(sum) = asks.and_then(|asks| requests.checked_add(&asks)) {
            requests = sum;
        }
    }
    claim.spec.resources = Some(ResourceRequirements {
        requests: Some(Quantities::from(requests.to_quantities())),
        ..ResourceRequirements::default()
    });
    claim
}

/// The snapshot's pods by key.
pub(super) fn pods_by_key(pods: &[Arc<PodInfo>]) -> BTreeMap<PodKey, &PodInfo> {
    pods.iter().map(|p| (pod_key(p), Arc::as_ref(p))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provisioning::RequirementOutput;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    /// A pool with a template (labels, a taint, a node class) and the
    /// pool-hash annotations a claim copies.
    fn general_pool() -> NodePool {
        serde_json::from_value(json!({
            "metadata": {"name": "general", "annotations": {
                "karpenter.sh/nodepool-hash": "123", "karpenter.sh/nodepool-hash-version": "v3",
            }},
            "spec": {"template": {
                "metadata": {"labels": {"team": "web"}},
                "spec": {
                    "requirements": [],
                    "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
                    "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
                },
            }},
        }))
        .expect("a NodePool")
    }

    /// Pods `a` and `b` in `default`, each requesting 1.5 CPU and 1 GiB.
    fn two_pods() -> Vec<Arc<PodInfo>> {
        ["a", "b"]
            .iter()
            .map(|name| {
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}]},
                }))
                .expect("a Pod");
                Arc::new(PodInfo::from(pod))
            })
            .collect()
    }

    /// A plan's claim on `general` for both pods, with a zone, an instance
    /// type list with `minValues`, and a custom key left two values.
    fn planned_claim() -> PlannedClaim {
        PlannedClaim {
            node_pool: "general".into(),
            instance_types: vec!["m-2".to_owned(), "m-4".to_owned()].into(),
            requirements: vec![
                RequirementOutput {
                    key: "topology.kubernetes.io/zone".into(),
                    operator: "In".into(),
                    values: vec!["zone-a".to_owned()].into(),
                    min_values: None,
                },
                RequirementOutput {
                    key: "node.kubernetes.io/instance-type".into(),
                    operator: "In".into(),
                    values: vec!["m-2".to_owned(), "m-4".to_owned()].into(),
                    min_values: Some(2),
                },
                // A custom key left with two values: the node gets one.
                RequirementOutput {
                    key: "example.com/team".into(),
                    operator: "In".into(),
                    values: vec!["red".to_owned(), "blue".to_owned()].into(),
                    min_values: None,
                },
            ],
            launch: None,
            pods: vec![PodKey::new("default", "a"), PodKey::new("default", "b")],
            min_values_relaxed: false,
            capacity_buffers: Default::default(),
        }
    }

    #[test]
    fn a_planned_claim_becomes_the_pools_claim_with_the_plans_requirements_and_the_pods_requests() {
        let pool = general_pool();
        let pods = two_pods();
        let planned = planned_claim();
        let now = Timestamp::from_second(1_800_000_000).expect("a time");
        let well_known = crate::scheduling::WellKnownLabels::core();
        let pods = pods_by_key(&pods);
        let claim = node_claim(&planned, &pool, "general-00001", &pods, well_known, now);
        let json = serde_json::to_value(&claim).expect("serializable");
        assert_eq!(json["metadata"]["name"], "general-00001");
        assert_eq!(json["metadata"]["labels"]["team"], "web");
        assert_eq!(
            json["metadata"]["labels"]["karpenter.sh/nodepool"],
            "general"
        );
        assert_eq!(
            json["metadata"]["labels"]["topology.kubernetes.io/zone"],
            "zone-a"
        );
        assert!(
            json["metadata"]["labels"]
                .get("node.kubernetes.io/instance-type")
                .is_none()
        );
        // As upstream's resolveCustomLabelsFromRequirements: a value it allows.
        assert_eq!(json["metadata"]["labels"]["example.com/team"], "blue");
        assert_eq!(
            json["metadata"]["annotations"]["karpenter.sh/nodepool-hash"],
            "123"
        );
        assert_eq!(
            json["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"],
            "v3"
        );
        // Upstream marks every claim its scheduler makes, relaxed or not.
        assert_eq!(
            json["metadata"]["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"],
            "false"
        );
        let relaxed = PlannedClaim {
            min_values_relaxed: true,
            ..planned.clone()
        };
        let claim = node_claim(&relaxed, &pool, "general-00002", &pods, well_known, now);
        assert_eq!(
            claim
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("karpenter.sh/nodeclaim-min-values-relaxed").cloned()),
            Some("true".to_string())
        );
        assert_eq!(json["spec"]["taints"][0]["key"], "dedicated");
        assert_eq!(json["spec"]["requirements"][1]["minValues"], 2);
        assert_eq!(
            json["spec"]["requirements"][1]["values"],
            json!(["m-2", "m-4"])
        );
        assert_eq!(json["spec"]["resources"]["requests"]["cpu"], "3");
        assert_eq!(
            json["spec"]["resources"]["requests"]["memory"],
            "2147483648"
        );
        assert_eq!(json["spec"]["resources"]["requests"]["pods"], "2");
    }
}
