//! The AWS provider's instance types for a scenario: each NodePool gets the
//! embedded EC2 catalog's types in the region, shaped and offered by the
//! EC2NodeClass its `nodeClassRef` names (the default one, AL2023 at
//! `al2023@latest`, when it names none, or one the input lacks), and the
//! provider's drift verdicts for the claims of pools whose EC2NodeClass the
//! input has.

mod drift;
mod spot_prices;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use karpenter_aws::nodeclass::{AmiSelectorTerm, Subnet};
use karpenter_aws::{
    Catalog, EC2NodeClass, EC2NodeClassStatus, InstanceTypeError, instance_types_for,
};
use karpenter_core::api::NodePool;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::snapshot::Snapshot;

use super::{LoadError, Scenario, Source, Sourced};

pub use karpenter_aws::{
    DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, FALLBACK_PRICE_REGION, InstanceTypeOptions,
};
pub use spot_prices::{parse_spot_prices, read_spot_prices};

/// The API group of upstream's node class.
const EC2_NODE_CLASS_GROUP: &str = "karpenter.k8s.aws";
/// Its kind.
const EC2_NODE_CLASS_KIND: &str = "EC2NodeClass";
/// Where an error in the default EC2NodeClass would point: it is valid, so
/// none does, but the type must name an origin.
const DEFAULT_ORIGIN: &str = "<default EC2NodeClass>";
/// The field of a capacity reservation with how many more instances it can
/// start, as the status of upstream's newer releases records it.
const AVAILABLE_INSTANCE_COUNT: &str = "availableInstanceCount";

/// The instance types of each NodePool, and what the reader should know.
#[derive(Debug, Default)]
pub struct AwsInstanceTypes {
    /// By NodePool name.
    pub per_pool: BTreeMap<String, Arc<[InstanceType]>>,
    /// The EC2NodeClass of each NodePool that names one the input has, as
    /// read (its drift is judged against it).
    pub node_classes: BTreeMap<String, EC2NodeClass>,
    /// NodePools that name a node class the input lacks, or one that is not
    /// an EC2NodeClass (they get the default one).
    pub warnings: Vec<String>,
}

/// The default EC2NodeClass: upstream's recommended AL2023 at its newest
/// image, with no status (so the fallback zones).
pub fn default_ec2_node_class() -> EC2NodeClass {
    let mut class = EC2NodeClass::default();
    class.metadata.name = Some("default".to_owned());
    class.spec.ami_selector_terms = vec![AmiSelectorTerm {
        alias: Some("al2023@latest".to_owned()),
        ..AmiSelectorTerm::default()
    }];
    class
}

/// The zones a NodeClass without resolved subnets gets: `<region>a`, `b`
/// and `c`, as the contract says, since offline there is no VPC to ask.
fn with_fallback_zones(class: &EC2NodeClass, region: &str) -> EC2NodeClass {
    let mut class = class.clone();
    let status = class.status.get_or_insert_with(EC2NodeClassStatus::default);
    if status.subnets.as_ref().is_none_or(Vec::is_empty) {
        status.subnets = Some(
            ["a", "b", "c"]
                .iter()
                .map(|letter| Subnet {
                    id: format!("subnet-{region}{letter}"),
                    zone: format!("{region}{letter}"),
                    ..Subnet::default()
                })
                .collect(),
        );
    }
    class
}

/// How many more instances each of the class's capacity reservations can
/// start: the entry's `availableInstanceCount`, 1 when it has none (the
/// reservation was resolved, so it held room for at least one).
fn reservation_capacity(class: &Sourced<EC2NodeClass>) -> Result<BTreeMap<String, u32>, LoadError> {
    let reservations = (class.status.as_ref())
        .and_then(|s| s.capacity_reservations.as_deref())
        .unwrap_or_default();
    let mut counts = BTreeMap::new();
    for (index, reservation) in reservations.iter().enumerate() {
        let count = match reservation.other.get(AVAILABLE_INSTANCE_COUNT) {
            None => 1,
            Some(value) => value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| LoadError::Invalid {
                    origin: class.source.clone(),
                    object: object_name(Some(class)),
                    field: format!(
                        "status.capacityReservations[{index}].{AVAILABLE_INSTANCE_COUNT}"
                    ),
                    message: format!("{value} is not a whole number from 0 to {}", u32::MAX),
                })?,
        };
        counts.insert(reservation.id.clone(), count);
    }
    Ok(counts)
}

fn object_name(class: Option<&Sourced<EC2NodeClass>>) -> String {
    let name = class.and_then(|c| c.metadata.name.as_deref());
    format!("EC2NodeClass {}", name.unwrap_or("default"))
}

/// The error of building a class's types, naming its document and field.
fn type_error(class: Option<&Sourced<EC2NodeClass>>, error: InstanceTypeError) -> LoadError {
    let origin = class.map_or_else(
        || Source {
            file: DEFAULT_ORIGIN.into(),
            document: 0,
            item: None,
        },
        |c| c.source.clone(),
    );
    let (field, message) = match &error {
        InstanceTypeError::Setting { field, source } => (field.clone(), source.to_string()),
        InstanceTypeError::Percentage { field, .. } => {
            let text = error.to_string();
            let message = super::error::message_after_field(&text, field);
            (field.clone(), message)
        }
        InstanceTypeError::Region(_)
        | InstanceTypeError::UnknownType(_)
        | InstanceTypeError::Option { .. } => {
            return LoadError::Provider {
                provider: "aws".to_owned(),
                message: error.to_string(),
                source: Some(Box::new(error)),
            };
        }
    };
    LoadError::Invalid {
        origin,
        object: object_name(class),
        field,
        message,
    }
}

/// Whether `region` has a price table of its own in the embedded catalog;
/// a region without one is priced from [`FALLBACK_PRICE_REGION`]'s.
pub fn has_own_prices(region: &str) -> Result<bool, LoadError> {
    Ok(embedded_catalog()?.priced_regions().any(|r| r == region))
}

fn embedded_catalog() -> Result<&'static Catalog, LoadError> {
    Catalog::embedded().map_err(|e| LoadError::Provider {
        provider: "aws".to_owned(),
        message: format!("the embedded EC2 catalog: {e}"),
        source: Some(Box::new(e.clone())),
    })
}

impl Scenario {
    /// The EC2NodeClass `pool` names, if the input has it; otherwise a
    /// warning when it names one (or a node class of another kind).
    fn ec2_node_class_of(
        &self,
        pool: &NodePool,
    ) -> (Option<&Sourced<EC2NodeClass>>, Option<String>) {
        let pool_name = pool.name().unwrap_or_default();
        let Some(reference) = &pool.spec.template.spec.node_class_ref else {
            return (None, None);
        };
        if reference.kind != EC2_NODE_CLASS_KIND || reference.group != EC2_NODE_CLASS_GROUP {
            let warning = format!(
                "NodePool {pool_name} names {} {} ({}), not an EC2NodeClass: it gets the default EC2NodeClass",
                reference.kind, reference.name, reference.group
            );
            return (None, Some(warning));
        }
        let found = (self.ec2_node_classes.iter())
            .find(|c| c.metadata.name.as_deref() == Some(reference.name.as_str()));
        let warning = found.is_none().then(|| {
            format!(
                "NodePool {pool_name} names EC2NodeClass {}, which the input lacks: it gets the default EC2NodeClass",
                reference.name
            )
        });
        (found, warning)
    }

    /// The AWS instance types of every NodePool in `region`, each built once
    /// per EC2NodeClass with `options` (spot prices, `--reserved-enis`,
    /// `--vm-memory-overhead-percent`, the `ReservedCapacity` gate); the
    /// reservation counts come from each class's status.
    pub fn aws_instance_types(
        &self,
        region: &str,
        options: &InstanceTypeOptions,
    ) -> Result<AwsInstanceTypes, LoadError> {
        let catalog = embedded_catalog()?;
        let default_class = default_ec2_node_class();
        let mut by_class: BTreeMap<String, Arc<[InstanceType]>> = BTreeMap::new();
        let mut result = AwsInstanceTypes::default();
        for pool in &self.node_pools {
            let pool_name = pool.name().unwrap_or_default().to_owned();
            let (sourced, warning) = self.ec2_node_class_of(pool);
            result.warnings.extend(warning);
            if let Some(class) = sourced {
                let read = class.object.clone();
                result.node_classes.insert(pool_name.clone(), read);
            }
            // The default class's key cannot be a class's name (names are
            // never empty).
            let key =
                sourced.map_or_else(String::new, |c| c.metadata.name.clone().unwrap_or_default());
            if let Some(types) = by_class.get(&key) {
                result.per_pool.insert(pool_name, Arc::clone(types));
                continue;
            }
            let mut class_options = options.clone();
            if let Some(class) = sourced {
                class_options.reservation_capacity = reservation_capacity(class)?;
            }
            let class = with_fallback_zones(sourced.map_or(&default_class, |c| &c.object), region);
            let types: Arc<[InstanceType]> =
                instance_types_for(catalog, region, &class, &class_options)
                    .map_err(|e| type_error(sourced, e))?
                    .into();
            by_class.insert(key, Arc::clone(&types));
            result.per_pool.insert(pool_name, types);
        }
        Ok(result)
    }

    /// The engine's view of the scenario on the AWS provider in `region`:
    /// each pool's instance types, AWS's well-known labels, its launch rank,
    /// and the provider's drift verdicts (the EC2NodeClass hash, then the
    /// AMI) for the claims of pools whose EC2NodeClass the input has.
    /// Returns the warnings too.
    pub fn into_aws_snapshot(
        self,
        region: &str,
        options: &InstanceTypeOptions,
    ) -> Result<(Snapshot, Vec<String>), LoadError> {
        let aws = self.aws_instance_types(region, options)?;
        let labels = karpenter_aws::well_known_labels();
        let (mut snapshot, overlays) = self.snapshot_and_warnings(aws.per_pool.clone(), labels);
        let mut warnings = aws.warnings;
        warnings.extend(overlays.iter().map(ToString::to_string));
        snapshot.launch_rank = karpenter_aws::LAUNCH_RANK;
        snapshot.provider_drift = drift::verdicts(&snapshot, &aws.node_classes, &aws.per_pool);
        Ok((snapshot, warnings))
    }
}
