//! From manifests to the engine's view: a [`Snapshot`] of a scenario.

use std::sync::Arc;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::WellKnownLabels;
use karpenter_core::snapshot::{Snapshot, join_nodes};
use karpenter_fake::well_known_labels as fake_well_known_labels;

use karpenter_core::api::{CapacityBuffer, NodeOverlay};
use karpenter_core::capacity_buffers::{CapacityBuffers, Readiness, ScalableWorkload};
use karpenter_core::overlay;

use super::error::message_after_field;
use super::{LoadError, Scenario, Source, Sourced, Warning};

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

/// The scenario's CapacityBuffers resolved against its PodTemplates and
/// workloads (nothing is copied when there is no buffer).
fn capacity_buffers(scenario: &Scenario) -> CapacityBuffers {
    if scenario.capacity_buffers.is_empty() {
        return CapacityBuffers::default();
    }
    let deployments = scenario.deployments.iter().map(|d| (&d.object).into());
    let stateful_sets = scenario.stateful_sets.iter().map(|s| (&s.object).into());
    let replica_sets = scenario.replica_sets.iter().map(|r| (&r.object).into());
    let workloads: Vec<ScalableWorkload> = deployments
        .chain(stateful_sets)
        .chain(replica_sets)
        .collect();
    CapacityBuffers::new(
        objects(&scenario.capacity_buffers),
        objects(&scenario.pod_templates),
        workloads,
    )
}

/// `namespace/name` of a buffer, as its resolved state names it.
fn buffer_key(buffer: &CapacityBuffer) -> String {
    format!(
        "{}/{}",
        buffer.namespace(),
        buffer.name().unwrap_or_default()
    )
}

/// A warning for each buffer that did not resolve (its template or workload
/// not found, or a reference that cannot be resolved), in input order, each
/// naming the document of the buffer (`sources`, by the buffer's key). A
/// buffer resolved to no chunks is no warning: upstream keeps it silently
/// empty.
fn unresolved_buffers(buffers: &CapacityBuffers, sources: &[(String, Source)]) -> Vec<Warning> {
    let states = buffers.states();
    sources
        .iter()
        .filter_map(|(key, source)| {
            let state = states.iter().find(|s| s.key == *key)?;
            (state.readiness != Readiness::Resolved).then(|| Warning {
                source: source.clone(),
                message: format!(
                    "capacity buffer {}: {}; it keeps no room",
                    state.key, state.readiness
                ),
            })
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
                    let message = message_after_field(&e.to_string(), &field);
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
    /// the NodeOverlays applied to them and the CapacityBuffers resolved (an
    /// overlay not applied, or a buffer not resolved, is left out silently:
    /// [`into_snapshot_and_warnings`](Self::into_snapshot_and_warnings) says
    /// why).
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
            namespaces: objects(&self.namespaces),
            capacity_buffers: capacity_buffers(self),
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
    /// same weight) and each CapacityBuffer not resolved (what it names is
    /// not in its namespace, or cannot be named).
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
    /// each NodeOverlay not applied and each CapacityBuffer not resolved.
    pub(super) fn snapshot_and_warnings(
        self,
        instance_types: std::collections::BTreeMap<String, Arc<[InstanceType]>>,
        well_known_labels: WellKnownLabels,
    ) -> (Snapshot, Vec<Warning>) {
        let capacity_buffers = capacity_buffers(&self);
        let buffer_sources: Vec<(String, Source)> = (self.capacity_buffers.iter())
            .map(|buffer| (buffer_key(&buffer.object), buffer.source.clone()))
            .collect();
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
            namespaces: into_objects(self.namespaces),
            capacity_buffers,
            well_known_labels,
            // The fake provider launches the cheapest; the Azure path sets its own.
            launch_rank: Default::default(),
            // Scenario files carry no provider verdicts: a drifted claim says
            // so with its `Drifted` condition.
            provider_drift: Default::default(),
        };
        let mut warnings = overlaid(&mut snapshot, &self.node_overlays);
        warnings.extend(unresolved_buffers(
            &snapshot.capacity_buffers,
            &buffer_sources,
        ));
        (snapshot, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LoadOptions;

    const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default}
spec:
  containers: [{name: app, resources: {requests: {cpu: 250m}}}]
"#;

    fn buffers_on() -> LoadOptions {
        use karpenter_core::features::{FeatureGate, FeatureGates};
        let gates = FeatureGates::UPSTREAM.with(FeatureGate::CapacityBuffer, true);
        LoadOptions::default().with_feature_gates(gates)
    }

    /// A CapacityBuffer `shop/<name>` with `spec` (a flow map body).
    fn buffer(name: &str, spec: &str) -> String {
        format!(
            "---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n\
             metadata: {{name: {name}, namespace: shop}}\nspec: {{{spec}}}\n"
        )
    }

    const TEMPLATE: &str = "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: chunk, namespace: shop}\n\
        template:\n  spec:\n    containers: [{name: pause, resources: {requests: {cpu: '1'}}}]\n";

    const DEPLOYMENT: &str = "---\napiVersion: apps/v1\nkind: Deployment\n\
        metadata: {name: web, namespace: shop}\n\
        spec:\n  replicas: 10\n  selector: {matchLabels: {app: web}}\n  template:\n    \
        spec:\n      containers: [{name: app, resources: {requests: {cpu: 500m}}}]\n";

    /// Buffers are resolved against the scenario's PodTemplates and workloads
    /// in both snapshots; one that does not resolve is a warning naming its
    /// document, one resolved to no chunks is none.
    #[test]
    fn buffers_are_resolved_and_the_unresolved_ones_said() {
        let mut text = format!("{TEMPLATE}{DEPLOYMENT}");
        for (name, spec) in [
            ("template", "podTemplateRef: {name: chunk}, replicas: 2"),
            (
                "workload",
                "scalableRef: {kind: Deployment, name: web}, percentage: 25",
            ),
            ("empty", "podTemplateRef: {name: chunk}, replicas: 0"),
            ("missing", "podTemplateRef: {name: absent}, replicas: 1"),
            (
                "elsewhere",
                "scalableRef: {kind: StatefulSet, name: web}, replicas: 1",
            ),
            ("neither", "replicas: 1"),
        ] {
            text.push_str(&buffer(name, spec));
        }
        let scenario = Scenario::from_str("buffers.yaml", &text, &buffers_on()).unwrap();
        assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
        let chunks = |snapshot: &Snapshot| -> Vec<(String, u32, bool)> {
            let states = snapshot.capacity_buffers.states();
            (states.iter())
                .map(|s| {
                    (
                        s.key.clone(),
                        s.replicas,
                        s.readiness == Readiness::Resolved,
                    )
                })
                .collect()
        };
        // By namespace and name; the warnings below in input order.
        let expected = [
            ("shop/elsewhere", 0, false),
            ("shop/empty", 0, true),
            ("shop/missing", 0, false),
            ("shop/neither", 0, false),
            ("shop/template", 2, true),
            ("shop/workload", 3, true),
        ]
        .map(|(key, replicas, resolved)| (key.to_string(), replicas, resolved));
        assert_eq!(chunks(&scenario.to_snapshot(Vec::new())), expected);
        let (snapshot, warnings) = scenario.into_snapshot_and_warnings(Vec::new());
        assert_eq!(chunks(&snapshot), expected);
        assert_eq!(snapshot.capacity_buffers.virtual_pod_count(), 5);
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "buffers.yaml, document 6: capacity buffer shop/missing: PodTemplate \"absent\" \
                 not found in its namespace; it keeps no room",
                "buffers.yaml, document 7: capacity buffer shop/elsewhere: StatefulSet \"web\" \
                 not found in its namespace; it keeps no room",
                "buffers.yaml, document 8: capacity buffer shop/neither: buffer \"shop/neither\" \
                 has neither podTemplateRef nor scalableRef in spec; it keeps no room",
            ]
        );
    }

    /// Only a template in the buffer's own namespace counts.
    #[test]
    fn a_template_in_another_namespace_is_not_found() {
        let text = format!(
            "{}{}",
            TEMPLATE.replace("namespace: shop", "namespace: other"),
            buffer("headroom", "podTemplateRef: {name: chunk}, replicas: 1")
        );
        let scenario = Scenario::from_str("ns.yaml", &text, &buffers_on()).unwrap();
        let (snapshot, warnings) = scenario.into_snapshot_and_warnings(Vec::new());
        assert_eq!(snapshot.capacity_buffers.virtual_pod_count(), 0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].source.document, 2);
        assert!(
            warnings[0]
                .message
                .contains("shop/headroom: PodTemplate \"chunk\"")
        );
    }

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
