//! Unit tests of [`validate`]: the fixtures they share, and a test per rule
//! family in the files below.

mod accounting;
mod claims;
mod daemons;
mod existing;
mod leaving;
mod limits;
mod topology;

use crate::pods::PodInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, NodeStatus, Pod, PodAffinityTerm, PodAntiAffinity, PodCondition, PodSpec,
    PodStatus, PodTemplateSpec, ResourceRequirements, Taint, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use super::*;
use crate::api::{
    NodeClaimTemplate, NodeClaimTemplateSpec, NodePool, NodePoolSpec, Quantities, TemplateMetadata,
};
use crate::cloudprovider::{InstanceType, Offering};
use crate::pods::PodKey;
use crate::provisioning::plan::{Launch, PlannedClaim, ProvisioningPlan, RequirementOutput};
use crate::provisioning::{ExistingPlacement, Unschedulable, plan_provisioning};
use crate::resources::ResourceList;
use crate::scheduling::{
    DISRUPTED_TAINT_KEY, LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY,
};
use crate::snapshot::{ClusterNode, Snapshot};

const GI: i64 = 1 << 30;

fn resource_list(cpu_m: i64, memory_gi: i64, pods: i64) -> ResourceList {
    let mut list = ResourceList::new();
    list.set("cpu", cpu_m);
    list.set("memory", memory_gi * GI * 1000);
    list.set("pods", pods * 1000);
    list
}

/// `small`: 2 cpu, spot 0.05 / on-demand 0.10 in zone-a, on-demand 0.12 in
/// zone-b. `large`: 8 cpu, spot 0.20 / on-demand 0.40 in zone-a.
fn catalog() -> Arc<[InstanceType]> {
    let labels = [
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/os", "linux"),
    ];
    Arc::from(vec![
        InstanceType::new(
            "small",
            labels,
            vec![
                Offering::new("zone-a", "spot", 0.05),
                Offering::new("zone-a", "on-demand", 0.10),
                Offering::new("zone-b", "on-demand", 0.12),
            ],
            resource_list(2000, 8, 110),
            ResourceList::new(),
        ),
        InstanceType::new(
            "large",
            labels,
            vec![
                Offering::new("zone-a", "spot", 0.20),
                Offering::new("zone-a", "on-demand", 0.40),
            ],
            resource_list(8000, 32, 110),
            ResourceList::new(),
        ),
    ])
}

fn pool(name: &str) -> NodePool {
    NodePool {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        spec: NodePoolSpec {
            template: NodeClaimTemplate {
                metadata: Some(TemplateMetadata::default()),
                spec: NodeClaimTemplateSpec::default(),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

fn container(cpu_m: i64) -> Container {
    Container {
        name: "main".to_string(),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity(format!("{cpu_m}m"))),
                ("memory".to_string(), Quantity("1Gi".to_string())),
            ])),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A pod `default/<name>` of `app` asking `cpu_m`, which the kube-scheduler
/// marked unschedulable.
fn pod(name: &str, app: &str, cpu_m: i64) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some("default".to_string()),
            uid: Some(format!("uid-{name}")),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![container(cpu_m)],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Pending".to_string()),
            conditions: Some(vec![PodCondition {
                type_: "PodScheduled".to_string(),
                status: "False".to_string(),
                reason: Some("Unschedulable".to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

fn app_selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
        ..Default::default()
    }
}

fn anti_affine(mut pod: Pod, app: &str) -> Pod {
    pod.spec.as_mut().unwrap().affinity = Some(Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(app_selector(app)),
                topology_key: LABEL_HOSTNAME.to_string(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    });
    pod
}

fn spread(mut pod: Pod, app: &str) -> Pod {
    pod.spec.as_mut().unwrap().topology_spread_constraints = Some(vec![TopologySpreadConstraint {
        max_skew: 1,
        topology_key: LABEL_TOPOLOGY_ZONE.to_string(),
        when_unsatisfiable: "DoNotSchedule".to_string(),
        label_selector: Some(app_selector(app)),
        ..Default::default()
    }]);
    pod
}

/// One pool `default` over [`catalog`], with these pods.
fn snapshot(pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        node_pools: vec![pool("default")],
        instance_types: BTreeMap::from([("default".to_string(), catalog())]),
        pods: pods
            .into_iter()
            .map(|p| Arc::new(PodInfo::from(p)))
            .collect(),
        ..Default::default()
    }
}

fn two_pods() -> Snapshot {
    snapshot(vec![pod("web-0", "web", 1000), pod("web-1", "web", 1000)])
}

fn launch(instance_type: &str, zone: &str, capacity_type: &str, price: f64) -> Option<Launch> {
    Some(Launch {
        instance_type: instance_type.to_string(),
        zone: zone.to_string(),
        capacity_type: capacity_type.to_string(),
        price,
        reservation_id: None,
    })
}

/// A claim of `default` listing `types`, launching `launch`, with `pods`.
fn claim(types: &[&str], launch: Option<Launch>, pods: &[&str]) -> PlannedClaim {
    PlannedClaim {
        node_pool: "default".to_string(),
        instance_types: types.iter().collect(),
        requirements: vec![RequirementOutput {
            key: NODE_POOL_LABEL_KEY.to_string(),
            operator: "In".to_string(),
            values: ["default"].into_iter().collect(),
            min_values: None,
        }],
        launch,
        pods: pods.iter().map(|p| PodKey::new("default", p)).collect(),
        min_values_relaxed: false,
        capacity_buffers: Default::default(),
    }
}

fn plan(claims: Vec<PlannedClaim>) -> ProvisioningPlan {
    let total = claims
        .iter()
        .filter_map(|c| c.launch.as_ref())
        .map(|l| l.price)
        .sum();
    ProvisioningPlan {
        node_claims: claims,
        total_price_per_hour: total,
        ..Default::default()
    }
}

fn rules(violations: &[Violation]) -> BTreeSet<Rule> {
    violations.iter().map(|v| v.rule).collect()
}

#[test]
fn the_schedulers_plan_and_a_hand_made_good_plan_pass() {
    let snapshot = two_pods();
    assert_eq!(validate(&snapshot, &plan_provisioning(&snapshot)), vec![]);
    let good = plan(vec![claim(
        &["small", "large"],
        launch("small", "zone-a", "spot", 0.05),
        &["web-0", "web-1"],
    )]);
    assert_eq!(validate(&snapshot, &good), vec![]);
}
