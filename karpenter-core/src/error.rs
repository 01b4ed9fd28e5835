//! The crate's error type.

use thiserror::Error;

/// Every error the engine returns. `#[non_exhaustive]`: match the variants you
/// handle and keep a catch-all arm.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A resource quantity could not be parsed.
    #[error(transparent)]
    Quantity(#[from] crate::resources::QuantityError),
    /// A node selector requirement is malformed or uses a restricted label.
    #[error(transparent)]
    Requirement(#[from] crate::scheduling::RequirementError),
    /// A duration (Go syntax or `Never`) could not be parsed.
    #[error(transparent)]
    Duration(#[from] crate::api::DurationError),
    /// A cloud provider call failed.
    #[error(transparent)]
    CloudProvider(#[from] crate::cloudprovider::CloudProviderError),
    /// A cluster call failed.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
}
