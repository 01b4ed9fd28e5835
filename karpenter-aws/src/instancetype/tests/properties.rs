//! Invariants of the instance types an `EC2NodeClass` gives, over random
//! kubelet settings, AMI families and provider options: no negative
//! overhead, pods as `maxPods` and `podsPerCore` bound them, memory within
//! the machine's, and the same input giving the same types.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::instancetype::{InstanceTypeOptions, instance_types_for};
use crate::nodeclass::EC2NodeClass;

const REGION: &str = "us-east-1";
const MIB_MILLI: i64 = (1 << 20) * 1000;

fn catalog() -> &'static Catalog {
    Catalog::embedded().expect("embedded catalog")
}

/// The kubelet settings a case draws.
#[derive(Clone, Debug)]
struct Kubelet {
    max_pods: Option<i64>,
    pods_per_core: Option<i64>,
    kube_reserved: BTreeMap<String, String>,
    system_reserved: BTreeMap<String, String>,
    eviction_memory: Option<String>,
}

impl Kubelet {
    fn to_json(&self) -> Value {
        let mut kubelet = Map::new();
        if let Some(max_pods) = self.max_pods {
            kubelet.insert("maxPods".into(), json!(max_pods));
        }
        if let Some(per_core) = self.pods_per_core {
            kubelet.insert("podsPerCore".into(), json!(per_core));
        }
        if !self.kube_reserved.is_empty() {
            kubelet.insert("kubeReserved".into(), json!(self.kube_reserved));
        }
        if !self.system_reserved.is_empty() {
            kubelet.insert("systemReserved".into(), json!(self.system_reserved));
        }
        if let Some(memory) = &self.eviction_memory {
            kubelet.insert("evictionHard".into(), json!({"memory.available": memory}));
        }
        Value::Object(kubelet)
    }
}

/// A small reservation: cpu in millicores, memory in MiB, each or neither.
fn reservation() -> impl Strategy<Value = BTreeMap<String, String>> {
    (
        proptest::option::of(0_u32..=2000),
        proptest::option::of(0_u32..=2048),
    )
        .prop_map(|(cpu, memory)| {
            let mut map = BTreeMap::new();
            if let Some(cpu) = cpu {
                map.insert("cpu".to_owned(), format!("{cpu}m"));
            }
            if let Some(memory) = memory {
                map.insert("memory".to_owned(), format!("{memory}Mi"));
            }
            map
        })
}

/// `memory.available` as an amount, a whole or a fractional percentage.
fn eviction_memory() -> impl Strategy<Value = String> {
    prop_oneof![
        (0_u32..=4096).prop_map(|mib| format!("{mib}Mi")),
        (0_u32..=100).prop_map(|p| format!("{p}%")),
        (0.0_f64..100.0).prop_map(|p| format!("{p:.2}%")),
    ]
}

fn kubelet() -> impl Strategy<Value = Kubelet> {
    (
        proptest::option::of(1_i64..=500),
        proptest::option::of(0_i64..=40),
        reservation(),
        reservation(),
        proptest::option::of(eviction_memory()),
    )
        .prop_map(
            |(max_pods, pods_per_core, kube_reserved, system_reserved, eviction_memory)| Kubelet {
                max_pods,
                pods_per_core,
                kube_reserved,
                system_reserved,
                eviction_memory,
            },
        )
}

fn family() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "AL2",
        "AL2023",
        "Bottlerocket",
        "Windows2022",
        "Custom",
    ])
}

/// A node class of `family` (through its alias; Custom through an AMI ID)
/// with `kubelet` settings.
fn node_class(family: &str, kubelet: &Kubelet) -> EC2NodeClass {
    let terms = match family {
        "Custom" => json!([{"id": "ami-0123456789abcdef0"}]),
        other => json!([{"alias": format!("{}@latest", other.to_ascii_lowercase())}]),
    };
    serde_json::from_value(json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiFamily": family,
            "amiSelectorTerms": terms,
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "kubelet": kubelet.to_json(),
        },
        "status": {
            "subnets": [{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"}],
        },
    }))
    .expect("node class")
}

fn options() -> impl Strategy<Value = InstanceTypeOptions> {
    (0_u32..=3, 0.0_f64..0.5).prop_map(|(reserved_enis, vm_memory_overhead_percent)| {
        InstanceTypeOptions {
            reserved_enis,
            vm_memory_overhead_percent,
            ..InstanceTypeOptions::default()
        }
    })
}

proptest! {
    // Each case builds all 1,382 types twice; 32 cases keep a debug run
    // to a few seconds.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn instance_types_keep_their_invariants_under_any_kubelet_settings(
        family in family(),
        kubelet in kubelet(),
        options in options(),
    ) {
        let class = node_class(family, &kubelet);
        let types = instance_types_for(catalog(), REGION, &class, &options);
        prop_assert!(types.is_ok(), "{types:?}");
        let types = types.unwrap_or_default();
        prop_assert_eq!(types.len(), catalog().records().count());
        let per_core_applies = family != "Bottlerocket";
        for t in &types {
            let record = catalog().record(&t.name);
            prop_assert!(record.is_some(), "{} is no catalog type", t.name);
            let Some(record) = record else { continue };
            for (resource, milli) in t.overhead.iter() {
                prop_assert!(milli >= 0, "{}: overhead {resource} is {milli}", t.name);
            }
            let pods = t.capacity.get("pods") / 1000;
            let per_core_cap = kubelet
                .pods_per_core
                .filter(|&n| n > 0 && per_core_applies)
                .map(|n| n * i64::from(record.vcpus));
            if let Some(cap) = per_core_cap {
                prop_assert!(pods <= cap, "{}: {pods} pods over {cap}", t.name);
            }
            if let Some(max_pods) = kubelet.max_pods {
                prop_assert!(pods <= max_pods, "{}: {pods} pods over maxPods", t.name);
                if per_core_cap.is_none_or(|cap| cap >= max_pods) {
                    prop_assert_eq!(pods, max_pods, "{}", t.name);
                }
            }
            let memory = t.capacity.get("memory");
            let machine = i64::try_from(record.memory_mib).unwrap_or(i64::MAX / MIB_MILLI);
            prop_assert!(memory >= 0, "{}: memory {memory}", t.name);
            prop_assert!(
                memory <= machine * MIB_MILLI,
                "{}: memory {memory} over the machine's {machine} MiB",
                t.name
            );
        }
        let again = instance_types_for(catalog(), REGION, &class, &options);
        prop_assert_eq!(Ok(types), again);
    }
}
