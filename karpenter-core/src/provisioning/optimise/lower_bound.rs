//! A proven lower bound on the price of any valid plan for a set of pods
//! that need new capacity (`--bound`, `lowerBoundPerHour`).
//!
//! The relaxation: pods are grouped by where they may run (the instance
//! types, and their cheapest compatible offering, that their requirements,
//! tolerations and requests allow in some NodePool) and by shape; nodes are bought
//! fractionally, and each group's demand (cpu, memory, pods, extended
//! resources) is spread over the nodes its pods may use. Topology,
//! affinity and daemon overhead are left out, so any valid plan costs at
//! least the relaxation's optimum. Of integrality, what pods too large to
//! share a node force is added (`own_nodes_bound`).
//!
//! The bound is read off the dual, which makes it a certificate: for each
//! node column, a price per unit of each resource such that a whole node's
//! allocatable costs no more than the node; each pod then pays, at the
//! cheapest column its group may use, for its own request. By weak duality
//! the sum is at most the price of any plan (each pod sits on one node).
//! The LP solver (microlp) only suggests the prices; they are scaled back
//! into feasibility and the sum is taken here, rounded down, so the bound
//! does not rest on the solver's precision.
//!
//! The LP and its column generation are in `dual.rs`, which the cost packer
//! shares.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::{NodeSelector, PodSpec};

use super::dual::{Column, Demand, allowed, shape, unit_prices};
use crate::api::NodePool;
use crate::cloudprovider::InstanceType;
use crate::pods::{PodKey, pod_key};
use crate::provisioning::plan::ProvisioningPlan;
use crate::resources::{ResourceList, pod_requests};
use crate::scheduling::{
    Requirement, Requirements, TAINT_EFFECT_PREFER_NO_SCHEDULE, tolerates_all,
};
use crate::snapshot::Snapshot;

/// Pods that may run on the same nodes at the same prices: their demand
/// for the LP, and their distinct requests (bit patterns of the scaled
/// amounts) with how many pods ask each, which the certificate charges pod
/// by pod.
#[derive(Debug)]
struct Group {
    demand: Demand,
    members: BTreeMap<Vec<u64>, usize>,
}

/// What sets a group apart: its candidate prices (type, price bits) and its
/// pods' shape.
type GroupKey = (Vec<(usize, u64)>, Vec<u8>);

/// Every instance type of the snapshot's pools, by name, with its allocatable.
///
/// Pools may see one name with different shapes (a NodeOverlay adding
/// capacity in one pool, a provider whose node classes change allocatable):
/// each shape is its own entry, so no pool's type is judged by another's.
struct Catalog<'s> {
    types: Vec<&'s InstanceType>,
    by_name: BTreeMap<&'s str, Vec<usize>>,
}

impl<'s> Catalog<'s> {
    /// Every distinct type (by name and shape) of the snapshot's pools.
    fn of(snapshot: &'s Snapshot) -> Catalog<'s> {
        let mut catalog = Catalog {
            types: Vec::new(),
            by_name: BTreeMap::new(),
        };
        for types in snapshot.instance_types.values() {
            for t in types.iter() {
                if catalog.find(t).is_none() {
                    let at = catalog.types.len();
                    catalog.by_name.entry(t.name.as_str()).or_default().push(at);
                    catalog.types.push(t);
                }
            }
        }
        catalog
    }

    /// The entry of `t`: its name and its shape.
    fn find(&self, t: &InstanceType) -> Option<usize> {
        self.by_name
            .get(t.name.as_str())?
            .iter()
            .copied()
            .find(|&at| {
                let known = self.types[at];
                known.capacity == t.capacity && known.overhead == t.overhead
            })
    }
}

/// The resources the bound counts, in units that keep the LP well scaled:
/// cpu in cores, memory in GiB, everything else in units.
fn unit_scale(resource: &str) -> f64 {
    match resource {
        "memory" | "ephemeral-storage" => 1000.0 * f64::from(1u32 << 30),
        _ => 1000.0,
    }
}

/// The pod's required node affinity, if any.
fn required_affinity(spec: &PodSpec) -> Option<&NodeSelector> {
    spec.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
}

/// The pod's requirements from its node selector and its single required
/// node-affinity term; `None` when it has several terms (any of which may
/// hold) or they cannot be read: then every type is its candidate.
fn pod_requirements(pod: &PodInfo) -> Option<Requirements> {
    let spec = pod.spec.as_ref()?;
    let terms = required_affinity(spec).map_or(0, |r| r.node_selector_terms.len());
    if terms > 1 {
        return None;
    }
    // Preferences are relaxed when they cannot be met: only what is required
    // binds every plan.
    Requirements::from_pod_spec_strict(spec).ok()
}

/// The pool's requirements, as written.
fn pool_requirements(pool: &NodePool) -> Option<Requirements> {
    let mut requirements = Requirements::new();
    for written in pool.spec.template.spec.requirements() {
        let requirement = written
            .to_selector_requirement()
            .ok()
            .and_then(|r| Requirement::try_from(&r).ok())?;
        requirements.add(requirement);
    }
    Some(requirements)
}

/// A proven lower bound on the hourly price of new capacity for `pods`, or
/// `None` when the LP cannot be solved (the bound is then unknown, not 0).
/// A pod no instance type can hold makes every plan invalid: it is left out.
pub fn lower_bound(snapshot: &Snapshot, pods: &[&PodInfo]) -> Option<f64> {
    let catalog = Catalog::of(snapshot);
    // The resources in play: cpu, memory, pods, and whatever else is asked.
    let mut resources: Vec<String> = vec!["cpu".into(), "memory".into(), "pods".into()];
    let requests: Vec<ResourceList> = pods
        .iter()
        .map(|p| {
            p.spec
                .as_ref()
                .and_then(|s| pod_requests(s).ok())
                .unwrap_or_default()
        })
        .collect();
    for list in &requests {
        for (name, _) in list.iter() {
            if !resources.iter().any(|r| r == name) {
                resources.push(name.to_owned());
            }
        }
    }
    let pools: Vec<(&NodePool, Option<Requirements>)> = snapshot
        .node_pools
        .iter()
        .map(|p| (p, pool_requirements(p)))
        .collect();
    let allocatable_lists: Vec<ResourceList> =
        catalog.types.iter().map(|t| t.allocatable()).collect();
    let allocatable: Vec<Vec<f64>> = allocatable_lists
        .iter()
        .map(|list| {
            resources
                .iter()
                .map(|r| list.get(r).max(0) as f64 / unit_scale(r))
                .collect()
        })
        .collect();
    // Each resource's largest amount on a node: what makes shapes comparable.
    let largest: Vec<f64> = (0..resources.len())
        .map(|r| allocatable.iter().map(|a| a[r]).fold(0.0, f64::max))
        .collect();
    // Group the pods by their candidate prices and their shape: the finer the
    // groups, the closer the LP's unit prices come to charging every pod its
    // own cheapest share. Pods alike in what they select and tolerate share
    // the work of finding their candidates.
    let mut by_signature: crate::fast_hash::HashMap<String, BTreeMap<usize, f64>> =
        crate::fast_hash::HashMap::default();
    let mut groups: BTreeMap<GroupKey, Group> = BTreeMap::new();
    for (pod, asks) in pods.iter().zip(&requests) {
        let signature = signature(pod);
        let candidates = by_signature
            .entry(signature)
            .or_insert_with(|| candidate_prices(snapshot, &catalog, &pools, pod));
        let prices: BTreeMap<usize, f64> = candidates
            .iter()
            .filter(|(t, _)| asks.fits(&allocatable_lists[**t]))
            .map(|(t, p)| (*t, *p))
            .collect();
        if prices.is_empty() {
            continue;
        }
        let request: Vec<f64> = resources
            .iter()
            .map(|r| asks.get(r) as f64 / unit_scale(r))
            .collect();
        let key: Vec<(usize, u64)> = prices.iter().map(|(t, p)| (*t, p.to_bits())).collect();
        let group = groups
            .entry((key, shape(&request, &largest)))
            .or_insert_with(|| Group {
                demand: Demand {
                    prices,
                    amounts: vec![0.0; resources.len()],
                },
                members: BTreeMap::new(),
            });
        for (total, amount) in group.demand.amounts.iter_mut().zip(&request) {
            *total += amount;
        }
        *group
            .members
            .entry(request.iter().map(|x| x.to_bits()).collect())
            .or_insert(0) += 1;
    }
    if groups.is_empty() {
        return Some(0.0);
    }
    let groups: Vec<Group> = groups.into_values().collect();
    // Columns: each type at each price some group has it at.
    let mut columns: Vec<Column> = Vec::new();
    for group in &groups {
        for (&t, &price) in &group.demand.prices {
            let column = Column {
                instance_type: t,
                price,
            };
            if !columns.contains(&column) {
                columns.push(column);
            }
        }
    }
    let demands: Vec<Demand> = groups.iter().map(|g| g.demand.clone()).collect();
    let weights = unit_prices(&demands, &columns, &allocatable)?;
    Some(certify(&groups, &columns, &allocatable, weights))
}

/// What decides where a pod may run: its node selector, required node
/// affinity and tolerations.
fn signature(pod: &PodInfo) -> String {
    let Some(spec) = pod.spec.as_ref() else {
        return String::new();
    };
    let required = required_affinity(spec);
    format!(
        "{:?}|{:?}|{:?}",
        spec.node_selector, required, spec.tolerations
    )
}

/// For each instance type the pod may run on (in some pool it tolerates,
/// whose requirements and its own allow the type), the cheapest available
/// offering they allow. Whether its requests fit is the caller's to check.
fn candidate_prices(
    snapshot: &Snapshot,
    catalog: &Catalog<'_>,
    pools: &[(&NodePool, Option<Requirements>)],
    pod: &PodInfo,
) -> BTreeMap<usize, f64> {
    let own = pod_requirements(pod);
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    let mut prices: BTreeMap<usize, f64> = BTreeMap::new();
    for (pool, pool_requirements) in pools {
        // PreferNoSchedule taints are relaxed away when nothing else fits:
        // they keep no pod off the pool.
        let binding: Vec<_> = pool
            .spec
            .template
            .spec
            .taints()
            .iter()
            .filter(|t| t.effect != TAINT_EFFECT_PREFER_NO_SCHEDULE)
            .cloned()
            .collect();
        if tolerates_all(&binding, tolerations).is_err() {
            continue;
        }
        let Some(name) = pool.metadata.name.as_deref() else {
            continue;
        };
        let Some(types) = snapshot.instance_types.get(name) else {
            continue;
        };
        // What a node of the pool must satisfy for this pod: the pool's
        // requirements and (when readable) the pod's.
        let mut wanted = pool_requirements.clone().unwrap_or_default();
        if let Some(own) = &own {
            if !wanted.is_intersecting(own) {
                continue;
            }
            wanted.add_all(own);
        }
        for t in types.iter() {
            // As the scheduler filters a claim's types.
            if !t.intersects(&wanted) {
                continue;
            }
            let Some(offering) = t.cheapest_offering(&wanted) else {
                continue;
            };
            let Some(index) = catalog.find(t) else {
                continue;
            };
            let entry = prices.entry(index).or_insert(offering.price);
            *entry = entry.min(offering.price);
        }
    }
    prices
}

/// The bound the unit prices prove: each column's prices scaled down until
/// a whole node costs no more than the column; each group's payment at its
/// cheapest allowed column; the sum, rounded down.
fn certify(
    groups: &[Group],
    columns: &[Column],
    allocatable: &[Vec<f64>],
    mut weights: Vec<Vec<f64>>,
) -> f64 {
    const SAFETY: f64 = 1.0 - 1e-12;
    for (c, column) in columns.iter().enumerate() {
        let capacity = &allocatable[column.instance_type];
        for (r, w) in weights[c].iter_mut().enumerate() {
            if capacity[r] <= 0.0 {
                *w = 0.0;
            }
        }
        let cost: f64 = weights[c].iter().zip(capacity).map(|(w, a)| w * a).sum();
        if cost > 0.0 {
            let scale = (column.price / cost).min(1.0) * SAFETY;
            for w in &mut weights[c] {
                *w *= scale;
            }
        }
    }
    // Each pod pays for its own request at the cheapest column its group may
    // use: a plan puts each pod on one node, so this is what weak duality
    // allows (a group charged as one block could be charged more than a plan
    // splitting unlike pods over unlike nodes pays).
    let mut members: Vec<Member> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let usable: Vec<usize> = (0..columns.len())
            .filter(|&c| allowed(&group.demand, &columns[c]))
            .collect();
        for (request, count) in &group.members {
            let request: Vec<f64> = request.iter().map(|d| f64::from_bits(*d)).collect();
            let payment = usable
                .iter()
                .map(|&c| {
                    weights[c]
                        .iter()
                        .zip(&request)
                        .map(|(w, d)| w * d)
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min);
            if payment.is_finite() {
                members.push(Member {
                    group: g,
                    request,
                    count: *count,
                    payment,
                });
            }
        }
    }
    let fluid: f64 = members.iter().map(|m| m.payment * m.count as f64).sum();
    let bound = fluid.max(own_nodes_bound(groups, allocatable, &members));
    (bound * SAFETY).max(0.0)
}

/// At most this many kinds of pods are charged a node each: choosing them
/// compares each with those chosen before. (Any set of pods that fit no two
/// together proves its nodes, so stopping early only weakens the bound.)
const MOST_ALONE: usize = 512;

/// The pods charged beside them are sought only while that compares at most
/// this many pairs; beyond, they are left out (0 is always a valid charge).
const MOST_PAIRS: usize = 2_000_000;

/// Pods alike in group and request, with what each pays in the fluid
/// certificate.
struct Member {
    group: usize,
    request: Vec<f64>,
    count: usize,
    payment: f64,
}

/// What integrality forces: pods no two of which fit one node together each
/// need a node of their own, at least the cheapest type holding each; and
/// pods that fit on no such node beside them are charged their fluid
/// payment on top (their nodes are others). 0 when no pod is that large.
///
/// "Fit together" is judged generously (any type both may use, whatever the
/// pool, a hair of rounding allowed), so that pods judged apart truly are.
fn own_nodes_bound(groups: &[Group], allocatable: &[Vec<f64>], members: &[Member]) -> f64 {
    let together = |a: &Member, b: &Member| {
        let (left, right) = (
            &groups[a.group].demand.prices,
            &groups[b.group].demand.prices,
        );
        left.keys().filter(|t| right.contains_key(t)).any(|&t| {
            a.request
                .iter()
                .zip(&b.request)
                .zip(&allocatable[t])
                .all(|((x, y), room)| x + y <= room * (1.0 + 1e-9) + 1e-12)
        })
    };
    // Largest first, the pods that fit with none chosen so far (nor, when
    // several ask alike, with each other) are chosen.
    let size = |m: &Member| {
        let prices = &groups[m.group].demand.prices;
        prices
            .keys()
            .map(|&t| {
                m.request
                    .iter()
                    .zip(&allocatable[t])
                    .map(|(d, a)| if *a > 0.0 { d / a } else { 0.0 })
                    .fold(0.0, f64::max)
            })
            .fold(f64::INFINITY, f64::min)
    };
    // Each size computed once (it scans the member's types).
    let mut order: Vec<(usize, f64)> = (0..members.len())
        .map(|m| (m, size(&members[m])))
        .filter(|&(_, s)| s > 0.5)
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut alone: Vec<usize> = Vec::new();
    for (m, _) in order {
        if alone.len() == MOST_ALONE {
            break;
        }
        let member = &members[m];
        if (member.count > 1 && together(member, member))
            || alone.iter().any(|&o| together(member, &members[o]))
        {
            continue;
        }
        alone.push(m);
    }
    if alone.is_empty() {
        return 0.0;
    }
    let own: f64 = alone
        .iter()
        .map(|&m| {
            let cheapest = groups[members[m].group]
                .demand
                .prices
                .values()
                .fold(f64::INFINITY, |a, &b| a.min(b));
            cheapest * members[m].count as f64
        })
        .sum();
    if alone.len() * members.len() > MOST_PAIRS {
        return own;
    }
    let apart: f64 = (0..members.len())
        .filter(|m| !alone.contains(m))
        .filter(|&m| alone.iter().all(|&o| !together(&members[m], &members[o])))
        .map(|m| members[m].payment * members[m].count as f64)
        .sum();
    own + apart
}

impl ProvisioningPlan {
    /// Sets [`lower_bound_per_hour`](Self::lower_bound_per_hour): the proven
    /// lower bound on new capacity for the pods this plan sends to new
    /// claims, rounded down to the ninth decimal.
    pub fn add_lower_bound(&mut self, snapshot: &Snapshot) {
        let wanted: std::collections::BTreeSet<&str> = self
            .node_claims
            .iter()
            .flat_map(|c| c.pods.iter().map(PodKey::as_str))
            .collect();
        let mut pods: Vec<&PodInfo> = snapshot
            .pods
            .iter()
            .map(Arc::as_ref)
            .filter(|p| wanted.contains(pod_key(p).as_str()))
            .collect();
        // The CapacityBuffer chunks the new claims hold need the room too
        // (the chunks of a buffer are alike: any of them stands for one).
        let mut chunks: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
        for claim in &self.node_claims {
            for (buffer, count) in &claim.capacity_buffers {
                *chunks.entry(buffer.as_str()).or_default() += count;
            }
        }
        if !chunks.is_empty() {
            let states = snapshot.capacity_buffers.states();
            for (pod, buffer) in snapshot.capacity_buffers.virtual_pods() {
                let key = states.get(buffer as usize).map_or("", |s| s.key.as_str());
                if let Some(left) = chunks.get_mut(key).filter(|left| **left > 0) {
                    *left -= 1;
                    pods.push(pod);
                }
            }
        }
        self.lower_bound_per_hour = lower_bound(snapshot, &pods).map(|b| (b * 1e9).floor() / 1e9);
    }
}

#[cfg(test)]
mod tests;
