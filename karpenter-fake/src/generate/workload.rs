//! Generated workloads for tests and benchmarks, after upstream Karpenter's
//! scheduling benchmark (`makeDiversePods`): one fifth each of plain pods, pods
//! spread over zones, pods spread over hostnames, pods with zonal self-affinity and
//! pods with hostname self-anti-affinity, requesting 100m to 1500m cpu and 100Mi to
//! 4Gi memory. The same `n` and seed give the same pods.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, Pod, PodAffinity, PodAffinityTerm, PodAntiAffinity, PodCondition, PodSpec,
    PodStatus, ResourceRequirements, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};

const CPUS: [&str; 5] = ["100m", "250m", "500m", "1", "1500m"];
const MEMORIES: [&str; 6] = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"];
const ZONE_KEY: &str = "topology.kubernetes.io/zone";
const HOSTNAME_KEY: &str = "kubernetes.io/hostname";

/// A small deterministic generator (SplitMix64): benchmarks must not depend on a
/// random crate's version to stay comparable over time.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The five shapes of the diverse mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// No constraints.
    Plain,
    /// `maxSkew: 1` over zones, DoNotSchedule.
    ZonalSpread,
    /// `maxSkew: 1` over hostnames, DoNotSchedule.
    HostnameSpread,
    /// Required affinity to its own app over zones.
    ZonalSelfAffinity,
    /// Required anti-affinity to its own app over hostnames.
    HostnameSelfAntiAffinity,
}

impl Shape {
    const ALL: [Shape; 5] = [
        Shape::Plain,
        Shape::ZonalSpread,
        Shape::HostnameSpread,
        Shape::ZonalSelfAffinity,
        Shape::HostnameSelfAntiAffinity,
    ];

    fn label(self) -> &'static str {
        match self {
            Shape::Plain => "plain",
            Shape::ZonalSpread => "zonal-spread",
            Shape::HostnameSpread => "hostname-spread",
            Shape::ZonalSelfAffinity => "zonal-affinity",
            Shape::HostnameSelfAntiAffinity => "hostname-anti-affinity",
        }
    }
}

/// `n` pending pods of the diverse mix in namespace `default`, named
/// `<shape>-<i>`, in groups of the same shape (one fifth each).
pub fn diverse_pods(n: usize, seed: u64) -> Vec<Pod> {
    diverse_pods_lazily(n, seed).collect()
}

/// [`diverse_pods`], made one at a time: a snapshot built from them never
/// holds the pods twice (a pod is kilobytes, and 100,000 of them are large).
pub fn diverse_pods_lazily(n: usize, seed: u64) -> impl Iterator<Item = Pod> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(move |i| {
        let shape = Shape::ALL[i * Shape::ALL.len() / n.max(1)];
        let cpu = CPUS[rng.below(CPUS.len())];
        let memory = MEMORIES[rng.below(MEMORIES.len())];
        pending_pod(&format!("{}-{i}", shape.label()), shape, cpu, memory)
    })
}

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
        ..LabelSelector::default()
    }
}

fn term(app: &str, key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(selector(app)),
        topology_key: key.to_string(),
        ..PodAffinityTerm::default()
    }
}

fn spread(app: &str, key: &str) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        label_selector: Some(selector(app)),
        max_skew: 1,
        topology_key: key.to_string(),
        when_unsatisfiable: "DoNotSchedule".to_string(),
        ..TopologySpreadConstraint::default()
    }
}

/// One pending pod of a shape, as a cluster would hold it (owned by a ReplicaSet,
/// marked unschedulable by kube-scheduler).
pub fn pending_pod(name: &str, shape: Shape, cpu: &str, memory: &str) -> Pod {
    let app = shape.label();
    let mut spec = PodSpec {
        containers: vec![Container {
            name: "app".to_string(),
            image: Some("registry.example/app:1".to_string()),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_string(), Quantity(cpu.to_string())),
                    ("memory".to_string(), Quantity(memory.to_string())),
                ])),
                ..ResourceRequirements::default()
            }),
            ..Container::default()
        }],
        ..PodSpec::default()
    };
    match shape {
        Shape::Plain => {}
        Shape::ZonalSpread => spec.topology_spread_constraints = Some(vec![spread(app, ZONE_KEY)]),
        Shape::HostnameSpread => {
            spec.topology_spread_constraints = Some(vec![spread(app, HOSTNAME_KEY)])
        }
        Shape::ZonalSelfAffinity => {
            spec.affinity = Some(Affinity {
                pod_affinity: Some(PodAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![term(
                        app, ZONE_KEY,
                    )]),
                    ..PodAffinity::default()
                }),
                ..Affinity::default()
            })
        }
        Shape::HostnameSelfAntiAffinity => {
            spec.affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![term(
                        app,
                        HOSTNAME_KEY,
                    )]),
                    ..PodAntiAffinity::default()
                }),
                ..Affinity::default()
            })
        }
    }
    let created = Time("2026-01-01T00:00:00Z".parse().unwrap_or_default());
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some("default".to_string()),
            uid: Some(format!("uid-{name}")),
            creation_timestamp: Some(created.clone()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".to_string(),
                kind: "ReplicaSet".to_string(),
                name: format!("{app}-rs"),
                uid: format!("uid-{app}-rs"),
                controller: Some(true),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: Some(unschedulable_status(created)),
    }
}

/// The status the kube-scheduler gives a pod it found no node for, `since`
/// then: phase `Pending`, `PodScheduled` `False` with reason `Unschedulable`
/// (what makes the pod one provisioning plans for).
pub fn unschedulable_status(since: Time) -> PodStatus {
    PodStatus {
        phase: Some("Pending".to_string()),
        conditions: Some(vec![PodCondition {
            type_: "PodScheduled".to_string(),
            status: "False".to_string(),
            reason: Some("Unschedulable".to_string()),
            last_transition_time: Some(since),
            ..PodCondition::default()
        }]),
        ..PodStatus::default()
    }
}

/// `n` unconstrained pods of mixed shapes, the cost-packing benchmark's
/// workload: balanced (cpu 100m-4, memory 1-4 GiB per cpu), cpu-heavy
/// (1-4 cpu, 100Mi-1Gi) and memory-heavy (100m-1 cpu, 4-32 GiB), in equal
/// thirds. The same `n` and `seed` give the same pods.
pub fn unconstrained_mix(n: usize, seed: u64) -> Vec<Pod> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let (cpu_m, memory_mi) = match i % 3 {
                0 => {
                    let cpu = 100 + rng.below(3901) as i64;
                    (cpu, cpu * (1 + rng.below(4) as i64) * 1024 / 1000)
                }
                1 => (1000 + rng.below(3001) as i64, 100 + rng.below(925) as i64),
                _ => (
                    100 + rng.below(901) as i64,
                    4096 + rng.below(28 * 1024 + 1) as i64,
                ),
            };
            pending_pod(
                &format!("mix-{i}"),
                Shape::Plain,
                &format!("{cpu_m}m"),
                &format!("{memory_mi}Mi"),
            )
        })
        .collect()
}

/// A cluster of one NodePool (`default`, no requirements) offered `types`,
/// with `pods` pending and no nodes: the benchmarks' and reports' shape.
pub fn one_pool_snapshot(
    types: &[karpenter_core::cloudprovider::InstanceType],
    well_known: &karpenter_core::scheduling::WellKnownLabels,
    pods: impl IntoIterator<Item = Pod>,
) -> karpenter_core::snapshot::Snapshot {
    let pool: karpenter_core::api::NodePool = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": []}}},
    }))
    .expect("a valid NodePool");
    // `with_pods` extends: collecting a `Vec<Pod>` into `Arc`s would reuse
    // (and keep) its buffer, kilobytes a pod, for the snapshot's life.
    karpenter_core::snapshot::Snapshot {
        instance_types: BTreeMap::from([("default".to_owned(), types.to_vec().into())]),
        node_pools: vec![pool],
        well_known_labels: well_known.clone(),
        ..karpenter_core::snapshot::Snapshot::default()
    }
    .with_pods(pods)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unconstrained_mix_keeps_its_shapes_and_is_deterministic() {
        let pods = unconstrained_mix(300, 7);
        assert_eq!(pods, unconstrained_mix(300, 7));
        let requests = |pod: &Pod| {
            karpenter_core::resources::pod_requests(pod.spec.as_ref().expect("a spec"))
                .expect("requests")
        };
        for (i, pod) in pods.iter().enumerate() {
            let asks = requests(pod);
            let (cpu, memory_mi) = (asks.get("cpu"), asks.get("memory") / 1000 / (1 << 20));
            assert!((100..=4000).contains(&cpu), "{cpu}");
            assert!((100..=32 * 1024 + 4096).contains(&memory_mi), "{memory_mi}");
            match i % 3 {
                1 => assert!(cpu >= 1000 && memory_mi <= 1024, "cpu-heavy"),
                2 => assert!(cpu <= 1000 && memory_mi >= 4096, "memory-heavy"),
                _ => {}
            }
        }
    }

    #[test]
    fn the_mix_is_one_fifth_each_and_deterministic() {
        let pods = diverse_pods(1000, 42);
        assert_eq!(pods.len(), 1000);
        for shape in Shape::ALL {
            let count = pods
                .iter()
                .filter(|p| {
                    p.metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with(&format!("{}-", shape.label())))
                })
                .count();
            assert_eq!(count, 200, "{shape:?}");
        }
        assert_eq!(pods, diverse_pods(1000, 42));
        assert_ne!(pods, diverse_pods(1000, 43));
    }
}
