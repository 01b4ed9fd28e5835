//! The namespaces a topology group counts pods in, as upstream's
//! `buildNamespaceList` (`topology.go`) resolves a pod (anti-)affinity
//! term's: the pod's own namespace when the term names none and has no
//! `namespaceSelector`; otherwise the listed namespaces united with those
//! whose labels the selector selects.
//!
//! Upstream lists the cluster's Namespaces by the selector. The engine reads
//! the snapshot's Namespaces, and a namespace the snapshot lacks is read as
//! the API server would have made it: with only its
//! `kubernetes.io/metadata.name` label. A selector may therefore pick
//! namespaces the input never names (`{}` picks every one), so a resolved set
//! is either finite or every namespace but a finite few; both forms are
//! normalised (sorted, de-duplicated) so that two terms that pick the same
//! namespaces compare, and hash, equal.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::memo::GrowOnly;
use crate::scheduling::LABEL_NAMESPACE_NAME;
use crate::scheduling::label_selector::{LabelSource, PodSelector};

/// The namespaces a group counts pods in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Namespaces {
    /// The listed namespaces, sorted and unique.
    Listed(Box<[Box<str>]>),
    /// Every namespace except the listed ones (sorted, unique); with none
    /// listed, every namespace.
    AllBut(Box<[Box<str>]>),
}

impl Namespaces {
    /// Only `namespace`.
    pub(super) fn only(namespace: &str) -> Namespaces {
        Namespaces::Listed(Box::new([namespace.into()]))
    }

    /// Whether `namespace` is included.
    pub(super) fn contains(&self, namespace: &str) -> bool {
        let listed = |names: &[Box<str>]| names.binary_search_by(|n| (**n).cmp(namespace)).is_ok();
        match self {
            Namespaces::Listed(names) => listed(names),
            Namespaces::AllBut(names) => !listed(names),
        }
    }

    /// The included namespaces when they are finitely many; `None` when
    /// all but a few are.
    pub(super) fn listed(&self) -> Option<&[Box<str>]> {
        match self {
            Namespaces::Listed(names) => Some(names),
            Namespaces::AllBut(_) => None,
        }
    }
}

/// A namespace selector as read, with the namespaces its term lists beside
/// it, and what the two resolve to.
type Resolved = (PodSelector, Box<[Box<str>]>, Namespaces);

/// The cluster's Namespaces as `namespaceSelector` reads them: each one's
/// labels, by name.
#[derive(Debug, Default)]
pub(crate) struct NamespaceLabels {
    /// The labels of each Namespace of the input, by name, with its
    /// `kubernetes.io/metadata.name` label (set by the API server on every
    /// Namespace, so a hand-written document without it still has it).
    known: BTreeMap<Box<str>, BTreeMap<String, String>>,
    /// The terms resolved so far: a cluster has few distinct selectors and
    /// each would otherwise be matched against every Namespace for every pod
    /// that carries it.
    resolved: GrowOnly<Resolved>,
}

impl NamespaceLabels {
    /// Reads `namespaces` (one without a name names nothing and is left out;
    /// of two with one name, the first is kept).
    pub(crate) fn new(namespaces: &[Namespace]) -> NamespaceLabels {
        let mut known = BTreeMap::new();
        for namespace in namespaces {
            let Some(name) = namespace.metadata.name.as_deref().filter(|n| !n.is_empty()) else {
                continue;
            };
            known.entry(name.into()).or_insert_with(|| {
                let mut labels = namespace.metadata.labels.clone().unwrap_or_default();
                labels.insert(LABEL_NAMESPACE_NAME.to_owned(), name.to_owned());
                labels
            });
        }
        NamespaceLabels {
            known,
            resolved: GrowOnly::new(),
        }
    }

    /// The namespaces of a pod (anti-)affinity term of a pod in `own`: see
    /// the module documentation. A selector Kubernetes would reject selects
    /// no namespace (upstream fails to list by it).
    pub(super) fn for_term(
        &self,
        own: &str,
        listed: Option<&[String]>,
        selector: Option<&LabelSelector>,
    ) -> Namespaces {
        let mut names: Vec<Box<str>> = listed
            .unwrap_or_default()
            .iter()
            .map(|n| n.as_str().into())
            .collect();
        names.sort_unstable();
        names.dedup();
        let Some(selector) = selector else {
            return if names.is_empty() {
                Namespaces::only(own)
            } else {
                Namespaces::Listed(names.into())
            };
        };
        let reading = PodSelector::new(Some(selector), []);
        let listed: Box<[Box<str>]> = names.into();
        let (_, _, namespaces) = self.resolved.find_or_add(
            |(r, l, _)| *r == reading && *l == listed,
            || {
                let namespaces = self.select(selector, &reading, &listed);
                (reading.clone(), listed.clone(), namespaces)
            },
        );
        namespaces.clone()
    }

    /// The namespaces `listed` or picked by `reading` (which is `selector`
    /// read).
    ///
    /// Every namespace neither in the input, nor listed, nor named by the
    /// selector's `kubernetes.io/metadata.name` expressions has the same
    /// labels to the selector (only a name it does not mention), so one
    /// stand-in decides them all: if it is picked, the result is every
    /// namespace but the named ones not picked, else the named ones picked.
    fn select(
        &self,
        selector: &LabelSelector,
        reading: &PodSelector,
        listed: &[Box<str>],
    ) -> Namespaces {
        let mut named: BTreeSet<&str> = self.known.keys().map(|n| &**n).collect();
        named.extend(listed.iter().map(|n| &**n));
        named.extend(names_in(selector));
        let picks = |name: &str| {
            listed.binary_search_by(|n| (**n).cmp(name)).is_ok()
                || match self.known.get(name) {
                    Some(labels) => reading.matches(labels),
                    None => reading.matches(&NameOnly(name)),
                }
        };
        // Longer than every named namespace, so none of them.
        let longest = named.iter().map(|n| n.len()).max().unwrap_or_default();
        let stand_in = "-".repeat(longest + 1);
        let others_picked = reading.matches(&NameOnly(&stand_in));
        let chosen: Box<[Box<str>]> = named
            .into_iter()
            .filter(|name| picks(name) != others_picked)
            .map(Box::from)
            .collect();
        if others_picked {
            Namespaces::AllBut(chosen)
        } else {
            Namespaces::Listed(chosen)
        }
    }
}

/// The namespace names a selector mentions on `kubernetes.io/metadata.name`.
fn names_in(selector: &LabelSelector) -> impl Iterator<Item = &str> {
    let labels = selector
        .match_labels
        .iter()
        .flatten()
        .filter(|(key, _)| *key == LABEL_NAMESPACE_NAME)
        .map(|(_, value)| value.as_str());
    let expressions = selector
        .match_expressions
        .iter()
        .flatten()
        .filter(|e| e.key == LABEL_NAMESPACE_NAME)
        .flat_map(|e| e.values.iter().flatten().map(String::as_str));
    labels.chain(expressions)
}

/// The labels of a namespace the input does not hold: its name label only.
struct NameOnly<'a>(&'a str);

impl LabelSource for NameOnly<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        (key == LABEL_NAMESPACE_NAME).then_some(self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector, LabelSelectorRequirement, ObjectMeta,
    };

    use super::{NamespaceLabels, Namespaces};

    fn namespace(name: &str, labels: &[(&str, &str)]) -> Namespace {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: (!labels.is_empty()).then_some(labels),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
    }

    fn match_labels(labels: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            match_expressions: None,
        }
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.to_owned(),
                operator: operator.to_owned(),
                values: (!values.is_empty())
                    .then(|| values.iter().map(|v| (*v).to_owned()).collect()),
            }]),
        }
    }

    fn cluster() -> NamespaceLabels {
        NamespaceLabels::new(&[
            namespace("prod-a", &[("env", "prod")]),
            namespace("prod-b", &[("env", "prod")]),
            namespace("dev", &[("env", "dev")]),
        ])
    }

    fn names(list: &[&str]) -> Box<[Box<str>]> {
        list.iter().map(|n| Box::from(*n)).collect()
    }

    #[test]
    fn no_list_and_no_selector_is_the_pods_own_namespace() {
        let resolved = cluster().for_term("web", None, None);
        assert_eq!(resolved, Namespaces::only("web"));
        assert!(resolved.contains("web"));
        assert!(!resolved.contains("prod-a"));
    }

    #[test]
    fn a_list_without_a_selector_is_the_list() {
        let listed = ["dev".to_owned(), "ops".to_owned(), "dev".to_owned()];
        let resolved = cluster().for_term("web", Some(&listed), None);
        assert_eq!(resolved, Namespaces::Listed(names(&["dev", "ops"])));
    }

    #[test]
    fn a_selector_picks_the_namespaces_whose_labels_match_and_the_list() {
        let selector = match_labels(&[("env", "prod")]);
        let resolved = cluster().for_term("web", None, Some(&selector));
        assert_eq!(resolved, Namespaces::Listed(names(&["prod-a", "prod-b"])));
        // The pod's own namespace is not added when a selector is given.
        assert!(!resolved.contains("web"));
        let listed = ["ops".to_owned()];
        let resolved = cluster().for_term("web", Some(&listed), Some(&selector));
        assert_eq!(
            resolved,
            Namespaces::Listed(names(&["ops", "prod-a", "prod-b"]))
        );
    }

    #[test]
    fn an_empty_selector_picks_every_namespace_in_the_input_or_not() {
        let resolved = cluster().for_term("web", None, Some(&LabelSelector::default()));
        assert_eq!(resolved, Namespaces::AllBut(names(&[])));
        assert!(resolved.contains("not-in-the-input"));
    }

    #[test]
    fn a_namespace_not_in_the_input_has_only_its_name_label() {
        let exists = expression("env", "DoesNotExist", &[]);
        let resolved = cluster().for_term("web", None, Some(&exists));
        // Every namespace without `env`: all but the three in the input.
        assert_eq!(
            resolved,
            Namespaces::AllBut(names(&["dev", "prod-a", "prod-b"]))
        );
        assert!(resolved.contains("elsewhere"));
        let by_name = match_labels(&[("kubernetes.io/metadata.name", "elsewhere")]);
        let resolved = cluster().for_term("web", None, Some(&by_name));
        assert_eq!(resolved, Namespaces::Listed(names(&["elsewhere"])));
        let not_named = expression("kubernetes.io/metadata.name", "NotIn", &["dev", "ops"]);
        let resolved = cluster().for_term("web", None, Some(&not_named));
        assert_eq!(resolved, Namespaces::AllBut(names(&["dev", "ops"])));
    }

    #[test]
    fn a_documents_own_name_label_is_the_api_servers() {
        let labels = NamespaceLabels::new(&[namespace(
            "dev",
            &[("kubernetes.io/metadata.name", "something-else")],
        )]);
        let by_name = match_labels(&[("kubernetes.io/metadata.name", "dev")]);
        let resolved = labels.for_term("web", None, Some(&by_name));
        assert_eq!(resolved, Namespaces::Listed(names(&["dev"])));
    }

    #[test]
    fn an_invalid_selector_picks_only_the_list() {
        let invalid = expression("env", "Sometimes", &["prod"]);
        let resolved = cluster().for_term("web", None, Some(&invalid));
        assert_eq!(resolved, Namespaces::Listed(names(&[])));
        let listed = ["dev".to_owned()];
        let resolved = cluster().for_term("web", Some(&listed), Some(&invalid));
        assert_eq!(resolved, Namespaces::Listed(names(&["dev"])));
    }

    #[test]
    fn selectors_picking_the_same_namespaces_resolve_equal() {
        let labels = cluster();
        let by_labels = labels.for_term("web", None, Some(&match_labels(&[("env", "dev")])));
        let by_name = labels.for_term(
            "web",
            None,
            Some(&expression("kubernetes.io/metadata.name", "In", &["dev"])),
        );
        assert_eq!(by_labels, by_name);
        // Asked again, the memo answers the same.
        let again = labels.for_term("web", None, Some(&match_labels(&[("env", "dev")])));
        assert_eq!(again, by_labels);
    }
}
