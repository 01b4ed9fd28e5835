//! The cloud a replay launches in: the fake provider on the scenario's
//! instance types, or the Azure provider over an in-memory ARM on the
//! embedded catalog; each with its instances, its clock and its price book.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;
use karpenter_azure::arm::InMemoryCompute;
use karpenter_azure::{AdoptError, AzureCloudProvider, AzureConfig, NetworkOptions};
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::{CloudProvider, InstanceType, OfferingKey};
use karpenter_fake::FakeCloudProvider;

use super::{ReplayError, block_on};
use crate::scenario::{LoadError, Scenario};

/// Which cloud a replay launches in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplayCloud {
    /// The fake provider, selling the scenario's `InstanceType` documents.
    #[default]
    Fake,
    /// The Azure provider over an in-memory ARM: the embedded catalog's VM
    /// sizes in `region`, shaped by each NodePool's AKSNodeClass, at the
    /// catalog's prices; spot VMs are evicted as Azure evicts them.
    Azure {
        /// The region (`eastus`).
        region: String,
    },
}

/// The subscription of a replayed Azure cluster whose NodeClaims name none.
const REPLAY_SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";

/// The provider and what the replay does to it behind the driver's back.
pub(crate) enum Cloud {
    Fake(Arc<FakeCloudProvider>),
    Azure {
        provider: Arc<AzureCloudProvider<InMemoryCompute>>,
        /// What the provider's failure cache reads as the time.
        clock: Arc<Mutex<Timestamp>>,
    },
}

/// What each offering costs per hour, by NodePool (NodeOverlays may change a
/// price for one pool only).
#[derive(Debug, Default)]
pub(crate) struct PriceBook {
    prices: BTreeMap<String, BTreeMap<OfferingKey, f64>>,
}

impl PriceBook {
    /// The prices of every pool's offerings.
    fn of(instance_types: &BTreeMap<String, Arc<[InstanceType]>>) -> PriceBook {
        let mut book = PriceBook::default();
        for (pool, types) in instance_types {
            let prices = book.prices.entry(pool.clone()).or_default();
            for instance_type in types.iter() {
                for offering in &instance_type.offerings {
                    prices.insert(OfferingKey::of(instance_type, offering), offering.price);
                }
            }
        }
        book
    }

    /// The price of an offering in a pool; `None` when the pool does not
    /// offer it.
    pub(super) fn price(&self, pool: &str, key: &OfferingKey) -> Option<f64> {
        self.prices.get(pool)?.get(key).copied()
    }
}

impl Cloud {
    /// The cloud `choice` names for `scenario`, starting at `start`, with
    /// its price book and what the reader should know (a NodePool naming an
    /// AKSNodeClass the input lacks, a NodeOverlay that applies to nothing).
    pub(super) fn build(
        scenario: &Scenario,
        choice: &ReplayCloud,
        start: Timestamp,
    ) -> Result<(Cloud, PriceBook, Vec<String>), ReplayError> {
        match choice {
            ReplayCloud::Fake => {
                let types = scenario.fake_instance_types()?;
                let (snapshot, warnings) =
                    scenario.clone().into_snapshot_and_warnings(types.clone());
                let cloud = Cloud::Fake(Arc::new(FakeCloudProvider::new(types)));
                let warnings = warnings.iter().map(ToString::to_string).collect();
                Ok((cloud, PriceBook::of(&snapshot.instance_types), warnings))
            }
            ReplayCloud::Azure { region } => {
                let (snapshot, warnings) = scenario.clone().into_azure_snapshot(region)?;
                let config = azure_config(scenario, region);
                let clock = Arc::new(Mutex::new(start));
                let read = Arc::clone(&clock);
                let provider = AzureCloudProvider::new(InMemoryCompute::new(), config)
                    .with_clock(move || *read.lock().unwrap_or_else(PoisonError::into_inner));
                for class in &scenario.aks_node_classes {
                    provider.apply_node_class(class.object.clone());
                }
                let cloud = Cloud::Azure {
                    provider: Arc::new(provider),
                    clock,
                };
                Ok((cloud, PriceBook::of(&snapshot.instance_types), warnings))
            }
        }
    }

    /// The provider, for the driver.
    pub(super) fn provider(&self) -> Arc<dyn CloudProvider> {
        match self {
            Cloud::Fake(fake) => fake.clone(),
            Cloud::Azure { provider, .. } => provider.clone(),
        }
    }

    /// Puts the instance of a claim launched before the replay into the
    /// cloud: it runs there still.
    pub(super) fn adopt(&self, claim: &NodeClaim) -> Result<(), String> {
        match self {
            Cloud::Fake(fake) => {
                fake.adopt(claim);
                Ok(())
            }
            Cloud::Azure { provider, .. } => provider.adopt(claim).map_err(|error| match error {
                AdoptError::ForeignProviderId {
                    provider_id,
                    expected,
                    ..
                } => format!(
                    "{provider_id} is not a VM of the replayed cluster's node resource group \
                     (the first Azure NodeClaim's): expected {expected}<vm name>"
                ),
                other => other.to_string(),
            }),
        }
    }

    /// Takes an interrupted instance away; whether it was there.
    pub(super) fn reclaim(&self, provider_id: &str) -> bool {
        match self {
            Cloud::Fake(fake) => fake.reclaim(provider_id),
            Cloud::Azure { provider, .. } => provider.evict(provider_id),
        }
    }

    /// The instances running, as the provider lists them.
    pub(super) fn instances(&self) -> Vec<NodeClaim> {
        block_on(self.provider().list()).unwrap_or_default()
    }

    /// Moves the provider's clock to `now`.
    pub(super) fn set_time(&self, now: Timestamp) {
        if let Cloud::Azure { clock, .. } = self {
            *clock.lock().unwrap_or_else(PoisonError::into_inner) = now;
        }
    }
}

/// Where the replayed Azure cluster's VMs live: the subscription and node
/// resource group its first Azure NodeClaim names, else made-up ones.
fn azure_config(scenario: &Scenario, region: &str) -> AzureConfig {
    let named = scenario.node_claims.iter().find_map(|claim| {
        let id = claim.object.status.as_ref()?.provider_id.as_deref()?;
        let rest = id.strip_prefix("azure:///subscriptions/")?;
        let (subscription, rest) = rest.split_once("/resourceGroups/")?;
        let (group, _) = rest.split_once("/providers/")?;
        Some((subscription.to_owned(), group.to_owned()))
    });
    let (subscription, resource_group) = named.unwrap_or_else(|| {
        (
            REPLAY_SUBSCRIPTION.to_owned(),
            format!("mc_replay_replay_{region}"),
        )
    });
    AzureConfig {
        subnet_id: format!(
            "/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.Network/virtualNetworks/replay/subnets/nodes"
        ),
        subscription,
        resource_group,
        region: region.to_owned(),
        cluster_name: "replay".to_owned(),
        ssh_public_key: "ssh-ed25519 replay".to_owned(),
        custom_data: None,
        network: NetworkOptions::default(),
    }
}

/// A claim the cloud could not adopt, named as bad input.
pub(super) fn not_adopted(scenario: &Scenario, index: usize, message: String) -> ReplayError {
    let claim = &scenario.node_claims[index];
    ReplayError::Input(LoadError::Invalid {
        origin: claim.source.clone(),
        object: format!(
            "NodeClaim {}",
            claim.object.metadata.name.as_deref().unwrap_or_default()
        ),
        field: "status.providerID".to_owned(),
        message,
    })
}
