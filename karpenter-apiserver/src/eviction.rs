//! The Eviction subresource of Pods: refused with 429 when a
//! PodDisruptionBudget does not allow it, a deletion otherwise.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};

use crate::selector::{Filter, selects};
use crate::status::ApiError;
use crate::store::{Preconditions, ResourceId, Store, Write, meta};

/// Evicts a pod: checks its namespace's PodDisruptionBudgets as
/// `karpenter_core::cluster::eviction_refused` does, takes one disruption
/// off the budget that selects it, and deletes it (finalizers honoured).
pub(crate) fn evict(
    store: &mut Store,
    pods: ResourceId,
    namespace: &str,
    name: &str,
    eviction: &Value,
) -> Result<(), ApiError> {
    if let Some(sent) = meta(eviction, "name").filter(|sent| *sent != name) {
        return Err(ApiError::bad_request(format!(
            "name in URL does not match name in Eviction object: {sent} != {name}"
        )));
    }
    let pod_value = store.get(pods, Some(namespace), name)?.clone();
    let budgets_id = store.resource("policy", "poddisruptionbudgets");
    let filter = Filter {
        namespace: Some(namespace.to_owned()),
        ..Filter::default()
    };
    let budget_values = budgets_id.map_or_else(Vec::new, |id| store.list(id, &filter));
    let labels = pod_value
        .pointer("/metadata/labels")
        .and_then(Value::as_object);
    let selecting: Vec<&Value> = budget_values
        .iter()
        .filter(|budget| selects(budget.pointer("/spec/selector"), labels))
        .collect();
    if selecting.len() > 1 {
        return Err(ApiError::new(
            500,
            "InternalError",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    let budgets: Vec<PodDisruptionBudget> = budget_values
        .iter()
        .filter_map(|value| serde_json::from_value(value.clone()).ok())
        .collect();
    let pod: Pod = serde_json::from_value(pod_value.clone()).map_err(|error| {
        ApiError::new(500, "InternalError", format!("reading the pod: {error}"))
    })?;
    if karpenter_core::cluster::eviction_refused(&budgets, &pod) {
        let budget = selecting.first().copied().unwrap_or(&Value::Null);
        let count = |field: &str| {
            budget
                .pointer(&format!("/status/{field}"))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        let message = format!(
            "The disruption budget {} needs {} healthy pods and has {} currently",
            meta(budget, "name").unwrap_or_default(),
            count("desiredHealthy"),
            count("currentHealthy"),
        );
        return Err(ApiError::new(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        )
        .with_details(json!({ "causes": [{
            "reason": "DisruptionBudget",
            "message": message,
        }] })));
    }
    if let (Some(id), Some(budget)) = (budgets_id, selecting.first()) {
        let allowed = budget
            .pointer("/status/disruptionsAllowed")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if allowed > 0 {
            let mut budget = (*budget).clone();
            budget["status"]["disruptionsAllowed"] = (allowed - 1).into();
            let budget_name = meta(&budget, "name").unwrap_or_default().to_owned();
            store.update(
                id,
                Some(namespace),
                &budget_name,
                budget,
                Write::Whole,
                false,
            )?;
        }
    }
    let options = eviction.get("deleteOptions").unwrap_or(&Value::Null);
    store.delete(pods, Some(namespace), name, &Preconditions::of(options))?;
    Ok(())
}
