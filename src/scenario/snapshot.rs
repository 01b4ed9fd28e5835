//! From manifests to the engine's view: a [`Snapshot`] of a scenario.

use std::sync::Arc;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::WellKnownLabels;
use karpenter_core::snapshot::{Snapshot, join_nodes};
use karpenter_fake::well_known_labels as fake_well_known_labels;

use karpenter_core::api::NodeOverlay;
use karpenter_core::overlay;

use super::{LoadError, Scenario, Sourced, Warning};

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

/// `snapshot` with `overlays` applied to its instance types, and a warning
/// for each overlay not applied (invalid, or in conflict with another).
fn overlaid(snapshot: &mut Snapshot, overlays: &[Sourced<NodeOverlay>]) -> Vec<Warning> {
    if overlays.is_empty() {
        return Vec::new();
    }
    let objects: Vec<NodeOverlay> = objects(overlays);
    overlay::apply(snapshot, &objects)
        .into_iter()
        .zip(overlays)
        .filter(|(outcome, _)| !outcome.verdict.is_applied())
        .map(|(outcome, overlay)| Warning {
            source: overlay.source.clone(),
            message: format!("NodeOverlay {} {}", outcome.name, outcome.verdict),
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
    /// NodePool and the labels they carry well known (the fake provider's rules),
    /// and the NodeOverlays applied to them (an overlay not applied is left
    /// out silently: [`into_snapshot_and_warnings`](Self::into_snapshot_and_warnings)
    /// says why).
    pub fn to_snapshot(&self, instance_types: Vec<InstanceType>) -> Snapshot {
        let well_known_labels = fake_well_known_labels(&instance_types);
        let mut snapshot = Snapshot {
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
            csi_nodes: objects(&self.csi_nodes),
            well_known_labels,
            // The fake provider launches the cheapest; the Azure path sets its own.
            launch_rank: Default::default(),
            // Scenario files carry no provider verdicts: a drifted claim says
            // so with its `Drifted` condition.
            provider_drift: Default::default(),
        };
        overlaid(&mut snapshot, &self.node_overlays);
        snapshot
    }

    /// [`to_snapshot`](Self::to_snapshot), moving the objects instead of
    /// copying them (tens of thousands of pods are worth not copying).
    pub fn into_snapshot(self, instance_types: Vec<InstanceType>) -> Snapshot {
        self.into_snapshot_and_warnings(instance_types).0
    }

    /// [`into_snapshot`](Self::into_snapshot), with a warning for each
    /// NodeOverlay not applied (invalid, or in conflict with another of the
    /// same weight).
    pub fn into_snapshot_and_warnings(
        self,
        instance_types: Vec<InstanceType>,
    ) -> (Snapshot, Vec<Warning>) {
        let well_known_labels = fake_well_known_labels(&instance_types);
        let per_pool = per_pool(&objects(&self.node_pools), instance_types);
        self.snapshot_and_warnings(per_pool, well_known_labels)
    }

    /// The engine's view of the scenario with each pool's own instance types
    /// (a provider's rule) and the provider's well-known labels, the
    /// NodeOverlays applied to them.
    pub fn into_snapshot_with(
        self,
        instance_types: std::collections::BTreeMap<String, Arc<[InstanceType]>>,
        well_known_labels: WellKnownLabels,
    ) -> Snapshot {
        self.snapshot_and_warnings(instance_types, well_known_labels)
            .0
    }

    /// [`into_snapshot_with`](Self::into_snapshot_with), and a warning for
    /// each NodeOverlay not applied.
    pub(super) fn snapshot_and_warnings(
        self,
        instance_types: std::collections::BTreeMap<String, Arc<[InstanceType]>>,
        well_known_labels: WellKnownLabels,
    ) -> (Snapshot, Vec<Warning>) {
        let node_pools = into_objects(self.node_pools);
        let mut snapshot = Snapshot {
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
            csi_nodes: into_objects(self.csi_nodes),
            well_known_labels,
            // The fake provider launches the cheapest; the Azure path sets its own.
            launch_rank: Default::default(),
            // Scenario files carry no provider verdicts: a drifted claim says
            // so with its `Drifted` condition.
            provider_drift: Default::default(),
        };
        let warnings = overlaid(&mut snapshot, &self.node_overlays);
        (snapshot, warnings)
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
