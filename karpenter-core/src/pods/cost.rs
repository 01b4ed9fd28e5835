//! What moving pods costs, as upstream Karpenter weighs it: each pod's
//! eviction cost, a node's rescheduling cost, and the share of its lifetime
//! it has left. Disruption ranks candidates by them, and a static NodePool
//! picks the nodes it removes by them.

use std::time::Duration;

use super::{PodFields, is_reschedulable};

/// The annotation by which a workload ranks its pods for deletion (an int32
/// for Kubernetes' ReplicaSet controller); Karpenter reads it into
/// [`eviction_cost`].
pub(crate) const POD_DELETION_COST_ANNOTATION_KEY: &str =
    "controller.kubernetes.io/pod-deletion-cost";

/// What draining a node costs before any pod is counted (cordoning, API calls,
/// waiting for a replacement): the floor of [`reschedule_disruption_cost`], and
/// the cost of an empty node.
pub(crate) const PER_NODE_BASE_DISRUPTION_COST: f64 = 1.0;

/// What evicting the pod costs (upstream `EvictionCost`): 1.0, plus its
/// `controller.kubernetes.io/pod-deletion-cost` over 2^27, plus its priority
/// over 2^25, clamped to [-10, 10]. At those scales the largest deletion cost
/// (2^31 - 1) adds about 16 and the highest user priority (10^9) about 30, so
/// either can dominate a pod's cost until the clamp.
///
/// Upstream reads the deletion cost as a float (Go's `strconv.ParseFloat`), so
/// `"1.5"` or `"1e3"` count; a value that is not a number, or that overflows,
/// is ignored.
pub(crate) fn eviction_cost(pod: &(impl PodFields + ?Sized)) -> f64 {
    let mut cost = 1.0;
    let deletion_cost = pod
        .metadata()
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_DELETION_COST_ANNOTATION_KEY))
        .and_then(|text| parse_deletion_cost(text));
    if let Some(deletion_cost) = deletion_cost {
        cost += deletion_cost / f64::from(1u32 << 27);
    }
    if let Some(priority) = pod.scheduling().and_then(|s| s.priority) {
        cost += f64::from(priority) / f64::from(1u32 << 25);
    }
    cost.clamp(-10.0, 10.0)
}

/// Reads a deletion cost as Go's `ParseFloat` would: decimal syntax, `_`
/// between two digits (`1_000`), `Inf`. Two exceptions: `NaN` is refused, as
/// upstream would carry it into every comparison of costs, and Go's
/// hexadecimal floats (`0x1p4`) are not read.
fn parse_deletion_cost(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let is_digit_at = |at: Option<usize>| {
        at.and_then(|i| bytes.get(i))
            .is_some_and(u8::is_ascii_digit)
    };
    let separators_ok = bytes
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'_')
        .all(|(i, _)| is_digit_at(i.checked_sub(1)) && is_digit_at(Some(i + 1)));
    if !separators_ok {
        return None;
    }
    let value: f64 = text.replace('_', "").parse().ok()?;
    if value.is_nan() {
        return None;
    }
    // Rust rounds an overflowing literal to infinity where Go reports an
    // error; only an infinity spelled out stands.
    let unsigned = text.trim_start_matches(['+', '-']);
    let spelled = unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity");
    (value.is_finite() || spelled).then_some(value)
}

/// The fraction of a node's lifetime left, in [0, 1] (upstream
/// `LifetimeRemaining`): 1 for a node that never expires, falling linearly to
/// 0 as its age reaches `expire_after`. It scales a node's disruption cost
/// down as expiry nears. A zero `expire_after` gives 0 (upstream divides by
/// zero there).
pub(crate) fn lifetime_remaining(age: Duration, expire_after: Option<Duration>) -> f64 {
    let Some(lifetime) = expire_after else {
        return 1.0;
    };
    if lifetime.is_zero() {
        return 0.0;
    }
    let total = lifetime.as_secs_f64();
    ((total - age.as_secs_f64()) / total).clamp(0.0, 1.0)
}

/// What rescheduling a node's pods costs (upstream
/// `computeRescheduleDisruptionCost`): [`PER_NODE_BASE_DISRUPTION_COST`] plus
/// the [`eviction_cost`] of each [reschedulable](is_reschedulable) pod, a
/// negative cost counting as 0. A node whose cost stays at the base is empty:
/// no pod there costs anything to move.
///
/// `pods` may be all of the node's pods; the others are skipped here.
pub(crate) fn reschedule_disruption_cost<'p, P: PodFields + 'p>(
    pods: impl IntoIterator<Item = &'p P>,
) -> f64 {
    pods.into_iter()
        .filter(is_reschedulable)
        .map(|pod| eviction_cost(pod).max(0.0))
        .fold(PER_NODE_BASE_DISRUPTION_COST, |total, cost| total + cost)
}

/// The legacy disruption cost of a candidate (upstream `ReschedulingCost`
/// times `LifetimeRemaining`): the [`eviction_cost`] of every pod on the node,
/// reschedulable or not and negative costs included, scaled by the
/// [`lifetime_remaining`] of the node.
pub(crate) fn disruption_cost<'p, P: PodFields + 'p>(
    pods: impl IntoIterator<Item = &'p P>,
    lifetime_remaining: f64,
) -> f64 {
    // A fold from +0.0: `sum` of no floats is -0.0, which would print as "-0".
    let total = pods.into_iter().map(eviction_cost).fold(0.0, |a, b| a + b);
    total * lifetime_remaining
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;
    use crate::pods::test_pods::{NOW, owned_by, pod, running};

    fn costing(deletion_cost: Option<&str>, priority: Option<i32>) -> Pod {
        let mut value = running("p", NOW);
        if let Some(cost) = deletion_cost {
            value["metadata"]["annotations"] = json!({ POD_DELETION_COST_ANNOTATION_KEY: cost });
        }
        if let Some(priority) = priority {
            value["spec"] = json!({"containers": [], "priority": priority});
        }
        pod(value)
    }

    #[test]
    fn eviction_cost_weighs_deletion_cost_and_priority() {
        assert_eq!(eviction_cost(&costing(None, None)), 1.0);
        assert!(eviction_cost(&costing(Some("100"), None)) > 1.0);
        assert!(eviction_cost(&costing(Some("-100"), None)) < 1.0);
        let [high, mid, low] = ["101", "100", "99"].map(|c| eviction_cost(&costing(Some(c), None)));
        assert!(high > mid && mid > low);
        assert!(eviction_cost(&costing(None, Some(1))) > 1.0);
        assert!(eviction_cost(&costing(None, Some(-1))) < 1.0);
        // Exact scales: a deletion cost of 2^27 and a priority of 2^25 each add 1.
        assert_eq!(eviction_cost(&costing(Some("134217728"), None)), 2.0);
        assert_eq!(eviction_cost(&costing(None, Some(1 << 25))), 2.0);
        assert_eq!(
            eviction_cost(&costing(Some("134217728"), Some(1 << 25))),
            3.0
        );
        // Parsed as a float, as upstream does.
        assert_eq!(eviction_cost(&costing(Some("6.7108864e7"), None)), 1.5);
        assert_eq!(eviction_cost(&costing(Some("134_217_728"), None)), 2.0);
    }

    #[test]
    fn eviction_cost_is_clamped_and_ignores_bad_deletion_costs() {
        assert_eq!(
            eviction_cost(&costing(Some("2147483647"), Some(1_000_000_000))),
            10.0
        );
        assert_eq!(eviction_cost(&costing(None, Some(i32::MIN))), -10.0);
        assert_eq!(eviction_cost(&costing(Some("Inf"), None)), 10.0);
        assert_eq!(eviction_cost(&costing(Some("-infinity"), None)), -10.0);
        for ignored in [
            "abc", "", " 5", "NaN", "1e400", "0x10", "_1", "1_", "1__0", "1_.5",
        ] {
            assert_eq!(
                eviction_cost(&costing(Some(ignored), None)),
                1.0,
                "{ignored:?}"
            );
        }
    }

    #[test]
    fn lifetime_remaining_falls_linearly_to_expiry() {
        let hours = |h: u64| Duration::from_secs(h * 3600);
        assert_eq!(lifetime_remaining(hours(100), None), 1.0);
        assert_eq!(lifetime_remaining(Duration::ZERO, Some(hours(720))), 1.0);
        assert_eq!(lifetime_remaining(hours(360), Some(hours(720))), 0.5);
        assert_eq!(lifetime_remaining(hours(540), Some(hours(720))), 0.25);
        assert_eq!(lifetime_remaining(hours(720), Some(hours(720))), 0.0);
        assert_eq!(lifetime_remaining(hours(1000), Some(hours(720))), 0.0);
        assert_eq!(
            lifetime_remaining(Duration::ZERO, Some(Duration::ZERO)),
            0.0
        );
    }

    #[test]
    fn reschedule_cost_counts_positive_costs_of_reschedulable_pods() {
        let no_pods: [&Pod; 0] = [];
        assert_eq!(reschedule_disruption_cost(no_pods), 1.0);

        let web = costing(None, None);
        let important = costing(Some("134217728"), None);
        assert_eq!(reschedule_disruption_cost([&web, &important]), 4.0);

        // Daemon, static and finished pods need no new home; a pod whose cost is
        // negative counts as 0: such a node is still empty.
        let daemon = pod(owned_by("apps/v1", "DaemonSet"));
        let mirror = pod(owned_by("v1", "Node"));
        let mut finished = running("done", NOW);
        finished["status"]["phase"] = json!("Failed");
        let finished = pod(finished);
        let expendable = costing(None, Some(-(1 << 26)));
        let cost = reschedule_disruption_cost([&daemon, &mirror, &finished, &expendable]);
        assert_eq!(cost, PER_NODE_BASE_DISRUPTION_COST);
        assert!(cost <= PER_NODE_BASE_DISRUPTION_COST, "an empty node");
        assert!(reschedule_disruption_cost([&daemon, &web]) > PER_NODE_BASE_DISRUPTION_COST);
    }

    #[test]
    fn legacy_disruption_cost_counts_every_pod_scaled_by_lifetime() {
        let web = costing(None, None);
        let daemon = pod(owned_by("apps/v1", "DaemonSet"));
        let expendable = costing(None, Some(-(1 << 26))); // 1 - 2 = -1
        assert_eq!(disruption_cost([&web, &daemon, &expendable], 1.0), 1.0);
        assert_eq!(disruption_cost([&web, &daemon], 0.5), 1.0);
        let no_pods: [&Pod; 0] = [];
        assert_eq!(disruption_cost(no_pods, 1.0).to_string(), "0");
    }

    /// A pod under a PodDisruptionBudget that allows nothing: no
    /// do-not-disrupt, but the budget blocks its node, and moving it costs
    /// the node's own 1.0 plus the pod's default eviction cost of 1.0.
    #[test]
    fn a_pod_under_a_pdb_allowing_nothing_blocks_its_node() {
        use k8s_openapi::api::policy::v1::PodDisruptionBudget;
        use k8s_openapi::jiff::Timestamp;

        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
            "status": {"phase": "Running"},
        }))
        .expect("a pod");
        let pdb: PodDisruptionBudget = serde_json::from_value(json!({
            "metadata": {"name": "web-pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
        }))
        .expect("a PodDisruptionBudget");
        let pdbs = [pdb];
        let pdbs = crate::pods::Pdbs::new(&pdbs);

        assert_eq!(
            crate::pods::do_not_disrupt(&pod, Timestamp::UNIX_EPOCH),
            None
        );
        assert_eq!(
            pdbs.blocks(&pod).map(|block| block.to_string()).as_deref(),
            Some(
                "pod default/web-1 is protected by PodDisruptionBudget default/web-pdb, which allows no disruption now"
            ),
        );
        assert_eq!(reschedule_disruption_cost([&pod]), 2.0);
    }
}
