//! Label selectors over pods, as `metav1.LabelSelectorAsSelector` reads them,
//! and an index of many selectors by the label each requires.
//!
//! One reading serves the topology groups of provisioning and the
//! PodDisruptionBudgets of disruption, so the two never disagree on what a
//! selector picks (an invalid one picks nothing, as the API server would
//! have refused it). A selector is normalised (sorted, de-duplicated), so two
//! that select the same pods compare, and hash, equal: `matchLabels: {app:
//! web}` and `matchExpressions: [{key: app, operator: In, values: [web]}]`
//! are one selector. The plan validator keeps an independent reading of its
//! own (`provisioning/validate/pods.rs`): it checks the engine, so it does
//! not share the engine's code.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{validate_label_key, validate_label_value};
use crate::fast_hash::HashMap;

/// Read access to a pod's labels, borrowed (pending pods) or stored (placed
/// pods).
pub(crate) trait LabelSource {
    /// The value of label `key`, if the pod carries it.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSource for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A label selector operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One normalised selector expression; `values` sorted and unique.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Expression {
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
pub(crate) enum PodSelector {
    /// Selects no pod (a missing or invalid selector).
    Nothing,
    /// Selects the pods meeting every expression (all pods when there is
    /// none). Sorted and de-duplicated.
    All(Box<[Expression]>),
}

impl PodSelector {
    /// Reads `selector`, adding `key In [value]` for each of `extra` (the
    /// spread constraint's `matchLabelKeys`, resolved against the pod's own
    /// labels). Without a selector the extra keys are ignored, as
    /// Kubernetes forbids `matchLabelKeys` without a `labelSelector`.
    pub(crate) fn new<'s>(
        selector: Option<&LabelSelector>,
        extra: impl IntoIterator<Item = (&'s str, &'s str)>,
    ) -> PodSelector {
        let Some(selector) = selector else {
            return PodSelector::Nothing;
        };
        let mut expressions = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            if !valid_pair(key, value) {
                return PodSelector::Nothing;
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
                _ => return PodSelector::Nothing,
            };
            let values = expression.values.as_deref().unwrap_or_default();
            let wants_values = matches!(operator, SelectorOperator::In | SelectorOperator::NotIn);
            if values.is_empty() == wants_values
                || validate_label_key(&expression.key).is_err()
                || values.iter().any(|v| !valid_pair(&expression.key, v))
            {
                return PodSelector::Nothing;
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
                return PodSelector::Nothing;
            }
            expressions.push(Expression {
                key: key.into(),
                operator: SelectorOperator::In,
                values: Box::new([value.into()]),
            });
        }
        expressions.sort_unstable();
        expressions.dedup();
        PodSelector::All(expressions.into())
    }

    /// A label every selected pod carries with one of some values (the first
    /// `In` expression), to look selected pods up by; `None` when there is
    /// none.
    pub(crate) fn anchor(&self) -> Option<(&str, &[Box<str>])> {
        match self {
            PodSelector::Nothing => None,
            PodSelector::All(expressions) => expressions
                .iter()
                .find(|e| e.operator == SelectorOperator::In)
                .map(|e| (&*e.key, &*e.values)),
        }
    }

    /// Whether a pod with `labels` is selected.
    pub(crate) fn matches(&self, labels: &impl LabelSource) -> bool {
        match self {
            PodSelector::Nothing => false,
            PodSelector::All(expressions) => expressions.iter().all(|e| e.matches(labels)),
        }
    }
}

fn valid_pair(key: &str, value: &str) -> bool {
    validate_label_key(key).is_ok() && validate_label_value(key, value).is_ok()
}

/// Ids (of groups, budgets) by the label values their selectors require,
/// so that the selectors that may pick a pod are found from its few labels
/// instead of by asking every one.
#[derive(Clone, Debug, Default)]
pub(crate) struct AnchorIndex {
    /// Ids by label key and value: a group whose selector needs `key` to be
    /// one of some values is listed under each.
    by_label: HashMap<Arc<str>, HashMap<Arc<str>, Vec<usize>>>,
    /// Ids of groups whose selector needs no label value.
    rest: Vec<usize>,
}

impl AnchorIndex {
    /// Lists group `id` with `selector`.
    pub(crate) fn add(&mut self, id: usize, selector: &PodSelector) {
        match selector.anchor() {
            Some((key, values)) => {
                let by_value = self.by_label.entry(Arc::from(key)).or_default();
                for value in values {
                    by_value.entry(Arc::from(&**value)).or_default().push(id);
                }
            }
            None => self.rest.push(id),
        }
    }

    /// The ids of the groups that may select a pod with `labels`, ascending.
    pub(crate) fn candidates(&self, labels: &BTreeMap<String, String>) -> Vec<usize> {
        let mut ids = self.rest.clone();
        for (key, value) in labels {
            if let Some(listed) = self
                .by_label
                .get(key.as_str())
                .and_then(|by_value| by_value.get(value.as_str()))
            {
                ids.extend_from_slice(listed);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}
