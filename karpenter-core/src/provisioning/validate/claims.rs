//! New claims: the NodePool, the instance-type list and its order, completeness,
//! over-commitment, the launch and the launched node, and each pod's constraints.

use std::collections::BTreeSet;

use crate::pods::PodInfo;

use super::describe::{describe, describe_taint, shortfall};
use super::index::Checker;
use super::pods::{
    first_untolerated, mentions_instance_type, pod_key, spec_of, strict_alternatives,
};
use super::pools::{cheapest_price, launched_labels, pool_requirements, pool_usable};
use super::violation::{Rule, Subject, Violation};
use crate::cloudprovider::InstanceType;
use crate::provisioning::demand::host_ports::{HostPort, host_ports};
use crate::provisioning::plan::{MAX_INSTANCE_TYPES, PlannedClaim, read_requirements};
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, LABEL_INSTANCE_TYPE_STABLE, Requirements,
    WellKnownLabels,
};

/// How far a launch price may be from the catalog's (prices are copied, so this
/// only forgives a round trip through decimal text).
const PRICE_TOLERANCE: f64 = 1e-9;

impl Checker<'_> {
    pub(super) fn check_claim(&self, index: usize, claim: &PlannedClaim, out: &mut Vec<Violation>) {
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
        let Some(pool) = self.pool(&claim.node_pool) else {
            flag(Rule::NodePool, "no NodePool has this name".to_string());
            return;
        };
        if !pool_usable(pool) {
            flag(
                Rule::NodePool,
                "the NodePool is static, being deleted or not ready".to_string(),
            );
        }
        let catalog = self.catalog(&claim.node_pool);
        let requirements = match read_requirements(&claim.requirements) {
            Ok(r) => r,
            Err(e) => {
                flag(Rule::UnreadableRequirements, e.to_string());
                return;
            }
        };

        // The list itself.
        if claim.instance_types.is_empty() {
            flag(
                Rule::InstanceTypeList,
                "no instance type is listed".to_string(),
            );
        }
        if claim.instance_types.len() > MAX_INSTANCE_TYPES {
            flag(
                Rule::InstanceTypeList,
                format!(
                    "{} instance types listed, at most {MAX_INSTANCE_TYPES} allowed",
                    claim.instance_types.len()
                ),
            );
        }
        let mut names = BTreeSet::new();
        let mut listed: Vec<&InstanceType> = Vec::new();
        for name in &claim.instance_types {
            if !names.insert(name) {
                flag(Rule::InstanceTypeList, format!("{name} is listed twice"));
                continue;
            }
            match self.instance_type(&claim.node_pool, name) {
                Some(it) => listed.push(it),
                None => flag(
                    Rule::InstanceTypeList,
                    format!("{name} is not in the nodepool's catalog"),
                ),
            }
        }

        // Prices and order.
        let prices: Vec<Option<f64>> = listed
            .iter()
            .map(|it| cheapest_price(it, &requirements))
            .collect();
        // A claim pinned to its reservations lists, as upstream, the types it
        // had before the pin: those the pin leaves without an offering can
        // never launch, and must meet the rest of its requirements only.
        let unpinned = unpinned_requirements(&requirements, catalog);
        let pinned = unpinned.is_some();
        let type_requirements = unpinned.as_ref().unwrap_or(&requirements);
        for (it, price) in listed.iter().zip(&prices) {
            if !it.intersects(type_requirements) {
                let conflict = it
                    .requirements
                    .intersects(type_requirements)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                flag(
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} does not meet the claim's requirements ({conflict})",
                        it.name
                    ),
                );
            }
            if price.is_none() && !pinned {
                flag(
                    Rule::InstanceTypeIncompatible,
                    format!(
                        "{} has no available offering the claim's requirements allow",
                        it.name
                    ),
                );
            }
        }
        let order_key = |i: usize| (prices[i].unwrap_or(f64::INFINITY), listed[i].name.as_str());
        for i in 1..listed.len() {
            let (a, b) = (order_key(i - 1), order_key(i));
            if a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)).is_gt() {
                flag(
                    Rule::InstanceTypeOrder,
                    format!(
                        "{} (cheapest {}) is listed before {} (cheapest {})",
                        a.1, a.0, b.1, b.0
                    ),
                );
                break;
            }
        }

        super::min_values::check(pool, claim, &listed, &requirements, &mut flag);

        // The pods.
        let mut requests = ResourceList::new();
        let mut pods: Vec<&PodInfo> = Vec::new();
        let mut pod_ports: Vec<HostPort> = Vec::new();
        for key in &claim.pods {
            let Some(pod) = self.pending.get(key.as_str()) else {
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
            pod_ports.extend(host_ports(spec_of(pod)));
            pods.push(pod);
        }
        // The CapacityBuffer chunks it holds take room as pods do.
        for (buffer, &count) in &claim.capacity_buffers {
            if let Some(chunk) = self.chunk_requests(buffer) {
                for _ in 0..count {
                    requests += &chunk;
                }
            }
        }
        let mut flag = |rule: Rule, detail: String| {
            out.push(Violation {
                rule,
                subject: subject.clone(),
                detail,
            })
        };

        // Every listed type holds the pods with its daemons.
        for it in &listed {
            let overhead = &self.daemons_on(pool, it).1;
            let total = &requests + overhead;
            let allocatable = it.allocatable();
            if !total.fits(&allocatable) {
                let is_launch = claim
                    .launch
                    .as_ref()
                    .is_some_and(|l| l.instance_type == it.name);
                let rule = if is_launch {
                    Rule::OverCommitted
                } else {
                    Rule::InstanceTypeTooSmall
                };
                flag(
                    rule,
                    format!(
                        "{} cannot hold the pods ({}) with its daemons ({}): {}",
                        it.name,
                        describe(&requests),
                        describe(overhead),
                        shortfall(&total, &allocatable)
                    ),
                );
            }
        }

        // Completeness, when nothing but the requirements and the requests narrows
        // the list. The written requirements replace what was required of the
        // instance type with the list itself, so a claim whose pool or pods constrain
        // the instance type is not checked.
        let unlimited = pool
            .spec
            .limits
            .as_ref()
            .is_none_or(|l| l.as_map().is_empty());
        let type_constrained = pool_requirements(pool).contains_key(LABEL_INSTANCE_TYPE_STABLE)
            || pods.iter().any(|p| mentions_instance_type(spec_of(p)));
        if unlimited
            && !type_constrained
            && pod_ports.is_empty()
            && claim.instance_types.len() < MAX_INSTANCE_TYPES
            && !claim.instance_types.is_empty()
        {
            let mut loose = requirements.clone();
            loose.remove(LABEL_INSTANCE_TYPE_STABLE);
            for it in catalog
                .iter()
                .filter(|it| !names.contains(it.name.as_str()))
            {
                if !it.intersects(&loose) || cheapest_price(it, &loose).is_none() {
                    continue;
                }
                let overhead = &self.daemons_on(pool, it).1;
                if (&requests + overhead).fits(&it.allocatable()) {
                    flag(
                        Rule::InstanceTypesIncomplete,
                        format!(
                            "{} meets the requirements, has an allowed offering and holds the pods ({}) with its daemons ({})",
                            it.name,
                            describe(&requests),
                            describe(overhead)
                        ),
                    );
                }
            }
        }

        // The launch.
        let Some(launch) = &claim.launch else {
            flag(Rule::NoLaunch, "the claim has no launch".to_string());
            return;
        };
        let cheapest = listed
            .iter()
            .flat_map(|it| {
                it.offerings
                    .iter()
                    .filter(|o| o.available && o.is_compatible(&requirements))
                    .map(move |o| (it, o))
            })
            .min_by(|a, b| a.1.price.total_cmp(&b.1.price));
        if let Some((it, o)) = cheapest
            && o.price < launch.price - PRICE_TOLERANCE
        {
            flag(
                Rule::LaunchNotCheapest,
                format!(
                    "launches {} {} {} at {} but {} {} {} costs {}",
                    launch.instance_type,
                    launch.zone,
                    launch.capacity_type,
                    launch.price,
                    it.name,
                    o.zone,
                    o.capacity_type,
                    o.price
                ),
            );
        }
        if !names.contains(launch.instance_type.as_str()) {
            flag(
                Rule::InstanceTypeList,
                format!("the launch type {} is not listed", launch.instance_type),
            );
        }
        let Some(it) = self.instance_type(&claim.node_pool, &launch.instance_type) else {
            flag(
                Rule::LaunchOffering,
                format!("{} is not in the nodepool's catalog", launch.instance_type),
            );
            return;
        };
        let offering = it.offerings.iter().find(|o| launch.is_of(o));
        match offering {
            None => flag(
                Rule::LaunchOffering,
                format!(
                    "{} has no offering in {} as {}{}",
                    it.name,
                    launch.zone,
                    launch.capacity_type,
                    launch
                        .reservation_id
                        .as_ref()
                        .map(|id| format!(" in reservation {id}"))
                        .unwrap_or_default()
                ),
            ),
            Some(o) => {
                if !o.available {
                    flag(
                        Rule::LaunchOffering,
                        format!(
                            "{} {} {} is not available",
                            it.name, o.zone, o.capacity_type
                        ),
                    );
                }
                if !o.is_compatible(&requirements) {
                    flag(
                        Rule::LaunchOffering,
                        format!(
                            "{} {} {} is not allowed by the claim's requirements",
                            it.name, o.zone, o.capacity_type
                        ),
                    );
                }
                if (o.price - launch.price).abs() > PRICE_TOLERANCE {
                    flag(
                        Rule::LaunchPrice,
                        format!(
                            "{} {} {} launches at {} but the catalog says {}",
                            it.name, o.zone, o.capacity_type, launch.price, o.price
                        ),
                    );
                }
            }
        }

        // The launched node.
        let labels = launched_labels(pool, it, launch, &requirements);
        let node = Requirements::from_labels(&labels);
        if let Err(e) = node.compatible(&requirements, &WellKnownLabels::empty()) {
            flag(
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the claim's requirements: {e}",
                    it.name
                ),
            );
        }
        if let Err(e) = node.compatible(&pool_requirements(pool), &WellKnownLabels::empty()) {
            flag(
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the nodepool's requirements: {e}",
                    it.name
                ),
            );
        }
        let running = self.daemons_on(pool, it);
        for daemon in running.0.iter().map(|&d| &self.daemons[d]) {
            for port in &daemon.host_ports {
                if let Some(p) = pod_ports.iter().find(|p| p.conflicts(port)) {
                    flag(
                        Rule::HostPort,
                        format!(
                            "a pod binds host port {p}, which daemon {} binds on {}",
                            daemon.name, it.name
                        ),
                    );
                }
            }
        }

        // Each pod's constraints.
        let taints = pool.spec.template.spec.taints();
        for pod in pods {
            let key = pod_key(pod);
            let spec = spec_of(pod);
            let tolerations = spec.tolerations.as_deref().unwrap_or_default();
            if let Some(taint) = first_untolerated(taints, tolerations) {
                out.push(Violation {
                    rule: Rule::Taint,
                    subject: Subject::Pod(key.clone()),
                    detail: format!(
                        "on claim #{index}: does not tolerate the nodepool's taint {}",
                        describe_taint(taint)
                    ),
                });
            }
            let alternatives = match strict_alternatives(spec) {
                Ok(a) => a,
                Err(e) => {
                    out.push(Violation {
                        rule: Rule::UnreadablePod,
                        subject: Subject::Pod(key),
                        detail: e.to_string(),
                    });
                    continue;
                }
            };
            let met = alternatives.iter().any(|r| {
                requirements.is_compatible(r, self.well_known)
                    && node.is_compatible(r, &WellKnownLabels::empty())
            });
            if !met {
                let why = alternatives
                    .first()
                    .and_then(|r| {
                        requirements
                            .compatible(r, self.well_known)
                            .and_then(|()| node.compatible(r, &WellKnownLabels::empty()))
                            .err()
                    })
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                out.push(Violation {
                    rule: Rule::NodeRequirements,
                    subject: Subject::Pod(key),
                    detail: format!("on claim #{index} ({} in {} as {}): no node selector alternative is met ({why})", it.name, launch.zone, launch.capacity_type),
                });
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
