//! Documents behind upstream's feature gates: a document of a gated kind
//! whose gate is off is skipped with a warning naming the gate, as upstream
//! ignores such objects while the gate is off.

use karpenter_core::features::{FeatureGate, FeatureGates};

use super::document::Object;

/// The gate `object` needs, if any.
fn gate_of(object: &Object) -> Option<FeatureGate> {
    match object {
        Object::NodePool(pool) if pool.spec.is_static() => Some(FeatureGate::StaticCapacity),
        Object::NodeOverlay(_) => Some(FeatureGate::NodeOverlay),
        // The PodTemplates and workloads a buffer names are read whatever
        // the gate says: they are ordinary objects of the cluster.
        Object::CapacityBuffer(_) => Some(FeatureGate::CapacityBuffer),
        _ => None,
    }
}

/// Why `object` is skipped under `gates`: `None` when it is read.
pub(super) fn skipped(object: &Object, gates: FeatureGates) -> Option<String> {
    let gate = gate_of(object).filter(|gate| !gates.is_on(*gate))?;
    let kind = object.kind();
    let what = match object {
        Object::NodePool(pool) => format!(
            "static {kind} {} (spec.replicas)",
            pool.metadata.name.as_deref().unwrap_or("")
        ),
        Object::NodeOverlay(overlay) => {
            format!("{kind} {}", overlay.metadata.name.as_deref().unwrap_or(""))
        }
        Object::CapacityBuffer(buffer) => format!(
            "{kind} {}/{}",
            buffer.namespace(),
            buffer.metadata.name.as_deref().unwrap_or("")
        ),
        _ => kind.to_string(),
    };
    Some(format!(
        "skipped {} {what}: the {gate} feature gate is off (--feature-gates {gate}=true)",
        kind.api_version()
    ))
}
