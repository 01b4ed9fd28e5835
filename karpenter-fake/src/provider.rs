//! [`FakeCloudProvider`]: an in-memory [`CloudProvider`], after upstream's
//! fake provider.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use async_trait::async_trait;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, Offering, OfferingKey, RepairPolicy,
    choose_offering, hydrate, requests_of, requirements_of,
};
use karpenter_core::scheduling::WellKnownLabels;

use crate::repair::repair_policies;

/// What the fake cloud holds.
#[derive(Debug, Default)]
struct State {
    /// Running instances, as hydrated claims, by provider ID.
    instances: BTreeMap<String, NodeClaim>,
    /// Drift reasons set by a test, by provider ID.
    drifted: BTreeMap<String, String>,
    /// Offerings the cloud has no capacity for (a test's choice).
    sold_out: BTreeSet<OfferingKey>,
    /// Offerings a launch found sold out: the provider's own
    /// unavailable-offerings cache, which lasts until a restock.
    learned: BTreeSet<OfferingKey>,
    /// How many instances were ever launched (names the next one).
    launched: u64,
    /// The capacity reservation each running reserved instance took, by
    /// provider ID: a reservation has its capacity less these left.
    reserved: BTreeMap<String, String>,
}

/// An in-memory [`CloudProvider`], after upstream's fake provider: the same
/// instance types for every NodePool. `create` launches the cheapest
/// available offering the claim's requirements allow among the types that
/// hold its requests, and remembers the instance; `delete` forgets it.
///
/// A reserved offering's capacity is what its document says less the
/// running instances launched into its reservation: at none left the
/// offering is unavailable, and deleting such an instance gives its unit
/// back.
#[derive(Debug)]
pub struct FakeCloudProvider {
    instance_types: Vec<InstanceType>,
    /// The core's well-known labels and every key the types' labels have.
    well_known: WellKnownLabels,
    state: Mutex<State>,
}

/// The labels a pod may select on a fake cloud of `types`: the core's
/// well-known labels and every key the types carry, as upstream's fake
/// provider registers its own labels (`size`, `special`, `integer`).
pub fn well_known_labels(types: &[InstanceType]) -> WellKnownLabels {
    // The offerings' own keys too (the reservation id): a type leaves off a
    // key only some of its offerings name.
    let keys = types.iter().flat_map(|t| {
        let offering_keys = t.offerings.iter().flat_map(|o| o.requirements.keys());
        t.requirements
            .keys()
            .chain(offering_keys)
            .map(str::to_owned)
    });
    WellKnownLabels::core().clone().with_all(keys)
}

impl FakeCloudProvider {
    /// A cloud offering `instance_types` to every NodePool.
    pub fn new(instance_types: Vec<InstanceType>) -> FakeCloudProvider {
        FakeCloudProvider {
            well_known: well_known_labels(&instance_types),
            instance_types,
            state: Mutex::new(State::default()),
        }
    }

    /// Makes [`is_drifted`](CloudProvider::is_drifted) report `reason` for
    /// the instance with `provider_id`.
    pub fn set_drifted(&self, provider_id: &str, reason: &str) {
        self.lock()
            .drifted
            .insert(provider_id.to_owned(), reason.to_owned());
    }

    /// Takes the cloud's capacity for these offerings away: a launch that
    /// picks one fails with insufficient capacity naming it, and the provider
    /// remembers it (reports it unavailable, picks another next time) until
    /// [`restock`](Self::restock).
    pub fn sell_out(&self, offerings: impl IntoIterator<Item = OfferingKey>) {
        self.lock().sold_out.extend(offerings);
    }

    /// Takes `claim`, a NodeClaim launched before this cloud was made (a
    /// cluster's starting nodes), as a running instance under its
    /// `status.providerID`, so that the claim's instance is not found gone.
    /// A claim launched into a capacity reservation (its
    /// [`RESERVATION_ID_LABEL`](crate::RESERVATION_ID_LABEL) label) takes a
    /// unit of it. `false` (nothing taken) for a claim without a provider
    /// ID.
    pub fn adopt(&self, claim: &NodeClaim) -> bool {
        let Some(provider_id) = claim
            .status
            .as_ref()
            .and_then(|s| s.provider_id.clone())
            .filter(|id| !id.is_empty())
        else {
            return false;
        };
        let reservation = claim
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(crate::RESERVATION_ID_LABEL).cloned());
        let mut state = self.lock();
        if let Some(id) = reservation {
            state.reserved.insert(provider_id.clone(), id);
        }
        state.instances.insert(provider_id, claim.clone());
        true
    }

    /// Takes the instance with `provider_id` away, as a cloud reclaims a spot
    /// instance after its interruption notice: it is no longer listed nor
    /// found, and its reservation unit (if any) is given back. Whether there
    /// was one.
    pub fn reclaim(&self, provider_id: &str) -> bool {
        let mut state = self.lock();
        state.reserved.remove(provider_id);
        state.instances.remove(provider_id).is_some()
    }

    /// Brings back every offering sold out, and forgets what launches learned.
    pub fn restock(&self) {
        let mut state = self.lock();
        state.sold_out.clear();
        state.learned.clear();
    }

    /// The catalog with the offerings launches found sold out marked
    /// unavailable, and each reservation's capacity less its running
    /// instances (unavailable once used up).
    fn with_learned(&self) -> Vec<InstanceType> {
        let (learned, taken) = {
            let state = self.lock();
            let mut taken: BTreeMap<String, u32> = BTreeMap::new();
            for id in state.reserved.values() {
                *taken.entry(id.clone()).or_default() += 1;
            }
            (state.learned.clone(), taken)
        };
        let mut types = self.instance_types.clone();
        for instance_type in &mut types {
            let name = instance_type.name.clone();
            instance_type.use_reservations(|id| taken.get(id).copied().unwrap_or(0));
            // A reservation with no capacity left is unavailable, whoever
            // used it up.
            instance_type.mark_unavailable(|offering| {
                offering
                    .reservation
                    .as_ref()
                    .is_some_and(|r| r.capacity == 0)
                    || learned
                        .iter()
                        .any(|k| k.instance_type == name && k.names(offering))
            });
        }
        types
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn key(instance_type: &InstanceType, offering: &Offering) -> OfferingKey {
    OfferingKey::of(instance_type, offering)
}

#[async_trait]
impl CloudProvider for FakeCloudProvider {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        let requirements = requirements_of(claim)?;
        let requests = requests_of(claim)?;
        let types = self.with_learned();
        // The rank the plan names its launch by.
        let rank = self.launch_rank();
        // As upstream's fake: the claim's requirements leave room for the
        // type's labels (its own keys, like the pool's, need not be the type's;
        // the type's own labels are well known).
        let (instance_type, offering) = choose_offering(
            &types,
            &requirements,
            &requests,
            &self.well_known,
            |a, b| rank.compare(a, b),
        )
        .map_err(|offerings| CloudProviderError::InsufficientCapacity {
            offerings,
            message: "no available offering the claim allows holds its requests".to_owned(),
        })?;
        let mut state = self.lock();
        let chosen = key(instance_type, offering);
        if state.sold_out.contains(&chosen) {
            // Like a real cloud: the one offering tried fails, and the
            // provider will not try it again.
            state.learned.insert(chosen.clone());
            return Err(CloudProviderError::InsufficientCapacity {
                offerings: vec![chosen],
                message: "the cloud has no capacity for this offering".to_owned(),
            });
        }
        state.launched += 1;
        let provider_id = format!("fake:///instance-{:06}", state.launched);
        let hydrated = hydrate(claim, instance_type, offering, provider_id.clone());
        if let Some(id) = offering.reservation_id() {
            state.reserved.insert(provider_id.clone(), id.to_owned());
        }
        state.instances.insert(provider_id, hydrated.clone());
        Ok(hydrated)
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        let provider_id = claim
            .status
            .as_ref()
            .and_then(|s| s.provider_id.clone())
            .unwrap_or_else(|| claim.metadata.name.clone().unwrap_or_default());
        let mut state = self.lock();
        state.reserved.remove(&provider_id);
        match state.instances.remove(&provider_id) {
            Some(_) => Ok(()),
            None => Err(CloudProviderError::NodeClaimNotFound { provider_id }),
        }
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        self.lock()
            .instances
            .get(provider_id)
            .cloned()
            .ok_or_else(|| CloudProviderError::NodeClaimNotFound {
                provider_id: provider_id.to_owned(),
            })
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        Ok(self.lock().instances.values().cloned().collect())
    }

    async fn instance_types(
        &self,
        _pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        let types = self.with_learned();
        Ok(types)
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        let provider_id = claim.status.as_ref().and_then(|s| s.provider_id.as_deref());
        Ok(provider_id.and_then(|id| self.lock().drifted.get(id).cloned()))
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        repair_policies()
    }

    fn name(&self) -> &str {
        "fake"
    }

    fn well_known_labels(&self) -> WellKnownLabels {
        self.well_known.clone()
    }
}

#[cfg(test)]
mod tests;
