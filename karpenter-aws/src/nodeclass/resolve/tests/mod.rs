//! Tests of the status resolution, with upstream's controller and
//! provider test cases as expected values.

mod alias;
mod filters;
mod images;
mod placement;
mod reservations;
mod status;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::ResolveContext;
use crate::nodeclass::EC2NodeClass;

/// A class named `default` with `spec` merged over a role and one tag
/// term per selector.
fn class(spec: Value) -> EC2NodeClass {
    let mut base = json!({
        "role": "KarpenterNodeRole-test",
        "subnetSelectorTerms": [{"tags": {"*": "*"}}],
        "securityGroupSelectorTerms": [{"tags": {"*": "*"}}],
        "amiFamily": "Custom",
        "amiSelectorTerms": [{"tags": {"*": "*"}}],
    });
    if let (Some(base), Some(spec)) = (base.as_object_mut(), spec.as_object()) {
        for (key, value) in spec {
            base.insert(key.clone(), value.clone());
        }
    }
    let class = json!({"metadata": {
        "name": "default", "uid": "uid-1", "generation": 3,
        "creationTimestamp": "2024-05-01T00:00:00Z",
    }, "spec": base});
    serde_json::from_value(class).unwrap_or_else(|e| panic!("test class: {e}"))
}

/// A fixed clock.
fn now() -> Timestamp {
    "2024-06-01T12:00:00Z"
        .parse()
        .unwrap_or_else(|e| panic!("test time: {e}"))
}

/// The context upstream's tests run with: Kubernetes 1.31 in us-west-2.
fn context() -> ResolveContext {
    ResolveContext {
        cluster_name: "test-cluster".into(),
        region: "us-west-2".into(),
        kubernetes_version: "1.31".into(),
        now: now(),
        ..ResolveContext::default()
    }
}
