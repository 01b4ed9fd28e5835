//! Requirements on several label keys, after upstream's
//! `pkg/scheduling/requirements.go`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PodSpec};
use thiserror::Error;

use super::error::RequirementError;
use super::labels::{RESTRICTED_LABELS, WellKnownLabels};
use super::operator::Operator;
use super::requirement::{Integers, Requirement};
use super::selector::SelectorRequirement;

/// Why two sets of requirements cannot both hold. The message names the key
/// and, for a value conflict, both sides.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IncompatibleError {
    /// The other side constrains a custom label that this side does not
    /// define, so no node is known to carry it.
    #[error("label {key:?} does not have known values{}", Hint(hint.as_deref()))]
    UndefinedLabel {
        /// The label key.
        key: String,
        /// A defined or well-known key the label may be a typo of.
        hint: Option<String>,
    },
    /// Both sides constrain the key and no value satisfies both.
    #[error("key {}, {incoming} not in {existing}", incoming.key())]
    Disjoint {
        /// The other side's requirement (upstream's "incoming").
        incoming: Box<Requirement>,
        /// This side's requirement (upstream's "existing").
        existing: Box<Requirement>,
    },
}

impl IncompatibleError {
    /// The label key at fault.
    pub fn key(&self) -> &str {
        match self {
            IncompatibleError::UndefinedLabel { key, .. } => key,
            IncompatibleError::Disjoint { incoming, .. } => incoming.key(),
        }
    }
}

struct Hint<'a>(Option<&'a str>);

impl fmt::Display for Hint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(hint) => write!(f, " (typo of {hint:?}?)"),
            None => Ok(()),
        }
    }
}

/// Requirements keyed by label, each key at most once; adding a requirement
/// for a key already present intersects the two. A key that is absent
/// behaves as `Exists`.
///
/// Stored as a vector sorted by key: scheduling keeps about ten keys per set,
/// so a sorted vector clones with a single allocation, iterates
/// deterministically and lets [`intersects`](Self::intersects) merge two sets
/// in one linear pass.
///
/// ```
/// use karpenter_core::scheduling::{Operator, Requirement, Requirements, WellKnownLabels};
/// let node_pool: Requirements = [
///     Requirement::new("topology.kubernetes.io/zone", Operator::In, ["a", "b"], None)?,
///     Requirement::new("team", Operator::In, ["ml"], None)?,
/// ]
/// .into_iter()
/// .collect();
/// let pod = Requirements::from_labels([("topology.kubernetes.io/zone", "b"), ("team", "ml")]);
/// assert!(node_pool.compatible(&pod, WellKnownLabels::core()).is_ok());
///
/// let elsewhere = Requirements::from_labels([("topology.kubernetes.io/zone", "c")]);
/// let error = node_pool.compatible(&elsewhere, WellKnownLabels::core()).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [c] not in topology.kubernetes.io/zone In [a, b]"
/// );
/// # Ok::<(), karpenter_core::scheduling::RequirementError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Requirements {
    /// Sorted by key, keys unique.
    items: Vec<Requirement>,
}

impl Requirements {
    /// No requirements.
    pub fn new() -> Requirements {
        Requirements::default()
    }

    /// Each label as `key In [value]`.
    pub fn from_labels<I, K, V>(labels: I) -> Requirements
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        labels
            .into_iter()
            .map(|(key, value)| Requirement::in_values(key.as_ref(), [value]))
            .collect()
    }

    /// NodePool-style requirements, validated as [`Requirement::new`].
    pub fn from_selector_requirements<'a, I>(
        requirements: I,
    ) -> Result<Requirements, RequirementError>
    where
        I: IntoIterator<Item = &'a SelectorRequirement>,
    {
        requirements
            .into_iter()
            .map(Requirement::try_from)
            .collect()
    }

    /// Kubernetes node selector requirements (pods, volumes). These follow
    /// Kubernetes' validation, which lets integer operands be negative.
    pub fn from_node_selector_requirements<'a, I>(
        requirements: I,
    ) -> Result<Requirements, RequirementError>
    where
        I: IntoIterator<Item = &'a NodeSelectorRequirement>,
    {
        requirements
            .into_iter()
            .map(|requirement| {
                let parsed = SelectorRequirement::from_node_selector_requirement(requirement)?;
                Requirement::build(
                    &parsed.key,
                    parsed.operator,
                    &parsed.values,
                    None,
                    Integers::Any,
                )
            })
            .collect()
    }

    /// A node selector term's `matchExpressions`. Karpenter cannot reason
    /// about `matchFields` (they select node objects, not labels), so a term
    /// with any is an error.
    pub fn from_node_selector_term(
        term: &NodeSelectorTerm,
    ) -> Result<Requirements, RequirementError> {
        if term
            .match_fields
            .as_ref()
            .is_some_and(|fields| !fields.is_empty())
        {
            return Err(RequirementError::MatchFieldsUnsupported);
        }
        Requirements::from_node_selector_requirements(term.match_expressions.iter().flatten())
    }

    /// A pod's requirements as the scheduler first tries them: its
    /// `nodeSelector`, its heaviest preferred node-affinity term (the first
    /// among equals) treated as required, and its first required term. The
    /// scheduler relaxes the preference, then moves to later required terms,
    /// when these cannot be met.
    ///
    /// `matchFields` in the required term is an error, as upstream's pod
    /// validation rejects it; in the preferred term it is ignored, as upstream
    /// ignores it there.
    pub fn from_pod_spec(spec: &PodSpec) -> Result<Requirements, RequirementError> {
        Requirements::pod(spec, true)
    }

    /// A pod's true requirements: as [`from_pod_spec`](Self::from_pod_spec)
    /// without the preferred term.
    pub fn from_pod_spec_strict(spec: &PodSpec) -> Result<Requirements, RequirementError> {
        Requirements::pod(spec, false)
    }

    fn pod(spec: &PodSpec, with_preference: bool) -> Result<Requirements, RequirementError> {
        let mut requirements = Requirements::from_labels(spec.node_selector.iter().flatten());
        let Some(affinity) = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
        else {
            return Ok(requirements);
        };
        if with_preference {
            let preferred = affinity
                .preferred_during_scheduling_ignored_during_execution
                .iter()
                .flatten();
            // `reduce` keeps the earlier term on ties, like a stable sort.
            if let Some(heaviest) = preferred.reduce(|best, term| {
                if term.weight > best.weight {
                    term
                } else {
                    best
                }
            }) {
                let expressions = heaviest.preference.match_expressions.iter().flatten();
                requirements.add_all(&Requirements::from_node_selector_requirements(expressions)?);
            }
        }
        let required = affinity
            .required_during_scheduling_ignored_during_execution
            .as_ref();
        if let Some(first) = required.and_then(|selector| selector.node_selector_terms.first()) {
            requirements.add_all(&Requirements::from_node_selector_term(first)?);
        }
        Ok(requirements)
    }

    /// Adds a requirement, intersecting it with the one already on its key.
    pub fn add(&mut self, requirement: Requirement) {
        match self.position(requirement.key()) {
            Ok(at) => self.items[at] = requirement.intersection(&self.items[at]),
            Err(at) => self.items.insert(at, requirement),
        }
    }

    /// Adds every requirement of `other`.
    pub fn add_all(&mut self, other: &Requirements) {
        for requirement in &other.items {
            self.add(requirement.clone());
        }
    }

    /// Removes and returns the requirement on `key`.
    pub fn remove(&mut self, key: &str) -> Option<Requirement> {
        self.position(key).ok().map(|at| self.items.remove(at))
    }

    /// The requirement on `key`; `key Exists` when there is none.
    pub fn get(&self, key: &str) -> Cow<'_, Requirement> {
        match self.get_defined(key) {
            Some(requirement) => Cow::Borrowed(requirement),
            None => Cow::Owned(Requirement::exists(key)),
        }
    }

    /// The requirement on `key`, if one was added.
    pub fn get_defined(&self, key: &str) -> Option<&Requirement> {
        self.position(key).ok().map(|at| &self.items[at])
    }

    /// Whether a requirement on `key` was added.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.items.binary_search_by(|r| r.key().cmp(key))
    }

    /// The keys, ascending.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.items.iter().map(Requirement::key)
    }

    /// The requirements, ascending by key.
    pub fn iter(&self) -> std::slice::Iter<'_, Requirement> {
        self.items.iter()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no requirements.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether any requirement sets `minValues`.
    pub fn has_min_values(&self) -> bool {
        self.items.iter().any(|r| r.min_values().is_some())
    }

    /// These requirements with no `minValues`: the values each allows, and
    /// no count of them asked for.
    pub fn without_min_values(&self) -> Requirements {
        self.items
            .iter()
            .map(|r| r.clone().with_min_values(None))
            .collect()
    }

    /// Checks that, on every key both sides constrain, some value satisfies
    /// both. Keys on one side only are unconstrained on the other. A key
    /// whose sides are both `NotIn` or `DoesNotExist` passes even without a
    /// common value, since a node without the label satisfies both.
    ///
    /// Reports the first conflicting key in key order.
    pub fn intersects(&self, other: &Requirements) -> Result<(), IncompatibleError> {
        match self.first_conflict(other) {
            None => Ok(()),
            Some((existing, incoming)) => Err(IncompatibleError::Disjoint {
                incoming: Box::new(incoming.clone()),
                existing: Box::new(existing.clone()),
            }),
        }
    }

    /// Checks that `other` can be met by a node meeting `self`. Beyond
    /// [`intersects`](Self::intersects), every key of `other` that is not in
    /// `allow_undefined` must be defined by `self`, unless `other` only
    /// excludes values on it (`NotIn`, `DoesNotExist`). The check is
    /// asymmetric: `self` is the NodePool or node side, `other` the pod side.
    ///
    /// Pass the provider's [`WellKnownLabels`] to let a pod constrain labels
    /// whose values come from instance types; pass
    /// [`WellKnownLabels::empty`] for strict compatibility.
    pub fn compatible(
        &self,
        other: &Requirements,
        allow_undefined: &WellKnownLabels,
    ) -> Result<(), IncompatibleError> {
        if let Some(key) = self.first_undefined(other, allow_undefined) {
            return Err(IncompatibleError::UndefinedLabel {
                key: key.to_owned(),
                hint: self.typo_hint(key, allow_undefined).map(str::to_owned),
            });
        }
        self.intersects(other)
    }

    /// Whether [`intersects`](Self::intersects) succeeds, without building an
    /// error.
    pub fn is_intersecting(&self, other: &Requirements) -> bool {
        self.first_conflict(other).is_none()
    }

    /// Whether [`compatible`](Self::compatible) succeeds, without building an
    /// error.
    pub fn is_compatible(&self, other: &Requirements, allow_undefined: &WellKnownLabels) -> bool {
        self.first_undefined(other, allow_undefined).is_none()
            && self.first_conflict(other).is_none()
    }

    fn first_undefined<'a>(
        &self,
        other: &'a Requirements,
        allow_undefined: &WellKnownLabels,
    ) -> Option<&'a str> {
        other
            .items
            .iter()
            .find(|incoming| {
                let key = incoming.key();
                !allow_undefined.contains(key)
                    && !self.contains_key(key)
                    && !matches!(
                        incoming.operator(),
                        Operator::NotIn | Operator::DoesNotExist
                    )
            })
            .map(Requirement::key)
    }

    /// Merges the two sorted lists and returns the first key pair in conflict.
    fn first_conflict<'a>(
        &'a self,
        other: &'a Requirements,
    ) -> Option<(&'a Requirement, &'a Requirement)> {
        let (mut mine, mut theirs) = (self.items.iter().peekable(), other.items.iter().peekable());
        while let (Some(existing), Some(incoming)) = (mine.peek(), theirs.peek()) {
            match existing.key().cmp(incoming.key()) {
                std::cmp::Ordering::Less => {
                    mine.next();
                }
                std::cmp::Ordering::Greater => {
                    theirs.next();
                }
                std::cmp::Ordering::Equal => {
                    let pair = (*existing, *incoming);
                    let tolerated = only_excludes(pair.0) && only_excludes(pair.1);
                    if !tolerated && !pair.0.has_intersection(pair.1) {
                        return Some(pair);
                    }
                    mine.next();
                    theirs.next();
                }
            }
        }
        None
    }

    /// A key the undefined `key` may be a misspelling of: a well-known or
    /// defined key containing it, or ending with its name part.
    fn typo_hint<'a>(&'a self, key: &str, well_known: &'a WellKnownLabels) -> Option<&'a str> {
        let name = key.split_once('/').map_or(key, |(_, name)| name);
        well_known
            .iter()
            .chain(self.keys())
            .find(|candidate| candidate.contains(key) || candidate.ends_with(name))
    }

    /// The labels a node meeting these requirements must carry: each key
    /// whose requirement is `In` exactly one value.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.items
            .iter()
            .filter(|r| !r.is_complement() && r.values().len() == 1)
            .filter_map(|r| Some((r.key().to_owned(), r.values().next()?.to_owned())))
            .collect()
    }

    /// The requirements written out as NodeClaim requirements, in key order.
    /// See [`Requirement::to_selector_requirements`].
    pub fn to_selector_requirements(&self) -> Vec<SelectorRequirement> {
        self.items
            .iter()
            .flat_map(Requirement::to_selector_requirements)
            .collect()
    }
}

/// Upstream tolerates disjoint `NotIn`/`DoesNotExist` pairs.
fn only_excludes(requirement: &Requirement) -> bool {
    matches!(
        requirement.operator(),
        Operator::NotIn | Operator::DoesNotExist
    )
}

impl FromIterator<Requirement> for Requirements {
    /// Adds each requirement in turn.
    fn from_iter<I: IntoIterator<Item = Requirement>>(requirements: I) -> Self {
        let mut result = Requirements::new();
        result.extend(requirements);
        result
    }
}

impl Extend<Requirement> for Requirements {
    fn extend<I: IntoIterator<Item = Requirement>>(&mut self, requirements: I) {
        for requirement in requirements {
            self.add(requirement);
        }
    }
}

impl<'a> IntoIterator for &'a Requirements {
    type Item = &'a Requirement;
    type IntoIter = std::slice::Iter<'a, Requirement>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl fmt::Display for Requirements {
    /// The requirements in key order, separated by `, `, leaving out
    /// restricted labels such as the hostname, as upstream does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self
            .items
            .iter()
            .filter(|r| !RESTRICTED_LABELS.contains(&r.key()));
        for (index, requirement) in shown.enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

/// A pod's required node-affinity terms (ORed), empty when it has none.
pub fn required_node_affinity_terms(spec: &PodSpec) -> &[NodeSelectorTerm] {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|selector| selector.node_selector_terms.as_slice())
        .unwrap_or_default()
}

/// Whether a pod has a preferred node-affinity term that
/// [`Requirements::from_pod_spec`] would treat as required.
pub fn has_preferred_node_affinity(spec: &PodSpec) -> bool {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_some_and(|terms| !terms.is_empty())
}
