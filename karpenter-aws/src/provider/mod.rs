//! [`AwsCloudProvider`]: the engine's [`CloudProvider`] on EC2, as
//! upstream's `pkg/cloudprovider` and instance provider work: the embedded
//! catalog's instance types shaped by each `EC2NodeClass`, launches through
//! `CreateFleet` glued from the pure decisions of [`crate::launch`], every
//! capacity error remembered for three minutes, instances read back as
//! claims by their cluster tag.

mod adopt;
mod create;
mod drift;
mod fleet_input;
mod join;
mod placement;
mod prices;
mod readback;
mod ready;
mod reservations;
mod subnets;
pub(crate) mod template_data;
mod template_uses;
mod templates;
mod unavailable;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jiff::Timestamp;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, DEFAULT_UNAVAILABLE_TTL, InstanceType, LaunchRank,
    OfferingKey, RepairPolicy,
};
use karpenter_core::scheduling::{NODE_POOL_LABEL_KEY, WellKnownLabels};

use crate::catalog::{Catalog, CatalogError};
use crate::ec2::{Ec2Api, Ec2Error};
use crate::instancetype::{InstanceTypeOptions, instance_types_for};
use crate::nodeclass::EC2NodeClass;

pub use adopt::AdoptError;
pub use fleet_input::create_fleet_input;
pub use join::JoinConfig;
pub use prices::{PriceRefresh, PriceRefreshError};
pub use template_uses::{LAUNCH_TEMPLATE_TTL, TemplateCleanupError};

use self::subnets::SubnetEstimates;
use self::template_uses::TemplateUses;
use self::unavailable::Unavailable;

/// Where the provider launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AwsConfig {
    /// The region, e.g. `us-east-1`.
    pub region: String,
    /// The EKS cluster's name: instances are tagged
    /// `kubernetes.io/cluster/<name>: owned` and listed by that tag.
    pub cluster_name: String,
    /// How nodes join the cluster. `None` (simulations, replays) launches
    /// templates without user data, volumes, metadata options or
    /// interfaces, as before joining was built: instances that could not
    /// join a real cluster.
    pub join: Option<JoinConfig>,
}

/// The engine's [`CloudProvider`] on EC2 through an [`Ec2Api`]: the
/// embedded catalog's instance types for each applied `EC2NodeClass`,
/// launches as one-instance `CreateFleet` calls, capacity errors kept in an
/// unavailable-offerings cache for
/// [`DEFAULT_UNAVAILABLE_TTL`](karpenter_core::cloudprovider::DEFAULT_UNAVAILABLE_TTL),
/// instances read back as claims.
pub struct AwsCloudProvider<E> {
    api: E,
    config: AwsConfig,
    catalog: &'static Catalog,
    options: Mutex<InstanceTypeOptions>,
    /// On-demand prices from the Pricing API, once refreshed; the embedded
    /// tables until then.
    on_demand: Mutex<Option<BTreeMap<String, f64>>>,
    node_classes: Mutex<BTreeMap<String, EC2NodeClass>>,
    /// Each class's instance types before the unavailable marks, with the
    /// class they were made from: made again only when the class (or the
    /// prices, which clear the cache) change.
    priced_types: Mutex<BTreeMap<String, PricedTypes>>,
    unavailable: Mutex<Unavailable>,
    /// The addresses launches in flight are expected to take, per subnet.
    subnet_estimates: Mutex<SubnetEstimates>,
    /// When each launch template was last used, for the sweeps that
    /// delete unused ones.
    template_uses: Mutex<TemplateUses>,
    clock: Box<dyn Fn() -> Timestamp + Send + Sync>,
}

/// A class's instance types at the current prices and the class they were
/// made from.
type PricedTypes = (EC2NodeClass, Arc<[InstanceType]>);

impl<E> fmt::Debug for AwsCloudProvider<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCloudProvider")
            .field("region", &self.config.region)
            .field("cluster_name", &self.config.cluster_name)
            .finish_non_exhaustive()
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind: keep going.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An EC2 failure as the driver reads it, the EC2 error kept as its source.
pub(crate) fn api_error(what: &str, error: Ec2Error) -> CloudProviderError {
    let retryable = error.is_retryable();
    CloudProviderError::api(what.to_owned(), retryable, error)
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// A provider launching through `api` in `config`'s region and
    /// cluster, its instance types shaped by `options`, on the embedded
    /// catalog and the wall clock.
    ///
    /// # Errors
    ///
    /// [`CatalogError`] when the embedded catalog cannot be read.
    pub fn new(
        api: E,
        config: AwsConfig,
        options: InstanceTypeOptions,
    ) -> Result<Self, CatalogError> {
        Ok(AwsCloudProvider {
            api,
            config,
            catalog: Catalog::embedded()?,
            options: Mutex::new(options),
            on_demand: Mutex::new(None),
            node_classes: Mutex::new(BTreeMap::new()),
            priced_types: Mutex::new(BTreeMap::new()),
            unavailable: Mutex::new(Unavailable::default()),
            subnet_estimates: Mutex::new(SubnetEstimates::default()),
            template_uses: Mutex::new(TemplateUses::default()),
            clock: Box::new(Timestamp::now),
        })
    }

    /// This provider reading the time from `clock` (tests, simulations).
    pub fn with_clock(mut self, clock: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The wrapped API.
    pub fn api(&self) -> &E {
        &self.api
    }

    /// Adds or replaces an `EC2NodeClass` (as a controller's informer
    /// would), annotating it with its static hash as upstream's hash
    /// controller does.
    pub fn apply_node_class(&self, mut class: EC2NodeClass) {
        class.annotate_hash(None);
        let name = class.metadata.name.clone().unwrap_or_default();
        lock(&self.node_classes).insert(name, class);
    }

    /// Replaces the instance-type options (the reservation counts, say);
    /// every class's types are made again.
    pub fn set_options(&self, options: InstanceTypeOptions) {
        *lock(&self.options) = options;
        lock(&self.priced_types).clear();
    }

    /// Marks an offering unavailable for
    /// [`DEFAULT_UNAVAILABLE_TTL`](karpenter_core::cloudprovider::DEFAULT_UNAVAILABLE_TTL),
    /// as an interruption message naming it does upstream.
    pub fn mark_unavailable(&self, offering: OfferingKey) {
        let now = (self.clock)();
        lock(&self.unavailable).mark_offering(offering, now, DEFAULT_UNAVAILABLE_TTL);
    }

    /// Marks a capacity reservation exhausted for
    /// [`DEFAULT_UNAVAILABLE_TTL`](karpenter_core::cloudprovider::DEFAULT_UNAVAILABLE_TTL):
    /// its offerings are unavailable until then.
    pub fn mark_reservation_exhausted(&self, id: &str) {
        let now = (self.clock)();
        lock(&self.unavailable).mark_reservation(id, now, DEFAULT_UNAVAILABLE_TTL);
    }

    /// The class named `name`.
    fn node_class(&self, name: Option<&str>) -> Option<EC2NodeClass> {
        name.and_then(|n| lock(&self.node_classes).get(n).cloned())
    }

    /// The instance types of `class` at the current prices, before the
    /// unavailable marks: made once per class and prices.
    fn priced_for(&self, class: &EC2NodeClass) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        let name = class.metadata.name.clone().unwrap_or_default();
        // Made while the cache is held: a price refresh clears it only
        // after, so nothing made at the old prices stays.
        let mut cache = lock(&self.priced_types);
        match cache.get(&name) {
            Some((made_from, types)) if made_from == class => Ok(Arc::clone(types)),
            _ => {
                let types: Arc<[InstanceType]> = self.priced(class)?.into();
                cache.insert(name, (class.clone(), Arc::clone(&types)));
                Ok(types)
            }
        }
    }

    /// The instance types of `class` with the unavailable marks applied.
    fn types_for(&self, class: &EC2NodeClass) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        let priced = self.priced_for(class)?;
        let now = (self.clock)();
        let mut unavailable = lock(&self.unavailable);
        unavailable.expire(now);
        if unavailable.is_empty() {
            return Ok(priced);
        }
        let mut types = priced.to_vec();
        unavailable.apply(class, &mut types, now);
        Ok(types.into())
    }

    /// The catalog's instance types for `class` at the current prices.
    fn priced(&self, class: &EC2NodeClass) -> Result<Vec<InstanceType>, CloudProviderError> {
        let options = lock(&self.options).clone();
        let mut types = instance_types_for(self.catalog, &self.config.region, class, &options)
            .map_err(|e| CloudProviderError::NodeClassNotReady {
                name: class.metadata.name.clone().unwrap_or_default(),
                message: e.to_string(),
            })?;
        if let Some(on_demand) = lock(&self.on_demand).as_ref() {
            prices::apply_on_demand(&mut types, on_demand, options.spot_prices.is_none());
        }
        // A type with no price has no offering here (upstream keeps its
        // offerings, all unavailable): with no zone or capacity type it is
        // nothing planning could launch or wait for, so it is left out.
        types.retain(|t| !t.offerings.is_empty());
        Ok(types)
    }
}

#[async_trait]
impl<E: Ec2Api> CloudProvider for AwsCloudProvider<E> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        self.launch(claim).await
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        self.terminate(claim).await
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        self.get_claim(provider_id).await
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        self.list_claims().await
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.shared_instance_types(pool)
            .await
            .map(|types| types.to_vec())
    }

    /// The same types, shared: while nothing is marked unavailable, every
    /// read of a class hands out the same list.
    async fn shared_instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        let name = pool
            .spec
            .template
            .spec
            .node_class_ref
            .as_ref()
            .map(|r| r.name.as_str());
        // Upstream: a pool whose class cannot be found has no types (and
        // an event says so), not an error.
        match self.node_class(name) {
            Some(class) => self.types_for(&class),
            None => Ok(Arc::from(Vec::new())),
        }
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        self.drift_of(claim).await
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        crate::repair_policies()
    }

    fn name(&self) -> &str {
        "aws"
    }

    /// The core's labels and every AWS label the types carry.
    fn well_known_labels(&self) -> WellKnownLabels {
        crate::well_known_labels()
    }

    /// Upstream's rank: reserved, then spot, then on-demand, each by price.
    fn launch_rank(&self) -> LaunchRank {
        crate::LAUNCH_RANK
    }
}

/// The NodePool `claim` belongs to, by its label; empty without one.
fn node_pool_of(claim: &NodeClaim) -> &str {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
        .map_or("", String::as_str)
}
