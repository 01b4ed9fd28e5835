//! Whether a NodeOverlay may be applied: the CRD's rules (which an API
//! server enforces on admission, and a manifest may break) and upstream's
//! runtime validation (`RuntimeValidate`: requirements as a NodePool's, no
//! well-known resource in `capacity`). Every problem is reported, not only
//! the first, as upstream's multierr does.

use crate::api::NodeOverlay;
use crate::resources::{QuantityError, milli_value};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, NODE_POOL_LABEL_KEY, Operator, Requirement, RequirementError,
    Requirements, SelectorRequirement, WellKnownLabels, validate_requirement,
};

use super::price::PriceChange;

/// The most requirements an overlay may have (the CRD's `maxItems`).
const MAX_REQUIREMENTS: usize = 100;
/// The weights the CRD admits.
const WEIGHTS: std::ops::RangeInclusive<i32> = 1..=10_000;
/// The resources an overlay may not add (upstream's `WellKnownResources`).
const RESTRICTED_RESOURCES: [&str; 4] = ["cpu", "memory", "ephemeral-storage", "pods"];

/// Why a NodeOverlay is not applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OverlayError {
    /// `spec.requirements` is absent (the CRD requires it).
    #[error("spec.requirements is required")]
    MissingRequirements,
    /// More than 100 requirements.
    #[error("spec.requirements has {count} entries; the most is {MAX_REQUIREMENTS}")]
    TooManyRequirements {
        /// How many there are.
        count: usize,
    },
    /// A requirement that is not valid.
    #[error("spec.requirements[{index}]: {source}")]
    Requirement {
        /// Its index.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: RequirementError,
    },
    /// A `karpenter.sh` key other than the two the CRD allows.
    #[error(
        "spec.requirements[{index}]: label domain \"karpenter.sh\" is restricted ({key}); only \
         karpenter.sh/capacity-type and karpenter.sh/nodepool may be selected"
    )]
    RestrictedDomain {
        /// Its index.
        index: usize,
        /// The key.
        key: String,
    },
    /// `NotIn` without values.
    #[error("spec.requirements[{index}]: key {key} with operator NotIn must have a value defined")]
    NotInWithoutValues {
        /// Its index.
        index: usize,
        /// The key.
        key: String,
    },
    /// Both `price` and `priceAdjustment`.
    #[error("spec: cannot set both 'price' and 'priceAdjustment'")]
    BothPrices,
    /// A `priceAdjustment` the CRD's pattern refuses.
    #[error(
        "spec.priceAdjustment {value:?}: expected a signed number (+0.5, -0.25) or a \
         percentage (+10%, -15%, at least -100%)"
    )]
    PriceAdjustment {
        /// The value as written.
        value: String,
    },
    /// A `price` the CRD's pattern refuses.
    #[error("spec.price {value:?}: expected a non-negative decimal number (0.25)")]
    Price {
        /// The value as written.
        value: String,
    },
    /// `capacity` names cpu, memory, ephemeral-storage or pods.
    #[error(
        "spec.capacity.{resource}: invalid resource restricted (an overlay adds extended resources only)"
    )]
    RestrictedResource {
        /// The resource.
        resource: String,
    },
    /// A `capacity` quantity that does not parse.
    #[error("spec.capacity: {source}")]
    Quantity {
        /// What is wrong with it.
        #[source]
        source: QuantityError,
    },
    /// A `weight` outside 1 to 10000.
    #[error("spec.weight {weight}: must be from 1 to 10000")]
    Weight {
        /// The weight as written.
        weight: i32,
    },
}

/// An overlay ready to apply: what its fields mean.
#[derive(Debug)]
pub(super) struct Checked {
    /// Its requirements.
    pub requirements: Requirements,
    /// Its price change, if any.
    pub price: Option<PriceChange>,
    /// The extended resources it adds, in millis by name, if it has a
    /// `capacity` (`capacity: {}` counts: upstream records it).
    pub capacity: Option<Vec<(String, i64)>>,
}

/// The overlay's fields, or everything wrong with them.
pub(super) fn check(
    overlay: &NodeOverlay,
    well_known: &WellKnownLabels,
) -> Result<Checked, Vec<OverlayError>> {
    let spec = &overlay.spec;
    let mut errors = Vec::new();
    let requirements = match &spec.requirements {
        None => {
            errors.push(OverlayError::MissingRequirements);
            Requirements::new()
        }
        Some(list) => {
            if list.len() > MAX_REQUIREMENTS {
                errors.push(OverlayError::TooManyRequirements { count: list.len() });
            }
            let mut requirements = Requirements::new();
            for (index, written) in list.iter().enumerate() {
                match requirement(index, written, well_known) {
                    Ok(requirement) => requirements.add(requirement),
                    Err(error) => errors.push(error),
                }
            }
            requirements
        }
    };
    let price = match (&spec.price, &spec.price_adjustment) {
        (Some(_), Some(_)) => {
            errors.push(OverlayError::BothPrices);
            None
        }
        (Some(price), None) => PriceChange::parse_price(price).or_else(|| {
            errors.push(OverlayError::Price {
                value: price.clone(),
            });
            None
        }),
        (None, Some(adjustment)) => PriceChange::parse_adjustment(adjustment).or_else(|| {
            errors.push(OverlayError::PriceAdjustment {
                value: adjustment.clone(),
            });
            None
        }),
        (None, None) => None,
    };
    let capacity = spec.capacity.as_ref().and_then(|capacity| {
        for resource in capacity.keys() {
            if RESTRICTED_RESOURCES.contains(&resource.as_str()) {
                errors.push(OverlayError::RestrictedResource {
                    resource: resource.clone(),
                });
            }
        }
        capacity
            .as_map()
            .iter()
            .map(|(name, quantity)| {
                milli_value(quantity)
                    .map(|milli| (name.clone(), milli))
                    .map_err(|e| e.within(name))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| errors.push(OverlayError::Quantity { source }))
            .ok()
    });
    if let Some(weight) = spec.weight
        && !WEIGHTS.contains(&weight)
    {
        errors.push(OverlayError::Weight { weight });
    }
    if errors.is_empty() {
        Ok(Checked {
            requirements,
            price,
            capacity,
        })
    } else {
        Err(errors)
    }
}

/// One requirement, checked as the CRD and `ValidateRequirement` check it.
fn requirement(
    index: usize,
    written: &crate::api::OverlayRequirement,
    well_known: &WellKnownLabels,
) -> Result<Requirement, OverlayError> {
    let at = |source| OverlayError::Requirement { index, source };
    let operator: Operator = written.operator.parse().map_err(|_| {
        at(RequirementError::UnsupportedOperator {
            key: written.key.clone(),
            operator: written.operator.clone(),
        })
    })?;
    let (domain, _) = written.key.split_once('/').unwrap_or(("", &written.key));
    if domain.ends_with("karpenter.sh")
        && written.key != CAPACITY_TYPE_LABEL_KEY
        && written.key != NODE_POOL_LABEL_KEY
    {
        return Err(OverlayError::RestrictedDomain {
            index,
            key: written.key.clone(),
        });
    }
    if operator == Operator::NotIn && written.values().is_empty() {
        return Err(OverlayError::NotInWithoutValues {
            index,
            key: written.key.clone(),
        });
    }
    let selector = SelectorRequirement {
        key: written.key.clone(),
        operator,
        values: written.values().to_vec(),
        min_values: None,
    };
    validate_requirement(&selector, well_known).map_err(at)?;
    Requirement::try_from(&selector).map_err(at)
}
