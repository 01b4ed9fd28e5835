//! From manifests to the engine's view: a [`Snapshot`] of a scenario.

use std::sync::Arc;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::WellKnownLabels;
use karpenter_core::snapshot::{Snapshot, join_nodes};
use karpenter_fake::well_known_labels as fake_well_known_labels;

use super::{LoadError, Scenario, Sourced};

/// The objects of a list, without where they came from.
fn objects<T: Clone>(list: &[Sourced<T>]) -> Vec<T> {
    list.iter().map(|o| o.object.clone()).collect()
}

/// The objects of a list, moved out.
fn into_objects<T>(list: Vec<Sourced<T>>) -> Vec<T> {
    list.into_iter().map(|o| o.object).collect()
}

/// The instance types offered to each pool (the fake provider's rule: all to all).
fn per_pool(
    node_pools: &[karpenter_core::api::NodePool],
    instance_types: Vec<InstanceType>,
) -> std::collections::BTreeMap<String, Arc<[InstanceType]>> {
    let instance_types: Arc<[InstanceType]> = instance_types.into();
    node_pools
        .iter()
        .map(|pool| {
            let name = pool.name().unwrap_or_default().to_string();
            (name, Arc::clone(&instance_types))
        })
        .collect()
}

impl Scenario {
    /// The fake provider's instance types: every `InstanceType` document, in input
    /// order.
    pub fn fake_instance_types(&self) -> Result<Vec<InstanceType>, LoadError> {
        self.instance_types
            .iter()
            .map(|document| {
                document.to_instance_type().map_err(|e| {
                    let field = e.path().unwrap_or_default().to_string();
                    // The error's text starts with its path, which `field` already says.
                    let text = e.to_string();
                    let message = text
                        .strip_prefix(&format!("{field}: "))
                        .unwrap_or(&text)
                        .to_string();
                    LoadError::Invalid {
                        origin: document.source.clone(),
                        object: format!("InstanceType {}", document.name()),
                        field,
                        message,
                    }
                })
            })
            .collect()
    }

    /// The engine's view of the scenario, with `instance_types` offered to every
    /// NodePool and the labels they carry well known (the fake provider's rules).
    pub fn to_snapshot(&self, instance_types: Vec<InstanceType>) -> Snapshot {
        let well_known_labels = fake_well_known_labels(&instance_types);
        Snapshot {
            instance_types: per_pool(&objects(&self.node_pools), instance_types),
            node_pools: objects(&self.node_pools),
            nodes: join_nodes(objects(&self.nodes), objects(&self.node_claims)),
            pods: self
                .pods
                .iter()
                .map(|pod| Arc::clone(&pod.object))
                .collect(),
            daemon_sets: objects(&self.daemon_sets),
            pod_disruption_budgets: objects(&self.pod_disruption_budgets),
            persistent_volume_claims: objects(&self.persistent_volume_claims),
            persistent_volumes: objects(&self.persistent_volumes),
            storage_classes: objects(&self.storage_classes),
            well_known_labels,
            // The fake provider launches the cheapest; the Azure path sets its own.
            launch_rank: Default::default(),
            // Scenario files carry no provider verdicts: a drifted claim says
            // so with its `Drifted` condition.
            provider_drift: Default::default(),
        }
    }

    /// [`to_snapshot`](Self::to_snapshot), moving the objects instead of
    /// copying them (tens of thousands of pods are worth not copying).
    pub fn into_snapshot(self, instance_types: Vec<InstanceType>) -> Snapshot {
        let well_known_labels = fake_well_known_labels(&instance_types);
        let per_pool = per_pool(&objects(&self.node_pools), instance_types);
        self.into_snapshot_with(per_pool, well_known_labels)
    }

    /// The engine's view of the scenario with each pool's own instance types
    /// (a provider's rule) and the provider's well-known labels.
    pub fn into_snapshot_with(
        self,
        instance_types: std::collections::BTreeMap<String, Arc<[InstanceType]>>,
        well_known_labels: WellKnownLabels,
    ) -> Snapshot {
        let node_pools = into_objects(self.node_pools);
        Snapshot {
            instance_types,
            node_pools,
            nodes: join_nodes(into_objects(self.nodes), into_objects(self.node_claims)),
            // The scenario's own pods, shared: no pod is copied.
            pods: self.pods.into_iter().map(|pod| pod.object).collect(),
            daemon_sets: into_objects(self.daemon_sets),
            pod_disruption_budgets: into_objects(self.pod_disruption_budgets),
            persistent_volume_claims: into_objects(self.persistent_volume_claims),
            persistent_volumes: into_objects(self.persistent_volumes),
            storage_classes: into_objects(self.storage_classes),
            well_known_labels,
            // The fake provider launches the cheapest; the Azure path sets its own.
            launch_rank: Default::default(),
            // Scenario files carry no provider verdicts: a drifted claim says
            // so with its `Drifted` condition.
            provider_drift: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::LoadOptions;

    const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default}
spec:
  containers: [{name: app, resources: {requests: {cpu: 250m}}}]
"#;

    /// A snapshot points at the scenario's pods: 75,000 pods copied would be half a
    /// gigabyte more at the run's peak.
    #[test]
    fn snapshots_share_the_scenario_pods() {
        let scenario = Scenario::from_str("pod.yaml", POD, &LoadOptions::default()).unwrap();
        let snapshot = scenario.to_snapshot(Vec::new());
        assert!(Arc::ptr_eq(&snapshot.pods[0], &scenario.pods[0].object));
        let read = Arc::as_ptr(&scenario.pods[0].object);
        let snapshot = scenario.into_snapshot(Vec::new());
        assert_eq!(Arc::as_ptr(&snapshot.pods[0]), read);
    }
}
