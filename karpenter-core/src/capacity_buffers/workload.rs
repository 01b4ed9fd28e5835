//! The workloads a buffer's `scalableRef` may name.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

/// A Deployment, StatefulSet or ReplicaSet as a buffer's `scalableRef`
/// reads it: its pod template and its desired replicas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalableWorkload {
    /// The API group (`apps`).
    pub api_group: String,
    /// `Deployment`, `StatefulSet` or `ReplicaSet`.
    pub kind: String,
    /// The namespace (`default` when unset).
    pub namespace: String,
    /// The name.
    pub name: String,
    /// `spec.replicas` (absent reads as 1, as upstream).
    pub replicas: Option<i32>,
    /// `spec.template`.
    pub template: PodTemplateSpec,
}

impl ScalableWorkload {
    fn apps(
        kind: &str,
        metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        replicas: Option<i32>,
        template: Option<&PodTemplateSpec>,
    ) -> ScalableWorkload {
        ScalableWorkload {
            api_group: "apps".to_owned(),
            kind: kind.to_owned(),
            namespace: metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned()),
            name: metadata.name.clone().unwrap_or_default(),
            replicas,
            template: template.cloned().unwrap_or_default(),
        }
    }

    /// The replicas a buffer's `percentage` is taken of: `spec.replicas`, 1
    /// when absent.
    pub fn desired_replicas(&self) -> i32 {
        self.replicas.unwrap_or(1)
    }
}

impl From<&Deployment> for ScalableWorkload {
    fn from(d: &Deployment) -> Self {
        ScalableWorkload::apps(
            "Deployment",
            &d.metadata,
            d.spec.replicas,
            Some(&d.spec.template),
        )
    }
}

impl From<&StatefulSet> for ScalableWorkload {
    fn from(s: &StatefulSet) -> Self {
        ScalableWorkload::apps(
            "StatefulSet",
            &s.metadata,
            s.spec.replicas,
            Some(&s.spec.template),
        )
    }
}

impl From<&ReplicaSet> for ScalableWorkload {
    fn from(r: &ReplicaSet) -> Self {
        ScalableWorkload::apps(
            "ReplicaSet",
            &r.metadata,
            r.spec.replicas,
            r.spec.template.as_ref(),
        )
    }
}
