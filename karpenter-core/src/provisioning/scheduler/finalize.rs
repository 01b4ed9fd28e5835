//! From a solved simulation to the plan: each claim's instance types ordered by
//! price and cut to 600, its requirements as a NodeClaim carries them, and the
//! offering the provider would launch.

use rayon::prelude::*;

use super::buffer_tally::BufferTally;
use super::claim::{NewClaim, relaxed};
use super::reasons::{PoolReason, PoolRefusal};
use super::solve::Scheduler;
use crate::cloudprovider::{LaunchRank, OfferingFilter};
use crate::planning::MinValuesPolicy;
use crate::provisioning::instance_types::filter::unmet_min_values;
use crate::provisioning::instance_types::templates::Template;
use crate::provisioning::instance_types::type_cache::{OfferingView, TypeSet};
use crate::provisioning::names::NameList;
use crate::provisioning::plan::{
    ExistingPlacement, Launch, MAX_INSTANCE_TYPES, PlannedClaim, ProvisioningPlan,
    RequirementOutput, Unschedulable, round_price,
};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE_STABLE,
    NODE_INITIALIZED_LABEL_KEY, NODE_REGISTERED_LABEL_KEY, Requirement, Requirements,
};

/// The fewest claims one thread writes: a claim takes some microseconds, and
/// a small plan is written sooner on one thread.
const FINALIZE_CHUNK: usize = 32;

impl Scheduler<'_> {
    /// The plan.
    pub(crate) fn into_plan(self) -> ProvisioningPlan {
        let mut plan = ProvisioningPlan::default();
        let mut unschedulable: Vec<Unschedulable> = Vec::new();
        // Where each buffer's virtual pods went, for the summary.
        let mut tally = BufferTally::new(self.buffers.states().len());
        let finished = self.write_claims();
        self.gather_claims(finished, &mut plan, &mut unschedulable, &mut tally);
        plan.existing_nodes = self.existing_placements(&mut tally);
        for (pod, error) in self.pods.iter().zip(&self.errors) {
            if let Some(reason) = error {
                match pod.buffer {
                    None => unschedulable.push(Unschedulable {
                        pod: pod.key.clone(),
                        reason: reason.to_string(),
                    }),
                    Some(b) => tally.of(b).unschedulable += 1,
                }
            }
        }
        for rejected in self.rejected {
            match rejected.buffer {
                None => unschedulable.push(Unschedulable {
                    reason: rejected.why.to_string(),
                    pod: rejected.key,
                }),
                Some(b) => tally.of(b).unschedulable += 1,
            }
        }
        if self.buffer_summary {
            plan.capacity_buffers = tally.placements(self.buffers.states());
        }
        unschedulable.sort_by(|a, b| a.pod.cmp(&b.pod));
        plan.unschedulable = unschedulable;
        // Prices are decimal numbers a person reads: keep float noise out of the sum.
        plan.total_price_per_hour = round_price(plan.total_price_per_hour);
        plan
    }

    /// Each claim written as the plan lists it, or why its pool cannot launch
    /// it, in the claims' order. Each claim is written on its own (on every
    /// core); [`Self::gather_claims`] then puts the plan together.
    fn write_claims(&self) -> Vec<Result<PlannedClaim, PoolRefusal>> {
        self.claims
            .par_iter()
            .with_min_len(FINALIZE_CHUNK)
            .map(|claim| {
                let template = &self.templates[claim.template];
                let pins = if claim.reserved.is_empty() {
                    self.reservations
                        .exclusions(template, &claim.options, &claim.requirements)
                } else {
                    self.reservations.pins(&claim.reserved)
                };
                finalize(
                    template,
                    claim,
                    &pins,
                    self.launch_rank,
                    self.min_values_policy,
                )
                .map(|mut planned| {
                    for &p in &claim.pods {
                        let pod = &self.pods[p];
                        match pod.buffer {
                            None => planned.pods.push(pod.key.clone()),
                            Some(b) => {
                                let key = self.buffer_key(b).to_owned();
                                *planned.capacity_buffers.entry(key).or_default() += 1;
                            }
                        }
                    }
                    planned
                })
            })
            .collect()
    }

    /// Adds the written claims to the plan (and their launch prices to its
    /// total); the pods of a claim its pool refused become unschedulable with
    /// the pool's reason. Buffer chunks are tallied where they went.
    fn gather_claims(
        &self,
        finished: Vec<Result<PlannedClaim, PoolRefusal>>,
        plan: &mut ProvisioningPlan,
        unschedulable: &mut Vec<Unschedulable>,
        tally: &mut BufferTally,
    ) {
        for (claim, finished) in self.claims.iter().zip(finished) {
            let template = &self.templates[claim.template];
            match finished {
                Ok(planned) => {
                    claim
                        .pods
                        .iter()
                        .filter_map(|&p| self.pods[p].buffer)
                        .for_each(|b| {
                            tally.of(b).new_claims += 1;
                        });
                    plan.total_price_per_hour += planned.launch.as_ref().map_or(0.0, |l| l.price);
                    plan.node_claims.push(planned);
                }
                Err(why) => {
                    let reason = PoolReason {
                        pool: template.pool.clone(),
                        why,
                    }
                    .to_string();
                    for &p in &claim.pods {
                        let pod = &self.pods[p];
                        match pod.buffer {
                            None => unschedulable.push(Unschedulable {
                                pod: pod.key.clone(),
                                reason: reason.clone(),
                            }),
                            Some(b) => tally.of(b).unschedulable += 1,
                        }
                    }
                }
            }
        }
    }

    /// The existing nodes that take pods, each with the pods it takes; buffer
    /// chunks placed there are tallied, not listed.
    fn existing_placements(&self, tally: &mut BufferTally) -> Vec<ExistingPlacement> {
        let mut existing_nodes = Vec::new();
        for node in self.existing.iter().filter(|n| !n.pods.is_empty()) {
            let mut pods = Vec::new();
            for &p in &node.pods {
                let pod = &self.pods[p];
                match pod.buffer {
                    None => pods.push(pod.key.clone()),
                    Some(b) => *tally.of(b).existing.entry(node.name.clone()).or_default() += 1,
                }
            }
            // A node holding only virtual pods is not a placement of pods.
            if !pods.is_empty() {
                existing_nodes.push(ExistingPlacement {
                    name: node.name.clone(),
                    pods,
                });
            }
        }
        existing_nodes
    }
}

/// What the provider launches for a claim listing `chosen` (by cheapest price):
/// among the offerings at the lowest price the claim's requirements allow,
/// the one the provider's `rank` puts first, so that the plan names what its
/// `create` would pick (on Azure, spot before on-demand and a zone before
/// regional `0` at equal prices).
fn launch_of(
    template: &Template<'_>,
    view: &OfferingView,
    chosen: &[usize],
    requirements: &Requirements,
    rank: LaunchRank,
) -> Option<Launch> {
    let lowest_of = |t: usize| view.cheapest[t].map(|i| template.types[t].offerings[i].price);
    let lowest = lowest_of(*chosen.first()?)?;
    let filter = OfferingFilter::new(requirements);
    chosen
        .iter()
        .take_while(|&&t| lowest_of(t).is_some_and(|p| p <= lowest))
        .flat_map(|&t| {
            let instance_type = &template.types[t];
            instance_type
                .offerings
                .iter()
                .filter(|o| o.price <= lowest && filter.admits_available(o))
                .map(move |o| (instance_type, o))
        })
        .min_by(|a, b| rank.compare(*a, *b))
        .map(|(instance_type, o)| Launch {
            instance_type: instance_type.name.clone(),
            zone: o.zone.clone(),
            capacity_type: o.capacity_type.clone(),
            price: o.price,
            reservation_id: o.reservation_id().map(str::to_owned),
        })
}

/// What a claim with `requirements` and instance types `options` lists: the
/// offerings its zone and capacity-type requirements allow, and its types in
/// the order every such claim lists them (by cheapest allowed offering, then
/// name), cut to [`MAX_INSTANCE_TYPES`]. The first is the type it launches as.
pub(crate) fn listed<'t>(
    template: &'t Template<'_>,
    requirements: &Requirements,
    options: &TypeSet,
) -> (&'t OfferingView, Vec<usize>) {
    let view = template.cache.offerings(template.types, requirements);
    let chosen = view
        .by_price
        .iter()
        .copied()
        .filter(|&t| options.contains(t))
        .take(MAX_INSTANCE_TYPES)
        .collect();
    (view, chosen)
}

/// A claim of `template` alone, as a static NodePool launches one: no pods,
/// no daemon overhead, and the template's requirements as its NodeClaim
/// carries them (upstream writes a static claim with no instance-type or
/// capacity-type requirement of its own, and the cloud launches what they
/// allow); its instance types and launch listed as any claim's. `None` when
/// the pool has nothing to launch.
pub(crate) fn template_claim(template: &Template<'_>, rank: LaunchRank) -> Option<PlannedClaim> {
    let claim = NewClaim::new(0, template, template.option_set.clone(), 0);
    let mut planned = finalize(template, &claim, &[], rank, MinValuesPolicy::Strict).ok()?;
    planned.launch.as_ref()?;
    let mut requirements = template.requirements.clone();
    for key in [NODE_REGISTERED_LABEL_KEY, NODE_INITIALIZED_LABEL_KEY] {
        requirements.remove(key);
    }
    planned.requirements = requirements
        .to_selector_requirements()
        .into_iter()
        .map(Into::into)
        .collect();
    Some(planned)
}

/// One claim's final form, or why its pods cannot have it (minValues no longer met
/// once the list is cut). A claim holding reservations is pinned to them by
/// `pins` (see [`Reservations::pins`](super::reservations::Reservations::pins)):
/// its capacity type replaced by `reserved`, and its reservation ids
/// required, so that its launch takes one of them; one holding none may be
/// kept out of them by `pins` saying so
/// ([`Reservations::exclusions`](super::reservations::Reservations::exclusions)).
fn finalize(
    template: &Template<'_>,
    claim: &NewClaim,
    pins: &[Requirement],
    rank: LaunchRank,
    policy: MinValuesPolicy,
) -> Result<PlannedClaim, PoolRefusal> {
    let mut requirements = claim.requirements.clone();
    for key in [
        LABEL_HOSTNAME,
        NODE_REGISTERED_LABEL_KEY,
        NODE_INITIALIZED_LABEL_KEY,
    ] {
        requirements.remove(key);
    }
    if pins.iter().any(|p| p.key() == CAPACITY_TYPE_LABEL_KEY) {
        requirements.remove(CAPACITY_TYPE_LABEL_KEY);
    }
    for pin in pins {
        requirements.add(pin.clone());
    }
    // The types in the order every claim with these zone and capacity-type
    // requirements lists them (by cheapest allowed offering, then name), kept
    // to the claim's own. Rewriting the instance-type and capacity-type
    // requirements below changes neither: offerings are matched on zone and
    // capacity type, and the capacity types written are exactly the ones
    // allowed here.
    let (view, chosen) = listed(template, &requirements, &claim.options);
    if let Some(key) = unmet_min_values(template.types, &chosen, &requirements) {
        // Upstream's `Truncate` checks minValues only under the Strict
        // policy; BestEffort lowers them to what the list keeps.
        if !policy.relaxes() {
            return Err(PoolRefusal::MinValuesUnmet {
                key: key.to_owned(),
            });
        }
        requirements = relaxed(&requirements, template, &chosen);
    }
    // Upstream marks a claim whose minValues were lowered.
    let min_values_relaxed = template.requirements.iter().any(|original| {
        let now = requirements
            .get_defined(original.key())
            .and_then(Requirement::min_values);
        matches!((original.min_values(), now), (Some(was), Some(is)) if is < was)
    });
    let capacity_types = if template.cache.masks_cover() {
        let mask = chosen
            .iter()
            .fold(0, |mask, &t| mask | view.capacity_types[t]);
        template.cache.capacity_type_names(mask).collect()
    } else {
        let offerings = OfferingFilter::new(&requirements);
        let mut names: Vec<&str> = chosen
            .iter()
            .flat_map(|&t| template.types[t].offerings.iter())
            .filter(|o| offerings.admits_available(o))
            .map(|o| o.capacity_type.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    let launch = launch_of(template, view, &chosen, &requirements, rank);
    let table = &template.cache.names;
    let pick = |t: usize| u32::try_from(t).unwrap_or(u32::MAX);
    let names = NameList::picked(table, chosen.iter().map(|&t| pick(t)).collect());
    let min_values = requirements
        .get_defined(LABEL_INSTANCE_TYPE_STABLE)
        .and_then(Requirement::min_values);
    requirements.remove(LABEL_INSTANCE_TYPE_STABLE);
    requirements.remove(CAPACITY_TYPE_LABEL_KEY);
    // The two rewritten requirements are written directly: building them as
    // requirements would sort and copy up to 600 names only to copy them again.
    let listed = TypeSet::of(template.types.len(), &chosen);
    let by_name = template
        .cache
        .by_name
        .iter()
        .filter(|&&t| listed.contains(t));
    let type_values = NameList::picked(table, by_name.map(|&t| pick(t)).collect());
    let mut written: Vec<RequirementOutput> = requirements
        .to_selector_requirements()
        .into_iter()
        .map(Into::into)
        .collect();
    for (key, values, min_values) in [
        (LABEL_INSTANCE_TYPE_STABLE, type_values, min_values),
        (
            CAPACITY_TYPE_LABEL_KEY,
            capacity_types.into_iter().collect(),
            None,
        ),
    ] {
        let at = written.partition_point(|r| r.key.as_str() < key);
        let operator = if values.is_empty() {
            "DoesNotExist"
        } else {
            "In"
        };
        written.insert(
            at,
            RequirementOutput {
                key: key.to_string(),
                operator: operator.to_string(),
                values,
                min_values,
            },
        );
    }
    Ok(PlannedClaim {
        node_pool: template.pool.clone(),
        instance_types: names,
        requirements: written,
        launch,
        pods: Vec::new(),
        min_values_relaxed,
        capacity_buffers: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use crate::cloudprovider::{InstanceType, LaunchRank, Offering};
    use crate::provisioning::plan_provisioning;
    use crate::provisioning::test_support::{instance_type, pod, snapshot};

    /// Zonal before regional (zone `0`), then spot before on-demand.
    fn zonal_spot_first(a: (&InstanceType, &Offering), b: (&InstanceType, &Offering)) -> Ordering {
        let key = |o: &Offering| (o.zone == "0", o.capacity_type != "spot");
        a.1.price
            .total_cmp(&b.1.price)
            .then_with(|| key(a.1).cmp(&key(b.1)))
            .then_with(|| a.0.name.cmp(&b.0.name))
    }

    #[test]
    fn the_launch_is_the_offering_the_providers_rank_puts_first_at_the_lowest_price() {
        let mut tied = instance_type("m-4", 4, 16, 1.0);
        tied.offerings = vec![
            Offering::new("0", "on-demand", 1.0),
            Offering::new("zone-1", "on-demand", 1.0),
            Offering::new("zone-1", "spot", 1.0),
            Offering::new("zone-2", "spot", 2.0),
        ];
        let mut cluster = snapshot(vec![tied], vec![pod("web", "1", "1Gi")]);
        let launch = |cluster: &crate::snapshot::Snapshot| {
            let launch = plan_provisioning(cluster).node_claims[0]
                .launch
                .clone()
                .expect("a launch");
            (launch.zone, launch.capacity_type, launch.price)
        };
        // The default rank: by zone name, then capacity type.
        assert_eq!(launch(&cluster), ("0".into(), "on-demand".into(), 1.0));
        cluster.launch_rank = LaunchRank::new("zonal-spot-first", zonal_spot_first);
        assert_eq!(launch(&cluster), ("zone-1".into(), "spot".into(), 1.0));
    }
}
