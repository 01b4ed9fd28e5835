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
//! group selects it. Pools with limits keep their upstream claims: the limit
//! is charged claim by claim as upstream does, which a repacking would have
//! to replay.

use std::collections::HashMap;

use super::pack::{Kind, pack};
use crate::provisioning::claim::NewClaim;
use crate::provisioning::filter::unmet_min_values;
use crate::provisioning::finalize::listed;
use crate::provisioning::host_ports::host_ports;
use crate::provisioning::scheduler::{Scheduler, view};
use crate::provisioning::templates::Template;
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
    /// documentation).
    pub(crate) fn repack_for_cost(&mut self) {
        let components = self.loose_components();
        if components.is_empty() {
            return;
        }
        let mut next_id = self.claims.len() + 1;
        let mut replaced = vec![false; self.claims.len()];
        let mut added = Vec::new();
        for component in components {
            let before: f64 = component
                .claims
                .iter()
                .map(|&c| launch_price(&self.templates[self.claims[c].template], &self.claims[c]))
                .sum();
            let Some(claims) = self.repacked(&component, &mut next_id) else {
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

    /// The loose claims (every pod loose, the pool without limits), in
    /// connected components by their pods' (pool, requirements) groups,
    /// in the order of their first claims.
    fn loose_components(&self) -> Vec<Component> {
        let loose: Vec<usize> = (0..self.claims.len())
            .filter(|&c| {
                let claim = &self.claims[c];
                self.limits[claim.template].is_none()
                    && claim.pods.iter().all(|&p| self.is_loose(p))
            })
            .collect();
        // Group ids by first appearance; each group's first claim.
        let mut group_ids: HashMap<(usize, &Requirements), usize> = HashMap::new();
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut first_claim: Vec<usize> = Vec::new();
        let mut parent: Vec<usize> = (0..self.claims.len()).collect();
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
                union(&mut parent, first_claim[g], c);
            }
        }
        let mut components: Vec<Component> = Vec::new();
        let mut index_of: HashMap<usize, usize> = HashMap::new();
        for &c in &loose {
            let root = find(&mut parent, c);
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
            let root = find(&mut parent, first_claim[g]);
            components[index_of[&root]].groups.push(group);
        }
        components
    }

    /// The component's pods packed at least price, as claims built by the
    /// ordinary admission; `None` when some group cannot be packed or a
    /// claim would not be valid.
    fn repacked(&self, component: &Component, next_id: &mut usize) -> Option<Vec<NewClaim>> {
        let mut claims = Vec::new();
        for (t, pods) in &component.groups {
            let template = &self.templates[*t];
            let first = *pods.first()?;
            let seed = NewClaim::new(*t, template, template.option_set.clone(), 0);
            let requirements = seed
                .base_requirements(template, &self.pods[first], self.well_known)
                .ok()?;
            let dims = resource_names(pods.iter().map(|&p| &self.pods[p].requests));
            let kinds = kinds(template, &requirements, &dims);
            let items: Vec<Vec<i64>> = pods
                .iter()
                .map(|&p| dims.iter().map(|d| self.pods[p].requests.get(d)).collect())
                .collect();
            for bin in pack(&items, &kinds)? {
                let mut claim = NewClaim::new(*t, template, template.option_set.clone(), *next_id);
                *next_id += 1;
                for &item in &bin.items {
                    let pod = &self.pods[pods[item]];
                    let base = claim
                        .base_requirements(template, pod, self.well_known)
                        .ok()?;
                    let admission = claim.narrow(template, pod, &[], base).ok()?;
                    claim.add(template, pods[item], pod, Vec::new(), admission);
                }
                if !meets_min_values(template, &claim) {
                    return None;
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

/// The template's instance types a claim with `requirements` may launch as
/// (compatible, with an available offering it allows, holding their daemons),
/// cheapest first, as kinds of bins over the resources `dims`: what each gives
/// pods and its cheapest offering's price.
fn kinds(template: &Template<'_>, requirements: &Requirements, dims: &[String]) -> Vec<Kind> {
    let compatible = template.cache.compatible(template.types, requirements);
    let view = template.cache.offerings(template.types, requirements);
    let mut kinds = Vec::new();
    for &t in &view.by_price {
        let Some(offering) = view.cheapest[t] else {
            continue;
        };
        if !template.option_set.contains(t) || !compatible.contains(t) {
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

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The lower index is the root: components come in claim order.
    let (low, high) = (ra.min(rb), ra.max(rb));
    parent[high] = low;
}
