//! A NodeClaim's life as the driver sees it: launched by the cloud,
//! registered when its Node appears, initialized when the Node is ready,
//! terminated when deleted. Also the garbage collection that keeps cloud and
//! cluster in step: instances no claim accounts for are deleted, and claims
//! whose instance is gone are deleted too.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;

use super::annotations::COMMAND_ANNOTATION;
use super::drain::drain;
use super::report::{Event, Report};
use super::{Driver, annotation, is_true, name_of, provider_id_of, set_true};
use crate::api::{NodeClaim, condition_types};
use crate::cloudprovider::{CloudProviderError, OfferingKey};
use crate::error::{Error, with_causes};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, DISRUPTED_NO_SCHEDULE_TAINT,
    LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_INITIALIZED_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY,
};

/// What became of a launch.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Launch {
    /// The instance runs; the claim says so.
    Launched,
    /// The cloud had no capacity; the claim was removed and the offerings
    /// marked unavailable.
    InsufficientCapacity,
    /// Launching failed for another reason; the claim was removed unless the
    /// error may pass.
    Failed,
}

/// Terminates, launches, registers and initializes the cluster's claims, and
/// collects garbage.
pub(super) async fn run(
    driver: &mut Driver,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    let claims = driver.cluster.node_claims().await?;
    let nodes = driver.cluster.nodes().await?;
    let instances = match driver.provider.list().await {
        Ok(instances) => instances,
        Err(error) => {
            // Without the cloud's list an instance whose launch answer was
            // lost cannot be told from none: launching again could double
            // it. Wait for the next pass.
            report.push(Event::ProviderError {
                action: "listing instances".into(),
                error: with_causes(&error),
            });
            return Ok(());
        }
    };
    let instance_ids: BTreeSet<&str> = instances.iter().filter_map(provider_id_of).collect();
    let claimed_ids: BTreeSet<&str> = claims.iter().filter_map(provider_id_of).collect();
    // An instance launched for a claim the cluster never heard it had (the
    // driver stopped between the launch and writing it down) is adopted by
    // that claim, not collected.
    let unlaunched: BTreeMap<&str, &NodeClaim> = claims
        .iter()
        .filter(|c| provider_id_of(c).is_none())
        .map(|c| (name_of(c), c))
        .collect();
    let mut adoptable: BTreeMap<&str, &NodeClaim> = BTreeMap::new();
    for instance in &instances {
        let Some(id) = provider_id_of(instance) else {
            continue;
        };
        if claimed_ids.contains(id) {
            continue;
        }
        if unlaunched.contains_key(name_of(instance)) {
            adoptable.insert(name_of(instance), instance);
            continue;
        }
        match driver.provider.delete(instance).await {
            Ok(()) | Err(CloudProviderError::NodeClaimNotFound { .. }) => {
                report.push(Event::OrphanDeleted {
                    provider_id: id.to_owned(),
                });
            }
            Err(error) => report.push(Event::ProviderError {
                action: format!("deleting orphan instance {id}"),
                error: with_causes(&error),
            }),
        }
    }
    let nodes_by_id: BTreeMap<&str, &Node> = nodes
        .iter()
        .filter_map(|n| Some((n.spec.as_ref()?.provider_id.as_deref()?, Arc::as_ref(n))))
        .collect();
    let mut finishing: BTreeSet<&str> = BTreeSet::new();
    for claim in &claims {
        let name = name_of(claim);
        let id = provider_id_of(claim);
        if claim.metadata.deletion_timestamp.is_some() {
            let node = id.and_then(|id| nodes_by_id.get(id)).copied();
            let instance = adoptable.get(name).copied().unwrap_or(claim);
            if terminate(driver, claim, instance, node, now, report).await?
                && let Some(command) = annotation(claim, COMMAND_ANNOTATION)
            {
                finishing.insert(command);
            }
            continue;
        }
        match id {
            None => match adoptable.get(name) {
                Some(instance) => record_launch(driver, claim, instance, now, report).await?,
                None => {
                    launch(driver, claim, now, report).await?;
                }
            },
            Some(id) if !instance_ids.contains(id) => {
                // The cloud took the instance away (an interruption, a
                // hand-deleted VM): the claim goes too.
                driver.cluster.delete_node_claim(name).await?;
                report.push(Event::InstanceGone {
                    claim: name.to_owned(),
                });
            }
            Some(id) => {
                if let Some(node) = nodes_by_id.get(id) {
                    register_and_initialize(driver, claim, node, now, report).await?;
                }
            }
        }
    }
    if !finishing.is_empty() {
        // A command whose last candidate is gone has completed.
        let left = driver.cluster.node_claims().await?;
        for command in finishing {
            if !left
                .iter()
                .any(|c| annotation(c, COMMAND_ANNOTATION) == Some(command))
            {
                report.push(Event::CommandCompleted {
                    id: command.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Launches the claim's instance and writes the result on the claim.
pub(super) async fn launch(
    driver: &mut Driver,
    claim: &NodeClaim,
    now: Timestamp,
    report: &mut Report,
) -> Result<Launch, Error> {
    let name = name_of(claim).to_owned();
    match driver.provider.create(claim).await {
        Ok(hydrated) => {
            record_launch(driver, claim, &hydrated, now, report).await?;
            Ok(Launch::Launched)
        }
        Err(error) => {
            let outcome = match &error {
                CloudProviderError::InsufficientCapacity { offerings, .. } => {
                    for offering in offerings {
                        driver.unavailable.mark(
                            offering.clone(),
                            now,
                            driver.options.unavailable_ttl,
                        );
                    }
                    if !offerings.is_empty() {
                        report.push(Event::OfferingsUnavailable {
                            offerings: offerings.clone(),
                        });
                    }
                    Launch::InsufficientCapacity
                }
                _ => Launch::Failed,
            };
            let keep = matches!(
                error,
                CloudProviderError::Api {
                    retryable: true,
                    ..
                }
            );
            report.push(Event::LaunchFailed {
                claim: name.clone(),
                error: with_causes(&error),
            });
            if !keep {
                // Nothing was launched: the claim goes at once, its pods
                // wait for the next plan.
                driver.cluster.remove_node_claim(&name).await?;
            }
            Ok(outcome)
        }
    }
}

/// Writes what the cloud launched on the claim: the resolved labels, the
/// provider ID, capacity and allocatable, `Launched`.
async fn record_launch(
    driver: &Driver,
    claim: &NodeClaim,
    hydrated: &NodeClaim,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    let mut launched = claim.clone();
    if let Some(labels) = &hydrated.metadata.labels {
        launched
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .extend(labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let from = hydrated.status.clone().unwrap_or_default();
    let status = launched.status.get_or_insert_with(Default::default);
    status.provider_id = from.provider_id;
    status.image_id = from.image_id;
    status.capacity = from.capacity;
    status.allocatable = from.allocatable;
    set_true(&mut launched, condition_types::LAUNCHED, now);
    let label = |key: &str| {
        launched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .cloned()
            .unwrap_or_default()
    };
    let capacity_type = label(CAPACITY_TYPE_LABEL_KEY);
    // A reserved launch names its reservation on the provider's label.
    let reservation_id = (capacity_type == CAPACITY_TYPE_RESERVED)
        .then(|| {
            driver
                .reservation_labels
                .iter()
                .map(|key| label(key))
                .find(|id| !id.is_empty())
        })
        .flatten();
    let offering = OfferingKey {
        instance_type: label(LABEL_INSTANCE_TYPE_STABLE),
        zone: label(LABEL_TOPOLOGY_ZONE),
        capacity_type,
        reservation_id,
    };
    driver.cluster.update_node_claim(launched).await?;
    report.push(Event::Launched {
        claim: name_of(claim).to_owned(),
        offering,
    });
    Ok(())
}

/// Marks the claim registered once its Node exists (the Node takes the
/// claim's labels), and initialized once the Node is ready.
async fn register_and_initialize(
    driver: &Driver,
    claim: &NodeClaim,
    node: &Node,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    let registered = is_true(claim, condition_types::REGISTERED);
    let initialized = is_true(claim, condition_types::INITIALIZED);
    if registered && initialized {
        return Ok(());
    }
    let name = name_of(claim).to_owned();
    let node_name = node.metadata.name.clone().unwrap_or_default();
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let mut updated_claim = claim.clone();
    let mut updated_node = node.clone();
    let labels = updated_node
        .metadata
        .labels
        .get_or_insert_with(Default::default);
    if let Some(claim_labels) = &claim.metadata.labels {
        for (key, value) in claim_labels {
            labels.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    labels.insert(NODE_REGISTERED_LABEL_KEY.to_owned(), "true".to_owned());
    if !registered {
        updated_claim
            .status
            .get_or_insert_with(Default::default)
            .node_name = Some(node_name.clone());
        set_true(&mut updated_claim, condition_types::REGISTERED, now);
        report.push(Event::Registered {
            claim: name.clone(),
            node: node_name,
        });
    }
    if ready {
        labels.insert(NODE_INITIALIZED_LABEL_KEY.to_owned(), "true".to_owned());
        set_true(&mut updated_claim, condition_types::INITIALIZED, now);
        report.push(Event::Initialized { claim: name });
    }
    driver.cluster.update_node(updated_node).await?;
    driver.cluster.update_node_claim(updated_claim).await?;
    Ok(())
}

/// Drains the claim's node and terminates its instance once it is drained
/// (or the claim's `terminationGracePeriod` has run out); once the cloud
/// says the instance is gone, the claim (and its Node) is removed. Returns
/// whether it was.
async fn terminate(
    driver: &Driver,
    claim: &NodeClaim,
    instance: &NodeClaim,
    node: Option<&Node>,
    now: Timestamp,
    report: &mut Report,
) -> Result<bool, Error> {
    let name = name_of(claim);
    if let Some(node_name) = node.and_then(|n| n.metadata.name.as_deref()) {
        driver
            .cluster
            .taint_node(node_name, DISRUPTED_NO_SCHEDULE_TAINT.to_taint())
            .await?;
        let drained = drain(driver, node_name, now, report).await?;
        if !drained && !grace_period_over(claim, now) {
            return Ok(false);
        }
    }
    let gone = if provider_id_of(instance).is_none() {
        // Never launched: nothing to terminate.
        true
    } else {
        match driver.provider.delete(instance).await {
            Ok(()) => false,
            Err(CloudProviderError::NodeClaimNotFound { .. }) => true,
            Err(error) => {
                report.push(Event::ProviderError {
                    action: format!("terminating {name}"),
                    error: with_causes(&error),
                });
                false
            }
        }
    };
    if gone {
        driver.cluster.remove_node_claim(name).await?;
        report.push(Event::Terminated {
            claim: name.to_owned(),
        });
    }
    Ok(gone)
}

/// Whether the claim's `terminationGracePeriod` has run out since its
/// deletion: then its instance goes whatever pods are left, as upstream
/// terminates a node whose grace period expired.
fn grace_period_over(claim: &NodeClaim, now: Timestamp) -> bool {
    let Some(deleted) = claim.metadata.deletion_timestamp.as_ref() else {
        return false;
    };
    claim
        .spec
        .effective_termination_grace_period()
        .and_then(|grace| jiff::SignedDuration::try_from(grace).ok())
        .and_then(|grace| deleted.0.checked_add(grace).ok())
        .is_some_and(|deadline| deadline <= now)
}
