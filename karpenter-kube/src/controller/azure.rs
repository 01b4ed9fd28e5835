//! `--provider azure`: the Azure provider over ARM, launching VMs that join
//! the cluster (the settings and the cluster facts), its AKSNodeClasses
//! kept up to date from a watch. The ARM bearer tokens come from the
//! credential the environment chooses ([`super::azure_credential`]) and are
//! never logged (the client holds them as secrets that print as `***`).

use std::sync::Arc;

use karpenter_azure::arm::ArmClient;
use karpenter_azure::{AKSNodeClass, AzureCloudProvider, AzureConfig, JoinConfig};
use karpenter_core::cloudprovider::CloudProvider;

use super::azure_args::AzureArgs;
use super::azure_credential;
use super::cluster_facts::cluster_facts;
use super::error::RunError;
use super::node_classes::watch_node_classes;
use crate::KubeCluster;

/// The Azure provider the settings describe, its nodes joining the cluster
/// `cluster` talks to through `kube_config`, fed the cluster's
/// AKSNodeClasses. The settings were validated before anything started
/// ([`AzureArgs::settings`]); they are read again here, as the same flags
/// and environment give the same result.
pub(crate) async fn provider(
    args: &AzureArgs,
    cluster: &KubeCluster,
    kube_config: &kube::Config,
) -> Result<Arc<dyn CloudProvider>, RunError> {
    let settings = args.settings()?;
    let facts = cluster_facts(kube_config, cluster.client(), settings.dns_service_ip).await?;
    tracing::info!(
        kubernetes_version = facts.kubernetes_version,
        cluster_dns = %facts.cluster_dns,
        ca_bundle_bytes = facts.ca_bundle.len(),
        "read what nodes need to join the cluster"
    );
    let credential = azure_credential::from_env()?;
    let client = ArmClient::new(
        credential,
        settings.subscription_id.clone(),
        settings.node_resource_group.clone(),
    )
    .with_base_url(args.arm_endpoint.clone());
    let config = AzureConfig {
        subscription: settings.subscription_id.clone(),
        resource_group: settings.node_resource_group.clone(),
        region: settings.location.clone(),
        cluster_name: settings.cluster_name.clone(),
        subnet_id: settings.subnet.id(),
        ssh_public_key: settings.ssh_public_key.clone(),
        custom_data: None,
        network: settings.network_options(),
        join: Some(JoinConfig {
            settings,
            cluster: facts,
        }),
    };
    let provider = Arc::new(AzureCloudProvider::new(client, config));
    let applied = Arc::clone(&provider);
    watch_node_classes(cluster, move |class: AKSNodeClass| {
        applied.apply_node_class(class)
    });
    Ok(provider)
}
