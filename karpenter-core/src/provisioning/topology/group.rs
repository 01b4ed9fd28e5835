//! One topology group: the pods a constraint counts, per domain of its key,
//! and the choice of domain for a pod, after upstream's `topologygroup.go`.
//!
//! Domains are kept in sorted maps, so every scan visits them in name order
//! and ties (equal counts, several empty domains) always go to the first name.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PodAffinityTerm, PodSpec};

use super::domain_counts::DomainCounts;
use super::filter::NodeFilter;
use super::inputs::PodView;
use super::namespaces::{NamespaceLabels, Namespaces};
use crate::scheduling::label_selector::{LabelSource, PodSelector};
use crate::scheduling::{LABEL_HOSTNAME, Requirement, normalize_label_key};

/// What a group constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum GroupKind {
    /// A topology spread constraint: keep counts within `maxSkew`.
    Spread,
    /// Pod affinity: go where a selected pod is.
    Affinity,
    /// Pod anti-affinity: go where no selected pod is.
    AntiAffinity,
}

/// What makes two constraints the same group, after upstream's
/// `TopologyGroup.Hash`: a hundred replicas with the same constraint share one
/// group (and its counts) instead of a hundred.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct GroupIdentity {
    /// What the group constrains.
    pub(super) kind: GroupKind,
    /// The topology key (normalised).
    pub(super) key: Arc<str>,
    /// Where selected pods are looked for.
    pub(super) namespaces: Namespaces,
    /// Which pods are counted.
    pub(super) selector: PodSelector,
    /// The spread constraint's `maxSkew`; `i32::MAX` for (anti-)affinity.
    pub(super) max_skew: i32,
    /// The spread constraint's `minDomains`.
    pub(super) min_domains: Option<i32>,
    /// Which nodes are counted.
    pub(super) filter: NodeFilter,
}

/// The domains a side (the pod, or the node) allows for the group's key:
/// `None` when that side does not constrain the key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Allowed<'r>(pub(super) Option<&'r Requirement>);

impl<'r> Allowed<'r> {
    /// Whether `domain` is allowed.
    fn has(self, domain: &str) -> bool {
        self.0.is_none_or(|r| r.has(domain))
    }

    /// The allowed domains when they are a listed (`In`) set.
    fn listed(self) -> Option<&'r Requirement> {
        self.0.filter(|r| !r.is_complement())
    }

    /// The one allowed domain, when exactly one is listed.
    fn single(self) -> Option<&'r str> {
        let mut values = self.listed()?.values();
        if values.len() == 1 {
            values.next()
        } else {
            None
        }
    }

    /// Whether every domain is allowed.
    fn unconstrained(self) -> bool {
        self.0.is_none_or(|r| {
            r.is_complement()
                && r.values().len() == 0
                && r.lower_bound().is_none()
                && r.upper_bound().is_none()
        })
    }
}

/// A topology group with its per-domain counts of selected pods.
#[derive(Clone, Debug)]
pub(super) struct Group {
    /// What the group is.
    pub(super) identity: GroupIdentity,
    /// Whether the key is `kubernetes.io/hostname`, where a new domain can
    /// always be made.
    hostname: bool,
    /// Whether this is an inverse anti-affinity group: the required
    /// anti-affinity of other pods, checked for the pods it selects.
    pub(super) inverse: bool,
    /// Its key's slot in the topology's key list.
    pub(super) slot: usize,
    /// The known domains and the selected pods in each.
    counts: DomainCounts,
}

impl Group {
    /// A group that knows no domain yet.
    pub(super) fn new(identity: GroupIdentity) -> Group {
        Group {
            hostname: &*identity.key == LABEL_HOSTNAME,
            inverse: false,
            slot: 0,
            identity,
            counts: DomainCounts::default(),
        }
    }

    /// The topology key.
    pub(super) fn key(&self) -> &Arc<str> {
        &self.identity.key
    }

    /// How many domains the group knows.
    pub(super) fn known_domains(&self) -> usize {
        self.counts.len()
    }

    /// A group of `identity` knowing the domains of `shared` (shared with
    /// other groups), with no pod counted yet.
    pub(super) fn over(identity: GroupIdentity, shared: Arc<BTreeSet<Arc<str>>>) -> Group {
        let mut group = Group::new(identity);
        group.counts = DomainCounts::over(shared);
        group
    }

    /// Makes `domain` known, with no pod if it was not known yet.
    pub(super) fn register(&mut self, domain: &Arc<str>) {
        self.counts.register(domain);
    }

    /// Counts one more selected pod in `domain`.
    pub(super) fn record(&mut self, domain: &str) {
        self.counts.record(domain);
    }

    /// Counts one selected pod fewer in `domain` (a pod taken out with its
    /// node); the domain stays known.
    pub(super) fn unrecord(&mut self, domain: &str) {
        self.counts.unrecord(domain);
    }

    /// Makes `domain` unknown again (the only node that had it is gone).
    pub(super) fn forget(&mut self, domain: &str) {
        self.counts.forget(domain);
    }

    /// The selected pods counted in `domain`.
    pub(super) fn count_of(&self, domain: &str) -> u32 {
        self.counts.count(domain)
    }

    /// Whether a pod in `namespace` with `labels` is selected.
    pub(super) fn selects(&self, namespace: &str, labels: &impl LabelSource) -> bool {
        self.identity.namespaces.contains(namespace) && self.identity.selector.matches(labels)
    }

    fn count(&self, domain: &str) -> i64 {
        i64::from(self.counts.count(domain))
    }

    /// The domains a pod may go to, given the domains it allows (its strict
    /// requirements) and those the node allows; empty when there is none.
    /// `self_selecting` says whether the group selects the pod itself.
    pub(super) fn next_domains<'a>(
        &'a self,
        self_selecting: bool,
        pod: Allowed<'a>,
        node: Allowed<'a>,
    ) -> Vec<&'a str> {
        match self.identity.kind {
            GroupKind::Spread => self
                .next_spread(self_selecting, pod, node)
                .into_iter()
                .collect(),
            GroupKind::Affinity => self.next_affinity(self_selecting, pod, node),
            GroupKind::AntiAffinity => self.next_anti_affinity(pod, node),
        }
    }

    /// Whether [`next_domains`](Self::next_domains) would find a domain,
    /// without collecting them: the scheduler asks this of every claim it
    /// passes over, and most answers are no.
    pub(super) fn has_next_domain(
        &self,
        self_selecting: bool,
        pod: Allowed<'_>,
        node: Allowed<'_>,
    ) -> bool {
        match self.identity.kind {
            GroupKind::Spread => self.next_spread(self_selecting, pod, node).is_some(),
            GroupKind::Affinity => self.has_next_affinity(self_selecting, pod, node),
            GroupKind::AntiAffinity => self.has_next_anti_affinity(pod, node),
        }
    }

    /// Whether [`next_affinity`](Self::next_affinity) is non-empty.
    fn has_next_affinity(&self, self_selecting: bool, pod: Allowed<'_>, node: Allowed<'_>) -> bool {
        let may_start = || self_selecting && (self.all_empty() || !self.any_occupied(pod));
        if self.hostname
            && let Some(host) = node.single()
        {
            return pod.has(host) && (self.count(host) > 0 || may_start());
        }
        let occupied = match node.listed() {
            Some(listed) => listed
                .values()
                .any(|domain| pod.has(domain) && self.count(domain) > 0),
            None => self
                .counts
                .occupied()
                .any(|(domain, _)| pod.has(domain) && node.has(domain)),
        };
        // Starting the group needs a domain the pod allows (the node's choice
        // comes from the same domains, so it adds none the pod's would not).
        occupied || (may_start() && self.counts.domains().any(|d| pod.has(d)))
    }

    /// Whether [`next_anti_affinity`](Self::next_anti_affinity) is non-empty.
    fn has_next_anti_affinity(&self, pod: Allowed<'_>, node: Allowed<'_>) -> bool {
        if self.hostname
            && let Some(host) = node.single()
        {
            return self.count(host) == 0;
        }
        match node.listed() {
            Some(listed) if listed.values().len() < self.counts.empty_len() => listed
                .values()
                .any(|domain| self.counts.is_empty_domain(domain) && pod.has(domain)),
            _ => self
                .counts
                .empty_domains()
                .any(|domain| node.has(domain) && pod.has(domain)),
        }
    }

    /// Upstream's `nextDomainTopologySpread`: the lowest-count domain the
    /// node allows whose count, with the pod if it selects itself, stays
    /// within `maxSkew` of the minimum over the domains the pod allows.
    fn next_spread<'a>(
        &'a self,
        self_selecting: bool,
        pod: Allowed<'a>,
        node: Allowed<'a>,
    ) -> Option<&'a str> {
        let own = i64::from(self_selecting);
        let max_skew = i64::from(self.identity.max_skew);
        // A node has exactly one hostname, and another host can always be
        // made, so the global minimum is zero and only this host matters.
        if self.hostname
            && let Some(host) = node.single()
        {
            return (self.count(host) + own <= max_skew).then_some(host);
        }
        let min = self.min_count(pod);
        let mut best: Option<(&str, i64)> = None;
        let mut consider = |domain: &'a str, count: u32| {
            let count = i64::from(count) + own;
            let within_skew = min.is_none_or(|min| count - min <= max_skew);
            if within_skew && best.is_none_or(|(_, lowest)| count < lowest) {
                best = Some((domain, count));
            }
        };
        match node.listed() {
            Some(listed) => {
                for domain in listed.values() {
                    if let Some(count) = self.counts.get(domain) {
                        consider(domain, count);
                    }
                }
            }
            None => {
                for (domain, count) in self.counts.iter() {
                    if node.has(domain) {
                        consider(domain, count);
                    }
                }
            }
        }
        best.map(|(domain, _)| domain)
    }

    /// Upstream's `domainMinCount`: the lowest count among the domains the
    /// pod allows; zero for hostnames, and zero while fewer than `minDomains`
    /// domains are eligible. `None` when no domain is eligible (every count
    /// is then within skew, as upstream's `MaxInt32` minimum makes it).
    fn min_count(&self, pod: Allowed<'_>) -> Option<i64> {
        if self.hostname {
            return Some(0);
        }
        let mut eligible: i64 = 0;
        let mut min: Option<u32> = None;
        for (domain, count) in self.counts.iter() {
            if pod.has(domain) {
                eligible += 1;
                min = Some(min.map_or(count, |m| m.min(count)));
            }
        }
        if self
            .identity
            .min_domains
            .is_some_and(|wanted| eligible < i64::from(wanted))
        {
            return Some(0);
        }
        min.map(i64::from)
    }

    /// Upstream's `nextDomainAffinity`: the domains both sides allow that
    /// hold a selected pod; if none does and the pod selects itself, it may
    /// start the group in a domain of its choosing (the first the pod and
    /// node allow, and the first the pod allows).
    fn next_affinity<'a>(
        &'a self,
        self_selecting: bool,
        pod: Allowed<'a>,
        node: Allowed<'a>,
    ) -> Vec<&'a str> {
        let may_start = || self_selecting && (self.all_empty() || !self.any_occupied(pod));
        if self.hostname
            && let Some(host) = node.single()
        {
            let ok = pod.has(host) && (self.count(host) > 0 || may_start());
            return if ok { vec![host] } else { Vec::new() };
        }
        let mut options: Vec<&str> = match node.listed() {
            Some(listed) => listed
                .values()
                .filter(|domain| pod.has(domain) && self.count(domain) > 0)
                .collect(),
            None => self
                .counts
                .occupied()
                .filter(|(domain, _)| pod.has(domain) && node.has(domain))
                .map(|(domain, _)| &**domain)
                .collect(),
        };
        if options.is_empty() && may_start() {
            let domains = || self.counts.domains().map(|d| &**d);
            if let Some(both) = domains().find(|d| pod.has(d) && node.has(d)) {
                options.push(both);
            }
            if let Some(first) = domains().find(|d| pod.has(d))
                && !options.contains(&first)
            {
                options.push(first);
            }
        }
        options
    }

    /// Upstream's `nextDomainAntiAffinity`: the domains both sides allow that
    /// hold no selected pod.
    fn next_anti_affinity<'a>(&'a self, pod: Allowed<'a>, node: Allowed<'a>) -> Vec<&'a str> {
        if self.hostname
            && let Some(host) = node.single()
        {
            return if self.count(host) == 0 {
                vec![host]
            } else {
                Vec::new()
            };
        }
        match node.listed() {
            Some(listed) if listed.values().len() < self.counts.empty_len() => listed
                .values()
                .filter(|domain| self.counts.is_empty_domain(domain) && pod.has(domain))
                .collect(),
            _ => self
                .counts
                .empty_domains()
                .map(|domain| &**domain)
                .filter(|domain| node.has(domain) && pod.has(domain))
                .collect(),
        }
    }

    fn all_empty(&self) -> bool {
        self.counts.all_empty()
    }

    /// Upstream's `anyCompatiblePodDomain`: whether a domain the pod allows
    /// holds a selected pod.
    fn any_occupied(&self, pod: Allowed<'_>) -> bool {
        if pod.unconstrained() {
            return !self.all_empty();
        }
        self.counts.occupied().any(|(domain, _)| pod.has(domain))
    }
}

/// A label key as groups compare it.
pub(super) fn normalized_key(key: &str) -> Arc<str> {
    Arc::from(normalize_label_key(key))
}

/// The identity of a pod (anti-)affinity term of `pod`, its namespaces
/// resolved against the cluster's.
pub(super) fn affinity_identity(
    kind: GroupKind,
    pod: &PodView<'_>,
    term: &PodAffinityTerm,
    cluster: &NamespaceLabels,
) -> GroupIdentity {
    GroupIdentity {
        kind,
        key: normalized_key(&term.topology_key),
        namespaces: cluster.for_term(
            pod.namespace,
            term.namespaces.as_deref(),
            term.namespace_selector.as_ref(),
        ),
        selector: PodSelector::new(term.label_selector.as_ref(), []),
        max_skew: i32::MAX,
        min_domains: None,
        filter: NodeFilter::everything(),
    }
}

pub(super) fn anti_affinity_identity(
    pod: &PodView<'_>,
    term: &PodAffinityTerm,
    cluster: &NamespaceLabels,
) -> GroupIdentity {
    affinity_identity(GroupKind::AntiAffinity, pod, term, cluster)
}

/// The pod's required anti-affinity terms (upstream tracks no preferred ones
/// in reverse).
pub(super) fn required_anti_affinity(spec: &PodSpec) -> impl Iterator<Item = &PodAffinityTerm> {
    spec.affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
}
