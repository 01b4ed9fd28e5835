//! Narrowing a new claim's instance types for one more pod, over its
//! NodePool's [`Template`]: by the full filter ([`for_claim`]), which says why
//! when no type is left, or by growth ([`grown`]), which only looks at the
//! types that stop holding the claim's requests.

use super::filter::{Capacity, FilterError, filter_with, unmet_min_values};
use super::templates::Template;
use super::type_cache::TypeSet;
use crate::provisioning::demand::host_ports::{HostPort, conflict};
use crate::resources::ResourceList;
use crate::scheduling::Requirements;

/// Filters a claim's candidate types for one more pod: `total` is the claim's
/// requests with the pod's, `claim_ports` the host ports of the pods already on it;
/// `unchanged` says the requirements are the ones the candidates were filtered with.
#[allow(clippy::too_many_arguments)]
pub(crate) fn for_claim(
    template: &Template<'_>,
    candidates: &[usize],
    requirements: &Requirements,
    unchanged: bool,
    pod_requests: &ResourceList,
    total: &ResourceList,
    pod_ports: &[HostPort],
    claim_ports: &[HostPort],
) -> Result<Vec<usize>, FilterError> {
    // Most pods bind no host port: then nothing is checked here. The claim's own
    // ports are the same for every group, so they are checked once.
    let claim_free = pod_ports.is_empty() || conflict(claim_ports, pod_ports).is_none();
    let overheads = template
        .daemon_groups
        .iter()
        .map(|g| {
            let free = pod_ports.is_empty()
                || (claim_free && conflict(&g.host_ports, pod_ports).is_none());
            free.then_some(&g.overhead)
        })
        .collect();
    let capacity = Capacity {
        allocatable: &template.allocatable,
        fixed: &template.fixed_allocatable,
        group_of: &template.group_of,
        overheads,
    };
    filter_with(
        template.types,
        &template.cache,
        &capacity,
        candidates,
        requirements,
        unchanged,
        pod_requests,
        total,
    )
}

/// A claim's types once its requests grow from `before` (which every one of
/// `candidates` holds, with its daemons; `None` for a claim without pods,
/// whose candidates are known to hold nothing) to `total` under
/// `requirements` (`unchanged`: the ones the candidates were chosen under):
/// the candidates that meet the requirements, have an allowed offering and
/// hold `total`.
///
/// `None` when the answer is not that simple: requests with resources beyond
/// the four fixed ones, or no type left or `minValues` unmet (the caller's
/// full filter then says why).
pub(crate) fn grown(
    template: &Template<'_>,
    candidates: &TypeSet,
    requirements: &Requirements,
    unchanged: bool,
    before: Option<&ResourceList>,
    total: &ResourceList,
) -> Option<TypeSet> {
    if before.is_some_and(ResourceList::has_extended) || total.has_extended() {
        return None;
    }
    let len = template.types.len();
    let mut dropped = TypeSet::empty(len);
    let index = &template.fit_index;
    let before = before.map(ResourceList::fixed_amounts);
    index.dropped(before.as_ref(), &total.fixed_amounts(), &mut dropped);
    for &t in &index.irregular {
        let overhead = template
            .group_of
            .get(t)
            .and_then(|&g| template.daemon_groups.get(g));
        let holds = overhead.is_some_and(|g| (total + &g.overhead).fits(&template.allocatable[t]));
        if !holds {
            dropped.insert(t);
        }
    }
    let eligible = (!unchanged).then(|| {
        let types = template.types;
        let mut eligible = template.cache.compatible(types, requirements);
        eligible.intersect_with(&template.cache.offerings(types, requirements).available);
        eligible
    });
    if let Some(eligible) = &eligible {
        dropped.add_complement_of(eligible);
    }
    let mut kept = candidates.clone();
    kept.remove_all(&dropped);
    if kept.is_empty() {
        return None;
    }
    // minValues counts values over the types: only a requirement with one
    // needs them listed.
    if requirements.iter().any(|r| r.min_values().is_some()) {
        let listed: Vec<usize> = kept.iter().collect();
        if unmet_min_values(template.types, &listed, requirements).is_some() {
            return None;
        }
    }
    Some(kept)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::PodSpec;
    use proptest::prelude::*;

    use super::*;
    use crate::api::NodePool;
    use crate::cloudprovider::{InstanceType, Offering};
    use crate::planning::MinValuesPolicy;
    use crate::provisioning::demand::daemons::DaemonPod;
    use crate::scheduling::{LABEL_ARCH_STABLE, Requirement, WellKnownLabels};

    /// A type: cpu, memory, pods, its GPUs if any (a negative amount, an
    /// over-committed remainder, holds nothing), whether it is arm64.
    type TypeShape = (i64, i64, i64, Option<i64>, bool);

    fn instance_type(i: usize, (cpu, memory, pods, gpu, arm): TypeShape) -> InstanceType {
        let mut capacity = ResourceList::new();
        capacity.set("cpu", cpu);
        capacity.set("memory", memory);
        capacity.set("pods", pods);
        if let Some(gpu) = gpu {
            capacity.set("nvidia.com/gpu", gpu);
        }
        let arch = if arm { "arm64" } else { "amd64" };
        InstanceType::new(
            format!("type-{i}"),
            [(LABEL_ARCH_STABLE, arch)],
            vec![Offering::new("zone-a", "on-demand", 1.0 + i as f64)],
            capacity,
            ResourceList::new(),
        )
    }

    /// A daemon requesting `cpu` that runs only on `arch` (when given).
    fn daemon(cpu: i64, arch: Option<&str>) -> DaemonPod {
        let mut requests = ResourceList::new();
        requests.set("cpu", cpu);
        let node_selector = arch.map(|a| BTreeMap::from([(LABEL_ARCH_STABLE.into(), a.into())]));
        DaemonPod {
            spec: PodSpec {
                node_selector,
                ..PodSpec::default()
            },
            requests,
            host_ports: Vec::new(),
        }
    }

    fn requests(cpu: i64, memory: i64) -> ResourceList {
        let mut list = ResourceList::new();
        list.set("cpu", cpu);
        list.set("memory", memory);
        list.set("pods", 1000);
        list
    }

    proptest! {
        /// Narrowing by growth keeps exactly the types the full filter keeps,
        /// pod after pod, across daemon groups, types with extended resources,
        /// and a requirement that arrives midway.
        #[test]
        fn growth_agrees_with_the_full_filter(
            shapes in prop::collection::vec(
                (
                    0..16_000i64,
                    0..32_000i64,
                    0..8_000i64,
                    prop::option::of(-1_000..2_000i64),
                    any::<bool>(),
                ),
                1..40,
            ),
            daemons in prop::collection::vec((0..2_000i64, prop::option::of(any::<bool>())), 0..3),
            pods in prop::collection::vec((0..3_000i64, 0..6_000i64), 1..12),
            narrow_at in 0..12usize,
        ) {
            let types: Vec<InstanceType> =
                shapes.into_iter().enumerate().map(|(i, s)| instance_type(i, s)).collect();
            let daemons: Vec<DaemonPod> = daemons
                .into_iter()
                .map(|(cpu, arm)| daemon(cpu, arm.map(|a| if a { "arm64" } else { "amd64" })))
                .collect();
            let pool: NodePool = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "default"},
                "spec": {"template": {"spec": {"requirements": []}}},
            }))
            .expect("a NodePool");
            let well_known = WellKnownLabels::core();
            let Ok(template) = Template::new(&pool, &types, &daemons, well_known, MinValuesPolicy::Strict) else {
                return Ok(());
            };
            let mut requirements = template.requirements.clone();
            let mut options = template.option_set.clone();
            let mut total = ResourceList::new();
            let mut fitted = false;
            for (step, &(cpu, memory)) in pods.iter().enumerate() {
                let pod = requests(cpu, memory);
                let grown_total = &total + &pod;
                let mut next = requirements.clone();
                if step == narrow_at {
                    next.add(Requirement::in_values(LABEL_ARCH_STABLE, ["arm64"]));
                }
                let unchanged = fitted && next == requirements;
                let candidates: Vec<usize> = options.iter().collect();
                let full = for_claim(
                    &template, &candidates, &next, unchanged, &pod, &grown_total, &[], &[],
                );
                // The full filter keeps exactly the candidates that meet the
                // requirements and hold the requests with their daemons, as
                // lists compare them (a negative GPU count holds nothing).
                if let Ok(kept) = &full {
                    let compatible = template.cache.compatible(template.types, &next);
                    for &t in &candidates {
                        let holds = template.daemon_groups.get(template.group_of[t]).is_some_and(
                            |g| (&grown_total + &g.overhead).fits(&template.allocatable[t]),
                        );
                        prop_assert_eq!(kept.contains(&t), holds && compatible.contains(t), "type {}", t);
                    }
                }
                let before = fitted.then_some(&total);
                let fast = grown(&template, &options, &next, unchanged, before, &grown_total);
                match (&full, &fast) {
                    (Ok(kept), Some(set)) => {
                        prop_assert_eq!(set, &TypeSet::of(types.len(), kept));
                    }
                    (Err(_), None) => {}
                    (full, fast) => {
                        prop_assert!(false, "step {}: full {:?}, growth {:?}", step, full.as_ref().ok(), fast);
                    }
                }
                let Ok(kept) = full else { break };
                options = TypeSet::of(types.len(), &kept);
                total = grown_total;
                requirements = next;
                fitted = true;
            }
        }
    }
}
