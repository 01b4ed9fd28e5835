//! What upstream's buffer controller works out for a buffer
//! (`pkg/controllers/capacitybuffer/controller.go`, `helpers.go`,
//! `pkg/utils/apps/resolve.go`): the template its reference names, and how
//! many chunks it wants.

use k8s_openapi::api::core::v1::{PodSpec, PodTemplate, PodTemplateSpec};

use super::workload::ScalableWorkload;
use super::{BufferState, Readiness};
use crate::api::CapacityBuffer;
use crate::resources::{ResourceList, pod_requests};

/// The kinds a `scalableRef` may name (group `apps`).
const SCALABLE_KINDS: [&str; 3] = ["Deployment", "StatefulSet", "ReplicaSet"];

/// What `buffer` resolves to, and its template when found. A
/// `podTemplateRef` is looked at first, as upstream.
pub(super) fn resolve<'a>(
    buffer: &CapacityBuffer,
    pod_templates: &'a [PodTemplate],
    workloads: &'a [ScalableWorkload],
) -> (BufferState, Option<&'a PodTemplateSpec>) {
    let namespace = buffer.namespace();
    let key = format!("{namespace}/{}", buffer.name().unwrap_or_default());
    let spec = &buffer.spec;
    let unresolved = |readiness: Readiness| {
        let state = BufferState {
            key: key.clone(),
            readiness,
            replicas: 0,
        };
        (state, None)
    };
    let (template, workload_replicas) = if let Some(reference) = &spec.pod_template_ref {
        let found = pod_templates.iter().find(|t| {
            t.metadata.name.as_deref() == Some(reference.name.as_str())
                && t.metadata.namespace.as_deref().unwrap_or("default") == namespace
        });
        match found {
            Some(t) => (t.template.as_ref(), None),
            None => {
                return unresolved(Readiness::PodTemplateNotFound {
                    name: reference.name.clone(),
                });
            }
        }
    } else if let Some(reference) = &spec.scalable_ref {
        let group = if reference.api_group.is_empty() {
            "apps"
        } else {
            reference.api_group.as_str()
        };
        if group != "apps" {
            return unresolved(Readiness::ResolutionFailed {
                message: format!(
                    "unsupported scalableRef API group {:?}",
                    reference.api_group
                ),
            });
        }
        if !SCALABLE_KINDS.contains(&reference.kind.as_str()) {
            return unresolved(Readiness::ResolutionFailed {
                message: format!("unsupported scalableRef kind {:?}", reference.kind),
            });
        }
        let found = workloads.iter().find(|w| {
            w.api_group == group
                && w.kind == reference.kind
                && w.namespace == namespace
                && w.name == reference.name
        });
        match found {
            Some(w) => (Some(&w.template), Some(w.desired_replicas())),
            None => {
                return unresolved(Readiness::ScalableRefNotFound {
                    kind: reference.kind.clone(),
                    name: reference.name.clone(),
                });
            }
        }
    } else {
        return unresolved(Readiness::ResolutionFailed {
            message: format!("buffer {key:?} has neither podTemplateRef nor scalableRef in spec"),
        });
    };
    // A PodTemplate without `template` resolves to an empty pod, as
    // upstream's zero value.
    let pod_spec = template.and_then(|t| t.spec.as_ref());
    let percentage = workload_replicas.and_then(|w| Some(percentage_replicas(w, spec.percentage?)));
    let replicas = chunk_count(buffer, percentage, pod_spec);
    let state = BufferState {
        key,
        readiness: Readiness::Resolved,
        replicas,
    };
    (state, template)
}

/// `ceil(workload × percentage / 100)`, at least 1 when both are positive
/// (upstream's `calculatePercentageReplicas`); `None` when the workload has
/// no replicas (upstream then has no percentage candidate).
fn percentage_replicas(workload: i32, percentage: i32) -> Option<i64> {
    if workload <= 0 {
        return None;
    }
    let product = i64::from(workload) * i64::from(percentage);
    let replicas = product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0);
    Some(if percentage > 0 {
        replicas.max(1)
    } else {
        replicas
    })
}

/// The chunks a resolved buffer wants (upstream's `computeReplicas`): the
/// larger of `replicas` and the percentage's count, capped by what fits in
/// `limits`; with neither count, what fits in `limits` alone. Limits that
/// share no requested resource with the template do not count.
fn chunk_count(
    buffer: &CapacityBuffer,
    percentage: Option<Option<i64>>,
    pod_spec: Option<&PodSpec>,
) -> u32 {
    let candidates = percentage
        .flatten()
        .into_iter()
        .chain(buffer.spec.replicas.map(i64::from));
    let desired = candidates.max();
    let limited = buffer
        .spec
        .limits
        .as_ref()
        .zip(pod_spec)
        .and_then(|(limits, spec)| limit_replicas(limits.as_map(), spec));
    let count = match (desired, limited) {
        (Some(desired), Some(limited)) => desired.min(limited),
        (None, Some(limited)) => limited,
        (Some(desired), None) => desired,
        (None, None) => 0,
    };
    u32::try_from(count.clamp(0, i64::from(i32::MAX))).unwrap_or(0)
}

/// How many pods of `spec` fit in `limits`: the least, over the resources
/// both name, of limit ÷ request rounded down; `None` when they share none
/// (upstream's `calculateLimitReplicas`).
fn limit_replicas(
    limits: &std::collections::BTreeMap<
        String,
        k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    >,
    spec: &PodSpec,
) -> Option<i64> {
    let mut requests = pod_requests(spec).ok()?;
    // The pod slot is the scheduler's, not a request of the template's.
    requests.set(crate::resources::PODS, 0);
    let limits = ResourceList::from_quantities(limits).ok()?;
    limits
        .iter()
        .filter_map(|(name, limit)| {
            let request = requests.get(name);
            (request > 0).then(|| limit.div_euclid(request))
        })
        .min()
}
