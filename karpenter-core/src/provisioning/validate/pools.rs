//! NodePools and the nodes they launch: whether a pool may launch, its
//! requirements and labels, a claim's written requirements, offering prices and
//! the labels of a launched node.

use std::collections::BTreeMap;

use crate::api::{NodePool, condition_types};
use crate::cloudprovider::InstanceType;
use crate::provisioning::instance_types::templates::pool_labels;
use crate::provisioning::plan::Launch;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, Requirement,
    Requirements,
};

/// Whether a NodePool may launch capacity: not static, not being deleted, `Ready`
/// absent or true (upstream's filter before scheduling).
pub(super) fn pool_usable(pool: &NodePool) -> bool {
    !pool.spec.is_static()
        && pool.metadata.deletion_timestamp.is_none()
        && pool
            .condition(condition_types::READY)
            .is_none_or(|c| c.is_true())
}

/// A pool's requirements: its written requirements, its template labels, its own
/// label and its node class label.
pub(super) fn pool_requirements(pool: &NodePool) -> Requirements {
    let mut requirements = Requirements::new();
    for written in pool.spec.template.spec.requirements() {
        if let Some(r) = written
            .to_selector_requirement()
            .ok()
            .and_then(|r| Requirement::try_from(&r).ok())
        {
            requirements.add(r);
        }
    }
    requirements.add_all(&Requirements::from_labels(pool_labels(pool)));
    requirements
}

/// The cheapest available offering price of a type that the requirements allow.
pub(super) fn cheapest_price(it: &InstanceType, requirements: &Requirements) -> Option<f64> {
    it.offerings
        .iter()
        .filter(|o| o.available && o.is_compatible(requirements))
        .map(|o| o.price)
        .min_by(f64::total_cmp)
}

/// The launched node's labels: the type's single-valued labels, the launch's
/// instance type, zone and capacity type and its offering's further labels,
/// the pool's labels, then for any other key of the claim's requirements a
/// value they allow.
pub(super) fn launched_labels(
    pool: &NodePool,
    it: &InstanceType,
    launch: &Launch,
    requirements: &Requirements,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    for r in it.requirements.iter() {
        if !r.is_complement()
            && r.values().len() == 1
            && let Some(value) = r.values().next()
        {
            labels.insert(r.key().to_string(), value.to_string());
        }
    }
    labels.insert(LABEL_INSTANCE_TYPE_STABLE.to_string(), it.name.clone());
    labels.insert(LABEL_TOPOLOGY_ZONE.to_string(), launch.zone.clone());
    labels.insert(
        CAPACITY_TYPE_LABEL_KEY.to_string(),
        launch.capacity_type.clone(),
    );
    if let Some(offering) = it.offerings.iter().find(|o| launch.is_of(o)) {
        labels.extend(offering.requirements.labels());
    }
    for (key, value) in pool_labels(pool) {
        labels.entry(key).or_insert(value);
    }
    for r in requirements.iter() {
        if !labels.contains_key(r.key())
            && let Some(value) = r.any()
        {
            labels.insert(r.key().to_string(), value);
        }
    }
    labels
}
