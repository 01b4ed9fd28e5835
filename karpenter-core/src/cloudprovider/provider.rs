//! The [`CloudProvider`] trait: what the driver asks of a cloud, after
//! upstream's `cloudprovider.CloudProvider` (`pkg/cloudprovider/types.go`),
//! and the one error type its implementations return.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use thiserror::Error;

use super::{InstanceType, LaunchRank, Offering, RepairPolicy};
use crate::api::{NodeClaim, NodePool};
use crate::scheduling::WellKnownLabels;

/// One offering of an instance type: the unit capacity runs out in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OfferingKey {
    /// The instance type's name.
    pub instance_type: String,
    /// The zone.
    pub zone: String,
    /// The capacity type (`on-demand`, `spot`, `reserved`).
    pub capacity_type: String,
    /// The reservation a reserved offering launches into (several may share
    /// a zone); `None` for every other offering.
    pub reservation_id: Option<String>,
}

impl OfferingKey {
    /// The key of `offering`, one of `instance_type`'s.
    pub fn of(instance_type: &InstanceType, offering: &Offering) -> OfferingKey {
        OfferingKey {
            instance_type: instance_type.name.clone(),
            zone: offering.zone.clone(),
            capacity_type: offering.capacity_type.clone(),
            reservation_id: offering.reservation_id().map(str::to_owned),
        }
    }

    /// The key of an offering with no reservation.
    pub fn new(
        instance_type: impl Into<String>,
        zone: impl Into<String>,
        capacity_type: impl Into<String>,
    ) -> OfferingKey {
        OfferingKey {
            instance_type: instance_type.into(),
            zone: zone.into(),
            capacity_type: capacity_type.into(),
            reservation_id: None,
        }
    }

    /// Whether it names `offering` of the type it names.
    pub fn names(&self, offering: &Offering) -> bool {
        self.zone == offering.zone
            && self.capacity_type == offering.capacity_type
            && self.reservation_id.as_deref() == offering.reservation_id()
    }
}

impl fmt::Display for OfferingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.instance_type, self.zone, self.capacity_type
        )?;
        match &self.reservation_id {
            Some(id) => write!(f, "/{id}"),
            None => Ok(()),
        }
    }
}

/// The cause an error keeps: any error that may cross threads.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a cloud provider call failed. `#[non_exhaustive]`: match the variants
/// you act on and keep a catch-all arm. [`is_retryable`](Self::is_retryable)
/// says whether the same call may succeed later, and the variants that wrap
/// another error keep it as their [`source`](std::error::Error::source).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CloudProviderError {
    /// No instance backs the claim (any more): `delete` reports this once the
    /// instance is gone, `get` when it never existed.
    #[error("no instance for nodeclaim {provider_id}")]
    NodeClaimNotFound {
        /// The claim's provider ID (or its name when it has none yet).
        provider_id: String,
    },
    /// The cloud had no capacity for the offerings tried; the caller marks
    /// them unavailable for a while and plans again.
    #[error("insufficient capacity for {}: {message}", list(offerings))]
    InsufficientCapacity {
        /// The offerings that failed.
        offerings: Vec<OfferingKey>,
        /// The cloud's own words.
        message: String,
    },
    /// The claim's node class is not ready (its status says why): nothing
    /// can launch from it until it is.
    #[error("node class {name} is not ready: {message}")]
    NodeClassNotReady {
        /// The node class's name.
        name: String,
        /// Why, as its status says.
        message: String,
    },
    /// Launching failed for another reason the cloud gave.
    #[error("creating the instance failed ({reason}): {message}")]
    Create {
        /// A short, stable reason (for metrics and events).
        reason: String,
        /// The cloud's own words.
        message: String,
        /// The error behind it, when there is one.
        #[source]
        source: Option<BoxError>,
    },
    /// The pool's instance types cannot be worked out yet (upstream's
    /// `UnevaluatedNodePoolError`, while overlays settle): skip the pool.
    #[error("nodepool {pool} cannot be evaluated yet: {message}")]
    UnevaluatedNodePool {
        /// The NodePool's name.
        pool: String,
        /// Why.
        message: String,
    },
    /// The call itself failed (network, throttling, a server error);
    /// `retryable` says whether trying again later may succeed.
    #[error("cloud provider call failed: {message}")]
    Api {
        /// What failed.
        message: String,
        /// Whether a later retry may succeed.
        retryable: bool,
        /// The client's error, when there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl CloudProviderError {
    /// An [`Api`](Self::Api) error: `message` says what failed, `source` why.
    pub fn api(message: impl Into<String>, retryable: bool, source: impl Into<BoxError>) -> Self {
        Self::Api {
            message: message.into(),
            retryable,
            source: Some(source.into()),
        }
    }

    /// Whether the same call may succeed if tried again later: an API
    /// failure marked so, a node class not ready yet, a pool not evaluated
    /// yet, or capacity that ran out (once marked unavailable, planning
    /// again tries other offerings). A claim with no instance, or a launch
    /// the cloud refused for a reason of its own, will fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api { retryable, .. } => *retryable,
            Self::InsufficientCapacity { .. }
            | Self::NodeClassNotReady { .. }
            | Self::UnevaluatedNodePool { .. } => true,
            Self::NodeClaimNotFound { .. } | Self::Create { .. } => false,
        }
    }
}

/// The offerings, comma-separated.
fn list(offerings: &[OfferingKey]) -> String {
    let names: Vec<String> = offerings.iter().map(ToString::to_string).collect();
    names.join(", ")
}

/// A cloud the driver launches and deletes instances in. The engine plans
/// from values (instance types, repair policies, drift verdicts); the driver
/// calls this trait to act on a plan.
///
/// Implementations are shared across tasks (`Send + Sync`) and used as
/// `dyn CloudProvider`; every method may be called concurrently.
///
/// The contract every implementation keeps (a conformance suite in
/// `karpenter-fake` is to check it for each):
///
/// - [`create`](Self::create) launches one instance for the claim, choosing
///   among the instance types, zones and capacity types its requirements
///   allow (the cheapest available offering), and returns the claim hydrated:
///   `status.providerID`, the resolved labels (`node.kubernetes.io/instance-type`,
///   `topology.kubernetes.io/zone`, `karpenter.sh/capacity-type`), and
///   `status.capacity` and `status.allocatable`: [`hydrate`](super::hydrate)
///   does exactly this, and [`requirements_of`](super::requirements_of),
///   [`requests_of`](super::requests_of) and
///   [`choose_offering`](super::choose_offering) read the claim and pick the
///   offering as the plan does. When no allowed offering has
///   capacity it returns [`CloudProviderError::InsufficientCapacity`] naming
///   the offerings it tried, and launches nothing.
/// - [`delete`](Self::delete) starts terminating the claim's instance. It
///   returns [`CloudProviderError::NodeClaimNotFound`] once the instance is
///   gone, so a caller retries until it sees that; deleting twice is fine.
/// - [`get`](Self::get) and [`list`](Self::list) read instances back as
///   claims (hydrated as `create` returns them); `get` of an unknown provider
///   ID is `NodeClaimNotFound`.
/// - [`instance_types`](Self::instance_types) returns every type the pool may
///   use, *including* offerings that are unavailable now (with
///   `available: false`), so that planning can tell "sold out" from "does not
///   exist".
/// - [`is_drifted`](Self::is_drifted) returns the provider's own reason a
///   claim no longer matches its node class (image, version, ...), or `None`.
/// - [`repair_policies`](Self::repair_policies) lists the node conditions
///   that get a node replaced; [`name`](Self::name) names the provider.
/// - [`well_known_labels`](Self::well_known_labels) holds every label key its
///   instance types carry, so that a pod may select any of them.
///
/// ```
/// use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError, InstanceType, RepairPolicy};
/// use karpenter_core::api::{NodeClaim, NodePool};
///
/// /// A cloud with no capacity at all.
/// #[derive(Debug)]
/// struct Empty;
///
/// #[karpenter_core::async_trait]
/// impl CloudProvider for Empty {
///     async fn create(&self, _: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
///         Err(CloudProviderError::InsufficientCapacity { offerings: vec![], message: "empty".into() })
///     }
///     async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
///         let provider_id = claim.metadata.name.clone().unwrap_or_default();
///         Err(CloudProviderError::NodeClaimNotFound { provider_id })
///     }
///     async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
///         Err(CloudProviderError::NodeClaimNotFound { provider_id: provider_id.into() })
///     }
///     async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> { Ok(vec![]) }
///     async fn instance_types(&self, _: &NodePool) -> Result<Vec<InstanceType>, CloudProviderError> {
///         Ok(vec![])
///     }
///     async fn is_drifted(&self, _: &NodeClaim) -> Result<Option<String>, CloudProviderError> { Ok(None) }
///     fn repair_policies(&self) -> Vec<RepairPolicy> { vec![] }
///     fn name(&self) -> &str { "empty" }
/// }
///
/// let provider: Box<dyn CloudProvider> = Box::new(Empty);
/// assert_eq!(provider.name(), "empty");
/// ```
#[async_trait]
pub trait CloudProvider: Send + Sync + fmt::Debug {
    /// Launches an instance for the claim and returns the claim hydrated.
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError>;

    /// Starts terminating the claim's instance; `NodeClaimNotFound` once it
    /// is gone.
    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError>;

    /// The instance with this provider ID, as a claim.
    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError>;

    /// Every instance this provider launched, as claims.
    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError>;

    /// The instance types the pool may use, unavailable offerings included.
    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError>;

    /// What [`instance_types`](Self::instance_types) answers, shared: a
    /// provider that keeps its instance types hands the same list to every
    /// caller without copying it, and a caller can tell an unchanged list
    /// by its pointer. The driver reads this one. It must answer as
    /// `instance_types` does.
    ///
    /// The default copies `instance_types`' answer into an `Arc`: right
    /// for every provider, and for a decorator that changes the answer
    /// (which need not forward this method).
    async fn shared_instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        self.instance_types(pool).await.map(Into::into)
    }

    /// The provider's reason the claim has drifted, if it has.
    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError>;

    /// The node conditions that get a node replaced.
    fn repair_policies(&self) -> Vec<RepairPolicy>;

    /// The provider's name.
    fn name(&self) -> &str;

    /// The label keys a pod may select although no NodePool mentions them:
    /// the core's well-known labels and the labels the provider's instance
    /// types define (upstream's providers register theirs in
    /// `v1.WellKnownLabels`). Planning reads it into
    /// [`Snapshot::well_known_labels`](crate::snapshot::Snapshot::well_known_labels).
    ///
    /// The default is [`WellKnownLabels::core`]: right for a provider whose
    /// types carry no labels of their own. A decorator forwards it.
    fn well_known_labels(&self) -> WellKnownLabels {
        WellKnownLabels::core().clone()
    }

    /// How [`create`](Self::create) ranks the offerings a claim allows: its
    /// first is what it launches. Planning reads it into
    /// [`Snapshot::launch_rank`](crate::snapshot::Snapshot::launch_rank), so a
    /// plan's `launch` is what `create` would pick. The default is
    /// [`LaunchRank::cheapest`]; a decorator forwards it.
    fn launch_rank(&self) -> LaunchRank {
        LaunchRank::cheapest()
    }
}

/// A shared provider is a provider: decorators can wrap an `Arc` while a
/// test keeps a handle on what is inside.
#[async_trait]
impl<T: CloudProvider + ?Sized> CloudProvider for Arc<T> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        (**self).create(claim).await
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        (**self).delete(claim).await
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        (**self).get(provider_id).await
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        (**self).list().await
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        (**self).instance_types(pool).await
    }

    async fn shared_instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        (**self).shared_instance_types(pool).await
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        (**self).is_drifted(claim).await
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        (**self).repair_policies()
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn well_known_labels(&self) -> WellKnownLabels {
        (**self).well_known_labels()
    }

    fn launch_rank(&self) -> LaunchRank {
        (**self).launch_rank()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insufficient_capacity_names_its_offerings() {
        let error = CloudProviderError::InsufficientCapacity {
            offerings: vec![
                OfferingKey::new("m-4x", "zone-a", "spot"),
                OfferingKey::new("m-8x", "zone-b", "on-demand"),
            ],
            message: "sold out".into(),
        };
        assert_eq!(
            error.to_string(),
            "insufficient capacity for m-4x/zone-a/spot, m-8x/zone-b/on-demand: sold out"
        );
    }

    /// The trait is dyn-compatible and its futures are `Send`.
    #[test]
    fn the_trait_is_dyn_compatible() {
        fn assert_send<T: Send>(_: &T) {}
        fn uses(provider: &dyn CloudProvider, claim: &NodeClaim) {
            let future = provider.create(claim);
            assert_send(&future);
        }
        let _ = uses;
    }
}
