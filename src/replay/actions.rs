//! Carrying out the trace's actions on the world: scaling Deployments,
//! interrupting and failing nodes, changing NodePools.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, NodeCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::cluster::Cluster;
use karpenter_core::scheduling::{CAPACITY_TYPE_LABEL_KEY, NODE_POOL_LABEL_KEY};

use super::block_on;
use super::schedule::{Due, Planned, stream};
use super::world::World;

/// How long after its interruption notice the cloud takes an instance back
/// (a spot instance's two minutes).
pub const INTERRUPTION_NOTICE: SignedDuration = SignedDuration::from_secs(120);

/// The annotation a `drift` bumps on the NodePool's template: the template's
/// hash changes, so the pool's nodes drift.
pub const GENERATION_ANNOTATION: &str = "karpenter.sim/generation";

/// An instance the cloud will take back.
#[derive(Debug)]
pub(crate) struct Reclaim {
    pub at: Timestamp,
    pub node: String,
    pub provider_id: String,
}

/// The actions' memory between steps.
#[derive(Debug, Default)]
pub(crate) struct Actions {
    /// Nodes an `interrupt` or `fail` hit already: a node is hit once.
    hit: BTreeSet<String>,
    /// Interrupted instances, in the order the cloud takes them back.
    pub reclaims: Vec<Reclaim>,
}

fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

impl Actions {
    /// Does one action at `now`; what could not be done as asked is a
    /// warning.
    pub(super) fn apply(
        &mut self,
        world: &World,
        due: &Due,
        now: Timestamp,
        seed: u64,
    ) -> Vec<String> {
        match &due.planned {
            Planned::Scale {
                deployment,
                replicas,
            } => {
                let replicas = i32::try_from(*replicas).unwrap_or(i32::MAX);
                // Checked against the cluster when the trace was laid out.
                let _ = world.cluster.scale_deployment(
                    &deployment.namespace,
                    &deployment.name,
                    replicas,
                );
                Vec::new()
            }
            Planned::Interrupt {
                nodes,
                capacity_type,
            } => {
                let (victims, warning) =
                    self.choose(world, due, *nodes, Some(capacity_type), seed, now);
                for node in victims {
                    world.cluster.set_node_condition(
                        &node.metadata.name.clone().unwrap_or_default(),
                        NodeCondition {
                            type_: "PreemptionScheduled".to_owned(),
                            status: "True".to_owned(),
                            reason: Some("SpotInterruption".to_owned()),
                            last_transition_time: Some(Time(now)),
                            ..NodeCondition::default()
                        },
                    );
                    if let Some(provider_id) =
                        node.spec.as_ref().and_then(|s| s.provider_id.clone())
                    {
                        self.reclaims.push(Reclaim {
                            at: now.saturating_add(INTERRUPTION_NOTICE).unwrap_or(now),
                            node: node.metadata.name.clone().unwrap_or_default(),
                            provider_id,
                        });
                    }
                }
                warning.into_iter().collect()
            }
            Planned::Fail { nodes } => {
                let (victims, warning) = self.choose(world, due, *nodes, None, seed, now);
                for node in victims {
                    world.cluster.set_node_condition(
                        &node.metadata.name.clone().unwrap_or_default(),
                        NodeCondition {
                            type_: "Ready".to_owned(),
                            status: "False".to_owned(),
                            reason: Some("KubeletNotReady".to_owned()),
                            last_transition_time: Some(Time(now)),
                            ..NodeCondition::default()
                        },
                    );
                }
                warning.into_iter().collect()
            }
            Planned::Drift { node_pool } => {
                let pools = block_on(world.cluster.node_pools()).unwrap_or_default();
                if let Some(mut pool) = pools
                    .into_iter()
                    .find(|p| p.metadata.name.as_deref() == Some(node_pool))
                {
                    let annotations = pool
                        .spec
                        .template
                        .metadata
                        .get_or_insert_with(Default::default)
                        .annotations
                        .get_or_insert_with(Default::default);
                    let generation = annotations
                        .get(GENERATION_ANNOTATION)
                        .and_then(|g| g.parse::<u64>().ok())
                        .unwrap_or(0);
                    annotations.insert(
                        GENERATION_ANNOTATION.to_owned(),
                        (generation + 1).to_string(),
                    );
                    world.cluster.apply_node_pool(pool);
                }
                Vec::new()
            }
        }
    }

    /// Picks `count` nodes for an `interrupt` or `fail`, by the seed: among
    /// the Karpenter nodes that are ready, not being deleted, not hit before
    /// and (for an interrupt) of the capacity type, in name order, a seeded
    /// shuffle takes the first `count`. Fewer there are all taken, with a
    /// warning.
    fn choose(
        &mut self,
        world: &World,
        due: &Due,
        count: u32,
        capacity_type: Option<&str>,
        seed: u64,
        now: Timestamp,
    ) -> (Vec<Node>, Option<String>) {
        let mut eligible: Vec<Node> = world
            .cluster
            .node_list()
            .into_iter()
            .filter(|n| label(n, NODE_POOL_LABEL_KEY).is_some())
            .filter(|n| n.metadata.deletion_timestamp.is_none() && ready(n))
            .filter(|n| {
                capacity_type.is_none_or(|ct| label(n, CAPACITY_TYPE_LABEL_KEY) == Some(ct))
            })
            .filter(|n| {
                !self
                    .hit
                    .contains(n.metadata.name.as_deref().unwrap_or_default())
            })
            .collect();
        eligible.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let wanted = usize::try_from(count).unwrap_or(usize::MAX);
        let warning = (wanted > eligible.len()).then(|| {
            let what = match capacity_type {
                Some(ct) => format!("interrupt of {count} {ct} nodes"),
                None => format!("fail of {count} nodes"),
            };
            format!(
                "{now}: the {what} (event {}) found {} eligible; all were hit",
                due.event,
                eligible.len()
            )
        });
        let mut draws = stream(seed, due.event);
        let taken = wanted.min(eligible.len());
        for i in 0..taken {
            let j = i + draws.below(eligible.len() - i);
            eligible.swap(i, j);
        }
        eligible.truncate(taken);
        for node in &eligible {
            self.hit
                .insert(node.metadata.name.clone().unwrap_or_default());
        }
        (eligible, warning)
    }

    /// The reclaims due by `now`, taken off the list.
    pub(super) fn due_reclaims(&mut self, now: Timestamp) -> Vec<Reclaim> {
        let (due, later) = std::mem::take(&mut self.reclaims)
            .into_iter()
            .partition(|r| r.at <= now);
        self.reclaims = later;
        due
    }
}
