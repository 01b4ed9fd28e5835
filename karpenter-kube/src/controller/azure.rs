//! `--provider azure`: the Azure provider over ARM, its AKSNodeClasses
//! kept up to date from a watch. The ARM bearer token comes from
//! `AZURE_ACCESS_TOKEN` and is never logged (the client holds it as a
//! secret that prints as `***`).

use std::sync::Arc;

use futures::StreamExt;
use karpenter_azure::arm::{ArmClient, StaticCredential};
use karpenter_azure::{AKSNodeClass, AzureCloudProvider, AzureConfig, NetworkOptions};
use karpenter_core::cloudprovider::CloudProvider;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};

use super::args::AzureArgs;
use crate::KubeCluster;

/// The environment variable holding the ARM bearer token.
pub const TOKEN_VARIABLE: &str = "AZURE_ACCESS_TOKEN";

/// The Azure provider the flags describe, fed the cluster's AKSNodeClasses.
pub(crate) fn provider(
    args: &AzureArgs,
    cluster: &KubeCluster,
) -> Result<Arc<dyn CloudProvider>, String> {
    let required = |value: &Option<String>, flag: &str| {
        value
            .clone()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("--{flag} is required"))
    };
    let subscription = required(&args.azure_subscription_id, "azure-subscription-id")?;
    let resource_group = required(&args.azure_node_resource_group, "azure-node-resource-group")?;
    let config = AzureConfig {
        subscription: subscription.clone(),
        resource_group: resource_group.clone(),
        region: required(&args.azure_location, "azure-location")?,
        cluster_name: required(&args.cluster_name, "cluster-name")?,
        subnet_id: required(&args.azure_subnet_id, "azure-subnet-id")?,
        ssh_public_key: args.ssh_public_key.clone(),
        custom_data: None,
        join: None,
        network: NetworkOptions::default(),
    };
    let token = std::env::var(TOKEN_VARIABLE)
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("{TOKEN_VARIABLE} must hold an ARM bearer token"))?;
    let client = ArmClient::new(
        Arc::new(StaticCredential::new(token)),
        subscription,
        resource_group,
    )
    .with_base_url(args.arm_endpoint.clone());
    let provider = Arc::new(AzureCloudProvider::new(client, config));
    watch_node_classes(cluster, Arc::clone(&provider));
    Ok(provider)
}

/// Hands every AKSNodeClass the cluster has, and each change, to the
/// provider.
fn watch_node_classes(cluster: &KubeCluster, provider: Arc<AzureCloudProvider<ArmClient>>) {
    let api: Api<AKSNodeClass> = Api::all(cluster.client().clone());
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(class) = stream.next().await {
            match class {
                Ok(class) => provider.apply_node_class(class),
                Err(error) => tracing::warn!(%error, "watching AKSNodeClasses failed; retrying"),
            }
        }
    });
}
