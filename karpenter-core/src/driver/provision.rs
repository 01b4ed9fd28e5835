//! Provisioning: the pending pods planned, nominated to capacity that
//! exists, and new claims created and launched for the rest. When a launch
//! fails for lack of capacity its offerings are marked unavailable and the
//! pods are planned again at once.

use std::borrow::Cow;
use std::collections::BTreeMap;

use jiff::Timestamp;

use super::lifecycle::{Launch, launch};
use super::manifest::pods_by_key;
use super::report::{Event, Report};
use super::{Driver, is_true, name_of};
use crate::api::condition_types;
use crate::error::Error;
use crate::provisioning::{Unschedulable, is_pending, schedule_with};
use crate::snapshot::Snapshot;

/// The snapshot with each pending pod nominated to a node or claim that is
/// not initialized yet (and not being deleted) held there, as if bound: the
/// plan that nominated it counted it there, and planning it afresh would
/// pack the in-flight capacity differently (first fit, largest pod first)
/// and launch more for pods that already have a place. Once the node is
/// initialized, a pod still pending there is planned again. Copied only when
/// some pod is held.
fn held_on_nominated(snapshot: &Snapshot) -> Cow<'_, Snapshot> {
    let mut in_flight: std::collections::HashMap<&str, &str> = Default::default();
    for node in &snapshot.nodes {
        if node.is_initialized() || node.is_deleting() {
            continue;
        }
        in_flight.insert(node.name(), node.name());
        if let Some(claim) = node
            .node_claim
            .as_ref()
            .and_then(|c| c.metadata.name.as_deref())
        {
            in_flight.insert(claim, node.name());
        }
    }
    let holds: Vec<(usize, String)> = snapshot
        .pods
        .iter()
        .enumerate()
        .filter(|(_, p)| is_pending(p))
        .filter_map(|(i, p)| {
            let nominated = p.status.as_ref()?.nominated_node_name.as_deref()?;
            Some((i, (*in_flight.get(nominated)?).to_owned()))
        })
        .collect();
    if holds.is_empty() {
        return Cow::Borrowed(snapshot);
    }
    let mut held = snapshot.clone();
    for (i, node) in holds {
        if let Some(spec) = held.pods[i].spec.as_mut() {
            spec.node_name = Some(node);
        }
    }
    Cow::Owned(held)
}

/// Reports each pod the plan cannot place, unless it was reported with the
/// same reason already; forgets the pods the plan now places (or that are
/// gone), so that they are reported again should they become unplaceable.
fn report_unschedulable(driver: &mut Driver, unplaced: &[Unschedulable], report: &mut Report) {
    let now: BTreeMap<&str, &str> = unplaced
        .iter()
        .map(|u| (u.pod.as_str(), u.reason.as_str()))
        .collect();
    driver
        .unschedulable
        .retain(|pod, _| now.contains_key(pod.as_str()));
    for (pod, reason) in now {
        if driver.unschedulable.get(pod).map(String::as_str) == Some(reason) {
            continue;
        }
        driver
            .unschedulable
            .insert(pod.to_owned(), reason.to_owned());
        report.push(Event::PodUnschedulable {
            pod: pod.to_owned(),
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
        let snapshot = driver.snapshot(now).await?;
        let in_flight = snapshot.nodes.iter().any(|n| {
            n.node_claim.as_ref().is_some_and(|c| {
                c.metadata.deletion_timestamp.is_none() && !is_true(c, condition_types::INITIALIZED)
            })
        });
        if !snapshot.pods.iter().any(is_pending) {
            driver.unschedulable.clear();
            return Ok((!in_flight).then_some(snapshot));
        }
        let plan = schedule_with(&held_on_nominated(&snapshot), driver.options.packing);
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
        if plan.node_claims.is_empty() {
            return Ok((nominated == 0 && !in_flight).then_some(snapshot));
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
