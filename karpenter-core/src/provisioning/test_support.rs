//! Small clusters for the provisioning modules' unit tests: one pool, types
//! with one on-demand offering, pods asking cpu and memory, written with the
//! public builders of [`snapshot::build`](crate::snapshot::build) that
//! integration tests and embedders use too.

use crate::pods::PodInfo;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::api::NodePool;
use crate::cloudprovider::InstanceType;
use crate::scheduling::{CapacityType, WellKnownLabels};
use crate::snapshot::Snapshot;
use crate::snapshot::build::{InstanceTypeBuilder, PodBuilder};

/// An amd64 Linux type with `cpu` cores, `memory_gib` GiB and 110 pods, in
/// `zone-a` on demand at `price`.
pub(crate) fn instance_type(name: &str, cpu: i64, memory_gib: i64, price: f64) -> InstanceType {
    InstanceTypeBuilder::new(name)
        .cpu(&cpu.to_string())
        .memory(&format!("{memory_gib}Gi"))
        .offering("zone-a", CapacityType::OnDemand, price)
        .build()
}

/// A pending pod in `default` asking `cpu` and `memory`.
pub(crate) fn pod(name: &str, cpu: &str, memory: &str) -> Pod {
    PodBuilder::new("default", name)
        .requests(cpu, memory)
        .build()
}

/// One pool, `default`, with no requirements and the given `limits` (a
/// NodePool's `spec.limits`, or null), offered `types`, and `pods` pending.
pub(crate) fn snapshot_with_limits(
    limits: serde_json::Value,
    types: Vec<InstanceType>,
    pods: Vec<Pod>,
) -> Snapshot {
    let pool: NodePool = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {
            "limits": limits,
            "template": {"spec": {
                "requirements": [],
                "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
            }},
        },
    }))
    .expect("a NodePool");
    Snapshot {
        node_pools: vec![pool],
        instance_types: BTreeMap::from([("default".to_owned(), Arc::from(types))]),
        pods: pods
            .into_iter()
            .map(|p| Arc::new(PodInfo::from(p)))
            .collect(),
        well_known_labels: WellKnownLabels::core().clone(),
        ..Snapshot::default()
    }
}

/// The same without limits.
pub(crate) fn snapshot(types: Vec<InstanceType>, pods: Vec<Pod>) -> Snapshot {
    snapshot_with_limits(serde_json::Value::Null, types, pods)
}
