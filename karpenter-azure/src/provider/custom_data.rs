//! A joining node's custom data, rendered at launch as upstream's
//! `aksscriptless` mode renders it: the settings and cluster facts of the
//! join configuration, the node class's Kubernetes version, the size and
//! the claim, and what ARM says of the node resource group (the cluster's
//! security group and route table, the VNet's GUID).

use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};

use serde_json::Value;

use super::join::{NicPlan, shape_vm};
use super::{AzureCloudProvider, JoinConfig};
use crate::arm::ComputeApi;
use crate::bootstrap::{CustomDataInputs, custom_data};
use crate::catalog::Sku;
use crate::nodeclass::AKSNodeClass;

/// The reason a claim fails with when its custom data cannot be rendered.
pub(super) const RENDER_FAILED: &str = "CustomDataRenderFailed";

/// What a joining node is launched for.
pub(super) struct Launch<'a> {
    /// The node class.
    pub class: &'a AKSNodeClass,
    /// The size chosen.
    pub instance_type: &'a InstanceType,
    /// Its catalog entry.
    pub sku: &'a Sku,
    /// The claim launched.
    pub claim: &'a NodeClaim,
}

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// Makes a joining node ready to launch: renders its custom data into
    /// the VM `body` first (a node that could not join is never made, and
    /// nothing is left to clean up), then creates its NIC and shapes the VM
    /// as a joining node's.
    pub(super) async fn prepare_joining_node(
        &self,
        plan: &NicPlan<'_>,
        launch: &Launch<'_>,
        body: &mut Value,
    ) -> Result<(), CloudProviderError> {
        let data = self.joining_custom_data(plan.join, launch).await?;
        body["properties"]["osProfile"]["customData"] = Value::String(data);
        self.create_joining_nic(plan).await?;
        shape_vm(body, plan.join, launch.sku, plan.settings);
        Ok(())
    }

    /// The base64 custom data of a node joining as `join` says. ARM's
    /// answers (the security group, the VNet GUID) are read once and kept;
    /// a failure to read them is retryable, a failure to render is not
    /// (the same inputs would fail again) and names what is wrong, never
    /// the bootstrap token.
    pub(super) async fn joining_custom_data(
        &self,
        join: &JoinConfig,
        launch: &Launch<'_>,
    ) -> Result<String, CloudProviderError> {
        let security_group = self.cluster_security_group().await?;
        let mut settings = join.settings.clone();
        settings.vnet_guid = self.vnet_guid().await?;
        let kubernetes_version = self
            .kubernetes_version(launch.class)
            .unwrap_or_else(|| join.cluster.kubernetes_version.clone());
        let route_table = security_group.route_table();
        let inputs = CustomDataInputs {
            settings: &settings,
            kubernetes_version: kubernetes_version.trim().trim_start_matches('v'),
            ca_bundle: &join.cluster.ca_bundle,
            cluster_dns: join.cluster.cluster_dns,
            node_class: launch.class,
            instance_type: launch.instance_type,
            sku: launch.sku,
            claim: launch.claim,
            network_security_group: &security_group.name,
            route_table: &route_table,
        };
        custom_data(&inputs).map_err(|error| CloudProviderError::Create {
            reason: RENDER_FAILED.to_owned(),
            message: format!("rendering the custom data of {}: {error}", launch.sku.name),
            source: Some(Box::new(error)),
        })
    }
}
