//! The cost mode's second pass over a solved scheduler: the new claims whose
//! pods are all *loose* (no topology group concerns them, no host port, no
//! volume) are packed again at least price, NodePool by NodePool and
//! requirement set by requirement set, and each connected set of such claims
//! takes the new packing only when it is cheaper.
//!
//! Why this keeps every constraint: a loose pod's requirements, tolerations
//! and pool stay those the upstream pass gave it; its new claim is built by
//! the same admission as every claim (requirements merged, instance types
//! narrowed with daemon overhead, minValues checked as the plan is written);
//! and moving it changes no spread count, affinity or anti-affinity, since no
//! group selects it. In a pool with limits the new claims are charged as
//! upstream charges every claim: in order after the claims kept, each offered
//! only the types that fit what the limits leave, and charged its largest
//! type; a repacking the limits cannot take is not made. Claims of a pool
//! offering capacity reservations are kept as the upstream pass made them.

use petgraph::unionfind::UnionFind;

use super::pack::{Kind, pack};
use crate::fast_hash::HashMap;
use crate::planning::MinValuesPolicy;
use crate::provisioning::demand::host_ports::host_ports;
use crate::provisioning::instance_types::filter::unmet_min_values;
use crate::provisioning::instance_types::templates::Template;
use crate::provisioning::instance_types::type_cache::TypeSet;
use crate::provisioning::scheduler::claim::NewClaim;
use crate::provisioning::scheduler::finalize::listed;
use crate::provisioning::scheduler::setup::Limits;
use crate::provisioning::scheduler::solve::{Scheduler, charge, view};
use crate::scheduling::Requirements;

/// Loose claims tied together by sharing a (pool, requirements) group of
/// pods: they are repacked, or kept, together.
struct Component {
    /// Indices into the scheduler's claims, ascending.
    claims: Vec<usize>,
    /// The groups' pods (indices into the scheduler's pods), group by group,
    /// each in the order the claims held them, with the group's template.
    groups: Vec<(usize, Vec<usize>)>,
}

impl Scheduler<'_> {
    /// Repacks the loose claims where that lowers the price (see the module
    /// documentation); `limits_at_start` are the pools' limits as they stood
    /// before any new claim was charged.
    pub(crate) fn repack_for_cost(&mut self, limits_at_start: &[Option<Limits>]) {
        let components = self.loose_components();
        if components.is_empty() {
            return;
        }
        let mut next_id = self.claims.len() + 1;
        let mut replaced = vec![false; self.claims.len()];
        let mut added = Vec::new();
        for component in components {
            let template = self.claims[component.claims[0]].template;
            let mut limits = self.limits_left(
                limits_at_start[template].as_ref(),
                template,
                &replaced,
                &component,
                &added,
            );
            let before: f64 = component
                .claims
                .iter()
                .map(|&c| launch_price(&self.templates[self.claims[c].template], &self.claims[c]))
                .sum();
            let Some(claims) = self.repacked(&component, &mut next_id, limits.as_mut()) else {
                continue;
            };
            let after: f64 = claims
                .iter()
                .map(|claim| launch_price(&self.templates[claim.template], claim))
                .sum();
            // Strictly cheaper only: on a tie the upstream claims stay.
            if after < before - 1e-9 {
                component.claims.iter().for_each(|&c| replaced[c] = true);
                added.extend(claims);
                if limits.is_some() {
                    self.limits[template] = limits;
                }
            }
        }
        let mut kept: Vec<NewClaim> = std::mem::take(&mut self.claims)
            .into_iter()
            .zip(replaced)
            .filter(|(_, gone)| !gone)
            .map(|(claim, _)| claim)
            .collect();
        kept.extend(added);
        self.claims = kept;
    }

    /// Whether a placed pod is loose: nothing ties where it runs to any
    /// other pod, and it binds no host port and mounts no volume with node
    /// affinity.
    fn is_loose(&self, pod: usize) -> bool {
        let p = &self.pods[pod];
        p.volume_alternatives.is_empty()
            && host_ports(&p.spec).is_empty()
            && !self.topology.concerns(&view(p))
    }

    /// What the limits of `template`'s pool leave for a component's new
    /// claims: the limits before any claim (`at_start`), less every claim
    /// kept (in order, the component's own excepted) and every claim added so
    /// far. `None` when the pool has no limits.
    fn limits_left(
        &self,
        at_start: Option<&Limits>,
        template: usize,
        replaced: &[bool],
        component: &Component,
        added: &[NewClaim],
    ) -> Option<Limits> {
        let mut limits = at_start?.clone();
        let kept = (0..self.claims.len())
            .filter(|&c| !replaced[c] && !component.claims.contains(&c))
            .map(|c| &self.claims[c]);
        for claim in kept.chain(added) {
            if claim.template == template {
                charge(&mut limits, &self.templates[template], &claim.options);
            }
        }
        Some(limits)
    }

    /// The loose claims (every pod loose), in connected components by their pods' (pool, requirements) groups,
    /// in the order of their first claims.
    fn loose_components(&self) -> Vec<Component> {
        // Claims of a pool offering reservations stay as upstream made them:
        // they hold, or were refused, reservations in the order upstream
        // meets them, which a repacking would have to take again.
        let reserving = self.reservations.counting();
        let loose: Vec<usize> = (0..self.claims.len())
            .filter(|&c| {
                let claim = &self.claims[c];
                !(reserving && self.templates[claim.template].has_reservations)
                    && claim.pods.iter().all(|&p| self.is_loose(p))
            })
            .collect();
        // Group ids by first appearance; each group's first claim.
        let mut group_ids: HashMap<(usize, &Requirements), usize> = HashMap::default();
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut first_claim: Vec<usize> = Vec::new();
        // Claims are joined when they hold pods of one group: the components
        // are the sets whose pods may be packed again together.
        let mut joined = UnionFind::<usize>::new(self.claims.len());
        for &c in &loose {
            let claim = &self.claims[c];
            for &p in &claim.pods {
                let key = (claim.template, &self.pods[p].requirements);
                let next = groups.len();
                let g = *group_ids.entry(key).or_insert(next);
                if g == next {
                    groups.push((claim.template, Vec::new()));
                    first_claim.push(c);
                }
                groups[g].1.push(p);
                joined.union(first_claim[g], c);
            }
        }
        let mut components: Vec<Component> = Vec::new();
        let mut index_of: HashMap<usize, usize> = HashMap::default();
        for &c in &loose {
            let root = joined.find_mut(c);
            let next = components.len();
            let at = *index_of.entry(root).or_insert(next);
            if at == next {
                components.push(Component {
                    claims: Vec::new(),
                    groups: Vec::new(),
                });
            }
            components[at].claims.push(c);
        }
        for (g, group) in groups.into_iter().enumerate() {
            let root = joined.find_mut(first_claim[g]);
            components[index_of[&root]].groups.push(group);
        }
        components
    }

    /// The component's pods packed at least price, as claims built by the
    /// ordinary admission and charged to `limits` (what the pool's limits
    /// leave, if it has any); `None` when some group cannot be packed or a
    /// claim would not be valid.
    fn repacked(
        &self,
        component: &Component,
        next_id: &mut usize,
        mut limits: Option<&mut Limits>,
    ) -> Option<Vec<NewClaim>> {
        let mut claims = Vec::new();
        for (t, pods) in &component.groups {
            let template = &self.templates[*t];
            let first = *pods.first()?;
            let seed = NewClaim::new(*t, template, template.option_set.clone(), 0);
            let requirements = seed
                .base_requirements(template, &self.pods[first], self.well_known)
                .ok()?;
            let dims = resource_names(pods.iter().map(|&p| &self.pods[p].requests));
            // Only the types the limits leave room for may be packed into.
            let room = admitted(template, limits.as_deref())?;
            let kinds = kinds(template, &room, &requirements, &dims);
            let items: Vec<Vec<i64>> = pods
                .iter()
                .map(|&p| dims.iter().map(|d| self.pods[p].requests.get(d)).collect())
                .collect();
            for bin in pack(&items, &kinds)? {
                let options = admitted(template, limits.as_deref())?;
                let mut claim = NewClaim::new(*t, template, options, *next_id);
                *next_id += 1;
                for &item in &bin.items {
                    let pod = &self.pods[pods[item]];
                    let base = claim
                        .base_requirements(template, pod, self.well_known)
                        .ok()?;
                    // Strictly: a component is repacked only into claims
                    // that meet their minValues; one whose claims lowered
                    // them (BestEffort) stays as upstream placed it.
                    let admission = claim
                        .narrow(template, pod, &[], base, MinValuesPolicy::Strict)
                        .ok()?;
                    claim.add(template, pods[item], pod, Vec::new(), admission);
                }
                if !meets_min_values(template, &claim) {
                    return None;
                }
                if let Some(limits) = limits.as_deref_mut() {
                    charge(limits, template, &claim.options);
                }
                claims.push(claim);
            }
        }
        Some(claims)
    }
}

/// The names of the resources some request asks for, sorted.
fn resource_names<'a>(
    requests: impl Iterator<Item = &'a crate::resources::ResourceList>,
) -> Vec<String> {
    let mut names: Vec<String> = requests
        .flat_map(|r| r.iter().map(|(name, _)| name.to_string()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The template's types a new claim may be offered: all of them, or, when
/// the pool has limits, those that fit what the limits leave (`None` once its
/// nodes are used up or no type fits), as upstream offers a new claim.
fn admitted(template: &Template<'_>, limits: Option<&Limits>) -> Option<TypeSet> {
    let mut options = template.option_set.clone();
    if let Some(limits) = limits {
        if limits.exhausted_nodes() {
            return None;
        }
        for t in template.options.iter().copied() {
            if !limits.admits(&template.types[t].capacity) {
                options.remove(t);
            }
        }
    }
    (!options.is_empty()).then_some(options)
}

/// The `admitted` instance types a claim with `requirements` may launch as
/// (compatible, with an available offering it allows, holding their daemons),
/// cheapest first, as kinds of bins over the resources `dims`: what each gives
/// pods and its cheapest offering's price.
fn kinds(
    template: &Template<'_>,
    admitted: &TypeSet,
    requirements: &Requirements,
    dims: &[String],
) -> Vec<Kind> {
    let compatible = template.cache.compatible(template.types, requirements);
    let view = template.cache.offerings(template.types, requirements);
    let mut kinds = Vec::new();
    for &t in &view.by_price {
        let Some(offering) = view.cheapest[t] else {
            continue;
        };
        if !admitted.contains(t) || !compatible.contains(t) {
            continue;
        }
        let overhead = &template.daemon_groups[template.group_of[t]].overhead;
        let allocatable = &template.allocatable[t];
        if !overhead.fits(allocatable) {
            continue;
        }
        kinds.push(Kind {
            capacity: dims
                .iter()
                .map(|d| allocatable.get(d) - overhead.get(d))
                .collect(),
            price: template.types[t].offerings[offering].price,
        });
    }
    kinds
}

/// What the claim launches at: its first listed type's cheapest allowed
/// offering, as the plan writes it (0 when none is available, as the plan's
/// total counts it).
fn launch_price(template: &Template<'_>, claim: &NewClaim) -> f64 {
    let (view, listed) = listed(template, &claim.requirements, &claim.options);
    listed
        .first()
        .and_then(|&t| view.cheapest[t].map(|o| template.types[t].offerings[o].price))
        .unwrap_or(0.0)
}

/// Whether the claim's listed types meet its minValues, as the plan requires
/// when it is written.
fn meets_min_values(template: &Template<'_>, claim: &NewClaim) -> bool {
    let (_, listed) = listed(template, &claim.requirements, &claim.options);
    unmet_min_values(template.types, &listed, &claim.requirements).is_none()
}

#[cfg(test)]
mod tests {
    use crate::planning::Packing;
    use crate::provisioning::test_support::{instance_type, pod, snapshot_with_limits};
    use crate::provisioning::{plan_provisioning, plan_provisioning_with, validate};
    use crate::snapshot::Snapshot;

    /// Eight pods of 1.5 cpu in a pool limited to `cpu_limit` cores, offered
    /// a 2-cpu type at 0.10 and an 8-cpu one at 0.60.
    fn limited(cpu_limit: u32) -> Snapshot {
        let pods = (0..8)
            .map(|i| pod(&format!("p{i}"), "1500m", "1Gi"))
            .collect();
        let types = vec![
            instance_type("m-2", 2, 8, 0.10),
            instance_type("m-8", 8, 32, 0.60),
        ];
        snapshot_with_limits(
            serde_json::json!({"cpu": cpu_limit.to_string()}),
            types,
            pods,
        )
    }

    #[test]
    fn a_pool_with_limits_is_repacked_within_them() {
        // Upstream fills two 8-cpu claims (1.20). Room for eight claims, each
        // charged its largest type (8 cpu), lets the cost mode launch eight
        // 2-cpu nodes (0.80).
        let roomy = limited(100);
        let upstream = plan_provisioning(&roomy);
        let cost = plan_provisioning_with(&roomy, &Packing::Cost.into());
        assert!((upstream.total_price_per_hour - 1.2).abs() < 1e-9);
        assert!((cost.total_price_per_hour - 0.8).abs() < 1e-9, "{cost:?}");
        assert!(validate(&roomy, &cost).is_empty());
        // With 16 cores, two claims charged pessimistically use the limit up:
        // the repacking does not fit, and the upstream claims stay.
        let tight = limited(16);
        let cost = plan_provisioning_with(&tight, &Packing::Cost.into());
        assert_eq!(cost, plan_provisioning(&tight));
        assert!(validate(&tight, &cost).is_empty());
    }
}
