//! A buffer's chunks as pods, as upstream's `BuildVirtualPods`
//! (`pkg/state/virtualpods/utilities.go`) makes them.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodSpec, PodStatus, PodTemplateSpec, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use crate::api::CapacityBuffer;
use crate::pods::unschedulable_condition;
use crate::pods::{PodInfo, PodInterner};

/// Marks a virtual pod (value `"true"`).
pub const VIRTUAL_POD_ANNOTATION: &str = "karpenter.sh/capacity-buffer-fake-pod";
/// The name of a virtual pod's buffer.
pub const BUFFER_NAME_ANNOTATION: &str = "karpenter.sh/capacity-buffer-name";
/// The namespace of a virtual pod's buffer.
pub const BUFFER_NAMESPACE_ANNOTATION: &str = "karpenter.sh/capacity-buffer-namespace";

/// `replicas` virtual pods of `buffer` from `template`: named
/// `capacity-buffer-<buffer>-<i>` (from 1) in the buffer's namespace, with
/// the template's labels (not its annotations) and its spec without a node,
/// without the volumes that claim storage (and their mounts), at the lowest
/// priority, unschedulable.
///
/// Upstream dates them when its cache builds them and takes buffers in map
/// order, so among pods of equal size the queue meets them after the real
/// pods and in no set order. Here they are dated at the end of time, so
/// they come after every real pod of their size, and their UIDs order them
/// by buffer (namespace, name) and chunk: the same plan every time.
pub(super) fn build(
    buffer: &CapacityBuffer,
    template: &PodTemplateSpec,
    replicas: u32,
    interner: &mut PodInterner,
) -> Vec<Arc<PodInfo>> {
    let namespace = buffer.namespace();
    let name = buffer.name().unwrap_or_default();
    let labels = template.metadata.as_ref().and_then(|m| m.labels.clone());
    let annotations = BTreeMap::from([
        (VIRTUAL_POD_ANNOTATION.to_owned(), "true".to_owned()),
        (BUFFER_NAME_ANNOTATION.to_owned(), name.to_owned()),
        (BUFFER_NAMESPACE_ANNOTATION.to_owned(), namespace.to_owned()),
    ]);
    let spec = template.spec.as_ref().map(sanitized);
    let status = PodStatus {
        conditions: Some(vec![unschedulable_condition()]),
        ..PodStatus::default()
    };
    (1..=replicas)
        .map(|i| {
            let pod = Pod {
                metadata: ObjectMeta {
                    name: Some(format!("capacity-buffer-{name}-{i}")),
                    namespace: Some(namespace.to_owned()),
                    uid: Some(format!("capacity-buffer/{namespace}/{name}/{i:010}")),
                    labels: labels.clone(),
                    annotations: Some(annotations.clone()),
                    creation_timestamp: Some(Time(Timestamp::MAX)),
                    ..ObjectMeta::default()
                },
                spec: spec.clone(),
                status: Some(status.clone()),
            };
            Arc::new(interner.pod_info(&pod))
        })
        .collect()
}

/// The template's spec as a virtual pod runs it (upstream's
/// `sanitizePodSpec`): no node; no volume that claims storage (a
/// PersistentVolumeClaim or an ephemeral volume) nor its mounts, since a
/// chunk binds no storage; the lowest priority.
fn sanitized(spec: &PodSpec) -> PodSpec {
    let mut spec = spec.clone();
    spec.node_name = None;
    spec.priority = Some(i32::MIN);
    let claims_storage = |v: &Volume| v.persistent_volume_claim.is_some() || v.ephemeral.is_some();
    let dropped: Vec<String> = spec
        .volumes
        .iter()
        .flatten()
        .filter(|v| claims_storage(v))
        .map(|v| v.name.clone())
        .collect();
    if dropped.is_empty() {
        return spec;
    }
    if let Some(volumes) = spec.volumes.as_mut() {
        volumes.retain(|v| !claims_storage(v));
    }
    let containers = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for container in containers {
        if let Some(mounts) = container.volume_mounts.as_mut() {
            mounts.retain(|m| !dropped.contains(&m.name));
        }
    }
    spec
}
