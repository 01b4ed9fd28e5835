//! The cloud a replay launches in: the fake provider on the scenario's
//! instance types, the Azure provider over an in-memory ARM or the AWS
//! provider over an in-memory EC2, each on its embedded catalog; each with
//! its instances, its clock and its price book.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;
use karpenter_azure::arm::InMemoryCompute;
use karpenter_azure::{
    AdoptError, AksSettings, AzureCloudProvider, AzureConfig, ClusterFacts, JoinConfig,
    NetworkOptions,
};
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{CloudProvider, InstanceType, OfferingKey};
use karpenter_core::features::FeatureGate;
use karpenter_core::planning::PlanningOptions;
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY,
};
use karpenter_fake::FakeCloudProvider;

use super::aws::AwsCloud;
use super::aws_options::AwsReplayOptions;
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
    /// The AWS provider over an in-memory EC2: the embedded catalog's
    /// instance types in `region`, shaped and offered by each NodePool's
    /// EC2NodeClass, at the region's on-demand prices (us-east-1's for a
    /// region without a table; spot priced as on-demand); a spot
    /// interruption reaches the provider as EC2's warning on its
    /// interruption queue.
    Aws {
        /// The region (`us-east-1`).
        region: String,
        /// The provider's options: spot prices, reserved ENIs, the
        /// hypervisor's share of memory.
        options: AwsReplayOptions,
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
    Aws(Box<AwsCloud>),
}

/// What each offering costs per hour, by NodePool (NodeOverlays may change a
/// price for one pool only).
#[derive(Debug, Default)]
pub(crate) struct PriceBook {
    prices: BTreeMap<String, BTreeMap<OfferingKey, f64>>,
    /// The labels the offerings name their reservations by (each provider
    /// has its own), as the driver reads them off a launched claim.
    reservation_labels: BTreeSet<String>,
}

impl PriceBook {
    /// The prices of every pool's offerings.
    pub(super) fn of(instance_types: &BTreeMap<String, Arc<[InstanceType]>>) -> PriceBook {
        let mut book = PriceBook::default();
        for (pool, types) in instance_types {
            let prices = book.prices.entry(pool.clone()).or_default();
            for instance_type in types.iter() {
                for offering in &instance_type.offerings {
                    prices.insert(OfferingKey::of(instance_type, offering), offering.price);
                    if let Some(reservation) = &offering.reservation {
                        book.reservation_labels.insert(reservation.label.clone());
                    }
                }
            }
        }
        book
    }

    /// What an instance is, read off its labels: its pool, and the offering
    /// it runs on (its reservation by the offerings' reservation labels).
    pub(super) fn offering_of(&self, instance: &NodeClaim) -> (String, OfferingKey) {
        let labels = instance.metadata.labels.as_ref();
        let label = |key: &str| labels.and_then(|l| l.get(key)).cloned();
        let reservation = self.reservation_labels.iter().find_map(|key| label(key));
        let key = OfferingKey {
            instance_type: label(LABEL_INSTANCE_TYPE_STABLE).unwrap_or_default(),
            zone: label(LABEL_TOPOLOGY_ZONE).unwrap_or_default(),
            capacity_type: label(CAPACITY_TYPE_LABEL_KEY).unwrap_or_default(),
            reservation_id: reservation,
        };
        (label(NODE_POOL_LABEL_KEY).unwrap_or_default(), key)
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
        planning: &PlanningOptions,
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
            ReplayCloud::Aws {
                region,
                options: aws_options,
            } => {
                if scenario.ec2_node_classes.is_empty() && !scenario.instance_types.is_empty() {
                    return Err(ReplayError::Input(LoadError::Provider {
                        provider: "aws".to_owned(),
                        message: "the input is a fake provider's cluster (InstanceType \
                                  documents, no EC2NodeClass): replay it on the fake provider"
                            .to_owned(),
                        source: None,
                    }));
                }
                // Upstream's providers offer reservations only with the gate.
                let options = aws_options.instance_type_options(
                    planning.feature_gates.is_on(FeatureGate::ReservedCapacity),
                );
                // The planning side's view: its warnings, its errors naming
                // the document and field, and (NodeOverlays applied) the
                // prices the provider's offerings carry.
                let (snapshot, warnings) = scenario.clone().into_aws_snapshot(region, &options)?;
                let cloud = AwsCloud::build(scenario, region, options, start)?;
                let prices = PriceBook::of(&snapshot.instance_types);
                Ok((Cloud::Aws(Box::new(cloud)), prices, warnings))
            }
        }
    }

    /// `pool` as the cloud reads it: on AWS, a pool naming no EC2NodeClass
    /// of the input is pointed at the default one.
    pub(super) fn node_pool(&self, pool: NodePool) -> NodePool {
        match self {
            Cloud::Aws(aws) => aws.node_pool(pool),
            Cloud::Fake(_) | Cloud::Azure { .. } => pool,
        }
    }

    /// The provider, for the driver.
    pub(super) fn provider(&self) -> Arc<dyn CloudProvider> {
        match self {
            Cloud::Fake(fake) => fake.clone(),
            Cloud::Azure { provider, .. } => provider.clone(),
            Cloud::Aws(aws) => aws.provider.clone(),
        }
    }

    /// `claim` as the cloud reads it: on AWS, a claim naming no
    /// EC2NodeClass of the input is pointed at the default one, as its
    /// pool is.
    pub(super) fn node_claim(&self, claim: NodeClaim) -> NodeClaim {
        match self {
            Cloud::Aws(aws) => aws.node_claim(claim),
            Cloud::Fake(_) | Cloud::Azure { .. } => claim,
        }
    }

    /// Puts the instance of a claim launched before the replay into the
    /// cloud: it runs there still. Else the claim's field at fault and
    /// what is wrong.
    pub(super) fn adopt(&self, claim: &NodeClaim) -> Result<(), (String, String)> {
        let provider_id = || "status.providerID".to_owned();
        match self {
            Cloud::Fake(fake) => {
                fake.adopt(claim);
                Ok(())
            }
            Cloud::Azure { provider, .. } => provider
                .adopt(claim)
                .map_err(|error| match error {
                    AdoptError::ForeignProviderId {
                        provider_id,
                        expected,
                        ..
                    } => format!(
                        "{provider_id} is not a VM of the replayed cluster's node resource group \
                     (the first Azure NodeClaim's): expected {expected}<vm name>"
                    ),
                    other => other.to_string(),
                })
                .map_err(|message| (provider_id(), message)),
            Cloud::Aws(aws) => aws.adopt(claim).map_err(|error| {
                // The input error names the claim itself.
                let name = claim.metadata.name.as_deref().unwrap_or_default();
                let text = error.to_string();
                let message = text
                    .strip_prefix(&format!("NodeClaim {name}: "))
                    .unwrap_or(&text)
                    .to_owned();
                (error.field(), message)
            }),
        }
    }

    /// Takes an interrupted instance away at the end of its notice; the
    /// nodes that go with it (`node`, the one the interrupt hit, when the
    /// instance was there). On AWS, the nodes of the claims the
    /// interruption queue's message names, among `claims`.
    pub(super) fn reclaim(
        &self,
        provider_id: &str,
        node: &str,
        claims: &[NodeClaim],
    ) -> Vec<String> {
        let taken = match self {
            Cloud::Fake(fake) => fake.reclaim(provider_id),
            Cloud::Azure { provider, .. } => provider.evict(provider_id),
            Cloud::Aws(aws) => {
                let gone = aws.reclaim(provider_id, claims);
                return claims
                    .iter()
                    .filter(|c| gone.iter().any(|g| c.metadata.name.as_ref() == Some(g)))
                    .map(|c| {
                        (c.status.as_ref().and_then(|s| s.node_name.clone()))
                            .unwrap_or_else(|| c.metadata.name.clone().unwrap_or_default())
                    })
                    .collect();
            }
        };
        if taken {
            vec![node.to_owned()]
        } else {
            Vec::new()
        }
    }

    /// The instances running, as the provider lists them.
    pub(super) fn instances(&self) -> Vec<NodeClaim> {
        block_on(self.provider().list()).unwrap_or_default()
    }

    /// Moves the provider's clock to `now`.
    pub(super) fn set_time(&self, now: Timestamp) {
        match self {
            Cloud::Azure { clock, .. } => {
                *clock.lock().unwrap_or_else(PoisonError::into_inner) = now;
            }
            Cloud::Aws(aws) => aws.set_time(now),
            Cloud::Fake(_) => {}
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
    let subnet_id = format!(
        "/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.Network/virtualNetworks/replay/subnets/nodes"
    );
    let join = replay_join(&subnet_id, &resource_group, region);
    AzureConfig {
        subnet_id,
        subscription,
        resource_group,
        region: region.to_owned(),
        cluster_name: "replay".to_owned(),
        ssh_public_key: "ssh-ed25519 replay".to_owned(),
        custom_data: None,
        network: join
            .as_ref()
            .map_or_else(NetworkOptions::default, |j| j.settings.network_options()),
        join,
    }
}

/// A made-up cluster for the replayed VMs to join, so that every launch
/// goes the way a real one does: custom data rendered, the NIC put in the
/// in-memory load balancer's pools with the cluster's security group.
/// Upstream's defaults otherwise (Azure CNI overlay with Cilium).
fn replay_join(subnet_id: &str, resource_group: &str, region: &str) -> Option<JoinConfig> {
    let endpoint = format!("https://replay.hcp.{region}.azmk8s.io:443");
    let settings = AksSettings::from_lookup(|name| {
        Some(match name {
            "CLUSTER_NAME" => "replay".to_owned(),
            "CLUSTER_ENDPOINT" => endpoint.clone(),
            "KUBELET_BOOTSTRAP_TOKEN" => "replay.0000000000000000".to_owned(),
            "SSH_PUBLIC_KEY" => "ssh-ed25519 replay".to_owned(),
            "VNET_SUBNET_ID" => subnet_id.to_owned(),
            "AZURE_NODE_RESOURCE_GROUP" => resource_group.to_owned(),
            "LOCATION" => region.to_owned(),
            "VNET_GUID" => "00000000-0000-0000-0000-000000000000".to_owned(),
            _ => return None,
        })
    })
    // Every value above is well formed whatever the scenario; should one
    // ever not be, the replay launches without custom data rather than
    // refusing the scenario.
    .ok()?;
    Some(JoinConfig {
        settings,
        cluster: ClusterFacts {
            ca_bundle: String::new(),
            kubernetes_version: "1.31.2".to_owned(),
            cluster_dns: [10, 0, 0, 10].into(),
        },
    })
}

/// A claim the cloud could not adopt, named as bad input with the field at
/// fault.
pub(super) fn not_adopted(
    scenario: &Scenario,
    index: usize,
    (field, message): (String, String),
) -> ReplayError {
    let claim = &scenario.node_claims[index];
    ReplayError::Input(LoadError::Invalid {
        origin: claim.source.clone(),
        object: format!(
            "NodeClaim {}",
            claim.object.metadata.name.as_deref().unwrap_or_default()
        ),
        field,
        message,
    })
}

#[cfg(test)]
mod tests {
    use karpenter_core::cloudprovider::{Offering, Reservation};
    use karpenter_core::resources::ResourceList;

    use super::*;

    fn claim(labels: &[(&str, &str)]) -> NodeClaim {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut claim = NodeClaim::default();
        claim.metadata.labels = Some(labels);
        claim
    }

    /// A book of one type with a reserved offering whose reservation goes
    /// by `label`.
    fn book(label: &str) -> PriceBook {
        let reservation = Reservation {
            label: label.to_owned(),
            id: "cr-1".to_owned(),
            capacity: 1,
        };
        let offering = Offering::reserved("us-east-1a", 0.01, reservation);
        let types: Arc<[InstanceType]> = vec![InstanceType::new(
            "m5.large",
            std::iter::empty::<(&str, &str)>(),
            vec![offering],
            ResourceList::new(),
            ResourceList::new(),
        )]
        .into();
        PriceBook::of(&BTreeMap::from([("pool".to_owned(), types)]))
    }

    #[test]
    fn an_instance_names_its_reservation_by_its_providers_label() {
        let common = [
            (NODE_POOL_LABEL_KEY, "pool"),
            (LABEL_INSTANCE_TYPE_STABLE, "m5.large"),
            (LABEL_TOPOLOGY_ZONE, "us-east-1a"),
            (CAPACITY_TYPE_LABEL_KEY, "reserved"),
        ];
        for label in [
            karpenter_fake::RESERVATION_ID_LABEL,
            karpenter_aws::labels::CAPACITY_RESERVATION_ID,
        ] {
            let book = book(label);
            let mut labels = common.to_vec();
            labels.push((label, "cr-1"));
            let (pool, key) = book.offering_of(&claim(&labels));
            assert_eq!(pool, "pool");
            assert_eq!(key.reservation_id.as_deref(), Some("cr-1"), "{label}");
            assert_eq!(key.capacity_type, "reserved");
            assert_eq!(book.price(&pool, &key), Some(0.01), "{label}");
            let (_, key) = book.offering_of(&claim(&common));
            assert_eq!(key.reservation_id, None);
        }
    }
}
