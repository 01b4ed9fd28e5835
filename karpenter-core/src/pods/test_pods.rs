//! Pods for the tests of the pod rules and the planners that use them.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// The moment the tests judge pods at.
pub(crate) const NOW: &str = "2024-05-01T12:00:00Z";

/// Reads a pod written as JSON.
pub(crate) fn pod(value: Value) -> Pod {
    serde_json::from_value(value).expect("a valid pod")
}

/// A running pod `default/<name>`, started at `started`.
pub(crate) fn running(name: &str, started: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": "default"},
        "status": {"phase": "Running", "startTime": started},
    })
}

/// The pod with one annotation.
pub(crate) fn annotated(mut value: Value, key: &str, annotation: &str) -> Pod {
    value["metadata"]["annotations"] = json!({ key: annotation });
    pod(value)
}

/// A running pod `default/p` owned by a `kind` of `api_version`.
pub(crate) fn owned_by(api_version: &str, kind: &str) -> Value {
    json!({
        "metadata": {
            "name": "p", "namespace": "default",
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u"}],
        },
        "status": {"phase": "Running"},
    })
}

/// Reads a timestamp.
pub(crate) fn at(text: &str) -> Timestamp {
    text.parse().expect("a valid timestamp")
}
