//! PodDisruptionBudgets as Karpenter's disruption reads them (upstream
//! `pkg/utils/pdb`): which budgets select a pod, whether they let it be
//! evicted now, and whether they never will.

use std::collections::BTreeMap;

use super::PodFields;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

#[cfg(test)]
use super::PodKey;
use super::{PodBlock, do_not_disrupt, goes_through_eviction, is_reschedulable, pod_key};
use crate::scheduling::label_selector::{AnchorIndex, PodSelector};

/// The PodDisruptionBudgets of a cluster, indexed for matching pods.
///
/// A budget selects the pods of its own namespace that its label selector
/// selects, as `metav1.LabelSelectorAsSelector` reads it: no selector selects
/// nothing, an empty one (`{}`) every pod. A selector Kubernetes would reject
/// (an invalid key or value, an unknown operator, `In` without values) selects
/// nothing; the API server never admits one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pdbs<'a> {
    /// The budgets by namespace, each list sorted by name so that answers
    /// come out in one order whatever the input's.
    by_namespace: BTreeMap<&'a str, Namespace<'a>>,
}

/// The budgets of one namespace, sorted by name, indexed by a label each
/// selector requires, so a pod is matched only against the budgets that
/// could select it.
#[derive(Clone, Debug, Default)]
struct Namespace<'a> {
    budgets: Vec<Budget<'a>>,
    /// Budgets (indices) by the label values their selectors require.
    anchors: AnchorIndex,
}

/// One budget, read once.
#[derive(Clone, Debug)]
struct Budget<'a> {
    name: &'a str,
    /// `namespace/name`.
    key: String,
    selector: PodSelector,
    /// `status.disruptionsAllowed`; 0 without a status, as upstream reads the
    /// zero value of a budget the disruption controller has not seen yet.
    disruptions_allowed: i32,
    /// Whether it forbids every voluntary eviction, whatever the pod count.
    fully_blocking: bool,
    /// `unhealthyPodEvictionPolicy: AlwaysAllow`.
    evicts_unready: bool,
}

impl<'a> Pdbs<'a> {
    /// Indexes `pdbs`. A budget without a namespace is read as in `default`,
    /// as pods are.
    pub(crate) fn new(pdbs: &'a [PodDisruptionBudget]) -> Self {
        let mut by_namespace: BTreeMap<&'a str, Namespace<'a>> = BTreeMap::new();
        for pdb in pdbs {
            let namespace = pdb.metadata.namespace.as_deref().unwrap_or("default");
            by_namespace
                .entry(namespace)
                .or_default()
                .budgets
                .push(Budget::new(namespace, pdb));
        }
        for namespace in by_namespace.values_mut() {
            namespace.budgets.sort_by(|a, b| a.name.cmp(b.name));
            for (i, budget) in namespace.budgets.iter().enumerate() {
                namespace.anchors.add(i, &budget.selector);
            }
        }
        Self { by_namespace }
    }

    /// The names of the budgets that select `pod`, sorted: what the tests
    /// read of the selection that [`blocks`](Self::blocks) acts on.
    #[cfg(test)]
    fn matching(&self, pod: &(impl PodFields + ?Sized)) -> Vec<&'a str> {
        self.selecting(pod).map(|budget| budget.name).collect()
    }

    /// Why the budgets refuse to let `pod` be evicted now, if they do
    /// (upstream `Limits.CanEvictPods`): more than one budget selects it (the
    /// eviction API refuses such a pod), or its one budget allows no
    /// disruption — unless that budget has `unhealthyPodEvictionPolicy:
    /// AlwaysAllow` and the pod's Ready condition is `False`.
    ///
    /// Only pods that draining would evict are judged: a finished, terminating
    /// or static pod, or one tolerating the `karpenter.sh/disrupted:NoSchedule`
    /// taint, is never blocked. Nor is the `karpenter.sh/do-not-disrupt`
    /// annotation considered; ask [`do_not_disrupt`] first, as upstream does.
    pub(crate) fn blocks(&self, pod: &(impl PodFields + ?Sized)) -> Option<PodBlock> {
        // Upstream tests `== 0`; a negative count, which the API server never
        // stores, refuses eviction too, as the eviction API does.
        self.refusal(pod, |budget| budget.disruptions_allowed <= 0)
    }

    /// Whether the budgets will never let `pod` be evicted, however many
    /// replicas run (upstream `isFullyBlocked`): more than one budget selects
    /// it, or its one budget has `maxUnavailable` `0` or `"0%"`, or
    /// `minAvailable` `"100%"`, with the same exceptions as
    /// [`blocks`](Self::blocks). Provisioning no room for such a pod avoids
    /// capacity it could never move to.
    pub(crate) fn fully_blocks(&self, pod: &(impl PodFields + ?Sized)) -> bool {
        self.refusal(pod, |budget| budget.fully_blocking).is_some()
    }

    /// Whether `pod` needs a new home at `now` when its node goes (upstream
    /// `Limits.IsCurrentlyReschedulable`): provisioning plans for such pods of
    /// the nodes being deleted, and a disruption simulation must place them.
    /// It is
    /// [reschedulable](is_reschedulable), not protected by
    /// [`do_not_disrupt`], and not [fully blocked](Self::fully_blocks).
    pub(crate) fn is_currently_reschedulable(
        &self,
        pod: &(impl PodFields + ?Sized),
        now: Timestamp,
    ) -> bool {
        is_reschedulable(pod) && do_not_disrupt(pod, now).is_none() && !self.fully_blocks(pod)
    }

    fn selecting(&self, pod: &(impl PodFields + ?Sized)) -> impl Iterator<Item = &Budget<'a>> {
        let namespace = pod.metadata().namespace.as_deref().unwrap_or("default");
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        let labels = pod.metadata().labels.as_ref().unwrap_or(&NO_LABELS);
        let budgets = self.by_namespace.get(namespace);
        // The budgets that could select the pod, in name order.
        let candidates = budgets.map(|n| n.anchors.candidates(labels));
        candidates
            .into_iter()
            .flatten()
            .filter_map(move |i| budgets.map(|n| &n.budgets[i]))
            .filter(move |budget| budget.selector.matches(labels))
    }

    /// The block when the budgets refuse the pod's eviction, `refuses` telling
    /// whether a lone budget does.
    fn refusal(
        &self,
        pod: &(impl PodFields + ?Sized),
        refuses: impl Fn(&Budget<'a>) -> bool,
    ) -> Option<PodBlock> {
        if !goes_through_eviction(pod) {
            return None;
        }
        // Most pods have no budget or one: the budgets are counted as they
        // come, and listed only when there are several.
        let mut selecting = self.selecting(pod);
        let first = selecting.next()?;
        match selecting.next() {
            None if first.evicts_unready && is_unready(pod) => None,
            None => refuses(first).then(|| PodBlock::PdbAllowsNone {
                pod: pod_key(pod),
                pdb: first.key.clone(),
            }),
            Some(second) => Some(PodBlock::MultiplePdbs {
                pod: pod_key(pod),
                pdbs: [first, second]
                    .into_iter()
                    .chain(selecting)
                    .map(|budget| budget.key.clone())
                    .collect(),
            }),
        }
    }
}

impl<'a> Budget<'a> {
    fn new(namespace: &'a str, pdb: &'a PodDisruptionBudget) -> Self {
        let name = pdb.metadata.name.as_deref().unwrap_or_default();
        let spec = pdb.spec.as_ref();
        let max_unavailable = spec.and_then(|s| s.max_unavailable.as_ref());
        let min_available = spec.and_then(|s| s.min_available.as_ref());
        Self {
            name,
            key: format!("{namespace}/{name}"),
            selector: PodSelector::new(spec.and_then(|s| s.selector.as_ref()), []),
            disruptions_allowed: pdb.status.as_ref().map_or(0, disruptions_allowed),
            // An integer minAvailable needs the replica count to judge, so
            // upstream only recognises these forms.
            fully_blocking: matches!(max_unavailable, Some(IntOrString::Int(0)))
                || is_text(max_unavailable, "0%")
                || is_text(min_available, "100%"),
            evicts_unready: spec.and_then(|s| s.unhealthy_pod_eviction_policy.as_deref())
                == Some("AlwaysAllow"),
        }
    }
}

/// Whether an int-or-string field holds exactly the string `text`.
fn is_text(value: Option<&IntOrString>, text: &str) -> bool {
    match value {
        Some(IntOrString::String(value)) => value == text,
        _ => false,
    }
}

/// `status.disruptionsAllowed`, 0 when absent as Go reads it. The field is an
/// `i32` in k8s-openapi up to Kubernetes 1.35 and an `Option<i32>` from 1.36;
/// converting into `Option<i32>` accepts both, whichever version the final
/// binary picks.
#[allow(clippy::useless_conversion)]
fn disruptions_allowed(status: &PodDisruptionBudgetStatus) -> i32 {
    Option::<i32>::from(status.disruptions_allowed).unwrap_or(0)
}

/// Whether the pod reports Ready `False`. Upstream asks for an explicit
/// `False`, where the eviction API would also count a missing condition.
fn is_unready(pod: &(impl PodFields + ?Sized)) -> bool {
    let conditions = pod.conditions();
    conditions
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "False")
}

#[cfg(test)]
mod tests;
