//! Provisioning: the pending pods, and those of the nodes on their way out
//! (a command's tainted candidates while their replacements launch), planned,
//! nominated to capacity that exists, and new claims created and launched
//! for the rest. When a launch
//! fails for lack of capacity its offerings are marked unavailable and the
//! pods are planned again at once. Pods nominated already are held on the
//! capacity they were nominated to, while it can take them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;

use super::lifecycle::{Launch, launch};
use super::manifest::pods_by_key;
use super::planning::run_planning;
use super::report::Step;
use super::report::{Event, Report};
use super::{Driver, is_true, name_of};
use crate::api::condition_types;
use crate::error::Error;
use crate::fast_hash::HashMap;
use crate::features::FeatureGate;
use crate::pods::{PodKey, is_pending_but_for_nomination, nominated_node};
use crate::provisioning::{
    ProvisioningOptions, ProvisioningPlan, Unschedulable, has_pods_to_plan, is_destination,
    plan_provisioning_with,
};
use crate::snapshot::Snapshot;

/// The snapshot as the driver plans it, its pods' nominations read, and how
/// many pods it holds.
///
/// A nominated pod is not pending ([`is_pending`], upstream's `IsPreempting`):
/// it is about to schedule on the node it names. The driver nominates the
/// pods it plans to the capacity meant for them, so most nominations are its
/// own, and it reads each one so that its plans agree with that rule:
///
/// - a pod nominated to a node or claim of the snapshot that can still take
///   pods (not being deleted, not tainted for disruption) is *held* there, as
///   if bound: it gets no new capacity, and the capacity it will take is not
///   planned for another pod. Planning it afresh would pack the in-flight
///   capacity differently (first fit, largest pod first) and launch more for
///   pods that already have a place;
/// - a pod nominated to a name the snapshot lacks (a claim whose launch
///   failed, a node gone) or to a node that can no longer take it is
///   released: its nomination is void, as the kube-scheduler drops one it can
///   no longer honour, and the pod is read without it (pending when the
///   kube-scheduler marked it unschedulable).
///
/// Copied only when some pod is held or released.
fn with_nominations_read(snapshot: &Snapshot) -> (Cow<'_, Snapshot>, usize) {
    let mut destinations: HashMap<&str, &str> = HashMap::default();
    for node in snapshot.nodes.iter().filter(|n| is_destination(n)) {
        destinations.insert(node.name(), node.name());
        if let Some(claim) = node
            .node_claim
            .as_ref()
            .and_then(|c| c.metadata.name.as_deref())
        {
            destinations.insert(claim, node.name());
        }
    }
    let nominations: Vec<(usize, Option<String>)> = snapshot
        .pods
        .iter()
        .enumerate()
        .filter(|(_, p)| is_pending_but_for_nomination(p))
        .filter_map(|(i, p)| {
            let nominated = nominated_node(p)?;
            Some((i, destinations.get(nominated).map(|n| (*n).to_owned())))
        })
        .collect();
    if nominations.is_empty() {
        return (Cow::Borrowed(snapshot), 0);
    }
    let mut read = snapshot.clone();
    let mut held = 0;
    for (i, destination) in nominations {
        let pod = &mut read.pods[i];
        match destination {
            Some(node) => {
                if pod.spec.is_some() {
                    Arc::make_mut(pod).node_name = Some(node);
                    held += 1;
                }
            }
            None => {
                if pod.status.is_some()
                    && let Some(status) = Arc::make_mut(pod).status.as_mut()
                {
                    status.nominated_node_name = None;
                }
            }
        }
    }
    (Cow::Owned(read), held)
}

/// The planning of one provisioning round, on the driver's planning runner:
/// the pods' nominations read (see [`with_nominations_read`]), and the plan,
/// unless there is nothing to plan (no pending pod, none leaving a node on
/// its way out). Takes the snapshot and gives it back, with how many pods
/// are held by their nominations, so that the job borrows nothing.
fn plan_round(
    snapshot: Snapshot,
    options: &ProvisioningOptions,
    now: Timestamp,
) -> (Snapshot, usize, Option<ProvisioningPlan>) {
    let (planned, held) = with_nominations_read(&snapshot);
    // The pods to plan: the pending ones, and those leaving the nodes on
    // their way out (a command's candidates, tainted, among them); and the
    // static pools to hold at their replicas.
    let gates = options.planning.feature_gates;
    let buffers = gates.is_on(FeatureGate::CapacityBuffer);
    let any = has_pods_to_plan(&planned, Some(now), buffers)
        || (gates.is_on(FeatureGate::StaticCapacity)
            && planned.node_pools.iter().any(|p| p.spec.is_static()));
    let plan = any.then(|| plan_provisioning_with(&planned, options));
    drop(planned);
    (snapshot, held, plan)
}

/// Reports each pod the plan cannot place, unless it was reported with the
/// same reason already; forgets the pods the plan now places (or that are
/// gone), so that they are reported again should they become unplaceable.
fn report_unschedulable(driver: &mut Driver, unplaced: &[Unschedulable], report: &mut Report) {
    let now: BTreeMap<&PodKey, &str> = unplaced
        .iter()
        .map(|u| (&u.pod, u.reason.as_str()))
        .collect();
    driver.unschedulable.retain(|pod, _| now.contains_key(pod));
    for (pod, reason) in now {
        if driver.unschedulable.get(pod).map(String::as_str) == Some(reason) {
            continue;
        }
        driver.unschedulable.insert(pod.clone(), reason.to_owned());
        report.push(Event::PodUnschedulable {
            pod: pod.clone(),
            reason: reason.to_owned(),
        });
    }
}

/// Plans and acts on the pending pods. When the cluster is settled (nothing
/// was planned: every pending pod, if any, is one no plan can place; and no
/// claim is in flight), returns the snapshot it read, which nothing has
/// changed since.
pub(super) async fn run(
    driver: &mut Driver,
    now: Timestamp,
    report: &mut Report,
) -> Result<Option<Snapshot>, Error> {
    for _ in 0..=driver.options.max_replans {
        // Read first: a write while the snapshot is read leaves a newer
        // revision, which the snapshot is then not taken for.
        driver.snapshot_revision = driver.cluster.revision();
        let snapshot = driver.snapshot(now).await?;
        driver.note_reservation_labels(&snapshot);
        let in_flight = snapshot.nodes.iter().any(|n| {
            n.node_claim.as_ref().is_some_and(|c| {
                c.metadata.deletion_timestamp.is_none() && !is_true(c, condition_types::INITIALIZED)
            })
        });
        let options = ProvisioningOptions::from(driver.options.planning).at(now);
        let runner = driver.options.planning_runner.as_ref();
        let (snapshot, held, plan) = run_planning(runner, Step::Provisioning, report, move || {
            plan_round(snapshot, &options, now)
        })
        .await?;
        // Settled only when no pod waits for the node it was nominated to.
        let waiting = in_flight || held > 0;
        let Some(plan) = plan else {
            driver.unschedulable.clear();
            return Ok((!waiting).then_some(snapshot));
        };
        report_unschedulable(driver, &plan.unschedulable, report);
        let mut nominated = 0;
        for placement in &plan.existing_nodes {
            for pod in &placement.pods {
                driver.cluster.nominate_pod(pod, &placement.name).await?;
                nominated += 1;
            }
        }
        if nominated > 0 {
            report.push(Event::PodsNominated { count: nominated });
        }
        for removal in &plan.static_removals {
            driver
                .cluster
                .delete_node_claim(&removal.node_claim)
                .await?;
            report.push(Event::StaticClaimRemoved {
                claim: removal.node_claim.clone(),
                pool: removal.node_pool.clone(),
                reason: removal.reason.clone(),
            });
        }
        if plan.node_claims.is_empty() {
            let quiet = nominated == 0 && plan.static_removals.is_empty() && !waiting;
            return Ok(quiet.then_some(snapshot));
        }
        let pods = pods_by_key(&snapshot.pods);
        let mut claims = driver.cluster.node_claims().await?;
        let mut capacity_ran_out = false;
        for planned in &plan.node_claims {
            let Some(claim) = driver
                .create_claim(planned, &snapshot, &pods, &mut claims, None, now)
                .await?
            else {
                continue;
            };
            let name = name_of(&claim).to_owned();
            report.push(Event::ClaimCreated {
                claim: name.clone(),
                pool: planned.node_pool.clone(),
                pods: planned.pods.len(),
            });
            for pod in &planned.pods {
                driver.cluster.nominate_pod(pod, &name).await?;
            }
            if launch(driver, &claim, now, report).await? == Launch::InsufficientCapacity {
                capacity_ran_out = true;
            }
        }
        if !capacity_ran_out {
            return Ok(None);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    use super::*;
    use crate::api::NodeClaim;
    use crate::pods::PodInfo;
    use crate::pods::{bound_node, is_pending};
    use crate::snapshot::ClusterNode;

    /// A pod the kube-scheduler marked unschedulable, nominated to `node`.
    fn nominated(name: &str, node: Option<&str>) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app"}]},
            "status": {
                "phase": "Pending",
                "nominatedNodeName": node,
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            },
        }))
        .expect("a Pod")
    }

    /// A ready Node, unmanaged, deleting when `deleting`.
    fn node(name: &str, deleting: bool) -> ClusterNode {
        let mut node: Node = serde_json::from_value(json!({
            "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }))
        .expect("a Node");
        if deleting {
            node.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::UNIX_EPOCH),
            );
        }
        ClusterNode {
            node: Some(Arc::new(node)),
            node_claim: None,
        }
    }

    /// A NodeClaim of pool `default` still launching: no Node yet.
    fn in_flight(name: &str) -> ClusterNode {
        let claim: NodeClaim = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {"nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"}, "requirements": []},
        }))
        .expect("a NodeClaim");
        ClusterNode {
            node: None,
            node_claim: Some(claim),
        }
    }

    #[test]
    fn nominated_pods_are_held_while_their_node_can_take_them() {
        let snapshot = Snapshot {
            nodes: vec![
                in_flight("default-a"),
                node("node-b", false),
                node("node-c", true),
            ],
            pods: [
                nominated("launching", Some("default-a")),
                nominated("binding", Some("node-b")),
                nominated("deleting", Some("node-c")),
                nominated("gone", Some("default-z")),
                nominated("free", None),
            ]
            .map(|p| Arc::new(PodInfo::from(p)))
            .into(),
            ..Snapshot::default()
        };
        // Nominated pods are not pending, as upstream's IsPreempting.
        let pending: Vec<bool> = snapshot.pods.iter().map(is_pending).collect();
        assert_eq!(pending, [false, false, false, false, true]);

        let (read, held) = with_nominations_read(&snapshot);
        assert_eq!(held, 2);
        let nodes: Vec<Option<&str>> = read.pods.iter().map(|p| bound_node(p)).collect();
        assert_eq!(nodes, [Some("default-a"), Some("node-b"), None, None, None]);
        // The nominations to a deleting node and to a claim that is gone are
        // void: those pods are planned again.
        let pending: Vec<bool> = read.pods.iter().map(is_pending).collect();
        assert_eq!(pending, [false, false, true, true, true]);
    }

    #[test]
    fn a_snapshot_without_nominations_is_not_copied() {
        let snapshot = Snapshot {
            nodes: vec![node("node-b", false)],
            pods: vec![Arc::new(PodInfo::from(nominated("free", None)))],
            ..Snapshot::default()
        };
        let (read, held) = with_nominations_read(&snapshot);
        assert!(matches!(read, Cow::Borrowed(_)));
        assert_eq!(held, 0);
    }
}
