//! The Azure provider's instance types for a scenario: each NodePool gets the
//! embedded catalog's sizes in the region, shaped by its AKSNodeClass (the
//! default one when it names none, or one the input lacks).

use std::collections::BTreeMap;
use std::sync::Arc;

use karpenter_azure::instancetype::labels::well_known_labels;
use karpenter_azure::is_drifted;
use karpenter_azure::{AKSNodeClass, Catalog, NetworkOptions, Settings, instance_types};
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::snapshot::Snapshot;

use super::{LoadError, Scenario};

/// The instance types of each NodePool, and what the reader should know.
#[derive(Debug, Default)]
pub struct AzureInstanceTypes {
    /// By NodePool name.
    pub per_pool: BTreeMap<String, Arc<[InstanceType]>>,
    /// The AKSNodeClass of each NodePool that names one the input has.
    pub node_classes: BTreeMap<String, AKSNodeClass>,
    /// NodePools that name an AKSNodeClass the input lacks (they get the
    /// default one).
    pub warnings: Vec<String>,
}

impl Scenario {
    /// The Azure instance types of every NodePool in `region` (which must be
    /// in the catalog), on the default network (Azure CNI overlay).
    pub fn azure_instance_types(&self, region: &str) -> Result<AzureInstanceTypes, LoadError> {
        let catalog = Catalog::embedded();
        let network = NetworkOptions::default();
        let default_class = AKSNodeClass::default();
        let mut by_class: BTreeMap<String, Arc<[InstanceType]>> = BTreeMap::new();
        let mut result = AzureInstanceTypes::default();
        for pool in &self.node_pools {
            let pool_name = pool.name().unwrap_or_default().to_owned();
            let reference = pool.spec.template.spec.node_class_ref.as_ref();
            // A pool for another cloud's node class is planned with Azure's
            // defaults; saying that the input lacks an AKSNodeClass would
            // mislead (the run wants `--provider aws`).
            if let Some(r) = reference.filter(|r| r.kind == "EC2NodeClass") {
                result.warnings.push(format!(
                    "NodePool {pool_name} names EC2NodeClass {}, an AWS node class:                      --provider azure plans it with Azure's defaults (--provider aws reads it)",
                    r.name
                ));
            }
            let wanted = reference
                .filter(|r| r.kind != "EC2NodeClass")
                .map(|r| r.name.clone());
            let sourced = wanted.as_deref().and_then(|name| {
                self.aks_node_classes
                    .iter()
                    .find(|c| c.metadata.name.as_deref() == Some(name))
            });
            if let (Some(name), None) = (&wanted, sourced) {
                result.warnings.push(format!(
                    "NodePool {pool_name} names AKSNodeClass {name}, which the input lacks: it gets the default AKSNodeClass"
                ));
            }
            if let Some(class) = sourced {
                result
                    .node_classes
                    .insert(pool_name.clone(), class.object.clone());
            }
            let key =
                sourced.map_or_else(String::new, |c| c.metadata.name.clone().unwrap_or_default());
            if let Some(types) = by_class.get(&key) {
                result.per_pool.insert(pool_name, Arc::clone(types));
                continue;
            }
            let class = sourced.map_or(&default_class, |c| &c.object);
            let settings = Settings::for_node_class(class, region, &network).map_err(|e| {
                LoadError::Invalid {
                    // The default node class is valid: an error names an input document.
                    origin: sourced.map_or_else(
                        || super::Source {
                            file: "<default AKSNodeClass>".into(),
                            document: 0,
                            item: None,
                        },
                        |c| c.source.clone(),
                    ),
                    object: format!("AKSNodeClass {}", e.name),
                    field: format!("spec.{}", e.field),
                    message: e.message.clone(),
                }
            })?;
            let types: Arc<[InstanceType]> = instance_types(catalog, &settings).into();
            by_class.insert(key, Arc::clone(&types));
            result.per_pool.insert(pool_name, types);
        }
        Ok(result)
    }
}

impl Scenario {
    /// The engine's view of the scenario on the Azure provider in `region`:
    /// each pool's instance types, Azure's well-known labels, and the
    /// provider's drift verdicts (node-class hash, Kubernetes version, image)
    /// for the claims of pools whose AKSNodeClass the input has. Returns the
    /// warnings too.
    pub fn into_azure_snapshot(self, region: &str) -> Result<(Snapshot, Vec<String>), LoadError> {
        let azure = self.azure_instance_types(region)?;
        let (mut snapshot, overlays) =
            self.snapshot_and_warnings(azure.per_pool, well_known_labels());
        let mut warnings = azure.warnings;
        warnings.extend(overlays.iter().map(ToString::to_string));
        // A plan names what the provider's create would launch.
        snapshot.launch_rank = karpenter_azure::LAUNCH_RANK;
        for node in &snapshot.nodes {
            let Some(claim) = &node.node_claim else {
                continue;
            };
            let class = node
                .node_pool()
                .and_then(|pool| azure.node_classes.get(pool));
            if let Some(reason) =
                class.and_then(|class| is_drifted(class, claim, node.node.as_deref()))
            {
                let name = claim.name().unwrap_or_default().to_owned();
                snapshot.provider_drift.insert(name, reason.to_string());
            }
        }
        Ok((snapshot, warnings))
    }
}
