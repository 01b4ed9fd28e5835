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
    /// The driver's planning runner returned without running the planning
    /// (its runtime shutting down; see
    /// [`PlanningRunner`](crate::driver::PlanningRunner)).
    #[error("the driver's planning runner returned without running the planning")]
    PlanningNotRun,
}

/// `error` and its causes, each after a colon, as one line of a log reads:
/// the errors of this workspace (the engine's, the providers', the ARM
/// client's) keep their causes as sources and do not repeat them in their
/// own text, so this is how to show one whole.
pub fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloudprovider::CloudProviderError;

    #[test]
    fn causes_follow_the_error() {
        let io = std::io::Error::other("connection reset");
        let error = CloudProviderError::api("listing instances", true, io);
        assert_eq!(
            with_causes(&error),
            "cloud provider call failed: listing instances: connection reset"
        );
        assert!(error.is_retryable());
        let plain = CloudProviderError::NodeClaimNotFound {
            provider_id: "fake:///a".to_owned(),
        };
        assert_eq!(with_causes(&plain), "no instance for nodeclaim fake:///a");
        assert!(!plain.is_retryable());
    }
}
