//! New claims: the NodePool, the instance-type list and its order, completeness
//! and over-commitment. The launch, the launched node and each pod's
//! constraints on it are in [`super::claim_launch`].

use std::collections::BTreeSet;

use crate::api::NodePool;
use crate::pods::PodInfo;

use super::describe::{describe, shortfall};
use super::index::Checker;
use super::pods::{mentions_instance_type, spec_of};
use super::pools::{cheapest_price, pool_requirements, pool_usable};
use super::violation::{Rule, Subject, Violation};
use crate::cloudprovider::InstanceType;
use crate::provisioning::demand::host_ports::{HostPort, host_ports};
use crate::provisioning::plan::{MAX_INSTANCE_TYPES, PlannedClaim, read_requirements};
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, LABEL_INSTANCE_TYPE_STABLE, Requirements,
};

impl Checker<'_> {
    /// Checks one new claim, rule by rule, in the order its violations are
    /// reported: the NodePool and the requirements, the instance-type list,
    /// the types' fit with the requirements, their order, `minValues`, the
    /// types' room for the pods, the list's completeness, then the launch.
    pub(super) fn check_claim(&self, index: usize, claim: &PlannedClaim, out: &mut Vec<Violation>) {
        let Some(check) = ClaimCheck::new(self, index, claim, out) else {
            return;
        };
        let listed = check.check_instance_type_list(out);
        check.check_listed_types_allowed(&listed, out);
        check.check_instance_type_order(&listed, out);
        check.check_min_values(&listed, out);
        let load = check.load(out);
        check.check_listed_types_hold_the_load(&listed, &load, out);
        check.check_list_complete(&listed, &load, out);
        check.check_launch(&listed, &load, out);
    }
}

/// One new claim under check, with what every rule reads: the claim, its
/// NodePool and catalog, and its requirements read back. The rules borrow it
/// rather than each re-reading the claim.
pub(super) struct ClaimCheck<'c, 's> {
    pub(super) checker: &'c Checker<'s>,
    /// The claim's place in the plan, as its violations name it.
    pub(super) index: usize,
    pub(super) claim: &'c PlannedClaim,
    pub(super) pool: &'s NodePool,
    pub(super) catalog: &'s [InstanceType],
    /// The claim's requirements, read back from what the plan wrote.
    pub(super) requirements: Requirements,
    /// Whom the claim's own violations are about.
    subject: Subject,
}

/// The claim's instance-type list as the rules read it.
pub(super) struct Listed<'c, 's> {
    /// The names listed, once each.
    pub(super) names: BTreeSet<&'c str>,
    /// The listed types the catalog has, in list order (repeats left out).
    pub(super) types: Vec<&'s InstanceType>,
    /// Each of `types`' cheapest offering the requirements allow.
    pub(super) prices: Vec<Option<f64>>,
}

/// What the claim must hold: its pods' requests with its CapacityBuffer
/// chunks, the pods (those still pending), and the host ports they bind.
pub(super) struct Load<'c> {
    pub(super) requests: ResourceList,
    pub(super) pods: Vec<&'c PodInfo>,
    pub(super) ports: Vec<HostPort>,
}

impl<'c, 's> ClaimCheck<'c, 's> {
    /// Reads what every rule needs, flagging a NodePool that is missing or may
    /// not launch ([`Rule::NodePool`]) and requirements that cannot be read
    /// back ([`Rule::UnreadableRequirements`]). `None` when the pool is missing
    /// or the requirements unreadable: no other rule can be checked without them.
    fn new(
        checker: &'c Checker<'s>,
        index: usize,
        claim: &'c PlannedClaim,
        out: &mut Vec<Violation>,
    ) -> Option<Self> {
        let subject = Subject::Claim {
            index,
            node_pool: claim.node_pool.clone(),
        };
        let mut flag = |rule: Rule, detail: String| {
            out.push(Violation {
                rule,
                subject: subject.clone(),
                detail,
            })
        };
        let Some(pool) = checker.pool(&claim.node_pool) else {
            flag(Rule::NodePool, "no NodePool has this name".to_string());
            return None;
        };
        if !pool_usable(pool) {
            flag(
                Rule::NodePool,
                "the NodePool is static, being deleted or not ready".to_string(),
            );
        }
        let catalog = checker.catalog(&claim.node_pool);
        let requirements = match read_requirements(&claim.requirements) {
            Ok(r) => r,
            Err(e) => {
                flag(Rule::UnreadableRequirements, e.to_string());
                return None;
            }
        };
        Some(ClaimCheck {
            checker,
            index,
            claim,
            pool,
            catalog,
            requirements,
            subject,
        })
    }

    /// Reports a violation of `rule` by the claim itself.
    pub(super) fn flag(&self, out: &mut Vec<Violation>, rule: Rule, detail: String) {
        out.push(Violation {
            rule,
            subject: self.subject.clone(),
            detail,
        });
    }

    /// [`Rule::InstanceTypeList`] over the list itself: not empty, not too
    /// long, no name twice, every name in the pool's catalog. Returns the list
    /// as the later rules read it.
    fn check_instance_type_list(&self, out: &mut Vec<Violation>) -> Listed<'c, 's> {
        let claim = self.claim;
        if claim.instance_types.is_empty() {
            self.flag(
                out,
                Rule::InstanceTypeList,
                "no instance type is listed".to_string(),
            );
        }
        if claim.instance_types.len() > MAX_INSTANCE_TYPES {
            self.flag(
                out,
                Rule::InstanceTypeList,
                format!(
                    "{} instance types listed, at most {MAX_INSTANCE_TYPES} allowed",
                    claim.instance_types.len()
                ),
            );
        }
        let mut names = BTreeSet::new();
        let mut types: Vec<&InstanceType> = Vec::new();
        for name in &claim.instance_types {
            if !names.insert(name) {
                self.flag(
                    out,
                    Rule::InstanceTypeList,
                    format!("{name} is listed twice"),
                );
                continue;
            }
            match self.checker.instance_type(&claim.node_pool, name) {
                Some(it) => types.push(it),
                None => self.flag(
                    out,
                    Rule::InstanceTypeList,
                    format!("{name} is not in the nodepool's catalog"),
                ),
            }
        }
        let prices = types
            .iter()
            .map(|it| cheapest_price(it, &self.requirements))
            .collect();
        Listed {
            names,
            types,
            prices,
        }
    }

    /// [`Rule::InstanceTypeIncompatible`]: each listed type meets the claim's
    /// requirements and has an available offering they allow.
    fn check_listed_types_allowed(&self, listed: &Listed<'_, '_>, out: &mut Vec<Violation>) {
        // A claim pinned to its reservations lists, as upstream, the types it
        // had before the pin: those the pin leaves without an offering can
        // never launch, and must meet the rest of its requirements only.
        let unpinned = unpinned_requirements(&self.requirements, self.catalog);
        let pinned = unpinned.is_some();
        let type_requirements = unpinned.as_ref().unwrap_or(&self.requirements);
        for (it, price) in listed.types.iter().zip(&listed.prices) {
            if !it.intersects(type_requirements) {
                let conflict = it
                    .requirements
                    .intersects(type_requirements)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                self.flag(
                    out,
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} does not meet the claim's requirements ({conflict})",
                        it.name
                    ),
                );
            }
            if price.is_none() && !pinned {
                self.flag(
                    out,
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} has no available offering the claim's requirements allow",
                        it.name
                    ),
                );
            }
        }
    }

    /// [`Rule::InstanceTypeOrder`]: the types are listed by their cheapest
    /// allowed offering, then by name; the first pair out of order is reported.
    fn check_instance_type_order(&self, listed: &Listed<'_, '_>, out: &mut Vec<Violation>) {
        let order_key = |i: usize| {
            (
                listed.prices[i].unwrap_or(f64::INFINITY),
                listed.types[i].name.as_str(),
            )
        };
        for i in 1..listed.types.len() {
            let (a, b) = (order_key(i - 1), order_key(i));
            if a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)).is_gt() {
                self.flag(
                    out,
                    Rule::InstanceTypeOrder,
                    format!(
                        "{} (cheapest {}) is listed before {} (cheapest {})",
                        a.1, a.0, b.1, b.0
                    ),
                );
                break;
            }
        }
    }

    /// The claim's `minValues` (see [`super::min_values::check`]).
    fn check_min_values(&self, listed: &Listed<'_, '_>, out: &mut Vec<Violation>) {
        super::min_values::check(
            self.pool,
            self.claim,
            &listed.types,
            &self.requirements,
            &mut |rule, detail| self.flag(out, rule, detail),
        );
    }

    /// Sums what the claim must hold, flagging each pod whose requests cannot
    /// be read ([`Rule::UnreadablePod`], about the pod). Pods the plan names
    /// that are not pending are left out (accounting reports them).
    fn load(&self, out: &mut Vec<Violation>) -> Load<'c> {
        let mut requests = ResourceList::new();
        let mut pods: Vec<&PodInfo> = Vec::new();
        let mut ports: Vec<HostPort> = Vec::new();
        for key in &self.claim.pods {
            let Some(pod) = self.checker.pending.get(key.as_str()) else {
                continue;
            };
            match resources::pod_requests(spec_of(pod)) {
                Ok(r) => requests += &r,
                Err(e) => out.push(Violation {
                    rule: Rule::UnreadablePod,
                    subject: Subject::Pod(key.clone()),
                    detail: e.to_string(),
                }),
            }
            ports.extend(host_ports(spec_of(pod)));
            pods.push(pod);
        }
        // The CapacityBuffer chunks it holds take room as pods do.
        for (buffer, &count) in &self.claim.capacity_buffers {
            if let Some(chunk) = self.checker.chunk_requests(buffer) {
                for _ in 0..count {
                    requests += &chunk;
                }
            }
        }
        Load {
            requests,
            pods,
            ports,
        }
    }

    /// Every listed type holds the load with its daemons:
    /// [`Rule::OverCommitted`] for the launch type, else
    /// [`Rule::InstanceTypeTooSmall`].
    fn check_listed_types_hold_the_load(
        &self,
        listed: &Listed<'_, '_>,
        load: &Load<'_>,
        out: &mut Vec<Violation>,
    ) {
        let requests = &load.requests;
        for it in &listed.types {
            let overhead = &self.checker.daemons_on(self.pool, it).1;
            let total = requests + overhead;
            let allocatable = it.allocatable();
            if !total.fits(&allocatable) {
                let is_launch = self
                    .claim
                    .launch
                    .as_ref()
                    .is_some_and(|l| l.instance_type == it.name);
                let rule = if is_launch {
                    Rule::OverCommitted
                } else {
                    Rule::InstanceTypeTooSmall
                };
                self.flag(
                    out,
                    rule,
                    format!(
                        "{} cannot hold the pods ({}) with its daemons ({}): {}",
                        it.name,
                        describe(requests),
                        describe(overhead),
                        shortfall(&total, &allocatable)
                    ),
                );
            }
        }
    }

    /// [`Rule::InstanceTypesIncomplete`]: no catalog type that meets the
    /// requirements, has an allowed offering and holds the load is left out.
    fn check_list_complete(
        &self,
        listed: &Listed<'_, '_>,
        load: &Load<'_>,
        out: &mut Vec<Violation>,
    ) {
        // Checked only when nothing but the requirements and the requests
        // narrows the list. The written requirements replace what was required
        // of the instance type with the list itself, so a claim whose pool or
        // pods constrain the instance type is not checked.
        let claim = self.claim;
        let unlimited = self
            .pool
            .spec
            .limits
            .as_ref()
            .is_none_or(|l| l.as_map().is_empty());
        let type_constrained = pool_requirements(self.pool)
            .contains_key(LABEL_INSTANCE_TYPE_STABLE)
            || load.pods.iter().any(|p| mentions_instance_type(spec_of(p)));
        if !(unlimited
            && !type_constrained
            && load.ports.is_empty()
            && claim.instance_types.len() < MAX_INSTANCE_TYPES
            && !claim.instance_types.is_empty())
        {
            return;
        }
        let requests = &load.requests;
        let mut loose = self.requirements.clone();
        loose.remove(LABEL_INSTANCE_TYPE_STABLE);
        for it in self
            .catalog
            .iter()
            .filter(|it| !listed.names.contains(it.name.as_str()))
        {
            if !it.intersects(&loose) || cheapest_price(it, &loose).is_none() {
                continue;
            }
            let overhead = &self.checker.daemons_on(self.pool, it).1;
            if (requests + overhead).fits(&it.allocatable()) {
                self.flag(
                    out,
                    Rule::InstanceTypesIncomplete,
                    format!(
                        "{} meets the requirements, has an allowed offering and holds the pods ({}) with its daemons ({})",
                        it.name,
                        describe(requests),
                        describe(overhead)
                    ),
                );
            }
        }
    }
}

/// A claim pinned to capacity reservations (capacity type `reserved` alone,
/// and a reservation label of the catalog's required): its requirements
/// without the pin. `None` for a claim not pinned.
fn unpinned_requirements(
    requirements: &Requirements,
    catalog: &[InstanceType],
) -> Option<Requirements> {
    let reserved_only = requirements
        .get_defined(CAPACITY_TYPE_LABEL_KEY)
        .is_some_and(|r| !r.is_complement() && r.values().eq([CAPACITY_TYPE_RESERVED]));
    if !reserved_only {
        return None;
    }
    let labels: BTreeSet<&str> = catalog
        .iter()
        .flat_map(|t| &t.offerings)
        .filter_map(|o| o.reservation.as_ref())
        .map(|r| r.label.as_str())
        .filter(|label| requirements.get_defined(label).is_some())
        .collect();
    if labels.is_empty() {
        return None;
    }
    let mut unpinned = requirements.clone();
    unpinned.remove(CAPACITY_TYPE_LABEL_KEY);
    for label in labels {
        unpinned.remove(label);
    }
    Some(unpinned)
}
