//! Which pods a topology group counts: a label selector with Kubernetes'
//! `metav1.LabelSelector` semantics, and the namespaces it looks in.
//!
//! Both are normalised (sorted, de-duplicated) so that two terms that select
//! the same pods compare, and hash, equal: `matchLabels: {app: web}` and
//! `matchExpressions: [{key: app, operator: In, values: [web]}]` are one
//! selector.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::scheduling::{validate_label_key, validate_label_value};

/// Read access to a pod's labels, borrowed (pending pods) or stored (placed
/// pods).
pub(super) trait LabelSource {
    /// The value of label `key`, if the pod carries it.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSource for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A placed pod's labels as stored for later counting: sorted by key, with
/// strings shared among pods that carry the same ones.
#[derive(Clone, Debug, Default)]
pub(super) struct StoredLabels(Box<[(Arc<str>, Arc<str>)]>);

impl StoredLabels {
    /// Stores `labels`, taking each string from `intern` so that equal
    /// strings share one allocation.
    pub(super) fn new<'s>(
        labels: &'s BTreeMap<String, String>,
        mut intern: impl FnMut(&'s str) -> Arc<str>,
    ) -> StoredLabels {
        // A BTreeMap iterates in key order, so the result is sorted.
        StoredLabels(
            labels
                .iter()
                .map(|(key, value)| (intern(key), intern(value)))
                .collect(),
        )
    }
}

impl StoredLabels {
    /// The labels, sorted by key.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Arc<str>)> + '_ {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl LabelSource for StoredLabels {
    fn label(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|at| &*self.0[at].1)
    }
}

/// A label selector operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One normalised selector expression; `values` sorted and unique.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Expression {
    key: Box<str>,
    operator: SelectorOperator,
    values: Box<[Box<str>]>,
}

impl Expression {
    fn matches(&self, labels: &impl LabelSource) -> bool {
        let value = labels.label(&self.key);
        let listed = |value: &str| self.values.binary_search_by(|v| (**v).cmp(value)).is_ok();
        match self.operator {
            SelectorOperator::In => value.is_some_and(listed),
            SelectorOperator::NotIn => !value.is_some_and(listed),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

/// A pod label selector as `metav1.LabelSelectorAsSelector` reads it: no
/// selector, or one Kubernetes would reject, selects nothing; an empty one
/// selects everything; otherwise every expression must hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Selector {
    /// Selects no pod (a missing or invalid selector).
    Nothing,
    /// Selects the pods meeting every expression (all pods when there is
    /// none). Sorted and de-duplicated.
    All(Box<[Expression]>),
}

impl Selector {
    /// Reads `selector`, adding `key In [value]` for each of `extra` (the
    /// spread constraint's `matchLabelKeys`, resolved against the pod's own
    /// labels). Without a selector the extra keys are ignored, as
    /// Kubernetes forbids `matchLabelKeys` without a `labelSelector`.
    pub(super) fn new<'s>(
        selector: Option<&LabelSelector>,
        extra: impl IntoIterator<Item = (&'s str, &'s str)>,
    ) -> Selector {
        let Some(selector) = selector else {
            return Selector::Nothing;
        };
        let mut expressions = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            if !valid_pair(key, value) {
                return Selector::Nothing;
            }
            expressions.push(Expression {
                key: key.as_str().into(),
                operator: SelectorOperator::In,
                values: Box::new([value.as_str().into()]),
            });
        }
        for expression in selector.match_expressions.iter().flatten() {
            let operator = match expression.operator.as_str() {
                "In" => SelectorOperator::In,
                "NotIn" => SelectorOperator::NotIn,
                "Exists" => SelectorOperator::Exists,
                "DoesNotExist" => SelectorOperator::DoesNotExist,
                _ => return Selector::Nothing,
            };
            let values = expression.values.as_deref().unwrap_or_default();
            let wants_values = matches!(operator, SelectorOperator::In | SelectorOperator::NotIn);
            if values.is_empty() == wants_values
                || validate_label_key(&expression.key).is_err()
                || values.iter().any(|v| !valid_pair(&expression.key, v))
            {
                return Selector::Nothing;
            }
            let mut values: Vec<Box<str>> = values.iter().map(|v| v.as_str().into()).collect();
            values.sort_unstable();
            values.dedup();
            expressions.push(Expression {
                key: expression.key.as_str().into(),
                operator,
                values: values.into(),
            });
        }
        for (key, value) in extra {
            if !valid_pair(key, value) {
                return Selector::Nothing;
            }
            expressions.push(Expression {
                key: key.into(),
                operator: SelectorOperator::In,
                values: Box::new([value.into()]),
            });
        }
        expressions.sort_unstable();
        expressions.dedup();
        Selector::All(expressions.into())
    }

    /// A label every selected pod carries with one of some values (the first
    /// `In` expression), to look selected pods up by; `None` when there is
    /// none.
    pub(super) fn anchor(&self) -> Option<(&str, &[Box<str>])> {
        match self {
            Selector::Nothing => None,
            Selector::All(expressions) => expressions
                .iter()
                .find(|e| e.operator == SelectorOperator::In)
                .map(|e| (&*e.key, &*e.values)),
        }
    }

    /// Whether a pod with `labels` is selected.
    pub(super) fn matches(&self, labels: &impl LabelSource) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::All(expressions) => expressions.iter().all(|e| e.matches(labels)),
        }
    }
}

fn valid_pair(key: &str, value: &str) -> bool {
    validate_label_key(key).is_ok() && validate_label_value(key, value).is_ok()
}

/// The namespaces a group counts pods in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Namespaces {
    /// Every namespace.
    Any,
    /// The listed namespaces, sorted and unique.
    Listed(Box<[Box<str>]>),
}

impl Namespaces {
    /// Only `namespace`.
    pub(super) fn only(namespace: &str) -> Namespaces {
        Namespaces::Listed(Box::new([namespace.into()]))
    }

    /// The namespaces of a pod (anti-)affinity term, after upstream's
    /// `buildNamespaceList`: the pod's own when the term names none and has
    /// no namespace selector, else the listed ones plus those the selector
    /// picks.
    ///
    /// Namespace labels are not part of the engine's input, so a selector is
    /// read without them: an empty selector (`{}`) picks every namespace, and
    /// any other picks none beyond the listed ones.
    pub(super) fn for_term(
        own: &str,
        listed: Option<&[String]>,
        selector: Option<&LabelSelector>,
    ) -> Namespaces {
        let listed = listed.unwrap_or_default();
        match selector {
            None if listed.is_empty() => Namespaces::only(own),
            Some(selector) if is_empty_selector(selector) => Namespaces::Any,
            _ => {
                let mut names: Vec<Box<str>> = listed.iter().map(|n| n.as_str().into()).collect();
                names.sort_unstable();
                names.dedup();
                Namespaces::Listed(names.into())
            }
        }
    }

    /// Whether `namespace` is included.
    pub(super) fn contains(&self, namespace: &str) -> bool {
        match self {
            Namespaces::Any => true,
            Namespaces::Listed(names) => names.binary_search_by(|n| (**n).cmp(namespace)).is_ok(),
        }
    }

    /// The listed namespaces; `None` for every namespace.
    pub(super) fn listed(&self) -> Option<&[Box<str>]> {
        match self {
            Namespaces::Any => None,
            Namespaces::Listed(names) => Some(names),
        }
    }
}

fn is_empty_selector(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}
