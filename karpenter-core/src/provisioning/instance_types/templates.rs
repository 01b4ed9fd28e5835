//! NodeClaim templates: what a new claim from each NodePool starts as — its
//! requirements, taints, instance types and the daemon overhead on each type.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

use super::filter::{self, FilterError};
use super::fit_index::FitIndex;
use super::type_cache::{TypeCache, TypeSet};
use crate::api::{NodePool, condition_types};
use crate::cloudprovider::InstanceType;
use crate::planning::MinValuesPolicy;
use crate::provisioning::demand::daemons::DaemonPod;
use crate::provisioning::demand::host_ports::HostPort;
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    NODE_INITIALIZED_LABEL_KEY, NODE_POOL_LABEL_KEY, NODE_REGISTERED_LABEL_KEY, Requirement,
    Requirements, TAINT_EFFECT_PREFER_NO_SCHEDULE, WellKnownLabels,
};

/// The daemons that land on a set of instance types, and what they take.
#[derive(Clone, Debug, Default)]
pub(crate) struct DaemonGroup {
    /// Their requests, summed.
    pub overhead: ResourceList,
    /// The host ports they bind.
    pub host_ports: Vec<HostPort>,
}

/// The resources a claim's quick headroom check compares (a claim's
/// `may_fit`, see [`Template::headroom`]): cpu, memory and pods.
pub(crate) const HEADROOM_RESOURCES: [&str; 3] =
    [resources::CPU, resources::MEMORY, resources::PODS];

/// A NodePool as the start of new claims.
#[derive(Debug)]
pub(crate) struct Template<'s> {
    /// The NodePool's name.
    pub pool: String,
    /// NodePool requirements, template labels, the pool and node class labels, and
    /// `registered`/`initialized` (so daemons selecting them count; not written out).
    pub requirements: Requirements,
    /// The taints pods must tolerate (startup taints need no toleration).
    pub taints: Vec<Taint>,
    /// The provider's instance types for the pool.
    pub types: &'s [InstanceType],
    /// The allocatable of each type.
    pub allocatable: Vec<ResourceList>,
    /// The cpu, memory and pods of each type's allocatable (the resources of
    /// [`HEADROOM_RESOURCES`]), read once.
    pub headroom: Vec<[i64; 3]>,
    /// The types compatible with the pool's requirements, with an available
    /// offering: indices into `types`.
    pub options: Vec<usize>,
    /// The same, as a set.
    pub option_set: TypeSet,
    /// For each of the [`HEADROOM_RESOURCES`], the options by their amount of
    /// it, largest first (see [`headroom_of`](Self::headroom_of)).
    largest_first: [Vec<usize>; 3],
    /// Daemon overhead groups.
    pub daemon_groups: Vec<DaemonGroup>,
    /// Each type's allocatable as amounts of cpu, memory, pods and ephemeral
    /// storage, when nothing else it holds is negative: requests of those four
    /// alone then fit by a few compares (a provider's extended resources, such
    /// as AWS's pod ENIs on nearly every type, do not matter to them).
    pub fixed_allocatable: Vec<Option<[i64; 4]>>,
    /// The group of each type in `types` (`usize::MAX` for types not in `options`).
    pub group_of: Vec<usize>,
    /// The types' answers to the requirements met so far.
    pub cache: TypeCache,
    /// The types sorted by what they hold, for narrowing claims as they grow.
    pub fit_index: FitIndex,
    /// Whether some type of `options` has an available reserved offering
    /// with a reservation (claims from it may hold reservations).
    pub has_reservations: bool,
}

/// The NodePools a new claim may come from, in the order they are tried: weight
/// descending, then name descending, as upstream sorts them. Static pools (with
/// `spec.replicas`), pools being deleted and pools whose `Ready` condition is not
/// true are left out.
pub(crate) fn pool_order(pools: &[NodePool]) -> Vec<&NodePool> {
    let mut usable: Vec<&NodePool> = pools
        .iter()
        .filter(|p| !p.spec.is_static() && p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            p.condition(condition_types::READY)
                .is_none_or(|c| c.is_true())
        })
        .collect();
    usable.sort_by(|a, b| {
        let weight = |p: &NodePool| p.spec.effective_weight();
        weight(b)
            .cmp(&weight(a))
            .then_with(|| b.name().cmp(&a.name()))
    });
    usable
}

/// The labels every node of the pool carries: its template's labels, the
/// pool's label and the node class label.
pub(crate) fn pool_labels(pool: &NodePool) -> BTreeMap<String, String> {
    let mut labels = pool
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(
        NODE_POOL_LABEL_KEY.to_string(),
        pool.name().unwrap_or_default().to_string(),
    );
    if let Some(class) = &pool.spec.template.spec.node_class_ref {
        let key = format!("{}/{}", class.group, class.kind.to_lowercase());
        labels.insert(key, class.name.clone());
    }
    labels
}

/// The requirements of a pool's template; invalid requirements were refused when
/// the input was read, and are skipped here.
pub(crate) fn template_requirements(pool: &NodePool) -> Requirements {
    let spec = &pool.spec.template.spec;
    let mut requirements = Requirements::new();
    for written in spec.requirements() {
        let parsed = written.to_selector_requirement().ok();
        if let Some(requirement) = parsed.and_then(|r| Requirement::try_from(&r).ok()) {
            requirements.add(requirement);
        }
    }
    let labels = pool_labels(pool);
    requirements.add_all(&Requirements::from_labels(&labels));
    requirements.add(Requirement::in_values(NODE_REGISTERED_LABEL_KEY, ["true"]));
    requirements.add(Requirement::in_values(NODE_INITIALIZED_LABEL_KEY, ["true"]));
    requirements
}

impl<'s> Template<'s> {
    /// Builds a pool's template; `Err` when no instance type is left for it.
    /// With [`MinValuesPolicy::BestEffort`], a pool whose types meet its
    /// requirements but not their `minValues` keeps those types (as
    /// upstream's `NewScheduler`); its claims lower the `minValues` then.
    pub(crate) fn new(
        pool: &NodePool,
        types: &'s [InstanceType],
        daemons: &[DaemonPod],
        well_known: &WellKnownLabels,
        policy: MinValuesPolicy,
    ) -> Result<Template<'s>, FilterError> {
        let requirements = template_requirements(pool);
        let allocatable: Vec<ResourceList> = types.iter().map(InstanceType::allocatable).collect();
        let all: Vec<usize> = (0..types.len()).collect();
        let none = ResourceList::new();
        let cache = TypeCache::new(types);
        let headroom: Vec<[i64; 3]> = allocatable
            .iter()
            .map(|a| HEADROOM_RESOURCES.map(|name| a.get(name)))
            .collect();
        let options = match filter::without_daemons(
            types,
            &cache,
            &allocatable,
            &all,
            &requirements,
            &none,
        ) {
            Err(e) if e.names_min_values() && policy.relaxes() => {
                let loose = requirements.without_min_values();
                filter::without_daemons(types, &cache, &allocatable, &all, &loose, &none)?
            }
            other => other?,
        };
        let taints = pool.spec.template.spec.taints().to_vec();
        let mut daemon_groups: Vec<DaemonGroup> = Vec::new();
        let mut group_keys: Vec<Vec<usize>> = Vec::new();
        let mut group_of = vec![usize::MAX; types.len()];
        for &t in &options {
            let landing: Vec<usize> = (0..daemons.len())
                .filter(|&d| {
                    daemons[d].runs_on(&requirements, &taints, &types[t].requirements, well_known)
                })
                .collect();
            let group = match group_keys.iter().position(|k| *k == landing) {
                Some(group) => group,
                None => {
                    let mut group = DaemonGroup::default();
                    for &d in &landing {
                        group.overhead += &daemons[d].requests;
                        group
                            .host_ports
                            .extend(daemons[d].host_ports.iter().cloned());
                    }
                    daemon_groups.push(group);
                    group_keys.push(landing);
                    daemon_groups.len() - 1
                }
            };
            group_of[t] = group;
        }
        let fixed_allocatable: Vec<Option<[i64; 4]>> = allocatable
            .iter()
            .map(|a| (!a.has_negative_extended()).then(|| a.fixed_amounts()))
            .collect();
        let overheads: Vec<&ResourceList> = daemon_groups.iter().map(|g| &g.overhead).collect();
        let fit_index = FitIndex::new(&options, &group_of, &overheads, &fixed_allocatable);
        let option_set = TypeSet::of(types.len(), &options);
        let largest_first = std::array::from_fn(|r| {
            let mut sorted = options.clone();
            sorted.sort_by_key(|&t| std::cmp::Reverse(headroom[t][r]));
            sorted
        });
        let has_reservations = options.iter().any(|&t| {
            types[t]
                .offerings
                .iter()
                .any(|o| o.available && o.reservation.is_some())
        });
        Ok(Template {
            pool: pool.name().unwrap_or_default().to_string(),
            requirements,
            taints,
            types,
            allocatable,
            headroom,
            options,
            option_set,
            largest_first,
            daemon_groups,
            fixed_allocatable,
            group_of,
            cache,
            fit_index,
            has_reservations,
        })
    }
}

impl Template<'_> {
    /// The most cpu, memory and pods any type of `options` has for pods: for
    /// each, the first of the options by that amount, largest first (0 when
    /// there is none).
    pub(crate) fn headroom_of(&self, options: &TypeSet) -> [i64; 3] {
        std::array::from_fn(|r| {
            let largest = self.largest_first[r].iter().find(|&&t| options.contains(t));
            largest.map_or(0, |&t| self.headroom[t][r].max(0))
        })
    }
}

/// Whether any pool's template has a `PreferNoSchedule` taint: then tolerating
/// those taints is the last relaxation step.
pub(crate) fn any_prefer_no_schedule(pools: &[&NodePool]) -> bool {
    pools.iter().any(|p| {
        p.spec
            .template
            .spec
            .taints()
            .iter()
            .any(|t| t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE)
    })
}
