//! [`RunError`]: why the controller stopped, apart from the loop that
//! returns it, so that the parts it names (the provider choice, the
//! endpoints, leader election) and the loop all depend on it and not on
//! each other.

use std::path::PathBuf;

use thiserror::Error;

use super::args::ProviderKind;
use super::http::HttpError;
use super::leader::LeaderError;
use crate::SyncError;

/// Why the controller stopped with an error.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError {
    /// No cluster to talk to: the kubeconfig (or the in-cluster service
    /// account) could not be read.
    #[error("cannot configure the Kubernetes client from {from}")]
    Config {
        /// Where the configuration was looked for.
        from: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `--provider` names a cloud this binary was built without.
    #[error(
        "--provider {}: this karpenter-controller was built without it (karpenter-kube's `{}` feature)",
        .0.name(),
        .0.feature()
    )]
    ProviderNotCompiled(ProviderKind),
    /// The fake cloud's instance types could not be read.
    #[cfg(feature = "kwok")]
    #[error(transparent)]
    InstanceTypes(#[from] karpenter_scenario::LoadError),
    /// The instance types file holds no InstanceType document.
    #[error("{0}: no InstanceType documents (apiVersion karpenter.fake/v1alpha1)")]
    NoInstanceTypes(PathBuf),
    /// The Azure settings are missing or malformed: every problem, listed
    /// before anything starts (never the bootstrap token's value).
    #[cfg(feature = "azure")]
    #[error(transparent)]
    AzureSettings(#[from] karpenter_azure::SettingsError),
    /// The controller has no ARM credential.
    #[cfg(feature = "azure")]
    #[error("the ARM credential")]
    AzureCredential(#[from] super::azure_credential::CredentialError),
    /// What nodes need from the cluster to join it could not be read.
    #[cfg(any(feature = "azure", feature = "aws"))]
    #[error("reading what nodes need to join the cluster")]
    ClusterFacts(#[from] super::cluster_facts::FactsError),
    /// The AWS settings are missing or malformed: every problem, listed
    /// before anything starts.
    #[cfg(feature = "aws")]
    #[error(transparent)]
    AwsSettings(#[from] karpenter_aws::settings::SettingsError),
    /// No AWS region or no AWS credentials.
    #[cfg(feature = "aws")]
    #[error("setting up the AWS clients")]
    AwsSetup(#[from] karpenter_aws::sdk::SetupError),
    /// EKS's `DescribeCluster` failed and `CLUSTER_ENDPOINT` is unset, so
    /// nodes would have no API server to join.
    #[cfg(feature = "aws")]
    #[error(
        "reading the EKS cluster (DescribeCluster) for the endpoint nodes join; set \
         CLUSTER_ENDPOINT (--cluster-endpoint) for a cluster EKS does not run"
    )]
    AwsCluster(#[source] karpenter_aws::ec2::Ec2Error),
    /// Neither the settings nor EKS name the API server endpoint.
    #[cfg(feature = "aws")]
    #[error("no cluster endpoint: set CLUSTER_ENDPOINT (--cluster-endpoint)")]
    AwsNoEndpoint,
    /// The interruption queue `INTERRUPTION_QUEUE` names could not be
    /// found.
    #[cfg(feature = "aws")]
    #[error("finding the interruption queue (INTERRUPTION_QUEUE)")]
    AwsQueue(#[source] karpenter_aws::ec2::Ec2Error),
    /// The embedded EC2 catalog could not be read.
    #[cfg(feature = "aws")]
    #[error(transparent)]
    AwsCatalog(#[from] karpenter_aws::CatalogError),
    /// An endpoint could not be served.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The watches did not sync.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// Leader election failed.
    #[error(transparent)]
    Leader(#[from] LeaderError),
    /// `--leader-elect` without a namespace for the Lease.
    #[error("--leader-elect needs --lease-namespace (or POD_NAMESPACE)")]
    LeaseNamespace,
    /// This replica lost the Lease: it stops so that it never acts beside
    /// the new leader (its Deployment restarts it as a candidate).
    #[error("lost the leader election Lease")]
    LostLease,
    /// With `--once`, the reconcile failed.
    #[error("the reconcile failed")]
    Reconcile(#[source] karpenter_core::Error),
}
