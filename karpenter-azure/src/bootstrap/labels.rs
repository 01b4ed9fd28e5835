//! The labels a node registers with (`KUBELET_NODE_LABELS`) and the taints
//! (`--register-with-taints`), as upstream's scriptless custom data sets
//! them. The AKS daemonsets (Azure CNI, Cilium) select nodes by some of
//! these labels: without them a node registers but never becomes Ready.

use std::collections::BTreeMap;

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::{InstanceType, Offering};
use karpenter_core::scheduling::{
    ARCHITECTURE_ARM64, CAPACITY_TYPE_LABEL_KEY, DisplayTaint, LABEL_ARCH_BETA, LABEL_ARCH_STABLE,
    LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_BETA, LABEL_INSTANCE_TYPE_STABLE, LABEL_OS_BETA, LABEL_OS_STABLE,
    LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE, NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY, Requirement,
    Requirements, UNREGISTERED_NO_EXECUTE_TAINT,
};

use super::version::KubeVersion;
use crate::imagefamily::Distro;
use crate::instancetype::labels::{
    CLUSTER, FIPS_ENABLED, MODE, OS_SKU, PLACEMENT_SCOPE, PRIORITY, SCALE_SET_PRIORITY,
    SKU_STORAGE_ULTRA_SSD, cluster_label_value,
};
use crate::instancetype::placement_scope;
use crate::nodeclass::{AKSNodeClass, ImageFamily};
use crate::settings::{AksSettings, NetworkDataplane, NetworkPlugin, NetworkPluginMode, SubnetId};

const ROLE: &str = "kubernetes.azure.com/role";
const KUBELET_IDENTITY_CLIENT_ID: &str = "kubernetes.azure.com/kubelet-identity-client-id";
const OS_SKU_REQUESTED: &str = "kubernetes.azure.com/os-sku-requested";
const OS_SKU_EFFECTIVE: &str = "kubernetes.azure.com/os-sku-effective";
const LOCAL_DNS_STATE: &str = "kubernetes.azure.com/localdns-state";
const ARTIFACT_STREAMING_ENABLED: &str = "kubernetes.azure.com/artifactstreaming-enabled";
const NETWORK_SUBNET: &str = "kubernetes.azure.com/network-subnet";
const NODE_NETWORK_VNET_GUID: &str = "kubernetes.azure.com/nodenetwork-vnetguid";
const AZURE_CNI_OVERLAY: &str = "kubernetes.azure.com/azure-cni-overlay";
const POD_NETWORK_TYPE: &str = "kubernetes.azure.com/podnetwork-type";
const NETWORK_STATELESS_CNI: &str = "kubernetes.azure.com/network-stateless-cni";
const EBPF_DATAPLANE: &str = "kubernetes.azure.com/ebpf-dataplane";

/// Keys under the Kubernetes domains that the kubelet itself may set (the
/// node-restriction admission plugin's list, beta forms included).
const KUBELET_SET_LABELS: [&str; 11] = [
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_INSTANCE_TYPE_BETA,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_ARCH_STABLE,
    LABEL_OS_BETA,
    LABEL_ARCH_BETA,
];

/// Namespaces (with their subdomains) under the Kubernetes domains that the
/// kubelet may label its node in.
const KUBELET_LABEL_NAMESPACES: [&str; 2] = ["kubelet.kubernetes.io", "node.kubernetes.io"];

/// The domains whose keys a kubelet may not set unless allowed above.
const KUBERNETES_DOMAINS: [&str; 2] = ["kubernetes.io", "k8s.io"];

/// The labels the kubelet registers the node with (KUBELET_NODE_LABELS), as upstream builds them.
///
/// Lowest first: the AKS labels every node carries, the OS SKU, the node
/// class's features and the network's labels; over them the claim's own
/// labels, the single-valued requirements of the claim and then of the
/// instance type, and the launch's capacity type, placement scope and Ultra
/// SSD. Keys in the Kubernetes domains the kubelet may not set are dropped
/// last (the node-restriction admission plugin would refuse the node).
pub(crate) fn kubelet_node_labels(
    settings: &AksSettings,
    kubernetes_version: &str,
    class: &AKSNodeClass,
    instance_type: &InstanceType,
    claim: &NodeClaim,
) -> BTreeMap<String, String> {
    let mut labels = node_labels(settings);
    labels.extend(os_sku_labels(class, kubernetes_version));
    labels.extend(feature_labels(class, instance_type));
    labels.extend(network_labels(settings, class, kubernetes_version));
    labels.extend(launch_labels(instance_type, claim));
    labels.retain(|key, _| kubelet_may_set(key));
    labels
}

/// `--register-with-taints` items ("key=value:Effect" / "key:Effect"), claim taints then
/// startup taints, plus karpenter.sh/unregistered:NoExecute when absent, as upstream.
pub(crate) fn register_with_taints(claim: &NodeClaim) -> Vec<String> {
    let general = claim.spec.taints.as_deref().unwrap_or_default();
    let startup = claim.spec.startup_taints.as_deref().unwrap_or_default();
    let all = || general.iter().chain(startup);
    // Karpenter lifts this taint once the node registers; a node started
    // without it could take pods before its claim knows it.
    let unregistered = (!all().any(|t| UNREGISTERED_NO_EXECUTE_TAINT.matches(t)))
        .then(|| UNREGISTERED_NO_EXECUTE_TAINT.to_taint());
    all()
        .chain(unregistered.as_ref())
        .map(|t| DisplayTaint(t).to_string())
        .collect()
}

/// The labels every node of the cluster carries: the agent role, the node
/// resource group, the kubelet identity, user mode, regular priority, and
/// Karpenter told not to sync taints (the startup taints would race it).
fn node_labels(settings: &AksSettings) -> BTreeMap<String, String> {
    let identity = settings.kubelet_identity_client_id.clone();
    [
        (ROLE, "agent".to_owned()),
        (CLUSTER, cluster_label_value(&settings.node_resource_group)),
        (KUBELET_IDENTITY_CLIENT_ID, identity.unwrap_or_default()),
        (MODE, "user".to_owned()),
        (NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY, "true".to_owned()),
        (SCALE_SET_PRIORITY, "regular".to_owned()),
        (PRIORITY, "regular".to_owned()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// `os-sku` (Ubuntu or AzureLinux), `os-sku-requested` (the class's family
/// as written, `Ubuntu` by the CRD's default) and `os-sku-effective` (the
/// image family the node boots).
fn os_sku_labels(class: &AKSNodeClass, kubernetes_version: &str) -> [(String, String); 3] {
    let requested = class.spec.image_family.as_deref().unwrap_or("Ubuntu");
    // A family the CRD would refuse keeps its own name, as upstream's table
    // lookup falls back to it.
    let os_sku = ImageFamily::parse(requested).map_or(requested, |f| f.os_sku());
    [
        (OS_SKU, os_sku.to_owned()),
        (OS_SKU_REQUESTED, requested.to_owned()),
        (
            OS_SKU_EFFECTIVE,
            effective_os_sku(class, kubernetes_version).to_owned(),
        ),
    ]
    .map(|(key, value)| (key.to_owned(), value))
}

/// The image family a node of `class` boots on `kubernetes_version`, by
/// upstream's names (the family resolution the images are chosen by).
fn effective_os_sku(class: &AKSNodeClass, kubernetes_version: &str) -> &'static str {
    let family = class
        .spec
        .image_family
        .as_deref()
        .and_then(ImageFamily::parse)
        .unwrap_or_default();
    Distro::resolve(
        family,
        class.fips_enabled(),
        class.trusted_launch(),
        Some(kubernetes_version),
    )
    .os_sku_effective()
}

/// FIPS (only when on), LocalDNS (always, `enabled` or `disabled`) and
/// artifact streaming (only when on, and never on arm64, which has none).
fn feature_labels(class: &AKSNodeClass, instance_type: &InstanceType) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    if class.fips_enabled() {
        labels.insert(FIPS_ENABLED.to_owned(), "true".to_owned());
    }
    let local_dns = if class.local_dns_enabled() {
        "enabled"
    } else {
        "disabled"
    };
    labels.insert(LOCAL_DNS_STATE.to_owned(), local_dns.to_owned());
    let arm64 = instance_type
        .requirements
        .get(LABEL_ARCH_STABLE)
        .has(ARCHITECTURE_ARM64);
    if !arm64 && class.spec_flag(&["artifactStreaming", "enabled"]) {
        labels.insert(ARTIFACT_STREAMING_ENABLED.to_owned(), "true".to_owned());
    }
    labels
}

/// The labels the network's daemonsets select nodes by. Azure CNI overlay:
/// the subnet (the class's, else the cluster's), the VNet GUID, the overlay
/// and pod network type, and stateless CNI (from 1.34). The Cilium
/// dataplane: `ebpf-dataplane=cilium`, whatever the plugin mode.
fn network_labels(
    settings: &AksSettings,
    class: &AKSNodeClass,
    kubernetes_version: &str,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let overlay = settings.network_plugin == NetworkPlugin::Azure
        && settings.network_plugin_mode == NetworkPluginMode::Overlay;
    if overlay {
        // A class subnet that is no subnet ID fails the NIC before the node
        // could boot; the cluster's subnet name keeps this total.
        let subnet = class
            .spec
            .vnet_subnet_id
            .as_deref()
            .and_then(|id| SubnetId::parse(id).ok())
            .map_or_else(|| settings.subnet.subnet.clone(), |s| s.subnet);
        // The renderer has checked the version already; one that does not
        // parse would meet no threshold.
        let stateless = KubeVersion::parse(kubernetes_version).is_ok_and(|v| v.minor >= 34);
        labels.extend(
            [
                (NETWORK_SUBNET, subnet),
                (
                    NODE_NETWORK_VNET_GUID,
                    settings.vnet_guid.clone().unwrap_or_default(),
                ),
                (AZURE_CNI_OVERLAY, "true".to_owned()),
                (POD_NETWORK_TYPE, "overlay".to_owned()),
                (NETWORK_STATELESS_CNI, stateless.to_string()),
            ]
            .map(|(key, value)| (key.to_owned(), value)),
        );
    }
    if settings.network_dataplane == NetworkDataplane::Cilium {
        labels.insert(EBPF_DATAPLANE.to_owned(), "cilium".to_owned());
    }
    labels
}

/// What this launch decides, later entries winning: the claim's labels, the
/// single-valued requirements of the claim and of the instance type, then
/// the capacity type and placement scope of the offering launched and
/// whether the claim asked for Ultra SSD (`true` or `false`).
fn launch_labels(instance_type: &InstanceType, claim: &NodeClaim) -> BTreeMap<String, String> {
    let requirements = claim_requirements(claim);
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    labels.extend(requirements.labels());
    labels.extend(instance_type.requirements.labels());
    if let Some(offering) = launched_offering(instance_type, &requirements) {
        labels.insert(
            CAPACITY_TYPE_LABEL_KEY.to_owned(),
            offering.capacity_type.clone(),
        );
        labels.insert(
            PLACEMENT_SCOPE.to_owned(),
            placement_scope(&offering.zone).to_owned(),
        );
    }
    let ultra_ssd = requirements
        .get_defined(SKU_STORAGE_ULTRA_SSD)
        .is_some_and(|r| r.has("true") && !r.has("false"));
    labels.insert(SKU_STORAGE_ULTRA_SSD.to_owned(), ultra_ssd.to_string());
    labels
}

/// The claim's requirements. One that cannot be read is left out: `create`
/// has refused such a claim before anything renders for it.
fn claim_requirements(claim: &NodeClaim) -> Requirements {
    let mut requirements = Requirements::new();
    for written in claim.spec.requirements() {
        let read = written
            .to_selector_requirement()
            .ok()
            .and_then(|r| Requirement::try_from(&r).ok());
        if let Some(requirement) = read {
            requirements.add(requirement);
        }
    }
    requirements
}

/// The offering `create` launches for a claim with `requirements` on
/// `instance_type`: the available one they allow that the provider's launch
/// rank puts first.
fn launched_offering<'t>(
    instance_type: &'t InstanceType,
    requirements: &Requirements,
) -> Option<&'t Offering> {
    instance_type
        .offerings
        .iter()
        .filter(|o| o.available && o.is_compatible(requirements))
        .min_by(|a, b| crate::LAUNCH_RANK.compare((instance_type, a), (instance_type, b)))
}

/// Whether the kubelet may label its node with `key`: keys outside the
/// `kubernetes.io` and `k8s.io` domains, the kubelet's own labels, and the
/// `kubelet.kubernetes.io` and `node.kubernetes.io` namespaces with their
/// subdomains.
fn kubelet_may_set(key: &str) -> bool {
    let namespace = key.split_once('/').map_or("", |(namespace, _)| namespace);
    let within = |domain: &str| {
        namespace == domain
            || namespace
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.'))
    };
    KUBELET_SET_LABELS.contains(&key)
        || !KUBERNETES_DOMAINS.iter().any(|d| within(d))
        || KUBELET_LABEL_NAMESPACES.iter().any(|d| within(d))
}

#[cfg(test)]
mod tests;
