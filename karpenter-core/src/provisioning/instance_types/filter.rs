//! Narrowing a claim's instance types after each pod: a type stays when its labels
//! meet the claim's requirements, the claim's requests plus the daemons landing on
//! the type fit its allocatable, and it has an available offering the requirements
//! allow; then `minValues` must still hold.

use std::collections::BTreeSet;
use std::fmt;

use super::type_cache::TypeCache;
use crate::cloudprovider::InstanceType;
use crate::resources::{self, ResourceList};
use crate::scheduling::{NODE_INITIALIZED_LABEL_KEY, NODE_REGISTERED_LABEL_KEY, Requirements};

/// Why no instance type is left, in upstream's words: which of the three criteria
/// some type met, alone or together, so a person sees which one is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FilterError {
    requirements_met: bool,
    fits: bool,
    has_offering: bool,
    requirements_and_fits: bool,
    requirements_and_offering: bool,
    fits_and_offering: bool,
    min_values: Option<String>,
    requirements: String,
    resources: String,
    /// The resources no candidate type has enough of: what is needed, and the
    /// most any type leaves for pods.
    short: String,
}

impl FilterError {
    /// Whether an unmet `minValues` is (at least part of) why no type is left.
    pub(crate) fn names_min_values(&self) -> bool {
        self.min_values.is_some()
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if let Some(keys) = &self.min_values {
            return write!(
                f,
                "minValues requirement is not met for label(s) {keys}, requirements={}, resources={}",
                self.requirements, self.resources
            );
        } else if !self.requirements_met && !self.fits && !self.has_offering {
            "no instance type met the scheduling requirements or had enough resources or had a required offering"
        } else if !self.requirements_met && !self.fits {
            "no instance type met the scheduling requirements or had enough resources"
        } else if !self.requirements_met && !self.has_offering {
            "no instance type met the scheduling requirements or had a required offering"
        } else if !self.fits && !self.has_offering {
            "no instance type had enough resources or had a required offering"
        } else if !self.requirements_met {
            "no instance type met all requirements"
        } else if !self.fits {
            return write!(
                f,
                "no instance type has enough resources{}, requirements={}, resources={}",
                self.short, self.requirements, self.resources
            );
        } else if !self.has_offering {
            "no instance type has the required offering"
        } else if self.requirements_and_fits {
            "no instance type which met the scheduling requirements and had enough resources, had a required offering"
        } else if self.fits_and_offering {
            "no instance type which had enough resources and the required offering met the scheduling requirements"
        } else if self.requirements_and_offering {
            "no instance type which met the scheduling requirements and the required offering had the required resources"
        } else {
            "no instance type met the requirements/resources/offering tuple"
        };
        write!(
            f,
            "{what}, requirements={}, resources={}",
            self.requirements, self.resources
        )
    }
}

impl std::error::Error for FilterError {}

/// The requirements as a person should see them: without the two labels the
/// simulation adds so that daemons selecting them count.
fn shown_requirements(requirements: &Requirements) -> String {
    let mut shown = requirements.clone();
    shown.remove(NODE_REGISTERED_LABEL_KEY);
    shown.remove(NODE_INITIALIZED_LABEL_KEY);
    shown.to_string()
}

/// ` (cpu: needs 512, the largest type leaves 63900m)` for each resource that no
/// candidate type can hold even before daemons; empty when each fits somewhere.
fn short_resources(
    allocatable: &[ResourceList],
    candidates: &[usize],
    total: &ResourceList,
) -> String {
    let short: Vec<String> = total
        .iter()
        .filter_map(|(name, needed)| {
            let largest = candidates
                .iter()
                .map(|&t| allocatable[t].get(name))
                .max()
                .unwrap_or(0);
            (needed > largest).then(|| {
                format!(
                    "{name}: needs {}, the largest type leaves {}",
                    resources::format_milli(name, needed),
                    resources::format_milli(name, largest.max(0))
                )
            })
        })
        .collect();
    if short.is_empty() {
        String::new()
    } else {
        format!(" ({})", short.join("; "))
    }
}

/// `cpu=1500m, memory=2Gi, pods=1`, as a person reads requests.
pub(crate) fn describe_resources(list: &ResourceList) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|(name, milli)| format!("{name}={}", resources::format_milli(name, milli)))
        .collect();
    parts.join(", ")
}

/// Where the candidate types' resources come from.
pub(crate) struct Capacity<'a> {
    pub(crate) allocatable: &'a [ResourceList],
    /// Each type's allocatable as its four fixed amounts, when nothing else
    /// it has is negative (see [`Template::fixed_allocatable`]); may be empty.
    pub(crate) fixed: &'a [Option<[i64; 4]>],
    /// Each type's daemon group (out of range for a type never a candidate).
    pub(crate) group_of: &'a [usize],
    /// Each group's daemon overhead, or `None` when the pod cannot go there at
    /// all (a host-port conflict).
    pub(crate) overheads: Vec<Option<&'a ResourceList>>,
}

/// The core of the filter. With `known_compatible`, the candidates are known to
/// meet the requirements and have an offering they allow (the requirements did
/// not change since they were filtered), so only resources are checked.
#[allow(clippy::too_many_arguments)]
pub(crate) fn filter_with(
    types: &[InstanceType],
    cache: &TypeCache,
    capacity: &Capacity<'_>,
    candidates: &[usize],
    requirements: &Requirements,
    known_compatible: bool,
    pod_requests: &ResourceList,
    total: &ResourceList,
) -> Result<Vec<usize>, FilterError> {
    // Worked out per distinct requirement, not per type and call.
    let answers = (!known_compatible).then(|| {
        let compatible = cache.compatible(types, requirements);
        let offerings = cache.offerings(types, requirements);
        (compatible, offerings)
    });
    let answer = |t: usize| match &answers {
        None => (true, true),
        Some((compatible, offerings)) => (compatible.contains(t), offerings.available.contains(t)),
    };
    let eligible = answers.as_ref().map(|(compatible, offerings)| {
        let mut both = compatible.clone();
        both.intersect_with(&offerings.available);
        both
    });
    // What each group's types must hold, as four amounts when the requests and
    // the overhead have nothing else: the sum saturates, as `+` on lists does.
    let fixed_total = (!total.has_extended()).then(|| total.fixed_amounts());
    let needs: Vec<Option<[i64; 4]>> = capacity
        .overheads
        .iter()
        .map(|overhead| {
            let overhead = overhead.filter(|o| !o.has_extended())?.fixed_amounts();
            let total = fixed_total?;
            Some(std::array::from_fn(|r| {
                total[r].saturating_add(overhead[r])
            }))
        })
        .collect();
    // Whether type `t` holds the requests; `None` when the pod cannot go there.
    let fits = |t: usize| -> Option<bool> {
        let group = capacity.group_of[t];
        let overhead = (*capacity.overheads.get(group)?)?;
        let fixed = (needs[group], capacity.fixed.get(t).copied().flatten());
        Some(match fixed {
            (Some(need), Some(allocatable)) => {
                let holds = |r: usize| allocatable[r] >= 0 && need[r] <= allocatable[r];
                holds(0) && holds(1) && holds(2) && holds(3)
            }
            _ if overhead.is_empty() => total.fits(&capacity.allocatable[t]),
            _ => (total + overhead).fits(&capacity.allocatable[t]),
        })
    };
    // What is kept is all that matters when something is: the reasons are
    // worked out, in a second pass, only when nothing is.
    let mut remaining = Vec::with_capacity(candidates.len());
    for &t in candidates {
        if eligible.as_ref().is_none_or(|e| e.contains(t)) && fits(t) == Some(true) {
            remaining.push(t);
        }
    }
    let min_values =
        unmet_min_values(types, &remaining, requirements).map(|key| format!("[{key}]"));
    if min_values.is_none() && !remaining.is_empty() {
        return Ok(remaining);
    }
    let mut error = FilterError {
        requirements_met: false,
        fits: false,
        has_offering: false,
        requirements_and_fits: false,
        requirements_and_offering: false,
        fits_and_offering: false,
        min_values,
        requirements: String::new(),
        resources: String::new(),
        short: String::new(),
    };
    for &t in candidates {
        let Some(fits) = fits(t) else {
            continue;
        };
        let (compatible, offering) = answer(t);
        error.requirements_met |= compatible;
        error.fits |= fits;
        error.has_offering |= offering;
        error.requirements_and_fits |= compatible && fits && !offering;
        error.requirements_and_offering |= compatible && offering && !fits;
        error.fits_and_offering |= fits && offering && !compatible;
    }
    // Built only on failure: formatting requirements costs more than filtering.
    error.requirements = shown_requirements(requirements);
    error.resources = describe_resources(pod_requests);
    error.short = short_resources(capacity.allocatable, candidates, total);
    Err(error)
}

/// The first key (in key order) whose `minValues` the types do not reach: the
/// distinct values of the key over all of them.
pub(crate) fn unmet_min_values<'r>(
    types: &[InstanceType],
    chosen: &[usize],
    requirements: &'r Requirements,
) -> Option<&'r str> {
    unmet_min_values_of(chosen.iter().map(|&t| &types[t]), requirements)
}

/// [`unmet_min_values`] over the types themselves.
pub(crate) fn unmet_min_values_of<'t, 'r>(
    types: impl Iterator<Item = &'t InstanceType> + Clone,
    requirements: &'r Requirements,
) -> Option<&'r str> {
    requirements
        .iter()
        .filter_map(|r| Some((r.key(), r.min_values()?)))
        .find_map(|(key, min)| (distinct_values(types.clone(), key) < min as usize).then_some(key))
}

/// How many distinct values of `key` the types have between them, as
/// upstream's `SatisfiesMinValues` counts them.
pub(crate) fn distinct_values<'t>(
    types: impl Iterator<Item = &'t InstanceType>,
    key: &str,
) -> usize {
    let values: BTreeSet<&str> = types
        .flat_map(|t| t.requirements.get_defined(key))
        .flat_map(|r| r.values())
        .collect();
    values.len()
}

/// Filters a pool's types with no daemon overhead (the template's own check).
pub(crate) fn without_daemons(
    types: &[InstanceType],
    cache: &TypeCache,
    allocatable: &[ResourceList],
    candidates: &[usize],
    requirements: &Requirements,
    requests: &ResourceList,
) -> Result<Vec<usize>, FilterError> {
    let none = ResourceList::new();
    let capacity = Capacity {
        allocatable,
        fixed: &[],
        group_of: &vec![0; types.len()],
        overheads: vec![Some(&none)],
    };
    filter_with(
        types,
        cache,
        &capacity,
        candidates,
        requirements,
        false,
        requests,
        requests,
    )
}
