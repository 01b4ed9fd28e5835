//! A pod's effective resource requests, computed the way Kubernetes'
//! scheduler does (`k8s.io/component-helpers/resource.PodRequests`, with
//! sidecar containers), plus the one pod slot it occupies.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::list::{PODS, ResourceList};
use super::quantity::{QuantityError, QuantityErrorKind, milli_value};

/// What the scheduler must reserve for a pod with this spec.
///
/// 1. Each container's requests; a resource with a limit but no request
///    takes the limit, as API-server defaulting would have done for a
///    manifest that never went through it.
/// 2. Regular containers are summed.
/// 3. Init containers run in order. A restartable one (`restartPolicy:
///    Always`, a sidecar) keeps running: it joins the running sum and the sum
///    of sidecars started so far. A normal init container needs its own
///    requests plus the sidecars started before it; a sidecar, while
///    starting, needs all sidecars up to and including itself.
/// 4. The pod needs the element-wise maximum of the running sum and the
///    largest of those init-phase needs.
/// 5. Pod-level `spec.resources.requests`, for the resources Kubernetes
///    supports there (`cpu`, `memory`, `hugepages-*`), replace that aggregate.
/// 6. `spec.overhead` is added, after the pod-level replacement, as
///    Kubernetes does: overhead is never part of the pod-level budget.
/// 7. `pods: 1` is added: the pod takes one of the node's pod slots.
///
/// Errors name the field, e.g.
/// `spec.initContainers[1].resources.requests.memory: invalid quantity "12Q": unknown suffix "Q"`.
/// A total that leaves the `i64` milli range is an error too
/// ([`QuantityErrorKind::TotalOutOfRange`]), naming the quantity that tipped it.
///
/// ```
/// use k8s_openapi::api::core::v1::PodSpec;
/// use karpenter_core::resources::pod_requests;
///
/// let spec: PodSpec = serde_json::from_value(serde_json::json!({
///     "containers": [
///         {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
///         {"name": "log", "resources": {"limits": {"cpu": "250m"}}},
///     ],
/// }))
/// .unwrap();
/// let requests = pod_requests(&spec).unwrap();
/// assert_eq!(requests.get("cpu"), 1250);
/// assert_eq!(requests.get("memory"), (1 << 30) * 1000);
/// assert_eq!(requests.get("pods"), 1000);
/// ```
pub fn pod_requests(spec: &PodSpec) -> Result<ResourceList, QuantityError> {
    let mut running = ResourceList::new();
    for (i, container) in spec.containers.iter().enumerate() {
        let path = || format!("spec.containers[{i}]");
        let requests = container_requests(container, path)?;
        running = add(&running, &requests, |name| {
            container_source(container, name, path)
        })?;
    }

    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let path = || format!("spec.initContainers[{i}]");
        let requests = container_requests(container, path)?;
        let blame = |name: &str| container_source(container, name, path);
        let need = if container.restart_policy.as_deref() == Some("Always") {
            running = add(&running, &requests, blame)?;
            sidecars = add(&sidecars, &requests, blame)?;
            sidecars.clone()
        } else {
            add(&requests, &sidecars, blame)?
        };
        init_peak = init_peak.max(&need);
    }
    let mut total = running.max(&init_peak);

    let pod_level = spec.resources.as_ref().and_then(|r| r.requests.as_ref());
    for (name, quantity) in pod_level.into_iter().flatten() {
        if supports_pod_level(name) {
            let milli = milli_value(quantity)
                .map_err(|e| e.within(&format!("spec.resources.requests.{name}")))?;
            total.set(name, milli);
        }
    }

    if let Some(overhead) = &spec.overhead {
        let parsed =
            ResourceList::from_quantities(overhead).map_err(|e| e.within("spec.overhead"))?;
        total = add(&total, &parsed, |name| {
            source(overhead, name, || "spec.overhead".to_owned())
        })?;
    }

    let mut one_pod = ResourceList::new();
    one_pod.set(PODS, 1000);
    add(&total, &one_pod, |_| Source {
        path: "spec".to_owned(),
        text: "1".to_owned(),
    })
}

/// One container's requests, each missing request defaulted to its limit.
fn container_requests(
    container: &Container,
    path: impl Fn() -> String,
) -> Result<ResourceList, QuantityError> {
    let Some(resources) = &container.resources else {
        return Ok(ResourceList::new());
    };
    let requests = resources.requests.as_ref();
    let mut list = match requests {
        Some(map) => ResourceList::from_quantities(map)
            .map_err(|e| e.within(&format!("{}.resources.requests", path())))?,
        None => ResourceList::new(),
    };
    for (name, limit) in resources.limits.iter().flatten() {
        if requests.is_some_and(|r| r.contains_key(name)) {
            continue;
        }
        let milli = milli_value(limit)
            .map_err(|e| e.within(&format!("{}.resources.limits.{name}", path())))?;
        list.set(name, milli);
    }
    Ok(list)
}

/// Resources Kubernetes lets `spec.resources` set for the whole pod.
fn supports_pod_level(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

/// The field a resource amount was written in: its path and its text.
struct Source {
    path: String,
    text: String,
}

/// `a + b`, or an error blaming the field that `blame(resource)` names for
/// the first resource whose total overflows.
fn add(
    a: &ResourceList,
    b: &ResourceList,
    blame: impl Fn(&str) -> Source,
) -> Result<ResourceList, QuantityError> {
    a.combine(b, |name, x, y| {
        x.checked_add(y).ok_or_else(|| {
            let Source { path, text } = blame(name);
            let kind = QuantityErrorKind::TotalOutOfRange {
                resource: name.to_owned(),
            };
            QuantityError::new(text, kind).within(&path)
        })
    })
}

/// The field that set `name` for `container`: its request, else its limit.
fn container_source(container: &Container, name: &str, path: impl Fn() -> String) -> Source {
    let resources = container.resources.as_ref();
    let requests = resources.and_then(|r| r.requests.as_ref());
    match requests.filter(|r| r.contains_key(name)) {
        Some(requests) => source(requests, name, || format!("{}.resources.requests", path())),
        None => {
            let limits = resources.and_then(|r| r.limits.as_ref());
            let empty = BTreeMap::new();
            source(limits.unwrap_or(&empty), name, || {
                format!("{}.resources.limits", path())
            })
        }
    }
}

/// Where `name` is written in a quantity map under `parent`.
fn source(map: &BTreeMap<String, Quantity>, name: &str, parent: impl Fn() -> String) -> Source {
    Source {
        path: format!("{}.{name}", parent()),
        text: map.get(name).map(|q| q.0.clone()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests;
