//! [`JoinConfig`]: what a node needs to join the EKS cluster, and the user
//! data a launch template carries for it, from the claim-independent inputs
//! upstream's resolver gathers per template.

use std::collections::BTreeMap;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::Taint;
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::CloudProviderError;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY, label_domain,
};

use crate::launch::LaunchTemplate;
use crate::nodeclass::{AmiFamily, EC2NodeClass, KubeletConfiguration, MaxPods};
use crate::userdata::{UserDataInput, user_data_base64};

/// The cluster facts a node's user data joins it with, as upstream's
/// operator discovers them at start-up (`DescribeCluster` and the
/// `kube-dns` service).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JoinConfig {
    /// The API server endpoint, `https://...`.
    pub cluster_endpoint: String,
    /// The certificate authority bundle, base64 as EKS gives it.
    pub ca_bundle: Option<String>,
    /// The service CIDR (AL2023's `NodeConfig` needs it).
    pub cluster_cidr: Option<String>,
    /// The kube-dns service address: the kubelet's `clusterDNS` default;
    /// an IPv6 address makes the cluster IPv6.
    pub kube_dns_ip: Option<IpAddr>,
}

impl JoinConfig {
    /// Whether the cluster is IPv6, as upstream reads it from kube-dns.
    pub(super) fn ipv6(&self) -> bool {
        self.kube_dns_ip.is_some_and(|ip| ip.is_ipv6())
    }
}

/// Domains whose labels a kubelet may not set on its own node (the
/// NodeRestriction admission plugin), left out of the user data as
/// upstream's `RejectForbiddenLabels` does.
const FORBIDDEN_LABEL_DOMAINS: [&str; 2] = ["kubernetes.io", "k8s.io"];

/// The base64 user data of `template` for `claim` launched from `class`.
///
/// # Errors
///
/// A non-retryable [`CloudProviderError::Create`] naming the field when the
/// user data cannot be rendered (a broken `spec.userData`, a family not yet
/// supported, a cluster CIDR not yet known).
pub(super) fn template_user_data(
    join: &JoinConfig,
    cluster_name: &str,
    class: &EC2NodeClass,
    claim: &NodeClaim,
    template: &LaunchTemplate,
) -> Result<String, CloudProviderError> {
    // Upstream treats a class without a known family as Custom.
    let family = class.ami_family().unwrap_or(AmiFamily::Custom);
    let input = UserDataInput {
        family,
        cluster_name: cluster_name.to_owned(),
        cluster_endpoint: join.cluster_endpoint.clone(),
        ca_bundle: join.ca_bundle.clone(),
        cluster_cidr: join.cluster_cidr.clone(),
        kube_dns_ip: join.kube_dns_ip,
        kubelet: Some(template_kubelet(class, template)),
        labels: node_labels(family, claim, &template.capacity_type),
        taints: claim_taints(claim),
        custom_user_data: class.spec.user_data.clone(),
        instance_store_policy: class.spec.instance_store_policy.clone(),
        ami_version: class.alias().map(|alias| alias.version),
    };
    user_data_base64(&input).map_err(|e| CloudProviderError::Create {
        reason: "UserDataRenderFailed".to_owned(),
        message: format!(
            "rendering the user data of EC2NodeClass {:?}: {e}",
            class.name().unwrap_or_default()
        ),
        source: Some(Box::new(e)),
    })
}

/// The class's kubelet with what the template resolved: `maxPods` as the
/// template's count unless the class fixes one (an expression is replaced,
/// since bootstrap needs a number), and the reserved resources.
fn template_kubelet(class: &EC2NodeClass, template: &LaunchTemplate) -> KubeletConfiguration {
    let mut kubelet = class.spec.kubelet.clone().unwrap_or_default();
    if kubelet.max_pods.as_ref().and_then(MaxPods::count).is_none() {
        kubelet.max_pods = Some(MaxPods::Count(template.max_pods));
    }
    if !template.kube_reserved.is_empty() {
        kubelet.kube_reserved = Some(template.kube_reserved.clone());
    }
    if !template.system_reserved.is_empty() {
        kubelet.system_reserved = Some(template.system_reserved.clone());
    }
    kubelet
}

/// The node's labels as upstream passes them to bootstrap: the claim's,
/// the capacity type, `do-not-sync-taints` (all but Custom), without the
/// labels a kubelet may not set.
fn node_labels(
    family: AmiFamily,
    claim: &NodeClaim,
    capacity_type: &str,
) -> BTreeMap<String, String> {
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    labels.insert(CAPACITY_TYPE_LABEL_KEY.to_owned(), capacity_type.to_owned());
    if family != AmiFamily::Custom {
        labels.insert(
            NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY.to_owned(),
            "true".to_owned(),
        );
    }
    labels.retain(|key, _| !forbidden(key));
    labels
}

fn forbidden(key: &str) -> bool {
    let domain = label_domain(key);
    FORBIDDEN_LABEL_DOMAINS.iter().any(|restricted| {
        domain == *restricted
            || domain
                .strip_suffix(restricted)
                .is_some_and(|rest| rest.ends_with('.'))
    })
}

/// The claim's taints, then its startup taints.
fn claim_taints(claim: &NodeClaim) -> Vec<Taint> {
    let spec = &claim.spec;
    spec.taints
        .iter()
        .flatten()
        .chain(spec.startup_taints.iter().flatten())
        .cloned()
        .collect()
}
