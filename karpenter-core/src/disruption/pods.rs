//! What a pod on a candidate node means for disruption, as upstream Karpenter
//! reads it: whether the pod keeps its node from being disrupted now (the
//! `karpenter.sh/do-not-disrupt` annotation here, PodDisruptionBudgets in
//! [`Pdbs`]), whether it needs a new home when the node goes, and what
//! evicting it costs.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::api::policy::v1::PodDisruptionBudget;
//! use k8s_openapi::jiff::Timestamp;
//! use karpenter_core::disruption::pods::{Pdbs, do_not_disrupt, reschedule_disruption_cost};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
//!     "status": {"phase": "Running"},
//! }))?;
//! let pdb: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-pdb", "namespace": "default"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}},
//!     "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
//! }))?;
//! let pdbs = [pdb];
//! let pdbs = Pdbs::new(&pdbs);
//!
//! assert_eq!(do_not_disrupt(&pod, Timestamp::UNIX_EPOCH), None);
//! assert_eq!(
//!     pdbs.blocks(&pod).map(|block| block.to_string()).as_deref(),
//!     Some("pod default/web-1 is protected by PodDisruptionBudget default/web-pdb, which allows no disruption now"),
//! );
//! // The node's own 1.0 plus the pod's default eviction cost of 1.0.
//! assert_eq!(reschedule_disruption_cost([&pod]), 2.0);
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;
use std::sync::LazyLock;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Taint};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::api::GoDuration;
use crate::provisioning::{is_terminal, pod_key};
use crate::scheduling::{DISRUPTED_NO_SCHEDULE_TAINT, DO_NOT_DISRUPT_ANNOTATION_KEY, tolerates};

pub use super::pdbs::Pdbs;

/// The annotation by which a workload ranks its pods for deletion (an int32
/// for Kubernetes' ReplicaSet controller); Karpenter reads it into
/// [`eviction_cost`].
pub const POD_DELETION_COST_ANNOTATION_KEY: &str = "controller.kubernetes.io/pod-deletion-cost";

/// What draining a node costs before any pod is counted (cordoning, API calls,
/// waiting for a replacement): the floor of [`reschedule_disruption_cost`], and
/// the cost of an empty node.
pub const PER_NODE_BASE_DISRUPTION_COST: f64 = 1.0;

/// The taint Karpenter puts on the nodes it drains, built once.
static DISRUPTED_TAINT: LazyLock<Taint> = LazyLock::new(|| DISRUPTED_NO_SCHEDULE_TAINT.to_taint());

/// Why a pod keeps its node from being disrupted now.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PodBlock {
    /// The pod carries an active `karpenter.sh/do-not-disrupt` annotation.
    DoNotDisrupt {
        /// The pod, `namespace/name`.
        pod: String,
        /// When a duration-valued annotation stops protecting the pod; `None`
        /// while it protects the pod indefinitely (`"true"`, or a duration on a
        /// pod that has not started).
        until: Option<Timestamp>,
    },
    /// The only PodDisruptionBudget selecting the pod allows no disruption.
    PdbAllowsNone {
        /// The pod, `namespace/name`.
        pod: String,
        /// The budget, `namespace/name`.
        pdb: String,
    },
    /// Several PodDisruptionBudgets select the pod, which the eviction API
    /// refuses whatever they allow.
    MultiplePdbs {
        /// The pod, `namespace/name`.
        pod: String,
        /// The budgets, `namespace/name`, sorted.
        pdbs: Vec<String>,
    },
}

impl fmt::Display for PodBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DoNotDisrupt { pod, until: None } => {
                write!(f, "pod {pod} has {DO_NOT_DISRUPT_ANNOTATION_KEY}")
            }
            Self::DoNotDisrupt {
                pod,
                until: Some(until),
            } => write!(
                f,
                "pod {pod} has {DO_NOT_DISRUPT_ANNOTATION_KEY} until {until}"
            ),
            Self::PdbAllowsNone { pod, pdb } => write!(
                f,
                "pod {pod} is protected by PodDisruptionBudget {pdb}, which allows no disruption now"
            ),
            Self::MultiplePdbs { pod, pdbs } => write!(
                f,
                "pod {pod} is selected by more than one PodDisruptionBudget ({})",
                pdbs.join(", ")
            ),
        }
    }
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// Neither finished nor being deleted (upstream `IsActive`).
fn is_active(pod: &Pod) -> bool {
    !is_terminal(pod) && !is_terminating(pod)
}

/// Whether an owner reference names `kind` in `api_version`. Upstream compares
/// both, so a look-alike kind from another API group (OpenKruise's Advanced
/// DaemonSet is `apps.kruise.io/v1alpha1` `DaemonSet`) is not the built-in one;
/// this is why the kind-only `provisioning::is_daemon_pod` is not used here.
pub(super) fn is_owned_by(pod: &Pod, api_version: &str, kind: &str) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.api_version == api_version && owner.kind == kind)
}

/// A static pod, which the kubelet mirrors with the Node as owner: the API
/// server cannot delete or evict it.
fn is_owned_by_node(pod: &Pod) -> bool {
    is_owned_by(pod, "v1", "Node")
}

/// Whether Karpenter would call the eviction API for this pod when draining
/// its node (upstream `IsEvictable`, without its do-not-disrupt clause, which
/// [`do_not_disrupt`] answers): an active pod that is not a static pod and
/// does not tolerate the `karpenter.sh/disrupted:NoSchedule` taint (such a pod
/// is left to run on the draining node). PodDisruptionBudgets only matter for
/// these pods.
pub(super) fn goes_through_eviction(pod: &Pod) -> bool {
    if !is_active(pod) || is_owned_by_node(pod) {
        return false;
    }
    let tolerations = pod.spec.as_ref().and_then(|s| s.tolerations.as_deref());
    !tolerations
        .unwrap_or_default()
        .iter()
        .any(|toleration| tolerates(toleration, &DISRUPTED_TAINT))
}

/// Whether the pod's `karpenter.sh/do-not-disrupt` annotation keeps its node
/// from being disrupted at `now` (upstream `IsDisruptable`).
///
/// `"true"` protects the pod indefinitely. A positive Go duration (`"2h"`)
/// protects it until it has run that long, counted from `status.startTime`;
/// a pod without a start time is protected indefinitely, as upstream fails
/// safe. Any other value is ignored (upstream also emits a warning event).
/// Only active pods count: a finished or terminating pod never blocks, while
/// daemon and static pods do.
pub fn do_not_disrupt(pod: &Pod, now: Timestamp) -> Option<PodBlock> {
    if !is_active(pod) {
        return None;
    }
    let value = pod
        .metadata
        .annotations
        .as_ref()?
        .get(DO_NOT_DISRUPT_ANNOTATION_KEY)?;
    let until = if value == "true" {
        None
    } else {
        // GoDuration rejects negative values; zero is rejected here, as upstream
        // requires a positive duration.
        let protection = GoDuration::parse(value).ok()?.as_std();
        let protection = SignedDuration::try_from(protection)
            .ok()
            .filter(|d| d.is_positive())?;
        match pod.status.as_ref().and_then(|s| s.start_time.as_ref()) {
            None => None,
            Some(start) => {
                if now.duration_since(start.0) >= protection {
                    return None;
                }
                // Past the end of time (year 9999) the protection simply has
                // no end to report.
                start.0.checked_add(protection).ok()
            }
        }
    };
    Some(PodBlock::DoNotDisrupt {
        pod: pod_key(pod),
        until,
    })
}

/// Whether the pod must find room elsewhere when its node goes (upstream
/// `IsReschedulable`): an active pod, or a terminating one owned by a
/// StatefulSet (its replacement cannot be created until it is gone, so it is
/// counted as if still running), but never a DaemonSet's pod (the DaemonSet
/// runs one on every node anyway) nor a static pod.
pub fn is_reschedulable(pod: &Pod) -> bool {
    (is_active(pod) || (is_owned_by(pod, "apps/v1", "StatefulSet") && is_terminating(pod)))
        && !is_owned_by(pod, "apps/v1", "DaemonSet")
        && !is_owned_by_node(pod)
}

/// What evicting the pod costs (upstream `EvictionCost`): 1.0, plus its
/// `controller.kubernetes.io/pod-deletion-cost` over 2^27, plus its priority
/// over 2^25, clamped to [-10, 10]. At those scales the largest deletion cost
/// (2^31 - 1) adds about 16 and the highest user priority (10^9) about 30, so
/// either can dominate a pod's cost until the clamp.
///
/// Upstream reads the deletion cost as a float (Go's `strconv.ParseFloat`), so
/// `"1.5"` or `"1e3"` count; a value that is not a number, or that overflows,
/// is ignored.
pub fn eviction_cost(pod: &Pod) -> f64 {
    let mut cost = 1.0;
    let deletion_cost = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_DELETION_COST_ANNOTATION_KEY))
        .and_then(|text| parse_deletion_cost(text));
    if let Some(deletion_cost) = deletion_cost {
        cost += deletion_cost / f64::from(1u32 << 27);
    }
    if let Some(priority) = pod.spec.as_ref().and_then(|s| s.priority) {
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
pub fn lifetime_remaining(age: Duration, expire_after: Option<Duration>) -> f64 {
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
pub fn reschedule_disruption_cost<'p>(pods: impl IntoIterator<Item = &'p Pod>) -> f64 {
    pods.into_iter()
        .filter(|pod| is_reschedulable(pod))
        .map(|pod| eviction_cost(pod).max(0.0))
        .fold(PER_NODE_BASE_DISRUPTION_COST, |total, cost| total + cost)
}

/// The legacy disruption cost of a candidate (upstream `ReschedulingCost`
/// times `LifetimeRemaining`): the [`eviction_cost`] of every pod on the node,
/// reschedulable or not and negative costs included, scaled by the
/// [`lifetime_remaining`] of the node.
pub fn disruption_cost<'p>(
    pods: impl IntoIterator<Item = &'p Pod>,
    lifetime_remaining: f64,
) -> f64 {
    // A fold from +0.0: `sum` of no floats is -0.0, which would print as "-0".
    let total = pods.into_iter().map(eviction_cost).fold(0.0, |a, b| a + b);
    total * lifetime_remaining
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn pod(value: Value) -> Pod {
        serde_json::from_value(value).expect("a valid pod")
    }

    /// A running pod `default/<name>`, started at `started`.
    fn running(name: &str, started: &str) -> Value {
        json!({
            "metadata": {"name": name, "namespace": "default"},
            "status": {"phase": "Running", "startTime": started},
        })
    }

    fn annotated(mut value: Value, key: &str, annotation: &str) -> Pod {
        value["metadata"]["annotations"] = json!({ key: annotation });
        pod(value)
    }

    fn owned_by(api_version: &str, kind: &str) -> Value {
        json!({
            "metadata": {
                "name": "p", "namespace": "default",
                "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u"}],
            },
            "status": {"phase": "Running"},
        })
    }

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a valid timestamp")
    }

    const NOW: &str = "2024-05-01T12:00:00Z";

    #[test]
    fn do_not_disrupt_true_blocks_indefinitely() {
        let db = annotated(
            running("db-0", "2024-05-01T11:50:00Z"),
            DO_NOT_DISRUPT_ANNOTATION_KEY,
            "true",
        );
        let block = do_not_disrupt(&db, at(NOW)).expect("blocked");
        assert_eq!(
            block,
            PodBlock::DoNotDisrupt {
                pod: "default/db-0".into(),
                until: None
            }
        );
        assert_eq!(
            block.to_string(),
            "pod default/db-0 has karpenter.sh/do-not-disrupt"
        );
        // A pod without the annotation is not protected.
        assert_eq!(
            do_not_disrupt(&pod(running("db-1", "2024-05-01T11:50:00Z")), at(NOW)),
            None
        );
    }

    #[test]
    fn do_not_disrupt_duration_protects_from_the_start_time() {
        // Started ten minutes ago: 15m still protects, 5m and 10m have elapsed.
        let started = running("batch", "2024-05-01T11:50:00Z");
        let fifteen = annotated(started.clone(), DO_NOT_DISRUPT_ANNOTATION_KEY, "15m");
        let block = do_not_disrupt(&fifteen, at(NOW)).expect("still protected");
        assert_eq!(
            block,
            PodBlock::DoNotDisrupt {
                pod: "default/batch".into(),
                until: Some(at("2024-05-01T12:05:00Z")),
            }
        );
        assert_eq!(
            block.to_string(),
            "pod default/batch has karpenter.sh/do-not-disrupt until 2024-05-01T12:05:00Z"
        );
        for elapsed in ["5m", "10m", "599s"] {
            let p = annotated(started.clone(), DO_NOT_DISRUPT_ANNOTATION_KEY, elapsed);
            assert_eq!(do_not_disrupt(&p, at(NOW)), None, "{elapsed}");
        }
    }

    #[test]
    fn do_not_disrupt_duration_without_start_time_fails_safe() {
        let p = annotated(
            json!({"metadata": {"name": "new", "namespace": "default"}, "status": {"phase": "Pending"}}),
            DO_NOT_DISRUPT_ANNOTATION_KEY,
            "5m",
        );
        let block = do_not_disrupt(&p, at(NOW)).expect("protected");
        assert!(matches!(block, PodBlock::DoNotDisrupt { until: None, .. }));
    }

    #[test]
    fn do_not_disrupt_ignores_values_that_are_not_positive_durations() {
        for value in [
            "invalid-format",
            "0s",
            "0",
            "-5m",
            "false",
            "True",
            "",
            "5d",
            "1h30",
        ] {
            let p = annotated(
                running("p", "2024-05-01T11:50:00Z"),
                DO_NOT_DISRUPT_ANNOTATION_KEY,
                value,
            );
            assert_eq!(do_not_disrupt(&p, at(NOW)), None, "{value:?}");
        }
    }

    #[test]
    fn do_not_disrupt_counts_only_active_pods() {
        let mut succeeded = running("done", "2024-05-01T11:50:00Z");
        succeeded["status"]["phase"] = json!("Succeeded");
        let mut failed = succeeded.clone();
        failed["status"]["phase"] = json!("Failed");
        let mut terminating = running("going", "2024-05-01T11:50:00Z");
        terminating["metadata"]["deletionTimestamp"] = json!("2024-05-01T11:59:00Z");
        for inactive in [succeeded, failed, terminating] {
            let p = annotated(inactive, DO_NOT_DISRUPT_ANNOTATION_KEY, "true");
            assert_eq!(do_not_disrupt(&p, at(NOW)), None);
        }
        // Daemon and static pods are active, so they do block.
        for (api_version, kind) in [("apps/v1", "DaemonSet"), ("v1", "Node")] {
            let p = annotated(
                owned_by(api_version, kind),
                DO_NOT_DISRUPT_ANNOTATION_KEY,
                "true",
            );
            assert!(do_not_disrupt(&p, at(NOW)).is_some(), "{kind}");
        }
    }

    #[test]
    fn reschedulable_pods() {
        assert!(is_reschedulable(&pod(running("web", NOW))));
        assert!(is_reschedulable(&pod(owned_by("apps/v1", "ReplicaSet"))));
        // A pending pod bound to the node is active too.
        assert!(is_reschedulable(&pod(
            json!({"metadata": {"name": "p"}, "status": {"phase": "Pending"}})
        )));
        // The DaemonSet recreates its pod on every node; a static pod is the kubelet's.
        assert!(!is_reschedulable(&pod(owned_by("apps/v1", "DaemonSet"))));
        assert!(!is_reschedulable(&pod(owned_by("v1", "Node"))));
        // Upstream matches the API group too: a look-alike kind is an ordinary owner.
        assert!(is_reschedulable(&pod(owned_by(
            "apps.kruise.io/v1alpha1",
            "DaemonSet"
        ))));

        let mut finished = running("done", NOW);
        finished["status"]["phase"] = json!("Succeeded");
        assert!(!is_reschedulable(&pod(finished)));

        // A terminating StatefulSet pod still needs room (its successor waits for
        // it); any other terminating pod does not.
        let terminating = |mut value: Value| {
            value["metadata"]["deletionTimestamp"] = json!(NOW);
            pod(value)
        };
        assert!(is_reschedulable(&terminating(owned_by(
            "apps/v1",
            "StatefulSet"
        ))));
        assert!(!is_reschedulable(&terminating(owned_by(
            "apps/v1",
            "ReplicaSet"
        ))));
    }

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
}
