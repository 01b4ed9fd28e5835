//! What holds a pod in place when Karpenter would drain its node: the
//! `karpenter.sh/do-not-disrupt` annotation ([`do_not_disrupt`]) and whether
//! the eviction API is called for it at all ([`goes_through_eviction`]); the
//! PodDisruptionBudgets are [`Pdbs`](super::Pdbs)'.

use std::fmt;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::{PodFields, PodKey, is_active, is_owned_by_node, is_terminal, is_terminating, pod_key};
use crate::api::GoDuration;
use crate::scheduling::{DISRUPTED_NO_SCHEDULE_TAINT, DO_NOT_DISRUPT_ANNOTATION_KEY, tolerates};

/// The taint Karpenter puts on the nodes it drains, built once.
static DISRUPTED_TAINT: LazyLock<Taint> = LazyLock::new(|| DISRUPTED_NO_SCHEDULE_TAINT.to_taint());

/// Why a pod keeps its node from being disrupted now.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum PodBlock {
    /// The pod carries an active `karpenter.sh/do-not-disrupt` annotation.
    DoNotDisrupt {
        /// The pod.
        pod: PodKey,
        /// When a duration-valued annotation stops protecting the pod; `None`
        /// while it protects the pod indefinitely (`"true"`, or a duration on a
        /// pod that has not started).
        until: Option<Timestamp>,
    },
    /// The only PodDisruptionBudget selecting the pod allows no disruption.
    PdbAllowsNone {
        /// The pod.
        pod: PodKey,
        /// The budget, `namespace/name`.
        pdb: String,
    },
    /// Several PodDisruptionBudgets select the pod, which the eviction API
    /// refuses whatever they allow.
    MultiplePdbs {
        /// The pod.
        pod: PodKey,
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

/// Whether Karpenter would call the eviction API for this pod when draining
/// its node (upstream `IsEvictable`, without its do-not-disrupt clause, which
/// [`do_not_disrupt`] answers): a pod draining waits for
/// ([`waits_for_eviction`]) that is not already on its way out.
/// PodDisruptionBudgets only matter for these pods.
pub(crate) fn goes_through_eviction(pod: &(impl PodFields + ?Sized)) -> bool {
    waits_for_eviction(pod) && !is_terminating(pod)
}

/// Whether draining the pod's node waits for it to be gone (upstream
/// `IsWaitingEviction`, without its grace-period clause): a pod that is not
/// finished, not a static pod, and does not tolerate the
/// `karpenter.sh/disrupted:NoSchedule` taint (such a pod is left to run on
/// the draining node).
pub(crate) fn waits_for_eviction(pod: &(impl PodFields + ?Sized)) -> bool {
    if is_terminal(pod) || is_owned_by_node(pod) {
        return false;
    }
    let tolerations = pod.scheduling().and_then(|s| s.tolerations.as_deref());
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
pub(crate) fn do_not_disrupt(pod: &(impl PodFields + ?Sized), now: Timestamp) -> Option<PodBlock> {
    if !is_active(pod) {
        return None;
    }
    let value = pod
        .metadata()
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
        match pod.start_time() {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_pods::{NOW, annotated, at, owned_by, pod, running};
    use super::*;

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
                pod: PodKey::new("default", "db-0"),
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
                pod: PodKey::new("default", "batch"),
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
}
