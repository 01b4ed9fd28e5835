//! What a topology group counts beyond its label selector (which is
//! `scheduling::label_selector`'s): the namespaces it looks in, normalised
//! (sorted, de-duplicated) so that two terms that look in the same ones
//! compare, and hash, equal; and placed pods' labels as stored for counting.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::scheduling::label_selector::LabelSource;

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
