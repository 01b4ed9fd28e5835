//! [`AzureCloudProvider`]: the engine's [`CloudProvider`] on Azure, as
//! upstream's VM path works (`pkg/providers/instance/vminstance.go`): the
//! embedded catalog's instance types shaped by each AKSNodeClass, launches
//! as a NIC and a VM named `aks-<nodeclaim>` through [`ComputeApi`], every
//! Azure error recorded in the failure cache, VMs read back as claims.

mod adopt;
mod config;
mod custom_data;
mod image;
mod join;
mod launch;
mod network;
mod readback;
mod types;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jiff::Timestamp;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, Offering, OfferingKey, RepairPolicy,
    choose_offering, hydrate, requests_of, requirements_of,
};
use karpenter_core::scheduling::{NODE_POOL_LABEL_KEY, WellKnownLabels};

use crate::arm::{ArmError, ComputeApi};
use crate::catalog::Catalog;
use crate::failures::{Attempt, FailureCache};
use crate::instancetype::Settings;
use crate::instancetype::labels::well_known_labels;
use crate::nodeclass::AKSNodeClass;

pub use adopt::AdoptError;
pub use config::{AzureConfig, ClusterFacts, JoinConfig};
pub use launch::LAUNCH_RANK;
pub use network::ClusterSecurityGroup;

use types::{LivePrices, PricedTypes};

/// The engine's [`CloudProvider`] on Azure, as upstream's VM path works
/// (`pkg/providers/instance/vminstance.go`): the embedded catalog's instance
/// types shaped by each AKSNodeClass, launches as a NIC and a VM named
/// `aks-<nodeclaim>` through [`ComputeApi`], every Azure error recorded in the
/// failure cache, VMs read back as claims.
pub struct AzureCloudProvider<A> {
    api: A,
    config: AzureConfig,
    catalog: &'static Catalog,
    node_classes: Mutex<BTreeMap<String, AKSNodeClass>>,
    failures: Mutex<FailureCache>,
    /// Live prices from the Retail Prices API (on-demand, spot), once
    /// refreshed; the embedded table until then.
    live_prices: Mutex<Option<LivePrices>>,
    /// Each node class's instance types before the failure cache, with the
    /// settings they were made under: made again only when those change
    /// (or the prices do), not at every read.
    priced_types: Mutex<BTreeMap<String, PricedTypes>>,
    /// The load balancer pools and security group joining nodes' NICs
    /// refer to, as last read from ARM.
    discovery: join::Discovery,
    /// The newest community gallery image versions listed, for classes
    /// whose status lists no images.
    gallery_versions: Mutex<image::gallery::GalleryVersions>,
    clock: Box<dyn Fn() -> Timestamp + Send + Sync>,
}

impl<A: fmt::Debug> fmt::Debug for AzureCloudProvider<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureCloudProvider")
            .field("api", &self.api)
            .field("region", &self.config.region)
            .field("resource_group", &self.config.resource_group)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind: keep going.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The VM name of a claim: `aks-<name>`.
fn vm_name(claim: &NodeClaim) -> String {
    format!("aks-{}", claim.metadata.name.as_deref().unwrap_or_default())
}

/// The VM name a provider ID ends with (`azure:///.../virtualMachines/<name>`).
fn vm_name_in(provider_id: &str) -> &str {
    provider_id.rsplit('/').next().unwrap_or_default()
}

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// A provider launching through `api` as `config` says, on the embedded
    /// catalog, with the wall clock.
    pub fn new(api: A, config: AzureConfig) -> Self {
        AzureCloudProvider {
            api,
            config,
            catalog: Catalog::embedded(),
            node_classes: Mutex::new(BTreeMap::new()),
            failures: Mutex::new(FailureCache::new()),
            live_prices: Mutex::new(None),
            priced_types: Mutex::new(BTreeMap::new()),
            discovery: join::Discovery::default(),
            gallery_versions: Mutex::default(),
            clock: Box::new(Timestamp::now),
        }
    }

    /// This provider reading the time from `clock` (tests, simulations).
    pub fn with_clock(mut self, clock: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Adds or replaces a node class (as a controller's informer would),
    /// annotating it with its hash as upstream's hash controller does.
    pub fn apply_node_class(&self, mut class: AKSNodeClass) {
        let hash = class.hash();
        let annotations = class.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(
            crate::nodeclass_drift::NODE_CLASS_HASH_ANNOTATION.to_owned(),
            hash,
        );
        annotations.insert(
            crate::nodeclass_drift::NODE_CLASS_HASH_VERSION_ANNOTATION.to_owned(),
            crate::nodeclass_drift::NODE_CLASS_HASH_VERSION.to_owned(),
        );
        let name = class.metadata.name.clone().unwrap_or_default();
        lock(&self.node_classes).insert(name, class);
    }

    /// The wrapped API.
    pub fn api(&self) -> &A {
        &self.api
    }

    /// The node class named `name` (the default one when absent).
    fn node_class(&self, name: Option<&str>) -> AKSNodeClass {
        name.and_then(|n| lock(&self.node_classes).get(n).cloned())
            .unwrap_or_default()
    }

    fn settings(&self, class: &AKSNodeClass) -> Result<Settings, CloudProviderError> {
        let mut settings =
            Settings::for_node_class(class, &self.config.region, &self.config.network).map_err(
                |e| CloudProviderError::NodeClassNotReady {
                    name: e.name.clone(),
                    message: e.to_string(),
                },
            )?;
        settings.node_resource_group = Some(self.config.resource_group.clone());
        Ok(settings)
    }

    /// Maps a failed launch of a size with `offerings`: Azure's errors go to
    /// the failure cache, and those that mean "no capacity here" become
    /// insufficient capacity.
    fn launch_error(
        &self,
        error: ArmError,
        attempt: &Attempt,
        offerings: &[Offering],
    ) -> CloudProviderError {
        let Some(azure) = error.azure_error() else {
            // No answer from ARM to judge: the launch may go through later.
            return CloudProviderError::api(
                format!("launching {} in {}", attempt.sku, attempt.zone),
                true,
                error,
            );
        };
        let reason = lock(&self.failures).record(&azure, attempt, offerings, (self.clock)());
        tracing::warn!(
            sku = attempt.sku,
            zone = attempt.zone,
            capacity_type = attempt.capacity_type,
            code = azure.code,
            marked = ?reason,
            "launch failed"
        );
        let offering = OfferingKey::new(
            attempt.sku.clone(),
            attempt.zone.clone(),
            attempt.capacity_type.clone(),
        );
        let regional_quota = azure.code == "OperationNotAllowed"
            && azure.message.contains("Total Regional Cores quota");
        if reason.is_some() || regional_quota {
            CloudProviderError::InsufficientCapacity {
                offerings: vec![offering],
                message: format!("{}: {}", azure.code, azure.message),
            }
        } else {
            CloudProviderError::Create {
                reason: azure.code,
                message: azure.message,
                source: Some(Box::new(error)),
            }
        }
    }
}

/// An ARM failure as the driver reads it, the ARM error kept as its source.
fn api_error(error: ArmError) -> CloudProviderError {
    let retryable = error.is_retryable();
    CloudProviderError::api("the Azure Resource Manager call failed", retryable, error)
}

#[async_trait]
impl<A: ComputeApi> CloudProvider for AzureCloudProvider<A> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        let class_name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        let class = self.node_class(class_name);
        let (settings, types) = self.types_for(&class)?;
        let requirements = requirements_of(claim)?;
        let requests = requests_of(claim)?;
        let (instance_type, offering) = choose_offering(
            &types,
            &requirements,
            &requests,
            &well_known_labels(),
            |a, b| LAUNCH_RANK.compare(a, b),
        )
        .map_err(|offerings| CloudProviderError::InsufficientCapacity {
            offerings,
            message: "no available offering the claim allows holds its requests".to_owned(),
        })?;
        let sku =
            self.catalog
                .sku(&instance_type.name)
                .ok_or_else(|| CloudProviderError::Create {
                    reason: "UnknownSize".to_owned(),
                    message: format!("{} is not in the catalog", instance_type.name),
                    source: None,
                })?;
        let pool = claim
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
            .cloned()
            .unwrap_or_default();
        let name = vm_name(claim);
        let tags = launch::tags(&self.config, &class, &pool);
        let attempt = Attempt {
            sku: sku.name.clone(),
            family: sku.family.clone(),
            vcpus: sku.vcpus,
            zone: offering.zone.clone(),
            capacity_type: offering.capacity_type.clone(),
        };
        // The image is known before anything is made: a size no image is
        // for fails here, with nothing to clean up.
        let image = self.image(&class, &settings, instance_type).await?;
        let mut body =
            launch::vm_body(&self.config, &name, sku, offering, &settings, &image, &tags);
        if let Some(join) = &self.config.join {
            let plan = join::NicPlan {
                join,
                name: &name,
                subnet: launch::nic_subnet(&self.config, &class),
                instance_type,
                settings: &settings,
                tags: &tags,
            };
            let launch = custom_data::Launch {
                class: &class,
                instance_type,
                sku,
                claim,
            };
            self.prepare_joining_node(&plan, &launch, &mut body).await?;
        } else {
            let subnet = launch::nic_subnet(&self.config, &class);
            let nic = launch::nic_body(&self.config, subnet, instance_type, &tags);
            self.api.create_nic(&name, &nic).await.map_err(api_error)?;
        }
        let ultra_ssd = launch::ultra_ssd_requested(&requirements);
        if ultra_ssd {
            launch::enable_ultra_ssd(&mut body);
        }
        let vm = match self.api.create_vm(&name, &body).await {
            Ok(vm) => vm,
            Err(error) => {
                // Nothing runs on the NIC: take it away again (best effort).
                let _ = self.api.delete_nic(&name).await;
                return Err(self.launch_error(error, &attempt, &instance_type.offerings));
            }
        };
        // The contract's labels (the type's, the offering's own: its
        // priority and placement scope), provider ID, capacity and
        // allocatable; then whether the VM has Ultra SSD, as upstream
        // labels it.
        let mut launched = hydrate(claim, instance_type, offering, self.provider_id(&name));
        let labels = launched.metadata.labels.get_or_insert_with(BTreeMap::new);
        labels.insert(
            crate::instancetype::labels::SKU_STORAGE_ULTRA_SSD.to_owned(),
            ultra_ssd.to_string(),
        );
        let annotations = launched
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new);
        annotations.insert(
            crate::nodeclass_drift::NODE_CLASS_HASH_ANNOTATION.to_owned(),
            class.hash(),
        );
        annotations.insert(
            crate::nodeclass_drift::NODE_CLASS_HASH_VERSION_ANNOTATION.to_owned(),
            crate::nodeclass_drift::NODE_CLASS_HASH_VERSION.to_owned(),
        );
        let read_back = self.claim_of(if vm.is_null() { &body } else { &vm });
        let status = launched.status.get_or_insert_with(Default::default);
        status.image_id = read_back.status.and_then(|s| s.image_id);
        Ok(launched)
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        let provider_id = claim.status.as_ref().and_then(|s| s.provider_id.clone());
        let name = provider_id
            .as_deref()
            .map_or_else(|| vm_name(claim), |id| vm_name_in(id).to_owned());
        let not_found = || CloudProviderError::NodeClaimNotFound {
            provider_id: provider_id.clone().unwrap_or_else(|| name.clone()),
        };
        if self.api.get_vm(&name).await.map_err(api_error)?.is_none() {
            return Err(not_found());
        }
        self.api.delete_vm(&name).await.map_err(api_error)?;
        // The VM's NIC goes with it (deleteOption); a leftover is removed.
        let _ = self.api.delete_nic(&name).await;
        Ok(())
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        let name = vm_name_in(provider_id);
        match self.api.get_vm(name).await.map_err(api_error)? {
            Some(vm) => Ok(self.claim_of(&vm)),
            None => Err(CloudProviderError::NodeClaimNotFound {
                provider_id: provider_id.to_owned(),
            }),
        }
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        let vms = self.api.list_vms().await.map_err(api_error)?;
        Ok(vms
            .iter()
            .filter(|vm| vm["tags"].get("karpenter.sh_nodepool").is_some())
            .map(|vm| self.claim_of(vm))
            .collect())
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.shared_instance_types(pool)
            .await
            .map(|types| types.to_vec())
    }

    /// The same types, shared: while nothing is in the failure cache, every
    /// read of a node class hands out the same list, made once per node
    /// class settings and prices.
    async fn shared_instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Arc<[InstanceType]>, CloudProviderError> {
        let class_name = pool
            .spec
            .template
            .spec
            .node_class_ref
            .as_ref()
            .map(|r| r.name.as_str());
        let class = self.node_class(class_name);
        self.types_for(&class).map(|(_, types)| types)
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        let class_name = claim.spec.node_class_ref.as_ref().map(|r| r.name.as_str());
        let class = self.node_class(class_name);
        Ok(crate::nodeclass_drift::is_drifted(&class, claim, None)
            .map(|reason| reason.name().to_owned()))
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        crate::repair::repair_policies()
    }

    fn name(&self) -> &str {
        "azure"
    }

    /// The core's labels and the AKS labels every VM size carries
    /// (`karpenter.azure.com/sku-family`, `-sku-cpu`, ...), as upstream's
    /// provider registers them.
    fn well_known_labels(&self) -> WellKnownLabels {
        well_known_labels()
    }

    /// Upstream's rank: price, then spot before on-demand, zonal before
    /// regional.
    fn launch_rank(&self) -> karpenter_core::cloudprovider::LaunchRank {
        LAUNCH_RANK
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn an_arm_failure_keeps_its_cause_and_says_whether_to_retry() {
        let refused = api_error(ArmError::Azure {
            status: 403,
            code: "AuthorizationFailed".to_owned(),
            message: "no access".to_owned(),
        });
        assert!(!refused.is_retryable());
        let cause = refused.source().expect("a source");
        assert_eq!(
            cause
                .downcast_ref::<ArmError>()
                .map(ArmError::to_string)
                .as_deref(),
            Some("ARM 403: AuthorizationFailed: no access")
        );
        let throttled = api_error(ArmError::GaveUp {
            attempts: 4,
            last: Box::new(ArmError::Azure {
                status: 429,
                code: "TooManyRequests".to_owned(),
                message: "slow down".to_owned(),
            }),
        });
        assert!(throttled.is_retryable());
    }
}
