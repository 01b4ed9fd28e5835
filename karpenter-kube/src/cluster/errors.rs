//! How the API server's answers become [`ClusterError`]s.

use karpenter_core::cluster::ClusterError;

/// The HTTP status of an API error, if `error` is one.
pub(crate) fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Whether `error` is the API server's `404 Not Found`.
pub(crate) fn is_not_found(error: &kube::Error) -> bool {
    status_code(error) == Some(404)
}

/// Whether `error` is a `409 Conflict` on a stale `resourceVersion` (not a
/// taken name, which is `AlreadyExists`, also 409).
pub(crate) fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409 && status.reason != "AlreadyExists")
}

/// Whether `error` is `409 AlreadyExists`.
pub(crate) fn is_already_exists(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409 && status.reason == "AlreadyExists")
}

/// `error` as the engine sees it: the object named `kind` `name` not found,
/// already there, or a failed call that may pass (throttling, conflicts,
/// server errors, the network) or may not (refused, invalid).
pub(crate) fn cluster_error(kind: &'static str, name: &str, error: kube::Error) -> ClusterError {
    if is_not_found(&error) {
        return ClusterError::NotFound {
            kind,
            name: name.to_owned(),
        };
    }
    if is_already_exists(&error) {
        return ClusterError::AlreadyExists {
            kind,
            name: name.to_owned(),
        };
    }
    let retryable = match &error {
        kube::Error::Api(status) => matches!(status.code, 409 | 429 | 500..=599),
        // The connection, TLS, a body cut short: the next call may pass.
        kube::Error::HyperError(_)
        | kube::Error::Service(_)
        | kube::Error::ReadEvents(_)
        | kube::Error::HttpError(_) => true,
        _ => false,
    };
    ClusterError::Api {
        message: format!("{kind} {name}: {error}"),
        retryable,
        source: Some(Box::new(error)),
    }
}

/// A failed call that may pass later and has no client error behind it.
pub(crate) fn retryable(message: String) -> ClusterError {
    ClusterError::Api {
        message,
        retryable: true,
        source: None,
    }
}

/// Whether `error` is the Eviction API's refusal for a PodDisruptionBudget:
/// `429 Too Many Requests` with a `DisruptionBudget` cause (a 429 from the
/// API server's own throttling has none, and is retried as any throttling).
pub(crate) fn is_budget_refusal(error: &kube::Error) -> bool {
    let kube::Error::Api(status) = error else {
        return false;
    };
    status.code == 429
        && (status
            .details
            .as_ref()
            .is_some_and(|d| d.causes.iter().any(|c| c.reason == "DisruptionBudget"))
            || status.message.contains("disruption budget"))
}
