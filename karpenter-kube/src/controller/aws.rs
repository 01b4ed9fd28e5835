//! `--provider aws`: the AWS provider over the AWS SDK, launching EC2
//! instances that join the cluster, its EC2NodeClasses kept up to date from
//! a watch.
//!
//! What a node needs to join comes from the settings, else from EKS's
//! `DescribeCluster` (the endpoint, the service CIDR AL2023 asks for), else
//! from the controller's own kube config (the CA); the cluster DNS address
//! from the `kube-system/kube-dns` Service. Credentials come from the AWS
//! credential chain (IRSA, EKS Pod Identity, the instance's metadata) and
//! are checked before anything starts.
//!
//! The AWS calls that recur (prices, reservations, unused launch
//! templates, the EC2NodeClass controller, interruption, the instance
//! status poll) start only once this replica leads ([`AwsBackground::start`]); the classes are watched at once.

use std::sync::Arc;

use karpenter_aws::interruption::InterruptionHandler;
use karpenter_aws::sdk::{AwsClients, ClientOptions, EksCluster, SdkQueue};
use karpenter_aws::settings::AwsSettings;
use karpenter_aws::{AwsCloudProvider, AwsConfig, EC2NodeClass, JoinConfig};
use karpenter_core::cloudprovider::CloudProvider;
use tokio::sync::watch;

use super::aws_args::AwsArgs;
use super::aws_classes::{ClassContext, ClassController};
use super::aws_loops::{self, AwsProvider};
use super::cluster_facts::{ca_bundle, cluster_dns, kubernetes_version};
use super::error::RunError;
use super::node_classes::watch_node_classes;
use crate::KubeCluster;

/// The AWS provider the settings describe, and the work to start once this
/// replica leads. The settings were validated before anything started
/// ([`AwsArgs::settings`]); they are read again here, as the same flags and
/// environment give the same result.
pub(crate) async fn provider(
    args: &AwsArgs,
    cluster: &KubeCluster,
    kube_config: &kube::Config,
    reserved_capacity: bool,
) -> Result<(Arc<dyn CloudProvider>, AwsBackground), RunError> {
    let settings = args.settings()?;
    let options = ClientOptions {
        region: settings.region.clone(),
        ..ClientOptions::default()
    };
    let clients = AwsClients::load(options).await?;
    clients.check_credentials().await?;
    let join = join_config(&settings, &clients, cluster, kube_config).await?;
    tracing::info!(
        region = clients.region(),
        cluster = settings.cluster_name,
        endpoint = join.cluster_endpoint,
        cluster_cidr = join.cluster_cidr.as_deref().unwrap_or(""),
        "read what nodes need to join the cluster"
    );
    let cluster_cidr_known = join.cluster_cidr.as_deref().is_some_and(|c| !c.is_empty());
    let config = AwsConfig {
        region: clients.region().to_owned(),
        cluster_name: settings.cluster_name.clone(),
        join: Some(join),
    };
    let provider = Arc::new(AwsCloudProvider::new(
        clients.ec2(),
        config,
        settings.instance_type_options(),
    )?);
    let queue = match &settings.interruption_queue {
        Some(name) => Some(clients.queue(name).await.map_err(RunError::AwsQueue)?),
        None => None,
    };
    let version = kubernetes_version(cluster.client()).await?;
    let applied = Arc::clone(&provider);
    watch_node_classes(cluster, move |class: EC2NodeClass| {
        applied.apply_node_class(class)
    });
    let background = AwsBackground {
        provider: Arc::clone(&provider),
        cluster: cluster.clone(),
        parameters: clients.parameters(),
        iam: Arc::new(clients.iam()),
        queue,
        spot_prices_only: settings.isolated_vpc || clients.region().starts_with("us-gov-"),
        context: ClassContext {
            cluster_name: settings.cluster_name.clone(),
            region: clients.region().to_owned(),
            kubernetes_version: minor_version(&version),
            reserved_capacity,
            isolated_vpc: settings.isolated_vpc,
            dry_run_disabled: settings.disable_dry_run,
            cluster_cidr_known,
            node_class_cel: settings.feature_gates.node_class_cel,
        },
    };
    Ok((provider, background))
}

/// `1.34.2` → `1.34`, as the alias parameters name versions.
fn minor_version(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// What nodes need to join: the endpoint and CA from the settings, else
/// EKS, else (the CA) the kube config; the service CIDR from EKS.
async fn join_config(
    settings: &AwsSettings,
    clients: &AwsClients,
    cluster: &KubeCluster,
    kube_config: &kube::Config,
) -> Result<JoinConfig, RunError> {
    let eks = match clients.describe_cluster(&settings.cluster_name).await {
        Ok(eks) => Some(eks),
        Err(error) if settings.cluster_endpoint.is_some() => {
            // Upstream runs beside clusters EKS does not run, given the
            // endpoint; AL2023 classes then lack the service CIDR.
            tracing::warn!(%error, "DescribeCluster failed; nodes get no service CIDR");
            None
        }
        Err(error) => return Err(RunError::AwsCluster(error)),
    };
    let EksCluster {
        endpoint,
        certificate_authority,
        service_cidr,
        ..
    } = eks.unwrap_or_default();
    let cluster_endpoint = settings
        .cluster_endpoint
        .clone()
        .or(endpoint)
        .ok_or(RunError::AwsNoEndpoint)?;
    let ca_bundle = match &settings.cluster_ca_bundle {
        Some(bundle) => Some(bundle.clone()),
        None => Some(ca_bundle(kube_config)?)
            .filter(|b| !b.is_empty())
            .or(certificate_authority),
    };
    Ok(JoinConfig {
        cluster_endpoint,
        ca_bundle,
        cluster_cidr: service_cidr,
        kube_dns_ip: Some(cluster_dns(cluster.client(), None).await?),
    })
}

/// The work that writes to the cluster or the queue, started once this
/// replica leads.
pub(crate) struct AwsBackground {
    provider: Arc<AwsProvider>,
    cluster: KubeCluster,
    parameters: karpenter_aws::sdk::SdkParameters,
    iam: Arc<dyn karpenter_aws::iam::IamApi>,
    queue: Option<SdkQueue>,
    /// Whether the Pricing API is out of reach (an isolated VPC, GovCloud).
    spot_prices_only: bool,
    context: ClassContext,
}

impl AwsBackground {
    /// Starts the price and reservation refreshes, the launch-template
    /// sweep, the EC2NodeClass controller (status and finalizer), the
    /// interruption queue (with `--interruption-queue`) and the
    /// instance status poll. Like upstream's singleton controllers they run
    /// on the leader alone, so replicas do not repeat each other's AWS
    /// calls; until the first price read the embedded prices serve.
    pub(crate) fn start(self, stopping: &watch::Receiver<bool>) {
        aws_loops::refresh_prices(Arc::clone(&self.provider), self.spot_prices_only);
        aws_loops::refresh_reservations(Arc::clone(&self.provider));
        aws_loops::launch_templates(Arc::clone(&self.provider), stopping.clone());
        ClassController::new(
            Arc::clone(&self.provider),
            self.cluster.clone(),
            self.parameters,
            self.iam,
            self.context,
        )
        .spawn(stopping.clone());
        let handler: Arc<dyn InterruptionHandler> =
            Arc::new(super::aws_interruption::KubeInterruptions::new(
                self.cluster.clone(),
                Arc::clone(&self.provider),
            ));
        if let Some(queue) = self.queue {
            aws_loops::interruption_queue(
                queue,
                self.cluster.clone(),
                Arc::clone(&handler),
                stopping.clone(),
            );
        }
        aws_loops::instance_status(self.provider, self.cluster, handler, stopping.clone());
    }
}
